/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Det of [..., M, M]: LU decomposition with partial pivoting, one matrix per iteration of the
 * parallel loop, in double in a scratch copy of the batch (the determinant of a float32 matrix
 * loses digits fast to cancellation). For each column: the row with the largest magnitude at
 * or below the diagonal (the first of equal ones) becomes the pivot row by a swap, which
 * negates the determinant; the determinant takes the pivot as a factor; the rows below lose
 * their multiple of the pivot row. A zero pivot makes the determinant 0, as the reference
 * interpreter says; the elimination goes on with zero multipliers, so no NaN appears, and the
 * result is chosen by a select at the end. Kernel IR has no branches: the pivot search and the
 * swap are selects and data-dependent indices, the triangular loops run over extents that
 * depend on the column. */
#include "fb-lower-private.h"

static FbKExpr *
bin (FbKernel *k, FbKBinary op, FbKExpr *a, FbKExpr *b)
{
  return fb_kx_binary (k, op, a, b);
}

/* The scratch copy of one matrix: the index of its element (row, column), and the element. */
typedef struct {
  FbKernel *k;
  guint     arg;                /* the scratch argument */
  FbKExpr  *base;               /* the matrix's first element */
  int64_t   M;
} Lu;

static FbKExpr *
at (const Lu *lu, FbKExpr *row, FbKExpr *column)
{
  FbKernel *k = lu->k;
  return fb_kx_add (k, lu->base, fb_kx_add (k, fb_kx_mul_c (k, row, lu->M), column));
}

static FbKExpr *
elem (const Lu *lu, FbKExpr *row, FbKExpr *column)
{
  return fb_kx_load (lu->k, lu->arg, at (lu, row, column));
}

