/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a TfIdfVectorizer node asks for: its pool of n-grams, where each is counted in the output
 * and how counts are weighted, read and checked once by one definition that inference, the
 * interpreter and the lowering share. */
#pragma once

#include "fb-graph.h"

G_BEGIN_DECLS

typedef enum {
  FB_TFIDF_TF,                /* the count */
  FB_TFIDF_IDF,               /* the weight where the count is not 0 */
  FB_TFIDF_TFIDF,             /* the count times the weight */
} FbTfidfMode;

typedef struct {
  FbTfidfMode    mode;
  int64_t        min_gram, max_gram;   /* the n-gram lengths counted */
  int64_t        max_skip;             /* items skipped between an n-gram's items: 0..max_skip */
  guint          n_ngrams;             /* n-grams in the pool, of every length */
  int64_t       *start;                /* per n-gram: its first item in pool */
  int           *length;               /* per n-gram: its number of items */
  const int64_t *pool;                 /* pool_int64s (the node's) */
  const int64_t *index;                /* per n-gram: its column in the output (ngram_indexes) */
  const float   *weights;              /* per n-gram, NULL for all 1 */
  int64_t        columns;              /* max (ngram_indexes) + 1 */
} FbTfidfSpec;

/* Reads and checks the attributes. FALSE with an FB_GRAPH_ERROR naming what is wrong (not the
 * node: callers add it); pool_strings is FB_GRAPH_ERROR_UNSUPPORTED. Clear the spec after a
 * failed read too. */
gboolean fb_tfidf_spec_read  (const FbNode *node, FbTfidfSpec *spec, GError **error);
void     fb_tfidf_spec_clear (FbTfidfSpec *spec);
/* The output value of an n-gram counted `count` times. */
double   fb_tfidf_value      (const FbTfidfSpec *spec, guint ngram, int64_t count);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (FbTfidfSpec, fb_tfidf_spec_clear)

G_END_DECLS
