/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Lowering: what kernels a graph becomes, what their IR says, and where they came from. */
#include "fb-test-cpu.h"
#include "fb-test-passes.h"
#include "fb-codegen.h"
#include "fb-lower.h"
#include "fb-onnx-import.h"
#include "fb-pipeline.h"

static FbPlan *
lower_sample (FbPipeline **pipeline, FbLayout layout)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "..", "data", "models",
                                             "sample-cnn", "model.onnx", NULL);
  FbGraph *graph = fb_onnx_import_file (model, NULL, &error);
  g_assert_no_error (error);
  *pipeline = fb_pipeline_new (graph);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = layout;
  g_assert_true (fb_pipeline_run (*pipeline, options, NULL, NULL, NULL, &error));
  FbPlan *plan = fb_lower_graph (fb_pipeline_final (*pipeline), fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  return plan;
}

static const FbKernel *
find_kernel (const FbPlan *plan, const char *label_prefix)
{
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      if (g_str_has_prefix (k->label, label_prefix))
        return k;
    }
  g_error ("no kernel labelled %s", label_prefix);
  return NULL;
}

static void
test_fused_conv (void)
{
  g_autoptr(FbPipeline) p = NULL;
  g_autoptr(FbPlan) plan = lower_sample (&p, FB_LAYOUT_NCHW);
  /* One kernel per node of the final stage. */
  g_assert_cmpuint (plan->kernels->len, <=, fb_pipeline_final (p)->nodes->len);
  const FbKernel *k = find_kernel (plan, "Conv + Relu");
  g_assert_cmpint (k->kind, ==, FB_KERNEL_LIBRARY);
  /* Provenance: the original Conv and Relu (BatchNormalization folded into the Conv). */
  gboolean saw_conv = FALSE, saw_relu = FALSE;
  for (guint i = 0; i < k->prov_names->len; i++)
    {
      const char *name = g_array_index (k->prov_names, char *, i);
      saw_conv |= g_str_has_suffix (name, "/Conv");
      saw_relu |= g_str_has_suffix (name, "/Relu");
    }
  g_assert_true (saw_conv && saw_relu);
  g_autofree char *text = fb_kernel_to_string (k, plan);
  g_assert_nonnull (strstr (text, "call dnnl_sgemm("));
  g_assert_nonnull (strstr (text, "parallel"));
  /* The activation is applied to the GEMM's tile, not by a kernel of its own. */
  g_assert_nonnull (strstr (text, "max("));
  g_assert_true (g_str_has_prefix (k->name, "n"));
}

static void
test_layouts_and_views (void)
{
  g_autoptr(FbPipeline) p = NULL;
  g_autoptr(FbPlan) plan = lower_sample (&p, FB_LAYOUT_NHWC);
  guint loops = 0;
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      g_assert_nonnull (k->label);
      g_assert_cmpuint (k->prov_names->len, >, 0);
      if (k->kind == FB_KERNEL_LOOPS)
        loops++;
      for (guint j = 0; j < k->phases->len; j++)
        g_assert_true (g_str_has_prefix (((FbKPhase *) g_ptr_array_index (k->phases, j))->fn, "fbk_"));
    }
  g_assert_cmpuint (loops, >, 0);
  g_autofree char *text = fb_plan_to_string (plan);
  g_assert_nonnull (strstr (text, "buffer 0 input float32 [1x3x32x32] image"));
}

static void
test_elementwise_chain (void)
{
  /* Relu of a Mul: plain nodes are one kernel each, with a coalesced loop. */
  FbGraph *g = ti_graph (17);
  FbNode *n = ti_node (g, FB_OP_MUL, 2, 1);
  tc_finish (g, n, TI_IN (ti_random (4, D (1, 8, 6, 6), 1), ti_random (3, D (8, 1, 1), 2)), 2);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (g, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->kernels->len, ==, 1);
  const FbKernel *k = g_ptr_array_index (plan->kernels, 0);
  g_autofree char *text = fb_kernel_to_string (k, plan);
  /* [1,8,6,6] * [8,1,1] is a loop over channels and one over the 36 pixels. */
  g_assert_nonnull (strstr (text, "in 0..8 parallel"));
  g_assert_nonnull (strstr (text, "in 0..36:"));
  ti_done ();
}

/* A Transpose that moves only dimensions of extent 1 keeps every element in place: a view of
 * its input, no kernel; one that reorders two longer dimensions is a loop nest. Both compute
 * what the interpreter does. */
