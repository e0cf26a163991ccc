/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cuda target's matrix products: cuBLASLt. Row-major C = op(A) op(B) is the column-major
 * C^T = op(B)^T op(A)^T, so B is cuBLASLt's first operand; a bias along C's rows is its BIAS
 * epilogue (a vector over the column-major rows), Relu its RELU, a residual addend its own C
 * operand (beta 1).
 *
 * Which of cuBLASLt's algorithms runs a product is timed, as a convolution's way is
 * (fb-cuda-conv.c): cuBLASLt's heuristic ranks its algorithms by a model of the device, and on
 * the small products of a batch-1 transformer (a few thousand rows, a depth of 96 to 768) its
 * first is often not its fastest. Up to PRODUCT_CANDIDATES of its ranked algorithms are timed
 * on the module's own buffers and the fastest is kept; a module with several products of one
 * shape times the shape once, and the timing cache keeps the choice for other processes.
 * FUSEBENCH_CUDA_PRODUCT_TIMING=off takes the heuristic's first, untimed. */
#include "fb-cuda-library-private.h"

#include <stdio.h>
#include <string.h>

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

#define LT_WORKSPACE       ((size_t) 32 << 20)
#define PRODUCT_CANDIDATES 8

/* Everything that decides which algorithms apply and how fast they run: the geometry, the
 * compute type, the epilogue, whether C is read (and is D) and the operands' alignment. */
static char *
product_key (const FbCudaLibPhase *p, const FbKGemm *g, int compute, uint32_t epilogue,
             int64_t depth)
{
  gboolean aligned = ((p->x | p->w | p->y | p->bias | p->add) & 15) == 0;
  return g_strdup_printf ("product:%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                          ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                          ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                          ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                          ",%d,%u,%d%d%d",
                          g->ta, g->tb, g->m, g->n, depth, g->lda, g->ldb, g->ldc, g->batch,
                          g->stride_a, g->stride_b, g->stride_c, compute, epilogue,
                          p->add != 0, p->add == p->y, aligned);
}

/* A fingerprint of an algorithm's configuration, as the timing cache names it: the heuristic's
 * ranking may change between releases, the configuration it describes does not. */
static int64_t
algo_fingerprint (const cublasLtMatmulAlgo_t *algo)
{
  uint64_t h = 1469598103934665603ull;
  const unsigned char *b = (const unsigned char *) algo->data;
  for (size_t i = 0; i < sizeof algo->data; i++)
    h = (h ^ b[i]) * 1099511628211ull;
  return (int64_t) (h >> 2);
}

/* Sets p's algorithm to the fastest of the heuristic's n, timed on p's own buffers (or to the
 * one known for this shape), and describes the choice in p->choice. */
