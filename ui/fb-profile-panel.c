/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-kernel-row.h"
#include "fb-kernel-table-private.h"
#include "fb-profile-changes.h"
#include "fb-profile-format.h"
#include "fb-profile-panel.h"

#include <math.h>

#define MAX_CHANGES 8

struct _FbProfilePanel {
  GtkWidget           parent_instance;

  GtkWidget          *box;
  GtkToggleButton    *expander;
  GtkLabel           *title;
  GtkLabel           *summary;
  GtkLabel           *note;
  GtkDropDown        *metric_dropdown;
  GtkRevealer        *revealer;
  GtkStack           *stack;
  GtkWidget          *switcher;
  FbTimelineView     *timeline;
  FbRooflineView     *roofline;
  GtkColumnView      *table;
  GtkColumnViewColumn *time_column;
  GListStore         *rows;
  GtkSortListModel   *sorted;     /* rows, in the order the column headers ask for (the
                                     selection holds it) */
  GtkSingleSelection *selection;
  GtkBox             *diagnosis;
  GtkBox             *changes_box;
  GtkStackPage       *changes_page;

  FbProfile          *profile;
  FbProfile          *previous;
  FbModel            *model;      /* the original nodes' operators, for the A/B lists */
  GHashTable         *ops;        /* original node name -> op type, made when first needed */
  GArray             *gains;      /* FbProfileChange, most gained first */
  GArray             *losses;     /* FbProfileChange, most lost first */
  FbProfileMetric     metric;
  gboolean            syncing;    /* selection set from outside: no signal */
};

G_DEFINE_FINAL_TYPE (FbProfilePanel, fb_profile_panel, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_METRIC,
  PROP_EXPANDED,
  N_PROPS
};

enum {
  KERNEL_ACTIVATED,
  NODE_ACTIVATED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

GtkWidget *
fb_profile_panel_new (void)
{
  return g_object_new (FB_TYPE_PROFILE_PANEL, NULL);
}

static void
on_row_selected (FbProfilePanel *self)
{
  FbKernelRow *row = gtk_single_selection_get_selected_item (self->selection);

  if (self->syncing || row == NULL)
    return;
  g_signal_emit (self, signals[KERNEL_ACTIVATED], 0, fb_kernel_row_get_kernel (row)->id);
}

static void
on_view_kernel (GtkWidget      *view,
                guint           kernel,
                FbProfilePanel *self)
{
  g_signal_emit (self, signals[KERNEL_ACTIVATED], 0, kernel);
}

static void
clear_box (GtkBox *box)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (box))) != NULL)
    gtk_box_remove (box, child);
}

static GtkWidget *
text_line (const char *text,
           const char *css_class)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  if (css_class != NULL)
    gtk_widget_add_css_class (label, css_class);
  return label;
}

static void
fill_diagnosis (FbProfilePanel *self)
{
  FbProfile *p = self->profile;
  g_autofree char *gflops = fb_format_gflops (p->device.peak_gflops);
  g_autofree char *gbps = fb_format_gbps (p->device.peak_gbps);
  g_autofree char *device = NULL;
  g_autofree char *timing = NULL;
  g_autofree char *dram = NULL;

  clear_box (self->diagnosis);
  gtk_box_append (self->diagnosis, text_line ("Diagnosis", "heading"));
  if (p->diagnosis->len == 0)
    gtk_box_append (self->diagnosis, text_line ("The profile has no diagnosis.", "dim-label"));
  for (guint i = 0; i < p->diagnosis->len; i++)
    {
      g_autofree char *line = g_strdup_printf ("• %s", (const char *) g_ptr_array_index (p->diagnosis, i));

      gtk_box_append (self->diagnosis, text_line (line, NULL));
    }
  device = g_strdup_printf ("%s: peak %s, memory %s (%s ceilings)", p->device.name != NULL ? p->device.name : "?",
                            gflops, gbps, p->device.ceilings_measured ? "measured" : "datasheet");
  gtk_box_append (self->diagnosis, text_line ("Device", "heading"));
  gtk_box_append (self->diagnosis, text_line (device, NULL));
  timing = fb_profile_timing_describe (p);
  if (timing != NULL)
    gtk_box_append (self->diagnosis, text_line (timing, NULL));
  dram = fb_profile_dram_describe (p);
  if (dram != NULL)
    gtk_box_append (self->diagnosis, text_line (dram, NULL));
  if (p->counters_note != NULL)
    gtk_box_append (self->diagnosis, text_line (p->counters_note, "dim-label"));
  if (p->folded->len > 0)
    {
      g_autofree char *title = g_strdup_printf ("Folded at compile time (%u original nodes, no kernel runs them)",
                                                p->folded->len);

      gtk_box_append (self->diagnosis, text_line (title, "heading"));
      for (guint i = 0; i < p->folded->len; i++)
        {
          const FbProfileFolded *f = &g_array_index (p->folded, FbProfileFolded, i);
          g_autofree char *line = g_strdup_printf ("%s — by %s", f->node, f->by);

          gtk_box_append (self->diagnosis, text_line (line, "dim-label"));
        }
    }
}

