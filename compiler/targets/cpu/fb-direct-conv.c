/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The direct channels-last convolution (see fb-direct-conv.h). Plain C on purpose: exported
 * libraries compile this file as it is.
 *
 * A tile is 6 output pixels by 16 output channels, twelve 8-float accumulators that stay in
 * registers for the whole reduction over the kernel's taps and the input channels: per input
 * channel, two loads of packed weights and six broadcasts of input values feed twelve FMAs,
 * which keeps both FMA pipes of a core busy. With AVX-512 a tile is 8 pixels by 32 channels:
 * sixteen 16-float accumulators of its 32 registers, fed by two loads and eight broadcasts. The
 * pixels run on in the order of the output (across row ends), so narrow maps (7x7, 14x14)
 * waste no lanes; a pixel whose tap falls in the padding reads a row of zeros instead, so
 * borders need no code of their own. Threads share the tiles (or, on small maps, the blocks of output channels); within its share a
 * thread keeps either all the weights or a few rows of the maps in its L2 cache (run_share). */
#include "fb-direct-conv.h"
#include "fb-conv-post-ops.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#define FB_DIRECT_X86 1
#endif

#define MAX_PIXELS 8                /* output pixels of a tile: 6 (AVX2), 8 (AVX-512) */
#define MAX_LANES 32                /* output channels of a tile: two vectors, 16 or 32 */
#define SMALL_MAP 256               /* pixels under which threads split the channel blocks */
#define MIN_CHANNELS 40             /* input channels under which oneDNN's kernels do better */
#define L2_BUDGET (384 << 10)       /* bytes of L2 (512 KB on Zen 3) a thread's rows and weights take */

struct _FbDirectConv {
  FbConvDesc d;
  int            isa;               /* FB_CONV_ISA_AVX2 or FB_CONV_ISA_AVX512 */
  int64_t        pixels, lanes;     /* the tile: 6 x 16 (AVX2) or 8 x 32 (AVX-512) */
  float         *packed;            /* weights as [co / lanes][kh][kw][c][lanes], zero-padded */
  float         *zero;              /* c + lanes zeros: what a tap in the padding reads */
  int64_t        blocks;            /* blocks of lanes output channels */
};

