/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Helpers every pass uses: the pass context, making nodes and values, reading constants. */
#include "fb-pass-private.h"
#include "fb-infer.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

void
_fb_pass_note (FbPassContext *ctx, const char *format, ...)
{
  va_list args;

  g_assert (ctx != NULL && format != NULL);
  if (ctx->summary->len > 0)
    g_string_append (ctx->summary, ", ");
  va_start (args, format);
  g_string_append_vprintf (ctx->summary, format, args);
  va_end (args);
}

void
_fb_pass_record_fate (FbPassContext *ctx, guint node_id, FbChangeKind kind, guint target)
{
  FbFate *fate;

  g_assert (ctx != NULL);
  if (ctx->fates == NULL)
    return;
  fate = g_new (FbFate, 1);
  fate->kind = kind;
  fate->target = target;
  g_hash_table_replace (ctx->fates, GUINT_TO_POINTER (node_id), fate);
}

gboolean
_fb_pass_no_fuse (FbPassContext *ctx, const FbNode *node)
{
  g_assert (ctx != NULL && node != NULL);
  return ctx->no_fuse != NULL && node->name != NULL &&
         g_hash_table_contains (ctx->no_fuse, node->name);
}

gboolean
_fb_pass_cancelled (FbPassContext *ctx, GError **error)
{
  g_assert (ctx != NULL);
  if (ctx->cancellable == NULL || !g_cancellable_is_cancelled (ctx->cancellable))
    return FALSE;
  g_set_error_literal (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_CANCELLED, "cancelled");
  return TRUE;
}

FbValue *
_fb_value_new (FbGraph *graph, const char *base, FbDType dtype, const FbShape *shape)
{
  FbValue *v;
  g_autofree char *name = NULL;

  g_assert (graph != NULL);
  v = fb_graph_add_value (graph, "", dtype, shape);
  /* The id is fresh model-wide, so the name cannot clash with an imported one. */
  name = g_strdup_printf ("%s#%u", base ? base : "v", v->id);
  v->name = fb_arena_strdup (graph->arena, name);
  return v;
}

FbValue *
_fb_constant_new (FbGraph *graph, const char *base, FbTensor *tensor)
{
  FbShape shape;
  FbValue *v;

  g_assert (graph != NULL && tensor != NULL);
  shape = fb_tensor_shape (tensor);
  v = _fb_value_new (graph, base, tensor->dtype, &shape);
  v->constant = fb_tensor_ref (tensor);
  return v;
}

FbNode *
_fb_node_new (FbGraph *graph, FbOpKind op, const char *name, FbValue *const *inputs,
              guint n_inputs, guint n_outputs, const FbNode *like)
{
  FbNode *n;

  g_assert (graph != NULL && name != NULL);
  n = fb_graph_add_node (graph, op, name, n_inputs, n_outputs);
  for (guint i = 0; i < n_inputs; i++)
    n->inputs[i] = inputs[i];
  if (like != NULL)
    {
      n->opset = like->opset;
      fb_node_add_prov (graph, n, like->prov, like->n_prov);
    }
  return n;
}

void
_fb_node_steal_outputs (FbNode *from, FbNode *to)
{
  g_assert (from != NULL && to != NULL && to->n_outputs >= from->n_outputs);
  for (guint k = 0; k < from->n_outputs; k++)
    {
      fb_node_set_output (to, k, from->outputs[k]);
      from->outputs[k] = NULL;
    }
}

void
_fb_node_set_int (FbGraph *graph, FbNode *node, const char *name, int64_t v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_INT, .i = v };
  fb_node_set_attr (graph, node, &a);
}

void
_fb_node_set_float (FbGraph *graph, FbNode *node, const char *name, float v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_FLOAT, .f = v };
  fb_node_set_attr (graph, node, &a);
}

void
_fb_node_set_string (FbGraph *graph, FbNode *node, const char *name, const char *v)
{
  FbAttr a = { .name = name, .type = FB_ATTR_STRING, .s = v };
  fb_node_set_attr (graph, node, &a);
}

