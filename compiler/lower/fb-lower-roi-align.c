/* SPDX-License-Identifier: GPL-3.0-or-later */
/* RoiAlign as generated loops: in parallel over (box, channel, bin row, bin column), a box's
 * geometry read from rois, then loops over the bin's sampling grid (its extent read from the box
 * when the sampling is adaptive) with a bilinear sample each, step for step as the interpreter
 * (fb-interp-roi-align.c) takes them. Every coordinate is cleaned of NaN and clamped onto the
 * image before it becomes an index, and batch indices are clamped to the batch, so that no
 * value of the inputs makes an address outside them. */
#include "fb-lower-private.h"
#include "fb-roi-spec.h"

typedef struct {
  FbKernel *k;
  FbDType   t;            /* the arithmetic's type: X's float type */
} Roi;

static FbKExpr *
cf (Roi *r, double v)
{
  return fb_kx_const_f (r->k, r->t, v);
}

static FbKExpr *
bin (Roi *r, FbKBinary op, FbKExpr *a, FbKExpr *b)
{
  return fb_kx_binary (r->k, op, a, b);
}

/* v, or 0 where it is NaN. */
static FbKExpr *
no_nan (Roi *r, FbKExpr *v)
{
  return fb_kx_select (r->k, fb_kx_unary (r->k, FB_KU_ISNAN, v), cf (r, 0.0), v);
}

/* Samples along one axis of a bin: the ratio, or ceil (extent / bins) within
 * [0, FB_ROI_MAX_SAMPLES] (an int64 expression). */
static FbKExpr *
grid (Roi *r, const FbRoiSpec *spec, FbKExpr *extent, int64_t bins)
{
  if (spec->sampling_ratio > 0)
    return fb_kx_index (r->k, spec->sampling_ratio);
  FbKExpr *g = no_nan (r, fb_kx_unary (r->k, FB_KU_CEIL, bin (r, FB_KB_DIV, extent, cf (r, (double) bins))));
  g = bin (r, FB_KB_MIN, bin (r, FB_KB_MAX, g, cf (r, 0.0)), cf (r, FB_ROI_MAX_SAMPLES));
  return fb_kx_cast (r->k, g, FB_DTYPE_INT64);
}

/* One axis of a bilinear sample at v over n pixels: the low and high taps and the weight of the
 * high one, with the interpreter's clamping (v is inside [-1, n] here, or the sample is out). */
static void
axis_taps (Roi *r, FbKExpr *v, int64_t n, FbKExpr **low, FbKExpr **high, FbKExpr **frac)
{
  FbKernel *k = r->k;
  v = bin (r, FB_KB_MIN, bin (r, FB_KB_MAX, v, cf (r, 0.0)), cf (r, (double) n));
  FbKExpr *i = fb_kx_cast (k, v, FB_DTYPE_INT64);
  FbKExpr *edge = bin (r, FB_KB_GE, i, fb_kx_index (k, n - 1));
  *low = fb_kx_select (k, edge, fb_kx_index (k, n - 1), i);
  *high = fb_kx_select (k, edge, fb_kx_index (k, n - 1), fb_kx_add_c (k, i, 1));
  *frac = fb_kx_select (k, edge, cf (r, 0.0), bin (r, FB_KB_SUB, v, fb_kx_cast (k, i, r->t)));
}

