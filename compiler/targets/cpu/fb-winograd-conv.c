/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The Winograd F(4x4, 3x3) channels-last convolution (see fb-winograd-conv.h). Plain C on
 * purpose: exported libraries compile this file as it is.
 *
 * An output tile of 4x4 pixels reads a 6x6 patch of the input. Per input channel the patch
 * becomes 36 numbers (V = B^T d B), per (output, input) channel pair the 3x3 weights become 36
 * (U = G g G^T, once, at creation), and the tile's output is A^T M A with M the 36 products
 * M[p] = sum over input channels of V[p] U[p]: for each of the 36 points p, a matrix product
 * [tiles x C] . [C x K]. Those products are the work (36 multiply-adds per tile and channel
 * pair against the direct convolution's 144); they run in the direct convolution's register
 * tile, 6 tiles by 16 output channels, twelve 8-float accumulators fed by two weight loads and
 * six broadcasts per input channel, or with AVX-512 6 tiles by 32 channels (two blocks of 16 of
 * the transformed weights) in twelve 16-float ones, the transforms then on 16 channels too.
 *
 * Where each of several threads would get few tiles (ResNet-50's 28x28 layers from two
 * threads on, its 56x56 ones from five), or the layer has more output channels than one
 * KCHUNK (use_phases), the whole batch runs in three phases instead
 * (run_phases): the threads share the input transform by tiles, the products by point and
 * output block (each transformed weight read once), the output transform by tiles. Otherwise
 * each thread takes an even share of the output chunks when they share out evenly (streaming
 * only their transformed weights), else of the tiles, and walks its tiles in blocks of at most
 * BLOCK. For a block and a chunk of KCHUNK output channels: per chunk of CCHUNK input
 * channels, the input transform writes V for the block, and the products add into M; then
 * the output transform reads M and applies the bias and post-ops while storing. V and M of a
 * block stay in L2 (BLOCK * 36 * (CCHUNK + KCHUNK) floats), one point's slices of V, M and U
 * in L1, and each transformed weight comes from L3 once per block, used BLOCK times. */
#include "fb-winograd-conv.h"
#include "fb-conv-post-ops.h"
#include "fb-direct-conv.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#define FB_WINOGRAD_X86 1
#endif

#define POINTS 36                   /* 6x6 transform points of a tile */
#define ROWS 6                      /* tiles of a register tile */
#define LANES 16                    /* output channels of a register tile: two AVX vectors */
#define BLOCK 24                    /* tiles of a block: a multiple of ROWS */
#define CCHUNK 64                   /* input channels transformed at once */
#define KCHUNK 64                   /* output channels accumulated at once: a multiple of LANES */

struct _FbWinogradConv {
  FbConvDesc d;
  int            isa;               /* the products' instructions: FB_CONV_ISA_AVX2 or _AVX512 */
  float         *u;                 /* weights as [36][kp / 16][c][16], zero-padded past co */
  int64_t        kp;                /* co rounded up to 16 (AVX2) or 32 (AVX-512: two blocks) */
  int64_t        th, tw;            /* tiles down and across a map */
  float         *scratch;           /* per thread: V [36][BLOCK][CCHUNK], M [36][BLOCK][KCHUNK] */
  int            scratch_threads;   /* threads it has room for */
  /* Run in phases (run_phases): V [36][tiles][vrow] and M [36][tiles][kp] of the whole batch,
   * the tiles rounded up to a register tile's, vrow the input channels rounded up to 16, in
   * the running thread's buffer (phase_buffers). */
  int64_t        vrow;
  size_t         v_point, m_point;  /* floats from one point's V (M) to the next */
};

/* Floats from one point's slice of V (of M) to the next: a block's slices plus one cache line,
 * so that the 36 lines a transform reads or writes fall in different L1 sets (at 6 KB apart
 * they fell in two of its 64). */
#define V_POINT (BLOCK * CCHUNK + 16)
#define M_POINT (BLOCK * KCHUNK + 16)
#define SCRATCH_FLOATS ((size_t) POINTS * (V_POINT + M_POINT))

/* The bounds, measured on two Zen 3 cores against fb-direct-conv.c on the same buffers
 * (3x3, pads 1, Relu, warm caches; README.md has the table). Winograd won 1.9 to 3.4x
 * wherever the map gives many tiles, down to 8 -> 32 channels (1.9x; oneDNN, which takes
 * fewer than 40 input channels, is at most 1.2x faster than the direct convolution there), and
 * lost where few tiles share the weights, which it streams 2.25 times as many of as the direct
 * convolution, once per block of tiles: 7x7 maps (4 tiles) 0.97 to 1.01x at 160 to 224
 * channels and 0.58x at 512; 10x10 (9 tiles) 1.18x at 256 channels but 0.84x at 512, 20x20 (25
 * tiles) at 512 1.35x; 12x12 at 128 1.8x. Hence: at least MIN_TILES tiles in the batch, and at
 * least one tile per TILE_WEIGHT_KB KB of one point's transformed weights (c * co floats). */
#define MIN_CHANNELS 8
#define MIN_TILES 9
#define TILE_WEIGHT_KB 64
/* With AVX-512 it stands against oneDNN's brgconv kernels instead, which run 3x3 layers near
 * the core's peak (README.md, "CPU math library"), and there the map decides, not the weights:
 * at least MIN_PIXELS_512 pixels in the batch, whatever the channels. Both stream a layer's
 * weights from memory once, Winograd four times as many of them for a quarter of the
 * multiply-adds, so its streaming falls behind the direct convolution's arithmetic only where
 * the map has fewer than about 8 pixels per FLOP-per-byte the processor has against its memory
 * (8 x 470 / 30 = 125 on two Zen 4 cores; about 160 by the same estimate on a 16-core Xeon),
 * and 256 leaves room for the transforms. Measured inside the models on two Zen 4 cores, with
 * wide layers in phases (use_phases): Winograd won 1.9x at 56x56 x 64 channels, 1.5x at 28x28 x
 * 128, and 1.25 to 2.45x on layers of 256 to 512 channels at 16x16 to 32x32 (U-Net, a DB
 * detector, VGG-19); it was even at 14x14 x 256 (ResNet-50), lost at 14x14 128 -> 32
 * (DenseNet-121: 61-72 against 46-50 us, one or two cores alike) and at 7x7 x 512 (0.70-0.76
 * against 0.83-1.03 ms). A batch of four 10x10 maps of 512 channels gained 1.4x. */
#define MIN_PIXELS_512 256

int
fb_winograd_conv_isa (void)
{
#ifdef FB_WINOGRAD_X86
  return fb_conv_vector_isa ();
#else
  return FB_CONV_ISA_NONE;
#endif
}

int
fb_winograd_conv_fits (const FbConvDesc *d)
{
#ifdef FB_WINOGRAD_X86
  if (d->transposed || d->groups != 1 || d->kh != 3 || d->kw != 3 || d->sh != 1 || d->sw != 1 ||
      d->dh != 1 || d->dw != 1 || d->c < MIN_CHANNELS || d->co < MIN_CHANNELS ||
      !fb_conv_post_ops_vectorized (d))
    return 0;
  double tiles = (double) d->n * ((d->oh + 3) / 4) * ((d->ow + 3) / 4);
  double pixels = (double) d->n * d->oh * d->ow;
  double point_kb = (double) d->c * d->co * sizeof (float) / 1024;
  const char *env = getenv ("FUSEBENCH_WINOGRAD");
  if (env != NULL && strcmp (env, "0") == 0)
    return 0;
  int isa = fb_winograd_conv_isa ();
  /* FUSEBENCH_WINOGRAD=1 takes every shape it can run, to compare. */
  if (env != NULL && strcmp (env, "1") == 0)
    return isa != FB_CONV_ISA_NONE;
  if (isa == FB_CONV_ISA_AVX512)
    return pixels >= MIN_PIXELS_512;
  return isa == FB_CONV_ISA_AVX2 && tiles >= MIN_TILES && tiles * TILE_WEIGHT_KB >= point_kb;
#else
  (void) d;
  return 0;
#endif
}

/* G, the weight transform of F(4x4, 3x3) for the points 0, 1, -1, 2, -2 and infinity. */
static const double G[6][3] = {
  { 1.0 / 4, 0, 0 },
  { -1.0 / 6, -1.0 / 6, -1.0 / 6 },
  { -1.0 / 6, 1.0 / 6, -1.0 / 6 },
  { 1.0 / 24, 1.0 / 12, 1.0 / 6 },
  { 1.0 / 24, -1.0 / 12, 1.0 / 6 },
  { 0, 0, 1 },
};

FbWinogradConv *
fb_winograd_conv_new (const FbConvDesc *d, const float *weights)
{
#ifndef FB_WINOGRAD_X86
  /* Nothing here could run it (fb_winograd_conv_fits never holds). */
  (void) d; (void) weights;
  return NULL;
#endif
  FbWinogradConv *conv = calloc (1, sizeof *conv);
  if (conv == NULL)
    return NULL;
  conv->d = *d;
  conv->isa = fb_winograd_conv_isa ();
  int64_t round = conv->isa == FB_CONV_ISA_AVX512 ? 2 * LANES : LANES;
  conv->kp = (d->co + round - 1) / round * round;
  conv->th = (d->oh + 3) / 4;
  conv->tw = (d->ow + 3) / 4;
  /* A line more than the tiles' rows, as V_POINT: the 36 points' rows fall in different L1
   * sets. */
  int64_t tiles_up = (d->n * conv->th * conv->tw + ROWS - 1) / ROWS * ROWS;
  conv->vrow = (d->c + 15) / 16 * 16;
  conv->v_point = (size_t) tiles_up * conv->vrow + 16;
  conv->m_point = (size_t) tiles_up * conv->kp + 16;
  size_t u_floats = (size_t) POINTS * conv->kp * d->c;
  conv->u = aligned_alloc (64, (u_floats * sizeof (float) + 63) / 64 * 64);
  if (conv->u == NULL)
    {
      fb_winograd_conv_free (conv);
      return NULL;
    }
  memset (conv->u, 0, u_floats * sizeof (float));
  const int64_t blocks = conv->kp / LANES;
  for (int64_t o = 0; o < d->co; o++)
    for (int64_t i = 0; i < d->c; i++)
      {
        /* In double: the transformed weights are rounded once, not at every step. */
        const float *g = weights + (o * d->c + i) * 9;
        double gt[6][3];
        for (int r = 0; r < 6; r++)
          for (int b = 0; b < 3; b++)
            gt[r][b] = G[r][0] * g[b] + G[r][1] * g[3 + b] + G[r][2] * g[6 + b];
        for (int r = 0; r < 6; r++)
          for (int s = 0; s < 6; s++)
            {
              double v = gt[r][0] * G[s][0] + gt[r][1] * G[s][1] + gt[r][2] * G[s][2];
              size_t at = (((size_t) (r * 6 + s) * blocks + o / LANES) * d->c + i) * LANES +
                          o % LANES;
              conv->u[at] = (float) v;
            }
      }
  return conv;
}

void
fb_winograd_conv_free (FbWinogradConv *conv)
{
  if (conv == NULL)
    return;
  free (conv->u);
  free (conv->scratch);
  free (conv);
}

#ifdef FB_WINOGRAD_X86

/* B^T applied to one line of six: the input transform along one axis. */
__attribute__ ((target ("avx2,fma"))) static inline void
input_line (const __m256 d[6], __m256 t[6])
{
  const __m256 two = _mm256_set1_ps (2), four = _mm256_set1_ps (4), five = _mm256_set1_ps (5);
  __m256 d4_d2 = _mm256_sub_ps (d[4], d[2]), d3_d1 = _mm256_sub_ps (d[3], d[1]);
  t[0] = _mm256_fnmadd_ps (five, d[2], _mm256_fmadd_ps (four, d[0], d[4]));
  t[1] = _mm256_fnmadd_ps (four, _mm256_add_ps (d[1], d[2]), _mm256_add_ps (d[3], d[4]));
  t[2] = _mm256_fmadd_ps (four, _mm256_sub_ps (d[1], d[2]), _mm256_sub_ps (d[4], d[3]));
  t[3] = _mm256_fmadd_ps (two, d3_d1, d4_d2);
  t[4] = _mm256_fnmadd_ps (two, d3_d1, d4_d2);
  t[5] = _mm256_fnmadd_ps (five, d[3], _mm256_fmadd_ps (four, d[1], d[5]));
}

/* A^T applied to one line of six: the output transform along one axis. */
__attribute__ ((target ("avx2,fma"))) static inline void
output_line (const __m256 m[6], __m256 o[4])
{
  __m256 s12 = _mm256_add_ps (m[1], m[2]), d12 = _mm256_sub_ps (m[1], m[2]);
  __m256 s34 = _mm256_add_ps (m[3], m[4]), d34 = _mm256_sub_ps (m[3], m[4]);
  o[0] = _mm256_add_ps (_mm256_add_ps (m[0], s12), s34);
  o[1] = _mm256_fmadd_ps (_mm256_set1_ps (2), d34, d12);
  o[2] = _mm256_fmadd_ps (_mm256_set1_ps (4), s34, s12);
  o[3] = _mm256_add_ps (_mm256_fmadd_ps (_mm256_set1_ps (8), d34, d12), m[5]);
}

/* Which tile of the whole batch tile t is. */
static inline void
tile_at (const FbWinogradConv *conv, int64_t t, int64_t *n, int64_t *ty, int64_t *tx)
{
  int64_t per_image = conv->th * conv->tw;
  *n = t / per_image;
  *ty = t % per_image / conv->tw;
  *tx = t % conv->tw;
}

/* Where tile t's 6x6 input patch lies: *corner, the index in x of its first pixel's channel c0
 * (perhaps outside the image: an index, never a pointer), which of its rows and columns are
 * inside the image, and (returned) whether all are. */
static inline int
patch_at (const FbWinogradConv *conv, int64_t t, int64_t c0, int64_t *corner, int row_in[6],
          int col_in[6])
{
  const FbConvDesc *d = &conv->d;
  int64_t n, ty, tx;
  tile_at (conv, t, &n, &ty, &tx);
  int64_t iy0 = ty * 4 - d->pt, ix0 = tx * 4 - d->pl;
  int inside = 1;
  for (int i = 0; i < 6; i++)
    {
      row_in[i] = iy0 + i >= 0 && iy0 + i < d->h;
      col_in[i] = ix0 + i >= 0 && ix0 + i < d->w;
      inside &= row_in[i] && col_in[i];
    }
  *corner = ((n * d->h + iy0) * d->w + ix0) * d->c + c0;
  return inside;
}

/* Where tile t's outputs lie: its image, its first output row and column, and how many of its
 * 4 rows and columns fall inside the output. */
static inline void
out_tile_at (const FbWinogradConv *conv, int64_t t, int64_t *n, int64_t *oy0, int64_t *ox0,
             int64_t *rows, int64_t *cols)
{
  const FbConvDesc *d = &conv->d;
  int64_t ty, tx;
  tile_at (conv, t, n, &ty, &tx);
  *oy0 = ty * 4;
  *ox0 = tx * 4;
  *rows = d->oh - *oy0 < 4 ? d->oh - *oy0 : 4;
  *cols = d->ow - *ox0 < 4 ? d->ow - *ox0 : 4;
}

/* V of one tile's 8 channels: B^T d B of the 6x6 patch at index at of x (its corner, perhaps
 * outside the image: an index, never a pointer, until a pixel is known inside), whose rows are
 * rs floats apart and pixels cs, into v (points ps floats apart). Interior: every pixel is
 * inside the image and all 8 channels are wanted, so no pixel or lane needs testing; a
 * constant where it is called, so that the compiler makes the fast copy apart. The loops are
 * unrolled for their arrays to live in registers rather than on the stack (with the plain
 * loads and stores where nothing needs testing, 64 -> 64 channels at 56x56 went from 0.87 to
 * 0.47 ms). */
__attribute__ ((target ("avx2,fma"), always_inline)) static inline void
transform_patch (const float *x, int64_t at, int64_t rs, int64_t cs, const int row_in[6],
                 const int col_in[6], int interior, int full, __m256i mask, float *v, size_t ps)
{
  __m256 rows[6][6];
#pragma GCC unroll 6
  for (int j = 0; j < 6; j++)
    {
      __m256 col[6], tc[6];
#pragma GCC unroll 6
      for (int i = 0; i < 6; i++)
        {
          if (interior)
            col[i] = _mm256_loadu_ps (x + at + i * rs + j * cs);
          else if (!(row_in[i] && col_in[j]))
            col[i] = _mm256_setzero_ps ();
          else if (full)
            col[i] = _mm256_loadu_ps (x + at + i * rs + j * cs);
          else
            col[i] = _mm256_maskload_ps (x + at + i * rs + j * cs, mask);
        }
      input_line (col, tc);
#pragma GCC unroll 6
      for (int r = 0; r < 6; r++)
        rows[r][j] = tc[r];
    }
#pragma GCC unroll 6
  for (int r = 0; r < 6; r++)
    {
      __m256 out[6];
      input_line (rows[r], out);
#pragma GCC unroll 6
      for (int s = 0; s < 6; s++)
        _mm256_storeu_ps (v + (size_t) (r * 6 + s) * ps, out[s]);
    }
}

/* V of tiles t0 .. t0 + nt - 1, input channels c0 .. c0 + cn - 1, into v [36][nt][ts]: points
 * ps floats apart, tiles ts (a block's scratch: V_POINT and CCHUNK). A patch's pixels in the
 * padding (or past the image) are zeros. */
__attribute__ ((target ("avx2,fma"))) static void
input_transform (const FbWinogradConv *conv, const float *x, int64_t t0, int64_t nt, int64_t c0,
                 int64_t cn, float *v, size_t ps, int64_t ts)
{
  const FbConvDesc *d = &conv->d;
  const __m256i lane = _mm256_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7);
  const int64_t rs = d->w * d->c, cs = d->c;
  for (int64_t t = 0; t < nt; t++)
    {
      int row_in[6], col_in[6];
      int64_t corner;
      int inside = patch_at (conv, t0 + t, c0, &corner, row_in, col_in);
      for (int64_t c = 0; c < cn; c += 8)
        {
          int full = c + 8 <= cn;
          __m256i mask = _mm256_cmpgt_epi32 (_mm256_set1_epi32 ((int) (cn - c)), lane);
          float *vt = v + t * ts + c;
          if (inside && full)
            transform_patch (x, corner + c, rs, cs, row_in, col_in, 1, 1, mask, vt, ps);
          else
            transform_patch (x, corner + c, rs, cs, row_in, col_in, 0, full, mask, vt, ps);
        }
    }
}