int
fb_conv_vector_isa (void)
{
#ifdef FB_DIRECT_X86
  __builtin_cpu_init ();
  int have = !(__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma"))
               ? FB_CONV_ISA_NONE
               : __builtin_cpu_supports ("avx512f") ? FB_CONV_ISA_AVX512 : FB_CONV_ISA_AVX2;
  const char *want = getenv ("FUSEBENCH_ISA");
  if (want == NULL || want[0] == '\0' || strcmp (want, "native") == 0)
    return have;
  int asked = strcmp (want, "avx512") == 0 ? FB_CONV_ISA_AVX512
            : strcmp (want, "avx2") == 0 ? FB_CONV_ISA_AVX2 : FB_CONV_ISA_NONE;
  return asked < have ? asked : have;
#else
  return FB_CONV_ISA_NONE;
#endif
}

int
fb_conv_isa (void)
{
  /* By default none on AVX-512 processors: oneDNN's brgconv kernels ran ResNet-50 faster
   * there than this convolution's AVX-512 tiles and than the AVX2 ones with Winograd (on the
   * 16-core Xeon: 38.8 against 43.7 and 42.3 ms on 2 threads, 8.6 against 10.5 and 18.7 on 16;
   * README.md, "CPU math library"). FUSEBENCH_ISA=avx512 asks for them, to compare. */
  int isa = fb_conv_vector_isa ();
  const char *want = getenv ("FUSEBENCH_ISA");
  int asked = want != NULL && strcmp (want, "avx512") == 0;
  return isa == FB_CONV_ISA_AVX512 && !asked ? FB_CONV_ISA_NONE : isa;
}

int
fb_direct_conv_fits (const FbConvDesc *d)
{
#ifdef FB_DIRECT_X86
  if (d->transposed || d->groups != 1 || d->kh * d->kw < 2 || d->c < MIN_CHANNELS ||
      !fb_conv_post_ops_vectorized (d))
    return 0;
  return fb_conv_isa () != FB_CONV_ISA_NONE;
#else
  (void) d;
  return 0;
#endif
}

FbDirectConv *
fb_direct_conv_new (const FbConvDesc *d, const float *weights)
{
#ifndef FB_DIRECT_X86
  /* Nothing here could run it (fb_direct_conv_fits never holds). */
  (void) d; (void) weights;
  return NULL;
#endif
  FbDirectConv *conv = calloc (1, sizeof *conv);
  if (conv == NULL)
    return NULL;
  conv->d = *d;
  conv->isa = fb_conv_isa ();
  conv->pixels = conv->isa == FB_CONV_ISA_AVX512 ? 8 : 6;
  conv->lanes = conv->isa == FB_CONV_ISA_AVX512 ? 32 : 16;
  const int64_t LANES = conv->lanes;
  conv->blocks = (d->co + LANES - 1) / LANES;
  size_t taps = (size_t) (d->kh * d->kw), per_block = taps * (size_t) d->c * LANES;
  size_t packed_bytes = (size_t) conv->blocks * per_block * sizeof (float);
  size_t zero_bytes = ((size_t) d->c + LANES) * sizeof (float);
  conv->packed = aligned_alloc (64, (packed_bytes + 63) / 64 * 64);
  conv->zero = aligned_alloc (64, (zero_bytes + 63) / 64 * 64);
  if (conv->packed == NULL || conv->zero == NULL)
    {
      fb_direct_conv_free (conv);
      return NULL;
    }
  memset (conv->packed, 0, packed_bytes);
  memset (conv->zero, 0, zero_bytes);
  for (int64_t o = 0; o < d->co; o++)
    for (int64_t i = 0; i < d->c; i++)
      for (int64_t a = 0; a < d->kh; a++)
        for (int64_t b = 0; b < d->kw; b++)
          conv->packed[(o / LANES) * per_block + ((size_t) (a * d->kw + b) * d->c + i) * LANES +
                       o % LANES] = weights[((o * d->c + i) * d->kh + a) * d->kw + b];
  return conv;
}

void
fb_direct_conv_free (FbDirectConv *conv)
{
  if (conv == NULL)
    return;
  free (conv->packed);
  free (conv->zero);
  free (conv);
}

#ifdef FB_DIRECT_X86

/* Bias, post-ops and the store of one pixel's 16 channels (fewer in the last block). */
__attribute__ ((target ("avx2,fma"))) static inline void
finish (const FbConvDesc *d, __m256 lo, __m256 hi, const float *bias, const float *add,
        float *y, __m256i m0, __m256i m1)
{
  if (bias)
    {
      lo = _mm256_add_ps (lo, _mm256_maskload_ps (bias, m0));
      hi = _mm256_add_ps (hi, _mm256_maskload_ps (bias + 8, m1));
    }
  lo = fb_conv_post_ops (d, lo, add, 0, m0);
  hi = fb_conv_post_ops (d, hi, add ? add + 8 : NULL, 0, m1);
  _mm256_maskstore_ps (y, m0, lo);
  _mm256_maskstore_ps (y + 8, m1, hi);
}

/* Where a tile's pixels are: pixels pix0 .. pix0 + np - 1 of image n in output order (past the
 * map's end: row -1). interior: every tap of every pixel falls inside the image, and base then
 * holds each pixel's corner in the input, from which one offset per tap finds the tap's input. */
typedef struct {
  int64_t      np;
  int64_t      ohj[MAX_PIXELS], owj[MAX_PIXELS];
  const float *base[MAX_PIXELS];
  int          interior;
} TileSpot;

static inline void
tile_spot (const FbDirectConv *conv, const float *x, int64_t n, int64_t pix0, TileSpot *t)
{
  const FbConvDesc *d = &conv->d;
  const int64_t P = d->oh * d->ow;
  t->np = conv->pixels;
  t->interior = 1;
  for (int64_t j = 0; j < t->np; j++)
    {
      int64_t q = pix0 + j;
      t->ohj[j] = q < P ? q / d->ow : -1;
      t->owj[j] = q < P ? q % d->ow : 0;
      int64_t ih = t->ohj[j] * d->sh - d->pt, iw = t->owj[j] * d->sw - d->pl;
      t->interior &= t->ohj[j] >= 0 && ih >= 0 && ih + (d->kh - 1) * d->dh < d->h && iw >= 0 &&
                     iw + (d->kw - 1) * d->dw < d->w;
      t->base[j] = t->interior ? x + ((n * d->h + ih) * d->w + iw) * d->c : NULL;
    }
}

/* The input each pixel of t reads at tap (kh, kw), into p: the zero row for a tap in the
 * padding. Returns 0 when no pixel's tap is inside (nothing to add). Only border tiles sort
 * each tap out pixel by pixel. */
static inline int
tap_inputs (const FbDirectConv *conv, const float *x, int64_t n, const TileSpot *t, int64_t kh,
            int64_t kw, const float **p)
{
  const FbConvDesc *d = &conv->d;
  if (t->interior)
    {
      int64_t off = (kh * d->dh * d->w + kw * d->dw) * d->c;
      for (int64_t j = 0; j < t->np; j++)
        p[j] = t->base[j] + off;
      return 1;
    }
  int any = 0;
  for (int64_t j = 0; j < t->np; j++)
    {
      int64_t ih = t->ohj[j] * d->sh + kh * d->dh - d->pt;
      int64_t iw = t->owj[j] * d->sw + kw * d->dw - d->pl;
      int inside = t->ohj[j] >= 0 && ih >= 0 && ih < d->h && iw >= 0 && iw < d->w;
      p[j] = inside ? x + ((n * d->h + ih) * d->w + iw) * d->c : conv->zero;
      any |= inside;
    }
  return any;
}

/* The addend and the output lines a tile ends with: asked for now, they arrive while the taps
 * are summed instead of stalling the stores (a residual was written long before and sits in
 * memory, and chunks visit every block's lines in strides the prefetchers do not follow). */
static inline void
prefetch_ends (const FbDirectConv *conv, const float *add, const float *y, int64_t n,
               int64_t pix0, int64_t ob)
{
  const FbConvDesc *d = &conv->d;
  const int64_t P = d->oh * d->ow;
  for (int64_t j = 0; j < conv->pixels && pix0 + j < P; j++)
    {
      int64_t at = (n * P + pix0 + j) * d->co + ob * conv->lanes;
      if (add && add != y)      /* in place, the addend is these output lines */
        _mm_prefetch ((const char *) (add + at), _MM_HINT_T0);
      _mm_prefetch ((const char *) (y + (n * P + pix0 + j) * fb_conv_desc_y_stride (d) + ob * conv->lanes),
                    _MM_HINT_T0);
    }
}

#define FMA_PIXEL(p, a, b)                                                                     \
  do {                                                                                         \
    __m256 xb = _mm256_broadcast_ss ((p) + ic);                                                \
    a = _mm256_fmadd_ps (xb, w0, a);                                                           \
    b = _mm256_fmadd_ps (xb, w1, b);                                                           \
  } while (0)

/* One AVX2 tile: 6 pixels from pix0 of image n (in output order), channels 16 ob .. 16 ob + 15. */
__attribute__ ((target ("avx2,fma"))) static void
tile_avx2 (const FbDirectConv *conv, const float *x, const float *bias, const float *add,
           float *y, int64_t n, int64_t pix0, int64_t ob)
{
  const FbConvDesc *d = &conv->d;
  const int64_t P = d->oh * d->ow, C = d->c, LANES = 16;
  TileSpot t;
  tile_spot (conv, x, n, pix0, &t);
  prefetch_ends (conv, add, y, n, pix0, ob);
  __m256 c00 = _mm256_setzero_ps (), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  const float *wb = conv->packed + ob * d->kh * d->kw * C * LANES;
  for (int64_t kh = 0; kh < d->kh; kh++)
    for (int64_t kw = 0; kw < d->kw; kw++)
      {
        const float *p[MAX_PIXELS];
        if (!tap_inputs (conv, x, n, &t, kh, kw, p))
          continue;
        const float *wk = wb + (kh * d->kw + kw) * C * LANES;
        const float *p0 = p[0], *p1 = p[1], *p2 = p[2], *p3 = p[3], *p4 = p[4], *p5 = p[5];
        for (int64_t ic = 0; ic < C; ic++)
          {
            __m256 w0 = _mm256_load_ps (wk + ic * LANES), w1 = _mm256_load_ps (wk + ic * LANES + 8);
            FMA_PIXEL (p0, c00, c01);
            FMA_PIXEL (p1, c10, c11);
            FMA_PIXEL (p2, c20, c21);
            FMA_PIXEL (p3, c30, c31);
            FMA_PIXEL (p4, c40, c41);
            FMA_PIXEL (p5, c50, c51);
          }
      }
  int64_t left = d->co - ob * LANES;
  __m256i lane = _mm256_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7);
  __m256i m0 = _mm256_cmpgt_epi32 (_mm256_set1_epi32 ((int) (left < LANES ? left : LANES)), lane);
  __m256i m1 = _mm256_cmpgt_epi32 (_mm256_set1_epi32 ((int) (left < LANES ? left : LANES) - 8),
                                   lane);
  const __m256 acc[6][2] = { { c00, c01 }, { c10, c11 }, { c20, c21 },
                             { c30, c31 }, { c40, c41 }, { c50, c51 } };
  const float *b = bias ? bias + ob * LANES : NULL;
  for (int j = 0; j < 6 && pix0 + j < P; j++)
    {
      int64_t at = (n * P + pix0 + j) * d->co + ob * LANES;
      finish (d, acc[j][0], acc[j][1], b, add ? add + at : NULL,
              y + (n * P + pix0 + j) * fb_conv_desc_y_stride (d) + ob * LANES, m0, m1);
    }
}

