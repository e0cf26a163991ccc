/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reductions (Reduce*, ArgMax, ArgMin, TopK), Softmax / LogSoftmax and CumSum. Floating-point sums
 * accumulate in double; integer ones in int64. */
#include "fb-interp-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Resolves the reduced axes: from the "axes" input (ReduceSum since opset 13, the others since
 * 18) or attribute. *all is TRUE when every axis is reduced, *noop when nothing is. */
static gboolean
reduce_axes (const FbNode *node, FbTensor *const *in, const FbTensor *x, gboolean *mask,
             gboolean *noop, GError **error)
{
  gboolean from_input = _fb_interp_opset (node) >= (node->op == FB_OP_REDUCE_SUM ? 13 : 18);
  g_autofree int64_t *axes = NULL;
  guint n = 0;

  *noop = FALSE;
  if (from_input)
    {
      if (node->n_inputs > 1 && in[1] != NULL &&
          !_fb_interp_int_list (node, in[1], "axes", &axes, &n, error))
        return FALSE;
    }
  else
    {
      const int64_t *a = fb_node_attr_ints (node, "axes", &n);
      axes = g_memdup2 (a, sizeof (int64_t) * MAX (n, 1));
    }
  memset (mask, 0, sizeof (gboolean) * FB_MAX_RANK);
  if (n == 0)
    {
      if (from_input && fb_node_attr_int (node, "noop_with_empty_axes", 0))
        *noop = TRUE;
      else
        for (int i = 0; i < x->rank; i++)
          mask[i] = TRUE;
      return TRUE;
    }
  for (guint i = 0; i < n; i++)
    {
      int a;
      if (!fb_axis_normalize (axes[i], x->rank, &a))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "axis %" G_GINT64_FORMAT " is out of range for rank %d", axes[i],
                                x->rank);
      if (mask[a])
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "axis %" G_GINT64_FORMAT " is given twice", axes[i]);
      mask[a] = TRUE;
    }
  return TRUE;
}

