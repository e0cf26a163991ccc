/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The final stage of one run, lowered to kernels for one target, with the lowering stages of
 * each kernel (kernel IR, LLVM IR before and after optimization, x86-64 assembly for the cpu
 * target; PTX and its SASS for the cuda target) generated on first demand, all in worker
 * threads and through the compiler library only. The cuda target's stages need no GPU: they are
 * compiled, never run. One per final stage and target: a toggle that makes a new final stage
 * needs a new one, while a re-run that keeps the final stage keeps it and everything it has
 * generated.
 *
 * Threads: any number of requests may be in flight; the stage is lowered once, and each kernel's
 * stages are generated once (two requests for the same kernel at the same moment may both work,
 * one result is kept). What a request hands back stays valid for the life of the lowering. */
#pragma once

#include "fb-backend.h"
#include "fb-codegen.h"
#include "fb-pipeline.h"

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _FbLowering FbLowering;

/* One kernel and its stages; both borrowed from the lowering, immutable. */
typedef struct {
  const FbKernel       *kernel;
  const FbKernelStages *stages;
} FbLoweredKernel;

/* Takes a reference on final, the last stage of a run; target is a backend's name ("cpu",
 * "cuda"), NULL when this build has no such target. */
FbLowering *fb_lowering_new            (FbStage             *final,
                                        const char          *target);
FbLowering *fb_lowering_ref            (FbLowering          *lowering);
void        fb_lowering_unref          (FbLowering          *lowering);
FbStage    *fb_lowering_get_stage      (FbLowering          *lowering);
/* The backend's name ("cpu", "cuda"); static. */
const char *fb_lowering_get_target     (FbLowering          *lowering);
/* The target's backend (fb_backend_lookup of the target). */
const FbBackend *fb_lowering_get_backend (FbLowering       *lowering);
/* The plan once a request has lowered the stage, else NULL (also after a failed lowering);
 * never waits. */
FbPlan     *fb_lowering_peek_plan      (FbLowering          *lowering);
/* Lowers the stage (the first time) and generates the stages of every kernel that stands for
 * one of the final-stage nodes node_ids, in a worker thread; object is the task's source. */
void        fb_lowering_kernels_async  (FbLowering          *lowering,
                                        GObject             *object,
                                        const guint         *node_ids,
                                        guint                n_ids,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data);
/* FbLoweredKernel* (the array frees them) in run order; empty when no kernel stands for those
 * nodes (work done at compile time). NULL with an error that names the node when the stage could
 * not be lowered (FB_RUNTIME_ERROR_UNSUPPORTED, FB_LOWER_ERROR) or a kernel not compiled
 * (FB_CODEGEN_ERROR), or G_IO_ERROR_CANCELLED. */
GPtrArray  *fb_lowering_kernels_finish (GAsyncResult        *result,
                                        GError             **error);
/* In a worker: the stages of kernel, one of the lowered plan's, as the code view shows them
 * (generated now unless a request already did); borrowed from the lowering. NULL with an error
 * (FB_CODEGEN_ERROR) naming the kernel and its node. */
const FbKernelStages *fb_lowering_kernel_stages (FbLowering     *lowering,
                                                 const FbKernel *kernel,
                                                 GError        **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbLowering, fb_lowering_unref)

G_END_DECLS
