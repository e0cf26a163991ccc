/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The device's ceilings for the roofline, measured rather than taken from a datasheet: a
 * device-to-device copy of 1 GiB (far beyond the L2) and an 8192-cube TF32 product through
 * cuBLASLt, the same library the cuda target's contractions use. About a second on an H200,
 * so the result is cached per device name. */
#include "fb-cuda-private.h"

#define COPY_BYTES ((size_t) 1 << 30)
#define COPY_REPS 10
#define GEMM_N 8192
#define GEMM_REPS 10

static char *
cache_path (void)
{
  return g_build_filename (g_get_user_cache_dir (), "fusebench", "cuda-ceilings.ini", NULL);
}

static gboolean
cached (const char *device, double *gbps, double *gflops)
{
  g_autofree char *path = cache_path ();
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL))
    return FALSE;
  g_autoptr(GError) error = NULL;
  double b = g_key_file_get_double (kf, device, "copy_gbps", &error);
  double f = error ? 0 : g_key_file_get_double (kf, device, "tf32_gflops", &error);
  if (error || b <= 0 || f <= 0)
    return FALSE;
  *gbps = b;
  *gflops = f;
  return TRUE;
}

static void
store (const char *device, double gbps, double gflops)
{
  g_autofree char *path = cache_path ();
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_key_file_load_from_file (kf, path, G_KEY_FILE_KEEP_COMMENTS, NULL);
  g_key_file_set_double (kf, device, "copy_gbps", gbps);
  g_key_file_set_double (kf, device, "tf32_gflops", gflops);
  if (g_mkdir_with_parents (dir, 0700) == 0)
    g_key_file_save_to_file (kf, path, NULL);
}

/* ms between two events recorded around work on the stream. */
static gboolean
elapsed (const FbCuDriver *cu, CUevent a, CUevent b, double *ms, GError **error)
{
  float f = 0;
  if (!_fb_cuda_check (cu, cu->EventSynchronize (b), error, "timing the ceilings") ||
      !_fb_cuda_check (cu, cu->EventElapsedTime (&f, a, b), error, "timing the ceilings"))
    return FALSE;
  *ms = f;
  return TRUE;
}

