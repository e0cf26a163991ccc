/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The types ONNX declares for values: tensors with their element type and shape, sequences and
 * optionals of them (the value's kind), and the valid types this project does not compute, which
 * are recorded rather than refused so that the model still loads and is drawn. */
#include "fb-onnx-private.h"

const char *
_fb_onnx_type_kind (const Onnx__TypeProto *type)
{
  switch (type->value_case)
    {
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return "a sequence";
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: return "a map";
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return "an optional";
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: return "a sparse tensor";
    default: return "not a tensor";
    }
}

/* The tensor type inside a sequence, an optional or an optional sequence, with *kind saying
 * which; type itself for a tensor; NULL for what FbValueKind does not represent (maps, sparse
 * tensors, sequences of sequences, optionals of optionals). */
const Onnx__TypeProto *
_fb_onnx_unwrap_kind (const Onnx__TypeProto *type, FbValueKind *kind)
{
  const Onnx__TypeProto *inner;

  *kind = FB_KIND_TENSOR;
  switch (type->value_case)
    {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
      return type;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
      inner = type->sequence_type ? type->sequence_type->elem_type : NULL;
      *kind = FB_KIND_SEQUENCE;
      return inner && inner->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? inner : NULL;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
      inner = type->optional_type ? type->optional_type->elem_type : NULL;
      if (inner == NULL)
        return NULL;
      if (inner->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        {
          *kind = FB_KIND_OPTIONAL;
          return inner;
        }
      if (inner->value_case != ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE || !inner->sequence_type)
        return NULL;
      inner = inner->sequence_type->elem_type;
      *kind = FB_KIND_OPTIONAL_SEQUENCE;
      return inner && inner->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? inner : NULL;
    default:
      return NULL;
    }
}

/* A valid type this project does not compute (a map, a sequence of sequences, a string tensor)
 * does not stop the import: the value keeps no type, and the nodes that touch it are marked
 * with why (mark_problems), so that the model still opens and is drawn. Sequences and optionals
 * of tensors take their kind, and dtype and shape describe the tensors inside. */
gboolean
_fb_onnx_apply_type (GHashTable *bad_values, FbValue *value, const Onnx__TypeProto *type,
                     const char *what, GError **error)
{
  const Onnx__TypeProto__Tensor *tt;
  FbValueKind kind;
  const Onnx__TypeProto *inner;

  if (type == NULL)
    return TRUE;
  inner = _fb_onnx_unwrap_kind (type, &kind);
  if (inner == NULL)
    {
      g_hash_table_insert (bad_values, value,
                           g_strdup_printf ("%s '%s' is %s%s, which this project does not "
                                            "compute yet", what, value->name, _fb_onnx_type_kind (type),
                                            kind != FB_KIND_TENSOR ? " of other than tensors"
                                                                   : ""));
      return TRUE;
    }
  value->kind = kind;
  tt = inner->tensor_type;
  if (tt == NULL)
    return TRUE;
  if (tt->has_elem_type && tt->elem_type != 0)
    {
      /* 1 to 22 are the element types ONNX defines (strings, complex numbers, float8, 4-bit
       * integers among them); any other number is no valid model. */
      if (!fb_dtype_is_known (tt->elem_type) && (tt->elem_type < 1 || tt->elem_type > 22))
        {
          g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                       "%s '%s' has element type %d, which ONNX does not define", what,
                       value->name, tt->elem_type);
          return FALSE;
        }
      if (!fb_dtype_is_known (tt->elem_type))
        {
          g_hash_table_insert (bad_values, value,
                               g_strdup_printf ("%s '%s' has element type %s, which this project "
                                                "does not compute", what, value->name,
                                                fb_dtype_name (tt->elem_type)));
          return TRUE;
        }
      value->dtype = (FbDType) tt->elem_type;
    }
  if (tt->shape != NULL)
    {
      FbShape s = { 0 };
      if (tt->shape->n_dim > FB_MAX_RANK)
        {
          g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                       "%s '%s' has rank %" G_GSIZE_FORMAT "; at most %d is supported",
                       what, value->name, (gsize) tt->shape->n_dim, FB_MAX_RANK);
          return FALSE;
        }
      s.rank = (int) tt->shape->n_dim;
      for (int i = 0; i < s.rank; i++)
        {
          const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
          s.dim[i] = FB_DIM_UNKNOWN;
          if (d == NULL)
            continue;
          if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            {
              if (d->dim_value < 0)
                {
                  g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                               "%s '%s': dimension %d is negative (%" G_GINT64_FORMAT ")",
                               what, value->name, i, d->dim_value);
                  return FALSE;
                }
              s.dim[i] = d->dim_value;
            }
          else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                   d->dim_param != NULL && *d->dim_param != '\0')
            s.sym[i] = g_intern_string (d->dim_param);
        }
      value->shape = s;
    }
  return TRUE;
}

