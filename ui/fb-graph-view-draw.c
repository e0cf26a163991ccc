/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Drawing the graph view: only what is on screen, text only when it is big enough to read, and
 * a minimap drawn once per scene. */
#include "fb-graph-view-private.h"
#include "fb-graph-style-private.h"
#include "fb-profile-overlay-private.h"

#include <adwaita.h>
#include <math.h>
#include <string.h>

#define TEXT_MIN_ZOOM   0.33   /* below this, boxes are drawn without text */
#define LABEL_MIN_ZOOM  0.6    /* below this, edges carry no shape labels */

typedef struct { double r, g, b; } Rgb;

typedef enum {
  KIND_CONTRACTION,
  KIND_ELEMENTWISE,
  KIND_NORMALIZATION,
  KIND_REDUCTION,
  KIND_POOL,
  KIND_MOVEMENT,
  KIND_SOURCE,
  KIND_CONTROL,
  KIND_FUSED,
  KIND_UNKNOWN,
  KIND_GROUP,
  N_KINDS
} Kind;

/* Fill and border, light then dark, from the GNOME palette. */
static const Rgb palette[2][N_KINDS][2] = {
  {
    { { 0.85, 0.91, 0.98 }, { 0.11, 0.44, 0.85 } },
    { { 0.86, 0.95, 0.88 }, { 0.15, 0.64, 0.41 } },
    { { 0.92, 0.87, 0.96 }, { 0.51, 0.24, 0.61 } },
    { { 0.99, 0.91, 0.82 }, { 0.78, 0.27, 0.00 } },
    { { 0.84, 0.94, 0.94 }, { 0.10, 0.50, 0.48 } },
    { { 0.91, 0.91, 0.90 }, { 0.47, 0.46, 0.48 } },
    { { 0.98, 0.95, 0.78 }, { 0.61, 0.43, 0.01 } },
    { { 0.97, 0.84, 0.84 }, { 0.65, 0.11, 0.18 } },
    { { 0.96, 0.93, 0.98 }, { 0.57, 0.25, 0.67 } },
    { { 0.96, 0.96, 0.96 }, { 0.75, 0.11, 0.16 } },
    { { 0.94, 0.94, 0.93 }, { 0.37, 0.36, 0.39 } },
  },
  {
    { { 0.12, 0.23, 0.37 }, { 0.38, 0.63, 0.92 } },
    { { 0.11, 0.27, 0.18 }, { 0.34, 0.89, 0.54 } },
    { { 0.25, 0.16, 0.31 }, { 0.75, 0.38, 0.80 } },
    { { 0.33, 0.20, 0.08 }, { 1.00, 0.64, 0.28 } },
    { { 0.08, 0.26, 0.26 }, { 0.38, 0.82, 0.80 } },
    { { 0.22, 0.22, 0.24 }, { 0.60, 0.59, 0.63 } },
    { { 0.30, 0.26, 0.07 }, { 0.97, 0.83, 0.18 } },
    { { 0.33, 0.11, 0.13 }, { 0.96, 0.38, 0.32 } },
    { { 0.20, 0.14, 0.25 }, { 0.86, 0.54, 0.95 } },
    { { 0.20, 0.20, 0.20 }, { 0.96, 0.38, 0.32 } },
    { { 0.24, 0.24, 0.26 }, { 0.75, 0.74, 0.77 } },
  },
};

static const Rgb mark_colors[] = {
  [FB_GRAPH_MARK_NONE]    = { 0, 0, 0 },
  [FB_GRAPH_MARK_ADDED]   = { 0.18, 0.76, 0.49 },
  [FB_GRAPH_MARK_REMOVED] = { 0.88, 0.11, 0.14 },
  [FB_GRAPH_MARK_CHANGED] = { 0.90, 0.38, 0.00 },
  [FB_GRAPH_MARK_FUSED]   = { 0.57, 0.25, 0.67 },
};

static const Rgb accent = { 0.21, 0.52, 0.89 };
static const Rgb match_color = { 0.96, 0.76, 0.07 };