gboolean
_fb_interp_reduce (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                   GError **error)
{
  FbTensor *x = in[0];
  FbOpKind op = node->op;
  gboolean mask[FB_MAX_RANK], noop, keep = fb_node_attr_int (node, "keepdims", 1) != 0;
  /* The logarithmic reductions are computed in double whatever the input type. */
  gboolean as_float = fb_dtype_is_float (x->dtype) || op == FB_OP_REDUCE_LOG_SUM ||
                      op == FB_OP_REDUCE_LOG_SUM_EXP;
  int64_t kdims[FB_MAX_RANK], odims[FB_MAX_RANK], kstrides[FB_MAX_RANK];
  int64_t onumel, count = 1;
  int orank = 0;
  FbBcast it;
  g_autoptr(FbTensor) y = NULL;

  if (x->dtype == FB_DTYPE_BOOL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "element type bool is not supported");
  if (!reduce_axes (node, in, x, mask, &noop, error))
    return FALSE;
  if (noop)
    {
      out[0] = fb_tensor_ref (x);
      return TRUE;
    }
  for (int i = 0; i < x->rank; i++)
    {
      kdims[i] = mask[i] ? 1 : x->dims[i];
      if (mask[i])
        count *= x->dims[i];
      if (!mask[i] || keep)
        odims[orank++] = kdims[i];
    }
  y = _fb_interp_new (node, x->dtype, orank, odims, error);
  if (y == NULL)
    return FALSE;
  onumel = y->numel;

  /* Walk the input in order; each element lands on the output element with the reduced axes'
   * indices dropped (stride 0 along them). */
  _fb_strides (x->rank, kdims, kstrides);
  memset (&it, 0, sizeof it);
  it.rank = x->rank;
  it.n = 1;
  memcpy (it.dims, x->dims, sizeof it.dims);
  for (int i = 0; i < x->rank; i++)
    it.strides[0][i] = mask[i] ? 0 : kstrides[i];
  it.numel = x->numel;
  it.inner = x->rank ? x->dims[x->rank - 1] : 1;

  if (as_float)
    {
      g_autofree double *v = _fb_interp_read_f64 (x);
      g_autofree double *acc = g_new (double, MAX (onumel, 1));
      double init = op == FB_OP_REDUCE_PROD ? 1.0 : op == FB_OP_REDUCE_MAX ? -INFINITY
                  : op == FB_OP_REDUCE_MIN ? INFINITY : 0.0;
      /* LogSumExp shifts by each slice's max so that exp cannot overflow. */
      g_autofree double *shift = g_new0 (double, MAX (onumel, 1));
      for (int64_t i = 0; i < onumel; i++)
        acc[i] = op == FB_OP_REDUCE_LOG_SUM_EXP ? -INFINITY : init;
      for (int64_t row = 0; op == FB_OP_REDUCE_LOG_SUM_EXP && it.inner > 0 &&
                            row < it.numel / it.inner; row++)
        {
          int64_t o;
          int64_t s = x->rank ? it.strides[0][x->rank - 1] : 0;
          _fb_bcast_row (&it, row, &o);
          for (int64_t j = 0; j < it.inner; j++)
            acc[o + j * s] = fmax (acc[o + j * s], v[row * it.inner + j]);
        }
      for (int64_t i = 0; op == FB_OP_REDUCE_LOG_SUM_EXP && i < onumel; i++)
        {
          shift[i] = isfinite (acc[i]) ? acc[i] : 0.0;
          acc[i] = 0.0;
        }
      for (int64_t row = 0; it.inner > 0 && row < it.numel / it.inner; row++)
        {
          int64_t o;
          int64_t s = x->rank ? it.strides[0][x->rank - 1] : 0;
          const double *src = v + row * it.inner;
          _fb_bcast_row (&it, row, &o);
          for (int64_t j = 0; j < it.inner; j++)
            {
              double *a = &acc[o + j * s], e = src[j];
              switch (op)
                {
                case FB_OP_REDUCE_SUM: case FB_OP_REDUCE_MEAN: *a += e; break;
                case FB_OP_REDUCE_L2: case FB_OP_REDUCE_SUM_SQUARE: *a += e * e; break;
                case FB_OP_REDUCE_L1: *a += fabs (e); break;
                case FB_OP_REDUCE_LOG_SUM: *a += e; break;
                case FB_OP_REDUCE_LOG_SUM_EXP: *a += exp (e - shift[o + j * s]); break;
                case FB_OP_REDUCE_PROD: *a *= e; break;
                case FB_OP_REDUCE_MAX: if (e > *a || isnan (e)) *a = isnan (*a) ? *a : e; break;
                case FB_OP_REDUCE_MIN: if (e < *a || isnan (e)) *a = isnan (*a) ? *a : e; break;
                default: g_assert_not_reached ();
                }
            }
        }
      for (int64_t i = 0; i < onumel; i++)
        {
          if (op == FB_OP_REDUCE_MEAN)
            acc[i] /= (double) count;
          else if (op == FB_OP_REDUCE_L2)
            acc[i] = sqrt (acc[i]);
          else if (op == FB_OP_REDUCE_LOG_SUM)
            acc[i] = log (acc[i]);
          else if (op == FB_OP_REDUCE_LOG_SUM_EXP)
            acc[i] = log (acc[i]) + shift[i];
        }
      _fb_interp_write_f64 (y, acc);
    }
  else
    {
      g_autofree int64_t *v = _fb_interp_read_i64 (x);
      g_autofree int64_t *acc = g_new (int64_t, MAX (onumel, 1));
      int64_t init = op == FB_OP_REDUCE_PROD ? 1 : op == FB_OP_REDUCE_MAX ? G_MININT64
                   : op == FB_OP_REDUCE_MIN ? G_MAXINT64 : 0;
      for (int64_t i = 0; i < onumel; i++)
        acc[i] = init;
      for (int64_t row = 0; it.inner > 0 && row < it.numel / it.inner; row++)
        {
          int64_t o;
          int64_t s = x->rank ? it.strides[0][x->rank - 1] : 0;
          const int64_t *src = v + row * it.inner;
          _fb_bcast_row (&it, row, &o);
          for (int64_t j = 0; j < it.inner; j++)
            {
              int64_t *a = &acc[o + j * s], e = src[j];
              switch (op)
                {
                case FB_OP_REDUCE_SUM: case FB_OP_REDUCE_MEAN:
                  *a = (int64_t) ((uint64_t) *a + (uint64_t) e); break;
                case FB_OP_REDUCE_L2: case FB_OP_REDUCE_SUM_SQUARE:
                  *a = (int64_t) ((uint64_t) *a + (uint64_t) e * (uint64_t) e); break;
                case FB_OP_REDUCE_L1:
                  *a = (int64_t) ((uint64_t) *a + (e < 0 ? 0 - (uint64_t) e : (uint64_t) e)); break;
                case FB_OP_REDUCE_PROD: *a = (int64_t) ((uint64_t) *a * (uint64_t) e); break;
                case FB_OP_REDUCE_MAX: if (e > *a) *a = e; break;
                case FB_OP_REDUCE_MIN: if (e < *a) *a = e; break;
                default: g_assert_not_reached ();
                }
            }
        }
      for (int64_t i = 0; i < onumel; i++)
        {
          if (op == FB_OP_REDUCE_MEAN)
            acc[i] = count ? acc[i] / count : 0;
          else if (op == FB_OP_REDUCE_L2)
            acc[i] = (int64_t) sqrt ((double) acc[i]);
        }
      _fb_interp_write_i64 (y, acc);
    }
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

/* The shape split around one axis: outer x n x inner. */
static gboolean
split_axis (const FbNode *node, const FbTensor *x, int64_t axis, int *a, int64_t *outer,
            int64_t *n, int64_t *inner, GError **error)
{
  if (!fb_axis_normalize (axis, x->rank, a))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "axis %" G_GINT64_FORMAT " is out of range for rank %d", axis, x->rank);
  *outer = _fb_interp_prod (x->dims, 0, *a);
  *n = x->dims[*a];
  *inner = _fb_interp_prod (x->dims, *a + 1, x->rank);
  return TRUE;
}

