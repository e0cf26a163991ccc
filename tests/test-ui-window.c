/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The workbench window on the bundled sample model, in a real window: stages, the compare view,
 * toggles that re-run the pipeline, errors shown as messages. */
#include "fb-application.h"
#include "fb-window.h"

#include <glib/gstdio.h>
#include <string.h>

static FbApplication *app;
static FbWindow *window;

static gboolean
views_busy (void)
{
  FbCompareView *compare = fb_window_get_compare_view (window);

  return fb_graph_view_is_busy (fb_compare_view_get_before_view (compare))
         || fb_graph_view_is_busy (fb_compare_view_get_after_view (compare));
}

/* Runs the main loop until the window and both views have nothing left to do. */
static void
settle (void)
{
  while (fb_window_is_busy (window) || views_busy ())
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}

static FbRun *
run (void)
{
  FbRun *r = fb_window_get_run (window);

  g_assert_nonnull (r);
  return r;
}

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
select_stage (const char *name)
{
  int index = fb_run_find_stage (run (), name);

  g_assert_cmpint (index, >=, 0);
  fb_stage_list_select (fb_window_get_stage_list (window), index);
  settle ();
  g_assert_cmpint (fb_compare_view_get_stage (fb_window_get_compare_view (window)), ==, index);
}

static guint
count_op (FbGraph  *graph,
          FbOpKind  op)
{
  guint n = 0;

  for (guint i = 0; i < graph->nodes->len; i++)
    n += ((FbNode *) g_ptr_array_index (graph->nodes, i))->op == op;
  return n;
}

static void
test_sample (void)
{
  FbStageList *list = fb_window_get_stage_list (window);
  int selected = fb_stage_list_get_selected (list);

  g_assert_cmpuint (fb_stage_list_get_n_rows (list), ==, fb_run_n_stages (run ()));
  g_assert_cmpint (fb_run_find_stage (run (), "import"), ==, 0);
  g_assert_cmpint (fb_run_find_stage (run (), "final"), ==, (int) fb_run_n_stages (run ()) - 1);
  /* It opens on the first pass that changed something, shown before and after. */
  g_assert_cmpint (selected, >, 0);
  g_assert_cmpuint (fb_run_get_stage (run (), selected)->changes->len, >, 0);
  g_assert_true (fb_graph_view_get_graph (after_view ()) == fb_run_get_stage (run (), selected)->graph);
  g_assert_true (fb_graph_view_get_graph (before_view ()) == fb_run_get_stage (run (), selected - 1)->graph);
  g_assert_nonnull (fb_graph_view_get_scene (after_view ()));
  g_assert_null (fb_window_get_last_error (window));
}

static void
test_stages (void)
{
  for (guint i = 0; i < fb_run_n_stages (run ()); i++)
    {
      FbStage *stage = fb_run_get_stage (run (), i);
      FbGraphScene *scene;

      select_stage (stage->name);
      g_assert_true (fb_graph_view_get_graph (after_view ()) == stage->graph);
      if (i > 0)
        g_assert_true (fb_graph_view_get_graph (before_view ()) == fb_run_get_stage (run (), i - 1)->graph);
      g_assert_true (gtk_widget_get_visible (gtk_widget_get_parent (GTK_WIDGET (before_view ()))) == (i > 0));
      scene = fb_graph_view_get_scene (after_view ());
      g_assert_nonnull (scene);
      g_assert_cmpuint (fb_graph_scene_n_items (scene), >, 0);
      /* Every node of the stage is on screen or inside a box that is. */
      for (guint k = 0; k < stage->graph->nodes->len; k++)
        g_assert_cmpint (fb_graph_scene_find_node (scene, g_ptr_array_index (stage->graph->nodes, k)), >=, 0);
      if (i > 0)
        {
          double x0, y0, z0, x1, y1, z1;

          /* The two sides move together. */
          fb_graph_view_get_viewport (after_view (), &x0, &y0, &z0);
          fb_graph_view_get_viewport (before_view (), &x1, &y1, &z1);
          g_assert_cmpfloat (x0, ==, x1);
          g_assert_cmpfloat (y0, ==, y1);
          g_assert_cmpfloat (z0, ==, z1);
          fb_graph_view_zoom_in (before_view ());
          fb_graph_view_get_viewport (after_view (), &x0, &y0, &z0);
          g_assert_cmpfloat (z0, ==, fb_graph_view_get_zoom (before_view ()));
          fb_graph_view_zoom_to_fit (after_view ());
        }
    }
}

