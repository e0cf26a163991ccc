/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cpu-kernel-bench MODEL [--runs N] [--min] [--cpu-time] [--outputs] [--layout nchw|nhwc] [--input-shape NAME=AxB ...]
 * cpu-kernel-bench MODEL --show KERNEL [--asm]
 *
 * Where the CPU target's time goes: compiles MODEL for the CPU, runs it N times on zeroed
 * inputs (the values do not change the work of a float model) with per-kernel timing, and
 * prints every kernel's median time, its share of the summed medians and its label (what it
 * does: "Conv 1x1 + Clip (sgemm)"), largest first, then the median of whole runs. Whole runs
 * are timed in separate, untimed-per-kernel runs, so the clock reads do not inflate them.
 * GB/s is each kernel's modeled bytes (read + written) over its time; the last line gives the
 * machine's copy bandwidth measured the same way (a 64 MiB memcpy split over the same number
 * of threads, best of 5), the ceiling a transpose, concat or resize can reach.
 * --min gives each kernel's fastest run instead of its median: on a machine shared with other
 * work, the run nothing preempted, closer to the quiet machine's time for kernels shorter than
 * a scheduler slice. --cpu-time times each kernel by the processor time the process spent in
 * it instead of the clock: what the kernel's work costs, whatever else the machine runs (with
 * --threads 1, or with OMP_WAIT_POLICY=passive so that waiting threads sleep rather than spin;
 * GFLOP/s is then per core). --outputs adds the ONNX names of each kernel's outputs, the names
 * ort-profile.js's rows carry, to pair the two profiles.
 * --show prints one kernel's IR and its optimized LLVM IR (or assembly) instead: is that loop
 * vectorized? */
#include "fb-codegen.h"
#include "fb-cpu-threads.h"
#include "fb-onnx-import.h"
#include "fb-pipeline.h"
#include "fb-cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  char       *dst;
  const char *src;
  gsize       n;
} CopyPart;

static gpointer
copy_part (gpointer data)
{
  CopyPart *p = data;
  memcpy (p->dst, p->src, p->n);
  return NULL;
}

/* Bytes read and written per second by memcpy over threads threads, best of 5, in GB/s. */
static double
copy_bandwidth (guint threads)
{
  const gsize n = (gsize) 64 << 20;
  g_autofree char *src = g_malloc (n), *dst = g_malloc (n);
  memset (src, 1, n);
  memset (dst, 0, n);           /* the pages are the kernel's before the clock starts */
  double best = 0;
  threads = CLAMP (threads, 1, 64);
  CopyPart parts[64];
  GThread *workers[64];
  for (int r = 0; r < 5; r++)
    {
      gint64 t0 = g_get_monotonic_time ();
      for (guint t = 0; t < threads; t++)
        {
          gsize lo = n / threads * t, hi = t + 1 == threads ? n : n / threads * (t + 1);
          parts[t] = (CopyPart) { dst + lo, src + lo, hi - lo };
          workers[t] = t ? g_thread_new ("copy", copy_part, &parts[t]) : NULL;
        }
      copy_part (&parts[0]);
      for (guint t = 1; t < threads; t++)
        g_thread_join (workers[t]);
      double s = (g_get_monotonic_time () - t0) / 1e6;
      if (s > 0)
        best = MAX (best, 2.0 * n / s / 1e9);
    }
  return best;
}

/* Processor time of the whole process, in ms. */
static double
process_cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct {
  double *ms;                   /* per kernel, this run */
  double  start;
} CpuClock;

