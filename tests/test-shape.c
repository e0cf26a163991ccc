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
assert_short_name (const char *sym,
                   const char *expected)
{
  g_autofree char *name = fb_dim_short_name (sym);

  g_assert_cmpstr (name, ==, expected);
}

/* Symbolic extents shown by short names, never joined into something that reads as hex. */
static void
test_display (void)
{
  int64_t dims[] = { -1, 16, 24, -1 };
  FbShape s = fb_shape_make (4, dims);
  g_autofree char *plain = NULL;
  g_autofree char *shown = NULL;
  g_autofree char *symbols = NULL;

  assert_short_name ("p2o.DynamicDimension.0", "D0");
  assert_short_name ("batch", "batch");
  assert_short_name ("N", "N");
  assert_short_name ("batch_size", "batch_size");
  assert_short_name ("sequence_length", "SL");
  assert_short_name ("total_sequence_length", "TSL");
  assert_short_name ("Reshape_output_dim_0", "ROD0");
  assert_short_name ("onnx::Shape_3/height", "height");
  assert_short_name ("unk__1234", "unk__1234");
  assert_short_name ("7", "D7");
  assert_short_name ("", "?");

  s.sym[0] = g_intern_static_string ("p2o.DynamicDimension.0");
  plain = fb_shape_to_string (&s);
  g_assert_cmpstr (plain, ==, "p2o.DynamicDimension.0x16x24x?");
  shown = fb_shape_to_display (&s);
  g_assert_cmpstr (shown, ==, "D0×16×24×?");
  symbols = fb_shape_symbols_text (&s);
  g_assert_cmpstr (symbols, ==, "D0 = p2o.DynamicDimension.0");

  /* Names shown whole have nothing to explain; nor do scalars and unknown ranks. */
  s.sym[0] = g_intern_static_string ("N");
  g_clear_pointer (&symbols, g_free);
  g_assert_null (fb_shape_symbols_text (&s));
  g_clear_pointer (&shown, g_free);
  shown = fb_shape_to_display (&s);
  g_assert_cmpstr (shown, ==, "N×16×24×?");
  s = fb_shape_scalar ();
  g_clear_pointer (&shown, g_free);
  shown = fb_shape_to_display (&s);
  g_assert_cmpstr (shown, ==, "scalar");
  s = fb_shape_unknown ();
  g_clear_pointer (&shown, g_free);
  shown = fb_shape_to_display (&s);
  g_assert_cmpstr (shown, ==, "?");
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
  g_test_add_func ("/shape/display", test_display);
  g_test_add_func ("/shape/broadcast", test_broadcast);
  g_test_add_func ("/shape/numel-overflow", test_numel_overflow);
  g_test_add_func ("/shape/axis", test_axis);
  return g_test_run ();
}
