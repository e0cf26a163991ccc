/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-graph-layout-private.h"
#include "fb-graph-style-private.h"

#include <gvc.h>
#include <locale.h>
#include <math.h>
#include <string.h>

G_DEFINE_QUARK (fb-layout-error-quark, fb_layout_error)

#define SEED_GAP 6.0    /* the least room between two boxes placed from the previous stage */

typedef struct {
  gpointer       data;
  GDestroyNotify release;
} Hold;

/* Graphviz keeps global state and is not thread-safe: every use goes through this lock. */
static GMutex graphviz_mutex;
static GVC_t *graphviz_context;

static void
group_layout_free (gpointer data)
{
  FbGroupLayout *layout = data;

  for (guint i = 0; i < layout->n_edges; i++)
    g_free (layout->paths[i].points);
  g_free (layout->paths);
  g_free (layout->places);
  g_free (layout);
}

static FbGraphGroup *
group_new (FbGraphGroup *parent,
           const char   *label)
{
  FbGraphGroup *group = g_new0 (FbGraphGroup, 1);

  group->parent = parent;
  group->label = g_strdup (label);
  group->children = g_array_new (FALSE, FALSE, sizeof (FbGroupChild));
  group->by_label = g_hash_table_new (g_str_hash, g_str_equal);
  group->cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, group_layout_free);
  return group;
}

static void
group_free (FbGraphGroup *group)
{
  g_clear_pointer (&group->by_label, g_hash_table_unref);
  g_clear_pointer (&group->edges, g_array_unref);
  g_hash_table_unref (group->cache);
  g_array_unref (group->children);
  g_free (group->path);
  g_free (group->label);
  g_free (group->summary);
  g_free (group);
}

/* Groups dropped while simplifying the tree are freed right away; kept ones are registered. */
static void
group_free_shallow (FbGraphGroup *group)
{
  g_array_set_size (group->children, 0);
  group_free (group);
}

static guint
count_nodes (FbGraphGroup *group)
{
  guint n = 0;

  for (guint i = 0; i < group->children->len; i++)
    {
      FbGroupChild *child = &g_array_index (group->children, FbGroupChild, i);

      n += child->node != NULL ? 1 : count_nodes (child->group);
    }
  group->n_nodes = n;
  return n;
}

/* A scope of one node is no group, and a scope whose only member is another scope is shown as
 * one group "a/b". */
static void
simplify (FbGraphGroup *group)
{
  for (guint i = 0; i < group->children->len; i++)
    {
      FbGroupChild *child = &g_array_index (group->children, FbGroupChild, i);
      FbGraphGroup *sub = child->group;

      if (sub == NULL)
        continue;
      simplify (sub);
      if (sub->n_nodes <= 1)
        {
          g_assert (sub->children->len == 1);
          *child = g_array_index (sub->children, FbGroupChild, 0);
          group_free_shallow (sub);
        }
      else if (sub->children->len == 1)
        {
          FbGraphGroup *inner = g_array_index (sub->children, FbGroupChild, 0).group;
          char *label = g_strconcat (sub->label, "/", inner->label, NULL);

          g_assert (inner != NULL);
          g_free (inner->label);
          inner->label = label;
          inner->parent = group;
          child->group = inner;
          group_free_shallow (sub);
        }
    }
}

/* Splits groups with too many direct members into parts of consecutive members, so that no
 * Graphviz run gets more than FB_GRAPH_GROUP_MAX_CHILDREN boxes, however flat the model. */
