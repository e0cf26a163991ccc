/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Helpers every kernel family uses: errors that name the node, element conversion, scalar and
 * list inputs, broadcasting and strided copies. */
#include "fb-interp-private.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_QUARK (fb-interp-error-quark, fb_interp_error)

gboolean
_fb_interp_fail (GError **error, const FbNode *node, FbInterpError code, const char *format, ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, FB_INTERP_ERROR, code, "node '%s' (%s): %s",
               node->name ? node->name : "?", node->op_type ? node->op_type : "?", message);
  return FALSE;
}

int
_fb_interp_opset (const FbNode *node)
{
  return node->opset > 0 ? node->opset : FB_INTERP_LATEST_OPSET;
}

gboolean
_fb_interp_need (const FbNode *node, FbTensor *const *in, guint i, GError **error)
{
  if (i < node->n_inputs && in[i] != NULL)
    return TRUE;
  return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "input %u is required", i);
}

/* The most memory one tensor or scratch array may take: this machine's memory, at most 64 GiB.
 * Zeroed allocations succeed lazily far beyond it, and the first write would then bring the
 * out-of-memory killer instead of an error naming the node. */
static int64_t
memory_limit (void)
{
  static gsize limit;

  if (g_once_init_enter (&limit))
    {
      long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);
      int64_t bytes = G_GINT64_CONSTANT (1) << 36;
      if (pages > 0 && page > 0 && (int64_t) pages < bytes / page)
        bytes = (int64_t) pages * page;
      g_once_init_leave (&limit, (gsize) bytes);
    }
  return (int64_t) limit;
}

FbTensor *
_fb_interp_new (const FbNode *node, FbDType dtype, int rank, const int64_t *dims, GError **error)
{
  g_autoptr(GError) local = NULL;
  FbShape shape = fb_shape_make (rank, dims);
  gboolean overflow;
  int64_t n = fb_shape_numel (&shape, &overflow);
  FbTensor *t;

  if (overflow)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "its output would have more than 2^63 elements"), NULL;
  if (n > memory_limit () / (int64_t) MAX (fb_dtype_size (dtype), 1))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "its output of %" G_GINT64_FORMAT " elements would not fit in "
                            "memory", n), NULL;
  t = fb_tensor_new (dtype, rank, dims, &local);
  if (t == NULL)
    _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "cannot make its output: %s",
                     local->message);
  return t;
}

gpointer
_fb_interp_alloc (const FbNode *node, int64_t n, gsize size, GError **error)
{
  int64_t bytes;
  gpointer p = NULL;

  if (n >= 0 && !__builtin_mul_overflow (MAX (n, 1), (int64_t) size, &bytes) &&
      bytes <= memory_limit ())
    p = g_try_malloc0 ((gsize) bytes);
  if (p == NULL)
    _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                     "cannot hold %" G_GINT64_FORMAT " intermediate values", n);
  return p;
}

FbTensor *
_fb_interp_view (const FbNode *node, FbTensor *x, int rank, const int64_t *dims, GError **error)
{
  g_autoptr(GError) local = NULL;
  FbTensor *t = fb_tensor_new_for_bytes (x->dtype, rank, dims, x->bytes, &local);

  if (t == NULL)
    _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "%s", local->message);
  return t;
}

double *
_fb_interp_read_f64 (const FbTensor *t)
{
  double *v = g_new (double, MAX (t->numel, 1));
  const void *d = fb_tensor_data (t);
  int64_t n = t->numel;

  switch (t->dtype)
    {
    case FB_DTYPE_FLOAT32:
      for (int64_t i = 0; i < n; i++) v[i] = ((const float *) d)[i];
      break;
    case FB_DTYPE_FLOAT64:
      memcpy (v, d, sizeof (double) * n);
      break;
    case FB_DTYPE_INT64:
      for (int64_t i = 0; i < n; i++) v[i] = (double) ((const int64_t *) d)[i];
      break;
    case FB_DTYPE_INT32:
      for (int64_t i = 0; i < n; i++) v[i] = ((const int32_t *) d)[i];
      break;
    case FB_DTYPE_UINT8: case FB_DTYPE_BOOL:
      for (int64_t i = 0; i < n; i++) v[i] = ((const uint8_t *) d)[i];
      break;
    case FB_DTYPE_INT8:
      for (int64_t i = 0; i < n; i++) v[i] = ((const int8_t *) d)[i];
      break;
    case FB_DTYPE_FLOAT16:
      for (int64_t i = 0; i < n; i++) v[i] = fb_half_to_float (((const uint16_t *) d)[i]);
      break;
    default:
      for (int64_t i = 0; i < n; i++) v[i] = fb_tensor_get_f64 (t, i);
      break;
    }
  return v;
}

