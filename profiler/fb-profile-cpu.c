/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fb_profile_run on a target with host-clock timing (FbBackend.host_timing: the cpu target):
 * compile the final stage as `run --target` does, run it warm-up times untimed and then N
 * times with the target's timing on (one clock read per kernel, two per thread per parallel
 * phase), and turn the samples into a profile: per kernel its median/min/max, the busy time of
 * each worker, modeled bytes and flops, its place on the roofline of the measured ceilings,
 * hardware counters where the machine allows, and the timeline of the inference whose wall
 * time was the median. */
#include "fb-profile-private.h"
#include "fb-cost.h"
#include "fb-bundle.h"
#include "fb-timing.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

typedef struct {
  guint       n;                /* timed inferences */
  guint       n_kernels;
  guint       n_threads;
  double     *wall_ms;          /* n */
  double     *kernel_ms;        /* n x kernels */
  double     *start_ms;         /* n x kernels */
  double     *busy_ms;          /* n x kernels x threads */
  double     *first_ms;         /* n x kernels x threads */
  double     *last_ms;
  gboolean   *pooled;           /* kernels (the same every run) */
  gboolean   *self_threaded;
  double     *counters;         /* n x kernels x FB_PERF_N_EVENTS, or NULL */
  double     *current;          /* the counters of the inference running now */
  FbPerf     *perf;
} Samples;

static void
samples_clear (Samples *s)
{
  g_free (s->wall_ms);
  g_free (s->kernel_ms);
  g_free (s->start_ms);
  g_free (s->busy_ms);
  g_free (s->first_ms);
  g_free (s->last_ms);
  g_free (s->pooled);
  g_free (s->self_threaded);
  g_free (s->counters);
  _fb_perf_close (s->perf);
}

static void
count_kernel (guint kernel, gboolean after, gpointer data)
{
  Samples *s = data;
  if (!after)
    _fb_perf_begin (s->perf);
  else
    _fb_perf_end (s->perf, s->current + (gsize) kernel * FB_PERF_N_EVENTS);
}

/* Seeded inputs of the compiled shapes: floats in [-1, 1), integers 0 or 1 (valid as indices
 * and as counts for any tensor of at least two elements), booleans at random. */
GPtrArray *
_fb_profile_random_inputs (const FbPlan *plan, guint64 seed, GError **error)
{
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_autoptr(GRand) rand = g_rand_new_with_seed ((guint32) (seed ^ (seed >> 32)));
  for (guint i = 0; i < plan->inputs->len; i++)
    {
      const FbBuffer *b = fb_plan_buffer (plan, g_array_index (plan->inputs, guint, i));
      if (b->dynamic)
        {
          g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
                       "input '%s' has a size only known at run time: give inputs or pin its "
                       "shape with --input-shape", b->name);
          return NULL;
        }
      FbTensor *t = fb_tensor_new (b->dtype, b->rank, b->dims, error);
      if (t == NULL)
        return NULL;
      g_ptr_array_add (inputs, t);
      for (int64_t k = 0; k < t->numel; k++)
        fb_tensor_set_f64 (t, k, fb_dtype_is_float (b->dtype) ? g_rand_double_range (rand, -1, 1)
                                                              : g_rand_int_range (rand, 0, 2));
    }
  return g_steal_pointer (&inputs);
}

static double
median_of (const double *v, guint n, gsize stride)
{
  g_autofree double *tmp = g_new (double, n);
  for (guint i = 0; i < n; i++)
    tmp[i] = v[i * stride];
  return fb_timing_summarize (tmp, n).median;
}

FbProfileKernelKind
_fb_profile_kernel_kind (const FbKernel *k)
{
  if (k->kind == FB_KERNEL_HOST)
    return FB_PROFILE_KERNEL_HOST;
  if (k->kind == FB_KERNEL_LIBRARY)
    return FB_PROFILE_KERNEL_LIBRARY;
  for (guint p = 0; p < k->phases->len; p++)
    if (((FbKPhase *) g_ptr_array_index (k->phases, p))->conv)
      return FB_PROFILE_KERNEL_LIBRARY;
  return FB_PROFILE_KERNEL_GENERATED;
}

