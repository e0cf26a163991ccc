/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Softmax, LogSoftmax, LayerNormalization (with its Mean and InvStdDev outputs),
 * InstanceNormalization, MeanVarianceNormalization and LRN. All but LRN: per row of the kept
 * dimensions, passes over the normalized ones with accumulators (max and sum of exponentials;
 * mean and variance), then the normalized values stored. The input is recomputed in each pass
 * when it is an elementwise expression, which is cheaper than storing it. */
#include "fb-lower-private.h"

#include <math.h>
#include <string.h>

static gboolean
lower_softmax (FbLowerCtx *c, const FbNode *node, int rank, const int64_t *dims, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0];
  int axis;
  int opset = node->opset ? node->opset : 13;
  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", opset >= 13 ? -1 : 1), rank, &axis))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "bad axis");
  guint mask = opset >= 13 ? 1u << axis : ((1u << rank) - 1) & ~((1u << axis) - 1);
  FbDType t = x->dtype;
  FbKExpr *coords[FB_MAX_RANK], *rc[FB_MAX_RANK];
  int64_t numel = 1;
  for (int d = 0; d < rank; d++)
    numel *= dims[d];
  GPtrArray *body = _fb_lower_kept_nest (c, rank, dims, mask, coords, 4.0 * numel);

  /* A float Softmax on the cpu target stores each exponential as it sums them, and scales
   * what it stored: one exponential an element instead of two (ViT-S/16's Softmaxes, 12 of
   * [6, 197, 197], took 1.32 ms on one Zen 4 core computing each twice). Not where an
   * epilogue is sunk into it (the output then holds the chain's end), nor for other floats
   * (the stored value would be rounded to them), nor on a GPU (the output is far memory). */
  const FbValue *y = node->outputs[0];
  gboolean store_exp = node->op == FB_OP_SOFTMAX && t == FB_DTYPE_FLOAT32 &&
                       !_fb_lower_for_gpu (c) && g_hash_table_lookup (c->sunk, y) == NULL;
  guint m = fb_kernel_new_acc (k, t), s = fb_kernel_new_acc (k, t);
  g_ptr_array_add (body, fb_ks_assign (k, m, fb_kx_const_f (k, t, -INFINITY)));
  memcpy (rc, coords, sizeof rc);
  GPtrArray *l = _fb_lower_reduce_loops (k, body, rank, dims, mask, rc);
  FbKExpr *v = _fb_lower_value_at (c, x, rank, rc, error);
  if (v == NULL)
    return FALSE;
  g_ptr_array_add (l, fb_ks_assign (k, m, fb_kx_binary (k, FB_KB_MAX, fb_kx_acc (k, m), v)));

  g_ptr_array_add (body, fb_ks_assign (k, s, fb_kx_const_f (k, t, 0.0)));
  memcpy (rc, coords, sizeof rc);
  l = _fb_lower_reduce_loops (k, body, rank, dims, mask, rc);
  v = _fb_lower_value_at (c, x, rank, rc, error);
  if (v == NULL)
    return FALSE;
  FbKExpr *e = fb_kx_unary (k, FB_KU_EXP, fb_kx_binary (k, FB_KB_SUB, v, fb_kx_acc (k, m)));
  if (store_exp && !_fb_lower_store (c, l, y, rc, e, error))
    return FALSE;
  g_ptr_array_add (l, fb_ks_assign (k, s, fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, s), e)));

  guint f = fb_kernel_new_acc (k, t);
  /* LogSoftmax is (x - max) - log Σ: x - max is exact for the large values next to the max,
   * where x - (max + log Σ) rounds log Σ to the ulp of max (2.4e-4 at 10000); the outer
   * subtraction is exact so that the optimizer does not hoist max + log Σ out of the loop. */
  if (node->op == FB_OP_LOG_SOFTMAX)
    g_ptr_array_add (body, fb_ks_assign (k, f, fb_kx_unary (k, FB_KU_LOG, fb_kx_acc (k, s))));
  else
    g_ptr_array_add (body, fb_ks_assign (k, f, fb_kx_binary (k, FB_KB_DIV, fb_kx_const_f (k, t, 1.0),
                                                             fb_kx_acc (k, s))));
  memcpy (rc, coords, sizeof rc);
  l = _fb_lower_reduce_loops (k, body, rank, dims, mask, rc);
  if (store_exp)
    return _fb_lower_store (c, l, y, rc, fb_kx_binary (k, FB_KB_MUL, _fb_lower_load_stored (c, y, rc),
                                                        fb_kx_acc (k, f)), error);
  v = _fb_lower_value_at (c, x, rank, rc, error);
  if (v == NULL)
    return FALSE;
  FbKExpr *out = node->op == FB_OP_LOG_SOFTMAX
    ? fb_kx_binary (k, FB_KB_SUB_EXACT, fb_kx_binary (k, FB_KB_SUB, v, fb_kx_acc (k, m)),
                    fb_kx_acc (k, f))
    : fb_kx_binary (k, FB_KB_MUL, fb_kx_unary (k, FB_KU_EXP, fb_kx_binary (k, FB_KB_SUB, v, fb_kx_acc (k, m))),
                    fb_kx_acc (k, f));
  return _fb_lower_store (c, l, y, rc, out, error);
}