static gboolean
measure (const FbCuDriver *cu, CUstream stream, CUevent a, CUevent b, double *gbps,
         double *gflops, CUdeviceptr *bufs, GError **error)
{
  double ms = 0;
  /* The copy: once to warm up, then timed. */
  if (!_fb_cuda_check (cu, cu->MemAlloc (&bufs[0], COPY_BYTES), error, "1 GiB for the copy") ||
      !_fb_cuda_check (cu, cu->MemAlloc (&bufs[1], COPY_BYTES), error, "1 GiB for the copy") ||
      !_fb_cuda_check (cu, cu->MemsetD8Async (bufs[0], 0x3c, COPY_BYTES, stream), error, "memset") ||
      !_fb_cuda_check (cu, cu->MemcpyDtoDAsync (bufs[1], bufs[0], COPY_BYTES, stream), error, "copy") ||
      !_fb_cuda_check (cu, cu->EventRecord (a, stream), error, "an event"))
    return FALSE;
  for (guint i = 0; i < COPY_REPS; i++)
    if (!_fb_cuda_check (cu, cu->MemcpyDtoDAsync (bufs[i % 2], bufs[(i + 1) % 2], COPY_BYTES, stream),
                         error, "the timed copy"))
      return FALSE;
  if (!_fb_cuda_check (cu, cu->EventRecord (b, stream), error, "an event") ||
      !elapsed (cu, a, b, &ms, error))
    return FALSE;
  *gbps = 2.0 * COPY_BYTES * COPY_REPS / (ms * 1e-3) / 1e9;
  cu->MemFree (bufs[0]);
  cu->MemFree (bufs[1]);
  bufs[0] = bufs[1] = 0;

  /* The product, through the cuda target's own cuBLASLt phase. */
  size_t bytes = (size_t) GEMM_N * GEMM_N * sizeof (float);
  for (guint i = 0; i < 3; i++)
    if (!_fb_cuda_check (cu, cu->MemAlloc (&bufs[i], bytes), error, "the product's operands") ||
        !_fb_cuda_check (cu, cu->MemsetD8Async (bufs[i], 0x3c, bytes, stream), error, "memset"))
      return FALSE;
  FbCudaLibs libs = { .cu = cu, .stream = stream };
  FbKConv cv = {
    .lib = FB_KLIB_GEMM,
    .gemm = { .m = GEMM_N, .n = GEMM_N, .k = GEMM_N, .lda = GEMM_N, .ldb = GEMM_N,
              .ldc = GEMM_N, .batch = 1, .alpha = 1 },
  };
  FbCudaLibPhase *phase = _fb_cuda_lib_phase_new (&libs, &cv, bufs[0], bufs[1], 0, 0, bufs[2],
                                                  FALSE, "ceiling", error);
  gboolean ok = phase != NULL;
  size_t workspace = ok ? _fb_cuda_lib_phase_workspace (phase) : 0;
  if (ok && workspace > 0)
    {
      ok = _fb_cuda_check (cu, cu->MemAlloc (&libs.workspace, workspace), error, "a workspace");
      libs.workspace_bytes = workspace;
    }
  ok = ok && _fb_cuda_lib_phase_run (&libs, phase, error) &&
       _fb_cuda_check (cu, cu->EventRecord (a, stream), error, "an event");
  for (guint i = 0; ok && i < GEMM_REPS; i++)
    ok = _fb_cuda_lib_phase_run (&libs, phase, error);
  ok = ok && _fb_cuda_check (cu, cu->EventRecord (b, stream), error, "an event") &&
       elapsed (cu, a, b, &ms, error);
  if (ok)
    *gflops = 2.0 * GEMM_N * GEMM_N * (double) GEMM_N * GEMM_REPS / (ms * 1e-3) / 1e9;
  if (phase)
    _fb_cuda_lib_phase_free (&libs, phase);
  _fb_cuda_libs_clear (&libs);
  return ok;
}

gboolean
fb_cuda_measure_ceilings (double *gbps, double *gflops, GError **error)
{
  g_return_val_if_fail (gbps != NULL && gflops != NULL, FALSE);
  CUdevice dev;
  const FbCuDriver *cu = _fb_cuda_open_device (&dev, error);
  if (cu == NULL)
    return FALSE;
  char name[256] = "";
  cu->DeviceGetName (name, sizeof name, dev);
  if (cached (name, gbps, gflops))
    return TRUE;

  CUcontext ctx = NULL;
  CUstream stream = NULL;
  CUevent a = NULL, b = NULL;
  CUdeviceptr bufs[3] = { 0 };
  gboolean ok =
    _fb_cuda_check (cu, cu->DevicePrimaryCtxRetain (&ctx, dev), error, "the CUDA context") &&
    _fb_cuda_check (cu, cu->CtxSetCurrent (ctx), error, "the CUDA context") &&
    _fb_cuda_check (cu, cu->StreamCreate (&stream, FB_CU_STREAM_NON_BLOCKING), error, "a stream") &&
    _fb_cuda_check (cu, cu->EventCreate (&a, FB_CU_EVENT_DEFAULT), error, "an event") &&
    _fb_cuda_check (cu, cu->EventCreate (&b, FB_CU_EVENT_DEFAULT), error, "an event") &&
    measure (cu, stream, a, b, gbps, gflops, bufs, error);
  if (stream)
    cu->StreamSynchronize (stream);
  for (guint i = 0; i < G_N_ELEMENTS (bufs); i++)
    if (bufs[i])
      cu->MemFree (bufs[i]);
  if (a)
    cu->EventDestroy (a);
  if (b)
    cu->EventDestroy (b);
  if (stream)
    cu->StreamDestroy (stream);
  if (ctx)
    cu->DevicePrimaryCtxRelease (dev);
  if (ok)
    store (name, *gbps, *gflops);
  return ok;
}
