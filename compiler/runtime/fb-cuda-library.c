/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The library phases of the cuda target. Matrix products go to cuBLASLt: row-major
 * C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so B is cuBLASLt's first operand;
 * a bias along C's rows is its BIAS epilogue (a vector over the column-major rows), Relu its
 * RELU. Convolutions go to cuDNN's fused convolution, act (conv (x) + z + bias) with act Relu
 * or the identity, the one fusion of bias, residual and activation that cuDNN runs for float32
 * NCHW in every version 9; lowering put whatever else the graph fused into a generated phase
 * after it. TF32 tensor cores are allowed unless strict float32 is asked for (cuBLASLt's
 * COMPUTE_32F, cuDNN's FMA math). Descriptors and algorithms are chosen once, here, so that
 * the phase can be captured into a CUDA graph. */
#include "fb-cuda-private.h"

#include <stdarg.h>

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
  gboolean                     fused;
  CUdeviceptr                  zero_bias;     /* a bias of zeros when the fused call needs one */
  /* both */
  size_t       workspace;
  CUdeviceptr  x, w, bias, add, y;
  char        *name;
};

gboolean
_fb_cuda_check (const FbCuDriver *cu, CUresult r, GError **error, const char *format, ...)
{
  if (r == 0)
    return TRUE;
  va_list ap;
  va_start (ap, format);
  g_autofree char *what = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_autofree char *text = _fb_cuda_result_text (cu, r);
  g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE, "%s: %s", what, text);
  return FALSE;
}

static gboolean
lt_ok (cublasStatus_t s, const FbCudaLibPhase *p, const char *what, GError **error)
{
  if (s == 0)
    return TRUE;
  g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE,
               "kernel %s: cuBLASLt %s failed (status %d)", p->name, what, s);
  return FALSE;
}

static gboolean
dnn_ok (const FbCudnn *dnn, cudnnStatus_t s, const FbCudaLibPhase *p, const char *what,
        GError **error)
{
  if (s == 0)
    return TRUE;
  g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE, "kernel %s: cuDNN %s failed: %s",
               p->name, what, dnn->GetErrorString ? dnn->GetErrorString (s) : "?");
  return FALSE;
}

static gboolean
open_cublaslt (FbCudaLibs *libs, GError **error)
{
  if (libs->lt_handle != NULL)
    return TRUE;
  if ((libs->lt = _fb_cuda_cublaslt (error)) == NULL)
    return FALSE;
  if (libs->lt->Create (&libs->lt_handle) != 0)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE, "cuBLASLt would not start");
      return FALSE;
    }
  return TRUE;
}

static gboolean
open_cudnn (FbCudaLibs *libs, GError **error)
{
  if (libs->dnn_handle != NULL)
    return TRUE;
  if ((libs->dnn = _fb_cuda_cudnn (error)) == NULL)
    return FALSE;
  if (libs->dnn->Create (&libs->dnn_handle) != 0 ||
      libs->dnn->SetStream (libs->dnn_handle, libs->stream) != 0)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE, "cuDNN would not start");
      return FALSE;
    }
  return TRUE;
}

static gboolean
layout (const FbCublasLt *lt, cublasLtMatrixLayout_t *l, uint64_t rows, uint64_t cols,
        int64_t ld, int64_t batch, int64_t stride, const FbCudaLibPhase *p, GError **error)
{
  if (!lt_ok (lt->MatrixLayoutCreate (l, FB_CUDA_R_32F, rows, cols, ld), p, "layout", error))
    return FALSE;
  if (batch <= 1)
    return TRUE;
  int32_t count = (int32_t) batch;
  return lt_ok (lt->MatrixLayoutSetAttribute (*l, FB_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                              sizeof count), p, "batch count", error) &&
         lt_ok (lt->MatrixLayoutSetAttribute (*l, FB_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                              &stride, sizeof stride), p, "batch stride", error);
}

#define LT_WORKSPACE ((size_t) 32 << 20)

