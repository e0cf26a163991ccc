/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The operators added for conformance, where ONNX's node cases do not reach: bad attributes and
 * hostile sizes refused with errors that name the node (by inference and by the interpreter),
 * numerically awkward inputs compared between the interpreter and the CPU target, constant
 * inputs that the node cases feed at run time, and the host-step label of data-sized ops.
 * Scan, the signal operators, the pooling ones and TfIdfVectorizer have test files of their
 * own (test-conform-*.c). */
#include "fb-test-cpu.h"
#include "fb-infer.h"
#include "fb-lower.h"

#include <math.h>
#include <string.h>

static FbNode *
node (FbGraph **g, int opset, FbOpKind op, guint n_in, guint n_out)
{
  *g = ti_graph (opset);
  return ti_node (*g, op, n_in, n_out);
}

/* Inference of node (inputs typed and shaped as given) fails with a message naming it. */
static void
infer_fails (FbGraph *g, FbNode *n, FbTensor **inputs, guint const_mask)
{
  g_autoptr(GError) error = NULL;
  for (guint i = 0; i < n->n_inputs; i++)
    {
      FbValue *v = n->inputs[i];
      if (v == NULL || inputs[i] == NULL)
        continue;
      if (const_mask & (1u << i))
        v->constant = fb_tensor_ref (inputs[i]);
      v->dtype = inputs[i]->dtype;
      v->shape.rank = inputs[i]->rank;
      for (int d = 0; d < inputs[i]->rank; d++)
        v->shape.dim[d] = inputs[i]->dims[d];
    }
  g_assert_false (fb_infer_node (g, n, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, n->name));
}

static void
test_bad_attributes (void)
{
  FbGraph *g;
  FbNode *n;

  n = node (&g, 18, FB_OP_CELU, 1, 1);
  ti_attr_float (g, n, "alpha", 0.0f);
  ti_run_fails (n, TI_IN (ti_f32 (1, D (2), V (1, -1))), FB_INTERP_ERROR_UNSUPPORTED);
  infer_fails (g, n, TI_IN (ti_f32 (1, D (2), V (1, -1))), 0);

  n = node (&g, 18, FB_OP_BIT_SHIFT, 2, 1);
  ti_attr_string (g, n, "direction", "UP");
  FbTensor *u = ti_tensor (FB_DTYPE_UINT8, 1, D (2), V (1, 2));
  ti_run_fails (n, TI_IN (u, u), FB_INTERP_ERROR_UNSUPPORTED);
  infer_fails (g, n, TI_IN (u, u), 0);
  /* Signed integers have no BitShift. */
  n = node (&g, 18, FB_OP_BIT_SHIFT, 2, 1);
  ti_attr_string (g, n, "direction", "LEFT");
  FbTensor *s = ti_tensor (FB_DTYPE_INT32, 1, D (2), V (1, 2));
  ti_run_fails (n, TI_IN (s, s), FB_INTERP_ERROR_UNSUPPORTED);
  infer_fails (g, n, TI_IN (s, s), 0);

  n = node (&g, 18, FB_OP_NLL_LOSS, 2, 1);
  ti_attr_string (g, n, "reduction", "average");
  FbTensor *x = ti_f32 (2, D (2, 3), V (0.1, 0.2, 0.7, 0.3, 0.3, 0.4));
  FbTensor *t = ti_i64 (1, D (2), (const int64_t[]) { 0, 2 });
  ti_run_fails (n, TI_IN (x, t), FB_INTERP_ERROR_UNSUPPORTED);
  infer_fails (g, n, TI_IN (x, t), 0);

  n = node (&g, 18, FB_OP_SCATTER_ELEMENTS, 3, 1);
  ti_attr_string (g, n, "reduction", "xor");
  ti_run_fails (n, TI_IN (ti_f32 (1, D (3), NULL), ti_i64 (1, D (1), (const int64_t[]) { 0 }),
                         ti_f32 (1, D (1), V (1))), FB_INTERP_ERROR_UNSUPPORTED);

  n = node (&g, 18, FB_OP_REVERSE_SEQUENCE, 2, 1);
  ti_attr_int (g, n, "time_axis", 1);
  ti_attr_int (g, n, "batch_axis", 1);
  infer_fails (g, n, TI_IN (ti_f32 (2, D (2, 2), NULL), ti_i64 (1, D (2), (const int64_t[]) { 1, 1 })), 0);

  n = node (&g, 18, FB_OP_EYE_LIKE, 1, 1);
  infer_fails (g, n, TI_IN (ti_f32 (3, D (2, 2, 2), NULL)), 0);

  /* MeanVarianceNormalization's default axes need rank 4; a repeated axis. */
  n = node (&g, 13, FB_OP_MEAN_VARIANCE_NORMALIZATION, 1, 1);
  ti_run_fails (n, TI_IN (ti_f32 (2, D (2, 2), NULL)), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (ti_f32 (2, D (2, 2), NULL)), 0);
  n = node (&g, 13, FB_OP_MEAN_VARIANCE_NORMALIZATION, 1, 1);
  ti_attr_ints (g, n, "axes", 2, D (0, -2));
  ti_run_fails (n, TI_IN (ti_f32 (2, D (2, 2), NULL)), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (ti_f32 (2, D (2, 2), NULL)), 0);
  /* Einsum: a repeated label over unequal extents; an output label twice. */
  n = node (&g, 12, FB_OP_EINSUM, 1, 1);
  ti_attr_string (g, n, "equation", "ii->i");
  ti_run_fails (n, TI_IN (ti_f32 (2, D (2, 3), NULL)), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (ti_f32 (2, D (2, 3), NULL)), 0);
  n = node (&g, 12, FB_OP_EINSUM, 1, 1);
  ti_attr_string (g, n, "equation", "ij->ii");
  ti_run_fails (n, TI_IN (ti_f32 (2, D (2, 2), NULL)), FB_INTERP_ERROR_UNSUPPORTED);
  infer_fails (g, n, TI_IN (ti_f32 (2, D (2, 2), NULL)), 0);
  ti_done ();
}

