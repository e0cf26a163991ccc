/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The backend interface: one struct of function pointers per target. The command line, the
 * profiler and the workbench reach a target only through it (fb_backend_lookup), so that a
 * third target is one more folder under compiler/targets/ and one line in the backend table,
 * not a branch in every command. A caller asks supports_op
 * for every node first (fb_backend_check_graph), so that an unsupported node is named before
 * any work. */
#pragma once

#include "fb-codegen.h"      /* FbKernelStages: the lowering stages of a kernel */
#include "fb-graph.h"

#include <gio/gio.h>

G_BEGIN_DECLS

#define FB_RUNTIME_ERROR (fb_runtime_error_quark ())
GQuark fb_runtime_error_quark (void);

typedef enum {
  FB_RUNTIME_ERROR_UNSUPPORTED,  /* a node the target cannot run (named in the message) */
  FB_RUNTIME_ERROR_INPUT,        /* a fed tensor does not match the graph's input */
  FB_RUNTIME_ERROR_BUNDLE,       /* a bundle that cannot be read or does not hold together */
  FB_RUNTIME_ERROR_FAILED,       /* the work itself failed (memory, a host node) */
  FB_RUNTIME_ERROR_DEVICE,       /* no driver, no device, or the device refused the work: the
                                    machine's doing, not the model's (exit status 1) */
} FbRuntimeError;

typedef struct {
  guint       n_threads;         /* threads for kernels and for compiling; 0: one per core */
  gboolean    strict_float32;    /* cuda: no TF32 anywhere, every contraction in float32 */
  gboolean    tf32_matmul;       /* cuda: matrix products in TF32 too; by default only the
                                    convolutions are, as PyTorch's defaults have it */
  gboolean    eager;             /* cuda: launch kernel by kernel instead of replaying the
                                    captured graph (what launch overhead costs) */
} FbBackendOptions;

/* Where the time of compile_bundle went, for `compile --stats`. */
typedef struct {
  double      lower_ms;          /* lowering and the memory plan */
  double      codegen_ms;        /* generating (or fetching from the cache) every kernel */
  double      bundle_ms;         /* writing the folder */
  guint       n_with_code;       /* kernels that have generated code */
  guint       n_cached;          /* of those, how many came from the cache */
} FbCompileStats;

typedef struct _FbBundleOptions FbBundleOptions;   /* fb-bundle.h */

/* What compile and load_bundle return: target specific, opaque to the caller, released with
 * free. */
typedef struct _FbCompiled FbCompiled;

/* Called on the running thread just before (after = FALSE) and after each kernel i of a run
 * (FbHostTiming.set_kernel_hook), each kernel's launches (FbDeviceTrace.set_launch_hook), or
 * each timed inference (FbDeviceTrace.run_timed_marked). */
typedef void (*FbKernelHook) (guint i, gboolean after, gpointer data);

/* What a timed run measured on the host clock, for the profiler: one clock read per kernel
 * (two with a kernel hook, whose time stays out of the kernel's), two per thread per parallel
 * phase. Arrays of kernel x thread are indexed [kernel * n_threads + thread]; times are ms
 * from the start of the run. Valid until the next run. */
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
  const gboolean *self_threaded;   /* per kernel: a library phase spread itself over the cores,
                                      where busy_ms cannot see its threads */
} FbKernelTiming;

/* Instrumented runs of a target that runs its kernels on host threads and times them itself:
 * the profiler's host-clock method (profiler/fb-profile-cpu.c). */
typedef struct {
  /* The threads kernels run on, and where that count came from (a request, the affinity
   * mask, the small-model rule...), as a profile says it. */
  guint     (*n_threads)       (FbCompiled *compiled);
  const char *(*threads_source) (FbCompiled *compiled);
  void      (*set_timing)      (FbCompiled *compiled, gboolean timing);
  /* FALSE before a run with timing on. */
  gboolean  (*timing)          (FbCompiled *compiled, FbKernelTiming *timing);
  /* For measurements the target does not make itself (hardware counters); NULL stops. */
  void      (*set_kernel_hook) (FbCompiled *compiled, FbKernelHook hook, gpointer data);
} FbHostTiming;

