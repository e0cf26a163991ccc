/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The graph layout and the graph view: scopes and groups, Graphviz placement, seeding from the
 * previous stage, zoom and fit arithmetic (a tall graph fitted to its width, a first picture that
 * never shows empty space), search, selection and walking along edges, in a real window. */
#include "fb-graph-layout.h"
#include "fb-graph-view.h"
#include "fb-ui.h"

#include <adwaita.h>
#include <math.h>

static FbValue *
add_op (FbGraph    *graph,
        FbOpKind    op,
        const char *name,
        FbValue    *input,
        FbValue    *second)
{
  int64_t dims[] = { 1, 8, 16, 16 };
  FbShape shape = fb_shape_make (4, dims);
  FbNode *node = fb_graph_add_node (graph, op, name, second != NULL ? 2 : 1, 1);
  g_autofree char *value_name = g_strconcat (name, ":0", NULL);
  FbValue *out = fb_graph_add_value (graph, value_name, FB_DTYPE_FLOAT32, &shape);

  node->inputs[0] = input;
  if (second != NULL)
    node->inputs[1] = second;
  fb_node_set_output (node, 0, out);
  return out;
}

static FbValue *
add_input (FbGraph *graph)
{
  int64_t dims[] = { 1, 8, 16, 16 };
  FbShape shape = fb_shape_make (4, dims);
  FbValue *x = fb_graph_add_value (graph, "x", FB_DTYPE_FLOAT32, &shape);

  x->is_input = TRUE;
  g_ptr_array_add (graph->inputs, x);
  return x;
}

static void
set_ints (FbGraph    *graph,
          FbNode     *node,
          const char *name,
          int64_t     a,
          int64_t     b)
{
  int64_t v[] = { a, b };
  FbAttr attr = { .name = name, .type = FB_ATTR_INTS, .ints = { 2, v } };

  fb_node_set_attr (graph, node, &attr);
}

/* x → Conv → Relu → MaxPool → Add(x') → Sigmoid, with a skip from Conv to Add. */
static FbGraph *
build_chain (void)
{
  g_autoptr(FbModel) model = fb_model_new (NULL);
  FbGraph *graph = fb_graph_new (model);
  FbValue *x = add_input (graph);
  FbValue *conv = add_op (graph, FB_OP_CONV, "conv", x, NULL);
  FbValue *relu = add_op (graph, FB_OP_RELU, "relu", conv, NULL);
  FbValue *pool = add_op (graph, FB_OP_MAX_POOL, "pool", relu, NULL);
  FbValue *add = add_op (graph, FB_OP_ADD, "add", pool, conv);
  FbValue *out = add_op (graph, FB_OP_SIGMOID, "out", add, NULL);

  set_ints (graph, conv->producer, "kernel_shape", 3, 3);
  set_ints (graph, pool->producer, "kernel_shape", 2, 2);
  out->is_output = TRUE;
  g_ptr_array_add (graph->outputs, out);
  return graph;
}

/* n_layers layers of four nodes each under "/encoder/layer.K/...". */
static FbGraph *
build_scoped (guint n_layers)
{
  g_autoptr(FbModel) model = fb_model_new (NULL);
  FbGraph *graph = fb_graph_new (model);
  FbValue *h = add_input (graph);

  h = add_op (graph, FB_OP_CONV, "/stem/Conv", h, NULL);
  for (guint i = 0; i < n_layers; i++)
    {
      g_autofree char *mm = g_strdup_printf ("/encoder/layer.%u/attention/MatMul", i);
      g_autofree char *sm = g_strdup_printf ("/encoder/layer.%u/attention/Softmax", i);
      g_autofree char *mlp = g_strdup_printf ("/encoder/layer.%u/mlp/Relu", i);
      g_autofree char *add = g_strdup_printf ("/encoder/layer.%u/Add", i);
      FbValue *a;

      a = add_op (graph, FB_OP_MATMUL, mm, h, h);
      a = add_op (graph, FB_OP_SOFTMAX, sm, a, NULL);
      a = add_op (graph, FB_OP_RELU, mlp, a, NULL);
      h = add_op (graph, FB_OP_ADD, add, a, h);
    }
  h->is_output = TRUE;
  g_ptr_array_add (graph->outputs, h);
  return graph;
}

