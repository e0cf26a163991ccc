/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The operators added for conformance, as generated loops: the extra elementwise maps as
 * scalar expressions built from the kernel IR's few primitives (so that every target that
 * compiles the kernel IR gets them, no math library needed), and CastLike, EyeLike, Hardmax and
 * the two losses as loop nests of their own. */
#include "fb-lower-private.h"

#include <math.h>
#include <string.h>

static FbKExpr *
cf (FbKernel *k, FbDType t, double v)
{
  return fb_kx_const_f (k, t, v);
}

static FbKExpr *
bin (FbKernel *k, FbKBinary op, FbKExpr *a, FbKExpr *b)
{
  return fb_kx_binary (k, op, a, b);
}

static FbKExpr *
sel (FbKernel *k, FbKExpr *cond, FbKExpr *a, FbKExpr *b)
{
  return fb_kx_select (k, cond, a, b);
}

/* atan by range reduction onto |w| <= tan(pi/8), where nine terms of its series are within
 * 3e-9: |x| > 1 uses pi/2 - atan(1/|x|), |x| > tan(pi/8) uses pi/4 + atan((z-1)/(z+1)). */
static FbKExpr *
atan_expr (FbKernel *k, FbDType t, FbKExpr *x)
{
  FbKExpr *ax = fb_kx_unary (k, FB_KU_ABS, x);
  FbKExpr *inv = bin (k, FB_KB_GT, ax, cf (k, t, 1.0));
  FbKExpr *z = sel (k, inv, bin (k, FB_KB_DIV, cf (k, t, 1.0), ax), ax);
  FbKExpr *mid = bin (k, FB_KB_GT, z, cf (k, t, 0.41421356237309503));
  FbKExpr *w = sel (k, mid, bin (k, FB_KB_DIV, bin (k, FB_KB_SUB, z, cf (k, t, 1.0)),
                                 bin (k, FB_KB_ADD, z, cf (k, t, 1.0))), z);
  FbKExpr *u = bin (k, FB_KB_MUL, w, w);
  /* Horner in u = w^2 of sum (-1)^i u^i / (2i + 1), i = 0..8. */
  FbKExpr *p = cf (k, t, 1.0 / 17.0);
  for (int i = 7; i >= 0; i--)
    p = bin (k, FB_KB_ADD, cf (k, t, (i % 2 ? -1.0 : 1.0) / (2 * i + 1)), bin (k, FB_KB_MUL, u, p));
  FbKExpr *r = bin (k, FB_KB_MUL, w, p);
  r = sel (k, mid, bin (k, FB_KB_ADD, r, cf (k, t, G_PI / 4)), r);
  r = sel (k, inv, bin (k, FB_KB_SUB, cf (k, t, G_PI / 2), r), r);
  return sel (k, bin (k, FB_KB_LT, x, cf (k, t, 0.0)), fb_kx_unary (k, FB_KU_NEG, r), r);
}

