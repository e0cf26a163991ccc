/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Conv and ConvTranspose as direct loops (no im2col buffer): for every (output channel, input
 * channel, kernel tap) the innermost loop runs along a contiguous output row, so it vectorizes.
 * Values are converted to double once per call and accumulated in double. Also the window
 * geometry that the pools share, and MaxUnpool, which undoes a MaxPool through its indices. */
#include "fb-interp-private.h"

#include <string.h>

static int64_t
div_floor (int64_t a, int64_t b)
{
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static int64_t
div_ceil (int64_t a, int64_t b)
{
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

gboolean
_fb_interp_is_nhwc (const FbNode *node)
{
  return g_strcmp0 (fb_node_attr_string (node, FB_ATTR_LAYOUT, "nchw"), "nhwc") == 0;
}

gboolean
_fb_interp_check_window (const FbNode *node, GError **error)
{
  const char *pad = fb_node_attr_string (node, "auto_pad", "NOTSET");
  const char *layout = fb_node_attr_string (node, FB_ATTR_LAYOUT, "nchw");

  if (strcmp (pad, "NOTSET") != 0 && strcmp (pad, "VALID") != 0 &&
      strcmp (pad, "SAME_UPPER") != 0 && strcmp (pad, "SAME_LOWER") != 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED, "auto_pad '%s' is unknown",
                            pad);
  if (strcmp (layout, "nchw") != 0 && strcmp (layout, "nhwc") != 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "layout '%s' is not nchw or nhwc", layout);
  if ((node->op == FB_OP_MAX_POOL || node->op == FB_OP_AVERAGE_POOL) &&
      fb_node_attr (node, "kernel_shape") == NULL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "the kernel_shape attribute is required");
  return TRUE;
}

FbTensor *
_fb_interp_channels (const FbNode *node, const FbTensor *x, gboolean to_first, GError **error)
{
  int perm[FB_MAX_RANK];
  int r = x->rank;

  perm[0] = 0;
  if (to_first)
    {
      perm[1] = r - 1;
      for (int i = 2; i < r; i++)
        perm[i] = i - 1;
    }
  else
    {
      for (int i = 1; i < r - 1; i++)
        perm[i] = i + 1;
      perm[r - 1] = 1;
    }
  return _fb_interp_permute (node, x, perm, error);
}

/* An attribute list of n entries, or every entry fallback when absent. */
static gboolean
attr_list (const FbNode *node, const char *name, guint n, int64_t fallback, int64_t *out,
           GError **error)
{
  guint len;
  const int64_t *v = fb_node_attr_ints (node, name, &len);

  if (v == NULL)
    {
      for (guint i = 0; i < n; i++)
        out[i] = fallback;
      return TRUE;
    }
  if (len != n)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "%s has %u entries, %u expected", name, len, n);
  memcpy (out, v, sizeof (int64_t) * n);
  return TRUE;
}

/* Spatial parameters in the node's own rank n; the callers lift them to 3-D. */
typedef struct {
  int     n;
  int64_t in[3], k[3], stride[3], dil[3], pads[6];
  const char *auto_pad;
} Params;

static gboolean
read_params (const FbNode *node, const FbTensor *x, const int64_t *kernel, Params *p,
             GError **error)
{
  p->n = x->rank - 2;
  if (p->n < 1 || p->n > 3)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "input of rank %d: only 1 to 3 spatial axes are supported", x->rank);
  for (int i = 0; i < p->n; i++)
    p->in[i] = x->dims[2 + i];
  if (kernel != NULL)
    {
      guint len;
      const int64_t *ks = fb_node_attr_ints (node, "kernel_shape", &len);
      if (ks != NULL && (len != (guint) p->n || memcmp (ks, kernel, sizeof (int64_t) * p->n) != 0))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "kernel_shape does not match the weights");
      memcpy (p->k, kernel, sizeof (int64_t) * p->n);
    }
  else
    {
      guint len;
      const int64_t *ks = fb_node_attr_ints (node, "kernel_shape", &len);
      if (ks == NULL || len != (guint) p->n)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "kernel_shape must have %d entries", p->n);
      memcpy (p->k, ks, sizeof (int64_t) * p->n);
    }
  if (!attr_list (node, "strides", p->n, 1, p->stride, error) ||
      !attr_list (node, "dilations", p->n, 1, p->dil, error) ||
      !attr_list (node, "pads", 2 * p->n, 0, p->pads, error))
    return FALSE;
  for (int i = 0; i < p->n; i++)
    if (p->k[i] < 1 || p->stride[i] < 1 || p->dil[i] < 1 || p->pads[i] < 0 ||
        p->pads[p->n + i] < 0)
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                              "kernel, strides and dilations must be positive and pads not "
                              "negative (spatial axis %d)", i);
  p->auto_pad = fb_node_attr_string (node, "auto_pad", "NOTSET");
  return TRUE;
}

