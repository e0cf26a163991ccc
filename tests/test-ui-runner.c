/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The runner behind the window: one pipeline per model re-run in a worker, one run at a time,
 * runs that share the stages a toggle kept, and a cancelled run the next one goes on from. */
#include "fb-onnx-import.h"
#include "fb-runner.h"

typedef struct {
  FbRun  *run;
  GError *error;
  guint   done;
} Result;

static void
on_done (GObject      *source,
         GAsyncResult *result,
         gpointer      data)
{
  Result *r = data;

  r->run = fb_runner_run_finish (result, &r->error);
  r->done++;
}

static FbRunner *
sample_runner (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "data", "models", "sample-cnn",
                                                 "model.onnx", NULL);
  g_autoptr(GError) error = NULL;
  FbGraph *graph = fb_onnx_import_file (path, NULL, &error);

  g_assert_no_error (error);
  return fb_runner_new (graph, "sample-cnn.onnx");
}

/* Runs once and waits: the result, or NULL with the error in *error. */
static FbRun *
run_and_wait (FbRunner                *runner,
              GObject                 *object,
              const FbPipelineOptions *options,
              GCancellable            *cancellable,
              GError                 **error)
{
  Result r = { 0 };

  /* Whether the worker still runs right here is a race (a cancelled run stops at once): only that
   * it has stopped by the callback is certain. */
  fb_runner_run_async (runner, object, options, cancellable, NULL, on_done, &r);
  while (r.done == 0)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (fb_runner_is_running (runner));
  if (r.error != NULL)
    g_propagate_error (error, r.error);
  return r.run;
}

static void
test_one_at_a_time (void)
{
  gboolean refused = FALSE;

  /* A second run while the first owns the pipeline is refused, not interleaved. The first run
   * of the small sample can finish before the second call is made on a loaded machine, so the
   * pair is tried until the two overlap; every try must end in a whole, valid run. */
  for (guint attempt = 0; attempt < 20 && !refused; attempt++)
    {
      g_autoptr(FbRunner) runner = sample_runner ();
      g_autoptr(GObject) object = g_object_new (G_TYPE_OBJECT, NULL);
      g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
      Result first = { 0 }, second = { 0 };

      fb_runner_run_async (runner, object, options, NULL, NULL, on_done, &first);
      fb_runner_run_async (runner, object, options, NULL, NULL, on_done, &second);
      while (first.done == 0 || second.done == 0)
        g_main_context_iteration (NULL, TRUE);
      g_assert_no_error (first.error);
      g_assert_nonnull (first.run);
      g_assert_cmpuint (fb_run_n_stages (first.run), ==, g_strv_length ((char **) fb_pipeline_pass_names ()) + 2);
      g_assert_cmpstr (fb_run_get_title (first.run), ==, "sample-cnn.onnx");
      if (second.error != NULL)
        {
          g_assert_error (second.error, G_IO_ERROR, G_IO_ERROR_BUSY);
          g_assert_null (second.run);
          g_error_free (second.error);
          refused = TRUE;
        }
      else
        fb_run_unref (second.run);
      fb_run_unref (first.run);
    }
  g_assert_true (refused);
}

static void
test_shared_stages (void)
{
  g_autoptr(FbRunner) runner = sample_runner ();
  g_autoptr(GObject) object = g_object_new (G_TYPE_OBJECT, NULL);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(FbRun) before = run_and_wait (runner, object, options, NULL, &error);
  g_autoptr(FbRun) after = NULL;
  g_autoptr(FbRun) back = NULL;
  int layout;

  g_assert_no_error (error);
  layout = fb_run_find_stage (before, "layout");
  g_assert_cmpint (layout, >, 0);

  /* A layout change keeps every stage before the layout pass, the same objects. */
  options->layout = FB_LAYOUT_NHWC;
  after = run_and_wait (runner, object, options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (fb_run_n_stages (after), ==, fb_run_n_stages (before));
  for (int i = 0; i < (int) fb_run_n_stages (after); i++)
    g_assert_true ((fb_run_get_stage (after, i) == fb_run_get_stage (before, i)) == (i < layout));
  g_assert_cmpint (fb_run_get_options (before)->layout, ==, FB_LAYOUT_NCHW);
  g_assert_cmpint (fb_run_get_options (after)->layout, ==, FB_LAYOUT_NHWC);

  /* A cancelled run hands back nothing; the runs on hand stay whole, and the next run goes on. */
  options->layout = FB_LAYOUT_NCHW;
  g_cancellable_cancel (cancellable);
  g_assert_null (run_and_wait (runner, object, options, cancellable, &error));
  g_assert_true (g_error_matches (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_CANCELLED)
                 || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED));
  g_clear_error (&error);
  back = run_and_wait (runner, object, options, NULL, &error);
  g_assert_no_error (error);
  for (int i = 0; i < (int) fb_run_n_stages (back); i++)
    {
      FbStage *a = fb_run_get_stage (after, i), *b = fb_run_get_stage (back, i);

      g_assert_cmpstr (a->name, ==, b->name);
      g_assert_true ((a == b) == (i < layout));
      g_assert_true (i >= layout || b == fb_run_get_stage (before, i));
      g_assert_cmpuint (b->graph->nodes->len, >, 0);
    }
  /* NHWC inserts transposes that NCHW does not need. */
  g_assert_cmpuint (fb_run_get_stage (after, layout)->nodes_after, >,
                    fb_run_get_stage (back, layout)->nodes_after);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/runner/one-at-a-time", test_one_at_a_time);
  g_test_add_func ("/ui/runner/shared-stages", test_shared_stages);
  return g_test_run ();
}