static void
cpu_clock_hook (guint kernel, gboolean after, gpointer data)
{
  CpuClock *clock = data;
  double now = process_cpu_ms ();
  if (after)
    clock->ms[kernel] = now - clock->start;
  else
    clock->start = now;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (double *v, int n)
{
  qsort (v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double
minimum (const double *v, int n)
{
  double m = v[0];
  for (int i = 1; i < n; i++)
    m = MIN (m, v[i]);
  return m;
}

/* The graph names of the values kernel writes, without the "#id" the plan appends. */
static char *
output_names (const FbKernel *kernel, const FbPlan *plan)
{
  GString *s = g_string_new (NULL);
  for (guint a = 0; a < kernel->args->len; a++)
    {
      const FbKArg *arg = &g_array_index (kernel->args, FbKArg, a);
      if (arg->role != FB_KARG_OUTPUT || arg->name == NULL)
        continue;
      const char *hash = strrchr (arg->name, '#');
      g_string_append_printf (s, "%s%.*s", s->len ? "," : "",
                              (int) (hash ? hash - arg->name : (ptrdiff_t) strlen (arg->name)),
                              arg->name);
    }
  return g_string_free (s, FALSE);
}

typedef struct {
  guint  index;
  double ms;
} Row;

static int
compare_rows (const void *a, const void *b)
{
  double x = ((const Row *) a)->ms, y = ((const Row *) b)->ms;
  return x > y ? -1 : x < y;
}

static int
fail (const GError *error)
{
  fprintf (stderr, "cpu-kernel-bench: %s\n", error->message);
  return 1;
}

int
main (int argc, char **argv)
{
  int runs = 50, threads = 0;
  g_autofree char *layout = NULL;
  g_auto(GStrv) shapes = NULL;
  g_autofree char *show = NULL;
  gboolean show_asm = FALSE, use_min = FALSE, outputs = FALSE, cpu_time = FALSE;
  const GOptionEntry entries[] = {
    { "runs", 'n', 0, G_OPTION_ARG_INT, &runs, "Timed runs (default 50)", "N" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "Worker threads (default: one per core)", "N" },
    { "layout", 0, 0, G_OPTION_ARG_STRING, &layout, "nhwc (default, as the cpu target) or nchw", "LAYOUT" },
    { "input-shape", 0, 0, G_OPTION_ARG_STRING_ARRAY, &shapes, "Pin an input's shape", "NAME=AxB" },
    { "show", 0, 0, G_OPTION_ARG_STRING, &show, "Print this kernel's code, do not time", "KERNEL" },
    { "asm", 0, 0, G_OPTION_ARG_NONE, &show_asm, "With --show: assembly, not LLVM IR", NULL },
    { "min", 0, 0, G_OPTION_ARG_NONE, &use_min, "Each kernel's fastest run, not its median", NULL },
    { "outputs", 0, 0, G_OPTION_ARG_NONE, &outputs, "Name each kernel's output values", NULL },
    { "cpu-time", 0, 0, G_OPTION_ARG_NONE, &cpu_time, "Processor time, not the clock", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("MODEL — per-kernel CPU times");
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2 || runs < 1)
    {
      fprintf (stderr, "cpu-kernel-bench: %s\n", error ? error->message : "expected one MODEL and --runs >= 1");
      return 2;
    }
  options->layout = layout != NULL && g_str_equal (layout, "nchw") ? FB_LAYOUT_NCHW : FB_LAYOUT_NHWC;
  for (guint i = 0; shapes && shapes[i]; i++)
    {
      const char *eq = strchr (shapes[i], '=');
      FbShape shape;
      if (eq == NULL || !fb_shape_parse (eq + 1, &shape, &error))
        {
          fprintf (stderr, "cpu-kernel-bench: bad --input-shape %s\n", shapes[i]);
          return 2;
        }
      g_hash_table_insert (options->input_shapes, g_strndup (shapes[i], eq - shapes[i]),
                           g_memdup2 (&shape, sizeof shape));
    }

  FbGraph *graph = fb_onnx_import_file (argv[1], options->input_shapes, &error);
  if (graph == NULL)
    return fail (error);
  g_autoptr(FbPipeline) pipeline = fb_pipeline_new (graph);
  if (!fb_pipeline_run (pipeline, options, NULL, NULL, NULL, &error))
    return fail (error);
  g_autoptr(FbCpuModule) cpu = fb_cpu_compile (fb_pipeline_final (pipeline), MAX (threads, 0), &error);
  if (cpu == NULL)
    return fail (error);
  FbPlan *plan = fb_cpu_module_plan (cpu);
  for (guint k = 0; show && k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (!g_str_equal (kernel->name, show))
        continue;
      g_autoptr(FbKernelStages) st = fb_codegen_kernel_stages (kernel, plan, &error);
      if (st == NULL)
        return fail (error);
      printf ("%s\n%s\n", st->kernel_ir, show_asm ? st->assembly : st->llvm_ir_opt);
      return 0;
    }
  if (show)
    {
      fprintf (stderr, "cpu-kernel-bench: no kernel named %s\n", show);
      return 2;
    }

  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  for (guint i = 0; i < plan->inputs->len; i++)
    {
      const FbBuffer *buf = fb_plan_buffer (plan, g_array_index (plan->inputs, guint, i));
      FbTensor *t = fb_tensor_new (buf->dtype, buf->rank, buf->dims, &error);
      if (t == NULL)
        return fail (error);
      g_ptr_array_add (inputs, t);
    }

  guint nk = plan->kernels->len;
  g_autofree double *per = g_new0 (double, (gsize) nk * runs + 1);
  g_autofree double *whole = g_new0 (double, runs);
  g_autofree double *cpu_ms = g_new0 (double, nk + 1);
  CpuClock clock = { cpu_ms, 0 };
  for (int r = -1; r < runs; r++)
    {
      /* Run -1 warms the caches and the worker threads. */
      fb_cpu_module_set_timing (cpu, FALSE);
      fb_cpu_module_set_kernel_hook (cpu, NULL, NULL);
      gint64 t0 = g_get_monotonic_time ();
      double c0 = process_cpu_ms ();
      g_autoptr(GPtrArray) out = fb_cpu_module_run (cpu, inputs, NULL, &error);
      if (out == NULL)
        return fail (error);
      if (r >= 0)
        whole[r] = cpu_time ? process_cpu_ms () - c0 : (g_get_monotonic_time () - t0) / 1000.0;
      fb_cpu_module_set_timing (cpu, !cpu_time);
      if (cpu_time)
        fb_cpu_module_set_kernel_hook (cpu, cpu_clock_hook, &clock);
      g_autoptr(GPtrArray) out2 = fb_cpu_module_run (cpu, inputs, NULL, &error);
      if (out2 == NULL)
        return fail (error);
      const double *ms = cpu_time ? cpu_ms : fb_cpu_module_kernel_ms (cpu);
      for (guint k = 0; r >= 0 && k < nk; k++)
        per[(gsize) k * runs + r] = ms[k];
    }

  g_autofree Row *rows = g_new0 (Row, nk + 1);
  double sum = 0;
  for (guint k = 0; k < nk; k++)
    {
      rows[k].index = k;
      rows[k].ms = use_min ? minimum (per + (gsize) k * runs, runs)
                           : median (per + (gsize) k * runs, runs);
      sum += rows[k].ms;
    }
  qsort (rows, nk, sizeof *rows, compare_rows);
  printf ("%9s %6s %7s %6s  %s\n", "ms", "share", "GFLOP/s", "GB/s", "kernel");
  for (guint i = 0; i < nk; i++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, rows[i].index);
      static const char *const kinds[] = { "loops", "library", "view", "host" };
      g_autofree char *names = outputs ? output_names (kernel, plan) : NULL;
      printf ("%9.4f %5.1f%% %7.1f %6.1f  %-7s %s  %s%s%s\n", rows[i].ms,
              sum > 0 ? 100 * rows[i].ms / sum : 0,
              rows[i].ms > 0 ? kernel->flops / rows[i].ms / 1e6 : 0,
              rows[i].ms > 0 ? kernel->bytes / rows[i].ms / 1e6 : 0,
              kernel->kind < G_N_ELEMENTS (kinds) ? kinds[kernel->kind] : "?", kernel->name,
              kernel->label ? kernel->label : "", names ? "  -> " : "", names ? names : "");
    }
  printf ("kernels: %u, sum of %s %.3f ms, whole run %s %.3f ms over %d runs\n", nk,
          use_min ? "minima" : "medians", sum, use_min ? "minimum" : "median",
          use_min ? minimum (whole, runs) : median (whole, runs), runs);
  guint n_threads = threads > 0 ? (guint) threads : fb_thread_count_default ();
  printf ("copy bandwidth: %.1f GB/s (memcpy of 64 MiB, read + written, %u threads, best of 5)\n",
          copy_bandwidth (n_threads), n_threads);
  return 0;
}
