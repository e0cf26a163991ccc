/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The layers of the sources (fb-layering.h): the tree as it is has no include or call that runs
 * back up the layers and compares no target's name outside the targets, and a copy of it with
 * one of each put in is caught, at the very lines. */
#include "fb-layering.h"
#include "fb-test-cli.h"

#include <glib/gstdio.h>
#include <string.h>

static char *
source_top (void)
{
  return g_path_get_dirname (g_test_get_dir (G_TEST_DIST));
}

static void
assert_clean (GPtrArray *violations)
{
  for (guint i = 0; i < violations->len; i++)
    g_test_message ("%s", (char *) violations->pdata[i]);
  g_assert_cmpuint (violations->len, ==, 0);
}

static void
test_rules (void)
{
  g_assert_true (fb_layering_allowed ("compiler/lower", "compiler/ir"));
  g_assert_true (fb_layering_allowed ("compiler/targets/cpu", "compiler/runtime"));
  g_assert_true (fb_layering_allowed ("app", "profiler"));
  g_assert_true (fb_layering_allowed ("compiler/driver", "compiler/runtime"));
  /* Up the layers. */
  g_assert_false (fb_layering_allowed ("compiler/lower", "compiler/runtime"));
  g_assert_false (fb_layering_allowed ("compiler/codegen", "compiler/driver"));
  g_assert_false (fb_layering_allowed ("profiler", "ui"));
  /* Sideways, and into a target from anywhere but itself. */
  g_assert_false (fb_layering_allowed ("compiler/import", "compiler/interp"));
  g_assert_false (fb_layering_allowed ("compiler/targets/cuda", "compiler/targets/cpu"));
  g_assert_false (fb_layering_allowed ("app", "compiler/targets/cuda"));
  g_assert_false (fb_layering_allowed ("profiler", "compiler/targets/cpu"));
  g_assert_true (fb_layering_allowed ("compiler/targets/cpu", "compiler/targets/cpu"));
}

static void
test_sources (void)
{
  g_autofree char *top = source_top ();
  g_autoptr(GPtrArray) violations = fb_layering_check (top);
  assert_clean (violations);
}

/* Copies the sources of dir under from into to (folders made as needed). */
static void
copy_sources (const char *from, const char *to, const char *dir)
{
  g_autofree char *src = g_build_filename (from, dir, NULL);
  g_autofree char *dst = g_build_filename (to, dir, NULL);
  g_autoptr(GDir) d = g_dir_open (src, 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  g_assert_cmpint (g_mkdir_with_parents (dst, 0755), ==, 0);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *rel = g_build_filename (dir, name, NULL);
      g_autofree char *path = g_build_filename (from, rel, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        copy_sources (from, to, rel);
      else if (g_str_has_suffix (name, ".c") || g_str_has_suffix (name, ".h") ||
               g_str_has_suffix (name, ".def"))
        {
          g_autofree char *text = NULL, *copy = g_build_filename (to, rel, NULL);
          g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
          g_assert_true (g_file_set_contents (copy, text, -1, NULL));
        }
    }
}

/* Appends text to the file rel of the tree at top. */
static void
append (const char *top, const char *rel, const char *text)
{
  g_autofree char *path = g_build_filename (top, rel, NULL);
  g_autofree char *old = NULL, *now = NULL;
  g_assert_true (g_file_get_contents (path, &old, NULL, NULL));
  now = g_strconcat (old, text, NULL);
  g_assert_true (g_file_set_contents (path, now, -1, NULL));
}

static gboolean
reported (GPtrArray *violations, const char *start, const char *what)
{
  for (guint i = 0; i < violations->len; i++)
    if (g_str_has_prefix (violations->pdata[i], start) && strstr (violations->pdata[i], what))
      return TRUE;
  return FALSE;
}

static void
test_broken_copy (void)
{
  g_autofree char *top = source_top ();
  g_autoptr(GError) error = NULL;
  g_autofree char *copy = g_dir_make_tmp ("fb-layering-XXXXXX", &error);
  g_assert_no_error (error);
  const char *const roots[] = { "compiler", "profiler", "ui", "app" };
  for (guint i = 0; i < G_N_ELEMENTS (roots); i++)
    copy_sources (top, copy, roots[i]);

  /* The copy is as clean as the tree ... */
  g_autoptr(GPtrArray) clean = fb_layering_check (copy);
  assert_clean (clean);
  /* ... until lowering asks oneDNN itself, the profiler compiles for the cpu target by its own
   * function, and a command branches on a target's name. */
  append (copy, "compiler/lower/fb-lower-residual.c", "\n#include \"fb-dnnl-conv.h\"\n");
  append (copy, "profiler/fb-profile-run.c",
          "\nvoid fb_layering_broken (void);\nvoid\nfb_layering_broken (void)\n{\n"
          "  fb_cpu_compile (NULL, 1, NULL);\n}\n");
  append (copy, "app/fb-cli-run.c",
          "\nstatic int broken (const char *t) { return g_str_equal (t, \"cuda\"); }\n");
  g_autoptr(GPtrArray) broken = fb_layering_check (copy);
  for (guint i = 0; i < broken->len; i++)
    g_test_message ("%s", (char *) broken->pdata[i]);
  g_assert_true (reported (broken, "compiler/lower/fb-lower-residual.c:",
                           "includes fb-dnnl-conv.h of compiler/targets/cpu"));
  g_assert_true (reported (broken, "profiler/fb-profile-run.c:",
                           "calls fb_cpu_compile of compiler/targets/cpu"));
  g_assert_true (reported (broken, "app/fb-cli-run.c:", "compares the target name \"cuda\""));
  g_assert_cmpuint (broken->len, ==, 3);
  test_remove_tree (copy);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/layering/rules", test_rules);
  g_test_add_func ("/layering/sources", test_sources);
  g_test_add_func ("/layering/broken-copy", test_broken_copy);
  return g_test_run ();
}
