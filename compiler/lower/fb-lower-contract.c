/* SPDX-License-Identifier: GPL-3.0-or-later */
/* MatMul and Gemm: sgemm over tiles of rows, each tile followed by its epilogue (Gemm's
 * alpha, beta and bias, then any elementwise chain sunk into the product) while the tile is
 * still in cache. Convolutions are in fb-lower-conv.c. */
#include "fb-lower-private.h"

#include <string.h>

static FbKExpr *
i64 (FbKernel *k, FbKExpr *e)
{
  return fb_kx_cast (k, e, FB_DTYPE_INT64);
}

static FbKExpr *
c64 (FbKernel *k, int64_t v)
{
  return fb_kx_const_i (k, FB_DTYPE_INT64, v);
}

/* C[M,N] = op(A)[M,K] op(B)[K,N], row-major, through oneDNN's dnnl_sgemm: on this project's
 * machines its AVX-512 kernels run the small products of convolutions and transformers about
 * twice as fast as the OpenBLAS that Debian ships (whose dynamic dispatch takes AMD's AVX-512
 * cores for Haswell); README.md, "CPU math library", has the measurements. It runs on the
 * calling thread: tiles run inside the executor's OpenMP region, where oneDNN does not start
 * threads of its own, and the executor keeps the caller at one thread outside it. */
void
_fb_lower_sgemm (FbLowerCtx *c, GPtrArray *body, gboolean ta, gboolean tb, FbKExpr *m,
                 FbKExpr *n, FbKExpr *kk, guint a, FbKExpr *a_off, int64_t lda, guint b,
                 FbKExpr *b_off, int64_t ldb, guint out, FbKExpr *c_off, int64_t ldc)
{
  FbKernel *k = c->k;
  FbKExpr *args[13] = {
    fb_kx_const_i (k, FB_DTYPE_INT8, ta ? 'T' : 'N'), fb_kx_const_i (k, FB_DTYPE_INT8, tb ? 'T' : 'N'),
    i64 (k, m), i64 (k, n), i64 (k, kk),
    fb_kx_const_f (k, FB_DTYPE_FLOAT32, 1.0), fb_kx_ptr (k, a, a_off), c64 (k, lda),
    fb_kx_ptr (k, b, b_off), c64 (k, ldb), fb_kx_const_f (k, FB_DTYPE_FLOAT32, 0.0),
    fb_kx_ptr (k, out, c_off), c64 (k, ldc),
  };
  g_ptr_array_add (body, fb_ks_call (k, "dnnl_sgemm", G_N_ELEMENTS (args), args));
  k->kind = FB_KERNEL_LIBRARY;
}

/* How many rows one tile takes: enough tiles to share among threads, each big enough for the
 * library to run at speed. */
int64_t
_fb_lower_tile_rows (int64_t rows, double flops_per_row, int64_t batches)
{
  double total = flops_per_row * rows * batches;
  int64_t tiles = (int64_t) CLAMP (total / 1.0e6, 1, 16);
  if (batches >= tiles)
    return rows;
  tiles = (tiles + batches - 1) / batches;
  int64_t t = (rows + tiles - 1) / tiles;
  return MAX (t, MIN (rows, 8));
}

/* One row times a matrix stored by rows (a classifier's Gemm with transB): a dot product per
 * output, each streaming one contiguous row of the weights. Its time is reading the weights,
 * which arrive cold from memory; plain vectorized loops keep the hardware prefetcher ahead of
 * them, where sgemm's packing and blocking for reuse that a single row cannot have ran at
 * half the bandwidth (0.115 against 0.064 ms for MobileNetV2's 1280x1000 classifier). */
