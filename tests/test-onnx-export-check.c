/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The optimized model as ONNX, as other tools take it: every model under tests/ (in both
 * layouts) and every required case of ONNX's node suite (where the build generated it) is
 * exported at its final stage with fb_onnx_export_portable, and then
 *
 *   - onnx.checker.check_model (full_check=True, strict shape inference) accepts the file, run
 *     once over all of them by check-onnx-models.py with the Python that has python3-onnx;
 *   - the interpreter computes on the exported model what it computes on the source, on the
 *     case's first data set (or seeded random inputs for a model without one).
 *
 * The models are written to the build folder (onnx-export-check/) for a look or a run in
 * another runtime. A model written at an old opset whose nodes the importer upgraded
 * (tests/fixtures/opset9-slice.onnx) is the case this exists for: the file must say the opset
 * its nodes follow. FB_EXPORT_CHECK_FILTER=TEXT exports only the models whose name has TEXT. */
#include "fb-case-check.h"
#include "fb-compare.h"
#include "fb-interp.h"
#include "fb-onnx-export.h"
#include "fb-onnx-import.h"
#include "fb-specialize.h"

#include <glib/gstdio.h>
#include <string.h>

typedef struct {
  char     *name;     /* file name of the export, without the layout and suffix */
  char     *model;
  char     *data;     /* a test_data_set folder, or NULL: seeded random inputs */
  gboolean  suite;    /* a node-suite case: one layout, and what the interpreter cannot run
                         there is the node-suite test's business, not this one's */
} Model;

static void
model_free (Model *m)
{
  g_free (m->name);
  g_free (m->model);
  g_free (m->data);
  g_free (m);
}

static char *python;      /* argv[1]: the interpreter that has python3-onnx */
static char *out_dir;
static guint n_compared;  /* exports whose outputs were compared with the source's */

static void
add_model (GPtrArray *models, const char *name, const char *model, const char *data,
           gboolean suite)
{
  const char *filter = g_getenv ("FB_EXPORT_CHECK_FILTER");
  Model *m;

  if (filter != NULL && strstr (name, filter) == NULL)
    return;
  m = g_new0 (Model, 1);
  m->name = g_strdup (name);
  m->model = g_strdup (model);
  m->data = data != NULL && g_file_test (data, G_FILE_TEST_IS_DIR) ? g_strdup (data) : NULL;
  m->suite = suite;
  g_ptr_array_add (models, m);
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

static GPtrArray *
sorted_names (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  return names;
}

/* The models of tests/: the cases (model.onnx beside its data), the fixtures and the residual
 * models. The fuzz corpus is left out: it is the loader's food, broken on purpose. */
static void
add_test_models (GPtrArray *models)
{
  static const char *folders[] = { "fixtures", "residual" };
  g_autofree char *cases = g_test_build_filename (G_TEST_DIST, "cases", NULL);
  g_autoptr(GPtrArray) names = sorted_names (cases);

  for (guint i = 0; i < names->len; i++)
    {
      const char *c = g_ptr_array_index (names, i);
      g_autofree char *model = g_build_filename (cases, c, "model.onnx", NULL);
      g_autofree char *data = g_build_filename (cases, c, "test_data_set_0", NULL);

      if (g_file_test (model, G_FILE_TEST_IS_REGULAR))
        add_model (models, c, model, data, FALSE);
    }
  for (guint f = 0; f < G_N_ELEMENTS (folders); f++)
    {
      g_autofree char *dir = g_test_build_filename (G_TEST_DIST, folders[f], NULL);
      g_autoptr(GPtrArray) files = sorted_names (dir);

      for (guint i = 0; i < files->len; i++)
        {
          const char *file = g_ptr_array_index (files, i);
          g_autofree char *model = g_build_filename (dir, file, NULL);
          g_autofree char *name = NULL;

          if (!g_str_has_suffix (file, ".onnx"))
            continue;
          name = g_strdup_printf ("%s-%.*s", folders[f], (int) strlen (file) - 5, file);
          add_model (models, name, model, NULL, FALSE);
        }
    }
}

/* First words of the lines of path, '#' comments and blank lines dropped; for list_target,
 * only the rows whose second word is it. */
static GHashTable *
read_list (const char *path, const char *list_target)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  if (!g_file_get_contents (path, &text, NULL, &error))
    g_error ("%s", error->message);
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      g_auto(GStrv) words = NULL;
      char *hash = strchr (lines[i], '#');

      if (hash != NULL)
        *hash = '\0';
      words = g_strsplit_set (g_strstrip (lines[i]), " \t", -1);
      if (words[0] == NULL || *words[0] == '\0')
        continue;
      if (list_target == NULL || (words[1] != NULL && g_str_equal (words[1], list_target)))
        g_hash_table_add (set, g_strdup (words[0]));
    }
  return set;
}

