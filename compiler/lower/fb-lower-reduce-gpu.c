/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reductions over a block of dimensions just before the innermost, kept one, on a GPU: a
 * channels-last global pool (sum over H and W of every channel), a ReduceMean over a
 * sequence's positions. An accumulator per output element reads its column at a stride of the
 * row: a warp's 32 loads fall in 32 different lines, and a block per element (the cooperative
 * form) does the same. EfficientNet-B0's sixteen squeeze-excitation pools took 0.58 ms of its
 * 3.7 ms at batch 32 on an H200 so.
 *
 * Here the reduced positions are cut into runs of L: phase 1 gives every (outer, run, channel)
 * a thread that sums its run, neighbouring threads neighbouring channels (each step of the run
 * one coalesced read per warp, and enough threads to fill the GPU when the outer dimensions
 * are few); phase 2 combines the runs of every output element and stores it through the sunk
 * epilogue. Taken from 2 MiB of input: smaller (every pool of a batch-1 EfficientNet-B0 or
 * MobileNetV3, 1.6 MB at most), the strided reads hit the L2 and the second launch costs more
 * than they do (EfficientNet-B0 at batch 1 ran 0.477 ms in two phases against 0.439 in one).
 * At batch 32 one phase ran its 4 to 14 MB pools at 260 to 610 GB/s on an H200 (a 7.2 MB one
 * in 27 us), where two ran a 17 MB one in 7.8 us. FUSEBENCH_GPU_REDUCE_RUNS=always or never
 * overrides the size, for measuring and testing. */
#include "fb-lower-private.h"

#include <string.h>

#define MIN_BYTES ((int64_t) 2 << 20)

/* Positions a phase-1 thread sums: a divisor of the count between 8 and 28 where there is one
 * (no bounds check in the loop), else the count in runs of at most 16 made as even as they go
 * (a 7x7 map's 49 in four runs of 13, not three of 16 and one of 1). Under 32, so that the
 * phase is never cooperative. */
static int64_t
run_length (int64_t count)
{
  for (int64_t l = 28; l >= 8; l--)
    if (count % l == 0)
      return l;
  int64_t runs = (count + 15) / 16;
  return (count + runs - 1) / runs;
}

gboolean
_fb_lower_column_reduce_gpu_fits (const FbNode *node, int rank, const int64_t *dims, guint mask,
                                  int64_t count)
{
  if (!_fb_lower_column_reducible (node, rank, dims, mask, count) || dims[rank - 1] < 16 ||
      count < 32)
    return FALSE;
  const char *force = g_getenv ("FUSEBENCH_GPU_REDUCE_RUNS");
  if (g_strcmp0 (force, "never") == 0)
    return FALSE;
  int64_t numel = 1;
  for (int d = 0; d < rank; d++)
    numel *= dims[d];
  if (g_strcmp0 (force, "always") != 0 &&
      numel * (int64_t) fb_dtype_size (node->inputs[0]->dtype) < MIN_BYTES)
    return FALSE;
  /* The reduced dimensions: one block ending just before the last. */
  return _fb_lower_column_first (rank, mask) >= 0;
}

/* Whether x is read from its own buffer, row-major with the reduction's dims: not computed in
 * place from its producer, not a constant scalar, not seen through merged coordinates. */
static gboolean
read_in_place (const FbLowerCtx *c, const FbValue *x, int rank, const int64_t *dims)
{
  int r;
  int64_t xd[FB_MAX_RANK];
  if (x == c->subst_value || _fb_lower_is_scalar_const (x) || c->merged_rank >= 0 ||
      g_hash_table_lookup (c->inline_of, x) || !_fb_lower_dims (x, &r, xd) || r != rank)
    return FALSE;
  return memcmp (xd, dims, sizeof (int64_t) * (size_t) rank) == 0;
}

gboolean
_fb_lower_column_reduce_gpu (FbLowerCtx *c, const FbNode *node, int rank, const int64_t *dims,
                             guint mask, int64_t count, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0];
  FbDType at = x->dtype;
  int last = rank - 1, first = _fb_lower_column_first (rank, mask);
  int64_t C = dims[last], L = run_length (count), S = (count + L - 1) / L, outer = 1;
  for (int d = 0; d < first; d++)
    outer *= dims[d];

  double init;
  FbKBinary op = _fb_lower_column_op (node, &init);

  /* Phase 1: partial[o, s, c] = the run s of column (o, c). */
  int64_t pdims[3] = { outer, S, C };
  guint partial = _fb_lower_scratch (c, "runs", at, 3, pdims);
  FbKExpr *pc[3];
  GPtrArray *body = _fb_lower_nest (c, 3, pdims, pc, (double) outer * count * C);
  guint acc = fb_kernel_new_acc (k, at);
  g_ptr_array_add (body, fb_ks_assign (k, acc, fb_kx_const_f (k, at, init)));
  FbKExpr *i;
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, L), &i);
  FbKExpr *pos = fb_kx_add (k, fb_kx_mul_c (k, pc[1], L), i);
  FbKExpr *inside = NULL;
  if (count % L)
    {
      inside = fb_kx_binary (k, FB_KB_LT, pos, fb_kx_index (k, count));
      pos = fb_kx_binary (k, FB_KB_MIN, pos, fb_kx_index (k, count - 1));
    }
  FbKExpr *v;
  if (read_in_place (c, x, rank, dims))
    {
      /* Row-major, the outer dimensions, the reduced ones and the channel are one flat index:
       * o * count * C + pos * C + c. Split into each dimension's coordinate, pos took a
       * division and a remainder per reduced dimension at every step of the run (64-bit
       * ones on the GPU, since pos is a loop's), which the index then multiplied back. */
      FbKExpr *flat = fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, pc[0], count), pos), C), pc[2]);
      v = fb_kx_load (k, _fb_lower_arg (c, x, FB_KARG_INPUT), flat);
    }
  else
    {
      /* The input's coordinates: the outer ones from o, the reduced ones from pos. */
      FbKExpr *xc[FB_MAX_RANK];
      _fb_lower_unflatten (k, pc[0], dims, first, xc);
      _fb_lower_unflatten (k, pos, dims + first, last - first, xc + first);
      xc[last] = pc[2];
      v = _fb_lower_value_at (c, x, rank, xc, error);
      if (v == NULL)
        return FALSE;
    }
  v = fb_kx_cast (k, v, at);
  if (inside)
    v = fb_kx_select (k, inside, v, fb_kx_const_f (k, at, init));
  g_ptr_array_add (l, fb_ks_assign (k, acc, fb_kx_binary (k, op, fb_kx_acc (k, acc), v)));
  FbKExpr *pidx = fb_kx_add (k, fb_kx_mul_c (k, fb_kx_add (k, fb_kx_mul_c (k, pc[0], S), pc[1]), C), pc[2]);
  g_ptr_array_add (body, fb_ks_store (k, partial, pidx, fb_kx_acc (k, acc)));

  /* Phase 2: y[o, c] combines the S runs. */
  return _fb_lower_column_combine_runs (c, node, rank, dims, first, count, partial, S, error);
}
