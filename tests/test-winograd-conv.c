/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The Winograd F(4x4, 3x3) convolution (fb-winograd-conv.c) against a plain loop nest in
 * double: maps that are not multiples of the 4x4 tile, pads 0, 1 and asymmetric, channel
 * counts that are not multiples of 8 or 16 (and past the 64-channel chunks, so products
 * accumulate over several input chunks and output chunks), a batch, one thread and two, more
 * tiles than a block, every post-op in chains, and the residual Add reading the very buffer it
 * writes; each with the products in AVX2 and in AVX-512 where the processor has them. Then the
 * rules: which convolutions fb-dnnl-conv.c gives it, and the name it shows. */
#include "fb-winograd-conv.h"
#include "fb-direct-conv.h"
#include "fb-dnnl-conv.h"
#include "fb-test-conv.h"

#include <glib.h>
#include <math.h>
#include <omp.h>
#include <string.h>

/* NHWC in and out, OIHW weights, 3x3 stride 1, accumulated in double; also the sum of the
 * products' magnitudes per output, the scale a float sum's rounding is relative to. */
static void
reference (const FbConvDesc *d, const float *x, const float *w, const float *bias,
           const float *add, float *y, float *scale)
{
  for (int64_t n = 0; n < d->n; n++)
    for (int64_t oh = 0; oh < d->oh; oh++)
      for (int64_t ow = 0; ow < d->ow; ow++)
        for (int64_t o = 0; o < d->co; o++)
          {
            double s = bias ? bias[o] : 0, mag = bias ? fabs (bias[o]) : 0;
            for (int64_t a = 0; a < 3; a++)
              for (int64_t b = 0; b < 3; b++)
                {
                  int64_t ih = oh + a - d->pt, iw = ow + b - d->pl;
                  if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w)
                    continue;
                  for (int64_t i = 0; i < d->c; i++)
                    {
                      double p = (double) x[((n * d->h + ih) * d->w + iw) * d->c + i] *
                                 w[((o * d->c + i) * 3 + a) * 3 + b];
                      s += p;
                      mag += fabs (p);
                    }
                }
            gsize at = ((n * d->oh + oh) * d->ow + ow) * d->co + o;
            y[at] = (float) tcv_apply_post (d, s, add, at);
            scale[at] = (float) mag;
          }
}

static FbConvDesc
desc (int64_t n, int64_t c, int64_t h, int64_t w, int64_t co, int64_t pt, int64_t pl, int64_t pb,
      int64_t pr)
{
  FbConvDesc d = {
    .n = n, .c = c, .h = h, .w = w, .co = co, .groups = 1, .kh = 3, .kw = 3,
    .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = pt, .pl = pl, .pb = pb, .pr = pr, .has_bias = 1,
  };
  d.oh = h + pt + pb - 2;
  d.ow = w + pl + pr - 2;
  return d;
}

/* Runs d through fb_winograd_conv_new/run directly (whatever its bounds on speed say) and
 * compares with the loop nest; in_place: the addend is the output buffer itself. The error
 * allowed is relative to the sum of the products' magnitudes: F(4x4, 3x3) rounds in its
 * transforms, which scale values by up to 10x or so, more than a direct sum does. */
