/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Convolutions as cuBLASLt products on the cuda target (compiler/lower/fb-lower-conv-product-gpu.c):
 * which convolutions become one product (patchify ones after a copy of their patches, pointwise
 * ones reading their input as it is, or after a pass scaling each image's weights), with what
 * bias, residual and pass after it, and that the plan still computes the model: it runs through
 * the emulated PTX kernels, the products on the host by their descriptions, against the
 * interpreter, and on the cpu target. FUSEBENCH_GPU_PATCHIFY=0 and FUSEBENCH_GPU_POINTWISE=0
 * keep cuDNN. Models: tests/patchify/make-patchify-models.py. */
#include "fb-test-ptx.h"

static FbGraph *
load (const char *name)
{
  return tc_load ("patchify", name);
}

typedef struct {
  guint products;      /* convolutions run as a product */
  guint after_pass;    /* of them, after a generated pass of their own (patches, weights) */
  guint batched;       /* of them, one product per image */
  guint with_bias, with_residual, with_pass_after;
  guint cudnn;         /* convolutions left to cuDNN */
  guint loops;         /* generated phases in all */
} Counts;

static Counts
count (const FbGraph *graph)
{
  g_autoptr(FbPipeline) pipeline = NULL;
  g_autoptr(FbPlan) plan = tp_lower_for_cuda (graph, FB_LAYOUT_NHWC, &pipeline);
  Counts n = { 0 };
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          const FbKConv *cv = ((const FbKPhase *) g_ptr_array_index (kernel->phases, p))->conv;
          n.loops += cv == NULL;
          if (cv == NULL)
            continue;
          if (cv->lib == FB_KLIB_CONV)
            {
              n.cudnn++;
              continue;
            }
          /* At most one generated pass first; the product may run on TF32 as cuDNN would. */
          g_assert_cmpuint (p, <=, 1);
          g_assert_cmpint (cv->gemm.tf32, ==, 1);
          g_assert_cmpint (cv->gemm.tb, ==, 1);
          n.products++;
          n.after_pass += p == 1;
          n.batched += cv->gemm.batch > 1;
          n.with_bias += cv->bias != FB_KCONV_NO_ARG;
          n.with_residual += cv->add != FB_KCONV_NO_ARG;
          n.with_pass_after += kernel->phases->len == p + 2;
        }
    }
  return n;
}

/* Asserts every count of n but the generated phases'. */
static void
assert_counts (const Counts *n, guint products, guint after_pass, guint batched, guint with_bias,
               guint with_residual, guint with_pass_after, guint cudnn)
{
  g_assert_cmpuint (n->products, ==, products);
  g_assert_cmpuint (n->after_pass, ==, after_pass);
  g_assert_cmpuint (n->batched, ==, batched);
  g_assert_cmpuint (n->with_bias, ==, with_bias);
  g_assert_cmpuint (n->with_residual, ==, with_residual);
  g_assert_cmpuint (n->with_pass_after, ==, with_pass_after);
  g_assert_cmpuint (n->cudnn, ==, cudnn);
}

/* The patch embedding (with its bias in the product), the residual (the product's C operand)
 * and the one with a Relu after it (a pass after the product) are products, and every output
 * matches the interpreter. */
static void
test_products (void)
{
  FbGraph *graph = load ("patchify");
  Counts n = count (graph);
  assert_counts (&n, 3, 3, 0, 2, 1, 1, 0);
  g_autoptr(GPtrArray) inputs = tc_seeded_inputs (graph, 1205);
  tp_check_emulated_pipeline (graph, FB_LAYOUT_NHWC, (FbTensor **) inputs->pdata, inputs->len,
                              FALSE);
}

/* Overlapping windows read an input element more than once: cuDNN's. */
static void
test_overlap (void)
{
  g_autoptr(FbGraph) graph = load ("overlap");
  Counts n = count (graph);
  g_assert_cmpuint (n.products, ==, 0);
  g_assert_cmpuint (n.cudnn, ==, 1);
}

static void
test_switched_off (void)
{
  g_autoptr(FbGraph) graph = load ("patchify");
  g_setenv ("FUSEBENCH_GPU_PATCHIFY", "0", TRUE);
  Counts n = count (graph);
  g_unsetenv ("FUSEBENCH_GPU_PATCHIFY");
  g_assert_cmpuint (n.products, ==, 0);
  g_assert_cmpuint (n.cudnn, ==, 3);
}

