/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The library phases of the cuda target: matrix products go to cuBLASLt (fb-cuda-product.c),
 * convolutions to cuDNN (fb-cuda-conv.c). TF32 tensor cores are allowed unless strict float32
 * is asked for (cuBLASLt's COMPUTE_32F, cuDNN's FMA math). Descriptors and algorithms are
 * chosen once, when the module is made, so that the phase can be captured into a CUDA graph. */
#include "fb-cuda-library-private.h"

#include <stdarg.h>
#include <stdlib.h>

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
  gboolean ok = cv->lib == FB_KLIB_GEMM ? _fb_cuda_product_new (libs, p, &cv->gemm, error)
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

static gboolean
phase_run (FbCudaLibs *libs, FbCudaLibPhase *p, CUdeviceptr workspace, size_t workspace_bytes,
           GError **error)
{
  return p->lib == FB_KLIB_GEMM ? _fb_cuda_product_run (libs, p, workspace, workspace_bytes, error)
                                : _fb_cuda_conv_run (libs, p, workspace, workspace_bytes, error);
}

gboolean
_fb_cuda_lib_phase_run (FbCudaLibs *libs, FbCudaLibPhase *p, GError **error)
{
  return phase_run (libs, p, libs->workspace, libs->workspace_bytes, error);
}

#define TIMED_RUNS 7

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

double
_fb_cuda_lib_phase_time (FbCudaLibs *libs, FbCudaLibPhase *p, CUdeviceptr workspace,
                         size_t workspace_bytes, GError **error)
{
  const FbCuDriver *cu = libs->cu;
  CUevent start = NULL, end = NULL;
  double times[TIMED_RUNS];
  double result = -1;
  if (cu->EventCreate (&start, 0) != 0 || cu->EventCreate (&end, 0) != 0)
    goto out;
  for (int i = 0; i < 2; i++)
    if (!phase_run (libs, p, workspace, workspace_bytes, error))
      goto out;
  for (int i = 0; i < TIMED_RUNS; i++)
    {
      float ms = 0;
      if (cu->EventRecord (start, libs->stream) != 0 ||
          !phase_run (libs, p, workspace, workspace_bytes, NULL) ||
          cu->EventRecord (end, libs->stream) != 0 || cu->EventSynchronize (end) != 0 ||
          cu->EventElapsedTime (&ms, start, end) != 0)
        goto out;
      times[i] = ms * 1000.0;
    }
  qsort (times, TIMED_RUNS, sizeof times[0], compare_doubles);
  result = times[TIMED_RUNS / 2];
out:
  /* A failed run may leave the stream in error: wait so that the next candidate starts clean. */
  cu->StreamSynchronize (libs->stream);
  if (start)
    cu->EventDestroy (start);
  if (end)
    cu->EventDestroy (end);
  return result;
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
  _fb_cuda_product_free (libs, p);
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
