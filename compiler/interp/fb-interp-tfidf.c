/* SPDX-License-Identifier: GPL-3.0-or-later */
/* TfIdfVectorizer: in each row of tokens, every n-gram of the pool is counted wherever it
 * occurs with its items 0..max_skip_count apart (unigrams once per position), and its count
 * (or its weight) lands in its output column. fb-tfidf-spec.c reads and checks the pool. */
#include "fb-interp-private.h"
#include "fb-tfidf-spec.h"

/* Occurrences of the n items `gram` in row[0..C) with its items `gap` apart. */
static int64_t
occurrences (const int64_t *row, int64_t C, const int64_t *gram, int n, int64_t gap)
{
  int64_t count = 0;

  for (int64_t i = 0; i + (int64_t) (n - 1) * gap < C; i++)
    {
      int j = 0;
      while (j < n && row[i + j * gap] == gram[j])
        j++;
      count += j == n;
    }
  return count;
}

gboolean
_fb_interp_tfidf (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                  GError **error)
{
  FbTensor *x = in[0];
  g_auto(FbTfidfSpec) spec = { 0 };
  g_autoptr(GError) local = NULL;
  g_autofree int64_t *xv = NULL;
  g_autofree double *yv = NULL;
  g_autoptr(FbTensor) y = NULL;
  int64_t dims[2], rows, C;

  if (!fb_tfidf_spec_read (node, &spec, &local))
    return _fb_interp_fail (error, node,
                            g_error_matches (local, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED)
                              ? FB_INTERP_ERROR_UNSUPPORTED : FB_INTERP_ERROR_RUNTIME,
                            "%s", local->message);
  if ((x->dtype != FB_DTYPE_INT32 && x->dtype != FB_DTYPE_INT64) || (x->rank != 1 && x->rank != 2))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the input must be int32 or int64 of shape [C] or [N, C]");
  rows = x->rank == 2 ? x->dims[0] : 1;
  C = x->dims[x->rank - 1];
  dims[0] = rows;
  dims[x->rank - 1] = spec.columns;
  y = _fb_interp_new (node, FB_DTYPE_FLOAT32, x->rank, dims, error);
  if (y == NULL)
    return FALSE;
  xv = _fb_interp_read_i64 (x);
  yv = _fb_interp_alloc (node, y->numel, sizeof (double), error);
  if (yv == NULL)
    return FALSE;
  for (int64_t b = 0; b < rows; b++)
    for (guint k = 0; k < spec.n_ngrams; k++)
      {
        int n = spec.length[k];
        int64_t count = 0;
        if (n < spec.min_gram || n > spec.max_gram)
          continue;
        /* A unigram is the same at every skip: it counts once. Gaps past (C - 1) / (n - 1)
         * leave no room for the n-gram, however large max_skip_count is. */
        int64_t gaps = n == 1 ? 1 : MIN (spec.max_skip + 1, MAX (C - 1, 0) / (n - 1));
        for (int64_t gap = 1; gap <= gaps; gap++)
          count += occurrences (xv + b * C, C, spec.pool + spec.start[k], n, gap);
        yv[b * spec.columns + spec.index[k]] += fb_tfidf_value (&spec, k, count);
      }
  _fb_interp_write_f64 (y, yv);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}
