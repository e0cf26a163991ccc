/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Timing a library phase's ways to run on the device, once, when the module is made: the
 * median of a few runs between CUDA events after two warm-ups (fb-cuda-conv.c for cuDNN's
 * convolutions, below for cuBLASLt's algorithms). */
#include "fb-cuda-library-private.h"

#include <stdio.h>

#define TUNE_RUNS 7

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

double
_fb_cuda_time_median (FbCudaLibs *libs, FbCudaTimedRun run, gpointer data, GError **error)
{
  const FbCuDriver *cu = libs->cu;
  CUevent start = NULL, end = NULL;
  double times[TUNE_RUNS];
  double result = -1;
  if (cu->EventCreate (&start, 0) != 0 || cu->EventCreate (&end, 0) != 0)
    goto out;
  for (int i = 0; i < 2; i++)
    if (!run (libs, data, error))
      goto out;
  for (int i = 0; i < TUNE_RUNS; i++)
    {
      float ms = 0;
      if (cu->EventRecord (start, libs->stream) != 0 || !run (libs, data, NULL) ||
          cu->EventRecord (end, libs->stream) != 0 || cu->EventSynchronize (end) != 0 ||
          cu->EventElapsedTime (&ms, start, end) != 0)
        goto out;
      times[i] = ms * 1000.0;
    }
  qsort (times, TUNE_RUNS, sizeof times[0], compare_doubles);
  result = times[TUNE_RUNS / 2];
out:
  /* A failed run may leave the stream in error: wait so that the next way starts clean. */
  cu->StreamSynchronize (libs->stream);
  if (start)
    cu->EventDestroy (start);
  if (end)
    cu->EventDestroy (end);
  return result;
}

/* ---- cuBLASLt's algorithms ----------------------------------------------------------------- */

typedef struct {
  FbCudaLibPhase *p;
  CUdeviceptr     workspace;
  size_t          bytes;
} GemmRun;

static gboolean
gemm_run (FbCudaLibs *libs, gpointer data, GError **error)
{
  GemmRun *r = data;
  FbCudaLibPhase *p = r->p;
  float beta = 0.0f;
  cublasStatus_t s = libs->lt->Matmul (libs->lt_handle, p->desc, &p->alpha, (void *) p->w, p->la,
                                       (void *) p->x, p->lb, &beta, (void *) p->y, p->lc,
                                       (void *) p->y, p->lc, &p->algo, (void *) r->workspace,
                                       r->bytes, libs->stream);
  if (s != 0)
    g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE,
                 "kernel %s: cuBLASLt product failed (status %d)", p->name, s);
  return s == 0;
}

int
_fb_cuda_gemm_choose (FbCudaLibs *libs, FbCudaLibPhase *p, const char *shape,
                      const cublasLtMatmulHeuristicResult_t *results, int n)
{
  if (n <= 1 || g_strcmp0 (g_getenv ("FUSEBENCH_CUDA_GEMM_TIMING"), "off") == 0)
    return 0;
  /* The choice is kept with the convolutions' (and in the timing cache, where one is named),
   * so that a profile and an ncu session of the model run the same kernels. */
  if (libs->conv_choices == NULL)
    libs->conv_choices = _fb_cuda_timing_cache_load (libs);
  g_autofree char *key = g_strconcat ("gemm ", shape, NULL);
  FbCudaConvChoice *known = g_hash_table_lookup (libs->conv_choices, key);
  if (known && known->way == FB_CUDA_GEMM_CHOICE)
    return CLAMP (known->algo, 0, n - 1);
  size_t most = 0;
  for (int i = 0; i < n; i++)
    most = MAX (most, results[i].workspaceSize);
  GemmRun run = { p, 0, most };
  if (most > 0 && libs->cu->MemAlloc (&run.workspace, most) != 0)
    return 0;   /* nothing to time with: cuBLASLt's first choice */
  int best = 0;
  double best_us = -1, first_us = -1;
  for (int i = 0; i < n; i++)
    {
      p->algo = results[i].algo;
      double us = _fb_cuda_time_median (libs, gemm_run, &run, NULL);
      if (i == 0)
        first_us = us;
      if (us >= 0 && (best_us < 0 || us < best_us))
        best = i, best_us = us;
    }
  if (run.workspace)
    libs->cu->MemFree (run.workspace);
  FbCudaConvChoice *c = g_new0 (FbCudaConvChoice, 1);
  *c = (FbCudaConvChoice) {
    FB_CUDA_GEMM_CHOICE, best, 0, -1,
    g_strdup_printf ("cuBLASLt heuristic result %d of %d, %.1f µs (its first %.1f µs)", best + 1,
                     n, best_us, first_us), FALSE };
  g_hash_table_replace (libs->conv_choices, g_steal_pointer (&key), c);
  libs->choices_timed = TRUE;
  if (g_strcmp0 (g_getenv ("FUSEBENCH_CUDA_TRACE"), "1") == 0)
    fprintf (stderr, "fusebench: %s: %s\n", p->name, c->choice);
  return best;
}