#define FMA_PIXEL_512(p, a, b)                                                                 \
  do {                                                                                         \
    __m512 xb = _mm512_set1_ps ((p)[ic]);                                                      \
    a = _mm512_fmadd_ps (xb, w0, a);                                                           \
    b = _mm512_fmadd_ps (xb, w1, b);                                                           \
  } while (0)

/* One AVX-512 tile: 8 pixels from pix0 of image n, channels 32 ob .. 32 ob + 31. */
__attribute__ ((target ("avx512f"))) static void
tile_avx512 (const FbDirectConv *conv, const float *x, const float *bias, const float *add,
             float *y, int64_t n, int64_t pix0, int64_t ob)
{
  const FbConvDesc *d = &conv->d;
  const int64_t P = d->oh * d->ow, C = d->c, LANES = 32;
  TileSpot t;
  tile_spot (conv, x, n, pix0, &t);
  prefetch_ends (conv, add, y, n, pix0, ob);
  __m512 c00 = _mm512_setzero_ps (), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m512 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  __m512 c60 = c00, c61 = c00, c70 = c00, c71 = c00;
  const float *wb = conv->packed + ob * d->kh * d->kw * C * LANES;
  for (int64_t kh = 0; kh < d->kh; kh++)
    for (int64_t kw = 0; kw < d->kw; kw++)
      {
        const float *p[MAX_PIXELS];
        if (!tap_inputs (conv, x, n, &t, kh, kw, p))
          continue;
        const float *wk = wb + (kh * d->kw + kw) * C * LANES;
        const float *p0 = p[0], *p1 = p[1], *p2 = p[2], *p3 = p[3];
        const float *p4 = p[4], *p5 = p[5], *p6 = p[6], *p7 = p[7];
        for (int64_t ic = 0; ic < C; ic++)
          {
            __m512 w0 = _mm512_load_ps (wk + ic * LANES);
            __m512 w1 = _mm512_load_ps (wk + ic * LANES + 16);
            FMA_PIXEL_512 (p0, c00, c01);
            FMA_PIXEL_512 (p1, c10, c11);
            FMA_PIXEL_512 (p2, c20, c21);
            FMA_PIXEL_512 (p3, c30, c31);
            FMA_PIXEL_512 (p4, c40, c41);
            FMA_PIXEL_512 (p5, c50, c51);
            FMA_PIXEL_512 (p6, c60, c61);
            FMA_PIXEL_512 (p7, c70, c71);
          }
      }
  int64_t left = d->co - ob * LANES;
  __mmask16 m0 = left >= 16 ? 0xffff : (__mmask16) ((1u << left) - 1);
  __mmask16 m1 = left >= 32 ? 0xffff : left <= 16 ? 0 : (__mmask16) ((1u << (left - 16)) - 1);
  const __m512 acc[8][2] = { { c00, c01 }, { c10, c11 }, { c20, c21 }, { c30, c31 },
                             { c40, c41 }, { c50, c51 }, { c60, c61 }, { c70, c71 } };
  const float *b = bias ? bias + ob * LANES : NULL;
  for (int j = 0; j < 8 && pix0 + j < P; j++)
    {
      int64_t at = (n * P + pix0 + j) * d->co + ob * LANES;
      __m512 lo = acc[j][0], hi = acc[j][1];
      if (b)
        {
          lo = _mm512_add_ps (lo, _mm512_maskz_loadu_ps (m0, b));
          hi = _mm512_add_ps (hi, _mm512_maskz_loadu_ps (m1, b + 16));
        }
      lo = fb_conv_post_ops_512 (d, lo, add ? add + at : NULL, m0);
      hi = fb_conv_post_ops_512 (d, hi, add ? add + at + 16 : NULL, m1);
      float *out = y + (n * P + pix0 + j) * fb_conv_desc_y_stride (d) + ob * LANES;
      _mm512_mask_storeu_ps (out, m0, lo);
      _mm512_mask_storeu_ps (out + 16, m1, hi);
    }
}

