/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-test-infer.h"

#include <stdarg.h>
#include <string.h>

TestGraph *
tg_new (int opset)
{
  TestGraph *tg = g_new0 (TestGraph, 1);

  tg->model = fb_model_new (NULL);
  g_hash_table_insert (tg->model->opsets, g_strdup (""), GINT_TO_POINTER (opset));
  tg->graph = fb_graph_new (tg->model);
  return tg;
}

void
tg_free (TestGraph *tg)
{
  fb_graph_free (tg->graph);
  fb_model_unref (tg->model);
  g_free (tg);
}

FbShape
tg_shape (const char *text)
{
  g_auto(GStrv) parts = NULL;
  FbShape s = { 0 };

  if (strcmp (text, "*") == 0)
    return fb_shape_unknown ();
  if (*text == '\0')
    return s;
  parts = g_strsplit (text, "x", -1);
  g_assert_cmpuint (g_strv_length (parts), <=, FB_MAX_RANK);
  for (guint i = 0; parts[i]; i++, s.rank++)
    {
      if (strcmp (parts[i], "?") == 0)
        s.dim[i] = FB_DIM_UNKNOWN;
      else if (g_ascii_isdigit (parts[i][0]))
        s.dim[i] = g_ascii_strtoll (parts[i], NULL, 10);
      else
        {
          s.dim[i] = FB_DIM_UNKNOWN;
          s.sym[i] = g_intern_string (parts[i]);
        }
    }
  return s;
}

static char *
fresh_name (TestGraph *tg, const char *prefix)
{
  return g_strdup_printf ("%s%u", prefix, ++tg->counter);
}

FbValue *
tg_value (TestGraph *tg, FbGraph *g, FbDType dtype, const char *shape)
{
  g_autofree char *name = fresh_name (tg, "v");
  FbShape s = tg_shape (shape);

  return fb_graph_add_value (g ? g : tg->graph, name, dtype, &s);
}

FbValue *
tg_input (TestGraph *tg, FbGraph *g, FbDType dtype, const char *shape)
{
  FbValue *v = tg_value (tg, g, dtype, shape);

  v->is_input = TRUE;
  g_ptr_array_add ((g ? g : tg->graph)->inputs, v);
  return v;
}

static FbValue *
add_tensor (TestGraph *tg, FbGraph *g, FbTensor *t)
{
  g_autofree char *name = fresh_name (tg, "c");
  FbValue *v = fb_graph_add_constant (g ? g : tg->graph, name, t);

  fb_tensor_unref (t);
  return v;
}

FbValue *
tg_const_i64 (TestGraph *tg, FbGraph *g, int n, const int64_t *v)
{
  int64_t dims[1] = { n };
  FbTensor *t = fb_tensor_new (FB_DTYPE_INT64, 1, dims, NULL);

  if (n > 0)
    memcpy (fb_tensor_data_mut (t), v, sizeof (int64_t) * n);
  return add_tensor (tg, g, t);
}

FbValue *
tg_scalar_i64 (TestGraph *tg, FbGraph *g, int64_t v)
{
  return add_tensor (tg, g, fb_tensor_new_scalar_i64 (v));
}

FbValue *
tg_const_f32 (TestGraph *tg, FbGraph *g, int n, const float *v)
{
  int64_t dims[1] = { n };
  FbTensor *t = fb_tensor_new (FB_DTYPE_FLOAT32, 1, dims, NULL);

  if (n > 0)
    memcpy (fb_tensor_data_mut (t), v, sizeof (float) * n);
  return add_tensor (tg, g, t);
}

FbValue *
tg_scalar_f32 (TestGraph *tg, FbGraph *g, float v)
{
  return add_tensor (tg, g, fb_tensor_new_scalar_f32 (v));
}

FbValue *
tg_scalar_bool (TestGraph *tg, FbGraph *g, gboolean v)
{
  FbTensor *t = fb_tensor_new (FB_DTYPE_BOOL, 0, NULL, NULL);

  *(guint8 *) fb_tensor_data_mut (t) = v ? 1 : 0;
  return add_tensor (tg, g, t);
}

FbValue *
tg_weights (TestGraph *tg, FbGraph *g, FbDType dtype, const char *shape)
{
  FbShape s = tg_shape (shape);

  g_assert_true (fb_shape_is_static (&s));
  return add_tensor (tg, g, fb_tensor_new (dtype, s.rank, s.dim, NULL));
}

