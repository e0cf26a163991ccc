/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-cuda-timing-cache.h"

#include <gio/gio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "fusebench-cuda-timing-cache 1"

static void
choice_free (gpointer data)
{
  FbCudaConvChoice *c = data;
  if (c == NULL)   /* taken out of the array that held it */
    return;
  g_free (c->choice);
  g_free (c);
}

GHashTable *
fb_cuda_conv_choices_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, choice_free);
}

const char *
fb_cuda_timing_cache_path (void)
{
  const char *path = g_getenv ("FUSEBENCH_CUDA_TIMING_CACHE");
  return path && *path ? path : NULL;
}

static gboolean
parse_int64 (const char *text, int64_t *out)
{
  char *end = NULL;
  if (text == NULL || *text == '\0')
    return FALSE;
  *out = g_ascii_strtoll (text, &end, 10);
  return end != NULL && *end == '\0';
}

/* One choice line: key, way, algorithm, math, engine, description. */
static FbCudaConvChoice *
parse_line (const char *line, char **key)
{
  g_auto(GStrv) f = g_strsplit (line, "\t", 6);
  int64_t way, algo, math, engine;
  if (g_strv_length (f) != 6 || *f[0] == '\0' || !parse_int64 (f[1], &way) ||
      !parse_int64 (f[2], &algo) || !parse_int64 (f[3], &math) || !parse_int64 (f[4], &engine) ||
      way < 0 || way > 16 || algo < -1 || algo > 64 || math < 0 || math > 16 || engine < -1)
    return NULL;
  FbCudaConvChoice *c = g_new0 (FbCudaConvChoice, 1);
  *c = (FbCudaConvChoice) { (int) way, (int) algo, (int) math, engine, g_strdup (f[5]), TRUE };
  *key = g_strdup (f[0]);
  return c;
}

gboolean
fb_cuda_timing_cache_read (const char *path, const char *device_tag, GHashTable *choices,
                           GError **error)
{
  g_return_val_if_fail (path != NULL && device_tag != NULL && choices != NULL, FALSE);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, error))
    return FALSE;
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *header = g_strdup_printf (MAGIC "\t%s", device_tag);
  if (lines[0] == NULL || !g_str_has_prefix (lines[0], MAGIC "\t"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s: line 1: not a timing cache of this version (it starts '%.40s')", path,
                   lines[0] ? lines[0] : "");
      return FALSE;
    }
  if (strcmp (lines[0], header) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s was timed on %s; this is %s", path, lines[0] + strlen (MAGIC "\t"),
                   device_tag);
      return FALSE;
    }
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func (choice_free);
  for (guint i = 1; lines[i] != NULL; i++)
    {
      char *key = NULL;
      FbCudaConvChoice *c;
      if (lines[i][0] == '\0')
        continue;
      if ((c = parse_line (lines[i], &key)) == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "%s: line %u: expected key, way, algorithm, math, engine and a "
                       "description separated by tabs", path, i + 1);
          return FALSE;
        }
      g_ptr_array_add (keys, key);
      g_ptr_array_add (found, c);
    }
  /* Only a whole file is taken: a damaged one leaves the table as it was. */
  for (guint i = 0; i < keys->len; i++)
    g_hash_table_replace (choices, g_steal_pointer (&keys->pdata[i]),
                          g_steal_pointer (&found->pdata[i]));
  return TRUE;
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* A description on one line, whatever it holds. */
static void
append_flat (GString *out, const char *text)
{
  for (const char *c = text ? text : ""; *c; c++)
    g_string_append_c (out, *c == '\t' || *c == '\n' || *c == '\r' ? ' ' : *c);
}

gboolean
fb_cuda_timing_cache_write (const char *path, const char *device_tag, GHashTable *choices,
                            GError **error)
{
  g_return_val_if_fail (path != NULL && device_tag != NULL && choices != NULL, FALSE);
  g_autoptr(GString) out = g_string_new (NULL);
  g_string_append_printf (out, MAGIC "\t");
  append_flat (out, device_tag);
  g_string_append_c (out, '\n');
  /* Sorted, so that the same choices make the same file. */
  g_autofree gpointer *keys = g_hash_table_get_keys_as_array (choices, NULL);
  guint n = g_hash_table_size (choices);
  qsort (keys, n, sizeof *keys, compare_strings);
  for (guint i = 0; i < n; i++)
    {
      const FbCudaConvChoice *c = g_hash_table_lookup (choices, keys[i]);
      append_flat (out, keys[i]);
      g_string_append_printf (out, "\t%d\t%d\t%d\t%" G_GINT64_FORMAT "\t", c->way, c->algo,
                              c->math, c->engine);
      append_flat (out, c->choice);
      g_string_append_c (out, '\n');
    }
  return g_file_set_contents (path, out->str, (gssize) out->len, error);
}

/* ---- the module's side ------------------------------------------------------------------- */

#include "fb-cuda-private.h"

#include <stdio.h>

/* The device and the cuDNN whose engines the choices name. */
static char *
libs_tag (const FbCudaLibs *libs)
{
  if (libs->device_tag == NULL || libs->dnn == NULL)
    return NULL;
  return g_strdup_printf ("%s, cuDNN %zu", libs->device_tag, libs->dnn->GetVersion ());
}

GHashTable *
_fb_cuda_timing_cache_load (FbCudaLibs *libs)
{
  GHashTable *choices = fb_cuda_conv_choices_new ();
  const char *path = fb_cuda_timing_cache_path ();
  g_autofree char *tag = libs_tag (libs);
  g_autoptr(GError) error = NULL;
  if (path == NULL || tag == NULL)
    return choices;
  if (!fb_cuda_timing_cache_read (path, tag, choices, &error) &&
      !g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    fprintf (stderr, "fusebench: timing cache not used, the convolutions are timed again: %s\n",
             error->message);
  return choices;
}

void
_fb_cuda_timing_cache_save (FbCudaLibs *libs)
{
  const char *path = fb_cuda_timing_cache_path ();
  g_autofree char *tag = libs_tag (libs);
  g_autoptr(GError) error = NULL;
  if (path == NULL || tag == NULL || libs->conv_choices == NULL || !libs->choices_timed)
    return;
  /* Another module may have added shapes since this one read the file: keep them too. */
  g_autoptr(GHashTable) merged = fb_cuda_conv_choices_new ();
  fb_cuda_timing_cache_read (path, tag, merged, NULL);
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init (&iter, libs->conv_choices);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const FbCudaConvChoice *c = value;
      FbCudaConvChoice *copy = g_new0 (FbCudaConvChoice, 1);
      *copy = *c;
      copy->choice = g_strdup (c->choice);
      g_hash_table_replace (merged, g_strdup (key), copy);
    }
  if (!fb_cuda_timing_cache_write (path, tag, merged, &error))
    fprintf (stderr, "fusebench: the timing cache was not written: %s\n", error->message);
  libs->choices_timed = FALSE;
}