int64_t *
_fb_interp_read_i64 (const FbTensor *t)
{
  int64_t *v = g_new (int64_t, MAX (t->numel, 1));
  const void *d = fb_tensor_data (t);
  int64_t n = t->numel;

  switch (t->dtype)
    {
    case FB_DTYPE_INT64:
      memcpy (v, d, sizeof (int64_t) * n);
      break;
    case FB_DTYPE_INT32:
      for (int64_t i = 0; i < n; i++) v[i] = ((const int32_t *) d)[i];
      break;
    case FB_DTYPE_UINT8: case FB_DTYPE_BOOL:
      for (int64_t i = 0; i < n; i++) v[i] = ((const uint8_t *) d)[i];
      break;
    case FB_DTYPE_INT8:
      for (int64_t i = 0; i < n; i++) v[i] = ((const int8_t *) d)[i];
      break;
    default:
      for (int64_t i = 0; i < n; i++) v[i] = fb_tensor_get_i64 (t, i);
      break;
    }
  return v;
}

static inline int64_t
double_to_i64 (double v)
{
  if (v != v)
    return 0;
  if (v >= 9.2233720368547758e18)
    return G_MAXINT64;
  if (v <= -9.2233720368547758e18)
    return G_MININT64;
  return (int64_t) v;
}

void
_fb_interp_write_f64 (FbTensor *t, const double *v)
{
  void *d = fb_tensor_data_mut (t);
  int64_t n = t->numel;

  switch (t->dtype)
    {
    case FB_DTYPE_FLOAT32:
      for (int64_t i = 0; i < n; i++) ((float *) d)[i] = (float) v[i];
      return;
    case FB_DTYPE_FLOAT64:
      memcpy (d, v, sizeof (double) * n);
      return;
    case FB_DTYPE_FLOAT16:
      for (int64_t i = 0; i < n; i++) ((uint16_t *) d)[i] = fb_float_to_half ((float) v[i]);
      return;
    case FB_DTYPE_BFLOAT16:
      for (int64_t i = 0; i < n; i++) ((uint16_t *) d)[i] = fb_float_to_bfloat16 ((float) v[i]);
      return;
    case FB_DTYPE_BOOL:
      for (int64_t i = 0; i < n; i++) ((uint8_t *) d)[i] = v[i] != 0;
      return;
    default:
      {
        g_autofree int64_t *iv = g_new (int64_t, MAX (n, 1));
        for (int64_t i = 0; i < n; i++)
          iv[i] = double_to_i64 (v[i]);
        _fb_interp_write_i64 (t, iv);
      }
      return;
    }
}

