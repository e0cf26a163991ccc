/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Pools (MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool) and normalizations
 * (BatchNormalization, InstanceNormalization, LayerNormalization, LRN,
 * MeanVarianceNormalization). Statistics accumulate in double. Pools marked channels-last run between two transposes. */
#include "fb-interp-private.h"

#include <math.h>
#include <string.h>

/* Runs an NCHW kernel on a possibly NHWC node: transposes in and every output back. MaxPool's
 * indices keep numbering the channels-first input, so that transposing the indices tensor back
 * gives exactly what the channels-first node gives. */
typedef gboolean (*NchwFn) (const FbNode *node, const FbTensor *x, FbTensor **out, GError **error);

static gboolean
with_layout (const FbNode *node, const FbTensor *x, FbTensor **out, NchwFn fn, GError **error)
{
  g_autoptr(FbTensor) xc = NULL;
  FbTensor *tmp[2] = { NULL, NULL };
  gboolean ok;

  if (!_fb_interp_is_nhwc (node))
    return fn (node, x, out, error);
  if (x->rank < 3)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "a channels-last input needs rank 3 or more, it has %d", x->rank);
  xc = _fb_interp_channels (node, x, TRUE, error);
  if (xc == NULL || !fn (node, xc, tmp, error))
    return FALSE;
  ok = TRUE;
  for (guint k = 0; k < 2; k++)
    {
      if (tmp[k] == NULL)
        continue;
      if (ok)
        {
          out[k] = _fb_interp_channels (node, tmp[k], FALSE, error);
          ok = out[k] != NULL;
        }
      fb_tensor_unref (tmp[k]);
    }
  return ok;
}

static gboolean
pool_nchw (const FbNode *node, const FbTensor *x, FbTensor **out, GError **error)
{
  gboolean is_max = node->op == FB_OP_MAX_POOL;
  gboolean ceil_mode = fb_node_attr_int (node, "ceil_mode", 0) != 0;
  gboolean include_pad = fb_node_attr_int (node, "count_include_pad", 0) != 0;
  gboolean col_major = fb_node_attr_int (node, "storage_order", 0) != 0;
  gboolean want_idx = is_max && node->n_outputs > 1;
  int64_t N, C, IP, OP, dims[FB_MAX_RANK];
  FbWindow w;
  g_autofree double *xv = NULL, *yv = NULL;
  g_autoptr(FbTensor) y = NULL;
  g_autoptr(FbTensor) idx = NULL;
  int64_t *iv = NULL;

  if (x->rank < 3)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the input has rank %d, at least 3 is needed", x->rank);
  if (!is_max && !_fb_interp_need_float (node, x, error))
    return FALSE;
  if (x->dtype == FB_DTYPE_BOOL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "element type bool is not supported");
  if (!_fb_interp_window (node, x, NULL, ceil_mode, &w, error))
    return FALSE;
  N = x->dims[0];
  C = x->dims[1];
  dims[0] = N;
  dims[1] = C;
  for (int i = 0; i < w.n; i++)
    dims[2 + i] = w.out[3 - w.n + i];
  y = _fb_interp_new (node, x->dtype, x->rank, dims, error);
  if (y == NULL)
    return FALSE;
  if (want_idx)
    {
      idx = _fb_interp_new (node, FB_DTYPE_INT64, x->rank, dims, error);
      if (idx == NULL)
        return FALSE;
      iv = fb_tensor_data_mut (idx);
    }
  xv = _fb_interp_read_f64 (x);
  yv = g_new (double, MAX (y->numel, 1));
  IP = w.in[0] * w.in[1] * w.in[2];
  OP = w.out[0] * w.out[1] * w.out[2];

  for (int64_t nc = 0; nc < N * C; nc++)
    {
      const double *ip = xv + nc * IP;
      for (int64_t od = 0; od < w.out[0]; od++)
        for (int64_t oh = 0; oh < w.out[1]; oh++)
          for (int64_t ow = 0; ow < w.out[2]; ow++)
            {
              int64_t o = nc * OP + (od * w.out[1] + oh) * w.out[2] + ow;
              int64_t start[3] = { od * w.stride[0] - w.pad[0], oh * w.stride[1] - w.pad[1],
                                   ow * w.stride[2] - w.pad[2] };
              double best = -INFINITY, sum = 0;
              int64_t arg = -1, count = 0, padded = 0;
              for (int64_t kd = 0; kd < w.k[0]; kd++)
                for (int64_t kh = 0; kh < w.k[1]; kh++)
                  for (int64_t kw = 0; kw < w.k[2]; kw++)
                    {
                      int64_t id = start[0] + kd * w.dil[0];
                      int64_t ih = start[1] + kh * w.dil[1];
                      int64_t iw = start[2] + kw * w.dil[2];
                      /* Taps inside the declared padding count for count_include_pad; taps
                       * past it (ceil_mode's extra windows) never do. */
                      if (id < w.in[0] + w.pad_end[0] && ih < w.in[1] + w.pad_end[1] &&
                          iw < w.in[2] + w.pad_end[2])
                        padded++;
                      if (id < 0 || ih < 0 || iw < 0 || id >= w.in[0] || ih >= w.in[1] ||
                          iw >= w.in[2])
                        continue;
                      int64_t at = (id * w.in[1] + ih) * w.in[2] + iw;
                      double v = ip[at];
                      count++;
                      sum += v;
                      if (arg < 0 || v > best)
                        {
                          best = v;
                          arg = col_major ? id + w.in[0] * (ih + w.in[1] * iw) : at;
                        }
                    }
              if (is_max)
                {
                  yv[o] = best;
                  if (iv)
                    iv[o] = nc * IP + MAX (arg, 0);
                }
              else
                yv[o] = sum / (double) (include_pad ? padded : count);
            }
    }
  _fb_interp_write_f64 (y, yv);
  out[0] = g_steal_pointer (&y);
  if (want_idx)
    out[1] = g_steal_pointer (&idx);
  return TRUE;
}

