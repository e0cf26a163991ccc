/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for sequences and optionals: every output's kind (sequence, optional, tensor), its
 * element type and, where the operator lets it be known, its element shape. A sequence's length
 * is never known here: the tensors read out of one (SequenceAt, ConcatFromSequence) know their
 * rank but only the extents that every element shares. */
#include "fb-infer-private.h"

#include <string.h>

static gboolean
is_sequence (FbValueKind kind)
{
  return kind == FB_KIND_SEQUENCE || kind == FB_KIND_OPTIONAL_SEQUENCE;
}

gboolean
_fb_infer_set_kind (const FbNode *node, guint i, FbValueKind kind, GError **error)
{
  FbValue *v;

  if (i >= node->n_outputs || (v = node->outputs[i]) == NULL)
    return TRUE;
  /* A tensor declaration cannot be told from no declaration: only another non-tensor kind is a
   * contradiction. */
  if (v->kind != FB_KIND_TENSOR && v->kind != kind)
    return _fb_infer_fail (error, node, "'%s' is declared a %s but computes a %s", v->name,
                           fb_value_kind_name (v->kind), fb_value_kind_name (kind));
  v->kind = kind;
  return TRUE;
}

gboolean
_fb_infer_check_tensors (const FbNode *node, GError **error)
{
  for (guint i = 0; i < node->n_inputs; i++)
    {
      const FbValue *v = node->inputs[i];
      if (v != NULL && v->kind != FB_KIND_TENSOR)
        return _fb_infer_unsupported (error, node, "input %u '%s' is a %s, but %s takes tensors",
                                      i, v->name, fb_value_kind_name (v->kind), node->op_type);
    }
  return TRUE;
}

static FbValue *
require_kind (const FbNode *node, guint i, gboolean sequence, GError **error)
{
  FbValue *v = _fb_infer_require (node, i, error);

  if (v == NULL)
    return NULL;
  if (sequence ? v->kind != FB_KIND_SEQUENCE : v->kind != FB_KIND_TENSOR)
    {
      _fb_infer_fail (error, node, "input %u '%s' is a %s where a %s is needed", i, v->name,
                      fb_value_kind_name (v->kind), sequence ? "sequence" : "tensor");
      return NULL;
    }
  return v;
}

static gboolean
set (const FbNode *node, FbValueKind kind, FbDType dtype, const FbShape *shape, GError **error)
{
  return _fb_infer_set_kind (node, 0, kind, error) &&
         _fb_infer_set_output (node, 0, dtype, shape, error);
}

/* The element shape of seq, with an empty sequence (straight from SequenceEmpty) known to
 * constrain nothing: inserting into it gives the inserted tensor's shape. */
static gboolean
known_empty (const FbValue *seq)
{
  return seq->producer != NULL && seq->producer->op == FB_OP_SEQUENCE_EMPTY;
}

static gboolean
check_elem_type (const FbNode *node, const FbValue *seq, const FbValue *t, GError **error)
{
  if (seq->dtype != FB_DTYPE_UNDEFINED && t->dtype != FB_DTYPE_UNDEFINED && seq->dtype != t->dtype)
    return _fb_infer_fail (error, node, "'%s' is %s but the sequence '%s' holds %s", t->name,
                           fb_dtype_name (t->dtype), seq->name, fb_dtype_name (seq->dtype));
  return TRUE;
}

gboolean
_fb_infer_sequence_empty (FbGraph *graph, FbNode *node, GError **error)
{
  FbDType dtype = (FbDType) fb_node_attr_int (node, "dtype", FB_DTYPE_FLOAT32);
  FbShape unknown = fb_shape_unknown ();

  if (!fb_dtype_is_known (dtype))
    return _fb_infer_unsupported (error, node, "dtype %d is not an element type this project "
                                  "computes", dtype);
  return set (node, FB_KIND_SEQUENCE, dtype, &unknown, error);
}