#define FMA_ROW(j, a, b)                                                                       \
  do {                                                                                         \
    __m256 vb = _mm256_broadcast_ss (v + (j) * vs + c);                                        \
    a = _mm256_fmadd_ps (vb, w0, a);                                                           \
    b = _mm256_fmadd_ps (vb, w1, b);                                                           \
  } while (0)

/* One register tile of one point's product: m [6 tiles][16] (rows ms floats apart) =, or +=
 * when accumulate, v [6 tiles][cn] (rows vs apart) . u [cn][16]. */
__attribute__ ((target ("avx2,fma"))) static void
product_tile (const float *v, int64_t vs, const float *u, int64_t cn, float *m, int64_t ms,
              int accumulate)
{
  __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  if (accumulate)
    {
      c00 = _mm256_load_ps (m + 0 * ms), c01 = _mm256_load_ps (m + 0 * ms + 8);
      c10 = _mm256_load_ps (m + 1 * ms), c11 = _mm256_load_ps (m + 1 * ms + 8);
      c20 = _mm256_load_ps (m + 2 * ms), c21 = _mm256_load_ps (m + 2 * ms + 8);
      c30 = _mm256_load_ps (m + 3 * ms), c31 = _mm256_load_ps (m + 3 * ms + 8);
      c40 = _mm256_load_ps (m + 4 * ms), c41 = _mm256_load_ps (m + 4 * ms + 8);
      c50 = _mm256_load_ps (m + 5 * ms), c51 = _mm256_load_ps (m + 5 * ms + 8);
    }
  else
    {
      c00 = _mm256_setzero_ps (), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
      c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    }
  for (int64_t c = 0; c < cn; c++)
    {
      __m256 w0 = _mm256_load_ps (u + c * LANES), w1 = _mm256_load_ps (u + c * LANES + 8);
      FMA_ROW (0, c00, c01);
      FMA_ROW (1, c10, c11);
      FMA_ROW (2, c20, c21);
      FMA_ROW (3, c30, c31);
      FMA_ROW (4, c40, c41);
      FMA_ROW (5, c50, c51);
    }
  _mm256_store_ps (m + 0 * ms, c00), _mm256_store_ps (m + 0 * ms + 8, c01);
  _mm256_store_ps (m + 1 * ms, c10), _mm256_store_ps (m + 1 * ms + 8, c11);
  _mm256_store_ps (m + 2 * ms, c20), _mm256_store_ps (m + 2 * ms + 8, c21);
  _mm256_store_ps (m + 3 * ms, c30), _mm256_store_ps (m + 3 * ms + 8, c31);
  _mm256_store_ps (m + 4 * ms, c40), _mm256_store_ps (m + 4 * ms + 8, c41);
  _mm256_store_ps (m + 5 * ms, c50), _mm256_store_ps (m + 5 * ms + 8, c51);
}

