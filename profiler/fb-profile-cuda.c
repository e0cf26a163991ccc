/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fb_profile_run on the cuda target: CUPTI's activity records of every kernel and copy.
 *
 * One inference of the module is launched kernel by kernel with every launch tagged with its
 * plan kernel (an external correlation id pushed around it): that is the reference that tells
 * which device kernels (ours, cuDNN's, cuBLASLt's) belong to which plan kernel. The timed
 * inferences of the same module then run as the user runs them, replayed as CUDA graphs (or
 * eagerly when asked);
 * a replay's kernels all name the one graph launch, so they get their owners from the
 * reference by their sequence of function names (fb_gpu_match_owners). With counters, one
 * more inference per counter pass runs kernel by kernel under CUPTI's range profiler, after
 * the timing, since counting serializes the kernels; its ranges come in launch order, the
 * reference's order.
 *
 * The tracer slows what it watches, most of all the gaps between kernels and the start of a
 * replay, so before CUPTI is even loaded the same graph is compiled once more and replayed
 * untraced: its replays between CUDA events give the profile's wall, as `run --iterations`
 * times them, and the busy share and idle are worked out against that wall
 * (fb_gpu_utilization_untraced); only the kernels' durations come from the traced replays. A
 * module of its own, freed before CUPTI starts: CUPTI disabled again still recorded the graph's
 * kernels and lengthened each replay's launch by about 1.3 µs a kernel (measured on an H200),
 * more than tracing them. The two modules run the same library engines as far as cuDNN's
 * timed choice repeats itself, which it did on the H200 (the untraced wall and the traced
 * kernels agree); a choice kept between modules would make it certain. */
#include "fb-profile-private.h"
#include "fb-cost.h"
#include "fb-cupti-counters.h"
#include "fb-timing.h"


typedef struct {
  FbCupti *cupti;
} Tagger;

/* A compiled model and the backend that frees it, for g_autoptr. */
typedef struct {
  const FbBackend *backend;
  FbCompiled      *compiled;
} Compiled;

static Compiled *
compiled_new (const FbBackend *backend, FbCompiled *compiled)
{
  if (compiled == NULL)
    return NULL;
  Compiled *c = g_new (Compiled, 1);
  *c = (Compiled) { backend, compiled };
  return c;
}

static void
compiled_free (Compiled *c)
{
  c->backend->free (c->compiled);
  g_free (c);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Compiled, compiled_free)

static void
tag_launch (guint kernel, gboolean after, gpointer data)
{
  Tagger *t = data;
  if (after)
    fb_cupti_pop_owner (t->cupti);
  else
    fb_cupti_push_owner (t->cupti, kernel + 1);
}

static void
report (FbProfileProgress progress, gpointer data, double fraction, const char *what)
{
  if (progress)
    progress (CLAMP (fraction, 0, 1), what, data);
}

static gboolean
run_once (const FbBackend *backend, FbCompiled *m, GPtrArray *inputs, GCancellable *cancellable,
          GError **error)
{
  g_autoptr(GPtrArray) outputs = backend->run (m, inputs, cancellable, error);
  return outputs != NULL;
}

typedef struct {
  FbCupti           *cupti;
  guint64           *begin, *end;
  guint              iterations;
  FbProfileProgress  progress;
  gpointer           data;
} Marks;

static void
mark_iteration (guint i, gboolean after, gpointer data)
{
  Marks *m = data;
  if (after)
    {
      m->end[i] = fb_cupti_timestamp (m->cupti);
      return;
    }
  g_autofree char *what = g_strdup_printf ("inference %u of %u", i + 1, m->iterations);
  report (m->progress, m->data, 0.15 + 0.7 * i / m->iterations, what);
  m->begin[i] = fb_cupti_timestamp (m->cupti);
}

