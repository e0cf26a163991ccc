/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A profile in the workbench window on the bundled sample model: opened from a file and painted
 * on every stage (heat and badges drawn), a profile of another model or pipeline refused with a
 * visible message, the timeline, the top-kernels table and the roofline selecting nodes, and
 * A/B after a toggle. The profiles are written by the test from the run on screen, with made-up
 * but consistent times, so that every number checked is known. */
#include "fb-application.h"
#include "fb-kernel-row.h"
#include "fb-profile-format.h"
#include "fb-window.h"
#include "fb-test-window.h"

#include <glib/gstdio.h>
#include <string.h>

static FbApplication *app;
static FbWindow *window;
static char *tmp_dir;

static FbGraphView *
after_view (void)
{
  return fb_compare_view_get_after_view (fb_window_get_compare_view (window));
}

static FbGraphView *
before_view (void)
{
  return fb_compare_view_get_before_view (fb_window_get_compare_view (window));
}

static void
settle (void)
{
  test_window_settle (window);
}

static FbRun *
run (void)
{
  g_assert_nonnull (fb_window_get_run (window));
  return fb_window_get_run (window);
}

static FbStage *
final_stage (void)
{
  return test_window_final_stage (window);
}

static void
select_stage (const char *name)
{
  int index = fb_run_find_stage (run (), name);

  g_assert_cmpint (index, >=, 0);
  fb_stage_list_select (fb_window_get_stage_list (window), index);
  settle ();
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
  guint id = gtk_widget_add_tick_callback (GTK_WIDGET (window), count_frame, &frames, NULL);

  while (frames < n)
    {
      gtk_widget_queue_draw (GTK_WIDGET (window));
      g_main_context_iteration (NULL, TRUE);
    }
  gtk_widget_remove_tick_callback (GTK_WIDGET (window), id);
}

/* A profile of the run on screen: one kernel per final-stage node that stands for original
 * nodes, kernel i taking (i + 1) * 10 µs times scale (scale_node_name, when given, scales only
 * the kernels holding that original node). */
static FbProfile *
make_profile (double      scale,
              const char *scaled_node)
{
  FbGraph *graph = final_stage ()->graph;
  FbModel *model = graph->model;
  FbProfile *profile = fb_profile_new ();
  double t = 0;

  profile->model = g_strdup ("sample-cnn.onnx");
  profile->model_digest = fb_profile_model_digest (model);
  profile->target = g_strdup ("cpu");
  profile->device.name = g_strdup ("Test CPU (2 threads)");
  profile->device.peak_gflops = 100;
  profile->device.peak_gbps = 20;
  profile->device.ceilings_measured = TRUE;
  fb_pipeline_options_free (profile->pipeline);
  profile->pipeline = fb_pipeline_options_copy (fb_run_get_options (run ()));
  profile->iterations = 50;
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);
      FbProfileKernel *kernel;
      gboolean scaled = scaled_node == NULL;
      FbProfileSpan span = { 0 };

      if (node->n_prov == 0)
        continue;
      kernel = fb_profile_kernel_new ();
      kernel->id = profile->kernels->len;
      kernel->name = g_strdup_printf ("fbk_%s_%u", node->op_type, node->id);
      kernel->kind = node->op == FB_OP_CONV ? FB_PROFILE_KERNEL_LIBRARY : FB_PROFILE_KERNEL_GENERATED;
      kernel->stage_node = node->id;
      for (guint p = 0; p < node->n_prov; p++)
        {
          const char *name = fb_model_orig_name (model, node->prov[p]);
          double share = 1.0 / node->n_prov;

          g_ptr_array_add (kernel->nodes, g_strdup (name));
          g_array_append_val (kernel->node_shares, share);
          scaled |= g_strcmp0 (name, scaled_node) == 0;
        }
      kernel->calls = 1;
      kernel->median_us = (kernel->id + 1) * 10.0 * (scaled ? scale : 1);
      kernel->min_us = kernel->median_us * 0.9;
      kernel->max_us = kernel->median_us * 1.2;
      kernel->bytes_read = 4096 * (kernel->id + 1);
      kernel->bytes_written = 1024 * (kernel->id + 1);
      kernel->flops = 20000.0 * (kernel->id + 1) * (kernel->id % 3);
      kernel->bound = kernel->id % 3 == 2 ? FB_BOUND_COMPUTE : FB_BOUND_MEMORY;
      kernel->roofline_share = 0.1 + 0.1 * (kernel->id % 8);
      g_ptr_array_add (profile->kernels, kernel);
      /* Two lanes, with a gap of 2 µs before every launch. */
      span.kernel = kernel->id;
      span.lane = kernel->id % 2;
      span.start_us = t + 2;
      span.end_us = span.start_us + kernel->median_us;
      t = span.end_us;
      g_array_append_val (profile->timeline, span);
    }
  profile->busy_ms = fb_profile_total_us (profile) / 1000;
  profile->wall_median_ms = t / 1000;
  profile->wall_min_ms = profile->wall_median_ms * 0.95;
  profile->wall_max_ms = profile->wall_median_ms * 1.1;
  g_ptr_array_add (profile->diagnosis, g_strdup ("the last kernel takes the most time"));
  return profile;
}

