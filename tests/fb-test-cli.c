/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-test-cli.h"

#include <glib/gstdio.h>
#include <stdarg.h>

TestRun *
test_run_fusebench (const char *first_arg, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  const char *binary = g_getenv ("FUSEBENCH");
  g_autoptr(GError) error = NULL;
  TestRun *run = g_new0 (TestRun, 1);
  int wait_status = 0;
  va_list ap;

  g_assert_nonnull (binary);
  g_ptr_array_add (argv, (gpointer) binary);
  va_start (ap, first_arg);
  for (const char *a = first_arg; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                &run->out, &run->err, &wait_status, &error);
  g_assert_no_error (error);
  /* A crash is never an acceptable answer: it shows up as a signal, not an exit status. */
  g_assert_true (WIFEXITED (wait_status));
  run->status = WEXITSTATUS (wait_status);
  return run;
}

void
test_run_free (TestRun *run)
{
  if (run == NULL)
    return;
  g_free (run->out);
  g_free (run->err);
  g_free (run);
}

char *
test_source_path (const char *first, ...)
{
  g_autoptr(GPtrArray) parts = g_ptr_array_new ();
  va_list ap;

  g_ptr_array_add (parts, (gpointer) g_test_get_dir (G_TEST_DIST));
  g_ptr_array_add (parts, (gpointer) "..");
  va_start (ap, first);
  for (const char *p = first; p != NULL; p = va_arg (ap, const char *))
    g_ptr_array_add (parts, (gpointer) p);
  va_end (ap);
  g_ptr_array_add (parts, NULL);
  return g_build_filenamev ((char **) parts->pdata);
}

void
test_remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        test_remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}