/* The device kernels of activities, in start order (borrowed pointers). */
static GPtrArray *
device_kernels (const GArray *activities)
{
  GPtrArray *v = g_ptr_array_new ();
  for (guint i = 0; i < activities->len; i++)
    {
      FbGpuActivity *a = &g_array_index (activities, FbGpuActivity, i);
      if (a->kind == FB_GPU_KERNEL)
        g_ptr_array_add (v, a);
    }
  return v;
}

static FbProfileKernel *
make_kernel (const FbPlan *plan, const FbKernel *kernel, guint k, const FbGraph *import,
             const FbProfileDevice *device)
{
  FbProfileKernel *pk = fb_profile_kernel_new ();
  pk->id = k;
  pk->name = g_strdup (kernel->name);
  pk->kind = _fb_profile_kernel_kind (kernel);
  pk->stage_node = kernel->node_id;
  for (guint i = 0; i < kernel->prov_names->len; i++)
    g_ptr_array_add (pk->nodes, g_strdup (g_array_index (kernel->prov_names, char *, i)));
  _fb_profile_kernel_bytes (plan, kernel, &pk->bytes_read, &pk->bytes_written);
  pk->bytes_source = FB_BYTES_MODELED;
  pk->flops = kernel->node ? fb_node_cost (kernel->node).flops : kernel->flops;
  fb_profile_kernel_split_by_cost (pk, import, device);
  return pk;
}

/* Every device kernel's DRAM bytes, added to the plan kernel that launched it; the ranges are
 * in the reference's launch order. */
static void
apply_counters (FbProfile *p, GPtrArray *reference, const GArray *ranges)
{
  if (ranges->len != reference->len)
    {
      p->counters_note = g_strdup_printf (
        "counters: the range profiler saw %u kernels where the tagged run launched %u; DRAM "
        "bytes are modeled", ranges->len, reference->len);
      return;
    }
  g_autofree double *read = g_new0 (double, p->kernels->len + 1);
  g_autofree double *written = g_new0 (double, p->kernels->len + 1);
  g_autofree double *sm = g_new0 (double, p->kernels->len + 1);
  g_autofree double *ns = g_new0 (double, p->kernels->len + 1);
  for (guint i = 0; i < ranges->len; i++)
    {
      const FbGpuActivity *a = reference->pdata[i];
      const FbGpuCounters *c = &g_array_index (ranges, FbGpuCounters, i);
      if (a->owner == 0 || a->owner > p->kernels->len)
        continue;
      read[a->owner - 1] += c->dram_read_bytes;
      written[a->owner - 1] += c->dram_write_bytes;
      sm[a->owner - 1] += c->sm_throughput * c->duration_ns;
      ns[a->owner - 1] += c->duration_ns;
    }
  for (guint k = 0; k < p->kernels->len; k++)
    {
      FbProfileKernel *pk = p->kernels->pdata[k];
      if (ns[k] <= 0)
        continue;
      pk->bytes_read = (guint64) read[k];
      pk->bytes_written = (guint64) written[k];
      pk->bytes_source = FB_BYTES_MEASURED;
      pk->counters.sm_throughput = sm[k] / ns[k];
      pk->counters.device_us = ns[k] / 1e3;
    }
}

/* Replays inside the whole-replay counter range: enough that what the first finds in the L2
 * from before the range, and what the last leaves dirty in it, are a small part. */
#define DRAM_REPLAYS 20

/* DRAM per inference in steady state (FbProfileDram): one counter range over DRAM_REPLAYS
 * replays, launched as `run --iterations` launches them, after one outside the range that
 * leaves the L2 as a replay before would; once per pass CUPTI asks for. */
