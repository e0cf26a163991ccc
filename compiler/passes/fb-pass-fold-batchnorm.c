/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fold-batchnorm: folds an inference BatchNormalization into the Conv, ConvTranspose, Gemm or
 * MatMul that feeds it. With s = scale / sqrt(var + eps), the normalization is the per-channel
 * affine map y = s * x + (B - s * mean), which scales the producer's weights per output channel
 * and shifts its bias. The producer must have no other reader (its unnormalized output would
 * be lost) and constant weights. New weights are new constants: a weight tensor may be shared
 * with another node or stage and is never written. A BatchNormalization with nothing to fold
 * into (a pre-activation network's, after a Concat) becomes that affine map as a Mul and an Add
 * of per-channel constants, which the elementwise fusion joins with the activation after it
 * and the layout pass can run channels-last (a kernel of its own, with a transpose on each
 * side, on every layer of DenseNet-121 otherwise).
 *
 * Requires: constants folded (the statistics and weights must be constants).
 * Preserves: the producer's id (it now stands for the BatchNormalization as well), the id and
 *            name of the normalized value.
 * Invalidates: the producer's inputs (new weight constants). */
#include "fb-pass-private.h"

#include <math.h>

typedef struct {
  int64_t  channels;
  double  *s;        /* per-channel scale */
  double  *t;        /* per-channel shift */
} Affine;

static gboolean
is_float_const (const FbValue *v, FbDType dtype)
{
  return v != NULL && v->constant != NULL && v->constant->dtype == dtype &&
         fb_dtype_is_float (dtype);
}

static gboolean
bn_affine (const FbNode *bn, Affine *a)
{
  FbValue *x = fb_node_input (bn, 0);
  FbValue *p[4] = { fb_node_input (bn, 1), fb_node_input (bn, 2), fb_node_input (bn, 3),
                    fb_node_input (bn, 4) };
  double eps = fb_node_attr_float (bn, "epsilon", 1e-5f);
  int64_t c;

  if (x == NULL || fb_node_attr_int (bn, "training_mode", 0) != 0)
    return FALSE;
  for (guint k = 1; k < bn->n_outputs; k++)
    if (bn->outputs[k] != NULL)
      return FALSE;
  for (int i = 0; i < 4; i++)
    if (!is_float_const (p[i], x->dtype) || p[i]->constant->rank != 1)
      return FALSE;
  c = p[0]->constant->numel;
  for (int i = 1; i < 4; i++)
    if (p[i]->constant->numel != c)
      return FALSE;
  if (x->shape.rank < 2 || x->shape.dim[1] != c)
    return FALSE;
  a->channels = c;
  a->s = g_new (double, c);
  a->t = g_new (double, c);
  for (int64_t i = 0; i < c; i++)
    {
      double scale = fb_tensor_get_f64 (p[0]->constant, i);
      double bias = fb_tensor_get_f64 (p[1]->constant, i);
      double mean = fb_tensor_get_f64 (p[2]->constant, i);
      double var = fb_tensor_get_f64 (p[3]->constant, i);
      a->s[i] = scale / sqrt (var + eps);
      a->t[i] = bias - mean * a->s[i];
    }
  return TRUE;
}

static FbValue *
new_bias (FbGraph *g, const FbNode *prod, const FbValue *old_bias, const Affine *a, FbDType dtype)
{
  g_autoptr(FbTensor) t = fb_tensor_new (dtype, 1, &a->channels, NULL);

  if (t == NULL)
    return NULL;
  for (int64_t i = 0; i < a->channels; i++)
    {
      double b = old_bias ? fb_tensor_get_f64 (old_bias->constant, i) : 0.0;
      fb_tensor_set_f64 (t, i, b * a->s[i] + a->t[i]);
    }
  return _fb_constant_new (g, prod->name, t);
}

/* Conv: W is [M, C/group, k...] and output channel m scales W[m]. ConvTranspose: W is
 * [C, M/group, k...] and output channel (c / (C/group)) * (M/group) + j scales W[c, j]. */
static FbValue *
scaled_conv_weight (FbGraph *g, const FbNode *conv, const FbValue *w, const Affine *a)
{
  const FbTensor *wt = w->constant;
  g_autoptr(FbTensor) out = NULL;
  int64_t inner = 1;
  int64_t group = fb_node_attr_int (conv, "group", 1);

  if (wt->rank < 2 || group < 1)
    return NULL;
  for (int d = 2; d < wt->rank; d++)
    inner *= wt->dims[d];
  if (conv->op == FB_OP_CONV && wt->dims[0] != a->channels)
    return NULL;
  if (conv->op == FB_OP_CONV_TRANSPOSE &&
      (wt->dims[1] * group != a->channels || wt->dims[0] % group != 0))
    return NULL;
  out = fb_tensor_new (wt->dtype, wt->rank, wt->dims, NULL);
  if (out == NULL)
    return NULL;
  for (int64_t i0 = 0; i0 < wt->dims[0]; i0++)
    for (int64_t i1 = 0; i1 < wt->dims[1]; i1++)
      {
        int64_t ch = conv->op == FB_OP_CONV
                       ? i0
                       : (i0 / (wt->dims[0] / group)) * wt->dims[1] + i1;
        int64_t base = (i0 * wt->dims[1] + i1) * inner;
        for (int64_t e = 0; e < inner; e++)
          fb_tensor_set_f64 (out, base + e, fb_tensor_get_f64 (wt, base + e) * a->s[ch]);
      }
  return _fb_constant_new (g, w->name, out);
}

/* A [K, M] (or, transposed, [M, K]) matrix with column (row) m scaled. */
static FbValue *
scaled_matrix (FbGraph *g, const FbValue *w, const Affine *a, gboolean transposed)
{
  const FbTensor *wt = w->constant;
  g_autoptr(FbTensor) out = NULL;

  if (wt->rank != 2 || wt->dims[transposed ? 0 : 1] != a->channels)
    return NULL;
  out = fb_tensor_new (wt->dtype, 2, wt->dims, NULL);
  if (out == NULL)
    return NULL;
  for (int64_t r = 0; r < wt->dims[0]; r++)
    for (int64_t c = 0; c < wt->dims[1]; c++)
      fb_tensor_set_f64 (out, r * wt->dims[1] + c,
                         fb_tensor_get_f64 (wt, r * wt->dims[1] + c) * a->s[transposed ? r : c]);
  return _fb_constant_new (g, w->name, out);
}

/* Gemm's C broadcasts to [N, M]; the new C' = beta * C * s + t keeps C's rows (1 or N). */
static FbValue *
gemm_bias (FbGraph *g, const FbNode *gemm, const FbValue *c, const Affine *a, FbDType dtype)
{
  double beta = fb_node_attr_float (gemm, "beta", 1.0f);
  int64_t rows = 1, dims[2];
  g_autoptr(FbTensor) out = NULL;
  const FbTensor *ct = c ? c->constant : NULL;

  if (ct != NULL)
    {
      if (ct->rank > 2 || (ct->rank >= 1 && ct->dims[ct->rank - 1] != 1 &&
                           ct->dims[ct->rank - 1] != a->channels))
        return NULL;
      rows = ct->rank == 2 ? ct->dims[0] : 1;
    }
  dims[0] = rows;
  dims[1] = a->channels;
  out = rows == 1 ? fb_tensor_new (dtype, 1, &dims[1], NULL) : fb_tensor_new (dtype, 2, dims, NULL);
  if (out == NULL)
    return NULL;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t m = 0; m < a->channels; m++)
      {
        double cv = 0;
        if (ct != NULL)
          {
            int64_t cols = ct->rank >= 1 ? ct->dims[ct->rank - 1] : 1;
            int64_t ci = (ct->rank == 2 ? r * cols : 0) + (cols == 1 ? 0 : m);
            cv = beta * fb_tensor_get_f64 (ct, ci);
          }
        fb_tensor_set_f64 (out, r * a->channels + m, cv * a->s[m] + a->t[m]);
      }
  return _fb_constant_new (g, gemm->name, out);
}

