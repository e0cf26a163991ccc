/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench check CASE_DIR... [--target interp] [PIPELINE]
 *
 * Each CASE_DIR holds model.onnx and test_data_set_* folders with input_K.pb and output_K.pb
 * (the ONNX backend-test layout). Every data set is run and every output compared with
 * rtol 1e-3, atol 1e-4 unless --rtol/--atol say otherwise (NaN where NaN is expected, same types
 * and shapes). One line per case:
 *   PASS|FAIL CASE_DIR  worst abs err X rel err Y (output NAME)
 * then a summary; the exit status is 1 when a case fails. */
#include "fb-cli-load.h"
#include "fb-cli-target.h"
#include "fb-compare.h"
#include "fb-interp.h"
#include "fb-tensor-io.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  double    worst_abs;
  double    worst_rel;
  char     *worst_output;   /* the output with the largest absolute error */
  char     *failure;        /* the first reason the case fails, or NULL */
} Verdict;

static void
verdict_fail (Verdict *v, char *reason)
{
  if (v->failure == NULL)
    v->failure = reason;
  else
    g_free (reason);
}

/* g_ptr_array_sort hands the comparison pointers to the elements. */
static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

static GPtrArray *
data_sets (const char *case_dir, GError **error)
{
  g_autoptr(GDir) dir = g_dir_open (case_dir, 0, error);
  g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (dir == NULL)
    return NULL;
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "test_data_set_"))
      {
        g_autofree char *path = g_build_filename (case_dir, name, NULL);
        if (g_file_test (path, G_FILE_TEST_IS_DIR))
          g_ptr_array_add (sets, g_steal_pointer (&path));
      }
  g_ptr_array_sort (sets, compare_names);
  if (sets->len == 0)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s: no test_data_set_* folder",
                   case_dir);
      return NULL;
    }
  return g_steal_pointer (&sets);
}

/* Runs one data set and folds its comparison into v. */
static double check_rtol = FB_COMPARE_RTOL, check_atol = FB_COMPARE_ATOL;

static void
check_data_set (const FbGraph *graph, const FbBackend *backend, FbCompiled *compiled,
                const char *set_dir, Verdict *v)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) inputs = fb_cli_read_input_dir (graph, set_dir, &error);
  g_autoptr(GPtrArray) outputs = NULL;

  if (inputs != NULL)
    outputs = backend ? backend->run (compiled, inputs, NULL, &error)
                      : fb_interp_run (graph, inputs, NULL, &error);
  if (outputs == NULL)
    {
      verdict_fail (v, g_strdup (error->message));
      return;
    }
  for (guint i = 0; i < outputs->len; i++)
    {
      const char *name = ((const FbValue *) g_ptr_array_index (graph->outputs, i))->name;
      g_autofree char *base = g_strdup_printf ("output_%u.pb", i);
      g_autofree char *path = g_build_filename (set_dir, base, NULL);
      g_autoptr(FbTensor) expected = NULL;
      FbCompare cmp;

      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        {
          g_autofree char *npy = g_strdup_printf ("output_%u.npy", i);
          g_free (path);
          path = g_build_filename (set_dir, npy, NULL);
        }
      expected = fb_tensor_load_file (path, NULL, &error);
      if (expected == NULL)
        {
          verdict_fail (v, g_strdup (error->message));
          return;
        }
      fb_tensor_compare (expected, g_ptr_array_index (outputs, i), check_rtol, check_atol, &cmp);
      if (v->worst_output == NULL || cmp.worst_abs > v->worst_abs)
        {
          g_free (v->worst_output);
          v->worst_output = g_strdup (name);
          v->worst_abs = cmp.worst_abs;
        }
      v->worst_rel = MAX (v->worst_rel, cmp.worst_rel);
      if (!cmp.ok)
        verdict_fail (v, g_strdup_printf ("%s, output %u '%s': %s", set_dir, i, name, cmp.reason));
      fb_compare_clear (&cmp);
    }
}