/* Into body, the statistics of x over the dims in mask at the kept coordinates: mean (the
 * sum divided by n) and squares, the sum of the squared deviations from it (two passes, so
 * that large offsets do not cancel). FALSE with error set when x cannot be read. */
static gboolean
emit_mean_and_squares (FbLowerCtx *c, GPtrArray *body, const FbValue *x, int rank,
                       const int64_t *dims, guint mask, FbKExpr *const *coords, guint mean,
                       guint squares, FbKExpr *n, GError **error)
{
  FbKernel *k = c->k;
  FbDType t = x->dtype;
  FbKExpr *rc[FB_MAX_RANK];

  g_ptr_array_add (body, fb_ks_assign (k, mean, fb_kx_const_f (k, t, 0.0)));
  memcpy (rc, coords, sizeof rc);
  GPtrArray *l = _fb_lower_reduce_loops (k, body, rank, dims, mask, rc);
  FbKExpr *v = _fb_lower_value_at (c, x, rank, rc, error);
  if (v == NULL)
    return FALSE;
  g_ptr_array_add (l, fb_ks_assign (k, mean, fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, mean), v)));
  g_ptr_array_add (body, fb_ks_assign (k, mean,
                                       fb_kx_binary (k, FB_KB_DIV, fb_kx_acc (k, mean), n)));

  g_ptr_array_add (body, fb_ks_assign (k, squares, fb_kx_const_f (k, t, 0.0)));
  memcpy (rc, coords, sizeof rc);
  l = _fb_lower_reduce_loops (k, body, rank, dims, mask, rc);
  v = _fb_lower_value_at (c, x, rank, rc, error);
  if (v == NULL)
    return FALSE;
  FbKExpr *d = fb_kx_binary (k, FB_KB_SUB, v, fb_kx_acc (k, mean));
  g_ptr_array_add (l, fb_ks_assign (k, squares, fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, squares),
                                                              fb_kx_binary (k, FB_KB_MUL, d, d))));
  return TRUE;
}

/* LayerNormalization over dims [axis, rank), InstanceNormalization over [2, rank) with a
 * per-channel scale and bias. */
