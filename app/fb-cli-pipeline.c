/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The PIPELINE options of every command, from parsed strings to FbPipelineOptions. Mistakes are
 * G_OPTION_ERRORs (exit status 2) that list what would have been accepted. */
#include "fb-cli.h"
#include "fb-pipeline.h"

#include <string.h>

static gboolean
is_pass_name (const char *name)
{
  for (const char * const *p = fb_pipeline_pass_names (); *p; p++)
    if (g_str_equal (*p, name))
      return TRUE;
  return FALSE;
}

FbPipelineOptions *
fb_cli_pipeline_options (const FbCliPipelineArgs *args, GError **error)
{
  g_autoptr(FbPipelineOptions) options = NULL;
  g_autoptr(GHashTable) shapes = NULL;
  GHashTableIter it;
  gpointer name, shape;

  g_return_val_if_fail (args != NULL, NULL);
  options = fb_pipeline_options_new ();

  for (guint i = 0; args->disable && args->disable[i]; i++)
    {
      if (!is_pass_name (args->disable[i]))
        {
          g_autofree char *list = g_strjoinv (", ", (char **) fb_pipeline_pass_names ());
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--disable '%s': there is no such pass (the passes are %s)",
                       args->disable[i], list);
          return NULL;
        }
      g_ptr_array_add (options->disabled_passes, g_strdup (args->disable[i]));
    }
  for (guint i = 0; args->no_fuse && args->no_fuse[i]; i++)
    g_ptr_array_add (options->no_fuse, g_strdup (args->no_fuse[i]));

  if (args->layout == NULL)
    options->layout = args->channels_last ? FB_LAYOUT_NHWC : FB_LAYOUT_NCHW;
  else if (g_ascii_strcasecmp (args->layout, "nchw") == 0)
    options->layout = FB_LAYOUT_NCHW;
  else if (g_ascii_strcasecmp (args->layout, "nhwc") == 0)
    options->layout = FB_LAYOUT_NHWC;
  else
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--layout '%s': expected nchw or nhwc", args->layout);
      return NULL;
    }

  shapes = fb_cli_input_shapes (args, error);
  if (shapes == NULL)
    return NULL;
  g_hash_table_iter_init (&it, shapes);
  while (g_hash_table_iter_next (&it, &name, &shape))
    g_hash_table_insert (options->input_shapes, g_strdup (name), g_memdup2 (shape, sizeof (FbShape)));
  return g_steal_pointer (&options);
}
