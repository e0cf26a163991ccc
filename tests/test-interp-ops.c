/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The interpreter's elementwise, reduction, matrix, movement and shape operators, one node at a
 * time, with expected values written out by hand (or from libm for transcendental functions). */
#include "fb-test-interp.h"

#include <math.h>

static void
test_unary_float (void)
{
  FbGraph *g = ti_graph (17);
  static const struct { FbOpKind op; double (*f) (double); } libm[] = {
    { FB_OP_EXP, exp }, { FB_OP_LOG, log }, { FB_OP_SQRT, sqrt }, { FB_OP_TANH, tanh },
    { FB_OP_SIN, sin }, { FB_OP_COS, cos }, { FB_OP_ERF, erf }, { FB_OP_CEIL, ceil },
    { FB_OP_FLOOR, floor }, { FB_OP_ABS, fabs },
  };
  FbTensor *x = ti_f32 (1, D (4), V (0.25, 1.5, 2.0, 3.75));

  for (guint i = 0; i < G_N_ELEMENTS (libm); i++)
    {
      FbTensor *y = ti_run1 (ti_node (g, libm[i].op, 1, 1), TI_IN (x));
      double want[4];
      for (int k = 0; k < 4; k++)
        want[k] = (float) libm[i].f (fb_tensor_get_f64 (x, k));
      ti_assert (y, FB_DTYPE_FLOAT32, 1, D (4), want, 1e-6);
    }
  x = ti_f32 (1, D (5), V (-2, -0.5, 0, 0.5, 2));
  ti_assert (ti_run1 (ti_node (g, FB_OP_RELU, 1, 1), TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (5),
             V (0, 0, 0, 0.5, 2), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_NEG, 1, 1), TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (5),
             V (2, 0.5, 0, -0.5, -2), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_SIGN, 1, 1), TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (5),
             V (-1, -1, 0, 1, 1), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_SIGMOID, 1, 1), TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (5),
             V (0.11920292, 0.37754067, 0.5, 0.62245933, 0.88079708), 1e-7);
  ti_assert (ti_run1 (ti_node (g, FB_OP_SOFTSIGN, 1, 1), TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (5),
             V (-2.0 / 3, -1.0 / 3, 0, 1.0 / 3, 2.0 / 3), 1e-7);
  ti_assert (ti_run1 (ti_node (g, FB_OP_SOFTPLUS, 1, 1), TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (5),
             V (0.12692801, 0.47407698, 0.69314718, 0.97407698, 2.12692801), 1e-6);
  ti_assert (ti_run1 (ti_node (g, FB_OP_HARD_SWISH, 1, 1), TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (5),
             V (-2 * (1.0 / 6), -0.5 * (-0.5 / 6 + 0.5), 0, 0.5 * (0.5 / 6 + 0.5), 2 * (2.0 / 6 + 0.5)),
             1e-7);
  ti_assert (ti_run1 (ti_node (g, FB_OP_RECIPROCAL, 1, 1), TI_IN (x)), FB_DTYPE_FLOAT32, 1,
             D (5), V (-0.5, -2, INFINITY, 2, 0.5), 0);
  /* Swish: x * sigmoid (x), and with alpha 2 x * sigmoid (2 x). */
  ti_assert (ti_run1 (ti_node (g, FB_OP_SWISH, 1, 1), TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (5),
             V (-2 * 0.11920292, -0.5 * 0.37754067, 0, 0.5 * 0.62245933, 2 * 0.88079708), 1e-7);
  FbNode *swish2 = ti_node (g, FB_OP_SWISH, 1, 1);
  FbAttr two = { .name = "alpha", .type = FB_ATTR_FLOAT, .f = 2.0f };
  fb_node_set_attr (g, swish2, &two);
  ti_assert (ti_run1 (swish2, TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (5),
             V (-2 * 0.01798621, -0.5 * 0.26894142, 0, 0.5 * 0.73105858, 2 * 0.98201379), 1e-7);

  /* Round is half to even. */
  x = ti_f32 (1, D (6), V (0.5, 1.5, 2.5, -0.5, -1.5, 2.4));
  ti_assert (ti_run1 (ti_node (g, FB_OP_ROUND, 1, 1), TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (6),
             V (0, 2, 2, 0, -2, 2), 0);
  x = ti_f32 (1, D (3), V (NAN, 1, INFINITY));
  ti_assert (ti_run1 (ti_node (g, FB_OP_IS_NAN, 1, 1), TI_IN (x)), FB_DTYPE_BOOL, 1, D (3),
             V (1, 0, 0), 0);
  ti_done ();
}

static void
test_unary_attributes (void)
{
  FbGraph *g = ti_graph (20);
  FbTensor *x = ti_f32 (1, D (3), V (-1, 0, 2));
  FbNode *n;

  n = ti_node (g, FB_OP_LEAKY_RELU, 1, 1);
  ti_attr_float (g, n, "alpha", 0.5f);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (3), V (-0.5, 0, 2), 0);
  n = ti_node (g, FB_OP_LEAKY_RELU, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (3), V (-0.01, 0, 2), 1e-8);
  n = ti_node (g, FB_OP_ELU, 1, 1);
  ti_attr_float (g, n, "alpha", 2.0f);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (3), V (2 * (exp (-1) - 1), 0, 2), 1e-7);
  n = ti_node (g, FB_OP_SELU, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (3),
             V (1.0507009873554805 * 1.6732632423543772 * (exp (-1) - 1), 0, 2 * 1.0507009873554805),
             1e-6);
  n = ti_node (g, FB_OP_HARD_SIGMOID, 1, 1);
  ti_attr_float (g, n, "alpha", 0.5f);
  ti_attr_float (g, n, "beta", 0.25f);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (3), V (0, 0.25, 1), 0);
  n = ti_node (g, FB_OP_GELU, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (3),
             V (-0.15865525, 0, 1.95449974), 1e-6);
  n = ti_node (g, FB_OP_GELU, 1, 1);
  ti_attr_string (g, n, "approximate", "tanh");
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (3),
             V (-0.15880801, 0, 1.95459769), 1e-6);
  n = ti_node (g, FB_OP_GELU, 1, 1);
  ti_attr_string (g, n, "approximate", "cubic");
  g_assert_false (fb_interp_supports (n));
  ti_run_fails (n, TI_IN (x), FB_INTERP_ERROR_UNSUPPORTED);
  ti_done ();
}

static void
test_unary_dtypes (void)
{
  FbGraph *g = ti_graph (17);
  FbTensor *i32 = ti_tensor (FB_DTYPE_INT32, 1, D (3), V (-2147483648.0, -5, 7));
  FbTensor *i8 = ti_tensor (FB_DTYPE_INT8, 1, D (3), V (-128, -1, 3));
  FbTensor *h = ti_tensor (FB_DTYPE_FLOAT16, 1, D (3), V (-1.5, 0.25, 3));
  FbTensor *f64 = ti_tensor (FB_DTYPE_FLOAT64, 1, D (2), V (1e-300, 2));
  FbTensor *b = ti_tensor (FB_DTYPE_BOOL, 1, D (2), V (0, 1));

  /* The most negative integer wraps instead of being undefined. */
  ti_assert (ti_run1 (ti_node (g, FB_OP_ABS, 1, 1), TI_IN (i32)), FB_DTYPE_INT32, 1, D (3),
             V (-2147483648.0, 5, 7), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_NEG, 1, 1), TI_IN (i8)), FB_DTYPE_INT8, 1, D (3),
             V (-128, 1, -3), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_RELU, 1, 1), TI_IN (i8)), FB_DTYPE_INT8, 1, D (3),
             V (0, 0, 3), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_RELU, 1, 1), TI_IN (h)), FB_DTYPE_FLOAT16, 1, D (3),
             V (0, 0.25, 3), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_SQRT, 1, 1), TI_IN (f64)), FB_DTYPE_FLOAT64, 1, D (2),
             V (1e-150, M_SQRT2), 1e-160);
  ti_assert (ti_run1 (ti_node (g, FB_OP_NOT, 1, 1), TI_IN (b)), FB_DTYPE_BOOL, 1, D (2), V (1, 0), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_IDENTITY, 1, 1), TI_IN (i8)), FB_DTYPE_INT8, 1, D (3),
             V (-128, -1, 3), 0);
  /* Operators of floating point refuse integers, and Not refuses numbers. */
  ti_run_fails (ti_node (g, FB_OP_EXP, 1, 1), TI_IN (i32), FB_INTERP_ERROR_UNSUPPORTED);
  ti_run_fails (ti_node (g, FB_OP_NOT, 1, 1), TI_IN (i8), FB_INTERP_ERROR_UNSUPPORTED);
  ti_done ();
}

