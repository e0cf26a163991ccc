/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-signal-spec.h"
#include "fb-spec-support.h"

#include <math.h>

/* Every error of these rules is about the node's shape or attributes. */
#define fail(error, ...) fb_spec_fail (error, FB_GRAPH_ERROR_SHAPE, __VA_ARGS__)

gboolean
fb_dft_spec (const FbNode *node, int rank, const int64_t *axis, FbDftSpec *spec, GError **error)
{
  int opset;
  int64_t a;

  g_return_val_if_fail (node != NULL && spec != NULL, FALSE);
  opset = node->opset > 0 ? node->opset : FB_SPEC_LATEST_OPSET;
  if (rank < 2)
    return fail (error, "the input has rank %d; it needs a signal axis and a last axis of the "
                 "real and imaginary parts", rank);
  /* Opset 20 made the axis an input and counts it from the back by default. */
  a = opset >= 20 ? (axis ? *axis : -2) : fb_node_attr_int (node, "axis", 1);
  if (a < 0)
    a += rank;
  if (a < 0 || a > rank - 2)
    return fail (error, "axis %" G_GINT64_FORMAT " is outside [%d, %d] for an input of rank %d",
                 opset >= 20 ? (axis ? *axis : -2) : fb_node_attr_int (node, "axis", 1), -rank,
                 rank - 2, rank);
  spec->axis = (int) a;
  spec->inverse = fb_node_attr_int (node, "inverse", 0) != 0;
  spec->onesided = fb_node_attr_int (node, "onesided", 0) != 0;
  return TRUE;
}

int64_t
fb_dft_bins (const FbDftSpec *spec, int64_t n)
{
  g_return_val_if_fail (spec != NULL, n);
  return n >= 0 && spec->onesided ? n / 2 + 1 : n;
}

gboolean
fb_stft_spec (const FbNode *node, int64_t length, gboolean complex, int64_t frame_step,
              int64_t frame_length, int64_t window_length, FbStftSpec *spec, GError **error)
{
  g_return_val_if_fail (node != NULL && spec != NULL, FALSE);
  spec->onesided = fb_node_attr_int (node, "onesided", 1) != 0;
  spec->frame_step = frame_step;
  spec->frames = spec->bins = -1;
  if (complex && spec->onesided)
    return fail (error, "a complex signal has no onesided transform (set onesided to 0)");
  if (frame_step == 0 || frame_step < -1)
    return fail (error, "frame_step %" G_GINT64_FORMAT " is not positive", frame_step);
  if (frame_length == -2 && window_length == -2)
    return fail (error, "neither frame_length nor a window gives the frame length");
  if (frame_length >= 0 && window_length >= 0 && frame_length != window_length)
    return fail (error, "frame_length %" G_GINT64_FORMAT " differs from the window's length %"
                 G_GINT64_FORMAT, frame_length, window_length);
  spec->frame_length = frame_length != -2 ? frame_length : window_length;
  if (spec->frame_length == 0 || spec->frame_length < -1)
    return fail (error, "the frame length %" G_GINT64_FORMAT " is not positive",
                 spec->frame_length);
  if (spec->frame_length > 0)
    spec->bins = spec->onesided ? spec->frame_length / 2 + 1 : spec->frame_length;
  if (length >= 0 && spec->frame_length > 0 && length < spec->frame_length)
    return fail (error, "the signal (%" G_GINT64_FORMAT " samples) is shorter than one frame (%"
                 G_GINT64_FORMAT ")", length, spec->frame_length);
  if (length >= 0 && spec->frame_length > 0 && frame_step > 0)
    spec->frames = 1 + (length - spec->frame_length) / frame_step;
  return TRUE;
}

int64_t *
fb_mel_edges (int64_t num_mel_bins, int64_t dft_length, double sample_rate,
              double lower_edge_hertz, double upper_edge_hertz)
{
  int64_t n = MAX (num_mel_bins, 0) + 2;
  int64_t *edges = g_new (int64_t, n);
  double low = 2595.0 * log10 (1.0 + lower_edge_hertz / 700.0);
  double high = 2595.0 * log10 (1.0 + upper_edge_hertz / 700.0);
  /* The reference divides the mel range by the number of edges, not of the gaps between. */
  double step = (high - low) / (double) n;

  for (int64_t k = 0; k < n; k++)
    {
      double hz = 700.0 * (pow (10.0, ((double) k * step + low) / 2595.0) - 1.0);
      double bin = floor ((double) (dft_length + 1) * hz / sample_rate);
      /* A bin no spectrogram reaches (NaN, infinities, huge values) weighs nothing anywhere. */
      edges[k] = isfinite (bin) && fabs (bin) < 4e18 ? (int64_t) bin : -1;
    }
  return edges;
}

double
fb_mel_weight (const int64_t *edges, int64_t j)
{
  int64_t l, c, h;
  double w = 0.0;

  g_return_val_if_fail (edges != NULL, 0.0);
  l = edges[0];
  c = edges[1];
  h = edges[2];
  /* The rising side (a single 1 when it has no width), then the falling side over it. */
  if (c == l)
    w = j == c ? 1.0 : 0.0;
  else if (l <= j && j <= c)
    w = (double) (j - l) / (double) (c - l);
  if (h > c && c <= j && j < h)
    w = (double) (h - j) / (double) (h - c);
  return w;
}