/* Bytes each distinct buffer of the kernel moves: inputs read, outputs written, scratch both. */
void
_fb_profile_kernel_bytes (const FbPlan *plan, const FbKernel *k, guint64 *read, guint64 *written)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  *read = *written = 0;
  for (guint a = 0; a < k->args->len; a++)
    {
      const FbKArg *arg = &g_array_index (k->args, FbKArg, a);
      guint root = fb_plan_root (plan, arg->buffer);
      if (!g_hash_table_add (seen, GUINT_TO_POINTER (root + 1)))
        continue;
      guint64 n = (guint64) MAX (0, fb_plan_buffer (plan, arg->buffer)->nbytes);
      if (arg->role == FB_KARG_INPUT)
        *read += n;
      else if (arg->role == FB_KARG_OUTPUT)
        *written += n;
      else
        {
          *read += n;
          *written += n;
        }
    }
}

void
_fb_profile_place_on_roofline (FbProfileKernel *k, const FbProfileDevice *d)
{
  double bytes = (double) (k->bytes_read + k->bytes_written);
  double seconds = k->median_us * 1e-6;
  double intensity = bytes > 0 ? k->flops / bytes : INFINITY;
  k->bound = FB_BOUND_MEMORY;
  k->roofline_share = 0;
  if (d->peak_gflops <= 0 || d->peak_gbps <= 0 || seconds <= 0)
    return;
  if (k->flops > 0 && intensity >= d->peak_gflops / d->peak_gbps)
    k->bound = FB_BOUND_COMPUTE;
  double share;
  if (k->flops <= 0)
    share = bytes / seconds / 1e9 / d->peak_gbps;
  else
    share = k->flops / seconds / 1e9 / MIN (d->peak_gflops, intensity * d->peak_gbps);
  /* Above 1 only when the data stayed in cache: the DRAM roof does not bound it. */
  k->roofline_share = CLAMP (share, 0, 1);
}

/* Original top-level nodes that no kernel runs as a node of its own, with the pass that
 * removed them. Two kinds: nodes a pass removed (a folded Constant, a removed Identity, a
 * duplicate merged by cse: FB_CHANGE_REMOVED in that stage's diff, keyed on the import
 * stage's node id), whose provenance may live on in the node that absorbed them; and nodes
 * whose provenance no kernel carries at all, named after the first stage where no node held
 * them ("lower" when the final stage still did). */
void
_fb_profile_find_folded (FbProfile *p, GPtrArray *stages)
{
  const FbGraph *import = ((FbStage *) g_ptr_array_index (stages, 0))->graph;
  FbModel *model = import->model;
  g_autoptr(GHashTable) run = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) orig_of = g_hash_table_new (NULL, NULL);   /* import node id -> o + 1 */
  g_autoptr(GHashTable) removed_by = g_hash_table_new (NULL, NULL); /* o + 1 -> stage name */
  for (guint i = 0; i < p->kernels->len; i++)
    {
      FbProfileKernel *k = g_ptr_array_index (p->kernels, i);
      for (guint j = 0; j < k->nodes->len; j++)
        g_hash_table_add (run, g_ptr_array_index (k->nodes, j));
    }
  for (guint i = 0; i < import->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (import->nodes, i);
      if (n->n_prov == 1)
        g_hash_table_insert (orig_of, GUINT_TO_POINTER (n->id), GUINT_TO_POINTER (n->prov[0] + 1));
    }
  g_autoptr(GPtrArray) held = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref);
  for (guint s = 0; s < stages->len; s++)
    {
      const FbStage *st = g_ptr_array_index (stages, s);
      GHashTable *set = g_hash_table_new (NULL, NULL);
      for (guint i = 0; i < st->graph->nodes->len; i++)
        {
          const FbNode *n = g_ptr_array_index (st->graph->nodes, i);
          for (guint j = 0; j < n->n_prov; j++)
            g_hash_table_add (set, GUINT_TO_POINTER (n->prov[j] + 1));
        }
      g_ptr_array_add (held, set);
      for (guint c = 0; s > 0 && st->changes && c < st->changes->len; c++)
        {
          const FbChange *ch = &g_array_index (st->changes, FbChange, c);
          gpointer o = g_hash_table_lookup (orig_of, GUINT_TO_POINTER (ch->node_id));
          if (ch->kind == FB_CHANGE_REMOVED && o && !g_hash_table_contains (removed_by, o))
            g_hash_table_insert (removed_by, o, st->name);
        }
    }
  for (guint o = 0; o < model->n_top_nodes; o++)
    {
      const char *name = fb_model_orig_name (model, o);
      const char *by = g_hash_table_lookup (removed_by, GUINT_TO_POINTER (o + 1));
      if (name == NULL || (by == NULL && g_hash_table_contains (run, name)))
        continue;
      for (guint s = 1; by == NULL && s < stages->len; s++)
        if (!g_hash_table_contains (g_ptr_array_index (held, s), GUINT_TO_POINTER (o + 1)))
          by = ((FbStage *) g_ptr_array_index (stages, s))->name;
      FbProfileFolded f = { g_strdup (name), g_strdup (by ? by : "lower") };
      g_array_append_val (p->folded, f);
    }
}

