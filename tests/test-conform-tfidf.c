/* SPDX-License-Identifier: GPL-3.0-or-later */
/* TfIdfVectorizer beyond ONNX's node cases (TF only, identity columns): IDF and TFIDF with
 * weights, columns in another order and shared by two n-grams, trigrams, int64 tokens, levels
 * the lengths leave out, checked against counts worked out by hand and between the interpreter
 * and the cpu target's loops; refusals that name the node. */
#include "fb-test-cpu.h"
#include "fb-infer.h"

#include <string.h>

/* Pool: unigrams 2, 3; bigrams (5 6), (7 8); trigram (1 2 3). */
static const int64_t pool[] = { 2, 3, 5, 6, 7, 8, 1, 2, 3 };
static const int64_t counts[] = { 0, 2, 6 };

static FbNode *
tfidf (FbGraph **g, const char *mode, int64_t min, int64_t max, int64_t skip,
       const int64_t *columns, const float *weights)
{
  *g = ti_graph (9);
  FbNode *n = ti_node (*g, FB_OP_TFIDF_VECTORIZER, 1, 1);
  ti_attr_string (*g, n, "mode", mode);
  ti_attr_int (*g, n, "min_gram_length", min);
  ti_attr_int (*g, n, "max_gram_length", max);
  ti_attr_int (*g, n, "max_skip_count", skip);
  ti_attr_ints (*g, n, "ngram_counts", 3, counts);
  ti_attr_ints (*g, n, "pool_int64s", G_N_ELEMENTS (pool), pool);
  ti_attr_ints (*g, n, "ngram_indexes", 5, columns);
  if (weights)
    ti_attr_floats (*g, n, "weights", 5, weights);
  return n;
}

static const int64_t identity[] = { 0, 1, 2, 3, 4 };

static FbTensor *
tokens (void)
{
  /* Row 0: 1 2 3 5 6 2; row 1: 7 9 8 7 8 3. */
  return ti_tensor (FB_DTYPE_INT64, 2, D (2, 6), V (1, 2, 3, 5, 6, 2, 7, 9, 8, 7, 8, 3));
}

static void
test_values (void)
{
  FbGraph *g;
  FbNode *n;
  static const float w[] = { 0.5f, 2, 3, 4, 10 };

  /* Contiguous n-grams of every length: row 0 has 2 twice, 3, (5 6), (1 2 3); row 1 has 3,
   * (7 8) once. */
  n = tfidf (&g, "TF", 1, 3, 0, identity, NULL);
  ti_assert (ti_run1 (n, TI_IN (tokens ())), FB_DTYPE_FLOAT32, 2, D (2, 5),
             V (2, 1, 1, 0, 1, 0, 1, 0, 1, 0), 0);
  /* One skip more: row 1's 7 _ 8 counts too; row 0's 1 _ _ ... no trigram at skip 1. */
  n = tfidf (&g, "TF", 2, 3, 1, identity, NULL);
  ti_assert (ti_run1 (n, TI_IN (tokens ())), FB_DTYPE_FLOAT32, 2, D (2, 5),
             V (0, 0, 1, 0, 1, 0, 0, 0, 2, 0), 0);
  /* IDF: the weight where the count is not 0; TFIDF: count times weight. */
  n = tfidf (&g, "IDF", 1, 3, 0, identity, w);
  ti_assert (ti_run1 (n, TI_IN (tokens ())), FB_DTYPE_FLOAT32, 2, D (2, 5),
             V (0.5, 2, 3, 0, 10, 0, 2, 0, 4, 0), 0);
  n = tfidf (&g, "TFIDF", 1, 3, 0, identity, w);
  ti_assert (ti_run1 (n, TI_IN (tokens ())), FB_DTYPE_FLOAT32, 2, D (2, 5),
             V (1, 2, 3, 0, 10, 0, 2, 0, 4, 0), 0);
  /* Columns in another order, two n-grams sharing column 0 (their values add), the weight
   * following the n-gram, not the column. */
  static const int64_t shuffled[] = { 2, 0, 0, 1, 3 };
  n = tfidf (&g, "TFIDF", 1, 3, 0, shuffled, w);
  ti_assert (ti_run1 (n, TI_IN (tokens ())), FB_DTYPE_FLOAT32, 2, D (2, 4),
             V (2 + 3, 0, 1, 10, 2, 4, 0, 0), 0);
  /* One row of int32 tokens: a vector out. */
  n = tfidf (&g, "TF", 1, 1, 3, identity, NULL);
  ti_assert (ti_run1 (n, TI_IN (ti_tensor (FB_DTYPE_INT32, 1, D (4), V (3, 3, 2, 9)))),
             FB_DTYPE_FLOAT32, 1, D (5), V (1, 2, 0, 0, 0), 0);
  ti_done ();
}

