/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-cli-remote.h"
#include "fb-cli-load.h"
#include "fb-remote.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct _FbCliRemote {
  GPtrArray  *argv;      /* char*: the runner's arguments */
  GHashTable *sends;     /* char* name under in/ -> char* absolute local path */
  GPtrArray  *fetches;   /* char*: name under out/, local path, name, local path, ... */
  GPtrArray  *dirs;      /* the same for folders */
  GPtrArray  *strings;   /* what the borrowed answers point into */
  GPtrArray  *names;     /* char*: a sent path there, the path as the user gave it, ... */
  const char *host;      /* while executing */
  gboolean    status_line; /* a progress line is showing on the terminal */
};

FbCliRemote *
fb_cli_remote_new (const char *command)
{
  FbCliRemote *job = g_new0 (FbCliRemote, 1);

  job->argv = g_ptr_array_new_with_free_func (g_free);
  job->sends = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  job->fetches = g_ptr_array_new_with_free_func (g_free);
  job->dirs = g_ptr_array_new_with_free_func (g_free);
  job->strings = g_ptr_array_new_with_free_func (g_free);
  job->names = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (job->argv, g_strdup (command));
  return job;
}

void
fb_cli_remote_free (FbCliRemote *job)
{
  if (job == NULL)
    return;
  g_ptr_array_unref (job->argv);
  g_hash_table_unref (job->sends);
  g_ptr_array_unref (job->fetches);
  g_ptr_array_unref (job->dirs);
  g_ptr_array_unref (job->strings);
  g_ptr_array_unref (job->names);
  g_free (job);
}

void
fb_cli_remote_args (FbCliRemote *job, const char *first, ...)
{
  va_list ap;

  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (job->argv, g_strdup (a));
  va_end (ap);
}

static const char *
keep (FbCliRemote *job, char *string)
{
  g_ptr_array_add (job->strings, string);
  return string;
}

const char *
fb_cli_remote_send (FbCliRemote *job, const char *path)
{
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *name = g_strdup (base);

  /* The host sees the file under its own name, so its messages name it as the user does;
   * a second file of the same name gets a folder of its own. */
  for (guint k = 1; g_hash_table_contains (job->sends, name); k++)
    {
      g_free (name);
      name = g_strdup_printf ("%u/%s", k, base);
    }
  g_hash_table_insert (job->sends, g_strdup (name), g_canonicalize_filename (path, NULL));
  g_ptr_array_add (job->names, g_build_filename ("in", name, NULL));
  g_ptr_array_add (job->names, g_strdup (path));
  return keep (job, g_build_filename ("in", name, NULL));
}

const char *
fb_cli_remote_send_model (FbCliRemote *job, const char *path)
{
  const char *there = fb_cli_remote_send (job, path);
  g_autofree char *dir = g_path_get_dirname (path);
  g_auto(GStrv) companions = fb_remote_model_companions (path);

  for (guint i = 0; companions[i] != NULL; i++)
    {
      g_autofree char *sibling = g_build_filename (dir, companions[i], NULL);
      g_hash_table_insert (job->sends, g_strdup (companions[i]),
                           g_canonicalize_filename (sibling, NULL));
    }
  return there;
}

const char *
fb_cli_remote_fetch (FbCliRemote *job, const char *local)
{
  g_autofree char *name = g_strdup_printf ("file-%u", job->fetches->len / 2);

  g_ptr_array_add (job->fetches, g_strdup (name));
  g_ptr_array_add (job->fetches, g_strdup (local));
  return keep (job, g_build_filename ("out", name, NULL));
}

const char *
fb_cli_remote_fetch_dir (FbCliRemote *job, const char *dir)
{
  g_autofree char *name = g_strdup_printf ("dir-%u", job->dirs->len / 2);

  g_ptr_array_add (job->dirs, g_strdup (name));
  g_ptr_array_add (job->dirs, g_strdup (dir));
  return keep (job, g_build_filename ("out", name, NULL));
}

gboolean
fb_cli_remote_check_sources (const char *model, const char *input_dir, const char *option,
                             char **specs, GError **error)
{
  if (!g_file_test (model, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s: no such file or folder", model);
      return FALSE;
    }
  if (input_dir != NULL && !g_file_test (input_dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "--input-dir %s: no such folder",
                   input_dir);
      return FALSE;
    }
  for (guint i = 0; specs && specs[i]; i++)
    {
      g_autofree char *name = NULL, *file = NULL;
      if (!fb_cli_split_spec (option, specs[i], &name, &file, error))
        return FALSE;
      if (!g_file_test (file, G_FILE_TEST_IS_REGULAR))
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s %s: no such file", option,
                       specs[i]);
          return FALSE;
        }
    }
  return TRUE;
}

