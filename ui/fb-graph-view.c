/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-graph-view-private.h"
#include "fb-graph-style-private.h"

#include <math.h>
#include <string.h>

#define ZOOM_STEP   1.25
#define SCROLL_STEP 48.0   /* pixels per wheel click */

G_DEFINE_FINAL_TYPE (FbGraphView, fb_graph_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_BUSY,
  PROP_ZOOM,
  N_PROPS
};

enum {
  SELECTION_CHANGED,
  VIEWPORT_CHANGED,
  GROUP_TOGGLED,
  POPULATE_CONTEXT_MENU,
  SCENE_CHANGED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void relayout (FbGraphView *self);

GtkWidget *
fb_graph_view_new (void)
{
  return g_object_new (FB_TYPE_GRAPH_VIEW, NULL);
}

static double
view_width (FbGraphView *self)
{
  return MAX (1, gtk_widget_get_width (GTK_WIDGET (self)));
}

static double
view_height (FbGraphView *self)
{
  return MAX (1, gtk_widget_get_height (GTK_WIDGET (self)));
}

static void
viewport_changed (FbGraphView *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[VIEWPORT_CHANGED], 0);
}

void
fb_graph_view_get_viewport (FbGraphView *self,
                            double      *x,
                            double      *y,
                            double      *zoom)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));

  if (x != NULL)
    *x = self->origin_x;
  if (y != NULL)
    *y = self->origin_y;
  if (zoom != NULL)
    *zoom = self->zoom;
}

void
fb_graph_view_set_viewport (FbGraphView *self,
                            double       x,
                            double       y,
                            double       zoom)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));

  zoom = CLAMP (zoom, FB_GRAPH_VIEW_MIN_ZOOM, FB_GRAPH_VIEW_MAX_ZOOM);
  if (x == self->origin_x && y == self->origin_y && zoom == self->zoom)
    return;
  self->origin_x = x;
  self->origin_y = y;
  self->fit_pending = FALSE;
  if (zoom != self->zoom)
    {
      self->zoom = zoom;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
    }
  viewport_changed (self);
}

double
fb_graph_view_get_zoom (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), 1.0);
  return self->zoom;
}

void
fb_graph_view_widget_to_scene (FbGraphView *self,
                               double       wx,
                               double       wy,
                               double      *sx,
                               double      *sy)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));

  *sx = self->origin_x + wx / self->zoom;
  *sy = self->origin_y + wy / self->zoom;
}

void
fb_graph_view_scene_to_widget (FbGraphView *self,
                               double       sx,
                               double       sy,
                               double      *wx,
                               double      *wy)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));

  *wx = (sx - self->origin_x) * self->zoom;
  *wy = (sy - self->origin_y) * self->zoom;
}

void
fb_graph_view_zoom_at (FbGraphView *self,
                       double       factor,
                       double       wx,
                       double       wy)
{
  double sx, sy, zoom;

  g_return_if_fail (FB_IS_GRAPH_VIEW (self));
  g_return_if_fail (factor > 0);

  fb_graph_view_widget_to_scene (self, wx, wy, &sx, &sy);
  zoom = CLAMP (self->zoom * factor, FB_GRAPH_VIEW_MIN_ZOOM, FB_GRAPH_VIEW_MAX_ZOOM);
  fb_graph_view_set_viewport (self, sx - wx / zoom, sy - wy / zoom, zoom);
}

void
fb_graph_view_zoom_in (FbGraphView *self)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));
  fb_graph_view_zoom_at (self, ZOOM_STEP, view_width (self) / 2, view_height (self) / 2);
}

void
fb_graph_view_zoom_out (FbGraphView *self)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));
  fb_graph_view_zoom_at (self, 1 / ZOOM_STEP, view_width (self) / 2, view_height (self) / 2);
}

