/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-timeline-view.h"
#include "fb-profile-format.h"

#include <adwaita.h>
#include <math.h>

#define AXIS_HEIGHT  22.0
#define LANE_HEIGHT  22.0
#define LANE_GAP     4.0
#define LABEL_WIDTH  64.0     /* "thread 12" at the left of each lane */
#define MIN_SPAN_US  0.01     /* the most one can zoom in: 10 ns across the widget */

struct _FbTimelineView {
  GtkWidget   parent_instance;

  FbProfile  *profile;
  guint       n_lanes;
  GArray    **lanes;          /* per lane: guint indices into profile->timeline, by start */
  double      total_us;       /* end of the last launch */
  double      start_us;       /* visible range */
  double      end_us;
  guint       selected;       /* kernel id, G_MAXUINT for none */
  int         hover;          /* launch under the pointer, -1 */
  double      drag_start_us;
  gboolean    dragged;        /* the press moved: its release is no click */
  double      pointer_x;      /* where the wheel zooms */
  double      zoom_last;      /* the pinch's scale so far */
  guint       n_drawn;
};

G_DEFINE_FINAL_TYPE (FbTimelineView, fb_timeline_view, GTK_TYPE_WIDGET)

enum {
  KERNEL_ACTIVATED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

GtkWidget *
fb_timeline_view_new (void)
{
  return g_object_new (FB_TYPE_TIMELINE_VIEW, NULL);
}

static double
plot_width (FbTimelineView *self)
{
  return MAX (1, gtk_widget_get_width (GTK_WIDGET (self)) - LABEL_WIDTH);
}

static double
x_of (FbTimelineView *self,
      double          us)
{
  return LABEL_WIDTH + (us - self->start_us) / (self->end_us - self->start_us) * plot_width (self);
}

static double
us_of (FbTimelineView *self,
       double          x)
{
  return self->start_us + (x - LABEL_WIDTH) / plot_width (self) * (self->end_us - self->start_us);
}

static const FbProfileSpan *
span (FbTimelineView *self,
      guint           index)
{
  return &g_array_index (self->profile->timeline, FbProfileSpan, index);
}

static void
clear_lanes (FbTimelineView *self)
{
  for (guint i = 0; i < self->n_lanes; i++)
    g_array_unref (self->lanes[i]);
  g_clear_pointer (&self->lanes, g_free);
  self->n_lanes = 0;
}

static FbTimelineView *sort_view;

static int
compare_start (gconstpointer a,
               gconstpointer b)
{
  double x = span (sort_view, *(const guint *) a)->start_us;
  double y = span (sort_view, *(const guint *) b)->start_us;

  return x < y ? -1 : x > y;
}

void
fb_timeline_view_set_profile (FbTimelineView *self,
                              FbProfile      *profile)
{
  g_return_if_fail (FB_IS_TIMELINE_VIEW (self));

  if (profile != NULL)
    fb_profile_ref (profile);
  g_clear_pointer (&self->profile, fb_profile_unref);
  self->profile = profile;
  clear_lanes (self);
  self->total_us = 0;
  self->hover = -1;
  if (profile != NULL)
    {
      /* Lane numbers come from the file: only as many lanes as are used, in their order. */
      for (guint i = 0; i < profile->timeline->len; i++)
        {
          self->n_lanes = MAX (self->n_lanes, MIN (span (self, i)->lane, 255u) + 1);
          self->total_us = MAX (self->total_us, span (self, i)->end_us);
        }
      self->lanes = g_new0 (GArray *, MAX (self->n_lanes, 1));
      for (guint l = 0; l < self->n_lanes; l++)
        self->lanes[l] = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint i = 0; i < profile->timeline->len; i++)
        g_array_append_val (self->lanes[MIN (span (self, i)->lane, 255u)], i);
      /* Sorted once here; qsort has no user data, and this runs on the UI thread only. */
      sort_view = self;
      for (guint l = 0; l < self->n_lanes; l++)
        g_array_sort (self->lanes[l], compare_start);
      sort_view = NULL;
    }
  self->start_us = 0;
  self->end_us = MAX (self->total_us, 1);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

FbProfile *
fb_timeline_view_get_profile (FbTimelineView *self)
{
  g_return_val_if_fail (FB_IS_TIMELINE_VIEW (self), NULL);
  return self->profile;
}

void
fb_timeline_view_get_range (FbTimelineView *self,
                            double         *start_us,
                            double         *end_us)
{
  g_return_if_fail (FB_IS_TIMELINE_VIEW (self));

  if (start_us != NULL)
    *start_us = self->start_us;
  if (end_us != NULL)
    *end_us = self->end_us;
}

void
fb_timeline_view_set_range (FbTimelineView *self,
                            double          start_us,
                            double          end_us)
{
  double total = MAX (self->total_us, 1), width;

  g_return_if_fail (FB_IS_TIMELINE_VIEW (self));

  /* Never wider than the whole inference (with a margin), never narrower than MIN_SPAN_US. */
  width = CLAMP (end_us - start_us, MIN_SPAN_US, total * 1.1);
  start_us = CLAMP (start_us, -total * 0.05, total * 1.05 - width);
  self->start_us = start_us;
  self->end_us = start_us + width;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
fb_timeline_view_zoom_at (FbTimelineView *self,
                          double          factor,
                          double          x)
{
  double t, width;

  g_return_if_fail (FB_IS_TIMELINE_VIEW (self));
  g_return_if_fail (factor > 0);

  t = us_of (self, x);
  width = (self->end_us - self->start_us) / factor;
  fb_timeline_view_set_range (self, t - (t - self->start_us) / factor,
                              t - (t - self->start_us) / factor + width);
}

/* The first launch of lane whose end is at or after us. */
static guint
first_ending_after (FbTimelineView *self,
                    GArray         *lane,
                    double          us)
{
  guint lo = 0, hi = lane->len;

  /* Launches of one lane do not overlap, so their ends are sorted like their starts. */
  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;

      if (span (self, g_array_index (lane, guint, mid))->end_us < us)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

int
fb_timeline_view_span_at (FbTimelineView *self,
                          double          x,
                          double          y)
{
  double us, slack;
  guint lane, k;
  int best = -1;
  double best_distance = G_MAXDOUBLE;

  g_return_val_if_fail (FB_IS_TIMELINE_VIEW (self), -1);

  if (self->profile == NULL || y < AXIS_HEIGHT || x < LABEL_WIDTH)
    return -1;
  lane = (guint) ((y - AXIS_HEIGHT) / (LANE_HEIGHT + LANE_GAP));
  if (lane >= self->n_lanes || y - AXIS_HEIGHT - lane * (LANE_HEIGHT + LANE_GAP) > LANE_HEIGHT)
    return -1;
  us = us_of (self, x);
  /* A launch narrower than a pixel is still hit within two pixels of it. */
  slack = 2 * (self->end_us - self->start_us) / plot_width (self);
  for (k = first_ending_after (self, self->lanes[lane], us - slack); k < self->lanes[lane]->len; k++)
    {
      guint index = g_array_index (self->lanes[lane], guint, k);
      const FbProfileSpan *s = span (self, index);
      double distance;

      if (s->start_us > us + slack)
        break;
      distance = us < s->start_us ? s->start_us - us : us > s->end_us ? us - s->end_us : 0;
      if (distance < best_distance)
        {
          best_distance = distance;
          best = index;
        }
    }
  return best;
}

gboolean
fb_timeline_view_get_span_rect (FbTimelineView  *self,
                                guint            index,
                                graphene_rect_t *rect)
{
  const FbProfileSpan *s;
  double x0, x1, y;

  g_return_val_if_fail (FB_IS_TIMELINE_VIEW (self), FALSE);
  g_return_val_if_fail (rect != NULL, FALSE);

  if (self->profile == NULL || index >= self->profile->timeline->len)
    return FALSE;
  s = span (self, index);
  x0 = MAX (x_of (self, s->start_us), LABEL_WIDTH);
  x1 = MIN (x_of (self, s->end_us), gtk_widget_get_width (GTK_WIDGET (self)));
  if (x1 < LABEL_WIDTH || x0 > gtk_widget_get_width (GTK_WIDGET (self)))
    return FALSE;
  y = AXIS_HEIGHT + MIN (s->lane, 255u) * (LANE_HEIGHT + LANE_GAP);
  graphene_rect_init (rect, x0, y, MAX (x1 - x0, 1), LANE_HEIGHT);
  return TRUE;
}

gboolean
fb_timeline_view_click (FbTimelineView *self,
                        double          x,
                        double          y)
{
  int index;

  g_return_val_if_fail (FB_IS_TIMELINE_VIEW (self), FALSE);

  if ((index = fb_timeline_view_span_at (self, x, y)) < 0)
    return FALSE;
  fb_timeline_view_set_selected_kernel (self, span (self, index)->kernel);
  g_signal_emit (self, signals[KERNEL_ACTIVATED], 0, span (self, index)->kernel);
  return TRUE;
}

void
fb_timeline_view_set_selected_kernel (FbTimelineView *self,
                                      guint           kernel)
{
  g_return_if_fail (FB_IS_TIMELINE_VIEW (self));

  if (self->selected == kernel)
    return;
  self->selected = kernel;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

char *
fb_timeline_view_describe_span (FbTimelineView *self,
                                guint           index)
{
  const FbProfileSpan *s;
  const FbProfileKernel *kernel;
  g_autofree char *duration = NULL;
  g_autofree char *start = NULL;
  GString *text;

  g_return_val_if_fail (FB_IS_TIMELINE_VIEW (self), NULL);
  g_return_val_if_fail (self->profile != NULL && index < self->profile->timeline->len, NULL);

  s = span (self, index);
  kernel = fb_profile_find_kernel (self->profile, s->kernel);
  duration = fb_format_time_us (s->end_us - s->start_us);
  start = fb_format_time_us (s->start_us);
  text = g_string_new (NULL);
  g_string_append_printf (text, "%s — %s, from %s, lane %u", kernel != NULL ? kernel->name : "?",
                          duration, start, s->lane);
  if (kernel != NULL)
    {
      g_string_append_printf (text, "\n%s kernel, %u call%s per inference",
                              fb_profile_kernel_kind_text (kernel->kind), kernel->calls,
                              kernel->calls == 1 ? "" : "s");
      for (guint i = 0; i < kernel->nodes->len && i < 6; i++)
        g_string_append_printf (text, "%s%s", i == 0 ? "\nNodes: " : ", ",
                                (const char *) g_ptr_array_index (kernel->nodes, i));
      if (kernel->nodes->len > 6)
        g_string_append_printf (text, " and %u more", kernel->nodes->len - 6);
    }
  return g_string_free (text, FALSE);
}

guint
fb_timeline_view_get_n_drawn (FbTimelineView *self)
{
  g_return_val_if_fail (FB_IS_TIMELINE_VIEW (self), 0);
  return self->n_drawn;
}

static void
kind_color (FbProfileKernelKind kind,
            gboolean            dark,
            GdkRGBA            *color)
{
  /* The GNOME palette: generated code blue, library calls purple, host work grey, copies orange. */
  static const GdkRGBA light[] = {
    { 0.21, 0.52, 0.89, 1 }, { 0.57, 0.25, 0.67, 1 }, { 0.47, 0.46, 0.48, 1 }, { 0.90, 0.38, 0.00, 1 },
  };
  static const GdkRGBA night[] = {
    { 0.38, 0.63, 0.92, 1 }, { 0.75, 0.38, 0.80, 1 }, { 0.60, 0.59, 0.63, 1 }, { 1.00, 0.64, 0.28, 1 },
  };

  *color = (dark ? night : light)[(guint) kind < G_N_ELEMENTS (light) ? kind : 0];
}

static void
draw_axis (FbTimelineView *self,
           cairo_t        *cr,
           PangoLayout    *layout,
           double          width,
           const GdkRGBA  *fg)
{
  double range = self->end_us - self->start_us, base = pow (10, floor (log10 (range / 40))), step = base;
  double first;

  /* Ticks at 1, 2 or 5 times a power of ten, at least 90 px apart: room for their labels. */
  for (guint i = 0; i < 12 && step / range * plot_width (self) < 90; i++)
    step = base * (i % 3 == 0 ? 2 : i % 3 == 1 ? 5 : 10) * pow (10, i / 3);
  first = ceil (self->start_us / step) * step;
  cairo_set_line_width (cr, 1);
  for (double t = first; t <= self->end_us; t += step)
    {
      double x = round (x_of (self, t)) + 0.5;
      g_autofree char *text = fb_format_time_us (t);

      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.12);
      cairo_move_to (cr, x, AXIS_HEIGHT - 4);
      cairo_line_to (cr, x, gtk_widget_get_height (GTK_WIDGET (self)));
      cairo_stroke (cr);
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.7);
      pango_layout_set_text (layout, text, -1);
      cairo_move_to (cr, x + 3, 3);
      pango_cairo_show_layout (cr, layout);
    }
}

/* One lane: visible launches, those narrower than a pixel merged with their neighbours into one
 * rectangle, one path per kind filled at once. */
static void
draw_lane (FbTimelineView *self,
           cairo_t        *cr,
           PangoLayout    *layout,
           guint           lane,
           double          width,
           gboolean        dark,
           const GdkRGBA  *fg)
{
  GArray *spans = self->lanes[lane];
  double y = AXIS_HEIGHT + lane * (LANE_HEIGHT + LANE_GAP);
  double px = (self->end_us - self->start_us) / plot_width (self);
  double run_x0 = 0, run_x1 = -1;
  int run_kind = -1;
  GArray *labels = g_array_new (FALSE, FALSE, sizeof (guint));
  guint k;

  for (k = first_ending_after (self, spans, self->start_us); k <= spans->len; k++)
    {
      guint index = k < spans->len ? g_array_index (spans, guint, k) : 0;
      const FbProfileSpan *s = k < spans->len ? span (self, index) : NULL;
      const FbProfileKernel *kernel;
      double x0, x1;
      int kind;

      if (s != NULL && s->start_us > self->end_us + px)
        s = NULL;
      if (s == NULL)
        {
          if (run_kind >= 0)
            {
              GdkRGBA color;

              kind_color (run_kind, dark, &color);
              gdk_cairo_set_source_rgba (cr, &color);
              cairo_rectangle (cr, run_x0, y + 2, MAX (run_x1 - run_x0, 1), LANE_HEIGHT - 4);
              cairo_fill (cr);
              self->n_drawn++;
            }
          break;
        }
      kernel = fb_profile_find_kernel (self->profile, s->kernel);
      kind = kernel != NULL ? (int) kernel->kind : 0;
      x0 = MAX (x_of (self, s->start_us), LABEL_WIDTH - 1);
      x1 = MIN (x_of (self, s->end_us), width + 1);
      /* Touching the run so far (within a pixel), of the same kind, and the run still thin:
       * one rectangle for all. */
      if (run_kind == kind && x0 <= run_x1 + 1 && (x1 - x0 < 1 || run_x1 - run_x0 < 1))
        {
          run_x1 = MAX (run_x1, x1);
          continue;
        }
      if (run_kind >= 0)
        {
          GdkRGBA color;

          kind_color (run_kind, dark, &color);
          gdk_cairo_set_source_rgba (cr, &color);
          cairo_rectangle (cr, run_x0, y + 2, MAX (run_x1 - run_x0, 1), LANE_HEIGHT - 4);
          cairo_fill (cr);
          self->n_drawn++;
        }
      run_kind = kind;
      run_x0 = x0;
      run_x1 = x1;
      if (x1 - x0 > 48 || (kernel != NULL && kernel->id == self->selected) || (int) index == self->hover)
        g_array_append_val (labels, index);
    }

  /* Outlines and names on top of the bars that are wide enough, the selection and the hover. */
  for (guint i = 0; i < labels->len; i++)
    {
      guint index = g_array_index (labels, guint, i);
      const FbProfileSpan *s = span (self, index);
      const FbProfileKernel *kernel = fb_profile_find_kernel (self->profile, s->kernel);
      double x0 = MAX (x_of (self, s->start_us), LABEL_WIDTH), x1 = MIN (x_of (self, s->end_us), width);

      if (kernel != NULL && (kernel->id == self->selected || (int) index == self->hover))
        {
          cairo_set_line_width (cr, 2);
          cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, kernel->id == self->selected ? 1 : 0.6);
          cairo_rectangle (cr, x0 - 1, y + 1, MAX (x1 - x0, 1) + 2, LANE_HEIGHT - 2);
          cairo_stroke (cr);
        }
      if (kernel != NULL && x1 - x0 > 48)
        {
          cairo_save (cr);
          cairo_rectangle (cr, x0, y, x1 - x0, LANE_HEIGHT);
          cairo_clip (cr);
          pango_layout_set_text (layout, kernel->name, -1);
          pango_layout_set_width (layout, (int) ((x1 - x0 - 6) * PANGO_SCALE));
          cairo_set_source_rgb (cr, 1, 1, 1);
          cairo_move_to (cr, x0 + 3, y + 4);
          pango_cairo_show_layout (cr, layout);
          pango_layout_set_width (layout, -1);
          cairo_restore (cr);
        }
    }
  g_array_unref (labels);
}

static void
fb_timeline_view_snapshot (GtkWidget   *widget,
                           GtkSnapshot *snapshot)
{
  FbTimelineView *self = FB_TIMELINE_VIEW (widget);
  double width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  gboolean dark = adw_style_manager_get_dark (adw_style_manager_get_default ());
  GdkRGBA fg;
  g_autoptr(PangoLayout) layout = NULL;
  cairo_t *cr;

  self->n_drawn = 0;
  if (self->profile == NULL || width <= LABEL_WIDTH || height <= 0)
    return;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  layout = gtk_widget_create_pango_layout (widget, NULL);
  {
    PangoFontDescription *font = pango_font_description_copy (pango_context_get_font_description (pango_layout_get_context (layout)));

    pango_font_description_set_absolute_size (font, 10 * PANGO_SCALE);
    pango_layout_set_font_description (layout, font);
    pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
    pango_font_description_free (font);
  }

  /* Lanes: a faint band each, so that what is not covered by a bar reads as idle. */
  for (guint lane = 0; lane < self->n_lanes; lane++)
    {
      double y = AXIS_HEIGHT + lane * (LANE_HEIGHT + LANE_GAP);
      g_autofree char *name = g_strdup_printf ("%s %u", fb_profile_lane_word (self->profile), lane);

      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.05);
      cairo_rectangle (cr, LABEL_WIDTH, y, width - LABEL_WIDTH, LANE_HEIGHT);
      cairo_fill (cr);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.7);
      pango_layout_set_text (layout, name, -1);
      cairo_move_to (cr, 6, y + 4);
      pango_cairo_show_layout (cr, layout);
    }
  draw_axis (self, cr, layout, width, &fg);
  cairo_save (cr);
  cairo_rectangle (cr, LABEL_WIDTH, 0, width - LABEL_WIDTH, height);
  cairo_clip (cr);
  for (guint lane = 0; lane < self->n_lanes; lane++)
    draw_lane (self, cr, layout, lane, width, dark, &fg);
  cairo_restore (cr);
  cairo_destroy (cr);
}

