/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fb_profile_run on the CPU target, on the bundled sample: every kernel of the plan timed and
 * placed on its final-stage node, the profile adding up on every stage, the timeline naming
 * real kernels, worker busy time for the pool's kernels, progress and cancellation, the
 * ceilings measured once and then read from the cache, and hardware counters either measured
 * or refused with a plain note (whichever this machine does), the counting itself checked on
 * the kernel's software events. */
#include "fb-profile-run.h"
#include "fb-profile-private.h"
#include "fb-onnx-import.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

typedef struct {
  FbPipeline        *pipeline;
  FbPipelineOptions *options;
  GPtrArray         *stages;
} Sample;

static void
sample_open (Sample *s)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "..", "data", "models",
                                             "sample-cnn", "model.onnx", NULL);
  FbGraph *graph = fb_onnx_import_file (model, NULL, &error);
  g_assert_no_error (error);
  s->options = fb_pipeline_options_new ();
  s->options->layout = FB_LAYOUT_NHWC;
  s->pipeline = fb_pipeline_new (graph);
  g_assert_true (fb_pipeline_run (s->pipeline, s->options, NULL, NULL, NULL, &error));
  s->stages = fb_pipeline_dup_stages (s->pipeline);
}

static void
sample_close (Sample *s)
{
  g_ptr_array_unref (s->stages);
  fb_pipeline_free (s->pipeline);
  fb_pipeline_options_free (s->options);
}

typedef struct {
  guint         calls;
  double        last;
  gboolean      backwards;
  guint         cancel_after;  /* cancel at this call (0: never) */
  GCancellable *cancellable;
} Progress;

static void
on_progress (double fraction, const char *what, gpointer data)
{
  Progress *p = data;
  g_assert_nonnull (what);
  p->backwards = p->backwards || fraction < p->last;
  p->last = fraction;
  if (++p->calls == p->cancel_after)
    g_cancellable_cancel (p->cancellable);
}

static FbProfile *
profile_sample (Sample *s, guint threads, gboolean counters, Progress *progress, GError **error)
{
  FbProfileOptions o = { .iterations = 4, .warmup = 1, .n_threads = threads,
                         .counters = counters, .seed = 3 };
  return fb_profile_run (fb_backend_lookup ("cpu"), s->stages, s->options, NULL, &o,
                         progress ? progress->cancellable : NULL,
                         progress ? on_progress : NULL, progress, error);
}

