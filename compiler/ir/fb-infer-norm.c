/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for normalizations: BatchNormalization (with its training outputs),
 * InstanceNormalization, LayerNormalization (with Mean and InvStdDev) and LRN. */
#include "fb-infer-private.h"

/* Error unless input i is a vector of `channels` elements (when both are known). */
static gboolean
check_per_channel (const FbNode *node, guint i, const char *what, int64_t channels,
                   GError **error)
{
  FbValue *v = fb_node_input (node, i);

  if (v == NULL || v->shape.rank < 0)
    return TRUE;
  if (v->shape.rank != 1 ||
      (channels >= 0 && v->shape.dim[0] >= 0 && v->shape.dim[0] != channels))
    {
      g_autofree char *s = fb_shape_to_string (&v->shape);
      return _fb_infer_fail (error, node, "%s has shape %s but the input has %" G_GINT64_FORMAT
                             " channels", what, s, channels);
    }
  return TRUE;
}

static gboolean
check_min_rank (const FbNode *node, const FbValue *x, int min, GError **error)
{
  if (x->shape.rank >= 0 && x->shape.rank < min)
    return _fb_infer_fail (error, node, "the input must have rank %d or more, not %d", min,
                           x->shape.rank);
  return TRUE;
}

static int64_t
channels_of (const FbValue *x)
{
  return x->shape.rank >= 2 ? x->shape.dim[1] : FB_DIM_UNKNOWN;
}

