/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A dense tensor value: weights, folded constants, interpreter inputs and outputs.
 *
 * Storage is a GBytes so that imported weights can point straight into the decoded protobuf
 * message or a memory-mapped external-data file: the GBytes keeps its source alive, and every
 * stage of the pipeline shares the same FbTensor by reference instead of copying weights. */
#pragma once

#include "fb-dtype.h"
#include "fb-shape.h"

G_BEGIN_DECLS

/* A run-time value: a dense tensor, or (kind) a sequence or an optional, whose items are
 * tensors (or, for an optional sequence, one sequence). Sequences and optionals have rank 0, no
 * elements and empty bytes, so that code which only moves values (environments, buffers of the
 * host steps) carries them unchanged; code that reads data checks kind first. */
typedef struct {
  gatomicrefcount ref_count;
  FbValueKind     kind;                /* FB_KIND_TENSOR for a dense tensor */
  GPtrArray      *items;               /* sequence: its tensors in order; optional: none or one
                                          value; NULL for a dense tensor (FbTensor*, refs) */
  FbDType         dtype;               /* element type (of the items, for other kinds) */
  int             rank;                /* number of dimensions (0 for a scalar) */
  int64_t         dims[FB_MAX_RANK];   /* extents, all known */
  int64_t         numel;               /* product of dims */
  GBytes         *bytes;               /* numel * fb_dtype_size(dtype) bytes, row-major */
  gboolean        writable;            /* TRUE when this tensor owns a private buffer */
} FbTensor;

/* A zero-filled, writable tensor; NULL with error when the size overflows or exceeds memory
 * limits (the caller names the node). */
FbTensor     *fb_tensor_new            (FbDType dtype, int rank, const int64_t *dims, GError **error);
/* Wraps existing bytes (takes a reference); error if the byte count does not match. */
FbTensor     *fb_tensor_new_for_bytes  (FbDType dtype, int rank, const int64_t *dims, GBytes *bytes,
                                        GError **error);
FbTensor     *fb_tensor_new_scalar_f32 (float value);
FbTensor     *fb_tensor_new_scalar_i64 (int64_t value);
FbTensor     *fb_tensor_ref            (FbTensor *tensor);
void          fb_tensor_unref          (FbTensor *tensor);
const void   *fb_tensor_data           (const FbTensor *tensor);
/* Only for tensors created by fb_tensor_new (writable). */
void         *fb_tensor_data_mut       (FbTensor *tensor);
gsize         fb_tensor_nbytes         (const FbTensor *tensor);
FbShape       fb_tensor_shape          (const FbTensor *tensor);
/* Element i converted to double / int64, for any numeric dtype (float16 and bool included). */
double        fb_tensor_get_f64        (const FbTensor *tensor, int64_t i);
int64_t       fb_tensor_get_i64        (const FbTensor *tensor, int64_t i);
void          fb_tensor_set_f64        (FbTensor *tensor, int64_t i, double v);
/* Same dims and dtype, a new private copy of the data. */
FbTensor     *fb_tensor_copy           (const FbTensor *tensor);
/* A copy converted to another dtype (numeric only). */
FbTensor     *fb_tensor_cast           (const FbTensor *tensor, FbDType dtype, GError **error);
/* tensor broadcast (numpy rules) to dims, as a new tensor of dtype (numeric only); NULL with
 * error when it does not broadcast to them. */
FbTensor     *fb_tensor_broadcast      (const FbTensor *tensor, FbDType dtype, int rank,
                                        const int64_t *dims, GError **error);

/* Sequences and optionals (fb-tensor-seq.c). A sequence takes a reference on each item (items
 * may be NULL for an empty one); an optional of kind FB_KIND_OPTIONAL holds a tensor, one of
 * kind FB_KIND_OPTIONAL_SEQUENCE a sequence, and item NULL makes an empty optional. */
FbTensor     *fb_tensor_new_sequence   (FbDType dtype, GPtrArray *items);
FbTensor     *fb_tensor_new_optional   (FbValueKind kind, FbDType dtype, FbTensor *item);
gboolean      fb_tensor_is_dense       (const FbTensor *tensor);
/* Items of a sequence or optional (0 for a dense tensor or an empty optional). */
guint         fb_tensor_n_items        (const FbTensor *tensor);
FbTensor     *fb_tensor_item           (const FbTensor *tensor, guint i);
/* "tensor float32[1x64]", "sequence of 3 float32 tensors", "empty optional", for messages.
 * Caller frees. */
char         *fb_tensor_describe       (const FbTensor *tensor);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbTensor, fb_tensor_unref)

G_END_DECLS