static void
chunk (FbGraphGroup *group)
{
  guint n = group->children->len;

  if (n > FB_GRAPH_GROUP_MAX_CHILDREN)
    {
      guint n_parts = MIN ((n + FB_GRAPH_GROUP_MAX_CHILDREN - 1) / FB_GRAPH_GROUP_MAX_CHILDREN,
                           FB_GRAPH_GROUP_MAX_CHILDREN);
      guint part_size = (n + n_parts - 1) / n_parts;
      g_autoptr(GArray) old = group->children;

      group->children = g_array_new (FALSE, FALSE, sizeof (FbGroupChild));
      for (guint p = 0; p * part_size < n; p++)
        {
          g_autofree char *label = g_strdup_printf ("part %u of %u", p + 1, n_parts);
          FbGroupChild part = { NULL, group_new (group, label) };

          part.group->is_part = TRUE;

          for (guint i = p * part_size; i < MIN (n, (p + 1) * part_size); i++)
            {
              FbGroupChild *child = &g_array_index (old, FbGroupChild, i);

              if (child->group != NULL)
                child->group->parent = part.group;
              g_array_append_val (part.group->children, *child);
            }
          count_nodes (part.group);
          g_array_append_val (group->children, part);
        }
    }
  for (guint i = 0; i < group->children->len; i++)
    {
      FbGraphGroup *sub = g_array_index (group->children, FbGroupChild, i).group;

      if (sub != NULL)
        chunk (sub);
    }
}

static void
add_histogram (FbGraphGroup *group,
               guint        *histogram)
{
  for (guint i = 0; i < group->children->len; i++)
    {
      FbGroupChild *child = &g_array_index (group->children, FbGroupChild, i);

      if (child->node != NULL)
        histogram[child->node->op]++;
      else
        add_histogram (child->group, histogram);
    }
}

static void
finish_group (FbGraphLayout *self,
              FbGraphGroup  *group,
              guint          depth)
{
  guint histogram[FB_OP_COUNT] = { 0 };
  guint top = 0;

  group->depth = depth;
  if (group->parent == NULL)
    group->path = g_strdup ("");
  else if (group->is_part)
    group->path = g_strdup_printf ("%s/#%u", group->parent->path, group->index_in_parent);
  else
    group->path = g_strconcat (group->parent->path, "/", group->label, NULL);
  g_clear_pointer (&group->by_label, g_hash_table_unref);
  g_ptr_array_add (self->groups, group);
  g_hash_table_insert (self->group_by_path, group->path, group);

  add_histogram (group, histogram);
  for (guint op = 1; op < FB_OP_COUNT; op++)
    if (histogram[op] > histogram[top])
      top = op;
  group->summary = g_strdup_printf ("%u nodes · %u %s", group->n_nodes, histogram[top],
                                    top == FB_OP_UNKNOWN ? "unknown" : fb_op_name (top));

  for (guint i = 0; i < group->children->len; i++)
    {
      FbGroupChild *child = &g_array_index (group->children, FbGroupChild, i);

      if (child->node != NULL)
        {
          int index = _fb_graph_layout_node_index (self, child->node);

          self->node_group[index] = group;
          self->node_child[index] = i;
        }
      else
        {
          child->group->parent = group;
          child->group->index_in_parent = i;
          finish_group (self, child->group, depth + 1);
        }
    }
}

static void
build_tree (FbGraphLayout *self)
{
  FbGraph *graph = self->graph;

  self->root = group_new (NULL, graph->name != NULL && graph->name[0] != '\0' ? graph->name : "graph");
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);
      FbGraphGroup *group = self->root;
      FbGroupChild child = { node, NULL };

      if (node->name != NULL && strchr (node->name, '/') != NULL)
        {
          g_auto(GStrv) parts = g_strsplit (node->name, "/", -1);
          guint n = g_strv_length (parts);

          for (guint k = 0; k + 1 < n; k++)
            {
              FbGraphGroup *sub;

              if (parts[k][0] == '\0')
                continue;
              if ((sub = g_hash_table_lookup (group->by_label, parts[k])) == NULL)
                {
                  FbGroupChild entry = { NULL, group_new (group, parts[k]) };

                  sub = entry.group;
                  g_hash_table_insert (group->by_label, sub->label, sub);
                  g_array_append_val (group->children, entry);
                }
              group = sub;
            }
        }
      g_array_append_val (group->children, child);
    }
  count_nodes (self->root);
  simplify (self->root);
  chunk (self->root);
  count_nodes (self->root);
  finish_group (self, self->root, 0);
}

