/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-graph-layout-private.h"
#include "fb-graph-style-private.h"

G_DEFINE_QUARK (fb-layout-error-quark, fb_layout_error)

typedef struct {
  gpointer       data;
  GDestroyNotify release;
} Hold;
FbGraphLayout *
fb_graph_layout_new (FbGraph       *graph,
                     FbGraphLayout *previous,
                     GArray        *changes)
{
  return fb_graph_layout_new_full (graph, previous, changes, FB_GRAPH_CONSTANTS_AS_ROWS);
}

FbGraphLayout *
fb_graph_layout_new_full (FbGraph          *graph,
                          FbGraphLayout    *previous,
                          GArray           *changes,
                          FbGraphConstants  constants)
{
  FbGraphLayout *self;

  g_return_val_if_fail (graph != NULL, NULL);
  g_return_val_if_fail (previous == NULL || previous->constants == constants, NULL);

  self = g_new0 (FbGraphLayout, 1);
  g_atomic_ref_count_init (&self->ref_count);
  g_mutex_init (&self->mutex);
  g_mutex_init (&self->compute_mutex);
  self->shapes = g_hash_table_new_full (g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref, NULL);
  self->graph = graph;
  self->previous = previous != NULL ? fb_graph_layout_ref (previous) : NULL;
  self->holds = g_ptr_array_new ();
  self->groups = g_ptr_array_new_with_free_func ((GDestroyNotify) _fb_graph_group_free);
  self->group_by_path = g_hash_table_new (g_str_hash, g_str_equal);
  self->node_index = g_hash_table_new (NULL, NULL);
  self->node_by_id = g_hash_table_new (NULL, NULL);
  self->node_by_name = g_hash_table_new (g_str_hash, g_str_equal);
  self->fused_members = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_array_unref);
  self->node_group = g_new0 (FbGraphGroup *, graph->nodes->len);
  self->node_child = g_new0 (guint, graph->nodes->len);

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);

      g_hash_table_insert (self->node_index, node, GUINT_TO_POINTER (i + 1));
      g_hash_table_insert (self->node_by_id, GUINT_TO_POINTER (node->id), node);
      if (node->name != NULL && !g_hash_table_contains (self->node_by_name, node->name))
        g_hash_table_insert (self->node_by_name, (gpointer) node->name, node);
    }
  for (guint i = 0; changes != NULL && i < changes->len; i++)
    {
      const FbChange *change = &g_array_index (changes, FbChange, i);
      GArray *members;

      if (change->kind != FB_CHANGE_FUSED)
        continue;
      members = g_hash_table_lookup (self->fused_members, GUINT_TO_POINTER (change->fused_into));
      if (members == NULL)
        {
          members = g_array_new (FALSE, FALSE, sizeof (guint));
          g_hash_table_insert (self->fused_members, GUINT_TO_POINTER (change->fused_into), members);
        }
      g_array_append_val (members, change->node_id);
    }
  self->uses = fb_graph_build_uses (graph);
  self->constants = constants;
  _fb_graph_layout_build_rows (self);
  _fb_graph_layout_build_tree (self);
  _fb_graph_layout_place_rows (self);
  return self;
}

FbGraphLayout *
fb_graph_layout_ref (FbGraphLayout *layout)
{
  g_return_val_if_fail (layout != NULL, NULL);

  g_atomic_ref_count_inc (&layout->ref_count);
  return layout;
}

