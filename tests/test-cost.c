/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The modeled cost of nodes: flops by operator family and bytes read and written, including
 * fused nodes (their body's flops, only their own traffic) and unknown shapes (zeros). */
#include "fb-test-infer.h"

#define F32 FB_DTYPE_FLOAT32
#define F16 FB_DTYPE_FLOAT16
#define UNDEF FB_DTYPE_UNDEFINED

static FbCost
cost_of (TestGraph *tg, FbNode *node)
{
  INFER_OK (tg, node);
  return fb_node_cost (node);
}

static void
test_conv (void)
{
  TestGraph *tg = tg_new (17);
  FbNode *n;
  FbCost c;

  n = tg_node (tg, NULL, FB_OP_CONV, 2, 1, tg_input (tg, NULL, F32, "2x3x224x224"),
               tg_weights (tg, NULL, F32, "64x3x7x7"));
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_ints (tg, n, "pads", 4, I64S (3, 3, 3, 3));
  c = cost_of (tg, n);
  /* 2 * N * Cout * Hout * Wout * Cin/group * Kh * Kw */
  g_assert_cmpfloat (c.flops, ==, 2.0 * 2 * 64 * 112 * 112 * 3 * 7 * 7);
  g_assert_cmpfloat (c.bytes_read, ==, (2.0 * 3 * 224 * 224 + 64 * 3 * 7 * 7) * 4);
  g_assert_cmpfloat (c.bytes_written, ==, 2.0 * 64 * 112 * 112 * 4);

  n = tg_node (tg, NULL, FB_OP_CONV, 2, 1, tg_input (tg, NULL, F32, "1x32x10x10"),
               tg_weights (tg, NULL, F32, "32x1x3x3"));
  tg_int (tg, n, "group", 32);
  tg_ints (tg, n, "pads", 4, I64S (1, 1, 1, 1));
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 2.0 * 1 * 32 * 10 * 10 * 1 * 3 * 3);

  /* The same count in channels-last. */
  n = tg_node (tg, NULL, FB_OP_CONV, 2, 1, tg_input (tg, NULL, F32, "2x224x224x3"),
               tg_weights (tg, NULL, F32, "64x3x7x7"));
  tg_str (tg, n, FB_ATTR_LAYOUT, "nhwc");
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_ints (tg, n, "pads", 4, I64S (3, 3, 3, 3));
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 2.0 * 2 * 64 * 112 * 112 * 3 * 7 * 7);

  n = tg_node (tg, NULL, FB_OP_CONV_TRANSPOSE, 2, 1, tg_input (tg, NULL, F32, "1x8x5x5"),
               tg_weights (tg, NULL, F32, "8x4x3x3"));
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 2.0 * 8 * 5 * 5 * 4 * 3 * 3);
  tg_free (tg);
}

static void
test_contractions (void)
{
  TestGraph *tg = tg_new (17);
  FbNode *n;
  FbCost c;

  n = tg_node (tg, NULL, FB_OP_MATMUL, 2, 1, tg_input (tg, NULL, F32, "2x3x4"),
               tg_weights (tg, NULL, F32, "4x5"));
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 2.0 * 2 * 3 * 5 * 4);
  g_assert_cmpfloat (c.bytes_read, ==, (24 + 20) * 4.0);
  g_assert_cmpfloat (c.bytes_written, ==, 30 * 4.0);
  n = tg_node (tg, NULL, FB_OP_GEMM, 3, 1, tg_input (tg, NULL, F32, "4x3"),
               tg_weights (tg, NULL, F32, "5x4"), tg_weights (tg, NULL, F32, "5"));
  tg_int (tg, n, "transA", 1);
  tg_int (tg, n, "transB", 1);
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 2.0 * 3 * 5 * 4);
  n = tg_node (tg, NULL, FB_OP_EINSUM, 2, 1, tg_input (tg, NULL, F32, "5x2x3"),
               tg_input (tg, NULL, F32, "5x3x4"));
  tg_str (tg, n, "equation", "bij,bjk->bik");
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 2.0 * 5 * 2 * 4 * 3);
  n = tg_node (tg, NULL, FB_OP_EINSUM, 2, 1, tg_input (tg, NULL, F32, "7x2x3"),
               tg_input (tg, NULL, F32, "3x4"));
  tg_str (tg, n, "equation", "...ij,...jk->...ik");
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 2.0 * 7 * 2 * 4 * 3);
  n = tg_node (tg, NULL, FB_OP_EINSUM, 1, 1, tg_input (tg, NULL, F32, "2x3"));
  tg_str (tg, n, "equation", "ij->ji");
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 0);
  g_assert_cmpfloat (c.bytes_read, ==, 24);
  /* Sums within one operand: 3 additions for each of 2 rows; a trace of 4: 3. */
  n = tg_node (tg, NULL, FB_OP_EINSUM, 1, 1, tg_input (tg, NULL, F32, "2x4"));
  tg_str (tg, n, "equation", "ij->i");
  g_assert_cmpfloat (cost_of (tg, n).flops, ==, 2 * 3);
  n = tg_node (tg, NULL, FB_OP_EINSUM, 1, 1, tg_input (tg, NULL, F32, "4x4"));
  tg_str (tg, n, "equation", "ii");
  g_assert_cmpfloat (cost_of (tg, n).flops, ==, 3);
  tg_free (tg);
}

