/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The post-ops of fb-direct-conv.c and fb-winograd-conv.c on 8 channels of one pixel (AVX2) or
 * 16 (AVX-512): Relu (LeakyRelu), Clip, Max, Min, the residual Add (or sum, in place), Sigmoid,
 * Swish (SiLU) and HardSwish; and the same over a run of floats, which fb-dnnl-conv.c applies
 * after a oneDNN primitive where its own are slower (fb_conv_post_ops_run_256, _512). Like them it
 * depends on nothing but the C library and the compiler's intrinsics, so that exported shared
 * libraries compile it as it is. */
#pragma once

#include "fb-dnnl-conv.h"

#include <math.h>

/* Whether every post-op of d is one the functions here apply. */
static inline int
fb_conv_post_ops_vectorized (const FbConvDesc *d)
{
  for (int64_t i = 0; i < d->n_post; i++)
    switch (d->post[i].kind)
      {
      case FB_CONV_POST_RELU: case FB_CONV_POST_CLIP: case FB_CONV_POST_MAX:
      case FB_CONV_POST_MIN: case FB_CONV_POST_ADD: case FB_CONV_POST_SUM:
      case FB_CONV_POST_SIGMOID: case FB_CONV_POST_SWISH: case FB_CONV_POST_HARD_SWISH:
        break;
      default:
        return 0;
      }
  return 1;
}

/* GELU of one float, for the post-ops no vectors here apply: exact (x Phi (x) through erf) or,
 * with tanh_form, ONNX's approximate="tanh". */
static inline float
fb_conv_gelu (float x, int tanh_form)
{
  if (tanh_form)
    return 0.5f * x * (1.0f + tanhf (0.7978845608f * (x + 0.044715f * x * x * x)));
  return 0.5f * x * (1.0f + erff (x * 0.70710678118654752f));
}

#if defined(__x86_64__)
#include <immintrin.h>

/* The sigmoid's e^-x as 2^n e^-r: n = round (-x log2 e), r = x + n ln 2 with ln 2 in two parts
 * (its first part has the low bits of its mantissa clear, so n times it is exact, and r stays
 * exact for large x), e^-r its degree-6 Taylor polynomial on |r| <= ln 2 / 2 (relative error
 * under 2e-7). x is first held to +-160, where the sigmoid is 0 or 1 in float, so that
 * infinities give the limits; a NaN stays NaN (max and min give their second operand for
 * one). AVX2 builds 2^n in the exponent bits, so there n also stays within +-126 and e^r takes
 * up the rest, overflowing to infinity as e^-x would. */
#define FB_SIGMOID_BOUND 160.0f
#define FB_LOG2E 1.44269504088896341f
#define FB_LN2_HI 0.693145751953125f
#define FB_LN2_LO 1.42860682030941723212e-6f

