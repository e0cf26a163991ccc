/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuse-epilogue: contractions take their bias, activation and residual into one FUSED node. */
#include "fb-test-passes.h"

static FbPipeline *
fuse (FbGraph *g, const char *no_fuse)
{
  g_autoptr(FbPipelineOptions) o = tp_only ("fuse-epilogue", NULL);
  FbPipeline *p;

  if (no_fuse)
    g_ptr_array_add (o->no_fuse, g_strdup (no_fuse));
  p = tp_run (g, o);
  tp_assert_stages_agree (p, 11);
  return p;
}

static FbGraph *
body_of (const FbNode *n)
{
  FbGraph *body = fb_node_attr_graph (n, "body");
  g_assert_nonnull (body);
  return body;
}

/* conv -> +bias -> relu -> +x -> relu: the whole chain, in order. */
static void
test_full_chain (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 4, 5, 5));
  FbValue *v = tp_op (g, FB_OP_CONV, "conv", x, tp_const (g, "w", 4, TP_DIMS (4, 4, 3, 3), NULL), NULL);
  FbNode *fused;
  FbGraph *body;
  FbOpKind expect[] = { FB_OP_CONV, FB_OP_ADD, FB_OP_RELU, FB_OP_ADD, FB_OP_RELU };

  tp_attr_ints (g, v, "pads", 4, TP_DIMS (1, 1, 1, 1));
  v = tp_op (g, FB_OP_ADD, "bias", v, tp_const (g, "b", 3, TP_DIMS (4, 1, 1), NULL), NULL);
  v = tp_op (g, FB_OP_RELU, "relu", v, NULL);
  v = tp_op (g, FB_OP_ADD, "residual", x, v, NULL);
  v = tp_op (g, FB_OP_RELU, "relu2", v, NULL);
  tp_output (g, v);
  g_autoptr(FbPipeline) p = fuse (g, NULL);
  FbGraph *out = tp_stage_graph (p, "fuse-epilogue");

  g_assert_cmpuint (out->nodes->len, ==, 1);
  fused = g_ptr_array_index (out->nodes, 0);
  g_assert_cmpint (fused->op, ==, FB_OP_FUSED);
  g_assert_cmpstr (fb_node_attr_string (fused, "kind", ""), ==, "epilogue");
  g_assert_cmpstr (fused->name, ==, "conv");
  g_assert_cmpuint (fused->n_prov, ==, 5);
  body = body_of (fused);
  g_assert_cmpuint (body->nodes->len, ==, G_N_ELEMENTS (expect));
  for (guint i = 0; i < G_N_ELEMENTS (expect); i++)
    g_assert_cmpint (((FbNode *) g_ptr_array_index (body->nodes, i))->op, ==, expect[i]);
  /* x, w and b come in; the graph output leaves with its id and name. */
  g_assert_cmpuint (fused->n_inputs, ==, 3);
  g_assert_cmpuint (body->inputs->len, ==, 3);
  g_assert_true (fused->outputs[0]->is_output);
  g_assert_cmpuint (fused->outputs[0]->id, ==, v->id);
}

static void
test_matmul_bias_gelu (void)
{
  FbGraph *g = tp_graph (20);
  FbValue *x = tp_input (g, "x", 3, TP_DIMS (1, 4, 6));
  FbValue *v = tp_op (g, FB_OP_MATMUL, "mm", x, tp_const (g, "w", 2, TP_DIMS (6, 8), NULL), NULL);
  v = tp_op (g, FB_OP_ADD, "bias", tp_const (g, "b", 1, TP_DIMS (8), NULL), v, NULL);
  v = tp_op (g, FB_OP_GELU, "gelu", v, NULL);
  tp_output (g, v);
  g_autoptr(FbPipeline) p = fuse (g, NULL);
  FbGraph *out = tp_stage_graph (p, "fuse-epilogue");

  g_assert_cmpuint (out->nodes->len, ==, 1);
  g_assert_cmpuint (tp_count (out, FB_OP_GELU, TRUE), ==, 1);
  g_assert_cmpuint (tp_count (out, FB_OP_MATMUL, TRUE), ==, 1);
}

/* A result read twice cannot be consumed inside a kernel: the chain stops there. */
static void
test_shared_result_stops_the_chain (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (3, 4));
  FbValue *mm = tp_op (g, FB_OP_GEMM, "gemm", x, tp_const (g, "w", 2, TP_DIMS (4, 5), NULL), NULL);
  FbValue *a = tp_op (g, FB_OP_SIGMOID, "sig", mm, NULL);
  FbValue *b = tp_op (g, FB_OP_TANH, "tanh", mm, NULL);
  tp_output (g, a);
  tp_output (g, b);
  g_autoptr(FbPipeline) p = fuse (g, NULL);

  g_assert_cmpuint (tp_count (tp_stage_graph (p, "fuse-epilogue"), FB_OP_FUSED, FALSE), ==, 0);
}

