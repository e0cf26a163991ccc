/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench compile --target cuda --emit ptx, through the real binary: every generated kernel of
 * the model in one PTX file, written atomically, that the CUDA toolkit's ptxas assembles. */
#include "fb-test-cli.h"
#include "fb-ptx.h"

#include <glib/gstdio.h>
#include <string.h>

static char *
read_text (const char *path)
{
  g_autoptr(GError) error = NULL;
  char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  return text;
}

/* The entries that the file's index names (kernels of equal code name the same ones), each
 * declared in its body exactly once; how many. */
static guint
check_entries (const char *ptx)
{
  g_auto(GStrv) lines = g_strsplit (ptx, "\n", -1);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; lines[i] != NULL && g_str_has_prefix (lines[i], "//"); i++)
    {
      const char *at = strstr (lines[i], ".entry ");
      if (at == NULL)
        continue;
      g_autofree char *name = g_strndup (at + 7, strcspn (at + 7, ", "));
      g_autofree char *decl = g_strdup_printf (".visible .entry %s(", name);
      const char *first = strstr (ptx, decl);

      g_assert_nonnull (first);
      g_assert_null (strstr (first + 1, decl));
      g_hash_table_add (seen, g_steal_pointer (&name));
    }
  return g_hash_table_size (seen);
}

static guint
count (const char *text, const char *needle)
{
  guint n = 0;
  for (const char *p = strstr (text, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      g_unlink (child);
    }
  g_rmdir (path);
}

/* The sample model's kernels in one module: its index, one .version, every entry; the file
 * replaced whole, with nothing else left in its folder. */
static void
test_written (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
  g_autofree char *tmp = g_dir_make_tmp ("fb-emit-ptx-XXXXXX", &error);
  g_autofree char *out = g_build_filename (tmp, "sample.ptx", NULL);
  g_autoptr(TestRun) run = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autofree char *ptx = NULL;
  const char *name;
  guint files = 0;

  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (out, "an older file, longer than nothing", -1, &error));
  run = test_run_fusebench ("compile", model, "--target", "cuda", "--emit", "ptx", "-o", out, NULL);
  g_assert_cmpstr (run->err, ==, "");
  g_assert_cmpint (run->status, ==, 0);
  ptx = read_text (out);
  g_assert_null (strstr (ptx, "older file"));
  g_assert_true (g_str_has_prefix (ptx, "// "));
  g_assert_cmpuint (count (ptx, "\n.version "), ==, 1);
  g_assert_cmpuint (count (ptx, "\n.target sm_90"), ==, 1);
  /* The index names every kernel, their library phases and their entries. */
  g_assert_nonnull (strstr (ptx, "// kernel n70_Softmax (Softmax"));
  g_assert_nonnull (strstr (ptx, "a library call (cuDNN or cuBLASLt)"));
  g_assert_cmpuint (check_entries (ptx), >=, 4);
  g_assert_cmpuint (check_entries (ptx), ==, count (ptx, ".visible .entry "));
  dir = g_dir_open (tmp, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_assert_cmpstr (name, ==, "sample.ptx");
      files++;
    }
  g_assert_cmpuint (files, ==, 1);
  remove_tree (tmp);
}

/* Kernels of equal code (the same reduction on several inputs) are in the module once. */
static void
test_shared_code (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = test_source_path ("tests", "cases", "reduce", "model.onnx", NULL);
  g_autofree char *tmp = g_dir_make_tmp ("fb-emit-ptx-XXXXXX", &error);
  g_autofree char *out = g_build_filename (tmp, "reduce.ptx", NULL);
  g_autoptr(TestRun) run = NULL;
  g_autofree char *ptx = NULL;

  g_assert_no_error (error);
  run = test_run_fusebench ("compile", model, "--target", "cuda", "--emit", "ptx", "-o", out, NULL);
  g_assert_cmpint (run->status, ==, 0);
  ptx = read_text (out);
  g_assert_nonnull (strstr (ptx, ": the same code as kernel "));
  g_assert_cmpuint (check_entries (ptx), ==, count (ptx, ".visible .entry "));
  remove_tree (tmp);
}

/* ptxas takes the file as it is, as the driver would. */
static void
test_ptxas_accepts (void)
{
  g_autofree char *ptxas = fb_ptx_find_tool ("ptxas");
  g_autoptr(GError) error = NULL;
  g_autofree char *model = test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
  g_autofree char *tmp = NULL, *out = NULL, *cubin = NULL, *err = NULL;
  g_autoptr(TestRun) run = NULL;
  int status = -1;

  if (ptxas == NULL)
    {
      g_test_skip ("ptxas (the CUDA toolkit's PTX assembler) is not on this machine: the PTX "
                   "is checked for its structure only");
      return;
    }
  tmp = g_dir_make_tmp ("fb-emit-ptx-XXXXXX", &error);
  g_assert_no_error (error);
  out = g_build_filename (tmp, "sample.ptx", NULL);
  cubin = g_build_filename (tmp, "sample.cubin", NULL);
  run = test_run_fusebench ("compile", model, "--target", "cuda", "--emit", "ptx", "-o", out, NULL);
  g_assert_cmpint (run->status, ==, 0);
  const char *argv[] = { ptxas, "-arch=sm_90", "-o", cubin, out, NULL };
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                               NULL, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("ptxas refused the exported PTX: %s", err);
  g_assert_true (g_file_test (cubin, G_FILE_TEST_IS_REGULAR));
  remove_tree (tmp);
}

