/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GatherND, ScatterElements (and Scatter), OneHot, ReverseSequence and the linear quantizers as
 * generated loops. Indices read from data are clamped into their axis before they address
 * memory: the interpreter refuses an index out of range, compiled code must not read or write
 * outside its buffers whatever the data says. */
#include "fb-lower-private.h"

#include <math.h>
#include <string.h>

static FbKExpr *
bin (FbKernel *k, FbKBinary op, FbKExpr *a, FbKExpr *b)
{
  return fb_kx_binary (k, op, a, b);
}

/* An index loaded from data, made non-negative (counted from the end) and clamped into
 * [0, extent). */
static FbKExpr *
index_in (FbKernel *k, FbKExpr *v, int64_t extent)
{
  v = fb_kx_cast (k, v, FB_DTYPE_INT64);
  v = fb_kx_select (k, bin (k, FB_KB_LT, v, fb_kx_index (k, 0)), fb_kx_add_c (k, v, extent), v);
  return bin (k, FB_KB_MIN, bin (k, FB_KB_MAX, v, fb_kx_index (k, 0)),
              fb_kx_index (k, MAX (extent - 1, 0)));
}

static gboolean
static_dims (const FbNode *node, const FbValue *v, int *rank, int64_t *dims, GError **error)
{
  if (!_fb_lower_dims (v, rank, dims))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "'%s' has no static shape", v->name);
  return TRUE;
}

static gboolean
lower_gather_nd (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *ind = node->inputs[1], *y = node->outputs[0];
  int xr, ir;
  int64_t xd[FB_MAX_RANK], id[FB_MAX_RANK], xs[FB_MAX_RANK];
  if (!static_dims (node, x, &xr, xd, error) || !static_dims (node, ind, &ir, id, error))
    return FALSE;
  int64_t b = fb_node_attr_int (node, "batch_dims", 0), m = ir > 0 ? id[ir - 1] : 0;
  if (ir < 1 || b < 0 || m < 1 || b + m > xr)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "indices do not fit the data");
  _fb_lower_strides (xr, xd, xs);
  int64_t tuples = 1, per_batch = 1, slice = 1, batch_size = 1;
  for (int i = 0; i < ir - 1; i++)
    tuples *= id[i];
  for (int i = (int) b; i < ir - 1; i++)
    per_batch *= id[i];
  for (int i = (int) (b + m); i < xr; i++)
    slice *= xd[i];
  for (int i = (int) b; i < xr; i++)
    batch_size *= xd[i];
  guint xa = _fb_lower_arg (c, x, FB_KARG_INPUT), ia = _fb_lower_arg (c, ind, FB_KARG_INPUT);
  guint ya = _fb_lower_out_arg (c, y);
  FbKExpr *t, *e;
  GPtrArray *body = _fb_lower_nest (c, 1, &tuples, &t, (double) (tuples * slice));
  guint off = fb_kernel_new_acc (k, FB_DTYPE_INT64);
  FbKExpr *base = fb_kx_mul_c (k, bin (k, FB_KB_DIV, t, fb_kx_index (k, MAX (per_batch, 1))),
                               batch_size);
  g_ptr_array_add (body, fb_ks_assign (k, off, base));
  for (int64_t j = 0; j < m; j++)
    {
      FbKExpr *v = fb_kx_load (k, ia, fb_kx_add_c (k, fb_kx_mul_c (k, t, m), j));
      FbKExpr *step = fb_kx_mul_c (k, index_in (k, v, xd[b + j]), xs[b + j]);
      g_ptr_array_add (body, fb_ks_assign (k, off, fb_kx_add (k, fb_kx_acc (k, off), step)));
    }
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, slice), &e);
  g_ptr_array_add (l, fb_ks_store (k, ya, fb_kx_add (k, fb_kx_mul_c (k, t, slice), e),
                                   fb_kx_load (k, xa, fb_kx_add (k, fb_kx_acc (k, off), e))));
  return TRUE;
}

/* The data is copied in parallel, then the updates are applied in order on one thread: later
 * duplicates win, and reductions see every update. */
