/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Channels-last float convolutions (and ConvTranspose, fb-lower-deconv.c) as one oneDNN
 * primitive. Its JIT kernels run the 1x1
 * products of a mobile network at 400–500 GFLOP/s on two cores of this project's machines,
 * where sgemm on im2col tiles plus a generated epilogue reaches 190–370, and its depthwise
 * kernels at 80–137 GFLOP/s against 7–52 for generated loops (README.md, "CPU math library").
 *
 * The bias and the sunk elementwise chain become the primitive's post-ops when the chain is
 * a straight line of operations oneDNN has (Relu, LeakyRelu, Clip, Tanh, Sigmoid, Swish,
 * HardSwish, and one Add of a tensor of the output's shape); any other chain is a generated
 * epilogue phase over the convolution's output. */
#include "fb-lower-private.h"
#include "fb-lower-conv.h"

#include <float.h>
#include <math.h>
#include <string.h>

gboolean
_fb_lower_dnnl_conv_fits (const FbNode *node, const FbConvGeom *g)
{
  const FbValue *w = node->inputs[1], *b = fb_node_input (node, 2);
  return g->nhwc && w->constant && w->constant->dtype == FB_DTYPE_FLOAT32 &&
         node->outputs[0]->dtype == FB_DTYPE_FLOAT32 &&
         (b == NULL || b->dtype == FB_DTYPE_FLOAT32);
}

static gboolean
clip_bounds (const FbNode *u, double *lo, double *hi)
{
  *lo = -FLT_MAX;
  *hi = FLT_MAX;
  if (u->opset > 0 && u->opset < 11)
    {
      *lo = MAX (fb_node_attr_float (u, "min", -FLT_MAX), -FLT_MAX);
      *hi = MIN (fb_node_attr_float (u, "max", FLT_MAX), FLT_MAX);
      return TRUE;
    }
  const FbValue *l = fb_node_input (u, 1), *h = fb_node_input (u, 2);
  if ((l && !_fb_lower_is_scalar_const (l)) || (h && !_fb_lower_is_scalar_const (h)))
    return FALSE;
  if (l)
    *lo = fb_tensor_get_f64 (l->constant, 0);
  if (h)
    *hi = fb_tensor_get_f64 (h->constant, 0);
  return isfinite (*lo) && isfinite (*hi);
}

/* The operation u applies to cur as a post-op (*add: the tensor an Add adds). */
static gboolean
post_op (FbLowerCtx *c, const FbNode *u, const FbValue *cur, FbConvPost *p,
         const FbValue **add)
{
  if (u->op == FB_OP_ADD)
    {
      const FbValue *other = u->inputs[0] == cur ? u->inputs[1] : u->inputs[0];
      /* The addend must be whole before the convolution runs: an input of the group. */
      if (*add || other == cur || other->constant || other->dtype != FB_DTYPE_FLOAT32 ||
          !fb_shape_equal (&other->shape, &cur->shape) ||
          (c->bind && !g_hash_table_contains (c->bind, other)))
        return FALSE;
      p->kind = FB_CONV_POST_ADD;
      *add = other;
      return TRUE;
    }
  if ((u->op == FB_OP_MAX || u->op == FB_OP_MIN) && u->n_inputs == 2)
    {
      /* A bound of one constant number (fuse-epilogue takes no other Max or Min). */
      const FbValue *other = u->inputs[0] == cur ? u->inputs[1] : u->inputs[0];
      if (other == NULL || other == cur || !_fb_lower_is_scalar_const (other) ||
          other->dtype != FB_DTYPE_FLOAT32)
        return FALSE;
      p->kind = u->op == FB_OP_MAX ? FB_CONV_POST_MAX : FB_CONV_POST_MIN;
      p->alpha = fb_tensor_get_f64 (other->constant, 0);
      return isfinite (p->alpha);
    }
  if (u->n_inputs < 1 || u->inputs[0] != cur)
    return FALSE;
  switch (u->op)
    {
    case FB_OP_RELU:
      p->kind = FB_CONV_POST_RELU;
      return TRUE;
    case FB_OP_LEAKY_RELU:
      p->kind = FB_CONV_POST_RELU;
      p->alpha = fb_node_attr_float (u, "alpha", 0.01f);
      return TRUE;
    case FB_OP_TANH:
      p->kind = FB_CONV_POST_TANH;
      return TRUE;
    case FB_OP_SIGMOID:
      p->kind = FB_CONV_POST_SIGMOID;
      return TRUE;
    case FB_OP_SWISH:
      p->kind = FB_CONV_POST_SWISH;
      p->alpha = fb_node_attr_float (u, "alpha", 1.0f);
      return TRUE;
    case FB_OP_HARD_SWISH:
      p->kind = FB_CONV_POST_HARD_SWISH;
      p->alpha = 1.0 / 6;
      p->beta = 0.5;
      return TRUE;
    case FB_OP_GELU:
      p->kind = FB_CONV_POST_GELU;
      p->alpha = g_strcmp0 (fb_node_attr_string (u, "approximate", "none"), "tanh") == 0;
      return TRUE;
    case FB_OP_CLIP:
      p->kind = FB_CONV_POST_CLIP;
      return clip_bounds (u, &p->alpha, &p->beta);
    default:
      return FALSE;
    }
}

gboolean
_fb_lower_dnnl_post_chain (FbLowerCtx *c, const FbValue *y, const FbValue *end, FbKConv *cv,
                           const FbValue **add)
{
  const FbValue *cur = y;
  while (cur != end)
    {
      GPtrArray *users = g_hash_table_lookup (c->body_uses, cur);
      if (users == NULL || users->len != 1 || cv->desc.n_post == FB_CONV_MAX_POST)
        return FALSE;
      const FbNode *u = g_ptr_array_index (users, 0);
      FbConvPost *p = &cv->desc.post[cv->desc.n_post];
      if (u->n_outputs != 1 || u->outputs[0] == NULL || !post_op (c, u, cur, p, add))
        return FALSE;
      cv->desc.n_post++;
      cur = u->outputs[0];
    }
  return TRUE;
}

/* The chain the primitive could not take, over its output: load, apply, store. */
static gboolean
epilogue_phase (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g, guint ya, guint bias,
                GError **error)
{
  FbKernel *k = c->k;
  FbKExpr *c4[4], *lc[2];
  /* The innermost loop walks the output's contiguous dimension: channels for NHWC, the row of
   * a plane for NCHW (what keeps a GPU's loads coalesced). */
  int64_t outer[2] = { g->N, g->nhwc ? g->OH : g->Co };
  GPtrArray *body = _fb_lower_nest (c, 2, outer, lc, (double) g->N * g->Co * g->OH * g->OW);
  c4[0] = lc[0];
  if (g->nhwc)
    {
      c4[2] = lc[1];
      body = _fb_lower_loop (k, body, fb_kx_index (k, g->OW), &c4[3]);
      body = _fb_lower_loop (k, body, fb_kx_index (k, g->Co), &c4[1]);
    }
  else
    {
      c4[1] = lc[1];
      body = _fb_lower_loop (k, body, fb_kx_index (k, g->OH), &c4[2]);
      body = _fb_lower_loop (k, body, fb_kx_index (k, g->OW), &c4[3]);
    }
  FbKExpr *yi = g->nhwc
    ? fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_add (k, fb_kx_mul_c (k, c4[0], g->OH * g->OW),
                                                            fb_kx_mul_c (k, c4[2], g->OW)),
                                               c4[3]), g->Co),
                 c4[1])
    : fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, c4[0], g->Co), c4[1]), g->OH * g->OW),
                 fb_kx_add (k, fb_kx_mul_c (k, c4[2], g->OW), c4[3]));
  FbKExpr *yc[4];
  _fb_lower_conv_coords (g, c4, yc);
  FbKExpr *x = fb_kx_load (k, ya, yi);
  if (bias != FB_KCONV_NO_ARG)
    x = fb_kx_binary (k, FB_KB_ADD, x, fb_kx_load (k, bias, c4[1]));
  return _fb_lower_store (c, body, node->outputs[0], yc, x, error);
}