static void
test_elementwise_and_reductions (void)
{
  TestGraph *tg = tg_new (17);
  FbValue *x = tg_input (tg, NULL, F32, "4x5");
  FbNode *n;
  FbCost c;

  n = tg_node (tg, NULL, FB_OP_ADD, 2, 1, x, tg_input (tg, NULL, F32, "5"));
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 20);
  g_assert_cmpfloat (c.bytes_read, ==, (20 + 5) * 4.0);
  g_assert_cmpfloat (c.bytes_written, ==, 20 * 4.0);
  /* A value read twice is read once. */
  n = tg_node (tg, NULL, FB_OP_MUL, 2, 1, x, x);
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.bytes_read, ==, 20 * 4.0);
  /* Transcendental functions cost a few operations per element. */
  n = tg_node (tg, NULL, FB_OP_EXP, 1, 1, x);
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, >, 2 * 20);
  g_assert_cmpfloat (c.flops, <, 20 * 20);
  n = tg_node (tg, NULL, FB_OP_EQUAL, 2, 1, x, x);
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.bytes_written, ==, 20);   /* bool */
  /* Reductions: about one per input element. */
  n = tg_node (tg, NULL, FB_OP_REDUCE_SUM, 1, 1, x);
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 20);
  g_assert_cmpfloat (c.bytes_written, ==, 4);
  n = tg_node (tg, NULL, FB_OP_SOFTMAX, 1, 1, x);
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, >=, 20);
  n = tg_node (tg, NULL, FB_OP_MAX_POOL, 1, 1, tg_input (tg, NULL, F32, "1x2x8x8"));
  tg_ints (tg, n, "kernel_shape", 2, I64S (2, 2));
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 2 * 4 * 4 * 4);
  /* Moving data computes nothing but still reads and writes. */
  n = tg_node (tg, NULL, FB_OP_TRANSPOSE, 1, 1, tg_input (tg, NULL, F16, "4x5"));
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 0);
  g_assert_cmpfloat (c.bytes_read, ==, 40);
  g_assert_cmpfloat (c.bytes_written, ==, 40);
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, x, tg_const_i64 (tg, NULL, 1, I64S (20)));
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 0);
  g_assert_cmpfloat (c.bytes_read, ==, 80 + 8);
  tg_free (tg);
}

