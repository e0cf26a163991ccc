/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Transposes around matrix products as the products' strides, scalings of their operands as
 * their alpha (compiler/lower/fb-lower-product-strides.c), on the cuda target's plans: which
 * Transposes and Muls become views, and
 * that the products' descriptions then still compute the model. Every plan runs through the
 * emulated PTX kernels, its cuBLASLt products on the host by their descriptions (strides,
 * offsets, transposed operands), against the interpreter. FUSEBENCH_PRODUCT_STRIDES=0 keeps
 * the copies. Models: tests/strides/make-stride-models.py. */
#include "fb-lower.h"
#include "fb-memory-plan.h"
#include "fb-test-ptx.h"

#include <string.h>

static FbGraph *
load (const char *name)
{
  return tc_load ("strides", name);
}

/* A copy of graph through the pipeline (in *pipeline, which the plan borrows from), lowered
 * for the cuda target. */
static FbPlan *
lower_for_cuda (const FbGraph *graph, FbPipeline **pipeline)
{
  return tp_lower_for_cuda (graph, FB_LAYOUT_NCHW, pipeline);
}

/* Lowers the model for the cuda target, counts the Transposes its products took over, and
 * runs it emulated against the interpreter. */
static guint
check (const char *name)
{
  FbGraph *graph = load (name);
  g_autoptr(GPtrArray) inputs = tc_seeded_inputs (graph, 1203);
  g_autoptr(FbPipeline) p = NULL;
  g_autoptr(FbPlan) plan = lower_for_cuda (graph, &p);
  fb_plan_layout_memory (plan);
  tc_check_arena (plan);
  guint n = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (kernel->label && (g_str_has_prefix (kernel->label, "Transpose read or written by a product") ||
                            strstr (kernel->label, "taken into a product (its alpha)")))
        {
          g_assert_cmpint (kernel->kind, ==, FB_KERNEL_VIEW);
          n++;
        }
    }
  tp_check_emulated_pipeline (graph, FB_LAYOUT_NCHW, (FbTensor **) inputs->pdata, inputs->len,
                              FALSE);
  return n;
}

/* q and v read with a row stride of all heads, k read transposed, both scalings in the
 * scores' alpha, the context written back into [token, head, d]; the Transpose that is also a
 * graph output stays. */
static void
test_heads (void)
{
  g_assert_cmpuint (check ("heads"), ==, 6);
}

/* Window and head are no single batch stride: every copy stays, and the model still runs. */
static void
test_windows (void)
{
  g_assert_cmpuint (check ("windows"), ==, 0);
}

/* A constant position bias over every window is made whole and read as the scores' C
 * operand: the scores are one phase, their addend a constant of the scores' own shape, and
 * the model (emulated, the bias added by the host's product) still computes. */
static void
test_position_bias (void)
{
  g_assert_cmpuint (check ("position"), ==, 0);
  g_autoptr(FbPipeline) p = NULL;
  g_autoptr(FbPlan) plan = lower_for_cuda (load ("position"), &p);
  guint whole = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint i = 0; i < kernel->phases->len; i++)
        {
          const FbKConv *cv = ((const FbKPhase *) g_ptr_array_index (kernel->phases, i))->conv;
          if (cv == NULL || cv->add == FB_KCONV_NO_ARG)
            continue;
          const FbBuffer *c = fb_plan_buffer (plan, g_array_index (kernel->args, FbKArg, cv->add).buffer);
          g_assert_nonnull (c->constant);
          g_assert_cmpint (c->constant->numel, ==, 2 * 2 * 4 * 4);
          g_assert_cmpuint (kernel->phases->len, ==, 1);
          whole++;
        }
    }
  g_assert_cmpuint (whole, ==, 1);
  /* Under FUSEBENCH_PRODUCT_RESIDUAL=0 the bias is a pass after the product again. */
  g_setenv ("FUSEBENCH_PRODUCT_RESIDUAL", "0", TRUE);
  g_autoptr(FbPipeline) p0 = NULL;
  g_autoptr(FbPlan) plain = lower_for_cuda (load ("position"), &p0);
  g_unsetenv ("FUSEBENCH_PRODUCT_RESIDUAL");
  g_autoptr(GPtrArray) products = tp_products (plain);
  for (guint i = 0; i < products->len; i++)
    g_assert_cmpuint (((const FbKConv *) g_ptr_array_index (products, i))->add, ==, FB_KCONV_NO_ARG);
}

