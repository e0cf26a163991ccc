/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The workbench window on an export shaped like Paddle OCR's (tests/fixtures/ocr-like.onnx: a
 * third of its nodes Constants), read side by side the way a user comparing with Netron does:
 * constants are rows inside the boxes that read them until the "Show Constants as Nodes"
 * setting says otherwise, clicking a row inspects its constant on both sides, selecting a stage
 * scrolls both panes to what the pass changed, and fitting the tall graph keeps it readable. */
#include "fb-application.h"
#include "fb-window.h"

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

static FbStage *
select_stage (const char *name)
{
  int index = fb_run_find_stage (run (), name);

  g_assert_cmpint (index, >=, 0);
  fb_stage_list_select (fb_window_get_stage_list (window), index);
  settle ();
  g_assert_cmpint (fb_compare_view_get_stage (fb_window_get_compare_view (window)), ==, index);
  return fb_run_get_stage (run (), index);
}

static FbNode *
node_named (FbGraph    *graph,
            const char *name)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);

      if (g_strcmp0 (node->name, name) == 0)
        return node;
    }
  g_assert_not_reached ();
}

static guint
count_constant_items (FbGraphScene *scene)
{
  guint n = 0;

  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);

      n += item->kind == FB_SCENE_ITEM_NODE && item->node->op == FB_OP_CONSTANT;
    }
  return n;
}

static const FbSceneItem *
item_of (FbGraphView *view,
         FbNode      *node)
{
  FbGraphScene *scene = fb_graph_view_get_scene (view);
  int index = fb_graph_scene_find_node (scene, node);

  g_assert_cmpint (index, >=, 0);
  return fb_graph_scene_item (scene, index);
}

static void
visible_rect (FbGraphView     *view,
              graphene_rect_t *rect)
{
  double x, y, zoom;

  fb_graph_view_get_viewport (view, &x, &y, &zoom);
  graphene_rect_init (rect, x, y, gtk_widget_get_width (GTK_WIDGET (view)) / zoom,
                      gtk_widget_get_height (GTK_WIDGET (view)) / zoom);
}

static gboolean
shows (FbGraphView       *view,
       const FbSceneItem *item)
{
  graphene_rect_t visible;

  /* By hand: graphene compares a union in single precision, which rounding can make differ. */
  visible_rect (view, &visible);
  return item->x >= visible.origin.x && item->y >= visible.origin.y
         && item->x + item->width <= visible.origin.x + visible.size.width
         && item->y + item->height <= visible.origin.y + visible.size.height;
}

/* How many boxes (not frames) are at least partly on screen. */
static guint
n_on_screen (FbGraphView *view)
{
  FbGraphScene *scene = fb_graph_view_get_scene (view);
  graphene_rect_t visible, box;
  guint n = 0;

  visible_rect (view, &visible);
  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);

      graphene_rect_init (&box, item->x, item->y, item->width, item->height);
      n += item->kind != FB_SCENE_ITEM_FRAME && graphene_rect_intersection (&visible, &box, NULL);
    }
  return n;
}

/* The first node's box that has a row made by a Constant node. */
static const FbSceneItem *
first_constant_reader (FbGraphView *view)
{
  FbGraphScene *scene = fb_graph_view_get_scene (view);

  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);

      for (guint r = 0; r < item->n_rows; r++)
        if (item->rows[r].constant != NULL)
          return item;
    }
  return NULL;
}

static void
test_rows (void)
{
  FbStage *stage = select_stage ("import");
  FbGraphScene *scene = fb_graph_view_get_scene (after_view ());
  FbNode *add = node_named (stage->graph, "p2o.Add.0");
  const FbSceneItem *item;
  guint n_constants = 0;

  /* A third of the nodes are Constants: none is a box, each shows inside a reader's box. */
  for (guint i = 0; i < stage->graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (stage->graph->nodes, i);

      if (node->op != FB_OP_CONSTANT)
        continue;
      n_constants++;
      g_assert_true (fb_graph_layout_node_is_row (fb_graph_view_get_layout (after_view ()), node));
      g_assert_cmpint (fb_graph_scene_find_node (scene, node), >=, 0);
    }
  g_assert_cmpuint (n_constants * 3, >=, stage->graph->nodes->len);
  g_assert_cmpuint (count_constant_items (scene), ==, 0);
  /* HardSwish spelled out: x + 3 reads its 3 from a Constant, drawn in the Add's box. */
  item = item_of (after_view (), add);
  g_assert_cmpint (item->kind, ==, FB_SCENE_ITEM_NODE);
  g_assert_cmpuint (item->n_rows, ==, 1);
  g_assert_cmpint (item->rows[0].constant->op, ==, FB_OP_CONSTANT);
  g_assert_cmpuint (n_on_screen (after_view ()), >, 0);
}

