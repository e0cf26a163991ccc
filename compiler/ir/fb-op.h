/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The operator registry: ids, ONNX names, arity and coarse classes, all generated from ops.def. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define FB_ARITY_ANY 0xffffu

typedef enum {
  FB_OPF_NONE          = 0,
  FB_OPF_UNARY         = 1 << 0,   /* elementwise, one tensor input */
  FB_OPF_BINARY        = 1 << 1,   /* elementwise with numpy broadcasting, two inputs */
  FB_OPF_TERNARY       = 1 << 2,   /* elementwise with broadcasting, three inputs (Where) */
  FB_OPF_VARIADIC      = 1 << 3,   /* elementwise with broadcasting, any number (Sum, Max) */
  FB_OPF_LOGICAL       = 1 << 4,   /* produces bool */
  FB_OPF_REDUCTION     = 1 << 5,   /* reduces or normalizes along axes */
  FB_OPF_CONTRACTION   = 1 << 6,   /* Conv, MatMul, Gemm: the compute-heavy ops */
  FB_OPF_POOL          = 1 << 7,
  FB_OPF_NORMALIZATION = 1 << 8,
  FB_OPF_MOVEMENT      = 1 << 9,   /* moves or copies data without arithmetic */
  FB_OPF_RESHAPE       = 1 << 10,  /* only reinterprets the shape: no data moves */
  FB_OPF_SOURCE        = 1 << 11,  /* creates a tensor from attributes or small inputs */
  FB_OPF_SHAPE_OF      = 1 << 12,  /* reads only the shape of its input */
  FB_OPF_SCAN          = 1 << 13,
  FB_OPF_RECURRENT     = 1 << 14,
  FB_OPF_CONTROL       = 1 << 15,  /* If, Loop: run subgraphs */
  FB_OPF_FUSED         = 1 << 16,  /* created by a fusion pass; holds a body graph */
  FB_OPF_SEQUENCE      = 1 << 17,  /* makes, reads or passes sequences or optionals */
} FbOpFlags;

#define FB_OPF_ELEMENTWISE (FB_OPF_UNARY | FB_OPF_BINARY | FB_OPF_TERNARY | FB_OPF_VARIADIC)

typedef enum {
#define FB_OP(id, name, flags, min_in, max_in, min_out, max_out) FB_OP_##id,
#include "ops.def"
#undef FB_OP
  FB_OP_COUNT
} FbOpKind;

typedef struct {
  const char *name;         /* ONNX op_type, "" for FB_OP_UNKNOWN */
  FbOpFlags   flags;
  guint16     min_inputs;
  guint16     max_inputs;   /* FB_ARITY_ANY for variadic */
  guint16     min_outputs;
  guint16     max_outputs;
} FbOpInfo;

const FbOpInfo *fb_op_info        (FbOpKind op);
const char     *fb_op_name        (FbOpKind op);
/* The op for an ONNX (domain, op_type); FB_OP_UNKNOWN when unsupported. The default domain is
 * "" or "ai.onnx". */
FbOpKind        fb_op_lookup      (const char *domain, const char *op_type);
gboolean        fb_op_has_flag    (FbOpKind op, FbOpFlags flag);

G_END_DECLS
