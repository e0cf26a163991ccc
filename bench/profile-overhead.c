/* SPDX-License-Identifier: GPL-3.0-or-later */
/* profile-overhead MODEL... [--rounds N] [--per-round N] [--threads N] [--input-shape NAME=SHAPE ...]
 *
 * What profiling costs: the whole-model median of plain runs (what `run --iterations` times)
 * against runs in the profiler's timing mode (a clock read per kernel, two per thread per
 * parallel phase), on the same compiled module and the same seeded inputs. The two alternate in rounds, in swapped order
 * every other round, so that a change of the machine's load hits both alike; the load average
 * is printed before and after, since the machine may be shared. Beside the medians: the median
 * of each round's own ratio, and the instrument's cost free of noise (its clock reads per run
 * at the best measured cost of one read). Models that do not compile for the CPU are reported
 * and skipped. */
#include "fb-onnx-import.h"
#include "fb-pipeline.h"
#include "fb-cpu.h"
#include "fb-timing.h"
#include "fb-worker-pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static GPtrArray *
inputs_for (const FbPlan *plan, GError **error)
{
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_autoptr(GRand) rand = g_rand_new_with_seed (1);
  for (guint i = 0; i < plan->inputs->len; i++)
    {
      const FbBuffer *b = fb_plan_buffer (plan, g_array_index (plan->inputs, guint, i));
      FbTensor *t = fb_tensor_new (b->dtype, b->rank, b->dims, error);
      if (t == NULL)
        return NULL;
      for (int64_t k = 0; k < t->numel; k++)
        fb_tensor_set_f64 (t, k, fb_dtype_is_float (b->dtype) ? g_rand_double_range (rand, -1, 1)
                                                              : g_rand_int_range (rand, 0, 2));
      g_ptr_array_add (inputs, t);
    }
  return g_steal_pointer (&inputs);
}

/* What one read of the runtime's clock costs, in ns: the best of short batches, since a long
 * loop on a shared machine counts the other processes' time too. */
static double
clock_read_ns (void)
{
  volatile double sink = 0;
  double best = G_MAXDOUBLE;
  for (int batch = 0; batch < 200; batch++)
    {
      double t0 = fb_worker_pool_now_ms ();
      for (int i = 0; i < 1000; i++)
        sink += fb_worker_pool_now_ms ();
      best = MIN (best, (fb_worker_pool_now_ms () - t0) * 1e6 / 1000);
    }
  return best + 0 * sink;
}

static char *
load_average (void)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/loadavg", &text, NULL, NULL))
    return g_strdup ("?");
  char **parts = g_strsplit (text, " ", 2);
  char *first = g_strdup (parts[0]);
  g_strfreev (parts);
  return first;
}

