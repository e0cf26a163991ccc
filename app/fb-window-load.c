/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Opening models and running the pipeline, both in worker threads; the window shows progress
 * and stays responsive, and errors become messages, never crashes. */
#include "fb-onnx-import.h"
#include "fb-ui.h"
#include "fb-window-export.h"
#include "fb-window-private.h"

#include <string.h>

#define SAMPLE_RESOURCE FB_RESOURCE_PATH "/models/sample-cnn.onnx"
#define SAMPLE_TITLE    "sample-cnn.onnx"

typedef struct {
  GFile  *file;       /* or */
  GBytes *bytes;
  char   *title;
} LoadJob;

static void
load_job_free (gpointer data)
{
  LoadJob *job = data;

  g_clear_object (&job->file);
  g_clear_pointer (&job->bytes, g_bytes_unref);
  g_free (job->title);
  g_free (job);
}

void
_fb_window_show_error (FbWindow   *self,
                       const char *message)
{
  g_free (self->last_error);
  self->last_error = g_strdup (message);
  /* With nothing on screen the error is the page; otherwise the model stays and a toast says why
   * the new one did not come. */
  if (self->run == NULL)
    {
      adw_status_page_set_description (self->error_page, message);
      gtk_stack_set_visible_child_name (self->main_stack, "error");
    }
  else
    {
      AdwToast *toast = adw_toast_new (message);

      /* The lowering's words for an input whose shape is open: the dialog is where it is pinned. */
      if (strstr (message, "--input-shape") != NULL)
        {
          adw_toast_set_button_label (toast, "Set Input Shapes…");
          adw_toast_set_action_name (toast, "win.input-shapes");
        }
      adw_toast_set_timeout (toast, 8);
      adw_toast_overlay_add_toast (self->toast_overlay, toast);
    }
  _fb_window_update_busy (self);
}

static void
load_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  LoadJob *job = task_data;
  GError *error = NULL;
  FbGraph *graph = NULL;

  if (job->file != NULL)
    {
      g_autofree char *path = g_file_get_path (job->file);

      if (path != NULL)
        graph = fb_onnx_import_file (path, NULL, &error);
      else
        {
          /* Not on a local disk: read it whole; external data cannot be found then. */
          g_autoptr(GBytes) bytes = g_file_load_bytes (job->file, cancellable, NULL, &error);

          if (bytes != NULL)
            graph = fb_onnx_import_bytes (bytes, job->title, NULL, NULL, &error);
        }
    }
  else
    graph = fb_onnx_import_bytes (job->bytes, job->title, NULL, NULL, &error);

  if (graph == NULL)
    g_task_return_error (task, error);
  else if (g_task_return_error_if_cancelled (task))
    fb_graph_free (graph);
  else
    g_task_return_pointer (task, graph, (GDestroyNotify) fb_graph_free);
}

static void
warn_unsupported (FbWindow      *self,
                  const FbGraph *graph)
{
  g_autoptr(GHashTable) unsupported = fb_graph_unsupported_ops (graph);
  g_autoptr(GString) ops = g_string_new (NULL);
  g_autofree char *message = NULL;
  GHashTableIter iter;
  gpointer op;

  if (g_hash_table_size (unsupported) == 0)
    return;
  g_hash_table_iter_init (&iter, unsupported);
  while (g_hash_table_iter_next (&iter, &op, NULL))
    g_string_append_printf (ops, "%s%s", ops->len > 0 ? ", " : "", (const char *) op);
  message = g_strdup_printf ("%s: operators nothing here computes: %s", self->model_title, ops->str);
  adw_toast_overlay_add_toast (self->toast_overlay, adw_toast_new (message));
}

