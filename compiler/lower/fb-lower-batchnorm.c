/* SPDX-License-Identifier: GPL-3.0-or-later */
/* BatchNormalization. At inference it is elementwise, y = (x - mean) / sqrt (var + epsilon) *
 * scale + B with the parameters indexed by channel (or, with spatial=0 before opset 9, by
 * every element of a sample), computed where it is read; constant statistics fold to
 * y = x * a[c] + b[c] at compile time. Statistics fed at run time are loaded.
 *
 * In training mode (the training_mode attribute from opset 14; before it, asking for the
 * statistics outputs) a phase runs per channel: two passes over the batch and spatial axes for
 * the batch mean and population variance, the running statistics written as
 * mean * momentum + batch_mean * (1 - momentum) (likewise the variance), then the normalized
 * values. Asking for the statistics outputs outside training mode copies the inputs' ones. */
#include "fb-lower-private.h"

#include <math.h>
#include <string.h>

gboolean
_fb_lower_bn_training (const FbNode *node)
{
  if (node->opset == 0 || node->opset >= 14)
    return fb_node_attr_int (node, "training_mode", 0) != 0;
  return node->n_outputs > 1 && node->outputs[1] != NULL;
}

static gboolean
per_element (const FbNode *node)
{
  return node->opset > 0 && node->opset < 9 && fb_node_attr_int (node, "spatial", 1) == 0;
}

/* Where the statistics are computed: float32 for float16. */
static FbDType
compute_type (FbDType t)
{
  return t == FB_DTYPE_FLOAT16 ? FB_DTYPE_FLOAT32 : t;
}

/* Parameter i (scale, B, mean, var) at the coordinates of x's element: its channel, or its
 * whole position in the sample. */
static FbKExpr *
param_at (FbLowerCtx *c, const FbNode *m, guint i, int rank, FbKExpr **coords, FbDType ct,
          GError **error)
{
  const FbValue *p = fb_node_input (m, i);
  if (p == NULL)
    {
      _fb_lower_fail (error, m, FB_LOWER_ERROR_SHAPE, "input %u is required", i);
      return NULL;
    }
  FbKExpr *v = _fb_lower_value_at (c, p, per_element (m) ? rank - 1 : 1, &coords[1], error);
  return v ? fb_kx_cast (c->k, v, ct) : NULL;
}

static FbKExpr *
normalize (FbLowerCtx *c, const FbNode *m, FbKExpr *x, FbKExpr *mean, FbKExpr *var,
           FbKExpr *scale, FbKExpr *bias, FbDType ct)
{
  FbKernel *k = c->k;
  double eps = fb_node_attr_float (m, "epsilon", 1e-5f);
  FbKExpr *den = fb_kx_unary (k, FB_KU_SQRT, fb_kx_binary (k, FB_KB_ADD, var, fb_kx_const_f (k, ct, eps)));
  FbKExpr *y = fb_kx_binary (k, FB_KB_DIV, fb_kx_binary (k, FB_KB_SUB, x, mean), den);
  return fb_kx_binary (k, FB_KB_ADD, fb_kx_binary (k, FB_KB_MUL, y, scale), bias);
}

static gboolean
constant_statistics (const FbNode *m)
{
  for (guint j = 1; j < 5; j++)
    if (fb_node_input (m, j) == NULL || m->inputs[j]->constant == NULL)
      return FALSE;
  return !per_element (m);
}