gboolean
_fb_infer_batch_norm (FbGraph *graph, FbNode *node, GError **error)
{
  static const char *names[] = { NULL, "scale", "B", "input_mean", "input_var" };
  static const guint all[] = { 0, 1, 2, 3, 4 };
  static const guint params[] = { 1, 2 };
  static const guint stats[] = { 3, 4 };
  int opset = _fb_infer_opset (node);
  FbValue *x = _fb_infer_require (node, 0, error);
  FbDType dtype, stats_type;
  gboolean per_channel;
  FbShape c_shape = _fb_shape_of_rank (1);

  if (x == NULL)
    return FALSE;
  for (guint i = 1; i < 5; i++)
    if (_fb_infer_require (node, i, error) == NULL)
      return FALSE;
  if (!_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) || !check_min_rank (node, x, 2, error))
    return FALSE;
  /* From opset 15 the scale/bias and the statistics may each have their own float type. */
  if (opset >= 15)
    {
      FbDType p;
      if (!_fb_infer_same_type (node, params, 2, &p, error) ||
          !_fb_infer_same_type (node, stats, 2, &stats_type, error) ||
          !_fb_infer_check_type (node, 1, FB_TYPES_FLOAT, error) ||
          !_fb_infer_check_type (node, 3, FB_TYPES_FLOAT, error))
        return FALSE;
      dtype = x->dtype;
    }
  else
    {
      if (!_fb_infer_same_type (node, all, 5, &dtype, error))
        return FALSE;
      stats_type = dtype;
    }
  if (stats_type == FB_DTYPE_UNDEFINED)
    stats_type = dtype;
  /* BatchNormalization-7 with spatial=0 keeps statistics per channel and position. */
  per_channel = !(opset < 9 && fb_node_attr_int (node, "spatial", 1) == 0);
  c_shape.dim[0] = channels_of (x);
  c_shape.sym[0] = x->shape.rank >= 2 ? x->shape.sym[1] : NULL;
  for (guint i = 1; i < 5 && per_channel; i++)
    if (!check_per_channel (node, i, names[i], c_shape.dim[0], error))
      return FALSE;
  if (opset >= 14 && node->n_outputs > 3)
    return _fb_infer_invalid (error, node, "has %u outputs, BatchNormalization-%d has at most 3",
                              node->n_outputs, opset);
  if (!_fb_infer_set_output (node, 0, x->dtype, &x->shape, error))
    return FALSE;
  /* Training outputs: running mean and variance (opset 14+), or before that mean, var,
   * saved_mean and saved_var, all one value per channel. */
  for (guint i = 1; i < node->n_outputs; i++)
    {
      FbShape s = per_channel ? c_shape : _fb_infer_input_shape (node, 3);
      if (!_fb_infer_set_output (node, i, stats_type, &s, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
_fb_infer_instance_norm (FbGraph *graph, FbNode *node, GError **error)
{
  static const guint all[] = { 0, 1, 2 };
  FbValue *x = _fb_infer_require (node, 0, error);
  FbDType dtype;

  if (x == NULL || _fb_infer_require (node, 1, error) == NULL ||
      _fb_infer_require (node, 2, error) == NULL ||
      !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
      !_fb_infer_same_type (node, all, 3, &dtype, error) || !check_min_rank (node, x, 3, error) ||
      !check_per_channel (node, 1, "scale", channels_of (x), error) ||
      !check_per_channel (node, 2, "B", channels_of (x), error))
    return FALSE;
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
}

/* Error unless input i broadcasts one way to the normalized dimensions of x (axis..rank). */
static gboolean
check_normalized_broadcast (const FbNode *node, guint i, const char *what, const FbShape *x,
                            int axis, GError **error)
{
  FbShape s = _fb_infer_input_shape (node, i);
  gboolean ok = s.rank <= x->rank - axis;

  if (s.rank < 0)
    return TRUE;
  for (int k = 0; ok && k < s.rank; k++)
    {
      int64_t a = s.dim[s.rank - 1 - k], b = x->dim[x->rank - 1 - k];
      ok = a < 0 || b < 0 || a == 1 || a == b;
    }
  if (!ok)
    {
      g_autofree char *ss = fb_shape_to_string (&s);
      g_autofree char *xs = fb_shape_to_string (x);
      return _fb_infer_fail (error, node, "%s of shape %s does not broadcast to the normalized "
                             "dimensions %d.. of %s", what, ss, axis, xs);
    }
  return TRUE;
}

gboolean
_fb_infer_layer_norm (FbGraph *graph, FbNode *node, GError **error)
{
  static const guint all[] = { 0, 1, 2 };
  FbValue *x = _fb_infer_require (node, 0, error);
  int64_t stash = fb_node_attr_int (node, "stash_type", FB_DTYPE_FLOAT32);
  FbDType dtype;
  FbShape stats = fb_shape_unknown ();
  int axis;

  if (x == NULL || _fb_infer_require (node, 1, error) == NULL ||
      !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
      !_fb_infer_same_type (node, all, 3, &dtype, error))
    return FALSE;
  if (stash <= 0 || stash > G_MAXINT || !fb_dtype_is_known ((int) stash) ||
      !fb_dtype_is_float ((FbDType) stash))
    return _fb_infer_fail (error, node, "stash_type %" G_GINT64_FORMAT " is not a floating-point "
                           "type", stash);
  if (x->shape.rank >= 0)
    {
      if (!_fb_infer_axis (node, fb_node_attr_int (node, "axis", -1), x->shape.rank, "axis", &axis,
                           error) ||
          !check_normalized_broadcast (node, 1, "Scale", &x->shape, axis, error) ||
          !check_normalized_broadcast (node, 2, "B", &x->shape, axis, error))
        return FALSE;
      /* Mean and InvStdDev keep the leading dimensions and reduce the normalized ones to 1. */
      stats = x->shape;
      for (int i = axis; i < stats.rank; i++)
        {
          stats.dim[i] = 1;
          stats.sym[i] = NULL;
        }
    }
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error) &&
         _fb_infer_set_output (node, 1, (FbDType) stash, &stats, error) &&
         _fb_infer_set_output (node, 2, (FbDType) stash, &stats, error);
}

gboolean
_fb_infer_lrn (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  const FbAttr *size = fb_node_attr (node, "size");

  if (x == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
      !check_min_rank (node, x, 3, error))
    return FALSE;
  if (size == NULL || size->type != FB_ATTR_INT)
    return _fb_infer_fail (error, node, "the integer attribute 'size' is missing");
  if (size->i <= 0)
    return _fb_infer_fail (error, node, "size %" G_GINT64_FORMAT " is not positive", size->i);
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
}

/* MeanVarianceNormalization: axes (default [0, 2, 3]) must name distinct dimensions of X. */
gboolean
_fb_infer_mvn (FbGraph *graph, FbNode *node, GError **error)
{
  static const int64_t default_axes[] = { 0, 2, 3 };
  FbValue *x = _fb_infer_require (node, 0, error);
  const int64_t *axes;
  guint n;
  gboolean mask[FB_MAX_RANK];

  if (x == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
      !_fb_infer_attr_ints (node, "axes", -1, &axes, &n, error))
    return FALSE;
  if (axes == NULL)
    {
      axes = default_axes;
      n = G_N_ELEMENTS (default_axes);
    }
  if (x->shape.rank >= 0 &&
      !_fb_infer_axes_mask (node, axes, (int) n, x->shape.rank, "axes", mask, error))
    return FALSE;
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
}