void
_fb_interp_write_i64 (FbTensor *t, const int64_t *v)
{
  void *d = fb_tensor_data_mut (t);
  int64_t n = t->numel;

  switch (t->dtype)
    {
    case FB_DTYPE_INT64:
      memcpy (d, v, sizeof (int64_t) * n);
      return;
    case FB_DTYPE_INT32:
      for (int64_t i = 0; i < n; i++) ((int32_t *) d)[i] = (int32_t) (uint32_t) v[i];
      return;
    case FB_DTYPE_UINT32:
      for (int64_t i = 0; i < n; i++) ((uint32_t *) d)[i] = (uint32_t) v[i];
      return;
    case FB_DTYPE_INT16:
      for (int64_t i = 0; i < n; i++) ((int16_t *) d)[i] = (int16_t) (uint16_t) v[i];
      return;
    case FB_DTYPE_UINT16:
      for (int64_t i = 0; i < n; i++) ((uint16_t *) d)[i] = (uint16_t) v[i];
      return;
    case FB_DTYPE_INT8:
      for (int64_t i = 0; i < n; i++) ((int8_t *) d)[i] = (int8_t) (uint8_t) v[i];
      return;
    case FB_DTYPE_UINT8:
      for (int64_t i = 0; i < n; i++) ((uint8_t *) d)[i] = (uint8_t) v[i];
      return;
    case FB_DTYPE_UINT64:
      for (int64_t i = 0; i < n; i++) ((uint64_t *) d)[i] = (uint64_t) v[i];
      return;
    case FB_DTYPE_BOOL:
      for (int64_t i = 0; i < n; i++) ((uint8_t *) d)[i] = v[i] != 0;
      return;
    default:
      for (int64_t i = 0; i < n; i++)
        fb_tensor_set_f64 (t, i, (double) v[i]);
      return;
    }
}

gboolean
_fb_interp_scalar_i64 (const FbNode *node, const FbTensor *t, const char *what, int64_t *out,
                       GError **error)
{
  if (t->numel != 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "%s must hold one element, it holds %" G_GINT64_FORMAT, what, t->numel);
  *out = fb_tensor_get_i64 (t, 0);
  return TRUE;
}

gboolean
_fb_interp_scalar_f64 (const FbNode *node, const FbTensor *t, const char *what, double *out,
                       GError **error)
{
  if (t->numel != 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "%s must hold one element, it holds %" G_GINT64_FORMAT, what, t->numel);
  *out = fb_tensor_get_f64 (t, 0);
  return TRUE;
}

gboolean
_fb_interp_int_list (const FbNode *node, const FbTensor *t, const char *what, int64_t **out,
                     guint *n, GError **error)
{
  if (t->rank > 1 || fb_dtype_is_float (t->dtype) || t->numel > G_MAXINT32)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "%s must be a 1-D integer tensor, got %s of rank %d", what,
                            fb_dtype_name (t->dtype), t->rank);
  *out = _fb_interp_read_i64 (t);
  *n = (guint) t->numel;
  return TRUE;
}

gboolean
_fb_interp_need_float (const FbNode *node, const FbTensor *t, GError **error)
{
  if (fb_dtype_is_float (t->dtype))
    return TRUE;
  return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                          "element type %s is not supported (floating point only)",
                          fb_dtype_name (t->dtype));
}

int64_t
_fb_interp_prod (const int64_t *dims, int from, int to)
{
  int64_t p = 1;
  for (int i = from; i < to; i++)
    p *= dims[i];
  return p;
}

void
_fb_strides (int rank, const int64_t *dims, int64_t *strides)
{
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--)
    {
      strides[i] = s;
      s *= dims[i];
    }
}

FbTensor *
_fb_interp_permute (const FbNode *node, const FbTensor *x, const int *perm, GError **error)
{
  int64_t dims[FB_MAX_RANK], xs[FB_MAX_RANK], src[FB_MAX_RANK], dst[FB_MAX_RANK];
  FbTensor *y;

  for (int i = 0; i < x->rank; i++)
    dims[i] = x->dims[perm[i]];
  y = _fb_interp_new (node, x->dtype, x->rank, dims, error);
  if (y == NULL)
    return NULL;
  _fb_strides (x->rank, x->dims, xs);
  for (int i = 0; i < x->rank; i++)
    src[i] = xs[perm[i]];
  _fb_strides (x->rank, dims, dst);
  _fb_copy_strided (fb_tensor_data_mut (y), dst, fb_tensor_data (x), src, x->rank, dims,
                    fb_dtype_size (x->dtype));
  return y;
}

/* ---- broadcasting ------------------------------------------------------------------------- */

