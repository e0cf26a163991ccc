/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reductions over the dimensions just before a kept innermost one on the cuda target (a
 * channels-last global pool, a mean over a sequence's positions): from 16 MiB of input, two
 * phases of a thread per item, runs of positions then the runs combined, never a block per
 * output element; the host's emulation of the kernels (forced to this form on small inputs)
 * computes what the interpreter does, with runs that divide the positions and runs that do
 * not; what does not fit keeps the one-phase form. */
#include "fb-cuda.h"
#include "fb-test-ptx.h"
#include "fb-test-passes.h"
#include "fb-lower.h"
#include "fb-pipeline.h"
#include "fb-ptx.h"

#include <string.h>

/* x [dims] -> op over axes (keepdims as given) -> Relu, so that an epilogue rides on phase 2. */
static FbGraph *
reduce_graph (FbOpKind op, int rank, const int64_t *dims, int n_axes, const int64_t *axes,
              int64_t keepdims)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", rank, dims);
  /* ReduceSum takes its axes as an input from opset 13, the others from 18. */
  FbValue *v = op == FB_OP_REDUCE_SUM ? tp_op (g, op, "reduce", x, tp_ints (g, n_axes, axes), NULL)
                                      : tp_op (g, op, "reduce", x, NULL);
  if (n_axes && op != FB_OP_REDUCE_SUM)
    tp_attr_ints (g, v, "axes", n_axes, axes);
  if (op != FB_OP_GLOBAL_AVERAGE_POOL)
    tp_attr_int (g, v, "keepdims", keepdims);
  tp_output (g, tp_op (g, FB_OP_RELU, "relu", v, NULL));
  return g;
}
/* The most phases of a kernel of graph (taken), lowered for the GPU. */
static guint
phases (FbGraph *graph, FbLayout layout)
{
  return tp_lower (graph, layout, fb_cuda_target_desc ()).most_phases;
}

/* The same with x's Sigmoid before the reduction, fused into its kernel: a phase of its own that
 * writes the kernel's scratch, which the runs then read in place. */
static FbGraph *
reduce_of_sigmoid_graph (int rank, const int64_t *dims, int64_t axis)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", rank, dims);
  FbValue *v = tp_op (g, FB_OP_REDUCE_SUM, "reduce", tp_op (g, FB_OP_SIGMOID, "sigmoid", x, NULL),
                      tp_ints (g, 1, &axis), NULL);
  tp_output (g, tp_op (g, FB_OP_RELU, "relu", v, NULL));
  return g;
}

/* The PTX of the first kernel with two phases of graph's plan (graph_taken is freed). */
static char *
two_phase_ptx (FbGraph *graph_taken, FbLayout layout)
{
  g_autoptr(FbGraph) graph = graph_taken;
  g_autoptr(FbPipeline) pipeline = NULL;
  g_autoptr(FbPlan) plan = tp_lower_for_cuda (graph, layout, &pipeline);
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      if (k->phases->len != 2)
        continue;
      g_autoptr(GError) error = NULL;
      FbPtxModule *m = fb_codegen_ptx (k, plan, &error);
      g_assert_no_error (error);
      char *ptx = g_strdup (m->ptx);
      fb_ptx_module_free (m);
      return ptx;
    }
  g_assert_not_reached ();
}

