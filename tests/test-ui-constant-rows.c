/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Constants drawn as rows inside the boxes that read them: which constants become rows, what a
 * row says, the boxes' sizes and edges, the scene's hit testing, seeding a stage whose Constant
 * nodes were folded into initializers, and in a real window: clicking a row selects its
 * constant, and search and marks reach rows. */
#include "fb-graph-layout.h"
#include "fb-graph-view.h"
#include "fb-ui.h"

#include <adwaita.h>
#include <string.h>

typedef struct {
  FbGraph *graph;
  FbNode  *three;        /* Constant 3.0, read by add */
  FbNode  *shape;        /* Constant [1, -1], read by reshape */
  FbNode  *shared;       /* Constant 0.5, read by both muls */
  FbNode  *output;       /* Constant that is also a graph output: stays a box */
  FbNode  *add, *reshape, *mul_a, *mul_b;
  FbValue *weights;      /* an initializer of 16 elements, read by matmul */
  FbNode  *matmul;
} Model;

static FbValue *
add_value (FbGraph    *graph,
           const char *name,
           FbDType     dtype,
           int         rank,
           const int64_t *dims)
{
  FbShape shape = fb_shape_make (rank, dims);

  return fb_graph_add_value (graph, name, dtype, &shape);
}

static FbNode *
add_node (FbGraph    *graph,
          FbOpKind    op,
          const char *name,
          FbValue    *a,
          FbValue    *b,
          FbValue    *out)
{
  FbNode *node = fb_graph_add_node (graph, op, name, b != NULL ? 2 : 1, 1);

  node->op_type = fb_op_name (op);
  node->inputs[0] = a;
  if (b != NULL)
    node->inputs[1] = b;
  fb_node_set_output (node, 0, out);
  return node;
}

static FbNode *
add_constant (FbGraph    *graph,
              const char *name,
              FbTensor   *tensor)
{
  FbNode *node = fb_graph_add_node (graph, FB_OP_CONSTANT, name, 0, 1);
  g_autofree char *value_name = g_strconcat (name, ":0", NULL);
  FbShape shape = fb_tensor_shape (tensor);
  FbValue *value = fb_graph_add_value (graph, value_name, tensor->dtype, &shape);
  FbAttr attr = { .name = "value", .type = FB_ATTR_TENSOR, .t = tensor };

  node->op_type = "Constant";
  fb_node_set_attr (graph, node, &attr);
  value->constant = tensor;
  fb_node_set_output (node, 0, value);
  return node;
}

/* x → Add(+3) → Reshape(shape [1,-1]) → MatMul(weights) → Mul(0.5) → Mul(0.5), and a Constant
 * that is a graph output. */
static void
model_init (Model *m)
{
  g_autoptr(FbModel) model = fb_model_new (NULL);
  FbGraph *g = fb_graph_new (model);
  FbValue *x = add_value (g, "x", FB_DTYPE_FLOAT32, 2, (int64_t[]) { 2, 8 });
  FbTensor *shape = fb_tensor_new (FB_DTYPE_INT64, 1, (int64_t[]) { 2 }, NULL);
  FbTensor *weights = fb_tensor_new (FB_DTYPE_FLOAT32, 2, (int64_t[]) { 16, 1 }, NULL);
  FbValue *h;

  memset (m, 0, sizeof *m);
  m->graph = g;
  x->is_input = TRUE;
  g_ptr_array_add (g->inputs, x);
  fb_tensor_set_f64 (shape, 0, 1);
  fb_tensor_set_f64 (shape, 1, -1);
  m->three = add_constant (g, "three", fb_tensor_new_scalar_f32 (3));
  m->shape = add_constant (g, "target_shape", shape);
  m->shared = add_constant (g, "half", fb_tensor_new_scalar_f32 (0.5));
  m->output = add_constant (g, "also_an_output", fb_tensor_new_scalar_f32 (7));
  m->weights = add_value (g, "fc.weight", FB_DTYPE_FLOAT32, 2, (int64_t[]) { 16, 1 });
  m->weights->constant = weights;

  h = add_value (g, "add:0", FB_DTYPE_FLOAT32, 2, (int64_t[]) { 2, 8 });
  m->add = add_node (g, FB_OP_ADD, "add", x, m->three->outputs[0], h);
  h = add_value (g, "reshape:0", FB_DTYPE_FLOAT32, 2, (int64_t[]) { 1, 16 });
  m->reshape = add_node (g, FB_OP_RESHAPE, "reshape", m->add->outputs[0], m->shape->outputs[0], h);
  h = add_value (g, "matmul:0", FB_DTYPE_FLOAT32, 2, (int64_t[]) { 1, 1 });
  m->matmul = add_node (g, FB_OP_MATMUL, "matmul", m->reshape->outputs[0], m->weights, h);
  h = add_value (g, "mul_a:0", FB_DTYPE_FLOAT32, 2, (int64_t[]) { 1, 1 });
  m->mul_a = add_node (g, FB_OP_MUL, "mul_a", m->matmul->outputs[0], m->shared->outputs[0], h);
  h = add_value (g, "mul_b:0", FB_DTYPE_FLOAT32, 2, (int64_t[]) { 1, 1 });
  m->mul_b = add_node (g, FB_OP_MUL, "mul_b", m->mul_a->outputs[0], m->shared->outputs[0], h);
  h->is_output = TRUE;
  g_ptr_array_add (g->outputs, h);
  m->output->outputs[0]->is_output = TRUE;
  g_ptr_array_add (g->outputs, m->output->outputs[0]);
}

