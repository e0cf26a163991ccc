/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-graph.h"

static void
test_new_and_access (void)
{
  int64_t dims[] = { 2, 3 };
  g_autoptr(FbTensor) t = fb_tensor_new (FB_DTYPE_FLOAT32, 2, dims, NULL);

  g_assert_nonnull (t);
  g_assert_cmpint (t->numel, ==, 6);
  g_assert_cmpuint (fb_tensor_nbytes (t), ==, 24);
  fb_tensor_set_f64 (t, 4, 2.5);
  g_assert_cmpfloat (fb_tensor_get_f64 (t, 4), ==, 2.5);
  g_assert_cmpint (fb_tensor_get_i64 (t, 4), ==, 2);
}

static void
test_refuses_impossible (void)
{
  g_autoptr(GError) error = NULL;
  int64_t huge[] = { G_MAXINT64 / 2, 4 };
  int64_t negative[] = { 3, -1 };

  g_assert_null (fb_tensor_new (FB_DTYPE_FLOAT32, 2, huge, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE);
  g_clear_error (&error);
  g_assert_null (fb_tensor_new (FB_DTYPE_FLOAT32, 2, negative, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE);
  g_clear_error (&error);
  g_assert_null (fb_tensor_new (FB_DTYPE_STRING, 0, NULL, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED);
}

static void
test_wraps_bytes_without_copy (void)
{
  static const float data[] = { 1, 2, 3, 4 };
  g_autoptr(GBytes) bytes = g_bytes_new_static (data, sizeof data);
  int64_t dims[] = { 4 };
  g_autoptr(GError) error = NULL;
  g_autoptr(FbTensor) t = fb_tensor_new_for_bytes (FB_DTYPE_FLOAT32, 1, dims, bytes, &error);

  g_assert_no_error (error);
  g_assert_true (fb_tensor_data (t) == (const void *) data);
  g_assert_false (t->writable);

  int64_t wrong[] = { 5 };
  g_assert_null (fb_tensor_new_for_bytes (FB_DTYPE_FLOAT32, 1, wrong, bytes, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE);
}

static void
test_cast (void)
{
  int64_t dims[] = { 3 };
  g_autoptr(FbTensor) t = fb_tensor_new (FB_DTYPE_FLOAT32, 1, dims, NULL);
  float *d = fb_tensor_data_mut (t);
  d[0] = -1.7f; d[1] = 0.0f; d[2] = 2.9f;
  g_autoptr(FbTensor) i = fb_tensor_cast (t, FB_DTYPE_INT64, NULL);
  g_autoptr(FbTensor) b = fb_tensor_cast (t, FB_DTYPE_BOOL, NULL);

  g_assert_cmpint (fb_tensor_get_i64 (i, 0), ==, -1);
  g_assert_cmpint (fb_tensor_get_i64 (i, 2), ==, 2);
  g_assert_cmpint (fb_tensor_get_i64 (b, 0), ==, 1);
  g_assert_cmpint (fb_tensor_get_i64 (b, 1), ==, 0);
}

/* [3, 1] broadcast to [2, 3, 4]: each of the three values along its row of four, twice; one
 * that does not fit ([3, 2] to [2, 3, 4]) or is of a higher rank gives an error. */
static void
test_broadcast (void)
{
  int64_t col[] = { 3, 1 }, to[] = { 2, 3, 4 }, wide[] = { 3, 2 };
  g_autoptr(FbTensor) t = fb_tensor_new (FB_DTYPE_FLOAT32, 2, col, NULL);
  float *d = fb_tensor_data_mut (t);
  d[0] = 1.0f; d[1] = 2.0f; d[2] = 3.0f;
  g_autoptr(FbTensor) b = fb_tensor_broadcast (t, FB_DTYPE_FLOAT32, 3, to, NULL);
  g_assert_nonnull (b);
  g_assert_cmpint (b->numel, ==, 24);
  for (int64_t i = 0; i < 24; i++)
    g_assert_cmpfloat (fb_tensor_get_f64 (b, i), ==, (double) (i / 4 % 3 + 1));

  g_autoptr(GError) error = NULL;
  g_autoptr(FbTensor) w = fb_tensor_new (FB_DTYPE_FLOAT32, 2, wide, NULL);
  g_assert_null (fb_tensor_broadcast (w, FB_DTYPE_FLOAT32, 3, to, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE);
  g_clear_error (&error);
  g_assert_null (fb_tensor_broadcast (b, FB_DTYPE_FLOAT32, 2, col, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tensor/new-and-access", test_new_and_access);
  g_test_add_func ("/tensor/refuses-impossible", test_refuses_impossible);
  g_test_add_func ("/tensor/wraps-bytes-without-copy", test_wraps_bytes_without_copy);
  g_test_add_func ("/tensor/cast", test_cast);
  g_test_add_func ("/tensor/broadcast", test_broadcast);
  return g_test_run ();
}
