/* SPDX-License-Identifier: GPL-3.0-or-later */
/* MaxPool and AveragePool over any number of spatial axes, in either layout and on every
 * element type MaxPool takes (integers too): what the fast 1-D and 2-D float pools of
 * fb-lower-reduce.c do not take. One output element per iteration of a nest over the output;
 * a loop per spatial axis runs over the window's taps. A tap outside the input reads a clamped
 * in-range element that a select replaces by the pool's identity, so no padded copy is made.
 *
 * The reference interpreter's rules, exactly: a max takes the first largest tap (its index
 * numbers the channels-first input, row-major, or column-major over the spatial axes under
 * storage_order 1); an average divides by the taps inside the input, or with
 * count_include_pad by the taps inside the declared padding (never those past it that
 * ceil_mode's last windows read). */
#include "fb-lower-conv.h"

#include <math.h>

static FbKExpr *
lowest (FbKernel *k, FbDType t)
{
  if (fb_dtype_is_float (t))
    return fb_kx_const_f (k, t, -INFINITY);
  switch (t)
    {
    case FB_DTYPE_INT8:  return fb_kx_const_i (k, t, G_MININT8);
    case FB_DTYPE_INT16: return fb_kx_const_i (k, t, G_MININT16);
    case FB_DTYPE_INT32: return fb_kx_const_i (k, t, G_MININT32);
    case FB_DTYPE_INT64: return fb_kx_const_i (k, t, G_MININT64);
    default:             return fb_kx_const_i (k, t, 0);      /* unsigned */
    }
}

static FbKExpr *
both (FbKernel *k, FbKExpr *a, FbKExpr *b)
{
  return a ? fb_kx_binary (k, FB_KB_AND, a, b) : b;
}

static FbKExpr *
count_if (FbKernel *k, guint acc, FbKExpr *cond)
{
  return fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, acc),
                       fb_kx_select (k, cond, fb_kx_index (k, 1), fb_kx_index (k, 0)));
}