static gboolean
lower_scatter_elements (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *ind = node->inputs[1], *upd = node->inputs[2];
  const FbValue *y = node->outputs[0];
  int xr, ir, a;
  int64_t xd[FB_MAX_RANK], id[FB_MAX_RANK], xs[FB_MAX_RANK];
  FbKExpr *co[FB_MAX_RANK], *ic[FB_MAX_RANK];
  if (!static_dims (node, x, &xr, xd, error) || !static_dims (node, ind, &ir, id, error))
    return FALSE;
  if (ir != xr || !fb_axis_normalize (fb_node_attr_int (node, "axis", 0), xr, &a))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "indices do not fit the data");
  const char *r = fb_node_attr_string (node, "reduction", "none");
  guint xa = _fb_lower_arg (c, x, FB_KARG_INPUT), ia = _fb_lower_arg (c, ind, FB_KARG_INPUT);
  guint ua = _fb_lower_arg (c, upd, FB_KARG_INPUT), ya = _fb_lower_out_arg (c, y);
  int64_t numel = _fb_lower_numel (x), n_ind = _fb_lower_numel (ind);
  GPtrArray *body = _fb_lower_nest (c, xr, xd, co, (double) numel);
  FbKExpr *at = _fb_lower_index (k, xr, xd, co);
  g_ptr_array_add (body, fb_ks_store (k, ya, at, fb_kx_load (k, xa, at)));

  FbKExpr *unused;
  FbKPhase *phase = fb_kernel_add_phase (k, 1, (double) n_ind * 2);
  body = _fb_lower_loop (k, phase->body, fb_kx_index (k, 1), &unused);
  ((FbKStmt *) g_ptr_array_index (phase->body, 0))->loop.parallel = TRUE;
  for (int d = 0; d < ir; d++)
    body = _fb_lower_loop (k, body, fb_kx_index (k, id[d]), &ic[d]);
  FbKExpr *ui = _fb_lower_index (k, ir, id, ic);
  _fb_lower_strides (xr, xd, xs);
  FbKExpr *off = fb_kx_index (k, 0);
  for (int d = 0; d < xr; d++)
    {
      FbKExpr *cd = d == a ? index_in (k, fb_kx_load (k, ia, ui), xd[a]) : ic[d];
      off = fb_kx_add (k, off, fb_kx_mul_c (k, cd, xs[d]));
    }
  FbKExpr *u = fb_kx_cast (k, fb_kx_load (k, ua, ui), y->dtype);
  FbKExpr *old = fb_kx_load (k, ya, off);
  FbKExpr *v = !strcmp (r, "add") ? bin (k, FB_KB_ADD, old, u)
             : !strcmp (r, "mul") ? bin (k, FB_KB_MUL, old, u)
             : !strcmp (r, "max") ? bin (k, FB_KB_MAX, old, u)
             : !strcmp (r, "min") ? bin (k, FB_KB_MIN, old, u) : u;
  g_ptr_array_add (body, fb_ks_store (k, ya, off, v));
  return TRUE;
}

static gboolean
lower_one_hot (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *ind = node->inputs[0], *values = node->inputs[2], *y = node->outputs[0];
  int yr, a;
  int64_t yd[FB_MAX_RANK];
  FbKExpr *co[FB_MAX_RANK], *ic[FB_MAX_RANK];
  if (!static_dims (node, y, &yr, yd, error))
    return FALSE;
  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", -1), yr, &a))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "axis is out of range");
  int64_t depth = yd[a];
  GPtrArray *body = _fb_lower_nest (c, yr, yd, co, (double) _fb_lower_numel (y));
  for (int d = 0, j = 0; d < yr; d++)
    if (d != a)
      ic[j++] = co[d];
  FbKExpr *v = _fb_lower_value_at (c, ind, yr - 1, ic, error);
  if (v == NULL)
    return FALSE;
  /* As the interpreter: negative indices count from the end, then truncate toward zero. */
  v = fb_kx_cast (k, v, FB_DTYPE_FLOAT64);
  FbKExpr *zero = fb_kx_const_f (k, FB_DTYPE_FLOAT64, 0.0);
  FbKExpr *dep = fb_kx_const_f (k, FB_DTYPE_FLOAT64, (double) depth);
  v = fb_kx_select (k, bin (k, FB_KB_LT, v, zero), bin (k, FB_KB_ADD, v, dep), v);
  FbKExpr *in_range = bin (k, FB_KB_AND, bin (k, FB_KB_GE, v, zero), bin (k, FB_KB_LT, v, dep));
  FbKExpr *safe = fb_kx_select (k, in_range, v, zero);
  FbKExpr *on = bin (k, FB_KB_AND, in_range,
                     bin (k, FB_KB_EQ, fb_kx_cast (k, safe, FB_DTYPE_INT64), co[a]));
  guint va = _fb_lower_arg (c, values, FB_KARG_INPUT);
  FbKExpr *r = fb_kx_select (k, on, fb_kx_load (k, va, fb_kx_index (k, 1)),
                             fb_kx_load (k, va, fb_kx_index (k, 0)));
  return _fb_lower_store (c, body, y, co, r, error);
}