/* The plain 1x1 convolution reads x as it is, the squeeze-excitation's projection scales each
 * image's weights and runs batched with the residual as C (its Mul has no pass of its own);
 * every output matches the interpreter, emulated and on the cpu target (which runs the
 * per-image scale as a loop). One with a Relu stays cuDNN's. */
static void
test_pointwise (void)
{
  FbGraph *graph = load ("pointwise");
  Counts n = count (graph);
  assert_counts (&n, 2, 1, 1, 2, 1, 0, 0);
  g_autoptr(FbGraph) relu = load ("pointwise-relu");
  Counts r = count (relu);
  g_assert_cmpuint (r.products, ==, 0);
  g_assert_cmpuint (r.cudnn, ==, 1);
  g_autoptr(GPtrArray) inputs = tc_seeded_inputs (graph, 1206);
  tc_check (graph, inputs);
  /* (The global pool is a cooperative launch.) */
  tp_check_emulated_pipeline (graph, FB_LAYOUT_NHWC, (FbTensor **) inputs->pdata, inputs->len,
                              TRUE);
}

/* Switched off, the pointwise convolutions are cuDNN's and the scale a pass before it. */
static void
test_pointwise_switched_off (void)
{
  g_autoptr(FbGraph) graph = load ("pointwise");
  Counts on = count (graph);
  g_setenv ("FUSEBENCH_GPU_POINTWISE", "0", TRUE);
  Counts off = count (graph);
  g_unsetenv ("FUSEBENCH_GPU_POINTWISE");
  g_assert_cmpuint (off.products, ==, 0);
  g_assert_cmpuint (off.cudnn, ==, 2);
  /* Without the product the Mul and the bias of the plain one are passes of their own; the
   * weights' pass goes. */
  g_assert_cmpuint (off.loops, >, on.loops);
}

/* A Concat of a pointwise product's output and a generated kernel's, channels-last, is one
 * buffer of rows of 32 channels: the product writes a's rows through its row stride, one 1x1
 * convolution reads the whole concatenation packed and one reads a's rows through its row
 * stride; the outputs match the interpreter, emulated. */
static void
test_pointwise_concat (void)
{
  FbGraph *graph = load ("pointwise-concat");
  g_autoptr(FbPipeline) pipeline = NULL;
  g_autoptr(FbPlan) plan = tp_lower_for_cuda (graph, FB_LAYOUT_NHWC, &pipeline);
  guint in_place = 0, writes_rows = 0, reads_rows = 0, packed = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    in_place += g_str_has_prefix (((const FbKernel *) g_ptr_array_index (plan->kernels, k))->label,
                                  "Concat in place");
  g_autoptr(GPtrArray) products = tp_products (plan);
  for (guint i = 0; i < products->len; i++)
    {
      const FbKGemm *g = &((const FbKConv *) g_ptr_array_index (products, i))->gemm;
      writes_rows += g->ldc == 32 && g->n == 16;
      reads_rows += g->lda == 32 && g->k == 16;
      packed += g->lda == 32 && g->k == 32;
    }
  g_assert_cmpuint (in_place, ==, 1);
  g_assert_cmpuint (writes_rows, ==, 1);
  g_assert_cmpuint (reads_rows, ==, 1);
  g_assert_cmpuint (packed, ==, 1);
  /* A bundle keeps the row strides, and its reader takes a product reaching along a piece's
   * rows past the piece's packed size. */
  g_autoptr(FbPlan) loaded = tp_cuda_bundle_round_trip (pipeline);
  tp_assert_same_products (plan, loaded);
  g_autoptr(GPtrArray) inputs = tc_seeded_inputs (graph, 1207);
  tp_check_emulated_pipeline (graph, FB_LAYOUT_NHWC, (FbTensor **) inputs->pdata, inputs->len,
                              FALSE);
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/patchify/products", test_products);
  g_test_add_func ("/patchify/overlap", test_overlap);
  g_test_add_func ("/patchify/switched-off", test_switched_off);
  g_test_add_func ("/patchify/pointwise", test_pointwise);
  g_test_add_func ("/patchify/pointwise-switched-off", test_pointwise_switched_off);
  g_test_add_func ("/patchify/pointwise-concat", test_pointwise_concat);
  return g_test_run ();
}
