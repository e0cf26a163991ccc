/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CPU executor: resolves every buffer to an address once (arena offsets, weights in place,
 * views through their root), then runs the kernels in plan order, each phase split across the
 * worker pool. If and Loop nodes run on the host through the reference interpreter, reading
 * and writing the same buffers (fb-cpu-host.c: the CPU target has no control flow of its
 * own). */
#include "fb-cpu.h"
#include "fb-host-kernel.h"
#include "fb-plan-inputs.h"
#include "fb-codegen.h"
#include "fb-dnnl-conv.h"
#include "fb-jit.h"
#include "fb-cpu-threads.h"
#include "fb-worker-pool.h"

#include <cblas.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* Below this many element operations a phase runs on the calling thread: waking the workers
 * costs more than it saves, and the next kernel then reads half of what it wrote from the
 * other core. From 16 k to 64 k (2026-12-05, 2-core Zen 4, two threads, alternating runs):
 * the GPT-2-structured model 0.93-0.96 -> 0.81-0.84 ms (its LayerNorms of 20 k operations had
 * taken 4.5 us split against 0.7 on one thread), ShuffleNetV2 1.96-1.99 -> 1.79-1.86,
 * MobileNetV3-Large 2.63-2.73 -> 2.59-2.60, EfficientNet-B0 4.78-5.20 -> 4.72-4.80;
 * DenseNet-121, Inception, ViT-S/16 and the speech embedding model within their noise. */
#define PARALLEL_MIN_WORK 65536.0

/* FUSEBENCH_SPLIT_MIN_WORK (element operations) and FUSEBENCH_CONV_SPLIT_US (microseconds a
 * thread) replace PARALLEL_MIN_WORK and CONV_US_PER_THREAD (fb_split_tuning). */

typedef struct {
  FbKernel   *kernel;
  void      **args;             /* one address per kernel argument */
  FbPhaseFn  *fns;              /* one per phase (NULL for a oneDNN convolution) */
  FbDnnlConv **convs;           /* one per phase: the primitive of a convolution phase */
} ExecKernel;

struct _FbCpuModule {
  FbPlan        *plan;
  FbJit         *jit;
  FbWorkerPool  *pool;
  guint8        *arena;
  void         **bufptr;        /* per buffer: its address (inputs filled in at each run) */
  ExecKernel    *exec;
  double        *kernel_ms;
  FbTensor     **dynamic;       /* per buffer: what a host step made of a dynamic buffer */
  gboolean       timing;
  gboolean       timed;
  double        *start_ms;      /* timing, per kernel (FbKernelTiming) */
  double        *busy_ms;       /* timing, kernel x thread */
  double        *first_ms;
  double        *last_ms;
  gboolean      *pooled;
  gboolean      *self_threaded;
  FbKernelHook hook;
  gpointer       hook_data;
  char          *threads_source;
  gboolean       split_all;     /* FUSEBENCH_SPLIT_ALL=1: every loop of two iterations or more
                                   splits, whatever its work */
  double         split_min_work; /* PARALLEL_MIN_WORK, or FUSEBENCH_SPLIT_MIN_WORK */
};

#define HUGE_PAGE ((gsize) 2 << 20)

/* The activation arena, zeroed; from a megabyte on, on 2 MB pages where the kernel grants
 * them: a network's activations span thousands of 4 KB pages, and the TLB misses of walking
 * them cost MobileNetV2 5 % of its time. Released with free (). */
static guint8 *
arena_alloc (gsize n)
{
  void *p = NULL;
  gboolean huge = n >= HUGE_PAGE / 2;
  gsize rounded = huge ? (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE : (n + 63) / 64 * 64;
  if (rounded < n || posix_memalign (&p, huge ? HUGE_PAGE : 64, rounded) != 0)
    return NULL;
  if (huge)
    madvise (p, rounded, MADV_HUGEPAGE);    /* advice: without it, plain pages */
  memset (p, 0, rounded);
  return p;
}

static double
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
resolve_buffers (FbCpuModule *m)
{
  FbPlan *plan = m->plan;
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      FbBuffer *b = fb_plan_buffer (plan, i);
      if (b->kind == FB_BUF_CONST && b->constant)
        m->bufptr[i] = (void *) fb_tensor_data (b->constant);
      else if (b->alias < 0 && b->offset >= 0)
        m->bufptr[i] = m->arena + b->offset;
    }
}

