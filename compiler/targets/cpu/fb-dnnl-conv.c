/* SPDX-License-Identifier: GPL-3.0-or-later */
/* oneDNN convolutions and deconvolutions (see fb-dnnl-conv.h). Plain C on purpose: exported libraries compile
 * this file as it is. The primitive is made once per convolution; each run only points its
 * memory objects at the run's buffers. The convolutions fb-winograd-conv.c fits (3x3 stride-1
 * ones where it measured faster) run there, and of the rest those fb-direct-conv.c fits (most
 * KxK ones on processors with AVX2 but not AVX-512) there, instead of as a primitive. */
#include "fb-dnnl-conv.h"
#include "fb-conv-post-ops.h"
#include "fb-direct-conv.h"
#include "fb-winograd-conv.h"

#include <dnnl.h>
#include <dnnl_debug.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deconvolutions whose kernel tiles the output (kernel = stride, no pads or dilation, one
 * group: a detector's 2x2 stride-2 upsampling) are products, not convolutions: output row
 * ih * kh_stride + r, for every kernel row r, is input row ih times the weights of r, with
 * (kw, co) as its columns. oneDNN 2.6 runs such a deconvolution as a backward-data convolution
 * that steps through the kernel cells, at 16 GFLOP/s on a 64 -> 64 channel 160x160 one (two
 * AVX2 cores); as one matmul primitive per kernel row, writing the rows of the output it owns
 * through a strided destination, at 134.
 * A 1x1 convolution (stride 1, no pads) whose output is a Concat's strided piece is the same
 * product with one row, [n * h * w, c] x [c, co], its rows written straight into the
 * concatenation's: as a convolution primitive it writes a packed output that is then copied
 * there (copy_out), which took longer than the product itself (SqueezeNet's 16 -> 64 expansion
 * at 55x55 on one Zen 4 core: 0.16 ms, against 0.04 for ONNX Runtime's). */
#define FB_DNNL_MAX_ROWS 8

struct _FbDnnlConv {
  dnnl_primitive_t prim;
  dnnl_stream_t    stream;
  dnnl_memory_t    src, weights, bias, dst, add;
  void            *packed;          /* the reordered weights */
  int              has_bias;
  int              add_index;       /* position of the Add among the post-ops, or -1 */
  int              sum;             /* an Add in place: the output holds the residual */
  /* Set when the deconvolution runs as matmuls, one per kernel row, or a 1x1 convolution as
   * one (see above). */
  int              n_rows;
  dnnl_memory_t    row_weights[FB_DNNL_MAX_ROWS];
  int64_t          row_offset;      /* floats between the output rows of two kernel rows */
  int64_t          cols;            /* kw * co: the product's columns */
  int64_t          row_co;          /* co */
  float           *bias_cols;       /* the bias repeated for every kw */
  FbConvDesc   d;
  int              threads;         /* OpenMP's count when it was made: the primitive keeps it,
                                       the convolutions of our own are given it */
  int64_t          split;           /* post-ops from here on run after the primitive (see
                                       primitive_post_ops), d.n_post where none do */
  FbConvDesc       after;           /* d with only those post-ops */
  int              after_isa;       /* the vectors they run in (FB_CONV_ISA_*; none: floats) */
  float           *staged;          /* the primitive's output when a sum runs after it, or
                                       when it is copied into a strided output (copy_out) */
  int              copy_out;        /* d.y_stride's output: the primitive writes it packed, into
                                       staged, and the run copies that into the rows */
  /* A scaled input (d.scaled_input): conv (x * scale) is conv (x) with each input channel's
   * weights times its scale, so every run scales the plain weights into scaled and the
   * repack reorder packs them where the primitive reads its weights. */
  float           *plain;
  float           *scaled;
  dnnl_memory_t    scaled_mem;
  dnnl_primitive_t repack;
  FbDirectConv    *direct;          /* set: fb-direct-conv.c runs it, no primitive */
  FbWinogradConv  *winograd;        /* set: fb-winograd-conv.c runs it, no primitive */
};

static dnnl_engine_t engine;
static dnnl_status_t engine_status = dnnl_runtime_error;

static void
make_engine (void)
{
  engine_status = dnnl_engine_create (&engine, dnnl_cpu, 0);
}

static int
failed (dnnl_status_t s, const char *what, char *why, size_t why_len)
{
  if (s == dnnl_success)
    return 0;
  if (why && why_len)
    snprintf (why, why_len, "oneDNN %s: %s", what, dnnl_status2str (s));
  return 1;
}

/* The one CPU engine every primitive uses, made on first need. */
static int
engine_ready (char *why, size_t why_len)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once (&once, make_engine);
  return !failed (engine_status, "CPU engine", why, why_len);
}

static dnnl_alg_kind_t
eltwise_alg (const FbConvPost *p)
{
  switch (p->kind)
    {
    case FB_CONV_POST_RELU: return dnnl_eltwise_relu;
    case FB_CONV_POST_CLIP: return dnnl_eltwise_clip;
    case FB_CONV_POST_TANH: return dnnl_eltwise_tanh;
    case FB_CONV_POST_SIGMOID: return dnnl_eltwise_logistic;
    case FB_CONV_POST_SWISH: return dnnl_eltwise_swish;
    case FB_CONV_POST_HARD_SWISH: return dnnl_eltwise_hardswish;
    case FB_CONV_POST_GELU: return p->alpha != 0 ? dnnl_eltwise_gelu_tanh : dnnl_eltwise_gelu_erf;
    case FB_CONV_POST_MAX: return dnnl_eltwise_clip;
    case FB_CONV_POST_MIN: return dnnl_eltwise_clip;
    default: return dnnl_alg_kind_undef;
    }
}

/* The alpha and beta oneDNN's eltwise post-op for p takes: one bound of a clip for Max and Min,
 * the other infinite, so that nothing past it is cut (a Clip's absent bound is FLT_MAX, as the
 * operator defines it). */