typedef struct {
  FbGraphView          *self;
  cairo_t              *cr;
  PangoLayout          *text;
  PangoFontDescription *title_font;
  PangoFontDescription *small_font;
  PangoFontDescription *mono_font;
  gboolean              dark;
  double                zoom;
  double                x0, y0, x1, y1;   /* the visible part of the scene */
  Rgb                   fg;
  Rgb                   bg;
} Draw;

static Kind
kind_of (FbOpKind op)
{
  const FbOpInfo *info = fb_op_info (op);

  if (op == FB_OP_UNKNOWN)
    return KIND_UNKNOWN;
  if (info->flags & FB_OPF_FUSED)
    return KIND_FUSED;
  if (info->flags & FB_OPF_CONTRACTION)
    return KIND_CONTRACTION;
  if (info->flags & FB_OPF_NORMALIZATION)
    return KIND_NORMALIZATION;
  if (info->flags & FB_OPF_POOL)
    return KIND_POOL;
  if (info->flags & (FB_OPF_REDUCTION | FB_OPF_SCAN))
    return KIND_REDUCTION;
  if (info->flags & (FB_OPF_CONTROL | FB_OPF_RECURRENT))
    return KIND_CONTROL;
  if (info->flags & (FB_OPF_SOURCE | FB_OPF_SHAPE_OF))
    return KIND_SOURCE;
  if (info->flags & (FB_OPF_MOVEMENT | FB_OPF_RESHAPE))
    return KIND_MOVEMENT;
  return KIND_ELEMENTWISE;
}

static void
set_rgb (cairo_t   *cr,
         const Rgb *c,
         double     alpha)
{
  cairo_set_source_rgba (cr, c->r, c->g, c->b, alpha);
}

static void
rounded_rect (cairo_t *cr,
              double   x,
              double   y,
              double   w,
              double   h,
              double   r)
{
  r = MIN (r, MIN (w, h) / 2);
  cairo_new_sub_path (cr);
  cairo_arc (cr, x + w - r, y + r, r, -G_PI / 2, 0);
  cairo_arc (cr, x + w - r, y + h - r, r, 0, G_PI / 2);
  cairo_arc (cr, x + r, y + h - r, r, G_PI / 2, G_PI);
  cairo_arc (cr, x + r, y + r, r, G_PI, 3 * G_PI / 2);
  cairo_close_path (cr);
}

static void
draw_text (Draw                       *d,
           const char                 *text,
           const PangoFontDescription *font,
           double                      x,
           double                      y,
           double                      width,
           PangoEllipsizeMode          ellipsize,
           const Rgb                  *color,
           double                      alpha)
{
  if (text == NULL || text[0] == '\0' || width <= 4)
    return;
  pango_layout_set_font_description (d->text, font);
  pango_layout_set_width (d->text, (int) (width * PANGO_SCALE));
  pango_layout_set_ellipsize (d->text, ellipsize);
  pango_layout_set_text (d->text, text, -1);
  set_rgb (d->cr, color, alpha);
  cairo_move_to (d->cr, x, y);
  pango_cairo_show_layout (d->cr, d->text);
}

static Rgb
mix (const Rgb *a,
     const Rgb *b,
     double     t)
{
  return (Rgb) { a->r + (b->r - a->r) * t, a->g + (b->g - a->g) * t, a->b + (b->b - a->b) * t };
}

static gboolean
visible (Draw   *d,
         double  x,
         double  y,
         double  w,
         double  h)
{
  return x < d->x1 && x + w > d->x0 && y < d->y1 && y + h > d->y0;
}

/* The node's name without the scope its frame already says. */
static const char *
short_name (const FbSceneItem *item,
            FbGraphScene      *scene)
{
  const char *name = item->node->name != NULL ? item->node->name : "";
  FbGraphGroup *group;
  const char *path;
  gsize n;

  if (item->parent < 0)
    group = fb_graph_layout_get_root (fb_graph_scene_get_layout (scene));
  else
    group = fb_graph_scene_item (scene, item->parent)->group;
  path = fb_graph_group_get_path (group);
  n = strlen (path);
  if (n > 0 && strncmp (name, path, n) == 0 && name[n] == '/')
    return name + n + 1;
  return name;
}

