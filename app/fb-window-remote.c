/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Profile on a remote host, from the Profile menu: the hosts it offers (the settings'
 * remote-hosts), each with its device once asked (fb-window-host-probe.c), where Profile runs
 * (profile-host, empty for this computer; the last choice per model in last-hosts), and the
 * profile made there. The model and the window's pipeline toggles go through fb-remote.h in a
 * worker, the runner's progress lines move the progress strip, Cancel ends the remote process
 * (the cancellable fb_remote_run watches), and the profile and Chrome trace that come back are
 * painted and exported as ones made here (_fb_window_set_profile, A/B included). */
#include "fb-main-thread.h"
#include "fb-remote.h"
#include "fb-window-private.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>


static GSettings *
settings_of (FbWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));

  return app != NULL ? fb_application_get_settings (FB_APPLICATION (app)) : NULL;
}

/* The hosts, newest last: the settings' when there are settings, else the window's own. */
static char **
dup_hosts (FbWindow *self)
{
  GSettings *settings = settings_of (self);

  if (settings != NULL)
    return g_settings_get_strv (settings, "remote-hosts");
  return self->remote_hosts != NULL ? g_strdupv (self->remote_hosts) : g_new0 (char *, 1);
}

static void rebuild_hosts (FbWindow *self);

static void
set_hosts (FbWindow *self, const char * const *hosts)
{
  GSettings *settings = settings_of (self);

  if (settings != NULL)
    g_settings_set_strv (settings, "remote-hosts", hosts); /* rebuilds through changed:: */
  else
    {
      g_strfreev (self->remote_hosts);
      self->remote_hosts = g_strdupv ((char **) hosts);
      rebuild_hosts (self);
    }
}

static void
choose_host (FbWindow *self, const char *host)
{
  if (self->profile_host_action != NULL)
    g_action_change_state (self->profile_host_action, g_variant_new_string (host ? host : ""));
}

/* A radio button: the action's string state and this target make it one, and keep the choices
 * in step with the settings. */
static GtkWidget *
host_button (const char *label, const char *host)
{
  GtkWidget *button = gtk_check_button_new_with_label (label);

  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "win.profile-host");
  gtk_actionable_set_action_target_value (GTK_ACTIONABLE (button), g_variant_new_string (host));
  gtk_widget_set_hexpand (button, TRUE);
  return button;
}

/* The choices of the menu's Machine section: this computer, then every host with a button that
 * forgets it and, under it, its device as the host answered (asked the first time it shows). */
static void
rebuild_hosts (FbWindow *self)
{
  g_auto(GStrv) hosts = dup_hosts (self);
  GtkWidget *child;

  /* A closed window's menu is gone; the settings it listened to are not. */
  if (self->hosts_box == NULL || self->disposed)
    return;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->hosts_box))) != NULL)
    gtk_box_remove (self->hosts_box, child);
  gtk_box_append (self->hosts_box, host_button ("This Computer", ""));
  for (guint i = 0; hosts[i] != NULL; i++)
    {
      GtkWidget *entry = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
      GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
      GtkWidget *remove = gtk_button_new_from_icon_name ("list-remove-symbolic");
      GtkWidget *device = NULL;
      g_autofree char *tip = g_strdup_printf ("Forget %s", hosts[i]);
      const char *line = NULL;

      _fb_window_host_probe (self, hosts[i], FALSE, &line, NULL);
      device = gtk_label_new (line);
      gtk_widget_add_css_class (device, "dim-label");
      gtk_widget_add_css_class (device, "caption");
      gtk_label_set_xalign (GTK_LABEL (device), 0);
      gtk_label_set_wrap (GTK_LABEL (device), TRUE);
      gtk_label_set_max_width_chars (GTK_LABEL (device), 48);
      /* Under the host's name, past the radio's indicator. */
      gtk_widget_set_margin_start (device, 28);
      gtk_box_append (GTK_BOX (row), host_button (hosts[i], hosts[i]));
      gtk_actionable_set_action_name (GTK_ACTIONABLE (remove), "win.remove-remote-host");
      gtk_actionable_set_action_target_value (GTK_ACTIONABLE (remove),
                                              g_variant_new_string (hosts[i]));
      gtk_widget_set_tooltip_text (remove, tip);
      gtk_widget_add_css_class (remove, "flat");
      gtk_box_append (GTK_BOX (row), remove);
      gtk_box_append (GTK_BOX (entry), row);
      gtk_box_append (GTK_BOX (entry), device);
      gtk_box_append (self->hosts_box, entry);
    }
}

