/* SPDX-License-Identifier: GPL-3.0-or-later */
/* MatMul (numpy semantics: 1-D promotion, broadcast batch axes), Gemm, and Einsum of one or two
 * operands, which reduces to diagonals and sums within each operand, then a permutation, a
 * batched MatMul and a permutation back. Floats accumulate in double (one row of results at a
 * time); integers in int64. */
#include "fb-interp-private.h"

#include <string.h>

/* A tensor's values seen as [batch..., rows, cols] with numpy's batch broadcasting. */
typedef struct {
  int      rank;                   /* batch rank + 2 */
  int64_t  dims[FB_MAX_RANK];
  gpointer data;                   /* double* or int64_t*, owned */
} Mat;

/* C[b] = A[b] x B[b] for every broadcast batch index; A is [.., M, K], B is [.., K, N]. */
static gboolean
batched_matmul (const FbNode *node, gboolean as_float, const Mat *a, const Mat *b, Mat *c,
                GError **error)
{
  int64_t M = a->dims[a->rank - 2], K = a->dims[a->rank - 1];
  int64_t K2 = b->dims[b->rank - 2], N = b->dims[b->rank - 1];
  int ranks[2] = { a->rank - 2, b->rank - 2 };
  const int64_t *bdims[2] = { a->dims, b->dims };
  FbBcast bc;
  int64_t batches;

  if (K != K2)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "inner dimensions differ (%" G_GINT64_FORMAT " and %" G_GINT64_FORMAT ")",
                            K, K2);
  if (!_fb_bcast_init_dims (&bc, node, 2, ranks, bdims, error))
    return FALSE;
  c->rank = bc.rank + 2;
  memcpy (c->dims, bc.dims, sizeof (int64_t) * bc.rank);
  c->dims[bc.rank] = M;
  c->dims[bc.rank + 1] = N;
  batches = bc.numel;
  {
    int64_t total;
    if (__builtin_mul_overflow (batches, M, &total) || __builtin_mul_overflow (total, N, &total))
      total = -1;
    c->data = _fb_interp_alloc (node, total, as_float ? sizeof (double) : sizeof (int64_t), error);
    if (c->data == NULL)
      return FALSE;
  }

  for (int64_t t = 0; t < batches; t++)
    {
      /* The batch offsets of operand k: walk t's multi-index over the broadcast batch shape. */
      int64_t ao = 0, bo = 0, rem = t;
      for (int i = bc.rank - 1; i >= 0; i--)
        {
          int64_t idx = rem % bc.dims[i];
          rem /= bc.dims[i];
          ao += idx * bc.strides[0][i];
          bo += idx * bc.strides[1][i];
        }
      if (as_float)
        {
          const double *A = (const double *) a->data + ao * M * K;
          const double *B = (const double *) b->data + bo * K * N;
          double *C = (double *) c->data + t * M * N;
          for (int64_t i = 0; i < M; i++)
            {
              double *row = C + i * N;
              for (int64_t k = 0; k < K; k++)
                {
                  double s = A[i * K + k];
                  const double *brow = B + k * N;
                  for (int64_t j = 0; j < N; j++)
                    row[j] += s * brow[j];
                }
            }
        }
      else
        {
          const int64_t *A = (const int64_t *) a->data + ao * M * K;
          const int64_t *B = (const int64_t *) b->data + bo * K * N;
          int64_t *C = (int64_t *) c->data + t * M * N;
          for (int64_t i = 0; i < M; i++)
            for (int64_t k = 0; k < K; k++)
              {
                uint64_t s = (uint64_t) A[i * K + k];
                for (int64_t j = 0; j < N; j++)
                  C[i * N + j] = (int64_t) ((uint64_t) C[i * N + j] + s * (uint64_t) B[k * N + j]);
              }
        }
    }
  return TRUE;
}

static void
mat_load (Mat *m, const FbTensor *t, gboolean as_float)
{
  m->rank = t->rank;
  memcpy (m->dims, t->dims, sizeof m->dims);
  m->data = as_float ? (gpointer) _fb_interp_read_f64 (t) : (gpointer) _fb_interp_read_i64 (t);
}

static FbTensor *
mat_store (const FbNode *node, FbDType dtype, gboolean as_float, const Mat *m, GError **error)
{
  FbTensor *y = _fb_interp_new (node, dtype, m->rank, m->dims, error);

  if (y != NULL)
    {
      if (as_float)
        _fb_interp_write_f64 (y, m->data);
      else
        _fb_interp_write_i64 (y, m->data);
    }
  return y;
}

