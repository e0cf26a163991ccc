/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where the graph view's overlays sit: the profile's legend and the minimap, each in a corner of
 * the view. They are there to explain and to steer, never to hide what they explain: each takes
 * a corner with no box under it, keeps its corner while that stays so (overlays that hop about
 * while the user pans would be worse than none), and when every corner has boxes the fit leaves
 * them a band of their own (fb_graph_view_zoom_to_fit). The minimap is left out of a view too
 * small to spare it the room. */
#include "fb-graph-view-private.h"
#include "fb-profile-overlay-private.h"

#define MINIMAP_LEAST_VIEW_WIDTH   360.0  /* px: under this the minimap is not shown */
#define MINIMAP_LEAST_VIEW_HEIGHT  300.0
#define MINIMAP_FRAME              4.0    /* px drawn around the minimap's picture */

/* In the order a corner is preferred in, per overlay: the legend reads best at the bottom-left
 * (where the eye ends), the minimap at the bottom-right (where every map tool has it). */
static const FbOverlayCorner legend_order[] = {
  FB_OVERLAY_BOTTOM_LEFT, FB_OVERLAY_BOTTOM_RIGHT, FB_OVERLAY_TOP_LEFT, FB_OVERLAY_TOP_RIGHT,
};
static const FbOverlayCorner minimap_order[] = {
  FB_OVERLAY_BOTTOM_RIGHT, FB_OVERLAY_TOP_RIGHT, FB_OVERLAY_BOTTOM_LEFT, FB_OVERLAY_TOP_LEFT,
};

/* The legend's size when one is shown: with a painted profile, in a view with room for it. */
static gboolean
legend_size (FbGraphView *self,
             double      *width,
             double      *height)
{
  double vw = gtk_widget_get_width (GTK_WIDGET (self)), vh = gtk_widget_get_height (GTK_WIDGET (self));

  *width = FB_PROFILE_LEGEND_WIDTH;
  *height = FB_PROFILE_LEGEND_HEIGHT;
  return self->overlay != NULL && self->scene != NULL && vw >= *width + 2 * FB_PROFILE_LEGEND_INSET
         && vh >= *height + 2 * FB_PROFILE_LEGEND_INSET;
}

/* The minimap's size, frame included, when one is shown: only when the picture does not fit,
 * and in a view big enough to spare it at most a third of its width and a quarter of its
 * height. */
static gboolean
minimap_size (FbGraphView *self,
              double      *width,
              double      *height)
{
  double w, h, vw, vh, scale;

  if (self->scene == NULL)
    return FALSE;
  fb_graph_scene_get_bounds (self->scene, &w, &h);
  vw = gtk_widget_get_width (GTK_WIDGET (self));
  vh = gtk_widget_get_height (GTK_WIDGET (self));
  if ((w * self->zoom <= vw && h * self->zoom <= vh) || vw < MINIMAP_LEAST_VIEW_WIDTH
      || vh < MINIMAP_LEAST_VIEW_HEIGHT || w <= 0 || h <= 0)
    return FALSE;
  scale = MIN (MIN (FB_MINIMAP_WIDTH, vw / 3) / w, MIN (FB_MINIMAP_HEIGHT, vh / 4) / h);
  self->minimap_scale = scale;
  *width = w * scale + 2 * MINIMAP_FRAME;
  *height = h * scale + 2 * MINIMAP_FRAME;
  return TRUE;
}

static graphene_rect_t
corner_rect (FbGraphView     *self,
             FbOverlayCorner  corner,
             double           width,
             double           height,
             double           inset)
{
  double vw = gtk_widget_get_width (GTK_WIDGET (self)), vh = gtk_widget_get_height (GTK_WIDGET (self));
  gboolean left = corner == FB_OVERLAY_BOTTOM_LEFT || corner == FB_OVERLAY_TOP_LEFT;
  gboolean top = corner == FB_OVERLAY_TOP_LEFT || corner == FB_OVERLAY_TOP_RIGHT;

  return GRAPHENE_RECT_INIT (left ? inset : vw - width - inset, top ? inset : vh - height - inset, width, height);
}

/* How much of rect (widget coordinates) boxes cover: 0 when none lies under it. Frames of open
 * groups are backgrounds, not boxes. */
