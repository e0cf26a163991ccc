/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for indexed and data-sized operators added for conformance: GatherND,
 * ScatterElements and Scatter, OneHot, ReverseSequence, Compress, NonZero, Unique,
 * NonMaxSuppression, the quantizers, the window functions, and the samplers GridSample and
 * RoiAlign. */
#include "fb-infer-private.h"
#include "fb-roi-spec.h"

#include <string.h>

gboolean
_fb_infer_gather_nd (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error), *ind = _fb_infer_require (node, 1, error);
  int64_t b = fb_node_attr_int (node, "batch_dims", 0);
  FbShape out = fb_shape_unknown ();

  if (x == NULL || ind == NULL || !_fb_infer_check_type (node, 1, FB_TYPES_INT64, error))
    return FALSE;
  if (b < 0)
    return _fb_infer_fail (error, node, "batch_dims %" G_GINT64_FORMAT " is negative", b);
  if (x->shape.rank >= 0 && ind->shape.rank >= 0)
    {
      if (ind->shape.rank < 1 || b >= MIN (x->shape.rank, ind->shape.rank))
        return _fb_infer_fail (error, node, "batch_dims %" G_GINT64_FORMAT " does not fit data of "
                               "rank %d and indices of rank %d", b, x->shape.rank, ind->shape.rank);
      int64_t m = ind->shape.dim[ind->shape.rank - 1];
      if (m >= 0)
        {
          if (m < 1 || m > x->shape.rank - b)
            return _fb_infer_fail (error, node, "index tuples of length %" G_GINT64_FORMAT
                                   " do not fit data of rank %d", m, x->shape.rank);
          int rank = ind->shape.rank - 1 + x->shape.rank - (int) (b + m);
          if (!_fb_infer_check_rank (node, rank, error))
            return FALSE;
          out.rank = 0;
          for (int i = 0; i < ind->shape.rank - 1; i++)
            {
              out.dim[out.rank] = ind->shape.dim[i];
              out.sym[out.rank++] = ind->shape.sym[i];
            }
          for (int i = (int) (b + m); i < x->shape.rank; i++)
            {
              out.dim[out.rank] = x->shape.dim[i];
              out.sym[out.rank++] = x->shape.sym[i];
            }
        }
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

gboolean
_fb_infer_scatter_elements (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  const char *r = fb_node_attr_string (node, "reduction", "none");
  int axis;

  if (x == NULL || _fb_infer_require (node, 1, error) == NULL ||
      _fb_infer_require (node, 2, error) == NULL ||
      !_fb_infer_check_type (node, 1, FB_TYPES_INDEX, error))
    return FALSE;
  if (strcmp (r, "none") && strcmp (r, "add") && strcmp (r, "mul") && strcmp (r, "max") &&
      strcmp (r, "min"))
    return _fb_infer_fail (error, node, "reduction '%s' is not none, add, mul, max or min", r);
  if (x->shape.rank >= 0 &&
      !_fb_infer_axis (node, fb_node_attr_int (node, "axis", 0), x->shape.rank, "axis", &axis, error))
    return FALSE;
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
}

gboolean
_fb_infer_one_hot (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *ind = _fb_infer_require (node, 0, error);
  FbValue *values = _fb_infer_require (node, 2, error);
  g_autofree double *depth = NULL;
  int n, axis;
  FbShape out = fb_shape_unknown ();

  if (ind == NULL || _fb_infer_require (node, 1, error) == NULL || values == NULL ||
      !_fb_infer_check_type (node, 0, FB_TYPES_NUMERIC, error) ||
      !_fb_infer_check_type (node, 1, FB_TYPES_NUMERIC, error) ||
      !_fb_infer_check_scalar (node, 1, "input 'depth'", TRUE, error) ||
      !_fb_infer_const_floats (node, 1, "input 'depth'", 1, &depth, &n, error))
    return FALSE;
  if (n == 1 && !(depth[0] >= 1 && depth[0] <= G_MAXINT32))
    return _fb_infer_fail (error, node, "depth %g is not a count from 1 to %d", depth[0],
                           G_MAXINT32);
  if (ind->shape.rank >= 0)
    {
      if (!_fb_infer_check_rank (node, ind->shape.rank + 1, error) ||
          !_fb_infer_axis (node, fb_node_attr_int (node, "axis", -1), ind->shape.rank + 1, "axis",
                           &axis, error))
        return FALSE;
      out.rank = ind->shape.rank + 1;
      for (int i = 0, j = 0; i < out.rank; i++)
        {
          if (i == axis)
            {
              out.dim[i] = n == 1 ? (int64_t) depth[0] : FB_DIM_UNKNOWN;
              out.sym[i] = NULL;
            }
          else
            {
              out.dim[i] = ind->shape.dim[j];
              out.sym[i] = ind->shape.sym[j++];
            }
        }
    }
  return _fb_infer_set_output (node, 0, values->dtype, &out, error);
}

gboolean
_fb_infer_reverse_sequence (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  int64_t ta = fb_node_attr_int (node, "time_axis", 0), ba = fb_node_attr_int (node, "batch_axis", 1);

  if (x == NULL || _fb_infer_require (node, 1, error) == NULL ||
      !_fb_infer_check_type (node, 1, FB_TYPES_INDEX, error))
    return FALSE;
  if ((ta != 0 && ta != 1) || (ba != 0 && ba != 1) || ta == ba)
    return _fb_infer_fail (error, node, "time_axis and batch_axis must be 0 and 1, in either order");
  if (x->shape.rank >= 0 && x->shape.rank < 2)
    return _fb_infer_fail (error, node, "the input must have rank 2 or more, not %d", x->shape.rank);
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
}

/* Compress, NonZero, Unique and NonMaxSuppression: the extent that depends on the data is
 * unknown; everything else is known from the inputs. */
gboolean
_fb_infer_data_sized (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  const FbAttr *axis_attr = fb_node_attr (node, "axis");
  gboolean has_axis = axis_attr != NULL && axis_attr->type == FB_ATTR_INT;
  FbShape s = fb_shape_unknown ();
  int axis = 0;

  if (x == NULL)
    return FALSE;
  if (has_axis && x->shape.rank >= 0 &&
      !_fb_infer_axis (node, axis_attr->i, x->shape.rank, "axis", &axis, error))
    return FALSE;
  switch (node->op)
    {
    case FB_OP_COMPRESS:
      if (_fb_infer_require (node, 1, error) == NULL ||
          !_fb_infer_check_type (node, 1, FB_TYPES_BOOL, error))
        return FALSE;
      if (!has_axis)
        s = _fb_shape_of_rank (1);
      else if (x->shape.rank >= 0)
        {
          s = x->shape;
          s.dim[axis] = FB_DIM_UNKNOWN;
          s.sym[axis] = NULL;
        }
      return _fb_infer_set_output (node, 0, x->dtype, &s, error);
    case FB_OP_NON_ZERO:
      s = _fb_shape_of_rank (2);
      s.dim[0] = x->shape.rank >= 0 ? x->shape.rank : FB_DIM_UNKNOWN;
      return _fb_infer_set_output (node, 0, FB_DTYPE_INT64, &s, error);
    case FB_OP_UNIQUE:
      {
        FbShape v = _fb_shape_of_rank (1), inv = _fb_shape_of_rank (1);
        if (x->dtype == FB_DTYPE_STRING)
          return _fb_infer_unsupported (error, node, "string tensors are not supported");
        if (!has_axis)
          {
            s = _fb_shape_of_rank (1);
            int64_t numel = 1;
            for (int i = 0; x->shape.rank >= 0 && i < x->shape.rank && numel >= 0; i++)
              if (!_fb_dim_mul (numel, x->shape.dim[i], &numel))
                return _fb_infer_fail (error, node, "the input's element count overflows");
            inv.dim[0] = x->shape.rank >= 0 ? numel : FB_DIM_UNKNOWN;
          }
        else if (x->shape.rank >= 0)
          {
            s = x->shape;
            s.dim[axis] = FB_DIM_UNKNOWN;
            s.sym[axis] = NULL;
            inv.dim[0] = x->shape.dim[axis];
            inv.sym[0] = x->shape.sym[axis];
          }
        return _fb_infer_set_output (node, 0, x->dtype, &s, error) &&
               _fb_infer_set_output (node, 1, FB_DTYPE_INT64, &v, error) &&
               _fb_infer_set_output (node, 2, FB_DTYPE_INT64, &inv, error) &&
               _fb_infer_set_output (node, 3, FB_DTYPE_INT64, &v, error);
      }
    case FB_OP_NON_MAX_SUPPRESSION:
      {
        FbValue *scores = _fb_infer_require (node, 1, error);
        if (scores == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
            !_fb_infer_check_type (node, 1, FB_TYPES_FLOAT, error) ||
            !_fb_infer_check_type (node, 2, FB_TYPES_INT64, error) ||
            !_fb_infer_check_type (node, 3, FB_TYPES_FLOAT, error) ||
            !_fb_infer_check_type (node, 4, FB_TYPES_FLOAT, error))
          return FALSE;
        int64_t cpb = fb_node_attr_int (node, "center_point_box", 0);
        if (cpb != 0 && cpb != 1)
          return _fb_infer_fail (error, node, "center_point_box must be 0 or 1");
        if (x->shape.rank >= 0 && (x->shape.rank != 3 || (x->shape.dim[2] >= 0 && x->shape.dim[2] != 4)))
          return _fb_infer_fail (error, node, "boxes must be [batches, boxes, 4]");
        if (scores->shape.rank >= 0 && scores->shape.rank != 3)
          return _fb_infer_fail (error, node, "scores must be [batches, classes, boxes]");
        s = _fb_shape_of_rank (2);
        s.dim[1] = 3;
        return _fb_infer_set_output (node, 0, FB_DTYPE_INT64, &s, error);
      }
    default:
      return _fb_infer_fail (error, node, "not a data-sized operator");
    }
}

gboolean
_fb_infer_quantize (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  FbDType out;

  if (x == NULL)
    return FALSE;
  if (node->op == FB_OP_DYNAMIC_QUANTIZE_LINEAR)
    {
      FbShape scalar = _fb_shape_of_rank (0);
      if (!_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error))
        return FALSE;
      return _fb_infer_set_output (node, 0, FB_DTYPE_UINT8, &x->shape, error) &&
             _fb_infer_set_output (node, 1, FB_DTYPE_FLOAT32, &scalar, error) &&
             _fb_infer_set_output (node, 2, FB_DTYPE_UINT8, &scalar, error);
    }
  FbValue *scale = _fb_infer_require (node, 1, error);
  FbValue *zero = fb_node_input (node, 2);
  if (scale == NULL || !_fb_infer_check_type (node, 1, FB_TYPES_FLOAT, error))
    return FALSE;
  if (scale->shape.rank > 1)
    return _fb_infer_fail (error, node, "the scale must be a scalar or a vector, not of rank %d",
                           scale->shape.rank);
  if (node->op == FB_OP_QUANTIZE_LINEAR)
    {
      out = zero ? zero->dtype : FB_DTYPE_UINT8;
      if (out != FB_DTYPE_UNDEFINED && out != FB_DTYPE_UINT8 && out != FB_DTYPE_INT8 &&
          out != FB_DTYPE_UINT16 && out != FB_DTYPE_INT16)
        return _fb_infer_unsupported (error, node, "quantizing to %s is not supported",
                                      fb_dtype_name (out));
    }
  else
    {
      if (zero && x->dtype != FB_DTYPE_UNDEFINED && zero->dtype != FB_DTYPE_UNDEFINED &&
          zero->dtype != x->dtype)
        return _fb_infer_fail (error, node, "the zero point's type %s is not the input's %s",
                               fb_dtype_name (zero->dtype), fb_dtype_name (x->dtype));
      out = scale->dtype;
    }
  return _fb_infer_set_output (node, 0, out, &x->shape, error);
}

