/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pipeline-bench MODEL [--runs N] [--toggle PASS|nhwc]
 *
 * Times the pass pipeline on a model the way the workbench uses it: the whole pipeline on a
 * freshly imported graph, and a re-run after one toggle (disabling a pass, or switching the
 * layout), which recomputes only the stages from that pass on. Prints the median of N runs of
 * each. Import is timed once and reported apart: it is not part of the pipeline. */
#include "fb-onnx-import.h"
#include "fb-pipeline.h"

#include "fb-timing.h"

#include <stdio.h>
#include <stdlib.h>

int
main (int argc, char **argv)
{
  int runs = 20;
  g_autofree char *toggle = NULL;
  const GOptionEntry entries[] = {
    { "runs", 'n', 0, G_OPTION_ARG_INT, &runs, "Runs of each measurement (default 20)", "N" },
    { "toggle", 0, 0, G_OPTION_ARG_STRING, &toggle,
      "What the re-run toggles: a pass name (disabled) or 'nhwc' (default fuse-elementwise)", "PASS" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("MODEL — time the pass pipeline");
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraph) imported = NULL;
  g_autoptr(FbPipelineOptions) base = fb_pipeline_options_new ();
  g_autoptr(FbPipelineOptions) toggled = NULL;
  g_autoptr(FbPipeline) pipeline = NULL;
  g_autofree double *full = NULL;
  g_autofree double *rerun = NULL;
  double t0, import_ms;
  guint n_before = 0, n_after = 0;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2 || runs < 1)
    {
      fprintf (stderr, "pipeline-bench: %s\n", error ? error->message : "expected one MODEL and --runs >= 1");
      return 2;
    }

  t0 = fb_timing_now_ms ();
  imported = fb_onnx_import_file (argv[1], NULL, &error);
  import_ms = fb_timing_now_ms () - t0;
  if (imported == NULL)
    {
      fprintf (stderr, "pipeline-bench: %s\n", error->message);
      return 2;
    }

  toggled = fb_pipeline_options_copy (base);
  if (toggle != NULL && g_str_equal (toggle, "nhwc"))
    toggled->layout = FB_LAYOUT_NHWC;
  else
    g_ptr_array_add (toggled->disabled_passes, g_strdup (toggle ? toggle : "fuse-elementwise"));

  full = g_new (double, runs);
  for (int r = 0; r < runs; r++)
    {
      g_autoptr(FbPipeline) p = fb_pipeline_new (fb_graph_copy (imported));
      t0 = fb_timing_now_ms ();
      if (!fb_pipeline_run (p, base, NULL, NULL, NULL, &error))
        {
          fprintf (stderr, "pipeline-bench: %s\n", error->message);
          return 1;
        }
      full[r] = fb_timing_now_ms () - t0;
      n_before = fb_pipeline_stage (p, 0)->nodes_after;
      n_after = fb_pipeline_stage (p, fb_pipeline_n_stages (p) - 1)->nodes_after;
    }

  /* Alternating toggled and default options: every run is a re-run after one toggle. */
  pipeline = fb_pipeline_new (fb_graph_copy (imported));
  if (!fb_pipeline_run (pipeline, base, NULL, NULL, NULL, &error))
    {
      fprintf (stderr, "pipeline-bench: %s\n", error->message);
      return 1;
    }
  rerun = g_new (double, runs);
  for (int r = 0; r < runs; r++)
    {
      t0 = fb_timing_now_ms ();
      if (!fb_pipeline_run (pipeline, r % 2 == 0 ? toggled : base, NULL, NULL, NULL, &error))
        {
          fprintf (stderr, "pipeline-bench: %s\n", error->message);
          return 1;
        }
      rerun[r] = fb_timing_now_ms () - t0;
    }

  printf ("model            %s\n", argv[1]);
  printf ("import           %.2f ms (once, not part of the pipeline)\n", import_ms);
  printf ("nodes            %u -> %u\n", n_before, n_after);
  printf ("pipeline         median %.2f ms over %d runs\n", fb_timing_summarize (full, runs).median, runs);
  printf ("re-run (toggle %s)  median %.2f ms over %d runs\n",
          toggle ? toggle : "fuse-elementwise", fb_timing_summarize (rerun, runs).median, runs);
#ifndef NDEBUG
  printf ("(debug build: the verifier runs between passes and is included in these times)\n");
#endif
  return 0;
}
