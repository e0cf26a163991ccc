/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internals shared by the lowering files: the per-kernel context and its helpers.
 * Only compiler/lower/ includes this header. */
#pragma once

#include "fb-lower.h"

G_BEGIN_DECLS

typedef struct {
  FbPlan        *plan;
  const FbGraph *graph;
  GHashTable    *buffer_of;     /* const FbValue* (top level) -> buffer index + 1 */
  GHashTable    *const_of;      /* FbTensor* -> buffer index + 1, so weights are shared */
  GHashTable    *uses;          /* fb_graph_build_uses of the graph */
} FbLowerPlan;

/* One kernel being built from one final-stage node (a FUSED group or a plain node). */
typedef struct {
  FbLowerPlan   *lp;
  FbKernel      *k;
  const FbNode  *node;          /* the final-stage node, for messages */
  GHashTable    *bind;          /* body value -> outer value (FUSED inputs and outputs) */
  GHashTable    *arg_of;        /* const FbValue* -> argument index + 1 */
  GHashTable    *inline_of;     /* const FbValue* -> the elementwise FbNode* computed in place */
  GHashTable    *sunk;          /* const FbValue* v -> FbValue* O: v is never stored; the
                                   elementwise chain from v to O is applied to it in registers
                                   and O is stored instead */
  GHashTable    *body_uses;     /* uses within the group being lowered */
  /* Provenance of phases: the phases from member_first on are those of the member being
   * emitted; a member computed in place (inlined, or a sunk chain) gives its original nodes to
   * the phase its expression is built in, and is noted in attributed. */
  guint          member_first;
  GHashTable    *attributed;
  /* const FbNode* Conv member -> the Mul member scaling its input that the library folds into
   * its weights at every run (cpu: _fb_lower_dnnl_scale_fold; a GPU, per image:
   * _fb_lower_conv_product_gpu_scale_fold); the Mul has no phase of its own. */
  GHashTable    *scale_of;
  /* While a sunk value's chain is built: v reads as subst_expr. */
  const FbValue *subst_value;
  FbKExpr       *subst_expr;
  /* Coalesced coordinates of an elementwise phase: dims [group[g], group[g+1]) of the output
   * are one loop. merged_rank < 0: coordinates are the output's own. */
  int            merged_rank;
  int            out_rank;
  int            group[FB_MAX_RANK + 1];
  int64_t        out_dims[FB_MAX_RANK];
} FbLowerCtx;

/* Gives convolutions whose fused Add reads a residual dying there the residual's bytes for
 * their output, adding it in place (fb-lower-residual.c); cpu plans only. Returns how many. */
guint     _fb_lower_residual_in_place (FbPlan *plan);
/* Lets the producers of a Concat's pieces write straight into its output where the pieces are
 * contiguous runs of it, leaving the Concat a view (fb-lower-concat.c). Returns how many. */
guint     _fb_lower_concat_in_place (FbPlan *plan);
/* Makes Slices and one-index Gathers whose output is one contiguous run of their input views
 * of that run (fb-lower-slice-view.c). Returns how many. */
guint     _fb_lower_slice_views     (FbPlan *plan);
/* Lets cuBLASLt products read the input of a Transpose that only they read, and write the
 * output of a Transpose that alone reads them, through strides, and take a scaling of an operand
 * by one number into their alpha (fb-lower-product-strides.c). Returns how many kernels became
 * views. */
guint     _fb_lower_product_strides (FbPlan *plan);
/* The kernel runs no code any more: no phases, no work, kind view, labelled label (taken). */
void      _fb_lower_become_view     (FbKernel *kernel, char *label);
/* A Slice's start and step along every axis of its input of dims in (0 and 1 where it does not
 * cut), its starts clamped as the operator says. */
gboolean  _fb_lower_slice_starts    (const FbNode *node, int rank, const int64_t *in,
                                     int64_t *start, int64_t *step, GError **error);
