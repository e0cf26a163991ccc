/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-graph-picture.h"
#include "fb-profile-overlay-private.h"
#include "fb-graph-paint.h"
#include "fb-graph-labels.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <math.h>

#define MARGIN        16.0
#define PDF_MAX_PT    14400.0   /* 200 inches, the largest page PDF readers promise to open */
#define PNG_MAX_PX    16384.0
#define PNG_SCALE     2.0       /* device pixels per scene pixel, when the picture allows */

gboolean
fb_graph_picture_format_parse (const char           *name,
                               FbGraphPictureFormat *format)
{
  static const char * const names[] = { "svg", "pdf", "png" };

  g_return_val_if_fail (format != NULL, FALSE);
  for (guint i = 0; name != NULL && i < G_N_ELEMENTS (names); i++)
    if (g_ascii_strcasecmp (name, names[i]) == 0)
      {
        *format = (FbGraphPictureFormat) i;
        return TRUE;
      }
  return FALSE;
}

const char *
fb_graph_picture_format_name (FbGraphPictureFormat format)
{
  switch (format)
    {
    case FB_GRAPH_PICTURE_SVG: return "svg";
    case FB_GRAPH_PICTURE_PDF: return "pdf";
    case FB_GRAPH_PICTURE_PNG: return "png";
    default: g_return_val_if_reached (NULL);
    }
}

static cairo_status_t
append_bytes (void                *closure,
              const unsigned char *data,
              unsigned int         length)
{
  g_byte_array_append (closure, data, length);
  return CAIRO_STATUS_SUCCESS;
}

/* What a picture needs before its surface exists: the style and fonts, the labels placed in
 * them, and from those the part of the scene that has something drawn on it. */
typedef struct {
  PangoFontMap  *map;
  PangoContext  *context;
  FbGraphPaint   paint;
  FbGraphLabels *labels;
  double         x0, y0, x1, y1;
} Picture;

static void
grow (Picture *p, double x0, double y0, double x1, double y1)
{
  p->x0 = MIN (p->x0, x0);
  p->y0 = MIN (p->y0, y0);
  p->x1 = MAX (p->x1, x1);
  p->y1 = MAX (p->y1, y1);
}

static void
picture_init (Picture *p, FbGraphScene *scene)
{
  g_autoptr(PangoFontDescription) base = pango_font_description_from_string ("Sans 10");
  cairo_font_options_t *options = cairo_font_options_create ();

  p->map = pango_cairo_font_map_new ();
  p->context = pango_font_map_create_context (p->map);
  pango_context_set_font_description (p->context, base);
  /* Glyph outlines: hinting to a pixel grid would move text when the picture is scaled. */
  cairo_font_options_set_hint_metrics (options, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_hint_style (options, CAIRO_HINT_STYLE_NONE);
  pango_cairo_context_set_font_options (p->context, options);
  cairo_font_options_destroy (options);
  fb_graph_paint_init_style (&p->paint, p->context, FALSE);
  p->paint.text = pango_layout_new (p->context);
  p->labels = fb_graph_labels_place (scene, &p->paint);

  /* The scene's own bounds are its root's, which may be far bigger than what is drawn in it
   * (the window's canvas): the picture is cropped to the boxes, edges and labels. */
  p->x0 = p->y0 = G_MAXDOUBLE;
  p->x1 = p->y1 = -G_MAXDOUBLE;
  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);
      grow (p, item->x, item->y, item->x + item->width, item->y + item->height);
    }
  for (guint i = 0; i < fb_graph_scene_n_edges (scene); i++)
    {
      const FbSceneEdge *edge = fb_graph_scene_edge (scene, i);
      double x, y, w, h;

      for (guint k = 0; k < edge->n_points; k++)
        grow (p, edge->points[2 * k], edge->points[2 * k + 1], edge->points[2 * k],
              edge->points[2 * k + 1]);
      if (fb_graph_labels_get (p->labels, i, &x, &y, &w, &h))
        grow (p, x, y, x + w, y + h);
    }
  if (p->x0 > p->x1)
    p->x0 = p->y0 = p->x1 = p->y1 = 0;
}

static void
picture_clear (Picture *p)
{
  g_clear_object (&p->paint.text);
  fb_graph_paint_clear_fonts (&p->paint);
  g_clear_pointer (&p->labels, fb_graph_labels_free);
  g_clear_object (&p->context);
  g_clear_object (&p->map);
}

static void
paint_onto (cairo_surface_t  *surface,
            Picture          *p,
            FbGraphScene     *scene,
            GHashTable       *marks,
            FbProfileOverlay *overlay,
            double            scale,
            double            width,    /* the picture's, before scale */
            double            height)
{
  cairo_t *cr = cairo_create (surface);
  FbGraphPaint paint = p->paint;

  cairo_set_source_rgb (cr, paint.bg.r, paint.bg.g, paint.bg.b);
  cairo_paint (cr);
  cairo_scale (cr, scale, scale);
  cairo_translate (cr, MARGIN - p->x0, MARGIN - p->y0);
  pango_cairo_update_context (cr, p->context);
  paint.cr = cr;
  /* Every label: a picture is read zoomed in. */
  paint.zoom = 1;
  paint.x0 = p->x0 - MARGIN;
  paint.y0 = p->y0 - MARGIN;
  paint.x1 = p->x1 + MARGIN;
  paint.y1 = p->y1 + MARGIN;
  paint.marks = marks;
  paint.selected_item = -1;
  paint.overlay = overlay;
  paint.labels = p->labels;
  if (overlay)
    _fb_profile_overlay_sync (overlay, fb_graph_scene_get_layout (scene));
  fb_graph_paint_scene (&paint, scene);
  if (overlay)
    {
      /* The legend in picture coordinates, at the bottom-left in its band under the graph. */
      cairo_identity_matrix (cr);
      cairo_scale (cr, scale, scale);
      _fb_profile_overlay_legend (overlay, cr, paint.text, FALSE, width, height);
    }
  cairo_destroy (cr);
}

