/* SPDX-License-Identifier: GPL-3.0-or-later */
/* MatMul of integer (and float64) operands, which the BLAS path (sgemm, float32 only) does not
 * take: a loop nest over the output with the dot product as an inner loop, accumulating in the
 * output's own type (so int32 products wrap as ONNX Runtime's do). Batch dimensions broadcast
 * through _fb_lower_value_at's right alignment; 1-D operands follow numpy's rules. */
#include "fb-lower-private.h"

gboolean
_fb_lower_matmul_loops (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *a = node->inputs[0], *b = node->inputs[1], *y = node->outputs[0];
  int ra, rb, ry;
  int64_t da[FB_MAX_RANK], db[FB_MAX_RANK], dy[FB_MAX_RANK];
  if (!_fb_lower_dims (a, &ra, da) || !_fb_lower_dims (b, &rb, db) || !_fb_lower_dims (y, &ry, dy))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shapes are not static");
  gboolean a_vec = ra == 1, b_vec = rb == 1;
  int nb = ry - (a_vec ? 0 : 1) - (b_vec ? 0 : 1);
  int64_t K = da[ra - 1], numel = 1;
  if (nb < 0 || nb + 2 > FB_MAX_RANK || K != (b_vec ? db[0] : db[rb - 2]))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "operands do not fit");
  for (int d = 0; d < ry; d++)
    numel *= dy[d];
  FbKExpr *oc[FB_MAX_RANK], *ac[FB_MAX_RANK], *bc[FB_MAX_RANK], *kv;
  GPtrArray *body = _fb_lower_nest (c, ry, dy, oc, 2.0 * numel * K);
  FbDType t = y->dtype;
  guint acc = fb_kernel_new_acc (k, t);
  g_ptr_array_add (body, fb_ks_assign (k, acc, fb_dtype_is_float (t) ? fb_kx_const_f (k, t, 0.0)
                                                                    : fb_kx_const_i (k, t, 0)));
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, K), &kv);
  for (int d = 0; d < nb; d++)
    ac[d] = bc[d] = oc[d];
  FbKExpr *x, *w;
  if (a_vec)
    x = _fb_lower_value_at (c, a, 1, &kv, error);
  else
    {
      ac[nb] = oc[nb];
      ac[nb + 1] = kv;
      x = _fb_lower_value_at (c, a, nb + 2, ac, error);
    }
  if (x == NULL)
    return FALSE;
  if (b_vec)
    w = _fb_lower_value_at (c, b, 1, &kv, error);
  else
    {
      bc[nb] = kv;
      bc[nb + 1] = oc[ry - 1];
      w = _fb_lower_value_at (c, b, nb + 2, bc, error);
    }
  if (w == NULL)
    return FALSE;
  FbKExpr *p = fb_kx_binary (k, FB_KB_MUL, fb_kx_cast (k, x, t), fb_kx_cast (k, w, t));
  g_ptr_array_add (l, fb_ks_assign (k, acc, fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, acc), p)));
  return _fb_lower_store (c, body, y, oc, fb_kx_acc (k, acc), error);
}