static void
bind_args (FbCpuModule *m)
{
  for (guint k = 0; k < m->plan->kernels->len; k++)
    {
      ExecKernel *e = &m->exec[k];
      for (guint a = 0; a < e->kernel->args->len; a++)
        {
          guint b = g_array_index (e->kernel->args, FbKArg, a).buffer;
          e->args[a] = m->bufptr[fb_plan_root (m->plan, b)];
        }
    }
}

/* The threads one convolution runs on: one when it is worth less than two threads' work of
 * CONV_US_PER_THREAD microseconds (estimated at 50 GFLOP/s and 10 GB/s of one core), else
 * the whole pool. Starting a team costs microseconds per thread: a PP-OCR-style classifier
 * (133 k parameters, maps of 12x48 and less) took 17 ms on 16 threads where ONNX Runtime takes
 * 1 on one. But a team of any other size makes OpenMP resize its team between kernels (as
 * the pool's regions, which always take the whole team): on the GPU host's 16 cores, teams
 * sized to each convolution (its work over 15 us a thread) ran DenseNet-121 in 23 ms and the
 * whole pool for every convolution in 9, ResNet-50 8.5 against 7.8, Inception 9.7 against
 * 6.4. FUSEBENCH_SPLIT_ALL=1 gives every one the whole pool (and splits every loop), to
 * compare. */
#define CONV_US_PER_THREAD 15.0

static int
conv_threads (const FbConvDesc *d, int pool)
{
  if (pool <= 1 || g_strcmp0 (g_getenv ("FUSEBENCH_SPLIT_ALL"), "1") == 0)
    return pool;
  double per_out = (double) (d->c / d->groups) * d->kh * d->kw;
  double flops = 2.0 * d->n * d->oh * d->ow * d->co * per_out;
  double bytes = 4.0 * ((double) d->n * (d->h * d->w * d->c + d->oh * d->ow * d->co) +
                        d->co * per_out);
  double per_thread = fb_split_tuning ("FUSEBENCH_CONV_SPLIT_US", CONV_US_PER_THREAD);
  return fb_cpu_one_core_us (flops, bytes) < 2 * per_thread ? 1 : pool;
}

/* The oneDNN primitives of the convolution phases, made once: weights reordered now, not at
 * every run. oneDNN fixes a primitive's thread count when it is made (conv_threads). */
static gboolean
make_convolutions (FbCpuModule *m, GError **error)
{
  for (guint k = 0; k < m->plan->kernels->len; k++)
    {
      ExecKernel *e = &m->exec[k];
      for (guint p = 0; p < e->kernel->phases->len; p++)
        {
          const FbKConv *cv = ((FbKPhase *) g_ptr_array_index (e->kernel->phases, p))->conv;
          if (cv == NULL)
            continue;
          guint wb = fb_plan_root (m->plan, g_array_index (e->kernel->args, FbKArg, cv->w).buffer);
          char why[256] = "";
          omp_set_num_threads (conv_threads (&cv->desc, (int) fb_worker_pool_n_threads (m->pool)));
          if (fb_plan_buffer (m->plan, wb)->kind == FB_BUF_CONST)
            e->convs[p] = fb_dnnl_conv_new (&cv->desc, m->bufptr[wb], why, sizeof why);
          else
            g_strlcpy (why, "its weights are not a constant", sizeof why);
          if (e->convs[p] == NULL)
            {
              g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_FAILED,
                           "kernel %s (node '%s'): %s", e->kernel->name,
                           e->kernel->node ? e->kernel->node->name : "?", why);
              omp_set_num_threads (1);
              return FALSE;
            }
        }
    }
  omp_set_num_threads (1);
  return TRUE;
}

/* The threads for a request of n_threads (0: the default), and where the count came from. */
static guint
module_threads (const FbPlan *plan, guint n_threads, char **source)
{
  FbThreadCount count;
  fb_thread_count_resolve (n_threads, &count);
  guint n = count.asked ? count.n : fb_cpu_small_model_threads (plan, count.n);
  if (n < count.n)
    *source = g_strdup_printf ("%s, cut to %u for a small model (about %.0f us of work on one "
                               "core)", count.source, n, fb_cpu_plan_one_core_us (plan));
  else
    *source = g_strdup (count.source);
  return n;
}