static void
test_cast (void)
{
  FbGraph *g = ti_graph (13);
  FbTensor *f = ti_f32 (1, D (4), V (-1.7, 0, 2.9, 300));
  FbTensor *big = ti_i64 (1, D (2), (const int64_t[]) { G_GINT64_CONSTANT (9007199254740993), -3 });
  struct { FbDType to; double want[4]; } cases[] = {
    { FB_DTYPE_INT32, { -1, 0, 2, 300 } },
    { FB_DTYPE_UINT8, { 255, 0, 2, 44 } },
    { FB_DTYPE_BOOL, { 1, 0, 1, 1 } },
    { FB_DTYPE_FLOAT16, { -1.7001953125, 0, 2.900390625, 300 } },
    { FB_DTYPE_FLOAT64, { -1.7000000476837158, 0, 2.9000000953674316, 300 } },
  };
  FbNode *n;
  FbTensor *y;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      n = ti_node (g, FB_OP_CAST, 1, 1);
      ti_attr_int (g, n, "to", cases[i].to);
      ti_assert (ti_run1 (n, TI_IN (f)), cases[i].to, 1, D (4), cases[i].want, 1e-12);
    }
  /* Integer to integer keeps int64 exact; narrowing wraps. */
  n = ti_node (g, FB_OP_CAST, 1, 1);
  ti_attr_int (g, n, "to", FB_DTYPE_INT64);
  y = ti_run1 (n, TI_IN (ti_tensor (FB_DTYPE_INT32, 1, D (1), V (-7))));
  g_assert_cmpint (fb_tensor_get_i64 (y, 0), ==, -7);
  n = ti_node (g, FB_OP_CAST, 1, 1);
  ti_attr_int (g, n, "to", FB_DTYPE_INT8);
  ti_assert (ti_run1 (n, TI_IN (big)), FB_DTYPE_INT8, 1, D (2), V (1, -3), 0);
  n = ti_node (g, FB_OP_CAST, 1, 1);
  ti_attr_int (g, n, "to", FB_DTYPE_STRING);
  ti_run_fails (n, TI_IN (f), FB_INTERP_ERROR_UNSUPPORTED);
  ti_done ();
}

