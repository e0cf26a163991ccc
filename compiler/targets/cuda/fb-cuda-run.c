/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Running a cuda module: inputs up, the segments replayed (or launched kernel by kernel), host
 * steps between them on host copies of their buffers, outputs down. */
#include "fb-cuda-module-private.h"
#include "fb-host-kernel.h"
#include "fb-plan-inputs.h"

#include <stdlib.h>
#include <string.h>

static gboolean
upload_inputs (FbCudaModule *m, GPtrArray *inputs, GError **error)
{
  FbPlan *plan = m->plan;
  for (guint i = 0; i < inputs->len; i++)
    {
      if (m->inputs_dev[i] == 0)
        continue;
      guint b = g_array_index (plan->inputs, guint, i);
      const FbBuffer *buf = fb_plan_buffer (plan, b);
      FbTensor *t = g_ptr_array_index (inputs, i);
      if (buf->nbytes == 0)
        continue;
      if (m->has_host)
        memcpy (m->host_ptr[b], fb_tensor_data (t), buf->nbytes);
      if (!_fb_cuda_check (m->cu, m->cu->MemcpyHtoDAsync (m->inputs_dev[i], fb_tensor_data (t),
                                                          buf->nbytes, m->libs.stream),
                           error, "uploading input '%s'", buf->name))
        return FALSE;
      m->up_copies++;
      m->up_bytes += buf->nbytes;
    }
  return TRUE;
}

/* The buffer's bytes between device and host (d2h: down), when it has both. */
static gboolean
copy_buffer (FbCudaModule *m, guint b, gboolean down, GError **error)
{
  guint root = fb_plan_root (m->plan, b);
  const FbBuffer *buf = fb_plan_buffer (m->plan, b);
  if (m->bufptr[root] == 0 || m->host_ptr[root] == NULL || buf->nbytes == 0 ||
      fb_plan_buffer (m->plan, root)->kind == FB_BUF_CONST)
    return TRUE;
  CUresult r = down ? m->cu->MemcpyDtoHAsync (m->host_ptr[root], m->bufptr[root], buf->nbytes,
                                              m->libs.stream)
                    : m->cu->MemcpyHtoDAsync (m->bufptr[root], m->host_ptr[root], buf->nbytes,
                                              m->libs.stream);
  if (!_fb_cuda_check (m->cu, r, error, "copying '%s' %s", buf->name, down ? "down" : "up"))
    return FALSE;
  if (down)
    {
      m->down_copies++;
      m->down_bytes += buf->nbytes;
    }
  else
    {
      m->up_copies++;
      m->up_bytes += buf->nbytes;
    }
  return TRUE;
}