void
fb_cli_remote_inputs (FbCliRemote *job, const char *input_dir, const char *option, char **specs)
{
  if (input_dir != NULL)
    fb_cli_remote_args (job, "--input-dir", fb_cli_remote_send (job, input_dir), NULL);
  for (guint i = 0; specs && specs[i]; i++)
    {
      g_autofree char *name = NULL, *file = NULL, *spec = NULL;
      if (!fb_cli_split_spec (option, specs[i], &name, &file, NULL))
        continue;
      spec = g_strdup_printf ("%s=%s", name, fb_cli_remote_send (job, file));
      fb_cli_remote_args (job, option, spec, NULL);
    }
}

void
fb_cli_remote_pipeline (FbCliRemote *job, const FbCliPipelineArgs *args)
{
  for (guint i = 0; args->disable && args->disable[i]; i++)
    fb_cli_remote_args (job, "--disable", args->disable[i], NULL);
  for (guint i = 0; args->no_fuse && args->no_fuse[i]; i++)
    fb_cli_remote_args (job, "--no-fuse", args->no_fuse[i], NULL);
  if (args->layout)
    fb_cli_remote_args (job, "--layout", args->layout, NULL);
  for (guint i = 0; args->input_shape && args->input_shape[i]; i++)
    fb_cli_remote_args (job, "--input-shape", args->input_shape[i], NULL);
}

/* The staging folder: in/NAME links to the files to send. */
static char *
stage (FbCliRemote *job, GError **error)
{
  g_autofree char *top = g_dir_make_tmp ("fusebench-send-XXXXXX", error);
  GHashTableIter iter;
  gpointer name, local;

  if (top == NULL)
    return NULL;
  g_hash_table_iter_init (&iter, job->sends);
  while (g_hash_table_iter_next (&iter, &name, &local))
    {
      g_autofree char *link = g_build_filename (top, "in", name, NULL);
      g_autofree char *parent = g_path_get_dirname (link);
      if (g_mkdir_with_parents (parent, 0700) != 0 || symlink (local, link) != 0)
        {
          int errsv = errno;
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errsv), "%s: %s", link,
                       g_strerror (errsv));
          fb_remote_remove_tree (top);
          return NULL;
        }
    }
  return g_steal_pointer (&top);
}

/* Copies from to a temporary name beside to; the caller renames it. */
static char *
copy_beside (const char *from, const char *to, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (to);
  g_autofree char *base = g_path_get_basename (to);
  g_autofree char *tmp = g_strdup_printf ("%s/.%s.part-%08x", dir, base, g_random_int ());
  g_autoptr(GFile) src = g_file_new_for_path (from);
  g_autoptr(GFile) dst = g_file_new_for_path (tmp);

  if (!g_file_copy (src, dst, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, error))
    {
      g_prefix_error (error, "%s: ", to);
      return NULL;
    }
  return g_steal_pointer (&tmp);
}

/* Every fetched file goes beside its place under a temporary name first; only when all are
 * there are they renamed, so a failure leaves none half-written. */
static gboolean
place (FbCliRemote *job, const char *fetched, GError **error)
{
  g_autoptr(GPtrArray) pairs = g_ptr_array_new_with_free_func (g_free);
  gboolean ok = TRUE;

  for (guint i = 0; ok && i < job->fetches->len; i += 2)
    {
      g_autofree char *from = g_build_filename (fetched, g_ptr_array_index (job->fetches, i), NULL);
      const char *to = g_ptr_array_index (job->fetches, i + 1);
      char *tmp;
      if (!g_file_test (from, G_FILE_TEST_IS_REGULAR))
        continue;
      if ((tmp = copy_beside (from, to, error)) == NULL)
        ok = FALSE;
      else
        {
          g_ptr_array_add (pairs, tmp);
          g_ptr_array_add (pairs, g_strdup (to));
        }
    }
  for (guint i = 0; ok && i < job->dirs->len; i += 2)
    {
      g_autofree char *from = g_build_filename (fetched, g_ptr_array_index (job->dirs, i), NULL);
      const char *to = g_ptr_array_index (job->dirs, i + 1);
      g_autoptr(GDir) dir = g_dir_open (from, 0, NULL);
      const char *name;
      if (dir == NULL)
        continue;
      if (g_mkdir_with_parents (to, 0755) != 0)
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: cannot make the folder", to);
          ok = FALSE;
        }
      while (ok && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *file = g_build_filename (from, name, NULL);
          g_autofree char *dest = g_build_filename (to, name, NULL);
          char *tmp = copy_beside (file, dest, error);
          if (tmp == NULL)
            ok = FALSE;
          else
            {
              g_ptr_array_add (pairs, tmp);
              g_ptr_array_add (pairs, g_steal_pointer (&dest));
            }
        }
    }
  for (guint i = 0; ok && i < pairs->len; i += 2)
    if (g_rename (g_ptr_array_index (pairs, i), g_ptr_array_index (pairs, i + 1)) != 0)
      {
        int errsv = errno;
        g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errsv), "%s: %s",
                     (char *) g_ptr_array_index (pairs, i + 1), g_strerror (errsv));
        ok = FALSE;
      }
  if (!ok)
    for (guint i = 0; i < pairs->len; i += 2)
      g_unlink (g_ptr_array_index (pairs, i));
  return ok;
}