/* A host known to have no GPU, with the line that says so; NULL while it is not known. */
static const char *
host_without_gpu (FbWindow *self, const char *host, gboolean retry)
{
  const char *line = NULL;
  gboolean has_gpu = FALSE;

  if (_fb_window_host_probe (self, host, retry, &line, &has_gpu) == FB_HOST_PROBE_DONE && !has_gpu)
    return line;
  return NULL;
}

/* Whether backend runs on a GPU, which a host must have to be asked for it. */
static gboolean
needs_gpu (const FbBackend *backend)
{
  return backend->describe_target != NULL && backend->describe_target (backend)->gpu;
}

/* The choices of targets follow the machine: here, this computer's devices; on a host, what
 * the host answered (a GPU target offered until it did: the host then refuses it itself). */
static void
sync_targets (FbWindow *self, gboolean retry)
{
  for (guint i = 0; self->profile_target_buttons && i < self->profile_target_buttons->len; i++)
    {
      GtkWidget *button = g_ptr_array_index (self->profile_target_buttons, i);
      const FbBackend *backend = g_object_get_data (G_OBJECT (button), "fb-target");
      const char *none;

      /* The tooltip it was made with says why this computer lacks the target. */
      if (g_object_get_data (G_OBJECT (button), "fb-local-tip") == NULL)
        g_object_set_data_full (G_OBJECT (button), "fb-local-tip",
                                g_strdup (gtk_widget_get_tooltip_text (button)
                                          ? gtk_widget_get_tooltip_text (button) : ""),
                                g_free);
      if (self->profile_host == NULL)
        {
          const char *tip = g_object_get_data (G_OBJECT (button), "fb-local-tip");
          gtk_widget_set_sensitive (button, _fb_window_target_unavailable (backend) == NULL);
          gtk_widget_set_tooltip_text (button, tip[0] != '\0' ? tip : NULL);
        }
      else if (needs_gpu (backend) &&
               (none = host_without_gpu (self, self->profile_host, retry)) != NULL)
        {
          g_autofree char *tip = g_strdup_printf ("%s: %s", self->profile_host, none);
          gtk_widget_set_sensitive (button, FALSE);
          gtk_widget_set_tooltip_text (button, tip);
        }
      else
        {
          gtk_widget_set_sensitive (button, TRUE);
          gtk_widget_set_tooltip_text (button, NULL);
        }
    }
}

/* The state of win.profile-host changed (a choice in the menu, the settings, a model opened):
 * a host that is not in the list any more is this computer. A host chosen that could not be
 * asked for its device is asked again. */
static void
sync_host (FbWindow *self)
{
  g_autoptr(GVariant) state = g_action_get_state (self->profile_host_action);
  const char *host = g_variant_get_string (state, NULL);
  g_auto(GStrv) hosts = dup_hosts (self);

  if (self->disposed)
    return;
  g_clear_pointer (&self->profile_host, g_free);
  if (host[0] != '\0' && g_strv_contains ((const char * const *) hosts, host))
    self->profile_host = g_strdup (host);
  /* A GPU target is the host's to refuse: there, not here, is where its driver has to be. */
  sync_targets (self, TRUE);
}

void
_fb_window_remote_hosts_refresh (FbWindow *self)
{
  rebuild_hosts (self);
  if (self->profile_host_action != NULL && !self->disposed)
    sync_targets (self, FALSE);
}

