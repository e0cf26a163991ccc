/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading bundle folders (layout in fb-bundle.h), for any target. Kept apart from writing and
 * from the CPU's loader so that a runner without LLVM links only this. */
#include "fb-bundle-private.h"
#include "fb-onnx-import.h"

#include <string.h>

gboolean
fb_bundle_is_bundle (const char *path)
{
  g_return_val_if_fail (path != NULL, FALSE);
  g_autofree char *manifest = g_build_filename (path, "manifest.json", NULL);
  return g_file_test (path, G_FILE_TEST_IS_DIR) && g_file_test (manifest, G_FILE_TEST_IS_REGULAR);
}

char *
_fb_bundle_object_file (const FbKernel *kernel, const char *suffix)
{
  /* Named after the first function without its "_p0": equal kernels share the file. */
  const char *fn = ((FbKPhase *) g_ptr_array_index (kernel->phases, 0))->fn;
  gsize len = strlen (fn);
  if (g_str_has_suffix (fn, "_p0"))
    len -= 3;
  return g_strdup_printf ("kernels/%.*s%s", (int) len, fn, suffix);
}

char *
fb_bundle_object_name (const FbKernel *kernel)
{
  return _fb_bundle_object_file (kernel, ".o");
}

gboolean
_fb_bundle_io_error (GError **error, const char *path, int err)
{
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (err), "%s: %s", path,
               g_strerror (err));
  return FALSE;
}

static JsonObject *
read_json (const char *path, JsonParser *parser, GError **error)
{
  g_autoptr(GError) local = NULL;

  /* A damaged bundle is bad input, whatever part of it is damaged: one error code says so. */
  if (!json_parser_load_from_file (parser, path, &local))
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE, "%s", local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE, "%s: not a JSON object", path);
      return NULL;
    }
  return json_node_get_object (root);
}

GBytes *
fb_bundle_read_file (const char *path, const char *name, GError **error)
{
  g_return_val_if_fail (path != NULL && name != NULL, NULL);
  g_autofree char *file = g_build_filename (path, name, NULL);
  g_autoptr(GError) local = NULL;
  char *data;
  gsize len;
  if (!g_file_get_contents (file, &data, &len, &local))
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE, "%s", local->message);
      return NULL;
    }
  return g_bytes_new_take (data, len);
}

FbPlan *
fb_bundle_read (const char *path, const char *want_target, const char *want_host,
                const char *object_suffix, GPtrArray **objects_out, GError **error)
{
  g_return_val_if_fail (path != NULL && want_target != NULL && objects_out != NULL, NULL);
  *objects_out = NULL;
  g_autofree char *manifest_path = g_build_filename (path, "manifest.json", NULL);
  g_autoptr(JsonParser) mp = json_parser_new ();
  JsonObject *m = read_json (manifest_path, mp, error);
  if (m == NULL)
    return NULL;
  if (g_strcmp0 (json_object_get_string_member_with_default (m, "format", ""), FB_BUNDLE_FORMAT) ||
      json_object_get_int_member_with_default (m, "version", 0) != FB_BUNDLE_VERSION)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                   "%s: not a version %d fusebench bundle", manifest_path, FB_BUNDLE_VERSION);
      return NULL;
    }
  const char *target = json_object_get_string_member_with_default (m, "target", "");
  if (g_strcmp0 (target, want_target) != 0)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                   "%s: a bundle for the '%s' target; this runner loads %s bundles", path, target,
                   want_target);
      return NULL;
    }
  const char *host = json_object_get_string_member_with_default (m, "host", "");
  if (want_host != NULL && g_strcmp0 (host, want_host) != 0)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                   "%s: compiled for another processor or device (%.60s...); compile it again "
                   "for this machine", path, host);
      return NULL;
    }

  g_autofree char *weights_path = g_build_filename (path, "weights.bin", NULL);
  g_autoptr(GMappedFile) mapped = g_mapped_file_new (weights_path, FALSE, error);
  if (mapped == NULL)
    return NULL;
  g_autoptr(GBytes) weights = g_mapped_file_get_bytes (mapped);
  g_autofree char *plan_path = g_build_filename (path, "plan.json", NULL);
  g_autoptr(JsonParser) pp = json_parser_new ();
  JsonObject *pj = read_json (plan_path, pp, error);
  if (pj == NULL)
    return NULL;
  g_autoptr(FbPlan) plan = _fb_bundle_plan_from_json (pj, weights, plan_path, error);
  if (plan == NULL)
    return NULL;

  g_autofree char *graph_path = g_build_filename (path, "model.onnx", NULL);
  FbGraph *graph = fb_onnx_import_file (graph_path, NULL, error);
  if (graph == NULL)
    return NULL;
  plan->owned_graph = graph;
  plan->graph = graph;
  if (graph->inputs->len != plan->inputs->len || graph->outputs->len != plan->outputs->len)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                   "%s: the graph and the plan disagree on inputs or outputs", path);
      return NULL;
    }

  g_autoptr(GPtrArray) objects = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (kernel->kind == FB_KERNEL_HOST)
        {
          const char *name = _fb_bundle_kernel_node_name (pj, k);
          for (guint i = 0; name && i < graph->nodes->len && !kernel->node; i++)
            if (g_str_equal (((FbNode *) g_ptr_array_index (graph->nodes, i))->name, name))
              kernel->node = g_ptr_array_index (graph->nodes, i);
        }
      if (kernel->phases->len == 0)
        {
          g_ptr_array_add (objects, NULL);
          continue;
        }
      g_autofree char *name = _fb_bundle_object_file (kernel, object_suffix);
      g_autofree char *obj_path = g_build_filename (path, name, NULL);
      char *data;
      gsize len;
      /* A kernel made only of library phases has no file on targets that run them apart. */
      if (!g_file_test (obj_path, G_FILE_TEST_EXISTS) && !g_str_equal (object_suffix, ".o"))
        {
          g_ptr_array_add (objects, NULL);
          continue;
        }
      if (!g_file_get_contents (obj_path, &data, &len, error))
        return NULL;
      g_ptr_array_add (objects, g_bytes_new_take (data, len));
    }
  *objects_out = g_steal_pointer (&objects);
  return g_steal_pointer (&plan);
}