static void
on_change_activated (GtkListBox     *list,
                     GtkListBoxRow  *row,
                     FbProfilePanel *self)
{
  const char *name = g_object_get_data (G_OBJECT (row), "fb-node");

  if (name != NULL)
    g_signal_emit (self, signals[NODE_ACTIVATED], 0, name);
}

/* The operator of the original node called name, or NULL when the model is not known. */
static const char *
original_op (FbProfilePanel *self,
             const char     *name)
{
  if (self->model == NULL)
    return NULL;
  if (self->ops == NULL)
    {
      self->ops = g_hash_table_new (g_str_hash, g_str_equal);
      for (guint i = 0; i < self->model->orig_nodes->len; i++)
        {
          const FbOrigNode *o = &g_array_index (self->model->orig_nodes, FbOrigNode, i);

          if (o->name != NULL && o->op_type != NULL)
            g_hash_table_insert (self->ops, (gpointer) o->name, (gpointer) o->op_type);
        }
    }
  return g_hash_table_lookup (self->ops, name);
}

static GtkWidget *
change_list (FbProfilePanel *self,
             GArray         *changes)
{
  GtkWidget *list = gtk_list_box_new ();

  gtk_widget_add_css_class (list, "boxed-list");
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (list), GTK_SELECTION_NONE);
  g_signal_connect (list, "row-activated", G_CALLBACK (on_change_activated), self);
  for (guint i = 0; i < changes->len; i++)
    {
      const FbProfileChange *c = &g_array_index (changes, FbProfileChange, i);
      g_autofree char *delta = fb_format_delta_us (c->delta_us);
      g_autofree char *before = fb_format_time_us (c->before_us);
      g_autofree char *now = fb_format_time_us (c->now_us);
      const char *op = original_op (self, c->name);
      /* The operator first: "Conv · n138" says what the node is where its name does not. */
      g_autofree char *text = op != NULL ? g_strdup_printf ("%s · %s   %s   (%s → %s)", op, c->name, delta, before, now)
                                         : g_strdup_printf ("%s   %s   (%s → %s)", c->name, delta, before, now);
      GtkWidget *row = gtk_list_box_row_new ();
      GtkWidget *label = text_line (text, "numeric");

      gtk_widget_set_margin_start (label, 8);
      gtk_widget_set_margin_end (label, 8);
      gtk_widget_set_margin_top (label, 3);
      gtk_widget_set_margin_bottom (label, 3);
      gtk_label_set_selectable (GTK_LABEL (label), FALSE);
      gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), label);
      g_object_set_data_full (G_OBJECT (row), "fb-node", g_strdup (c->name), g_free);
      gtk_list_box_append (GTK_LIST_BOX (list), row);
    }
  return list;
}

