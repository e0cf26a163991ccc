/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for operators that only reinterpret a shape: Reshape, Flatten, Squeeze, Unsqueeze. */
#include "fb-infer-private.h"

/* Product of dims [from, to) of s into *dim (unknown when any is unknown, unless one is 0); a
 * single unknown factor among ones keeps its symbol. FALSE on overflow. */
static gboolean
product (const FbShape *s, int from, int to, int64_t *dim, const char **sym)
{
  int unknown = 0;
  int64_t p = 1;
  const char *only = NULL;

  *sym = NULL;
  for (int i = from; i < to; i++)
    {
      if (s->dim[i] < 0)
        {
          unknown++;
          only = s->sym[i];
          continue;
        }
      if (__builtin_mul_overflow (p, s->dim[i], &p))
        return FALSE;
    }
  if (p == 0)
    *dim = 0;
  else if (unknown == 0)
    *dim = p;
  else
    {
      *dim = FB_DIM_UNKNOWN;
      if (unknown == 1 && p == 1)
        *sym = only;
    }
  return TRUE;
}

/* Infers the extent of the -1 entry at `at` by cancelling what input and output share: the
 * known product on each side and the unknown extents copied by 0 entries or named alike. */
static gboolean
infer_minus_one (const FbNode *node, const FbShape *x, FbShape *out, int at,
                 const gboolean copied[FB_MAX_RANK], GError **error)
{
  gboolean used[FB_MAX_RANK] = { FALSE };   /* input unknown dims cancelled so far */
  int64_t p_in = 1, p_out = 1;
  int left = 0;
  const char *left_sym = NULL;

  for (int i = 0; i < x->rank; i++)
    if (x->dim[i] >= 0 && __builtin_mul_overflow (p_in, x->dim[i], &p_in))
      return _fb_infer_fail (error, node, "the input's element count overflows 64 bits");
  for (int i = 0; i < out->rank; i++)
    {
      if (i == at)
        continue;
      if (out->dim[i] >= 0)
        {
          if (__builtin_mul_overflow (p_out, out->dim[i], &p_out))
            return _fb_infer_fail (error, node, "the requested shape's element count overflows");
          continue;
        }
      if (copied[i] && i < x->rank)
        {
          used[i] = TRUE;
          continue;
        }
      /* An unknown output extent that matches no input extent by name: nothing to cancel. */
      {
        gboolean matched = FALSE;
        for (int j = 0; j < x->rank && !matched; j++)
          if (!used[j] && x->dim[j] < 0 && x->sym[j] != NULL && x->sym[j] == out->sym[i])
            used[j] = matched = TRUE;
        if (!matched)
          return TRUE;
      }
    }
  for (int j = 0; j < x->rank; j++)
    if (x->dim[j] < 0 && !used[j])
      {
        left++;
        left_sym = x->sym[j];
      }
  if (p_out == 0)
    return TRUE;   /* 0 x -1 fits any extent: the data cannot tell */
  if (left == 0)
    {
      if (p_in % p_out != 0)
        {
          g_autofree char *a = fb_shape_to_string (x);
          return _fb_infer_fail (error, node, "cannot reshape %s (%" G_GINT64_FORMAT " elements) "
                                 "into a shape with a multiple of %" G_GINT64_FORMAT, a, p_in, p_out);
        }
      out->dim[at] = p_in / p_out;
    }
  else if (left == 1 && p_in == p_out)
    out->sym[at] = left_sym;
  return TRUE;
}