static FbGraphScene *
compute (FbGraphLayout *layout)
{
  g_autoptr(GHashTable) expanded = fb_graph_layout_default_expansion (layout, G_MAXUINT);
  g_autoptr(GError) error = NULL;
  FbGraphScene *scene = fb_graph_layout_compute (layout, expanded, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (scene);
  return scene;
}

static const FbSceneItem *
item_of (FbGraphScene *scene,
         FbNode       *node)
{
  int index = fb_graph_scene_find_node (scene, node);

  g_assert_cmpint (index, >=, 0);
  return fb_graph_scene_item (scene, index);
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

static void
test_rows (void)
{
  Model m;
  g_autoptr(FbGraphLayout) layout = NULL;
  g_autoptr(FbGraphScene) scene = NULL;
  const FbSceneItem *add, *reshape, *matmul, *mul_a, *mul_b;
  g_autofree char *three = NULL, *shape = NULL, *weights = NULL;

  model_init (&m);
  layout = fb_graph_layout_new (m.graph, NULL, NULL);
  scene = compute (layout);

  /* The Constants that only feed nodes are rows; the one that is a graph output is a box. */
  g_assert_true (fb_graph_layout_node_is_row (layout, m.three));
  g_assert_true (fb_graph_layout_node_is_row (layout, m.shared));
  g_assert_false (fb_graph_layout_node_is_row (layout, m.output));
  g_assert_cmpuint (count_constant_items (scene), ==, 1);
  g_assert_cmpuint (fb_graph_scene_n_items (scene), ==, 6);

  add = item_of (scene, m.add);
  reshape = item_of (scene, m.reshape);
  matmul = item_of (scene, m.matmul);
  mul_a = item_of (scene, m.mul_a);
  mul_b = item_of (scene, m.mul_b);
  g_assert_cmpuint (add->n_rows, ==, 1);
  g_assert_true (add->rows[0].constant == m.three);
  g_assert_cmpuint (add->rows[0].input, ==, 1);
  /* An initializer is a row too, with no node behind it. */
  g_assert_cmpuint (matmul->n_rows, ==, 1);
  g_assert_true (matmul->rows[0].value == m.weights);
  g_assert_null (matmul->rows[0].constant);
  /* A Constant read twice is a row in both readers, and shows where the first one is. */
  g_assert_cmpuint (mul_a->n_rows, ==, 1);
  g_assert_cmpuint (mul_b->n_rows, ==, 1);
  g_assert_true (mul_b->rows[0].constant == m.shared);
  g_assert_true (item_of (scene, m.shared) == mul_a);
  g_assert_cmpint (fb_graph_scene_find_constant (scene, m.shared->outputs[0]), ==,
                   fb_graph_scene_find_node (scene, m.mul_a));
  g_assert_true (fb_graph_layout_constant_reader (layout, m.weights) == m.matmul);

  /* The row's label is the ONNX input's name, its text the type and the value. */
  g_assert_cmpstr (fb_constant_row_label (m.reshape, &reshape->rows[0]), ==, "shape");
  g_assert_cmpstr (fb_constant_row_label (m.add, &add->rows[0]), ==, "B");
  g_assert_cmpstr (fb_constant_row_label (m.matmul, &matmul->rows[0]), ==, "B");
  three = fb_constant_row_text (&add->rows[0]);
  shape = fb_constant_row_text (&reshape->rows[0]);
  weights = fb_constant_row_text (&matmul->rows[0]);
  g_assert_cmpstr (three, ==, "float32 = 3");
  g_assert_cmpstr (shape, ==, "int64[2] = [1,-1]");
  g_assert_cmpstr (weights, ==, "float32[16×1]");

  /* No edge comes out of a row: add→reshape→matmul→mul_a→mul_b. */
  g_assert_cmpuint (fb_graph_scene_n_edges (scene), ==, 4);
  g_assert_cmpuint (fb_graph_scene_producers (scene, fb_graph_scene_find_node (scene, m.mul_b))->len, ==, 1);
  fb_graph_free (m.graph);
}

static void
test_as_nodes (void)
{
  Model m;
  g_autoptr(FbGraphLayout) layout = NULL, rows_layout = NULL;
  g_autoptr(FbGraphScene) scene = NULL, rows = NULL;
  const FbSceneItem *add, *matmul, *reshape;
  double x, y, w, h;

  model_init (&m);
  layout = fb_graph_layout_new_full (m.graph, NULL, NULL, FB_GRAPH_CONSTANTS_AS_NODES);
  scene = compute (layout);
  rows_layout = fb_graph_layout_new (m.graph, NULL, NULL);
  rows = compute (rows_layout);
  g_assert_cmpint (fb_graph_layout_get_constants (layout), ==, FB_GRAPH_CONSTANTS_AS_NODES);
  g_assert_false (fb_graph_layout_node_is_row (layout, m.three));
  g_assert_cmpuint (count_constant_items (scene), ==, 4);
  g_assert_cmpuint (fb_graph_scene_n_items (scene), ==, 9);
  add = item_of (scene, m.add);
  g_assert_cmpuint (add->n_rows, ==, 0);
  /* With its constant as a row, the box grew by that row, at least. */
  reshape = item_of (rows, m.reshape);
  g_assert_true (fb_graph_scene_row_rect (rows, fb_graph_scene_find_node (rows, m.reshape), 0, &x, &y, &w, &h));
  g_assert_cmpfloat (reshape->height, >=, item_of (scene, m.reshape)->height + h);
  g_assert_cmpfloat (item_of (rows, m.add)->height, >, add->height);
  g_assert_cmpint (item_of (scene, m.three)->kind, ==, FB_SCENE_ITEM_NODE);
  /* Initializers have no node to draw: they stay rows. */
  matmul = item_of (scene, m.matmul);
  g_assert_cmpuint (matmul->n_rows, ==, 1);
  /* The Constants' edges are back: three, shape and two from half. */
  g_assert_cmpuint (fb_graph_scene_n_edges (scene), ==, 4 + 4);
  fb_graph_free (m.graph);
}

static void
test_hit (void)
{
  Model m;
  g_autoptr(FbGraphLayout) layout = NULL;
  g_autoptr(FbGraphScene) scene = NULL;
  int index;
  const FbSceneItem *item;
  double x, y, w, h;

  model_init (&m);
  layout = fb_graph_layout_new (m.graph, NULL, NULL);
  scene = compute (layout);
  index = fb_graph_scene_find_node (scene, m.reshape);
  item = fb_graph_scene_item (scene, index);
  g_assert_true (fb_graph_scene_row_rect (scene, index, 0, &x, &y, &w, &h));
  g_assert_cmpfloat (y, >, item->y + 30);
  g_assert_cmpfloat (y + h, <, item->y + item->height);
  g_assert_cmpint (fb_graph_scene_item_at (scene, x + w / 2, y + h / 2), ==, index);
  g_assert_cmpint (fb_graph_scene_row_at (scene, index, x + w / 2, y + h / 2), ==, 0);
  /* The title and the shape line are the box, not the row. */
  g_assert_cmpint (fb_graph_scene_row_at (scene, index, x + w / 2, item->y + 8), ==, -1);
  g_assert_cmpint (fb_graph_scene_row_at (scene, index, x + w / 2, item->y + item->height - 4), ==, -1);
  g_assert_false (fb_graph_scene_row_rect (scene, index, 1, &x, &y, &w, &h));
  fb_graph_free (m.graph);
}

/* The same graph after folding: every Constant node became an initializer, ids kept. */
static FbGraph *
fold (const Model *m,
      GArray      *changes)
{
  FbGraph *after = fb_graph_copy (m->graph);
  FbNode *constants[] = { m->three, m->shape, m->shared };

  for (guint i = 0; i < G_N_ELEMENTS (constants); i++)
    {
      FbNode *node = fb_graph_find_node (after, constants[i]->id);
      FbChange change = { .node_id = node->id, .kind = FB_CHANGE_REMOVED };

      node->outputs[0]->producer = NULL;
      g_ptr_array_remove (after->nodes, node);
      g_array_append_val (changes, change);
    }
  return after;
}

static void
test_seeded (void)
{
  Model m;
  g_autoptr(GArray) changes = g_array_new (FALSE, TRUE, sizeof (FbChange));
  g_autoptr(FbGraph) after = NULL;
  g_autoptr(FbGraphLayout) first = NULL, second = NULL;
  g_autoptr(FbGraphScene) a = NULL, b = NULL;
  FbNode *readers[4];

  model_init (&m);
  after = fold (&m, changes);
  first = fb_graph_layout_new (m.graph, NULL, NULL);
  second = fb_graph_layout_new (after, first, changes);
  a = compute (first);
  b = compute (second);
  readers[0] = m.add;
  readers[1] = m.reshape;
  readers[2] = m.mul_a;
  readers[3] = m.mul_b;
  /* Folding changes nothing on screen: the rows stay, the boxes keep their places and sizes. */
  g_assert_cmpuint (fb_graph_layout_n_dot_runs (second), ==, 0);
  g_assert_cmpuint (fb_graph_layout_n_seeded (second), ==, 1);
  for (guint i = 0; i < G_N_ELEMENTS (readers); i++)
    {
      const FbSceneItem *p = item_of (a, readers[i]);
      const FbSceneItem *q = item_of (b, fb_graph_find_node (after, readers[i]->id));

      g_assert_cmpfloat (p->x, ==, q->x);
      g_assert_cmpfloat (p->y, ==, q->y);
      g_assert_cmpfloat (p->height, ==, q->height);
      g_assert_cmpuint (q->n_rows, ==, 1);
      g_assert_null (q->rows[0].constant);
    }
  /* The same value on both sides, by id. */
  g_assert_true (fb_graph_layout_find_value (second, m.shape->outputs[0]->id)
                 == fb_graph_find_node (after, m.reshape->id)->inputs[1]);
  fb_graph_free (m.graph);
}

/* A real window holding one view. */
typedef struct {
  GtkWidget   *window;
  FbGraphView *view;
  Model        m;
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

  model_init (&f->m);
  f->window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (f->window), 800, 600);
  f->view = FB_GRAPH_VIEW (fb_graph_view_new ());
  gtk_window_set_child (GTK_WINDOW (f->window), GTK_WIDGET (f->view));
  gtk_window_present (GTK_WINDOW (f->window));
  layout = fb_graph_layout_new (f->m.graph, NULL, NULL);
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
  fb_graph_free (f->m.graph);
}

/* Clicks (as the click gesture does) in the middle of row of node's box. */
static gboolean
click_row (Fixture *f,
           FbNode  *node,
           guint    row)
{
  FbGraphScene *scene = fb_graph_view_get_scene (f->view);
  int index = fb_graph_scene_find_node (scene, node);
  double x, y, w, h, wx, wy;

  g_assert_true (fb_graph_scene_row_rect (scene, index, row, &x, &y, &w, &h));
  fb_graph_view_scene_to_widget (f->view, x + w / 2, y + h / 2, &wx, &wy);
  return fb_graph_view_select_at (f->view, wx, wy);
}

static void
test_view_click (Fixture       *f,
                 gconstpointer  data)
{
  FbGraphScene *scene = fb_graph_view_get_scene (f->view);
  const FbSceneItem *item;
  double wx, wy;

  /* A Constant's row selects the Constant node. */
  g_assert_true (click_row (f, f->m.add, 0));
  g_assert_true (fb_graph_view_get_selected_node (f->view) == f->m.three);
  g_assert_true (fb_graph_view_get_selected_constant (f->view) == f->m.three->outputs[0]);

  /* In the box that was clicked: the second reader of a shared constant stays the one shown. */
  g_assert_true (click_row (f, f->m.mul_b, 0));
  g_assert_true (fb_graph_view_get_selected_node (f->view) == f->m.shared);

  /* An initializer's row selects the initializer: no node. */
  g_assert_true (click_row (f, f->m.matmul, 0));
  g_assert_null (fb_graph_view_get_selected_node (f->view));
  g_assert_true (fb_graph_view_get_selected_constant (f->view) == f->m.weights);

  /* The box outside its rows selects the node itself. */
  item = fb_graph_scene_item (scene, fb_graph_scene_find_node (scene, f->m.matmul));
  fb_graph_view_scene_to_widget (f->view, item->x + 8, item->y + 8, &wx, &wy);
  g_assert_true (fb_graph_view_select_at (f->view, wx, wy));
  g_assert_true (fb_graph_view_get_selected_node (f->view) == f->m.matmul);
  g_assert_null (fb_graph_view_get_selected_constant (f->view));

  /* Selected by id, as the other side of a comparison does it. */
  g_assert_true (fb_graph_view_select_constant (f->view, f->m.weights->id));
  g_assert_true (fb_graph_view_get_selected_constant (f->view) == f->m.weights);
  g_assert_true (fb_graph_view_select_constant (f->view, f->m.shape->outputs[0]->id));
  g_assert_true (fb_graph_view_get_selected_node (f->view) == f->m.shape);
  g_assert_false (fb_graph_view_select_constant (f->view, f->m.add->outputs[0]->id + 1000));
  /* Drawn selected, matched and marked without trouble. */
  gtk_widget_queue_draw (GTK_WIDGET (f->view));
  wait_until_idle (f->view);

  /* Empty space clears it. */
  fb_graph_view_scene_to_widget (f->view, -50, -50, &wx, &wy);
  g_assert_false (fb_graph_view_select_at (f->view, wx, wy));
}

static void
test_view_search_marks (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(GHashTable) marks = g_hash_table_new (NULL, NULL);
  FbGraphScene *scene = fb_graph_view_get_scene (f->view);
  FbGraphGroup *root;

  /* Searching finds Constants drawn as rows, and selects them there. */
  g_assert_cmpuint (fb_graph_view_search (f->view, "target_shape"), ==, 1);
  g_assert_true (fb_graph_view_get_selected_node (f->view) == f->m.shape);
  g_assert_true (fb_graph_view_get_selected_constant (f->view) == f->m.shape->outputs[0]);

  /* A mark on a Constant drawn as a row counts in its reader's group. */
  g_hash_table_insert (marks, GUINT_TO_POINTER (f->m.three->id), GINT_TO_POINTER (FB_GRAPH_MARK_REMOVED));
  fb_graph_view_set_marks (f->view, marks);
  g_assert_cmpint (fb_graph_view_get_mark (f->view, f->m.three), ==, FB_GRAPH_MARK_REMOVED);
  root = fb_graph_layout_get_root (fb_graph_view_get_layout (f->view));
  g_assert_true (fb_graph_layout_node_group (fb_graph_view_get_layout (f->view), f->m.three) == root);
  g_assert_cmpint (fb_graph_scene_find_node (scene, f->m.three), ==, fb_graph_scene_find_node (scene, f->m.add));
  gtk_widget_queue_draw (GTK_WIDGET (f->view));
  wait_until_idle (f->view);
  fb_graph_view_search (f->view, "");
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  fb_ui_init ();

  g_test_add_func ("/ui/constant-rows/rows", test_rows);
  g_test_add_func ("/ui/constant-rows/as-nodes", test_as_nodes);
  g_test_add_func ("/ui/constant-rows/hit", test_hit);
  g_test_add_func ("/ui/constant-rows/seeded", test_seeded);
  g_test_add ("/ui/constant-rows/view-click", Fixture, NULL, fixture_set_up, test_view_click, fixture_tear_down);
  g_test_add ("/ui/constant-rows/view-search-marks", Fixture, NULL, fixture_set_up, test_view_search_marks,
              fixture_tear_down);
  return g_test_run ();
}