static void
test_fused_and_unknown (void)
{
  TestGraph *tg = tg_new (17);
  FbGraph *body = fb_graph_new_subgraph (tg->graph, "body");
  FbValue *bx = tg_input (tg, body, UNDEF, "*");
  FbValue *bb = tg_input (tg, body, UNDEF, "*");
  FbNode *add = tg_node (tg, body, FB_OP_ADD, 2, 1, bx, bb);
  FbNode *relu = tg_node (tg, body, FB_OP_RELU, 1, 1, OUT (add, 0));
  FbNode *n = tg_node (tg, NULL, FB_OP_FUSED, 2, 1, tg_input (tg, NULL, F32, "2x8"),
                       tg_weights (tg, NULL, F32, "8"));
  FbCost c;

  g_ptr_array_add (body->outputs, OUT (relu, 0));
  tg_graph_attr (tg, n, "body", body);
  c = cost_of (tg, n);
  /* The body's flops; only the node's own traffic: the sum never leaves registers. */
  g_assert_cmpfloat (c.flops, ==, 16 + 16);
  g_assert_cmpfloat (c.bytes_read, ==, (16 + 8) * 4.0);
  g_assert_cmpfloat (c.bytes_written, ==, 16 * 4.0);

  n = tg_node (tg, NULL, FB_OP_ADD, 2, 1, tg_input (tg, NULL, F32, "Nx8"), tg_input (tg, NULL, F32, "8"));
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 0);
  g_assert_cmpfloat (c.bytes_read, ==, 32);
  g_assert_cmpfloat (c.bytes_written, ==, 0);
  n = tg_node (tg, NULL, FB_OP_UNKNOWN, 1, 1, tg_input (tg, NULL, F32, "8"));
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 0);
  g_assert_cmpfloat (c.bytes_read, ==, 32);
  tg_free (tg);
}

static void
test_loop_and_recurrent (void)
{
  TestGraph *tg = tg_new (17);
  FbGraph *body = fb_graph_new_subgraph (tg->graph, "body");
  FbValue *v_in;
  FbNode *n;
  FbCost c;

  tg_input (tg, body, UNDEF, "*");
  g_ptr_array_add (body->outputs, tg_input (tg, body, UNDEF, "*"));
  v_in = tg_input (tg, body, UNDEF, "*");
  g_ptr_array_add (body->outputs, tg_node (tg, body, FB_OP_ADD, 2, 1, v_in, v_in)->outputs[0]);
  n = tg_node (tg, NULL, FB_OP_LOOP, 3, 1, tg_scalar_i64 (tg, NULL, 10), NULL,
               tg_input (tg, NULL, F32, "4"));
  tg_graph_attr (tg, n, "body", body);
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 10 * 4);

  /* Scan runs its body once per slice: 6 along axis 1 of the scan input. */
  body = fb_graph_new_subgraph (tg->graph, "scan_body");
  FbValue *s_in = tg_input (tg, body, UNDEF, "*"), *x_in = tg_input (tg, body, UNDEF, "*");
  g_ptr_array_add (body->outputs, tg_node (tg, body, FB_OP_ADD, 2, 1, s_in, x_in)->outputs[0]);
  n = tg_node (tg, NULL, FB_OP_SCAN, 2, 1, tg_input (tg, NULL, F32, "4"),
               tg_input (tg, NULL, F32, "4x6"));
  tg_graph_attr (tg, n, "body", body);
  tg_int (tg, n, "num_scan_inputs", 1);
  tg_ints (tg, n, "scan_input_axes", 1, I64S (1));
  c = cost_of (tg, n);
  g_assert_cmpfloat (c.flops, ==, 6 * 4);

  n = tg_node (tg, NULL, FB_OP_LSTM, 3, 1, tg_input (tg, NULL, F32, "5x2x10"),
               tg_weights (tg, NULL, F32, "1x64x10"), tg_weights (tg, NULL, F32, "1x64x16"));
  c = cost_of (tg, n);
  /* At least the gate products: steps x batch x 4 gates x hidden x (input + hidden) x 2. */
  g_assert_cmpfloat (c.flops, >=, 5.0 * 2 * 4 * 16 * (10 + 16) * 2);
  tg_free (tg);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cost/conv", test_conv);
  g_test_add_func ("/cost/contractions", test_contractions);
  g_test_add_func ("/cost/elementwise-and-reductions", test_elementwise_and_reductions);
  g_test_add_func ("/cost/fused-and-unknown", test_fused_and_unknown);
  g_test_add_func ("/cost/loop-and-recurrent", test_loop_and_recurrent);
  return g_test_run ();
}
