/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Convolutions the im2col path (fb-lower-conv.c, 1-D and 2-D float) does not take, as direct
 * loop nests over any number of spatial axes: ConvTranspose (channels-last 2-D ones where
 * oneDNN has no optimized deconvolution for them), Conv over three spatial dimensions, the
 * integer convolutions ConvInteger and QLinearConv, and on a GPU the float convolutions that
 * are matrix-vector products (few output pixels: fb-lower-conv.c says which). Each output
 * element sums over the input channels of its group and the kernel's cells; a cell that falls
 * in the padding (or, for ConvTranspose, between the strided input positions) reads a clamped
 * in-range element and is masked to zero by a select.
 *
 * The integer ones follow the ONNX spec: x - x_zero_point times w - w_zero_point (a zero point
 * per output channel allowed for w), summed in int32 from QLinearConv's int32 bias; padding
 * contributes nothing, as if padded with the zero point. ConvInteger stores the int32 sum,
 * QLinearConv requantizes it: saturate (round (sum * x_scale * w_scale / y_scale) +
 * y_zero_point), w_scale per output channel allowed too. */
#include "fb-lower-conv.h"

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

/* The operands of node, by kind. */
typedef struct {
  const FbValue *x, *w, *bias;
  const FbValue *x_zero, *w_zero;   /* integer convolutions (optional for ConvInteger) */
  gboolean       integer;           /* ConvInteger or QLinearConv: an int32 sum */
  gboolean       qlinear;           /* QLinearConv: the sum requantized */
} Operands;

static void
operands (const FbNode *node, Operands *o)
{
  memset (o, 0, sizeof *o);
  o->qlinear = node->op == FB_OP_QLINEAR_CONV;
  o->integer = o->qlinear || node->op == FB_OP_CONV_INTEGER;
  o->x = node->inputs[0];
  if (o->qlinear)
    {
      /* x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B */
      o->w = node->inputs[3];
      o->x_zero = node->inputs[2];
      o->w_zero = node->inputs[5];
      o->bias = fb_node_input (node, 8);
    }
  else if (o->integer)
    {
      o->w = node->inputs[1];
      o->x_zero = fb_node_input (node, 2);
      o->w_zero = fb_node_input (node, 3);
    }
  else
    {
      o->w = node->inputs[1];
      o->bias = fb_node_input (node, 2);
    }
}

/* v (a scalar, or with per_channel one value per output channel) at output channel oc, as an
 * int32; 0 when absent. */
static FbKExpr *
zero_point (FbLowerCtx *c, const FbNode *node, const FbValue *v, const char *what, int64_t Co,
            gboolean per_channel, FbKExpr *oc, GError **error)
{
  if (v == NULL)
    return fb_kx_const_i (c->k, FB_DTYPE_INT32, 0);
  int64_t n = _fb_lower_numel (v);
  if (n != 1 && !(per_channel && n == Co))
    {
      _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "%s ('%s') must be a scalar%s", what,
                      v->name, per_channel ? " or hold one value per output channel" : "");
      return NULL;
    }
  guint a = _fb_lower_arg (c, v, FB_KARG_INPUT);
  return fb_kx_cast (c->k, fb_kx_load (c->k, a, n == 1 ? fb_kx_index (c->k, 0) : oc),
                     FB_DTYPE_INT32);
}

