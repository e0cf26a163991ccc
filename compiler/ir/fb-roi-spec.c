/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-roi-spec.h"
#include "fb-spec-support.h"

#include <string.h>

gboolean
fb_roi_spec_read (const FbNode *node, FbRoiSpec *spec, GError **error)
{
  const char *mode, *ctm;
  int opset;

  g_return_val_if_fail (node != NULL && spec != NULL, FALSE);
  opset = node->opset > 0 ? node->opset : FB_SPEC_LATEST_OPSET;
  mode = fb_node_attr_string (node, "mode", "avg");
  /* RoiAlign-10 had no coordinate_transformation_mode and computed "output_half_pixel"; opset 16
   * added it with the default "half_pixel". */
  ctm = fb_node_attr_string (node, "coordinate_transformation_mode",
                             opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (opset < 16 && fb_node_attr (node, "coordinate_transformation_mode") != NULL)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE, "attribute "
                   "'coordinate_transformation_mode' exists only from opset 16");
      return FALSE;
    }
  if (strcmp (mode, "avg") != 0 && strcmp (mode, "max") != 0)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE, "mode '%s' is not avg or max",
                   mode);
      return FALSE;
    }
  if (strcmp (ctm, "half_pixel") != 0 && strcmp (ctm, "output_half_pixel") != 0)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE, "coordinate_transformation_mode "
                   "'%s' is not half_pixel or output_half_pixel", ctm);
      return FALSE;
    }
  spec->max = strcmp (mode, "max") == 0;
  spec->half_pixel = strcmp (ctm, "half_pixel") == 0;
  spec->out_h = fb_node_attr_int (node, "output_height", 1);
  spec->out_w = fb_node_attr_int (node, "output_width", 1);
  spec->sampling_ratio = fb_node_attr_int (node, "sampling_ratio", 0);
  spec->spatial_scale = fb_node_attr_float (node, "spatial_scale", 1.0f);
  if (spec->out_h < 1 || spec->out_w < 1 || spec->out_h > G_MAXINT32 || spec->out_w > G_MAXINT32)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE, "output_height %" G_GINT64_FORMAT
                   " and output_width %" G_GINT64_FORMAT " must be positive", spec->out_h,
                   spec->out_w);
      return FALSE;
    }
  if (spec->sampling_ratio < 0 || spec->sampling_ratio > FB_ROI_MAX_SAMPLES)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE, "sampling_ratio %" G_GINT64_FORMAT
                   " is outside [0, %d]", spec->sampling_ratio, FB_ROI_MAX_SAMPLES);
      return FALSE;
    }
  return TRUE;
}
