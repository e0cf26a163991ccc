/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A channels-last float Winograd convolution, F(4x4, 3x3), for the 3x3 stride-1 convolutions
 * of x86-64 processors with AVX2 and FMA, its products in AVX-512 where the processor has it.
 * The direct convolution (fb-direct-conv.c) and oneDNN's brgconv run those near the core's
 * peak; Winograd does 36 products per 4x4 output tile where they do 144, so past its
 * transforms it finishes the same convolution in about half the time where the map gives
 * many tiles (README.md, "CPU math library").
 * fb-dnnl-conv.c picks it for the convolutions fb_winograd_conv_fits names.
 *
 * Like fb-direct-conv.c it depends on nothing but the C library and OpenMP, so that exported
 * shared libraries compile it as it is. */
#pragma once

#include "fb-dnnl-conv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _FbWinogradConv FbWinogradConv;

/* The instructions its products run (FB_CONV_ISA_*): fb_conv_vector_isa's, AVX-512 where the
 * processor has it and FUSEBENCH_ISA does not ask for less, else AVX2 or none (nothing here
 * runs it); the transforms take as many channels at a time as its vectors hold. */
int             fb_winograd_conv_isa  (void);
/* Whether d is one this convolution takes and runs faster than what would run it otherwise
 * (the direct convolution on AVX2 processors, oneDNN's brgconv on AVX-512 ones): 3x3, stride
 * 1, dilation 1, one group, not transposed, any pads, the post-ops fb-conv-post-ops.h applies
 * (an Add also in place: a sum, the output given as the addend),
 * at least 8 channels in and out, and enough output tiles for its weights (the .c gives the
 * bounds measured for each instruction set), where fb_winograd_conv_isa names one, and
 * FUSEBENCH_WINOGRAD not 0 (1: every shape it can run, whatever its bounds). Returns 1 or 0. */
int             fb_winograd_conv_fits (const FbConvDesc *d);
/* The convolution for d (fb_conv_desc_valid holds, and d has the geometry and post-ops
 * fb_winograd_conv_fits asks for; its bounds on channels and tiles are about speed, any counts
 * compute right), with the weights (OIHW) transformed once; NULL when out of memory. */
FbWinogradConv *fb_winograd_conv_new  (const FbConvDesc *d, const float *weights);
/* y = post-ops (conv (x) + bias), on as many threads as OpenMP gives the calling thread,
 * in phases shared by all of them where each would get few tiles of its own
 * (FUSEBENCH_WINOGRAD_PHASES=always or never overrides that). add
 * may be y itself (an in-place residual): each addend element is read before the output
 * element at its index is written, and never after. Not to be called on one conv from two
 * threads at once (the threads' working memory is the conv's). Returns 0, or -1 when that
 * working memory cannot be allocated. */
int             fb_winograd_conv_run  (FbWinogradConv *conv, const float *x, const float *bias,
                                       const float *add, float *y);
void            fb_winograd_conv_free (FbWinogradConv *conv);

#ifdef __cplusplus
}
#endif
