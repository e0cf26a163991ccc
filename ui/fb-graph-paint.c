/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Drawing a graph scene: text only when it is big enough to read, only what is in view. */
#include "fb-graph-paint.h"
#include "fb-graph-labels.h"
#include "fb-profile-overlay-private.h"
#include "fb-graph-style-private.h"

#include <math.h>
#include <string.h>

#define TEXT_MIN_ZOOM   0.33   /* below this, boxes are drawn without text */
#define LABEL_MIN_ZOOM  0.6    /* below this, edges carry no shape labels */


typedef FbGraphRgb Rgb;

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

const FbGraphRgb fb_graph_paint_accent = { 0.21, 0.52, 0.89 };
#define accent fb_graph_paint_accent
static const Rgb match_color = { 0.96, 0.76, 0.07 };


static FbGraphMark
paint_mark (FbGraphPaint *d,
            const FbNode *node)
{
  if (d->marks == NULL)
    return FB_GRAPH_MARK_NONE;
  return GPOINTER_TO_INT (g_hash_table_lookup (d->marks, GUINT_TO_POINTER (node->id)));
}

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

void
fb_graph_paint_rounded_rect (cairo_t *cr,
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
draw_text (FbGraphPaint                       *d,
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
visible (FbGraphPaint   *d,
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
draw_fused_members (FbGraphPaint              *d,
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
      fb_graph_paint_rounded_rect (cr, x, ry, w, FB_GRAPH_FUSED_ROW - 4, 3);
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

/* The constants the node reads, one line each: the input's name in a column, then the type and
 * the value when it is small. A row carries the marks, search matches and selection of the
 * Constant node it stands for. */
static void
draw_rows (FbGraphPaint      *d,
           const FbSceneItem *item)
{
  cairo_t *cr = d->cr;
  guint shown = _fb_graph_rows_shown (item->n_rows);
  double top = item->y + _fb_graph_rows_top (item->node);
  double x = item->x + FB_GRAPH_NODE_PAD, w = item->width - 2 * FB_GRAPH_NODE_PAD;
  double label_w = 0;

  set_rgb (cr, &d->fg, 0.18);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, item->x + 4, top - 1.5);
  cairo_line_to (cr, item->x + item->width - 4, top - 1.5);
  cairo_stroke (cr);
  for (guint i = 0; i < shown; i++)
    label_w = MAX (label_w, g_utf8_strlen (fb_constant_row_label (item->node, &item->rows[i]), -1)
                            * FB_GRAPH_TEXT_CHAR);
  label_w = MIN (label_w + 8, w * FB_GRAPH_ROW_LABEL_MAX);

  for (guint i = 0; i < shown; i++)
    {
      const FbConstantRow *row = &item->rows[i];
      double ry = top + i * FB_GRAPH_ROW_HEIGHT;
      FbGraphMark mark = row->constant != NULL ? paint_mark (d, row->constant) : FB_GRAPH_MARK_NONE;
      gboolean selected = d->selected_constant != NULL && d->selected_constant == row->value;
      gboolean matched = row->constant != NULL && d->match_set != NULL
                         && g_hash_table_contains (d->match_set, row->constant);

      if (selected || matched || mark != FB_GRAPH_MARK_NONE)
        {
          fb_graph_paint_rounded_rect (cr, item->x + FB_GRAPH_NODE_PAD / 2, ry,
                                       item->width - FB_GRAPH_NODE_PAD, FB_GRAPH_ROW_HEIGHT - 1, 3);
          set_rgb (cr, selected ? &accent : matched ? &match_color : &mark_colors[mark],
                   selected ? 0.22 : 0.3);
          cairo_fill_preserve (cr);
          cairo_set_line_width (cr, selected ? 2 : 1);
          set_rgb (cr, selected ? &accent : matched ? &match_color : &mark_colors[mark], 1);
          cairo_stroke (cr);
        }
      if (d->zoom < TEXT_MIN_ZOOM)
        continue;
      {
        g_autofree char *text = fb_constant_row_text (row);

        draw_text (d, fb_constant_row_label (item->node, row), d->small_font, x, ry + 1, label_w - 4,
                   PANGO_ELLIPSIZE_MIDDLE, &d->fg, 0.65);
        draw_text (d, text, d->mono_font, x + label_w, ry + 1, w - label_w, PANGO_ELLIPSIZE_END,
                   &d->fg, 0.9);
      }
    }
  if (item->n_rows > shown && d->zoom >= TEXT_MIN_ZOOM)
    {
      g_autofree char *more = g_strdup_printf ("+%u more constants", item->n_rows - shown);

      draw_text (d, more, d->small_font, x, top + shown * FB_GRAPH_ROW_HEIGHT + 1, w,
                 PANGO_ELLIPSIZE_END, &d->fg, 0.6);
    }
}

/* Whether node is one the model's import marked as not computed (FbModel.problems). */
static gboolean
not_computed (FbGraphScene *scene,
              const FbNode *node)
{
  FbGraph *graph = fb_graph_layout_get_graph (fb_graph_scene_get_layout (scene));

  return graph != NULL && graph->model != NULL && graph->model->problems != NULL &&
         node->name != NULL && g_hash_table_contains (graph->model->problems, node->name);
}

static void
draw_node (FbGraphPaint              *d,
           FbGraphScene      *scene,
           const FbSceneItem *item)
{
  cairo_t *cr = d->cr;
  /* A node nothing computes (an unsupported operator, or one the import marked) is drawn as
   * unknown: dashed, in the unknown colours; the inspector says why. */
  Kind kind = not_computed (scene, item->node) ? KIND_UNKNOWN : kind_of (item->node->op);
  FbGraphMark mark = paint_mark (d, item->node);
  FbGraph *body = _fb_graph_fused_body (item->node);
  double w = item->width - 2 * FB_GRAPH_NODE_PAD;

  if (d->match_set != NULL && g_hash_table_contains (d->match_set, item->node))
    {
      fb_graph_paint_rounded_rect (cr, item->x - 5, item->y - 5, item->width + 10, item->height + 10, FB_GRAPH_RADIUS + 4);
      set_rgb (cr, &match_color, 0.55);
      cairo_fill (cr);
    }
  fb_graph_paint_rounded_rect (cr, item->x, item->y, item->width, item->height, FB_GRAPH_RADIUS);
  set_rgb (cr, &palette[d->dark][kind][0], 1);
  cairo_fill_preserve (cr);
  if (d->overlay != NULL)
    _fb_profile_overlay_tint (d->overlay, cr, item->node, NULL);
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

  if (d->selected_item >= 0 && d->selected_constant == NULL
      && item == fb_graph_scene_item (scene, d->selected_item))
    {
      fb_graph_paint_rounded_rect (cr, item->x - 3, item->y - 3, item->width + 6, item->height + 6, FB_GRAPH_RADIUS + 2);
      cairo_set_line_width (cr, 3);
      set_rgb (cr, &accent, 1);
      cairo_stroke (cr);
    }
  if (body != NULL)
    draw_fused_members (d, item, body);
  if (item->n_rows > 0)
    draw_rows (d, item);
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
  if (d->overlay != NULL)
    _fb_profile_overlay_badge (d->overlay, cr, d->text, item->node, NULL, item->x, item->y,
                               item->width, item->height);
}

static void
draw_badge (FbGraphPaint   *d,
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
draw_group (FbGraphPaint              *d,
            FbGraphScene      *scene,
            const FbSceneItem *item)
{
  cairo_t *cr = d->cr;
  const Rgb *fill = &palette[d->dark][KIND_GROUP][0];
  const Rgb *border = &palette[d->dark][KIND_GROUP][1];
  guint marked = GPOINTER_TO_UINT (d->group_marks != NULL ? g_hash_table_lookup (d->group_marks, item->group) : NULL);

  /* A stack of cards: more than one node inside. */
  for (int k = 2; k >= 0; k--)
    {
      fb_graph_paint_rounded_rect (cr, item->x + 3 * k, item->y + 3 * k, item->width - 6, item->height - 6, FB_GRAPH_RADIUS);
      set_rgb (cr, fill, 1);
      cairo_fill_preserve (cr);
      if (k == 0 && d->overlay != NULL)
        _fb_profile_overlay_tint (d->overlay, cr, NULL, item->group);
      cairo_set_line_width (cr, 1.2);
      set_rgb (cr, border, k == 0 ? 1 : 0.5);
      cairo_stroke (cr);
    }
  if (d->selected_item >= 0 && item == fb_graph_scene_item (scene, d->selected_item))
    {
      fb_graph_paint_rounded_rect (cr, item->x - 3, item->y - 3, item->width, item->height, FB_GRAPH_RADIUS + 2);
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
  if (d->overlay != NULL)
    _fb_profile_overlay_badge (d->overlay, cr, d->text, NULL, item->group, item->x, item->y,
                               item->width - 6, item->height - 6);
}

static void
draw_frame (FbGraphPaint              *d,
            FbGraphScene      *scene,
            const FbSceneItem *item)
{
  cairo_t *cr = d->cr;
  guint marked = GPOINTER_TO_UINT (d->group_marks != NULL ? g_hash_table_lookup (d->group_marks, item->group) : NULL);
  g_autofree char *title = g_strdup_printf ("− %s", fb_graph_group_get_label (item->group));

  guint depth = fb_graph_group_get_depth (item->group);
  Rgb fill = mix (&d->bg, &d->fg, 1 - pow (1 - 0.035, depth));
  Rgb header = mix (&fill, &d->fg, 0.07);

  /* Opaque colours, each nesting level a shade darker: blending large translucent areas is what
     costs most when a software renderer paints a frame. */
  fb_graph_paint_rounded_rect (cr, item->x, item->y, item->width, item->height, FB_GRAPH_RADIUS + 2);
  set_rgb (cr, &fill, 1);
  cairo_fill_preserve (cr);
  cairo_set_line_width (cr, 1);
  set_rgb (cr, &d->fg, 0.22);
  cairo_stroke (cr);
  cairo_save (cr);
  fb_graph_paint_rounded_rect (cr, item->x, item->y, item->width, item->height, FB_GRAPH_RADIUS + 2);
  cairo_clip (cr);
  cairo_rectangle (cr, item->x, item->y, item->width, FB_GRAPH_FRAME_HEADER);
  set_rgb (cr, &header, 1);
  cairo_fill (cr);
  cairo_restore (cr);
  if (d->selected_item >= 0 && item == fb_graph_scene_item (scene, d->selected_item))
    {
      fb_graph_paint_rounded_rect (cr, item->x - 2, item->y - 2, item->width + 4, item->height + 4, FB_GRAPH_RADIUS + 3);
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
draw_edge (FbGraphPaint              *d,
           FbGraphScene      *scene,
           guint              index)
{
  const FbSceneEdge *edge = fb_graph_scene_edge (scene, index);
  cairo_t *cr = d->cr;
  const double *p = edge->points;
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
  double ex, ey, dx, dy, len;
  gboolean selected;
  int sel = d->selected_item;

  for (guint i = 0; i < edge->n_points; i++)
    {
      x0 = MIN (x0, p[2 * i]);
      x1 = MAX (x1, p[2 * i]);
      y0 = MIN (y0, p[2 * i + 1]);
      y1 = MAX (y1, p[2 * i + 1]);
    }
  /* Its label may sit left of the label point or a line off it (fb-graph-labels.c). */
  if (!visible (d, x0 - FB_GRAPH_LABEL_MAX_WIDTH - 20, y0 - 32,
                x1 - x0 + 2 * FB_GRAPH_LABEL_MAX_WIDTH + 40, y1 - y0 + 64))
    return;
  /* A constant's row is selected, not the box it sits in: the box's edges stay as they are. */
  selected = sel >= 0 && d->selected_constant == NULL && (edge->from == sel || edge->to == sel);

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
      g_autofree char *text = fb_graph_labels_text (edge);
      double lx = edge->label_x + 4, ly = edge->label_y - 6, lw = FB_GRAPH_LABEL_MAX_WIDTH;

      /* Placed labels are kept apart; one that found no room is left out (the node inspector
       * still lists the value's shape). Without a placement, Graphviz's label point as it is. */
      if (d->labels != NULL && !fb_graph_labels_get (d->labels, index, &lx, &ly, &lw, NULL))
        return;
      draw_text (d, text, d->mono_font, lx, ly, MAX (lw + 1, 5), PANGO_ELLIPSIZE_END, &d->fg, 0.6);
    }
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

void
fb_graph_paint_scene (FbGraphPaint *d,
                      FbGraphScene *scene)
{
  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);

      if (item->kind == FB_SCENE_ITEM_FRAME && visible (d, item->x, item->y, item->width, item->height))
        draw_frame (d, scene, item);
    }
  for (guint i = 0; i < fb_graph_scene_n_edges (scene); i++)
    draw_edge (d, scene, i);
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

FbGraphRgb
fb_graph_paint_item_color (const FbGraphPaint *paint,
                           const FbSceneItem  *item)
{
  Kind kind = item->kind == FB_SCENE_ITEM_NODE ? kind_of (item->node->op) : KIND_GROUP;

  g_return_val_if_fail (paint != NULL && item != NULL, paint->fg);
  return palette[paint->dark][kind][1];
}

void
fb_graph_paint_init_style (FbGraphPaint *paint,
                           PangoContext *context,
                           gboolean      dark)
{
  g_return_if_fail (paint != NULL && PANGO_IS_CONTEXT (context));
  paint->dark = dark;
  paint->fg = dark ? (Rgb) { 1, 1, 1 } : (Rgb) { 0.14, 0.12, 0.19 };
  paint->bg = dark ? (Rgb) { 0.118, 0.118, 0.118 } : (Rgb) { 1, 1, 1 };   /* @view_bg_color */
  paint->title_font = make_font (context, FB_GRAPH_TITLE_PX, PANGO_WEIGHT_BOLD, NULL);
  paint->small_font = make_font (context, FB_GRAPH_TEXT_PX, PANGO_WEIGHT_NORMAL, NULL);
  paint->mono_font = make_font (context, FB_GRAPH_TEXT_PX, PANGO_WEIGHT_NORMAL, "Monospace");
}

void
fb_graph_paint_clear_fonts (FbGraphPaint *paint)
{
  g_return_if_fail (paint != NULL);
  g_clear_pointer (&paint->title_font, pango_font_description_free);
  g_clear_pointer (&paint->small_font, pango_font_description_free);
  g_clear_pointer (&paint->mono_font, pango_font_description_free);
}
