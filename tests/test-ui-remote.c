/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Profile on a remote host from the window, through a real OpenSSH server on 127.0.0.1
 * (fb-test-sshd.c) with the cpu target: the host typed into the Profile menu's entry lands in
 * the settings and becomes the choice, and its device shows under it once asked (no GPU on this
 * machine's sshd, an H200 on the stand-in, "not reached" for a closed port); Profile names the
 * host in the progress strip, the profile that comes back is painted on the stages like a local
 * one (A/B with the next) and its Chrome trace, made there, is what Export Chrome Trace writes;
 * Cancel in the middle ends the run there and changes nothing here; a connection dropped
 * mid-run, a closed port and a key the server refuses each say what and where in the window's
 * message, and the window stays usable (a profile on this computer still works); CUDA is greyed
 * and refused for a host without a GPU, the CPU still offered, and offered for one with a GPU;
 * the host a model was last profiled on is chosen again when it is opened; a host forgotten is
 * gone from the menu. */
#include "fb-application.h"
#include "fb-test-sshd.h"
#include "fb-window.h"
#include "fb-test-window.h"
#include "fb-window-export.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

static FbApplication *app;
static FbWindow *window;
static TestSshd *server;

static void
settle (void)
{
  test_window_settle (window);
}

static GtkWidget *
find_widget (GtkWidget *widget, GType type, const char *label)
{
  const char *text = NULL;

  if (GTK_IS_CHECK_BUTTON (widget))
    text = gtk_check_button_get_label (GTK_CHECK_BUTTON (widget));
  else if (GTK_IS_ENTRY (widget))
    text = gtk_entry_get_placeholder_text (GTK_ENTRY (widget));
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type) && g_strcmp0 (text, label) == 0)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_widget (child, type, label);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The host's choice in the menu, whose label gains the device once a profile came from it. */
static GtkWidget *
host_choice (const char *host)
{
  g_autofree char *prefix = g_strdup_printf ("%s — ", host);
  GtkWidget *found = find_widget (GTK_WIDGET (window), GTK_TYPE_CHECK_BUTTON, host);

  if (found != NULL)
    return found;
  /* Labels with a device: walk them all. */
  for (GtkWidget *w = find_widget (GTK_WIDGET (window), GTK_TYPE_CHECK_BUTTON, "This Computer");
       w != NULL && found == NULL; w = gtk_widget_get_parent (w))
    if (GTK_IS_BOX (w))
      for (GtkWidget *row = gtk_widget_get_first_child (w); row != NULL && found == NULL;
           row = gtk_widget_get_next_sibling (row))
        {
          GtkWidget *button = GTK_IS_BOX (row) ? gtk_widget_get_first_child (row) : NULL;
          if (button != NULL && GTK_IS_CHECK_BUTTON (button)
              && g_str_has_prefix (gtk_check_button_get_label (GTK_CHECK_BUTTON (button)), prefix))
            found = button;
        }
  return found;
}

/* Clicks a choice of the Profile menu, by its label or its host. */
static void
choose (const char *label)
{
  GtkWidget *button = find_widget (GTK_WIDGET (window), GTK_TYPE_CHECK_BUTTON, label);

  if (button == NULL)
    button = host_choice (label);
  g_assert_nonnull (button);
  gtk_widget_activate (button);
  g_assert_true (gtk_check_button_get_active (GTK_CHECK_BUTTON (button)));
}

static char *
profile_host (void)
{
  g_autoptr(GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (window),
                                                               "profile-host");
  return g_variant_dup_string (state, NULL);
}

static gboolean
settings_hold (const char *host)
{
  GSettings *settings = fb_application_get_settings (app);
  g_auto(GStrv) hosts = NULL;

  g_assert_nonnull (settings);
  hosts = g_settings_get_strv (settings, "remote-hosts");
  return g_strv_contains ((const char * const *) hosts, host);
}

static guint
count_entries (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  guint n = 0;

  while (dir && g_dir_read_name (dir))
    n++;
  return n;
}

static void
assert_no_work_left (void)
{
  g_autofree char *work = g_build_filename (server->cache, "fusebench", "jobs", NULL);
  g_assert_cmpuint (count_entries (work), ==, 0);
}

static const char *label_starting (GtkWidget *widget, const char *prefix);