static void
on_loaded (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  FbWindow *self = FB_WINDOW (source);
  LoadJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  FbGraph *graph = g_task_propagate_pointer (G_TASK (result), &error);
  g_autoptr(GFile) parent = NULL;
  g_autofree char *subtitle = NULL;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || self->disposed)
    {
      g_clear_pointer (&graph, fb_graph_free);
      return;
    }
  g_clear_object (&self->load_cancellable);
  if (graph == NULL)
    {
      _fb_window_show_error (self, error->message);
      return;
    }

  /* A new model: the old one's views, groups and selection mean nothing for it. A run of the old
   * model's pipeline that is still going keeps that pipeline alive until it stops. */
  warn_unsupported (self, graph);
  g_clear_pointer (&self->runner, fb_runner_unref);
  self->runner = fb_runner_new (graph, job->title);
  g_free (self->model_title);
  self->model_title = g_strdup (job->title);
  g_set_object (&self->model_file, job->file);
  _fb_window_remote_model_changed (self);
  g_clear_pointer (&self->run, fb_run_unref);
  g_ptr_array_set_size (self->options->no_fuse, 0);
  /* Pins taken from a profile of the model before mean nothing for this one; those set for this
   * one when it was last open apply again. */
  g_hash_table_remove_all (self->options->input_shapes);
  _fb_window_input_shapes_model_changed (self);
  fb_stage_list_set_run (self->stage_list, NULL);
  fb_compare_view_set_run (self->compare_view, NULL);
  fb_node_inspector_clear (self->inspector);
  _fb_window_kernel_run_changed (self);
  _fb_window_profile_run_changed (self);

  /* The folder's name, not its whole path: enough to tell models apart, short enough to read. */
  if (job->file != NULL && (parent = g_file_get_parent (job->file)) != NULL)
    subtitle = g_file_get_basename (parent);
  else
    subtitle = g_strdup (job->file != NULL ? "" : "the bundled sample model");
  adw_window_title_set_title (self->window_title, job->title);
  adw_window_title_set_subtitle (self->window_title, subtitle);
  gtk_window_set_title (GTK_WINDOW (self), job->title);
  if (job->file != NULL && gtk_window_get_application (GTK_WINDOW (self)) != NULL)
    fb_application_add_recent (FB_APPLICATION (gtk_window_get_application (GTK_WINDOW (self))), job->file);
  _fb_window_rerun (self);
}

static void
load (FbWindow *self,
      LoadJob  *job)
{
  g_autoptr(GTask) task = NULL;

  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  self->load_cancellable = g_cancellable_new ();
  if (self->run == NULL)
    gtk_stack_set_visible_child_name (self->main_stack, "loading");

  task = g_task_new (self, self->load_cancellable, on_loaded, NULL);
  g_task_set_source_tag (task, load);
  g_task_set_task_data (task, job, load_job_free);
  g_task_run_in_thread (task, load_thread);
  _fb_window_update_busy (self);
}

