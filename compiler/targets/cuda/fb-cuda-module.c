/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cuda executor. Made once per plan: the primary context of device 0, one stream, one
 * arena for every intermediate buffer at the memory plan's offsets, one allocation per graph
 * input (so that addresses never change), the weights packed and uploaded once, each kernel's
 * PTX loaded as a module (its cubin from fb-cuda-cubin-cache.c's cache when an earlier run
 * compiled it on this device), each kernel's argument array (its buffers' device addresses)
 * on the device, the library phases made. Then the kernels are cut into segments at the host steps
 * (If, Loop, Scan: the reference interpreter runs them on copies of their buffers, fb-cpu-host.c),
 * and each device segment is captured once as a CUDA graph; a run uploads the inputs, replays
 * the segments in order (or, eager, launches kernel by kernel) and reads the outputs back.
 * Every host-device copy is counted. */
#include "fb-cuda-module-private.h"
#include "fb-ptx.h"

#include <string.h>

#define WEIGHT_ALIGN 256

static gboolean
cu_ok (FbCudaModule *m, CUresult r, GError **error, const char *what)
{
  return _fb_cuda_check (m->cu, r, error, "%s", what);
}

/* The driver, initialized, and device 0; FB_RUNTIME_ERROR_DEVICE when either is missing. */
const FbCuDriver *
_fb_cuda_open_device (CUdevice *device, GError **error)
{
  const FbCuDriver *cu = _fb_cuda_driver (error);
  if (cu == NULL)
    return NULL;
  CUresult r = cu->Init (0);
  int count = 0;
  if (r == FB_CUDA_ERROR_NO_DEVICE || (r == 0 && cu->DeviceGetCount (&count) == 0 && count == 0))
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE,
                   "the NVIDIA driver is here but sees no CUDA device");
      return NULL;
    }
  if (!_fb_cuda_check (cu, r, error, "the NVIDIA driver would not start") ||
      !_fb_cuda_check (cu, cu->DeviceGet (device, 0), error, "CUDA device 0"))
    return NULL;
  return cu;
}

