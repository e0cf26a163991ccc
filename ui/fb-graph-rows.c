/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Constants as rows: which Constant nodes leave the picture to become rows of the boxes that
 * read them, and which rows each box carries. Real exports (Paddle, older PyTorch) make a third
 * of their nodes Constants feeding a Reshape's shape or an Add's scalar; as boxes they double
 * the picture and hide the data flow behind edges that carry nothing interesting. */
#include "fb-graph-layout-private.h"

/* A Constant that only feeds nodes, each through one of its inputs. One that is a graph output,
 * feeds nothing, or is captured by a subgraph (the capture is no input row of the node holding
 * the subgraph) stays a box, so that nothing it does goes missing from the picture. */
static gboolean
can_be_row (FbGraphLayout *self,
            const FbNode  *node)
{
  FbValue *out;
  GPtrArray *users;

  if (node->op != FB_OP_CONSTANT || node->n_outputs != 1 || (out = node->outputs[0]) == NULL
      || out->constant == NULL || out->is_output)
    return FALSE;
  users = g_hash_table_lookup (self->uses, out);
  if (users == NULL || users->len == 0)
    return FALSE;
  for (guint u = 0; u < users->len; u++)
    {
      const FbNode *user = g_ptr_array_index (users, u);
      gboolean reads = FALSE;

      for (guint k = 0; k < user->n_inputs && !reads; k++)
        reads = user->inputs[k] == out;
      if (!reads || _fb_graph_layout_node_index (self, user) < 0)
        return FALSE;
    }
  return TRUE;
}

static gboolean
is_row_value (FbGraphLayout *self,
              const FbValue *value)
{
  int producer;

  if (value == NULL || value->constant == NULL)
    return FALSE;
  if (value->producer == NULL)
    return TRUE;   /* an initializer, or what fold-constants made of a node */
  producer = _fb_graph_layout_node_index (self, value->producer);
  return producer >= 0 && self->is_row[producer];
}

void
_fb_graph_layout_build_rows (FbGraphLayout *self)
{
  FbGraph *graph = self->graph;
  guint n = graph->nodes->len, total = 0;

  self->is_row = g_new0 (gboolean, n);
  self->row_start = g_new0 (guint, n + 1);
  self->value_reader = g_hash_table_new (NULL, NULL);
  if (self->constants == FB_GRAPH_CONSTANTS_AS_ROWS)
    for (guint i = 0; i < n; i++)
      self->is_row[i] = can_be_row (self, g_ptr_array_index (graph->nodes, i));

  for (guint i = 0; i < n; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);

      if (!self->is_row[i])
        for (guint k = 0; k < node->n_inputs; k++)
          total += is_row_value (self, node->inputs[k]);
    }
  self->rows = g_new0 (FbConstantRow, MAX (total, 1));
  total = 0;
  for (guint i = 0; i < n; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);

      self->row_start[i] = total;
      if (self->is_row[i])
        continue;
      for (guint k = 0; k < node->n_inputs; k++)
        {
          FbValue *value = node->inputs[k];
          FbConstantRow *row;

          if (!is_row_value (self, value))
            continue;
          row = &self->rows[total++];
          row->value = value;
          row->constant = value->producer;
          row->input = k;
          if (!g_hash_table_contains (self->value_reader, value))
            g_hash_table_insert (self->value_reader, value, node);
        }
    }
  self->row_start[n] = total;

  /* What the view finds a selected constant by in another stage: ids are stable across stages. */
  self->value_by_id = g_hash_table_new (NULL, NULL);
  self->value_by_name = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < graph->values->len; i++)
    {
      FbValue *value = g_ptr_array_index (graph->values, i);

      g_hash_table_insert (self->value_by_id, GUINT_TO_POINTER (value->id), value);
      if (value->name != NULL && !g_hash_table_contains (self->value_by_name, value->name))
        g_hash_table_insert (self->value_by_name, (gpointer) value->name, value);
    }
}

/* A Constant drawn as rows belongs where its first reader is: selecting it opens that group,
 * and a mark on it counts there. */
void
_fb_graph_layout_place_rows (FbGraphLayout *self)
{
  for (guint i = 0; i < self->graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (self->graph->nodes, i);
      FbNode *reader;
      int r;

      if (!self->is_row[i])
        continue;
      reader = g_hash_table_lookup (self->value_reader, node->outputs[0]);
      g_assert (reader != NULL);
      r = _fb_graph_layout_node_index (self, reader);
      self->node_group[i] = self->node_group[r];
      self->node_child[i] = self->node_child[r];
    }
}

void
_fb_graph_layout_free_rows (FbGraphLayout *self)
{
  g_free (self->is_row);
  g_free (self->row_start);
  g_free (self->rows);
  g_clear_pointer (&self->value_reader, g_hash_table_unref);
  g_clear_pointer (&self->value_by_id, g_hash_table_unref);
  g_clear_pointer (&self->value_by_name, g_hash_table_unref);
}

FbGraphConstants
fb_graph_layout_get_constants (FbGraphLayout *layout)
{
  g_return_val_if_fail (layout != NULL, FB_GRAPH_CONSTANTS_AS_ROWS);
  return layout->constants;
}

gboolean
fb_graph_layout_node_is_row (FbGraphLayout *layout,
                             const FbNode  *node)
{
  int index;

  g_return_val_if_fail (layout != NULL, FALSE);
  g_return_val_if_fail (node != NULL, FALSE);

  index = _fb_graph_layout_node_index (layout, node);
  return index >= 0 && layout->is_row[index];
}

const FbConstantRow *
fb_graph_layout_node_rows (FbGraphLayout *layout,
                           const FbNode  *node,
                           guint         *n_rows)
{
  int index;

  g_return_val_if_fail (layout != NULL, NULL);
  g_return_val_if_fail (node != NULL, NULL);
  g_return_val_if_fail (n_rows != NULL, NULL);

  index = _fb_graph_layout_node_index (layout, node);
  *n_rows = index < 0 ? 0 : layout->row_start[index + 1] - layout->row_start[index];
  return *n_rows > 0 ? &layout->rows[layout->row_start[index]] : NULL;
}

FbNode *
fb_graph_layout_constant_reader (FbGraphLayout *layout,
                                 const FbValue *value)
{
  g_return_val_if_fail (layout != NULL, NULL);
  g_return_val_if_fail (value != NULL, NULL);
  return g_hash_table_lookup (layout->value_reader, value);
}

FbValue *
fb_graph_layout_find_value (FbGraphLayout *layout,
                            guint          value_id)
{
  g_return_val_if_fail (layout != NULL, NULL);
  return g_hash_table_lookup (layout->value_by_id, GUINT_TO_POINTER (value_id));
}

FbValue *
fb_graph_layout_find_value_by_name (FbGraphLayout *layout,
                                    const char    *name)
{
  g_return_val_if_fail (layout != NULL, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  return g_hash_table_lookup (layout->value_by_name, name);
}
