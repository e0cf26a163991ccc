/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench passes MODEL [PIPELINE] [--print-after-all] [--dump-dir DIR]
 *                        [--verify [--input-dir DIR]]
 *
 * Runs the pass pipeline and prints one line per stage: its time, the nodes before and after,
 * and what changed. --verify runs the interpreter on every stage with the same inputs (seeded
 * random ones, or input_K.pb / input_K.npy from --input-dir) and reports each stage's largest
 * deviation from stage 0; a stage beyond rtol 1e-4 fails the command and is named. */
#include "fb-cli-load.h"
#include "fb-compare.h"
#include "fb-dot.h"
#include "fb-interp.h"
#include "fb-onnx-import.h"
#include "fb-pipeline.h"
#include "fb-printer.h"
#include "fb-tensor-io.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#define VERIFY_RTOL 1e-4
#define VERIFY_ATOL 1e-5
#define VERIFY_SEED 20240601

typedef struct {
  gboolean ok;         /* within tolerance */
  double   worst;      /* largest |actual - expected| over all outputs */
  char    *reason;     /* when the stage failed to run or differs in type or shape */
} Verdict;

/* ---- inputs ------------------------------------------------------------------------------- */

static FbTensor *
random_input (const FbValue *v, GRand *rand, GError **error)
{
  g_autoptr(FbTensor) t = NULL;

  if (!fb_shape_is_static (&v->shape))
    {
      g_autofree char *s = fb_shape_to_string (&v->shape);
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "input '%s' has shape %s: give its size with --input-shape %s=... or feed "
                   "it with --input-dir", v->name, s, v->name);
      return NULL;
    }
  t = fb_tensor_new (v->dtype, v->shape.rank, v->shape.dim, error);
  if (t == NULL)
    return NULL;
  for (int64_t i = 0; i < t->numel; i++)
    {
      /* Small non-negative integers are valid indices for every embedding and gather. */
      double x = fb_dtype_is_float (v->dtype) ? g_rand_double_range (rand, -1.0, 1.0)
                 : v->dtype == FB_DTYPE_BOOL  ? g_rand_int_range (rand, 0, 2)
                                              : g_rand_int_range (rand, 0, 8);
      fb_tensor_set_f64 (t, i, x);
    }
  return g_steal_pointer (&t);
}

static GPtrArray *
load_inputs (const FbGraph *graph, const char *dir, GError **error)
{
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_autoptr(GRand) rand = g_rand_new_with_seed (VERIFY_SEED);
  guint fed = 0;

  for (guint i = 0; i < graph->inputs->len; i++)
    {
      const FbValue *v = g_ptr_array_index (graph->inputs, i);
      FbTensor *t;

      if (v->constant != NULL)
        {
          g_ptr_array_add (inputs, NULL);
          continue;
        }
      if (dir != NULL)
        {
          g_autofree char *base = g_strdup_printf ("input_%u.pb", fed);
          g_autofree char *path = g_build_filename (dir, base, NULL);
          if (!g_file_test (path, G_FILE_TEST_EXISTS))
            {
              g_autofree char *npy = g_strdup_printf ("input_%u.npy", fed);
              g_free (path);
              path = g_build_filename (dir, npy, NULL);
            }
          t = fb_tensor_load_file (path, NULL, error);
        }
      else
        t = random_input (v, rand, error);
      if (t == NULL)
        return NULL;
      g_ptr_array_add (inputs, t);
      fed++;
    }
  return g_steal_pointer (&inputs);
}

/* ---- verification ------------------------------------------------------------------------- */

static void
verify_stage (const FbGraph *graph, GPtrArray *inputs, GPtrArray *expected, Verdict *v)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) outputs = fb_interp_run (graph, inputs, NULL, &error);

  v->ok = TRUE;
  v->worst = 0;
  v->reason = NULL;
  if (outputs == NULL)
    {
      v->ok = FALSE;
      v->reason = g_strdup (error->message);
      return;
    }
  if (outputs->len != expected->len)
    {
      v->ok = FALSE;
      v->reason = g_strdup_printf ("%u outputs instead of %u", outputs->len, expected->len);
      return;
    }
  for (guint k = 0; k < outputs->len; k++)
    {
      FbCompare c = { 0 };
      fb_tensor_compare (g_ptr_array_index (expected, k), g_ptr_array_index (outputs, k),
                         VERIFY_RTOL, VERIFY_ATOL, &c);
      v->worst = MAX (v->worst, c.worst_abs);
      if (!c.ok && v->ok)
        {
          const FbValue *out = g_ptr_array_index (graph->outputs, k);
          v->ok = FALSE;
          v->reason = g_strdup_printf ("output '%s': %s", out->name, c.reason ? c.reason : "differs");
        }
      fb_compare_clear (&c);
    }
}

