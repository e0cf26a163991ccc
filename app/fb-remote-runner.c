/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The work on the host: the runner kept in the cache there, content-addressed by its SHA-256,
 * and one work folder per command.
 *
 *   ${XDG_CACHE_HOME:-~/.cache}/fusebench/runner/SHA256/fusebench          a runner binary
 *   ${XDG_CACHE_HOME:-~/.cache}/fusebench/runner/SHA256/fusebench.tar.xz   or a gpu-pack,
 *                                                   unpacked beside it in pack/, with the
 *                                                   SHA-256 of every file unpacked in pack.sha256
 *   ${XDG_CACHE_HOME:-~/.cache}/fusebench/jobs/job.XXXXXX                  one command's files
 *
 * A runner is used only when its file still has the SHA-256 it is filed under, a pack's
 * unpacked files still have theirs (taken when it was unpacked from the checked archive), and
 * the "ready" mark written after it was complete is there; anything else is removed and copied
 * again, to a temporary name first and renamed once its SHA-256 is checked there. The scripts are one line
 * of POSIX sh (a login shell of another family still passes them to sh intact) and read their
 * arguments as $1...; they never see a path from here unquoted. */
#include "fb-config.h"
#include "fb-remote-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <glib-unix.h>
#include <string.h>
#include <sys/utsname.h>

#define CACHE "C=\"${XDG_CACHE_HOME:-$HOME/.cache}/fusebench\"; D=\"$C/runner/$1\"; "

/* $1 SHA-256, $2 bin|pack. Prints "work DIR", "arch M", then "runner PATH" and
 * "version LINE" for a sound copy or "missing". Stale work folders (a day old: their command
 * was cut off with the connection) and uploads cut off mid-way are cleared on the way. */
static const char prepare_script[] =
  "umask 022; "
  "for t in sha256sum tar mktemp; do command -v $t >/dev/null || "
  "{ echo \"$t: not found\" >&2; exit 127; }; done; "
  CACHE
  "mkdir -p \"$D\" \"$C/jobs\" || exit 3; "
  "find \"$C/jobs\" -mindepth 1 -maxdepth 1 -mmin +1440 -exec rm -rf {} + 2>/dev/null; "
  "find \"$D\" -maxdepth 1 -name 'upload.*' -mmin +60 -exec rm -rf {} + 2>/dev/null; "
  "W=$(mktemp -d \"$C/jobs/job.XXXXXX\") || exit 3; "
  "echo \"work $W\"; echo \"arch $(uname -m)\"; "
  "if [ \"$2\" = pack ]; then P=\"$D/fusebench.tar.xz\"; R=\"$D/pack/fusebench/bin/fusebench\"; "
  "else P=\"$D/fusebench\"; R=\"$P\"; fi; "
  "if [ -f \"$D/ready\" ] && [ -f \"$P\" ] && "
  "printf '%s  %s\\n' \"$1\" \"$P\" | sha256sum -c --status 2>/dev/null && "
  "{ [ \"$2\" != pack ] || { [ -f \"$D/pack.sha256\" ] && "
  "(cd \"$D/pack\" && sha256sum -c --status \"$D/pack.sha256\") 2>/dev/null; }; }; "
  "then echo \"runner $R\"; echo \"version $(\"$R\" --version 2>&1 | head -n 1)\"; "
  "else rm -rf \"$D/ready\" \"$P\" \"$D/pack\" \"$D/pack.sha256\"; echo missing; fi";

/* $1 SHA-256, $2 bin|pack, $3 a tag for the temporary name; stdin: the runner. Exit 4: the
 * copy does not have its SHA-256. Prints "runner PATH" and "version LINE". */
static const char install_script[] =
  "umask 022; " CACHE "T=\"$D/upload.$3\"; "
  "cat > \"$T\" || { rm -f \"$T\"; exit 3; }; "
  "printf '%s  %s\\n' \"$1\" \"$T\" | sha256sum -c --status 2>/dev/null || "
  "{ rm -f \"$T\"; exit 4; }; "
  "rm -f \"$D/ready\"; "
  "if [ \"$2\" = pack ]; then rm -rf \"$D/pack\" \"$D/pack.sha256\" && mkdir \"$T.d\" && "
  "tar -xJf \"$T\" -C \"$T.d\" && (cd \"$T.d\" && find . -type f -exec sha256sum {} +) > \"$T.sums\" "
  "&& mv \"$T.d\" \"$D/pack\" && mv -f \"$T.sums\" \"$D/pack.sha256\" && "
  "mv -f \"$T\" \"$D/fusebench.tar.xz\" && R=\"$D/pack/fusebench/bin/fusebench\"; "
  "else chmod 755 \"$T\" && mv -f \"$T\" \"$D/fusebench\" && R=\"$D/fusebench\"; fi "
  "|| { rm -rf \"$T\" \"$T.d\" \"$T.sums\"; exit 3; }; "
  ": > \"$D/ready\" || exit 3; "
  "echo \"runner $R\"; echo \"version $(\"$R\" --version 2>&1 | head -n 1)\"";

