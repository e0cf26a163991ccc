/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Helpers every operator family of the shape inference shares: errors that name the node,
 * typed access to inputs and attributes, constants, extent arithmetic, and the merge of inferred
 * results with what the model declared. */
#include "fb-infer-private.h"

#include <stdarg.h>
#include <string.h>

/* ---- errors --------------------------------------------------------------------------------- */

static gboolean
fail_valist (GError **error, int code, const FbNode *node, const char *format, va_list args)
{
  g_autofree char *message = g_strdup_vprintf (format, args);

  g_set_error (error, FB_GRAPH_ERROR, code, "node '%s' (%s): %s",
               node->name ? node->name : "", node->op_type ? node->op_type : fb_op_name (node->op),
               message);
  return FALSE;
}

gboolean
_fb_infer_fail (GError **error, const FbNode *node, const char *format, ...)
{
  va_list args;

  va_start (args, format);
  fail_valist (error, FB_GRAPH_ERROR_SHAPE, node, format, args);
  va_end (args);
  return FALSE;
}

gboolean
_fb_infer_unsupported (GError **error, const FbNode *node, const char *format, ...)
{
  va_list args;

  va_start (args, format);
  fail_valist (error, FB_GRAPH_ERROR_UNSUPPORTED, node, format, args);
  va_end (args);
  return FALSE;
}

gboolean
_fb_infer_invalid (GError **error, const FbNode *node, const char *format, ...)
{
  va_list args;

  va_start (args, format);
  fail_valist (error, FB_GRAPH_ERROR_INVALID, node, format, args);
  va_end (args);
  return FALSE;
}

/* ---- node access ---------------------------------------------------------------------------- */

int
_fb_infer_opset (const FbNode *node)
{
  return node->opset > 0 ? node->opset : FB_INFER_LATEST_OPSET;
}

FbValue *
_fb_infer_require (const FbNode *node, guint i, GError **error)
{
  FbValue *v = fb_node_input (node, i);

  /* Rules fetch their inputs together and check once (x = require (0), y = require (1)), so
   * with several missing the first one's error stands: setting a GError twice is a bug. */
  if (v == NULL && (error == NULL || *error == NULL))
    _fb_infer_invalid (error, node, "required input %u is missing", i);
  return v;
}

gboolean
_fb_infer_no_attr (const FbNode *node, const char *name, GError **error)
{
  if (fb_node_attr (node, name) != NULL)
    return _fb_infer_fail (error, node, "attribute '%s' does not exist in opset %d of %s",
                           name, _fb_infer_opset (node), node->op_type);
  return TRUE;
}

gboolean
_fb_infer_no_input (const FbNode *node, guint i, const char *name, int since, GError **error)
{
  if (fb_node_input (node, i) != NULL && _fb_infer_opset (node) < since)
    return _fb_infer_fail (error, node, "input %u ('%s') exists only from opset %d, the model "
                           "uses opset %d", i, name, since, _fb_infer_opset (node));
  return TRUE;
}

gboolean
_fb_infer_attr_ints (const FbNode *node, const char *name, int want, const int64_t **v, guint *n,
                     GError **error)
{
  const FbAttr *a = fb_node_attr (node, name);

  *v = NULL;
  *n = 0;
  if (a == NULL)
    return TRUE;
  if (a->type != FB_ATTR_INTS)
    return _fb_infer_fail (error, node, "attribute '%s' must be a list of integers", name);
  if (want >= 0 && a->ints.n != (guint) want)
    return _fb_infer_fail (error, node, "attribute '%s' has %u entries, expected %d",
                           name, a->ints.n, want);
  *v = a->ints.v;
  *n = a->ints.n;
  return TRUE;
}

/* ---- element types -------------------------------------------------------------------------- */

gboolean
_fb_dtype_in_class (FbDType dtype, FbTypeClass cls)
{
  switch (cls)
    {
    case FB_TYPES_ANY:     return TRUE;
    case FB_TYPES_NUMERIC: return fb_dtype_is_float (dtype) || fb_dtype_is_integer (dtype);
    case FB_TYPES_SIGNED:  return fb_dtype_is_signed (dtype);
    case FB_TYPES_FLOAT:   return fb_dtype_is_float (dtype);
    case FB_TYPES_INTEGER: return fb_dtype_is_integer (dtype);
    case FB_TYPES_INDEX:   return dtype == FB_DTYPE_INT32 || dtype == FB_DTYPE_INT64;
    case FB_TYPES_INT64:   return dtype == FB_DTYPE_INT64;
    case FB_TYPES_BOOL:    return dtype == FB_DTYPE_BOOL;
    default:               g_assert_not_reached ();
    }
}

