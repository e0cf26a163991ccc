/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Depthwise convolutions (a group per channel, one output channel each) on a GPU: a thread per
 * output element, its KH x KW taps unrolled when the kernel is lowered, so that every load of a
 * thread is issued before the first multiply waits for one. Taps that fall in the padding read
 * a clamped address and count zero: no padded copy of the input is made (a phase of its own
 * would stream the whole tensor out to memory and back). Channels-last, neighbouring threads
 * are neighbouring channels of one pixel: each tap is one coalesced read per warp, and the taps
 * neighbouring pixels share come from L1. The bias and the sunk epilogue (SiLU, Relu6...) are
 * applied in registers before the one store.
 *
 * cuDNN's grouped kernels ran EfficientNet-B0's depthwise layers at batch 32 at 0.6-0.8 TB/s
 * on an H200, with the bias and activation a pass of their own. A generated loop over the taps
 * at run time (fb-lower-convnd.c's direct convolution) measured no faster: each tap's load waited
 * for the previous one's sum. */
#include "fb-lower-conv.h"

/* Coordinate o * s + off along an input extent n, o in [0, n_o): the index to read (clamped
 * into the input where the window may leave it) and, where it may, the condition that it is
 * inside. */
static FbKExpr *
tap_coord (FbKernel *k, FbKExpr *o, int64_t s, int64_t off, int64_t n_o, int64_t n,
           FbKExpr **inside)
{
  FbKExpr *pos = fb_kx_add_c (k, fb_kx_mul_c (k, o, s), off);
  gboolean below = off < 0, above = (n_o - 1) * s + off > n - 1;
  *inside = NULL;
  if (below)
    *inside = fb_kx_binary (k, FB_KB_GE, pos, fb_kx_index (k, 0));
  if (above)
    {
      FbKExpr *lt = fb_kx_binary (k, FB_KB_LT, pos, fb_kx_index (k, n));
      *inside = *inside ? fb_kx_binary (k, FB_KB_AND, *inside, lt) : lt;
    }
  if (below)
    pos = fb_kx_binary (k, FB_KB_MAX, pos, fb_kx_index (k, 0));
  if (above)
    pos = fb_kx_binary (k, FB_KB_MIN, pos, fb_kx_index (k, n - 1));
  return pos;
}

/* Outputs a thread computes side by side along a row: the largest of 4, 2, 1 that divides the
 * row (FUSEBENCH_GPU_DEPTHWISE_STRIP sets it, for measuring). Neighbouring outputs share input
 * columns: a strip of four 3x3 outputs reads 18 values, not 36. */
static int64_t
strip_width (const FbConvGeom *g)
{
  const char *env = g_getenv ("FUSEBENCH_GPU_DEPTHWISE_STRIP");
  int64_t want = env ? CLAMP (g_ascii_strtoll (env, NULL, 10), 1, 8) : 4;
  for (int64_t t = want; t > 1; t--)
    if (g->OW % t == 0)
      return t;
  return 1;
}

gboolean
_fb_lower_depthwise_gpu (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g, GError **error)
{
  FbKernel *k = c->k;
  if (g->KH * g->KW > FB_LOWER_DEPTHWISE_GPU_MAX_TAPS)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "a depthwise kernel of %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                           " taps is past the %d a GPU thread unrolls", g->KH, g->KW,
                           FB_LOWER_DEPTHWISE_GPU_MAX_TAPS);
  guint xa = _fb_lower_arg (c, node->inputs[0], FB_KARG_INPUT);
  guint wa;
  if (!_fb_lower_depthwise_weights (c, node, g, &wa, error))
    return FALSE;

  /* One item per strip of T outputs along a row, in the output's memory order: channels
   * innermost in NHWC. */
  int64_t T = strip_width (g), OWT = g->OW / T;
  FbKExpr *lc[4], *n, *ch, *oh, *owt;
  double work = 2.0 * g->N * g->Co * g->OH * g->OW * g->KH * g->KW;
  GPtrArray *body;
  if (g->nhwc)
    {
      int64_t dims[4] = { g->N, g->OH, OWT, g->C };
      body = _fb_lower_nest (c, 4, dims, lc, work);
      n = lc[0]; oh = lc[1]; owt = lc[2]; ch = lc[3];
    }
  else
    {
      int64_t dims[4] = { g->N, g->C, g->OH, OWT };
      body = _fb_lower_nest (c, 4, dims, lc, work);
      n = lc[0]; ch = lc[1]; oh = lc[2]; owt = lc[3];
    }
  const char *vec = g_getenv ("FUSEBENCH_GPU_DEPTHWISE_VEC");
  FbKPhase *phase = g_ptr_array_index (k->phases, k->phases->len - 1);
  phase->one_item_a_thread = vec ? g_strcmp0 (vec, "0") == 0 : T > 1;

  /* Strides of the unpadded input, n c h w. */
  int64_t sn = g->C * g->H * g->W, sc = g->nhwc ? 1 : g->H * g->W;
  int64_t sh = g->nhwc ? g->W * g->C : g->W, sw = g->nhwc ? g->C : 1;
  FbKExpr *base = fb_kx_add (k, fb_kx_mul_c (k, n, sn), fb_kx_mul_c (k, ch, sc));
  FbKExpr *zero = fb_kx_const_f (k, FB_DTYPE_FLOAT32, 0.0);
  /* Input column j of the strip (j = t * stride + b * dilation), read once for every output
   * of the strip that uses it; the weights of a tap once for the strip. */
  int64_t cols = (T - 1) * g->sw + (g->KW - 1) * g->dw + 1;
  g_autofree FbKExpr **col = g_new0 (FbKExpr *, cols);
  g_autofree FbKExpr **col_in = g_new0 (FbKExpr *, cols);
  for (int64_t j = 0; j < cols; j++)
    col[j] = tap_coord (k, owt, T * g->sw, j - g->pl, OWT, g->W, &col_in[j]);
  g_autofree FbKExpr **sum = g_new0 (FbKExpr *, T);
  for (int64_t a = 0; a < g->KH; a++)
    {
      FbKExpr *row_in, *ih = tap_coord (k, oh, g->sh, a * g->dh - g->pt, g->OH, g->H, &row_in);
      FbKExpr *row = fb_kx_add (k, base, fb_kx_mul_c (k, ih, sh));
      g_autofree FbKExpr **xv = g_new0 (FbKExpr *, cols);
      for (int64_t j = 0; j < cols; j++)
        {
          xv[j] = fb_kx_load (k, xa, fb_kx_add (k, row, fb_kx_mul_c (k, col[j], sw)));
          FbKExpr *inside = row_in && col_in[j] ? fb_kx_binary (k, FB_KB_AND, row_in, col_in[j])
                          : row_in ? row_in : col_in[j];
          if (inside)
            xv[j] = fb_kx_select (k, inside, xv[j], zero);
        }
      for (int64_t b = 0; b < g->KW; b++)
        {
          FbKExpr *wi = g->nhwc ? fb_kx_add_c (k, ch, (a * g->KW + b) * g->C)
                                : fb_kx_add_c (k, fb_kx_mul_c (k, ch, g->KH * g->KW), a * g->KW + b);
          FbKExpr *wv = fb_kx_load (k, wa, wi);
          for (int64_t t = 0; t < T; t++)
            {
              FbKExpr *term = fb_kx_binary (k, FB_KB_MUL, xv[t * g->sw + b * g->dw], wv);
              sum[t] = sum[t] ? fb_kx_binary (k, FB_KB_ADD, sum[t], term) : term;
            }
        }
    }
  /* Every sum before the first store, so that no store stands between two reads of a column. */
  for (int64_t t = 0; t < T; t++)
    {
      guint acc = fb_kernel_new_acc (k, FB_DTYPE_FLOAT32);
      g_ptr_array_add (body, fb_ks_assign (k, acc, sum[t]));
      sum[t] = fb_kx_acc (k, acc);
    }
  for (int64_t t = 0; t < T; t++)
    {
      FbKExpr *c4[4] = { n, ch, oh, fb_kx_add_c (k, fb_kx_mul_c (k, owt, T), t) };
      if (!_fb_lower_conv_store (c, body, node, g, c4, sum[t], error))
        return FALSE;
    }
  return TRUE;
}