/* 1 when folded, 0 when the pair does not qualify, -1 on error. */
static int
fold_one (FbGraph *g, FbNode *bn, FbNode *prod, const Affine *a, GError **error)
{
  FbValue *x = prod->inputs[0];
  FbValue *w = fb_node_input (prod, 1);
  FbValue *b = fb_node_input (prod, 2);
  FbValue *out = bn->outputs[0];
  FbDType dtype = out->dtype;

  if (!is_float_const (w, dtype) || (b != NULL && !is_float_const (b, dtype)))
    return 0;

  switch (prod->op)
    {
    case FB_OP_CONV:
    case FB_OP_CONV_TRANSPOSE:
      {
        FbValue *w2, *b2;
        if (b != NULL && (b->constant->rank != 1 || b->constant->numel != a->channels))
          return 0;
        w2 = scaled_conv_weight (g, prod, w, a);
        b2 = w2 ? new_bias (g, prod, b, a, dtype) : NULL;
        if (b2 == NULL)
          return 0;
        if (prod->n_inputs < 3)
          {
            /* Room for the bias the convolution did not have. */
            FbValue **inputs = fb_arena_alloc (g->arena, sizeof (FbValue *) * 3);
            inputs[0] = x;
            prod->inputs = inputs;
            prod->n_inputs = 3;
          }
        prod->inputs[1] = w2;
        prod->inputs[2] = b2;
        break;
      }
    case FB_OP_GEMM:
      {
        gboolean trans_b = fb_node_attr_int (prod, "transB", 0) != 0;
        FbValue *w2 = scaled_matrix (g, w, a, trans_b);
        FbValue *c2 = w2 ? gemm_bias (g, prod, b, a, dtype) : NULL;
        if (c2 == NULL || out->shape.rank != 2)
          return 0;
        if (prod->n_inputs < 3)
          {
            FbValue **inputs = fb_arena_alloc (g->arena, sizeof (FbValue *) * 3);
            inputs[0] = x;
            prod->inputs = inputs;
            prod->n_inputs = 3;
          }
        prod->inputs[1] = w2;
        prod->inputs[2] = c2;
        _fb_node_set_float (g, prod, "beta", 1.0f);
        break;
      }
    case FB_OP_MATMUL:
      {
        FbValue *w2, *bias, *mid, *add_in[2];
        FbNode *add;
        if (out->shape.rank != 2)
          return 0;
        w2 = scaled_matrix (g, w, a, FALSE);
        bias = w2 ? new_bias (g, prod, NULL, a, dtype) : NULL;
        if (bias == NULL)
          return 0;
        prod->inputs[1] = w2;
        /* MatMul has no bias: the shift becomes an Add the epilogue fusion takes back in. */
        mid = _fb_value_new (g, prod->name, prod->outputs[0]->dtype, &prod->outputs[0]->shape);
        add_in[0] = mid;
        add_in[1] = bias;
        add = _fb_node_new (g, FB_OP_ADD, bn->name, add_in, 2, 1, bn);
        fb_node_set_output (prod, 0, mid);
        _fb_node_steal_outputs (bn, add);
        fb_node_add_prov (g, prod, bn->prov, bn->n_prov);
        return _fb_node_infer (g, add, error) ? 1 : -1;
      }
    default:
      return 0;
    }
  /* The producer now computes the normalized value itself. */
  bn->outputs[0] = NULL;
  fb_node_set_output (prod, 0, out);
  fb_node_add_prov (g, prod, bn->prov, bn->n_prov);
  return 1;
}

