/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Drawing the graph view: the scene in cached tiles (through fb-graph-paint.c, which pictures
 * share), a minimap drawn once per scene, the legend, and the status line. Where the minimap and
 * the legend go is fb-graph-view-overlays.c's to say. */
#include "fb-graph-view-private.h"
#include "fb-graph-paint.h"
#include "fb-graph-labels.h"
#include "fb-profile-overlay-private.h"
#include "fb-graph-style-private.h"

#include <adwaita.h>
#include <math.h>
#include <string.h>

typedef FbGraphRgb Rgb;

typedef struct {
  FbGraphPaint  paint;
  FbGraphView  *self;
} Draw;

static void
set_rgb (cairo_t   *cr,
         const Rgb *c,
         double     alpha)
{
  cairo_set_source_rgba (cr, c->r, c->g, c->b, alpha);
}

static void
render_minimap (Draw   *d,
                double  width,
                double  height)
{
  FbGraphView *self = d->self;
  int scale_factor = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  cairo_t *cr;

  self->minimap = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, ceil (width * scale_factor),
                                              ceil (height * scale_factor));
  cairo_surface_set_device_scale (self->minimap, scale_factor, scale_factor);
  cr = cairo_create (self->minimap);
  cairo_scale (cr, self->minimap_scale, self->minimap_scale);
  for (guint i = 0; i < fb_graph_scene_n_items (self->scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (self->scene, i);
      Rgb color = fb_graph_paint_item_color (&d->paint, item);

      cairo_rectangle (cr, item->x, item->y, item->width, item->height);
      if (item->kind == FB_SCENE_ITEM_FRAME)
        {
          set_rgb (cr, &d->paint.fg, 0.06);
          cairo_fill (cr);
          continue;
        }
      set_rgb (cr, &color, 0.9);
      cairo_fill (cr);
    }
  cairo_destroy (cr);
}

static void
draw_minimap (Draw *d)
{
  FbGraphView *self = d->self;
  cairo_t *cr = d->paint.cr;
  double x, y, w, h, vx, vy, vw, vh;

  if (!_fb_graph_view_minimap_rect (self, &x, &y, &w, &h))
    return;
  if (self->minimap == NULL)
    render_minimap (d, w, h);

  fb_graph_paint_rounded_rect (cr, x - 4, y - 4, w + 8, h + 8, 6);
  set_rgb (cr, &d->paint.bg, 0.92);
  cairo_fill_preserve (cr);
  cairo_set_line_width (cr, 1);
  set_rgb (cr, &d->paint.fg, 0.25);
  cairo_stroke (cr);
  cairo_set_source_surface (cr, self->minimap, x, y);
  cairo_paint (cr);

  vx = x + self->origin_x * self->minimap_scale;
  vy = y + self->origin_y * self->minimap_scale;
  vw = gtk_widget_get_width (GTK_WIDGET (self)) / self->zoom * self->minimap_scale;
  vh = gtk_widget_get_height (GTK_WIDGET (self)) / self->zoom * self->minimap_scale;
  cairo_save (cr);
  cairo_rectangle (cr, x, y, w, h);
  cairo_clip (cr);
  cairo_rectangle (cr, vx, vy, vw, vh);
  set_rgb (cr, &fb_graph_paint_accent, 0.15);
  cairo_fill_preserve (cr);
  cairo_set_line_width (cr, 1.5);
  set_rgb (cr, &fb_graph_paint_accent, 1);
  cairo_stroke (cr);
  cairo_restore (cr);
}

static void
draw_status (Draw       *d,
             const char *text)
{
  PangoRectangle extents;

  pango_layout_set_font_description (d->paint.text, d->paint.small_font);
  pango_layout_set_width (d->paint.text, -1);
  pango_layout_set_text (d->paint.text, text, -1);
  pango_layout_get_pixel_extents (d->paint.text, NULL, &extents);
  fb_graph_paint_rounded_rect (d->paint.cr, 8, 8, extents.width + 16, extents.height + 10, 6);
  set_rgb (d->paint.cr, &d->paint.bg, 0.9);
  cairo_fill_preserve (d->paint.cr);
  set_rgb (d->paint.cr, &d->paint.fg, 0.3);
  cairo_set_line_width (d->paint.cr, 1);
  cairo_stroke (d->paint.cr);
  set_rgb (d->paint.cr, &d->paint.fg, 0.9);
  cairo_move_to (d->paint.cr, 16, 13);
  pango_cairo_show_layout (d->paint.cr, d->paint.text);
}
/* The scene is painted in tiles of FB_TILE_SIZE widget pixels at the current zoom and kept:
 * panning then only copies pixels, and only tiles that come into view are drawn. Anything that
 * changes what the scene looks like (zoom, selection, marks, search, a new scene) drops them. */
