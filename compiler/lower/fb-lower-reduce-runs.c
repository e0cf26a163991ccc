/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A channels-last reduction big enough to share between a CPU's threads: a global pool over a
 * large map, a ReduceMean over a long sequence. The column form (fb-lower-reduce.c) gives each
 * block of 64 channels one iteration, so a pool of 64 channels or fewer (EfficientNet-B0's
 * first squeeze-excitation pools, [112, 112, 32] and [56, 56, 96]) runs on one thread at
 * that thread's bandwidth, while ONNX Runtime splits it: on a 2-core Zen 4 its 16 pools took
 * 372 us against ONNX Runtime's 186. Splitting the channels instead was slower there (two
 * threads reading alternate lines of every row; see COLUMN_BLOCK).
 *
 * Here the first reduced dimension (the map's rows) is cut into runs: phase 1 gives every
 * (outer, run, channel block) an iteration that sums its rows into a scratch row of partial
 * results, each thread reading its own contiguous part of the input; phase 2 combines the
 * runs (a few rows) and stores. Taken from MIN_BYTES of input, where one thread's reading
 * outweighs the second phase; FUSEBENCH_REDUCE_RUNS=always or never overrides the size, for
 * measuring and testing. */
#include "fb-lower-private.h"

#define MIN_BYTES ((int64_t) 1 << 20)
#define MAX_RUNS  16

gboolean
_fb_lower_column_reduce_runs_fits (const FbNode *node, int rank, const int64_t *dims, guint mask,
                                   int64_t count)
{
  int first = _fb_lower_column_first (rank, mask);
  if (!_fb_lower_column_reducible (node, rank, dims, mask, count) || first < 0 || dims[first] < 4)
    return FALSE;
  const char *force = g_getenv ("FUSEBENCH_REDUCE_RUNS");
  if (g_strcmp0 (force, "never") == 0)
    return FALSE;
  int64_t numel = 1;
  for (int d = 0; d < rank; d++)
    numel *= dims[d];
  return g_strcmp0 (force, "always") == 0 ||
         numel * (int64_t) fb_dtype_size (node->inputs[0]->dtype) >= MIN_BYTES;
}

gboolean
_fb_lower_column_reduce_runs (FbLowerCtx *c, const FbNode *node, int rank, const int64_t *dims,
                              guint mask, int64_t count, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0];
  FbDType at = x->dtype;
  int last = rank - 1, first = _fb_lower_column_first (rank, mask);
  int64_t C = dims[last], nb = (C + FB_LOWER_COLUMN_BLOCK - 1) / FB_LOWER_COLUMN_BLOCK;
  int64_t H = dims[first], L = (H + MAX_RUNS - 1) / MAX_RUNS, S = (H + L - 1) / L, outer = 1;
  for (int d = 0; d < first; d++)
    outer *= dims[d];
  double init;
  _fb_lower_column_op (node, &init);

  /* Phase 1: partial[o, s, c] = run s (rows s L .. s L + L - 1 of the first reduced
   * dimension, all of the others) of column (o, c), a block of channels an iteration. */
  int64_t pdims[3] = { outer, S, C }, nest[3] = { outer, S, nb };
  guint partial = _fb_lower_scratch (c, "runs", at, 3, pdims);
  FbKExpr *pc[3];
  GPtrArray *body = _fb_lower_nest (c, 3, nest, pc, (double) outer * count * C);
  FbKExpr *c0 = fb_kx_mul_c (k, pc[2], FB_LOWER_COLUMN_BLOCK);
  FbKExpr *len = fb_kx_binary (k, FB_KB_MIN, fb_kx_index (k, FB_LOWER_COLUMN_BLOCK),
                               fb_kx_binary (k, FB_KB_SUB, fb_kx_index (k, C), c0));
  FbKExpr *base = fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, pc[0], S), pc[1]), C), c0);
  FbKExpr *ci;
  GPtrArray *l = _fb_lower_loop (k, body, len, &ci);
  g_ptr_array_add (l, fb_ks_store (k, partial, fb_kx_add (k, base, ci), fb_kx_const_f (k, at, init)));

  FbKExpr *xc[FB_MAX_RANK], *row;
  _fb_lower_unflatten (k, pc[0], dims, first, xc);
  FbKExpr *rows = H % L == 0 ? fb_kx_index (k, L)
                             : fb_kx_binary (k, FB_KB_MIN, fb_kx_index (k, L),
                                             fb_kx_binary (k, FB_KB_SUB, fb_kx_index (k, H),
                                                           fb_kx_mul_c (k, pc[1], L)));
  GPtrArray *inner = _fb_lower_loop (k, body, rows, &row);
  xc[first] = fb_kx_add (k, fb_kx_mul_c (k, pc[1], L), row);
  for (int d = first + 1; d < last; d++)
    inner = _fb_lower_loop (k, inner, fb_kx_index (k, dims[d]), &xc[d]);
  inner = _fb_lower_loop (k, inner, len, &ci);
  xc[last] = fb_kx_add (k, c0, ci);
  if (!_fb_lower_column_accumulate (c, node, inner, rank, xc, partial, fb_kx_add (k, base, ci),
                                    error))
    return FALSE;

  /* Phase 2: y[o, c] combines the S runs. */
  return _fb_lower_column_combine_runs (c, node, rank, dims, first, count, partial, S, error);
}
