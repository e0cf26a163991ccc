/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench run MODEL|BUNDLE [--target interp|cpu|cuda] [--strict-float32 | --tf32-matmul]
 *                     [--eager] [PIPELINE] [--input-dir DIR | --input NAME=FILE ...]
 *                     [--output-dir DIR] [--output NAME=FILE ...] [--iterations N] [--json]
 *
 * Runs the pipeline's final graph on the given inputs, as often as asked, and writes or
 * describes the outputs. --json prints one object with the run times (median_ms, min_ms,
 * max_ms, mean_ms) and the outputs' types and shapes. With --remote HOST the same run happens on
 * an ssh host: the model and inputs go there, the outputs and the printout come back. */
#include "fb-cli-load.h"
#include "fb-cli-remote.h"
#include "fb-cli-target.h"
#include "fb-bundle.h"
#include "fb-specialize.h"
#include "fb-tensor-io.h"
#include "fb-timing.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  char     *target;
  char     *input_dir;
  char    **inputs;
  char     *output_dir;
  char    **outputs;
  int       iterations;
  gboolean  json;
  int       threads;
  gboolean  strict_float32;
  gboolean  tf32_matmul;
  gboolean  eager;
  char     *remote;
} RunArgs;

static int
output_index (const FbGraph *graph, const char *name)
{
  for (guint i = 0; i < graph->outputs->len; i++)
    if (g_str_equal (((const FbValue *) g_ptr_array_index (graph->outputs, i))->name, name))
      return (int) i;
  return -1;
}

/* Checks --output NAME=FILE specs before any work, so a typo costs nothing. */
static gboolean
check_output_specs (const FbGraph *graph, char **specs, GError **error)
{
  for (guint s = 0; specs && specs[s]; s++)
    {
      g_autofree char *name = NULL, *file = NULL;
      if (!fb_cli_split_spec ("--output", specs[s], &name, &file, error))
        return FALSE;
      if (output_index (graph, name) < 0)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--output '%s': the model has no output '%s'", specs[s], name);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
write_outputs (const FbGraph *graph, GPtrArray *outputs, const RunArgs *args, GError **error)
{
  if (args->output_dir != NULL)
    {
      if (g_mkdir_with_parents (args->output_dir, 0755) != 0)
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: cannot make the folder",
                       args->output_dir);
          return FALSE;
        }
      for (guint i = 0; i < outputs->len; i++)
        {
          g_autofree char *base = g_strdup_printf ("output_%u.pb", i);
          g_autofree char *path = g_build_filename (args->output_dir, base, NULL);
          const FbValue *v = g_ptr_array_index (graph->outputs, i);
          if (!fb_tensor_save_file (g_ptr_array_index (outputs, i), v->name, path, error))
            return FALSE;
        }
    }
  for (guint s = 0; args->outputs && args->outputs[s]; s++)
    {
      g_autofree char *name = NULL, *file = NULL;
      int k;
      if (!fb_cli_split_spec ("--output", args->outputs[s], &name, &file, error))
        return FALSE;
      k = output_index (graph, name);
      if (!fb_tensor_save_file (g_ptr_array_index (outputs, k), name, file, error))
        return FALSE;
    }
  return TRUE;
}

static JsonNode *
dims_json (const FbTensor *t)
{
  JsonArray *dims = json_array_new ();

  for (int i = 0; i < t->rank; i++)
    json_array_add_int_element (dims, t->dims[i]);
  return json_node_init_array (json_node_alloc (), dims);
}

