/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Sequences and optionals (ONNX's Sequence*, SplitToSequence, ConcatFromSequence, Optional*,
 * SequenceMap). Items are immutable once made, so a sequence operator shares its items with its
 * input by reference and only the split and concatenation copy tensor data. Positions follow
 * ONNX: negative positions count from the back; out-of-range positions are errors naming the
 * node, the position and the length. */
#include "fb-interp-private.h"

#include <string.h>

static gboolean
need_sequence (const FbNode *node, const FbTensor *t, guint i, GError **error)
{
  g_autofree char *what = NULL;

  if (t != NULL && t->kind == FB_KIND_SEQUENCE)
    return TRUE;
  what = t != NULL ? fb_tensor_describe (t) : g_strdup ("nothing");
  return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                          "input %u must be a sequence, got %s", i, what);
}

static gboolean
need_dense (const FbNode *node, const FbTensor *t, guint i, GError **error)
{
  g_autofree char *what = NULL;

  if (t != NULL && t->kind == FB_KIND_TENSOR)
    return TRUE;
  what = t != NULL ? fb_tensor_describe (t) : g_strdup ("nothing");
  return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                          "input %u must be a tensor, got %s", i, what);
}

/* The position input (or fallback when absent) normalized into [0, n + extra): extra is 1 for
 * an insertion point, 0 for an element. */
static gboolean
position (const FbNode *node, const FbTensor *pos, int64_t fallback, guint n, guint extra,
          int64_t *out, GError **error)
{
  int64_t p = fallback;

  if (pos != NULL)
    {
      if (pos->dtype != FB_DTYPE_INT32 && pos->dtype != FB_DTYPE_INT64)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "the position must be int32 or int64, not %s",
                                fb_dtype_name (pos->dtype));
      if (!_fb_interp_scalar_i64 (node, pos, "the position", &p, error))
        return FALSE;
    }
  if (p < -(int64_t) n || p >= (int64_t) n + extra)
    {
      if (n == 0 && extra == 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "position %" G_GINT64_FORMAT " is out of range: the sequence "
                                "is empty", p);
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                              "position %" G_GINT64_FORMAT " is out of range for a sequence of "
                              "%u (valid: %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT ")", p, n,
                              -(int64_t) n, (int64_t) n + extra - 1);
    }
  *out = p < 0 ? p + n : p;
  return TRUE;
}

static gboolean
same_type (const FbNode *node, const FbTensor *seq, const FbTensor *t, GError **error)
{
  if (t->dtype == seq->dtype)
    return TRUE;
  return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                          "a %s tensor cannot join a sequence of %s", fb_dtype_name (t->dtype),
                          fb_dtype_name (seq->dtype));
}

gboolean
_fb_interp_sequence_empty (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                           FbTensor **out, GError **error)
{
  int64_t dtype = fb_node_attr_int (node, "dtype", FB_DTYPE_FLOAT32);

  if (!fb_dtype_is_known ((int) dtype))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "dtype %" G_GINT64_FORMAT " is not supported", dtype);
  out[0] = fb_tensor_new_sequence ((FbDType) dtype, NULL);
  return TRUE;
}

gboolean
_fb_interp_sequence_construct (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                               FbTensor **out, GError **error)
{
  g_autoptr(GPtrArray) items = g_ptr_array_new ();

  for (guint i = 0; i < node->n_inputs; i++)
    {
      if (!need_dense (node, in[i], i, error))
        return FALSE;
      if (in[i]->dtype != in[0]->dtype)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "input %u is %s but input 0 is %s: a sequence holds one "
                                "element type", i, fb_dtype_name (in[i]->dtype),
                                fb_dtype_name (in[0]->dtype));
      g_ptr_array_add (items, in[i]);
    }
  out[0] = fb_tensor_new_sequence (in[0]->dtype, items);
  return TRUE;
}

gboolean
_fb_interp_sequence_insert (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                            FbTensor **out, GError **error)
{
  FbTensor *seq = in[0];
  int64_t at;

  if (!need_sequence (node, seq, 0, error) || !need_dense (node, in[1], 1, error) ||
      !same_type (node, seq, in[1], error) ||
      !position (node, node->n_inputs > 2 ? in[2] : NULL, seq->items->len, seq->items->len, 1,
                 &at, error))
    return FALSE;
  out[0] = fb_tensor_new_sequence (seq->dtype, seq->items);
  g_ptr_array_insert (out[0]->items, (gint) at, fb_tensor_ref (in[1]));
  return TRUE;
}

gboolean
_fb_interp_sequence_at (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                        FbTensor **out, GError **error)
{
  int64_t at;

  if (!need_sequence (node, in[0], 0, error) ||
      !position (node, in[1], 0, in[0]->items->len, 0, &at, error))
    return FALSE;
  out[0] = fb_tensor_ref (g_ptr_array_index (in[0]->items, at));
  return TRUE;
}