/* $1 the work folder; stdin: a tar stream. */
static const char upload_script[] = "cd \"$1\" && tar -xf -";

/* $1 the work folder, $2 the runner, then its arguments. The runner runs in the background
 * while the shell waits for the end of its stdin (ours, through ssh): when the connection
 * drops, or when we close it to cancel, the runner is ended. Then out/ goes back on stdout as a
 * tar stream and the work folder is removed, whichever way it ended. A closed channel must not
 * kill the shell before that (SIGPIPE, SIGHUP ignored). */
static const char run_script[] =
  "trap '' PIPE HUP; W=\"$1\"; R=\"$2\"; shift 2; "
  "trap 'cd /; rm -rf \"$W\"' EXIT; "
  "exec 3<&0; cd \"$W\" && mkdir -p out || exit 3; "
  "\"$R\" \"$@\" > out/stdout 0</dev/null 3<&- & job=$!; "
  "(while read -r _ <&3; do :; done; kill -TERM $job 2>/dev/null) & w=$!; "
  "wait $job; rc=$?; kill $w 2>/dev/null; "
  "tar -cf - -C out .; exit $rc";

static const char discard_script[] = "rm -rf \"$1\"";

char *
fb_remote_installed_runner (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *bin = exe ? g_path_get_dirname (exe) : NULL;
  /* Installed: FB_RUNNER_PACK_FROM_BINDIR (meson's libdir/fusebench, from bindir). In the build
   * tree: beside the binary, where app/meson.build makes it. */
  const char *places[] = { FB_RUNNER_PACK_FROM_BINDIR, FB_RUNNER_PACK_NAME };

  if (bin == NULL || FB_RUNNER_PACK_NAME[0] == '\0')
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (places); i++)
    {
      g_autofree char *path = g_build_filename (bin, places[i], NULL);
      g_autofree char *clean = g_canonicalize_filename (path, NULL);
      if (g_file_test (clean, G_FILE_TEST_IS_REGULAR))
        return g_steal_pointer (&clean);
    }
  return NULL;
}

/* The runner to install: FUSEBENCH_REMOTE_RUNNER, else the pack installed with the application,
 * else this very binary (a build without the pack, for a host like this machine). *from_env:
 * whether the user chose it, and so its architecture. */
static char *
local_runner (gboolean *from_env, GError **error)
{
  const char *env = g_getenv ("FUSEBENCH_REMOTE_RUNNER");
  char *path;

  *from_env = env && *env;
  if (*from_env)
    return g_strdup (env);
  if ((path = fb_remote_installed_runner ()) != NULL)
    return path;
  return g_file_read_link ("/proc/self/exe", error);
}

static char *
file_sha256 (const char *path, GError **error)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileInputStream) in = g_file_read (file, NULL, error);
  guchar buffer[65536];
  gssize n;

  if (in == NULL)
    return NULL;
  while ((n = g_input_stream_read (G_INPUT_STREAM (in), buffer, sizeof buffer, NULL, error)) > 0)
    g_checksum_update (sum, buffer, n);
  return n < 0 ? NULL : g_strdup (g_checksum_get_string (sum));
}

/* The value of "KEY value" in a script's output, or NULL. */
static char *
field (GBytes *out, const char *key)
{
  gsize size;
  const char *data = g_bytes_get_data (out, &size);
  /* Empty bytes may have no data at all. */
  g_autofree char *text = g_strndup (data ? data : "", size);
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  gsize n = strlen (key);

  for (guint i = 0; lines[i]; i++)
    if (strncmp (lines[i], key, n) == 0 && lines[i][n] == ' ')
      return g_strdup (lines[i] + n + 1);
  return NULL;
}

/* What the runner said to --version: ours, a fusebench of another version, or a runner that
 * cannot start there. */
static gboolean
check_version (FbRemote *self, const char *runner, const char *version, GError **error)
{
  const char *want = "fusebench " FB_VERSION;

  if (version != NULL && g_str_equal (version, want))
    return TRUE;
  if (version != NULL && g_str_has_prefix (version, "fusebench "))
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_VERSION,
                 "%s: the runner there (%s) says '%s', this is %s; set FUSEBENCH_REMOTE_RUNNER "
                 "to a runner of this version", self->host, runner, version, want);
  else
    g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_RUNNER,
                 "%s: the runner (%s) cannot start there (%s); a host without this machine's "
                 "libraries needs the headless pack (FUSEBENCH_REMOTE_RUNNER=PACK.tar.xz, "
                 "made by scripts/gpu-pack)", self->host, runner,
                 version ? version : "no answer");
  return FALSE;
}

