/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reductions (ReduceSum and family, ArgMax, ArgMin, global pools) and windowed pools (the 1-D
 * and 2-D float ones; fb-lower-pool-nd.c has the others). A reduction is a loop nest over the
 * kept dimensions (the outermost in parallel) around an accumulator loop over the reduced
 * ones; its input may be an elementwise expression computed in the loop. */
#include "fb-lower-conv.h"

#include <math.h>
#include <string.h>

GPtrArray *
_fb_lower_reduce_loops (FbKernel *k, GPtrArray *body, int rank, const int64_t *dims, guint mask,
                        FbKExpr **coords)
{
  for (int d = 0; d < rank; d++)
    if (mask & (1u << d))
      {
        if (dims[d] == 1)
          coords[d] = fb_kx_index (k, 0);
        else
          body = _fb_lower_loop (k, body, fb_kx_index (k, dims[d]), &coords[d]);
      }
  return body;
}

GPtrArray *
_fb_lower_kept_nest (FbLowerCtx *c, int rank, const int64_t *dims, guint mask, FbKExpr **coords,
                     double work)
{
  int64_t kept[FB_MAX_RANK];
  for (int d = 0; d < rank; d++)
    kept[d] = (mask & (1u << d)) ? 1 : dims[d];
  return _fb_lower_nest (c, rank, kept, coords, work);
}

static gboolean
reduce_axes (FbLowerCtx *c, const FbNode *node, int rank, guint *mask, gboolean *noop,
             GError **error)
{
  g_autofree int64_t *axes = NULL;
  guint n = 0;
  *mask = 0;
  *noop = FALSE;
  if (node->op == FB_OP_GLOBAL_AVERAGE_POOL || node->op == FB_OP_GLOBAL_MAX_POOL)
    {
      for (int d = 2; d < rank; d++)
        *mask |= 1u << d;
      if (_fb_lower_is_nhwc (node))
        *mask = ((1u << (rank - 1)) - 1) & ~1u;
      return TRUE;
    }
  if (node->op == FB_OP_ARGMAX || node->op == FB_OP_ARGMIN)
    {
      int a;
      if (!fb_axis_normalize (fb_node_attr_int (node, "axis", 0), rank, &a))
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "bad axis");
      *mask = 1u << a;
      return TRUE;
    }
  if (fb_node_input (node, 1))
    {
      if (!_fb_lower_const_ints (node, 1, &axes, &n, error))
        return FALSE;
    }
  else
    {
      const int64_t *aa = fb_node_attr_ints (node, "axes", &n);
      axes = g_memdup2 (aa, sizeof (int64_t) * MAX (n, 1));
    }
  if (n == 0)
    {
      if (fb_node_attr_int (node, "noop_with_empty_axes", 0))
        *noop = TRUE;
      else
        *mask = (1u << rank) - 1;
      return TRUE;
    }
  for (guint i = 0; i < n; i++)
    {
      int a;
      if (!fb_axis_normalize (axes[i], rank, &a))
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "axis %" G_GINT64_FORMAT
                               " out of range", axes[i]);
      *mask |= 1u << a;
    }
  return TRUE;
}

FbKBinary
_fb_lower_column_op (const FbNode *node, double *init)
{
  if (node->op == FB_OP_REDUCE_MAX || node->op == FB_OP_GLOBAL_MAX_POOL)
    {
      *init = -INFINITY;
      return FB_KB_MAX;
    }
  if (node->op == FB_OP_REDUCE_MIN)
    {
      *init = INFINITY;
      return FB_KB_MIN;
    }
  *init = 0.0;
  return FB_KB_ADD;
}

/* Channels are accumulated FB_LOWER_COLUMN_BLOCK (64) at a time by a column reduction. Blocks
 * made even in multiples of 16 channels, two at least, were slower on a 2-core Zen 4 (EfficientNet-B0's
 * pools 342 -> 449 us): [112, 112, 32] split 16 + 16 had the two threads read alternate
 * 64-byte lines of every row, each pulling both through the adjacent-line prefetcher
 * (36.8 -> 119 us), and 48-channel blocks straddle lines. */
#define COLUMN_BLOCK FB_LOWER_COLUMN_BLOCK