static void
test_clip (void)
{
  FbGraph *g6 = ti_graph (6), *g13 = ti_graph (13);
  FbTensor *x = ti_f32 (1, D (4), V (-3, -1, 1, 3));
  FbNode *n;

  n = ti_node (g6, FB_OP_CLIP, 1, 1);
  ti_attr_float (g6, n, "min", -2);
  ti_attr_float (g6, n, "max", 2);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (4), V (-2, -1, 1, 2), 0);
  n = ti_node (g13, FB_OP_CLIP, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ti_f32 (0, NULL, V (0)), NULL)), FB_DTYPE_FLOAT32, 1, D (4),
             V (0, 0, 1, 3), 0);
  /* min above max: everything becomes max. */
  n = ti_node (g13, FB_OP_CLIP, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ti_f32 (0, NULL, V (2)), ti_f32 (0, NULL, V (1)))),
             FB_DTYPE_FLOAT32, 1, D (4), V (1, 1, 1, 1), 0);
  n = ti_node (g13, FB_OP_CLIP, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_tensor (FB_DTYPE_INT32, 1, D (3), V (-9, 4, 9)),
                                ti_tensor (FB_DTYPE_INT32, 0, NULL, V (-5)),
                                ti_tensor (FB_DTYPE_INT32, 0, NULL, V (5)))),
             FB_DTYPE_INT32, 1, D (3), V (-5, 4, 5), 0);
  n = ti_node (g13, FB_OP_CLIP, 2, 1);
  ti_run_fails (n, TI_IN (x, ti_f32 (1, D (2), V (0, 1))), FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_binary_broadcast (void)
{
  FbGraph *g = ti_graph (17);
  FbTensor *a = ti_f32 (2, D (2, 3), V (1, 2, 3, 4, 5, 6));
  FbTensor *row = ti_f32 (1, D (3), V (10, 20, 30));
  FbTensor *col = ti_f32 (2, D (2, 1), V (1, 2));

  ti_assert (ti_run1 (ti_node (g, FB_OP_ADD, 2, 1), TI_IN (a, row)), FB_DTYPE_FLOAT32, 2, D (2, 3),
             V (11, 22, 33, 14, 25, 36), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_SUB, 2, 1), TI_IN (row, col)), FB_DTYPE_FLOAT32, 2,
             D (2, 3), V (9, 19, 29, 8, 18, 28), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_MUL, 2, 1), TI_IN (a, col)), FB_DTYPE_FLOAT32, 2, D (2, 3),
             V (1, 2, 3, 8, 10, 12), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_DIV, 2, 1), TI_IN (a, ti_f32 (0, NULL, V (2)))),
             FB_DTYPE_FLOAT32, 2, D (2, 3), V (0.5, 1, 1.5, 2, 2.5, 3), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_POW, 2, 1), TI_IN (a, ti_tensor (FB_DTYPE_INT64, 0, NULL, V (2)))),
             FB_DTYPE_FLOAT32, 2, D (2, 3), V (1, 4, 9, 16, 25, 36), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_PRELU, 2, 1),
                      TI_IN (ti_f32 (2, D (2, 2), V (-1, 1, -2, 2)), ti_f32 (2, D (2, 1), V (0.5, 0.25)))),
             FB_DTYPE_FLOAT32, 2, D (2, 2), V (-0.5, 1, -0.5, 2), 0);
  ti_run_fails (ti_node (g, FB_OP_ADD, 2, 1), TI_IN (a, ti_f32 (1, D (2), V (1, 2))),
                FB_INTERP_ERROR_RUNTIME);
  ti_run_fails (ti_node (g, FB_OP_ADD, 2, 1),
                TI_IN (a, ti_tensor (FB_DTYPE_INT64, 1, D (3), V (1, 2, 3))),
                FB_INTERP_ERROR_RUNTIME);
  /* A broadcast far larger than memory is an error, not an abort. */
  ti_run_fails (ti_node (g, FB_OP_MUL, 2, 1),
                TI_IN (ti_f32 (2, D (1 << 20, 1), NULL), ti_f32 (2, D (1, 1 << 20), NULL)),
                FB_INTERP_ERROR_RUNTIME);
  ti_run_fails (ti_node (g, FB_OP_MATMUL, 2, 1),
                TI_IN (ti_f32 (2, D (1 << 20, 1), NULL), ti_f32 (2, D (1, 1 << 20), NULL)),
                FB_INTERP_ERROR_RUNTIME);
  /* Empty tensors broadcast to empty results. */
  ti_assert (ti_run1 (ti_node (g, FB_OP_ADD, 2, 1), TI_IN (ti_f32 (2, D (0, 3), NULL), row)),
             FB_DTYPE_FLOAT32, 2, D (0, 3), NULL, 0);
  ti_done ();
}