gboolean
_fb_interp_sequence_erase (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                           FbTensor **out, GError **error)
{
  int64_t at;

  if (!need_sequence (node, in[0], 0, error) ||
      !position (node, node->n_inputs > 1 ? in[1] : NULL, -1, in[0]->items->len, 0, &at, error))
    return FALSE;
  out[0] = fb_tensor_new_sequence (in[0]->dtype, in[0]->items);
  g_ptr_array_remove_index (out[0]->items, (guint) at);
  return TRUE;
}

gboolean
_fb_interp_sequence_length (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                            FbTensor **out, GError **error)
{
  if (!need_sequence (node, in[0], 0, error))
    return FALSE;
  out[0] = fb_tensor_new_scalar_i64 (in[0]->items->len);
  return TRUE;
}

/* The part of x from `start` to `start + len` along axis a (a new tensor), with that axis
 * dropped when squeeze. */
static FbTensor *
slice_axis (const FbNode *node, const FbTensor *x, int a, int64_t start, int64_t len,
            gboolean squeeze, GError **error)
{
  int64_t dims[FB_MAX_RANK];
  gsize esize = fb_dtype_size (x->dtype);
  int64_t outer = _fb_interp_prod (x->dims, 0, a);
  int64_t inner = _fb_interp_prod (x->dims, a + 1, x->rank);
  FbTensor *y;
  int rank = 0;

  for (int i = 0; i < x->rank; i++)
    if (i != a)
      dims[rank++] = x->dims[i];
    else if (!squeeze)
      dims[rank++] = len;
  y = _fb_interp_new (node, x->dtype, rank, dims, error);
  if (y == NULL)
    return NULL;
  for (int64_t o = 0; o < outer && len * inner > 0; o++)
    memcpy ((char *) fb_tensor_data_mut (y) + (gsize) (o * len * inner) * esize,
            (const char *) fb_tensor_data (x) + (gsize) ((o * x->dims[a] + start) * inner) * esize,
            (gsize) (len * inner) * esize);
  return y;
}

gboolean
_fb_interp_split_to_sequence (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                              FbTensor **out, GError **error)
{
  FbTensor *x = in[0];
  FbTensor *split = node->n_inputs > 1 ? in[1] : NULL;
  gboolean keepdims = fb_node_attr_int (node, "keepdims", 1) != 0;
  g_autofree int64_t *sizes = NULL;
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  guint n = 0;
  int64_t start = 0, d;
  int a;

  if (!need_dense (node, x, 0, error))
    return FALSE;
  if (x->rank == 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "cannot split a scalar");
  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", 0), x->rank, &a))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "axis %" G_GINT64_FORMAT " is out of range for rank %d",
                            fb_node_attr_int (node, "axis", 0), x->rank);
  d = x->dims[a];
  if (split == NULL)
    {
      /* Pieces of one, squeezed unless keepdims. */
      n = (guint) d;
      sizes = g_new (int64_t, MAX (n, 1));
      for (guint k = 0; k < n; k++)
        sizes[k] = 1;
    }
  else if (split->rank == 0)
    {
      int64_t part;
      if (!_fb_interp_scalar_i64 (node, split, "split", &part, error))
        return FALSE;
      if (part <= 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "split %" G_GINT64_FORMAT " must be positive", part);
      /* Equal pieces; the last one smaller when the extent does not divide. */
      n = (guint) ((d + part - 1) / part);
      sizes = g_new (int64_t, MAX (n, 1));
      for (guint k = 0; k < n; k++)
        sizes[k] = MIN (part, d - (int64_t) k * part);
      keepdims = TRUE;
    }
  else
    {
      int64_t total = 0;
      if (!_fb_interp_int_list (node, split, "split", &sizes, &n, error))
        return FALSE;
      for (guint k = 0; k < n; k++)
        {
          if (sizes[k] < 0)
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                    "split size %u is negative (%" G_GINT64_FORMAT ")", k,
                                    sizes[k]);
          total += sizes[k];
        }
      if (total != d)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "split sizes add up to %" G_GINT64_FORMAT " but axis %d has "
                                "extent %" G_GINT64_FORMAT, total, a, d);
      keepdims = TRUE;
    }
  for (guint k = 0; k < n; k++)
    {
      FbTensor *part = slice_axis (node, x, a, start, sizes[k], !keepdims, error);
      if (part == NULL)
        return FALSE;
      g_ptr_array_add (items, part);
      start += sizes[k];
    }
  out[0] = fb_tensor_new_sequence (x->dtype, items);
  return TRUE;
}