static void
test_selection (void)
{
  FbStage *stage;
  FbNode *fused = NULL;
  FbNode *selected;

  select_stage ("fuse-epilogue");
  stage = fb_run_get_stage (run (), fb_compare_view_get_stage (fb_window_get_compare_view (window)));
  for (guint i = 0; i < stage->graph->nodes->len && fused == NULL; i++)
    if (((FbNode *) g_ptr_array_index (stage->graph->nodes, i))->op == FB_OP_FUSED)
      fused = g_ptr_array_index (stage->graph->nodes, i);
  g_assert_nonnull (fused);

  /* Selecting the fused node selects one of its members on the left; the inspector shows it. */
  g_assert_true (fb_graph_view_select_node (after_view (), fused->id));
  settle ();
  g_assert_cmpstr (fb_node_inspector_get_title (fb_window_get_inspector (window)), ==, "Fused");
  selected = fb_graph_view_get_selected_node (before_view ());
  g_assert_nonnull (selected);
  for (guint i = 0; i < stage->changes->len; i++)
    {
      FbChange *change = &g_array_index (stage->changes, FbChange, i);

      if (change->node_id == selected->id)
        {
          g_assert_cmpint (change->kind, ==, FB_CHANGE_FUSED);
          g_assert_cmpuint (change->fused_into, ==, fused->id);
        }
    }
  g_assert_cmpint (fb_graph_view_get_mark (before_view (), selected), ==, FB_GRAPH_MARK_FUSED);
  g_assert_cmpint (fb_graph_view_get_mark (after_view (), fused), ==, FB_GRAPH_MARK_ADDED);

  /* And the other way round: a member on the left selects the fused node on the right. */
  fb_graph_view_clear_selection (after_view ());
  g_assert_true (fb_graph_view_select_node (before_view (), selected->id));
  settle ();
  g_assert_true (fb_graph_view_get_selected_node (after_view ()) == fused);
  g_assert_cmpstr (fb_node_inspector_get_title (fb_window_get_inspector (window)), ==, selected->op_type);
}

static void
test_toggle_pass (void)
{
  FbStageList *list = fb_window_get_stage_list (window);
  FbCompareView *compare = fb_window_get_compare_view (window);
  g_autoptr(FbRun) old = fb_run_ref (run ());
  int toggled = fb_run_find_stage (old, "fuse-epilogue");
  FbGraphLayout *kept_layout;
  guint fused_before, fused_after;
  double zoom;

  g_assert_cmpint (toggled, >, 1);
  kept_layout = fb_compare_view_get_layout (compare, toggled - 1);
  select_stage ("final");
  fused_before = count_op (fb_graph_view_get_graph (after_view ()), FB_OP_FUSED);
  g_assert_cmpuint (fused_before, >, 0);
  zoom = fb_graph_view_get_zoom (after_view ()) * 0.8;
  fb_graph_view_set_viewport (after_view (), 5, 7, zoom);

  /* Switching the epilogue fusion off re-runs the pipeline; the views follow. */
  g_assert_true (fb_stage_list_set_pass_enabled (list, "fuse-epilogue", FALSE));
  g_assert_true (fb_window_is_busy (window));
  settle ();
  g_assert_true (run () != old);
  g_assert_false (fb_run_get_stage (run (), fb_run_find_stage (run (), "fuse-epilogue"))->enabled);
  g_assert_true (g_strv_contains ((const char * const *) fb_run_get_options (run ())->disabled_passes->pdata, "fuse-epilogue")
                 || fb_run_get_options (run ())->disabled_passes->len > 0);
  /* Still on "final", now a different graph with other node counts: what was on screen may be
   * gone, and the panes open on the new graph as a stage switch does, not where they were. */
  g_assert_cmpint (fb_stage_list_get_selected (list), ==, fb_run_find_stage (run (), "final"));
  g_assert_true (fb_graph_view_get_graph (after_view ()) == fb_run_get_stage (run (), fb_run_find_stage (run (), "final"))->graph);
  fused_after = count_op (fb_graph_view_get_graph (after_view ()), FB_OP_FUSED);
  g_assert_cmpuint (fused_after, <, fused_before);
  g_assert_cmpuint (fb_graph_view_get_graph (after_view ())->nodes->len, >,
                    fb_run_get_stage (old, fb_run_find_stage (old, "final"))->graph->nodes->len);
  {
    double x, y;

    fb_graph_view_get_viewport (after_view (), &x, &y, NULL);
    g_assert_false (x == 5 && y == 7 && fb_graph_view_get_zoom (after_view ()) == zoom);
    g_assert_cmpfloat (fb_graph_view_get_zoom (after_view ()), >=, FB_GRAPH_VIEW_READABLE_ZOOM);
  }
  /* The re-run went on from the toggled pass: the stages before it are the very objects the old
   * run shows, with their layouts; the rest are new. */
  g_assert_cmpuint (fb_run_n_stages (run ()), ==, fb_run_n_stages (old));
  for (guint i = 0; i < fb_run_n_stages (run ()); i++)
    {
      if ((int) i < toggled)
        g_assert_true (fb_run_get_stage (run (), i) == fb_run_get_stage (old, i));
      else
        g_assert_true (fb_run_get_stage (run (), i) != fb_run_get_stage (old, i));
    }
  g_assert_true (fb_compare_view_get_layout (compare, toggled - 1) == kept_layout);
  g_assert_true (fb_graph_layout_get_graph (kept_layout) == fb_run_get_stage (old, toggled - 1)->graph);
  /* The old run's stages, replaced in the pipeline, are still whole for whoever holds them. */
  g_assert_true (fb_run_get_stage (old, toggled)->enabled);
  g_assert_cmpuint (count_op (fb_run_get_stage (old, fb_run_n_stages (old) - 1)->graph, FB_OP_FUSED), ==,
                    fused_before);

  /* And back on. */
  g_assert_true (fb_stage_list_set_pass_enabled (list, "fuse-epilogue", TRUE));
  settle ();
  g_assert_cmpuint (count_op (fb_graph_view_get_graph (after_view ()), FB_OP_FUSED), ==, fused_before);
  g_assert_true (fb_run_get_stage (run (), fb_run_find_stage (run (), "fuse-epilogue"))->enabled);
  for (int i = 0; i < toggled; i++)
    g_assert_true (fb_run_get_stage (run (), i) == fb_run_get_stage (old, i));
}

