/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The library phases' insides, shared by fb-cuda-library.c (the phases, cuBLASLt's products)
 * and fb-cuda-conv.c (cuDNN's convolutions and the choice of how to run them). */
#pragma once

#include "fb-cuda-private.h"
#include "fb-cuda-cudnn-graph.h"

G_BEGIN_DECLS

typedef enum {
  WAY_LEGACY,          /* cudnnConvolutionBiasActivationForward, or the plain forward */
  WAY_LEGACY_SPLIT,    /* the plain forward, then bias, add and relu as legacy calls */
  WAY_GRAPH,           /* the whole chain as one graph */
  WAY_GRAPH_SPLIT,     /* the convolution alone as a graph, then the legacy epilogue */
} ConvWay;

struct _FbCudaLibPhase {
  FbKLibKind   lib;
  /* cuBLASLt */
  cublasLtMatmulDesc_t   desc;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulAlgo_t   algo;
  float                  alpha;
  /* cuDNN */
  cudnnTensorDescriptor_t      xd, yd, bd;
  cudnnFilterDescriptor_t      wd;
  cudnnConvolutionDescriptor_t cd;
  cudnnActivationDescriptor_t  ad;
  int                          algo_id;
  int                          math;          /* the convolution descriptor's math type */
  gboolean                     fused;         /* bias, add or an activation follow it */
  int64_t                      act;           /* the activation (FbConvPostKind), or NONE */
  ConvWay                      way;
  FbCudnnConvGraph             graph;         /* the chain (or the convolution alone) as a graph */
  FbCudnnConvPlans            *plans;         /* the chosen plan is plans->plans[0] */
  CUdeviceptr                  zero_bias;     /* a bias of zeros when the fused call needs one */
  CUdeviceptr                  own_filter;    /* the weights reordered channels-last, or 0 */
  /* A HardSwish as legacy calls, made only where cuDNN's graph ran none of its plans: y's
   * size of scratch, then a float of 1 the Add broadcasts (fb-cuda-conv.c). */
  cudnnOpTensorDescriptor_t    hs_add, hs_mul;
  cudnnActivationDescriptor_t  hs_clip;
  cudnnTensorDescriptor_t      hs_scalar;
  CUdeviceptr                  hs_scratch;
  char                        *choice;        /* which way, and the times of the others */
  /* both */
  size_t       workspace;
  CUdeviceptr  x, w, bias, add, y;
  char        *name;
};

/* The cuDNN side of a convolution phase: its descriptors, the way to run it timed fastest
 * (or found in the timing cache), and the run. */
gboolean    _fb_cuda_conv_new      (FbCudaLibs *libs, FbCudaLibPhase *p, const FbKConv *cv,
                                    gboolean w_constant, GError **error);
gboolean    _fb_cuda_conv_run      (FbCudaLibs *libs, FbCudaLibPhase *p, CUdeviceptr workspace,
                                    size_t workspace_bytes, GError **error);
const char *_fb_cuda_conv_way_name (const FbCudaLibPhase *p);
/* Frees what the cuDNN side of p made (its descriptors, plans and buffers). */
void        _fb_cuda_conv_free     (FbCudaLibs *libs, FbCudaLibPhase *p);

G_END_DECLS
