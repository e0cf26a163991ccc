/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Convolutions through cuDNN 9's graph API: conv (x, w), then + bias, + z and an activation
 * (Relu, Swish, a Clip from 0 as a Relu then a Min, a HardSwish as t * min (relu (t / 6 + 1/2),
 * 1), cuDNN having no HardSwish of its own) as pointwise nodes of one operation graph,
 * so that cuDNN's runtime fusion engines can run the chain as one kernel where they apply, and
 * its newer convolution engines (which the legacy cudnnConvolutionForward does not reach) are
 * offered at all. cuDNN's heuristics rank the engine configurations that support the graph;
 * each one that finalizes into an execution plan becomes a candidate the caller times
 * (fb-cuda-conv.c keeps the fastest). Under strict float32, engines whose numerical notes
 * say tensor cores or down-converted inputs (TF32) are left out. */
#include "fb-cuda-cudnn-graph.h"

#include <string.h>

enum { UID_X = 1, UID_W, UID_Y, UID_BIAS, UID_Z, UID_SCALAR, UID_VIRTUAL = 100 };
enum { MAX_SCALARS = FB_CUDNN_CONV_MAX_SCALARS, MAX_STEPS = 7 };

typedef enum { OTHER_NONE, OTHER_TENSOR, OTHER_SCALAR, OTHER_ACT_INPUT } StepOther;

/* One pointwise node of the epilogue: mode (the step before, other). */
typedef struct {
  int            mode;
  StepOther      other;
  int64_t        uid;     /* the other operand's, for a tensor or a scalar */
  const int64_t *dims;    /* a tensor's */
} Step;

typedef struct {
  const FbCudnnGraph      *g;
  GPtrArray               *owned;     /* every descriptor made, destroyed together */
  cudnnStatus_t            status;    /* the first failure */
  const char              *failed;    /* what it was making then */
} Builder;

static cudnnBackendDescriptor_t
make (Builder *b, int type, const char *what)
{
  cudnnBackendDescriptor_t d = NULL;
  if (b->status != 0)
    return NULL;
  if ((b->status = b->g->CreateDescriptor (type, &d)) != 0)
    {
      b->failed = what;
      return NULL;
    }
  g_ptr_array_add (b->owned, d);
  return d;
}

static void
set (Builder *b, cudnnBackendDescriptor_t d, int name, int type, int64_t count, const void *values,
     const char *what)
{
  if (b->status != 0 || d == NULL)
    return;
  if ((b->status = b->g->SetAttribute (d, name, type, count, values)) != 0)
    b->failed = what;
}

static void
finalize (Builder *b, cudnnBackendDescriptor_t d, const char *what)
{
  if (b->status != 0 || d == NULL)
    return;
  if ((b->status = b->g->Finalize (d)) != 0)
    b->failed = what;
}

/* A float tensor descriptor. virtual: an intermediate of the graph, never in memory;
 * by_value: a scalar whose data pointer in the variant pack is a host address. */
static cudnnBackendDescriptor_t
tensor_desc (Builder *b, int64_t uid, const int64_t dims[4], const int64_t strides[4],
             gboolean is_virtual, gboolean by_value, int64_t alignment)
{
  int type = FB_CUDNN_DATA_FLOAT;
  gboolean virt = is_virtual;
  cudnnBackendDescriptor_t t = make (b, FB_CUDNN_BACKEND_TENSOR_DESCRIPTOR, "a tensor");
  set (b, t, FB_CUDNN_ATTR_TENSOR_DATA_TYPE, FB_CUDNN_TYPE_DATA_TYPE, 1, &type, "tensor type");
  set (b, t, FB_CUDNN_ATTR_TENSOR_DIMENSIONS, FB_CUDNN_TYPE_INT64, 4, dims, "tensor sizes");
  set (b, t, FB_CUDNN_ATTR_TENSOR_STRIDES, FB_CUDNN_TYPE_INT64, 4, strides, "tensor strides");
  set (b, t, FB_CUDNN_ATTR_TENSOR_UNIQUE_ID, FB_CUDNN_TYPE_INT64, 1, &uid, "tensor id");
  set (b, t, FB_CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, FB_CUDNN_TYPE_INT64, 1, &alignment,
       "tensor alignment");
  set (b, t, FB_CUDNN_ATTR_TENSOR_IS_VIRTUAL, FB_CUDNN_TYPE_BOOLEAN, 1, &virt, "tensor virtual");
  if (by_value)
    set (b, t, FB_CUDNN_ATTR_TENSOR_IS_BY_VALUE, FB_CUDNN_TYPE_BOOLEAN, 1, &by_value,
         "tensor by value");
  finalize (b, t, "a tensor");
  return t;
}