static void
clear_status_line (FbCliRemote *job)
{
  if (job->status_line)
    fprintf (stderr, "\r\033[K");
  job->status_line = FALSE;
}

/* The runner's stderr, line by line: progress as a status line on a terminal, the rest as is. */
static void
on_line (const char *line, gpointer data)
{
  FbCliRemote *job = data;
  double fraction;
  char *end;

  if (g_str_has_prefix (line, "progress ") && isatty (STDERR_FILENO))
    {
      fraction = g_ascii_strtod (line + 9, &end);
      fprintf (stderr, "\r\033[K%s: %3.0f %%%s", job->host, 100 * fraction, end);
      job->status_line = TRUE;
    }
  else if (g_str_has_prefix (line, "fusebench: "))
    {
      /* The runner's "this machine" is the host: say which. */
      clear_status_line (job);
      fprintf (stderr, "fusebench: %s: %s\n", job->host, line + strlen ("fusebench: "));
    }
  else
    {
      clear_status_line (job);
      fprintf (stderr, "%s\n", line);
    }
  fflush (stderr);
}

/* The host's own messages, e.g. the one-time copy of the runner. */
static void
on_note (const char *line, gpointer data)
{
  fprintf (stderr, "fusebench: %s\n", line);
}

static int
fail (FbCliRemote *job, const GError *error)
{
  clear_status_line (job);
  fprintf (stderr, "fusebench: %s\n", error->message);
  return g_error_matches (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_HOST) ? FB_EXIT_INPUT
                                                                         : FB_EXIT_WORK;
}

static int
by_length_desc (gconstpointer a, gconstpointer b)
{
  /* Elements are char*** : pointers to the first of a (there, here) pair. */
  size_t x = strlen (**(char ***) a), y = strlen (**(char ***) b);
  return (x < y) - (x > y);
}

/* The runner's stdout, with the paths there it names (a case folder, a model) turned back into
 * the paths given here, so that the output reads as it would locally. */
static void
print_file (FbCliRemote *job, const char *path)
{
  g_autofree char *text = NULL;
  gsize length;

  if (!g_file_get_contents (path, &text, &length, NULL))
    return;
  g_autoptr(GPtrArray) order = g_ptr_array_new ();
  for (guint i = 0; i < job->names->len; i += 2)
    g_ptr_array_add (order, &g_ptr_array_index (job->names, i));
  /* "in/a.onnx" is a prefix of "in/a.onnx.data": the longest first. */
  g_ptr_array_sort (order, by_length_desc);
  for (guint i = 0; i < order->len; i++)
    {
      char **pair = g_ptr_array_index (order, i);
      g_autoptr(GString) s = g_string_new_len (text, length);
      g_string_replace (s, pair[0], pair[1], 0);
      g_free (text);
      length = s->len;
      text = g_string_free (g_steal_pointer (&s), FALSE);
    }
  fwrite (text, 1, length, stdout);
}

int
fb_cli_remote_execute (FbCliRemote *job, const char *host)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbRemote) remote = fb_remote_new (host, &error);
  g_autofree char *staging = NULL, *fetched = NULL, *out = NULL;
  int status = FB_EXIT_WORK;

  job->host = host;
  if (remote == NULL)
    return fail (job, error);
  if (!fb_remote_prepare (remote, on_note, NULL, NULL, &error))
    return fail (job, error);
  if ((staging = stage (job, &error)) == NULL)
    {
      fb_remote_discard (remote);
      return fail (job, error);
    }
  if (!fb_remote_upload (remote, staging, NULL, &error))
    {
      fb_remote_remove_tree (staging);
      fb_remote_discard (remote);
      return fail (job, error);
    }
  fb_remote_remove_tree (staging);
  if ((fetched = g_dir_make_tmp ("fusebench-fetch-XXXXXX", &error)) == NULL)
    {
      fb_remote_discard (remote);
      return fail (job, error);
    }
  g_ptr_array_add (job->argv, NULL);
  if (!fb_remote_run (remote, (const char * const *) job->argv->pdata, fetched, on_line, job,
                      &status, NULL, &error))
    {
      fb_remote_remove_tree (fetched);
      return fail (job, error);
    }
  clear_status_line (job);
  out = g_build_filename (fetched, "stdout", NULL);
  print_file (job, out);
  if (status == FB_EXIT_OK && !place (job, fetched, &error))
    status = fail (job, error);
  else if (status != FB_EXIT_OK && status != FB_EXIT_WORK && status != FB_EXIT_INPUT)
    {
      fprintf (stderr, "fusebench: %s: the runner ended with status %d there\n", host, status);
      status = FB_EXIT_WORK;
    }
  fb_remote_remove_tree (fetched);
  return status;
}
