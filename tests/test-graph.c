/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-graph.h"

/* x -> Relu(a) -> Add(b, with weights w) -> y, and a dead Neg hanging off a. */
typedef struct {
  FbGraph *graph;
  FbNode  *relu, *add, *neg;
  FbValue *x, *a, *y, *w, *dead;
} Sample;

static void
sample_build (Sample *s)
{
  g_autoptr(FbModel) model = fb_model_new (NULL);
  int64_t dims[] = { 2, 2 };
  FbShape shape = fb_shape_make (2, dims);
  g_autoptr(FbTensor) w = fb_tensor_new (FB_DTYPE_FLOAT32, 2, dims, NULL);

  s->graph = fb_graph_new (model);
  s->x = fb_graph_add_value (s->graph, "x", FB_DTYPE_FLOAT32, &shape);
  s->x->is_input = TRUE;
  g_ptr_array_add (s->graph->inputs, s->x);
  s->w = fb_graph_add_constant (s->graph, "w", w);
  s->a = fb_graph_add_value (s->graph, "a", FB_DTYPE_FLOAT32, &shape);
  s->y = fb_graph_add_value (s->graph, "y", FB_DTYPE_FLOAT32, &shape);
  s->dead = fb_graph_add_value (s->graph, "dead", FB_DTYPE_FLOAT32, &shape);
  s->y->is_output = TRUE;
  g_ptr_array_add (s->graph->outputs, s->y);

  /* Added out of order on purpose: toposort must fix it. */
  s->add = fb_graph_add_node (s->graph, FB_OP_ADD, "add", 2, 1);
  s->add->inputs[0] = s->a;
  s->add->inputs[1] = s->w;
  fb_node_set_output (s->add, 0, s->y);
  s->relu = fb_graph_add_node (s->graph, FB_OP_RELU, "relu", 1, 1);
  s->relu->inputs[0] = s->x;
  fb_node_set_output (s->relu, 0, s->a);
  s->neg = fb_graph_add_node (s->graph, FB_OP_NEG, "neg", 1, 1);
  s->neg->inputs[0] = s->a;
  fb_node_set_output (s->neg, 0, s->dead);
}

static void
test_toposort_and_verify (void)
{
  g_autoptr(GError) error = NULL;
  Sample s;

  sample_build (&s);
  g_assert_false (fb_graph_verify (s.graph, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "'add'"));
  g_clear_error (&error);
  g_assert_true (fb_graph_toposort (s.graph, &error));
  g_assert_no_error (error);
  g_assert_true (g_ptr_array_index (s.graph->nodes, 0) == s.relu);
  g_assert_true (fb_graph_verify (s.graph, &error));
  g_assert_no_error (error);
  fb_graph_free (s.graph);
}

static void
test_cycle_is_an_error (void)
{
  g_autoptr(GError) error = NULL;
  Sample s;

  sample_build (&s);
  s.relu->inputs[0] = s.y;   /* relu reads add's output: a cycle */
  g_assert_false (fb_graph_toposort (s.graph, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "cycle"));
  fb_graph_free (s.graph);
}

static void
test_copy_keeps_ids_and_shares_weights (void)
{
  Sample s;
  FbGraph *copy;

  sample_build (&s);
  g_assert_true (fb_graph_toposort (s.graph, NULL));
  copy = fb_graph_copy (s.graph);
  g_assert_cmpuint (copy->nodes->len, ==, 3);
  for (guint i = 0; i < copy->nodes->len; i++)
    {
      FbNode *a = g_ptr_array_index (s.graph->nodes, i);
      FbNode *b = g_ptr_array_index (copy->nodes, i);
      g_assert_true (a != b);
      g_assert_cmpuint (a->id, ==, b->id);
      g_assert_cmpstr (a->name, ==, b->name);
      for (guint k = 0; k < b->n_inputs; k++)
        g_assert_true (b->inputs[k]->graph == copy);
    }
  FbValue *w2 = fb_graph_lookup_value (copy, "w");
  g_assert_true (w2 != s.w);
  g_assert_true (w2->constant == s.w->constant);
  g_assert_true (fb_graph_verify (copy, NULL));
  fb_graph_free (s.graph);
  /* The copy outlives the original and still owns its weights. */
  g_assert_cmpint (w2->constant->numel, ==, 4);
  fb_graph_free (copy);
}

static void
test_remove_dead_and_replace (void)
{
  Sample s;
  g_autoptr(GHashTable) uses = NULL;

  sample_build (&s);
  g_assert_true (fb_graph_toposort (s.graph, NULL));
  fb_graph_remove_dead (s.graph);
  g_assert_cmpuint (s.graph->nodes->len, ==, 2);
  g_assert_false (g_ptr_array_find (s.graph->values, s.dead, NULL));

  uses = fb_graph_build_uses (s.graph);
  GPtrArray *a_uses = g_hash_table_lookup (uses, s.a);
  g_assert_cmpuint (a_uses->len, ==, 1);

  /* Bypass the relu: y = x + w. */
  fb_graph_replace_uses (s.graph, s.a, s.x);
  fb_graph_remove_dead (s.graph);
  g_assert_cmpuint (s.graph->nodes->len, ==, 1);
  g_assert_true (fb_graph_verify (s.graph, NULL));
  fb_graph_free (s.graph);
}

static void
test_attributes (void)
{
  Sample s;
  int64_t perm[] = { 1, 0 };
  FbAttr a = { .name = "perm", .type = FB_ATTR_INTS, .ints = { 2, perm } };
  FbAttr b = { .name = "alpha", .type = FB_ATTR_FLOAT, .f = 0.5f };
  guint n;

  sample_build (&s);
  fb_node_set_attr (s.graph, s.relu, &a);
  fb_node_set_attr (s.graph, s.relu, &b);
  perm[0] = 7;  /* the node holds its own copy */
  g_assert_cmpint (fb_node_attr_ints (s.relu, "perm", &n)[0], ==, 1);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpfloat (fb_node_attr_float (s.relu, "alpha", 1.0f), ==, 0.5f);
  g_assert_cmpint (fb_node_attr_int (s.relu, "missing", 42), ==, 42);
  b.f = 2.0f;
  fb_node_set_attr (s.graph, s.relu, &b);
  g_assert_cmpuint (s.relu->n_attrs, ==, 2);
  g_assert_cmpfloat (fb_node_attr_float (s.relu, "alpha", 1.0f), ==, 2.0f);
  fb_graph_free (s.graph);
}

static void
test_provenance_union (void)
{
  Sample s;
  guint p1[] = { 3, 4 }, p2[] = { 4, 9 };

  sample_build (&s);
  fb_node_add_prov (s.graph, s.add, p1, 2);
  fb_node_add_prov (s.graph, s.add, p2, 2);
  g_assert_cmpuint (s.add->n_prov, ==, 3);
  g_assert_cmpuint (s.add->prov[2], ==, 9);
  fb_graph_free (s.graph);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/graph/toposort-and-verify", test_toposort_and_verify);
  g_test_add_func ("/graph/cycle-is-an-error", test_cycle_is_an_error);
  g_test_add_func ("/graph/copy-keeps-ids-and-shares-weights", test_copy_keeps_ids_and_shares_weights);
  g_test_add_func ("/graph/remove-dead-and-replace", test_remove_dead_and_replace);
  g_test_add_func ("/graph/attributes", test_attributes);
  g_test_add_func ("/graph/provenance-union", test_provenance_union);
  return g_test_run ();
}
