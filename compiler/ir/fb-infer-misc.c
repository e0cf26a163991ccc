/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for operators that make tensors from attributes or small inputs (Constant,
 * ConstantOfShape, Range) and those that read only a shape (Shape, Size). */
#include "fb-infer-private.h"

#include <math.h>
#include <string.h>

/* The tensor a Constant node stands for, from whichever value attribute it carries. */
static FbTensor *
constant_tensor (const FbNode *node, GError **error)
{
  static const char *unsupported[] = { "value_string", "value_strings", "sparse_value" };
  const FbAttr *a;
  FbTensor *t;
  int64_t n;

  for (guint k = 0; k < G_N_ELEMENTS (unsupported); k++)
    if (fb_node_attr (node, unsupported[k]) != NULL)
      {
        _fb_infer_unsupported (error, node, "constants given as '%s' are not supported",
                               unsupported[k]);
        return NULL;
      }
  if ((a = fb_node_attr (node, "value")) != NULL && a->type == FB_ATTR_TENSOR && a->t != NULL)
    return fb_tensor_ref (a->t);
  if ((a = fb_node_attr (node, "value_float")) != NULL && a->type == FB_ATTR_FLOAT)
    return fb_tensor_new_scalar_f32 (a->f);
  if ((a = fb_node_attr (node, "value_int")) != NULL && a->type == FB_ATTR_INT)
    return fb_tensor_new_scalar_i64 (a->i);
  if ((a = fb_node_attr (node, "value_floats")) != NULL && a->type == FB_ATTR_FLOATS)
    {
      g_autoptr(GError) local = NULL;
      n = a->floats.n;
      if ((t = fb_tensor_new (FB_DTYPE_FLOAT32, 1, &n, &local)) == NULL)
        {
          _fb_infer_fail (error, node, "%s", local->message);
          return NULL;
        }
      if (n > 0)
        memcpy (fb_tensor_data_mut (t), a->floats.v, sizeof (float) * a->floats.n);
      return t;
    }
  if ((a = fb_node_attr (node, "value_ints")) != NULL && a->type == FB_ATTR_INTS)
    {
      g_autoptr(GError) local = NULL;
      n = a->ints.n;
      if ((t = fb_tensor_new (FB_DTYPE_INT64, 1, &n, &local)) == NULL)
        {
          _fb_infer_fail (error, node, "%s", local->message);
          return NULL;
        }
      if (n > 0)
        memcpy (fb_tensor_data_mut (t), a->ints.v, sizeof (int64_t) * a->ints.n);
      return t;
    }
  _fb_infer_fail (error, node, "has no value attribute");
  return NULL;
}

gboolean
_fb_infer_constant (FbGraph *graph, FbNode *node, GError **error)
{
  g_autoptr(FbTensor) t = constant_tensor (node, error);
  FbShape shape;

  if (t == NULL)
    return FALSE;
  shape = fb_tensor_shape (t);
  return _fb_infer_set_output (node, 0, t->dtype, &shape, error);
}

gboolean
_fb_infer_constant_of_shape (FbGraph *graph, FbNode *node, GError **error)
{
  FbTensor *value = fb_node_attr_tensor (node, "value");
  FbDType dtype = value ? value->dtype : FB_DTYPE_FLOAT32;
  g_autofree int64_t *dims = NULL;
  int n;
  FbShape out;

  if (_fb_infer_require (node, 0, error) == NULL ||
      !_fb_infer_check_type (node, 0, FB_TYPES_INT64, error) ||
      !_fb_infer_const_ints (node, 0, "input 'input'", FB_INFER_MAX_VECTOR, &dims, &n, error))
    return FALSE;
  if (fb_node_attr (node, "value") != NULL && value == NULL)
    return _fb_infer_fail (error, node, "attribute 'value' must be a tensor");
  if (value != NULL && value->numel != 1)
    return _fb_infer_fail (error, node, "attribute 'value' must hold one element, not %"
                           G_GINT64_FORMAT, value->numel);
  if (n < 0)
    {
      FbIntVec iv;
      int64_t len;

      if (_fb_infer_int_vector (node, 0, &iv) && !iv.scalar)
        {
          if (!_fb_infer_check_rank (node, iv.n, error))
            return FALSE;
          out = _fb_shape_of_rank (iv.n);
          for (int i = 0; i < iv.n; i++)
            {
              if (iv.known[i] && iv.v[i] < 0)
                return _fb_infer_fail (error, node, "shape entry %d is %" G_GINT64_FORMAT, i,
                                       iv.v[i]);
              if (iv.known[i])
                out.dim[i] = iv.v[i];
              else
                out.sym[i] = iv.sym[i];
            }
          return _fb_infer_set_output (node, 0, dtype, &out, error);
        }
      if (!_fb_infer_vector_length (node, 0, "input 'input'", FALSE, &len, error))
        return FALSE;
      if (len < 0)
        return _fb_infer_set_output (node, 0, dtype, &(FbShape) { .rank = FB_RANK_UNKNOWN }, error);
      if (!_fb_infer_check_rank (node, len, error))
        return FALSE;
      out = _fb_shape_of_rank ((int) len);
      return _fb_infer_set_output (node, 0, dtype, &out, error);
    }
  if (!_fb_infer_check_rank (node, n, error))
    return FALSE;
  for (int i = 0; i < n; i++)
    if (dims[i] < 0)
      return _fb_infer_fail (error, node, "shape entry %d is %" G_GINT64_FORMAT, i, dims[i]);
  out = fb_shape_make (n, dims);
  return _fb_infer_set_output (node, 0, dtype, &out, error);
}

