/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fold-batchnorm: BatchNormalization folded into the weights of the node that feeds it. */
#include "fb-test-passes.h"

static FbValue *
batch_norm (FbGraph *g, FbValue *x, int64_t channels)
{
  double *scale = g_newa (double, channels), *var = g_newa (double, channels);
  FbValue *y;

  for (int64_t c = 0; c < channels; c++)
    {
      scale[c] = 0.5 + 0.25 * c;
      var[c] = 0.3 + 0.1 * c;
    }
  y = tp_op (g, FB_OP_BATCH_NORMALIZATION, "bn", x,
             tp_const (g, "bn.scale", 1, &channels, scale),
             tp_const (g, "bn.bias", 1, &channels, NULL),
             tp_const (g, "bn.mean", 1, &channels, NULL),
             tp_const (g, "bn.var", 1, &channels, var), NULL);
  tp_attr_float (g, y, "epsilon", 1e-3f);
  return y;
}

static FbPipeline *
fold (FbGraph *g)
{
  g_autoptr(FbPipelineOptions) o = tp_only ("fold-batchnorm", NULL);
  FbPipeline *p = tp_run (g, o);
  tp_assert_stages_agree (p, 17);
  return p;
}

static void
check_folded (FbPipeline *p, FbOpKind producer, guint expect_nodes)
{
  FbGraph *out = tp_stage_graph (p, "fold-batchnorm");
  FbStage *s = fb_pipeline_stage_by_name (p, "fold-batchnorm");
  FbNode *prod = tp_find (out, producer);
  FbNode *bn = tp_find (tp_stage_graph (p, "import"), FB_OP_BATCH_NORMALIZATION);
  const FbChange *c = tp_change (s, bn->id);

  g_assert_cmpuint (tp_count (out, FB_OP_BATCH_NORMALIZATION, FALSE), ==, 0);
  g_assert_cmpuint (out->nodes->len, ==, expect_nodes);
  g_assert_nonnull (prod);
  g_assert_nonnull (c);
  g_assert_cmpint (c->kind, ==, FB_CHANGE_FUSED);
  g_assert_cmpuint (c->fused_into, ==, prod->id);
  g_assert_cmpuint (prod->n_prov, ==, 2);
}

static void
test_conv (void)
{
  for (int with_bias = 0; with_bias < 2; with_bias++)
    {
      FbGraph *g = tp_graph (17);
      FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 3, 5, 5));
      FbValue *w = tp_const (g, "w", 4, TP_DIMS (4, 3, 3, 3), NULL);
      FbValue *v = with_bias
        ? tp_op (g, FB_OP_CONV, "conv", x, w, tp_const (g, "b", 1, TP_DIMS (4), NULL), NULL)
        : tp_op (g, FB_OP_CONV, "conv", x, w, NULL);
      double w0 = fb_tensor_get_f64 (w->constant, 0);
      FbTensor *shared = w->constant;
      tp_output (g, tp_op (g, FB_OP_RELU, "relu", batch_norm (g, v, 4), NULL));
      g_autoptr(FbPipeline) p = fold (g);
      FbNode *conv = tp_find (tp_stage_graph (p, "fold-batchnorm"), FB_OP_CONV);

      check_folded (p, FB_OP_CONV, 2);
      g_assert_cmpuint (conv->n_inputs, ==, 3);
      /* New weights are new constants: the imported tensor is untouched. */
      g_assert_false (conv->inputs[1]->constant == shared);
      g_assert_cmpfloat (fb_tensor_get_f64 (shared, 0), ==, w0);
    }
}

static void
test_grouped_conv_transpose (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 4, 3, 3));
  FbValue *v = tp_op (g, FB_OP_CONV_TRANSPOSE, "deconv", x,
                      tp_const (g, "w", 4, TP_DIMS (4, 3, 2, 2), NULL), NULL);
  tp_attr_int (g, v, "group", 2);
  tp_output (g, batch_norm (g, v, 6));
  g_autoptr(FbPipeline) p = fold (g);

  check_folded (p, FB_OP_CONV_TRANSPOSE, 1);
}

static void
test_gemm_and_matmul (void)
{
  for (int kind = 0; kind < 2; kind++)
    {
      FbGraph *g = tp_graph (17);
      FbValue *x = tp_input (g, "x", 2, TP_DIMS (3, 4));
      FbValue *v;
      if (kind == 0)
        {
          v = tp_op (g, FB_OP_GEMM, "gemm", x, tp_const (g, "w", 2, TP_DIMS (5, 4), NULL),
                     tp_const (g, "c", 1, TP_DIMS (5), NULL), NULL);
          tp_attr_int (g, v, "transB", 1);
          tp_attr_float (g, v, "beta", 0.5f);
        }
      else
        v = tp_op (g, FB_OP_MATMUL, "matmul", x, tp_const (g, "w", 2, TP_DIMS (4, 5), NULL), NULL);
      tp_output (g, batch_norm (g, v, 5));
      g_autoptr(FbPipeline) p = fold (g);

      /* MatMul has no bias input: the shift becomes an Add. */
      check_folded (p, kind == 0 ? FB_OP_GEMM : FB_OP_MATMUL, kind == 0 ? 1 : 2);
    }
}

/* A producer whose result is also read elsewhere keeps it (and its weights), and the
 * BatchNormalization, with nothing to fold into, becomes a per-channel Mul and Add. */
static void
test_shared_producer_stays (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 3, 5, 5));
  FbValue *v = tp_op (g, FB_OP_CONV, "conv", x, tp_const (g, "w", 4, TP_DIMS (4, 3, 1, 1), NULL), NULL);
  tp_output (g, batch_norm (g, v, 4));
  tp_output (g, tp_op (g, FB_OP_RELU, "relu", v, NULL));
  g_autoptr(FbPipeline) p = fold (g);

  FbGraph *out = tp_stage_graph (p, "fold-batchnorm");
  g_assert_cmpuint (tp_count (out, FB_OP_BATCH_NORMALIZATION, FALSE), ==, 0);
  g_assert_cmpstr (tp_find (out, FB_OP_CONV)->inputs[1]->name, ==, "w");
  FbNode *mul = tp_find (out, FB_OP_MUL), *add = tp_find (out, FB_OP_ADD);
  g_assert_nonnull (mul);
  g_assert_nonnull (add);
  g_assert_true (add->inputs[0] == mul->outputs[0]);
  /* [C, 1, 1]: along the channels of the NCHW value. */
  g_assert_cmpint (mul->inputs[1]->constant->rank, ==, 3);
  g_assert_cmpint (mul->inputs[1]->constant->dims[0], ==, 4);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pass/fold-batchnorm/conv", test_conv);
  g_test_add_func ("/pass/fold-batchnorm/conv-transpose", test_grouped_conv_transpose);
  g_test_add_func ("/pass/fold-batchnorm/gemm-matmul", test_gemm_and_matmul);
  g_test_add_func ("/pass/fold-batchnorm/shared-producer", test_shared_producer_stays);
  return g_test_run ();
}
