/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internals of the cuda target shared between its files. Only compiler/runtime/ includes this
 * header. */
#pragma once

#include "fb-cuda.h"
#include "fb-cuda-api.h"
#include "fb-cuda-timing-cache.h"

G_BEGIN_DECLS

/* A library phase made once, when the module is made: descriptors, the chosen algorithm, the
 * device pointers it reads and writes (fixed for the module's life, so that a captured graph
 * replays it). */
typedef struct _FbCudaLibPhase FbCudaLibPhase;

typedef struct {
  const FbCuDriver *cu;
  const FbCublasLt *lt;          /* opened on first need */
  const FbCudnn    *dnn;
  cublasLtHandle_t  lt_handle;
  cudnnHandle_t     dnn_handle;
  CUstream          stream;
  CUdeviceptr       workspace;
  size_t            workspace_bytes;
  gboolean          strict_float32;
  gboolean          tf32_matmul;    /* matrix products in TF32 (strict_float32 overrides) */
  GHashTable       *conv_choices;   /* convolution shape -> FbCudaConvChoice, the way timed
                                       fastest; NULL until the first convolution */
  gboolean          choices_timed;  /* a choice was timed here: the timing cache is behind */
  char             *device_tag;     /* the device, as the cubin and timing caches key it */
} FbCudaLibs;

/* y, x, w, bias, add: device addresses of the phase's arguments (0 where absent);
 * w_constant: w holds weights fixed for the module's life (a channels-last convolution then
 * reorders them once, to the filter layout cuDNN's channels-last kernels read). */
FbCudaLibPhase *_fb_cuda_lib_phase_new  (FbCudaLibs *libs, const FbKConv *cv, CUdeviceptr x,
                                         CUdeviceptr w, CUdeviceptr bias, CUdeviceptr add,
                                         CUdeviceptr y, gboolean w_constant,
                                         const char *kernel_name, GError **error);
/* Workspace bytes the phase needs (the module allocates the largest before any run). */
size_t          _fb_cuda_lib_phase_workspace (const FbCudaLibPhase *phase);
gboolean        _fb_cuda_lib_phase_run  (FbCudaLibs *libs, FbCudaLibPhase *phase, GError **error);
/* How a convolution phase runs and what the other ways measured; NULL for products. */
const char     *_fb_cuda_lib_phase_choice (const FbCudaLibPhase *phase);
/* The way a convolution phase runs ("graph", "legacy call", ...); NULL for products. */
const char     *_fb_cuda_lib_phase_way    (const FbCudaLibPhase *phase);
void            _fb_cuda_lib_phase_free (FbCudaLibs *libs, FbCudaLibPhase *phase);
void            _fb_cuda_libs_clear     (FbCudaLibs *libs);

/* The choices of the timing cache (fb-cuda-timing-cache.h) for this device and cuDNN, or an
 * empty table; a file of another device or a damaged one is named on stderr and not used. */
GHashTable     *_fb_cuda_timing_cache_load  (FbCudaLibs *libs);
/* Writes the module's choices to the timing cache when any were timed; a failure is named on
 * stderr, never fatal (the module runs as timed). */
void            _fb_cuda_timing_cache_save  (FbCudaLibs *libs);

/* The driver, initialized, and device 0; FB_RUNTIME_ERROR_DEVICE when either is missing. */
const FbCuDriver *_fb_cuda_open_device  (CUdevice *device, GError **error);

/* FB_RUNTIME_ERROR_DEVICE "WHAT: CUDA_ERROR_X (text)" when r is not success. */
gboolean        _fb_cuda_check          (const FbCuDriver *cu, CUresult r, GError **error,
                                         const char *format, ...) G_GNUC_PRINTF (4, 5);

G_END_DECLS
