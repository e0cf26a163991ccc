/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench compile --dump-dir, through the real binary: the four lowering stages of every
 * kernel (kernel IR, LLVM IR before and after optimization, x86-64 assembly) next to the bundle. */
#include "fb-test-cli.h"

#include <glib/gstdio.h>
#include <string.h>

static const char * const suffixes[] = { ".kir", ".opt.ll", ".ll", ".s" };

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

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char * const *) a, *(char * const *) b);
}

static char *
read_text (const char *dir, const char *stem, const char *suffix)
{
  g_autofree char *name = g_strconcat (stem, suffix, NULL);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GError) error = NULL;
  char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  return text;
}

/* The kernel stems of a dump ("03-n104_Conv_Relu"), sorted; every stem has all four files. */
static GPtrArray *
dumped_kernels (const char *dir)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) d = g_dir_open (dir, 0, &error);
  g_autoptr(GHashTable) files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GPtrArray *stems = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_no_error (error);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_hash_table_add (files, g_strdup (name));
      if (g_str_has_suffix (name, ".kir"))
        g_ptr_array_add (stems, g_strndup (name, strlen (name) - strlen (".kir")));
    }
  g_ptr_array_sort (stems, compare_strings);
  g_assert_cmpuint (g_hash_table_size (files), ==, stems->len * G_N_ELEMENTS (suffixes));
  for (guint i = 0; i < stems->len; i++)
    for (guint k = 0; k < G_N_ELEMENTS (suffixes); k++)
      {
        g_autofree char *file = g_strconcat (g_ptr_array_index (stems, i), suffixes[k], NULL);
        g_assert_true (g_hash_table_contains (files, file));
      }
  return stems;
}

static void
test_dump_sample (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
  g_autofree char *tmp = g_dir_make_tmp ("fb-compile-XXXXXX", &error);
  g_autofree char *bundle = g_build_filename (tmp, "sample.fusebench", NULL);
  g_autofree char *dump = g_build_filename (tmp, "stages", "sample", NULL);
  g_autofree char *manifest = g_build_filename (bundle, "manifest.json", NULL);
  g_autoptr(TestRun) run = NULL;
  g_autoptr(GPtrArray) stems = NULL;
  guint convs = 0, library = 0, views = 0;

  g_assert_no_error (error);
  run = test_run_fusebench ("compile", model, "--target", "cpu", "-o", bundle,
                            "--dump-dir", dump, NULL);
  g_assert_cmpstr (run->err, ==, "");
  g_assert_cmpint (run->status, ==, 0);
  /* The bundle is written as without the option. */
  g_assert_true (g_file_test (manifest, G_FILE_TEST_IS_REGULAR));

  stems = dumped_kernels (dump);
  g_assert_cmpuint (stems->len, >=, 5);
  for (guint i = 0; i < stems->len; i++)
    {
      const char *stem = g_ptr_array_index (stems, i);
      g_autofree char *prefix = g_strdup_printf ("%02u-", i);
      g_autofree char *kir = read_text (dump, stem, ".kir");
      g_autofree char *ll = read_text (dump, stem, ".ll");
      g_autofree char *opt = read_text (dump, stem, ".opt.ll");
      g_autofree char *s = read_text (dump, stem, ".s");

      /* Numbered in run order, named after the kernel, which the kernel IR names too. */
      g_assert_true (g_str_has_prefix (stem, prefix));
      g_assert_nonnull (strstr (kir, stem + strlen (prefix)));
      g_assert_true (g_str_has_prefix (kir, "kernel "));
      if (strstr (ll, "no code") != NULL)
        {
          views++;
          g_assert_nonnull (strstr (s, "no code"));
          continue;
        }
      /* A channels-last Conv is a oneDNN primitive: the listings say so rather than show an
       * empty module, and only an epilogue oneDNN could not take is generated code. */
      if (strstr (kir, "oneDNN convolution") != NULL)
        {
          g_assert_nonnull (strstr (kir, "= conv ("));
          g_assert_nonnull (strstr (ll, "is a oneDNN convolution"));
          g_assert_nonnull (strstr (opt, "is a oneDNN convolution"));
          g_assert_nonnull (strstr (s, "is a oneDNN convolution"));
          convs++;
          library++;
          if (strstr (kir, "parallel iterations") == NULL)
            continue;
        }
      g_assert_nonnull (strstr (ll, "define "));
      g_assert_nonnull (strstr (opt, "define "));
      g_assert_nonnull (strstr (s, "ret"));
      g_assert_nonnull (strstr (s, "mov"));
      if (strstr (stem, "_Conv") != NULL && strstr (kir, "oneDNN convolution") == NULL)
        {
          convs++;
          g_assert_nonnull (strstr (kir, "for "));
          /* A Conv that calls the library does so in the IR and in the machine code. */
          if (strstr (kir, "call dnnl_sgemm") != NULL)
            {
              library++;
              g_assert_nonnull (strstr (s, "dnnl_sgemm"));
            }
        }
    }
  g_assert_cmpuint (convs, >=, 4);
  g_assert_cmpuint (library, >=, 1);
  /* Flatten is a view of its input: said, not left empty. */
  g_assert_cmpuint (views, >=, 1);
  remove_tree (tmp);
}

