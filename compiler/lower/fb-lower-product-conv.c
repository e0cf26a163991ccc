/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A product by constant weights, A[M, K] B[K, N] (a linear layer: MatMul, or Gemm with its
 * bias), as one oneDNN 1x1 convolution on the cpu target: A's rows are the pixels of a
 * channels-last image of one row, B the weights [N, K, 1, 1]. The primitive reorders the
 * weights once when the plan is loaded, where every tile's sgemm packs them again at every run,
 * and its post-ops take the bias, a residual Add and the activations fb-lower-dnnl-conv.c maps.
 *
 * Measured on one Zen 4 core (oneDNN 2.6, brgconv_1x1:avx512_core): in isolation, weights
 * hot, Swin-T's last stage (49 x 768 by 768 x 3072, bias and GELU) ran at 232-241 GFLOP/s, as
 * oneDNN's matmul primitive does; in the model, its weights arriving cold, as long as in tiles
 * of columns (1.23 against 1.21 ms), and the products of 196 rows 5-15 % faster than in tiles;
 * those of 3136 rows no faster (packing is then a small part of the work). ViT-S/16 went from
 * 46.4-46.7 to 43.3-44.1 ms on one core. FUSEBENCH_PRODUCT_CONV=0 keeps every product in sgemm
 * tiles, =1 takes every one that fits whatever its size, to measure again. */
#include "fb-lower-private.h"
#include "fb-lower-conv.h"

#include <string.h>

/* Where a product runs as a convolution by default: where it measured faster. Under 16 rows
 * the weights' bandwidth is the product's time, which the tiles of columns (and one row's dot
 * products) stream better. Under 16 MFLOP the primitive's own cost and, on several threads,
 * its OpenMP team are as much as the packing saves: GPT-2-shaped products of 1.6 MFLOP took
 * the same 6.7-6.9 us either way on one Zen 4 core, and 11.7 against 8.3 us on two. */
#define PRODUCT_CONV_MIN_ROWS 16
#define PRODUCT_CONV_MAX_ROWS 1024
#define PRODUCT_CONV_MIN_FLOPS 16.0e6

/* A float constant of n elements along the last axis: a bias broadcast along the rows. */
static gboolean
is_row_bias (const FbValue *v, int64_t n)
{
  return v && v->constant && v->dtype == FB_DTYPE_FLOAT32 && _fb_lower_numel (v) == n &&
         v->shape.rank >= 1 && v->shape.dim[v->shape.rank - 1] == n;
}

/* The bias of the chain's first step when that is Add (y, bias along the rows), its output in
 * *next; NULL otherwise. */
static const FbValue *
chain_bias (FbLowerCtx *c, const FbValue *y, int64_t n, const FbValue **next)
{
  GPtrArray *users = g_hash_table_lookup (c->body_uses, y);
  if (users == NULL || users->len != 1)
    return NULL;
  const FbNode *u = g_ptr_array_index (users, 0);
  if (u->op != FB_OP_ADD || u->n_inputs != 2 || u->n_outputs != 1 ||
      !fb_shape_equal (&u->outputs[0]->shape, &y->shape))
    return NULL;
  const FbValue *b = u->inputs[0] == y ? u->inputs[1] : u->inputs[0];
  if (b == y || !is_row_bias (b, n))
    return NULL;
  *next = u->outputs[0];
  return b;
}

/* The weights as the convolution reads them, [N, K, 1, 1], times alpha. */
static FbTensor *
conv_weights (const FbTensor *b, gboolean tb, int64_t n, int64_t k, double alpha, GError **error)
{
  int64_t dims[4] = { n, k, 1, 1 };
  FbTensor *w = fb_tensor_new (FB_DTYPE_FLOAT32, 4, dims, error);
  if (w == NULL)
    return NULL;
  const float *src = fb_tensor_data (b);
  float *dst = fb_tensor_data_mut (w);
  for (int64_t o = 0; o < n; o++)
    for (int64_t i = 0; i < k; i++)
      dst[o * k + i] = (float) (alpha * (tb ? src[o * k + i] : src[i * n + o]));
  return w;
}

