/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Operators whose output size depends on the data: Compress, NonZero, Unique and
 * NonMaxSuppression. The cpu target runs them as host steps through these kernels. */
#include "fb-interp-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

gboolean
_fb_interp_compress (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                     GError **error)
{
  FbTensor *x = in[0], *cond = in[1];
  const FbAttr *axis_attr = fb_node_attr (node, "axis");
  gsize es = fb_dtype_size (x->dtype);
  int64_t dims[FB_MAX_RANK], outer, n, inner;
  int a = 0, rank;

  if (cond->rank != 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the condition must be a vector, not of rank %d", cond->rank);
  if (axis_attr && axis_attr->type == FB_ATTR_INT)
    {
      if (!fb_axis_normalize (axis_attr->i, x->rank, &a))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "axis %" G_GINT64_FORMAT " is out of range for rank %d",
                                axis_attr->i, x->rank);
      outer = _fb_interp_prod (x->dims, 0, a);
      n = x->dims[a];
      inner = _fb_interp_prod (x->dims, a + 1, x->rank);
      rank = x->rank;
      memcpy (dims, x->dims, sizeof dims);
    }
  else
    {
      /* No axis: the input is flattened first. */
      outer = 1;
      n = x->numel;
      inner = 1;
      rank = 1;
    }
  if (cond->numel > n)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the condition has %" G_GINT64_FORMAT " entries for an axis of %"
                            G_GINT64_FORMAT, cond->numel, n);
  g_autofree int64_t *c = _fb_interp_read_i64 (cond);
  int64_t kept = 0;
  for (int64_t i = 0; i < cond->numel; i++)
    kept += c[i] != 0;
  dims[rank == 1 ? 0 : a] = kept;
  g_autoptr(FbTensor) y = _fb_interp_new (node, x->dtype, rank, dims, error);
  if (y == NULL)
    return FALSE;
  char *dst = fb_tensor_data_mut (y);
  const char *src = fb_tensor_data (x);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < cond->numel; i++)
      if (c[i])
        {
          memcpy (dst, src + (o * n + i) * inner * es, inner * es);
          dst += inner * es;
        }
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_non_zero (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                     GError **error)
{
  FbTensor *x = in[0];
  g_autofree double *v = _fb_interp_read_f64 (x);
  int64_t nnz = 0, dims[2], xs[FB_MAX_RANK];
  int rank = MAX (x->rank, 1);

  for (int64_t i = 0; i < x->numel; i++)
    nnz += v[i] != 0;
  dims[0] = x->rank;
  dims[1] = nnz;
  g_autoptr(FbTensor) y = _fb_interp_new (node, FB_DTYPE_INT64, 2, dims, error);
  if (y == NULL)
    return FALSE;
  int64_t *d = fb_tensor_data_mut (y);
  _fb_strides (x->rank, x->dims, xs);
  int64_t j = 0;
  for (int64_t i = 0; i < x->numel; i++)
    if (v[i] != 0)
      {
        int64_t rem = i;
        for (int k = 0; k < x->rank && k < rank; k++)
          {
            d[k * nnz + j] = rem / xs[k];
            rem %= xs[k];
          }
        j++;
      }
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

/* ---- Unique ------------------------------------------------------------------------------- */

typedef struct {
  const double  *f;     /* the values of a float input, or NULL */
  const int64_t *i;     /* the values of an integer input */
  const int64_t *at;    /* slice s, element e is value at[s * count + e] */
  int64_t        count; /* elements of one slice */
} SliceOrder;

static int
compare_slices (const SliceOrder *o, int64_t a, int64_t b)
{
  const int64_t *pa = o->at + a * o->count, *pb = o->at + b * o->count;
  for (int64_t e = 0; e < o->count; e++)
    {
      if (o->f)
        {
          double va = o->f[pa[e]], vb = o->f[pb[e]];
          if (va != vb)
            return va < vb ? -1 : 1;
        }
      else
        {
          int64_t va = o->i[pa[e]], vb = o->i[pb[e]];
          if (va != vb)
            return va < vb ? -1 : 1;
        }
    }
  return 0;
}

static int
qsort_slices (const void *a, const void *b, void *data)
{
  int64_t ia = *(const int64_t *) a, ib = *(const int64_t *) b;
  int c = compare_slices (data, ia, ib);
  return c != 0 ? c : (ia < ib ? -1 : ia > ib);
}

gboolean
_fb_interp_unique (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                   GError **error)
{
  FbTensor *x = in[0];
  const FbAttr *axis_attr = fb_node_attr (node, "axis");
  gboolean sorted = fb_node_attr_int (node, "sorted", 1) != 0;
  gsize es = fb_dtype_size (x->dtype);
  int64_t outer, n, inner;
  int a = 0;

  if (es == 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "element type %s is not supported", fb_dtype_name (x->dtype));
  if (axis_attr && axis_attr->type == FB_ATTR_INT)
    {
      if (!fb_axis_normalize (axis_attr->i, x->rank, &a))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "axis %" G_GINT64_FORMAT " is out of range for rank %d",
                                axis_attr->i, x->rank);
      outer = _fb_interp_prod (x->dims, 0, a);
      n = x->dims[a];
      inner = _fb_interp_prod (x->dims, a + 1, x->rank);
    }
  else
    {
      outer = 1;
      n = x->numel;
      inner = 1;
      axis_attr = NULL;
    }
  /* Slice i is x[..., i, ...]: where each of its elements lies in x. */
  int64_t count = outer * inner;
  g_autofree int64_t *at = _fb_interp_alloc (node, MAX (n * count, 1), sizeof (int64_t), error);
  if (at == NULL)
    return FALSE;
  for (int64_t i = 0; i < n; i++)
    for (int64_t o = 0; o < outer; o++)
      for (int64_t e = 0; e < inner; e++)
        at[i * count + o * inner + e] = (o * n + i) * inner + e;
  g_autofree double *fv = fb_dtype_is_float (x->dtype) ? _fb_interp_read_f64 (x) : NULL;
  g_autofree int64_t *iv = fv ? NULL : _fb_interp_read_i64 (x);
  SliceOrder ord = { fv, iv, at, count };
  g_autofree int64_t *order = g_new (int64_t, MAX (n, 1));
  for (int64_t i = 0; i < n; i++)
    order[i] = i;
  qsort_r (order, n, sizeof (int64_t), qsort_slices, &ord);
  /* Runs of equal slices in sorted order; each run's first entry is its first occurrence. */
  g_autofree int64_t *first = g_new (int64_t, MAX (n, 1));
  g_autofree int64_t *counts = g_new (int64_t, MAX (n, 1));
  g_autofree int64_t *run_of = g_new (int64_t, MAX (n, 1));
  int64_t u = 0;
  for (int64_t i = 0; i < n; i++)
    {
      if (i == 0 || compare_slices (&ord, order[i - 1], order[i]) != 0)
        {
          first[u] = order[i];
          counts[u] = 0;
          u++;
        }
      counts[u - 1]++;
      run_of[order[i]] = u - 1;
    }
  /* Output order: sorted runs, or runs by first occurrence. */
  g_autofree int64_t *rank_of = g_new (int64_t, MAX (u, 1));
  g_autofree int64_t *pick = g_new (int64_t, MAX (u, 1));
  for (int64_t r = 0; r < u; r++)
    pick[r] = r;
  if (!sorted)
    {
      int64_t j = 0;
      for (int64_t i = 0; i < n; i++)
        if (first[run_of[i]] == i)
          pick[j++] = run_of[i];
    }
  for (int64_t r = 0; r < u; r++)
    rank_of[pick[r]] = r;

  int64_t ydims[FB_MAX_RANK];
  int yrank = axis_attr ? x->rank : 1;
  if (axis_attr)
    memcpy (ydims, x->dims, sizeof ydims);
  ydims[axis_attr ? a : 0] = u;
  g_autoptr(FbTensor) y = _fb_interp_new (node, x->dtype, yrank, ydims, error);
  g_autoptr(FbTensor) yi = y ? _fb_interp_new (node, FB_DTYPE_INT64, 1, &u, error) : NULL;
  g_autoptr(FbTensor) yinv = yi ? _fb_interp_new (node, FB_DTYPE_INT64, 1, &n, error) : NULL;
  g_autoptr(FbTensor) yc = yinv ? _fb_interp_new (node, FB_DTYPE_INT64, 1, &u, error) : NULL;
  if (yc == NULL)
    return FALSE;
  char *dst = fb_tensor_data_mut (y);
  const char *src = fb_tensor_data (x);
  for (int64_t r = 0; r < u; r++)
    {
      int64_t s = first[pick[r]];
      for (int64_t o = 0; o < outer; o++)
        memcpy (dst + (o * u + r) * inner * es, src + (o * n + s) * inner * es, inner * es);
      ((int64_t *) fb_tensor_data_mut (yi))[r] = s;
      ((int64_t *) fb_tensor_data_mut (yc))[r] = counts[pick[r]];
    }
  for (int64_t i = 0; i < n; i++)
    ((int64_t *) fb_tensor_data_mut (yinv))[i] = rank_of[run_of[i]];
  out[0] = g_steal_pointer (&y);
  if (node->n_outputs > 1)
    out[1] = g_steal_pointer (&yi);
  if (node->n_outputs > 2)
    out[2] = g_steal_pointer (&yinv);
  if (node->n_outputs > 3)
    out[3] = g_steal_pointer (&yc);
  return TRUE;
}