static void
check (const FbConvDesc *d, guint32 seed, gboolean in_place)
{
  g_assert_true (fb_conv_desc_valid (d));
  gsize nx = d->n * d->h * d->w * d->c, nw = d->co * d->c * 9;
  gsize ny = d->n * d->oh * d->ow * d->co;
  g_autofree float *x = tcv_random_floats (nx, seed, 1.0);
  g_autofree float *w = tcv_random_floats (nw, seed + 1, 0.1);
  g_autofree float *bias = d->has_bias ? tcv_random_floats (d->co, seed + 2, 0.5) : NULL;
  g_autofree float *add = tcv_random_floats (ny, seed + 3, 1.0);
  g_autofree float *want = g_new (float, ny + 1);
  g_autofree float *scale = g_new (float, ny + 1);
  g_autofree float *got = g_new (float, ny + 1);
  reference (d, x, w, bias, add, want, scale);
  FbWinogradConv *conv = fb_winograd_conv_new (d, w);
  g_assert_nonnull (conv);
  /* Blocked (each thread its own tiles or output chunks) and in phases (the threads sharing
   * each transform and the products by point), twice each: a second run reuses the working
   * memory the first one allocated. */
  const char *modes[] = { "never", "never", "always", "always" };
  for (int run = 0; run < 4; run++)
    {
      g_setenv ("FUSEBENCH_WINOGRAD_PHASES", modes[run], TRUE);
      if (in_place)
        memcpy (got, add, ny * sizeof (float));
      else
        memset (got, 0xff, ny * sizeof (float));    /* NaN where nothing is written */
      g_assert_cmpint (fb_winograd_conv_run (conv, x, bias, in_place ? got : add, got), ==, 0);
      double worst = 0;
      for (gsize i = 0; i < ny; i++)
        {
          double err = fabs ((double) got[i] - want[i]), allowed = 1e-5 * scale[i] + 1e-6;
          if (!(err <= allowed))
            g_error ("%ldx%ldx%ld -> %ld channels, pads %ld %ld %ld %ld: element %zu is %g, "
                     "want %g", (long) d->h, (long) d->w, (long) d->c, (long) d->co,
                     (long) d->pt, (long) d->pl, (long) d->pb, (long) d->pr, i, got[i], want[i]);
          worst = MAX (worst, err / (scale[i] + 1e-30));
        }
      g_test_message ("%s phases: worst error relative to the products' magnitudes: %.2g",
                      modes[run], worst);
    }
  g_unsetenv ("FUSEBENCH_WINOGRAD_PHASES");
  fb_winograd_conv_free (conv);
}

static void
test_geometry (void)
{
  omp_set_num_threads (2);
  FbConvDesc cases[] = {
    desc (1, 32, 8, 8, 32, 1, 1, 1, 1),      /* whole tiles */
    desc (1, 19, 9, 11, 21, 1, 1, 1, 1),     /* partial tiles; channels not multiples of 8 */
    desc (1, 5, 7, 6, 3, 0, 0, 0, 0),        /* no padding; fewer channels than a vector */
    desc (2, 40, 10, 13, 48, 1, 0, 2, 1),    /* a batch; asymmetric pads, one of 2 */
    desc (1, 70, 6, 6, 72, 0, 2, 1, 0),      /* two input chunks of 64, a partial one of 16 */
    desc (1, 33, 30, 29, 130, 1, 1, 1, 1),   /* three output chunks; many blocks of tiles */
    desc (1, 129, 3, 3, 17, 1, 1, 1, 1),     /* one tile; three input chunks */
    desc (3, 16, 1, 50, 16, 1, 1, 1, 1),     /* one row of pixels */
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    check (&cases[i], 10 * i + 1, FALSE);
  FbConvDesc no_bias = cases[1];
  no_bias.has_bias = 0;
  check (&no_bias, 99, FALSE);
  omp_set_num_threads (1);
  check (&cases[3], 77, FALSE);
  check (&cases[5], 78, FALSE);
  omp_set_num_threads (2);
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
    { { FB_CONV_POST_RELU }, { FB_CONV_POST_ADD }, { FB_CONV_POST_CLIP, -0.5, 0.5 } },
  };
  const int lens[] = { 2, 2, 1, 2, 3 };
  for (guint i = 0; i < G_N_ELEMENTS (chains); i++)
    {
      FbConvDesc d = desc (1, 36, 11, 10, 40, 1, 1, 1, 1);
      d.n_post = lens[i];
      memcpy (d.post, chains[i], sizeof chains[i]);
      check (&d, 200 + i, FALSE);
    }
}

/* The residual is the output buffer: every output element must be the sum with the addend
 * that was there before the convolution ran, across tile borders, partial tiles and chunks
 * of output channels. */
static void
test_in_place_residual (void)
{
  omp_set_num_threads (2);
  FbConvDesc shapes[] = {
    desc (1, 64, 14, 15, 64, 1, 1, 1, 1),
    desc (2, 24, 9, 7, 100, 1, 0, 1, 2),
  };
  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
    {
      FbConvDesc d = shapes[i];
      d.n_post = 2;
      d.post[0].kind = FB_CONV_POST_ADD;
      d.post[1].kind = FB_CONV_POST_RELU;
      check (&d, 300 + i, TRUE);
    }
}

/* Through fb-dnnl-conv.c as the runtime calls it: the implementation it names, the shapes
 * each instruction set's bounds take, and the same outputs from fb_dnnl_conv_run. */
