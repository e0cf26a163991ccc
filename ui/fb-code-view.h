/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The code view: the lowering stages of one kernel in read-only monospace pages, for the target
 * chosen in its header: kernel IR, LLVM IR as generated, LLVM IR after optimization and x86-64
 * assembly for the cpu target; the same IR pages, PTX and SASS for the cuda target, which is
 * compiled here, never run, so it needs no GPU. The header names the kernel, its functions, the
 * final-stage node it was lowered from and the original ONNX nodes. Lowering and code
 * generation run in a worker (FbLowering) while a spinner turns; what cannot be lowered is said
 * in a message that names the node. The lines that came from the selected graph node are marked
 * on every page, through the debug locations the code carries (fb-code-marks-private.h). */
#pragma once

#include "fb-lowering.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FB_TYPE_CODE_VIEW (fb_code_view_get_type ())
G_DECLARE_FINAL_TYPE (FbCodeView, fb_code_view, FB, CODE_VIEW, GtkWidget)

/* The pages, by name, in the order lowering makes them. */
#define FB_CODE_VIEW_KERNEL_IR    "kernel-ir"
#define FB_CODE_VIEW_LLVM_IR      "llvm-ir"
#define FB_CODE_VIEW_OPTIMIZED_IR "optimized-ir"
#define FB_CODE_VIEW_ASSEMBLY     "assembly"       /* the cpu target's x86-64 */
#define FB_CODE_VIEW_PTX          "ptx"            /* the cuda target's */
#define FB_CODE_VIEW_SASS         "sass"           /* the cuda target's, where the toolkit is */

GtkWidget      *fb_code_view_new          (void);
/* Shows the kernels lowering makes of the final-stage nodes node_ids (guint), the first of them
 * at once and the others through a choice in the header; what was asked before is dropped. note
 * (may be NULL) says how the selected node came to be part of them. The view's target becomes
 * the lowering's. */
void            fb_code_view_show_kernels (FbCodeView *self,
                                             FbLowering   *lowering,
                                             GArray       *node_ids,
                                             const char   *note);
/* Shows a message instead of code: a node that no kernel computes. */
void            fb_code_view_show_message (FbCodeView *self,
                                             const char   *title,
                                             const char   *message);
void            fb_code_view_clear        (FbCodeView *self);
/* TRUE while the worker lowers or generates code (the "busy" property). */
gboolean        fb_code_view_is_busy      (FbCodeView *self);
/* The message on show (an error, or why there is no kernel), or NULL while code is shown. */
const char     *fb_code_view_get_message  (FbCodeView *self);
/* The kernels on offer and the one shown; NULL when none. */
guint           fb_code_view_get_n_kernels (FbCodeView *self);
const FbKernel *fb_code_view_get_kernel   (FbCodeView *self);
void            fb_code_view_select_kernel (FbCodeView *self,
                                              guint         index);
/* The text of a page (FB_CODE_VIEW_*) as shown; "" when there is none. */
char           *fb_code_view_dup_text     (FbCodeView *self,
                                             const char   *page);
/* Brings a page to the front (one of the target's). */
void            fb_code_view_set_page     (FbCodeView *self,
                                             const char   *page);
/* Whether the page belongs to the target on show (the cpu target has no PTX). */
gboolean        fb_code_view_has_page     (FbCodeView *self,
                                           const char *page);

/* The target whose code is shown ("cpu", "cuda"; the "target" property). Choosing another in the
 * header, or here, clears the code: the window shows the kernels again, lowered for it. */
const char     *fb_code_view_get_target   (FbCodeView *self);
void            fb_code_view_set_target   (FbCodeView *self,
                                           const char *target);

/* The page on show, and stepping to the target's page before or after it (Alt+Left,
 * Alt+Right); FALSE at either end. */
const char     *fb_code_view_get_page     (FbCodeView *self);
gboolean        fb_code_view_step_page    (FbCodeView *self,
                                           int         delta);
/* Finds text in the page on show from the cursor (the search entry does the same), and in the
 * page stepped to next; the number of matches, -1 while GtkSourceView still counts them. */
int             fb_code_view_search       (FbCodeView *self,
                                           const char *text,
                                           gboolean    forward);
/* Marks, on every page, the lines that came from the graph node whose provenance is prov[0..n)
 * (the original ONNX nodes it stands for), now and for every kernel shown after: the lines of
 * the phases that do their work, and the code whose debug locations lead to those lines. */
void            fb_code_view_set_marked_prov (FbCodeView  *self,
                                              const guint *prov,
                                              guint        n);
/* How many kernel IR lines are marked. */
guint           fb_code_view_get_n_marked_lines (FbCodeView *self);
/* The marked lines of a page (guint, from 1), as its buffer carries them. */
GArray         *fb_code_view_get_marked_lines (FbCodeView *self,
                                               const char *page);
/* A page's text (a GtkSourceBuffer). */
GtkTextBuffer  *fb_code_view_get_buffer   (FbCodeView *self,
                                           const char *page);
/* The GtkSourceView language id a page is highlighted with, or NULL. */
const char     *fb_code_view_get_language (FbCodeView *self,
                                           const char *page);

G_END_DECLS
