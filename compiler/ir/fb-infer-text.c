/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for TfIdfVectorizer: a row (or a batch of rows) of integer tokens becomes one column
 * per n-gram of the pool, max (ngram_indexes) + 1 of them. */
#include "fb-infer-private.h"
#include "fb-tfidf-spec.h"

gboolean
_fb_infer_tfidf (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  g_auto(FbTfidfSpec) spec = { 0 };
  GError *local = NULL;
  FbShape out;

  if (x == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_INDEX, error))
    return FALSE;
  if (!fb_tfidf_spec_read (node, &spec, &local))
    {
      if (g_error_matches (local, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED))
        _fb_infer_unsupported (error, node, "%s", local->message);
      else
        _fb_infer_fail (error, node, "%s", local->message);
      g_error_free (local);
      return FALSE;
    }
  if (x->shape.rank >= 0 && x->shape.rank != 1 && x->shape.rank != 2)
    return _fb_infer_fail (error, node, "the input has rank %d; it must be [C] or [N, C]",
                           x->shape.rank);
  if (x->shape.rank < 0)
    return _fb_infer_set_output (node, 0, FB_DTYPE_FLOAT32, &x->shape, error);
  out = x->shape;
  out.dim[out.rank - 1] = spec.columns;
  out.sym[out.rank - 1] = NULL;
  return _fb_infer_set_output (node, 0, FB_DTYPE_FLOAT32, &out, error);
}