static gboolean
gemm_new (FbCudaLibs *libs, FbCudaLibPhase *p, const FbKGemm *g, GError **error)
{
  if (!open_cublaslt (libs, error))
    return FALSE;
  const FbCublasLt *lt = libs->lt;
  int compute = libs->strict_float32 ? FB_CUBLAS_COMPUTE_32F : FB_CUBLAS_COMPUTE_32F_FAST_TF32;
  if (!lt_ok (lt->MatmulDescCreate (&p->desc, compute, FB_CUDA_R_32F), p, "descriptor", error))
    return FALSE;
  /* cuBLASLt's first operand is our B, its second our A. */
  int32_t op_first = g->tb ? FB_CUBLAS_OP_T : FB_CUBLAS_OP_N;
  int32_t op_second = g->ta ? FB_CUBLAS_OP_T : FB_CUBLAS_OP_N;
  uint32_t epilogue = p->bias ? (g->relu ? FB_CUBLASLT_EPILOGUE_RELU_BIAS : FB_CUBLASLT_EPILOGUE_BIAS)
                              : (g->relu ? FB_CUBLASLT_EPILOGUE_RELU : FB_CUBLASLT_EPILOGUE_DEFAULT);
  if (!lt_ok (lt->MatmulDescSetAttribute (p->desc, FB_CUBLASLT_MATMUL_DESC_TRANSA, &op_first,
                                          sizeof op_first), p, "transA", error) ||
      !lt_ok (lt->MatmulDescSetAttribute (p->desc, FB_CUBLASLT_MATMUL_DESC_TRANSB, &op_second,
                                          sizeof op_second), p, "transB", error) ||
      !lt_ok (lt->MatmulDescSetAttribute (p->desc, FB_CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                          sizeof epilogue), p, "epilogue", error))
    return FALSE;
  if (p->bias &&
      !lt_ok (lt->MatmulDescSetAttribute (p->desc, FB_CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p->bias,
                                          sizeof p->bias), p, "bias", error))
    return FALSE;
  /* Column-major views: B^T is n x k (or k x n before its op), A^T k x m, C^T n x m. */
  if (!layout (lt, &p->la, g->tb ? g->k : g->n, g->tb ? g->n : g->k, g->ldb, g->batch,
               g->stride_b, p, error) ||
      !layout (lt, &p->lb, g->ta ? g->m : g->k, g->ta ? g->k : g->m, g->lda, g->batch,
               g->stride_a, p, error) ||
      !layout (lt, &p->lc, g->n, g->m, g->ldc, g->batch, g->stride_c, p, error))
    return FALSE;
  cublasLtMatmulPreference_t pref = NULL;
  size_t ws = LT_WORKSPACE;
  cublasLtMatmulHeuristicResult_t result[1];
  int returned = 0;
  gboolean ok = lt_ok (lt->MatmulPreferenceCreate (&pref), p, "preference", error) &&
                lt_ok (lt->MatmulPreferenceSetAttribute (pref, FB_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                         &ws, sizeof ws), p, "workspace", error) &&
                lt_ok (lt->MatmulAlgoGetHeuristic (libs->lt_handle, p->desc, p->la, p->lb, p->lc,
                                                   p->lc, pref, 1, result, &returned),
                       p, "heuristic", error);
  if (pref)
    lt->MatmulPreferenceDestroy (pref);
  if (!ok)
    return FALSE;
  if (returned < 1)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE,
                   "kernel %s: cuBLASLt has no algorithm for this product", p->name);
      return FALSE;
    }
  p->algo = result[0].algo;
  p->workspace = result[0].workspaceSize;
  p->alpha = (float) g->alpha;
  return TRUE;
}

