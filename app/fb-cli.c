/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-config.h"
#include "fb-cli.h"
#include "fb-graph.h"
#include "fb-backend.h"
#include "fb-interp.h"
#include "fb-lower.h"
#include "fb-onnx-import.h"

#include <gio/gio.h>
#include <stdio.h>
#include <string.h>

static const FbCliCommand commands[] = {
  { "info", "inputs, outputs, op histogram, parameters, unsupported ops", fb_cli_info },
  { "passes", "run the pass pipeline; time, size and changes of every stage", fb_cli_passes },
  { "run", "run a model on given inputs, write or time its outputs", fb_cli_run },
  { "check", "run ONNX backend-style cases and compare with their outputs", fb_cli_check },
  { "compile", "compile a model for a target into a bundle folder", fb_cli_compile },
  { "profile", "time every kernel; where the time goes, on every stage", fb_cli_profile },
};

const FbCliCommand *
fb_cli_lookup (const char *name)
{
  g_return_val_if_fail (name != NULL, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (commands[i].name, name))
      return &commands[i];
  return NULL;
}

void
fb_cli_print_commands (FILE *stream)
{
  fprintf (stream, "Commands:\n");
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (stream, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

int
fb_cli_exit_status_for (const GError *error)
{
  g_return_val_if_fail (error != NULL, FB_EXIT_WORK);
  /* Whatever the user handed us (a file, a flag, a shape) is input; the rest is the work. */
  /* An operator the model needs and nothing here computes is a property of the model. */
  if (error->domain == FB_INTERP_ERROR)
    return error->code == FB_INTERP_ERROR_INPUT || error->code == FB_INTERP_ERROR_UNSUPPORTED
           ? FB_EXIT_INPUT : FB_EXIT_WORK;
  if (error->domain == FB_PIPELINE_ERROR)
    return error->code == FB_PIPELINE_ERROR_OPTION ? FB_EXIT_INPUT : FB_EXIT_WORK;
  /* What the model asks of a target, and a damaged bundle, are the input's doing. */
  if (error->domain == FB_LOWER_ERROR)
    return FB_EXIT_INPUT;
  if (error->domain == FB_RUNTIME_ERROR)
    return error->code == FB_RUNTIME_ERROR_FAILED || error->code == FB_RUNTIME_ERROR_DEVICE
           ? FB_EXIT_WORK : FB_EXIT_INPUT;
  if (error->domain == FB_IMPORT_ERROR || error->domain == FB_GRAPH_ERROR ||
      error->domain == G_OPTION_ERROR || error->domain == G_FILE_ERROR)
    return FB_EXIT_INPUT;
  if (error->domain == G_IO_ERROR &&
      (error->code == G_IO_ERROR_NOT_FOUND || error->code == G_IO_ERROR_INVALID_DATA ||
       error->code == G_IO_ERROR_INVALID_ARGUMENT || error->code == G_IO_ERROR_PERMISSION_DENIED ||
       error->code == G_IO_ERROR_IS_DIRECTORY || error->code == G_IO_ERROR_NOT_DIRECTORY))
    return FB_EXIT_INPUT;
  return FB_EXIT_WORK;
}

int
fb_cli_fail (const GError *error)
{
  g_return_val_if_fail (error != NULL, FB_EXIT_WORK);
  fprintf (stderr, "fusebench: %s\n", error->message);
  return fb_cli_exit_status_for (error);
}

GOptionGroup *
fb_cli_pipeline_group (FbCliPipelineArgs *args)
{
  const GOptionEntry entries[] = {
    { "disable", 0, 0, G_OPTION_ARG_STRING_ARRAY, &args->disable,
      "Skip a pass of the pipeline (repeatable)", "PASS" },
    { "layout", 0, 0, G_OPTION_ARG_STRING, &args->layout,
      "Tensor layout for convolutions: nchw or nhwc (default: nhwc for the cpu target, else nchw)", "LAYOUT" },
    { "no-fuse", 0, 0, G_OPTION_ARG_STRING_ARRAY, &args->no_fuse,
      "Keep a node out of every fusion (repeatable)", "NODE" },
    { "input-shape", 0, 0, G_OPTION_ARG_STRING_ARRAY, &args->input_shape,
      "Pin the dimensions of an input, e.g. input=1x3x224x224 (repeatable)", "NAME=SHAPE" },
    { NULL }
  };
  GOptionGroup *group = g_option_group_new ("pipeline", "Pipeline options:",
                                            "Show pipeline options", NULL, NULL);
  g_option_group_add_entries (group, entries);
  return group;
}

void
fb_cli_pipeline_args_clear (FbCliPipelineArgs *args)
{
  g_clear_pointer (&args->disable, g_strfreev);
  g_clear_pointer (&args->no_fuse, g_strfreev);
  g_clear_pointer (&args->layout, g_free);
  g_clear_pointer (&args->input_shape, g_strfreev);
}

GHashTable *
fb_cli_input_shapes (const FbCliPipelineArgs *args, GError **error)
{
  g_autoptr(GHashTable) shapes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  for (guint i = 0; args->input_shape && args->input_shape[i]; i++)
    {
      const char *spec = args->input_shape[i];
      const char *eq = strrchr (spec, '=');
      FbShape shape;
      g_autoptr(GError) local = NULL;

      if (eq == NULL || eq == spec)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--input-shape '%s': expected NAME=SHAPE, e.g. input=1x3x224x224", spec);
          return NULL;
        }
      if (!fb_shape_parse (eq + 1, &shape, &local))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--input-shape '%s': %s", spec, local->message);
          return NULL;
        }
      g_hash_table_insert (shapes, g_strndup (spec, eq - spec), g_memdup2 (&shape, sizeof shape));
    }
  return g_steal_pointer (&shapes);
}