static double
covered (FbGraphView           *self,
         const graphene_rect_t *rect)
{
  double area = 0;

  for (guint i = 0; i < fb_graph_scene_n_items (self->scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (self->scene, i);
      graphene_rect_t box, both;

      if (item->kind == FB_SCENE_ITEM_FRAME)
        continue;
      box = GRAPHENE_RECT_INIT ((item->x - self->origin_x) * self->zoom, (item->y - self->origin_y) * self->zoom,
                                item->width * self->zoom, item->height * self->zoom);
      if (graphene_rect_intersection (&box, rect, &both))
        area += MAX (both.size.width * both.size.height, 1);
    }
  return area;
}

/* The corner for an overlay of that size: the one it has when nothing lies under it there,
 * else the first free one in order, else the least covered; never taken (another overlay's). */
static FbOverlayCorner
choose_corner (FbGraphView           *self,
               const FbOverlayCorner *order,
               FbOverlayCorner        current,
               FbOverlayCorner        taken,
               double                 width,
               double                 height,
               double                 inset,
               double                *least)
{
  FbOverlayCorner best = order[0] != taken ? order[0] : order[1];
  graphene_rect_t rect;

  *least = G_MAXDOUBLE;
  if (current != taken)
    {
      rect = corner_rect (self, current, width, height, inset);
      if ((*least = covered (self, &rect)) == 0)
        return current;
      best = current;
    }
  for (guint i = 0; i < 4; i++)
    {
      double area;

      if (order[i] == taken || order[i] == current)
        continue;
      rect = corner_rect (self, order[i], width, height, inset);
      area = covered (self, &rect);
      if (area < *least)
        {
          *least = area;
          best = order[i];
        }
      if (area == 0)
        break;
    }
  return best;
}

gboolean
_fb_graph_view_place_overlays (FbGraphView *self)
{
  double w, h, legend_covers = 0, minimap_covers = 0;
  FbOverlayCorner legend = FB_N_OVERLAY_CORNERS;

  if (self->scene == NULL)
    return TRUE;
  if (legend_size (self, &w, &h))
    {
      legend = choose_corner (self, legend_order, self->legend_corner, FB_N_OVERLAY_CORNERS, w, h,
                              FB_PROFILE_LEGEND_INSET, &legend_covers);
      self->legend_corner = legend;
    }
  if (minimap_size (self, &w, &h))
    self->minimap_corner = choose_corner (self, minimap_order, self->minimap_corner, legend, w, h,
                                          FB_MINIMAP_MARGIN - MINIMAP_FRAME, &minimap_covers);
  return legend_covers == 0 && minimap_covers == 0;
}

void
_fb_graph_view_fit_margins (FbGraphView *self,
                            double      *top,
                            double      *bottom)
{
  double w, h, band = 0, sw, sh;

  *top = *bottom = 0;
  if (self->scene == NULL || _fb_graph_view_place_overlays (self))
    return;
  if (legend_size (self, &w, &h))
    band = h + 2 * FB_PROFILE_LEGEND_INSET;
  if (minimap_size (self, &w, &h))
    band = MAX (band, h + 2 * (FB_MINIMAP_MARGIN - MINIMAP_FRAME));
  /* A picture that fits whole leaves the band under it; one taller than the view starts under
   * the band, the overlays above its first boxes. */
  fb_graph_scene_get_bounds (self->scene, &sw, &sh);
  if (sh * self->zoom <= gtk_widget_get_height (GTK_WIDGET (self)))
    *bottom = band;
  else
    *top = band;
}

gboolean
_fb_graph_view_legend_rect (FbGraphView     *self,
                            graphene_rect_t *rect)
{
  double w, h;

  if (!legend_size (self, &w, &h))
    return FALSE;
  *rect = corner_rect (self, self->legend_corner, w, h, FB_PROFILE_LEGEND_INSET);
  return TRUE;
}

gboolean
_fb_graph_view_minimap_rect (FbGraphView *self,
                             double      *x,
                             double      *y,
                             double      *width,
                             double      *height)
{
  graphene_rect_t rect;
  double w, h;

  if (!minimap_size (self, &w, &h))
    return FALSE;
  rect = corner_rect (self, self->minimap_corner, w, h, FB_MINIMAP_MARGIN - MINIMAP_FRAME);
  *x = rect.origin.x + MINIMAP_FRAME;
  *y = rect.origin.y + MINIMAP_FRAME;
  *width = w - 2 * MINIMAP_FRAME;
  *height = h - 2 * MINIMAP_FRAME;
  return TRUE;
}

gboolean
fb_graph_view_get_overlay_rect (FbGraphView     *self,
                                FbGraphOverlay   overlay,
                                graphene_rect_t *rect)
{
  double x, y, w, h;

  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), FALSE);
  g_return_val_if_fail (rect != NULL, FALSE);

  _fb_graph_view_place_overlays (self);
  if (overlay == FB_GRAPH_OVERLAY_LEGEND)
    return _fb_graph_view_legend_rect (self, rect);
  if (!_fb_graph_view_minimap_rect (self, &x, &y, &w, &h))
    return FALSE;
  *rect = GRAPHENE_RECT_INIT (x - MINIMAP_FRAME, y - MINIMAP_FRAME, w + 2 * MINIMAP_FRAME, h + 2 * MINIMAP_FRAME);
  return TRUE;
}