gboolean
_fb_lower_pool_nd (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *y = node->outputs[0];
  gboolean is_max = node->op == FB_OP_MAX_POOL;
  const FbValue *indices = is_max && node->n_outputs > 1 ? node->outputs[1] : NULL;
  FbDType t = x->dtype;
  FbWindowNd g;
  if (!_fb_lower_window_nd (node, x, NULL, &g, error))
    return FALSE;
  if (t == FB_DTYPE_BOOL || (!is_max && !fb_dtype_is_float (t)))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "%s does not take element type %s", fb_op_name (node->op),
                           fb_dtype_name (t));
  int rank = g.sp + 2;
  int64_t ydims[FB_MAX_RANK], numel = 1, taps = 1, plane = 1;
  int ry;
  _fb_lower_dims (y, &ry, ydims);
  for (int d = 0; d < rank; d++)
    numel *= ydims[d];
  for (int i = 0; i < g.sp; i++)
    {
      taps *= g.k[i];
      plane *= g.in[i];
    }

  FbKExpr *yc[FB_MAX_RANK], *oc[FB_MAX_RANK], *xc[FB_MAX_RANK], *xp[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_nest (c, rank, ydims, yc, (double) numel * taps * (indices ? 3 : 2));
  _fb_lower_window_to_cf (&g, yc, oc);
  /* Sums of float16 in float32, as everywhere else in the generated code. */
  FbDType at = t == FB_DTYPE_FLOAT16 ? FB_DTYPE_FLOAT32 : t;
  FbKExpr *identity = is_max ? lowest (k, at) : fb_kx_const_f (k, at, 0.0);
  gboolean include_pad = fb_node_attr_int (node, "count_include_pad", 0) != 0;
  guint acc = fb_kernel_new_acc (k, at);
  g_ptr_array_add (body, fb_ks_assign (k, acc, identity));
  guint count = 0, best = 0, prev = 0;
  if (!is_max)
    {
      count = fb_kernel_new_acc (k, FB_DTYPE_INT64);
      g_ptr_array_add (body, fb_ks_assign (k, count, fb_kx_index (k, 0)));
    }
  if (indices)
    {
      /* best: the position of the maximum so far, -1 before the first tap inside. */
      best = fb_kernel_new_acc (k, FB_DTYPE_INT64);
      prev = fb_kernel_new_acc (k, FB_DTYPE_INT64);
      g_ptr_array_add (body, fb_ks_assign (k, best, fb_kx_index (k, -1)));
    }

  GPtrArray *l = body;
  FbKExpr *tc[FB_MAX_RANK];
  for (int i = 0; i < g.sp; i++)
    l = _fb_lower_loop (k, l, fb_kx_index (k, g.k[i]), &tc[i]);
  FbKExpr *inside = NULL, *in_pads = NULL, *pos = fb_kx_index (k, 0);
  gboolean col_major = fb_node_attr_int (node, "storage_order", 0) != 0;
  int64_t stride = 1;
  xc[0] = oc[0];
  xc[1] = oc[1];
  for (int i = 0; i < g.sp; i++)
    {
      FbKExpr *p = fb_kx_add (k, fb_kx_add_c (k, fb_kx_mul_c (k, oc[2 + i], g.s[i]), -g.pb[i]),
                              fb_kx_mul_c (k, tc[i], g.d[i]));
      inside = both (k, inside, fb_kx_binary (k, FB_KB_AND,
                                             fb_kx_binary (k, FB_KB_GE, p, fb_kx_index (k, 0)),
                                             fb_kx_binary (k, FB_KB_LT, p, fb_kx_index (k, g.in[i]))));
      in_pads = both (k, in_pads, fb_kx_binary (k, FB_KB_LT, p, fb_kx_index (k, g.in[i] + g.pe[i])));
      xc[2 + i] = fb_kx_binary (k, FB_KB_MIN, fb_kx_binary (k, FB_KB_MAX, p, fb_kx_index (k, 0)),
                                fb_kx_index (k, g.in[i] - 1));
    }
  /* The tap's position in its plane, for the indices: row-major, or column-major. */
  for (int j = 0; j < g.sp; j++)
    {
      int i = col_major ? j : g.sp - 1 - j;
      pos = fb_kx_add (k, pos, fb_kx_mul_c (k, xc[2 + i], stride));
      stride *= g.in[i];
    }
  _fb_lower_window_to_phys (&g, xc, xp);
  FbKExpr *v = _fb_lower_value_at (c, x, rank, xp, error);
  if (v == NULL)
    return FALSE;
  v = fb_kx_cast (k, v, at);

  if (indices)
    {
      /* Both updates test the state before this tap, kept in prev and the unchanged acc. */
      g_ptr_array_add (l, fb_ks_assign (k, prev, fb_kx_acc (k, best)));
      FbKExpr *first = fb_kx_binary (k, FB_KB_LT, fb_kx_acc (k, prev), fb_kx_index (k, 0));
      FbKExpr *better = fb_kx_binary (k, FB_KB_AND, inside,
                                      fb_kx_binary (k, FB_KB_OR, first,
                                                    fb_kx_binary (k, FB_KB_GT, v, fb_kx_acc (k, acc))));
      g_ptr_array_add (l, fb_ks_assign (k, best, fb_kx_select (k, better, pos, fb_kx_acc (k, best))));
      g_ptr_array_add (l, fb_ks_assign (k, acc, fb_kx_select (k, better, v, fb_kx_acc (k, acc))));
    }
  else
    {
      FbKExpr *tap = fb_kx_select (k, inside, v, identity);
      g_ptr_array_add (l, fb_ks_assign (k, acc, fb_kx_binary (k, is_max ? FB_KB_MAX : FB_KB_ADD,
                                                              fb_kx_acc (k, acc), tap)));
      if (!is_max)
        g_ptr_array_add (l, fb_ks_assign (k, count, count_if (k, count, include_pad ? in_pads : inside)));
    }

  FbKExpr *r = fb_kx_acc (k, acc);
  if (!is_max)
    r = fb_kx_binary (k, FB_KB_DIV, r, fb_kx_cast (k, fb_kx_acc (k, count), at));
  if (!_fb_lower_store (c, body, y, yc, r, error))
    return FALSE;
  if (indices == NULL)
    return TRUE;
  FbKExpr *nc = fb_kx_add (k, fb_kx_mul_c (k, oc[0], g.C), oc[1]);
  FbKExpr *flat = fb_kx_add (k, fb_kx_mul_c (k, nc, plane),
                             fb_kx_binary (k, FB_KB_MAX, fb_kx_acc (k, best), fb_kx_index (k, 0)));
  return _fb_lower_store (c, body, indices, yc, flat, error);
}
