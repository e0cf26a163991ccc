/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A third target is one folder and one line in the backend table: fusebench built with the
 * fake target of tests/fake-target/ (its backend, and a list adding FB_TARGET (fake)) runs and
 * checks models on it like on any target, lists it among the targets, and where the target
 * lacks something (timed runs for the profiler, bundles) says so from what its backend
 * offers. */
#include "fb-test-cli.h"

#include <string.h>

/* A file of the conv case (tests/cases/conv). */
static char *
case_path (const char *name)
{
  return test_source_path ("tests", "cases", "conv", name, NULL);
}

static char *
read_file (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  char *text = NULL;
  gsize size;
  g_assert_true (g_file_get_contents (path, &text, &size, NULL));
  return g_memdup2 (text, size + 1);
}

static void
test_run_and_check (void)
{
  g_autofree char *model = case_path ("model.onnx");
  g_autofree char *inputs = case_path ("test_data_set_0");
  g_autofree char *cases = test_source_path ("tests", "cases", "conv", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("fb-fake-target-XXXXXX", &error);
  g_autofree char *fake_out = g_build_filename (tmp, "fake", NULL);
  g_autofree char *interp_out = g_build_filename (tmp, "interp", NULL);
  g_assert_no_error (error);

  g_autoptr(TestRun) fake = test_run_fusebench ("run", model, "--target", "fake", "--input-dir",
                                                inputs, "--output-dir", fake_out, NULL);
  g_assert_cmpint (fake->status, ==, 0);
  g_assert_nonnull (strstr (fake->err, "fake: ran on a pretend device"));
  g_assert_nonnull (strstr (fake->out, "fake: median"));
  g_autoptr(TestRun) interp = test_run_fusebench ("run", model, "--input-dir", inputs,
                                                  "--output-dir", interp_out, NULL);
  g_assert_cmpint (interp->status, ==, 0);
  g_autofree char *a = read_file (fake_out, "output_0.pb");
  g_autofree char *b = read_file (interp_out, "output_0.pb");
  g_assert_cmpstr (a, ==, b);

  g_autoptr(TestRun) check = test_run_fusebench ("check", cases, "--target", "fake", NULL);
  g_assert_cmpint (check->status, ==, 0);
  g_assert_nonnull (strstr (check->out, "1 passed, 0 failed"));
  test_remove_tree (tmp);
}

static void
test_listed_and_refused (void)
{
  g_autofree char *model = case_path ("model.onnx");

  g_autoptr(TestRun) unknown = test_run_fusebench ("run", model, "--target", "tpu", NULL);
  g_assert_cmpint (unknown->status, ==, 2);
  g_assert_nonnull (strstr (unknown->err, "interp, cpu, cuda, fake"));
  /* No timed runs for the profiler, no bundles: said from its backend, not its name. */
  g_autoptr(TestRun) profile = test_run_fusebench ("profile", model, "--target", "fake", NULL);
  g_assert_cmpint (profile->status, ==, 2);
  g_assert_nonnull (strstr (profile->err, "expected cpu or cuda"));
  g_autoptr(TestRun) compile = test_run_fusebench ("compile", model, "--target", "fake", "-o",
                                                   "never.fusebench", NULL);
  g_assert_cmpint (compile->status, ==, 2);
  g_assert_nonnull (strstr (compile->err, "targets that compile bundles: cpu, cuda"));
  g_assert_false (g_file_test ("never.fusebench", G_FILE_TEST_EXISTS));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* The commands of this test are the fake target's build of fusebench. */
  g_setenv ("FUSEBENCH", g_getenv ("FUSEBENCH_FAKE_TARGET"), TRUE);
  g_test_add_func ("/fake-target/run-and-check", test_run_and_check);
  g_test_add_func ("/fake-target/listed-and-refused", test_listed_and_refused);
  return g_test_run ();
}
