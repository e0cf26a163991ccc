/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Element types and value kinds. The numeric values are ONNX's TensorProto.DataType so that import and the
 * .pb writers need no translation table. */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef enum {
  FB_DTYPE_UNDEFINED = 0,
  FB_DTYPE_FLOAT32   = 1,
  FB_DTYPE_UINT8     = 2,
  FB_DTYPE_INT8      = 3,
  FB_DTYPE_UINT16    = 4,
  FB_DTYPE_INT16     = 5,
  FB_DTYPE_INT32     = 6,
  FB_DTYPE_INT64     = 7,
  FB_DTYPE_STRING    = 8,
  FB_DTYPE_BOOL      = 9,
  FB_DTYPE_FLOAT16   = 10,
  FB_DTYPE_FLOAT64   = 11,
  FB_DTYPE_UINT32    = 12,
  FB_DTYPE_UINT64    = 13,
  FB_DTYPE_BFLOAT16  = 16,
} FbDType;

/* Size of one element in bytes; 0 for UNDEFINED, STRING and values ONNX does not define. */
gsize        fb_dtype_size        (FbDType dtype);
/* Short lower-case name as numpy spells it ("float32", "int64", "bool"); "?" when unknown. */
const char  *fb_dtype_name        (FbDType dtype);
/* TRUE for the element types this project stores and computes (every one but STRING). */
gboolean     fb_dtype_is_known    (int dtype);
gboolean     fb_dtype_is_float    (FbDType dtype);
gboolean     fb_dtype_is_integer  (FbDType dtype);   /* signed or unsigned, not bool */
gboolean     fb_dtype_is_signed   (FbDType dtype);

/* What a value is. ONNX values are tensors, sequences of tensors or optionals; dtype and shape
 * always describe the tensors inside (a sequence's elements, an optional's content), so that
 * code that only knows tensors reads the element type and must check kind first. Nested kinds
 * beyond optional(sequence) (a sequence of sequences, a map) are not represented. */
typedef enum {
  FB_KIND_TENSOR = 0,
  FB_KIND_SEQUENCE,             /* seq(tensor): any number of tensors of one element type */
  FB_KIND_OPTIONAL,             /* optional(tensor): a tensor or nothing */
  FB_KIND_OPTIONAL_SEQUENCE,    /* optional(seq(tensor)) */
} FbValueKind;

/* "tensor", "sequence", "optional", "optional sequence". */
const char  *fb_value_kind_name   (FbValueKind kind);
/* inner wrapped as the kind says: "seq(float32[1x64])", "optional(seq(f32[?]))". */
char        *fb_value_kind_wrap   (FbValueKind kind, const char *inner);

/* IEEE half and bfloat16 conversions (round to nearest even). */
float        fb_half_to_float     (uint16_t h);
uint16_t     fb_float_to_half     (float f);
float        fb_bfloat16_to_float (uint16_t b);
uint16_t     fb_float_to_bfloat16 (float f);

G_END_DECLS