FbGraphLayout *
fb_graph_layout_new (FbGraph       *graph,
                     FbGraphLayout *previous,
                     GArray        *changes)
{
  FbGraphLayout *self;

  g_return_val_if_fail (graph != NULL, NULL);

  self = g_new0 (FbGraphLayout, 1);
  g_atomic_ref_count_init (&self->ref_count);
  g_mutex_init (&self->mutex);
  self->graph = graph;
  self->previous = previous != NULL ? fb_graph_layout_ref (previous) : NULL;
  self->holds = g_ptr_array_new ();
  self->groups = g_ptr_array_new_with_free_func ((GDestroyNotify) group_free);
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
  build_tree (self);
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
  g_ptr_array_unref (layout->groups);
  g_hash_table_unref (layout->group_by_path);
  g_hash_table_unref (layout->node_index);
  g_hash_table_unref (layout->node_by_id);
  g_hash_table_unref (layout->node_by_name);
  g_hash_table_unref (layout->fused_members);
  g_hash_table_unref (layout->uses);
  g_free (layout->node_group);
  g_free (layout->node_child);
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
    _fb_graph_node_size (child->node, width, height);
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
          if ((producer = _fb_graph_layout_node_index (self, value->producer)) < 0)
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

static GArray *
collect_edges (FbGraphLayout *self,
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

static void
straight_path (FbPath        *path,
               double         x0,
               double         y0,
               double         x1,
               double         y1)
{
  double mid = (y0 + y1) / 2;
  double pts[8] = { x0, y0, x0, mid, x1, mid, x1, y1 };

  path->n_points = 4;
  path->points = g_memdup2 (pts, sizeof pts);
}

/* An edge from the group's top border down to a member, or from a member down to the bottom. */
static void
port_path (const FbGroupLayout *layout,
           const FbGroupEdge   *edge,
           FbPath              *path)
{
  if (edge->from < 0)
    {
      const FbPlace *to = &layout->places[edge->to];

      straight_path (path, to->cx, 0, to->cx, to->cy - to->h / 2);
    }
  else
    {
      const FbPlace *from = &layout->places[edge->from];

      straight_path (path, from->cx, from->cy + from->h / 2, from->cx, layout->height);
    }
}

static void
set_attr (void       *object,
          Agsym_t    *sym,
          double      value)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];

  agxset (object, sym, g_ascii_formatd (text, sizeof text, "%.4f", value));
}