static FbTensor *
scaled_bias (const FbTensor *c, int64_t n, double beta, GError **error)
{
  FbTensor *t = fb_tensor_new (FB_DTYPE_FLOAT32, 1, &n, error);
  if (t == NULL)
    return NULL;
  float *dst = fb_tensor_data_mut (t);
  for (int64_t i = 0; i < n; i++)
    dst[i] = (float) (beta * fb_tensor_get_f64 (c, i));
  return t;
}

gboolean
_fb_lower_product_conv (FbLowerCtx *c, const FbNode *node, int64_t rows, int64_t n, int64_t k,
                        gboolean tb, gboolean *taken, GError **error)
{
  const FbValue *va = node->inputs[0], *vb = node->inputs[1], *vy = node->outputs[0];
  const char *force = g_getenv ("FUSEBENCH_PRODUCT_CONV");
  *taken = FALSE;
  gboolean wanted = rows >= PRODUCT_CONV_MIN_ROWS && rows <= PRODUCT_CONV_MAX_ROWS &&
                    2.0 * rows * n * k >= PRODUCT_CONV_MIN_FLOPS;
  if (g_strcmp0 (force, "0") == 0 || (!wanted && g_strcmp0 (force, "1") != 0) ||
      c->lp->plan->target_desc == NULL || c->lp->plan->target_desc->conv_library == NULL ||
      vb->constant == NULL || vb->constant->dtype != FB_DTYPE_FLOAT32 ||
      va->dtype != FB_DTYPE_FLOAT32 || vy->dtype != FB_DTYPE_FLOAT32)
    return TRUE;
  gboolean is_gemm = node->op == FB_OP_GEMM;
  double alpha = is_gemm ? fb_node_attr_float (node, "alpha", 1.0f) : 1.0;
  double beta = is_gemm ? fb_node_attr_float (node, "beta", 1.0f) : 1.0;
  const FbValue *bias = is_gemm && beta != 0.0 ? fb_node_input (node, 2) : NULL;
  if (bias && !is_row_bias (bias, n))
    return TRUE;
  double bias_scale = bias ? beta : 1.0;

  FbKConv cv = {
    .desc = { .n = 1, .c = k, .h = 1, .w = rows, .co = n, .oh = 1, .ow = rows, .groups = 1,
              .kh = 1, .kw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1 },
    .bias = FB_KCONV_NO_ARG, .add = FB_KCONV_NO_ARG, .scale = FB_KCONV_NO_ARG,
  };
  /* The sunk chain: a bias Add first (a MatMul's), then post-ops, all of it or none. */
  const FbValue *end = g_hash_table_lookup (c->sunk, vy), *cur = vy, *add = NULL;
  if (end && bias == NULL)
    bias = chain_bias (c, vy, n, &cur);
  if (end && cur != end && !_fb_lower_dnnl_post_chain (c, cur, end, &cv, &add))
    return TRUE;
  cv.desc.has_bias = bias != NULL;
  if (!fb_conv_desc_valid (&cv.desc) || !_fb_lower_conv_fast (c->lp->plan->target_desc, &cv.desc))
    return TRUE;

  *taken = TRUE;
  cv.x = _fb_lower_arg (c, va, FB_KARG_INPUT);
  g_autoptr(FbTensor) w = conv_weights (vb->constant, tb, n, k, alpha, error);
  if (w == NULL)
    return FALSE;
  g_autofree char *wname = g_strdup_printf ("%s.nk", vb->name);
  cv.w = _fb_lower_const_arg (c, w, wname);
  if (bias && bias_scale == 1.0)
    cv.bias = _fb_lower_arg (c, bias, FB_KARG_INPUT);
  else if (bias)
    {
      g_autoptr(FbTensor) scaled = scaled_bias (bias->constant, n, bias_scale, error);
      if (scaled == NULL)
        return FALSE;
      g_autofree char *bname = g_strdup_printf ("%s.beta", bias->name);
      cv.bias = _fb_lower_const_arg (c, scaled, bname);
    }
  if (add)
    cv.add = _fb_lower_arg (c, add, FB_KARG_INPUT);
  cv.y = _fb_lower_out_arg (c, end ? end : vy);
  fb_kernel_add_conv_phase (c->k, &cv, 2.0 * rows * n * k);
  c->k->kind = FB_KERNEL_LIBRARY;
  char *label = c->k->label;
  c->k->label = g_strdup_printf ("%s (as a 1x1 convolution, weights reordered once)",
                                 label ? label : "");
  g_free (label);
  return TRUE;
}
