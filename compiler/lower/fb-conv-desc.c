/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Checking a convolution description (fb-conv-desc.h). Plain C on purpose: exported libraries
 * compile this file as it is. */
#include "fb-conv-desc.h"

#include <math.h>

/* Whether the product of v fits in 2^40 (no tensor is larger; nothing overflows). */
static int
product_fits (const int64_t *v, size_t n)
{
  int64_t p = 1;
  for (size_t i = 0; i < n; i++)
    if (__builtin_mul_overflow (p, v[i], &p) || p > ((int64_t) 1 << 40))
      return 0;
  return 1;
}

int
fb_conv_desc_valid (const FbConvDesc *d)
{
  const int64_t positive[] = { d->n, d->c, d->h, d->w, d->co, d->oh, d->ow, d->groups, d->kh,
                               d->kw, d->sh, d->sw, d->dh, d->dw };
  const int64_t limit = (int64_t) 1 << 24;
  for (size_t i = 0; i < sizeof positive / sizeof positive[0]; i++)
    if (positive[i] < 1 || positive[i] > limit)
      return 0;
  if (d->pt < 0 || d->pl < 0 || d->pb < 0 || d->pr < 0 || d->pt > limit || d->pl > limit ||
      d->pb > limit || d->pr > limit || d->c % d->groups || d->co % d->groups ||
      d->has_bias < 0 || d->has_bias > 1 || d->transposed < 0 || d->transposed > 1 ||
      d->n_post < 0 || d->n_post > FB_CONV_MAX_POST || d->scaled_input < 0 ||
      d->scaled_input > 1 || (d->scaled_input && (d->groups != 1 || d->transposed)) ||
      (d->y_stride != 0 && (d->y_stride < d->co || d->y_stride > limit || d->transposed)))
    return 0;
  const int64_t src[] = { d->n, d->c, d->h, d->w }, dst[] = { d->n, d->co, d->oh, d->ow };
  const int64_t wei[] = { d->co, d->c / d->groups, d->kh, d->kw };
  if (!product_fits (src, 4) || !product_fits (dst, 4) || !product_fits (wei, 4))
    return 0;
  int adds = 0;
  for (int64_t i = 0; i < d->n_post; i++)
    {
      if (d->post[i].kind <= FB_CONV_POST_NONE || d->post[i].kind > FB_CONV_POST_GELU)
        return 0;
      if ((d->post[i].kind == FB_CONV_POST_MAX || d->post[i].kind == FB_CONV_POST_MIN) &&
          !isfinite (d->post[i].alpha))
        return 0;
      /* ONNX's HardSwish has no attributes; oneDNN 2's hardswish takes none either. */
      if (d->post[i].kind == FB_CONV_POST_HARD_SWISH &&
          (fabs (d->post[i].alpha - 1.0 / 6) > 1e-12 || d->post[i].beta != 0.5))
        return 0;
      if (d->post[i].kind == FB_CONV_POST_GELU && d->post[i].alpha != 0 && d->post[i].alpha != 1)
        return 0;
      adds += d->post[i].kind == FB_CONV_POST_ADD || d->post[i].kind == FB_CONV_POST_SUM;
    }
  if (adds > 0 && d->y_stride != 0 && d->y_stride != d->co)
    return 0;
  int64_t eh = (d->kh - 1) * d->dh + 1, ew = (d->kw - 1) * d->dw + 1;
  if (d->transposed)
    {
      /* The convolution this one transposes, from its output back to its input: the rows
       * the output padding adds are the remainder of the division, under the stride. */
      int64_t ph = d->oh + d->pt + d->pb, pw = d->ow + d->pl + d->pr;
      return adds <= 1 && ph >= eh && pw >= ew && (ph - eh) / d->sh + 1 == d->h &&
             (pw - ew) / d->sw + 1 == d->w;
    }
  int64_t ph = d->h + d->pt + d->pb, pw = d->w + d->pl + d->pr;
  return adds <= 1 && ph >= eh && pw >= ew && (ph - eh) / d->sh + 1 == d->oh &&
         (pw - ew) / d->sw + 1 == d->ow;
}

int
fb_conv_desc_cudnn_epilogue (const FbConvDesc *d, int64_t *act, double *param)
{
  int64_t i = 0;
  *act = FB_CONV_POST_NONE;
  *param = 0;
  if (i < d->n_post && d->post[i].kind == FB_CONV_POST_ADD)
    i++;
  if (i < d->n_post)
    {
      const FbConvPost *p = &d->post[i];
      /* cuDNN takes a Clip as a Relu bounded above (a Relu then a Min in a graph, a clipped
       * Relu in a legacy call): the lower bound must be Relu's 0, and a bound of +inf (a Clip
       * with no max) is a plain Relu. */
      int clip_from_0 = p->kind == FB_CONV_POST_CLIP && p->alpha == 0 && p->beta > 0;
      int relu = (p->kind == FB_CONV_POST_RELU && p->alpha == 0) ||
                 (clip_from_0 && isinf (p->beta));
      int clip = clip_from_0 && isfinite (p->beta);
      if (relu)
        *act = FB_CONV_POST_RELU;
      else if (clip)
        *act = FB_CONV_POST_CLIP, *param = p->beta;
      else if (p->kind == FB_CONV_POST_SWISH)
        *act = FB_CONV_POST_SWISH, *param = p->alpha;
      else if (p->kind == FB_CONV_POST_HARD_SWISH)
        *act = FB_CONV_POST_HARD_SWISH;
      else
        return 0;
      i++;
    }
  return i == d->n_post;
}