static void
fb_timeline_view_measure (GtkWidget      *widget,
                          GtkOrientation  orientation,
                          int             for_size,
                          int            *minimum,
                          int            *natural,
                          int            *minimum_baseline,
                          int            *natural_baseline)
{
  FbTimelineView *self = FB_TIMELINE_VIEW (widget);

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = LABEL_WIDTH + 100;
      *natural = LABEL_WIDTH + 600;
    }
  else
    *minimum = *natural = AXIS_HEIGHT + MAX (self->n_lanes, 1) * (LANE_HEIGHT + LANE_GAP) + 4;
}

static gboolean
on_scroll (GtkEventControllerScroll *controller,
           double                    dx,
           double                    dy,
           FbTimelineView           *self)
{
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  double x = self->pointer_x, range = self->end_us - self->start_us;

  /* Shift or a horizontal wheel pans; the vertical wheel zooms at the pointer, as in every
   * trace viewer. */
  if ((state & GDK_SHIFT_MASK) || dx != 0)
    fb_timeline_view_set_range (self, self->start_us + (dx + ((state & GDK_SHIFT_MASK) ? dy : 0)) * range * 0.1,
                                self->end_us + (dx + ((state & GDK_SHIFT_MASK) ? dy : 0)) * range * 0.1);
  else
    fb_timeline_view_zoom_at (self, pow (1.25, -dy), x);
  return TRUE;
}