gboolean
_fb_infer_window (FbGraph *graph, FbNode *node, GError **error)
{
  g_autofree int64_t *size = NULL;
  int n;
  int64_t to = fb_node_attr_int (node, "output_datatype", FB_DTYPE_FLOAT32);
  FbShape out = _fb_shape_of_rank (1);

  if (_fb_infer_require (node, 0, error) == NULL ||
      !_fb_infer_check_type (node, 0, FB_TYPES_INDEX, error) ||
      !_fb_infer_check_scalar (node, 0, "input 'size'", TRUE, error) ||
      !_fb_infer_const_ints (node, 0, "input 'size'", 1, &size, &n, error))
    return FALSE;
  if (!fb_dtype_is_known ((int) to) || to > G_MAXINT32 || fb_dtype_size ((FbDType) to) == 0 ||
      to == FB_DTYPE_BOOL)
    return _fb_infer_fail (error, node, "output_datatype %" G_GINT64_FORMAT " is not a numeric "
                           "type", to);
  if (n == 1)
    {
      if (size[0] < 0)
        return _fb_infer_fail (error, node, "size %" G_GINT64_FORMAT " is negative", size[0]);
      out.dim[0] = size[0];
    }
  return _fb_infer_set_output (node, 0, (FbDType) to, &out, error);
}

