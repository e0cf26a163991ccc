/* SPDX-License-Identifier: GPL-3.0-or-later */
/* File → Export (see fb-window-export.h). The main thread gathers what an export reads (stage
 * references, the scene on screen, the lowering of the final stage) into a job; a GTask thread
 * makes the bytes with the same compiler calls `fusebench compile` and `export` make, and writes
 * them with g_file_set_contents (a temporary renamed over the file: a failure or a full disk
 * leaves nothing half-written). Bundles are written into a temporary folder renamed into place
 * by fb_bundle_write. */
#include "fb-window-export.h"
#include "fb-window-export-private.h"
#include "fb-window-private.h"
#include "fb-backend.h"
#include "fb-bundle.h"
#include "fb-codegen.h"
#include "fb-dot.h"
#include "fb-graph-picture.h"
#include "fb-onnx-export.h"

#include <glib/gstdio.h>
#include <string.h>

typedef struct {
  GCancellable         *cancellable;   /* of the export in flight, NULL when none */
  char                 *label;         /* what the progress bar says meanwhile */
  guint                 pulse_id;
  char                 *status;
  GtkWidget            *question;
  GtkFileChooserNative *chooser;
  FbExportKind          chooser_kind;
  char                 *refused;       /* a refusal made up for the target on show */
} ExportState;

typedef struct {
  FbExportKind    kind;
  GFile          *file;
  GFile          *header;       /* shared library: the header beside it */
  FbStage        *stage;        /* what graph, onnx, bundle and library exports read */
  FbGraphScene   *scene;        /* graph pictures: the scene as drawn */
  GHashTable     *marks;        /* its diff marks (node id -> FbGraphMark) */
  int             picture;      /* FbGraphPictureFormat, or -1 for DOT */
  FbLowering     *lowering;     /* kernel exports: the lowering that holds the kernel */
  const FbKernel *kernel;
  char           *source;       /* for the bundle's manifest */
  char           *pipeline;     /* the toggles of the run on screen, as the manifest says them */
  FbProfile      *profile;      /* profile and trace exports; graph pictures: the one painted */
  FbProfile      *previous;     /* graph pictures: the A/B profile the view compares against */
  FbProfileMetric metric;       /* graph pictures: what the profile's colours say */
  GBytes         *trace;        /* the trace made with a remote profile, written as it came */
  char           *trace_host;   /* where it was made */
} ExportJob;

static void
export_job_free (ExportJob *job)
{
  g_clear_object (&job->file);
  g_clear_object (&job->header);
  g_clear_pointer (&job->stage, fb_stage_unref);
  g_clear_pointer (&job->scene, fb_graph_scene_unref);
  g_clear_pointer (&job->marks, g_hash_table_unref);
  g_clear_pointer (&job->lowering, fb_lowering_unref);
  g_clear_pointer (&job->profile, fb_profile_unref);
  g_clear_pointer (&job->previous, fb_profile_unref);
  g_clear_pointer (&job->trace, g_bytes_unref);
  g_free (job->trace_host);
  g_free (job->source);
  g_free (job->pipeline);
  g_free (job);
}

static void
export_state_free (ExportState *state)
{
  g_clear_handle_id (&state->pulse_id, g_source_remove);
  if (state->cancellable != NULL)
    g_cancellable_cancel (state->cancellable);
  g_clear_object (&state->cancellable);
  g_clear_object (&state->chooser);
  g_free (state->label);
  g_free (state->status);
  g_free (state->refused);
  g_free (state);
}

static ExportState *
state_of (FbWindow *self)
{
  static GQuark quark;
  ExportState *state;

  if (quark == 0)
    quark = g_quark_from_static_string ("fb-window-export");
  if ((state = g_object_get_qdata (G_OBJECT (self), quark)) == NULL)
    {
      state = g_new0 (ExportState, 1);
      g_object_set_qdata_full (G_OBJECT (self), quark, state, (GDestroyNotify) export_state_free);
    }
  return state;
}