void
_fb_node_set_ints (FbGraph *graph, FbNode *node, const char *name, const int64_t *v, guint n)
{
  FbAttr a = { .name = name, .type = FB_ATTR_INTS };
  a.ints.n = n;
  a.ints.v = (int64_t *) v;
  fb_node_set_attr (graph, node, &a);
}

void
_fb_node_release (FbNode *node)
{
  g_assert (node != NULL);
  for (guint a = 0; a < node->n_attrs; a++)
    if (node->attrs[a].type == FB_ATTR_TENSOR)
      {
        g_clear_pointer (&node->attrs[a].t, fb_tensor_unref);
        node->attrs[a].type = FB_ATTR_UNDEFINED;
      }
}

gboolean
_fb_node_infer (FbGraph *graph, FbNode *node, GError **error)
{
  g_assert (graph != NULL && node != NULL);
  return fb_infer_node (graph, node, error);
}

gboolean
_fb_can_replace (const FbValue *old_value, const FbValue *new_value)
{
  g_assert (old_value != NULL && new_value != NULL);
  if (!old_value->is_output)
    return TRUE;
  return !new_value->is_input && !new_value->is_output && new_value->constant == NULL &&
         new_value->graph == old_value->graph;
}

/* ---- constants ---------------------------------------------------------------------------- */

/* Scanning a big weight to learn it is not uniform is wasted work: patterns want scalars. */
#define UNIFORM_SCAN_LIMIT 4096

gboolean
_fb_const_uniform (const FbValue *v, double *out)
{
  const FbTensor *t;
  double first;

  g_assert (out != NULL);
  if (v == NULL || v->constant == NULL)
    return FALSE;
  t = v->constant;
  if (t->numel < 1 || t->numel > UNIFORM_SCAN_LIMIT || t->dtype == FB_DTYPE_STRING)
    return FALSE;
  first = fb_tensor_get_f64 (t, 0);
  for (int64_t i = 1; i < t->numel; i++)
    {
      double x = fb_tensor_get_f64 (t, i);
      if (x != first && !(isnan (x) && isnan (first)))
        return FALSE;
    }
  *out = first;
  return TRUE;
}

gboolean
_fb_const_equals (const FbValue *v, double target)
{
  double x;

  if (!_fb_const_uniform (v, &x))
    return FALSE;
  /* Exporters write constants like 0.044715 or sqrt(2/pi) rounded to float32. */
  return fabs (x - target) <= 1e-6 + 1e-5 * fabs (target);
}

int64_t *
_fb_const_ints (const FbValue *v, guint max, guint *n)
{
  const FbTensor *t;
  int64_t *out;

  g_assert (n != NULL);
  *n = 0;
  if (v == NULL || v->constant == NULL)
    return NULL;
  t = v->constant;
  if (!fb_dtype_is_integer (t->dtype) || t->rank > 1 || t->numel > max)
    return NULL;
  out = g_new0 (int64_t, MAX (t->numel, 1));
  for (int64_t i = 0; i < t->numel; i++)
    out[i] = fb_tensor_get_i64 (t, i);
  *n = (guint) t->numel;
  return out;
}

gboolean
_fb_shape_fits_in (const FbShape *small, const FbShape *big)
{
  g_assert (small != NULL && big != NULL);
  if (small->rank < 0 || big->rank < 0 || small->rank > big->rank)
    return FALSE;
  for (int i = 0; i < small->rank; i++)
    {
      int64_t s = small->dim[i];
      int64_t b = big->dim[big->rank - small->rank + i];
      if (s == 1)
        continue;
      if (s < 0 || s != b)
        return FALSE;
    }
  return TRUE;
}

FbTensor *
_fb_tensor_f32 (int rank, const int64_t *dims)
{
  return fb_tensor_new (FB_DTYPE_FLOAT32, rank, dims, NULL);
}
