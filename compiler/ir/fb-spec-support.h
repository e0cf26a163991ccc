/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the operator rule modules (fb-*-spec.c) share: the opset a node without one is read
 * at, and their errors, in the graph's error domain. */
#pragma once

#include "fb-graph.h"

G_BEGIN_DECLS

/* A node that carries no opset gets the newest semantics, as in inference and the interpreter. */
#define FB_SPEC_LATEST_OPSET 21

/* Sets error (FB_GRAPH_ERROR, code) to the formatted message; returns FALSE. */
gboolean fb_spec_fail (GError **error, int code, const char *format, ...) G_GNUC_PRINTF (3, 4);

G_END_DECLS