#define FMA_ROW_512(j, a, b)                                                                   \
  do {                                                                                         \
    __m512 vb = _mm512_set1_ps (v[(j) * vs + c]);                                              \
    a = _mm512_fmadd_ps (vb, w0, a);                                                           \
    b = _mm512_fmadd_ps (vb, w1, b);                                                           \
  } while (0)

/* The same with AVX-512 over 32 output channels, two blocks of u (u1 the second's): m [6
 * tiles][32] =, or +=, v [6][cn] . [u0 | u1]. Twelve 16-float accumulators fed by two loads
 * and six broadcasts per input channel, as the AVX2 tile, at twice the width. */
__attribute__ ((target ("avx512f,fma"))) static void
product_tile_512 (const float *v, int64_t vs, const float *u0, const float *u1, int64_t cn,
                  float *m, int64_t ms, int accumulate)
{
  __m512 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  if (accumulate)
    {
      c00 = _mm512_load_ps (m + 0 * ms), c01 = _mm512_load_ps (m + 0 * ms + 16);
      c10 = _mm512_load_ps (m + 1 * ms), c11 = _mm512_load_ps (m + 1 * ms + 16);
      c20 = _mm512_load_ps (m + 2 * ms), c21 = _mm512_load_ps (m + 2 * ms + 16);
      c30 = _mm512_load_ps (m + 3 * ms), c31 = _mm512_load_ps (m + 3 * ms + 16);
      c40 = _mm512_load_ps (m + 4 * ms), c41 = _mm512_load_ps (m + 4 * ms + 16);
      c50 = _mm512_load_ps (m + 5 * ms), c51 = _mm512_load_ps (m + 5 * ms + 16);
    }
  else
    {
      c00 = _mm512_setzero_ps (), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
      c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    }
  for (int64_t c = 0; c < cn; c++)
    {
      __m512 w0 = _mm512_load_ps (u0 + c * LANES), w1 = _mm512_load_ps (u1 + c * LANES);
      FMA_ROW_512 (0, c00, c01);
      FMA_ROW_512 (1, c10, c11);
      FMA_ROW_512 (2, c20, c21);
      FMA_ROW_512 (3, c30, c31);
      FMA_ROW_512 (4, c40, c41);
      FMA_ROW_512 (5, c50, c51);
    }
  _mm512_store_ps (m + 0 * ms, c00), _mm512_store_ps (m + 0 * ms + 16, c01);
  _mm512_store_ps (m + 1 * ms, c10), _mm512_store_ps (m + 1 * ms + 16, c11);
  _mm512_store_ps (m + 2 * ms, c20), _mm512_store_ps (m + 2 * ms + 16, c21);
  _mm512_store_ps (m + 3 * ms, c30), _mm512_store_ps (m + 3 * ms + 16, c31);
  _mm512_store_ps (m + 4 * ms, c40), _mm512_store_ps (m + 4 * ms + 16, c41);
  _mm512_store_ps (m + 5 * ms, c50), _mm512_store_ps (m + 5 * ms + 16, c51);
}

