/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for elementwise operators: unary maps, binary and variadic broadcasting operators,
 * comparisons and logic (which give bool), Where, Cast, Clip, Dropout and PRelu. */
#include "fb-infer-private.h"

#include <math.h>

/* The element types a unary operator takes, as its ONNX schema lists them. */
static FbTypeClass
unary_class (const FbNode *node)
{
  switch (node->op)
    {
    case FB_OP_IDENTITY:
      return FB_TYPES_ANY;
    case FB_OP_NOT:
      return FB_TYPES_BOOL;
    case FB_OP_ABS: case FB_OP_SIGN: case FB_OP_ERF:
      return FB_TYPES_NUMERIC;
    case FB_OP_NEG:
      return FB_TYPES_SIGNED;
    case FB_OP_RELU:
      /* Relu took integers only from opset 14. */
      return _fb_infer_opset (node) >= 14 ? FB_TYPES_SIGNED : FB_TYPES_FLOAT;
    default:
      return FB_TYPES_FLOAT;
    }
}

gboolean
_fb_infer_unary (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  FbDType out;

  if (x == NULL || !_fb_infer_check_type (node, 0, unary_class (node), error))
    return FALSE;
  out = fb_op_has_flag (node->op, FB_OPF_LOGICAL) ? FB_DTYPE_BOOL : x->dtype;
  return _fb_infer_set_output (node, 0, out, &x->shape, error);
}

static gboolean
check_binary_types (const FbNode *node, FbDType *out, GError **error)
{
  static const guint both[] = { 0, 1 };
  FbTypeClass cls = FB_TYPES_NUMERIC;

  switch (node->op)
    {
    case FB_OP_AND: case FB_OP_OR: case FB_OP_XOR:
      cls = FB_TYPES_BOOL;
      break;
    case FB_OP_EQUAL:
      /* Equal also compares bools; strings are left to _fb_infer_check_type's message. */
      for (guint i = 0; i < 2; i++)
        if (_fb_infer_input_type (node, i) != FB_DTYPE_BOOL &&
            !_fb_infer_check_type (node, i, FB_TYPES_NUMERIC, error))
          return FALSE;
      return _fb_infer_same_type (node, both, 2, out, error);
    case FB_OP_POW:
      /* From opset 12 the exponent may have its own type; the result has the base's. */
      if (_fb_infer_opset (node) >= 12)
        {
          *out = _fb_infer_input_type (node, 0);
          return _fb_infer_check_type (node, 0, FB_TYPES_NUMERIC, error) &&
                 _fb_infer_check_type (node, 1, FB_TYPES_NUMERIC, error);
        }
      cls = FB_TYPES_FLOAT;
      break;
    default:
      break;
    }
  return _fb_infer_check_type (node, 0, cls, error) &&
         _fb_infer_check_type (node, 1, cls, error) &&
         _fb_infer_same_type (node, both, 2, out, error);
}

gboolean
_fb_infer_binary (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *a = _fb_infer_require (node, 0, error);
  FbValue *b = a ? _fb_infer_require (node, 1, error) : NULL;
  FbDType dtype;
  FbShape shape;

  if (b == NULL || !check_binary_types (node, &dtype, error))
    return FALSE;
  if (node->op == FB_OP_MOD && fb_dtype_is_float (dtype) &&
      fb_node_attr_int (node, "fmod", 0) != 1)
    return _fb_infer_fail (error, node, "Mod of %s needs fmod=1 (integer modulus is only "
                           "defined for integers)", fb_dtype_name (dtype));
  if (!_fb_infer_broadcast (node, &a->shape, &b->shape, &shape, error))
    return FALSE;
  if (fb_op_has_flag (node->op, FB_OPF_LOGICAL))
    dtype = FB_DTYPE_BOOL;
  return _fb_infer_set_output (node, 0, dtype, &shape, error);
}

gboolean
_fb_infer_variadic (FbGraph *graph, FbNode *node, GError **error)
{
  FbTypeClass cls = (node->op == FB_OP_MAX || node->op == FB_OP_MIN) ? FB_TYPES_NUMERIC
                                                                     : FB_TYPES_FLOAT;
  g_autofree guint *all = g_new (guint, MAX (node->n_inputs, 1));
  FbShape shape;
  FbDType dtype;

  if (node->n_inputs == 0)
    return _fb_infer_invalid (error, node, "needs at least one input");
  for (guint i = 0; i < node->n_inputs; i++)
    {
      if (_fb_infer_require (node, i, error) == NULL || !_fb_infer_check_type (node, i, cls, error))
        return FALSE;
      all[i] = i;
    }
  if (!_fb_infer_same_type (node, all, node->n_inputs, &dtype, error))
    return FALSE;
  shape = node->inputs[0]->shape;
  for (guint i = 1; i < node->n_inputs; i++)
    if (!_fb_infer_broadcast (node, &shape, &node->inputs[i]->shape, &shape, error))
      return FALSE;
  return _fb_infer_set_output (node, 0, dtype, &shape, error);
}

gboolean
_fb_infer_where (FbGraph *graph, FbNode *node, GError **error)
{
  static const guint xy[] = { 1, 2 };
  FbShape shape;
  FbDType dtype;

  for (guint i = 0; i < 3; i++)
    if (_fb_infer_require (node, i, error) == NULL)
      return FALSE;
  if (!_fb_infer_check_type (node, 0, FB_TYPES_BOOL, error) ||
      !_fb_infer_same_type (node, xy, 2, &dtype, error))
    return FALSE;
  if (!_fb_infer_broadcast (node, &node->inputs[0]->shape, &node->inputs[1]->shape, &shape, error) ||
      !_fb_infer_broadcast (node, &shape, &node->inputs[2]->shape, &shape, error))
    return FALSE;
  return _fb_infer_set_output (node, 0, dtype, &shape, error);
}

