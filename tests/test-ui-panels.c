/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The graphs and the panels around them, in a 1280x1024 window with a recorded profile painted
 * and a node's code open: the graphs keep a usable height, a divider dragged too far stops
 * where the graphs would become a strip, each panel folds away from the View section of the
 * menu (and the graphs take the room), the panels' sizes and states are kept in the settings for
 * the next window, and after a fit no box lies under the legend or the minimap, in any stage. */
#include "fb-application.h"
#include "fb-window.h"
#include "fb-test-window.h"

#define GRAPHS_USABLE 300   /* px: the graphs' least height with every panel open */

static FbApplication *app;
static FbWindow *window;

static void
settle (void)
{
  test_window_settle (window);
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

/* Until widget's height holds still (a panel's slide has ended). */
static void
until_still (GtkWidget *widget)
{
  for (int last = -1, frames = 0; frames < 120 && gtk_widget_get_height (widget) != last; frames++)
    {
      last = gtk_widget_get_height (widget);
      draw_frames (5);
    }
}

static GtkWidget *
graphs (void)
{
  return GTK_WIDGET (fb_compare_view_get_after_view (fb_window_get_compare_view (window)));
}

static GtkWidget *
code_view (void)
{
  return GTK_WIDGET (fb_window_get_code_view (window));
}

static GtkWidget *
panel (void)
{
  return GTK_WIDGET (fb_window_get_profile_panel (window));
}

static gboolean
toggle_state (const char *name)
{
  g_autoptr(GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (window), name);

  g_assert_nonnull (state);
  return g_variant_get_boolean (state);
}

/* Both graph panes hold at least the usable height. */
static void
assert_graphs_usable (const char *when)
{
  FbCompareView *compare = fb_window_get_compare_view (window);
  int before = gtk_widget_get_height (GTK_WIDGET (fb_compare_view_get_before_view (compare)));
  int after = gtk_widget_get_height (graphs ());

  g_test_message ("%s: window %d, graphs %d/%d, panel %d, code %d", when,
                  gtk_widget_get_height (GTK_WIDGET (window)), before, after,
                  gtk_widget_get_visible (panel ()) ? gtk_widget_get_height (panel ()) : 0,
                  gtk_widget_get_visible (code_view ()) ? gtk_widget_get_height (code_view ()) : 0);
  g_assert_cmpint (before, >=, GRAPHS_USABLE);
  g_assert_cmpint (after, >=, GRAPHS_USABLE);
}

/* widget's left edge, in the window's coordinates. */
static double
left_edge (GtkWidget *widget)
{
  graphene_rect_t bounds;

  g_assert_true (gtk_widget_compute_bounds (widget, GTK_WIDGET (window), &bounds));
  return bounds.origin.x;
}

/* The middle column is never wider than the room between the stage list and the inspector:
 * what it cannot fit scrolls inside it rather than sliding under the stage list. */
static void
assert_middle_not_covered (void)
{
  GtkWidget *stages = GTK_WIDGET (fb_window_get_stage_list (window));
  graphene_rect_t list;
  FbCompareView *compare = fb_window_get_compare_view (window);

  g_assert_true (gtk_widget_compute_bounds (stages, GTK_WIDGET (window), &list));
  g_test_message ("stage list ends at %.0f; left pane at %.0f, code view at %.0f, panel at %.0f",
                  list.origin.x + list.size.width,
                  left_edge (GTK_WIDGET (fb_compare_view_get_before_view (compare))),
                  left_edge (code_view ()), left_edge (panel ()));
  g_assert_cmpfloat (left_edge (GTK_WIDGET (fb_compare_view_get_before_view (compare))), >=,
                     list.origin.x + list.size.width - 1);
  g_assert_cmpfloat (left_edge (code_view ()), >=, list.origin.x + list.size.width - 1);
  g_assert_cmpfloat (left_edge (panel ()), >=, list.origin.x + list.size.width - 1);
}

static void
open_profile_and_code (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures", "sample-cnn.profile.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  FbGraphView *after = FB_GRAPH_VIEW (graphs ());
  FbGraph *graph;

  fb_window_open_profile (window, file);
  while (fb_window_get_profile (window) == NULL && fb_window_get_last_error (window) == NULL)
    g_main_context_iteration (NULL, TRUE);
  settle ();
  g_assert_null (fb_window_get_last_error (window));
  g_assert_true (fb_window_is_profile_painted (window));
  graph = fb_graph_view_get_graph (after);
  g_assert_true (fb_graph_view_select_node (after, ((FbNode *) g_ptr_array_index (graph->nodes, 0))->id));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-kernel", NULL));
  settle ();
  draw_frames (3);
  g_assert_true (gtk_widget_get_mapped (panel ()));
  g_assert_true (gtk_widget_get_mapped (code_view ()));
}

static void
test_graphs_keep_room (void)
{
  GtkPaned *code_paned = GTK_PANED (gtk_widget_get_parent (code_view ()));
  GtkPaned *profile_paned = GTK_PANED (gtk_widget_get_parent (panel ()));
  int open_height;

  open_profile_and_code ();
  assert_graphs_usable ("opened");
  assert_middle_not_covered ();
  g_assert_cmpint (gtk_widget_get_height (graphs ()), >=, gtk_widget_get_height (GTK_WIDGET (window)) * 40 / 100);
  g_assert_cmpint (gtk_widget_get_height (code_view ()), >=, 120);
  g_assert_cmpint (gtk_widget_get_height (panel ()), >=, 120);

  /* The user drags both dividers nearly to the top: they stop where the graphs stay usable,
   * and the panels keep what they got. */
  gtk_paned_set_position (code_paned, 40);
  draw_frames (5);
  gtk_paned_set_position (profile_paned, 40);
  draw_frames (5);
  assert_graphs_usable ("dragged up");
  g_assert_cmpint (gtk_widget_get_height (code_view ()), >, 200);

  /* Folded from the View section, the panel is its header line and the graphs take the room. */
  open_height = gtk_widget_get_height (graphs ());
  g_assert_true (toggle_state ("profile-panel"));
  g_action_group_activate_action (G_ACTION_GROUP (window), "profile-panel", NULL);
  until_still (panel ());
  g_assert_false (fb_profile_panel_get_expanded (fb_window_get_profile_panel (window)));
  g_assert_false (toggle_state ("profile-panel"));
  g_assert_cmpint (gtk_widget_get_height (panel ()), <, 100);
  g_assert_cmpint (gtk_widget_get_height (graphs ()), >, open_height + 60);

  /* The code view likewise, gone altogether. */
  open_height = gtk_widget_get_height (graphs ());
  g_assert_true (toggle_state ("code-view"));
  g_action_group_activate_action (G_ACTION_GROUP (window), "code-view", NULL);
  draw_frames (5);
  g_assert_false (gtk_widget_get_visible (code_view ()));
  g_assert_false (toggle_state ("code-view"));
  g_assert_cmpint (gtk_widget_get_height (graphs ()), >, open_height + 100);

  /* And the inspector gives the graphs its width. */
  open_height = gtk_widget_get_width (graphs ());
  g_assert_true (toggle_state ("inspector"));
  g_action_group_activate_action (G_ACTION_GROUP (window), "inspector", NULL);
  draw_frames (5);
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (fb_window_get_inspector (window))));
  g_assert_cmpint (gtk_widget_get_width (graphs ()), >, open_height + 100);

  /* Opened again: where they were. */
  g_action_group_activate_action (G_ACTION_GROUP (window), "inspector", NULL);
  g_action_group_activate_action (G_ACTION_GROUP (window), "code-view", NULL);
  g_action_group_activate_action (G_ACTION_GROUP (window), "profile-panel", NULL);
  settle ();
  until_still (panel ());
  g_assert_true (toggle_state ("profile-panel"));
  g_assert_true (toggle_state ("code-view"));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (fb_window_get_inspector (window))));
  g_assert_cmpint (gtk_widget_get_height (panel ()), >=, 120);
  assert_graphs_usable ("opened again");
}

