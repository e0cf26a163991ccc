/* SPDX-License-Identifier: GPL-3.0-or-later */
/* "Everything open" on a big graph in a real window: the first screen shows laid-out boxes soon
 * (groups laid out on every core, groups of one structure laid out once, partial scenes while
 * the rest goes on), and the layout that ends up on screen is the serial one, without overlaps. */
#include "fb-graph-layout.h"
#include "fb-graph-view.h"
#include "fb-ui.h"

#include <adwaita.h>

/* Far above what the first screen of 30,000 nodes takes now (under a second here), far below
 * what laying out its 4,200 groups one after another took (over 6 s here). */
#define FIRST_SCREEN_BOUND_S 4.0

static const char *blocks[] = { "attention/self", "attention/output", "intermediate", "output", "norm" };

/* n_layers layers of five blocks of up to ten nodes under "/encoder/layer.K/...". varied: nodes
 * left out and binary ops reading earlier nodes of their block, picked by the block's number, so
 * that blocks differ in structure and many groups need a Graphviz run of their own. */
static FbGraph *
build_layers (guint    n_layers,
              gboolean varied)
{
  static const FbOpKind ops[10] = {
    FB_OP_MATMUL, FB_OP_ADD, FB_OP_RESHAPE, FB_OP_TRANSPOSE, FB_OP_MATMUL,
    FB_OP_DIV, FB_OP_SOFTMAX, FB_OP_MATMUL, FB_OP_TRANSPOSE, FB_OP_ADD,
  };
  g_autoptr(FbModel) model = fb_model_new (NULL);
  FbGraph *graph = fb_graph_new (model);
  int64_t dims[] = { 1, 128, 768 };
  FbShape shape = fb_shape_make (3, dims);
  FbValue *h = fb_graph_add_value (graph, "input_ids", FB_DTYPE_FLOAT32, &shape);

  h->is_input = TRUE;
  g_ptr_array_add (graph->inputs, h);
  for (guint layer = 0; layer < n_layers; layer++)
    {
      FbValue *residual = h;

      for (guint b = 0; b < G_N_ELEMENTS (blocks); b++)
        {
          FbValue *made[G_N_ELEMENTS (ops)];

          for (guint k = 0; k < G_N_ELEMENTS (ops); k++)
            {
              g_autofree char *name = g_strdup_printf ("/encoder/layer.%u/%s/%s_%u", layer, blocks[b],
                                                       fb_op_name (ops[k]), k);
              g_autofree char *value_name = g_strconcat (name, "_output_0", NULL);
              gboolean binary = fb_op_info (ops[k])->min_inputs == 2;
              gboolean last = b == G_N_ELEMENTS (blocks) - 1 && k == G_N_ELEMENTS (ops) - 1;
              guint32 mix = (layer + 1) * 2654435761u ^ (b + 1) * 40503u ^ (k + 1) * 2246822519u;
              FbNode *node;
              FbValue *out;

              mix ^= mix >> 15;
              mix *= 0x2c1b3c6du;
              mix ^= mix >> 12;
              made[k] = h;
              if (varied && !last && k > 0 && mix % 5 == 0)
                continue;
              node = fb_graph_add_node (graph, ops[k], name, binary ? 2 : 1, 1);
              out = fb_graph_add_value (graph, value_name, FB_DTYPE_FLOAT32, &shape);
              node->inputs[0] = h;
              if (binary)
                node->inputs[1] = last ? residual : varied && k > 1 ? made[(mix >> 8) % (k - 1)] : h;
              fb_node_set_output (node, 0, out);
              h = made[k] = out;
            }
        }
    }
  h->is_output = TRUE;
  g_ptr_array_add (graph->outputs, h);
  return graph;
}

static GtkWidget *
show_view (FbGraphView *view)
{
  GtkWidget *window = gtk_window_new ();

  gtk_window_set_default_size (GTK_WINDOW (window), 1024, 768);
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  gtk_window_present (GTK_WINDOW (window));
  while (gtk_widget_get_width (GTK_WIDGET (view)) == 0)
    g_main_context_iteration (NULL, TRUE);
  return window;
}

static void
wait_layout (FbGraphView *view)
{
  while (fb_graph_view_is_busy (view) || fb_graph_view_get_scene (view) == NULL)
    g_main_context_iteration (NULL, TRUE);
}

