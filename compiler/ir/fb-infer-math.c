/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for the operators added for conformance: the extra elementwise maps (trigonometric,
 * hyperbolic, IsInf, Celu, Mish, Shrink, ThresholdedRelu), BitShift, CastLike, EyeLike,
 * Hardmax and the two losses. */
#include "fb-infer-private.h"

#include <string.h>

gboolean
_fb_infer_math_unary (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  FbTypeClass cls = node->op == FB_OP_SHRINK ? FB_TYPES_NUMERIC : FB_TYPES_FLOAT;

  if (x == NULL || !_fb_infer_check_type (node, 0, cls, error))
    return FALSE;
  if (node->op == FB_OP_CELU && fb_node_attr_float (node, "alpha", 1.0f) == 0.0f)
    return _fb_infer_fail (error, node, "alpha must not be 0 (the formula divides by it)");
  if (node->op == FB_OP_SHRINK && fb_node_attr_float (node, "lambd", 0.5f) < 0.0f)
    return _fb_infer_fail (error, node, "lambd must not be negative");
  FbDType out = node->op == FB_OP_IS_INF ? FB_DTYPE_BOOL : x->dtype;
  return _fb_infer_set_output (node, 0, out, &x->shape, error);
}

gboolean
_fb_infer_bit_shift (FbGraph *graph, FbNode *node, GError **error)
{
  static const guint both[] = { 0, 1 };
  FbValue *x = _fb_infer_require (node, 0, error);
  FbValue *s = _fb_infer_require (node, 1, error);
  FbDType t;
  FbShape out;
  const char *dir = fb_node_attr_string (node, "direction", NULL);

  if (x == NULL || s == NULL)
    return FALSE;
  if (dir == NULL || (strcmp (dir, "LEFT") != 0 && strcmp (dir, "RIGHT") != 0))
    return _fb_infer_fail (error, node, "the attribute 'direction' must be 'LEFT' or 'RIGHT'");
  if (!_fb_infer_same_type (node, both, 2, &t, error))
    return FALSE;
  if (t != FB_DTYPE_UNDEFINED && (!fb_dtype_is_integer (t) || fb_dtype_is_signed (t)))
    return _fb_infer_unsupported (error, node, "element type %s is not supported (unsigned "
                                  "integers only)", fb_dtype_name (t));
  if (!_fb_infer_broadcast (node, &x->shape, &s->shape, &out, error))
    return FALSE;
  return _fb_infer_set_output (node, 0, t, &out, error);
}

gboolean
_fb_infer_cast_like (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  FbValue *like = _fb_infer_require (node, 1, error);

  if (x == NULL || like == NULL)
    return FALSE;
  if (x->dtype == FB_DTYPE_STRING || like->dtype == FB_DTYPE_STRING)
    return _fb_infer_unsupported (error, node, "casts from or to strings are not supported");
  return _fb_infer_set_output (node, 0, like->dtype, &x->shape, error);
}

gboolean
_fb_infer_eye_like (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  int64_t dt = fb_node_attr_int (node, "dtype", 0);
  FbDType out;

  if (x == NULL)
    return FALSE;
  if (x->shape.rank >= 0 && x->shape.rank != 2)
    return _fb_infer_fail (error, node, "the input must have rank 2, not %d", x->shape.rank);
  if (dt == 0)
    out = x->dtype;
  else if (!fb_dtype_is_known ((int) dt) || dt > G_MAXINT32 || dt == FB_DTYPE_STRING)
    return _fb_infer_fail (error, node, "the attribute 'dtype' (%" G_GINT64_FORMAT ") is not an "
                           "element type EyeLike makes", dt);
  else
    out = (FbDType) dt;
  if (out == FB_DTYPE_STRING)
    return _fb_infer_unsupported (error, node, "element type string is not supported");
  return _fb_infer_set_output (node, 0, out, &x->shape, error);
}

gboolean
_fb_infer_hardmax (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  int axis;

  if (x == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error))
    return FALSE;
  if (x->shape.rank >= 0 &&
      !_fb_infer_axis (node, fb_node_attr_int (node, "axis", _fb_infer_opset (node) >= 13 ? -1 : 1),
                       x->shape.rank, "axis", &axis, error))
    return FALSE;
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: input [N, C, d...], target [N, d...],
 * an optional weight [C]; the loss has the target's shape, or is a scalar when reduced. */
gboolean
_fb_infer_loss (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  FbValue *t = _fb_infer_require (node, 1, error);
  const char *red = fb_node_attr_string (node, "reduction", "mean");
  FbShape out;

  if (x == NULL || t == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
      !_fb_infer_check_type (node, 1, FB_TYPES_INDEX, error) ||
      !_fb_infer_check_type (node, 2, FB_TYPES_FLOAT, error))
    return FALSE;
  if (strcmp (red, "mean") != 0 && strcmp (red, "sum") != 0 && strcmp (red, "none") != 0)
    return _fb_infer_fail (error, node, "reduction '%s' is not 'none', 'sum' or 'mean'", red);
  if (fb_node_input (node, 2) && fb_node_input (node, 2)->dtype != FB_DTYPE_UNDEFINED &&
      x->dtype != FB_DTYPE_UNDEFINED && fb_node_input (node, 2)->dtype != x->dtype)
    return _fb_infer_fail (error, node, "the weight's element type %s is not the input's %s",
                           fb_dtype_name (fb_node_input (node, 2)->dtype),
                           fb_dtype_name (x->dtype));
  if (x->shape.rank >= 0 && x->shape.rank < 2)
    return _fb_infer_fail (error, node, "the input must have rank 2 or more (N, C, ...), not %d",
                           x->shape.rank);
  if (x->shape.rank >= 0 && t->shape.rank >= 0)
    {
      gboolean ok = t->shape.rank == x->shape.rank - 1;
      for (int i = 0; ok && i < t->shape.rank; i++)
        {
          int64_t a = t->shape.dim[i], b = x->shape.dim[i == 0 ? 0 : i + 1];
          ok = a < 0 || b < 0 || a == b;
        }
      if (!ok)
        return _fb_infer_fail (error, node, "the target's shape is not the input's without its "
                               "class axis");
    }
  FbValue *w = fb_node_input (node, 2);
  if (w && w->shape.rank >= 0)
    {
      if (w->shape.rank != 1)
        return _fb_infer_fail (error, node, "the weight must be a vector, not of rank %d",
                               w->shape.rank);
      if (x->shape.rank >= 2 && x->shape.dim[1] >= 0 && w->shape.dim[0] >= 0 &&
          w->shape.dim[0] != x->shape.dim[1])
        return _fb_infer_fail (error, node, "the weight has %" G_GINT64_FORMAT " entries for %"
                               G_GINT64_FORMAT " classes", w->shape.dim[0], x->shape.dim[1]);
    }
  if (strcmp (red, "none") == 0)
    {
      if (t->shape.rank >= 0)
        out = t->shape;
      else if (x->shape.rank >= 2)
        {
          /* The target's shape is the input's without its class axis. */
          out = x->shape;
          for (int i = 1; i + 1 < x->shape.rank; i++)
            {
              out.dim[i] = x->shape.dim[i + 1];
              out.sym[i] = x->shape.sym[i + 1];
            }
          out.rank = x->shape.rank - 1;
        }
      else
        out = fb_shape_unknown ();
    }
  else
    out = _fb_shape_of_rank (0);
  if (!_fb_infer_set_output (node, 0, x->dtype, &out, error))
    return FALSE;
  return node->op != FB_OP_SOFTMAX_CE_LOSS ||
         _fb_infer_set_output (node, 1, x->dtype, &x->shape, error);
}