/* The device line under host in the Profile menu, once the host answered (a minute at most:
 * ssh's connect timeout is 15 s). */
static const char *
device_line (const char *prefix)
{
  gint64 deadline = g_get_monotonic_time () + 60 * G_TIME_SPAN_SECOND;
  const char *line;

  while ((line = label_starting (GTK_WIDGET (window), prefix)) == NULL
         && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  if (line == NULL)
    g_error ("no device line starting '%s' in the menu", prefix);
  return line;
}

/* Typed into the entry as a user does, Enter: in the settings, in the menu, and chosen. */
static void
test_add_host (void)
{
  GtkWidget *entry = find_widget (GTK_WIDGET (window), GTK_TYPE_ENTRY, "user@host");
  GtkWidget *choice;
  g_autofree char *chosen = NULL;

  g_assert_nonnull (entry);
  g_assert_null (host_choice ("fbtest"));
  gtk_editable_set_text (GTK_EDITABLE (entry), " fbtest ");
  g_signal_emit_by_name (entry, "activate"); /* Enter */
  settle ();
  g_assert_true (settings_hold ("fbtest"));
  choice = host_choice ("fbtest");
  g_assert_nonnull (choice);
  g_assert_true (gtk_check_button_get_active (GTK_CHECK_BUTTON (choice)));
  chosen = profile_host ();
  g_assert_cmpstr (chosen, ==, "fbtest");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (entry)), ==, "");
  /* Asked in the background, the host's device shows under it: no GPU on this machine. */
  g_test_message ("fbtest: %s", device_line ("no GPU: cpu only"));

  /* What ssh would read as an option never becomes a host. */
  gtk_editable_set_text (GTK_EDITABLE (entry), "-oProxyCommand=true");
  g_signal_emit_by_name (entry, "activate"); /* Enter */
  settle ();
  g_assert_false (settings_hold ("-oProxyCommand=true"));
  g_assert_nonnull (strstr (fb_window_get_last_error (window), "-oProxyCommand=true"));
}

/* The text of the first label that starts with prefix, or NULL. */
static const char *
label_starting (GtkWidget *widget, const char *prefix)
{
  if (GTK_IS_LABEL (widget) && g_str_has_prefix (gtk_label_get_label (GTK_LABEL (widget)), prefix))
    return gtk_label_get_label (GTK_LABEL (widget));
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      const char *found = label_starting (child, prefix);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* Exports the profile on screen's Chrome trace and waits for it: the path (to free). */
static char *
export_trace (const char *name, const char *status)
{
  g_autofree char *dir = g_dir_make_tmp ("fb-ui-remote-XXXXXX", NULL);
  char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);

  g_assert_true (fb_window_can_export (window, FB_EXPORT_TRACE));
  fb_window_export_to (window, FB_EXPORT_TRACE, file, FALSE);
  while (fb_window_is_exporting (window))
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpstr (fb_window_get_export_status (window), ==, status);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  return path;
}

static void
remove_export (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_unlink (path);
  g_rmdir (dir);
}

/* The trace the window exported: one complete event per span of the profile's timeline, in a
 * process named for its target, model and device. */
static void
assert_trace_of (const char *path, FbProfile *profile)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *process = g_strdup_printf ("fusebench %s: %s on %s", profile->target,
                                              profile->model, profile->device.name);
  JsonArray *events;
  guint complete = 0;
  gboolean named = FALSE;

  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  events = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)),
                                         "traceEvents");
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      const char *ph = json_object_get_string_member_with_default (e, "ph", "");
      if (g_str_equal (ph, "X"))
        complete++;
      else if (g_str_equal (ph, "M") && json_object_has_member (e, "args"))
        named |= g_strcmp0 (json_object_get_string_member_with_default (
                              json_object_get_object_member (e, "args"), "name", ""), process) == 0;
    }
  g_assert_cmpuint (complete, ==, profile->timeline->len);
  g_assert_true (named);
}

