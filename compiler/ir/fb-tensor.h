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

typedef struct {
  gatomicrefcount ref_count;
  FbDType         dtype;               /* element type */
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

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbTensor, fb_tensor_unref)

G_END_DECLS
