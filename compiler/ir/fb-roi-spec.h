/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a RoiAlign node asks for, read and checked by one definition that inference, the
 * interpreter and the lowering share. */
#pragma once

#include "fb-graph.h"

G_BEGIN_DECLS

/* Adaptive sampling (sampling_ratio 0) takes ceil (bin extent) samples along an axis, at most
 * this many: only a region far larger than any image reaches it, and without a bound a hostile
 * box would keep a run busy for hours. */
#define FB_ROI_MAX_SAMPLES 1024

typedef struct {
  gboolean max;             /* mode "max", else "avg" */
  gboolean half_pixel;      /* coordinate_transformation_mode "half_pixel": boxes shift by half
                               a pixel and are not stretched to at least one pixel */
  int64_t  out_h, out_w;
  int64_t  sampling_ratio;  /* samples per bin along each axis; 0: adaptive */
  double   spatial_scale;
} FbRoiSpec;

/* FALSE with an FB_GRAPH_ERROR naming the attribute at fault (not the node: callers add it). */
gboolean fb_roi_spec_read (const FbNode *node, FbRoiSpec *spec, GError **error);

G_END_DECLS