static FbGroupLayout *
dot_layout (FbGraphLayout *self,
            FbGraphGroup  *group,
            const FbPlace *sizes,
            GError       **error)
{
  FbGroupLayout *layout = NULL;
  guint n = group->children->len;
  GArray *edges = group->edges;
  g_autofree Agnode_t **nodes = g_new0 (Agnode_t *, n);
  g_autofree Agedge_t **agedges = g_new0 (Agedge_t *, edges->len);
  Agsym_t *width_sym, *height_sym;
  Agraph_t *g;
  locale_t c_locale, old_locale;
  boxf bb;

  /* Graphviz parses numbers with the C library, in the thread's locale. */
  c_locale = newlocale (LC_NUMERIC_MASK, "C", (locale_t) 0);
  old_locale = uselocale (c_locale);
  g_mutex_lock (&graphviz_mutex);
  if (graphviz_context == NULL)
    {
      agseterr (AGMAX);   /* keep messages for aglasterr () instead of printing them */
      graphviz_context = gvContext ();
    }

  g = agopen ((char *) "group", Agdirected, NULL);
  agattr (g, AGRAPH, (char *) "rankdir", (char *) "TB");
  agattr (g, AGRAPH, (char *) "nodesep", (char *) "0.3");
  agattr (g, AGRAPH, (char *) "ranksep", (char *) "0.42");
  agattr (g, AGNODE, (char *) "shape", (char *) "box");
  agattr (g, AGNODE, (char *) "fixedsize", (char *) "true");
  agattr (g, AGNODE, (char *) "label", (char *) "");
  width_sym = agattr (g, AGNODE, (char *) "width", (char *) "1");
  height_sym = agattr (g, AGNODE, (char *) "height", (char *) "1");
  agattr (g, AGEDGE, (char *) "arrowhead", (char *) "none");

  for (guint i = 0; i < n; i++)
    {
      char name[32];

      g_snprintf (name, sizeof name, "c%u", i);
      nodes[i] = agnode (g, name, TRUE);
      set_attr (nodes[i], width_sym, sizes[i].w / 72.0);
      set_attr (nodes[i], height_sym, sizes[i].h / 72.0);
    }
  for (guint i = 0; i < edges->len; i++)
    {
      FbGroupEdge *edge = &g_array_index (edges, FbGroupEdge, i);

      /* Edges that enter or leave the group are drawn straight from its border afterwards:
         port nodes would cost two ranks of height. */
      if (edge->from < 0 || edge->to < 0)
        continue;
      agedges[i] = agedge (g, nodes[edge->from], nodes[edge->to], NULL, TRUE);
    }

  if (gvLayout (graphviz_context, g, "dot") != 0)
    {
      const char *message = aglasterr ();

      g_set_error (error, FB_LAYOUT_ERROR, FB_LAYOUT_ERROR_GRAPHVIZ,
                   "Graphviz could not lay out group “%s”: %s", group->label,
                   message != NULL ? g_strstrip ((char *) message) : "no “dot” layout plugin");
      agclose (g);
      goto out;
    }

  bb = GD_bb (g);
  layout = g_new0 (FbGroupLayout, 1);
  layout->width = bb.UR.x - bb.LL.x + 2 * FB_GRAPH_FRAME_PAD;
  layout->height = bb.UR.y - bb.LL.y + 2 * FB_GRAPH_FRAME_PAD;
  layout->n_children = n;
  layout->places = g_new0 (FbPlace, n);
  for (guint i = 0; i < n; i++)
    {
      layout->places[i].cx = ND_coord (nodes[i]).x - bb.LL.x + FB_GRAPH_FRAME_PAD;
      layout->places[i].cy = bb.UR.y - ND_coord (nodes[i]).y + FB_GRAPH_FRAME_PAD;
      layout->places[i].w = sizes[i].w;
      layout->places[i].h = sizes[i].h;
    }
  layout->n_edges = edges->len;
  layout->paths = g_new0 (FbPath, edges->len);
  for (guint i = 0; i < edges->len; i++)
    {
      FbGroupEdge *edge = &g_array_index (edges, FbGroupEdge, i);
      splines *spl;
      FbPath *path = &layout->paths[i];

      if (agedges[i] == NULL)
        {
          port_path (layout, edge, path);
          continue;
        }
      spl = ED_spl (agedges[i]);
      if (spl != NULL && spl->size > 0 && spl->list[0].size >= 4)
        {
          bezier *bz = &spl->list[0];

          path->n_points = bz->size;
          path->points = g_new (double, 2 * bz->size);
          for (int k = 0; k < bz->size; k++)
            {
              path->points[2 * k] = bz->list[k].x - bb.LL.x + FB_GRAPH_FRAME_PAD;
              path->points[2 * k + 1] = bb.UR.y - bz->list[k].y + FB_GRAPH_FRAME_PAD;
            }
        }
      else
        {
          Agnode_t *tail = agtail (agedges[i]), *head = aghead (agedges[i]);

          straight_path (path,
                         ND_coord (tail).x - bb.LL.x + FB_GRAPH_FRAME_PAD,
                         bb.UR.y - ND_coord (tail).y + FB_GRAPH_FRAME_PAD,
                         ND_coord (head).x - bb.LL.x + FB_GRAPH_FRAME_PAD,
                         bb.UR.y - ND_coord (head).y + FB_GRAPH_FRAME_PAD);
        }
    }
  gvFreeLayout (graphviz_context, g);
  agclose (g);
  self->n_dot_runs++;

out:
  g_mutex_unlock (&graphviz_mutex);
  uselocale (old_locale);
  freelocale (c_locale);
  return layout;
}

