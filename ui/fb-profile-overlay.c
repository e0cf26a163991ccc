/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-graph-view-private.h"
#include "fb-profile-format.h"
#include "fb-profile-overlay-private.h"

#include <math.h>
#include <string.h>

#define BADGE_HEIGHT 14.0
#define BADGE_PX     9.0

struct _FbProfileOverlay {
  FbProfile      *profile;
  FbProfile      *previous;      /* A/B: the profile before, or NULL */
  FbProfileMetric metric;
  FbGraphLayout  *layout;        /* what the tables below are for (a reference) */
  GHashTable     *costs;         /* node id -> FbNodeCost* (fb_profile_attribute) */
  GHashTable     *now_us;        /* A/B: node id -> double*, this profile through provenance */
  GHashTable     *before_us;     /* A/B: node id -> double*, the previous one the same way */
  GHashTable     *group_costs;   /* FbGraphGroup* -> FbNodeCost*, made when first drawn */
  GHashTable     *group_delta;   /* FbGraphGroup* -> double* (now - before) */
  double          max[FB_PROFILE_N_METRICS];
  double          max_delta;     /* the largest change of a node, either way */
  gboolean        compute_bound_device; /* peak flops known: GFLOP/s badges make sense */
  guint           n_painted;
  guint           n_badges;
};

static const struct {
  const char *nick;
  const char *label;
  const char *legend;
} metrics[FB_PROFILE_N_METRICS] = {
  [FB_PROFILE_METRIC_TIME]      = { "time",      "Time",             "Time per inference" },
  [FB_PROFILE_METRIC_SHARE]     = { "share",     "Share of Time",    "Share of the kernel time" },
  [FB_PROFILE_METRIC_BYTES]     = { "bytes",     "Bytes",            "Bytes read and written" },
  [FB_PROFILE_METRIC_BANDWIDTH] = { "bandwidth", "Bandwidth",        "Achieved bandwidth" },
  [FB_PROFILE_METRIC_ROOFLINE]  = { "roofline",  "Share of Roofline", "Share of the roofline" },
};

const char *
fb_profile_metric_nick (FbProfileMetric metric)
{
  g_return_val_if_fail ((guint) metric < FB_PROFILE_N_METRICS, NULL);
  return metrics[metric].nick;
}

FbProfileMetric
fb_profile_metric_from_nick (const char *nick)
{
  for (guint i = 0; i < FB_PROFILE_N_METRICS; i++)
    if (g_strcmp0 (nick, metrics[i].nick) == 0)
      return i;
  return FB_PROFILE_METRIC_SHARE;
}

const char *
fb_profile_metric_label (FbProfileMetric metric)
{
  g_return_val_if_fail ((guint) metric < FB_PROFILE_N_METRICS, NULL);
  return metrics[metric].label;
}

static void
clear_tables (FbProfileOverlay *overlay)
{
  g_clear_pointer (&overlay->layout, fb_graph_layout_unref);
  g_clear_pointer (&overlay->costs, g_hash_table_unref);
  g_clear_pointer (&overlay->now_us, g_hash_table_unref);
  g_clear_pointer (&overlay->before_us, g_hash_table_unref);
  g_clear_pointer (&overlay->group_costs, g_hash_table_unref);
  g_clear_pointer (&overlay->group_delta, g_hash_table_unref);
}

void
_fb_profile_overlay_free (FbProfileOverlay *overlay)
{
  clear_tables (overlay);
  g_clear_pointer (&overlay->profile, fb_profile_unref);
  g_clear_pointer (&overlay->previous, fb_profile_unref);
  g_free (overlay);
}

/* A profile's time on each node of graph through provenance alone: each original node's time
 * split evenly among the nodes of graph that hold it. Used for both sides of an A/B comparison,
 * so that two profiles of different pipelines are measured against the same nodes. */
