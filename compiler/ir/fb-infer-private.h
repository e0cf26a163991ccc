/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shared internals of shape inference: the per-operator functions that fb-infer.c dispatches to
 * and the helpers they share. Private to compiler/ir. */
#pragma once

#include "fb-infer.h"

G_BEGIN_DECLS

/* A node that carries no opset (built by hand, or by a pass that did not copy one) follows the
 * newest semantics this project knows. */
#define FB_INFER_LATEST_OPSET 21

/* Shape-like inputs longer than this are refused: no shape, axes list or pads list of a real
 * model comes near it, and reading a hostile million-element "shape" would only waste time. */
#define FB_INFER_MAX_VECTOR 65536

typedef gboolean (*FbInferFunc) (FbGraph *graph, FbNode *node, GError **error);

/* Element-type classes an operator accepts. */
typedef enum {
  FB_TYPES_ANY,        /* every element type */
  FB_TYPES_NUMERIC,    /* integers and floats, not bool */
  FB_TYPES_SIGNED,     /* signed integers and floats */
  FB_TYPES_FLOAT,      /* float16, bfloat16, float32, float64 */
  FB_TYPES_INTEGER,    /* signed or unsigned integers */
  FB_TYPES_INDEX,      /* int32 or int64 */
  FB_TYPES_INT64,      /* int64 only */
  FB_TYPES_BOOL,
} FbTypeClass;

/* ---- errors (all return FALSE so that callers can `return _fb_infer_fail (...)`) ------------ */

/* FB_GRAPH_ERROR_SHAPE, "node 'NAME' (OpType): MESSAGE". */
gboolean  _fb_infer_fail          (GError **error, const FbNode *node, const char *format, ...)
                                   G_GNUC_PRINTF (3, 4);
/* The same with FB_GRAPH_ERROR_UNSUPPORTED. */
gboolean  _fb_infer_unsupported   (GError **error, const FbNode *node, const char *format, ...)
                                   G_GNUC_PRINTF (3, 4);
/* The same with FB_GRAPH_ERROR_INVALID (missing inputs, subgraph arity). */
gboolean  _fb_infer_invalid       (GError **error, const FbNode *node, const char *format, ...)
                                   G_GNUC_PRINTF (3, 4);

/* ---- node access ---------------------------------------------------------------------------- */

int       _fb_infer_opset         (const FbNode *node);
/* The i-th input; NULL with an error when a required input is absent. */
FbValue  *_fb_infer_require       (const FbNode *node, guint i, GError **error);
/* Error when the node carries attribute name although its opset moved it to an input (or
 * dropped it): silently ignoring it would change what the model computes. */
gboolean  _fb_infer_no_attr       (const FbNode *node, const char *name, GError **error);
/* Error when input i is given although the node's opset does not have it yet. */
gboolean  _fb_infer_no_input      (const FbNode *node, guint i, const char *name, int since,
                                   GError **error);
/* Reads an INTS attribute that must have exactly `want` entries when present (want < 0: any
 * length). *v is NULL and *n 0 when absent. */
gboolean  _fb_infer_attr_ints     (const FbNode *node, const char *name, int want,
                                   const int64_t **v, guint *n, GError **error);

/* ---- element types -------------------------------------------------------------------------- */

/* Checks that input i (when present and typed) is in class; the error names the input. */
gboolean  _fb_infer_check_type    (const FbNode *node, guint i, FbTypeClass cls, GError **error);
/* Checks that the present inputs listed agree on their element type; *out receives it
 * (FB_DTYPE_UNDEFINED when none is known). */
gboolean  _fb_infer_same_type     (const FbNode *node, const guint *inputs, guint n, FbDType *out,
                                   GError **error);
gboolean  _fb_dtype_in_class      (FbDType dtype, FbTypeClass cls);

/* ---- constants ------------------------------------------------------------------------------ */

/* The values of input i when it is a constant integer tensor of rank 0 or 1, or computed from
 * shapes with every entry known: *n receives the count and *out a g_free'd copy; *n = -1 (and no
 * error) when the input is absent or not known. Error when the constant is not an integer vector
 * or longer than max_len. */
gboolean  _fb_infer_const_ints    (const FbNode *node, guint i, const char *what, guint max_len,
                                   int64_t **out, int *n, GError **error);
/* The same for a float (or integer) vector, read as double. */
gboolean  _fb_infer_const_floats  (const FbNode *node, guint i, const char *what, guint max_len,
                                   double **out, int *n, GError **error);
/* The static length of a 1-D input (its only dimension), or -1 when not known. Error when the
 * input is known not to be a vector (rank other than 1; with allow_scalar, rank 0 counts as 1). */
gboolean  _fb_infer_vector_length (const FbNode *node, guint i, const char *what,
                                   gboolean allow_scalar, int64_t *len, GError **error);
