/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cuda target: a plan lowered for the GPU (fb_lower_graph with fb_cuda_target_desc), its
 * generated phases as PTX modules (fb-ptx.h), its contractions through cuDNN and cuBLASLt,
 * every buffer in one device arena laid out by the memory plan, the weights uploaded once,
 * and each run of device kernels between host steps (If, Loop) captured once as a CUDA graph
 * and replayed. Everything of CUDA is opened at run time (fb-cuda-api.h). */
#pragma once

#include "fb-backend.h"

G_BEGIN_DECLS

typedef struct _FbCudaModule FbCudaModule;

/* Launch data of one phase, as fb-ptx.h gives it (entry NULL: a library phase). */
typedef struct {
  char   *entry;
  guint   block_threads;
  guint   iters_per_block;
  guint   shared_bytes;
  guint   blocks_per_iter;     /* multiplies the grid */
} FbCudaPhase;

/* Per kernel of plan: its PTX text (NULL when it has no generated phase) and one FbCudaPhase
 * per phase (GArray). */
typedef struct {
  char   *ptx;
  GArray *phases;
} FbCudaKernelCode;

void          fb_cuda_kernel_code_free (FbCudaKernelCode *code);

/* A module on the first CUDA device that runs plan with code (one FbCudaKernelCode* per
 * kernel). NULL with FB_RUNTIME_ERROR_DEVICE when there is no driver, no device, or the device
 * refuses a module or memory. Takes a reference on plan. */
FbCudaModule *fb_cuda_module_new   (FbPlan *plan, GPtrArray *code, const FbBackendOptions *options,
                                    GError **error);
void          fb_cuda_module_free  (FbCudaModule *module);
FbPlan       *fb_cuda_module_plan  (FbCudaModule *module);
GPtrArray    *fb_cuda_module_run   (FbCudaModule *module, GPtrArray *inputs,
                                    GCancellable *cancellable, GError **error);
/* Runs n times, ms[i] the device time of run i between CUDA events (inputs uploaded before the
 * first, outputs read after the last). */
GPtrArray    *fb_cuda_module_run_timed (FbCudaModule *module, GPtrArray *inputs, guint n,
                                        double *ms, GError **error);
/* The same, calling mark (i, FALSE, data) just before run i is launched and mark (i, TRUE,
 * data) once it has finished: the profiler reads its clock there, so that a profiled inference
 * is timed exactly as `run --iterations` times an unprofiled one (replays only, no copies). */
GPtrArray    *fb_cuda_module_run_timed_marked (FbCudaModule *module, GPtrArray *inputs, guint n,
                                               double *ms, FbKernelHook mark, gpointer data,
                                               GError **error);
/* After a run (its inputs are on the device): n runs launched back to back between one pair of
 * CUDA events, *ms the whole. Each replay's launch then overlaps the replay before it, so a run
 * alone less *ms / n is what launching one adds where nothing hides it (the profiler's
 * untraced replay launch). */
gboolean      fb_cuda_module_time_back_to_back (FbCudaModule *module, guint n, double *ms,
                                                GError **error);
/* What the last run did: "graph replay of 3 segments, 2 host-device copies (602 KB up), ..." */
char         *fb_cuda_module_describe (FbCudaModule *module);

/* The device: "NVIDIA H200, sm_90, 132 SMs, driver 13.0" or NULL with the reason. */
char         *fb_cuda_device_describe (GError **error);

const FbBackend    *fb_backend_cuda     (void);
/* What lowering knows of the target: sm_90 PTX, cuDNN and cuBLASLt for contractions. */
const FbTargetDesc *fb_cuda_target_desc (void);
/* Lowering, PTX generation and loading in one step, as the backend's compile does. */
FbCudaModule *fb_cuda_compile      (const FbGraph *graph, const FbBackendOptions *options,
                                    GError **error);

/* Called on the launching thread just before (after = FALSE) and after the launches of each
 * kernel of the plan, when launching kernel by kernel (eager) and while a CUDA graph is
 * captured: the profiler tags the launches between the two calls with the kernel. NULL stops. */
void          fb_cuda_module_set_launch_hook (FbCudaModule *module, FbKernelHook hook,
                                              gpointer data);
/* Launches kernel by kernel from now on even where a CUDA graph was captured (FALSE: replay
 * the graphs again): the profiler tags one inference's launches this way with the very kernels
 * and library algorithms the graphs replay. */
void          fb_cuda_module_set_launch_eagerly (FbCudaModule *module, gboolean eagerly);
/* The module's CUDA context (a CUcontext), for CUPTI's range profiler. */
gpointer      fb_cuda_module_context (FbCudaModule *module);
/* The ceilings of device 0, measured once and cached per device under the user's cache folder
 * (cuda-ceilings.ini): a device-to-device copy in GB/s (bytes read plus written) and a large
 * TF32 matrix product through cuBLASLt in GFLOP/s. FALSE with the reason when they cannot be
 * measured (no device). */
gboolean      fb_cuda_measure_ceilings (double *gbps, double *gflops, GError **error);
/* The device's ordinal, for CUPTI. */
guint         fb_cuda_module_device_index (FbCudaModule *module);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbCudaModule, fb_cuda_module_free)

G_END_DECLS