static void
draw_fused_members (Draw              *d,
                    const FbSceneItem *item,
                    FbGraph           *body)
{
  cairo_t *cr = d->cr;
  guint rows = MIN (body->nodes->len, (guint) FB_GRAPH_FUSED_MAX_ROWS);
  double x = item->x + FB_GRAPH_NODE_PAD, w = item->width - 2 * FB_GRAPH_NODE_PAD;
  double y = item->y + 38;

  for (guint i = 0; i < rows; i++)
    {
      const FbNode *member = g_ptr_array_index (body->nodes, i);
      const Rgb *fill = &palette[d->dark][kind_of (member->op)][0];
      const Rgb *border = &palette[d->dark][kind_of (member->op)][1];
      double ry = y + i * FB_GRAPH_FUSED_ROW;

      if (i > 0)
        {
          set_rgb (cr, &d->fg, 0.4);
          cairo_move_to (cr, x + w / 2, ry - 4);
          cairo_line_to (cr, x + w / 2, ry);
          cairo_stroke (cr);
        }
      rounded_rect (cr, x, ry, w, FB_GRAPH_FUSED_ROW - 4, 3);
      set_rgb (cr, fill, 1);
      cairo_fill_preserve (cr);
      set_rgb (cr, border, 0.8);
      cairo_stroke (cr);
      if (d->zoom >= TEXT_MIN_ZOOM)
        {
          g_autofree char *title = _fb_graph_node_title (member);

          draw_text (d, title, d->small_font, x + 6, ry + 2, w - 12, PANGO_ELLIPSIZE_END, &d->fg, 0.9);
        }
    }
  if (body->nodes->len > rows && d->zoom >= TEXT_MIN_ZOOM)
    {
      g_autofree char *more = g_strdup_printf ("+%u more", body->nodes->len - rows);

      draw_text (d, more, d->small_font, x + 6, y + rows * FB_GRAPH_FUSED_ROW, w - 12,
                 PANGO_ELLIPSIZE_END, &d->fg, 0.6);
    }
}

static void
draw_node (Draw              *d,
           FbGraphScene      *scene,
           const FbSceneItem *item)
{
  FbGraphView *self = d->self;
  cairo_t *cr = d->cr;
  Kind kind = kind_of (item->node->op);
  FbGraphMark mark = fb_graph_view_get_mark (self, item->node);
  FbGraph *body = _fb_graph_fused_body (item->node);
  double w = item->width - 2 * FB_GRAPH_NODE_PAD;

  if (g_hash_table_contains (self->match_set, item->node))
    {
      rounded_rect (cr, item->x - 5, item->y - 5, item->width + 10, item->height + 10, FB_GRAPH_RADIUS + 4);
      set_rgb (cr, &match_color, 0.55);
      cairo_fill (cr);
    }
  rounded_rect (cr, item->x, item->y, item->width, item->height, FB_GRAPH_RADIUS);
  set_rgb (cr, &palette[d->dark][kind][0], 1);
  cairo_fill_preserve (cr);
  if (self->overlay != NULL)
    _fb_profile_overlay_tint (self->overlay, cr, item->node, NULL);
  if (mark == FB_GRAPH_MARK_REMOVED || mark == FB_GRAPH_MARK_FUSED)
    {
      set_rgb (cr, &mark_colors[mark], 0.16);
      cairo_fill_preserve (cr);
    }
  if (body != NULL || kind == KIND_UNKNOWN)
    {
      double dash[] = { 5, 3 };

      cairo_set_dash (cr, dash, 2, 0);
    }
  cairo_set_line_width (cr, mark != FB_GRAPH_MARK_NONE ? 3 : body != NULL ? 2 : 1.2);
  set_rgb (cr, mark != FB_GRAPH_MARK_NONE ? &mark_colors[mark] : &palette[d->dark][kind][1], 1);
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0);

  if (self->selected_item >= 0 && item == fb_graph_scene_item (scene, self->selected_item))
    {
      rounded_rect (cr, item->x - 3, item->y - 3, item->width + 6, item->height + 6, FB_GRAPH_RADIUS + 2);
      cairo_set_line_width (cr, 3);
      set_rgb (cr, &accent, 1);
      cairo_stroke (cr);
    }
  if (body != NULL)
    draw_fused_members (d, item, body);
  if (d->zoom < TEXT_MIN_ZOOM)
    return;

  {
    g_autofree char *title = _fb_graph_node_title (item->node);
    g_autofree char *shape = _fb_graph_node_shape_text (item->node);

    draw_text (d, title, d->title_font, item->x + FB_GRAPH_NODE_PAD, item->y + 5, w,
               PANGO_ELLIPSIZE_END, &d->fg, 1);
    draw_text (d, short_name (item, scene), d->small_font, item->x + FB_GRAPH_NODE_PAD,
               item->y + 22, w, PANGO_ELLIPSIZE_MIDDLE, &d->fg, 0.7);
    draw_text (d, shape, d->mono_font, item->x + FB_GRAPH_NODE_PAD, item->y + item->height - 18,
               w, PANGO_ELLIPSIZE_END, &d->fg, 0.7);
  }
  if (self->overlay != NULL)
    _fb_profile_overlay_badge (self->overlay, cr, d->text, item->node, NULL, item->x, item->y,
                               item->width, item->height);
}