/* 1 / (1 + e^-x), 8 floats. */
__attribute__ ((target ("avx2,fma"))) static inline __m256
fb_sigmoid_256 (__m256 x)
{
  __m256 m = _mm256_min_ps (_mm256_set1_ps (FB_SIGMOID_BOUND),
                            _mm256_max_ps (_mm256_set1_ps (-FB_SIGMOID_BOUND), x));
  __m256 n = _mm256_round_ps (_mm256_mul_ps (m, _mm256_set1_ps (-FB_LOG2E)),
                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  n = _mm256_min_ps (_mm256_set1_ps (126.0f), _mm256_max_ps (_mm256_set1_ps (-126.0f), n));
  __m256 r = _mm256_fmadd_ps (n, _mm256_set1_ps (FB_LN2_HI), m);
  r = _mm256_fmadd_ps (n, _mm256_set1_ps (FB_LN2_LO), r);
  __m256 p = _mm256_fmadd_ps (_mm256_set1_ps (1.0f / 720), r, _mm256_set1_ps (-1.0f / 120));
  p = _mm256_fmadd_ps (p, r, _mm256_set1_ps (1.0f / 24));
  p = _mm256_fmadd_ps (p, r, _mm256_set1_ps (-1.0f / 6));
  p = _mm256_fmadd_ps (p, r, _mm256_set1_ps (0.5f));
  p = _mm256_fmadd_ps (p, r, _mm256_set1_ps (-1.0f));
  p = _mm256_fmadd_ps (p, r, _mm256_set1_ps (1.0f));
  __m256i bits = _mm256_slli_epi32 (_mm256_add_epi32 (_mm256_cvtps_epi32 (n),
                                                      _mm256_set1_epi32 (127)), 23);
  __m256 e = _mm256_mul_ps (p, _mm256_castsi256_ps (bits));
  return _mm256_div_ps (_mm256_set1_ps (1.0f), _mm256_add_ps (e, _mm256_set1_ps (1.0f)));
}

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
        case FB_CONV_POST_SIGMOID:
          v = fb_sigmoid_256 (v);
          break;
        case FB_CONV_POST_SWISH:
          {
            __m256 alpha = _mm256_set1_ps ((float) p->alpha);
            v = _mm256_mul_ps (v, fb_sigmoid_256 (_mm256_mul_ps (v, alpha)));
          }
          break;
        case FB_CONV_POST_HARD_SWISH:
          v = _mm256_mul_ps (v, _mm256_min_ps (_mm256_max_ps (_mm256_fmadd_ps (
                                                   v, _mm256_set1_ps ((float) p->alpha),
                                                   _mm256_set1_ps ((float) p->beta)),
                                                 _mm256_setzero_ps ()),
                                               _mm256_set1_ps (1.0f)));
          break;
        default:
          break;
        }
    }
  return v;
}

/* 1 / (1 + e^-x), 16 floats (fb_sigmoid_256's; scalef takes any n). */
__attribute__ ((target ("avx512f"))) static inline __m512
fb_sigmoid_512 (__m512 x)
{
  __m512 m = _mm512_min_ps (_mm512_set1_ps (FB_SIGMOID_BOUND),
                            _mm512_max_ps (_mm512_set1_ps (-FB_SIGMOID_BOUND), x));
  __m512 n = _mm512_roundscale_ps (_mm512_mul_ps (m, _mm512_set1_ps (-FB_LOG2E)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps (n, _mm512_set1_ps (FB_LN2_HI), m);
  r = _mm512_fmadd_ps (n, _mm512_set1_ps (FB_LN2_LO), r);
  __m512 p = _mm512_fmadd_ps (_mm512_set1_ps (1.0f / 720), r, _mm512_set1_ps (-1.0f / 120));
  p = _mm512_fmadd_ps (p, r, _mm512_set1_ps (1.0f / 24));
  p = _mm512_fmadd_ps (p, r, _mm512_set1_ps (-1.0f / 6));
  p = _mm512_fmadd_ps (p, r, _mm512_set1_ps (0.5f));
  p = _mm512_fmadd_ps (p, r, _mm512_set1_ps (-1.0f));
  p = _mm512_fmadd_ps (p, r, _mm512_set1_ps (1.0f));
  __m512 e = _mm512_scalef_ps (p, n);
  return _mm512_div_ps (_mm512_set1_ps (1.0f), _mm512_add_ps (e, _mm512_set1_ps (1.0f)));
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
        case FB_CONV_POST_SIGMOID:
          v = fb_sigmoid_512 (v);
          break;
        case FB_CONV_POST_SWISH:
          {
            __m512 alpha = _mm512_set1_ps ((float) p->alpha);
            v = _mm512_mul_ps (v, fb_sigmoid_512 (_mm512_mul_ps (v, alpha)));
          }
          break;
        case FB_CONV_POST_HARD_SWISH:
          v = _mm512_mul_ps (v, _mm512_min_ps (_mm512_max_ps (_mm512_fmadd_ps (
                                                   v, _mm512_set1_ps ((float) p->alpha),
                                                   _mm512_set1_ps ((float) p->beta)),
                                                 _mm512_setzero_ps ()),
                                               _mm512_set1_ps (1.0f)));
          break;
        default:
          break;
        }
    }
  return v;
}