/* Lifts n-D parameters to 3-D (leading axes of extent 1). */
static void
lift (const Params *p, FbWindow *w)
{
  int off = 3 - p->n;

  w->n = p->n;
  for (int i = 0; i < 3; i++)
    {
      w->in[i] = w->out[i] = w->k[i] = w->stride[i] = w->dil[i] = 1;
      w->pad[i] = w->pad_end[i] = 0;
    }
  for (int i = 0; i < p->n; i++)
    {
      w->in[off + i] = p->in[i];
      w->k[off + i] = p->k[i];
      w->stride[off + i] = p->stride[i];
      w->dil[off + i] = p->dil[i];
      w->pad[off + i] = p->pads[i];
      w->pad_end[off + i] = p->pads[p->n + i];
    }
}

gboolean
_fb_interp_window (const FbNode *node, const FbTensor *x, const int64_t *kernel,
                   gboolean ceil_mode, FbWindow *w, GError **error)
{
  Params p;
  int off;

  if (!read_params (node, x, kernel, &p, error))
    return FALSE;
  lift (&p, w);
  off = 3 - p.n;
  for (int i = off; i < 3; i++)
    {
      int64_t span = (w->k[i] - 1) * w->dil[i] + 1;
      if (g_str_has_prefix (p.auto_pad, "SAME"))
        {
          int64_t total;
          w->out[i] = div_ceil (w->in[i], w->stride[i]);
          total = MAX (0, (w->out[i] - 1) * w->stride[i] + span - w->in[i]);
          w->pad[i] = strcmp (p.auto_pad, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
          w->pad_end[i] = total - w->pad[i];
          continue;
        }
      if (strcmp (p.auto_pad, "VALID") == 0)
        w->pad[i] = w->pad_end[i] = 0;
      {
        int64_t room = w->in[i] + w->pad[i] + w->pad_end[i] - span;
        if (room < 0)
          return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "the window (%" G_GINT64_FORMAT ") is larger than the padded "
                                  "input (%" G_GINT64_FORMAT ") on spatial axis %d", span,
                                  w->in[i] + w->pad[i] + w->pad_end[i], i - off);
        w->out[i] = (ceil_mode ? div_ceil (room, w->stride[i]) : room / w->stride[i]) + 1;
        /* A last window that would start in the end padding is dropped. */
        if (ceil_mode && (w->out[i] - 1) * w->stride[i] >= w->in[i] + w->pad[i])
          w->out[i]--;
      }
    }
  return TRUE;
}

/* The output positions [lo, hi) along one axis whose tap t reads inside the input. */
static void
valid_range (int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t tap, int64_t *lo,
             int64_t *hi)
{
  *lo = MAX (0, div_ceil (pad - tap, stride));
  *hi = MIN (out, div_floor (in - 1 + pad - tap, stride) + 1);
  if (*hi < *lo)
    *hi = *lo;
}

