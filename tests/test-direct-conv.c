/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The direct channels-last convolution (fb-direct-conv.c) against a plain loop nest, through
 * the helper's own interface (fb-dnnl-conv.h) as the runtime and exported libraries call it:
 * geometry (strides, dilations, asymmetric pads, 1xk and kx1 kernels, a batch), a partial
 * block of output channels, a small map whose threads split the channel blocks, a wide map
 * walked in several chunks, and every post-op it takes, in order, the residual also in place.
 * Which convolutions it takes depends on the processor; the rules are checked either way, and
 * every case runs on each instruction set the processor has (FUSEBENCH_ISA). */
#include "fb-direct-conv.h"
#include "fb-conv-post-ops.h"
#include "fb-winograd-conv.h"
#include "fb-dnnl-conv.h"
#include "fb-test-conv.h"

#include <glib.h>
#include <math.h>
#include <omp.h>
#include <string.h>

/* NHWC in and out, OIHW weights ([co, c / groups, kh, kw]), accumulated in double. */
static void
reference (const FbConvDesc *d, const float *x, const float *w, const float *bias,
           const float *add, float *y)
{
  for (int64_t n = 0; n < d->n; n++)
    for (int64_t oh = 0; oh < d->oh; oh++)
      for (int64_t ow = 0; ow < d->ow; ow++)
        for (int64_t o = 0; o < d->co; o++)
          {
            double s = bias ? bias[o] : 0;
            for (int64_t a = 0; a < d->kh; a++)
              for (int64_t b = 0; b < d->kw; b++)
                {
                  int64_t ih = oh * d->sh + a * d->dh - d->pt, iw = ow * d->sw + b * d->dw - d->pl;
                  if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w)
                    continue;
                  int64_t cg = d->c / d->groups, first = o / (d->co / d->groups) * cg;
                  for (int64_t i = 0; i < cg; i++)
                    s += (double) x[((n * d->h + ih) * d->w + iw) * d->c + first + i] *
                         w[((o * cg + i) * d->kh + a) * d->kw + b];
                }
            gsize at = ((n * d->oh + oh) * d->ow + ow) * d->co + o;
            y[at] = (float) tcv_apply_post (d, s, add, at);
          }
}

static FbConvDesc
desc (int64_t n, int64_t c, int64_t h, int64_t w, int64_t co, int64_t kh, int64_t kw,
      int64_t stride, int64_t dilation, int64_t pt, int64_t pl, int64_t pb, int64_t pr)
{
  FbConvDesc d = {
    .n = n, .c = c, .h = h, .w = w, .co = co, .groups = 1, .kh = kh, .kw = kw,
    .sh = stride, .sw = stride, .dh = dilation, .dw = dilation,
    .pt = pt, .pl = pl, .pb = pb, .pr = pr, .has_bias = 1,
  };
  d.oh = (h + pt + pb - (kh - 1) * dilation - 1) / stride + 1;
  d.ow = (w + pl + pr - (kw - 1) * dilation - 1) / stride + 1;
  return d;
}

/* shape with the first len post-ops of chain. */
static FbConvDesc
chained (FbConvDesc shape, const FbConvPost *chain, int len)
{
  shape.n_post = len;
  memcpy (shape.post, chain, (size_t) len * sizeof chain[0]);
  return shape;
}

/* Runs d through fb_dnnl_conv_new/run (the direct convolution where it fits, oneDNN where not)
 * and compares with the loop nest. */