static gboolean
count_whole_replays (const FbBackend *backend, FbCompiled *compiled, GPtrArray *inputs,
                     FbProfileDram *dram, GCancellable *cancellable, GError **error)
{
  const FbDeviceTrace *trace = backend->device_trace;
  FbCuptiCounters *counters = fb_cupti_counters_start_user (trace->context (compiled),
                                                            trace->device_index (compiled), 1,
                                                            error);
  if (counters == NULL)
    return FALSE;
  double ms[DRAM_REPLAYS];
  gboolean ok;
  int more = 1;
  do
    {
      g_autoptr(GPtrArray) before = NULL;
      g_autoptr(GPtrArray) timed = NULL;
      ok = (before = backend->run (compiled, inputs, cancellable, error)) != NULL &&
           fb_cupti_counters_push (counters, "replays", error) &&
           (timed = backend->run_timed (compiled, inputs, DRAM_REPLAYS, ms, error)) != NULL &&
           fb_cupti_counters_pop (counters, error) &&
           (more = fb_cupti_counters_end_pass (counters, error)) >= 0;
    }
  while (ok && more > 0);
  g_autoptr(GArray) ranges = fb_cupti_counters_stop (counters, NULL, ok ? error : NULL);
  if (!ok || ranges == NULL)
    return FALSE;
  if (ranges->len != 1)
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
                   "the range profiler returned %u ranges where one was opened", ranges->len);
      return FALSE;
    }
  const FbGpuCounters *c = &g_array_index (ranges, FbGpuCounters, 0);
  dram->replays = DRAM_REPLAYS;
  dram->read_bytes = c->dram_read_bytes / DRAM_REPLAYS;
  dram->written_bytes = c->dram_write_bytes / DRAM_REPLAYS;
  return TRUE;
}

#define BACK_TO_BACK_BATCHES 5

/* The untraced replays (FbProfileTiming), on a module of their own with no tracer loaded:
 * warm-up, n timed one by one as `run --iterations` times them, then, for a graph replay,
 * batches launched back to back, whose replays overlap each other's launch: a replay alone less
 * one of those is its launch. The inputs are those the traced module gets (the same seed). */
static gboolean
time_untraced (const FbBackend *backend, const FbGraph *final,
               const FbBackendOptions *run_options, GPtrArray *inputs,
               const FbProfileOptions *options, guint n, guint warmup, FbProfileTiming *t,
               GCancellable *cancellable, GError **error)
{
  g_autoptr(Compiled) module = compiled_new (backend, _fb_profile_compile (backend, final, options,
                                                                           run_options, error));
  if (module == NULL)
    return FALSE;
  g_autoptr(GPtrArray) own_inputs = NULL;
  if (inputs == NULL &&
      (inputs = own_inputs = _fb_profile_random_inputs (backend->plan (module->compiled),
                                                        options ? options->seed : 0,
                                                        error)) == NULL)
    return FALSE;
  for (guint i = 0; i < warmup; i++)
    if (!run_once (backend, module->compiled, inputs, cancellable, error))
      return FALSE;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  g_autofree double *ms = g_new0 (double, n);
  double batch[BACK_TO_BACK_BATCHES] = { 0 };
  guint per_batch = MAX (n / BACK_TO_BACK_BATCHES, 4u);
  g_autoptr(GPtrArray) outputs = backend->run_timed (module->compiled, inputs, n, ms, error);
  if (outputs == NULL)
    return FALSE;
  for (guint b = 0; !run_options->eager && b < BACK_TO_BACK_BATCHES; b++)
    {
      if (!backend->device_trace->time_back_to_back (module->compiled, per_batch, &batch[b],
                                                     error))
        return FALSE;
      batch[b] /= per_batch;
    }

  FbTimingStats s = fb_timing_summarize (ms, n);
  t->untraced_iterations = n;
  t->untraced_median_ms = s.median;
  t->untraced_min_ms = s.min;
  t->untraced_max_ms = s.max;
  t->noise_ms = s.q3 - s.q1;
  t->replay_launch_ms =
    run_options->eager ? 0
                       : MAX (0.0, s.median - fb_timing_summarize (batch, BACK_TO_BACK_BATCHES).median);
  return TRUE;
}

/* The untraced figures in the profile's place: its wall, and the timeline starting where an
 * untraced replay's first kernel would (the traced lead, mostly the tracer's own start, is cut
 * to the untraced launch). Returns the utilization against the untraced wall. */