static void
gemv_rows (FbLowerCtx *c, GPtrArray *body, FbKExpr *n, int64_t K, guint a, FbKExpr *a_off,
           guint b, FbKExpr *b_off, guint out, FbKExpr *c_off)
{
  FbKernel *k = c->k;
  FbKExpr *j, *kk;
  GPtrArray *cols = _fb_lower_loop (k, body, n, &j);
  guint acc = fb_kernel_new_acc (k, FB_DTYPE_FLOAT32);
  g_ptr_array_add (cols, fb_ks_assign (k, acc, fb_kx_const_f (k, FB_DTYPE_FLOAT32, 0.0)));
  GPtrArray *dot = _fb_lower_loop (k, cols, fb_kx_index (k, K), &kk);
  FbKExpr *prod = fb_kx_binary (k, FB_KB_MUL, fb_kx_load (k, a, fb_kx_add (k, a_off, kk)),
                                fb_kx_load (k, b, fb_kx_add (k, fb_kx_add (k, b_off, fb_kx_mul_c (k, j, K)), kk)));
  g_ptr_array_add (dot, fb_ks_assign (k, acc, fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, acc), prod)));
  g_ptr_array_add (cols, fb_ks_store (k, out, fb_kx_add (k, c_off, j), fb_kx_acc (k, acc)));
}

typedef struct {
  gboolean ta, tb, a_vec, b_vec;
  int64_t  M, N, K;
  int      nb, ry;
  int64_t  bdims[FB_MAX_RANK], a_bs[FB_MAX_RANK], b_bs[FB_MAX_RANK], dy[FB_MAX_RANK];
} FbGemmShape;

/* One batch stride for a run of batch dimensions, or FALSE when they do not flatten. */
static gboolean
flat_stride (const int64_t *extent, const int64_t *stride, int n, int64_t *flat)
{
  *flat = n > 0 ? stride[n - 1] : 0;
  for (int d = n - 2; d >= 0; d--)
    if (stride[d] != stride[d + 1] * extent[d + 1])
      return FALSE;
  return TRUE;
}

/* The bias of a chain from the product y to end that is Add (y, bias) along the rows, or that
 * then a Relu (*relu set), with bias a float constant of n elements; NULL for any other chain. */
static const FbValue *
row_bias_chain (const FbValue *y, const FbValue *end, int64_t n, int64_t *relu)
{
  const FbNode *add = end->producer;
  *relu = 0;
  if (add && add->op == FB_OP_RELU && add->n_inputs == 1 && add->inputs[0]->producer)
    {
      *relu = 1;
      add = add->inputs[0]->producer;
    }
  if (add == NULL || add->op != FB_OP_ADD || add->n_inputs != 2 ||
      !fb_shape_equal (&add->outputs[0]->shape, &y->shape) || add->outputs[0]->dtype != y->dtype)
    return (*relu = 0, NULL);
  const FbValue *bias = add->inputs[0] == y ? add->inputs[1] : add->inputs[1] == y ? add->inputs[0] : NULL;
  if (bias == NULL || bias->constant == NULL || bias->dtype != FB_DTYPE_FLOAT32 ||
      _fb_lower_numel (bias) != n || bias->shape.rank < 1 || bias->shape.dim[bias->shape.rank - 1] != n)
    return (*relu = 0, NULL);
  return bias;
}

/* Largest constant addend made whole for cuBLASLt's C operand, in elements (16 MiB). */
#define WHOLE_ADDEND_MAX ((int64_t) 4 << 20)

/* Whether r is a float constant that broadcasts to end's shape, is not a bias along the rows
 * (cuBLASLt's BIAS epilogue reads those as they are) and is worth making whole: attention's
 * position biases ([heads, tokens, tokens] over every window), which a pass after the product
 * would otherwise add, reading and writing the scores once more. */
static gboolean
whole_addend (const FbValue *r, const FbValue *end, int64_t n)
{
  if (r->constant == NULL || r->dtype != FB_DTYPE_FLOAT32 || r->shape.rank > end->shape.rank ||
      _fb_lower_numel (end) > WHOLE_ADDEND_MAX ||
      (_fb_lower_numel (r) == n && r->shape.rank >= 1 && r->shape.dim[r->shape.rank - 1] == n))
    return FALSE;
  for (int d = 0; d < r->shape.rank; d++)
    {
      int64_t rd = r->shape.dim[r->shape.rank - 1 - d], ed = end->shape.dim[end->shape.rank - 1 - d];
      if (rd != 1 && rd != ed)
        return FALSE;
    }
  return TRUE;
}