gboolean
_fb_infer_reshape (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  g_autofree int64_t *want = NULL;
  gboolean copied[FB_MAX_RANK] = { FALSE };
  gboolean allowzero = FALSE;
  FbIntVec iv;
  int n, at = -1;
  FbShape out;

  if (x == NULL || _fb_infer_require (node, 1, error) == NULL ||
      !_fb_infer_check_type (node, 1, FB_TYPES_INT64, error))
    return FALSE;
  if (_fb_infer_opset (node) >= 14)
    allowzero = fb_node_attr_int (node, "allowzero", 0) != 0;
  else if (!_fb_infer_no_attr (node, "allowzero", error))
    return FALSE;
  if (!_fb_infer_const_ints (node, 1, "input 'shape'", FB_INFER_MAX_VECTOR, &want, &n, error))
    return FALSE;

  if (n >= 0)
    {
      if (!_fb_infer_check_rank (node, n, error))
        return FALSE;
      iv.n = n;
      for (int i = 0; i < n; i++)
        {
          iv.v[i] = want[i];
          iv.known[i] = TRUE;
          iv.sym[i] = NULL;
        }
    }
  else if (!_fb_infer_int_vector (node, 1, &iv) || iv.scalar)
    {
      /* Only the rank is known: the length of the shape vector. */
      int64_t len;
      if (!_fb_infer_vector_length (node, 1, "input 'shape'", FALSE, &len, error))
        return FALSE;
      if (len < 0)
        return _fb_infer_set_output (node, 0, x->dtype, &(FbShape) { .rank = FB_RANK_UNKNOWN }, error);
      if (!_fb_infer_check_rank (node, len, error))
        return FALSE;
      out = _fb_shape_of_rank ((int) len);
      return _fb_infer_set_output (node, 0, x->dtype, &out, error);
    }
  else if (!_fb_infer_check_rank (node, iv.n, error))
    return FALSE;

  /* Entries computed at run time come from extents (Shape, Gather ...): they are neither 0 nor
   * -1, and may carry the extent's name. */
  out = _fb_shape_of_rank (iv.n);
  for (int i = 0; i < iv.n; i++)
    {
      int64_t v = iv.v[i];
      if (!iv.known[i])
        out.sym[i] = iv.sym[i];
      else if (v == -1)
        {
          if (at >= 0)
            return _fb_infer_fail (error, node, "the shape has -1 at both %d and %d", at, i);
          at = i;
        }
      else if (v < -1)
        return _fb_infer_fail (error, node, "shape entry %d is %" G_GINT64_FORMAT, i, v);
      else if (v == 0 && !allowzero)
        {
          /* 0 copies the input's extent at the same position. */
          if (x->shape.rank >= 0 && i >= x->shape.rank)
            return _fb_infer_fail (error, node, "shape entry %d is 0 (copy the input's extent) "
                                   "but the input has rank %d", i, x->shape.rank);
          if (x->shape.rank >= 0)
            {
              out.dim[i] = x->shape.dim[i];
              out.sym[i] = x->shape.sym[i];
            }
          copied[i] = TRUE;
        }
      else
        out.dim[i] = v;
    }
  if (allowzero && at >= 0)
    for (int i = 0; i < iv.n; i++)
      if (iv.known[i] && iv.v[i] == 0)
        return _fb_infer_fail (error, node, "with allowzero=1 the shape cannot hold both 0 and -1");

  if (x->shape.rank >= 0 && at >= 0)
    {
      if (!infer_minus_one (node, &x->shape, &out, at, copied, error))
        return FALSE;
    }
  else if (x->shape.rank >= 0)
    {
      gboolean overflow_in, overflow_out;
      int64_t a = fb_shape_numel (&x->shape, &overflow_in);
      int64_t b = fb_shape_numel (&out, &overflow_out);
      if (a >= 0 && b >= 0 && a != b)
        {
          g_autofree char *xs = fb_shape_to_string (&x->shape);
          g_autofree char *os = fb_shape_to_string (&out);
          return _fb_infer_fail (error, node, "cannot reshape %s (%" G_GINT64_FORMAT " elements) "
                                 "into %s (%" G_GINT64_FORMAT " elements)", xs, a, os, b);
        }
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

gboolean
_fb_infer_flatten (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  int64_t axis = fb_node_attr_int (node, "axis", 1);
  FbShape out = _fb_shape_of_rank (2);
  int r, a;

  if (x == NULL)
    return FALSE;
  r = x->shape.rank;
  if (r < 0)
    return _fb_infer_set_output (node, 0, x->dtype, &out, error);
  /* axis lies in [-r, r] (negative only from opset 11): both ends are valid split points. */
  if (axis < (_fb_infer_opset (node) >= 11 ? -r : 0) || axis > r)
    return _fb_infer_fail (error, node, "axis %" G_GINT64_FORMAT " is out of range for rank %d",
                           axis, r);
  a = (int) (axis < 0 ? axis + r : axis);
  if (!product (&x->shape, 0, a, &out.dim[0], &out.sym[0]) ||
      !product (&x->shape, a, r, &out.dim[1], &out.sym[1]))
    return _fb_infer_fail (error, node, "the flattened extents overflow 64 bits");
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

/* Reads the axes of Squeeze/Unsqueeze from the attribute (before opset 13) or the input. *n is
 * -1 when given at run time only; *given tells whether there are axes at all. */
static gboolean
read_axes (const FbNode *node, int64_t **axes, int *n, gboolean *given, GError **error)
{
  if (_fb_infer_opset (node) >= 13)
    {
      *given = fb_node_input (node, 1) != NULL;
      return _fb_infer_no_attr (node, "axes", error) &&
             _fb_infer_check_type (node, 1, FB_TYPES_INT64, error) &&
             _fb_infer_const_ints (node, 1, "input 'axes'", FB_INFER_MAX_VECTOR, axes, n, error);
    }
  else
    {
      const int64_t *v;
      guint count;

      if (!_fb_infer_no_input (node, 1, "axes", 13, error) ||
          !_fb_infer_attr_ints (node, "axes", -1, &v, &count, error))
        return FALSE;
      *given = v != NULL;
      *axes = v ? g_memdup2 (v, sizeof (int64_t) * MAX (count, 1)) : NULL;
      *n = v ? (int) count : -1;
      return TRUE;
    }
}

gboolean
_fb_infer_squeeze (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  g_autofree int64_t *axes = NULL;
  gboolean given, mask[FB_MAX_RANK];
  FbShape out = { 0 };
  int n;

  if (x == NULL || !read_axes (node, &axes, &n, &given, error))
    return FALSE;
  if (x->shape.rank < 0)
    return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
  if (given && n < 0)
    {
      int64_t len;
      if (!_fb_infer_vector_length (node, 1, "input 'axes'", FALSE, &len, error))
        return FALSE;
      if (len > x->shape.rank)
        return _fb_infer_fail (error, node, "input 'axes' has %" G_GINT64_FORMAT " entries for "
                               "an input of rank %d", len, x->shape.rank);
      out = len >= 0 ? _fb_shape_of_rank (x->shape.rank - (int) len) : fb_shape_unknown ();
      return _fb_infer_set_output (node, 0, x->dtype, &out, error);
    }
  if (!given || n == 0)
    {
      /* Every extent of 1 goes; an unknown extent might be 1, so the rank is then unknown. */
      for (int i = 0; i < x->shape.rank; i++)
        {
          if (x->shape.dim[i] < 0)
            return _fb_infer_set_output (node, 0, x->dtype, &(FbShape) { .rank = FB_RANK_UNKNOWN },
                                         error);
          mask[i] = x->shape.dim[i] == 1;
        }
    }
  else if (!_fb_infer_axes_mask (node, axes, n, x->shape.rank, "axes", mask, error))
    return FALSE;
  for (int i = 0; i < x->shape.rank; i++)
    {
      if (!mask[i])
        {
          out.dim[out.rank] = x->shape.dim[i];
          out.sym[out.rank++] = x->shape.sym[i];
        }
      else if (x->shape.dim[i] >= 0 && x->shape.dim[i] != 1)
        return _fb_infer_fail (error, node, "cannot squeeze axis %d of extent %" G_GINT64_FORMAT,
                               i, x->shape.dim[i]);
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

gboolean
_fb_infer_unsqueeze (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  g_autofree int64_t *axes = NULL;
  gboolean given, mask[FB_MAX_RANK];
  FbShape out;
  int n, r;

  if (x == NULL || !read_axes (node, &axes, &n, &given, error))
    return FALSE;
  if (!given)
    return _fb_infer_opset (node) >= 13
           ? _fb_infer_invalid (error, node, "required input 1 ('axes') is missing")
           : _fb_infer_fail (error, node, "the attribute 'axes' is missing");
  r = x->shape.rank;
  if (n < 0)
    {
      int64_t len;
      if (!_fb_infer_vector_length (node, 1, "input 'axes'", FALSE, &len, error))
        return FALSE;
      if (len < 0 || r < 0)
        return _fb_infer_set_output (node, 0, x->dtype, &(FbShape) { .rank = FB_RANK_UNKNOWN }, error);
      if (!_fb_infer_check_rank (node, r + len, error))
        return FALSE;
      out = _fb_shape_of_rank (r + (int) len);
      return _fb_infer_set_output (node, 0, x->dtype, &out, error);
    }
  if (r < 0)
    return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
  if (!_fb_infer_check_rank (node, (int64_t) r + n, error))
    return FALSE;
  /* Axes count in the output's rank. */
  if (!_fb_infer_axes_mask (node, axes, n, r + n, "axes", mask, error))
    return FALSE;
  out = _fb_shape_of_rank (r + n);
  for (int i = 0, k = 0; i < r + n; i++)
    {
      if (mask[i])
        out.dim[i] = 1;
      else
        {
          out.dim[i] = x->shape.dim[k];
          out.sym[i] = x->shape.sym[k++];
        }
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}
