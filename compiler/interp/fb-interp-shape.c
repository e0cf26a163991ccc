/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Operators about shapes and sources: Constant, ConstantOfShape, Range, Reshape, Flatten,
 * Squeeze, Unsqueeze, Shape, Size. Reshaping operators share the input's bytes. */
#include "fb-interp-private.h"

#include <math.h>
#include <string.h>

static const char *const constant_attrs[] = {
  "value", "value_float", "value_floats", "value_int", "value_ints",
};

gboolean
_fb_interp_check_constant (const FbNode *node, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (constant_attrs); i++)
    if (fb_node_attr (node, constant_attrs[i]) != NULL)
      return TRUE;
  return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                          "only value, value_float(s) and value_int(s) are supported (a sparse "
                          "or string constant?)");
}

gboolean
_fb_interp_constant (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                     GError **error)
{
  FbTensor *t = fb_node_attr_tensor (node, "value");
  const FbAttr *a;
  guint n;

  if (t != NULL)
    {
      out[0] = fb_tensor_ref (t);
      return TRUE;
    }
  if ((a = fb_node_attr (node, "value_float")) != NULL)
    out[0] = fb_tensor_new_scalar_f32 (fb_node_attr_float (node, "value_float", 0));
  else if ((a = fb_node_attr (node, "value_int")) != NULL)
    out[0] = fb_tensor_new_scalar_i64 (fb_node_attr_int (node, "value_int", 0));
  else if (fb_node_attr (node, "value_floats") != NULL)
    {
      const float *v = fb_node_attr_floats (node, "value_floats", &n);
      int64_t dim = n;
      out[0] = _fb_interp_new (node, FB_DTYPE_FLOAT32, 1, &dim, error);
      if (out[0] != NULL && n > 0)
        memcpy (fb_tensor_data_mut (out[0]), v, sizeof (float) * n);
    }
  else if (fb_node_attr (node, "value_ints") != NULL)
    {
      const int64_t *v = fb_node_attr_ints (node, "value_ints", &n);
      int64_t dim = n;
      out[0] = _fb_interp_new (node, FB_DTYPE_INT64, 1, &dim, error);
      if (out[0] != NULL && n > 0)
        memcpy (fb_tensor_data_mut (out[0]), v, sizeof (int64_t) * n);
    }
  else
    return _fb_interp_check_constant (node, error);
  return out[0] != NULL;
}

/* A shape given as a tensor of extents: every entry non-negative, rank bounded. */
static gboolean
shape_input (const FbNode *node, const FbTensor *t, int64_t *dims, int *rank, GError **error)
{
  g_autofree int64_t *v = NULL;
  guint n;

  if (!_fb_interp_int_list (node, t, "the shape", &v, &n, error))
    return FALSE;
  if (n > FB_MAX_RANK)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "the shape has %u entries, more than %d", n, FB_MAX_RANK);
  for (guint i = 0; i < n; i++)
    if (v[i] < 0)
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                              "shape entry %u is negative (%" G_GINT64_FORMAT ")", i, v[i]);
  memcpy (dims, v, sizeof (int64_t) * n);
  *rank = (int) n;
  return TRUE;
}