static void
test_columns (void)
{
  /* EfficientNet-B0's first squeeze-excitation pool at batch 32 (49 MiB) and its last one
   * (7x7, 1152 channels, 6.9 MiB) in two phases, the first at batch 1 (1.5 MiB) in one. */
  g_assert_cmpuint (phases (reduce_graph (FB_OP_GLOBAL_AVERAGE_POOL, 4, TP_DIMS (32, 32, 112, 112), 0, NULL, 1),
                            FB_LAYOUT_NHWC), ==, 2);
  g_assert_cmpuint (phases (reduce_graph (FB_OP_GLOBAL_AVERAGE_POOL, 4, TP_DIMS (32, 1152, 7, 7), 0, NULL, 1),
                            FB_LAYOUT_NHWC), ==, 2);
  g_assert_cmpuint (phases (reduce_graph (FB_OP_GLOBAL_AVERAGE_POOL, 4, TP_DIMS (1, 32, 112, 112), 0, NULL, 1),
                            FB_LAYOUT_NHWC), ==, 1);
  g_setenv ("FUSEBENCH_GPU_REDUCE_RUNS", "always", TRUE);
  g_assert_cmpuint (phases (reduce_graph (FB_OP_GLOBAL_AVERAGE_POOL, 4, TP_DIMS (2, 32, 14, 14), 0, NULL, 1),
                            FB_LAYOUT_NHWC), ==, 2);
  /* A global pool of 196 positions (runs of 28). */
  tp_check_emulated_pipeline (reduce_graph (FB_OP_GLOBAL_AVERAGE_POOL, 4, TP_DIMS (2, 32, 14, 14), 0, NULL, 1),
                              FB_LAYOUT_NHWC, TI_IN (ti_random (4, TP_DIMS (2, 32, 14, 14), 50)), 1, FALSE);
  /* A mean over a sequence's 100 positions (runs of 25), keepdims 0. */
  tp_check_emulated_pipeline (reduce_graph (FB_OP_REDUCE_MEAN, 3, TP_DIMS (2, 100, 64), 1, TP_DIMS (1), 0),
                              FB_LAYOUT_NCHW, TI_IN (ti_random (3, TP_DIMS (2, 100, 64), 51)), 1, FALSE);
  /* A 7x7 map's 49 positions: four runs of 13, the last one short. */
  tp_check_emulated_pipeline (reduce_graph (FB_OP_GLOBAL_AVERAGE_POOL, 4, TP_DIMS (2, 32, 7, 7), 0, NULL, 1),
                              FB_LAYOUT_NHWC, TI_IN (ti_random (4, TP_DIMS (2, 32, 7, 7), 55)), 1, FALSE);
  /* A max over 67 positions, a prime: five runs of 14, the last one short. */
  tp_check_emulated_pipeline (reduce_graph (FB_OP_REDUCE_MAX, 3, TP_DIMS (3, 67, 48), 1, TP_DIMS (1), 1),
                              FB_LAYOUT_NCHW, TI_IN (ti_random (3, TP_DIMS (3, 67, 48), 52)), 1, FALSE);
  /* Two reduced axes between two kept ones: [2, 3] of [3, 2, 9, 11, 20] (runs of 11). */
  tp_check_emulated_pipeline (reduce_graph (FB_OP_REDUCE_SUM, 5, TP_DIMS (3, 2, 9, 11, 20), 2, TP_DIMS (2, 3), 1),
                              FB_LAYOUT_NCHW, TI_IN (ti_random (5, TP_DIMS (3, 2, 9, 11, 20), 53)), 1, FALSE);
  /* Read from its buffer, a run's positions are one affine index, with no 64-bit division
   * (each position split into a row and a column took one, a loop's index being 64 bits wide).
   * Reading a fused Sigmoid's scratch the same way, the reduction still gets every element
   * right. */
  g_autofree char *ptx = two_phase_ptx (reduce_graph (FB_OP_GLOBAL_AVERAGE_POOL, 4, TP_DIMS (2, 32, 14, 14), 0, NULL, 1),
                                        FB_LAYOUT_NHWC);
  g_assert_null (strstr (ptx, "mul.hi.u64"));
  g_assert_null (strstr (ptx, "div.u64"));
  tp_check_emulated_pipeline (reduce_of_sigmoid_graph (3, TP_DIMS (2, 100, 64), 1), FB_LAYOUT_NCHW,
                              TI_IN (ti_random (3, TP_DIMS (2, 100, 64), 54)), 1, FALSE);
  /* Not this form: the innermost axis reduced (a softmax-like row), or 8 channels. */
  g_assert_cmpuint (phases (reduce_graph (FB_OP_REDUCE_MEAN, 3, TP_DIMS (2, 100, 64), 1, TP_DIMS (2), 1),
                            FB_LAYOUT_NCHW), ==, 1);
  g_assert_cmpuint (phases (reduce_graph (FB_OP_REDUCE_MEAN, 3, TP_DIMS (2, 100, 8), 1, TP_DIMS (1), 1),
                            FB_LAYOUT_NCHW), ==, 1);
  g_unsetenv ("FUSEBENCH_GPU_REDUCE_RUNS");
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/codegen-ptx-reduce-columns/columns", test_columns);
  return g_test_run ();
}
