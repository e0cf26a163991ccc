/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-config.h"
#include "fb-remote-private.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>

G_DEFINE_QUARK (fb-remote-error-quark, fb_remote_error)

/* Long enough for a host across the world, short enough that a mistyped name does not look
 * like a hang. */
#define CONNECT_TIMEOUT_S 15
/* How long ssh has to end on its own after its stdin closed before it is told to. */
#define CANCEL_GRACE_MS 5000

G_DEFINE_FINAL_TYPE (FbRemote, fb_remote, G_TYPE_OBJECT)

static void
fb_remote_finalize (GObject *object)
{
  FbRemote *self = FB_REMOTE (object);

  g_free (self->host);
  g_free (self->ssh_config);
  g_free (self->work);
  g_free (self->runner);
  G_OBJECT_CLASS (fb_remote_parent_class)->finalize (object);
}

static void
fb_remote_class_init (FbRemoteClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = fb_remote_finalize;
}

static void
fb_remote_init (FbRemote *self)
{
}

FbRemote *
fb_remote_new (const char *host, GError **error)
{
  FbRemote *self;
  const char *config = g_getenv ("FUSEBENCH_SSH_CONFIG");

  g_return_val_if_fail (host != NULL, NULL);
  /* ssh would take "-oProxyCommand=..." as an option: a host is never one. */
  if (host[0] == '\0' || host[0] == '-' || strpbrk (host, " \t\n\r'\"\\") != NULL)
    {
      g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_HOST,
                   "--remote '%s': not an ssh destination (user@host or a Host of ~/.ssh/config)",
                   host);
      return NULL;
    }
  self = g_object_new (FB_TYPE_REMOTE, NULL);
  self->host = g_strdup (host);
  self->ssh_config = config && *config ? g_strdup (config) : NULL;
  return self;
}

const char *
fb_remote_get_host (FbRemote *self)
{
  g_return_val_if_fail (FB_IS_REMOTE (self), NULL);
  return self->host;
}

static gboolean
has (const char *text, const char *needle)
{
  return text != NULL && strstr (text, needle) != NULL;
}

/* The last non-empty line of text, for a message that has nothing better to quote. */
static char *
last_line (const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text ? text : "", "\n", -1);
  for (int i = (int) g_strv_length (lines) - 1; i >= 0; i--)
    if (*g_strstrip (lines[i]) != '\0')
      return g_strdup (lines[i]);
  return g_strdup ("no message");
}

/* ssh exits with 255 for its own failures; its stderr says which. */
static void
set_ssh_error (FbRemote *self, const char *err, GError **error)
{
  g_autofree char *said = last_line (err);
  const char *host = self->host;

  if (has (err, "Host key verification failed") || has (err, "IDENTIFICATION HAS CHANGED") ||
      has (err, "host key is known"))
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_HOST_KEY,
                 "%s: the host's key is not known here or has changed; check it and accept it "
                 "once with 'ssh %s'", host, host);
  else if (has (err, "Permission denied (") || has (err, "Too many authentication failures"))
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_AUTH,
                 "%s: the host refused our keys (%s); fusebench uses your ssh keys and agent "
                 "and never asks for a password", host, said);
  else if (has (err, "Could not resolve hostname"))
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_UNREACHABLE,
                 "%s: unknown host name", host);
  else if (has (err, "Connection refused"))
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_UNREACHABLE,
                 "%s: connection refused (no ssh server on that port)", host);
  else if (has (err, "No route to host") || has (err, "Network is unreachable"))
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_UNREACHABLE,
                 "%s: unreachable (%s)", host, said);
  else if (has (err, "timed out") || has (err, "not responding"))
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_TIMEOUT,
                 "%s: no answer within %d s (%s)", host, CONNECT_TIMEOUT_S, said);
  else if (has (err, "closed by") || has (err, "Connection reset") || has (err, "Broken pipe") ||
           has (err, "Connection closed") || has (err, "connection closed"))
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_DROPPED,
                 "%s: the connection was closed (%s)", host, said);
  else
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_FAILED, "%s: ssh failed: %s", host, said);
}

void
fb_remote_set_script_error (FbRemote *self, const char *what, int status, const char *err_text,
                            GError **error)
{
  g_autofree char *said = last_line (err_text);

  g_return_if_fail (FB_IS_REMOTE (self));
  if (has (err_text, "No space left on device") || has (err_text, "Disk quota exceeded"))
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_DISK_FULL,
                 "%s: %s: no space left there (%s)", self->host, what, said);
  else if (has (err_text, "Read-only file system"))
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_READ_ONLY,
                 "%s: %s: the cache there is on a read-only file system (%s)", self->host, what,
                 said);
  else if (has (err_text, "Permission denied") || has (err_text, "Operation not permitted"))
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_READ_ONLY,
                 "%s: %s: the cache there is not writable (%s)", self->host, what, said);
  else if (status == 127)
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_FAILED,
                 "%s: %s: a tool is missing there (needs sh, tar, sha256sum, mktemp): %s",
                 self->host, what, said);
  else
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_FAILED, "%s: %s: failed there (exit %d: %s)",
                 self->host, what, status, said);
}