static GHashTable *
spread_through_provenance (const FbProfile *profile,
                           const FbGraph   *graph)
{
  g_autoptr(GHashTable) original = fb_profile_original_costs (profile);
  GHashTable *result = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  GArray *orig = graph->model->orig_nodes;
  g_autofree guint *holders = g_new0 (guint, MAX (orig->len, 1));

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *node = g_ptr_array_index (graph->nodes, i);

      for (guint p = 0; p < node->n_prov; p++)
        if (node->prov[p] < orig->len)
          holders[node->prov[p]]++;
    }
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *node = g_ptr_array_index (graph->nodes, i);
      double us = 0;
      gboolean any = FALSE;

      for (guint p = 0; p < node->n_prov; p++)
        {
          const double *cost;

          if (node->prov[p] >= orig->len)
            continue;
          cost = g_hash_table_lookup (original, g_array_index (orig, FbOrigNode, node->prov[p]).name);
          if (cost != NULL)
            {
              us += *cost / holders[node->prov[p]];
              any = TRUE;
            }
        }
      if (any)
        g_hash_table_insert (result, GUINT_TO_POINTER (node->id), g_memdup2 (&us, sizeof us));
    }
  return result;
}

static gboolean
node_is_compute_bound (const FbProfileOverlay *overlay,
                       const FbNodeCost       *cost)
{
  const FbProfileDevice *device = &overlay->profile->device;

  if (device->peak_gflops <= 0 || device->peak_gbps <= 0)
    return FALSE;
  return cost->gflops / device->peak_gflops > cost->gbps / device->peak_gbps;
}

static double
metric_value (const FbProfileOverlay *overlay,
              const FbNodeCost       *cost)
{
  switch (overlay->metric)
    {
    case FB_PROFILE_METRIC_TIME:
      return cost->time_us;
    case FB_PROFILE_METRIC_SHARE:
      return cost->share;
    case FB_PROFILE_METRIC_BYTES:
      return cost->bytes;
    case FB_PROFILE_METRIC_BANDWIDTH:
      return cost->gbps;
    case FB_PROFILE_METRIC_ROOFLINE:
    default:
      return cost->roofline_share;
    }
}

static gboolean
overlay_delta (const FbProfileOverlay *overlay,
               guint                   node_id,
               double                 *delta_us,
               double                 *before_us)
{
  const double *now, *before;

  if (overlay->now_us == NULL)
    return FALSE;
  now = g_hash_table_lookup (overlay->now_us, GUINT_TO_POINTER (node_id));
  before = g_hash_table_lookup (overlay->before_us, GUINT_TO_POINTER (node_id));
  if (now == NULL && before == NULL)
    return FALSE;
  *delta_us = (now != NULL ? *now : 0) - (before != NULL ? *before : 0);
  *before_us = before != NULL ? *before : 0;
  return TRUE;
}

void
_fb_profile_overlay_sync (FbProfileOverlay *overlay,
                          FbGraphLayout    *layout)
{
  FbGraph *graph;
  GHashTableIter iter;
  gpointer value;

  if (layout == overlay->layout)
    return;
  clear_tables (overlay);
  if (layout == NULL)
    return;
  overlay->layout = fb_graph_layout_ref (layout);
  graph = fb_graph_layout_get_graph (layout);
  overlay->costs = fb_profile_attribute (overlay->profile, graph);
  overlay->group_costs = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  overlay->group_delta = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  memset (overlay->max, 0, sizeof overlay->max);
  g_hash_table_iter_init (&iter, overlay->costs);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      const FbNodeCost *cost = value;

      overlay->max[FB_PROFILE_METRIC_TIME] = MAX (overlay->max[FB_PROFILE_METRIC_TIME], cost->time_us);
      overlay->max[FB_PROFILE_METRIC_SHARE] = MAX (overlay->max[FB_PROFILE_METRIC_SHARE], cost->share);
      overlay->max[FB_PROFILE_METRIC_BYTES] = MAX (overlay->max[FB_PROFILE_METRIC_BYTES], cost->bytes);
      overlay->max[FB_PROFILE_METRIC_BANDWIDTH] = MAX (overlay->max[FB_PROFILE_METRIC_BANDWIDTH], cost->gbps);
    }
  overlay->max[FB_PROFILE_METRIC_ROOFLINE] = 1;
  overlay->max_delta = 0;
  if (overlay->previous != NULL)
    {
      overlay->now_us = spread_through_provenance (overlay->profile, graph);
      overlay->before_us = spread_through_provenance (overlay->previous, graph);
      for (guint i = 0; i < graph->nodes->len; i++)
        {
          const FbNode *node = g_ptr_array_index (graph->nodes, i);
          double delta, before;

          if (overlay_delta (overlay, node->id, &delta, &before))
            overlay->max_delta = MAX (overlay->max_delta, fabs (delta));
        }
    }
}

