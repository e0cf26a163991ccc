/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-cli-load.h"
#include "fb-case-check.h"
#include "fb-specialize.h"
#include "fb-backend.h"
#include "fb-interp.h"
#include "fb-onnx-import.h"
#include "fb-tensor-io.h"

#include <gio/gio.h>
#include <string.h>

gboolean
fb_cli_check_target (const char *target, GError **error)
{
  if (target == NULL || fb_backend_lookup (target) != NULL)
    return TRUE;
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               "--target '%s': this build's targets are %s", target, fb_backend_names ());
  return FALSE;
}

gboolean
fb_cli_check_precision (const FbBackendOptions *options, GError **error)
{
  if (!options->strict_float32 || !options->tf32_matmul)
    return TRUE;
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               "--strict-float32 turns TF32 off, --tf32-matmul on: give one of them");
  return FALSE;
}

FbPipeline *
fb_cli_load_model (const char *path, const FbCliPipelineArgs *args, GError **error)
{
  return fb_cli_load_model_full (path, args, NULL, error);
}

FbPipeline *
fb_cli_load_model_full (const char *path, const FbCliPipelineArgs *args,
                        FbPipelineOptions **used, GError **error)
{
  g_autoptr(FbPipelineOptions) options = NULL;
  g_autoptr(FbPipeline) pipeline = NULL;
  FbGraph *graph;

  g_return_val_if_fail (path != NULL && args != NULL, NULL);
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ISDIR,
                   "%s: is a folder but no bundle (it has no manifest.json); give an ONNX "
                   "model or a bundle", path);
      return NULL;
    }
  options = fb_cli_pipeline_options (args, error);
  if (options == NULL ||
      (args->input_dir != NULL && !fb_cli_pin_from_input_dir (path, args->input_dir, options,
                                                              error)))
    return NULL;
  graph = fb_onnx_import_file (path, options->input_shapes, error);
  if (graph == NULL)
    return NULL;
  pipeline = fb_pipeline_new (graph);
  if (!fb_pipeline_run (pipeline, options, NULL, NULL, NULL, error))
    return NULL;
  if (used != NULL)
    *used = g_steal_pointer (&options);
  return g_steal_pointer (&pipeline);
}

gboolean
fb_cli_pin_from_input_dir (const char *path, const char *dir, FbPipelineOptions *options,
                           GError **error)
{
  g_autoptr(FbGraph) graph = NULL;
  g_autoptr(GPtrArray) inputs = NULL;

  g_return_val_if_fail (path != NULL && dir != NULL && options != NULL, FALSE);
  graph = fb_onnx_import_file (path, options->input_shapes, error);
  if (graph == NULL || (inputs = fb_case_read_inputs (graph, dir, error)) == NULL)
    return FALSE;
  fb_pins_from_inputs (graph, inputs, options->input_shapes);
  return TRUE;
}

/* Loads file for graph input v and checks that it fits; errors start with the file name. */
static FbTensor *
read_input (const FbValue *v, const char *file, GError **error)
{
  g_autoptr(FbTensor) t = fb_tensor_load_file (file, NULL, error);
  g_autoptr(GError) local = NULL;

  if (t == NULL)
    return NULL;
  if (!fb_interp_check_input (v, t, &local))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: %s", file, local->message);
      return NULL;
    }
  return g_steal_pointer (&t);
}

GPtrArray *
fb_cli_read_input_dir (const FbGraph *graph, const char *dir, GError **error)
{
  return fb_case_read_inputs (graph, dir, error);
}

gboolean
fb_cli_split_spec (const char *option, const char *spec, char **name, char **file, GError **error)
{
  const char *eq = strrchr (spec, '=');

  if (eq == NULL || eq == spec || eq[1] == '\0')
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "%s '%s': expected NAME=FILE", option, spec);
      return FALSE;
    }
  *name = g_strndup (spec, eq - spec);
  *file = g_strdup (eq + 1);
  return TRUE;
}

GPtrArray *
fb_cli_read_named_inputs (const FbGraph *graph, char **specs, GError **error)
{
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);

  g_return_val_if_fail (graph != NULL, NULL);
  g_ptr_array_set_size (inputs, graph->inputs->len);
  for (guint s = 0; specs && specs[s]; s++)
    {
      g_autofree char *name = NULL, *file = NULL;
      guint i;

      if (!fb_cli_split_spec ("--input", specs[s], &name, &file, error))
        return NULL;
      for (i = 0; i < graph->inputs->len; i++)
        if (g_str_equal (((const FbValue *) g_ptr_array_index (graph->inputs, i))->name, name))
          break;
      if (i == graph->inputs->len)
        {
          GString *names = g_string_new (NULL);
          for (guint k = 0; k < graph->inputs->len; k++)
            g_string_append_printf (names, "%s'%s'", k ? ", " : "",
                                    ((const FbValue *) g_ptr_array_index (graph->inputs, k))->name);
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--input '%s': the model has no input '%s' (its inputs: %s)", specs[s],
                       name, names->len ? names->str : "none");
          g_string_free (names, TRUE);
          return NULL;
        }
      if (g_ptr_array_index (inputs, i) != NULL)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--input: '%s' is given twice", name);
          return NULL;
        }
      inputs->pdata[i] = read_input (g_ptr_array_index (graph->inputs, i), file, error);
      if (inputs->pdata[i] == NULL)
        return NULL;
    }
  for (guint i = 0; i < graph->inputs->len; i++)
    if (g_ptr_array_index (inputs, i) == NULL)
      {
        const FbValue *v = g_ptr_array_index (graph->inputs, i);
        g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                     "input '%s' is not given (add --input %s=FILE)", v->name, v->name);
        return NULL;
      }
  return g_steal_pointer (&inputs);
}