FbNode *
tg_node (TestGraph *tg, FbGraph *g, FbOpKind op, guint n_in, guint n_out, ...)
{
  g_autofree char *name = fresh_name (tg, fb_op_name (op));
  FbGraph *graph = g ? g : tg->graph;
  FbNode *node = fb_graph_add_node (graph, op, name, n_in, n_out);
  va_list args;

  va_start (args, n_out);
  for (guint i = 0; i < n_in; i++)
    node->inputs[i] = va_arg (args, FbValue *);
  va_end (args);
  for (guint k = 0; k < n_out; k++)
    {
      g_autofree char *out = g_strdup_printf ("%s:%u", name, k);
      fb_node_set_output (node, k, fb_graph_add_value (graph, out, FB_DTYPE_UNDEFINED, NULL));
    }
  return node;
}

void
tg_int (TestGraph *tg, FbNode *node, const char *name, int64_t v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_INT, .i = v };
  fb_node_set_attr (tg->graph, node, &a);
}

void
tg_float (TestGraph *tg, FbNode *node, const char *name, float v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_FLOAT, .f = v };
  fb_node_set_attr (tg->graph, node, &a);
}

void
tg_str (TestGraph *tg, FbNode *node, const char *name, const char *v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_STRING, .s = v };
  fb_node_set_attr (tg->graph, node, &a);
}

void
tg_ints (TestGraph *tg, FbNode *node, const char *name, guint n, const int64_t *v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_INTS };
  a.ints.n = n;
  a.ints.v = (int64_t *) v;
  fb_node_set_attr (tg->graph, node, &a);
}

void
tg_floats (TestGraph *tg, FbNode *node, const char *name, guint n, const float *v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_FLOATS };
  a.floats.n = n;
  a.floats.v = (float *) v;
  fb_node_set_attr (tg->graph, node, &a);
}

void
tg_graph_attr (TestGraph *tg, FbNode *node, const char *name, FbGraph *body)
{
  FbAttr a = { .name = name, .type = FB_ATTR_GRAPH, .g = body };
  fb_node_set_attr (tg->graph, node, &a);
}

void
tg_tensor_attr (TestGraph *tg, FbNode *node, const char *name, FbTensor *t)
{
  FbAttr a = { .name = name, .type = FB_ATTR_TENSOR, .t = t };
  fb_node_set_attr (tg->graph, node, &a);
}

void
tg_check_value (const char *file, int line, const FbValue *v, FbDType dtype, const char *shape)
{
  g_autofree char *have = NULL;
  g_autofree char *want = NULL;
  FbShape expected = tg_shape (shape);

  if (v == NULL)
    {
      g_assertion_message (G_LOG_DOMAIN, file, line, G_STRFUNC, "the value is missing");
      return;
    }
  have = fb_shape_to_string (&v->shape);
  want = fb_shape_to_string (&expected);
  /* The text alone cannot tell an unknown rank from one unknown extent: both print "?". */
  if (v->dtype != dtype || strcmp (have, want) != 0 || v->shape.rank != expected.rank)
    {
      g_autofree char *msg = g_strdup_printf ("'%s' is %s %s (rank %d), expected %s %s (rank %d)",
                                              v->name, fb_dtype_name (v->dtype), have,
                                              v->shape.rank, fb_dtype_name (dtype), want,
                                              expected.rank);
      g_assertion_message (G_LOG_DOMAIN, file, line, G_STRFUNC, msg);
    }
}

void
tg_check_infers (const char *file, int line, FbGraph *g, FbNode *node)
{
  g_autoptr(GError) error = NULL;

  if (!fb_infer_node (g, node, &error))
    {
      g_autofree char *msg = g_strdup_printf ("inference failed: %s",
                                              error ? error->message : "(no error set)");
      g_assertion_message (G_LOG_DOMAIN, file, line, G_STRFUNC, msg);
    }
  else if (error != NULL)
    g_assertion_message (G_LOG_DOMAIN, file, line, G_STRFUNC, "success with an error set");
}

void
tg_check_fails (const char *file, int line, FbGraph *g, FbNode *node, int code, const char *part)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *msg = NULL;

  if (fb_infer_node (g, node, &error))
    msg = g_strdup_printf ("inference of '%s' succeeded, expected an error with '%s'",
                           node->name, part);
  else if (error == NULL)
    msg = g_strdup ("inference failed without an error");
  else if (!g_error_matches (error, FB_GRAPH_ERROR, code))
    msg = g_strdup_printf ("error code %d, expected %d: %s", error->code, code, error->message);
  else if (strstr (error->message, part) == NULL)
    msg = g_strdup_printf ("error '%s' does not mention '%s'", error->message, part);
  else if (strstr (error->message, node->name) == NULL)
    msg = g_strdup_printf ("error '%s' does not name the node", error->message);
  if (msg != NULL)
    g_assertion_message (G_LOG_DOMAIN, file, line, G_STRFUNC, msg);
}
