/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing bundle folders (layout in fb-bundle.h). */
#include "fb-config.h"
#include "fb-bundle-private.h"
#include "fb-codegen.h"
#include "fb-onnx-export.h"
#include "fb-onnx-import.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#define WEIGHT_ALIGN   64

static void
remove_tree (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  if (dir)
    {
      const char *name;
      while ((name = g_dir_read_name (dir)))
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
            remove_tree (child);
          else
            g_unlink (child);
        }
      g_dir_close (dir);
    }
  g_rmdir (path);
}

static gboolean
write_json (const char *path, JsonObject *object, GError **error)
{
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), object);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, node);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_file (gen, path, error);
}

static JsonArray *
tensors_json (const FbGraph *graph, GPtrArray *values)
{
  JsonArray *a = json_array_new ();
  for (guint i = 0; i < values->len; i++)
    {
      const FbValue *v = g_ptr_array_index (values, i);
      JsonObject *o = json_object_new ();
      json_object_set_string_member (o, "name", v->name);
      json_object_set_string_member (o, "dtype", fb_dtype_name (v->dtype));
      JsonArray *dims = json_array_new ();
      for (int d = 0; d < v->shape.rank; d++)
        json_array_add_int_element (dims, v->shape.dim[d]);
      json_object_set_array_member (o, "shape", dims);
      json_array_add_object_element (a, o);
    }
  return a;
}

/* Every constant buffer, 64-byte aligned, in buffer order. */
static GBytes *
pack_weights (FbPlan *plan, int64_t *offsets, GHashTable *external)
{
  int64_t size = 0;
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      FbBuffer *b = fb_plan_buffer (plan, i);
      offsets[i] = -1;
      if (b->kind != FB_BUF_CONST || b->constant == NULL)
        continue;
      size = (size + WEIGHT_ALIGN - 1) / WEIGHT_ALIGN * WEIGHT_ALIGN;
      offsets[i] = size;
      size += fb_tensor_nbytes (b->constant);
    }
  guint8 *data = g_malloc0 (MAX (size, 1));
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      FbBuffer *b = fb_plan_buffer (plan, i);
      if (offsets[i] < 0)
        continue;
      memcpy (data + offsets[i], fb_tensor_data (b->constant), fb_tensor_nbytes (b->constant));
      if (!g_hash_table_contains (external, b->constant))
        g_hash_table_insert (external, b->constant, GSIZE_TO_POINTER ((gsize) offsets[i] + 1));
    }
  return g_bytes_new_take (data, size);
}

static gboolean
write_contents (const char *dir, const char *name, GBytes *bytes, GError **error)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  return g_file_set_contents (path, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                              error);
}