static void
test_rules (void)
{
  int isa = fb_winograd_conv_isa ();
  gboolean cpu = isa != FB_CONV_ISA_NONE, wide = isa == FB_CONV_ISA_AVX512;
  FbConvDesc d = desc (1, 64, 56, 56, 64, 1, 1, 1, 1);
  g_assert_cmpint (fb_winograd_conv_fits (&d), ==, cpu);
  char impl[256];
  g_assert_cmpint (fb_dnnl_conv_implementation (&d, impl, sizeof impl), ==, 0);
  g_assert_cmpint (g_str_has_prefix (impl, "winograd:"), ==, cpu);
  if (cpu)
    g_assert_true (g_str_has_prefix (impl, wide ? "winograd:avx512" : "winograd:avx2"));

  FbConvDesc few = desc (1, 4, 56, 56, 64, 1, 1, 1, 1);
  FbConvDesc narrow_out = desc (1, 64, 56, 56, 4, 1, 1, 1, 1);
  FbConvDesc seven = desc (1, 224, 7, 7, 224, 1, 1, 1, 1);     /* 4 tiles */
  FbConvDesc big_weights = desc (1, 512, 10, 10, 512, 1, 1, 1, 1);
  FbConvDesc batch = desc (4, 512, 10, 10, 512, 1, 1, 1, 1);  /* 36 tiles share them */
  FbConvDesc small_map = desc (1, 512, 7, 7, 512, 1, 1, 1, 1);  /* weights outweigh tiles */
  FbConvDesc strided = d;
  strided.sh = strided.sw = 2;
  strided.oh = strided.ow = 28;
  FbConvDesc dilated = desc (1, 64, 56, 56, 64, 2, 2, 2, 2);
  dilated.dh = dilated.dw = 2;
  dilated.oh = dilated.ow = 56;
  FbConvDesc five = d;
  five.kh = five.kw = 5;
  five.pt = five.pl = five.pb = five.pr = 2;
  FbConvDesc grouped = d;
  grouped.groups = 2;
  FbConvDesc tanh_after = d;
  tanh_after.n_post = 1;
  tanh_after.post[0].kind = FB_CONV_POST_TANH;
  /* Against brgconv (AVX-512) it needs a map (or batch of maps) of 256 pixels whatever the
   * channels, against the direct convolution (AVX2) enough tiles per KB of weights: ResNet-50's
   * 28x28 layers are taken by both, its 14x14 ones, VGG-19's last 14x14 ones and
   * DenseNet-121's 14x14 ones of 128 -> 32 channels only on AVX2; a U-Net's 16x16 layer of 512
   * channels and a batch of four 10x10 maps by both. */
  FbConvDesc layer2 = desc (1, 128, 28, 28, 128, 1, 1, 1, 1);
  FbConvDesc layer3 = desc (1, 256, 14, 14, 256, 1, 1, 1, 1);
  FbConvDesc vgg_last = desc (1, 512, 14, 14, 512, 1, 1, 1, 1);
  FbConvDesc dense_block3 = desc (1, 128, 14, 14, 32, 1, 1, 1, 1);
  FbConvDesc unet_down = desc (1, 512, 16, 16, 512, 1, 1, 1, 1);
  g_assert_cmpint (fb_winograd_conv_fits (&layer2), ==, cpu);
  g_assert_cmpint (fb_winograd_conv_fits (&layer3), ==, cpu && !wide);
  g_assert_cmpint (fb_winograd_conv_fits (&vgg_last), ==, cpu && !wide);
  g_assert_cmpint (fb_winograd_conv_fits (&dense_block3), ==, cpu && !wide);
  g_assert_cmpint (fb_winograd_conv_fits (&unet_down), ==, cpu);
  g_assert_cmpint (fb_winograd_conv_fits (&batch), ==, cpu);
  /* FUSEBENCH_WINOGRAD=1 takes every shape it can run. */
  g_setenv ("FUSEBENCH_WINOGRAD", "1", TRUE);
  g_assert_cmpint (fb_winograd_conv_fits (&small_map), ==, cpu);
  g_assert_false (fb_winograd_conv_fits (&strided));
  g_unsetenv ("FUSEBENCH_WINOGRAD");
  const FbConvDesc *not_taken[] = { &few, &narrow_out, &seven, &big_weights, &small_map,
                                        &strided, &dilated,
                                        &five, &grouped, &tanh_after };
  for (guint i = 0; i < G_N_ELEMENTS (not_taken); i++)
    {
      g_assert_true (fb_conv_desc_valid (not_taken[i]));
      g_assert_false (fb_winograd_conv_fits (not_taken[i]));
      g_assert_cmpint (fb_dnnl_conv_implementation (not_taken[i], impl, sizeof impl), ==, 0);
      g_assert_false (g_str_has_prefix (impl, "winograd:"));
    }
  /* The escape: FUSEBENCH_WINOGRAD=0 leaves it to the direct convolution (or, with AVX-512
   * and no FUSEBENCH_ISA, to oneDNN). */
  g_setenv ("FUSEBENCH_WINOGRAD", "0", TRUE);
  g_assert_false (fb_winograd_conv_fits (&d));
  g_assert_cmpint (fb_dnnl_conv_implementation (&d, impl, sizeof impl), ==, 0);
  g_assert_false (g_str_has_prefix (impl, "winograd:"));
  g_assert_cmpint (g_str_has_prefix (impl, "direct:"), ==, fb_conv_isa () != FB_CONV_ISA_NONE);
  g_unsetenv ("FUSEBENCH_WINOGRAD");
  /* With no vector path asked for, nothing picks it. */
  g_autofree char *asked = g_strdup (g_getenv ("FUSEBENCH_ISA"));
  g_setenv ("FUSEBENCH_ISA", "none", TRUE);
  g_assert_cmpint (fb_winograd_conv_isa (), ==, FB_CONV_ISA_NONE);
  g_assert_false (fb_winograd_conv_fits (&d));
  if (asked)
    g_setenv ("FUSEBENCH_ISA", asked, TRUE);
  else
    g_unsetenv ("FUSEBENCH_ISA");

  /* The runtime's entry point gives the same outputs as the loop nest. */
  omp_set_num_threads (2);
  FbConvDesc run = desc (1, 48, 20, 18, 40, 1, 1, 1, 1);
  run.n_post = 1;
  run.post[0].kind = FB_CONV_POST_ADD;
  gsize nx = 20 * 18 * 48, nw = 40 * 48 * 9, ny = 20 * 18 * 40;
  g_autofree float *x = tcv_random_floats (nx, 5, 1.0);
  g_autofree float *w = tcv_random_floats (nw, 6, 0.1);
  g_autofree float *bias = tcv_random_floats (40, 7, 0.5);
  g_autofree float *add = tcv_random_floats (ny, 8, 1.0);
  g_autofree float *want = g_new (float, ny);
  g_autofree float *scale = g_new (float, ny);
  g_autofree float *got = g_new (float, ny);
  reference (&run, x, w, bias, add, want, scale);
  char why[256] = "";
  FbDnnlConv *conv = fb_dnnl_conv_new (&run, w, why, sizeof why);
  g_assert_nonnull (conv);
  g_assert_cmpint (fb_dnnl_conv_run (conv, x, NULL, bias, add, got), ==, 0);
  fb_dnnl_conv_free (conv);
  for (gsize i = 0; i < ny; i++)
    g_assert_cmpfloat (fabs ((double) got[i] - want[i]), <=, 1e-5 * scale[i] + 1e-6);
}

