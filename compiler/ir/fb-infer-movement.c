/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for operators that move or copy data: Concat, Transpose, Gather, GatherElements,
 * ScatterND, DepthToSpace, SpaceToDepth, Trilu, Expand, Tile. */
#include "fb-infer-private.h"

#include <string.h>

gboolean
_fb_infer_concat (FbGraph *graph, FbNode *node, GError **error)
{
  g_autofree guint *all = g_new (guint, MAX (node->n_inputs, 1));
  const FbAttr *axis_attr = fb_node_attr (node, "axis");
  FbShape out = fb_shape_unknown ();
  FbDType dtype;
  int rank = FB_RANK_UNKNOWN, axis;

  if (node->n_inputs == 0)
    return _fb_infer_invalid (error, node, "needs at least one input");
  for (guint i = 0; i < node->n_inputs; i++)
    {
      FbValue *v = _fb_infer_require (node, i, error);
      if (v == NULL)
        return FALSE;
      all[i] = i;
      if (v->shape.rank < 0)
        continue;
      if (rank >= 0 && v->shape.rank != rank)
        return _fb_infer_fail (error, node, "input %u has rank %d but the inputs before it have rank %d",
                               i, v->shape.rank, rank);
      rank = v->shape.rank;
    }
  if (!_fb_infer_same_type (node, all, node->n_inputs, &dtype, error))
    return FALSE;
  if (axis_attr == NULL || axis_attr->type != FB_ATTR_INT)
    return _fb_infer_fail (error, node, "the integer attribute 'axis' is missing");
  if (rank < 0)
    return _fb_infer_set_output (node, 0, dtype, &out, error);
  if (!_fb_infer_axis (node, axis_attr->i, rank, "axis", &axis, error))
    return FALSE;

  out = _fb_shape_of_rank (rank);
  out.dim[axis] = 0;
  for (guint i = 0; i < node->n_inputs; i++)
    {
      const FbShape *s = &node->inputs[i]->shape;
      if (s->rank < 0)
        {
          out.dim[axis] = FB_DIM_UNKNOWN;
          continue;
        }
      if (!_fb_dim_add (out.dim[axis], s->dim[axis], &out.dim[axis]))
        return _fb_infer_fail (error, node, "the concatenated extent overflows 64 bits");
      for (int d = 0; d < rank; d++)
        {
          if (d == axis)
            continue;
          if (s->dim[d] >= 0 && out.dim[d] >= 0 && s->dim[d] != out.dim[d])
            {
              g_autofree char *text = fb_shape_to_string (s);
              return _fb_infer_fail (error, node, "input %u (%s) has extent %" G_GINT64_FORMAT
                                     " on axis %d where the others have %" G_GINT64_FORMAT,
                                     i, text, s->dim[d], d, out.dim[d]);
            }
          if (s->dim[d] >= 0)
            {
              out.dim[d] = s->dim[d];
              out.sym[d] = NULL;
            }
          else if (out.dim[d] < 0 && out.sym[d] == NULL)
            out.sym[d] = s->sym[d];
        }
    }
  /* A sum of unknown extents has no name. */
  if (node->n_inputs > 1 || out.dim[axis] >= 0)
    out.sym[axis] = NULL;
  else
    out.sym[axis] = node->inputs[0]->shape.rank >= 0 ? node->inputs[0]->shape.sym[axis] : NULL;
  return _fb_infer_set_output (node, 0, dtype, &out, error);
}