/* bn as x * s + t, s and t of shape [C, 1, ...] so that they broadcast along axis 1; returns
 * the Add, which now produces bn's output, or NULL on error. */
static FbNode *
decompose (FbGraph *g, FbNode *bn, const Affine *a, GError **error)
{
  FbValue *x = bn->inputs[0];
  int rank = x->shape.rank;
  int64_t dims[FB_MAX_RANK];
  dims[0] = a->channels;
  for (int i = 1; i < rank - 1; i++)
    dims[i] = 1;
  g_autoptr(FbTensor) st = fb_tensor_new (x->dtype, rank - 1, dims, NULL);
  g_autoptr(FbTensor) tt = fb_tensor_new (x->dtype, rank - 1, dims, NULL);
  if (st == NULL || tt == NULL)
    return NULL;
  for (int64_t i = 0; i < a->channels; i++)
    {
      fb_tensor_set_f64 (st, i, a->s[i]);
      fb_tensor_set_f64 (tt, i, a->t[i]);
    }
  FbValue *mul_in[2] = { x, _fb_constant_new (g, bn->name, st) };
  FbValue *mid = _fb_value_new (g, bn->name, x->dtype, &x->shape);
  FbNode *mul = _fb_node_new (g, FB_OP_MUL, bn->name, mul_in, 2, 1, bn);
  fb_node_set_output (mul, 0, mid);
  FbValue *add_in[2] = { mid, _fb_constant_new (g, bn->name, tt) };
  FbNode *add = _fb_node_new (g, FB_OP_ADD, bn->name, add_in, 2, 1, bn);
  _fb_node_steal_outputs (bn, add);
  return _fb_node_infer (g, mul, error) && _fb_node_infer (g, add, error) ? add : NULL;
}

