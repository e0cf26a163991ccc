/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The tree of groups: name scopes of the nodes, simplified, with groups too big for one
 * Graphviz run cut into parts. */
#include "fb-graph-layout-private.h"

#include <string.h>
void
_fb_group_layout_free (gpointer data)
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
  group->cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, _fb_group_layout_free);
  return group;
}

void
_fb_graph_group_free (FbGraphGroup *group)
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
  _fb_graph_group_free (group);
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

/* The number of the part of the group at path that holds node in layout, or -1. */
static int
part_holding (FbGraphLayout *layout,
              const char    *path,
              const FbNode  *node)
{
  for (FbGraphGroup *group = fb_graph_layout_node_group (layout, node); group != NULL; group = group->parent)
    if (group->is_part && g_strcmp0 (group->parent->path, path) == 0)
      return group->part;
  return -1;
}

/* The part of the group at path that held child in the previous stage: the part of a node of the
 * same id, or of a fused node's members; for a scope, of its first node found there. -1 for what
 * is new. */
static int
previous_part (FbGraphLayout      *self,
               const char         *path,
               const FbGroupChild *child)
{
  FbGraphLayout *previous = self->previous;
  GArray *members;
  FbNode *old;
  int part;

  if (child->group != NULL)
    {
      for (guint i = 0; i < child->group->children->len; i++)
        if ((part = previous_part (self, path, &g_array_index (child->group->children, FbGroupChild, i))) >= 0)
          return part;
      return -1;
    }
  if ((old = fb_graph_layout_find_node (previous, child->node->id)) != NULL)
    return part_holding (previous, path, old);
  members = g_hash_table_lookup (self->fused_members, GUINT_TO_POINTER (child->node->id));
  for (guint m = 0; members != NULL && m < members->len; m++)
    if ((old = fb_graph_layout_find_node (previous, g_array_index (members, guint, m))) != NULL
        && (part = part_holding (previous, path, old)) >= 0)
      return part;
  return -1;
}

/* When the previous stage cut the group at path into parts, the same parts: every member goes
 * where its nodes were, and what is new goes with the member before it (the one after it, at
 * the start), so that both sides of a pass show the same nodes in the same parts whatever the
 * pass removed or added. FALSE when there is nothing to follow, or when following would make a
 * part much bigger than a fresh cut would. */
static gboolean
follow_previous (FbGraphLayout *self,
                 FbGraphGroup  *group,
                 const char    *path,
                 guint         *part_of_child,
                 guint         *n_parts)
{
  guint n = group->children->len, last = G_MAXUINT, size[FB_GRAPH_GROUP_MAX_CHILDREN] = { 0 };
  FbGraphGroup *before = self->previous != NULL ? fb_graph_layout_lookup_group (self->previous, path) : NULL;
  FbGraphGroup *first;

  if (before == NULL || before->children->len == 0
      || (first = g_array_index (before->children, FbGroupChild, 0).group) == NULL || !first->is_part)
    return FALSE;
  *n_parts = first->n_parts;
  for (guint i = 0; i < n; i++)
    {
      int part = previous_part (self, path, &g_array_index (group->children, FbGroupChild, i));

      part_of_child[i] = part >= 0 ? (guint) part : last;
      if (part >= 0)
        last = part;
    }
  if (last == G_MAXUINT)
    return FALSE;
  /* New members at the start: with the first member the previous stage knew. */
  for (guint i = n; i-- > 0;)
    if (part_of_child[i] == G_MAXUINT)
      part_of_child[i] = last;
    else
      last = part_of_child[i];
  for (guint i = 0; i < n; i++)
    if (++size[part_of_child[i]] > 2 * FB_GRAPH_GROUP_MAX_CHILDREN)
      return FALSE;
  return TRUE;
}

/* Moves the members of group into parts: member i into part part_of_child[i], of n_parts. A part
 * left with no member is left out. */
