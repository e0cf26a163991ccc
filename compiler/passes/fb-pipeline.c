/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The pipeline: one flat, named list of passes, a snapshot after each, and re-runs that redo only
 * the stages whose pass or input changed.
 *
 * Every stage owns its graph and never changes once made. A pass runs on a fresh copy of the
 * previous stage's graph (fb_graph_copy shares the weights), so older stages stay valid for the
 * UI while a re-run builds newer ones. Each stage remembers a key made of the options its pass
 * reads; a re-run keeps every stage up to the first one whose key differs and recomputes the
 * rest. Stages are reference counted so that a reader (the UI, drawing them in another thread)
 * keeps the stages it shows alive while a re-run replaces them here. */
#include "fb-pass-private.h"
#include "fb-infer.h"

#include <string.h>

G_DEFINE_QUARK (fb-pipeline-error-quark, fb_pipeline_error)

static const FbPassInfo passes[] = {
  { "cleanup",          _fb_pass_cleanup,          0 },
  { "fold-constants",   _fb_pass_fold_constants,   0 },
  { "simplify",         _fb_pass_simplify,         FB_PASS_READS_NO_FUSE },
  { "cse",              _fb_pass_cse,              0 },
  { "fold-batchnorm",   _fb_pass_fold_batchnorm,   0 },
  { "fuse-epilogue",    _fb_pass_fuse_epilogue,    FB_PASS_READS_NO_FUSE },
  { "fuse-elementwise", _fb_pass_fuse_elementwise, FB_PASS_READS_NO_FUSE },
  { "layout",           _fb_pass_layout,           FB_PASS_READS_LAYOUT },
  { "plan-memory",      _fb_pass_plan_memory,      0 },
};

#define N_PASSES G_N_ELEMENTS (passes)

static const char * const pass_names[] = {
  "cleanup", "fold-constants", "simplify", "cse", "fold-batchnorm", "fuse-epilogue",
  "fuse-elementwise", "layout", "plan-memory", NULL
};

G_STATIC_ASSERT (G_N_ELEMENTS (pass_names) == N_PASSES + 1);

struct _FbPipeline {
  GPtrArray  *stages;              /* FbStage*: import, one per pass, final */
  GPtrArray  *keys;                /* char*: the options each stage was made with */
  FbPassFunc  override[N_PASSES];  /* tests replace a pass to check the verifier */
};

const FbPassInfo *
_fb_pipeline_passes (guint *n_passes)
{
  g_assert (n_passes != NULL);
  *n_passes = N_PASSES;
  return passes;
}

const char * const *
fb_pipeline_pass_names (void)
{
  return pass_names;
}

/* ---- options ------------------------------------------------------------------------------ */

FbPipelineOptions *
fb_pipeline_options_new (void)
{
  FbPipelineOptions *o = g_new0 (FbPipelineOptions, 1);

  o->disabled_passes = g_ptr_array_new_with_free_func (g_free);
  o->no_fuse = g_ptr_array_new_with_free_func (g_free);
  o->layout = FB_LAYOUT_NCHW;
  o->input_shapes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return o;
}

FbPipelineOptions *
fb_pipeline_options_copy (const FbPipelineOptions *options)
{
  FbPipelineOptions *o;
  GHashTableIter it;
  gpointer key, value;

  g_return_val_if_fail (options != NULL, NULL);
  o = fb_pipeline_options_new ();
  for (guint i = 0; options->disabled_passes && i < options->disabled_passes->len; i++)
    g_ptr_array_add (o->disabled_passes, g_strdup (g_ptr_array_index (options->disabled_passes, i)));
  for (guint i = 0; options->no_fuse && i < options->no_fuse->len; i++)
    g_ptr_array_add (o->no_fuse, g_strdup (g_ptr_array_index (options->no_fuse, i)));
  o->layout = options->layout;
  if (options->input_shapes)
    {
      g_hash_table_iter_init (&it, options->input_shapes);
      while (g_hash_table_iter_next (&it, &key, &value))
        g_hash_table_insert (o->input_shapes, g_strdup (key), g_memdup2 (value, sizeof (FbShape)));
    }
  return o;
}

void
fb_pipeline_options_free (FbPipelineOptions *options)
{
  if (options == NULL)
    return;
  g_clear_pointer (&options->disabled_passes, g_ptr_array_unref);
  g_clear_pointer (&options->no_fuse, g_ptr_array_unref);
  g_clear_pointer (&options->input_shapes, g_hash_table_unref);
  g_free (options);
}