static gboolean
conv_nchw (const FbNode *node, const FbTensor *x, const FbTensor *wt, const FbTensor *bias,
           FbTensor **out, GError **error)
{
  int64_t group = fb_node_attr_int (node, "group", 1);
  int64_t N = x->dims[0], C = x->dims[1], M = wt->dims[0];
  int64_t dims[FB_MAX_RANK], IP, OP, KP, Cg, Mg;
  FbWindow w;
  gboolean pointwise;
  g_autofree double *xv = NULL, *wv = NULL, *bv = NULL, *yv = NULL;
  FbTensor *y;

  if (wt->rank != x->rank)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "weights of rank %d for an input of rank %d", wt->rank, x->rank);
  if (group < 1 || C % group != 0 || M % group != 0 || wt->dims[1] * group != C)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "%" G_GINT64_FORMAT " input channels, %" G_GINT64_FORMAT " output "
                            "channels and weights for %" G_GINT64_FORMAT " channels per group do "
                            "not fit group=%" G_GINT64_FORMAT, C, M, wt->dims[1], group);
  if (bias != NULL && bias->numel != M)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the bias has %" G_GINT64_FORMAT " elements for %" G_GINT64_FORMAT
                            " output channels", bias->numel, M);
  if (!_fb_interp_window (node, x, wt->dims + 2, FALSE, &w, error))
    return FALSE;
  dims[0] = N;
  dims[1] = M;
  for (int i = 0; i < w.n; i++)
    dims[2 + i] = w.out[3 - w.n + i];
  y = _fb_interp_new (node, x->dtype, x->rank, dims, error);
  if (y == NULL)
    return FALSE;

  xv = _fb_interp_read_f64 (x);
  wv = _fb_interp_read_f64 (wt);
  bv = bias ? _fb_interp_read_f64 (bias) : NULL;
  yv = g_new (double, MAX (y->numel, 1));
  IP = w.in[0] * w.in[1] * w.in[2];
  OP = w.out[0] * w.out[1] * w.out[2];
  KP = w.k[0] * w.k[1] * w.k[2];
  Cg = C / group;
  Mg = M / group;
  pointwise = KP == 1 && w.stride[0] * w.stride[1] * w.stride[2] == 1 &&
              w.pad[0] + w.pad[1] + w.pad[2] == 0;

  for (int64_t n = 0; n < N; n++)
    for (int64_t oc = 0; oc < M; oc++)
      {
        int64_t g = oc / Mg;
        double *op = yv + (n * M + oc) * OP;
        for (int64_t p = 0; p < OP; p++)
          op[p] = bv ? bv[oc] : 0.0;
        for (int64_t c = 0; c < Cg; c++)
          {
            const double *ip = xv + (n * C + g * Cg + c) * IP;
            const double *wp = wv + (oc * Cg + c) * KP;
            if (pointwise)
              {
                double a = wp[0];
                for (int64_t p = 0; p < OP; p++)
                  op[p] += a * ip[p];
                continue;
              }
            for (int64_t kd = 0; kd < w.k[0]; kd++)
              for (int64_t kh = 0; kh < w.k[1]; kh++)
                for (int64_t kw = 0; kw < w.k[2]; kw++)
                  {
                    double a = wp[(kd * w.k[1] + kh) * w.k[2] + kw];
                    int64_t d0, d1, h0, h1, w0, w1;
                    int64_t tw = kw * w.dil[2], sw = w.stride[2];
                    valid_range (w.in[0], w.out[0], w.stride[0], w.pad[0], kd * w.dil[0], &d0, &d1);
                    valid_range (w.in[1], w.out[1], w.stride[1], w.pad[1], kh * w.dil[1], &h0, &h1);
                    valid_range (w.in[2], w.out[2], sw, w.pad[2], tw, &w0, &w1);
                    for (int64_t od = d0; od < d1; od++)
                      for (int64_t oh = h0; oh < h1; oh++)
                        {
                          int64_t id = od * w.stride[0] - w.pad[0] + kd * w.dil[0];
                          int64_t ih = oh * w.stride[1] - w.pad[1] + kh * w.dil[1];
                          int64_t ib = (id * w.in[1] + ih) * w.in[2] - w.pad[2] + tw;
                          double *orow = op + (od * w.out[1] + oh) * w.out[2];
                          if (sw == 1)
                            for (int64_t ow = w0; ow < w1; ow++)
                              orow[ow] += a * ip[ib + ow];
                          else
                            for (int64_t ow = w0; ow < w1; ow++)
                              orow[ow] += a * ip[ib + ow * sw];
                        }
                  }
          }
      }
  _fb_interp_write_f64 (y, yv);
  *out = y;
  return TRUE;
}

