/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The profile panel with profiles as big as a large transformer's: 10,000 kernels reach the Top
 * Kernels table in one change of its model (no work per row while loading), all of them listed,
 * the table open at its top with the costliest kernel first, again after the user scrolled away
 * and a new profile came; and the A/B lists naming each original node with its operator. */
#include "fb-kernel-row.h"
#include "fb-profile-panel.h"
#include "fb-ui.h"

#include <adwaita.h>
#include <string.h>

#define N_KERNELS 10000

static GtkWidget *window;
static FbProfilePanel *panel;

static void
settle (void)
{
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}

static gboolean
count_frame (GtkWidget     *widget,
             GdkFrameClock *clock,
             gpointer       data)
{
  (*(guint *) data)++;
  return G_SOURCE_CONTINUE;
}

static void
draw_frames (guint n)
{
  guint frames = 0;
  guint id = gtk_widget_add_tick_callback (window, count_frame, &frames, NULL);

  while (frames < n)
    {
      gtk_widget_queue_draw (window);
      g_main_context_iteration (NULL, TRUE);
    }
  gtk_widget_remove_tick_callback (window, id);
}

/* n kernels in plan order whose times are a shuffle of 1..n µs: the costliest sits far from
 * both ends of the plan, as in a real model. Each runs two original nodes, "n<i>" and one
 * shared with its neighbour. */
static FbProfile *
make_profile (guint n)
{
  FbProfile *profile = fb_profile_new ();

  profile->model = g_strdup ("big.onnx");
  profile->target = g_strdup ("cpu");
  profile->device.name = g_strdup ("Test CPU");
  profile->device.peak_gflops = 100;
  profile->device.peak_gbps = 20;
  profile->iterations = 10;
  for (guint i = 0; i < n; i++)
    {
      FbProfileKernel *kernel = fb_profile_kernel_new ();
      double half = 0.5;

      kernel->id = i;
      kernel->name = g_strdup_printf ("fbk_k_%u", i);
      kernel->stage_node = i;
      g_ptr_array_add (kernel->nodes, g_strdup_printf ("n%u", i));
      g_ptr_array_add (kernel->nodes, g_strdup_printf ("n%u", (i + 1) % n));
      g_array_append_val (kernel->node_shares, half);
      g_array_append_val (kernel->node_shares, half);
      kernel->calls = 1;
      /* 7919 is prime and n a product of 2 and 5: a permutation of 0..n-1. */
      kernel->median_us = (double) ((i * 7919u) % n) + 1;
      kernel->min_us = kernel->max_us = kernel->median_us;
      kernel->bytes_read = 4096;
      kernel->flops = 1000;
      g_ptr_array_add (profile->kernels, kernel);
    }
  profile->busy_ms = fb_profile_total_us (profile) / 1000;
  profile->wall_median_ms = profile->wall_min_ms = profile->wall_max_ms = profile->busy_ms;
  return profile;
}

static const FbProfileKernel *
costliest (FbProfile *profile)
{
  const FbProfileKernel *best = NULL;

  for (guint i = 0; i < profile->kernels->len; i++)
    {
      const FbProfileKernel *k = g_ptr_array_index (profile->kernels, i);

      if (best == NULL || k->median_us > best->median_us)
        best = k;
    }
  return best;
}

static void
on_items_changed (GListModel *model,
                  guint       position,
                  guint       removed,
                  guint       added,
                  guint      *count)
{
  (*count)++;
}

typedef struct {
  GtkWidget  *relative_to;
  double      title_bottom;   /* under the column titles: where rows start */
  double      best_y;
  const char *best;
} TopRow;

static void
find_labels (GtkWidget *widget,
             TopRow    *top,
             gboolean   titles)
{
  if (GTK_IS_LABEL (widget) && gtk_widget_get_mapped (widget))
    {
      const char *text = gtk_label_get_label (GTK_LABEL (widget));
      graphene_point_t p;

      g_assert_true (gtk_widget_compute_point (widget, top->relative_to, &GRAPHENE_POINT_INIT (0, 0), &p));
      if (titles && g_strcmp0 (text, "Kernel") == 0)
        top->title_bottom = MAX (top->title_bottom, p.y + gtk_widget_get_height (widget));
      else if (!titles && g_str_has_prefix (text, "fbk_") && p.y >= top->title_bottom - 1
               && (top->best == NULL || p.y < top->best_y))
        {
          top->best = text;
          top->best_y = p.y;
        }
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL; child = gtk_widget_get_next_sibling (child))
    find_labels (child, top, titles);
}

/* The kernel name in the first row the user sees in the Top Kernels table. */
static const char *
first_visible_kernel (void)
{
  GtkWidget *table = GTK_WIDGET (fb_profile_panel_get_kernel_table (panel));
  TopRow top = { gtk_widget_get_parent (table), 0, 0, NULL };

  find_labels (table, &top, TRUE);
  g_assert_cmpfloat (top.title_bottom, >, 0);
  find_labels (table, &top, FALSE);
  return top.best;
}

