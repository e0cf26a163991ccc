/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ONNX SequenceProto and OptionalProto files (the backend-test layout's input_K.pb for sequence
 * and optional values). Debian's libonnx-dev installs onnx.proto but not onnx-data.proto, where
 * these two messages live, so their fields are read and written on the protobuf wire format
 * here; the tensors inside are TensorProtos, decoded by the generated code as usual.
 *
 *   SequenceProto { string name = 1; int32 elem_type = 2; repeated TensorProto tensor_values = 3;
 *                   ... repeated SequenceProto sequence_values = 5; ... }
 *   OptionalProto { string name = 1; int32 elem_type = 2; TensorProto tensor_value = 3;
 *                   ... SequenceProto sequence_value = 5; ... }
 *   elem_type: 0 undefined, 1 tensor, 2 sparse tensor, 3 sequence, 4 map, 5 optional. */
#include "fb-onnx-private.h"

#include <string.h>

enum { ELEM_UNDEFINED = 0, ELEM_TENSOR = 1, ELEM_SEQUENCE = 3 };
enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_BYTES = 2, WIRE_FIXED32 = 5 };

typedef struct {
  const guint8 *p, *end;
} Reader;

static gboolean
read_varint (Reader *r, guint64 *out)
{
  guint64 v = 0;

  for (int shift = 0; shift < 64 && r->p < r->end; shift += 7)
    {
      guint8 b = *r->p++;
      v |= (guint64) (b & 0x7f) << shift;
      if ((b & 0x80) == 0)
        {
          *out = v;
          return TRUE;
        }
    }
  return FALSE;
}

/* The next field: its number, wire type and, for length-delimited fields, the bytes. */
static gboolean
read_field (Reader *r, guint *field, guint *wire, const guint8 **data, gsize *len)
{
  guint64 key, v;

  if (!read_varint (r, &key))
    return FALSE;
  *field = (guint) (key >> 3);
  *wire = (guint) (key & 7);
  *data = NULL;
  *len = 0;
  switch (*wire)
    {
    case WIRE_VARINT:
      if (!read_varint (r, &v))
        return FALSE;
      *len = (gsize) v;   /* the value itself, for varints */
      return TRUE;
    case WIRE_FIXED64:
    case WIRE_FIXED32:
      {
        gsize n = *wire == WIRE_FIXED64 ? 8 : 4;
        if ((gsize) (r->end - r->p) < n)
          return FALSE;
        r->p += n;
        return TRUE;
      }
    case WIRE_BYTES:
      if (!read_varint (r, &v) || v > (guint64) (r->end - r->p))
        return FALSE;
      *data = r->p;
      *len = (gsize) v;
      r->p += v;
      return TRUE;
    default:
      return FALSE;
    }
}

static gboolean
corrupt (GError **error, const char *what)
{
  g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_PARSE,
               "not an ONNX %s (truncated or corrupted)", what);
  return FALSE;
}

static FbTensor *
decode_tensor (const guint8 *data, gsize len, const char *base_dir, GError **error)
{
  Onnx__TensorProto *proto = onnx__tensor_proto__unpack (NULL, len, data);
  FbOnnxContext ctx;
  FbTensor *t;

  if (proto == NULL)
    {
      corrupt (error, "TensorProto inside the sequence or optional");
      return NULL;
    }
  _fb_onnx_context_init (&ctx, base_dir, NULL, proto);
  t = _fb_onnx_tensor_decode (&ctx, proto, error);
  _fb_onnx_context_clear (&ctx);
  return t;
}

static gboolean
unsupported_elem (GError **error, const char *what, guint64 elem)
{
  g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
               "the %s holds %s, which is not supported (tensors are)", what,
               elem == 2 ? "sparse tensors" : elem == 3 ? "sequences" : elem == 4 ? "maps"
               : elem == 5 ? "optionals" : "values of an unknown kind");
  return FALSE;
}

static FbTensor *
decode_sequence (const guint8 *data, gsize len, FbDType dtype, const char *base_dir, char **name,
                 GError **error)
{
  Reader r = { data, data + len };
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  guint field, wire;
  const guint8 *d;
  gsize n;

  while (r.p < r.end)
    {
      if (!read_field (&r, &field, &wire, &d, &n))
        return corrupt (error, "SequenceProto"), NULL;
      if (field == 1 && wire == WIRE_BYTES && name != NULL)
        {
          g_free (*name);
          *name = g_strndup ((const char *) d, n);
        }
      else if (field == 2 && wire == WIRE_VARINT && n != ELEM_TENSOR && n != ELEM_UNDEFINED)
        return unsupported_elem (error, "sequence", n), NULL;
      else if (field == 3 && wire == WIRE_BYTES)
        {
          FbTensor *t = decode_tensor (d, n, base_dir, error);
          if (t == NULL)
            return NULL;
          if (items->len > 0 && t->dtype != ((FbTensor *) g_ptr_array_index (items, 0))->dtype)
            {
              fb_tensor_unref (t);
              g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                           "the sequence mixes element types (element %u)", items->len);
              return NULL;
            }
          g_ptr_array_add (items, t);
        }
      else if (field >= 4 && field <= 7)
        return unsupported_elem (error, "sequence", field == 4 ? 2 : field == 5 ? 3
                                                     : field == 6 ? 4 : 5), NULL;
    }
  if (items->len > 0)
    dtype = ((FbTensor *) g_ptr_array_index (items, 0))->dtype;
  return fb_tensor_new_sequence (dtype, items);
}