static void
check (const FbConvDesc *d, guint32 seed)
{
  g_assert_true (fb_conv_desc_valid (d));
  gsize nx = d->n * d->h * d->w * d->c, nw = d->co * d->c / d->groups * d->kh * d->kw;
  gsize ny = d->n * d->oh * d->ow * d->co;
  g_autofree float *x = tcv_random_floats (nx, seed, 1.0);
  g_autofree float *w = tcv_random_floats (nw, seed + 1, 0.1);
  g_autofree float *bias = d->has_bias ? tcv_random_floats (d->co, seed + 2, 0.5) : NULL;
  g_autofree float *add = tcv_random_floats (ny, seed + 3, 1.0);
  g_autofree float *want = g_new (float, ny + 1);
  g_autofree float *got = g_new (float, ny + 1);
  reference (d, x, w, bias, add, want);
  char why[256] = "";
  FbDnnlConv *conv = fb_dnnl_conv_new (d, w, why, sizeof why);
  g_assert_nonnull (conv);
  gboolean sum = FALSE;
  for (int64_t i = 0; i < d->n_post; i++)
    sum |= d->post[i].kind == FB_CONV_POST_SUM;
  /* In place, the output holds the residual and no other addend is given; else NaN where
   * nothing is written. */
  if (sum)
    memcpy (got, add, ny * sizeof (float));
  else
    memset (got, 0xff, ny * sizeof (float));
  g_assert_cmpint (fb_dnnl_conv_run (conv, x, NULL, bias, sum ? NULL : add, got), ==, 0);
  fb_dnnl_conv_free (conv);
  for (gsize i = 0; i < ny; i++)
    if (!(fabsf (got[i] - want[i]) <= 1e-4f + 1e-4f * fabsf (want[i])))
      g_error ("%ldx%ld kernel, %ld -> %ld channels: element %zu is %g, want %g",
               (long) d->kh, (long) d->kw, (long) d->c, (long) d->co, i, got[i], want[i]);
}