int
_fb_lower_column_first (int rank, guint mask)
{
  int first = rank - 1;
  while (first > 0 && (mask & (1u << (first - 1))))
    first--;
  return first < rank - 1 && mask == (((1u << (rank - 1)) - 1) & ~((1u << first) - 1)) ? first : -1;
}

void
_fb_lower_unflatten (FbKernel *k, FbKExpr *flat, const int64_t *dims, int n, FbKExpr **coords)
{
  FbKExpr *rest = flat;
  for (int d = n - 1; d >= 0; d--)
    {
      coords[d] = d == 0 ? rest : fb_kx_binary (k, FB_KB_MOD, rest, fb_kx_index (k, dims[d]));
      rest = fb_kx_binary (k, FB_KB_DIV, rest, fb_kx_index (k, dims[d]));
    }
}

gboolean
_fb_lower_column_accumulate (FbLowerCtx *c, const FbNode *node, GPtrArray *body, int rank,
                             FbKExpr **coords, guint partial, FbKExpr *at, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0];
  double init;
  FbKBinary op = _fb_lower_column_op (node, &init);
  FbKExpr *v = _fb_lower_value_at (c, x, rank, coords, error);
  if (v == NULL)
    return FALSE;
  g_ptr_array_add (body, fb_ks_store (k, partial, at,
                                      fb_kx_binary (k, op, fb_kx_load (k, partial, at),
                                                    fb_kx_cast (k, v, x->dtype))));
  return TRUE;
}

gboolean
_fb_lower_column_combine_runs (FbLowerCtx *c, const FbNode *node, int rank, const int64_t *dims,
                               int first, int64_t count, guint partial, int64_t runs,
                               GError **error)
{
  FbKernel *k = c->k;
  const FbValue *y = node->outputs[0];
  FbDType at = node->inputs[0]->dtype;
  int64_t C = dims[rank - 1], outer = 1;
  for (int d = 0; d < first; d++)
    outer *= dims[d];
  double init;
  FbKBinary op = _fb_lower_column_op (node, &init);
  int64_t ydims[2] = { outer, C };
  FbKExpr *yc2[2], *s;
  GPtrArray *body = _fb_lower_nest (c, 2, ydims, yc2, (double) outer * runs * C);
  guint total = fb_kernel_new_acc (k, at);
  g_ptr_array_add (body, fb_ks_assign (k, total, fb_kx_const_f (k, at, init)));
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, runs), &s);
  FbKExpr *at_run = fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, yc2[0], runs), s), C), yc2[1]);
  g_ptr_array_add (l, fb_ks_assign (k, total, fb_kx_binary (k, op, fb_kx_acc (k, total),
                                                             fb_kx_load (k, partial, at_run))));
  FbKExpr *r = fb_kx_acc (k, total);
  if (node->op == FB_OP_REDUCE_MEAN || node->op == FB_OP_GLOBAL_AVERAGE_POOL)
    r = fb_kx_binary (k, FB_KB_DIV, r, fb_kx_const_f (k, at, (double) count));

  /* The output's coordinates: the outer ones, 0 for each reduced one kept, the channel. */
  FbKExpr *oc[FB_MAX_RANK], *yc[FB_MAX_RANK];
  int yr = y->shape.rank, j = 0;
  _fb_lower_unflatten (k, yc2[0], dims, first, oc);
  for (int d = 0; d < rank; d++)
    {
      FbKExpr *cd = d == rank - 1 ? yc2[1] : d < first ? oc[d] : NULL;
      if (yr == rank)
        yc[d] = cd ? cd : fb_kx_index (k, 0);
      else if (cd)
        yc[j++] = cd;
    }
  if (yr != rank && j != yr)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "unexpected output rank");
  return _fb_lower_store (c, body, y, yc, r, error);
}

gboolean
_fb_lower_column_reducible (const FbNode *node, int rank, const int64_t *dims, guint mask,
                            int64_t count)
{
  switch (node->op)
    {
    case FB_OP_REDUCE_SUM: case FB_OP_REDUCE_MEAN: case FB_OP_GLOBAL_AVERAGE_POOL:
    case FB_OP_REDUCE_MAX: case FB_OP_GLOBAL_MAX_POOL: case FB_OP_REDUCE_MIN:
      break;
    default:
      return FALSE;
    }
  return fb_dtype_is_float (node->inputs[0]->dtype) && rank > 1 && !(mask & (1u << (rank - 1))) &&
         dims[rank - 1] >= 8 && count >= 2;
}

