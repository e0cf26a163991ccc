/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Records the CUPTI fixture the suite replays (tests/fixtures/cupti-probe.*), on a machine with
 * an NVIDIA GPU: a small plan of eight kernels run five times launched one by one, each launch
 * tagged with its kernel as the CUDA runtime tags them, then five times replayed as a CUDA
 * graph. It writes the raw records (fb_cupti_set_record_path) and, beside them, the interval of
 * every inference on CUPTI's clock, so the suite checks parsing, owners, graph matching and
 * the diagnosis on what a real GPU did.
 *
 *   record-cupti-fixture OUT_PREFIX      writes OUT_PREFIX.records and OUT_PREFIX.windows */
#include "fb-cupti-counters.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

/* Two kernels written directly in PTX (this tool must not need our code generator). */
static const char ptx[] =
  ".version 8.0\n"
  ".target sm_90\n"
  ".address_size 64\n"
  ".visible .entry fb_probe_scale(.param .u64 px, .param .u64 py, .param .u32 pn)\n"
  "{\n"
  "  .reg .pred p; .reg .b32 r<6>; .reg .b64 rd<8>; .reg .f32 f<4>;\n"
  "  ld.param.u64 rd1, [px]; ld.param.u64 rd2, [py]; ld.param.u32 r1, [pn];\n"
  "  mov.u32 r2, %ctaid.x; mov.u32 r3, %ntid.x; mov.u32 r4, %tid.x;\n"
  "  mad.lo.s32 r5, r2, r3, r4; setp.ge.u32 p, r5, r1; @p bra DONE;\n"
  "  cvta.to.global.u64 rd3, rd1; cvta.to.global.u64 rd4, rd2; mul.wide.u32 rd5, r5, 4;\n"
  "  add.s64 rd6, rd3, rd5; add.s64 rd7, rd4, rd5; ld.global.f32 f1, [rd6];\n"
  "  mul.f32 f2, f1, 0f3F000000; st.global.f32 [rd7], f2;\n"
  "DONE:\n"
  "  ret;\n"
  "}\n"
  ".visible .entry fb_probe_add(.param .u64 px, .param .u64 py, .param .u32 pn)\n"
  "{\n"
  "  .reg .pred p; .reg .b32 r<6>; .reg .b64 rd<8>; .reg .f32 f<4>;\n"
  "  ld.param.u64 rd1, [px]; ld.param.u64 rd2, [py]; ld.param.u32 r1, [pn];\n"
  "  mov.u32 r2, %ctaid.x; mov.u32 r3, %ntid.x; mov.u32 r4, %tid.x;\n"
  "  mad.lo.s32 r5, r2, r3, r4; setp.ge.u32 p, r5, r1; @p bra DONE;\n"
  "  cvta.to.global.u64 rd3, rd1; cvta.to.global.u64 rd4, rd2; mul.wide.u32 rd5, r5, 4;\n"
  "  add.s64 rd6, rd3, rd5; add.s64 rd7, rd4, rd5; ld.global.f32 f1, [rd6];\n"
  "  ld.global.f32 f2, [rd7]; add.f32 f3, f1, f2; st.global.f32 [rd7], f3;\n"
  "DONE:\n"
  "  ret;\n"
  "}\n";

#define N_KERNELS 8
#define N_RUNS 5
#define N_ELEMENTS (1 << 16)
#define N_LARGE (1u << 24)

typedef struct {
  __typeof__ (cuInit) *init;
  __typeof__ (cuDeviceGet) *device_get;
  __typeof__ (cuDevicePrimaryCtxRetain) *primary_ctx;
  __typeof__ (cuCtxSetCurrent) *ctx_set;
  __typeof__ (cuModuleLoadData) *module_load;
  __typeof__ (cuModuleGetFunction) *get_function;
  __typeof__ (cuMemAlloc) *mem_alloc;
  __typeof__ (cuMemcpyHtoD) *htod;
  __typeof__ (cuMemcpyDtoH) *dtoh;
  __typeof__ (cuLaunchKernel) *launch;
  __typeof__ (cuCtxSynchronize) *sync;
  __typeof__ (cuStreamCreate) *stream_create;
  __typeof__ (cuStreamBeginCapture) *begin_capture;
  __typeof__ (cuStreamEndCapture) *end_capture;
  __typeof__ (cuGraphInstantiateWithFlags) *instantiate;
  __typeof__ (cuGraphLaunch) *graph_launch;
  __typeof__ (cuStreamSynchronize) *stream_sync;
} Driver;

