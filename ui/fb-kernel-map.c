/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-kernel-map.h"

static gboolean
body_contains (const FbGraph *body,
               const FbNode  *node)
{
  for (guint i = 0; body != NULL && i < body->nodes->len; i++)
    {
      const FbNode *member = g_ptr_array_index (body->nodes, i);

      if (member == node || member->id == node->id)
        return TRUE;
      if (member->op == FB_OP_FUSED && body_contains (fb_node_attr_graph (member, "body"), node))
        return TRUE;
    }
  return FALSE;
}

/* The top-level fused node of graph whose body holds node, at any depth. */
static const FbNode *
fused_owner (const FbGraph *graph,
             const FbNode  *node)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (graph->nodes, i);

      if (n->op == FB_OP_FUSED && body_contains (fb_node_attr_graph (n, "body"), node))
        return n;
    }
  return NULL;
}

static const FbChange *
change_of (const FbStage *stage,
           guint          id)
{
  for (guint i = 0; stage->changes != NULL && i < stage->changes->len; i++)
    {
      const FbChange *change = &g_array_index (stage->changes, FbChange, i);

      if (change->node_id == id)
        return change;
    }
  return NULL;
}

static const char *
name_in (const FbGraph *graph,
         guint          id)
{
  const FbNode *node = fb_graph_find_node (graph, id);

  return node != NULL && node->name != NULL ? node->name : "?";
}

static gboolean
shares_provenance (const FbNode *a,
                   const FbNode *b)
{
  for (guint i = 0; i < a->n_prov; i++)
    for (guint k = 0; k < b->n_prov; k++)
      if (a->prov[i] == b->prov[k])
        return TRUE;
  return FALSE;
}

static void
add_step (GString    *trail,
          const char *step)
{
  if (trail->len > 0)
    g_string_append (trail, "; ");
  g_string_append (trail, step);
}

static char *
finish_note (GString *trail)
{
  if (trail->len == 0)
    {
      g_string_free (trail, TRUE);
      return NULL;
    }
  trail->str[0] = g_ascii_toupper (trail->str[0]);
  return g_string_free (trail, FALSE);
}

GArray *
fb_kernel_map_node (FbRun         *run,
                    guint          index,
                    const FbNode  *node,
                    char         **note)
{
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (guint));
  GString *trail = g_string_new (NULL);
  const FbStage *stage, *final;
  const char *removed_by = NULL;
  gboolean lost = FALSE;
  guint id;

  g_return_val_if_fail (run != NULL, ids);
  g_return_val_if_fail (index < fb_run_n_stages (run), ids);
  g_return_val_if_fail (node != NULL, ids);

  stage = fb_run_get_stage (run, index);
  final = fb_run_get_stage (run, fb_run_n_stages (run) - 1);
  id = node->id;
  if (fb_graph_find_node (stage->graph, id) != node)
    {
      const FbNode *owner = fused_owner (stage->graph, node);

      if (owner != NULL)
        {
          g_autofree char *step = g_strdup_printf ("member of “%s”", owner->name);

          add_step (trail, step);
          id = owner->id;
        }
      else
        lost = fb_graph_find_node (stage->graph, id) == NULL;
    }

  /* Each stage's changes say what became of the node in that pass, against the stage before. */
  for (guint t = index + 1; !lost && t < fb_run_n_stages (run); t++)
    {
      const FbStage *st = fb_run_get_stage (run, t);
      const FbChange *change = change_of (st, id);
      g_autofree char *step = NULL;

      if (change == NULL)
        continue;
      if (change->kind == FB_CHANGE_FUSED && change->fused_into != 0)
        {
          id = change->fused_into;
          /* fold-batchnorm's diff calls it fused; to people it is folded. */
          step = g_strdup_printf ("%s into “%s” by %s", g_str_has_prefix (st->name, "fold") ? "folded" : "fused",
                                  name_in (st->graph, id), st->name);
        }
      else if (change->kind == FB_CHANGE_REMOVED && change->went_to != 0)
        {
          id = change->went_to;
          step = g_strdup_printf ("folded into “%s” by %s", name_in (st->graph, id), st->name);
        }
      else if (change->kind == FB_CHANGE_REMOVED)
        {
          removed_by = st->name;
          lost = TRUE;
        }
      if (step != NULL)
        add_step (trail, step);
    }

  if (!lost && fb_graph_find_node (final->graph, id) != NULL)
    {
      g_array_append_val (ids, id);
      if (note != NULL)
        *note = finish_note (trail);
      else
        g_string_free (trail, TRUE);
      return ids;
    }

  /* No trail: the final nodes that stand for any of the same original ONNX nodes carry its work. */
  for (guint i = 0; i < final->graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (final->graph->nodes, i);

      if (shares_provenance (node, n))
        g_array_append_val (ids, n->id);
    }
  g_string_truncate (trail, 0);
  if (ids->len > 0)
    {
      g_autofree char *step = g_strdup_printf ("removed by %s; its original ONNX nodes live on in “%s”%s",
                                               removed_by != NULL ? removed_by : "a pass",
                                               name_in (final->graph, g_array_index (ids, guint, 0)),
                                               ids->len > 1 ? " and others" : "");

      add_step (trail, step);
    }
  else
    {
      g_autofree char *step = g_strdup_printf ("%s by %s: nothing in the final stage computes it, "
                                               "so no kernel does",
                                               removed_by != NULL && g_str_has_prefix (removed_by, "fold")
                                               ? "folded away" : "removed",
                                               removed_by != NULL ? removed_by : "a pass");

      add_step (trail, step);
    }
  if (note != NULL)
    *note = finish_note (trail);
  else
    g_string_free (trail, TRUE);
  return ids;
}