/* A reduction whose input's innermost dimension is kept (a channels-last global pool, a sum
 * over rows): a block of that dimension is accumulated at once, in a scratch row, so every
 * load is contiguous and the loops vectorize; an accumulator per output element would stride
 * through the input a channel at a time (three times slower on MobileNetV2's last pool). */
static gboolean
lower_column_reduce (FbLowerCtx *c, const FbNode *node, int rank, const int64_t *dims,
                     guint mask, int64_t count, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *y = node->outputs[0];
  FbDType at = x->dtype;
  int last = rank - 1;
  int64_t C = dims[last], nb = (C + COLUMN_BLOCK - 1) / COLUMN_BLOCK;
  int64_t nest[FB_MAX_RANK], kept = 1, numel = 1;
  for (int d = 0; d < rank; d++)
    {
      nest[d] = (mask & (1u << d)) ? 1 : dims[d];
      numel *= dims[d];
      if (!(mask & (1u << d)))
        kept *= dims[d];
    }
  nest[last] = nb;
  FbKExpr *coords[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_nest (c, rank, nest, coords, (double) numel);
  guint partial = _fb_lower_scratch (c, "partial", at, 1, &kept);
  /* Row of the kept outer coordinates in the scratch, then the block's channels. */
  FbKExpr *row = fb_kx_index (k, 0);
  for (int d = 0; d < last; d++)
    if (!(mask & (1u << d)))
      row = fb_kx_add (k, fb_kx_mul_c (k, row, dims[d]), coords[d]);
  FbKExpr *c0 = fb_kx_mul_c (k, coords[last], COLUMN_BLOCK);
  FbKExpr *len = fb_kx_binary (k, FB_KB_MIN, fb_kx_index (k, COLUMN_BLOCK),
                               fb_kx_binary (k, FB_KB_SUB, fb_kx_index (k, C), c0));
  FbKExpr *base = fb_kx_add (k, fb_kx_mul_c (k, row, C), c0);

  double init;
  _fb_lower_column_op (node, &init);
  FbKExpr *ci;
  GPtrArray *l = _fb_lower_loop (k, body, len, &ci);
  g_ptr_array_add (l, fb_ks_store (k, partial, fb_kx_add (k, base, ci), fb_kx_const_f (k, at, init)));

  FbKExpr *rc[FB_MAX_RANK];
  memcpy (rc, coords, sizeof rc);
  GPtrArray *inner = _fb_lower_reduce_loops (k, body, rank, dims, mask, rc);
  inner = _fb_lower_loop (k, inner, len, &ci);
  rc[last] = fb_kx_add (k, c0, ci);
  if (!_fb_lower_column_accumulate (c, node, inner, rank, rc, partial, fb_kx_add (k, base, ci),
                                    error))
    return FALSE;

  l = _fb_lower_loop (k, body, len, &ci);
  FbKExpr *r = fb_kx_load (k, partial, fb_kx_add (k, base, ci));
  if (node->op == FB_OP_REDUCE_MEAN || node->op == FB_OP_GLOBAL_AVERAGE_POOL)
    r = fb_kx_binary (k, FB_KB_DIV, r, fb_kx_const_f (k, at, (double) count));
  FbKExpr *yc[FB_MAX_RANK];
  int yr = y->shape.rank, j = 0;
  for (int d = 0; d < rank; d++)
    {
      FbKExpr *cd = d == last ? fb_kx_add (k, c0, ci) : coords[d];
      if (yr == rank)
        yc[d] = (mask & (1u << d)) ? fb_kx_index (k, 0) : cd;
      else if (!(mask & (1u << d)))
        yc[j++] = cd;
    }
  if (yr != rank && j != yr)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "unexpected output rank");
  return _fb_lower_store (c, l, y, yc, r, error);
}