gboolean
_fb_lower_roi_align (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *rois = node->inputs[1], *idx = node->inputs[2];
  const FbValue *y = node->outputs[0];
  g_autoptr(GError) local = NULL;
  FbRoiSpec spec;
  int xr, rr, yr;
  int64_t xd[FB_MAX_RANK], rd[FB_MAX_RANK], yd[FB_MAX_RANK];
  if (!fb_roi_spec_read (node, &spec, &local))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "%s", local->message);
  if (!_fb_lower_dims (x, &xr, xd) || !_fb_lower_dims (rois, &rr, rd) ||
      !_fb_lower_dims (y, &yr, yd) || xr != 4 || rr != 2 || rd[1] != 4 || yr != 4)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                           "needs static X [N, C, H, W] and rois [num_rois, 4]");
  int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3], R = rd[0], oh = spec.out_h, ow = spec.out_w;
  /* Indices known now are checked now, as the interpreter checks them; the kernel clamps the
   * ones the run gives. */
  for (int64_t i = 0; idx->constant && i < idx->constant->numel; i++)
    if (fb_tensor_get_i64 (idx->constant, i) < 0 || fb_tensor_get_i64 (idx->constant, i) >= N)
      return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "batch_indices[%" G_GINT64_FORMAT
                             "] = %" G_GINT64_FORMAT " names no image of the %" G_GINT64_FORMAT, i,
                             fb_tensor_get_i64 (idx->constant, i), N);
  Roi r = { .k = k, .t = x->dtype == FB_DTYPE_FLOAT64 ? FB_DTYPE_FLOAT64 : FB_DTYPE_FLOAT32 };
  FbKExpr *oc[4];
  double per = spec.sampling_ratio > 0 ? (double) (spec.sampling_ratio * spec.sampling_ratio) : 4.0;
  GPtrArray *body = _fb_lower_nest (c, 4, yd, oc, (double) R * C * oh * ow * per * 12);
  if (N == 0 || H == 0 || W == 0)
    /* No image to sample: every bin is 0, as in the interpreter. */
    return _fb_lower_store (c, body, y, oc, cf (&r, 0.0), error);
  guint xa = _fb_lower_arg (c, x, FB_KARG_INPUT), ra = _fb_lower_arg (c, rois, FB_KARG_INPUT);
  guint ia = _fb_lower_arg (c, idx, FB_KARG_INPUT);
  FbKExpr *box = fb_kx_mul_c (k, oc[0], 4);
  FbKExpr *coord[4];
  double off = spec.half_pixel ? 0.5 : 0.0;
  for (int i = 0; i < 4; i++)
    coord[i] = bin (&r, FB_KB_SUB, bin (&r, FB_KB_MUL, fb_kx_cast (k, fb_kx_load (k, ra, fb_kx_add_c (k, box, i)), r.t),
                                        cf (&r, spec.spatial_scale)),
                    cf (&r, off));
  FbKExpr *rw = bin (&r, FB_KB_SUB, coord[2], coord[0]), *rh = bin (&r, FB_KB_SUB, coord[3], coord[1]);
  if (!spec.half_pixel)
    {
      rw = bin (&r, FB_KB_MAX, rw, cf (&r, 1.0));
      rh = bin (&r, FB_KB_MAX, rh, cf (&r, 1.0));
    }
  /* The box's numbers are read once per output element into accumulators. */
  guint a_x1 = fb_kernel_new_acc (k, r.t), a_y1 = fb_kernel_new_acc (k, r.t);
  guint a_bw = fb_kernel_new_acc (k, r.t), a_bh = fb_kernel_new_acc (k, r.t);
  guint a_gh = fb_kernel_new_acc (k, FB_DTYPE_INT64), a_gw = fb_kernel_new_acc (k, FB_DTYPE_INT64);
  g_ptr_array_add (body, fb_ks_assign (k, a_x1, coord[0]));
  g_ptr_array_add (body, fb_ks_assign (k, a_y1, coord[1]));
  g_ptr_array_add (body, fb_ks_assign (k, a_bw, bin (&r, FB_KB_DIV, rw, cf (&r, (double) ow))));
  g_ptr_array_add (body, fb_ks_assign (k, a_bh, bin (&r, FB_KB_DIV, rh, cf (&r, (double) oh))));
  g_ptr_array_add (body, fb_ks_assign (k, a_gh, grid (&r, &spec, rh, oh)));
  g_ptr_array_add (body, fb_ks_assign (k, a_gw, grid (&r, &spec, rw, ow)));
  FbKExpr *gh = fb_kx_acc (k, a_gh), *gw = fb_kx_acc (k, a_gw);
  FbKExpr *ghf = fb_kx_cast (k, gh, r.t), *gwf = fb_kx_cast (k, gw, r.t);
  FbKExpr *bi = fb_kx_cast (k, fb_kx_load (k, ia, oc[0]), FB_DTYPE_INT64);
  bi = fb_kx_binary (k, FB_KB_MIN, fb_kx_binary (k, FB_KB_MAX, bi, fb_kx_index (k, 0)),
                     fb_kx_index (k, N - 1));
  FbKExpr *plane = fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, bi, C), oc[1]), H * W);

  guint acc = fb_kernel_new_acc (k, r.t);
  g_ptr_array_add (body, fb_ks_assign (k, acc, cf (&r, spec.max ? -G_MAXDOUBLE : 0.0)));
  FbKExpr *iy, *ix;
  GPtrArray *l = _fb_lower_loop (k, body, gh, &iy);
  l = _fb_lower_loop (k, l, gw, &ix);
  FbKExpr *sy = bin (&r, FB_KB_ADD, bin (&r, FB_KB_ADD, fb_kx_acc (k, a_y1),
                                          bin (&r, FB_KB_MUL, fb_kx_cast (k, oc[2], r.t), fb_kx_acc (k, a_bh))),
                     bin (&r, FB_KB_DIV, bin (&r, FB_KB_MUL, bin (&r, FB_KB_ADD, fb_kx_cast (k, iy, r.t), cf (&r, 0.5)),
                                              fb_kx_acc (k, a_bh)), ghf));
  FbKExpr *sx = bin (&r, FB_KB_ADD, bin (&r, FB_KB_ADD, fb_kx_acc (k, a_x1),
                                          bin (&r, FB_KB_MUL, fb_kx_cast (k, oc[3], r.t), fb_kx_acc (k, a_bw))),
                     bin (&r, FB_KB_DIV, bin (&r, FB_KB_MUL, bin (&r, FB_KB_ADD, fb_kx_cast (k, ix, r.t), cf (&r, 0.5)),
                                              fb_kx_acc (k, a_bw)), gwf));
  /* Outside [-1, H] x [-1, W] (NaN included) a sample is 0. */
  FbKExpr *inside = bin (&r, FB_KB_AND,
                         bin (&r, FB_KB_AND, bin (&r, FB_KB_GE, sy, cf (&r, -1.0)), bin (&r, FB_KB_LE, sy, cf (&r, (double) H))),
                         bin (&r, FB_KB_AND, bin (&r, FB_KB_GE, sx, cf (&r, -1.0)), bin (&r, FB_KB_LE, sx, cf (&r, (double) W))));
  FbKExpr *y0, *y1, *ly, *x0, *x1, *lx;
  axis_taps (&r, fb_kx_select (k, inside, sy, cf (&r, 0.0)), H, &y0, &y1, &ly);
  axis_taps (&r, fb_kx_select (k, inside, sx, cf (&r, 0.0)), W, &x0, &x1, &lx);
  FbKExpr *hy = bin (&r, FB_KB_SUB, cf (&r, 1.0), ly), *hx = bin (&r, FB_KB_SUB, cf (&r, 1.0), lx);
  FbKExpr *ys[2] = { y0, y1 }, *xs[2] = { x0, x1 }, *wy[2] = { hy, ly }, *wx[2] = { hx, lx };
  FbKExpr *v = NULL;
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 2; b++)
      {
        FbKExpr *at = fb_kx_add (k, plane, fb_kx_add (k, fb_kx_mul_c (k, ys[a], W), xs[b]));
        FbKExpr *tap = bin (&r, FB_KB_MUL, bin (&r, FB_KB_MUL, wy[a], wx[b]),
                            fb_kx_cast (k, fb_kx_load (k, xa, at), r.t));
        v = v == NULL ? tap : bin (&r, spec.max ? FB_KB_MAX : FB_KB_ADD, v, tap);
      }
  v = fb_kx_select (k, inside, v, cf (&r, 0.0));
  g_ptr_array_add (l, fb_ks_assign (k, acc, bin (&r, spec.max ? FB_KB_MAX : FB_KB_ADD, fb_kx_acc (k, acc), v)));
  FbKExpr *count = fb_kx_binary (k, FB_KB_MUL, gh, gw);
  FbKExpr *result;
  if (spec.max)
    result = fb_kx_select (k, bin (&r, FB_KB_GT, count, fb_kx_index (k, 0)), fb_kx_acc (k, acc), cf (&r, 0.0));
  else
    result = bin (&r, FB_KB_DIV, fb_kx_acc (k, acc),
                  fb_kx_cast (k, fb_kx_binary (k, FB_KB_MAX, count, fb_kx_index (k, 1)), r.t));
  return _fb_lower_store (c, body, y, oc, result, error);
}
