/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Float32 matrix products on TF32 tensor cores, to float32's accuracy ("3xTF32"). PyTorch's
 * default matmul precision is full float32, which cuBLASLt runs on the CUDA cores; TF32 tensor
 * cores run about seven times the FLOPs but read only 10 fraction bits of each operand (a
 * transformer's output then moves by 3e-4 to 3e-3, past allclose's 1e-3). Each float32 x is
 * hi + lo, hi = x rounded to TF32 and lo = x - hi (exact, at most 2^-11 of |x|), so
 *
 *   A B = A_hi B_hi + A_hi B_lo + A_lo B_hi + A_lo B_lo,
 *
 * and the last term is under 2^-22 of the product: three TF32 products keep float32's
 * accuracy. They are one cuBLASLt TF32 product over three times the depth,
 * [A_hi | A_hi | A_lo] [B_hi; B_lo; B_hi]. Where B is a constant (a linear layer's weights)
 * its three parts are made here, at lowering, packed as B was (transposed or not); A's are a
 * generated pass writing each row of A three times over, before the product.
 *
 * On an H200, PyTorch's cuBLAS in float32 against one TF32 product of the split operands over
 * 3K (medians in a CUDA graph): ViT-B/16's 197 x 768 x 2304 product 29.7 -> 18.4 us, 197 x
 * 768 x 3072 35.0 -> 19.3, 197 x 3072 x 768 36.7 -> 26.5, relative L2 distance to float64
 * 1e-6 to 8e-6 (float32: 2e-7 to 4e-7, plain TF32: 2.9e-4). Products of 128 rows (BERT and
 * GPT-2 at 128 tokens) gained 1.5 to 4 us of 11 to 22, less than the split pass costs, and
 * 197 x 768 x 768 2.2 us: so only products of at least 192 rows and 2^28 multiply-adds split.
 *
 * Products of a few dozen rows split too from 2^26 multiply-adds. Inside a model (a chain of 12
 * linear layers, bench/gpu-vs-torch/product-split.sh, H200), splitting took 49 x 768 x 2304
 * 2.2 us of 16.8, 49 x 768 x 3072 1.9 and 49 x 3072 x 768 1.6 (a Swin's or ConvNeXt's last
 * stage at 7x7), where 49 x 768 x 768 (2^24.8) lost 2.1 us, and every product of 196, 784
 * and 3136 rows under 2^28 lost 0.8 to 4.8 us. Few rows leave float32's CUDA-core kernels
 * short of work while the split's extra reads of B (twice K x N) stay small beside them;
 * under 32 rows a product is bound by reading B, which the split triples, so it stays float32.
 * The price is three times the weights' memory for the products that split.
 *
 * FUSEBENCH_PRODUCT_SPLIT=0 keeps every product in float32, =1 splits every product with
 * constant float32 weights (the tests use it on small shapes). The module's strict float32
 * runs the split product in float32 too: the same sum, three times the work; its TF32 matmul
 * option runs the first third of the depth, A_hi B_hi, the plain TF32 product. An infinite
 * activation gives NaN where float32 gives an infinity: it meets a weight's zero remainder. */
#include "fb-lower-private.h"

#define SPLIT_MIN_ROWS 192
#define SPLIT_MIN_MACS ((double) (1 << 28))
#define SPLIT_FEW_ROWS_MIN 32
#define SPLIT_FEW_ROWS_MAX 64
#define SPLIT_FEW_ROWS_MIN_MACS ((double) (1 << 26))

gboolean
_fb_lower_product_split_wanted (const FbValue *w, const FbKGemm *g, int64_t products)
{
  const char *mode = g_getenv ("FUSEBENCH_PRODUCT_SPLIT");
  /* One product of one B: the lowering has already made a batch sharing its weights one
   * taller product, so a batch left is one of several weights (not split). */
  if (g_strcmp0 (mode, "0") == 0 || w->constant == NULL || w->dtype != FB_DTYPE_FLOAT32 ||
      g->tf32 || products != 1 || g->batch != 1 || g->k > G_MAXINT32 / 3)
    return FALSE;
  if (g_strcmp0 (mode, "1") == 0)
    return TRUE;
  double macs = (double) g->m * g->n * g->k;
  if (g->m >= SPLIT_FEW_ROWS_MIN && g->m <= SPLIT_FEW_ROWS_MAX)
    return macs >= SPLIT_FEW_ROWS_MIN_MACS;
  return g->m >= SPLIT_MIN_ROWS && macs >= SPLIT_MIN_MACS;
}

/* hi and lo of x as the generated pass makes them. */
static void
split (float x, float *hi, float *lo)
{
  *hi = fb_tf32_round (x);
  *lo = *hi == x ? 0.0f : x - *hi;
}

/* [B_hi; B_lo; B_hi] along the depth, packed as B is laid out (rows of the depth when
 * transposed). */
static FbTensor *
split_weights (const FbTensor *w, const FbKGemm *g, GError **error)
{
  int64_t K = g->k, N = g->n;
  int64_t dims[2] = { g->tb ? N : 3 * K, g->tb ? 3 * K : N };
  FbTensor *t = fb_tensor_new (FB_DTYPE_FLOAT32, 2, dims, error);
  if (t == NULL)
    return NULL;
  const float *in = fb_tensor_data (w);
  float *out = fb_tensor_data_mut (t);
  for (int64_t kk = 0; kk < K; kk++)
    for (int64_t n = 0; n < N; n++)
      {
        float hi, lo;
        split (in[g->off_b + (g->tb ? n * g->ldb + kk : kk * g->ldb + n)], &hi, &lo);
        if (g->tb)
          {
            float *row = out + n * 3 * K;
            row[kk] = hi;
            row[K + kk] = lo;
            row[2 * K + kk] = hi;
          }
        else
          {
            out[kk * N + n] = hi;
            out[(K + kk) * N + n] = lo;
            out[(2 * K + kk) * N + n] = hi;
          }
      }
  return t;
}

/* The pass writing each row of op(A) as [hi | hi | lo] into a new scratch matrix; its
 * argument. Its nest is [row, part, depth] with one store, so that the code generator sees
 * every element written once and spreads all three loops over the GPU's threads. */
static guint
split_rows (FbLowerCtx *c, const FbValue *a, const FbKGemm *g)
{
  FbKernel *k = c->k;
  int64_t dims[3] = { g->m, 3, g->k }, sd[2] = { g->m, 3 * g->k };
  guint s = _fb_lower_scratch (c, "split operand", FB_DTYPE_FLOAT32, 2, sd);
  guint aa = _fb_lower_arg (c, a, FB_KARG_INPUT);
  FbKExpr *pc[3];
  GPtrArray *body = _fb_lower_nest (c, 3, dims, pc, (double) g->m * g->k * 3);
  /* Element (row, depth) where the product would have read it. */
  FbKExpr *row = pc[0], *depth = pc[2];
  FbKExpr *at = g->ta ? fb_kx_add (k, fb_kx_mul_c (k, depth, g->lda), row)
                      : fb_kx_add (k, fb_kx_mul_c (k, row, g->lda), depth);
  FbKExpr *x = fb_kx_load (k, aa, fb_kx_add (k, at, fb_kx_index (k, g->off_a)));
  FbKExpr *hi = fb_kx_unary (k, FB_KU_TF32, x);
  FbKExpr *lo = fb_kx_select (k, fb_kx_binary (k, FB_KB_EQ, hi, x),
                              fb_kx_const_f (k, FB_DTYPE_FLOAT32, 0.0),
                              fb_kx_binary (k, FB_KB_SUB, x, hi));
  FbKExpr *last = fb_kx_binary (k, FB_KB_EQ, pc[1], fb_kx_index (k, 2));
  g_ptr_array_add (body, fb_ks_store (k, s, _fb_lower_index (k, 3, dims, pc),
                                      fb_kx_select (k, last, lo, hi)));
  return s;
}

gboolean
_fb_lower_product_split (FbLowerCtx *c, FbKConv *cv, const FbValue *a, const FbValue *w,
                         GError **error)
{
  FbKGemm *g = &cv->gemm;
  g_autoptr(FbTensor) parts = split_weights (w->constant, g, error);
  if (parts == NULL)
    return FALSE;
  g_autofree char *name = g_strdup_printf ("%s.tf32x3", w->name);
  cv->w = _fb_lower_const_arg (c, parts, name);
  cv->x = split_rows (c, a, g);
  g->k *= 3;
  g->ta = 0;
  g->lda = g->k;
  g->off_a = 0;
  g->stride_a = 0;
  g->ldb = g->tb ? g->k : g->n;
  g->off_b = 0;
  g->stride_b = 0;
  g->tf32 = 1;
  g->split3 = 1;
  return TRUE;
}