void
fb_graph_layout_unref (FbGraphLayout *layout)
{
  g_return_if_fail (layout != NULL);

  if (!g_atomic_ref_count_dec (&layout->ref_count))
    return;
  g_hash_table_unref (layout->shapes);
  g_ptr_array_unref (layout->groups);
  g_hash_table_unref (layout->group_by_path);
  g_hash_table_unref (layout->node_index);
  g_hash_table_unref (layout->node_by_id);
  g_hash_table_unref (layout->node_by_name);
  g_hash_table_unref (layout->fused_members);
  g_hash_table_unref (layout->uses);
  g_free (layout->node_group);
  g_free (layout->node_child);
  _fb_graph_layout_free_rows (layout);
  g_clear_pointer (&layout->previous, fb_graph_layout_unref);
  /* Last: the holds keep the graph alive. */
  for (guint i = 0; i < layout->holds->len; i++)
    {
      Hold *hold = g_ptr_array_index (layout->holds, i);

      hold->release (hold->data);
      g_free (hold);
    }
  g_ptr_array_unref (layout->holds);
  g_mutex_clear (&layout->mutex);
  g_mutex_clear (&layout->compute_mutex);
  g_free (layout);
}

void
fb_graph_layout_hold (FbGraphLayout *layout,
                      gpointer       data,
                      GDestroyNotify release)
{
  Hold *hold;

  g_return_if_fail (layout != NULL);
  g_return_if_fail (release != NULL);

  hold = g_new (Hold, 1);
  hold->data = data;
  hold->release = release;
  g_ptr_array_add (layout->holds, hold);
}

FbGraph *
fb_graph_layout_get_graph (FbGraphLayout *layout)
{
  g_return_val_if_fail (layout != NULL, NULL);
  return layout->graph;
}

FbGraphLayout *
fb_graph_layout_get_previous (FbGraphLayout *layout)
{
  g_return_val_if_fail (layout != NULL, NULL);
  return layout->previous;
}

FbGraphGroup *
fb_graph_layout_get_root (FbGraphLayout *layout)
{
  g_return_val_if_fail (layout != NULL, NULL);
  return layout->root;
}

FbGraphGroup *
fb_graph_layout_lookup_group (FbGraphLayout *layout,
                              const char    *path)
{
  g_return_val_if_fail (layout != NULL, NULL);
  g_return_val_if_fail (path != NULL, NULL);
  return g_hash_table_lookup (layout->group_by_path, path);
}

int
_fb_graph_layout_node_index (FbGraphLayout *layout,
                             const FbNode  *node)
{
  return (int) GPOINTER_TO_UINT (g_hash_table_lookup (layout->node_index, node)) - 1;
}

FbGraphGroup *
fb_graph_layout_node_group (FbGraphLayout *layout,
                            const FbNode  *node)
{
  int index;

  g_return_val_if_fail (layout != NULL, NULL);
  g_return_val_if_fail (node != NULL, NULL);

  index = _fb_graph_layout_node_index (layout, node);
  return index < 0 ? NULL : layout->node_group[index];
}

FbNode *
fb_graph_layout_find_node (FbGraphLayout *layout,
                           guint          node_id)
{
  g_return_val_if_fail (layout != NULL, NULL);
  return g_hash_table_lookup (layout->node_by_id, GUINT_TO_POINTER (node_id));
}