gboolean
_fb_infer_sequence_construct (FbGraph *graph, FbNode *node, GError **error)
{
  FbDType dtype = FB_DTYPE_UNDEFINED;
  FbShape shape = fb_shape_unknown ();

  for (guint i = 0; i < node->n_inputs; i++)
    {
      FbValue *t = require_kind (node, i, FALSE, error);
      if (t == NULL)
        return FALSE;
      if (dtype != FB_DTYPE_UNDEFINED && t->dtype != FB_DTYPE_UNDEFINED && t->dtype != dtype)
        return _fb_infer_fail (error, node, "input %u '%s' is %s but input 0 is %s: a sequence "
                               "holds one element type", i, t->name, fb_dtype_name (t->dtype),
                               fb_dtype_name (dtype));
      if (dtype == FB_DTYPE_UNDEFINED)
        dtype = t->dtype;
      shape = i == 0 ? t->shape : _fb_shape_join (&shape, &t->shape);
    }
  return set (node, FB_KIND_SEQUENCE, dtype, &shape, error);
}

gboolean
_fb_infer_sequence_insert (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *seq = require_kind (node, 0, TRUE, error);
  FbValue *t = seq ? require_kind (node, 1, FALSE, error) : NULL;
  FbShape shape;

  if (t == NULL || !check_elem_type (node, seq, t, error) ||
      !_fb_infer_check_type (node, 2, FB_TYPES_INDEX, error) ||
      !_fb_infer_check_scalar (node, 2, "position", TRUE, error))
    return FALSE;
  shape = known_empty (seq) ? t->shape : _fb_shape_join (&seq->shape, &t->shape);
  return set (node, FB_KIND_SEQUENCE, seq->dtype != FB_DTYPE_UNDEFINED ? seq->dtype : t->dtype,
              &shape, error);
}

gboolean
_fb_infer_sequence_at (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *seq = require_kind (node, 0, TRUE, error);

  if (seq == NULL || _fb_infer_require (node, 1, error) == NULL ||
      !_fb_infer_check_type (node, 1, FB_TYPES_INDEX, error) ||
      !_fb_infer_check_scalar (node, 1, "position", TRUE, error))
    return FALSE;
  return set (node, FB_KIND_TENSOR, seq->dtype, &seq->shape, error);
}

gboolean
_fb_infer_sequence_erase (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *seq = require_kind (node, 0, TRUE, error);

  if (seq == NULL || !_fb_infer_check_type (node, 1, FB_TYPES_INDEX, error) ||
      !_fb_infer_check_scalar (node, 1, "position", TRUE, error))
    return FALSE;
  return set (node, FB_KIND_SEQUENCE, seq->dtype, &seq->shape, error);
}

gboolean
_fb_infer_sequence_length (FbGraph *graph, FbNode *node, GError **error)
{
  FbShape scalar = fb_shape_scalar ();

  if (require_kind (node, 0, TRUE, error) == NULL)
    return FALSE;
  return set (node, FB_KIND_TENSOR, FB_DTYPE_INT64, &scalar, error);
}