/* ---- NonMaxSuppression -------------------------------------------------------------------- */

typedef struct {
  const double *scores;
} ScoreOrder;

/* Higher scores first; equal scores keep the lower box index first. */
static int
compare_scores (const void *a, const void *b, void *data)
{
  const ScoreOrder *o = data;
  int64_t ia = *(const int64_t *) a, ib = *(const int64_t *) b;
  double sa = o->scores[ia], sb = o->scores[ib];
  if (sa != sb)
    return sa > sb ? -1 : 1;
  return ia < ib ? -1 : ia > ib;
}

/* Box corners (y1, x1, y2, x2), ordered. */
static void
box_corners (const double *b, gboolean center, double *c)
{
  if (center)
    {
      /* [x_center, y_center, width, height] */
      c[0] = b[1] - b[3] / 2;
      c[2] = b[1] + b[3] / 2;
      c[1] = b[0] - b[2] / 2;
      c[3] = b[0] + b[2] / 2;
    }
  else
    {
      c[0] = fmin (b[0], b[2]);
      c[2] = fmax (b[0], b[2]);
      c[1] = fmin (b[1], b[3]);
      c[3] = fmax (b[1], b[3]);
    }
}

static double
iou (const double *a, const double *b)
{
  double ih = fmin (a[2], b[2]) - fmax (a[0], b[0]);
  double iw = fmin (a[3], b[3]) - fmax (a[1], b[1]);
  if (ih <= 0 || iw <= 0)
    return 0;
  double inter = ih * iw;
  double area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
  double uni = area_a + area_b - inter;
  return uni > 0 ? inter / uni : 0;
}