/* A chain of n Relu nodes: far taller than wide. */
static FbGraph *
build_tall (guint n)
{
  g_autoptr(FbModel) model = fb_model_new (NULL);
  FbGraph *graph = fb_graph_new (model);
  FbValue *h = add_input (graph);

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("relu_%u", i);

      h = add_op (graph, FB_OP_RELU, name, h, NULL);
    }
  h->is_output = TRUE;
  g_ptr_array_add (graph->outputs, h);
  return graph;
}

/* A chain of twelve, then sixty branches side by side: its top is one box far from the left. */
static FbGraph *
build_top_heavy (void)
{
  g_autoptr(FbModel) model = fb_model_new (NULL);
  FbGraph *graph = fb_graph_new (model);
  FbValue *h = add_input (graph), *branches[60];
  FbNode *sum;
  g_autofree char *out_name = NULL;
  FbValue *out;

  for (guint i = 0; i < 12; i++)
    {
      g_autofree char *name = g_strdup_printf ("stem_%u", i);

      h = add_op (graph, FB_OP_RELU, name, h, NULL);
    }
  for (guint i = 0; i < G_N_ELEMENTS (branches); i++)
    {
      g_autofree char *name = g_strdup_printf ("branch_%u", i);

      branches[i] = add_op (graph, FB_OP_SIGMOID, name, h, NULL);
    }
  sum = fb_graph_add_node (graph, FB_OP_SUM, "sum", G_N_ELEMENTS (branches), 1);
  for (guint i = 0; i < G_N_ELEMENTS (branches); i++)
    sum->inputs[i] = branches[i];
  out_name = g_strdup ("sum:0");
  out = fb_graph_add_value (graph, out_name, FB_DTYPE_FLOAT32, &h->shape);
  fb_node_set_output (sum, 0, out);
  out->is_output = TRUE;
  g_ptr_array_add (graph->outputs, out);
  return graph;
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

static const FbSceneItem *
item_of (FbGraphScene *scene,
         FbNode       *node)
{
  int index = fb_graph_scene_find_node (scene, node);

  g_assert_cmpint (index, >=, 0);
  return fb_graph_scene_item (scene, index);
}

static GHashTable *
expand_all (FbGraphLayout *layout)
{
  return fb_graph_layout_default_expansion (layout, G_MAXUINT);
}

static void
test_layout_scopes (void)
{
  g_autoptr(FbGraph) graph = build_scoped (3);
  g_autoptr(FbGraphLayout) layout = fb_graph_layout_new (graph, NULL, NULL);
  FbGraphGroup *root = fb_graph_layout_get_root (layout);
  FbGraphGroup *encoder, *layer, *attention;
  g_autoptr(GHashTable) small = NULL;

  /* A scope of one node ("/stem") is no group; "/encoder" holds the layers. */
  g_assert_cmpuint (fb_graph_group_get_n_children (root), ==, 2);
  g_assert_nonnull (fb_graph_group_get_child_node (root, 0));
  encoder = fb_graph_layout_lookup_group (layout, "/encoder");
  g_assert_nonnull (encoder);
  g_assert_true (fb_graph_group_get_child_group (root, 1) == encoder);
  g_assert_cmpuint (fb_graph_group_get_n_nodes (encoder), ==, 12);
  g_assert_cmpuint (fb_graph_group_get_n_children (encoder), ==, 3);

  layer = fb_graph_layout_lookup_group (layout, "/encoder/layer.1");
  g_assert_nonnull (layer);
  g_assert_cmpstr (fb_graph_group_get_label (layer), ==, "layer.1");
  g_assert_cmpuint (fb_graph_group_get_depth (layer), ==, 2);
  attention = fb_graph_layout_lookup_group (layout, "/encoder/layer.1/attention");
  g_assert_nonnull (attention);
  g_assert_true (fb_graph_group_contains (encoder, attention));
  g_assert_false (fb_graph_group_contains (attention, encoder));
  g_assert_true (fb_graph_layout_node_group (layout, node_named (graph, "/encoder/layer.1/attention/MatMul")) == attention);
  /* "/encoder/layer.1/mlp" has one node: it belongs to the layer itself. */
  g_assert_true (fb_graph_layout_node_group (layout, node_named (graph, "/encoder/layer.1/mlp/Relu")) == layer);
  g_assert_nonnull (strstr (fb_graph_group_get_summary (encoder), "12 nodes"));

  /* A small budget opens only what fits. */
  small = fb_graph_layout_default_expansion (layout, 4);
  g_assert_true (g_hash_table_contains (small, "/encoder"));
  g_assert_false (g_hash_table_contains (small, "/encoder/layer.0"));
}

static void
test_layout_parts (void)
{
  g_autoptr(FbModel) model = fb_model_new (NULL);
  g_autoptr(FbGraph) graph = fb_graph_new (model);
  g_autoptr(FbGraphLayout) layout = NULL;
  FbValue *h = add_input (graph);
  FbGraphGroup *root;
  guint total = 0;

  for (guint i = 0; i < 3 * FB_GRAPH_GROUP_MAX_CHILDREN + 7; i++)
    {
      g_autofree char *name = g_strdup_printf ("Relu_%u", i);

      h = add_op (graph, FB_OP_RELU, name, h, NULL);
    }
  layout = fb_graph_layout_new (graph, NULL, NULL);
  root = fb_graph_layout_get_root (layout);
  /* A flat graph too big for one Graphviz run is cut into consecutive parts. */
  g_assert_cmpuint (fb_graph_group_get_n_children (root), <=, FB_GRAPH_GROUP_MAX_CHILDREN);
  for (guint i = 0; i < fb_graph_group_get_n_children (root); i++)
    {
      FbGraphGroup *part = fb_graph_group_get_child_group (root, i);

      g_assert_nonnull (part);
      g_assert_cmpuint (fb_graph_group_get_n_children (part), <=, FB_GRAPH_GROUP_MAX_CHILDREN);
      total += fb_graph_group_get_n_nodes (part);
    }
  g_assert_cmpuint (total, ==, graph->nodes->len);
}

static void
test_layout_empty (void)
{
  g_autoptr(FbModel) model = fb_model_new (NULL);
  g_autoptr(FbGraph) graph = fb_graph_new (model);
  g_autoptr(FbGraphLayout) layout = fb_graph_layout_new (graph, NULL, NULL);
  g_autoptr(GHashTable) expanded = expand_all (layout);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraphScene) scene = fb_graph_layout_compute (layout, expanded, NULL, &error);
  double width, height;

  /* A graph without nodes is an empty picture, not an error. */
  g_assert_no_error (error);
  g_assert_cmpuint (fb_graph_scene_n_items (scene), ==, 0);
  g_assert_cmpuint (fb_graph_scene_n_edges (scene), ==, 0);
  fb_graph_scene_get_bounds (scene, &width, &height);
  g_assert_cmpfloat (width, >=, 0);
  g_assert_cmpint (fb_graph_scene_item_at (scene, 1, 1), ==, -1);
}