gboolean
_fb_interp_concat_from_sequence (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                                 FbTensor **out, GError **error)
{
  FbTensor *seq = in[0];
  const FbAttr *axis_attr = fb_node_attr (node, "axis");
  gboolean new_axis = fb_node_attr_int (node, "new_axis", 0) != 0;
  int64_t dims[FB_MAX_RANK], outer, offset = 0;
  const FbTensor *first;
  gsize esize;
  FbTensor *y;
  int a, rank;

  if (!need_sequence (node, seq, 0, error))
    return FALSE;
  if (axis_attr == NULL || axis_attr->type != FB_ATTR_INT)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "the attribute 'axis' is "
                            "required");
  if (seq->items->len == 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "cannot concatenate an empty sequence");
  first = g_ptr_array_index (seq->items, 0);
  rank = first->rank + (new_axis ? 1 : 0);
  if (rank == 0 || rank > FB_MAX_RANK || !fb_axis_normalize (axis_attr->i, rank, &a))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "axis %" G_GINT64_FORMAT " is out of range for elements of rank %d%s",
                            axis_attr->i, first->rank, new_axis ? " with new_axis" : "");
  /* Stacking along a new axis is concatenating pieces of extent 1 there. */
  for (int i = 0, j = 0; i < rank; i++)
    dims[i] = new_axis && i == a ? 1 : first->dims[j++];
  dims[a] = 0;
  for (guint k = 0; k < seq->items->len; k++)
    {
      const FbTensor *t = g_ptr_array_index (seq->items, k);
      if (t->dtype != first->dtype || t->rank != first->rank)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "element %u (%s, rank %d) does not match element 0 (%s, rank %d)",
                                k, fb_dtype_name (t->dtype), t->rank,
                                fb_dtype_name (first->dtype), first->rank);
      for (int i = 0; i < t->rank; i++)
        if ((new_axis || i != a) && t->dims[i] != first->dims[i])
          return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "element %u has extent %" G_GINT64_FORMAT " on axis %d where "
                                  "element 0 has %" G_GINT64_FORMAT, k, t->dims[i], i,
                                  first->dims[i]);
      dims[a] += new_axis ? 1 : t->dims[a];
    }
  y = _fb_interp_new (node, first->dtype, rank, dims, error);
  if (y == NULL)
    return FALSE;
  esize = fb_dtype_size (first->dtype);
  outer = _fb_interp_prod (dims, 0, a);
  for (guint k = 0; k < seq->items->len; k++)
    {
      const FbTensor *t = g_ptr_array_index (seq->items, k);
      int64_t extent = new_axis ? 1 : t->dims[a];
      int64_t chunk = extent * _fb_interp_prod (dims, a + 1, rank);
      int64_t stride = dims[a] * _fb_interp_prod (dims, a + 1, rank);
      for (int64_t o = 0; o < outer && chunk > 0; o++)
        memcpy ((char *) fb_tensor_data_mut (y) + (gsize) (o * stride + offset) * esize,
                (const char *) fb_tensor_data (t) + (gsize) (o * chunk) * esize,
                (gsize) chunk * esize);
      offset += chunk;
    }
  out[0] = y;
  return TRUE;
}

gboolean
_fb_interp_optional (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                     GError **error)
{
  FbTensor *x = node->n_inputs > 0 ? in[0] : NULL;
  const FbAttr *type = fb_node_attr (node, "type");

  if (x != NULL)
    {
      if (x->kind != FB_KIND_TENSOR && x->kind != FB_KIND_SEQUENCE)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "an optional holds a tensor or a sequence, not an optional");
      out[0] = fb_tensor_new_optional (x->kind == FB_KIND_SEQUENCE ? FB_KIND_OPTIONAL_SEQUENCE
                                                                   : FB_KIND_OPTIONAL,
                                       x->dtype, x);
      return TRUE;
    }
  if (type == NULL || type->type != FB_ATTR_TYPE)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "an empty Optional needs the attribute 'type'");
  out[0] = fb_tensor_new_optional (type->tp.kind == FB_KIND_SEQUENCE ? FB_KIND_OPTIONAL_SEQUENCE
                                                                     : FB_KIND_OPTIONAL,
                                   type->tp.dtype, NULL);
  return TRUE;
}

static gboolean
is_optional (const FbTensor *t)
{
  return t->kind == FB_KIND_OPTIONAL || t->kind == FB_KIND_OPTIONAL_SEQUENCE;
}

/* Opset 18 lets both take a plain tensor or sequence (an optional that is there), and Loop-16
 * hands a body input declared optional the sequence its previous iteration made. */
gboolean
_fb_interp_optional_has_element (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                                 FbTensor **out, GError **error)
{
  FbTensor *x = node->n_inputs > 0 ? in[0] : NULL;
  gboolean has = x != NULL && (!is_optional (x) || x->items->len > 0);

  out[0] = _fb_interp_new (node, FB_DTYPE_BOOL, 0, NULL, error);
  if (out[0] == NULL)
    return FALSE;
  *(uint8_t *) fb_tensor_data_mut (out[0]) = has;
  return TRUE;
}

