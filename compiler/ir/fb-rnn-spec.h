/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a GRU or LSTM node asks for: its directions and its gate activations, read once by one
 * definition that the interpreter and the CPU lowering share. */
#pragma once

#include "fb-graph.h"

G_BEGIN_DECLS

typedef enum {
  FB_RNN_SIGMOID, FB_RNN_TANH, FB_RNN_RELU, FB_RNN_AFFINE, FB_RNN_LEAKY_RELU,
  FB_RNN_THRESHOLDED_RELU, FB_RNN_SCALED_TANH, FB_RNN_HARD_SIGMOID, FB_RNN_ELU, FB_RNN_SOFTSIGN,
  FB_RNN_SOFTPLUS,
} FbRnnActKind;

typedef struct {
  FbRnnActKind kind;
  double       alpha, beta;   /* the parameters the function takes, defaults filled in */
} FbRnnAct;

/* 1 for "forward" and "reverse", 2 for "bidirectional", 0 for anything else. */
int      fb_rnn_directions        (const FbNode *node);
/* Fills acts[directions * per_dir] from the activations attribute, or the defaults (sigmoid,
 * then tanh for the rest of each direction); activation_alpha and activation_beta are taken
 * in order by the functions that use them. FALSE with an FB_GRAPH_ERROR_UNSUPPORTED error for
 * an unknown direction or function, or a list of the wrong length. */
gboolean fb_rnn_read_activations  (const FbNode *node, int per_dir, FbRnnAct *acts, GError **error);

G_END_DECLS
