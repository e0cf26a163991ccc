/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Operators that move elements without arithmetic: Concat, Transpose, Slice, Split, Gather,
 * GatherElements, ScatterND, Expand, Tile, Pad, DepthToSpace, SpaceToDepth, Trilu. They work on
 * bytes, so every element type goes through the same code; every index read from data is
 * checked before it is used. */
#include "fb-interp-private.h"

#include <string.h>

gboolean
_fb_interp_concat (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                   GError **error)
{
  const FbTensor *first = NULL;
  int64_t dims[FB_MAX_RANK], outer, offset = 0;
  gsize esize;
  int a = 0;
  FbTensor *y;

  for (guint k = 0; k < node->n_inputs; k++)
    if (in[k] != NULL)
      {
        first = in[k];
        break;
      }
  if (first == NULL || first->rank == 0 ||
      !fb_axis_normalize (fb_node_attr_int (node, "axis", _fb_interp_opset (node) < 4 ? 1 : 0),
                          first->rank, &a))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "needs inputs of rank 1 or more and an axis within their rank");
  memcpy (dims, first->dims, sizeof dims);
  dims[a] = 0;
  for (guint k = 0; k < node->n_inputs; k++)
    {
      const FbTensor *t = in[k];
      if (t == NULL)
        continue;
      if (t->dtype != first->dtype || t->rank != first->rank)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "input %u (%s, rank %d) does not match input 0 (%s, rank %d)", k,
                                fb_dtype_name (t->dtype), t->rank, fb_dtype_name (first->dtype),
                                first->rank);
      for (int i = 0; i < t->rank; i++)
        if (i != a && t->dims[i] != first->dims[i])
          return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "input %u has extent %" G_GINT64_FORMAT " on axis %d, input 0 "
                                  "has %" G_GINT64_FORMAT, k, t->dims[i], i, first->dims[i]);
      dims[a] += t->dims[a];
    }
  y = _fb_interp_new (node, first->dtype, first->rank, dims, error);
  if (y == NULL)
    return FALSE;
  esize = fb_dtype_size (first->dtype);
  outer = _fb_interp_prod (dims, 0, a);
  for (guint k = 0; k < node->n_inputs; k++)
    {
      const FbTensor *t = in[k];
      gsize chunk, stride;
      if (t == NULL)
        continue;
      chunk = _fb_interp_prod (t->dims, a, t->rank) * esize;
      stride = _fb_interp_prod (dims, a, first->rank) * esize;
      for (int64_t o = 0; o < outer && chunk > 0; o++)
        memcpy ((char *) fb_tensor_data_mut (y) + o * stride + offset,
                (const char *) fb_tensor_data (t) + o * chunk, chunk);
      offset += chunk;
    }
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_transpose (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                      GError **error)
{
  FbTensor *x = in[0];
  int perm[FB_MAX_RANK];
  guint n;
  const int64_t *p = fb_node_attr_ints (node, "perm", &n);

  if (p == NULL)
    for (int i = 0; i < x->rank; i++)
      perm[i] = x->rank - 1 - i;
  else
    {
      gboolean seen[FB_MAX_RANK] = { FALSE };
      if (n != (guint) x->rank)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "perm has %u entries for an input of rank %d", n, x->rank);
      for (guint i = 0; i < n; i++)
        {
          if (p[i] < 0 || p[i] >= x->rank || seen[p[i]])
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                    "perm is not a permutation of 0..%d", x->rank - 1);
          seen[p[i]] = TRUE;
          perm[i] = (int) p[i];
        }
    }
  out[0] = _fb_interp_permute (node, x, perm, error);
  return out[0] != NULL;
}

/* Copies x[start + i * step] along every axis into a new tensor of the given extents. */
static FbTensor *
strided_view_copy (const FbNode *node, const FbTensor *x, const int64_t *start,
                   const int64_t *step, const int64_t *dims, GError **error)
{
  int64_t xs[FB_MAX_RANK], src[FB_MAX_RANK], dst[FB_MAX_RANK], base = 0;
  gsize esize = fb_dtype_size (x->dtype);
  FbTensor *y = _fb_interp_new (node, x->dtype, x->rank, dims, error);

  if (y == NULL)
    return NULL;
  if (y->numel == 0)
    return y;
  _fb_strides (x->rank, x->dims, xs);
  for (int i = 0; i < x->rank; i++)
    {
      base += start[i] * xs[i];
      src[i] = step[i] * xs[i];
    }
  _fb_strides (x->rank, dims, dst);
  _fb_copy_strided (fb_tensor_data_mut (y), dst, (const char *) fb_tensor_data (x) + base * esize,
                    src, x->rank, dims, esize);
  return y;
}

