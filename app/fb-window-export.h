/* SPDX-License-Identifier: GPL-3.0-or-later */
/* File → Export: every compiled artifact of the model on screen, written in a worker thread
 * with progress and Cancel, atomically (a temporary beside the file, renamed into place). */
#pragma once

#include "fb-window.h"

G_BEGIN_DECLS

typedef enum {
  FB_EXPORT_BUNDLE,          /* NAME.fusebench/: the final stage compiled for this CPU */
  FB_EXPORT_LLVM_IR,         /* .ll of the kernel in the code view, after optimization, for
                                the code view's target */
  FB_EXPORT_ASSEMBLY,        /* .s of that kernel (its PTX, .ptx, for the cuda target) */
  FB_EXPORT_OBJECT,          /* .o of that kernel (the cpu target's only) */
  FB_EXPORT_SHARED_LIBRARY,  /* .so of the whole model, and its header beside it (.h) */
  FB_EXPORT_GRAPH,           /* the stage on screen as .svg, .pdf, .png (as drawn) or .dot */
  FB_EXPORT_ONNX,            /* the final stage as a model ONNX Runtime runs */
  FB_EXPORT_PROFILE,         /* the profile on screen, as its JSON file */
  FB_EXPORT_TRACE,           /* the profile's timeline as a Chrome/Perfetto trace */
  FB_EXPORT_PTX,             /* .ptx: every generated kernel of the final stage for the cuda
                                target (sm_90) in one module, as `fusebench compile --target
                                cuda --emit ptx` writes it; needs no GPU */
} FbExportKind;

/* Exports to file. Unless replace, a file (or the bundle folder, or the library's header) that
 * already exists is only replaced after the user says so in a question the window shows. */
void        fb_window_export_to            (FbWindow     *self,
                                            FbExportKind  kind,
                                            GFile        *file,
                                            gboolean      replace);
gboolean    fb_window_is_exporting         (FbWindow     *self);
void        fb_window_cancel_export        (FbWindow     *self);
/* The overwrite question on screen (an AdwMessageDialog, responses "cancel" and "replace"), or
 * NULL. */
GtkWidget  *fb_window_get_export_question  (FbWindow     *self);
/* What the last export ended with ("Exported model.svg", the error), or NULL. */
const char *fb_window_get_export_status    (FbWindow     *self);
/* Whether kind can be exported now (a model is on screen; a kernel in the code view; a
 * profile made or opened). */
gboolean    fb_window_can_export           (FbWindow     *self,
                                            FbExportKind  kind);

G_END_DECLS
