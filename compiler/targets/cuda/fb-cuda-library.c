/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The library phases of the cuda target. Matrix products go to cuBLASLt: row-major
 * C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so B is cuBLASLt's first operand;
 * a bias along C's rows is its BIAS epilogue (a vector over the column-major rows), Relu its
 * RELU, a residual addend its own C operand (beta 1). Convolutions go to cuDNN (fb-cuda-conv.c). TF32 tensor cores are allowed unless strict
 * float32 is asked for (cuBLASLt's COMPUTE_32F, cuDNN's FMA math). Descriptors and algorithms
 * are chosen once, here, so that the phase can be captured into a CUDA graph. */
#include "fb-cuda-library-private.h"

#include <stdarg.h>
#include <stdio.h>

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
  /* Matrix products are float32 unless TF32 is asked for, as PyTorch's matmul precision
   * "highest" (its default): TF32 moved BERT's output 2.6e-3, past 1e-3. A convolution's
   * product takes TF32 as cuDNN's convolutions do (and PyTorch's, by default). */
  gboolean tf32 = (libs->tf32_matmul || g->tf32) && !libs->strict_float32;
  int compute = tf32 ? FB_CUBLAS_COMPUTE_32F_FAST_TF32 : FB_CUBLAS_COMPUTE_32F;
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
  /* A float32 product split for TF32 (fb-lower-product-split.c) whose module asks for plain
   * TF32 products reads only the first third of its depth: A_hi B_hi, the TF32 product. */
  int64_t depth = g->split3 && libs->tf32_matmul && !libs->strict_float32 ? g->k / 3 : g->k;
  /* Column-major views: B^T is n x k (or k x n before its op), A^T k x m, C^T n x m. */
  if (!layout (lt, &p->la, g->tb ? depth : g->n, g->tb ? g->n : depth, g->ldb, g->batch,
               g->stride_b, p, error) ||
      !layout (lt, &p->lb, g->ta ? g->m : depth, g->ta ? depth : g->m, g->lda, g->batch,
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

FbCudaLibPhase *
_fb_cuda_lib_phase_new (FbCudaLibs *libs, const FbKConv *cv, CUdeviceptr x, CUdeviceptr w,
                        CUdeviceptr bias, CUdeviceptr add, CUdeviceptr y, gboolean w_constant,
                        const char *kernel_name, GError **error)
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
                                        : _fb_cuda_conv_new (libs, p, cv, w_constant, error);
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
      /* A residual addend is the C operand, laid out as the result: D = alpha AB + C. */
      float beta = p->add ? 1.0f : 0.0f;
      CUdeviceptr c = p->add ? p->add : p->y;
      return lt_ok (libs->lt->Matmul (libs->lt_handle, p->desc, &p->alpha, (void *) p->w, p->la,
                                      (void *) p->x, p->lb, &beta, (void *) c, p->lc,
                                      (void *) p->y, p->lc, &p->algo, (void *) libs->workspace,
                                      libs->workspace_bytes, libs->stream), p, "product", error);
    }
  return _fb_cuda_conv_run (libs, p, libs->workspace, libs->workspace_bytes, error);
}

const char *
_fb_cuda_lib_phase_choice (const FbCudaLibPhase *p)
{
  return p->choice;
}

const char *
_fb_cuda_lib_phase_way (const FbCudaLibPhase *p)
{
  return p->lib == FB_KLIB_GEMM ? NULL : _fb_cuda_conv_way_name (p);
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
  _fb_cuda_conv_free (libs, p);
  g_free (p->choice);
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
  if (libs->conv_choices)
    g_hash_table_destroy (libs->conv_choices);
  libs->conv_choices = NULL;
  g_clear_pointer (&libs->device_tag, g_free);
  libs->lt_handle = NULL;
  libs->dnn_handle = NULL;
  libs->workspace = 0;
}
