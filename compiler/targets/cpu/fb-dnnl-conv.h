/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Channels-last float convolutions through oneDNN's convolution primitive, and transposed
 * convolutions (ConvTranspose) through its deconvolution primitive, with the bias and the
 * elementwise epilogue it can fuse (its "post-ops") applied in registers.
 *
 * This header and fb-dnnl-conv.c depend on nothing but the C library, oneDNN,
 * fb-conv-desc.c (the description lowering makes), fb-direct-conv.c and fb-winograd-conv.c (the convolutions of our own some of them run as, on
 * OpenMP's threads):
 * besides being part of the CPU runtime, they are compiled into every exported shared library
 * (lib/libfbmodel.so of a bundle), whose driver calls fb_dnnl_conv_once. */
#pragma once

#include "fb-conv-desc.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _FbDnnlConv FbDnnlConv;

/* The primitive for d, with the weights reordered into the layout it wants (the weights are
 * copied: the caller's may go). It runs on as many threads as OpenMP gives the calling thread
 * now, whatever the count when it runs. NULL when oneDNN cannot: why receives its reason. */
FbDnnlConv *fb_dnnl_conv_new  (const FbConvDesc *d, const float *weights, char *why,
                               size_t why_len);
/* y = post-ops (conv (x * scale) + bias); add is the tensor of the FB_CONV_POST_ADD, if any.
 * With an FB_CONV_POST_SUM, y holds the residual on entry (add is not read). scale (one number
 * per input channel) is read only when d->scaled_input, and must then be there. Not to be
 * called on one FbDnnlConv from two threads at once. Returns 0, or -1 when oneDNN failed. */
int         fb_dnnl_conv_run  (FbDnnlConv *conv, const float *x, const float *scale,
                               const float *bias, const float *add, float *y);
void        fb_dnnl_conv_free (FbDnnlConv *conv);
/* The name of the implementation that runs d on this machine: the one oneDNN picks
 * ("brgconv_1x1:avx512_core"), or "winograd:avx2 ..." or "direct:avx2 ..." where
 * fb-winograd-conv.c or fb-direct-conv.c takes it; or the
 * reason there is none. Returns 0, or -1 with the reason in name. */
int         fb_dnnl_conv_implementation (const FbConvDesc *d, char *name, size_t len);
/* Whether what runs d writes a strided output's rows (d.y_stride) itself: the Winograd and
 * direct convolutions and a 1x1 convolution's matmul do; oneDNN's convolution primitives write
 * it packed and copy it into the rows. */
int         fb_dnnl_conv_writes_rows (const FbConvDesc *d);

/* For exported libraries: makes *slot on first use (under a lock, so concurrent callers make
 * it once) and runs it, one caller at a time. Returns 0, or -1. */
int         fb_dnnl_conv_once (FbDnnlConv **slot, const FbConvDesc *d, const float *x,
                               const float *scale, const float *weights, const float *bias,
                               const float *add, float *y);

#ifdef __cplusplus
}
#endif