/* Writes profile to a file and opens it the way the user does, waiting until it is taken. */
static void
open_profile (FbProfile  *profile,
              const char *name)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (tmp_dir, name, NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  FbProfile *before = fb_window_get_profile (window);

  g_assert_true (fb_profile_save (profile, path, &error));
  g_assert_no_error (error);
  fb_window_open_profile (window, file);
  while (fb_window_get_profile (window) == before)
    g_main_context_iteration (NULL, TRUE);
  settle ();
  draw_frames (2);
}

static FbNode *
costliest_node (FbGraphView *view)
{
  FbGraph *graph = fb_graph_view_get_graph (view);
  FbNode *best = NULL;
  double best_us = 0;

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);
      const FbNodeCost *cost = fb_graph_view_get_node_cost (view, node);

      if (cost != NULL && cost->time_us > best_us)
        {
          best_us = cost->time_us;
          best = node;
        }
    }
  return best;
}

/* The colour of one pixel of widget as it draws now. */
static guint32
pixel_at (GtkWidget *widget,
          int        x,
          int        y)
{
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  g_autofree guint32 *pixels = g_new (guint32, width * height);

  /* The view's own drawing, as its next frame would have it. */
  GTK_WIDGET_GET_CLASS (widget)->snapshot (widget, snapshot);
  node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  gdk_texture_download (texture, (guchar *) pixels, width * 4);
  g_assert_true (x >= 0 && x < width && y >= 0 && y < height);
  return pixels[y * width + x];
}

/* A point inside node's box, left of its text. */
static void
node_point (FbGraphView  *view,
            const FbNode *node,
            int          *x,
            int          *y)
{
  FbGraphScene *scene = fb_graph_view_get_scene (view);
  int item = fb_graph_scene_find_node (scene, node);
  const FbSceneItem *it;
  double wx, wy;

  g_assert_cmpint (item, >=, 0);
  it = fb_graph_scene_item (scene, item);
  fb_graph_view_scene_to_widget (view, it->x + 4, it->y + it->height / 2, &wx, &wy);
  *x = (int) wx;
  *y = (int) wy;
}

static void
test_painted (void)
{
  g_autoptr(FbProfile) profile = make_profile (1, NULL);
  g_autofree char *legend = NULL;
  FbNode *hot;
  guint badges = 0;
  int x, y;
  guint32 painted, plain;
  double sum = 0, total = fb_profile_total_us (profile);
  FbGraph *graph;

  select_stage ("final");
  open_profile (profile, "sample.profile.json");
  g_assert_true (fb_window_is_profile_painted (window));
  g_assert_null (fb_window_get_last_error (window));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (fb_window_get_profile_panel (window))));
  g_assert_nonnull (fb_graph_view_get_profile (after_view ()));
  g_assert_nonnull (fb_graph_view_get_profile (before_view ()));
  g_assert_null (fb_graph_view_get_previous_profile (after_view ()));

  /* The costliest node carries the last kernel's time, and its box was drawn hot, with a badge. */
  hot = costliest_node (after_view ());
  g_assert_nonnull (hot);
  g_assert_cmpfloat_with_epsilon (fb_graph_view_get_node_cost (after_view (), hot)->time_us,
                                  profile->kernels->len * 10.0, 1e-6);
  fb_graph_view_select_node (after_view (), hot->id);
  settle ();
  draw_frames (2);
  g_assert_cmpuint (fb_graph_view_get_n_painted (after_view (), &badges), >, 0);
  g_assert_cmpuint (badges, >, 0);
  legend = fb_graph_view_describe_overlay (after_view ());
  g_assert_nonnull (strstr (legend, "measured"));

  /* The same pixel without the profile is the plain box colour: the heat made the difference. */
  node_point (after_view (), hot, &x, &y);
  painted = pixel_at (GTK_WIDGET (after_view ()), x, y);
  fb_graph_view_set_profile (after_view (), NULL, NULL);
  plain = pixel_at (GTK_WIDGET (after_view ()), x, y);
  g_assert_cmphex (painted, !=, plain);
  fb_graph_view_set_profile (after_view (), profile, NULL);

  /* On the import stage the original nodes carry the time, adding up to the total. */
  select_stage ("import");
  graph = fb_graph_view_get_graph (after_view ());
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNodeCost *cost = fb_graph_view_get_node_cost (after_view (), g_ptr_array_index (graph->nodes, i));

      if (cost != NULL)
        sum += cost->time_us;
    }
  g_assert_cmpfloat_with_epsilon (sum, total, 1e-6 * total);

  /* The metric selector repaints, and the legend says what the colour means now. */
  fb_profile_panel_set_metric (fb_window_get_profile_panel (window), FB_PROFILE_METRIC_BYTES);
  g_assert_cmpint (fb_graph_view_get_profile_metric (after_view ()), ==, FB_PROFILE_METRIC_BYTES);
  g_free (legend);
  legend = fb_graph_view_describe_overlay (after_view ());
  g_assert_nonnull (strstr (legend, "modeled"));
  fb_profile_panel_set_metric (fb_window_get_profile_panel (window), FB_PROFILE_METRIC_SHARE);
}

