/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DFT, STFT and MelWeightMatrix as generated loops, for sizes known at compile time (the
 * lowering sends the others to the host): a parallel nest over the outputs, and for the
 * transforms an inner loop over the signal against constant tables of cos and sin of
 * 2 pi m / n, indexed by (k m) mod n, accumulated in double like the interpreter. */
#include "fb-lower-private.h"
#include "fb-signal-spec.h"

#include <math.h>
#include <string.h>

/* Longer transforms (their root tables alone 32 MiB) are left to the interpreter, which
 * refuses what it would take hours over. */
#define MAX_POINTS (1 << 22)

/* cos (2 pi m / n), or sin times sign (-1 for a forward transform), for m in [0, n), as a
 * constant argument. */
static guint
roots_arg (FbLowerCtx *c, int64_t n, gboolean sine, double sign)
{
  g_autoptr(FbTensor) t = fb_tensor_new (FB_DTYPE_FLOAT64, 1, &n, NULL);
  double *v = fb_tensor_data_mut (t);
  for (int64_t m = 0; m < n; m++)
    v[m] = sine ? sign * sin (2.0 * G_PI * (double) m / (double) n)
                : cos (2.0 * G_PI * (double) m / (double) n);
  g_autofree char *name = g_strdup_printf ("%s.%s%" G_GINT64_FORMAT, c->k->name,
                                           !sine ? "cos" : sign < 0 ? "nsin" : "sin", n);
  return _fb_lower_const_arg (c, t, name);
}

static FbKExpr *
f64 (FbKernel *k, double v)
{
  return fb_kx_const_f (k, FB_DTYPE_FLOAT64, v);
}

static FbKExpr *
bin (FbKernel *k, FbKBinary op, FbKExpr *a, FbKExpr *b)
{
  return fb_kx_binary (k, op, a, b);
}