static void
test_bad_data (void)
{
  FbGraph *g;
  FbNode *n;

  /* A target outside the classes. */
  n = node (&g, 18, FB_OP_NLL_LOSS, 2, 1);
  ti_run_fails (n, TI_IN (ti_f32 (2, D (2, 3), NULL), ti_i64 (1, D (2), (const int64_t[]) { 0, 3 })),
                FB_INTERP_ERROR_RUNTIME);
  /* Hostile sizes: a depth, a window and a OneHot that would not fit in memory. */
  n = node (&g, 18, FB_OP_ONE_HOT, 3, 1);
  ti_run_fails (n, TI_IN (ti_i64 (1, D (2), (const int64_t[]) { 0, 1 }), ti_f32 (0, NULL, V (1e12)),
                         ti_f32 (1, D (2), V (0, 1))), FB_INTERP_ERROR_RUNTIME);
  n = node (&g, 18, FB_OP_HANN_WINDOW, 1, 1);
  ti_run_fails (n, TI_IN (ti_i64 (0, NULL, (const int64_t[]) { G_GINT64_CONSTANT (1) << 40 })),
                FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (ti_i64 (0, NULL, (const int64_t[]) { -4 })), 1);
  /* Indices past their axis. */
  n = node (&g, 18, FB_OP_GATHER_ND, 2, 1);
  ti_run_fails (n, TI_IN (ti_f32 (2, D (2, 2), NULL), ti_i64 (2, D (1, 2), (const int64_t[]) { 0, 2 })),
                FB_INTERP_ERROR_RUNTIME);
  n = node (&g, 18, FB_OP_SCATTER_ELEMENTS, 3, 1);
  ti_run_fails (n, TI_IN (ti_f32 (1, D (3), NULL), ti_i64 (1, D (1), (const int64_t[]) { -4 }),
                         ti_f32 (1, D (1), V (1))), FB_INTERP_ERROR_RUNTIME);
  n = node (&g, 18, FB_OP_REVERSE_SEQUENCE, 2, 1);
  ti_run_fails (n, TI_IN (ti_f32 (2, D (2, 2), NULL), ti_i64 (1, D (2), (const int64_t[]) { 3, 1 })),
                FB_INTERP_ERROR_RUNTIME);
  /* MatMulInteger's A must hold integers; a zero point per column of A is no zero point. */
  n = node (&g, 18, FB_OP_MATMUL_INTEGER, 3, 1);
  ti_run_fails (n, TI_IN (ti_f32 (2, D (2, 2), NULL), ti_tensor (FB_DTYPE_UINT8, 2, D (2, 2), NULL),
                         ti_tensor (FB_DTYPE_UINT8, 0, NULL, V (1))), FB_INTERP_ERROR_RUNTIME);
  n = node (&g, 18, FB_OP_MATMUL_INTEGER, 3, 1);
  ti_run_fails (n, TI_IN (ti_tensor (FB_DTYPE_UINT8, 2, D (2, 3), NULL),
                         ti_tensor (FB_DTYPE_UINT8, 2, D (3, 2), NULL),
                         ti_tensor (FB_DTYPE_UINT8, 1, D (3), NULL)), FB_INTERP_ERROR_RUNTIME);
  n = node (&g, 18, FB_OP_NON_MAX_SUPPRESSION, 2, 1);
  ti_run_fails (n, TI_IN (ti_f32 (3, D (1, 2, 3), NULL), ti_f32 (3, D (1, 1, 2), NULL)),
                FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_known_values (void)
{
  FbGraph *g;
  FbNode *n;

  /* Shifts by the width or more give 0. */
  n = node (&g, 18, FB_OP_BIT_SHIFT, 2, 1);
  ti_attr_string (g, n, "direction", "LEFT");
  ti_assert (ti_run1 (n, TI_IN (ti_tensor (FB_DTYPE_UINT8, 1, D (3), V (1, 1, 255)),
                                ti_tensor (FB_DTYPE_UINT8, 1, D (3), V (7, 8, 1)))),
             FB_DTYPE_UINT8, 1, D (3), V (128, 0, 254), 0);
  /* Mean over the weights taken: the ignored target counts for nothing. */
  n = node (&g, 18, FB_OP_NLL_LOSS, 3, 1);
  ti_attr_int (g, n, "ignore_index", 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (2, D (3, 2), V (1, 2, 3, 4, 5, 6)),
                                ti_i64 (1, D (3), (const int64_t[]) { 0, 1, 1 }),
                                ti_f32 (1, D (2), V (2, 3)))),
             FB_DTYPE_FLOAT32, 0, NULL, V (-1.0), 1e-6);
  /* Unique without sorting keeps the order of first occurrence. */
  n = node (&g, 18, FB_OP_UNIQUE, 1, 4);
  ti_attr_int (g, n, "sorted", 0);
  FbTensor **o = ti_run (n, TI_IN (ti_f32 (1, D (5), V (3, 1, 3, 2, 1))));
  ti_assert (o[0], FB_DTYPE_FLOAT32, 1, D (3), V (3, 1, 2), 0);
  ti_assert (o[2], FB_DTYPE_INT64, 1, D (5), V (0, 1, 0, 2, 1), 0);
  ti_assert (o[3], FB_DTYPE_INT64, 1, D (3), V (2, 2, 1), 0);
  g_free (o);
  /* Einsum within one operand: a trace, a diagonal, row sums, a batch of diagonals. */
  const struct { const char *eq; int rank; const int64_t *dims; const double *want;
                        int out_rank; const int64_t *out_dims; } es[] = {
    { "ii->", 2, D (2, 2), V (5), 0, NULL },
    { "ii->i", 2, D (2, 2), V (1, 4), 1, D (2) },
    { "ij->i", 2, D (2, 2), V (3, 7), 1, D (2) },
    { "...ii ->...i", 3, D (2, 2, 2), V (1, 4, 5, 8), 2, D (2, 2) },
  };
  for (guint i = 0; i < G_N_ELEMENTS (es); i++)
    {
      n = node (&g, 12, FB_OP_EINSUM, 1, 1);
      ti_attr_string (g, n, "equation", es[i].eq);
      ti_assert (ti_run1 (n, TI_IN (ti_f32 (es[i].rank, es[i].dims, V (1, 2, 3, 4, 5, 6, 7, 8)))),
                 FB_DTYPE_FLOAT32, es[i].out_rank, es[i].out_dims, es[i].want, 0);
    }
  /* MeanVarianceNormalization over axis 1 of [[1, 3], [2, 2]]: rows become [-1, 1] and 0s
   * (no deviation: 0 / 1e-9). */
  n = node (&g, 13, FB_OP_MEAN_VARIANCE_NORMALIZATION, 1, 1);
  ti_attr_ints (g, n, "axes", 1, D (1));
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (2, D (2, 2), V (1, 3, 2, 2)))), FB_DTYPE_FLOAT32, 2,
             D (2, 2), V (-1, 1, 0, 0), 1e-6);
  /* MatMulInteger with a zero point per row of A. */
  n = node (&g, 18, FB_OP_MATMUL_INTEGER, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_tensor (FB_DTYPE_UINT8, 2, D (2, 2), V (3, 4, 5, 6)),
                                ti_tensor (FB_DTYPE_INT8, 2, D (2, 1), V (1, -2)),
                                ti_tensor (FB_DTYPE_UINT8, 1, D (2), V (1, 5)))),
             FB_DTYPE_INT32, 2, D (2, 1), V (2 - 6, 0 - 2), 0);
  ti_done ();
}

