/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench export MODEL --stage NAME --format svg|png|pdf|dot|onnx -o FILE
 *                  [--profile FILE [--metric time|share|bytes|bandwidth|roofline]] [PIPELINE]
 *
 * A picture given --profile has the profile painted on its boxes as the window paints it (any
 * stage: each node's attributed cost), with the legend; a profile of another model or of other
 * toggles is refused (exit status 2), as the window refuses it.
 *
 * Writes one stage of the pipeline ("import", a pass name, or "final") as a picture of its
 * graph (SVG, PDF or PNG, drawn by the workbench's own layout and drawing code, with the
 * groups expanded that the window opens it with), as Graphviz DOT (every node), or as an ONNX model that other runtimes load: FUSED nodes
 * inlined and channels-last nodes written back in ONNX's layout (fb-onnx-portable.c). The
 * binary artifacts (objects, shared library) come from `compile`. The file is written whole
 * into a temporary beside FILE and renamed over it. */
#include "fb-config.h"
#include "fb-cli-load.h"
#include "fb-dot.h"
#include "fb-onnx-export.h"

#include "fb-profile.h"

#if FB_CLI_HAS_GTK
#include "fb-graph-picture.h"
#endif

#include <stdio.h>
#include <string.h>

typedef enum {
  FORMAT_SVG,
  FORMAT_PDF,
  FORMAT_PNG,
  FORMAT_DOT,
  FORMAT_ONNX,
} Format;

static const char * const format_names[] = { "svg", "pdf", "png", "dot", "onnx", NULL };

static gboolean
parse_format (const char *name, Format *format)
{
  for (guint i = 0; name != NULL && format_names[i]; i++)
    if (g_ascii_strcasecmp (name, format_names[i]) == 0)
      {
        *format = (Format) i;
        return TRUE;
      }
  return FALSE;
}

static gboolean
known_stage (const char *name)
{
  const char * const *passes = fb_pipeline_pass_names ();

  if (g_str_equal (name, "import") || g_str_equal (name, "final"))
    return TRUE;
  for (guint i = 0; passes[i]; i++)
    if (g_str_equal (passes[i], name))
      return TRUE;
  return FALSE;
}

static gboolean
known_metric (const char *name)
{
  const char *const names[] = { "time", "share", "bytes", "bandwidth", "roofline" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_str_equal (name, names[i]))
      return TRUE;
  return FALSE;
}

static char *
stage_list (void)
{
  const char * const *passes = fb_pipeline_pass_names ();
  GString *s = g_string_new ("import");

  for (guint i = 0; passes[i]; i++)
    g_string_append_printf (s, ", %s", passes[i]);
  g_string_append (s, ", final");
  return g_string_free (s, FALSE);
}

static GBytes *
render (FbGraph *graph, Format format, FbProfile *profile, const char *metric, GError **error)
{
  switch (format)
    {
    case FORMAT_DOT:
      {
        char *dot = fb_graph_to_dot (graph);
        return g_bytes_new_take (dot, strlen (dot));
      }
    case FORMAT_ONNX:
      return fb_onnx_export_portable (graph, error);
    case FORMAT_SVG:
    case FORMAT_PDF:
    case FORMAT_PNG:
#if FB_CLI_HAS_GTK
      return fb_graph_picture_render_profiled (graph, (FbGraphPictureFormat) (format - FORMAT_SVG),
                                               profile, fb_profile_metric_from_nick (metric),
                                               NULL, error);
#endif
    default:
      break;
    }
  g_assert_not_reached ();
  return NULL;
}

/* The profile at path if it was made for the model of pipeline with these toggles. */
static FbProfile *
matching_profile (const char *path, FbPipeline *pipeline, const FbCliPipelineArgs *pipeline_args,
                  GError **error)
{
  g_autoptr(FbProfile) profile = fb_profile_load (path, error);
  g_autoptr(FbPipelineOptions) options = NULL;
  if (profile == NULL || (options = fb_cli_pipeline_options (pipeline_args, error)) == NULL)
    return NULL;
  FbStage *import = fb_pipeline_stage_by_name (pipeline, "import");
  if (!fb_profile_matches (profile, import->graph->model, options, error))
    {
      g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  return g_steal_pointer (&profile);
}

static int
export_stage (const char *model, const char *stage_name, Format format, const char *output,
              const char *profile_path, const char *metric,
              const FbCliPipelineArgs *pipeline_args)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipeline) pipeline = fb_cli_load_model (model, pipeline_args, &error);
  g_autoptr(GBytes) bytes = NULL;
  FbStage *stage;
  gsize size;
  const char *data;

  if (pipeline == NULL)
    return fb_cli_fail (error);
  stage = fb_pipeline_stage_by_name (pipeline, stage_name);
  if (stage == NULL)
    {
      fprintf (stderr, "fusebench export: %s: the pipeline made no stage '%s'\n", model, stage_name);
      return FB_EXIT_WORK;
    }
  g_autoptr(FbProfile) profile = NULL;
  if (profile_path != NULL &&
      (profile = matching_profile (profile_path, pipeline, pipeline_args, &error)) == NULL)
    {
      fprintf (stderr, "fusebench export: %s\n", error->message);
      return FB_EXIT_INPUT;
    }
  bytes = render (stage->graph, format, profile, metric, &error);
  if (bytes == NULL)
    {
      g_prefix_error (&error, "%s, stage %s: ", model, stage_name);
      return fb_cli_fail (error);
    }
  data = g_bytes_get_data (bytes, &size);
  if (!g_file_set_contents (output, data, size, &error))
    return fb_cli_fail (error);
  return FB_EXIT_OK;
}