gboolean
_fb_infer_cast (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  const FbAttr *to = fb_node_attr (node, "to");

  if (x == NULL)
    return FALSE;
  if (to == NULL || to->type != FB_ATTR_INT)
    return _fb_infer_fail (error, node, "the integer attribute 'to' is missing");
  if (to->i == FB_DTYPE_STRING || x->dtype == FB_DTYPE_STRING)
    return _fb_infer_unsupported (error, node, "casts to or from strings are not supported");
  if (to->i <= 0 || to->i > G_MAXINT || !fb_dtype_is_known ((int) to->i))
    return _fb_infer_unsupported (error, node, "'to' = %" G_GINT64_FORMAT " is not an element "
                                  "type this project handles", to->i);
  return _fb_infer_set_output (node, 0, (FbDType) to->i, &x->shape, error);
}

gboolean
_fb_infer_clip (FbGraph *graph, FbNode *node, GError **error)
{
  static const guint bounds[] = { 0, 1, 2 };
  FbValue *x = _fb_infer_require (node, 0, error);
  FbDType dtype;

  if (x == NULL)
    return FALSE;
  if (_fb_infer_opset (node) < 11)
    {
      /* Clip-6: bounds are float attributes. */
      if (!_fb_infer_no_input (node, 1, "min", 11, error) ||
          !_fb_infer_no_input (node, 2, "max", 11, error) ||
          !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error))
        return FALSE;
      if (fb_node_attr_float (node, "min", -INFINITY) > fb_node_attr_float (node, "max", INFINITY))
        return _fb_infer_fail (error, node, "attribute 'min' is larger than 'max'");
    }
  else
    {
      if (!_fb_infer_no_attr (node, "min", error) || !_fb_infer_no_attr (node, "max", error) ||
          !_fb_infer_check_type (node, 0, _fb_infer_opset (node) >= 12 ? FB_TYPES_NUMERIC
                                                                          : FB_TYPES_FLOAT, error) ||
          !_fb_infer_check_scalar (node, 1, "input 'min'", FALSE, error) ||
          !_fb_infer_check_scalar (node, 2, "input 'max'", FALSE, error))
        return FALSE;
    }
  if (!_fb_infer_same_type (node, bounds, 3, &dtype, error))
    return FALSE;
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
}

static gboolean
check_ratio (const FbNode *node, double ratio, GError **error)
{
  if (!(ratio >= 0.0 && ratio < 1.0))
    return _fb_infer_fail (error, node, "the dropout ratio %g is outside [0, 1)", ratio);
  return TRUE;
}

gboolean
_fb_infer_dropout (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  int opset = _fb_infer_opset (node);

  if (x == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error))
    return FALSE;
  if (opset < 12)
    {
      if (!_fb_infer_no_input (node, 1, "ratio", 12, error) ||
          !_fb_infer_no_input (node, 2, "training_mode", 12, error) ||
          !check_ratio (node, fb_node_attr_float (node, "ratio", 0.5f), error))
        return FALSE;
    }
  else
    {
      g_autofree double *ratio = NULL;
      int n;

      if (!_fb_infer_no_attr (node, "ratio", error) ||
          !_fb_infer_check_type (node, 1, FB_TYPES_FLOAT, error) ||
          !_fb_infer_check_scalar (node, 1, "input 'ratio'", FALSE, error) ||
          !_fb_infer_check_type (node, 2, FB_TYPES_BOOL, error) ||
          !_fb_infer_check_scalar (node, 2, "input 'training_mode'", FALSE, error) ||
          !_fb_infer_const_floats (node, 1, "input 'ratio'", 1, &ratio, &n, error))
        return FALSE;
      if (n == 1 && !check_ratio (node, ratio[0], error))
        return FALSE;
    }
  /* The mask had the data's type before opset 10 and is bool since. */
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error) &&
         _fb_infer_set_output (node, 1, opset >= 10 ? FB_DTYPE_BOOL : x->dtype, &x->shape, error);
}

gboolean
_fb_infer_prelu (FbGraph *graph, FbNode *node, GError **error)
{
  static const guint both[] = { 0, 1 };
  FbValue *x = _fb_infer_require (node, 0, error);
  FbValue *slope = x ? _fb_infer_require (node, 1, error) : NULL;
  FbDType dtype;

  if (slope == NULL ||
      !_fb_infer_check_type (node, 0, _fb_infer_opset (node) >= 9 ? FB_TYPES_NUMERIC
                                                                   : FB_TYPES_FLOAT, error) ||
      !_fb_infer_same_type (node, both, 2, &dtype, error))
    return FALSE;
  /* The slope broadcasts to X one way only: the result always has X's shape. */
  if (x->shape.rank >= 0 && slope->shape.rank >= 0)
    {
      gboolean ok = slope->shape.rank <= x->shape.rank;
      for (int i = 0; ok && i < slope->shape.rank; i++)
        {
          int64_t s = slope->shape.dim[slope->shape.rank - 1 - i];
          int64_t d = x->shape.dim[x->shape.rank - 1 - i];
          ok = s < 0 || s == 1 || d < 0 || s == d;
        }
      if (!ok)
        {
          g_autofree char *xs = fb_shape_to_string (&x->shape);
          g_autofree char *ss = fb_shape_to_string (&slope->shape);
          return _fb_infer_fail (error, node, "slope of shape %s does not broadcast to the input "
                                 "shape %s", ss, xs);
        }
    }
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
}
