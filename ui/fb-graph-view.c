/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-graph-view-private.h"
#include "fb-graph-style-private.h"
#include "fb-profile-overlay-private.h"
#include "fb-graph-labels.h"

#include <adwaita.h>

#include <math.h>
#include <string.h>

#define ZOOM_STEP 1.25

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

GtkWidget *
fb_graph_view_new (void)
{
  return g_object_new (FB_TYPE_GRAPH_VIEW, NULL);
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
  /* Where to look is decided, even when it is where the view looks already: no first picture
     is to replace it. */
  self->fit_pending = FALSE;
  if (x == self->origin_x && y == self->origin_y && zoom == self->zoom)
    return;
  self->origin_x = x;
  self->origin_y = y;
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
  fb_graph_view_zoom_at (self, ZOOM_STEP, _fb_graph_view_width (self) / 2, _fb_graph_view_height (self) / 2);
}

void
fb_graph_view_zoom_out (FbGraphView *self)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));
  fb_graph_view_zoom_at (self, 1 / ZOOM_STEP, _fb_graph_view_width (self) / 2, _fb_graph_view_height (self) / 2);
}

/* Scrolls so that item is on screen, centring it only when it was not. */
void
_fb_graph_view_reveal_item (FbGraphView *self,
                            int          index)
{
  const FbSceneItem *item;
  double x0, y0, x1, y1, w, h;

  if (self->scene == NULL || index < 0)
    return;
  item = fb_graph_scene_item (self->scene, index);
  w = _fb_graph_view_width (self) / self->zoom;
  h = _fb_graph_view_height (self) / self->zoom;
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
  _fb_graph_view_emit_group_toggled (self, path, expanded);
  _fb_graph_view_relayout (self);
}

void
fb_graph_view_expand_groups (FbGraphView *self,
                             GHashTable  *paths)
{
  GHashTableIter iter;
  gpointer path;
  gboolean opened = FALSE;

  g_return_if_fail (FB_IS_GRAPH_VIEW (self));
  g_return_if_fail (paths != NULL);

  g_hash_table_iter_init (&iter, paths);
  while (g_hash_table_iter_next (&iter, &path, NULL))
    {
      if (g_hash_table_contains (self->expanded, path))
        continue;
      g_hash_table_add (self->expanded, g_strdup (path));
      _fb_graph_view_emit_group_toggled (self, path, TRUE);
      opened = TRUE;
    }
  if (opened && self->layout != NULL)
    _fb_graph_view_relayout (self);
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
  _fb_graph_view_invalidate (self);
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
  /* What it held was placed in the scene before. */
  _fb_graph_view_drop_held (self);
  self->selected_item = _fb_graph_view_resolve_selection (self);
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
    _fb_graph_view_show_first_picture (self);
  if (self->focus_rects != NULL && gtk_widget_get_width (GTK_WIDGET (self)) > 0)
    _fb_graph_view_apply_focus (self);
  if (self->reveal_pending)
    {
      _fb_graph_view_reveal_item (self, self->selected_item);
      self->reveal_pending = FALSE;
    }
  _fb_graph_view_invalidate (self);
  g_signal_emit (self, signals[SCENE_CHANGED], 0);

out:
  g_object_unref (request->self);
  g_free (request);
}

/* A partial scene of the layout in flight: drawn as it is, the layout still busy. */
static void
partial_scene_ready (FbGraphScene *scene,
                     gpointer      user_data)
{
  LayoutRequest *request = user_data;
  FbGraphView *self = request->self;

  if (request->generation != self->generation)
    return;
  g_clear_pointer (&self->scene, fb_graph_scene_unref);
  self->scene = fb_graph_scene_ref (scene);
  self->selected_item = _fb_graph_view_resolve_selection (self);
  if (self->fit_pending && gtk_widget_get_width (GTK_WIDGET (self)) > 0)
    _fb_graph_view_show_first_picture (self);
  _fb_graph_view_invalidate (self);
}

static void
layout_request_free (gpointer data)
{
  LayoutRequest *request = data;

  g_object_unref (request->self);
  g_free (request);
}

/* The groups the viewport shows: laid out first. */
static GStrv
visible_groups (FbGraphView *self)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  double x0 = self->origin_x, y0 = self->origin_y;
  double x1 = x0 + _fb_graph_view_width (self) / self->zoom;
  double y1 = y0 + _fb_graph_view_height (self) / self->zoom;

  if (self->scene == NULL || fb_graph_scene_get_layout (self->scene) != self->layout)
    return NULL;
  for (guint i = 0; i < fb_graph_scene_n_items (self->scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (self->scene, i);

      if (item->group != NULL && item->x < x1 && item->x + item->width > x0
          && item->y < y1 && item->y + item->height > y0)
        g_strv_builder_add (builder, fb_graph_group_get_path (item->group));
    }
  return g_strv_builder_end (builder);
}

