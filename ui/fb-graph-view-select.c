/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The graph view's selection: by node id (found again by name in another stage) or group path,
 * and walking it along the edges. */
#include "fb-graph-view-private.h"

#include <math.h>

/* The constant a Constant node makes, when the node is one. */
static const FbValue *
constant_of (const FbNode *node)
{
  if (node == NULL || node->op != FB_OP_CONSTANT || node->n_outputs != 1)
    return NULL;
  return node->outputs[0];
}

/* The item of the box showing constant as a row: the reader that was clicked while it still
 * shows that row, else the first reader. */
static int
constant_item (FbGraphView   *self,
               FbGraphLayout *layout,
               const FbValue *constant)
{
  FbNode *reader = self->selected_reader != 0 ? fb_graph_layout_find_node (layout, self->selected_reader) : NULL;

  if (reader != NULL)
    {
      guint n_rows;
      const FbConstantRow *rows = fb_graph_layout_node_rows (layout, reader, &n_rows);

      for (guint i = 0; i < n_rows; i++)
        if (rows[i].value == constant)
          return fb_graph_scene_find_node (self->scene, reader);
    }
  return fb_graph_scene_find_constant (self->scene, constant);
}

int
_fb_graph_view_resolve_selection (FbGraphView *self)
{
  FbGraphLayout *layout;
  FbNode *node;
  FbValue *value;

  self->selected_constant = NULL;
  if (self->scene == NULL || !self->has_selection)
    return -1;
  layout = fb_graph_scene_get_layout (self->scene);
  if (self->selected_path != NULL)
    {
      FbGraphGroup *group = fb_graph_layout_lookup_group (layout, self->selected_path);

      return group != NULL ? fb_graph_scene_find_group (self->scene, group) : -1;
    }
  if (self->selected_value)
    {
      value = fb_graph_layout_find_value (layout, self->selected_id);
      if (value == NULL && self->selected_name != NULL)
        value = fb_graph_layout_find_value_by_name (layout, self->selected_name);
      if (value == NULL || fb_graph_layout_constant_reader (layout, value) == NULL)
        return -1;
      self->selected_id = value->id;
      self->selected_constant = value;
      return constant_item (self, layout, value);
    }
  node = fb_graph_layout_find_node (layout, self->selected_id);
  if (node == NULL && self->selected_name != NULL)
    node = fb_graph_layout_find_node_by_name (layout, self->selected_name);
  if (node == NULL)
    return -1;
  self->selected_id = node->id;
  if (fb_graph_layout_node_is_row (layout, node))
    {
      self->selected_constant = constant_of (node);
      return constant_item (self, layout, self->selected_constant);
    }
  return fb_graph_scene_find_node (self->scene, node);
}

/* One of node, group and value (an initializer's row) is set, or none; reader is the node whose
 * row of a constant was clicked. */
static void
set_selection (FbGraphView   *self,
               FbNode        *node,
               FbGraphGroup  *group,
               const FbValue *value,
               const FbNode  *reader,
               gboolean       reveal)
{
  g_clear_pointer (&self->selected_path, g_free);
  g_clear_pointer (&self->selected_name, g_free);
  self->has_selection = node != NULL || group != NULL || value != NULL;
  self->selected_value = value != NULL;
  self->selected_id = node != NULL ? node->id : value != NULL ? value->id : 0;
  self->selected_reader = reader != NULL ? reader->id : 0;
  if (node != NULL)
    self->selected_name = g_strdup (node->name);
  else if (value != NULL)
    self->selected_name = g_strdup (value->name);
  if (group != NULL)
    self->selected_path = g_strdup (fb_graph_group_get_path (group));
  self->selected_item = _fb_graph_view_resolve_selection (self);
  if (reveal)
    _fb_graph_view_reveal_item (self, self->selected_item);
  _fb_graph_view_invalidate (self);
  _fb_graph_view_emit_selection_changed (self);
}