char *
fb_cuda_device_describe (GError **error)
{
  CUdevice dev;
  const FbCuDriver *cu = _fb_cuda_open_device (&dev, error);
  if (cu == NULL)
    return NULL;
  char name[256] = "";
  int major = 0, minor = 0, sms = 0, version = 0;
  cu->DeviceGetName (name, sizeof name, dev);
  cu->DeviceGetAttribute (&major, FB_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cu->DeviceGetAttribute (&minor, FB_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  cu->DeviceGetAttribute (&sms, FB_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  cu->DriverGetVersion (&version);
  return g_strdup_printf ("%s, sm_%d%d, %d SMs, CUDA driver %d.%d", name, major, minor, sms,
                          version / 1000, version % 1000 / 10);
}

void
fb_cuda_kernel_code_free (FbCudaKernelCode *code)
{
  if (code == NULL)
    return;
  g_free (code->ptx);
  for (guint i = 0; code->phases && i < code->phases->len; i++)
    g_free (g_array_index (code->phases, FbCudaPhase, i).entry);
  g_clear_pointer (&code->phases, g_array_unref);
  g_free (code);
}

/* The driver's cubin of ptx, compiled through its linker so that the machine code can be kept
 * (a module made from PTX does not give its cubin back). Where the assembler kept to a
 * generated entry's register budget only by spilling (its verbose log says), the PTX is
 * compiled again without the budgets (fb_ptx_without_register_budget): the cubin kept under
 * ptx's key is the one loaded. Returns the CUresult; *log holds the driver's complaint on
 * failure. */
static CUresult
compile_ptx (FbCudaModule *m, const char *ptx, CUmodule *module, char *log, gsize log_size)
{
  char info[16384] = "";
  int options[] = { FB_CU_JIT_ERROR_LOG_BUFFER, FB_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                    FB_CU_JIT_INFO_LOG_BUFFER, FB_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                    FB_CU_JIT_LOG_VERBOSE };
  void *values[] = { log, (void *) log_size, info, (void *) sizeof info, (void *) 1 };
  gint64 start = g_get_monotonic_time ();
  g_autofree char *unbudgeted = NULL;
  CUlinkState link = NULL;
  CUresult r;
  void *cubin = NULL;
  size_t size = 0;
  for (const char *text = ptx; ; text = unbudgeted)
    {
      r = m->cu->LinkCreate (G_N_ELEMENTS (options), options, values, &link);
      if (r == 0)
        r = m->cu->LinkAddData (link, FB_CU_JIT_INPUT_PTX, (void *) text, strlen (text) + 1,
                                "kernel", 0, NULL, NULL);
      if (r == 0)
        r = m->cu->LinkComplete (link, &cubin, &size);
      if (r != 0 || unbudgeted != NULL || !fb_ptx_log_spills (info) ||
          strstr (ptx, ".maxnreg") == NULL)
        break;
      m->cubins.unbudgeted++;
      m->cu->LinkDestroy (link);
      link = NULL;
      unbudgeted = fb_ptx_without_register_budget (ptx);
      info[0] = '\0';
    }
  if (r == 0)
    r = m->cu->ModuleLoadDataEx (module, cubin, 0, NULL, NULL);
  m->cubins.compile_ms += (g_get_monotonic_time () - start) / 1000.0;
  if (r == 0)
    {
      m->cubins.compiled++;
      fb_cubin_cache_store (&m->cubins, ptx, cubin, size);
    }
  if (link)
    m->cu->LinkDestroy (link);   /* owns cubin */
  return r;
}

/* ptx's module: from the cubin cache when the driver takes the file, else compiled. */
static CUresult
module_for_ptx (FbCudaModule *m, const char *ptx, CUmodule *module, char *log, gsize log_size)
{
  g_autoptr(GBytes) cached = fb_cubin_cache_lookup (&m->cubins, ptx);
  if (cached)
    {
      if (m->cu->ModuleLoadDataEx (module, g_bytes_get_data (cached, NULL), 0, NULL, NULL) == 0)
        {
          m->cubins.hits++;
          return 0;
        }
      m->cubins.refused++;
    }
  return compile_ptx (m, ptx, module, log, log_size);
}

static gboolean
load_module (FbCudaModule *m, ExecKernel *e, const FbCudaKernelCode *code, GError **error)
{
  CUmodule module = g_hash_table_lookup (m->modules, code->ptx);
  if (module == NULL)
    {
      char log[8192] = "";
      CUresult r = module_for_ptx (m, code->ptx, &module, log, sizeof log);
      if (r != 0)
        {
          g_autofree char *text = _fb_cuda_result_text (m->cu, r);
          g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE,
                       "kernel %s (node '%s'): the driver refused its PTX: %s%s%s", e->kernel->name,
                       e->kernel->node ? e->kernel->node->name : "?", text, *log ? ": " : "", log);
          return FALSE;
        }
      g_hash_table_insert (m->modules, code->ptx, module);
    }
  for (guint p = 0; p < e->kernel->phases->len; p++)
    {
      const FbCudaPhase *cp = &g_array_index (code->phases, FbCudaPhase, p);
      ExecPhase *ep = &e->phases[p];
      if (cp->entry == NULL)
        continue;
      if (!_fb_cuda_check (m->cu, m->cu->ModuleGetFunction (&ep->fn, module, cp->entry), error,
                           "kernel %s: entry %s", e->kernel->name, cp->entry))
        return FALSE;
      ep->block_threads = MAX (cp->block_threads, 1);
      ep->iters_per_block = MAX (cp->iters_per_block, 1);
      ep->shared_bytes = cp->shared_bytes;
      ep->blocks_per_iter = MAX (cp->blocks_per_iter, 1);
      if (cp->shared_bytes > 48 * 1024 &&
          !_fb_cuda_check (m->cu, m->cu->FuncSetAttribute (ep->fn,
                                                           FB_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                           cp->shared_bytes), error,
                           "kernel %s: %u bytes of shared memory", e->kernel->name, cp->shared_bytes))
        return FALSE;
    }
  return TRUE;
}

/* Device memory: the arena, the inputs, the weights; every buffer's address. */
static gboolean
place_buffers (FbCudaModule *m, GError **error)
{
  FbPlan *plan = m->plan;
  if (plan->arena_bytes > 0 &&
      !_fb_cuda_check (m->cu, m->cu->MemAlloc (&m->arena, plan->arena_bytes), error,
                       "the %" G_GINT64_FORMAT "-byte activation arena", plan->arena_bytes))
    return FALSE;
  m->host_arena = g_malloc0 (MAX (plan->arena_bytes, 1));
  int64_t wbytes = 0;
  g_autofree int64_t *woff = g_new0 (int64_t, plan->buffers->len + 1);
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      FbBuffer *b = fb_plan_buffer (plan, i);
      woff[i] = -1;
      if (b->kind == FB_BUF_CONST && b->constant && b->alias < 0)
        {
          wbytes = (wbytes + WEIGHT_ALIGN - 1) / WEIGHT_ALIGN * WEIGHT_ALIGN;
          woff[i] = wbytes;
          wbytes += MAX (fb_tensor_nbytes (b->constant), 1);
        }
    }
  if (wbytes > 0)
    {
      g_autofree guint8 *packed = g_malloc0 (wbytes);
      for (guint i = 0; i < plan->buffers->len; i++)
        if (woff[i] >= 0)
          {
            FbBuffer *b = fb_plan_buffer (plan, i);
            memcpy (packed + woff[i], fb_tensor_data (b->constant), fb_tensor_nbytes (b->constant));
          }
      if (!_fb_cuda_check (m->cu, m->cu->MemAlloc (&m->weights, wbytes), error,
                           "%" G_GINT64_FORMAT " bytes of weights", wbytes) ||
          !_fb_cuda_check (m->cu, m->cu->MemcpyHtoD (m->weights, packed, wbytes), error,
                           "uploading the weights"))
        return FALSE;
      m->weights_bytes = wbytes;
      m->up_copies++;
      m->up_bytes += wbytes;
    }
  m->inputs_dev = g_new0 (CUdeviceptr, plan->inputs->len + 1);
  for (guint i = 0; i < plan->inputs->len; i++)
    {
      guint b = g_array_index (plan->inputs, guint, i);
      FbBuffer *buf = fb_plan_buffer (plan, b);
      if (buf->kind == FB_BUF_CONST || m->bufptr[b] != 0)
        continue;
      if (!_fb_cuda_check (m->cu, m->cu->MemAlloc (&m->inputs_dev[i], MAX (buf->nbytes, 4)), error,
                           "input '%s'", buf->name))
        return FALSE;
      m->bufptr[b] = m->inputs_dev[i];
      m->host_ptr[b] = g_malloc0 (MAX (buf->nbytes, 1));
    }
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      FbBuffer *b = fb_plan_buffer (plan, i);
      if (woff[i] >= 0)
        {
          m->bufptr[i] = m->weights + woff[i];
          m->host_ptr[i] = (void *) fb_tensor_data (b->constant);
        }
      else if (b->alias < 0 && b->offset >= 0 && !b->dynamic)
        {
          m->bufptr[i] = m->arena + b->offset;
          m->host_ptr[i] = m->host_arena + b->offset;
        }
    }
  return TRUE;
}

