/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The structural verifier that runs between passes in debug builds and after import. */
#include "fb-graph.h"

static gboolean
verify_graph (const FbGraph *g, GHashTable *defined, GHashTable *ids, GError **error)
{
  for (guint i = 0; i < g->inputs->len; i++)
    g_hash_table_add (defined, g_ptr_array_index (g->inputs, i));
  for (guint i = 0; i < g->values->len; i++)
    {
      FbValue *v = g_ptr_array_index (g->values, i);
      /* Initializers are defined up front; a Constant node's value is defined by the node. */
      if (v->constant != NULL && v->producer == NULL)
        g_hash_table_add (defined, v);
      if (v->graph != g)
        {
          g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID,
                       "value '%s' is listed in a graph that does not own it", v->name);
          return FALSE;
        }
    }
  for (guint i = 0; i < g->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (g->nodes, i);
      const FbOpInfo *info = fb_op_info (n->op);

      if (!g_hash_table_add (ids, GUINT_TO_POINTER (n->id)))
        {
          g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID,
                       "node '%s' reuses id %u", n->name, n->id);
          return FALSE;
        }
      if (n->op != FB_OP_UNKNOWN &&
          (n->n_inputs < info->min_inputs ||
           (info->max_inputs != FB_ARITY_ANY && n->n_inputs > info->max_inputs) ||
           n->n_outputs < info->min_outputs ||
           (info->max_outputs != FB_ARITY_ANY && n->n_outputs > info->max_outputs)))
        {
          g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID,
                       "node '%s' (%s) has %u inputs and %u outputs, outside what %s takes",
                       n->name, n->op_type, n->n_inputs, n->n_outputs, info->name);
          return FALSE;
        }
      for (guint k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] != NULL && !g_hash_table_contains (defined, n->inputs[k]))
          {
            g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID,
                         "node '%s' (%s) reads '%s' before anything defines it",
                         n->name, n->op_type, n->inputs[k]->name);
            return FALSE;
          }
      for (guint a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == FB_ATTR_GRAPH)
          {
            /* A body sees everything defined so far in the enclosing scopes. */
            g_autoptr(GHashTable) scope = g_hash_table_new (NULL, NULL);
            GHashTableIter it;
            gpointer key;
            g_hash_table_iter_init (&it, defined);
            while (g_hash_table_iter_next (&it, &key, NULL))
              g_hash_table_add (scope, key);
            if (!verify_graph (n->attrs[a].g, scope, ids, error))
              {
                g_prefix_error (error, "in the '%s' body of node '%s': ", n->attrs[a].name, n->name);
                return FALSE;
              }
          }
      for (guint k = 0; k < n->n_outputs; k++)
        {
          FbValue *v = n->outputs[k];
          if (v == NULL)
            continue;
          if (v->producer != n || v->producer_output != k)
            {
              g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID,
                           "output %u of node '%s' does not point back to it", k, n->name);
              return FALSE;
            }
          if (!g_hash_table_add (defined, v))
            {
              g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID,
                           "value '%s' is defined twice (again by node '%s')", v->name, n->name);
              return FALSE;
            }
        }
    }
  for (guint i = 0; i < g->outputs->len; i++)
    {
      FbValue *v = g_ptr_array_index (g->outputs, i);
      if (!g_hash_table_contains (defined, v))
        {
          g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID,
                       "graph output '%s' is never produced", v->name);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
fb_graph_verify (const FbGraph *graph, GError **error)
{
  g_autoptr(GHashTable) defined = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) ids = g_hash_table_new (NULL, NULL);

  g_return_val_if_fail (graph != NULL, FALSE);
  return verify_graph (graph, defined, ids, error);
}
