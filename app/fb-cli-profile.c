/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench profile MODEL|BUNDLE [--target cpu|cuda] [PIPELINE] [--input-dir DIR | --input NAME=FILE ...]
 *                   [--iterations N] [--warmup N] [--threads N] [-o PROFILE.json]
 *                   [--chrome-trace FILE] [--counters] [--json] [--progress-lines]
 *                   [--remote HOST]
 *
 * Profiles the compiled model (fb_profile_run, the same as the workbench's Profile button) and
 * prints the top kernels and the diagnosis, or with --json the profile itself. Given inputs, the
 * model takes their shapes as `run` does (its dynamic dimensions pinned to them, and the profile
 * records those pins); without, it runs on seeded random inputs of its shapes. Output paths are
 * checked before any work, and every file is written whole or not at all. With --remote the
 * same profile is made on an ssh host (fb-cli-remote.h) and its files come back here. */
#include "fb-cli-load.h"
#include "fb-cli-remote.h"
#include "fb-cli-target.h"
#include "fb-profile-run.h"
#include "fb-bundle.h"
#include "fb-specialize.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define N_TABLE 15

typedef struct {
  char     *target;
  char     *input_dir;
  char    **inputs;
  int       iterations;
  int       warmup;
  int       threads;
  char     *output;
  char     *chrome_trace;
  gboolean  counters;
  gboolean  json;
  gboolean  eager;
  gboolean  strict_float32;
  gboolean  tf32_matmul;
  gboolean  progress_lines;
  char     *remote;
} ProfileArgs;

/* The target to profile on: --target, or the host's compiled target. */
static const FbBackend *
profile_backend (const ProfileArgs *args)
{
  return args->target ? fb_backend_lookup (args->target) : fb_backend_host ();
}

/* The targets of the table the profiler can instrument, for messages ("cpu or cuda"). */
static char *
profiled_targets (void)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; fb_backend_nth (i) != NULL; i++)
    if (fb_profile_supports (fb_backend_nth (i)))
      g_string_append_printf (s, "%s%s", s->len ? " or " : "", fb_backend_nth (i)->name);
  return g_string_free (s, FALSE);
}

/* A file can be written at path: its folder exists and is writable, and path is no folder. */
static gboolean
check_writable (const char *option, const char *path, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "%s %s: is a folder", option, path);
  else if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s %s: the folder %s does not exist",
                 option, path, dir);
  else if (g_access (dir, W_OK) != 0)
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ACCES, "%s %s: the folder %s is not writable",
                 option, path, dir);
  else
    return TRUE;
  return FALSE;
}

/* What cannot be measured here is the request's doing; a failed run is the work's. */
static int
fail (const GError *error)
{
  if (error->domain != FB_PROFILE_ERROR)
    return fb_cli_fail (error);
  fprintf (stderr, "fusebench: %s\n", error->message);
  return error->code == FB_PROFILE_ERROR_FAILED ? FB_EXIT_WORK : FB_EXIT_INPUT;
}

static int
by_time_desc (gconstpointer a, gconstpointer b)
{
  const FbProfileKernel *x = *(FbProfileKernel * const *) a, *y = *(FbProfileKernel * const *) b;
  return (x->median_us < y->median_us) - (x->median_us > y->median_us);
}

/* The kernels, longest first (borrowed). */
static GPtrArray *
by_time (const FbProfile *p)
{
  GPtrArray *sorted = g_ptr_array_sized_new (p->kernels->len);
  for (guint i = 0; i < p->kernels->len; i++)
    g_ptr_array_add (sorted, g_ptr_array_index (p->kernels, i));
  g_ptr_array_sort (sorted, by_time_desc);
  return sorted;
}

