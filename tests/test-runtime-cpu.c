/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CPU target on whole models through the pass pipeline: the bundled sample model against
 * its expected outputs, the conformance cases it compiles against theirs, NCHW and NHWC
 * layouts, the kernel cache on a rebuild, unsupported nodes named in the error, and one
 * OpenMP runtime in the process. */
#include "fb-case-check.h"
#include "fb-specialize.h"
#include "fb-test-cpu.h"
#include "fb-codegen.h"
#include "fb-compare.h"
#include "fb-lower.h"
#include "fb-onnx-import.h"
#include "fb-pipeline.h"
#include "fb-tensor-io.h"

#include <link.h>

static char *
source_path (const char *first, ...)
{
  va_list ap;
  va_start (ap, first);
  g_autofree char *rel = g_build_filename_valist (first, &ap);
  va_end (ap);
  return g_build_filename (g_getenv ("G_TEST_SRCDIR") ? g_getenv ("G_TEST_SRCDIR") : ".", rel, NULL);
}

/* The model specialized to the shapes of test_data_set_0's inputs (dynamic dimensions). */
static FbPipeline *
load (const char *model, FbLayout layout)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  g_autofree char *dir = g_path_get_dirname (model);
  g_autofree char *set0 = g_build_filename (dir, "test_data_set_0", NULL);
  g_autoptr(FbGraph) generic = fb_onnx_import_file (model, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(GPtrArray) inputs = fb_case_read_inputs (generic, set0, &error);
  g_assert_no_error (error);
  fb_pins_from_inputs (generic, inputs, options->input_shapes);
  FbGraph *graph = fb_onnx_import_file (model, options->input_shapes, &error);
  g_assert_no_error (error);
  FbPipeline *p = fb_pipeline_new (graph);
  options->layout = layout;
  g_assert_true (fb_pipeline_run (p, options, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  return p;
}

/* Runs case_dir/model.onnx on test_data_set_0 and compares with its expected outputs. */
static void
check_case (const char *case_dir, FbLayout layout)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = g_build_filename (case_dir, "model.onnx", NULL);
  g_autoptr(FbPipeline) p = load (model, layout);
  const FbGraph *graph = fb_pipeline_final (p);
  g_autoptr(FbCpuModule) m = fb_cpu_compile (graph, 2, &error);
  g_assert_no_error (error);
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      g_autofree char *name = g_strdup_printf ("input_%u.pb", i);
      g_autofree char *path = g_build_filename (case_dir, "test_data_set_0", name, NULL);
      g_ptr_array_add (inputs, fb_tensor_load_file (path, NULL, &error));
      g_assert_no_error (error);
    }
  g_autoptr(GPtrArray) outputs = fb_cpu_module_run (m, inputs, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < outputs->len; i++)
    {
      g_autofree char *name = g_strdup_printf ("output_%u.pb", i);
      g_autofree char *path = g_build_filename (case_dir, "test_data_set_0", name, NULL);
      g_autoptr(FbTensor) expected = fb_tensor_load_file (path, NULL, &error);
      g_assert_no_error (error);
      FbCompare cmp;
      fb_tensor_compare (expected, g_ptr_array_index (outputs, i), FB_COMPARE_RTOL,
                         FB_COMPARE_ATOL, &cmp);
      if (!cmp.ok)
        g_error ("%s output %u: %s", case_dir, i, cmp.reason);
      fb_compare_clear (&cmp);
    }
  /* And against the oracle on the same inputs. */
  g_autoptr(GPtrArray) reference = fb_interp_run (graph, inputs, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < outputs->len; i++)
    {
      FbCompare cmp;
      fb_tensor_compare (g_ptr_array_index (reference, i), g_ptr_array_index (outputs, i),
                         FB_COMPARE_RTOL, FB_COMPARE_ATOL, &cmp);
      if (!cmp.ok)
        g_error ("%s output %u against the interpreter: %s", case_dir, i, cmp.reason);
      fb_compare_clear (&cmp);
    }
}

static void
test_sample_cnn (void)
{
  g_autofree char *dir = source_path ("..", "data", "models", "sample-cnn", NULL);
  check_case (dir, FB_LAYOUT_NCHW);
  check_case (dir, FB_LAYOUT_NHWC);
}

/* Every conformance case (tests/cases/NAME/), in both layouts: channels-last, convolutions
 * are oneDNN primitives with fused epilogues; channels-first, sgemm and generated loops. */
static void
test_cases (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *root = source_path ("cases", NULL);
  g_autoptr(GDir) dir = g_dir_open (root, 0, &error);
  g_assert_no_error (error);
  guint n = 0;
  const char *name;
  while ((name = g_dir_read_name (dir)))
    {
      g_autofree char *case_dir = g_build_filename (root, name, NULL);
      g_autofree char *model = g_build_filename (case_dir, "model.onnx", NULL);
      if (!g_file_test (model, G_FILE_TEST_IS_REGULAR))
        continue;
      check_case (case_dir, FB_LAYOUT_NCHW);
      check_case (case_dir, FB_LAYOUT_NHWC);
      n++;
    }
  g_assert_cmpuint (n, >=, 16);
}

/* Every linear layer by constant weights of the cases as a oneDNN 1x1 convolution (forced:
 * by default only products from 16 MFLOP are, fb-lower-product-conv.c), its chain as
 * post-ops, against ONNX Runtime's outputs and the interpreter; and that the cases have such
 * products, each made a convolution. */
