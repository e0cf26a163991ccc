/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DFT, STFT and MelWeightMatrix beyond ONNX's node cases: transforms checked against values
 * worked out by hand, every attribute (axis, inverse, onesided, dft_length padding and
 * cutting, opset 20's axis input, complex signals, windows), sizes given as constants so that
 * the cpu target's generated loops run (the node cases feed them at run time, which sends the
 * node to the host) and agree with the interpreter, and refusals that name the node. */
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

static FbTensor *
scalar (int64_t v)
{
  return ti_i64 (0, NULL, (const int64_t[]) { v });
}

/* Inference of node (inputs typed and shaped as given; constants where const_mask says) fails
 * with a message naming it. */
static void
infer_fails (FbGraph *g, FbNode *n, FbTensor **inputs, guint const_mask)
{
  g_autoptr(GError) error = NULL;
  for (guint i = 0; i < n->n_inputs; i++)
    {
      FbValue *v = n->inputs[i];
      if (inputs[i] == NULL)
        {
          n->inputs[i] = NULL;
          continue;
        }
      if (const_mask & (1u << i))
        v->constant = fb_tensor_ref (inputs[i]);
      v->dtype = inputs[i]->dtype;
      v->shape = fb_tensor_shape (inputs[i]);
    }
  g_assert_false (fb_infer_node (g, n, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, n->name));
}

/* Whether the compiled plan of g runs node n as generated loops (not a host step). */
static gboolean
compiled_as_loops (FbGraph *g, FbNode *n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (g, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      if (k->node == n)
        return k->kind == FB_KERNEL_LOOPS;
    }
  return FALSE;
}

/* tc_node, asserting first that the node is compiled to loops. */
static void
cpu_loops (FbGraph *g, FbNode *n, FbTensor **in, guint const_mask)
{
  tc_finish (g, n, in, const_mask);
  g_assert_true (compiled_as_loops (g, n));
  g_autoptr(GPtrArray) inputs = tc_inputs (g, n, in, const_mask);
  tc_check (g, inputs);
}

static void
test_dft_values (void)
{
  FbGraph *g;
  FbNode *n;

  /* [1, 2, 3, 4] -> [10, -2 + 2i, -2, -2 - 2i]; with onesided the first three. */
  n = node (&g, 17, FB_OP_DFT, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (3, D (1, 4, 1), V (1, 2, 3, 4)))), FB_DTYPE_FLOAT32, 3,
             D (1, 4, 2), V (10, 0, -2, 2, -2, 0, -2, -2), 1e-5);
  n = node (&g, 17, FB_OP_DFT, 1, 1);
  ti_attr_int (g, n, "onesided", 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (3, D (1, 4, 1), V (1, 2, 3, 4)))), FB_DTYPE_FLOAT32, 3,
             D (1, 3, 2), V (10, 0, -2, 2, -2, 0), 1e-5);
  /* The inverse of that spectrum is the signal again. */
  n = node (&g, 17, FB_OP_DFT, 1, 1);
  ti_attr_int (g, n, "inverse", 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (3, D (1, 4, 2), V (10, 0, -2, 2, -2, 0, -2, -2)))),
             FB_DTYPE_FLOAT32, 3, D (1, 4, 2), V (1, 0, 2, 0, 3, 0, 4, 0), 1e-5);
  /* dft_length cuts the signal to [1, 2] ([3, -1]) or pads it with zeros to 6 points. */
  n = node (&g, 17, FB_OP_DFT, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (3, D (1, 4, 1), V (1, 2, 3, 4)), scalar (2))),
             FB_DTYPE_FLOAT32, 3, D (1, 2, 2), V (3, 0, -1, 0), 1e-5);
  n = node (&g, 17, FB_OP_DFT, 2, 1);
  FbTensor *six = ti_run1 (n, TI_IN (ti_f32 (3, D (1, 2, 1), V (1, 1)), scalar (6)));
  /* 1 + e^(-i pi k / 3): k = 3 gives 0, k = 1 gives 1.5 - i sqrt(3)/2. */
  g_assert_cmpfloat (fabs (fb_tensor_get_f64 (six, 6)), <, 1e-5);
  g_assert_cmpfloat (fabs (fb_tensor_get_f64 (six, 2) - 1.5), <, 1e-5);
  g_assert_cmpfloat (fabs (fb_tensor_get_f64 (six, 3) + sqrt (3) / 2), <, 1e-5);
  /* Opset 20: the axis is an input, -2 by default (the last signal axis). */
  n = node (&g, 20, FB_OP_DFT, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (3, D (2, 2, 1), V (1, 2, 3, 5)), NULL,
                                ti_i64 (0, NULL, (const int64_t[]) { 0 }))),
             FB_DTYPE_FLOAT32, 3, D (2, 2, 2), V (4, 0, 7, 0, -2, 0, -3, 0), 1e-5);
  n = node (&g, 20, FB_OP_DFT, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (3, D (2, 2, 1), V (1, 2, 3, 5)))),
             FB_DTYPE_FLOAT32, 3, D (2, 2, 2), V (3, 0, -1, 0, 8, 0, -2, 0), 1e-5);
  ti_done ();
}