static void
fill_changes (FbProfilePanel *self)
{
  g_autofree char *total_before = fb_format_time_us (fb_profile_total_us (self->previous));
  g_autofree char *total_now = fb_format_time_us (fb_profile_total_us (self->profile));
  g_autofree char *headline = NULL;
  double wall_before = self->previous->wall_median_ms, wall_now = self->profile->wall_median_ms;

  g_array_unref (self->gains);
  g_array_unref (self->losses);
  self->gains = fb_profile_changes (self->profile, self->previous, TRUE, MAX_CHANGES);
  self->losses = fb_profile_changes (self->profile, self->previous, FALSE, MAX_CHANGES);

  clear_box (self->changes_box);
  headline = g_strdup_printf ("Kernel time %s → %s; whole inference %.3f ms → %.3f ms (%+.1f %%)",
                              total_before, total_now, wall_before, wall_now,
                              wall_before > 0 ? 100 * (wall_now - wall_before) / wall_before : 0.0);
  gtk_box_append (self->changes_box, text_line (headline, "heading"));
  gtk_box_append (self->changes_box, text_line ("Biggest gains (faster than before)", "heading"));
  if (self->gains->len == 0)
    gtk_box_append (self->changes_box, text_line ("No node got faster.", "dim-label"));
  else
    gtk_box_append (self->changes_box, change_list (self, self->gains));
  gtk_box_append (self->changes_box, text_line ("Biggest losses (slower than before)", "heading"));
  if (self->losses->len == 0)
    gtk_box_append (self->changes_box, text_line ("No node got slower.", "dim-label"));
  else
    gtk_box_append (self->changes_box, change_list (self, self->losses));
}

void
fb_profile_panel_set_model (FbProfilePanel *self,
                            FbModel        *model)
{
  g_return_if_fail (FB_IS_PROFILE_PANEL (self));

  if (model == self->model)
    return;
  g_clear_pointer (&self->ops, g_hash_table_unref);
  g_clear_pointer (&self->model, fb_model_unref);
  if (model != NULL)
    self->model = fb_model_ref (model);
}

void
fb_profile_panel_set_profile (FbProfilePanel *self,
                              FbProfile      *profile,
                              FbProfile      *previous)
{
  g_return_if_fail (FB_IS_PROFILE_PANEL (self));

  if (profile != NULL)
    fb_profile_ref (profile);
  if (previous != NULL)
    fb_profile_ref (previous);
  g_clear_pointer (&self->profile, fb_profile_unref);
  g_clear_pointer (&self->previous, fb_profile_unref);
  self->profile = profile;
  self->previous = profile != NULL ? previous : NULL;
  if (profile == NULL && previous != NULL)
    fb_profile_unref (previous);

  self->syncing = TRUE;
  /* Time descending, from the top, whatever the table was left at by the profile before. The
   * old rows leave with their store in one change, and the sort is set while nothing is left
   * to re-sort. */
  gtk_sort_list_model_set_model (self->sorted, NULL);
  g_clear_object (&self->rows);
  gtk_column_view_sort_by_column (self->table, self->time_column, GTK_SORT_DESCENDING);
  fb_timeline_view_set_profile (self->timeline, profile);
  fb_roofline_view_set_profile (self->roofline, profile);
  g_array_set_size (self->gains, 0);
  g_array_set_size (self->losses, 0);
  if (profile != NULL)
    {
      g_autofree char *title = g_strdup_printf ("%s on %s", profile->model != NULL ? profile->model : "?",
                                                profile->target != NULL ? profile->target : "?");
      g_autofree char *busy = fb_format_time_us (profile->busy_ms * 1000);
      g_autofree char *summary = g_strdup_printf ("%s · %.3f ms per inference (median of %u; %.3f–%.3f) · "
                                                  "kernels busy %s · %u kernels",
                                                  profile->device.name != NULL ? profile->device.name : "",
                                                  profile->wall_median_ms, profile->iterations,
                                                  profile->wall_min_ms, profile->wall_max_ms, busy,
                                                  profile->kernels->len);
      g_autofree char *timing = fb_profile_timing_describe (profile);
      /* The tracer's own cost beside the wall it did not touch: the header's one line says
       * both medians, the tooltip and the diagnosis page the whole timing line. */
      if (timing != NULL)
        {
          g_autofree char *with = g_strdup_printf ("%s · untraced; traced %.3f ms (%+.0f %%)", summary,
                                                   profile->timing.traced_median_ms,
                                                   100 * fb_profile_timing_overhead (profile));
          g_free (summary);
          summary = g_steal_pointer (&with);
        }

      g_autoptr(GPtrArray) rows = g_ptr_array_new_full (profile->kernels->len, g_object_unref);
      double total_us = fb_profile_total_us (profile);

      for (guint i = 0; i < profile->kernels->len; i++)
        g_ptr_array_add (rows, fb_kernel_row_new (profile, g_ptr_array_index (profile->kernels, i), total_us));
      /* Already in the table's order, where the sorted model's merge sort only checks that
       * they are (one comparison a row, where sorting 10,000 through the sorter took 90 ms of
       * the UI thread), and all in one splice: the table hears of one change. An append per
       * row moved and re-sorted the list for every kernel, minutes for 10,000. */
      _fb_kernel_table_sort_rows (rows);
      self->rows = g_list_store_new (FB_TYPE_KERNEL_ROW);
      g_list_store_splice (self->rows, 0, 0, rows->pdata, rows->len);
      gtk_sort_list_model_set_model (self->sorted, G_LIST_MODEL (self->rows));
      gtk_single_selection_set_selected (self->selection, GTK_INVALID_LIST_POSITION);
      gtk_label_set_label (self->title, title);
      gtk_label_set_label (self->summary, summary);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->summary), timing);
      fill_diagnosis (self);
      if (self->previous != NULL)
        fill_changes (self);
    }
  gtk_stack_page_set_visible (self->changes_page, self->previous != NULL);
  if (self->previous != NULL)
    gtk_stack_set_visible_child_name (self->stack, "changes");
  self->syncing = FALSE;
}