static gboolean
run_host (FbCudaModule *m, const FbKernel *kernel, GError **error)
{
  for (guint a = 0; a < kernel->args->len; a++)
    if (!copy_buffer (m, g_array_index (kernel->args, FbKArg, a).buffer, TRUE, error))
      return FALSE;
  if (!_fb_cuda_check (m->cu, m->cu->StreamSynchronize (m->libs.stream), error,
                       "kernel %s: waiting for its inputs", kernel->name))
    return FALSE;
  if (!fb_host_kernel_run (m->plan, m->host_ptr, m->dynamic, kernel, error))
    return FALSE;
  for (guint a = 0; a < kernel->args->len; a++)
    {
      const FbKArg *arg = &g_array_index (kernel->args, FbKArg, a);
      if (arg->role == FB_KARG_OUTPUT && !copy_buffer (m, arg->buffer, FALSE, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
run_segments (FbCudaModule *m, GCancellable *cancellable, GError **error)
{
  for (guint i = 0; i < m->segments->len; i++)
    {
      Segment *s = &g_array_index (m->segments, Segment, i);
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      if (s->host)
        {
          if (!run_host (m, m->exec[s->first].kernel, error))
            return FALSE;
        }
      else if (s->graph && !m->launch_eagerly)
        {
          if (!_fb_cuda_check (m->cu, m->cu->GraphLaunch (s->graph, m->libs.stream), error,
                               "replaying the CUDA graph of kernels %u to %u", s->first, s->end - 1))
            return FALSE;
        }
      else if (!_fb_cuda_launch_range (m, s->first, s->end, error))
        return FALSE;
    }
  return TRUE;
}

static GPtrArray *
download_outputs (FbCudaModule *m, GError **error)
{
  FbPlan *plan = m->plan;
  g_autoptr(GPtrArray) outputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  for (guint i = 0; i < plan->outputs->len; i++)
    {
      guint b = g_array_index (plan->outputs, guint, i);
      guint root = fb_plan_root (plan, b);
      const FbBuffer *buf = fb_plan_buffer (plan, b);
      if (fb_plan_buffer (plan, root)->dynamic)
        {
          if (m->dynamic[root] == NULL)
            {
              g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_FAILED,
                           "output '%s' was not computed", buf->name);
              return NULL;
            }
          g_ptr_array_add (outputs, fb_tensor_ref (m->dynamic[root]));
          continue;
        }
      FbTensor *t = fb_tensor_new (buf->dtype, buf->rank, buf->dims, error);
      if (t == NULL)
        return NULL;
      g_ptr_array_add (outputs, t);
      if (buf->nbytes == 0)
        continue;
      if (fb_plan_buffer (plan, root)->kind == FB_BUF_CONST)
        memcpy (fb_tensor_data_mut (t), m->host_ptr[root], buf->nbytes);
      else if (m->bufptr[root] != 0)
        {
          if (!_fb_cuda_check (m->cu, m->cu->MemcpyDtoHAsync (fb_tensor_data_mut (t), m->bufptr[root],
                                                              buf->nbytes, m->libs.stream),
                               error, "reading output '%s'", buf->name))
            return NULL;
          m->down_copies++;
          m->down_bytes += buf->nbytes;
        }
    }
  if (!_fb_cuda_check (m->cu, m->cu->StreamSynchronize (m->libs.stream), error,
                       "finishing the run (a kernel may have faulted)"))
    return NULL;
  return g_steal_pointer (&outputs);
}

static void report_kernel_times (FbCudaModule *m, guint top);
static gboolean run_timed_loop (FbCudaModule *m, guint n, double *ms, FbKernelHook mark,
                                gpointer data, GError **error);

GPtrArray *
fb_cuda_module_run_timed (FbCudaModule *m, GPtrArray *inputs, guint n, double *ms, GError **error)
{
  return fb_cuda_module_run_timed_marked (m, inputs, n, ms, NULL, NULL, error);
}

GPtrArray *
fb_cuda_module_run_timed_marked (FbCudaModule *m, GPtrArray *inputs, guint n, double *ms,
                                 FbKernelHook mark, gpointer data, GError **error)
{
  g_return_val_if_fail (m != NULL && inputs != NULL, NULL);
  if (!fb_plan_check_inputs (m->plan, inputs, error))
    return NULL;
  if (!_fb_cuda_check (m->cu, m->cu->CtxSetCurrent (m->ctx), error, "the CUDA context"))
    return NULL;
  m->up_copies = m->down_copies = 0;
  m->up_bytes = m->down_bytes = 0;
  if (!upload_inputs (m, inputs, error))
    return NULL;
  /* Only the timed runs between these two, for a profiler attached from outside (Nsight
   * Compute's --profile-from-start off): not module loading, not the libraries' own searches.
   * Without one attached they do nothing. */
  m->cu->ProfilerStart ();
  gboolean ran = run_timed_loop (m, n, ms, mark, data, error);
  m->cu->ProfilerStop ();
  if (!ran)
    return NULL;
  const char *top = g_getenv ("FUSEBENCH_CUDA_KERNEL_TIMES");
  if (top != NULL && atoi (top) > 0)
    report_kernel_times (m, (guint) atoi (top));
  return download_outputs (m, error);
}

static gboolean
run_timed_loop (FbCudaModule *m, guint n, double *ms, FbKernelHook mark, gpointer data,
                GError **error)
{
  for (guint i = 0; i < n; i++)
    {
      float elapsed = 0;
      if (mark)
        mark (i, FALSE, data);
      if ((ms && !_fb_cuda_check (m->cu, m->cu->EventRecord (m->ev_start, m->libs.stream), error,
                                  "a CUDA event")) ||
          !run_segments (m, NULL, error) ||
          (ms && (!_fb_cuda_check (m->cu, m->cu->EventRecord (m->ev_end, m->libs.stream), error,
                                   "a CUDA event") ||
                  !_fb_cuda_check (m->cu, m->cu->EventSynchronize (m->ev_end), error,
                                   "waiting for the run (a kernel may have faulted)") ||
                  !_fb_cuda_check (m->cu, m->cu->EventElapsedTime (&elapsed, m->ev_start, m->ev_end),
                                   error, "reading the CUDA events"))))
        return FALSE;
      if (ms)
        ms[i] = elapsed;
      if (mark)
        mark (i, TRUE, data);
    }
  return TRUE;
}

gboolean
fb_cuda_module_time_back_to_back (FbCudaModule *m, guint n, double *ms, GError **error)
{
  g_return_val_if_fail (m != NULL && ms != NULL, FALSE);
  float elapsed = 0;
  if (!_fb_cuda_check (m->cu, m->cu->CtxSetCurrent (m->ctx), error, "the CUDA context") ||
      !_fb_cuda_check (m->cu, m->cu->EventRecord (m->ev_start, m->libs.stream), error,
                       "a CUDA event"))
    return FALSE;
  for (guint i = 0; i < n; i++)
    if (!run_segments (m, NULL, error))
      return FALSE;
  if (!_fb_cuda_check (m->cu, m->cu->EventRecord (m->ev_end, m->libs.stream), error,
                       "a CUDA event") ||
      !_fb_cuda_check (m->cu, m->cu->EventSynchronize (m->ev_end), error,
                       "waiting for the runs (a kernel may have faulted)") ||
      !_fb_cuda_check (m->cu, m->cu->EventElapsedTime (&elapsed, m->ev_start, m->ev_end), error,
                       "reading the CUDA events"))
    return FALSE;
  *ms = elapsed;
  return TRUE;
}

typedef struct {
  guint  k;
  double ms;
} KernelTime;

static int
by_time (gconstpointer a, gconstpointer b)
{
  const KernelTime *x = a, *y = b;
  return x->ms < y->ms ? 1 : x->ms > y->ms ? -1 : 0;
}

/* FUSEBENCH_CUDA_KERNEL_TIMES=N: one more run, kernel by kernel between events, and the N
 * slowest kernels on stderr (the profiler's job in full; this is the executor's own look). */
static void
report_kernel_times (FbCudaModule *m, guint top)
{
  FbPlan *plan = m->plan;
  g_autoptr(GArray) times = g_array_new (FALSE, TRUE, sizeof (KernelTime));
  CUevent *ev = g_new0 (CUevent, plan->kernels->len + 1);
  gboolean ok = TRUE;
  for (guint k = 0; k <= plan->kernels->len && ok; k++)
    ok = m->cu->EventCreate (&ev[k], FB_CU_EVENT_DEFAULT) == 0;
  for (guint k = 0; k < plan->kernels->len && ok; k++)
    {
      ok = m->cu->EventRecord (ev[k], m->libs.stream) == 0;
      if (m->exec[k].kernel->kind == FB_KERNEL_HOST)
        ok = ok && run_host (m, m->exec[k].kernel, NULL);
      else
        ok = ok && _fb_cuda_launch_range (m, k, k + 1, NULL);
    }
  ok = ok && m->cu->EventRecord (ev[plan->kernels->len], m->libs.stream) == 0 &&
       m->cu->EventSynchronize (ev[plan->kernels->len]) == 0;
  double total = 0;
  for (guint k = 0; k < plan->kernels->len && ok; k++)
    {
      float ms = 0;
      m->cu->EventElapsedTime (&ms, ev[k], ev[k + 1]);
      KernelTime t = { k, ms };
      g_array_append_val (times, t);
      total += ms;
    }
  for (guint k = 0; k <= plan->kernels->len; k++)
    if (ev[k])
      m->cu->EventDestroy (ev[k]);
  g_free (ev);
  if (!ok)
    {
      g_printerr ("cuda: kernel times could not be taken\n");
      return;
    }
  g_array_sort (times, by_time);
  g_printerr ("cuda: %u kernels, %.3f ms launched one by one; the slowest:\n", plan->kernels->len,
              total);
  for (guint i = 0; i < MIN (top, times->len); i++)
    {
      const KernelTime *t = &g_array_index (times, KernelTime, i);
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, t->k);
      g_printerr ("  %8.4f ms  %-44s %s\n", t->ms, kernel->name, kernel->label ? kernel->label : "");
    }
}

GPtrArray *
fb_cuda_module_run (FbCudaModule *m, GPtrArray *inputs, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (m != NULL && inputs != NULL, NULL);
  if (!fb_plan_check_inputs (m->plan, inputs, error))
    return NULL;
  if (!_fb_cuda_check (m->cu, m->cu->CtxSetCurrent (m->ctx), error, "the CUDA context"))
    return NULL;
  m->up_copies = m->down_copies = 0;
  m->up_bytes = m->down_bytes = 0;
  if (!upload_inputs (m, inputs, error) || !run_segments (m, cancellable, error))
    return NULL;
  return download_outputs (m, error);
}

char *
fb_cuda_module_describe (FbCudaModule *m)
{
  g_return_val_if_fail (m != NULL, NULL);
  guint device = 0, host = 0;
  for (guint i = 0; i < m->segments->len; i++)
    {
      if (g_array_index (m->segments, Segment, i).host)
        host++;
      else
        device++;
    }
  /* How the convolutions run, by way, in the order first met. */
  g_autoptr(GPtrArray) ways = g_ptr_array_new ();
  g_autoptr(GArray) counts = g_array_new (FALSE, TRUE, sizeof (guint));
  for (guint k = 0; k < m->plan->kernels->len; k++)
    {
      FbKernel *kernel = m->exec[k].kernel;
      for (guint p = 0; kernel && p < kernel->phases->len; p++)
        {
          const char *way = m->exec[k].phases[p].lib ? _fb_cuda_lib_phase_way (m->exec[k].phases[p].lib)
                                                     : NULL;
          if (way == NULL)
            continue;
          guint at = 0;
          while (at < ways->len && g_ptr_array_index (ways, at) != way)
            at++;
          if (at == ways->len)
            {
              g_ptr_array_add (ways, (gpointer) way);
              g_array_set_size (counts, ways->len);
            }
          g_array_index (counts, guint, at)++;
        }
    }
  GString *convs = g_string_new (NULL);
  for (guint i = 0; i < ways->len; i++)
    g_string_append_printf (convs, "%s%u %s", i ? ", " : "; convolutions: ",
                            g_array_index (counts, guint, i), (const char *) g_ptr_array_index (ways, i));
  g_autofree char *conv_text = g_string_free (convs, FALSE);
  g_autofree char *cubins = fb_cubin_cache_describe (&m->cubins);
  return g_strdup_printf ("%s of %u device segment%s and %u host step%s; last run: %u copies up "
                          "(%" G_GUINT64_FORMAT " bytes), %u down (%" G_GUINT64_FORMAT " bytes)%s; %s",
                          m->eager ? "kernel-by-kernel launches" : "CUDA graph replays", device,
                          device == 1 ? "" : "s", host, host == 1 ? "" : "s", m->up_copies,
                          m->up_bytes, m->down_copies, m->down_bytes, conv_text, cubins);
}
