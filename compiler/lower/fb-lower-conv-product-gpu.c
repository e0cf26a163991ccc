/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Channels-last convolutions on the GPU that are one cuBLASLt product: a convolution whose
 * windows tile its input without overlap or gaps (kernel = stride, no padding, no dilation,
 * one group) reads each input element once, so it is a matrix product of the patches, one row
 * per output pixel, with the weights.
 *
 * Patchify (windows larger than one pixel: a vision transformer's 16x16 patch embedding,
 * ConvNeXt's stem and downsampling layers). A patch's elements lie as KH runs of KW * C
 * contiguous input elements, so a generated pass copies each patch into a row of a scratch
 * matrix P [N * OH * OW, KH * KW * C] (every element its own thread, read and written in
 * order), which is multiplied by the weights repacked [Co, KH, KW, C] once at lowering. cuDNN
 * ran ViT-B/16's patch embedding (3 -> 768 channels over 224x224) in 65 us on an H200, where
 * PyTorch's took 37; as the copy and the product the model's graph replay went from 1.877 to
 * 1.836 ms.
 *
 * Pointwise (1x1, stride 1): the input itself is P, [N * H * W, C], and the weights [Co, C]
 * are B as they are. These go to cuBLASLt only where nothing but a bias and a residual Add
 * follows them (a block's projection): cuDNN needs a generated pass after it for those, while
 * an activation it fuses itself (cuBLASLt's epilogues have no Swish or Clip). A pointwise
 * convolution whose input is scaled per image and channel (a squeeze-excitation's x * s, the
 * prologue fuse-epilogue gives it) folds the scale into its weights: a generated pass writes
 * W[n] = W * s[n] along the input channels, [N, Co, C], and the product runs batched over the
 * images, each with its own weights. The pass over x * s, the size of the block's widest map,
 * is gone (fuse-epilogue takes the prologue only where the weights of all images are small
 * beside x).
 *
 * Y = P W^T is the channels-last output itself, with the bias as cuBLASLt's epilogue and a
 * residual Add as its C operand. Anything else the graph fused after the convolution is a
 * generated pass over Y. The product may run on TF32 tensor cores as the convolution would
 * have (the module's strict float32 says otherwise). Channels-first convolutions keep cuDNN.
 * FUSEBENCH_GPU_PATCHIFY=0 and FUSEBENCH_GPU_POINTWISE=0 keep cuDNN for each kind, to
 * compare. */
#include "fb-lower-conv.h"

static gboolean
switched_off (const char *name)
{
  return g_strcmp0 (g_getenv (name), "0") == 0;
}

static gboolean
windows_tile (const FbConvGeom *g)
{
  return g->nhwc && !g->transposed && !g->is1d && g->G == 1 && g->KH == g->sh &&
         g->KW == g->sw && g->dh == 1 && g->dw == 1 && g->pt == 0 && g->pl == 0 && g->pb == 0 &&
         g->pr == 0 && g->OH * g->KH <= g->H && g->OW * g->KW <= g->W;
}

/* A residual Add ending the fused chain of y: the tensor added, of y's shape; else NULL. */
static const FbValue *
residual_of (const FbValue *y, const FbValue *end)
{
  const FbNode *add = end ? end->producer : NULL;
  if (add == NULL || add->op != FB_OP_ADD || add->n_inputs != 2 ||
      !fb_shape_equal (&end->shape, &y->shape) || end->dtype != FB_DTYPE_FLOAT32)
    return NULL;
  const FbValue *r = add->inputs[0] == y ? add->inputs[1]
                   : add->inputs[1] == y ? add->inputs[0] : NULL;
  return r && r != y && r->dtype == FB_DTYPE_FLOAT32 && fb_shape_equal (&r->shape, &y->shape)
         ? r : NULL;
}

/* The bias cuBLASLt's epilogue can add: float32, one number per output channel. */
static const FbValue *
epilogue_bias (const FbNode *node, const FbConvGeom *g)
{
  const FbValue *bias = fb_node_input (node, 2);
  return bias && bias->dtype == FB_DTYPE_FLOAT32 && _fb_lower_numel (bias) == g->Co ? bias : NULL;
}

gboolean
_fb_lower_conv_product_gpu_fits (const FbLowerCtx *c, const FbNode *node, const FbConvGeom *g)
{
  const FbValue *w = node->inputs[1];
  if (!_fb_lower_for_gpu (c) || !windows_tile (g) || w->constant == NULL ||
      w->constant->rank != 4)
    return FALSE;
  if (g->KH * g->KW > 1)
    return !switched_off ("FUSEBENCH_GPU_PATCHIFY");
  /* Pointwise: the whole chain after it must be the product's own epilogue. */
  const FbValue *y = node->outputs[0], *end = g_hash_table_lookup (c->sunk, y);
  return !switched_off ("FUSEBENCH_GPU_POINTWISE") &&
         (fb_node_input (node, 2) == NULL || epilogue_bias (node, g) != NULL) &&
         (end == NULL || residual_of (y, end) != NULL);
}

/* The pass copying each patch of x into its row of a new scratch matrix; its argument. */
static guint
patches (FbLowerCtx *c, const FbValue *x, const FbConvGeom *g)
{
  FbKernel *k = c->k;
  int64_t dims[6] = { g->N, g->OH, g->OW, g->KH, g->KW, g->C };
  int64_t rows = g->N * g->OH * g->OW, row = g->KH * g->KW * g->C;
  int64_t pd[2] = { rows, row };
  guint p = _fb_lower_scratch (c, "patches", FB_DTYPE_FLOAT32, 2, pd);
  guint xa = _fb_lower_arg (c, x, FB_KARG_INPUT);
  FbKExpr *pc[6];
  GPtrArray *body = _fb_lower_nest (c, 6, dims, pc, (double) rows * row);
  /* x[n, oh * KH + i, ow * KW + j, ch], channels-last. */
  FbKExpr *h = fb_kx_add (k, fb_kx_mul_c (k, pc[1], g->KH), pc[3]);
  FbKExpr *wc = fb_kx_add (k, fb_kx_mul_c (k, pc[2], g->KW), pc[4]);
  int64_t xd[4] = { g->N, g->H, g->W, g->C };
  FbKExpr *xc[4] = { pc[0], h, wc, pc[5] };
  g_ptr_array_add (body, fb_ks_store (k, p, _fb_lower_index (k, 6, dims, pc),
                                      fb_kx_load (k, xa, _fb_lower_index (k, 4, xd, xc))));
  return p;
}

/* The pass writing the weights w [Co, C] times the scale s [I, 1, 1, C] along the input
 * channels, for each of its I images (1: one scale for every image): [I, Co, C]; its
 * argument. */
static guint
scaled_weights (FbLowerCtx *c, const FbValue *w, const FbValue *s, const FbConvGeom *g)
{
  FbKernel *k = c->k;
  int64_t images = s->shape.dim[0];
  int64_t dims[3] = { images, g->Co, g->C };
  guint ws = _fb_lower_scratch (c, "scaled weights", FB_DTYPE_FLOAT32, 3, dims);
  guint wa = _fb_lower_arg (c, w, FB_KARG_INPUT), sa = _fb_lower_arg (c, s, FB_KARG_INPUT);
  FbKExpr *wc[3];
  GPtrArray *body = _fb_lower_nest (c, 3, dims, wc, (double) images * g->Co * g->C);
  int64_t wd[2] = { g->Co, g->C }, sd[2] = { images, g->C };
  FbKExpr *wi[2] = { wc[1], wc[2] }, *si[2] = { wc[0], wc[2] };
  FbKExpr *v = fb_kx_binary (k, FB_KB_MUL, fb_kx_load (k, wa, _fb_lower_index (k, 2, wd, wi)),
                             fb_kx_load (k, sa, _fb_lower_index (k, 2, sd, si)));
  g_ptr_array_add (body, fb_ks_store (k, ws, _fb_lower_index (k, 3, dims, wc), v));
  return ws;
}

const FbNode *
_fb_lower_conv_product_gpu_scale_fold (FbLowerCtx *c, const FbNode *m)
{
  const FbValue *y = m->n_outputs == 1 ? m->outputs[0] : NULL, *x, *s;
  if (!_fb_lower_for_gpu (c) || m->op != FB_OP_MUL || y == NULL || y->is_output ||
      g_hash_table_contains (c->bind, y))
    return NULL;
  GPtrArray *users = g_hash_table_lookup (c->body_uses, y);
  const FbNode *conv = users && users->len == 1 ? g_ptr_array_index (users, 0) : NULL;
  FbConvGeom g;
  if (conv == NULL || conv->op != FB_OP_CONV || conv->inputs[0] != y || conv->inputs[1] == y ||
      !_fb_lower_conv_geom (conv, &g, NULL) || g.KH * g.KW != 1 ||
      !_fb_lower_conv_gpu_product (c, conv, &g) ||
      !_fb_lower_scale_operands (m, g.N, g.C, &x, &s))
    return NULL;
  return conv;
}

gboolean
_fb_lower_conv_product_gpu (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g,
                            GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *w = node->inputs[1], *y = node->outputs[0];
  const FbValue *bias = epilogue_bias (node, g);
  int64_t rows = g->N * g->OH * g->OW, row = g->KH * g->KW * g->C;
  FbKConv cv = { .lib = FB_KLIB_GEMM, .bias = FB_KCONV_NO_ARG, .add = FB_KCONV_NO_ARG };
  cv.gemm = (FbKGemm) { .ta = 0, .tb = 1, .m = rows, .n = g->Co, .k = row, .lda = row,
                        .ldb = row, .ldc = g->Co, .batch = 1, .alpha = 1.0, .tf32 = 1 };
  const FbNode *scaler = c->scale_of ? g_hash_table_lookup (c->scale_of, node) : NULL;
  if (scaler)
    {
      const FbValue *s;
      if (!_fb_lower_scale_operands (scaler, g->N, g->C, &x, &s))
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                               "the input scale folded into the weights is not one per channel");
      cv.w = scaled_weights (c, w, s, g);
      cv.x = _fb_lower_arg (c, x, FB_KARG_INPUT);
      if (s->shape.dim[0] > 1)
        {
          /* One product per image, each with its own weights. */
          int64_t pixels = g->OH * g->OW;
          cv.gemm.m = pixels;
          cv.gemm.batch = g->N;
          cv.gemm.stride_a = pixels * g->C;
          cv.gemm.stride_b = g->Co * g->C;
          cv.gemm.stride_c = pixels * g->Co;
        }
    }
  else if (row == g->C)
    {
      cv.x = _fb_lower_arg (c, x, FB_KARG_INPUT);
      cv.w = _fb_lower_arg (c, w, FB_KARG_INPUT);
    }
  else
    {
      g_autoptr(FbTensor) repacked = _fb_lower_conv_repack (w->constant, FALSE, error);
      if (repacked == NULL)
        return FALSE;
      cv.x = patches (c, x, g);
      g_autofree char *name = g_strdup_printf ("%s.hwc", w->name);
      cv.w = _fb_lower_const_arg (c, repacked, name);
    }
  if (bias)
    cv.bias = _fb_lower_arg (c, bias, FB_KARG_INPUT);
  const FbValue *end = g_hash_table_lookup (c->sunk, y);
  const FbValue *residual = bias || fb_node_input (node, 2) == NULL ? residual_of (y, end) : NULL;
  if (residual)
    {
      cv.add = _fb_lower_arg (c, residual, FB_KARG_INPUT);
      cv.y = _fb_lower_out_arg (c, end);
    }
  else
    cv.y = _fb_lower_out_arg (c, y);
  fb_kernel_add_conv_phase (k, &cv, 2.0 * rows * g->Co * row);
  k->kind = FB_KERNEL_LIBRARY;
  if (residual || (end == NULL && (bias || fb_node_input (node, 2) == NULL)))
    return TRUE;

  /* The rest (a bias cuBLASLt cannot take, the fused chain), over Y where it lies. */
  int64_t yd[4] = { g->N, g->OH, g->OW, g->Co };
  FbKExpr *yc[4];
  GPtrArray *body = _fb_lower_nest (c, 4, yd, yc, (double) rows * g->Co);
  FbKExpr *v = fb_kx_load (k, cv.y, _fb_lower_index (k, 4, yd, yc));
  const FbValue *late_bias = bias ? NULL : fb_node_input (node, 2);
  if (late_bias)
    {
      FbKExpr *bv = _fb_lower_value_at (c, late_bias, 1, &yc[3], error);
      if (bv == NULL)
        return FALSE;
      v = fb_kx_binary (k, FB_KB_ADD, v, fb_kx_cast (k, bv, FB_DTYPE_FLOAT32));
    }
  /* The output value's own coordinates: channels-last [n, h, w, c] as the graph's shape says. */
  return _fb_lower_store (c, body, y, yc, v, error);
}
