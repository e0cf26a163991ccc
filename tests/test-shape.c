/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-graph.h"

static void
test_parse_and_print (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  FbShape s;

  g_assert_true (fb_shape_parse ("1x3x224x224", &s, &error));
  g_assert_no_error (error);
  g_assert_cmpint (s.rank, ==, 4);
  g_assert_cmpint (s.dim[3], ==, 224);
  text = fb_shape_to_string (&s);
  g_assert_cmpstr (text, ==, "1x3x224x224");
  g_assert_true (fb_shape_parse ("", &s, NULL));
  g_assert_cmpint (s.rank, ==, 0);
  g_assert_false (fb_shape_parse ("1x-3", &s, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (fb_shape_parse ("1x1x1x1x1x1x1x1x1", &s, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED);
}

static void
test_broadcast (void)
{
  g_autoptr(GError) error = NULL;
  int64_t a_dims[] = { 8, 1, 6, 1 }, b_dims[] = { 7, 1, 5 };
  FbShape a = fb_shape_make (4, a_dims), b = fb_shape_make (3, b_dims), r;

  g_assert_true (fb_shape_broadcast (&a, &b, &r, &error));
  g_assert_cmpint (r.rank, ==, 4);
  g_assert_cmpint (r.dim[0], ==, 8);
  g_assert_cmpint (r.dim[1], ==, 7);
  g_assert_cmpint (r.dim[2], ==, 6);
  g_assert_cmpint (r.dim[3], ==, 5);

  int64_t c_dims[] = { 3 }, d_dims[] = { 4 };
  FbShape c = fb_shape_make (1, c_dims), d = fb_shape_make (1, d_dims);
  g_assert_false (fb_shape_broadcast (&c, &d, &r, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE);

  /* A symbolic batch survives broadcasting against 1. */
  FbShape e = fb_shape_make (1, d_dims);
  e.dim[0] = FB_DIM_UNKNOWN;
  e.sym[0] = g_intern_static_string ("batch");
  int64_t one[] = { 1 };
  FbShape f = fb_shape_make (1, one);
  g_assert_true (fb_shape_broadcast (&e, &f, &r, NULL));
  g_assert_cmpstr (r.sym[0], ==, "batch");
}

static void
test_numel_overflow (void)
{
  int64_t dims[] = { G_GINT64_CONSTANT (1) << 40, G_GINT64_CONSTANT (1) << 40 };
  FbShape s = fb_shape_make (2, dims);
  gboolean overflow = FALSE;

  g_assert_cmpint (fb_shape_numel (&s, &overflow), ==, -1);
  g_assert_true (overflow);
}

static void
test_axis (void)
{
  int axis = 99;
  g_assert_true (fb_axis_normalize (-1, 4, &axis));
  g_assert_cmpint (axis, ==, 3);
  g_assert_false (fb_axis_normalize (4, 4, &axis));
  g_assert_false (fb_axis_normalize (-5, 4, &axis));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/shape/parse-and-print", test_parse_and_print);
  g_test_add_func ("/shape/broadcast", test_broadcast);
  g_test_add_func ("/shape/numel-overflow", test_numel_overflow);
  g_test_add_func ("/shape/axis", test_axis);
  return g_test_run ();
}
