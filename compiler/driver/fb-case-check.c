/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-case-check.h"
#include "fb-compare.h"
#include "fb-interp.h"
#include "fb-specialize.h"
#include "fb-tensor-io.h"

#include <gio/gio.h>
#include <string.h>

/* g_ptr_array_sort hands the comparison pointers to the elements. */
static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

GPtrArray *
fb_case_data_sets (const char *case_dir, GError **error)
{
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_return_val_if_fail (case_dir != NULL, NULL);
  dir = g_dir_open (case_dir, 0, error);
  if (dir == NULL)
    return NULL;
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "test_data_set_"))
      {
        g_autofree char *path = g_build_filename (case_dir, name, NULL);
        if (g_file_test (path, G_FILE_TEST_IS_DIR))
          g_ptr_array_add (sets, g_steal_pointer (&path));
      }
  g_ptr_array_sort (sets, compare_names);
  if (sets->len == 0)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s: no test_data_set_* folder",
                   case_dir);
      return NULL;
    }
  return g_steal_pointer (&sets);
}

/* set_dir/STEM_K.pb, or set_dir/STEM_K.npy when only that exists; NULL when neither does. */
static char *
tensor_file (const char *set_dir, const char *stem, guint k)
{
  g_autofree char *pb = g_strdup_printf ("%s_%u.pb", stem, k);
  g_autofree char *npy = g_strdup_printf ("%s_%u.npy", stem, k);
  g_autofree char *path = g_build_filename (set_dir, pb, NULL);

  if (g_file_test (path, G_FILE_TEST_EXISTS))
    return g_steal_pointer (&path);
  g_free (path);
  path = g_build_filename (set_dir, npy, NULL);
  return g_file_test (path, G_FILE_TEST_EXISTS) ? g_steal_pointer (&path) : NULL;
}

GPtrArray *
fb_case_read_inputs (const FbGraph *graph, const char *set_dir, GError **error)
{
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);

  g_return_val_if_fail (graph != NULL && set_dir != NULL, NULL);
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      const FbValue *v = g_ptr_array_index (graph->inputs, i);
      g_autofree char *path = tensor_file (set_dir, "input", i);
      g_autoptr(FbTensor) t = NULL;
      g_autoptr(GError) local = NULL;

      if (path == NULL)
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                       "%s: no input_%u.pb or input_%u.npy for input %u '%s'", set_dir, i, i, i,
                       v->name);
          return NULL;
        }
      t = fb_value_load_file (path, v->kind, v->dtype, NULL, error);
      if (t == NULL)
        return NULL;
      if (!fb_interp_check_input (v, t, &local))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: %s", path, local->message);
          return NULL;
        }
      g_ptr_array_add (inputs, g_steal_pointer (&t));
    }
  return g_steal_pointer (&inputs);
}

static void
verdict_fail (FbCaseVerdict *v, char *reason)
{
  v->ok = FALSE;
  if (v->failure == NULL)
    v->failure = reason;
  else
    g_free (reason);
}

static void
compare_outputs (const FbGraph *graph, GPtrArray *outputs, const char *set_dir, double rtol,
                 double atol, FbCaseVerdict *v)
{
  for (guint i = 0; i < outputs->len; i++)
    {
      const FbValue *out = g_ptr_array_index (graph->outputs, i);
      const char *name = out->name;
      g_autofree char *path = tensor_file (set_dir, "output", i);
      g_autoptr(FbTensor) expected = NULL;
      g_autoptr(GError) error = NULL;
      FbCompare cmp;

      if (path == NULL)
        {
          verdict_fail (v, g_strdup_printf ("%s: no output_%u.pb or output_%u.npy for output "
                                            "'%s'", set_dir, i, i, name));
          return;
        }
      expected = fb_value_load_file (path, out->kind, out->dtype, NULL, &error);
      if (expected == NULL)
        {
          verdict_fail (v, g_strdup (error->message));
          return;
        }
      fb_tensor_compare (expected, g_ptr_array_index (outputs, i), rtol, atol, &cmp);
      if (v->worst_output == NULL || cmp.worst_abs > v->worst_abs)
        {
          g_free (v->worst_output);
          v->worst_output = g_strdup (name);
          v->worst_abs = cmp.worst_abs;
        }
      v->worst_rel = MAX (v->worst_rel, cmp.worst_rel);
      if (!cmp.ok)
        verdict_fail (v, g_strdup_printf ("%s, output %u '%s': %s", set_dir, i, name, cmp.reason));
      fb_compare_clear (&cmp);
    }
}

void
fb_case_check (const char *case_dir, const FbPipelineOptions *options,
               const FbBackend *backend, const FbBackendOptions *backend_options,
               FbCaseVerdict *v)
{
  fb_case_check_within (case_dir, options, backend, backend_options, FB_COMPARE_RTOL,
                        FB_COMPARE_ATOL, v);
}

void
fb_case_check_within (const char *case_dir, const FbPipelineOptions *options,
                      const FbBackend *backend, const FbBackendOptions *backend_options,
                      double rtol, double atol, FbCaseVerdict *v)
{
  g_autofree char *model = NULL;
  g_autoptr(GPtrArray) sets = NULL;
  g_autoptr(FbSpecializer) spec = NULL;
  g_autoptr(GError) error = NULL;

  g_return_if_fail (case_dir != NULL && options != NULL && v != NULL);
  memset (v, 0, sizeof *v);
  v->ok = TRUE;
  model = g_build_filename (case_dir, "model.onnx", NULL);
  if ((sets = fb_case_data_sets (case_dir, &error)) == NULL ||
      (spec = fb_specializer_new (model, options, backend, backend_options, &error)) == NULL)
    {
      verdict_fail (v, g_strdup (error->message));
      return;
    }
  for (guint s = 0; s < sets->len; s++)
    {
      const char *set_dir = g_ptr_array_index (sets, s);
      g_autoptr(GPtrArray) inputs = fb_case_read_inputs (fb_specializer_graph (spec), set_dir,
                                                         &error);
      g_autoptr(GPtrArray) outputs = NULL;
      FbPipeline *pipeline = NULL;
      FbCompiled *compiled = NULL;

      if (inputs != NULL && fb_specializer_prepare (spec, inputs, &pipeline, &compiled, &error))
        outputs = compiled != NULL ? backend->run (compiled, inputs, NULL, &error)
                                   : fb_interp_run (fb_pipeline_final (pipeline), inputs, NULL,
                                                    &error);
      if (outputs == NULL)
        {
          verdict_fail (v, g_strdup (error->message));
          g_clear_error (&error);
          continue;
        }
      compare_outputs (fb_pipeline_final (pipeline), outputs, set_dir, rtol, atol, v);
    }
  v->n_compiled = fb_specializer_n_compiled (spec);
}

void
fb_case_verdict_clear (FbCaseVerdict *v)
{
  g_return_if_fail (v != NULL);
  g_clear_pointer (&v->worst_output, g_free);
  g_clear_pointer (&v->failure, g_free);
}