static const FbNode *
node_of_kernel (const FbProfileKernel *kernel)
{
  return fb_graph_find_node (final_stage ()->graph, kernel->stage_node);
}

static void
test_select_from_panel (void)
{
  FbProfilePanel *panel = fb_window_get_profile_panel (window);
  FbProfile *profile = fb_window_get_profile (window);
  FbTimelineView *timeline = fb_profile_panel_get_timeline (panel);
  GtkColumnView *table = fb_profile_panel_get_kernel_table (panel);
  GtkSelectionModel *rows = gtk_column_view_get_model (table);
  const FbProfileSpan *span;
  const FbProfileKernel *top, *kernel;
  graphene_rect_t rect;
  graphene_point_t point;
  guint last;

  g_assert_true (fb_window_is_profile_painted (window));
  select_stage ("final");

  /* A click on a launch in the timeline selects its node. */
  fb_profile_panel_set_page (panel, "timeline");
  draw_frames (2);
  span = &g_array_index (profile->timeline, FbProfileSpan, 3);
  g_assert_true (fb_timeline_view_get_span_rect (timeline, 3, &rect));
  g_assert_cmpint (fb_timeline_view_span_at (timeline, rect.origin.x + rect.size.width / 2,
                                             rect.origin.y + rect.size.height / 2), ==, 3);
  g_assert_true (fb_timeline_view_click (timeline, rect.origin.x + rect.size.width / 2,
                                         rect.origin.y + rect.size.height / 2));
  settle ();
  kernel = fb_profile_find_kernel (profile, span->kernel);
  g_assert_true (fb_graph_view_get_selected_node (after_view ()) == node_of_kernel (kernel));
  /* Between launches there is a gap, and nothing to click. */
  g_assert_cmpint (fb_timeline_view_span_at (timeline, rect.origin.x - 400, rect.origin.y + 2), !=, 3);
  /* Zooming in keeps the time under the pointer where it was. */
  {
    double s0, e0, s1, e1, x = rect.origin.x;

    fb_timeline_view_get_range (timeline, &s0, &e0);
    fb_timeline_view_zoom_at (timeline, 4, x);
    fb_timeline_view_get_range (timeline, &s1, &e1);
    g_assert_cmpfloat_with_epsilon ((e1 - s1) * 4, e0 - s0, 1e-6 * (e0 - s0));
    g_assert_cmpint (fb_timeline_view_span_at (timeline, x + 1, rect.origin.y + 2), ==, 3);
    fb_timeline_view_set_range (timeline, s0, e0);
  }

  /* The table lists the top kernel first; selecting a row selects its node. */
  fb_profile_panel_set_page (panel, "kernels");
  draw_frames (2);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (rows)), ==, profile->kernels->len);
  {
    g_autoptr(GObject) first = g_list_model_get_item (G_LIST_MODEL (rows), 0);

    top = fb_kernel_row_get_kernel ((FbKernelRow *) first);
  }
  last = profile->kernels->len - 1;
  g_assert_cmpuint (top->id, ==, last);
  gtk_selection_model_select_item (rows, 1, TRUE);
  settle ();
  {
    g_autoptr(GObject) second = g_list_model_get_item (G_LIST_MODEL (rows), 1);

    kernel = fb_kernel_row_get_kernel ((FbKernelRow *) second);
  }
  g_assert_true (fb_graph_view_get_selected_node (after_view ()) == node_of_kernel (kernel));

  /* And the roofline: a click on a dot. */
  fb_profile_panel_set_page (panel, "roofline");
  draw_frames (2);
  g_assert_cmpuint (fb_roofline_view_get_n_dots (fb_profile_panel_get_roofline (panel)), >, 0);
  /* The costliest kernel with flops: data movement has no place on a roofline. */
  for (guint i = profile->kernels->len; i > 0; i--)
    if ((kernel = g_ptr_array_index (profile->kernels, i - 1))->flops > 0)
      break;
  g_assert_false (fb_roofline_view_get_kernel_point (fb_profile_panel_get_roofline (panel), 0, &point));
  g_assert_true (fb_roofline_view_get_kernel_point (fb_profile_panel_get_roofline (panel), kernel->id, &point));
  g_assert_true (fb_roofline_view_click (fb_profile_panel_get_roofline (panel), point.x, point.y));
  settle ();
  g_assert_true (fb_graph_view_get_selected_node (after_view ()) == node_of_kernel (kernel));
}