static void
draw_badge (Draw   *d,
            double  x,
            double  y,
            guint   count)
{
  g_autofree char *text = g_strdup_printf ("%u", count);

  cairo_arc (d->cr, x, y, 9, 0, 2 * G_PI);
  set_rgb (d->cr, &mark_colors[FB_GRAPH_MARK_CHANGED], 1);
  cairo_fill (d->cr);
  if (d->zoom >= TEXT_MIN_ZOOM)
    {
      pango_layout_set_alignment (d->text, PANGO_ALIGN_CENTER);
      draw_text (d, text, d->small_font, x - 14, y - 7, 28, PANGO_ELLIPSIZE_NONE,
                 &(Rgb) { 1, 1, 1 }, 1);
      pango_layout_set_alignment (d->text, PANGO_ALIGN_LEFT);
    }
}

static void
draw_group (Draw              *d,
            FbGraphScene      *scene,
            const FbSceneItem *item)
{
  FbGraphView *self = d->self;
  cairo_t *cr = d->cr;
  const Rgb *fill = &palette[d->dark][KIND_GROUP][0];
  const Rgb *border = &palette[d->dark][KIND_GROUP][1];
  guint marked = GPOINTER_TO_UINT (g_hash_table_lookup (self->group_marks, item->group));

  /* A stack of cards: more than one node inside. */
  for (int k = 2; k >= 0; k--)
    {
      rounded_rect (cr, item->x + 3 * k, item->y + 3 * k, item->width - 6, item->height - 6, FB_GRAPH_RADIUS);
      set_rgb (cr, fill, 1);
      cairo_fill_preserve (cr);
      if (k == 0 && self->overlay != NULL)
        _fb_profile_overlay_tint (self->overlay, cr, NULL, item->group);
      cairo_set_line_width (cr, 1.2);
      set_rgb (cr, border, k == 0 ? 1 : 0.5);
      cairo_stroke (cr);
    }
  if (self->selected_item >= 0 && item == fb_graph_scene_item (scene, self->selected_item))
    {
      rounded_rect (cr, item->x - 3, item->y - 3, item->width, item->height, FB_GRAPH_RADIUS + 2);
      cairo_set_line_width (cr, 3);
      set_rgb (cr, &accent, 1);
      cairo_stroke (cr);
    }
  if (marked > 0)
    draw_badge (d, item->x + item->width - 8, item->y + 2, marked);
  if (d->zoom < TEXT_MIN_ZOOM)
    return;
  draw_text (d, fb_graph_group_get_label (item->group), d->title_font, item->x + FB_GRAPH_NODE_PAD,
             item->y + 6, item->width - 2 * FB_GRAPH_NODE_PAD - 22, PANGO_ELLIPSIZE_MIDDLE, &d->fg, 1);
  draw_text (d, fb_graph_group_get_summary (item->group), d->small_font, item->x + FB_GRAPH_NODE_PAD,
             item->y + 24, item->width - 2 * FB_GRAPH_NODE_PAD - 6, PANGO_ELLIPSIZE_END, &d->fg, 0.7);
  draw_text (d, "+", d->title_font, item->x + item->width - 24, item->y + 6, 14,
             PANGO_ELLIPSIZE_NONE, border, 1);
  if (self->overlay != NULL)
    _fb_profile_overlay_badge (self->overlay, cr, d->text, NULL, item->group, item->x, item->y,
                               item->width - 6, item->height - 6);
}

