/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-tensor.h"
#include "fb-graph.h"

#include <string.h>

/* Refuse single tensors beyond this size outright, before asking the allocator: a hostile file
 * can claim any shape, and a clear error beats an out-of-memory kill. */
#define FB_TENSOR_MAX_BYTES (G_GINT64_CONSTANT (1) << 36)

static gboolean
compute_numel (FbDType dtype, int rank, const int64_t *dims, int64_t *numel, gsize *nbytes,
               GError **error)
{
  int64_t n = 1;
  gsize esize = fb_dtype_size (dtype);

  if (esize == 0)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                   "tensors of element type %s (%d) are not supported", fb_dtype_name (dtype), dtype);
      return FALSE;
    }
  if (rank < 0 || rank > FB_MAX_RANK)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                   "tensor rank %d is outside 0..%d", rank, FB_MAX_RANK);
      return FALSE;
    }
  for (int i = 0; i < rank; i++)
    {
      if (dims[i] < 0)
        {
          g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
                       "tensor dimension %d is negative (%" G_GINT64_FORMAT ")", i, dims[i]);
          return FALSE;
        }
      if (__builtin_mul_overflow (n, dims[i], &n))
        {
          g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
                       "tensor element count overflows 64 bits");
          return FALSE;
        }
    }
  if (n > FB_TENSOR_MAX_BYTES / (int64_t) esize)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
                   "tensor of %" G_GINT64_FORMAT " elements is larger than the %" G_GINT64_FORMAT
                   " GiB limit", n, FB_TENSOR_MAX_BYTES >> 30);
      return FALSE;
    }
  *numel = n;
  *nbytes = (gsize) n * esize;
  return TRUE;
}

static FbTensor *
tensor_alloc (FbDType dtype, int rank, const int64_t *dims, int64_t numel)
{
  FbTensor *t = g_new0 (FbTensor, 1);

  g_atomic_ref_count_init (&t->ref_count);
  t->dtype = dtype;
  t->rank = rank;
  for (int i = 0; i < rank; i++)
    t->dims[i] = dims[i];
  t->numel = numel;
  return t;
}

FbTensor *
fb_tensor_new (FbDType dtype, int rank, const int64_t *dims, GError **error)
{
  int64_t numel;
  gsize nbytes;
  gpointer data;
  FbTensor *t;

  g_return_val_if_fail (rank == 0 || dims != NULL, NULL);
  if (!compute_numel (dtype, rank, dims, &numel, &nbytes, error))
    return NULL;
  data = g_try_malloc0 (MAX (nbytes, 1));
  if (data == NULL)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
                   "out of memory allocating a tensor of %" G_GSIZE_FORMAT " bytes", nbytes);
      return NULL;
    }
  t = tensor_alloc (dtype, rank, dims, numel);
  t->bytes = g_bytes_new_take (data, nbytes);
  t->writable = TRUE;
  return t;
}

FbTensor *
fb_tensor_new_for_bytes (FbDType dtype, int rank, const int64_t *dims, GBytes *bytes,
                         GError **error)
{
  int64_t numel;
  gsize nbytes;
  FbTensor *t;

  g_return_val_if_fail (bytes != NULL, NULL);
  if (!compute_numel (dtype, rank, dims, &numel, &nbytes, error))
    return NULL;
  if (g_bytes_get_size (bytes) != nbytes)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
                   "tensor data holds %" G_GSIZE_FORMAT " bytes but its shape needs %" G_GSIZE_FORMAT,
                   g_bytes_get_size (bytes), nbytes);
      return NULL;
    }
  t = tensor_alloc (dtype, rank, dims, numel);
  t->bytes = g_bytes_ref (bytes);
  return t;
}

FbTensor *
fb_tensor_new_scalar_f32 (float value)
{
  FbTensor *t = fb_tensor_new (FB_DTYPE_FLOAT32, 0, NULL, NULL);
  *(float *) fb_tensor_data_mut (t) = value;
  return t;
}

FbTensor *
fb_tensor_new_scalar_i64 (int64_t value)
{
  FbTensor *t = fb_tensor_new (FB_DTYPE_INT64, 0, NULL, NULL);
  *(int64_t *) fb_tensor_data_mut (t) = value;
  return t;
}

