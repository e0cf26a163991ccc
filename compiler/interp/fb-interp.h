/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The reference interpreter: the oracle every stage and every backend is checked against.
 * It favours clarity over speed; reductions accumulate in double. */
#pragma once

#include "fb-graph.h"

#include <gio/gio.h>

G_BEGIN_DECLS

#define FB_INTERP_ERROR (fb_interp_error_quark ())
GQuark fb_interp_error_quark (void);

typedef enum {
  FB_INTERP_ERROR_UNSUPPORTED,   /* an operator, attribute or dtype the interpreter lacks */
  FB_INTERP_ERROR_INPUT,         /* a fed tensor does not match the graph's input */
  FB_INTERP_ERROR_RUNTIME,       /* a data-dependent failure: index out of range, bad shape */
  FB_INTERP_ERROR_CANCELLED,
} FbInterpError;

/* Runs graph on inputs (FbTensor*, in the order of graph->inputs; an input that is also given
 * as a constant may be NULL). Returns the outputs (FbTensor*, in the order of graph->outputs,
 * with references; free with g_ptr_array_unref) or NULL with an error naming the node. */
GPtrArray *fb_interp_run       (const FbGraph *graph, GPtrArray *inputs, GCancellable *cancellable,
                                GError **error);
/* Evaluates one node: inputs has node->n_inputs entries (NULL for omitted optional inputs);
 * on success outputs[0..n_outputs-1] receive new references (NULL for omitted outputs). */
gboolean   fb_interp_node      (const FbNode *node, FbTensor *const *inputs, FbTensor **outputs,
                                GError **error);
/* fb_interp_node for a node whose subgraphs (If branches, a Loop body) read values of the
 * graph around it: outer maps each such const FbValue* to its FbTensor* (borrowed), and the
 * bodies find them there before falling back on the values' constants. NULL outer is the same
 * as fb_interp_node. */
gboolean   fb_interp_node_with_scope (const FbNode *node, FbTensor *const *inputs,
                                      FbTensor **outputs, GHashTable *outer, GError **error);
/* Whether fb_interp_node can evaluate this node (operator, dtype and attributes). */
gboolean   fb_interp_supports  (const FbNode *node);
/* Whether tensor can feed the graph input `input`: its element type and every fixed extent of
 * the declared shape; FALSE with an FB_INTERP_ERROR_INPUT error saying what differs. */
gboolean   fb_interp_check_input (const FbValue *input, const FbTensor *tensor, GError **error);

G_END_DECLS
