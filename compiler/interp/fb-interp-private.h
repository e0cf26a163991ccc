/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internals shared by the interpreter's kernel families: the kernel signature, each family's
 * entry points and the helpers every family needs (errors, element conversion, broadcasting,
 * strided copies). Only compiler/interp/ includes this header. */
#pragma once

#include "fb-interp.h"

G_BEGIN_DECLS

/* The newest default-domain opset whose semantics the kernels know; a node that carries no
 * opset (built by hand, opset 0) gets these semantics. */
#define FB_INTERP_LATEST_OPSET 21

/* What a kernel may know about the run it is part of: only control-flow kernels look inside. */
typedef struct _FbInterpCtx FbInterpCtx;

/* in has node->n_inputs entries (NULL for omitted inputs); on success every out[k] for which
 * node->outputs[k] is set (or any out[k], when run through fb_interp_node) holds a new tensor. */
typedef gboolean (*FbInterpKernel) (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                                    FbTensor **out, GError **error);
/* Checks what can be checked without data (attributes, equation strings, modes). */
typedef gboolean (*FbInterpCheck)  (const FbNode *node, GError **error);

/* ---- errors and attributes ---------------------------------------------------------------- */

/* Sets "node 'NAME' (OpType): MESSAGE" and returns FALSE, so kernels can `return _fb_interp_fail`. */
gboolean  _fb_interp_fail           (GError **error, const FbNode *node, FbInterpError code,
                                     const char *format, ...) G_GNUC_PRINTF (4, 5);
int       _fb_interp_opset          (const FbNode *node);
/* The input at index i, or NULL; error when a required input is missing. */
gboolean  _fb_interp_need           (const FbNode *node, FbTensor *const *in, guint i,
                                     GError **error);

/* ---- subgraphs ---------------------------------------------------------------------------- */

/* Runs body (a subgraph of owner, the node being run) below the environment owner runs in,
 * its inputs bound to inputs; its outputs, or NULL (fb-interp.c). */
GPtrArray *_fb_interp_run_body      (FbInterpCtx *ctx, const FbGraph *body, FbTensor *const *inputs,
                                     guint n_inputs, const FbNode *owner, GError **error);
/* FALSE with FB_INTERP_ERROR_CANCELLED once the run was cancelled. */
gboolean  _fb_interp_check_cancelled (FbInterpCtx *ctx, GError **error);

/* ---- tensors ------------------------------------------------------------------------------ */

/* A new zeroed output; a size that cannot be allocated is a runtime error naming the node. */
FbTensor *_fb_interp_new            (const FbNode *node, FbDType dtype, int rank,
                                     const int64_t *dims, GError **error);
/* Scratch memory for n elements of size bytes, zeroed; a size that overflows or cannot be had
 * is a runtime error naming the node (never an abort: hostile shapes reach here). */
gpointer  _fb_interp_alloc          (const FbNode *node, int64_t n, gsize size, GError **error);
/* A tensor that shares x's bytes under other dims (the element counts must agree). */
FbTensor *_fb_interp_view           (const FbNode *node, FbTensor *x, int rank,
                                     const int64_t *dims, GError **error);
/* Whole-tensor conversions (one switch per tensor, not per element). The arrays hold at least
 * one element so that empty tensors need no special case; free with g_free. */
double   *_fb_interp_read_f64       (const FbTensor *t);
int64_t  *_fb_interp_read_i64       (const FbTensor *t);
/* Writes converted values into a writable tensor: floats round, integers wrap to the type,
 * floats to integers truncate toward zero (saturating at the int64 range), bool is v != 0. */
void      _fb_interp_write_f64      (FbTensor *t, const double *v);
void      _fb_interp_write_i64      (FbTensor *t, const int64_t *v);
/* A 1-element tensor (any rank) as a number; error naming what when it is not one element. */
gboolean  _fb_interp_scalar_i64     (const FbNode *node, const FbTensor *t, const char *what,
                                     int64_t *out, GError **error);
gboolean  _fb_interp_scalar_f64     (const FbNode *node, const FbTensor *t, const char *what,
                                     double *out, GError **error);
