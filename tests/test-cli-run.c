/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench run and fusebench check, through the real binary: outputs, timings, the PASS/FAIL
 * lines, and the exit statuses of DESIGN.md (0 success, 1 the work failed, 2 bad input). */
#include "fb-compare.h"
#include "fb-test-cli.h"
#include "fb-tensor-io.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

static char *
case_path (const char *name, const char *file)
{
  return test_source_path ("tests", "cases", name, file, NULL);
}

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

/* A copy of a case whose first expected output is nudged past the tolerance. */
static char *
tampered_case (const char *name)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("fb-check-XXXXXX", &error);
  g_autofree char *sets = g_build_filename (dir, "test_data_set_0", NULL);
  g_autofree char *model_src = case_path (name, "model.onnx");
  g_autofree char *model_dst = g_build_filename (dir, "model.onnx", NULL);
  g_autofree char *data = NULL;
  gsize len;

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir (sets, 0755), ==, 0);
  g_assert_true (g_file_get_contents (model_src, &data, &len, NULL));
  g_assert_true (g_file_set_contents (model_dst, data, len, NULL));
  for (guint i = 0;; i++)
    {
      g_autofree char *base_in = g_strdup_printf ("input_%u.pb", i);
      g_autofree char *base_out = g_strdup_printf ("output_%u.pb", i);
      g_autofree char *src_dir = case_path (name, "test_data_set_0");
      g_autofree char *in_src = g_build_filename (src_dir, base_in, NULL);
      g_autofree char *out_src = g_build_filename (src_dir, base_out, NULL);
      g_autofree char *in_dst = g_build_filename (sets, base_in, NULL);
      g_autofree char *out_dst = g_build_filename (sets, base_out, NULL);
      g_autofree char *out_name = NULL;
      gboolean any = FALSE;

      if (g_file_test (in_src, G_FILE_TEST_EXISTS))
        {
          g_autoptr(FbTensor) t = fb_tensor_load_file (in_src, NULL, &error);
          g_assert_no_error (error);
          g_assert_true (fb_tensor_save_file (t, NULL, in_dst, &error));
          any = TRUE;
        }
      if (g_file_test (out_src, G_FILE_TEST_EXISTS))
        {
          g_autoptr(FbTensor) t = fb_tensor_load_file (out_src, &out_name, &error);
          g_autoptr(FbTensor) copy = fb_tensor_copy (t);
          g_assert_no_error (error);
          if (i == 0)
            fb_tensor_set_f64 (copy, 0, fb_tensor_get_f64 (copy, 0) + 0.5);
          g_assert_true (fb_tensor_save_file (copy, out_name, out_dst, &error));
          any = TRUE;
        }
      if (!any)
        break;
    }
  return dir;
}

static void
test_check_passes_and_fails (void)
{
  g_autofree char *good = case_path ("binary", NULL);
  g_autofree char *bad = tampered_case ("unary");
  g_autoptr(TestRun) run = test_run_fusebench ("check", good, NULL);
  g_autoptr(TestRun) failing = NULL;
  g_autoptr(TestRun) missing = NULL;

  g_assert_cmpint (run->status, ==, 0);
  g_assert_true (g_str_has_prefix (run->out, "PASS "));
  g_assert_nonnull (strstr (run->out, "worst abs err"));
  g_assert_nonnull (strstr (run->out, "1 case: 1 passed, 0 failed"));

  failing = test_run_fusebench ("check", good, bad, NULL);
  g_assert_cmpint (failing->status, ==, 1);
  g_assert_nonnull (strstr (failing->out, "FAIL "));
  g_assert_nonnull (strstr (failing->out, "output 0"));
  g_assert_nonnull (strstr (failing->out, "2 cases: 1 passed, 1 failed"));
  remove_tree (bad);

  missing = test_run_fusebench ("check", "no-such-case", NULL);
  g_assert_cmpint (missing->status, ==, 1);
  g_assert_nonnull (strstr (missing->out, "FAIL no-such-case"));
}

/* The cpu target on shifted-window attention (tests/cases/swin-window): the rolls, window
 * partitions and masked scores compiled, in both layouts, give ONNX Runtime's map. */
static void
test_check_cpu_window_attention (void)
{
  g_autofree char *swin = case_path ("swin-window", NULL);
  const char *layouts[] = { "nhwc", "nchw" };
  for (guint i = 0; i < G_N_ELEMENTS (layouts); i++)
    {
      g_autoptr(TestRun) run = test_run_fusebench ("check", swin, "--target", "cpu", "--layout",
                                                   layouts[i], NULL);
      g_assert_cmpint (run->status, ==, 0);
      g_assert_nonnull (strstr (run->out, "1 case: 1 passed, 0 failed"));
    }
}

static void
test_check_usage_errors (void)
{
  g_autofree char *good = case_path ("binary", NULL);
  g_autoptr(TestRun) no_args = test_run_fusebench ("check", NULL);
  g_autoptr(TestRun) bad_pass = test_run_fusebench ("check", good, "--disable", "no-such-pass", NULL);
  g_autoptr(TestRun) target = test_run_fusebench ("check", good, "--target", "tpu", NULL);

  g_assert_cmpint (no_args->status, ==, 2);
  g_assert_cmpint (bad_pass->status, ==, 2);
  g_assert_nonnull (strstr (bad_pass->err, "no-such-pass"));
  g_assert_cmpint (target->status, ==, 2);
  g_assert_nonnull (strstr (target->err, "tpu"));
  /* No TF32 and TF32 in the products at once: refused before any case runs, in every
   * command that takes both. */
  const char *commands[] = { "check", "run", "profile" };
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autofree char *model = case_path ("matmul", i ? "model.onnx" : NULL);
      g_autoptr(TestRun) both = test_run_fusebench (commands[i], model, "--target", "cuda",
                                                    "--strict-float32", "--tf32-matmul", NULL);
      g_assert_cmpint (both->status, ==, 2);
      g_assert_nonnull (strstr (both->err, "give one of them"));
    }
}