/* The addend of a chain from the product y to end that is Add (inner, r), where inner is y or
 * (bias_of set) a bias Add along the rows of y (*bias_of its bias), and r is a float tensor of
 * end's shape, which is y's: a residual connection after a linear layer, or a constant that
 * broadcasts to it (whole_addend; *whole set, and the caller makes it whole). cuBLASLt reads r
 * as its C operand (beta 1), so the sum is the product's own output and not a pass after it.
 * NULL for any other chain, and under FUSEBENCH_PRODUCT_RESIDUAL=0 (a pass after the product,
 * to compare). */
static const FbValue *
residual_chain (const FbValue *y, const FbValue *end, int64_t n, const FbValue **bias_of,
                gboolean *whole)
{
  *whole = FALSE;
  const FbNode *add = end->producer;
  if (g_strcmp0 (g_getenv ("FUSEBENCH_PRODUCT_RESIDUAL"), "0") == 0 || add == NULL ||
      add->op != FB_OP_ADD || add->n_inputs != 2 || !fb_shape_equal (&end->shape, &y->shape) ||
      end->dtype != FB_DTYPE_FLOAT32)
    return NULL;
  for (int i = 0; i < 2; i++)
    {
      const FbValue *inner = add->inputs[i], *r = add->inputs[1 - i];
      if (r == NULL || inner == NULL || r == inner || r == y || r->dtype != FB_DTYPE_FLOAT32)
        continue;
      *whole = !fb_shape_equal (&r->shape, &end->shape);
      if (*whole && !whole_addend (r, end, n))
        continue;
      if (inner == y)
        return r;
      int64_t relu = 0;
      const FbValue *bias = bias_of ? row_bias_chain (y, inner, n, &relu) : NULL;
      if (bias && !relu)
        {
          *bias_of = bias;
          return r;
        }
    }
  *whole = FALSE;
  return NULL;
}

/* The GPU's product: one cuBLASLt call over every batch (a library phase), Gemm's alpha, a
 * bias along the rows and a residual addend inside it, anything else (beta, a bias of another
 * shape, the rest of the sunk elementwise chain) one generated phase over the output after it. */