/* Whether the target's library has one of its optimized kernels for d on this machine:
 * oneDNN's reference implementation ("ref:any") is many times slower than the generated loops,
 * and one it has none for would fail when the plan is loaded. */
gboolean
_fb_lower_conv_fast (const FbTargetDesc *target, const FbConvDesc *d)
{
  char impl[256];
  if (target->conv_implementation == NULL)
    return TRUE;
  return target->conv_implementation (d, impl, sizeof impl) == 0 && !g_str_has_prefix (impl, "ref");
}

/* cuDNN's fused convolution computes act (conv (x) + z + bias): the chain must be one
 * fb_conv_desc_cudnn_epilogue takes. Swish, HardSwish and Clip have no legacy fused call, only
 * the graph API's fusion and the legacy calls one after the other, and a residual the
 * convolution overwrites in place leaves only the first: with a residual they stay a generated
 * pass.
 * Measured on an H200 (batch 32), cuDNN's graph ran EfficientNet-B0's convolutions with their
 * Swish 1.5-3x faster than cuDNN's convolution and our bias-and-SiLU pass (2.89 -> 2.04 ms), and
 * MobileNetV2's with their Clip (0, 6) as a Relu then a Min 1.89 -> 1.07 ms (the Clip as a
 * Relu clipped above had run 1.1-1.2x slower than the generated pass); a HardSwish goes the way
 * of the Clip, as pointwise nodes. FUSEBENCH_GPU_CONV_ACT=relu (Relu alone to cuDNN), swish
 * (Relu and Swish) or all (the default) to measure again. */
