/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internals shared by the ONNX reading files; never installed or used outside compiler/import. */
#pragma once

#include "fb-onnx-import.h"
#include "onnx.pb-c.h"

G_BEGIN_DECLS

typedef struct {
  char       *base_dir;        /* where external data lives, or NULL to refuse it */
  GHashTable *external_files;  /* char* location -> GBytes of the mapped file */
  GBytes     *message;         /* owns the unpacked message, freed with the context */
} FbOnnxContext;

void      _fb_onnx_context_init   (FbOnnxContext *ctx, const char *base_dir,
                                   Onnx__ModelProto *model_or_null, Onnx__TensorProto *tensor_or_null);
void      _fb_onnx_context_clear  (FbOnnxContext *ctx);

/* A TensorProto as an FbTensor whose bytes are a 64-byte aligned copy of the message's
 * (raw_data, float_data, int64_data, double_data) or point into the mapped external file;
 * other encodings are converted once. Errors (FB_IMPORT_ERROR) name the tensor. */
FbTensor *_fb_onnx_tensor_decode  (FbOnnxContext *ctx, const Onnx__TensorProto *proto,
                                   GError **error);

/* The bytes of an EXTERNAL tensor: a slice of the memory-mapped file beside the model. */
GBytes   *_fb_external_data_read  (FbOnnxContext *ctx, const Onnx__TensorProto *proto,
                                   gsize nbytes, GError **error);

/* A TensorProto (raw_data) holding t, named name. */
gboolean  _fb_onnx_tensor_pack    (const FbTensor *t, const char *name, GBytes **out);

/* SequenceProto and OptionalProto (fb-onnx-value.c): onnx.proto does not define them (they live
 * in onnx-data.proto), so their few fields are read and written on the wire format here. */
FbTensor *_fb_onnx_value_decode   (GBytes *bytes, FbValueKind kind, FbDType dtype,
                                   const char *base_dir, char **name, GError **error);
GBytes   *_fb_onnx_value_pack     (const FbTensor *value, const char *name, GError **error);

/* Value types (fb-onnx-types.c). What a type is when it is no tensor ("a sequence", "a map"). */
const char *_fb_onnx_type_kind      (const Onnx__TypeProto *type);
/* The tensor type inside a sequence or optional type, its kind in *kind (see the definition). */
const Onnx__TypeProto *_fb_onnx_unwrap_kind (const Onnx__TypeProto *type, FbValueKind *kind);
/* Gives value what type declares; a valid type this project does not compute goes into
 * bad_values (FbValue* -> reason) instead of stopping the import. */
gboolean    _fb_onnx_apply_type     (GHashTable *bad_values, FbValue *value,
                                     const Onnx__TypeProto *type, const char *what,
                                     GError **error);

G_END_DECLS