gboolean
_fb_lower_reduce (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *y = node->outputs[0];
  int rank;
  int64_t dims[FB_MAX_RANK];
  guint mask;
  gboolean noop;
  FbKExpr *coords[FB_MAX_RANK];

  if (!_fb_lower_dims (x, &rank, dims))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shape is not static");
  if (!reduce_axes (c, node, rank, &mask, &noop, error))
    return FALSE;
  int64_t count = 1, numel = 1;
  for (int d = 0; d < rank; d++)
    {
      numel *= dims[d];
      if (mask & (1u << d))
        count *= dims[d];
    }
  /* The column form is for a CPU thread's vector loads; on a GPU it leaves one thread per block
   * of 64 channels looping over the whole map (ResNet-50's channels-last global pool took a
   * quarter of its time so). A GPU sums runs of positions a thread each, then the runs. */
  if (!noop && !_fb_lower_for_gpu (c) && _fb_lower_column_reduce_runs_fits (node, rank, dims, mask, count))
    return _fb_lower_column_reduce_runs (c, node, rank, dims, mask, count, error);
  if (!noop && !_fb_lower_for_gpu (c) && _fb_lower_column_reducible (node, rank, dims, mask, count))
    return lower_column_reduce (c, node, rank, dims, mask, count, error);
  if (!noop && _fb_lower_for_gpu (c) && _fb_lower_column_reduce_gpu_fits (node, rank, dims, mask, count))
    return _fb_lower_column_reduce_gpu (c, node, rank, dims, mask, count, error);
  GPtrArray *body = _fb_lower_kept_nest (c, rank, dims, mask, coords, (double) numel);
  if (noop)
    {
      FbKExpr *v = _fb_lower_value_at (c, x, rank, coords, error);
      return v && _fb_lower_store (c, body, y, coords, v, error);
    }
  FbDType xt = x->dtype;
  gboolean arg = node->op == FB_OP_ARGMAX || node->op == FB_OP_ARGMIN;
  gboolean logs = node->op == FB_OP_REDUCE_LOG_SUM || node->op == FB_OP_REDUCE_LOG_SUM_EXP;
  /* The logarithmic reductions of integers are computed in double, as the interpreter does. */
  FbDType at = fb_dtype_is_float (xt) ? xt : logs ? FB_DTYPE_FLOAT64 : FB_DTYPE_INT64;
  guint acc = fb_kernel_new_acc (k, at), best = 0;
  FbKExpr *init;
  FbKBinary op = FB_KB_ADD;
  switch (node->op)
    {
    case FB_OP_REDUCE_MAX: case FB_OP_GLOBAL_MAX_POOL: case FB_OP_ARGMAX:
      op = FB_KB_MAX;
      init = fb_dtype_is_float (at) ? fb_kx_const_f (k, at, -INFINITY)
                                    : fb_kx_const_i (k, at, G_MININT64);
      break;
    case FB_OP_REDUCE_MIN: case FB_OP_ARGMIN:
      op = FB_KB_MIN;
      init = fb_dtype_is_float (at) ? fb_kx_const_f (k, at, INFINITY)
                                    : fb_kx_const_i (k, at, G_MAXINT64);
      break;
    case FB_OP_REDUCE_PROD:
      op = FB_KB_MUL;
      init = fb_kx_const_i (k, at, 1);
      break;
    default:
      init = fb_kx_const_i (k, at, 0);
      break;
    }
  FbKExpr *shift = NULL;
  if (node->op == FB_OP_REDUCE_LOG_SUM_EXP)
    {
      /* log sum exp (x - max) + max: a first pass finds the max, so exp cannot overflow. */
      guint mx = fb_kernel_new_acc (k, at);
      g_ptr_array_add (body, fb_ks_assign (k, mx, fb_kx_const_f (k, at, -INFINITY)));
      FbKExpr *mc[FB_MAX_RANK];
      memcpy (mc, coords, sizeof mc);
      GPtrArray *mi = _fb_lower_reduce_loops (k, body, rank, dims, mask, mc);
      FbKExpr *mv = _fb_lower_value_at (c, x, rank, mc, error);
      if (mv == NULL)
        return FALSE;
      g_ptr_array_add (mi, fb_ks_assign (k, mx, fb_kx_binary (k, FB_KB_MAX, fb_kx_acc (k, mx),
                                                              fb_kx_cast (k, mv, at))));
      /* An infinite (or empty) slice's max is no shift: the result is then +-inf, not NaN. */
      FbKExpr *inf = fb_kx_binary (k, FB_KB_EQ, fb_kx_unary (k, FB_KU_ABS, fb_kx_acc (k, mx)),
                                   fb_kx_const_f (k, at, INFINITY));
      shift = fb_kx_select (k, inf, fb_kx_const_f (k, at, 0.0), fb_kx_acc (k, mx));
      guint sh = fb_kernel_new_acc (k, at);
      g_ptr_array_add (body, fb_ks_assign (k, sh, shift));
      shift = fb_kx_acc (k, sh);
    }
  g_ptr_array_add (body, fb_ks_assign (k, acc, logs ? fb_kx_const_f (k, at, 0.0) : init));
  if (arg)
    {
      best = fb_kernel_new_acc (k, FB_DTYPE_INT64);
      g_ptr_array_add (body, fb_ks_assign (k, best, fb_kx_index (k, 0)));
    }
  FbKExpr *rc[FB_MAX_RANK];
  memcpy (rc, coords, sizeof rc);
  GPtrArray *inner = _fb_lower_reduce_loops (k, body, rank, dims, mask, rc);
  FbKExpr *v = _fb_lower_value_at (c, x, rank, rc, error);
  if (v == NULL)
    return FALSE;
  v = fb_kx_cast (k, v, at);
  if (node->op == FB_OP_REDUCE_L2 || node->op == FB_OP_REDUCE_SUM_SQUARE)
    v = fb_kx_binary (k, FB_KB_MUL, v, v);
  else if (node->op == FB_OP_REDUCE_L1)
    v = fb_dtype_is_signed (at) || fb_dtype_is_float (at) ? fb_kx_unary (k, FB_KU_ABS, v) : v;
  else if (node->op == FB_OP_REDUCE_LOG_SUM_EXP)
    v = fb_kx_unary (k, FB_KU_EXP, fb_kx_binary (k, FB_KB_SUB, v, shift));
  if (arg)
    {
      int axis = g_bit_nth_lsf (mask, -1);
      FbKExpr *cur = fb_kx_acc (k, acc);
      gboolean last = fb_node_attr_int (node, "select_last_index", 0);
      guint vacc = fb_kernel_new_acc (k, at);
      g_ptr_array_add (inner, fb_ks_assign (k, vacc, v));
      FbKExpr *vv = fb_kx_acc (k, vacc);
      FbKExpr *better = node->op == FB_OP_ARGMIN
        ? fb_kx_binary (k, last ? FB_KB_LE : FB_KB_LT, vv, cur)
        : fb_kx_binary (k, last ? FB_KB_GE : FB_KB_GT, vv, cur);
      g_ptr_array_add (inner, fb_ks_assign (k, best, fb_kx_select (k, better, rc[axis], fb_kx_acc (k, best))));
      g_ptr_array_add (inner, fb_ks_assign (k, acc, fb_kx_select (k, better, vv, cur)));
    }
  else
    g_ptr_array_add (inner, fb_ks_assign (k, acc, fb_kx_binary (k, op, fb_kx_acc (k, acc), v)));
  FbKExpr *r = fb_kx_acc (k, arg ? best : acc);
  if (node->op == FB_OP_REDUCE_MEAN || node->op == FB_OP_GLOBAL_AVERAGE_POOL)
    r = fb_kx_binary (k, FB_KB_DIV, r, fb_kx_const_i (k, at, count));
  else if (node->op == FB_OP_REDUCE_L2)
    r = fb_kx_unary (k, FB_KU_SQRT, fb_kx_cast (k, r, fb_dtype_is_float (at) ? at : FB_DTYPE_FLOAT64));
  else if (node->op == FB_OP_REDUCE_LOG_SUM)
    r = fb_kx_unary (k, FB_KU_LOG, r);
  else if (node->op == FB_OP_REDUCE_LOG_SUM_EXP)
    r = fb_kx_binary (k, FB_KB_ADD, fb_kx_unary (k, FB_KU_LOG, r), shift);
  /* Output coordinates: with keepdims the reduced ones are 0, without they are dropped. */
  int yr = y->shape.rank;
  FbKExpr *yc[FB_MAX_RANK];
  if (yr == rank)
    memcpy (yc, coords, sizeof (FbKExpr *) * rank);
  else
    {
      int j = 0;
      for (int d = 0; d < rank; d++)
        if (!(mask & (1u << d)))
          yc[j++] = coords[d];
      if (j != yr)
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "unexpected output rank");
    }
  return _fb_lower_store (c, body, y, yc, r, error);
}

