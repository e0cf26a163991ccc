/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-specialize.h"
#include "fb-onnx-import.h"

typedef struct {
  FbPipeline      *pipeline;
  const FbBackend *backend;
  FbCompiled      *compiled;   /* NULL for the interpreter */
} Entry;

struct _FbSpecializer {
  char              *path;
  FbPipelineOptions *options;
  const FbBackend   *backend;    /* NULL: the interpreter runs it */
  FbBackendOptions   backend_options;
  FbGraph           *graph;      /* imported with the options' pins only */
  gboolean           graph_given; /* graph became the pipeline of the unpinned specialization,
                                     which owns it now (it lives as long as the cache) */
  GHashTable        *cache;      /* signature -> Entry* */
  guint              n_compiled;
};

static void
entry_free (Entry *e)
{
  if (e->compiled != NULL)
    e->backend->free (e->compiled);
  if (e->pipeline != NULL)
    fb_pipeline_free (e->pipeline);
  g_free (e);
}

FbSpecializer *
fb_specializer_new (const char *path, const FbPipelineOptions *options,
                    const FbBackend *backend, const FbBackendOptions *backend_options,
                    GError **error)
{
  g_autoptr(FbSpecializer) spec = g_new0 (FbSpecializer, 1);

  g_return_val_if_fail (path != NULL && options != NULL, NULL);
  spec->path = g_strdup (path);
  spec->options = fb_pipeline_options_copy (options);
  spec->backend = backend;
  if (backend_options != NULL)
    spec->backend_options = *backend_options;
  spec->cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) entry_free);
  spec->graph = fb_onnx_import_file (path, options->input_shapes, error);
  if (spec->graph == NULL)
    return NULL;
  return g_steal_pointer (&spec);
}

void
fb_specializer_free (FbSpecializer *spec)
{
  if (spec == NULL)
    return;
  g_hash_table_unref (spec->cache);
  if (spec->graph != NULL && !spec->graph_given)
    fb_graph_free (spec->graph);
  fb_pipeline_options_free (spec->options);
  g_free (spec->path);
  g_free (spec);
}

const FbGraph *
fb_specializer_graph (FbSpecializer *spec)
{
  g_return_val_if_fail (spec != NULL, NULL);
  return spec->graph;
}

guint
fb_specializer_n_compiled (FbSpecializer *spec)
{
  g_return_val_if_fail (spec != NULL, 0);
  return spec->n_compiled;
}

/* Sequences and optionals have no shape to pin: their length is a run-time matter. */
static gboolean
input_is_dynamic (const FbValue *v)
{
  return v->kind == FB_KIND_TENSOR && !fb_shape_is_static (&v->shape);
}

void
fb_pins_from_inputs (const FbGraph *graph, GPtrArray *inputs, GHashTable *pins)
{
  g_return_if_fail (graph != NULL && pins != NULL);
  for (guint i = 0; inputs != NULL && i < inputs->len && i < graph->inputs->len; i++)
    {
      const FbValue *v = g_ptr_array_index (graph->inputs, i);
      const FbTensor *t = g_ptr_array_index (inputs, i);

      if (t == NULL || t->kind != FB_KIND_TENSOR || !input_is_dynamic (v) ||
          g_hash_table_contains (pins, v->name))
        continue;
      FbShape s = fb_tensor_shape (t);
      g_hash_table_insert (pins, g_strdup (v->name), g_memdup2 (&s, sizeof s));
    }
}

char *
fb_input_signature (const FbGraph *graph, GPtrArray *inputs)
{
  GString *sig = g_string_new (NULL);

  g_return_val_if_fail (graph != NULL, NULL);
  for (guint i = 0; inputs != NULL && i < inputs->len && i < graph->inputs->len; i++)
    {
      const FbValue *v = g_ptr_array_index (graph->inputs, i);
      const FbTensor *t = g_ptr_array_index (inputs, i);

      if (t == NULL || t->kind != FB_KIND_TENSOR || !input_is_dynamic (v))
        continue;
      FbShape s = fb_tensor_shape (t);
      g_autofree char *text = fb_shape_to_string (&s);
      g_string_append_printf (sig, "%s%s=%s", sig->len ? ";" : "", v->name, text);
    }
  return g_string_free (sig, FALSE);
}

FbPipelineOptions *
fb_specializer_options_for (FbSpecializer *spec, GPtrArray *inputs)
{
  FbPipelineOptions *options;

  g_return_val_if_fail (spec != NULL, NULL);
  options = fb_pipeline_options_copy (spec->options);
  fb_pins_from_inputs (spec->graph, inputs, options->input_shapes);
  return options;
}

/* The pipeline (and what it compiled) for the specialization with options; NULL with an
 * error. unpinned: the inputs pin nothing the options did not, so the graph already imported
 * is the one to run (the model is read once), unless an earlier specialization took it. */
static Entry *
make_entry (FbSpecializer *spec, const FbPipelineOptions *options, gboolean unpinned,
            GError **error)
{
  gboolean take = unpinned && !spec->graph_given;
  FbGraph *graph = take ? spec->graph
                        : fb_onnx_import_file (spec->path, options->input_shapes, error);
  if (graph == NULL)
    return NULL;
  spec->graph_given |= take;
  Entry *e = g_new0 (Entry, 1);
  e->pipeline = fb_pipeline_new (graph);
  e->backend = spec->backend;
  if (fb_pipeline_run (e->pipeline, options, NULL, NULL, NULL, error) &&
      (spec->backend == NULL ||
       (e->compiled = spec->backend->compile (spec->backend, fb_pipeline_final (e->pipeline),
                                              &spec->backend_options, error)) != NULL))
    return e;
  entry_free (e);
  if (take)
    {
      /* The graph went with the pipeline: read it again for the next inputs. */
      spec->graph = fb_onnx_import_file (spec->path, spec->options->input_shapes, NULL);
      spec->graph_given = FALSE;
    }
  return NULL;
}

gboolean
fb_specializer_prepare (FbSpecializer *spec, GPtrArray *inputs, FbPipeline **pipeline,
                        FbCompiled **compiled, GError **error)
{
  g_autofree char *sig = NULL;
  Entry *e;

  g_return_val_if_fail (spec != NULL && pipeline != NULL, FALSE);
  sig = fb_input_signature (spec->graph, inputs);
  e = g_hash_table_lookup (spec->cache, sig);
  if (e == NULL)
    {
      g_autoptr(FbPipelineOptions) options = fb_specializer_options_for (spec, inputs);
      if ((e = make_entry (spec, options, sig[0] == '\0', error)) == NULL)
        return FALSE;
      spec->n_compiled++;
      g_hash_table_insert (spec->cache, g_strdup (sig), e);
    }
  *pipeline = e->pipeline;
  if (compiled != NULL)
    *compiled = e->compiled;
  return TRUE;
}
