/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A profile made with concrete input shapes in the workbench window: `fusebench profile` run on
 * a model with a dynamic batch (tests/cases/dynamic-batch) takes the batch from its inputs and
 * records it, and the window, on that model, takes those shapes to paint it. */
#include "fb-application.h"
#include "fb-test-cli.h"
#include "fb-window.h"
#include "fb-test-window.h"

#include <glib/gstdio.h>
#include <string.h>

static FbApplication *app;
static FbWindow *window;
static char *tmp_dir;

static FbGraphView *
after_view (void)
{
  return fb_compare_view_get_after_view (fb_window_get_compare_view (window));
}

static void
settle (void)
{
  test_window_settle (window);
}

static FbRun *
run (void)
{
  g_assert_nonnull (fb_window_get_run (window));
  return fb_window_get_run (window);
}

static FbStage *
final_stage (void)
{
  return test_window_final_stage (window);
}

/* Writes profile to a file and opens it the way the user does, waiting until it is taken. */
static void
open_profile (FbProfile  *profile,
              const char *name)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (tmp_dir, name, NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  FbProfile *before = fb_window_get_profile (window);

  g_assert_true (fb_profile_save (profile, path, &error));
  g_assert_no_error (error);
  fb_window_open_profile (window, file);
  while (fb_window_get_profile (window) == before)
    g_main_context_iteration (NULL, TRUE);
  settle ();
}

/* Opens the profile file at path the way the user does, waiting until the window took it and
 * anything it started (a re-run) is done. */
static void
open_profile_file (const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  FbProfile *before = fb_window_get_profile (window);

  fb_window_open_profile (window, file);
  while (fb_window_get_profile (window) == before)
    g_main_context_iteration (NULL, TRUE);
  settle ();
}

static char *
pin_of_run (const char *input)
{
  const FbShape *shape = g_hash_table_lookup (fb_run_get_options (run ())->input_shapes, input);

  return shape != NULL ? fb_shape_to_string (shape) : NULL;
}

/* A profile `fusebench profile` made of a model with a dynamic batch, from inputs of batch 5,
 * opens on that model: the window runs the passes again with the shapes the profile recorded and
 * paints it. Shapes that contradict the model, and other toggles, are still refused. */
static void
test_pinned_shapes (void)
{
  g_autofree char *model = test_source_path ("tests", "cases", "dynamic-batch", "model.onnx", NULL);
  g_autofree char *set1 = test_source_path ("tests", "cases", "dynamic-batch", "test_data_set_1",
                                            NULL);
  g_autofree char *path = g_build_filename (tmp_dir, "dynamic.json", NULL);
  g_autoptr(FbProfile) made = NULL, bad_shape = NULL, other_toggles = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *pin = NULL;
  const char *layout;
  FbValue *x;

  g_assert_cmpstr (fb_run_get_title (run ()), ==, "model.onnx");
  g_assert_null (pin_of_run ("x"));
  layout = fb_run_get_options (run ())->layout == FB_LAYOUT_NHWC ? "nhwc" : "nchw";
  {
    g_autoptr(TestRun) cli = test_run_fusebench ("profile", model, "--input-dir", set1,
                                                 "--layout", layout, "--iterations", "2",
                                                 "--warmup", "1", "-o", path, NULL);
    if (cli->status != 0)
      g_error ("fusebench profile: %s", cli->err);
  }

  open_profile_file (path);
  g_assert_true (fb_window_is_profile_painted (window));
  pin = pin_of_run ("x");
  g_assert_cmpstr (pin, ==, "5x4");
  x = g_ptr_array_index (final_stage ()->graph->inputs, 0);
  g_assert_true (fb_shape_is_static (&x->shape));
  g_assert_cmpint (x->shape.dim[0], ==, 5);
  g_assert_nonnull (fb_graph_view_get_profile (after_view ()));

  /* A batch the model could take, but a width it fixes at 4: refused, and the run keeps its
   * shapes. */
  made = fb_profile_load (path, &error);
  g_assert_no_error (error);
  bad_shape = fb_profile_load (path, &error);
  g_assert_no_error (error);
  {
    FbShape wide = { .rank = 2, .dim = { 5, 7 } };

    g_hash_table_insert (bad_shape->pipeline->input_shapes, g_strdup ("x"),
                         g_memdup2 (&wide, sizeof wide));
  }
  open_profile (bad_shape, "bad-shape.json");
  g_assert_false (fb_window_is_profile_painted (window));
  g_assert_nonnull (strstr (fb_window_get_last_error (window), "do not fit"));
  g_clear_pointer (&pin, g_free);
  pin = pin_of_run ("x");
  g_assert_cmpstr (pin, ==, "5x4");

  /* Other shapes with another toggle: the toggle is what is said, and nothing is re-run. */
  other_toggles = fb_profile_load (path, &error);
  g_assert_no_error (error);
  {
    FbShape three = { .rank = 2, .dim = { 3, 4 } };

    g_hash_table_insert (other_toggles->pipeline->input_shapes, g_strdup ("x"),
                         g_memdup2 (&three, sizeof three));
  }
  g_ptr_array_add (other_toggles->pipeline->disabled_passes, g_strdup ("fuse-epilogue"));
  open_profile (other_toggles, "other-toggles.json");
  g_assert_false (fb_window_is_profile_painted (window));
  g_assert_nonnull (strstr (fb_window_get_last_error (window), "toggles"));
  g_clear_pointer (&pin, g_free);
  pin = pin_of_run ("x");
  g_assert_cmpstr (pin, ==, "5x4");

  /* The profile made before opens again as it did. */
  open_profile (made, "made-again.json");
  g_assert_true (fb_window_is_profile_painted (window));
  fb_window_clear_profile (window);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = NULL;
  g_autoptr(GFile) file = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  model = test_source_path ("tests", "cases", "dynamic-batch", "model.onnx", NULL);
  file = g_file_new_for_path (model);
  tmp_dir = g_dir_make_tmp ("fusebench-profile-shapes-XXXXXX", &error);
  g_assert_no_error (error);
  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1200, 800);
  gtk_window_present (GTK_WINDOW (window));
  fb_window_open_file (window, file);
  while (fb_window_get_run (window) == NULL)
    g_main_context_iteration (NULL, TRUE);
  settle ();

  g_test_add_func ("/ui/profile-shapes/pinned", test_pinned_shapes);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  {
    g_autoptr(GDir) dir = g_dir_open (tmp_dir, 0, NULL);
    const char *name;

    while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *path = g_build_filename (tmp_dir, name, NULL);

        g_unlink (path);
      }
  }
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  return status;
}
