/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where the two panes look, on a recognizer big enough to be cut into "part N of M" groups
 * (tests/fixtures/ocr-like.onnx: flat names, 208 boxes as loaded): after opening, every stage
 * switch, a layout or fusion toggle and a profile, each pane shows what the pass changed on its
 * side, or the graph's top when it changed nothing; the groups that hold a change are open; and
 * a node sits in the same group on both sides. What a pane shows is read the way a user sees
 * it: its visible rectangle against the boxes of its scene. */
#include "fb-application.h"
#include "fb-profile-format.h"
#include "fb-window.h"
#include "fb-test-window.h"

#include <glib/gstdio.h>
#include <string.h>

static FbApplication *app;
static FbWindow *window;
static char *tmp_dir;

static gboolean
count_frame (GtkWidget     *widget,
             GdkFrameClock *clock,
             gpointer       data)
{
  (*(guint *) data)++;
  return G_SOURCE_CONTINUE;
}

/* Until the window has finished what it started and laid itself out for it: a pane shown or
 * hidden gets its new size at the next frame, and what the panes show is checked after it. */
static void
settle (void)
{
  test_window_settle (window);
  if (gtk_widget_get_mapped (GTK_WIDGET (window)))
    {
      guint frames = 0;
      guint id = gtk_widget_add_tick_callback (GTK_WIDGET (window), count_frame, &frames, NULL);

      while (frames < 2)
        {
          gtk_widget_queue_resize (GTK_WIDGET (window));
          g_main_context_iteration (NULL, TRUE);
        }
      gtk_widget_remove_tick_callback (GTK_WIDGET (window), id);
      test_window_settle (window);
    }
}

static FbCompareView *
compare (void)
{
  return fb_window_get_compare_view (window);
}

static FbGraphView *
after_view (void)
{
  return fb_compare_view_get_after_view (compare ());
}

static FbGraphView *
before_view (void)
{
  return fb_compare_view_get_before_view (compare ());
}

static FbRun *
run (void)
{
  g_assert_nonnull (fb_window_get_run (window));
  return fb_window_get_run (window);
}

static int
stage_index (const char *name)
{
  int index = fb_run_find_stage (run (), name);

  g_assert_cmpint (index, >=, 0);
  return index;
}

static void
visible_rect (FbGraphView *view,
              double      *x0,
              double      *y0,
              double      *x1,
              double      *y1)
{
  double zoom;

  fb_graph_view_get_viewport (view, x0, y0, &zoom);
  *x1 = *x0 + gtk_widget_get_width (GTK_WIDGET (view)) / zoom;
  *y1 = *y0 + gtk_widget_get_height (GTK_WIDGET (view)) / zoom;
}

/* The whole box inside the pane's visible rectangle. */
static gboolean
shows (FbGraphView       *view,
       const FbSceneItem *item)
{
  double x0, y0, x1, y1;

  visible_rect (view, &x0, &y0, &x1, &y1);
  return item->x >= x0 && item->y >= y0 && item->x + item->width <= x1 && item->y + item->height <= y1;
}

/* Boxes (not frames) at least partly in the pane. */
static guint
n_on_screen (FbGraphView *view)
{
  FbGraphScene *scene = fb_graph_view_get_scene (view);
  double x0, y0, x1, y1;
  guint n = 0;

  visible_rect (view, &x0, &y0, &x1, &y1);
  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);

      n += item->kind != FB_SCENE_ITEM_FRAME && item->x < x1 && item->x + item->width > x0
           && item->y < y1 && item->y + item->height > y0;
    }
  return n;
}

static const FbSceneItem *
topmost (FbGraphView *view)
{
  FbGraphScene *scene = fb_graph_view_get_scene (view);
  const FbSceneItem *top = NULL;

  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);

      if (item->kind != FB_SCENE_ITEM_FRAME && (top == NULL || item->y < top->y))
        top = item;
    }
  g_assert_nonnull (top);
  return top;
}

/* The nodes of view that stage changed on that side: added and changed ones on the right,
 * removed, fused and changed ones on the left. */