FbCpuModule *
fb_cpu_module_new (FbPlan *plan, GPtrArray *objects, guint n_threads, GError **error)
{
  g_return_val_if_fail (plan != NULL, NULL);
  g_return_val_if_fail (objects != NULL && objects->len == plan->kernels->len, NULL);

  g_autoptr(FbCpuModule) m = g_new0 (FbCpuModule, 1);
  m->plan = fb_plan_ref (plan);
  m->split_all = g_strcmp0 (g_getenv ("FUSEBENCH_SPLIT_ALL"), "1") == 0;
  m->split_min_work = fb_split_tuning ("FUSEBENCH_SPLIT_MIN_WORK", PARALLEL_MIN_WORK);
  m->jit = fb_jit_new (error);
  if (m->jit == NULL)
    return NULL;
  /* Equal kernels share one object (and its symbols): each is loaded once. */
  g_autoptr(GHashTable) loaded = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint k = 0; k < objects->len; k++)
    {
      GBytes *obj = g_ptr_array_index (objects, k);
      FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (obj == NULL || kernel->phases->len == 0)
        continue;
      const char *fn = ((FbKPhase *) g_ptr_array_index (kernel->phases, 0))->fn;
      if (!g_hash_table_add (loaded, (gpointer) fn))
        continue;
      if (!fb_jit_add_object (m->jit, obj, error))
        return NULL;
    }
  m->exec = g_new0 (ExecKernel, plan->kernels->len + 1);
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      ExecKernel *e = &m->exec[k];
      e->kernel = g_ptr_array_index (plan->kernels, k);
      e->args = g_new0 (void *, e->kernel->args->len + 1);
      e->fns = g_new0 (FbPhaseFn, e->kernel->phases->len + 1);
      e->convs = g_new0 (FbDnnlConv *, e->kernel->phases->len + 1);
      for (guint p = 0; p < e->kernel->phases->len; p++)
        {
          FbKPhase *ph = g_ptr_array_index (e->kernel->phases, p);
          if (ph->conv)
            continue;
          e->fns[p] = fb_jit_lookup (m->jit, ph->fn, error);
          if (e->fns[p] == NULL)
            return NULL;
        }
    }
  if (plan->arena_bytes > 0)
    {
      m->arena = arena_alloc (plan->arena_bytes + 64);
      if (m->arena == NULL)
        {
          g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_FAILED,
                       "cannot allocate the %" G_GINT64_FORMAT "-byte activation arena",
                       plan->arena_bytes);
          return NULL;
        }
    }
  m->bufptr = g_new0 (void *, plan->buffers->len + 1);
  resolve_buffers (m);
  m->kernel_ms = g_new0 (double, plan->kernels->len + 1);
  m->dynamic = g_new0 (FbTensor *, plan->buffers->len + 1);
  /* The math libraries' own threads would fight ours for the same cores. */
  openblas_set_num_threads (1);
  m->pool = fb_worker_pool_new (module_threads (plan, n_threads, &m->threads_source));
  gsize kt = (gsize) plan->kernels->len * fb_worker_pool_n_threads (m->pool) + 1;
  m->start_ms = g_new0 (double, plan->kernels->len + 1);
  m->busy_ms = g_new0 (double, kt);
  m->first_ms = g_new0 (double, kt);
  m->last_ms = g_new0 (double, kt);
  m->pooled = g_new0 (gboolean, plan->kernels->len + 1);
  m->self_threaded = g_new0 (gboolean, plan->kernels->len + 1);
  if (!make_convolutions (m, error))
    return NULL;
  return g_steal_pointer (&m);
}

void
fb_cpu_module_free (FbCpuModule *m)
{
  if (m == NULL)
    return;
  g_clear_pointer (&m->pool, fb_worker_pool_free);
  g_free (m->threads_source);
  for (guint k = 0; m->exec && k < m->plan->kernels->len; k++)
    {
      g_free (m->exec[k].args);
      g_free (m->exec[k].fns);
      for (guint p = 0; m->exec[k].convs && p < m->exec[k].kernel->phases->len; p++)
        fb_dnnl_conv_free (m->exec[k].convs[p]);
      g_free (m->exec[k].convs);
    }
  g_free (m->exec);
  g_free (m->bufptr);
  free (m->arena);
  g_free (m->kernel_ms);
  g_free (m->start_ms);
  g_free (m->busy_ms);
  g_free (m->first_ms);
  g_free (m->last_ms);
  g_free (m->pooled);
  g_free (m->self_threaded);
  for (guint i = 0; m->dynamic && i < m->plan->buffers->len; i++)
    g_clear_pointer (&m->dynamic[i], fb_tensor_unref);
  g_free (m->dynamic);
  g_clear_pointer (&m->jit, fb_jit_free);
  g_clear_pointer (&m->plan, fb_plan_unref);
  g_free (m);
}

FbPlan *
fb_cpu_module_plan (FbCpuModule *m)
{
  g_return_val_if_fail (m != NULL, NULL);
  return m->plan;
}