gboolean
_fb_infer_grid_sample (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error), *grid = _fb_infer_require (node, 1, error);
  const char *mode = fb_node_attr_string (node, "mode", "bilinear");
  const char *pad = fb_node_attr_string (node, "padding_mode", "zeros");
  FbShape out = _fb_shape_of_rank (4);

  if (x == NULL || grid == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
      !_fb_infer_check_type (node, 1, FB_TYPES_FLOAT, error))
    return FALSE;
  if (strcmp (mode, "bilinear") && strcmp (mode, "nearest") && strcmp (mode, "bicubic"))
    return _fb_infer_fail (error, node, "mode '%s' is not bilinear, nearest or bicubic", mode);
  if (strcmp (pad, "zeros") && strcmp (pad, "border") && strcmp (pad, "reflection"))
    return _fb_infer_fail (error, node, "padding_mode '%s' is not zeros, border or reflection", pad);
  if ((x->shape.rank >= 0 && x->shape.rank != 4) || (grid->shape.rank >= 0 && grid->shape.rank != 4))
    return _fb_infer_unsupported (error, node, "only 2-D sampling is supported: X [N, C, H, W] "
                                  "and grid [N, H_out, W_out, 2]");
  if (grid->shape.rank == 4 && grid->shape.dim[3] >= 0 && grid->shape.dim[3] != 2)
    return _fb_infer_fail (error, node, "the grid's last extent must be 2, not %" G_GINT64_FORMAT,
                           grid->shape.dim[3]);
  if (x->shape.rank == 4)
    {
      out.dim[0] = x->shape.dim[0]; out.sym[0] = x->shape.sym[0];
      out.dim[1] = x->shape.dim[1]; out.sym[1] = x->shape.sym[1];
    }
  if (grid->shape.rank == 4)
    {
      out.dim[2] = grid->shape.dim[1]; out.sym[2] = grid->shape.sym[1];
      out.dim[3] = grid->shape.dim[2]; out.sym[3] = grid->shape.sym[2];
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

/* MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv: the result's type (int32, or the
 * output zero point's), its rank and extents (a convolution's spatial ones from its window). */
gboolean
_fb_infer_qlinear (FbGraph *graph, FbNode *node, GError **error)
{
  gboolean q = node->op == FB_OP_QLINEAR_MATMUL || node->op == FB_OP_QLINEAR_CONV;
  gboolean conv = node->op == FB_OP_CONV_INTEGER || node->op == FB_OP_QLINEAR_CONV;
  FbValue *a = _fb_infer_require (node, 0, error), *b = _fb_infer_require (node, q ? 3 : 1, error);
  FbShape out = fb_shape_unknown ();
  FbDType t = FB_DTYPE_INT32;

  if (a == NULL || b == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_INTEGER, error) ||
      !_fb_infer_check_type (node, q ? 3 : 1, FB_TYPES_INTEGER, error))
    return FALSE;
  if (q)
    {
      FbValue *zy = _fb_infer_require (node, 7, error);
      if (zy == NULL || _fb_infer_require (node, 6, error) == NULL ||
          !_fb_infer_check_type (node, 6, FB_TYPES_FLOAT, error))
        return FALSE;
      t = zy->dtype;
    }
  if (conv && a->shape.rank >= 0)
    {
      if (a->shape.rank < 3)
        return _fb_infer_fail (error, node, "the input must be [N, C, ...], not of rank %d",
                               a->shape.rank);
      out = _fb_shape_of_rank (a->shape.rank);
      out.dim[0] = a->shape.dim[0];
      out.sym[0] = a->shape.sym[0];
      if (b->shape.rank >= 1)
        out.dim[1] = b->shape.dim[0];
      if (!_fb_infer_conv_spatial (node, a, b, &out, error))
        return FALSE;
    }
  else if (!conv && a->shape.rank >= 2 && b->shape.rank >= 2)
    {
      FbShape ab = a->shape, bb = b->shape, batch;
      ab.rank -= 2;
      bb.rank -= 2;
      if (!_fb_infer_broadcast (node, &ab, &bb, &batch, error) ||
          !_fb_infer_check_rank (node, batch.rank + 2, error))
        return FALSE;
      int64_t ka = a->shape.dim[a->shape.rank - 1], kb = b->shape.dim[b->shape.rank - 2];
      if (ka >= 0 && kb >= 0 && ka != kb)
        return _fb_infer_fail (error, node, "inner extents %" G_GINT64_FORMAT " and %"
                               G_GINT64_FORMAT " differ", ka, kb);
      out = batch;
      out.dim[out.rank] = a->shape.dim[a->shape.rank - 2];
      out.sym[out.rank++] = a->shape.sym[a->shape.rank - 2];
      out.dim[out.rank] = b->shape.dim[b->shape.rank - 1];
      out.sym[out.rank++] = b->shape.sym[b->shape.rank - 1];
    }
  return _fb_infer_set_output (node, 0, t, &out, error);
}