static gboolean
fill_folder (const char *dir, FbPlan *plan, GPtrArray *objects, const FbGraph *graph,
             const FbBundleOptions *options, GError **error)
{
  g_autofree int64_t *offsets = g_new0 (int64_t, plan->buffers->len + 1);
  g_autoptr(GHashTable) external = g_hash_table_new (NULL, NULL);
  g_autoptr(GBytes) weights = pack_weights (plan, offsets, external);
  if (!write_contents (dir, "weights.bin", weights, error))
    return FALSE;

  const char *suffix = options && options->object_suffix ? options->object_suffix : ".o";
  g_autofree char *kdir = g_build_filename (dir, "kernels", NULL);
  if (g_mkdir (kdir, 0755) != 0)
    return _fb_bundle_io_error (error, kdir, errno);
  JsonArray *files = json_array_new ();
  g_autoptr(GHashTable) written = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      GBytes *obj = g_ptr_array_index (objects, k);
      if (obj == NULL)
        continue;
      g_autofree char *name = _fb_bundle_object_file (kernel, suffix);
      if (!g_hash_table_add (written, g_strdup (name)))
        continue;
      json_array_add_string_element (files, name);
      if (!write_contents (dir, name, obj, error))
        {
          json_array_unref (files);
          return FALSE;
        }
    }

  g_autoptr(GBytes) onnx = fb_onnx_export (graph, external, "weights.bin", error);
  if (onnx == NULL || !write_contents (dir, "model.onnx", onnx, error))
    {
      json_array_unref (files);
      return FALSE;
    }
  g_autofree char *plan_path = g_build_filename (dir, "plan.json", NULL);
  if (!write_json (plan_path, _fb_bundle_plan_to_json (plan, offsets), error))
    {
      json_array_unref (files);
      return FALSE;
    }
  if (options && options->extra_files)
    {
      GHashTableIter it;
      gpointer key, value;
      g_hash_table_iter_init (&it, options->extra_files);
      while (g_hash_table_iter_next (&it, &key, &value))
        if (!write_contents (dir, key, value, error))
          {
            json_array_unref (files);
            return FALSE;
          }
    }
  gboolean shared = options && options->shared_library;
  if (shared && options->write_library == NULL)
    {
      json_array_unref (files);
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_FAILED,
                   "the %s target makes no shared library", options->target ? options->target : "cpu");
      return FALSE;
    }
  if (shared && !options->write_library (dir, plan, objects, weights, offsets, graph, error))
    {
      json_array_unref (files);
      return FALSE;
    }

  JsonObject *m = json_object_new ();
  json_object_set_string_member (m, "format", FB_BUNDLE_FORMAT);
  json_object_set_int_member (m, "version", FB_BUNDLE_VERSION);
  json_object_set_string_member (m, "target",
                                 options && options->target ? options->target : "cpu");
  json_object_set_string_member (m, "host", plan->target);
  json_object_set_string_member (m, "source", options && options->source ? options->source : "");
  json_object_set_string_member (m, "pipeline", options && options->pipeline ? options->pipeline : "");
  json_object_set_string_member (m, "fusebench_version", FB_VERSION);
  json_object_set_array_member (m, "inputs", tensors_json (graph, graph->inputs));
  json_object_set_array_member (m, "outputs", tensors_json (graph, graph->outputs));
  json_object_set_int_member (m, "kernels", plan->kernels->len);
  json_object_set_int_member (m, "arena_bytes", plan->arena_bytes);
  json_object_set_int_member (m, "weights_bytes", g_bytes_get_size (weights));
  json_object_set_array_member (m, "objects", files);
  json_object_set_string_member (m, "plan", "plan.json");
  json_object_set_string_member (m, "weights", "weights.bin");
  json_object_set_string_member (m, "graph", "model.onnx");
  if (shared)
    {
      json_object_set_string_member (m, "shared_library", "lib/libfbmodel.so");
      json_object_set_string_member (m, "header", "lib/fb-model.h");
    }
  g_autofree char *manifest = g_build_filename (dir, "manifest.json", NULL);
  return write_json (manifest, m, error);
}

gboolean
fb_bundle_write (const char *path, FbPlan *plan, GPtrArray *objects, const FbGraph *graph,
                 const FbBundleOptions *options, GError **error)
{
  g_return_val_if_fail (path != NULL && plan != NULL && objects != NULL && graph != NULL, FALSE);
  g_autofree char *tmp = g_strdup_printf ("%s.tmp-XXXXXX", path);
  if (g_mkdtemp (tmp) == NULL)
    return _fb_bundle_io_error (error, path, errno);
  if (!fill_folder (tmp, plan, objects, graph, options, error))
    {
      remove_tree (tmp);
      return FALSE;
    }
  /* A folder cannot be renamed over a folder: the old bundle steps aside first. */
  g_autofree char *old = NULL;
  if (g_file_test (path, G_FILE_TEST_EXISTS))
    {
      if (!fb_bundle_is_bundle (path))
        {
          remove_tree (tmp);
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                       "%s: exists and is not a bundle; not replacing it", path);
          return FALSE;
        }
      old = g_strdup_printf ("%s.old-XXXXXX", path);
      if (g_mkdtemp (old) == NULL || g_rmdir (old) != 0 || g_rename (path, old) != 0)
        {
          int err = errno;
          remove_tree (tmp);
          return _fb_bundle_io_error (error, path, err);
        }
    }
  if (g_rename (tmp, path) != 0)
    {
      int err = errno;
      if (old)
        g_rename (old, path);
      remove_tree (tmp);
      return _fb_bundle_io_error (error, path, err);
    }
  if (old)
    remove_tree (old);
  return TRUE;
}