/* Whether addr lies in the weights (constants, which a library phase may reorder once). */
static gboolean
is_weight (const FbCudaModule *m, CUdeviceptr addr)
{
  return m->weights != 0 && addr >= m->weights && addr < m->weights + m->weights_bytes;
}

static gboolean
bind_kernels (FbCudaModule *m, GPtrArray *code, GError **error)
{
  FbPlan *plan = m->plan;
  guint n_args = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    n_args += ((FbKernel *) g_ptr_array_index (plan->kernels, k))->args->len;
  g_autofree CUdeviceptr *all = g_new0 (CUdeviceptr, MAX (n_args, 1));
  if (!_fb_cuda_check (m->cu, m->cu->MemAlloc (&m->arg_block, MAX (n_args, 1) * sizeof (CUdeviceptr)),
                       error, "kernel arguments"))
    return FALSE;
  guint at = 0;
  m->exec = g_new0 (ExecKernel, plan->kernels->len + 1);
  size_t workspace = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      ExecKernel *e = &m->exec[k];
      e->kernel = g_ptr_array_index (plan->kernels, k);
      e->args = m->arg_block + at * sizeof (CUdeviceptr);
      for (guint a = 0; a < e->kernel->args->len; a++)
        all[at + a] = m->bufptr[fb_plan_root (plan, g_array_index (e->kernel->args, FbKArg, a).buffer)];
      e->phases = g_new0 (ExecPhase, e->kernel->phases->len + 1);
      const FbCudaKernelCode *kc = k < code->len ? g_ptr_array_index (code, k) : NULL;
      if (e->kernel->kind != FB_KERNEL_HOST && kc && kc->ptx && !load_module (m, e, kc, error))
        return FALSE;
      for (guint p = 0; e->kernel->kind != FB_KERNEL_HOST && p < e->kernel->phases->len; p++)
        {
          const FbKPhase *ph = g_ptr_array_index (e->kernel->phases, p);
          ExecPhase *ep = &e->phases[p];
          if (ph->conv)
            {
              const FbKConv *cv = ph->conv;
              const CUdeviceptr *ka = &all[at];
              /* A product of a broadcast batch starts inside its operands. */
              gboolean gemm = cv->lib == FB_KLIB_GEMM;
              ep->lib = _fb_cuda_lib_phase_new (&m->libs, cv,
                                                ka[cv->x] + (gemm ? cv->gemm.off_a * 4 : 0),
                                                ka[cv->w] + (gemm ? cv->gemm.off_b * 4 : 0),
                                                cv->bias != FB_KCONV_NO_ARG ? ka[cv->bias] : 0,
                                                cv->add != FB_KCONV_NO_ARG
                                                  ? ka[cv->add] + (gemm ? cv->gemm.off_c * 4 : 0) : 0,
                                                ka[cv->y] + (gemm ? cv->gemm.off_c * 4 : 0),
                                                is_weight (m, ka[cv->w]), e->kernel->name, error);
              if (ep->lib == NULL)
                return FALSE;
              workspace = MAX (workspace, _fb_cuda_lib_phase_workspace (ep->lib));
            }
          else if (ep->fn == NULL && ph->extent > 0)
            {
              g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                           "kernel %s (node '%s'): phase %u has no PTX entry", e->kernel->name,
                           e->kernel->node ? e->kernel->node->name : "?", p);
              return FALSE;
            }
        }
      at += e->kernel->args->len;
    }
  if (!_fb_cuda_check (m->cu, m->cu->MemcpyHtoD (m->arg_block, all, MAX (n_args, 1) * sizeof (CUdeviceptr)),
                       error, "kernel arguments"))
    return FALSE;
  if (workspace > 0)
    {
      if (!_fb_cuda_check (m->cu, m->cu->MemAlloc (&m->libs.workspace, workspace), error,
                           "a %zu-byte library workspace", workspace))
        return FALSE;
      m->libs.workspace_bytes = workspace;
    }
  return TRUE;
}

