/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GridSample (2-D) as generated loops: in parallel over (n, output row, output column), the
 * sampling point is unnormalized and padded once, then every channel gathers its taps. The
 * arithmetic follows the interpreter's (fb-interp-grid.c) step by step. Coordinates are clamped
 * a little outside the plane before they become indices, so that no value of the grid, however
 * large or NaN, makes an address outside the input. */
#include "fb-lower-private.h"

#include <math.h>
#include <string.h>

typedef struct {
  FbKernel *k;
  FbDType   t;
  int       pad;        /* 0 zeros, 1 border, 2 reflection */
  gboolean  align;
  guint     xa;
  int64_t   H, W;
} Grid;

static FbKExpr *
cf (Grid *g, double v)
{
  return fb_kx_const_f (g->k, g->t, v);
}

static FbKExpr *
bin (Grid *g, FbKBinary op, FbKExpr *a, FbKExpr *b)
{
  return fb_kx_binary (g->k, op, a, b);
}

static FbKExpr *
clampf (Grid *g, FbKExpr *v, double lo, double hi)
{
  return bin (g, FB_KB_MIN, bin (g, FB_KB_MAX, v, cf (g, lo)), cf (g, hi));
}

static FbKExpr *
reflect (Grid *g, FbKExpr *v, double twice_low, double twice_high)
{
  if (twice_low == twice_high)
    return cf (g, 0.0);
  double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  v = fb_kx_unary (g->k, FB_KU_ABS, bin (g, FB_KB_SUB, v, cf (g, lo)));
  FbKExpr *extra = bin (g, FB_KB_FMOD, v, cf (g, span));
  FbKExpr *flips = fb_kx_unary (g->k, FB_KU_FLOOR, bin (g, FB_KB_DIV, v, cf (g, span)));
  FbKExpr *odd = bin (g, FB_KB_NE, bin (g, FB_KB_FMOD, flips, cf (g, 2.0)), cf (g, 0.0));
  return fb_kx_select (g->k, odd, bin (g, FB_KB_ADD, bin (g, FB_KB_SUB, cf (g, span), extra), cf (g, lo)),
                       bin (g, FB_KB_ADD, extra, cf (g, lo)));
}

static FbKExpr *
pad_coord (Grid *g, FbKExpr *v, int64_t size)
{
  if (g->pad == 1)
    return clampf (g, v, 0, (double) (size - 1));
  if (g->pad == 2)
    {
      v = g->align ? reflect (g, v, 0, 2.0 * (size - 1)) : reflect (g, v, -1, 2.0 * size - 1);
      return clampf (g, v, 0, (double) (size - 1));
    }
  return v;
}

/* The pixel at whole-number coordinates (fy, fx) of the plane starting at base, 0 outside. */
static FbKExpr *
pixel (Grid *g, FbKExpr *base, FbKExpr *fy, FbKExpr *fx)
{
  FbKernel *k = g->k;
  FbKExpr *iy = fb_kx_cast (k, clampf (g, fy, -8, (double) g->H + 8), FB_DTYPE_INT64);
  FbKExpr *ix = fb_kx_cast (k, clampf (g, fx, -8, (double) g->W + 8), FB_DTYPE_INT64);
  FbKExpr *inside = bin (g, FB_KB_AND,
                         bin (g, FB_KB_AND, bin (g, FB_KB_GE, iy, fb_kx_index (k, 0)),
                              bin (g, FB_KB_LT, iy, fb_kx_index (k, g->H))),
                         bin (g, FB_KB_AND, bin (g, FB_KB_GE, ix, fb_kx_index (k, 0)),
                              bin (g, FB_KB_LT, ix, fb_kx_index (k, g->W))));
  FbKExpr *cy = bin (g, FB_KB_MIN, bin (g, FB_KB_MAX, iy, fb_kx_index (k, 0)), fb_kx_index (k, g->H - 1));
  FbKExpr *cx = bin (g, FB_KB_MIN, bin (g, FB_KB_MAX, ix, fb_kx_index (k, 0)), fb_kx_index (k, g->W - 1));
  FbKExpr *v = fb_kx_load (k, g->xa, fb_kx_add (k, base, fb_kx_add (k, fb_kx_mul_c (k, cy, g->W), cx)));
  return fb_kx_select (k, inside, fb_kx_cast (k, v, g->t), cf (g, 0.0));
}

