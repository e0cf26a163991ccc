/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The interpreter against ONNX Runtime: every folder under tests/cases/ that holds
 * test_data_set_* folders is a case (model.onnx, input_K.pb, output_K.pb, the ONNX backend-test
 * layout). Each is imported, run, and every output compared with rtol 1e-3, atol 1e-4. */
#include "fb-compare.h"
#include "fb-interp.h"
#include "fb-onnx-import.h"
#include "fb-tensor-io.h"

#include <string.h>

/* g_ptr_array_sort hands the comparison pointers to the elements. */
static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

static GPtrArray *
data_sets (const char *case_dir)
{
  g_autoptr(GDir) dir = g_dir_open (case_dir, 0, NULL);
  GPtrArray *sets = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "test_data_set_"))
      g_ptr_array_add (sets, g_build_filename (case_dir, name, NULL));
  g_ptr_array_sort (sets, compare_names);
  return sets;
}

static void
run_data_set (const FbGraph *graph, const char *set_dir)
{
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_autoptr(GPtrArray) outputs = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < graph->inputs->len; i++)
    {
      g_autofree char *base = g_strdup_printf ("input_%u.pb", i);
      g_autofree char *path = g_build_filename (set_dir, base, NULL);
      FbTensor *t = fb_tensor_load_file (path, NULL, &error);
      g_assert_no_error (error);
      g_ptr_array_add (inputs, t);
    }
  outputs = fb_interp_run (graph, inputs, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (outputs->len, ==, graph->outputs->len);
  for (guint i = 0; i < outputs->len; i++)
    {
      g_autofree char *base = g_strdup_printf ("output_%u.pb", i);
      g_autofree char *path = g_build_filename (set_dir, base, NULL);
      g_autoptr(FbTensor) expected = fb_tensor_load_file (path, NULL, &error);
      FbCompare cmp;

      g_assert_no_error (error);
      fb_tensor_compare (expected, g_ptr_array_index (outputs, i), FB_COMPARE_RTOL, FB_COMPARE_ATOL,
                         &cmp);
      if (!cmp.ok)
        g_error ("%s: output %u '%s': %s", set_dir, i,
                 ((const FbValue *) g_ptr_array_index (graph->outputs, i))->name, cmp.reason);
      g_test_message ("%s output %u: worst abs err %.3g rel err %.3g", set_dir, i, cmp.worst_abs,
                      cmp.worst_rel);
      fb_compare_clear (&cmp);
    }
}

static void
test_case (gconstpointer data)
{
  const char *case_dir = data;
  g_autofree char *model = g_build_filename (case_dir, "model.onnx", NULL);
  g_autoptr(GPtrArray) sets = data_sets (case_dir);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraph) graph = fb_onnx_import_file (model, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (sets->len, >, 0);
  for (guint i = 0; i < sets->len; i++)
    run_data_set (graph, g_ptr_array_index (sets, i));
}

int
main (int argc, char **argv)
{
  g_autofree char *root = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_test_init (&argc, &argv, NULL);
  root = g_test_build_filename (G_TEST_DIST, "cases", NULL);
  dir = g_dir_open (root, 0, NULL);
  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (root, name, NULL);
      g_autoptr(GPtrArray) sets = data_sets (path);
      if (sets->len > 0)
        g_ptr_array_add (names, g_strdup (name));
    }
  /* A fixed order, so that test numbers mean the same thing on every machine. */
  g_ptr_array_sort (names, compare_names);
  g_assert_cmpuint (names->len, >, 0);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *test = g_strdup_printf ("/interp/cases/%s", (char *) names->pdata[i]);
      char *path = g_build_filename (root, names->pdata[i], NULL);
      g_ptr_array_add (paths, path);
      g_test_add_data_func (test, path, test_case);
    }
  return g_test_run ();
}