gboolean
_fb_interp_pool (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                 GError **error)
{
  return with_layout (node, in[0], out, pool_nchw, error);
}

static gboolean
global_pool_nchw (const FbNode *node, const FbTensor *x, FbTensor **out, GError **error)
{
  gboolean is_max = node->op == FB_OP_GLOBAL_MAX_POOL;
  int64_t dims[FB_MAX_RANK], NC, S;
  g_autofree double *xv = NULL, *yv = NULL;
  FbTensor *y;

  if (x->rank < 2)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the input has rank %d, at least 2 is needed", x->rank);
  if (!_fb_interp_need_float (node, x, error))
    return FALSE;
  for (int i = 0; i < x->rank; i++)
    dims[i] = i < 2 ? x->dims[i] : 1;
  y = _fb_interp_new (node, x->dtype, x->rank, dims, error);
  if (y == NULL)
    return FALSE;
  NC = x->dims[0] * x->dims[1];
  S = _fb_interp_prod (x->dims, 2, x->rank);
  xv = _fb_interp_read_f64 (x);
  yv = g_new (double, MAX (NC, 1));
  for (int64_t i = 0; i < NC; i++)
    {
      const double *p = xv + i * S;
      double acc = is_max ? -INFINITY : 0.0;
      for (int64_t s = 0; s < S; s++)
        acc = is_max ? (p[s] > acc || isnan (p[s]) ? p[s] : acc) : acc + p[s];
      yv[i] = is_max ? acc : acc / (double) S;
    }
  _fb_interp_write_f64 (y, yv);
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_global_pool (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                        FbTensor **out, GError **error)
{
  return with_layout (node, in[0], out, global_pool_nchw, error);
}

/* Per-channel parameter of BatchNormalization / InstanceNormalization, as double. */
static double *
channel_param (const FbNode *node, const FbTensor *t, const char *what, int64_t want,
               int64_t alt, GError **error)
{
  if (t->numel != want && t->numel != alt)
    {
      _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                       "%s has %" G_GINT64_FORMAT " elements for %" G_GINT64_FORMAT " channels",
                       what, t->numel, want);
      return NULL;
    }
  return _fb_interp_read_f64 (t);
}

