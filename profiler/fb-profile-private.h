/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internals shared by the profiler's files; only profiler/ includes this header. */
#pragma once

#include "fb-profile.h"
#include "fb-profile-run.h"
#include "fb-kernel.h"

G_BEGIN_DECLS

#define FB_PROFILE_FORMAT_NAME    "fusebench-profile"
#define FB_PROFILE_FORMAT_VERSION 1

/* The file's names of FbProfileKernelKind, in enum order, NULL-terminated. */
extern const char * const _fb_profile_kind_names[];

/* The final stage compiled for backend: from options->plan where it is a plan of final, else
 * lowered anew. */
FbCompiled *_fb_profile_compile (const FbBackend *backend, const FbGraph *final,
                                 const FbProfileOptions *options,
                                 const FbBackendOptions *compile_options, GError **error);

/* fb_profile_run on a target with host-clock timing (FbBackend.host_timing, fb-profile-cpu.c). */
FbProfile *_fb_profile_run_host (const FbBackend *backend, GPtrArray *stages,
                                 const FbPipelineOptions *pipeline_options, GPtrArray *inputs,
                                 const FbProfileOptions *options, GCancellable *cancellable,
                                 FbProfileProgress progress, gpointer data, GError **error);

/* Sets k->bound and k->roofline_share from its flops, bytes and median time against the
 * device's ceilings (memory-bound and 0 where there are none). */
void       _fb_profile_place_on_roofline (FbProfileKernel *k, const FbProfileDevice *device);

/* The CPU's name from /proc/cpuinfo ("CPU" when it says none). */
char      *_fb_profile_cpu_name (void);
/* Fills device with the CPU's name, n_threads and where that count came from (threads_from,
 * or NULL), and its ceilings on n_threads (fb-profile-ceilings.c): from the cache, measured,
 * given by FUSEBENCH_CEILINGS, or none (zeros). */
void       _fb_profile_cpu_ceilings (guint n_threads, const char *threads_from,
                                     FbProfileDevice *device);

/* Hardware counters on every thread of the pool (fb-profile-counters.c). */
#define FB_PERF_N_EVENTS 3      /* cycles, instructions, last-level cache misses */
typedef struct _FbPerf FbPerf;
/* NULL with *why saying plainly why not. software: the kernel's software events (task clock,
 * page faults, context switches) in the same slots, so that the plumbing can be tested on a
 * machine without a PMU. */
FbPerf    *_fb_perf_open  (guint n_threads, gboolean software, char **why);
void       _fb_perf_close (FbPerf *perf);
/* Reads every thread's counters now ... */
void       _fb_perf_begin (FbPerf *perf);
/* ... and adds what each event counted since, over all threads, to sums[FB_PERF_N_EVENTS]. */
void       _fb_perf_end   (FbPerf *perf, double *sums);

/* Fills profile->diagnosis from what it measured (fb-profile-diagnose.c); final is the graph
 * it ran, for the inserted layout transposes. */
void       _fb_profile_diagnose (FbProfile *profile, const FbGraph *final);

/* fb_profile_run on a target that launches on a CUDA device (FbBackend.device_trace), traced
 * by CUPTI (fb-profile-cuda.c). */
FbProfile *_fb_profile_run_traced (const FbBackend *backend, GPtrArray *stages,
                                   const FbPipelineOptions *pipeline_options, GPtrArray *inputs,
                                   const FbProfileOptions *options, GCancellable *cancellable,
                                   FbProfileProgress progress, gpointer data, GError **error);

/* What every target's profile shares (fb-profile-cpu.c): seeded inputs of the plan's shapes,
 * the profile kind of a kernel, the bytes it moves by the plan (modeled), and the original
 * nodes no kernel runs with the pass that removed them. */
GPtrArray *_fb_profile_random_inputs (const FbPlan *plan, guint64 seed, GError **error);
FbProfileKernelKind _fb_profile_kernel_kind (const FbKernel *kernel);
void       _fb_profile_kernel_bytes  (const FbPlan *plan, const FbKernel *kernel, guint64 *read,
                                      guint64 *written);
void       _fb_profile_find_folded   (FbProfile *profile, GPtrArray *stages);

G_END_DECLS