static void
eltwise_params (const FbConvPost *p, float *alpha, float *beta)
{
  *alpha = p->kind == FB_CONV_POST_MIN ? -INFINITY : (float) p->alpha;
  *beta = p->kind == FB_CONV_POST_MAX ? INFINITY
        : p->kind == FB_CONV_POST_MIN ? (float) p->alpha : (float) p->beta;
}

/* d with its post-ops from i0 on only. */
static FbConvDesc
post_ops_from (const FbConvDesc *d, int64_t i0)
{
  FbConvDesc rest = *d;
  rest.n_post = d->n_post - i0;
  memmove (rest.post, d->post + i0, (size_t) rest.n_post * sizeof rest.post[0]);
  return rest;
}

/* From this many bytes of output a thread, the Sigmoid or Swish of a primitive on several
 * threads runs after it (primitive_post_ops). */
#define POST_OPS_OWN_BYTES (320 << 10)

/* How many of d's post-ops the primitive applies, on threads threads (0: a primitive that
 * takes them all, where that is what makes it fast: the deconvolution's rows); fb_dnnl_conv_run
 * applies the rest after it.
 * The chain is cut before the first Sigmoid or Swish where fb-conv-post-ops.h has vectors for
 * it and the rest: oneDNN 2.6's eltwise post-ops compute them at about 0.24 ns a float on a
 * Zen 4 core (inside brgconv_1x1 and the depthwise kernels: EfficientNet-B0's Swishes took
 * 1.47 of its 5.8 ms on one thread), ours at 0.13, on the output after the primitive. On one
 * thread every such convolution of EfficientNet-B0 gained (the model 5.8 -> 5.2 ms). On two,
 * those of 0.75 MB of output and more gained (the largest, 4.8 MB, 263 -> 218 us) and the
 * depthwise ones of 0.37-0.53 MB lost 8-10 us (the pass over the output reads halves the other
 * core wrote): hence a bound on the output a thread, which on many threads leaves nearly
 * every Swish in the primitive, as before. FUSEBENCH_OWN_POST_OPS=0 leaves every one in the
 * primitive, =1 takes every one out, to compare.
 * oneDNN 2.6's AVX-512 kernels (brgconv, brgconv_1x1) give every eltwise post-op of one
 * algorithm the parameters of the first of that algorithm in the chain: Min 0.3, the residual,
 * then Clip 0..6 came out clipped at 0.3 and not at 0 (tests/test-direct-conv.c, /sum). So the
 * chain is also cut before the first eltwise post-op that repeats an earlier one's algorithm
 * with other parameters. */
static int64_t
primitive_post_ops (const FbConvDesc *d, int threads)
{
  double out_bytes = 4.0 * (double) (d->n * d->oh * d->ow * d->co);
  const char *env = getenv ("FUSEBENCH_OWN_POST_OPS");
  int vectors = threads > 0 && fb_conv_vector_isa () != FB_CONV_ISA_NONE &&
                (threads == 1 || out_bytes / threads >= POST_OPS_OWN_BYTES ||
                 (env != NULL && strcmp (env, "1") == 0)) &&
                !(env != NULL && strcmp (env, "0") == 0);
  for (int64_t j = 0; j < d->n_post; j++)
    {
      int64_t kind = d->post[j].kind;
      if (vectors && (kind == FB_CONV_POST_SIGMOID || kind == FB_CONV_POST_SWISH))
        {
          FbConvDesc rest = post_ops_from (d, j);
          if (fb_conv_post_ops_vectorized (&rest))
            return j;
        }
      for (int64_t i = 0; i < j; i++)
        {
          dnnl_alg_kind_t alg = eltwise_alg (&d->post[j]);
          float lo_i, hi_i, lo_j, hi_j;
          eltwise_params (&d->post[i], &lo_i, &hi_i);
          eltwise_params (&d->post[j], &lo_j, &hi_j);
          if (alg != dnnl_alg_kind_undef && alg == eltwise_alg (&d->post[i]) &&
              (lo_i != lo_j || hi_i != hi_j))
            return j;
        }
    }
  return d->n_post;
}

/* Outputs of fewer floats than this get their post-ops on the calling thread: a parallel
 * region's start and join would cost more than the work. */
#define POST_OPS_SPLIT 16384
/* Floats a thread takes at a time of a packed output. */
#define POST_OPS_PIECE 4096

/* n floats of y from from (see apply_post_ops), add the Add's addend at the same floats or a
 * sum's y itself. */
static void
post_ops_piece (const FbConvDesc *after, int isa, const float *from, const float *add, float *y,
                int64_t n)
{
#if defined(__x86_64__)
  if (isa == FB_CONV_ISA_AVX512)
    {
      fb_conv_post_ops_run_512 (after, from, add, y, n);
      return;
    }
  if (isa == FB_CONV_ISA_AVX2)
    {
      fb_conv_post_ops_run_256 (after, from, add, y, n);
      return;
    }
#endif
  (void) isa;
  for (int64_t j = 0; j < n; j++)
    {
      float v = from[j];
      for (int64_t i = 0; i < after->n_post; i++)
        {
          const FbConvPost *p = &after->post[i];
          switch (p->kind)
            {
            case FB_CONV_POST_RELU: v = v < 0 ? (float) p->alpha * v : v; break;
            case FB_CONV_POST_CLIP: v = fminf (fmaxf (v, (float) p->alpha), (float) p->beta); break;
            case FB_CONV_POST_TANH: v = tanhf (v); break;
            case FB_CONV_POST_SIGMOID: v = 1 / (1 + expf (-v)); break;
            case FB_CONV_POST_SWISH: v = v / (1 + expf (-(float) p->alpha * v)); break;
            case FB_CONV_POST_HARD_SWISH:
              v *= fmaxf (0, fminf (1, (float) p->alpha * v + (float) p->beta));
              break;
            case FB_CONV_POST_GELU: v = fb_conv_gelu (v, p->alpha != 0); break;
            case FB_CONV_POST_ADD: case FB_CONV_POST_SUM: v += add[j]; break;
            case FB_CONV_POST_MAX: v = fmaxf (v, (float) p->alpha); break;
            case FB_CONV_POST_MIN: v = fminf (v, (float) p->alpha); break;
            default: break;
            }
        }
      y[j] = v;
    }
}