static gboolean
start_layout (gpointer data)
{
  FbGraphView *self = data;
  LayoutRequest *request, *progress;
  g_auto(GStrv) first = visible_groups (self);

  self->relayout_source = 0;
  request = g_new (LayoutRequest, 1);
  request->self = g_object_ref (self);
  request->generation = self->generation;
  progress = g_new (LayoutRequest, 1);
  progress->self = g_object_ref (self);
  progress->generation = self->generation;
  fb_graph_layout_compute_progressive (self->layout, self->expanded, (const char * const *) first,
                                       self->cancellable, partial_scene_ready, progress,
                                       layout_request_free, scene_ready, request);
  return G_SOURCE_REMOVE;
}

/* The view is busy from now on, but the layout starts from the main loop: opening thousands of
 * groups one call at a time ("everything open") then asks for one layout, not one per group. */
void
_fb_graph_view_relayout (FbGraphView *self)
{
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->generation++;
  if (self->layout == NULL)
    {
      g_clear_handle_id (&self->relayout_source, g_source_remove);
      set_busy (self, FALSE);
      return;
    }
  self->cancellable = g_cancellable_new ();
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
  if (self->relayout_source == 0)
    self->relayout_source = g_idle_add_full (G_PRIORITY_DEFAULT, start_layout, self, NULL);
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
      /* Nothing shown: what was open, selected or searched belonged to another model. */
      g_clear_pointer (&self->scene, fb_graph_scene_unref);
      g_hash_table_remove_all (self->expanded);
      self->has_selection = FALSE;
      self->selected_value = FALSE;
      self->selected_constant = NULL;
      self->selected_item = -1;
      g_clear_pointer (&self->focus_rects, g_array_unref);
      g_clear_pointer (&self->selected_path, g_free);
      g_clear_pointer (&self->selected_name, g_free);
      g_clear_pointer (&self->query, g_free);
      self->fit_pending = TRUE;
  self->overlay_metric = FB_PROFILE_METRIC_SHARE;
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
  _fb_graph_view_relayout (self);
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

/* Signals, for the other files of the view. */

void
_fb_graph_view_emit_selection_changed (FbGraphView *self)
{
  g_signal_emit (self, signals[SELECTION_CHANGED], 0);
}

void
_fb_graph_view_emit_group_toggled (FbGraphView *self,
                                   const char  *path,
                                   gboolean     expanded)
{
  g_signal_emit (self, signals[GROUP_TOGGLED], 0, path, expanded);
}

void
_fb_graph_view_emit_populate_context_menu (FbGraphView *self,
                                           FbNode      *node)
{
  g_signal_emit (self, signals[POPULATE_CONTEXT_MENU], 0, self->menu, node);
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

  /* Not on the picture of an older layout, nor of one about to be replaced: the scene landing
     fits it. */
  if (self->fit_pending && fb_graph_view_get_scene (self) != NULL && !fb_graph_view_is_busy (self))
    _fb_graph_view_show_first_picture (self);
  if (self->focus_rects != NULL && self->scene != NULL)
    _fb_graph_view_apply_focus (self);
  _fb_graph_view_reapply_held (self);
  gtk_popover_present (GTK_POPOVER (self->popover));
}

static void
fb_graph_view_dispose (GObject *object)
{
  FbGraphView *self = FB_GRAPH_VIEW (object);

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_handle_id (&self->relayout_source, g_source_remove);
  g_clear_pointer (&self->popover, gtk_widget_unparent);
  g_clear_object (&self->menu);
  g_clear_pointer (&self->scene, fb_graph_scene_unref);
  g_clear_pointer (&self->layout, fb_graph_layout_unref);
  g_clear_pointer (&self->marks, g_hash_table_unref);
  g_clear_object (&self->pango);
  g_clear_pointer (&self->minimap, cairo_surface_destroy);
  g_clear_pointer (&self->labels, fb_graph_labels_free);
  g_clear_pointer (&self->labels_scene, fb_graph_scene_unref);

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
  g_hash_table_unref (self->tiles);
  g_clear_pointer (&self->overlay, _fb_profile_overlay_free);
  g_free (self->error);
  g_free (self->query);
  g_free (self->selected_name);
  g_free (self->selected_path);
  g_free (self->anchor_path);
  g_clear_pointer (&self->focus_rects, g_array_unref);
  g_clear_pointer (&self->held_rects, g_array_unref);

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

  self->zoom = 1.0;
  self->selected_item = -1;
  self->match_index = -1;
  self->fit_pending = TRUE;
  self->minimap_corner = FB_OVERLAY_BOTTOM_RIGHT;
  self->expanded = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->group_marks = g_hash_table_new (NULL, NULL);
  self->matches = g_ptr_array_new ();
  self->match_set = g_hash_table_new (NULL, NULL);
  self->tiles = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                       (GDestroyNotify) cairo_surface_destroy);
  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (_fb_graph_view_invalidate), self, G_CONNECT_SWAPPED);

  gtk_widget_set_focusable (widget, TRUE);
  gtk_widget_set_overflow (widget, GTK_OVERFLOW_HIDDEN);

  _fb_graph_view_init_input (self);

  self->menu = g_menu_new ();
  self->popover = gtk_popover_menu_new_from_model (G_MENU_MODEL (self->menu));
  gtk_popover_set_has_arrow (GTK_POPOVER (self->popover), FALSE);
  gtk_widget_set_halign (self->popover, GTK_ALIGN_START);
  gtk_widget_set_parent (self->popover, widget);
}