gboolean
_fb_interp_batch_norm (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                       GError **error)
{
  FbTensor *x = in[0];
  int opset = _fb_interp_opset (node);
  double eps = fb_node_attr_float (node, "epsilon", 1e-5f);
  double momentum = fb_node_attr_float (node, "momentum", 0.9f);
  gboolean training, per_element;
  int64_t N, C, S;
  g_autofree double *xv = NULL, *sc = NULL, *bi = NULL, *mu = NULL, *var = NULL;
  g_autofree double *bm = NULL, *bv = NULL;
  g_autoptr(FbTensor) y = NULL;
  const char *names[4] = { "scale", "B", "mean", "var" };
  double **params[4] = { &sc, &bi, &mu, &var };

  if (x->rank < 2)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the input has rank %d, at least 2 is needed", x->rank);
  if (!_fb_interp_need_float (node, x, error))
    return FALSE;
  /* Training mode is an attribute since opset 14; before, asking for the statistics outputs
   * meant training. */
  training = opset >= 14 ? fb_node_attr_int (node, "training_mode", 0) != 0
                         : (node->n_outputs > 1 && node->outputs[1] != NULL);
  N = x->dims[0];
  C = x->dims[1];
  S = _fb_interp_prod (x->dims, 2, x->rank);
  /* spatial=0 (before opset 9) gives every element of a sample its own parameters. */
  per_element = opset < 9 && fb_node_attr_int (node, "spatial", 1) == 0;
  for (int k = 0; k < 4; k++)
    {
      *params[k] = channel_param (node, in[1 + k], names[k], per_element ? C * S : C,
                                  per_element ? C * S : C, error);
      if (*params[k] == NULL)
        return FALSE;
    }
  if (per_element && training)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "training mode with spatial=0 is not supported");
  xv = _fb_interp_read_f64 (x);
  if (training)
    {
      bm = g_new0 (double, MAX (C, 1));
      bv = g_new0 (double, MAX (C, 1));
      for (int64_t c = 0; c < C; c++)
        {
          double sum = 0, sq = 0, cnt = (double) (N * S);
          for (int64_t n = 0; n < N; n++)
            for (int64_t s = 0; s < S; s++)
              sum += xv[(n * C + c) * S + s];
          bm[c] = cnt > 0 ? sum / cnt : 0;
          for (int64_t n = 0; n < N; n++)
            for (int64_t s = 0; s < S; s++)
              {
                double d = xv[(n * C + c) * S + s] - bm[c];
                sq += d * d;
              }
          bv[c] = cnt > 0 ? sq / cnt : 0;
        }
    }
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t s = 0; s < S; s++)
        {
          int64_t p = per_element ? c * S + s : c;
          double m = training ? bm[c] : mu[p], v = training ? bv[c] : var[p];
          double *e = &xv[(n * C + c) * S + s];
          *e = (*e - m) / sqrt (v + eps) * sc[p] + bi[p];
        }
  y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  _fb_interp_write_f64 (y, xv);
  for (guint k = 1; k < node->n_outputs && k < 3; k++)
    {
      FbTensor *src = in[k == 1 ? 3 : 4];
      double *stat = k == 1 ? mu : var;
      double *batch = k == 1 ? bm : bv;
      FbTensor *t = _fb_interp_new (node, src->dtype, src->rank, src->dims, error);
      if (t == NULL)
        return FALSE;
      for (int64_t c = 0; c < C; c++)
        stat[c] = training ? stat[c] * momentum + batch[c] * (1 - momentum) : stat[c];
      _fb_interp_write_f64 (t, stat);
      out[k] = t;
    }
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_instance_norm (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                          FbTensor **out, GError **error)
{
  FbTensor *x = in[0];
  double eps = fb_node_attr_float (node, "epsilon", 1e-5f);
  int64_t N, C, S;
  g_autofree double *xv = NULL, *sc = NULL, *bi = NULL;
  FbTensor *y;

  if (x->rank < 3)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the input has rank %d, at least 3 is needed", x->rank);
  if (!_fb_interp_need_float (node, x, error))
    return FALSE;
  N = x->dims[0];
  C = x->dims[1];
  S = _fb_interp_prod (x->dims, 2, x->rank);
  sc = channel_param (node, in[1], "scale", C, C, error);
  bi = sc ? channel_param (node, in[2], "B", C, C, error) : NULL;
  if (bi == NULL)
    return FALSE;
  xv = _fb_interp_read_f64 (x);
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      {
        double *p = xv + (n * C + c) * S, mean = 0, var = 0;
        for (int64_t s = 0; s < S; s++)
          mean += p[s];
        mean /= (double) MAX (S, 1);
        for (int64_t s = 0; s < S; s++)
          var += (p[s] - mean) * (p[s] - mean);
        var /= (double) MAX (S, 1);
        for (int64_t s = 0; s < S; s++)
          p[s] = (p[s] - mean) / sqrt (var + eps) * sc[c] + bi[c];
      }
  y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  _fb_interp_write_f64 (y, xv);
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_layer_norm (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                       GError **error)
{
  FbTensor *x = in[0], *scale = in[1], *bias = node->n_inputs > 2 ? in[2] : NULL;
  double eps = fb_node_attr_float (node, "epsilon", 1e-5f);
  int64_t stash = fb_node_attr_int (node, "stash_type", FB_DTYPE_FLOAT32);
  FbDType stat_type = fb_dtype_is_float ((FbDType) stash) ? (FbDType) stash : FB_DTYPE_FLOAT32;
  int64_t outer, G, sdims[FB_MAX_RANK];
  int a;
  const FbTensor *ops[3];
  FbBcast bc;
  g_autofree double *xv = NULL, *sv = NULL, *bv = NULL, *mean = NULL, *rstd = NULL;
  g_autoptr(FbTensor) y = NULL;

  if (!_fb_interp_need_float (node, x, error))
    return FALSE;
  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", -1), x->rank, &a))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "axis is out of range for rank %d", x->rank);
  outer = _fb_interp_prod (x->dims, 0, a);
  G = _fb_interp_prod (x->dims, a, x->rank);
  /* Scale and bias broadcast onto the normalized axes; over the whole input that is the same
   * as broadcasting onto x, provided they do not reach into the leading axes. */
  ops[0] = x;
  ops[1] = scale;
  ops[2] = bias ? bias : scale;
  if (scale->rank > x->rank - a || (bias && bias->rank > x->rank - a))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "scale and bias must cover at most the normalized axes");
  if (!_fb_bcast_init (&bc, node, 3, ops, error))
    return FALSE;
  if (bc.rank != x->rank || bc.numel != x->numel)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "scale and bias do not broadcast to the input");
  xv = _fb_interp_read_f64 (x);
  sv = _fb_interp_read_f64 (scale);
  bv = bias ? _fb_interp_read_f64 (bias) : NULL;
  mean = g_new0 (double, MAX (outer, 1));
  rstd = g_new0 (double, MAX (outer, 1));
  for (int64_t o = 0; o < outer; o++)
    {
      const double *p = xv + o * G;
      double m = 0, v = 0;
      for (int64_t i = 0; i < G; i++)
        m += p[i];
      m /= (double) MAX (G, 1);
      for (int64_t i = 0; i < G; i++)
        v += (p[i] - m) * (p[i] - m);
      v /= (double) MAX (G, 1);
      mean[o] = m;
      rstd[o] = 1.0 / sqrt (v + eps);
    }
  for (int64_t row = 0; bc.inner > 0 && row < bc.numel / bc.inner; row++)
    {
      int64_t off[3], s1 = bc.rank ? bc.strides[1][bc.rank - 1] : 0;
      int64_t s2 = bc.rank ? bc.strides[2][bc.rank - 1] : 0;
      _fb_bcast_row (&bc, row, off);
      for (int64_t j = 0; j < bc.inner; j++)
        {
          int64_t i = row * bc.inner + j, o = G ? i / G : 0;
          double e = (xv[i] - mean[o]) * rstd[o] * sv[off[1] + j * s1];
          xv[i] = bv ? e + bv[off[2] + j * s2] : e;
        }
    }
  y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  _fb_interp_write_f64 (y, xv);
  for (int i = 0; i < x->rank; i++)
    sdims[i] = i < a ? x->dims[i] : 1;
  for (guint k = 1; k < node->n_outputs && k < 3; k++)
    {
      FbTensor *t = _fb_interp_new (node, stat_type, x->rank, sdims, error);
      if (t == NULL)
        return FALSE;
      _fb_interp_write_f64 (t, k == 1 ? mean : rstd);
      out[k] = t;
    }
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_lrn (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                GError **error)
{
  FbTensor *x = in[0];
  int64_t size = fb_node_attr_int (node, "size", 0);
  double alpha = fb_node_attr_float (node, "alpha", 1e-4f);
  double beta = fb_node_attr_float (node, "beta", 0.75f);
  double bias = fb_node_attr_float (node, "bias", 1.0f);
  int64_t N, C, S, lo, hi;
  g_autofree double *xv = NULL, *yv = NULL;
  FbTensor *y;

  if (!_fb_interp_need_float (node, x, error))
    return FALSE;
  if (x->rank < 2 || size < 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "needs an input of rank 2 or more and a positive size");
  N = x->dims[0];
  C = x->dims[1];
  S = _fb_interp_prod (x->dims, 2, x->rank);
  lo = (size - 1) / 2;
  hi = size - 1 - lo;   /* ceil((size - 1) / 2) */
  xv = _fb_interp_read_f64 (x);
  yv = g_new (double, MAX (x->numel, 1));
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t s = 0; s < S; s++)
        {
          double sq = 0;
          for (int64_t k = MAX (0, c - lo); k <= MIN (C - 1, c + hi); k++)
            {
              double e = xv[(n * C + k) * S + s];
              sq += e * e;
            }
          yv[(n * C + c) * S + s] = xv[(n * C + c) * S + s] / pow (bias + alpha / size * sq, beta);
        }
  y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  _fb_interp_write_f64 (y, yv);
  out[0] = y;
  return TRUE;
}

