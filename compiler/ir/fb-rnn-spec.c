/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-rnn-spec.h"

#include <string.h>

/* The names, parameter counts and defaults of ONNX's recurrent activations. */
static const struct {
  const char  *name;
  FbRnnActKind kind;
  int          n_params;      /* how many of alpha, beta it takes */
  double       alpha, beta;   /* defaults */
} act_table[] = {
  { "Sigmoid", FB_RNN_SIGMOID, 0, 0, 0 },
  { "Tanh", FB_RNN_TANH, 0, 0, 0 },
  { "Relu", FB_RNN_RELU, 0, 0, 0 },
  { "Affine", FB_RNN_AFFINE, 2, 1.0, 0.0 },
  { "LeakyRelu", FB_RNN_LEAKY_RELU, 1, 0.01, 0 },
  { "ThresholdedRelu", FB_RNN_THRESHOLDED_RELU, 1, 1.0, 0 },
  { "ScaledTanh", FB_RNN_SCALED_TANH, 2, 1.0, 1.0 },
  { "HardSigmoid", FB_RNN_HARD_SIGMOID, 2, 0.2, 0.5 },
  { "Elu", FB_RNN_ELU, 1, 1.0, 0 },
  { "Softsign", FB_RNN_SOFTSIGN, 0, 0, 0 },
  { "Softplus", FB_RNN_SOFTPLUS, 0, 0, 0 },
};

int
fb_rnn_directions (const FbNode *node)
{
  const char *d;

  g_return_val_if_fail (node != NULL, 0);
  d = fb_node_attr_string (node, "direction", "forward");
  if (strcmp (d, "forward") == 0 || strcmp (d, "reverse") == 0)
    return 1;
  if (strcmp (d, "bidirectional") == 0)
    return 2;
  return 0;
}

gboolean
fb_rnn_read_activations (const FbNode *node, int per_dir, FbRnnAct *acts, GError **error)
{
  int dirs, want;
  const FbAttr *names;
  guint n_alpha, n_beta, ia = 0, ib = 0;
  const float *alpha, *beta;

  g_return_val_if_fail (node != NULL && acts != NULL, FALSE);
  dirs = fb_rnn_directions (node);
  want = dirs * per_dir;
  names = fb_node_attr (node, "activations");
  alpha = fb_node_attr_floats (node, "activation_alpha", &n_alpha);
  beta = fb_node_attr_floats (node, "activation_beta", &n_beta);
  if (dirs == 0)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED, "direction '%s' is unknown",
                   fb_node_attr_string (node, "direction", ""));
      return FALSE;
    }
  if (names != NULL && (names->type != FB_ATTR_STRINGS || names->strings.n != (guint) want))
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                   "activations must list %d functions", want);
      return FALSE;
    }
  for (int i = 0; i < want; i++)
    {
      const char *name = names ? names->strings.v[i] : (i % per_dir == 0 && node->op != FB_OP_RNN ? "Sigmoid" : "Tanh");
      guint k;

      for (k = 0; k < G_N_ELEMENTS (act_table); k++)
        if (g_ascii_strcasecmp (act_table[k].name, name) == 0)
          break;
      if (k == G_N_ELEMENTS (act_table))
        {
          g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                       "activation '%s' is unknown", name);
          return FALSE;
        }
      acts[i].kind = act_table[k].kind;
      acts[i].alpha = act_table[k].alpha;
      acts[i].beta = act_table[k].beta;
      if (act_table[k].n_params >= 1 && ia < n_alpha)
        acts[i].alpha = alpha[ia++];
      if (act_table[k].n_params >= 2 && ib < n_beta)
        acts[i].beta = beta[ib++];
    }
  return TRUE;
}