static gboolean
lower_matmul_gpu (FbLowerCtx *c, const FbNode *node, const FbGemmShape *gs, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *va = node->inputs[0], *vb = node->inputs[1], *vy = node->outputs[0];
  if (va->dtype != FB_DTYPE_FLOAT32 || vb->dtype != FB_DTYPE_FLOAT32 || vy->dtype != FB_DTYPE_FLOAT32)
    return _fb_lower_matmul_loops (c, node, error);
  /* Batch dimensions of extent 1 take no part. */
  int64_t ext[FB_MAX_RANK], sa[FB_MAX_RANK], sb[FB_MAX_RANK], sc[FB_MAX_RANK];
  int n = 0;
  int64_t cstride = gs->M * gs->N;
  for (int d = gs->nb - 1; d >= 0; d--)
    {
      if (gs->bdims[d] > 1)
        {
          ext[n] = gs->bdims[d];
          sa[n] = gs->a_bs[d];
          sb[n] = gs->b_bs[d];
          sc[n++] = cstride;
        }
      cstride *= gs->bdims[d];
    }
  /* Innermost first above; outermost first below. */
  for (int i = 0; i < n / 2; i++)
    {
      int j = n - 1 - i;
      int64_t t;
      t = ext[i]; ext[i] = ext[j]; ext[j] = t;
      t = sa[i]; sa[i] = sa[j]; sa[j] = t;
      t = sb[i]; sb[i] = sb[j]; sb[j] = t;
      t = sc[i]; sc[i] = sc[j]; sc[j] = t;
    }
  /* The longest run of inner batch dimensions that is one strided batch for all three
   * operands; the outer ones (a broadcast between A and B) become one product each. */
  int split = n;
  int64_t fa = 0, fb = 0, fc = 0, batch = 1, products = 1;
  for (int s0 = 0; s0 <= n; s0++)
    if (flat_stride (ext + s0, sa + s0, n - s0, &fa) && flat_stride (ext + s0, sb + s0, n - s0, &fb) &&
        flat_stride (ext + s0, sc + s0, n - s0, &fc))
      {
        split = s0;
        break;
      }
  for (int d = 0; d < n; d++)
    {
      if (d < split)
        products *= ext[d];
      else
        batch *= ext[d];
    }
  if (products > 256)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "%" G_GINT64_FORMAT " separate products: too many for the GPU lowering",
                           products);
  FbKConv cv = { .lib = FB_KLIB_GEMM, .bias = FB_KCONV_NO_ARG, .add = FB_KCONV_NO_ARG };
  FbKGemm *g = &cv.gemm;
  g->ta = gs->ta;
  g->tb = gs->tb;
  g->m = gs->M;
  g->n = gs->N;
  g->k = gs->K;
  g->lda = gs->ta ? gs->M : gs->K;
  g->ldb = gs->tb ? gs->K : gs->N;
  g->ldc = gs->N;
  g->batch = batch;
  g->stride_a = fa;
  g->stride_b = fb;
  g->stride_c = fc;
  /* Rows of every batch against one B: one taller product. */
  if (products == 1 && batch > 1 && fb == 0 && !gs->ta && fa == gs->M * gs->K && fc == gs->M * gs->N)
    {
      g->m *= batch;
      g->batch = 1;
      g->stride_a = g->stride_c = 0;
    }
  gboolean is_gemm = node->op == FB_OP_GEMM;
  double alpha = is_gemm ? fb_node_attr_float (node, "alpha", 1.0f) : 1.0;
  double beta = is_gemm ? fb_node_attr_float (node, "beta", 1.0f) : 1.0;
  const FbValue *bias = is_gemm ? fb_node_input (node, 2) : NULL;
  if (bias && beta == 0.0)
    bias = NULL;
  g->alpha = alpha;
  /* Large products with constant weights: float32 on TF32 tensor cores (fb-lower-product-split.c). */
  if (_fb_lower_product_split_wanted (vb, g, products))
    {
      if (!_fb_lower_product_split (c, &cv, va, vb, error))
        return FALSE;
    }
  else
    {
      cv.x = _fb_lower_arg (c, va, FB_KARG_INPUT);
      cv.w = _fb_lower_arg (c, vb, FB_KARG_INPUT);
    }
  cv.y = _fb_lower_out_arg (c, vy);
  gboolean library_bias = bias && beta == 1.0 && bias->dtype == FB_DTYPE_FLOAT32 &&
                          _fb_lower_numel (bias) == gs->N &&
                          bias->shape.rank >= 1 && bias->shape.dim[bias->shape.rank - 1] == gs->N;
  if (library_bias)
    cv.bias = _fb_lower_arg (c, bias, FB_KARG_INPUT);
  /* A MatMul whose sunk chain is only a bias Add along the rows (a linear layer), maybe then a
   * Relu, or a residual Add after the bias or the product: cuBLASLt's epilogue adds the bias,
   * its C operand the residual, and the product writes the chain's end itself. */
  const FbValue *end = g_hash_table_lookup (c->sunk, vy), *chain_bias = NULL, *residual = NULL;
  gboolean whole = FALSE;
  if (end && (!is_gemm || bias == NULL || library_bias) &&
      (residual = residual_chain (vy, end, gs->N, is_gemm ? NULL : &chain_bias, &whole)) != NULL)
    {
      if (chain_bias)
        cv.bias = _fb_lower_arg (c, chain_bias, FB_KARG_INPUT);
      if (whole)
        {
          g_autoptr(FbTensor) addend = fb_tensor_broadcast (residual->constant, FB_DTYPE_FLOAT32,
                                                             end->shape.rank, end->shape.dim,
                                                             error);
          if (addend == NULL)
            return FALSE;
          g_autofree char *name = g_strdup_printf ("%s.whole", residual->name);
          cv.add = _fb_lower_const_arg (c, addend, name);
        }
      else
        cv.add = _fb_lower_arg (c, residual, FB_KARG_INPUT);
      cv.y = _fb_lower_out_arg (c, end);
    }
  else if (!is_gemm && end && (chain_bias = row_bias_chain (vy, end, gs->N, &g->relu)))
    {
      cv.bias = _fb_lower_arg (c, chain_bias, FB_KARG_INPUT);
      cv.y = _fb_lower_out_arg (c, end);
    }
  for (int64_t p = 0; p < products; p++)
    {
      int64_t rest = p;
      g->off_a = g->off_b = g->off_c = 0;
      for (int d = split - 1; d >= 0; d--)
        {
          int64_t i = rest % ext[d];
          rest /= ext[d];
          g->off_a += i * sa[d];
          g->off_b += i * sb[d];
          g->off_c += i * sc[d];
        }
      fb_kernel_add_conv_phase (k, &cv, 2.0 * gs->M * gs->N * gs->K * batch);
    }
  k->kind = FB_KERNEL_LIBRARY;
  if (chain_bias || residual || ((bias == NULL || library_bias) && end == NULL))
    return TRUE;

  /* The rest, elementwise over the product where it lies. */
  FbKExpr *coords[FB_MAX_RANK];
  int64_t one = 1;
  const int64_t *dims = gs->ry > 0 ? gs->dy : &one;
  int rank = MAX (gs->ry, 1);
  GPtrArray *body = _fb_lower_nest (c, rank, dims, coords, (double) _fb_lower_numel (vy));
  FbKExpr *x = fb_kx_load (k, cv.y, _fb_lower_index (k, rank, dims, coords));
  if (bias && !library_bias)
    {
      FbKExpr *bv = _fb_lower_value_at (c, bias, gs->ry, coords, error);
      if (bv == NULL)
        return FALSE;
      bv = fb_kx_cast (k, bv, FB_DTYPE_FLOAT32);
      if (beta != 1.0)
        bv = fb_kx_binary (k, FB_KB_MUL, fb_kx_const_f (k, FB_DTYPE_FLOAT32, beta), bv);
      x = fb_kx_binary (k, FB_KB_ADD, x, bv);
    }
  return _fb_lower_store (c, body, vy, coords, x, error);
}