static void
test_dump_follows_pipeline (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
  g_autofree char *tmp = g_dir_make_tmp ("fb-compile-XXXXXX", &error);
  g_autofree char *fused_b = g_build_filename (tmp, "fused.fusebench", NULL);
  g_autofree char *plain_b = g_build_filename (tmp, "plain.fusebench", NULL);
  g_autofree char *fused_d = g_build_filename (tmp, "fused", NULL);
  g_autofree char *plain_d = g_build_filename (tmp, "plain", NULL);
  g_autoptr(TestRun) fused = NULL;
  g_autoptr(TestRun) plain = NULL;
  g_autoptr(GPtrArray) fused_k = NULL;
  g_autoptr(GPtrArray) plain_k = NULL;
  gboolean relu_alone = FALSE;

  g_assert_no_error (error);
  fused = test_run_fusebench ("compile", model, "--target", "cpu", "-o", fused_b,
                              "--dump-dir", fused_d, NULL);
  plain = test_run_fusebench ("compile", model, "--target", "cpu", "-o", plain_b,
                              "--disable", "fuse-epilogue", "--dump-dir", plain_d, NULL);
  g_assert_cmpint (fused->status, ==, 0);
  g_assert_cmpint (plain->status, ==, 0);
  fused_k = dumped_kernels (fused_d);
  plain_k = dumped_kernels (plain_d);
  /* Without the epilogue fusion every Relu is a kernel of its own. */
  g_assert_cmpuint (plain_k->len, >, fused_k->len);
  for (guint i = 0; i < plain_k->len; i++)
    relu_alone |= g_str_has_suffix (g_ptr_array_index (plain_k, i), "_Relu")
                  && strstr (g_ptr_array_index (plain_k, i), "_Conv_") == NULL;
  g_assert_true (relu_alone);
  remove_tree (tmp);
}

static void
test_dump_dir_unwritable (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
  g_autofree char *tmp = g_dir_make_tmp ("fb-compile-XXXXXX", &error);
  g_autofree char *bundle = g_build_filename (tmp, "b.fusebench", NULL);
  g_autofree char *file = g_build_filename (tmp, "a-file", NULL);
  g_autofree char *dump = g_build_filename (file, "stages", NULL);
  g_autoptr(TestRun) run = NULL;

  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (file, "not a folder", -1, &error));
  run = test_run_fusebench ("compile", model, "--target", "cpu", "-o", bundle,
                            "--dump-dir", dump, NULL);
  /* Said, naming the folder, never a crash. */
  g_assert_cmpint (run->status, !=, 0);
  g_assert_nonnull (strstr (run->err, "a-file"));
  remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* The binary this test runs must not read or fill the user's kernel cache. */
  g_setenv ("FUSEBENCH_KERNEL_CACHE", "off", TRUE);
  g_test_add_func ("/cli/compile/dump-dir", test_dump_sample);
  g_test_add_func ("/cli/compile/dump-dir-follows-pipeline", test_dump_follows_pipeline);
  g_test_add_func ("/cli/compile/dump-dir-unwritable", test_dump_dir_unwritable);
  return g_test_run ();
}