static gboolean
check_types (const FbNode *node, const FbTensor *a, const FbTensor *b, GError **error)
{
  if (a->dtype != b->dtype)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "inputs have different element types (%s and %s)",
                            fb_dtype_name (a->dtype), fb_dtype_name (b->dtype));
  if (a->dtype == FB_DTYPE_BOOL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "element type bool is not supported");
  return TRUE;
}

gboolean
_fb_interp_matmul (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                   GError **error)
{
  FbTensor *a = in[0], *b = in[1];
  gboolean as_float = fb_dtype_is_float (a->dtype);
  Mat ma, mb, mc = { 0 };
  gboolean ok;

  if (!check_types (node, a, b, error))
    return FALSE;
  if (a->rank < 1 || b->rank < 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "scalars cannot be multiplied");
  mat_load (&ma, a, as_float);
  mat_load (&mb, b, as_float);
  /* numpy promotion: a 1-D left operand is a row, a 1-D right operand a column; the extra axis
   * is dropped from the result. */
  if (a->rank == 1)
    {
      ma.rank = 2;
      ma.dims[0] = 1;
      ma.dims[1] = a->dims[0];
    }
  if (b->rank == 1)
    {
      mb.rank = 2;
      mb.dims[0] = b->dims[0];
      mb.dims[1] = 1;
    }
  ok = batched_matmul (node, as_float, &ma, &mb, &mc, error);
  g_free (ma.data);
  g_free (mb.data);
  if (!ok)
    return FALSE;
  if (b->rank == 1)
    mc.rank--;
  if (a->rank == 1)
    {
      mc.dims[mc.rank - 2] = mc.dims[mc.rank - 1];
      mc.rank--;
    }
  out[0] = mat_store (node, a->dtype, as_float, &mc, error);
  g_free (mc.data);
  return out[0] != NULL;
}

/* A 2-D matrix, transposed when asked. */
static void
mat_load_2d (Mat *m, const FbTensor *t, gboolean as_float, gboolean transpose)
{
  mat_load (m, t, as_float);
  if (!transpose)
    return;
  {
    int64_t R = t->dims[0], C = t->dims[1];
    gsize es = as_float ? sizeof (double) : sizeof (int64_t);
    char *tr = g_malloc (MAX (R * C, 1) * es);
    for (int64_t i = 0; i < R; i++)
      for (int64_t j = 0; j < C; j++)
        memcpy (tr + (j * R + i) * es, (char *) m->data + (i * C + j) * es, es);
    g_free (m->data);
    m->data = tr;
    m->dims[0] = C;
    m->dims[1] = R;
  }
}

gboolean
_fb_interp_gemm (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                 GError **error)
{
  FbTensor *a = in[0], *b = in[1], *c = node->n_inputs > 2 ? in[2] : NULL;
  double alpha = fb_node_attr_float (node, "alpha", 1.0f);
  double beta = fb_node_attr_float (node, "beta", 1.0f);
  gboolean as_float = fb_dtype_is_float (a->dtype);
  Mat ma, mb, mr = { 0 };
  gboolean ok;

  if (!check_types (node, a, b, error))
    return FALSE;
  if (a->rank != 2 || b->rank != 2)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "A and B must be matrices, they have ranks %d and %d", a->rank,
                            b->rank);
  mat_load_2d (&ma, a, as_float, fb_node_attr_int (node, "transA", 0) != 0);
  mat_load_2d (&mb, b, as_float, fb_node_attr_int (node, "transB", 0) != 0);
  ok = batched_matmul (node, as_float, &ma, &mb, &mr, error);
  g_free (ma.data);
  g_free (mb.data);
  if (!ok)
    return FALSE;
  {
    int64_t M = mr.dims[0], N = mr.dims[1];
    FbBcast bc;
    const FbTensor *ops[2] = { NULL, c };
    g_autofree double *cf = NULL;
    g_autofree int64_t *ci = NULL;
    g_autoptr(FbTensor) shape_of_y = NULL;

    if (c != NULL)
      {
        /* C broadcasts one way only, onto the [M, N] result. */
        int64_t dims[2] = { M, N };
        shape_of_y = fb_tensor_new (FB_DTYPE_UINT8, 2, dims, NULL);
        ops[0] = shape_of_y;
        if (shape_of_y == NULL || !_fb_bcast_init (&bc, node, 2, ops, error))
          {
            g_free (mr.data);
            return shape_of_y == NULL
                     ? _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "result too large")
                     : FALSE;
          }
        if (bc.rank != 2 || bc.dims[0] != M || bc.dims[1] != N)
          {
            g_free (mr.data);
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                    "C does not broadcast to the %" G_GINT64_FORMAT "x%"
                                    G_GINT64_FORMAT " result", M, N);
          }
        if (as_float)
          cf = _fb_interp_read_f64 (c);
        else
          ci = _fb_interp_read_i64 (c);
      }
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++)
        {
          int64_t at = i * N + j;
          int64_t co = c ? i * bc.strides[1][0] + j * bc.strides[1][1] : 0;
          if (as_float)
            {
              double *r = mr.data;
              r[at] = alpha * r[at] + (c ? beta * cf[co] : 0.0);
            }
          else
            {
              int64_t *r = mr.data;
              r[at] = (int64_t) alpha * r[at] + (c ? (int64_t) beta * ci[co] : 0);
            }
        }
  }
  out[0] = mat_store (node, a->dtype, as_float, &mr, error);
  g_free (mr.data);
  return out[0] != NULL;
}

