/* SPDX-License-Identifier: GPL-3.0-or-later */
/* TfIdfVectorizer as generated loops: the output zeroed, then in parallel over the rows, for
 * each n-gram length of the pool a loop over its n-grams (tables of their items, columns and
 * weights made at compile time) counting matches at every position and skip, the count's value
 * added into the n-gram's column. Adding, not storing, keeps two n-grams of one column summed
 * as in the interpreter; a row's n-grams run in order, so no two threads share a column. */
#include "fb-lower-private.h"
#include "fb-tfidf-spec.h"

#include <string.h>

/* A constant table of n values: int64 ones from v, or of type t from w. */
static guint
table_arg (FbLowerCtx *c, FbDType t, int64_t n, const int64_t *v, const double *w,
           const char *what, int length)
{
  g_autoptr(FbTensor) tensor = fb_tensor_new (t, 1, &n, NULL);
  if (v != NULL)
    memcpy (fb_tensor_data_mut (tensor), v, sizeof (int64_t) * n);
  else
    for (int64_t i = 0; i < n; i++)
      fb_tensor_set_f64 (tensor, i, w[i]);
  g_autofree char *name = g_strdup_printf ("%s.%s%d", c->k->name, what, length);
  return _fb_lower_const_arg (c, tensor, name);
}

/* Positions i + j (gap) of a row of C tokens exist for gap up to (C - 1) / (n - 1): longer
 * gaps (however large max_skip_count is) find nothing and are not looped over. */
static int64_t
useful_gaps (const FbTfidfSpec *spec, int n, int64_t C)
{
  if (n == 1)
    return 1;
  return MIN (spec->max_skip + 1, MAX (C - 1, 0) / (n - 1));
}

/* The n-grams of length n: count, and their items, columns and weights packed. */
static int64_t
pack_length (const FbTfidfSpec *spec, int n, GArray *items, GArray *cols, GArray *weights)
{
  int64_t count = 0;
  for (guint g = 0; g < spec->n_ngrams; g++)
    if (spec->length[g] == n)
      {
        g_array_append_vals (items, spec->pool + spec->start[g], n);
        g_array_append_val (cols, spec->index[g]);
        double w = spec->weights ? spec->weights[g] : 1.0;
        g_array_append_val (weights, w);
        count++;
      }
  return count;
}

gboolean
_fb_lower_tfidf (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *y = node->outputs[0];
  g_auto(FbTfidfSpec) spec = { 0 };
  g_autoptr(GError) local = NULL;
  int xr, yr;
  int64_t xd[FB_MAX_RANK], yd[FB_MAX_RANK];
  if (!fb_tfidf_spec_read (node, &spec, &local))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "%s", local->message);
  if (!_fb_lower_dims (x, &xr, xd) || !_fb_lower_dims (y, &yr, yd) || (xr != 1 && xr != 2) ||
      yr != xr || yd[yr - 1] != spec.columns)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "needs a static input [C] or [N, C]");
  int64_t rows = xr == 2 ? xd[0] : 1, C = xd[xr - 1], O = spec.columns, total = rows * O;
  guint ya = _fb_lower_out_arg (c, y);
  FbKExpr *e, *b;
  GPtrArray *body = _fb_lower_nest (c, 1, &total, &e, (double) total);
  g_ptr_array_add (body, fb_ks_store (k, ya, e, fb_kx_const_f (k, y->dtype, 0.0)));
  double work = (double) rows * C * spec.n_ngrams * (spec.max_skip + 1);
  GPtrArray *row = _fb_lower_nest (c, 1, &rows, &b, work);

  int longest = 0;
  for (guint g = 0; g < spec.n_ngrams; g++)
    longest = MAX (longest, spec.length[g]);
  for (int n = (int) MIN (spec.min_gram, longest + 1); n <= MIN (spec.max_gram, longest); n++)
    {
      g_autoptr(GArray) items = g_array_new (FALSE, FALSE, sizeof (int64_t));
      g_autoptr(GArray) cols = g_array_new (FALSE, FALSE, sizeof (int64_t));
      g_autoptr(GArray) weights = g_array_new (FALSE, FALSE, sizeof (double));
      int64_t count = pack_length (&spec, n, items, cols, weights), gaps = useful_gaps (&spec, n, C);
      if (count == 0)
        continue;
      guint ia = table_arg (c, FB_DTYPE_INT64, count * n, (int64_t *) items->data, NULL, "items", n);
      guint ca = table_arg (c, FB_DTYPE_INT64, count, (int64_t *) cols->data, NULL, "columns", n);
      guint wa = spec.mode == FB_TFIDF_TF ? 0
               : table_arg (c, FB_DTYPE_FLOAT32, count, NULL, (double *) weights->data, "weights", n);
      FbKExpr *g, *d, *i;
      GPtrArray *per = _fb_lower_loop (k, row, fb_kx_index (k, count), &g);
      guint hits = fb_kernel_new_acc (k, FB_DTYPE_INT64);
      g_ptr_array_add (per, fb_ks_assign (k, hits, fb_kx_index (k, 0)));
      GPtrArray *l = _fb_lower_loop (k, per, fb_kx_index (k, gaps), &d);
      /* The n-gram's items sit gap = d + 1 apart: starts i with i + (n - 1) gap < C. */
      l = _fb_lower_loop (k, l, fb_kx_add_c (k, fb_kx_mul_c (k, d, -(n - 1)), C - (n - 1)), &i);
      FbKExpr *match = NULL;
      for (int j = 0; j < n; j++)
        {
          FbKExpr *xc[2] = { b, fb_kx_add_c (k, fb_kx_add (k, i, fb_kx_mul_c (k, d, j)), j) };
          FbKExpr *tok = _fb_lower_value_at (c, x, xr, xr == 2 ? xc : xc + 1, error);
          if (tok == NULL)
            return FALSE;
          FbKExpr *want = fb_kx_load (k, ia, fb_kx_add_c (k, fb_kx_mul_c (k, g, n), j));
          FbKExpr *eq = fb_kx_binary (k, FB_KB_EQ, fb_kx_cast (k, tok, FB_DTYPE_INT64), want);
          match = match ? fb_kx_binary (k, FB_KB_AND, match, eq) : eq;
        }
      g_ptr_array_add (l, fb_ks_assign (k, hits, fb_kx_add (k, fb_kx_acc (k, hits),
                                                            fb_kx_cast (k, match, FB_DTYPE_INT64))));
      FbKExpr *cnt = fb_kx_cast (k, fb_kx_acc (k, hits), FB_DTYPE_FLOAT32), *v = cnt;
      if (spec.mode != FB_TFIDF_TF)
        {
          FbKExpr *w = fb_kx_load (k, wa, g);
          v = spec.mode == FB_TFIDF_IDF
                ? fb_kx_select (k, fb_kx_binary (k, FB_KB_GT, fb_kx_acc (k, hits), fb_kx_index (k, 0)), w,
                                fb_kx_const_f (k, FB_DTYPE_FLOAT32, 0.0))
                : fb_kx_binary (k, FB_KB_MUL, cnt, w);
        }
      FbKExpr *at = fb_kx_add (k, fb_kx_mul_c (k, b, O), fb_kx_load (k, ca, g));
      g_ptr_array_add (per, fb_ks_store (k, ya, at,
                                         fb_kx_cast (k, fb_kx_binary (k, FB_KB_ADD, fb_kx_cast (k, fb_kx_load (k, ya, at), FB_DTYPE_FLOAT32), v),
                                                     y->dtype)));
    }
  return TRUE;
}