static const char * const kind_names[] = {
  [FB_EXPORT_BUNDLE] = "the bundle",
  [FB_EXPORT_LLVM_IR] = "the LLVM IR",
  [FB_EXPORT_ASSEMBLY] = "the assembly",
  [FB_EXPORT_OBJECT] = "the object",
  [FB_EXPORT_SHARED_LIBRARY] = "the shared library",
  [FB_EXPORT_GRAPH] = "the graph",
  [FB_EXPORT_ONNX] = "the optimized model",
  [FB_EXPORT_PROFILE] = "the profile",
  [FB_EXPORT_TRACE] = "the trace",
  [FB_EXPORT_PTX] = "the PTX",
};

/* ---- the worker ---------------------------------------------------------------------------- */

static void
export_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  ExportJob *job = data;
  g_autoptr(GBytes) bytes = NULL;
  GError *error = NULL;
  gboolean ok = FALSE;

  switch (job->kind)
    {
    case FB_EXPORT_BUNDLE:
      {
        g_autofree char *path = g_file_get_path (job->file);
        if (path == NULL)
          g_set_error (&error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       "bundles are folders on a local disk");
        else
          ok = _fb_export_bundle (job->stage->graph, job->source, job->pipeline, path, FALSE,
                                  cancellable, &error);
        break;
      }
    case FB_EXPORT_SHARED_LIBRARY:
      ok = _fb_export_shared_library (job->stage->graph, job->source, job->pipeline, job->file,
                                      job->header, cancellable, &error);
      break;
    case FB_EXPORT_LLVM_IR:
    case FB_EXPORT_ASSEMBLY:
    case FB_EXPORT_OBJECT:
      bytes = _fb_export_kernel_code (job->lowering, job->kernel, job->kind == FB_EXPORT_OBJECT,
                                      job->kind == FB_EXPORT_LLVM_IR, &error);
      break;
    case FB_EXPORT_PTX:
      bytes = _fb_export_module (job->stage->graph, "ptx", cancellable, &error);
      break;
    case FB_EXPORT_GRAPH:
      if (job->picture < 0)
        {
          char *dot = fb_graph_to_dot (job->stage->graph);
          bytes = g_bytes_new_take (dot, strlen (dot));
        }
      else
        bytes = fb_graph_picture_render_shown (job->scene, (FbGraphPictureFormat) job->picture,
                                               job->marks, job->profile, job->previous,
                                               job->metric, &error);
      break;
    case FB_EXPORT_ONNX:
      bytes = fb_onnx_export_portable (job->stage->graph, &error);
      break;
    case FB_EXPORT_PROFILE:
      {
        char *json = fb_profile_to_json (job->profile);
        bytes = g_bytes_new_take (json, strlen (json));
        break;
      }
    case FB_EXPORT_TRACE:
      if (job->trace != NULL)
        {
          bytes = g_bytes_ref (job->trace);
          break;
        }
      {
        /* The trace writer renames a temporary into place itself. */
        g_autofree char *path = g_file_get_path (job->file);
        if (path == NULL)
          g_set_error (&error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       "traces are written to a local disk");
        else if (!g_cancellable_set_error_if_cancelled (cancellable, &error))
          ok = fb_profile_save_chrome_trace (job->profile, path, &error);
        break;
      }
    default:
      g_assert_not_reached ();
    }
  if (bytes != NULL)
    ok = _fb_export_write_bytes (job->file, bytes, cancellable, &error);
  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/* ---- the main thread ----------------------------------------------------------------------- */

static void
set_status (FbWindow *self, ExportState *state, const char *status, gboolean failed)
{
  g_free (state->status);
  state->status = g_strdup (status);
  if (failed)
    _fb_window_show_error (self, status);
  else
    adw_toast_overlay_add_toast (self->toast_overlay, adw_toast_new (status));
}

static gboolean
pulse (gpointer data)
{
  gtk_progress_bar_pulse (FB_WINDOW (data)->progress_bar);
  return G_SOURCE_CONTINUE;
}

