/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Convolutions. Channels-last float ones with constant weights are oneDNN primitives
 * (fb-lower-dnnl-conv.c). Of the rest, depthwise ones are generated loops (a GEMM per channel
 * would be all overhead); 1x1 stride-1 ones call sgemm (oneDNN's) straight on the input; the
 * others copy the padded input, gather image patches (im2col) for a tile of output rows and
 * call sgemm on the tile, then apply the bias and the sunk elementwise chain to the tile. One-
 * and two-dimensional convolutions share the code: a 1-D one is a 2-D one of height 1. On a
 * GPU they are cuDNN's, but for the matrix-vector products (gpu_matvec), which are generated
 * direct loops, and the depthwise ones of few channels (gpu_depthwise), which are generated
 * with their taps unrolled (fb-lower-depthwise-gpu.c). */
#include "fb-lower-private.h"
#include "fb-lower-conv.h"

#include <string.h>

gboolean
_fb_lower_conv_geom (const FbNode *node, FbConvGeom *g, GError **error)
{
  const FbValue *x = node->inputs[0], *w = node->inputs[1], *y = node->outputs[0];
  int rx, rw, ry;
  int64_t dx[FB_MAX_RANK], dw[FB_MAX_RANK], dy[FB_MAX_RANK];
  memset (g, 0, sizeof *g);
  g->nhwc = _fb_lower_is_nhwc (node);
  if (!_fb_lower_dims (x, &rx, dx) || !_fb_lower_dims (y, &ry, dy) ||
      (w && !_fb_lower_dims (w, &rw, dw)))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shapes are not static");
  if (rx != 3 && rx != 4)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "only 1-D and 2-D spatial dimensions are supported (input rank %d)",
                           rx);
  g->is1d = rx == 3;
  /* Normalize to 4-D NCHW / NHWC extents. */
  int64_t in4[4], out4[4];
  if (g->is1d)
    {
      if (g->nhwc)
        {
          in4[0] = dx[0]; in4[1] = 1; in4[2] = dx[1]; in4[3] = dx[2];
          out4[0] = dy[0]; out4[1] = 1; out4[2] = dy[1]; out4[3] = dy[2];
        }
      else
        {
          in4[0] = dx[0]; in4[1] = dx[1]; in4[2] = 1; in4[3] = dx[2];
          out4[0] = dy[0]; out4[1] = dy[1]; out4[2] = 1; out4[3] = dy[2];
        }
    }
  else
    {
      memcpy (in4, dx, sizeof in4);
      memcpy (out4, dy, sizeof out4);
    }
  g->N = in4[0];
  if (g->nhwc)
    {
      g->H = in4[1]; g->W = in4[2]; g->C = in4[3];
      g->OH = out4[1]; g->OW = out4[2]; g->Co = out4[3];
    }
  else
    {
      g->C = in4[1]; g->H = in4[2]; g->W = in4[3];
      g->Co = out4[1]; g->OH = out4[2]; g->OW = out4[3];
    }
  g->G = fb_node_attr_int (node, "group", 1);
  if (g->G < 1 || g->C % g->G || g->Co % g->G)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "bad group count");
  guint nk = 0, ns = 0, nd = 0, np = 0;
  const int64_t *ks = fb_node_attr_ints (node, "kernel_shape", &nk);
  const int64_t *st = fb_node_attr_ints (node, "strides", &ns);
  const int64_t *dl = fb_node_attr_ints (node, "dilations", &nd);
  const int64_t *pd = fb_node_attr_ints (node, "pads", &np);
  int sp = g->is1d ? 1 : 2;
  int64_t kk[2] = { 1, 1 }, ss[2] = { 1, 1 }, dd[2] = { 1, 1 }, pb[2] = { 0, 0 }, pe[2] = { 0, 0 };
  for (int i = 0; i < sp; i++)
    {
      int j = g->is1d ? 1 : i;
      if (w)
        kk[j] = dw[2 + i];
      if (nk == (guint) sp)
        kk[j] = ks[i];
      if (ns == (guint) sp)
        ss[j] = st[i];
      if (nd == (guint) sp)
        dd[j] = dl[i];
      if (np == 2u * sp)
        {
          pb[j] = pd[i];
          pe[j] = pd[i + sp];
        }
    }
  const char *auto_pad = fb_node_attr_string (node, "auto_pad", "NOTSET");
  int64_t in_sp[2] = { g->H, g->W }, out_sp[2] = { g->OH, g->OW };
  if (g_str_equal (auto_pad, "SAME_UPPER") || g_str_equal (auto_pad, "SAME_LOWER"))
    for (int j = 0; j < 2; j++)
      {
        int64_t total = MAX (0, (out_sp[j] - 1) * ss[j] + (kk[j] - 1) * dd[j] + 1 - in_sp[j]);
        pb[j] = g_str_equal (auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
        pe[j] = total - pb[j];
      }
  else if (g_str_equal (auto_pad, "VALID"))
    pb[0] = pb[1] = pe[0] = pe[1] = 0;
  g->KH = kk[0]; g->KW = kk[1];
  g->sh = ss[0]; g->sw = ss[1];
  g->dh = dd[0]; g->dw = dd[1];
  g->pt = pb[0]; g->pl = pb[1];
  /* Enough padding at the end that every window of the output fits (ceil_mode pools). */
  g->pb = MAX (pe[0], (g->OH - 1) * g->sh + (g->KH - 1) * g->dh + 1 - g->H - g->pt);
  g->pr = MAX (pe[1], (g->OW - 1) * g->sw + (g->KW - 1) * g->dw + 1 - g->W - g->pl);
  g->pb = MAX (g->pb, 0);
  g->pr = MAX (g->pr, 0);
  return TRUE;
}