/* The output of tiles t0 .. t0 + nt - 1, output channels k0 .. k0 + kn - 1, from m [36][nt][ts]
 * (points ps floats apart, tiles ts; a block's scratch: M_POINT and KCHUNK): A^T M A, the
 * bias, the post-ops, stored where the tile lies inside the output. */
__attribute__ ((target ("avx2,fma"))) static void
output_transform (const FbWinogradConv *conv, const float *m, size_t ps, int64_t ts, int64_t t0,
                  int64_t nt, int64_t k0, int64_t kn, const float *bias, const float *add,
                  float *y)
{
  const FbConvDesc *d = &conv->d;
  const __m256i lane = _mm256_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t t = 0; t < nt; t++)
    {
      int64_t n, oy0, ox0, rows, cols;
      out_tile_at (conv, t0 + t, &n, &oy0, &ox0, &rows, &cols);
      for (int64_t k = 0; k < kn; k += 8)
        {
          __m256i mask = _mm256_cmpgt_epi32 (_mm256_set1_epi32 ((int) (kn - k)), lane);
          int full = k + 8 <= kn;
          __m256 cols6[4][6];
          /* Unrolled, for the arrays to stay in registers (see transform_patch). */
#pragma GCC unroll 6
          for (int s = 0; s < 6; s++)
            {
              __m256 line[6], o[4];
#pragma GCC unroll 6
              for (int r = 0; r < 6; r++)
                line[r] = _mm256_load_ps (m + (size_t) (r * 6 + s) * ps + t * ts + k);
              output_line (line, o);
#pragma GCC unroll 4
              for (int a = 0; a < 4; a++)
                cols6[a][s] = o[a];
            }
          __m256 b = bias ? _mm256_maskload_ps (bias + k0 + k, mask) : _mm256_setzero_ps ();
          for (int64_t a = 0; a < rows; a++)
            {
              __m256 o[4];
              output_line (cols6[a], o);
              for (int64_t c = 0; c < cols; c++)
                {
                  size_t pix = (size_t) ((n * d->oh + oy0 + a) * d->ow + ox0 + c);
                  size_t at = pix * (size_t) d->co + (size_t) (k0 + k);
                  float *out = y + pix * (size_t) fb_conv_desc_y_stride (d) + (size_t) (k0 + k);
                  __m256 val = fb_conv_post_ops (d, _mm256_add_ps (o[c], b), add ? add + at : NULL,
                                                 full, mask);
                  /* Masked stores are several times slower than plain ones on Zen. */
                  if (full)
                    _mm256_storeu_ps (out, val);
                  else
                    _mm256_maskstore_ps (out, mask, val);
                }
            }
        }
    }
}