static void
cut (FbGraphGroup *group,
     const guint  *part_of_child,
     guint         n_parts)
{
  g_autoptr(GArray) old = group->children;
  g_autofree FbGraphGroup **parts = g_new0 (FbGraphGroup *, n_parts);

  group->children = g_array_new (FALSE, FALSE, sizeof (FbGroupChild));
  for (guint i = 0; i < old->len; i++)
    {
      FbGroupChild *child = &g_array_index (old, FbGroupChild, i);
      guint p = part_of_child[i];

      if (parts[p] == NULL)
        {
          g_autofree char *label = g_strdup_printf ("part %u of %u", p + 1, n_parts);

          parts[p] = group_new (group, label);
          parts[p]->is_part = TRUE;
          parts[p]->part = p;
          parts[p]->n_parts = n_parts;
        }
      if (child->group != NULL)
        child->group->parent = parts[p];
      g_array_append_val (parts[p]->children, *child);
    }
  for (guint p = 0; p < n_parts; p++)
    if (parts[p] != NULL)
      {
        FbGroupChild part = { NULL, parts[p] };

        count_nodes (parts[p]);
        g_array_append_val (group->children, part);
      }
}

/* Splits groups with too many direct members into parts of consecutive members, so that no
 * Graphviz run gets more than FB_GRAPH_GROUP_MAX_CHILDREN boxes, however flat the model; a group
 * the previous stage cut is cut the same way (follow_previous). path is the group's path, as
 * finish_group () will give it. */
static void
chunk (FbGraphLayout *self,
       FbGraphGroup  *group,
       const char    *path)
{
  guint n = group->children->len;
  g_autofree guint *part_of_child = g_new (guint, MAX (n, 1));
  guint n_parts = 0;

  if (follow_previous (self, group, path, part_of_child, &n_parts))
    cut (group, part_of_child, n_parts);
  else if (n > FB_GRAPH_GROUP_MAX_CHILDREN)
    {
      guint part_size;

      n_parts = MIN ((n + FB_GRAPH_GROUP_MAX_CHILDREN - 1) / FB_GRAPH_GROUP_MAX_CHILDREN,
                     FB_GRAPH_GROUP_MAX_CHILDREN);
      part_size = (n + n_parts - 1) / n_parts;
      for (guint i = 0; i < n; i++)
        part_of_child[i] = i / part_size;
      cut (group, part_of_child, n_parts);
    }
  for (guint i = 0; i < group->children->len; i++)
    {
      FbGraphGroup *sub = g_array_index (group->children, FbGroupChild, i).group;
      g_autofree char *sub_path = NULL;

      if (sub == NULL)
        continue;
      sub_path = sub->is_part ? g_strdup_printf ("%s/#%u", path, sub->part)
                              : g_strconcat (path, "/", sub->label, NULL);
      chunk (self, sub, sub_path);
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
    {
      if (group->path == NULL)
        group->path = g_strdup ("");
    }
  else if (group->is_part)
    group->path = g_strdup_printf ("%s/#%u", group->parent->path, group->part);
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

void
_fb_graph_layout_build_tree (FbGraphLayout *self)
{
  FbGraph *graph = self->graph;

  self->root = group_new (NULL, graph->name != NULL && graph->name[0] != '\0' ? graph->name : "graph");
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);
      FbGraphGroup *group = self->root;
      FbGroupChild child = { node, NULL };

      /* Drawn inside its readers' boxes: no member of any group, so that a scope of nothing
         but constants never becomes an empty frame. */
      if (self->is_row[i])
        continue;
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
  /* A scope around everything ("/model/...") would only frame the whole picture: its members
   * become the top level, and the root takes its path. */
  while (self->root->children->len == 1 && g_array_index (self->root->children, FbGroupChild, 0).group != NULL)
    {
      FbGraphGroup *only = g_array_index (self->root->children, FbGroupChild, 0).group;
      char *path = g_strconcat (self->root->path != NULL ? self->root->path : "", "/", only->label, NULL);
      GArray *children = only->children;

      only->children = self->root->children;
      g_array_set_size (only->children, 0);
      self->root->children = children;
      for (guint i = 0; i < children->len; i++)
        if (g_array_index (children, FbGroupChild, i).group != NULL)
          g_array_index (children, FbGroupChild, i).group->parent = self->root;
      g_free (self->root->path);
      self->root->path = path;
      _fb_graph_group_free (only);
    }
  if (self->root->path == NULL)
    self->root->path = g_strdup ("");
  chunk (self, self->root, self->root->path);
  count_nodes (self->root);
  finish_group (self, self->root, 0);
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

