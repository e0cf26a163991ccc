/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The post-ops of fb-direct-conv.c and fb-winograd-conv.c on 8 channels of one pixel (AVX2) or
 * 16 (AVX-512): Relu (LeakyRelu), Clip, Max, Min and the residual Add (or sum, in place). Like them it
 * depends on nothing but the C library and the compiler's intrinsics, so that exported shared
 * libraries compile it as it is. */
#pragma once

#include "fb-dnnl-conv.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* add points at the addend's same 8 channels and is read here, before the caller stores the
 * pixel (add may be the output itself); full: all 8 are there, else mask says which. */
__attribute__ ((target ("avx2,fma"))) static inline __m256
fb_conv_post_ops (const FbConvDesc *d, __m256 v, const float *add, int full, __m256i mask)
{
  for (int64_t i = 0; i < d->n_post; i++)
    {
      const FbConvPost *p = &d->post[i];
      switch (p->kind)
        {
        case FB_CONV_POST_RELU:
          if (p->alpha == 0)
            v = _mm256_max_ps (v, _mm256_setzero_ps ());
          else
            v = _mm256_blendv_ps (v, _mm256_mul_ps (v, _mm256_set1_ps ((float) p->alpha)),
                                  _mm256_cmp_ps (v, _mm256_setzero_ps (), _CMP_LT_OQ));
          break;
        case FB_CONV_POST_CLIP:
          v = _mm256_min_ps (_mm256_max_ps (v, _mm256_set1_ps ((float) p->alpha)),
                             _mm256_set1_ps ((float) p->beta));
          break;
        case FB_CONV_POST_MAX:
          v = _mm256_max_ps (v, _mm256_set1_ps ((float) p->alpha));
          break;
        case FB_CONV_POST_MIN:
          v = _mm256_min_ps (v, _mm256_set1_ps ((float) p->alpha));
          break;
        case FB_CONV_POST_ADD:
        case FB_CONV_POST_SUM:    /* add is then the output: loaded here, stored after */
          v = _mm256_add_ps (v, full ? _mm256_loadu_ps (add) : _mm256_maskload_ps (add, mask));
          break;
        default:
          break;
        }
    }
  return v;
}

/* The same on 16 channels, AVX-512: mask says which of them are there. */
__attribute__ ((target ("avx512f"))) static inline __m512
fb_conv_post_ops_512 (const FbConvDesc *d, __m512 v, const float *add, __mmask16 mask)
{
  for (int64_t i = 0; i < d->n_post; i++)
    {
      const FbConvPost *p = &d->post[i];
      switch (p->kind)
        {
        case FB_CONV_POST_RELU:
          if (p->alpha == 0)
            v = _mm512_max_ps (v, _mm512_setzero_ps ());
          else
            v = _mm512_mask_mul_ps (v, _mm512_cmp_ps_mask (v, _mm512_setzero_ps (), _CMP_LT_OQ),
                                    v, _mm512_set1_ps ((float) p->alpha));
          break;
        case FB_CONV_POST_CLIP:
          v = _mm512_min_ps (_mm512_max_ps (v, _mm512_set1_ps ((float) p->alpha)),
                             _mm512_set1_ps ((float) p->beta));
          break;
        case FB_CONV_POST_MAX:
          v = _mm512_max_ps (v, _mm512_set1_ps ((float) p->alpha));
          break;
        case FB_CONV_POST_MIN:
          v = _mm512_min_ps (v, _mm512_set1_ps ((float) p->alpha));
          break;
        case FB_CONV_POST_ADD:
        case FB_CONV_POST_SUM:    /* add is then the output: loaded here, stored after */
          v = _mm512_add_ps (v, _mm512_maskz_loadu_ps (mask, add));
          break;
        default:
          break;
        }
    }
  return v;
}
#endif