static void
test_binary_integers (void)
{
  FbGraph *g = ti_graph (17);
  FbTensor *a = ti_tensor (FB_DTYPE_INT32, 1, D (4), V (-7, 7, -7, 2147483647));
  FbTensor *b = ti_tensor (FB_DTYPE_INT32, 1, D (4), V (2, -2, 3, 1));
  FbTensor *big = ti_i64 (1, D (2), (const int64_t[]) { G_GINT64_CONSTANT (1) << 60, 5 });
  FbTensor *big1 = ti_i64 (1, D (2), (const int64_t[]) { (G_GINT64_CONSTANT (1) << 60) + 1, 5 });
  FbNode *n;

  /* Division truncates toward zero; addition wraps at the type's width. */
  ti_assert (ti_run1 (ti_node (g, FB_OP_DIV, 2, 1), TI_IN (a, b)), FB_DTYPE_INT32, 1, D (4),
             V (-3, -3, -2, 2147483647), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_ADD, 2, 1), TI_IN (a, b)), FB_DTYPE_INT32, 1, D (4),
             V (-5, 5, -4, -2147483648.0), 0);
  /* Mod takes the divisor's sign; with fmod=1 the dividend's. */
  ti_assert (ti_run1 (ti_node (g, FB_OP_MOD, 2, 1), TI_IN (a, b)), FB_DTYPE_INT32, 1, D (4),
             V (1, -1, 2, 0), 0);
  n = ti_node (g, FB_OP_MOD, 2, 1);
  ti_attr_int (g, n, "fmod", 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (1, D (2), V (-7, 7)), ti_f32 (1, D (2), V (3, -3)))),
             FB_DTYPE_FLOAT32, 1, D (2), V (-1, 1), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_MOD, 2, 1),
                      TI_IN (ti_f32 (1, D (2), V (-7, 7)), ti_f32 (1, D (2), V (3, -3)))),
             FB_DTYPE_FLOAT32, 1, D (2), V (2, -2), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_POW, 2, 1), TI_IN (b, ti_tensor (FB_DTYPE_INT32, 0, NULL, V (3)))),
             FB_DTYPE_INT32, 1, D (4), V (8, -8, 27, 1), 0);
  /* Comparisons of int64 are exact past 2^53. */
  ti_assert (ti_run1 (ti_node (g, FB_OP_GREATER, 2, 1), TI_IN (big1, big)), FB_DTYPE_BOOL, 1, D (2),
             V (1, 0), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_EQUAL, 2, 1), TI_IN (big1, big)), FB_DTYPE_BOOL, 1, D (2),
             V (0, 1), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_LESS_OR_EQUAL, 2, 1), TI_IN (a, b)), FB_DTYPE_BOOL, 1,
             D (4), V (1, 0, 1, 0), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_GREATER_OR_EQUAL, 2, 1), TI_IN (a, b)), FB_DTYPE_BOOL, 1,
             D (4), V (0, 1, 0, 1), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_LESS, 2, 1), TI_IN (a, b)), FB_DTYPE_BOOL, 1, D (4),
             V (1, 0, 1, 0), 0);
  /* Integer division by zero is an error, not a crash. */
  ti_run_fails (ti_node (g, FB_OP_DIV, 2, 1), TI_IN (a, ti_tensor (FB_DTYPE_INT32, 0, NULL, V (0))),
                FB_INTERP_ERROR_RUNTIME);
  ti_run_fails (ti_node (g, FB_OP_MOD, 2, 1), TI_IN (a, ti_tensor (FB_DTYPE_INT32, 0, NULL, V (0))),
                FB_INTERP_ERROR_RUNTIME);
  ti_assert (ti_run1 (ti_node (g, FB_OP_DIV, 2, 1),
                      TI_IN (ti_i64 (1, D (1), (const int64_t[]) { G_MININT64 }),
                             ti_i64 (1, D (1), (const int64_t[]) { -1 }))),
             FB_DTYPE_INT64, 1, D (1), NULL, 0);
  ti_done ();
}