void
_fb_lower_conv_coords (const FbConvGeom *g, FbKExpr **c4, FbKExpr **out)
{
  /* c4 is [n, c, h, w] in NCHW order whatever the layout. */
  if (g->nhwc)
    {
      if (g->is1d)
        { out[0] = c4[0]; out[1] = c4[3]; out[2] = c4[1]; }
      else
        { out[0] = c4[0]; out[1] = c4[2]; out[2] = c4[3]; out[3] = c4[1]; }
    }
  else if (g->is1d)
    { out[0] = c4[0]; out[1] = c4[1]; out[2] = c4[3]; }
  else
    memcpy (out, c4, sizeof (FbKExpr *) * 4);
}

int64_t
_fb_lower_conv_xindex_stride (const FbConvGeom *g, int which)
{
  /* Strides of the (padded) input in the order n, c, h, w. */
  int64_t Hp = g->H + g->pt + g->pb, Wp = g->W + g->pl + g->pr;
  if (g->nhwc)
    switch (which)
      {
      case 0: return Hp * Wp * g->C;
      case 1: return 1;
      case 2: return Wp * g->C;
      default: return g->C;
      }
  switch (which)
    {
    case 0: return g->C * Hp * Wp;
    case 1: return Hp * Wp;
    case 2: return Wp;
    default: return 1;
    }
}

static void
fill_run (FbKernel *k, GPtrArray *body, guint arg, FbKExpr *base, int64_t n, FbKExpr *fill)
{
  if (n <= 0)
    return;
  FbKExpr *i;
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, n), &i);
  g_ptr_array_add (l, fb_ks_store (k, arg, fb_kx_add (k, base, i), fill));
}

static guint
padded_scratch (FbLowerCtx *c, const FbValue *x, const FbConvGeom *g)
{
  int64_t Hp = g->H + g->pt + g->pb, Wp = g->W + g->pl + g->pr;
  int64_t pdims[4];
  if (g->nhwc)
    { pdims[0] = g->N; pdims[1] = Hp; pdims[2] = Wp; pdims[3] = g->C; }
  else
    { pdims[0] = g->N; pdims[1] = g->C; pdims[2] = Hp; pdims[3] = Wp; }
  return _fb_lower_scratch (c, "padded", x->dtype, 4, pdims);
}

/* The padded copy of one plane (NCHW: image n, channel ch) or one image (NHWC: ch is 0): rows
 * of padding, then each row's left pad, copy and right pad: no conditions in the loops. */
static void
pad_plane (FbKernel *k, GPtrArray *body, guint xp, guint xa, const FbConvGeom *g, FbKExpr *n,
           FbKExpr *ch, FbKExpr *fill)
{
  int64_t Hp = g->H + g->pt + g->pb, Wp = g->W + g->pl + g->pr;
  int64_t row = g->nhwc ? Wp * g->C : Wp;            /* elements per padded row */
  int64_t in_row = g->nhwc ? g->W * g->C : g->W;
  int64_t unit = g->nhwc ? g->C : 1;                 /* elements per pixel */
  FbKExpr *pbase = fb_kx_add (k, fb_kx_mul_c (k, n, g->nhwc ? Hp * Wp * g->C : g->C * Hp * Wp),
                              fb_kx_mul_c (k, ch, Hp * Wp));
  FbKExpr *xbase = fb_kx_add (k, fb_kx_mul_c (k, n, g->nhwc ? g->H * g->W * g->C : g->C * g->H * g->W),
                              fb_kx_mul_c (k, ch, g->H * g->W));
  fill_run (k, body, xp, pbase, g->pt * row, fill);
  FbKExpr *h;
  GPtrArray *rows = _fb_lower_loop (k, body, fb_kx_index (k, g->H), &h);
  FbKExpr *prow = fb_kx_add (k, pbase, fb_kx_mul_c (k, fb_kx_add_c (k, h, g->pt), row));
  fill_run (k, rows, xp, prow, g->pl * unit, fill);
  FbKExpr *i;
  GPtrArray *copy = _fb_lower_loop (k, rows, fb_kx_index (k, in_row), &i);
  g_ptr_array_add (copy, fb_ks_store (k, xp, fb_kx_add (k, fb_kx_add_c (k, prow, g->pl * unit), i),
                                      fb_kx_load (k, xa, fb_kx_add (k, fb_kx_add (k, xbase, fb_kx_mul_c (k, h, in_row)), i))));
  fill_run (k, rows, xp, fb_kx_add_c (k, prow, (g->pl + g->W) * unit), g->pr * unit, fill);
  fill_run (k, body, xp, fb_kx_add_c (k, pbase, (g->pt + g->H) * row), g->pb * row, fill);
}

/* pad_plane for an NCHW depthwise convolution of column stride 2: each padded row is stored
 * as its even columns, then its odd ones, so that every tap reads consecutive elements (a
 * stride-2 read in the convolution's inner loop does not vectorize and ran at a fifth of
 * the stride-1 speed). The copy reads the input once; the taps read it nine times. */
