/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Indexed reads and writes added for conformance: GatherND, ScatterElements (and the older
 * Scatter), OneHot and ReverseSequence. Every index is checked before anything is written. */
#include "fb-interp-private.h"

#include <math.h>
#include <string.h>

static gboolean
index_type_ok (const FbNode *node, const FbTensor *t, const char *what, GError **error)
{
  if (t->dtype != FB_DTYPE_INT64 && t->dtype != FB_DTYPE_INT32)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "%s must be int32 or int64, not %s", what, fb_dtype_name (t->dtype));
  return TRUE;
}

static gboolean
bad_index (const FbNode *node, int64_t v, int64_t extent, GError **error)
{
  return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                          "index %" G_GINT64_FORMAT " is out of range for an axis of extent %"
                          G_GINT64_FORMAT, v, extent);
}

gboolean
_fb_interp_gather_nd (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                      GError **error)
{
  FbTensor *x = in[0], *ind = in[1];
  int64_t b = fb_node_attr_int (node, "batch_dims", 0), m, dims[FB_MAX_RANK], xs[FB_MAX_RANK];
  gsize es = fb_dtype_size (x->dtype);
  int rank = 0;

  if (!index_type_ok (node, ind, "indices", error))
    return FALSE;
  if (ind->rank < 1 || b < 0 || b >= MIN (x->rank, ind->rank))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "batch_dims %" G_GINT64_FORMAT " does not fit data of rank %d and "
                            "indices of rank %d", b, x->rank, ind->rank);
  m = ind->dims[ind->rank - 1];
  if (m < 1 || m > x->rank - b)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "index tuples of length %" G_GINT64_FORMAT " do not fit data of rank %d"
                            " after %" G_GINT64_FORMAT " batch dims", m, x->rank, b);
  for (int i = 0; i < b; i++)
    if (x->dims[i] != ind->dims[i])
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                              "batch dimension %d differs between data and indices", i);
  for (int i = 0; i < ind->rank - 1; i++)
    dims[rank++] = ind->dims[i];
  for (int i = (int) (b + m); i < x->rank; i++)
    {
      if (rank >= FB_MAX_RANK)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED, "the result's rank is "
                                "above %d", FB_MAX_RANK);
      dims[rank++] = x->dims[i];
    }
  g_autoptr(FbTensor) y = _fb_interp_new (node, x->dtype, rank, dims, error);
  if (y == NULL)
    return FALSE;
  g_autofree int64_t *idx = _fb_interp_read_i64 (ind);
  int64_t batches = _fb_interp_prod (x->dims, 0, (int) b);
  int64_t per_batch = batches ? _fb_interp_prod (ind->dims, (int) b, ind->rank - 1) : 0;
  int64_t slice = _fb_interp_prod (x->dims, (int) (b + m), x->rank);
  int64_t batch_size = _fb_interp_prod (x->dims, (int) b, x->rank);
  _fb_strides (x->rank, x->dims, xs);
  for (int64_t bi = 0; bi < batches; bi++)
    for (int64_t t = 0; t < per_batch; t++)
      {
        int64_t tuple = bi * per_batch + t, off = bi * batch_size;
        for (int64_t j = 0; j < m; j++)
          {
            int64_t v = idx[tuple * m + j], d = x->dims[b + j];
            if (v < -d || v >= d)
              return bad_index (node, v, d, error);
            off += (v < 0 ? v + d : v) * xs[b + j];
          }
        memcpy ((char *) fb_tensor_data_mut (y) + tuple * slice * es,
                (const char *) fb_tensor_data (x) + off * es, slice * es);
      }
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_check_scatter_elements (const FbNode *node, GError **error)
{
  const char *r = fb_node_attr_string (node, "reduction", "none");
  if (strcmp (r, "none") && strcmp (r, "add") && strcmp (r, "mul") && strcmp (r, "max") &&
      strcmp (r, "min"))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "reduction '%s' is not none, add, mul, max or min", r);
  return TRUE;
}

