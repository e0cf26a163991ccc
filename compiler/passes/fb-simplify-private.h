/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The rule tables of the simplify pass: algebraic identities (fb-pass-simplify.c), idioms that
 * exporters spell out op by op and that become single operators (fb-simplify-idioms.c), and
 * moves of rows across linear layers (fb-simplify-rows.c). */
#pragma once

#include "fb-rewrite.h"

G_BEGIN_DECLS

extern const FbRule _fb_simplify_idioms[];
extern const guint  _fb_simplify_n_idioms;
extern const FbRule _fb_simplify_rows[];
extern const guint  _fb_simplify_n_rows;

/* Helpers the two tables share. */

/* The axes a Reduce* node reduces, as a bit mask over rank dimensions; FALSE when they are not
 * known at compile time or keepdims is not 1. */
gboolean _fb_reduce_axes_mask (const FbNode *node, int rank, guint *mask);
/* A Transpose's permutation of rank axes, its default (reversal) where perm is absent. */
gboolean  _fb_transpose_perm  (const FbNode *transpose, int rank, int64_t *perm);
/* out has x's dtype and shape: an operation that did not broadcast x into anything bigger. */
gboolean _fb_same_type        (const FbValue *out, const FbValue *x);

G_END_DECLS
