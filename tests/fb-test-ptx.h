/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The helpers of the PTX code generation's tests: whether a kernel is generated code only, and
 * runs of a node's graph through its PTX kernels emulated on the host (each thread of a
 * cooperative block an OS thread, barriers and shuffles through a mutex), compared with the
 * interpreter. */
#pragma once

#include "fb-test-cpu.h"
#include "fb-kernel.h"
#include "fb-pipeline.h"

/* Generated code only: no convolution phase, no library call. */
gboolean tp_pure_generated (const FbKernel *k);
/* What a graph lowers to for a target after the whole pipeline in a layout. */
typedef struct {
  guint    kernels;
  guint    conv_phases;           /* library convolutions: cuDNN's on a GPU, oneDNN's on the cpu */
  guint    most_phases;           /* of any one kernel */
  gboolean generated;             /* every kernel generated code only (or a view) */
} TpLowered;
TpLowered tp_lower (FbGraph *graph, FbLayout layout, const FbTargetDesc *target);

/* Runs node's graph (every input fed, as tc_finish makes it from ins) through the emulated PTX
 * kernels, on the grid each phase asks for and on one of about a third of it (the entries loop
 * over the grid), and compares every output with the interpreter's (rtol 1e-4, atol 1e-6);
 * asserts whether some launch was cooperative. */
void     tp_check_emulated (FbGraph *g, FbNode *node, FbTensor **ins, guint n_ins,
                            gboolean want_cooperative);
/* Runs graph g (taken) through the whole pipeline in layout, lowers it for the GPU and checks
 * the emulated kernels against the interpreter's run of g on ins (its inputs in order), at the
 * project's comparison tolerance; asserts whether some launch was cooperative. */
void     tp_check_emulated_pipeline (FbGraph *g, FbLayout layout, FbTensor **ins, guint n_ins,
                                     gboolean want_cooperative);
/* The same within rtol and atol. */
void     tp_check_emulated_pipeline_within (FbGraph *g, FbLayout layout, FbTensor **ins,
                                            guint n_ins, gboolean want_cooperative, double rtol,
                                            double atol);

/* A copy of graph through the whole pipeline in layout (in *pipeline, which the plan borrows
 * from), lowered for the cuda target. */
FbPlan  *tp_lower_for_cuda (const FbGraph *graph, FbLayout layout, FbPipeline **pipeline);
/* The final graph of pipeline p compiled into a cuda bundle (in a temporary folder, removed
 * again) and read back: the plan the bundle holds. */
FbPlan  *tp_cuda_bundle_round_trip (FbPipeline *p);
/* The cuBLASLt products of plan (FbKConv*, borrowed), in run order. */
GPtrArray *tp_products (const FbPlan *plan);
/* loaded (a bundle's plan) has plan's kernels, of the same kinds and phases, and every product
 * as plan has it: its shape, strides, offsets, alpha, epilogue, precision and operands. */
void     tp_assert_same_products (const FbPlan *plan, const FbPlan *loaded);
