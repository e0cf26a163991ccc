/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The code view's pages as GtkSourceView 5 views: highlighting for kernel IR, LLVM IR, x86-64
 * assembly, PTX and SASS, a search context per page, and lines marked as coming from the
 * selected node. GtkSourceView has LLVM IR; the kernel IR, AT&T assembly, PTX and SASS
 * definitions ship in the GResource (resources/language-specs), so they work from the build
 * tree. */
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
/* Marks (FB_CODE_MARK_TAG) the lines i of view where marks[i] (gboolean) is TRUE, and no
 * other; the number marked. marks NULL clears. */
guint     _fb_code_source_mark_lines  (GtkTextView       *view,
                                       GArray            *marks);
/* The lines (from 1, guint) that carry the mark, read from the buffer. */
GArray   *_fb_code_source_marked      (GtkTextView       *view);

G_END_DECLS
