/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fold-constants, cleanup and cse: the passes that only remove work. */
#include "fb-test-passes.h"

#include <string.h>

/* The exporter's flatten: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])). */
static void
test_shape_chain (void)
{
  FbGraph *g = tp_graph (13);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (2, 3, 4, 5));
  FbValue *shape = tp_op (g, FB_OP_SHAPE, "shape", x, NULL);
  g_autoptr(FbTensor) zero = fb_tensor_new_scalar_i64 (0);
  FbValue *idx = fb_graph_add_constant (g, "zero", zero);
  FbValue *dim = tp_op (g, FB_OP_GATHER, "gather", shape, idx, NULL);
  FbValue *u = tp_op (g, FB_OP_UNSQUEEZE, "unsqueeze", dim, tp_ints (g, 1, TP_DIMS (0)), NULL);
  FbValue *cat = tp_op (g, FB_OP_CONCAT, "concat", u, tp_ints (g, 1, TP_DIMS (-1)), NULL);
  FbValue *y;
  FbGraph *out;
  FbNode *reshape;
  FbStage *s;
  guint shape_id = tp_node_of (shape)->id;

  tp_attr_int (g, cat, "axis", 0);
  y = tp_op (g, FB_OP_RESHAPE, "reshape", x, cat, NULL);
  tp_output (g, tp_op (g, FB_OP_RELU, "relu", y, NULL));
  g_autoptr(FbPipelineOptions) o = tp_only ("fold-constants", NULL);
  g_autoptr(FbPipeline) p = tp_run (g, o);
  tp_assert_stages_agree (p, 29);

  s = fb_pipeline_stage_by_name (p, "fold-constants");
  out = s->graph;
  g_assert_cmpuint (out->nodes->len, ==, 2);
  reshape = tp_find (out, FB_OP_RESHAPE);
  g_assert_nonnull (reshape->inputs[1]->constant);
  /* Shapes stay known through the rewrite. */
  g_assert_cmpint (reshape->outputs[0]->shape.dim[1], ==, 60);
  g_assert_cmpint (tp_find (out, FB_OP_RELU)->outputs[0]->shape.dim[1], ==, 60);
  /* The folded nodes went into the Reshape, which now stands for them. */
  g_assert_cmpuint (reshape->n_prov, ==, 5);
  g_assert_cmpint (tp_change (s, shape_id)->kind, ==, FB_CHANGE_REMOVED);
  g_assert_cmpuint (tp_change (s, shape_id)->went_to, ==, reshape->id);
  g_assert_nonnull (strstr (s->summary, "folded 4 nodes"));
}

/* A huge ConstantOfShape stays a node: folding it would put megabytes into the graph. */
static void
test_size_cap (void)
{
  FbGraph *g = tp_graph (13);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (1024, 1024));
  FbValue *big = tp_op (g, FB_OP_CONSTANT_OF_SHAPE, "big", tp_ints (g, 2, TP_DIMS (1024, 1024)), NULL);
  FbValue *small = tp_op (g, FB_OP_CONSTANT_OF_SHAPE, "small", tp_ints (g, 2, TP_DIMS (1, 1024)), NULL);
  tp_output (g, tp_op (g, FB_OP_ADD, "add", tp_op (g, FB_OP_ADD, "add0", x, big, NULL), small, NULL));
  g_autoptr(FbPipelineOptions) o = tp_only ("fold-constants", NULL);
  g_autoptr(FbPipeline) p = tp_run (g, o);
  FbGraph *out = tp_stage_graph (p, "fold-constants");

  g_assert_cmpuint (tp_count (out, FB_OP_CONSTANT_OF_SHAPE, FALSE), ==, 1);
  g_assert_cmpstr (tp_find (out, FB_OP_CONSTANT_OF_SHAPE)->name, ==, "big");
}

static void
test_cleanup (void)
{
  FbGraph *g = tp_graph (13);
  FbValue *x = tp_input (g, "x", 1, TP_DIMS (4));
  FbValue *v = tp_op (g, FB_OP_IDENTITY, "id", x, NULL);
  v = tp_op (g, FB_OP_DROPOUT, "dropout", v, NULL);
  tp_op (g, FB_OP_NEG, "dead", v, NULL);
  tp_output (g, tp_op (g, FB_OP_RELU, "relu", v, NULL));
  g_autoptr(FbPipelineOptions) o = tp_only ("cleanup", NULL);
  g_autoptr(FbPipeline) p = tp_run (g, o);
  FbGraph *out = tp_stage_graph (p, "cleanup");
  FbStage *s = fb_pipeline_stage_by_name (p, "cleanup");

  tp_assert_stages_agree (p, 31);
  g_assert_cmpuint (out->nodes->len, ==, 1);
  g_assert_true (tp_find (out, FB_OP_RELU)->inputs[0]->is_input);
  g_assert_nonnull (strstr (s->summary, "1 Identity"));
  g_assert_nonnull (strstr (s->summary, "1 Dropout"));
  g_assert_nonnull (strstr (s->summary, "1 dead"));
}

static void
test_cse (void)
{
  FbGraph *g = tp_graph (13);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (2, 3));
  FbValue *a = tp_op (g, FB_OP_MUL, "a", x, tp_const (g, "c1", 1, TP_DIMS (3), TP_VALS (1, 2, 3)), NULL);
  FbValue *b = tp_op (g, FB_OP_MUL, "b", x, tp_const (g, "c2", 1, TP_DIMS (3), TP_VALS (1, 2, 3)), NULL);
  FbValue *c = tp_op (g, FB_OP_MUL, "c", x, tp_const (g, "c3", 1, TP_DIMS (3), TP_VALS (1, 2, 4)), NULL);
  tp_output (g, tp_op (g, FB_OP_ADD, "sum", tp_op (g, FB_OP_ADD, "ab", a, b, NULL), c, NULL));
  g_autoptr(FbPipelineOptions) o = tp_only ("cse", NULL);
  g_autoptr(FbPipeline) p = tp_run (g, o);
  FbGraph *out = tp_stage_graph (p, "cse");
  FbStage *s = fb_pipeline_stage_by_name (p, "cse");
  guint b_id = tp_node_of (b)->id, a_id = tp_node_of (a)->id;

  tp_assert_stages_agree (p, 37);
  /* a and b read equal constants: one node; c's constant differs. */
  g_assert_cmpuint (tp_count (out, FB_OP_MUL, FALSE), ==, 2);
  g_assert_cmpint (tp_change (s, b_id)->kind, ==, FB_CHANGE_REMOVED);
  g_assert_cmpuint (tp_change (s, b_id)->went_to, ==, a_id);
  g_assert_cmpuint (fb_graph_find_node (out, a_id)->n_prov, ==, 2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pass/fold-constants/shape-chain", test_shape_chain);
  g_test_add_func ("/pass/fold-constants/size-cap", test_size_cap);
  g_test_add_func ("/pass/cleanup", test_cleanup);
  g_test_add_func ("/pass/cse", test_cse);
  return g_test_run ();
}