/* The inference whose wall time is closest to the median. */
static guint
median_run (const Samples *s)
{
  double median = fb_timing_summarize (s->wall_ms, s->n).median;
  guint best = 0;
  for (guint i = 1; i < s->n; i++)
    if (fabs (s->wall_ms[i] - median) < fabs (s->wall_ms[best] - median))
      best = i;
  return best;
}

static void
fill_timeline (FbProfile *p, const Samples *s, guint run)
{
  gsize K = s->n_kernels, T = s->n_threads;
  for (guint k = 0; k < K; k++)
    {
      double start = s->start_ms[run * K + k], ms = s->kernel_ms[run * K + k];
      if (!s->pooled[k] || T == 1)
        {
          FbProfileSpan span = { k, start * 1e3, (start + ms) * 1e3, 0 };
          g_array_append_val (p->timeline, span);
          continue;
        }
      for (guint t = 0; t < T; t++)
        {
          gsize at = (run * K + k) * T + t;
          if (s->first_ms[at] < 0)
            continue;
          FbProfileSpan span = { k, s->first_ms[at] * 1e3, s->last_ms[at] * 1e3, t };
          g_array_append_val (p->timeline, span);
        }
    }
}

static FbProfileKernel *
make_kernel (const FbPlan *plan, const FbKernel *kernel, guint k, const Samples *s,
             const FbGraph *import, const FbProfileDevice *device)
{
  gsize K = s->n_kernels, T = s->n_threads;
  FbProfileKernel *pk = fb_profile_kernel_new ();
  g_autofree double *us = g_new (double, s->n);
  for (guint i = 0; i < s->n; i++)
    us[i] = s->kernel_ms[i * K + k] * 1e3;
  FbTimingStats st = fb_timing_summarize (us, s->n);

  pk->id = k;
  pk->name = g_strdup (kernel->name);
  pk->kind = _fb_profile_kernel_kind (kernel);
  pk->stage_node = kernel->node_id;
  for (guint i = 0; i < kernel->prov_names->len; i++)
    g_ptr_array_add (pk->nodes, g_strdup (g_array_index (kernel->prov_names, char *, i)));
  pk->calls = 1;                /* the CPU executor runs each kernel once per inference */
  pk->median_us = st.median;
  pk->min_us = st.min;
  pk->max_us = st.max;
  _fb_profile_kernel_bytes (plan, kernel, &pk->bytes_read, &pk->bytes_written);
  pk->bytes_source = FB_BYTES_MODELED;
  pk->flops = kernel->node ? fb_node_cost (kernel->node).flops : kernel->flops;
  _fb_profile_place_on_roofline (pk, device);
  fb_profile_kernel_split_by_cost (pk, import, device);
  /* Per-worker busy time only where the pool ran it: oneDNN's own threading is invisible. */
  if (s->pooled[k] && !s->self_threaded[k] && T > 1)
    for (guint t = 0; t < T; t++)
      {
        double busy = median_of (s->busy_ms + k * T + t, s->n, K * T) * 1e3;
        g_array_append_val (pk->worker_busy_us, busy);
      }
  if (s->counters)
    {
      pk->counters.cycles = median_of (s->counters + k * FB_PERF_N_EVENTS + 0, s->n, K * FB_PERF_N_EVENTS);
      pk->counters.instructions = median_of (s->counters + k * FB_PERF_N_EVENTS + 1, s->n, K * FB_PERF_N_EVENTS);
      pk->counters.llc_misses = median_of (s->counters + k * FB_PERF_N_EVENTS + 2, s->n, K * FB_PERF_N_EVENTS);
    }
  return pk;
}

static void
report (FbProfileProgress progress, gpointer data, double fraction, const char *what)
{
  if (progress)
    progress (CLAMP (fraction, 0, 1), what, data);
}