FbKExpr *
_fb_lower_math_op (FbLowerCtx *c, const FbNode *node, FbKExpr **in, GError **error)
{
  FbKernel *k = c->k;
  FbDType t = node->inputs[0]->dtype;
  FbKExpr *x = in[0];
  FbKExpr *one = cf (k, t, 1.0);

  switch (node->op)
    {
    case FB_OP_TAN:
      return bin (k, FB_KB_DIV, fb_kx_unary (k, FB_KU_SIN, x), fb_kx_unary (k, FB_KU_COS, x));
    case FB_OP_COSH:
      return bin (k, FB_KB_MUL, cf (k, t, 0.5),
                  bin (k, FB_KB_ADD, fb_kx_unary (k, FB_KU_EXP, x),
                       fb_kx_unary (k, FB_KU_EXP, fb_kx_unary (k, FB_KU_NEG, x))));
    case FB_OP_SINH:
      {
        /* Near 0 the difference of exponentials cancels: a short series is exact there. */
        FbKExpr *x2 = bin (k, FB_KB_MUL, x, x);
        FbKExpr *series = cf (k, t, 1.0 / 5040);
        series = bin (k, FB_KB_ADD, cf (k, t, 1.0 / 120), bin (k, FB_KB_MUL, x2, series));
        series = bin (k, FB_KB_ADD, cf (k, t, 1.0 / 6), bin (k, FB_KB_MUL, x2, series));
        series = bin (k, FB_KB_MUL, x, bin (k, FB_KB_ADD, one, bin (k, FB_KB_MUL, x2, series)));
        FbKExpr *big = bin (k, FB_KB_MUL, cf (k, t, 0.5),
                            bin (k, FB_KB_SUB, fb_kx_unary (k, FB_KU_EXP, x),
                                 fb_kx_unary (k, FB_KU_EXP, fb_kx_unary (k, FB_KU_NEG, x))));
        return sel (k, bin (k, FB_KB_LT, fb_kx_unary (k, FB_KU_ABS, x), cf (k, t, 0.5)), series,
                    big);
      }
    case FB_OP_ATAN:
      return atan_expr (k, t, x);
    case FB_OP_ASIN:
    case FB_OP_ACOS:
      {
        FbKExpr *s = fb_kx_unary (k, FB_KU_SQRT, bin (k, FB_KB_SUB, one, bin (k, FB_KB_MUL, x, x)));
        FbKExpr *a = atan_expr (k, t, bin (k, FB_KB_DIV, x, s));
        /* |x| > 1 makes the square root NaN, and so the result, as it should. */
        return node->op == FB_OP_ASIN ? a : bin (k, FB_KB_SUB, cf (k, t, G_PI / 2), a);
      }
    case FB_OP_ASINH:
      {
        FbKExpr *ax = fb_kx_unary (k, FB_KU_ABS, x);
        FbKExpr *r = fb_kx_unary (k, FB_KU_LOG,
                                  bin (k, FB_KB_ADD, ax,
                                       fb_kx_unary (k, FB_KU_SQRT,
                                                    bin (k, FB_KB_ADD, bin (k, FB_KB_MUL, x, x), one))));
        return sel (k, bin (k, FB_KB_LT, x, cf (k, t, 0.0)), fb_kx_unary (k, FB_KU_NEG, r), r);
      }
    case FB_OP_ACOSH:
      return fb_kx_unary (k, FB_KU_LOG,
                          bin (k, FB_KB_ADD, x,
                               fb_kx_unary (k, FB_KU_SQRT,
                                            bin (k, FB_KB_SUB, bin (k, FB_KB_MUL, x, x), one))));
    case FB_OP_ATANH:
      return bin (k, FB_KB_MUL, cf (k, t, 0.5),
                  fb_kx_unary (k, FB_KU_LOG, bin (k, FB_KB_DIV, bin (k, FB_KB_ADD, one, x),
                                                  bin (k, FB_KB_SUB, one, x))));
    case FB_OP_IS_INF:
      {
        gboolean pos = fb_node_attr_int (node, "detect_positive", 1) != 0;
        gboolean neg = fb_node_attr_int (node, "detect_negative", 1) != 0;
        FbKExpr *p = bin (k, FB_KB_EQ, x, cf (k, t, INFINITY));
        FbKExpr *n = bin (k, FB_KB_EQ, x, cf (k, t, -INFINITY));
        if (pos && neg)
          return bin (k, FB_KB_OR, p, n);
        return pos ? p : neg ? n : fb_kx_const_i (k, FB_DTYPE_BOOL, 0);
      }
    case FB_OP_THRESHOLDED_RELU:
      {
        double alpha = fb_node_attr_float (node, "alpha", 1.0f);
        return sel (k, bin (k, FB_KB_GT, x, cf (k, t, alpha)), x, cf (k, t, 0.0));
      }
    case FB_OP_SHRINK:
      {
        double lambd = fb_node_attr_float (node, "lambd", 0.5f);
        double bias = fb_node_attr_float (node, "bias", 0.0f);
        /* Integers compare and shift in double, as the interpreter computes them. */
        FbKExpr *xd = fb_dtype_is_float (t) ? x : fb_kx_cast (k, x, FB_DTYPE_FLOAT64);
        FbDType ct = xd->dtype;
        FbKExpr *r = sel (k, bin (k, FB_KB_LT, xd, cf (k, ct, -lambd)),
                          bin (k, FB_KB_ADD, xd, cf (k, ct, bias)),
                          sel (k, bin (k, FB_KB_GT, xd, cf (k, ct, lambd)),
                               bin (k, FB_KB_SUB, xd, cf (k, ct, bias)), cf (k, ct, 0.0)));
        return fb_kx_cast (k, r, t);
      }
    case FB_OP_CELU:
      {
        double alpha = fb_node_attr_float (node, "alpha", 1.0f);
        FbKExpr *e = bin (k, FB_KB_SUB,
                          fb_kx_unary (k, FB_KU_EXP, bin (k, FB_KB_DIV, x, cf (k, t, alpha))), one);
        return bin (k, FB_KB_ADD, bin (k, FB_KB_MAX, x, cf (k, t, 0.0)),
                    bin (k, FB_KB_MIN, bin (k, FB_KB_MUL, cf (k, t, alpha), e), cf (k, t, 0.0)));
      }
    case FB_OP_MISH:
      {
        FbKExpr *sp = fb_kx_unary (k, FB_KU_LOG, bin (k, FB_KB_ADD, fb_kx_unary (k, FB_KU_EXP, x), one));
        return bin (k, FB_KB_MUL, x, fb_kx_unary (k, FB_KU_TANH, sp));
      }
    case FB_OP_BIT_SHIFT:
      {
        gboolean left = g_strcmp0 (fb_node_attr_string (node, "direction", ""), "LEFT") == 0;
        return bin (k, left ? FB_KB_SHL : FB_KB_SHR, x, fb_kx_cast (k, in[1], t));
      }
    default:
      _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "not an elementwise operator");
      return NULL;
    }
}