static gboolean
choose_algo (FbCudaLibs *libs, FbCudaLibPhase *p, const cublasLtMatmulHeuristicResult_t *found,
             int n, const char *key, GError **error)
{
  if (libs->conv_choices == NULL)
    libs->conv_choices = _fb_cuda_timing_cache_load (libs);
  const FbCudaConvChoice *known = g_hash_table_lookup (libs->conv_choices, key);
  for (int i = 0; known && known->way == FB_CUDA_CHOICE_PRODUCT && i < n; i++)
    if (algo_fingerprint (&found[i].algo) == known->engine)
      {
        p->algo = found[i].algo;
        p->workspace = found[i].workspaceSize;
        p->choice = g_strdup_printf ("%s (%s)", known->choice,
                                     known->from_file ? "from the timing cache, not timed again"
                                                      : "as the module's other product of this shape");
        return TRUE;
      }
  gboolean timing = n > 1 && g_strcmp0 (g_getenv ("FUSEBENCH_CUDA_PRODUCT_TIMING"), "off") != 0;
  size_t most = 0;
  for (int i = 0; timing && i < n; i++)
    most = MAX (most, found[i].workspaceSize);
  CUdeviceptr workspace = 0;
  if (most > 0 && timing && libs->cu->MemAlloc (&workspace, most) != 0)
    timing = FALSE;
  double us[PRODUCT_CANDIDATES] = { -1, -1, -1, -1, -1, -1, -1, -1 };
  int best = 0;
  g_autoptr(GError) failure = NULL;
  for (int i = 0; timing && i < n; i++)
    {
      p->algo = found[i].algo;
      us[i] = _fb_cuda_lib_phase_time (libs, p, workspace, most, failure ? NULL : &failure);
      if (us[i] >= 0 && (us[best] < 0 || us[i] < us[best]))
        best = i;
    }
  if (workspace)
    libs->cu->MemFree (workspace);
  if (timing && us[best] < 0)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE,
                   "kernel %s: none of cuBLASLt's %d algorithms for this product ran: %s",
                   p->name, n, failure ? failure->message : "no reason given");
      return FALSE;
    }
  p->algo = found[best].algo;
  p->workspace = found[best].workspaceSize;
  GString *text = g_string_new (NULL);
  if (!timing)
    g_string_append_printf (text, "cuBLASLt's heuristic's first of %d, untimed", n);
  else
    {
      g_string_append_printf (text, "cuBLASLt's heuristic's %d%s of %d, %.1f µs; timed:", best + 1,
                              best == 0 ? "st" : best == 1 ? "nd" : best == 2 ? "rd" : "th", n,
                              us[best]);
      for (int i = 0; i < n; i++)
        g_string_append_printf (text, us[i] >= 0 ? " %.1f" : " (failed)", us[i]);
      FbCudaConvChoice *remember = g_new0 (FbCudaConvChoice, 1);
      *remember = (FbCudaConvChoice) { FB_CUDA_CHOICE_PRODUCT, best, 0,
                                       algo_fingerprint (&p->algo), g_strdup (text->str), FALSE };
      g_hash_table_replace (libs->conv_choices, g_strdup (key), remember);
      libs->choices_timed = TRUE;
    }
  p->choice = g_string_free (text, FALSE);
  if (g_strcmp0 (g_getenv ("FUSEBENCH_CUDA_TRACE"), "1") == 0)
    fprintf (stderr, "fusebench: %s: %s\n", p->name, p->choice);
  return TRUE;
}

gboolean
_fb_cuda_product_new (FbCudaLibs *libs, FbCudaLibPhase *p, const FbKGemm *g, GError **error)
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
  p->alpha = (float) g->alpha;
  cublasLtMatmulPreference_t pref = NULL;
  size_t ws = LT_WORKSPACE;
  cublasLtMatmulHeuristicResult_t found[PRODUCT_CANDIDATES];
  int returned = 0;
  gboolean ok = lt_ok (lt->MatmulPreferenceCreate (&pref), p, "preference", error) &&
                lt_ok (lt->MatmulPreferenceSetAttribute (pref, FB_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                         &ws, sizeof ws), p, "workspace", error) &&
                lt_ok (lt->MatmulAlgoGetHeuristic (libs->lt_handle, p->desc, p->la, p->lb, p->lc,
                                                   p->lc, pref, PRODUCT_CANDIDATES, found, &returned),
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
  g_autofree char *key = product_key (p, g, compute, epilogue, depth);
  return choose_algo (libs, p, found, MIN (returned, PRODUCT_CANDIDATES), key, error);
}

gboolean
_fb_cuda_product_run (FbCudaLibs *libs, FbCudaLibPhase *p, CUdeviceptr workspace,
                      size_t workspace_bytes, GError **error)
{
  /* A residual addend is the C operand, laid out as the result: D = alpha AB + C. */
  float beta = p->add ? 1.0f : 0.0f;
  CUdeviceptr c = p->add ? p->add : p->y;
  return lt_ok (libs->lt->Matmul (libs->lt_handle, p->desc, &p->alpha, (void *) p->w, p->la,
                                  (void *) p->x, p->lb, &beta, (void *) c, p->lc, (void *) p->y,
                                  p->lc, &p->algo, (void *) workspace, workspace_bytes,
                                  libs->stream), p, "product", error);
}

void
_fb_cuda_product_free (FbCudaLibs *libs, FbCudaLibPhase *p)
{
  if (libs->lt == NULL)
    return;
  if (p->desc)
    libs->lt->MatmulDescDestroy (p->desc);
  if (p->la)
    libs->lt->MatrixLayoutDestroy (p->la);
  if (p->lb)
    libs->lt->MatrixLayoutDestroy (p->lb);
  if (p->lc)
    libs->lt->MatrixLayoutDestroy (p->lc);
}