/* Piece k of a packed output's post-ops (apply_post_ops): POST_OPS_PIECE floats from k times
 * that on, fewer at the end. */
static inline void
post_ops_of_piece (const FbDnnlConv *conv, int64_t k, int64_t total, int sum, const float *from,
                   const float *add, float *y)
{
  int64_t at = k * POST_OPS_PIECE, n = total - at < POST_OPS_PIECE ? total - at : POST_OPS_PIECE;
  post_ops_piece (&conv->after, conv->after_isa, from + at, sum ? y + at : add ? add + at : NULL,
                  y + at, n);
}

/* Rows [r0, r1) of a strided output (apply_post_ops): each row's co floats, packed in from,
 * to its place in y; with no post-ops left, a copy. */
static inline void
post_ops_of_rows (const FbDnnlConv *conv, int64_t r0, int64_t r1, const float *from, float *y)
{
  int64_t co = conv->d.co, ys = fb_conv_desc_y_stride (&conv->d);
  for (int64_t r = r0; r < r1; r++)
    if (conv->after.n_post == 0)
      memcpy (y + r * ys, from + r * co, (size_t) co * sizeof (float));
    else
      post_ops_piece (&conv->after, conv->after_isa, from + r * co, NULL, y + r * ys, co);
}

/* The post-ops the primitive leaves (conv->after) on the output y. from holds the primitive's
 * output, packed; in place when it is y. With a sum among them, y holds the residual on entry.
 * The rows (pixels) of a strided output (d.y_stride: never with an Add or a sum, never in
 * place) lie that many floats apart in y: a thread takes whole rows, about POST_OPS_PIECE
 * floats of them at a time (one call a row of 64 floats had made the copy of SqueezeNet's
 * 55x55 expansion cost 0.1 ms, on one Zen 4 core, where the convolution took 0.05). */
static void
apply_post_ops (const FbDnnlConv *conv, const float *from, const float *add, float *y)
{
  const FbConvDesc *d = &conv->d, *after = &conv->after;
  int64_t co = d->co, rows = d->n * d->oh * d->ow, total = rows * co;
  int split = total >= POST_OPS_SPLIT;
  if (fb_conv_desc_y_stride (d) != co)
    {
      int64_t per = co < POST_OPS_PIECE ? POST_OPS_PIECE / co : 1, pieces = (rows + per - 1) / per;
#pragma omp parallel for schedule (static) if (split)
      for (int64_t k = 0; k < pieces; k++)
        post_ops_of_rows (conv, k * per, (k + 1) * per < rows ? (k + 1) * per : rows, from, y);
      return;
    }
  int sum = 0;
  for (int64_t i = 0; i < after->n_post; i++)
    sum |= after->post[i].kind == FB_CONV_POST_SUM;
  int64_t pieces = (total + POST_OPS_PIECE - 1) / POST_OPS_PIECE;
#pragma omp parallel for schedule (static) if (split)
  for (int64_t k = 0; k < pieces; k++)
    post_ops_of_piece (conv, k, total, sum, from, add, y);
}

/* The first n of d's post-ops as oneDNN's. */
static dnnl_status_t
post_ops (const FbConvDesc *d, int64_t n, const dnnl_memory_desc_t *dst_md,
          dnnl_primitive_attr_t attr)
{
  dnnl_post_ops_t ops;
  dnnl_status_t s = dnnl_post_ops_create (&ops);
  if (s != dnnl_success)
    return s;
  for (int64_t i = 0; i < n && s == dnnl_success; i++)
    {
      const FbConvPost *p = &d->post[i];
      if (p->kind == FB_CONV_POST_ADD)
        s = dnnl_post_ops_append_binary (ops, dnnl_binary_add, dst_md);
      else if (p->kind == FB_CONV_POST_SUM)
        /* dst = this point of the chain + dst as it was. The kernels read each output block
         * before their first store to it, also where they split the reduction into passes
         * over the output; a binary post-op reading the output's own bytes would see those
         * passes' partial sums there. */
        s = dnnl_post_ops_append_sum (ops, 1.0f);
      else if (eltwise_alg (p) != dnnl_alg_kind_undef)
        {
          float alpha, beta;
          eltwise_params (p, &alpha, &beta);
          s = dnnl_post_ops_append_eltwise (ops, 1.0f, eltwise_alg (p), alpha, beta);
        }
      else
        s = dnnl_invalid_arguments;
    }
  if (s == dnnl_success)
    s = dnnl_primitive_attr_set_post_ops (attr, ops);
  dnnl_post_ops_destroy (ops);
  return s;
}

/* The weights of d in the given layout: tag any, or the plain one they arrive in (OIHW for a
 * convolution; ONNX's [C, Co/G, kh, kw] for a deconvolution, which oneDNN, whose weights
 * dimensions are always output channels first, calls IOHW). */
static dnnl_status_t
weights_md (const FbConvDesc *d, dnnl_format_tag_t tag, dnnl_memory_desc_t *md)
{
  if (d->groups > 1)
    {
      dnnl_dims_t w_dims = { d->groups, d->co / d->groups, d->c / d->groups, d->kh, d->kw };
      if (tag == dnnl_format_tag_undef)
        tag = d->transposed ? dnnl_giohw : dnnl_goihw;
      return dnnl_memory_desc_init_by_tag (md, 5, w_dims, dnnl_f32, tag);
    }
  dnnl_dims_t w_dims = { d->co, d->c, d->kh, d->kw };
  if (tag == dnnl_format_tag_undef)
    tag = d->transposed ? dnnl_iohw : dnnl_oihw;
  return dnnl_memory_desc_init_by_tag (md, 4, w_dims, dnnl_f32, tag);
}

/* The primitive descriptor for d with its first n_prim post-ops, the weights' layout left to
 * oneDNN; its output packed whatever d->y_stride says (see fb_dnnl_conv_new). */