static void
on_export_done (GObject *source, GAsyncResult *result, gpointer data)
{
  FbWindow *self = FB_WINDOW (source);
  ExportState *state = state_of (self);
  ExportJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  g_autofree char *name = g_file_get_basename (job->file);
  g_autofree char *message = NULL;

  g_clear_object (&state->cancellable);
  g_clear_handle_id (&state->pulse_id, g_source_remove);
  if (g_task_propagate_boolean (G_TASK (result), &error))
    {
      message = job->trace_host != NULL
                ? g_strdup_printf ("Exported %s, the trace made on %s", name, job->trace_host)
                : g_strdup_printf ("Exported %s", name);
      set_status (self, state, message, FALSE);
    }
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    set_status (self, state, "Export cancelled", FALSE);
  else
    {
      message = g_strdup_printf ("Could not export %s to %s: %s", kind_names[job->kind], name,
                                 error->message);
      set_status (self, state, message, TRUE);
    }
  _fb_window_update_busy (self);
}

/* The target whose code the kernel exports are (the code view's lowering), or NULL. */
static const FbBackend *
kernel_target (FbWindow *self)
{
  return self->lowering != NULL ? fb_lowering_get_backend (self->lowering) : NULL;
}

/* Whether the code view's kernels have no object files (the cuda target's are PTX). */
static gboolean
kernels_lack_objects (FbWindow *self)
{
  return kernel_target (self) != NULL && kernel_target (self)->emit_object == NULL;
}

static FbStage *
final_stage (FbWindow *self)
{
  return fb_run_get_stage (self->run, fb_run_n_stages (self->run) - 1);
}

gboolean
fb_window_can_export (FbWindow *self, FbExportKind kind)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), FALSE);
  if (self->run == NULL || state_of (self)->cancellable != NULL)
    return FALSE;
  switch (kind)
    {
    case FB_EXPORT_LLVM_IR:
    case FB_EXPORT_ASSEMBLY:
    case FB_EXPORT_OBJECT:
      {
        const FbKernel *kernel = fb_code_view_get_kernel (self->code_view);
        FbPlan *plan = self->lowering != NULL ? fb_lowering_peek_plan (self->lowering) : NULL;

        /* The kernel must belong to the lowering the job will hold on to; an object is the
         * cpu target's. */
        return kernel != NULL && plan != NULL && g_ptr_array_find (plan->kernels, kernel, NULL)
               && (kind != FB_EXPORT_OBJECT || !kernels_lack_objects (self));
      }
    case FB_EXPORT_GRAPH:
      return fb_graph_view_get_scene (fb_compare_view_get_active_view (self->compare_view)) != NULL;
    case FB_EXPORT_PROFILE:
    case FB_EXPORT_TRACE:
      return self->profile != NULL;
    default:
      return TRUE;
    }
}

/* The graph-picture format a file name asks for: -1 for DOT, -2 for none. */
static int
picture_format_of (GFile *file)
{
  g_autofree char *name = g_file_get_basename (file);
  const char *dot = strrchr (name, '.');
  FbGraphPictureFormat format;

  if (dot != NULL && g_ascii_strcasecmp (dot, ".dot") == 0)
    return -1;
  if (dot != NULL && fb_graph_picture_format_parse (dot + 1, &format))
    return format;
  return -2;
}

static GFile *
header_beside (GFile *library)
{
  g_autofree char *name = g_file_get_basename (library);
  g_autoptr(GFile) parent = g_file_get_parent (library);
  char *dot = strrchr (name, '.');
  g_autofree char *header = NULL;

  if (dot != NULL && dot != name)
    *dot = '\0';
  header = g_strconcat (name, ".h", NULL);
  return parent != NULL ? g_file_get_child (parent, header) : g_file_new_for_path (header);
}