static gboolean
str_in (GPtrArray *list, const char *s)
{
  for (guint i = 0; list && i < list->len; i++)
    if (g_str_equal (g_ptr_array_index (list, i), s))
      return TRUE;
  return FALSE;
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

static void
append_sorted (GString *key, GPtrArray *list)
{
  g_autoptr(GPtrArray) sorted = g_ptr_array_new ();

  for (guint i = 0; list && i < list->len; i++)
    g_ptr_array_add (sorted, g_ptr_array_index (list, i));
  g_ptr_array_sort (sorted, compare_strings);
  for (guint i = 0; i < sorted->len; i++)
    {
      const char *s = g_ptr_array_index (sorted, i);
      if (i == 0 || !g_str_equal (s, g_ptr_array_index (sorted, i - 1)))
        g_string_append_printf (key, "%s\n", s);
    }
}

static void
append_shapes (GString *key, GHashTable *shapes)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  GHashTableIter it;
  gpointer name;

  if (shapes == NULL)
    return;
  g_hash_table_iter_init (&it, shapes);
  while (g_hash_table_iter_next (&it, &name, NULL))
    g_ptr_array_add (names, name);
  g_ptr_array_sort (names, compare_strings);
  for (guint i = 0; i < names->len; i++)
    {
      const char *n = g_ptr_array_index (names, i);
      g_autofree char *s = fb_shape_to_string (g_hash_table_lookup (shapes, n));
      g_string_append_printf (key, "%s=%s\n", n, s);
    }
}

/* What decides the result of pass i given the same input: whether it runs, the options it
 * reads, and for the first pass the pinned input shapes it starts from. */
static char *
stage_key (guint i, const FbPipelineOptions *o)
{
  GString *key = g_string_new (NULL);
  const FbPassInfo *p = &passes[i];

  g_string_append_printf (key, "%s\n%d\n", p->name, !str_in (o->disabled_passes, p->name));
  if (p->reads & FB_PASS_READS_NO_FUSE)
    append_sorted (key, o->no_fuse);
  if (p->reads & FB_PASS_READS_LAYOUT)
    g_string_append_printf (key, "layout=%d\n", (int) o->layout);
  if (i == 0)
    append_shapes (key, o->input_shapes);
  return g_string_free (key, FALSE);
}

char *
fb_pipeline_options_to_args (const FbPipelineOptions *options)
{
  g_autoptr(GPtrArray) sorted = g_ptr_array_new ();
  GString *s = g_string_new (NULL);
  GHashTableIter it;
  gpointer name;

  g_return_val_if_fail (options != NULL, NULL);
  for (guint i = 0; options->disabled_passes && i < options->disabled_passes->len; i++)
    g_ptr_array_add (sorted, g_ptr_array_index (options->disabled_passes, i));
  g_ptr_array_sort (sorted, compare_strings);
  for (guint i = 0; i < sorted->len; i++)
    g_string_append_printf (s, "--disable %s ", (const char *) g_ptr_array_index (sorted, i));
  g_ptr_array_set_size (sorted, 0);
  for (guint i = 0; options->no_fuse && i < options->no_fuse->len; i++)
    g_ptr_array_add (sorted, g_ptr_array_index (options->no_fuse, i));
  g_ptr_array_sort (sorted, compare_strings);
  for (guint i = 0; i < sorted->len; i++)
    g_string_append_printf (s, "--no-fuse %s ", (const char *) g_ptr_array_index (sorted, i));
  /* Always written: the default layout depends on the target, so leaving it out says nothing. */
  g_string_append_printf (s, "--layout %s", options->layout == FB_LAYOUT_NHWC ? "nhwc" : "nchw");
  g_ptr_array_set_size (sorted, 0);
  if (options->input_shapes != NULL)
    {
      g_hash_table_iter_init (&it, options->input_shapes);
      while (g_hash_table_iter_next (&it, &name, NULL))
        g_ptr_array_add (sorted, name);
    }
  g_ptr_array_sort (sorted, compare_strings);
  for (guint i = 0; i < sorted->len; i++)
    {
      const char *n = g_ptr_array_index (sorted, i);
      g_autofree char *shape = fb_shape_to_string (g_hash_table_lookup (options->input_shapes, n));
      g_string_append_printf (s, " --input-shape %s=%s", n, shape);
    }
  return g_string_free (s, FALSE);
}