FbTensor *
fb_tensor_ref (FbTensor *tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  g_atomic_ref_count_inc (&tensor->ref_count);
  return tensor;
}

void
fb_tensor_unref (FbTensor *tensor)
{
  if (tensor == NULL)
    return;
  if (g_atomic_ref_count_dec (&tensor->ref_count))
    {
      g_bytes_unref (tensor->bytes);
      if (tensor->items != NULL)
        g_ptr_array_unref (tensor->items);
      g_free (tensor);
    }
}

const void *
fb_tensor_data (const FbTensor *tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  return g_bytes_get_data (tensor->bytes, NULL);
}

void *
fb_tensor_data_mut (FbTensor *tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  g_return_val_if_fail (tensor->writable, NULL);
  return (void *) g_bytes_get_data (tensor->bytes, NULL);
}

gsize
fb_tensor_nbytes (const FbTensor *tensor)
{
  g_return_val_if_fail (tensor != NULL, 0);
  return g_bytes_get_size (tensor->bytes);
}

FbShape
fb_tensor_shape (const FbTensor *tensor)
{
  return fb_shape_make (tensor->rank, tensor->dims);
}

double
fb_tensor_get_f64 (const FbTensor *t, int64_t i)
{
  const void *d = fb_tensor_data (t);

  g_assert (i >= 0 && i < t->numel);
  switch (t->dtype)
    {
    case FB_DTYPE_FLOAT32:  return ((const float *) d)[i];
    case FB_DTYPE_FLOAT64:  return ((const double *) d)[i];
    case FB_DTYPE_FLOAT16:  return fb_half_to_float (((const uint16_t *) d)[i]);
    case FB_DTYPE_BFLOAT16: return fb_bfloat16_to_float (((const uint16_t *) d)[i]);
    default:                return (double) fb_tensor_get_i64 (t, i);
    }
}

int64_t
fb_tensor_get_i64 (const FbTensor *t, int64_t i)
{
  const void *d = fb_tensor_data (t);

  g_assert (i >= 0 && i < t->numel);
  switch (t->dtype)
    {
    case FB_DTYPE_UINT8:  case FB_DTYPE_BOOL: return ((const uint8_t *) d)[i];
    case FB_DTYPE_INT8:   return ((const int8_t *) d)[i];
    case FB_DTYPE_UINT16: return ((const uint16_t *) d)[i];
    case FB_DTYPE_INT16:  return ((const int16_t *) d)[i];
    case FB_DTYPE_INT32:  return ((const int32_t *) d)[i];
    case FB_DTYPE_UINT32: return ((const uint32_t *) d)[i];
    case FB_DTYPE_INT64:  return ((const int64_t *) d)[i];
    case FB_DTYPE_UINT64: return (int64_t) ((const uint64_t *) d)[i];
    default:
      {
        double v = fb_tensor_get_f64 (t, i);
        /* Float to integer conversion truncates toward zero and saturates, never UB. */
        if (v != v) return 0;
        if (v >= 9.2233720368547758e18) return G_MAXINT64;
        if (v <= -9.2233720368547758e18) return G_MININT64;
        return (int64_t) v;
      }
    }
}

void
fb_tensor_set_f64 (FbTensor *t, int64_t i, double v)
{
  void *d = fb_tensor_data_mut (t);
  int64_t iv;

  g_assert (i >= 0 && i < t->numel);
  switch (t->dtype)
    {
    case FB_DTYPE_FLOAT32:  ((float *) d)[i] = (float) v; return;
    case FB_DTYPE_FLOAT64:  ((double *) d)[i] = v; return;
    case FB_DTYPE_FLOAT16:  ((uint16_t *) d)[i] = fb_float_to_half ((float) v); return;
    case FB_DTYPE_BFLOAT16: ((uint16_t *) d)[i] = fb_float_to_bfloat16 ((float) v); return;
    case FB_DTYPE_BOOL:     ((uint8_t *) d)[i] = v != 0; return;
    default: break;
    }
  if (v != v)
    iv = 0;
  else if (v >= 9.2233720368547758e18)
    iv = G_MAXINT64;
  else if (v <= -9.2233720368547758e18)
    iv = G_MININT64;
  else
    iv = (int64_t) v;
  switch (t->dtype)
    {
    case FB_DTYPE_UINT8:  ((uint8_t *) d)[i] = (uint8_t) iv; break;
    case FB_DTYPE_INT8:   ((int8_t *) d)[i] = (int8_t) iv; break;
    case FB_DTYPE_UINT16: ((uint16_t *) d)[i] = (uint16_t) iv; break;
    case FB_DTYPE_INT16:  ((int16_t *) d)[i] = (int16_t) iv; break;
    case FB_DTYPE_INT32:  ((int32_t *) d)[i] = (int32_t) iv; break;
    case FB_DTYPE_UINT32: ((uint32_t *) d)[i] = (uint32_t) iv; break;
    case FB_DTYPE_INT64:  ((int64_t *) d)[i] = iv; break;
    case FB_DTYPE_UINT64: ((uint64_t *) d)[i] = (uint64_t) iv; break;
    default: g_assert_not_reached ();
    }
}