static char *
child_key (const FbGroupChild *child)
{
  if (child->node != NULL)
    return g_strdup_printf ("n%u", child->node->id);
  return g_strconcat ("g", child->group->label, NULL);
}

static char *
edge_key (FbGraphGroup      *group,
          const FbGroupEdge *edge)
{
  g_autofree char *from = NULL, *to = NULL;

  from = edge->from < 0 ? g_strdup ("<in>")
                        : child_key (&g_array_index (group->children, FbGroupChild, edge->from));
  to = edge->to < 0 ? g_strdup ("<out>")
                    : child_key (&g_array_index (group->children, FbGroupChild, edge->to));
  return g_strconcat (from, ">", to, NULL);
}

/* Places a new item between the kept items it is connected to. */
static gboolean
place_by_neighbours (FbGraphGroup *group,
                     FbPlace      *places,
                     gboolean     *placed,
                     guint         i)
{
  double sum_x = 0, bottom = -G_MAXDOUBLE, top = G_MAXDOUBLE;
  guint n = 0;

  for (guint k = 0; k < group->edges->len; k++)
    {
      FbGroupEdge *edge = &g_array_index (group->edges, FbGroupEdge, k);

      if (edge->to == (int) i && edge->from >= 0 && placed[edge->from])
        {
          sum_x += places[edge->from].cx;
          bottom = MAX (bottom, places[edge->from].cy + places[edge->from].h / 2);
          n++;
        }
      else if (edge->from == (int) i && edge->to >= 0 && placed[edge->to])
        {
          sum_x += places[edge->to].cx;
          top = MIN (top, places[edge->to].cy - places[edge->to].h / 2);
          n++;
        }
    }
  if (n == 0)
    return FALSE;
  places[i].cx = sum_x / n;
  if (bottom > -G_MAXDOUBLE && top < G_MAXDOUBLE)
    places[i].cy = (bottom + top) / 2;
  else if (bottom > -G_MAXDOUBLE)
    places[i].cy = bottom + SEED_GAP * 4 + places[i].h / 2;
  else
    places[i].cy = top - SEED_GAP * 4 - places[i].h / 2;
  return TRUE;
}

static gboolean
overlaps (const FbPlace *a,
          const FbPlace *b)
{
  return fabs (a->cx - b->cx) < (a->w + b->w) / 2 + SEED_GAP
         && fabs (a->cy - b->cy) < (a->h + b->h) / 2 + SEED_GAP;
}

/* Lays group out where its items were in the previous stage; NULL when that does not work
 * (too much is new, or the new items do not fit), and Graphviz then lays it out afresh. */
