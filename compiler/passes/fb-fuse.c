/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Turning a group of nodes into one FUSED node whose body holds them, for the fusion passes.
 *
 * The body is self-contained: everything the members read from outside (activations and
 * weights alike) comes in through a body input bound to a node input, so a backend can lower a
 * body without looking at the enclosing graph. Members keep their node ids (the diff finds them
 * in the body); the values the rest of the graph reads keep theirs too, now produced by the
 * fused node. */
#include "fb-pass-private.h"

gboolean
_fb_used_outside (const FbValue *value, GHashTable *uses, GHashTable *inside)
{
  GPtrArray *users;

  g_assert (value != NULL && uses != NULL && inside != NULL);
  if (value->is_output)
    return TRUE;
  users = g_hash_table_lookup (uses, value);
  for (guint i = 0; users != NULL && i < users->len; i++)
    if (!g_hash_table_contains (inside, g_ptr_array_index (users, i)))
      return TRUE;
  return FALSE;
}

static FbValue *
body_value_like (FbGraph *body, const FbValue *outer)
{
  FbValue *v = fb_graph_add_value (body, outer->name, outer->dtype, &outer->shape);
  return v;
}

FbNode *
_fb_fuse_group (FbPassContext *ctx, FbGraph *graph, GPtrArray *members, const char *kind,
                const FbNode *anchor, GHashTable *uses)
{
  g_autoptr(GHashTable) inside = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) map = g_hash_table_new (NULL, NULL);       /* outer value -> body value */
  g_autoptr(GPtrArray) ext_in = g_ptr_array_new ();
  g_autoptr(GPtrArray) ext_out = g_ptr_array_new ();
  FbGraph *body;
  FbNode *fused;

  g_assert (ctx != NULL && graph != NULL && members != NULL && members->len > 0);
  g_assert (kind != NULL && anchor != NULL && uses != NULL);

  for (guint i = 0; i < members->len; i++)
    g_hash_table_add (inside, g_ptr_array_index (members, i));

  /* The interface: what comes in from outside and what leaves, in member order. */
  for (guint i = 0; i < members->len; i++)
    {
      FbNode *m = g_ptr_array_index (members, i);
      for (guint k = 0; k < m->n_inputs; k++)
        {
          FbValue *v = m->inputs[k];
          if (v == NULL || (v->producer && g_hash_table_contains (inside, v->producer)))
            continue;
          if (!g_ptr_array_find (ext_in, v, NULL))
            g_ptr_array_add (ext_in, v);
        }
      for (guint k = 0; k < m->n_outputs; k++)
        if (m->outputs[k] && _fb_used_outside (m->outputs[k], uses, inside))
          g_ptr_array_add (ext_out, m->outputs[k]);
    }
  g_assert (ext_out->len > 0);

  body = fb_graph_new_subgraph (graph, "body");
  for (guint i = 0; i < ext_in->len; i++)
    {
      FbValue *outer = g_ptr_array_index (ext_in, i);
      FbValue *bv = body_value_like (body, outer);
      bv->is_input = TRUE;
      /* A backend may inline a constant operand (an epsilon, a clip bound) instead of loading
       * it; the value is still fed through the node's input. */
      if (outer->constant)
        bv->constant = fb_tensor_ref (outer->constant);
      g_ptr_array_add (body->inputs, bv);
      g_hash_table_insert (map, outer, bv);
    }

  fused = fb_graph_add_node (graph, FB_OP_FUSED, anchor->name, ext_in->len, ext_out->len);
  fused->opset = anchor->opset;
  for (guint i = 0; i < ext_in->len; i++)
    fused->inputs[i] = g_ptr_array_index (ext_in, i);

  for (guint i = 0; i < members->len; i++)
    {
      FbNode *m = g_ptr_array_index (members, i);
      g_ptr_array_remove (graph->nodes, m);
      g_ptr_array_add (body->nodes, m);
      for (guint k = 0; k < m->n_inputs; k++)
        if (m->inputs[k] != NULL)
          m->inputs[k] = g_hash_table_lookup (map, m->inputs[k]);
      for (guint k = 0; k < m->n_outputs; k++)
        {
          FbValue *outer = m->outputs[k];
          FbValue *bv;
          if (outer == NULL)
            continue;
          bv = body_value_like (body, outer);
          g_hash_table_insert (map, outer, bv);
          fb_node_set_output (m, k, bv);
          /* A value only the members read is gone from the enclosing graph. */
          if (!g_ptr_array_find (ext_out, outer, NULL))
            g_ptr_array_remove (graph->values, outer);
        }
      fb_node_add_prov (graph, fused, m->prov, m->n_prov);
      _fb_pass_record_fate (ctx, m->id, FB_CHANGE_FUSED, fused->id);
    }

  for (guint i = 0; i < ext_out->len; i++)
    {
      FbValue *outer = g_ptr_array_index (ext_out, i);
      fb_node_set_output (fused, i, outer);
      g_ptr_array_add (body->outputs, g_hash_table_lookup (map, outer));
    }

  {
    FbAttr a_body = { .name = "body", .type = FB_ATTR_GRAPH, .g = body };
    FbAttr a_kind = { .name = "kind", .type = FB_ATTR_STRING, .s = kind };
    fb_node_set_attr (graph, fused, &a_body);
    fb_node_set_attr (graph, fused, &a_kind);
  }
  return fused;
}