static gboolean
launch_kernel (FbCudaModule *m, ExecKernel *e, GError **error)
{
  for (guint p = 0; p < e->kernel->phases->len; p++)
    {
      const FbKPhase *ph = g_ptr_array_index (e->kernel->phases, p);
      ExecPhase *ep = &e->phases[p];
      if (ep->lib)
        {
          if (!_fb_cuda_lib_phase_run (&m->libs, ep->lib, error))
            return FALSE;
          continue;
        }
      if (ph->extent <= 0)
        continue;
      int64_t begin = 0, end = ph->extent;
      /* The entries loop over the grid: a grid capped at what one launch holds is still right. */
      int64_t blocks = (ph->extent + ep->iters_per_block - 1) / ep->iters_per_block;
      blocks = blocks > G_MAXINT32 / (int64_t) ep->blocks_per_iter ? G_MAXINT32
                                                                   : blocks * ep->blocks_per_iter;
      void *params[] = { &e->args, &begin, &end };
      if (!_fb_cuda_check (m->cu, m->cu->LaunchKernel (ep->fn, (unsigned) blocks, 1, 1,
                                                       ep->block_threads, 1, 1, ep->shared_bytes,
                                                       m->libs.stream, params, NULL),
                           error, "kernel %s (node '%s'): launch", e->kernel->name,
                           e->kernel->node ? e->kernel->node->name : "?"))
        return FALSE;
    }
  return TRUE;
}

