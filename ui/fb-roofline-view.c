/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-roofline-view.h"
#include "fb-profile-format.h"

#include <math.h>

#define MARGIN_LEFT    64.0
#define MARGIN_RIGHT   16.0
#define MARGIN_TOP     14.0
#define MARGIN_BOTTOM  34.0

struct _FbRooflineView {
  GtkWidget  parent_instance;

  FbProfile *profile;
  double     x_min, x_max;     /* intensity range, flops/byte (log scale) */
  double     y_min, y_max;     /* GFLOP/s range */
  guint      selected;
  guint      hover;
};

G_DEFINE_FINAL_TYPE (FbRooflineView, fb_roofline_view, GTK_TYPE_WIDGET)

enum {
  KERNEL_ACTIVATED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

GtkWidget *
fb_roofline_view_new (void)
{
  return g_object_new (FB_TYPE_ROOFLINE_VIEW, NULL);
}

static gboolean
has_dot (const FbProfileKernel *kernel)
{
  return kernel->flops > 0 && kernel->median_us > 0 && kernel->bytes_read + kernel->bytes_written > 0;
}

/* Decades that hold every dot and the ridge point, with room around. */
static void
compute_ranges (FbRooflineView *self)
{
  const FbProfileDevice *device = &self->profile->device;
  double x0 = G_MAXDOUBLE, x1 = 0, y0 = G_MAXDOUBLE, y1 = 0;

  for (guint i = 0; i < self->profile->kernels->len; i++)
    {
      const FbProfileKernel *kernel = g_ptr_array_index (self->profile->kernels, i);

      if (!has_dot (kernel))
        continue;
      x0 = MIN (x0, fb_profile_kernel_intensity (kernel));
      x1 = MAX (x1, fb_profile_kernel_intensity (kernel));
      y0 = MIN (y0, fb_profile_kernel_gflops (kernel));
      y1 = MAX (y1, fb_profile_kernel_gflops (kernel));
    }
  if (device->peak_gflops > 0 && device->peak_gbps > 0)
    {
      double ridge = device->peak_gflops / device->peak_gbps;

      x0 = MIN (x0, ridge / 10);
      x1 = MAX (x1, ridge * 10);
      y1 = MAX (y1, device->peak_gflops);
      y0 = MIN (y0, device->peak_gflops / 1000);
    }
  if (x1 <= 0)
    {
      x0 = 0.01;
      x1 = 100;
      y0 = 0.1;
      y1 = 100;
    }
  self->x_min = pow (10, floor (log10 (x0)));
  self->x_max = pow (10, ceil (log10 (x1 * 1.01)));
  self->y_min = pow (10, floor (log10 (y0)));
  self->y_max = pow (10, ceil (log10 (y1 * 1.3)));
}

void
fb_roofline_view_set_profile (FbRooflineView *self,
                              FbProfile      *profile)
{
  g_return_if_fail (FB_IS_ROOFLINE_VIEW (self));

  if (profile != NULL)
    fb_profile_ref (profile);
  g_clear_pointer (&self->profile, fb_profile_unref);
  self->profile = profile;
  self->hover = G_MAXUINT;
  if (profile != NULL)
    compute_ranges (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static double
px (FbRooflineView *self,
    double          intensity)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self)) - MARGIN_LEFT - MARGIN_RIGHT;

  return MARGIN_LEFT + log10 (intensity / self->x_min) / log10 (self->x_max / self->x_min) * w;
}

static double
py (FbRooflineView *self,
    double          gflops)
{
  double h = gtk_widget_get_height (GTK_WIDGET (self)) - MARGIN_TOP - MARGIN_BOTTOM;

  return MARGIN_TOP + h - log10 (gflops / self->y_min) / log10 (self->y_max / self->y_min) * h;
}

static double
radius (FbRooflineView        *self,
        const FbProfileKernel *kernel)
{
  double total = fb_profile_total_us (self->profile);

  /* Area by time: a kernel taking a quarter of the time is half as wide as one taking all. */
  return 3 + 14 * sqrt (total > 0 ? kernel->median_us / total : 0);
}

