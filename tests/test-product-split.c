/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Float32 products as one TF32 product of their operands split along the depth, on the cuda
 * target's plans (compiler/lower/fb-lower-product-split.c): the rounding to TF32 the split
 * makes, which products split, how their descriptions read the split operands, and that the
 * plan still computes the model. The plans run through the emulated PTX kernels (the split
 * pass among them) and their products on the host, each operand of a split product read as
 * tensor cores read it (10 fraction bits), against the interpreter at float32's tolerance: a
 * split whose first part kept bits TF32 drops would miss it. FUSEBENCH_PRODUCT_SPLIT=1 splits
 * every product with constant weights (these are too small for the rule), =0 none. Model:
 * tests/split/make-split-models.py. */
#include "fb-lower.h"
#include "fb-lower-private.h"
#include "fb-memory-plan.h"
#include "fb-test-ptx.h"

#include <float.h>
#include <math.h>
#include <string.h>

static uint32_t
bits_of (float v)
{
  uint32_t b;
  memcpy (&b, &v, sizeof b);
  return b;
}

/* Nearest with ties away from zero, 13 low bits clear; infinities, NaNs and what would round
 * past the largest float truncated instead. */
static void
test_round (void)
{
  g_assert_cmpfloat (fb_tf32_round (1.0f), ==, 1.0f);
  g_assert_cmpfloat (fb_tf32_round (1.0f + ldexpf (1, -12)), ==, 1.0f);
  g_assert_cmpfloat (fb_tf32_round (1.0f + ldexpf (1, -11)), ==, 1.0f + ldexpf (1, -10));
  g_assert_cmpfloat (fb_tf32_round (-(1.0f + 3 * ldexpf (1, -12))), ==, -(1.0f + ldexpf (1, -10)));
  g_assert_cmpuint (bits_of (fb_tf32_round (-0.0f)), ==, bits_of (-0.0f));
  g_assert_cmpfloat (fb_tf32_round (INFINITY), ==, INFINITY);
  g_assert_cmpfloat (fb_tf32_round (-INFINITY), ==, -INFINITY);
  g_assert_true (isnan (fb_tf32_round (NAN)));
  g_assert_cmpuint (bits_of (fb_tf32_round (FLT_MAX)), ==, 0x7f7fe000u);
  GRand *rand = g_rand_new_with_seed (1204);
  for (int i = 0; i < 100000; i++)
    {
      float x = (float) (g_rand_double_range (rand, -1, 1) * ldexp (1, g_rand_int_range (rand, -60, 60)));
      float r = fb_tf32_round (x);
      g_assert_cmpuint (bits_of (r) & 0x1fffu, ==, 0);
      g_assert_cmpfloat (fabsf (x - r), <=, ldexpf (fabsf (x), -11));
    }
  g_rand_free (rand);
}

typedef struct {
  guint split, plain;     /* products with constant weights split, and not */
  guint after_pass;       /* split products whose kernel's phase before them is generated */
  guint trans_b, with_bias, with_residual;
} Counts;

static Counts
count (const FbPlan *plan)
{
  Counts n = { 0 };
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          const FbKConv *cv = ((const FbKPhase *) g_ptr_array_index (kernel->phases, p))->conv;
          if (cv == NULL || cv->lib != FB_KLIB_GEMM)
            continue;
          const FbKGemm *g = &cv->gemm;
          if (!g->split3)
            {
              n.plain++;
              continue;
            }
          n.split++;
          /* Every product of the model has a depth of 32; the split reads A by rows. */
          g_assert_cmpint (g->k, ==, 96);
          g_assert_cmpint (g->ta, ==, 0);
          g_assert_cmpint (g->lda, ==, 96);
          g_assert_cmpint (g->ldb, ==, g->tb ? 96 : g->n);
          g_assert_cmpint (g->tf32, ==, 1);
          const FbBuffer *w = fb_plan_buffer (plan, g_array_index (kernel->args, FbKArg, cv->w).buffer);
          g_assert_nonnull (w->constant);
          g_assert_cmpint (w->constant->numel, ==, g->k * g->n);
          n.after_pass += p > 0 && ((const FbKPhase *) g_ptr_array_index (kernel->phases, p - 1))->conv == NULL;
          n.trans_b += g->tb;
          n.with_bias += cv->bias != FB_KCONV_NO_ARG;
          n.with_residual += cv->add != FB_KCONV_NO_ARG;
        }
    }
  return n;
}