/* Every test above on one instruction set: the processor's own where it has it, else skipped
 * with the reason; "default" is no FUSEBENCH_ISA at all, as users run it. */
static void
on_isa (gconstpointer data)
{
  const char *isa = data;
  const char *name = strrchr (g_test_get_path (), '/') + 1;
  if (!tcv_use_isa (isa))
    return;
  g_assert_cmpint (fb_winograd_conv_isa (), ==,
                   strcmp (isa, "avx2") == 0 || !__builtin_cpu_supports ("avx512f")
                     ? FB_CONV_ISA_AVX2 : FB_CONV_ISA_AVX512);
  if (strcmp (name, "geometry") == 0)
    test_geometry ();
  else if (strcmp (name, "post-ops") == 0)
    test_post_ops ();
  else if (strcmp (name, "in-place-residual") == 0)
    test_in_place_residual ();
  else
    test_rules ();
  g_unsetenv ("FUSEBENCH_ISA");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  const char *isas[] = { "avx2", "avx512" };
  const char *tests[] = { "geometry", "post-ops", "in-place-residual", "rules" };
  for (guint i = 0; i < G_N_ELEMENTS (isas); i++)
    for (guint t = 0; t < G_N_ELEMENTS (tests); t++)
      {
        g_autofree char *path = g_strdup_printf ("/winograd-conv/%s/%s", isas[i], tests[t]);
        g_test_add_data_func (path, isas[i], on_isa);
      }
  g_test_add_data_func ("/winograd-conv/default/rules", "default", on_isa);
  return g_test_run ();
}