static void
test_unit_transposes_are_views (void)
{
  struct { int64_t dims[4], perm[4]; gboolean view; } cases[] = {
    { { 1, 5, 1, 1 }, { 0, 2, 3, 1 }, TRUE },     /* a pooled 1 x 1 map to channels-last */
    { { 1, 12, 10, 1 }, { 0, 3, 1, 2 }, TRUE },   /* a one-channel image to channels-first */
    { { 1, 3, 4, 1 }, { 0, 2, 1, 3 }, FALSE },    /* 3 and 4 change places */
    { { 2, 1, 3, 1 }, { 3, 1, 0, 2 }, TRUE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      FbGraph *g = ti_graph (17);
      FbNode *n = ti_node (g, FB_OP_TRANSPOSE, 1, 1);
      ti_attr_ints (g, n, "perm", 4, cases[i].perm);
      FbTensor *x = ti_random (4, cases[i].dims, 7 + i);
      tc_finish (g, n, TI_IN (x), 0);
      g_autoptr(GError) error = NULL;
      g_autoptr(FbPlan) plan = fb_lower_graph (g, fb_cpu_target_desc (), &error);
      g_assert_no_error (error);
      g_assert_cmpuint (plan->kernels->len, ==, 1);
      const FbKernel *k = g_ptr_array_index (plan->kernels, 0);
      g_assert_cmpint (k->kind, ==, cases[i].view ? FB_KERNEL_VIEW : FB_KERNEL_LOOPS);
      g_assert_cmpint (fb_node_is_view (n), ==, cases[i].view);
      g_autoptr(GPtrArray) in = tc_inputs (g, n, TI_IN (x), 0);
      tc_check (g, in);
    }
  ti_done ();
}

/* Whether the product phase of the one MatMul kernel of x[rows, k] w[k, n] is serial, and its
 * parallel iterations. */
static gboolean
product_is_serial (int64_t rows, int64_t k, int64_t n, int64_t *extent)
{
  g_autoptr(GError) error = NULL;
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (rows, k));
  tp_output (g, tp_op (g, FB_OP_MATMUL, "mm", x, tp_const (g, "w", 2, TP_DIMS (k, n), NULL), NULL));
  g_autoptr(FbPipeline) p = fb_pipeline_new (g);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  g_assert_true (fb_pipeline_run (p, options, NULL, NULL, NULL, &error));
  g_autoptr(FbPlan) plan = fb_lower_graph (fb_pipeline_final (p), fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  const FbKernel *kernel = find_kernel (plan, "MatMul");
  g_assert_cmpuint (kernel->phases->len, ==, 1);
  const FbKPhase *phase = g_ptr_array_index (kernel->phases, 0);
  if (extent)
    *extent = phase->extent;
  return phase->serial;
}

/* Products of under about 20 us on one core run on the calling thread, by their FLOPs or by
 * the bytes they stream; larger ones split. */
static void
test_serial_products (void)
{
  /* GPT-2's 64-row products: 2.1 MFLOP. */
  g_assert_true (product_is_serial (64, 64, 256, NULL));
  /* 8.4 MFLOP (under the 16 at which a product becomes a 1x1 convolution), in tiles. */
  int64_t tiles = 0;
  g_assert_false (product_is_serial (512, 64, 128, &tiles));
  g_assert_cmpint (tiles, >, 1);
  /* One row by 4 MB of weights: 2 MFLOP, but streamed; by 256 KB, serial. */
  g_assert_false (product_is_serial (1, 1024, 1024, NULL));
  g_assert_true (product_is_serial (1, 256, 256, NULL));
}

static void
test_hash (void)
{
  g_autoptr(FbPipeline) p = NULL;
  g_autoptr(FbPlan) a = lower_sample (&p, FB_LAYOUT_NCHW);
  g_autoptr(FbPipeline) q = NULL;
  g_autoptr(FbPlan) b = lower_sample (&q, FB_LAYOUT_NCHW);
  for (guint i = 0; i < a->kernels->len; i++)
    {
      g_autofree char *ha = fb_kernel_hash (g_ptr_array_index (a->kernels, i), "t");
      g_autofree char *hb = fb_kernel_hash (g_ptr_array_index (b->kernels, i), "t");
      g_autofree char *hc = fb_kernel_hash (g_ptr_array_index (b->kernels, i), "other");
      g_assert_cmpstr (ha, ==, hb);
      g_assert_cmpstr (ha, !=, hc);
    }
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/lower/fused-conv", test_fused_conv);
  g_test_add_func ("/lower/layouts-and-views", test_layouts_and_views);
  g_test_add_func ("/lower/elementwise-chain", test_elementwise_chain);
  g_test_add_func ("/lower/unit-transposes", test_unit_transposes_are_views);
  g_test_add_func ("/lower/serial-products", test_serial_products);
  g_test_add_func ("/lower/hash", test_hash);
  return g_test_run ();
}