gboolean
_fb_cuda_launch_range (FbCudaModule *m, guint first, guint end, GError **error)
{
  for (guint k = first; k < end; k++)
    {
      if (m->launch_hook)
        m->launch_hook (k, FALSE, m->launch_hook_data);
      gboolean ok = launch_kernel (m, &m->exec[k], error);
      if (m->launch_hook)
        m->launch_hook (k, TRUE, m->launch_hook_data);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

void
fb_cuda_module_set_launch_hook (FbCudaModule *m, FbKernelHook hook, gpointer data)
{
  g_return_if_fail (m != NULL);
  m->launch_hook = hook;
  m->launch_hook_data = data;
}

void
fb_cuda_module_set_launch_eagerly (FbCudaModule *m, gboolean eagerly)
{
  g_return_if_fail (m != NULL);
  m->launch_eagerly = eagerly;
}

gpointer
fb_cuda_module_context (FbCudaModule *m)
{
  g_return_val_if_fail (m != NULL, NULL);
  return m->ctx;
}

guint
fb_cuda_module_device_index (FbCudaModule *m)
{
  g_return_val_if_fail (m != NULL, 0);
  return (guint) m->device;
}

/* Segments: maximal runs of device kernels, and each host kernel alone. */
static gboolean
make_segments (FbCudaModule *m, GError **error)
{
  FbPlan *plan = m->plan;
  m->segments = g_array_new (FALSE, TRUE, sizeof (Segment));
  for (guint k = 0; k < plan->kernels->len;)
    {
      Segment s = { .first = k };
      if (((FbKernel *) g_ptr_array_index (plan->kernels, k))->kind == FB_KERNEL_HOST)
        {
          s.host = TRUE;
          m->has_host = TRUE;
          s.end = ++k;
        }
      else
        {
          while (k < plan->kernels->len &&
                 ((FbKernel *) g_ptr_array_index (plan->kernels, k))->kind != FB_KERNEL_HOST)
            k++;
          s.end = k;
        }
      g_array_append_val (m->segments, s);
    }
  if (m->eager)
    return TRUE;
  for (guint i = 0; i < m->segments->len; i++)
    {
      Segment *s = &g_array_index (m->segments, Segment, i);
      CUgraph graph = NULL;
      if (s->host)
        continue;
      if (!cu_ok (m, m->cu->StreamBeginCapture (m->libs.stream, FB_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                  error, "starting the CUDA graph capture"))
        return FALSE;
      gboolean launched = _fb_cuda_launch_range (m, s->first, s->end, error);
      CUresult r = m->cu->StreamEndCapture (m->libs.stream, &graph);
      if (!launched)
        {
          if (graph)
            m->cu->GraphDestroy (graph);
          return FALSE;
        }
      if (!cu_ok (m, r, error, "capturing the CUDA graph"))
        return FALSE;
      r = m->cu->GraphInstantiateWithFlags (&s->graph, graph, 0);
      m->cu->GraphDestroy (graph);
      if (!cu_ok (m, r, error, "instantiating the CUDA graph"))
        return FALSE;
    }
  return TRUE;
}

FbCudaModule *
fb_cuda_module_new (FbPlan *plan, GPtrArray *code, const FbBackendOptions *options,
                    GError **error)
{
  g_return_val_if_fail (plan != NULL && code != NULL, NULL);
  g_autoptr(FbCudaModule) m = g_new0 (FbCudaModule, 1);
  m->plan = fb_plan_ref (plan);
  m->eager = options && options->eager;
  m->libs.strict_float32 = options && options->strict_float32;
  m->libs.tf32_matmul = options && options->tf32_matmul;
  m->bufptr = g_new0 (CUdeviceptr, plan->buffers->len + 1);
  m->host_ptr = g_new0 (void *, plan->buffers->len + 1);
  m->dynamic = g_new0 (FbTensor *, plan->buffers->len + 1);
  m->modules = g_hash_table_new (g_str_hash, g_str_equal);
  if ((m->cu = _fb_cuda_open_device (&m->device, error)) == NULL)
    return NULL;
  g_autofree char *device_tag = fb_cuda_device_describe (error);
  if (device_tag == NULL)
    return NULL;
  /* How a cubin was made is part of its key: cubins kept before budgets that spill were
   * dropped (compile_ptx) must not be loaded for the same PTX. */
  g_autofree char *cubin_tag = g_strconcat (device_tag, "; spilling register budgets dropped", NULL);
  fb_cubin_cache_init (&m->cubins, cubin_tag);
  m->libs.cu = m->cu;
  m->libs.device_tag = g_strdup (device_tag);
  if (!cu_ok (m, m->cu->DevicePrimaryCtxRetain (&m->ctx, m->device), error, "the CUDA context") ||
      !cu_ok (m, m->cu->CtxSetCurrent (m->ctx), error, "the CUDA context") ||
      !cu_ok (m, m->cu->StreamCreate (&m->libs.stream, FB_CU_STREAM_NON_BLOCKING), error,
              "a CUDA stream") ||
      !cu_ok (m, m->cu->EventCreate (&m->ev_start, FB_CU_EVENT_DEFAULT), error, "a CUDA event") ||
      !cu_ok (m, m->cu->EventCreate (&m->ev_end, FB_CU_EVENT_DEFAULT), error, "a CUDA event"))
    return NULL;
  if (!place_buffers (m, error) || !bind_kernels (m, code, error) ||
      !cu_ok (m, m->cu->StreamSynchronize (m->libs.stream), error, "preparing the library phases") ||
      !make_segments (m, error))
    return NULL;
  _fb_cuda_timing_cache_save (&m->libs);
  return g_steal_pointer (&m);
}

void
fb_cuda_module_free (FbCudaModule *m)
{
  if (m == NULL)
    return;
  if (m->cu && m->ctx)
    {
      m->cu->CtxSetCurrent (m->ctx);
      if (m->libs.stream)
        m->cu->StreamSynchronize (m->libs.stream);
      for (guint i = 0; m->segments && i < m->segments->len; i++)
        if (g_array_index (m->segments, Segment, i).graph)
          m->cu->GraphExecDestroy (g_array_index (m->segments, Segment, i).graph);
      for (guint k = 0; m->exec && k < m->plan->kernels->len; k++)
        {
          for (guint p = 0; m->exec[k].phases && p < m->exec[k].kernel->phases->len; p++)
            _fb_cuda_lib_phase_free (&m->libs, m->exec[k].phases[p].lib);
          g_free (m->exec[k].phases);
        }
      _fb_cuda_libs_clear (&m->libs);
      GHashTableIter it;
      gpointer key, value;
      g_hash_table_iter_init (&it, m->modules);
      while (g_hash_table_iter_next (&it, &key, &value))
        m->cu->ModuleUnload (value);
      for (guint i = 0; m->inputs_dev && i < m->plan->inputs->len; i++)
        if (m->inputs_dev[i])
          m->cu->MemFree (m->inputs_dev[i]);
      if (m->arena)
        m->cu->MemFree (m->arena);
      if (m->weights)
        m->cu->MemFree (m->weights);
      if (m->arg_block)
        m->cu->MemFree (m->arg_block);
      if (m->ev_start)
        m->cu->EventDestroy (m->ev_start);
      if (m->ev_end)
        m->cu->EventDestroy (m->ev_end);
      if (m->libs.stream)
        m->cu->StreamDestroy (m->libs.stream);
      m->cu->DevicePrimaryCtxRelease (m->device);
    }
  for (guint i = 0; m->inputs_dev && i < m->plan->inputs->len; i++)
    if (m->inputs_dev[i])
      g_free (m->host_ptr[g_array_index (m->plan->inputs, guint, i)]);
  g_clear_pointer (&m->segments, g_array_unref);
  g_clear_pointer (&m->modules, g_hash_table_unref);
  fb_cubin_cache_clear (&m->cubins);
  for (guint i = 0; m->dynamic && i < m->plan->buffers->len; i++)
    g_clear_pointer (&m->dynamic[i], fb_tensor_unref);
  g_free (m->dynamic);
  g_free (m->exec);
  g_free (m->inputs_dev);
  g_free (m->bufptr);
  g_free (m->host_ptr);
  g_free (m->host_arena);
  g_clear_pointer (&m->plan, fb_plan_unref);
  g_free (m);
}

FbPlan *
fb_cuda_module_plan (FbCudaModule *m)
{
  g_return_val_if_fail (m != NULL, NULL);
  return m->plan;
}
