/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The verifier that runs between passes in debug builds: the structural checks of
 * fb_graph_verify, then that every value's dtype and shape agree with what its producer computes
 * (shape inference run again on scratch copies of the outputs, so the stage is not touched),
 * that constants agree with their tensors, and that fused bodies match their nodes. */
#include "fb-pass-private.h"
#include "fb-infer.h"

#include <string.h>

static gboolean verify_nodes (FbGraph *g, GError **error);

static gboolean
value_matches (const FbValue *outer, const FbValue *inner)
{
  if (outer->dtype != FB_DTYPE_UNDEFINED && inner->dtype != FB_DTYPE_UNDEFINED &&
      outer->dtype != inner->dtype)
    return FALSE;
  if (outer->shape.rank < 0 || inner->shape.rank < 0)
    return TRUE;
  if (outer->shape.rank != inner->shape.rank)
    return FALSE;
  for (int i = 0; i < outer->shape.rank; i++)
    if (outer->shape.dim[i] >= 0 && inner->shape.dim[i] >= 0 &&
        outer->shape.dim[i] != inner->shape.dim[i])
      return FALSE;
  return TRUE;
}

static gboolean
describe_mismatch (GError **error, const FbNode *n, const char *what, const FbValue *a,
                   const FbValue *b)
{
  g_autofree char *sa = fb_shape_to_string (&a->shape);
  g_autofree char *sb = fb_shape_to_string (&b->shape);

  g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
               "node '%s' (%s): %s '%s' is %s[%s] but its body has %s[%s]", n->name, n->op_type,
               what, a->name, fb_dtype_name (a->dtype), sa, fb_dtype_name (b->dtype), sb);
  return FALSE;
}

static gboolean
verify_fused (FbGraph *g, FbNode *n, GError **error)
{
  FbGraph *body = fb_node_attr_graph (n, "body");

  if (body == NULL || fb_node_attr_string (n, "kind", NULL) == NULL)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID,
                   "fused node '%s' lacks its body or its kind", n->name);
      return FALSE;
    }
  if (body->inputs->len != n->n_inputs || body->outputs->len != n->n_outputs)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID,
                   "fused node '%s' has %u inputs and %u outputs but its body %u and %u",
                   n->name, n->n_inputs, n->n_outputs, body->inputs->len, body->outputs->len);
      return FALSE;
    }
  for (guint k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] && !value_matches (n->inputs[k], g_ptr_array_index (body->inputs, k)))
      return describe_mismatch (error, n, "input", n->inputs[k], g_ptr_array_index (body->inputs, k));
  for (guint k = 0; k < n->n_outputs; k++)
    if (n->outputs[k] && !value_matches (n->outputs[k], g_ptr_array_index (body->outputs, k)))
      return describe_mismatch (error, n, "output", n->outputs[k], g_ptr_array_index (body->outputs, k));
  if (!verify_nodes (body, error))
    {
      g_prefix_error (error, "in the body of '%s': ", n->name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
verify_inferred (FbGraph *g, FbNode *n, GError **error)
{
  FbValue scratch[8];
  FbValue **saved;
  gboolean ok;

  /* Inference merges into what a value already says and fails on a contradiction, which is
   * exactly the check; scratch copies keep the stage's own values as they were. */
  if (n->n_outputs > G_N_ELEMENTS (scratch))
    return TRUE;
  saved = g_newa (FbValue *, MAX (n->n_outputs, 1));
  for (guint k = 0; k < n->n_outputs; k++)
    {
      saved[k] = n->outputs[k];
      if (saved[k] == NULL)
        continue;
      scratch[k] = *saved[k];
      n->outputs[k] = &scratch[k];
    }
  ok = fb_infer_node (g, n, error);
  for (guint k = 0; k < n->n_outputs; k++)
    {
      /* Inference may attach a computed constant to a scratch copy; it is not the stage's. */
      if (saved[k] != NULL && scratch[k].constant != saved[k]->constant)
        fb_tensor_unref (scratch[k].constant);
      n->outputs[k] = saved[k];
    }
  return ok;
}

static gboolean
verify_nodes (FbGraph *g, GError **error)
{
  for (guint i = 0; i < g->values->len; i++)
    {
      const FbValue *v = g_ptr_array_index (g->values, i);
      if (v->constant != NULL)
        {
          FbShape s = fb_tensor_shape (v->constant);
          if (v->dtype != v->constant->dtype || !fb_shape_equal (&s, &v->shape))
            {
              g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
                           "constant '%s' does not have the dtype or shape of its tensor", v->name);
              return FALSE;
            }
        }
    }
  for (guint i = 0; i < g->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (g->nodes, i);

      if (n->op == FB_OP_UNKNOWN)
        continue;
      if (n->op == FB_OP_FUSED)
        {
          if (!verify_fused (g, n, error))
            return FALSE;
          continue;
        }
      if (n->op == FB_OP_IF || n->op == FB_OP_LOOP || n->op == FB_OP_SCAN)
        continue;
      if (!verify_inferred (g, n, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
_fb_pipeline_verify (const FbGraph *graph, GError **error)
{
  g_assert (graph != NULL);
  if (!fb_graph_verify (graph, error))
    return FALSE;
  return verify_nodes ((FbGraph *) graph, error);
}