static GPtrArray *
changed_nodes (FbGraphView *view,
               FbStage     *stage,
               gboolean     before)
{
  FbGraphLayout *layout = fb_graph_view_get_layout (view);
  GPtrArray *nodes = g_ptr_array_new ();

  for (guint i = 0; stage->changes != NULL && i < stage->changes->len; i++)
    {
      const FbChange *change = &g_array_index (stage->changes, FbChange, i);
      gboolean here = change->kind == FB_CHANGE_CHANGED
                      || (before ? change->kind != FB_CHANGE_ADDED : change->kind == FB_CHANGE_ADDED);
      FbNode *node = here ? fb_graph_layout_find_node (layout, change->node_id) : NULL;

      if (node != NULL)
        g_ptr_array_add (nodes, node);
    }
  return nodes;
}

/* One pane: not blank, readable; with changes on its side, their groups open and at least one
 * changed box whole on screen. Returns how many changed nodes it has. */
static guint
check_pane (FbGraphView *view,
            FbStage     *stage,
            gboolean     before,
            const char  *when)
{
  FbGraphScene *scene = fb_graph_view_get_scene (view);
  g_autoptr(GPtrArray) nodes = NULL;
  guint shown = 0;

  g_test_message ("%s: %s pane of %s", when, before ? "left" : "right", stage->name);
  g_assert_nonnull (scene);
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (view)), >, 0);
  if (n_on_screen (view) == 0)
    g_error ("%s: the %s pane of %s is blank", when, before ? "left" : "right", stage->name);
  g_assert_cmpfloat (fb_graph_view_get_zoom (view), >=, FB_GRAPH_VIEW_READABLE_ZOOM);
  nodes = changed_nodes (view, stage, before);
  for (guint i = 0; i < nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (nodes, i);
      int index = fb_graph_scene_find_node (scene, node);
      const FbSceneItem *item;

      g_assert_cmpint (index, >=, 0);
      item = fb_graph_scene_item (scene, index);
      /* Not hidden in a collapsed group: every group around it is open. */
      if (item->kind != FB_SCENE_ITEM_NODE)
        g_error ("%s: %s (%s) of %s is inside the collapsed group %s", when, node->name,
                 before ? "left" : "right", stage->name, fb_graph_group_get_path (item->group));
      shown += shows (view, item);
    }
  if (nodes->len > 0 && shown == 0)
    g_error ("%s: none of the %u nodes %s changed shows in the %s pane", when, nodes->len,
             stage->name, before ? "left" : "right");
  return nodes->len;
}

/* The innermost group of every node on both sides has the same path: the same parts hold the
 * same nodes. */
static void
check_same_groups (FbStage *stage)
{
  FbGraphLayout *left = fb_graph_view_get_layout (before_view ());
  FbGraphLayout *right = fb_graph_view_get_layout (after_view ());
  FbGraph *graph = fb_graph_layout_get_graph (right);
  guint n_both = 0;

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);
      FbNode *other = fb_graph_layout_find_node (left, node->id);
      const char *path, *other_path;

      if (other == NULL || fb_graph_layout_node_is_row (right, node) || fb_graph_layout_node_is_row (left, other))
        continue;
      n_both++;
      path = fb_graph_group_get_path (fb_graph_layout_node_group (right, node));
      other_path = fb_graph_group_get_path (fb_graph_layout_node_group (left, other));
      if (g_strcmp0 (path, other_path) != 0)
        g_error ("%s: %s is in %s on the left and in %s on the right", stage->name, node->name,
                 other_path, path);
    }
  g_assert_cmpuint (n_both, >, 0);
}