static void
cubic_weights (Grid *g, FbKExpr *t, FbKExpr **w)
{
  const double A = -0.75;
  FbKExpr *xs[4] = { bin (g, FB_KB_ADD, t, cf (g, 1.0)), t, bin (g, FB_KB_SUB, cf (g, 1.0), t),
                     bin (g, FB_KB_SUB, cf (g, 2.0), t) };
  for (int i = 0; i < 4; i++)
    {
      FbKExpr *x = xs[i];
      if (i == 0 || i == 3)
        w[i] = bin (g, FB_KB_SUB,
                    bin (g, FB_KB_MUL, bin (g, FB_KB_ADD,
                                            bin (g, FB_KB_MUL, bin (g, FB_KB_SUB, bin (g, FB_KB_MUL, cf (g, A), x),
                                                                    cf (g, 5 * A)), x),
                                            cf (g, 8 * A)), x),
                    cf (g, 4 * A));
      else
        w[i] = bin (g, FB_KB_ADD,
                    bin (g, FB_KB_MUL, bin (g, FB_KB_MUL, bin (g, FB_KB_SUB, bin (g, FB_KB_MUL, cf (g, A + 2), x),
                                                           cf (g, A + 3)), x), x),
                    cf (g, 1.0));
    }
}

gboolean
_fb_lower_grid_sample (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *grid = node->inputs[1], *y = node->outputs[0];
  int xr, gr;
  int64_t xd[FB_MAX_RANK], gd[FB_MAX_RANK];
  if (!_fb_lower_dims (x, &xr, xd) || !_fb_lower_dims (grid, &gr, gd) || xr != 4 || gr != 4 ||
      gd[3] != 2 || xd[2] < 1 || xd[3] < 1)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                           "needs static X [N, C, H, W] and grid [N, H_out, W_out, 2]");
  const char *ms = fb_node_attr_string (node, "mode", "bilinear");
  const char *ps = fb_node_attr_string (node, "padding_mode", "zeros");
  Grid g = { .k = k, .t = x->dtype == FB_DTYPE_FLOAT64 ? FB_DTYPE_FLOAT64 : FB_DTYPE_FLOAT32,
             .pad = !strcmp (ps, "border") ? 1 : !strcmp (ps, "reflection") ? 2 : 0,
             .align = fb_node_attr_int (node, "align_corners", 0) != 0,
             .H = xd[2], .W = xd[3] };
  gboolean nearest = !strcmp (ms, "nearest"), bicubic = !strcmp (ms, "bicubic");
  int64_t N = xd[0], C = xd[1], Ho = gd[1], Wo = gd[2];
  g.xa = _fb_lower_arg (c, x, FB_KARG_INPUT);
  guint ga = _fb_lower_arg (c, grid, FB_KARG_INPUT), ya = _fb_lower_out_arg (c, y);
  int64_t nest[3] = { N, Ho, Wo };
  FbKExpr *co[3], *ch;
  GPtrArray *body = _fb_lower_nest (c, 3, nest, co, (double) (N * C * Ho * Wo) * (bicubic ? 40 : 10));
  FbKExpr *gi = fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, co[0], Ho), co[1]), Wo), co[2]), 2);
  FbKExpr *gx = fb_kx_cast (k, fb_kx_load (k, ga, gi), g.t);
  FbKExpr *gy = fb_kx_cast (k, fb_kx_load (k, ga, fb_kx_add_c (k, gi, 1)), g.t);
  FbKExpr *fx, *fy;
  if (g.align)
    {
      fx = bin (&g, FB_KB_MUL, bin (&g, FB_KB_DIV, bin (&g, FB_KB_ADD, gx, cf (&g, 1)), cf (&g, 2)), cf (&g, (double) (g.W - 1)));
      fy = bin (&g, FB_KB_MUL, bin (&g, FB_KB_DIV, bin (&g, FB_KB_ADD, gy, cf (&g, 1)), cf (&g, 2)), cf (&g, (double) (g.H - 1)));
    }
  else
    {
      fx = bin (&g, FB_KB_DIV, bin (&g, FB_KB_SUB, bin (&g, FB_KB_MUL, bin (&g, FB_KB_ADD, gx, cf (&g, 1)), cf (&g, (double) g.W)), cf (&g, 1)), cf (&g, 2));
      fy = bin (&g, FB_KB_DIV, bin (&g, FB_KB_SUB, bin (&g, FB_KB_MUL, bin (&g, FB_KB_ADD, gy, cf (&g, 1)), cf (&g, (double) g.H)), cf (&g, 1)), cf (&g, 2));
    }
  if (!bicubic)
    {
      fx = pad_coord (&g, fx, g.W);
      fy = pad_coord (&g, fy, g.H);
    }
  guint ax = fb_kernel_new_acc (k, g.t), ay = fb_kernel_new_acc (k, g.t);
  g_ptr_array_add (body, fb_ks_assign (k, ax, fx));
  g_ptr_array_add (body, fb_ks_assign (k, ay, fy));
  fx = fb_kx_acc (k, ax);
  fy = fb_kx_acc (k, ay);
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, C), &ch);
  FbKExpr *base = fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, co[0], C), ch), g.H * g.W);
  FbKExpr *v;
  if (nearest)
    v = pixel (&g, base, fb_kx_unary (k, FB_KU_ROUND, fy), fb_kx_unary (k, FB_KU_ROUND, fx));
  else
    {
      FbKExpr *x0 = fb_kx_unary (k, FB_KU_FLOOR, fx), *y0 = fb_kx_unary (k, FB_KU_FLOOR, fy);
      FbKExpr *tx = bin (&g, FB_KB_SUB, fx, x0), *ty = bin (&g, FB_KB_SUB, fy, y0);
      if (!bicubic)
        {
          FbKExpr *x1 = bin (&g, FB_KB_ADD, x0, cf (&g, 1)), *y1 = bin (&g, FB_KB_ADD, y0, cf (&g, 1));
          FbKExpr *ux = bin (&g, FB_KB_SUB, cf (&g, 1), tx), *uy = bin (&g, FB_KB_SUB, cf (&g, 1), ty);
          v = bin (&g, FB_KB_MUL, bin (&g, FB_KB_MUL, pixel (&g, base, y0, x0), ux), uy);
          v = bin (&g, FB_KB_ADD, v, bin (&g, FB_KB_MUL, bin (&g, FB_KB_MUL, pixel (&g, base, y0, x1), tx), uy));
          v = bin (&g, FB_KB_ADD, v, bin (&g, FB_KB_MUL, bin (&g, FB_KB_MUL, pixel (&g, base, y1, x0), ux), ty));
          v = bin (&g, FB_KB_ADD, v, bin (&g, FB_KB_MUL, bin (&g, FB_KB_MUL, pixel (&g, base, y1, x1), tx), ty));
        }
      else
        {
          FbKExpr *wx[4], *wy[4];
          cubic_weights (&g, tx, wx);
          cubic_weights (&g, ty, wy);
          v = cf (&g, 0.0);
          for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
              {
                FbKExpr *py = pad_coord (&g, bin (&g, FB_KB_ADD, y0, cf (&g, a - 1)), g.H);
                FbKExpr *px = pad_coord (&g, bin (&g, FB_KB_ADD, x0, cf (&g, b - 1)), g.W);
                /* Padded taps are whole numbers only before reflection; truncate as the
                 * interpreter does. */
                py = fb_kx_cast (k, fb_kx_cast (k, clampf (&g, py, -8, (double) g.H + 8), FB_DTYPE_INT64), g.t);
                px = fb_kx_cast (k, fb_kx_cast (k, clampf (&g, px, -8, (double) g.W + 8), FB_DTYPE_INT64), g.t);
                v = bin (&g, FB_KB_ADD, v, bin (&g, FB_KB_MUL, bin (&g, FB_KB_MUL, wy[a], wx[b]),
                                                pixel (&g, base, py, px)));
              }
        }
    }
  FbKExpr *yi = fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, co[0], C), ch), Ho), co[1]), Wo), co[2]);
  g_ptr_array_add (l, fb_ks_store (k, ya, yi, fb_kx_cast (k, v, y->dtype)));
  return TRUE;
}
