/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The backend interface: one struct of function pointers per target (ggml's shape). The CPU
 * target lives behind it today; the CUDA target will sit beside it. A caller asks
 * supports_op for every node first, so that an unsupported node is named before any work. */
#pragma once

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
} FbRuntimeError;

typedef struct {
  guint       n_threads;         /* threads for kernels and for compiling; 0: one per core */
} FbBackendOptions;

/* What compile returns: target specific, opaque to the caller, released with free. */
typedef struct _FbCompiled FbCompiled;

typedef struct _FbBackend FbBackend;
struct _FbBackend {
  const char  *name;                                    /* "cpu", as --target spells it */
  /* Whether the target runs node; *reason (caller frees) says why not. */
  gboolean    (*supports_op) (const FbBackend *backend, const FbNode *node, char **reason);
  /* Compiles the final stage of the pipeline; the result borrows graph, which must outlive it. */
  FbCompiled *(*compile)     (const FbBackend *backend, const FbGraph *graph,
                              const FbBackendOptions *options, GError **error);
  /* Runs once on inputs (FbTensor*, graph input order); returns the outputs (FbTensor* in graph
   * output order, new references) or NULL with an error. */
  GPtrArray  *(*run)         (FbCompiled *compiled, GPtrArray *inputs, GCancellable *cancellable,
                              GError **error);
  void        (*free)        (FbCompiled *compiled);
};

/* The targets this build has ("cpu"); NULL when name is not one. */
const FbBackend *fb_backend_lookup (const char *name);
const FbBackend *fb_backend_cpu    (void);

/* The first node of graph (recursively into fused bodies) the backend cannot run, as an
 * FB_RUNTIME_ERROR_UNSUPPORTED error naming it; TRUE when all can run. */
gboolean         fb_backend_check_graph (const FbBackend *backend, const FbGraph *graph,
                                         GError **error);

G_END_DECLS