gboolean
_fb_pass_fold_batchnorm (FbPassContext *ctx, FbGraph *graph, GError **error)
{
  g_autoptr(GHashTable) uses = fb_graph_build_uses (graph);
  g_autoptr(GHashTable) hist = g_hash_table_new (g_str_hash, g_str_equal);
  guint n_folded = 0, n_decomposed = 0;

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *bn = g_ptr_array_index (graph->nodes, i);
      FbValue *x = fb_node_input (bn, 0);
      FbNode *prod = x ? x->producer : NULL;
      GPtrArray *users = x ? g_hash_table_lookup (uses, x) : NULL;
      Affine a = { 0 };
      int folded;

      if (bn->op != FB_OP_BATCH_NORMALIZATION || bn->outputs[0] == NULL || !bn_affine (bn, &a))
        continue;
      if (prod == NULL || x->is_output || users == NULL || users->len != 1 ||
          (prod->op != FB_OP_CONV && prod->op != FB_OP_CONV_TRANSPOSE &&
           prod->op != FB_OP_GEMM && prod->op != FB_OP_MATMUL) ||
          x->producer_output != 0)
        folded = 0;
      else
        folded = fold_one (graph, bn, prod, &a, error);
      if (folded == 0)
        {
          FbNode *add = decompose (graph, bn, &a, error);
          g_free (a.s);
          g_free (a.t);
          if (add == NULL)
            return FALSE;
          _fb_pass_record_fate (ctx, bn->id, FB_CHANGE_FUSED, add->id);
          n_decomposed++;
          continue;
        }
      g_free (a.s);
      g_free (a.t);
      if (folded < 0)
        return FALSE;
      _fb_pass_record_fate (ctx, bn->id, FB_CHANGE_FUSED, prod->id);
      g_hash_table_insert (hist, (gpointer) prod->op_type,
                           GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (hist, prod->op_type)) + 1));
      n_folded++;
    }
  if (n_decomposed)
    _fb_pass_note (ctx, "%u BatchNormalization with no producer to fold into became a Mul and an "
                   "Add", n_decomposed);
  if (n_folded || n_decomposed)
    {
      if (!fb_graph_toposort (graph, error))
        return FALSE;
      fb_graph_remove_dead (graph);
      if (n_folded)
      {
        g_autoptr(GString) into = g_string_new (NULL);
        GHashTableIter it;
        gpointer op, count;
        g_hash_table_iter_init (&it, hist);
        while (g_hash_table_iter_next (&it, &op, &count))
          g_string_append_printf (into, "%s%u into %s", into->len ? ", " : "",
                                  GPOINTER_TO_UINT (count), (const char *) op);
        _fb_pass_note (ctx, "folded %u BatchNormalization (%s)", n_folded, into->str);
      }
    }
  return TRUE;
}