static inline void
tile (const FbDirectConv *conv, const float *x, const float *bias, const float *add, float *y,
      int64_t n, int64_t pix0, int64_t ob)
{
  if (conv->isa == FB_CONV_ISA_AVX512)
    tile_avx512 (conv, x, bias, add, y, n, pix0, ob);
  else
    tile_avx2 (conv, x, bias, add, y, n, pix0, ob);
}

/* Part i of n of block ob's packed weights, into L2. */
static void
prefetch_share (const FbDirectConv *conv, int64_t ob, int64_t i, int64_t n)
{
  const FbConvDesc *d = &conv->d;
  int64_t floats = d->kh * d->kw * d->c * conv->lanes;
  const float *w = conv->packed + ob * floats;
  for (int64_t f = floats * i / n / 16 * 16; f < floats * (i + 1) / n; f += 16)
    _mm_prefetch ((const char *) (w + f), _MM_HINT_T1);
}

/* Tiles t0 .. t1 - 1 of image n through channel blocks b0 .. b1 - 1. When the blocks' weights
 * fit in half of L2 together, each tile goes through all of them in turn, writing (and reading
 * the addend of) each output pixel's channels at once, front to back. Otherwise the tiles go
 * in chunks whose input and output rows fit in L2 beside one block's weights, each chunk
 * through every block, so the rows are read from memory once and the weights once a chunk. */
