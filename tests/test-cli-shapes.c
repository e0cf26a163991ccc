/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shapes from the inputs: a model with a dynamic batch (tests/cases/dynamic-batch, batch 2 and 5
 * in its two data sets) runs, compiles, checks and shows its passes without --input-shape, each
 * command specializing to the shapes of the files it is given; specializations are cached by
 * the input shape signature. `profile` does the same, and records the shapes it ran with. */
#include "fb-test-cli.h"
#include "fb-case-check.h"
#include "fb-cpu.h"
#include "fb-specialize.h"
#include "fb-profile.h"

#include <glib/gstdio.h>
#include <string.h>

static char *
case_path (const char *leaf)
{
  return test_source_path ("tests", "cases", "dynamic-batch", leaf, NULL);
}

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) d = g_dir_open (path, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

static void
test_run_cpu (void)
{
  g_autofree char *model = case_path ("model.onnx");
  g_autofree char *set1 = case_path ("test_data_set_1");
  g_autoptr(TestRun) run = test_run_fusebench ("run", model, "--target", "cpu", "--input-dir",
                                               set1, NULL);

  g_assert_cmpint (run->status, ==, 0);
  g_assert_nonnull (strstr (run->out, "5x3"));
}

static void
test_check_no_pinning (void)
{
  g_autofree char *dir = case_path (NULL);
  g_autoptr(TestRun) run = test_run_fusebench ("check", "--target", "cpu", dir, NULL);

  g_assert_cmpint (run->status, ==, 0);
  g_assert_nonnull (strstr (run->out, "1 passed"));
}

static void
test_passes_and_compile (void)
{
  g_autofree char *model = case_path ("model.onnx");
  g_autofree char *set0 = case_path ("test_data_set_0");
  g_autofree char *tmp = g_dir_make_tmp ("fb-shapes-XXXXXX", NULL);
  g_autofree char *bundle = g_build_filename (tmp, "m.fusebench", NULL);
  g_autoptr(TestRun) passes = test_run_fusebench ("passes", model, "--input-dir", set0,
                                                  "--print-after-all", NULL);
  g_autoptr(TestRun) compile = NULL, run = NULL;

  g_assert_cmpint (passes->status, ==, 0);
  g_assert_nonnull (strstr (passes->out, "f32[2x4]"));
  compile = test_run_fusebench ("compile", model, "--target", "cpu", "-o", bundle,
                                "--input-dir", set0, NULL);
  g_assert_cmpint (compile->status, ==, 0);
  run = test_run_fusebench ("run", bundle, "--input-dir", set0, NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_nonnull (strstr (run->out, "2x3"));
  /* Without inputs the batch is unknown, and the cpu target says so. */
  g_clear_pointer (&compile, test_run_free);
  compile = test_run_fusebench ("compile", model, "--target", "cpu", "-o", bundle, NULL);
  g_assert_cmpint (compile->status, !=, 0);
  remove_tree (tmp);
}

/* The pinned shape of input x a profile file records, as text ("5x4"), or NULL. */
static char *
profile_pin (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbProfile) profile = fb_profile_load (path, &error);
  const FbShape *shape;

  g_assert_no_error (error);
  shape = g_hash_table_lookup (profile->pipeline->input_shapes, "x");
  return shape != NULL ? fb_shape_to_string (shape) : NULL;
}

/* `profile` takes the shapes of its inputs as `run` does, from --input-dir or --input, and the
 * profile records them as the pins it ran with; an explicit --input-shape still wins. */
static void
test_profile_from_inputs (void)
{
  g_autofree char *model = case_path ("model.onnx");
  g_autofree char *set1 = case_path ("test_data_set_1");
  g_autofree char *input0 = test_source_path ("tests", "cases", "dynamic-batch", "test_data_set_0",
                                              "input_0.pb", NULL);
  g_autofree char *spec = g_strdup_printf ("x=%s", input0);
  g_autofree char *tmp = g_dir_make_tmp ("fb-shapes-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (tmp, "p.json", NULL);
  g_autofree char *pin = NULL;
  g_autoptr(TestRun) run = NULL;

  run = test_run_fusebench ("profile", model, "--input-dir", set1, "--iterations", "2",
                            "--warmup", "1", "-o", out, NULL);
  if (run->status != 0)
    g_error ("profile --input-dir: %s", run->err);
  pin = profile_pin (out);
  g_assert_cmpstr (pin, ==, "5x4");
  g_clear_pointer (&run, test_run_free);
  g_clear_pointer (&pin, g_free);

  run = test_run_fusebench ("profile", model, "--input", spec, "--iterations", "2", "--warmup",
                            "1", "-o", out, NULL);
  if (run->status != 0)
    g_error ("profile --input: %s", run->err);
  pin = profile_pin (out);
  g_assert_cmpstr (pin, ==, "2x4");
  g_clear_pointer (&run, test_run_free);
  g_clear_pointer (&pin, g_free);

  /* Random inputs of a pinned shape, as before. */
  run = test_run_fusebench ("profile", model, "--input-shape", "x=3x4", "--iterations", "2",
                            "--warmup", "1", "-o", out, NULL);
  g_assert_cmpint (run->status, ==, 0);
  pin = profile_pin (out);
  g_assert_cmpstr (pin, ==, "3x4");
  g_clear_pointer (&run, test_run_free);
  g_unlink (out);

  /* Neither inputs nor a pin: the batch is unknown, and the message says how to give it. */
  run = test_run_fusebench ("profile", model, "--iterations", "2", "-o", out, NULL);
  g_assert_cmpint (run->status, !=, 0);
  g_assert_nonnull (strstr (run->err, "--input-shape"));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  remove_tree (tmp);
}

/* One compile per input shape signature; the same shape again hits the cache. */
static void
test_cache_by_signature (void)
{
  g_autofree char *model = case_path ("model.onnx");
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(FbSpecializer) spec = fb_specializer_new (model, options, fb_backend_cpu (), NULL, &error);
  const char *sets[] = { "test_data_set_0", "test_data_set_1", "test_data_set_0" };
  const guint compiled[] = { 1, 2, 2 };
  FbCaseVerdict v;

  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (sets); i++)
    {
      g_autofree char *dir = case_path (sets[i]);
      g_autoptr(GPtrArray) inputs = fb_case_read_inputs (fb_specializer_graph (spec), dir,
                                                         &error);
      g_autofree char *sig = NULL;
      FbPipeline *pipeline = NULL;
      FbCompiled *module = NULL;

      g_assert_no_error (error);
      sig = fb_input_signature (fb_specializer_graph (spec), inputs);
      g_assert_cmpstr (sig, ==, i == 1 ? "x=5x4" : "x=2x4");
      g_assert_true (fb_specializer_prepare (spec, inputs, &pipeline, &module, &error));
      g_assert_no_error (error);
      g_assert_nonnull (module);
      g_assert_cmpuint (fb_specializer_n_compiled (spec), ==, compiled[i]);
    }
  {
    g_autofree char *dir = case_path (NULL);
    fb_case_check (dir, options, NULL, NULL, &v);
    g_assert_true (v.ok);
    g_assert_cmpuint (v.n_compiled, ==, 2);
    fb_case_verdict_clear (&v);
  }
}

/* A model of static shapes is read once: the graph the specializer imported to learn the
 * inputs is the one its pipeline runs, and stays readable for the next inputs. */
static void
test_static_read_once (void)
{
  g_autofree char *model = test_source_path ("tests", "cases", "conv", "model.onnx", NULL);
  g_autofree char *dir = test_source_path ("tests", "cases", "conv", "test_data_set_0", NULL);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(FbSpecializer) spec = fb_specializer_new (model, options, fb_backend_reference (),
                                                      NULL, &error);
  g_assert_no_error (error);
  const FbGraph *imported = fb_specializer_graph (spec);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(GPtrArray) inputs = fb_case_read_inputs (fb_specializer_graph (spec), dir, &error);
      FbPipeline *pipeline = NULL;
      g_assert_no_error (error);
      g_assert_true (fb_specializer_prepare (spec, inputs, &pipeline, NULL, &error));
      g_assert_true (fb_pipeline_stage (pipeline, 0)->graph == imported);
      g_assert_true (fb_specializer_graph (spec) == imported);
    }
  g_assert_cmpuint (fb_specializer_n_compiled (spec), ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli-shapes/run-cpu", test_run_cpu);
  g_test_add_func ("/cli-shapes/check-no-pinning", test_check_no_pinning);
  g_test_add_func ("/cli-shapes/passes-and-compile", test_passes_and_compile);
  g_test_add_func ("/cli-shapes/cache-by-signature", test_cache_by_signature);
  g_test_add_func ("/cli-shapes/static-read-once", test_static_read_once);
  g_test_add_func ("/cli-shapes/profile-from-inputs", test_profile_from_inputs);
  return g_test_run ();
}