/* MeanVarianceNormalization: (X - mean) / (std + 1e-9) over the axes (default [0, 2, 3]), as
 * ONNX's function body defines it. The variance is the mean square deviation (two passes),
 * which equals the body's E[X²] - E[X]² without its cancellation. */
gboolean
_fb_interp_mvn (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                GError **error)
{
  static const int64_t default_axes[] = { 0, 2, 3 };
  FbTensor *x = in[0];
  guint n_axes;
  const int64_t *axes = fb_node_attr_ints (node, "axes", &n_axes);
  gboolean reduced[FB_MAX_RANK] = { FALSE };
  int64_t kept_dims[FB_MAX_RANK], kept_strides[FB_MAX_RANK], groups = 1, per_group = 1;
  g_autofree double *xv = NULL, *mean = NULL, *var = NULL;
  g_autofree int64_t *group = NULL;
  FbTensor *y;

  if (!_fb_interp_need_float (node, x, error))
    return FALSE;
  if (axes == NULL)
    {
      axes = default_axes;
      n_axes = G_N_ELEMENTS (default_axes);
    }
  for (guint k = 0; k < n_axes; k++)
    {
      int a;
      if (!fb_axis_normalize (axes[k], x->rank, &a) || reduced[a])
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "axes entry %" G_GINT64_FORMAT " is out of range for rank %d or "
                                "repeated", axes[k], x->rank);
      reduced[a] = TRUE;
    }
  for (int d = 0; d < x->rank; d++)
    {
      kept_dims[d] = reduced[d] ? 1 : x->dims[d];
      groups *= kept_dims[d];
      per_group *= reduced[d] ? x->dims[d] : 1;
    }
  _fb_strides (x->rank, kept_dims, kept_strides);
  xv = _fb_interp_read_f64 (x);
  group = _fb_interp_alloc (node, MAX (x->numel, 1), sizeof (int64_t), error);
  mean = group ? _fb_interp_alloc (node, MAX (groups, 1), sizeof (double), error) : NULL;
  var = mean ? _fb_interp_alloc (node, MAX (groups, 1), sizeof (double), error) : NULL;
  if (var == NULL)
    return FALSE;
  /* Each element's group: its coordinates on the kept axes. */
  for (int64_t i = 0; i < x->numel; i++)
    {
      int64_t r = i, g = 0;
      for (int d = x->rank - 1; d >= 0; d--)
        {
          if (!reduced[d])
            g += (r % x->dims[d]) * kept_strides[d];
          r /= x->dims[d];
        }
      group[i] = g;
      mean[g] += xv[i];
    }
  for (int64_t g = 0; g < groups; g++)
    mean[g] /= (double) MAX (per_group, 1);
  for (int64_t i = 0; i < x->numel; i++)
    var[group[i]] += (xv[i] - mean[group[i]]) * (xv[i] - mean[group[i]]);
  for (int64_t g = 0; g < groups; g++)
    var[g] = sqrt (var[g] / (double) MAX (per_group, 1)) + 1e-9;
  for (int64_t i = 0; i < x->numel; i++)
    xv[i] = (xv[i] - mean[group[i]]) / var[group[i]];
  y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  _fb_interp_write_f64 (y, xv);
  out[0] = y;
  return TRUE;
}
