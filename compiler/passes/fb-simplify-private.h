/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The two rule tables of the simplify pass: algebraic identities (fb-pass-simplify.c) and idioms
 * that exporters spell out op by op and that become single operators (fb-simplify-idioms.c). */
#pragma once

#include "fb-rewrite.h"

G_BEGIN_DECLS

extern const FbRule _fb_simplify_idioms[];
extern const guint  _fb_simplify_n_idioms;

/* Helpers the two tables share. */

/* The axes a Reduce* node reduces, as a bit mask over rank dimensions; FALSE when they are not
 * known at compile time or keepdims is not 1. */
gboolean _fb_reduce_axes_mask (const FbNode *node, int rank, guint *mask);
/* t broadcast (numpy rules) to dims, as a new tensor of dtype; NULL when it does not fit. */
FbTensor *_fb_broadcast_const (const FbTensor *t, FbDType dtype, int rank, const int64_t *dims);
/* out has x's dtype and shape: an operation that did not broadcast x into anything bigger. */
gboolean _fb_same_type        (const FbValue *out, const FbValue *x);

G_END_DECLS