/* The node boxes the viewport shows. */
static guint
nodes_on_screen (FbGraphView  *view,
                 FbGraphScene *scene)
{
  double x0, y0, zoom, x1, y1;
  guint n = 0;

  fb_graph_view_get_viewport (view, &x0, &y0, &zoom);
  x1 = x0 + gtk_widget_get_width (GTK_WIDGET (view)) / zoom;
  y1 = y0 + gtk_widget_get_height (GTK_WIDGET (view)) / zoom;
  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);

      n += item->kind == FB_SCENE_ITEM_NODE && item->x < x1 && item->x + item->width > x0
           && item->y < y1 && item->y + item->height > y0;
    }
  return n;
}

/* Boxes side by side in one frame (or at the top) never overlap, nor stick out of their frame. */
static void
assert_disjoint (FbGraphScene *scene)
{
  g_autoptr(GHashTable) by_parent = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_array_unref);
  GHashTableIter iter;
  gpointer key, value;

  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);
      GArray *siblings = g_hash_table_lookup (by_parent, GINT_TO_POINTER (item->parent));

      if (siblings == NULL)
        {
          siblings = g_array_new (FALSE, FALSE, sizeof (guint));
          g_hash_table_insert (by_parent, GINT_TO_POINTER (item->parent), siblings);
        }
      g_array_append_val (siblings, i);
      if (item->parent >= 0)
        {
          const FbSceneItem *frame = fb_graph_scene_item (scene, item->parent);

          g_assert_cmpfloat (item->x, >=, frame->x - 0.01);
          g_assert_cmpfloat (item->y, >=, frame->y - 0.01);
          g_assert_cmpfloat (item->x + item->width, <=, frame->x + frame->width + 0.01);
          g_assert_cmpfloat (item->y + item->height, <=, frame->y + frame->height + 0.01);
        }
    }
  g_hash_table_iter_init (&iter, by_parent);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      GArray *siblings = value;

      /* Sorted by top edge: only the boxes that start above one's bottom can overlap it. */
      for (guint a = 0; a < siblings->len; a++)
        for (guint b = a + 1; b < siblings->len; b++)
          {
            const FbSceneItem *p = fb_graph_scene_item (scene, g_array_index (siblings, guint, a));
            const FbSceneItem *q = fb_graph_scene_item (scene, g_array_index (siblings, guint, b));

            if (p->x < q->x + q->width && q->x < p->x + p->width
                && p->y < q->y + q->height && q->y < p->y + p->height)
              g_error ("boxes %u and %u of one frame overlap: (%g,%g %gx%g) and (%g,%g %gx%g)",
                       g_array_index (siblings, guint, a), g_array_index (siblings, guint, b),
                       p->x, p->y, p->width, p->height, q->x, q->y, q->width, q->height);
          }
    }
}

static void
open_everything (FbGraphView   *view,
                 FbGraphLayout *layout)
{
  g_autoptr(GHashTable) all = fb_graph_layout_default_expansion (layout, G_MAXUINT);
  GHashTableIter iter;
  gpointer path;

  /* One group at a time, as a user's "open all" goes through the view. */
  g_hash_table_iter_init (&iter, all);
  while (g_hash_table_iter_next (&iter, &path, NULL))
    fb_graph_view_set_group_expanded (view, path, TRUE);
}