static void
on_drag_begin (GtkGestureDrag *gesture,
               double          x,
               double          y,
               FbTimelineView *self)
{
  self->drag_start_us = self->start_us;
  self->dragged = FALSE;
}

static void
on_drag_update (GtkGestureDrag *gesture,
                double          dx,
                double          dy,
                FbTimelineView *self)
{
  double range = self->end_us - self->start_us;
  double start = self->drag_start_us - dx / plot_width (self) * range;

  if (hypot (dx, dy) > 3)
    self->dragged = TRUE;
  if (!self->dragged)
    return;
  fb_timeline_view_set_range (self, start, start + range);
}

static void
on_zoom_scale (GtkGestureZoom *gesture,
               double          scale,
               FbTimelineView *self)
{
  double x, y;

  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &x, &y))
    x = gtk_widget_get_width (GTK_WIDGET (self)) / 2;
  if (scale > 0 && self->zoom_last > 0)
    fb_timeline_view_zoom_at (self, scale / self->zoom_last, x);
  self->zoom_last = scale;
}

static void
on_zoom_begin (GtkGesture       *gesture,
               GdkEventSequence *sequence,
               FbTimelineView   *self)
{
  self->zoom_last = 1;
}

static void
on_released (GtkGestureClick *gesture,
             int              n_press,
             double           x,
             double           y,
             FbTimelineView  *self)
{
  if (!self->dragged)
    fb_timeline_view_click (self, x, y);
  self->dragged = FALSE;
}