static void
pad_plane_split (FbKernel *k, GPtrArray *body, guint xp, guint xa, const FbConvGeom *g,
                 FbKExpr *n, FbKExpr *ch, FbKExpr *fill)
{
  int64_t Hp = g->H + g->pt + g->pb, Wp = g->W + g->pl + g->pr, even = (Wp + 1) / 2;
  FbKExpr *pbase = fb_kx_add (k, fb_kx_mul_c (k, n, g->C * Hp * Wp), fb_kx_mul_c (k, ch, Hp * Wp));
  FbKExpr *xbase = fb_kx_add (k, fb_kx_mul_c (k, n, g->C * g->H * g->W),
                              fb_kx_mul_c (k, ch, g->H * g->W));
  fill_run (k, body, xp, pbase, g->pt * Wp, fill);
  FbKExpr *h;
  GPtrArray *rows = _fb_lower_loop (k, body, fb_kx_index (k, g->H), &h);
  FbKExpr *prow = fb_kx_add (k, pbase, fb_kx_mul_c (k, fb_kx_add_c (k, h, g->pt), Wp));
  FbKExpr *xrow = fb_kx_add (k, xbase, fb_kx_mul_c (k, h, g->W));
  for (int64_t phase = 0; phase < 2; phase++)
    {
      /* Padded column 2j + phase is input column 2j + phase - pl: j in [lo, hi) reads the
       * image (an affine index, which vectorizes), the columns either side are fill. */
      int64_t count = phase ? Wp / 2 : even, off = phase - g->pl;
      int64_t lo = off >= 0 ? 0 : (1 - off) / 2;
      int64_t last = g->W - 1 - off;
      int64_t hi = last < 0 ? 0 : MIN (last / 2 + 1, count);
      lo = MIN (lo, hi);
      FbKExpr *dst = fb_kx_add_c (k, prow, phase * even);
      fill_run (k, rows, xp, dst, lo, fill);
      FbKExpr *j;
      GPtrArray *cols = _fb_lower_loop (k, rows, fb_kx_index (k, hi - lo), &j);
      FbKExpr *jj = fb_kx_add_c (k, j, lo);
      FbKExpr *src = fb_kx_add (k, xrow, fb_kx_add_c (k, fb_kx_mul_c (k, jj, 2), off));
      g_ptr_array_add (cols, fb_ks_store (k, xp, fb_kx_add (k, dst, jj), fb_kx_load (k, xa, src)));
      fill_run (k, rows, xp, fb_kx_add_c (k, dst, hi), count - hi, fill);
    }
  fill_run (k, body, xp, fb_kx_add_c (k, pbase, (g->pt + g->H) * Wp), g->pb * Wp, fill);
}

guint
_fb_lower_pad_input (FbLowerCtx *c, const FbValue *x, const FbConvGeom *g, double fill_value,
                     GError **error)
{
  FbKernel *k = c->k;
  int64_t Hp = g->H + g->pt + g->pb, Wp = g->W + g->pl + g->pr;
  guint xp = padded_scratch (c, x, g);
  guint xa = _fb_lower_arg (c, x, FB_KARG_INPUT);
  if (_fb_lower_for_gpu (c))
    {
      /* A GPU wants every element its own thread: one select per padded element (the source
       * index clamped so that the load stays inside x), instead of a plane per iteration. */
      int64_t pd[4] = { g->N, g->nhwc ? Hp : g->C, g->nhwc ? Wp : Hp, g->nhwc ? g->C : Wp };
      FbKExpr *pc[4];
      GPtrArray *body = _fb_lower_nest (c, 4, pd, pc, (double) g->N * g->C * Hp * Wp);
      FbKExpr *ph = g->nhwc ? pc[1] : pc[2], *pw = g->nhwc ? pc[2] : pc[3];
      FbKExpr *ch = g->nhwc ? pc[3] : pc[1];
      FbKExpr *h = fb_kx_add_c (k, ph, -g->pt), *w = fb_kx_add_c (k, pw, -g->pl);
      FbKExpr *inside = fb_kx_binary (k, FB_KB_AND,
                                      fb_kx_binary (k, FB_KB_AND,
                                                    fb_kx_binary (k, FB_KB_GE, h, fb_kx_index (k, 0)),
                                                    fb_kx_binary (k, FB_KB_LT, h, fb_kx_index (k, g->H))),
                                      fb_kx_binary (k, FB_KB_AND,
                                                    fb_kx_binary (k, FB_KB_GE, w, fb_kx_index (k, 0)),
                                                    fb_kx_binary (k, FB_KB_LT, w, fb_kx_index (k, g->W))));
      FbKExpr *hc = fb_kx_binary (k, FB_KB_MIN, fb_kx_binary (k, FB_KB_MAX, h, fb_kx_index (k, 0)),
                                  fb_kx_index (k, g->H - 1));
      FbKExpr *wc = fb_kx_binary (k, FB_KB_MIN, fb_kx_binary (k, FB_KB_MAX, w, fb_kx_index (k, 0)),
                                  fb_kx_index (k, g->W - 1));
      int64_t xd[4] = { g->N, g->nhwc ? g->H : g->C, g->nhwc ? g->W : g->H, g->nhwc ? g->C : g->W };
      FbKExpr *xc[4] = { pc[0], g->nhwc ? hc : ch, g->nhwc ? wc : hc, g->nhwc ? ch : wc };
      FbKExpr *v = fb_kx_select (k, inside, fb_kx_load (k, xa, _fb_lower_index (k, 4, xd, xc)),
                                 fb_kx_const_f (k, x->dtype, fill_value));
      g_ptr_array_add (body, fb_ks_store (k, xp, _fb_lower_index (k, 4, pd, pc), v));
      return xp;
    }
  FbKExpr *lc[2];
  /* One plane (NCHW: per n, c) or one image (NHWC: per n) per parallel iteration. */
  int64_t outer[2] = { g->N, g->nhwc ? 1 : g->C };
  GPtrArray *body = _fb_lower_nest (c, 2, outer, lc, (double) g->N * g->C * Hp * Wp);
  pad_plane (k, body, xp, xa, g, lc[0], lc[1], fb_kx_const_f (k, x->dtype, fill_value));
  return xp;
}

/* Weights of one output channel reordered so that the inner dimension is contiguous in the
 * loop that reads it: [Co][KH][KW][Cg] for NHWC GEMMs, [KH][KW][C] for NHWC depthwise. */
