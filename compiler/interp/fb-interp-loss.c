/* SPDX-License-Identifier: GPL-3.0-or-later */
/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. Both see their input as
 * [N, C, D] (D the product of the trailing dims) and their target as [N, D]; the loss of an
 * element is -input[n, target, d] * weight[target], 0 where the target is ignore_index, and
 * "mean" divides the sum by the sum of the weights taken (the count when there are none). */
#include "fb-interp-private.h"

#include <math.h>
#include <string.h>

gboolean
_fb_interp_check_loss (const FbNode *node, GError **error)
{
  const char *red = fb_node_attr_string (node, "reduction", "mean");
  if (strcmp (red, "mean") != 0 && strcmp (red, "sum") != 0 && strcmp (red, "none") != 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "reduction '%s' is not 'none', 'sum' or 'mean'", red);
  return TRUE;
}

/* loss (N*D values) and the weight each element took; returns FALSE on a bad target. */
static gboolean
nll_elements (const FbNode *node, const double *x, const FbTensor *xt, const FbTensor *target,
              const FbTensor *weight, double *loss, double *wsum, GError **error)
{
  int64_t N = xt->dims[0], C = xt->dims[1], D = _fb_interp_prod (xt->dims, 2, xt->rank);
  const FbAttr *ig = fb_node_attr (node, "ignore_index");
  gboolean has_ignore = ig != NULL && ig->type == FB_ATTR_INT;
  int64_t ignore = has_ignore ? ig->i : 0;
  g_autofree int64_t *t = _fb_interp_read_i64 (target);
  g_autofree double *w = weight ? _fb_interp_read_f64 (weight) : NULL;

  *wsum = 0;
  for (int64_t n = 0; n < N; n++)
    for (int64_t d = 0; d < D; d++)
      {
        int64_t c = t[n * D + d];
        if (has_ignore && c == ignore)
          {
            loss[n * D + d] = 0;
            continue;
          }
        if (c < 0 || c >= C)
          return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "target %" G_GINT64_FORMAT " is outside the %" G_GINT64_FORMAT
                                  " classes", c, C);
        double wc = w ? w[c] : 1.0;
        loss[n * D + d] = -x[(n * C + c) * D + d] * wc;
        *wsum += wc;
      }
  return TRUE;
}

static gboolean
check_shapes (const FbNode *node, const FbTensor *x, const FbTensor *target,
              const FbTensor *weight, GError **error)
{
  if (!_fb_interp_need_float (node, x, error))
    return FALSE;
  if (x->rank < 2)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the input must have rank 2 or more (N, C, ...), not %d", x->rank);
  if (!fb_dtype_is_integer (target->dtype))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the target must hold integers, not %s", fb_dtype_name (target->dtype));
  gboolean ok = target->rank == x->rank - 1 && target->dims[0] == x->dims[0];
  for (int i = 1; ok && i < target->rank; i++)
    ok = target->dims[i] == x->dims[i + 1];
  if (!ok)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the target's shape is not the input's without its class axis");
  if (weight && (weight->rank != 1 || weight->dims[0] != x->dims[1]))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the weight must be a vector of the %" G_GINT64_FORMAT " classes",
                            x->dims[1]);
  return TRUE;
}

static gboolean
reduce_loss (const FbNode *node, const FbTensor *x, const FbTensor *target, double *loss,
             double wsum, FbTensor **out, GError **error)
{
  const char *red = fb_node_attr_string (node, "reduction", "mean");
  g_autoptr(FbTensor) y = NULL;

  if (strcmp (red, "none") == 0)
    {
      y = _fb_interp_new (node, x->dtype, target->rank, target->dims, error);
      if (y == NULL)
        return FALSE;
      _fb_interp_write_f64 (y, loss);
    }
  else
    {
      double s = 0;
      for (int64_t i = 0; i < target->numel; i++)
        s += loss[i];
      if (strcmp (red, "mean") == 0)
        s /= wsum;
      y = _fb_interp_new (node, x->dtype, 0, NULL, error);
      if (y == NULL)
        return FALSE;
      _fb_interp_write_f64 (y, &s);
    }
  *out = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_nll_loss (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                     GError **error)
{
  FbTensor *weight = node->n_inputs > 2 ? in[2] : NULL;
  double wsum;

  if (!_fb_interp_check_loss (node, error) || !check_shapes (node, in[0], in[1], weight, error))
    return FALSE;
  g_autofree double *x = _fb_interp_read_f64 (in[0]);
  g_autofree double *loss = _fb_interp_alloc (node, in[1]->numel, sizeof (double), error);
  if (loss == NULL)
    return FALSE;
  return nll_elements (node, x, in[0], in[1], weight, loss, &wsum, error) &&
         reduce_loss (node, in[0], in[1], loss, wsum, &out[0], error);
}

gboolean
_fb_interp_softmax_ce_loss (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                            FbTensor **out, GError **error)
{
  FbTensor *xt = in[0], *weight = node->n_inputs > 2 ? in[2] : NULL;
  double wsum;

  if (!_fb_interp_check_loss (node, error) || !check_shapes (node, xt, in[1], weight, error))
    return FALSE;
  int64_t N = xt->dims[0], C = xt->dims[1], D = _fb_interp_prod (xt->dims, 2, xt->rank);
  g_autofree double *x = _fb_interp_read_f64 (xt);
  /* Log-softmax over the class axis, in place. */
  for (int64_t n = 0; n < N; n++)
    for (int64_t d = 0; d < D; d++)
      {
        double *p = x + n * C * D + d, max = -INFINITY, sum = 0;
        for (int64_t c = 0; c < C; c++)
          max = fmax (max, p[c * D]);
        for (int64_t c = 0; c < C; c++)
          sum += exp (p[c * D] - max);
        double lse = max + log (sum);
        for (int64_t c = 0; c < C; c++)
          p[c * D] -= lse;
      }
  g_autofree double *loss = _fb_interp_alloc (node, in[1]->numel, sizeof (double), error);
  if (loss == NULL || !nll_elements (node, x, xt, in[1], weight, loss, &wsum, error) ||
      !reduce_loss (node, xt, in[1], loss, wsum, &out[0], error))
    return FALSE;
  if (node->n_outputs > 1)
    {
      out[1] = _fb_interp_new (node, xt->dtype, xt->rank, xt->dims, error);
      if (out[1] == NULL)
        return FALSE;
      _fb_interp_write_f64 (out[1], x);
    }
  return TRUE;
}