/* QLinearConv's output from the int32 sum at output channel oc. */
static FbKExpr *
requantized (FbLowerCtx *c, const FbNode *node, FbKExpr *sum, int64_t Co, FbKExpr *oc,
             GError **error)
{
  FbKernel *k = c->k;
  const FbValue *xs = node->inputs[1], *ws = node->inputs[4], *ys = node->inputs[6];
  const FbValue *yz = node->inputs[7];
  double lo, hi;
  if (!_fb_lower_quant_range (yz->dtype, &lo, &hi) || yz->dtype == FB_DTYPE_INT32)
    {
      _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                      "y_zero_point of type %s is not supported", fb_dtype_name (yz->dtype));
      return NULL;
    }
  if (_fb_lower_numel (xs) != 1 || _fb_lower_numel (ys) != 1 || _fb_lower_numel (yz) != 1)
    {
      _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                      "x_scale, y_scale and y_zero_point must be scalars");
      return NULL;
    }
  int64_t nw = _fb_lower_numel (ws);
  if (nw != 1 && nw != Co)
    {
      _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                      "w_scale must be a scalar or hold one value per output channel");
      return NULL;
    }
  FbKExpr *zero = fb_kx_index (k, 0);
  FbKExpr *s0 = fb_kx_load (k, _fb_lower_arg (c, xs, FB_KARG_INPUT), zero);
  FbKExpr *s1 = fb_kx_load (k, _fb_lower_arg (c, ws, FB_KARG_INPUT), nw == 1 ? zero : oc);
  FbKExpr *s2 = fb_kx_load (k, _fb_lower_arg (c, ys, FB_KARG_INPUT), zero);
  FbKExpr *z = fb_kx_load (k, _fb_lower_arg (c, yz, FB_KARG_INPUT), zero);
  return _fb_lower_requantize (k, sum, s0, s1, s2, z, lo, hi);
}

