/* SPDX-License-Identifier: GPL-3.0-or-later */
/* RoiAlign: every box of rois, on the image of X its batch index names, cut into
 * output_height x output_width bins; each bin the average (or the maximum) of bilinear samples
 * on a regular grid inside it. Sampling and the edges follow ONNX Runtime's kernel, which the
 * node cases were made with: a sample more than a pixel outside the image counts 0, one just
 * outside is clamped onto the edge, and "max" takes the largest of the four weighted taps. */
#include "fb-interp-private.h"
#include "fb-roi-spec.h"

#include <math.h>

/* The four taps and weights of a bilinear sample at (y, x) of an H x W plane; weights 0 (and
 * taps at 0) when the sample falls outside [-1, H] x [-1, W]. */
static void
bilinear (double y, double x, int64_t H, int64_t W, int64_t *pos, double *w)
{
  if (!(y >= -1.0 && y <= (double) H && x >= -1.0 && x <= (double) W))
    {
      for (int i = 0; i < 4; i++)
        pos[i] = 0, w[i] = 0.0;
      return;
    }
  y = MAX (y, 0.0);
  x = MAX (x, 0.0);
  int64_t y0 = (int64_t) y, x0 = (int64_t) x, y1, x1;
  if (y0 >= H - 1)
    y0 = y1 = H - 1, y = (double) y0;
  else
    y1 = y0 + 1;
  if (x0 >= W - 1)
    x0 = x1 = W - 1, x = (double) x0;
  else
    x1 = x0 + 1;
  double ly = y - (double) y0, lx = x - (double) x0, hy = 1.0 - ly, hx = 1.0 - lx;
  pos[0] = y0 * W + x0, pos[1] = y0 * W + x1, pos[2] = y1 * W + x0, pos[3] = y1 * W + x1;
  w[0] = hy * hx, w[1] = hy * lx, w[2] = ly * hx, w[3] = ly * lx;
}

/* Samples along a bin's axis: the ratio, or (adaptive) as many as the bin is pixels long. */
static int64_t
grid (const FbRoiSpec *spec, double extent, int64_t bins)
{
  double g;
  if (spec->sampling_ratio > 0)
    return spec->sampling_ratio;
  g = ceil (extent / (double) bins);
  return g >= 1.0 ? (int64_t) MIN (g, (double) FB_ROI_MAX_SAMPLES) : 0;
}

gboolean
_fb_interp_roi_align (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                      GError **error)
{
  FbTensor *x = in[0], *rois = in[1], *idx = in[2];
  g_autoptr(GError) local = NULL;
  FbRoiSpec spec;
  g_autofree double *xv = NULL, *rv = NULL, *yv = NULL;
  g_autofree int64_t *bv = NULL;
  g_autoptr(FbTensor) y = NULL;

  if (!fb_roi_spec_read (node, &spec, &local))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "%s", local->message);
  if (!_fb_interp_need_float (node, x, error) || !_fb_interp_need_float (node, rois, error))
    return FALSE;
  if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || idx->rank != 1 ||
      idx->dims[0] != rois->dims[0] || fb_dtype_is_float (idx->dtype))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "needs X [N, C, H, W], rois [num_rois, 4] and integer batch_indices "
                            "[num_rois]");
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], R = rois->dims[0];
  int64_t oh = spec.out_h, ow = spec.out_w, dims[4] = { R, C, oh, ow };
  y = _fb_interp_new (node, x->dtype, 4, dims, error);
  if (y == NULL)
    return FALSE;
  xv = _fb_interp_read_f64 (x);
  rv = _fb_interp_read_f64 (rois);
  bv = _fb_interp_read_i64 (idx);
  yv = _fb_interp_alloc (node, y->numel, sizeof (double), error);
  if (yv == NULL)
    return FALSE;
  double offset = spec.half_pixel ? 0.5 : 0.0;
  for (int64_t r = 0; r < R; r++)
    {
      if (bv[r] < 0 || bv[r] >= N)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "batch_indices[%" G_GINT64_FORMAT "] = %" G_GINT64_FORMAT " names "
                                "no image of the %" G_GINT64_FORMAT, r, bv[r], N);
      const double *box = rv + r * 4;
      double x1 = box[0] * spec.spatial_scale - offset, y1 = box[1] * spec.spatial_scale - offset;
      double rw = box[2] * spec.spatial_scale - offset - x1;
      double rh = box[3] * spec.spatial_scale - offset - y1;
      /* output_half_pixel (the old behaviour) stretches a box to at least one pixel. */
      if (!spec.half_pixel)
        rw = MAX (rw, 1.0), rh = MAX (rh, 1.0);
      double bh = rh / (double) oh, bw = rw / (double) ow;
      int64_t gh = grid (&spec, rh, oh), gw = grid (&spec, rw, ow);
      /* An image without pixels has nothing to sample: every bin is 0. */
      if (H == 0 || W == 0)
        gh = gw = 0;
      double count = (double) MAX (gh * gw, 1);
      for (int64_t c = 0; c < C; c++)
        {
          const double *plane = xv + (bv[r] * C + c) * H * W;
          for (int64_t ph = 0; ph < oh; ph++)
            for (int64_t pw = 0; pw < ow; pw++)
              {
                double v = 0.0;
                gboolean first = TRUE;
                for (int64_t iy = 0; iy < gh; iy++)
                  for (int64_t ix = 0; ix < gw; ix++)
                    {
                      double sy = y1 + (double) ph * bh + ((double) iy + 0.5) * bh / (double) gh;
                      double sx = x1 + (double) pw * bw + ((double) ix + 0.5) * bw / (double) gw;
                      int64_t pos[4];
                      double w[4];
                      bilinear (sy, sx, H, W, pos, w);
                      if (!spec.max)
                        {
                          for (int t = 0; t < 4; t++)
                            v += w[t] * plane[pos[t]];
                          continue;
                        }
                      double m = w[0] * plane[pos[0]];
                      for (int t = 1; t < 4; t++)
                        m = MAX (m, w[t] * plane[pos[t]]);
                      v = first ? m : MAX (v, m);
                      first = FALSE;
                    }
                yv[((r * C + c) * oh + ph) * ow + pw] = spec.max ? v : v / count;
              }
        }
    }
  _fb_interp_write_f64 (y, yv);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}
