/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What every target shares: checking a graph against supports_op, reading a bundle's target,
 * timing runs with the host clock. The table of targets is fb-backend-table.c (or the
 * runner's own, in a build that only runs bundles). */
#include "fb-backend.h"

#include <json-glib/json-glib.h>
#include <time.h>

G_DEFINE_QUARK (fb-runtime-error-quark, fb_runtime_error)

static double
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

gboolean
fb_backend_check_graph (const FbBackend *backend, const FbGraph *graph, GError **error)
{
  g_return_val_if_fail (backend != NULL && graph != NULL, FALSE);
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *node = g_ptr_array_index (graph->nodes, i);
      g_autofree char *reason = NULL;
      if (!backend->supports_op (backend, node, &reason))
        {
          g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_UNSUPPORTED,
                       "node '%s' (%s) is not supported by the %s target: %s", node->name,
                       node->op_type ? node->op_type : fb_op_name (node->op), backend->name,
                       reason ? reason : "no reason given");
          return FALSE;
        }
    }
  return TRUE;
}

char *
fb_backend_bundle_target (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autofree char *manifest = g_build_filename (path, "manifest.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) local = NULL;
  if (!json_parser_load_from_file (parser, manifest, &local))
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE, "%s", local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  JsonNode *target = root && JSON_NODE_HOLDS_OBJECT (root)
                     ? json_object_get_member (json_node_get_object (root), "target") : NULL;
  if (target == NULL || json_node_get_value_type (target) != G_TYPE_STRING)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                   "%s: no \"target\" string", manifest);
      return NULL;
    }
  return g_strdup (json_node_get_string (target));
}

GPtrArray *
fb_backend_run_timed_host (const FbBackend *backend, FbCompiled *compiled, GPtrArray *inputs,
                           guint n, double *ms, GError **error)
{
  g_return_val_if_fail (backend != NULL && compiled != NULL && n > 0 && ms != NULL, NULL);
  g_autoptr(GPtrArray) outputs = NULL;
  for (guint i = 0; i < n; i++)
    {
      double t0 = now_ms ();
      g_clear_pointer (&outputs, g_ptr_array_unref);
      outputs = backend->run (compiled, inputs, NULL, error);
      if (outputs == NULL)
        return NULL;
      ms[i] = now_ms () - t0;
    }
  return g_steal_pointer (&outputs);
}
