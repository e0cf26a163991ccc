/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Patchify convolutions on the GPU as one matrix product. A convolution whose windows tile its
 * input without overlap or gaps between them (kernel = stride, no padding, no dilation, one
 * group), as a vision transformer's patch embedding (16x16 windows, stride 16) or ConvNeXt's
 * stem and downsampling layers are, reads each input element once: it is a matrix product of
 * the patches, one row per output pixel, with the weights. cuDNN ran ViT-B/16's patch
 * embedding (3 -> 768 channels over 224x224) in 65 us on an H200, where PyTorch's took 37; as
 * the copy and the product the model's graph replay went from 1.877 to 1.836 ms.
 *
 * Channels-last, a patch's elements lie as KH runs of KW * C contiguous input elements, so the
 * lowering copies each patch into a row of a scratch matrix P [N * OH * OW, KH * KW * C] (a
 * generated pass, every element its own thread, read and written in order) and multiplies it
 * by the weights repacked [Co, KH, KW, C] once at lowering: Y = P W^T, the channels-last
 * output itself, with the bias as cuBLASLt's epilogue and a residual Add as its C operand.
 * Anything else the graph fused after the convolution is a generated pass over Y. The product
 * may run on TF32 tensor cores as the convolution would have (the module's strict float32 says
 * otherwise). Channels-first convolutions keep cuDNN. FUSEBENCH_GPU_PATCHIFY=0 keeps cuDNN
 * for these too, to compare. */
#include "fb-lower-conv.h"

gboolean
_fb_lower_patchify_gpu_fits (const FbLowerCtx *c, const FbNode *node, const FbConvGeom *g)
{
  const FbValue *w = node->inputs[1];
  return _fb_lower_for_gpu (c) && g->nhwc && !g->transposed && !g->is1d && g->G == 1 &&
         g->KH == g->sh && g->KW == g->sw && g->KH * g->KW > 1 && g->dh == 1 && g->dw == 1 &&
         g->pt == 0 && g->pl == 0 && g->pb == 0 && g->pr == 0 && g->OH * g->KH <= g->H &&
         g->OW * g->KW <= g->W && w->constant != NULL && w->constant->rank == 4 &&
         g_strcmp0 (g_getenv ("FUSEBENCH_GPU_PATCHIFY"), "0") != 0;
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

gboolean
_fb_lower_patchify_gpu (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *w = node->inputs[1], *y = node->outputs[0];
  const FbValue *bias = fb_node_input (node, 2);
  if (bias && (bias->dtype != FB_DTYPE_FLOAT32 || _fb_lower_numel (bias) != g->Co))
    bias = NULL;   /* (then added by the pass after the product) */
  g_autoptr(FbTensor) repacked = _fb_lower_conv_repack (w->constant, FALSE, error);
  if (repacked == NULL)
    return FALSE;

  guint p = patches (c, x, g);
  int64_t rows = g->N * g->OH * g->OW, row = g->KH * g->KW * g->C;
  FbKConv cv = { .lib = FB_KLIB_GEMM, .bias = FB_KCONV_NO_ARG, .add = FB_KCONV_NO_ARG };
  cv.gemm = (FbKGemm) { .ta = 0, .tb = 1, .m = rows, .n = g->Co, .k = row, .lda = row,
                        .ldb = row, .ldc = g->Co, .batch = 1, .alpha = 1.0, .tf32 = 1 };
  cv.x = p;
  g_autofree char *name = g_strdup_printf ("%s.hwc", w->name);
  cv.w = _fb_lower_const_arg (c, repacked, name);
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