/* Per buffer: how many kernels (not views) write its root's bytes (caller frees). */
guint    *_fb_lower_count_writers   (const FbPlan *plan);
/* Whether every access of kernel to its argument arg, a buffer of rows of row elements, can be
 * re-indexed for rows stride elements apart; with apply, re-indexes them, adding to plan what a
 * library phase needs for it (fb-lower-restride.c). */
gboolean  _fb_lower_restride_arg    (FbPlan *plan, FbKernel *kernel, guint arg, int64_t row,
                                     int64_t stride, gboolean apply);

/* Whether the kernel is lowered for a GPU target (library phases for contractions). */
gboolean  _fb_lower_for_gpu       (const FbLowerCtx *c);
/* Whether the target's convolution library runs d with one of its fast kernels on this
 * machine (fb-lower-dnnl-conv.c): a library convolution is made only then. */
gboolean  _fb_lower_conv_fast     (const FbTargetDesc *target, const FbConvDesc *d);

/* Errors */
gboolean  _fb_lower_fail          (GError **error, const FbNode *node, int code,
                                   const char *format, ...) G_GNUC_PRINTF (4, 5);

/* Static shape of a value (FALSE when not static). */
gboolean  _fb_lower_dims          (const FbValue *v, int *rank, int64_t *dims);
int64_t   _fb_lower_numel         (const FbValue *v);
gboolean  _fb_lower_is_scalar_const (const FbValue *v);

/* Arguments */
/* The kernel argument holding v (creating buffers for scratch values and constants). */
guint     _fb_lower_arg           (FbLowerCtx *c, const FbValue *v, FbKArgRole role);
/* The argument a node writing v writes to (O's when v is sunk into O). */
guint     _fb_lower_out_arg       (FbLowerCtx *c, const FbValue *v);
/* A new scratch buffer private to this kernel. */
guint     _fb_lower_scratch       (FbLowerCtx *c, const char *what, FbDType dtype, int rank,
                                   const int64_t *dims);
/* A constant tensor made at lowering time (repacked weights), as an argument. */
guint     _fb_lower_const_arg     (FbLowerCtx *c, FbTensor *tensor, const char *name);

/* Row-major strides of dims. */
void      _fb_lower_strides       (int rank, const int64_t *dims, int64_t *strides);
/* Σ coords[d] * stride[d], skipping extent-1 dims of the value. */
FbKExpr  *_fb_lower_index         (FbKernel *k, int rank, const int64_t *dims, FbKExpr **coords);

/* The scalar of value v at output coordinates coords (rank: the consumer's, right-aligned
 * broadcasting), inlining elementwise producers and substituting a sunk value. */
FbKExpr  *_fb_lower_value_at      (FbLowerCtx *c, const FbValue *v, int rank, FbKExpr **coords,
                                   GError **error);
/* Appends to body the statements that store x as v's element at coords: a plain store, or
 * for a sunk value the store of its chain's end. */
gboolean  _fb_lower_store         (FbLowerCtx *c, GPtrArray *body, const FbValue *v,
                                   FbKExpr **coords, FbKExpr *x, GError **error);
/* What _fb_lower_store wrote for v at coords, read back (v has no sunk chain: it is what the
 * output holds). */
FbKExpr  *_fb_lower_load_stored   (FbLowerCtx *c, const FbValue *v, FbKExpr **coords);
/* A new phase with a loop nest over dims (extent-1 dims get coordinate 0); the outermost real
 * loop is the parallel one. Returns the innermost body; coords receives the coordinates. */
GPtrArray *_fb_lower_nest         (FbLowerCtx *c, int rank, const int64_t *dims, FbKExpr **coords,
                                   double work);
/* A loop inside body; returns the loop's body and sets *var_expr. */
GPtrArray *_fb_lower_loop         (FbKernel *k, GPtrArray *body, FbKExpr *extent,
                                   FbKExpr **var_expr);

/* The scalar op of an elementwise node applied to its inputs' scalars. */
FbKExpr  *_fb_lower_scalar_op     (FbLowerCtx *c, const FbNode *node, FbKExpr **in,
                                   GError **error);
