/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The Profile button: the final stage on screen compiled and profiled on the chosen target in a
 * worker thread (fb_profile_run, the same as `fusebench profile`), with progress and cancel
 * in the window's progress strip; the profile it makes is painted (fb-window-profile.c), the
 * one before it becoming the A/B reference. */
#include "fb-profile-run.h"
#include "fb-window-private.h"
#include "fb-main-thread.h"

#include <string.h>

/* The target's whole report, with every folder it searched. */
const char *
_fb_window_target_unavailable (const FbBackend *backend)
{
  /* Asked once per target: whether a driver and a device are there does not change while the
   * app runs. */
  static GHashTable *reasons;   /* const FbBackend* -> char* (NULL: available) */
  G_LOCK_DEFINE_STATIC (reasons);
  gpointer reason = NULL;

  G_LOCK (reasons);
  if (reasons == NULL)
    reasons = g_hash_table_new (NULL, NULL);
  if (!g_hash_table_lookup_extended (reasons, backend, NULL, &reason))
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *device = backend->describe_device ? backend->describe_device (backend, &error)
                                                         : g_strdup ("");
      reason = device == NULL ? g_strdup (error->message) : NULL;
      g_hash_table_insert (reasons, (gpointer) backend, reason);
    }
  G_UNLOCK (reasons);
  return reason;
}

/* What is missing, in the few words the menu has room for: the runtime's report starts with
 * it ("the cuda target needs the NVIDIA driver (libcuda.so.1), which is not on this machine;
 * looked for: ..." or "the NVIDIA driver is here but sees no CUDA device"). */
static char *
missing_line (const FbBackend *backend, const char *reason)
{
  g_autofree char *word = g_ascii_strup (backend->name, -1);
  const char *needs = strstr (reason, "needs ");
  const char *end;

  if (needs != NULL)
    {
      needs += strlen ("needs ");
      end = strstr (needs, ", which");
      if (end == NULL)
        end = strchr (needs, ';');
      if (end == NULL)
        end = needs + strlen (needs);
      return g_strdup_printf ("No %s: %.*s is missing", word, (int) (end - needs), needs);
    }
  end = strchr (reason, ';');
  if (end == NULL)
    end = strchr (reason, ':');
  if (end == NULL)
    end = reason + strlen (reason);
  return g_strdup_printf ("No %s: %.*s", word, (int) (end - reason), reason);
}

/* Under a greyed target's choice: one line of what is missing, and the target's whole report
 * behind "Details", where its list of searched folders cannot push the rest of the menu off
 * the screen. Named "NAME-missing" and "NAME-details" after the target. */
static GtkWidget *
missing_note (const FbBackend *backend, const char *reason)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  g_autofree char *line = missing_line (backend, reason);
  g_autofree char *summary_name = g_strdup_printf ("%s-missing", backend->name);
  g_autofree char *details_name = g_strdup_printf ("%s-details", backend->name);
  g_autofree char *details = g_strdup_printf ("%s.\n\nProfiles made on a GPU elsewhere open with "
                                              "Open a Profile File…", reason);
  GtkWidget *summary = gtk_label_new (line);
  GtkWidget *expander = gtk_expander_new_with_mnemonic ("_Details");
  GtkWidget *scroller = gtk_scrolled_window_new ();
  GtkWidget *text = gtk_label_new (details);

  gtk_label_set_xalign (GTK_LABEL (summary), 0);
  gtk_label_set_single_line_mode (GTK_LABEL (summary), TRUE);
  gtk_label_set_ellipsize (GTK_LABEL (summary), PANGO_ELLIPSIZE_END);
  gtk_label_set_max_width_chars (GTK_LABEL (summary), 40);
  gtk_widget_set_tooltip_text (summary, line);
  gtk_widget_add_css_class (summary, "caption");
  gtk_widget_add_css_class (summary, "dim-label");
  gtk_widget_set_name (summary, summary_name);
  gtk_box_append (GTK_BOX (box), summary);

  gtk_label_set_xalign (GTK_LABEL (text), 0);
  gtk_label_set_wrap (GTK_LABEL (text), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (text), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_max_width_chars (GTK_LABEL (text), 40);
  gtk_label_set_selectable (GTK_LABEL (text), TRUE);
  gtk_widget_add_css_class (text, "caption");
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_max_content_height (GTK_SCROLLED_WINDOW (scroller), 180);
  gtk_scrolled_window_set_propagate_natural_height (GTK_SCROLLED_WINDOW (scroller), TRUE);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), text);
  gtk_expander_set_child (GTK_EXPANDER (expander), scroller);
  gtk_widget_add_css_class (expander, "caption");
  gtk_widget_set_name (expander, details_name);
  gtk_box_append (GTK_BOX (box), expander);
  return box;
}

typedef struct {
  GPtrArray         *stages;    /* FbStage*, references */
  FbPipelineOptions *options;
  const FbBackend   *target;
  FbPlan            *plan;      /* the code view's plan of the final stage for target, or NULL */
  gboolean           eager;     /* kernel by kernel (the eager baseline) */
  GMainContext      *context;
  FbWindow          *window;    /* a reference, for progress */
} Job;