/* An average pool's divisor at output row start hs, column start ws (padded coordinates). */
static FbKExpr *
avg_divisor (FbKernel *k, const FbNode *node, const FbConvGeom *g, FbKExpr *hs, FbKExpr *ws)
{
  FbDType t = node->inputs[0]->dtype;
  if (fb_node_attr_int (node, "count_include_pad", 0))
    return fb_kx_const_f (k, t, (double) (g->KH * g->KW));
  /* Window cells inside the unpadded input: clipped window extents. */
  FbKExpr *h0 = fb_kx_add_c (k, hs, -g->pt), *w0 = fb_kx_add_c (k, ws, -g->pl);
  FbKExpr *hc = fb_kx_binary (k, FB_KB_SUB,
                              fb_kx_binary (k, FB_KB_MIN, fb_kx_add_c (k, h0, g->KH), fb_kx_index (k, g->H)),
                              fb_kx_binary (k, FB_KB_MAX, h0, fb_kx_index (k, 0)));
  FbKExpr *wc = fb_kx_binary (k, FB_KB_SUB,
                              fb_kx_binary (k, FB_KB_MIN, fb_kx_add_c (k, w0, g->KW), fb_kx_index (k, g->W)),
                              fb_kx_binary (k, FB_KB_MAX, w0, fb_kx_index (k, 0)));
  return fb_kx_cast (k, fb_kx_binary (k, FB_KB_MUL, hc, wc), t);
}