void
fb_window_open_file (FbWindow *self,
                     GFile    *file)
{
  LoadJob *job;

  g_return_if_fail (FB_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  job = g_new0 (LoadJob, 1);
  job->file = g_object_ref (file);
  job->title = g_file_get_basename (file);
  load (self, job);
}

char *
_fb_window_model_key (FbWindow *self)
{
  return self->model_file != NULL ? g_file_get_uri (self->model_file) : g_strdup ("sample");
}

GBytes *
_fb_window_sample_bytes (GError **error)
{
  return g_resources_lookup_data (SAMPLE_RESOURCE, G_RESOURCE_LOOKUP_FLAGS_NONE, error);
}

void
fb_window_open_sample (FbWindow *self)
{
  g_autoptr(GError) error = NULL;
  GBytes *bytes;
  LoadJob *job;

  g_return_if_fail (FB_IS_WINDOW (self));

  if ((bytes = _fb_window_sample_bytes (&error)) == NULL)
    {
      _fb_window_show_error (self, error->message);
      return;
    }
  job = g_new0 (LoadJob, 1);
  job->bytes = bytes;
  job->title = g_strdup (SAMPLE_TITLE);
  load (self, job);
}

static void
on_progress (GObject *object,
             guint    done,
             guint    total)
{
  FbWindow *self = FB_WINDOW (object);
  g_autofree char *text = g_strdup_printf ("Running the passes… %u of %u", done, total);

  if (self->run_cancellable == NULL || self->disposed)
    return;
  gtk_progress_bar_set_fraction (self->progress_bar, total > 0 ? (double) done / total : 0);
  gtk_label_set_label (self->progress_label, text);
}

/* The first stage where a pass changed something: what a new user wants to see first. */
static int
first_interesting_stage (FbRun *run)
{
  for (guint i = 1; i < fb_run_n_stages (run); i++)
    {
      FbStage *stage = fb_run_get_stage (run, i);

      if (stage->enabled && stage->changes != NULL && stage->changes->len > 0)
        return i;
    }
  return 0;
}

static void
on_run_done (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  FbWindow *self = FB_WINDOW (source);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbRun) run = fb_runner_run_finish (result, &error);
  gboolean first;

  g_clear_object (&self->run_cancellable);
  if (self->disposed)
    return;
  if (self->rerun_pending)
    {
      /* The options or the model changed while this one ran: its result is stale. */
      self->rerun_pending = FALSE;
      _fb_window_rerun (self);
      return;
    }
  if (run == NULL)
    {
      if (g_error_matches (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_CANCELLED)
          || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        _fb_window_update_busy (self);
      else
        _fb_window_show_error (self, error->message);
      return;
    }

  /* The new run shares the stages the re-run kept with the one on screen: the views swap in
   * only what changed, keeping the stage, the viewport and the selection. */
  first = self->run == NULL;
  g_clear_pointer (&self->run, fb_run_unref);
  self->run = fb_run_ref (run);
  gtk_stack_set_visible_child_name (self->main_stack, "workbench");
  fb_compare_view_set_run (self->compare_view, run);
  fb_stage_list_set_run (self->stage_list, run);
  _fb_window_kernel_run_changed (self);
  _fb_window_profile_run_changed (self);
  if (first)
    fb_stage_list_select (self->stage_list, first_interesting_stage (run));
  if (fb_run_get_stopped (run) != NULL)
    {
      /* The model is drawn as imported; the nodes in question say why in the inspector. */
      g_autofree char *message = g_strdup_printf ("Only the import is shown: %s",
                                                  fb_run_get_stopped (run));
      AdwToast *toast = adw_toast_new (message);

      adw_toast_set_timeout (toast, 0);
      adw_toast_overlay_add_toast (self->toast_overlay, toast);
      g_free (self->last_error);
      self->last_error = g_strdup (fb_run_get_stopped (run));
    }
  _fb_window_update_busy (self);
}

void
_fb_window_rerun (FbWindow *self)
{
  if (self->runner == NULL)
    return;
  /* One run at a time: its worker owns the pipeline. The newest options win; the stages the
   * stopped run finished with the same options are kept by the next. */
  if (self->run_cancellable != NULL)
    {
      g_cancellable_cancel (self->run_cancellable);
      self->rerun_pending = TRUE;
      return;
    }
  self->run_cancellable = g_cancellable_new ();
  gtk_progress_bar_set_fraction (self->progress_bar, 0);
  fb_runner_run_async (self->runner, G_OBJECT (self), self->options, self->run_cancellable,
                       on_progress, on_run_done, NULL);
  _fb_window_update_busy (self);
}

/* Cancelling a re-run takes back the change that started it: the options, the settings and the
 * check boxes go back to what the run on screen was made with. */
static void
restore_options (FbWindow *self)
{
  const FbPipelineOptions *options = fb_run_get_options (self->run);
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  GSettings *settings = app != NULL ? fb_application_get_settings (FB_APPLICATION (app)) : NULL;
  const char *layout = options->layout == FB_LAYOUT_NHWC ? "nhwc" : "nchw";
  GAction *action;

  fb_pipeline_options_free (self->options);
  self->options = fb_pipeline_options_copy (options);
  if (settings != NULL)
    {
      g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
      g_auto(GStrv) disabled = NULL;

      for (guint i = 0; i < options->disabled_passes->len; i++)
        g_strv_builder_add (builder, g_ptr_array_index (options->disabled_passes, i));
      disabled = g_strv_builder_end (builder);
      g_settings_set_strv (settings, "disabled-passes", (const char * const *) disabled);
      g_settings_set_string (settings, "layout", layout);
    }
  else if ((action = g_action_map_lookup_action (G_ACTION_MAP (self), "layout")) != NULL)
    g_simple_action_set_state (G_SIMPLE_ACTION (action), g_variant_new_string (layout));
  fb_stage_list_set_run (self->stage_list, self->run);
}

void
_fb_window_cancel (FbWindow *self)
{
  fb_window_cancel_export (self);
  if (self->run_cancellable != NULL && self->run != NULL && self->runner != NULL
      && fb_run_get_options (self->run) != NULL && self->load_cancellable == NULL)
    restore_options (self);
  self->rerun_pending = FALSE;
  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  if (self->run_cancellable != NULL)
    g_cancellable_cancel (self->run_cancellable);
  if (self->profile_cancellable != NULL)
    g_cancellable_cancel (self->profile_cancellable);
  /* The run's callback clears run_cancellable when the worker has stopped. */
  if (self->run == NULL && self->runner == NULL && gtk_widget_get_realized (GTK_WIDGET (self)))
    _fb_window_show_error (self, "Cancelled");
  else
    _fb_window_update_busy (self);
}

static gboolean
on_drop (GtkDropTarget *target,
         const GValue  *value,
         double         x,
         double         y,
         FbWindow      *self)
{
  GSList *files;

  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  if ((files = gdk_file_list_get_files (g_value_get_boxed (value))) == NULL)
    return FALSE;
  /* One model a window: the first file dropped. */
  fb_window_open_file (self, files->data);
  g_slist_free (files);
  return TRUE;
}

void
_fb_window_init_drop (FbWindow *self)
{
  GtkDropTarget *target = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);

  g_signal_connect_object (target, "drop", G_CALLBACK (on_drop), self, 0);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (target));
}