void
fb_graph_view_zoom_to_fit (FbGraphView *self)
{
  double width, height, zoom;

  g_return_if_fail (FB_IS_GRAPH_VIEW (self));

  if (self->scene == NULL)
    return;
  fb_graph_scene_get_bounds (self->scene, &width, &height);
  /* Never blow a small graph up beyond its natural size. */
  zoom = MIN (1.0, 0.96 * MIN (view_width (self) / MAX (width, 1), view_height (self) / MAX (height, 1)));
  zoom = CLAMP (zoom, FB_GRAPH_VIEW_MIN_ZOOM, FB_GRAPH_VIEW_MAX_ZOOM);
  fb_graph_view_set_viewport (self, width / 2 - view_width (self) / zoom / 2,
                              height / 2 - view_height (self) / zoom / 2, zoom);
}

/* The first picture of a graph: all of it when that is readable, else its top at a size where
 * the text shows, centred across. */
static void
show_first_picture (FbGraphView *self)
{
  double width, height, w = view_width (self), zoom, x;

  fb_graph_view_zoom_to_fit (self);
  if (self->zoom >= FB_GRAPH_VIEW_READABLE_ZOOM)
    return;
  fb_graph_scene_get_bounds (self->scene, &width, &height);
  zoom = FB_GRAPH_VIEW_READABLE_ZOOM;
  x = width * zoom <= w ? width / 2 - w / zoom / 2 : 0;
  fb_graph_view_set_viewport (self, x, 0, zoom);
}

/* Scrolls so that item is on screen, centring it only when it was not. */
static void
reveal_item (FbGraphView *self,
             int          index)
{
  const FbSceneItem *item;
  double x0, y0, x1, y1, w, h;

  if (self->scene == NULL || index < 0)
    return;
  item = fb_graph_scene_item (self->scene, index);
  w = view_width (self) / self->zoom;
  h = view_height (self) / self->zoom;
  x0 = self->origin_x;
  y0 = self->origin_y;
  x1 = x0 + w;
  y1 = y0 + h;
  if (item->x >= x0 && item->y >= y0 && item->x + MIN (item->width, w) <= x1
      && item->y + MIN (item->height, h) <= y1)
    return;
  fb_graph_view_set_viewport (self, item->x + MIN (item->width, w) / 2 - w / 2,
                              item->y + MIN (item->height, h) / 2 - h / 2, self->zoom);
}

/* Selection. */

static int
resolve_selection (FbGraphView *self)
{
  FbGraphLayout *layout;
  FbNode *node;

  if (self->scene == NULL || !self->has_selection)
    return -1;
  layout = fb_graph_scene_get_layout (self->scene);
  if (self->selected_path != NULL)
    {
      FbGraphGroup *group = fb_graph_layout_lookup_group (layout, self->selected_path);

      return group != NULL ? fb_graph_scene_find_group (self->scene, group) : -1;
    }
  node = fb_graph_layout_find_node (layout, self->selected_id);
  if (node == NULL && self->selected_name != NULL)
    node = fb_graph_layout_find_node_by_name (layout, self->selected_name);
  if (node == NULL)
    return -1;
  self->selected_id = node->id;
  return fb_graph_scene_find_node (self->scene, node);
}

static void
set_selection (FbGraphView *self,
               FbNode      *node,
               FbGraphGroup *group,
               gboolean     reveal)
{
  g_clear_pointer (&self->selected_path, g_free);
  g_clear_pointer (&self->selected_name, g_free);
  self->has_selection = node != NULL || group != NULL;
  self->selected_id = node != NULL ? node->id : 0;
  if (node != NULL)
    self->selected_name = g_strdup (node->name);
  if (group != NULL)
    self->selected_path = g_strdup (fb_graph_group_get_path (group));
  self->selected_item = resolve_selection (self);
  if (reveal)
    reveal_item (self, self->selected_item);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[SELECTION_CHANGED], 0);
}

static void
select_item (FbGraphView *self,
             int          index,
             gboolean     reveal)
{
  const FbSceneItem *item;

  if (index < 0)
    {
      set_selection (self, NULL, NULL, FALSE);
      return;
    }
  item = fb_graph_scene_item (self->scene, index);
  set_selection (self, item->node, item->node == NULL ? item->group : NULL, reveal);
}