static gboolean
overlap (const FbSceneItem *a,
         const FbSceneItem *b)
{
  return a->x < b->x + b->width && b->x < a->x + a->width
         && a->y < b->y + b->height && b->y < a->y + a->height;
}

static void
test_layout_compute (void)
{
  g_autoptr(FbGraph) graph = build_chain ();
  g_autoptr(FbGraphLayout) layout = fb_graph_layout_new (graph, NULL, NULL);
  g_autoptr(GHashTable) expanded = expand_all (layout);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraphScene) scene = fb_graph_layout_compute (layout, expanded, NULL, &error);
  double width, height;

  g_assert_no_error (error);
  g_assert_nonnull (scene);
  g_assert_cmpuint (fb_graph_scene_n_items (scene), ==, graph->nodes->len);
  /* conv→relu, relu→pool, pool→add, conv→add, add→out */
  g_assert_cmpuint (fb_graph_scene_n_edges (scene), ==, 5);
  fb_graph_scene_get_bounds (scene, &width, &height);
  g_assert_cmpfloat (width, >, 0);
  g_assert_cmpfloat (height, >, 0);

  /* Top to bottom: every producer above its consumers; nothing overlaps; all inside. */
  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *a = fb_graph_scene_item (scene, i);
      GArray *consumers = fb_graph_scene_consumers (scene, i);

      g_assert_cmpint (a->kind, ==, FB_SCENE_ITEM_NODE);
      g_assert_cmpfloat (a->x, >=, 0);
      g_assert_cmpfloat (a->y, >=, 0);
      g_assert_cmpfloat (a->x + a->width, <=, width + 1e-6);
      g_assert_cmpfloat (a->y + a->height, <=, height + 1e-6);
      for (guint k = 0; k < consumers->len; k++)
        g_assert_cmpfloat (fb_graph_scene_item (scene, g_array_index (consumers, int, k))->y, >, a->y + a->height);
      for (guint j = 0; j < i; j++)
        g_assert_false (overlap (a, fb_graph_scene_item (scene, j)));
    }
  for (guint i = 0; i < fb_graph_scene_n_edges (scene); i++)
    {
      const FbSceneEdge *edge = fb_graph_scene_edge (scene, i);

      g_assert_cmpuint (edge->n_points % 3, ==, 1);
      g_assert_cmpuint (edge->n_points, >=, 4);
      g_assert_nonnull (edge->value);
    }
  g_assert_cmpint (fb_graph_scene_item_at (scene, -5, -5), ==, -1);
  {
    const FbSceneItem *relu = item_of (scene, node_named (graph, "relu"));

    g_assert_cmpint (fb_graph_scene_item_at (scene, relu->x + 2, relu->y + 2), ==,
                     fb_graph_scene_find_node (scene, node_named (graph, "relu")));
  }
  /* A second computation of the same expansion runs no Graphviz. */
  {
    guint runs = fb_graph_layout_n_dot_runs (layout);
    g_autoptr(FbGraphScene) again = fb_graph_layout_compute (layout, expanded, NULL, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (fb_graph_layout_n_dot_runs (layout), ==, runs);
  }
}

