/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ONNX's node test suite, generated from the installed python3-onnx at build time
 * (tests/make-node-suite.py), run in-process case by case on the interpreter and on the cpu
 * target through fb_case_check, exactly as `fusebench check` runs them: shapes from the inputs,
 * rtol 1e-3 / atol 1e-4.
 *
 * Cases in tests/not-required.txt are not run. A required case that fails must be listed in
 * tests/node-suite-known-failures.txt ("CASE TARGET REASON") and a listed case must fail: the
 * test fails on either mismatch, so the list can only shrink honestly. The verdict of every
 * case is written to node-suite-TARGET.txt in the build folder (scripts/node-suite-report reads
 * it). FB_NODE_SUITE_FILTER=TEXT runs only the cases whose name contains TEXT. */
#include "fb-case-check.h"
#include "fb-cpu.h"

#include <string.h>

typedef struct {
  const char *target;
  gboolean    for_cpu;
} Target;

/* Lines of path with '#' comments and blanks dropped; each line split on white space. */
static GPtrArray *
read_list (const char *path)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  GPtrArray *rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);

  if (!g_file_get_contents (path, &text, NULL, &error))
    g_error ("%s", error->message);
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      char *hash = strchr (lines[i], '#');
      if (hash)
        *hash = '\0';
      g_strstrip (lines[i]);
      if (*lines[i] == '\0')
        continue;
      g_ptr_array_add (rows, g_strsplit_set (lines[i], " \t", -1));
    }
  return rows;
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

/* The generated cases, or NULL after g_test_skip when they could not be generated. */
static char *
suite_dir (void)
{
  g_autofree char *stamp = g_test_build_filename (G_TEST_BUILT, "node-suite.stamp", NULL);
  g_autofree char *line = NULL;
  g_autoptr(GError) error = NULL;

  if (!g_file_get_contents (stamp, &line, NULL, &error))
    g_error ("%s (the node-suite-data build step writes it)", error->message);
  g_strstrip (line);
  if (g_str_has_prefix (line, "skip "))
    {
      g_test_skip (line + 5);
      return NULL;
    }
  g_assert_true (g_str_has_prefix (line, "ok "));
  return g_test_build_filename (G_TEST_BUILT, "node-suite", NULL);
}

static void
test_target (gconstpointer data)
{
  const Target *target = data;
  g_autofree char *dir = suite_dir ();
  g_autofree char *required_path = g_test_build_filename (G_TEST_DIST, "not-required.txt", NULL);
  g_autofree char *known_path =
    g_test_build_filename (G_TEST_DIST, "node-suite-known-failures.txt", NULL);
  g_autofree char *results_path = NULL;
  g_autoptr(GPtrArray) not_required = NULL, known_rows = NULL, cases = NULL;
  g_autoptr(GHashTable) skip = NULL, known = NULL, seen = NULL;
  g_autoptr(GString) results = g_string_new (NULL);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  g_autoptr(GDir) d = NULL;
  g_autoptr(GError) error = NULL;
  const char *filter = g_getenv ("FB_NODE_SUITE_FILTER");
  const char *name;
  guint n_required = 0, n_passed = 0, n_listed_failed = 0, n_bad = 0;

  if (dir == NULL)
    return;
  not_required = read_list (required_path);
  skip = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < not_required->len; i++)
    g_hash_table_add (skip, ((char **) g_ptr_array_index (not_required, i))[0]);

  /* case name -> reason, for this target */
  known_rows = read_list (known_path);
  known = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < known_rows->len; i++)
    {
      char **row = g_ptr_array_index (known_rows, i);
      if (g_strv_length (row) != 3)
        g_error ("%s: line '%s ...': expected CASE TARGET REASON", known_path, row[0]);
      if (g_str_equal (row[1], target->target))
        g_hash_table_insert (known, row[0], row[2]);
    }

  d = g_dir_open (dir, 0, &error);
  g_assert_no_error (error);
  cases = g_ptr_array_new_with_free_func (g_free);
  while ((name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (cases, g_strdup (name));
  g_ptr_array_sort (cases, compare_names);

  options->layout = target->for_cpu ? FB_LAYOUT_NHWC : FB_LAYOUT_NCHW;
  seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < cases->len; i++)
    {
      const char *c = g_ptr_array_index (cases, i);
      g_autofree char *case_dir = g_build_filename (dir, c, NULL);
      const char *reason;
      FbCaseVerdict v;

      if (g_hash_table_contains (skip, c))
        continue;
      n_required++;
      if (filter != NULL && strstr (c, filter) == NULL)
        continue;
      g_hash_table_add (seen, (gpointer) c);
      fb_case_check (case_dir, options, target->for_cpu ? fb_backend_cpu () : NULL, NULL, &v);
      reason = g_hash_table_lookup (known, c);
      if (v.ok)
        n_passed++;
      else if (reason != NULL)
        n_listed_failed++;
      g_string_append_printf (results, "%s\t%s\t%s\n", c, v.ok ? "PASS" : "FAIL",
                              v.ok ? "" : v.failure);
      if (!v.ok && reason == NULL)
        {
          g_test_message ("FAIL %s on %s, not in node-suite-known-failures.txt: %s", c,
                          target->target, v.failure);
          n_bad++;
        }
      else if (v.ok && reason != NULL)
        {
          g_test_message ("PASS %s on %s, listed as failing (%s): remove it from "
                          "node-suite-known-failures.txt", c, target->target, reason);
          n_bad++;
        }
      fb_case_verdict_clear (&v);
    }

  /* A listed case that is not in the suite (or not required) would never be checked. */
  if (filter == NULL)
    {
      GHashTableIter it;
      gpointer key;
      g_hash_table_iter_init (&it, known);
      while (g_hash_table_iter_next (&it, &key, NULL))
        if (!g_hash_table_contains (seen, key))
          {
            g_test_message ("%s (%s) is listed in node-suite-known-failures.txt but is not a "
                            "required case of the suite", (const char *) key, target->target);
            n_bad++;
          }
    }

  results_path = g_strdup_printf ("%s/node-suite-%s.txt", g_test_get_dir (G_TEST_BUILT),
                                  target->target);
  if (!g_file_set_contents (results_path, results->str, results->len, &error))
    g_error ("%s", error->message);
  g_test_message ("%s: %u passed / of %u required (%u run, %u known failures, %u mismatches "
                  "with the list)", target->target, n_passed, n_required,
                  g_hash_table_size (seen), n_listed_failed, n_bad);
  if (n_bad > 0)
    {
      g_test_message ("%u case%s on %s disagree with node-suite-known-failures.txt (see above)",
                      n_bad, n_bad == 1 ? "" : "s", target->target);
      g_test_fail ();
    }
}

int
main (int argc, char **argv)
{
  static const Target interp = { "interp", FALSE };
  static const Target cpu = { "cpu", TRUE };

  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/node-suite/interp", &interp, test_target);
  g_test_add_data_func ("/node-suite/cpu", &cpu, test_target);
  return g_test_run ();
}