FbTensor *
_fb_lower_conv_repack (const FbTensor *w, gboolean depthwise, GError **error)
{
  int64_t co = w->dims[0], cg = w->dims[1];
  int64_t kh = w->rank > 3 ? w->dims[2] : 1, kw = w->dims[w->rank - 1];
  int64_t dims[4] = { co, kh, kw, cg };
  if (depthwise)
    {
      dims[0] = kh; dims[1] = kw; dims[2] = co;
    }
  FbTensor *t = fb_tensor_new (FB_DTYPE_FLOAT32, depthwise ? 3 : 4, dims, error);
  if (t == NULL)
    return NULL;
  float *out = fb_tensor_data_mut (t);
  const float *in = fb_tensor_data (w);
  for (int64_t o = 0; o < co; o++)
    for (int64_t ci = 0; ci < cg; ci++)
      for (int64_t a = 0; a < kh; a++)
        for (int64_t b = 0; b < kw; b++)
          {
            float v = in[((o * cg + ci) * kh + a) * kw + b];
            if (depthwise)
              out[(a * kw + b) * co + o] = v;
            else
              out[((o * kh + a) * kw + b) * cg + ci] = v;
          }
  return t;
}

gboolean
_fb_lower_depthwise_weights (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g, guint *wa,
                             GError **error)
{
  const FbValue *w = node->inputs[1];
  if (!g->nhwc)
    {
      *wa = _fb_lower_arg (c, w, FB_KARG_INPUT);
      return TRUE;
    }
  g_autoptr(FbTensor) wr = _fb_lower_conv_repack (w->constant, TRUE, error);
  if (wr == NULL)
    return FALSE;
  g_autofree char *name = g_strdup_printf ("%s.hwc", w->name);
  *wa = _fb_lower_const_arg (c, wr, name);
  return TRUE;
}

gboolean
_fb_lower_conv_store (FbLowerCtx *c, GPtrArray *body, const FbNode *node, const FbConvGeom *g,
                      FbKExpr **c4, FbKExpr *x, GError **error)
{
  FbKExpr *yc[4];
  const FbValue *bias = fb_node_input (node, 2);
  if (bias)
    {
      FbKExpr *bv = _fb_lower_value_at (c, bias, 1, &c4[1], error);
      if (bv == NULL)
        return FALSE;
      x = fb_kx_binary (c->k, FB_KB_ADD, x, bv);
    }
  _fb_lower_conv_coords (g, c4, yc);
  return _fb_lower_store (c, body, node->outputs[0], yc, x, error);
}

static gboolean
lower_depthwise (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g, GError **error)
{
  FbKernel *k = c->k;
  gboolean padded = g->pt || g->pl || g->pb || g->pr;
  /* NCHW pads each plane in the iteration that convolves it, while it is in cache; a phase
   * of its own would stream the whole padded tensor out to memory and back. */
  gboolean pad_inline = padded && !g->nhwc;
  gboolean split = pad_inline && g->sw == 2 && g->dw == 1;
  guint xa = pad_inline ? padded_scratch (c, node->inputs[0], g)
           : padded ? _fb_lower_pad_input (c, node->inputs[0], g, 0.0, error)
           : _fb_lower_arg (c, node->inputs[0], FB_KARG_INPUT);
  guint xin = pad_inline ? _fb_lower_arg (c, node->inputs[0], FB_KARG_INPUT) : 0;
  guint wa;
  if (!_fb_lower_depthwise_weights (c, node, g, &wa, error))
    return FALSE;

  /* NCHW: planes in parallel, pixels innermost. NHWC: rows in parallel, channels innermost. */
  FbKExpr *c4[4], *lc[3];
  GPtrArray *body;
  double work = 2.0 * g->N * g->Co * g->OH * g->OW * g->KH * g->KW;
  if (g->nhwc)
    {
      int64_t outer[2] = { g->N, g->OH };
      body = _fb_lower_nest (c, 2, outer, lc, work);
      c4[0] = lc[0];
      c4[2] = lc[1];
      body = _fb_lower_loop (k, body, fb_kx_index (k, g->OW), &c4[3]);
      body = _fb_lower_loop (k, body, fb_kx_index (k, g->C), &c4[1]);
    }
  else
    {
      int64_t outer[2] = { g->N, g->C };
      body = _fb_lower_nest (c, 2, outer, c4, work);
      FbKExpr *zero = fb_kx_const_f (k, node->inputs[0]->dtype, 0.0);
      if (split)
        pad_plane_split (k, body, xa, xin, g, c4[0], c4[1], zero);
      else if (pad_inline)
        pad_plane (k, body, xa, xin, g, c4[0], c4[1], zero);
      body = _fb_lower_loop (k, body, fb_kx_index (k, g->OH), &c4[2]);
      body = _fb_lower_loop (k, body, fb_kx_index (k, g->OW), &c4[3]);
    }
  FbKExpr *sum = NULL;
  FbKExpr *xbase = fb_kx_add (k, fb_kx_mul_c (k, c4[0], _fb_lower_conv_xindex_stride (g, 0)),
                              fb_kx_mul_c (k, c4[1], _fb_lower_conv_xindex_stride (g, 1)));
  for (int64_t a = 0; a < g->KH; a++)
    for (int64_t b = 0; b < g->KW; b++)
      {
        FbKExpr *ih = fb_kx_add_c (k, fb_kx_mul_c (k, c4[2], g->sh), a * g->dh);
        /* Split rows: column 2 ow + b is at (b % 2) * even + ow + b / 2. */
        int64_t even = (g->W + g->pl + g->pr + 1) / 2;
        FbKExpr *iw = split ? fb_kx_add_c (k, c4[3], (b % 2) * even + b / 2)
                            : fb_kx_add_c (k, fb_kx_mul_c (k, c4[3], g->sw), b * g->dw);
        FbKExpr *xi = fb_kx_add (k, xbase,
                                 fb_kx_add (k, fb_kx_mul_c (k, ih, _fb_lower_conv_xindex_stride (g, 2)),
                                            fb_kx_mul_c (k, iw, _fb_lower_conv_xindex_stride (g, 3))));
        FbKExpr *wi = g->nhwc ? fb_kx_add_c (k, c4[1], (a * g->KW + b) * g->C)
                              : fb_kx_add_c (k, fb_kx_mul_c (k, c4[1], g->KH * g->KW), a * g->KW + b);
        FbKExpr *term = fb_kx_binary (k, FB_KB_MUL, fb_kx_load (k, xa, xi), fb_kx_load (k, wa, wi));
        sum = sum ? fb_kx_binary (k, FB_KB_ADD, sum, term) : term;
      }
  return _fb_lower_conv_store (c, body, node, g, c4, sum, error);
}