static void
test_mismatch (void)
{
  g_autoptr(FbProfile) other_model = make_profile (1, NULL);
  g_autoptr(FbProfile) other_pipeline = make_profile (1, NULL);
  const char *note;

  /* Another model's profile: said, and nothing painted. */
  g_free (other_model->model_digest);
  other_model->model_digest = g_strdup ("0000000000000000000000000000000000000000000000000000000000000000");
  g_free (other_model->model);
  other_model->model = g_strdup ("resnet50.onnx");
  open_profile (other_model, "other-model.json");
  g_assert_false (fb_window_is_profile_painted (window));
  g_assert_nonnull (fb_window_get_last_error (window));
  g_assert_nonnull (strstr (fb_window_get_last_error (window), "another model"));
  g_assert_nonnull (strstr (fb_window_get_last_error (window), "resnet50.onnx"));
  note = fb_profile_panel_get_note (fb_window_get_profile_panel (window));
  g_assert_nonnull (note);
  g_assert_nonnull (strstr (note, "Not painted"));
  g_assert_null (fb_graph_view_get_profile (after_view ()));
  g_assert_null (fb_graph_view_get_profile (before_view ()));

  /* Recorded with another toggle: the same. */
  g_ptr_array_add (other_pipeline->pipeline->disabled_passes, g_strdup ("fuse-epilogue"));
  open_profile (other_pipeline, "other-pipeline.json");
  g_assert_false (fb_window_is_profile_painted (window));
  g_assert_nonnull (strstr (fb_window_get_last_error (window), "toggles"));
  g_assert_null (fb_graph_view_get_profile (after_view ()));

  /* A file that is no profile at all. */
  {
    g_autofree char *path = g_build_filename (tmp_dir, "broken.json", NULL);
    g_autoptr(GFile) file = g_file_new_for_path (path);
    g_autoptr(GError) error = NULL;
    g_autofree char *old = g_strdup (fb_window_get_last_error (window));

    g_assert_true (g_file_set_contents (path, "{\"format\": \"something else\"}", -1, &error));
    fb_window_open_profile (window, file);
    while (g_strcmp0 (fb_window_get_last_error (window), old) == 0)
      g_main_context_iteration (NULL, TRUE);
    g_assert_nonnull (strstr (fb_window_get_last_error (window), "broken.json"));
  }
  fb_window_clear_profile (window);
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (fb_window_get_profile_panel (window))));
}

