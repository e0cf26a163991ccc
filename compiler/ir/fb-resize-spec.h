/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a Resize (opsets 10 to 19) or Upsample node asks for, and the coordinate arithmetic of
 * the ONNX spec: one definition that the interpreter and the CPU lowering both compute from,
 * so the two can only disagree on how they evaluate it, never on what it means. */
#pragma once

#include "fb-graph.h"

G_BEGIN_DECLS

typedef enum { FB_RESIZE_NEAREST, FB_RESIZE_LINEAR, FB_RESIZE_CUBIC } FbResizeMode;

typedef enum {
  FB_RESIZE_HALF_PIXEL,
  FB_RESIZE_HALF_PIXEL_SYMMETRIC,
  FB_RESIZE_PYTORCH_HALF_PIXEL,
  FB_RESIZE_ALIGN_CORNERS,
  FB_RESIZE_ASYMMETRIC,
  FB_RESIZE_TF_CROP_AND_RESIZE,
} FbResizeTransform;

typedef enum {
  FB_RESIZE_ROUND_PREFER_FLOOR,
  FB_RESIZE_ROUND_PREFER_CEIL,
  FB_RESIZE_FLOOR,
  FB_RESIZE_CEIL,
} FbResizeNearest;

typedef struct {
  FbResizeMode      mode;
  FbResizeTransform transform;       /* coordinate_transformation_mode */
  FbResizeNearest   nearest;         /* nearest_mode */
  double            cubic_a;         /* cubic_coeff_a */
  gboolean          exclude_outside;
  double            extrapolation;   /* extrapolation_value */
} FbResizeSpec;

/* Reads the node's attributes; FALSE with an FB_GRAPH_ERROR_UNSUPPORTED error naming the
 * attribute for values the spec does not define or this project does not compute (antialiased
 * linear and cubic resizing). */
gboolean fb_resize_spec_read          (const FbNode *node, FbResizeSpec *spec, GError **error);
/* The input coordinate that output coordinate x of an axis resized from in to out positions (at
 * scale) maps to; roi_start and roi_end are the axis's region of interest (tf_crop_and_resize). */
double   fb_resize_source_coord       (const FbResizeSpec *spec, double x, int64_t in, int64_t out,
                                       double scale, double roi_start, double roi_end);
/* The input index nearest mode picks for coordinate x, clamped to the axis. */
int64_t  fb_resize_nearest_index      (const FbResizeSpec *spec, double x, int64_t in);
/* The input indices an output position at input coordinate sx reads, and their weights: 1 tap
 * for nearest, 2 for linear, 4 for cubic (clamped to the axis; exclude_outside zeroes and
 * renormalizes). Returns the number of taps. */
int      fb_resize_taps               (const FbResizeSpec *spec, double sx, int64_t in,
                                       int64_t taps[4], double weights[4]);
/* The cubic convolution kernel's weight at distance s with coefficient a. */
double   fb_resize_cubic_weight       (double s, double a);

G_END_DECLS