static void
start_export (FbWindow *self, ExportJob *job)
{
  ExportState *state = state_of (self);
  g_autoptr(GTask) task = NULL;
  g_autofree char *name = g_file_get_basename (job->file);

  state->cancellable = g_cancellable_new ();
  g_free (state->label);
  state->label = g_strdup_printf ("Exporting %s to %s…", kind_names[job->kind], name);
  task = g_task_new (self, state->cancellable, on_export_done, NULL);
  g_task_set_source_tag (task, start_export);
  /* A cancel that comes after the last point the worker looks at is too late: the file is
   * written, and the window says so rather than "cancelled". */
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, job, (GDestroyNotify) export_job_free);
  g_task_run_in_thread (task, export_thread);
  state->pulse_id = g_timeout_add (100, pulse, self);
  _fb_window_update_busy (self);
}

/* The code view's target has no object files: what to export instead ("The CUDA target's
 * kernels are PTX, not objects: ..."), kept in the export state. */
static const char *
no_objects_reason (FbWindow *self)
{
  ExportState *state = state_of (self);
  const FbBackend *backend = kernel_target (self);
  g_autofree char *target = g_ascii_strup (backend->name, -1);
  g_autofree char *code = g_ascii_strup (backend->assembly_suffix, -1);
  g_autofree char *module = backend->module_suffix ? g_ascii_strup (backend->module_suffix, -1)
                                                   : NULL;

  g_free (state->refused);
  state->refused = g_strdup_printf ("The %s target's kernels are %s, not objects: export the "
                                    "kernel's Assembly%s%s", target, code,
                                    module ? ", or the whole model's " : "", module ? module : "");
  return state->refused;
}

/* Why kind cannot be exported (to file, when given) now, or NULL. */
static const char *
refusal (FbWindow *self, FbExportKind kind, GFile *file)
{
  if (state_of (self)->cancellable != NULL)
    return "Another export is still running";
  if (!fb_window_can_export (self, kind))
    return kind == FB_EXPORT_OBJECT && self->run != NULL && kernels_lack_objects (self)
           ? no_objects_reason (self)
           : kind == FB_EXPORT_LLVM_IR || kind == FB_EXPORT_ASSEMBLY || kind == FB_EXPORT_OBJECT
           ? "Show a kernel in the code view first (select a node, Ctrl+K)"
           : kind == FB_EXPORT_GRAPH && self->run != NULL ? "The graph is still being laid out"
           : (kind == FB_EXPORT_PROFILE || kind == FB_EXPORT_TRACE) && self->run != NULL
           ? "No profile yet: press Profile, or open one"
           : "Open a model first";
  if (file != NULL && kind == FB_EXPORT_GRAPH && picture_format_of (file) == -2)
    return "Name the graph file .svg, .pdf, .png or .dot";
  return NULL;
}