static void
test_ab (void)
{
  FbStageList *list = fb_window_get_stage_list (window);
  FbProfilePanel *panel = fb_window_get_profile_panel (window);
  g_autoptr(FbProfile) first = make_profile (1, NULL);
  g_autoptr(FbProfile) second = NULL;
  FbGraph *graph;
  guint changed = 0;
  double delta;
  const char *name;

  open_profile (first, "a.json");
  g_assert_true (fb_window_is_profile_painted (window));

  /* A toggle: the profile no longer fits the pipeline, says so, and is not painted. */
  g_assert_true (fb_stage_list_set_pass_enabled (list, "fuse-epilogue", FALSE));
  settle ();
  g_assert_false (fb_window_is_profile_painted (window));
  g_assert_nonnull (strstr (fb_profile_panel_get_note (panel), "fuse-epilogue"));
  g_assert_null (fb_graph_view_get_profile (after_view ()));

  /* The new pipeline's profile, with the first node's kernels four times as fast. */
  second = make_profile (1, NULL);
  for (guint i = 0; i < second->kernels->len; i++)
    {
      FbProfileKernel *kernel = g_ptr_array_index (second->kernels, i);

      if (i % 4 == 0)
        kernel->median_us *= 0.25;
      else if (i % 4 == 1)
        kernel->median_us *= 2;
    }
  open_profile (second, "b.json");
  g_assert_true (fb_window_is_profile_painted (window));
  g_assert_true (fb_window_get_previous_profile (window) == fb_graph_view_get_previous_profile (after_view ()));
  g_assert_nonnull (fb_window_get_previous_profile (window));

  /* Every node with time in either shows its change, on every stage. */
  select_stage ("import");
  graph = fb_graph_view_get_graph (after_view ());
  for (guint i = 0; i < graph->nodes->len; i++)
    if (fb_graph_view_get_node_delta (after_view (), g_ptr_array_index (graph->nodes, i), &delta, NULL)
        && delta != 0)
      changed++;
  g_assert_cmpuint (changed, >, 0);
  select_stage ("final");
  draw_frames (2);
  g_assert_nonnull (strstr (fb_graph_view_describe_overlay (after_view ()), "previous profile"));

  /* The panel lists gains and losses, biggest first, and a click on one selects its node. */
  g_assert_cmpuint (fb_profile_panel_get_n_gains (panel), >, 0);
  g_assert_cmpuint (fb_profile_panel_get_n_losses (panel), >, 0);
  name = fb_profile_panel_get_change (panel, TRUE, 0, &delta);
  g_assert_cmpfloat (delta, <, 0);
  if (fb_profile_panel_get_n_gains (panel) > 1)
    {
      double next;

      fb_profile_panel_get_change (panel, TRUE, 1, &next);
      g_assert_cmpfloat (delta, <=, next);
    }
  fb_profile_panel_get_change (panel, FALSE, 0, &delta);
  g_assert_cmpfloat (delta, >, 0);
  g_signal_emit_by_name (panel, "node-activated", name);
  settle ();
  g_assert_nonnull (fb_graph_view_get_selected_node (after_view ()));
  {
    const FbNode *node = fb_graph_view_get_selected_node (after_view ());
    gboolean holds = FALSE;

    for (guint p = 0; p < node->n_prov; p++)
      holds |= g_strcmp0 (fb_model_orig_name (graph->model, node->prov[p]), name) == 0;
    g_assert_true (holds);
  }

  g_assert_true (fb_stage_list_set_pass_enabled (list, "fuse-epilogue", TRUE));
  settle ();
  fb_window_clear_profile (window);
}

/* With FB_TEST_SCREENSHOT=FILE.png, renders the window with a profile painted into that file
 * instead of testing (for the README): FB_TEST_SCREENSHOT_MODEL names the model,
 * FB_TEST_SCREENSHOT_PROFILE a profile of it (else one made up for the sample),
 * FB_TEST_SCREENSHOT_STAGE the stage to show ("final") and FB_TEST_SCREENSHOT_PAGE the panel's
 * page ("timeline"). */