/* coordinate e clamped into [0, extent) and whether it was inside */
static FbKExpr *
clamped (FbKernel *k, FbKExpr *e, int64_t extent, FbKExpr **inside)
{
  FbKExpr *in = fb_kx_binary (k, FB_KB_AND, fb_kx_binary (k, FB_KB_GE, e, fb_kx_index (k, 0)),
                              fb_kx_binary (k, FB_KB_LT, e, fb_kx_index (k, extent)));
  *inside = *inside ? fb_kx_binary (k, FB_KB_AND, *inside, in) : in;
  return fb_kx_binary (k, FB_KB_MIN, fb_kx_binary (k, FB_KB_MAX, e, fb_kx_index (k, 0)),
                       fb_kx_index (k, extent - 1));
}

/* A padded channels-last pool read in place (see _fb_lower_pool). */
static gboolean
pool_in_place (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g, GError **error)
{
  FbKernel *k = c->k;
  gboolean is_max = node->op == FB_OP_MAX_POOL;
  FbDType t = node->inputs[0]->dtype;
  guint xa = _fb_lower_arg (c, node->inputs[0], FB_KARG_INPUT);
  FbKExpr *c4[4], *lc[2];
  int64_t outer[2] = { g->N, g->OH };
  GPtrArray *body = _fb_lower_nest (c, 2, outer, lc, (double) g->N * g->C * g->OH * g->OW * g->KH * g->KW);
  c4[0] = lc[0];
  c4[2] = lc[1];
  body = _fb_lower_loop (k, body, fb_kx_index (k, g->OW), &c4[3]);
  body = _fb_lower_loop (k, body, fb_kx_index (k, g->C), &c4[1]);
  FbKExpr *hs = fb_kx_mul_c (k, c4[2], g->sh), *ws = fb_kx_mul_c (k, c4[3], g->sw);
  FbKExpr *base = fb_kx_add (k, fb_kx_mul_c (k, c4[0], g->H * g->W * g->C), c4[1]);
  FbKExpr *identity = fb_kx_const_f (k, t, is_max ? -INFINITY : 0.0), *r = NULL;
  for (int64_t a = 0; a < g->KH; a++)
    for (int64_t b = 0; b < g->KW; b++)
      {
        FbKExpr *inside = NULL;
        FbKExpr *h = clamped (k, fb_kx_add_c (k, hs, a * g->dh - g->pt), g->H, &inside);
        FbKExpr *w = clamped (k, fb_kx_add_c (k, ws, b * g->dw - g->pl), g->W, &inside);
        FbKExpr *xi = fb_kx_add (k, base, fb_kx_add (k, fb_kx_mul_c (k, h, g->W * g->C),
                                                     fb_kx_mul_c (k, w, g->C)));
        FbKExpr *v = fb_kx_select (k, inside, fb_kx_load (k, xa, xi), identity);
        r = r ? fb_kx_binary (k, is_max ? FB_KB_MAX : FB_KB_ADD, r, v) : v;
      }
  if (!is_max)
    r = fb_kx_binary (k, FB_KB_DIV, r, avg_divisor (k, node, g, hs, ws));
  FbKExpr *yc[4];
  _fb_lower_conv_coords (g, c4, yc);
  return _fb_lower_store (c, body, node->outputs[0], yc, r, error);
}