/* The scalar integer a constant input holds (the lowering only comes here when it is one). */
static gboolean
const_scalar (const FbNode *node, guint i, int64_t *out, GError **error)
{
  g_autofree int64_t *v = NULL;
  guint n;
  if (!_fb_lower_const_ints (node, i, &v, &n, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  if (n != 1)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "input %u must hold one value", i);
  *out = v[0];
  return TRUE;
}

/* Adds re and im (accumulators) of x[m] times cos + i sin (the tables, the sign in sin's) at
 * root index at, to the body of a loop over m. */
static void
accumulate (FbKernel *k, GPtrArray *l, FbKExpr *xr, FbKExpr *xi, guint cos_a, guint sin_a,
            FbKExpr *at, guint re, guint im)
{
  FbKExpr *cs = fb_kx_load (k, cos_a, at), *sn = fb_kx_load (k, sin_a, at);
  FbKExpr *r = bin (k, FB_KB_SUB, bin (k, FB_KB_MUL, xr, cs), bin (k, FB_KB_MUL, xi, sn));
  FbKExpr *i = bin (k, FB_KB_ADD, bin (k, FB_KB_MUL, xi, cs), bin (k, FB_KB_MUL, xr, sn));
  g_ptr_array_add (l, fb_ks_assign (k, re, bin (k, FB_KB_ADD, fb_kx_acc (k, re), r)));
  g_ptr_array_add (l, fb_ks_assign (k, im, bin (k, FB_KB_ADD, fb_kx_acc (k, im), i)));
}

/* The root index (k m) mod n, with k < n and m < n so that the product fits easily. */
static FbKExpr *
root_index (FbKernel *k, FbKExpr *kk, FbKExpr *m, int64_t n)
{
  return bin (k, FB_KB_MOD, bin (k, FB_KB_MUL, kk, m), fb_kx_index (k, n));
}

static gboolean
lower_dft (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *y = node->outputs[0];
  int rank, ry;
  int64_t dims[FB_MAX_RANK], yd[FB_MAX_RANK], axis = -2, n;
  g_autoptr(GError) local = NULL;
  FbDftSpec spec;
  if (!_fb_lower_dims (x, &rank, dims) || !_fb_lower_dims (y, &ry, yd) || ry != rank)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "needs static shapes");
  if (!const_scalar (node, 2, &axis, error))
    return FALSE;
  if (!fb_dft_spec (node, rank, fb_node_input (node, 2) ? &axis : NULL, &spec, &local))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "%s", local->message);
  gboolean complex = dims[rank - 1] == 2;
  int64_t len = dims[spec.axis];
  n = len;
  if (!const_scalar (node, 1, &n, error))
    return FALSE;
  if (n < 1 || yd[spec.axis] != fb_dft_bins (&spec, n) || yd[rank - 1] != 2)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "the output does not fit the transform");
  if (n > MAX_POINTS)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "a transform of %" G_GINT64_FORMAT
                           " points is more than the %d compiled", n, MAX_POINTS);
  guint cos_a = roots_arg (c, n, FALSE, 1.0), sin_a = roots_arg (c, n, TRUE, spec.inverse ? 1.0 : -1.0);
  int64_t numel = 1, points = MIN (n, len);
  for (int d = 0; d < rank - 1; d++)
    numel *= yd[d];
  FbKExpr *oc[FB_MAX_RANK], *xc[FB_MAX_RANK], *m;
  GPtrArray *body = _fb_lower_nest (c, rank - 1, yd, oc, (double) numel * points * 8);
  guint re = fb_kernel_new_acc (k, FB_DTYPE_FLOAT64), im = fb_kernel_new_acc (k, FB_DTYPE_FLOAT64);
  g_ptr_array_add (body, fb_ks_assign (k, re, f64 (k, 0.0)));
  g_ptr_array_add (body, fb_ks_assign (k, im, f64 (k, 0.0)));
  /* Beyond the input's length the signal is zero (padding to n): those points are left out. */
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, points), &m);
  memcpy (xc, oc, sizeof (FbKExpr *) * rank);
  xc[spec.axis] = m;
  xc[rank - 1] = fb_kx_index (k, 0);
  FbKExpr *xr = _fb_lower_value_at (c, x, rank, xc, error), *xi = f64 (k, 0.0);
  if (xr == NULL)
    return FALSE;
  if (complex)
    {
      xc[rank - 1] = fb_kx_index (k, 1);
      if ((xi = _fb_lower_value_at (c, x, rank, xc, error)) == NULL)
        return FALSE;
    }
  accumulate (k, l, fb_kx_cast (k, xr, FB_DTYPE_FLOAT64), fb_kx_cast (k, xi, FB_DTYPE_FLOAT64),
              cos_a, sin_a, root_index (k, oc[spec.axis], m, n), re, im);
  double scale = spec.inverse ? 1.0 / (double) n : 1.0;
  oc[rank - 1] = fb_kx_index (k, 0);
  if (!_fb_lower_store (c, body, y, oc, bin (k, FB_KB_MUL, fb_kx_acc (k, re), f64 (k, scale)), error))
    return FALSE;
  oc[rank - 1] = fb_kx_index (k, 1);
  return _fb_lower_store (c, body, y, oc, bin (k, FB_KB_MUL, fb_kx_acc (k, im), f64 (k, scale)), error);
}

