/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Tensor files: ONNX TensorProto (.pb) through the generated protobuf-c code, numpy .npy by
 * hand (its header is a short Python dict literal). Writes go through a temporary file and a
 * rename, so an interrupted run never leaves half a file behind. */
#include "fb-onnx-private.h"
#include "fb-tensor-io.h"

#include <string.h>

static gboolean
is_npy (const char *path)
{
  return g_str_has_suffix (path, ".npy");
}

/* ---- .pb --------------------------------------------------------------------------------- */

static FbTensor *
load_pb (const char *path, GBytes *bytes, char **name, GError **error)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  Onnx__TensorProto *proto;
  FbOnnxContext ctx;
  FbTensor *t;
  g_autofree char *dir = g_path_get_dirname (path);

  proto = size > 0 ? onnx__tensor_proto__unpack (NULL, size, data) : NULL;
  if (proto == NULL)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_PARSE,
                   "%s: not an ONNX TensorProto (empty, truncated or corrupted)", path);
      return NULL;
    }
  _fb_onnx_context_init (&ctx, dir, NULL, proto);
  t = _fb_onnx_tensor_decode (&ctx, proto, error);
  if (t != NULL && name != NULL)
    *name = g_strdup (proto->name ? proto->name : "");
  _fb_onnx_context_clear (&ctx);
  if (t == NULL)
    g_prefix_error (error, "%s: ", path);
  return t;
}

gboolean
_fb_onnx_tensor_pack (const FbTensor *t, const char *name, GBytes **out)
{
  Onnx__TensorProto proto = ONNX__TENSOR_PROTO__INIT;
  int64_t dims[FB_MAX_RANK];
  gsize len;
  guint8 *buf;

  for (int i = 0; i < t->rank; i++)
    dims[i] = t->dims[i];
  proto.n_dims = (size_t) t->rank;
  proto.dims = dims;
  proto.has_data_type = TRUE;
  proto.data_type = t->dtype;
  proto.name = (char *) (name ? name : "");
  proto.has_raw_data = TRUE;
  proto.raw_data.len = fb_tensor_nbytes (t);
  proto.raw_data.data = (guint8 *) fb_tensor_data (t);
  len = onnx__tensor_proto__get_packed_size (&proto);
  buf = g_malloc (MAX (len, 1));
  onnx__tensor_proto__pack (&proto, buf);
  *out = g_bytes_new_take (buf, len);
  return TRUE;
}

/* ---- .npy -------------------------------------------------------------------------------- */

static const struct { FbDType dtype; const char *descr; } npy_types[] = {
  { FB_DTYPE_FLOAT32, "<f4" }, { FB_DTYPE_FLOAT64, "<f8" }, { FB_DTYPE_FLOAT16, "<f2" },
  { FB_DTYPE_INT64, "<i8" },   { FB_DTYPE_INT32, "<i4" },   { FB_DTYPE_INT16, "<i2" },
  { FB_DTYPE_INT8, "|i1" },    { FB_DTYPE_UINT8, "|u1" },   { FB_DTYPE_UINT16, "<u2" },
  { FB_DTYPE_UINT32, "<u4" },  { FB_DTYPE_UINT64, "<u8" },  { FB_DTYPE_BOOL, "|b1" },
};

/* Finds the value of 'key' in the header dict and returns a pointer just past "'key':". */
static const char *
npy_field (const char *header, const char *key)
{
  g_autofree char *quoted = g_strdup_printf ("'%s'", key);
  const char *p = strstr (header, quoted);

  if (p == NULL)
    return NULL;
  p += strlen (quoted);
  while (*p == ' ')
    p++;
  if (*p != ':')
    return NULL;
  p++;
  while (*p == ' ')
    p++;
  return p;
}