static void
test_toggle (void)
{
  GSettings *settings = fb_application_get_settings (app);
  FbStage *stage = select_stage ("import");
  FbNode *add = node_named (stage->graph, "p2o.Add.0");
  FbNode *three = add->inputs[1]->producer;
  double with_row = item_of (after_view (), add)->height;
  const FbSceneItem *item;

  g_assert_false (g_settings_get_boolean (settings, "constants-as-nodes"));
  g_action_group_change_action_state (G_ACTION_GROUP (window), "constants-as-nodes", g_variant_new_boolean (TRUE));
  settle ();
  g_assert_true (g_settings_get_boolean (settings, "constants-as-nodes"));
  g_assert_cmpint (fb_compare_view_get_constants (fb_window_get_compare_view (window)), ==, FB_GRAPH_CONSTANTS_AS_NODES);
  /* Constants are boxes again, the Add's box lost its row, and the stage is still on show. */
  g_assert_cmpuint (count_constant_items (fb_graph_view_get_scene (after_view ())), >, 0);
  g_assert_true (fb_graph_view_get_graph (after_view ()) == stage->graph);
  item = item_of (after_view (), add);
  g_assert_cmpuint (item->n_rows, ==, 0);
  g_assert_cmpfloat (item->height, <, with_row);
  g_assert_true (item_of (after_view (), three)->node == three);
  g_assert_cmpuint (n_on_screen (after_view ()), >, 0);

  g_action_group_change_action_state (G_ACTION_GROUP (window), "constants-as-nodes", g_variant_new_boolean (FALSE));
  settle ();
  g_assert_false (g_settings_get_boolean (settings, "constants-as-nodes"));
  g_assert_cmpuint (count_constant_items (fb_graph_view_get_scene (after_view ())), ==, 0);
  g_assert_cmpfloat (item_of (after_view (), add)->height, ==, with_row);
}

/* Brings the row on screen and clicks in its middle, as the click gesture does. */
static void
click_row (FbGraphView       *view,
           const FbSceneItem *item,
           guint              row)
{
  FbGraphScene *scene = fb_graph_view_get_scene (view);
  int index = fb_graph_scene_find_node (scene, item->node);
  double x, y, w, h, wx, wy;

  g_assert_true (fb_graph_scene_row_rect (scene, index, row, &x, &y, &w, &h));
  fb_graph_view_set_viewport (view, x - 40, y - 40, 1.0);
  fb_graph_view_scene_to_widget (view, x + w / 2, y + h / 2, &wx, &wy);
  g_assert_cmpfloat (wx, <, gtk_widget_get_width (GTK_WIDGET (view)));
  g_assert_true (fb_graph_view_select_at (view, wx, wy));
  settle ();
}

static void
test_click_row (void)
{
  FbNodeInspector *inspector = fb_window_get_inspector (window);
  FbStage *stage = select_stage ("fold-constants");
  const FbSceneItem *item = first_constant_reader (before_view ());
  const FbConstantRow *row;
  const FbValue *selected;
  FbNode *conv;

  /* On the left (import), a Constant's row: the inspector shows the Constant node. */
  g_assert_nonnull (item);
  for (row = item->rows; row->constant == NULL; row++)
    ;
  click_row (before_view (), item, row - item->rows);
  g_assert_true (fb_graph_view_get_selected_node (before_view ()) == row->constant);
  g_assert_cmpstr (fb_node_inspector_get_title (inspector), ==, "Constant");
  /* On the right, fold-constants made it an initializer: the same value is selected there. */
  selected = fb_graph_view_get_selected_constant (after_view ());
  g_assert_nonnull (selected);
  g_assert_cmpuint (selected->id, ==, row->value->id);
  g_assert_null (selected->producer);
  g_assert_null (fb_graph_view_get_selected_node (after_view ()));

  /* On the right, a weight's row: an initializer, inspected as one. */
  conv = node_named (stage->graph, "p2o.Conv.0");
  item = item_of (after_view (), conv);
  g_assert_cmpuint (item->n_rows, >=, 1);
  g_assert_cmpuint (item->rows[0].input, ==, 1);
  click_row (after_view (), item, 0);
  g_assert_true (fb_graph_view_get_selected_constant (after_view ()) == conv->inputs[1]);
  g_assert_cmpstr (fb_node_inspector_get_title (inspector), ==, "Initializer");

  /* The box itself, away from its rows, is the node. */
  {
    double wx, wy;

    fb_graph_view_scene_to_widget (after_view (), item->x + 6, item->y + 6, &wx, &wy);
    g_assert_true (fb_graph_view_select_at (after_view (), wx, wy));
    settle ();
    g_assert_true (fb_graph_view_get_selected_node (after_view ()) == conv);
    g_assert_cmpstr (fb_node_inspector_get_title (inspector), ==, "Conv");
  }
}

