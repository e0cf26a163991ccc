/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Tensor files: .pb and .npy round trips, files numpy wrote, and broken files. */
#include "fb-onnx-import.h"
#include "fb-tensor-io.h"

#include <glib/gstdio.h>
#include <string.h>

static void
test_round_trips (void)
{
  g_autofree char *dir = g_dir_make_tmp ("fb-tensor-io-XXXXXX", NULL);
  const FbDType types[] = { FB_DTYPE_FLOAT32, FB_DTYPE_INT64, FB_DTYPE_BOOL, FB_DTYPE_FLOAT16,
                            FB_DTYPE_UINT8, FB_DTYPE_FLOAT64, FB_DTYPE_INT32 };
  const char *exts[] = { "pb", "npy" };
  int64_t dims[] = { 2, 3, 1 };

  for (guint e = 0; e < G_N_ELEMENTS (exts); e++)
    for (guint k = 0; k < G_N_ELEMENTS (types); k++)
      {
        g_autofree char *file = g_strdup_printf ("%s/t%u.%s", dir, k, exts[e]);
        g_autoptr(FbTensor) t = fb_tensor_new (types[k], 3, dims, NULL);
        g_autoptr(FbTensor) back = NULL;
        g_autoptr(GError) error = NULL;
        g_autofree char *name = NULL;

        for (int64_t i = 0; i < t->numel; i++)
          fb_tensor_set_f64 (t, i, (double) (i % 2 ? i : -i));
        g_assert_true (fb_tensor_save_file (t, "value", file, &error));
        g_assert_no_error (error);
        back = fb_tensor_load_file (file, &name, &error);
        g_assert_no_error (error);
        g_assert_cmpint (back->dtype, ==, types[k]);
        g_assert_cmpint (back->rank, ==, 3);
        g_assert_cmpint (back->dims[1], ==, 3);
        g_assert_cmpmem (fb_tensor_data (back), fb_tensor_nbytes (back), fb_tensor_data (t), fb_tensor_nbytes (t));
        if (e == 0)
          g_assert_cmpstr (name, ==, "value");
        g_unlink (file);
      }
  g_rmdir (dir);
}

static void
test_numpy_written (void)
{
  g_autofree char *ints = g_test_build_filename (G_TEST_DIST, "fixtures", "arange-2x3-int32.npy", NULL);
  g_autofree char *halves = g_test_build_filename (G_TEST_DIST, "fixtures", "half-3-float16.npy", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbTensor) a = fb_tensor_load_file (ints, NULL, &error);
  g_autoptr(FbTensor) h = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (a->dtype, ==, FB_DTYPE_INT32);
  g_assert_cmpint (a->dims[0], ==, 2);
  g_assert_cmpint (fb_tensor_get_i64 (a, 5), ==, 5);
  h = fb_tensor_load_file (halves, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (fb_tensor_get_f64 (h, 2), ==, 65504.0);
}

static void
test_broken_files (void)
{
  g_autofree char *dir = g_dir_make_tmp ("fb-tensor-io-XXXXXX", NULL);
  g_autofree char *ints = g_test_build_filename (G_TEST_DIST, "fixtures", "arange-2x3-int32.npy", NULL);
  g_autofree char *data = NULL;
  gsize size;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_get_contents (ints, &data, &size, NULL));
  /* Every truncation of a .npy, and the same bytes read as a .pb, are clear errors. */
  for (gsize cut = 0; cut < size; cut++)
    {
      g_autofree char *npy = g_build_filename (dir, "cut.npy", NULL);
      g_autofree char *pb = g_build_filename (dir, "cut.pb", NULL);
      g_autoptr(FbTensor) t = NULL;
      g_assert_true (g_file_set_contents (npy, data, (gssize) cut, NULL));
      t = fb_tensor_load_file (npy, NULL, &error);
      g_assert_null (t);
      g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_PARSE);
      g_assert_nonnull (strstr (error->message, "cut.npy"));
      g_clear_error (&error);
      g_assert_true (g_file_set_contents (pb, data, (gssize) cut, NULL));
      t = fb_tensor_load_file (pb, NULL, &error);
      g_assert_true ((t == NULL) == (error != NULL));
      g_clear_error (&error);
      g_unlink (npy);
      g_unlink (pb);
    }
  g_assert_null (fb_tensor_load_file ("/nonexistent/input_0.pb", NULL, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_IO);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tensor-io/round-trips", test_round_trips);
  g_test_add_func ("/tensor-io/numpy-written", test_numpy_written);
  g_test_add_func ("/tensor-io/broken-files", test_broken_files);
  return g_test_run ();
}