/* ---- whole-tensor operators --------------------------------------------------------------- */

static gboolean
lower_cast_like (FbLowerCtx *c, const FbNode *node, GError **error)
{
  const FbValue *x = node->inputs[0], *y = node->outputs[0];
  int rank;
  int64_t dims[FB_MAX_RANK];
  FbKExpr *coords[FB_MAX_RANK];
  if (!_fb_lower_dims (x, &rank, dims))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shape is not static");
  GPtrArray *body = _fb_lower_nest (c, rank, dims, coords, (double) _fb_lower_numel (x));
  FbKExpr *v = _fb_lower_value_at (c, x, rank, coords, error);
  return v && _fb_lower_store (c, body, y, coords, fb_kx_cast (c->k, v, y->dtype), error);
}

static gboolean
lower_eye_like (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *y = node->outputs[0];
  int rank;
  int64_t dims[FB_MAX_RANK];
  FbKExpr *coords[FB_MAX_RANK];
  if (!_fb_lower_dims (y, &rank, dims) || rank != 2)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "needs a static rank-2 shape");
  int64_t kk = fb_node_attr_int (node, "k", 0);
  /* An offset beyond the matrix puts no one anywhere; clamping keeps the constant small. */
  kk = CLAMP (kk, -dims[0] - 1, dims[1] + 1);
  GPtrArray *body = _fb_lower_nest (c, 2, dims, coords, (double) (dims[0] * dims[1]));
  FbKExpr *on = bin (k, FB_KB_EQ, bin (k, FB_KB_SUB, coords[1], coords[0]), fb_kx_index (k, kk));
  FbKExpr *v = sel (k, on, fb_kx_const_i (k, FB_DTYPE_INT64, 1), fb_kx_const_i (k, FB_DTYPE_INT64, 0));
  return _fb_lower_store (c, body, y, coords, fb_kx_cast (k, v, y->dtype), error);
}

