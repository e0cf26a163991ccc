/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The backend interface: one struct of function pointers per target (ggml's shape). The
 * command line and the workbench reach a target only through it (fb_backend_lookup), so that a
 * second target is one more table, not a branch in every command. A caller asks supports_op
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

typedef struct _FbBackend FbBackend;
struct _FbBackend {
  const char  *name;                                    /* "cpu", as --target spells it */
  const char  *assembly_suffix;                         /* "s" or "ptx": the last stage's file */
  gboolean     channels_last;                           /* the layout its convolutions run
                                                           fastest, the default of --layout */
  /* Whether the target runs node; *reason (caller frees) says why not. */
  gboolean    (*supports_op)   (const FbBackend *backend, const FbNode *node, char **reason);
  /* Lowers graph for this target with its memory laid out: the plan compile runs. NULL with
   * an error naming the node; the plan borrows graph. */
  FbPlan     *(*lower)         (const FbBackend *backend, const FbGraph *graph, GError **error);
  /* The lowering stages of one kernel of a plan lower made. */
  FbKernelStages *(*kernel_stages) (const FbBackend *backend, const FbKernel *kernel,
                                    const FbPlan *plan, GError **error);
  /* Compiles the final stage of the pipeline; the result borrows graph, which must outlive it.
   * NULL in a build that only runs bundles. */
  FbCompiled *(*compile)       (const FbBackend *backend, const FbGraph *graph,
                                const FbBackendOptions *options, GError **error);
  /* Lowers, generates and writes a bundle folder (atomically) in one go; stats may be NULL.
   * NULL in a build that only runs bundles. */
  gboolean    (*compile_bundle) (const FbBackend *backend, const FbGraph *graph,
                                 const char *path, const FbBundleOptions *bundle_options,
                                 const FbBackendOptions *options, FbCompileStats *stats,
                                 GError **error);
  /* Loads a bundle folder written by compile_bundle of this target. */
  FbCompiled *(*load_bundle)   (const FbBackend *backend, const char *path,
                                const FbBackendOptions *options, GError **error);
  /* The plan the compiled model runs; its graph describes inputs and outputs. */
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
};

/* The targets this build has ("cpu", "cuda"); NULL when name is not one. */
const FbBackend *fb_backend_lookup (const char *name);
/* Their names, for messages ("cpu, cuda"); static. */
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