static void
save_screenshot (const char *path)
{
  GtkWidget *widget = adw_application_window_get_content (ADW_APPLICATION_WINDOW (window));
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  const char *profile_path = g_getenv ("FB_TEST_SCREENSHOT_PROFILE");
  const char *stage = g_getenv ("FB_TEST_SCREENSHOT_STAGE");
  FbNode *hot;

  if (profile_path != NULL)
    {
      g_autoptr(GFile) file = g_file_new_for_commandline_arg (profile_path);
      g_autoptr(GError) error = NULL;
      g_autoptr(FbProfile) peek = fb_profile_load (profile_path, &error);

      /* The layout it was recorded with first, which the settings of this run may not have. */
      g_assert_no_error (error);
      g_action_group_change_action_state (G_ACTION_GROUP (window), "layout",
                                          g_variant_new_string (peek->pipeline->layout == FB_LAYOUT_NHWC ? "nhwc" : "nchw"));
      settle ();

      fb_window_open_profile (window, file);
      while (fb_window_get_profile (window) == NULL && fb_window_get_last_error (window) == NULL)
        g_main_context_iteration (NULL, TRUE);
      settle ();
    }
  else
    {
      g_autoptr(FbProfile) profile = make_profile (1, NULL);

      open_profile (profile, "screenshot.json");
      /* FB_TEST_SCREENSHOT_AB: then the A/B after switching the epilogue fusion off. */
      if (g_getenv ("FB_TEST_SCREENSHOT_AB") != NULL)
        {
          g_autoptr(FbProfile) second = NULL;

          fb_stage_list_set_pass_enabled (fb_window_get_stage_list (window), "fuse-epilogue", FALSE);
          settle ();
          second = make_profile (1, NULL);
          for (guint i = 0; i < second->kernels->len; i += 3)
            ((FbProfileKernel *) g_ptr_array_index (second->kernels, i))->median_us *= 0.3;
          open_profile (second, "screenshot-b.json");
        }
    }
  g_assert_true (fb_window_is_profile_painted (window));
  select_stage (stage != NULL ? stage : "final");
  if ((hot = costliest_node (after_view ())) != NULL)
    fb_graph_view_select_node (after_view (), hot->id);
  settle ();
  /* Far enough out to see where the time goes around the hottest node, near enough for badges. */
  fb_graph_view_zoom_at (after_view (), 0.42 / fb_graph_view_get_zoom (after_view ()),
                         gtk_widget_get_width (GTK_WIDGET (after_view ())) / 2.0,
                         gtk_widget_get_height (GTK_WIDGET (after_view ())) / 2.0);
  fb_profile_panel_set_page (fb_window_get_profile_panel (window),
                             g_getenv ("FB_TEST_SCREENSHOT_PAGE") != NULL ? g_getenv ("FB_TEST_SCREENSHOT_PAGE") : "timeline");
  settle ();
  draw_frames (3);
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_assert_true (gdk_texture_save_to_png (texture, path));
}

/* A profile recorded by `fusebench profile` on the sample (with the channels-last layout, the
 * command line's default), kept as a fixture: what a profile made on another machine is. */
static void
test_fixture (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures", "sample-cnn.profile.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  FbProfile *before = fb_window_get_profile (window);
  FbProfile *profile;
  guint badges = 0;

  fb_window_clear_profile (window);
  g_action_group_change_action_state (G_ACTION_GROUP (window), "layout", g_variant_new_string ("nchw"));
  settle ();
  fb_window_open_profile (window, file);
  while (fb_window_get_profile (window) == before || fb_window_get_profile (window) == NULL)
    g_main_context_iteration (NULL, TRUE);
  settle ();
  /* Recorded channels-last: refused on the channels-first pipeline... */
  profile = fb_window_get_profile (window);
  g_assert_cmpuint (profile->pipeline->layout, ==, FB_LAYOUT_NHWC);
  g_assert_false (fb_window_is_profile_painted (window));
  g_assert_nonnull (strstr (fb_profile_panel_get_note (fb_window_get_profile_panel (window)), "layout"));

  /* ...and painted once the layout is the one it was recorded with. */
  g_action_group_change_action_state (G_ACTION_GROUP (window), "layout", g_variant_new_string ("nhwc"));
  settle ();
  g_assert_true (fb_window_is_profile_painted (window));
  select_stage ("final");
  draw_frames (2);
  g_assert_cmpuint (fb_graph_view_get_n_painted (after_view (), &badges), >, 0);
  g_assert_cmpuint (badges, >, 0);
  g_assert_nonnull (costliest_node (after_view ()));
  g_action_group_change_action_state (G_ACTION_GROUP (window), "layout", g_variant_new_string ("nchw"));
  settle ();
  fb_window_clear_profile (window);
}

static gboolean
label_contains (GtkWidget *widget, gconstpointer text)
{
  return GTK_IS_LABEL (widget) && strstr (gtk_label_get_text (GTK_LABEL (widget)), text) != NULL;
}

/* The first label under widget whose text contains text, or NULL. */
static GtkWidget *
label_containing (GtkWidget  *widget,
                  const char *text)
{
  return test_widget_find (widget, label_contains, text);
}

/* A GPU profile timed untraced: the panel's header gives the traced median and the tracer's
 * overhead beside the wall, and the diagnosis page the whole timing line; a profile without
 * untraced figures says nothing of them. */