gboolean
_fb_interp_slice (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                  GError **error)
{
  FbTensor *x = in[0];
  g_autofree int64_t *starts = NULL, *ends = NULL, *axes = NULL, *steps = NULL;
  guint ns = 0, ne = 0, na = 0, nst = 0;
  int64_t start[FB_MAX_RANK], step[FB_MAX_RANK], dims[FB_MAX_RANK];
  gboolean seen[FB_MAX_RANK] = { FALSE };

  if (_fb_interp_opset (node) < 10)
    {
      const int64_t *v;
      v = fb_node_attr_ints (node, "starts", &ns);
      starts = g_memdup2 (v, sizeof (int64_t) * MAX (ns, 1));
      v = fb_node_attr_ints (node, "ends", &ne);
      ends = g_memdup2 (v, sizeof (int64_t) * MAX (ne, 1));
      v = fb_node_attr_ints (node, "axes", &na);
      axes = v ? g_memdup2 (v, sizeof (int64_t) * na) : NULL;
    }
  else
    {
      if (!_fb_interp_need (node, in, 1, error) || !_fb_interp_need (node, in, 2, error) ||
          !_fb_interp_int_list (node, in[1], "starts", &starts, &ns, error) ||
          !_fb_interp_int_list (node, in[2], "ends", &ends, &ne, error))
        return FALSE;
      if (node->n_inputs > 3 && in[3] != NULL &&
          !_fb_interp_int_list (node, in[3], "axes", &axes, &na, error))
        return FALSE;
      if (node->n_inputs > 4 && in[4] != NULL &&
          !_fb_interp_int_list (node, in[4], "steps", &steps, &nst, error))
        return FALSE;
    }
  if (ne != ns || (axes && na != ns) || (steps && nst != ns) || ns > (guint) x->rank)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "starts, ends, axes and steps must have the same length, at most the "
                            "rank %d", x->rank);
  for (int i = 0; i < x->rank; i++)
    {
      start[i] = 0;
      step[i] = 1;
      dims[i] = x->dims[i];
    }
  for (guint k = 0; k < ns; k++)
    {
      int a;
      int64_t d, s, e, st = steps ? steps[k] : 1;
      if (!fb_axis_normalize (axes ? axes[k] : (int64_t) k, x->rank, &a) || seen[a])
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "axis %" G_GINT64_FORMAT " is out of range or repeated",
                                axes ? axes[k] : (int64_t) k);
      seen[a] = TRUE;
      if (st == 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "a step is 0");
      d = x->dims[a];
      s = starts[k];
      e = ends[k];
      step[a] = st;
      if (d == 0)
        {
          dims[a] = 0;
          continue;
        }
      /* Negative positions count from the end; then clamp as the spec says, which differs for
       * negative steps (the end may be -1, "before the first element"). */
      if (s < 0) s = s < -d ? 0 : s + d;
      if (e < 0) e = e < -d ? -1 : e + d;
      if (st > 0)
        {
          s = CLAMP (s, 0, d);
          e = CLAMP (e, 0, d);
          dims[a] = e > s ? (e - s + st - 1) / st : 0;
        }
      else
        {
          s = CLAMP (s, 0, d - 1);
          e = CLAMP (e, -1, d - 1);
          if (st == G_MININT64)
            st = -d - 1;
          dims[a] = s > e ? (s - e + (-st) - 1) / (-st) : 0;
        }
      start[a] = dims[a] > 0 ? s : 0;
      step[a] = st;
    }
  out[0] = strided_view_copy (node, x, start, step, dims, error);
  return out[0] != NULL;
}