gboolean
_fb_lower_conv_direct (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *y = node->outputs[0];
  gboolean transpose = node->op == FB_OP_CONV_TRANSPOSE;
  Operands o;
  operands (node, &o);
  FbWindowNd g;
  if (!_fb_lower_window_nd (node, o.x, o.w, &g, error))
    return FALSE;
  int sp = g.sp, rank = sp + 2;
  if (o.integer && (!fb_dtype_is_integer (o.x->dtype) || !fb_dtype_is_integer (o.w->dtype)))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "x and w must hold integers, not %s and %s",
                           fb_dtype_name (o.x->dtype), fb_dtype_name (o.w->dtype));
  int64_t G = fb_node_attr_int (node, "group", 1);
  int64_t C = g.C, Co = g.Co;
  if (G < 1 || C % G || Co % G)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "bad group count");
  int64_t Cg = C / G, Cog = Co / G;
  int64_t pb[FB_MAX_RANK];
  memcpy (pb, g.pb, sizeof pb);
  if (transpose)
    _fb_lower_deconv_begin_pads (node, sp, g.in, g.out, g.k, pb);

  int64_t yphys[FB_MAX_RANK];
  int ry;
  _fb_lower_dims (y, &ry, yphys);
  int64_t numel = 1, cells = Cg;
  for (int i = 0; i < rank; i++)
    numel *= yphys[i];
  for (int i = 0; i < sp; i++)
    cells *= g.k[i];
  FbKExpr *oc[FB_MAX_RANK], *yc[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_nest (c, rank, yphys, yc, 2.0 * numel * cells);
  _fb_lower_window_to_cf (&g, yc, oc);
  /* The sum: in the output's type, in int32 for the integer convolutions. */
  FbDType t = o.integer ? FB_DTYPE_INT32 : y->dtype;
  guint acc = fb_kernel_new_acc (k, t);
  FbKExpr *init = fb_kx_const_f (k, t, 0.0);
  if (o.bias)
    {
      if (_fb_lower_numel (o.bias) != Co)
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                               "the bias ('%s') must hold one value per output channel",
                               o.bias->name);
      init = _fb_lower_value_at (c, o.bias, 1, &oc[1], error);
      if (init == NULL)
        return FALSE;
      init = fb_kx_cast (k, init, t);
    }
  g_ptr_array_add (body, fb_ks_assign (k, acc, init));
  FbKExpr *zx = NULL, *zw = NULL;
  if (o.integer)
    {
      zx = zero_point (c, node, o.x_zero, "x_zero_point", Co, FALSE, oc[1], error);
      zw = zx ? zero_point (c, node, o.w_zero, "w_zero_point", Co, TRUE, oc[1], error) : NULL;
      if (zw == NULL)
        return FALSE;
    }
  FbKExpr *grp = fb_kx_binary (k, FB_KB_DIV, oc[1], fb_kx_index (k, Cog));
  FbKExpr *col = fb_kx_binary (k, FB_KB_MOD, oc[1], fb_kx_index (k, Cog));
  FbKExpr *ci, *kc[FB_MAX_RANK];
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, Cg), &ci);
  for (int i = 0; i < sp; i++)
    l = _fb_lower_loop (k, l, fb_kx_index (k, g.k[i]), &kc[i]);
  FbKExpr *xc[FB_MAX_RANK], *wc[FB_MAX_RANK], *ok = NULL;
  xc[0] = oc[0];
  xc[1] = fb_kx_add (k, fb_kx_mul_c (k, grp, Cg), ci);
  for (int i = 0; i < sp; i++)
    {
      FbKExpr *pos, *valid;
      int64_t in = g.in[i], s = g.s[i], d = g.d[i];
      if (transpose)
        {
          FbKExpr *tt = fb_kx_binary (k, FB_KB_SUB, fb_kx_add_c (k, oc[2 + i], pb[i]),
                                      fb_kx_mul_c (k, kc[i], d));
          FbKExpr *q = fb_kx_binary (k, FB_KB_DIV, tt, fb_kx_index (k, s));
          valid = fb_kx_binary (k, FB_KB_AND, fb_kx_binary (k, FB_KB_GE, tt, fb_kx_index (k, 0)),
                                fb_kx_binary (k, FB_KB_LT, q, fb_kx_index (k, in)));
          if (s > 1)
            valid = fb_kx_binary (k, FB_KB_AND, valid,
                                  fb_kx_binary (k, FB_KB_EQ,
                                                fb_kx_binary (k, FB_KB_MOD, tt, fb_kx_index (k, s)),
                                                fb_kx_index (k, 0)));
          pos = q;
        }
      else
        {
          pos = fb_kx_add (k, fb_kx_add_c (k, fb_kx_mul_c (k, oc[2 + i], s), -pb[i]),
                           fb_kx_mul_c (k, kc[i], d));
          valid = fb_kx_binary (k, FB_KB_AND, fb_kx_binary (k, FB_KB_GE, pos, fb_kx_index (k, 0)),
                                fb_kx_binary (k, FB_KB_LT, pos, fb_kx_index (k, in)));
        }
      xc[2 + i] = fb_kx_binary (k, FB_KB_MIN, fb_kx_binary (k, FB_KB_MAX, pos, fb_kx_index (k, 0)),
                                fb_kx_index (k, in - 1));
      ok = ok ? fb_kx_binary (k, FB_KB_AND, ok, valid) : valid;
      wc[2 + i] = kc[i];
    }
  /* Weights: [Co, C/G, k...] for Conv, [C, Co/G, k...] for ConvTranspose; always channels-
   * first (the layout pass moves only activations). */
  wc[0] = transpose ? xc[1] : oc[1];
  wc[1] = transpose ? col : ci;
  FbKExpr *xp[FB_MAX_RANK];
  _fb_lower_window_to_phys (&g, xc, xp);
  FbKExpr *xv = _fb_lower_value_at (c, o.x, rank, xp, error);
  FbKExpr *wv = xv ? _fb_lower_value_at (c, o.w, rank, wc, error) : NULL;
  if (wv == NULL)
    return FALSE;
  if (o.integer)
    {
      xv = fb_kx_binary (k, FB_KB_SUB, fb_kx_cast (k, xv, t), zx);
      wv = fb_kx_binary (k, FB_KB_SUB, fb_kx_cast (k, wv, t), zw);
    }
  FbKExpr *p = fb_kx_select (k, ok, fb_kx_binary (k, FB_KB_MUL, xv, wv), fb_kx_const_f (k, t, 0.0));
  g_ptr_array_add (l, fb_ks_assign (k, acc, fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, acc), p)));
  FbKExpr *r = fb_kx_acc (k, acc);
  if (o.qlinear && (r = requantized (c, node, r, Co, oc[1], error)) == NULL)
    return FALSE;
  return _fb_lower_store (c, body, y, yc, r, error);
}