/* The sum of the costs of every node inside group, made once per layout. */
static const FbNodeCost *
group_cost (FbProfileOverlay   *overlay,
            const FbGraphGroup *group)
{
  FbNodeCost *sum = g_hash_table_lookup (overlay->group_costs, group);
  double weighted = 0, delta = 0;
  gboolean any_delta = FALSE;
  guint measured = 0, n = 0;
  GPtrArray *stack;

  if (sum != NULL)
    return sum->n_kernels > 0 ? sum : NULL;
  sum = g_new0 (FbNodeCost, 1);
  stack = g_ptr_array_new ();
  g_ptr_array_add (stack, (gpointer) group);
  while (stack->len > 0)
    {
      const FbGraphGroup *g = g_ptr_array_steal_index_fast (stack, stack->len - 1);

      for (guint i = 0; i < fb_graph_group_get_n_children (g); i++)
        {
          FbNode *node = fb_graph_group_get_child_node (g, i);
          const FbNodeCost *cost;
          double d, before;

          if (node == NULL)
            {
              g_ptr_array_add (stack, fb_graph_group_get_child_group (g, i));
              continue;
            }
          if (overlay_delta (overlay, node->id, &d, &before))
            {
              delta += d;
              any_delta = TRUE;
            }
          if ((cost = g_hash_table_lookup (overlay->costs, GUINT_TO_POINTER (node->id))) == NULL)
            continue;
          sum->time_us += cost->time_us;
          sum->share += cost->share;
          sum->bytes += cost->bytes;
          sum->flops += cost->flops;
          sum->split |= cost->split;
          sum->n_kernels += cost->n_kernels;
          weighted += cost->roofline_share * cost->time_us;
          measured += cost->bytes_source == FB_BYTES_MEASURED;
          n++;
        }
    }
  g_ptr_array_unref (stack);
  if (sum->time_us > 0)
    {
      sum->gbps = sum->bytes / sum->time_us / 1e3;
      sum->gflops = sum->flops / sum->time_us / 1e3;
      sum->roofline_share = weighted / sum->time_us;
    }
  sum->bytes_source = n > 0 && measured == n ? FB_BYTES_MEASURED : FB_BYTES_MODELED;
  g_hash_table_insert (overlay->group_costs, (gpointer) group, sum);
  if (any_delta)
    g_hash_table_insert (overlay->group_delta, (gpointer) group, g_memdup2 (&delta, sizeof delta));
  return sum->n_kernels > 0 ? sum : NULL;
}

static const FbNodeCost *
cost_of (FbProfileOverlay   *overlay,
         const FbNode       *node,
         const FbGraphGroup *group)
{
  if (overlay->costs == NULL)
    return NULL;
  if (node != NULL)
    return g_hash_table_lookup (overlay->costs, GUINT_TO_POINTER (node->id));
  return group_cost (overlay, group);
}

static gboolean
delta_of (FbProfileOverlay   *overlay,
          const FbNode       *node,
          const FbGraphGroup *group,
          double             *delta)
{
  double before;
  const double *d;

  if (overlay->now_us == NULL)
    return FALSE;
  if (node != NULL)
    return overlay_delta (overlay, node->id, delta, &before);
  group_cost (overlay, group);
  if ((d = g_hash_table_lookup (overlay->group_delta, group)) == NULL)
    return FALSE;
  *delta = *d;
  return TRUE;
}

typedef struct { double r, g, b; } Rgb;

/* Pale yellow to orange to red: how hot by t in 0..1. */
static Rgb
heat (double t)
{
  static const Rgb stops[] = { { 1.00, 0.92, 0.45 }, { 1.00, 0.56, 0.10 }, { 0.85, 0.11, 0.14 } };
  double x = CLAMP (t, 0, 1) * 2;
  guint i = MIN ((guint) x, 1u);
  double f = x - i;

  return (Rgb) { stops[i].r + (stops[i + 1].r - stops[i].r) * f, stops[i].g + (stops[i + 1].g - stops[i].g) * f,
                 stops[i].b + (stops[i + 1].b - stops[i].b) * f };
}