gboolean
_fb_bcast_init_dims (FbBcast *b, const FbNode *node, int n, const int *ranks,
                     const int64_t *const *dims, GError **error)
{
  g_assert (n >= 1 && n <= FB_BCAST_MAX);
  memset (b, 0, sizeof *b);
  b->n = n;
  for (int k = 0; k < n; k++)
    b->rank = MAX (b->rank, ranks[k]);
  for (int i = 0; i < b->rank; i++)
    {
      int64_t d = 1;
      for (int k = 0; k < n; k++)
        {
          int j = ranks[k] - b->rank + i;
          int64_t e = j >= 0 ? dims[k][j] : 1;
          if (e == 1 || e == d)
            continue;
          if (d != 1)
            {
              GString *s = g_string_new (NULL);
              for (int m = 0; m < n; m++)
                {
                  g_string_append (s, m ? " and " : "");
                  for (int q = 0; q < ranks[m]; q++)
                    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, q ? "x" : "", dims[m][q]);
                  if (ranks[m] == 0)
                    g_string_append (s, "scalar");
                }
              _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                               "shapes %s do not broadcast", s->str);
              g_string_free (s, TRUE);
              return FALSE;
            }
          d = e;
        }
      b->dims[i] = d;
    }
  /* Counted first: every input's stride product is bounded by the result's count. */
  b->numel = 1;
  for (int i = 0; i < b->rank; i++)
    if (__builtin_mul_overflow (b->numel, b->dims[i], &b->numel))
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                              "the broadcast result has more elements than 64 bits count");
  for (int k = 0; k < n; k++)
    {
      int64_t s = 1;
      for (int i = b->rank - 1; i >= 0; i--)
        {
          int j = ranks[k] - b->rank + i;
          int64_t e = j >= 0 ? dims[k][j] : 1;
          b->strides[k][i] = (e == 1 && b->dims[i] != 1) ? 0 : s;
          s *= e;
        }
    }
  b->inner = b->rank > 0 ? b->dims[b->rank - 1] : 1;
  return TRUE;
}

gboolean
_fb_bcast_init (FbBcast *b, const FbNode *node, int n, const FbTensor *const *ts, GError **error)
{
  int ranks[FB_BCAST_MAX];
  const int64_t *dims[FB_BCAST_MAX];

  for (int k = 0; k < n; k++)
    {
      ranks[k] = ts[k]->rank;
      dims[k] = ts[k]->dims;
    }
  return _fb_bcast_init_dims (b, node, n, ranks, dims, error);
}

void
_fb_bcast_row (const FbBcast *b, int64_t r, int64_t *offsets)
{
  for (int k = 0; k < b->n; k++)
    offsets[k] = 0;
  for (int i = b->rank - 2; i >= 0 && r > 0; i--)
    {
      int64_t idx = r % b->dims[i];
      r /= b->dims[i];
      for (int k = 0; k < b->n; k++)
        offsets[k] += idx * b->strides[k][i];
    }
}

void
_fb_copy_strided (void *dst, const int64_t *dst_strides, const void *src,
                  const int64_t *src_strides, int rank, const int64_t *dims, gsize esize)
{
  int64_t idx[FB_MAX_RANK] = { 0 };
  int64_t rows = 1, inner, ds, ss;
  char *d = dst;
  const char *s = src;

  if (rank == 0)
    {
      memcpy (dst, src, esize);
      return;
    }
  for (int i = 0; i < rank; i++)
    if (dims[i] == 0)
      return;
  for (int i = 0; i < rank - 1; i++)
    rows *= dims[i];
  inner = dims[rank - 1];
  ds = dst_strides[rank - 1];
  ss = src_strides[rank - 1];
  for (int64_t r = 0; r < rows; r++)
    {
      int64_t doff = 0, soff = 0;
      for (int i = 0; i < rank - 1; i++)
        {
          doff += idx[i] * dst_strides[i];
          soff += idx[i] * src_strides[i];
        }
      if (ds == 1 && ss == 1)
        memcpy (d + doff * esize, s + soff * esize, inner * esize);
      else
        for (int64_t j = 0; j < inner; j++)
          memcpy (d + (doff + j * ds) * esize, s + (soff + j * ss) * esize, esize);
      for (int i = rank - 2; i >= 0; i--)
        {
          if (++idx[i] < dims[i])
            break;
          idx[i] = 0;
        }
    }
}