gboolean
_fb_interp_argmax (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                   GError **error)
{
  FbTensor *x = in[0];
  gboolean keep = fb_node_attr_int (node, "keepdims", 1) != 0;
  gboolean last = fb_node_attr_int (node, "select_last_index", 0) != 0;
  gboolean is_min = node->op == FB_OP_ARGMIN;
  int64_t outer = 0, n = 0, inner = 0, dims[FB_MAX_RANK];
  int a, rank = 0;
  g_autofree double *v = NULL;
  FbTensor *y;
  int64_t *d;

  if (!split_axis (node, x, fb_node_attr_int (node, "axis", 0), &a, &outer, &n, &inner, error))
    return FALSE;
  if (n == 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "the reduced axis is empty");
  for (int i = 0; i < x->rank; i++)
    if (i != a || keep)
      dims[rank++] = i == a ? 1 : x->dims[i];
  y = _fb_interp_new (node, FB_DTYPE_INT64, rank, dims, error);
  if (y == NULL)
    return FALSE;
  v = _fb_interp_read_f64 (x);
  d = fb_tensor_data_mut (y);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      {
        const double *p = v + o * n * inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < n; k++)
          {
            double c = p[k * inner], b = p[best * inner];
            if ((is_min ? c < b : c > b) || (last && c == b))
              best = k;
          }
        d[o * inner + i] = best;
      }
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_softmax (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                    GError **error)
{
  FbTensor *x = in[0];
  gboolean log_form = node->op == FB_OP_LOG_SOFTMAX;
  int64_t outer = 0, n = 0, inner = 0;
  int a;
  g_autofree double *v = NULL;
  FbTensor *y;

  if (!_fb_interp_need_float (node, x, error))
    return FALSE;
  if (_fb_interp_opset (node) < 13)
    {
      /* Before opset 13 the input is seen as 2-D, [prod(dims[:axis]), prod(dims[axis:])]. */
      if (!fb_axis_normalize (fb_node_attr_int (node, "axis", 1), x->rank, &a))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "axis is out of range for rank %d", x->rank);
      outer = _fb_interp_prod (x->dims, 0, a);
      n = _fb_interp_prod (x->dims, a, x->rank);
      inner = 1;
    }
  else if (!split_axis (node, x, fb_node_attr_int (node, "axis", -1), &a, &outer, &n, &inner,
                        error))
    return FALSE;
  y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  v = _fb_interp_read_f64 (x);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      {
        double *p = v + o * n * inner + i, max = -INFINITY, sum = 0;
        for (int64_t k = 0; k < n; k++)
          max = fmax (max, p[k * inner]);
        for (int64_t k = 0; k < n; k++)
          sum += exp (p[k * inner] - max);
        for (int64_t k = 0; k < n; k++)
          p[k * inner] = log_form ? p[k * inner] - max - log (sum) : exp (p[k * inner] - max) / sum;
      }
  _fb_interp_write_f64 (y, v);
  out[0] = y;
  return TRUE;
}

typedef struct {
  const double *v;
  int64_t       stride;
  gboolean      largest;
} TopKOrder;

/* NaN counts as the largest value; equal values keep the lower index first. */
static int
topk_compare (const void *pa, const void *pb, void *data)
{
  const TopKOrder *ord = data;
  int64_t ia = *(const int64_t *) pa, ib = *(const int64_t *) pb;
  double a = ord->v[ia * ord->stride], b = ord->v[ib * ord->stride];
  int c;

  if (isnan (a) || isnan (b))
    c = isnan (a) && isnan (b) ? 0 : isnan (a) ? 1 : -1;
  else
    c = a < b ? -1 : a > b ? 1 : 0;
  if (ord->largest)
    c = -c;
  return c != 0 ? c : (ia < ib ? -1 : ia > ib ? 1 : 0);
}