/* ---- Einsum ------------------------------------------------------------------------------- */

/* Labels are letters; the axes an ellipsis stands for get the labels 0..7 (never letters). */
typedef struct {
  guint n_terms;
  int   term_len[2];
  char  term_labels[2][FB_MAX_RANK];
  int   ellipsis_at[2];          /* position of "..." in the term, -1 if none */
  char  out_labels[FB_MAX_RANK];
  int   out_len;                 /* -1: implicit output */
  int   out_ellipsis_at;
} Equation;

static gboolean
parse_term (const char *s, const char *end, char *labels, int *len, int *ell)
{
  *len = 0;
  *ell = -1;
  while (s < end)
    {
      if (*s == ' ')
        s++;
      else if (g_ascii_isalpha (*s))
        {
          if (*len >= FB_MAX_RANK)
            return FALSE;
          labels[(*len)++] = *s++;
        }
      else if (end - s >= 3 && strncmp (s, "...", 3) == 0 && *ell < 0)
        {
          *ell = *len;
          s += 3;
        }
      else
        return FALSE;
    }
  return TRUE;
}

static gboolean
parse_equation (const FbNode *node, Equation *eq, GError **error)
{
  const char *text = fb_node_attr_string (node, "equation", NULL);
  const char *arrow, *lhs_end, *p;

  memset (eq, 0, sizeof *eq);
  if (text == NULL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "the equation attribute is missing");
  arrow = strstr (text, "->");
  lhs_end = arrow ? arrow : text + strlen (text);
  p = text;
  while (TRUE)
    {
      const char *comma = memchr (p, ',', lhs_end - p);
      const char *term_end = comma ? comma : lhs_end;
      if (eq->n_terms == 2)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                "equation '%s': only one or two operands are supported", text);
      if (!parse_term (p, term_end, eq->term_labels[eq->n_terms], &eq->term_len[eq->n_terms],
                       &eq->ellipsis_at[eq->n_terms]))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                "equation '%s' cannot be parsed", text);
      eq->n_terms++;
      if (comma == NULL)
        break;
      p = comma + 1;
    }
  eq->out_len = -1;
  eq->out_ellipsis_at = -1;
  if (arrow && !parse_term (arrow + 2, arrow + 2 + strlen (arrow + 2), eq->out_labels,
                            &eq->out_len, &eq->out_ellipsis_at))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "equation '%s' cannot be parsed", text);
  for (int i = 0; i < MAX (eq->out_len, 0); i++)
    {
      gboolean found = FALSE;
      for (guint t = 0; t < eq->n_terms; t++)
        found |= memchr (eq->term_labels[t], eq->out_labels[i], eq->term_len[t]) != NULL;
      for (int j = i + 1; j < eq->out_len; j++)
        found &= eq->out_labels[i] != eq->out_labels[j];
      if (!found)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                "equation '%s': output label '%c' is repeated or not in any "
                                "operand", text, eq->out_labels[i]);
    }
  return TRUE;
}