static gboolean
lower_hardmax (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *y = node->outputs[0];
  int rank, a;
  int64_t dims[FB_MAX_RANK], outer, n, inner;
  if (!_fb_lower_dims (x, &rank, dims))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shape is not static");
  gboolean old = node->opset > 0 && node->opset < 13;
  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", old ? 1 : -1), rank, &a))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "axis is out of range");
  outer = 1;
  for (int d = 0; d < a; d++)
    outer *= dims[d];
  n = old ? 1 : dims[a];
  inner = 1;
  for (int d = old ? a : a + 1; d < rank; d++)
    (old ? &n : &inner)[0] *= dims[d];
  int64_t nest[2] = { outer, inner };
  FbKExpr *co[2], *j;
  GPtrArray *body = _fb_lower_nest (c, 2, nest, co, (double) (outer * n * inner) * 2);
  guint xa = _fb_lower_arg (c, x, FB_KARG_INPUT);
  guint ya = _fb_lower_out_arg (c, y);
  FbKExpr *base = fb_kx_add (k, fb_kx_mul_c (k, co[0], n * inner), co[1]);
  FbDType t = x->dtype;
  guint best = fb_kernel_new_acc (k, FB_DTYPE_INT64), bv = fb_kernel_new_acc (k, t);
  g_ptr_array_add (body, fb_ks_assign (k, best, fb_kx_index (k, 0)));
  g_ptr_array_add (body, fb_ks_assign (k, bv, cf (k, t, -INFINITY)));
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, n), &j);
  FbKExpr *at = fb_kx_add (k, base, fb_kx_mul_c (k, j, inner));
  guint cur = fb_kernel_new_acc (k, t);
  g_ptr_array_add (l, fb_ks_assign (k, cur, fb_kx_load (k, xa, at)));
  /* The first of equal maxima wins; a row of NaN or -inf keeps index 0, as the interpreter. */
  FbKExpr *better = bin (k, FB_KB_GT, fb_kx_acc (k, cur), fb_kx_acc (k, bv));
  g_ptr_array_add (l, fb_ks_assign (k, best, sel (k, better, j, fb_kx_acc (k, best))));
  g_ptr_array_add (l, fb_ks_assign (k, bv, sel (k, better, fb_kx_acc (k, cur), fb_kx_acc (k, bv))));
  l = _fb_lower_loop (k, body, fb_kx_index (k, n), &j);
  at = fb_kx_add (k, base, fb_kx_mul_c (k, j, inner));
  FbKExpr *v = sel (k, bin (k, FB_KB_EQ, j, fb_kx_acc (k, best)), cf (k, t, 1.0), cf (k, t, 0.0));
  g_ptr_array_add (l, fb_ks_store (k, ya, at, v));
  return TRUE;
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss over x [N, C, D] and target [N, D]:
 * one parallel phase computes every element's loss (and weight, when reduced), a second sums
 * them on one thread. Targets outside the classes are clamped into them for the loads, so a
 * bad label reads valid memory (the interpreter refuses it). */