/* y[i] = d's post-ops on from[i], i < n; the addend of an Add or a sum is add[i] (for a sum,
 * the output's own floats: read here before y[i] is stored). from may be y. A chain of one
 * Swish or Sigmoid, the common one, has a loop of its own: the general one's switch per vector
 * took it from 0.11 to 0.18 ns a float on a Zen 4 core. */
__attribute__ ((target ("avx2,fma"))) static inline void
fb_conv_post_ops_run_256 (const FbConvDesc *d, const float *from, const float *add, float *y,
                          int64_t n)
{
  int64_t i = 0;
  int64_t only = d->n_post == 1 ? d->post[0].kind : FB_CONV_POST_NONE;
  __m256 alpha = _mm256_set1_ps (only == FB_CONV_POST_SWISH ? (float) d->post[0].alpha : 1.0f);
  if (only == FB_CONV_POST_SWISH)
    for (; i + 8 <= n; i += 8)
      {
        __m256 v = _mm256_loadu_ps (from + i);
        _mm256_storeu_ps (y + i, _mm256_mul_ps (v, fb_sigmoid_256 (_mm256_mul_ps (v, alpha))));
      }
  else if (only == FB_CONV_POST_SIGMOID)
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps (y + i, fb_sigmoid_256 (_mm256_loadu_ps (from + i)));
  else
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps (y + i, fb_conv_post_ops (d, _mm256_loadu_ps (from + i),
                                                 add ? add + i : NULL, 1, _mm256_setzero_si256 ()));
  if (i < n)
    {
      __m256i mask = _mm256_cmpgt_epi32 (_mm256_set1_epi32 ((int) (n - i)),
                                         _mm256_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7));
      __m256 v = fb_conv_post_ops (d, _mm256_maskload_ps (from + i, mask), add ? add + i : NULL,
                                   0, mask);
      _mm256_maskstore_ps (y + i, mask, v);
    }
}

/* The same with AVX-512. */
__attribute__ ((target ("avx512f"))) static inline void
fb_conv_post_ops_run_512 (const FbConvDesc *d, const float *from, const float *add, float *y,
                          int64_t n)
{
  int64_t i = 0;
  int64_t only = d->n_post == 1 ? d->post[0].kind : FB_CONV_POST_NONE;
  __m512 alpha = _mm512_set1_ps (only == FB_CONV_POST_SWISH ? (float) d->post[0].alpha : 1.0f);
  if (only == FB_CONV_POST_SWISH)
    for (; i + 16 <= n; i += 16)
      {
        __m512 v = _mm512_loadu_ps (from + i);
        _mm512_storeu_ps (y + i, _mm512_mul_ps (v, fb_sigmoid_512 (_mm512_mul_ps (v, alpha))));
      }
  else if (only == FB_CONV_POST_SIGMOID)
    for (; i + 16 <= n; i += 16)
      _mm512_storeu_ps (y + i, fb_sigmoid_512 (_mm512_loadu_ps (from + i)));
  else
    for (; i + 16 <= n; i += 16)
      _mm512_storeu_ps (y + i, fb_conv_post_ops_512 (d, _mm512_loadu_ps (from + i),
                                                     add ? add + i : NULL, (__mmask16) 0xffff));
  if (i < n)
    {
      __mmask16 mask = (__mmask16) ((1u << (n - i)) - 1);
      __m512 v = fb_conv_post_ops_512 (d, _mm512_maskz_loadu_ps (mask, from + i),
                                       add ? add + i : NULL, mask);
      _mm512_mask_storeu_ps (y + i, mask, v);
    }
}
#endif
