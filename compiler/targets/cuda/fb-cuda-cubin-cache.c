/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-cuda-cubin-cache.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

void
fb_cubin_cache_init (FbCubinCache *cache, const char *device_tag)
{
  memset (cache, 0, sizeof *cache);
  cache->device_tag = g_strdup (device_tag);
  const char *where = g_getenv ("FUSEBENCH_CUBIN_CACHE");
  if (where && (g_ascii_strcasecmp (where, "off") == 0 || g_str_equal (where, "0")))
    return;
  if (where && *where)
    cache->dir = g_strdup (where);
  else
    cache->dir = g_build_filename (g_get_user_cache_dir (), "fusebench", "cubin", NULL);
}

void
fb_cubin_cache_clear (FbCubinCache *cache)
{
  g_clear_pointer (&cache->dir, g_free);
  g_clear_pointer (&cache->device_tag, g_free);
  g_clear_pointer (&cache->write_error, g_free);
}

char *
fb_cubin_cache_path (const FbCubinCache *cache, const char *ptx)
{
  if (cache->dir == NULL)
    return NULL;
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  const char *tag = cache->device_tag ? cache->device_tag : "";
  /* The tag's terminating zero keeps "ab" + "c" apart from "a" + "bc". */
  g_checksum_update (sum, (const guchar *) tag, strlen (tag) + 1);
  g_checksum_update (sum, (const guchar *) ptx, strlen (ptx));
  g_autofree char *name = g_strconcat (g_checksum_get_string (sum), ".cubin", NULL);
  return g_build_filename (cache->dir, name, NULL);
}

/* A file: MAGIC, the cubin's length (8 bytes, little-endian), its SHA-256 (32 bytes), the
 * cubin. */
#define MAGIC       "FBCUBIN1"
#define HEADER_SIZE (8 + 8 + 32)

static void
cubin_digest (const void *cubin, gsize size, guint8 digest[32])
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (sum, cubin, size);
  gsize len = 32;
  g_checksum_get_digest (sum, digest, &len);
}

GBytes *
fb_cubin_cache_lookup (FbCubinCache *cache, const char *ptx)
{
  g_autofree char *path = fb_cubin_cache_path (cache, ptx);
  g_autofree char *data = NULL;
  gsize size = 0;
  if (path == NULL || !g_file_get_contents (path, &data, &size, NULL))
    return NULL;
  guint64 length = 0;
  guint8 digest[32];
  if (size > HEADER_SIZE && memcmp (data, MAGIC, 8) == 0)
    {
      memcpy (&length, data + 8, 8);
      length = GUINT64_FROM_LE (length);
    }
  if (length == 0 || length != size - HEADER_SIZE)
    {
      cache->damaged++;
      return NULL;
    }
  cubin_digest (data + HEADER_SIZE, length, digest);
  if (memcmp (digest, data + 16, 32) != 0)
    {
      cache->damaged++;
      return NULL;
    }
  return g_bytes_new (data + HEADER_SIZE, length);
}

static void
note_write_failure (FbCubinCache *cache, const char *what, const char *why)
{
  cache->unwritable++;
  if (cache->write_error == NULL)
    cache->write_error = g_strdup_printf ("%s: %s", what, why);
}

void
fb_cubin_cache_store (FbCubinCache *cache, const char *ptx, const void *cubin, gsize size)
{
  g_autofree char *path = fb_cubin_cache_path (cache, ptx);
  if (path == NULL || cubin == NULL || size == 0)
    return;
  if (g_mkdir_with_parents (cache->dir, 0700) != 0)
    {
      note_write_failure (cache, cache->dir, g_strerror (errno));
      return;
    }
  g_autofree guint8 *file = g_malloc (HEADER_SIZE + size);
  guint64 length = GUINT64_TO_LE ((guint64) size);
  memcpy (file, MAGIC, 8);
  memcpy (file + 8, &length, 8);
  cubin_digest (cubin, size, file + 16);
  memcpy (file + HEADER_SIZE, cubin, size);
  g_autoptr(GError) error = NULL;
  /* g_file_set_contents writes a temporary file beside path and renames it into place. */
  if (!g_file_set_contents (path, (const char *) file, (gssize) (HEADER_SIZE + size), &error))
    note_write_failure (cache, path, error->message);
}

char *
fb_cubin_cache_describe (const FbCubinCache *cache)
{
  GString *s = g_string_new (NULL);
  if (cache->dir == NULL)
    g_string_append_printf (s, "cubin cache off: %u module%s compiled from PTX (%.0f ms)",
                            cache->compiled, cache->compiled == 1 ? "" : "s", cache->compile_ms);
  else
    g_string_append_printf (s, "cubin cache: %u hit%s, %u compiled from PTX (%.0f ms)",
                            cache->hits, cache->hits == 1 ? "" : "s", cache->compiled,
                            cache->compile_ms);
  if (cache->unbudgeted)
    g_string_append_printf (s, ", %u without the register budget (it spilled)",
                            cache->unbudgeted);
  if (cache->dir == NULL)
    return g_string_free (s, FALSE);
  if (cache->damaged)
    g_string_append_printf (s, ", %u damaged cached file%s compiled again", cache->damaged,
                            cache->damaged == 1 ? "" : "s");
  if (cache->refused)
    g_string_append_printf (s, ", %u cached file%s refused by the driver and replaced",
                            cache->refused, cache->refused == 1 ? "" : "s");
  if (cache->write_error)
    g_string_append_printf (s, ", %u not kept (%s)", cache->unwritable, cache->write_error);
  return g_string_free (s, FALSE);
}
