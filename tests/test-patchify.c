/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Patchify convolutions on the cuda target (compiler/lower/fb-lower-patchify-gpu.c): which
 * convolutions become a copy of their patches and one cuBLASLt product, with what bias,
 * residual and pass after it, and that the plan still computes the model: it runs through the
 * emulated PTX kernels, the products on the host by their descriptions, against the
 * interpreter. FUSEBENCH_GPU_PATCHIFY=0 keeps cuDNN. Model: tests/patchify/make-patchify-models.py. */
#include "fb-cuda.h"
#include "fb-lower.h"
#include "fb-onnx-import.h"
#include "fb-test-ptx.h"

static FbGraph *
load (const char *name)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *file = g_strconcat (name, ".onnx", NULL);
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "patchify", file, NULL);
  FbGraph *graph = fb_onnx_import_file (path, NULL, &error);
  g_assert_no_error (error);
  return graph;
}

typedef struct {
  guint products;      /* convolutions run as a product: one generated phase, then cuBLASLt */
  guint with_bias, with_residual, with_pass_after;
  guint cudnn;         /* convolutions left to cuDNN */
} Counts;

static Counts
count (const FbGraph *graph)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipeline) pipeline = fb_pipeline_new (fb_graph_copy (graph));
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = FB_LAYOUT_NHWC;
  g_assert_true (fb_pipeline_run (pipeline, options, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_autoptr(FbPlan) plan = fb_lower_graph (fb_pipeline_final (pipeline), fb_cuda_target_desc (),
                                           &error);
  g_assert_no_error (error);
  Counts n = { 0 };
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          const FbKConv *cv = ((const FbKPhase *) g_ptr_array_index (kernel->phases, p))->conv;
          if (cv == NULL)
            continue;
          if (cv->lib == FB_KLIB_CONV)
            {
              n.cudnn++;
              continue;
            }
          /* The patches' copy comes first; the product may run on TF32 as cuDNN would. */
          g_assert_cmpuint (p, ==, 1);
          g_assert_null (((const FbKPhase *) g_ptr_array_index (kernel->phases, 0))->conv);
          g_assert_cmpint (cv->gemm.tf32, ==, 1);
          g_assert_cmpint (cv->gemm.tb, ==, 1);
          n.products++;
          n.with_bias += cv->bias != FB_KCONV_NO_ARG;
          n.with_residual += cv->add != FB_KCONV_NO_ARG;
          n.with_pass_after += kernel->phases->len == 3;
        }
    }
  return n;
}

/* The patch embedding (with its bias in the product), the residual (the product's C operand)
 * and the one with a Relu after it (a pass after the product) are products, and every output
 * matches the interpreter. */
static void
test_products (void)
{
  FbGraph *graph = load ("patchify");
  Counts n = count (graph);
  g_assert_cmpuint (n.products, ==, 3);
  g_assert_cmpuint (n.with_bias, ==, 2);
  g_assert_cmpuint (n.with_residual, ==, 1);
  g_assert_cmpuint (n.with_pass_after, ==, 1);
  g_assert_cmpuint (n.cudnn, ==, 0);
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

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/patchify/products", test_products);
  g_test_add_func ("/patchify/overlap", test_overlap);
  g_test_add_func ("/patchify/switched-off", test_switched_off);
  return g_test_run ();
}