static gboolean
check_options (const FbPipelineOptions *o, GError **error)
{
  for (guint i = 0; o->disabled_passes && i < o->disabled_passes->len; i++)
    {
      const char *name = g_ptr_array_index (o->disabled_passes, i);
      gboolean known = FALSE;
      for (guint k = 0; k < N_PASSES && !known; k++)
        known = g_str_equal (passes[k].name, name);
      if (!known)
        {
          g_autofree char *list = g_strjoinv (", ", (char **) pass_names);
          g_set_error (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_OPTION,
                       "there is no pass named '%s' (the passes are %s)", name, list);
          return FALSE;
        }
    }
  if (o->layout != FB_LAYOUT_NCHW && o->layout != FB_LAYOUT_NHWC)
    {
      g_set_error (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_OPTION,
                   "unknown layout %d", (int) o->layout);
      return FALSE;
    }
  return TRUE;
}

/* ---- stages ------------------------------------------------------------------------------- */

FbStage *
fb_stage_ref (FbStage *stage)
{
  g_return_val_if_fail (stage != NULL, NULL);
  g_atomic_ref_count_inc (&stage->ref_count);
  return stage;
}

void
fb_stage_unref (FbStage *stage)
{
  g_return_if_fail (stage != NULL);
  if (!g_atomic_ref_count_dec (&stage->ref_count))
    return;
  g_free (stage->name);
  fb_graph_free (stage->graph);
  g_clear_pointer (&stage->changes, g_array_unref);
  g_free (stage->summary);
  g_free (stage);
}

static FbStage *
stage_new (const char *name, FbGraph *graph)
{
  FbStage *s = g_new0 (FbStage, 1);

  g_atomic_ref_count_init (&s->ref_count);
  s->name = g_strdup (name);
  s->graph = graph;
  s->enabled = TRUE;
  s->changes = g_array_new (FALSE, TRUE, sizeof (FbChange));
  s->nodes_after = fb_graph_count_nodes (graph, FALSE);
  return s;
}

FbPipeline *
fb_pipeline_new (FbGraph *imported)
{
  FbPipeline *p;
  FbStage *s;

  g_return_val_if_fail (imported != NULL && imported->parent == NULL, NULL);
  p = g_new0 (FbPipeline, 1);
  p->stages = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_stage_unref);
  p->keys = g_ptr_array_new_with_free_func (g_free);
  s = stage_new ("import", imported);
  s->nodes_before = s->nodes_after;
  s->summary = g_strdup_printf ("%u nodes, %u values", s->nodes_after, imported->values->len);
  g_ptr_array_add (p->stages, s);
  g_ptr_array_add (p->keys, g_strdup (""));
  return p;
}

void
fb_pipeline_free (FbPipeline *pipeline)
{
  if (pipeline == NULL)
    return;
  g_ptr_array_unref (pipeline->stages);
  g_ptr_array_unref (pipeline->keys);
  g_free (pipeline);
}

void
_fb_pipeline_override (FbPipeline *pipeline, const char *name, FbPassFunc func)
{
  g_return_if_fail (pipeline != NULL && name != NULL);
  for (guint i = 0; i < N_PASSES; i++)
    if (g_str_equal (passes[i].name, name))
      pipeline->override[i] = func;
  /* The replaced pass and everything after it must be made again. */
  for (guint i = 0; i < N_PASSES; i++)
    if (g_str_equal (passes[i].name, name) && i + 1 < pipeline->keys->len)
      {
        g_free (pipeline->keys->pdata[i + 1]);
        pipeline->keys->pdata[i + 1] = g_strdup ("");
      }
}

static GHashTable *
no_fuse_set (const FbPipelineOptions *o)
{
  GHashTable *set = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; o->no_fuse && i < o->no_fuse->len; i++)
    g_hash_table_add (set, g_ptr_array_index (o->no_fuse, i));
  return set;
}

