/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Old operator versions brought to the current form at import (fb-onnx-upgrade.c). */
#pragma once

#include "fb-onnx-private.h"

G_BEGIN_DECLS

/* Upgrades node (bound: inputs and attributes set) in place. *written: the node's text as the
 * file wrote it when anything changed, else NULL (caller frees). *pending: the legacy broadcast
 * of a binary operator still needs the operands' ranks: call _fb_onnx_upgrade_broadcast once
 * they are inferred. Errors (FB_IMPORT_ERROR_UNSUPPORTED) name the node. */
gboolean _fb_onnx_upgrade_node      (FbGraph *graph, FbNode *node, char **written,
                                     gboolean *pending, GError **error);
/* Turns broadcast=1/axis into numpy broadcasting; may append an Unsqueeze node to graph (the
 * caller infers it and sorts the graph again). */
gboolean _fb_onnx_upgrade_broadcast (FbGraph *graph, FbNode *node, GError **error);

G_END_DECLS