static const char *
class_name (FbTypeClass cls)
{
  switch (cls)
    {
    case FB_TYPES_ANY:     return "any type";
    case FB_TYPES_NUMERIC: return "a numeric type";
    case FB_TYPES_SIGNED:  return "a signed numeric type";
    case FB_TYPES_FLOAT:   return "a floating-point type";
    case FB_TYPES_INTEGER: return "an integer type";
    case FB_TYPES_INDEX:   return "int32 or int64";
    case FB_TYPES_INT64:   return "int64";
    case FB_TYPES_BOOL:    return "bool";
    default:               g_assert_not_reached ();
    }
}

gboolean
_fb_infer_check_type (const FbNode *node, guint i, FbTypeClass cls, GError **error)
{
  FbValue *v = fb_node_input (node, i);

  if (v == NULL || v->dtype == FB_DTYPE_UNDEFINED || _fb_dtype_in_class (v->dtype, cls))
    return TRUE;
  if (v->dtype == FB_DTYPE_STRING && cls == FB_TYPES_NUMERIC)
    return _fb_infer_unsupported (error, node, "input %u ('%s') holds strings", i, v->name);
  return _fb_infer_fail (error, node, "input %u ('%s') is %s, but must be %s", i, v->name,
                         fb_dtype_name (v->dtype), class_name (cls));
}

gboolean
_fb_infer_same_type (const FbNode *node, const guint *inputs, guint n, FbDType *out,
                     GError **error)
{
  FbDType seen = FB_DTYPE_UNDEFINED;
  guint seen_at = 0;

  for (guint k = 0; k < n; k++)
    {
      FbValue *v = fb_node_input (node, inputs[k]);
      if (v == NULL || v->dtype == FB_DTYPE_UNDEFINED)
        continue;
      if (seen == FB_DTYPE_UNDEFINED)
        {
          seen = v->dtype;
          seen_at = inputs[k];
        }
      else if (v->dtype != seen)
        return _fb_infer_fail (error, node, "input %u ('%s') is %s but input %u is %s",
                               inputs[k], v->name, fb_dtype_name (v->dtype), seen_at,
                               fb_dtype_name (seen));
    }
  *out = seen;
  return TRUE;
}

/* ---- constants ------------------------------------------------------------------------------ */

static gboolean
const_vector (const FbNode *node, guint i, const char *what, guint max_len, gboolean floats_ok,
              FbTensor **tensor, int *n, GError **error)
{
  FbValue *v = fb_node_input (node, i);
  FbTensor *t;

  *tensor = NULL;
  *n = -1;
  if (v == NULL || v->constant == NULL)
    return TRUE;
  t = v->constant;
  if (!fb_dtype_is_integer (t->dtype) && !(floats_ok && fb_dtype_is_float (t->dtype)))
    return _fb_infer_fail (error, node, "%s must be %s, not %s", what,
                           floats_ok ? "a numeric tensor" : "an integer tensor",
                           fb_dtype_name (t->dtype));
  if (t->rank > 1)
    return _fb_infer_fail (error, node, "%s must be a 1-D tensor, not rank %d", what, t->rank);
  if (t->numel > (int64_t) max_len)
    return _fb_infer_fail (error, node, "%s has %" G_GINT64_FORMAT " entries, more than %u",
                           what, t->numel, max_len);
  *tensor = t;
  *n = (int) t->numel;
  return TRUE;
}

gboolean
_fb_infer_const_ints (const FbNode *node, guint i, const char *what, guint max_len,
                      int64_t **out, int *n, GError **error)
{
  FbTensor *t;

  *out = NULL;
  if (!const_vector (node, i, what, max_len, FALSE, &t, n, error))
    return FALSE;
  if (t == NULL)
    {
      /* Computed from shapes: as good as a constant when every entry is known. */
      FbIntVec iv;
      if (!_fb_infer_int_vector (node, i, &iv) || iv.n > (int) max_len)
        return TRUE;
      for (int k = 0; k < iv.n; k++)
        if (!iv.known[k])
          return TRUE;
      *n = iv.n;
      *out = g_memdup2 (iv.v, sizeof (int64_t) * MAX (iv.n, 1));
      return TRUE;
    }
  *out = g_new (int64_t, MAX (*n, 1));
  for (int k = 0; k < *n; k++)
    (*out)[k] = fb_tensor_get_i64 (t, k);
  return TRUE;
}

gboolean
_fb_infer_const_floats (const FbNode *node, guint i, const char *what, guint max_len,
                        double **out, int *n, GError **error)
{
  FbTensor *t;

  *out = NULL;
  if (!const_vector (node, i, what, max_len, TRUE, &t, n, error))
    return FALSE;
  if (t == NULL)
    return TRUE;
  *out = g_new (double, MAX (*n, 1));
  for (int k = 0; k < *n; k++)
    (*out)[k] = fb_tensor_get_f64 (t, k);
  return TRUE;
}