/* Runs pass i on a copy of prev and makes its stage. */
static FbStage *
run_pass (FbPipeline *p, guint i, const FbGraph *prev, const FbPipelineOptions *o,
          GCancellable *cancellable, GError **error)
{
  const FbPassInfo *info = &passes[i];
  g_autoptr(FbGraph) work = fb_graph_copy (prev);
  g_autoptr(GHashTable) fates = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  g_autoptr(GHashTable) no_fuse = no_fuse_set (o);
  g_autoptr(GString) summary = g_string_new (NULL);
  FbPassContext ctx = { o, no_fuse, cancellable, summary, fates };
  gboolean enabled = !str_in (o->disabled_passes, info->name);
  FbPassFunc func = p->override[i] ? p->override[i] : info->run;
  gint64 t0, t1;
  FbStage *s;

  if (i == 0 && o->input_shapes && g_hash_table_size (o->input_shapes) > 0)
    {
      if (!fb_graph_pin_inputs (work, o->input_shapes, error) || !fb_infer_graph (work, error))
        return NULL;
    }

  t0 = g_get_monotonic_time ();
  if (enabled)
    {
      g_autoptr(GError) local = NULL;
      if (!func (&ctx, work, &local))
        {
          if (g_error_matches (local, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_CANCELLED))
            g_propagate_error (error, g_steal_pointer (&local));
          else
            g_set_error (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_PASS, "pass '%s' failed: %s",
                         info->name, local->message);
          return NULL;
        }
    }
  t1 = g_get_monotonic_time ();

#ifndef NDEBUG
  if (enabled)
    {
      g_autoptr(GError) local = NULL;
      if (!_fb_pipeline_verify (work, &local))
        {
          g_set_error (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_PASS,
                       "pass '%s' broke an invariant: %s", info->name, local->message);
          return NULL;
        }
    }
#endif

  s = stage_new (info->name, g_steal_pointer (&work));
  s->enabled = enabled;
  s->wall_ms = (t1 - t0) / 1000.0;
  s->nodes_before = fb_graph_count_nodes (prev, FALSE);
  g_array_unref (s->changes);
  s->changes = _fb_stage_diff (prev, s->graph, fates);
  if (!enabled)
    s->summary = g_strdup ("disabled");
  else if (summary->len > 0)
    s->summary = g_strdup (summary->str);
  else
    s->summary = g_strdup ("no change");
  return s;
}

/* Stage k (k >= 1) is pass k - 1; the first whose key changed goes, and everything after it. */
static guint
first_stale (FbPipeline *pipeline, const FbPipelineOptions *options)
{
  for (guint i = 0; i < N_PASSES; i++)
    {
      g_autofree char *key = stage_key (i, options);
      if (i + 1 >= pipeline->stages->len ||
          !g_str_equal (key, g_ptr_array_index (pipeline->keys, i + 1)))
        return i + 1;
    }
  /* Only "final" can be missing (a run that failed before making it). */
  return pipeline->stages->len == N_PASSES + 2 ? N_PASSES + 2 : N_PASSES + 1;
}

guint
fb_pipeline_first_stale (FbPipeline *pipeline, const FbPipelineOptions *options)
{
  g_autoptr(FbPipelineOptions) defaults = NULL;

  g_return_val_if_fail (pipeline != NULL, 0);
  if (options == NULL)
    options = defaults = fb_pipeline_options_new ();
  return first_stale (pipeline, options);
}

/* A model that loaded with nodes this project cannot compute (FbModel.problems) keeps its import
 * stage, to be drawn, and the passes do not run: say which node stops them and why. */
static gboolean
check_problems (FbPipeline *pipeline, GError **error)
{
  FbStage *import = g_ptr_array_index (pipeline->stages, 0);
  GHashTable *problems = import->graph->model->problems;
  g_autofree gpointer *names = NULL;
  guint n = 0;

  if (problems == NULL || g_hash_table_size (problems) == 0)
    return TRUE;
  names = g_hash_table_get_keys_as_array (problems, &n);
  /* The first in the import's node order, so that the message is the same on every run. */
  for (guint i = 0; i < import->graph->nodes->len; i++)
    {
      const FbNode *node = g_ptr_array_index (import->graph->nodes, i);
      const char *why = g_hash_table_lookup (problems, node->name);
      if (why != NULL)
        {
          /* Inference's own messages already name the node. */
          if (g_str_has_prefix (why, "node '"))
            g_set_error (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_UNSUPPORTED, "%s%s", why,
                         n > 1 ? " (and other nodes: see fusebench info)" : "");
          else
            g_set_error (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_UNSUPPORTED,
                         "node '%s' (%s): %s%s", node->name, node->op_type, why,
                         n > 1 ? " (and other nodes: see fusebench info)" : "");
          return FALSE;
        }
    }
  g_set_error (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_UNSUPPORTED,
               "node '%s': %s", (const char *) names[0],
               (const char *) g_hash_table_lookup (problems, names[0]));
  return FALSE;
}