static dnnl_status_t
describe (const FbConvDesc *d, int64_t n_prim, dnnl_memory_desc_t *src_md,
          dnnl_memory_desc_t *dst_md, dnnl_memory_desc_t *bias_md, dnnl_primitive_desc_t *pd)
{
  dnnl_dims_t src_dims = { d->n, d->c, d->h, d->w }, dst_dims = { d->n, d->co, d->oh, d->ow };
  dnnl_dims_t bias_dims = { d->co };
  dnnl_memory_desc_t w_md;
  dnnl_status_t s = dnnl_memory_desc_init_by_tag (src_md, 4, src_dims, dnnl_f32, dnnl_nhwc);
  if (s == dnnl_success)
    s = dnnl_memory_desc_init_by_tag (dst_md, 4, dst_dims, dnnl_f32, dnnl_nhwc);
  if (s == dnnl_success)
    s = dnnl_memory_desc_init_by_tag (bias_md, 1, bias_dims, dnnl_f32, dnnl_x);
  if (s == dnnl_success)
    s = weights_md (d, dnnl_format_tag_any, &w_md);
  if (s != dnnl_success)
    return s;
  /* oneDNN counts dilation from 0 (dense). */
  dnnl_dims_t strides = { d->sh, d->sw }, dilates = { d->dh - 1, d->dw - 1 };
  dnnl_dims_t pad_l = { d->pt, d->pl }, pad_r = { d->pb, d->pr };
  dnnl_convolution_desc_t cd;
  dnnl_deconvolution_desc_t dd;
  if (d->transposed)
    s = dnnl_dilated_deconvolution_forward_desc_init (&dd, dnnl_forward_inference,
                                                      dnnl_deconvolution_direct, src_md, &w_md,
                                                      d->has_bias ? bias_md : NULL, dst_md,
                                                      strides, dilates, pad_l, pad_r);
  else
    s = dnnl_dilated_convolution_forward_desc_init (&cd, dnnl_forward_inference,
                                                    dnnl_convolution_direct, src_md, &w_md,
                                                    d->has_bias ? bias_md : NULL, dst_md,
                                                    strides, dilates, pad_l, pad_r);
  dnnl_primitive_attr_t attr;
  if (s == dnnl_success)
    s = dnnl_primitive_attr_create (&attr);
  if (s != dnnl_success)
    return s;
  s = post_ops (d, n_prim, dst_md, attr);
  if (s == dnnl_success)
    s = dnnl_primitive_desc_create (pd, d->transposed ? (const_dnnl_op_desc_t) &dd
                                                      : (const_dnnl_op_desc_t) &cd,
                                    attr, engine, NULL);
  dnnl_primitive_attr_destroy (attr);
  return s;
}

/* Copies plain memory of layout from into the layout want. */
static dnnl_status_t
reorder (const dnnl_memory_desc_t *from_md, const void *from_data, const dnnl_memory_desc_t *want,
         void *to_data, dnnl_stream_t stream)
{
  dnnl_memory_t from = NULL, to = NULL;
  dnnl_primitive_desc_t rpd = NULL;
  dnnl_primitive_t prim = NULL;
  dnnl_status_t s = dnnl_memory_create (&from, from_md, engine, (void *) from_data);
  if (s == dnnl_success)
    s = dnnl_memory_create (&to, want, engine, to_data);
  if (s == dnnl_success)
    s = dnnl_reorder_primitive_desc_create (&rpd, from_md, engine, want, engine, NULL);
  if (s == dnnl_success)
    s = dnnl_primitive_create (&prim, rpd);
  if (s == dnnl_success)
    {
      dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, from }, { DNNL_ARG_TO, to } };
      s = dnnl_primitive_execute (prim, stream, 2, args);
    }
  if (s == dnnl_success)
    s = dnnl_stream_wait (stream);
  if (prim)
    dnnl_primitive_destroy (prim);
  if (rpd)
    dnnl_primitive_desc_destroy (rpd);
  if (to)
    dnnl_memory_destroy (to);
  if (from)
    dnnl_memory_destroy (from);
  return s;
}

/* For a scaled input: a copy of the plain weights, room for the scaled ones, and the reorder
 * from those into the primitive's layout (packed), made once. */
static dnnl_status_t
make_repack (FbDnnlConv *conv, const FbConvDesc *d, const dnnl_memory_desc_t *want,
             const float *weights)
{
  size_t n = (size_t) (d->co * d->c * d->kh * d->kw), bytes = (n * sizeof (float) + 63) / 64 * 64;
  conv->plain = aligned_alloc (64, bytes);
  conv->scaled = aligned_alloc (64, bytes);
  if (conv->plain == NULL || conv->scaled == NULL)
    return dnnl_out_of_memory;
  memcpy (conv->plain, weights, n * sizeof (float));
  dnnl_memory_desc_t plain;
  dnnl_primitive_desc_t rpd = NULL;
  dnnl_status_t s = weights_md (d, dnnl_format_tag_undef, &plain);
  if (s == dnnl_success)
    s = dnnl_memory_create (&conv->scaled_mem, &plain, engine, conv->scaled);
  if (s == dnnl_success)
    s = dnnl_reorder_primitive_desc_create (&rpd, &plain, engine, want, engine, NULL);
  if (s == dnnl_success)
    s = dnnl_primitive_create (&conv->repack, rpd);
  if (rpd)
    dnnl_primitive_desc_destroy (rpd);
  return s;
}

/* The weights for this run's scale: w[o][c][k] * scale[c], packed. One group (the description
 * says so), so c runs over every input channel. */
static dnnl_status_t
repack_scaled (FbDnnlConv *conv, const float *scale)
{
  const FbConvDesc *d = &conv->d;
  int64_t taps = d->kh * d->kw;
  for (int64_t o = 0; o < d->co; o++)
    for (int64_t c = 0; c < d->c; c++)
      {
        const float *from = conv->plain + (o * d->c + c) * taps;
        float *to = conv->scaled + (o * d->c + c) * taps;
        for (int64_t k = 0; k < taps; k++)
          to[k] = from[k] * scale[c];
      }
  dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, conv->scaled_mem }, { DNNL_ARG_TO, conv->weights } };
  return dnnl_primitive_execute (conv->repack, conv->stream, 2, args);
}