static void
test_logical (void)
{
  FbGraph *g = ti_graph (17);
  FbTensor *p = ti_tensor (FB_DTYPE_BOOL, 1, D (4), V (0, 0, 1, 1));
  FbTensor *q = ti_tensor (FB_DTYPE_BOOL, 1, D (4), V (0, 1, 0, 1));

  ti_assert (ti_run1 (ti_node (g, FB_OP_AND, 2, 1), TI_IN (p, q)), FB_DTYPE_BOOL, 1, D (4),
             V (0, 0, 0, 1), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_OR, 2, 1), TI_IN (p, q)), FB_DTYPE_BOOL, 1, D (4),
             V (0, 1, 1, 1), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_XOR, 2, 1), TI_IN (p, q)), FB_DTYPE_BOOL, 1, D (4),
             V (0, 1, 1, 0), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_EQUAL, 2, 1), TI_IN (p, q)), FB_DTYPE_BOOL, 1, D (4),
             V (1, 0, 0, 1), 0);
  ti_run_fails (ti_node (g, FB_OP_AND, 2, 1), TI_IN (p, ti_f32 (1, D (4), NULL)),
                FB_INTERP_ERROR_UNSUPPORTED);
  ti_assert (ti_run1 (ti_node (g, FB_OP_WHERE, 3, 1),
                      TI_IN (ti_tensor (FB_DTYPE_BOOL, 2, D (2, 1), V (1, 0)),
                             ti_i64 (1, D (2), (const int64_t[]) { G_MAXINT64, 2 }),
                             ti_i64 (0, NULL, (const int64_t[]) { -1 }))),
             FB_DTYPE_INT64, 2, D (2, 2), NULL, 0);
  {
    FbTensor *w = ti_run1 (ti_node (g, FB_OP_WHERE, 3, 1),
                           TI_IN (ti_tensor (FB_DTYPE_BOOL, 2, D (2, 1), V (1, 0)),
                                  ti_i64 (1, D (2), (const int64_t[]) { G_MAXINT64, 2 }),
                                  ti_i64 (0, NULL, (const int64_t[]) { -1 })));
    g_assert_cmpint (fb_tensor_get_i64 (w, 0), ==, G_MAXINT64);
    g_assert_cmpint (fb_tensor_get_i64 (w, 1), ==, 2);
    g_assert_cmpint (fb_tensor_get_i64 (w, 2), ==, -1);
    g_assert_cmpint (fb_tensor_get_i64 (w, 3), ==, -1);
  }
  ti_run_fails (ti_node (g, FB_OP_WHERE, 3, 1),
                TI_IN (ti_f32 (1, D (2), NULL), ti_f32 (1, D (2), NULL), ti_f32 (1, D (2), NULL)),
                FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_variadic (void)
{
  FbGraph *g = ti_graph (13);
  FbTensor *a = ti_f32 (2, D (2, 2), V (1, 5, 3, 7));
  FbTensor *b = ti_f32 (1, D (2), V (4, 2));
  FbTensor *c = ti_f32 (0, NULL, V (3));

  ti_assert (ti_run1 (ti_node (g, FB_OP_MAX, 3, 1), TI_IN (a, b, c)), FB_DTYPE_FLOAT32, 2, D (2, 2),
             V (4, 5, 4, 7), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_MIN, 3, 1), TI_IN (a, b, c)), FB_DTYPE_FLOAT32, 2, D (2, 2),
             V (1, 2, 3, 2), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_SUM, 3, 1), TI_IN (a, b, c)), FB_DTYPE_FLOAT32, 2, D (2, 2),
             V (8, 10, 10, 12), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_MEAN, 3, 1), TI_IN (a, b, c)), FB_DTYPE_FLOAT32, 2,
             D (2, 2), V (8 / 3.0, 10 / 3.0, 10 / 3.0, 4), 1e-6);
  ti_assert (ti_run1 (ti_node (g, FB_OP_MAX, 1, 1), TI_IN (a)), FB_DTYPE_FLOAT32, 2, D (2, 2),
             V (1, 5, 3, 7), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_MAX, 2, 1),
                      TI_IN (ti_tensor (FB_DTYPE_UINT8, 1, D (2), V (200, 3)),
                             ti_tensor (FB_DTYPE_UINT8, 1, D (2), V (100, 250)))),
             FB_DTYPE_UINT8, 1, D (2), V (200, 250), 0);
  ti_run_fails (ti_node (g, FB_OP_MEAN, 2, 1),
                TI_IN (ti_tensor (FB_DTYPE_INT32, 1, D (2), NULL), ti_tensor (FB_DTYPE_INT32, 1, D (2), NULL)),
                FB_INTERP_ERROR_UNSUPPORTED);
  ti_done ();
}