static void
test_no_fuse_anchor (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (3, 4));
  FbValue *v = tp_op (g, FB_OP_GEMM, "gemm", x, tp_const (g, "w", 2, TP_DIMS (4, 5), NULL), NULL);
  tp_output (g, tp_op (g, FB_OP_RELU, "relu", v, NULL));
  g_autoptr(FbPipeline) p = fuse (g, "gemm");

  g_assert_cmpuint (tp_count (tp_stage_graph (p, "fuse-epilogue"), FB_OP_FUSED, FALSE), ==, 0);
}

/* Clip bounds that are computed at run time are not an epilogue a kernel can bake in. */
static void
test_dynamic_clip_is_not_an_activation (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (3, 4));
  FbValue *lo = tp_input (g, "lo", 0, NULL);
  FbValue *v = tp_op (g, FB_OP_GEMM, "gemm", x, tp_const (g, "w", 2, TP_DIMS (4, 5), NULL), NULL);
  tp_output (g, tp_op (g, FB_OP_CLIP, "clip", v, lo, NULL));
  g_autoptr(FbPipeline) p = fuse (g, NULL);

  g_assert_cmpuint (tp_count (tp_stage_graph (p, "fuse-epilogue"), FB_OP_FUSED, FALSE), ==, 0);
}

/* conv -> LeakyRelu -> Max (x, one number), as TensorFlow exports bound an activation: two
 * activations in a row, the bound taken in either operand order. */
static void
test_scalar_bounds (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 4, 5, 5));
  FbValue *v = tp_op (g, FB_OP_CONV, "conv", x, tp_const (g, "w", 4, TP_DIMS (4, 4, 1, 1), NULL), NULL);
  FbOpKind expect[] = { FB_OP_CONV, FB_OP_LEAKY_RELU, FB_OP_MAX, FB_OP_MIN };

  v = tp_op (g, FB_OP_LEAKY_RELU, "leaky", v, NULL);
  v = tp_op (g, FB_OP_MAX, "max", v, tp_const (g, "lo", 4, TP_DIMS (1, 1, 1, 1), NULL), NULL);
  v = tp_op (g, FB_OP_MIN, "min", tp_scalar (g, 0.5), v, NULL);
  tp_output (g, v);
  g_autoptr(FbPipeline) p = fuse (g, NULL);
  FbGraph *out = tp_stage_graph (p, "fuse-epilogue");

  g_assert_cmpuint (out->nodes->len, ==, 1);
  FbGraph *body = body_of (g_ptr_array_index (out->nodes, 0));
  g_assert_cmpuint (body->nodes->len, ==, G_N_ELEMENTS (expect));
  for (guint i = 0; i < G_N_ELEMENTS (expect); i++)
    g_assert_cmpint (((FbNode *) g_ptr_array_index (body->nodes, i))->op, ==, expect[i]);
}

/* A Max against a per-channel tensor, or against another activation, is no bound. */
static void
test_max_of_tensors_is_not_a_bound (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 4, 5, 5));
  FbValue *y = tp_input (g, "y", 4, TP_DIMS (1, 4, 5, 5));
  FbValue *a = tp_op (g, FB_OP_CONV, "conv_a", x, tp_const (g, "wa", 4, TP_DIMS (4, 4, 1, 1), NULL), NULL);
  FbValue *b = tp_op (g, FB_OP_CONV, "conv_b", x, tp_const (g, "wb", 4, TP_DIMS (4, 4, 1, 1), NULL), NULL);
  tp_output (g, tp_op (g, FB_OP_MAX, "max_c", a, tp_const (g, "c", 4, TP_DIMS (1, 4, 1, 1), NULL), NULL));
  tp_output (g, tp_op (g, FB_OP_MAX, "max_y", b, y, NULL));
  g_autoptr(FbPipeline) p = fuse (g, NULL);

  g_assert_cmpuint (tp_count (tp_stage_graph (p, "fuse-epilogue"), FB_OP_FUSED, FALSE), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pass/fuse-epilogue/full-chain", test_full_chain);
  g_test_add_func ("/pass/fuse-epilogue/matmul-bias-gelu", test_matmul_bias_gelu);
  g_test_add_func ("/pass/fuse-epilogue/shared-result", test_shared_result_stops_the_chain);
  g_test_add_func ("/pass/fuse-epilogue/no-fuse", test_no_fuse_anchor);
  g_test_add_func ("/pass/fuse-epilogue/dynamic-clip", test_dynamic_clip_is_not_an_activation);
  g_test_add_func ("/pass/fuse-epilogue/scalar-bounds", test_scalar_bounds);
  g_test_add_func ("/pass/fuse-epilogue/max-of-tensors", test_max_of_tensors_is_not_a_bound);
  return g_test_run ();
}