static int
bench_model (const char *path, int rounds, int per_round, int threads, GHashTable *shapes)
{
  g_autoptr(GError) error = NULL;
  /* The shapes of the inputs this model has (import refuses names it lacks). */
  g_autoptr(GHashTable) own = g_hash_table_new (g_str_hash, g_str_equal);
  FbGraph *graph = fb_onnx_import_file (path, NULL, &error);
  for (guint i = 0; graph && i < graph->inputs->len; i++)
    {
      const char *name = ((FbValue *) g_ptr_array_index (graph->inputs, i))->name;
      if (g_hash_table_contains (shapes, name))
        g_hash_table_insert (own, (gpointer) name, g_hash_table_lookup (shapes, name));
    }
  if (graph && g_hash_table_size (own) > 0)
    {
      FbGraph *pinned = fb_onnx_import_file (path, own, &error);
      fb_graph_free (graph);
      graph = pinned;
    }
  if (graph == NULL)
    {
      printf ("%-40s skipped: %s\n", path, error->message);
      return 0;
    }
  g_autoptr(FbPipeline) pipeline = fb_pipeline_new (graph);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = FB_LAYOUT_NHWC;      /* what the cpu target's commands use by default */
  g_autoptr(FbCpuModule) cpu = NULL;
  g_autoptr(GPtrArray) inputs = NULL;
  if (!fb_pipeline_run (pipeline, options, NULL, NULL, NULL, &error) ||
      (cpu = fb_cpu_compile (fb_pipeline_final (pipeline), (guint) threads, &error)) == NULL ||
      (inputs = inputs_for (fb_cpu_module_plan (cpu), &error)) == NULL)
    {
      printf ("%-40s skipped: %s\n", path, error->message);
      return 0;
    }
  g_autofree double *plain = g_new (double, rounds * per_round);
  g_autofree double *timed = g_new (double, rounds * per_round);
  for (int i = 0; i < 5; i++)
    {
      g_autoptr(GPtrArray) out = fb_cpu_module_run (cpu, inputs, NULL, &error);
      if (out == NULL)
        {
          printf ("%-40s failed: %s\n", path, error->message);
          return 1;
        }
    }
  for (int r = 0; r < rounds; r++)
    for (int half = 0; half < 2; half++)
      {
        gboolean profiled = (half == 0) == (r % 2 == 1);
        fb_cpu_module_set_timing (cpu, profiled);
        for (int i = 0; i < per_round; i++)
          {
            double t0 = fb_timing_now_ms ();
            g_autoptr(GPtrArray) out = fb_cpu_module_run (cpu, inputs, NULL, &error);
            double ms = fb_timing_now_ms () - t0;
            if (out == NULL)
              {
                printf ("%-40s failed: %s\n", path, error->message);
                return 1;
              }
            (profiled ? timed : plain)[r * per_round + i] = ms;
          }
      }
  FbTimingStats a = fb_timing_summarize (plain, rounds * per_round);
  FbTimingStats b = fb_timing_summarize (timed, rounds * per_round);
  /* Each round's own ratio too: adjacent runs share the machine's load of the moment. */
  g_autofree double *ratio = g_new (double, rounds);
  for (int r = 0; r < rounds; r++)
    ratio[r] = fb_timing_summarize (timed + r * per_round, per_round).median /
               fb_timing_summarize (plain + r * per_round, per_round).median;
  /* The instrument's own cost, free of the machine's noise: its clock reads (one per kernel,
   * two per thread and two more per pooled kernel, counted per kernel: a lower bound where a
   * kernel has several pooled phases) at what one read costs here. */
  FbKernelTiming timing;
  double reads = 0;
  fb_cpu_module_set_timing (cpu, TRUE);
  g_autoptr(GPtrArray) last = fb_cpu_module_run (cpu, inputs, NULL, NULL);
  if (last && fb_cpu_module_timing (cpu, &timing))
    for (guint k = 0; k < timing.n_kernels; k++)
      reads += 1 + (timing.pooled[k] ? 2.0 * timing.n_threads + 2 : 0);
  double clock_ns = clock_read_ns ();
  printf ("%-40s %5u kernels  run %9.3f ms  profiled %9.3f ms  overhead %+6.2f %% "
          "(median of rounds %+6.2f %%; %.0f clock reads x %.0f ns = %.2f %%)\n", path,
          fb_cpu_module_plan (cpu)->kernels->len, a.median, b.median,
          100.0 * (b.median / a.median - 1), 100.0 * (fb_timing_summarize (ratio, rounds).median - 1),
          reads, clock_ns, 100.0 * reads * clock_ns * 1e-6 / a.median);
  return 0;
}

int
main (int argc, char **argv)
{
  int rounds = 20, per_round = 5, threads = 0;
  g_auto(GStrv) shape_specs = NULL;
  g_autoptr(GHashTable) shapes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  const GOptionEntry entries[] = {
    { "rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Alternations of plain and profiled runs (20)", "N" },
    { "per-round", 0, 0, G_OPTION_ARG_INT, &per_round, "Runs of each kind per round (5)", "N" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads, "Threads (default: one per core)", "N" },
    { "input-shape", 0, 0, G_OPTION_ARG_STRING_ARRAY, &shape_specs,
      "Pin a dynamic input of any model that has it (repeatable)", "NAME=SHAPE" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("MODEL... — the cost of profiling");
  g_autoptr(GError) error = NULL;
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc < 2 || rounds < 1 ||
      per_round < 1 || threads < 0)
    {
      fprintf (stderr, "profile-overhead: %s\n", error ? error->message : "expected MODEL... (see --help)");
      return 2;
    }
  for (guint i = 0; shape_specs && shape_specs[i]; i++)
    {
      const char *eq = strrchr (shape_specs[i], '=');
      FbShape shape;
      if (eq == NULL || !fb_shape_parse (eq + 1, &shape, &error))
        {
          fprintf (stderr, "profile-overhead: --input-shape '%s': expected NAME=1x3x8x8\n", shape_specs[i]);
          return 2;
        }
      g_hash_table_insert (shapes, g_strndup (shape_specs[i], eq - shape_specs[i]),
                           g_memdup2 (&shape, sizeof shape));
    }
  g_autofree char *before = load_average ();
  printf ("load average %s; %d rounds of %d plain and %d profiled runs each\n", before, rounds,
          per_round, per_round);
  int status = 0;
  for (int i = 1; i < argc; i++)
    status |= bench_model (argv[i], rounds, per_round, threads, shapes);
  g_autofree char *after = load_average ();
  printf ("load average %s\n", after);
  return status;
}