static void
run_share (const FbDirectConv *conv, const float *x, const float *bias, const float *add,
           float *y, int64_t n, int64_t t0, int64_t t1, int64_t b0, int64_t b1)
{
  const FbConvDesc *d = &conv->d;
  const int64_t PIXELS = conv->pixels;
  double block_bytes = (double) d->kh * d->kw * d->c * conv->lanes * sizeof (float);
  if (block_bytes * (b1 - b0) <= L2_BUDGET / 2)
    {
      for (int64_t t = t0; t < t1; t++)
        for (int64_t ob = b0; ob < b1; ob++)
          tile (conv, x, bias, add, y, n, t * PIXELS, ob);
      return;
    }
  double in_row = (double) d->w * d->c * sizeof (float);
  double out_row = (double) d->ow * d->co * sizeof (float) * (add && add != y ? 2 : 1);
  double budget = L2_BUDGET - block_bytes > (32 << 10) ? L2_BUDGET - block_bytes : (32 << 10);
  /* out_rows output rows read (out_rows - 1) * sh + (kh - 1) * dh + 1 input rows. */
  double per_out_row = out_row + in_row * d->sh;
  double fixed = in_row * ((d->kh - 1) * d->dh + 1 - d->sh);
  int64_t out_rows = (int64_t) ((budget - fixed) / per_out_row);
  if (out_rows < 1)
    out_rows = 1;
  int64_t chunk = (out_rows * d->ow + PIXELS - 1) / PIXELS;
  for (int64_t c0 = t0; c0 < t1; c0 += chunk)
    {
      int64_t c1 = c0 + chunk < t1 ? c0 + chunk : t1;
      for (int64_t ob = b0; ob < b1; ob++)
        for (int64_t t = c0; t < c1; t++)
          {
            /* The next block's weights come from memory (a network's weights do not stay in
             * cache from one inference to the next): each tile asks for its share of them,
             * so they arrive while this block is summed (7x7 maps of 512 channels use each
             * weight only 49 times, and waited on 9 MB of them). Smaller blocks than a
             * quarter of L2 the prefetcher keeps up with by itself. */
            if (ob + 1 < b1 && block_bytes >= L2_BUDGET / 3)
              prefetch_share (conv, ob + 1, t - c0, c1 - c0);
            tile (conv, x, bias, add, y, n, t * PIXELS, ob);
          }
    }
}