static void
test_cpu (void)
{
  FbGraph *g;
  FbNode *n;
  static const float w[] = { 0.5f, 2, -3, 4, 10 };
  static const int64_t shuffled[] = { 4, 0, 0, 2, 6 };
  static const char *modes[] = { "TF", "IDF", "TFIDF" };
  g_autofree double *v = g_new (double, 3 * 40);
  for (int i = 0; i < 3 * 40; i++)
    v[i] = (i * 7 + i / 5) % 9;
  FbTensor *x = ti_tensor (FB_DTYPE_INT32, 2, D (3, 40), v);
  for (guint m = 0; m < 3; m++)
    for (int64_t skip = 0; skip <= 4; skip += 2)
      {
        n = tfidf (&g, modes[m], 1 + (skip == 4), 3, skip, m ? shuffled : identity, m ? w : NULL);
        tc_node (g, n, TI_IN (x), 0);
      }
  /* A skip far past the row: the loops stop where no n-gram fits. */
  n = tfidf (&g, "TF", 2, 3, G_MAXINT32, identity, NULL);
  tc_node (g, n, TI_IN (x), 0);
  ti_done ();
}

static void
test_refusals (void)
{
  FbGraph *g;
  FbNode *n;
  g_autoptr(GError) error = NULL;
  static const float w[] = { 1, 2, 3 };
  static const char *strings[] = { "a", "b" };
  static const int64_t short_columns[] = { 0, 1, 2, 3 };
  FbTensor *x = tokens ();
  FbNode *bad[6];

  /* An unknown mode, lengths the wrong way round, a negative skip, weights or columns for
   * another number of n-grams, a level that is not whole bigrams. */
  bad[0] = tfidf (&g, "BM25", 1, 3, 0, identity, NULL);
  bad[1] = tfidf (&g, "TF", 3, 2, 0, identity, NULL);
  bad[2] = tfidf (&g, "TF", 1, 2, -1, identity, NULL);
  bad[3] = tfidf (&g, "TF", 1, 2, 0, identity, NULL);
  ti_attr_floats (g, bad[3], "weights", 3, w);
  bad[4] = tfidf (&g, "TF", 1, 2, 0, identity, NULL);
  ti_attr_ints (g, bad[4], "ngram_indexes", 4, short_columns);
  bad[5] = tfidf (&g, "TF", 1, 2, 0, identity, NULL);
  ti_attr_ints (g, bad[5], "ngram_counts", 3, D (0, 2, 5));
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      ti_run_fails (bad[i], TI_IN (x), FB_INTERP_ERROR_RUNTIME);
      bad[i]->inputs[0]->dtype = FB_DTYPE_INT64;
      bad[i]->inputs[0]->shape = fb_tensor_shape (x);
      g_assert_false (fb_infer_node (bad[i]->inputs[0]->graph, bad[i], &error));
      g_assert_nonnull (strstr (error->message, bad[i]->name));
      g_clear_error (&error);
    }
  /* Pools of strings are valid ONNX this project does not compute: "unsupported". */
  n = tfidf (&g, "TF", 1, 2, 0, identity, NULL);
  ti_attr_strings (g, n, "pool_strings", 2, strings);
  ti_run_fails (n, TI_IN (x), FB_INTERP_ERROR_UNSUPPORTED);
  /* Tokens of floats, or of rank 3. */
  n = tfidf (&g, "TF", 1, 2, 0, identity, NULL);
  ti_run_fails (n, TI_IN (ti_f32 (1, D (3), NULL)), FB_INTERP_ERROR_RUNTIME);
  ti_run_fails (n, TI_IN (ti_tensor (FB_DTYPE_INT64, 3, D (1, 1, 3), NULL)), FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/conform-tfidf/values", test_values);
  g_test_add_func ("/conform-tfidf/cpu", test_cpu);
  g_test_add_func ("/conform-tfidf/refusals", test_refusals);
  return g_test_run ();
}