typedef struct {
  FbWindow *window;
  double    fraction;
  char     *what;
} Progress;

static void
job_free (gpointer data)
{
  Job *job = data;

  g_clear_pointer (&job->stages, g_ptr_array_unref);
  fb_pipeline_options_free (job->options);
  g_clear_pointer (&job->plan, fb_plan_unref);
  g_main_context_unref (job->context);
  g_object_unref (job->window);
  g_free (job);
}

static void
progress_free (gpointer data)
{
  Progress *p = data;

  g_object_unref (p->window);
  g_free (p->what);
  g_free (p);
}

static gboolean
deliver_progress (gpointer data)
{
  Progress *p = data;
  FbWindow *self = p->window;
  g_autofree char *text = NULL;

  /* Only while this profile is being made: a late report after the end changes nothing. */
  if (self->disposed || self->profile_cancellable == NULL || self->run_cancellable != NULL
      || self->load_cancellable != NULL)
    return G_SOURCE_REMOVE;
  text = g_strdup_printf ("Profiling on the %s: %s…", self->profile_target->device_word, p->what);
  gtk_progress_bar_set_fraction (self->progress_bar, p->fraction);
  gtk_label_set_label (self->progress_label, text);
  return G_SOURCE_REMOVE;
}

static void
on_progress (double      fraction,
             const char *what,
             gpointer    data)
{
  Job *job = data;
  Progress *p = g_new (Progress, 1);

  p->window = g_object_ref (job->window);
  p->fraction = fraction;
  p->what = g_strdup (what);
  fb_main_thread_post (job->context, deliver_progress, p, progress_free);
}

static void
profile_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  Job *job = task_data;
  FbProfileOptions options = { .eager = job->eager, .plan = job->plan };
  GError *error = NULL;
  FbProfile *profile;

  profile = fb_profile_run (job->target, job->stages, job->options, NULL, &options, cancellable,
                            on_progress, job, &error);
  if (profile == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, profile, (GDestroyNotify) fb_profile_unref);
}

static void
on_profiled (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  FbWindow *self = FB_WINDOW (source);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbProfile) profile = g_task_propagate_pointer (G_TASK (result), &error);
  Job *job = g_task_get_task_data (G_TASK (result));

  /* The stages go back here, on the main thread: freed in the worker when the task ends there,
   * a stage the window no longer holds would free its graph while a view may still draw it. */
  g_clear_pointer (&job->stages, g_ptr_array_unref);
  g_clear_object (&self->profile_cancellable);
  if (self->disposed)
    return;
  if (profile == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        _fb_window_update_busy (self);
      else
        _fb_window_show_error (self, error->message);
      return;
    }
  _fb_window_update_busy (self);
  _fb_window_set_profile (self, profile);
}

static void
profile_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  FbWindow *self = FB_WINDOW (widget);
  g_autoptr(GTask) task = NULL;
  Job *job;

  /* One profile at a time, of passes that have finished. */
  if (self->run == NULL || self->profile_cancellable != NULL)
    return;
  _fb_window_remember_host (self);
  if (self->profile_host != NULL)
    {
      _fb_window_profile_remote (self);
      return;
    }
  if (_fb_window_target_unavailable (self->profile_target) != NULL)
    {
      _fb_window_show_error (self, _fb_window_target_unavailable (self->profile_target));
      return;
    }
  job = g_new0 (Job, 1);
  job->stages = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_stage_unref);
  for (guint i = 0; i < fb_run_n_stages (self->run); i++)
    g_ptr_array_add (job->stages, fb_stage_ref (fb_run_get_stage (self->run, i)));
  job->options = fb_pipeline_options_copy (fb_run_get_options (self->run));
  job->target = self->profile_target;
  /* What the code view lowered for this target is compiled as it is, not lowered again (the
   * profiler checks that it is of the final stage). */
  if (self->lowering != NULL && fb_lowering_get_backend (self->lowering) == job->target &&
      fb_lowering_peek_plan (self->lowering) != NULL)
    job->plan = fb_plan_ref (fb_lowering_peek_plan (self->lowering));
  job->eager = self->profile_eager;
  job->context = g_main_context_ref_thread_default ();
  job->window = g_object_ref (self);

  self->profile_cancellable = g_cancellable_new ();
  gtk_progress_bar_set_fraction (self->progress_bar, 0);
  task = g_task_new (self, self->profile_cancellable, on_profiled, NULL);
  g_task_set_source_tag (task, profile_action);
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, profile_thread);
  _fb_window_update_busy (self);
}

static void
on_target_toggled (GtkCheckButton *button,
                   FbWindow       *self)
{
  if (gtk_check_button_get_active (button))
    self->profile_target = g_object_get_data (G_OBJECT (button), "fb-target");
}

/* The fusion passes the eager baseline turns off: with them off every kernel is one ONNX node
 * (what a framework's eager mode launches), and with kernel-by-kernel launches the profile shows
 * where the utilization of the fused, graph-replayed build came from (A/B against it). */
static const char *const eager_off_passes[] = { "fuse-epilogue", "fuse-elementwise" };