FbTensor *
fb_tensor_copy (const FbTensor *tensor)
{
  FbTensor *t;

  g_return_val_if_fail (tensor != NULL, NULL);
  /* Sequences and optionals never change once made: sharing them is copying them. */
  if (tensor->kind != FB_KIND_TENSOR)
    return fb_tensor_ref ((FbTensor *) tensor);
  t = fb_tensor_new (tensor->dtype, tensor->rank, tensor->dims, NULL);
  if (t != NULL)
    memcpy (fb_tensor_data_mut (t), fb_tensor_data (tensor), fb_tensor_nbytes (tensor));
  return t;
}

FbTensor *
fb_tensor_broadcast (const FbTensor *tensor, FbDType dtype, int rank, const int64_t *dims,
                     GError **error)
{
  g_return_val_if_fail (tensor != NULL && dims != NULL, NULL);
  gboolean fits = tensor->rank <= rank;
  for (int d = 0; fits && d < tensor->rank; d++)
    {
      int64_t td = tensor->dims[tensor->rank - 1 - d];
      fits = td == 1 || td == dims[rank - 1 - d];
    }
  if (!fits)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
                   "a tensor of rank %d does not broadcast to rank %d", tensor->rank, rank);
      return NULL;
    }
  g_autoptr(FbTensor) out = fb_tensor_new (dtype, rank, dims, error);
  if (out == NULL)
    return NULL;
  /* Each output dimension's stride in tensor: 0 where tensor has no such dimension or
   * broadcasts it. */
  int64_t stride[FB_MAX_RANK] = { 0 }, at = 1, idx[FB_MAX_RANK] = { 0 };
  for (int d = 0; d < tensor->rank; d++)
    {
      int td = tensor->rank - 1 - d;
      stride[rank - 1 - d] = tensor->dims[td] == 1 ? 0 : at;
      at *= tensor->dims[td];
    }
  int64_t src = 0;
  for (int64_t i = 0; i < out->numel; i++)
    {
      fb_tensor_set_f64 (out, i, fb_tensor_get_f64 (tensor, src));
      for (int d = rank - 1; d >= 0; d--)
        {
          src += stride[d];
          if (++idx[d] < dims[d])
            break;
          src -= stride[d] * dims[d];
          idx[d] = 0;
        }
    }
  return g_steal_pointer (&out);
}

FbTensor *
fb_tensor_cast (const FbTensor *tensor, FbDType dtype, GError **error)
{
  FbTensor *t;
  gboolean exact_int;

  g_return_val_if_fail (tensor != NULL, NULL);
  t = fb_tensor_new (dtype, tensor->rank, tensor->dims, error);
  if (t == NULL)
    return NULL;
  /* Integers go through int64 so that large int64 values survive exactly. */
  exact_int = !fb_dtype_is_float (tensor->dtype) && !fb_dtype_is_float (dtype) &&
              dtype != FB_DTYPE_BOOL;
  for (int64_t i = 0; i < tensor->numel; i++)
    {
      if (exact_int && dtype == FB_DTYPE_INT64)
        ((int64_t *) fb_tensor_data_mut (t))[i] = fb_tensor_get_i64 (tensor, i);
      else
        fb_tensor_set_f64 (t, i, fb_tensor_get_f64 (tensor, i));
    }
  return t;
}