/* Instrumented runs of a target that launches its kernels on a CUDA device: the profiler's
 * CUPTI method (profiler/fb-profile-cuda.c). */
typedef struct {
  /* The device's ceilings, measured once and cached: a device-to-device copy in GB/s and a
   * large matrix product in GFLOP/s; FALSE with the reason where they cannot be measured. */
  gboolean  (*measure_ceilings) (double *gbps, double *gflops, GError **error);
  /* Called around the launches of each plan kernel when launching kernel by kernel and while
   * a CUDA graph is captured: the profiler tags those launches with the kernel. */
  void      (*set_launch_hook)  (FbCompiled *compiled, FbKernelHook hook, gpointer data);
  /* Launches kernel by kernel from now on instead of replaying the captured graphs (FALSE:
   * replay again). */
  void      (*set_launch_eagerly) (FbCompiled *compiled, gboolean eagerly);
  /* run_timed, calling mark (i, FALSE) just before run i is launched and mark (i, TRUE) once it
   * has finished. */
  GPtrArray *(*run_timed_marked) (FbCompiled *compiled, GPtrArray *inputs, guint n, double *ms,
                                  FbKernelHook mark, gpointer data, GError **error);
  /* After a run: n runs launched back to back between one pair of device events, *ms the
   * whole; a run alone less *ms / n is what launching one adds where nothing hides it. */
  gboolean  (*time_back_to_back) (FbCompiled *compiled, guint n, double *ms, GError **error);
  /* The CUcontext and the device ordinal, for CUPTI's range profiler. */
  gpointer  (*context)          (FbCompiled *compiled);
  guint     (*device_index)     (FbCompiled *compiled);
} FbDeviceTrace;