gboolean
_fb_infer_vector_length (const FbNode *node, guint i, const char *what, gboolean allow_scalar,
                         int64_t *len, GError **error)
{
  FbValue *v = fb_node_input (node, i);

  *len = -1;
  if (v == NULL || v->shape.rank < 0)
    return TRUE;
  if (v->shape.rank == 1)
    *len = v->shape.dim[0] >= 0 ? v->shape.dim[0] : -1;
  else if (v->shape.rank == 0 && allow_scalar)
    *len = 1;
  else
    {
      g_autofree char *s = fb_shape_to_string (&v->shape);
      return _fb_infer_fail (error, node, "%s must be a 1-D tensor, not %s", what, s);
    }
  return TRUE;
}

gboolean
_fb_infer_check_scalar (const FbNode *node, guint i, const char *what, gboolean allow_vector1,
                        GError **error)
{
  FbValue *v = fb_node_input (node, i);
  const FbShape *s;

  if (v == NULL || v->shape.rank < 0)
    return TRUE;
  s = &v->shape;
  if (s->rank == 0 || (allow_vector1 && s->rank == 1 && s->dim[0] == 1))
    return TRUE;
  if (allow_vector1 && s->rank == 1 && s->dim[0] < 0)
    return TRUE;
  {
    g_autofree char *text = fb_shape_to_string (s);
    return _fb_infer_fail (error, node, "%s must hold a single value, not a tensor of shape %s",
                           what, text);
  }
}

gboolean
_fb_infer_check_one_element (const FbNode *node, guint i, const char *what, GError **error)
{
  FbValue *v = fb_node_input (node, i);
  gboolean one = TRUE;

  if (v == NULL || v->shape.rank < 0)
    return TRUE;
  /* An unknown extent may be 1 at run time; the interpreter checks the element count then. */
  for (int d = 0; d < v->shape.rank; d++)
    one = one && (v->shape.dim[d] == 1 || v->shape.dim[d] < 0);
  if (one)
    return TRUE;
  {
    g_autofree char *text = fb_shape_to_string (&v->shape);
    return _fb_infer_fail (error, node, "%s must hold a single element, not a tensor of shape %s",
                           what, text);
  }
}

/* ---- shapes --------------------------------------------------------------------------------- */

gboolean
_fb_dim_mul (int64_t a, int64_t b, int64_t *out)
{
  if (a < 0 || b < 0)
    {
      /* Zero times anything is zero, even an unknown extent. */
      *out = (a == 0 || b == 0) ? 0 : FB_DIM_UNKNOWN;
      return TRUE;
    }
  return !__builtin_mul_overflow (a, b, out);
}

gboolean
_fb_dim_add (int64_t a, int64_t b, int64_t *out)
{
  if (a < 0 || b < 0)
    {
      *out = FB_DIM_UNKNOWN;
      return TRUE;
    }
  return !__builtin_add_overflow (a, b, out);
}

gboolean
_fb_infer_axis (const FbNode *node, int64_t axis, int rank, const char *what, int *out,
                GError **error)
{
  if (!fb_axis_normalize (axis, rank, out))
    return _fb_infer_fail (error, node, "%s %" G_GINT64_FORMAT " is out of range for rank %d",
                           what, axis, rank);
  return TRUE;
}

gboolean
_fb_infer_axes_mask (const FbNode *node, const int64_t *axes, int n, int rank, const char *what,
                     gboolean mask[FB_MAX_RANK], GError **error)
{
  for (int k = 0; k < FB_MAX_RANK; k++)
    mask[k] = FALSE;
  for (int k = 0; k < n; k++)
    {
      int a;
      if (!_fb_infer_axis (node, axes[k], rank, what, &a, error))
        return FALSE;
      if (mask[a])
        return _fb_infer_fail (error, node, "%s lists axis %d twice", what, a);
      mask[a] = TRUE;
    }
  return TRUE;
}

gboolean
_fb_infer_check_rank (const FbNode *node, int64_t rank, GError **error)
{
  if (rank > FB_MAX_RANK)
    return _fb_infer_unsupported (error, node, "the output would have rank %" G_GINT64_FORMAT
                                  ", more than the %d dimensions supported", rank, FB_MAX_RANK);
  if (rank < 0)
    return _fb_infer_fail (error, node, "the output would have a negative rank");
  return TRUE;
}

