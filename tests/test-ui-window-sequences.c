/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The window on models with sequences, and on a model with a node nothing computes: every model
 * that loads is drawn. The Silero-VAD-style case (a top-level If whose output is a sequence)
 * runs every pass, and each stage is drawn with its If; a model whose string input stops the
 * passes after the import opens on that import, with the node marked in the inspector, instead
 * of "The Model Could Not Be Opened". */
#include "fb-application.h"
#include "fb-test-onnx.h"
#include "fb-test-window.h"

#include <glib/gstdio.h>
#include <string.h>

static FbApplication *app;
static FbWindow *window;

static void
open_path (const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);

  fb_window_open_file (window, file);
  test_window_settle (window);
}

static FbGraphView *
after_view (void)
{
  return fb_compare_view_get_after_view (fb_window_get_compare_view (window));
}

static const FbNode *
find_op (const FbGraph *graph, FbOpKind op)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (graph->nodes, i);
      if (n->op == op)
        return n;
    }
  return NULL;
}

/* Every stage shows a scene, and the If that makes the sequence is a box in it. */
static void
test_silero_every_stage (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "cases", "silero-vad", "model.onnx",
                                                 NULL);
  FbRun *run;

  open_path (path);
  g_assert_null (fb_window_get_last_error (window));
  run = fb_window_get_run (window);
  g_assert_nonnull (run);
  g_assert_null (fb_run_get_stopped (run));
  g_assert_cmpint (fb_run_find_stage (run, "final"), >, 0);
  for (guint s = 0; s < fb_run_n_stages (run); s++)
    {
      FbStage *stage = fb_run_get_stage (run, s);
      const FbNode *branch = find_op (stage->graph, FB_OP_IF);
      FbGraphScene *scene;

      fb_stage_list_select (fb_window_get_stage_list (window), s);
      test_window_settle (window);
      scene = fb_graph_view_get_scene (after_view ());
      g_assert_nonnull (scene);
      g_assert_nonnull (branch);
      g_assert_cmpint (branch->outputs[0]->kind, ==, FB_KIND_SEQUENCE);
      g_assert_cmpint (fb_graph_scene_find_node (scene, branch), >=, 0);
    }
}

static void
collect_labels (GtkWidget *widget, GString *text)
{
  if (GTK_IS_LABEL (widget))
    g_string_append_printf (text, "%s\n", gtk_label_get_text (GTK_LABEL (widget)));
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    collect_labels (child, text);
}

/* A string input: valid ONNX, but nothing here computes it. */
static char *
write_string_model (const char *dir)
{
  TestModel *m = test_model_new (17);
  g_autoptr(GBytes) bytes = NULL;
  char *path = g_build_filename (dir, "strings.onnx", NULL);

  test_model_input (m, "words", 8 /* STRING */, 1, (int64_t[]) { 3 });
  test_model_input (m, "x", 1 /* FLOAT */, 1, (int64_t[]) { 3 });
  test_model_node (m, "Identity", "Identity_words", (const char *[]) { "words", NULL },
                   (const char *[]) { "same_words", NULL });
  test_model_node (m, "Relu", "Relu_x", (const char *[]) { "x", NULL },
                   (const char *[]) { "y", NULL });
  test_model_output (m, "same_words");
  test_model_output (m, "y");
  bytes = test_model_pack (m);
  g_assert_true (g_file_set_contents (path, g_bytes_get_data (bytes, NULL),
                                      (gssize) g_bytes_get_size (bytes), NULL));
  test_model_free (m);
  return path;
}

static void
test_not_computed_is_drawn (void)
{
  g_autofree char *dir = g_dir_make_tmp ("fb-ui-seq-XXXXXX", NULL);
  g_autofree char *path = write_string_model (dir);
  g_autoptr(GString) text = g_string_new (NULL);
  FbRun *run;
  FbStage *stage;
  const FbNode *identity;
  FbGraphScene *scene;

  open_path (path);
  run = fb_window_get_run (window);
  g_assert_nonnull (run);
  /* The import is drawn, and the run says why the passes stopped there. */
  g_assert_cmpuint (fb_run_n_stages (run), ==, 1);
  g_assert_nonnull (fb_run_get_stopped (run));
  g_assert_nonnull (strstr (fb_run_get_stopped (run), "Identity_words"));
  g_assert_nonnull (fb_window_get_last_error (window));
  stage = fb_run_get_stage (run, 0);
  identity = find_op (stage->graph, FB_OP_IDENTITY);
  g_assert_nonnull (identity);
  scene = fb_graph_view_get_scene (after_view ());
  g_assert_nonnull (scene);
  g_assert_cmpint (fb_graph_scene_find_node (scene, identity), >=, 0);
  g_assert_cmpint (fb_graph_scene_find_node (scene, find_op (stage->graph, FB_OP_RELU)), >=, 0);
  /* The inspector explains the node. */
  fb_node_inspector_show_node (fb_window_get_inspector (window), stage->graph, identity, NULL);
  collect_labels (GTK_WIDGET (fb_window_get_inspector (window)), text);
  g_assert_nonnull (strstr (text->str, "Not computed"));
  g_assert_nonnull (strstr (text->str, "string"));

  g_unlink (path);
  g_rmdir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 860);
  gtk_window_present (GTK_WINDOW (window));

  g_test_add_func ("/ui/window-sequences/silero-every-stage", test_silero_every_stage);
  g_test_add_func ("/ui/window-sequences/not-computed-is-drawn", test_not_computed_is_drawn);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  return status;
}