/* The node suite's required cases that the interpreter passes; FALSE (and why in *why) when the
 * build could not generate the suite. */
static gboolean
add_suite (GPtrArray *models, char **why)
{
  g_autofree char *stamp = g_test_build_filename (G_TEST_BUILT, "node-suite.stamp", NULL);
  g_autofree char *dir = g_test_build_filename (G_TEST_BUILT, "node-suite", NULL);
  g_autofree char *required = g_test_build_filename (G_TEST_DIST, "not-required.txt", NULL);
  g_autofree char *known = g_test_build_filename (G_TEST_DIST, "node-suite-known-failures.txt",
                                                  NULL);
  g_autofree char *line = NULL;
  g_autoptr(GHashTable) skip = NULL, failing = NULL;
  g_autoptr(GPtrArray) cases = NULL;

  if (!g_file_get_contents (stamp, &line, NULL, NULL))
    {
      *why = g_strdup ("the node suite was not generated (its build step writes node-suite.stamp)");
      return FALSE;
    }
  g_strstrip (line);
  if (g_str_has_prefix (line, "skip "))
    {
      *why = g_strdup (line + 5);
      return FALSE;
    }
  skip = read_list (required, NULL);
  failing = read_list (known, "interp");
  cases = sorted_names (dir);
  for (guint i = 0; i < cases->len; i++)
    {
      const char *c = g_ptr_array_index (cases, i);
      g_autofree char *model = g_build_filename (dir, c, "model.onnx", NULL);
      g_autofree char *data = g_build_filename (dir, c, "test_data_set_0", NULL);

      if (!g_hash_table_contains (skip, c) && !g_hash_table_contains (failing, c))
        add_model (models, c, model, data, TRUE);
    }
  return TRUE;
}

/* Seeded inputs of graph's shapes (a dimension left open takes 2): floats in [-2, 2], integers
 * 0 or 1 (safe as indices and counts), booleans either. */
static GPtrArray *
random_inputs (const FbGraph *graph, GError **error)
{
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_autoptr(GRand) rand = g_rand_new_with_seed (21);

  for (guint i = 0; i < graph->inputs->len; i++)
    {
      const FbValue *v = g_ptr_array_index (graph->inputs, i);
      int64_t dims[FB_MAX_RANK];
      FbTensor *t;

      for (int d = 0; d < v->shape.rank; d++)
        dims[d] = v->shape.dim[d] >= 0 ? v->shape.dim[d] : 2;
      if ((t = fb_tensor_new (v->dtype, MAX (v->shape.rank, 0), dims, error)) == NULL)
        return NULL;
      for (int64_t k = 0; k < t->numel; k++)
        fb_tensor_set_f64 (t, k, fb_dtype_is_float (v->dtype) ? g_rand_double_range (rand, -2, 2)
                                                              : g_rand_int_range (rand, 0, 2));
      g_ptr_array_add (inputs, t);
    }
  return g_steal_pointer (&inputs);
}

/* Exports m's final stage in layout to out_dir and compares the interpreter on it with the
 * source; a problem is appended to failures. */
static void
export_one (const Model *m, FbLayout layout, GString *failures)
{
  const char *layout_name = layout == FB_LAYOUT_NHWC ? "nhwc" : "nchw";
  g_autofree char *file = g_strdup_printf ("%s-%s.onnx", m->name, layout_name);
  g_autofree char *path = g_build_filename (out_dir, file, NULL);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraph) probe = NULL;
  g_autoptr(FbPipeline) pipeline = NULL;
  g_autoptr(GPtrArray) inputs = NULL, expected = NULL, actual = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(FbGraph) back = NULL;
  FbGraph *graph;

  options->layout = layout;
  /* Shapes from the inputs, as `run` and `check` take them. */
  if ((probe = fb_onnx_import_file (m->model, NULL, &error)) == NULL
      || (inputs = m->data != NULL ? fb_case_read_inputs (probe, m->data, &error)
                                   : random_inputs (probe, &error)) == NULL)
    goto source_failed;
  fb_pins_from_inputs (probe, inputs, options->input_shapes);
  if ((graph = fb_onnx_import_file (m->model, options->input_shapes, &error)) == NULL)
    goto source_failed;
  pipeline = fb_pipeline_new (graph);
  if (!fb_pipeline_run (pipeline, options, NULL, NULL, NULL, &error))
    goto source_failed;

  if ((bytes = fb_onnx_export_portable (fb_pipeline_final (pipeline), &error)) == NULL)
    {
      g_string_append_printf (failures, "%s: the export failed: %s\n", file, error->message);
      return;
    }
  if (!g_file_set_contents (path, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                            &error))
    g_error ("%s", error->message);
  /* What the interpreter cannot compute on the source (an Einsum of three operands) is still
   * exported and checked; only the comparison needs it. */
  if ((expected = fb_interp_run (fb_pipeline_stage (pipeline, 0)->graph, inputs, NULL,
                                 &error)) == NULL)
    {
      g_test_message ("%s: not compared, the interpreter does not run the source: %s", file,
                      error->message);
      return;
    }
  if ((back = fb_onnx_import_bytes (bytes, file, NULL, NULL, &error)) == NULL
      || (actual = fb_interp_run (back, inputs, NULL, &error)) == NULL)
    {
      g_string_append_printf (failures, "%s: the interpreter cannot run the export: %s\n", file,
                              error->message);
      return;
    }
  g_assert_cmpuint (actual->len, ==, expected->len);
  n_compared++;
  for (guint k = 0; k < actual->len; k++)
    {
      FbCompare c = { 0 };

      fb_tensor_compare (g_ptr_array_index (expected, k), g_ptr_array_index (actual, k), 1e-3,
                         1e-4, &c);
      if (!c.ok)
        g_string_append_printf (failures, "%s: output %u differs from the source's: %s\n", file,
                                k, c.reason);
      fb_compare_clear (&c);
    }
  return;