static void
test_no_fuse (void)
{
  FbGraph *graph;
  const char *name = NULL;

  select_stage ("final");
  graph = fb_graph_view_get_graph (after_view ());
  for (guint i = 0; i < graph->nodes->len && name == NULL; i++)
    if (((FbNode *) g_ptr_array_index (graph->nodes, i))->op == FB_OP_FUSED)
      name = ((FbNode *) g_ptr_array_index (graph->nodes, i))->name;
  g_assert_nonnull (name);
  name = g_strdup (name);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.no-fuse", "s", name));
  settle ();
  g_assert_cmpuint (fb_run_get_options (run ())->no_fuse->len, ==, 1);
  graph = fb_graph_view_get_graph (after_view ());
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);

      g_assert_false (node->op == FB_OP_FUSED && g_strcmp0 (node->name, name) == 0);
    }
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.allow-fuse", "s", name));
  settle ();
  g_assert_cmpuint (fb_run_get_options (run ())->no_fuse->len, ==, 0);
  g_free ((char *) name);
}

/* The window took the settings it was opened with (the layout main set before opening it,
 * the passes left enabled), and a new window takes what this one changed. */
static void
test_settings_taken (void)
{
  GSettings *settings = fb_application_get_settings (app);

  g_assert_cmpint (fb_run_get_options (run ())->layout, ==, FB_LAYOUT_NCHW);
  g_settings_set_string (settings, "layout", "nhwc");
  FbWindow *second = fb_window_new (app);
  g_assert_cmpint (g_settings_get_enum (settings, "layout"), ==, 1);
  GVariant *state = g_action_group_get_action_state (G_ACTION_GROUP (second), "layout");
  g_assert_cmpstr (g_variant_get_string (state, NULL), ==, "nhwc");
  g_variant_unref (state);
  gtk_window_destroy (GTK_WINDOW (second));
  g_settings_set_string (settings, "layout", "nchw");
  settle ();
  g_assert_cmpint (fb_run_get_options (run ())->layout, ==, FB_LAYOUT_NCHW);
}