gboolean
_fb_interp_constant_of_shape (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                              FbTensor **out, GError **error)
{
  FbTensor *value = fb_node_attr_tensor (node, "value");
  int64_t dims[FB_MAX_RANK];
  int rank = 0;
  FbTensor *y;
  gsize esize;

  if (!shape_input (node, in[0], dims, &rank, error))
    return FALSE;
  if (value != NULL && value->numel != 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the value attribute must hold one element");
  y = _fb_interp_new (node, value ? value->dtype : FB_DTYPE_FLOAT32, rank, dims, error);
  if (y == NULL)
    return FALSE;
  esize = fb_dtype_size (y->dtype);
  if (value != NULL)
    for (int64_t i = 0; i < y->numel; i++)
      memcpy ((char *) fb_tensor_data_mut (y) + i * esize, fb_tensor_data (value), esize);
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_range (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                  GError **error)
{
  FbDType dtype = in[0]->dtype;
  int64_t n;
  FbTensor *y;

  if (in[1]->dtype != dtype || in[2]->dtype != dtype || dtype == FB_DTYPE_BOOL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "start, limit and delta must share one numeric type");
  if (fb_dtype_is_float (dtype))
    {
      double start, limit, delta, count;
      g_autofree double *v = NULL;
      if (!_fb_interp_scalar_f64 (node, in[0], "start", &start, error) ||
          !_fb_interp_scalar_f64 (node, in[1], "limit", &limit, error) ||
          !_fb_interp_scalar_f64 (node, in[2], "delta", &delta, error))
        return FALSE;
      count = ceil ((limit - start) / delta);
      if (delta == 0 || isnan (count) || count > (double) (G_MAXINT32))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "start %g, limit %g and delta %g give no finite range", start,
                                limit, delta);
      n = count > 0 ? (int64_t) count : 0;
      y = _fb_interp_new (node, dtype, 1, &n, error);
      if (y == NULL)
        return FALSE;
      v = _fb_interp_alloc (node, n, sizeof (double), error);
      if (v == NULL)
        {
          fb_tensor_unref (y);
          return FALSE;
        }
      for (int64_t i = 0; i < n; i++)
        v[i] = start + (double) i * delta;
      _fb_interp_write_f64 (y, v);
    }
  else
    {
      int64_t start, limit, delta;
      g_autofree int64_t *v = NULL;
      if (!_fb_interp_scalar_i64 (node, in[0], "start", &start, error) ||
          !_fb_interp_scalar_i64 (node, in[1], "limit", &limit, error) ||
          !_fb_interp_scalar_i64 (node, in[2], "delta", &delta, error))
        return FALSE;
      if (delta == 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "delta is 0");
      /* In double: limit - start may not fit in int64. */
      {
        double count = ceil (((double) limit - (double) start) / (double) delta);
        if (count > (double) G_MAXINT32)
          return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "the range has more than %d elements", G_MAXINT32);
        n = count > 0 ? (int64_t) count : 0;
      }
      y = _fb_interp_new (node, dtype, 1, &n, error);
      if (y == NULL)
        return FALSE;
      v = _fb_interp_alloc (node, n, sizeof (int64_t), error);
      if (v == NULL)
        {
          fb_tensor_unref (y);
          return FALSE;
        }
      for (int64_t i = 0; i < n; i++)
        v[i] = (int64_t) ((uint64_t) start + (uint64_t) i * (uint64_t) delta);
      _fb_interp_write_i64 (y, v);
    }
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_reshape (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                    GError **error)
{
  FbTensor *x = in[0];
  gboolean allowzero = fb_node_attr_int (node, "allowzero", 0) != 0;
  g_autofree int64_t *shape = NULL;
  int64_t dims[FB_MAX_RANK], known = 1;
  guint n;
  int infer = -1;

  if (_fb_interp_opset (node) < 5)
    {
      const int64_t *v = fb_node_attr_ints (node, "shape", &n);
      shape = g_memdup2 (v, sizeof (int64_t) * MAX (n, 1));
    }
  else if (!_fb_interp_need (node, in, 1, error) ||
           !_fb_interp_int_list (node, in[1], "the shape", &shape, &n, error))
    return FALSE;
  if (n > FB_MAX_RANK)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "the shape has %u entries, more than %d", n, FB_MAX_RANK);
  for (guint i = 0; i < n; i++)
    {
      int64_t d = shape[i];
      if (d == 0 && !allowzero)
        {
          /* 0 copies the input's extent at the same position. */
          if ((int) i >= x->rank)
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                    "shape entry %u is 0 but the input has rank %d", i, x->rank);
          d = x->dims[i];
        }
      else if (d == -1)
        {
          if (infer >= 0)
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                    "the shape has more than one -1");
          infer = (int) i;
          d = 1;
        }
      else if (d < 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "shape entry %u is %" G_GINT64_FORMAT, i, d);
      dims[i] = d;
      if (i != (guint) infer && __builtin_mul_overflow (known, d, &known))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "the shape overflows");
    }
  if (infer >= 0)
    {
      if (known == 0 || x->numel % known != 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "cannot reshape %" G_GINT64_FORMAT " elements with -1 and the "
                                "other extents' product %" G_GINT64_FORMAT, x->numel, known);
      dims[infer] = x->numel / known;
      known *= dims[infer];
    }
  if (known != x->numel)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "cannot reshape %" G_GINT64_FORMAT " elements into %" G_GINT64_FORMAT,
                            x->numel, known);
  out[0] = _fb_interp_view (node, x, (int) n, dims, error);
  return out[0] != NULL;
}

