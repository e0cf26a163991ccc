/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Convolutions the im2col path (fb-lower-conv.c, 1-D and 2-D) does not take: ConvTranspose of
 * any spatial rank (channels-last 2-D ones where oneDNN has no optimized deconvolution for
 * them) and Conv over three spatial dimensions, as direct loop nests. Each output element sums
 * over the input channels of its group and the kernel's cells; a cell that falls in the
 * padding (or, for ConvTranspose, between the strided input positions) reads a clamped
 * in-range element and is masked to zero by a select. */
#include "fb-lower-private.h"

#include <string.h>

void
_fb_lower_deconv_begin_pads (const FbNode *node, int sp, const int64_t *in, const int64_t *out,
                             const int64_t *kernel, int64_t *begin)
{
  guint ns = 0, nd = 0, np = 0, nosh = 0, nop = 0;
  const int64_t *st = fb_node_attr_ints (node, "strides", &ns);
  const int64_t *dl = fb_node_attr_ints (node, "dilations", &nd);
  const int64_t *pd = fb_node_attr_ints (node, "pads", &np);
  const int64_t *osh = fb_node_attr_ints (node, "output_shape", &nosh);
  const int64_t *opad = fb_node_attr_ints (node, "output_padding", &nop);
  const char *auto_pad = fb_node_attr_string (node, "auto_pad", "NOTSET");
  for (int i = 0; i < sp; i++)
    {
      int64_t s = ns == (guint) sp ? st[i] : 1, d = nd == (guint) sp ? dl[i] : 1;
      begin[i] = np == 2u * sp ? pd[i] : 0;
      /* Begin paddings implied by a wanted size, the odd unit placed as ONNX Runtime does. */
      if (osh != NULL || g_str_has_prefix (auto_pad, "SAME"))
        {
          int64_t total = s * (in[i] - 1) + (nop == (guint) sp ? opad[i] : 0) +
                          (kernel[i] - 1) * d + 1 - out[i];
          if (total >= 0)
            begin[i] = g_str_equal (auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
        }
      if (g_str_equal (auto_pad, "VALID"))
        begin[i] = 0;
    }
}

gboolean
_fb_lower_conv_direct (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *w = node->inputs[1], *y = node->outputs[0];
  const FbValue *bias = fb_node_input (node, 2);
  gboolean transpose = node->op == FB_OP_CONV_TRANSPOSE;
  int rx, rw, ry;
  int64_t dx[FB_MAX_RANK], dw[FB_MAX_RANK], dy[FB_MAX_RANK];
  if (!_fb_lower_dims (x, &rx, dx) || !_fb_lower_dims (w, &rw, dw) || !_fb_lower_dims (y, &ry, dy))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shapes are not static");
  int sp = rx - 2;
  if (sp < 1 || sp > 3 || rw != rx || ry != rx)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "needs 1 to 3 spatial dimensions");
  /* Channels-last: the loops below run on channels-first coordinates, mapped on access. */
  gboolean nhwc = _fb_lower_is_nhwc (node);
  int64_t yphys[FB_MAX_RANK];
  memcpy (yphys, dy, sizeof yphys);
  if (nhwc)
    {
      int64_t cx = dx[rx - 1], cy = dy[ry - 1];
      memmove (&dx[2], &dx[1], sp * sizeof dx[0]);
      memmove (&dy[2], &dy[1], sp * sizeof dy[0]);
      dx[1] = cx;
      dy[1] = cy;
    }
  int64_t G = fb_node_attr_int (node, "group", 1);
  int64_t C = dx[1], Co = dy[1];
  if (G < 1 || C % G || Co % G)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "bad group count");
  int64_t Cg = C / G, Cog = Co / G;
  guint ns = 0, nd = 0, np = 0;
  const int64_t *st = fb_node_attr_ints (node, "strides", &ns);
  const int64_t *dl = fb_node_attr_ints (node, "dilations", &nd);
  const int64_t *pd = fb_node_attr_ints (node, "pads", &np);
  const char *auto_pad = fb_node_attr_string (node, "auto_pad", "NOTSET");
  int64_t s[3], d[3], pb[3], kk[3];
  for (int i = 0; i < sp; i++)
    {
      s[i] = ns == (guint) sp ? st[i] : 1;
      d[i] = nd == (guint) sp ? dl[i] : 1;
      kk[i] = dw[2 + i];
      pb[i] = np == 2u * sp ? pd[i] : 0;
      int64_t span = (kk[i] - 1) * d[i] + 1;
      if (!transpose && g_str_has_prefix (auto_pad, "SAME"))
        {
          int64_t total = MAX (0, (dy[2 + i] - 1) * s[i] + span - dx[2 + i]);
          pb[i] = g_str_equal (auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
        }
      if (g_str_equal (auto_pad, "VALID"))
        pb[i] = 0;
    }
  if (transpose)
    _fb_lower_deconv_begin_pads (node, sp, &dx[2], &dy[2], kk, pb);

  int64_t numel = 1, cells = Cg;
  for (int i = 0; i < ry; i++)
    numel *= dy[i];
  for (int i = 0; i < sp; i++)
    cells *= kk[i];
  FbKExpr *oc[FB_MAX_RANK], *yc[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_nest (c, ry, yphys, yc, 2.0 * numel * cells);
  memcpy (oc, yc, sizeof oc);
  if (nhwc)
    {
      oc[1] = yc[ry - 1];
      for (int i = 0; i < sp; i++)
        oc[2 + i] = yc[1 + i];
    }
  FbDType t = y->dtype;
  guint acc = fb_kernel_new_acc (k, t);
  FbKExpr *init = fb_kx_const_f (k, t, 0.0);
  if (bias)
    {
      init = _fb_lower_value_at (c, bias, 1, &oc[1], error);
      if (init == NULL)
        return FALSE;
    }
  g_ptr_array_add (body, fb_ks_assign (k, acc, init));
  FbKExpr *grp = fb_kx_binary (k, FB_KB_DIV, oc[1], fb_kx_index (k, Cog));
  FbKExpr *col = fb_kx_binary (k, FB_KB_MOD, oc[1], fb_kx_index (k, Cog));
  FbKExpr *ci, *kc[3];
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, Cg), &ci);
  for (int i = 0; i < sp; i++)
    l = _fb_lower_loop (k, l, fb_kx_index (k, kk[i]), &kc[i]);
  FbKExpr *xc[FB_MAX_RANK], *wc[FB_MAX_RANK], *ok = NULL;
  xc[0] = oc[0];
  xc[1] = fb_kx_add (k, fb_kx_mul_c (k, grp, Cg), ci);
  for (int i = 0; i < sp; i++)
    {
      FbKExpr *pos, *valid;
      int64_t in = dx[2 + i];
      if (transpose)
        {
          FbKExpr *tt = fb_kx_binary (k, FB_KB_SUB, fb_kx_add_c (k, oc[2 + i], pb[i]),
                                      fb_kx_mul_c (k, kc[i], d[i]));
          FbKExpr *q = fb_kx_binary (k, FB_KB_DIV, tt, fb_kx_index (k, s[i]));
          valid = fb_kx_binary (k, FB_KB_AND, fb_kx_binary (k, FB_KB_GE, tt, fb_kx_index (k, 0)),
                                fb_kx_binary (k, FB_KB_LT, q, fb_kx_index (k, in)));
          if (s[i] > 1)
            valid = fb_kx_binary (k, FB_KB_AND, valid,
                                  fb_kx_binary (k, FB_KB_EQ,
                                                fb_kx_binary (k, FB_KB_MOD, tt, fb_kx_index (k, s[i])),
                                                fb_kx_index (k, 0)));
          pos = q;
        }
      else
        {
          pos = fb_kx_add (k, fb_kx_add_c (k, fb_kx_mul_c (k, oc[2 + i], s[i]), -pb[i]),
                           fb_kx_mul_c (k, kc[i], d[i]));
          valid = fb_kx_binary (k, FB_KB_AND, fb_kx_binary (k, FB_KB_GE, pos, fb_kx_index (k, 0)),
                                fb_kx_binary (k, FB_KB_LT, pos, fb_kx_index (k, in)));
        }
      xc[2 + i] = fb_kx_binary (k, FB_KB_MIN, fb_kx_binary (k, FB_KB_MAX, pos, fb_kx_index (k, 0)),
                                fb_kx_index (k, in - 1));
      ok = ok ? fb_kx_binary (k, FB_KB_AND, ok, valid) : valid;
      wc[2 + i] = kc[i];
    }
  /* Weights: [Co, C/G, k...] for Conv, [C, Co/G, k...] for ConvTranspose. */
  wc[0] = transpose ? xc[1] : oc[1];
  wc[1] = transpose ? col : ci;
  FbKExpr *xp[FB_MAX_RANK];
  memcpy (xp, xc, sizeof xp);
  if (nhwc)
    {
      for (int i = 0; i < sp; i++)
        xp[1 + i] = xc[2 + i];
      xp[rx - 1] = xc[1];
    }
  FbKExpr *xv = _fb_lower_value_at (c, x, rx, xp, error);
  FbKExpr *wv = xv ? _fb_lower_value_at (c, w, rw, wc, error) : NULL;
  if (wv == NULL)
    return FALSE;
  FbKExpr *p = fb_kx_select (k, ok, fb_kx_binary (k, FB_KB_MUL, xv, wv), fb_kx_const_f (k, t, 0.0));
  g_ptr_array_add (l, fb_ks_assign (k, acc, fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, acc), p)));
  return _fb_lower_store (c, body, y, yc, fb_kx_acc (k, acc), error);
}
