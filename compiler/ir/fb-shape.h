/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Tensor shapes with symbolic dimensions. Rank is bounded so that shapes are plain values that
 * copy with '=' and need no allocation; import refuses deeper tensors with a clear error. */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define FB_MAX_RANK     8
#define FB_RANK_UNKNOWN (-1)
#define FB_DIM_UNKNOWN  ((int64_t) -1)

typedef struct {
  int         rank;                /* number of dimensions, or FB_RANK_UNKNOWN */
  int64_t     dim[FB_MAX_RANK];    /* extent, or FB_DIM_UNKNOWN when not known at compile time */
  const char *sym[FB_MAX_RANK];    /* interned name of a symbolic extent ("batch"), or NULL */
} FbShape;

/* A shape of known rank whose every extent is known. */
FbShape   fb_shape_make          (int rank, const int64_t *dims);
FbShape   fb_shape_unknown       (void);
FbShape   fb_shape_scalar        (void);
gboolean  fb_shape_is_static     (const FbShape *shape);
gboolean  fb_shape_equal         (const FbShape *a, const FbShape *b);
/* Number of elements; -1 when not static; FALSE-free overflow checked (returns -1 and sets
 * *overflow when the product does not fit in int64). */
int64_t   fb_shape_numel         (const FbShape *shape, gboolean *overflow);
/* "1x3x224x224", with symbols by name ("batchx3x?"); "?" for unknown rank. Caller frees. */
char     *fb_shape_to_string     (const FbShape *shape);
/* The form people read, in the window, its picture exports and the command line's text:
 * "N×16×24×?", each symbolic extent by its short name (fb_dim_short_name), "scalar" for rank 0,
 * "?" for an unknown rank. fb_shape_to_string stays the form that parses back and that names
 * every symbol whole. Caller frees. */
char     *fb_shape_to_display    (const FbShape *shape);
/* The short name of a symbolic extent, as a shape is shown: "p2o.DynamicDimension.0" -> "D0",
 * "sequence_length" -> "SL", "batch" -> "batch". Caller frees. */
char     *fb_dim_short_name      (const char *sym);
/* "D0 = p2o.DynamicDimension.0", one line per symbol of shape whose short name differs from
 * its name, for the places that have room for the whole name; NULL when there is none. */
char     *fb_shape_symbols_text  (const FbShape *shape);
/* Parses "1x3x224x224" (or "" for a scalar). */
gboolean  fb_shape_parse         (const char *text, FbShape *out, GError **error);
/* Numpy-style broadcast of two shapes; FALSE with error when incompatible. */
gboolean  fb_shape_broadcast     (const FbShape *a, const FbShape *b, FbShape *out, GError **error);
/* Normalizes a possibly negative axis against rank; FALSE when out of range. */
gboolean  fb_axis_normalize      (int64_t axis, int rank, int *out);

G_END_DECLS