/* From this size of im2col on (bytes; past a core's L2 and a fair share of L3), a row of output
 * is also split by positions. */
#define SPLIT_POSITIONS_BYTES (4.0 * 1048576)

/* The tiles of a convolution whose output is one tile of rows: want of them, tc output channels
 * each (a multiple of 16, one AVX-512 vector) and, where row, tw of its P positions each. Each
 * tile's sgemm packs its block of weights and its block of the im2col; of the splits of want,
 * the one that packs least (tc + tw smallest).
 * Tiles of channels alone pack the whole im2col each. wav2vec 2.0's first 512-channel window
 * (im2col of 1536 x 1599 floats) ran at 97 GFLOP/s on one Xeon core, against 128 for ONNX
 * Runtime's one product, its second 114 against 128; split by positions too, the model took 4-10 %
 * less on two Xeon cores (83-85 against 87-94 ms), about as long on four, and at one core less
 * in four runs of five. On smaller im2cols (2.4 MB and under) the split lost on one Zen 4 core
 * (3.9-4.1 against 3.5-3.7 ms for the 1536 x 399 one), hence the bound. */
static void
channel_tiles (int64_t Cog, int64_t P, int64_t want, gboolean row, int64_t *tc, int64_t *tw)
{
  int64_t best = -1;
  for (int64_t ncol = 1; ncol <= (row ? want : 1); ncol *= 2)
    {
      int64_t nco = want / ncol, c = (Cog + nco - 1) / nco;
      c = MIN (Cog, (c + 15) / 16 * 16);
      int64_t w = (P + ncol - 1) / ncol;
      if (best < 0 || c + w < best)
        {
          best = c + w;
          *tc = c;
          *tw = w;
        }
    }
}

