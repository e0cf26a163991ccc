/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cuda module's state, shared by fb-cuda-module.c (making it) and fb-cuda-run.c (running
 * it). Only those two include this header. */
#pragma once

#include "fb-cuda-private.h"
#include "fb-cuda-cubin-cache.h"

G_BEGIN_DECLS

typedef struct {
  CUfunction      fn;           /* NULL for a library phase */
  FbCudaLibPhase *lib;
  guint           block_threads, iters_per_block, shared_bytes, blocks_per_iter;
} ExecPhase;

typedef struct {
  FbKernel    *kernel;
  CUdeviceptr  args;            /* device array of the arguments' addresses */
  ExecPhase   *phases;
} ExecKernel;

typedef struct {
  guint        first, end;      /* kernels [first, end) */
  gboolean     host;            /* one host kernel */
  CUgraphExec  graph;           /* captured device segment (NULL when eager) */
} Segment;

struct _FbCudaModule {
  FbPlan        *plan;
  const FbCuDriver *cu;
  CUdevice       device;
  CUcontext      ctx;
  FbCudaLibs     libs;
  CUdeviceptr    arena, weights, arg_block;
  gsize          weights_bytes;
  CUdeviceptr   *inputs_dev;    /* per graph input */
  CUdeviceptr   *bufptr;        /* per buffer: its device address (0: none or host only) */
  guint8        *host_arena;    /* host copies for host steps, laid out like the device's */
  void         **host_ptr;      /* per buffer: its host copy's address */
  FbTensor     **dynamic;
  GHashTable    *modules;       /* PTX text -> CUmodule */
  FbCubinCache   cubins;        /* the driver's cubins of earlier runs */
  ExecKernel    *exec;
  GArray        *segments;      /* Segment */
  gboolean       eager;
  gboolean       launch_eagerly;/* launch kernel by kernel even where a graph was captured */
  gboolean       has_host;      /* the plan has host steps */
  CUevent        ev_start, ev_end;
  guint64        up_bytes, down_bytes;
  guint          up_copies, down_copies;
  FbKernelHook launch_hook; /* the profiler's, or NULL */
  gpointer       launch_hook_data;
};

gboolean _fb_cuda_launch_range (FbCudaModule *m, guint first, guint end, GError **error);

G_END_DECLS