static void
test_layout_toggle (void)
{
  g_assert_cmpint (fb_run_get_options (run ())->layout, ==, FB_LAYOUT_NCHW);
  g_action_group_change_action_state (G_ACTION_GROUP (window), "layout", g_variant_new_string ("nhwc"));
  settle ();
  g_assert_cmpint (fb_run_get_options (run ())->layout, ==, FB_LAYOUT_NHWC);
  select_stage ("layout");
  g_assert_true (fb_graph_view_get_graph (after_view ()) == fb_run_get_stage (run (), fb_run_find_stage (run (), "layout"))->graph);
  g_action_group_change_action_state (G_ACTION_GROUP (window), "layout", g_variant_new_string ("nchw"));
  settle ();
  g_assert_cmpint (fb_run_get_options (run ())->layout, ==, FB_LAYOUT_NCHW);
}

static void
test_bad_file (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("fusebench-test-XXXXXX", &error);
  g_autofree char *path = NULL;
  g_autoptr(GFile) file = NULL;
  FbRun *old = run ();

  g_assert_no_error (error);
  path = g_build_filename (dir, "broken.onnx", NULL);
  g_assert_true (g_file_set_contents (path, "this is not a model", -1, &error));
  file = g_file_new_for_path (path);

  /* The error is said, and the model on screen stays. */
  fb_window_open_file (window, file);
  settle ();
  g_assert_nonnull (fb_window_get_last_error (window));
  g_assert_nonnull (strstr (fb_window_get_last_error (window), "broken.onnx"));
  g_assert_true (run () == old);
  g_assert_nonnull (fb_graph_view_get_scene (after_view ()));

  g_unlink (path);
  g_rmdir (dir);
}

static gboolean
count_frame (GtkWidget     *widget,
             GdkFrameClock *clock,
             gpointer       data)
{
  guint *frames = data;

  (*frames)++;
  return G_SOURCE_CONTINUE;
}

/* Lets the window draw what it shows now. */
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

static void
test_cancel (void)
{
  FbStageList *list = fb_window_get_stage_list (window);
  FbRun *old = run ();

  /* Cancelling the re-run that a toggle started takes the toggle back. */
  g_assert_true (fb_stage_list_set_pass_enabled (list, "cse", FALSE));
  g_assert_true (fb_window_is_busy (window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.cancel", NULL));
  settle ();
  g_assert_false (fb_window_is_busy (window));
  g_assert_true (run () == old);
  g_assert_true (fb_stage_list_get_pass_enabled (list, "cse"));
  g_assert_null (fb_window_get_last_error (window));

  /* The next change runs from the restored options: nothing but the new toggle is off, and the
   * pipeline the cancelled run stopped in goes on from the first stage the change touches. */
  {
    g_autoptr(FbRun) shown = fb_run_ref (old);
    int simplify = fb_run_find_stage (shown, "simplify");

    g_assert_true (fb_stage_list_set_pass_enabled (list, "simplify", FALSE));
    settle ();
    g_assert_cmpuint (fb_run_get_options (run ())->disabled_passes->len, ==, 1);
    g_assert_cmpint (simplify, >, 0);
    for (int i = 0; i < (int) fb_run_n_stages (run ()); i++)
      g_assert_true ((fb_run_get_stage (run (), i) == fb_run_get_stage (shown, i)) == (i < simplify));
  }
  g_assert_true (fb_stage_list_set_pass_enabled (list, "simplify", TRUE));
  settle ();
  g_assert_cmpuint (fb_run_get_options (run ())->disabled_passes->len, ==, 0);
}

static void
test_search (void)
{
  select_stage ("import");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.search", NULL));
  settle ();
  /* What the search entry does when typed into. */
  g_assert_cmpuint (fb_graph_view_search (after_view (), "conv"), >, 0);
  g_assert_cmpstr (fb_graph_view_get_selected_node (after_view ())->op_type, ==, "Conv");
  g_assert_cmpstr (fb_node_inspector_get_title (fb_window_get_inspector (window)), ==, "Conv");
  fb_graph_view_search (after_view (), "");
}

static void
test_recent (void)
{
  g_autoptr(GFile) a = g_file_new_for_uri ("file:///models/a.onnx");
  g_autoptr(GFile) b = g_file_new_for_uri ("file:///models/b.onnx");
  const char * const *recent;

  fb_application_add_recent (app, a);
  fb_application_add_recent (app, b);
  fb_application_add_recent (app, a);
  recent = fb_application_get_recent (app);
  g_assert_cmpstr (recent[0], ==, "file:///models/a.onnx");
  g_assert_cmpstr (recent[1], ==, "file:///models/b.onnx");
  g_assert_cmpuint (g_strv_length ((char **) recent), ==, 2);
  g_assert_cmpint (g_menu_model_get_n_items (fb_application_get_recent_menu (app)), ==, 2);
  for (guint i = 0; i < 2 * FB_RECENT_MAX; i++)
    {
      g_autofree char *uri = g_strdup_printf ("file:///models/m%u.onnx", i);
      g_autoptr(GFile) file = g_file_new_for_uri (uri);

      fb_application_add_recent (app, file);
    }
  g_assert_cmpuint (g_strv_length ((char **) fb_application_get_recent (app)), ==, FB_RECENT_MAX);
}

static void
test_shortcuts_and_about (void)
{
  GtkWindow *overlay;
  GListModel *toplevels;
  GtkWindow *about = NULL;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-help-overlay", NULL));
  overlay = GTK_WINDOW (gtk_application_window_get_help_overlay (GTK_APPLICATION_WINDOW (window)));
  g_assert_nonnull (overlay);
  g_assert_true (GTK_IS_SHORTCUTS_WINDOW (overlay));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (overlay)));
  gtk_widget_set_visible (GTK_WIDGET (overlay), FALSE);

  g_action_group_activate_action (G_ACTION_GROUP (app), "about", NULL);
  toplevels = gtk_window_get_toplevels ();
  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GtkWindow) toplevel = g_list_model_get_item (toplevels, i);

      if (ADW_IS_ABOUT_WINDOW (toplevel))
        about = toplevel;
    }
  g_assert_nonnull (about);
  g_assert_cmpstr (adw_about_window_get_application_name (ADW_ABOUT_WINDOW (about)), ==, "Fusebench");
  gtk_window_destroy (about);
  settle ();
}

