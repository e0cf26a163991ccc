/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-test-passes.h"
#include "fb-compare.h"
#include "fb-infer.h"
#include "fb-interp.h"

#include <stdarg.h>

FbGraph *
tp_graph (int opset)
{
  g_autoptr(FbModel) model = fb_model_new (NULL);
  FbGraph *g;

  g_hash_table_insert (model->opsets, g_strdup (""), GINT_TO_POINTER (opset));
  g = fb_graph_new (model);
  g->name = fb_arena_strdup (g->arena, "test");
  return g;
}

FbValue *
tp_input (FbGraph *graph, const char *name, int rank, const int64_t *dims)
{
  FbShape s = fb_shape_make (rank, dims);
  FbValue *v = fb_graph_add_value (graph, name, FB_DTYPE_FLOAT32, &s);

  v->is_input = TRUE;
  g_ptr_array_add (graph->inputs, v);
  return v;
}

FbValue *
tp_const (FbGraph *graph, const char *name, int rank, const int64_t *dims, const double *values)
{
  g_autoptr(FbTensor) t = fb_tensor_new (FB_DTYPE_FLOAT32, rank, dims, NULL);
  g_autoptr(GRand) rand = g_rand_new_with_seed (g_str_hash (name));

  for (int64_t i = 0; i < t->numel; i++)
    fb_tensor_set_f64 (t, i, values ? values[i] : g_rand_double_range (rand, -1.0, 1.0));
  return fb_graph_add_constant (graph, name, t);
}

FbValue *
tp_scalar (FbGraph *graph, double value)
{
  g_autoptr(FbTensor) t = fb_tensor_new_scalar_f32 ((float) value);
  g_autofree char *name = g_strdup_printf ("scalar_%u", graph->values->len);
  return fb_graph_add_constant (graph, name, t);
}

FbValue *
tp_ints (FbGraph *graph, guint n, const int64_t *values)
{
  int64_t len = n;
  g_autoptr(FbTensor) t = fb_tensor_new (FB_DTYPE_INT64, 1, &len, NULL);
  g_autofree char *name = g_strdup_printf ("ints_%u", graph->values->len);

  for (guint i = 0; i < n; i++)
    ((int64_t *) fb_tensor_data_mut (t))[i] = values[i];
  return fb_graph_add_constant (graph, name, t);
}

/* A node of op reading inputs with n_outputs outputs, recorded in the model's table of
 * original nodes as import does; outputs named NAME_out (NAME_outK past the first). */
static void
add_op (FbGraph *graph, FbOpKind op, const char *name, GPtrArray *inputs, guint n_outputs,
        FbValue **outputs)
{
  FbOrigNode orig = { g_strdup (name), g_strdup (fb_op_name (op)) };
  guint prov = graph->model->orig_nodes->len;
  FbNode *n = fb_graph_add_node (graph, op, name, inputs->len, n_outputs);
  for (guint i = 0; i < inputs->len; i++)
    n->inputs[i] = g_ptr_array_index (inputs, i);
  for (guint k = 0; k < n_outputs; k++)
    {
      g_autofree char *out_name = k == 0 ? g_strdup_printf ("%s_out", name)
                                         : g_strdup_printf ("%s_out%u", name, k);
      outputs[k] = fb_graph_add_value (graph, out_name, FB_DTYPE_UNDEFINED, NULL);
      fb_node_set_output (n, k, outputs[k]);
    }
  g_array_append_val (graph->model->orig_nodes, orig);
  graph->model->n_top_nodes = graph->model->orig_nodes->len;
  fb_node_add_prov (graph, n, &prov, 1);
  /* Attributes the operator needs may come next (tp_attr_*); tp_output checks it all. */
  fb_infer_node (graph, n, NULL);
}

static GPtrArray *
collect_inputs (va_list args)
{
  GPtrArray *inputs = g_ptr_array_new ();
  FbValue *in;
  while ((in = va_arg (args, FbValue *)) != NULL)
    g_ptr_array_add (inputs, in);
  return inputs;
}

FbValue *
tp_op (FbGraph *graph, FbOpKind op, const char *name, ...)
{
  FbValue *out;
  va_list args;
  va_start (args, name);
  g_autoptr(GPtrArray) inputs = collect_inputs (args);
  va_end (args);
  add_op (graph, op, name, inputs, 1, &out);
  return out;
}

void
tp_op_outputs (FbGraph *graph, FbOpKind op, const char *name, guint n_outputs, FbValue **outputs,
               ...)
{
  va_list args;
  va_start (args, outputs);
  g_autoptr(GPtrArray) inputs = collect_inputs (args);
  va_end (args);
  add_op (graph, op, name, inputs, n_outputs, outputs);
}

FbNode *
tp_node_of (FbValue *v)
{
  g_assert_nonnull (v->producer);
  return v->producer;
}

void
tp_reinfer (FbGraph *graph, FbValue *v)
{
  v->dtype = FB_DTYPE_UNDEFINED;
  v->shape = fb_shape_unknown ();
  fb_infer_node (graph, tp_node_of (v), NULL);
}

void
tp_attr_int (FbGraph *graph, FbValue *v, const char *name, int64_t value)
{
  FbAttr a = { .name = name, .type = FB_ATTR_INT, .i = value };
  fb_node_set_attr (graph, tp_node_of (v), &a);
  tp_reinfer (graph, v);
}

