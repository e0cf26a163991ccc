/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cuda target's cubin cache without a GPU: keys per device and PTX, atomic files read
 * back whole, damaged files caught before the driver sees them, a folder that cannot be
 * written counted and named, the cache turned off. */
#include "fb-cuda-cubin-cache.h"

#include <glib/gstdio.h>
#include <string.h>

static char *
temp_dir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("fb-test-cubin-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static void
remove_tree (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        remove_tree (path);
      else
        g_unlink (path);
    }
  g_rmdir (dir);
}

static void
test_keys (void)
{
  g_autofree char *dir = temp_dir ();
  g_setenv ("FUSEBENCH_CUBIN_CACHE", dir, TRUE);
  FbCubinCache h200, other;
  fb_cubin_cache_init (&h200, "NVIDIA H200, sm_90, 132 SMs, CUDA driver 13.0");
  fb_cubin_cache_init (&other, "NVIDIA H200, sm_90, 132 SMs, CUDA driver 13.1");
  g_autofree char *a = fb_cubin_cache_path (&h200, ".version 8.0\n.entry k () { ret; }");
  g_autofree char *a2 = fb_cubin_cache_path (&h200, ".version 8.0\n.entry k () { ret; }");
  g_autofree char *b = fb_cubin_cache_path (&h200, ".version 8.0\n.entry j () { ret; }");
  g_autofree char *c = fb_cubin_cache_path (&other, ".version 8.0\n.entry k () { ret; }");
  g_assert_cmpstr (a, ==, a2);
  g_assert_cmpstr (a, !=, b);
  g_assert_cmpstr (a, !=, c);   /* another driver compiles afresh */
  g_assert_true (g_str_has_prefix (a, dir));
  g_assert_true (g_str_has_suffix (a, ".cubin"));
  fb_cubin_cache_clear (&h200);
  fb_cubin_cache_clear (&other);
  remove_tree (dir);
  g_unsetenv ("FUSEBENCH_CUBIN_CACHE");
}

static void
test_store_and_lookup (void)
{
  g_autofree char *dir = temp_dir ();
  g_autofree char *sub = g_build_filename (dir, "made", "on", "demand", NULL);
  g_setenv ("FUSEBENCH_CUBIN_CACHE", sub, TRUE);
  FbCubinCache cache;
  fb_cubin_cache_init (&cache, "sm_90");
  const char *ptx = ".entry k () { ret; }";
  g_assert_null (fb_cubin_cache_lookup (&cache, ptx));
  const guint8 cubin[] = { 0x7f, 'E', 'L', 'F', 0, 1, 2, 3, 0, 0xff };
  fb_cubin_cache_store (&cache, ptx, cubin, sizeof cubin);
  g_assert_cmpuint (cache.unwritable, ==, 0);
  g_autoptr(GBytes) back = fb_cubin_cache_lookup (&cache, ptx);
  g_assert_nonnull (back);
  gsize size;
  const void *data = g_bytes_get_data (back, &size);
  g_assert_cmpmem (data, size, cubin, sizeof cubin);
  /* Damaged files never reach the driver: cut short, one byte changed, empty, foreign. */
  g_autofree char *path = fb_cubin_cache_path (&cache, ptx);
  g_autofree char *whole = NULL;
  gsize whole_size = 0;
  g_assert_true (g_file_get_contents (path, &whole, &whole_size, NULL));
  g_assert_true (g_file_set_contents (path, whole, (gssize) whole_size - 1, NULL));
  g_assert_null (fb_cubin_cache_lookup (&cache, ptx));
  whole[whole_size - 3] ^= 0x10;
  g_assert_true (g_file_set_contents (path, whole, (gssize) whole_size, NULL));
  g_assert_null (fb_cubin_cache_lookup (&cache, ptx));
  g_assert_true (g_file_set_contents (path, "", 0, NULL));
  g_assert_null (fb_cubin_cache_lookup (&cache, ptx));
  g_assert_true (g_file_set_contents (path, (const char *) cubin, sizeof cubin, NULL));
  g_assert_null (fb_cubin_cache_lookup (&cache, ptx));
  g_assert_cmpuint (cache.damaged, ==, 4);
  /* Stored again, it reads back. */
  fb_cubin_cache_store (&cache, ptx, cubin, sizeof cubin);
  g_autoptr(GBytes) again = fb_cubin_cache_lookup (&cache, ptx);
  g_assert_true (g_bytes_equal (again, back));
  cache.hits = 2;
  cache.compiled = 1;
  cache.refused = 1;
  g_autofree char *text = fb_cubin_cache_describe (&cache);
  g_assert_nonnull (strstr (text, "2 hits, 1 compiled"));
  g_assert_nonnull (strstr (text, "4 damaged cached files compiled again"));
  g_assert_nonnull (strstr (text, "1 cached file refused by the driver"));
  fb_cubin_cache_clear (&cache);
  remove_tree (dir);
  g_unsetenv ("FUSEBENCH_CUBIN_CACHE");
}

static void
test_unwritable (void)
{
  g_autofree char *dir = temp_dir ();
  g_autofree char *file = g_build_filename (dir, "a-file", NULL);
  g_assert_true (g_file_set_contents (file, "x", 1, NULL));
  g_autofree char *under = g_build_filename (file, "cubin", NULL);
  g_setenv ("FUSEBENCH_CUBIN_CACHE", under, TRUE);
  FbCubinCache cache;
  fb_cubin_cache_init (&cache, "sm_90");
  fb_cubin_cache_store (&cache, ".entry k () { ret; }", "\x7f" "ELF", 4);
  fb_cubin_cache_store (&cache, ".entry j () { ret; }", "\x7f" "ELF", 4);
  g_assert_cmpuint (cache.unwritable, ==, 2);
  g_autofree char *text = fb_cubin_cache_describe (&cache);
  g_assert_nonnull (strstr (text, "2 not kept"));
  g_assert_nonnull (strstr (text, under));
  fb_cubin_cache_clear (&cache);
  remove_tree (dir);
  g_unsetenv ("FUSEBENCH_CUBIN_CACHE");
}

static void
test_off (void)
{
  g_setenv ("FUSEBENCH_CUBIN_CACHE", "off", TRUE);
  FbCubinCache cache;
  fb_cubin_cache_init (&cache, "sm_90");
  g_assert_null (fb_cubin_cache_path (&cache, ".entry k () { ret; }"));
  g_assert_null (fb_cubin_cache_lookup (&cache, ".entry k () { ret; }"));
  fb_cubin_cache_store (&cache, ".entry k () { ret; }", "\x7f" "ELF", 4);
  cache.compiled = 3;
  g_autofree char *text = fb_cubin_cache_describe (&cache);
  g_assert_nonnull (strstr (text, "cubin cache off: 3 modules compiled"));
  fb_cubin_cache_clear (&cache);
  g_unsetenv ("FUSEBENCH_CUBIN_CACHE");
  /* Unset, the cache lives under the user's cache folder. */
  g_setenv ("XDG_CACHE_HOME", "/nonexistent-cache-home", TRUE);
  fb_cubin_cache_init (&cache, "sm_90");
  g_assert_nonnull (cache.dir);
  g_assert_true (g_str_has_suffix (cache.dir, "cubin"));
  fb_cubin_cache_clear (&cache);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cubin-cache/keys", test_keys);
  g_test_add_func ("/cubin-cache/store-and-lookup", test_store_and_lookup);
  g_test_add_func ("/cubin-cache/unwritable", test_unwritable);
  g_test_add_func ("/cubin-cache/off", test_off);
  return g_test_run ();
}