const char *
fb_profile_panel_get_summary (FbProfilePanel *self)
{
  g_return_val_if_fail (FB_IS_PROFILE_PANEL (self), NULL);
  return gtk_label_get_label (self->summary);
}

FbProfile *
fb_profile_panel_get_profile (FbProfilePanel *self)
{
  g_return_val_if_fail (FB_IS_PROFILE_PANEL (self), NULL);
  return self->profile;
}

void
fb_profile_panel_set_note (FbProfilePanel *self,
                           const char     *note)
{
  g_return_if_fail (FB_IS_PROFILE_PANEL (self));

  gtk_label_set_label (self->note, note != NULL ? note : "");
  gtk_widget_set_visible (GTK_WIDGET (self->note), note != NULL);
}

const char *
fb_profile_panel_get_note (FbProfilePanel *self)
{
  g_return_val_if_fail (FB_IS_PROFILE_PANEL (self), NULL);

  if (!gtk_widget_get_visible (GTK_WIDGET (self->note)))
    return NULL;
  return gtk_label_get_label (self->note);
}

void
fb_profile_panel_set_metric (FbProfilePanel  *self,
                             FbProfileMetric  metric)
{
  g_return_if_fail (FB_IS_PROFILE_PANEL (self));
  g_return_if_fail ((guint) metric < FB_PROFILE_N_METRICS);

  if (metric == self->metric)
    return;
  self->metric = metric;
  gtk_drop_down_set_selected (self->metric_dropdown, metric);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_METRIC]);
}

FbProfileMetric
fb_profile_panel_get_metric (FbProfilePanel *self)
{
  g_return_val_if_fail (FB_IS_PROFILE_PANEL (self), FB_PROFILE_METRIC_SHARE);
  return self->metric;
}

void
fb_profile_panel_set_expanded (FbProfilePanel *self,
                               gboolean        expanded)
{
  g_return_if_fail (FB_IS_PROFILE_PANEL (self));
  gtk_toggle_button_set_active (self->expander, expanded);
}

gboolean
fb_profile_panel_get_expanded (FbProfilePanel *self)
{
  g_return_val_if_fail (FB_IS_PROFILE_PANEL (self), FALSE);
  return gtk_toggle_button_get_active (self->expander);
}

void
fb_profile_panel_select_kernel (FbProfilePanel *self,
                                guint           kernel)
{
  guint n;

  g_return_if_fail (FB_IS_PROFILE_PANEL (self));

  self->syncing = TRUE;
  fb_timeline_view_set_selected_kernel (self->timeline, kernel);
  fb_roofline_view_set_selected_kernel (self->roofline, kernel);
  n = g_list_model_get_n_items (G_LIST_MODEL (self->selection));
  gtk_single_selection_set_selected (self->selection, GTK_INVALID_LIST_POSITION);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(FbKernelRow) row = g_list_model_get_item (G_LIST_MODEL (self->selection), i);

      if (fb_kernel_row_get_kernel (row)->id == kernel)
        {
          gtk_single_selection_set_selected (self->selection, i);
          break;
        }
    }
  self->syncing = FALSE;
}