static gboolean
conv_new (FbCudaLibs *libs, FbCudaLibPhase *p, const FbKConv *cv, GError **error)
{
  if (!open_cudnn (libs, error))
    return FALSE;
  const FbCudnn *dnn = libs->dnn;
  const FbDnnlConvDesc *d = &cv->desc;
  int n_add = 0, relu = 0;
  for (int64_t i = 0; i < d->n_post; i++)
    {
      if (d->post[i].kind == FB_DNNL_POST_ADD)
        n_add++;
      else if (d->post[i].kind == FB_DNNL_POST_RELU && d->post[i].alpha == 0)
        relu++;
      else
        {
          g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                       "kernel %s: a post-op cuDNN's fused convolution has not", p->name);
          return FALSE;
        }
    }
  if (!dnn_ok (dnn, dnn->CreateTensorDescriptor (&p->xd), p, "tensor", error) ||
      !dnn_ok (dnn, dnn->CreateTensorDescriptor (&p->yd), p, "tensor", error) ||
      !dnn_ok (dnn, dnn->CreateTensorDescriptor (&p->bd), p, "tensor", error) ||
      !dnn_ok (dnn, dnn->CreateFilterDescriptor (&p->wd), p, "filter", error) ||
      !dnn_ok (dnn, dnn->CreateConvolutionDescriptor (&p->cd), p, "convolution", error) ||
      !dnn_ok (dnn, dnn->CreateActivationDescriptor (&p->ad), p, "activation", error))
    return FALSE;
  int fmt = cv->nchw ? FB_CUDNN_TENSOR_NCHW : FB_CUDNN_TENSOR_NHWC;
  if (!dnn_ok (dnn, dnn->SetTensor4dDescriptor (p->xd, fmt, FB_CUDNN_DATA_FLOAT, d->n, d->c, d->h,
                                                d->w), p, "input", error) ||
      !dnn_ok (dnn, dnn->SetTensor4dDescriptor (p->yd, fmt, FB_CUDNN_DATA_FLOAT, d->n, d->co,
                                                d->oh, d->ow), p, "output", error) ||
      !dnn_ok (dnn, dnn->SetTensor4dDescriptor (p->bd, FB_CUDNN_TENSOR_NCHW, FB_CUDNN_DATA_FLOAT,
                                                1, d->co, 1, 1), p, "bias", error) ||
      !dnn_ok (dnn, dnn->SetFilter4dDescriptor (p->wd, FB_CUDNN_DATA_FLOAT, FB_CUDNN_TENSOR_NCHW,
                                                d->co, d->c / d->groups, d->kh, d->kw),
               p, "filter", error) ||
      !dnn_ok (dnn, dnn->SetConvolution2dDescriptor (p->cd, d->pt, d->pl, d->sh, d->sw, d->dh,
                                                     d->dw, FB_CUDNN_CROSS_CORRELATION,
                                                     FB_CUDNN_DATA_FLOAT), p, "geometry", error) ||
      !dnn_ok (dnn, dnn->SetConvolutionGroupCount (p->cd, d->groups), p, "groups", error) ||
      !dnn_ok (dnn, dnn->SetConvolutionMathType (p->cd, libs->strict_float32 ? FB_CUDNN_FMA_MATH
                                                 : FB_CUDNN_TENSOR_OP_MATH), p, "math", error) ||
      !dnn_ok (dnn, dnn->SetActivationDescriptor (p->ad, relu ? FB_CUDNN_ACTIVATION_RELU
                                                  : FB_CUDNN_ACTIVATION_IDENTITY,
                                                  FB_CUDNN_NOT_PROPAGATE_NAN, 0.0),
               p, "activation", error))
    return FALSE;
  int on, oc, oh, ow;
  if (!dnn_ok (dnn, dnn->GetConvolution2dForwardOutputDim (p->cd, p->xd, p->wd, &on, &oc, &oh, &ow),
               p, "output size", error))
    return FALSE;
  if (on != d->n || oc != d->co || oh != d->oh || ow != d->ow)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                   "kernel %s: cuDNN makes a %dx%dx%dx%d output of this convolution, the plan "
                   "%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT,
                   p->name, on, oc, oh, ow, d->n, d->co, d->oh, d->ow);
      return FALSE;
    }
  p->fused = d->has_bias || n_add || relu;
  if (p->fused && !relu)
    /* cuDNN's fused call runs the identity activation with this algorithm only. */
    p->algo_id = FB_CUDNN_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  else
    {
      cudnnConvolutionFwdAlgoPerf_t perf[8];
      int returned = 0;
      if (!dnn_ok (dnn, dnn->FindConvolutionForwardAlgorithm (libs->dnn_handle, p->xd, p->wd, p->cd,
                                                              p->yd, 8, &returned, perf),
                   p, "algorithm search", error))
        return FALSE;
      int best = -1;
      for (int i = 0; i < returned && best < 0; i++)
        if (perf[i].status == 0)
          best = i;
      if (best < 0)
        {
          g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE,
                       "kernel %s: cuDNN has no algorithm for this convolution", p->name);
          return FALSE;
        }
      p->algo_id = perf[best].algo;
      if (!libs->strict_float32)
        dnn->SetConvolutionMathType (p->cd, perf[best].mathType);
    }
  if (!dnn_ok (dnn, dnn->GetConvolutionForwardWorkspaceSize (libs->dnn_handle, p->xd, p->wd, p->cd,
                                                             p->yd, p->algo_id, &p->workspace),
               p, "workspace size", error))
    return FALSE;
  if (p->fused && !d->has_bias)
    {
      size_t bytes = (size_t) d->co * sizeof (float);
      if (!_fb_cuda_check (libs->cu, libs->cu->MemAlloc (&p->zero_bias, bytes), error,
                           "kernel %s: a bias of zeros", p->name) ||
          !_fb_cuda_check (libs->cu, libs->cu->MemsetD8Async (p->zero_bias, 0, bytes, libs->stream),
                           error, "kernel %s: a bias of zeros", p->name))
        return FALSE;
      p->bias = p->zero_bias;
    }
  return TRUE;
}