gboolean
_fb_interp_topk (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                 GError **error)
{
  FbTensor *x = in[0];
  int64_t k, outer = 0, n = 0, inner = 0, dims[FB_MAX_RANK];
  int a;
  TopKOrder ord;
  g_autofree double *v = NULL;
  g_autofree int64_t *order = NULL;
  g_autoptr(FbTensor) values = NULL;
  g_autoptr(FbTensor) indices = NULL;
  int64_t *idx;
  g_autofree double *vals = NULL;

  if (_fb_interp_opset (node) < 10)
    k = fb_node_attr_int (node, "k", -1);
  else if (!_fb_interp_need (node, in, 1, error) ||
           !_fb_interp_scalar_i64 (node, in[1], "K", &k, error))
    return FALSE;
  if (!split_axis (node, x, fb_node_attr_int (node, "axis", -1), &a, &outer, &n, &inner, error))
    return FALSE;
  if (k < 0 || k > n)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "k = %" G_GINT64_FORMAT " is outside 0..%" G_GINT64_FORMAT, k, n);
  memcpy (dims, x->dims, sizeof dims);
  dims[a] = k;
  values = _fb_interp_new (node, x->dtype, x->rank, dims, error);
  indices = values ? _fb_interp_new (node, FB_DTYPE_INT64, x->rank, dims, error) : NULL;
  if (indices == NULL)
    return FALSE;
  v = _fb_interp_read_f64 (x);
  order = g_new (int64_t, MAX (n, 1));
  vals = g_new (double, MAX (values->numel, 1));
  idx = fb_tensor_data_mut (indices);
  ord.stride = inner;
  ord.largest = fb_node_attr_int (node, "largest", 1) != 0;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      {
        ord.v = v + o * n * inner + i;
        for (int64_t j = 0; j < n; j++)
          order[j] = j;
        /* Always sorted: "sorted=0" leaves the order open, and sorted is one valid order. */
        qsort_r (order, n, sizeof (int64_t), topk_compare, &ord);
        for (int64_t j = 0; j < k; j++)
          {
            int64_t at = (o * k + j) * inner + i;
            idx[at] = order[j];
            vals[at] = ord.v[order[j] * inner];
          }
      }
  if (_fb_interp_is_int (x->dtype))
    {
      /* Integers are copied through int64 so that large values stay exact. */
      g_autofree int64_t *iv = _fb_interp_read_i64 (x);
      g_autofree int64_t *ov = g_new (int64_t, MAX (values->numel, 1));
      for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < k; j++)
          for (int64_t i = 0; i < inner; i++)
            {
              int64_t at = (o * k + j) * inner + i;
              ov[at] = iv[(o * n + idx[at]) * inner + i];
            }
      _fb_interp_write_i64 (values, ov);
    }
  else
    _fb_interp_write_f64 (values, vals);
  out[0] = g_steal_pointer (&values);
  out[1] = g_steal_pointer (&indices);
  return TRUE;
}

gboolean
_fb_interp_cumsum (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                   GError **error)
{
  FbTensor *x = in[0];
  gboolean exclusive = fb_node_attr_int (node, "exclusive", 0) != 0;
  gboolean reverse = fb_node_attr_int (node, "reverse", 0) != 0;
  int64_t axis, outer = 0, n = 0, inner = 0;
  int a;
  FbTensor *y;

  if (!_fb_interp_scalar_i64 (node, in[1], "axis", &axis, error) ||
      !split_axis (node, x, axis, &a, &outer, &n, &inner, error))
    return FALSE;
  y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  if (fb_dtype_is_float (x->dtype))
    {
      g_autofree double *v = _fb_interp_read_f64 (x);
      g_autofree double *r = g_new (double, MAX (x->numel, 1));
      for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++)
          {
            double acc = 0;
            for (int64_t s = 0; s < n; s++)
              {
                int64_t k = reverse ? n - 1 - s : s;
                int64_t at = (o * n + k) * inner + i;
                if (exclusive) { r[at] = acc; acc += v[at]; }
                else           { acc += v[at]; r[at] = acc; }
              }
          }
      _fb_interp_write_f64 (y, r);
    }
  else
    {
      g_autofree int64_t *v = _fb_interp_read_i64 (x);
      g_autofree int64_t *r = g_new (int64_t, MAX (x->numel, 1));
      for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++)
          {
            uint64_t acc = 0;
            for (int64_t s = 0; s < n; s++)
              {
                int64_t k = reverse ? n - 1 - s : s;
                int64_t at = (o * n + k) * inner + i;
                if (exclusive) { r[at] = (int64_t) acc; acc += (uint64_t) v[at]; }
                else           { acc += (uint64_t) v[at]; r[at] = (int64_t) acc; }
              }
          }
      _fb_interp_write_i64 (y, r);
    }
  out[0] = y;
  return TRUE;
}