void
fb_profile_panel_set_page (FbProfilePanel *self,
                           const char     *page)
{
  g_return_if_fail (FB_IS_PROFILE_PANEL (self));
  gtk_stack_set_visible_child_name (self->stack, page);
}

FbTimelineView *
fb_profile_panel_get_timeline (FbProfilePanel *self)
{
  g_return_val_if_fail (FB_IS_PROFILE_PANEL (self), NULL);
  return self->timeline;
}

FbRooflineView *
fb_profile_panel_get_roofline (FbProfilePanel *self)
{
  g_return_val_if_fail (FB_IS_PROFILE_PANEL (self), NULL);
  return self->roofline;
}

GtkColumnView *
fb_profile_panel_get_kernel_table (FbProfilePanel *self)
{
  g_return_val_if_fail (FB_IS_PROFILE_PANEL (self), NULL);
  return self->table;
}

guint
fb_profile_panel_get_n_gains (FbProfilePanel *self)
{
  g_return_val_if_fail (FB_IS_PROFILE_PANEL (self), 0);
  return self->gains->len;
}

guint
fb_profile_panel_get_n_losses (FbProfilePanel *self)
{
  g_return_val_if_fail (FB_IS_PROFILE_PANEL (self), 0);
  return self->losses->len;
}

const char *
fb_profile_panel_get_change (FbProfilePanel *self,
                             gboolean        gain,
                             guint           index,
                             double         *delta_us)
{
  GArray *changes;

  g_return_val_if_fail (FB_IS_PROFILE_PANEL (self), NULL);

  changes = gain ? self->gains : self->losses;
  g_return_val_if_fail (index < changes->len, NULL);
  if (delta_us != NULL)
    *delta_us = g_array_index (changes, FbProfileChange, index).delta_us;
  return g_array_index (changes, FbProfileChange, index).name;
}

static void
on_metric_selected (FbProfilePanel *self)
{
  guint selected = gtk_drop_down_get_selected (self->metric_dropdown);

  if (selected < FB_PROFILE_N_METRICS)
    fb_profile_panel_set_metric (self, selected);
}

static void
on_expanded (FbProfilePanel *self)
{
  gboolean expanded = gtk_toggle_button_get_active (self->expander);

  gtk_revealer_set_reveal_child (self->revealer, expanded);
  gtk_widget_set_visible (self->switcher, expanded);
  gtk_button_set_icon_name (GTK_BUTTON (self->expander), expanded ? "pan-down-symbolic" : "pan-end-symbolic");
  /* Collapsed, the panel is its header alone: the graphs get the room back. */
  gtk_widget_set_vexpand (GTK_WIDGET (self), expanded);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EXPANDED]);
}

static GtkWidget *
scrolled (GtkWidget *child,
          gboolean   horizontal)
{
  GtkWidget *scroller = gtk_scrolled_window_new ();

  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller),
                                  horizontal ? GTK_POLICY_AUTOMATIC : GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), child);
  gtk_widget_set_vexpand (scroller, TRUE);
  return scroller;
}

static GtkWidget *
padded_box (void)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);

  gtk_widget_set_margin_start (box, 12);
  gtk_widget_set_margin_end (box, 12);
  gtk_widget_set_margin_top (box, 8);
  gtk_widget_set_margin_bottom (box, 8);
  return box;
}

static void
build_table (FbProfilePanel *self)
{
  GtkSortListModel *sorted;

  self->table = _fb_kernel_table_new (&sorted, &self->time_column);
  self->sorted = sorted;
  self->selection = gtk_single_selection_new (G_LIST_MODEL (sorted));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  g_signal_connect_swapped (self->selection, "notify::selected", G_CALLBACK (on_row_selected), self);
  gtk_column_view_set_model (self->table, GTK_SELECTION_MODEL (self->selection));
  /* Top kernels first. */
  gtk_column_view_sort_by_column (self->table, self->time_column, GTK_SORT_DESCENDING);
}

