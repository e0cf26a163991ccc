/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-test-interp.h"

#include <math.h>
#include <string.h>

static GPtrArray *pool_tensors;
static GPtrArray *pool_graphs;

static FbTensor *
keep (FbTensor *t)
{
  if (pool_tensors == NULL)
    pool_tensors = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_ptr_array_add (pool_tensors, t);
  return t;
}

void
ti_done (void)
{
  g_clear_pointer (&pool_tensors, g_ptr_array_unref);
  g_clear_pointer (&pool_graphs, g_ptr_array_unref);
}

FbGraph *
ti_graph (int opset)
{
  g_autoptr(FbModel) model = fb_model_new (NULL);
  FbGraph *g;

  g_hash_table_insert (model->opsets, g_strdup (""), GINT_TO_POINTER (opset));
  g = fb_graph_new (model);
  if (pool_graphs == NULL)
    pool_graphs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_graph_free);
  g_ptr_array_add (pool_graphs, g);
  return g;
}

FbNode *
ti_node (FbGraph *graph, FbOpKind op, guint n_inputs, guint n_outputs)
{
  static guint counter;
  g_autofree char *name = g_strdup_printf ("%s_%u", fb_op_name (op), ++counter);
  FbNode *n = fb_graph_add_node (graph, op, name, n_inputs, n_outputs);

  for (guint k = 0; k < n_inputs; k++)
    {
      g_autofree char *vn = g_strdup_printf ("%s_in%u", name, k);
      n->inputs[k] = fb_graph_add_value (graph, vn, FB_DTYPE_UNDEFINED, NULL);
    }
  for (guint k = 0; k < n_outputs; k++)
    {
      g_autofree char *vn = g_strdup_printf ("%s_out%u", name, k);
      fb_node_set_output (n, k, fb_graph_add_value (graph, vn, FB_DTYPE_UNDEFINED, NULL));
    }
  return n;
}

void
ti_attr_int (FbGraph *graph, FbNode *node, const char *name, int64_t v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_INT, .i = v };
  fb_node_set_attr (graph, node, &a);
}

void
ti_attr_float (FbGraph *graph, FbNode *node, const char *name, float v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_FLOAT, .f = v };
  fb_node_set_attr (graph, node, &a);
}

void
ti_attr_string (FbGraph *graph, FbNode *node, const char *name, const char *v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_STRING, .s = v };
  fb_node_set_attr (graph, node, &a);
}

void
ti_attr_ints (FbGraph *graph, FbNode *node, const char *name, guint n, const int64_t *v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_INTS, .ints = { n, (int64_t *) v } };
  fb_node_set_attr (graph, node, &a);
}

void
ti_attr_floats (FbGraph *graph, FbNode *node, const char *name, guint n, const float *v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_FLOATS, .floats = { n, (float *) v } };
  fb_node_set_attr (graph, node, &a);
}

void
ti_attr_strings (FbGraph *graph, FbNode *node, const char *name, guint n, const char **v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_STRINGS, .strings = { n, v } };
  fb_node_set_attr (graph, node, &a);
}

void
ti_attr_tensor (FbGraph *graph, FbNode *node, const char *name, FbTensor *t)
{
  FbAttr a = { .name = name, .type = FB_ATTR_TENSOR, .t = t };
  fb_node_set_attr (graph, node, &a);
}

void
ti_attr_graph (FbGraph *graph, FbNode *node, const char *name, FbGraph *sub)
{
  FbAttr a = { .name = name, .type = FB_ATTR_GRAPH, .g = sub };
  fb_node_set_attr (graph, node, &a);
}

FbTensor *
ti_tensor (FbDType dtype, int rank, const int64_t *dims, const double *values)
{
  FbTensor *t = fb_tensor_new (dtype, rank, dims, NULL);

  g_assert_nonnull (t);
  for (int64_t i = 0; values && i < t->numel; i++)
    fb_tensor_set_f64 (t, i, values[i]);
  return keep (t);
}