static FbGpuUtilization
apply_untraced (FbProfile *p, const FbProfileTiming *t, const FbGpuUtilization *traced)
{
  p->timing = *t;
  p->wall_median_ms = t->untraced_median_ms;
  p->wall_min_ms = t->untraced_min_ms;
  p->wall_max_ms = t->untraced_max_ms;
  double cut_us = MAX (0.0, traced->replay_launch_us - 1000 * t->replay_launch_ms);
  for (guint i = 0; traced->graph && i < p->timeline->len; i++)
    {
      FbProfileSpan *span = &g_array_index (p->timeline, FbProfileSpan, i);
      span->start_us = MAX (0.0, span->start_us - cut_us);
      span->end_us = MAX (span->start_us, span->end_us - cut_us);
    }
  return fb_gpu_utilization_untraced (traced, 1000 * t->untraced_median_ms, 1000 * t->noise_ms,
                                      1000 * t->replay_launch_ms, 1000 * t->traced_median_ms);
}

/* The device's name and ceilings. The ceilings are CUPTI-free measurements the runtime makes
 * (a device-to-device copy, a large product) where it can, else none. */
static void
describe_device (const FbBackend *backend, FbProfileDevice *device)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *name = backend->describe_device (backend, &error);
  device->name = g_strdup (name ? name : "CUDA device");
  double gbps = 0, gflops = 0;
  if (backend->device_trace->measure_ceilings (&gbps, &gflops, NULL))
    {
      device->peak_gbps = gbps;
      device->peak_gflops = gflops;
      device->ceilings_measured = TRUE;
    }
}