static void
test_everything_open_first_screen (void)
{
  g_autoptr(FbGraph) graph = build_layers (600, FALSE);
  g_autoptr(FbGraphLayout) layout = fb_graph_layout_new (graph, NULL, NULL);
  FbGraphView *view = FB_GRAPH_VIEW (fb_graph_view_new ());
  GtkWidget *window = show_view (view);
  g_autoptr(FbGraphScene) before = NULL;
  gint64 t0;
  double first = -1;

  g_assert_cmpuint (graph->nodes->len, ==, 30000);
  fb_graph_view_set_layout (view, layout);
  wait_layout (view);
  before = fb_graph_scene_ref (fb_graph_view_get_scene (view));
  g_assert_cmpuint (nodes_on_screen (view, before), ==, 0);

  t0 = g_get_monotonic_time ();
  open_everything (view, layout);
  while (fb_graph_view_is_busy (view) || fb_graph_view_get_scene (view) == before)
    {
      FbGraphScene *scene;

      g_main_context_iteration (NULL, TRUE);
      scene = fb_graph_view_get_scene (view);
      if (first < 0 && scene != NULL && scene != before && nodes_on_screen (view, scene) > 0)
        first = (g_get_monotonic_time () - t0) / 1e6;
      if (scene != NULL && scene != before && fb_graph_scene_is_partial (scene))
        assert_disjoint (scene);
    }
  g_test_message ("first screen of boxes after %.2f s, whole layout after %.2f s, %u Graphviz runs",
                  first, (g_get_monotonic_time () - t0) / 1e6, fb_graph_layout_n_dot_runs (layout));
  g_assert_cmpfloat (first, >=, 0);
  g_assert_cmpfloat (first, <, FIRST_SCREEN_BOUND_S);
  /* Everything open: every node is a box of its own. */
  g_assert_cmpuint (fb_graph_scene_n_items (fb_graph_view_get_scene (view)), >=, graph->nodes->len);
  g_assert_false (fb_graph_scene_is_partial (fb_graph_view_get_scene (view)));
  assert_disjoint (fb_graph_view_get_scene (view));
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
assert_same_scene (FbGraphScene *a,
                   FbGraphScene *b)
{
  g_assert_cmpuint (fb_graph_scene_n_items (a), ==, fb_graph_scene_n_items (b));
  g_assert_cmpuint (fb_graph_scene_n_edges (a), ==, fb_graph_scene_n_edges (b));
  for (guint i = 0; i < fb_graph_scene_n_items (a); i++)
    {
      const FbSceneItem *p = fb_graph_scene_item (a, i), *q = fb_graph_scene_item (b, i);

      g_assert_cmpint (p->kind, ==, q->kind);
      g_assert_cmpuint (p->node != NULL ? p->node->id : 0, ==, q->node != NULL ? q->node->id : 0);
      g_assert_cmpstr (p->group != NULL ? fb_graph_group_get_path (p->group) : "",
                       ==, q->group != NULL ? fb_graph_group_get_path (q->group) : "");
      g_assert_cmpfloat (p->x, ==, q->x);
      g_assert_cmpfloat (p->y, ==, q->y);
      g_assert_cmpfloat (p->width, ==, q->width);
      g_assert_cmpfloat (p->height, ==, q->height);
      g_assert_cmpint (p->parent, ==, q->parent);
    }
  for (guint i = 0; i < fb_graph_scene_n_edges (a); i++)
    {
      const FbSceneEdge *p = fb_graph_scene_edge (a, i), *q = fb_graph_scene_edge (b, i);

      g_assert_cmpint (p->from, ==, q->from);
      g_assert_cmpint (p->to, ==, q->to);
      g_assert_cmpuint (p->n_points, ==, q->n_points);
      g_assert_cmpmem (p->points, 2 * sizeof (double) * p->n_points, q->points, 2 * sizeof (double) * q->n_points);
    }
}

static void
test_everything_open_as_serial (void)
{
  /* Blocks of varied structure: many Graphviz runs, spread over the workers, in any order. */
  g_autoptr(FbGraph) graph = build_layers (40, TRUE);
  g_autoptr(FbGraphLayout) serial = fb_graph_layout_new (graph, NULL, NULL);
  g_autoptr(FbGraphLayout) parallel = fb_graph_layout_new (graph, NULL, NULL);
  g_autoptr(GHashTable) all = fb_graph_layout_default_expansion (serial, G_MAXUINT);
  g_autoptr(FbGraphScene) expected = NULL;
  g_autoptr(GError) error = NULL;
  FbGraphView *view = FB_GRAPH_VIEW (fb_graph_view_new ());
  GtkWidget *window = show_view (view);

  fb_graph_layout_set_serial (serial, TRUE);
  expected = fb_graph_layout_compute (serial, all, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (fb_graph_layout_n_dot_runs (serial), >, 20);
  assert_disjoint (expected);

  fb_graph_view_set_layout (view, parallel);
  wait_layout (view);
  open_everything (view, parallel);
  wait_layout (view);
  g_assert_false (fb_graph_scene_is_partial (fb_graph_view_get_scene (view)));
  assert_same_scene (expected, fb_graph_view_get_scene (view));
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  fb_ui_init ();

  g_test_add_func ("/layout-parallel/everything-open/first-screen", test_everything_open_first_screen);
  g_test_add_func ("/layout-parallel/everything-open/as-serial", test_everything_open_as_serial);
  return g_test_run ();
}
