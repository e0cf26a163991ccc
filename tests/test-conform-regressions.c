/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Regression tests for bugs the node suite and real models found (issue 9), each on the
 * interpreter and the cpu target. */
#include "fb-test-cpu.h"
#include "fb-infer.h"

/* Runs graph on the cpu target (after tc_check has compared it with the interpreter). */
static GPtrArray *
cpu_run (FbGraph *graph, GPtrArray *inputs)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbCpuModule) m = NULL;
  GPtrArray *out;

  tc_check (graph, inputs);
  m = fb_cpu_compile (graph, 2, &error);
  g_assert_no_error (error);
  out = fb_cpu_module_run (m, inputs, NULL, &error);
  g_assert_no_error (error);
  return out;
}

/* One-input Max, Min and Sum (and other copies) lower to equal kernel bodies under different
 * function names; the kernel cache handed the first one's object to the others, which then
 * lacked their own function ("cannot find kernel function fbk_Sum_..._p0"). */
static void
test_one_input_variadic (void)
{
  const FbOpKind ops[] = { FB_OP_MAX, FB_OP_MIN, FB_OP_SUM, FB_OP_MEAN };

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      FbGraph *g = ti_graph (13);
      FbNode *n = ti_node (g, ops[i], 1, 1);
      tc_node (g, n, TI_IN (ti_f32 (1, D (3), V (1, -2, 3))), 0);
    }
  ti_done ();
}

/* ConvTranspose with output_shape larger than the full output (ONNX's
 * test_convtranspose_output_shape: 3x3 input, stride 3x2, output 10x8 where the full output is
 * 9x7): no negative padding, the extra last row and column hold the bias alone. It was off by up
 * to 15. */
static void
test_conv_transpose_output_shape (void)
{
  FbGraph *g = ti_graph (11);
  FbNode *n = ti_node (g, FB_OP_CONV_TRANSPOSE, 3, 1);
  FbTensor *x = ti_f32 (4, D (1, 1, 3, 3), V (0, 1, 2, 3, 4, 5, 6, 7, 8));
  FbTensor *w = ti_f32 (4, D (1, 1, 3, 3), V (1, 1, 1, 1, 1, 1, 1, 1, 1));
  FbTensor *b = ti_f32 (1, D (1), V (0.5));
  g_autoptr(GPtrArray) in = NULL, out = NULL;
  const FbTensor *y;
  const float *yv;

  ti_attr_ints (g, n, "strides", 2, D (3, 2));
  ti_attr_ints (g, n, "output_shape", 2, D (10, 8));
  tc_finish (g, n, TI_IN (x, w, b), 0x6);
  g_assert_cmpint (n->outputs[0]->shape.dim[2], ==, 10);
  g_assert_cmpint (n->outputs[0]->shape.dim[3], ==, 8);
  in = tc_inputs (g, n, TI_IN (x, w, b), 0x6);
  out = cpu_run (g, in);
  y = out->pdata[0];
  g_assert_cmpint (y->dims[2], ==, 10);
  g_assert_cmpint (y->dims[3], ==, 8);
  yv = fb_tensor_data (y);
  /* Row 0 gathers x[0, :] with stride 2 along the width: 0, 0, 0+1, 1, 1+2, 2, 2, then bias. */
  g_assert_cmpfloat_with_epsilon (yv[0], 0.5, 1e-6);
  g_assert_cmpfloat_with_epsilon (yv[2], 1.5, 1e-6);
  g_assert_cmpfloat_with_epsilon (yv[4], 3.5, 1e-6);
  for (int c = 0; c < 8; c++)
    g_assert_cmpfloat_with_epsilon (yv[9 * 8 + c], 0.5, 1e-6);
  for (int r = 0; r < 10; r++)
    g_assert_cmpfloat_with_epsilon (yv[r * 8 + 7], 0.5, 1e-6);
  ti_done ();
}