/* What both panes show for the stage on screen. */
static void
check_panes (const char *when)
{
  int index = fb_compare_view_get_stage (compare ());
  FbStage *stage = fb_run_get_stage (run (), index);
  guint n_changed;
  double x0, y0, z0, x1, y1, z1;

  g_assert_cmpint (index, >=, 0);
  n_changed = check_pane (after_view (), stage, FALSE, when);
  if (index == 0)
    {
      g_assert_true (shows (after_view (), topmost (after_view ())));
      return;
    }
  g_assert_true (fb_graph_view_get_graph (before_view ()) == fb_run_get_stage (run (), index - 1)->graph);
  n_changed += check_pane (before_view (), stage, TRUE, when);
  /* Nothing changed: both open on the graph's top. */
  if (n_changed == 0)
    {
      if (!shows (after_view (), topmost (after_view ())))
        g_error ("%s: %s changed nothing, and the top of its graph is off screen", when, stage->name);
      if (!shows (before_view (), topmost (before_view ())))
        {
          const FbSceneItem *l = topmost (before_view ()), *r = topmost (after_view ());
          double lx0, ly0, lx1, ly1, rx0, ry0, rx1, ry1;

          visible_rect (before_view (), &lx0, &ly0, &lx1, &ly1);
          visible_rect (after_view (), &rx0, &ry0, &rx1, &ry1);
          g_error ("%s: the top of the left graph is off screen: %g,%g %gx%g in %g,%g-%g,%g "
                   "(right: %g,%g %gx%g in %g,%g-%g,%g)", when, l->x, l->y, l->width, l->height,
                   lx0, ly0, lx1, ly1, r->x, r->y, r->width, r->height, rx0, ry0, rx1, ry1);
        }
    }
  fb_graph_view_get_viewport (after_view (), &x0, &y0, &z0);
  fb_graph_view_get_viewport (before_view (), &x1, &y1, &z1);
  g_assert_cmpfloat (x0, ==, x1);
  g_assert_cmpfloat (y0, ==, y1);
  g_assert_cmpfloat (z0, ==, z1);
  check_same_groups (stage);
}

/* The user panned far from anything: the bottom right of the picture. */
static void
pan_away (void)
{
  FbGraphScene *scene = fb_graph_view_get_scene (after_view ());
  double width, height;

  fb_graph_scene_get_bounds (scene, &width, &height);
  fb_graph_view_set_viewport (after_view (), width, height, 1.0);
  g_assert_cmpuint (n_on_screen (after_view ()), ==, 0);
}

static void
select_stage (int index)
{
  pan_away ();
  fb_stage_list_select (fb_window_get_stage_list (window), index);
  settle ();
  g_assert_cmpint (fb_compare_view_get_stage (compare ()), ==, index);
}

static void
test_open (void)
{
  /* The first stage that changed something, on screen as the window opens. */
  g_assert_cmpint (fb_compare_view_get_stage (compare ()), >, 0);
  check_panes ("open");
}

static void
test_stages (void)
{
  int n = fb_run_n_stages (run ());
  const char *jumps[] = { "import", "final", "simplify", "final", "fold-batchnorm", "fold-constants" };

  for (int i = 0; i < n; i++)
    {
      select_stage (i);
      check_panes ("stage by stage");
    }
  for (guint i = 0; i < G_N_ELEMENTS (jumps); i++)
    {
      select_stage (stage_index (jumps[i]));
      check_panes ("jumping");
    }
}

/* The recognizer's flat list of boxes is cut into parts both before and after simplify, which
 * removes 60 of them: the parts must hold the same nodes on both sides. */
static void
test_parts (void)
{
  FbGraphGroup *root;
  guint n_parts = 0;

  select_stage (stage_index ("simplify"));
  root = fb_graph_layout_get_root (fb_graph_view_get_layout (before_view ()));
  for (guint i = 0; i < fb_graph_group_get_n_children (root); i++)
    {
      FbGraphGroup *group = fb_graph_group_get_child_group (root, i);

      n_parts += group != NULL && g_str_has_prefix (fb_graph_group_get_label (group), "part ");
    }
  g_assert_cmpuint (n_parts, >=, 2);
  check_panes ("parts");
}

/* Runs a toggle the way the user does, panned away from anything first, and checks that it
 * redid the stage on screen (so that what was on screen may be gone): both panes then show what
 * the stage changed. */
static void
toggle (const char *action,
        GVariant   *parameter)
{
  int index = fb_compare_view_get_stage (compare ());
  FbStage *shown = fb_run_get_stage (run (), index);

  pan_away ();
  g_assert_true (gtk_widget_activate_action_variant (GTK_WIDGET (window), action, parameter));
  settle ();
  g_assert_cmpint (fb_compare_view_get_stage (compare ()), ==, index);
  if (fb_run_get_stage (run (), index) == shown)
    g_error ("%s kept the stage %s on screen", action, shown->name);
  check_panes (action);
}