static gboolean
cudnn_fuses (const FbConvDesc *d)
{
  int64_t act;
  double param;
  if (!fb_conv_desc_cudnn_epilogue (d, &act, &param))
    return FALSE;
  if (act == FB_CONV_POST_NONE || act == FB_CONV_POST_RELU)
    return TRUE;
  const char *which = g_getenv ("FUSEBENCH_GPU_CONV_ACT");
  if (d->post[0].kind == FB_CONV_POST_ADD)
    return FALSE;
  if (g_strcmp0 (which, "relu") == 0)
    return FALSE;
  return act == FB_CONV_POST_SWISH || g_strcmp0 (which, "swish") != 0;
}

/* cuDNN pads both sides alike: the output must be the one the top and left pads give. */
static gboolean
cudnn_geometry (const FbConvGeom *g)
{
  int64_t oh = (g->H + 2 * g->pt - g->dh * (g->KH - 1) - 1) / g->sh + 1;
  int64_t ow = (g->W + 2 * g->pl - g->dw * (g->KW - 1) - 1) / g->sw + 1;
  return oh == g->OH && ow == g->OW;
}

static FbConvDesc
desc_of (const FbConvGeom *g, gboolean has_bias)
{
  return (FbConvDesc) {
    .n = g->N, .c = g->C, .h = g->H, .w = g->W, .co = g->Co, .oh = g->OH, .ow = g->OW,
    .groups = g->G, .kh = g->KH, .kw = g->KW, .sh = g->sh, .sw = g->sw, .dh = g->dh,
    .dw = g->dw, .pt = g->pt, .pl = g->pl, .pb = g->pb, .pr = g->pr,
    .has_bias = has_bias, .transposed = g->transposed,
  };
}

/* conv (x * s), s one number per input channel, is conv (x) with the weights of input channel
 * c times s[c]: oneDNN's primitive scales and repacks its weights at every run (fb-dnnl-conv.c)
 * instead of a pass over x * s. fuse-epilogue gives a convolution such a prologue only where
 * its weights are small enough for that to pay (fb-pass-fuse-epilogue.c says how small).
 * FUSEBENCH_FOLD_SCALE=0 keeps every such Mul a loop, to measure again. */
const FbNode *
_fb_lower_dnnl_scale_fold (FbLowerCtx *c, const FbNode *m)
{
  const FbValue *y = m->n_outputs == 1 ? m->outputs[0] : NULL, *x, *s;
  if (_fb_lower_for_gpu (c) || m->op != FB_OP_MUL || m->n_inputs != 2 || y == NULL ||
      y->is_output || g_hash_table_contains (c->bind, y) ||
      g_strcmp0 (g_getenv ("FUSEBENCH_FOLD_SCALE"), "0") == 0)
    return NULL;
  GPtrArray *users = g_hash_table_lookup (c->body_uses, y);
  const FbNode *conv = users && users->len == 1 ? g_ptr_array_index (users, 0) : NULL;
  FbConvGeom g;
  if (conv == NULL || conv->op != FB_OP_CONV || conv->inputs[0] != y || conv->inputs[1] == y ||
      !_fb_lower_conv_geom (conv, &g, NULL) || g.transposed || g.G != 1 ||
      !_fb_lower_dnnl_conv_fits (conv, &g) || !_fb_lower_scale_operands (m, 1, g.C, &x, &s))
    return NULL;
  FbConvDesc d = desc_of (&g, fb_node_input (conv, 2) != NULL);
  d.scaled_input = 1;
  /* Without its post-ops too: the lowering may leave them to a loop of their own. */
  return fb_conv_desc_valid (&d) && _fb_lower_conv_fast (c->lp->plan->target_desc, &d) ? conv : NULL;
}