/* What one exec waits for: stderr read to its end, stdout collected, ssh reaped. */
typedef struct {
  FbRemote          *self;
  GSubprocess       *process;
  GDataInputStream  *err_in;
  GOutputStream     *in;          /* held open until the end, or NULL */
  GOutputStream     *out;         /* a GMemoryOutputStream, or NULL */
  GString           *err;
  FbRemoteLineFunc   on_line;
  gpointer           data;
  int                pending;
  gboolean           cancelled;
  GSource           *grace;
} Exec;

static void
read_err_line (Exec *x);

static void
on_err_line (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Exec *x = user_data;
  gsize length;
  g_autofree char *line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (source),
                                                                     result, &length, NULL);
  if (line == NULL)
    {
      x->pending--;
      return;
    }
  g_string_append_printf (x->err, "%s\n", line);
  if (x->on_line)
    x->on_line (line, x->data);
  read_err_line (x);
}

static void
read_err_line (Exec *x)
{
  g_data_input_stream_read_line_async (x->err_in, G_PRIORITY_DEFAULT, NULL, on_err_line, x);
}

static void
on_out_spliced (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Exec *x = user_data;
  g_output_stream_splice_finish (G_OUTPUT_STREAM (source), result, NULL);
  x->pending--;
}

static void
on_waited (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Exec *x = user_data;
  g_subprocess_wait_finish (G_SUBPROCESS (source), result, NULL);
  x->pending--;
}

static gboolean
on_grace_over (gpointer user_data)
{
  Exec *x = user_data;
  /* ssh closing the connection ends the remote script the same way a closed stdin does. */
  g_subprocess_send_signal (x->process, SIGTERM);
  return G_SOURCE_REMOVE;
}

/* Closing ssh's stdin is the polite stop: the remote script ends its work and cleans up. */
static gboolean
on_cancelled (GCancellable *cancellable, gpointer user_data)
{
  Exec *x = user_data;
  if (!x->cancelled)
    {
      x->cancelled = TRUE;
      if (x->in)
        g_output_stream_close (x->in, NULL, NULL);
      x->grace = g_timeout_source_new (CANCEL_GRACE_MS);
      g_source_set_callback (x->grace, on_grace_over, x, NULL);
      g_source_attach (x->grace, g_main_context_get_thread_default ());
    }
  return G_SOURCE_REMOVE;
}

static GPtrArray *
ssh_argv (FbRemote *self, const char *script, const char * const *args)
{
  GPtrArray *argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) command = g_string_new ("sh -c ");
  g_autofree char *quoted = g_shell_quote (script);

  g_ptr_array_add (argv, g_strdup ("ssh"));
  if (self->ssh_config)
    {
      g_ptr_array_add (argv, g_strdup ("-F"));
      g_ptr_array_add (argv, g_strdup (self->ssh_config));
    }
  g_ptr_array_add (argv, g_strdup ("-T"));
  g_ptr_array_add (argv, g_strdup ("-o"));
  g_ptr_array_add (argv, g_strdup ("BatchMode=yes"));
  g_ptr_array_add (argv, g_strdup ("-o"));
  g_ptr_array_add (argv, g_strdup_printf ("ConnectTimeout=%d", CONNECT_TIMEOUT_S));
  /* A host that vanished (cable, suspend) is noticed within a minute, not at TCP's leisure. */
  g_ptr_array_add (argv, g_strdup ("-o"));
  g_ptr_array_add (argv, g_strdup ("ServerAliveInterval=15"));
  g_ptr_array_add (argv, g_strdup ("-o"));
  g_ptr_array_add (argv, g_strdup ("ServerAliveCountMax=4"));
  g_ptr_array_add (argv, g_strdup ("--"));
  g_ptr_array_add (argv, g_strdup (self->host));
  /* ssh hands the remote login shell one string: every word quoted for it. */
  g_string_append (command, quoted);
  g_string_append (command, " sh");
  for (guint i = 0; args && args[i]; i++)
    {
      g_autofree char *q = g_shell_quote (args[i]);
      g_string_append_printf (command, " %s", q);
    }
  g_ptr_array_add (argv, g_strdup (command->str));
  g_ptr_array_add (argv, NULL);
  return argv;
}

