/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for operators that cut or extend along axes: Slice, Split, Pad. */
#include "fb-infer-private.h"

#include <string.h>

/* The number of elements Slice takes from an axis of extent d, clamped as the ONNX spec says. */
static int64_t
slice_length (int64_t d, int64_t start, int64_t end, int64_t step)
{
  if (d == 0)
    return 0;
  if (start < 0)
    start += d;
  if (end < 0)
    end += d;
  if (step > 0)
    {
      start = CLAMP (start, 0, d);
      end = CLAMP (end, 0, d);
      return end > start ? (end - start - 1) / step + 1 : 0;
    }
  start = CLAMP (start, 0, d - 1);
  end = CLAMP (end, -1, d - 1);
  if (start <= end)
    return 0;
  /* -step would overflow for the most negative step, which takes one element anyway. */
  return step == G_MININT64 ? 1 : (start - end - 1) / -step + 1;
}

/* Reads one of Slice's index lists (starts, ends, axes, steps) from the attribute (before opset
 * 10) or from the input. *n is -1 when it exists but is not constant, -2 when absent. */
static gboolean
slice_list (const FbNode *node, const char *name, guint input, int64_t **v, int *n, int64_t *len,
            GError **error)
{
  *len = -1;
  if (_fb_infer_opset (node) < 10)
    {
      const int64_t *a;
      guint count;
      if (!_fb_infer_attr_ints (node, name, -1, &a, &count, error))
        return FALSE;
      *v = a ? g_memdup2 (a, sizeof (int64_t) * MAX (count, 1)) : NULL;
      *n = a ? (int) count : -2;
      *len = a ? (int64_t) count : -1;
      return TRUE;
    }
  if (!_fb_infer_no_attr (node, name, error) ||
      !_fb_infer_check_type (node, input, FB_TYPES_INDEX, error) ||
      !_fb_infer_const_ints (node, input, name, FB_INFER_MAX_VECTOR, v, n, error) ||
      !_fb_infer_vector_length (node, input, name, FALSE, len, error))
    return FALSE;
  if (fb_node_input (node, input) == NULL)
    *n = -2;
  return TRUE;
}