static void
test_reductions (void)
{
  FbGraph *g13 = ti_graph (13), *g17 = ti_graph (17), *g18 = ti_graph (18);
  FbTensor *x = ti_f32 (3, D (2, 2, 3), V (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
  FbTensor *axis1 = ti_i64 (1, D (1), (const int64_t[]) { 1 });
  FbTensor *none = ti_i64 (1, D (0), NULL);
  FbNode *n;

  n = ti_node (g13, FB_OP_REDUCE_SUM, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, axis1)), FB_DTYPE_FLOAT32, 3, D (2, 1, 3),
             V (5, 7, 9, 17, 19, 21), 0);
  n = ti_node (g13, FB_OP_REDUCE_SUM, 2, 1);
  ti_attr_int (g13, n, "keepdims", 0);
  ti_assert (ti_run1 (n, TI_IN (x, ti_i64 (1, D (2), (const int64_t[]) { 0, -1 }))),
             FB_DTYPE_FLOAT32, 1, D (2), V (30, 48), 0);
  /* Empty axes reduce everything, unless noop_with_empty_axes. */
  n = ti_node (g13, FB_OP_REDUCE_SUM, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, none)), FB_DTYPE_FLOAT32, 3, D (1, 1, 1), V (78), 0);
  n = ti_node (g13, FB_OP_REDUCE_SUM, 2, 1);
  ti_attr_int (g13, n, "noop_with_empty_axes", 1);
  ti_assert (ti_run1 (n, TI_IN (x, none)), FB_DTYPE_FLOAT32, 3, D (2, 2, 3), NULL, 0);
  /* Before opset 18 the other reductions take axes as an attribute. */
  n = ti_node (g17, FB_OP_REDUCE_MEAN, 1, 1);
  ti_attr_ints (g17, n, "axes", 1, D (2));
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 3, D (2, 2, 1), V (2, 5, 8, 11), 1e-6);
  n = ti_node (g18, FB_OP_REDUCE_MAX, 2, 1);
  ti_attr_int (g18, n, "keepdims", 0);
  ti_assert (ti_run1 (n, TI_IN (x, axis1)), FB_DTYPE_FLOAT32, 2, D (2, 3), V (4, 5, 6, 10, 11, 12), 0);
  n = ti_node (g17, FB_OP_REDUCE_MIN, 1, 1);
  ti_attr_ints (g17, n, "axes", 1, D (0));
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 3, D (1, 2, 3), V (1, 2, 3, 4, 5, 6), 0);
  n = ti_node (g17, FB_OP_REDUCE_PROD, 1, 1);
  ti_attr_ints (g17, n, "axes", 1, D (2));
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 3, D (2, 2, 1), V (6, 120, 504, 1320), 0);
  n = ti_node (g17, FB_OP_REDUCE_L2, 1, 1);
  ti_attr_ints (g17, n, "axes", 1, D (2));
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 3, D (2, 2, 1),
             V (sqrt (14), sqrt (77), sqrt (194), sqrt (365)), 1e-5);
  /* Integers reduce exactly in int64. */
  n = ti_node (g18, FB_OP_REDUCE_MAX, 1, 1);
  ti_attr_int (g18, n, "keepdims", 0);
  g_assert_cmpint (fb_tensor_get_i64 (ti_run1 (n, TI_IN (ti_i64 (1, D (2), (const int64_t[]) {
                                        G_MAXINT64 - 1, G_MAXINT64 }))), 0), ==, G_MAXINT64);
  n = ti_node (g13, FB_OP_REDUCE_SUM, 2, 1);
  ti_run_fails (n, TI_IN (x, ti_i64 (1, D (2), (const int64_t[]) { 1, -2 })), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g13, FB_OP_REDUCE_SUM, 2, 1);
  ti_run_fails (n, TI_IN (x, ti_i64 (1, D (1), (const int64_t[]) { 3 })), FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_argmax_topk_cumsum (void)
{
  FbGraph *g = ti_graph (13);
  FbTensor *x = ti_f32 (2, D (2, 4), V (3, 1, 3, 2, 0, 5, 5, -1));
  FbTensor **out;
  FbNode *n;

  n = ti_node (g, FB_OP_ARGMAX, 1, 1);
  ti_attr_int (g, n, "axis", 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_INT64, 2, D (2, 1), V (0, 1), 0);
  n = ti_node (g, FB_OP_ARGMAX, 1, 1);
  ti_attr_int (g, n, "axis", -1);
  ti_attr_int (g, n, "keepdims", 0);
  ti_attr_int (g, n, "select_last_index", 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_INT64, 1, D (2), V (2, 2), 0);

  /* Ties keep the lower index first. */
  n = ti_node (g, FB_OP_TOPK, 2, 2);
  out = ti_run (n, TI_IN (x, ti_i64 (1, D (1), (const int64_t[]) { 3 })));
  ti_assert (out[0], FB_DTYPE_FLOAT32, 2, D (2, 3), V (3, 3, 2, 5, 5, 0), 0);
  ti_assert (out[1], FB_DTYPE_INT64, 2, D (2, 3), V (0, 2, 3, 1, 2, 0), 0);
  g_free (out);
  n = ti_node (g, FB_OP_TOPK, 2, 2);
  ti_attr_int (g, n, "largest", 0);
  ti_attr_int (g, n, "axis", 0);
  out = ti_run (n, TI_IN (x, ti_i64 (1, D (1), (const int64_t[]) { 1 })));
  ti_assert (out[0], FB_DTYPE_FLOAT32, 2, D (1, 4), V (0, 1, 3, -1), 0);
  ti_assert (out[1], FB_DTYPE_INT64, 2, D (1, 4), V (1, 0, 0, 1), 0);
  g_free (out);
  n = ti_node (g, FB_OP_TOPK, 2, 2);
  ti_run_fails (n, TI_IN (x, ti_i64 (1, D (1), (const int64_t[]) { 5 })), FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g, FB_OP_CUMSUM, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ti_i64 (0, NULL, (const int64_t[]) { 1 }))), FB_DTYPE_FLOAT32,
             2, D (2, 4), V (3, 4, 7, 9, 0, 5, 10, 9), 0);
  n = ti_node (g, FB_OP_CUMSUM, 2, 1);
  ti_attr_int (g, n, "exclusive", 1);
  ti_attr_int (g, n, "reverse", 1);
  ti_assert (ti_run1 (n, TI_IN (ti_tensor (FB_DTYPE_INT32, 1, D (4), V (1, 2, 3, 4)),
                                ti_i64 (0, NULL, (const int64_t[]) { 0 }))),
             FB_DTYPE_INT32, 1, D (4), V (9, 7, 4, 0), 0);
  ti_done ();
}