static const Rgb faster = { 0.15, 0.64, 0.41 };
static const Rgb slower = { 0.88, 0.11, 0.14 };
static const Rgb roof_low = { 0.88, 0.11, 0.14 };
static const Rgb roof_high = { 0.15, 0.64, 0.41 };

/* The colour and strength of the tint for a node or group; FALSE when it gets none. */
static gboolean
tint_of (FbProfileOverlay   *overlay,
         const FbNode       *node,
         const FbGraphGroup *group,
         Rgb                *color,
         double             *alpha)
{
  const FbNodeCost *cost;
  double delta, t;

  if (overlay->previous != NULL)
    {
      if (!delta_of (overlay, node, group, &delta) || overlay->max_delta <= 0)
        return FALSE;
      t = sqrt (MIN (fabs (delta) / overlay->max_delta, 1));
      *color = delta < 0 ? faster : slower;
      *alpha = 0.15 + 0.65 * t;
      return TRUE;
    }
  if ((cost = cost_of (overlay, node, group)) == NULL)
    return FALSE;
  if (overlay->metric == FB_PROFILE_METRIC_ROOFLINE)
    {
      t = CLAMP (cost->roofline_share, 0, 1);
      *color = (Rgb) { roof_low.r + (roof_high.r - roof_low.r) * t, roof_low.g + (roof_high.g - roof_low.g) * t,
                       roof_low.b + (roof_high.b - roof_low.b) * t };
      *alpha = 0.55;
      return TRUE;
    }
  if (overlay->max[overlay->metric] <= 0)
    return FALSE;
  /* Square root: costs are heavy-tailed, and a linear scale would leave all but the top few
   * nodes looking cold. */
  t = sqrt (MIN (metric_value (overlay, cost) / overlay->max[overlay->metric], 1));
  *color = heat (t);
  *alpha = 0.25 + 0.65 * t;
  return TRUE;
}

void
_fb_profile_overlay_tint (FbProfileOverlay   *overlay,
                          cairo_t            *cr,
                          const FbNode       *node,
                          const FbGraphGroup *group)
{
  Rgb color;
  double alpha;

  if (!tint_of (overlay, node, group, &color, &alpha))
    return;
  cairo_set_source_rgba (cr, color.r, color.g, color.b, alpha);
  cairo_fill_preserve (cr);
  overlay->n_painted++;
}

static char *
rate_text (FbProfileOverlay *overlay,
           const FbNodeCost *cost)
{
  if (node_is_compute_bound (overlay, cost))
    return fb_format_gflops (cost->gflops);
  return fb_format_gbps (cost->gbps);
}

/* The badge: the selected metric first, then time, bytes and the achieved rate. */
static char *
badge_text (FbProfileOverlay   *overlay,
            const FbNode       *node,
            const FbGraphGroup *group)
{
  const FbNodeCost *cost = cost_of (overlay, node, group);
  g_autofree char *time = NULL;
  g_autofree char *bytes = NULL;
  g_autofree char *rate = NULL;
  double delta;

  if (overlay->previous != NULL)
    {
      double before = 0;
      g_autofree char *d = NULL;

      if (!delta_of (overlay, node, group, &delta))
        return NULL;
      d = fb_format_delta_us (delta);
      if (node != NULL)
        overlay_delta (overlay, node->id, &delta, &before);
      if (node != NULL && before > 0)
        return g_strdup_printf ("%s (%+.0f %%)", d, 100 * delta / before);
      if (node != NULL && before == 0 && delta > 0)
        return g_strdup_printf ("%s (new)", d);
      return g_steal_pointer (&d);
    }
  if (cost == NULL)
    return NULL;
  time = fb_format_time_us (cost->time_us);
  bytes = fb_format_bytes (cost->bytes);
  rate = rate_text (overlay, cost);
  switch (overlay->metric)
    {
    case FB_PROFILE_METRIC_SHARE:
      {
        g_autofree char *share = fb_format_share (cost->share);

        return g_strdup_printf ("%s · %s · %s", share, time, rate);
      }
    case FB_PROFILE_METRIC_BYTES:
      return g_strdup_printf ("%s · %s · %s", bytes, time, rate);
    case FB_PROFILE_METRIC_BANDWIDTH:
      return g_strdup_printf ("%s · %s · %s", rate, time, bytes);
    case FB_PROFILE_METRIC_ROOFLINE:
      {
        g_autofree char *share = fb_format_share (cost->roofline_share);

        return g_strdup_printf ("%s of roof · %s", share, time);
      }
    case FB_PROFILE_METRIC_TIME:
    default:
      return g_strdup_printf ("%s · %s · %s", time, bytes, rate);
    }
}

