/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cuda target's timing cache without a GPU: choices read back as written, a file of another
 * device or a damaged one refused whole (named, with the line), no file told apart. */
#include "fb-cuda-timing-cache.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#define TAG "NVIDIA H200, sm_90, 132 SMs, CUDA driver 13.0, cuDNN 91400"

typedef struct {
  char *dir;
  char *path;
} Fixture;

static void
setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  f->dir = g_dir_make_tmp ("fb-test-timing-XXXXXX", &error);
  g_assert_no_error (error);
  f->path = g_build_filename (f->dir, "ways.txt", NULL);
}

static void
teardown (Fixture *f, gconstpointer data)
{
  g_unlink (f->path);
  g_rmdir (f->dir);
  g_free (f->path);
  g_free (f->dir);
}

static void
add (GHashTable *choices, const char *key, int way, int algo, int64_t engine, const char *text)
{
  FbCudaConvChoice *c = g_new0 (FbCudaConvChoice, 1);
  *c = (FbCudaConvChoice) { way, algo, 1, engine, g_strdup (text), FALSE };
  g_hash_table_replace (choices, g_strdup (key), c);
}

static void
write_text (const char *path, const char *text)
{
  g_autoptr(GError) error = NULL;
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
}

static void
test_round_trip (Fixture *f, gconstpointer data)
{
  g_autoptr(GHashTable) out = fb_cuda_conv_choices_new ();
  g_autoptr(GHashTable) in = fb_cuda_conv_choices_new ();
  g_autoptr(GError) error = NULL;
  add (out, "1,64,56,56,0001", 2, -1, 37, "graph engine 37, 12.5 µs; timed:\tlegacy 20.1");
  add (out, "1,256,14,14,1011", 0, 6, -1, "legacy call algorithm 6, 3.0 µs");
  g_assert_true (fb_cuda_timing_cache_write (f->path, TAG, out, &error));
  g_assert_no_error (error);
  g_assert_true (fb_cuda_timing_cache_read (f->path, TAG, in, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_hash_table_size (in), ==, 2);
  FbCudaConvChoice *graph = g_hash_table_lookup (in, "1,64,56,56,0001");
  g_assert_nonnull (graph);
  g_assert_cmpint (graph->way, ==, 2);
  g_assert_cmpint (graph->engine, ==, 37);
  g_assert_true (graph->from_file);
  /* A tab in a description would split its line: it is written as a space. */
  g_assert_cmpstr (graph->choice, ==, "graph engine 37, 12.5 µs; timed: legacy 20.1");
  FbCudaConvChoice *legacy = g_hash_table_lookup (in, "1,256,14,14,1011");
  g_assert_nonnull (legacy);
  g_assert_cmpint (legacy->algo, ==, 6);
  g_assert_cmpint (legacy->engine, ==, -1);
}

static void
test_no_file (Fixture *f, gconstpointer data)
{
  g_autoptr(GHashTable) in = fb_cuda_conv_choices_new ();
  g_autoptr(GError) error = NULL;
  g_assert_false (fb_cuda_timing_cache_read (f->path, TAG, in, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
}

static void
test_other_device (Fixture *f, gconstpointer data)
{
  g_autoptr(GHashTable) out = fb_cuda_conv_choices_new ();
  g_autoptr(GHashTable) in = fb_cuda_conv_choices_new ();
  g_autoptr(GError) error = NULL;
  add (out, "k", 0, 1, -1, "legacy call algorithm 1");
  g_assert_true (fb_cuda_timing_cache_write (f->path, "NVIDIA H100, cuDNN 91400", out, &error));
  g_assert_false (fb_cuda_timing_cache_read (f->path, TAG, in, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, "NVIDIA H100"));
  g_assert_cmpuint (g_hash_table_size (in), ==, 0);
}

static void
test_damaged (Fixture *f, gconstpointer data)
{
  g_autoptr(GHashTable) in = fb_cuda_conv_choices_new ();
  g_autoptr(GError) error = NULL;
  add (in, "kept", 0, 1, -1, "as it was");
  g_autofree char *text = g_strdup_printf ("fusebench-cuda-timing-cache 1\t%s\n"
                                           "a\t0\t1\t1\t-1\tfine\nb\t0\tseven\t1\t-1\tbad\n", TAG);
  write_text (f->path, text);
  g_assert_false (fb_cuda_timing_cache_read (f->path, TAG, in, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, "line 3"));
  /* Nothing of a damaged file is taken, not even its good lines. */
  g_assert_cmpuint (g_hash_table_size (in), ==, 1);
  g_assert_nonnull (g_hash_table_lookup (in, "kept"));
  g_clear_error (&error);
  write_text (f->path, "\x89PNG\r\n");
  g_assert_false (fb_cuda_timing_cache_read (f->path, TAG, in, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, "line 1"));
}

static void
test_path (void)
{
  g_setenv ("FUSEBENCH_CUDA_TIMING_CACHE", "", TRUE);
  g_assert_null (fb_cuda_timing_cache_path ());
  g_setenv ("FUSEBENCH_CUDA_TIMING_CACHE", "ways.txt", TRUE);
  g_assert_cmpstr (fb_cuda_timing_cache_path (), ==, "ways.txt");
  g_unsetenv ("FUSEBENCH_CUDA_TIMING_CACHE");
  g_assert_null (fb_cuda_timing_cache_path ());
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/cuda-timing-cache/round-trip", Fixture, NULL, setup, test_round_trip, teardown);
  g_test_add ("/cuda-timing-cache/no-file", Fixture, NULL, setup, test_no_file, teardown);
  g_test_add ("/cuda-timing-cache/other-device", Fixture, NULL, setup, test_other_device, teardown);
  g_test_add ("/cuda-timing-cache/damaged", Fixture, NULL, setup, test_damaged, teardown);
  g_test_add_func ("/cuda-timing-cache/path", test_path);
  return g_test_run ();
}