static void
on_motion (GtkEventControllerMotion *controller,
           double                    x,
           double                    y,
           FbTimelineView           *self)
{
  int hover = fb_timeline_view_span_at (self, x, y);

  self->pointer_x = x;
  if (hover != self->hover)
    {
      self->hover = hover;
      gtk_widget_trigger_tooltip_query (GTK_WIDGET (self));
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
on_leave (GtkEventControllerMotion *controller,
          FbTimelineView           *self)
{
  if (self->hover >= 0)
    {
      self->hover = -1;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static gboolean
on_query_tooltip (GtkWidget      *widget,
                  int             x,
                  int             y,
                  gboolean        keyboard,
                  GtkTooltip     *tooltip,
                  FbTimelineView *self)
{
  int index = fb_timeline_view_span_at (self, x, y);
  g_autofree char *text = NULL;

  if (index < 0)
    return FALSE;
  text = fb_timeline_view_describe_span (self, index);
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
fb_timeline_view_dispose (GObject *object)
{
  FbTimelineView *self = FB_TIMELINE_VIEW (object);

  clear_lanes (self);
  g_clear_pointer (&self->profile, fb_profile_unref);
  G_OBJECT_CLASS (fb_timeline_view_parent_class)->dispose (object);
}

static void
fb_timeline_view_class_init (FbTimelineViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fb_timeline_view_dispose;
  widget_class->snapshot = fb_timeline_view_snapshot;
  widget_class->measure = fb_timeline_view_measure;

  /* The kernel (FbProfileKernel.id) of a launch the user clicked. */
  signals[KERNEL_ACTIVATED] =
    g_signal_new ("kernel-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  gtk_widget_class_set_css_name (widget_class, "fbtimeline");
}

static void
fb_timeline_view_init (FbTimelineView *self)
{
  GtkEventController *scroll, *motion;
  GtkGesture *drag, *click, *zoom;

  self->selected = G_MAXUINT;
  self->hover = -1;
  self->end_us = 1;
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (on_query_tooltip), self);

  scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);

  drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));

  /* A click is a press and release that did not drag. */
  click = gtk_gesture_click_new ();
  g_signal_connect (click, "released", G_CALLBACK (on_released), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));

  zoom = gtk_gesture_zoom_new ();
  g_signal_connect (zoom, "begin", G_CALLBACK (on_zoom_begin), self);
  g_signal_connect (zoom, "scale-changed", G_CALLBACK (on_zoom_scale), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (zoom));

  motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
}