static gboolean
lower_norm (FbLowerCtx *c, const FbNode *node, int rank, const int64_t *dims, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0];
  gboolean instance = node->op == FB_OP_INSTANCE_NORMALIZATION;
  int axis = 2;
  if (!instance && !fb_axis_normalize (fb_node_attr_int (node, "axis", -1), rank, &axis))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "bad axis");
  guint mask = ((1u << rank) - 1) & ~((1u << axis) - 1);
  double eps = fb_node_attr_float (node, "epsilon", 1e-5f);
  FbDType t = x->dtype;
  int64_t count = 1, numel = 1;
  for (int d = 0; d < rank; d++)
    {
      numel *= dims[d];
      if (mask & (1u << d))
        count *= dims[d];
    }
  FbKExpr *coords[FB_MAX_RANK], *rc[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_kept_nest (c, rank, dims, mask, coords, 6.0 * numel);
  guint mean = fb_kernel_new_acc (k, t), var = fb_kernel_new_acc (k, t);
  FbKExpr *n = fb_kx_const_f (k, t, (double) count);

  if (!emit_mean_and_squares (c, body, x, rank, dims, mask, coords, mean, var, n, error))
    return FALSE;
  /* var becomes 1 / sqrt (var / n + eps) */
  g_ptr_array_add (body, fb_ks_assign (k, var,
    fb_kx_binary (k, FB_KB_DIV, fb_kx_const_f (k, t, 1.0),
                  fb_kx_unary (k, FB_KU_SQRT, fb_kx_binary (k, FB_KB_ADD,
                                                            fb_kx_binary (k, FB_KB_DIV, fb_kx_acc (k, var), n),
                                                            fb_kx_const_f (k, t, eps))))));
  /* LayerNormalization's optional Mean and InvStdDev outputs keep the normalized dims as 1s:
   * the kept coordinates (0 on the normalized dims) index them. */
  for (guint o = 1; !instance && o < 3 && o < node->n_outputs; o++)
    if (node->outputs[o] &&
        !_fb_lower_store (c, body, node->outputs[o], coords, fb_kx_acc (k, o == 1 ? mean : var),
                          error))
      return FALSE;

  memcpy (rc, coords, sizeof rc);
  GPtrArray *l = _fb_lower_reduce_loops (k, body, rank, dims, mask, rc);
  FbKExpr *v = _fb_lower_value_at (c, x, rank, rc, error);
  if (v == NULL)
    return FALSE;
  FbKExpr *y = fb_kx_binary (k, FB_KB_MUL, fb_kx_binary (k, FB_KB_SUB, v, fb_kx_acc (k, mean)),
                             fb_kx_acc (k, var));
  const FbValue *scale = fb_node_input (node, 1), *bias = fb_node_input (node, 2);
  /* Instance norm indexes scale and bias by channel; layer norm broadcasts them over the
   * normalized trailing dimensions. */
  FbKExpr **sc = instance ? &rc[1] : rc;
  int sr = instance ? 1 : rank;
  if (scale)
    {
      FbKExpr *s = _fb_lower_value_at (c, scale, sr, sc, error);
      if (s == NULL)
        return FALSE;
      y = fb_kx_binary (k, FB_KB_MUL, y, s);
    }
  if (bias)
    {
      FbKExpr *b = _fb_lower_value_at (c, bias, sr, sc, error);
      if (b == NULL)
        return FALSE;
      y = fb_kx_binary (k, FB_KB_ADD, y, b);
    }
  return _fb_lower_store (c, l, node->outputs[0], rc, y, error);
}

/* MeanVarianceNormalization: (x - mean) / (sqrt (var) + 1e-9) over the axes (default
 * [0, 2, 3], any set of dimensions), mean and variance in two passes as the interpreter takes
 * them. */
static gboolean
lower_mvn (FbLowerCtx *c, const FbNode *node, int rank, const int64_t *dims, GError **error)
{
  static const int64_t default_axes[] = { 0, 2, 3 };
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0];
  guint n_axes, mask = 0;
  const int64_t *axes = fb_node_attr_ints (node, "axes", &n_axes);
  if (axes == NULL)
    {
      axes = default_axes;
      n_axes = G_N_ELEMENTS (default_axes);
    }
  for (guint i = 0; i < n_axes; i++)
    {
      int a;
      if (!fb_axis_normalize (axes[i], rank, &a) || (mask & (1u << a)))
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "bad axes");
      mask |= 1u << a;
    }
  FbDType t = x->dtype;
  int64_t count = 1, numel = 1;
  for (int d = 0; d < rank; d++)
    {
      numel *= dims[d];
      if (mask & (1u << d))
        count *= dims[d];
    }
  FbKExpr *coords[FB_MAX_RANK], *rc[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_kept_nest (c, rank, dims, mask, coords, 6.0 * numel);
  guint mean = fb_kernel_new_acc (k, t), dev = fb_kernel_new_acc (k, t);
  FbKExpr *n = fb_kx_const_f (k, t, (double) MAX (count, 1));

  if (!emit_mean_and_squares (c, body, x, rank, dims, mask, coords, mean, dev, n, error))
    return FALSE;
  /* dev becomes the standard deviation plus the spec's epsilon */
  g_ptr_array_add (body, fb_ks_assign (k, dev,
    fb_kx_binary (k, FB_KB_ADD,
                  fb_kx_unary (k, FB_KU_SQRT, fb_kx_binary (k, FB_KB_DIV, fb_kx_acc (k, dev), n)),
                  fb_kx_const_f (k, t, 1e-9))));

  memcpy (rc, coords, sizeof rc);
  GPtrArray *l = _fb_lower_reduce_loops (k, body, rank, dims, mask, rc);
  FbKExpr *v = _fb_lower_value_at (c, x, rank, rc, error);
  if (v == NULL)
    return FALSE;
  FbKExpr *y = fb_kx_binary (k, FB_KB_DIV, fb_kx_binary (k, FB_KB_SUB, v, fb_kx_acc (k, mean)),
                             fb_kx_acc (k, dev));
  return _fb_lower_store (c, l, node->outputs[0], rc, y, error);
}