/* A float tensor of dims n, c, h, w in the layout the plan uses (NCHW or NHWC strides). */
static cudnnBackendDescriptor_t
tensor (Builder *b, int64_t uid, const int64_t dims[4], gboolean nchw, gboolean is_virtual,
        int64_t alignment)
{
  int64_t c = dims[1], h = dims[2], w = dims[3];
  int64_t strides[4];
  if (nchw)
    {
      strides[0] = c * h * w; strides[1] = h * w; strides[2] = w; strides[3] = 1;
    }
  else
    {
      strides[0] = h * w * c; strides[1] = 1; strides[2] = w * c; strides[3] = c;
    }
  return tensor_desc (b, uid, dims, strides, is_virtual, FALSE, alignment);
}

/* A float scalar passed by value, broadcast over the tensor it meets: a Clip's bound, a
 * HardSwish's constants. */
static cudnnBackendDescriptor_t
scalar_by_value (Builder *b, int64_t uid)
{
  static const int64_t ones[4] = { 1, 1, 1, 1 };
  return tensor_desc (b, uid, ones, ones, FALSE, TRUE, sizeof (float));
}

/* A pointwise node y = mode (x[, other]); for the activations, act is the graph's activation
 * and param its parameter (Swish's beta, given to the SWISH_FWD node only). */
static cudnnBackendDescriptor_t
pointwise (Builder *b, int mode, int64_t act, double param, cudnnBackendDescriptor_t x,
           cudnnBackendDescriptor_t other, cudnnBackendDescriptor_t y)
{
  int precision = FB_CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t pw = make (b, FB_CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "a pointwise op");
  set (b, pw, FB_CUDNN_ATTR_POINTWISE_MODE, FB_CUDNN_TYPE_POINTWISE_MODE, 1, &mode, "pointwise mode");
  if (act == FB_CONV_POST_SWISH && mode == FB_CUDNN_POINTWISE_SWISH_FWD)
    set (b, pw, FB_CUDNN_ATTR_POINTWISE_SWISH_BETA, FB_CUDNN_TYPE_DOUBLE, 1, &param, "Swish's beta");
  set (b, pw, FB_CUDNN_ATTR_POINTWISE_MATH_PREC, FB_CUDNN_TYPE_DATA_TYPE, 1, &precision,
       "pointwise precision");
  finalize (b, pw, "a pointwise op");
  cudnnBackendDescriptor_t op = make (b, FB_CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                                      "a pointwise node");
  set (b, op, FB_CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, FB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
       &pw, "pointwise node");
  set (b, op, FB_CUDNN_ATTR_OPERATION_POINTWISE_XDESC, FB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x,
       "pointwise input");
  if (other)
    set (b, op, FB_CUDNN_ATTR_OPERATION_POINTWISE_BDESC, FB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
         &other, "pointwise second input");
  set (b, op, FB_CUDNN_ATTR_OPERATION_POINTWISE_YDESC, FB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y,
       "pointwise output");
  finalize (b, op, "a pointwise node");
  return op;
}

/* The by-value operands of cg's activation, in the order of their unique ids from UID_SCALAR:
 * a Clip's bound; a HardSwish's slope, offset and upper bound. Returns how many. */
static int
scalar_values (const FbCudnnConvGraph *cg, float values[MAX_SCALARS])
{
  if (cg->act == FB_CONV_POST_CLIP)
    {
      values[0] = (float) cg->act_param;
      return 1;
    }
  if (cg->act == FB_CONV_POST_HARD_SWISH)
    {
      values[0] = 1.0f / 6;   /* fb_conv_desc_valid holds ONNX's constants */
      values[1] = 0.5f;
      values[2] = 1.0f;
      return 3;
    }
  return 0;
}