static gboolean
lower_gemm_conv (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *w = node->inputs[1], *y = node->outputs[0];
  int64_t Cg = g->C / g->G, Cog = g->Co / g->G, Kg = Cg * g->KH * g->KW, P = g->OH * g->OW;
  gboolean direct = g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 &&
                    g->pl == 0 && g->pb == 0 && g->pr == 0;
  gboolean padded = g->pt || g->pl || g->pb || g->pr;
  guint xa = padded ? _fb_lower_pad_input (c, node->inputs[0], g, 0.0, error)
                    : _fb_lower_arg (c, node->inputs[0], FB_KARG_INPUT);
  guint wa;
  if (g->nhwc && !direct)
    {
      g_autoptr(FbTensor) wr = _fb_lower_conv_repack (w->constant, FALSE, error);
      if (wr == NULL)
        return FALSE;
      g_autofree char *name = g_strdup_printf ("%s.ohwi", w->name);
      wa = _fb_lower_const_arg (c, wr, name);
    }
  else
    wa = _fb_lower_arg (c, w, FB_KARG_INPUT);
  guint col = 0;
  if (!direct)
    {
      int64_t cd[3] = { g->N * g->G, Kg, P };
      col = _fb_lower_scratch (c, "im2col", FB_DTYPE_FLOAT32, 3, cd);
    }
  guint ya = _fb_lower_out_arg (c, y);

  int64_t th = _fb_lower_tile_rows (g->OH, 2.0 * Cog * Kg * g->OW, g->N * g->G);
  int64_t ntiles = (g->OH + th - 1) / th;
  /* A small image (7x7 at the end of a CNN, the few frames of an STFT) or a 1-D window is one
   * tile of rows, which would leave all but one thread idle: it is tiled by output channels
   * instead (and a long row also by positions: channel_tiles), from half a megaflop a tile on. */
  int64_t tc = Cog, tw = P, ncol = 1;
  if (ntiles == 1 && g->N * g->G == 1)
    {
      int64_t want = CLAMP ((int64_t) (2.0 * Cog * Kg * P / 5e5), 1, 16);
      gboolean row = !g->nhwc && g->OH == 1 && 4.0 * Kg * P >= SPLIT_POSITIONS_BYTES;
      channel_tiles (Cog, P, want, row, &tc, &tw);
      ncol = (P + tw - 1) / tw;
    }
  gboolean by_co = tc < Cog || ncol > 1;
  if (by_co)
    ntiles = (Cog + tc - 1) / tc * ncol;
  /* Tiles of channels share one im2col of the whole image: a phase of its own before them,
   * split over the threads by output rows (channels-last) or by input channels (channels-first,
   * where a 1-D window has one row). Gathered by one thread, it had held back wav2vec 2.0's
   * first 512-channel window (1536 x 1599 floats): 10.6 ms on two Zen 4 cores, 8.1-8.3 split. */
  GPtrArray *im_body = NULL;
  FbKExpr *im_index = NULL;
  if (by_co && !direct)
    {
      int64_t par[1] = { g->nhwc ? g->OH : Cg };
      im_body = _fb_lower_nest (c, 1, par, &im_index, (double) Kg * P);
    }
  int64_t outer[3] = { g->N, g->G, ntiles };
  FbKExpr *lc[3];
  GPtrArray *body = _fb_lower_nest (c, 3, outer, lc, 2.0 * g->N * g->Co * Kg * P);
  FbKExpr *n = lc[0], *gi = lc[1];
  /* A tile of channels is tile / ncol, its block of positions tile % ncol (ncol is 1 but for a
   * row of output). */
  FbKExpr *t_co = ncol > 1 ? fb_kx_binary (k, FB_KB_DIV, lc[2], fb_kx_index (k, ncol)) : lc[2];
  FbKExpr *t0 = fb_kx_mul_c (k, t_co, by_co ? tc : th);
  FbKExpr *oh0 = by_co ? fb_kx_index (k, 0) : t0;
  FbKExpr *co0 = by_co ? t0 : fb_kx_index (k, 0);
  FbKExpr *rows = by_co || ntiles == 1 ? fb_kx_index (k, g->OH)
                : fb_kx_binary (k, FB_KB_MIN, fb_kx_index (k, th),
                                fb_kx_binary (k, FB_KB_SUB, fb_kx_index (k, g->OH), oh0));
  FbKExpr *cols = !by_co ? fb_kx_index (k, Cog)
                : fb_kx_binary (k, FB_KB_MIN, fb_kx_index (k, tc),
                                fb_kx_binary (k, FB_KB_SUB, fb_kx_index (k, Cog), co0));
  FbKExpr *ng = fb_kx_add (k, fb_kx_mul_c (k, n, g->G), gi);
  /* The tile's first output pixel; the im2col's (which in a phase of its own before the tiles
   * is the whole image's) only counts rows. */
  FbKExpr *p0 = fb_kx_mul_c (k, oh0, g->OW), *im_p0 = p0;
  FbKExpr *npix = fb_kx_binary (k, FB_KB_MUL, rows, fb_kx_index (k, g->OW));
  /* The positions of the tile along the row: OW of them from ow0. */
  FbKExpr *ow0 = fb_kx_index (k, 0), *tile_ow = fb_kx_index (k, g->OW);
  if (ncol > 1)
    {
      ow0 = fb_kx_mul_c (k, fb_kx_binary (k, FB_KB_MOD, lc[2], fb_kx_index (k, ncol)), tw);
      tile_ow = fb_kx_binary (k, FB_KB_MIN, fb_kx_index (k, tw),
                              fb_kx_binary (k, FB_KB_SUB, fb_kx_index (k, P), ow0));
      p0 = ow0;
      npix = tile_ow;
    }

  if (!direct)
    {
      /* im2col of the tile's rows. */
      FbKExpr *ci, *a, *b, *r, *ow;
      GPtrArray *l;
      FbKExpr *colbase;
      if (g->nhwc)
        {
          if (im_body)
            {
              l = im_body;
              r = im_index;
            }
          else
            l = _fb_lower_loop (k, body, rows, &r);
          l = _fb_lower_loop (k, l, fb_kx_index (k, g->OW), &ow);
          l = _fb_lower_loop (k, l, fb_kx_index (k, g->KH), &a);
          l = _fb_lower_loop (k, l, fb_kx_index (k, g->KW), &b);
          l = _fb_lower_loop (k, l, fb_kx_index (k, Cg), &ci);
          FbKExpr *pix = fb_kx_add (k, fb_kx_add (k, im_p0, fb_kx_mul_c (k, r, g->OW)), ow);
          colbase = fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, ng, P), pix), Kg);
          colbase = fb_kx_add (k, colbase, fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, a, g->KW), b), Cg), ci));
        }
      else
        {
          if (im_body)
            {
              l = im_body;
              ci = im_index;
            }
          else
            l = _fb_lower_loop (k, body, fb_kx_index (k, Cg), &ci);
          l = _fb_lower_loop (k, l, fb_kx_index (k, g->KH), &a);
          l = _fb_lower_loop (k, l, fb_kx_index (k, g->KW), &b);
          l = _fb_lower_loop (k, l, rows, &r);
          l = _fb_lower_loop (k, l, fb_kx_index (k, g->OW), &ow);
          FbKExpr *kidx = fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, ci, g->KH), a), g->KW), b);
          colbase = fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, ng, Kg), kidx), P),
                               fb_kx_add (k, fb_kx_add (k, im_p0, fb_kx_mul_c (k, r, g->OW)), ow));
        }
      FbKExpr *ih = fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, oh0, r), g->sh), fb_kx_mul_c (k, a, g->dh));
      FbKExpr *iw = fb_kx_add (k, fb_kx_mul_c (k, ow, g->sw), fb_kx_mul_c (k, b, g->dw));
      FbKExpr *chan = fb_kx_add (k, fb_kx_mul_c (k, gi, Cg), ci);
      FbKExpr *xi = fb_kx_add (k, fb_kx_add (k, fb_kx_mul_c (k, n, _fb_lower_conv_xindex_stride (g, 0)),
                                             fb_kx_mul_c (k, chan, _fb_lower_conv_xindex_stride (g, 1))),
                               fb_kx_add (k, fb_kx_mul_c (k, ih, _fb_lower_conv_xindex_stride (g, 2)),
                                          fb_kx_mul_c (k, iw, _fb_lower_conv_xindex_stride (g, 3))));
      g_ptr_array_add (l, fb_ks_store (k, col, colbase, fb_kx_load (k, xa, xi)));
    }

  /* The tile's output channels: rows co0.. of the weights. */
  FbKExpr *w_off = fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, gi, Cog), co0), Kg);
  if (g->nhwc)
    {
      /* Y[pixels][Co] = col[pixels][Kg] x W[Cog][Kg]^T */
      FbKExpr *y_off = fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, n, P), p0), g->Co),
                                  fb_kx_add (k, fb_kx_mul_c (k, gi, Cog), co0));
      if (direct)
        _fb_lower_sgemm (c, body, FALSE, TRUE, npix, cols, fb_kx_index (k, Kg), xa,
                         fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, n, P), p0), g->C),
                                    fb_kx_mul_c (k, gi, Cg)), g->C,
                         wa, w_off, Kg, ya, y_off, g->Co);
      else
        _fb_lower_sgemm (c, body, FALSE, TRUE, npix, cols, fb_kx_index (k, Kg), col,
                         fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, ng, P), p0), Kg), Kg,
                         wa, w_off, Kg, ya, y_off, g->Co);
    }
  else
    {
      /* Y[Cog][pixels] = W[Cog][Kg] x col[Kg][pixels] */
      FbKExpr *y_off = fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_add (k, fb_kx_mul_c (k, n, g->Co), fb_kx_mul_c (k, gi, Cog)), co0), P), p0);
      if (direct)
        _fb_lower_sgemm (c, body, FALSE, FALSE, cols, npix, fb_kx_index (k, Kg),
                         wa, w_off, Kg, xa,
                         fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, n, g->C), fb_kx_mul_c (k, gi, Cg)), P), p0),
                         P, ya, y_off, P);
      else
        _fb_lower_sgemm (c, body, FALSE, FALSE, cols, npix, fb_kx_index (k, Kg),
                         wa, w_off, Kg, col, fb_kx_add (k, fb_kx_mul_c (k, ng, Kg * P), p0), P,
                         ya, y_off, P);
    }

  if (fb_node_input (node, 2) == NULL && !g_hash_table_contains (c->sunk, y))
    return TRUE;
  /* The epilogue over the tile: bias, then the sunk chain. */
  FbKExpr *c4[4], *co, *r, *ow;
  GPtrArray *l;
  if (g->nhwc)
    {
      l = _fb_lower_loop (k, body, rows, &r);
      l = _fb_lower_loop (k, l, fb_kx_index (k, g->OW), &ow);
      l = _fb_lower_loop (k, l, cols, &co);
    }
  else
    {
      l = _fb_lower_loop (k, body, cols, &co);
      l = _fb_lower_loop (k, l, rows, &r);
      l = _fb_lower_loop (k, l, tile_ow, &ow);
      ow = fb_kx_add (k, ow0, ow);
    }
  c4[0] = n;
  c4[1] = fb_kx_add (k, fb_kx_add (k, fb_kx_mul_c (k, gi, Cog), co0), co);
  c4[2] = fb_kx_add (k, oh0, r);
  c4[3] = ow;
  FbKExpr *yi = g->nhwc
    ? fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_add (k, fb_kx_mul_c (k, n, P), fb_kx_mul_c (k, c4[2], g->OW)), ow), g->Co), c4[1])
    : fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, n, g->Co), c4[1]), P),
                 fb_kx_add (k, fb_kx_mul_c (k, c4[2], g->OW), ow));
  return _fb_lower_conv_store (c, l, node, g, c4, fb_kx_load (k, ya, yi), error);
}