FbShape
_fb_shape_of_rank (int rank)
{
  FbShape s = { .rank = rank };

  g_assert (rank >= 0 && rank <= FB_MAX_RANK);
  for (int i = 0; i < rank; i++)
    s.dim[i] = FB_DIM_UNKNOWN;
  return s;
}

gboolean
_fb_infer_broadcast (const FbNode *node, const FbShape *a, const FbShape *b, FbShape *out,
                     GError **error)
{
  g_autoptr(GError) local = NULL;

  if (!fb_shape_broadcast (a, b, out, &local))
    return _fb_infer_fail (error, node, "%s", local->message);
  return TRUE;
}

FbShape
_fb_infer_input_shape (const FbNode *node, guint i)
{
  FbValue *v = fb_node_input (node, i);
  return v != NULL ? v->shape : fb_shape_unknown ();
}

FbDType
_fb_infer_input_type (const FbNode *node, guint i)
{
  FbValue *v = fb_node_input (node, i);
  return v != NULL ? v->dtype : FB_DTYPE_UNDEFINED;
}

FbShape
_fb_shape_join (const FbShape *a, const FbShape *b)
{
  FbShape r;

  if (a->rank < 0 || b->rank < 0 || a->rank != b->rank)
    return fb_shape_unknown ();
  r = _fb_shape_of_rank (a->rank);
  for (int i = 0; i < a->rank; i++)
    {
      if (a->dim[i] >= 0 && a->dim[i] == b->dim[i])
        r.dim[i] = a->dim[i];
      else if (a->dim[i] < 0 && b->dim[i] < 0 && a->sym[i] != NULL && a->sym[i] == b->sym[i])
        r.sym[i] = a->sym[i];
    }
  return r;
}

/* ---- results -------------------------------------------------------------------------------- */

static gboolean
check_size (const FbNode *node, const FbValue *value, const FbShape *s, GError **error)
{
  int64_t n = 1;

  /* Known extents alone can already overflow; unknown ones cannot make that any better. */
  for (int i = 0; i < s->rank; i++)
    if (s->dim[i] >= 0 && __builtin_mul_overflow (n, s->dim[i], &n))
      {
        g_autofree char *text = fb_shape_to_string (s);
        return _fb_infer_fail (error, node, "'%s' would have shape %s, whose element count "
                               "overflows 64 bits", value->name, text);
      }
  return TRUE;
}

gboolean
_fb_infer_merge_value (const FbNode *node, FbValue *value, FbDType dtype, const FbShape *shape,
                       GError **error)
{
  FbShape merged;
  const FbShape *have = &value->shape;

  if (dtype != FB_DTYPE_UNDEFINED && value->dtype != FB_DTYPE_UNDEFINED && value->dtype != dtype)
    return _fb_infer_fail (error, node, "'%s' is declared %s but computes %s", value->name,
                           fb_dtype_name (value->dtype), fb_dtype_name (dtype));

  if (shape->rank < 0)
    merged = *have;
  else if (have->rank < 0)
    {
      merged = *shape;
      for (int i = 0; i < merged.rank; i++)
        if (merged.dim[i] >= 0)
          merged.sym[i] = NULL;
        else
          merged.dim[i] = FB_DIM_UNKNOWN;
    }
  else
    {
      if (have->rank != shape->rank)
        {
          g_autofree char *a = fb_shape_to_string (have);
          g_autofree char *b = fb_shape_to_string (shape);
          return _fb_infer_fail (error, node, "'%s' is declared with shape %s but computes %s",
                                 value->name, a, b);
        }
      merged = _fb_shape_of_rank (have->rank);
      for (int i = 0; i < have->rank; i++)
        {
          int64_t h = have->dim[i], n = shape->dim[i];
          if (h >= 0 && n >= 0 && h != n)
            {
              g_autofree char *a = fb_shape_to_string (have);
              g_autofree char *b = fb_shape_to_string (shape);
              return _fb_infer_fail (error, node, "'%s' is declared with shape %s but computes %s",
                                     value->name, a, b);
            }
          if (n >= 0 || h >= 0)
            merged.dim[i] = n >= 0 ? n : h;
          else
            merged.sym[i] = have->sym[i] != NULL ? have->sym[i] : shape->sym[i];
        }
    }
  if (!check_size (node, value, &merged, error))
    return FALSE;
  if (value->dtype == FB_DTYPE_UNDEFINED)
    value->dtype = dtype;
  value->shape = merged;
  return TRUE;
}

gboolean
_fb_infer_set_output (const FbNode *node, guint i, FbDType dtype, const FbShape *shape,
                      GError **error)
{
  if (i >= node->n_outputs || node->outputs[i] == NULL)
    return TRUE;
  return _fb_infer_merge_value (node, node->outputs[i], dtype, shape, error);
}