gboolean
_fb_interp_conv (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                 GError **error)
{
  FbTensor *bias = node->n_inputs > 2 ? in[2] : NULL;
  g_autoptr(FbTensor) x = NULL;
  g_autoptr(FbTensor) y = NULL;

  if (!_fb_interp_need_float (node, in[0], error) || !_fb_interp_need_float (node, in[1], error))
    return FALSE;
  if (in[0]->rank < 3)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the input has rank %d, at least 3 is needed", in[0]->rank);
  if (!_fb_interp_is_nhwc (node))
    return conv_nchw (node, in[0], in[1], bias, out, error);
  /* Channels-last: run the channels-first loops between two transposes. */
  x = _fb_interp_channels (node, in[0], TRUE, error);
  if (x == NULL || !conv_nchw (node, x, in[1], bias, &y, error))
    return FALSE;
  out[0] = _fb_interp_channels (node, y, FALSE, error);
  return out[0] != NULL;
}

static gboolean
conv_transpose_nchw (const FbNode *node, FbTensor *x, FbTensor *wt, FbTensor *bias,
                     FbTensor **out, GError **error)
{
  int64_t group = fb_node_attr_int (node, "group", 1);
  int64_t N, C, M, Cg, Mg, IP, OP, KP, opad[3] = { 0, 0, 0 }, dims[FB_MAX_RANK];
  const int64_t *oshape;
  guint n_oshape;
  Params p;
  FbWindow w;
  int off;
  g_autofree double *xv = NULL, *wv = NULL, *bv = NULL, *yv = NULL;
  FbTensor *y;

  if (!_fb_interp_need_float (node, x, error) || !_fb_interp_need_float (node, wt, error))
    return FALSE;
  if (x->rank < 3 || wt->rank != x->rank)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "input of rank %d and weights of rank %d do not fit", x->rank,
                            wt->rank);
  N = x->dims[0];
  C = x->dims[1];
  if (group < 1 || C % group != 0 || wt->dims[0] != C)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "%" G_GINT64_FORMAT " input channels do not fit weights for %"
                            G_GINT64_FORMAT " and group=%" G_GINT64_FORMAT, C, wt->dims[0], group);
  Cg = C / group;
  Mg = wt->dims[1];
  M = Mg * group;
  if (bias != NULL && bias->numel != M)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the bias has %" G_GINT64_FORMAT " elements for %" G_GINT64_FORMAT
                            " output channels", bias->numel, M);
  if (!read_params (node, x, wt->dims + 2, &p, error) ||
      !attr_list (node, "output_padding", p.n, 0, opad, error))
    return FALSE;
  lift (&p, &w);
  off = 3 - p.n;
  oshape = fb_node_attr_ints (node, "output_shape", &n_oshape);
  if (oshape != NULL && n_oshape != (guint) p.n && n_oshape != (guint) p.n + 2)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "output_shape has %u entries for %d spatial axes", n_oshape, p.n);
  for (int i = 0; i < p.n; i++)
    {
      int64_t span = (p.k[i] - 1) * p.dil[i] + 1;
      int64_t full = p.stride[i] * (p.in[i] - 1) + opad[i] + span;
      int64_t target = -1;
      if (oshape != NULL)
        target = oshape[n_oshape - p.n + i];
      else if (g_str_has_prefix (p.auto_pad, "SAME"))
        target = p.in[i] * p.stride[i];
      if (target >= 0)
        {
          /* Padding follows from the wanted size; the odd unit goes where ONNX Runtime puts it
           * (at the end for SAME_UPPER, else at the start). A size beyond the full output is
           * no negative padding: the extra positions at the end get the bias alone. */
          int64_t total = MAX (0, full - target);
          if (strcmp (p.auto_pad, "SAME_UPPER") == 0)
            w.pad[off + i] = total / 2;
          else
            w.pad[off + i] = total - total / 2;
          w.pad_end[off + i] = total - w.pad[off + i];
        }
      else if (strcmp (p.auto_pad, "VALID") == 0)
        w.pad[off + i] = w.pad_end[off + i] = 0;
      w.out[off + i] = target >= 0 ? target : full - w.pad[off + i] - w.pad_end[off + i];
      if (w.out[off + i] < 1)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "the output would be empty on spatial axis %d", i);
    }
  dims[0] = N;
  dims[1] = M;
  for (int i = 0; i < p.n; i++)
    dims[2 + i] = w.out[off + i];
  y = _fb_interp_new (node, x->dtype, x->rank, dims, error);
  if (y == NULL)
    return FALSE;
  xv = _fb_interp_read_f64 (x);
  wv = _fb_interp_read_f64 (wt);
  bv = bias ? _fb_interp_read_f64 (bias) : NULL;
  yv = g_new (double, MAX (y->numel, 1));
  IP = w.in[0] * w.in[1] * w.in[2];
  OP = w.out[0] * w.out[1] * w.out[2];
  KP = w.k[0] * w.k[1] * w.k[2];
  for (int64_t n = 0; n < N; n++)
    for (int64_t oc = 0; oc < M; oc++)
      for (int64_t p0 = 0; p0 < OP; p0++)
        yv[(n * M + oc) * OP + p0] = bv ? bv[oc] : 0.0;

  /* Scatter form: every input element adds its weighted kernel into the output. */
  for (int64_t n = 0; n < N; n++)
    for (int64_t ic = 0; ic < C; ic++)
      {
        int64_t g = ic / Cg;
        const double *ip = xv + (n * C + ic) * IP;
        for (int64_t m = 0; m < Mg; m++)
          {
            int64_t oc = g * Mg + m;
            double *op = yv + (n * M + oc) * OP;
            const double *wp = wv + (ic * Mg + m) * KP;
            for (int64_t kd = 0; kd < w.k[0]; kd++)
              for (int64_t kh = 0; kh < w.k[1]; kh++)
                for (int64_t kw = 0; kw < w.k[2]; kw++)
                  {
                    double a = wp[(kd * w.k[1] + kh) * w.k[2] + kw];
                    int64_t tw = kw * w.dil[2] - w.pad[2];
                    int64_t w0 = MAX (0, div_ceil (-tw, w.stride[2]));
                    int64_t w1 = MIN (w.in[2], div_floor (w.out[2] - 1 - tw, w.stride[2]) + 1);
                    for (int64_t id = 0; id < w.in[0]; id++)
                      {
                        int64_t od = id * w.stride[0] - w.pad[0] + kd * w.dil[0];
                        if (od < 0 || od >= w.out[0])
                          continue;
                        for (int64_t ih = 0; ih < w.in[1]; ih++)
                          {
                            int64_t oh = ih * w.stride[1] - w.pad[1] + kh * w.dil[1];
                            const double *irow;
                            int64_t ob;
                            if (oh < 0 || oh >= w.out[1])
                              continue;
                            irow = ip + (id * w.in[1] + ih) * w.in[2];
                            ob = (od * w.out[1] + oh) * w.out[2] + tw;
                            for (int64_t iw = w0; iw < w1; iw++)
                              op[ob + iw * w.stride[2]] += a * irow[iw];
                          }
                      }
                  }
          }
      }
  _fb_interp_write_f64 (y, yv);
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_conv_transpose (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                           FbTensor **out, GError **error)
{
  FbTensor *bias = node->n_inputs > 2 ? in[2] : NULL;
  g_autoptr(FbTensor) x = NULL;
  g_autoptr(FbTensor) y = NULL;

  if (!_fb_interp_is_nhwc (node))
    return conv_transpose_nchw (node, in[0], in[1], bias, out, error);
  if (!_fb_interp_need_float (node, in[0], error))
    return FALSE;
  /* Channels-last: the channels-first loops between two transposes, as for Conv. */
  x = _fb_interp_channels (node, in[0], TRUE, error);
  if (x == NULL || !conv_transpose_nchw (node, x, in[1], bias, &y, error))
    return FALSE;
  out[0] = _fb_interp_channels (node, y, FALSE, error);
  return out[0] != NULL;
}