typedef struct _FbBackend FbBackend;
struct _FbBackend {
  const char  *name;                                    /* "cpu", as --target spells it */
  const char  *title;                                   /* "CPU": menus */
  const char  *code_title;                              /* "CPU · x86-64": the code view's
                                                           choice of target */
  const char  *device_word;                             /* "CPU" or "GPU": "Profiling on the
                                                           GPU" */
  const char  *lane_word;                               /* what a timeline lane of its
                                                           profiles is: "thread", "stream" */
  const char  *assembly_suffix;                         /* "s" or "ptx": the last stage's file */
  gboolean     channels_last;                           /* the layout its convolutions run
                                                           fastest, the default of --layout */
  /* Whether the target runs node; *reason (caller frees) says why not. */
  gboolean    (*supports_op)   (const FbBackend *backend, const FbNode *node, char **reason);
  /* What lowering and code generation know of the target; NULL for a target that runs the
   * graph as it is (the interpreter: no lower, no kernel_stages). */
  const FbTargetDesc *(*describe_target) (const FbBackend *backend);
  /* The device it runs on, in a line ("NVIDIA H200, sm_90, 132 SMs, driver 13.0"), or NULL
   * with FB_RUNTIME_ERROR_DEVICE saying what is missing (no driver, no GPU). */
  char       *(*describe_device) (const FbBackend *backend, GError **error);
  /* Lowers graph for this target with its memory laid out: the plan compile runs. NULL with
   * an error naming the node; the plan borrows graph. */
  FbPlan     *(*lower)         (const FbBackend *backend, const FbGraph *graph, GError **error);
  /* The lowering stages of one kernel of a plan lower made. */
  FbKernelStages *(*kernel_stages) (const FbBackend *backend, const FbKernel *kernel,
                                    const FbPlan *plan, GError **error);
  /* The artifacts a target emits besides bundles, NULL where it has none: one kernel's object
   * file (x86-64 ELF), and every generated kernel of a plan in one module of module_suffix
   * ("ptx"). */
  GBytes     *(*emit_object)   (const FbBackend *backend, const FbKernel *kernel, GError **error);
  const char  *module_suffix;
  char       *(*emit_module)   (const FbBackend *backend, const FbPlan *plan, GError **error);
  /* Compiles the final stage of the pipeline; the result borrows graph, which must outlive it.
   * NULL in a build that only runs bundles. */
  FbCompiled *(*compile)       (const FbBackend *backend, const FbGraph *graph,
                                const FbBackendOptions *options, GError **error);
  /* What compile does after lowering, for a caller that holds a plan lower made already (the
   * window's code view): generates its code and loads it, taking a reference on plan. NULL for
   * a target without plans. */
  FbCompiled *(*compile_plan)  (const FbBackend *backend, FbPlan *plan,
                                const FbBackendOptions *options, GError **error);
  /* Lowers, generates and writes a bundle folder (atomically) in one go; stats may be NULL.
   * NULL in a build that only runs bundles, and for a target without bundles. */
  gboolean    (*compile_bundle) (const FbBackend *backend, const FbGraph *graph,
                                 const char *path, const FbBundleOptions *bundle_options,
                                 const FbBackendOptions *options, FbCompileStats *stats,
                                 GError **error);
  /* Whether compile_bundle links lib/libfbmodel.so when the options ask for one. */
  gboolean     shared_library;
  /* Loads a bundle folder written by compile_bundle of this target. */
  FbCompiled *(*load_bundle)   (const FbBackend *backend, const char *path,
                                const FbBackendOptions *options, GError **error);
  /* The graph whose inputs and outputs the compiled model takes and gives. */
  const FbGraph *(*graph)      (FbCompiled *compiled);
  /* The plan the compiled model runs; NULL for a target without plans. */
  FbPlan     *(*plan)          (FbCompiled *compiled);
  /* Runs once on inputs (FbTensor*, graph input order); returns the outputs (FbTensor* in graph
   * output order, new references) or NULL with an error. */
  GPtrArray  *(*run)           (FbCompiled *compiled, GPtrArray *inputs, GCancellable *cancellable,
                                GError **error);
  /* Runs n times on inputs, ms[i] the time of run i as the target measures it (the host clock
   * on the cpu, device events around a replay on cuda); returns the last run's outputs. */
  GPtrArray  *(*run_timed)     (FbCompiled *compiled, GPtrArray *inputs, guint n, double *ms,
                                GError **error);
  /* What the last run did, in a line (NULL: nothing to say; caller frees). May be NULL. */
  char       *(*describe_run)  (FbCompiled *compiled);
  void        (*free)          (FbCompiled *compiled);
  /* How the profiler instruments its runs: one of the two, or neither for a target that
   * cannot be profiled. */
  const FbHostTiming  *host_timing;
  const FbDeviceTrace *device_trace;
};

/* The backend table (compiler/targets/fb-backend-table.c): the targets this build has, the
 * reference interpreter first ("interp", "cpu", "cuda"). */
/* The target called name (as --target spells it); NULL when this build has none. */
const FbBackend *fb_backend_lookup (const char *name);
/* The i-th target of the table, NULL past the last: for menus and lists of targets. */
const FbBackend *fb_backend_nth    (guint i);
/* The target whose one-module form (module_suffix) is suffix ("ptx"), or NULL. */
const FbBackend *fb_backend_for_module (const char *suffix);
/* The reference interpreter: where a model runs when no target is named. */
const FbBackend *fb_backend_reference (void);
/* The host's compiled target: the default of `compile`, `profile` and the window's exports. */
const FbBackend *fb_backend_host   (void);
/* Their names, for messages ("interp, cpu, cuda"); static. */
const char      *fb_backend_names  (void);

/* The first node of graph (recursively into fused bodies) the backend cannot run, as an
 * FB_RUNTIME_ERROR_UNSUPPORTED error naming it; TRUE when all can run. */
gboolean         fb_backend_check_graph (const FbBackend *backend, const FbGraph *graph,
                                         GError **error);
/* The "target" of the bundle folder at path (its manifest), or NULL with an
 * FB_RUNTIME_ERROR_BUNDLE error. */
char            *fb_backend_bundle_target (const char *path, GError **error);

/* Helpers for targets whose run_timed uses the host clock around run. */
GPtrArray       *fb_backend_run_timed_host (const FbBackend *backend, FbCompiled *compiled,
                                            GPtrArray *inputs, guint n, double *ms,
                                            GError **error);

G_END_DECLS