static void
on_eager_toggled (GtkCheckButton *button,
                  FbWindow       *self)
{
  gboolean eager = gtk_check_button_get_active (button);

  if (eager == self->profile_eager)
    return;
  self->profile_eager = eager;
  /* Through the stage list's check boxes, so that the list, the options and the re-run agree. */
  for (guint i = 0; i < G_N_ELEMENTS (eager_off_passes); i++)
    fb_stage_list_set_pass_enabled (self->stage_list, eager_off_passes[i], !eager);
}

void
fb_window_set_eager_baseline (FbWindow *self,
                              gboolean  eager)
{
  g_return_if_fail (FB_IS_WINDOW (self));
  gtk_check_button_set_active (GTK_CHECK_BUTTON (self->profile_eager_button), eager);
}

gboolean
fb_window_get_eager_baseline (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), FALSE);
  return self->profile_eager;
}

static GtkWidget *
target_button (FbWindow        *self,
               const FbBackend *backend,
               GtkCheckButton  *group)
{
  GtkWidget *button = gtk_check_button_new_with_label (backend->title);

  g_object_set_data (G_OBJECT (button), "fb-target", (gpointer) backend);
  if (group != NULL)
    gtk_check_button_set_group (GTK_CHECK_BUTTON (button), group);
  g_signal_connect_object (button, "toggled", G_CALLBACK (on_target_toggled), self, 0);
  return button;
}

/* One choice per target the profiler instruments, the host's compiled target chosen; a target
 * this machine lacks greyed, with what is missing under it. */
static void
add_target_buttons (FbWindow *self, GtkBox *box)
{
  GtkCheckButton *group = NULL;

  self->profile_target = fb_backend_host ();
  self->profile_target_buttons = g_ptr_array_new ();
  for (guint i = 0; fb_backend_nth (i) != NULL; i++)
    {
      const FbBackend *backend = fb_backend_nth (i);
      if (!fb_profile_supports (backend))
        continue;
      GtkWidget *button = target_button (self, backend, group);
      group = group ? group : GTK_CHECK_BUTTON (button);
      gtk_check_button_set_active (GTK_CHECK_BUTTON (button), backend == self->profile_target);
      gtk_box_append (box, button);
      g_ptr_array_add (self->profile_target_buttons, button);
      const char *missing = _fb_window_target_unavailable (backend);
      if (missing != NULL)
        {
          g_autofree char *line = missing_line (backend, missing);
          /* Greyed out, and why, right under it. */
          gtk_widget_set_sensitive (button, FALSE);
          gtk_widget_set_tooltip_text (button, line);
          gtk_box_append (box, missing_note (backend, missing));
        }
    }
}

void
_fb_window_init_profile_run (FbWindow *self)
{
  GtkWidget *button = gtk_button_new_with_mnemonic ("_Profile");
  GtkWidget *menu = gtk_menu_button_new ();
  GtkWidget *popover = gtk_popover_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *heading = gtk_label_new ("Profile On");
  GtkWidget *open;

  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "win.profile");
  gtk_widget_set_tooltip_text (button, "Compile the final stage and time every kernel on the chosen target "
                                       "(50 inferences after 5 warm-up), then paint the cost on every stage");
  gtk_box_append (self->profile_box, button);

  gtk_widget_add_css_class (heading, "heading");
  gtk_label_set_xalign (GTK_LABEL (heading), 0);
  gtk_box_append (GTK_BOX (box), heading);
  add_target_buttons (self, GTK_BOX (box));
  gtk_box_append (GTK_BOX (box), gtk_separator_new (GTK_ORIENTATION_HORIZONTAL));
  self->profile_eager_button = gtk_check_button_new_with_mnemonic ("_Eager Baseline");
  gtk_widget_set_tooltip_text (self->profile_eager_button,
                               "Fusion passes off and kernels launched one by one, the way a "
                               "framework's eager mode runs: profile once with it and once "
                               "without to see where the time and the GPU's idle gaps went");
  g_signal_connect_object (self->profile_eager_button, "toggled", G_CALLBACK (on_eager_toggled),
                           self, 0);
  gtk_box_append (GTK_BOX (box), self->profile_eager_button);
  gtk_box_append (GTK_BOX (box), gtk_separator_new (GTK_ORIENTATION_HORIZONTAL));
  _fb_window_init_profile_remote (self, GTK_BOX (box));
  gtk_box_append (GTK_BOX (box), gtk_separator_new (GTK_ORIENTATION_HORIZONTAL));
  open = gtk_button_new_with_mnemonic ("Open a Profile _File…");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (open), "win.open-profile");
  gtk_widget_add_css_class (open, "flat");
  gtk_box_append (GTK_BOX (box), open);
  gtk_popover_set_child (GTK_POPOVER (popover), box);
  gtk_menu_button_set_popover (GTK_MENU_BUTTON (menu), popover);
  gtk_widget_set_tooltip_text (menu, "Target, the machine to profile on, and profiles made elsewhere");
  gtk_box_append (self->profile_box, menu);
}

void
_fb_window_class_init_profile_run (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.profile", NULL, profile_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_p, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.profile", NULL);
  _fb_window_class_init_profile_remote (widget_class);
}