/* MaxUnpool: zeros, with each value of X written where its index in I points. I numbers the
 * elements of the whole output (MaxPool's flattened indices), and the later of two values for
 * one place wins, as in ONNX's reference. */
gboolean
_fb_interp_max_unpool (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                       GError **error)
{
  FbTensor *x = in[0], *ind = in[1];
  guint nk, np, ns;
  const int64_t *kernel = fb_node_attr_ints (node, "kernel_shape", &nk);
  const int64_t *pads = fb_node_attr_ints (node, "pads", &np);
  const int64_t *strides = fb_node_attr_ints (node, "strides", &ns);
  int64_t dims[FB_MAX_RANK];
  g_autofree int64_t *shape = NULL, *iv = NULL;
  g_autofree double *xv = NULL, *yv = NULL;
  guint n_shape;
  g_autoptr(FbTensor) y = NULL;

  if (!_fb_interp_need_float (node, x, error))
    return FALSE;
  if (kernel == NULL || x->rank != (int) nk + 2 || (pads && np != 2 * nk) || (strides && ns != nk))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "kernel_shape, pads and strides do not fit an input of rank %d",
                            x->rank);
  if (ind->dtype != FB_DTYPE_INT64 || ind->rank != x->rank ||
      memcmp (ind->dims, x->dims, sizeof (int64_t) * x->rank) != 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "I must be int64 of X's shape");
  if (node->n_inputs > 2 && in[2] != NULL)
    {
      if (!_fb_interp_int_list (node, in[2], "output_shape", &shape, &n_shape, error))
        return FALSE;
      if (n_shape != (guint) x->rank)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "output_shape has %u entries for an input of rank %d", n_shape,
                                x->rank);
      memcpy (dims, shape, sizeof (int64_t) * x->rank);
    }
  else
    {
      dims[0] = x->dims[0];
      dims[1] = x->dims[1];
      for (guint i = 0; i < nk; i++)
        {
          int64_t s = strides ? strides[i] : 1, pad = pads ? pads[i] + pads[i + nk] : 0;
          if (x->dims[2 + i] < 1 || s < 1 || kernel[i] < 1 ||
              __builtin_mul_overflow (x->dims[2 + i] - 1, s, &dims[2 + i]) ||
              __builtin_add_overflow (dims[2 + i], kernel[i], &dims[2 + i]) ||
              __builtin_sub_overflow (dims[2 + i], pad, &dims[2 + i]) || dims[2 + i] < 0)
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                    "spatial axis %u cannot be unpooled", i);
        }
    }
  y = _fb_interp_new (node, x->dtype, x->rank, dims, error);
  if (y == NULL)
    return FALSE;
  xv = _fb_interp_read_f64 (x);
  iv = _fb_interp_read_i64 (ind);
  yv = _fb_interp_alloc (node, y->numel, sizeof (double), error);
  if (yv == NULL)
    return FALSE;
  for (int64_t i = 0; i < x->numel; i++)
    {
      if (iv[i] < 0 || iv[i] >= y->numel)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "index %" G_GINT64_FORMAT " (element %" G_GINT64_FORMAT " of I) is "
                                "outside the %" G_GINT64_FORMAT " elements of the output", iv[i],
                                i, y->numel);
      yv[iv[i]] = xv[i];
    }
  _fb_interp_write_f64 (y, yv);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}