/* The transforms again on 16 channels at a time, for AVX-512 processors: the same lines of
 * arithmetic (input_line, output_line) on 16-float vectors, the lanes past the channels masked
 * off. */
__attribute__ ((target ("avx512f"))) static inline void
input_line_512 (const __m512 d[6], __m512 t[6])
{
  const __m512 two = _mm512_set1_ps (2), four = _mm512_set1_ps (4), five = _mm512_set1_ps (5);
  __m512 d4_d2 = _mm512_sub_ps (d[4], d[2]), d3_d1 = _mm512_sub_ps (d[3], d[1]);
  t[0] = _mm512_fnmadd_ps (five, d[2], _mm512_fmadd_ps (four, d[0], d[4]));
  t[1] = _mm512_fnmadd_ps (four, _mm512_add_ps (d[1], d[2]), _mm512_add_ps (d[3], d[4]));
  t[2] = _mm512_fmadd_ps (four, _mm512_sub_ps (d[1], d[2]), _mm512_sub_ps (d[4], d[3]));
  t[3] = _mm512_fmadd_ps (two, d3_d1, d4_d2);
  t[4] = _mm512_fnmadd_ps (two, d3_d1, d4_d2);
  t[5] = _mm512_fnmadd_ps (five, d[3], _mm512_fmadd_ps (four, d[1], d[5]));
}

__attribute__ ((target ("avx512f"))) static inline void
output_line_512 (const __m512 m[6], __m512 o[4])
{
  __m512 s12 = _mm512_add_ps (m[1], m[2]), d12 = _mm512_sub_ps (m[1], m[2]);
  __m512 s34 = _mm512_add_ps (m[3], m[4]), d34 = _mm512_sub_ps (m[3], m[4]);
  o[0] = _mm512_add_ps (_mm512_add_ps (m[0], s12), s34);
  o[1] = _mm512_fmadd_ps (_mm512_set1_ps (2), d34, d12);
  o[2] = _mm512_fmadd_ps (_mm512_set1_ps (4), s34, s12);
  o[3] = _mm512_add_ps (_mm512_fmadd_ps (_mm512_set1_ps (8), d34, d12), m[5]);
}