/* The epilogue as pointwise steps, each reading the step before and its other operand: a
 * tensor in memory, a by-value scalar, or the activation's own input t. A Clip (0, upper) is a
 * Relu then a Min with the bound: measured, cuDNN's Relu with an upper clip ran slower than the
 * convolution and a generated pass after it. A HardSwish is t * min (relu (t / 6 + 1/2), 1).
 * Returns how many steps. */
static int
epilogue_steps (const FbCudnnConvGraph *cg, const int64_t *bdims, const int64_t *ydims,
                Step steps[MAX_STEPS])
{
  int n = 0;
  if (cg->bias)
    steps[n++] = (Step) { FB_CUDNN_POINTWISE_ADD, OTHER_TENSOR, UID_BIAS, bdims };
  if (cg->z)
    steps[n++] = (Step) { FB_CUDNN_POINTWISE_ADD, OTHER_TENSOR, UID_Z, ydims };
  switch (cg->act)
    {
    case FB_CONV_POST_RELU:
      steps[n++] = (Step) { FB_CUDNN_POINTWISE_RELU_FWD, OTHER_NONE, 0, NULL };
      break;
    case FB_CONV_POST_CLIP:
      steps[n++] = (Step) { FB_CUDNN_POINTWISE_RELU_FWD, OTHER_NONE, 0, NULL };
      steps[n++] = (Step) { FB_CUDNN_POINTWISE_MIN, OTHER_SCALAR, UID_SCALAR, NULL };
      break;
    case FB_CONV_POST_SWISH:
      steps[n++] = (Step) { FB_CUDNN_POINTWISE_SWISH_FWD, OTHER_NONE, 0, NULL };
      break;
    case FB_CONV_POST_HARD_SWISH:
      steps[n++] = (Step) { FB_CUDNN_POINTWISE_MUL, OTHER_SCALAR, UID_SCALAR, NULL };
      steps[n++] = (Step) { FB_CUDNN_POINTWISE_ADD, OTHER_SCALAR, UID_SCALAR + 1, NULL };
      steps[n++] = (Step) { FB_CUDNN_POINTWISE_RELU_FWD, OTHER_NONE, 0, NULL };
      steps[n++] = (Step) { FB_CUDNN_POINTWISE_MIN, OTHER_SCALAR, UID_SCALAR + 2, NULL };
      steps[n++] = (Step) { FB_CUDNN_POINTWISE_MUL, OTHER_ACT_INPUT, 0, NULL };
      break;
    default:
      break;
    }
  return n;
}

/* The largest power of two up to 16 that divides every address the plan reads or writes. */
static int64_t
alignment_of (const CUdeviceptr *ptrs, int n)
{
  int64_t a = 16;
  for (int i = 0; i < n; i++)
    while (ptrs[i] && ptrs[i] % (CUdeviceptr) a != 0)
      a /= 2;
  return a;
}

static gboolean
uses_tf32 (const FbCudnnGraph *g, cudnnBackendDescriptor_t engine)
{
  int notes[32];
  int64_t n = 0;
  if (g->GetAttribute (engine, FB_CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, FB_CUDNN_TYPE_NUMERICAL_NOTE,
                       G_N_ELEMENTS (notes), &n, notes) != 0)
    return TRUE;   /* unknown: not to be trusted with strict float32 */
  for (int64_t i = 0; i < n; i++)
    if (notes[i] == FB_CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
        notes[i] == FB_CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)
      return TRUE;
  return FALSE;
}

