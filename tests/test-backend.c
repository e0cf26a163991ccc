/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The backend interface: every target of the build is found by name and fills every entry, and
 * the cpu target driven only through it (lower, kernel stages, compile, run, timed runs, a
 * bundle written and loaded) computes the sample model's expected outputs. */
#include "fb-backend.h"
#include "fb-bundle.h"
#include "fb-compare.h"
#include "fb-onnx-import.h"
#include "fb-pipeline.h"
#include "fb-tensor-io.h"

#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

static char *
sample_path (const char *name)
{
  const char *top = g_getenv ("G_TEST_SRCDIR") ? g_getenv ("G_TEST_SRCDIR") : ".";
  return g_build_filename (top, "..", "data", "models", "sample-cnn", name, NULL);
}

static FbPipeline *
load_sample (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = sample_path ("model.onnx");
  FbGraph *graph = fb_onnx_import_file (model, NULL, &error);
  g_assert_no_error (error);
  FbPipeline *p = fb_pipeline_new (graph);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  g_assert_true (fb_pipeline_run (p, options, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  return p;
}

static GPtrArray *
sample_inputs (const FbGraph *graph)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      g_autofree char *name = g_strdup_printf ("test_data_set_0/input_%u.pb", i);
      g_autofree char *path = sample_path (name);
      g_ptr_array_add (inputs, fb_tensor_load_file (path, NULL, &error));
      g_assert_no_error (error);
    }
  return inputs;
}

static void
assert_expected (GPtrArray *outputs)
{
  g_autoptr(GError) error = NULL;
  g_assert_nonnull (outputs);
  for (guint i = 0; i < outputs->len; i++)
    {
      g_autofree char *name = g_strdup_printf ("test_data_set_0/output_%u.pb", i);
      g_autofree char *path = sample_path (name);
      g_autoptr(FbTensor) expected = fb_tensor_load_file (path, NULL, &error);
      g_assert_no_error (error);
      FbCompare cmp;
      fb_tensor_compare (expected, g_ptr_array_index (outputs, i), FB_COMPARE_RTOL,
                         FB_COMPARE_ATOL, &cmp);
      if (!cmp.ok)
        g_error ("output %u: %s", i, cmp.reason);
      fb_compare_clear (&cmp);
    }
}

static void
test_lookup (void)
{
  g_auto(GStrv) names = g_strsplit (fb_backend_names (), ", ", -1);
  g_assert_cmpuint (g_strv_length (names), >=, 1);
  g_assert_true (g_strv_contains ((const char * const *) names, "cpu"));
  for (guint i = 0; names[i]; i++)
    {
      const FbBackend *b = fb_backend_lookup (names[i]);
      g_assert_nonnull (b);
      g_assert_cmpstr (b->name, ==, names[i]);
      g_assert_true (b == fb_backend_nth (i));
      g_assert_true (b->title && b->device_word && b->lane_word);
      g_assert_true (b->supports_op && b->describe_device && b->compile && b->graph && b->run &&
                     b->run_timed && b->free);
      /* A target that lowers has every lowering stage, and a plan, to show. */
      if (b->describe_target != NULL)
        g_assert_true (b->lower && b->kernel_stages && b->plan && b->assembly_suffix &&
                       b->code_title && b->compile_bundle && b->load_bundle);
      else
        g_assert_true (!b->lower && !b->kernel_stages && !b->plan);
    }
  g_assert_null (fb_backend_nth (g_strv_length (names)));
  /* The reference first, the host's compiled target second. */
  g_assert_true (fb_backend_reference () == fb_backend_lookup ("interp"));
  g_assert_null (fb_backend_reference ()->describe_target);
  g_assert_true (fb_backend_host () == fb_backend_lookup ("cpu"));
  g_assert_null (fb_backend_lookup ("tpu"));
}

static void
test_cpu_through_interface (void)
{
  g_autoptr(GError) error = NULL;
  const FbBackend *cpu = fb_backend_lookup ("cpu");
  g_autoptr(FbPipeline) p = load_sample ();
  const FbGraph *graph = fb_pipeline_final (p);
  g_autoptr(GPtrArray) inputs = sample_inputs (graph);

  /* The plan the code view shows, and every kernel's stages. */
  g_autoptr(FbPlan) plan = cpu->lower (cpu, graph, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->kernels->len, >, 0);
  g_assert_cmpint (plan->arena_bytes, >, 0);
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (kernel->kind != FB_KERNEL_LOOPS)
        continue;
      g_autoptr(FbKernelStages) st = cpu->kernel_stages (cpu, kernel, plan, &error);
      g_assert_no_error (error);
      g_assert_nonnull (strstr (st->assembly, "ret"));
      break;
    }

  FbBackendOptions options = { .n_threads = 2 };
  FbCompiled *compiled = cpu->compile (cpu, graph, &options, &error);
  g_assert_no_error (error);
  g_assert_true (cpu->plan (compiled)->graph == graph);
  g_autoptr(GPtrArray) once = cpu->run (compiled, inputs, NULL, &error);
  g_assert_no_error (error);
  assert_expected (once);
  double ms[3] = { -1, -1, -1 };
  g_autoptr(GPtrArray) timed = cpu->run_timed (compiled, inputs, 3, ms, &error);
  g_assert_no_error (error);
  assert_expected (timed);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpfloat (ms[i], >=, 0);
  cpu->free (compiled);

  /* A bundle written and loaded through the interface, its target read back. */
  g_autofree char *dir = g_dir_make_tmp ("fb-test-backend-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *bundle = g_build_filename (dir, "sample.fusebench", NULL);
  FbCompileStats stats = { 0 };
  FbBundleOptions bopts = { .source = "sample" };
  g_assert_true (cpu->compile_bundle (cpu, graph, bundle, &bopts, &options, &stats, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (stats.n_with_code, >, 0);
  g_autofree char *target = fb_backend_bundle_target (bundle, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (target, ==, "cpu");
  FbCompiled *loaded = cpu->load_bundle (cpu, bundle, &options, &error);
  g_assert_no_error (error);
  g_autoptr(GPtrArray) from_bundle = cpu->run (loaded, inputs, NULL, &error);
  g_assert_no_error (error);
  assert_expected (from_bundle);
  cpu->free (loaded);

  /* Not a bundle: the target cannot be read. */
  g_assert_null (fb_backend_bundle_target (dir, &error));
  g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE);
  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_cmpint (system (rm), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/backend/lookup", test_lookup);
  g_test_add_func ("/backend/cpu-through-interface", test_cpu_through_interface);
  return g_test_run ();
}