gboolean
_fb_interp_check_einsum (const FbNode *node, GError **error)
{
  Equation eq;

  if (!parse_equation (node, &eq, error))
    return FALSE;
  if (node->n_inputs != eq.n_terms)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the equation has %u operands but the node has %u inputs",
                            eq.n_terms, node->n_inputs);
  return TRUE;
}

/* An operand with one label per axis, the ellipsis expanded into labels '0'.. */
typedef struct {
  int     rank;
  char    labels[FB_MAX_RANK];
  int64_t dims[FB_MAX_RANK];
  double *v;
} Term;

static gboolean
expand_term (const FbNode *node, const Equation *eq, guint t, const FbTensor *x, int n_ell,
             Term *term, GError **error)
{
  int named = eq->term_len[t], k = 0;

  if ((eq->ellipsis_at[t] < 0 && x->rank != named) || (eq->ellipsis_at[t] >= 0 && x->rank < named))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "operand %u has rank %d, the equation names %d axes", t, x->rank, named);
  term->rank = x->rank;
  for (int i = 0; i <= named; i++)
    {
      if (i == eq->ellipsis_at[t])
        {
          int here = x->rank - named;
          /* Ellipsis axes align to the right, like numpy broadcasting. */
          for (int e = 0; e < here; e++)
            term->labels[k++] = (char) ('0' + (n_ell - here + e));
        }
      if (i < named)
        term->labels[k++] = eq->term_labels[t][i];
    }
  memcpy (term->dims, x->dims, sizeof term->dims);
  term->v = _fb_interp_read_f64 (x);
  return TRUE;
}

static int
label_index (const Term *t, char c)
{
  const char *p = memchr (t->labels, c, t->rank);
  return p ? (int) (p - t->labels) : -1;
}

/* A label repeated within a term selects its diagonal: the term keeps the label's first axis
 * and reads only the elements whose indices agree along all of its axes. */
static gboolean
take_diagonals (const FbNode *node, guint which, Term *t, GError **error)
{
  int rank = 0, from[FB_MAX_RANK];
  char labels[FB_MAX_RANK];
  int64_t dims[FB_MAX_RANK], src_strides[FB_MAX_RANK], strides[FB_MAX_RANK] = { 0 };
  int64_t dst_strides[FB_MAX_RANK], n;
  double *r;

  for (int i = 0; i < t->rank; i++)
    {
      char *seen = memchr (labels, t->labels[i], rank);
      if (seen == NULL)
        {
          labels[rank] = t->labels[i];
          dims[rank] = t->dims[i];
          from[i] = rank++;
        }
      else if (dims[seen - labels] != t->dims[i])
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "operand %u repeats label '%c' over the extents %" G_GINT64_FORMAT
                                " and %" G_GINT64_FORMAT, which, t->labels[i],
                                dims[seen - labels], t->dims[i]);
      else
        from[i] = (int) (seen - labels);
    }
  if (rank == t->rank)
    return TRUE;
  /* The diagonal's stride along a kept axis is the sum of the strides of the axes it stands
   * for. */
  _fb_strides (t->rank, t->dims, src_strides);
  for (int i = 0; i < t->rank; i++)
    strides[from[i]] += src_strides[i];
  n = _fb_interp_prod (dims, 0, rank);
  r = g_new (double, MAX (n, 1));
  _fb_strides (rank, dims, dst_strides);
  _fb_copy_strided (r, dst_strides, t->v, strides, rank, dims, sizeof (double));
  g_free (t->v);
  t->v = r;
  t->rank = rank;
  memcpy (t->labels, labels, rank);
  memcpy (t->dims, dims, sizeof (int64_t) * rank);
  return TRUE;
}

/* Sums term over the axes whose labels keep says FALSE for. */
static void
sum_out (Term *t, const gboolean *keep)
{
  int64_t kd[FB_MAX_RANK], ks[FB_MAX_RANK], rem, total = 1, out_n = 1;
  double *r;
  int nr = 0;

  for (int i = 0; i < t->rank; i++)
    {
      kd[i] = keep[i] ? t->dims[i] : 1;
      total *= t->dims[i];
      out_n *= kd[i];
    }
  _fb_strides (t->rank, kd, ks);
  r = g_new0 (double, MAX (out_n, 1));
  for (int64_t i = 0; i < total; i++)
    {
      int64_t o = 0;
      rem = i;
      for (int d = t->rank - 1; d >= 0; d--)
        {
          int64_t idx = rem % t->dims[d];
          rem /= t->dims[d];
          if (keep[d])
            o += idx * ks[d];
        }
      r[o] += t->v[i];
    }
  g_free (t->v);
  t->v = r;
  for (int i = 0; i < t->rank; i++)
    if (keep[i])
      {
        t->labels[nr] = t->labels[i];
        t->dims[nr++] = t->dims[i];
      }
  t->rank = nr;
}