gboolean
fb_roofline_view_get_kernel_point (FbRooflineView   *self,
                                   guint             kernel,
                                   graphene_point_t *point)
{
  const FbProfileKernel *k;

  g_return_val_if_fail (FB_IS_ROOFLINE_VIEW (self), FALSE);

  if (self->profile == NULL || (k = fb_profile_find_kernel (self->profile, kernel)) == NULL || !has_dot (k))
    return FALSE;
  point->x = px (self, fb_profile_kernel_intensity (k));
  point->y = py (self, fb_profile_kernel_gflops (k));
  return TRUE;
}

guint
fb_roofline_view_kernel_at (FbRooflineView *self,
                            double          x,
                            double          y)
{
  guint best = G_MAXUINT;
  double best_distance = G_MAXDOUBLE;

  g_return_val_if_fail (FB_IS_ROOFLINE_VIEW (self), G_MAXUINT);

  if (self->profile == NULL)
    return G_MAXUINT;
  for (guint i = 0; i < self->profile->kernels->len; i++)
    {
      const FbProfileKernel *kernel = g_ptr_array_index (self->profile->kernels, i);
      graphene_point_t p;
      double d;

      if (!fb_roofline_view_get_kernel_point (self, kernel->id, &p))
        continue;
      d = hypot (p.x - x, p.y - y);
      /* The smallest dot wins where they overlap: the big one is easy to hit elsewhere. */
      if (d <= MAX (radius (self, kernel), 5) && d - radius (self, kernel) < best_distance)
        {
          best_distance = d - radius (self, kernel);
          best = kernel->id;
        }
    }
  return best;
}

gboolean
fb_roofline_view_click (FbRooflineView *self,
                        double          x,
                        double          y)
{
  guint kernel;

  g_return_val_if_fail (FB_IS_ROOFLINE_VIEW (self), FALSE);

  if ((kernel = fb_roofline_view_kernel_at (self, x, y)) == G_MAXUINT)
    return FALSE;
  fb_roofline_view_set_selected_kernel (self, kernel);
  g_signal_emit (self, signals[KERNEL_ACTIVATED], 0, kernel);
  return TRUE;
}

void
fb_roofline_view_set_selected_kernel (FbRooflineView *self,
                                      guint           kernel)
{
  g_return_if_fail (FB_IS_ROOFLINE_VIEW (self));

  self->selected = kernel;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

guint
fb_roofline_view_get_n_dots (FbRooflineView *self)
{
  guint n = 0;

  g_return_val_if_fail (FB_IS_ROOFLINE_VIEW (self), 0);

  for (guint i = 0; self->profile != NULL && i < self->profile->kernels->len; i++)
    n += has_dot (g_ptr_array_index (self->profile->kernels, i));
  return n;
}

static void
show_text (cairo_t     *cr,
           PangoLayout *layout,
           const char  *text,
           double       x,
           double       y,
           double       align)   /* 0 left, 0.5 centred, 1 right of x */
{
  PangoRectangle extents;

  pango_layout_set_text (layout, text, -1);
  pango_layout_get_pixel_extents (layout, NULL, &extents);
  cairo_move_to (cr, x - extents.width * align, y);
  pango_cairo_show_layout (cr, layout);
}

static void
draw_axes (FbRooflineView *self,
           cairo_t        *cr,
           PangoLayout    *layout,
           const GdkRGBA  *fg,
           double          width,
           double          height)
{
  cairo_set_line_width (cr, 1);
  for (double x = self->x_min; x <= self->x_max * 1.001; x *= 10)
    {
      g_autofree char *text = g_strdup_printf ("%g", x);

      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.12);
      cairo_move_to (cr, round (px (self, x)) + 0.5, MARGIN_TOP);
      cairo_line_to (cr, round (px (self, x)) + 0.5, height - MARGIN_BOTTOM);
      cairo_stroke (cr);
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.7);
      show_text (cr, layout, text, px (self, x), height - MARGIN_BOTTOM + 2, 0.5);
    }
  for (double y = self->y_min; y <= self->y_max * 1.001; y *= 10)
    {
      g_autofree char *text = g_strdup_printf ("%g", y);

      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.12);
      cairo_move_to (cr, MARGIN_LEFT, round (py (self, y)) + 0.5);
      cairo_line_to (cr, width - MARGIN_RIGHT, round (py (self, y)) + 0.5);
      cairo_stroke (cr);
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.7);
      show_text (cr, layout, text, MARGIN_LEFT - 4, py (self, y) - 6, 1);
    }
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.8);
  show_text (cr, layout, "arithmetic intensity (flops per byte, modeled)", (MARGIN_LEFT + width) / 2,
             height - 16, 0.5);
  cairo_save (cr);
  cairo_move_to (cr, 2, (MARGIN_TOP + height - MARGIN_BOTTOM) / 2);
  cairo_rotate (cr, -G_PI / 2);
  pango_layout_set_text (layout, "GFLOP/s achieved", -1);
  {
    PangoRectangle extents;

    pango_layout_get_pixel_extents (layout, NULL, &extents);
    cairo_rel_move_to (cr, -extents.width / 2.0, 0);
  }
  pango_cairo_show_layout (cr, layout);
  cairo_restore (cr);
}

