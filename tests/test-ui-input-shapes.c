/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Input Shapes in the workbench window (win.input-shapes), on a model whose batch is dynamic
 * (tests/cases/dynamic-batch: x is N×4): Profile refuses the open batch; the dialog offers the
 * batch, refuses text that is no size and says so, and once the batch is pinned at 3 the graph
 * reads 3×4 and Profile on the cpu target works. A second window opening the model gets the pin
 * back from the settings; Clear takes it away. */
#include "fb-application.h"
#include "fb-window.h"
#include "fb-test-window.h"

#include <string.h>

static FbApplication *app;
static FbWindow *window;
static char *model_path;

static void
settle (FbWindow *w)
{
  test_window_settle (w);
}

static FbWindow *
open_window (void)
{
  g_autoptr(GFile) file = g_file_new_for_path (model_path);
  FbWindow *w = fb_window_new (app);

  gtk_window_set_default_size (GTK_WINDOW (w), 1200, 800);
  gtk_window_present (GTK_WINDOW (w));
  fb_window_open_file (w, file);
  while (fb_window_get_run (w) == NULL)
    g_main_context_iteration (NULL, TRUE);
  settle (w);
  return w;
}

static char *
pin_of_run (FbWindow *w)
{
  const FbShape *shape = g_hash_table_lookup (fb_run_get_options (fb_window_get_run (w))->input_shapes,
                                              "x");

  return shape != NULL ? fb_shape_to_string (shape) : NULL;
}

/* Input x of the final stage, as the run has it and as the after pane draws it. */
static void
assert_final_x (FbWindow *w,
                int64_t   batch)
{
  FbStage *stage = test_window_final_stage (w);
  FbRun *run = fb_window_get_run (w);
  FbGraph *drawn;
  FbValue *x = g_ptr_array_index (stage->graph->inputs, 0);

  g_assert_cmpstr (x->name, ==, "x");
  g_assert_cmpint (x->shape.rank, ==, 2);
  g_assert_cmpint (x->shape.dim[1], ==, 4);
  if (batch < 0)
    {
      g_assert_false (fb_shape_is_static (&x->shape));
      g_assert_cmpint (x->shape.dim[0], <, 0);
    }
  else
    {
      g_assert_true (fb_shape_is_static (&x->shape));
      g_assert_cmpint (x->shape.dim[0], ==, batch);
    }
  /* The final stage in the after pane draws the same shape. */
  fb_stage_list_select (fb_window_get_stage_list (w), fb_run_n_stages (run) - 1);
  settle (w);
  drawn = fb_graph_view_get_graph (fb_compare_view_get_after_view (fb_window_get_compare_view (w)));
  g_assert_nonnull (drawn);
  g_assert_true (fb_shape_equal (&((FbValue *) g_ptr_array_index (drawn->inputs, 0))->shape,
                                 &x->shape));
}

static GtkWidget *
find_dim_row (GtkWidget  *widget,
              const char *input,
              int         d)
{
  if (ADW_IS_ENTRY_ROW (widget)
      && g_strcmp0 (g_object_get_data (G_OBJECT (widget), "fb-input"), input) == 0
      && GPOINTER_TO_INT (g_object_get_data (G_OBJECT (widget), "fb-dim")) == d)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_dim_row (child, input, d);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The dialog's message: the one visible label styled as an error. */
static const char *
error_message (GtkWidget *widget)
{
  if (GTK_IS_LABEL (widget) && gtk_widget_has_css_class (widget, "error")
      && gtk_widget_get_visible (widget))
    return gtk_label_get_label (GTK_LABEL (widget));
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      const char *found = error_message (child);

      if (found != NULL)
        return found;
    }
  return NULL;
}

static GtkWidget *
open_dialog (FbWindow *w)
{
  GtkWindow *dialog;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.input-shapes", NULL));
  dialog = fb_window_get_input_shapes_dialog (w);
  g_assert_nonnull (dialog);
  settle (w);
  return GTK_WIDGET (dialog);
}