/* Number of elements of Range(start, limit, delta) for integers: ceil((limit - start) / delta)
 * clamped at 0, in unsigned arithmetic so that no extreme value overflows. */
static gboolean
range_count_int (int64_t start, int64_t limit, int64_t delta, int64_t *n)
{
  uint64_t span, step;

  if ((delta > 0 && limit <= start) || (delta < 0 && limit >= start))
    {
      *n = 0;
      return TRUE;
    }
  span = delta > 0 ? (uint64_t) limit - (uint64_t) start : (uint64_t) start - (uint64_t) limit;
  step = delta > 0 ? (uint64_t) delta : 0 - (uint64_t) delta;
  span = span / step + (span % step != 0);
  if (span > (uint64_t) G_MAXINT64)
    return FALSE;
  *n = (int64_t) span;
  return TRUE;
}

gboolean
_fb_infer_range (FbGraph *graph, FbNode *node, GError **error)
{
  static const char *names[] = { "start", "limit", "delta" };
  static const guint all[] = { 0, 1, 2 };
  FbShape out = _fb_shape_of_rank (1);
  FbTensor *t[3];
  FbDType dtype;

  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *what = g_strdup_printf ("input '%s'", names[i]);
      if (_fb_infer_require (node, i, error) == NULL ||
          !_fb_infer_check_type (node, i, FB_TYPES_NUMERIC, error) ||
          !_fb_infer_check_scalar (node, i, what, TRUE, error))
        return FALSE;
      t[i] = node->inputs[i]->constant;
      if (t[i] != NULL && t[i]->numel != 1)
        return _fb_infer_fail (error, node, "%s must hold one value", what);
    }
  if (!_fb_infer_same_type (node, all, 3, &dtype, error))
    return FALSE;
  if ((t[0] == NULL || t[1] == NULL || t[2] == NULL) && !fb_dtype_is_float (dtype))
    {
      /* Integer bounds computed from extents: Range (0, Shape (x)[1], 1) counts that extent. */
      FbIntVec iv[3];
      gboolean ok = TRUE;
      for (guint i = 0; i < 3 && ok; i++)
        ok = _fb_infer_int_vector (node, i, &iv[i]) && iv[i].n == 1;
      if (ok && iv[2].known[0] && iv[2].v[0] == 0)
        return _fb_infer_fail (error, node, "delta is 0");
      if (ok && iv[0].known[0] && iv[1].known[0] && iv[2].known[0])
        {
          if (!range_count_int (iv[0].v[0], iv[1].v[0], iv[2].v[0], &out.dim[0]))
            return _fb_infer_fail (error, node, "the range's length overflows 64 bits");
        }
      else if (ok && iv[0].known[0] && iv[0].v[0] == 0 && iv[2].known[0] && iv[2].v[0] == 1)
        out.sym[0] = iv[1].sym[0];
      return _fb_infer_set_output (node, 0, dtype, &out, error);
    }
  if (t[0] != NULL && t[1] != NULL && t[2] != NULL)
    {
      if (fb_dtype_is_float (t[0]->dtype))
        {
          double start = fb_tensor_get_f64 (t[0], 0), limit = fb_tensor_get_f64 (t[1], 0);
          double delta = fb_tensor_get_f64 (t[2], 0);
          double n;
          if (delta == 0.0)
            return _fb_infer_fail (error, node, "delta is 0");
          n = ceil ((limit - start) / delta);
          if (isnan (n) || n >= 9.2e18)
            return _fb_infer_fail (error, node, "the range from %g to %g by %g has no finite "
                                   "length", start, limit, delta);
          out.dim[0] = n > 0 ? (int64_t) n : 0;
        }
      else
        {
          int64_t delta = fb_tensor_get_i64 (t[2], 0);
          if (delta == 0)
            return _fb_infer_fail (error, node, "delta is 0");
          if (!range_count_int (fb_tensor_get_i64 (t[0], 0), fb_tensor_get_i64 (t[1], 0), delta,
                                &out.dim[0]))
            return _fb_infer_fail (error, node, "the range's length overflows 64 bits");
        }
    }
  return _fb_infer_set_output (node, 0, dtype, &out, error);
}

gboolean
_fb_infer_shape (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  FbShape out = _fb_shape_of_rank (1);
  int64_t start, end, r;

  if (x == NULL)
    return FALSE;
  if (_fb_infer_opset (node) < 15 &&
      (!_fb_infer_no_attr (node, "start", error) || !_fb_infer_no_attr (node, "end", error)))
    return FALSE;
  r = x->shape.rank;
  if (r >= 0)
    {
      /* start and end (opset 15) count from the back when negative and clamp to [0, rank]. */
      start = fb_node_attr_int (node, "start", 0);
      end = fb_node_attr_int (node, "end", r);
      if (start < 0)
        start = start < -r ? 0 : start + r;
      if (end < 0)
        end = end < -r ? 0 : end + r;
      start = MIN (start, r);
      end = MIN (end, r);
      out.dim[0] = MAX (end - start, 0);
    }
  return _fb_infer_set_output (node, 0, FB_DTYPE_INT64, &out, error);
}

gboolean
_fb_infer_size (FbGraph *graph, FbNode *node, GError **error)
{
  FbShape scalar = fb_shape_scalar ();

  if (_fb_infer_require (node, 0, error) == NULL)
    return FALSE;
  return _fb_infer_set_output (node, 0, FB_DTYPE_INT64, &scalar, error);
}