FbCudaLibPhase *
_fb_cuda_lib_phase_new (FbCudaLibs *libs, const FbKConv *cv, CUdeviceptr x, CUdeviceptr w,
                        CUdeviceptr bias, CUdeviceptr add, CUdeviceptr y, const char *kernel_name,
                        GError **error)
{
  FbCudaLibPhase *p = g_new0 (FbCudaLibPhase, 1);
  p->lib = cv->lib;
  p->x = x;
  p->w = w;
  p->bias = bias;
  p->add = add;
  p->y = y;
  p->name = g_strdup (kernel_name);
  gboolean ok = cv->lib == FB_KLIB_GEMM ? gemm_new (libs, p, &cv->gemm, error)
                                        : conv_new (libs, p, cv, error);
  if (!ok)
    {
      _fb_cuda_lib_phase_free (libs, p);
      return NULL;
    }
  return p;
}

size_t
_fb_cuda_lib_phase_workspace (const FbCudaLibPhase *p)
{
  return p->workspace;
}

gboolean
_fb_cuda_lib_phase_run (FbCudaLibs *libs, FbCudaLibPhase *p, GError **error)
{
  if (p->lib == FB_KLIB_GEMM)
    {
      float beta = 0.0f;
      return lt_ok (libs->lt->Matmul (libs->lt_handle, p->desc, &p->alpha, (void *) p->w, p->la,
                                      (void *) p->x, p->lb, &beta, (void *) p->y, p->lc,
                                      (void *) p->y, p->lc, &p->algo, (void *) libs->workspace,
                                      libs->workspace_bytes, libs->stream), p, "product", error);
    }
  const FbCudnn *dnn = libs->dnn;
  float one = 1.0f, zero = 0.0f;
  if (!p->fused)
    return dnn_ok (dnn, dnn->ConvolutionForward (libs->dnn_handle, &one, p->xd, (void *) p->x, p->wd,
                                                 (void *) p->w, p->cd, p->algo_id,
                                                 (void *) libs->workspace, libs->workspace_bytes,
                                                 &zero, p->yd, (void *) p->y), p, "convolution",
                   error);
  float alpha2 = p->add ? 1.0f : 0.0f;
  return dnn_ok (dnn, dnn->ConvolutionBiasActivationForward (libs->dnn_handle, &one, p->xd,
                                                             (void *) p->x, p->wd, (void *) p->w,
                                                             p->cd, p->algo_id,
                                                             (void *) libs->workspace,
                                                             libs->workspace_bytes, &alpha2, p->yd,
                                                             (void *) (p->add ? p->add : p->y),
                                                             p->bd, (void *) p->bias, p->ad, p->yd,
                                                             (void *) p->y),
                 p, "fused convolution", error);
}

void
_fb_cuda_lib_phase_free (FbCudaLibs *libs, FbCudaLibPhase *p)
{
  if (p == NULL)
    return;
  if (libs->lt)
    {
      if (p->desc)
        libs->lt->MatmulDescDestroy (p->desc);
      if (p->la)
        libs->lt->MatrixLayoutDestroy (p->la);
      if (p->lb)
        libs->lt->MatrixLayoutDestroy (p->lb);
      if (p->lc)
        libs->lt->MatrixLayoutDestroy (p->lc);
    }
  if (libs->dnn)
    {
      if (p->xd)
        libs->dnn->DestroyTensorDescriptor (p->xd);
      if (p->yd)
        libs->dnn->DestroyTensorDescriptor (p->yd);
      if (p->bd)
        libs->dnn->DestroyTensorDescriptor (p->bd);
      if (p->wd)
        libs->dnn->DestroyFilterDescriptor (p->wd);
      if (p->cd)
        libs->dnn->DestroyConvolutionDescriptor (p->cd);
      if (p->ad)
        libs->dnn->DestroyActivationDescriptor (p->ad);
    }
  if (p->zero_bias)
    libs->cu->MemFree (p->zero_bias);
  g_free (p->name);
  g_free (p);
}

void
_fb_cuda_libs_clear (FbCudaLibs *libs)
{
  if (libs->lt_handle)
    libs->lt->Destroy (libs->lt_handle);
  if (libs->dnn_handle)
    libs->dnn->Destroy (libs->dnn_handle);
  if (libs->workspace)
    libs->cu->MemFree (libs->workspace);
  libs->lt_handle = NULL;
  libs->dnn_handle = NULL;
  libs->workspace = 0;
}