gboolean
_fb_lower_dnnl_conv (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g, gboolean *taken,
                     GError **error)
{
  gboolean gpu = _fb_lower_for_gpu (c);
  FbKernel *k = c->k;
  const FbValue *y = node->outputs[0], *bias = fb_node_input (node, 2);
  FbKConv cv = {
    .desc = desc_of (g, bias != NULL),
    .bias = FB_KCONV_NO_ARG, .add = FB_KCONV_NO_ARG, .scale = FB_KCONV_NO_ARG,
  };
  /* The input's per-channel scale, folded into the weights (_fb_lower_dnnl_scale_fold). */
  const FbNode *scaler = c->scale_of ? g_hash_table_lookup (c->scale_of, node) : NULL;
  const FbValue *scaled_x = NULL, *scale = NULL;
  if (scaler && !_fb_lower_scale_operands (scaler, 1, g->C, &scaled_x, &scale))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "the input scale folded into the weights is not one per channel");
  cv.desc.scaled_input = scaler != NULL;
  /* oneDNN derives the output size from the pads; it must be the one the graph says. */
  cv.cudnn = gpu;
  cv.nchw = gpu && !g->nhwc;
  /* Pads cuDNN cannot take (more on one side) are a generated copy of the input into a padded
   * buffer first, then a convolution without padding. */
  gboolean prepad = gpu && !cudnn_geometry (g) &&
                    (g->H + g->pt + g->pb - g->dh * (g->KH - 1) - 1) / g->sh + 1 == g->OH &&
                    (g->W + g->pl + g->pr - g->dw * (g->KW - 1) - 1) / g->sw + 1 == g->OW;
  if (prepad)
    {
      cv.desc.h = g->H + g->pt + g->pb;
      cv.desc.w = g->W + g->pl + g->pr;
      cv.desc.pt = cv.desc.pl = cv.desc.pb = cv.desc.pr = 0;
    }
  if (!fb_conv_desc_valid (&cv.desc) || (gpu && !prepad && !cudnn_geometry (g)))
    {
      *taken = FALSE;
      return scaler == NULL ||
             _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                             "oneDNN cannot take the convolution its input scale was folded into");
    }
  const FbValue *end = g_hash_table_lookup (c->sunk, y), *add = NULL;
  gboolean fused = (end == NULL || _fb_lower_dnnl_post_chain (c, y, end, &cv, &add)) &&
                   (gpu ? cudnn_fuses (&cv.desc) : _fb_lower_conv_fast (c->lp->plan->target_desc, &cv.desc));
  if (!fused)
    {
      cv.desc.n_post = 0;
      memset (cv.desc.post, 0, sizeof cv.desc.post);
      add = NULL;
      if (!gpu && !_fb_lower_conv_fast (c->lp->plan->target_desc, &cv.desc))
        {
          *taken = FALSE;
          return scaler == NULL ||
                 _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                                 "oneDNN cannot take the convolution its input scale was folded "
                                 "into");
        }
    }
  /* cuDNN runs its fused call without an activation with one slow algorithm only: with no
   * activation to fuse, the convolution is cuDNN's alone (its best algorithm) and the bias,
   * the residual and the rest of the chain one generated pass over its output. */
  guint epilogue_bias = FB_KCONV_NO_ARG;
  int64_t library_act = FB_CONV_POST_NONE;
  double act_param;
  if (gpu && fused)
    fb_conv_desc_cudnn_epilogue (&cv.desc, &library_act, &act_param);
  if (gpu && library_act == FB_CONV_POST_NONE &&
      (cv.desc.has_bias || cv.desc.n_post > 0 || end != NULL))
    {
      if (bias)
        epilogue_bias = _fb_lower_arg (c, bias, FB_KARG_INPUT);
      cv.desc.has_bias = 0;
      cv.desc.n_post = 0;
      memset (cv.desc.post, 0, sizeof cv.desc.post);
      add = NULL;
      bias = NULL;
      fused = FALSE;
    }
  *taken = TRUE;
  if (prepad)
    {
      cv.x = _fb_lower_pad_input (c, node->inputs[0], g, 0.0, error);
      if (cv.x == FB_KCONV_NO_ARG)
        return FALSE;
    }
  else
    cv.x = _fb_lower_arg (c, scaler ? scaled_x : node->inputs[0], FB_KARG_INPUT);
  if (scaler)
    cv.scale = _fb_lower_arg (c, scale, FB_KARG_INPUT);
  cv.w = _fb_lower_arg (c, node->inputs[1], FB_KARG_INPUT);
  if (bias)
    cv.bias = _fb_lower_arg (c, bias, FB_KARG_INPUT);
  if (add)
    cv.add = _fb_lower_arg (c, add, FB_KARG_INPUT);
  cv.y = _fb_lower_out_arg (c, y);
  /* A deconvolution's products are per input pixel, a convolution's per output pixel. */
  double flops = g->transposed ? 2.0 * g->N * g->C * g->H * g->W * (g->Co / g->G) * g->KH * g->KW
                               : 2.0 * g->N * g->Co * g->OH * g->OW * (g->C / g->G) * g->KH * g->KW;
  fb_kernel_add_conv_phase (k, &cv, flops);
  k->kind = FB_KERNEL_LIBRARY;
  return fused || epilogue_phase (c, node, g, cv.y, epilogue_bias, error);
}