gboolean
_fb_interp_flatten (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                    GError **error)
{
  FbTensor *x = in[0];
  int64_t axis = fb_node_attr_int (node, "axis", 1), dims[2];

  if (axis < 0)
    axis += x->rank;
  if (axis < 0 || axis > x->rank)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "axis is out of range for rank %d", x->rank);
  dims[0] = _fb_interp_prod (x->dims, 0, (int) axis);
  dims[1] = _fb_interp_prod (x->dims, (int) axis, x->rank);
  out[0] = _fb_interp_view (node, x, 2, dims, error);
  return out[0] != NULL;
}

/* The axes of Squeeze / Unsqueeze: an attribute before opset 13, an input after. */
static gboolean
axes_of (const FbNode *node, FbTensor *const *in, int64_t **axes, guint *n, GError **error)
{
  if (_fb_interp_opset (node) < 13)
    {
      const int64_t *v = fb_node_attr_ints (node, "axes", n);
      *axes = g_memdup2 (v, sizeof (int64_t) * MAX (*n, 1));
      return TRUE;
    }
  if (node->n_inputs > 1 && in[1] != NULL)
    return _fb_interp_int_list (node, in[1], "axes", axes, n, error);
  *axes = g_new0 (int64_t, 1);
  *n = 0;
  return TRUE;
}

gboolean
_fb_interp_squeeze (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                    GError **error)
{
  FbTensor *x = in[0];
  g_autofree int64_t *axes = NULL;
  gboolean drop[FB_MAX_RANK] = { FALSE };
  int64_t dims[FB_MAX_RANK];
  guint n;
  int rank = 0;

  if (!axes_of (node, in, &axes, &n, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      int a;
      if (!fb_axis_normalize (axes[i], x->rank, &a) || x->dims[a] != 1)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "axis %" G_GINT64_FORMAT " is out of range or not of extent 1",
                                axes[i]);
      drop[a] = TRUE;
    }
  for (int i = 0; i < x->rank; i++)
    if (n > 0 ? !drop[i] : x->dims[i] != 1)
      dims[rank++] = x->dims[i];
  out[0] = _fb_interp_view (node, x, rank, dims, error);
  return out[0] != NULL;
}

gboolean
_fb_interp_unsqueeze (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                      GError **error)
{
  FbTensor *x = in[0];
  g_autofree int64_t *axes = NULL;
  gboolean added[FB_MAX_RANK] = { FALSE };
  int64_t dims[FB_MAX_RANK];
  guint n;
  int rank, k = 0;

  if (!axes_of (node, in, &axes, &n, error))
    return FALSE;
  rank = x->rank + (int) n;
  if (n == 0 || rank > FB_MAX_RANK)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "needs 1 to %d axes, got %u", FB_MAX_RANK - x->rank, n);
  for (guint i = 0; i < n; i++)
    {
      int a;
      if (!fb_axis_normalize (axes[i], rank, &a) || added[a])
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "axis %" G_GINT64_FORMAT " is out of range or repeated", axes[i]);
      added[a] = TRUE;
    }
  for (int i = 0; i < rank; i++)
    dims[i] = added[i] ? 1 : x->dims[k++];
  out[0] = _fb_interp_view (node, x, rank, dims, error);
  return out[0] != NULL;
}

gboolean
_fb_interp_shape (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                  GError **error)
{
  FbTensor *x = in[0];
  int64_t start = fb_node_attr_int (node, "start", 0);
  int64_t end = fb_node_attr_int (node, "end", x->rank), n;
  FbTensor *y;

  /* Since opset 15 start and end select a slice of the shape, clamped like Slice's. */
  if (start < 0) start += x->rank;
  if (end < 0) end += x->rank;
  start = CLAMP (start, 0, x->rank);
  end = CLAMP (end, 0, x->rank);
  n = MAX (end - start, 0);
  y = _fb_interp_new (node, FB_DTYPE_INT64, 1, &n, error);
  if (y == NULL)
    return FALSE;
  if (n > 0)
    memcpy (fb_tensor_data_mut (y), x->dims + start, sizeof (int64_t) * n);
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_size (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                 GError **error)
{
  out[0] = fb_tensor_new_scalar_i64 (in[0]->numel);
  return TRUE;
}