gboolean
_fb_interp_scatter_elements (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                             FbTensor **out, GError **error)
{
  FbTensor *x = in[0], *ind = in[1], *upd = in[2];
  const char *r = fb_node_attr_string (node, "reduction", "none");
  int64_t xs[FB_MAX_RANK];
  int a;

  if (!_fb_interp_check_scatter_elements (node, error) ||
      !index_type_ok (node, ind, "indices", error))
    return FALSE;
  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", 0), x->rank, &a))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "axis is out of range for rank %d", x->rank);
  gboolean same = ind->rank == x->rank && upd->rank == x->rank && upd->dtype == x->dtype;
  for (int i = 0; same && i < x->rank; i++)
    same = ind->dims[i] == upd->dims[i] && (i == a || ind->dims[i] <= x->dims[i]);
  if (!same)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "indices and updates must have one shape, of the data's rank and "
                            "type, and no larger than the data off the axis");
  g_autofree int64_t *idx = _fb_interp_read_i64 (ind);
  g_autofree int64_t *offs = g_new (int64_t, MAX (ind->numel, 1));
  _fb_strides (x->rank, x->dims, xs);
  for (int64_t i = 0; i < ind->numel; i++)
    {
      int64_t rem = i, off = 0;
      for (int d = ind->rank - 1; d >= 0; d--)
        {
          int64_t k = rem % ind->dims[d];
          rem /= ind->dims[d];
          if (d == a)
            {
              int64_t v = idx[i], e = x->dims[a];
              if (v < -e || v >= e)
                return bad_index (node, v, e, error);
              k = v < 0 ? v + e : v;
            }
          off += k * xs[d];
        }
      offs[i] = off;
    }
  g_autoptr(FbTensor) y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  if (strcmp (r, "none") == 0)
    {
      gsize es = fb_dtype_size (x->dtype);
      memcpy (fb_tensor_data_mut (y), fb_tensor_data (x), fb_tensor_nbytes (x));
      for (int64_t i = 0; i < ind->numel; i++)
        memcpy ((char *) fb_tensor_data_mut (y) + offs[i] * es,
                (const char *) fb_tensor_data (upd) + i * es, es);
    }
  else if (_fb_interp_is_int (x->dtype))
    {
      g_autofree int64_t *v = _fb_interp_read_i64 (x);
      g_autofree int64_t *u = _fb_interp_read_i64 (upd);
      for (int64_t i = 0; i < ind->numel; i++)
        {
          int64_t *p = &v[offs[i]];
          switch (r[1])
            {
            case 'd': *p = (int64_t) ((uint64_t) *p + (uint64_t) u[i]); break;   /* add */
            case 'u': *p = (int64_t) ((uint64_t) *p * (uint64_t) u[i]); break;   /* mul */
            case 'a': *p = MAX (*p, u[i]); break;                                  /* max */
            default:  *p = MIN (*p, u[i]); break;                                  /* min */
            }
        }
      _fb_interp_write_i64 (y, v);
    }
  else
    {
      g_autofree double *v = _fb_interp_read_f64 (x);
      g_autofree double *u = _fb_interp_read_f64 (upd);
      for (int64_t i = 0; i < ind->numel; i++)
        {
          double *p = &v[offs[i]];
          switch (r[1])
            {
            case 'd': *p += u[i]; break;
            case 'u': *p *= u[i]; break;
            case 'a': *p = fmax (*p, u[i]); break;
            default:  *p = fmin (*p, u[i]); break;
            }
        }
      _fb_interp_write_f64 (y, v);
    }
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