gboolean
_fb_infer_slice (FbGraph *graph, FbNode *node, GError **error)
{
  static const char *names[] = { "starts", "ends", "axes", "steps" };
  FbValue *x = _fb_infer_require (node, 0, error);
  int64_t *lists[4] = { NULL, NULL, NULL, NULL };
  int counts[4];
  int64_t lens[4], len = -1;
  gboolean mask[FB_MAX_RANK] = { FALSE };
  gboolean ok = FALSE;
  FbShape out = fb_shape_unknown ();
  int r;

  if (x == NULL)
    return FALSE;
  if (_fb_infer_opset (node) < 10)
    for (guint i = 1; i < 5; i++)
      if (!_fb_infer_no_input (node, i, names[i - 1], 10, error))
        return FALSE;
  if (_fb_infer_opset (node) < 10 && fb_node_attr (node, "steps") != NULL)
    return _fb_infer_fail (error, node, "attribute 'steps' does not exist before opset 10");
  for (guint k = 0; k < 4; k++)
    if (!slice_list (node, names[k], k + 1, &lists[k], &counts[k], &lens[k], error))
      goto out;
  if (counts[0] == -2 || counts[1] == -2)
    {
      _fb_infer_fail (error, node, "'starts' and 'ends' are required");
      goto out;
    }
  for (guint k = 0; k < 4; k++)
    {
      if (lens[k] < 0)
        continue;
      if (len >= 0 && lens[k] != len)
        {
          _fb_infer_fail (error, node, "'%s' has %" G_GINT64_FORMAT " entries but '%s' has %"
                          G_GINT64_FORMAT, names[k], lens[k], names[0], len);
          goto out;
        }
      len = lens[k];
    }
  r = x->shape.rank;
  if (r < 0)
    {
      ok = _fb_infer_set_output (node, 0, x->dtype, &out, error);
      goto out;
    }
  if (len > r)
    {
      _fb_infer_fail (error, node, "%" G_GINT64_FORMAT " axes are sliced in an input of rank %d",
                      len, r);
      goto out;
    }

  /* Which axes are sliced: the axes list, or the first len axes. */
  out = x->shape;
  if (counts[2] >= 0)
    {
      if (!_fb_infer_axes_mask (node, lists[2], counts[2], r, "axes", mask, error))
        goto out;
    }
  else if (counts[2] == -2 && len >= 0)
    for (int i = 0; i < len; i++)
      mask[i] = TRUE;
  else
    {
      /* The sliced axes are only known at run time. */
      out = _fb_shape_of_rank (r);
      ok = _fb_infer_set_output (node, 0, x->dtype, &out, error);
      goto out;
    }

  for (int i = 0, k = 0; i < r; i++)
    {
      int64_t start, end, step;
      int at;

      if (!mask[i])
        continue;
      /* Position of axis i in the lists. */
      at = k++;
      if (counts[2] >= 0)
        for (int j = 0; j < counts[2]; j++)
          {
            int a;
            fb_axis_normalize (lists[2][j], r, &a);
            if (a == i)
              at = j;
          }
      out.sym[i] = NULL;
      if (counts[0] < 0 || counts[1] < 0 || counts[3] == -1)
        {
          out.dim[i] = FB_DIM_UNKNOWN;
          continue;
        }
      start = lists[0][at];
      end = lists[1][at];
      step = counts[3] >= 0 ? lists[3][at] : 1;
      if (step == 0)
        {
          _fb_infer_fail (error, node, "step %d is 0", at);
          goto out;
        }
      if (x->shape.dim[i] >= 0)
        out.dim[i] = slice_length (x->shape.dim[i], start, end, step);
      else if (step == 1 && start == 0 && end >= G_MAXINT32)
        out.sym[i] = x->shape.sym[i];   /* the whole axis, whatever its extent */
      else
        out.dim[i] = FB_DIM_UNKNOWN;
    }
  ok = _fb_infer_set_output (node, 0, x->dtype, &out, error);

out:
  for (guint k = 0; k < 4; k++)
    g_free (lists[k]);
  return ok;
}

