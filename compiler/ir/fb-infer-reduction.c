/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for operators that reduce or scan along axes: Reduce*, ArgMax, Softmax and
 * LogSoftmax, TopK, CumSum. */
#include "fb-infer-private.h"

/* The opset from which a Reduce operator takes its axes as an input instead of an attribute. */
static int
axes_input_since (FbOpKind op)
{
  return op == FB_OP_REDUCE_SUM ? 13 : 18;
}

/* Reduced output shape for known axes (n of them; n == 0 with reduce_all means every axis). */
static FbShape
reduce_shape (const FbShape *x, const gboolean mask[FB_MAX_RANK], gboolean keepdims)
{
  FbShape out = { 0 };

  for (int i = 0; i < x->rank; i++)
    {
      if (!mask[i])
        {
          out.dim[out.rank] = x->dim[i];
          out.sym[out.rank] = x->sym[i];
          out.rank++;
        }
      else if (keepdims)
        out.dim[out.rank++] = 1;
    }
  return out;
}

gboolean
_fb_infer_reduce (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  gboolean keepdims = fb_node_attr_int (node, "keepdims", 1) != 0;
  gboolean noop = FALSE;
  gboolean axes_given;           /* an axes attribute or input exists */
  g_autofree int64_t *axes = NULL;
  int n_axes = -1;               /* -1: given but not known at compile time */
  int since = axes_input_since (node->op);
  gboolean mask[FB_MAX_RANK];
  FbShape out;
  FbTypeClass cls = FB_TYPES_NUMERIC;

  if (x == NULL)
    return FALSE;
  if ((node->op == FB_OP_REDUCE_MAX || node->op == FB_OP_REDUCE_MIN) && _fb_infer_opset (node) >= 20 &&
      x->dtype == FB_DTYPE_BOOL)
    cls = FB_TYPES_BOOL;
  if (!_fb_infer_check_type (node, 0, cls, error))
    return FALSE;

  if (_fb_infer_opset (node) >= since)
    {
      if (!_fb_infer_no_attr (node, "axes", error) ||
          !_fb_infer_check_type (node, 1, FB_TYPES_INT64, error) ||
          !_fb_infer_const_ints (node, 1, "input 'axes'", FB_INFER_MAX_VECTOR, &axes, &n_axes, error))
        return FALSE;
      axes_given = fb_node_input (node, 1) != NULL;
      noop = fb_node_attr_int (node, "noop_with_empty_axes", 0) != 0;
    }
  else
    {
      guint n;
      const int64_t *v;

      if (!_fb_infer_no_input (node, 1, "axes", since, error) ||
          !_fb_infer_no_attr (node, "noop_with_empty_axes", error) ||
          !_fb_infer_attr_ints (node, "axes", -1, &v, &n, error))
        return FALSE;
      axes_given = v != NULL;
      if (axes_given)
        {
          axes = g_memdup2 (v, sizeof (int64_t) * MAX (n, 1));
          n_axes = (int) n;
        }
    }

  if (x->shape.rank < 0)
    return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);

  if (axes_given && n_axes < 0)
    {
      /* Axes known only at run time: keepdims keeps the rank; otherwise the rank follows from
       * how many axes there are, when the axes input's length is known. */
      int64_t len;
      if (!_fb_infer_vector_length (node, 1, "input 'axes'", FALSE, &len, error))
        return FALSE;
      if (keepdims)
        out = _fb_shape_of_rank (x->shape.rank);
      else if (len > x->shape.rank)
        return _fb_infer_fail (error, node, "input 'axes' has %" G_GINT64_FORMAT
                               " entries for an input of rank %d", len, x->shape.rank);
      else if (len == 0 && noop)
        out = x->shape;
      else if (len >= 1)
        out = _fb_shape_of_rank (x->shape.rank - (int) len);
      else
        out = fb_shape_unknown ();
      return _fb_infer_set_output (node, 0, x->dtype, &out, error);
    }

  if (!axes_given || n_axes == 0)
    {
      if (noop)
        return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
      for (int i = 0; i < FB_MAX_RANK; i++)
        mask[i] = TRUE;
    }
  else if (!_fb_infer_axes_mask (node, axes, n_axes, x->shape.rank, "axes", mask, error))
    return FALSE;
  out = reduce_shape (&x->shape, mask, keepdims);
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