/* Error unless input i (when present and shaped) holds one element: rank 0, or [1] where
 * allow_vector1. */
gboolean  _fb_infer_check_scalar  (const FbNode *node, guint i, const char *what,
                                   gboolean allow_vector1, GError **error);
/* Error unless input i (when present and shaped) can hold exactly one element, whatever its
 * rank ([1, 1] too): If's condition and Loop's cond, as the spec words them. */
gboolean  _fb_infer_check_one_element (const FbNode *node, guint i, const char *what,
                                       GError **error);

/* ---- values computed from shapes (fb-infer-data.c) ------------------------------------------ */

#define FB_INT_VEC_MAX (2 * FB_MAX_RANK)

/* A small integer vector (or scalar) whose entries are known numbers or, when only known at run
 * time, possibly a named extent. */
typedef struct {
  int         n;                        /* entries (1 for a scalar) */
  gboolean    scalar;                   /* rank 0 rather than 1 */
  int64_t     v[FB_INT_VEC_MAX];        /* the entry, where known */
  gboolean    known[FB_INT_VEC_MAX];
  const char *sym[FB_INT_VEC_MAX];      /* for an unknown entry: the extent it equals, or NULL */
} FbIntVec;

/* What input i holds, from its constant or by following the shape arithmetic that computes it
 * (Shape, Gather, Concat, Slice, Unsqueeze, Cast, Add, Mul, Where, ConstantOfShape ...). FALSE
 * when nothing is known. */
gboolean  _fb_infer_int_vector    (const FbNode *node, guint i, FbIntVec *out);

/* ---- shapes --------------------------------------------------------------------------------- */

/* Overflow-checked arithmetic on extents: unknown in, unknown out; FALSE on overflow. */
gboolean  _fb_dim_mul             (int64_t a, int64_t b, int64_t *out);
gboolean  _fb_dim_add             (int64_t a, int64_t b, int64_t *out);
/* Normalizes axis against rank; error naming what it is ("axis", "perm entry"). */
gboolean  _fb_infer_axis          (const FbNode *node, int64_t axis, int rank, const char *what,
                                   int *out, GError **error);
/* Normalizes a list of axes into mask[0..rank) (entries set TRUE); error on a repeat. */
gboolean  _fb_infer_axes_mask     (const FbNode *node, const int64_t *axes, int n, int rank,
                                   const char *what, gboolean mask[FB_MAX_RANK], GError **error);
/* Checks that a rank fits FB_MAX_RANK (UNSUPPORTED otherwise). */
gboolean  _fb_infer_check_rank    (const FbNode *node, int64_t rank, GError **error);
/* A shape of the given rank with every extent unknown. */
FbShape   _fb_shape_of_rank       (int rank);
/* Numpy broadcasting of a and b with the node named in the error. */
gboolean  _fb_infer_broadcast     (const FbNode *node, const FbShape *a, const FbShape *b,
                                   FbShape *out, GError **error);
/* The shape of input i, or the unknown shape when absent. */
FbShape   _fb_infer_input_shape   (const FbNode *node, guint i);
FbDType   _fb_infer_input_type    (const FbNode *node, guint i);

/* ---- results -------------------------------------------------------------------------------- */

/* Gives output i (ignored when absent) the inferred dtype and shape, keeping whatever it already
 * knows better (value_info); error when both are known and disagree, or when the element count
 * of the shape overflows. */
gboolean  _fb_infer_set_output    (const FbNode *node, guint i, FbDType dtype, const FbShape *shape,
                                   GError **error);
/* The same merge for any value (subgraph inputs bound to a node's inputs). */
gboolean  _fb_infer_merge_value   (const FbNode *node, FbValue *value, FbDType dtype,
                                   const FbShape *shape, GError **error);
/* The most precise shape that both a and b satisfy: extents that differ become unknown, ranks that
 * differ make the rank unknown. */
FbShape   _fb_shape_join          (const FbShape *a, const FbShape *b);

/* ---- per-operator functions (one family per fb-infer-FAMILY.c) ------------------------------ */