static gboolean
install (FbRemote *self, const char *path, const char *sha, const char *kind,
         FbRemoteLineFunc on_line, gpointer data, GCancellable *cancellable, GError **error)
{
  g_autofree char *tag = g_strdup_printf ("%08x", g_random_int ());
  const char *args[] = { sha, kind, tag, NULL };
  g_autoptr(GBytes) out = NULL;
  g_autofree char *err = NULL, *runner = NULL, *version = NULL;
  struct stat st;
  int fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  int status;

  if (fd < 0 || fstat (fd, &st) != 0)
    {
      int errsv = errno;
      if (fd >= 0)
        g_close (fd, NULL);
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errsv), "the runner %s: %s",
                   path, g_strerror (errsv));
      return FALSE;
    }
  if (on_line)
    {
      g_autofree char *line = g_strdup_printf ("copying the runner to %s (%.1f MB, once for this "
                                               "version)", self->host, st.st_size / 1e6);
      on_line (line, data);
    }
  if (!fb_remote_exec (self, install_script, args, fd, NULL, NULL, &out, &status, &err,
                       cancellable, error))
    return FALSE;
  if (status == 4)
    {
      g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_DAMAGED,
                   "%s: the runner arrived damaged (its SHA-256 does not match); it was removed "
                   "there, try again", self->host);
      return FALSE;
    }
  if (status != 0)
    {
      fb_remote_set_script_error (self, "copying the runner into the cache", status, err, error);
      return FALSE;
    }
  runner = field (out, "runner");
  version = field (out, "version");
  if (!check_version (self, runner ? runner : "?", version, error))
    return FALSE;
  self->runner = g_steal_pointer (&runner);
  return TRUE;
}

gboolean
fb_remote_prepare (FbRemote *self, FbRemoteLineFunc on_line, gpointer data,
                   GCancellable *cancellable, GError **error)
{
  g_autofree char *path = NULL, *sha = NULL, *err = NULL, *arch = NULL;
  g_autofree char *runner = NULL, *version = NULL;
  g_autoptr(GBytes) out = NULL;
  const char *kind;
  struct utsname here;
  gboolean from_env;
  int status;

  g_return_val_if_fail (FB_IS_REMOTE (self), FALSE);
  g_return_val_if_fail (self->work == NULL, FALSE);

  if ((path = local_runner (&from_env, error)) == NULL ||
      (sha = file_sha256 (path, error)) == NULL)
    return FALSE;
  kind = g_str_has_suffix (path, ".tar.xz") ? "pack" : "bin";
  if (!fb_remote_exec (self, prepare_script, (const char *[]) { sha, kind, NULL }, -1, NULL, NULL,
                       &out, &status, &err, cancellable, error))
    return FALSE;
  self->work = field (out, "work");
  if (status != 0 || self->work == NULL)
    {
      fb_remote_set_script_error (self, "making a work folder in the cache", status, err, error);
      fb_remote_discard (self);
      return FALSE;
    }
  /* The runner installed here is built for this machine's architecture; a pack the user chose
   * may be for another. */
  arch = field (out, "arch");
  if ((!from_env || g_str_equal (kind, "bin")) && uname (&here) == 0 && arch &&
      !g_str_equal (arch, here.machine))
    {
      g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_RUNNER,
                   "%s: the host is %s, the runner %s is built for %s; set "
                   "FUSEBENCH_REMOTE_RUNNER to a runner built for %s", self->host, arch, path,
                   here.machine, arch);
      fb_remote_discard (self);
      return FALSE;
    }
  runner = field (out, "runner");
  version = field (out, "version");
  if (runner != NULL)
    {
      if (!check_version (self, runner, version, error))
        {
          fb_remote_discard (self);
          return FALSE;
        }
      self->runner = g_steal_pointer (&runner);
      return TRUE;
    }
  if (!install (self, path, sha, kind, on_line, data, cancellable, error))
    {
      fb_remote_discard (self);
      return FALSE;
    }
  return TRUE;
}