static gboolean
load_driver (Driver *d)
{
  void *lib = dlopen ("libcuda.so.1", RTLD_NOW);
  if (lib == NULL)
    {
      fprintf (stderr, "record-cupti-fixture: no CUDA driver: %s\n", dlerror ());
      return FALSE;
    }
  struct { const char *name; void **slot; } syms[] = {
    { "cuInit", (void **) &d->init }, { "cuDeviceGet", (void **) &d->device_get },
    { "cuDevicePrimaryCtxRetain", (void **) &d->primary_ctx },
    { "cuCtxSetCurrent", (void **) &d->ctx_set }, { "cuModuleLoadData", (void **) &d->module_load },
    { "cuModuleGetFunction", (void **) &d->get_function },
    { "cuMemAlloc_v2", (void **) &d->mem_alloc }, { "cuMemcpyHtoD_v2", (void **) &d->htod },
    { "cuMemcpyDtoH_v2", (void **) &d->dtoh }, { "cuLaunchKernel", (void **) &d->launch },
    { "cuCtxSynchronize", (void **) &d->sync }, { "cuStreamCreate", (void **) &d->stream_create },
    { "cuStreamBeginCapture_v2", (void **) &d->begin_capture },
    { "cuStreamEndCapture", (void **) &d->end_capture },
    { "cuGraphInstantiateWithFlags", (void **) &d->instantiate },
    { "cuGraphLaunch", (void **) &d->graph_launch },
    { "cuStreamSynchronize", (void **) &d->stream_sync },
  };
  for (guint i = 0; i < G_N_ELEMENTS (syms); i++)
    if ((*syms[i].slot = dlsym (lib, syms[i].name)) == NULL)
      {
        fprintf (stderr, "record-cupti-fixture: the driver lacks %s\n", syms[i].name);
        return FALSE;
      }
  return TRUE;
}