static void
test_softmax (void)
{
  FbGraph *g11 = ti_graph (11), *g13 = ti_graph (13);
  FbTensor *x = ti_f32 (2, D (2, 2), V (0, 1, 1000, 1000));
  double e = 1 / (1 + exp (1));
  FbNode *n;

  n = ti_node (g13, FB_OP_SOFTMAX, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 2, D (2, 2), V (e, 1 - e, 0.5, 0.5), 1e-7);
  n = ti_node (g13, FB_OP_SOFTMAX, 1, 1);
  ti_attr_int (g13, n, "axis", 0);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 2, D (2, 2), V (0, 0, 1, 1), 1e-7);
  n = ti_node (g13, FB_OP_LOG_SOFTMAX, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 2, D (2, 2),
             V (log (e), log (1 - e), -M_LN2, -M_LN2), 1e-6);
  /* Before opset 13 the input is flattened into 2-D at axis (default 1). */
  n = ti_node (g11, FB_OP_SOFTMAX, 1, 1);
  ti_attr_int (g11, n, "axis", 0);
  {
    FbTensor *y = ti_run1 (n, TI_IN (ti_f32 (2, D (2, 2), V (0, 0, 0, 0))));
    ti_assert (y, FB_DTYPE_FLOAT32, 2, D (2, 2), V (0.25, 0.25, 0.25, 0.25), 1e-7);
  }
  ti_done ();
}