static FbTensor *
decode_optional (const guint8 *data, gsize len, FbValueKind kind, FbDType dtype,
                 const char *base_dir, char **name, GError **error)
{
  Reader r = { data, data + len };
  g_autoptr(FbTensor) item = NULL;
  guint field, wire;
  const guint8 *d;
  gsize n;

  while (r.p < r.end)
    {
      if (!read_field (&r, &field, &wire, &d, &n))
        return corrupt (error, "OptionalProto"), NULL;
      if (field == 1 && wire == WIRE_BYTES && name != NULL)
        {
          g_free (*name);
          *name = g_strndup ((const char *) d, n);
        }
      else if (field == 2 && wire == WIRE_VARINT && n != ELEM_TENSOR && n != ELEM_SEQUENCE &&
               n != ELEM_UNDEFINED)
        return unsupported_elem (error, "optional", n), NULL;
      else if ((field == 3 || field == 5) && wire == WIRE_BYTES)
        {
          gboolean seq = field == 5;
          if (seq != (kind == FB_KIND_OPTIONAL_SEQUENCE))
            {
              g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                           "the optional holds a %s where a %s is expected",
                           seq ? "sequence" : "tensor", fb_value_kind_name (kind));
              return NULL;
            }
          g_clear_pointer (&item, fb_tensor_unref);
          item = seq ? decode_sequence (d, n, dtype, base_dir, NULL, error)
                     : decode_tensor (d, n, base_dir, error);
          if (item == NULL)
            return NULL;
        }
      else if (field == 4 || field == 6 || field == 7)
        return unsupported_elem (error, "optional", field == 4 ? 2 : field == 6 ? 4 : 5), NULL;
    }
  return fb_tensor_new_optional (kind, item != NULL ? item->dtype : dtype, item);
}

FbTensor *
_fb_onnx_value_decode (GBytes *bytes, FbValueKind kind, FbDType dtype, const char *base_dir,
                       char **name, GError **error)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (bytes, &len);

  switch (kind)
    {
    case FB_KIND_SEQUENCE:
      return decode_sequence (data, len, dtype, base_dir, name, error);
    case FB_KIND_OPTIONAL:
    case FB_KIND_OPTIONAL_SEQUENCE:
      return decode_optional (data, len, kind, dtype, base_dir, name, error);
    default:
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                   "a tensor is not a sequence or an optional");
      return NULL;
    }
}

/* ---- writing ------------------------------------------------------------------------------ */

static void
put_varint (GByteArray *out, guint64 v)
{
  do
    {
      guint8 b = v & 0x7f;
      v >>= 7;
      if (v)
        b |= 0x80;
      g_byte_array_append (out, &b, 1);
    }
  while (v);
}

static void
put_bytes (GByteArray *out, guint field, const void *data, gsize len)
{
  put_varint (out, (guint64) field << 3 | WIRE_BYTES);
  put_varint (out, len);
  if (len > 0)
    g_byte_array_append (out, data, (guint) len);
}

static void
put_int (GByteArray *out, guint field, guint64 v)
{
  put_varint (out, (guint64) field << 3 | WIRE_VARINT);
  put_varint (out, v);
}

static void
put_tensor (GByteArray *out, guint field, const FbTensor *t)
{
  g_autoptr(GBytes) packed = NULL;
  gsize len;
  const void *data;

  _fb_onnx_tensor_pack (t, NULL, &packed);
  data = g_bytes_get_data (packed, &len);
  put_bytes (out, field, data, len);
}

static void
pack_sequence (GByteArray *out, const FbTensor *seq, const char *name)
{
  if (name != NULL)
    put_bytes (out, 1, name, strlen (name));
  put_int (out, 2, ELEM_TENSOR);
  for (guint i = 0; i < seq->items->len; i++)
    put_tensor (out, 3, g_ptr_array_index (seq->items, i));
}

GBytes *
_fb_onnx_value_pack (const FbTensor *value, const char *name, GError **error)
{
  GByteArray *out = g_byte_array_new ();

  if (value->kind == FB_KIND_SEQUENCE)
    pack_sequence (out, value, name);
  else
    {
      FbTensor *item = value->items->len > 0 ? g_ptr_array_index (value->items, 0) : NULL;
      if (name != NULL)
        put_bytes (out, 1, name, strlen (name));
      put_int (out, 2, value->kind == FB_KIND_OPTIONAL_SEQUENCE ? ELEM_SEQUENCE : ELEM_TENSOR);
      if (item != NULL && item->kind == FB_KIND_SEQUENCE)
        {
          g_autoptr(GByteArray) inner = g_byte_array_new ();
          pack_sequence (inner, item, NULL);
          put_bytes (out, 5, inner->data, inner->len);
        }
      else if (item != NULL)
        put_tensor (out, 3, item);
    }
  return g_byte_array_free_to_bytes (out);
}