static void
draw_frame (Draw              *d,
            FbGraphScene      *scene,
            const FbSceneItem *item)
{
  FbGraphView *self = d->self;
  cairo_t *cr = d->cr;
  guint marked = GPOINTER_TO_UINT (g_hash_table_lookup (self->group_marks, item->group));
  g_autofree char *title = g_strdup_printf ("− %s", fb_graph_group_get_label (item->group));

  guint depth = fb_graph_group_get_depth (item->group);
  Rgb fill = mix (&d->bg, &d->fg, 1 - pow (1 - 0.035, depth));
  Rgb header = mix (&fill, &d->fg, 0.07);

  /* Opaque colours, each nesting level a shade darker: blending large translucent areas is what
     costs most when a software renderer paints a frame. */
  rounded_rect (cr, item->x, item->y, item->width, item->height, FB_GRAPH_RADIUS + 2);
  set_rgb (cr, &fill, 1);
  cairo_fill_preserve (cr);
  cairo_set_line_width (cr, 1);
  set_rgb (cr, &d->fg, 0.22);
  cairo_stroke (cr);
  cairo_save (cr);
  rounded_rect (cr, item->x, item->y, item->width, item->height, FB_GRAPH_RADIUS + 2);
  cairo_clip (cr);
  cairo_rectangle (cr, item->x, item->y, item->width, FB_GRAPH_FRAME_HEADER);
  set_rgb (cr, &header, 1);
  cairo_fill (cr);
  cairo_restore (cr);
  if (self->selected_item >= 0 && item == fb_graph_scene_item (scene, self->selected_item))
    {
      rounded_rect (cr, item->x - 2, item->y - 2, item->width + 4, item->height + 4, FB_GRAPH_RADIUS + 3);
      cairo_set_line_width (cr, 3);
      set_rgb (cr, &accent, 1);
      cairo_stroke (cr);
    }
  if (marked > 0)
    draw_badge (d, item->x + item->width - 14, item->y + FB_GRAPH_FRAME_HEADER / 2, marked);
  if (d->zoom < TEXT_MIN_ZOOM)
    return;
  draw_text (d, title, d->title_font, item->x + 8, item->y + 5, item->width - 40,
             PANGO_ELLIPSIZE_MIDDLE, &d->fg, 0.85);
}

static void
draw_edge (Draw              *d,
           FbGraphScene      *scene,
           const FbSceneEdge *edge)
{
  cairo_t *cr = d->cr;
  const double *p = edge->points;
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
  double ex, ey, dx, dy, len;
  gboolean selected;
  int sel = d->self->selected_item;

  for (guint i = 0; i < edge->n_points; i++)
    {
      x0 = MIN (x0, p[2 * i]);
      x1 = MAX (x1, p[2 * i]);
      y0 = MIN (y0, p[2 * i + 1]);
      y1 = MAX (y1, p[2 * i + 1]);
    }
  if (!visible (d, x0 - 12, y0 - 12, x1 - x0 + 170, y1 - y0 + 24))
    return;
  selected = sel >= 0 && (edge->from == sel || edge->to == sel);

  cairo_move_to (cr, p[0], p[1]);
  for (guint i = 1; i + 2 < edge->n_points; i += 3)
    cairo_curve_to (cr, p[2 * i], p[2 * i + 1], p[2 * i + 2], p[2 * i + 3], p[2 * i + 4], p[2 * i + 5]);
  cairo_set_line_width (cr, selected ? 2.5 : MAX (1.2, 0.8 / d->zoom));
  if (selected)
    set_rgb (cr, &accent, 1);
  else
    set_rgb (cr, &d->fg, 0.45);
  cairo_stroke (cr);

  /* The arrowhead, along the last tangent. */
  ex = p[2 * (edge->n_points - 1)];
  ey = p[2 * (edge->n_points - 1) + 1];
  dx = ex - p[2 * (edge->n_points - 2)];
  dy = ey - p[2 * (edge->n_points - 2) + 1];
  if ((len = hypot (dx, dy)) < 1e-6)
    {
      dx = 0;
      dy = len = 1;
    }
  dx /= len;
  dy /= len;
  cairo_move_to (cr, ex, ey);
  cairo_line_to (cr, ex - 8 * dx + 4 * dy, ey - 8 * dy - 4 * dx);
  cairo_line_to (cr, ex - 8 * dx - 4 * dy, ey - 8 * dy + 4 * dx);
  cairo_close_path (cr);
  cairo_fill (cr);

  if (d->zoom >= LABEL_MIN_ZOOM && edge->value != NULL)
    {
      g_autofree char *shape = _fb_graph_value_text (edge->value);
      g_autofree char *text = edge->n_values > 1 ? g_strdup_printf ("%s ×%u", shape, edge->n_values)
                                                 : g_strdup (shape);

      draw_text (d, text, d->mono_font, edge->label_x + 4, edge->label_y - 6, 150,
                 PANGO_ELLIPSIZE_END, &d->fg, 0.6);
    }
}