gboolean
fb_remote_upload (FbRemote *self, const char *staging, GCancellable *cancellable, GError **error)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) tar = NULL;
  g_autofree char *err = NULL;
  int fds[2];
  int status;
  gboolean ok;

  g_return_val_if_fail (FB_IS_REMOTE (self), FALSE);
  g_return_val_if_fail (self->work != NULL, FALSE);

  if (!g_unix_open_pipe (fds, FD_CLOEXEC, error))
    return FALSE;
  /* -h: the staging folder holds links to the user's files, the host gets the files. */
  g_subprocess_launcher_take_stdout_fd (launcher, fds[1]);
  tar = g_subprocess_launcher_spawn (launcher, error, "tar", "-chf", "-", "-C", staging, ".", NULL);
  /* The write end must be closed here, or ssh never sees the end of the stream. */
  g_clear_object (&launcher);
  if (tar == NULL)
    {
      g_close (fds[0], NULL);
      return FALSE;
    }
  ok = fb_remote_exec (self, upload_script, (const char *[]) { self->work, NULL }, fds[0], NULL,
                       NULL, NULL, &status, &err, cancellable, error);
  if (!ok)
    {
      g_subprocess_force_exit (tar);
      g_subprocess_wait (tar, NULL, NULL);
      return FALSE;
    }
  if (status != 0)
    {
      g_subprocess_force_exit (tar);
      g_subprocess_wait (tar, NULL, NULL);
      fb_remote_set_script_error (self, "copying the model and inputs", status, err, error);
      return FALSE;
    }
  if (!g_subprocess_wait_check (tar, NULL, error))
    {
      g_prefix_error (error, "packing %s to send: ", staging);
      return FALSE;
    }
  return TRUE;
}

static gboolean
unpack (GBytes *stream, const char *dir, GError **error)
{
  g_autoptr(GSubprocess) tar =
    g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, error,
                      "tar", "-xf", "-", "-C", dir, NULL);
  g_autoptr(GBytes) err = NULL;

  if (tar == NULL || !g_subprocess_communicate (tar, stream, NULL, NULL, &err, error))
    return FALSE;
  if (!g_subprocess_get_successful (tar))
    {
      g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_DROPPED,
                   "the results came back incomplete (%.*s)",
                   (int) strcspn (g_bytes_get_data (err, NULL) ? g_bytes_get_data (err, NULL) : "",
                                  "\n"),
                   g_bytes_get_size (err) ? (const char *) g_bytes_get_data (err, NULL) : "");
      return FALSE;
    }
  return TRUE;
}

gboolean
fb_remote_run (FbRemote *self, const char * const *argv, const char *fetched,
               FbRemoteLineFunc on_line, gpointer data, int *status, GCancellable *cancellable,
               GError **error)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GError) local = NULL;
  g_autofree char *err = NULL;

  g_return_val_if_fail (FB_IS_REMOTE (self), FALSE);
  g_return_val_if_fail (self->work != NULL && self->runner != NULL, FALSE);

  g_ptr_array_add (args, self->work);
  g_ptr_array_add (args, self->runner);
  for (guint i = 0; argv[i]; i++)
    g_ptr_array_add (args, (gpointer) argv[i]);
  g_ptr_array_add (args, NULL);
  if (!fb_remote_exec (self, run_script, (const char * const *) args->pdata, -1, on_line, data,
                       &out, status, &err, cancellable, &local))
    {
      if (g_error_matches (local, FB_REMOTE_ERROR, FB_REMOTE_ERROR_DROPPED))
        {
          /* ssh's own words, without the host named a second time. */
          const char *said = local->message;
          if (g_str_has_prefix (said, self->host) && said[strlen (self->host)] == ':')
            said += strlen (self->host) + 1;
          while (*said == ' ')
            said++;
          g_set_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_DROPPED,
                       "%s: the connection dropped during the run; the process there was ended "
                       "(%s)", self->host, said);
        }
      else
        g_propagate_error (error, g_steal_pointer (&local));
      fb_remote_discard (self);
      return FALSE;
    }
  /* The script removed the work folder itself. */
  g_clear_pointer (&self->work, g_free);
  if (*status == 3 && g_bytes_get_size (out) == 0)
    {
      fb_remote_set_script_error (self, "starting the run", *status, err, error);
      return FALSE;
    }
  if (!unpack (out, fetched, error))
    {
      g_prefix_error (error, "%s: ", self->host);
      return FALSE;
    }
  return TRUE;
}

void
fb_remote_discard (FbRemote *self)
{
  g_return_if_fail (FB_IS_REMOTE (self));
  if (self->work == NULL)
    return;
  fb_remote_exec (self, discard_script, (const char *[]) { self->work, NULL }, -1, NULL, NULL,
                  NULL, NULL, NULL, NULL, NULL);
  g_clear_pointer (&self->work, g_free);
}