/* Copies the plain weights into the layout the primitive chose. */
static dnnl_status_t
reorder_weights (const FbConvDesc *d, const dnnl_memory_desc_t *want, const float *weights,
                 dnnl_stream_t stream, void *packed)
{
  dnnl_memory_desc_t plain;
  dnnl_status_t s = weights_md (d, dnnl_format_tag_undef, &plain);
  return s == dnnl_success ? reorder (&plain, weights, want, packed, stream) : s;
}

/* Input channels up to which a 1x1 convolution with a strided output runs as a product (see
 * the top). Its copy costs the output's bytes, the product's slowness its multiply-adds: on two
 * Zen 4 cores, SqueezeNet's expansions of 16 and 32 channels at 55x55 and 27x27 took 0.06 and
 * 0.043 ms as products against 0.09-0.11 and 0.058-0.065 as brgconv_1x1 and the copy, those
 * of 48 and 64 channels at 13x13 the same either way, and Inception's of 576 channels at 14x14
 * 0.135 against 0.105. */
#define POINTWISE_MAX_CHANNELS 64

/* Whether d can run as products (see the top), whatever its output's stride: a deconvolution
 * its kernel rows tile, or a 1x1 convolution of up to POINTWISE_MAX_CHANNELS input channels;
 * either with no addend and every post-op in the product. */
static int
product_shaped (const FbConvDesc *d)
{
  int adds = 0;
  for (int64_t i = 0; i < d->n_post; i++)
    adds += d->post[i].kind == FB_CONV_POST_ADD || d->post[i].kind == FB_CONV_POST_SUM;
  int unpadded = d->dh == 1 && d->dw == 1 && d->pt == 0 && d->pl == 0 && d->pb == 0 && d->pr == 0;
  int tiled = d->transposed && d->kh == d->sh && d->kw == d->sw && d->oh == d->h * d->sh &&
              d->ow == d->w * d->sw && d->kh <= FB_DNNL_MAX_ROWS;
  int pointwise = !d->transposed && !d->scaled_input && d->kh == 1 && d->kw == 1 &&
                  d->sh == 1 && d->sw == 1 && d->c <= POINTWISE_MAX_CHANNELS;
  return d->groups == 1 && unpadded && (tiled || pointwise) && adds == 0 &&
         primitive_post_ops (d, 0) == d->n_post;
}

/* Whether d runs as products: a deconvolution its kernel rows tile, or a 1x1 convolution
 * writing a strided output (packed, the convolution primitive is as fast). */
static int
rows_fit (const FbConvDesc *d)
{
  return product_shaped (d) && (d->transposed || fb_conv_desc_y_stride (d) != d->co);
}

/* The product of one kernel row: [n * h, w, c] x [c, kw * co] into the output's rows of that
 * kernel row, [n * h, w, kw * co] with rows sh * ow * co apart; for a 1x1 convolution
 * [n * h, w, c] x [c, co] into rows the output's stride apart. */