static void
test_toggles (void)
{
  /* The channels-last layout (the default) inserts transposes, the channels-first one none:
     the layout stage and all after it are redone. */
  g_assert_cmpint (fb_run_get_options (run ())->layout, ==, FB_LAYOUT_NHWC);
  select_stage (stage_index ("layout"));
  toggle ("win.layout", g_variant_new_string ("nchw"));
  g_assert_cmpint (fb_run_get_options (run ())->layout, ==, FB_LAYOUT_NCHW);
  select_stage (stage_index ("final"));
  toggle ("win.layout", g_variant_new_string ("nhwc"));
  g_assert_cmpint (fb_run_get_options (run ())->layout, ==, FB_LAYOUT_NHWC);

  /* A pass switched off and on again, from the stage list, and a node kept out of fusion. */
  select_stage (stage_index ("fuse-elementwise"));
  toggle ("win.toggle-pass", g_variant_new_string ("fuse-epilogue"));
  toggle ("win.toggle-pass", g_variant_new_string ("fuse-epilogue"));
  select_stage (stage_index ("fuse-epilogue"));
  toggle ("win.no-fuse", g_variant_new_string ("p2o.Conv.3"));
  toggle ("win.allow-fuse", g_variant_new_string ("p2o.Conv.3"));
}

/* A toggle that redoes only stages after the one on screen keeps where the user looks. */
static void
test_toggle_later (void)
{
  int index = stage_index ("simplify");
  FbStage *shown;
  double x0, y0, z0, x1, y1, z1;

  select_stage (index);
  shown = fb_run_get_stage (run (), index);
  fb_graph_view_get_viewport (after_view (), &x0, &y0, &z0);
  fb_graph_view_set_viewport (after_view (), x0 + 40, y0 + 30, z0);
  fb_graph_view_get_viewport (after_view (), &x0, &y0, &z0);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.toggle-pass", "s", "fuse-epilogue"));
  settle ();
  g_assert_true (fb_run_get_stage (run (), index) == shown);
  fb_graph_view_get_viewport (after_view (), &x1, &y1, &z1);
  g_assert_cmpfloat (x0, ==, x1);
  g_assert_cmpfloat (y0, ==, y1);
  g_assert_cmpfloat (z0, ==, z1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.toggle-pass", "s", "fuse-epilogue"));
  settle ();
}

/* A profile of the run on screen, every kernel 10 µs, as `fusebench profile` writes one. */
static FbProfile *
make_profile (void)
{
  FbRun *r = run ();
  FbGraph *graph = fb_run_get_stage (r, fb_run_n_stages (r) - 1)->graph;
  FbModel *model = graph->model;
  FbProfile *profile = fb_profile_new ();

  profile->model = g_strdup ("ocr-like.onnx");
  profile->model_digest = fb_profile_model_digest (model);
  profile->target = g_strdup ("cpu");
  profile->device.name = g_strdup ("Test CPU");
  profile->device.peak_gflops = 100;
  profile->device.peak_gbps = 20;
  fb_pipeline_options_free (profile->pipeline);
  profile->pipeline = fb_pipeline_options_copy (fb_run_get_options (r));
  profile->iterations = 10;
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);
      FbProfileKernel *kernel;

      if (node->n_prov == 0)
        continue;
      kernel = fb_profile_kernel_new ();
      kernel->id = profile->kernels->len;
      kernel->name = g_strdup_printf ("fbk_%s_%u", node->op_type, node->id);
      kernel->stage_node = node->id;
      for (guint p = 0; p < node->n_prov; p++)
        {
          double share = 1.0 / node->n_prov;

          g_ptr_array_add (kernel->nodes, g_strdup (fb_model_orig_name (model, node->prov[p])));
          g_array_append_val (kernel->node_shares, share);
        }
      kernel->calls = 1;
      kernel->median_us = kernel->min_us = kernel->max_us = 10;
      g_ptr_array_add (profile->kernels, kernel);
    }
  profile->busy_ms = fb_profile_total_us (profile) / 1000;
  profile->wall_median_ms = profile->wall_min_ms = profile->wall_max_ms = profile->busy_ms;
  return profile;
}