/* fb-infer-elementwise.c */
gboolean  _fb_infer_unary         (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_binary        (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_variadic      (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_where         (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_cast          (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_clip          (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_dropout       (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_prelu         (FbGraph *graph, FbNode *node, GError **error);

/* fb-infer-reduction.c */
gboolean  _fb_infer_reduce        (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_argmax        (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_softmax       (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_topk          (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_cumsum        (FbGraph *graph, FbNode *node, GError **error);

/* fb-infer-reshape.c */
gboolean  _fb_infer_reshape       (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_flatten       (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_squeeze       (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_unsqueeze     (FbGraph *graph, FbNode *node, GError **error);

/* fb-infer-movement.c */
gboolean  _fb_infer_concat        (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_transpose     (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_gather        (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_gather_elements (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_scatter_nd    (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_depth_to_space (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_space_to_depth (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_trilu         (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_expand        (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_tile          (FbGraph *graph, FbNode *node, GError **error);

/* fb-infer-slice.c */
gboolean  _fb_infer_slice         (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_split         (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_pad           (FbGraph *graph, FbNode *node, GError **error);

/* fb-infer-resize.c */
gboolean  _fb_infer_resize        (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_upsample      (FbGraph *graph, FbNode *node, GError **error);

/* fb-infer-conv.c */
gboolean  _fb_infer_conv          (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_conv_transpose (FbGraph *graph, FbNode *node, GError **error);
/* The spatial extents of a convolution's output over channels-first x (of known rank) with
 * weights w, into out's axes 2 on (ConvInteger, QLinearConv). */
gboolean  _fb_infer_conv_spatial  (const FbNode *node, const FbValue *x, const FbValue *w,
                                   FbShape *out, GError **error);
gboolean  _fb_infer_pool          (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_global_pool   (FbGraph *graph, FbNode *node, GError **error);

/* fb-infer-norm.c */
gboolean  _fb_infer_batch_norm    (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_instance_norm (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_layer_norm    (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_lrn           (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_mvn           (FbGraph *graph, FbNode *node, GError **error);

/* fb-infer-linalg.c */
gboolean  _fb_infer_matmul        (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_gemm          (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_einsum        (FbGraph *graph, FbNode *node, GError **error);

/* fb-infer-misc.c */
gboolean  _fb_infer_constant      (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_constant_of_shape (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_range         (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_shape         (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_size          (FbGraph *graph, FbNode *node, GError **error);

/* fb-infer-control.c */
gboolean  _fb_infer_if            (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_loop          (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_scan          (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_fused         (FbGraph *graph, FbNode *node, GError **error);

/* fb-infer-recurrent.c */
gboolean  _fb_infer_gru           (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_lstm          (FbGraph *graph, FbNode *node, GError **error);

/* ---- Einsum equations (shared with the cost model) ------------------------------------------ */

#define FB_EINSUM_MAX_INPUTS 2

/* A parsed equation of one or two operands. Labels are letters; an operand's term may repeat
 * one (its diagonal), and a label missing from the output is summed over. The ellipsis is
 * stored as the label '.' and stands for the broadcast dimensions it covers. */
typedef struct {
  guint n_inputs;
  char  in[FB_EINSUM_MAX_INPUTS][FB_MAX_RANK + 2];   /* NUL-terminated labels, '.' = ellipsis */
  char  out[FB_MAX_RANK + 2];                        /* explicit, or numpy's implicit output */
} FbEinsumEq;

/* Parses equation for n_inputs operands (numpy's rules: an implicit output is the ellipsis,
 * then the labels used once, in order); errors name the node. */
gboolean  _fb_einsum_parse        (const FbNode *node, const char *equation, guint n_inputs,
                                   FbEinsumEq *eq, GError **error);

/* fb-infer-math.c */
gboolean  _fb_infer_math_unary    (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_bit_shift     (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_cast_like     (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_eye_like      (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_hardmax       (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_loss          (FbGraph *graph, FbNode *node, GError **error);
/* fb-infer-recurrent.c */
gboolean  _fb_infer_rnn           (FbGraph *graph, FbNode *node, GError **error);
/* fb-infer-index.c */
gboolean  _fb_infer_gather_nd     (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_scatter_elements (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_one_hot       (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_reverse_sequence (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_data_sized    (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_quantize      (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_window        (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_grid_sample   (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_qlinear       (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_det           (FbGraph *graph, FbNode *node, GError **error);
/* fb-infer-conv.c */
gboolean  _fb_infer_max_unpool    (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_roi_align     (FbGraph *graph, FbNode *node, GError **error);
/* fb-infer-signal.c */
gboolean  _fb_infer_dft           (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_stft          (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_mel_weight_matrix (FbGraph *graph, FbNode *node, GError **error);
/* fb-infer-sequence.c */
/* Gives output i the kind (error when it was declared another non-tensor kind). */
gboolean  _fb_infer_set_kind      (const FbNode *node, guint i, FbValueKind kind, GError **error);
/* UNSUPPORTED when an input is a sequence or an optional: for operators that take tensors. */
gboolean  _fb_infer_check_tensors (const FbNode *node, GError **error);
gboolean  _fb_infer_sequence_empty (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_sequence_construct (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_sequence_insert (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_sequence_at   (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_sequence_erase (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_sequence_length (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_split_to_sequence (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_concat_from_sequence (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_optional      (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_optional_get_element (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_optional_has_element (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_identity      (FbGraph *graph, FbNode *node, GError **error);
gboolean  _fb_infer_sequence_map  (FbGraph *graph, FbNode *node, GError **error);
/* fb-infer-text.c */
gboolean  _fb_infer_tfidf         (FbGraph *graph, FbNode *node, GError **error);

G_END_DECLS