static void
on_hosts_changed (FbWindow *self)
{
  rebuild_hosts (self);
  if (self->profile_host_action != NULL)
    sync_host (self);
}

static void
add_host_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  FbWindow *self = FB_WINDOW (widget);
  g_autofree char *host = g_strstrip (g_strdup (g_variant_get_string (parameter, NULL)));
  g_auto(GStrv) hosts = dup_hosts (self);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbRemote) remote = NULL;

  if (host[0] == '\0')
    return;
  /* What ssh would read as an option is refused here, not when Profile is pressed. */
  if ((remote = fb_remote_new (host, &error)) == NULL)
    {
      _fb_window_show_error (self, error->message);
      return;
    }
  if (!g_strv_contains ((const char * const *) hosts, host))
    {
      g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
      g_auto(GStrv) added = NULL;

      g_strv_builder_addv (builder, (const char **) hosts);
      g_strv_builder_add (builder, host);
      added = g_strv_builder_end (builder);
      set_hosts (self, (const char * const *) added);
    }
  /* A host just added is the one the user means to profile on. */
  choose_host (self, host);
  if (self->host_entry != NULL)
    gtk_editable_set_text (GTK_EDITABLE (self->host_entry), "");
}

static void
remove_host_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  FbWindow *self = FB_WINDOW (widget);
  const char *host = g_variant_get_string (parameter, NULL);
  g_auto(GStrv) hosts = dup_hosts (self);
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) kept = NULL;

  for (guint i = 0; hosts[i] != NULL; i++)
    if (!g_str_equal (hosts[i], host))
      g_strv_builder_add (builder, hosts[i]);
  kept = g_strv_builder_end (builder);
  if (g_strcmp0 (self->profile_host, host) == 0)
    choose_host (self, "");
  set_hosts (self, (const char * const *) kept);
}

static void
on_add_clicked (FbWindow *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->host_entry));

  gtk_widget_activate_action (GTK_WIDGET (self), "win.add-remote-host", "s", text);
}