#define CHECK(call)                                                                   \
  do {                                                                                \
    CUresult r_ = (call);                                                             \
    if (r_ != CUDA_SUCCESS)                                                           \
      {                                                                               \
        fprintf (stderr, "record-cupti-fixture: %s failed: %d\n", #call, (int) r_);   \
        return 1;                                                                     \
      }                                                                               \
  } while (0)

/* The plan: eight kernels, alternating the two functions, over two buffers. */
static int
launch_plan (Driver *d, FbCupti *cupti, CUfunction *fn, CUdeviceptr x, CUdeviceptr y,
             unsigned n, CUstream stream)
{
  void *params[] = { &x, &y, &n };
  for (guint k = 0; k < N_KERNELS; k++)
    {
      if (cupti)
        fb_cupti_push_owner (cupti, k + 1);
      CUresult r = d->launch (fn[k % 2], n / 256, 1, 1, 256, 1, 1, 0, stream, params, NULL);
      if (cupti)
        fb_cupti_pop_owner (cupti);
      if (r != CUDA_SUCCESS)
        {
          fprintf (stderr, "record-cupti-fixture: launch %u failed: %d\n", k, (int) r);
          return 1;
        }
    }
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: record-cupti-fixture OUT_PREFIX\n");
      return 2;
    }
  g_autoptr(GError) error = NULL;
  FbCupti *cupti = fb_cupti_start (&error);
  if (cupti == NULL)
    {
      fprintf (stderr, "record-cupti-fixture: %s\n", error->message);
      return 1;
    }

  Driver d;
  if (!load_driver (&d))
    return 1;
  CUdevice dev;
  CUcontext ctx;
  CUmodule module;
  CUfunction fn[2];
  CUdeviceptr x, y;
  CUstream stream;
  CHECK (d.init (0));
  CHECK (d.device_get (&dev, 0));
  CHECK (d.primary_ctx (&ctx, dev));
  CHECK (d.ctx_set (ctx));
  CHECK (d.module_load (&module, ptx));
  CHECK (d.get_function (&fn[0], module, "fb_probe_scale"));
  CHECK (d.get_function (&fn[1], module, "fb_probe_add"));
  CHECK (d.mem_alloc (&x, N_ELEMENTS * sizeof (float)));
  CHECK (d.mem_alloc (&y, N_ELEMENTS * sizeof (float)));
  CHECK (d.stream_create (&stream, 0));
  g_autofree float *host = g_new0 (float, N_ELEMENTS);
  for (guint i = 0; i < N_ELEMENTS; i++)
    host[i] = (float) i / N_ELEMENTS;

  g_autoptr(GString) windows = g_string_new (NULL);
  /* A warm-up run keeps module loading out of the recorded inferences. */
  if (launch_plan (&d, cupti, fn, x, y, N_ELEMENTS, stream) != 0)
    return 1;
  CHECK (d.sync ());
  g_autoptr(GArray) warm = fb_cupti_take (cupti, NULL, &error);
  if (warm == NULL)
    {
      fprintf (stderr, "record-cupti-fixture: %s\n", error->message);
      return 1;
    }
  /* Only what comes after the warm-up is saved. */
  g_autofree char *records = g_strconcat (argv[1], ".records", NULL);
  fb_cupti_set_record_path (cupti, records);

  for (guint run = 0; run < N_RUNS; run++)
    {
      guint64 begin = fb_cupti_timestamp (cupti);
      CHECK (d.htod (x, host, N_ELEMENTS * sizeof (float)));
      if (launch_plan (&d, cupti, fn, x, y, N_ELEMENTS, stream) != 0)
        return 1;
      CHECK (d.dtoh (host, y, N_ELEMENTS * sizeof (float)));
      CHECK (d.sync ());
      g_string_append_printf (windows, "eager %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n",
                              begin, fb_cupti_timestamp (cupti));
    }

  CUgraph graph;
  CUgraphExec exec;
  CHECK (d.begin_capture (stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  if (launch_plan (&d, cupti, fn, x, y, N_ELEMENTS, stream) != 0)
    return 1;
  CHECK (d.end_capture (stream, &graph));
  CHECK (d.instantiate (&exec, graph, 0));
  for (guint run = 0; run < N_RUNS; run++)
    {
      guint64 begin = fb_cupti_timestamp (cupti);
      CHECK (d.graph_launch (exec, stream));
      CHECK (d.stream_sync (stream));
      g_string_append_printf (windows, "graph %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n",
                              begin, fb_cupti_timestamp (cupti));
    }

  guint dropped = 0;
  g_autoptr(GArray) acts = fb_cupti_take (cupti, &dropped, &error);
  fb_cupti_stop (cupti);
  if (acts == NULL)
    {
      fprintf (stderr, "record-cupti-fixture: %s\n", error->message);
      return 1;
    }
  g_autofree char *windows_path = g_strconcat (argv[1], ".windows", NULL);
  if (!g_file_set_contents (windows_path, windows->str, -1, &error))
    {
      fprintf (stderr, "record-cupti-fixture: %s\n", error->message);
      return 1;
    }
  /* Counters: one pass of the plan over buffers larger than the L2 cache (50 MB on an H200),
   * so that each kernel's DRAM bytes are the bytes it must move: 64 MiB read and written by
   * each scale, 128 MiB read and 64 MiB written by each add. */
  CUdeviceptr bx, by;
  CHECK (d.mem_alloc (&bx, N_LARGE * sizeof (float)));
  CHECK (d.mem_alloc (&by, N_LARGE * sizeof (float)));
  FbCuptiCounters *counters = fb_cupti_counters_start (ctx, 0, N_KERNELS, &error);
  if (counters == NULL)
    {
      fprintf (stderr, "record-cupti-fixture: %s\n", error->message);
      return 1;
    }
  int more;
  do
    {
      if (launch_plan (&d, NULL, fn, bx, by, N_LARGE, stream) != 0)
        return 1;
      CHECK (d.sync ());
      more = fb_cupti_counters_end_pass (counters, &error);
      if (more < 0)
        {
          fprintf (stderr, "record-cupti-fixture: %s\n", error->message);
          return 1;
        }
    }
  while (more > 0);
  g_autofree char *counters_path = g_strconcat (argv[1], ".counters", NULL);
  g_autoptr(GArray) ranges = fb_cupti_counters_stop (counters, counters_path, &error);
  if (ranges == NULL)
    {
      fprintf (stderr, "record-cupti-fixture: %s\n", error->message);
      return 1;
    }
  for (guint i = 0; i < ranges->len; i++)
    {
      const FbGpuCounters *k = &g_array_index (ranges, FbGpuCounters, i);
      printf ("range %u %s: read %.0f written %.0f bytes, %.0f ns, SM %.1f %%\n", i, k->range,
              k->dram_read_bytes, k->dram_write_bytes, k->duration_ns, 100 * k->sm_throughput);
    }

  printf ("recorded %u runs launched one by one and %u graph replays: %u activities, %u "
          "records dropped\n", N_RUNS, N_RUNS, acts->len, dropped);
  return 0;
}
