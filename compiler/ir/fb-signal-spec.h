/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a DFT, STFT or MelWeightMatrix node asks for, read by one definition that inference, the
 * interpreter and the lowering share, so that the three agree on every size and every refusal. */
#pragma once

#include "fb-graph.h"

G_BEGIN_DECLS

typedef struct {
  int      axis;        /* the transformed axis, in [0, rank - 2] */
  gboolean inverse;
  gboolean onesided;    /* only the frequencies [0, n / 2] are kept */
} FbDftSpec;

/* The DFT of node over an input of the given rank, whose last axis holds the real (extent 1)
 * or the real and imaginary parts (extent 2). Before opset 20 the axis is the attribute (default
 * 1); from opset 20 it is the input *axis (NULL when absent: -2). FALSE with an FB_GRAPH_ERROR
 * naming what is wrong (not the node: callers add it). */
gboolean fb_dft_spec       (const FbNode *node, int rank, const int64_t *axis, FbDftSpec *spec,
                            GError **error);
/* Extent of the output along the axis for a transform of n points. */
int64_t  fb_dft_bins       (const FbDftSpec *spec, int64_t n);

typedef struct {
  int64_t  frame_length;
  int64_t  frame_step;
  int64_t  frames;      /* 1 + (signal length - frame length) / step */
  int64_t  bins;        /* frame_length, or frame_length / 2 + 1 when onesided */
  gboolean onesided;
} FbStftSpec;

/* The STFT of node: a signal of `length` samples (complex when its last extent is 2), frames
 * of frame_length (the input; -2 when absent) or of the window's length (window_length; -2
 * when there is no window), frame_step apart. A size given as -1 is unknown: what depends on
 * it comes out -1 and is not checked. */
gboolean fb_stft_spec      (const FbNode *node, int64_t length, gboolean complex,
                            int64_t frame_step, int64_t frame_length, int64_t window_length,
                            FbStftSpec *spec, GError **error);

/* MelWeightMatrix's num_mel_bins + 2 band edges as spectrogram bins: equal steps on the mel
 * scale from lower_edge_hertz to upper_edge_hertz, as ONNX's reference places them (g_free).
 * Output element [j, i] is then fb_mel_weight (edges + i, j). */
int64_t *fb_mel_edges      (int64_t num_mel_bins, int64_t dft_length, double sample_rate,
                            double lower_edge_hertz, double upper_edge_hertz);
/* The weight of spectrogram bin j in the triangle over edges[0], edges[1], edges[2]. */
double   fb_mel_weight     (const int64_t *edges, int64_t j);

G_END_DECLS
