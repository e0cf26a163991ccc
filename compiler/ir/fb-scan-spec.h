/* SPDX-License-Identifier: GPL-3.0-or-later */
/* How a Scan node lays out its inputs and outputs, read and checked by one definition that
 * inference and the interpreter share. Scan-8 carries a batch axis and an optional
 * sequence_lens input first; from opset 9 there is no batch, and every scan input and output
 * names its own axis and direction. */
#pragma once

#include "fb-graph.h"

G_BEGIN_DECLS

typedef struct {
  gboolean  batched;      /* Scan-8: axis 0 of every input and output is the batch */
  guint     first;        /* the node input that holds the first state (1 for Scan-8) */
  guint     n_state;      /* N: states carried from one iteration to the next */
  guint     n_in;         /* M: scan inputs, cut into one slice per iteration */
  guint     n_out;        /* K: scan outputs, one slice per iteration stacked */
  int64_t  *in_axis;      /* per scan input: its scan axis as written (-r..r-1); Scan-8: 1 */
  gboolean *in_reverse;   /* per scan input: scanned from the last slice to the first */
  int64_t  *out_axis;     /* per scan output: where the iterations stack, against the rank of
                             the stacked output; Scan-8: 1 */
  gboolean *out_reverse;  /* per scan output: the first iteration's slice comes last */
} FbScanSpec;

/* FALSE with an FB_GRAPH_ERROR naming what is wrong (not the node: callers add it). Clear the
 * spec after a failed read too. */
gboolean fb_scan_spec_read  (const FbNode *node, FbScanSpec *spec, GError **error);
void     fb_scan_spec_clear (FbScanSpec *spec);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (FbScanSpec, fb_scan_spec_clear)

G_END_DECLS
