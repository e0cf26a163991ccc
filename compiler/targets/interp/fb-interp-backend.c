/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The reference interpreter behind the backend interface: the graph runs as it is, node by
 * node, with no lowering, no plan and no code. It is the first entry of the backend table, the
 * target `run` and `check` use when none is named, and the oracle the others are checked
 * against. */
#include "fb-interp-backend.h"
#include "fb-interp.h"

/* What compile returns: the graph itself, borrowed. */
typedef struct {
  const FbGraph *graph;
} InterpCompiled;

static gboolean
interp_supports_op (const FbBackend *backend, const FbNode *node, char **reason)
{
  if (fb_interp_supports (node))
    return TRUE;
  if (reason != NULL)
    *reason = g_strdup ("the reference interpreter has no kernel for this operator, type or "
                        "attribute");
  return FALSE;
}

static char *
interp_describe_device (const FbBackend *backend, GError **error)
{
  return g_strdup ("the reference interpreter, on this machine's CPU");
}

static FbCompiled *
interp_compile (const FbBackend *backend, const FbGraph *graph, const FbBackendOptions *options,
                GError **error)
{
  InterpCompiled *c = g_new0 (InterpCompiled, 1);
  c->graph = graph;
  return (FbCompiled *) c;
}

static const FbGraph *
interp_graph (FbCompiled *compiled)
{
  return ((InterpCompiled *) compiled)->graph;
}

static GPtrArray *
interp_run (FbCompiled *compiled, GPtrArray *inputs, GCancellable *cancellable, GError **error)
{
  return fb_interp_run (interp_graph (compiled), inputs, cancellable, error);
}

static GPtrArray *
interp_run_timed (FbCompiled *compiled, GPtrArray *inputs, guint n, double *ms, GError **error)
{
  return fb_backend_run_timed_host (fb_backend_interp (), compiled, inputs, n, ms, error);
}

static void
interp_free (FbCompiled *compiled)
{
  g_free (compiled);
}

static const FbBackend interp_backend = {
  .name            = "interp",
  .title           = "Reference interpreter",
  .device_word     = "CPU",
  .lane_word       = "thread",
  .supports_op     = interp_supports_op,
  .describe_device = interp_describe_device,
  .compile         = interp_compile,       /* nothing to do: the graph runs as it is */
  .graph           = interp_graph,
  .run             = interp_run,           /* fb_interp_run */
  .run_timed       = interp_run_timed,     /* the host clock around each run */
  .free            = interp_free,
};

const FbBackend *
fb_backend_interp (void)
{
  return &interp_backend;
}
