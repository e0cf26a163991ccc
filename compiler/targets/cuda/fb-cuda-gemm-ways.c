/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Which of cuBLASLt's algorithms runs a matrix product. cuBLASLt's heuristic ranks its
 * algorithms by a model of the GPU, and its first is not always the fastest on shapes that fill
 * the GPU poorly (a few hundred rows: a transformer at batch 1), where split-K and tile shapes
 * change the time most. So up to GEMM_WAYS of its candidates are timed once on the device, on
 * the phase's own buffers, as cuDNN's ways are for a convolution, and the fastest kept; the
 * heuristic's first stays unless another is faster by more than GEMM_MARGIN, so that timing
 * noise does not make two processes (a run and a profile) run different kernels. A module with
 * several products of one shape times the shape once. FUSEBENCH_CUDA_GEMM_WAYS=first keeps the
 * heuristic's first, untimed, to measure what the timing gains; FUSEBENCH_CUDA_TRACE=1 prints
 * every candidate's time to stderr. */
#include "fb-cuda-library-private.h"

#include <stdio.h>
#include <string.h>

#define GEMM_WAYS   8
#define GEMM_MARGIN 0.05
#define TIME_RUNS   7

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

double
_fb_cuda_lib_time (FbCudaLibs *libs, FbCudaLibRun run, gpointer data, GError **error)
{
  const FbCuDriver *cu = libs->cu;
  CUevent start = NULL, end = NULL;
  double times[TIME_RUNS];
  double result = -1;
  if (cu->EventCreate (&start, 0) != 0 || cu->EventCreate (&end, 0) != 0)
    goto out;
  for (int i = 0; i < 2; i++)
    if (!run (libs, data, error))
      goto out;
  for (int i = 0; i < TIME_RUNS; i++)
    {
      float ms = 0;
      if (cu->EventRecord (start, libs->stream) != 0 || !run (libs, data, NULL) ||
          cu->EventRecord (end, libs->stream) != 0 || cu->EventSynchronize (end) != 0 ||
          cu->EventElapsedTime (&ms, start, end) != 0)
        goto out;
      times[i] = ms * 1000.0;
    }
  qsort (times, TIME_RUNS, sizeof times[0], compare_doubles);
  result = times[TIME_RUNS / 2];
out:
  /* A failed run may leave the stream in error: wait so that the next candidate starts clean. */
  cu->StreamSynchronize (libs->stream);
  if (start)
    cu->EventDestroy (start);
  if (end)
    cu->EventDestroy (end);
  return result;
}

int
_fb_cuda_gemm_ways_wanted (void)
{
  return g_strcmp0 (g_getenv ("FUSEBENCH_CUDA_GEMM_WAYS"), "first") == 0 ? 1 : GEMM_WAYS;
}

typedef struct {
  FbCudaLibPhase *p;
  CUdeviceptr     workspace;
  size_t          bytes;
} GemmRun;

static gboolean
run_gemm (FbCudaLibs *libs, gpointer data, GError **error)
{
  GemmRun *r = data;
  return _fb_cuda_gemm_run (libs, r->p, r->workspace, r->bytes, error);
}

/* What makes two products the same problem for cuBLASLt: the descriptors' numbers, and whether
 * the pointers are 16-byte aligned (which changes the algorithms that apply). */
static char *
gemm_key (const FbCudaLibPhase *p, const FbKGemm *g, int compute)
{
  gboolean aligned = ((p->x | p->w | p->y | p->bias) & 15) == 0;
  return g_strdup_printf ("%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                          ",%d%d,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                          ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                          ",%" G_GINT64_FORMAT ",%d,%d,%d,%d",
                          g->m, g->n, g->k, (int) g->ta, (int) g->tb, g->lda, g->ldb, g->ldc, g->batch,
                          g->stride_a, g->stride_b, g->stride_c, p->bias != 0, (int) g->relu, aligned,
                          compute);
}

void
_fb_cuda_gemm_choose (FbCudaLibs *libs, FbCudaLibPhase *p, const FbKGemm *g, int compute,
                      const cublasLtMatmulHeuristicResult_t *ways, int n)
{
  p->algo = ways[0].algo;
  p->workspace = ways[0].workspaceSize;
  if (n < 2)
    return;
  g_autofree char *key = gemm_key (p, g, compute);
  if (libs->gemm_choices == NULL)
    libs->gemm_choices = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gpointer known;
  if (g_hash_table_lookup_extended (libs->gemm_choices, key, NULL, &known))
    {
      int i = GPOINTER_TO_INT (known);
      if (i < n)
        {
          p->algo = ways[i].algo;
          p->workspace = ways[i].workspaceSize;
          p->choice = g_strdup_printf ("cuBLASLt algorithm %d of %d (timed with an earlier "
                                       "product of this shape)", i + 1, n);
        }
      return;
    }
  size_t most = 0;
  for (int i = 0; i < n; i++)
    most = MAX (most, ways[i].workspaceSize);
  CUdeviceptr workspace = 0;
  if (most > 0 && libs->cu->MemAlloc (&workspace, most) != 0)
    {
      p->choice = g_strdup_printf ("cuBLASLt's first algorithm (no %zu-byte workspace to time "
                                   "its %d with)", most, n);
      return;
    }
  double us[GEMM_WAYS];
  int best = 0;
  for (int i = 0; i < n && i < GEMM_WAYS; i++)
    {
      p->algo = ways[i].algo;
      GemmRun r = { p, workspace, most };
      us[i] = _fb_cuda_lib_time (libs, run_gemm, &r, NULL);
      if (us[i] >= 0 && (us[best] < 0 || us[i] < us[best]))
        best = i;
    }
  if (workspace)
    libs->cu->MemFree (workspace);
  /* The heuristic's first unless another is clearly faster. */
  if (us[0] >= 0 && us[best] > us[0] * (1.0 - GEMM_MARGIN))
    best = 0;
  p->algo = ways[best].algo;
  p->workspace = ways[best].workspaceSize;
  g_hash_table_insert (libs->gemm_choices, g_steal_pointer (&key), GINT_TO_POINTER (best));
  GString *choice = g_string_new (NULL);
  g_string_printf (choice, "cuBLASLt algorithm %d of %d, timed:", best + 1, MIN (n, GEMM_WAYS));
  for (int i = 0; i < n && i < GEMM_WAYS; i++)
    {
      if (us[i] >= 0)
        g_string_append_printf (choice, " %.1f", us[i]);
      else
        g_string_append (choice, " failed");
    }
  g_string_append (choice, " us");
  p->choice = g_string_free (choice, FALSE);
  if (g_strcmp0 (g_getenv ("FUSEBENCH_CUDA_TRACE"), "1") == 0)
    fprintf (stderr, "fusebench: %s: %s\n", p->name, p->choice);
}