static void
test_sample (void)
{
  g_autoptr(GError) error = NULL;
  Sample s;
  Progress progress = { 0 };
  sample_open (&s);
  g_setenv ("FUSEBENCH_CEILINGS", "100,10", TRUE);
  /* Its loops are too small to split by default (under 64 k operations): split them all, so
   * that the threads' own times are recorded. */
  g_setenv ("FUSEBENCH_SPLIT_ALL", "1", TRUE);
  g_autoptr(FbProfile) p = profile_sample (&s, 2, FALSE, &progress, &error);
  g_setenv ("FUSEBENCH_SPLIT_ALL", "", TRUE);
  g_assert_no_error (error);
  const FbGraph *final = ((FbStage *) g_ptr_array_index (s.stages, s.stages->len - 1))->graph;

  g_assert_cmpstr (p->target, ==, "cpu");
  g_assert_cmpstr (p->model, ==, "model.onnx");
  g_assert_true (fb_profile_matches (p, final->model, s.options, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (p->device.peak_gflops, ==, 100);
  g_assert_false (p->device.ceilings_measured);
  g_assert_cmpuint (p->iterations, ==, 4);
  g_assert_cmpfloat (p->wall_min_ms, <=, p->wall_median_ms);
  g_assert_cmpfloat (p->wall_median_ms, <=, p->wall_max_ms);
  g_assert_cmpfloat (p->busy_ms, >, 0);
  g_assert_cmpuint (p->kernels->len, >, 0);
  g_assert_null (p->counters_note);
  guint pooled = 0, library = 0, multi = 0;
  for (guint i = 0; i < p->kernels->len; i++)
    {
      const FbProfileKernel *k = g_ptr_array_index (p->kernels, i);
      g_assert_cmpuint (k->id, ==, i);
      g_assert_nonnull (fb_graph_find_node (final, k->stage_node));
      g_assert_cmpuint (k->calls, ==, 1);
      g_assert_cmpfloat (k->min_us, <=, k->median_us);
      g_assert_cmpfloat (k->median_us, <=, k->max_us);
      g_assert_cmpuint (k->nodes->len, ==, k->node_shares->len);
      g_assert_cmpfloat (k->roofline_share, >=, 0);
      g_assert_cmpfloat (k->roofline_share, <=, 1);
      g_assert_cmpfloat (k->counters.cycles, ==, -1);
      g_assert_cmpuint (k->bytes_read + k->bytes_written, >, 0);
      pooled += k->worker_busy_us->len == 2;
      library += k->kind == FB_PROFILE_KERNEL_LIBRARY;
      multi += k->nodes->len > 1;
    }
  /* The sample's convolutions are oneDNN's; its pooling runs on the pool's two threads. */
  g_assert_cmpuint (library, >, 0);
  g_assert_cmpuint (pooled, >, 0);
  g_assert_cmpuint (multi, >, 0);
  g_assert_cmpuint (p->timeline->len, >=, p->kernels->len);
  for (guint i = 0; i < p->timeline->len; i++)
    {
      const FbProfileSpan *span = &g_array_index (p->timeline, FbProfileSpan, i);
      g_assert_cmpuint (span->kernel, <, p->kernels->len);
      g_assert_cmpfloat (span->start_us, <=, span->end_us);
      g_assert_cmpuint (span->lane, <, 2);
    }
  /* The sample's folded Constants and removed Identities, each with its pass. */
  gboolean constant = FALSE;
  for (guint i = 0; i < p->folded->len; i++)
    {
      const FbProfileFolded *f = &g_array_index (p->folded, FbProfileFolded, i);
      if (g_str_equal (f->node, "/features/1/dw/act/Constant"))
        constant = g_str_equal (f->by, "fold-constants");
    }
  g_assert_true (constant);
  g_assert_cmpuint (p->diagnosis->len, >=, 5);
  for (guint i = 0; i < p->diagnosis->len; i++)
    g_assert_true (strpbrk (g_ptr_array_index (p->diagnosis, i), "0123456789") != NULL);

  /* What it measured adds up on every stage. */
  double total = fb_profile_total_us (p);
  for (guint i = 0; i < s.stages->len; i++)
    {
      g_autoptr(GHashTable) costs = fb_profile_attribute (p, ((FbStage *) g_ptr_array_index (s.stages, i))->graph);
      double sum = 0;
      GHashTableIter it;
      gpointer value;
      g_hash_table_iter_init (&it, costs);
      while (g_hash_table_iter_next (&it, NULL, &value))
        sum += ((FbNodeCost *) value)->time_us;
      g_assert_cmpfloat_with_epsilon (sum, total, 1e-9 * total);
    }

  g_assert_cmpuint (progress.calls, >=, 6);
  g_assert_false (progress.backwards);
  g_assert_cmpfloat (progress.last, ==, 1.0);
  g_unsetenv ("FUSEBENCH_CEILINGS");
  sample_close (&s);
}

/* How many of the sample's kernels the profile saw on both of the pool's threads. */
static guint
pooled_kernels (Sample *s)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbProfile) p = profile_sample (s, 2, FALSE, NULL, &error);
  g_assert_no_error (error);
  guint pooled = 0;
  for (guint i = 0; i < p->kernels->len; i++)
    {
      const FbProfileKernel *k = g_ptr_array_index (p->kernels, i);
      pooled += k->worker_busy_us->len == 2;
    }
  return pooled;
}

/* FUSEBENCH_SPLIT_MIN_WORK moves the work from which a loop splits: at one operation the
 * sample's loops split, beyond any loop's work none does, and a value that is not a positive
 * number keeps the default (its parsing: test-cpu-threads, /cpu-threads/split-tuning). */