static void
test_geometry (void)
{
  omp_set_num_threads (2);
  FbConvDesc cases[] = {
    desc (1, 64, 9, 10, 48, 3, 3, 1, 1, 1, 1, 1, 1),
    desc (2, 64, 9, 10, 40, 3, 3, 2, 1, 1, 0, 0, 1),   /* batch, stride, pads on two sides */
    desc (1, 72, 11, 9, 24, 3, 3, 1, 2, 2, 2, 2, 2),   /* dilation; a partial block of 16 */
    desc (1, 64, 14, 14, 32, 1, 7, 1, 1, 0, 3, 0, 3),
    desc (1, 64, 14, 14, 16, 7, 1, 1, 1, 3, 0, 3, 0),
    desc (1, 96, 4, 5, 64, 3, 3, 1, 1, 1, 1, 1, 1),    /* small map: threads split the blocks */
    desc (1, 64, 7, 300, 32, 3, 3, 1, 1, 1, 1, 1, 1),  /* wide rows: several chunks a thread */
    desc (1, 64, 5, 5, 8, 5, 5, 1, 1, 0, 0, 0, 0),     /* one partial block, no padding */
    desc (1, 48, 6, 8, 72, 1, 3, 1, 1, 0, 1, 0, 1),    /* small map, 5 blocks: tiles split */
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    check (&cases[i], 10 * i + 1);
  FbConvDesc no_bias = cases[0];
  no_bias.has_bias = 0;
  check (&no_bias, 99);
  omp_set_num_threads (1);
  check (&cases[1], 77);
}

static void
test_post_ops (void)
{
  omp_set_num_threads (2);
  const FbConvPost chains[][3] = {
    { { FB_CONV_POST_ADD }, { FB_CONV_POST_RELU } },                  /* residual, then Relu */
    { { FB_CONV_POST_RELU, 0.2 }, { FB_CONV_POST_MAX, -0.1 } },       /* LeakyRelu, a floor */
    { { FB_CONV_POST_CLIP, 0, 6 } },
    { { FB_CONV_POST_MIN, 0.3 }, { FB_CONV_POST_ADD } },
    { { FB_CONV_POST_MIN, 0.3 }, { FB_CONV_POST_ADD }, { FB_CONV_POST_CLIP, 0, 6 } },
    { { FB_CONV_POST_RELU, 0.1 }, { FB_CONV_POST_ADD }, { FB_CONV_POST_RELU } },
  };
  const int lens[] = { 2, 2, 1, 2, 3, 3 };
  /* The direct convolution's where it fits, and oneDNN's (few input channels). */
  const FbConvDesc shapes[] = { desc (1, 64, 6, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1),
                                    desc (1, 32, 6, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1) };
  for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (guint i = 0; i < G_N_ELEMENTS (chains); i++)
      {
        FbConvDesc d = chained (shapes[s], chains[i], lens[i]);
        check (&d, 200 + 10 * s + i);
      }
}

/* Every chain (lens[i] post-ops of chains[i]) on every shape, on one and two threads: expect
 * asserts what runs d (impl, the implementation's name), then check compares it with the
 * loop nest. */
static void
chains_on_shapes (const FbConvDesc *shapes, guint n_shapes, const FbConvPost (*chains)[3],
                  const int *lens, guint n_chains, guint32 seed,
                  void (*expect) (const FbConvDesc *d, const char *impl))
{
  for (int threads = 1; threads <= 2; threads++)
    for (guint s = 0; s < n_shapes; s++)
      for (guint i = 0; i < n_chains; i++)
        {
          omp_set_num_threads (threads);
          FbConvDesc d = chained (shapes[s], chains[i], lens[i]);
          char impl[256];
          g_assert_cmpint (fb_dnnl_conv_implementation (&d, impl, sizeof impl), ==, 0);
          expect (&d, impl);
          check (&d, seed + 10 * s + i + 100 * threads);
        }
}

/* Every one of oneDNN's with a Sigmoid or Swish may run it after, where there are vectors for
 * it; none with a HardSwish alone. */
static void
expect_sigmoid_after (const FbConvDesc *d, const char *impl)
{
  gboolean ours = g_str_has_prefix (impl, "direct:");
  gboolean after = strstr (impl, "of its own") != NULL;
  gboolean hard = d->post[0].kind == FB_CONV_POST_HARD_SWISH;
  g_assert_cmpint (!ours && !hard && fb_conv_vector_isa () != FB_CONV_ISA_NONE, ==, after);
}

/* Sigmoid and Swish, alone and around a residual: in the direct convolution's vectors, and
 * after oneDNN's primitives in fb-conv-post-ops.h's (on one thread, or where a thread's share
 * of the output is large: the 64x64 map on two), else in the primitive. */
static void
test_sigmoid_swish (void)
{
  const FbConvPost chains[][3] = {
    { { FB_CONV_POST_SWISH, 1.0 } },
    { { FB_CONV_POST_SIGMOID } },
    { { FB_CONV_POST_SWISH, 1.5 }, { FB_CONV_POST_ADD } },
    { { FB_CONV_POST_ADD }, { FB_CONV_POST_SWISH, 1.0 } },
    { { FB_CONV_POST_SUM }, { FB_CONV_POST_SIGMOID } },
    { { FB_CONV_POST_SWISH, 1.0 }, { FB_CONV_POST_SUM } },
    { { FB_CONV_POST_HARD_SWISH, 1.0 / 6, 0.5 } },
  };
  const int lens[] = { 1, 1, 2, 2, 2, 2, 1 };
  FbConvDesc depthwise = desc (1, 48, 20, 20, 48, 3, 3, 1, 1, 1, 1, 1, 1);
  depthwise.groups = 48;
  const FbConvDesc shapes[] = {
    desc (1, 64, 6, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1),       /* direct where it fits */
    desc (1, 64, 9, 10, 48, 1, 1, 1, 1, 0, 0, 0, 0),      /* oneDNN 1x1, small */
    desc (1, 16, 64, 64, 96, 1, 1, 1, 1, 0, 0, 0, 0),     /* oneDNN 1x1, 1.5 MB out */
    depthwise,
  };
  chains_on_shapes (shapes, G_N_ELEMENTS (shapes), chains, lens, G_N_ELEMENTS (chains), 500,
                    expect_sigmoid_after);
}

/* No convolution of our own takes a GELU, and oneDNN has an optimized kernel for it. */
static void
expect_onednn (const FbConvDesc *d, const char *impl)
{
  (void) d;
  g_assert_false (g_str_has_prefix (impl, "direct:") || g_str_has_prefix (impl, "ref"));
}

/* GELU, exact and in its tanh form, as oneDNN's post-op: alone, after a residual, and after a
 * cut of the chain (a Clip repeated with other bounds), where it runs on floats after the
 * primitive; on a 3x3 convolution, a 1x1 and a linear layer's shape (one row of 49 pixels,
 * fb-lower-product-conv.c), on one and two threads. */
static void
test_gelu (void)
{
  const FbConvPost chains[][3] = {
    { { FB_CONV_POST_GELU, 0 } },
    { { FB_CONV_POST_GELU, 1 } },
    { { FB_CONV_POST_ADD }, { FB_CONV_POST_GELU, 0 } },
    { { FB_CONV_POST_CLIP, 0, 6 }, { FB_CONV_POST_CLIP, -1, 5 }, { FB_CONV_POST_GELU, 1 } },
  };
  const int lens[] = { 1, 1, 2, 3 };
  const FbConvDesc shapes[] = {
    desc (1, 64, 6, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1),
    desc (1, 64, 9, 10, 48, 1, 1, 1, 1, 0, 0, 0, 0),
    desc (1, 96, 1, 49, 160, 1, 1, 1, 1, 0, 0, 0, 0),
  };
  chains_on_shapes (shapes, G_N_ELEMENTS (shapes), chains, lens, G_N_ELEMENTS (chains), 900,
                    expect_onednn);
}

/* fb-conv-post-ops.h's Sigmoid and Swish against the C library's, on numbers across their
 * range and on the edges: NaN stays NaN, infinities give the limits. */
static void
test_post_op_vectors (void)
{
  enum { N = 4099 };
  float x[N], got[N];
  for (int i = 0; i < N - 7; i++)
    x[i] = -100.0f + 200.0f * i / (N - 8);
  const float edges[] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, 88.5f };
  memcpy (x + N - 7, edges, sizeof edges);
  for (int kind = 0; kind < 2; kind++)
    {
      FbConvDesc d = { .n_post = 1 };
      d.post[0] = kind ? (FbConvPost) { FB_CONV_POST_SWISH, 1.0 }
                       : (FbConvPost) { FB_CONV_POST_SIGMOID };
      if (fb_conv_vector_isa () == FB_CONV_ISA_AVX512)
        fb_conv_post_ops_run_512 (&d, x, NULL, got, N);
      else
        fb_conv_post_ops_run_256 (&d, x, NULL, got, N);
      for (int i = 0; i < N; i++)
        {
          double s = 1 / (1 + exp (-(double) x[i])), want = kind ? x[i] * s : s;
          if (isnan (x[i]) || (kind && x[i] == -INFINITY))
            {
              /* -inf times a sigmoid of 0 is NaN; the AVX2 one's sigmoid stops at 1e-38. */
              if (isnan (x[i]))
                g_assert_true (isnan (got[i]));
              continue;
            }
          if (!(got[i] == want || fabs (got[i] - want) <= 1e-30 + 1e-6 * fabs (want)))
            g_error ("%s (%g) is %g, want %g", kind ? "swish" : "sigmoid", x[i], got[i], want);
        }
    }
}