/* Columns a tile of columns takes at least: sgemm's AVX-512 kernels work in panels of 48 or
 * 64 columns, and 16 tiles of 24 columns (384 / 16) ran at 181 GFLOP/s against 255 whole. */
#define MIN_TILE_COLS 64

/* Bytes of weights a tile of a product of few rows streams: such a product (a classifier) does
 * two flops a weight for each of its rows, so its time is reading them, and it is tiled by them
 * as well as by its flops (_fb_lower_tile_rows), which alone made one tile of RegNetY-800MF's
 * 784 x 1000 classifier: 1.6 MFLOP that stream 3.1 MB at one core's bandwidth. On the GPU host's
 * 16-core Xeon, with tiles of 128 KB, the median of eight alternating rounds went 2.10 -> 1.86
 * ms for MobileNetV3-Large at 8 cores and 5.96 -> 5.70 for RegNetY-800MF at 4; tiles of 256 KB
 * gained less at 8 cores, of 64 KB no more at 4. */
#define FEW_ROWS 16
#define FEW_ROWS_TILE_BYTES (128 << 10)

/* Columns a tile of a product of few rows (K deep, N wide) takes, at most. */
static int64_t
few_rows_tile_cols (int64_t K, int64_t N)
{
  int64_t tiles = (int64_t) CLAMP (4.0 * K * N / FEW_ROWS_TILE_BYTES, 1, 16);
  return MAX ((N + tiles - 1) / tiles, MIN (N, MIN_TILE_COLS));
}

/* Whether an M x N product (tm rows or tn columns a tile) is split by columns. Every tile's
 * sgemm packs the whole of the operand it shares with the others: B for tiles of rows, A for
 * tiles of columns. Inside a network B is the weights, read cold: ConvNeXt's last stage (49 x
 * 768 by 768 x 3072, 9.4 MB of weights) ran as 7 sgemms of 7 rows, each reading every weight,
 * at 150 GFLOP/s on one Zen 4 core (1.61 ms) against 250 in the stages before; as one product
 * in 16 tiles of columns, in 1.33 ms. In tiles of rows it would be 7 tiles of 8 rows, each
 * packing all the weights again. So a product of fewer rows than columns is split by columns
 * where that gives as many tiles; and always where it has under 16 rows (a classifier's
 * GEMV). */
static gboolean
contract_by_cols (int64_t M, int64_t N, int64_t tm, int64_t tn)
{
  if (N < MIN_TILE_COLS)
    return FALSE;
  if (M < FEW_ROWS)
    return TRUE;
  return M < N && (N + tn - 1) / tn >= (M + tm - 1) / tm;
}