static void
test_cpu_matches (void)
{
  FbGraph *g;
  FbNode *n;
  static const FbOpKind maps[] = {
    FB_OP_ACOS, FB_OP_ASIN, FB_OP_ATAN, FB_OP_ASINH, FB_OP_ATANH, FB_OP_SINH, FB_OP_COSH,
    FB_OP_TAN, FB_OP_MISH, FB_OP_CELU,
  };
  /* Edges of the series and reductions in the generated code: near 0, near +-1, large. */
  for (guint i = 0; i < G_N_ELEMENTS (maps); i++)
    {
      n = node (&g, 18, maps[i], 1, 1);
      gboolean unit = maps[i] == FB_OP_ACOS || maps[i] == FB_OP_ASIN || maps[i] == FB_OP_ATANH;
      tc_node (g, n, TI_IN (unit ? ti_f32 (1, D (7), V (-0.999, -0.7, -1e-4, 0, 3e-3, 0.42, 0.9))
                                 : ti_f32 (1, D (7), V (-6, -1.3, -1e-4, 0, 3e-3, 0.42, 7))), 0);
    }
  n = node (&g, 18, FB_OP_ATAN, 1, 1);
  tc_node (g, n, TI_IN (ti_f32 (1, D (4), V (-1e6, -2.4, 2.4, 1e6))), 0);
  /* Large values: a naive log-sum-exp overflows float32. */
  n = node (&g, 18, FB_OP_REDUCE_LOG_SUM_EXP, 1, 1);
  ti_attr_int (g, n, "keepdims", 0);
  tc_node (g, n, TI_IN (ti_f32 (2, D (2, 3), V (1000, 999, 998, -5, -6, -7))), 0);
  /* Constant inputs that the node cases feed at run time: OneHot's depth. */
  n = node (&g, 18, FB_OP_ONE_HOT, 3, 1);
  ti_attr_int (g, n, "axis", 0);
  tc_node (g, n, TI_IN (ti_i64 (2, D (2, 2), (const int64_t[]) { 0, -1, 7, 2 }),
                        ti_i64 (0, NULL, (const int64_t[]) { 4 }), ti_f32 (1, D (2), V (-1, 5))), 6);
  /* Hardmax before opset 13 sees the input as 2-D. */
  n = node (&g, 11, FB_OP_HARDMAX, 1, 1);
  tc_node (g, n, TI_IN (ti_f32 (3, D (2, 2, 2), V (1, 4, 3, 2, 0, 0, 5, 5))), 0);
  n = node (&g, 18, FB_OP_EYE_LIKE, 1, 1);
  ti_attr_int (g, n, "k", G_MAXINT64);
  ti_attr_int (g, n, "dtype", FB_DTYPE_INT32);
  tc_node (g, n, TI_IN (ti_f32 (2, D (3, 4), NULL)), 0);
  n = node (&g, 18, FB_OP_SCATTER_ELEMENTS, 3, 1);
  ti_attr_string (g, n, "reduction", "add");
  tc_node (g, n, TI_IN (ti_f32 (1, D (3), V (1, 2, 3)), ti_i64 (1, D (3), (const int64_t[]) { 1, 1, -1 }),
                        ti_f32 (1, D (3), V (10, 20, 30))), 0);
  n = node (&g, 18, FB_OP_SOFTMAX_CE_LOSS, 3, 2);
  ti_attr_string (g, n, "reduction", "sum");
  ti_attr_int (g, n, "ignore_index", 0);
  tc_node (g, n, TI_IN (ti_random (3, D (2, 3, 2), 5),
                        ti_i64 (2, D (2, 2), (const int64_t[]) { 0, 1, 2, 2 }),
                        ti_f32 (1, D (3), V (0.5, 1, 2))), 0);
  /* GridSample: points far outside the plane, in every mode, padding and corner convention. */
  static const char *modes[] = { "nearest", "bilinear", "bicubic" };
  static const char *pads[] = { "zeros", "border", "reflection" };
  for (guint m = 0; m < 3; m++)
    for (guint p = 0; p < 3; p++)
      for (int align = 0; align < 2; align++)
        {
          n = node (&g, 18, FB_OP_GRID_SAMPLE, 2, 1);
          ti_attr_string (g, n, "mode", modes[m]);
          ti_attr_string (g, n, "padding_mode", pads[p]);
          ti_attr_int (g, n, "align_corners", align);
          tc_node (g, n, TI_IN (ti_random (4, D (1, 2, 3, 4), 9),
                                ti_f32 (4, D (1, 2, 3, 2), V (-3, 0.2, 2.7, -1.4, 1e20, 0.5, 0.31, -0.77,
                                                              -1, 1, 1.9, -2.2))), 0);
        }
  /* MatMulInteger with a batch broadcast over a matrix. */
  n = node (&g, 18, FB_OP_MATMUL_INTEGER, 4, 1);
  tc_node (g, n, TI_IN (ti_tensor (FB_DTYPE_INT8, 3, D (2, 2, 3), V (-128, 127, 3, 4, -5, 6, 7, 8, 9, 10, -11, 12)),
                        ti_tensor (FB_DTYPE_UINT8, 2, D (3, 2), V (255, 0, 1, 2, 3, 200)),
                        ti_tensor (FB_DTYPE_INT8, 0, NULL, V (-3)),
                        ti_tensor (FB_DTYPE_UINT8, 0, NULL, V (7))), 12);
  /* MeanVarianceNormalization over the default axes and over an arbitrary set. */
  n = node (&g, 13, FB_OP_MEAN_VARIANCE_NORMALIZATION, 1, 1);
  tc_node (g, n, TI_IN (ti_random (4, D (2, 3, 4, 5), 21)), 0);
  n = node (&g, 13, FB_OP_MEAN_VARIANCE_NORMALIZATION, 1, 1);
  ti_attr_ints (g, n, "axes", 2, D (-1, 1));
  tc_node (g, n, TI_IN (ti_random (3, D (3, 4, 5), 22)), 0);
  n = node (&g, 18, FB_OP_QUANTIZE_LINEAR, 3, 1);
  tc_node (g, n, TI_IN (ti_f32 (2, D (2, 3), V (-300, -0.5, 0.5, 1.5, 2.5, NAN)),
                        ti_f32 (1, D (3), V (1, 1, 0.5)),
                        ti_tensor (FB_DTYPE_INT8, 1, D (3), V (0, 1, -1))), 6);
  ti_done ();
}