/* What the user made of the panels is what the next window starts with. */
static void
test_remembered (void)
{
  GSettings *settings = fb_application_get_settings (app);
  GtkPaned *code_paned = GTK_PANED (gtk_widget_get_parent (code_view ()));
  int code_height;
  FbWindow *second;

  g_assert_nonnull (settings);
  g_assert_true (gtk_widget_get_visible (code_view ()));
  gtk_paned_set_position (code_paned, gtk_paned_get_position (code_paned) + 37);
  draw_frames (5);
  code_height = gtk_widget_get_height (code_view ());
  /* Written once the drag rests. */
  while (g_settings_get_int (settings, "code-view-height") != code_height)
    g_main_context_iteration (NULL, TRUE);
  fb_profile_panel_set_expanded (fb_window_get_profile_panel (window), FALSE);
  until_still (panel ());
  g_assert_false (g_settings_get_boolean (settings, "profile-panel-expanded"));

  second = fb_window_new (app);
  g_assert_false (fb_profile_panel_get_expanded (fb_window_get_profile_panel (second)));
  gtk_window_destroy (GTK_WINDOW (second));

  fb_profile_panel_set_expanded (fb_window_get_profile_panel (window), TRUE);
  until_still (panel ());
  g_assert_true (g_settings_get_boolean (settings, "profile-panel-expanded"));
  assert_graphs_usable ("remembered");
}