static void
rounded (cairo_t *cr,
         double   x,
         double   y,
         double   w,
         double   h,
         double   r)
{
  cairo_new_sub_path (cr);
  cairo_arc (cr, x + w - r, y + r, r, -G_PI / 2, 0);
  cairo_arc (cr, x + w - r, y + h - r, r, 0, G_PI / 2);
  cairo_arc (cr, x + r, y + h - r, r, G_PI / 2, G_PI);
  cairo_arc (cr, x + r, y + r, r, G_PI, 3 * G_PI / 2);
  cairo_close_path (cr);
}

static void
set_small_font (PangoLayout *text,
                double       px,
                PangoWeight  weight)
{
  const PangoFontDescription *base = pango_context_get_font_description (pango_layout_get_context (text));
  PangoFontDescription *font = pango_font_description_copy (base);

  pango_font_description_set_absolute_size (font, px * PANGO_SCALE);
  pango_font_description_set_weight (font, weight);
  pango_layout_set_font_description (text, font);
  pango_font_description_free (font);
}

void
_fb_profile_overlay_badge (FbProfileOverlay   *overlay,
                           cairo_t            *cr,
                           PangoLayout        *text,
                           const FbNode       *node,
                           const FbGraphGroup *group,
                           double              x,
                           double              y,
                           double              width,
                           double              height)
{
  g_autofree char *label = badge_text (overlay, node, group);
  PangoRectangle extents;
  double w, bx, by = y + height - BADGE_HEIGHT + 6;
  double delta;
  gboolean ab = overlay->previous != NULL && delta_of (overlay, node, group, &delta);

  if (label == NULL)
    return;
  set_small_font (text, BADGE_PX, PANGO_WEIGHT_BOLD);
  pango_layout_set_width (text, (int) ((width - 20) * PANGO_SCALE));
  pango_layout_set_ellipsize (text, PANGO_ELLIPSIZE_END);
  pango_layout_set_text (text, label, -1);
  pango_layout_get_pixel_extents (text, NULL, &extents);
  w = MIN (extents.width + 10, width - 8);
  bx = x + width - w - 4;
  rounded (cr, bx, by, w, BADGE_HEIGHT, BADGE_HEIGHT / 2);
  if (ab)
    cairo_set_source_rgb (cr, delta < 0 ? faster.r : slower.r, delta < 0 ? faster.g : slower.g,
                          delta < 0 ? faster.b : slower.b);
  else
    cairo_set_source_rgb (cr, 0.16, 0.16, 0.18);
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_move_to (cr, bx + 5, by + (BADGE_HEIGHT - extents.height) / 2);
  pango_cairo_show_layout (cr, text);
  overlay->n_badges++;
}

static char *
legend_title (FbProfileOverlay *overlay)
{
  const char *bytes = fb_profile_bytes_source_text (overlay->profile);

  if (overlay->previous != NULL)
    return g_strdup ("Change against the previous profile · measured");
  switch (overlay->metric)
    {
    case FB_PROFILE_METRIC_TIME:
    case FB_PROFILE_METRIC_SHARE:
      return g_strdup_printf ("%s · measured", metrics[overlay->metric].legend);
    case FB_PROFILE_METRIC_BYTES:
      return g_strdup_printf ("%s · %s", metrics[overlay->metric].legend, bytes);
    case FB_PROFILE_METRIC_BANDWIDTH:
    case FB_PROFILE_METRIC_ROOFLINE:
    default:
      return g_strdup_printf ("%s · measured time, %s bytes", metrics[overlay->metric].legend, bytes);
    }
}