static void
test_host_step_label (void)
{
  FbGraph *g;
  FbNode *n = node (&g, 18, FB_OP_NON_ZERO, 1, 1);
  g_autoptr(GError) error = NULL;

  tc_finish (g, n, TI_IN (ti_f32 (1, D (4), V (0, 1, 0, 2))), 0);
  g_autoptr(FbPlan) plan = fb_lower_graph (g, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  gboolean found = FALSE;
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      if (k->node == n)
        {
          g_assert_cmpint (k->kind, ==, FB_KERNEL_HOST);
          g_assert_nonnull (strstr (k->label, "host step"));
          found = TRUE;
        }
    }
  g_assert_true (found);
  /* And it runs: the output is sized by the data. */
  n = node (&g, 18, FB_OP_NON_ZERO, 1, 1);
  tc_node (g, n, TI_IN (ti_f32 (2, D (2, 3), V (0, 1, 0, 2, 0, 3))), 0);
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/conform-ops/bad-attributes", test_bad_attributes);
  g_test_add_func ("/conform-ops/bad-data", test_bad_data);
  g_test_add_func ("/conform-ops/known-values", test_known_values);
  g_test_add_func ("/conform-ops/cpu-matches", test_cpu_matches);
  g_test_add_func ("/conform-ops/host-step-label", test_host_step_label);
  return g_test_run ();
}