/* With FB_TEST_SCREENSHOT=FILE.png, also renders the window into that file (for the README);
 * FB_TEST_SCREENSHOT_MODEL names another model to show. */
static void
save_screenshot (const char *path)
{
  /* The window's content: a toplevel's own paintable draws nothing. */
  GtkWidget *widget = adw_application_window_get_content (ADW_APPLICATION_WINDOW (window));
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);

  gdk_paintable_snapshot (paintable, snapshot, width, height);
  node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_assert_true (gdk_texture_save_to_png (texture, path));
}

static void
open_window (void)
{
  const char *model = g_getenv ("FB_TEST_SCREENSHOT_MODEL");

  /* These tests walk the channels-first stages; the window takes the layout from the settings. */
  g_settings_set_string (fb_application_get_settings (app), "layout", "nchw");
  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 860);
  gtk_window_present (GTK_WINDOW (window));
  if (model != NULL)
    {
      g_autoptr(GFile) file = g_file_new_for_commandline_arg (model);

      fb_window_open_file (window, file);
    }
  else
    fb_window_open_sample (window);
  settle ();
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  const char *screenshot = g_getenv ("FB_TEST_SCREENSHOT");
  int status;

  g_test_init (&argc, &argv, NULL);
  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  open_window ();

  if (screenshot != NULL)
    {
      const char *stage = g_getenv ("FB_TEST_SCREENSHOT_STAGE");

      FbGraph *graph;

      select_stage (stage != NULL ? stage : "fuse-epilogue");
      /* Something in the inspector: a fused node, else the first node. */
      graph = fb_graph_view_get_graph (after_view ());
      for (guint i = 0; i < graph->nodes->len; i++)
        {
          FbNode *node = g_ptr_array_index (graph->nodes, i);

          if (node->op == FB_OP_FUSED || i + 1 == graph->nodes->len)
            {
              fb_graph_view_select_node (after_view (), node->id);
              break;
            }
        }
      settle ();
      draw_frames (3);
      save_screenshot (screenshot);
    }

  g_test_add_func ("/ui/window/sample", test_sample);
  g_test_add_func ("/ui/window/stages", test_stages);
  g_test_add_func ("/ui/window/selection", test_selection);
  g_test_add_func ("/ui/window/toggle-pass", test_toggle_pass);
  g_test_add_func ("/ui/window/no-fuse", test_no_fuse);
  g_test_add_func ("/ui/window/settings-taken", test_settings_taken);
  g_test_add_func ("/ui/window/layout", test_layout_toggle);
  g_test_add_func ("/ui/window/cancel", test_cancel);
  g_test_add_func ("/ui/window/search", test_search);
  g_test_add_func ("/ui/window/bad-file", test_bad_file);
  g_test_add_func ("/ui/window/recent", test_recent);
  g_test_add_func ("/ui/window/shortcuts-about", test_shortcuts_and_about);
  status = screenshot != NULL ? 0 : g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  return status;
}