void
tp_attr_float (FbGraph *graph, FbValue *v, const char *name, float value)
{
  FbAttr a = { .name = name, .type = FB_ATTR_FLOAT, .f = value };
  fb_node_set_attr (graph, tp_node_of (v), &a);
  tp_reinfer (graph, v);
}

void
tp_attr_ints (FbGraph *graph, FbValue *v, const char *name, guint n, const int64_t *values)
{
  FbAttr a = { .name = name, .type = FB_ATTR_INTS };
  a.ints.n = n;
  a.ints.v = (int64_t *) values;
  fb_node_set_attr (graph, tp_node_of (v), &a);
  tp_reinfer (graph, v);
}

void
tp_attr_string (FbGraph *graph, FbValue *v, const char *name, const char *value)
{
  FbAttr a = { .name = name, .type = FB_ATTR_STRING, .s = value };
  fb_node_set_attr (graph, tp_node_of (v), &a);
  tp_reinfer (graph, v);
}

void
tp_output (FbGraph *graph, FbValue *v)
{
  g_autoptr(GError) error = NULL;

  v->is_output = TRUE;
  g_ptr_array_add (graph->outputs, v);
  g_assert_true (fb_graph_verify (graph, &error));
  g_assert_no_error (error);
  if (!fb_infer_graph (graph, &error))
    g_error ("%s", error->message);
}

FbPipelineOptions *
tp_only (const char *first, ...)
{
  FbPipelineOptions *o = fb_pipeline_options_new ();
  g_autoptr(GPtrArray) keep = g_ptr_array_new ();
  va_list args;

  va_start (args, first);
  for (const char *p = first; p != NULL; p = va_arg (args, const char *))
    g_ptr_array_add (keep, (gpointer) p);
  va_end (args);
  for (const char * const *p = fb_pipeline_pass_names (); *p; p++)
    {
      gboolean kept = FALSE;
      for (guint i = 0; i < keep->len && !kept; i++)
        kept = g_str_equal (*p, g_ptr_array_index (keep, i));
      if (!kept)
        g_ptr_array_add (o->disabled_passes, g_strdup (*p));
    }
  return o;
}

FbPipeline *
tp_run (FbGraph *graph, const FbPipelineOptions *options)
{
  g_autoptr(GError) error = NULL;
  FbPipeline *p = fb_pipeline_new (graph);

  g_assert_true (fb_pipeline_run (p, options, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  return p;
}

static FbTensor *
random_input (const FbValue *v, GRand *rand)
{
  FbTensor *t;

  g_assert_true (fb_shape_is_static (&v->shape));
  t = fb_tensor_new (v->dtype, v->shape.rank, v->shape.dim, NULL);
  g_assert_nonnull (t);
  for (int64_t i = 0; i < t->numel; i++)
    fb_tensor_set_f64 (t, i, fb_dtype_is_float (v->dtype) ? g_rand_double_range (rand, -2.0, 2.0)
                                                          : g_rand_int_range (rand, 0, 8));
  return t;
}

void
tp_assert_stages_agree (FbPipeline *pipeline, guint32 seed)
{
  FbGraph *reference = fb_pipeline_stage (pipeline, 0)->graph;
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  g_autoptr(GPtrArray) expected = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < reference->inputs->len; i++)
    {
      FbValue *v = g_ptr_array_index (reference->inputs, i);
      g_ptr_array_add (inputs, v->constant ? NULL : random_input (v, rand));
    }
  expected = fb_interp_run (reference, inputs, NULL, &error);
  g_assert_no_error (error);

  for (guint s = 1; s < fb_pipeline_n_stages (pipeline); s++)
    {
      FbStage *stage = fb_pipeline_stage (pipeline, s);
      g_autoptr(GPtrArray) outputs = fb_interp_run (stage->graph, inputs, NULL, &error);
      if (error != NULL)
        g_error ("stage %s does not run: %s", stage->name, error->message);
      g_assert_cmpuint (outputs->len, ==, expected->len);
      for (guint k = 0; k < outputs->len; k++)
        {
          FbCompare c = { 0 };
          fb_tensor_compare (g_ptr_array_index (expected, k), g_ptr_array_index (outputs, k),
                             1e-4, 1e-5, &c);
          if (!c.ok)
            g_error ("stage %s, output %u: %s", stage->name, k, c.reason);
          fb_compare_clear (&c);
        }
    }
}

static guint
count_in (const FbGraph *g, FbOpKind op, gboolean recursive)
{
  guint n = 0;

  for (guint i = 0; i < g->nodes->len; i++)
    {
      const FbNode *node = g_ptr_array_index (g->nodes, i);
      if (node->op == op)
        n++;
      if (recursive && node->op == FB_OP_FUSED)
        n += count_in (fb_node_attr_graph (node, "body"), op, TRUE);
    }
  return n;
}

guint
tp_count (const FbGraph *graph, FbOpKind op, gboolean recursive)
{
  return count_in (graph, op, recursive);
}

FbNode *
tp_find (const FbGraph *graph, FbOpKind op)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);
      if (n->op == op)
        return n;
    }
  return NULL;
}

const FbChange *
tp_change (const FbStage *stage, guint node_id)
{
  for (guint i = 0; i < stage->changes->len; i++)
    {
      const FbChange *c = &g_array_index (stage->changes, FbChange, i);
      if (c->node_id == node_id)
        return c;
    }
  return NULL;
}

FbGraph *
tp_stage_graph (FbPipeline *pipeline, const char *name)
{
  FbStage *s = fb_pipeline_stage_by_name (pipeline, name);
  g_assert_nonnull (s);
  return s->graph;
}