void
fb_direct_conv_run (FbDirectConv *conv, const float *x, const float *bias, const float *add,
                    float *y)
{
  const FbConvDesc *d = &conv->d;
  const int64_t PIXELS = conv->pixels;
  const int64_t tiles = (d->oh * d->ow + PIXELS - 1) / PIXELS, blocks = conv->blocks;
#pragma omp parallel
  {
    int64_t T = 1, me = 0;
#ifdef _OPENMP
    T = omp_get_num_threads ();
    me = omp_get_thread_num ();
#endif
    /* On a small map the threads split the channel blocks, each reading the whole (small)
     * input and only its own blocks' weights (which there outweigh the map); otherwise, or
     * when the blocks do not share out evenly (5 blocks on 2 threads: one waits a block),
     * the tiles, each thread reading its rows only. */
    int by_blocks = tiles * PIXELS <= SMALL_MAP && blocks >= 2 * T &&
                    (blocks % T == 0 || blocks >= 8 * T);
    for (int64_t n = 0; n < d->n; n++)
      if (by_blocks)
        run_share (conv, x, bias, add, y, n, 0, tiles, blocks * me / T, blocks * (me + 1) / T);
      else
        run_share (conv, x, bias, add, y, n, tiles * me / T, tiles * (me + 1) / T, 0, blocks);
  }
}

#else

void
fb_direct_conv_run (FbDirectConv *conv, const float *x, const float *bias, const float *add,
                    float *y)
{
  /* Unreachable: fb_direct_conv_new makes none on other processors. */
  (void) conv; (void) x; (void) bias; (void) add; (void) y;
}

#endif