void
_fb_graph_view_select_item (FbGraphView *self,
                            int          index,
                            gboolean     reveal)
{
  const FbSceneItem *item;

  if (index < 0)
    {
      set_selection (self, NULL, NULL, NULL, NULL, FALSE);
      return;
    }
  item = fb_graph_scene_item (self->scene, index);
  set_selection (self, item->node, item->node == NULL ? item->group : NULL, NULL, NULL, reveal);
}

void
_fb_graph_view_select_at (FbGraphView *self,
                          double       wx,
                          double       wy)
{
  double sx, sy;
  int index, row;
  const FbSceneItem *item;
  const FbConstantRow *r;

  if (self->scene == NULL)
    return;
  fb_graph_view_widget_to_scene (self, wx, wy, &sx, &sy);
  index = fb_graph_scene_item_at (self->scene, sx, sy);
  if (index < 0 || (row = fb_graph_scene_row_at (self->scene, index, sx, sy)) < 0)
    {
      _fb_graph_view_select_item (self, index, FALSE);
      return;
    }
  /* A row: its constant, in the box that was clicked. A Constant node is selected as the node
   * it is, so that the inspector, the other side and the kernel map treat it as one. */
  item = fb_graph_scene_item (self->scene, index);
  r = &item->rows[row];
  set_selection (self, r->constant, NULL, r->constant == NULL ? r->value : NULL, item->node, FALSE);
}

gboolean
fb_graph_view_select_at (FbGraphView *self,
                         double       wx,
                         double       wy)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), FALSE);

  _fb_graph_view_select_at (self, wx, wy);
  return self->has_selection;
}

const FbValue *
fb_graph_view_get_selected_constant (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);

  if (self->layout == NULL || !self->has_selection || self->selected_path != NULL)
    return NULL;
  if (!self->selected_value)
    return constant_of (fb_graph_layout_find_node (self->layout, self->selected_id));
  return fb_graph_layout_find_value (self->layout, self->selected_id);
}

FbNode *
fb_graph_view_get_selected_node (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);

  if (self->layout == NULL || !self->has_selection || self->selected_path != NULL
      || self->selected_value)
    return NULL;
  return fb_graph_layout_find_node (self->layout, self->selected_id);
}

FbGraphGroup *
fb_graph_view_get_selected_group (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);

  if (self->layout == NULL || self->selected_path == NULL)
    return NULL;
  return fb_graph_layout_lookup_group (self->layout, self->selected_path);
}

/* Opens every group around group (or the node's group) so that it shows; TRUE if any opened. */
static gboolean
open_ancestors (FbGraphView  *self,
                FbGraphGroup *group)
{
  gboolean opened = FALSE;

  for (; group != NULL && fb_graph_group_get_parent (group) != NULL;
       group = fb_graph_group_get_parent (group))
    {
      const char *path = fb_graph_group_get_path (group);

      if (g_hash_table_contains (self->expanded, path))
        continue;
      g_hash_table_add (self->expanded, g_strdup (path));
      _fb_graph_view_emit_group_toggled (self, path, TRUE);
      opened = TRUE;
    }
  return opened;
}

gboolean
fb_graph_view_select_node (FbGraphView *self,
                           guint        node_id)
{
  FbNode *node;

  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), FALSE);

  if (self->layout == NULL || (node = fb_graph_layout_find_node (self->layout, node_id)) == NULL)
    return FALSE;
  if (self->has_selection && self->selected_path == NULL && !self->selected_value
      && self->selected_id == node_id)
    return TRUE;
  if (open_ancestors (self, fb_graph_layout_node_group (self->layout, node)))
    {
      self->reveal_pending = TRUE;
      _fb_graph_view_relayout (self);
    }
  set_selection (self, node, NULL, NULL, NULL, TRUE);
  return TRUE;
}