/* transform_patch on 16 channels: a pixel outside the image or a lane outside mask reads 0. */
__attribute__ ((target ("avx512f"), always_inline)) static inline void
transform_patch_512 (const float *x, int64_t at, int64_t rs, int64_t cs, const int row_in[6],
                     const int col_in[6], int interior, __mmask16 mask, float *v, size_t ps)
{
  __m512 rows[6][6];
#pragma GCC unroll 6
  for (int j = 0; j < 6; j++)
    {
      __m512 col[6], tc[6];
#pragma GCC unroll 6
      for (int i = 0; i < 6; i++)
        {
          if (interior)
            col[i] = _mm512_loadu_ps (x + at + i * rs + j * cs);
          else if (!(row_in[i] && col_in[j]))
            col[i] = _mm512_setzero_ps ();
          else
            col[i] = _mm512_maskz_loadu_ps (mask, x + at + i * rs + j * cs);
        }
      input_line_512 (col, tc);
#pragma GCC unroll 6
      for (int r = 0; r < 6; r++)
        rows[r][j] = tc[r];
    }
#pragma GCC unroll 6
  for (int r = 0; r < 6; r++)
    {
      __m512 out[6];
      input_line_512 (rows[r], out);
#pragma GCC unroll 6
      for (int s = 0; s < 6; s++)
        _mm512_storeu_ps (v + (size_t) (r * 6 + s) * ps, out[s]);
    }
}

/* input_transform with AVX-512: V rows (ts floats) are a multiple of 16, so a chunk's last 16
 * lanes stay inside the row even where fewer channels are left. */
__attribute__ ((target ("avx512f"))) static void
input_transform_512 (const FbWinogradConv *conv, const float *x, int64_t t0, int64_t nt,
                     int64_t c0, int64_t cn, float *v, size_t ps, int64_t ts)
{
  const FbConvDesc *d = &conv->d;
  const int64_t rs = d->w * d->c, cs = d->c;
  for (int64_t t = 0; t < nt; t++)
    {
      int row_in[6], col_in[6];
      int64_t corner;
      int inside = patch_at (conv, t0 + t, c0, &corner, row_in, col_in);
      for (int64_t c = 0; c < cn; c += 16)
        {
          __mmask16 mask = cn - c >= 16 ? 0xffff : (__mmask16) ((1u << (cn - c)) - 1);
          float *vt = v + t * ts + c;
          if (inside && mask == 0xffff)
            transform_patch_512 (x, corner + c, rs, cs, row_in, col_in, 1, mask, vt, ps);
          else
            transform_patch_512 (x, corner + c, rs, cs, row_in, col_in, 0, mask, vt, ps);
        }
    }
}

/* output_transform with AVX-512. */
__attribute__ ((target ("avx512f"))) static void
output_transform_512 (const FbWinogradConv *conv, const float *m, size_t ps, int64_t ts,
                      int64_t t0, int64_t nt, int64_t k0, int64_t kn, const float *bias,
                      const float *add, float *y)
{
  const FbConvDesc *d = &conv->d;
  for (int64_t t = 0; t < nt; t++)
    {
      int64_t n, oy0, ox0, rows, cols;
      out_tile_at (conv, t0 + t, &n, &oy0, &ox0, &rows, &cols);
      for (int64_t k = 0; k < kn; k += 16)
        {
          __mmask16 mask = kn - k >= 16 ? 0xffff : (__mmask16) ((1u << (kn - k)) - 1);
          __m512 cols6[4][6];
#pragma GCC unroll 6
          for (int s = 0; s < 6; s++)
            {
              __m512 line[6], o[4];
#pragma GCC unroll 6
              for (int r = 0; r < 6; r++)
                line[r] = _mm512_loadu_ps (m + (size_t) (r * 6 + s) * ps + t * ts + k);
              output_line_512 (line, o);
#pragma GCC unroll 4
              for (int a = 0; a < 4; a++)
                cols6[a][s] = o[a];
            }
          __m512 b = bias ? _mm512_maskz_loadu_ps (mask, bias + k0 + k) : _mm512_setzero_ps ();
          for (int64_t a = 0; a < rows; a++)
            {
              __m512 o[4];
              output_line_512 (cols6[a], o);
              for (int64_t c = 0; c < cols; c++)
                {
                  size_t pix = (size_t) ((n * d->oh + oy0 + a) * d->ow + ox0 + c);
                  size_t at = pix * (size_t) d->co + (size_t) (k0 + k);
                  float *out = y + pix * (size_t) fb_conv_desc_y_stride (d) + (size_t) (k0 + k);
                  __m512 val = fb_conv_post_ops_512 (d, _mm512_add_ps (o[c], b),
                                                     add ? add + at : NULL, mask);
                  if (mask == 0xffff)
                    _mm512_storeu_ps (out, val);
                  else
                    _mm512_mask_storeu_ps (out, mask, val);
                }
            }
        }
    }
}

/* Tiles t0 .. t0 + nt - 1 (nt at most BLOCK), output chunks kc0 .. kc1 - 1 (of KCHUNK
 * channels), with the thread's scratch. */