gboolean
_fb_infer_split_to_sequence (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = require_kind (node, 0, FALSE, error);
  FbValue *split = fb_node_input (node, 1);
  FbShape shape;
  int axis;

  if (x == NULL || !_fb_infer_check_type (node, 1, FB_TYPES_INDEX, error))
    return FALSE;
  if (split != NULL && split->shape.rank > 1)
    return _fb_infer_fail (error, node, "split '%s' must be a scalar or a 1-D tensor",
                           split->name);
  if (x->shape.rank < 0)
    {
      shape = fb_shape_unknown ();
      return set (node, FB_KIND_SEQUENCE, x->dtype, &shape, error);
    }
  if (x->shape.rank == 0)
    return _fb_infer_fail (error, node, "cannot split the scalar '%s'", x->name);
  if (!_fb_infer_axis (node, fb_node_attr_int (node, "axis", 0), x->shape.rank, "axis", &axis,
                       error))
    return FALSE;
  shape = x->shape;
  if (split == NULL)
    {
      /* Pieces of extent 1, squeezed away unless keepdims. */
      if (fb_node_attr_int (node, "keepdims", 1) != 0)
        {
          shape.dim[axis] = 1;
          shape.sym[axis] = NULL;
        }
      else
        {
          memmove (&shape.dim[axis], &shape.dim[axis + 1],
                   sizeof (int64_t) * (shape.rank - axis - 1));
          memmove (&shape.sym[axis], &shape.sym[axis + 1],
                   sizeof (char *) * (shape.rank - axis - 1));
          shape.rank--;
        }
    }
  else
    {
      g_autofree int64_t *sizes = NULL;
      int n = -1;

      if (!_fb_infer_const_ints (node, 1, "split", FB_INFER_MAX_VECTOR, &sizes, &n, error))
        return FALSE;
      shape.dim[axis] = FB_DIM_UNKNOWN;
      shape.sym[axis] = NULL;
      /* Equal pieces only: a scalar that divides the extent, or a list of one size. */
      if (n == 1 && sizes[0] > 0 && split->shape.rank == 0 && x->shape.dim[axis] >= 0 &&
          x->shape.dim[axis] % sizes[0] == 0)
        shape.dim[axis] = sizes[0];
      else if (n > 0)
        {
          gboolean same = TRUE;
          for (int i = 1; i < n; i++)
            same = same && sizes[i] == sizes[0];
          if (same && sizes[0] >= 0 && split->shape.rank == 1)
            shape.dim[axis] = sizes[0];
        }
    }
  return set (node, FB_KIND_SEQUENCE, x->dtype, &shape, error);
}

gboolean
_fb_infer_concat_from_sequence (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *seq = require_kind (node, 0, TRUE, error);
  const FbAttr *axis_attr = fb_node_attr (node, "axis");
  gboolean new_axis = fb_node_attr_int (node, "new_axis", 0) != 0;
  FbShape shape;
  int axis;

  if (seq == NULL)
    return FALSE;
  if (axis_attr == NULL || axis_attr->type != FB_ATTR_INT)
    return _fb_infer_invalid (error, node, "the attribute 'axis' is required");
  if (seq->shape.rank < 0)
    {
      shape = fb_shape_unknown ();
      return set (node, FB_KIND_TENSOR, seq->dtype, &shape, error);
    }
  if (!new_axis && seq->shape.rank == 0)
    return _fb_infer_fail (error, node, "cannot concatenate scalars without new_axis=1");
  if (!_fb_infer_axis (node, axis_attr->i, seq->shape.rank + (new_axis ? 1 : 0), "axis", &axis,
                       error) ||
      !_fb_infer_check_rank (node, (int64_t) seq->shape.rank + (new_axis ? 1 : 0), error))
    return FALSE;
  shape = seq->shape;
  if (new_axis)
    {
      memmove (&shape.dim[axis + 1], &shape.dim[axis], sizeof (int64_t) * (shape.rank - axis));
      memmove (&shape.sym[axis + 1], &shape.sym[axis], sizeof (char *) * (shape.rank - axis));
      shape.rank++;
    }
  /* The extent along axis counts the elements (or sums theirs): known only when run. */
  shape.dim[axis] = FB_DIM_UNKNOWN;
  shape.sym[axis] = NULL;
  return set (node, FB_KIND_TENSOR, seq->dtype, &shape, error);
}

