/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cleanup: removes Identity and inference-mode Dropout, then dead nodes and values.
 *
 * Requires: a verified graph in topological order.
 * Preserves: value ids and names of everything kept, the graph's interface, shapes.
 * Invalidates: nothing later passes keep (uses tables must be rebuilt). */
#include "fb-pass-private.h"

/* Dropout is the identity at inference unless a constant training_mode says otherwise, and only
 * when nobody reads its mask. */
static gboolean
is_inference_dropout (const FbNode *n)
{
  FbValue *training = fb_node_input (n, 2);
  double mode;

  if (n->n_outputs > 1 && n->outputs[1] != NULL)
    return FALSE;
  if (training == NULL)
    return TRUE;
  return _fb_const_uniform (training, &mode) && mode == 0;
}

gboolean
_fb_pass_cleanup (FbPassContext *ctx, FbGraph *graph, GError **error)
{
  g_autoptr(GHashTable) uses = fb_graph_build_uses (graph);
  guint n_identity = 0, n_dropout = 0, n_dead;
  guint before;

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);
      FbValue *in, *out;
      GPtrArray *users;

      if (n->op != FB_OP_IDENTITY && !(n->op == FB_OP_DROPOUT && is_inference_dropout (n)))
        continue;
      in = fb_node_input (n, 0);
      out = n->outputs[0];
      if (in == NULL || out == NULL || !_fb_can_replace (out, in))
        continue;
      /* Whoever reads the output gets the provenance of the node that disappears. */
      users = g_hash_table_lookup (uses, out);
      for (guint u = 0; users && u < users->len; u++)
        fb_node_add_prov (graph, g_ptr_array_index (users, u), n->prov, n->n_prov);
      if (users && users->len > 0)
        _fb_pass_record_fate (ctx, n->id, FB_CHANGE_REMOVED,
                              ((FbNode *) g_ptr_array_index (users, 0))->id);
      /* The node still names out as its output; with no reader left it is dead. */
      fb_graph_replace_uses (graph, out, in);
      if (n->op == FB_OP_IDENTITY)
        n_identity++;
      else
        n_dropout++;
      /* Readers of out now read in: keep the uses table right for later Identity chains. */
      if (users)
        {
          GPtrArray *in_users = g_hash_table_lookup (uses, in);
          if (in_users == NULL)
            {
              in_users = g_ptr_array_new ();
              g_hash_table_insert (uses, in, in_users);
            }
          for (guint u = 0; u < users->len; u++)
            g_ptr_array_add (in_users, g_ptr_array_index (users, u));
          g_ptr_array_set_size (users, 0);
        }
    }

  before = graph->nodes->len;
  fb_graph_remove_dead (graph);
  /* Every Identity and Dropout counted above lost all its readers, so it is among the removed. */
  n_dead = before - graph->nodes->len - n_identity - n_dropout;

  if (n_identity)
    _fb_pass_note (ctx, "removed %u Identity", n_identity);
  if (n_dropout)
    _fb_pass_note (ctx, "removed %u Dropout", n_dropout);
  if (n_dead)
    _fb_pass_note (ctx, "removed %u dead nodes", n_dead);
  return TRUE;
}