/* A bias, or a bias then Relu, is cuBLASLt's epilogue: one phase, the bias an argument of the
 * product. A residual Add after the bias (or after the product, or after a Gemm with its bias)
 * is the product's C operand: one phase too, the addend an argument. A Relu between the bias and
 * the residual keeps the product and a generated pass (cuBLASLt adds C before its Relu). */
static void
count_linear_kernels (guint *bias_only, guint *relu, guint *residual, guint *residual_with_bias,
                      guint *two_phases)
{
  FbGraph *graph = load ("linear");
  g_autoptr(GPtrArray) inputs = tc_seeded_inputs (graph, 1204);
  g_autoptr(FbPipeline) p = NULL;
  g_autoptr(FbPlan) plan = lower_for_cuda (graph, &p);
  *bias_only = *relu = *residual = *residual_with_bias = *two_phases = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (kernel->kind != FB_KERNEL_LIBRARY)
        continue;
      const FbKPhase *ph = g_ptr_array_index (kernel->phases, 0);
      g_assert_nonnull (ph->conv);
      if (kernel->phases->len > 1)
        {
          g_assert_cmpuint (ph->conv->add, ==, FB_KCONV_NO_ARG);
          (*two_phases)++;
        }
      else if (ph->conv->add != FB_KCONV_NO_ARG)
        {
          g_assert_cmpuint (ph->conv->gemm.relu, ==, 0);
          g_assert_cmpuint (ph->conv->add, !=, ph->conv->y);
          (*residual)++;
          *residual_with_bias += ph->conv->bias != FB_KCONV_NO_ARG;
        }
      else
        {
          g_assert_cmpuint (ph->conv->bias, !=, FB_KCONV_NO_ARG);
          (*bias_only)++;
          *relu += ph->conv->gemm.relu;
        }
    }
  tp_check_emulated_pipeline (graph, FB_LAYOUT_NCHW, (FbTensor **) inputs->pdata, inputs->len,
                              FALSE);
}

static void
test_bias_epilogue (void)
{
  guint bias_only, relu, residual, residual_with_bias, two_phases;
  count_linear_kernels (&bias_only, &relu, &residual, &residual_with_bias, &two_phases);
  g_assert_cmpuint (bias_only, ==, 2);
  g_assert_cmpuint (relu, ==, 1);
  g_assert_cmpuint (residual, ==, 3);
  g_assert_cmpuint (residual_with_bias, ==, 2);
  g_assert_cmpuint (two_phases, ==, 1);
}

/* FUSEBENCH_PRODUCT_RESIDUAL=0: every residual Add a generated pass after its product. */
static void
test_residual_switched_off (void)
{
  guint bias_only, relu, residual, residual_with_bias, two_phases;
  g_setenv ("FUSEBENCH_PRODUCT_RESIDUAL", "0", TRUE);
  count_linear_kernels (&bias_only, &relu, &residual, &residual_with_bias, &two_phases);
  g_unsetenv ("FUSEBENCH_PRODUCT_RESIDUAL");
  g_assert_cmpuint (bias_only, ==, 2);
  g_assert_cmpuint (residual, ==, 0);
  g_assert_cmpuint (two_phases, ==, 4);
}

/* A shifted window's attention block (tests/strides/partition.onnx): the window partition goes
 * after the qkv layer and the reverse and roll before the output layer (simplify's row moves),
 * each one copy with the heads' Transposes beside it, and the output layer reads the residual
 * as its C operand. Generated passes: those two copies and the Softmax (five before: the
 * partition, the heads, the Softmax, the heads joined, the reverse with the residual). Runs
 * emulated against the interpreter. */