gboolean
_fb_infer_det (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  FbShape out = fb_shape_unknown ();

  if (x == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error))
    return FALSE;
  if (x->shape.rank >= 0)
    {
      int r = x->shape.rank;
      if (r < 2 || (x->shape.dim[r - 1] >= 0 && x->shape.dim[r - 2] >= 0 &&
                    x->shape.dim[r - 1] != x->shape.dim[r - 2]))
        return _fb_infer_fail (error, node, "the input must be square matrices [..., M, M]");
      out = x->shape;
      out.rank = r - 2;
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

/* RoiAlign: X [N, C, H, W], rois [num_rois, 4] of X's type, batch_indices [num_rois] (int64);
 * the output is [num_rois, C, output_height, output_width]. */
gboolean
_fb_infer_roi_align (FbGraph *graph, FbNode *node, GError **error)
{
  static const guint floats[] = { 0, 1 };
  FbValue *x = _fb_infer_require (node, 0, error), *rois = _fb_infer_require (node, 1, error);
  FbValue *idx = _fb_infer_require (node, 2, error);
  GError *local = NULL;
  FbRoiSpec spec;
  FbDType dtype;
  int64_t n = FB_DIM_UNKNOWN;
  const char *n_sym = NULL;
  FbShape out = _fb_shape_of_rank (4);

  if (x == NULL || rois == NULL || idx == NULL ||
      !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
      !_fb_infer_same_type (node, floats, 2, &dtype, error) ||
      !_fb_infer_check_type (node, 2, FB_TYPES_INT64, error))
    return FALSE;
  if (!fb_roi_spec_read (node, &spec, &local))
    {
      _fb_infer_fail (error, node, "%s", local->message);
      g_error_free (local);
      return FALSE;
    }
  if (x->shape.rank >= 0 && x->shape.rank != 4)
    return _fb_infer_fail (error, node, "X has rank %d; it must be [N, C, H, W]", x->shape.rank);
  if (rois->shape.rank >= 0 &&
      (rois->shape.rank != 2 || (rois->shape.dim[1] >= 0 && rois->shape.dim[1] != 4)))
    {
      g_autofree char *s = fb_shape_to_string (&rois->shape);
      return _fb_infer_fail (error, node, "rois has shape %s; it must be [num_rois, 4]", s);
    }
  if (idx->shape.rank >= 0 && idx->shape.rank != 1)
    return _fb_infer_fail (error, node, "batch_indices has rank %d; it must be a vector",
                           idx->shape.rank);
  if (rois->shape.rank == 2)
    {
      n = rois->shape.dim[0];
      n_sym = rois->shape.sym[0];
    }
  if (idx->shape.rank == 1 && idx->shape.dim[0] >= 0)
    {
      if (n >= 0 && idx->shape.dim[0] != n)
        return _fb_infer_fail (error, node, "batch_indices has %" G_GINT64_FORMAT " entries for %"
                               G_GINT64_FORMAT " boxes", idx->shape.dim[0], n);
      n = idx->shape.dim[0];
    }
  out.dim[0] = n;
  out.sym[0] = n >= 0 ? NULL : n_sym;
  if (x->shape.rank == 4)
    {
      out.dim[1] = x->shape.dim[1];
      out.sym[1] = x->shape.sym[1];
    }
  out.dim[2] = spec.out_h;
  out.dim[3] = spec.out_w;
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}