/* An If whose condition is a 1x1 tensor: the spec asks for one element, not rank 0. */
static void
test_if_one_by_one_condition (void)
{
  FbGraph *g = ti_graph (17);
  FbNode *iff = fb_graph_add_node (g, FB_OP_IF, "if", 1, 1);
  FbValue *c = fb_graph_add_value (g, "c", FB_DTYPE_BOOL, NULL);
  FbValue *x = fb_graph_add_value (g, "x", FB_DTYPE_FLOAT32, NULL);
  FbGraph *then_g = fb_graph_new_subgraph (g, "then");
  FbGraph *else_g = fb_graph_new_subgraph (g, "else");
  FbNode *neg = fb_graph_add_node (then_g, FB_OP_NEG, "neg", 1, 1);
  FbNode *abs = fb_graph_add_node (else_g, FB_OP_ABS, "abs", 1, 1);
  FbTensor *xt = ti_f32 (1, D (3), V (1, -2, 3));
  g_autoptr(GError) error = NULL;

  c->shape = fb_shape_make (2, D (1, 1));
  x->shape = fb_shape_make (1, D (3));
  c->is_input = x->is_input = TRUE;
  g_ptr_array_add (g->inputs, c);
  g_ptr_array_add (g->inputs, x);
  neg->inputs[0] = x;
  fb_node_set_output (neg, 0, fb_graph_add_value (then_g, "neg_out", FB_DTYPE_UNDEFINED, NULL));
  abs->inputs[0] = x;
  fb_node_set_output (abs, 0, fb_graph_add_value (else_g, "abs_out", FB_DTYPE_UNDEFINED, NULL));
  g_ptr_array_add (then_g->outputs, neg->outputs[0]);
  g_ptr_array_add (else_g->outputs, abs->outputs[0]);
  iff->inputs[0] = c;
  fb_node_set_output (iff, 0, fb_graph_add_value (g, "y", FB_DTYPE_UNDEFINED, NULL));
  ti_attr_graph (g, iff, "then_branch", then_g);
  ti_attr_graph (g, iff, "else_branch", else_g);
  iff->outputs[0]->is_output = TRUE;
  g_ptr_array_add (g->outputs, iff->outputs[0]);
  g_assert_true (fb_infer_graph (g, &error));
  g_assert_no_error (error);
  for (int pick = 0; pick < 2; pick++)
    {
      FbTensor *ct = ti_tensor (FB_DTYPE_BOOL, 2, D (1, 1), V (pick));
      g_autoptr(GPtrArray) in = g_ptr_array_new ();
      g_autoptr(GPtrArray) out = NULL;

      g_ptr_array_add (in, ct);
      g_ptr_array_add (in, xt);
      out = cpu_run (g, in);
      ti_assert (out->pdata[0], FB_DTYPE_FLOAT32, 1, D (3),
                 pick ? V (-1, 2, -3) : V (1, 2, 3), 0);
    }
  ti_done ();
}

/* Dropout whose mask is read: at inference the output is the input and the mask all true. */
static void
test_dropout_mask (void)
{
  FbGraph *g = ti_graph (13);
  FbNode *n = ti_node (g, FB_OP_DROPOUT, 1, 2);
  g_autoptr(GPtrArray) in = NULL, out = NULL;
  FbTensor *x = ti_f32 (2, D (2, 2), V (1, -2, 3, -4));

  tc_finish (g, n, TI_IN (x), 0);
  in = tc_inputs (g, n, TI_IN (x), 0);
  out = cpu_run (g, in);
  ti_assert (out->pdata[0], FB_DTYPE_FLOAT32, 2, D (2, 2), V (1, -2, 3, -4), 0);
  ti_assert (out->pdata[1], FB_DTYPE_BOOL, 2, D (2, 2), V (1, 1, 1, 1), 0);
  ti_done ();
}

/* Trilu with k fed at run time, and Range whose bounds (and so its length) only the run gives:
 * the cpu target refused both ("k must be constant", "output shape is not known at compile
 * time"). */
static void
test_run_time_operands (void)
{
  {
    FbGraph *g = ti_graph (14);
    FbNode *n = ti_node (g, FB_OP_TRILU, 2, 1);
    FbTensor *x = ti_f32 (2, D (3, 3), V (1, 2, 3, 4, 5, 6, 7, 8, 9));
    FbTensor *k = ti_i64 (0, NULL, (const int64_t[]) { 1 });
    g_autoptr(GPtrArray) in = NULL, out = NULL;

    tc_finish (g, n, TI_IN (x, k), 0);
    in = tc_inputs (g, n, TI_IN (x, k), 0);
    out = cpu_run (g, in);
    ti_assert (out->pdata[0], FB_DTYPE_FLOAT32, 2, D (3, 3), V (0, 2, 3, 0, 0, 6, 0, 0, 0), 0);
  }
  {
    FbGraph *g = ti_graph (14);
    FbNode *n = ti_node (g, FB_OP_RANGE, 3, 1);
    FbTensor *start = ti_i64 (0, NULL, (const int64_t[]) { 2 });
    FbTensor *limit = ti_i64 (0, NULL, (const int64_t[]) { 11 });
    FbTensor *delta = ti_i64 (0, NULL, (const int64_t[]) { 3 });
    g_autoptr(GPtrArray) in = NULL, out = NULL;

    tc_finish (g, n, TI_IN (start, limit, delta), 0);
    g_assert_false (fb_shape_is_static (&n->outputs[0]->shape));
    in = tc_inputs (g, n, TI_IN (start, limit, delta), 0);
    out = cpu_run (g, in);
    ti_assert (out->pdata[0], FB_DTYPE_INT64, 1, D (3), V (2, 5, 8), 0);
  }
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/conform/one-input-variadic", test_one_input_variadic);
  g_test_add_func ("/conform/conv-transpose-output-shape", test_conv_transpose_output_shape);
  g_test_add_func ("/conform/if-one-by-one-condition", test_if_one_by_one_condition);
  g_test_add_func ("/conform/dropout-mask", test_dropout_mask);
  g_test_add_func ("/conform/run-time-operands", test_run_time_operands);
  return g_test_run ();
}