static void
fb_profile_panel_dispose (GObject *object)
{
  FbProfilePanel *self = FB_PROFILE_PANEL (object);

  /* Tearing down the table changes its selection: that is no user's pick. */
  self->syncing = TRUE;
  if (self->selection != NULL)
    g_signal_handlers_disconnect_by_data (self->selection, self);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  g_clear_object (&self->rows);
  g_clear_object (&self->selection);
  g_clear_pointer (&self->profile, fb_profile_unref);
  g_clear_pointer (&self->previous, fb_profile_unref);
  g_clear_pointer (&self->ops, g_hash_table_unref);
  g_clear_pointer (&self->model, fb_model_unref);
  G_OBJECT_CLASS (fb_profile_panel_parent_class)->dispose (object);
}

static void
fb_profile_panel_finalize (GObject *object)
{
  FbProfilePanel *self = FB_PROFILE_PANEL (object);

  g_array_unref (self->gains);
  g_array_unref (self->losses);
  G_OBJECT_CLASS (fb_profile_panel_parent_class)->finalize (object);
}

static void
fb_profile_panel_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  FbProfilePanel *self = FB_PROFILE_PANEL (object);

  switch (prop_id)
    {
    case PROP_METRIC:
      g_value_set_int (value, self->metric);
      break;
    case PROP_EXPANDED:
      g_value_set_boolean (value, fb_profile_panel_get_expanded (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
fb_profile_panel_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  FbProfilePanel *self = FB_PROFILE_PANEL (object);

  switch (prop_id)
    {
    case PROP_METRIC:
      fb_profile_panel_set_metric (self, g_value_get_int (value));
      break;
    case PROP_EXPANDED:
      fb_profile_panel_set_expanded (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
fb_profile_panel_class_init (FbProfilePanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fb_profile_panel_dispose;
  object_class->finalize = fb_profile_panel_finalize;
  object_class->get_property = fb_profile_panel_get_property;
  object_class->set_property = fb_profile_panel_set_property;

  properties[PROP_METRIC] =
    g_param_spec_int ("metric", NULL, NULL, 0, FB_PROFILE_N_METRICS - 1, FB_PROFILE_METRIC_SHARE,
                      G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_EXPANDED] =
    g_param_spec_boolean ("expanded", NULL, NULL, TRUE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* A kernel (FbProfileKernel.id) picked in the timeline, the table or the roofline. */
  signals[KERNEL_ACTIVATED] =
    g_signal_new ("kernel-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  /* An original ONNX node picked in the list of gains and losses. */
  signals[NODE_ACTIVATED] =
    g_signal_new ("node-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "fbprofilepanel");
}

static void
fb_profile_panel_init (FbProfilePanel *self)
{
  const char *metric_labels[FB_PROFILE_N_METRICS + 1] = { NULL };
  GtkWidget *header, *titles, *switcher, *page;

  self->metric = FB_PROFILE_METRIC_SHARE;
  self->gains = g_array_new (FALSE, FALSE, sizeof (FbProfileChange));
  self->losses = g_array_new (FALSE, FALSE, sizeof (FbProfileChange));

  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));

  header = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  gtk_widget_add_css_class (header, "toolbar");
  self->expander = GTK_TOGGLE_BUTTON (gtk_toggle_button_new ());
  gtk_button_set_icon_name (GTK_BUTTON (self->expander), "pan-down-symbolic");
  gtk_widget_add_css_class (GTK_WIDGET (self->expander), "flat");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->expander), "Show or hide the profile panel");
  gtk_toggle_button_set_active (self->expander, TRUE);
  g_signal_connect_swapped (self->expander, "toggled", G_CALLBACK (on_expanded), self);
  gtk_box_append (GTK_BOX (header), GTK_WIDGET (self->expander));

  /* What was profiled, where, and how fast, on the header's one line; the pages on a line of
   * their own under it, where the switcher does not squeeze the title. */
  titles = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  gtk_widget_set_hexpand (titles, TRUE);
  gtk_widget_set_valign (titles, GTK_ALIGN_CENTER);
  self->title = GTK_LABEL (text_line ("", "heading"));
  gtk_label_set_selectable (self->title, FALSE);
  gtk_label_set_wrap (self->title, FALSE);
  gtk_label_set_ellipsize (self->title, PANGO_ELLIPSIZE_MIDDLE);
  gtk_label_set_max_width_chars (self->title, 40);
  self->summary = GTK_LABEL (text_line ("", "caption"));
  gtk_label_set_selectable (self->summary, FALSE);
  gtk_label_set_wrap (self->summary, FALSE);
  gtk_label_set_ellipsize (self->summary, PANGO_ELLIPSIZE_END);
  gtk_widget_set_hexpand (GTK_WIDGET (self->summary), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->summary), "dim-label");
  gtk_box_append (GTK_BOX (titles), GTK_WIDGET (self->title));
  gtk_box_append (GTK_BOX (titles), GTK_WIDGET (self->summary));
  gtk_box_append (GTK_BOX (header), titles);
  self->stack = GTK_STACK (gtk_stack_new ());
  switcher = gtk_stack_switcher_new ();
  gtk_stack_switcher_set_stack (GTK_STACK_SWITCHER (switcher), self->stack);
  gtk_widget_set_halign (switcher, GTK_ALIGN_START);
  gtk_widget_set_margin_start (switcher, 12);
  gtk_widget_set_margin_bottom (switcher, 4);
  self->note = GTK_LABEL (text_line ("", "warning"));
  gtk_widget_set_margin_start (GTK_WIDGET (self->note), 12);
  gtk_widget_set_margin_end (GTK_WIDGET (self->note), 12);
  gtk_widget_set_visible (GTK_WIDGET (self->note), FALSE);

  for (guint i = 0; i < FB_PROFILE_N_METRICS; i++)
    metric_labels[i] = fb_profile_metric_label (i);
  self->metric_dropdown = GTK_DROP_DOWN (gtk_drop_down_new_from_strings (metric_labels));
  gtk_drop_down_set_selected (self->metric_dropdown, self->metric);
  gtk_widget_set_valign (GTK_WIDGET (self->metric_dropdown), GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->metric_dropdown),
                               "What the graphs are painted by; the legend says whether it was measured or modeled");
  g_signal_connect_swapped (self->metric_dropdown, "notify::selected", G_CALLBACK (on_metric_selected), self);
  gtk_box_append (GTK_BOX (header), GTK_WIDGET (self->metric_dropdown));
  gtk_box_append (GTK_BOX (self->box), header);
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->note));
  gtk_box_append (GTK_BOX (self->box), switcher);
  self->switcher = switcher;

  self->timeline = FB_TIMELINE_VIEW (fb_timeline_view_new ());
  g_signal_connect (self->timeline, "kernel-activated", G_CALLBACK (on_view_kernel), self);
  gtk_stack_add_titled (self->stack, scrolled (GTK_WIDGET (self->timeline), FALSE), "timeline", "Timeline");

  build_table (self);
  gtk_stack_add_titled (self->stack, scrolled (GTK_WIDGET (self->table), TRUE), "kernels", "Top Kernels");

  self->roofline = FB_ROOFLINE_VIEW (fb_roofline_view_new ());
  g_signal_connect (self->roofline, "kernel-activated", G_CALLBACK (on_view_kernel), self);
  /* Scrolled like the other pages, so that the panel's least height is its header's and the
   * graphs above can have the room. */
  gtk_stack_add_titled (self->stack, scrolled (GTK_WIDGET (self->roofline), TRUE), "roofline", "Roofline");

  page = padded_box ();
  self->diagnosis = GTK_BOX (page);
  gtk_stack_add_titled (self->stack, scrolled (page, FALSE), "diagnosis", "Diagnosis");

  page = padded_box ();
  self->changes_box = GTK_BOX (page);
  self->changes_page = gtk_stack_add_titled (self->stack, scrolled (page, FALSE), "changes", "Changes");
  gtk_stack_page_set_visible (self->changes_page, FALSE);

  self->revealer = GTK_REVEALER (gtk_revealer_new ());
  gtk_revealer_set_transition_type (self->revealer, GTK_REVEALER_TRANSITION_TYPE_SLIDE_UP);
  gtk_revealer_set_reveal_child (self->revealer, TRUE);
  gtk_revealer_set_child (self->revealer, GTK_WIDGET (self->stack));
  gtk_widget_set_vexpand (GTK_WIDGET (self->revealer), TRUE);
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->revealer));
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
}