gboolean
fb_graph_view_select_constant (FbGraphView *self,
                               guint        value_id)
{
  FbValue *value;
  FbNode *reader;

  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), FALSE);

  if (self->layout == NULL || (value = fb_graph_layout_find_value (self->layout, value_id)) == NULL)
    return FALSE;
  /* Made by a Constant node here (as a row or as a box): that node is what is selected. */
  if (value->producer != NULL)
    return constant_of (value->producer) == value && fb_graph_view_select_node (self, value->producer->id);
  if ((reader = fb_graph_layout_constant_reader (self->layout, value)) == NULL)
    return FALSE;
  if (self->has_selection && self->selected_value && self->selected_id == value_id)
    return TRUE;
  if (open_ancestors (self, fb_graph_layout_node_group (self->layout, reader)))
    {
      self->reveal_pending = TRUE;
      _fb_graph_view_relayout (self);
    }
  set_selection (self, NULL, NULL, value, NULL, TRUE);
  return TRUE;
}

gboolean
fb_graph_view_select_group (FbGraphView *self,
                            const char  *path)
{
  FbGraphGroup *group;

  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  if (self->layout == NULL || (group = fb_graph_layout_lookup_group (self->layout, path)) == NULL)
    return FALSE;
  if (g_strcmp0 (self->selected_path, path) == 0)
    return TRUE;
  if (open_ancestors (self, fb_graph_group_get_parent (group)))
    {
      self->reveal_pending = TRUE;
      _fb_graph_view_relayout (self);
    }
  set_selection (self, NULL, group, NULL, NULL, TRUE);
  return TRUE;
}

void
fb_graph_view_clear_selection (FbGraphView *self)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));

  if (self->has_selection)
    set_selection (self, NULL, NULL, NULL, NULL, FALSE);
}

static double
item_cx (const FbSceneItem *item)
{
  return item->x + item->width / 2;
}

static double
item_cy (const FbSceneItem *item)
{
  return item->y + item->height / 2;
}

gboolean
fb_graph_view_walk (FbGraphView *self,
                    FbGraphWalk  direction)
{
  const FbSceneItem *here;
  int best = -1;
  double best_distance = G_MAXDOUBLE;

  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), FALSE);

  if (self->scene == NULL || fb_graph_scene_n_items (self->scene) == 0)
    return FALSE;
  if (self->selected_item < 0)
    {
      /* Start at the top of the picture. */
      for (guint i = 0; i < fb_graph_scene_n_items (self->scene); i++)
        {
          const FbSceneItem *item = fb_graph_scene_item (self->scene, i);

          if (item->kind != FB_SCENE_ITEM_FRAME && (best < 0 || item->y < best_distance))
            {
              best = i;
              best_distance = item->y;
            }
        }
      _fb_graph_view_select_item (self, best, TRUE);
      return best >= 0;
    }

  here = fb_graph_scene_item (self->scene, self->selected_item);
  if (direction == FB_GRAPH_WALK_UP || direction == FB_GRAPH_WALK_DOWN)
    {
      GArray *next = direction == FB_GRAPH_WALK_UP
                     ? fb_graph_scene_producers (self->scene, self->selected_item)
                     : fb_graph_scene_consumers (self->scene, self->selected_item);

      /* Of several producers or consumers, the one most nearly straight above or below. */
      for (guint i = 0; i < next->len; i++)
        {
          int index = g_array_index (next, int, i);
          double d = fabs (item_cx (fb_graph_scene_item (self->scene, index)) - item_cx (here));

          if (d < best_distance)
            {
              best = index;
              best_distance = d;
            }
        }
    }
  else
    {
      for (guint i = 0; i < fb_graph_scene_n_items (self->scene); i++)
        {
          const FbSceneItem *item = fb_graph_scene_item (self->scene, i);
          double dx = item_cx (item) - item_cx (here);
          double dy = fabs (item_cy (item) - item_cy (here));

          if (item->kind == FB_SCENE_ITEM_FRAME || (int) i == self->selected_item
              || dy > MAX (item->height, here->height) / 2
              || (direction == FB_GRAPH_WALK_LEFT ? dx >= 0 : dx <= 0))
            continue;
          if (fabs (dx) + dy < best_distance)
            {
              best = i;
              best_distance = fabs (dx) + dy;
            }
        }
    }
  if (best < 0)
    return FALSE;
  _fb_graph_view_select_item (self, best, TRUE);
  return TRUE;
}

