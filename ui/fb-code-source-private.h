/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The code view's pages as GtkSourceView 5 views: highlighting for kernel IR, LLVM IR and
 * x86-64 assembly, a search context per page, and lines marked as coming from the selected
 * node. GtkSourceView has LLVM IR; the kernel IR and AT&T assembly definitions ship in the
 * GResource (resources/language-specs), so they work from the build tree. */
#pragma once

#include <gtksourceview/gtksource.h>

G_BEGIN_DECLS

#define FB_CODE_MARK_TAG "fb-from-selection"

/* Gives view the language (a GtkSourceView language id), a style scheme that follows the dark
 * setting, and a search context. */
void      _fb_code_source_setup       (GtkTextView *view,
                                       const char  *language_id);
/* The language view highlights with, or NULL. */
const char *_fb_code_source_language  (GtkTextView *view);
/* Searches view for text (case-insensitive) from the cursor, forward or back, wrapping;
 * selects and scrolls to the match. The number of matches (-1 while still counting). */
int       _fb_code_source_search      (GtkTextView *view,
                                       const char  *text,
                                       gboolean     forward);
/* Marks (FB_CODE_MARK_TAG) the lines of view that mention any of names; the number marked. */
guint     _fb_code_source_mark_lines  (GtkTextView       *view,
                                       const char *const *names);

G_END_DECLS