/* Returns TRUE when the case passes; prints its line either way. */
static gboolean
check_case (const char *case_dir, const FbCliPipelineArgs *pipeline_args, const FbBackend *backend,
            const FbBackendOptions *options)
{
  FbCompiled *compiled = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *model = g_build_filename (case_dir, "model.onnx", NULL);
  g_autoptr(GPtrArray) sets = data_sets (case_dir, &error);
  g_autoptr(FbPipeline) pipeline = NULL;
  Verdict v = { 0 };
  gboolean ok;

  if (sets == NULL || (pipeline = fb_cli_load_model (model, pipeline_args, &error)) == NULL)
    {
      printf ("FAIL %s  %s\n", case_dir, error->message);
      return FALSE;
    }
  if (backend != NULL &&
      (compiled = backend->compile (backend, fb_pipeline_final (pipeline), options, &error)) == NULL)
    {
      printf ("FAIL %s  %s\n", case_dir, error->message);
      return FALSE;
    }
  for (guint i = 0; i < sets->len; i++)
    check_data_set (fb_pipeline_final (pipeline), backend, compiled, g_ptr_array_index (sets, i), &v);
  if (compiled != NULL)
    backend->free (compiled);
  ok = v.failure == NULL;
  printf ("%s %s  worst abs err %.3g rel err %.3g (output %s)", ok ? "PASS" : "FAIL", case_dir,
          v.worst_abs, v.worst_rel, v.worst_output ? v.worst_output : "none");
  if (!ok)
    printf (": %s", v.failure);
  printf ("\n");
  g_free (v.worst_output);
  g_free (v.failure);
  return ok;
}

int
fb_cli_check (int argc, char **argv)
{
  char *target = NULL;
  FbBackendOptions backend_options = { 0 };
  const FbBackend *backend = NULL;
  FbCliPipelineArgs pipeline = { 0 };
  const GOptionEntry entries[] = {
    { "target", 0, 0, G_OPTION_ARG_STRING, &target, "Where to run: interp, cpu or cuda", "TARGET" },
    { "rtol", 0, 0, G_OPTION_ARG_DOUBLE, &check_rtol, "Relative tolerance (default 1e-3)", "X" },
    { "atol", 0, 0, G_OPTION_ARG_DOUBLE, &check_atol, "Absolute tolerance (default 1e-4)", "X" },
    { "strict-float32", 0, 0, G_OPTION_ARG_NONE, &backend_options.strict_float32,
      "cuda: contractions in full float32 (default: TF32, as PyTorch does)", NULL },
    { "eager", 0, 0, G_OPTION_ARG_NONE, &backend_options.eager,
      "cuda: launch kernel by kernel instead of replaying the captured CUDA graph", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    g_option_context_new ("CASE_DIR… — run ONNX backend-style cases and compare their outputs");
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipelineOptions) options = NULL;
  guint passed = 0, failed = 0;
  int status;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_add_group (context, fb_cli_pipeline_group (&pipeline));
  if (!g_option_context_parse (context, &argc, &argv, &error))
    status = fb_cli_fail (error);
  else if (argc < 2)
    {
      fprintf (stderr, "fusebench check: expected one or more CASE_DIR (see --help)\n");
      status = FB_EXIT_INPUT;
    }
  /* Options are checked once, before any case, so a typo is a usage error, not N failures. */
  else if (!fb_cli_target_resolve (target, NULL, &backend, &error) ||
           (options = fb_cli_pipeline_options (&pipeline, &error)) == NULL)
    status = fb_cli_fail (error);
  else if (backend != NULL && backend->compile == NULL)
    {
      fprintf (stderr, "fusebench check: this build runs only bundles; it cannot compile cases "
               "for the %s target\n", backend->name);
      status = FB_EXIT_INPUT;
    }
  else
    {
      pipeline.for_cpu = backend != NULL && backend->channels_last;
      for (int i = 1; i < argc; i++)
        {
          if (check_case (argv[i], &pipeline, backend, &backend_options))
            passed++;
          else
            failed++;
        }
      printf ("%u case%s: %u passed, %u failed\n", passed + failed,
              passed + failed == 1 ? "" : "s", passed, failed);
      status = failed ? FB_EXIT_WORK : FB_EXIT_OK;
    }
  g_free (target);
  fb_cli_pipeline_args_clear (&pipeline);
  return status;
}