gboolean
_fb_graph_view_minimap_rect (FbGraphView *self,
                             double      *x,
                             double      *y,
                             double      *width,
                             double      *height)
{
  double w, h, vw, vh, scale;

  if (self->scene == NULL)
    return FALSE;
  fb_graph_scene_get_bounds (self->scene, &w, &h);
  vw = gtk_widget_get_width (GTK_WIDGET (self));
  vh = gtk_widget_get_height (GTK_WIDGET (self));
  /* Only when the picture does not fit, and when there is room for it: at most a third of the
   * width and a quarter of the height. */
  if ((w * self->zoom <= vw && h * self->zoom <= vh) || vw < 240 || vh < 200 || w <= 0 || h <= 0)
    return FALSE;
  scale = MIN (MIN (FB_MINIMAP_WIDTH, vw / 3) / w, MIN (FB_MINIMAP_HEIGHT, vh / 4) / h);
  self->minimap_scale = scale;
  *width = w * scale;
  *height = h * scale;
  *x = vw - *width - FB_MINIMAP_MARGIN;
  *y = vh - *height - FB_MINIMAP_MARGIN;
  return TRUE;
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
      Kind kind = item->kind == FB_SCENE_ITEM_NODE ? kind_of (item->node->op) : KIND_GROUP;

      cairo_rectangle (cr, item->x, item->y, item->width, item->height);
      if (item->kind == FB_SCENE_ITEM_FRAME)
        {
          set_rgb (cr, &d->fg, 0.06);
          cairo_fill (cr);
          continue;
        }
      set_rgb (cr, &palette[d->dark][kind][1], 0.9);
      cairo_fill (cr);
    }
  cairo_destroy (cr);
}

static void
draw_minimap (Draw *d)
{
  FbGraphView *self = d->self;
  cairo_t *cr = d->cr;
  double x, y, w, h, vx, vy, vw, vh;

  if (!_fb_graph_view_minimap_rect (self, &x, &y, &w, &h))
    return;
  if (self->minimap == NULL)
    render_minimap (d, w, h);

  rounded_rect (cr, x - 4, y - 4, w + 8, h + 8, 6);
  set_rgb (cr, &d->bg, 0.92);
  cairo_fill_preserve (cr);
  cairo_set_line_width (cr, 1);
  set_rgb (cr, &d->fg, 0.25);
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
  set_rgb (cr, &accent, 0.15);
  cairo_fill_preserve (cr);
  cairo_set_line_width (cr, 1.5);
  set_rgb (cr, &accent, 1);
  cairo_stroke (cr);
  cairo_restore (cr);
}

static void
draw_status (Draw       *d,
             const char *text)
{
  PangoRectangle extents;

  pango_layout_set_font_description (d->text, d->small_font);
  pango_layout_set_width (d->text, -1);
  pango_layout_set_text (d->text, text, -1);
  pango_layout_get_pixel_extents (d->text, NULL, &extents);
  rounded_rect (d->cr, 8, 8, extents.width + 16, extents.height + 10, 6);
  set_rgb (d->cr, &d->bg, 0.9);
  cairo_fill_preserve (d->cr);
  set_rgb (d->cr, &d->fg, 0.3);
  cairo_set_line_width (d->cr, 1);
  cairo_stroke (d->cr);
  set_rgb (d->cr, &d->fg, 0.9);
  cairo_move_to (d->cr, 16, 13);
  pango_cairo_show_layout (d->cr, d->text);
}