/* The job for kind, or NULL with the reason shown. */
static ExportJob *
make_job (FbWindow *self, FbExportKind kind, GFile *file)
{
  ExportState *state = state_of (self);
  ExportJob *job;
  const char *why = refusal (self, kind, file);

  if (why != NULL)
    {
      set_status (self, state, why, TRUE);
      return NULL;
    }
  job = g_new0 (ExportJob, 1);
  job->kind = kind;
  job->file = g_object_ref (file);
  job->stage = fb_stage_ref (final_stage (self));
  job->source = self->model_file != NULL ? g_file_get_path (self->model_file)
                                         : g_strdup (fb_run_get_title (self->run));
  /* The run the final stage came from, not self->options: a toggle may be re-running. */
  job->pipeline = fb_pipeline_options_to_args (fb_run_get_options (self->run));
  if (kind == FB_EXPORT_SHARED_LIBRARY)
    job->header = header_beside (file);
  else if (kind == FB_EXPORT_PROFILE || kind == FB_EXPORT_TRACE)
    {
      const char *host = NULL;
      GBytes *trace = kind == FB_EXPORT_TRACE ? _fb_window_remote_trace (self, &host) : NULL;

      job->profile = fb_profile_ref (self->profile);
      if (trace != NULL)
        {
          job->trace = g_bytes_ref (trace);
          job->trace_host = g_strdup (host);
        }
    }
  else if (kind == FB_EXPORT_GRAPH)
    {
      FbGraphView *view = fb_compare_view_get_active_view (self->compare_view);
      FbGraph *graph = fb_graph_view_get_graph (view);
      int index = -1;

      for (guint i = 0; i < fb_run_n_stages (self->run); i++)
        if (fb_run_get_stage (self->run, i)->graph == graph)
          index = i;
      g_clear_pointer (&job->stage, fb_stage_unref);
      job->stage = fb_stage_ref (fb_run_get_stage (self->run, MAX (index, 0)));
      job->scene = fb_graph_scene_ref (fb_graph_view_get_scene (view));
      job->picture = picture_format_of (file);
      /* The picture shows what the view shows: its profile's colours, by its metric, and the
       * A/B changes when it compares two profiles. */
      if (fb_graph_view_get_profile (view) != NULL)
        {
          FbProfile *previous = fb_graph_view_get_previous_profile (view);

          job->profile = fb_profile_ref (fb_graph_view_get_profile (view));
          job->previous = previous != NULL ? fb_profile_ref (previous) : NULL;
          job->metric = fb_graph_view_get_profile_metric (view);
        }
      job->marks = g_hash_table_new (NULL, NULL);
      for (guint i = 0; graph != NULL && i < graph->nodes->len; i++)
        {
          FbNode *node = g_ptr_array_index (graph->nodes, i);
          FbGraphMark mark = fb_graph_view_get_mark (view, node);
          if (mark != FB_GRAPH_MARK_NONE)
            g_hash_table_insert (job->marks, GUINT_TO_POINTER (node->id), GINT_TO_POINTER (mark));
        }
    }
  else if (kind == FB_EXPORT_LLVM_IR || kind == FB_EXPORT_ASSEMBLY || kind == FB_EXPORT_OBJECT)
    {
      job->lowering = fb_lowering_ref (self->lowering);
      job->kernel = fb_code_view_get_kernel (self->code_view);
    }
  return job;
}

/* ---- asking before replacing ---------------------------------------------------------------- */

typedef struct {
  FbWindow  *self;
  ExportJob *job;
} Pending;

static void
on_question_response (AdwMessageDialog *dialog, const char *response, gpointer data)
{
  Pending *pending = data;
  ExportState *state = state_of (pending->self);

  state->question = NULL;
  if (g_strcmp0 (response, "replace") == 0 && state->cancellable == NULL)
    start_export (pending->self, g_steal_pointer (&pending->job));
  else
    set_status (pending->self, state, "Export cancelled: the file was kept", FALSE);
  g_clear_pointer (&pending->job, export_job_free);
  g_object_unref (pending->self);
  g_free (pending);
}

static void
ask_to_replace (FbWindow *self, ExportJob *job, GFile *existing)
{
  ExportState *state = state_of (self);
  g_autofree char *name = g_file_get_basename (existing);
  g_autofree char *heading = g_strdup_printf ("Replace “%s”?", name);
  GtkWidget *dialog = adw_message_dialog_new (GTK_WINDOW (self), heading,
                                              "A file or folder with this name already exists. "
                                              "Replacing it overwrites what it holds.");
  Pending *pending = g_new0 (Pending, 1);

  pending->self = g_object_ref (self);
  pending->job = job;
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog), "cancel", "_Cancel",
                                    "replace", "_Replace", NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "replace",
                                              ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  g_signal_connect (dialog, "response", G_CALLBACK (on_question_response), pending);
  state->question = dialog;
  gtk_window_present (GTK_WINDOW (dialog));
}

/* file_confirmed: the file chooser already asked about file itself (GTK 4's chooser always
 * does in save mode); what else would be replaced is asked about here. */