/* The boxes of view's scene, in widget coordinates, that overlap rect. */
static guint
boxes_under (FbGraphView           *view,
             const graphene_rect_t *rect,
             const char            *what)
{
  FbGraphScene *scene = fb_graph_view_get_scene (view);
  guint n = 0;

  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);
      graphene_rect_t box;
      double x0, y0, x1, y1;

      if (item->kind == FB_SCENE_ITEM_FRAME)
        continue;
      fb_graph_view_scene_to_widget (view, item->x, item->y, &x0, &y0);
      fb_graph_view_scene_to_widget (view, item->x + item->width, item->y + item->height, &x1, &y1);
      box = GRAPHENE_RECT_INIT (x0, y0, x1 - x0, y1 - y0);
      if (graphene_rect_intersection (&box, rect, NULL))
        {
          g_test_message ("%s at %.0f,%.0f %.0fx%.0f covers a box at %.0f,%.0f %.0fx%.0f", what,
                          rect->origin.x, rect->origin.y, rect->size.width, rect->size.height,
                          x0, y0, x1 - x0, y1 - y0);
          n++;
        }
    }
  return n;
}

/* After a fit, in both panes: the legend shows (the profile is painted) and no box lies under
 * it or under the minimap. */
static void
assert_overlays_clear (const char *stage)
{
  FbCompareView *compare = fb_window_get_compare_view (window);
  FbGraphView *views[] = { fb_compare_view_get_before_view (compare), fb_compare_view_get_after_view (compare) };

  for (guint v = 0; v < G_N_ELEMENTS (views); v++)
    {
      graphene_rect_t rect;

      if (fb_graph_view_get_scene (views[v]) == NULL)
        continue;
      fb_graph_view_zoom_to_fit (views[v]);
      draw_frames (2);
      g_test_message ("stage %s, %s pane %dx%d", stage, v == 0 ? "before" : "after",
                      gtk_widget_get_width (GTK_WIDGET (views[v])), gtk_widget_get_height (GTK_WIDGET (views[v])));
      g_assert_true (fb_graph_view_get_overlay_rect (views[v], FB_GRAPH_OVERLAY_LEGEND, &rect));
      g_assert_cmpuint (boxes_under (views[v], &rect, "legend"), ==, 0);
      if (fb_graph_view_get_overlay_rect (views[v], FB_GRAPH_OVERLAY_MINIMAP, &rect))
        g_assert_cmpuint (boxes_under (views[v], &rect, "minimap"), ==, 0);
    }
}

static void
test_overlays_off_boxes (void)
{
  FbStageList *stages = fb_window_get_stage_list (window);
  FbRun *run = fb_window_get_run (window);

  g_assert_true (fb_window_is_profile_painted (window));
  assert_graphs_usable ("overlays");
  for (guint i = 0; i < fb_stage_list_get_n_rows (stages); i++)
    {
      fb_stage_list_select (stages, i);
      settle ();
      draw_frames (2);
      assert_overlays_clear (i < fb_run_n_stages (run) ? fb_run_get_stage (run, i)->name : "?");
    }
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 1024);
  gtk_window_present (GTK_WINDOW (window));
  fb_window_open_sample (window);
  settle ();

  g_test_add_func ("/ui/panels/graphs-keep-room", test_graphs_keep_room);
  g_test_add_func ("/ui/panels/remembered", test_remembered);
  g_test_add_func ("/ui/panels/overlays-off-boxes", test_overlays_off_boxes);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  return status;
}
