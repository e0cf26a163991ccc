/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Channels-last float convolutions through oneDNN's convolution primitive, and transposed
 * convolutions (ConvTranspose) through its deconvolution primitive, with the bias and the
 * elementwise epilogue it can fuse (its "post-ops") applied in registers.
 *
 * This header and fb-dnnl-conv.c depend on nothing but the C library, oneDNN,
 * fb-direct-conv.c and fb-winograd-conv.c (the convolutions of our own some of them run as, on
 * OpenMP's threads):
 * besides being part of the CPU runtime, they are compiled into every exported shared library
 * (lib/libfbmodel.so of a bundle), whose driver calls fb_dnnl_conv_once. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FB_DNNL_CONV_MAX_POST 4

typedef enum {
  FB_DNNL_POST_NONE,
  FB_DNNL_POST_RELU,        /* x < 0 ? alpha * x : x (alpha 0: Relu; LeakyRelu) */
  FB_DNNL_POST_CLIP,        /* min (max (x, alpha), beta) */
  FB_DNNL_POST_TANH,
  FB_DNNL_POST_SIGMOID,
  FB_DNNL_POST_ADD,         /* x + a tensor of the output's shape and layout */
  FB_DNNL_POST_MAX,         /* max (x, alpha): a lower bound only (+inf stays +inf) */
  FB_DNNL_POST_MIN,         /* min (x, alpha): an upper bound only */
  FB_DNNL_POST_SUM,         /* x + what the output buffer held before the run: the residual
                               the memory plan put there (an Add in place, oneDNN's sum) */
} FbDnnlPostKind;

typedef struct {
  int64_t kind;             /* FbDnnlPostKind */
  double  alpha, beta;
} FbDnnlPost;

/* A 2-D convolution, NHWC input and output, OIHW weights (one-dimensional ones have h = kh =
 * 1). Transposed (ConvTranspose), the weights are ONNX's [C, Co/groups, kh, kw] and the pads
 * are the ones the output is cut by: oh = (h - 1) * sh + (kh - 1) * dh + 1 - pt - pb, plus
 * any output padding, which must stay under the stride. Every field is eight bytes wide, so
 * the exported library's driver can hold one as an array of 64-bit words. */
typedef struct {
  int64_t    n, c, h, w;    /* input */
  int64_t    co, oh, ow;    /* output */
  int64_t    groups;
  int64_t    kh, kw, sh, sw, dh, dw;
  int64_t    pt, pl, pb, pr;
  int64_t    has_bias;
  int64_t    transposed;    /* 1: a ConvTranspose, oneDNN's deconvolution */
  int64_t    n_post;        /* at most one FB_DNNL_POST_ADD or FB_DNNL_POST_SUM */
  FbDnnlPost post[FB_DNNL_CONV_MAX_POST];
} FbDnnlConvDesc;

typedef struct _FbDnnlConv FbDnnlConv;

/* Whether d is a convolution at all: sizes, strides and dilations at least 1, pads at least 0,
 * channels divisible by the groups, post-ops known, and the output size the one the input,
 * window and pads give (transposed: the input size the one the output, window and pads give
 * back, so that the output padding is under the stride). Returns 1 or 0. */
int         fb_dnnl_conv_desc_valid (const FbDnnlConvDesc *d);

/* The primitive for d, with the weights reordered into the layout it wants (the weights are
 * copied: the caller's may go). It runs on as many threads as OpenMP gives the calling thread
 * now, whatever the count when it runs. NULL when oneDNN cannot: why receives its reason. */
FbDnnlConv *fb_dnnl_conv_new  (const FbDnnlConvDesc *d, const float *weights, char *why,
                               size_t why_len);
/* y = post-ops (conv (x) + bias); add is the tensor of the FB_DNNL_POST_ADD, if any. With an
 * FB_DNNL_POST_SUM, y holds the residual on entry (add is not read). Not to be called on one
 * FbDnnlConv from two threads at once. Returns 0, or -1 when oneDNN failed. */
int         fb_dnnl_conv_run  (FbDnnlConv *conv, const float *x, const float *bias,
                               const float *add, float *y);
void        fb_dnnl_conv_free (FbDnnlConv *conv);
/* The name of the implementation that runs d on this machine: the one oneDNN picks
 * ("brgconv_1x1:avx512_core"), or "winograd:avx2 ..." or "direct:avx2 ..." where
 * fb-winograd-conv.c or fb-direct-conv.c takes it; or the
 * reason there is none. Returns 0, or -1 with the reason in name. */
int         fb_dnnl_conv_implementation (const FbDnnlConvDesc *d, char *name, size_t len);

/* For exported libraries: makes *slot on first use (under a lock, so concurrent callers make
 * it once) and runs it, one caller at a time. Returns 0, or -1. */
int         fb_dnnl_conv_once (FbDnnlConv **slot, const FbDnnlConvDesc *d, const float *x,
                               const float *weights, const float *bias, const float *add,
                               float *y);

#ifdef __cplusplus
}
#endif