source_failed:
  /* A model whose passes cannot run (an operator nothing here computes) has no final stage to
   * export: the import and pipeline tests report that. */
  g_test_message ("%s: not exported, the source does not load or its passes do not run: %s",
                  file, error->message);
}

/* Runs check-onnx-models.py over out_dir: each failing model appended to failures; FALSE after
 * g_test_skip when python3-onnx is missing. */
static gboolean
check_with_onnx (guint n_written, GString *failures)
{
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "check-onnx-models.py", NULL);
  const char *argv[] = { python, script, out_dir, NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  guint n_ok = 0, n_newer = 0;
  int status;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                     &status, &error))
    g_error ("%s: %s", python, error->message);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s %s failed:\n%s", python, script, err);
  if (g_str_has_prefix (out, "skip "))
    {
      g_strstrip (out);
      g_test_skip (out + 5);
      return FALSE;
    }
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], "ok "))
      n_ok++;
    else if (g_str_has_prefix (lines[i], "fail "))
      g_string_append_printf (failures, "onnx.checker refuses %s\n", lines[i] + 5);
    else if (g_str_has_prefix (lines[i], "newer "))
      {
        /* Still compared on the interpreter above; only this checker cannot judge them. */
        g_test_message ("not checked: %s", lines[i] + 6);
        n_newer++;
      }
  g_test_message ("onnx.checker (full check) accepts %u of %u exported models (%u at an opset "
                  "newer than it knows)", n_ok, n_written, n_newer);
  return TRUE;
}

static guint
count_onnx_files (void)
{
  g_autoptr(GPtrArray) files = sorted_names (out_dir);
  guint n = 0;

  for (guint i = 0; i < files->len; i++)
    n += g_str_has_suffix (g_ptr_array_index (files, i), ".onnx");
  return n;
}

static void
clear_out_dir (void)
{
  g_autoptr(GPtrArray) files = sorted_names (out_dir);

  for (guint i = 0; i < files->len; i++)
    {
      g_autofree char *path = g_build_filename (out_dir, g_ptr_array_index (files, i), NULL);
      g_unlink (path);
    }
}

static void
test_export_check (void)
{
  g_autoptr(GPtrArray) models = g_ptr_array_new_with_free_func ((GDestroyNotify) model_free);
  g_autoptr(GString) failures = g_string_new (NULL);
  g_autofree char *no_suite = NULL;
  guint n_written;

  g_mkdir_with_parents (out_dir, 0755);
  clear_out_dir ();
  add_test_models (models);
  if (!add_suite (models, &no_suite))
    g_test_message ("node suite not exported: %s", no_suite);
  for (guint i = 0; i < models->len; i++)
    {
      const Model *m = g_ptr_array_index (models, i);

      export_one (m, FB_LAYOUT_NHWC, failures);
      if (!m->suite)
        export_one (m, FB_LAYOUT_NCHW, failures);
    }
  n_written = count_onnx_files ();
  g_assert_cmpuint (n_written, >, 0);
  g_test_message ("%u models exported, %u compared with their source on the interpreter",
                  n_written, n_compared);
  if (!check_with_onnx (n_written, failures))
    return;
  if (failures->len > 0)
    {
      g_test_message ("%s", failures->str);
      g_test_fail ();
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (argc != 2)
    g_error ("usage: %s PYTHON3 (the interpreter that has python3-onnx)", argv[0]);
  python = argv[1];
  out_dir = g_test_build_filename (G_TEST_BUILT, "onnx-export-check", NULL);
  g_test_add_func ("/onnx-export/check", test_export_check);
  return g_test_run ();
}