/* Whether the fast forms below take the pool: a 1-D or 2-D float one, and an average whose
 * divisor avg_divisor gives: no dilation (it counts a window's cells as a contiguous span),
 * and with count_include_pad no window reaching past the declared padding (ceil_mode's last
 * ones, whose cells past it do not count). The N-d form takes the others. */
static gboolean
fast_pool (const FbNode *node)
{
  int rank = node->inputs[0]->shape.rank;
  if ((rank != 3 && rank != 4) || !fb_dtype_is_float (node->inputs[0]->dtype))
    return FALSE;
  if (node->op != FB_OP_AVERAGE_POOL)
    return TRUE;
  FbWindowNd w;
  if (!_fb_lower_window_nd (node, node->inputs[0], NULL, &w, NULL))
    return TRUE;    /* the fast form's own checks say what is wrong */
  gboolean include_pad = fb_node_attr_int (node, "count_include_pad", 0) != 0;
  for (int i = 0; i < w.sp; i++)
    if (w.d[i] != 1 ||
        (include_pad && (w.out[i] - 1) * w.s[i] + w.k[i] > w.in[i] + w.pb[i] + w.pe[i]))
      return FALSE;
  return TRUE;
}

gboolean
_fb_lower_pool (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  if (!fast_pool (node))
    return _fb_lower_pool_nd (c, node, error);
  FbConvGeom g;
  if (!_fb_lower_conv_geom (node, &g, error))
    return FALSE;
  gboolean is_max = node->op == FB_OP_MAX_POOL;
  gboolean padded = g.pt || g.pl || g.pb || g.pr;
  gboolean with_indices = is_max && node->n_outputs > 1 && node->outputs[1] != NULL;
  FbDType t = node->inputs[0]->dtype;
  /* Channels-last, a small window reads the input in place, each cell that falls in the
   * padding masked to the pool's identity: whether a cell is inside depends on the pixel, not
   * the channel, so the channel loop stays vectorized, and the copy of the whole map into a
   * padded buffer (a full read and write of it, a phase and a barrier of its own: ResNet's
   * 112x112x64 stem pool, an inception module's 3x3 average pools) is gone. */
  if (padded && g.nhwc && !with_indices && g.KH * g.KW <= 64)
    return pool_in_place (c, node, &g, error);
  guint xa = padded ? _fb_lower_pad_input (c, node->inputs[0], &g, is_max ? -INFINITY : 0.0, error)
                    : _fb_lower_arg (c, node->inputs[0], FB_KARG_INPUT);
  FbKExpr *c4[4], *lc[2];
  GPtrArray *body;
  double work = (double) g.N * g.C * g.OH * g.OW * g.KH * g.KW;
  if (g.nhwc)
    {
      int64_t outer[2] = { g.N, g.OH };
      body = _fb_lower_nest (c, 2, outer, lc, work);
      c4[0] = lc[0];
      c4[2] = lc[1];
      body = _fb_lower_loop (k, body, fb_kx_index (k, g.OW), &c4[3]);
      body = _fb_lower_loop (k, body, fb_kx_index (k, g.C), &c4[1]);
    }
  else
    {
      int64_t outer[4] = { g.N, g.C, g.OH, g.OW };
      body = _fb_lower_nest (c, 4, outer, c4, work);
    }
  FbKExpr *xbase = fb_kx_add (k, fb_kx_mul_c (k, c4[0], _fb_lower_conv_xindex_stride (&g, 0)),
                              fb_kx_mul_c (k, c4[1], _fb_lower_conv_xindex_stride (&g, 1)));
  FbKExpr *hs = fb_kx_mul_c (k, c4[2], g.sh), *ws = fb_kx_mul_c (k, c4[3], g.sw);
  FbKExpr *r = NULL;
  FbKBinary op = is_max ? FB_KB_MAX : FB_KB_ADD;
  if (with_indices)
    {
      /* Indices: the flat NCHW position (storage_order 1: with h and w swapped) of the first
       * maximum, in the unpadded input; padding cells hold -inf and never win. */
      guint acc = fb_kernel_new_acc (k, t), at = fb_kernel_new_acc (k, FB_DTYPE_INT64);
      g_ptr_array_add (body, fb_ks_assign (k, acc, fb_kx_const_f (k, t, -INFINITY)));
      g_ptr_array_add (body, fb_ks_assign (k, at, fb_kx_index (k, 0)));
      FbKExpr *a, *b;
      GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, g.KH), &a);
      l = _fb_lower_loop (k, l, fb_kx_index (k, g.KW), &b);
      FbKExpr *hh = fb_kx_add (k, hs, fb_kx_mul_c (k, a, g.dh));
      FbKExpr *ww = fb_kx_add (k, ws, fb_kx_mul_c (k, b, g.dw));
      FbKExpr *xi = fb_kx_add (k, xbase,
                               fb_kx_add (k, fb_kx_mul_c (k, hh, _fb_lower_conv_xindex_stride (&g, 2)),
                                          fb_kx_mul_c (k, ww, _fb_lower_conv_xindex_stride (&g, 3))));
      FbKExpr *v = fb_kx_load (k, xa, xi);
      FbKExpr *h = fb_kx_add_c (k, hh, -g.pt), *w = fb_kx_add_c (k, ww, -g.pl);
      FbKExpr *plane = fb_kx_add (k, fb_kx_mul_c (k, c4[0], g.C), c4[1]);
      FbKExpr *pos = fb_node_attr_int (node, "storage_order", 0)
        ? fb_kx_add (k, fb_kx_mul_c (k, w, g.H), h)
        : fb_kx_add (k, fb_kx_mul_c (k, h, g.W), w);
      pos = fb_kx_add (k, fb_kx_mul_c (k, plane, g.H * g.W), pos);
      FbKExpr *better = fb_kx_binary (k, FB_KB_GT, v, fb_kx_acc (k, acc));
      g_ptr_array_add (l, fb_ks_assign (k, at, fb_kx_select (k, better, pos, fb_kx_acc (k, at))));
      g_ptr_array_add (l, fb_ks_assign (k, acc, fb_kx_select (k, better, v, fb_kx_acc (k, acc))));
      FbKExpr *yc[4];
      _fb_lower_conv_coords (&g, c4, yc);
      if (!_fb_lower_store (c, body, node->outputs[1], yc, fb_kx_acc (k, at), error))
        return FALSE;
      r = fb_kx_acc (k, acc);
    }
  else if (g.KH * g.KW <= 64)
    for (int64_t a = 0; a < g.KH; a++)
      for (int64_t b = 0; b < g.KW; b++)
        {
          FbKExpr *xi = fb_kx_add (k, xbase,
                                   fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add_c (k, hs, a * g.dh), _fb_lower_conv_xindex_stride (&g, 2)),
                                              fb_kx_mul_c (k, fb_kx_add_c (k, ws, b * g.dw), _fb_lower_conv_xindex_stride (&g, 3))));
          FbKExpr *v = fb_kx_load (k, xa, xi);
          r = r ? fb_kx_binary (k, op, r, v) : v;
        }
  else
    {
      guint acc = fb_kernel_new_acc (k, t);
      g_ptr_array_add (body, fb_ks_assign (k, acc, fb_kx_const_f (k, t, is_max ? -INFINITY : 0.0)));
      FbKExpr *a, *b;
      GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, g.KH), &a);
      l = _fb_lower_loop (k, l, fb_kx_index (k, g.KW), &b);
      FbKExpr *xi = fb_kx_add (k, xbase,
                               fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, hs, fb_kx_mul_c (k, a, g.dh)), _fb_lower_conv_xindex_stride (&g, 2)),
                                          fb_kx_mul_c (k, fb_kx_add (k, ws, fb_kx_mul_c (k, b, g.dw)), _fb_lower_conv_xindex_stride (&g, 3))));
      g_ptr_array_add (l, fb_ks_assign (k, acc, fb_kx_binary (k, op, fb_kx_acc (k, acc), fb_kx_load (k, xa, xi))));
      r = fb_kx_acc (k, acc);
    }
  if (!is_max)
    r = fb_kx_binary (k, FB_KB_DIV, r, avg_divisor (k, node, &g, hs, ws));
  FbKExpr *yc[4];
  _fb_lower_conv_coords (&g, c4, yc);
  return _fb_lower_store (c, body, node->outputs[0], yc, r, error);
}