void
_fb_window_init_profile_remote (FbWindow *self, GtkBox *menu_box)
{
  GtkWidget *heading = gtk_label_new ("Machine");
  GtkWidget *add_row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *add = gtk_button_new_with_mnemonic ("_Add");

  gtk_widget_add_css_class (heading, "heading");
  gtk_label_set_xalign (GTK_LABEL (heading), 0);
  gtk_box_append (menu_box, heading);
  self->hosts_box = GTK_BOX (gtk_box_new (GTK_ORIENTATION_VERTICAL, 6));
  gtk_box_append (menu_box, GTK_WIDGET (self->hosts_box));

  self->host_entry = gtk_entry_new ();
  gtk_entry_set_placeholder_text (GTK_ENTRY (self->host_entry), "user@host");
  gtk_widget_set_tooltip_text (self->host_entry,
                               "An SSH destination as ssh takes it (user@host, a Host of your SSH "
                               "configuration), reached with your keys and agent in batch mode");
  gtk_widget_set_hexpand (self->host_entry, TRUE);
  g_signal_connect_object (self->host_entry, "activate", G_CALLBACK (on_add_clicked), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (add, "clicked", G_CALLBACK (on_add_clicked), self, G_CONNECT_SWAPPED);
  gtk_box_append (GTK_BOX (add_row), self->host_entry);
  gtk_box_append (GTK_BOX (add_row), add);
  gtk_box_append (menu_box, add_row);
  rebuild_hosts (self);
}

void
_fb_window_attach_profile_remote (FbWindow *self)
{
  GSettings *settings = settings_of (self);

  if (settings != NULL)
    {
      self->profile_host_action = g_settings_create_action (settings, "profile-host");
      g_signal_connect_object (settings, "changed::remote-hosts", G_CALLBACK (on_hosts_changed),
                               self, G_CONNECT_SWAPPED);
    }
  else
    self->profile_host_action = G_ACTION (g_simple_action_new_stateful (
      "profile-host", G_VARIANT_TYPE_STRING, g_variant_new_string ("")));
  g_signal_connect_object (self->profile_host_action, "notify::state", G_CALLBACK (sync_host),
                           self, G_CONNECT_SWAPPED);
  g_action_map_add_action (G_ACTION_MAP (self), self->profile_host_action);
  rebuild_hosts (self);
  sync_host (self);
}

void
_fb_window_remote_model_changed (FbWindow *self)
{
  GSettings *settings = settings_of (self);
  g_autofree char *key = _fb_window_model_key (self);
  g_autoptr(GVariant) map = NULL;
  const char *host;

  if (settings == NULL)
    return;
  map = g_settings_get_value (settings, "last-hosts");
  if (g_variant_lookup (map, key, "&s", &host))
    choose_host (self, host);
}

void
_fb_window_remember_host (FbWindow *self)
{
  GSettings *settings = settings_of (self);
  g_autofree char *key = _fb_window_model_key (self);
  g_autoptr(GVariant) map = NULL;
  GVariantBuilder builder;
  GVariantIter iter;
  const char *k, *v;

  if (settings == NULL)
    return;
  map = g_settings_get_value (settings, "last-hosts");
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a{ss}"));
  g_variant_iter_init (&iter, map);
  while (g_variant_iter_next (&iter, "{&s&s}", &k, &v))
    if (!g_str_equal (k, key))
      g_variant_builder_add (&builder, "{ss}", k, v);
  g_variant_builder_add (&builder, "{ss}", key, self->profile_host ? self->profile_host : "");
  g_settings_set_value (settings, "last-hosts", g_variant_builder_end (&builder));
}

void
_fb_window_remote_finalize (FbWindow *self)
{
  g_clear_object (&self->profile_host_action);
  g_clear_pointer (&self->profile_host, g_free);
  g_clear_pointer (&self->remote_hosts, g_strfreev);
  g_clear_pointer (&self->remote_trace, g_bytes_unref);
  g_clear_pointer (&self->remote_profile, fb_profile_unref);
  g_clear_pointer (&self->remote_trace_host, g_free);
}

GBytes *
_fb_window_remote_trace (FbWindow *self, const char **host)
{
  if (self->remote_trace == NULL || self->profile == NULL || self->profile != self->remote_profile)
    return NULL;
  if (host != NULL)
    *host = self->remote_trace_host;
  return self->remote_trace;
}

/* The profile made there. */

typedef struct {
  char         *host;
  char         *model_path;  /* the model file here, or NULL */
  GBytes       *model_bytes; /* the model when it is no file here (the bundled sample) */
  char         *model_name;  /* its name there, which the profile records */
  GPtrArray    *args;        /* char*: the runner's options after the model */
  char         *failure;     /* the runner's last "fusebench: " line: why it failed */
  GMainContext *context;
  FbWindow     *window;
} Job;

typedef struct {
  FbWindow *window;
  char     *host;
  double    fraction;
  char     *what;
} Progress;

typedef struct {
  FbProfile *profile;
  GBytes    *trace;    /* the Chrome trace the runner wrote with it */
} Result;

static void
job_free (gpointer data)
{
  Job *job = data;

  g_free (job->host);
  g_free (job->model_path);
  g_clear_pointer (&job->model_bytes, g_bytes_unref);
  g_free (job->model_name);
  g_ptr_array_unref (job->args);
  g_free (job->failure);
  g_main_context_unref (job->context);
  g_object_unref (job->window);
  g_free (job);
}

static void
result_free (gpointer data)
{
  Result *r = data;

  g_clear_pointer (&r->profile, fb_profile_unref);
  g_clear_pointer (&r->trace, g_bytes_unref);
  g_free (r);
}

static void
progress_free (gpointer data)
{
  Progress *p = data;

  g_object_unref (p->window);
  g_free (p->host);
  g_free (p->what);
  g_free (p);
}

static void
show_progress (FbWindow *self, const char *host, double fraction, const char *what)
{
  g_autofree char *text = g_strdup_printf ("Profiling on %s: %s…", host, what);

  gtk_progress_bar_set_fraction (self->progress_bar, fraction);
  gtk_label_set_label (self->progress_label, text);
}

static gboolean
deliver_progress (gpointer data)
{
  Progress *p = data;
  FbWindow *self = p->window;

  /* Only while this profile is being made: a late report after the end changes nothing. */
  if (!self->disposed && self->profile_cancellable != NULL && self->run_cancellable == NULL
      && self->load_cancellable == NULL)
    show_progress (self, p->host, p->fraction, p->what);
  return G_SOURCE_REMOVE;
}

static void
post_progress (Job *job, double fraction, const char *what)
{
  Progress *p = g_new (Progress, 1);

  p->window = g_object_ref (job->window);
  p->host = g_strdup (job->host);
  p->fraction = fraction;
  p->what = g_strdup (what);
  fb_main_thread_post (job->context, deliver_progress, p, progress_free);
}

/* The runner's stderr: "progress FRACTION WHAT" lines from --progress-lines, its messages. */
static void
on_line (const char *line, gpointer data)
{
  Job *job = data;
  char *end;
  double fraction;

  if (g_str_has_prefix (line, "progress "))
    {
      fraction = g_ascii_strtod (line + strlen ("progress "), &end);
      if (end != line + strlen ("progress "))
        {
          g_autofree char *what = g_strstrip (g_strdup (end));
          post_progress (job, CLAMP (fraction, 0, 1), what);
        }
    }
  else if (g_str_has_prefix (line, "fusebench: "))
    {
      g_free (job->failure);
      job->failure = g_strdup (line + strlen ("fusebench: "));
    }
}

/* The host's own notes, e.g. the one-time copy of the runner. */
static void
on_note (const char *line, gpointer data)
{
  post_progress (data, 0, line);
}

static gboolean
link_into (const char *target, const char *in, const char *name, GError **error)
{
  g_autofree char *link = g_build_filename (in, name, NULL);
  int errsv;

  if (symlink (target, link) == 0)
    return TRUE;
  errsv = errno;
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errsv), "%s: %s", link,
               g_strerror (errsv));
  return FALSE;
}