static Counts
count_with (const char *mode)
{
  if (mode)
    g_setenv ("FUSEBENCH_PRODUCT_SPLIT", mode, TRUE);
  else
    g_unsetenv ("FUSEBENCH_PRODUCT_SPLIT");
  g_autoptr(FbGraph) graph = tc_load ("split", "products");
  g_autoptr(FbPipeline) p = NULL;
  g_autoptr(FbPlan) plan = tp_lower_for_cuda (graph, FB_LAYOUT_NCHW, &p);
  Counts n = count (plan);
  g_unsetenv ("FUSEBENCH_PRODUCT_SPLIT");
  return n;
}

/* Every product split, each after its pass, the epilogues kept; the model still computed,
 * and a bundle keeps what the products are. */
static void
test_products (void)
{
  Counts n = count_with ("1");
  g_assert_cmpuint (n.split, ==, 5);
  g_assert_cmpuint (n.plain, ==, 0);
  g_assert_cmpuint (n.after_pass, ==, 5);
  g_assert_cmpuint (n.trans_b, ==, 1);
  g_assert_cmpuint (n.with_bias, >=, 2);
  g_assert_cmpuint (n.with_residual, ==, 1);

  g_setenv ("FUSEBENCH_PRODUCT_SPLIT", "1", TRUE);
  FbGraph *graph = tc_load ("split", "products");
  g_autoptr(GPtrArray) inputs = tc_seeded_inputs (graph, 1205);
  g_autoptr(FbPipeline) p = NULL;
  g_autoptr(FbPlan) plan = tp_lower_for_cuda (graph, FB_LAYOUT_NCHW, &p);
  fb_plan_layout_memory (plan);
  tc_check_arena (plan);
  g_autoptr(FbPlan) loaded = tp_cuda_bundle_round_trip (p);
  tp_assert_same_products (plan, loaded);
  /* Float32's own distance, not TF32's (which reads 2^-11 of each operand off). */
  tp_check_emulated_pipeline_within (graph, FB_LAYOUT_NCHW, (FbTensor **) inputs->pdata,
                                     inputs->len, FALSE, 2e-5, 2e-6);
  g_unsetenv ("FUSEBENCH_PRODUCT_SPLIT");
}

/* These products are of 24 to 48 rows: the rule leaves them in float32, as does =0. */
static void
test_rule (void)
{
  Counts rule = count_with (NULL), off = count_with ("0");
  g_assert_cmpuint (rule.split, ==, 0);
  g_assert_cmpuint (rule.plain, ==, 5);
  g_assert_cmpuint (off.split, ==, 0);
  g_assert_cmpuint (off.plain, ==, 5);
}

static gboolean
wanted (int64_t m, int64_t k, int64_t n)
{
  g_autoptr(GError) error = NULL;
  int64_t one = 1;
  g_autoptr(FbTensor) weights = fb_tensor_new (FB_DTYPE_FLOAT32, 1, &one, &error);
  g_assert_no_error (error);
  FbValue w = { .dtype = FB_DTYPE_FLOAT32, .constant = weights };
  FbKGemm g = { .m = m, .n = n, .k = k, .lda = k, .ldb = n, .ldc = n, .batch = 1, .alpha = 1 };
  return _fb_lower_product_split_wanted (&w, &g, 1);
}

/* The rule by shape, as measured inside a model on an H200 (fb-lower-product-split.c): the
 * shapes that gained split, those that lost do not. */
static void
test_rule_shapes (void)
{
  g_unsetenv ("FUSEBENCH_PRODUCT_SPLIT");
  /* ViT-B/16's layers, 197 rows. */
  g_assert_true (wanted (197, 768, 2304));
  g_assert_true (wanted (197, 3072, 768));
  g_assert_false (wanted (197, 768, 768));
  /* BERT's, 128 rows: the pass costs what the product gains. */
  g_assert_false (wanted (128, 768, 3072));
  /* A last stage at 7x7, 49 rows: its qkv and MLP layers, not its 768 x 768 projection. */
  g_assert_true (wanted (49, 768, 2304));
  g_assert_true (wanted (49, 768, 3072));
  g_assert_true (wanted (49, 3072, 768));
  g_assert_false (wanted (49, 768, 768));
  /* Earlier stages, under 2^28 multiply-adds. */
  g_assert_false (wanted (196, 384, 1536));
  g_assert_false (wanted (3136, 96, 384));
  /* A few rows read B's memory: tripling it would not pay. */
  g_assert_false (wanted (8, 4096, 4096));
  g_setenv ("FUSEBENCH_PRODUCT_SPLIT", "0", TRUE);
  g_assert_false (wanted (49, 768, 3072));
  g_unsetenv ("FUSEBENCH_PRODUCT_SPLIT");
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/product-split/round", test_round);
  g_test_add_func ("/product-split/products", test_products);
  g_test_add_func ("/product-split/rule", test_rule);
  g_test_add_func ("/product-split/rule-shapes", test_rule_shapes);
  return g_test_run ();
}