/* The residual added in place (a sum: the output's buffer holds it when the run starts), at
 * every place of the chain, on the direct and Winograd convolutions and on oneDNN's kernels, among them a
 * 1x1 one with a long reduction (oneDNN's jit_1x1 passes over the output once per block of
 * input channels, which a binary post-op reading the output would see half done). */
static void
test_sum (void)
{
  omp_set_num_threads (2);
  const FbConvPost chains[][3] = {
    { { FB_CONV_POST_SUM }, { FB_CONV_POST_RELU } },                  /* a bottleneck's end */
    { { FB_CONV_POST_RELU }, { FB_CONV_POST_SUM } },                  /* activation first */
    { { FB_CONV_POST_MIN, 0.3 }, { FB_CONV_POST_SUM }, { FB_CONV_POST_CLIP, 0, 6 } },
    /* Two clips before the sum: on oneDNN the second and the sum run after the primitive. */
    { { FB_CONV_POST_MIN, 0.3 }, { FB_CONV_POST_CLIP, 0, 6 }, { FB_CONV_POST_SUM } },
  };
  const int lens[] = { 2, 2, 3, 3 };
  const FbConvDesc shapes[] = {
    desc (1, 64, 6, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1),       /* direct where it fits */
    desc (1, 64, 16, 16, 48, 3, 3, 1, 1, 1, 1, 1, 1),     /* Winograd where it fits */
    desc (1, 32, 6, 7, 48, 3, 3, 1, 1, 1, 1, 1, 1),       /* oneDNN: few channels */
    desc (1, 64, 9, 10, 48, 1, 1, 1, 1, 0, 0, 0, 0),      /* oneDNN 1x1 */
    desc (1, 1024, 7, 7, 256, 1, 1, 1, 1, 0, 0, 0, 0),    /* 1x1, long reduction */
  };
  for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (guint i = 0; i < G_N_ELEMENTS (chains); i++)
      {
        FbConvDesc d = chained (shapes[s], chains[i], lens[i]);
        char impl[256];
        /* The second shape is Winograd's where the processor has it: let it take that one. */
        if (s == 1)
          g_unsetenv ("FUSEBENCH_WINOGRAD");
        g_assert_cmpint (fb_dnnl_conv_implementation (&d, impl, sizeof impl), ==, 0);
        if (s == 1)
          g_assert_cmpint (g_str_has_prefix (impl, "winograd:"), ==,
                           fb_winograd_conv_fits (&d));
        check (&d, 400 + 10 * s + i);
        g_setenv ("FUSEBENCH_WINOGRAD", "0", TRUE);
      }
  /* One addend per convolution, in place or not. */
  FbConvDesc two = shapes[0];
  two.n_post = 2;
  two.post[0].kind = FB_CONV_POST_SUM;
  two.post[1].kind = FB_CONV_POST_ADD;
  g_assert_false (fb_conv_desc_valid (&two));
}