/* The folder fb_remote_upload sends: in/NAME, the model (a link to it, or its bytes) and the
 * files that go with it. */
static char *
stage (Job *job, GError **error)
{
  g_autofree char *top = g_dir_make_tmp ("fusebench-send-XXXXXX", error);
  g_autofree char *in = NULL, *dir = NULL;
  g_auto(GStrv) companions = NULL;
  gboolean ok = TRUE;

  if (top == NULL)
    return NULL;
  in = g_build_filename (top, "in", NULL);
  if (g_mkdir (in, 0700) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errsv), "%s: %s", in,
                   g_strerror (errsv));
      fb_remote_remove_tree (top);
      return NULL;
    }
  if (job->model_bytes != NULL)
    {
      g_autofree char *file = g_build_filename (in, job->model_name, NULL);
      ok = g_file_set_contents (file, g_bytes_get_data (job->model_bytes, NULL),
                                g_bytes_get_size (job->model_bytes), error);
    }
  else
    {
      ok = link_into (job->model_path, in, job->model_name, error);
      dir = g_path_get_dirname (job->model_path);
      companions = fb_remote_model_companions (job->model_path);
      for (guint i = 0; ok && companions[i] != NULL; i++)
        {
          g_autofree char *sibling = g_build_filename (dir, companions[i], NULL);
          ok = link_into (sibling, in, companions[i], error);
        }
    }
  if (!ok)
    {
      fb_remote_remove_tree (top);
      return NULL;
    }
  return g_steal_pointer (&top);
}