/* ---- printing ----------------------------------------------------------------------------- */

static char *
change_counts (const FbStage *s)
{
  guint added = 0, removed = 0, changed = 0, fused = 0;

  for (guint i = 0; i < s->changes->len; i++)
    switch (g_array_index (s->changes, FbChange, i).kind)
      {
      case FB_CHANGE_ADDED:   added++;   break;
      case FB_CHANGE_REMOVED: removed++; break;
      case FB_CHANGE_CHANGED: changed++; break;
      case FB_CHANGE_FUSED:   fused++;   break;
      default: break;
      }
  if (added + removed + changed + fused == 0)
    return g_strdup ("");
  return g_strdup_printf ("  [+%u -%u ~%u fused %u]", added, removed, changed, fused);
}

/* printf pads by bytes; "→" is three bytes and one column. */
static void
print_padded (const char *s, int width)
{
  glong cols = g_utf8_strlen (s, -1);
  fputs (s, stdout);
  for (glong i = cols; i < width; i++)
    fputc (' ', stdout);
}

static void
print_table (FbPipeline *p, const Verdict *verdicts)
{
  printf ("%3s  %-17s %10s  %-13s", "#", "stage", "time", "nodes");
  if (verdicts)
    print_padded ("     max |Δ|", 12);
  printf ("  %s\n", "what changed");
  for (guint i = 0; i < fb_pipeline_n_stages (p); i++)
    {
      FbStage *s = fb_pipeline_stage (p, i);
      g_autofree char *nodes = NULL;
      g_autofree char *time = NULL;
      g_autofree char *counts = change_counts (s);
      g_autofree char *dev = NULL;

      if (i == 0 || g_str_equal (s->name, "final"))
        nodes = g_strdup_printf ("%u", s->nodes_after);
      else
        nodes = g_strdup_printf ("%u → %u", s->nodes_before, s->nodes_after);
      time = i == 0 || g_str_equal (s->name, "final") || !s->enabled
               ? g_strdup ("") : g_strdup_printf ("%.2f ms", s->wall_ms);
      if (verdicts)
        dev = i == 0 ? g_strdup ("")
              : verdicts[i].reason ? g_strdup ("fails")
              : g_strdup_printf ("%.1e%s", verdicts[i].worst, verdicts[i].ok ? "" : " !");
      printf ("%3u  %-17s %10s  ", i, s->name, time);
      print_padded (nodes, 13);
      if (verdicts)
        printf ("%12s", dev);
      printf ("  %s%s\n", s->summary ? s->summary : "", counts);
    }
}