static char *
format_metric (FbProfileMetric metric,
               double          value)
{
  switch (metric)
    {
    case FB_PROFILE_METRIC_TIME:
      return fb_format_time_us (value);
    case FB_PROFILE_METRIC_SHARE:
    case FB_PROFILE_METRIC_ROOFLINE:
      return fb_format_share (value);
    case FB_PROFILE_METRIC_BYTES:
      return fb_format_bytes (value);
    case FB_PROFILE_METRIC_BANDWIDTH:
    default:
      return fb_format_gbps (value);
    }
}

void
_fb_profile_overlay_legend (FbProfileOverlay *overlay,
                            cairo_t          *cr,
                            PangoLayout      *text,
                            gboolean          dark,
                            double            width,
                            double            height)
{
  double w = FB_PROFILE_LEGEND_WIDTH, h = FB_PROFILE_LEGEND_HEIGHT;

  if (width < w + 2 * FB_PROFILE_LEGEND_INSET || height < h + 2 * FB_PROFILE_LEGEND_INSET)
    return;
  _fb_profile_overlay_legend_at (overlay, cr, text, dark, FB_PROFILE_LEGEND_INSET,
                                 height - h - FB_PROFILE_LEGEND_INSET);
}

void
_fb_profile_overlay_legend_at (FbProfileOverlay *overlay,
                               cairo_t          *cr,
                               PangoLayout      *text,
                               gboolean          dark,
                               double            x,
                               double            y)
{
  g_autofree char *title = legend_title (overlay);
  g_autofree char *low = NULL;
  g_autofree char *high = NULL;
  PangoRectangle extents;
  double w = FB_PROFILE_LEGEND_WIDTH, h = FB_PROFILE_LEGEND_HEIGHT, bar_x, bar_w = w - 20;

  rounded (cr, x, y, w, h, 6);
  cairo_set_source_rgba (cr, dark ? 0.12 : 1, dark ? 0.12 : 1, dark ? 0.12 : 1, 0.92);
  cairo_fill_preserve (cr);
  cairo_set_line_width (cr, 1);
  cairo_set_source_rgba (cr, dark ? 1 : 0, dark ? 1 : 0, dark ? 1 : 0, 0.25);
  cairo_stroke (cr);

  set_small_font (text, 10, PANGO_WEIGHT_BOLD);
  pango_layout_set_width (text, (int) ((w - 16) * PANGO_SCALE));
  pango_layout_set_ellipsize (text, PANGO_ELLIPSIZE_END);
  pango_layout_set_text (text, title, -1);
  cairo_set_source_rgba (cr, dark ? 1 : 0.14, dark ? 1 : 0.12, dark ? 1 : 0.19, 0.9);
  cairo_move_to (cr, x + 8, y + 5);
  pango_cairo_show_layout (cr, text);

  bar_x = x + 10;
  for (int i = 0; i < (int) bar_w; i++)
    {
      double t = i / bar_w;
      Rgb c;

      if (overlay->previous != NULL)
        {
          double s = 2 * t - 1;

          c = s < 0 ? faster : slower;
          cairo_set_source_rgba (cr, c.r, c.g, c.b, 0.15 + 0.65 * sqrt (fabs (s)));
        }
      else if (overlay->metric == FB_PROFILE_METRIC_ROOFLINE)
        {
          c = (Rgb) { roof_low.r + (roof_high.r - roof_low.r) * t, roof_low.g + (roof_high.g - roof_low.g) * t,
                      roof_low.b + (roof_high.b - roof_low.b) * t };
          cairo_set_source_rgba (cr, c.r, c.g, c.b, 0.55);
        }
      else
        {
          /* The same square-root scale the boxes use. */
          c = heat (sqrt (t));
          cairo_set_source_rgba (cr, c.r, c.g, c.b, 0.25 + 0.65 * sqrt (t));
        }
      cairo_rectangle (cr, bar_x + i, y + 22, 1, 10);
      cairo_fill (cr);
    }
  if (overlay->previous != NULL)
    {
      g_autofree char *d = fb_format_time_us (overlay->max_delta);

      low = g_strdup_printf ("%s faster", d);
      high = g_strdup_printf ("%s slower", d);
    }
  else
    {
      low = format_metric (overlay->metric, 0);
      high = format_metric (overlay->metric, overlay->max[overlay->metric]);
    }
  set_small_font (text, 9, PANGO_WEIGHT_NORMAL);
  pango_layout_set_width (text, -1);
  cairo_set_source_rgba (cr, dark ? 1 : 0.14, dark ? 1 : 0.12, dark ? 1 : 0.19, 0.8);
  pango_layout_set_text (text, low, -1);
  cairo_move_to (cr, bar_x, y + 35);
  pango_cairo_show_layout (cr, text);
  pango_layout_set_text (text, high, -1);
  pango_layout_get_pixel_extents (text, NULL, &extents);
  cairo_move_to (cr, bar_x + bar_w - extents.width, y + 35);
  pango_cairo_show_layout (cr, text);
}