static gboolean
lower_reverse_sequence (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *lens = node->inputs[1], *y = node->outputs[0];
  int xr;
  int64_t xd[FB_MAX_RANK];
  FbKExpr *co[FB_MAX_RANK], *src[FB_MAX_RANK];
  if (!static_dims (node, x, &xr, xd, error))
    return FALSE;
  int ta = (int) fb_node_attr_int (node, "time_axis", 0), ba = (int) fb_node_attr_int (node, "batch_axis", 1);
  if (xr < 2 || ta < 0 || ta > 1 || ba < 0 || ba > 1 || ta == ba)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "bad time_axis or batch_axis");
  GPtrArray *body = _fb_lower_nest (c, xr, xd, co, (double) _fb_lower_numel (x));
  guint la = _fb_lower_arg (c, lens, FB_KARG_INPUT);
  FbKExpr *len = fb_kx_cast (k, fb_kx_load (k, la, co[ba]), FB_DTYPE_INT64);
  len = bin (k, FB_KB_MIN, bin (k, FB_KB_MAX, len, fb_kx_index (k, 0)), fb_kx_index (k, xd[ta]));
  memcpy (src, co, sizeof src);
  FbKExpr *rev = bin (k, FB_KB_SUB, fb_kx_add_c (k, len, -1), co[ta]);
  src[ta] = fb_kx_select (k, bin (k, FB_KB_LT, co[ta], len), rev, co[ta]);
  FbKExpr *v = _fb_lower_value_at (c, x, xr, src, error);
  return v && _fb_lower_store (c, body, y, co, v, error);
}

/* ---- quantization ------------------------------------------------------------------------- */

gboolean
_fb_lower_quant_range (FbDType t, double *lo, double *hi)
{
  switch (t)
    {
    case FB_DTYPE_UINT8:  *lo = 0;      *hi = 255;    return TRUE;
    case FB_DTYPE_INT8:   *lo = -128;   *hi = 127;    return TRUE;
    case FB_DTYPE_UINT16: *lo = 0;      *hi = 65535;  return TRUE;
    case FB_DTYPE_INT16:  *lo = -32768; *hi = 32767;  return TRUE;
    case FB_DTYPE_INT32:  *lo = G_MININT32; *hi = G_MAXINT32; return TRUE;
    default: return FALSE;
    }
}

/* round-half-even (q) + zero, clamped to [lo, hi]; NaN becomes 0. */
FbKExpr *
_fb_lower_saturate (FbKernel *k, FbDType ct, FbKExpr *q, FbKExpr *zero, double lo, double hi)
{
  q = bin (k, FB_KB_ADD, fb_kx_unary (k, FB_KU_ROUND, q), fb_kx_cast (k, zero, ct));
  FbKExpr *cl = bin (k, FB_KB_MIN, bin (k, FB_KB_MAX, q, fb_kx_const_f (k, ct, lo)),
                     fb_kx_const_f (k, ct, hi));
  return fb_kx_select (k, fb_kx_unary (k, FB_KU_ISNAN, q), fb_kx_const_f (k, ct, 0.0), cl);
}

FbKExpr *
_fb_lower_requantize (FbKernel *k, FbKExpr *acc, FbKExpr *s0, FbKExpr *s1, FbKExpr *s2,
                      FbKExpr *zero, double lo, double hi)
{
  const FbDType f = FB_DTYPE_FLOAT32;
  FbKExpr *m = bin (k, FB_KB_DIV, bin (k, FB_KB_MUL, fb_kx_cast (k, s0, f), fb_kx_cast (k, s1, f)),
                    fb_kx_cast (k, s2, f));
  return _fb_lower_saturate (k, f, bin (k, FB_KB_MUL, fb_kx_cast (k, acc, f), m), zero, lo, hi);
}