static void
test_window_glue (void)
{
  FbGraph *graph = load ("partition");
  g_autoptr(GPtrArray) inputs = tc_seeded_inputs (graph, 1205);
  g_autoptr(FbPipeline) p = NULL;
  g_autoptr(FbPlan) plan = lower_for_cuda (graph, &p);
  guint residuals = 0, generated = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      generated += kernel->kind == FB_KERNEL_LOOPS;
      for (guint i = 0; i < kernel->phases->len; i++)
        {
          const FbKConv *cv = ((const FbKPhase *) g_ptr_array_index (kernel->phases, i))->conv;
          if (cv != NULL && cv->add != FB_KCONV_NO_ARG)
            residuals += fb_plan_buffer (plan, g_array_index (kernel->args, FbKArg,
                                                              cv->add).buffer)->constant == NULL;
        }
    }
  g_assert_cmpuint (residuals, ==, 1);
  g_assert_cmpuint (generated, ==, 3);
  tp_check_emulated_pipeline (graph, FB_LAYOUT_NCHW, (FbTensor **) inputs->pdata, inputs->len,
                              FALSE);
}

/* The cuda bundle of model name (lowered as lower_for_cuda does: the plan in *plan, borrowing
 * from *p) read back: the plan the bundle holds. */
static FbPlan *
through_bundle (const char *name, FbPipeline **p, FbPlan **plan)
{
  *plan = lower_for_cuda (load (name), p);
  FbPlan *loaded = tp_cuda_bundle_round_trip (*p);
  g_assert_cmpuint (loaded->kernels->len, ==, (*plan)->kernels->len);
  return loaded;
}

/* The residual addend travels through a cuda bundle: the product reads it again after loading. */
static void
test_residual_bundle (void)
{
  g_autoptr(FbPipeline) p = NULL;
  g_autoptr(FbPlan) plan = NULL;
  g_autoptr(FbPlan) loaded = through_bundle ("linear", &p, &plan);
  tp_assert_same_products (plan, loaded);
  g_autoptr(GPtrArray) products = tp_products (plan);
  guint addends = 0;
  for (guint i = 0; i < products->len; i++)
    addends += ((const FbKConv *) g_ptr_array_index (products, i))->add != FB_KCONV_NO_ARG;
  g_assert_cmpuint (addends, ==, 3);
}

/* The strided products and the Transposes and Muls they took over as views go through a cuda
 * bundle and come back as they were: the bundle's checks of each product's extent against its
 * buffers accept strides that walk a buffer in another order. */
static void
test_bundle (void)
{
  g_autoptr(FbPipeline) p = NULL;
  g_autoptr(FbPlan) plan = NULL;
  g_autoptr(FbPlan) loaded = through_bundle ("heads", &p, &plan);
  tp_assert_same_products (plan, loaded);
  g_autoptr(GPtrArray) products = tp_products (plan);
  guint strided = 0;
  for (guint i = 0; i < products->len; i++)
    {
      const FbKGemm *g = &((const FbKConv *) g_ptr_array_index (products, i))->gemm;
      /* Read or written through strides other than a packed matrix's. */
      strided += g->ta || g->tb || g->lda != g->k || g->ldb != g->n || g->ldc != g->n;
    }
  g_assert_cmpuint (strided, ==, 2);   /* the scores, and the context (v read, itself written back) */
}

static void
test_switched_off (void)
{
  g_setenv ("FUSEBENCH_PRODUCT_STRIDES", "0", TRUE);
  g_assert_cmpuint (check ("heads"), ==, 0);
  g_unsetenv ("FUSEBENCH_PRODUCT_STRIDES");
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/product-strides/heads", test_heads);
  g_test_add_func ("/product-strides/windows", test_windows);
  g_test_add_func ("/product-strides/position-bias", test_position_bias);
  g_test_add_func ("/product-strides/switched-off", test_switched_off);
  g_test_add_func ("/product-strides/bias-epilogue", test_bias_epilogue);
  g_test_add_func ("/product-strides/window-glue", test_window_glue);
  g_test_add_func ("/product-strides/bundle", test_bundle);
  g_test_add_func ("/product-strides/residual-bundle", test_residual_bundle);
  g_test_add_func ("/product-strides/residual-switched-off", test_residual_switched_off);
  return g_test_run ();
}