static gboolean
lower_stft (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *w = fb_node_input (node, 2), *y = node->outputs[0];
  int rank, ry, rw = 0;
  int64_t dims[FB_MAX_RANK], yd[FB_MAX_RANK], wd[FB_MAX_RANK] = { -2 }, step = -1, fl = -2;
  g_autoptr(GError) local = NULL;
  FbStftSpec spec;
  if (!_fb_lower_dims (x, &rank, dims) || !_fb_lower_dims (y, &ry, yd) || rank != 3 || ry != 4 ||
      (w && (!_fb_lower_dims (w, &rw, wd) || rw != 1)))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "needs static shapes");
  if (!const_scalar (node, 1, &step, error) || !const_scalar (node, 3, &fl, error))
    return FALSE;
  if (!fb_stft_spec (node, dims[1], dims[2] == 2, step, fl, w ? wd[0] : -2, &spec, &local))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "%s", local->message);
  if (yd[0] != dims[0] || yd[1] != spec.frames || yd[2] != spec.bins || yd[3] != 2)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "the output does not fit the frames");
  int64_t n = spec.frame_length;
  if (n > MAX_POINTS)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "frames of %" G_GINT64_FORMAT
                           " samples are more than the %d compiled", n, MAX_POINTS);
  guint cos_a = roots_arg (c, n, FALSE, 1.0), sin_a = roots_arg (c, n, TRUE, -1.0);
  FbKExpr *oc[4], *xc[3], *m;
  GPtrArray *body = _fb_lower_nest (c, 3, yd, oc, (double) yd[0] * yd[1] * yd[2] * n * 8);
  guint re = fb_kernel_new_acc (k, FB_DTYPE_FLOAT64), im = fb_kernel_new_acc (k, FB_DTYPE_FLOAT64);
  g_ptr_array_add (body, fb_ks_assign (k, re, f64 (k, 0.0)));
  g_ptr_array_add (body, fb_ks_assign (k, im, f64 (k, 0.0)));
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, n), &m);
  xc[0] = oc[0];
  xc[1] = fb_kx_add (k, fb_kx_mul_c (k, oc[1], step), m);
  xc[2] = fb_kx_index (k, 0);
  FbKExpr *xr = _fb_lower_value_at (c, x, 3, xc, error), *xi = f64 (k, 0.0), *g = f64 (k, 1.0);
  if (xr == NULL)
    return FALSE;
  if (dims[2] == 2)
    {
      xc[2] = fb_kx_index (k, 1);
      if ((xi = _fb_lower_value_at (c, x, 3, xc, error)) == NULL)
        return FALSE;
      xi = fb_kx_cast (k, xi, FB_DTYPE_FLOAT64);
    }
  if (w && (g = _fb_lower_value_at (c, w, 1, &m, error)) == NULL)
    return FALSE;
  g = fb_kx_cast (k, g, FB_DTYPE_FLOAT64);
  xr = bin (k, FB_KB_MUL, fb_kx_cast (k, xr, FB_DTYPE_FLOAT64), g);
  xi = bin (k, FB_KB_MUL, xi, g);
  accumulate (k, l, xr, xi, cos_a, sin_a, root_index (k, oc[2], m, n), re, im);
  oc[3] = fb_kx_index (k, 0);
  if (!_fb_lower_store (c, body, y, oc, fb_kx_acc (k, re), error))
    return FALSE;
  oc[3] = fb_kx_index (k, 1);
  return _fb_lower_store (c, body, y, oc, fb_kx_acc (k, im), error);
}

/* Band edge e of fb_mel_edges as a (whole-number) double: -1 where the reference's value is not
 * finite or no spectrogram reaches. */
static FbKExpr *
mel_edge (FbKernel *k, FbKExpr *e, FbKExpr *low, FbKExpr *step, int64_t dft_length, FbKExpr *rate)
{
  FbKExpr *mel = bin (k, FB_KB_ADD, bin (k, FB_KB_MUL, fb_kx_cast (k, e, FB_DTYPE_FLOAT64), step), low);
  FbKExpr *hz = bin (k, FB_KB_MUL, f64 (k, 700.0),
                     bin (k, FB_KB_SUB, bin (k, FB_KB_POW, f64 (k, 10.0), bin (k, FB_KB_DIV, mel, f64 (k, 2595.0))),
                          f64 (k, 1.0)));
  FbKExpr *b = fb_kx_unary (k, FB_KU_FLOOR, bin (k, FB_KB_DIV, bin (k, FB_KB_MUL, f64 (k, (double) dft_length + 1), hz), rate));
  FbKExpr *ok = bin (k, FB_KB_LT, fb_kx_unary (k, FB_KU_ABS, b), f64 (k, 4e18));
  return fb_kx_select (k, ok, b, f64 (k, -1.0));
}

/* 2595 log10 (1 + hz / 700), the mel scale. */
static FbKExpr *
mel_of (FbKernel *k, FbKExpr *hz)
{
  FbKExpr *v = bin (k, FB_KB_ADD, f64 (k, 1.0), bin (k, FB_KB_DIV, hz, f64 (k, 700.0)));
  return bin (k, FB_KB_MUL, f64 (k, 2595.0 / G_LN10), fb_kx_unary (k, FB_KU_LOG, v));
}