static void
test_untraced_timing (void)
{
  g_autoptr(FbProfile) plain = make_profile (1, NULL);
  g_autoptr(FbProfile) timed = make_profile (1, NULL);
  FbProfilePanel *panel = fb_window_get_profile_panel (window);

  fb_window_clear_profile (window);
  settle ();
  open_profile (plain, "plain.profile.json");
  g_assert_null (strstr (fb_profile_panel_get_summary (panel), "traced"));
  fb_window_clear_profile (window);
  settle ();
  timed->timing = (FbProfileTiming) {
    .untraced_iterations = 100, .untraced_median_ms = 0.5, .untraced_min_ms = 0.49,
    .untraced_max_ms = 0.6, .noise_ms = 0.004, .traced_median_ms = 0.59,
  };
  timed->wall_median_ms = 0.5;
  open_profile (timed, "timed.profile.json");
  g_assert_nonnull (strstr (fb_profile_panel_get_summary (panel),
                            "untraced; traced 0.590 ms (+18 %)"));
  g_assert_null (label_containing (GTK_WIDGET (panel), "DRAM per inference"));
  fb_window_clear_profile (window);
  settle ();
  /* Whole replays' DRAM traffic on the diagnosis page, in the command line's words. */
  timed->dram = (FbProfileDram) { .replays = 20, .read_bytes = 103e6, .written_bytes = 8.6e6 };
  open_profile (timed, "dram.profile.json");
  g_autofree char *dram = fb_profile_dram_describe (timed);
  GtkWidget *line = label_containing (GTK_WIDGET (panel), "DRAM per inference");
  g_assert_nonnull (line);
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (line)), ==, dram);
  fb_window_clear_profile (window);
  settle ();
}

static gboolean
check_button_labelled (GtkWidget *widget, gconstpointer label)
{
  return GTK_IS_CHECK_BUTTON (widget) &&
         g_strcmp0 (gtk_check_button_get_label (GTK_CHECK_BUTTON (widget)), label) == 0;
}

static GtkWidget *
find_check_button (GtkWidget  *widget,
                   const char *label)
{
  return test_widget_find (widget, check_button_labelled, label);
}

/* The target selector: the CPU picked, CUDA greyed with the reason while no GPU target exists. */
static void
test_targets (void)
{
  GtkWidget *cpu = find_check_button (GTK_WIDGET (window), "CPU");
  GtkWidget *cuda = find_check_button (GTK_WIDGET (window), "CUDA (NVIDIA GPU)");

  g_assert_nonnull (cpu);
  g_assert_nonnull (cuda);
  g_assert_true (gtk_check_button_get_active (GTK_CHECK_BUTTON (cpu)));
  g_assert_false (gtk_widget_get_sensitive (cuda));
  g_assert_nonnull (strstr (gtk_widget_get_tooltip_text (cuda), "CUDA"));
}