/* The graph view's side. */

void
fb_graph_view_set_profile (FbGraphView *self,
                           FbProfile   *profile,
                           FbProfile   *previous)
{
  FbProfileMetric metric;

  g_return_if_fail (FB_IS_GRAPH_VIEW (self));

  metric = self->overlay_metric;
  g_clear_pointer (&self->overlay, _fb_profile_overlay_free);
  if (profile != NULL)
    {
      self->overlay = _fb_profile_overlay_new (profile, previous, metric);
    }
  _fb_graph_view_invalidate (self);
}

FbProfileOverlay *
_fb_profile_overlay_new (FbProfile       *profile,
                         FbProfile       *previous,
                         FbProfileMetric  metric)
{
  FbProfileOverlay *overlay = g_new0 (FbProfileOverlay, 1);
  overlay->profile = fb_profile_ref (profile);
  overlay->previous = previous != NULL ? fb_profile_ref (previous) : NULL;
  overlay->metric = metric;
  return overlay;
}

FbProfile *
fb_graph_view_get_profile (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);
  return self->overlay != NULL ? self->overlay->profile : NULL;
}

FbProfile *
fb_graph_view_get_previous_profile (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);
  return self->overlay != NULL ? self->overlay->previous : NULL;
}

void
fb_graph_view_set_profile_metric (FbGraphView     *self,
                                  FbProfileMetric  metric)
{
  g_return_if_fail (FB_IS_GRAPH_VIEW (self));
  g_return_if_fail ((guint) metric < FB_PROFILE_N_METRICS);

  self->overlay_metric = metric;
  if (self->overlay == NULL || self->overlay->metric == metric)
    return;
  self->overlay->metric = metric;
  self->overlay->n_painted = self->overlay->n_badges = 0;
  _fb_graph_view_invalidate (self);
}

FbProfileMetric
fb_graph_view_get_profile_metric (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), FB_PROFILE_METRIC_SHARE);
  return self->overlay_metric;
}

const FbNodeCost *
fb_graph_view_get_node_cost (FbGraphView  *self,
                             const FbNode *node)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);
  g_return_val_if_fail (node != NULL, NULL);

  if (self->overlay == NULL || self->layout == NULL)
    return NULL;
  _fb_profile_overlay_sync (self->overlay, self->layout);
  return g_hash_table_lookup (self->overlay->costs, GUINT_TO_POINTER (node->id));
}

gboolean
fb_graph_view_get_node_delta (FbGraphView  *self,
                              const FbNode *node,
                              double       *delta_us,
                              double       *before_us)
{
  double delta, before;

  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), FALSE);
  g_return_val_if_fail (node != NULL, FALSE);

  if (self->overlay == NULL || self->layout == NULL)
    return FALSE;
  _fb_profile_overlay_sync (self->overlay, self->layout);
  if (!overlay_delta (self->overlay, node->id, &delta, &before))
    return FALSE;
  if (delta_us != NULL)
    *delta_us = delta;
  if (before_us != NULL)
    *before_us = before;
  return TRUE;
}

guint
fb_graph_view_get_n_painted (FbGraphView *self,
                             guint       *n_badges)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), 0);

  if (n_badges != NULL)
    *n_badges = self->overlay != NULL ? self->overlay->n_badges : 0;
  return self->overlay != NULL ? self->overlay->n_painted : 0;
}

char *
fb_graph_view_describe_overlay (FbGraphView *self)
{
  g_return_val_if_fail (FB_IS_GRAPH_VIEW (self), NULL);

  return self->overlay != NULL ? legend_title (self->overlay) : NULL;
}