static void
test_split_threshold (void)
{
  Sample s;
  sample_open (&s);
  g_setenv ("FUSEBENCH_CEILINGS", "100,10", TRUE);
  g_unsetenv ("FUSEBENCH_SPLIT_MIN_WORK");
  guint by_default = pooled_kernels (&s);
  g_setenv ("FUSEBENCH_SPLIT_MIN_WORK", "1", TRUE);
  guint all = pooled_kernels (&s);
  g_setenv ("FUSEBENCH_SPLIT_MIN_WORK", "1e12", TRUE);
  guint none = pooled_kernels (&s);
  g_setenv ("FUSEBENCH_SPLIT_MIN_WORK", "many", TRUE);
  guint malformed = pooled_kernels (&s);
  g_unsetenv ("FUSEBENCH_SPLIT_MIN_WORK");
  g_setenv ("FUSEBENCH_CEILINGS", "", TRUE);
  g_assert_cmpuint (all, >, by_default);
  g_assert_cmpuint (none, ==, 0);
  g_assert_cmpuint (malformed, ==, by_default);
  sample_close (&s);
}

static void
test_cancel_and_targets (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  Sample s;
  Progress progress = { .cancel_after = 4, .cancellable = cancellable };
  sample_open (&s);
  g_setenv ("FUSEBENCH_CEILINGS", "off", TRUE);
  g_autoptr(FbProfile) p = profile_sample (&s, 1, FALSE, &progress, &error);
  g_assert_null (p);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);

  FbProfileOptions o = { 0 };
  /* cuda: without a driver (this suite's machines), CUPTI says so before any work. */
  if (!g_file_test ("/dev/nvidiactl", G_FILE_TEST_EXISTS))
    {
      g_assert_null (fb_profile_run (fb_backend_lookup ("cuda"), s.stages, s.options, NULL, &o,
                                     NULL, NULL, NULL, &error));
      g_assert_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE);
      g_assert_true (strstr (error->message, "driver") || strstr (error->message, "CUPTI"));
      g_clear_error (&error);
    }
  /* The reference interpreter offers the profiler no timed runs. */
  g_assert_null (fb_profile_run (fb_backend_reference (), s.stages, s.options, NULL, &o, NULL,
                                 NULL, NULL, &error));
  g_assert_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE);
  g_unsetenv ("FUSEBENCH_CEILINGS");
  sample_close (&s);
}

/* A plan the caller lowered already (the window's code view) is the one profiled: the kernel
 * renamed in it shows in the profile. A plan of another graph is not taken. */
static void
test_given_plan (void)
{
  g_autoptr(GError) error = NULL;
  Sample s;
  sample_open (&s);
  const FbBackend *cpu = fb_backend_lookup ("cpu");
  const FbGraph *final = ((FbStage *) g_ptr_array_index (s.stages, s.stages->len - 1))->graph;
  g_autoptr(FbPlan) plan = cpu->lower (cpu, final, &error);
  g_assert_no_error (error);
  FbKernel *last = g_ptr_array_index (plan->kernels, plan->kernels->len - 1);
  g_free (last->name);
  last->name = g_strdup ("lowered-by-the-code-view");
  FbProfileOptions o = { .iterations = 2, .warmup = 1, .seed = 3, .plan = plan };
  g_setenv ("FUSEBENCH_CEILINGS", "off", TRUE);
  g_autoptr(FbProfile) p = fb_profile_run (cpu, s.stages, s.options, NULL, &o, NULL, NULL, NULL,
                                           &error);
  g_assert_no_error (error);
  gboolean found = FALSE;
  for (guint k = 0; k < p->kernels->len; k++)
    found |= g_strcmp0 (((FbProfileKernel *) p->kernels->pdata[k])->name,
                        "lowered-by-the-code-view") == 0;
  g_assert_true (found);

  /* The import stage's graph is not the plan's: the final stage is lowered anew. */
  g_autoptr(GPtrArray) first = g_ptr_array_new ();
  g_ptr_array_add (first, g_ptr_array_index (s.stages, 0));
  g_autoptr(FbProfile) q = fb_profile_run (cpu, first, s.options, NULL, &o, NULL, NULL, NULL,
                                           &error);
  g_assert_no_error (error);
  for (guint k = 0; k < q->kernels->len; k++)
    g_assert_cmpstr (((FbProfileKernel *) q->kernels->pdata[k])->name, !=,
                     "lowered-by-the-code-view");
  g_unsetenv ("FUSEBENCH_CEILINGS");
  sample_close (&s);
}