FbKExpr *
_fb_lower_batchnorm_expr (FbLowerCtx *c, const FbNode *m, int rank, FbKExpr **coords,
                          FbKExpr *x, GError **error)
{
  int r;
  int64_t dims[FB_MAX_RANK];
  _fb_lower_dims (m->outputs[0], &r, dims);
  if (c->merged_rank >= 0 || r < 2 || rank != r)
    {
      _fb_lower_fail (error, m, FB_LOWER_ERROR_UNSUPPORTED, "unexpected coordinates");
      return NULL;
    }
  FbDType ct = compute_type (m->outputs[0]->dtype);
  if (constant_statistics (m))
    {
      /* y = x * a[c] + b[c] with a, b folded from the statistics at compile time. */
      int64_t ch = dims[1];
      for (guint j = 1; j < 5; j++)
        if (m->inputs[j]->constant->numel != ch)
          {
            _fb_lower_fail (error, m, FB_LOWER_ERROR_SHAPE,
                            "input %u ('%s') has %" G_GINT64_FORMAT " elements for %"
                            G_GINT64_FORMAT " channels", j, m->inputs[j]->name,
                            m->inputs[j]->constant->numel, ch);
            return NULL;
          }
      g_autoptr(FbTensor) a = fb_tensor_new (FB_DTYPE_FLOAT32, 1, &ch, NULL);
      g_autoptr(FbTensor) b = fb_tensor_new (FB_DTYPE_FLOAT32, 1, &ch, NULL);
      double eps = fb_node_attr_float (m, "epsilon", 1e-5f);
      for (int64_t i = 0; i < ch; i++)
        {
          double s = fb_tensor_get_f64 (m->inputs[1]->constant, i);
          double bias = fb_tensor_get_f64 (m->inputs[2]->constant, i);
          double mean = fb_tensor_get_f64 (m->inputs[3]->constant, i);
          double var = fb_tensor_get_f64 (m->inputs[4]->constant, i);
          double f = s / sqrt (var + eps);
          fb_tensor_set_f64 (a, i, f);
          fb_tensor_set_f64 (b, i, bias - mean * f);
        }
      g_autofree char *an = g_strdup_printf ("%s.scale", m->name);
      g_autofree char *bn = g_strdup_printf ("%s.shift", m->name);
      guint aa = _fb_lower_const_arg (c, a, an), ba = _fb_lower_const_arg (c, b, bn);
      FbKExpr *xf = fb_kx_cast (c->k, x, FB_DTYPE_FLOAT32);
      FbKExpr *y = fb_kx_binary (c->k, FB_KB_ADD,
                                 fb_kx_binary (c->k, FB_KB_MUL, xf, fb_kx_load (c->k, aa, coords[1])),
                                 fb_kx_load (c->k, ba, coords[1]));
      return fb_kx_cast (c->k, y, m->outputs[0]->dtype);
    }
  FbKExpr *p[4];
  for (guint j = 0; j < 4; j++)
    if ((p[j] = param_at (c, m, j + 1, rank, coords, ct, error)) == NULL)
      return NULL;
  FbKExpr *y = normalize (c, m, fb_kx_cast (c->k, x, ct), p[2], p[3], p[0], p[1], ct);
  return fb_kx_cast (c->k, y, m->outputs[0]->dtype);
}

/* acc = Σ f(x) / n over the batch and spatial axes of the channel at coords. */
static gboolean
channel_mean (FbLowerCtx *c, const FbNode *node, GPtrArray *body, int rank, const int64_t *dims,
              FbKExpr **coords, guint acc, FbKExpr *center, FbDType ct, int64_t n, GError **error)
{
  FbKernel *k = c->k;
  guint mask = ((1u << rank) - 1) & ~2u;
  FbKExpr *rc[FB_MAX_RANK];
  memcpy (rc, coords, sizeof rc);
  g_ptr_array_add (body, fb_ks_assign (k, acc, fb_kx_const_f (k, ct, 0.0)));
  GPtrArray *l = _fb_lower_reduce_loops (k, body, rank, dims, mask, rc);
  FbKExpr *v = _fb_lower_value_at (c, node->inputs[0], rank, rc, error);
  if (v == NULL)
    return FALSE;
  v = fb_kx_cast (k, v, ct);
  if (center)
    {
      FbKExpr *dv = fb_kx_binary (k, FB_KB_SUB, v, center);
      v = fb_kx_binary (k, FB_KB_MUL, dv, dv);
    }
  g_ptr_array_add (l, fb_ks_assign (k, acc, fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, acc), v)));
  /* An empty batch has mean 0 and variance 0, as the interpreter says, not 0 / 0. */
  g_ptr_array_add (body, fb_ks_assign (k, acc, fb_kx_binary (k, FB_KB_DIV, fb_kx_acc (k, acc),
                                                             fb_kx_const_f (k, ct, (double) MAX (n, 1)))));
  return TRUE;
}

