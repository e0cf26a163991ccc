/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Re-indexing a kernel's accesses to a buffer that has become a run of channels of a wider
 * one: a channels-last Concat's piece written in place (fb-lower-concat.c). The kernel was
 * lowered for the packed buffer, element p * row + j for row p and channel j < row; the
 * channels now lie stride elements apart a row, at p * stride + j (the buffer's base moved to
 * its first channel).
 *
 * A generated index is affine in the loop variables (fb_kx_add and fb_kx_mul_c keep it so),
 * with clamps (min, max) and selects around coordinates. It is split into terms: those whose
 * coefficient is a multiple of row give the row p, the others the channel j, which must then
 * provably lie in [0, row) for every value of the loop variables (their extents bound them).
 * An index that does not split so (a loop over rows and channels at once, a data-dependent
 * channel) leaves the buffer packed: the caller keeps the Concat's copy. A convolution
 * library phase writing the buffer, with no Add or sum among its post-ops, takes the stride as
 * its output's on the cpu target (FbConvDesc.y_stride); cuDNN's tensors here are packed, so
 * there it writes a scratch buffer of the packed shape and a generated phase right after it
 * copies that into the rows. A cuBLASLt product reads its A operand's rows or writes its
 * result's (without an addend) through its row stride. Any other library use keeps the buffer
 * packed. */
#include "fb-lower-private.h"

typedef struct {
  FbKExpr *atom;
  int64_t  coef;
} Term;

typedef struct {
  FbPlan     *plan;
  FbKernel   *k;
  guint       arg;
  int64_t     row, stride;
  gboolean    apply;
  guint       n_vars;       /* the kernel's loop variables before any copy phase was added */
  int64_t    *extent;       /* per loop variable: its loop's extent, or -1 when not constant */
  GHashTable *done;         /* the LOAD expressions already re-indexed (shared subtrees) */
} Restride;

/* e * coef as terms and a constant; FALSE on overflow-prone coefficients. */
static gboolean
flatten (FbKExpr *e, int64_t coef, GArray *terms, int64_t *konst)
{
  if (e->kind == FB_KX_CONST && e->dtype == FB_DTYPE_INT64)
    return !__builtin_mul_overflow (coef, e->i, &coef) &&
           !__builtin_add_overflow (*konst, coef, konst);
  if (e->kind == FB_KX_BINARY && e->dtype == FB_DTYPE_INT64)
    {
      int64_t c2;
      switch (e->bop)
        {
        case FB_KB_ADD:
          return flatten (e->a, coef, terms, konst) && flatten (e->b, coef, terms, konst);
        case FB_KB_SUB:
          return flatten (e->a, coef, terms, konst) && flatten (e->b, -coef, terms, konst);
        case FB_KB_MUL:
          if (e->b->kind == FB_KX_CONST)
            return !__builtin_mul_overflow (coef, e->b->i, &c2) && flatten (e->a, c2, terms, konst);
          if (e->a->kind == FB_KX_CONST)
            return !__builtin_mul_overflow (coef, e->a->i, &c2) && flatten (e->b, c2, terms, konst);
          break;
        default:
          break;
        }
    }
  Term t = { e, coef };
  g_array_append_val (terms, t);
  return TRUE;
}

/* The values an int64 expression can take, [*lo, *hi]; FALSE where they are not bounded by
 * constants and loop extents. */
static gboolean
range_of (const Restride *r, const FbKExpr *e, int64_t *lo, int64_t *hi)
{
  int64_t alo, ahi, blo, bhi;
  switch (e->kind)
    {
    case FB_KX_CONST:
      if (e->dtype != FB_DTYPE_INT64)
        return FALSE;
      *lo = *hi = e->i;
      return TRUE;
    case FB_KX_VAR:
      if (e->var >= r->n_vars || r->extent[e->var] < 1)
        return FALSE;
      *lo = 0;
      *hi = r->extent[e->var] - 1;
      return TRUE;
    case FB_KX_SELECT:
      if (!range_of (r, e->b, &alo, &ahi) || !range_of (r, e->c, &blo, &bhi))
        return FALSE;
      *lo = MIN (alo, blo);
      *hi = MAX (ahi, bhi);
      return TRUE;
    case FB_KX_BINARY:
      if (e->dtype != FB_DTYPE_INT64 || !range_of (r, e->a, &alo, &ahi) ||
          !range_of (r, e->b, &blo, &bhi))
        return FALSE;
      /* Extents are at most 2^40: none of these overflow. */
      switch (e->bop)
        {
        case FB_KB_ADD: *lo = alo + blo; *hi = ahi + bhi; return TRUE;
        case FB_KB_SUB: *lo = alo - bhi; *hi = ahi - blo; return TRUE;
        case FB_KB_MIN: *lo = MIN (alo, blo); *hi = MIN (ahi, bhi); return TRUE;
        case FB_KB_MAX: *lo = MAX (alo, blo); *hi = MAX (ahi, bhi); return TRUE;
        case FB_KB_MUL:
          if (blo == bhi)
            {
              *lo = MIN (alo * blo, ahi * blo);
              *hi = MAX (alo * blo, ahi * blo);
              return TRUE;
            }
          return FALSE;
        default:
          return FALSE;
        }
    default:
      return FALSE;
    }
}