/* The same chain with relu and pool fused into one node, ids of everything else kept. */
static FbGraph *
fuse_relu_pool (FbGraph *before,
                GArray  *changes)
{
  FbGraph *after = fb_graph_copy (before);
  FbNode *relu = node_named (after, "relu"), *pool = node_named (after, "pool");
  FbNode *fused = fb_graph_add_node (after, FB_OP_FUSED, "relu+pool", 1, 1);
  FbGraph *body = fb_graph_new_subgraph (after, "body");
  FbValue *in = fb_graph_add_value (body, "in", FB_DTYPE_FLOAT32, &relu->inputs[0]->shape);
  FbValue *mid = add_op (body, FB_OP_RELU, "relu", in, NULL);
  FbAttr attr = { .name = "body", .type = FB_ATTR_GRAPH, .g = body };
  FbChange change = { 0 };
  g_autoptr(GError) error = NULL;

  add_op (body, FB_OP_MAX_POOL, "pool", mid, NULL);
  fb_node_set_attr (after, fused, &attr);
  fused->inputs[0] = relu->inputs[0];
  fb_node_set_output (fused, 0, pool->outputs[0]);
  g_ptr_array_remove (after->nodes, relu);
  g_ptr_array_remove (after->nodes, pool);
  g_assert_true (fb_graph_toposort (after, &error));

  change.kind = FB_CHANGE_FUSED;
  change.fused_into = fused->id;
  change.node_id = relu->id;
  g_array_append_val (changes, change);
  change.node_id = pool->id;
  g_array_append_val (changes, change);
  change.kind = FB_CHANGE_ADDED;
  change.node_id = fused->id;
  change.fused_into = 0;
  g_array_append_val (changes, change);
  return after;
}

static void
test_layout_seeded (void)
{
  g_autoptr(FbGraph) before = build_chain ();
  g_autoptr(GArray) changes = g_array_new (FALSE, TRUE, sizeof (FbChange));
  g_autoptr(FbGraph) after = fuse_relu_pool (before, changes);
  g_autoptr(FbGraphLayout) first = fb_graph_layout_new (before, NULL, NULL);
  g_autoptr(FbGraphLayout) second = fb_graph_layout_new (after, first, changes);
  g_autoptr(GHashTable) expanded = expand_all (second);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraphScene) a = fb_graph_layout_compute (first, expanded, NULL, &error);
  g_autoptr(FbGraphScene) b = fb_graph_layout_compute (second, expanded, NULL, &error);
  const char *kept[] = { "conv", "add", "out" };
  const FbSceneItem *fused, *relu, *pool;

  g_assert_no_error (error);
  g_assert_cmpuint (fb_graph_layout_n_seeded (second), ==, 1);
  g_assert_cmpuint (fb_graph_layout_n_dot_runs (second), ==, 0);
  /* What the pass did not touch stays exactly where it was. */
  for (guint i = 0; i < G_N_ELEMENTS (kept); i++)
    {
      const FbSceneItem *p = item_of (a, node_named (before, kept[i]));
      const FbSceneItem *q = item_of (b, node_named (after, kept[i]));

      g_assert_cmpfloat (p->x, ==, q->x);
      g_assert_cmpfloat (p->y, ==, q->y);
    }
  /* The fused node sits where its members were. */
  fused = item_of (b, node_named (after, "relu+pool"));
  relu = item_of (a, node_named (before, "relu"));
  pool = item_of (a, node_named (before, "pool"));
  g_assert_cmpfloat (fabs ((fused->y + fused->height / 2) - (relu->y + pool->y + pool->height) / 2), <, 1e-6);
  g_assert_cmpuint (fb_graph_scene_n_edges (b), ==, 4);
}

