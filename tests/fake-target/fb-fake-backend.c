/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A third target, for test-fake-target: what adding one takes is this folder and one line in a
 * list of the backend table (fake-targets.def). It "runs" a model on a pretend device by
 * evaluating it with the reference interpreter, so that its outputs can be checked; it has no
 * lowering, no bundles and no timed runs for the profiler, and every command that needs those
 * says so through the table, never by its name. */
#include "fb-backend.h"
#include "fb-interp.h"

const FbBackend *fb_backend_fake (void);

static gboolean
fake_supports_op (const FbBackend *backend, const FbNode *node, char **reason)
{
  if (fb_interp_supports (node))
    return TRUE;
  if (reason != NULL)
    *reason = g_strdup ("the pretend device has no kernel for it");
  return FALSE;
}

static char *
fake_describe_device (const FbBackend *backend, GError **error)
{
  return g_strdup ("a pretend device of the tests");
}

static FbCompiled *
fake_compile (const FbBackend *backend, const FbGraph *graph, const FbBackendOptions *options,
              GError **error)
{
  /* What it compiled is the graph itself (borrowed). */
  return (FbCompiled *) graph;
}

static const FbGraph *
fake_graph (FbCompiled *compiled)
{
  return (const FbGraph *) compiled;
}

static GPtrArray *
fake_run (FbCompiled *compiled, GPtrArray *inputs, GCancellable *cancellable, GError **error)
{
  return fb_interp_run (fake_graph (compiled), inputs, cancellable, error);
}

static GPtrArray *
fake_run_timed (FbCompiled *compiled, GPtrArray *inputs, guint n, double *ms, GError **error)
{
  return fb_backend_run_timed_host (fb_backend_fake (), compiled, inputs, n, ms, error);
}

static char *
fake_describe_run (FbCompiled *compiled)
{
  return g_strdup ("fake: ran on a pretend device");
}

static void
fake_free (FbCompiled *compiled)
{
}

static const FbBackend fake_backend = {
  .name            = "fake",
  .title           = "Fake (tests)",
  .device_word     = "pretend device",
  .lane_word       = "lane",
  .supports_op     = fake_supports_op,
  .describe_device = fake_describe_device,
  .compile         = fake_compile,
  .graph           = fake_graph,
  .run             = fake_run,
  .run_timed       = fake_run_timed,
  .describe_run    = fake_describe_run,
  .free            = fake_free,
};

const FbBackend *
fb_backend_fake (void)
{
  return &fake_backend;
}