static void
test_product_conv (void)
{
  g_autoptr(GError) error = NULL;
  g_setenv ("FUSEBENCH_PRODUCT_CONV", "1", TRUE);
  const char *names[] = { "linear-post-ops", "shared-weights", "gpt2_struct", "matmul" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *case_dir = source_path ("cases", names[i], NULL);
      check_case (case_dir, FB_LAYOUT_NHWC);
    }
  g_autofree char *model = source_path ("cases", "linear-post-ops", "model.onnx", NULL);
  g_autoptr(FbPipeline) p = load (model, FB_LAYOUT_NHWC);
  g_autoptr(FbPlan) plan = fb_lower_graph (fb_pipeline_final (p), fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  guint products = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (strstr (kernel->label, "MatMul") == NULL && strstr (kernel->label, "Gemm") == NULL)
        continue;
      g_assert_cmpuint (kernel->phases->len, ==, 1);
      g_assert_nonnull (((FbKPhase *) g_ptr_array_index (kernel->phases, 0))->conv);
      g_assert_nonnull (strstr (kernel->label, "1x1 convolution"));
      products++;
    }
  g_assert_cmpuint (products, ==, 5);
  g_setenv ("FUSEBENCH_PRODUCT_CONV", "", TRUE);
}

static void
test_cache (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = source_path ("..", "data", "models", "sample-cnn", "model.onnx", NULL);
  g_autoptr(FbPipeline) p = load (model, FB_LAYOUT_NCHW);
  g_autoptr(FbPlan) plan = fb_lower_graph (fb_pipeline_final (p), fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  guint with_code = 0, cached = 0;
  for (guint i = 0; i < plan->kernels->len; i++)
    with_code += ((FbKernel *) g_ptr_array_index (plan->kernels, i))->phases->len > 0;
  fb_kernel_cache_clear_memory ();
  g_autoptr(GPtrArray) first = fb_codegen_plan (plan, 2, &cached, &error);
  g_assert_no_error (error);
  g_autoptr(GPtrArray) second = fb_codegen_plan (plan, 2, &cached, &error);
  g_assert_no_error (error);
  /* The second time every kernel is the same content: all from the cache, same bytes. */
  g_assert_cmpuint (cached, ==, with_code);
  for (guint i = 0; i < first->len; i++)
    if (g_ptr_array_index (first, i))
      g_assert_true (g_bytes_equal (g_ptr_array_index (first, i), g_ptr_array_index (second, i)));
}

static void
test_unsupported (void)
{
  g_autoptr(GError) error = NULL;
  FbGraph *g = ti_graph (17);
  /* Every operator this project knows now compiles for the CPU: an operator it does not know
   * (which imports as FB_OP_UNKNOWN, its outputs as the file declared them) stands in. */
  FbNode *n = ti_node (g, FB_OP_UNKNOWN, 1, 1);
  FbTensor *x = ti_random (2, D (4, 3), 1);
  n->op_type = "NoSuchOp";
  n->outputs[0]->dtype = FB_DTYPE_FLOAT32;
  n->outputs[0]->shape = fb_tensor_shape (x);
  tc_finish (g, n, TI_IN (x), 0);
  g_autofree char *reason = NULL;
  g_assert_false (fb_backend_cpu ()->supports_op (fb_backend_cpu (), n, &reason));
  g_assert_nonnull (reason);
  g_autoptr(FbCpuModule) m = fb_cpu_compile (g, 1, &error);
  g_assert_null (m);
  g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, n->name));
  ti_done ();
}

static void
test_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  FbGraph *g = ti_graph (17);
  FbNode *n = ti_node (g, FB_OP_RELU, 1, 1);
  tc_finish (g, n, TI_IN (ti_random (2, D (3, 4), 1)), 0);
  g_autoptr(FbCpuModule) m = fb_cpu_compile (g, 1, &error);
  g_assert_no_error (error);
  g_autoptr(GPtrArray) in = g_ptr_array_new ();
  g_ptr_array_add (in, ti_random (2, D (4, 3), 3));
  g_autoptr(GPtrArray) out = fb_cpu_module_run (m, in, NULL, &error);
  g_assert_null (out);
  g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_INPUT);
  ti_done ();
}

static int
count_openmp (struct dl_phdr_info *info, size_t size, void *data)
{
  const char *slash = strrchr (info->dlpi_name, '/');
  const char *base = slash ? slash + 1 : info->dlpi_name;
  if (g_str_has_prefix (base, "libgomp.") || g_str_has_prefix (base, "libomp.") ||
      g_str_has_prefix (base, "libiomp5."))
    g_ptr_array_add (data, g_strdup (info->dlpi_name));
  return 0;
}

/* The worker pool and oneDNN's primitives must share one team of threads, so one OpenMP
 * runtime: with LLVM's libomp linked beside oneDNN's libgomp (a libgomp.so in LLVM's folder
 * had stood in for GCC's), small models ran up to three times slower. */
static void
test_one_openmp (void)
{
  g_autoptr(GPtrArray) runtimes = g_ptr_array_new_with_free_func (g_free);
  dl_iterate_phdr (count_openmp, runtimes);
  for (guint i = 0; i < runtimes->len; i++)
    g_test_message ("OpenMP runtime: %s", (char *) g_ptr_array_index (runtimes, i));
  g_assert_cmpuint (runtimes->len, ==, 1);
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/runtime-cpu/one-openmp", test_one_openmp);
  g_test_add_func ("/runtime-cpu/sample-cnn", test_sample_cnn);
  g_test_add_func ("/runtime-cpu/cases", test_cases);
  g_test_add_func ("/runtime-cpu/product-conv", test_product_conv);
  g_test_add_func ("/runtime-cpu/cache", test_cache);
  g_test_add_func ("/runtime-cpu/unsupported", test_unsupported);
  g_test_add_func ("/runtime-cpu/bad-input", test_bad_input);
  return g_test_run ();
}
