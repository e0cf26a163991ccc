/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuse-elementwise: elementwise trees, and reductions with their prologue and epilogue. */
#include "fb-test-passes.h"

static FbPipeline *
fuse (FbGraph *g)
{
  g_autoptr(FbPipelineOptions) o = tp_only ("fuse-elementwise", NULL);
  FbPipeline *p = tp_run (g, o);
  tp_assert_stages_agree (p, 13);
  return p;
}

static const FbNode *
only_fused (const FbGraph *g, const char *kind)
{
  const FbNode *found = NULL;

  for (guint i = 0; i < g->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (g->nodes, i);
      if (n->op == FB_OP_FUSED && g_strcmp0 (fb_node_attr_string (n, "kind", ""), kind) == 0)
        {
          g_assert_null (found);
          found = n;
        }
    }
  g_assert_nonnull (found);
  return found;
}

/* exp((a + b) * c) is one tree; a value also read outside stays the root of its own group. */
static void
test_tree (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *a = tp_input (g, "a", 2, TP_DIMS (3, 4));
  FbValue *b = tp_input (g, "b", 1, TP_DIMS (4));
  FbValue *c = tp_input (g, "c", 2, TP_DIMS (3, 4));
  FbValue *sum = tp_op (g, FB_OP_ADD, "add", a, b, NULL);
  FbValue *y = tp_op (g, FB_OP_EXP, "exp", tp_op (g, FB_OP_MUL, "mul", sum, c, NULL), NULL);
  FbValue *shared = tp_op (g, FB_OP_NEG, "neg", y, NULL);
  tp_output (g, tp_op (g, FB_OP_SUB, "sub", shared, tp_op (g, FB_OP_ABS, "abs", shared, NULL), NULL));
  tp_output (g, tp_op (g, FB_OP_TRANSPOSE, "t", shared, NULL));
  g_autoptr(FbPipeline) p = fuse (g);
  FbGraph *out = tp_stage_graph (p, "fuse-elementwise");

  /* {add, mul, exp, neg} and {abs, sub}: neg's result is also read by the transpose. */
  g_assert_cmpuint (out->nodes->len, ==, 3);
  g_assert_cmpuint (tp_count (out, FB_OP_FUSED, FALSE), ==, 2);
  g_assert_cmpuint (tp_count (out, FB_OP_EXP, TRUE), ==, 1);
}

/* Both readers of a value inside the group: the diamond fuses whole. */
static void
test_diamond (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 1, TP_DIMS (8));
  FbValue *n = tp_op (g, FB_OP_NEG, "neg", x, NULL);
  tp_output (g, tp_op (g, FB_OP_SUB, "sub", n, tp_op (g, FB_OP_ABS, "abs", n, NULL), NULL));
  g_autoptr(FbPipeline) p = fuse (g);
  FbGraph *out = tp_stage_graph (p, "fuse-elementwise");

  g_assert_cmpuint (out->nodes->len, ==, 1);
  g_assert_cmpuint (fb_node_attr_graph (g_ptr_array_index (out->nodes, 0), "body")->nodes->len, ==, 3);
}

/* The attention pattern: scores + mask -> Softmax -> Where(IsNaN(s), 0, s). */
static void
test_reduction_group (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 3, TP_DIMS (2, 4, 4));
  FbValue *mask = tp_const (g, "mask", 2, TP_DIMS (4, 4), NULL);
  FbValue *s = tp_op (g, FB_OP_SOFTMAX, "softmax", tp_op (g, FB_OP_ADD, "masked", x, mask, NULL), NULL);
  FbValue *nan = tp_op (g, FB_OP_IS_NAN, "isnan", s, NULL);
  FbValue *y = tp_op (g, FB_OP_WHERE, "where", nan, tp_scalar (g, 0), s, NULL);
  const FbNode *fused;
  FbGraph *out;

  tp_output (g, tp_op (g, FB_OP_TRANSPOSE, "after", y, NULL));
  g_autoptr(FbPipeline) p = fuse (g);
  out = tp_stage_graph (p, "fuse-elementwise");
  fused = only_fused (out, "reduction");
  g_assert_cmpstr (fused->name, ==, "softmax");
  g_assert_cmpuint (fb_node_attr_graph (fused, "body")->nodes->len, ==, 4);
  g_assert_cmpuint (out->nodes->len, ==, 2);
}

/* An epilogue operand computed from the reduction's own result would make the group wait on
 * itself: that reader stays outside. */
static void
test_no_cycle_through_outside_node (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (4, 4));
  FbValue *s = tp_op (g, FB_OP_SOFTMAX, "softmax", x, NULL);
  FbValue *t = tp_op (g, FB_OP_TRANSPOSE, "t", s, NULL);
  FbValue *y = tp_op (g, FB_OP_ADD, "add", s, t, NULL);
  tp_output (g, tp_op (g, FB_OP_RELU, "relu", y, NULL));
  g_autoptr(FbPipeline) p = fuse (g);
  FbGraph *out = tp_stage_graph (p, "fuse-elementwise");

  /* add+relu form a tree after the transpose; softmax has nothing to take. */
  g_assert_cmpuint (tp_count (out, FB_OP_SOFTMAX, FALSE), ==, 1);
  only_fused (out, "elementwise");
}

static void
test_no_fuse (void)
{
  FbGraph *g = tp_graph (17);
  g_autoptr(FbPipelineOptions) o = tp_only ("fuse-elementwise", NULL);
  FbValue *x = tp_input (g, "x", 1, TP_DIMS (8));
  FbValue *y = tp_op (g, FB_OP_EXP, "exp", tp_op (g, FB_OP_NEG, "neg", x, NULL), NULL);
  tp_output (g, tp_op (g, FB_OP_SQRT, "sqrt", y, NULL));
  g_ptr_array_add (o->no_fuse, g_strdup ("exp"));
  g_autoptr(FbPipeline) p = tp_run (g, o);

  g_assert_cmpuint (tp_count (tp_stage_graph (p, "fuse-elementwise"), FB_OP_FUSED, FALSE), ==, 0);
  tp_assert_stages_agree (p, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pass/fuse-elementwise/tree", test_tree);
  g_test_add_func ("/pass/fuse-elementwise/diamond", test_diamond);
  g_test_add_func ("/pass/fuse-elementwise/reduction", test_reduction_group);
  g_test_add_func ("/pass/fuse-elementwise/no-cycle", test_no_cycle_through_outside_node);
  g_test_add_func ("/pass/fuse-elementwise/no-fuse", test_no_fuse);
  return g_test_run ();
}