/* A rank-0 or rank-1 integer tensor as a g_new array (n may be 0; the array is never NULL). */
gboolean  _fb_interp_int_list       (const FbNode *node, const FbTensor *t, const char *what,
                                     int64_t **out, guint *n, GError **error);
/* Integer computation for integers and bool; double for floats. */
static inline gboolean
_fb_interp_is_int (FbDType dtype)
{
  return !fb_dtype_is_float (dtype);
}
gboolean  _fb_interp_need_float     (const FbNode *node, const FbTensor *t, GError **error);
/* x with its axes permuted: out dims[i] = x dims[perm[i]]. */
FbTensor *_fb_interp_permute        (const FbNode *node, const FbTensor *x, const int *perm,
                                     GError **error);
int64_t   _fb_interp_prod           (const int64_t *dims, int from, int to);

/* ---- broadcasting and strided copies ------------------------------------------------------ */

#define FB_BCAST_MAX 3

typedef struct {
  int     rank;
  int64_t dims[FB_MAX_RANK];              /* the result's extents */
  int64_t numel;
  int64_t inner;                          /* extent of the last dimension (1 for scalars) */
  int     n;                              /* operands */
  int64_t strides[FB_BCAST_MAX][FB_MAX_RANK];  /* element strides, 0 along broadcast axes */
} FbBcast;

/* Numpy broadcasting of n tensors' shapes; a runtime error naming the node when they do not
 * broadcast. */
gboolean  _fb_bcast_init            (FbBcast *b, const FbNode *node, int n,
                                     const FbTensor *const *ts, GError **error);
/* The same from bare shapes. */
gboolean  _fb_bcast_init_dims       (FbBcast *b, const FbNode *node, int n, const int *ranks,
                                     const int64_t *const *dims, GError **error);
/* Offsets of the first element of row r (rows are runs of `inner` results) in each operand. */
void      _fb_bcast_row             (const FbBcast *b, int64_t r, int64_t *offsets);
/* Row-major element strides of dims. */
void      _fb_strides               (int rank, const int64_t *dims, int64_t *strides);
/* Copies the elements of a rank-dimensional box: dst and src are addressed with element
 * strides (src strides may be 0 or negative), esize bytes per element. */
void      _fb_copy_strided          (void *dst, const int64_t *dst_strides, const void *src,
                                     const int64_t *src_strides, int rank, const int64_t *dims,
                                     gsize esize);

/* ---- sliding windows (Conv, ConvTranspose, pools) ----------------------------------------- */

/* The geometry of a window over 1 to 3 spatial axes, always seen as 3-D (depth, height, width)
 * with leading axes of extent 1, so that one loop nest serves every spatial rank. */
typedef struct {
  int     n;                          /* spatial rank as given */
  int64_t in[3], out[3], k[3], stride[3], dil[3], pad[3], pad_end[3];
} FbWindow;

/* Reads kernel_shape (or takes kernel), strides, dilations, pads and auto_pad, and computes the
 * output extents for a Conv or pool over x (NCHW). */
gboolean  _fb_interp_window         (const FbNode *node, const FbTensor *x, const int64_t *kernel,
                                     gboolean ceil_mode, FbWindow *w, GError **error);
/* Whether the node carries fb_layout = "nhwc". */
gboolean  _fb_interp_is_nhwc        (const FbNode *node);
/* Moves the channel axis: to_first turns NHWC into NCHW, else NCHW into NHWC. */
FbTensor *_fb_interp_channels       (const FbNode *node, const FbTensor *x, gboolean to_first,
                                     GError **error);

/* ---- kernel families ---------------------------------------------------------------------- */