gboolean
_fb_lower_det (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *y = node->outputs[0];
  int rank;
  int64_t dims[FB_MAX_RANK];
  if (!_fb_lower_dims (x, &rank, dims))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shapes are not static");
  if (!fb_dtype_is_float (x->dtype))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "needs a float input");
  if (rank < 2 || dims[rank - 1] != dims[rank - 2])
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                           "the input must be square matrices [..., M, M]");
  const FbDType f = FB_DTYPE_FLOAT64;
  int br = rank - 2;
  int64_t M = dims[rank - 1], batches = 1;
  for (int d = 0; d < br; d++)
    batches *= dims[d];
  int64_t sd[3] = { batches, M, M };
  guint a = _fb_lower_scratch (c, "lu", f, 3, sd);

  FbKExpr *xc[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_nest (c, br, dims, xc, (double) batches * M * M * (M + 3));
  Lu lu = { .k = k, .arg = a, .M = M,
            .base = fb_kx_mul_c (k, _fb_lower_index (k, br, dims, xc), M * M) };

  /* The copy. */
  FbKExpr *i, *j;
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, M), &xc[br]);
  l = _fb_lower_loop (k, l, fb_kx_index (k, M), &xc[br + 1]);
  FbKExpr *v = _fb_lower_value_at (c, x, rank, xc, error);
  if (v == NULL)
    return FALSE;
  g_ptr_array_add (l, fb_ks_store (k, a, at (&lu, xc[br], xc[br + 1]), fb_kx_cast (k, v, f)));

  guint det = fb_kernel_new_acc (k, f), singular = fb_kernel_new_acc (k, FB_DTYPE_INT64);
  guint piv = fb_kernel_new_acc (k, FB_DTYPE_INT64), best = fb_kernel_new_acc (k, f);
  guint p = fb_kernel_new_acc (k, f), tmp = fb_kernel_new_acc (k, f), m = fb_kernel_new_acc (k, f);
  g_ptr_array_add (body, fb_ks_assign (k, det, fb_kx_const_f (k, f, 1.0)));
  g_ptr_array_add (body, fb_ks_assign (k, singular, fb_kx_index (k, 0)));
  FbKExpr *col;
  GPtrArray *cl = _fb_lower_loop (k, body, fb_kx_index (k, M), &col);
  /* Rows col + 1 .. M - 1 and columns col .. M - 1, as loops from 0. */
  FbKExpr *below = bin (k, FB_KB_SUB, fb_kx_index (k, M - 1), col);
  FbKExpr *right = bin (k, FB_KB_SUB, fb_kx_index (k, M), col);

  /* The pivot: piv is updated before best, so both compare with the same best. */
  g_ptr_array_add (cl, fb_ks_assign (k, piv, col));
  g_ptr_array_add (cl, fb_ks_assign (k, best, fb_kx_unary (k, FB_KU_ABS, elem (&lu, col, col))));
  l = _fb_lower_loop (k, cl, below, &i);
  FbKExpr *row = fb_kx_add (k, fb_kx_add_c (k, col, 1), i);
  FbKExpr *mag = fb_kx_unary (k, FB_KU_ABS, elem (&lu, row, col));
  FbKExpr *larger = bin (k, FB_KB_GT, mag, fb_kx_acc (k, best));
  g_ptr_array_add (l, fb_ks_assign (k, piv, fb_kx_select (k, larger, row, fb_kx_acc (k, piv))));
  g_ptr_array_add (l, fb_ks_assign (k, best, fb_kx_select (k, larger, mag, fb_kx_acc (k, best))));

  /* The swap of rows col and piv (a no-op when they are one), from column col on: the columns
   * before it are zero in both rows by now and never read again. */
  l = _fb_lower_loop (k, cl, right, &j);
  FbKExpr *cj = fb_kx_add (k, col, j), *pr = fb_kx_acc (k, piv);
  g_ptr_array_add (l, fb_ks_assign (k, tmp, elem (&lu, col, cj)));
  g_ptr_array_add (l, fb_ks_store (k, a, at (&lu, col, cj), elem (&lu, pr, cj)));
  g_ptr_array_add (l, fb_ks_store (k, a, at (&lu, pr, cj), fb_kx_acc (k, tmp)));

  /* The determinant takes the pivot, negated after a swap. */
  g_ptr_array_add (cl, fb_ks_assign (k, p, elem (&lu, col, col)));
  FbKExpr *pv = fb_kx_acc (k, p);
  FbKExpr *swapped = bin (k, FB_KB_NE, fb_kx_acc (k, piv), col);
  FbKExpr *zero = bin (k, FB_KB_EQ, pv, fb_kx_const_f (k, f, 0.0));
  FbKExpr *factor = fb_kx_select (k, swapped, fb_kx_unary (k, FB_KU_NEG, pv), pv);
  g_ptr_array_add (cl, fb_ks_assign (k, det, bin (k, FB_KB_MUL, fb_kx_acc (k, det), factor)));
  g_ptr_array_add (cl, fb_ks_assign (k, singular, fb_kx_select (k, zero, fb_kx_index (k, 1),
                                                                fb_kx_acc (k, singular))));

  /* The elimination below the pivot. */
  l = _fb_lower_loop (k, cl, below, &i);
  row = fb_kx_add (k, fb_kx_add_c (k, col, 1), i);
  FbKExpr *ratio = bin (k, FB_KB_DIV, elem (&lu, row, col), pv);
  g_ptr_array_add (l, fb_ks_assign (k, m, fb_kx_select (k, zero, fb_kx_const_f (k, f, 0.0), ratio)));
  l = _fb_lower_loop (k, l, right, &j);
  cj = fb_kx_add (k, col, j);
  FbKExpr *update = bin (k, FB_KB_MUL, fb_kx_acc (k, m), elem (&lu, col, cj));
  g_ptr_array_add (l, fb_ks_store (k, a, at (&lu, row, cj),
                                   bin (k, FB_KB_SUB, elem (&lu, row, cj), update)));

  FbKExpr *r = fb_kx_select (k, bin (k, FB_KB_NE, fb_kx_acc (k, singular), fb_kx_index (k, 0)),
                             fb_kx_const_f (k, f, 0.0), fb_kx_acc (k, det));
  return _fb_lower_store (c, body, y, xc, r, error);
}
