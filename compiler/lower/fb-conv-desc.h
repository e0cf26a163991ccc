/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A convolution as the libraries that run one take it (oneDNN on the cpu target, cuDNN on the
 * cuda target): its geometry and the elementwise epilogue ("post-ops") fused into it. Lowering
 * makes these (fb-lower-dnnl-conv.c), a target's library runs them.
 *
 * Plain C with no other header of the project: exported shared libraries compile this header
 * and fb-conv-desc.c as they are, beside the cpu target's convolution sources. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FB_CONV_MAX_POST 4

typedef enum {
  FB_CONV_POST_NONE,
  FB_CONV_POST_RELU,        /* x < 0 ? alpha * x : x (alpha 0: Relu; LeakyRelu) */
  FB_CONV_POST_CLIP,        /* min (max (x, alpha), beta) */
  FB_CONV_POST_TANH,
  FB_CONV_POST_SIGMOID,
  FB_CONV_POST_ADD,         /* x + a tensor of the output's shape and layout */
  FB_CONV_POST_MAX,         /* max (x, alpha): a lower bound only (+inf stays +inf) */
  FB_CONV_POST_MIN,         /* min (x, alpha): an upper bound only */
  FB_CONV_POST_SUM,         /* x + what the output buffer held before the run: the residual
                               the memory plan put there (an Add in place, oneDNN's sum) */
  FB_CONV_POST_SWISH,       /* x * sigmoid (alpha * x) (alpha 1: SiLU) */
  FB_CONV_POST_HARD_SWISH,  /* x * max (0, min (1, alpha * x + beta)): ONNX's HardSwish with
                               alpha 1/6, beta 1/2; the newest last, so that the numbers
                               bundles already hold keep their meaning */
  FB_CONV_POST_GELU,        /* x * Phi (x), Phi the normal distribution: alpha 0 exact (erf),
                               1 its tanh approximation (ONNX's approximate="tanh") */
} FbConvPostKind;

typedef struct {
  int64_t kind;             /* FbConvPostKind */
  double  alpha, beta;
} FbConvPost;

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
  int64_t    n_post;        /* at most one FB_CONV_POST_ADD or FB_CONV_POST_SUM */
  FbConvPost post[FB_CONV_MAX_POST];
  int64_t    scaled_input;  /* 1: x is first multiplied by one number per input channel given
                               at every run (a squeeze-excitation's scale), which the library
                               folds into the weights instead; one group, not transposed */
  int64_t    y_stride;      /* floats from one output pixel to the next: 0 or co when packed,
                               more when the output is a run of channels of a wider tensor (a
                               Concat's piece written in place, fb-lower-concat.c); not with an
                               Add or a sum among the post-ops, nor transposed */
} FbConvDesc;

/* Floats from one output pixel to the next (d->y_stride, or co where the output is packed). */
static inline int64_t
fb_conv_desc_y_stride (const FbConvDesc *d)
{
  return d->y_stride > d->co ? d->y_stride : d->co;
}

/* Whether d is a convolution at all: sizes, strides and dilations at least 1, pads at least 0,
 * channels divisible by the groups, post-ops known, and the output size the one the input,
 * window and pads give (transposed: the input size the one the output, window and pads give
 * back, so that the output padding is under the stride). Returns 1 or 0. */
int         fb_conv_desc_valid (const FbConvDesc *d);

/* Whether cuDNN runs d's post-ops with the convolution: an Add of a tensor, then one
 * activation, Relu, Swish, HardSwish or Clip from 0 (ReLU6), either one or both, in that order.
 * The activation (FB_CONV_POST_NONE when there is none) and its parameter (Swish's alpha, Clip's
 * upper bound) go to *act and *param. Returns 1 or 0. */
int         fb_conv_desc_cudnn_epilogue (const FbConvDesc *d, int64_t *act, double *param);

#ifdef __cplusplus
}
#endif
