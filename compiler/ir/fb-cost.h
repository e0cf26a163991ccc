/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Modeled cost of a node: what the profiler labels "modeled" and the roofline view plots. */
#pragma once

#include "fb-graph.h"

G_BEGIN_DECLS

typedef struct {
  double flops;            /* floating-point (or integer) operations, multiply-add = 2 */
  double bytes_read;       /* every input read once */
  double bytes_written;    /* every output written once */
} FbCost;

/* Zeros where shapes are unknown. */
FbCost fb_node_cost (const FbNode *node);

G_END_DECLS