static void
print_json (const char *model, const char *target, const char *note, const FbGraph *graph,
            GPtrArray *outputs, const FbTimingStats *times)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "model");
  json_builder_add_string_value (b, model);
  json_builder_set_member_name (b, "target");
  json_builder_add_string_value (b, target);
  if (note != NULL)
    {
      json_builder_set_member_name (b, "run");
      json_builder_add_string_value (b, note);
    }
  json_builder_set_member_name (b, "iterations");
  json_builder_add_int_value (b, times->count);
  json_builder_set_member_name (b, "median_ms");
  json_builder_add_double_value (b, times->median);
  json_builder_set_member_name (b, "min_ms");
  json_builder_add_double_value (b, times->min);
  json_builder_set_member_name (b, "max_ms");
  json_builder_add_double_value (b, times->max);
  json_builder_set_member_name (b, "mean_ms");
  json_builder_add_double_value (b, times->mean);
  json_builder_set_member_name (b, "p95_ms");
  json_builder_add_double_value (b, times->p95);
  json_builder_set_member_name (b, "outputs");
  json_builder_begin_array (b);
  for (guint i = 0; i < outputs->len; i++)
    {
      const FbTensor *t = g_ptr_array_index (outputs, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, ((const FbValue *) g_ptr_array_index (graph->outputs, i))->name);
      json_builder_set_member_name (b, "dtype");
      json_builder_add_string_value (b, fb_dtype_name (t->dtype));
      json_builder_set_member_name (b, "shape");
      json_builder_add_value (b, dims_json (t));
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  text = json_generator_to_data (gen, NULL);
  printf ("%s\n", text);
}

static void
print_text (const char *target, const FbGraph *graph, GPtrArray *outputs, const FbTimingStats *times)
{
  for (guint i = 0; i < outputs->len; i++)
    {
      const FbTensor *t = g_ptr_array_index (outputs, i);
      FbShape shape = fb_tensor_shape (t);
      g_autofree char *s = fb_shape_to_string (&shape);
      double lo = INFINITY, hi = -INFINITY, sum = 0;
      for (int64_t k = 0; k < t->numel; k++)
        {
          double v = fb_tensor_get_f64 (t, k);
          lo = MIN (lo, v);
          hi = MAX (hi, v);
          sum += v;
        }
      printf ("%-24s %-8s %-16s", ((const FbValue *) g_ptr_array_index (graph->outputs, i))->name,
              fb_dtype_name (t->dtype), s);
      if (t->numel > 0)
        printf (" min %g max %g mean %g", lo, hi, sum / (double) t->numel);
      printf ("\n");
    }
  printf ("%s: median %.3f ms, min %.3f ms, max %.3f ms over %u run%s\n", target,
          times->median, times->min, times->max, times->count, times->count == 1 ? "" : "s");
}

static int run_prepared (const char *model, const FbBackend *backend, FbCompiled *compiled,
                         FbSpecializer *spec, const FbGraph *graph, const RunArgs *args);

static int
run_model (const char *model, const FbBackend *backend, const FbCliPipelineArgs *pipeline_args,
           const RunArgs *args)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipeline) pipeline = NULL;
  const FbGraph *graph;
  g_autoptr(FbSpecializer) spec = NULL;
  g_autoptr(FbPipelineOptions) options = NULL;
  FbCompiled *bundle = NULL;      /* owned, freed at the end */
  FbCompiled *compiled = NULL;    /* what runs: the bundle, or the specializer's (borrowed) */
  FbBackendOptions backend_options = { .n_threads = (guint) args->threads,
                                       .strict_float32 = args->strict_float32,
                                       .tf32_matmul = args->tf32_matmul, .eager = args->eager };
  int status;

  /* A bundle was compiled before, for its shapes; a model is specialized to the shapes of its
   * inputs (as if pinned with --input-shape), so dynamic dimensions need no pinning. */
  if (fb_bundle_is_bundle (model))
    {
      if ((bundle = fb_cli_target_prepare (backend, model, pipeline_args, &backend_options,
                                           &pipeline, &error)) == NULL)
        return fb_cli_fail (error);
      compiled = bundle;
      graph = backend->graph (compiled);
    }
  else if (g_file_test (model, G_FILE_TEST_IS_DIR))
    {
      if ((pipeline = fb_cli_load_model (model, pipeline_args, &error)) == NULL)
        return fb_cli_fail (error);
      graph = fb_pipeline_final (pipeline);
    }
  else if ((options = fb_cli_pipeline_options (pipeline_args, &error)) == NULL ||
           (spec = fb_specializer_new (model, options, backend, &backend_options,
                                       &error)) == NULL)
    return fb_cli_fail (error);
  else
    graph = fb_specializer_graph (spec);
  status = run_prepared (model, backend, compiled, spec, graph, args);
  if (bundle != NULL)
    backend->free (bundle);
  return status;
}