/* The boxes of a view that show what the stage changed on that side. */
static guint
changed_on_screen (FbGraphView *view,
                   FbStage     *stage,
                   gboolean     before,
                   guint       *n_changed)
{
  FbGraphLayout *layout = fb_graph_view_get_layout (view);
  guint n = 0;

  *n_changed = 0;
  for (guint i = 0; i < stage->changes->len; i++)
    {
      const FbChange *change = &g_array_index (stage->changes, FbChange, i);
      gboolean here = change->kind == FB_CHANGE_CHANGED
                      || (before ? change->kind != FB_CHANGE_ADDED : change->kind == FB_CHANGE_ADDED);
      FbNode *node = here ? fb_graph_layout_find_node (layout, change->node_id) : NULL;

      if (node == NULL)
        continue;
      (*n_changed)++;
      n += shows (view, item_of (view, node));
    }
  return n;
}

static void
check_focus (const char *name)
{
  FbStage *stage;
  guint before_changed, after_changed, before_shown, after_shown;
  double x0, y0, z0, x1, y1, z1, width, height;

  /* Far from anything the pass did: the bottom right of the final graph. */
  select_stage ("final");
  fb_graph_scene_get_bounds (fb_graph_view_get_scene (after_view ()), &width, &height);
  fb_graph_view_set_viewport (after_view (), width, height, 1.0);
  g_assert_cmpuint (n_on_screen (after_view ()), ==, 0);

  stage = select_stage (name);
  g_assert_cmpuint (stage->changes->len, >, 0);
  before_shown = changed_on_screen (before_view (), stage, TRUE, &before_changed);
  after_shown = changed_on_screen (after_view (), stage, FALSE, &after_changed);
  /* Something the pass changed shows on each side where it changed anything, readable. */
  if (before_changed > 0)
    g_assert_cmpuint (before_shown, >, 0);
  if (after_changed > 0)
    g_assert_cmpuint (after_shown, >, 0);
  g_assert_cmpfloat (fb_graph_view_get_zoom (after_view ()), >=, FB_GRAPH_VIEW_READABLE_ZOOM);
  /* And the sides stay in step. */
  fb_graph_view_get_viewport (after_view (), &x0, &y0, &z0);
  fb_graph_view_get_viewport (before_view (), &x1, &y1, &z1);
  g_assert_cmpfloat (x0, ==, x1);
  g_assert_cmpfloat (y0, ==, y1);
  g_assert_cmpfloat (z0, ==, z1);
}

static void
test_focus (void)
{
  /* 125 Constants folded: too many for one screen, the screenful with the most of them. */
  check_focus ("fold-constants");
  /* Fused epilogues: new fused nodes on the right, their members on the left. */
  check_focus ("fuse-epilogue");
  check_focus ("simplify");
}

static void
test_fit_tall (void)
{
  FbGraphScene *scene;
  double width, height, h;
  const FbSceneItem *top = NULL;

  select_stage ("final");
  scene = fb_graph_view_get_scene (after_view ());
  fb_graph_scene_get_bounds (scene, &width, &height);
  h = gtk_widget_get_height (GTK_WIDGET (after_view ()));
  /* Fitting all of this chain would make a strip of unreadable boxes. */
  g_assert_cmpfloat (h / height, <, FB_GRAPH_VIEW_READABLE_ZOOM / 2);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-fit", NULL));
  settle ();
  g_assert_cmpfloat (fb_graph_view_get_zoom (after_view ()), >=, FB_GRAPH_VIEW_READABLE_ZOOM);
  g_assert_cmpfloat (height * fb_graph_view_get_zoom (after_view ()), >, 2 * h);
  /* From its first box. */
  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);

      if (item->kind == FB_SCENE_ITEM_NODE && (top == NULL || item->y < top->y))
        top = item;
    }
  g_assert_nonnull (top);
  g_assert_true (shows (after_view (), top));
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

  g_test_add_func ("/ui/window-ocr/rows", test_rows);
  g_test_add_func ("/ui/window-ocr/toggle", test_toggle);
  g_test_add_func ("/ui/window-ocr/click-row", test_click_row);
  g_test_add_func ("/ui/window-ocr/focus", test_focus);
  g_test_add_func ("/ui/window-ocr/fit-tall", test_fit_tall);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  return status;
}