FbNode *
fb_graph_view_get_selected_node (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);

  if (self->layout == NULL || !self->has_selection || self->selected_path != NULL)
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
      g_signal_emit (self, signals[GROUP_TOGGLED], 0, path, TRUE);
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
  if (self->has_selection && self->selected_path == NULL && self->selected_id == node_id)
    return TRUE;
  if (open_ancestors (self, fb_graph_layout_node_group (self->layout, node)))
    {
      self->reveal_pending = TRUE;
      relayout (self);
    }
  set_selection (self, node, NULL, TRUE);
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
      relayout (self);
    }
  set_selection (self, NULL, group, TRUE);
  return TRUE;
}

void
fb_graph_view_clear_selection (FbGraphView *self)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));

  if (self->has_selection)
    set_selection (self, NULL, NULL, FALSE);
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
      select_item (self, best, TRUE);
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
  select_item (self, best, TRUE);
  return TRUE;
}

/* Expansion. */

GHashTable *
fb_graph_view_get_expanded (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);
  return self->expanded;
}

gboolean
fb_graph_view_get_group_expanded (FbGraphView *self,
                                  const char  *path)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  return g_hash_table_contains (self->expanded, path);
}

void
fb_graph_view_set_group_expanded (FbGraphView *self,
                                  const char  *path,
                                  gboolean     expanded)
{
  int item;

  g_return_if_fail (FB_IS_GRAPH_VIEW (self));
  g_return_if_fail (path != NULL);

  if (expanded == g_hash_table_contains (self->expanded, path))
    return;
  /* Keep the group's corner where it is on screen while everything around it moves. */
  g_clear_pointer (&self->anchor_path, g_free);
  if (self->scene != NULL && self->layout != NULL)
    {
      FbGraphGroup *group = fb_graph_layout_lookup_group (self->layout, path);

      if (group != NULL && (item = fb_graph_scene_find_group (self->scene, group)) >= 0)
        {
          const FbSceneItem *it = fb_graph_scene_item (self->scene, item);

          self->anchor_path = g_strdup (path);
          fb_graph_view_scene_to_widget (self, it->x, it->y, &self->anchor_wx, &self->anchor_wy);
        }
    }
  if (expanded)
    g_hash_table_add (self->expanded, g_strdup (path));
  else
    g_hash_table_remove (self->expanded, path);
  g_signal_emit (self, signals[GROUP_TOGGLED], 0, path, expanded);
  relayout (self);
}

/* Search. */

static gboolean
attr_matches (const FbAttr *attr,
              const char   *query)
{
  g_autofree char *text = NULL;
  g_autofree char *folded = NULL;

  switch (attr->type)
    {
    case FB_ATTR_INT:
      text = g_strdup_printf ("%s=%" G_GINT64_FORMAT, attr->name, attr->i);
      break;
    case FB_ATTR_FLOAT:
      text = g_strdup_printf ("%s=%g", attr->name, attr->f);
      break;
    case FB_ATTR_STRING:
      text = g_strdup_printf ("%s=%s", attr->name, attr->s != NULL ? attr->s : "");
      break;
    case FB_ATTR_INTS:
      {
        GString *s = g_string_new (attr->name);

        g_string_append (s, "=");
        for (guint i = 0; i < attr->ints.n; i++)
          g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i > 0 ? "," : "", attr->ints.v[i]);
        text = g_string_free (s, FALSE);
      }
      break;
    default:
      text = g_strdup (attr->name);
      break;
    }
  folded = g_utf8_casefold (text, -1);
  return strstr (folded, query) != NULL;
}

static gboolean
node_matches (const FbNode *node,
              const char   *query)
{
  g_autofree char *name = g_utf8_casefold (node->name != NULL ? node->name : "", -1);
  g_autofree char *op = g_utf8_casefold (node->op_type != NULL ? node->op_type : fb_op_name (node->op), -1);

  if (strstr (name, query) != NULL || strstr (op, query) != NULL)
    return TRUE;
  for (guint i = 0; i < node->n_attrs; i++)
    if (attr_matches (&node->attrs[i], query))
      return TRUE;
  return FALSE;
}

static void
run_search (FbGraphView *self)
{
  g_autofree char *query = NULL;
  FbGraph *graph;

  g_ptr_array_set_size (self->matches, 0);
  g_hash_table_remove_all (self->match_set);
  self->match_index = -1;
  if (self->query == NULL || self->layout == NULL)
    return;
  query = g_utf8_casefold (self->query, -1);
  graph = fb_graph_layout_get_graph (self->layout);
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);

      if (node_matches (node, query))
        {
          g_ptr_array_add (self->matches, node);
          g_hash_table_add (self->match_set, node);
        }
    }
}