gboolean
fb_pipeline_run (FbPipeline *pipeline, const FbPipelineOptions *options,
                 GCancellable *cancellable,
                 void (*progress) (guint done, guint total, gpointer data),
                 gpointer data, GError **error)
{
  g_autoptr(FbPipelineOptions) defaults = NULL;
  guint first;
  guint total = N_PASSES + 2;

  g_return_val_if_fail (pipeline != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (options == NULL)
    options = defaults = fb_pipeline_options_new ();
  if (!check_options (options, error) || !check_problems (pipeline, error))
    return FALSE;

  first = first_stale (pipeline, options);
  if (first >= pipeline->stages->len && pipeline->stages->len == total)
    {
      if (progress)
        progress (total, total, data);
      return TRUE;
    }
  g_ptr_array_set_size (pipeline->stages, MIN (first, pipeline->stages->len));
  g_ptr_array_set_size (pipeline->keys, MIN (first, pipeline->keys->len));

  for (guint i = first - 1; i < N_PASSES; i++)
    {
      FbStage *prev = g_ptr_array_index (pipeline->stages, pipeline->stages->len - 1);
      FbStage *s;

      if (cancellable && g_cancellable_is_cancelled (cancellable))
        {
          g_set_error_literal (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_CANCELLED, "cancelled");
          return FALSE;
        }
      s = run_pass (pipeline, i, prev->graph, options, cancellable, error);
      if (s == NULL)
        return FALSE;
      g_ptr_array_add (pipeline->stages, s);
      g_ptr_array_add (pipeline->keys, stage_key (i, options));
      if (progress)
        progress (pipeline->stages->len, total, data);
    }

  {
    FbStage *last = g_ptr_array_index (pipeline->stages, pipeline->stages->len - 1);
    FbStage *fin = stage_new ("final", fb_graph_copy (last->graph));
    fin->nodes_before = last->nodes_after;
    fin->summary = g_strdup_printf ("%u nodes (%u imported)", fin->nodes_after,
                                    ((FbStage *) g_ptr_array_index (pipeline->stages, 0))->nodes_after);
    g_ptr_array_add (pipeline->stages, fin);
    g_ptr_array_add (pipeline->keys, g_strdup (""));
  }
  if (progress)
    progress (total, total, data);
  return TRUE;
}

guint
fb_pipeline_n_stages (FbPipeline *pipeline)
{
  g_return_val_if_fail (pipeline != NULL, 0);
  return pipeline->stages->len;
}

FbStage *
fb_pipeline_stage (FbPipeline *pipeline, guint index)
{
  g_return_val_if_fail (pipeline != NULL, NULL);
  g_return_val_if_fail (index < pipeline->stages->len, NULL);
  return g_ptr_array_index (pipeline->stages, index);
}

FbStage *
fb_pipeline_stage_by_name (FbPipeline *pipeline, const char *name)
{
  g_return_val_if_fail (pipeline != NULL && name != NULL, NULL);
  for (guint i = 0; i < pipeline->stages->len; i++)
    {
      FbStage *s = g_ptr_array_index (pipeline->stages, i);
      if (g_str_equal (s->name, name))
        return s;
    }
  return NULL;
}

GPtrArray *
fb_pipeline_dup_stages (FbPipeline *pipeline)
{
  GPtrArray *stages;

  g_return_val_if_fail (pipeline != NULL, NULL);
  stages = g_ptr_array_new_full (pipeline->stages->len, (GDestroyNotify) fb_stage_unref);
  for (guint i = 0; i < pipeline->stages->len; i++)
    g_ptr_array_add (stages, fb_stage_ref (g_ptr_array_index (pipeline->stages, i)));
  return stages;
}

FbGraph *
fb_pipeline_final (FbPipeline *pipeline)
{
  FbStage *s;

  g_return_val_if_fail (pipeline != NULL, NULL);
  s = g_ptr_array_index (pipeline->stages, pipeline->stages->len - 1);
  return g_str_equal (s->name, "final") ? s->graph : NULL;
}