const double *
fb_cpu_module_kernel_ms (FbCpuModule *m)
{
  g_return_val_if_fail (m != NULL, NULL);
  return m->timed ? m->kernel_ms : NULL;
}

void
fb_cpu_module_set_timing (FbCpuModule *m, gboolean timing)
{
  g_return_if_fail (m != NULL);
  m->timing = timing;
}

gboolean
fb_cpu_module_timing (FbCpuModule *m, FbKernelTiming *t)
{
  g_return_val_if_fail (m != NULL && t != NULL, FALSE);
  if (!m->timed)
    return FALSE;
  *t = (FbKernelTiming) {
    .n_kernels = m->plan->kernels->len,
    .n_threads = fb_worker_pool_n_threads (m->pool),
    .kernel_ms = m->kernel_ms,
    .start_ms = m->start_ms,
    .busy_ms = m->busy_ms,
    .first_ms = m->first_ms,
    .last_ms = m->last_ms,
    .pooled = m->pooled,
    .self_threaded = m->self_threaded,
  };
  return TRUE;
}

guint
fb_cpu_module_n_threads (FbCpuModule *m)
{
  g_return_val_if_fail (m != NULL, 1);
  return fb_worker_pool_n_threads (m->pool);
}

const char *
fb_cpu_module_threads_source (FbCpuModule *m)
{
  g_return_val_if_fail (m != NULL, NULL);
  return m->threads_source;
}

void
fb_cpu_module_set_kernel_hook (FbCpuModule *m, FbKernelHook hook, gpointer data)
{
  g_return_if_fail (m != NULL);
  m->hook = hook;
  m->hook_data = data;
}

typedef struct {
  FbPhaseFn fn;
  void    **args;
} PhaseCall;

static void
run_range (gpointer data, int64_t begin, int64_t end)
{
  PhaseCall *call = data;
  call->fn (call->args, begin, end);
}

static gboolean
bind_inputs (FbCpuModule *m, GPtrArray *inputs, GError **error)
{
  FbPlan *plan = m->plan;
  if (!fb_plan_check_inputs (plan, inputs, error))
    return FALSE;
  for (guint i = 0; i < inputs->len; i++)
    {
      guint b = g_array_index (plan->inputs, guint, i);
      FbTensor *t = g_ptr_array_index (inputs, i);
      const FbBuffer *buf = fb_plan_buffer (plan, b);
      /* A fed sequence or optional is held as it is, for the host steps that read it. */
      if (buf->dynamic && buf->kind != FB_BUF_CONST)
        {
          g_clear_pointer (&m->dynamic[b], fb_tensor_unref);
          m->dynamic[b] = fb_tensor_ref (t);
        }
      /* Kernels only read their inputs: the caller's bytes are used in place. */
      else if (buf->kind != FB_BUF_CONST)
        m->bufptr[b] = (void *) fb_tensor_data (t);
    }
  return TRUE;
}

/* oneDNN threads the convolution itself, on the calling thread's OpenMP team; everywhere
 * else the calling thread is one of the pool's and its math library calls stay on it. */
static gboolean
run_convolution (FbCpuModule *m, ExecKernel *e, guint p, GError **error)
{
  const FbKConv *cv = ((FbKPhase *) g_ptr_array_index (e->kernel->phases, p))->conv;
  omp_set_num_threads (fb_worker_pool_n_threads (m->pool));
  int status = fb_dnnl_conv_run (e->convs[p], e->args[cv->x],
                                 cv->desc.scaled_input ? e->args[cv->scale] : NULL,
                                 cv->bias != FB_KCONV_NO_ARG ? e->args[cv->bias] : NULL,
                                 cv->add != FB_KCONV_NO_ARG ? e->args[cv->add] : NULL,
                                 e->args[cv->y]);
  omp_set_num_threads (1);
  if (status == 0)
    return TRUE;
  g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_FAILED,
               "kernel %s (node '%s'): the oneDNN convolution failed", e->kernel->name,
               e->kernel->node ? e->kernel->node->name : "?");
  return FALSE;
}