static gboolean
lower_loss (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *tv = node->inputs[1];
  const FbValue *wv = fb_node_input (node, 2), *y = node->outputs[0];
  const FbValue *lp = node->n_outputs > 1 ? node->outputs[1] : NULL;
  gboolean sce = node->op == FB_OP_SOFTMAX_CE_LOSS;
  int rank;
  int64_t dims[FB_MAX_RANK];
  if (!_fb_lower_dims (x, &rank, dims) || rank < 2)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "needs a static shape (N, C, ...)");
  int64_t N = dims[0], C = dims[1], D = 1;
  for (int d = 2; d < rank; d++)
    D *= dims[d];
  const char *red = fb_node_attr_string (node, "reduction", "mean");
  gboolean reduced = strcmp (red, "none") != 0, mean = strcmp (red, "mean") == 0;
  const FbAttr *ig = fb_node_attr (node, "ignore_index");
  gboolean has_ignore = ig != NULL && ig->type == FB_ATTR_INT;
  FbDType t = x->dtype;

  guint xa = _fb_lower_arg (c, x, FB_KARG_INPUT);
  guint ta = _fb_lower_arg (c, tv, FB_KARG_INPUT);
  guint wa = wv ? _fb_lower_arg (c, wv, FB_KARG_INPUT) : 0;
  int64_t nd[2] = { N, D };
  guint la = reduced ? _fb_lower_scratch (c, "loss", t, 2, nd) : _fb_lower_out_arg (c, y);
  guint ga = reduced ? _fb_lower_scratch (c, "weight", t, 2, nd) : 0;
  guint pa = lp ? _fb_lower_out_arg (c, lp) : 0;

  FbKExpr *co[2];
  GPtrArray *body = _fb_lower_nest (c, 2, nd, co, (double) (N * C * D) * (sce ? 4 : 1));
  FbKExpr *td = fb_kx_add (k, fb_kx_mul_c (k, co[0], D), co[1]);
  FbKExpr *xbase = fb_kx_add (k, fb_kx_mul_c (k, co[0], C * D), co[1]);
  guint tacc = fb_kernel_new_acc (k, FB_DTYPE_INT64);
  g_ptr_array_add (body, fb_ks_assign (k, tacc, fb_kx_cast (k, fb_kx_load (k, ta, td), FB_DTYPE_INT64)));
  FbKExpr *target = fb_kx_acc (k, tacc);
  FbKExpr *tc = bin (k, FB_KB_MIN, bin (k, FB_KB_MAX, target, fb_kx_index (k, 0)),
                     fb_kx_index (k, MAX (C - 1, 0)));
  FbKExpr *picked = fb_kx_load (k, xa, fb_kx_add (k, xbase, fb_kx_mul_c (k, tc, D)));
  if (sce)
    {
      /* log-softmax over the classes: max, then the sum of shifted exponentials. */
      guint mx = fb_kernel_new_acc (k, t), sum = fb_kernel_new_acc (k, t), lse = fb_kernel_new_acc (k, t);
      FbKExpr *cc;
      g_ptr_array_add (body, fb_ks_assign (k, mx, cf (k, t, -INFINITY)));
      GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, C), &cc);
      FbKExpr *xi = fb_kx_load (k, xa, fb_kx_add (k, xbase, fb_kx_mul_c (k, cc, D)));
      g_ptr_array_add (l, fb_ks_assign (k, mx, bin (k, FB_KB_MAX, fb_kx_acc (k, mx), xi)));
      g_ptr_array_add (body, fb_ks_assign (k, sum, cf (k, t, 0.0)));
      l = _fb_lower_loop (k, body, fb_kx_index (k, C), &cc);
      xi = fb_kx_load (k, xa, fb_kx_add (k, xbase, fb_kx_mul_c (k, cc, D)));
      g_ptr_array_add (l, fb_ks_assign (k, sum, bin (k, FB_KB_ADD, fb_kx_acc (k, sum),
                                                     fb_kx_unary (k, FB_KU_EXP, bin (k, FB_KB_SUB, xi, fb_kx_acc (k, mx))))));
      g_ptr_array_add (body, fb_ks_assign (k, lse, bin (k, FB_KB_ADD, fb_kx_acc (k, mx),
                                                        fb_kx_unary (k, FB_KU_LOG, fb_kx_acc (k, sum)))));
      if (lp)
        {
          l = _fb_lower_loop (k, body, fb_kx_index (k, C), &cc);
          FbKExpr *at = fb_kx_add (k, xbase, fb_kx_mul_c (k, cc, D));
          g_ptr_array_add (l, fb_ks_store (k, pa, at, bin (k, FB_KB_SUB, fb_kx_load (k, xa, at),
                                                           fb_kx_acc (k, lse))));
        }
      picked = bin (k, FB_KB_SUB, picked, fb_kx_acc (k, lse));
    }
  FbKExpr *w = wv ? fb_kx_cast (k, fb_kx_load (k, wa, tc), t) : cf (k, t, 1.0);
  FbKExpr *valid = has_ignore ? bin (k, FB_KB_NE, target, fb_kx_index (k, ig->i))
                              : fb_kx_const_i (k, FB_DTYPE_BOOL, 1);
  FbKExpr *loss = sel (k, valid, fb_kx_unary (k, FB_KU_NEG, bin (k, FB_KB_MUL, picked, w)),
                       cf (k, t, 0.0));
  g_ptr_array_add (body, fb_ks_store (k, la, td, loss));
  if (!reduced)
    return TRUE;
  g_ptr_array_add (body, fb_ks_store (k, ga, td, sel (k, valid, w, cf (k, t, 0.0))));

  /* The sum, in double whatever the type, on one thread: a scalar is written once. */
  FbKExpr *unused, *i;
  FbKPhase *phase = fb_kernel_add_phase (k, 1, (double) (N * D) * 2);
  GPtrArray *one = _fb_lower_loop (k, phase->body, fb_kx_index (k, 1), &unused);
  ((FbKStmt *) g_ptr_array_index (phase->body, 0))->loop.parallel = TRUE;
  guint s = fb_kernel_new_acc (k, FB_DTYPE_FLOAT64), ws = fb_kernel_new_acc (k, FB_DTYPE_FLOAT64);
  g_ptr_array_add (one, fb_ks_assign (k, s, cf (k, FB_DTYPE_FLOAT64, 0.0)));
  g_ptr_array_add (one, fb_ks_assign (k, ws, cf (k, FB_DTYPE_FLOAT64, 0.0)));
  GPtrArray *l = _fb_lower_loop (k, one, fb_kx_index (k, N * D), &i);
  g_ptr_array_add (l, fb_ks_assign (k, s, bin (k, FB_KB_ADD, fb_kx_acc (k, s),
                                               fb_kx_cast (k, fb_kx_load (k, la, i), FB_DTYPE_FLOAT64))));
  g_ptr_array_add (l, fb_ks_assign (k, ws, bin (k, FB_KB_ADD, fb_kx_acc (k, ws),
                                                fb_kx_cast (k, fb_kx_load (k, ga, i), FB_DTYPE_FLOAT64))));
  FbKExpr *r = fb_kx_acc (k, s);
  if (mean)
    r = bin (k, FB_KB_DIV, r, fb_kx_acc (k, ws));
  guint ya = _fb_lower_out_arg (c, y);
  g_ptr_array_add (one, fb_ks_store (k, ya, fb_kx_index (k, 0), fb_kx_cast (k, r, y->dtype)));
  return TRUE;
}