static void
export_to (FbWindow *self, FbExportKind kind, GFile *file, gboolean file_confirmed)
{
  ExportJob *job = make_job (self, kind, file);
  GFile *existing = NULL;

  if (job == NULL)
    return;
  if (!file_confirmed && g_file_query_exists (file, NULL))
    existing = file;
  else if (job->header != NULL && g_file_query_exists (job->header, NULL))
    existing = job->header;
  if (existing != NULL)
    ask_to_replace (self, job, existing);
  else
    start_export (self, job);
}

void
fb_window_export_to (FbWindow *self, FbExportKind kind, GFile *file, gboolean replace)
{
  g_return_if_fail (FB_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));
  g_return_if_fail (kind <= FB_EXPORT_PTX);
  if (replace)
    {
      ExportJob *job = make_job (self, kind, file);
      if (job != NULL)
        start_export (self, job);
      return;
    }
  export_to (self, kind, file, FALSE);
}

gboolean
fb_window_is_exporting (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), FALSE);
  return state_of (self)->cancellable != NULL;
}

void
fb_window_cancel_export (FbWindow *self)
{
  g_return_if_fail (FB_IS_WINDOW (self));
  if (state_of (self)->cancellable != NULL)
    g_cancellable_cancel (state_of (self)->cancellable);
}

GtkWidget *
fb_window_get_export_question (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), NULL);
  return state_of (self)->question;
}

const char *
fb_window_get_export_status (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), NULL);
  return state_of (self)->status;
}

const char *
_fb_window_export_label (FbWindow *self)
{
  ExportState *state = state_of (self);
  return state->cancellable != NULL ? state->label : NULL;
}

/* ---- the file chooser and the actions ------------------------------------------------------ */

typedef struct {
  const char   *action;
  FbExportKind  kind;
  const char   *title;
  const char   *suffix;        /* of the suggested name */
  const char   *filter;        /* name of the filter, NULL for none */
  const char   *patterns;      /* ';'-separated */
} ExportEntry;

static const ExportEntry exports[] = {
  { "win.export-bundle", FB_EXPORT_BUNDLE, "Export Bundle", ".fusebench", NULL, NULL },
  { "win.export-llvm-ir", FB_EXPORT_LLVM_IR, "Export LLVM IR", ".ll", "LLVM IR", "*.ll" },
  { "win.export-assembly", FB_EXPORT_ASSEMBLY, "Export Assembly", ".s", "x86-64 assembly", "*.s" },
  { "win.export-object", FB_EXPORT_OBJECT, "Export Object", ".o", "ELF objects", "*.o" },
  { "win.export-shared-library", FB_EXPORT_SHARED_LIBRARY, "Export Shared Library", ".so",
    "Shared libraries", "*.so" },
  { "win.export-graph", FB_EXPORT_GRAPH, "Export Graph", ".svg",
    "Graph pictures and DOT (.svg, .pdf, .png, .dot)", "*.svg;*.pdf;*.png;*.dot" },
  { "win.export-onnx", FB_EXPORT_ONNX, "Export Optimized Model", ".onnx", "ONNX models", "*.onnx" },
  { "win.export-profile", FB_EXPORT_PROFILE, "Export Profile", ".profile.json",
    "Fusebench profiles (JSON)", "*.json" },
  { "win.export-trace", FB_EXPORT_TRACE, "Export Chrome Trace", ".trace.json",
    "Chrome and Perfetto traces (JSON)", "*.json" },
  { "win.export-ptx", FB_EXPORT_PTX, "Export PTX", ".ptx", "PTX for NVIDIA GPUs", "*.ptx" },
};

/* The entry whose files end in "." suffix ("s", "ptx"), or fallback. */
static const ExportEntry *
entry_for_suffix (const char *suffix, const ExportEntry *fallback)
{
  for (guint i = 0; i < G_N_ELEMENTS (exports); i++)
    if (exports[i].suffix[0] == '.' && g_strcmp0 (exports[i].suffix + 1, suffix) == 0)
      return &exports[i];
  return fallback;
}

