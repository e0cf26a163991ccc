/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Compiled kernels by content: a process-wide table, backed by files in the user's cache
 * folder so that the next run of the command line finds them too. A kernel's key hashes its
 * IR and the target, so an entry can never be stale; a damaged file is only a miss. */
#include "fb-codegen.h"

#include <glib/gstdio.h>
#include <string.h>

static GMutex      cache_lock;
static GHashTable *cache_table;

static gboolean
disk_enabled (void)
{
  return g_strcmp0 (g_getenv ("FUSEBENCH_KERNEL_CACHE"), "off") != 0;
}

static char *
disk_path (const char *key)
{
  g_autofree char *name = g_strconcat (key, ".o", NULL);
  return g_build_filename (g_get_user_cache_dir (), "fusebench", "kernels", name, NULL);
}

GBytes *
fb_kernel_cache_lookup (const char *key)
{
  g_return_val_if_fail (key != NULL, NULL);
  GBytes *obj = NULL;
  g_mutex_lock (&cache_lock);
  if (cache_table)
    obj = g_hash_table_lookup (cache_table, key);
  if (obj)
    g_bytes_ref (obj);
  g_mutex_unlock (&cache_lock);
  if (obj || !disk_enabled ())
    return obj;
  g_autofree char *path = disk_path (key);
  char *data = NULL;
  gsize len = 0;
  /* An ELF object starts with its magic; anything else is a broken file, not a kernel. */
  if (!g_file_get_contents (path, &data, &len, NULL) || len < 4 || memcmp (data, "\177ELF", 4))
    {
      g_free (data);
      return NULL;
    }
  obj = g_bytes_new_take (data, len);
  fb_kernel_cache_store (key, obj);
  return obj;
}

void
fb_kernel_cache_store (const char *key, GBytes *object)
{
  g_return_if_fail (key != NULL && object != NULL);
  g_mutex_lock (&cache_lock);
  if (cache_table == NULL)
    cache_table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                         (GDestroyNotify) g_bytes_unref);
  gboolean known = g_hash_table_contains (cache_table, key);
  if (!known)
    g_hash_table_insert (cache_table, g_strdup (key), g_bytes_ref (object));
  g_mutex_unlock (&cache_lock);
  if (known || !disk_enabled ())
    return;
  g_autofree char *path = disk_path (key);
  if (g_file_test (path, G_FILE_TEST_EXISTS))
    return;
  g_autofree char *dir = g_path_get_dirname (path);
  /* A cache that cannot be written is only slower: errors are ignored. */
  if (g_mkdir_with_parents (dir, 0700) == 0)
    g_file_set_contents (path, g_bytes_get_data (object, NULL), g_bytes_get_size (object), NULL);
}

void
fb_kernel_cache_clear_memory (void)
{
  g_mutex_lock (&cache_lock);
  g_clear_pointer (&cache_table, g_hash_table_unref);
  g_mutex_unlock (&cache_lock);
}