/* A scalar input (rank 0 or [1]) as an expression. */
static FbKExpr *
scalar_value (FbLowerCtx *c, const FbValue *v, FbDType t)
{
  FbKernel *k = c->k;
  FbKExpr *e = _fb_lower_is_scalar_const (v) ? NULL
             : fb_kx_load (k, _fb_lower_arg (c, v, FB_KARG_INPUT), fb_kx_index (k, 0));
  if (e == NULL)
    e = fb_dtype_is_float (v->constant->dtype)
          ? fb_kx_const_f (k, FB_DTYPE_FLOAT64, fb_tensor_get_f64 (v->constant, 0))
          : fb_kx_const_f (k, FB_DTYPE_FLOAT64, (double) fb_tensor_get_i64 (v->constant, 0));
  return fb_kx_cast (k, e, t);
}

/* Sizes known, sample rate and band edges perhaps only at run time: every element computes
 * its three band edges and its place on the triangle, as fb_mel_weight does. */
static gboolean
lower_mel (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *y = node->outputs[0];
  int64_t mel_bins = -1, dft_length = -1, yd[FB_MAX_RANK];
  int ry;
  if (!const_scalar (node, 0, &mel_bins, error) || !const_scalar (node, 1, &dft_length, error))
    return FALSE;
  if (!_fb_lower_dims (y, &ry, yd) || ry != 2 || mel_bins < 0 || dft_length < 1 ||
      yd[0] != dft_length / 2 + 1 || yd[1] != mel_bins)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "the output does not fit the sizes");
  FbKExpr *oc[2];
  GPtrArray *body = _fb_lower_nest (c, 2, yd, oc, (double) yd[0] * yd[1] * 40);
  FbKExpr *rate = scalar_value (c, node->inputs[2], FB_DTYPE_FLOAT64);
  FbKExpr *low = mel_of (k, scalar_value (c, node->inputs[3], FB_DTYPE_FLOAT64));
  FbKExpr *high = mel_of (k, scalar_value (c, node->inputs[4], FB_DTYPE_FLOAT64));
  FbKExpr *step = bin (k, FB_KB_DIV, bin (k, FB_KB_SUB, high, low), f64 (k, (double) (mel_bins + 2)));
  guint e[3];
  for (int t = 0; t < 3; t++)
    {
      e[t] = fb_kernel_new_acc (k, FB_DTYPE_FLOAT64);
      g_ptr_array_add (body, fb_ks_assign (k, e[t], mel_edge (k, fb_kx_add_c (k, oc[1], t), low, step,
                                                              dft_length, rate)));
    }
  FbKExpr *l = fb_kx_acc (k, e[0]), *ce = fb_kx_acc (k, e[1]), *h = fb_kx_acc (k, e[2]);
  FbKExpr *j = fb_kx_cast (k, oc[0], FB_DTYPE_FLOAT64);
  /* The rising side (a single 1 when it has no width), then the falling side over it. */
  FbKExpr *rise = fb_kx_select (k, bin (k, FB_KB_EQ, ce, l),
                                fb_kx_select (k, bin (k, FB_KB_EQ, j, ce), f64 (k, 1.0), f64 (k, 0.0)),
                                fb_kx_select (k, bin (k, FB_KB_AND, bin (k, FB_KB_LE, l, j), bin (k, FB_KB_LE, j, ce)),
                                              bin (k, FB_KB_DIV, bin (k, FB_KB_SUB, j, l), bin (k, FB_KB_SUB, ce, l)),
                                              f64 (k, 0.0)));
  FbKExpr *falls = bin (k, FB_KB_AND, bin (k, FB_KB_GT, h, ce),
                        bin (k, FB_KB_AND, bin (k, FB_KB_LE, ce, j), bin (k, FB_KB_LT, j, h)));
  FbKExpr *v = fb_kx_select (k, falls, bin (k, FB_KB_DIV, bin (k, FB_KB_SUB, h, j), bin (k, FB_KB_SUB, h, ce)),
                             rise);
  return _fb_lower_store (c, body, y, oc, v, error);
}

gboolean
_fb_lower_signal (FbLowerCtx *c, const FbNode *node, GError **error)
{
  switch (node->op)
    {
    case FB_OP_DFT:
      return lower_dft (c, node, error);
    case FB_OP_STFT:
      return lower_stft (c, node, error);
    case FB_OP_MEL_WEIGHT_MATRIX:
      return lower_mel (c, node, error);
    default:
      return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "not a signal operator");
    }
}