static void
test_big_profile (void)
{
  GtkColumnView *table = fb_profile_panel_get_kernel_table (panel);
  GListModel *model = G_LIST_MODEL (gtk_column_view_get_model (table));
  GtkAdjustment *adjustment = gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (table));
  g_autoptr(FbProfile) profile = make_profile (N_KERNELS);
  g_autoptr(FbProfile) again = make_profile (N_KERNELS);
  guint changes = 0;
  gulong handler;
  g_autoptr(FbKernelRow) first = NULL;

  fb_profile_panel_set_page (panel, "kernels");
  draw_frames (2);
  handler = g_signal_connect (model, "items-changed", G_CALLBACK (on_items_changed), &changes);
  fb_profile_panel_set_profile (panel, profile, NULL);
  /* The old rows out and the new in: no change per row. */
  g_assert_cmpuint (changes, <=, 2);
  g_signal_handler_disconnect (model, handler);
  g_assert_cmpuint (g_list_model_get_n_items (model), ==, N_KERNELS);
  first = g_list_model_get_item (model, 0);
  g_assert_true (fb_kernel_row_get_kernel (first) == costliest (profile));

  /* On screen: at the top, the costliest kernel first. */
  draw_frames (3);
  g_assert_cmpfloat (gtk_adjustment_get_value (adjustment), ==, gtk_adjustment_get_lower (adjustment));
  g_assert_cmpstr (first_visible_kernel (), ==, costliest (profile)->name);

  /* Scrolled far down, then a new profile: it opens at its top again. */
  gtk_adjustment_set_value (adjustment, gtk_adjustment_get_upper (adjustment) / 2);
  draw_frames (3);
  g_assert_cmpstr (first_visible_kernel (), !=, costliest (profile)->name);
  fb_profile_panel_set_profile (panel, again, NULL);
  draw_frames (3);
  g_assert_cmpuint (g_list_model_get_n_items (model), ==, N_KERNELS);
  g_assert_cmpfloat (gtk_adjustment_get_value (adjustment), ==, gtk_adjustment_get_lower (adjustment));
  g_assert_cmpstr (first_visible_kernel (), ==, costliest (again)->name);
  fb_profile_panel_set_profile (panel, NULL, NULL);
  settle ();
}

static void
collect_labels (GtkWidget *widget,
                GPtrArray *texts)
{
  if (GTK_IS_LABEL (widget) && gtk_widget_get_mapped (widget))
    g_ptr_array_add (texts, (gpointer) gtk_label_get_label (GTK_LABEL (widget)));
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL; child = gtk_widget_get_next_sibling (child))
    collect_labels (child, texts);
}

static gboolean
shows (const char *text)
{
  g_autoptr(GPtrArray) texts = g_ptr_array_new ();

  collect_labels (GTK_WIDGET (panel), texts);
  for (guint i = 0; i < texts->len; i++)
    if (strstr (g_ptr_array_index (texts, i), text) != NULL)
      return TRUE;
  return FALSE;
}

/* A/B on a model whose nodes are named like "n138": each listed with its operator. */
static void
test_ab_names (void)
{
  static const char *ops[] = { "Conv", "Relu", "MatMul", "Add" };
  g_autoptr(FbModel) model = fb_model_new (NULL);
  g_autoptr(FbProfile) before = make_profile (G_N_ELEMENTS (ops));
  g_autoptr(FbProfile) now = make_profile (G_N_ELEMENTS (ops));

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      FbOrigNode orig = { g_strdup_printf ("n%u", i), g_strdup (ops[i]), NULL };

      g_array_append_val (model->orig_nodes, orig);
    }
  /* n0..n1 faster (Conv, Relu), n2..n3 slower. */
  ((FbProfileKernel *) g_ptr_array_index (now->kernels, 0))->median_us *= 0.25;
  ((FbProfileKernel *) g_ptr_array_index (now->kernels, 2))->median_us *= 4;
  fb_profile_panel_set_model (panel, model);
  fb_profile_panel_set_profile (panel, now, before);
  fb_profile_panel_set_page (panel, "changes");
  draw_frames (3);
  g_assert_cmpuint (fb_profile_panel_get_n_gains (panel), >, 0);
  g_assert_cmpuint (fb_profile_panel_get_n_losses (panel), >, 0);
  g_assert_true (shows ("Conv · n0"));
  g_assert_true (shows ("MatMul · n2"));
  fb_profile_panel_set_profile (panel, NULL, NULL);
  fb_profile_panel_set_model (panel, NULL);
  settle ();
}

int
main (int    argc,
      char **argv)
{
  int status;

  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  fb_ui_init ();

  window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 600);
  panel = FB_PROFILE_PANEL (fb_profile_panel_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (panel));
  gtk_window_present (GTK_WINDOW (window));
  draw_frames (2);

  g_test_add_func ("/ui/profile-panel/big-profile", test_big_profile);
  g_test_add_func ("/ui/profile-panel/ab-names", test_ab_names);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  settle ();
  return status;
}