static PangoFontDescription *
make_font (PangoContext *context,
           double        px,
           PangoWeight   weight,
           const char   *family)
{
  PangoFontDescription *font = pango_font_description_copy (pango_context_get_font_description (context));

  if (family != NULL)
    pango_font_description_set_family (font, family);
  pango_font_description_set_absolute_size (font, px * PANGO_SCALE);
  pango_font_description_set_weight (font, weight);
  return font;
}

/* Frames, then edges, then boxes, of the part of the scene d covers. */
static void
draw_scene (Draw         *d,
            FbGraphScene *scene)
{
  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);

      if (item->kind == FB_SCENE_ITEM_FRAME && visible (d, item->x, item->y, item->width, item->height))
        draw_frame (d, scene, item);
    }
  for (guint i = 0; i < fb_graph_scene_n_edges (scene); i++)
    draw_edge (d, scene, fb_graph_scene_edge (scene, i));
  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);

      if (!visible (d, item->x - 6, item->y - 6, item->width + 12, item->height + 12))
        continue;
      if (item->kind == FB_SCENE_ITEM_NODE)
        draw_node (d, scene, item);
      else if (item->kind == FB_SCENE_ITEM_GROUP)
        draw_group (d, scene, item);
    }
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
  double span = FB_TILE_SIZE / d->zoom;
  cairo_t *cr;

  cairo_surface_set_device_scale (tile, scale_factor, scale_factor);
  cr = cairo_create (tile);
  /* Opaque, so that copying it onto the window is a plain copy. */
  set_rgb (cr, &d->bg, 1);
  cairo_paint (cr);
  cairo_scale (cr, d->zoom, d->zoom);
  cairo_translate (cr, -tx * span, -ty * span);
  pango_cairo_update_context (cr, d->self->pango);
  d->cr = cr;
  d->x0 = tx * span;
  d->y0 = ty * span;
  d->x1 = d->x0 + span;
  d->y1 = d->y0 + span;
  draw_scene (d, scene);
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
  d->text = pango_layout_new (self->pango);
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
  g_object_unref (d->text);
  d->cr = cr;
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
  d.cr = cr;
  d.dark = adw_style_manager_get_dark (adw_style_manager_get_default ());
  d.fg = d.dark ? (Rgb) { 1, 1, 1 } : (Rgb) { 0.14, 0.12, 0.19 };
  d.bg = d.dark ? (Rgb) { 0.118, 0.118, 0.118 } : (Rgb) { 1, 1, 1 };   /* @view_bg_color */
  d.zoom = self->zoom;
  d.title_font = make_font (self->pango, FB_GRAPH_TITLE_PX, PANGO_WEIGHT_BOLD, NULL);
  d.small_font = make_font (self->pango, FB_GRAPH_TEXT_PX, PANGO_WEIGHT_NORMAL, NULL);
  d.mono_font = make_font (self->pango, FB_GRAPH_TEXT_PX, PANGO_WEIGHT_NORMAL, "Monospace");

  if (self->overlay != NULL && scene != NULL)
    _fb_profile_overlay_sync (self->overlay, fb_graph_scene_get_layout (scene));
  if (scene != NULL)
    paint_tiles (&d, cr, scene, width, height);

  /* Widget coordinates from here on. */
  pango_cairo_update_context (cr, self->pango);
  d.text = pango_layout_new (self->pango);
  if (scene != NULL)
    draw_minimap (&d);
  if (scene != NULL && self->overlay != NULL)
    _fb_profile_overlay_legend (self->overlay, cr, d.text, d.dark, width, height);
  if (self->error != NULL)
    draw_status (&d, self->error);
  else if (fb_graph_view_is_busy (self))
    draw_status (&d, "Laying out…");
  g_object_unref (d.text);

  pango_font_description_free (d.title_font);
  pango_font_description_free (d.small_font);
  pango_font_description_free (d.mono_font);
  cairo_destroy (cr);
}

void
_fb_graph_view_invalidate (FbGraphView *self)
{
  g_hash_table_remove_all (self->tiles);
  g_clear_pointer (&self->minimap, cairo_surface_destroy);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}