int
fb_cli_export (int argc, char **argv)
{
  g_autofree char *stage = NULL;
  g_autofree char *format_name = NULL;
  g_autofree char *output = NULL;
  g_autofree char *profile = NULL;
  g_autofree char *metric = NULL;
  FbCliPipelineArgs pipeline = { 0 };
  const GOptionEntry entries[] = {
    { "stage", 0, 0, G_OPTION_ARG_STRING, &stage,
      "The stage to write: import, a pass name, or final", "NAME" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format_name,
      "svg, png or pdf (a picture), dot (Graphviz), onnx (a model other runtimes load)", "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "The file to write", "FILE" },
    { "profile", 0, 0, G_OPTION_ARG_FILENAME, &profile,
      "A picture: paint this profile (fusebench profile -o) on the boxes", "FILE" },
    { "metric", 0, 0, G_OPTION_ARG_STRING, &metric,
      "What the profile's colours show: time, share (default), bytes, bandwidth or roofline",
      "METRIC" },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    g_option_context_new ("MODEL — write one stage as a picture, DOT or an ONNX model");
  g_autoptr(GError) error = NULL;
  Format format;
  int status;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_add_group (context, fb_cli_pipeline_group (&pipeline));
  if (!g_option_context_parse (context, &argc, &argv, &error))
    status = fb_cli_fail (error);
  else if (argc != 2 || stage == NULL || format_name == NULL || output == NULL)
    {
      fprintf (stderr, "fusebench export: expected MODEL, --stage NAME, --format FORMAT and "
                       "-o FILE (see --help)\n");
      status = FB_EXIT_INPUT;
    }
  else if (!parse_format (format_name, &format))
    {
      fprintf (stderr, "fusebench export: --format %s: expected svg, png, pdf, dot or onnx\n",
               format_name);
      status = FB_EXIT_INPUT;
    }
  else if (!known_stage (stage))
    {
      g_autofree char *names = stage_list ();
      fprintf (stderr, "fusebench export: --stage %s: not a stage; the stages are %s\n", stage,
               names);
      status = FB_EXIT_INPUT;
    }
  else if ((profile != NULL || metric != NULL) && format > FORMAT_PNG)
    {
      fprintf (stderr, "fusebench export: --profile and --metric paint a picture: use --format "
                       "svg, png or pdf\n");
      status = FB_EXIT_INPUT;
    }
  else if (metric != NULL && !known_metric (metric))
    {
      fprintf (stderr, "fusebench export: --metric %s: expected time, share, bytes, bandwidth or "
                       "roofline\n", metric);
      status = FB_EXIT_INPUT;
    }
  else if (!FB_CLI_HAS_GTK && format <= FORMAT_PNG)
    {
      fprintf (stderr, "fusebench export: --format %s: pictures are drawn by the workbench's "
                       "graph code, which this build (configured with -Dgtk=false) does not "
                       "have; dot and onnx work here\n", format_name);
      status = FB_EXIT_INPUT;
    }
  else
    status = export_stage (argv[1], stage, format, output, profile, metric ? metric : "share",
                           &pipeline);

  fb_cli_pipeline_args_clear (&pipeline);
  return status;
}
