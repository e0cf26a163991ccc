/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The compiled artifacts File → Export writes (fb-window-export-code.c), each made through the
 * backend of its target, in the export's worker thread. */
#pragma once

#include "fb-lowering.h"

#include <gio/gio.h>

G_BEGIN_DECLS

/* bytes into file: a local file through a temporary renamed into place. */
gboolean _fb_export_write_bytes    (GFile *file, GBytes *bytes, GCancellable *cancellable,
                                    GError **error);
/* graph compiled for the host's compiled target into a bundle folder at path (with its shared
 * library when shared); source and pipeline go into its manifest. */
gboolean _fb_export_bundle         (const FbGraph *graph, const char *source, const char *pipeline,
                                    const char *path, gboolean shared, GCancellable *cancellable,
                                    GError **error);
/* The shared library of graph into library, and its header into header. */
gboolean _fb_export_shared_library (const FbGraph *graph, const char *source, const char *pipeline,
                                    GFile *library, GFile *header, GCancellable *cancellable,
                                    GError **error);
/* A kernel of lowering as its target emits it: its object, its optimized LLVM IR (llvm_ir), or
 * its assembly (x86-64 or PTX). */
GBytes  *_fb_export_kernel_code    (FbLowering *lowering, const FbKernel *kernel, gboolean object,
                                    gboolean llvm_ir, GError **error);
/* graph lowered for the target whose one-module form is suffix ("ptx"), every generated kernel
 * in that module. */
GBytes  *_fb_export_module         (const FbGraph *graph, const char *suffix,
                                    GCancellable *cancellable, GError **error);

G_END_DECLS