/* Permutes a term's values so that its labels come in the order given. */
static void
permute_term (Term *t, const char *order)
{
  int64_t src[FB_MAX_RANK], dst[FB_MAX_RANK], dims[FB_MAX_RANK], st[FB_MAX_RANK];
  double *r = g_new (double, MAX (_fb_interp_prod (t->dims, 0, t->rank), 1));

  _fb_strides (t->rank, t->dims, st);
  for (int i = 0; i < t->rank; i++)
    {
      int from = label_index (t, order[i]);
      dims[i] = t->dims[from];
      src[i] = st[from];
    }
  _fb_strides (t->rank, dims, dst);
  _fb_copy_strided (r, dst, t->v, src, t->rank, dims, sizeof (double));
  g_free (t->v);
  t->v = r;
  memcpy (t->labels, order, t->rank);
  memcpy (t->dims, dims, sizeof dims);
}

gboolean
_fb_interp_einsum (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                   GError **error)
{
  Equation eq;
  Term terms[2] = { { 0 } };
  char out_labels[FB_MAX_RANK];
  int out_len = 0, n_ell = 0;
  gboolean ok = FALSE;

  if (!_fb_interp_check_einsum (node, error) || !parse_equation (node, &eq, error))
    return FALSE;
  for (guint t = 0; t < eq.n_terms; t++)
    if (!_fb_interp_need_float (node, in[t], error))
      return FALSE;
  for (guint t = 0; t < eq.n_terms; t++)
    if (eq.ellipsis_at[t] >= 0)
      n_ell = MAX (n_ell, in[t]->rank - eq.term_len[t]);
  for (guint t = 0; t < eq.n_terms; t++)
    if (!expand_term (node, &eq, t, in[t], n_ell, &terms[t], error) ||
        !take_diagonals (node, t, &terms[t], error))
      goto done;

  /* The output labels: as written, or (implicit form) the ellipsis then every label used once,
   * in alphabetical order. */
  if (eq.out_len >= 0 && eq.out_ellipsis_at < 0 && n_ell > 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the equation's ellipsis stands for %d dimensions but its output has "
                            "none", n_ell);
  if (eq.out_len >= 0)
    {
      if (eq.out_len + (eq.out_ellipsis_at >= 0 ? n_ell : 0) > FB_MAX_RANK)
        {
          _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                           "the result would have more than %d axes", FB_MAX_RANK);
          goto done;
        }
      for (int i = 0; i <= eq.out_len; i++)
        {
          if (i == eq.out_ellipsis_at)
            for (int e = 0; e < n_ell; e++)
              out_labels[out_len++] = (char) ('0' + e);
          if (i < eq.out_len)
            out_labels[out_len++] = eq.out_labels[i];
        }
    }
  else
    {
      for (int e = 0; e < n_ell; e++)
        out_labels[out_len++] = (char) ('0' + e);
      /* Every occurrence counts: a label repeated within one term is not "used once". */
      for (char c = 'A'; c <= 'z'; c++)
        {
          int uses = 0;
          if (!g_ascii_isalpha (c))
            continue;
          for (guint t = 0; t < eq.n_terms; t++)
            for (int i = 0; i < eq.term_len[t]; i++)
              uses += eq.term_labels[t][i] == c;
          if (uses == 1 && out_len < FB_MAX_RANK)
            out_labels[out_len++] = c;
        }
    }

  /* Axes that appear in one operand only and not in the output are summed out first. */
  for (guint t = 0; t < eq.n_terms; t++)
    {
      gboolean keep[FB_MAX_RANK];
      for (int i = 0; i < terms[t].rank; i++)
        {
          char c = terms[t].labels[i];
          keep[i] = memchr (out_labels, c, out_len) != NULL ||
                    (eq.n_terms == 2 && label_index (&terms[1 - t], c) >= 0);
        }
      sum_out (&terms[t], keep);
    }

  {
    /* Classify: batch (both and output), contracted (both, not output), free (one and output).
     * A is permuted to [batch, freeA, contracted], B to [batch, contracted, freeB]; both are then
     * viewed as matrices over broadcast batch axes. */
    char batch[FB_MAX_RANK], con[FB_MAX_RANK], fa[FB_MAX_RANK], fb[FB_MAX_RANK], order[FB_MAX_RANK];
    int nb = 0, nc = 0, na = 0, nf = 0;
    Term *A = &terms[0], *B = eq.n_terms == 2 ? &terms[1] : NULL;
    Mat ma = { 0 }, mb = { 0 }, mc = { 0 };
    int64_t fdims[FB_MAX_RANK], odims[FB_MAX_RANK];
    char flabels[FB_MAX_RANK];
    int nfin = 0;
    FbTensor *y;

    for (int i = 0; i < out_len; i++)
      {
        char c = out_labels[i];
        gboolean in_a = label_index (A, c) >= 0, in_b = B && label_index (B, c) >= 0;
        if (in_a && in_b) batch[nb++] = c;
        else if (in_a) fa[na++] = c;
        else fb[nf++] = c;
      }
    for (int i = 0; B && i < A->rank; i++)
      if (memchr (out_labels, A->labels[i], out_len) == NULL)
        con[nc++] = A->labels[i];

    memcpy (order, batch, nb);
    memcpy (order + nb, fa, na);
    memcpy (order + nb + na, con, nc);
    permute_term (A, order);
    ma.rank = nb + 2;
    memcpy (ma.dims, A->dims, sizeof (int64_t) * nb);
    ma.dims[nb] = _fb_interp_prod (A->dims, nb, nb + na);
    ma.dims[nb + 1] = _fb_interp_prod (A->dims, nb + na, A->rank);
    ma.data = A->v;
    if (B != NULL)
      {
        memcpy (order, batch, nb);
        memcpy (order + nb, con, nc);
        memcpy (order + nb + nc, fb, nf);
        permute_term (B, order);
        for (int i = 0; i < nc; i++)
          if (A->dims[nb + na + i] != B->dims[nb + i])
            {
              _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                               "label '%c' has extents %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT,
                               con[i], A->dims[nb + na + i], B->dims[nb + i]);
              goto done;
            }
        mb.rank = nb + 2;
        memcpy (mb.dims, B->dims, sizeof (int64_t) * nb);
        mb.dims[nb] = _fb_interp_prod (B->dims, nb, nb + nc);
        mb.dims[nb + 1] = _fb_interp_prod (B->dims, nb + nc, B->rank);
        mb.data = B->v;
      }
    else
      {
        /* One operand: multiply by a 1x1 identity to reuse the same path. */
        static double one = 1.0;
        mb.rank = nb + 2;
        for (int i = 0; i < nb; i++)
          mb.dims[i] = 1;
        mb.dims[nb] = ma.dims[nb + 1];
        mb.dims[nb + 1] = 1;
        if (mb.dims[nb] != 1)
          {
            _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "internal contraction error");
            goto done;
          }
        mb.data = &one;
      }
    if (!batched_matmul (node, TRUE, &ma, &mb, &mc, error))
      goto done;

    /* The result's axes are [batch, freeA, freeB]; put them in the output's order. */
    for (int i = 0; i < nb; i++)
      {
        flabels[nfin] = batch[i];
        fdims[nfin++] = mc.dims[i];
      }
    for (int i = 0; i < na; i++)
      {
        flabels[nfin] = fa[i];
        fdims[nfin++] = A->dims[nb + i];
      }
    for (int i = 0; i < nf; i++)
      {
        flabels[nfin] = fb[i];
        fdims[nfin++] = B->dims[nb + nc + i];
      }
    {
      Term r = { .rank = nfin, .v = mc.data };
      memcpy (r.labels, flabels, nfin);
      memcpy (r.dims, fdims, sizeof fdims);
      permute_term (&r, out_labels);
      memcpy (odims, r.dims, sizeof odims);
      mc.data = r.v;
    }
    y = _fb_interp_new (node, in[0]->dtype, out_len, odims, error);
    if (y != NULL)
      {
        _fb_interp_write_f64 (y, mc.data);
        out[0] = y;
        ok = TRUE;
      }
    g_free (mc.data);
  }

done:
  for (guint t = 0; t < 2; t++)
    g_free (terms[t].v);
  return ok;
}
