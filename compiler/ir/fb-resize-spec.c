/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-resize-spec.h"

#include <math.h>
#include <string.h>

static const char *const transforms[] = {
  "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
  "tf_crop_and_resize",
};
static const char *const nearest_modes[] = {
  "round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
};

static gboolean
unsupported (GError **error, const char *what, const char *value)
{
  g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED, "%s '%s' is unknown", what, value);
  return FALSE;
}

static int
lookup (const char *const *names, guint n, const char *name)
{
  for (guint i = 0; i < n; i++)
    if (strcmp (names[i], name) == 0)
      return (int) i;
  return -1;
}

gboolean
fb_resize_spec_read (const FbNode *node, FbResizeSpec *spec, GError **error)
{
  const char *mode, *ct, *nm;
  /* Nodes built in memory without an opset get the latest semantics. */
  int opset = node->opset > 0 ? node->opset : 21;
  int t, n;

  g_return_val_if_fail (node != NULL && spec != NULL, FALSE);
  mode = fb_node_attr_string (node, "mode", "nearest");
  ct = fb_node_attr_string (node, "coordinate_transformation_mode", "half_pixel");
  nm = fb_node_attr_string (node, "nearest_mode", "round_prefer_floor");
  if (strcmp (mode, "nearest") == 0)
    spec->mode = FB_RESIZE_NEAREST;
  else if (strcmp (mode, "linear") == 0 || strcmp (mode, "bilinear") == 0)
    spec->mode = FB_RESIZE_LINEAR;
  else if (strcmp (mode, "cubic") == 0 && node->op == FB_OP_RESIZE)
    spec->mode = FB_RESIZE_CUBIC;
  else
    return unsupported (error, "mode", mode);

  /* Upsample and Resize-10 map coordinates asymmetrically and pick nearest by flooring. */
  if (node->op == FB_OP_UPSAMPLE || opset < 11)
    {
      spec->transform = FB_RESIZE_ASYMMETRIC;
      spec->nearest = FB_RESIZE_FLOOR;
    }
  else
    {
      if ((t = lookup (transforms, G_N_ELEMENTS (transforms), ct)) < 0)
        return unsupported (error, "coordinate_transformation_mode", ct);
      if ((n = lookup (nearest_modes, G_N_ELEMENTS (nearest_modes), nm)) < 0)
        return unsupported (error, "nearest_mode", nm);
      spec->transform = (FbResizeTransform) t;
      spec->nearest = (FbResizeNearest) n;
    }
  spec->cubic_a = fb_node_attr_float (node, "cubic_coeff_a", -0.75f);
  spec->exclude_outside = fb_node_attr_int (node, "exclude_outside", 0) != 0;
  spec->extrapolation = fb_node_attr_float (node, "extrapolation_value", 0.0f);
  if (fb_node_attr_int (node, "antialias", 0) != 0 && spec->mode != FB_RESIZE_NEAREST)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                   "antialiased resizing is not supported");
      return FALSE;
    }
  return TRUE;
}

double
fb_resize_source_coord (const FbResizeSpec *spec, double x, int64_t in, int64_t out, double scale,
                        double roi_start, double roi_end)
{
  switch (spec->transform)
    {
    case FB_RESIZE_HALF_PIXEL:
      return (x + 0.5) / scale - 0.5;
    case FB_RESIZE_HALF_PIXEL_SYMMETRIC:
      {
        double adjustment = out / (scale * in);
        double center = in / 2.0;
        return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
      }
    case FB_RESIZE_PYTORCH_HALF_PIXEL:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case FB_RESIZE_ALIGN_CORNERS:
      return out == 1 ? 0.0 : x * (double) (in - 1) / (double) (out - 1);
    case FB_RESIZE_ASYMMETRIC:
      return x / scale;
    case FB_RESIZE_TF_CROP_AND_RESIZE:
      if (out > 1)
        return roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / (double) (out - 1);
      return 0.5 * (roi_start + roi_end) * (in - 1);
    default:
      g_assert_not_reached ();
    }
}

int64_t
fb_resize_nearest_index (const FbResizeSpec *spec, double x, int64_t in)
{
  double r;

  switch (spec->nearest)
    {
    case FB_RESIZE_ROUND_PREFER_FLOOR: r = (x == floor (x) + 0.5) ? floor (x) : round (x); break;
    case FB_RESIZE_ROUND_PREFER_CEIL:  r = (x == floor (x) + 0.5) ? ceil (x) : round (x); break;
    case FB_RESIZE_FLOOR:              r = floor (x); break;
    case FB_RESIZE_CEIL: default:      r = ceil (x); break;
    }
  return (int64_t) CLAMP (r, 0, (double) (in - 1));
}

double
fb_resize_cubic_weight (double s, double a)
{
  s = fabs (s);
  if (s <= 1)
    return ((a + 2) * s - (a + 3)) * s * s + 1;
  if (s < 2)
    return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
  return 0;
}

int
fb_resize_taps (const FbResizeSpec *spec, double sx, int64_t in, int64_t taps[4], double weights[4])
{
  int64_t base;
  double frac, total = 0;

  g_return_val_if_fail (spec != NULL, 0);
  /* An empty input axis has nothing to read: the output takes zeros, never an index into it. */
  if (in <= 0)
    return 0;
  if (spec->mode == FB_RESIZE_NEAREST)
    {
      taps[0] = fb_resize_nearest_index (spec, sx, in);
      weights[0] = 1;
      return 1;
    }
  if (spec->mode == FB_RESIZE_LINEAR)
    {
      double c = CLAMP (sx, 0, (double) (in - 1));
      int64_t x0 = (int64_t) floor (c);
      taps[0] = x0;
      taps[1] = MIN (x0 + 1, in - 1);
      weights[0] = 1 - (c - x0);
      weights[1] = c - x0;
      return 2;
    }
  base = (int64_t) floor (sx);
  frac = sx - base;
  for (int t = 0; t < 4; t++)
    {
      int64_t at = base - 1 + t;
      double wt = fb_resize_cubic_weight (frac - (t - 1), spec->cubic_a);
      if (at < 0 || at >= in)
        {
          if (spec->exclude_outside)
            wt = 0;
          at = CLAMP (at, 0, in - 1);
        }
      taps[t] = at;
      weights[t] = wt;
      total += wt;
    }
  if (spec->exclude_outside && total != 0)
    for (int t = 0; t < 4; t++)
      weights[t] /= total;
  return 4;
}
