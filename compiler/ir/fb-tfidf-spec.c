/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-tfidf-spec.h"
#include "fb-spec-support.h"

#include <string.h>

/* Errors about the node's shape or attributes; an unsupported pool says so itself. */
#define fail(error, ...) fb_spec_fail (error, FB_GRAPH_ERROR_SHAPE, __VA_ARGS__)

/* More output columns than this is not a vocabulary but a hostile file. */
#define MAX_COLUMNS (G_GINT64_CONSTANT (1) << 31)

static gboolean
required_int (const FbNode *node, const char *name, int64_t *out, GError **error)
{
  const FbAttr *a = fb_node_attr (node, name);

  if (a == NULL || a->type != FB_ATTR_INT)
    return fail (error, "the integer attribute '%s' is missing", name);
  *out = a->i;
  return TRUE;
}

gboolean
fb_tfidf_spec_read (const FbNode *node, FbTfidfSpec *spec, GError **error)
{
  const char *mode;
  const int64_t *counts;
  guint n_levels, n_pool, n_index, n_weights;

  g_return_val_if_fail (node != NULL && spec != NULL, FALSE);
  memset (spec, 0, sizeof *spec);
  mode = fb_node_attr_string (node, "mode", NULL);
  if (mode == NULL)
    return fail (error, "the string attribute 'mode' is missing");
  if (strcmp (mode, "TF") == 0)
    spec->mode = FB_TFIDF_TF;
  else if (strcmp (mode, "IDF") == 0)
    spec->mode = FB_TFIDF_IDF;
  else if (strcmp (mode, "TFIDF") == 0)
    spec->mode = FB_TFIDF_TFIDF;
  else
    return fail (error, "mode '%s' is not TF, IDF or TFIDF", mode);
  if (!required_int (node, "min_gram_length", &spec->min_gram, error) ||
      !required_int (node, "max_gram_length", &spec->max_gram, error) ||
      !required_int (node, "max_skip_count", &spec->max_skip, error))
    return FALSE;
  if (spec->min_gram < 1 || spec->max_gram < spec->min_gram)
    return fail (error, "the n-gram lengths [%" G_GINT64_FORMAT ", %"
                 G_GINT64_FORMAT "] are not 1 <= min_gram_length <= max_gram_length",
                 spec->min_gram, spec->max_gram);
  if (spec->max_skip < 0)
    return fail (error, "max_skip_count %" G_GINT64_FORMAT " is negative",
                 spec->max_skip);
  if (fb_node_attr (node, "pool_strings") != NULL)
    return fb_spec_fail (error, FB_GRAPH_ERROR_UNSUPPORTED,
                         "pools of strings (pool_strings) are not supported, only pool_int64s");
  counts = fb_node_attr_ints (node, "ngram_counts", &n_levels);
  spec->pool = fb_node_attr_ints (node, "pool_int64s", &n_pool);
  spec->index = fb_node_attr_ints (node, "ngram_indexes", &n_index);
  spec->weights = fb_node_attr_floats (node, "weights", &n_weights);
  if (counts == NULL || n_levels == 0)
    return fail (error, "the attribute 'ngram_counts' is missing or empty");
  if (spec->pool == NULL || n_pool == 0)
    return fail (error, "the attribute 'pool_int64s' is missing or empty");
  if (spec->index == NULL || n_index == 0)
    return fail (error, "the attribute 'ngram_indexes' is missing or empty");

  /* ngram_counts[n - 1] is where the n-grams start in the pool: each level holds whole
   * n-grams, and the levels follow each other. */
  spec->start = g_new (int64_t, n_pool);
  spec->length = g_new (int, n_pool);
  for (guint level = 0; level < n_levels; level++)
    {
      int64_t from = counts[level], to = level + 1 < n_levels ? counts[level + 1] : n_pool;
      int64_t n = level + 1;
      if (from < 0 || to < from || to > n_pool)
        return fail (error, "ngram_counts[%u] = %" G_GINT64_FORMAT " does not "
                     "start %" G_GINT64_FORMAT "-grams inside the pool of %u items", level, from, n,
                     n_pool);
      if ((to - from) % n != 0)
        return fail (error, "the %" G_GINT64_FORMAT " pool items of the %"
                     G_GINT64_FORMAT "-grams are not whole %" G_GINT64_FORMAT "-grams", to - from,
                     n, n);
      for (int64_t at = from; at < to; at += n)
        {
          spec->start[spec->n_ngrams] = at;
          spec->length[spec->n_ngrams++] = (int) n;
        }
    }
  if (n_index != spec->n_ngrams)
    return fail (error, "ngram_indexes has %u entries for the %u n-grams of "
                 "the pool", n_index, spec->n_ngrams);
  if (spec->weights != NULL && n_weights != spec->n_ngrams)
    return fail (error, "weights has %u entries for the %u n-grams of the "
                 "pool", n_weights, spec->n_ngrams);
  for (guint k = 0; k < n_index; k++)
    {
      if (spec->index[k] < 0 || spec->index[k] >= MAX_COLUMNS)
        return fail (error, "ngram_indexes[%u] = %" G_GINT64_FORMAT " is not "
                     "an output column", k, spec->index[k]);
      spec->columns = MAX (spec->columns, spec->index[k] + 1);
    }
  return TRUE;
}

void
fb_tfidf_spec_clear (FbTfidfSpec *spec)
{
  g_return_if_fail (spec != NULL);
  g_clear_pointer (&spec->start, g_free);
  g_clear_pointer (&spec->length, g_free);
}

double
fb_tfidf_value (const FbTfidfSpec *spec, guint ngram, int64_t count)
{
  double w;

  g_return_val_if_fail (spec != NULL && ngram < spec->n_ngrams, 0.0);
  w = spec->weights ? spec->weights[ngram] : 1.0;
  switch (spec->mode)
    {
    case FB_TFIDF_TF:
      return (double) count;
    case FB_TFIDF_IDF:
      return count > 0 ? w : 0.0;
    case FB_TFIDF_TFIDF:
    default:
      return (double) count * w;
    }
}