/* Everything after CUPTI started; the caller stops it. */
static FbProfile *
profile_with (const FbBackend *backend, FbCupti *cupti, GPtrArray *stages,
              const FbPipelineOptions *pipeline_options, GPtrArray *inputs,
              const FbProfileOptions *options, FbProfileTiming timing, GCancellable *cancellable,
              FbProfileProgress progress, gpointer data, GError **error)
{
  const FbGraph *import = ((FbStage *) g_ptr_array_index (stages, 0))->graph;
  const FbGraph *final = ((FbStage *) g_ptr_array_index (stages, stages->len - 1))->graph;
  guint iterations = options && options->iterations ? options->iterations : 50;
  guint warmup = options && options->warmup ? options->warmup : 5;
  gboolean eager = options && options->eager;
  Tagger tagger = { cupti };

  /* One module: its tagged inference launches kernel by kernel the very kernels (and library
   * algorithms, chosen once when it was made) that its graphs replay. */
  report (progress, data, 0.02, "compiling for the GPU");
  FbBackendOptions run_options = {
    .eager = eager,
    .strict_float32 = options && options->strict_float32,
    .tf32_matmul = options && options->tf32_matmul,
  };
  const FbDeviceTrace *trace = backend->device_trace;
  g_autoptr(Compiled) module = compiled_new (backend, _fb_profile_compile (backend, final, options,
                                                                           &run_options, error));
  if (module == NULL)
    return NULL;
  FbPlan *plan = backend->plan (module->compiled);
  g_autoptr(GPtrArray) own_inputs = NULL;
  if (inputs == NULL &&
      (inputs = own_inputs = _fb_profile_random_inputs (plan, options ? options->seed : 0,
                                                        error)) == NULL)
    return NULL;

  for (guint i = 0; i < warmup; i++)
    {
      report (progress, data, 0.05 + 0.05 * i / warmup, "warming up");
      if (!run_once (backend, module->compiled, inputs, cancellable, error))
        return NULL;
    }
  /* What the warm-up launched is not part of the profile. */
  g_autoptr(GArray) warm = fb_cupti_take (cupti, NULL, error);
  if (warm == NULL)
    return NULL;

  report (progress, data, 0.13, "one inference launched kernel by kernel, tagged");
  trace->set_launch_eagerly (module->compiled, TRUE);
  trace->set_launch_hook (module->compiled, tag_launch, &tagger);
  gboolean ok = run_once (backend, module->compiled, inputs, cancellable, error);
  trace->set_launch_hook (module->compiled, NULL, NULL);
  trace->set_launch_eagerly (module->compiled, eager);
  g_autoptr(GArray) reference = ok ? fb_cupti_take (cupti, NULL, error) : NULL;
  if (reference == NULL)
    return NULL;

  g_autofree guint64 *begin = g_new0 (guint64, iterations);
  g_autofree guint64 *end = g_new0 (guint64, iterations);
  if (eager)
    trace->set_launch_hook (module->compiled, tag_launch, &tagger);
  /* Timed as `run --iterations` times an unprofiled run: inputs up once, then replays only,
   * each between CUDA events that it waits for (so that the marks bracket one inference). */
  Marks marks = { cupti, begin, end, iterations, progress, data };
  g_autofree double *event_ms = g_new0 (double, iterations);
  if (ok && g_cancellable_set_error_if_cancelled (cancellable, error))
    ok = FALSE;
  g_autoptr(GPtrArray) timed = ok ? trace->run_timed_marked (module->compiled, inputs, iterations,
                                                                     event_ms, mark_iteration,
                                                                     &marks, error)
                                  : NULL;
  ok = timed != NULL;
  trace->set_launch_hook (module->compiled, NULL, NULL);
  guint dropped = 0;
  g_autoptr(GArray) all = ok ? fb_cupti_take (cupti, &dropped, error) : NULL;
  if (all == NULL)
    return NULL;

  g_autoptr(FbProfile) p = fb_profile_new ();
  describe_device (backend, &p->device);
  for (guint k = 0; k < plan->kernels->len; k++)
    g_ptr_array_add (p->kernels, make_kernel (plan, g_ptr_array_index (plan->kernels, k), k,
                                              import, &p->device));
  g_autoptr(GPtrArray) runs = fb_gpu_split_inferences (all, begin, end, iterations);
  guint unmatched = 0;
  for (guint i = 0; !eager && i < runs->len; i++)
    unmatched += fb_gpu_match_owners (reference, runs->pdata[i]);
  FbGpuUtilization traced = fb_gpu_profile_fill (p, runs, begin, end);
  timing.traced_median_ms = fb_timing_summarize (event_ms, iterations).median;
  FbGpuUtilization u = apply_untraced (p, &timing, &traced);

  if (options && options->counters)
    {
      report (progress, data, 0.9, "counting DRAM traffic (inferences replayed per counter pass)");
      g_autoptr(GPtrArray) ref_kernels = device_kernels (reference);
      g_autoptr(GError) why = NULL;
      g_autoptr(GArray) ranges = NULL;
      FbCuptiCounters *counters =
        fb_cupti_counters_start (trace->context (module->compiled),
                                 trace->device_index (module->compiled),
                                 MAX (ref_kernels->len, 1), &why);
      if (counters)
        {
          /* Kernel by kernel, in the reference's order: ranges come in launch order. One
           * inference per pass CUPTI asks for. */
          trace->set_launch_eagerly (module->compiled, TRUE);
          gboolean ran;
          int more = 1;
          do
            ran = run_once (backend, module->compiled, inputs, cancellable, &why) &&
                  (more = fb_cupti_counters_end_pass (counters, &why)) >= 0;
          while (ran && more > 0);
          trace->set_launch_eagerly (module->compiled, eager);
          ranges = fb_cupti_counters_stop (counters, NULL, ran ? &why : NULL);
          if (!ran)
            g_clear_pointer (&ranges, g_array_unref);
        }
      if (ranges)
        {
          apply_counters (p, ref_kernels, ranges);
          /* Only with the kernels' own figures, which it is there to be read beside. */
          g_autoptr(GError) whole = NULL;
          report (progress, data, 0.95, "counting the DRAM traffic of whole replays");
          if (!count_whole_replays (backend, module->compiled, inputs, &p->dram, cancellable,
                                    &whole))
            {
              char *note = g_strdup_printf ("%s%sDRAM traffic of whole replays not counted: %s",
                                            p->counters_note ? p->counters_note : "",
                                            p->counters_note ? "; " : "", whole->message);
              g_free (p->counters_note);
              p->counters_note = note;
            }
        }
      else
        p->counters_note = g_strdup_printf ("%s; DRAM bytes are modeled",
                                            why ? why->message : "counters could not be had");
    }
  for (guint k = 0; k < p->kernels->len; k++)
    _fb_profile_place_on_roofline (p->kernels->pdata[k], &p->device);
  if (dropped || unmatched)
    {
      char *note = g_strdup_printf ("%s%s%u activity records dropped by CUPTI, %u replayed "
                                    "kernels not matched to a plan kernel",
                                    p->counters_note ? p->counters_note : "",
                                    p->counters_note ? "; " : "", dropped, unmatched);
      g_free (p->counters_note);
      p->counters_note = note;
    }

  p->model = final->model->path ? g_path_get_basename (final->model->path) : g_strdup ("model");
  p->model_digest = fb_profile_model_digest (final->model);
  p->target = g_strdup (backend->name);
  if (pipeline_options)
    {
      fb_pipeline_options_free (p->pipeline);
      p->pipeline = fb_pipeline_options_copy (pipeline_options);
    }
  _fb_profile_find_folded (p, stages);
  _fb_profile_diagnose (p, final);
  /* The utilization lines first: why the GPU is idle is what a GPU profile is for. */
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  fb_gpu_utilization_diagnose (&u, lines);
  for (guint i = lines->len; i-- > 0;)
    g_ptr_array_insert (p->diagnosis, 0, g_steal_pointer (&lines->pdata[i]));
  report (progress, data, 1, "done");
  return g_steal_pointer (&p);
}