gboolean
_fb_lower_batchnorm (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0];
  int rank;
  int64_t dims[FB_MAX_RANK];
  if (!_fb_lower_dims (x, &rank, dims) || rank < 2)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                           "needs a static input with a channel axis");
  if (!fb_dtype_is_float (x->dtype))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "needs a float input");
  gboolean training = _fb_lower_bn_training (node);
  if (per_element (node))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "the statistics outputs with spatial=0 are not computed");
  for (guint o = 3; o < node->n_outputs; o++)
    if (node->outputs[o])
      return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                             "the saved mean and variance outputs (before opset 14) are not "
                             "computed");
  for (guint j = 1; j < 5; j++)
    if (fb_node_input (node, j) == NULL || _fb_lower_numel (node->inputs[j]) != dims[1])
      return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                             "input %u must hold one value per channel (%" G_GINT64_FORMAT ")",
                             j, dims[1]);
  FbDType ct = compute_type (x->dtype);
  int64_t numel = 1;
  for (int d = 0; d < rank; d++)
    numel *= dims[d];
  guint mask = ((1u << rank) - 1) & ~2u;
  FbKExpr *coords[FB_MAX_RANK], *rc[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_kept_nest (c, rank, dims, mask, coords, 6.0 * numel);
  FbKExpr *mean, *var;
  FbKExpr *in_mean = param_at (c, node, 3, rank, coords, ct, error);
  FbKExpr *in_var = in_mean ? param_at (c, node, 4, rank, coords, ct, error) : NULL;
  if (in_var == NULL)
    return FALSE;
  if (training)
    {
      guint m = fb_kernel_new_acc (k, ct), v = fb_kernel_new_acc (k, ct);
      int64_t n = numel / MAX (dims[1], 1);
      if (!channel_mean (c, node, body, rank, dims, coords, m, NULL, ct, n, error) ||
          !channel_mean (c, node, body, rank, dims, coords, v, fb_kx_acc (k, m), ct, n, error))
        return FALSE;
      mean = fb_kx_acc (k, m);
      var = fb_kx_acc (k, v);
    }
  else
    {
      mean = in_mean;
      var = in_var;
    }
  double momentum = fb_node_attr_float (node, "momentum", 0.9f);
  for (guint o = 1; o < 3 && o < node->n_outputs; o++)
    {
      if (node->outputs[o] == NULL)
        continue;
      FbKExpr *running = o == 1 ? in_mean : in_var;
      if (training)
        running = fb_kx_binary (k, FB_KB_ADD,
                                fb_kx_binary (k, FB_KB_MUL, running, fb_kx_const_f (k, ct, momentum)),
                                fb_kx_binary (k, FB_KB_MUL, o == 1 ? mean : var,
                                              fb_kx_const_f (k, ct, 1.0 - momentum)));
      if (!_fb_lower_store (c, body, node->outputs[o], &coords[1], running, error))
        return FALSE;
    }
  if (node->outputs[0] == NULL)
    return TRUE;
  memcpy (rc, coords, sizeof rc);
  GPtrArray *l = _fb_lower_reduce_loops (k, body, rank, dims, mask, rc);
  FbKExpr *xv = _fb_lower_value_at (c, x, rank, rc, error);
  FbKExpr *scale = xv ? param_at (c, node, 1, rank, coords, ct, error) : NULL;
  FbKExpr *bias = scale ? param_at (c, node, 2, rank, coords, ct, error) : NULL;
  if (bias == NULL)
    return FALSE;
  FbKExpr *y = normalize (c, node, fb_kx_cast (k, xv, ct), mean, var, scale, bias, ct);
  return _fb_lower_store (c, l, node->outputs[0], rc, y, error);
}
