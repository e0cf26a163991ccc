/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CPU executor: a plan, its loaded kernels, the arena, the worker pool. Built from a graph
 * by the CPU backend (compiling), or from a bundle (loading what was compiled before). */
#pragma once

#include "fb-backend.h"
#include "fb-kernel.h"

G_BEGIN_DECLS

typedef struct _FbCpuModule FbCpuModule;

/* Lays out the arena of plan (fb_plan_buffer offsets, plan->arena_bytes). */
void         fb_plan_layout_memory   (FbPlan *plan);

/* A module that runs plan with the given kernel objects (from fb_codegen_plan or a bundle;
 * NULL entries for kernels without code). Takes a reference on plan. */
FbCpuModule *fb_cpu_module_new       (FbPlan *plan, GPtrArray *objects, guint n_threads,
                                      GError **error);
void         fb_cpu_module_free      (FbCpuModule *module);
FbPlan      *fb_cpu_module_plan      (FbCpuModule *module);
GPtrArray   *fb_cpu_module_run       (FbCpuModule *module, GPtrArray *inputs,
                                      GCancellable *cancellable, GError **error);
/* Wall time of each kernel in the last run, in ms (plan->kernels order); NULL before a run
 * or when timing was off. */
const double *fb_cpu_module_kernel_ms (FbCpuModule *module);
void         fb_cpu_module_set_timing (FbCpuModule *module, gboolean timing);

/* The CPU target (fb-cpu-backend.c). */
const FbBackend *fb_backend_cpu (void);

/* Lowering, code generation and loading in one step, as the CPU backend's compile does. */
FbCpuModule *fb_cpu_compile          (const FbGraph *graph, guint n_threads, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbCpuModule, fb_cpu_module_free)

G_END_DECLS