/* A product that would take under PRODUCT_SPLIT_US on one core is one tile on the calling
 * thread: its time modeled at sgemm's rates on one core (about 150 GFLOP/s, and 20 GB/s for the
 * bytes it streams), whichever bounds it. On the 2-core Zen 4, two threads: GPT-2's products of
 * 64 rows (1.6-2.2 MFLOP, 9-14 us on one core) took as long split in two tiles as whole, each
 * half 9-11 us with its operands written by the other core, and the model ran in 0.72 ms
 * against 0.57 with them on one thread. Swin-T's window products of 3.7 MFLOP took 32 us on
 * one thread and 19 split; a mel front end's convolution, a 257 x 512 by 512 x 5 product that
 * streams 0.5 MB of weights, 22 and 20 (which the byte term keeps splitting). */
#define PRODUCT_FLOPS_PER_US 150e3
#define PRODUCT_BYTES_PER_US 20e3
#define PRODUCT_SPLIT_US 20.0

static gboolean
product_stays_serial (double flops, double bytes)
{
  return MAX (flops / PRODUCT_FLOPS_PER_US, bytes / PRODUCT_BYTES_PER_US) < PRODUCT_SPLIT_US;
}

static gboolean
lower_matmul (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *va = node->inputs[0], *vb = node->inputs[1], *vy = node->outputs[0];
  int ra, rb, ry;
  int64_t da[FB_MAX_RANK], db[FB_MAX_RANK], dy[FB_MAX_RANK];
  gboolean is_gemm = node->op == FB_OP_GEMM;
  gboolean ta = is_gemm && fb_node_attr_int (node, "transA", 0);
  gboolean tb = is_gemm && fb_node_attr_int (node, "transB", 0);

  if (!_fb_lower_dims (va, &ra, da) || !_fb_lower_dims (vb, &rb, db) ||
      !_fb_lower_dims (vy, &ry, dy))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shapes are not static");
  gboolean a_vec = ra == 1, b_vec = rb == 1;
  if (a_vec)
    {
      da[1] = da[0];
      da[0] = 1;
      ra = 2;
    }
  if (b_vec)
    {
      db[1] = 1;
      rb = 2;
    }
  int64_t M = ta ? da[ra - 1] : da[ra - 2], K = ta ? da[ra - 2] : da[ra - 1];
  int64_t N = tb ? db[rb - 2] : db[rb - 1];
  /* Batch dimensions of the product, broadcast between A and B. */
  int nb = MAX (ra, rb) - 2;
  int64_t bdims[FB_MAX_RANK], a_bs[FB_MAX_RANK], b_bs[FB_MAX_RANK], c_bs[FB_MAX_RANK];
  int64_t sa = M * K, sb = K * N, sc = M * N;
  for (int d = nb - 1; d >= 0; d--)
    {
      int ia = d - (nb - (ra - 2)), ib = d - (nb - (rb - 2));
      int64_t ea = ia >= 0 ? da[ia] : 1, eb = ib >= 0 ? db[ib] : 1;
      bdims[d] = MAX (ea, eb);
      a_bs[d] = ea == 1 ? 0 : sa;
      b_bs[d] = eb == 1 ? 0 : sb;
      c_bs[d] = sc;
      sa *= ea;
      sb *= eb;
      sc *= bdims[d];
    }
  int64_t batches = 1;
  for (int d = 0; d < nb; d++)
    batches *= bdims[d];
  if (_fb_lower_for_gpu (c))
    {
      FbGemmShape gs = { .ta = ta, .tb = tb, .a_vec = a_vec, .b_vec = b_vec, .M = M, .N = N,
                         .K = K, .nb = nb, .ry = ry };
      memcpy (gs.bdims, bdims, sizeof bdims);
      memcpy (gs.a_bs, a_bs, sizeof a_bs);
      memcpy (gs.b_bs, b_bs, sizeof b_bs);
      memcpy (gs.dy, dy, sizeof dy);
      return lower_matmul_gpu (c, node, &gs, error);
    }
  /* Where B is one matrix for every batch (a linear layer's weights applied to [1, H, W, C] or
   * [B, T, C]) and A is not transposed, the batches' rows are one taller product: A and the
   * output are dense, so batch after batch their rows follow on. As separate products of one
   * batch each, ConvNeXt's 14x14 stage ran 14 sgemms of 14 rows, each packing all 2.4 MB of
   * its weights. */
  gboolean shared_b = !ta && nb > 0;
  for (int d = 0; d < nb; d++)
    shared_b &= b_bs[d] == 0;
  int lnb = shared_b ? 0 : nb;
  int64_t rows = shared_b ? M * batches : M, lbatches = shared_b ? 1 : batches;

  /* By constant weights: a oneDNN 1x1 convolution where that is faster (fb-lower-product-conv.c). */
  if (!ta && !a_vec && !b_vec && lbatches == 1)
    {
      gboolean taken;
      if (!_fb_lower_product_conv (c, node, rows, N, K, tb, &taken, error))
        return FALSE;
      if (taken)
        return TRUE;
    }

  /* Tiles of rows or of columns (contract_by_cols); one where the product stays serial. */
  double flops = 2.0 * M * N * K * batches;
  gboolean serial = product_stays_serial (flops, 4.0 * (sa + sb + sc));
  int64_t tm = serial ? rows : _fb_lower_tile_rows (rows, 2.0 * N * K, lbatches);
  int64_t tn = serial ? N : MAX (_fb_lower_tile_rows (N, 2.0 * rows * K, lbatches),
                                 MIN (N, MIN_TILE_COLS));
  if (!serial && rows < FEW_ROWS && lbatches == 1)
    tn = MIN (tn, few_rows_tile_cols (K, N));
  gboolean by_cols = contract_by_cols (rows, N, tm, tn);
  if (by_cols)
    tm = rows;
  else
    tn = N;
  int64_t ntiles = by_cols ? (N + tn - 1) / tn : (rows + tm - 1) / tm;

  /* Loops: batch dims, then tiles; the first that is not of extent 1 runs in parallel. */
  int64_t ldims[FB_MAX_RANK + 1];
  FbKExpr *lc[FB_MAX_RANK + 1];
  memcpy (ldims, bdims, sizeof (int64_t) * lnb);
  ldims[lnb] = ntiles;
  GPtrArray *body = _fb_lower_nest (c, lnb + 1, ldims, lc, flops);
  ((FbKPhase *) g_ptr_array_index (k->phases, k->phases->len - 1))->serial = serial;

  guint aa = _fb_lower_arg (c, va, FB_KARG_INPUT), ba = _fb_lower_arg (c, vb, FB_KARG_INPUT);
  guint ca = _fb_lower_out_arg (c, vy);
  FbKExpr *t0 = fb_kx_mul_c (k, lc[lnb], by_cols ? tn : tm);
  FbKExpr *extent = fb_kx_index (k, by_cols ? N : rows);
  FbKExpr *tlen = ntiles == 1 ? extent
                : fb_kx_binary (k, FB_KB_MIN, fb_kx_index (k, by_cols ? tn : tm),
                                fb_kx_binary (k, FB_KB_SUB, extent, t0));
  FbKExpr *m0 = by_cols ? fb_kx_index (k, 0) : t0, *n0 = by_cols ? t0 : fb_kx_index (k, 0);
  FbKExpr *mlen = by_cols ? fb_kx_index (k, rows) : tlen;
  FbKExpr *nlen = by_cols ? tlen : fb_kx_index (k, N);
  FbKExpr *a_off = fb_kx_index (k, 0), *b_off = fb_kx_index (k, 0), *c_off = fb_kx_index (k, 0);
  for (int d = 0; d < lnb; d++)
    {
      a_off = fb_kx_add (k, a_off, fb_kx_mul_c (k, lc[d], a_bs[d]));
      b_off = fb_kx_add (k, b_off, fb_kx_mul_c (k, lc[d], b_bs[d]));
      c_off = fb_kx_add (k, c_off, fb_kx_mul_c (k, lc[d], c_bs[d]));
    }
  /* With transA the tile's rows are columns of A; with transB its columns are rows of B. */
  FbKExpr *a_tile = fb_kx_add (k, a_off, ta ? m0 : fb_kx_mul_c (k, m0, K));
  FbKExpr *b_tile = fb_kx_add (k, b_off, tb ? fb_kx_mul_c (k, n0, K) : n0);
  FbKExpr *c_tile = fb_kx_add (k, c_off, fb_kx_add (k, fb_kx_mul_c (k, m0, N), n0));
  if (rows == 1 && tb)
    gemv_rows (c, body, nlen, K, aa, a_tile, ba, b_tile, ca, c_tile);
  else
    _fb_lower_sgemm (c, body, ta, tb, mlen, nlen, fb_kx_index (k, K),
                     aa, a_tile, ta ? M : K, ba, b_tile, tb ? K : N, ca, c_tile, N);

  double alpha = is_gemm ? fb_node_attr_float (node, "alpha", 1.0f) : 1.0;
  double beta = is_gemm ? fb_node_attr_float (node, "beta", 1.0f) : 1.0;
  const FbValue *bias = is_gemm ? fb_node_input (node, 2) : NULL;
  if (alpha == 1.0 && (bias == NULL || beta == 0.0) && !g_hash_table_contains (c->sunk, vy))
    return TRUE;

  /* Epilogue over the tile: rows, then columns. */
  FbKExpr *mi, *ni;
  GPtrArray *tile_rows = _fb_lower_loop (k, body, mlen, &mi);
  GPtrArray *cols = _fb_lower_loop (k, tile_rows, nlen, &ni);
  FbKExpr *coords[FB_MAX_RANK + 2];
  int nc = 0;
  FbKExpr *row = fb_kx_add (k, m0, mi);
  /* In one taller product, the batch coordinates come from the row. */
  int64_t inner = M;
  for (int d = nb - 1; d >= lnb; d--)
    {
      FbKExpr *batch = fb_kx_binary (k, FB_KB_DIV, row, fb_kx_index (k, inner));
      coords[d] = fb_kx_binary (k, FB_KB_MOD, batch, fb_kx_index (k, bdims[d]));
      inner *= bdims[d];
    }
  for (int d = 0; d < lnb; d++)
    coords[d] = lc[d];
  nc = nb;
  if (lnb < nb)
    row = fb_kx_binary (k, FB_KB_MOD, row, fb_kx_index (k, M));
  if (!a_vec)
    coords[nc++] = row;
  if (!b_vec)
    coords[nc++] = fb_kx_add (k, n0, ni);
  if (nc != ry)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "unexpected output rank");
  /* In one taller product, the same index as the store's, so that the vectorizer sees each
   * element read and written in place (as the tile's offset it could not tell the two apart). */
  FbKExpr *at = lnb < nb ? _fb_lower_index (k, ry, dy, coords)
              : fb_kx_add (k, c_tile, fb_kx_add (k, fb_kx_mul_c (k, mi, N), ni));
  FbKExpr *raw = fb_kx_load (k, ca, at);
  FbKExpr *x = raw;
  if (alpha != 1.0)
    x = fb_kx_binary (k, FB_KB_MUL, fb_kx_const_f (k, FB_DTYPE_FLOAT32, alpha), x);
  if (bias && beta != 0.0)
    {
      FbKExpr *bv = _fb_lower_value_at (c, bias, ry, coords, error);
      if (bv == NULL)
        return FALSE;
      bv = fb_kx_cast (k, bv, FB_DTYPE_FLOAT32);
      if (beta != 1.0)
        bv = fb_kx_binary (k, FB_KB_MUL, fb_kx_const_f (k, FB_DTYPE_FLOAT32, beta), bv);
      x = fb_kx_binary (k, FB_KB_ADD, x, bv);
    }
  return _fb_lower_store (c, cols, vy, coords, x, error);
}

gboolean
_fb_lower_contraction (FbLowerCtx *c, const FbNode *node, GError **error)
{
  switch (node->op)
    {
    case FB_OP_MATMUL:
    case FB_OP_GEMM:
      return lower_matmul (c, node, error);
    case FB_OP_CONV:
      return _fb_lower_conv (c, node, error);
    default:
      return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                             "no CPU lowering for this contraction");
    }
}