/* OneHot's depth: a one-element tensor of any numeric type (floats truncate). */
gboolean
_fb_interp_one_hot_depth (const FbNode *node, const FbTensor *t, int64_t *depth, GError **error)
{
  double d;
  if (!_fb_interp_scalar_f64 (node, t, "depth", &d, error))
    return FALSE;
  if (!(d >= 1) || d > (double) G_MAXINT32)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "depth %g is not a count from 1 to %d", d, G_MAXINT32);
  *depth = (int64_t) d;
  return TRUE;
}

gboolean
_fb_interp_one_hot (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                    GError **error)
{
  FbTensor *ind = in[0], *values = in[2];
  int64_t depth, dims[FB_MAX_RANK];
  int a;

  if (!_fb_interp_one_hot_depth (node, in[1], &depth, error))
    return FALSE;
  if (values->numel != 2 || values->rank > 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "values must be [off_value, on_value]");
  if (ind->rank + 1 > FB_MAX_RANK)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED, "the result's rank is "
                            "above %d", FB_MAX_RANK);
  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", -1), ind->rank + 1, &a))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "axis is out of range for rank %d", ind->rank + 1);
  for (int i = 0, j = 0; i <= ind->rank; i++)
    dims[i] = i == a ? depth : ind->dims[j++];
  g_autoptr(FbTensor) y = _fb_interp_new (node, values->dtype, ind->rank + 1, dims, error);
  if (y == NULL)
    return FALSE;
  int64_t outer = _fb_interp_prod (ind->dims, 0, a), inner = _fb_interp_prod (ind->dims, a, ind->rank);
  g_autofree double *iv = _fb_interp_read_f64 (ind);
  g_autofree double *vv = _fb_interp_read_f64 (values);
  g_autofree double *r = g_new (double, MAX (y->numel, 1));
  for (int64_t i = 0; i < y->numel; i++)
    r[i] = vv[0];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      {
        double v = iv[o * inner + i];
        /* Negative indices count from the end; indices outside [-depth, depth) get no on value. */
        if (v < 0)
          v += depth;
        if (v >= 0 && v < depth)
          r[(o * depth + (int64_t) v) * inner + i] = vv[1];
      }
  _fb_interp_write_f64 (y, r);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_reverse_sequence (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                             FbTensor **out, GError **error)
{
  FbTensor *x = in[0], *lens = in[1];
  int64_t ta = fb_node_attr_int (node, "time_axis", 0), ba = fb_node_attr_int (node, "batch_axis", 1);
  int64_t xs[FB_MAX_RANK];
  gsize es = fb_dtype_size (x->dtype);

  if (x->rank < 2 || (ta != 0 && ta != 1) || (ba != 0 && ba != 1) || ta == ba)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "time_axis and batch_axis must be 0 and 1 (in either order) of an "
                            "input of rank 2 or more");
  if (!index_type_ok (node, lens, "sequence_lens", error))
    return FALSE;
  if (lens->rank != 1 || lens->dims[0] != x->dims[ba])
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "sequence_lens must hold one length per batch entry");
  g_autofree int64_t *len = _fb_interp_read_i64 (lens);
  for (int64_t b = 0; b < lens->numel; b++)
    if (len[b] < 0 || len[b] > x->dims[ta])
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                              "sequence length %" G_GINT64_FORMAT " is outside 0..%" G_GINT64_FORMAT,
                              len[b], x->dims[ta]);
  g_autoptr(FbTensor) y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  _fb_strides (x->rank, x->dims, xs);
  int64_t slice = _fb_interp_prod (x->dims, 2, x->rank);
  for (int64_t t = 0; t < x->dims[ta]; t++)
    for (int64_t b = 0; b < x->dims[ba]; b++)
      {
        int64_t src_t = t < len[b] ? len[b] - 1 - t : t;
        memcpy ((char *) fb_tensor_data_mut (y) + (t * xs[ta] + b * xs[ba]) * es,
                (const char *) fb_tensor_data (x) + (src_t * xs[ta] + b * xs[ba]) * es,
                slice * es);
      }
  out[0] = g_steal_pointer (&y);
  return TRUE;
}
