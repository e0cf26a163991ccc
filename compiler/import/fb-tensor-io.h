/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Tensors in files: ONNX TensorProto (.pb, the backend-test layout) and numpy (.npy). */
#pragma once

#include "fb-tensor.h"

#include <gio/gio.h>

G_BEGIN_DECLS

/* Reads a .pb (TensorProto) or .npy file, chosen by the file name's extension. The name stored
 * in a .pb is returned in *name when name is not NULL. */
FbTensor *fb_tensor_load_file (const char *path, char **name, GError **error);
/* Reads a value of the given kind: a tensor as fb_tensor_load_file does; a sequence from an
 * ONNX SequenceProto .pb, an optional (or optional sequence) from an OptionalProto .pb. dtype is
 * the element type an empty sequence or optional takes (the files do not carry it). */
FbTensor *fb_value_load_file  (const char *path, FbValueKind kind, FbDType dtype, char **name,
                               GError **error);
/* Writes a .pb (TensorProto with raw_data) or .npy, by extension, atomically (a temporary file
 * renamed over the target). name is stored in .pb files and may be NULL. */
gboolean  fb_tensor_save_file (const FbTensor *tensor, const char *name, const char *path,
                               GError **error);
/* Sequences and optionals are written as SequenceProto / OptionalProto (.pb only). */

G_END_DECLS
