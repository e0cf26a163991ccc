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
 * Measured on an H200 against cuDNN's grouped kernels (with the bias and activation a pass of
 * their own), at batch 32: faster on MobileNetV2's 32 channels at 112x112 with Clip (68 against
 * 100 us), slower on EfficientNet-B0's with SiLU (151 against 101) and on 96 to 1152 channels
 * (1.3 to 2.7 times cuDNN's time); so fb-lower-conv.c takes it for few channels, and for 7x7
 * windows at batch 1, where the channel blocks below measured faster than cuDNN. Strips of
 * outputs along a row a thread, sharing input columns, ran 5 to 20 times slower: several
 * stores an item kept the PTX mapping from spreading the nest over threads. */
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

/* The channels a run of pixels shares in the channels-last nest: 32 (a warp's 128-byte line)
 * where they divide the channels, else the largest of 16, 8 and 4 that does (a whole 32-byte
 * sector and a 16-byte vector at least); all of them when none does. */
static int64_t
channel_block (int64_t channels)
{
  for (int64_t b = 32; b >= 4; b /= 2)
    if (channels % b == 0)
      return b;
  return channels;
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

  /* One item per output element. Channels-last, the nest is [image, block of channels, row,
   * column, channel in the block]: a block of threads then covers a run of neighbouring pixels
   * of the same channels, whose windows overlap, so that most taps are L1 hits; in memory order
   * (every channel of a pixel, then the next pixel) a block of 1024 items held a few pixels of
   * 240 channels, and each of a 5x5 window's taps went to L2. */
  FbKExpr *lc[5], *c4[4];
  double work = 2.0 * g->N * g->Co * g->OH * g->OW * g->KH * g->KW;
  GPtrArray *body;
  int64_t cb = channel_block (g->C);
  if (g->nhwc)
    {
      int64_t dims[5] = { g->N, g->C / cb, g->OH, g->OW, cb };
      body = _fb_lower_nest (c, 5, dims, lc, work);
      c4[0] = lc[0]; c4[1] = fb_kx_add (k, fb_kx_mul_c (k, lc[1], cb), lc[4]);
      c4[2] = lc[2]; c4[3] = lc[3];
    }
  else
    {
      int64_t dims[4] = { g->N, g->C, g->OH, g->OW };
      body = _fb_lower_nest (c, 4, dims, lc, work);
      for (int i = 0; i < 4; i++)
        c4[i] = lc[i];
    }
  /* Strides of the unpadded input, n c h w. */
  int64_t sn = g->C * g->H * g->W, sc = g->nhwc ? 1 : g->H * g->W;
  int64_t sh = g->nhwc ? g->W * g->C : g->W, sw = g->nhwc ? g->C : 1;
  FbKExpr *base = fb_kx_add (k, fb_kx_mul_c (k, c4[0], sn), fb_kx_mul_c (k, c4[1], sc));
  FbKExpr *zero = fb_kx_const_f (k, FB_DTYPE_FLOAT32, 0.0), *sum = NULL;
  for (int64_t a = 0; a < g->KH; a++)
    {
      FbKExpr *row_in, *ih = tap_coord (k, c4[2], g->sh, a * g->dh - g->pt, g->OH, g->H, &row_in);
      for (int64_t b = 0; b < g->KW; b++)
        {
          FbKExpr *col_in, *iw = tap_coord (k, c4[3], g->sw, b * g->dw - g->pl, g->OW, g->W, &col_in);
          FbKExpr *xi = fb_kx_add (k, base, fb_kx_add (k, fb_kx_mul_c (k, ih, sh), fb_kx_mul_c (k, iw, sw)));
          FbKExpr *xv = fb_kx_load (k, xa, xi);
          FbKExpr *inside = row_in && col_in ? fb_kx_binary (k, FB_KB_AND, row_in, col_in)
                          : row_in ? row_in : col_in;
          if (inside)
            xv = fb_kx_select (k, inside, xv, zero);
          FbKExpr *wi = g->nhwc ? fb_kx_add_c (k, c4[1], (a * g->KW + b) * g->C)
                                : fb_kx_add_c (k, fb_kx_mul_c (k, c4[1], g->KH * g->KW), a * g->KW + b);
          FbKExpr *term = fb_kx_binary (k, FB_KB_MUL, xv, fb_kx_load (k, wa, wi));
          sum = sum ? fb_kx_binary (k, FB_KB_ADD, sum, term) : term;
        }
    }
  return _fb_lower_conv_store (c, body, node, g, c4, sum, error);
}