static dnnl_status_t
describe_rows (const FbConvDesc *d, dnnl_primitive_desc_t *pd)
{
  int64_t cols = d->kw * d->co, ys = fb_conv_desc_y_stride (d);
  dnnl_dims_t src_dims = { d->n * d->h, d->w, d->c }, w_dims = { 1, d->c, cols };
  dnnl_dims_t bias_dims = { 1, 1, cols }, dst_dims = { d->n * d->h, d->w, cols };
  dnnl_dims_t dst_strides = { d->transposed ? d->sh * d->ow * d->co : d->ow * ys,
                              d->transposed ? cols : ys, 1 };
  dnnl_memory_desc_t src_md, w_md, bias_md, dst_md;
  dnnl_status_t s = dnnl_memory_desc_init_by_tag (&src_md, 3, src_dims, dnnl_f32, dnnl_abc);
  if (s == dnnl_success)
    s = dnnl_memory_desc_init_by_tag (&w_md, 3, w_dims, dnnl_f32, dnnl_format_tag_any);
  if (s == dnnl_success)
    s = dnnl_memory_desc_init_by_tag (&bias_md, 3, bias_dims, dnnl_f32, dnnl_abc);
  if (s == dnnl_success)
    s = dnnl_memory_desc_init_by_strides (&dst_md, 3, dst_dims, dnnl_f32, dst_strides);
  dnnl_matmul_desc_t md;
  if (s == dnnl_success)
    s = dnnl_matmul_desc_init (&md, &src_md, &w_md, d->has_bias ? &bias_md : NULL, &dst_md);
  dnnl_primitive_attr_t attr;
  if (s == dnnl_success)
    s = dnnl_primitive_attr_create (&attr);
  if (s != dnnl_success)
    return s;
  s = post_ops (d, primitive_post_ops (d, 0), &dst_md, attr);
  if (s == dnnl_success)
    s = dnnl_primitive_desc_create (pd, &md, attr, engine, NULL);
  dnnl_primitive_attr_destroy (attr);
  if (s == dnnl_success)
    {
      /* oneDNN's reference matmul would be slower than its deconvolution. */
      const char *impl = NULL;
      if (dnnl_primitive_desc_query (*pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
          impl == NULL || strncmp (impl, "ref", 3) == 0)
        {
          dnnl_primitive_desc_destroy (*pd);
          *pd = NULL;
          s = dnnl_unimplemented;
        }
    }
  return s;
}

/* conv->prim as the kernel rows' product, with each row's weights gathered from ONNX's
 * [c, co, kh, kw] (a 1x1 convolution's [co, c, 1, 1]) into [c, kw * co] and reordered once. */
static dnnl_status_t
make_rows (FbDnnlConv *conv, const FbConvDesc *d, dnnl_primitive_desc_t pd,
           const float *weights)
{
  int64_t cols = d->kw * d->co, plain_n = d->c * cols;
  const dnnl_memory_desc_t *w_md = dnnl_primitive_desc_query_md (pd, dnnl_query_weights_md, 0);
  size_t w_bytes = (dnnl_memory_desc_get_size (w_md) + 63) / 64 * 64;
  dnnl_dims_t w_dims = { 1, d->c, cols };
  dnnl_memory_desc_t plain_md;
  float *plain = malloc (plain_n * sizeof *plain);
  conv->packed = aligned_alloc (64, w_bytes * d->kh);
  conv->bias_cols = malloc (cols * sizeof *conv->bias_cols);
  dnnl_status_t s = plain && conv->packed && conv->bias_cols ? dnnl_success : dnnl_out_of_memory;
  if (s == dnnl_success)
    s = dnnl_memory_desc_init_by_tag (&plain_md, 3, w_dims, dnnl_f32, dnnl_abc);
  if (s == dnnl_success)
    s = dnnl_primitive_create (&conv->prim, pd);
  if (s == dnnl_success)
    s = dnnl_stream_create (&conv->stream, engine, dnnl_stream_default_flags);
  for (int64_t r = 0; r < d->kh && s == dnnl_success; r++)
    {
      for (int64_t ci = 0; ci < d->c; ci++)
        for (int64_t kw = 0; kw < d->kw; kw++)
          for (int64_t co = 0; co < d->co; co++)
            plain[ci * cols + kw * d->co + co] =
              d->transposed ? weights[((ci * d->co + co) * d->kh + r) * d->kw + kw]
                            : weights[co * d->c + ci];
      void *packed = (char *) conv->packed + w_bytes * r;
      s = reorder (&plain_md, plain, w_md, packed, conv->stream);
      if (s == dnnl_success)
        s = dnnl_memory_create (&conv->row_weights[r], w_md, engine, packed);
    }
  free (plain);
  conv->n_rows = (int) d->kh;
  conv->row_offset = d->ow * d->co;
  conv->cols = cols;
  conv->row_co = d->co;
  dnnl_dims_t bias_dims = { 1, 1, cols };
  dnnl_memory_desc_t bias_md;
  if (s == dnnl_success)
    s = dnnl_memory_desc_init_by_tag (&bias_md, 3, bias_dims, dnnl_f32, dnnl_abc);
  const dnnl_memory_desc_t *src_md = dnnl_primitive_desc_query_md (pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *dst_md = dnnl_primitive_desc_query_md (pd, dnnl_query_dst_md, 0);
  if (s == dnnl_success)
    s = dnnl_memory_create (&conv->src, src_md, engine, DNNL_MEMORY_NONE);
  if (s == dnnl_success)
    s = dnnl_memory_create (&conv->dst, dst_md, engine, DNNL_MEMORY_NONE);
  if (s == dnnl_success && conv->has_bias)
    s = dnnl_memory_create (&conv->bias, &bias_md, engine, conv->bias_cols);
  return s;
}

static int
run_rows (FbDnnlConv *conv, const float *x, const float *bias, float *y)
{
  dnnl_exec_arg_t args[4] = { { DNNL_ARG_SRC, conv->src }, { DNNL_ARG_WEIGHTS, NULL },
                              { DNNL_ARG_DST, conv->dst }, { DNNL_ARG_BIAS, conv->bias } };
  int n = conv->has_bias ? 4 : 3;
  /* The bias is the run's buffer, a constant the plan owns; repeating it is cols stores. */
  for (int64_t i = 0; conv->has_bias && i < conv->cols; i++)
    conv->bias_cols[i] = bias[i % conv->row_co];
  dnnl_status_t s = dnnl_memory_set_data_handle (conv->src, (void *) x);
  for (int r = 0; r < conv->n_rows && s == dnnl_success; r++)
    {
      args[1].memory = conv->row_weights[r];
      s = dnnl_memory_set_data_handle (conv->dst, y + r * conv->row_offset);
      if (s == dnnl_success)
        s = dnnl_primitive_execute (conv->prim, conv->stream, n, args);
    }
  if (s == dnnl_success)
    s = dnnl_stream_wait (conv->stream);
  return s == dnnl_success ? 0 : -1;
}

FbDnnlConv *
fb_dnnl_conv_new (const FbConvDesc *d, const float *weights, char *why, size_t why_len)
{
  if (!engine_ready (why, why_len))
    return NULL;
  if (!fb_conv_desc_valid (d))
    {
      snprintf (why, why_len, "a convolution description out of range");
      return NULL;
    }
  FbDnnlConv *conv = calloc (1, sizeof *conv);
  if (conv == NULL)
    {
      snprintf (why, why_len, "out of memory");
      return NULL;
    }
  conv->has_bias = d->has_bias != 0;
  conv->add_index = -1;
  conv->d = *d;
  conv->threads = 1;
#ifdef _OPENMP
  conv->threads = omp_get_max_threads ();
#endif
  conv->split = d->n_post;
  for (int64_t i = 0; i < d->n_post; i++)
    if (d->post[i].kind == FB_CONV_POST_ADD)
      conv->add_index = (int) i;
    else if (d->post[i].kind == FB_CONV_POST_SUM)
      conv->sum = 1;
  /* Our own convolutions transform their weights once: a scale that changes at every run
   * leaves them to oneDNN's primitive. */
  if (!d->scaled_input && fb_winograd_conv_fits (d))
    {
      conv->winograd = fb_winograd_conv_new (d, weights);
      if (conv->winograd != NULL)
        return conv;
      snprintf (why, why_len, "out of memory for the transformed weights");
      fb_dnnl_conv_free (conv);
      return NULL;
    }
  if (!d->scaled_input && fb_direct_conv_fits (d))
    {
      conv->direct = fb_direct_conv_new (d, weights);
      if (conv->direct != NULL)
        return conv;
      snprintf (why, why_len, "out of memory for the repacked weights");
      fb_dnnl_conv_free (conv);
      return NULL;
    }
  dnnl_primitive_desc_t pd = NULL;
  int rows = rows_fit (d) && describe_rows (d, &pd) == dnnl_success;
  conv->split = primitive_post_ops (d, rows ? 0 : conv->threads);
  conv->after = post_ops_from (d, conv->split);
  conv->after_isa = fb_conv_post_ops_vectorized (&conv->after) ? fb_conv_vector_isa ()
                                                               : FB_CONV_ISA_NONE;
  /* A strided output (a Concat's piece in place) is written packed and copied into its rows
   * (copy_out): oneDNN 2.6 leaves a strided destination of its brgconv kernels to its
   * reference implementation (DenseNet-121's 3x3 layers on two Zen 4 cores: 2.6 ms, against
   * 0.1-0.3 packed), and its brgconv_1x1 ran 1.4-2 times slower with one (Inception's 1x1
   * layers: 0.053 -> 0.109 ms). The copy is the layer's own channels, once. A product writes
   * the rows itself. */
  conv->copy_out = !rows && fb_conv_desc_y_stride (d) != d->co;
  int sum_after = 0;
  for (int64_t i = conv->split; i < d->n_post; i++)
    sum_after |= d->post[i].kind == FB_CONV_POST_SUM;
  if (sum_after || conv->copy_out)
    {
      /* The primitive writes elsewhere: the residual must still be in the output when the
       * post-ops after the primitive run, or the rows of a strided output come from it. */
      size_t bytes = (size_t) (d->n * d->oh * d->ow * d->co) * sizeof (float);
      conv->staged = aligned_alloc (64, (bytes + 63) / 64 * 64);
      if (conv->staged == NULL)
        {
          snprintf (why, why_len, "out of memory for the convolution's staged output");
          if (pd)
            dnnl_primitive_desc_destroy (pd);
          fb_dnnl_conv_free (conv);
          return NULL;
        }
    }
  if (conv->add_index >= conv->split)
    conv->add_index = -1;       /* applied after the primitive */
  dnnl_memory_desc_t src_md, dst_md, bias_md;
  if (rows)
    {
      dnnl_status_t s = make_rows (conv, d, pd, weights);
      dnnl_primitive_desc_destroy (pd);
      if (!failed (s, "matmul", why, why_len))
        return conv;
      fb_dnnl_conv_free (conv);
      return NULL;
    }
  dnnl_status_t s = describe (d, conv->split, &src_md, &dst_md, &bias_md, &pd);
  const char *what = d->transposed ? "deconvolution" : "convolution";
  if (failed (s, what, why, why_len))
    goto fail;
  const dnnl_memory_desc_t *w_md = dnnl_primitive_desc_query_md (pd, dnnl_query_weights_md, 0);
  size_t w_bytes = dnnl_memory_desc_get_size (w_md);
  conv->packed = aligned_alloc (64, (w_bytes + 63) / 64 * 64);
  if (conv->packed == NULL)
    {
      snprintf (why, why_len, "out of memory for %zu bytes of reordered weights", w_bytes);
      goto fail;
    }
  s = dnnl_primitive_create (&conv->prim, pd);
  if (s == dnnl_success)
    s = dnnl_stream_create (&conv->stream, engine, dnnl_stream_default_flags);
  if (s == dnnl_success)
    s = reorder_weights (d, w_md, weights, conv->stream, conv->packed);
  if (s == dnnl_success)
    s = dnnl_memory_create (&conv->weights, w_md, engine, conv->packed);
  if (s == dnnl_success && d->scaled_input)
    s = make_repack (conv, d, w_md, weights);
  /* The run points these at its buffers; no memory of their own. */
  if (s == dnnl_success)
    s = dnnl_memory_create (&conv->src, &src_md, engine, DNNL_MEMORY_NONE);
  if (s == dnnl_success)
    s = dnnl_memory_create (&conv->dst, &dst_md, engine, DNNL_MEMORY_NONE);
  if (s == dnnl_success && conv->has_bias)
    s = dnnl_memory_create (&conv->bias, &bias_md, engine, DNNL_MEMORY_NONE);
  if (s == dnnl_success && conv->add_index >= 0)
    s = dnnl_memory_create (&conv->add, &dst_md, engine, DNNL_MEMORY_NONE);
  if (failed (s, what, why, why_len))
    goto fail;
  dnnl_primitive_desc_destroy (pd);
  return conv;

fail:
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  fb_dnnl_conv_free (conv);
  return NULL;
}

int
fb_dnnl_conv_writes_rows (const FbConvDesc *d)
{
  if (!d->scaled_input && (fb_winograd_conv_fits (d) || fb_direct_conv_fits (d)))
    return 1;
  char why[64];
  dnnl_primitive_desc_t pd = NULL;
  int rows = !d->transposed && engine_ready (why, sizeof why) && product_shaped (d) &&
             describe_rows (d, &pd) == dnnl_success;
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  return rows;
}

int
fb_dnnl_conv_implementation (const FbConvDesc *d, char *name, size_t len)
{
  if (!engine_ready (name, len))
    return -1;
  if (!d->scaled_input && fb_winograd_conv_fits (d))
    {
      snprintf (name, len, fb_winograd_conv_isa () == FB_CONV_ISA_AVX512
                             ? "winograd:avx512 F(4x4,3x3) (fb-winograd-conv.c, 6x32 register tiles)"
                             : "winograd:avx2 F(4x4,3x3) (fb-winograd-conv.c, 6x16 register tiles)");
      return 0;
    }
  if (!d->scaled_input && fb_direct_conv_fits (d))
    {
      snprintf (name, len, fb_conv_isa () == FB_CONV_ISA_AVX512
                             ? "direct:avx512 (fb-direct-conv.c, 8x32 register tiles)"
                             : "direct:avx2 (fb-direct-conv.c, 6x16 register tiles)");
      return 0;
    }
  dnnl_memory_desc_t src_md, dst_md, bias_md;
  dnnl_primitive_desc_t pd = NULL;
  const char *impl = NULL;
  int rows = rows_fit (d) && describe_rows (d, &pd) == dnnl_success;
  int copy_out = !rows && fb_conv_desc_y_stride (d) != d->co;
  dnnl_status_t s = rows ? dnnl_success
                         : describe (d, primitive_post_ops (d, 1), &src_md, &dst_md, &bias_md, &pd);
  if (s == dnnl_success)
    s = dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0, &impl);
  /* Whether a Sigmoid or Swish runs after the primitive depends on its threads (see
   * primitive_post_ops): the name gives the rule where it does. */
  int64_t after_one = d->n_post - primitive_post_ops (d, rows ? 0 : 1);
  int64_t after_many = d->n_post - primitive_post_ops (d, rows ? 0 : INT_MAX);
  char own[160] = "", otherwise[32] = "";
  if (after_one > after_many && after_many > 0)
    snprintf (otherwise, sizeof otherwise, ", %ld otherwise", (long) after_many);
  if (after_one > after_many)
    snprintf (own, sizeof own, ", then %ld post-op%s of its own on one thread or from %d KB of "
              "output a thread%s", (long) after_one, after_one == 1 ? "" : "s",
              POST_OPS_OWN_BYTES >> 10, otherwise);
  else if (after_many > 0)
    snprintf (own, sizeof own, ", then %ld post-op%s of its own", (long) after_many,
              after_many == 1 ? "" : "s");
  const char *scaled = d->scaled_input ? ", its weights scaled at every run"
                     : copy_out ? ", its output copied into the concatenation's rows" : "";
  if (s == dnnl_success && rows)
    snprintf (name, len, d->transposed ? "%s matmul, one per kernel row"
                                       : "%s matmul, writing the concatenation's rows", impl);
  else if (s == dnnl_success)
    snprintf (name, len, "%s%s%s", impl, scaled, own);
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  return failed (s, d->transposed ? "deconvolution" : "convolution", name, len) ? -1 : 0;
}

int
fb_dnnl_conv_run (FbDnnlConv *conv, const float *x, const float *scale, const float *bias,
                  const float *add, float *y)
{
  dnnl_exec_arg_t args[5] = {
    { DNNL_ARG_SRC, conv->src }, { DNNL_ARG_WEIGHTS, conv->weights }, { DNNL_ARG_DST, conv->dst },
  };
  int n = 3;
  /* In place (a sum), the Winograd and direct convolutions get the output itself as the
   * addend: they read every element of the residual before they store the output element at
   * the same index. */
  if (conv->winograd || conv->direct)
    {
      /* On the threads the convolution was made for, as oneDNN's primitives run. */
#ifdef _OPENMP
      int caller = omp_get_max_threads ();
      omp_set_num_threads (conv->threads);
#endif
      const float *addend = conv->add_index >= 0 ? add : conv->sum ? y : NULL;
      int status = 0;
      if (conv->winograd)
        status = fb_winograd_conv_run (conv->winograd, x, conv->has_bias ? bias : NULL, addend, y);
      else
        fb_direct_conv_run (conv->direct, x, conv->has_bias ? bias : NULL, addend, y);
#ifdef _OPENMP
      omp_set_num_threads (caller);
#endif
      return status;
    }
  if (conv->n_rows)
    return run_rows (conv, x, bias, y);
  float *out = conv->staged ? conv->staged : y;
  dnnl_status_t s = dnnl_memory_set_data_handle (conv->src, (void *) x);
  if (s == dnnl_success)
    s = dnnl_memory_set_data_handle (conv->dst, out);
  if (s == dnnl_success && conv->has_bias)
    {
      s = dnnl_memory_set_data_handle (conv->bias, (void *) bias);
      args[n++] = (dnnl_exec_arg_t) { DNNL_ARG_BIAS, conv->bias };
    }
  if (s == dnnl_success && conv->add_index >= 0)
    {
      s = dnnl_memory_set_data_handle (conv->add, (void *) add);
      /* A binary post-op's tensor is named by the post-op's position in the whole chain. */
      args[n++] = (dnnl_exec_arg_t) {
        DNNL_ARG_ATTR_MULTIPLE_POST_OP (conv->add_index) | DNNL_ARG_SRC_1, conv->add
      };
    }
  if (s == dnnl_success && conv->repack)
    s = scale == NULL ? dnnl_invalid_arguments : repack_scaled (conv, scale);
  if (s == dnnl_success)
    s = dnnl_primitive_execute (conv->prim, conv->stream, n, args);
  if (s == dnnl_success)
    s = dnnl_stream_wait (conv->stream);
  if (s == dnnl_success && (conv->split < conv->d.n_post || conv->copy_out))
    apply_post_ops (conv, out, add, y);
  return s == dnnl_success ? 0 : -1;
}

void
fb_dnnl_conv_free (FbDnnlConv *conv)
{
  if (conv == NULL)
    return;
  dnnl_memory_t *mems[] = { &conv->src, &conv->weights, &conv->bias, &conv->dst, &conv->add,
                            &conv->scaled_mem };
  for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
    if (*mems[i])
      dnnl_memory_destroy (*mems[i]);
  for (int r = 0; r < FB_DNNL_MAX_ROWS; r++)
    if (conv->row_weights[r])
      dnnl_memory_destroy (conv->row_weights[r]);
  free (conv->bias_cols);
  fb_direct_conv_free (conv->direct);
  fb_winograd_conv_free (conv->winograd);
  if (conv->stream)
    dnnl_stream_destroy (conv->stream);
  if (conv->prim)
    dnnl_primitive_destroy (conv->prim);
  if (conv->repack)
    dnnl_primitive_destroy (conv->repack);
  free (conv->plain);
  free (conv->scaled);
  free (conv->packed);
  free (conv->staged);
  free (conv);
}

int
fb_dnnl_conv_once (FbDnnlConv **slot, const FbConvDesc *d, const float *x, const float *scale,
                   const float *weights, const float *bias, const float *add, float *y)
{
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  char why[256];
  pthread_mutex_lock (&lock);
  if (*slot == NULL)
    *slot = fb_dnnl_conv_new (d, weights, why, sizeof why);
  int status = *slot ? fb_dnnl_conv_run (*slot, x, scale, bias, add, y) : -1;
  pthread_mutex_unlock (&lock);
  return status;
}