static FbProfile *
profile_there (Job *job, GBytes **trace, GCancellable *cancellable, GError **error)
{
  g_autoptr(FbRemote) remote = fb_remote_new (job->host, error);
  g_autofree char *staging = NULL, *fetched = NULL, *model = NULL, *file = NULL;
  g_autofree char *trace_file = NULL;
  g_autoptr(GMappedFile) mapped = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  FbProfile *profile;
  int status = 1;
  gboolean ran;

  if (remote == NULL)
    return NULL;
  post_progress (job, 0, "connecting");
  if (!fb_remote_prepare (remote, on_note, job, cancellable, error))
    return NULL;
  if ((staging = stage (job, error)) == NULL)
    {
      fb_remote_discard (remote);
      return NULL;
    }
  post_progress (job, 0, "sending the model");
  if (!fb_remote_upload (remote, staging, cancellable, error))
    {
      fb_remote_remove_tree (staging);
      fb_remote_discard (remote);
      return NULL;
    }
  fb_remote_remove_tree (staging);
  if ((fetched = g_dir_make_tmp ("fusebench-fetch-XXXXXX", error)) == NULL)
    {
      fb_remote_discard (remote);
      return NULL;
    }
  model = g_build_filename ("in", job->model_name, NULL);
  g_ptr_array_add (argv, "profile");
  g_ptr_array_add (argv, model);
  g_ptr_array_extend (argv, job->args, NULL, NULL);
  g_ptr_array_add (argv, NULL);
  ran = fb_remote_run (remote, (const char * const *) argv->pdata, fetched, on_line, job, &status,
                       cancellable, error);
  file = g_build_filename (fetched, "profile.json", NULL);
  trace_file = g_build_filename (fetched, "trace.json", NULL);
  if (!ran)
    profile = NULL;
  else if (g_cancellable_set_error_if_cancelled (cancellable, error))
    profile = NULL;
  else if (status != 0)
    {
      g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_FAILED, "%s: %s", job->host,
                   job->failure != NULL ? job->failure : "the profile failed there");
      profile = NULL;
    }
  else if ((profile = fb_profile_load (file, error)) == NULL)
    g_prefix_error (error, "%s: the profile that came back: ", job->host);
  else if ((mapped = g_mapped_file_new (trace_file, FALSE, error)) != NULL)
    *trace = g_mapped_file_get_bytes (mapped);
  else
    {
      g_prefix_error (error, "%s: the Chrome trace did not come back with the profile: ",
                      job->host);
      g_clear_pointer (&profile, fb_profile_unref);
    }
  fb_remote_remove_tree (fetched);
  return profile;
}

static void
remote_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  Job *job = task_data;
  GError *error = NULL;
  Result *r = g_new0 (Result, 1);

  r->profile = profile_there (job, &r->trace, cancellable, &error);
  if (r->profile == NULL)
    {
      result_free (r);
      g_task_return_error (task, error);
    }
  else
    g_task_return_pointer (task, r, result_free);
}

static void
on_profiled (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FbWindow *self = FB_WINDOW (source);
  Job *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  Result *r = g_task_propagate_pointer (G_TASK (result), &error);

  g_clear_object (&self->profile_cancellable);
  if (self->disposed)
    {
      g_clear_pointer (&r, result_free);
      return;
    }
  if (r == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        _fb_window_update_busy (self);
      else
        _fb_window_show_error (self, error->message);
      return;
    }
  /* Kept with its profile: Export Chrome Trace writes the trace made there while that profile
   * is the one shown, as it writes the one made here for a profile made here. */
  g_clear_pointer (&self->remote_trace, g_bytes_unref);
  g_clear_pointer (&self->remote_profile, fb_profile_unref);
  g_free (self->remote_trace_host);
  self->remote_trace = g_steal_pointer (&r->trace);
  self->remote_profile = fb_profile_ref (r->profile);
  self->remote_trace_host = g_strdup (job->host);
  _fb_window_update_busy (self);
  _fb_window_set_profile (self, r->profile);
  result_free (r);
}