static gboolean
dump_stages (FbPipeline *p, const char *dir, GError **error)
{
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno),
                   "%s: cannot create the directory: %s", dir, g_strerror (errno));
      return FALSE;
    }
  for (guint i = 0; i < fb_pipeline_n_stages (p); i++)
    {
      FbStage *s = fb_pipeline_stage (p, i);
      g_autofree char *text = fb_graph_to_text (s->graph);
      g_autofree char *dot = fb_graph_to_dot (s->graph);
      g_autofree char *txt_name = g_strdup_printf ("%02u-%s.txt", i, s->name);
      g_autofree char *dot_name = g_strdup_printf ("%02u-%s.dot", i, s->name);
      g_autofree char *txt_path = g_build_filename (dir, txt_name, NULL);
      g_autofree char *dot_path = g_build_filename (dir, dot_name, NULL);
      if (!g_file_set_contents (txt_path, text, -1, error) ||
          !g_file_set_contents (dot_path, dot, -1, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
check_no_fuse (const FbGraph *graph, const FbPipelineOptions *options, GError **error)
{
  for (guint i = 0; i < options->no_fuse->len; i++)
    {
      const char *name = g_ptr_array_index (options->no_fuse, i);
      gboolean found = FALSE;
      for (guint k = 0; k < graph->nodes->len && !found; k++)
        found = g_strcmp0 (((FbNode *) g_ptr_array_index (graph->nodes, k))->name, name) == 0;
      if (!found)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--no-fuse '%s': the model has no node of that name", name);
          return FALSE;
        }
    }
  return TRUE;
}

static int
run_passes (const char *path, const FbCliPipelineArgs *args, gboolean print_all,
            const char *dump_dir, gboolean verify, const char *input_dir)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipelineOptions) options = fb_cli_pipeline_options (args, &error);
  g_autoptr(FbPipeline) pipeline = NULL;
  g_autofree Verdict *verdicts = NULL;
  FbGraph *graph;
  int status = FB_EXIT_OK;

  if (options == NULL ||
      (input_dir != NULL && !fb_cli_pin_from_input_dir (path, input_dir, options, &error)))
    return fb_cli_fail (error);
  graph = fb_onnx_import_file (path, options->input_shapes, &error);
  if (graph == NULL)
    return fb_cli_fail (error);
  pipeline = fb_pipeline_new (graph);
  if (!check_no_fuse (graph, options, &error) ||
      !fb_pipeline_run (pipeline, options, NULL, NULL, NULL, &error))
    return fb_cli_fail (error);

  if (verify)
    {
      FbGraph *reference = fb_pipeline_stage (pipeline, 0)->graph;
      g_autoptr(GPtrArray) inputs = load_inputs (reference, input_dir, &error);
      g_autoptr(GPtrArray) expected = NULL;

      if (inputs == NULL)
        return fb_cli_fail (error);
      expected = fb_interp_run (reference, inputs, NULL, &error);
      if (expected == NULL)
        {
          g_prefix_error (&error, "stage 0 (import) does not run: ");
          return fb_cli_fail (error);
        }
      verdicts = g_new0 (Verdict, fb_pipeline_n_stages (pipeline));
      for (guint i = 1; i < fb_pipeline_n_stages (pipeline); i++)
        verify_stage (fb_pipeline_stage (pipeline, i)->graph, inputs, expected, &verdicts[i]);
    }

  printf ("%s\n", path);
  print_table (pipeline, verdicts);

  if (print_all)
    for (guint i = 0; i < fb_pipeline_n_stages (pipeline); i++)
      {
        FbStage *s = fb_pipeline_stage (pipeline, i);
        g_autofree char *text = fb_graph_to_text (s->graph);
        printf ("\n// ---- stage %u: %s ----\n%s", i, s->name, text);
      }

  if (dump_dir != NULL && !dump_stages (pipeline, dump_dir, &error))
    status = fb_cli_fail (error);

  if (verdicts)
    {
      guint bad = 0;
      double worst = 0;
      for (guint i = 1; i < fb_pipeline_n_stages (pipeline); i++)
        {
          worst = MAX (worst, verdicts[i].worst);
          if (bad == 0 && (!verdicts[i].ok || verdicts[i].reason))
            bad = i;
        }
      if (bad)
        {
          fprintf (stderr, "fusebench: pass '%s' changes what the graph computes (beyond rtol %g): %s\n",
                   fb_pipeline_stage (pipeline, bad)->name, VERIFY_RTOL,
                   verdicts[bad].reason ? verdicts[bad].reason : "values differ");
          status = FB_EXIT_WORK;
        }
      else
        printf ("every stage computes the outputs of stage 0 (rtol %g; largest deviation %.1e)\n",
                VERIFY_RTOL, worst);
      for (guint i = 0; i < fb_pipeline_n_stages (pipeline); i++)
        g_free (verdicts[i].reason);
    }
  return status;
}

int
fb_cli_passes (int argc, char **argv)
{
  gboolean print_all = FALSE, verify = FALSE;
  char *dump_dir = NULL, *input_dir = NULL;
  FbCliPipelineArgs pipeline = { 0 };
  const GOptionEntry entries[] = {
    { "print-after-all", 0, 0, G_OPTION_ARG_NONE, &print_all,
      "Print the textual IR after every pass", NULL },
    { "dump-dir", 0, 0, G_OPTION_ARG_FILENAME, &dump_dir,
      "Write NN-STAGE.txt and NN-STAGE.dot for every stage into DIR", "DIR" },
    { "verify", 0, 0, G_OPTION_ARG_NONE, &verify,
      "Run every stage with the interpreter and compare it with stage 0", NULL },
    { "input-dir", 0, 0, G_OPTION_ARG_FILENAME, &input_dir,
      "Specialize dynamic dimensions to the shapes of input_K.pb (or .npy) in DIR; with "
      "--verify, feed them instead of random inputs", "DIR" },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    g_option_context_new ("MODEL — run the pass pipeline and show every stage");
  g_autoptr(GError) error = NULL;
  int status;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_add_group (context, fb_cli_pipeline_group (&pipeline));
  if (!g_option_context_parse (context, &argc, &argv, &error))
    status = fb_cli_fail (error);
  else if (argc != 2)
    {
      fprintf (stderr, "fusebench passes: expected one MODEL (see --help)\n");
      status = FB_EXIT_INPUT;
    }
  else
    status = run_passes (argv[1], &pipeline, print_all, dump_dir, verify, input_dir);
  fb_cli_pipeline_args_clear (&pipeline);
  g_free (dump_dir);
  g_free (input_dir);
  return status;
}