static gboolean
lower_linear_quant (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *scale = node->inputs[1], *y = node->outputs[0];
  const FbValue *zero = fb_node_input (node, 2);
  gboolean quantize = node->op == FB_OP_QUANTIZE_LINEAR;
  int xr, sr, a = 0;
  int64_t xd[FB_MAX_RANK], sd[FB_MAX_RANK];
  FbKExpr *co[FB_MAX_RANK];
  if (!static_dims (node, x, &xr, xd, error) || !static_dims (node, scale, &sr, sd, error))
    return FALSE;
  gboolean per_axis = _fb_lower_numel (scale) != 1 || sr > 1;
  if (per_axis && (sr != 1 || !fb_axis_normalize (fb_node_attr_int (node, "axis", 1), xr, &a) ||
                   xd[a] != sd[0]))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                           "a scale per channel must be a vector as long as the axis");
  GPtrArray *body = _fb_lower_nest (c, xr, xd, co, (double) _fb_lower_numel (x) * 3);
  FbKExpr *ch = per_axis ? co[a] : fb_kx_index (k, 0);
  guint sa = _fb_lower_arg (c, scale, FB_KARG_INPUT);
  FbKExpr *s = fb_kx_load (k, sa, ch);
  FbKExpr *zp = zero ? fb_kx_load (k, _fb_lower_arg (c, zero, FB_KARG_INPUT), ch)
                     : fb_kx_const_i (k, FB_DTYPE_INT64, 0);
  FbKExpr *v = _fb_lower_value_at (c, x, xr, co, error);
  if (v == NULL)
    return FALSE;
  FbKExpr *r;
  if (quantize)
    {
      double lo, hi;
      if (!_fb_lower_quant_range (y->dtype, &lo, &hi))
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "cannot quantize to %s",
                               fb_dtype_name (y->dtype));
      /* In the scale's type, as the reference divides. */
      FbDType ct = s->dtype == FB_DTYPE_FLOAT16 ? FB_DTYPE_FLOAT32 : s->dtype;
      r = _fb_lower_saturate (k, ct, bin (k, FB_KB_DIV, fb_kx_cast (k, v, ct), fb_kx_cast (k, s, ct)), zp,
                    lo, hi);
    }
  else
    {
      FbDType ct = y->dtype == FB_DTYPE_FLOAT16 ? FB_DTYPE_FLOAT32 : y->dtype;
      r = bin (k, FB_KB_MUL, bin (k, FB_KB_SUB, fb_kx_cast (k, v, ct), fb_kx_cast (k, zp, ct)),
               fb_kx_cast (k, s, ct));
    }
  return _fb_lower_store (c, body, y, co, r, error);
}

/* One thread finds the range and writes the scale and zero point, then the quantization runs
 * in parallel, reading them back. */
static gboolean
lower_dynamic_quant (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *y = node->outputs[0];
  int xr;
  int64_t xd[FB_MAX_RANK], one = 1;
  FbKExpr *co[FB_MAX_RANK], *unused, *i;
  const FbDType f = FB_DTYPE_FLOAT32;
  if (!static_dims (node, x, &xr, xd, error))
    return FALSE;
  int64_t numel = _fb_lower_numel (x);
  guint xa = _fb_lower_arg (c, x, FB_KARG_INPUT);
  guint sa = node->n_outputs > 1 && node->outputs[1] ? _fb_lower_out_arg (c, node->outputs[1])
                                                     : _fb_lower_scratch (c, "scale", f, 1, &one);
  gboolean has_z = node->n_outputs > 2 && node->outputs[2] != NULL;
  guint za = has_z ? _fb_lower_out_arg (c, node->outputs[2]) : 0;
  guint zf = _fb_lower_scratch (c, "zero", f, 1, &one);

  FbKPhase *phase = fb_kernel_add_phase (k, 1, (double) numel * 2);
  GPtrArray *body = _fb_lower_loop (k, phase->body, fb_kx_index (k, 1), &unused);
  ((FbKStmt *) g_ptr_array_index (phase->body, 0))->loop.parallel = TRUE;
  guint mn = fb_kernel_new_acc (k, f), mx = fb_kernel_new_acc (k, f);
  g_ptr_array_add (body, fb_ks_assign (k, mn, fb_kx_const_f (k, f, 0.0)));
  g_ptr_array_add (body, fb_ks_assign (k, mx, fb_kx_const_f (k, f, 0.0)));
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, numel), &i);
  FbKExpr *v = fb_kx_cast (k, fb_kx_load (k, xa, i), f);
  g_ptr_array_add (l, fb_ks_assign (k, mn, bin (k, FB_KB_MIN, fb_kx_acc (k, mn), v)));
  g_ptr_array_add (l, fb_ks_assign (k, mx, bin (k, FB_KB_MAX, fb_kx_acc (k, mx), v)));
  guint sc = fb_kernel_new_acc (k, f);
  g_ptr_array_add (body, fb_ks_assign (k, sc, bin (k, FB_KB_DIV, bin (k, FB_KB_SUB, fb_kx_acc (k, mx),
                                                                      fb_kx_acc (k, mn)),
                                                   fb_kx_const_f (k, f, 255.0))));
  FbKExpr *pos = bin (k, FB_KB_GT, fb_kx_acc (k, sc), fb_kx_const_f (k, f, 0.0));
  FbKExpr *z = _fb_lower_saturate (k, f, bin (k, FB_KB_DIV, fb_kx_unary (k, FB_KU_NEG, fb_kx_acc (k, mn)),
                                    fb_kx_acc (k, sc)),
                         fb_kx_const_f (k, f, 0.0), 0, 255);
  z = fb_kx_select (k, pos, z, fb_kx_const_f (k, f, 0.0));
  g_ptr_array_add (body, fb_ks_store (k, sa, fb_kx_index (k, 0), fb_kx_acc (k, sc)));
  g_ptr_array_add (body, fb_ks_store (k, zf, fb_kx_index (k, 0), z));
  if (has_z)
    g_ptr_array_add (body, fb_ks_store (k, za, fb_kx_index (k, 0), fb_kx_cast (k, z, FB_DTYPE_UINT8)));

  body = _fb_lower_nest (c, xr, xd, co, (double) numel * 3);
  FbKExpr *s = fb_kx_load (k, sa, fb_kx_index (k, 0));
  FbKExpr *zz = fb_kx_load (k, zf, fb_kx_index (k, 0));
  v = fb_kx_cast (k, fb_kx_load (k, xa, _fb_lower_index (k, xr, xd, co)), f);
  FbKExpr *q = _fb_lower_saturate (k, f, bin (k, FB_KB_DIV, v, s), zz, 0, 255);
  q = fb_kx_select (k, bin (k, FB_KB_GT, s, fb_kx_const_f (k, f, 0.0)), q, zz);
  return _fb_lower_store (c, body, y, co, fb_kx_cast (k, q, FB_DTYPE_UINT8), error);
}

