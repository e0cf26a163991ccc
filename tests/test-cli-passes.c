/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench passes: the table, --print-after-all, --dump-dir, --verify and option errors,
 * through the real binary. */
#include "fb-test-cli.h"

#include <glib/gstdio.h>
#include <string.h>

static char *
small_cnn (void)
{
  return test_source_path ("tests", "cases", "small-cnn", "model.onnx", NULL);
}

static void
test_table (void)
{
  g_autofree char *model = small_cnn ();
  g_autoptr(TestRun) run = test_run_fusebench ("passes", model, NULL);
  const char *stages[] = { "import", "cleanup", "fold-constants", "simplify", "cse",
                           "fold-batchnorm", "fuse-epilogue", "fuse-elementwise", "layout",
                           "plan-memory", "final" };

  g_assert_cmpint (run->status, ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (stages); i++)
    g_assert_nonnull (strstr (run->out, stages[i]));
  g_assert_nonnull (strstr (run->out, "26 → 25"));
  g_assert_nonnull (strstr (run->out, "folded 2 BatchNormalization"));
  g_assert_nonnull (strstr (run->out, "hardswish ×1"));
}

static void
test_verify (void)
{
  g_autofree char *model = small_cnn ();
  g_autoptr(TestRun) run = test_run_fusebench ("passes", model, "--verify", "--layout", "nhwc", NULL);

  g_assert_cmpint (run->status, ==, 0);
  g_assert_nonnull (strstr (run->out, "max |Δ|"));
  g_assert_nonnull (strstr (run->out, "every stage computes the outputs of stage 0"));
}

static void
test_print_and_dump (void)
{
  g_autofree char *model = small_cnn ();
  g_autofree char *dir = g_dir_make_tmp ("fb-passes-XXXXXX", NULL);
  g_autoptr(TestRun) run = test_run_fusebench ("passes", model, "--print-after-all",
                                               "--dump-dir", dir, "--disable", "layout", NULL);
  g_autofree char *txt = g_build_filename (dir, "06-fuse-epilogue.txt", NULL);
  g_autofree char *dot = g_build_filename (dir, "10-final.dot", NULL);
  g_autofree char *contents = NULL;

  g_assert_cmpint (run->status, ==, 0);
  g_assert_nonnull (strstr (run->out, "// ---- stage 0: import ----"));
  g_assert_nonnull (strstr (run->out, "// ---- stage 10: final ----"));
  g_assert_nonnull (strstr (run->out, " = Conv("));
  g_assert_true (g_file_get_contents (txt, &contents, NULL, NULL));
  g_assert_nonnull (strstr (contents, "kind=\"epilogue\""));
  g_clear_pointer (&contents, g_free);
  g_assert_true (g_file_get_contents (dot, &contents, NULL, NULL));
  g_assert_true (g_str_has_prefix (contents, "digraph"));

  for (guint i = 0; i <= 10; i++)
    {
      const char *names[] = { "import", "cleanup", "fold-constants", "simplify", "cse",
                              "fold-batchnorm", "fuse-epilogue", "fuse-elementwise", "layout",
                              "plan-memory", "final" };
      for (int ext = 0; ext < 2; ext++)
        {
          g_autofree char *base = g_strdup_printf ("%02u-%s.%s", i, names[i], ext ? "dot" : "txt");
          g_autofree char *path = g_build_filename (dir, base, NULL);
          g_assert_cmpint (g_remove (path), ==, 0);
        }
    }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

static void
test_bad_options (void)
{
  g_autofree char *model = small_cnn ();
  g_autoptr(TestRun) pass = test_run_fusebench ("passes", model, "--disable", "fold-everything", NULL);
  g_autoptr(TestRun) layout = test_run_fusebench ("passes", model, "--layout", "chwn", NULL);
  g_autoptr(TestRun) node = test_run_fusebench ("passes", model, "--no-fuse", "no-such-node", NULL);
  g_autoptr(TestRun) input_dir = test_run_fusebench ("passes", model, "--input-dir", "somewhere", NULL);
  g_autoptr(TestRun) missing = test_run_fusebench ("passes", "no-such-model.onnx", NULL);

  g_assert_cmpint (pass->status, ==, 2);
  g_assert_nonnull (strstr (pass->err, "fold-everything"));
  g_assert_nonnull (strstr (pass->err, "fuse-epilogue"));
  g_assert_cmpint (layout->status, ==, 2);
  g_assert_nonnull (strstr (layout->err, "chwn"));
  g_assert_cmpint (node->status, ==, 2);
  g_assert_nonnull (strstr (node->err, "no-such-node"));
  g_assert_cmpint (input_dir->status, ==, 2);
  g_assert_cmpint (missing->status, ==, 2);
  g_assert_nonnull (strstr (missing->err, "no-such-model.onnx"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/passes/table", test_table);
  g_test_add_func ("/cli/passes/verify", test_verify);
  g_test_add_func ("/cli/passes/print-and-dump", test_print_and_dump);
  g_test_add_func ("/cli/passes/bad-options", test_bad_options);
  return g_test_run ();
}
