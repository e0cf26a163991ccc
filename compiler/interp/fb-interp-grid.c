/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GridSample over 2-D inputs: X [N, C, H, W] sampled at grid [N, Ho, Wo, 2] of (x, y) in
 * [-1, 1], with nearest, bilinear or bicubic interpolation and zeros, border or reflection
 * padding. Bicubic pads every tap it reads; the others pad the sampling point. */
#include "fb-interp-private.h"

#include <math.h>
#include <string.h>

typedef enum { GRID_BILINEAR, GRID_NEAREST, GRID_BICUBIC } GridMode;
typedef enum { GRID_ZEROS, GRID_BORDER, GRID_REFLECTION } GridPad;

gboolean
_fb_interp_check_grid_sample (const FbNode *node, GError **error)
{
  const char *mode = fb_node_attr_string (node, "mode", "bilinear");
  const char *pad = fb_node_attr_string (node, "padding_mode", "zeros");
  if (strcmp (mode, "bilinear") && strcmp (mode, "nearest") && strcmp (mode, "bicubic"))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "mode '%s' is not bilinear, nearest or bicubic", mode);
  if (strcmp (pad, "zeros") && strcmp (pad, "border") && strcmp (pad, "reflection"))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "padding_mode '%s' is not zeros, border or reflection", pad);
  return TRUE;
}

/* Folds a coordinate back into [low, high] (given doubled) by reflecting at the edges. */
static double
reflect (double v, double twice_low, double twice_high)
{
  if (twice_low == twice_high)
    return 0;
  double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  v = fabs (v - lo);
  double extra = fmod (v, span);
  int64_t flips = (int64_t) floor (v / span);
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

static double
pad_coord (double v, int64_t size, GridPad pad, gboolean align)
{
  if (pad == GRID_BORDER)
    return CLAMP (v, 0, (double) (size - 1));
  if (pad == GRID_REFLECTION)
    {
      v = align ? reflect (v, 0, 2.0 * (size - 1)) : reflect (v, -1, 2.0 * size - 1);
      return CLAMP (v, 0, (double) (size - 1));
    }
  return v;
}

/* The pixel at integer (y, x) of one plane, 0 outside it. */
static double
pixel (const double *plane, int64_t H, int64_t W, int64_t y, int64_t x)
{
  return y >= 0 && y < H && x >= 0 && x < W ? plane[y * W + x] : 0.0;
}

/* A coordinate as an index; NaN and values no plane reaches become an index far outside every
 * plane (converting them would be undefined). */
static int64_t
to_index (double v)
{
  return fabs (v) < 1e15 ? (int64_t) v : -(G_GINT64_CONSTANT (1) << 60);
}

static void
cubic_weights (double t, double *w)
{
  const double A = -0.75;
  double x;
  x = t + 1; w[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  x = t;     w[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 1 - t; w[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 2 - t; w[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

gboolean
_fb_interp_grid_sample (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                        GError **error)
{
  FbTensor *x = in[0], *grid = in[1];
  const char *ms = fb_node_attr_string (node, "mode", "bilinear");
  const char *ps = fb_node_attr_string (node, "padding_mode", "zeros");
  gboolean align = fb_node_attr_int (node, "align_corners", 0) != 0;

  if (!_fb_interp_check_grid_sample (node, error) || !_fb_interp_need_float (node, x, error) ||
      !_fb_interp_need_float (node, grid, error))
    return FALSE;
  if (x->rank != 4 || grid->rank != 4 || grid->dims[0] != x->dims[0] || grid->dims[3] != 2)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "only 2-D sampling is supported: X [N, C, H, W] and grid "
                            "[N, H_out, W_out, 2]");
  GridMode mode = !strcmp (ms, "nearest") ? GRID_NEAREST : !strcmp (ms, "bicubic") ? GRID_BICUBIC
                : GRID_BILINEAR;
  GridPad pad = !strcmp (ps, "border") ? GRID_BORDER : !strcmp (ps, "reflection") ? GRID_REFLECTION
              : GRID_ZEROS;
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  int64_t Ho = grid->dims[1], Wo = grid->dims[2];
  int64_t dims[4] = { N, C, Ho, Wo };
  g_autoptr(FbTensor) y = _fb_interp_new (node, x->dtype, 4, dims, error);
  if (y == NULL)
    return FALSE;
  g_autofree double *xv = _fb_interp_read_f64 (x);
  g_autofree double *gv = _fb_interp_read_f64 (grid);
  g_autofree double *r = g_new (double, MAX (y->numel, 1));
  for (int64_t n = 0; n < N; n++)
    for (int64_t i = 0; i < Ho; i++)
      for (int64_t j = 0; j < Wo; j++)
        {
          const double *g = gv + ((n * Ho + i) * Wo + j) * 2;
          /* Unnormalize: -1 and 1 are the corner pixels' centres, or their outer edges. */
          double fx = align ? (g[0] + 1) / 2 * (W - 1) : ((g[0] + 1) * W - 1) / 2;
          double fy = align ? (g[1] + 1) / 2 * (H - 1) : ((g[1] + 1) * H - 1) / 2;
          if (mode != GRID_BICUBIC)
            {
              fx = pad_coord (fx, W, pad, align);
              fy = pad_coord (fy, H, pad, align);
            }
          for (int64_t c = 0; c < C; c++)
            {
              const double *plane = xv + (n * C + c) * H * W;
              double v;
              if (mode == GRID_NEAREST)
                v = pixel (plane, H, W, to_index (nearbyint (fy)), to_index (nearbyint (fx)));
              else if (mode == GRID_BILINEAR)
                {
                  double x0 = floor (fx), y0 = floor (fy), tx = fx - x0, ty = fy - y0;
                  int64_t ix = to_index (x0), iy = to_index (y0);
                  v = pixel (plane, H, W, iy, ix) * (1 - tx) * (1 - ty) +
                      pixel (plane, H, W, iy, ix + 1) * tx * (1 - ty) +
                      pixel (plane, H, W, iy + 1, ix) * (1 - tx) * ty +
                      pixel (plane, H, W, iy + 1, ix + 1) * tx * ty;
                }
              else
                {
                  double x0 = floor (fx), y0 = floor (fy), wx[4], wy[4];
                  cubic_weights (fx - x0, wx);
                  cubic_weights (fy - y0, wy);
                  v = 0;
                  for (int a = 0; a < 4; a++)
                    for (int b = 0; b < 4; b++)
                      {
                        double ty = pad_coord (y0 - 1 + a, H, pad, align);
                        double tx = pad_coord (x0 - 1 + b, W, pad, align);
                        v += wy[a] * wx[b] * pixel (plane, H, W, to_index (ty), to_index (tx));
                      }
                }
              r[((n * C + c) * Ho + i) * Wo + j] = v;
            }
        }
  _fb_interp_write_f64 (y, r);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}