/* MatMulInteger and QLinearMatMul (scalar zero points and scales): an int64 sum per output
 * element, then int32, or the rescale and saturation of QLinearMatMul. */
static gboolean
lower_matmul_integer (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  gboolean q = node->op == FB_OP_QLINEAR_MATMUL;
  const FbValue *a = node->inputs[0], *b = node->inputs[q ? 3 : 1], *y = node->outputs[0];
  const FbValue *za = q ? node->inputs[2] : fb_node_input (node, 2);
  const FbValue *zb = q ? node->inputs[5] : fb_node_input (node, 3);
  int ar, br, yr;
  int64_t ad[FB_MAX_RANK], bd[FB_MAX_RANK], yd[FB_MAX_RANK];
  FbKExpr *co[FB_MAX_RANK], *ac[FB_MAX_RANK], *bc[FB_MAX_RANK], *kk;
  if (!static_dims (node, a, &ar, ad, error) || !static_dims (node, b, &br, bd, error) ||
      !static_dims (node, y, &yr, yd, error))
    return FALSE;
  if (ar < 2 || br < 2 || yr < 2 || ad[ar - 1] != bd[br - 2])
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "needs matrices of rank 2 or more");
  int64_t K = ad[ar - 1];
  GPtrArray *body = _fb_lower_nest (c, yr, yd, co, (double) _fb_lower_numel (y) * K * 2);
  guint acc = fb_kernel_new_acc (k, FB_DTYPE_INT64);
  g_ptr_array_add (body, fb_ks_assign (k, acc, fb_kx_index (k, 0)));
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, K), &kk);
  memcpy (ac, co, sizeof ac);
  memcpy (bc, co, sizeof bc);
  ac[yr - 1] = kk;
  bc[yr - 2] = kk;
  FbKExpr *av = _fb_lower_value_at (c, a, yr, ac, error);
  FbKExpr *bv = av ? _fb_lower_value_at (c, b, yr, bc, error) : NULL;
  if (bv == NULL)
    return FALSE;
  FbKExpr *zav = za ? fb_kx_cast (k, fb_kx_load (k, _fb_lower_arg (c, za, FB_KARG_INPUT), fb_kx_index (k, 0)), FB_DTYPE_INT64)
                    : fb_kx_index (k, 0);
  FbKExpr *zbv = zb ? fb_kx_cast (k, fb_kx_load (k, _fb_lower_arg (c, zb, FB_KARG_INPUT), fb_kx_index (k, 0)), FB_DTYPE_INT64)
                    : fb_kx_index (k, 0);
  FbKExpr *p = bin (k, FB_KB_MUL, bin (k, FB_KB_SUB, fb_kx_cast (k, av, FB_DTYPE_INT64), zav),
                    bin (k, FB_KB_SUB, fb_kx_cast (k, bv, FB_DTYPE_INT64), zbv));
  g_ptr_array_add (l, fb_ks_assign (k, acc, bin (k, FB_KB_ADD, fb_kx_acc (k, acc), p)));
  FbKExpr *r = fb_kx_acc (k, acc);
  if (q)
    {
      double lo, hi;
      if (!_fb_lower_quant_range (y->dtype, &lo, &hi))
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "cannot quantize to %s",
                               fb_dtype_name (y->dtype));
      FbKExpr *s[3];
      const guint si[3] = { 1, 4, 6 };
      for (int i = 0; i < 3; i++)
        s[i] = fb_kx_load (k, _fb_lower_arg (c, node->inputs[si[i]], FB_KARG_INPUT),
                           fb_kx_index (k, 0));
      FbKExpr *zy = fb_kx_load (k, _fb_lower_arg (c, node->inputs[7], FB_KARG_INPUT), fb_kx_index (k, 0));
      r = _fb_lower_requantize (k, r, s[0], s[1], s[2], zy, lo, hi);
    }
  return _fb_lower_store (c, body, y, co, fb_kx_cast (k, r, y->dtype), error);
}