gboolean  _fb_lower_is_elementwise (const FbNode *node);

/* The elementwise operators added for conformance (fb-lower-math.c). */
FbKExpr  *_fb_lower_math_op       (FbLowerCtx *c, const FbNode *node, FbKExpr **in,
                                   GError **error);
/* Operators whose output size depends on the data (Compress, NonZero, Unique,
 * NonMaxSuppression, a window of a size or a OneHot of a depth fed at run time): host steps through the interpreter
 * until the runtime sizes buffers at run time for generated code (fb-lower-math.c). */
gboolean  _fb_lower_runs_on_host  (const FbNode *node);
/* GatherND, ScatterElements, Scatter, OneHot, ReverseSequence and the quantizers, and what of
 * them the cpu target compiles (fb-lower-index.c). */
gboolean  _fb_lower_index_node    (FbLowerCtx *c, const FbNode *node, GError **error);
gboolean  _fb_lower_index_supports (const FbNode *node, char **reason);
/* GridSample over 2-D inputs (fb-lower-grid.c). */
gboolean  _fb_lower_grid_sample   (FbLowerCtx *c, const FbNode *node, GError **error);
/* DFT, STFT and MelWeightMatrix of sizes known at compile time (fb-lower-signal.c). */
gboolean  _fb_lower_signal        (FbLowerCtx *c, const FbNode *node, GError **error);
/* RoiAlign (fb-lower-roi-align.c). */
gboolean  _fb_lower_roi_align     (FbLowerCtx *c, const FbNode *node, GError **error);
/* TfIdfVectorizer (fb-lower-tfidf.c). */
gboolean  _fb_lower_tfidf         (FbLowerCtx *c, const FbNode *node, GError **error);
/* CastLike, EyeLike, Hardmax and the losses (fb-lower-math.c). */
gboolean  _fb_lower_math_node     (FbLowerCtx *c, const FbNode *node, GError **error);

/* Node families: each emits the phases that compute node's outputs. */
gboolean  _fb_lower_elementwise   (FbLowerCtx *c, const FbNode *node, GError **error);
gboolean  _fb_lower_reduce        (FbLowerCtx *c, const FbNode *node, GError **error);
gboolean  _fb_lower_normalize     (FbLowerCtx *c, const FbNode *node, GError **error);
gboolean  _fb_lower_contraction   (FbLowerCtx *c, const FbNode *node, GError **error);
gboolean  _fb_lower_pool          (FbLowerCtx *c, const FbNode *node, GError **error);
gboolean  _fb_lower_movement      (FbLowerCtx *c, const FbNode *node, GError **error);
/* The value of a movement node's output at coordinates oc (its output's rank): the element of
 * its input it copies, read through _fb_lower_value_at. NULL with error set on a bad node. */
FbKExpr  *_fb_lower_movement_at   (FbLowerCtx *c, const FbNode *node, FbKExpr **oc,
                                   GError **error);
/* Movement members a fused group computes where they are read (Transpose, Gather, Slice and
 * the reshapes): each output element one element of the input. */
gboolean  _fb_lower_is_index_map  (const FbNode *node);
gboolean  _fb_lower_scatter_nd    (FbLowerCtx *c, const FbNode *node, GError **error);
gboolean  _fb_lower_max_unpool    (FbLowerCtx *c, const FbNode *node, GError **error);
gboolean  _fb_lower_topk          (FbLowerCtx *c, const FbNode *node, GError **error);
/* The range of a quantized type; round-half-even (q) + zero clamped to [lo, hi] in type ct,
 * NaN giving 0; and the requantization of an integer sum acc, saturate (acc * s0 * s1 / s2)
 * with the scales multiplied in float32 in that order, as the reference does
 * (fb-lower-index.c). */
gboolean  _fb_lower_quant_range   (FbDType t, double *lo, double *hi);
FbKExpr  *_fb_lower_saturate      (FbKernel *k, FbDType ct, FbKExpr *q, FbKExpr *zero, double lo,
                                   double hi);