static void
test_sum_onednn (void)
{
  g_setenv ("FUSEBENCH_ISA", "none", TRUE);
  test_sum ();
  test_sigmoid_swish ();
  test_post_ops ();
  g_unsetenv ("FUSEBENCH_ISA");
}

/* The direct convolution takes KxK convolutions of 40 or more input channels with the
 * post-ops it has, on processors with AVX2 and FMA; the helper names the implementation it
 * runs. */
static void
test_rules (void)
{
  FbConvDesc d = desc (1, 64, 9, 10, 48, 3, 3, 1, 1, 1, 1, 1, 1);
  gboolean cpu = fb_conv_isa () != FB_CONV_ISA_NONE;
  g_assert_cmpint (fb_direct_conv_fits (&d), ==, cpu);
  char impl[256];
  g_assert_cmpint (fb_dnnl_conv_implementation (&d, impl, sizeof impl), ==, 0);
  g_assert_cmpint (g_str_has_prefix (impl, "direct:"), ==, cpu);
  if (cpu)
    g_assert_true (g_str_has_prefix (impl, fb_conv_isa () == FB_CONV_ISA_AVX512 ? "direct:avx512"
                                                                                : "direct:avx2"));

  FbConvDesc few = desc (1, 32, 9, 10, 48, 3, 3, 1, 1, 1, 1, 1, 1);
  FbConvDesc pointwise = desc (1, 64, 9, 10, 48, 1, 1, 1, 1, 0, 0, 0, 0);
  FbConvDesc grouped = d;
  grouped.groups = 2;
  FbConvDesc tanh_after = d;
  tanh_after.n_post = 1;
  tanh_after.post[0].kind = FB_CONV_POST_TANH;
  FbConvDesc transposed = d;
  transposed.transposed = 1;
  g_assert_false (fb_direct_conv_fits (&few));
  g_assert_false (fb_direct_conv_fits (&pointwise));
  g_assert_false (fb_direct_conv_fits (&grouped));
  g_assert_false (fb_direct_conv_fits (&tanh_after));
  g_assert_false (fb_direct_conv_fits (&transposed));
  /* What it does not take, oneDNN runs. */
  g_assert_cmpint (fb_dnnl_conv_implementation (&few, impl, sizeof impl), ==, 0);
  g_assert_false (g_str_has_prefix (impl, "direct:"));
  check (&few, 300);
  /* SiLU (Swish) after a bias, as EfficientNet's convolutions end: oneDNN's eltwise post-op,
   * the 1x1 ones and a 3x3 one with alpha 1.5. */
  FbConvDesc swish_after = pointwise;
  swish_after.n_post = 1;
  swish_after.post[0] = (FbConvPost) { FB_CONV_POST_SWISH, 1.0, 0 };
  g_assert_false (fb_direct_conv_fits (&swish_after));
  check (&swish_after, 301);
  swish_after = d;
  swish_after.n_post = 1;
  swish_after.post[0] = (FbConvPost) { FB_CONV_POST_SWISH, 1.5, 0 };
  check (&swish_after, 302);
  /* HardSwish, as MobileNetV3's convolutions end: oneDNN's eltwise post-op, after a residual
   * too; fb_conv_desc_valid holds it to ONNX's constants. */
  FbConvDesc hard_swish_after = pointwise;
  hard_swish_after.n_post = 1;
  hard_swish_after.post[0] = (FbConvPost) { FB_CONV_POST_HARD_SWISH, 1.0 / 6, 0.5 };
  g_assert_false (fb_direct_conv_fits (&hard_swish_after));
  g_assert_true (fb_conv_desc_valid (&hard_swish_after));
  check (&hard_swish_after, 303);
  hard_swish_after = d;
  hard_swish_after.n_post = 2;
  hard_swish_after.post[0] = (FbConvPost) { FB_CONV_POST_ADD, 0, 0 };
  hard_swish_after.post[1] = (FbConvPost) { FB_CONV_POST_HARD_SWISH, 1.0 / 6, 0.5 };
  check (&hard_swish_after, 304);
  hard_swish_after.post[1].alpha = 0.2;
  g_assert_false (fb_conv_desc_valid (&hard_swish_after));
}