gboolean
_fb_interp_nms (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                GError **error)
{
  FbTensor *boxes = in[0], *scores = in[1];
  int64_t max_out = 0;
  double iou_thr = 0, score_thr = -INFINITY;
  gboolean has_score_thr = FALSE;
  gboolean center = fb_node_attr_int (node, "center_point_box", 0) != 0;

  if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 ||
      scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "boxes must be [batches, boxes, 4] and scores [batches, classes, boxes]");
  if (node->n_inputs > 2 && in[2] && !_fb_interp_scalar_i64 (node, in[2], "max_output_boxes_per_class",
                                                               &max_out, error))
    return FALSE;
  if (node->n_inputs > 3 && in[3] && !_fb_interp_scalar_f64 (node, in[3], "iou_threshold",
                                                               &iou_thr, error))
    return FALSE;
  if (node->n_inputs > 4 && in[4])
    {
      if (!_fb_interp_scalar_f64 (node, in[4], "score_threshold", &score_thr, error))
        return FALSE;
      has_score_thr = TRUE;
    }
  if (iou_thr < 0 || iou_thr > 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "iou_threshold %g is outside [0, 1]", iou_thr);
  int64_t B = boxes->dims[0], N = boxes->dims[1], C = scores->dims[1];
  max_out = CLAMP (max_out, 0, N);
  g_autofree double *bv = _fb_interp_read_f64 (boxes);
  g_autofree double *sv = _fb_interp_read_f64 (scores);
  g_autofree double *corners = g_new (double, MAX (B * N * 4, 1));
  for (int64_t i = 0; i < B * N; i++)
    box_corners (bv + i * 4, center, corners + i * 4);
  g_autoptr(GArray) sel = g_array_new (FALSE, FALSE, sizeof (int64_t));
  g_autofree int64_t *order = g_new (int64_t, MAX (N, 1));
  g_autofree int64_t *kept = g_new (int64_t, MAX (N, 1));
  for (int64_t b = 0; b < B; b++)
    for (int64_t c = 0; c < C && max_out > 0; c++)
      {
        const double *s = sv + (b * C + c) * N;
        int64_t m = 0, nk = 0;
        for (int64_t i = 0; i < N; i++)
          if (!has_score_thr || s[i] > score_thr)
            order[m++] = i;
        ScoreOrder so = { s };
        qsort_r (order, m, sizeof (int64_t), compare_scores, &so);
        for (int64_t i = 0; i < m && nk < max_out; i++)
          {
            const double *bi = corners + (b * N + order[i]) * 4;
            gboolean keep = TRUE;
            for (int64_t j = 0; j < nk && keep; j++)
              keep = iou (bi, corners + (b * N + kept[j]) * 4) <= iou_thr;
            if (keep)
              {
                int64_t triple[3] = { b, c, order[i] };
                kept[nk++] = order[i];
                g_array_append_vals (sel, triple, 3);
              }
          }
      }
  int64_t dims[2] = { sel->len / 3, 3 };
  g_autoptr(FbTensor) y = _fb_interp_new (node, FB_DTYPE_INT64, 2, dims, error);
  if (y == NULL)
    return FALSE;
  if (sel->len)
    memcpy (fb_tensor_data_mut (y), sel->data, sel->len * sizeof (int64_t));
  out[0] = g_steal_pointer (&y);
  return TRUE;
}
