/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Convolution plans through cuDNN 9's graph API (fb-cuda-cudnn-graph.c). Only
 * compiler/runtime/ includes this header. */
#pragma once

#include "fb-cuda-api.h"
#include "fb-conv-desc.h"

#include <glib.h>

G_BEGIN_DECLS

/* conv (x, w) [+ bias over the channels] [+ z] [an activation] into y; absent parts are 0.
 * The activation is one fb_conv_desc_cudnn_epilogue accepts. */
typedef struct {
  const FbConvDesc *desc;
  gboolean              nchw;     /* activations' layout */
  gboolean              krsc;     /* weights channels-last (KRSC), else OIHW */
  CUdeviceptr           x, w, y, bias, z;
  int64_t               act;        /* FB_CONV_POST_NONE, _RELU, _SWISH, _CLIP or _HARD_SWISH */
  double                act_param;  /* Swish's alpha (cuDNN's beta), Clip's upper bound */
} FbCudnnConvGraph;

#define FB_CUDNN_CONV_MAX_SCALARS 3

typedef struct {
  cudnnBackendDescriptor_t plan;
  cudnnBackendDescriptor_t pack;            /* made on the first run, for its workspace */
  CUdeviceptr              pack_workspace;
  /* The by-value operands: a Clip's bound; a HardSwish's slope, offset and upper bound. */
  float                    scalars[FB_CUDNN_CONV_MAX_SCALARS];
  const float             *pack_scalars;    /* the address the pack holds: a moved plan makes
                                             * its pack again */
  int64_t                  engine;          /* cuDNN's global engine index, for notes */
  size_t                   workspace;
} FbCudnnConvPlan;

typedef struct {
  FbCudnnConvPlan *plans;        /* in the heuristics' order */
  int              n_plans;
  GPtrArray       *owned;        /* the graph's descriptors, alive as long as its plans */
} FbCudnnConvPlans;

/* Up to max_plans execution plans for cg, in cuDNN's order of preference; NULL with the reason
 * in *why (caller frees) when none finalizes. */
FbCudnnConvPlans *_fb_cudnn_conv_plans_new  (const FbCudnnGraph *g, cudnnHandle_t handle,
                                             const FbCudnnConvGraph *cg, gboolean strict_float32,
                                             int max_plans, char **why);
void              _fb_cudnn_conv_plans_free (const FbCudnnGraph *g, FbCudnnConvPlans *set);
/* Runs plan on handle's stream with the given workspace (at least plan->workspace bytes). */
cudnnStatus_t     _fb_cudnn_conv_plan_run   (const FbCudnnGraph *g, cudnnHandle_t handle,
                                             const FbCudnnConvGraph *cg, FbCudnnConvPlan *plan,
                                             CUdeviceptr workspace);
/* Destroys one plan of a set (one not chosen), leaving the slot empty. */
void              _fb_cudnn_conv_plan_clear (const FbCudnnGraph *g, FbCudnnConvPlan *plan);

G_END_DECLS