static FbGroupLayout *
seed_layout (FbGraphLayout *self,
             FbGraphGroup  *group,
             const FbPlace *sizes,
             FbGraphGroup  *prev_group,
             FbGroupLayout *prev)
{
  guint n = group->children->len;
  g_autoptr(GHashTable) prev_index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) prev_edges = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree FbPlace *places = g_new0 (FbPlace, n);
  g_autofree gboolean *placed = g_new0 (gboolean, n);
  g_autofree gboolean *kept = g_new0 (gboolean, n);
  double min_x = G_MAXDOUBLE, min_y = G_MAXDOUBLE, max_x = 0, max_y = 0, dx, dy;
  guint n_new = 0;
  gboolean progress = TRUE;
  FbGroupLayout *layout;

  for (guint j = 0; j < prev_group->children->len; j++)
    g_hash_table_insert (prev_index, child_key (&g_array_index (prev_group->children, FbGroupChild, j)),
                         GUINT_TO_POINTER (j + 1));
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *key = child_key (&g_array_index (group->children, FbGroupChild, i));
      guint j = GPOINTER_TO_UINT (g_hash_table_lookup (prev_index, key));

      places[i] = sizes[i];
      if (j == 0)
        {
          n_new++;
          continue;
        }
      /* A box that changed size keeps its top edge: the picture reads from the top down. */
      places[i].cx = prev->places[j - 1].cx;
      places[i].cy = prev->places[j - 1].cy - prev->places[j - 1].h / 2 + sizes[i].h / 2;
      placed[i] = TRUE;
      kept[i] = prev->places[j - 1].w == sizes[i].w && prev->places[j - 1].h == sizes[i].h;
    }
  if (n_new * 2 > n)
    return NULL;

  /* A fused node takes the place of its members. */
  for (guint i = 0; i < n; i++)
    {
      FbNode *node = g_array_index (group->children, FbGroupChild, i).node;
      GArray *members;
      double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;

      if (placed[i] || node == NULL
          || (members = g_hash_table_lookup (self->fused_members, GUINT_TO_POINTER (node->id))) == NULL)
        continue;
      for (guint m = 0; m < members->len; m++)
        {
          g_autofree char *key = g_strdup_printf ("n%u", g_array_index (members, guint, m));
          guint j = GPOINTER_TO_UINT (g_hash_table_lookup (prev_index, key));
          FbPlace *p;

          if (j == 0)
            continue;
          p = &prev->places[j - 1];
          x0 = MIN (x0, p->cx - p->w / 2);
          x1 = MAX (x1, p->cx + p->w / 2);
          y0 = MIN (y0, p->cy - p->h / 2);
          y1 = MAX (y1, p->cy + p->h / 2);
        }
      if (x0 > x1)
        continue;
      places[i].cx = (x0 + x1) / 2;
      places[i].cy = (y0 + y1) / 2;
      placed[i] = TRUE;
    }
  /* Anything else new goes between its neighbours, chains of new items one after another. */
  while (progress)
    {
      progress = FALSE;
      for (guint i = 0; i < n; i++)
        if (!placed[i] && place_by_neighbours (group, places, placed, i))
          placed[i] = progress = TRUE;
    }
  for (guint i = 0; i < n; i++)
    {
      if (!placed[i])
        return NULL;
      for (guint k = 0; k < i; k++)
        if (overlaps (&places[i], &places[k]))
          return NULL;
      min_x = MIN (min_x, places[i].cx - places[i].w / 2);
      min_y = MIN (min_y, places[i].cy - places[i].h / 2);
      max_x = MAX (max_x, places[i].cx + places[i].w / 2);
      max_y = MAX (max_y, places[i].cy + places[i].h / 2);
    }

  /* Keep the picture anchored where it was unless something new sticks out. */
  dx = MAX (0, FB_GRAPH_FRAME_PAD - min_x);
  dy = MAX (0, FB_GRAPH_FRAME_PAD - min_y);
  layout = g_new0 (FbGroupLayout, 1);
  layout->seeded = TRUE;
  layout->n_children = n;
  layout->places = g_new0 (FbPlace, n);
  for (guint i = 0; i < n; i++)
    {
      layout->places[i] = places[i];
      layout->places[i].cx += dx;
      layout->places[i].cy += dy;
    }
  layout->width = MAX (max_x + dx + FB_GRAPH_FRAME_PAD, prev->width);
  layout->height = MAX (max_y + dy + FB_GRAPH_FRAME_PAD, prev->height);

  for (guint k = 0; k < prev_group->edges->len; k++)
    g_hash_table_insert (prev_edges,
                         edge_key (prev_group, &g_array_index (prev_group->edges, FbGroupEdge, k)),
                         GUINT_TO_POINTER (k + 1));
  layout->n_edges = group->edges->len;
  layout->paths = g_new0 (FbPath, group->edges->len);
  for (guint k = 0; k < group->edges->len; k++)
    {
      FbGroupEdge *edge = &g_array_index (group->edges, FbGroupEdge, k);
      g_autofree char *key = edge_key (group, edge);
      guint j = GPOINTER_TO_UINT (g_hash_table_lookup (prev_edges, key));
      gboolean same_ends = (edge->from < 0 ? dx == 0 && dy == 0 : kept[edge->from])
                           && (edge->to < 0 ? dx == 0 && dy == 0 && layout->height == prev->height
                                            : kept[edge->to]);
      FbPath *path = &layout->paths[k];

      if (j != 0 && same_ends && prev->paths[j - 1].n_points >= 4)
        {
          path->n_points = prev->paths[j - 1].n_points;
          path->points = g_memdup2 (prev->paths[j - 1].points, 2 * sizeof (double) * path->n_points);
        }
      else if (edge->from < 0 || edge->to < 0)
        port_path (layout, edge, path);
      else
        {
          FbPlace *from = &layout->places[edge->from], *to = &layout->places[edge->to];

          straight_path (path, from->cx, from->cy + from->h / 2, to->cx, to->cy - to->h / 2);
        }
    }
  self->n_seeded++;
  return layout;
}