/* The runner's options for the pipeline on screen, as `fusebench profile` takes them. */
static void
add_pipeline_args (GPtrArray *args, const FbPipelineOptions *o)
{
  GHashTableIter iter;
  gpointer name, shape;

  for (guint i = 0; o->disabled_passes && i < o->disabled_passes->len; i++)
    {
      g_ptr_array_add (args, g_strdup ("--disable"));
      g_ptr_array_add (args, g_strdup (g_ptr_array_index (o->disabled_passes, i)));
    }
  for (guint i = 0; o->no_fuse && i < o->no_fuse->len; i++)
    {
      g_ptr_array_add (args, g_strdup ("--no-fuse"));
      g_ptr_array_add (args, g_strdup (g_ptr_array_index (o->no_fuse, i)));
    }
  g_ptr_array_add (args, g_strdup ("--layout"));
  g_ptr_array_add (args, g_strdup (o->layout == FB_LAYOUT_NHWC ? "nhwc" : "nchw"));
  if (o->input_shapes == NULL)
    return;
  g_hash_table_iter_init (&iter, o->input_shapes);
  while (g_hash_table_iter_next (&iter, &name, &shape))
    {
      g_autofree char *dims = fb_shape_to_string (shape);
      g_ptr_array_add (args, g_strdup ("--input-shape"));
      g_ptr_array_add (args, g_strdup_printf ("%s=%s", (char *) name, dims));
    }
}

void
_fb_window_profile_remote (FbWindow *self)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  const char *none;
  Job *job;

  g_assert (self->profile_host != NULL && self->run != NULL && self->profile_cancellable == NULL);

  /* A host that answered it has no GPU is not asked to run cuda: the cpu target still runs
   * there. */
  if (needs_gpu (self->profile_target) &&
      (none = host_without_gpu (self, self->profile_host, FALSE)) != NULL)
    {
      g_autofree char *message = g_strdup_printf ("%s: the %s target needs a GPU, and the host has "
                                                  "none (%s); profile there with the %s target",
                                                  self->profile_host, self->profile_target->name,
                                                  none, fb_backend_host ()->name);
      _fb_window_show_error (self, message);
      return;
    }
  job = g_new0 (Job, 1);
  job->host = g_strdup (self->profile_host);
  job->args = g_ptr_array_new_with_free_func (g_free);
  job->context = g_main_context_ref_thread_default ();
  job->window = g_object_ref (self);
  if (self->model_file == NULL)
    {
      job->model_name = g_strdup (self->model_title);
      if ((job->model_bytes = _fb_window_sample_bytes (&error)) == NULL)
        g_prefix_error (&error, "The bundled sample: ");
    }
  else if ((job->model_path = g_file_get_path (self->model_file)) != NULL)
    job->model_name = g_file_get_basename (self->model_file);
  else
    {
      g_autofree char *uri = g_file_get_uri (self->model_file);
      g_set_error (&error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "%s: only a model stored on this computer can be sent to %s", uri, job->host);
    }
  if (error != NULL)
    {
      job_free (job);
      _fb_window_show_error (self, error->message);
      return;
    }
  g_ptr_array_add (job->args, g_strdup ("--progress-lines"));
  g_ptr_array_add (job->args, g_strdup ("--target"));
  g_ptr_array_add (job->args, g_strdup (self->profile_target->name));
  if (self->profile_eager)
    g_ptr_array_add (job->args, g_strdup ("--eager"));
  g_ptr_array_add (job->args, g_strdup ("-o"));
  g_ptr_array_add (job->args, g_strdup ("out/profile.json"));
  g_ptr_array_add (job->args, g_strdup ("--chrome-trace"));
  g_ptr_array_add (job->args, g_strdup ("out/trace.json"));
  add_pipeline_args (job->args, fb_run_get_options (self->run));

  self->profile_cancellable = g_cancellable_new ();
  task = g_task_new (self, self->profile_cancellable, on_profiled, NULL);
  g_task_set_source_tag (task, _fb_window_profile_remote);
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, remote_thread);
  _fb_window_update_busy (self);
  show_progress (self, self->profile_host, 0, "connecting");
}

void
_fb_window_class_init_profile_remote (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.add-remote-host", "s", add_host_action);
  gtk_widget_class_install_action (widget_class, "win.remove-remote-host", "s",
                                   remove_host_action);
}