/* FUSEBENCH_ISA narrows the instruction set, never widens it; "none" leaves all to oneDNN. */
static void
test_isa_choice (void)
{
  __builtin_cpu_init ();
  gboolean avx2 = __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma");
  gboolean avx512 = avx2 && __builtin_cpu_supports ("avx512f");
  g_setenv ("FUSEBENCH_ISA", "none", TRUE);
  g_assert_cmpint (fb_conv_isa (), ==, FB_CONV_ISA_NONE);
  g_setenv ("FUSEBENCH_ISA", "avx2", TRUE);
  g_assert_cmpint (fb_conv_isa (), ==, avx2 ? FB_CONV_ISA_AVX2 : FB_CONV_ISA_NONE);
  g_setenv ("FUSEBENCH_ISA", "avx512", TRUE);
  g_assert_cmpint (fb_conv_isa (), ==, avx512 ? FB_CONV_ISA_AVX512
                                       : avx2 ? FB_CONV_ISA_AVX2 : FB_CONV_ISA_NONE);
  /* By default oneDNN's kernels where AVX-512 is (they measured faster there). */
  g_unsetenv ("FUSEBENCH_ISA");
  g_assert_cmpint (fb_conv_isa (), ==, avx512 ? FB_CONV_ISA_NONE
                                       : avx2 ? FB_CONV_ISA_AVX2 : FB_CONV_ISA_NONE);
  g_setenv ("FUSEBENCH_ISA", "native", TRUE);
  g_assert_cmpint (fb_conv_isa (), ==, avx512 ? FB_CONV_ISA_NONE
                                       : avx2 ? FB_CONV_ISA_AVX2 : FB_CONV_ISA_NONE);
  g_unsetenv ("FUSEBENCH_ISA");
}

/* Every test above on one instruction set: the processor's own where it has it, else skipped
 * with the reason. */
static void
on_isa (gconstpointer data)
{
  const char *name = strrchr (g_test_get_path (), '/') + 1;
  if (!tcv_use_isa (data))
    return;
  if (strcmp (name, "geometry") == 0)
    test_geometry ();
  else if (strcmp (name, "post-ops") == 0)
    test_post_ops ();
  else if (strcmp (name, "sum") == 0)
    test_sum ();
  else if (strcmp (name, "sigmoid-swish") == 0)
    test_sigmoid_swish ();
  else if (strcmp (name, "post-op-vectors") == 0)
    test_post_op_vectors ();
  else if (strcmp (name, "gelu") == 0)
    test_gelu ();
  else
    test_rules ();
  g_unsetenv ("FUSEBENCH_ISA");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* Its 3x3 stride-1 cases would otherwise run as Winograd (fb-winograd-conv.c), which has
   * tests of its own. */
  g_setenv ("FUSEBENCH_WINOGRAD", "0", TRUE);
  const char *isas[] = { "avx2", "avx512" };
  const char *tests[] = { "geometry", "post-ops", "sum", "sigmoid-swish", "post-op-vectors",
                          "gelu", "rules" };
  for (guint i = 0; i < G_N_ELEMENTS (isas); i++)
    for (guint t = 0; t < G_N_ELEMENTS (tests); t++)
      {
        g_autofree char *path = g_strdup_printf ("/direct-conv/%s/%s", isas[i], tests[t]);
        g_test_add_data_func (path, isas[i], on_isa);
      }
  g_test_add_func ("/direct-conv/isa-choice", test_isa_choice);
  /* oneDNN alone, whatever the processor has. */
  g_test_add_func ("/direct-conv/onednn/sum", test_sum_onednn);
  return g_test_run ();
}