guint
fb_graph_view_search (FbGraphView *self,
                      const char  *text)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), 0);

  g_clear_pointer (&self->query, g_free);
  if (text != NULL && text[0] != '\0')
    self->query = g_strdup (text);
  run_search (self);
  if (self->matches->len > 0)
    fb_graph_view_search_next (self, FALSE);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  return self->matches->len;
}

gboolean
fb_graph_view_search_next (FbGraphView *self,
                           gboolean     backward)
{
  guint n;
  FbNode *node;

  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), FALSE);

  if ((n = self->matches->len) == 0)
    return FALSE;
  if (self->match_index < 0)
    self->match_index = backward ? (int) n - 1 : 0;
  else
    self->match_index = (self->match_index + (backward ? n - 1 : 1)) % n;
  node = g_ptr_array_index (self->matches, self->match_index);
  return fb_graph_view_select_node (self, node->id);
}

guint
fb_graph_view_get_n_matches (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), 0);
  return self->matches->len;
}

/* Marks. */

void
fb_graph_view_set_marks (FbGraphView *self,
                         GHashTable  *marks)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));

  if (marks != NULL)
    g_hash_table_ref (marks);
  g_clear_pointer (&self->marks, g_hash_table_unref);
  self->marks = marks;
  _fb_graph_view_recompute_marks (self);
  _fb_graph_view_invalidate (self);
}

FbGraphMark
fb_graph_view_get_mark (FbGraphView  *self,
                        const FbNode *node)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), FB_GRAPH_MARK_NONE);
  g_return_val_if_fail (node != NULL, FB_GRAPH_MARK_NONE);

  if (self->marks == NULL)
    return FB_GRAPH_MARK_NONE;
  return GPOINTER_TO_INT (g_hash_table_lookup (self->marks, GUINT_TO_POINTER (node->id)));
}

void
_fb_graph_view_recompute_marks (FbGraphView *self)
{
  GHashTableIter iter;
  gpointer key;

  g_hash_table_remove_all (self->group_marks);
  if (self->marks == NULL || self->layout == NULL)
    return;
  g_hash_table_iter_init (&iter, self->marks);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      FbNode *node = fb_graph_layout_find_node (self->layout, GPOINTER_TO_UINT (key));
      FbGraphGroup *group;

      if (node == NULL)
        continue;
      for (group = fb_graph_layout_node_group (self->layout, node); group != NULL;
           group = fb_graph_group_get_parent (group))
        {
          guint n = GPOINTER_TO_UINT (g_hash_table_lookup (self->group_marks, group));

          g_hash_table_insert (self->group_marks, group, GUINT_TO_POINTER (n + 1));
        }
    }
}

/* Layout. */

typedef struct {
  FbGraphView *self;
  guint        generation;
} LayoutRequest;

static void
set_busy (FbGraphView *self,
          gboolean     busy)
{
  gboolean was = self->cancellable != NULL;

  if (!busy)
    g_clear_object (&self->cancellable);
  if (was != busy)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

static void
scene_ready (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  LayoutRequest *request = user_data;
  FbGraphView *self = request->self;
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraphScene) scene = NULL;
  FbGraphLayout *layout = g_object_get_data (G_OBJECT (result), "fb-layout");

  scene = fb_graph_layout_compute_finish (layout, result, &error);
  if (request->generation != self->generation)
    goto out;   /* a newer layout is on its way */
  set_busy (self, FALSE);
  g_clear_pointer (&self->error, g_free);
  if (scene == NULL)
    {
      self->error = g_strdup (error->message);
      g_warning ("%s", error->message);
      gtk_widget_queue_draw (GTK_WIDGET (self));
      goto out;
    }

  g_clear_pointer (&self->scene, fb_graph_scene_unref);
  self->scene = g_steal_pointer (&scene);
  self->selected_item = resolve_selection (self);
  if (self->anchor_path != NULL)
    {
      FbGraphGroup *group = fb_graph_layout_lookup_group (self->layout, self->anchor_path);
      int index = group != NULL ? fb_graph_scene_find_group (self->scene, group) : -1;

      if (index >= 0)
        {
          const FbSceneItem *item = fb_graph_scene_item (self->scene, index);

          fb_graph_view_set_viewport (self, item->x - self->anchor_wx / self->zoom,
                                      item->y - self->anchor_wy / self->zoom, self->zoom);
        }
      g_clear_pointer (&self->anchor_path, g_free);
    }
  if (self->fit_pending && gtk_widget_get_width (GTK_WIDGET (self)) > 0)
    show_first_picture (self);
  if (self->reveal_pending)
    {
      reveal_item (self, self->selected_item);
      self->reveal_pending = FALSE;
    }
  _fb_graph_view_invalidate (self);
  g_signal_emit (self, signals[SCENE_CHANGED], 0);

out:
  g_object_unref (request->self);
  g_free (request);
}