/* A window holding one graph view. */
typedef struct {
  GtkWidget   *window;
  FbGraphView *view;
  FbGraph     *graph;
} Fixture;

static void
wait_until_idle (FbGraphView *view)
{
  while (fb_graph_view_is_busy (view) || gtk_widget_get_width (GTK_WIDGET (view)) == 0)
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(FbGraphLayout) layout = NULL;

  if (data == NULL)
    f->graph = build_chain ();
  else if (g_str_equal (data, "tall"))
    f->graph = build_tall (110);
  else if (g_str_equal (data, "top-heavy"))
    f->graph = build_top_heavy ();
  else
    f->graph = build_scoped (60);
  f->window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (f->window), 800, 600);
  f->view = FB_GRAPH_VIEW (fb_graph_view_new ());
  gtk_window_set_child (GTK_WINDOW (f->window), GTK_WIDGET (f->view));
  gtk_window_present (GTK_WINDOW (f->window));
  layout = fb_graph_layout_new (f->graph, NULL, NULL);
  fb_graph_view_set_layout (f->view, layout);
  wait_until_idle (f->view);
  g_assert_nonnull (fb_graph_view_get_scene (f->view));
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  gtk_window_destroy (GTK_WINDOW (f->window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  fb_graph_free (f->graph);
}

static void
test_view_zoom_fit (Fixture       *f,
                    gconstpointer  data)
{
  double w = gtk_widget_get_width (GTK_WIDGET (f->view));
  double h = gtk_widget_get_height (GTK_WIDGET (f->view));
  double bw, bh, zoom, wx, wy, sx, sy, sx2, sy2;

  fb_graph_scene_get_bounds (fb_graph_view_get_scene (f->view), &bw, &bh);
  /* The first picture is fitted: all of it inside, centred, never enlarged. */
  zoom = fb_graph_view_get_zoom (f->view);
  g_assert_cmpfloat (zoom, <=, 1.0);
  g_assert_cmpfloat (bw * zoom, <=, w + 1e-6);
  g_assert_cmpfloat (bh * zoom, <=, h + 1e-6);
  fb_graph_view_scene_to_widget (f->view, bw / 2, bh / 2, &wx, &wy);
  g_assert_cmpfloat (fabs (wx - w / 2), <, 1e-6);
  g_assert_cmpfloat (fabs (wy - h / 2), <, 1e-6);

  /* Zooming keeps the point under the pointer still. */
  fb_graph_view_widget_to_scene (f->view, 100, 50, &sx, &sy);
  fb_graph_view_zoom_at (f->view, 2.0, 100, 50);
  g_assert_cmpfloat (fabs (fb_graph_view_get_zoom (f->view) - 2 * zoom), <, 1e-9);
  fb_graph_view_widget_to_scene (f->view, 100, 50, &sx2, &sy2);
  g_assert_cmpfloat (fabs (sx - sx2), <, 1e-9);
  g_assert_cmpfloat (fabs (sy - sy2), <, 1e-9);

  /* In and out are inverse; the zoom stays within its bounds. */
  fb_graph_view_zoom_in (f->view);
  fb_graph_view_zoom_out (f->view);
  g_assert_cmpfloat (fabs (fb_graph_view_get_zoom (f->view) - 2 * zoom), <, 1e-9);
  fb_graph_view_zoom_at (f->view, 1000, 0, 0);
  g_assert_cmpfloat (fb_graph_view_get_zoom (f->view), ==, FB_GRAPH_VIEW_MAX_ZOOM);
  fb_graph_view_zoom_at (f->view, 1e-6, 0, 0);
  g_assert_cmpfloat (fb_graph_view_get_zoom (f->view), ==, FB_GRAPH_VIEW_MIN_ZOOM);

  fb_graph_view_set_viewport (f->view, 10, 20, 0.5);
  fb_graph_view_widget_to_scene (f->view, 100, 100, &sx, &sy);
  g_assert_cmpfloat (sx, ==, 210);
  g_assert_cmpfloat (sy, ==, 220);
  fb_graph_view_zoom_to_fit (f->view);
  g_assert_cmpfloat (fb_graph_view_get_zoom (f->view), ==, zoom);
}

static void
test_view_search (Fixture       *f,
                  gconstpointer  data)
{
  FbNode *selected;

  g_assert_cmpuint (fb_graph_view_search (f->view, "RELU"), ==, 1);
  selected = fb_graph_view_get_selected_node (f->view);
  g_assert_nonnull (selected);
  g_assert_cmpstr (selected->name, ==, "relu");

  /* Attributes match as name=value. */
  g_assert_cmpuint (fb_graph_view_search (f->view, "kernel_shape=3,3"), ==, 1);
  g_assert_cmpstr (fb_graph_view_get_selected_node (f->view)->name, ==, "conv");
  g_assert_cmpuint (fb_graph_view_search (f->view, "kernel_shape"), ==, 2);
  g_assert_cmpstr (fb_graph_view_get_selected_node (f->view)->name, ==, "conv");
  g_assert_true (fb_graph_view_search_next (f->view, FALSE));
  g_assert_cmpstr (fb_graph_view_get_selected_node (f->view)->name, ==, "pool");
  g_assert_true (fb_graph_view_search_next (f->view, FALSE));
  g_assert_cmpstr (fb_graph_view_get_selected_node (f->view)->name, ==, "conv");
  g_assert_true (fb_graph_view_search_next (f->view, TRUE));
  g_assert_cmpstr (fb_graph_view_get_selected_node (f->view)->name, ==, "pool");

  g_assert_cmpuint (fb_graph_view_search (f->view, "no such thing"), ==, 0);
  g_assert_false (fb_graph_view_search_next (f->view, FALSE));
  g_assert_cmpuint (fb_graph_view_search (f->view, ""), ==, 0);
}

static void
test_view_walk (Fixture       *f,
                gconstpointer  data)
{
  g_assert_null (fb_graph_view_get_selected_node (f->view));
  /* With nothing selected, the walk starts at the top. */
  g_assert_true (fb_graph_view_walk (f->view, FB_GRAPH_WALK_DOWN));
  g_assert_cmpstr (fb_graph_view_get_selected_node (f->view)->name, ==, "conv");
  g_assert_false (fb_graph_view_walk (f->view, FB_GRAPH_WALK_UP));
  g_assert_true (fb_graph_view_walk (f->view, FB_GRAPH_WALK_DOWN));
  /* conv feeds relu and add: down goes to one of them. */
  g_assert_true (g_str_equal (fb_graph_view_get_selected_node (f->view)->name, "relu")
                 || g_str_equal (fb_graph_view_get_selected_node (f->view)->name, "add"));
  g_assert_true (fb_graph_view_select_node (f->view, node_named (f->graph, "pool")->id));
  g_assert_true (fb_graph_view_walk (f->view, FB_GRAPH_WALK_DOWN));
  g_assert_cmpstr (fb_graph_view_get_selected_node (f->view)->name, ==, "add");
  g_assert_true (fb_graph_view_walk (f->view, FB_GRAPH_WALK_DOWN));
  g_assert_cmpstr (fb_graph_view_get_selected_node (f->view)->name, ==, "out");
  g_assert_false (fb_graph_view_walk (f->view, FB_GRAPH_WALK_DOWN));
  g_assert_true (fb_graph_view_walk (f->view, FB_GRAPH_WALK_UP));
  g_assert_cmpstr (fb_graph_view_get_selected_node (f->view)->name, ==, "add");
  /* add has two producers, pool and conv: up picks the one most nearly above. */
  g_assert_true (fb_graph_view_walk (f->view, FB_GRAPH_WALK_UP));
  g_assert_nonnull (fb_graph_view_get_selected_node (f->view));
  fb_graph_view_clear_selection (f->view);
  g_assert_null (fb_graph_view_get_selected_node (f->view));
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

static gboolean
item_shows (FbGraphView       *view,
            const FbSceneItem *item)
{
  double x0, y0, x1, y1;

  visible_rect (view, &x0, &y0, &x1, &y1);
  return item->x >= x0 && item->y >= y0 && item->x + item->width <= x1 && item->y + item->height <= y1;
}

static void
test_view_fit_tall (Fixture       *f,
                    gconstpointer  data)
{
  FbGraphScene *scene = fb_graph_view_get_scene (f->view);
  const FbSceneItem *top = item_of (scene, g_ptr_array_index (f->graph->nodes, 0));
  double width, height;
  double w = gtk_widget_get_width (GTK_WIDGET (f->view)), h = gtk_widget_get_height (GTK_WIDGET (f->view));

  fb_graph_scene_get_bounds (scene, &width, &height);
  /* Fitting all of it would shrink it past reading... */
  g_assert_cmpfloat (h / height, <, FB_GRAPH_VIEW_READABLE_ZOOM / 2);
  fb_graph_view_set_viewport (f->view, 5000, 5000, 0.05);
  fb_graph_view_zoom_to_fit (f->view);
  /* ...so its width fits, at a size where the text reads, from its first node. */
  g_assert_cmpfloat (fb_graph_view_get_zoom (f->view), >=, FB_GRAPH_VIEW_READABLE_ZOOM);
  g_assert_cmpfloat (width * fb_graph_view_get_zoom (f->view), <=, w + 1e-6);
  g_assert_true (item_shows (f->view, top));

  /* Showing a few boxes far down: on screen afterwards, readable. */
  {
    graphene_rect_t rects[2];
    const FbSceneItem *a = item_of (scene, g_ptr_array_index (f->graph->nodes, 80));
    const FbSceneItem *b = item_of (scene, g_ptr_array_index (f->graph->nodes, 82));

    graphene_rect_init (&rects[0], a->x, a->y, a->width, a->height);
    graphene_rect_init (&rects[1], b->x, b->y, b->width, b->height);
    fb_graph_view_show_rects (f->view, rects, 2);
    g_assert_cmpfloat (fb_graph_view_get_zoom (f->view), >=, FB_GRAPH_VIEW_READABLE_ZOOM);
    g_assert_true (item_shows (f->view, a));
    g_assert_true (item_shows (f->view, b));
  }
}

static void
test_view_first_picture (Fixture       *f,
                         gconstpointer  data)
{
  FbGraphScene *scene = fb_graph_view_get_scene (f->view);
  const FbSceneItem *top = item_of (scene, node_named (f->graph, "stem_0"));
  double width, height;

  /* Too wide to read whole: the first picture is its top, readable, and that top is one box in
   * the middle of the width, which is what it shows rather than the empty left of the picture. */
  fb_graph_scene_get_bounds (scene, &width, &height);
  g_assert_cmpfloat (width * FB_GRAPH_VIEW_READABLE_ZOOM, >, 2 * gtk_widget_get_width (GTK_WIDGET (f->view)));
  g_assert_cmpfloat (fb_graph_view_get_zoom (f->view), ==, FB_GRAPH_VIEW_READABLE_ZOOM);
  g_assert_true (item_shows (f->view, top));
}

static void
count_toggle (guint      *toggles,
              const char *path,
              gboolean    expanded)
{
  (*toggles)++;
}

static void
test_view_groups (Fixture       *f,
                  gconstpointer  data)
{
  FbNode *hidden = node_named (f->graph, "/encoder/layer.59/attention/Softmax");
  FbGraphScene *scene = fb_graph_view_get_scene (f->view);
  int item;
  guint toggles = 0;

  /* Sixty layers are more than a picture's budget: the last ones start folded. */
  item = fb_graph_scene_find_node (scene, hidden);
  g_assert_cmpint (item, >=, 0);
  g_assert_cmpint (fb_graph_scene_item (scene, item)->kind, ==, FB_SCENE_ITEM_GROUP);
  g_assert_false (fb_graph_view_get_group_expanded (f->view, "/encoder/layer.59"));

  /* Selecting a hidden node opens the groups around it. */
  g_signal_connect_swapped (f->view, "group-toggled", G_CALLBACK (count_toggle), &toggles);
  g_assert_true (fb_graph_view_select_node (f->view, hidden->id));
  g_assert_cmpuint (toggles, >=, 1);
  wait_until_idle (f->view);
  scene = fb_graph_view_get_scene (f->view);
  item = fb_graph_scene_find_node (scene, hidden);
  g_assert_cmpint (fb_graph_scene_item (scene, item)->kind, ==, FB_SCENE_ITEM_NODE);
  g_assert_true (fb_graph_view_get_selected_node (f->view) == hidden);
  g_assert_true (fb_graph_view_get_group_expanded (f->view, "/encoder/layer.59"));

  /* Folding a group back puts its box where its frame was, and keeps the selection. */
  fb_graph_view_set_group_expanded (f->view, "/encoder/layer.59", FALSE);
  fb_graph_view_set_group_expanded (f->view, "/encoder/layer.59/attention", FALSE);
  wait_until_idle (f->view);
  scene = fb_graph_view_get_scene (f->view);
  g_assert_cmpint (fb_graph_scene_item (scene, fb_graph_scene_find_node (scene, hidden))->kind, ==,
                   FB_SCENE_ITEM_GROUP);
  g_assert_true (fb_graph_view_get_selected_node (f->view) == hidden);
  g_assert_true (fb_graph_view_select_group (f->view, "/encoder/layer.2"));
  g_assert_cmpstr (fb_graph_group_get_path (fb_graph_view_get_selected_group (f->view)), ==, "/encoder/layer.2");
  g_assert_null (fb_graph_view_get_selected_node (f->view));
}

static void
test_view_marks (Fixture       *f,
                 gconstpointer  data)
{
  g_autoptr(GHashTable) marks = g_hash_table_new (NULL, NULL);
  FbNode *relu = node_named (f->graph, "relu");

  g_hash_table_insert (marks, GUINT_TO_POINTER (relu->id), GINT_TO_POINTER (FB_GRAPH_MARK_ADDED));
  fb_graph_view_set_marks (f->view, marks);
  g_assert_cmpint (fb_graph_view_get_mark (f->view, relu), ==, FB_GRAPH_MARK_ADDED);
  g_assert_cmpint (fb_graph_view_get_mark (f->view, node_named (f->graph, "conv")), ==, FB_GRAPH_MARK_NONE);
  /* Drawing with marks, a selection and a search on screen. */
  fb_graph_view_search (f->view, "pool");
  gtk_widget_queue_draw (GTK_WIDGET (f->view));
  wait_until_idle (f->view);
  fb_graph_view_set_marks (f->view, NULL);
  g_assert_cmpint (fb_graph_view_get_mark (f->view, relu), ==, FB_GRAPH_MARK_NONE);
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  fb_ui_init ();

  g_test_add_func ("/ui/graph-layout/scopes", test_layout_scopes);
  g_test_add_func ("/ui/graph-layout/parts", test_layout_parts);
  g_test_add_func ("/ui/graph-layout/empty", test_layout_empty);
  g_test_add_func ("/ui/graph-layout/compute", test_layout_compute);
  g_test_add_func ("/ui/graph-layout/seeded", test_layout_seeded);
  g_test_add ("/ui/graph-view/zoom-fit", Fixture, NULL, fixture_set_up, test_view_zoom_fit, fixture_tear_down);
  g_test_add ("/ui/graph-view/search", Fixture, NULL, fixture_set_up, test_view_search, fixture_tear_down);
  g_test_add ("/ui/graph-view/walk", Fixture, NULL, fixture_set_up, test_view_walk, fixture_tear_down);
  g_test_add ("/ui/graph-view/groups", Fixture, "scoped", fixture_set_up, test_view_groups, fixture_tear_down);
  g_test_add ("/ui/graph-view/fit-tall", Fixture, "tall", fixture_set_up, test_view_fit_tall, fixture_tear_down);
  g_test_add ("/ui/graph-view/first-picture", Fixture, "top-heavy", fixture_set_up, test_view_first_picture,
              fixture_tear_down);
  g_test_add ("/ui/graph-view/marks", Fixture, NULL, fixture_set_up, test_view_marks, fixture_tear_down);
  return g_test_run ();
}