static void
test_ceilings_cached (void)
{
  FbProfileDevice a = { 0 }, b = { 0 }, off = { 0 };
  g_autofree char *cache = g_build_filename (g_get_user_cache_dir (), "fusebench", "ceilings.json", NULL);
  g_unsetenv ("FUSEBENCH_CEILINGS");
  g_unlink (cache);
  _fb_profile_cpu_ceilings (1, NULL, &a);
  g_assert_true (a.ceilings_measured);
  g_assert_cmpfloat (a.peak_gbps, >, 0);
  g_assert_cmpfloat (a.peak_gflops, >, 0);
  g_assert_nonnull (strstr (a.name, "(1 thread)"));
  g_assert_true (g_file_test (cache, G_FILE_TEST_EXISTS));
  /* The second time the cache answers: the very same figures. */
  _fb_profile_cpu_ceilings (1, NULL, &b);
  g_assert_true (b.ceilings_measured);
  g_assert_cmpfloat (b.peak_gbps, ==, a.peak_gbps);
  g_assert_cmpfloat (b.peak_gflops, ==, a.peak_gflops);
  g_setenv ("FUSEBENCH_CEILINGS", "off", TRUE);
  _fb_profile_cpu_ceilings (1, NULL, &off);
  g_assert_false (off.ceilings_measured);
  g_assert_cmpfloat (off.peak_gbps, ==, 0);
  g_unsetenv ("FUSEBENCH_CEILINGS");
  g_free (a.name);
  g_free (b.name);
  g_free (off.name);
}

static void
test_counters (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *why = NULL;
  Sample s;
  sample_open (&s);
  g_setenv ("FUSEBENCH_CEILINGS", "off", TRUE);
  FbPerf *probe = _fb_perf_open (1, FALSE, &why);
  gboolean hardware = probe != NULL;
  _fb_perf_close (probe);

  g_autoptr(FbProfile) p = profile_sample (&s, 1, TRUE, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < p->kernels->len; i++)
    {
      const FbProfileKernel *k = g_ptr_array_index (p->kernels, i);
      if (hardware)
        g_assert_cmpfloat (k->counters.cycles, >=, 0);
      else
        {
          g_assert_cmpfloat (k->counters.cycles, ==, -1);
          g_assert_cmpfloat (k->counters.llc_misses, ==, -1);
        }
    }
  if (hardware)
    g_assert_null (p->counters_note);
  else
    {
      /* The plain statement: what was refused and why. */
      g_assert_nonnull (p->counters_note);
      g_assert_nonnull (strstr (p->counters_note, "no hardware counters"));
      g_assert_cmpstr (p->counters_note, ==, why);
    }

  /* The counting itself, on the software events every Linux kernel has. */
  g_clear_pointer (&why, g_free);
  FbPerf *perf = _fb_perf_open (2, TRUE, &why);
  if (perf == NULL)
    {
      g_test_message ("%s", why);
      g_unsetenv ("FUSEBENCH_CEILINGS");
      sample_close (&s);
      g_test_skip ("this machine refuses even software perf events");
      return;
    }
  double sums[FB_PERF_N_EVENTS] = { 0 };
  volatile double x = 0;
  _fb_perf_begin (perf);
  for (int i = 0; i < 2000000; i++)
    x += sqrt ((double) i);
  _fb_perf_end (perf, sums);
  _fb_perf_close (perf);
  g_assert_cmpfloat (sums[0], >, 0);    /* task clock, ns */
  g_assert_cmpfloat (x, >, 0);
  g_unsetenv ("FUSEBENCH_CEILINGS");
  sample_close (&s);
}

