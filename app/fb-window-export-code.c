/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The compiled artifacts of File → Export (fb-window-export-private.h): each is asked of the
 * backend of its target, never of a target by name. */
#include "fb-window-export-private.h"
#include "fb-bundle.h"
#include "fb-remote.h"

#include <string.h>

gboolean
_fb_export_write_bytes (GFile *file, GBytes *bytes, GCancellable *cancellable, GError **error)
{
  g_autofree char *path = g_file_get_path (file);
  gsize size;
  const char *data = g_bytes_get_data (bytes, &size);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  if (path != NULL)
    return g_file_set_contents_full (path, data, size, G_FILE_SET_CONTENTS_CONSISTENT, 0644, error);
  return g_file_replace_contents (file, data, size, NULL, FALSE, G_FILE_CREATE_REPLACE_DESTINATION,
                                  NULL, cancellable, error);
}

gboolean
_fb_export_bundle (const FbGraph *graph, const char *source, const char *pipeline,
                   const char *path, gboolean shared, GCancellable *cancellable, GError **error)
{
  const FbBackend *host = fb_backend_host ();
  FbBundleOptions options = { .source = source, .pipeline = pipeline, .shared_library = shared };

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  return host->compile_bundle (host, graph, path, &options, NULL, NULL, error);
}

static gboolean
copy_into (const char *from, GFile *to, GCancellable *cancellable, GError **error)
{
  g_autoptr(GBytes) bytes = NULL;
  char *data;
  gsize size;

  if (!g_file_get_contents (from, &data, &size, error))
    return FALSE;
  bytes = g_bytes_new_take (data, size);
  return _fb_export_write_bytes (to, bytes, cancellable, error);
}

gboolean
_fb_export_shared_library (const FbGraph *graph, const char *source, const char *pipeline,
                           GFile *library, GFile *header, GCancellable *cancellable,
                           GError **error)
{
  g_autofree char *tmp = g_dir_make_tmp ("fusebench-export-XXXXXX", error);
  g_autofree char *bundle = NULL, *so = NULL, *h = NULL;
  gboolean ok;

  if (tmp == NULL)
    return FALSE;
  bundle = g_build_filename (tmp, "model.fusebench", NULL);
  so = g_build_filename (bundle, "lib", "libfbmodel.so", NULL);
  h = g_build_filename (bundle, "lib", "fb-model.h", NULL);
  ok = _fb_export_bundle (graph, source, pipeline, bundle, TRUE, cancellable, error)
       && !g_cancellable_set_error_if_cancelled (cancellable, error)
       && copy_into (h, header, cancellable, error)
       && copy_into (so, library, cancellable, error);
  fb_remote_remove_tree (tmp);
  return ok;
}

GBytes *
_fb_export_kernel_code (FbLowering *lowering, const FbKernel *kernel, gboolean object,
                        gboolean llvm_ir, GError **error)
{
  const FbBackend *backend = fb_lowering_get_backend (lowering);
  const FbKernelStages *stages;
  const char *text;

  if (object)
    return backend->emit_object (backend, kernel, error);
  if ((stages = fb_lowering_kernel_stages (lowering, kernel, error)) == NULL)
    return NULL;
  text = llvm_ir ? stages->llvm_ir_opt : stages->assembly;
  return g_bytes_new (text ? text : "", text ? strlen (text) : 0);
}

GBytes *
_fb_export_module (const FbGraph *graph, const char *suffix, GCancellable *cancellable,
                   GError **error)
{
  const FbBackend *backend = fb_backend_for_module (suffix);
  g_autoptr(FbPlan) plan = NULL;
  char *text;

  if (backend == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "this build has no target whose code is .%s", suffix);
      return NULL;
    }
  if ((plan = backend->lower (backend, graph, error)) == NULL
      || g_cancellable_set_error_if_cancelled (cancellable, error)
      || (text = backend->emit_module (backend, plan, error)) == NULL)
    return NULL;
  return g_bytes_new_take (text, strlen (text));
}