static GBytes *
render_scene (FbGraphScene         *scene,
              FbGraphPictureFormat  format,
              GHashTable           *marks,
              FbProfileOverlay     *overlay,
              GError              **error)
{
  g_autoptr(GByteArray) out = g_byte_array_new ();
  cairo_surface_t *surface;
  cairo_status_t status;
  Picture picture = { 0 };
  double w, h, pw, ph, scale = 1;

  g_return_val_if_fail (scene != NULL, NULL);
  picture_init (&picture, scene);
  w = picture.x1 - picture.x0;
  h = picture.y1 - picture.y0;
  pw = w + 2 * MARGIN;
  ph = h + 2 * MARGIN;
  if (overlay != NULL)
    {
      /* The legend goes in a band of its own under the graph, where it covers no box, and a
       * narrow graph's picture is made wide enough to hold it. */
      pw = MAX (pw, FB_PROFILE_LEGEND_WIDTH + 2 * FB_PROFILE_LEGEND_INSET);
      ph += FB_PROFILE_LEGEND_HEIGHT + FB_PROFILE_LEGEND_INSET;
    }
  switch (format)
    {
    case FB_GRAPH_PICTURE_SVG:
      surface = cairo_svg_surface_create_for_stream (append_bytes, out, pw, ph);
      break;
    case FB_GRAPH_PICTURE_PDF:
      scale = MIN (1, PDF_MAX_PT / MAX (pw, ph));
      surface = cairo_pdf_surface_create_for_stream (append_bytes, out, pw * scale, ph * scale);
      break;
    case FB_GRAPH_PICTURE_PNG:
      scale = MIN (PNG_SCALE, PNG_MAX_PX / MAX (pw, ph));
      surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, MAX (1, (int) ceil (pw * scale)),
                                            MAX (1, (int) ceil (ph * scale)));
      break;
    default:
      picture_clear (&picture);
      g_return_val_if_reached (NULL);
    }
  if ((status = cairo_surface_status (surface)) == CAIRO_STATUS_SUCCESS)
    {
      paint_onto (surface, &picture, scene, marks, overlay, scale, pw, ph);
      if (format == FB_GRAPH_PICTURE_PNG)
        status = cairo_surface_write_to_png_stream (surface, append_bytes, out);
      cairo_surface_finish (surface);
      if (status == CAIRO_STATUS_SUCCESS)
        status = cairo_surface_status (surface);
    }
  cairo_surface_destroy (surface);
  picture_clear (&picture);
  if (status != CAIRO_STATUS_SUCCESS)
    {
      g_set_error (error, G_IO_ERROR, status == CAIRO_STATUS_NO_MEMORY ? G_IO_ERROR_NO_SPACE
                                                                        : G_IO_ERROR_FAILED,
                   "drawing the %s picture (%.0f x %.0f): %s",
                   fb_graph_picture_format_name (format), pw, ph, cairo_status_to_string (status));
      return NULL;
    }
  return g_byte_array_free_to_bytes (g_steal_pointer (&out));
}

GBytes *
fb_graph_picture_render (FbGraphScene         *scene,
                         FbGraphPictureFormat  format,
                         GHashTable           *marks,
                         GError              **error)
{
  return render_scene (scene, format, marks, NULL, error);
}

GBytes *
fb_graph_picture_render_shown (FbGraphScene         *scene,
                               FbGraphPictureFormat  format,
                               GHashTable           *marks,
                               FbProfile            *profile,
                               FbProfile            *previous,
                               FbProfileMetric       metric,
                               GError              **error)
{
  FbProfileOverlay *overlay = profile ? _fb_profile_overlay_new (profile, previous, metric) : NULL;
  GBytes *bytes = render_scene (scene, format, marks, overlay, error);

  g_clear_pointer (&overlay, _fb_profile_overlay_free);
  return bytes;
}

GBytes *
fb_graph_picture_render_graph (FbGraph              *graph,
                               FbGraphPictureFormat  format,
                               GCancellable         *cancellable,
                               GError              **error)
{
  return fb_graph_picture_render_profiled (graph, format, NULL, FB_PROFILE_METRIC_SHARE,
                                           cancellable, error);
}

GBytes *
fb_graph_picture_render_profiled (FbGraph              *graph,
                                  FbGraphPictureFormat  format,
                                  FbProfile            *profile,
                                  FbProfileMetric       metric,
                                  GCancellable         *cancellable,
                                  GError              **error)
{
  g_autoptr(FbGraphLayout) layout = NULL;
  g_autoptr(GHashTable) expanded = NULL;
  g_autoptr(FbGraphScene) scene = NULL;

  g_return_val_if_fail (graph != NULL, NULL);
  layout = fb_graph_layout_new (graph, NULL, NULL);
  /* The groups the window opens a graph with: Graphviz 2.42 crashes in its mincross on some
   * small groups deep inside big models (a GPT-2 block's GELU at the import stage) once every
   * group is expanded, and the window's first view is the expansion exercised every day. */
  expanded = fb_graph_layout_default_expansion (layout, FB_GRAPH_LAYOUT_DEFAULT_BUDGET);
  scene = fb_graph_layout_compute (layout, expanded, cancellable, error);
  if (scene == NULL)
    return NULL;
  FbProfileOverlay *overlay = profile ? _fb_profile_overlay_new (profile, NULL, metric) : NULL;
  GBytes *bytes = render_scene (scene, format, NULL, overlay, error);
  g_clear_pointer (&overlay, _fb_profile_overlay_free);
  return bytes;
}