static gboolean
take_sample (const FbHostTiming *hooks, FbCompiled *compiled, Samples *s, guint i, double wall_ms)
{
  FbKernelTiming t;
  gsize K = s->n_kernels, T = s->n_threads;
  if (!hooks->timing (compiled, &t) || t.n_kernels != K || t.n_threads != T)
    return FALSE;
  s->wall_ms[i] = wall_ms;
  memcpy (s->kernel_ms + i * K, t.kernel_ms, K * sizeof (double));
  memcpy (s->start_ms + i * K, t.start_ms, K * sizeof (double));
  memcpy (s->busy_ms + i * K * T, t.busy_ms, K * T * sizeof (double));
  memcpy (s->first_ms + i * K * T, t.first_ms, K * T * sizeof (double));
  memcpy (s->last_ms + i * K * T, t.last_ms, K * T * sizeof (double));
  for (guint k = 0; k < K; k++)
    {
      s->pooled[k] = s->pooled[k] || t.pooled[k];
      s->self_threaded[k] = s->self_threaded[k] || t.self_threaded[k];
    }
  return TRUE;
}

/* Profiles a compiled model of backend, a target with host-clock timing. stages: the pipeline
 * that made it, or NULL for a bundle (no folded nodes then, and shares split equally: the
 * original graph is not in a bundle). */
static FbProfile *
profile_module (const FbBackend *backend, FbCompiled *compiled, GPtrArray *stages,
                const FbPipelineOptions *pipeline_options, GPtrArray *inputs,
                const FbProfileOptions *options, GCancellable *cancellable,
                FbProfileProgress progress, gpointer data, GError **error)
{
  const FbHostTiming *hooks = backend->host_timing;
  FbPlan *plan = backend->plan (compiled);
  const FbGraph *import = stages ? ((FbStage *) g_ptr_array_index (stages, 0))->graph : NULL;
  const FbGraph *final = plan->graph;
  guint iterations = options && options->iterations ? options->iterations : 50;
  guint warmup = options && options->warmup ? options->warmup : 5;
  g_autoptr(GPtrArray) own_inputs = NULL;
  g_autoptr(FbProfile) p = fb_profile_new ();
  Samples s = { 0 };

  if (inputs == NULL)
    inputs = own_inputs = _fb_profile_random_inputs (plan, options ? options->seed : 0, error);
  if (inputs == NULL)
    return NULL;

  s.n = iterations;
  s.n_kernels = plan->kernels->len;
  s.n_threads = hooks->n_threads (compiled);
  report (progress, data, 0.02, "measuring the machine's ceilings");
  _fb_profile_cpu_ceilings (s.n_threads, hooks->threads_source (compiled), &p->device);
  gsize K = s.n_kernels, T = s.n_threads;
  s.wall_ms = g_new0 (double, s.n);
  s.kernel_ms = g_new0 (double, s.n * K + 1);
  s.start_ms = g_new0 (double, s.n * K + 1);
  s.busy_ms = g_new0 (double, s.n * K * T + 1);
  s.first_ms = g_new0 (double, s.n * K * T + 1);
  s.last_ms = g_new0 (double, s.n * K * T + 1);
  s.pooled = g_new0 (gboolean, K + 1);
  s.self_threaded = g_new0 (gboolean, K + 1);
  if (options && options->counters)
    {
      s.perf = _fb_perf_open (s.n_threads, FALSE, &p->counters_note);
      if (s.perf)
        {
          s.counters = g_new0 (double, s.n * K * FB_PERF_N_EVENTS + 1);
          hooks->set_kernel_hook (compiled, count_kernel, &s);
        }
    }

  hooks->set_timing (compiled, TRUE);
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < warmup + iterations; i++)
    {
      gboolean timed = i >= warmup;
      g_autofree char *what = timed ? g_strdup_printf ("inference %u of %u", i - warmup + 1, iterations)
                                    : g_strdup_printf ("warming up (%u of %u)", i + 1, warmup);
      report (progress, data, 0.05 + 0.95 * i / (warmup + iterations), what);
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          ok = FALSE;
          break;
        }
      if (s.counters)
        s.current = s.counters + (gsize) (timed ? i - warmup : 0) * K * FB_PERF_N_EVENTS;
      if (s.counters && timed)
        memset (s.current, 0, K * FB_PERF_N_EVENTS * sizeof (double));
      double t0 = fb_timing_now_ms ();
      g_autoptr(GPtrArray) outputs = backend->run (compiled, inputs, cancellable, error);
      double wall = fb_timing_now_ms () - t0;
      if (outputs == NULL)
        ok = FALSE;
      else if (timed && !take_sample (hooks, compiled, &s, i - warmup, wall))
        {
          g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_FAILED,
                       "the %s target did not time the run", backend->name);
          ok = FALSE;
        }
    }
  hooks->set_kernel_hook (compiled, NULL, NULL);
  if (!ok)
    {
      samples_clear (&s);
      return NULL;
    }
  report (progress, data, 1, "summarizing");

  if (stages)
    {
      p->model = final->model->path ? g_path_get_basename (final->model->path) : g_strdup ("model");
      p->model_digest = fb_profile_model_digest (final->model);
    }
  p->target = g_strdup (backend->name);
  if (pipeline_options)
    {
      fb_pipeline_options_free (p->pipeline);
      p->pipeline = fb_pipeline_options_copy (pipeline_options);
    }
  p->iterations = iterations;
  FbTimingStats wall = fb_timing_summarize (s.wall_ms, s.n);
  p->wall_median_ms = wall.median;
  p->wall_min_ms = wall.min;
  p->wall_max_ms = wall.max;
  g_autofree double *busy = g_new0 (double, s.n);
  for (guint i = 0; i < s.n; i++)
    for (guint k = 0; k < K; k++)
      busy[i] += s.kernel_ms[i * K + k];
  p->busy_ms = fb_timing_summarize (busy, s.n).median;
  for (guint k = 0; k < K; k++)
    g_ptr_array_add (p->kernels, make_kernel (plan, g_ptr_array_index (plan->kernels, k), k, &s,
                                              import, &p->device));
  if (stages)
    _fb_profile_find_folded (p, stages);
  fill_timeline (p, &s, median_run (&s));
  _fb_profile_diagnose (p, final);
  samples_clear (&s);
  return g_steal_pointer (&p);
}