static FbGroupLayout *
ensure_group (FbGraphLayout *self,
              FbGraphGroup  *group,
              GHashTable    *expanded,
              GCancellable  *cancellable,
              GError       **error)
{
  g_autofree char *key = _fb_graph_layout_key (group, expanded);
  g_autofree FbPlace *sizes = NULL;
  FbGroupLayout *layout;

  if ((layout = _fb_graph_layout_cached (group, key)) != NULL)
    return layout;
  if (g_cancellable_is_cancelled (cancellable))
    {
      g_set_error_literal (error, FB_LAYOUT_ERROR, FB_LAYOUT_ERROR_CANCELLED, "Layout cancelled");
      return NULL;
    }
  for (guint i = 0; i < group->children->len; i++)
    {
      FbGraphGroup *sub = g_array_index (group->children, FbGroupChild, i).group;

      if (sub != NULL && g_hash_table_contains (expanded, sub->path)
          && ensure_group (self, sub, expanded, cancellable, error) == NULL)
        return NULL;
    }
  if (group->edges == NULL)
    group->edges = collect_edges (self, group);

  sizes = g_new0 (FbPlace, group->children->len);
  for (guint i = 0; i < group->children->len; i++)
    _fb_place_size_of_child (self, group, i, expanded, &sizes[i].w, &sizes[i].h);

  layout = NULL;
  if (self->previous != NULL)
    {
      FbGraphLayout *previous = self->previous;
      FbGraphGroup *prev_group = fb_graph_layout_lookup_group (previous, group->path);
      FbGroupLayout *prev = NULL;

      if (prev_group != NULL)
        {
          g_autofree char *prev_key = _fb_graph_layout_key (prev_group, expanded);

          g_mutex_lock (&previous->mutex);
          prev = _fb_graph_layout_cached (prev_group, prev_key);
          g_mutex_unlock (&previous->mutex);
        }
      /* Cached layouts and the groups' edges never change once made. */
      if (prev != NULL)
        layout = seed_layout (self, group, sizes, prev_group, prev);
    }
  if (layout == NULL && (layout = dot_layout (self, group, sizes, error)) == NULL)
    return NULL;
  g_hash_table_insert (group->cache, g_steal_pointer (&key), layout);
  return layout;
}

/* Lays out every group that expanded shows, the previous stages' first: this one takes its places
 * from there. */
static gboolean
ensure_all (FbGraphLayout *layout,
            GHashTable    *expanded,
            GCancellable  *cancellable,
            GError       **error)
{
  gboolean ok;

  if (layout->previous != NULL && !ensure_all (layout->previous, expanded, cancellable, error))
    return FALSE;
  g_mutex_lock (&layout->mutex);
  ok = ensure_group (layout, layout->root, expanded, cancellable, error) != NULL;
  g_mutex_unlock (&layout->mutex);
  return ok;
}

FbGraphScene *
fb_graph_layout_compute (FbGraphLayout *layout,
                         GHashTable    *expanded,
                         GCancellable  *cancellable,
                         GError       **error)
{
  FbGraphScene *scene;

  g_return_val_if_fail (layout != NULL, NULL);
  g_return_val_if_fail (expanded != NULL, NULL);

  if (!ensure_all (layout, expanded, cancellable, error))
    return NULL;
  g_mutex_lock (&layout->mutex);
  scene = _fb_graph_scene_new (layout, expanded);
  g_mutex_unlock (&layout->mutex);
  return scene;
}