static void
print_table (const FbProfile *p)
{
  double total = fb_profile_total_us (p);
  g_autoptr(GPtrArray) sorted = by_time (p);

  printf ("%s on %s: median %.3f ms (min %.3f, max %.3f) over %u inferences; kernels %.3f ms\n",
          p->model, p->device.name, p->wall_median_ms, p->wall_min_ms, p->wall_max_ms,
          p->iterations, total / 1e3);
  g_autofree char *timing = fb_profile_timing_describe (p);
  if (timing)
    printf ("%s\n", timing);
  if (p->device.peak_gbps > 0)
    printf ("ceilings (%s): %.2f GB/s, %.1f GFLOP/s\n",
            p->device.ceilings_measured ? "measured" : "given", p->device.peak_gbps,
            p->device.peak_gflops);
  printf ("\n%6s %10s %10s %10s %8s %9s %-7s %5s %-9s %s\n", "share", "median_us", "min_us",
          "max_us", "GB/s", "GFLOP/s", "bound", "roof", "kind", "kernel (nodes)");
  for (guint i = 0; i < MIN (N_TABLE, sorted->len); i++)
    {
      const FbProfileKernel *k = g_ptr_array_index (sorted, i);
      double s = k->median_us * 1e-6;
      double bytes = (double) (k->bytes_read + k->bytes_written);
      g_autoptr(GString) nodes = g_string_new (NULL);
      for (guint j = 0; j < MIN (3u, k->nodes->len); j++)
        g_string_append_printf (nodes, "%s%s", j ? ", " : "", (char *) g_ptr_array_index (k->nodes, j));
      if (k->nodes->len > 3)
        g_string_append_printf (nodes, " +%u", k->nodes->len - 3);
      printf ("%5.1f%% %10.1f %10.1f %10.1f %8.2f %9.2f %-7s %4.0f%% %-9s %s (%s)\n",
              total > 0 ? 100 * k->median_us / total : 0, k->median_us, k->min_us, k->max_us,
              s > 0 ? bytes / s / 1e9 : 0, s > 0 ? k->flops / s / 1e9 : 0,
              k->bound == FB_BOUND_COMPUTE ? "compute" : "memory", 100 * k->roofline_share,
              fb_profile_kernel_kind_name (k->kind), k->name, nodes->str);
    }
  if (sorted->len > N_TABLE)
    printf ("(%u more kernels)\n", sorted->len - N_TABLE);
  if (p->folded->len > 0)
    {
      printf ("\nfolded at compile time (%u original nodes run no kernel):\n", p->folded->len);
      for (guint i = 0; i < p->folded->len; i++)
        {
          const FbProfileFolded *f = &g_array_index (p->folded, FbProfileFolded, i);
          printf ("  %s (by %s)\n", f->node, f->by);
        }
    }
  g_autofree char *dram = fb_profile_dram_describe (p);
  if (dram)
    printf ("\n%s\n", dram);
  if (p->counters_note)
    printf ("\n%s\n", p->counters_note);
  printf ("\ndiagnosis:\n");
  for (guint i = 0; i < p->diagnosis->len; i++)
    printf ("  %s\n", (char *) g_ptr_array_index (p->diagnosis, i));
}

/* On a terminal, where the run is: a profile of a large model takes a while. */
static void
show_progress (double fraction, const char *what, gpointer data)
{
  fprintf (stderr, "\r\033[Kprofiling: %3.0f %% %s", 100 * fraction, what);
  fflush (stderr);
}

/* For a program reading our stderr (the --remote side): a line when the step or the permille
 * changes, not one per inference of a long run. */
static void
print_progress_line (double fraction, const char *what, gpointer data)
{
  static int last_permille = -1;
  static char *last_what;
  int permille = (int) (fraction * 1000);

  if (permille == last_permille && last_what && g_str_equal (last_what, what))
    return;
  last_permille = permille;
  g_free (last_what);
  last_what = g_strdup (what);
  fprintf (stderr, "progress %.3f %s\n", fraction, what);
  fflush (stderr);
}

static GPtrArray *
read_inputs (const FbGraph *graph, const ProfileArgs *args, GError **error)
{
  if (args->input_dir != NULL)
    return fb_cli_read_input_dir (graph, args->input_dir, error);
  return fb_cli_read_named_inputs (graph, args->inputs, error);
}