static void
on_export_chooser_response (GtkNativeDialog *dialog, int response, FbWindow *self)
{
  ExportState *state = state_of (self);

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      /* A bundle is a folder: the chooser enters an existing folder rather than asking. */
      if (file != NULL)
        export_to (self, state->chooser_kind, file, state->chooser_kind != FB_EXPORT_BUNDLE);
    }
  g_clear_object (&state->chooser);
}

static char *
suggested_name (FbWindow *self, const char *suffix)
{
  const char *title = self->run != NULL ? fb_run_get_title (self->run) : NULL;
  g_autofree char *stem = g_strdup (title != NULL && *title ? title : "model");
  char *dot = strrchr (stem, '.');

  if (dot != NULL && dot != stem)
    *dot = '\0';
  return g_strconcat (stem, suffix, NULL);
}

static void
export_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  FbWindow *self = FB_WINDOW (widget);
  ExportState *state = state_of (self);
  g_autofree char *name = NULL;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (exports) && !g_str_equal (exports[i].action, action_name); i++)
    ;
  g_assert (i < G_N_ELEMENTS (exports));
  if (state->chooser != NULL)
    return;
  if (refusal (self, exports[i].kind, NULL) != NULL)
    {
      set_status (self, state, refusal (self, exports[i].kind, NULL), TRUE);
      return;
    }
  /* GtkFileDialog is GTK 4.10's; Debian 12 has 4.8, whose native chooser asks before it
   * replaces a file in save mode. */
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  state->chooser = gtk_file_chooser_native_new (exports[i].title, GTK_WINDOW (self),
                                                GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
  /* A kernel's assembly is the target's: the cuda target's is PTX, named and filtered as the
   * export of PTX is. */
  const ExportEntry *entry = &exports[i];
  if (entry->kind == FB_EXPORT_ASSEMBLY && kernel_target (self) != NULL)
    entry = entry_for_suffix (kernel_target (self)->assembly_suffix, entry);
  name = suggested_name (self, entry->suffix);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (state->chooser), name);
  if (entry->filter != NULL)
    {
      g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();
      g_auto(GStrv) patterns = g_strsplit (entry->patterns, ";", -1);

      gtk_file_filter_set_name (filter, entry->filter);
      for (guint k = 0; patterns[k]; k++)
        gtk_file_filter_add_pattern (filter, patterns[k]);
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (state->chooser), filter);
    }
  G_GNUC_END_IGNORE_DEPRECATIONS
  state->chooser_kind = exports[i].kind;
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (state->chooser), TRUE);
  g_signal_connect (state->chooser, "response", G_CALLBACK (on_export_chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (state->chooser));
}

/* Only the kernel and profile exports turn insensitive (no kernel in the code view, no
 * profile): they have no shortcut, so the menu opening is the one moment their state is seen. The others stay
 * enabled, for their shortcuts, and say why when they cannot run. */
static void
on_menu_shown (GtkWidget *popover, FbWindow *self)
{
  for (guint i = 0; i < G_N_ELEMENTS (exports); i++)
    if (exports[i].kind == FB_EXPORT_LLVM_IR || exports[i].kind == FB_EXPORT_ASSEMBLY ||
        exports[i].kind == FB_EXPORT_OBJECT || exports[i].kind == FB_EXPORT_PROFILE ||
        exports[i].kind == FB_EXPORT_TRACE)
      gtk_widget_action_set_enabled (GTK_WIDGET (self), exports[i].action,
                                     fb_window_can_export (self, exports[i].kind));
}

void
_fb_window_init_export (FbWindow *self)
{
  GtkPopover *popover = gtk_menu_button_get_popover (self->menu_button);

  if (popover != NULL)
    g_signal_connect_object (popover, "show", G_CALLBACK (on_menu_shown), self, 0);
}

void
_fb_window_class_init_export (GtkWidgetClass *widget_class)
{
  for (guint i = 0; i < G_N_ELEMENTS (exports); i++)
    gtk_widget_class_install_action (widget_class, exports[i].action, NULL, export_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_e, GDK_CONTROL_MASK,
                                       "win.export-graph", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_e, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.export-bundle", NULL);
}
