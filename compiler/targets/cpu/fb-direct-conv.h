/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A channels-last float convolution of our own for x86-64 processors with AVX2 and FMA, in an
 * AVX2 and an AVX-512 version. Without AVX-512 oneDNN 2.6 has only its jit:avx2 kernels: on two
 * Zen 3 cores those run a ResNet's 3x3 convolutions at 75-100 GFLOP/s inside the network, this
 * one at 120-180 (README.md, "CPU math library"). fb-dnnl-conv.c picks it for the convolutions
 * it fits and keeps oneDNN's primitive for the rest.
 *
 * Like fb-dnnl-conv.c it depends on nothing but the C library and OpenMP (its threads are
 * OpenMP's, the team oneDNN's primitives run on), so that exported shared libraries compile it
 * as it is. */
#pragma once

#include "fb-dnnl-conv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _FbDirectConv FbDirectConv;

/* The instruction sets the convolutions of our own (this one and fb-winograd-conv.c) come in. */
enum {
  FB_CONV_ISA_NONE,             /* not x86-64 with AVX2 and FMA: oneDNN runs everything */
  FB_CONV_ISA_AVX2,             /* AVX2 and FMA, 8-float vectors */
  FB_CONV_ISA_AVX512,           /* AVX-512F, 16-float vectors */
};

/* The widest set of the processor's that FUSEBENCH_ISA ("avx2", "avx512", "none", "native"
 * for the processor's own) leaves: what fb-winograd-conv.c and the post-ops fb-dnnl-conv.c
 * applies itself (fb-conv-post-ops.h) run in. A wider set than the processor's is never
 * taken. */
int           fb_conv_vector_isa  (void);
/* The set the direct convolution runs in here: AVX2 on processors with AVX2 and FMA but not
 * AVX-512, none (oneDNN's kernels, faster there) on AVX-512 ones, or the one FUSEBENCH_ISA
 * names ("avx2", "avx512", "none", "native" for the default), so that every path can be run
 * and compared on one machine; a wider set than the processor's is never taken. */
int           fb_conv_isa         (void);

/* Whether d is one this convolution takes on this processor: not transposed, one group, a
 * kernel of more than one tap, at least 40 input channels (with 32 or fewer, too little work
 * per tap to hide its setup: oneDNN ran them 1.2x faster), post-ops among those
 * fb-conv-post-ops.h applies (an Add also in place, a sum: fb_direct_conv_run then gets the
 * output as the addend, and reads each of its elements before it stores the output element at
 * that index), and a processor with AVX2 and FMA (fb_conv_isa). Returns 1 or 0. */
int           fb_direct_conv_fits (const FbConvDesc *d);
/* The convolution for d (fb_conv_desc_valid and fb_direct_conv_fits hold), with the
 * weights (OIHW) repacked; NULL when out of memory. */
FbDirectConv *fb_direct_conv_new  (const FbConvDesc *d, const float *weights);
/* y = post-ops (conv (x) + bias), on as many threads as OpenMP gives the calling thread. */
void          fb_direct_conv_run  (FbDirectConv *conv, const float *x, const float *bias,
                                   const float *add, float *y);
void          fb_direct_conv_free (FbDirectConv *conv);

#ifdef __cplusplus
}
#endif