/* The Profile button: a real profile of the sample on the CPU, made in the worker, painted. */
static void
test_profile_button (void)
{
  /* Errors shown replace this string: the same pointer afterwards means none was. */
  const char *error_before = fb_window_get_last_error (window);
  FbProfile *made;
  FbNode *hot;

  fb_window_clear_profile (window);
  select_stage ("final");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  g_assert_true (fb_window_is_busy (window));
  settle ();
  g_assert_true (fb_window_get_last_error (window) == error_before);
  made = fb_window_get_profile (window);
  g_assert_nonnull (made);
  g_assert_cmpstr (made->target, ==, "cpu");
  g_assert_cmpuint (made->kernels->len, >, 0);
  g_assert_true (fb_window_is_profile_painted (window));
  g_assert_null (fb_window_get_previous_profile (window));
  hot = costliest_node (after_view ());
  g_assert_nonnull (hot);
  g_assert_cmpfloat (fb_graph_view_get_node_cost (after_view (), hot)->time_us, >, 0);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (gtk_column_view_get_model (
                      fb_profile_panel_get_kernel_table (fb_window_get_profile_panel (window))))), ==,
                    made->kernels->len);

  /* Cancelled: nothing changes and nothing is said. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.cancel", NULL));
  settle ();
  g_assert_true (fb_window_get_profile (window) == made);
  g_assert_true (fb_window_get_last_error (window) == error_before);
}

/* A/B for real: a toggle, profile again, and every node shows its change against the first. */
static void
test_profile_button_ab (void)
{
  FbStageList *list = fb_window_get_stage_list (window);
  FbProfile *first = fb_window_get_profile (window);
  const char *error_before = fb_window_get_last_error (window);
  FbGraph *graph;
  guint with_delta = 0;

  g_assert_nonnull (first);
  g_assert_true (fb_stage_list_set_pass_enabled (list, "fuse-epilogue", FALSE));
  settle ();
  g_assert_false (fb_window_is_profile_painted (window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  settle ();
  g_assert_true (fb_window_get_last_error (window) == error_before);
  g_assert_true (fb_window_is_profile_painted (window));
  g_assert_true (fb_window_get_previous_profile (window) == first);
  select_stage ("final");
  graph = fb_graph_view_get_graph (after_view ());
  for (guint i = 0; i < graph->nodes->len; i++)
    with_delta += fb_graph_view_get_node_delta (after_view (), g_ptr_array_index (graph->nodes, i), NULL, NULL);
  g_assert_cmpuint (with_delta, >, 0);
  g_assert_cmpuint (fb_profile_panel_get_n_gains (fb_window_get_profile_panel (window))
                    + fb_profile_panel_get_n_losses (fb_window_get_profile_panel (window)), >, 0);
  g_assert_true (fb_stage_list_set_pass_enabled (list, "fuse-epilogue", TRUE));
  settle ();
  fb_window_clear_profile (window);
}

static gboolean
pass_disabled (const char *pass)
{
  const FbPipelineOptions *options = fb_run_get_options (run ());
  for (guint i = 0; i < options->disabled_passes->len; i++)
    if (g_strcmp0 (g_ptr_array_index (options->disabled_passes, i), pass) == 0)
      return TRUE;
  return FALSE;
}

/* The eager baseline preset: both fusion passes off (the final stage then has a kernel per ONNX
 * node), a profile made so, and everything back on when it is turned off. */
static void
test_eager_baseline (void)
{
  const char *error_before = fb_window_get_last_error (window);
  guint fused_nodes = fb_run_get_stage (run (), fb_run_n_stages (run ()) - 1)->graph->nodes->len;

  fb_window_clear_profile (window);
  fb_window_set_eager_baseline (window, TRUE);
  settle ();
  g_assert_true (fb_window_get_eager_baseline (window));
  g_assert_true (pass_disabled ("fuse-epilogue"));
  g_assert_true (pass_disabled ("fuse-elementwise"));
  g_assert_cmpuint (final_stage ()->graph->nodes->len, >, fused_nodes);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  settle ();
  g_assert_true (fb_window_get_last_error (window) == error_before);
  FbProfile *eager = fb_window_get_profile (window);
  g_assert_nonnull (eager);
  /* The profile records the toggles it was made with: both fusions off. */
  guint off = 0;
  for (guint i = 0; i < eager->pipeline->disabled_passes->len; i++)
    off += g_str_has_prefix (g_ptr_array_index (eager->pipeline->disabled_passes, i), "fuse-");
  g_assert_cmpuint (off, ==, 2);
  g_assert_true (fb_window_is_profile_painted (window));

  fb_window_set_eager_baseline (window, FALSE);
  settle ();
  g_assert_false (pass_disabled ("fuse-epilogue"));
  g_assert_false (pass_disabled ("fuse-elementwise"));
  g_assert_cmpuint (final_stage ()->graph->nodes->len, ==, fused_nodes);
  fb_window_clear_profile (window);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  const char *screenshot = g_getenv ("FB_TEST_SCREENSHOT");
  const char *model = g_getenv ("FB_TEST_SCREENSHOT_MODEL");
  int status;

  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("fusebench-profile-XXXXXX", &error);
  g_assert_no_error (error);
  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), screenshot != NULL ? 1600 : 1400, screenshot != NULL ? 1000 : 900);
  gtk_window_present (GTK_WINDOW (window));
  if (screenshot != NULL && model != NULL)
    {
      g_autoptr(GFile) file = g_file_new_for_commandline_arg (model);

      fb_window_open_file (window, file);
    }
  else
    fb_window_open_sample (window);
  settle ();
  if (screenshot != NULL)
    save_screenshot (screenshot);

  g_test_add_func ("/ui/profile/painted", test_painted);
  g_test_add_func ("/ui/profile/select-from-panel", test_select_from_panel);
  g_test_add_func ("/ui/profile/mismatch", test_mismatch);
  g_test_add_func ("/ui/profile/ab", test_ab);
  g_test_add_func ("/ui/profile/fixture", test_fixture);
  g_test_add_func ("/ui/profile/targets", test_targets);
  g_test_add_func ("/ui/profile/button", test_profile_button);
  g_test_add_func ("/ui/profile/button-ab", test_profile_button_ab);
  g_test_add_func ("/ui/profile/eager-baseline", test_eager_baseline);
  g_test_add_func ("/ui/profile/untraced-timing", test_untraced_timing);
  status = screenshot != NULL ? 0 : g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  {
    g_autoptr(GDir) dir = g_dir_open (tmp_dir, 0, NULL);
    const char *name;

    while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *path = g_build_filename (tmp_dir, name, NULL);

        g_unlink (path);
      }
  }
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  return status;
}