FbTensor *
ti_f32 (int rank, const int64_t *dims, const double *values)
{
  return ti_tensor (FB_DTYPE_FLOAT32, rank, dims, values);
}

FbTensor *
ti_i64 (int rank, const int64_t *dims, const int64_t *values)
{
  FbTensor *t = fb_tensor_new (FB_DTYPE_INT64, rank, dims, NULL);

  g_assert_nonnull (t);
  if (t->numel > 0)
    memcpy (fb_tensor_data_mut (t), values, sizeof (int64_t) * t->numel);
  return keep (t);
}

FbTensor *
ti_random (int rank, const int64_t *dims, guint32 seed)
{
  FbTensor *t = fb_tensor_new (FB_DTYPE_FLOAT32, rank, dims, NULL);
  guint32 s = seed * 2654435761u + 1;

  g_assert_nonnull (t);
  for (int64_t i = 0; i < t->numel; i++)
    {
      s = s * 1664525u + 1013904223u;
      ((float *) fb_tensor_data_mut (t))[i] = (float) ((s >> 8) / 8388608.0 - 1.0);
    }
  return keep (t);
}

FbTensor **
ti_run (FbNode *node, FbTensor **inputs)
{
  g_autoptr(GError) error = NULL;
  FbTensor **out = g_new0 (FbTensor *, MAX (node->n_outputs, 1));

  if (!fb_interp_node (node, inputs, out, &error))
    g_error ("running %s failed: %s", node->name, error->message);
  for (guint k = 0; k < node->n_outputs; k++)
    if (out[k] != NULL)
      keep (out[k]);
  return out;
}

FbTensor *
ti_run1 (FbNode *node, FbTensor **inputs)
{
  g_autofree FbTensor **out = ti_run (node, inputs);
  return out[0];
}

void
ti_run_fails (FbNode *node, FbTensor **inputs, FbInterpError code)
{
  g_autoptr(GError) error = NULL;
  g_autofree FbTensor **out = g_new0 (FbTensor *, MAX (node->n_outputs, 1));
  g_autofree char *named = g_strdup_printf ("'%s'", node->name);

  g_assert_false (fb_interp_node (node, inputs, out, &error));
  g_assert_error (error, FB_INTERP_ERROR, (int) code);
  g_assert_nonnull (strstr (error->message, named));
  for (guint k = 0; k < node->n_outputs; k++)
    g_assert_null (out[k]);
}

void
ti_assert (const FbTensor *t, FbDType dtype, int rank, const int64_t *dims, const double *values,
           double tol)
{
  g_assert_nonnull (t);
  g_assert_cmpstr (fb_dtype_name (t->dtype), ==, fb_dtype_name (dtype));
  g_assert_cmpint (t->rank, ==, rank);
  for (int i = 0; i < rank; i++)
    g_assert_cmpint (t->dims[i], ==, dims[i]);
  for (int64_t i = 0; values && i < t->numel; i++)
    {
      double a = fb_tensor_get_f64 (t, i), e = values[i];
      if (isnan (e))
        g_assert_true (isnan (a));
      else if (fabs (a - e) > tol)
        g_error ("element %" G_GINT64_FORMAT ": got %.9g, expected %.9g", i, a, e);
    }
}

void
ti_assert_close (const FbTensor *actual, const FbTensor *expected, double tol)
{
  g_assert_cmpint (actual->rank, ==, expected->rank);
  for (int i = 0; i < actual->rank; i++)
    g_assert_cmpint (actual->dims[i], ==, expected->dims[i]);
  g_assert_cmpint (actual->dtype, ==, expected->dtype);
  for (int64_t i = 0; i < actual->numel; i++)
    {
      double a = fb_tensor_get_f64 (actual, i), e = fb_tensor_get_f64 (expected, i);
      if (fabs (a - e) > tol * (1 + fabs (e)))
        g_error ("element %" G_GINT64_FORMAT ": got %.9g, expected %.9g", i, a, e);
    }
}