gboolean
_fb_interp_optional_get_element (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                                 FbTensor **out, GError **error)
{
  FbTensor *x = in[0];

  if (!is_optional (x))
    {
      out[0] = fb_tensor_ref (x);
      return TRUE;
    }
  if (x->items->len == 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the optional '%s' is empty", node->inputs[0]->name);
  out[0] = fb_tensor_ref (g_ptr_array_index (x->items, 0));
  return TRUE;
}

gboolean
_fb_interp_sequence_map (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                         FbTensor **out, GError **error)
{
  FbGraph *body = fb_node_attr_graph (node, "body");
  g_autoptr(GPtrArray) collected = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  g_autofree FbTensor **body_in = NULL;
  guint n;

  if (body == NULL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "has no body graph");
  if (body->inputs->len != node->n_inputs || body->outputs->len != node->n_outputs)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "its body (%u inputs, %u outputs) does not match the node (%u, %u)",
                            body->inputs->len, body->outputs->len, node->n_inputs,
                            node->n_outputs);
  if (!need_sequence (node, in[0], 0, error))
    return FALSE;
  n = in[0]->items->len;
  for (guint j = 1; j < node->n_inputs; j++)
    {
      if (in[j] == NULL)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "input %u is missing", j);
      if (in[j]->kind == FB_KIND_SEQUENCE && in[j]->items->len != n)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "input %u is a sequence of %u but input 0 has %u", j,
                                in[j]->items->len, n);
      if (in[j]->kind != FB_KIND_SEQUENCE && in[j]->kind != FB_KIND_TENSOR)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "input %u is an optional; SequenceMap takes sequences and "
                                "tensors", j);
    }
  for (guint k = 0; k < node->n_outputs; k++)
    g_ptr_array_add (collected, g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref));
  body_in = g_new0 (FbTensor *, MAX (node->n_inputs, 1));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GPtrArray) results = NULL;

      for (guint j = 0; j < node->n_inputs; j++)
        body_in[j] = in[j]->kind == FB_KIND_SEQUENCE ? g_ptr_array_index (in[j]->items, i) : in[j];
      results = _fb_interp_run_body (ctx, body, body_in, node->n_inputs, node, error);
      if (results == NULL)
        return FALSE;
      for (guint k = 0; k < node->n_outputs; k++)
        {
          FbTensor *r = g_ptr_array_index (results, k);
          if (r->kind != FB_KIND_TENSOR)
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                    "body output %u is not a tensor", k);
          g_ptr_array_add (g_ptr_array_index (collected, k), fb_tensor_ref (r));
        }
    }
  for (guint k = 0; k < node->n_outputs; k++)
    {
      GPtrArray *items = g_ptr_array_index (collected, k);
      FbValue *o = g_ptr_array_index (body->outputs, k);
      FbDType dtype = items->len > 0 ? ((FbTensor *) g_ptr_array_index (items, 0))->dtype
                                     : o->dtype;
      for (guint i = 0; i < items->len; i++)
        if (((FbTensor *) g_ptr_array_index (items, i))->dtype != dtype)
          {
            for (guint j = 0; j < k; j++)
              g_clear_pointer (&out[j], fb_tensor_unref);
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                    "body output %u changes element type between positions", k);
          }
      out[k] = fb_tensor_new_sequence (dtype, items);
    }
  return TRUE;
}

gboolean
_fb_interp_check_container_input (const FbValue *v, const FbTensor *t, GError **error)
{
  gboolean v_seq = v->kind == FB_KIND_SEQUENCE || v->kind == FB_KIND_OPTIONAL_SEQUENCE;
  gboolean t_seq = t->kind == FB_KIND_SEQUENCE || t->kind == FB_KIND_OPTIONAL_SEQUENCE;
  gboolean v_opt = v->kind == FB_KIND_OPTIONAL || v->kind == FB_KIND_OPTIONAL_SEQUENCE;
  gboolean t_opt = t->kind == FB_KIND_OPTIONAL || t->kind == FB_KIND_OPTIONAL_SEQUENCE;
  g_autofree char *got = fb_tensor_describe (t);

  /* An optional input also takes what it holds. */
  if (v_seq != t_seq || (t_opt && !v_opt))
    {
      g_set_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_INPUT, "input '%s' expects a %s, got %s",
                   v->name, fb_value_kind_name (v->kind), got);
      return FALSE;
    }
  if (v->dtype != FB_DTYPE_UNDEFINED && t->dtype != FB_DTYPE_UNDEFINED && t->dtype != v->dtype)
    {
      g_set_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_INPUT,
                   "input '%s' expects a %s of %s, got %s", v->name, fb_value_kind_name (v->kind),
                   fb_dtype_name (v->dtype), got);
      return FALSE;
    }
  return TRUE;
}