static void
relayout (FbGraphView *self)
{
  LayoutRequest *request;

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->generation++;
  if (self->layout == NULL)
    {
      set_busy (self, FALSE);
      return;
    }
  request = g_new (LayoutRequest, 1);
  request->self = g_object_ref (self);
  request->generation = self->generation;
  self->cancellable = g_cancellable_new ();
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
  fb_graph_layout_compute_async (self->layout, self->expanded, self->cancellable, scene_ready, request);
}

void
fb_graph_view_set_layout (FbGraphView   *self,
                          FbGraphLayout *layout)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));

  if (layout == self->layout)
    return;
  if (layout != NULL)
    fb_graph_layout_ref (layout);
  g_clear_pointer (&self->layout, fb_graph_layout_unref);
  self->layout = layout;
  if (layout == NULL)
    {
      g_clear_pointer (&self->scene, fb_graph_scene_unref);
      self->fit_pending = TRUE;
    }
  else if (self->scene == NULL)
    {
      g_autoptr(GHashTable) defaults = fb_graph_layout_default_expansion (layout, FB_GRAPH_LAYOUT_DEFAULT_BUDGET);
      GHashTableIter iter;
      gpointer path;

      /* A first picture: what the user opened before stays open, plus a sensible default. */
      g_hash_table_iter_init (&iter, defaults);
      while (g_hash_table_iter_next (&iter, &path, NULL))
        g_hash_table_add (self->expanded, g_strdup (path));
      self->fit_pending = TRUE;
    }
  run_search (self);
  _fb_graph_view_recompute_marks (self);
  relayout (self);
}

FbGraphLayout *
fb_graph_view_get_layout (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);
  return self->layout;
}

FbGraph *
fb_graph_view_get_graph (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);
  return self->layout != NULL ? fb_graph_layout_get_graph (self->layout) : NULL;
}

FbGraphScene *
fb_graph_view_get_scene (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);

  /* The scene of an older layout lingers while the new one is computed. */
  if (self->scene == NULL || fb_graph_scene_get_layout (self->scene) != self->layout)
    return NULL;
  return self->scene;
}

gboolean
fb_graph_view_is_busy (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), FALSE);
  return self->cancellable != NULL;
}

const char *
fb_graph_view_get_error (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);
  return self->error;
}

/* Input. */

static gboolean
in_minimap (FbGraphView *self,
            double       wx,
            double       wy)
{
  double x, y, w, h;

  return _fb_graph_view_minimap_rect (self, &x, &y, &w, &h)
         && wx >= x && wx < x + w && wy >= y && wy < y + h;
}

static void
center_from_minimap (FbGraphView *self,
                     double       wx,
                     double       wy)
{
  double x, y, w, h;

  if (!_fb_graph_view_minimap_rect (self, &x, &y, &w, &h))
    return;
  fb_graph_view_set_viewport (self,
                              (wx - x) / self->minimap_scale - view_width (self) / self->zoom / 2,
                              (wy - y) / self->minimap_scale - view_height (self) / self->zoom / 2,
                              self->zoom);
}