gboolean
_fb_infer_split (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  int opset = _fb_infer_opset (node);
  guint n_out = node->n_outputs;
  g_autofree int64_t *sizes = NULL;
  g_autofree int64_t *split = NULL;
  gboolean given;
  int n = -1, axis;
  int64_t d;

  if (x == NULL)
    return FALSE;
  if (n_out == 0)
    return _fb_infer_invalid (error, node, "has no outputs");
  if (opset < 13)
    {
      const int64_t *v;
      guint count;
      if (!_fb_infer_no_input (node, 1, "split", 13, error) ||
          !_fb_infer_attr_ints (node, "split", -1, &v, &count, error))
        return FALSE;
      given = v != NULL;
      if (given)
        {
          split = g_memdup2 (v, sizeof (int64_t) * MAX (count, 1));
          n = (int) count;
        }
    }
  else
    {
      given = fb_node_input (node, 1) != NULL;
      if (!_fb_infer_no_attr (node, "split", error) ||
          !_fb_infer_check_type (node, 1, FB_TYPES_INT64, error) ||
          !_fb_infer_const_ints (node, 1, "input 'split'", FB_INFER_MAX_VECTOR, &split, &n, error))
        return FALSE;
    }
  if (opset >= 18)
    {
      const FbAttr *num = fb_node_attr (node, "num_outputs");
      if (given == (num != NULL))
        return _fb_infer_fail (error, node, "needs either input 'split' or attribute "
                               "'num_outputs', and not both");
      if (num != NULL && (num->type != FB_ATTR_INT || num->i != (int64_t) n_out))
        return _fb_infer_fail (error, node, "'num_outputs' does not match its %u outputs", n_out);
    }
  else if (!_fb_infer_no_attr (node, "num_outputs", error))
    return FALSE;
  if (given && n >= 0 && n != (int) n_out)
    return _fb_infer_fail (error, node, "'split' has %d entries for %u outputs", n, n_out);

  if (x->shape.rank < 0)
    {
      for (guint i = 0; i < n_out; i++)
        if (!_fb_infer_set_output (node, i, x->dtype, &x->shape, error))
          return FALSE;
      return TRUE;
    }
  if (!_fb_infer_axis (node, fb_node_attr_int (node, "axis", 0), x->shape.rank, "axis", &axis,
                       error))
    return FALSE;
  d = x->shape.dim[axis];
  sizes = g_new (int64_t, n_out);
  if (given && n >= 0)
    {
      int64_t total = 0;
      for (guint i = 0; i < n_out; i++)
        {
          if (split[i] < 0 || __builtin_add_overflow (total, split[i], &total))
            return _fb_infer_fail (error, node, "split size %u is %" G_GINT64_FORMAT, i, split[i]);
          sizes[i] = split[i];
        }
      if (d >= 0 && total != d)
        return _fb_infer_fail (error, node, "split sizes add up to %" G_GINT64_FORMAT " but axis %d "
                               "has extent %" G_GINT64_FORMAT, total, axis, d);
    }
  else if (given || d < 0)
    for (guint i = 0; i < n_out; i++)
      sizes[i] = FB_DIM_UNKNOWN;
  else if (opset < 18)
    {
      if (d % n_out != 0)
        return _fb_infer_fail (error, node, "axis %d of extent %" G_GINT64_FORMAT " does not split "
                               "evenly into %u outputs", axis, d, n_out);
      for (guint i = 0; i < n_out; i++)
        sizes[i] = d / n_out;
    }
  else
    {
      /* num_outputs: equal chunks rounded up, the last one smaller. */
      int64_t chunk = d / n_out + (d % n_out != 0);
      int64_t last = d - chunk * (int64_t) (n_out - 1);
      if (last < 0)
        return _fb_infer_fail (error, node, "axis %d of extent %" G_GINT64_FORMAT " cannot be split "
                               "into %u chunks", axis, d, n_out);
      for (guint i = 0; i < n_out; i++)
        sizes[i] = i + 1 < n_out ? chunk : last;
    }
  for (guint i = 0; i < n_out; i++)
    {
      FbShape s = x->shape;
      s.dim[axis] = sizes[i];
      if (n_out > 1 || sizes[i] >= 0)
        s.sym[axis] = NULL;
      if (!_fb_infer_set_output (node, i, x->dtype, &s, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
_fb_infer_pad (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  int opset = _fb_infer_opset (node);
  const char *mode = fb_node_attr_string (node, "mode", "constant");
  g_autofree int64_t *pads = NULL;
  g_autofree int64_t *axes = NULL;
  int n_pads = -1, n_axes = -1;
  int64_t pads_len = -1;
  gboolean mask[FB_MAX_RANK] = { FALSE };
  FbShape out;
  int r;

  if (x == NULL)
    return FALSE;
  if (strcmp (mode, "constant") != 0 && strcmp (mode, "reflect") != 0 &&
      strcmp (mode, "edge") != 0 && !(opset >= 19 && strcmp (mode, "wrap") == 0))
    return _fb_infer_fail (error, node, "mode '%s' is not defined", mode);
  if (opset < 11)
    {
      const int64_t *v;
      guint count;
      for (guint i = 1; i < 4; i++)
        if (!_fb_infer_no_input (node, i, i == 1 ? "pads" : i == 2 ? "constant_value" : "axes",
                                 i == 3 ? 18 : 11, error))
          return FALSE;
      if (!_fb_infer_attr_ints (node, "pads", -1, &v, &count, error))
        return FALSE;
      if (v == NULL)
        return _fb_infer_fail (error, node, "the attribute 'pads' is missing");
      if (count > FB_INFER_MAX_VECTOR)
        return _fb_infer_fail (error, node, "'pads' has %u entries", count);
      pads = g_memdup2 (v, sizeof (int64_t) * MAX (count, 1));
      n_pads = (int) count;
      pads_len = count;
    }
  else
    {
      static const guint x_and_value[] = { 0, 2 };
      FbDType dtype;
      if (!_fb_infer_no_attr (node, "pads", error) || !_fb_infer_no_attr (node, "value", error) ||
          !_fb_infer_no_input (node, 3, "axes", 18, error) ||
          _fb_infer_require (node, 1, error) == NULL ||
          !_fb_infer_check_type (node, 1, FB_TYPES_INT64, error) ||
          !_fb_infer_same_type (node, x_and_value, 2, &dtype, error) ||
          !_fb_infer_check_scalar (node, 2, "input 'constant_value'", TRUE, error) ||
          !_fb_infer_check_type (node, 3, FB_TYPES_INDEX, error) ||
          !_fb_infer_const_ints (node, 1, "input 'pads'", FB_INFER_MAX_VECTOR, &pads, &n_pads, error) ||
          !_fb_infer_vector_length (node, 1, "input 'pads'", FALSE, &pads_len, error) ||
          !_fb_infer_const_ints (node, 3, "input 'axes'", FB_INFER_MAX_VECTOR, &axes, &n_axes, error))
        return FALSE;
    }
  if (pads_len >= 0 && pads_len % 2 != 0)
    return _fb_infer_fail (error, node, "'pads' has an odd number of entries (%" G_GINT64_FORMAT ")",
                           pads_len);

  r = x->shape.rank;
  if (r < 0)
    {
      /* Without axes, pads covers every axis twice: that gives the rank. */
      if (fb_node_input (node, 3) == NULL && pads_len >= 0 && pads_len / 2 <= FB_MAX_RANK)
        {
          out = _fb_shape_of_rank ((int) (pads_len / 2));
          return _fb_infer_set_output (node, 0, x->dtype, &out, error);
        }
      return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
    }
  if (fb_node_input (node, 3) == NULL)
    {
      n_axes = r;
      for (int i = 0; i < r; i++)
        mask[i] = TRUE;
    }
  else if (n_axes >= 0)
    {
      if (!_fb_infer_axes_mask (node, axes, n_axes, r, "axes", mask, error))
        return FALSE;
    }
  if (n_axes >= 0 && pads_len >= 0 && pads_len != 2 * (int64_t) n_axes)
    return _fb_infer_fail (error, node, "'pads' has %" G_GINT64_FORMAT " entries, expected %d "
                           "(two per padded axis)", pads_len, 2 * n_axes);
  if (n_axes < 0)
    {
      out = _fb_shape_of_rank (r);
      return _fb_infer_set_output (node, 0, x->dtype, &out, error);
    }

  out = x->shape;
  for (int i = 0, k = 0; i < r; i++)
    {
      int at;
      int64_t begin, end, extent;

      if (!mask[i])
        continue;
      at = k++;
      if (fb_node_input (node, 3) != NULL)
        for (int j = 0; j < n_axes; j++)
          {
            int a;
            fb_axis_normalize (axes[j], r, &a);
            if (a == i)
              at = j;
          }
      if (n_pads < 0)
        {
          out.dim[i] = FB_DIM_UNKNOWN;
          out.sym[i] = NULL;
          continue;
        }
      begin = pads[at];
      end = pads[at + n_axes];
      if (begin == 0 && end == 0)
        continue;
      out.sym[i] = NULL;
      if (x->shape.dim[i] < 0)
        {
          out.dim[i] = FB_DIM_UNKNOWN;
          continue;
        }
      /* Negative pads crop; the result may not go below zero. */
      if (__builtin_add_overflow (x->shape.dim[i], begin, &extent) ||
          __builtin_add_overflow (extent, end, &extent))
        return _fb_infer_fail (error, node, "the padded extent of axis %d overflows 64 bits", i);
      if (extent < 0)
        return _fb_infer_fail (error, node, "pads %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT
                               " crop axis %d of extent %" G_GINT64_FORMAT " below zero",
                               begin, end, i, x->shape.dim[i]);
      out.dim[i] = extent;
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}
