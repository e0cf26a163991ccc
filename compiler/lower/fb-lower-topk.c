/* SPDX-License-Identifier: GPL-3.0-or-later */
/* TopK as generated loops, without a sort: every element counts the elements of its row that
 * come before it in the wanted order (greater, or smaller for largest=0; equal ones by lower
 * index, as ONNX Runtime orders them). That count is its rank, a permutation of the row, so
 * the first phase stores each element and its index at its rank in scratch rows, and the
 * second copies the first K of each row. Quadratic in the row's length, which suits the short
 * rows TopK sees in models (classes, candidates); every row is independent and parallel. */
#include "fb-lower-private.h"

#include <string.h>

gboolean
_fb_lower_topk (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0];
  int rank, axis;
  int64_t dims[FB_MAX_RANK];
  if (!_fb_lower_dims (x, &rank, dims))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shape is not static");
  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", -1), rank, &axis))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "bad axis");
  gboolean largest = fb_node_attr_int (node, "largest", 1) != 0;
  int64_t n = dims[axis], numel = 1;
  for (int d = 0; d < rank; d++)
    numel *= dims[d];
  FbDType t = x->dtype;
  guint sv = _fb_lower_scratch (c, "sorted", t, rank, dims);
  guint si = _fb_lower_scratch (c, "order", FB_DTYPE_INT64, rank, dims);

  FbKExpr *coords[FB_MAX_RANK], *jc[FB_MAX_RANK], *j;
  GPtrArray *body = _fb_lower_nest (c, rank, dims, coords, (double) numel * n * 3);
  FbKExpr *i = coords[axis];
  FbKExpr *xi = _fb_lower_value_at (c, x, rank, coords, error);
  if (xi == NULL)
    return FALSE;
  guint xv = fb_kernel_new_acc (k, t), cnt = fb_kernel_new_acc (k, FB_DTYPE_INT64);
  g_ptr_array_add (body, fb_ks_assign (k, xv, xi));
  g_ptr_array_add (body, fb_ks_assign (k, cnt, fb_kx_index (k, 0)));
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, n), &j);
  memcpy (jc, coords, sizeof jc);
  jc[axis] = j;
  FbKExpr *xj = _fb_lower_value_at (c, x, rank, jc, error);
  if (xj == NULL)
    return FALSE;
  FbKExpr *me = fb_kx_acc (k, xv);
  FbKExpr *beats = fb_kx_binary (k, FB_KB_OR,
                                 fb_kx_binary (k, largest ? FB_KB_GT : FB_KB_LT, xj, me),
                                 fb_kx_binary (k, FB_KB_AND, fb_kx_binary (k, FB_KB_EQ, xj, me),
                                               fb_kx_binary (k, FB_KB_LT, j, i)));
  g_ptr_array_add (l, fb_ks_assign (k, cnt, fb_kx_add (k, fb_kx_acc (k, cnt),
                                                       fb_kx_select (k, beats, fb_kx_index (k, 1),
                                                                     fb_kx_index (k, 0)))));
  memcpy (jc, coords, sizeof jc);
  jc[axis] = fb_kx_acc (k, cnt);
  /* The axis may have extent 1 (then every rank is 0 and _fb_lower_index skips it). */
  FbKExpr *at = _fb_lower_index (k, rank, dims, jc);
  g_ptr_array_add (body, fb_ks_store (k, sv, at, me));
  g_ptr_array_add (body, fb_ks_store (k, si, at, i));

  const FbValue *yv = node->outputs[0], *yi = node->n_outputs > 1 ? node->outputs[1] : NULL;
  int yr;
  int64_t yd[FB_MAX_RANK];
  if (!_fb_lower_dims (yv ? yv : yi, &yr, yd) || yr != rank)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "output shape is not static");
  int64_t ynumel = 1;
  for (int d = 0; d < rank; d++)
    ynumel *= yd[d];
  FbKExpr *oc[FB_MAX_RANK];
  body = _fb_lower_nest (c, rank, yd, oc, (double) ynumel);
  at = _fb_lower_index (k, rank, dims, oc);
  if (yv && !_fb_lower_store (c, body, yv, oc, fb_kx_load (k, sv, at), error))
    return FALSE;
  if (yi && !_fb_lower_store (c, body, yi, oc, fb_kx_load (k, si, at), error))
    return FALSE;
  return TRUE;
}