FbNode *
fb_graph_layout_find_node_by_name (FbGraphLayout *layout,
                                   const char    *name)
{
  g_return_val_if_fail (layout != NULL, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  return g_hash_table_lookup (layout->node_by_name, name);
}

GHashTable *
fb_graph_layout_default_expansion (FbGraphLayout *layout,
                                   guint          budget)
{
  GHashTable *expanded;
  g_autoptr(GQueue) queue = g_queue_new ();
  guint visible;

  g_return_val_if_fail (layout != NULL, NULL);

  expanded = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  visible = layout->root->children->len;
  for (guint i = 0; i < layout->root->children->len; i++)
    {
      FbGraphGroup *group = g_array_index (layout->root->children, FbGroupChild, i).group;

      if (group != NULL)
        g_queue_push_tail (queue, group);
    }
  /* Breadth first: outer groups open before inner ones, in graph order. */
  while (!g_queue_is_empty (queue))
    {
      FbGraphGroup *group = g_queue_pop_head (queue);

      if (visible - 1 + group->children->len > budget)
        continue;
      visible += group->children->len - 1;
      g_hash_table_add (expanded, g_strdup (group->path));
      for (guint i = 0; i < group->children->len; i++)
        {
          FbGraphGroup *sub = g_array_index (group->children, FbGroupChild, i).group;

          if (sub != NULL)
            g_queue_push_tail (queue, sub);
        }
    }
  return expanded;
}

static void
append_key (GString      *key,
            FbGraphGroup *group,
            GHashTable   *expanded)
{
  for (guint i = 0; i < group->children->len; i++)
    {
      FbGraphGroup *sub = g_array_index (group->children, FbGroupChild, i).group;

      if (sub == NULL || !g_hash_table_contains (expanded, sub->path))
        continue;
      g_string_append (key, sub->label);
      g_string_append_c (key, '{');
      append_key (key, sub, expanded);
      g_string_append_c (key, '}');
    }
}

/* What is expanded inside group, by labels, so that the same key means the same thing in the
 * layout of another stage. */
char *
_fb_graph_layout_key (FbGraphGroup *group,
                      GHashTable   *expanded)
{
  GString *key = g_string_new (NULL);

  append_key (key, group, expanded);
  return g_string_free (key, FALSE);
}

FbGroupLayout *
_fb_graph_layout_cached (FbGraphGroup *group,
                         const char   *key)
{
  return g_hash_table_lookup (group->cache, key);
}

void
_fb_place_size_of_child (FbGraphLayout *layout,
                         FbGraphGroup  *group,
                         guint          child_index,
                         GHashTable    *expanded,
                         double        *width,
                         double        *height)
{
  FbGroupChild *child = &g_array_index (group->children, FbGroupChild, child_index);

  if (child->node != NULL)
    {
      guint n_rows;
      const FbConstantRow *rows = fb_graph_layout_node_rows (layout, child->node, &n_rows);

      _fb_graph_node_size (child->node, rows, n_rows, width, height);
    }
  else if (!g_hash_table_contains (expanded, child->group->path))
    _fb_graph_group_size (child->group, width, height);
  else
    {
      g_autofree char *key = _fb_graph_layout_key (child->group, expanded);
      FbGroupLayout *sub = _fb_graph_layout_cached (child->group, key);

      g_assert (sub != NULL);
      *width = sub->width;
      *height = sub->height + FB_GRAPH_FRAME_HEADER;
    }
}

/* The child of group that holds the node of index node_index, or -2 when it is outside group. */
static int
child_of (FbGraphLayout *self,
          FbGraphGroup  *group,
          int            node_index)
{
  FbGraphGroup *inner = self->node_group[node_index];

  if (inner == group)
    return self->node_child[node_index];
  while (inner->parent != NULL && inner->parent != group)
    inner = inner->parent;
  return inner->parent == group ? (int) inner->index_in_parent : -2;
}

typedef struct {
  GArray     *edges;
  GHashTable *pairs;   /* (from, to) -> edge index + 1 */
  GHashTable *seen;    /* (edge, value id) */
} EdgeBuilder;

static void
add_edge (EdgeBuilder *builder,
          int          from,
          int          to,
          FbValue     *value)
{
  gint64 pair = ((gint64) (from + 2) << 32) | (guint32) (to + 2);
  gint64 seen;
  guint index = GPOINTER_TO_UINT (g_hash_table_lookup (builder->pairs, &pair));
  FbGroupEdge *edge;

  if (index == 0)
    {
      FbGroupEdge fresh = { from, to, value, 0 };

      g_array_append_val (builder->edges, fresh);
      index = builder->edges->len;
      g_hash_table_insert (builder->pairs, g_memdup2 (&pair, sizeof pair), GUINT_TO_POINTER (index));
    }
  edge = &g_array_index (builder->edges, FbGroupEdge, index - 1);
  seen = ((gint64) index << 32) | value->id;
  if (!g_hash_table_contains (builder->seen, &seen))
    {
      g_hash_table_add (builder->seen, g_memdup2 (&seen, sizeof seen));
      edge->n_values++;
    }
}

static void
collect_edges_of (FbGraphLayout *self,
                  FbGraphGroup  *group,
                  FbGraphGroup  *inside,
                  EdgeBuilder   *builder)
{
  gboolean is_root = group->parent == NULL;

  for (guint i = 0; i < inside->children->len; i++)
    {
      FbGroupChild *child = &g_array_index (inside->children, FbGroupChild, i);
      FbNode *node = child->node;
      int index, to;

      if (node == NULL)
        {
          collect_edges_of (self, group, child->group, builder);
          continue;
        }
      index = _fb_graph_layout_node_index (self, node);
      to = child_of (self, group, index);
      for (guint k = 0; k < node->n_inputs; k++)
        {
          FbValue *value = node->inputs[k];
          int producer, from;

          if (value == NULL || value->producer == NULL)
            continue;
          /* A Constant drawn as a row of this node: no edge, the row says it. */
          if ((producer = _fb_graph_layout_node_index (self, value->producer)) < 0
              || self->is_row[producer])
            continue;
          from = child_of (self, group, producer);
          if (from == -2 && is_root)
            continue;
          if (from != to)
            add_edge (builder, from == -2 ? -1 : from, to, value);
        }
      if (is_root)
        continue;
      for (guint k = 0; k < node->n_outputs; k++)
        {
          FbValue *value = node->outputs[k];
          GPtrArray *users;

          if (value == NULL)
            continue;
          if (value->is_output)
            add_edge (builder, to, -1, value);
          users = g_hash_table_lookup (self->uses, value);
          for (guint u = 0; users != NULL && u < users->len; u++)
            {
              int user = _fb_graph_layout_node_index (self, g_ptr_array_index (users, u));

              if (user >= 0 && child_of (self, group, user) == -2)
                add_edge (builder, to, -1, value);
            }
        }
    }
}

GArray *
_fb_graph_layout_collect_edges (FbGraphLayout *self,
                                FbGraphGroup  *group)
{
  EdgeBuilder builder;

  builder.edges = g_array_new (FALSE, FALSE, sizeof (FbGroupEdge));
  builder.pairs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  builder.seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  collect_edges_of (self, group, group, &builder);
  g_hash_table_unref (builder.pairs);
  g_hash_table_unref (builder.seen);
  return builder.edges;
}

guint
fb_graph_layout_n_dot_runs (FbGraphLayout *layout)
{
  guint n;

  g_return_val_if_fail (layout != NULL, 0);

  g_mutex_lock (&layout->mutex);
  n = layout->n_dot_runs;
  g_mutex_unlock (&layout->mutex);
  return n;
}

guint
fb_graph_layout_n_seeded (FbGraphLayout *layout)
{
  guint n;

  g_return_val_if_fail (layout != NULL, 0);

  g_mutex_lock (&layout->mutex);
  n = layout->n_seeded;
  g_mutex_unlock (&layout->mutex);
  return n;
}


void
fb_graph_layout_set_serial (FbGraphLayout *layout,
                            gboolean       serial)
{
  g_return_if_fail (layout != NULL);

  g_mutex_lock (&layout->mutex);
  layout->serial = serial;
  g_mutex_unlock (&layout->mutex);
}

guint
fb_graph_layout_n_reused (FbGraphLayout *layout)
{
  guint n;

  g_return_val_if_fail (layout != NULL, 0);

  g_mutex_lock (&layout->mutex);
  n = layout->n_reused;
  g_mutex_unlock (&layout->mutex);
  return n;
}

double
fb_graph_layout_dot_seconds (FbGraphLayout *layout)
{
  gint64 us;

  g_return_val_if_fail (layout != NULL, 0);

  g_mutex_lock (&layout->mutex);
  us = layout->dot_us;
  g_mutex_unlock (&layout->mutex);
  return us / 1e6;
}