FbKExpr  *_fb_lower_requantize    (FbKernel *k, FbKExpr *acc, FbKExpr *s0, FbKExpr *s1,
                                   FbKExpr *s2, FbKExpr *zero, double lo, double hi);
/* A product of rows x k by constant weights (k x n, or n x k with tb; not transposed A, one
 * batch) as a oneDNN 1x1 convolution with the sunk chain as its post-ops, on the cpu target
 * (fb-lower-product-conv.c). *taken is FALSE, and nothing is added to the kernel, where it
 * does not fit or would not be faster. */
gboolean  _fb_lower_product_conv  (FbLowerCtx *c, const FbNode *node, int64_t rows, int64_t n,
                                   int64_t k, gboolean tb, gboolean *taken, GError **error);
/* MatMul by loops, for the types sgemm does not take (fb-lower-imatmul.c). */
gboolean  _fb_lower_matmul_loops  (FbLowerCtx *c, const FbNode *node, GError **error);
gboolean  _fb_lower_einsum        (FbLowerCtx *c, const FbNode *node, GError **error);
/* ConvTranspose, 3-D Conv, ConvInteger and QLinearConv as direct loops (fb-lower-convnd.c). */
gboolean  _fb_lower_conv_direct   (FbLowerCtx *c, const FbNode *node, GError **error);
/* ConvTranspose: a oneDNN deconvolution where it has an optimized one, else the direct loops
 * (fb-lower-deconv.c). */
gboolean  _fb_lower_conv_transpose (FbLowerCtx *c, const FbNode *node, GError **error);
/* The begin pads of a ConvTranspose over sp spatial axes of extents in (input) and out (its
 * output, as shape inference gave it), from its pads, auto_pad or output_shape. */
void      _fb_lower_deconv_begin_pads (const FbNode *node, int sp, const int64_t *in,
                                       const int64_t *out, const int64_t *kernel, int64_t *begin);
/* BatchNormalization (fb-lower-batchnorm.c): whether node is in training mode; its scalar at
 * inference for input scalar x (an elementwise op); the kernel of its other forms (training,
 * or the statistics outputs asked for). */
gboolean  _fb_lower_bn_training   (const FbNode *node);
FbKExpr  *_fb_lower_batchnorm_expr (FbLowerCtx *c, const FbNode *node, int rank,
                                    FbKExpr **coords, FbKExpr *x, GError **error);
gboolean  _fb_lower_batchnorm     (FbLowerCtx *c, const FbNode *node, GError **error);
/* Det by LU decomposition with partial pivoting, a matrix per iteration (fb-lower-det.c). */
gboolean  _fb_lower_det           (FbLowerCtx *c, const FbNode *node, GError **error);
/* GRU and LSTM: the input projection, then the recurrence per direction and batch row. */
gboolean  _fb_lower_recurrent     (FbLowerCtx *c, const FbNode *node, GError **error);
/* Resize and Upsample: gathers and blends through per-axis tables made at compile time. */
gboolean  _fb_lower_resize        (FbLowerCtx *c, const FbNode *node, GError **error);

/* A reduction over the dimensions just before the kept innermost one (a channels-last global
 * pool) on a GPU, in two phases: runs of positions summed a thread each, then the runs
 * combined (fb-lower-reduce-gpu.c). */
/* Whether node is a float sum, mean, max or min that keeps its input's innermost dimension (of
 * 8 or more) and reduces 2 or more elements into each output: a column reduction. */
gboolean   _fb_lower_column_reducible (const FbNode *node, int rank, const int64_t *dims,
                                       guint mask, int64_t count);
/* The combining operation and start value of a sum, mean, max or min reduction. */
FbKBinary  _fb_lower_column_op (const FbNode *node, double *init);
/* Channels a column reduction accumulates at a time (fb-lower-reduce.c says why 64). */
#define FB_LOWER_COLUMN_BLOCK 64
/* The first of mask's axes when they are one block ending just before the last axis (a
 * channels-last pool's rows and columns), else -1. */