static int
item_at_widget (FbGraphView *self,
                double       wx,
                double       wy)
{
  double sx, sy;

  if (self->scene == NULL)
    return -1;
  fb_graph_view_widget_to_scene (self, wx, wy, &sx, &sy);
  return fb_graph_scene_item_at (self->scene, sx, sy);
}

static void
on_click_pressed (GtkGestureClick *gesture,
                  int              n_press,
                  double           x,
                  double           y,
                  FbGraphView     *self)
{
  int index;
  const FbSceneItem *item;

  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (n_press != 2 || in_minimap (self, x, y) || (index = item_at_widget (self, x, y)) < 0)
    return;
  item = fb_graph_scene_item (self->scene, index);
  if (item->kind == FB_SCENE_ITEM_GROUP)
    fb_graph_view_set_group_expanded (self, fb_graph_group_get_path (item->group), TRUE);
  else if (item->kind == FB_SCENE_ITEM_FRAME)
    {
      double sx, sy;

      /* Only the title bar folds a frame back: double-clicking inside it is too easy. */
      fb_graph_view_widget_to_scene (self, x, y, &sx, &sy);
      if (sy < item->y + FB_GRAPH_FRAME_HEADER)
        fb_graph_view_set_group_expanded (self, fb_graph_group_get_path (item->group), FALSE);
    }
}

static void
on_click_released (GtkGestureClick *gesture,
                   int              n_press,
                   double           x,
                   double           y,
                   FbGraphView     *self)
{
  if (n_press != 1)
    return;
  if (in_minimap (self, x, y))
    center_from_minimap (self, x, y);
  else
    select_item (self, item_at_widget (self, x, y), FALSE);
}

static void
on_context_pressed (GtkGestureClick *gesture,
                    int              n_press,
                    double           x,
                    double           y,
                    FbGraphView     *self)
{
  int index = item_at_widget (self, x, y);
  const FbSceneItem *item;

  if (index < 0)
    return;
  select_item (self, index, FALSE);
  item = fb_graph_scene_item (self->scene, index);
  g_menu_remove_all (self->menu);
  g_signal_emit (self, signals[POPULATE_CONTEXT_MENU], 0, self->menu, item->node);
  if (g_menu_model_get_n_items (G_MENU_MODEL (self->menu)) == 0)
    return;
  gtk_popover_set_pointing_to (GTK_POPOVER (self->popover), &(GdkRectangle) { x, y, 1, 1 });
  gtk_popover_popup (GTK_POPOVER (self->popover));
}

static void
on_drag_begin (GtkGestureDrag *gesture,
               double          x,
               double          y,
               FbGraphView    *self)
{
  self->drag_minimap = in_minimap (self, x, y);
  self->drag_x = self->origin_x;
  self->drag_y = self->origin_y;
}

static void
on_drag_update (GtkGestureDrag *gesture,
                double          dx,
                double          dy,
                FbGraphView    *self)
{
  double x, y;

  if (self->drag_minimap)
    {
      gtk_gesture_drag_get_start_point (gesture, &x, &y);
      center_from_minimap (self, x + dx, y + dy);
      return;
    }
  fb_graph_view_set_viewport (self, self->drag_x - dx / self->zoom, self->drag_y - dy / self->zoom,
                              self->zoom);
}

static gboolean
on_scroll (GtkEventControllerScroll *controller,
           double                    dx,
           double                    dy,
           FbGraphView              *self)
{
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  double step = gtk_event_controller_scroll_get_unit (controller) == GDK_SCROLL_UNIT_WHEEL ? SCROLL_STEP : 1;

  if (state & GDK_CONTROL_MASK)
    {
      fb_graph_view_zoom_at (self, pow (ZOOM_STEP, -dy * (step == 1 ? 0.02 : 1)),
                             self->pointer_x, self->pointer_y);
      return TRUE;
    }
  if (state & GDK_SHIFT_MASK && dx == 0)
    {
      dx = dy;
      dy = 0;
    }
  fb_graph_view_set_viewport (self, self->origin_x + dx * step / self->zoom,
                              self->origin_y + dy * step / self->zoom, self->zoom);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *controller,
           double                    x,
           double                    y,
           FbGraphView              *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
}

