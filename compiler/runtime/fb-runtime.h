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
/* What a timed run measured, for the profiler: one clock read per kernel (two with a kernel
 * hook, whose time stays out of the kernel's), two per thread per parallel phase. Arrays of kernel x thread are indexed [kernel * n_threads + thread]; times
 * are ms from the start of the run. Valid until the next run. */
typedef struct {
  guint           n_kernels;
  guint           n_threads;       /* the pool's threads, 0 the calling one */
  const double   *kernel_ms;       /* per kernel: its wall time */
  const double   *start_ms;        /* per kernel: when it started */
  const double   *busy_ms;         /* kernel x thread: time each thread worked on the kernel
                                      (the caller also for its serial phases) */
  const double   *first_ms;        /* kernel x thread: its first chunk's start (< 0: none) */
  const double   *last_ms;         /* kernel x thread: its last chunk's end */
  const gboolean *pooled;          /* per kernel: ran a phase on the pool's threads */
  const gboolean *self_threaded;   /* per kernel: a oneDNN phase spread itself over the cores,
                                      where busy_ms cannot see its threads */
} FbCpuTiming;

/* FALSE before a run with timing on. */
gboolean     fb_cpu_module_timing     (FbCpuModule *module, FbCpuTiming *timing);
guint        fb_cpu_module_n_threads  (FbCpuModule *module);
/* Called on the running thread just before (after = FALSE) and after each kernel of a run,
 * for measurements the runtime does not make itself (hardware counters); NULL to stop. */
typedef void (*FbCpuKernelHook) (guint kernel, gboolean after, gpointer data);
void         fb_cpu_module_set_kernel_hook (FbCpuModule *module, FbCpuKernelHook hook,
                                            gpointer data);

/* Lowering, code generation and loading in one step, as the CPU backend's compile does. */
FbCpuModule *fb_cpu_compile          (const FbGraph *graph, guint n_threads, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbCpuModule, fb_cpu_module_free)

G_END_DECLS