static void
run_block (const FbWinogradConv *conv, const float *x, const float *bias, const float *add,
           float *y, int64_t t0, int64_t nt, int64_t kc0, int64_t kc1, float *scratch)
{
  const FbConvDesc *d = &conv->d;
  float *v = scratch, *m = scratch + (size_t) POINTS * V_POINT;
  const int64_t blocks = conv->kp / LANES, groups = (nt + ROWS - 1) / ROWS;
  for (int64_t k0 = kc0 * KCHUNK; k0 < conv->kp && k0 < kc1 * KCHUNK; k0 += KCHUNK)
    {
      int64_t kn = conv->kp - k0 < KCHUNK ? conv->kp - k0 : KCHUNK;
      for (int64_t c0 = 0; c0 < d->c; c0 += CCHUNK)
        {
          int64_t cn = d->c - c0 < CCHUNK ? d->c - c0 : CCHUNK;
          /* Blocks of output channels a product takes: 2 with AVX-512 (kn is a multiple of
           * 32 there). */
          const int64_t step = conv->isa == FB_CONV_ISA_AVX512 ? 2 : 1;
          if (step == 2)
            input_transform_512 (conv, x, t0, nt, c0, cn, v, V_POINT, CCHUNK);
          else
            input_transform (conv, x, t0, nt, c0, cn, v, V_POINT, CCHUNK);
          for (int64_t p = 0; p < POINTS; p++)
            for (int64_t ob = k0 / LANES; ob < (k0 + kn) / LANES; ob += step)
              {
                const float *u = conv->u + ((size_t) (p * blocks + ob) * d->c + c0) * LANES;
                for (int64_t g = 0; g < groups; g++)
                  {
                    const float *vg = v + (size_t) p * V_POINT + g * ROWS * CCHUNK;
                    float *mg = m + (size_t) p * M_POINT + g * ROWS * KCHUNK + (ob * LANES - k0);
                    if (step == 2)
                      product_tile_512 (vg, CCHUNK, u, u + (size_t) d->c * LANES, cn, mg, KCHUNK,
                                        c0 > 0);
                    else
                      product_tile (vg, CCHUNK, u, cn, mg, KCHUNK, c0 > 0);
                  }
              }
        }
      int64_t real = d->co - k0 < kn ? d->co - k0 : kn;
      if (conv->isa == FB_CONV_ISA_AVX512)
        output_transform_512 (conv, m, M_POINT, KCHUNK, t0, nt, k0, real, bias, add, y);
      else
        output_transform (conv, m, M_POINT, KCHUNK, t0, nt, k0, real, bias, add, y);
    }
}

/* Tiles t0 .. t1 - 1 through output chunks kc0 .. kc1 - 1, in blocks of whole register tiles
 * as even as BLOCK allows (50 tiles go as 18, 18 and 14, not 24, 24 and 2: each block streams
 * all the transformed weights of its chunks, however few tiles it has). */
static void
run_share (const FbWinogradConv *conv, const float *x, const float *bias, const float *add,
           float *y, int64_t t0, int64_t t1, int64_t kc0, int64_t kc1, float *scratch)
{
  int64_t groups = (t1 - t0 + ROWS - 1) / ROWS, per_block = BLOCK / ROWS;
  int64_t n_blocks = (groups + per_block - 1) / per_block;
  if (n_blocks == 0)
    return;
  int64_t size = (groups + n_blocks - 1) / n_blocks * ROWS;
  for (int64_t t = t0; t < t1; t += size)
    run_block (conv, x, bias, add, y, t, t1 - t < size ? t1 - t : size, kc0, kc1, scratch);
}

/* The whole batch in three phases, each shared among the threads and ended by the barrier of
 * its loop: the input transform of every tile into v [36][tiles][vrow], the 36 points'
 * products split by point and block of output channels into m [36][tiles][kp], and the output
 * transform of every tile. Each transformed weight is read once, by one thread, where the
 * blocked way makes every thread stream all the weights of its chunks for a handful of tiles
 * (ResNet-50's 28x28 layer on 16 threads: three tiles a thread). Called by every thread of a
 * team. */
static void
run_phases (const FbWinogradConv *conv, const float *x, const float *bias, const float *add,
            float *y, float *v, float *m)
{
  const FbConvDesc *d = &conv->d;
  const int wide = conv->isa == FB_CONV_ISA_AVX512;
  const int64_t tiles = d->n * conv->th * conv->tw, vrow = conv->vrow, kp = conv->kp;
  const size_t vps = conv->v_point, mps = conv->m_point;
  const int64_t cchunks = (d->c + CCHUNK - 1) / CCHUNK;
#pragma omp for schedule (static)
  for (int64_t i = 0; i < tiles * cchunks; i++)
    {
      int64_t t = i / cchunks, c0 = i % cchunks * CCHUNK;
      int64_t cn = d->c - c0 < CCHUNK ? d->c - c0 : CCHUNK;
      if (wide)
        input_transform_512 (conv, x, t, 1, c0, cn, v + t * vrow + c0, vps, vrow);
      else
        input_transform (conv, x, t, 1, c0, cn, v + t * vrow + c0, vps, vrow);
    }
  /* A unit is one point's product for one register tile's width of output channels (two
   * blocks of LANES with AVX-512), over every tile: its weights stay in L1 while the tiles
   * pass. */
  const int64_t blocks = kp / LANES, step = wide ? 2 : 1, per_point = blocks / step;
  const int64_t groups = (tiles + ROWS - 1) / ROWS;
#pragma omp for schedule (static)
  for (int64_t i = 0; i < POINTS * per_point; i++)
    {
      int64_t p = i / per_point, ob = i % per_point * step;
      const float *u = conv->u + (size_t) (p * blocks + ob) * d->c * LANES;
      for (int64_t g = 0; g < groups; g++)
        {
          const float *vg = v + p * vps + (size_t) g * ROWS * vrow;
          float *mg = m + p * mps + (size_t) g * ROWS * kp + ob * LANES;
          if (wide)
            product_tile_512 (vg, vrow, u, u + (size_t) d->c * LANES, d->c, mg, kp, 0);
          else
            product_tile (vg, vrow, u, d->c, mg, kp, 0);
        }
    }
  const int64_t kchunks = (d->co + KCHUNK - 1) / KCHUNK;
#pragma omp for schedule (static)
  for (int64_t i = 0; i < tiles * kchunks; i++)
    {
      int64_t t = i / kchunks, k0 = i % kchunks * KCHUNK;
      int64_t kn = d->co - k0 < KCHUNK ? d->co - k0 : KCHUNK;
      if (wide)
        output_transform_512 (conv, m + t * kp + k0, mps, kp, t, 1, k0, kn, bias, add, y);
      else
        output_transform (conv, m + t * kp + k0, mps, kp, t, 1, k0, kn, bias, add, y);
    }
}

