/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ScatterND: the data copied to the output in one phase, then the updates written in a second
 * one. The second phase runs in parallel over the elements of one update slice and in order
 * over the index tuples, so that tuples naming the same slice combine (reduction) or overwrite
 * each other (none) in the order ONNX gives them.
 *
 * MaxUnpool the same way: zeros, then every value stored at its index, in order. */
#include "fb-lower-private.h"

#include <string.h>

gboolean
_fb_lower_scatter_nd (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *data = node->inputs[0], *iv = node->inputs[1], *uv = node->inputs[2];
  const FbValue *out = node->outputs[0];
  int r, q, ur;
  int64_t dd[FB_MAX_RANK], di[FB_MAX_RANK], du[FB_MAX_RANK];
  if (!_fb_lower_dims (data, &r, dd) || !_fb_lower_dims (iv, &q, di) ||
      !_fb_lower_dims (uv, &ur, du))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shapes are not static");
  if (q < 1 || di[q - 1] > r)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "indices do not fit the data");
  const char *red = fb_node_attr_string (node, "reduction", "none");
  FbKBinary op = FB_KB_COUNT;
  if (g_strcmp0 (red, "add") == 0)
    op = FB_KB_ADD;
  else if (g_strcmp0 (red, "mul") == 0)
    op = FB_KB_MUL;
  else if (g_strcmp0 (red, "max") == 0)
    op = FB_KB_MAX;
  else if (g_strcmp0 (red, "min") == 0)
    op = FB_KB_MIN;
  else if (g_strcmp0 (red, "none") != 0)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "reduction '%s'", red);

  int64_t numel = 1, tuples = 1, slice = 1, strides[FB_MAX_RANK];
  for (int d = 0; d < r; d++)
    numel *= dd[d];
  for (int d = 0; d < q - 1; d++)
    tuples *= di[d];
  int64_t ql = di[q - 1];
  for (int d = (int) ql; d < r; d++)
    slice *= dd[d];
  _fb_lower_strides (r, dd, strides);

  FbKExpr *coords[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_nest (c, r, dd, coords, (double) numel);
  FbKExpr *x = _fb_lower_value_at (c, data, r, coords, error);
  if (x == NULL)
    return FALSE;
  guint oa = _fb_lower_arg (c, out, FB_KARG_OUTPUT);
  g_ptr_array_add (body, fb_ks_store (k, oa, _fb_lower_index (k, r, dd, coords),
                                      fb_kx_cast (k, x, out->dtype)));

  FbKExpr *e, *n;
  body = _fb_lower_nest (c, 1, &slice, &e, (double) tuples * slice);
  body = _fb_lower_loop (k, body, fb_kx_index (k, tuples), &n);
  guint ia = _fb_lower_arg (c, iv, FB_KARG_INPUT), ua = _fb_lower_arg (c, uv, FB_KARG_INPUT);
  FbKExpr *at = e;
  for (int64_t j = 0; j < ql; j++)
    {
      FbKExpr *i = fb_kx_cast (k, fb_kx_load (k, ia, fb_kx_add_c (k, fb_kx_mul_c (k, n, ql), j)),
                               FB_DTYPE_INT64);
      /* Negative indices count from the end (out-of-range ones are clamped, not trapped). */
      i = fb_kx_select (k, fb_kx_binary (k, FB_KB_LT, i, fb_kx_index (k, 0)),
                        fb_kx_add_c (k, i, dd[j]), i);
      i = fb_kx_binary (k, FB_KB_MIN, fb_kx_binary (k, FB_KB_MAX, i, fb_kx_index (k, 0)),
                        fb_kx_index (k, dd[j] - 1));
      at = fb_kx_add (k, at, fb_kx_mul_c (k, i, strides[j]));
    }
  FbKExpr *u = fb_kx_cast (k, fb_kx_load (k, ua, fb_kx_add (k, fb_kx_mul_c (k, n, slice), e)),
                           out->dtype);
  if (op != FB_KB_COUNT)
    u = fb_kx_binary (k, op, fb_kx_load (k, oa, at), u);
  g_ptr_array_add (body, fb_ks_store (k, oa, at, u));
  return TRUE;
}

/* MaxUnpool's indices number the elements of the whole output and need not stay in their
 * plane, so the stores run in one sequential loop: the later of two values for a place wins, as
 * in the interpreter. An index outside the output is the interpreter's error, and the lowering's
 * for constant indices; one the run gives stores nothing (the element at the clamped place is
 * written back unchanged). */
gboolean
_fb_lower_max_unpool (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *ind = node->inputs[1], *y = node->outputs[0];
  int xr, ir, yr;
  int64_t xd[FB_MAX_RANK], id[FB_MAX_RANK], yd[FB_MAX_RANK];
  if (!_fb_lower_dims (x, &xr, xd) || !_fb_lower_dims (ind, &ir, id) ||
      !_fb_lower_dims (y, &yr, yd) || xr != ir || memcmp (xd, id, sizeof (int64_t) * xr) != 0)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "needs X and I of one static shape");
  int64_t nx = 1, ny = 1, one = 1;
  for (int d = 0; d < xr; d++)
    nx *= xd[d];
  for (int d = 0; d < yr; d++)
    ny *= yd[d];
  for (int64_t i = 0; ind->constant && i < ind->constant->numel; i++)
    if (fb_tensor_get_i64 (ind->constant, i) < 0 || fb_tensor_get_i64 (ind->constant, i) >= ny)
      return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "index %" G_GINT64_FORMAT
                             " (element %" G_GINT64_FORMAT " of I) is outside the %" G_GINT64_FORMAT
                             " elements of the output", fb_tensor_get_i64 (ind->constant, i), i, ny);
  guint ya = _fb_lower_out_arg (c, y);
  FbKExpr *e, *i;
  GPtrArray *body = _fb_lower_nest (c, 1, &ny, &e, (double) ny);
  g_ptr_array_add (body, fb_ks_store (k, ya, e, fb_kx_const_f (k, y->dtype, 0.0)));
  if (nx == 0 || ny == 0)
    return TRUE;
  guint xa = _fb_lower_arg (c, x, FB_KARG_INPUT), ia = _fb_lower_arg (c, ind, FB_KARG_INPUT);
  body = _fb_lower_nest (c, 1, &one, &e, (double) nx);
  body = _fb_lower_loop (k, body, fb_kx_index (k, nx), &i);
  FbKExpr *at = fb_kx_cast (k, fb_kx_load (k, ia, i), FB_DTYPE_INT64);
  FbKExpr *inside = fb_kx_binary (k, FB_KB_AND, fb_kx_binary (k, FB_KB_GE, at, fb_kx_index (k, 0)),
                                  fb_kx_binary (k, FB_KB_LT, at, fb_kx_index (k, ny)));
  at = fb_kx_binary (k, FB_KB_MIN, fb_kx_binary (k, FB_KB_MAX, at, fb_kx_index (k, 0)),
                     fb_kx_index (k, ny - 1));
  FbKExpr *v = fb_kx_select (k, inside, fb_kx_cast (k, fb_kx_load (k, xa, i), y->dtype),
                             fb_kx_load (k, ya, at));
  g_ptr_array_add (body, fb_ks_store (k, ya, at, v));
  return TRUE;
}