/* Profile pressed with the host chosen: made there, fetched with its trace, painted here. */
static void
test_profile_there (void)
{
  const char *error_before = fb_window_get_last_error (window);
  FbProfile *first, *second;
  GtkWidget *choice;
  g_autofree char *trace = NULL, *local_trace = NULL;

  fb_window_clear_profile (window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  g_assert_true (fb_window_is_busy (window));
  /* The progress strip says where. */
  g_assert_nonnull (label_starting (GTK_WIDGET (window), "Profiling on fbtest: "));
  settle ();
  g_assert_true (fb_window_get_last_error (window) == error_before);
  first = fb_window_get_profile (window);
  g_assert_nonnull (first);
  g_assert_cmpstr (first->target, ==, "cpu");
  g_assert_cmpstr (first->model, ==, "sample-cnn.onnx");
  g_assert_cmpuint (first->kernels->len, >, 0);
  g_assert_true (fb_window_is_profile_painted (window));
  assert_no_work_left ();

  choice = host_choice ("fbtest");
  g_assert_nonnull (choice);
  g_assert_true (gtk_check_button_get_active (GTK_CHECK_BUTTON (choice)));
  g_assert_nonnull (label_starting (GTK_WIDGET (window), "no GPU: cpu only"));

  /* Export Chrome Trace writes the trace made there with this profile. */
  trace = export_trace ("remote.trace.json", "Exported remote.trace.json, the trace made on fbtest");
  assert_trace_of (trace, first);
  remove_export (trace);

  /* Again: the first becomes the A/B reference, as with profiles made here. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  settle ();
  g_assert_true (fb_window_get_last_error (window) == error_before);
  second = fb_window_get_profile (window);
  g_assert_true (second != first);
  g_assert_true (fb_window_is_profile_painted (window));
  g_assert_true (fb_window_get_previous_profile (window) == first);

  /* A profile made here has its trace made here again. */
  choose ("This Computer");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  settle ();
  g_assert_true (fb_window_get_previous_profile (window) == second);
  local_trace = export_trace ("local.trace.json", "Exported local.trace.json");
  assert_trace_of (local_trace, fb_window_get_profile (window));
  remove_export (local_trace);
  choose ("fbtest");
}

/* Cancel once the runner reports progress there: the run ends, its folder there goes, nothing
 * changes here and nothing is said. */
static void
test_cancel_there (void)
{
  const char *error_before = fb_window_get_last_error (window);
  FbProfile *before = fb_window_get_profile (window);
  GtkProgressBar *bar = NULL;
  gint64 deadline = g_get_monotonic_time () + 120 * G_TIME_SPAN_SECOND;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  bar = GTK_PROGRESS_BAR (find_widget (GTK_WIDGET (window), GTK_TYPE_PROGRESS_BAR, NULL));
  g_assert_nonnull (bar);
  while (gtk_progress_bar_get_fraction (bar) <= 0 && fb_window_is_busy (window)
         && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (fb_window_is_busy (window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.cancel", NULL));
  settle ();
  g_assert_true (fb_window_get_profile (window) == before);
  g_assert_true (fb_window_get_last_error (window) == error_before);
  assert_no_work_left ();
}

/* The connection dropped once the runner reports progress there (the network gone): the window
 * says so, naming the host; the process there is ended and its folder removed; nothing changes
 * here, and the window goes on (test_closed_port profiles here after a fault). */
static void
test_dropped_there (void)
{
  const char *error_before = fb_window_get_last_error (window);
  FbProfile *before = fb_window_get_profile (window);
  GtkProgressBar *bar = NULL;
  g_autofree char *jobs = g_build_filename (server->cache, "fusebench", "jobs", NULL);
  gint64 deadline = g_get_monotonic_time () + 120 * G_TIME_SPAN_SECOND;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  bar = GTK_PROGRESS_BAR (find_widget (GTK_WIDGET (window), GTK_TYPE_PROGRESS_BAR, NULL));
  while (gtk_progress_bar_get_fraction (bar) <= 0 && fb_window_is_busy (window)
         && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (fb_window_is_busy (window));
  g_assert_cmpuint (test_sshd_drop_connections (server), >, 0);
  settle ();
  g_assert_true (fb_window_get_last_error (window) != error_before);
  g_test_message ("the window says: %s", fb_window_get_last_error (window));
  g_assert_true (g_str_has_prefix (fb_window_get_last_error (window),
                                   "fbtest: the connection dropped during the run; the process "
                                   "there was ended"));
  g_assert_true (fb_window_get_profile (window) == before);
  /* The runner there sees its input end, stops, and its shell removes the work folder. */
  deadline = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;
  while (count_entries (jobs) > 0 && g_get_monotonic_time () < deadline)
    g_usleep (100 * 1000);
  assert_no_work_left ();
}

/* A fault there: the message names the host and what failed, and the window goes on. */
static void
assert_fault (const char *host, const char *what)
{
  const char *error_before = fb_window_get_last_error (window);
  FbProfile *before = fb_window_get_profile (window);
  g_autofree char *chosen = NULL;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.add-remote-host", "s", host));
  chosen = profile_host ();
  g_assert_cmpstr (chosen, ==, host);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  settle ();
  g_assert_false (fb_window_is_busy (window));
  g_assert_true (fb_window_get_last_error (window) != error_before);
  g_test_message ("the window says: %s", fb_window_get_last_error (window));
  g_assert_nonnull (strstr (fb_window_get_last_error (window), host));
  g_assert_nonnull (strstr (fb_window_get_last_error (window), what));
  g_assert_true (fb_window_get_profile (window) == before);
  g_assert_true (fb_window_is_profile_painted (window));

  /* Still usable: this computer picked in the menu, a profile made here and painted. */
  choose ("This Computer");
  g_clear_pointer (&chosen, g_free);
  chosen = profile_host ();
  g_assert_cmpstr (chosen, ==, "");
  error_before = fb_window_get_last_error (window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  settle ();
  g_assert_true (fb_window_get_last_error (window) == error_before);
  g_assert_true (fb_window_get_profile (window) != before);
  g_assert_true (fb_window_is_profile_painted (window));
  g_assert_true (fb_window_get_previous_profile (window) == before);
}

static void
test_closed_port (void)
{
  assert_fault ("fbtest-closed", "connection refused");
  /* The menu says so under the host too, from its own attempt to ask it. */
  g_assert_nonnull (device_line ("not reached: connection refused"));
}

static void
test_wrong_key (void)
{
  assert_fault ("fbtest-wrongkey", "the host refused our keys");
}

/* The CUDA target follows the host's answer: greyed for a host without a GPU (the local sshd's
 * host is this machine), and refused there without running, the CPU still offered; offered for
 * the stand-in H200, whose runner (no real GPU behind it) then refuses it itself. */
static void
test_cuda_there (void)
{
  GtkWidget *cuda = find_widget (GTK_WIDGET (window), GTK_TYPE_CHECK_BUTTON, "CUDA (NVIDIA GPU)");
  GtkWidget *cpu = find_widget (GTK_WIDGET (window), GTK_TYPE_CHECK_BUTTON, "CPU");
  gboolean gpu_here;
  const char *error_before;
  FbProfile *before = fb_window_get_profile (window);

  g_assert_nonnull (cuda);
  choose ("This Computer");
  gpu_here = gtk_widget_get_sensitive (cuda);
  choose ("fbtest");
  g_assert_nonnull (device_line ("no GPU: cpu only"));
  g_assert_false (gtk_widget_get_sensitive (cuda));
  g_assert_true (g_str_has_prefix (gtk_widget_get_tooltip_text (cuda), "fbtest: no GPU"));
  g_assert_true (gtk_widget_get_sensitive (cpu));
  /* Chosen before the host was (as a model's last host is picked again): refused here. */
  gtk_check_button_set_active (GTK_CHECK_BUTTON (cuda), TRUE);
  error_before = fb_window_get_last_error (window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  g_assert_false (fb_window_is_busy (window));
  g_assert_true (fb_window_get_last_error (window) != error_before);
  g_test_message ("the window says: %s", fb_window_get_last_error (window));
  g_assert_true (g_str_has_prefix (fb_window_get_last_error (window),
                                   "fbtest: the cuda target needs a GPU, and the host has none"));
  g_assert_true (fb_window_get_profile (window) == before);

  /* A GPU there: offered, and the host is asked. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.add-remote-host", "s",
                                             "fbtest-gpu"));
  g_test_message ("fbtest-gpu: %s", device_line ("NVIDIA H200 · driver 580.95.05 · CUDA libraries: "));
  g_assert_true (gtk_widget_get_sensitive (cuda));
  g_assert_true (gtk_check_button_get_active (GTK_CHECK_BUTTON (cuda)));
  error_before = fb_window_get_last_error (window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  settle ();
  if (!gpu_here)
    {
      g_assert_true (fb_window_get_last_error (window) != error_before);
      g_test_message ("the window says: %s", fb_window_get_last_error (window));
      g_assert_true (g_str_has_prefix (fb_window_get_last_error (window), "fbtest-gpu: "));
      g_assert_nonnull (strstr (fb_window_get_last_error (window), "cuda"));
      g_assert_true (fb_window_get_profile (window) == before);
    }
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.remove-remote-host", "s",
                                             "fbtest-gpu"));
  choose ("CPU");
  choose ("This Computer");
  g_assert_cmpint (gtk_widget_get_sensitive (cuda), ==, gpu_here);
}

/* Where a model was last profiled is picked again when it is opened. */
static void
test_last_host (void)
{
  g_autofree char *chosen = NULL;
  GSettings *settings = fb_application_get_settings (app);
  g_autoptr(GVariant) map = NULL;
  const char *host;

  choose ("fbtest");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.profile", NULL));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.cancel", NULL));
  settle ();
  map = g_settings_get_value (settings, "last-hosts");
  g_assert_true (g_variant_lookup (map, "sample", "&s", &host));
  g_assert_cmpstr (host, ==, "fbtest");

  choose ("This Computer");
  fb_window_open_sample (window);
  settle ();
  chosen = profile_host ();
  g_assert_cmpstr (chosen, ==, "fbtest");
  g_assert_true (gtk_check_button_get_active (GTK_CHECK_BUTTON (host_choice ("fbtest"))));
  choose ("This Computer");
}

/* Forgotten through its button's action: gone from the settings and the menu, and when it was
 * the choice, this computer is. */
static void
test_remove_host (void)
{
  g_autofree char *chosen = NULL;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.add-remote-host", "s",
                                             "fbtest-closed"));
  g_assert_nonnull (host_choice ("fbtest-closed"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.remove-remote-host", "s",
                                             "fbtest-closed"));
  g_assert_false (settings_hold ("fbtest-closed"));
  g_assert_null (host_choice ("fbtest-closed"));
  g_assert_nonnull (host_choice ("fbtest"));
  chosen = profile_host ();
  g_assert_cmpstr (chosen, ==, "");
}

static void
skip_no_sshd (void)
{
  g_test_skip ("OpenSSH's sshd, ssh and ssh-keygen are not installed "
               "(openssh-server, openssh-client)");
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  if (!test_sshd_available ())
    {
      g_test_add_func ("/ui/remote/no-sshd", skip_no_sshd);
      return g_test_run ();
    }
  server = test_sshd_start (TEST_SSHD_CACHE_WRITABLE);
  g_setenv ("FUSEBENCH_SSH_CONFIG", server->config, TRUE);
  /* The runner sent there is the pack this build made, else its fusebench binary: the app
   * finds either from its own binary, and this test program is no fusebench. */
  g_assert_nonnull (g_getenv ("FUSEBENCH"));
  g_setenv ("FUSEBENCH_REMOTE_RUNNER", g_getenv ("FUSEBENCH_RUNNER_PACK") != NULL
                                       ? g_getenv ("FUSEBENCH_RUNNER_PACK")
                                       : g_getenv ("FUSEBENCH"), TRUE);

  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 900);
  gtk_window_present (GTK_WINDOW (window));
  fb_window_open_sample (window);
  settle ();

  g_test_add_func ("/ui/remote/add-host", test_add_host);
  g_test_add_func ("/ui/remote/profile", test_profile_there);
  g_test_add_func ("/ui/remote/cancel", test_cancel_there);
  g_test_add_func ("/ui/remote/dropped", test_dropped_there);
  g_test_add_func ("/ui/remote/closed-port", test_closed_port);
  g_test_add_func ("/ui/remote/wrong-key", test_wrong_key);
  g_test_add_func ("/ui/remote/cuda-there", test_cuda_there);
  g_test_add_func ("/ui/remote/last-host", test_last_host);
  g_test_add_func ("/ui/remote/remove-host", test_remove_host);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  test_sshd_stop (server);
  return status;
}