static void
draw_ceilings (FbRooflineView *self,
               cairo_t        *cr,
               PangoLayout    *layout,
               const GdkRGBA  *fg,
               double          width)
{
  const FbProfileDevice *device = &self->profile->device;
  const char *how = device->ceilings_measured ? "measured" : "datasheet";
  double ridge;
  g_autofree char *roof = NULL;
  g_autofree char *slope = NULL;
  g_autofree char *gflops = NULL;
  g_autofree char *gbps = NULL;

  if (device->peak_gflops <= 0 || device->peak_gbps <= 0)
    return;
  ridge = device->peak_gflops / device->peak_gbps;
  cairo_set_line_width (cr, 2);
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.75);
  cairo_move_to (cr, px (self, self->x_min), py (self, MAX (self->x_min * device->peak_gbps, self->y_min)));
  /* Where the slope enters the plot when it starts below its bottom. */
  if (self->x_min * device->peak_gbps < self->y_min)
    cairo_move_to (cr, px (self, self->y_min / device->peak_gbps), py (self, self->y_min));
  cairo_line_to (cr, px (self, ridge), py (self, device->peak_gflops));
  cairo_line_to (cr, px (self, self->x_max), py (self, device->peak_gflops));
  cairo_stroke (cr);

  gflops = fb_format_gflops (device->peak_gflops);
  gbps = fb_format_gbps (device->peak_gbps);
  roof = g_strdup_printf ("peak %s (%s)", gflops, how);
  slope = g_strdup_printf ("memory %s (%s)", gbps, how);
  show_text (cr, layout, roof, MIN (width - MARGIN_RIGHT, px (self, self->x_max)) - 4,
             py (self, device->peak_gflops) - 16, 1);
  show_text (cr, layout, slope, px (self, ridge) - 8, py (self, device->peak_gflops) + 4, 1);
}

static void
fb_roofline_view_snapshot (GtkWidget   *widget,
                           GtkSnapshot *snapshot)
{
  FbRooflineView *self = FB_ROOFLINE_VIEW (widget);
  double width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  g_autoptr(PangoLayout) layout = NULL;
  PangoFontDescription *font;
  GdkRGBA fg;
  cairo_t *cr;
  guint hidden = 0;

  if (self->profile == NULL || width < MARGIN_LEFT + 40 || height < MARGIN_BOTTOM + 40)
    return;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  layout = gtk_widget_create_pango_layout (widget, NULL);
  font = pango_font_description_copy (pango_context_get_font_description (pango_layout_get_context (layout)));
  pango_font_description_set_absolute_size (font, 10 * PANGO_SCALE);
  pango_layout_set_font_description (layout, font);
  pango_font_description_free (font);

  draw_axes (self, cr, layout, &fg, width, height);
  draw_ceilings (self, cr, layout, &fg, width);
  cairo_save (cr);
  cairo_rectangle (cr, MARGIN_LEFT, MARGIN_TOP, width - MARGIN_LEFT - MARGIN_RIGHT,
                   height - MARGIN_TOP - MARGIN_BOTTOM);
  cairo_clip (cr);
  for (guint i = 0; i < self->profile->kernels->len; i++)
    {
      const FbProfileKernel *kernel = g_ptr_array_index (self->profile->kernels, i);
      graphene_point_t p;

      if (!fb_roofline_view_get_kernel_point (self, kernel->id, &p))
        {
          hidden++;
          continue;
        }
      cairo_arc (cr, p.x, p.y, radius (self, kernel), 0, 2 * G_PI);
      if (kernel->bound == FB_BOUND_COMPUTE)
        cairo_set_source_rgba (cr, 0.90, 0.38, 0.00, 0.55);
      else
        cairo_set_source_rgba (cr, 0.21, 0.52, 0.89, 0.55);
      cairo_fill_preserve (cr);
      cairo_set_line_width (cr, kernel->id == self->selected ? 3 : kernel->id == self->hover ? 2 : 1);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, kernel->id == self->selected ? 1 : 0.5);
      cairo_stroke (cr);
    }
  cairo_restore (cr);
  if (hidden > 0)
    {
      g_autofree char *note = g_strdup_printf ("%u kernel%s without flops (data movement) not shown",
                                               hidden, hidden == 1 ? "" : "s");

      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.6);
      show_text (cr, layout, note, MARGIN_LEFT + 6, MARGIN_TOP + 2, 0);
    }
  cairo_destroy (cr);
}