static void
test_profile (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbProfile) profile = NULL;
  g_autofree char *path = g_build_filename (tmp_dir, "ocr-like.profile.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);

  select_stage (stage_index ("fuse-elementwise"));
  profile = make_profile ();
  g_assert_true (fb_profile_save (profile, path, &error));
  g_assert_no_error (error);
  pan_away ();
  fb_window_open_profile (window, file);
  while (fb_window_get_profile (window) == NULL)
    g_main_context_iteration (NULL, TRUE);
  settle ();
  g_assert_true (fb_window_is_profile_painted (window));
  /* The panel took some of the panes' height; they still show what the stage changed. */
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (fb_window_get_profile_panel (window))));
  check_panes ("profile");
  select_stage (stage_index ("final"));
  check_panes ("profile, final");
}

/* Waits until view has been given a size other than old_width x old_height. */
static void
wait_for_size (FbGraphView *view,
               int          old_width,
               int          old_height)
{
  while (gtk_widget_get_width (GTK_WIDGET (view)) == old_width
         && gtk_widget_get_height (GTK_WIDGET (view)) == old_height)
    g_main_context_iteration (NULL, TRUE);
  settle ();
}

/* A changed box shown in the middle of the pane stays on screen when the pane gets smaller, as
 * it does when the window shrinks or a panel opens under the graphs. */
static void
test_resize (void)
{
  FbStage *stage;
  g_autoptr(GPtrArray) nodes = NULL;
  const FbSceneItem *item;
  graphene_rect_t rect;
  int width, height;

  select_stage (stage_index ("cse"));
  stage = fb_run_get_stage (run (), stage_index ("cse"));
  nodes = changed_nodes (after_view (), stage, FALSE);
  g_assert_cmpuint (nodes->len, >, 0);
  item = fb_graph_scene_item (fb_graph_view_get_scene (after_view ()),
                              fb_graph_scene_find_node (fb_graph_view_get_scene (after_view ()),
                                                        g_ptr_array_index (nodes, nodes->len - 1)));
  graphene_rect_init (&rect, item->x, item->y, item->width, item->height);
  fb_graph_view_show_rects (after_view (), &rect, 1);
  g_assert_true (shows (after_view (), item));
  width = gtk_widget_get_width (GTK_WIDGET (after_view ()));
  height = gtk_widget_get_height (GTK_WIDGET (after_view ()));
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 420);
  wait_for_size (after_view (), width, height);
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (after_view ())), <, height / 2);
  g_assert_true (shows (after_view (), item));
  check_panes ("smaller window");

  height = gtk_widget_get_height (GTK_WIDGET (after_view ()));
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 860);
  wait_for_size (after_view (), width, height);
  g_assert_true (shows (after_view (), item));
}

/* The window gets its size only after the passes ran and a stage was chosen: both panes show
 * that stage's changes (or its top) once they have one, not what a fit without a size made. */
static void
check_unallocated (const char *name)
{
  FbWindow *shown = window;
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures", "ocr-like.onnx", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);

  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 860);
  fb_window_open_file (window, file);
  settle ();
  fb_stage_list_select (fb_window_get_stage_list (window), stage_index (name));
  settle ();
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (after_view ())), ==, 0);
  gtk_window_present (GTK_WINDOW (window));
  wait_for_size (after_view (), 0, 0);
  check_panes ("shown late");
  gtk_window_destroy (GTK_WINDOW (window));
  window = shown;
  settle ();
}

static void
test_unallocated (void)
{
  check_unallocated ("final");
  check_unallocated ("simplify");
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GFile) file = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("fb-panes-XXXXXX", &error);
  g_assert_no_error (error);
  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 860);
  gtk_window_present (GTK_WINDOW (window));
  path = g_test_build_filename (G_TEST_DIST, "fixtures", "ocr-like.onnx", NULL);
  file = g_file_new_for_path (path);
  fb_window_open_file (window, file);
  settle ();
  g_assert_null (fb_window_get_last_error (window));

  g_test_add_func ("/ui/panes/open", test_open);
  g_test_add_func ("/ui/panes/stages", test_stages);
  g_test_add_func ("/ui/panes/parts", test_parts);
  g_test_add_func ("/ui/panes/toggles", test_toggles);
  g_test_add_func ("/ui/panes/toggle-later", test_toggle_later);
  g_test_add_func ("/ui/panes/profile", test_profile);
  g_test_add_func ("/ui/panes/resize", test_resize);
  g_test_add_func ("/ui/panes/unallocated", test_unallocated);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  g_free (path);
  path = g_build_filename (tmp_dir, "ocr-like.profile.json", NULL);
  g_unlink (path);
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  return status;
}
