/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cpu target: its executor (a plan, its loaded kernels, the arena, the worker pool), built
 * from a graph by the CPU backend (compiling) or from a bundle (loading what was compiled
 * before). Only this folder, the backend table and tests include this header: everything else
 * reaches the target through its FbBackend. */
#pragma once

#include "fb-backend.h"
#include "fb-bundle.h"
#include "fb-memory-plan.h"

G_BEGIN_DECLS

typedef struct _FbCpuModule FbCpuModule;

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

/* What a timed run measured (FbKernelTiming, fb-backend.h): */
/* FALSE before a run with timing on. */
gboolean     fb_cpu_module_timing     (FbCpuModule *module, FbKernelTiming *timing);
guint        fb_cpu_module_n_threads  (FbCpuModule *module);
/* Where the module's thread count came from, as run and profile say it. */
const char  *fb_cpu_module_threads_source (FbCpuModule *module);

/* The small-model rule (fb-cpu-small-model.c): the modeled time on one core, in µs, of work of
 * flops and bytes, and of the plan's kernels; the threads a default count of n is cut to for
 * the plan (n where the plan is large enough). */
double       fb_cpu_one_core_us         (double flops, double bytes);
double       fb_cpu_plan_one_core_us    (const FbPlan *plan);
guint        fb_cpu_small_model_threads (const FbPlan *plan, guint n);
/* Called on the running thread just before (after = FALSE) and after each kernel of a run,
 * for measurements the runtime does not make itself (hardware counters); NULL to stop. */
void         fb_cpu_module_set_kernel_hook (FbCpuModule *module, FbKernelHook hook,
                                            gpointer data);
/* The CPU target (fb-cpu-backend.c) and what its lowering knows of it: this processor's
 * triple, oneDNN for convolutions. */
const FbBackend    *fb_backend_cpu     (void);
const FbTargetDesc *fb_cpu_target_desc (void);

typedef struct {
  double lower_ms;              /* checking, lowering and memory planning */
  double codegen_ms;
  guint  n_cached;              /* kernels whose object came from the cache */
} FbBundleCompileStats;

/* Checks that the CPU target runs graph, lowers it for this CPU and generates the object of
 * every kernel (on n_threads threads, 0 for one a core, through the cache): the plan and the
 * objects (*objects, NULL entries for kernels without code) that fb_bundle_write takes. stats
 * may be NULL. */
FbPlan      *fb_cpu_bundle_compile (const FbGraph *graph, guint n_threads, GPtrArray **objects,
                                    FbBundleCompileStats *stats, GError **error);
/* Loads a bundle for the CPU target, refusing one compiled for another CPU. The bundle's graph
 * (fb_cpu_module_plan (module)->graph, owned by the plan) describes the inputs and outputs. */
FbCpuModule *fb_cpu_bundle_load (const char *path, guint n_threads, GError **error);
/* Links the kernels and a driver into dir/lib/libfbmodel.so with dir/lib/fb-model.h: a
 * bundle's write_library (FbBundleOptions) on this target. */
gboolean     fb_cpu_write_shared_library (const char *dir, const FbPlan *plan, GPtrArray *objects,
                                          GBytes *weights, const int64_t *weight_offsets,
                                          const FbGraph *graph, GError **error);

/* Lowering, code generation and loading in one step, as the CPU backend's compile does. */
FbCpuModule *fb_cpu_compile          (const FbGraph *graph, guint n_threads, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbCpuModule, fb_cpu_module_free)

G_END_DECLS