static void
test_dft_cpu (void)
{
  FbGraph *g;
  FbNode *n;
  static const struct { int axis, inverse, onesided, complex; int64_t length; } cases[] = {
    { 1, 0, 0, 0, -1 }, { 2, 0, 0, 1, -1 }, { 1, 1, 0, 1, -1 }, { 2, 0, 1, 0, -1 },
    { 1, 0, 0, 0, 9 }, { 2, 1, 0, 1, 3 }, { -2, 0, 1, 0, 6 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      n = node (&g, 17, FB_OP_DFT, cases[i].length > 0 ? 2 : 1, 1);
      ti_attr_int (g, n, "axis", cases[i].axis);
      ti_attr_int (g, n, "inverse", cases[i].inverse);
      ti_attr_int (g, n, "onesided", cases[i].onesided);
      FbTensor *x = ti_random (4, D (2, 5, 7, cases[i].complex ? 2 : 1), 3 + i);
      cpu_loops (g, n, TI_IN (x, cases[i].length > 0 ? scalar (cases[i].length) : NULL), 2);
    }
  /* Opset 20's constant axis input. */
  n = node (&g, 20, FB_OP_DFT, 3, 1);
  cpu_loops (g, n, TI_IN (ti_random (4, D (3, 4, 5, 2), 11), scalar (8), scalar (1)), 6);
  ti_done ();
}

static void
test_dft_refusals (void)
{
  FbGraph *g;
  FbNode *n;

  /* A complex input has no onesided transform. */
  n = node (&g, 17, FB_OP_DFT, 1, 1);
  ti_attr_int (g, n, "onesided", 1);
  ti_run_fails (n, TI_IN (ti_f32 (3, D (1, 4, 2), NULL)), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (ti_f32 (3, D (1, 4, 2), NULL)), 0);
  /* The last axis holds the parts, so it is no signal axis; nor is one past the rank. */
  static const int64_t bad_axes[] = { 2, 3, -1, -4 };
  for (guint i = 0; i < G_N_ELEMENTS (bad_axes); i++)
    {
      n = node (&g, 17, FB_OP_DFT, 1, 1);
      ti_attr_int (g, n, "axis", bad_axes[i]);
      ti_run_fails (n, TI_IN (ti_f32 (3, D (1, 4, 1), NULL)), FB_INTERP_ERROR_RUNTIME);
      infer_fails (g, n, TI_IN (ti_f32 (3, D (1, 4, 1), NULL)), 0);
    }
  /* A last axis of 3, a transform of no points. */
  n = node (&g, 17, FB_OP_DFT, 1, 1);
  ti_run_fails (n, TI_IN (ti_f32 (3, D (1, 4, 3), NULL)), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (ti_f32 (3, D (1, 4, 3), NULL)), 0);
  n = node (&g, 17, FB_OP_DFT, 2, 1);
  ti_run_fails (n, TI_IN (ti_f32 (3, D (1, 4, 1), NULL), scalar (0)), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (ti_f32 (3, D (1, 4, 1), NULL), scalar (0)), 2);
  /* Opset 17 has no axis input; a hostile length is refused before it runs for hours. */
  n = node (&g, 17, FB_OP_DFT, 3, 1);
  infer_fails (g, n, TI_IN (ti_f32 (3, D (1, 4, 1), NULL), NULL, scalar (1)), 4);
  n = node (&g, 17, FB_OP_DFT, 2, 1);
  ti_run_fails (n, TI_IN (ti_f32 (3, D (1, 1 << 20, 1), NULL), scalar (1 << 20)),
                FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_stft (void)
{
  FbGraph *g;
  FbNode *n;

  /* Frames [1 2 3 4] and [3 4 5 6] two apart: their DFTs, one-sided (three bins). */
  n = node (&g, 17, FB_OP_STFT, 4, 1);
  FbTensor *x = ti_f32 (3, D (1, 6, 1), V (1, 2, 3, 4, 5, 6));
  ti_assert (ti_run1 (n, TI_IN (x, scalar (2), NULL, scalar (4))), FB_DTYPE_FLOAT32, 4,
             D (1, 2, 3, 2), V (10, 0, -2, 2, -2, 0, 18, 0, -2, 2, -2, 0), 1e-5);
  /* A window scales each frame before its transform: [0 1 0 0] keeps its second sample. */
  n = node (&g, 17, FB_OP_STFT, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (x, scalar (2), ti_f32 (1, D (4), V (0, 1, 0, 0)))),
             FB_DTYPE_FLOAT32, 4, D (1, 2, 3, 2), V (2, 0, 0, -2, -2, 0, 4, 0, 0, -4, -4, 0), 1e-5);

  /* Constant steps and frames: generated loops, complex and windowed, against the interpreter. */
  n = node (&g, 17, FB_OP_STFT, 4, 1);
  ti_attr_int (g, n, "onesided", 0);
  cpu_loops (g, n, TI_IN (ti_random (3, D (2, 40, 2), 1), scalar (3), ti_random (1, D (8), 2),
                          scalar (8)), 10);
  n = node (&g, 17, FB_OP_STFT, 3, 1);
  cpu_loops (g, n, TI_IN (ti_random (3, D (1, 33, 1), 3), scalar (5), ti_random (1, D (9), 4)), 2);
  /* A frame step fed at run time sizes the output: a host step, and the same values. */
  n = node (&g, 17, FB_OP_STFT, 3, 1);
  FbTensor **in = TI_IN (ti_random (3, D (1, 20, 1), 5), scalar (4), ti_random (1, D (6), 6));
  tc_finish (g, n, in, 0);
  g_assert_false (compiled_as_loops (g, n));
  g_autoptr(GPtrArray) inputs = tc_inputs (g, n, in, 0);
  tc_check (g, inputs);

  /* Refusals: a window of another length than frame_length, no frame length at all, a signal
   * shorter than a frame, a onesided transform of a complex signal, a step of 0. */
  n = node (&g, 17, FB_OP_STFT, 4, 1);
  in = TI_IN (x, scalar (2), ti_f32 (1, D (3), NULL), scalar (4));
  ti_run_fails (n, in, FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, in, 10);
  n = node (&g, 17, FB_OP_STFT, 2, 1);
  ti_run_fails (n, TI_IN (x, scalar (2)), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (x, scalar (2)), 2);
  n = node (&g, 17, FB_OP_STFT, 4, 1);
  in = TI_IN (x, scalar (1), NULL, scalar (7));
  ti_run_fails (n, in, FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, in, 10);
  n = node (&g, 17, FB_OP_STFT, 4, 1);
  in = TI_IN (ti_f32 (3, D (1, 6, 2), NULL), scalar (1), NULL, scalar (4));
  ti_run_fails (n, in, FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, in, 10);
  n = node (&g, 17, FB_OP_STFT, 4, 1);
  in = TI_IN (x, scalar (0), NULL, scalar (4));
  ti_run_fails (n, in, FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, in, 10);
  ti_done ();
}

/* Fills in[5] with MelWeightMatrix's inputs; returns in. */
static FbTensor **
mel_inputs (FbTensor **in, int64_t bins, int64_t length, int64_t rate, double lower,
            double upper)
{
  in[0] = ti_tensor (FB_DTYPE_INT32, 0, NULL, V (bins));
  in[1] = ti_tensor (FB_DTYPE_INT32, 0, NULL, V (length));
  in[2] = ti_tensor (FB_DTYPE_INT32, 0, NULL, V (rate));
  in[3] = ti_f32 (0, NULL, V (lower));
  in[4] = ti_f32 (0, NULL, V (upper));
  return in;
}

static void
test_mel_weight_matrix (void)
{
  FbGraph *g;
  FbNode *n;
  FbTensor *buf[5];

  /* ONNX's case (8 bins of a 16-point DFT at 8192 Hz over 0..4096 Hz): triangles one or two
   * spectrogram bins wide, the last spectrogram bins in none. */
  n = node (&g, 17, FB_OP_MEL_WEIGHT_MATRIX, 5, 1);
  FbTensor *y = ti_run1 (n, mel_inputs (buf, 8, 16, 8192, 0, 4096));
  ti_assert (y, FB_DTYPE_FLOAT32, 2, D (9, 8),
             V (1, 1, 0, 0, 0, 0, 0, 0,
                0, 0, 1, 1, 0, 0, 0, 0,
                0, 0, 0, 0, 1, 0, 0, 0,
                0, 0, 0, 0, 0, 1, 0, 0,
                0, 0, 0, 0, 0, 0, 1, 0,
                0, 0, 0, 0, 0, 0, 0, 1,
                0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0, 0, 0, 0), 0);
  /* Wider triangles: slopes between 0 and 1; and float64 out when output_datatype says so. */
  n = node (&g, 17, FB_OP_MEL_WEIGHT_MATRIX, 5, 1);
  ti_attr_int (g, n, "output_datatype", FB_DTYPE_FLOAT64);
  y = ti_run1 (n, mel_inputs (buf, 4, 64, 8000, 100, 3800));
  g_assert_cmpint (y->dtype, ==, FB_DTYPE_FLOAT64);
  g_assert_cmpint (y->dims[0], ==, 33);
  gboolean fraction = FALSE;
  for (int64_t i = 0; i < y->numel; i++)
    {
      double v = fb_tensor_get_f64 (y, i);
      g_assert_cmpfloat (v, >=, 0.0);
      g_assert_cmpfloat (v, <=, 1.0);
      fraction |= v > 0.0 && v < 1.0;
    }
  g_assert_true (fraction);

  /* Sizes constant, rate and edges fed at run time: generated loops that agree. */
  n = node (&g, 17, FB_OP_MEL_WEIGHT_MATRIX, 5, 1);
  cpu_loops (g, n, mel_inputs (buf, 10, 128, 16000, 20, 7600), 3);
  /* Sizes fed at run time: a host step. */
  n = node (&g, 17, FB_OP_MEL_WEIGHT_MATRIX, 5, 1);
  FbTensor **in = mel_inputs (buf, 5, 32, 22050, 0, 11025);
  tc_finish (g, n, in, 0);
  g_assert_false (compiled_as_loops (g, n));
  g_autoptr(GPtrArray) inputs = tc_inputs (g, n, in, 0);
  tc_check (g, inputs);

  /* Refusals: no DFT points, no sample rate, a negative band count, a bool output. */
  n = node (&g, 17, FB_OP_MEL_WEIGHT_MATRIX, 5, 1);
  ti_run_fails (n, mel_inputs (buf, 8, 0, 8192, 0, 4096), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, mel_inputs (buf, 8, 0, 8192, 0, 4096), 31);
  n = node (&g, 17, FB_OP_MEL_WEIGHT_MATRIX, 5, 1);
  ti_run_fails (n, mel_inputs (buf, 8, 16, 0, 0, 4096), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, mel_inputs (buf, 8, 16, 0, 0, 4096), 31);
  n = node (&g, 17, FB_OP_MEL_WEIGHT_MATRIX, 5, 1);
  ti_run_fails (n, mel_inputs (buf, -1, 16, 8192, 0, 4096), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, mel_inputs (buf, -3, 16, 8192, 0, 4096), 31);
  n = node (&g, 17, FB_OP_MEL_WEIGHT_MATRIX, 5, 1);
  ti_attr_int (g, n, "output_datatype", FB_DTYPE_BOOL);
  ti_run_fails (n, mel_inputs (buf, 8, 16, 8192, 0, 4096), FB_INTERP_ERROR_UNSUPPORTED);
  infer_fails (g, n, mel_inputs (buf, 8, 16, 8192, 0, 4096), 0);
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/conform-signal/dft-values", test_dft_values);
  g_test_add_func ("/conform-signal/dft-cpu", test_dft_cpu);
  g_test_add_func ("/conform-signal/dft-refusals", test_dft_refusals);
  g_test_add_func ("/conform-signal/stft", test_stft);
  g_test_add_func ("/conform-signal/mel-weight-matrix", test_mel_weight_matrix);
  return g_test_run ();
}