gboolean
_fb_infer_optional (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = fb_node_input (node, 0);
  const FbAttr *type = fb_node_attr (node, "type");
  FbShape unknown = fb_shape_unknown ();

  if (x != NULL)
    {
      if (x->kind != FB_KIND_TENSOR && x->kind != FB_KIND_SEQUENCE)
        return _fb_infer_fail (error, node, "input '%s' is a %s; an optional holds a tensor or "
                               "a sequence", x->name, fb_value_kind_name (x->kind));
      return set (node, x->kind == FB_KIND_SEQUENCE ? FB_KIND_OPTIONAL_SEQUENCE
                                                    : FB_KIND_OPTIONAL, x->dtype, &x->shape,
                  error);
    }
  if (type == NULL || type->type != FB_ATTR_TYPE)
    return _fb_infer_invalid (error, node, "an empty Optional needs the attribute 'type'");
  return set (node, is_sequence (type->tp.kind) ? FB_KIND_OPTIONAL_SEQUENCE : FB_KIND_OPTIONAL,
              type->tp.dtype, &unknown, error);
}

/* From opset 18 both accept a tensor or a sequence as well (an optional that is there). */
gboolean
_fb_infer_optional_get_element (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);

  if (x == NULL)
    return FALSE;
  return set (node, is_sequence (x->kind) ? FB_KIND_SEQUENCE : FB_KIND_TENSOR, x->dtype,
              &x->shape, error);
}

gboolean
_fb_infer_optional_has_element (FbGraph *graph, FbNode *node, GError **error)
{
  FbShape scalar = fb_shape_scalar ();

  return set (node, FB_KIND_TENSOR, FB_DTYPE_BOOL, &scalar, error);
}

/* Identity passes any value through; a tensor goes through the elementwise rule. */
gboolean
_fb_infer_identity (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);

  if (x == NULL)
    return FALSE;
  if (x->kind == FB_KIND_TENSOR)
    return _fb_infer_unary (graph, node, error);
  return set (node, x->kind, x->dtype, &x->shape, error);
}

/* SequenceMap: the body runs once per position of the first input (a sequence); the other
 * inputs are sequences of the same length, read position by position, or tensors given whole.
 * Each body output is collected into a sequence. */
gboolean
_fb_infer_sequence_map (FbGraph *graph, FbNode *node, GError **error)
{
  FbGraph *body = fb_node_attr_graph (node, "body");
  GError *local = NULL;

  if (require_kind (node, 0, TRUE, error) == NULL)
    return FALSE;
  if (body == NULL)
    return _fb_infer_invalid (error, node, "the graph attribute 'body' is missing");
  if (body->inputs->len != node->n_inputs || body->outputs->len != node->n_outputs)
    return _fb_infer_invalid (error, node, "has %u inputs and %u outputs but its body takes %u "
                              "and gives %u", node->n_inputs, node->n_outputs, body->inputs->len,
                              body->outputs->len);
  for (guint i = 0; i < node->n_inputs; i++)
    {
      FbValue *in = fb_node_input (node, i);
      FbValue *b = g_ptr_array_index (body->inputs, i);
      if (in == NULL)
        return _fb_infer_invalid (error, node, "input %u is missing", i);
      if (in->kind != FB_KIND_TENSOR && in->kind != FB_KIND_SEQUENCE)
        return _fb_infer_fail (error, node, "input %u '%s' is a %s; SequenceMap takes "
                               "sequences and tensors", i, in->name, fb_value_kind_name (in->kind));
      if (!_fb_infer_merge_value (node, b, in->dtype, &in->shape, error))
        return FALSE;
    }
  if (!fb_infer_graph (body, &local))
    {
      g_propagate_prefixed_error (error, local, "in the 'body' of node '%s' (%s): ", node->name,
                                  node->op_type);
      return FALSE;
    }
  for (guint k = 0; k < node->n_outputs; k++)
    {
      FbValue *o = g_ptr_array_index (body->outputs, k);
      if (o->kind != FB_KIND_TENSOR)
        return _fb_infer_unsupported (error, node, "body output '%s' is a %s; only tensors are "
                                      "collected", o->name, fb_value_kind_name (o->kind));
      if (!_fb_infer_set_kind (node, k, FB_KIND_SEQUENCE, error) ||
          !_fb_infer_set_output (node, k, o->dtype, &o->shape, error))
        return FALSE;
    }
  return TRUE;
}