static void
test_run_writes_outputs_and_times (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = case_path ("conv", "model.onnx");
  g_autofree char *inputs = case_path ("conv", "test_data_set_0");
  g_autofree char *out_dir = g_dir_make_tmp ("fb-run-XXXXXX", &error);
  g_autofree char *npy = g_build_filename (out_dir, "one.npy", NULL);
  g_autofree char *spec = NULL;
  g_autofree char *written = g_build_filename (out_dir, "output_0.pb", NULL);
  g_autofree char *expected_path = g_build_filename (inputs, "output_0.pb", NULL);
  g_autoptr(TestRun) run = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(FbTensor) got = NULL;
  g_autoptr(FbTensor) expected = NULL;
  g_autoptr(FbTensor) from_npy = NULL;
  JsonObject *o;
  FbCompare cmp;

  g_assert_no_error (error);
  spec = g_strdup_printf ("conv_0=%s", npy);
  run = test_run_fusebench ("run", model, "--input-dir", inputs, "--output-dir", out_dir,
                            "--output", spec, "--iterations", "3", "--json", NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_true (json_parser_load_from_data (parser, run->out, -1, &error));
  g_assert_no_error (error);
  o = json_node_get_object (json_parser_get_root (parser));
  g_assert_true (json_object_has_member (o, "median_ms"));
  g_assert_true (json_object_has_member (o, "min_ms"));
  g_assert_true (json_object_has_member (o, "max_ms"));
  g_assert_cmpint (json_object_get_int_member (o, "iterations"), ==, 3);
  g_assert_cmpfloat (json_object_get_double_member (o, "min_ms"), <=,
                     json_object_get_double_member (o, "max_ms"));

  got = fb_tensor_load_file (written, NULL, &error);
  g_assert_no_error (error);
  expected = fb_tensor_load_file (expected_path, NULL, &error);
  g_assert_no_error (error);
  fb_tensor_compare (expected, got, FB_COMPARE_RTOL, FB_COMPARE_ATOL, &cmp);
  g_assert_true (cmp.ok);
  fb_compare_clear (&cmp);
  from_npy = fb_tensor_load_file (npy, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (from_npy->numel, ==, got->numel);
  remove_tree (out_dir);
}

static void
test_run_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = case_path ("gpt2_struct", "model.onnx");
  g_autofree char *conv = case_path ("conv", "model.onnx");
  g_autofree char *dir = g_dir_make_tmp ("fb-run-XXXXXX", &error);
  g_autofree char *bad_ids = g_build_filename (dir, "ids.pb", NULL);
  g_autofree char *wrong_shape = g_build_filename (dir, "wrong.npy", NULL);
  g_autofree char *ids_spec = g_strdup_printf ("input_ids=%s", bad_ids);
  g_autofree char *shape_spec = g_strdup_printf ("input_ids=%s", wrong_shape);
  g_autofree char *unknown_spec = g_strdup_printf ("nope=%s", bad_ids);
  g_autoptr(FbTensor) ids = fb_tensor_new (FB_DTYPE_INT64, 2, (const int64_t[]) { 1, 64 }, NULL);
  g_autoptr(FbTensor) wrong = fb_tensor_new (FB_DTYPE_INT64, 2, (const int64_t[]) { 2, 3 }, NULL);
  g_autoptr(TestRun) oob = NULL;
  g_autoptr(TestRun) shape = NULL;
  g_autoptr(TestRun) unknown = NULL;
  g_autoptr(TestRun) none = NULL;
  g_autoptr(TestRun) target = NULL;

  g_assert_no_error (error);
  /* A token id past the vocabulary: the embedding Gather fails, and says which node. */
  ((int64_t *) fb_tensor_data_mut (ids))[5] = 1 << 20;
  g_assert_true (fb_tensor_save_file (ids, "input_ids", bad_ids, &error));
  g_assert_true (fb_tensor_save_file (wrong, NULL, wrong_shape, &error));
  g_assert_no_error (error);

  oob = test_run_fusebench ("run", model, "--input", ids_spec, NULL);
  g_assert_cmpint (oob->status, ==, 1);
  g_assert_nonnull (strstr (oob->err, "(Gather)"));
  g_assert_nonnull (strstr (oob->err, "out of range"));

  shape = test_run_fusebench ("run", model, "--input", shape_spec, NULL);
  g_assert_cmpint (shape->status, ==, 2);
  g_assert_nonnull (strstr (shape->err, "wrong.npy"));

  unknown = test_run_fusebench ("run", model, "--input", unknown_spec, NULL);
  g_assert_cmpint (unknown->status, ==, 2);
  g_assert_nonnull (strstr (unknown->err, "input_ids"));

  none = test_run_fusebench ("run", conv, NULL);
  g_assert_cmpint (none->status, ==, 2);
  g_assert_nonnull (strstr (none->err, "--input-dir"));

  target = test_run_fusebench ("run", conv, "--target", "tpu", NULL);
  g_assert_cmpint (target->status, ==, 2);
  g_assert_nonnull (strstr (target->err, "tpu"));
  remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/check/pass-and-fail", test_check_passes_and_fails);
  g_test_add_func ("/cli/check/usage", test_check_usage_errors);
  g_test_add_func ("/cli/check/cpu-window-attention", test_check_cpu_window_attention);
  g_test_add_func ("/cli/run/outputs-and-times", test_run_writes_outputs_and_times);
  g_test_add_func ("/cli/run/errors", test_run_errors);
  return g_test_run ();
}
