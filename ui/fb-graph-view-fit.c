/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where the graph view looks: fitting the graph (its width, when it is much taller than wide),
 * the first picture of a graph, its top, and a set of boxes to show (what a pass changed). The
 * first screen is never empty space, and the picture chosen is chosen again for a new size of
 * the view until someone moves it. */
#include "fb-graph-view-private.h"
#include "fb-graph-style-private.h"

#define TALL_RATIO 2.0    /* fitting the width shows boxes this much bigger than fitting all */

/* Whether a box (not a frame) shows in the viewport. */
static gboolean
shows_something (FbGraphView *self)
{
  double x0 = self->origin_x, y0 = self->origin_y;
  double x1 = x0 + _fb_graph_view_width (self) / self->zoom;
  double y1 = y0 + _fb_graph_view_height (self) / self->zoom;

  for (guint i = 0; i < fb_graph_scene_n_items (self->scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (self->scene, i);

      if (item->kind != FB_SCENE_ITEM_FRAME && item->x < x1 && item->x + item->width > x0
          && item->y < y1 && item->y + item->height > y0)
        return TRUE;
    }
  return FALSE;
}

/* The box nearest the top of the picture (a frame's members, not the frame), or NULL. */
static const FbSceneItem *
topmost (FbGraphView *self)
{
  const FbSceneItem *top = NULL;

  for (guint i = 0; i < fb_graph_scene_n_items (self->scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (self->scene, i);

      if (item->kind != FB_SCENE_ITEM_FRAME && (top == NULL || item->y < top->y))
        top = item;
    }
  return top;
}

/* The first screen is never empty space: when no box shows, the topmost one goes to the top of
 * the view, centred across. */
static void
show_something (FbGraphView *self)
{
  const FbSceneItem *top;

  if (self->scene == NULL || shows_something (self) || (top = topmost (self)) == NULL)
    return;
  fb_graph_view_set_viewport (self, top->x + top->width / 2 - _fb_graph_view_width (self) / self->zoom / 2,
                              top->y - FB_GRAPH_FRAME_PAD, self->zoom);
}

static void
hold (FbGraphView *self,
      GArray      *rects)
{
  _fb_graph_view_drop_held (self);
  self->held = TRUE;
  self->held_rects = rects;
  self->held_x = self->origin_x;
  self->held_y = self->origin_y;
  self->held_zoom = self->zoom;
  self->held_width = gtk_widget_get_width (GTK_WIDGET (self));
  self->held_height = gtk_widget_get_height (GTK_WIDGET (self));
}

void
_fb_graph_view_drop_held (FbGraphView *self)
{
  self->held = FALSE;
  g_clear_pointer (&self->held_rects, g_array_unref);
}

/* Fits the graph into the view less a band of top and bottom px (widget pixels) kept free. */
static void
fit_within (FbGraphView *self,
            double       top,
            double       bottom)
{
  double width, height, zoom, across, w, h;

  w = _fb_graph_view_width (self);
  h = MAX (1, _fb_graph_view_height (self) - top - bottom);
  fb_graph_scene_get_bounds (self->scene, &width, &height);
  width = MAX (width, 1);
  height = MAX (height, 1);
  /* Never blow a small graph up beyond its natural size. */
  zoom = MIN (1.0, 0.96 * MIN (w / width, h / height));
  across = MIN (1.0, 0.96 * w / width);
  if (zoom < FB_GRAPH_VIEW_READABLE_ZOOM && across >= TALL_RATIO * zoom)
    {
      /* Much taller than wide: all of it would be a strip of boxes too small to read. Its width
         fits instead, from the top. */
      zoom = CLAMP (across, FB_GRAPH_VIEW_MIN_ZOOM, FB_GRAPH_VIEW_MAX_ZOOM);
      fb_graph_view_set_viewport (self, width / 2 - w / zoom / 2, -top / zoom, zoom);
      show_something (self);
      return;
    }
  zoom = CLAMP (zoom, FB_GRAPH_VIEW_MIN_ZOOM, FB_GRAPH_VIEW_MAX_ZOOM);
  fb_graph_view_set_viewport (self, width / 2 - w / zoom / 2, height / 2 - (top + h / 2) / zoom, zoom);
}

void
fb_graph_view_zoom_to_fit (FbGraphView *self)
{
  double top, bottom;

  g_return_if_fail (FB_IS_GRAPH_VIEW (self));

  if (self->scene == NULL)
    return;
  fit_within (self, 0, 0);
  /* Where no corner is free for the legend or the minimap, the fit leaves them a band rather
   * than hide boxes under them. */
  _fb_graph_view_fit_margins (self, &top, &bottom);
  if (top > 0 || bottom > 0)
    fit_within (self, top, bottom);
}

/* The first picture of a graph: all of it when that is readable (or its width, when it is much
 * taller than wide), else its top at a size where the text shows: centred across when that
 * fits, else centred on its topmost box. */
void
_fb_graph_view_show_first_picture (FbGraphView *self)
{
  double width, height, w = _fb_graph_view_width (self), zoom, x;
  const FbSceneItem *top;

  self->fit_pending = FALSE;
  fb_graph_view_zoom_to_fit (self);
  if (self->zoom >= FB_GRAPH_VIEW_READABLE_ZOOM)
    {
      hold (self, NULL);
      return;
    }
  fb_graph_scene_get_bounds (self->scene, &width, &height);
  zoom = FB_GRAPH_VIEW_READABLE_ZOOM;
  if (width * zoom <= w)
    x = width / 2 - w / zoom / 2;
  else if ((top = topmost (self)) != NULL)
    x = CLAMP (top->x + top->width / 2 - w / zoom / 2, 0, width - w / zoom);
  else
    x = 0;
  fb_graph_view_set_viewport (self, x, 0, zoom);
  show_something (self);
  hold (self, NULL);
}

void
_fb_graph_view_reapply_held (FbGraphView *self)
{
  if (!self->held || self->scene == NULL
      || (gtk_widget_get_width (GTK_WIDGET (self)) == self->held_width
          && gtk_widget_get_height (GTK_WIDGET (self)) == self->held_height))
    return;
  /* The user (or the other side of a comparison) moved it: theirs now. */
  if (self->origin_x != self->held_x || self->origin_y != self->held_y || self->zoom != self->held_zoom)
    {
      _fb_graph_view_drop_held (self);
      return;
    }
  if (self->held_rects == NULL)
    _fb_graph_view_show_first_picture (self);
  else
    {
      g_clear_pointer (&self->focus_rects, g_array_unref);
      self->focus_rects = g_steal_pointer (&self->held_rects);
      _fb_graph_view_apply_focus (self);
    }
}

static int
compare_rect_y (gconstpointer a,
                gconstpointer b)
{
  const graphene_rect_t *p = a, *q = b;

  return p->origin.y < q->origin.y ? -1 : p->origin.y > q->origin.y;
}

/* rects is sorted by y. The readable screenful of vw x vh scene pixels that holds most of them
 * whole: its top at the top of one of them, centred across on that one. */
static void
best_screenful (const GArray *rects,
                double        vw,
                double        vh,
                double        margin,
                double       *x,
                double       *y)
{
  guint best = 0;

  for (guint i = 0; i < rects->len; i++)
    {
      const graphene_rect_t *a = &g_array_index (rects, graphene_rect_t, i);
      double top = a->origin.y - margin, cx = a->origin.x + a->size.width / 2;
      guint count = 0;

      for (guint j = i; j < rects->len; j++)
        {
          const graphene_rect_t *b = &g_array_index (rects, graphene_rect_t, j);

          if (b->origin.y > top + vh)
            break;
          count += b->origin.y + b->size.height <= top + vh
                   && b->origin.x >= cx - vw / 2 && b->origin.x + b->size.width <= cx + vw / 2;
        }
      if (count > best)
        {
          best = count;
          *x = cx - vw / 2;
          *y = top;
        }
    }
}

void
_fb_graph_view_apply_focus (FbGraphView *self)
{
  g_autoptr(GArray) rects = g_steal_pointer (&self->focus_rects);
  double w = _fb_graph_view_width (self), h = _fb_graph_view_height (self);
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE, zoom, x, y;
  double margin = 24;

  for (guint i = 0; i < rects->len; i++)
    {
      const graphene_rect_t *r = &g_array_index (rects, graphene_rect_t, i);

      x0 = MIN (x0, r->origin.x);
      y0 = MIN (y0, r->origin.y);
      x1 = MAX (x1, r->origin.x + r->size.width);
      y1 = MAX (y1, r->origin.y + r->size.height);
    }
  /* All of them, with a margin, no bigger than their natural size. */
  zoom = MIN (1.0, MIN ((w - 2 * margin) / MAX (x1 - x0, 1), (h - 2 * margin) / MAX (y1 - y0, 1)));
  if (zoom >= FB_GRAPH_VIEW_READABLE_ZOOM)
    fb_graph_view_set_viewport (self, (x0 + x1) / 2 - w / zoom / 2, (y0 + y1) / 2 - h / zoom / 2, zoom);
  else
    {
      zoom = FB_GRAPH_VIEW_READABLE_ZOOM;
      g_array_sort (rects, compare_rect_y);
      x = x0;
      y = y0;
      best_screenful (rects, w / zoom, h / zoom, margin / zoom, &x, &y);
      fb_graph_view_set_viewport (self, x, y, zoom);
    }
  hold (self, g_array_ref (rects));
}

void
fb_graph_view_show_rects (FbGraphView           *self,
                          const graphene_rect_t *rects,
                          guint                  n_rects)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));
  g_return_if_fail (rects != NULL || n_rects == 0);

  if (n_rects == 0)
    return;
  g_clear_pointer (&self->focus_rects, g_array_unref);
  self->focus_rects = g_array_sized_new (FALSE, FALSE, sizeof (graphene_rect_t), n_rects);
  g_array_append_vals (self->focus_rects, rects, n_rects);
  /* This is the picture to start with: the first picture's fit would replace it. */
  self->fit_pending = FALSE;
  if (self->scene != NULL && gtk_widget_get_width (GTK_WIDGET (self)) > 0)
    _fb_graph_view_apply_focus (self);
}

void
fb_graph_view_show_top (FbGraphView *self)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));

  g_clear_pointer (&self->focus_rects, g_array_unref);
  self->fit_pending = TRUE;
  /* Else when the scene of this layout lands, or the view gets its size. */
  if (fb_graph_view_get_scene (self) != NULL && !fb_graph_view_is_busy (self)
      && gtk_widget_get_width (GTK_WIDGET (self)) > 0)
    _fb_graph_view_show_first_picture (self);
}