static int64_t
floor_div (int64_t a, int64_t b)
{
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* index as row * stride + channel, or NULL where it does not split (see the top). */
static FbKExpr *
restride_index (const Restride *r, FbKExpr *index)
{
  g_autoptr(GArray) terms = g_array_new (FALSE, FALSE, sizeof (Term));
  int64_t konst = 0;
  if (!flatten (index, 1, terms, &konst))
    return NULL;
  FbKExpr *row = fb_kx_index (r->k, floor_div (konst, r->row));
  FbKExpr *chan = fb_kx_index (r->k, konst - floor_div (konst, r->row) * r->row);
  int64_t lo = konst - floor_div (konst, r->row) * r->row, hi = lo;
  for (guint i = 0; i < terms->len; i++)
    {
      const Term *t = &g_array_index (terms, Term, i);
      if (t->coef % r->row == 0)
        {
          row = fb_kx_add (r->k, row, fb_kx_mul_c (r->k, t->atom, t->coef / r->row));
          continue;
        }
      int64_t alo, ahi;
      if (!range_of (r, t->atom, &alo, &ahi))
        return NULL;
      lo += MIN (alo * t->coef, ahi * t->coef);
      hi += MAX (alo * t->coef, ahi * t->coef);
      chan = fb_kx_add (r->k, chan, fb_kx_mul_c (r->k, t->atom, t->coef));
    }
  if (lo < 0 || hi >= r->row)
    return NULL;
  return fb_kx_add (r->k, fb_kx_mul_c (r->k, row, r->stride), chan);
}

static gboolean restride_expr (Restride *r, FbKExpr *e);

/* Re-indexes (or, dry, checks) one access of the argument: *index in place. */
static gboolean
restride_access (Restride *r, FbKExpr **index)
{
  FbKExpr *moved = restride_index (r, *index);
  if (moved == NULL)
    return FALSE;
  if (r->apply)
    *index = moved;
  return TRUE;
}

static gboolean
restride_expr (Restride *r, FbKExpr *e)
{
  if (e == NULL || g_hash_table_contains (r->done, e))
    return TRUE;
  g_hash_table_add (r->done, e);
  if (e->kind == FB_KX_PTR && e->arg == r->arg)
    return FALSE;                         /* a library reads it as packed */
  if (!restride_expr (r, e->a) || !restride_expr (r, e->b) || !restride_expr (r, e->c))
    return FALSE;
  if (e->kind == FB_KX_LOAD && e->arg == r->arg)
    return restride_access (r, &e->a);
  return TRUE;
}

static gboolean
restride_body (Restride *r, GPtrArray *body)
{
  for (guint i = 0; body && i < body->len; i++)
    {
      FbKStmt *st = g_ptr_array_index (body, i);
      double ext;
      switch (st->kind)
        {
        case FB_KS_LOOP:
          if (st->loop.var < r->n_vars)
            r->extent[st->loop.var] = fb_kx_is_const (st->loop.extent, &ext) ? (int64_t) ext : -1;
          if (!restride_expr (r, st->loop.extent) || !restride_body (r, st->loop.body))
            return FALSE;
          break;
        case FB_KS_STORE:
          if (!restride_expr (r, st->store.value) || !restride_expr (r, st->store.index))
            return FALSE;
          if (st->store.arg == r->arg && !restride_access (r, &st->store.index))
            return FALSE;
          break;
        case FB_KS_ASSIGN:
          if (!restride_expr (r, st->assign.value))
            return FALSE;
          break;
        case FB_KS_CALL:
          for (guint a = 0; a < st->call.n_args; a++)
            if (!restride_expr (r, st->call.args[a]))
              return FALSE;
          break;
        }
    }
  return TRUE;
}

/* After cuDNN's phase conv has written its packed output into scratch argument temp: a phase
 * copying it into argument out's rows, r->stride elements apart. */
static void
insert_copy (Restride *r, const FbKPhase *conv, guint temp, guint out, int64_t rows)
{
  FbKernel *k = r->k;
  guint at = 0;
  g_ptr_array_find (k->phases, conv, &at);
  FbKPhase *ph = fb_kernel_add_phase (k, rows, (double) rows * r->row);
  g_ptr_array_insert (k->phases, (int) at + 1, g_ptr_array_steal_index (k->phases, k->phases->len - 1));
  if (conv->prov)
    fb_kphase_add_prov (ph, (const guint *) conv->prov->data, conv->prov->len);
  guint p = fb_kernel_new_var (k), j = fb_kernel_new_var (k);
  FbKStmt *outer = fb_ks_loop (k, p, fb_kx_index (k, rows));
  outer->loop.parallel = TRUE;
  FbKStmt *inner = fb_ks_loop (k, j, fb_kx_index (k, r->row));
  FbKExpr *src = fb_kx_add (k, fb_kx_mul_c (k, fb_kx_var (k, p), r->row), fb_kx_var (k, j));
  FbKExpr *dst = fb_kx_add (k, fb_kx_mul_c (k, fb_kx_var (k, p), r->stride), fb_kx_var (k, j));
  g_ptr_array_add (inner->loop.body, fb_ks_store (k, out, dst, fb_kx_load (k, temp, src)));
  g_ptr_array_add (outer->loop.body, inner);
  g_ptr_array_add (ph->body, outer);
}

/* A cuBLASLt product's rows of x (A, not transposed) or of y without an addend (which shares
 * y's layout) are r->stride elements apart instead of packed: its row stride says so. */
static gboolean
restride_gemm (Restride *r, FbKConv *cv)
{
  FbKGemm *g = &cv->gemm;
  gboolean is_x = cv->x == r->arg, is_y = cv->y == r->arg;
  guint others[] = { cv->w, cv->bias, cv->add };
  for (guint i = 0; i < G_N_ELEMENTS (others); i++)
    if (others[i] == r->arg)
      return FALSE;
  if (!is_x && !is_y)
    return TRUE;
  if (is_x && (g->ta || g->lda != g->k || r->row != g->k || g->off_a != 0 ||
               (g->batch > 1 && g->stride_a != g->m * g->k)))
    return FALSE;
  if (is_y && (cv->add != FB_KCONV_NO_ARG || g->ldc != g->n || r->row != g->n || g->off_c != 0 ||
               (g->batch > 1 && g->stride_c != g->m * g->n)))
    return FALSE;
  if (!r->apply)
    return TRUE;
  if (is_x)
    {
      g->lda = r->stride;
      g->stride_a = g->batch > 1 ? g->m * r->stride : g->stride_a;
    }
  if (is_y)
    {
      g->ldc = r->stride;
      g->stride_c = g->batch > 1 ? g->m * r->stride : g->stride_c;
    }
  return TRUE;
}

/* A library phase's use of the argument: a convolution's output without an addend, or a
 * product's input or output rows. */
static gboolean
restride_conv (Restride *r, const FbKPhase *phase, FbKConv *cv)
{
  if (cv->lib == FB_KLIB_GEMM)
    return restride_gemm (r, cv);
  guint uses[] = { cv->x, cv->w, cv->bias, cv->add, cv->scale };
  for (guint i = 0; i < G_N_ELEMENTS (uses); i++)
    if (uses[i] == r->arg && (i != 4 || cv->desc.scaled_input))
      return FALSE;
  if (cv->y != r->arg)
    return TRUE;
  if (cv->desc.transposed || cv->nchw || r->row != cv->desc.co)
    return FALSE;
  for (int64_t i = 0; i < cv->desc.n_post; i++)
    if (cv->desc.post[i].kind == FB_CONV_POST_ADD || cv->desc.post[i].kind == FB_CONV_POST_SUM)
      return FALSE;
  if (!r->apply)
    return TRUE;
  if (!cv->cudnn)
    {
      cv->desc.y_stride = r->stride;
      return TRUE;
    }
  const FbKArg *out = &g_array_index (r->k->args, FbKArg, r->arg);
  const FbBuffer *yb = fb_plan_buffer (r->plan, out->buffer);
  g_autofree char *name = g_strdup_printf ("%s.packed", r->k->name);
  guint sb = fb_plan_add_buffer (r->plan, FB_BUF_SCRATCH, name, yb->dtype, yb->rank, yb->dims);
  guint temp = fb_kernel_add_arg (r->k, sb, FB_KARG_TEMP, yb->dtype, name);
  cv->y = temp;
  insert_copy (r, phase, temp, r->arg, yb->numel / r->row);
  return TRUE;
}

gboolean
_fb_lower_restride_arg (FbPlan *plan, FbKernel *kernel, guint arg, int64_t row, int64_t stride,
                        gboolean apply)
{
  g_return_val_if_fail (plan != NULL && kernel != NULL && row > 0 && stride >= row, FALSE);
  if (kernel->kind == FB_KERNEL_VIEW)
    return TRUE;
  if (kernel->kind == FB_KERNEL_HOST)
    return FALSE;
  g_autofree int64_t *extent = g_new (int64_t, MAX (kernel->n_vars, 1));
  Restride r = { .plan = plan, .k = kernel, .arg = arg, .row = row, .stride = stride,
                 .apply = apply, .n_vars = kernel->n_vars, .extent = extent,
                 .done = g_hash_table_new (NULL, NULL) };
  gboolean ok = TRUE;
  /* The phases as lowered: the copy a cuDNN phase gets is already in rows. */
  guint n = kernel->phases->len;
  g_autofree FbKPhase **phases = g_memdup2 (kernel->phases->pdata, MAX (n, 1) * sizeof (gpointer));
  for (guint p = 0; p < n && ok; p++)
    {
      for (guint v = 0; v < r.n_vars; v++)
        extent[v] = -1;
      ok = phases[p]->conv ? restride_conv (&r, phases[p], phases[p]->conv)
                           : restride_body (&r, phases[p]->body);
    }
  g_hash_table_unref (r.done);
  return ok;
}