static int
run_prepared (const char *model, const FbBackend *backend, FbCompiled *compiled,
              FbSpecializer *spec, const FbGraph *graph, const RunArgs *args)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) inputs = NULL;
  g_autoptr(GPtrArray) outputs = NULL;
  g_autofree double *ms = NULL;
  FbTimingStats times;

  if (!check_output_specs (graph, args->outputs, &error))
    return fb_cli_fail (error);
  if (args->input_dir != NULL)
    inputs = fb_cli_read_input_dir (graph, args->input_dir, &error);
  else if (args->inputs != NULL || graph->inputs->len == 0)
    inputs = fb_cli_read_named_inputs (graph, args->inputs, &error);
  else
    g_set_error (&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                 "%s needs %u input%s: give --input-dir DIR or --input NAME=FILE", model,
                 graph->inputs->len, graph->inputs->len == 1 ? "" : "s");
  if (inputs == NULL)
    return fb_cli_fail (error);
  if (spec != NULL)
    {
      FbPipeline *specialized;
      if (!fb_specializer_prepare (spec, inputs, &specialized, &compiled, &error))
        return fb_cli_fail (error);
      graph = backend->graph (compiled);
    }

  /* Each target times its runs its own way: the host clock on the cpu and the interpreter,
   * device events around a replay on cuda. */
  ms = g_new (double, args->iterations);
  outputs = backend->run_timed (compiled, inputs, (guint) args->iterations, ms, &error);
  if (outputs == NULL)
    return fb_cli_fail (error);
  g_autofree char *note = NULL;
  if (backend->describe_run != NULL)
    note = backend->describe_run (compiled);
  if (note != NULL && !args->json)
    fprintf (stderr, "%s\n", note);
  times = fb_timing_summarize (ms, (guint) args->iterations);
  if (!write_outputs (graph, outputs, args, &error))
    return fb_cli_fail (error);
  if (args->json)
    print_json (model, backend->name, note, graph, outputs, &times);
  else
    print_text (backend->name, graph, outputs, &times);
  return FB_EXIT_OK;
}

static int
run_remote (const char *model, const FbCliPipelineArgs *pipeline_args, const RunArgs *args)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbCliRemote) job = fb_cli_remote_new ("run");
  g_autofree char *iterations = g_strdup_printf ("%d", args->iterations);

  if (!fb_cli_remote_check_sources (model, args->input_dir, "--input", args->inputs, &error))
    return fb_cli_fail (error);
  for (guint i = 0; args->outputs && args->outputs[i]; i++)
    {
      g_autofree char *name = NULL, *file = NULL;
      if (!fb_cli_split_spec ("--output", args->outputs[i], &name, &file, &error))
        return fb_cli_fail (error);
    }
  fb_cli_remote_args (job, fb_cli_remote_send_model (job, model), "--iterations", iterations,
                      NULL);
  if (args->target)
    fb_cli_remote_args (job, "--target", args->target, NULL);
  if (args->json)
    fb_cli_remote_args (job, "--json", NULL);
  if (args->strict_float32)
    fb_cli_remote_args (job, "--strict-float32", NULL);
  if (args->tf32_matmul)
    fb_cli_remote_args (job, "--tf32-matmul", NULL);
  if (args->eager)
    fb_cli_remote_args (job, "--eager", NULL);
  g_autofree char *threads = args->threads > 0 ? g_strdup_printf ("%d", args->threads) : NULL;
  if (threads != NULL)
    fb_cli_remote_args (job, "--threads", threads, NULL);
  fb_cli_remote_inputs (job, args->input_dir, "--input", args->inputs);
  if (args->output_dir)
    fb_cli_remote_args (job, "--output-dir", fb_cli_remote_fetch_dir (job, args->output_dir), NULL);
  for (guint i = 0; args->outputs && args->outputs[i]; i++)
    {
      g_autofree char *name = NULL, *file = NULL, *spec = NULL;
      fb_cli_split_spec ("--output", args->outputs[i], &name, &file, NULL);
      spec = g_strdup_printf ("%s=%s", name, fb_cli_remote_fetch (job, file));
      fb_cli_remote_args (job, "--output", spec, NULL);
    }
  fb_cli_remote_pipeline (job, pipeline_args);
  return fb_cli_remote_execute (job, args->remote);
}