static void
on_zoom_begin (GtkGesture       *gesture,
               GdkEventSequence *sequence,
               FbGraphView      *self)
{
  self->zoom_begin = self->zoom;
}

static void
on_zoom_scale_changed (GtkGestureZoom *gesture,
                       double          scale,
                       FbGraphView    *self)
{
  double cx, cy;

  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &cx, &cy))
    {
      cx = view_width (self) / 2;
      cy = view_height (self) / 2;
    }
  fb_graph_view_zoom_at (self, self->zoom_begin * scale / self->zoom, cx, cy);
}

static gboolean
on_key_pressed (GtkEventControllerKey *controller,
                guint                  keyval,
                guint                  keycode,
                GdkModifierType        state,
                FbGraphView           *self)
{
  gboolean ctrl = (state & GDK_CONTROL_MASK) != 0;

  switch (keyval)
    {
    case GDK_KEY_Up:
    case GDK_KEY_KP_Up:
      return fb_graph_view_walk (self, FB_GRAPH_WALK_UP) || TRUE;
    case GDK_KEY_Down:
    case GDK_KEY_KP_Down:
      return fb_graph_view_walk (self, FB_GRAPH_WALK_DOWN) || TRUE;
    case GDK_KEY_Left:
    case GDK_KEY_KP_Left:
      return fb_graph_view_walk (self, FB_GRAPH_WALK_LEFT) || TRUE;
    case GDK_KEY_Right:
    case GDK_KEY_KP_Right:
      return fb_graph_view_walk (self, FB_GRAPH_WALK_RIGHT) || TRUE;
    case GDK_KEY_plus:
    case GDK_KEY_equal:
    case GDK_KEY_KP_Add:
      fb_graph_view_zoom_in (self);
      return TRUE;
    case GDK_KEY_minus:
    case GDK_KEY_KP_Subtract:
      fb_graph_view_zoom_out (self);
      return TRUE;
    case GDK_KEY_0:
    case GDK_KEY_KP_0:
      if (!ctrl)
        return FALSE;
      fb_graph_view_zoom_to_fit (self);
      return TRUE;
    case GDK_KEY_Return:
    case GDK_KEY_KP_Enter:
    case GDK_KEY_space:
      {
        FbGraphGroup *group = fb_graph_view_get_selected_group (self);

        if (group == NULL)
          return FALSE;
        fb_graph_view_set_group_expanded (self, fb_graph_group_get_path (group),
                                          !fb_graph_view_get_group_expanded (self, fb_graph_group_get_path (group)));
        return TRUE;
      }
    case GDK_KEY_Escape:
      if (!self->has_selection)
        return FALSE;
      fb_graph_view_clear_selection (self);
      return TRUE;
    default:
      return FALSE;
    }
}

/* GtkWidget. */

static void
fb_graph_view_measure (GtkWidget      *widget,
                       GtkOrientation  orientation,
                       int             for_size,
                       int            *minimum,
                       int            *natural,
                       int            *minimum_baseline,
                       int            *natural_baseline)
{
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 160 : 120;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 480 : 360;
}

static void
fb_graph_view_size_allocate (GtkWidget *widget,
                             int        width,
                             int        height,
                             int        baseline)
{
  FbGraphView *self = FB_GRAPH_VIEW (widget);

  if (self->fit_pending && self->scene != NULL)
    show_first_picture (self);
  gtk_popover_present (GTK_POPOVER (self->popover));
}

static void
fb_graph_view_dispose (GObject *object)
{
  FbGraphView *self = FB_GRAPH_VIEW (object);

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->popover, gtk_widget_unparent);
  g_clear_object (&self->menu);
  g_clear_pointer (&self->scene, fb_graph_scene_unref);
  g_clear_pointer (&self->layout, fb_graph_layout_unref);
  g_clear_pointer (&self->marks, g_hash_table_unref);
  g_clear_object (&self->pango);
  g_clear_pointer (&self->minimap, cairo_surface_destroy);

  G_OBJECT_CLASS (fb_graph_view_parent_class)->dispose (object);
}