static FbTensor *
load_npy (const char *path, GBytes *bytes, GError **error)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  g_autofree char *header = NULL;
  const char *p;
  gsize header_len, offset;
  FbDType dtype = FB_DTYPE_UNDEFINED;
  int64_t dims[FB_MAX_RANK];
  int rank = 0;
  g_autoptr(GBytes) payload = NULL;
  g_autoptr(GError) local = NULL;
  FbTensor *t;

  if (size < 10 || memcmp (data, "\x93NUMPY", 6) != 0)
    goto bad;
  if (data[6] == 1)
    {
      header_len = data[8] | (data[9] << 8);
      offset = 10;
    }
  else if ((data[6] == 2 || data[6] == 3) && size >= 12)
    {
      header_len = (gsize) data[8] | ((gsize) data[9] << 8) | ((gsize) data[10] << 16) |
                   ((gsize) data[11] << 24);
      offset = 12;
    }
  else
    goto bad;
  if (header_len > size - offset)
    goto bad;
  header = g_strndup ((const char *) data + offset, header_len);
  offset += header_len;

  if ((p = npy_field (header, "fortran_order")) == NULL || !g_str_has_prefix (p, "False"))
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                   "%s: Fortran-ordered arrays are not supported; save with C order", path);
      return NULL;
    }
  if ((p = npy_field (header, "descr")) == NULL || *p != '\'')
    goto bad;
  for (guint i = 0; i < G_N_ELEMENTS (npy_types); i++)
    if (strncmp (p + 1, npy_types[i].descr, 3) == 0 && p[4] == '\'')
      dtype = npy_types[i].dtype;
  if (dtype == FB_DTYPE_UNDEFINED)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                   "%s: numpy type %.8s is not supported (little-endian numbers and bools are)", path, p);
      return NULL;
    }
  if ((p = npy_field (header, "shape")) == NULL || *p != '(')
    goto bad;
  for (p++; *p != ')'; )
    {
      char *end;
      gint64 v;
      while (*p == ' ' || *p == ',')
        p++;
      if (*p == ')')
        break;
      v = g_ascii_strtoll (p, &end, 10);
      if (end == p || v < 0 || rank == FB_MAX_RANK)
        goto bad;
      dims[rank++] = v;
      p = end;
    }
  {
    int64_t numel = 1;
    for (int i = 0; i < rank; i++)
      if (__builtin_mul_overflow (numel, dims[i], &numel))
        goto bad;
    if ((guint64) numel > (size - offset) / fb_dtype_size (dtype) ||
        (gsize) numel * fb_dtype_size (dtype) != size - offset)
      {
        g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_PARSE,
                     "%s: holds %" G_GSIZE_FORMAT " data bytes, its header's shape needs %" G_GINT64_FORMAT
                     " elements", path, size - offset, numel);
        return NULL;
      }
    payload = g_bytes_new_from_bytes (bytes, offset, size - offset);
  }
  t = fb_tensor_new_for_bytes (dtype, rank, dims, payload, &local);
  if (t == NULL)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_PARSE, "%s: %s", path, local->message);
      return NULL;
    }
  return t;

bad:
  g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_PARSE,
               "%s: not a valid .npy file (bad magic, header or shape)", path);
  return NULL;
}

static GBytes *
save_npy (const FbTensor *t)
{
  GString *header = g_string_new (NULL);
  GByteArray *out;
  const char *descr = NULL;
  gsize total;

  for (guint i = 0; i < G_N_ELEMENTS (npy_types); i++)
    if (npy_types[i].dtype == t->dtype)
      descr = npy_types[i].descr;
  g_assert (descr != NULL);
  g_string_append_printf (header, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < t->rank; i++)
    g_string_append_printf (header, "%" G_GINT64_FORMAT "%s", t->dims[i],
                            t->rank == 1 ? "," : (i + 1 < t->rank ? ", " : ""));
  g_string_append (header, "), }");
  /* Pad so that the data starts on a 64-byte boundary, ending the header with a newline. */
  total = 10 + header->len + 1;
  while (total % 64 != 0)
    {
      g_string_append_c (header, ' ');
      total++;
    }
  g_string_append_c (header, '\n');
  out = g_byte_array_new ();
  g_byte_array_append (out, (const guint8 *) "\x93NUMPY\x01\x00", 8);
  guint8 len[2] = { header->len & 0xff, (header->len >> 8) & 0xff };
  g_byte_array_append (out, len, 2);
  g_byte_array_append (out, (const guint8 *) header->str, header->len);
  g_byte_array_append (out, fb_tensor_data (t), fb_tensor_nbytes (t));
  g_string_free (header, TRUE);
  return g_byte_array_free_to_bytes (out);
}