/* The diagnosis of a profile whose figures are known: every line carries them. */
static void
test_diagnosis (void)
{
  Sample s;
  sample_open (&s);
  const FbGraph *final = ((FbStage *) g_ptr_array_index (s.stages, s.stages->len - 1))->graph;
  const FbNode *inserted = NULL;
  for (guint i = 0; i < final->nodes->len && !inserted; i++)
    if (((const FbNode *) g_ptr_array_index (final->nodes, i))->flags & FB_NODE_INSERTED)
      inserted = g_ptr_array_index (final->nodes, i);
  g_assert_nonnull (inserted);   /* channels-last convolutions: a transpose in, one out */

  g_autoptr(FbProfile) p = fb_profile_new ();
  p->device.peak_gflops = 100;
  p->device.peak_gbps = 10;
  p->device.ceilings_measured = TRUE;
  p->wall_median_ms = p->wall_min_ms = p->wall_max_ms = 0.150;
  p->busy_ms = 0.120;
  const struct { const char *name; FbProfileKernelKind kind; double us, flops; guint64 bytes; guint node; } ks[] = {
    { "conv", FB_PROFILE_KERNEL_LIBRARY, 60, 5.4e6, 1000, 1 },
    { "add", FB_PROFILE_KERNEL_GENERATED, 50, 1e3, 100000, 2 },
    { "transpose", FB_PROFILE_KERNEL_GENERATED, 10, 0, 20000, inserted->id },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ks); i++)
    {
      FbProfileKernel *k = fb_profile_kernel_new ();
      k->id = i;
      k->name = g_strdup (ks[i].name);
      k->kind = ks[i].kind;
      k->median_us = k->min_us = k->max_us = ks[i].us;
      k->flops = ks[i].flops;
      k->bytes_read = ks[i].bytes;
      k->stage_node = ks[i].node;
      g_ptr_array_add (k->nodes, g_strdup (ks[i].name));
      _fb_profile_place_on_roofline (k, &p->device);
      g_ptr_array_add (p->kernels, k);
    }
  double busy[] = { 50, 25 };
  g_array_append_vals (((FbProfileKernel *) g_ptr_array_index (p->kernels, 1))->worker_busy_us, busy, 2);
  /* 5.4 MFLOP on 1000 bytes in 60 µs: compute-bound at 90 GFLOP/s of 100. */
  g_assert_cmpuint (((FbProfileKernel *) g_ptr_array_index (p->kernels, 0))->bound, ==, FB_BOUND_COMPUTE);
  g_assert_cmpfloat_with_epsilon (((FbProfileKernel *) g_ptr_array_index (p->kernels, 0))->roofline_share, 0.9, 1e-9);

  _fb_profile_diagnose (p, final);
  g_autoptr(GString) joined = g_string_new (NULL);
  for (guint i = 0; i < p->diagnosis->len; i++)
    g_string_append_printf (joined, "%s\n", (char *) g_ptr_array_index (p->diagnosis, i));
  const char *all = joined->str;
  g_test_message ("%s", all);
  static const char *expect[] = {
    "kernels ran 0.120 ms of the 0.150 ms median inference",
    "50 % in generated loops (2 kernels), 50 % in library calls (1 kernel)",
    "Top kernels: conv 50 % (60.0 µs), add 42 %",
    "Dispatch overhead: 0.030 ms per inference (20.0 % of the wall time)",
    "busy 75 % of the time and idle 25 %",
    "add (42 % of the time) is memory-bound at 20 % of the measured bandwidth: 2.00 GB/s of 10.00",
    "Layout: 1 transpose inserted by the layout pass cost 10.0 µs per inference (8.3 % of the kernel time)",
    "the 1 worker thread besides the caller worked 0.025 ms in generated loops, 17 % of the 0.150 ms wall time",
  };
  for (guint i = 0; i < G_N_ELEMENTS (expect); i++)
    if (strstr (all, expect[i]) == NULL)
      g_error ("the diagnosis lacks '%s':\n%s", expect[i], all);
  sample_close (&s);
}

int
main (int argc, char **argv)
{
  /* The ceilings' cache goes to a folder of this test's own (before GLib reads the variable). */
  g_autofree char *cache = g_dir_make_tmp ("fb-profile-cache-XXXXXX", NULL);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/profile-cpu/sample", test_sample);
  g_test_add_func ("/profile-cpu/split-threshold", test_split_threshold);
  g_test_add_func ("/profile-cpu/cancel-and-targets", test_cancel_and_targets);
  g_test_add_func ("/profile-cpu/given-plan", test_given_plan);
  g_test_add_func ("/profile-cpu/ceilings-cached", test_ceilings_cached);
  g_test_add_func ("/profile-cpu/counters", test_counters);
  g_test_add_func ("/profile-cpu/diagnosis", test_diagnosis);
  int status = g_test_run ();
  g_autofree char *file = g_build_filename (cache, "fusebench", "ceilings.json", NULL);
  g_autofree char *dir = g_build_filename (cache, "fusebench", NULL);
  g_unlink (file);
  g_rmdir (dir);
  g_rmdir (cache);
  return status;
}