static int
profile_model (const FbBackend *backend, const char *model, const FbCliPipelineArgs *pipeline_args,
               const ProfileArgs *args)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbProfile) profile = NULL;
  g_autoptr(GPtrArray) inputs = NULL;
  FbProfileOptions options = {
    .iterations = (guint) args->iterations,
    .warmup = (guint) args->warmup,
    .counters = args->counters,
    .n_threads = (guint) args->threads,
    .seed = 1,
    .eager = args->eager,
    .strict_float32 = args->strict_float32,
    .tf32_matmul = args->tf32_matmul,
  };
  gboolean given = args->input_dir != NULL || args->inputs != NULL;
  FbProfileProgress progress = args->progress_lines ? print_progress_line
                               : isatty (STDERR_FILENO) ? show_progress : NULL;

  if ((args->output && !check_writable ("-o", args->output, &error)) ||
      (args->chrome_trace && !check_writable ("--chrome-trace", args->chrome_trace, &error)))
    return fail (error);
  if (fb_bundle_is_bundle (model))
    {
      /* A bundle is profiled on the target it was compiled for. */
      const FbBackend *compiled_for = NULL;
      if (!fb_cli_target_resolve (args->target, model, &compiled_for, &error))
        return fail (error);
      if (!fb_profile_supports_bundles (compiled_for))
        {
          fprintf (stderr, "fusebench profile: %s: a bundle of the %s target cannot be profiled "
                           "in this build; profile the model with --target %s\n", model,
                   compiled_for->name, compiled_for->name);
          return FB_EXIT_INPUT;
        }
      if (given)
        {
          /* The bundle's graph says what its inputs are. */
          FbBackendOptions probe_options = { .n_threads = 1 };
          FbCompiled *probe = compiled_for->load_bundle (compiled_for, model, &probe_options,
                                                          &error);
          if (probe != NULL)
            {
              inputs = read_inputs (compiled_for->graph (probe), args, &error);
              compiled_for->free (probe);
            }
          if (inputs == NULL)
            return fail (error);
        }
      profile = fb_profile_run_bundle (compiled_for, model, inputs, &options, NULL, progress,
                                       NULL, &error);
    }
  else if (g_file_test (model, G_FILE_TEST_IS_DIR))
    {
      fprintf (stderr, "fusebench profile: %s: is a folder but no bundle (it has no "
                       "manifest.json); give an ONNX model or a bundle\n", model);
      return FB_EXIT_INPUT;
    }
  else
    {
      /* As `run` does: the model specialized to the shapes of its inputs, as if pinned with
       * --input-shape, and those pins recorded in the profile with the other toggles. */
      g_autoptr(FbPipelineOptions) given_options = NULL, popts = NULL;
      g_autoptr(FbSpecializer) spec = NULL;
      FbPipeline *pipeline;
      if ((given_options = fb_cli_pipeline_options (pipeline_args, &error)) == NULL ||
          (spec = fb_specializer_new (model, given_options, NULL, NULL, &error)) == NULL)
        return fail (error);
      if (given && (inputs = read_inputs (fb_specializer_graph (spec), args, &error)) == NULL)
        return fail (error);
      if (!fb_specializer_prepare (spec, inputs, &pipeline, NULL, &error))
        return fail (error);
      popts = fb_specializer_options_for (spec, inputs);
      g_autoptr(GPtrArray) stages = fb_pipeline_dup_stages (pipeline);
      profile = fb_profile_run (backend, stages, popts, inputs, &options, NULL, progress, NULL,
                                &error);
    }
  if (progress == show_progress)
    fprintf (stderr, "\r\033[K");
  /* No driver, no GPU, CUPTI missing or held by another profiler: the machine's doing (the
   * target itself was checked before any work). */
  if (profile == NULL && g_error_matches (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE))
    {
      fprintf (stderr, "fusebench: %s\n", error->message);
      return FB_EXIT_WORK;
    }
  if (profile == NULL)
    return fail (error);
  if (args->chrome_trace && !fb_profile_save_chrome_trace (profile, args->chrome_trace, &error))
    return fail (error);
  if (args->output && !fb_profile_save (profile, args->output, &error))
    {
      if (args->chrome_trace)
        g_unlink (args->chrome_trace);
      return fail (error);
    }
  if (args->json)
    {
      g_autofree char *text = fb_profile_to_json (profile);
      fputs (text, stdout);
    }
  else
    print_table (profile);
  return FB_EXIT_OK;
}

/* The same profile on args->remote: the model (or bundle) and the inputs go there, the profile
 * and the trace come back; the output paths are checked here first. */
static int
profile_remote (const char *model, const FbCliPipelineArgs *pipeline_args, const ProfileArgs *args)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbCliRemote) job = fb_cli_remote_new ("profile");
  g_autofree char *iterations = g_strdup_printf ("%d", args->iterations);
  g_autofree char *warmup = g_strdup_printf ("%d", args->warmup);

  if ((args->output && !check_writable ("-o", args->output, &error)) ||
      (args->chrome_trace && !check_writable ("--chrome-trace", args->chrome_trace, &error)))
    return fail (error);
  if (!fb_cli_remote_check_sources (model, args->input_dir, "--input", args->inputs, &error))
    return fail (error);
  fb_cli_remote_args (job, fb_cli_remote_send_model (job, model), "--progress-lines",
                      "--iterations", iterations, "--warmup", warmup, NULL);
  if (args->target)
    fb_cli_remote_args (job, "--target", args->target, NULL);
  if (args->threads > 0)
    {
      g_autofree char *threads = g_strdup_printf ("%d", args->threads);
      fb_cli_remote_args (job, "--threads", threads, NULL);
    }
  if (args->counters)
    fb_cli_remote_args (job, "--counters", NULL);
  if (args->eager)
    fb_cli_remote_args (job, "--eager", NULL);
  if (args->strict_float32)
    fb_cli_remote_args (job, "--strict-float32", NULL);
  if (args->tf32_matmul)
    fb_cli_remote_args (job, "--tf32-matmul", NULL);
  if (args->json)
    fb_cli_remote_args (job, "--json", NULL);
  if (args->output)
    fb_cli_remote_args (job, "-o", fb_cli_remote_fetch (job, args->output), NULL);
  if (args->chrome_trace)
    fb_cli_remote_args (job, "--chrome-trace", fb_cli_remote_fetch (job, args->chrome_trace), NULL);
  fb_cli_remote_inputs (job, args->input_dir, "--input", args->inputs);
  fb_cli_remote_pipeline (job, pipeline_args);
  return fb_cli_remote_execute (job, args->remote);
}