static void
compute_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  FbGraphLayout *layout = g_object_get_data (G_OBJECT (task), "fb-layout");
  GError *error = NULL;
  FbGraphScene *scene = fb_graph_layout_compute (layout, task_data, cancellable, &error);

  if (scene == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, scene, (GDestroyNotify) fb_graph_scene_unref);
}

static void
layout_unref_object (gpointer data)
{
  fb_graph_layout_unref (data);
}

void
fb_graph_layout_compute_async (FbGraphLayout      *layout,
                               GHashTable         *expanded,
                               GCancellable       *cancellable,
                               GAsyncReadyCallback callback,
                               gpointer            user_data)
{
  g_autoptr(GTask) task = NULL;
  GHashTable *copy;
  GHashTableIter iter;
  gpointer path;

  g_return_if_fail (layout != NULL);
  g_return_if_fail (expanded != NULL);

  copy = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_iter_init (&iter, expanded);
  while (g_hash_table_iter_next (&iter, &path, NULL))
    g_hash_table_add (copy, g_strdup (path));

  /* GTask wants a GObject source; the layout travels as task data's owner instead. */
  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, fb_graph_layout_compute_async);
  g_task_set_task_data (task, copy, (GDestroyNotify) g_hash_table_unref);
  g_object_set_data_full (G_OBJECT (task), "fb-layout", fb_graph_layout_ref (layout),
                          layout_unref_object);
  g_task_run_in_thread (task, compute_thread);
}

FbGraphScene *
fb_graph_layout_compute_finish (FbGraphLayout *layout,
                                GAsyncResult  *result,
                                GError       **error)
{
  g_return_val_if_fail (layout != NULL, NULL);
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
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

const char *
fb_graph_group_get_path (const FbGraphGroup *group)
{
  g_return_val_if_fail (group != NULL, NULL);
  return group->path;
}

const char *
fb_graph_group_get_label (const FbGraphGroup *group)
{
  g_return_val_if_fail (group != NULL, NULL);
  return group->label;
}

const char *
fb_graph_group_get_summary (const FbGraphGroup *group)
{
  g_return_val_if_fail (group != NULL, NULL);
  return group->summary;
}

FbGraphGroup *
fb_graph_group_get_parent (const FbGraphGroup *group)
{
  g_return_val_if_fail (group != NULL, NULL);
  return group->parent;
}

guint
fb_graph_group_get_n_nodes (const FbGraphGroup *group)
{
  g_return_val_if_fail (group != NULL, 0);
  return group->n_nodes;
}

guint
fb_graph_group_get_depth (const FbGraphGroup *group)
{
  g_return_val_if_fail (group != NULL, 0);
  return group->depth;
}

guint
fb_graph_group_get_n_children (const FbGraphGroup *group)
{
  g_return_val_if_fail (group != NULL, 0);
  return group->children->len;
}

FbNode *
fb_graph_group_get_child_node (const FbGraphGroup *group,
                               guint               index)
{
  g_return_val_if_fail (group != NULL, NULL);
  g_return_val_if_fail (index < group->children->len, NULL);
  return g_array_index (group->children, FbGroupChild, index).node;
}

FbGraphGroup *
fb_graph_group_get_child_group (const FbGraphGroup *group,
                                guint               index)
{
  g_return_val_if_fail (group != NULL, NULL);
  g_return_val_if_fail (index < group->children->len, NULL);
  return g_array_index (group->children, FbGroupChild, index).group;
}

gboolean
fb_graph_group_contains (const FbGraphGroup *group,
                         const FbGraphGroup *other)
{
  g_return_val_if_fail (group != NULL, FALSE);

  for (; other != NULL; other = other->parent)
    if (other == group)
      return TRUE;
  return FALSE;
}