/* LRN: y = x / (bias + alpha / size * Σ x²)^beta over a window of channels (dim 1), the window
 * clipped at the ends by a select on each cell. */
static gboolean
lower_lrn (FbLowerCtx *c, const FbNode *node, int rank, const int64_t *dims, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0];
  FbDType t = x->dtype;
  int64_t size = fb_node_attr_int (node, "size", 1);
  double alpha = fb_node_attr_float (node, "alpha", 1e-4f);
  double beta = fb_node_attr_float (node, "beta", 0.75f);
  double bias = fb_node_attr_float (node, "bias", 1.0f);
  if (rank < 2 || size < 1)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "needs a channel dimension");
  int64_t numel = 1;
  for (int d = 0; d < rank; d++)
    numel *= dims[d];
  FbKExpr *coords[FB_MAX_RANK], *wc[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_nest (c, rank, dims, coords, (double) numel * (size + 4));
  guint sum = fb_kernel_new_acc (k, t);
  g_ptr_array_add (body, fb_ks_assign (k, sum, fb_kx_const_f (k, t, 0.0)));
  int64_t lo = (size - 1) / 2;
  memcpy (wc, coords, sizeof wc);
  for (int64_t j = 0; j < size; j++)
    {
      FbKExpr *ch = fb_kx_add_c (k, coords[1], j - lo);
      FbKExpr *inside = fb_kx_binary (k, FB_KB_AND,
                                      fb_kx_binary (k, FB_KB_GE, ch, fb_kx_index (k, 0)),
                                      fb_kx_binary (k, FB_KB_LT, ch, fb_kx_index (k, dims[1])));
      wc[1] = fb_kx_binary (k, FB_KB_MIN, fb_kx_binary (k, FB_KB_MAX, ch, fb_kx_index (k, 0)),
                            fb_kx_index (k, dims[1] - 1));
      FbKExpr *v = _fb_lower_value_at (c, x, rank, wc, error);
      if (v == NULL)
        return FALSE;
      FbKExpr *sq = fb_kx_select (k, inside, fb_kx_binary (k, FB_KB_MUL, v, v),
                                  fb_kx_const_f (k, t, 0.0));
      g_ptr_array_add (body, fb_ks_assign (k, sum, fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, sum), sq)));
    }
  FbKExpr *den = fb_kx_binary (k, FB_KB_ADD, fb_kx_const_f (k, t, bias),
                               fb_kx_binary (k, FB_KB_MUL, fb_kx_const_f (k, t, alpha / size),
                                             fb_kx_acc (k, sum)));
  den = fb_kx_binary (k, FB_KB_POW, den, fb_kx_const_f (k, t, beta));
  FbKExpr *v = _fb_lower_value_at (c, x, rank, coords, error);
  if (v == NULL)
    return FALSE;
  return _fb_lower_store (c, body, node->outputs[0], coords, fb_kx_binary (k, FB_KB_DIV, v, den),
                          error);
}

gboolean
_fb_lower_normalize (FbLowerCtx *c, const FbNode *node, GError **error)
{
  int rank;
  int64_t dims[FB_MAX_RANK];
  if (!_fb_lower_dims (node->inputs[0], &rank, dims))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shape is not static");
  if (!fb_dtype_is_float (node->inputs[0]->dtype))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "needs a float input");
  if (node->op == FB_OP_SOFTMAX || node->op == FB_OP_LOG_SOFTMAX)
    return lower_softmax (c, node, rank, dims, error);
  if (node->op == FB_OP_LRN)
    return lower_lrn (c, node, rank, dims, error);
  if (node->op == FB_OP_MEAN_VARIANCE_NORMALIZATION)
    return lower_mvn (c, node, rank, dims, error);
  return lower_norm (c, node, rank, dims, error);
}