/* fb-interp-sequence.c */
gboolean _fb_interp_sequence_empty  (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_sequence_construct (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_sequence_insert (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_sequence_at     (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_sequence_erase  (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_sequence_length (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_split_to_sequence (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_concat_from_sequence (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_optional        (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_optional_has_element (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_optional_get_element (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_sequence_map    (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
/* fb_interp_check_input for a value or a fed value that is a sequence or an optional. */
gboolean _fb_interp_check_container_input (const FbValue *v, const FbTensor *t, GError **error);

/* fb-interp-elementwise.c */
gboolean _fb_interp_unary           (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_cast            (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_clip            (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_dropout         (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_check_unary     (const FbNode *node, GError **error);
/* fb-interp-binary.c */
gboolean _fb_interp_binary          (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_variadic        (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_where           (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
/* fb-interp-reduce.c */
gboolean _fb_interp_reduce          (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_argmax          (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_softmax         (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_topk            (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_cumsum          (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
/* fb-interp-conv.c */
gboolean _fb_interp_conv            (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_conv_transpose  (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_check_window    (const FbNode *node, GError **error);
gboolean _fb_interp_max_unpool      (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
/* fb-interp-nn.c */
gboolean _fb_interp_pool            (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_global_pool     (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_batch_norm      (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_instance_norm   (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_layer_norm      (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_lrn             (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_mvn             (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
/* fb-interp-matmul.c */
gboolean _fb_interp_matmul          (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_gemm            (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_einsum          (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_check_einsum    (const FbNode *node, GError **error);
/* fb-interp-movement.c */
gboolean _fb_interp_concat          (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_transpose       (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_slice           (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_split           (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_gather          (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_gather_elements (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_scatter_nd      (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_expand          (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_tile            (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_pad             (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_depth_space     (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_trilu           (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_check_pad       (const FbNode *node, GError **error);
/* fb-interp-shape.c */
gboolean _fb_interp_constant        (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_constant_of_shape (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_range           (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_reshape         (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_flatten         (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_squeeze         (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_unsqueeze       (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_shape           (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_size            (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_check_constant  (const FbNode *node, GError **error);
/* fb-interp-resize.c */
gboolean _fb_interp_resize          (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_check_resize    (const FbNode *node, GError **error);
/* fb-interp-recurrent.c */
gboolean _fb_interp_gru             (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_lstm            (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_rnn             (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_check_recurrent (const FbNode *node, GError **error);

/* fb-interp-math.c */
gboolean _fb_interp_math            (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_bit_shift       (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_cast_like       (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_eye_like        (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_hardmax         (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_check_math      (const FbNode *node, GError **error);
gboolean _fb_interp_eye_like_dtype  (const FbNode *node, FbDType x, FbDType *out, GError **error);
/* fb-interp-loss.c */
gboolean _fb_interp_nll_loss        (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_softmax_ce_loss (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_check_loss      (const FbNode *node, GError **error);
/* fb-interp-index.c */
gboolean _fb_interp_gather_nd       (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_scatter_elements (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_one_hot         (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_reverse_sequence (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_check_scatter_elements (const FbNode *node, GError **error);
gboolean _fb_interp_one_hot_depth   (const FbNode *node, const FbTensor *t, int64_t *depth,
                                     GError **error);
/* fb-interp-select.c */
gboolean _fb_interp_compress        (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_non_zero        (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_unique          (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_nms             (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
/* fb-interp-qlinear.c */
gboolean _fb_interp_matmul_integer  (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_conv_integer    (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_det             (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
/* fb-interp-grid.c */
gboolean _fb_interp_grid_sample     (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
/* fb-interp-signal.c */
gboolean _fb_interp_dft             (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_stft            (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_mel_weight_matrix (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
/* fb-interp-roi-align.c */
gboolean _fb_interp_roi_align       (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
/* fb-interp-tfidf.c */
gboolean _fb_interp_tfidf           (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
/* fb-interp-scan.c */
gboolean _fb_interp_scan            (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_check_grid_sample (const FbNode *node, GError **error);
/* fb-interp-quant.c */
gboolean _fb_interp_quantize        (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_dequantize      (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_dynamic_quantize (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
gboolean _fb_interp_window_fn       (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
/* The range of an integer type quantization writes; FALSE for other types. */
gboolean _fb_interp_quant_range     (FbDType t, double *lo, double *hi);

G_END_DECLS