/* What would refuse CUPTI after the untraced replays refuses before them: a build without
 * CUPTI, as CUPTI says it, or a machine without the target's driver or device, as the target
 * says it. (Starting CUPTI to ask would load it into the untraced replays' process.) */
static gboolean
can_trace (const FbBackend *backend, GError **error)
{
  if (!fb_cupti_available ())
    {
      FbCupti *none = fb_cupti_start (error);
      g_assert (none == NULL);
      return FALSE;
    }
  g_autoptr(GError) local = NULL;
  g_autofree char *device = backend->describe_device (backend, &local);
  if (device == NULL)
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE, "%s", local->message);
      return FALSE;
    }
  return TRUE;
}

FbProfile *
_fb_profile_run_traced (const FbBackend *backend, GPtrArray *stages,
                        const FbPipelineOptions *pipeline_options, GPtrArray *inputs,
                        const FbProfileOptions *options, GCancellable *cancellable,
                        FbProfileProgress progress, gpointer data, GError **error)
{
  const FbGraph *final = ((FbStage *) g_ptr_array_index (stages, stages->len - 1))->graph;
  FbBackendOptions run_options = {
    .eager = options && options->eager,
    .strict_float32 = options && options->strict_float32,
    .tf32_matmul = options && options->tf32_matmul,
  };
  FbProfileTiming timing = { 0 };
  if (!can_trace (backend, error))
    return NULL;
  report (progress, data, 0.01, "timing untraced replays");
  if (!time_untraced (backend, final, &run_options, inputs, options,
                      options && options->iterations ? options->iterations : 50,
                      options && options->warmup ? options->warmup : 5, &timing, cancellable,
                      error))
    return NULL;

  /* CUPTI before the traced module's CUDA context, so that it sees everything. */
  report (progress, data, 0.03, "starting CUPTI");
  FbCupti *cupti = fb_cupti_start (error);
  if (cupti == NULL)
    return NULL;
  FbProfile *p = profile_with (backend, cupti, stages, pipeline_options, inputs, options, timing,
                               cancellable, progress, data, error);
  fb_cupti_stop (cupti);
  return p;
}