static void
test_pin_and_profile (void)
{
  const char *error_before;
  g_autofree char *pin = NULL;
  GtkWidget *dialog, *batch;
  const char *message;
  FbProfile *made;

  /* The batch is open: the graph says so, and Profile says it must be pinned. */
  g_assert_null (pin_of_run (window));
  assert_final_x (window, -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  settle (window);
  g_assert_null (fb_window_get_profile (window));
  g_assert_nonnull (fb_window_get_last_error (window));
  g_assert_nonnull (strstr (fb_window_get_last_error (window), "dynamic shape"));

  /* One entry, for the batch, starting at 1; text that is no size is refused, by name. */
  dialog = open_dialog (window);
  batch = find_dim_row (dialog, "x", 0);
  g_assert_nonnull (batch);
  g_assert_null (find_dim_row (dialog, "x", 1));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (batch)), ==, "1");
  gtk_editable_set_text (GTK_EDITABLE (batch), "three");
  g_assert_true (gtk_widget_activate_action (dialog, "shapes.apply", NULL));
  g_assert_true (fb_window_get_input_shapes_dialog (window) == GTK_WINDOW (dialog));
  message = error_message (dialog);
  g_assert_nonnull (message);
  g_assert_nonnull (strstr (message, "x"));
  g_assert_nonnull (strstr (message, "Dimension 0"));
  g_assert_nonnull (strstr (message, "three"));
  gtk_editable_set_text (GTK_EDITABLE (batch), "0");
  g_assert_true (gtk_widget_activate_action (dialog, "shapes.apply", NULL));
  g_assert_nonnull (error_message (dialog));
  g_assert_null (pin_of_run (window));

  /* Batch 3: the passes run again with it, and the graph reads 3×4. */
  gtk_editable_set_text (GTK_EDITABLE (batch), "3");
  g_assert_null (error_message (dialog));
  g_assert_true (gtk_widget_activate_action (dialog, "shapes.apply", NULL));
  settle (window);
  g_assert_null (fb_window_get_input_shapes_dialog (window));
  pin = pin_of_run (window);
  g_assert_cmpstr (pin, ==, "3x4");
  assert_final_x (window, 3);

  /* Profile now runs on the cpu, with the same shapes. */
  error_before = fb_window_get_last_error (window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  settle (window);
  g_assert_true (fb_window_get_last_error (window) == error_before);
  made = fb_window_get_profile (window);
  g_assert_nonnull (made);
  g_assert_cmpstr (made->target, ==, "cpu");
  g_assert_cmpuint (made->kernels->len, >, 0);
  g_assert_true (fb_window_is_profile_painted (window));

  /* Opened again, the dialog shows the pin. */
  dialog = open_dialog (window);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (find_dim_row (dialog, "x", 0))), ==, "3");
  gtk_window_destroy (GTK_WINDOW (dialog));
  g_assert_null (fb_window_get_input_shapes_dialog (window));
}

static void
test_remembered (void)
{
  FbWindow *second = open_window ();
  g_autofree char *pin = pin_of_run (second);
  GSettings *settings = fb_application_get_settings (app);
  g_autoptr(GVariant) map = NULL;
  g_autofree char *uri = NULL;
  GtkWidget *dialog;

  /* The model's pins come back from the settings. */
  g_assert_cmpstr (pin, ==, "3x4");
  assert_final_x (second, 3);

  /* Clear: the graph's batch is open again, and the model is remembered without pins. */
  dialog = open_dialog (second);
  g_assert_true (gtk_widget_activate_action (dialog, "shapes.clear", NULL));
  settle (second);
  g_assert_null (fb_window_get_input_shapes_dialog (second));
  g_clear_pointer (&pin, g_free);
  pin = pin_of_run (second);
  g_assert_null (pin);
  assert_final_x (second, -1);
  g_assert_nonnull (settings);
  map = g_settings_get_value (settings, "input-shapes");
  {
    g_autoptr(GFile) file = g_file_new_for_path (model_path);

    uri = g_file_get_uri (file);
  }
  g_assert_false (g_variant_lookup (map, uri, "as", NULL));
  gtk_window_destroy (GTK_WINDOW (second));
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  model_path = g_test_build_filename (G_TEST_DIST, "cases", "dynamic-batch", "model.onnx", NULL);
  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  window = open_window ();

  g_test_add_func ("/ui/input-shapes/pin-and-profile", test_pin_and_profile);
  g_test_add_func ("/ui/input-shapes/remembered", test_remembered);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  g_free (model_path);
  return status;
}