gboolean
_fb_interp_split (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                  GError **error)
{
  FbTensor *x = in[0];
  int opset = _fb_interp_opset (node);
  g_autofree int64_t *sizes = NULL;
  guint n = node->n_outputs, ns = 0;
  int64_t start[FB_MAX_RANK] = { 0 }, step[FB_MAX_RANK], dims[FB_MAX_RANK], total = 0;
  int a;

  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", 0), x->rank, &a))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "axis is out of range for rank %d", x->rank);
  if (opset >= 13 && node->n_inputs > 1 && in[1] != NULL)
    {
      if (!_fb_interp_int_list (node, in[1], "split", &sizes, &ns, error))
        return FALSE;
    }
  else if (opset < 13 && fb_node_attr (node, "split") != NULL)
    {
      const int64_t *v = fb_node_attr_ints (node, "split", &ns);
      sizes = g_memdup2 (v, sizeof (int64_t) * MAX (ns, 1));
    }
  else
    {
      /* Equal parts; since opset 18 num_outputs allows a smaller last part. */
      int64_t d = x->dims[a], part;
      if (n == 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "has no outputs");
      part = opset >= 18 ? (d + n - 1) / n : d / n;
      if (opset < 18 && d % n != 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "extent %" G_GINT64_FORMAT " does not split into %u equal parts",
                                d, n);
      ns = n;
      sizes = g_new (int64_t, n);
      for (guint k = 0; k < n; k++)
        sizes[k] = MAX (0, MIN (part, d - (int64_t) k * part));
    }
  if (ns != n)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "split has %u entries for %u outputs", ns, n);
  for (guint k = 0; k < n; k++)
    {
      if (sizes[k] < 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "a split size is negative");
      total += sizes[k];
    }
  if (total != x->dims[a])
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "split sizes add up to %" G_GINT64_FORMAT ", the axis has %"
                            G_GINT64_FORMAT, total, x->dims[a]);
  for (int i = 0; i < x->rank; i++)
    {
      step[i] = 1;
      dims[i] = x->dims[i];
    }
  for (guint k = 0; k < n; k++)
    {
      dims[a] = sizes[k];
      out[k] = strided_view_copy (node, x, start, step, dims, error);
      if (out[k] == NULL)
        return FALSE;
      start[a] += sizes[k];
    }
  return TRUE;
}

/* Reads an index tensor into int64 and checks every entry against [-extent, extent). */
static int64_t *
read_indices (const FbNode *node, const FbTensor *t, int64_t extent, GError **error)
{
  int64_t *idx;

  if (t->dtype != FB_DTYPE_INT64 && t->dtype != FB_DTYPE_INT32)
    {
      _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                       "indices must be int32 or int64, not %s", fb_dtype_name (t->dtype));
      return NULL;
    }
  idx = _fb_interp_read_i64 (t);
  for (int64_t i = 0; i < t->numel; i++)
    {
      if (idx[i] < -extent || idx[i] >= extent)
        {
          _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                           "index %" G_GINT64_FORMAT " is out of range for an axis of extent %"
                           G_GINT64_FORMAT, idx[i], extent);
          g_free (idx);
          return NULL;
        }
      if (idx[i] < 0)
        idx[i] += extent;
    }
  return idx;
}