FbProfile *
_fb_profile_run_host (const FbBackend *backend, GPtrArray *stages,
                      const FbPipelineOptions *pipeline_options, GPtrArray *inputs,
                      const FbProfileOptions *options, GCancellable *cancellable,
                      FbProfileProgress progress, gpointer data, GError **error)
{
  const FbGraph *final = ((FbStage *) g_ptr_array_index (stages, stages->len - 1))->graph;
  FbBackendOptions compile_options = { .n_threads = options ? options->n_threads : 0 };
  report (progress, data, 0, "compiling the final stage");
  FbCompiled *compiled = _fb_profile_compile (backend, final, options, &compile_options, error);
  if (compiled == NULL)
    return NULL;
  FbProfile *p = NULL;
  if (!g_cancellable_set_error_if_cancelled (cancellable, error))
    p = profile_module (backend, compiled, stages, pipeline_options, inputs, options,
                        cancellable, progress, data, error);
  backend->free (compiled);
  return p;
}

/* The model a bundle was compiled from, as its manifest says, or NULL. */
static char *
bundle_source (const char *path)
{
  g_autofree char *manifest = g_build_filename (path, "manifest.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, manifest, NULL))
    return NULL;
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  JsonNode *n = json_object_get_member (json_node_get_object (root), "source");
  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING ||
      *json_node_get_string (n) == '\0')
    return NULL;
  return g_strdup (json_node_get_string (n));
}

FbProfile *
fb_profile_run_bundle (const FbBackend *backend, const char *path, GPtrArray *inputs,
                       const FbProfileOptions *options, GCancellable *cancellable,
                       FbProfileProgress progress, gpointer data, GError **error)
{
  g_return_val_if_fail (backend != NULL && path != NULL, NULL);
  if (!fb_profile_supports_bundles (backend))
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
                   "%s: a bundle of the %s target cannot be profiled", path, backend->name);
      return NULL;
    }
  report (progress, data, 0, "loading the bundle");
  FbBackendOptions load_options = { .n_threads = options ? options->n_threads : 0 };
  FbCompiled *compiled = backend->load_bundle (backend, path, &load_options, error);
  if (compiled == NULL)
    return NULL;
  FbProfile *p = profile_module (backend, compiled, NULL, NULL, inputs, options, cancellable,
                                 progress, data, error);
  backend->free (compiled);
  if (p != NULL)
    {
      g_autofree char *source = bundle_source (path);
      p->model = source ? g_path_get_basename (source) : g_path_get_basename (path);
    }
  return p;
}