gboolean
_fb_lower_math_node (FbLowerCtx *c, const FbNode *node, GError **error)
{
  switch (node->op)
    {
    case FB_OP_CAST_LIKE:
      return lower_cast_like (c, node, error);
    case FB_OP_EYE_LIKE:
      return lower_eye_like (c, node, error);
    case FB_OP_HARDMAX:
      return lower_hardmax (c, node, error);
    case FB_OP_NLL_LOSS: case FB_OP_SOFTMAX_CE_LOSS:
      return lower_loss (c, node, error);
    default:
      return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "no lowering for this operator");
    }
}

gboolean
_fb_lower_runs_on_host (const FbNode *node)
{
  switch (node->op)
    {
    case FB_OP_COMPRESS: case FB_OP_NON_ZERO: case FB_OP_UNIQUE: case FB_OP_NON_MAX_SUPPRESSION:
      return TRUE;
    case FB_OP_HANN_WINDOW: case FB_OP_HAMMING_WINDOW: case FB_OP_BLACKMAN_WINDOW:
      /* With a constant size the window is folded at compile time. */
      return node->inputs[0] == NULL || node->inputs[0]->constant == NULL;
    case FB_OP_ONE_HOT:
      /* A depth fed at run time sizes the output; a constant one compiles to loops. */
      return node->n_inputs > 1 && node->inputs[1] != NULL && node->inputs[1]->constant == NULL;
    default:
      return FALSE;
    }
}
