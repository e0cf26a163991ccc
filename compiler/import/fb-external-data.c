/* SPDX-License-Identifier: GPL-3.0-or-later */
/* External tensor data (data_location: EXTERNAL): files beside the model, memory-mapped once
 * and sliced, so hundreds of megabytes of weights are never copied. */
#include "fb-onnx-private.h"

#include <string.h>

static void
message_free (gpointer data)
{
  protobuf_c_message_free_unpacked (data, NULL);
}

void
_fb_onnx_context_init (FbOnnxContext *ctx, const char *base_dir, Onnx__ModelProto *model,
                       Onnx__TensorProto *tensor)
{
  ProtobufCMessage *msg = model ? &model->base : (tensor ? &tensor->base : NULL);

  memset (ctx, 0, sizeof *ctx);
  ctx->base_dir = g_strdup (base_dir);
  ctx->external_files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                               (GDestroyNotify) g_bytes_unref);
  if (msg != NULL)
    ctx->message = g_bytes_new_with_free_func (msg, 1, message_free, msg);
}

void
_fb_onnx_context_clear (FbOnnxContext *ctx)
{
  g_clear_pointer (&ctx->external_files, g_hash_table_unref);
  g_clear_pointer (&ctx->message, g_bytes_unref);
  g_clear_pointer (&ctx->base_dir, g_free);
}

/* A location must stay inside the model's folder: a hostile model must not read /etc/passwd. */
static gboolean
location_is_safe (const char *location)
{
  g_auto(GStrv) parts = NULL;

  if (location == NULL || *location == '\0' || g_path_is_absolute (location) ||
      strchr (location, '\\') != NULL)
    return FALSE;
  parts = g_strsplit (location, "/", -1);
  for (guint i = 0; parts[i]; i++)
    if (g_str_equal (parts[i], ".."))
      return FALSE;
  return TRUE;
}

static GBytes *
map_file (FbOnnxContext *ctx, const char *location, const char *tensor, GError **error)
{
  g_autofree char *path = NULL;
  g_autoptr(GError) local = NULL;
  GMappedFile *mapped;
  GBytes *bytes;

  bytes = g_hash_table_lookup (ctx->external_files, location);
  if (bytes != NULL)
    return bytes;
  path = g_build_filename (ctx->base_dir, location, NULL);
  mapped = g_mapped_file_new (path, FALSE, &local);
  if (mapped == NULL)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_IO,
                   "tensor '%s': cannot read its external data file '%s': %s",
                   tensor, location, local->message);
      return NULL;
    }
  bytes = g_mapped_file_get_bytes (mapped);
  g_mapped_file_unref (mapped);
  g_hash_table_insert (ctx->external_files, g_strdup (location), bytes);
  return bytes;
}

GBytes *
_fb_external_data_read (FbOnnxContext *ctx, const Onnx__TensorProto *proto, gsize nbytes,
                        GError **error)
{
  const char *name = proto->name ? proto->name : "";
  const char *location = NULL;
  guint64 offset = 0, length = nbytes;
  gboolean has_length = FALSE;
  GBytes *file;
  gsize file_size;

  for (size_t i = 0; i < proto->n_external_data; i++)
    {
      const Onnx__StringStringEntryProto *e = proto->external_data[i];
      if (e == NULL || e->key == NULL || e->value == NULL)
        continue;
      if (g_str_equal (e->key, "location"))
        location = e->value;
      else if (g_str_equal (e->key, "offset") || g_str_equal (e->key, "length"))
        {
          guint64 v;
          if (!g_ascii_string_to_unsigned (e->value, 10, 0, G_MAXUINT64, &v, NULL))
            {
              g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                           "tensor '%s': external data %s '%s' is not a number", name, e->key, e->value);
              return NULL;
            }
          if (g_str_equal (e->key, "offset"))
            offset = v;
          else
            {
              length = v;
              has_length = TRUE;
            }
        }
    }
  if (ctx->base_dir == NULL)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                   "tensor '%s': external data cannot be resolved for a model read from memory", name);
      return NULL;
    }
  if (!location_is_safe (location))
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                   "tensor '%s': external data location '%s' is not a relative path inside the "
                   "model's folder", name, location ? location : "");
      return NULL;
    }
  if (has_length && length != nbytes)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                   "tensor '%s': external data length %" G_GUINT64_FORMAT " does not match the %"
                   G_GSIZE_FORMAT " bytes its shape needs", name, length, nbytes);
      return NULL;
    }
  file = map_file (ctx, location, name, error);
  if (file == NULL)
    return NULL;
  file_size = g_bytes_get_size (file);
  if (offset > file_size || nbytes > file_size - offset)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_IO,
                   "tensor '%s': external data file '%s' is too short: needs bytes %" G_GUINT64_FORMAT
                   "..%" G_GUINT64_FORMAT ", the file has %" G_GSIZE_FORMAT,
                   name, location, offset, offset + nbytes, file_size);
      return NULL;
    }
  return g_bytes_new_from_bytes (file, offset, nbytes);
}