static cairo_surface_t *
render_tile (Draw         *d,
             FbGraphScene *scene,
             int           tx,
             int           ty,
             int           scale_factor)
{
  cairo_surface_t *tile = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, FB_TILE_SIZE * scale_factor,
                                                      FB_TILE_SIZE * scale_factor);
  double span = FB_TILE_SIZE / d->paint.zoom;
  cairo_t *cr;

  cairo_surface_set_device_scale (tile, scale_factor, scale_factor);
  cr = cairo_create (tile);
  /* Opaque, so that copying it onto the window is a plain copy. */
  set_rgb (cr, &d->paint.bg, 1);
  cairo_paint (cr);
  cairo_scale (cr, d->paint.zoom, d->paint.zoom);
  cairo_translate (cr, -tx * span, -ty * span);
  pango_cairo_update_context (cr, d->self->pango);
  d->paint.cr = cr;
  d->paint.x0 = tx * span;
  d->paint.y0 = ty * span;
  d->paint.x1 = d->paint.x0 + span;
  d->paint.y1 = d->paint.y0 + span;
  fb_graph_paint_scene (&d->paint, scene);
  cairo_destroy (cr);
  return tile;
}

static void
paint_tiles (Draw         *d,
             cairo_t      *cr,
             FbGraphScene *scene,
             double        width,
             double        height)
{
  FbGraphView *self = d->self;
  int scale_factor = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  /* Whole device pixels: copies at fractional offsets would be resampled, blurred and slow. */
  double px = round (self->origin_x * self->zoom * scale_factor) / scale_factor;
  double py = round (self->origin_y * self->zoom * scale_factor) / scale_factor;
  int tx0 = (int) floor (px / FB_TILE_SIZE), ty0 = (int) floor (py / FB_TILE_SIZE);
  int tx1 = (int) floor ((px + width) / FB_TILE_SIZE), ty1 = (int) floor ((py + height) / FB_TILE_SIZE);

  if (self->tiles_zoom != self->zoom || self->tiles_scale != scale_factor
      || g_hash_table_size (self->tiles) > 4 * (guint) ((tx1 - tx0 + 1) * (ty1 - ty0 + 1)))
    {
      g_hash_table_remove_all (self->tiles);
      self->tiles_zoom = self->zoom;
      self->tiles_scale = scale_factor;
    }
  d->paint.text = pango_layout_new (self->pango);
  /* Once per scene, over all of it: a label left out in one tile must be left out in all. */
  if (self->labels_scene != scene)
    {
      g_clear_pointer (&self->labels, fb_graph_labels_free);
      g_clear_pointer (&self->labels_scene, fb_graph_scene_unref);
      self->labels = fb_graph_labels_place (scene, &d->paint);
      self->labels_scene = fb_graph_scene_ref (scene);
    }
  d->paint.labels = self->labels;
  for (int ty = ty0; ty <= ty1; ty++)
    for (int tx = tx0; tx <= tx1; tx++)
      {
        gint64 key = ((gint64) tx << 32) | (guint32) ty;
        cairo_surface_t *tile = g_hash_table_lookup (self->tiles, &key);

        if (tile == NULL)
          {
            tile = render_tile (d, scene, tx, ty, scale_factor);
            g_hash_table_insert (self->tiles, g_memdup2 (&key, sizeof key), tile);
          }
        cairo_set_source_surface (cr, tile, tx * FB_TILE_SIZE - px, ty * FB_TILE_SIZE - py);
        cairo_paint (cr);
      }
  g_object_unref (d->paint.text);
  d->paint.cr = cr;
}

void
_fb_graph_view_snapshot (GtkWidget   *widget,
                         GtkSnapshot *snapshot)
{
  FbGraphView *self = FB_GRAPH_VIEW (widget);
  double width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  FbGraphScene *scene = self->scene;
  Draw d = { 0 };
  cairo_t *cr;

  if (width <= 0 || height <= 0 || (scene == NULL && !fb_graph_view_is_busy (self) && self->error == NULL))
    return;

  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  if (self->pango == NULL)
    self->pango = gtk_widget_create_pango_context (widget);
  d.self = self;
  d.paint.cr = cr;
  fb_graph_paint_init_style (&d.paint, self->pango,
                             adw_style_manager_get_dark (adw_style_manager_get_default ()));
  d.paint.zoom = self->zoom;
  d.paint.marks = self->marks;
  d.paint.group_marks = self->group_marks;
  d.paint.match_set = self->match_set;
  d.paint.selected_item = self->selected_item;
  d.paint.selected_constant = self->selected_constant;
  d.paint.overlay = self->overlay;

  if (self->overlay != NULL && scene != NULL)
    _fb_profile_overlay_sync (self->overlay, fb_graph_scene_get_layout (scene));
  if (scene != NULL)
    paint_tiles (&d, cr, scene, width, height);

  /* Widget coordinates from here on. */
  pango_cairo_update_context (cr, self->pango);
  d.paint.text = pango_layout_new (self->pango);
  if (scene != NULL)
    {
      graphene_rect_t legend;

      _fb_graph_view_place_overlays (self);
      draw_minimap (&d);
      if (_fb_graph_view_legend_rect (self, &legend))
        _fb_profile_overlay_legend_at (self->overlay, cr, d.paint.text, d.paint.dark, legend.origin.x,
                                       legend.origin.y);
    }
  if (self->error != NULL)
    draw_status (&d, self->error);
  else if (fb_graph_view_is_busy (self))
    draw_status (&d, "Laying out…");
  g_object_unref (d.paint.text);

  fb_graph_paint_clear_fonts (&d.paint);
  cairo_destroy (cr);
}

void
_fb_graph_view_invalidate (FbGraphView *self)
{
  g_hash_table_remove_all (self->tiles);
  g_clear_pointer (&self->minimap, cairo_surface_destroy);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}