int
fb_cli_profile (int argc, char **argv)
{
  ProfileArgs args = { .iterations = 50, .warmup = 5 };
  FbCliPipelineArgs pipeline = { 0 };
  const GOptionEntry entries[] = {
    { "target", 0, 0, G_OPTION_ARG_STRING, &args.target, "Where to profile: cpu or cuda", "TARGET" },
    { "eager", 0, 0, G_OPTION_ARG_NONE, &args.eager,
      "cuda: launch kernel by kernel instead of replaying the CUDA graph", NULL },
    { "strict-float32", 0, 0, G_OPTION_ARG_NONE, &args.strict_float32,
      "cuda: no TF32 at all: convolutions and matrix products in full float32", NULL },
    { "tf32-matmul", 0, 0, G_OPTION_ARG_NONE, &args.tf32_matmul,
      "cuda: matrix products in TF32 too (by default only convolutions use it, as PyTorch)", NULL },
    { "input-dir", 0, 0, G_OPTION_ARG_FILENAME, &args.input_dir,
      "Read input_K.pb (or .npy) for the K-th model input", "DIR" },
    { "input", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args.inputs,
      "Read one input from a .pb or .npy file (repeatable)", "NAME=FILE" },
    { "iterations", 0, 0, G_OPTION_ARG_INT, &args.iterations, "Timed inferences (50)", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &args.warmup, "Untimed inferences first (5)", "N" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &args.threads, "Threads (default: one per core)", "N" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &args.output, "Write the profile (JSON)", "PROFILE.json" },
    { "chrome-trace", 0, 0, G_OPTION_ARG_FILENAME, &args.chrome_trace,
      "Write the timeline as a Chrome/Perfetto trace", "FILE" },
    { "counters", 0, 0, G_OPTION_ARG_NONE, &args.counters,
      "Hardware counters per kernel (cycles, instructions, LLC misses)", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &args.json, "Print the profile as JSON", NULL },
    { "progress-lines", 0, 0, G_OPTION_ARG_NONE, &args.progress_lines,
      "Print progress on stderr as lines \"progress FRACTION STEP\" (for a program reading them)",
      NULL },
    { "remote", 0, 0, G_OPTION_ARG_STRING, &args.remote,
      "Profile on this ssh host (user@host or a Host of ~/.ssh/config)", "HOST" },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    g_option_context_new ("MODEL|BUNDLE — time every kernel and say where the time goes");
  g_autoptr(GError) error = NULL;
  int status;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_add_group (context, fb_cli_pipeline_group (&pipeline));
  if (!g_option_context_parse (context, &argc, &argv, &error))
    status = fb_cli_fail (error);
  else if (argc != 2)
    {
      fprintf (stderr, "fusebench profile: expected one MODEL or BUNDLE (see --help)\n");
      status = FB_EXIT_INPUT;
    }
  else if (profile_backend (&args) == NULL || !fb_profile_supports (profile_backend (&args)))
    {
      g_autofree char *targets = profiled_targets ();
      fprintf (stderr, "fusebench profile: --target '%s': expected %s (the targets the profiler "
               "can instrument)\n", args.target, targets);
      status = FB_EXIT_INPUT;
    }
  else if (args.iterations < 1 || args.warmup < 1 || args.threads < 0)
    {
      fprintf (stderr, "fusebench profile: --iterations and --warmup must be 1 or more, "
                       "--threads 0 or more\n");
      status = FB_EXIT_INPUT;
    }
  else if (args.input_dir != NULL && args.inputs != NULL)
    {
      fprintf (stderr, "fusebench profile: give --input-dir or --input, not both\n");
      status = FB_EXIT_INPUT;
    }
  else if (!fb_cli_check_precision (&(FbBackendOptions) { .strict_float32 = args.strict_float32,
                                                          .tf32_matmul = args.tf32_matmul },
                                     &error))
    status = fb_cli_fail (error);
  else
    {
      pipeline.channels_last = profile_backend (&args)->channels_last;
      status = args.remote ? profile_remote (argv[1], &pipeline, &args)
                           : profile_model (profile_backend (&args), argv[1], &pipeline, &args);
    }

  g_free (args.target);
  g_free (args.input_dir);
  g_strfreev (args.inputs);
  g_free (args.output);
  g_free (args.chrome_trace);
  g_free (args.remote);
  fb_cli_pipeline_args_clear (&pipeline);
  return status;
}