/* Mul m's operands as the tensor it scales (*x, of the product's shape) and the scale (*s, one
 * number per channel of a channels-last tensor of c channels, the same for every image
 * [1, 1, 1, c] or, where images > 1, one per image [images, 1, 1, c]). */
gboolean
_fb_lower_scale_operands (const FbNode *m, int64_t images, int64_t c, const FbValue **x,
                          const FbValue **s)
{
  const FbValue *y = m->outputs[0];
  if (m->n_inputs != 2 || y == NULL)
    return FALSE;
  for (int i = 0; i < 2; i++)
    {
      const FbValue *a = m->inputs[i], *b = m->inputs[1 - i];
      if (a == NULL || b == NULL || a->dtype != FB_DTYPE_FLOAT32 || b->dtype != FB_DTYPE_FLOAT32 ||
          !fb_shape_equal (&a->shape, &y->shape) || b->shape.rank != 4 ||
          !fb_shape_is_static (&b->shape) || (b->shape.dim[0] != 1 && b->shape.dim[0] != images) ||
          b->shape.dim[1] != 1 || b->shape.dim[2] != 1 || b->shape.dim[3] != c)
        continue;
      *x = a;
      *s = b;
      return TRUE;
    }
  return FALSE;
}

/* Whether a GPU convolution is a matrix-vector (or few-column matrix) product better done by
 * a generated kernel than by cuDNN: few output pixels P = N * OH * OW, so each weight is used
 * at most P times and a library's tiled implicit GEMM has no reuse to win back its fixed
 * cost (cuDNN took 8-161 us on an H200 for the 1x1-map squeeze-excitation convolutions of
 * EfficientNet-B0, 0.05 % of their roofline, where the work is 110 kFLOP). The generated
 * kernel (fb-lower-convnd.c) gives every output element its own item, summing over the input
 * channels of its group and the kernel's taps, bias and epilogue applied in registers; the
 * PTX mapping makes an item a block whose threads split the sum when the sum is long, a
 * thread otherwise. It reads the weights P times without reuse, so it must stay small:
 * - P <= 16: at most 16 reads of each weight (from L2 after the first);
 * - R = C/G * KH * KW <= 8192: one item's sum stays a few loads per thread of a block;
 * - P * Co * R <= 4 Mi multiply-adds: at most 32 MB of loads (a weight and an input each),
 *   of which at most 16 MB of weights come from memory and the rest from L1 or L2: a few
 *   microseconds, under cuDNN's measured floor for one call.
 * A batch of 1x1 maps (the same block over a batch of 32) is the same product with P columns:
 * it is taken up to 64 of them and, over two images or more, 16 Mi multiply-adds, its items
 * a warp each (rows of up to 1024 channels, read along the row): MobileNetV3-Large's 240 ->
 * 960 at batch 32 (7.4 Mi) took cuDNN 37 us on an H200.
 * Anything larger keeps cuDNN, whose tensor-core GEMMs win once the weights are reused. */