/* ---- public ------------------------------------------------------------------------------ */

FbTensor *
fb_value_load_file (const char *path, FbValueKind kind, FbDType dtype, char **name,
                    GError **error)
{
  g_autoptr(GMappedFile) mapped = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) local = NULL;
  g_autofree char *dir = NULL;
  FbTensor *t;

  g_return_val_if_fail (path != NULL, NULL);
  if (kind == FB_KIND_TENSOR)
    return fb_tensor_load_file (path, name, error);
  if (name)
    *name = NULL;
  if (is_npy (path))
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                   "%s: a %s cannot be read from .npy; give a .pb file (an ONNX %s)", path,
                   fb_value_kind_name (kind),
                   kind == FB_KIND_SEQUENCE ? "SequenceProto" : "OptionalProto");
      return NULL;
    }
  mapped = g_mapped_file_new (path, FALSE, &local);
  if (mapped == NULL)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_IO, "%s", local->message);
      return NULL;
    }
  bytes = g_mapped_file_get_bytes (mapped);
  dir = g_path_get_dirname (path);
  t = _fb_onnx_value_decode (bytes, kind, dtype, dir, name, error);
  if (t == NULL)
    g_prefix_error (error, "%s: ", path);
  return t;
}

FbTensor *
fb_tensor_load_file (const char *path, char **name, GError **error)
{
  g_autoptr(GMappedFile) mapped = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) local = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  if (name)
    *name = NULL;
  mapped = g_mapped_file_new (path, FALSE, &local);
  if (mapped == NULL)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_IO, "%s", local->message);
      return NULL;
    }
  bytes = g_mapped_file_get_bytes (mapped);
  if (is_npy (path))
    return load_npy (path, bytes, error);
  return load_pb (path, bytes, name, error);
}

gboolean
fb_tensor_save_file (const FbTensor *tensor, const char *name, const char *path, GError **error)
{
  g_autoptr(GBytes) bytes = NULL;
  gsize size;
  const char *data;

  g_return_val_if_fail (tensor != NULL && path != NULL, FALSE);
  if (is_npy (path) && tensor->kind != FB_KIND_TENSOR)
    {
      g_autofree char *what = fb_tensor_describe (tensor);
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                   "%s: %s cannot be written as .npy; write a .pb file (an ONNX SequenceProto "
                   "or OptionalProto) instead", path, what);
      return FALSE;
    }
  if (is_npy (path) && tensor->dtype == FB_DTYPE_BFLOAT16)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                   "%s: numpy has no bfloat16 type; write a .pb file instead", path);
      return FALSE;
    }
  if (is_npy (path))
    bytes = save_npy (tensor);
  else if (tensor->kind != FB_KIND_TENSOR)
    {
      if ((bytes = _fb_onnx_value_pack (tensor, name, error)) == NULL)
        {
          g_prefix_error (error, "%s: ", path);
          return FALSE;
        }
    }
  else
    _fb_onnx_tensor_pack (tensor, name, &bytes);
  data = g_bytes_get_data (bytes, &size);
  /* g_file_set_contents writes a temporary file and renames it over the target. */
  return g_file_set_contents (path, data, (gssize) size, error);
}