/* --dump-dir beside --emit ptx: every kernel's stages down to PTX and SASS (or the line saying
 * which CUDA tool is missing). */
static void
test_dump_sass (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
  g_autofree char *tmp = g_dir_make_tmp ("fb-emit-ptx-XXXXXX", &error);
  g_autofree char *out = g_build_filename (tmp, "sample.ptx", NULL);
  g_autofree char *dump = g_build_filename (tmp, "stages", NULL);
  g_autofree char *tool = fb_ptx_find_tool ("cuobjdump");
  g_autofree char *other = fb_ptx_find_tool ("nvdisasm");
  g_autofree char *ptxas = fb_ptx_find_tool ("ptxas");
  g_autoptr(TestRun) run = NULL;
  g_autoptr(GDir) dir = NULL;
  const char *name;
  guint sass = 0, ptx = 0;

  g_assert_no_error (error);
  run = test_run_fusebench ("compile", model, "--target", "cuda", "--emit", "ptx", "-o", out,
                            "--dump-dir", dump, NULL);
  g_assert_cmpint (run->status, ==, 0);
  dir = g_dir_open (dump, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (dump, name, NULL);
      g_autofree char *text = read_text (path);

      if (g_str_has_suffix (name, ".sass"))
        sass++;
      if (!g_str_has_suffix (name, ".ptx"))
        continue;
      ptx++;
      /* A kernel with code of ours has SASS where the toolkit is, else says what is missing. */
      if (strstr (text, ".visible .entry ") != NULL)
        {
          g_autofree char *stem = g_strndup (path, strlen (path) - strlen ("ptx"));
          g_autofree char *sass_path = g_strconcat (stem, "sass", NULL);
          g_autofree char *listing = read_text (sass_path);

          if ((tool != NULL || other != NULL) && ptxas != NULL)
            g_assert_null (strstr (listing, "no SASS"));
          else
            g_assert_nonnull (strstr (listing, tool == NULL && other == NULL
                                               ? "neither cuobjdump nor nvdisasm" : "ptxas"));
        }
    }
  g_assert_cmpuint (sass, ==, ptx);
  g_assert_cmpuint (sass, >=, 5);
  g_dir_close (g_steal_pointer (&dir));
  {
    g_autoptr(GDir) d = g_dir_open (dump, 0, NULL);
    while ((name = g_dir_read_name (d)) != NULL)
      {
        g_autofree char *path = g_build_filename (dump, name, NULL);
        g_unlink (path);
      }
  }
  g_rmdir (dump);
  remove_tree (tmp);
}

/* What cannot be done is said, with exit status 2, and nothing is written. */
static void
test_refused (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
  g_autofree char *tmp = g_dir_make_tmp ("fb-emit-ptx-XXXXXX", &error);
  g_autofree char *out = g_build_filename (tmp, "x.ptx", NULL);
  g_autofree char *deep = g_build_filename (tmp, "no-such-folder", "x.ptx", NULL);
  g_autoptr(TestRun) cpu = NULL, what = NULL, shared = NULL, nowhere = NULL;

  g_assert_no_error (error);
  cpu = test_run_fusebench ("compile", model, "--target", "cpu", "--emit", "ptx", "-o", out, NULL);
  g_assert_cmpint (cpu->status, ==, 2);
  g_assert_nonnull (strstr (cpu->err, "--target cuda --emit ptx"));
  what = test_run_fusebench ("compile", model, "--target", "cuda", "--emit", "cubin", "-o", out, NULL);
  g_assert_cmpint (what->status, ==, 2);
  g_assert_nonnull (strstr (what->err, "--emit cubin: expected bundle or ptx"));
  shared = test_run_fusebench ("compile", model, "--target", "cuda", "--emit", "ptx",
                               "--shared-library", "-o", out, NULL);
  g_assert_cmpint (shared->status, ==, 2);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  /* A folder that is not there: the message names the file. */
  nowhere = test_run_fusebench ("compile", model, "--target", "cuda", "--emit", "ptx", "-o", deep, NULL);
  g_assert_cmpint (nowhere->status, !=, 0);
  g_assert_nonnull (strstr (nowhere->err, deep));
  remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/emit-ptx/written", test_written);
  g_test_add_func ("/cli/emit-ptx/shared-code", test_shared_code);
  g_test_add_func ("/cli/emit-ptx/ptxas-accepts", test_ptxas_accepts);
  g_test_add_func ("/cli/emit-ptx/dump-sass", test_dump_sass);
  g_test_add_func ("/cli/emit-ptx/refused", test_refused);
  return g_test_run ();
}