static gboolean
on_query_tooltip (GtkWidget      *widget,
                  int             x,
                  int             y,
                  gboolean        keyboard,
                  GtkTooltip     *tooltip,
                  FbRooflineView *self)
{
  guint id = fb_roofline_view_kernel_at (self, x, y);
  const FbProfileKernel *kernel;
  g_autofree char *time = NULL;
  g_autofree char *gflops = NULL;
  g_autofree char *gbps = NULL;
  g_autofree char *share = NULL;
  g_autofree char *text = NULL;

  if (id == G_MAXUINT || (kernel = fb_profile_find_kernel (self->profile, id)) == NULL)
    return FALSE;
  time = fb_format_time_us (kernel->median_us);
  gflops = fb_format_gflops (fb_profile_kernel_gflops (kernel));
  gbps = fb_format_gbps (fb_profile_kernel_gbps (kernel));
  share = fb_format_share (kernel->roofline_share);
  text = g_strdup_printf ("%s — %s\n%s, %s (bytes %s), %.2f flops/byte\n%s-bound, %s of its roofline",
                          kernel->name, time, gflops, gbps,
                          kernel->bytes_source == FB_BYTES_MEASURED ? "measured" : "modeled",
                          fb_profile_kernel_intensity (kernel),
                          kernel->bound == FB_BOUND_COMPUTE ? "compute" : "memory", share);
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *controller,
           double                    x,
           double                    y,
           FbRooflineView           *self)
{
  guint hover = fb_roofline_view_kernel_at (self, x, y);

  if (hover != self->hover)
    {
      self->hover = hover;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
on_released (GtkGestureClick *gesture,
             int              n_press,
             double           x,
             double           y,
             FbRooflineView  *self)
{
  fb_roofline_view_click (self, x, y);
}

static void
fb_roofline_view_dispose (GObject *object)
{
  FbRooflineView *self = FB_ROOFLINE_VIEW (object);

  g_clear_pointer (&self->profile, fb_profile_unref);
  G_OBJECT_CLASS (fb_roofline_view_parent_class)->dispose (object);
}

static void
fb_roofline_view_measure (GtkWidget      *widget,
                          GtkOrientation  orientation,
                          int             for_size,
                          int            *minimum,
                          int            *natural,
                          int            *minimum_baseline,
                          int            *natural_baseline)
{
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 240 : 160;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 640 : 260;
}

static void
fb_roofline_view_class_init (FbRooflineViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fb_roofline_view_dispose;
  widget_class->snapshot = fb_roofline_view_snapshot;
  widget_class->measure = fb_roofline_view_measure;

  /* The kernel (FbProfileKernel.id) whose dot the user clicked. */
  signals[KERNEL_ACTIVATED] =
    g_signal_new ("kernel-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  gtk_widget_class_set_css_name (widget_class, "fbroofline");
}

static void
fb_roofline_view_init (FbRooflineView *self)
{
  GtkEventController *motion = gtk_event_controller_motion_new ();
  GtkGesture *click = gtk_gesture_click_new ();

  self->selected = G_MAXUINT;
  self->hover = G_MAXUINT;
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (on_query_tooltip), self);
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
  g_signal_connect (click, "released", G_CALLBACK (on_released), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
}