#define MATVEC_MAX_PIXELS 16
#define MATVEC_MAX_BATCH_OF_POINTS 64
#define MATVEC_MAX_REDUCTION 8192
#define MATVEC_MAX_MACS ((int64_t) 1 << 22)
#define MATVEC_MAX_MACS_OF_POINTS ((int64_t) 1 << 24)

static gboolean
gpu_matvec (const FbConvGeom *g)
{
  int64_t pixels = g->N * g->OH * g->OW, reduction = g->C / g->G * g->KH * g->KW;
  int64_t macs = pixels * g->Co * reduction;
  if (reduction > MATVEC_MAX_REDUCTION)
    return FALSE;
  if (pixels <= MATVEC_MAX_PIXELS && macs <= MATVEC_MAX_MACS)
    return TRUE;
  return g->OH * g->OW == 1 && pixels <= MATVEC_MAX_BATCH_OF_POINTS &&
         macs <= (g->N > 1 ? MATVEC_MAX_MACS_OF_POINTS : MATVEC_MAX_MACS);
}

/* Whether a GPU convolution is depthwise (a group per channel, one output channel each) with a
 * kernel a thread unrolls, of at most 32 channels or, channels-last at batch 1, of a 7x7 window
 * or wider: fb-lower-depthwise-gpu.c generates it, bias and epilogue included. Measured on an
 * H200 with every depthwise layer generated (FUSEBENCH_GPU_CONV=generated) against cuDNN's:
 * ConvNeXt-Tiny at batch 1 (7x7, 96 to 768 channels) 0.836 against 0.987 ms; EfficientNet-B0
 * at batch 32 (3x3 and 5x5 with SiLU) 2.558 against 2.048, where its widest layers took 2.5 to
 * 4 times cuDNN's time; MobileNetV3-Large at batch 32 (3x3 and 5x5) 1.319 against 1.363.
 * ConvNeXt at batch 32 was not measured generated: larger batches keep cuDNN's. */
#define DEPTHWISE_MAX_CHANNELS 32
#define DEPTHWISE_WIDE_TAPS    49

static gboolean
gpu_depthwise (const FbConvGeom *g, gboolean any_channels)
{
  gboolean wide = g->nhwc && g->N == 1 && g->KH * g->KW >= DEPTHWISE_WIDE_TAPS;
  return g->G > 1 && g->G == g->C && g->G == g->Co &&
         (any_channels || wide || g->C <= DEPTHWISE_MAX_CHANNELS) &&
         g->KH * g->KW <= FB_LOWER_DEPTHWISE_GPU_MAX_TAPS;
}

/* FUSEBENCH_GPU_CONV=cudnn sends every GPU convolution to cuDNN and "generated" every one a
 * generated kernel can do (depthwise ones of any width) to it, for measuring the two against
 * each other; unset or "auto", the rules above choose. */
static gboolean
gpu_conv_is (const char *choice)
{
  return g_strcmp0 (g_getenv ("FUSEBENCH_GPU_CONV"), choice) == 0;
}

gboolean
_fb_lower_conv_gpu_product (const FbLowerCtx *c, const FbNode *node, const FbConvGeom *g)
{
  return !gpu_conv_is ("cudnn") && !gpu_matvec (g) && !gpu_depthwise (g, gpu_conv_is ("generated")) &&
         _fb_lower_conv_product_gpu_fits (c, node, g);
}

gboolean
_fb_lower_conv (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbConvGeom g;
  if (!_fb_lower_conv_geom (node, &g, error))
    return FALSE;
  const FbValue *w = node->inputs[1];
  if (node->inputs[0]->dtype != FB_DTYPE_FLOAT32 || w->dtype != FB_DTYPE_FLOAT32)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "only float32 convolutions");
  if (g.nhwc && w->constant == NULL)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "channels-last convolution needs constant weights");
  gboolean taken = FALSE;
  gboolean gpu = _fb_lower_for_gpu (c);
  if (gpu && !gpu_conv_is ("cudnn") && gpu_matvec (&g))
    return _fb_lower_conv_direct (c, node, error);
  if (gpu && !gpu_conv_is ("cudnn") && gpu_depthwise (&g, gpu_conv_is ("generated")))
    return _fb_lower_depthwise_gpu (c, node, &g, error);
  if (gpu && _fb_lower_conv_gpu_product (c, node, &g))
    return _fb_lower_conv_product_gpu (c, node, &g, error);
  /* On a GPU every other float convolution goes to cuDNN, whatever its weights. */
  if ((gpu || _fb_lower_dnnl_conv_fits (node, &g)) &&
      !_fb_lower_dnnl_conv (c, node, &g, &taken, error))
    return FALSE;
  if (taken)
    return TRUE;
  if (g.G > 1 && g.G == g.C && g.G == g.Co)
    return lower_depthwise (c, node, &g, error);
  if (gpu)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "a convolution cuDNN cannot take has no GPU lowering");
  return lower_gemm_conv (c, node, &g, error);
}