GPtrArray *
fb_cpu_module_run (FbCpuModule *m, GPtrArray *inputs, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (m != NULL && inputs != NULL, NULL);
  FbPlan *plan = m->plan;
  if (!bind_inputs (m, inputs, error))
    return NULL;
  bind_args (m);
  /* The caller's thread is one of the pool's: the math library's calls made on it stay on it
   * (OpenMP's thread count is per thread, and the caller may be any thread). */
  omp_set_num_threads (1);
  m->timed = FALSE;
  guint n_threads = fb_worker_pool_n_threads (m->pool);
  double t_run = 0, t_prev = 0;
  if (m->timing)
    {
      gsize kt = (gsize) plan->kernels->len * n_threads;
      memset (m->busy_ms, 0, kt * sizeof (double));
      for (gsize i = 0; i < kt; i++)
        m->first_ms[i] = m->last_ms[i] = -1;
      t_run = t_prev = now_ms ();
    }
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      ExecKernel *e = &m->exec[k];
      FbWorkerTimes times = { 0 };
      if (m->timing)
        {
          times.busy_ms = m->busy_ms + (gsize) k * n_threads;
          times.first_ms = m->first_ms + (gsize) k * n_threads;
          times.last_ms = m->last_ms + (gsize) k * n_threads;
          m->pooled[k] = m->self_threaded[k] = FALSE;
        }
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      /* A hook's own time (reading counters) stays out of the kernel's: the clock is read
       * again after it, only when there is one. */
      if (m->hook)
        {
          m->hook (k, FALSE, m->hook_data);
          if (m->timing)
            t_prev = now_ms ();
        }
      if (e->kernel->kind == FB_KERNEL_HOST)
        {
          if (!fb_host_kernel_run (plan, m->bufptr, m->dynamic, e->kernel, error))
            return NULL;
        }
      for (guint p = 0; p < e->kernel->phases->len; p++)
        {
          FbKPhase *ph = g_ptr_array_index (e->kernel->phases, p);
          if (ph->conv)
            {
              if (!run_convolution (m, e, p, error))
                return NULL;
              m->self_threaded[k] = n_threads > 1;
            }
          else if (((ph->serial || ph->work < m->split_min_work) && !m->split_all) ||
                   ph->extent < 2)
            e->fns[p] (e->args, 0, ph->extent);
          else
            {
              PhaseCall call = { e->fns[p], e->args };
              /* At least half the minimum per chunk, so at most work / that threads get one:
               * on 16 cores a phase of 64 k operations had split into 16 chunks of 4 k. */
              int64_t grain = MAX (1, (int64_t) (m->split_min_work / 2 * ph->extent / ph->work));
              if (m->timing)
                {
                  fb_worker_pool_run_timed (m->pool, run_range, &call, ph->extent, grain, &times);
                  m->pooled[k] = TRUE;
                }
              else
                fb_worker_pool_run (m->pool, run_range, &call, ph->extent, grain);
            }
        }
      if (m->timing)
        {
          /* One clock read per kernel: each kernel ends where the next begins. */
          double t = now_ms ();
          m->kernel_ms[k] = t - t_prev;
          m->start_ms[k] = t_prev - t_run;
          /* The caller worked through the serial phases and its share of the pooled ones;
           * as the lane that dispatches, it spans the whole kernel. */
          times.busy_ms[0] += MAX (0, m->kernel_ms[k] - times.wall_ms);
          for (guint i = 0; i < n_threads; i++)
            if (times.first_ms[i] >= 0)
              {
                times.first_ms[i] -= t_run;
                times.last_ms[i] -= t_run;
              }
          times.first_ms[0] = t_prev - t_run;
          times.last_ms[0] = t - t_run;
          t_prev = t;
        }
      if (m->hook)
        m->hook (k, TRUE, m->hook_data);
    }
  m->timed = m->timing;
  GPtrArray *outputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  for (guint i = 0; i < plan->outputs->len; i++)
    {
      guint b = g_array_index (plan->outputs, guint, i);
      const FbBuffer *buf = fb_plan_buffer (plan, b);
      if (fb_plan_buffer (plan, fb_plan_root (plan, b))->dynamic)
        {
          FbTensor *d = fb_host_buffer_tensor (plan, m->bufptr, m->dynamic, b);
          if (d == NULL)
            {
              g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_FAILED,
                           "output '%s' was not computed", buf->name);
              g_ptr_array_unref (outputs);
              return NULL;
            }
          g_ptr_array_add (outputs, d);
          continue;
        }
      FbTensor *t = fb_tensor_new (buf->dtype, buf->rank, buf->dims, error);
      if (t == NULL)
        {
          g_ptr_array_unref (outputs);
          return NULL;
        }
      void *src = m->bufptr[fb_plan_root (plan, b)];
      if (buf->nbytes > 0)
        memcpy (fb_tensor_data_mut (t), src, buf->nbytes);
      g_ptr_array_add (outputs, t);
    }
  return outputs;
}