gboolean
fb_remote_exec (FbRemote *self, const char *script, const char * const *args, int stdin_fd,
                FbRemoteLineFunc on_line, gpointer data, GBytes **out, int *status,
                char **err_text, GCancellable *cancellable, GError **error)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GPtrArray) argv = NULL;
  g_autoptr(GError) local = NULL;
  g_autoptr(GSource) cancel_source = NULL;
  GSubprocessFlags flags = G_SUBPROCESS_FLAGS_STDERR_PIPE;
  Exec x = { .self = self, .on_line = on_line, .data = data };
  int exit_status;
  gboolean ok = TRUE;

  g_return_val_if_fail (FB_IS_REMOTE (self), FALSE);
  g_return_val_if_fail (script != NULL, FALSE);

  flags |= out ? G_SUBPROCESS_FLAGS_STDOUT_PIPE : G_SUBPROCESS_FLAGS_STDOUT_SILENCE;
  if (stdin_fd < 0)
    flags |= G_SUBPROCESS_FLAGS_STDIN_PIPE;
  launcher = g_subprocess_launcher_new (flags);
  if (stdin_fd >= 0)
    g_subprocess_launcher_take_stdin_fd (launcher, stdin_fd);
  argv = ssh_argv (self, script, args);
  x.process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &local);
  if (x.process == NULL)
    {
      if (g_error_matches (local, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT))
        g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_NO_SSH,
                     "%s: no ssh client here (install OpenSSH's ssh)", self->host);
      else
        g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_FAILED, "%s: cannot start ssh: %s",
                     self->host, local->message);
      return FALSE;
    }

  g_main_context_push_thread_default (context);
  x.err = g_string_new (NULL);
  x.in = stdin_fd < 0 ? g_object_ref (g_subprocess_get_stdin_pipe (x.process)) : NULL;
  x.err_in = g_data_input_stream_new (g_subprocess_get_stderr_pipe (x.process));
  g_data_input_stream_set_newline_type (x.err_in, G_DATA_STREAM_NEWLINE_TYPE_ANY);
  x.pending = 2;
  read_err_line (&x);
  g_subprocess_wait_async (x.process, NULL, on_waited, &x);
  if (out)
    {
      x.out = g_memory_output_stream_new_resizable ();
      x.pending++;
      g_output_stream_splice_async (x.out, g_subprocess_get_stdout_pipe (x.process),
                                    G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, G_PRIORITY_DEFAULT, NULL,
                                    on_out_spliced, &x);
    }
  if (cancellable)
    {
      cancel_source = g_cancellable_source_new (cancellable);
      g_source_set_callback (cancel_source, G_SOURCE_FUNC (on_cancelled), &x, NULL);
      g_source_attach (cancel_source, context);
    }
  while (x.pending > 0)
    g_main_context_iteration (context, TRUE);
  if (cancel_source)
    g_source_destroy (cancel_source);
  if (x.grace)
    {
      g_source_destroy (x.grace);
      g_source_unref (x.grace);
    }
  g_main_context_pop_thread_default (context);

  exit_status = g_subprocess_get_if_exited (x.process) ? g_subprocess_get_exit_status (x.process)
                                                       : 255;
  if (x.cancelled)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "%s: cancelled", self->host);
      ok = FALSE;
    }
  else if (exit_status == 255)
    {
      set_ssh_error (self, x.err->str, error);
      ok = FALSE;
    }
  if (ok && out)
    *out = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (x.out));
  if (status)
    *status = exit_status;
  if (err_text)
    *err_text = g_strdup (x.err->str);
  g_clear_object (&x.in);
  g_clear_object (&x.out);
  g_clear_object (&x.err_in);
  g_clear_object (&x.process);
  g_string_free (x.err, TRUE);
  return ok;
}

char **
fb_remote_model_companions (const char *path)
{
  g_autoptr(GStrvBuilder) names = g_strv_builder_new ();
  g_autofree char *dir = NULL, *self = NULL;
  g_autoptr(GMappedFile) mapped = NULL;
  g_autoptr(GDir) listing = NULL;
  const char *name;

  g_return_val_if_fail (path != NULL, NULL);
  dir = g_path_get_dirname (path);
  self = g_path_get_basename (path);
  if (g_file_test (path, G_FILE_TEST_IS_DIR) ||
      (mapped = g_mapped_file_new (path, FALSE, NULL)) == NULL ||
      (listing = g_dir_open (dir, 0, NULL)) == NULL)
    return g_strv_builder_end (names);
  /* External data lives beside the model under the names its tensors give (their "location"),
   * stored verbatim in the file: a sibling whose name the model contains goes with it. */
  while ((name = g_dir_read_name (listing)) != NULL)
    {
      g_autofree char *sibling = g_build_filename (dir, name, NULL);
      if (g_str_equal (name, self) || !g_file_test (sibling, G_FILE_TEST_IS_REGULAR) ||
          memmem (g_mapped_file_get_contents (mapped), g_mapped_file_get_length (mapped), name,
                  strlen (name)) == NULL)
        continue;
      g_strv_builder_add (names, name);
    }
  return g_strv_builder_end (names);
}

void
fb_remote_remove_tree (const char *path)
{
  g_autoptr(GDir) dir = NULL;
  const char *name;

  g_return_if_fail (path != NULL);
  if (!g_file_test (path, G_FILE_TEST_IS_SYMLINK) && (dir = g_dir_open (path, 0, NULL)) != NULL)
    while ((name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *child = g_build_filename (path, name, NULL);
        fb_remote_remove_tree (child);
      }
  g_remove (path);
}