static void
fb_graph_view_finalize (GObject *object)
{
  FbGraphView *self = FB_GRAPH_VIEW (object);

  g_hash_table_unref (self->expanded);
  g_hash_table_unref (self->group_marks);
  g_ptr_array_unref (self->matches);
  g_hash_table_unref (self->match_set);
  g_free (self->error);
  g_free (self->query);
  g_free (self->selected_name);
  g_free (self->selected_path);
  g_free (self->anchor_path);

  G_OBJECT_CLASS (fb_graph_view_parent_class)->finalize (object);
}

static void
fb_graph_view_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  FbGraphView *self = FB_GRAPH_VIEW (object);

  switch (prop_id)
    {
    case PROP_BUSY:
      g_value_set_boolean (value, fb_graph_view_is_busy (self));
      break;
    case PROP_ZOOM:
      g_value_set_double (value, self->zoom);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
fb_graph_view_class_init (FbGraphViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fb_graph_view_dispose;
  object_class->finalize = fb_graph_view_finalize;
  object_class->get_property = fb_graph_view_get_property;
  widget_class->measure = fb_graph_view_measure;
  widget_class->size_allocate = fb_graph_view_size_allocate;
  widget_class->snapshot = _fb_graph_view_snapshot;

  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_ZOOM] =
    g_param_spec_double ("zoom", NULL, NULL, FB_GRAPH_VIEW_MIN_ZOOM, FB_GRAPH_VIEW_MAX_ZOOM, 1.0,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  signals[SELECTION_CHANGED] =
    g_signal_new ("selection-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[VIEWPORT_CHANGED] =
    g_signal_new ("viewport-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[GROUP_TOGGLED] =
    g_signal_new ("group-toggled", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_BOOLEAN);
  /* (menu, node or NULL for a group): add items to offer on a right-click. */
  signals[POPULATE_CONTEXT_MENU] =
    g_signal_new ("populate-context-menu", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_MENU, G_TYPE_POINTER);
  signals[SCENE_CHANGED] =
    g_signal_new ("scene-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_css_name (widget_class, "graphview");
}

static void
fb_graph_view_init (FbGraphView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  GtkGesture *gesture;
  GtkEventController *controller;

  self->zoom = 1.0;
  self->selected_item = -1;
  self->match_index = -1;
  self->fit_pending = TRUE;
  self->expanded = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->group_marks = g_hash_table_new (NULL, NULL);
  self->matches = g_ptr_array_new ();
  self->match_set = g_hash_table_new (NULL, NULL);

  gtk_widget_set_focusable (widget, TRUE);
  gtk_widget_set_overflow (widget, GTK_OVERFLOW_HIDDEN);

  gesture = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (gesture), GDK_BUTTON_PRIMARY);
  g_signal_connect (gesture, "pressed", G_CALLBACK (on_click_pressed), self);
  g_signal_connect (gesture, "released", G_CALLBACK (on_click_released), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (gesture));

  gesture = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (gesture), GDK_BUTTON_SECONDARY);
  g_signal_connect (gesture, "pressed", G_CALLBACK (on_context_pressed), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (gesture));

  gesture = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (gesture), GDK_BUTTON_PRIMARY);
  g_signal_connect (gesture, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (gesture, "drag-update", G_CALLBACK (on_drag_update), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (gesture));

  gesture = gtk_gesture_zoom_new ();
  g_signal_connect (gesture, "begin", G_CALLBACK (on_zoom_begin), self);
  g_signal_connect (gesture, "scale-changed", G_CALLBACK (on_zoom_scale_changed), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (gesture));

  controller = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (controller, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (widget, controller);

  controller = gtk_event_controller_motion_new ();
  g_signal_connect (controller, "motion", G_CALLBACK (on_motion), self);
  gtk_widget_add_controller (widget, controller);

  controller = gtk_event_controller_key_new ();
  g_signal_connect (controller, "key-pressed", G_CALLBACK (on_key_pressed), self);
  gtk_widget_add_controller (widget, controller);

  self->menu = g_menu_new ();
  self->popover = gtk_popover_menu_new_from_model (G_MENU_MODEL (self->menu));
  gtk_popover_set_has_arrow (GTK_POPOVER (self->popover), FALSE);
  gtk_widget_set_halign (self->popover, GTK_ALIGN_START);
  gtk_widget_set_parent (self->popover, widget);
}