static void
test_matmul (void)
{
  FbGraph *g = ti_graph (13);
  FbTensor *a = ti_f32 (2, D (2, 3), V (1, 2, 3, 4, 5, 6));
  FbTensor *b = ti_f32 (2, D (3, 2), V (7, 8, 9, 10, 11, 12));
  FbTensor *v = ti_f32 (1, D (3), V (1, 0, -1));
  FbTensor *batched = ti_f32 (3, D (2, 1, 3), V (1, 0, 0, 0, 1, 0));
  FbNode *n;

  ti_assert (ti_run1 (ti_node (g, FB_OP_MATMUL, 2, 1), TI_IN (a, b)), FB_DTYPE_FLOAT32, 2, D (2, 2),
             V (58, 64, 139, 154), 0);
  /* numpy's 1-D promotion on either side. */
  ti_assert (ti_run1 (ti_node (g, FB_OP_MATMUL, 2, 1), TI_IN (a, v)), FB_DTYPE_FLOAT32, 1, D (2),
             V (-2, -2), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_MATMUL, 2, 1), TI_IN (v, b)), FB_DTYPE_FLOAT32, 1, D (2),
             V (-4, -4), 0);
  /* Batch axes broadcast: [2,1,3] x [3,2] -> [2,1,2]. */
  ti_assert (ti_run1 (ti_node (g, FB_OP_MATMUL, 2, 1), TI_IN (batched, b)), FB_DTYPE_FLOAT32, 3,
             D (2, 1, 2), V (7, 8, 9, 10), 0);
  ti_assert (ti_run1 (ti_node (g, FB_OP_MATMUL, 2, 1),
                      TI_IN (ti_tensor (FB_DTYPE_INT32, 2, D (1, 2), V (100000, 3)),
                             ti_tensor (FB_DTYPE_INT32, 2, D (2, 1), V (100000, 4)))),
             FB_DTYPE_INT32, 2, D (1, 1), V (1410065420), 0);
  ti_run_fails (ti_node (g, FB_OP_MATMUL, 2, 1), TI_IN (a, a), FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g, FB_OP_GEMM, 3, 1);
  ti_attr_int (g, n, "transA", 1);
  ti_attr_float (g, n, "alpha", 2);
  ti_attr_float (g, n, "beta", 0.5f);
  /* 2 * a^T a + 0.5 * C, with C broadcast along the rows. */
  ti_assert (ti_run1 (n, TI_IN (a, a, ti_f32 (1, D (3), V (2, 4, 6)))), FB_DTYPE_FLOAT32, 2,
             D (3, 3), V (2 * 17 + 1, 2 * 22 + 2, 2 * 27 + 3, 2 * 22 + 1, 2 * 29 + 2, 2 * 36 + 3,
                          2 * 27 + 1, 2 * 36 + 2, 2 * 45 + 3), 0);
  n = ti_node (g, FB_OP_GEMM, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (a, b)), FB_DTYPE_FLOAT32, 2, D (2, 2), V (58, 64, 139, 154), 0);
  n = ti_node (g, FB_OP_GEMM, 3, 1);
  ti_run_fails (n, TI_IN (a, b, ti_f32 (1, D (3), NULL)), FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_einsum (void)
{
  FbGraph *g = ti_graph (12);
  FbTensor *a = ti_random (3, D (2, 3, 4), 1);
  FbTensor *b = ti_random (3, D (2, 4, 5), 2);
  FbNode *mm = ti_node (g, FB_OP_MATMUL, 2, 1);
  FbTensor *want = ti_run1 (mm, TI_IN (a, b));
  static const char *same_as_matmul[] = {
    "bij,bjk->bik", "...ij,...jk->...ik", "...ij,...jk", "zij,zjk->zik",
  };
  FbNode *n;

  for (guint i = 0; i < G_N_ELEMENTS (same_as_matmul); i++)
    {
      n = ti_node (g, FB_OP_EINSUM, 2, 1);
      ti_attr_string (g, n, "equation", same_as_matmul[i]);
      g_assert_true (fb_interp_supports (n));
      ti_assert_close (ti_run1 (n, TI_IN (a, b)), want, 1e-6);
    }
  /* Transposed output: "bij,bjk->bki". */
  n = ti_node (g, FB_OP_EINSUM, 2, 1);
  ti_attr_string (g, n, "equation", "bij,bjk->bki");
  {
    FbTensor *y = ti_run1 (n, TI_IN (a, b));
    g_assert_cmpint (y->dims[1], ==, 5);
    g_assert_cmpfloat_with_epsilon (fb_tensor_get_f64 (y, 1 * 5 * 3 + 2 * 3 + 1),
                                    fb_tensor_get_f64 (want, 1 * 3 * 5 + 1 * 5 + 2), 1e-6);
  }
  n = ti_node (g, FB_OP_EINSUM, 1, 1);
  ti_attr_string (g, n, "equation", "ij->ji");
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (2, D (2, 3), V (1, 2, 3, 4, 5, 6)))), FB_DTYPE_FLOAT32, 2,
             D (3, 2), V (1, 4, 2, 5, 3, 6), 0);
  n = ti_node (g, FB_OP_EINSUM, 2, 1);
  ti_attr_string (g, n, "equation", "i,i->");
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (1, D (3), V (1, 2, 3)), ti_f32 (1, D (3), V (4, 5, 6)))),
             FB_DTYPE_FLOAT32, 0, NULL, V (32), 0);
  n = ti_node (g, FB_OP_EINSUM, 2, 1);
  ti_attr_string (g, n, "equation", "ij,kj->ik");
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (2, D (1, 2), V (1, 2)), ti_f32 (2, D (2, 2), V (1, 1, 2, 0)))),
             FB_DTYPE_FLOAT32, 2, D (1, 2), V (3, 2), 0);
  /* A diagonal: a label repeated within an operand. */
  n = ti_node (g, FB_OP_EINSUM, 1, 1);
  ti_attr_string (g, n, "equation", "ii->i");
  g_assert_true (fb_interp_supports (n));
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (2, D (2, 2), V (1, 2, 3, 4)))), FB_DTYPE_FLOAT32, 1, D (2),
             V (1, 4), 0);
  n = ti_node (g, FB_OP_EINSUM, 2, 1);
  ti_attr_string (g, n, "equation", "...abcd,efgh->...abcdefgh");
  ti_run_fails (n, TI_IN (ti_f32 (8, D (1, 1, 1, 1, 1, 1, 1, 1), NULL), ti_f32 (4, D (1, 1, 1, 1), NULL)),
                FB_INTERP_ERROR_UNSUPPORTED);
  n = ti_node (g, FB_OP_EINSUM, 3, 1);
  ti_attr_string (g, n, "equation", "i,i,i->i");
  ti_run_fails (n, TI_IN (a, a, a), FB_INTERP_ERROR_UNSUPPORTED);
  n = ti_node (g, FB_OP_EINSUM, 2, 1);
  ti_attr_string (g, n, "equation", "ij,jk->ik");
  ti_run_fails (n, TI_IN (ti_f32 (2, D (2, 3), NULL), ti_f32 (2, D (2, 3), NULL)),
                FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/interp/unary/float", test_unary_float);
  g_test_add_func ("/interp/unary/attributes", test_unary_attributes);
  g_test_add_func ("/interp/unary/dtypes", test_unary_dtypes);
  g_test_add_func ("/interp/unary/cast", test_cast);
  g_test_add_func ("/interp/unary/clip", test_clip);
  g_test_add_func ("/interp/binary/broadcast", test_binary_broadcast);
  g_test_add_func ("/interp/binary/integers", test_binary_integers);
  g_test_add_func ("/interp/binary/logical", test_logical);
  g_test_add_func ("/interp/binary/variadic", test_variadic);
  g_test_add_func ("/interp/reduce/reductions", test_reductions);
  g_test_add_func ("/interp/reduce/argmax-topk-cumsum", test_argmax_topk_cumsum);
  g_test_add_func ("/interp/reduce/softmax", test_softmax);
  g_test_add_func ("/interp/matmul/matmul-gemm", test_matmul);
  g_test_add_func ("/interp/matmul/einsum", test_einsum);
  return g_test_run ();
}