gboolean
_fb_interp_gather (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                   GError **error)
{
  FbTensor *x = in[0], *ind = in[1];
  int64_t dims[FB_MAX_RANK], outer, inner, extent;
  g_autofree int64_t *idx = NULL;
  gsize esize = fb_dtype_size (x->dtype);
  int a, rank = 0;
  FbTensor *y;

  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", 0), x->rank, &a))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "axis is out of range for rank %d", x->rank);
  if (x->rank - 1 + ind->rank > FB_MAX_RANK)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "the result would exceed rank %d", FB_MAX_RANK);
  extent = x->dims[a];
  idx = read_indices (node, ind, extent, error);
  if (idx == NULL)
    return FALSE;
  for (int i = 0; i < a; i++)
    dims[rank++] = x->dims[i];
  for (int i = 0; i < ind->rank; i++)
    dims[rank++] = ind->dims[i];
  for (int i = a + 1; i < x->rank; i++)
    dims[rank++] = x->dims[i];
  y = _fb_interp_new (node, x->dtype, rank, dims, error);
  if (y == NULL)
    return FALSE;
  outer = _fb_interp_prod (x->dims, 0, a);
  inner = _fb_interp_prod (x->dims, a + 1, x->rank) * esize;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < ind->numel; i++)
      memcpy ((char *) fb_tensor_data_mut (y) + (o * ind->numel + i) * inner,
              (const char *) fb_tensor_data (x) + (o * extent + idx[i]) * inner, inner);
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_gather_elements (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                            FbTensor **out, GError **error)
{
  FbTensor *x = in[0], *ind = in[1];
  int64_t xs[FB_MAX_RANK];
  g_autofree int64_t *idx = NULL;
  gsize esize = fb_dtype_size (x->dtype);
  int a;
  FbTensor *y;

  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", 0), x->rank, &a) || ind->rank != x->rank)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "axis out of range, or indices of rank %d for data of rank %d",
                            ind->rank, x->rank);
  for (int i = 0; i < x->rank; i++)
    if (i != a && ind->dims[i] > x->dims[i])
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                              "indices extend past the data on axis %d", i);
  idx = read_indices (node, ind, x->dims[a], error);
  if (idx == NULL)
    return FALSE;
  y = _fb_interp_new (node, x->dtype, ind->rank, ind->dims, error);
  if (y == NULL)
    return FALSE;
  _fb_strides (x->rank, x->dims, xs);
  for (int64_t i = 0; i < ind->numel; i++)
    {
      int64_t rem = i, off = 0;
      for (int d = ind->rank - 1; d >= 0; d--)
        {
          int64_t k = rem % ind->dims[d];
          rem /= ind->dims[d];
          off += (d == a ? idx[i] : k) * xs[d];
        }
      memcpy ((char *) fb_tensor_data_mut (y) + i * esize,
              (const char *) fb_tensor_data (x) + off * esize, esize);
    }
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_scatter_nd (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                       GError **error)
{
  FbTensor *x = in[0], *ind = in[1], *upd = in[2];
  const char *reduction = fb_node_attr_string (node, "reduction", "none");
  int64_t k, n_tuples, slice, xs[FB_MAX_RANK];
  g_autofree int64_t *idx = NULL, *offs = NULL;
  g_autoptr(FbTensor) y = NULL;
  int mode;

  mode = !strcmp (reduction, "none") ? 0 : !strcmp (reduction, "add") ? 1 :
         !strcmp (reduction, "mul") ? 2 : !strcmp (reduction, "max") ? 3 :
         !strcmp (reduction, "min") ? 4 : -1;
  if (mode < 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "reduction '%s' is unknown", reduction);
  if (ind->rank < 1 || (k = ind->dims[ind->rank - 1]) > x->rank || upd->dtype != x->dtype ||
      ind->dtype != FB_DTYPE_INT64)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "indices must be int64 of rank 1 or more, with tuples no longer than "
                            "the data's rank, and updates of the data's type");
  n_tuples = ind->numel / MAX (k, 1);
  if (k == 0)
    n_tuples = _fb_interp_prod (ind->dims, 0, ind->rank - 1);
  slice = _fb_interp_prod (x->dims, (int) k, x->rank);
  /* updates must be indices.shape[:-1] + data.shape[k:] */
  if (upd->rank != ind->rank - 1 + x->rank - (int) k || upd->numel != n_tuples * slice)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "updates have the wrong shape for these indices");
  for (int i = 0; i < ind->rank - 1; i++)
    if (upd->dims[i] != ind->dims[i])
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                              "updates have the wrong shape for these indices");
  y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  idx = _fb_interp_read_i64 (ind);
  _fb_strides (x->rank, x->dims, xs);
  /* Offsets first, so that a bad index fails before anything is written. */
  offs = g_new (int64_t, MAX (n_tuples, 1));
  for (int64_t t = 0; t < n_tuples; t++)
    {
      offs[t] = 0;
      for (int64_t j = 0; j < k; j++)
        {
          int64_t v = idx[t * k + j], d = x->dims[j];
          if (v < -d || v >= d)
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                    "index %" G_GINT64_FORMAT " is out of range for an axis of "
                                    "extent %" G_GINT64_FORMAT, v, d);
          offs[t] += (v < 0 ? v + d : v) * xs[j];
        }
    }
  if (mode == 0)
    {
      gsize es = fb_dtype_size (x->dtype);
      memcpy (fb_tensor_data_mut (y), fb_tensor_data (x), fb_tensor_nbytes (x));
      for (int64_t t = 0; t < n_tuples; t++)
        memcpy ((char *) fb_tensor_data_mut (y) + offs[t] * es,
                (const char *) fb_tensor_data (upd) + t * slice * es, slice * es);
    }
  else if (_fb_interp_is_int (x->dtype))
    {
      g_autofree int64_t *a = _fb_interp_read_i64 (x);
      g_autofree int64_t *b = _fb_interp_read_i64 (upd);
      for (int64_t t = 0; t < n_tuples; t++)
        for (int64_t e = 0; e < slice; e++)
          {
            int64_t *r = &a[offs[t] + e], u = b[t * slice + e];
            *r = mode == 1 ? (int64_t) ((uint64_t) *r + (uint64_t) u)
               : mode == 2 ? (int64_t) ((uint64_t) *r * (uint64_t) u)
               : mode == 3 ? MAX (*r, u) : MIN (*r, u);
          }
      _fb_interp_write_i64 (y, a);
    }
  else
    {
      g_autofree double *a = _fb_interp_read_f64 (x);
      g_autofree double *b = _fb_interp_read_f64 (upd);
      for (int64_t t = 0; t < n_tuples; t++)
        for (int64_t e = 0; e < slice; e++)
          {
            double *r = &a[offs[t] + e], u = b[t * slice + e];
            *r = mode == 1 ? *r + u : mode == 2 ? *r * u
               : mode == 3 ? (*r > u ? *r : u) : (*r < u ? *r : u);
          }
      _fb_interp_write_f64 (y, a);
    }
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_expand (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                   GError **error)
{
  FbTensor *x = in[0];
  g_autofree int64_t *shape = NULL;
  guint n;
  FbBcast bc;
  int ranks[2];
  const int64_t *dims[2];
  int64_t dst[FB_MAX_RANK];
  FbTensor *y;

  if (!_fb_interp_int_list (node, in[1], "shape", &shape, &n, error))
    return FALSE;
  if (n > FB_MAX_RANK)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "shape has more than %d entries", FB_MAX_RANK);
  for (guint i = 0; i < n; i++)
    if (shape[i] < 0)
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                              "shape entry %" G_GINT64_FORMAT " is negative", shape[i]);
  ranks[0] = x->rank;
  ranks[1] = (int) n;
  dims[0] = x->dims;
  dims[1] = shape;
  if (!_fb_bcast_init_dims (&bc, node, 2, ranks, dims, error))
    return FALSE;
  y = _fb_interp_new (node, x->dtype, bc.rank, bc.dims, error);
  if (y == NULL)
    return FALSE;
  _fb_strides (bc.rank, bc.dims, dst);
  _fb_copy_strided (fb_tensor_data_mut (y), dst, fb_tensor_data (x), bc.strides[0], bc.rank,
                    bc.dims, fb_dtype_size (x->dtype));
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_tile (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                 GError **error)
{
  FbTensor *x = in[0];
  g_autofree int64_t *reps = NULL;
  guint n;
  int64_t dims[FB_MAX_RANK], xs[FB_MAX_RANK], rows, inner;
  gsize esize = fb_dtype_size (x->dtype);
  FbTensor *y;

  if (!_fb_interp_int_list (node, in[1], "repeats", &reps, &n, error))
    return FALSE;
  if (n != (guint) x->rank || x->rank == 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "repeats has %u entries for an input of rank %d", n, x->rank);
  for (int i = 0; i < x->rank; i++)
    {
      if (reps[i] < 0 || (x->dims[i] > 0 && reps[i] > G_MAXINT64 / x->dims[i]))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "repeat %" G_GINT64_FORMAT " is negative or too large", reps[i]);
      dims[i] = x->dims[i] * reps[i];
    }
  y = _fb_interp_new (node, x->dtype, x->rank, dims, error);
  if (y == NULL)
    return FALSE;
  if (y->numel == 0)
    {
      out[0] = y;
      return TRUE;
    }
  _fb_strides (x->rank, x->dims, xs);
  rows = _fb_interp_prod (dims, 0, x->rank - 1);
  inner = x->dims[x->rank - 1] * esize;
  for (int64_t r = 0; r < rows; r++)
    {
      int64_t rem = r, src = 0;
      char *d = (char *) fb_tensor_data_mut (y) + r * dims[x->rank - 1] * esize;
      for (int i = x->rank - 2; i >= 0; i--)
        {
          src += (rem % dims[i]) % x->dims[i] * xs[i];
          rem /= dims[i];
        }
      for (int64_t k = 0; k < reps[x->rank - 1]; k++)
        memcpy (d + k * inner, (const char *) fb_tensor_data (x) + src * esize, inner);
    }
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_depth_space (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                        FbTensor **out, GError **error)
{
  FbTensor *x = in[0];
  int64_t b = fb_node_attr_int (node, "blocksize", 0), N, C, H, W;
  int64_t v[6], vs[6], perm_dims[6], src[6], dst[6], ydims[4];
  const int *perm;
  static const int dcr[6] = { 0, 3, 4, 1, 5, 2 };
  static const int crd[6] = { 0, 1, 4, 2, 5, 3 };
  static const int s2d[6] = { 0, 3, 5, 1, 2, 4 };
  FbTensor *y;

  if (x->rank != 4 || b < 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "needs a 4-D input and a positive blocksize");
  N = x->dims[0]; C = x->dims[1]; H = x->dims[2]; W = x->dims[3];
  if (node->op == FB_OP_DEPTH_TO_SPACE)
    {
      gboolean is_crd = g_strcmp0 (fb_node_attr_string (node, "mode", "DCR"), "CRD") == 0;
      if (C % (b * b) != 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "%" G_GINT64_FORMAT " channels do not divide by blocksize^2",
                                C);
      /* A 6-D view of the input, permuted: the spec's reshape-transpose-reshape. */
      if (is_crd)
        { v[0] = N; v[1] = C / (b * b); v[2] = b; v[3] = b; v[4] = H; v[5] = W; perm = crd; }
      else
        { v[0] = N; v[1] = b; v[2] = b; v[3] = C / (b * b); v[4] = H; v[5] = W; perm = dcr; }
      ydims[0] = N; ydims[1] = C / (b * b); ydims[2] = H * b; ydims[3] = W * b;
    }
  else
    {
      if (H % b != 0 || W % b != 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "height and width must divide by the blocksize");
      v[0] = N; v[1] = C; v[2] = H / b; v[3] = b; v[4] = W / b; v[5] = b;
      perm = s2d;
      ydims[0] = N; ydims[1] = C * b * b; ydims[2] = H / b; ydims[3] = W / b;
    }
  y = _fb_interp_new (node, x->dtype, 4, ydims, error);
  if (y == NULL)
    return FALSE;
  _fb_strides (6, v, vs);
  for (int i = 0; i < 6; i++)
    {
      perm_dims[i] = v[perm[i]];
      src[i] = vs[perm[i]];
    }
  _fb_strides (6, perm_dims, dst);
  _fb_copy_strided (fb_tensor_data_mut (y), dst, fb_tensor_data (x), src, 6, perm_dims,
                    fb_dtype_size (x->dtype));
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_trilu (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                  GError **error)
{
  FbTensor *x = in[0];
  gboolean upper = fb_node_attr_int (node, "upper", 1) != 0;
  int64_t k = 0, R, C, mats;
  gsize esize = fb_dtype_size (x->dtype);
  FbTensor *y;
  char *d;

  if (x->rank < 2)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the input has rank %d, at least 2 is needed", x->rank);
  if (node->n_inputs > 1 && in[1] != NULL && !_fb_interp_scalar_i64 (node, in[1], "k", &k, error))
    return FALSE;
  y = fb_tensor_copy (x);
  if (y == NULL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "out of memory");
  R = x->dims[x->rank - 2];
  C = x->dims[x->rank - 1];
  mats = _fb_interp_prod (x->dims, 0, x->rank - 2);
  d = fb_tensor_data_mut (y);
  for (int64_t m = 0; m < mats; m++)
    for (int64_t i = 0; i < R; i++)
      for (int64_t j = 0; j < C; j++)
        {
          /* Compared without forming j - i - k, which a hostile k could overflow. */
          gboolean keep = upper ? (j - i >= k) : (j - i <= k);
          if (!keep)
            memset (d + ((m * R + i) * C + j) * esize, 0, esize);
        }
  out[0] = y;
  return TRUE;
}