int
fb_cli_run (int argc, char **argv)
{
  RunArgs args = { .iterations = 1 };
  FbCliPipelineArgs pipeline = { 0 };
  const GOptionEntry entries[] = {
    { "target", 0, 0, G_OPTION_ARG_STRING, &args.target, "Where to run: interp, cpu or cuda", "TARGET" },
    { "input-dir", 0, 0, G_OPTION_ARG_FILENAME, &args.input_dir,
      "Read input_K.pb (or .npy) for the K-th model input", "DIR" },
    { "input", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args.inputs,
      "Read one input from a .pb or .npy file (repeatable)", "NAME=FILE" },
    { "output-dir", 0, 0, G_OPTION_ARG_FILENAME, &args.output_dir,
      "Write output_K.pb for the K-th model output", "DIR" },
    { "output", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args.outputs,
      "Write one output to a .pb or .npy file (repeatable)", "NAME=FILE" },
    { "iterations", 0, 0, G_OPTION_ARG_INT, &args.iterations, "Run this many times (timing)", "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &args.json, "Print one JSON object", NULL },
    { "threads", 0, 0, G_OPTION_ARG_INT, &args.threads,
      "cpu: threads (default: the processors this process may use)", "N" },
    { "strict-float32", 0, 0, G_OPTION_ARG_NONE, &args.strict_float32,
      "cuda: no TF32 at all: convolutions and matrix products in full float32", NULL },
    { "tf32-matmul", 0, 0, G_OPTION_ARG_NONE, &args.tf32_matmul,
      "cuda: matrix products in TF32 too (by default only convolutions use it, as PyTorch)", NULL },
    { "eager", 0, 0, G_OPTION_ARG_NONE, &args.eager,
      "cuda: launch kernel by kernel instead of replaying the CUDA graph", NULL },
    { "remote", 0, 0, G_OPTION_ARG_STRING, &args.remote,
      "Run on this ssh host (user@host or a Host of ~/.ssh/config)", "HOST" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("MODEL — run a model on given inputs");
  g_autoptr(GError) error = NULL;
  int status;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_add_group (context, fb_cli_pipeline_group (&pipeline));
  if (!g_option_context_parse (context, &argc, &argv, &error))
    status = fb_cli_fail (error);
  else if (argc != 2)
    {
      fprintf (stderr, "fusebench run: expected one MODEL (see --help)\n");
      status = FB_EXIT_INPUT;
    }
  else if (!fb_cli_check_target (args.target, &error) ||
           !fb_cli_check_precision (&(FbBackendOptions) { .strict_float32 = args.strict_float32,
                                                          .tf32_matmul = args.tf32_matmul }, &error))
    status = fb_cli_fail (error);
  else if (args.iterations < 1 || args.threads < 0)
    {
      fprintf (stderr, "fusebench run: --iterations must be 1 or more, --threads 0 or more\n");
      status = FB_EXIT_INPUT;
    }
  else if (args.input_dir != NULL && args.inputs != NULL)
    {
      fprintf (stderr, "fusebench run: give --input-dir or --input, not both\n");
      status = FB_EXIT_INPUT;
    }
  else if (args.remote)
    status = run_remote (argv[1], &pipeline, &args);
  else
    {
      const FbBackend *backend = NULL;
      if (!fb_cli_target_resolve (args.target, argv[1], &backend, &error))
        status = fb_cli_fail (error);
      else
        {
          /* A target whose convolutions run channels-last compiles so unless --layout says
           * not. */
          pipeline.channels_last = backend->channels_last;
          status = run_model (argv[1], backend, &pipeline, &args);
        }
    }

  g_free (args.target);
  g_free (args.input_dir);
  g_strfreev (args.inputs);
  g_free (args.output_dir);
  g_strfreev (args.outputs);
  g_free (args.remote);
  fb_cli_pipeline_args_clear (&pipeline);
  return status;
}