int        _fb_lower_column_first (int rank, guint mask);
/* coords[0 .. n) of a row-major index flat over dims[0 .. n). */
void       _fb_lower_unflatten    (FbKernel *k, FbKExpr *flat, const int64_t *dims, int n,
                                   FbKExpr **coords);
/* partial[at] = partial[at] op x at coords, x node's input, op its column operation. */
gboolean   _fb_lower_column_accumulate (FbLowerCtx *c, const FbNode *node, GPtrArray *body,
                                        int rank, FbKExpr **coords, guint partial, FbKExpr *at,
                                        GError **error);
/* The second phase of a reduction in runs: y[o, c] combines the runs partial[o, s, c]
 * (o the flat index of the axes before first, c the last axis) and is stored. */
gboolean   _fb_lower_column_combine_runs (FbLowerCtx *c, const FbNode *node, int rank,
                                          const int64_t *dims, int first, int64_t count,
                                          guint partial, int64_t runs, GError **error);
gboolean   _fb_lower_column_reduce_gpu_fits (const FbNode *node, int rank, const int64_t *dims,
                                             guint mask, int64_t count);
gboolean   _fb_lower_column_reduce_gpu (FbLowerCtx *c, const FbNode *node, int rank,
                                        const int64_t *dims, guint mask, int64_t count,
                                        GError **error);

/* The same on a CPU, the first reduced dimension cut into runs shared by the threads
 * (fb-lower-reduce-runs.c). */
gboolean   _fb_lower_column_reduce_runs_fits (const FbNode *node, int rank, const int64_t *dims,
                                              guint mask, int64_t count);
gboolean   _fb_lower_column_reduce_runs (FbLowerCtx *c, const FbNode *node, int rank,
                                         const int64_t *dims, guint mask, int64_t count,
                                         GError **error);

/* Reductions: loops over the dimensions in mask (their coordinates replace coords[d]), and
 * the parallel nest over the other (kept) dimensions. */
GPtrArray *_fb_lower_reduce_loops (FbKernel *k, GPtrArray *body, int rank, const int64_t *dims,
                                   guint mask, FbKExpr **coords);
GPtrArray *_fb_lower_kept_nest    (FbLowerCtx *c, int rank, const int64_t *dims, guint mask,
                                   FbKExpr **coords, double work);

/* Library calls and contractions (fb-lower-contract.c, fb-lower-conv.c) */
void      _fb_lower_sgemm         (FbLowerCtx *c, GPtrArray *body, gboolean ta, gboolean tb,
                                   FbKExpr *m, FbKExpr *n, FbKExpr *kk, guint a, FbKExpr *a_off,
                                   int64_t lda, guint b, FbKExpr *b_off, int64_t ldb, guint out,
                                   FbKExpr *c_off, int64_t ldc);
int64_t   _fb_lower_tile_rows     (int64_t rows, double flops_per_row, int64_t batches);
/* fb-lower-product-split.c: whether a GPU product (before its operands are set) runs as one
 * TF32 product of its operands split along the depth, and setting that up: x the split pass's
 * scratch, w the split weights, the depth three times. */
gboolean  _fb_lower_product_split_wanted (const FbValue *w, const FbKGemm *g, int64_t products);
gboolean  _fb_lower_product_split (FbLowerCtx *c, FbKConv *cv, const FbValue *a,
                                   const FbValue *w, GError **error);
gboolean  _fb_lower_conv          (FbLowerCtx *c, const FbNode *node, GError **error);

/* Attributes */
gboolean  _fb_lower_is_nhwc       (const FbNode *node);
/* Whether node runs on the host through the interpreter (fb-cpu-host.c): If, Loop and Scan, and
 * steps whose output sizes, input sizes or shape operands (axes, pads, sizes, k, transform
 * lengths) only the run gives. */
gboolean  _fb_lower_on_host       (const FbNode *node);
/* An integer list from a constant input (or NULL/0 when the input is absent). */
gboolean  _fb_lower_const_ints    (const FbNode *node, guint input, int64_t **out, guint *n,
                                   GError **error);

G_END_DECLS