gboolean
_fb_infer_transpose (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  const int64_t *perm;
  guint n;
  gboolean seen[FB_MAX_RANK] = { FALSE };
  int rank;
  FbShape out;

  if (x == NULL || !_fb_infer_attr_ints (node, "perm", -1, &perm, &n, error))
    return FALSE;
  rank = x->shape.rank;
  if (rank < 0)
    {
      if (perm == NULL)
        return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
      if (!_fb_infer_check_rank (node, n, error))
        return FALSE;
      rank = (int) n;
    }
  if (perm != NULL && n != (guint) rank)
    return _fb_infer_fail (error, node, "'perm' has %u entries for an input of rank %d", n, rank);
  out = _fb_shape_of_rank (rank);
  for (int i = 0; i < rank; i++)
    {
      int from = rank - 1 - i;
      if (perm != NULL)
        {
          if (perm[i] < 0 || perm[i] >= rank || seen[perm[i]])
            return _fb_infer_fail (error, node, "'perm' is not a permutation of 0..%d", rank - 1);
          from = (int) perm[i];
          seen[from] = TRUE;
        }
      if (x->shape.rank >= 0)
        {
          out.dim[i] = x->shape.dim[from];
          out.sym[i] = x->shape.sym[from];
        }
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

gboolean
_fb_infer_gather (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *data = _fb_infer_require (node, 0, error);
  FbValue *indices = data ? _fb_infer_require (node, 1, error) : NULL;
  FbShape out;
  int r, q, axis;

  if (indices == NULL || !_fb_infer_check_type (node, 1, FB_TYPES_INDEX, error))
    return FALSE;
  r = data->shape.rank;
  q = indices->shape.rank;
  if (r < 0)
    return _fb_infer_set_output (node, 0, data->dtype, &data->shape, error);
  if (!_fb_infer_axis (node, fb_node_attr_int (node, "axis", 0), r, "axis", &axis, error))
    return FALSE;
  /* Constant indices (the usual case when a shape is taken apart) are checked right away. */
  if (indices->constant != NULL && data->shape.dim[axis] >= 0)
    {
      int64_t extent = data->shape.dim[axis];
      for (int64_t i = 0; i < indices->constant->numel; i++)
        {
          int64_t k = fb_tensor_get_i64 (indices->constant, i);
          if (k < -extent || k >= extent)
            return _fb_infer_fail (error, node, "index %" G_GINT64_FORMAT " is out of range for "
                                   "axis %d of extent %" G_GINT64_FORMAT, k, axis, extent);
        }
    }
  if (q < 0)
    return _fb_infer_set_output (node, 0, data->dtype, &(FbShape) { .rank = FB_RANK_UNKNOWN }, error);
  if (!_fb_infer_check_rank (node, (int64_t) r + q - 1, error))
    return FALSE;
  out = _fb_shape_of_rank (r + q - 1);
  for (int i = 0; i < axis; i++)
    {
      out.dim[i] = data->shape.dim[i];
      out.sym[i] = data->shape.sym[i];
    }
  for (int i = 0; i < q; i++)
    {
      out.dim[axis + i] = indices->shape.dim[i];
      out.sym[axis + i] = indices->shape.sym[i];
    }
  for (int i = axis + 1; i < r; i++)
    {
      out.dim[q + i - 1] = data->shape.dim[i];
      out.sym[q + i - 1] = data->shape.sym[i];
    }
  return _fb_infer_set_output (node, 0, data->dtype, &out, error);
}

gboolean
_fb_infer_gather_elements (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *data = _fb_infer_require (node, 0, error);
  FbValue *indices = data ? _fb_infer_require (node, 1, error) : NULL;
  int axis;

  if (indices == NULL || !_fb_infer_check_type (node, 1, FB_TYPES_INDEX, error))
    return FALSE;
  if (data->shape.rank >= 0)
    {
      if (data->shape.rank == 0)
        return _fb_infer_fail (error, node, "the data must have rank 1 or more");
      if (indices->shape.rank >= 0 && indices->shape.rank != data->shape.rank)
        return _fb_infer_fail (error, node, "indices have rank %d but the data has rank %d",
                               indices->shape.rank, data->shape.rank);
      if (!_fb_infer_axis (node, fb_node_attr_int (node, "axis", 0), data->shape.rank, "axis",
                           &axis, error))
        return FALSE;
    }
  return _fb_infer_set_output (node, 0, data->dtype, &indices->shape, error);
}

gboolean
_fb_infer_scatter_nd (FbGraph *graph, FbNode *node, GError **error)
{
  static const guint data_updates[] = { 0, 2 };
  FbValue *data = _fb_infer_require (node, 0, error);
  FbValue *indices = data ? _fb_infer_require (node, 1, error) : NULL;
  FbValue *updates = indices ? _fb_infer_require (node, 2, error) : NULL;
  const char *reduction = fb_node_attr_string (node, "reduction", "none");
  const FbShape *ds, *is, *us;
  FbDType dtype;

  if (updates == NULL || !_fb_infer_check_type (node, 1, FB_TYPES_INT64, error) ||
      !_fb_infer_same_type (node, data_updates, 2, &dtype, error))
    return FALSE;
  if (_fb_infer_opset (node) < 16 && !_fb_infer_no_attr (node, "reduction", error))
    return FALSE;
  if (strcmp (reduction, "none") != 0 && strcmp (reduction, "add") != 0 &&
      strcmp (reduction, "mul") != 0 &&
      !(_fb_infer_opset (node) >= 18 && (strcmp (reduction, "max") == 0 ||
                                          strcmp (reduction, "min") == 0)))
    return _fb_infer_fail (error, node, "reduction '%s' is not defined", reduction);
  ds = &data->shape;
  is = &indices->shape;
  us = &updates->shape;
  if (ds->rank == 0 || is->rank == 0)
    return _fb_infer_fail (error, node, "data and indices must have rank 1 or more");
  if (ds->rank > 0 && is->rank > 0 && is->dim[is->rank - 1] >= 0)
    {
      int64_t k = is->dim[is->rank - 1];
      int64_t want_rank = (int64_t) is->rank - 1 + ds->rank - k;

      if (k > ds->rank)
        return _fb_infer_fail (error, node, "indices address %" G_GINT64_FORMAT " dimensions of a "
                               "rank-%d tensor", k, ds->rank);
      if (us->rank >= 0 && us->rank != want_rank)
        return _fb_infer_fail (error, node, "updates have rank %d, expected %" G_GINT64_FORMAT,
                               us->rank, want_rank);
      for (int i = 0; us->rank >= 0 && i < us->rank; i++)
        {
          int64_t want = i < is->rank - 1 ? is->dim[i] : ds->dim[k + i - (is->rank - 1)];
          if (want >= 0 && us->dim[i] >= 0 && want != us->dim[i])
            {
              g_autofree char *u = fb_shape_to_string (us);
              return _fb_infer_fail (error, node, "updates of shape %s do not fit: dimension %d "
                                     "should be %" G_GINT64_FORMAT, u, i, want);
            }
        }
    }
  return _fb_infer_set_output (node, 0, dtype, ds, error);
}

static gboolean
block_size (const FbNode *node, int64_t *b, GError **error)
{
  const FbAttr *a = fb_node_attr (node, "blocksize");

  if (a == NULL || a->type != FB_ATTR_INT)
    return _fb_infer_fail (error, node, "the integer attribute 'blocksize' is missing");
  if (a->i <= 0)
    return _fb_infer_fail (error, node, "blocksize %" G_GINT64_FORMAT " is not positive", a->i);
  *b = a->i;
  return TRUE;
}

static gboolean
check_rank4 (const FbNode *node, const FbValue *x, GError **error)
{
  if (x->shape.rank >= 0 && x->shape.rank != 4)
    return _fb_infer_fail (error, node, "the input must have rank 4, not %d", x->shape.rank);
  return TRUE;
}

gboolean
_fb_infer_depth_to_space (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  const char *mode = fb_node_attr_string (node, "mode", "DCR");
  FbShape out = _fb_shape_of_rank (4);
  int64_t b = 0, bb = 0;

  if (x == NULL || !block_size (node, &b, error) || !check_rank4 (node, x, error))
    return FALSE;
  if (strcmp (mode, "DCR") != 0 && strcmp (mode, "CRD") != 0)
    return _fb_infer_fail (error, node, "mode '%s' is neither DCR nor CRD", mode);
  if (__builtin_mul_overflow (b, b, &bb))
    return _fb_infer_fail (error, node, "blocksize %" G_GINT64_FORMAT " is too large", b);
  if (x->shape.rank == 4)
    {
      const FbShape *s = &x->shape;
      if (s->dim[1] >= 0 && s->dim[1] % bb != 0)
        return _fb_infer_fail (error, node, "%" G_GINT64_FORMAT " channels do not divide by "
                               "blocksize^2 = %" G_GINT64_FORMAT, s->dim[1], bb);
      out.dim[0] = s->dim[0];
      out.sym[0] = s->sym[0];
      out.dim[1] = s->dim[1] >= 0 ? s->dim[1] / bb : FB_DIM_UNKNOWN;
      if (!_fb_dim_mul (s->dim[2], b, &out.dim[2]) || !_fb_dim_mul (s->dim[3], b, &out.dim[3]))
        return _fb_infer_fail (error, node, "the output extents overflow 64 bits");
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

gboolean
_fb_infer_space_to_depth (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  FbShape out = _fb_shape_of_rank (4);
  int64_t b = 0, bb = 0;

  if (x == NULL || !block_size (node, &b, error) || !check_rank4 (node, x, error))
    return FALSE;
  if (__builtin_mul_overflow (b, b, &bb))
    return _fb_infer_fail (error, node, "blocksize %" G_GINT64_FORMAT " is too large", b);
  if (x->shape.rank == 4)
    {
      const FbShape *s = &x->shape;
      for (int d = 2; d < 4; d++)
        {
          if (s->dim[d] >= 0 && s->dim[d] % b != 0)
            return _fb_infer_fail (error, node, "extent %" G_GINT64_FORMAT " of axis %d does not "
                                   "divide by blocksize %" G_GINT64_FORMAT, s->dim[d], d, b);
          out.dim[d] = s->dim[d] >= 0 ? s->dim[d] / b : FB_DIM_UNKNOWN;
        }
      out.dim[0] = s->dim[0];
      out.sym[0] = s->sym[0];
      if (!_fb_dim_mul (s->dim[1], bb, &out.dim[1]))
        return _fb_infer_fail (error, node, "the output channels overflow 64 bits");
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

gboolean
_fb_infer_trilu (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);

  if (x == NULL || !_fb_infer_check_type (node, 1, FB_TYPES_INT64, error) ||
      !_fb_infer_check_scalar (node, 1, "input 'k'", FALSE, error))
    return FALSE;
  if (x->shape.rank >= 0 && x->shape.rank < 2)
    return _fb_infer_fail (error, node, "the input must have rank 2 or more, not %d",
                           x->shape.rank);
  return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
}

gboolean
_fb_infer_expand (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  g_autofree int64_t *want = NULL;
  FbShape target, out;
  int n;

  if (x == NULL || _fb_infer_require (node, 1, error) == NULL ||
      !_fb_infer_check_type (node, 1, FB_TYPES_INT64, error) ||
      !_fb_infer_const_ints (node, 1, "input 'shape'", FB_INFER_MAX_VECTOR, &want, &n, error))
    return FALSE;
  if (n < 0)
    {
      FbIntVec iv;
      int64_t len;
      int r = x->shape.rank;

      /* Entries computed from extents: unknown numbers, but maybe named ones. */
      if (_fb_infer_int_vector (node, 1, &iv) && !iv.scalar)
        {
          if (!_fb_infer_check_rank (node, iv.n, error))
            return FALSE;
          target = _fb_shape_of_rank (iv.n);
          for (int i = 0; i < iv.n; i++)
            {
              if (iv.known[i] && iv.v[i] < 0)
                return _fb_infer_fail (error, node, "shape entry %d is %" G_GINT64_FORMAT, i,
                                       iv.v[i]);
              if (iv.known[i])
                target.dim[i] = iv.v[i];
              else
                target.sym[i] = iv.sym[i];
            }
          if (!_fb_infer_broadcast (node, &x->shape, &target, &out, error))
            return FALSE;
          return _fb_infer_set_output (node, 0, x->dtype, &out, error);
        }
      if (!_fb_infer_vector_length (node, 1, "input 'shape'", FALSE, &len, error))
        return FALSE;
      if (len < 0 || r < 0)
        return _fb_infer_set_output (node, 0, x->dtype, &(FbShape) { .rank = FB_RANK_UNKNOWN }, error);
      if (!_fb_infer_check_rank (node, MAX (len, r), error))
        return FALSE;
      /* Broadcasting keeps every input extent other than 1; the rest depends on the data. */
      out = _fb_shape_of_rank (MAX ((int) len, r));
      for (int i = 0; i < r; i++)
        if (x->shape.dim[i] >= 0 && x->shape.dim[i] != 1)
          out.dim[out.rank - r + i] = x->shape.dim[i];
      return _fb_infer_set_output (node, 0, x->dtype, &out, error);
    }
  if (!_fb_infer_check_rank (node, n, error))
    return FALSE;
  for (int i = 0; i < n; i++)
    if (want[i] < 0)
      return _fb_infer_fail (error, node, "shape entry %d is %" G_GINT64_FORMAT, i, want[i]);
  target = fb_shape_make (n, want);
  if (!_fb_infer_broadcast (node, &x->shape, &target, &out, error))
    return FALSE;
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

gboolean
_fb_infer_tile (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  g_autofree int64_t *reps = NULL;
  int64_t len;
  int n, r;
  FbShape out;

  if (x == NULL || _fb_infer_require (node, 1, error) == NULL ||
      !_fb_infer_check_type (node, 1, FB_TYPES_INT64, error) ||
      !_fb_infer_vector_length (node, 1, "input 'repeats'", FALSE, &len, error) ||
      !_fb_infer_const_ints (node, 1, "input 'repeats'", FB_INFER_MAX_VECTOR, &reps, &n, error))
    return FALSE;
  r = x->shape.rank;
  if (r < 0)
    {
      if (len < 0 || len > FB_MAX_RANK)
        return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
      out = _fb_shape_of_rank ((int) len);
      return _fb_infer_set_output (node, 0, x->dtype, &out, error);
    }
  if ((len >= 0 && len != r) || (n >= 0 && n != r))
    return _fb_infer_fail (error, node, "input 'repeats' has %" G_GINT64_FORMAT " entries for an "
                           "input of rank %d", n >= 0 ? (int64_t) n : len, r);
  out = _fb_shape_of_rank (r);
  for (int i = 0; i < r; i++)
    {
      if (n < 0)
        {
          out.dim[i] = x->shape.dim[i] == 0 ? 0 : FB_DIM_UNKNOWN;
          continue;
        }
      if (reps[i] < 0)
        return _fb_infer_fail (error, node, "repeat %d is %" G_GINT64_FORMAT, i, reps[i]);
      if (!_fb_dim_mul (x->shape.dim[i], reps[i], &out.dim[i]))
        return _fb_infer_fail (error, node, "the tiled extent of axis %d overflows 64 bits", i);
      if (reps[i] == 1)
        out.sym[i] = x->shape.sym[i];
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}