gboolean
_fb_infer_argmax (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  gboolean keepdims = fb_node_attr_int (node, "keepdims", 1) != 0;
  gboolean mask[FB_MAX_RANK] = { FALSE };
  FbShape out = fb_shape_unknown ();
  int axis;

  if (x == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_NUMERIC, error))
    return FALSE;
  /* select_last_index chooses among equal maxima; it came with opset 12 and changes no shape. */
  if (_fb_infer_opset (node) < 12 && !_fb_infer_no_attr (node, "select_last_index", error))
    return FALSE;
  if (x->shape.rank >= 0)
    {
      if (!_fb_infer_axis (node, fb_node_attr_int (node, "axis", 0), x->shape.rank, "axis",
                           &axis, error))
        return FALSE;
      mask[axis] = TRUE;
      out = reduce_shape (&x->shape, mask, keepdims);
    }
  return _fb_infer_set_output (node, 0, FB_DTYPE_INT64, &out, error);
}

gboolean
_fb_infer_softmax (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  int axis;

  if (x == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error))
    return FALSE;
  /* Before opset 13 the input was coerced to 2-D at axis (default 1); since, axis is the one
   * dimension normalized (default -1). Either way the output has the input's shape. */
  if (x->shape.rank >= 0 &&
      !_fb_infer_axis (node, fb_node_attr_int (node, "axis", _fb_infer_opset (node) >= 13 ? -1 : 1),
                       x->shape.rank, "axis", &axis, error))
    return FALSE;
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
}

gboolean
_fb_infer_topk (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  int64_t k = FB_DIM_UNKNOWN;
  gboolean k_known = FALSE;
  FbShape out = fb_shape_unknown ();
  int axis;

  if (x == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_NUMERIC, error))
    return FALSE;
  if (_fb_infer_opset (node) < 10)
    {
      const FbAttr *a = fb_node_attr (node, "k");
      if (!_fb_infer_no_input (node, 1, "K", 10, error))
        return FALSE;
      if (a == NULL || a->type != FB_ATTR_INT)
        return _fb_infer_fail (error, node, "the integer attribute 'k' is missing");
      k = a->i;
      k_known = TRUE;
    }
  else
    {
      g_autofree int64_t *kv = NULL;
      int n;

      if (!_fb_infer_no_attr (node, "k", error) || _fb_infer_require (node, 1, error) == NULL ||
          !_fb_infer_check_type (node, 1, FB_TYPES_INT64, error) ||
          !_fb_infer_check_scalar (node, 1, "input 'K'", TRUE, error) ||
          !_fb_infer_const_ints (node, 1, "input 'K'", 1, &kv, &n, error))
        return FALSE;
      if (n == 0)
        return _fb_infer_fail (error, node, "input 'K' is empty");
      k_known = n == 1;
      if (k_known)
        k = kv[0];
    }
  if (k_known && k < 0)
    return _fb_infer_fail (error, node, "k = %" G_GINT64_FORMAT " is negative", k);

  if (x->shape.rank >= 0)
    {
      if (!_fb_infer_axis (node, fb_node_attr_int (node, "axis", -1), x->shape.rank, "axis",
                           &axis, error))
        return FALSE;
      if (k_known && x->shape.dim[axis] >= 0 && k > x->shape.dim[axis])
        return _fb_infer_fail (error, node, "k = %" G_GINT64_FORMAT " is larger than dimension %d "
                               "(%" G_GINT64_FORMAT ")", k, axis, x->shape.dim[axis]);
      out = x->shape;
      out.dim[axis] = k;
      out.sym[axis] = NULL;
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error) &&
         _fb_infer_set_output (node, 1, FB_DTYPE_INT64, &out, error);
}

gboolean
_fb_infer_cumsum (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  g_autofree int64_t *axis = NULL;
  int n, a;

  if (x == NULL || _fb_infer_require (node, 1, error) == NULL ||
      !_fb_infer_check_type (node, 0, FB_TYPES_NUMERIC, error) ||
      !_fb_infer_check_type (node, 1, FB_TYPES_INDEX, error) ||
      !_fb_infer_check_scalar (node, 1, "input 'axis'", TRUE, error) ||
      !_fb_infer_const_ints (node, 1, "input 'axis'", 1, &axis, &n, error))
    return FALSE;
  if (n == 0)
    return _fb_infer_fail (error, node, "input 'axis' is empty");
  if (n == 1 && x->shape.rank >= 0 &&
      !_fb_infer_axis (node, axis[0], x->shape.rank, "axis", &a, error))
    return FALSE;
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
}