gboolean
_fb_lower_index_node (FbLowerCtx *c, const FbNode *node, GError **error)
{
  switch (node->op)
    {
    case FB_OP_GATHER_ND:
      return lower_gather_nd (c, node, error);
    case FB_OP_SCATTER: case FB_OP_SCATTER_ELEMENTS:
      return lower_scatter_elements (c, node, error);
    case FB_OP_ONE_HOT:
      return lower_one_hot (c, node, error);
    case FB_OP_REVERSE_SEQUENCE:
      return lower_reverse_sequence (c, node, error);
    case FB_OP_QUANTIZE_LINEAR: case FB_OP_DEQUANTIZE_LINEAR:
      return lower_linear_quant (c, node, error);
    case FB_OP_DYNAMIC_QUANTIZE_LINEAR:
      return lower_dynamic_quant (c, node, error);
    case FB_OP_MATMUL_INTEGER: case FB_OP_QLINEAR_MATMUL:
      return lower_matmul_integer (c, node, error);
    default:
      return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "no lowering for this operator");
    }
}

gboolean
_fb_lower_index_supports (const FbNode *node, char **reason)
{
  switch (node->op)
    {
    case FB_OP_ONE_HOT:
      if (node->inputs[1]->constant == NULL)
        {
          if (reason)
            *reason = g_strdup ("OneHot needs its depth known at compile time");
          return FALSE;
        }
      return TRUE;
    case FB_OP_QUANTIZE_LINEAR: case FB_OP_DEQUANTIZE_LINEAR:
      if (!fb_dtype_is_float (node->inputs[1]->dtype))
        {
          if (reason)
            *reason = g_strdup ("the scale must be floating point");
          return FALSE;
        }
      return TRUE;
    case FB_OP_MATMUL_INTEGER: case FB_OP_QLINEAR_MATMUL:
      {
        gboolean q = node->op == FB_OP_QLINEAR_MATMUL;
        for (guint i = 2; i < node->n_inputs; i++)
          if (node->inputs[i] && !(q && i == 3) && _fb_lower_numel (node->inputs[i]) != 1)
            {
              if (reason)
                *reason = g_strdup_printf ("%s compiles with one zero point and scale per "
                                           "operand only", fb_op_name (node->op));
              return FALSE;
            }
        if (node->inputs[0]->shape.rank < 2 || node->inputs[q ? 3 : 1]->shape.rank < 2)
          {
            if (reason)
              *reason = g_strdup ("both operands must be matrices (rank 2 or more)");
            return FALSE;
          }
        return TRUE;
      }
    case FB_OP_DYNAMIC_QUANTIZE_LINEAR:
      if (node->inputs[0]->dtype != FB_DTYPE_FLOAT32)
        {
          if (reason)
            *reason = g_strdup ("DynamicQuantizeLinear runs on float32 only");
          return FALSE;
        }
      return TRUE;
    default:
      return TRUE;
    }
}