FbCudnnConvPlans *
_fb_cudnn_conv_plans_new (const FbCudnnGraph *g, cudnnHandle_t handle, const FbCudnnConvGraph *cg,
                          gboolean strict_float32, int max_plans, char **why)
{
  const FbConvDesc *d = cg->desc;
  Builder b = { g, g_ptr_array_new (), 0, NULL };
  CUdeviceptr ptrs[] = { cg->x, cg->w, cg->y, cg->bias, cg->z };
  int64_t align = alignment_of (ptrs, G_N_ELEMENTS (ptrs));
  int64_t xdims[4] = { d->n, d->c, d->h, d->w };
  int64_t wdims[4] = { d->co, d->c / d->groups, d->kh, d->kw };
  int64_t ydims[4] = { d->n, d->co, d->oh, d->ow };
  int64_t bdims[4] = { 1, d->co, 1, 1 };
  cudnnBackendDescriptor_t x = tensor (&b, UID_X, xdims, cg->nchw, FALSE, align);
  /* Weights OIHW as the bundle stores them, or KRSC where the phase reordered them. */
  cudnnBackendDescriptor_t w = tensor (&b, UID_W, wdims, !cg->krsc, FALSE, align);
  cudnnBackendDescriptor_t y = tensor (&b, UID_Y, ydims, cg->nchw, FALSE, align);

  Step steps[MAX_STEPS];
  int n_steps = epilogue_steps (cg, bdims, ydims, steps);
  int n_ops = 1 + n_steps;
  int64_t next_virtual = UID_VIRTUAL;
  cudnnBackendDescriptor_t out = n_ops == 1 ? y : tensor (&b, next_virtual++, ydims, cg->nchw,
                                                          TRUE, align);

  int comp = FB_CUDNN_DATA_FLOAT, mode = FB_CUDNN_CROSS_CORRELATION;
  int64_t spatial = 2;
  int64_t dil[2] = { d->dh, d->dw }, stride[2] = { d->sh, d->sw };
  int64_t pre[2] = { d->pt, d->pl }, post[2] = { d->pb, d->pr };
  cudnnBackendDescriptor_t conv = make (&b, FB_CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, "the convolution");
  set (&b, conv, FB_CUDNN_ATTR_CONVOLUTION_COMP_TYPE, FB_CUDNN_TYPE_DATA_TYPE, 1, &comp, "compute type");
  set (&b, conv, FB_CUDNN_ATTR_CONVOLUTION_CONV_MODE, FB_CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, "mode");
  set (&b, conv, FB_CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, FB_CUDNN_TYPE_INT64, 1, &spatial, "rank");
  set (&b, conv, FB_CUDNN_ATTR_CONVOLUTION_DILATIONS, FB_CUDNN_TYPE_INT64, 2, dil, "dilations");
  set (&b, conv, FB_CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, FB_CUDNN_TYPE_INT64, 2, stride, "strides");
  set (&b, conv, FB_CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, FB_CUDNN_TYPE_INT64, 2, pre, "pads");
  set (&b, conv, FB_CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, FB_CUDNN_TYPE_INT64, 2, post, "pads");
  finalize (&b, conv, "the convolution");

  float one = 1.0f, zero = 0.0f;
  cudnnBackendDescriptor_t ops[1 + MAX_STEPS];
  int k = 0;
  cudnnBackendDescriptor_t fwd = make (&b, FB_CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                       "the convolution node");
  set (&b, fwd, FB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, FB_CUDNN_TYPE_BACKEND_DESCRIPTOR,
       1, &conv, "convolution node");
  set (&b, fwd, FB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, FB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x,
       "convolution input");
  set (&b, fwd, FB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, FB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w,
       "convolution weights");
  set (&b, fwd, FB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, FB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
       &out, "convolution output");
  set (&b, fwd, FB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, FB_CUDNN_TYPE_FLOAT, 1, &one, "alpha");
  set (&b, fwd, FB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, FB_CUDNN_TYPE_FLOAT, 1, &zero, "beta");
  finalize (&b, fwd, "the convolution node");
  ops[k++] = fwd;

  /* The activation's input: what the steps before the first activation step made. */
  cudnnBackendDescriptor_t act_input = out;
  int first_act_step = (cg->bias != 0) + (cg->z != 0);
  for (int s = 0; s < n_steps; s++)
    {
      if (s == first_act_step)
        act_input = out;
      gboolean last = s == n_steps - 1;
      cudnnBackendDescriptor_t other =
        steps[s].other == OTHER_SCALAR ? scalar_by_value (&b, steps[s].uid)
        : steps[s].other == OTHER_TENSOR ? tensor (&b, steps[s].uid, steps[s].dims,
                                                   steps[s].dims == bdims ? TRUE : cg->nchw,
                                                   FALSE, align)
        : steps[s].other == OTHER_ACT_INPUT ? act_input
        : NULL;
      cudnnBackendDescriptor_t result = last ? y : tensor (&b, next_virtual++, ydims, cg->nchw,
                                                           TRUE, align);
      ops[k++] = pointwise (&b, steps[s].mode, cg->act, cg->act_param, out, other, result);
      out = result;
    }

  cudnnBackendDescriptor_t graph = make (&b, FB_CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR,
                                         "the operation graph");
  set (&b, graph, FB_CUDNN_ATTR_OPERATIONGRAPH_HANDLE, FB_CUDNN_TYPE_HANDLE, 1, &handle, "graph handle");
  set (&b, graph, FB_CUDNN_ATTR_OPERATIONGRAPH_OPS, FB_CUDNN_TYPE_BACKEND_DESCRIPTOR, k, ops, "graph ops");
  finalize (&b, graph, "the operation graph");

  int heur_mode = FB_CUDNN_HEUR_MODE_INSTANT;
  cudnnBackendDescriptor_t heur = make (&b, FB_CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "the heuristics");
  set (&b, heur, FB_CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, FB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph,
       "heuristics graph");
  set (&b, heur, FB_CUDNN_ATTR_ENGINEHEUR_MODE, FB_CUDNN_TYPE_HEUR_MODE, 1, &heur_mode, "heuristics mode");
  finalize (&b, heur, "the heuristics");

  enum { MAX_CONFIGS = 24 };
  cudnnBackendDescriptor_t configs[MAX_CONFIGS] = { NULL };
  for (int i = 0; i < MAX_CONFIGS; i++)
    configs[i] = make (&b, FB_CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "an engine configuration");
  int64_t n_configs = 0;
  if (b.status == 0 &&
      (b.status = g->GetAttribute (heur, FB_CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   FB_CUDNN_TYPE_BACKEND_DESCRIPTOR, MAX_CONFIGS, &n_configs,
                                   configs)) != 0)
    b.failed = "the heuristics' results";

  FbCudnnConvPlans *set = g_new0 (FbCudnnConvPlans, 1);
  set->plans = g_new0 (FbCudnnConvPlan, MAX (max_plans, 1));
  int n_plans = 0, refused = 0, tf32_skipped = 0;
  for (int64_t i = 0; b.status == 0 && i < n_configs && n_plans < max_plans; i++)
    {
      cudnnBackendDescriptor_t engine = NULL;
      int64_t got = 0, index = -1;
      if (g->CreateDescriptor (FB_CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != 0)
        break;
      g_ptr_array_add (b.owned, engine);
      if (g->GetAttribute (configs[i], FB_CUDNN_ATTR_ENGINECFG_ENGINE, FB_CUDNN_TYPE_BACKEND_DESCRIPTOR,
                           1, &got, &engine) != 0)
        continue;
      g->GetAttribute (engine, FB_CUDNN_ATTR_ENGINE_GLOBAL_INDEX, FB_CUDNN_TYPE_INT64, 1, &got, &index);
      if (strict_float32 && uses_tf32 (g, engine))
        {
          tf32_skipped++;
          continue;
        }
      cudnnBackendDescriptor_t plan = NULL;
      if (g->CreateDescriptor (FB_CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) != 0)
        break;
      int64_t workspace = 0;
      if (g->SetAttribute (plan, FB_CUDNN_ATTR_EXECUTION_PLAN_HANDLE, FB_CUDNN_TYPE_HANDLE, 1,
                           &handle) != 0 ||
          g->SetAttribute (plan, FB_CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                           FB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &configs[i]) != 0 ||
          g->Finalize (plan) != 0 ||
          g->GetAttribute (plan, FB_CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, FB_CUDNN_TYPE_INT64, 1,
                           &got, &workspace) != 0)
        {
          g->DestroyDescriptor (plan);
          refused++;
          continue;
        }
      FbCudnnConvPlan *p = &set->plans[n_plans++];
      p->plan = plan;
      p->engine = index;
      p->workspace = (size_t) MAX (workspace, 0);
    }
  set->n_plans = n_plans;

  if (n_plans == 0 && why)
    {
      if (b.status != 0)
        *why = g_strdup_printf ("cuDNN's graph API refused %s (status %d)", b.failed, b.status);
      else
        *why = g_strdup_printf ("cuDNN's heuristics offered %" G_GINT64_FORMAT " engine "
                                "configurations: %d would not finalize%s", n_configs, refused,
                                tf32_skipped ? ", the rest use TF32 (strict float32 asked)" : "");
    }
  /* The graph's descriptors live as long as the plans made from them. */
  set->owned = b.owned;
  if (n_plans == 0)
    {
      _fb_cudnn_conv_plans_free (g, set);
      return NULL;
    }
  return set;
}

cudnnStatus_t
_fb_cudnn_conv_plan_run (const FbCudnnGraph *g, cudnnHandle_t handle, const FbCudnnConvGraph *cg,
                         FbCudnnConvPlan *plan, CUdeviceptr workspace)
{
  if (plan->pack == NULL || plan->pack_workspace != workspace ||
      plan->pack_scalars != plan->scalars)
    {
      if (plan->pack)
        g->DestroyDescriptor (plan->pack);
      plan->pack = NULL;
      int64_t uids[5 + MAX_SCALARS];
      void *ptrs[5 + MAX_SCALARS];
      int n = 0;
      uids[n] = UID_X, ptrs[n++] = (void *) cg->x;
      uids[n] = UID_W, ptrs[n++] = (void *) cg->w;
      uids[n] = UID_Y, ptrs[n++] = (void *) cg->y;
      if (cg->bias)
        uids[n] = UID_BIAS, ptrs[n++] = (void *) cg->bias;
      if (cg->z)
        uids[n] = UID_Z, ptrs[n++] = (void *) cg->z;
      int n_scalars = scalar_values (cg, plan->scalars);
      for (int i = 0; i < n_scalars; i++)
        uids[n] = UID_SCALAR + i, ptrs[n++] = &plan->scalars[i];
      void *ws = (void *) workspace;
      cudnnBackendDescriptor_t pack = NULL;
      cudnnStatus_t s = g->CreateDescriptor (FB_CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
      if (s == 0)
        s = g->SetAttribute (pack, FB_CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, FB_CUDNN_TYPE_INT64, n, uids);
      if (s == 0)
        s = g->SetAttribute (pack, FB_CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, FB_CUDNN_TYPE_VOID_PTR, n,
                             ptrs);
      if (s == 0)
        s = g->SetAttribute (pack, FB_CUDNN_ATTR_VARIANT_PACK_WORKSPACE, FB_CUDNN_TYPE_VOID_PTR, 1, &ws);
      if (s == 0)
        s = g->Finalize (pack);
      if (s != 0)
        {
          if (pack)
            g->DestroyDescriptor (pack);
          return s;
        }
      plan->pack = pack;
      plan->pack_workspace = workspace;
      plan->pack_scalars = plan->scalars;
    }
  return g->Execute (handle, plan->plan, plan->pack);
}

void
_fb_cudnn_conv_plan_clear (const FbCudnnGraph *g, FbCudnnConvPlan *plan)
{
  if (plan->pack)
    g->DestroyDescriptor (plan->pack);
  if (plan->plan)
    g->DestroyDescriptor (plan->plan);
  memset (plan, 0, sizeof *plan);
}

void
_fb_cudnn_conv_plans_free (const FbCudnnGraph *g, FbCudnnConvPlans *set)
{
  if (set == NULL)
    return;
  for (int i = 0; i < set->n_plans; i++)
    _fb_cudnn_conv_plan_clear (g, &set->plans[i]);
  for (guint i = set->owned ? set->owned->len : 0; i > 0; i--)
    g->DestroyDescriptor (g_ptr_array_index (set->owned, i - 1));
  if (set->owned)
    g_ptr_array_free (set->owned, TRUE);
  g_free (set->plans);
  g_free (set);
}