/* Whether to run in phases: FUSEBENCH_WINOGRAD_PHASES=always or never, else where the
 * phases' buffers (V and M of the whole batch) stay under PHASE_BYTES and either several
 * threads would each have fewer than PHASE_TILES tiles the blocked way, or the output channels
 * make more than one KCHUNK: the blocked way transforms a block's input again for every chunk
 * of output channels, where the phases transform it once. Measured on one and two Zen 4 cores
 * (three 3x3 layers, AVX-512 and AVX2 alike): phases took 1.1 to 2.4x off every layer of 128
 * output channels or more (28x28 x 512: 45.9 -> 19.5 ms on one core), where at 64 the blocked
 * way stayed ahead (112x112: 4.2 against 6.5 ms). */
#define PHASE_TILES (2 * BLOCK)
#define PHASE_BYTES ((size_t) 32 << 20)

static int
use_phases (const FbWinogradConv *conv, int threads)
{
  const char *env = getenv ("FUSEBENCH_WINOGRAD_PHASES");
  if (env != NULL && strcmp (env, "always") == 0)
    return 1;
  if (env != NULL && strcmp (env, "never") == 0)
    return 0;
  const int64_t tiles = conv->d.n * conv->th * conv->tw;
  const int few_tiles = threads > 1 && tiles < (int64_t) threads * PHASE_TILES;
  return (few_tiles || conv->kp > KCHUNK) &&
         POINTS * (conv->v_point + conv->m_point) * sizeof (float) <= PHASE_BYTES;
}

/* The phases' V and M live in one buffer per thread that runs layers, grown to the largest
 * layer it has run and freed when the thread ends. A plan runs its layers one after another
 * on one thread, so they share it, where a buffer of each layer's own made U-Net's process
 * peak at 371 MB against 335. */
typedef struct {
  void  *base;
  size_t bytes;
} PhaseBuffer;

static pthread_key_t phase_key;
static pthread_once_t phase_once = PTHREAD_ONCE_INIT;
static int phase_key_made;

static void
phase_buffer_free (void *data)
{
  PhaseBuffer *b = data;
  free (b->base);
  free (b);
}

static void
phase_key_make (void)
{
  phase_key_made = pthread_key_create (&phase_key, phase_buffer_free) == 0;
}

/* The running thread's buffer, 64-byte aligned, room for conv's V and M; NULL when out of
 * memory. The rows past the last tile, up to a whole register tile, are summed (and thrown
 * away) too: they are zeroed, not left holding another layer's numbers. */
static float *
phase_buffers (const FbWinogradConv *conv)
{
  pthread_once (&phase_once, phase_key_make);
  if (!phase_key_made)
    return NULL;
  PhaseBuffer *b = pthread_getspecific (phase_key);
  if (b == NULL)
    {
      b = calloc (1, sizeof *b);
      if (b == NULL || pthread_setspecific (phase_key, b) != 0)
        {
          free (b);
          return NULL;
        }
    }
  size_t bytes = (POINTS * (conv->v_point + conv->m_point) + 16) * sizeof (float);
  if (b->bytes < bytes)
    {
      free (b->base);
      b->base = malloc (bytes);
      b->bytes = b->base == NULL ? 0 : bytes;
      if (b->base == NULL)
        return NULL;
    }
  float *v = (float *) (((uintptr_t) b->base + 63) & ~(uintptr_t) 63);
  const int64_t tiles = conv->d.n * conv->th * conv->tw;
  const int64_t tiles_up = (tiles + ROWS - 1) / ROWS * ROWS;
  if (tiles_up > tiles)
    for (int p = 0; p < POINTS; p++)
      memset (v + p * conv->v_point + tiles * conv->vrow, 0,
              (size_t) (tiles_up - tiles) * conv->vrow * sizeof (float));
  return v;
}

int
fb_winograd_conv_run (FbWinogradConv *conv, const float *x, const float *bias, const float *add,
                      float *y)
{
  const FbConvDesc *d = &conv->d;
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads ();
#endif
  if (use_phases (conv, threads))
    {
      float *v = phase_buffers (conv);
      if (v == NULL)
        return -1;
      float *m = v + POINTS * conv->v_point;
#pragma omp parallel num_threads (threads)
      run_phases (conv, x, bias, add, y, v, m);
      return 0;
    }
  if (conv->scratch_threads < threads)
    {
      free (conv->scratch);
      /* Zeroed: the rows of a last, partial register tile are summed (and thrown away) too,
       * and must not hold whatever the allocator left. */
      conv->scratch = calloc ((size_t) threads * SCRATCH_FLOATS + 16, sizeof (float));
      conv->scratch_threads = conv->scratch == NULL ? 0 : threads;
      if (conv->scratch == NULL)
        return -1;
    }
  /* 64-byte aligned whatever calloc gave. */
  float *scratch0 = (float *) (((uintptr_t) conv->scratch + 63) & ~(uintptr_t) 63);
  const int64_t tiles = d->n * conv->th * conv->tw, chunks = (conv->kp + KCHUNK - 1) / KCHUNK;
#pragma omp parallel num_threads (threads)
  {
    int64_t T = 1, me = 0;
#ifdef _OPENMP
    T = omp_get_num_threads ();
    me = omp_get_thread_num ();
#endif
    float *scratch = scratch0 + (size_t) me * SCRATCH_FLOATS;
    /* When the output chunks share out evenly, the threads split them, each transforming the
     * whole input (what it would do anyway, once per chunk) and streaming only its own
     * chunks' weights; else the tiles, each thread all the weights. */
    if (chunks % T == 0)
      run_share (conv, x, bias, add, y, 0, tiles, chunks * me / T, chunks * (me + 1) / T,
                 scratch);
    else
      run_share (conv, x, bias, add, y, tiles * me / T, tiles * (me + 1) / T, 0, chunks,
                 scratch);
  }
  return 0;
}

#else

int
fb_winograd_conv_run (FbWinogradConv *conv, const float *x, const float *bias, const float *add,
                      float *y)
{
  /* Unreachable: fb_winograd_conv_new makes none on other processors. */
  (void) conv; (void) x; (void) bias; (void) add; (void) y;
  return -1;
}

#endif
