/* SPDX-License-Identifier: GPL-3.0-or-later */
/* How a phase of kernel IR maps onto CUDA's grid, blocks and threads.
 *
 * The lowering promises only that the iterations of a phase's parallel loop are independent.
 * The loops nested under it are independent too when nothing flows from one iteration to the
 * next: no accumulator carried across (each one read is set earlier in the same iteration, or
 * never set in the loop), and the memory each iteration writes is a window the others neither
 * write nor read. The windows come from the affine form of the indices: with the loop's
 * coefficient c and the spread of the inner loops' terms, every access of a written argument
 * must share the coefficients of the outer variables and fall in one window narrower than |c|.
 * Anything that does not fit (a data-dependent store index, a division in an index, a call)
 * keeps the loop sequential inside a thread, which is always correct.
 *
 * A phase whose item (one iteration of the collapsed nest) reduces over a long loop (softmax
 * rows, normalizations, global pools) runs cooperatively: a block per item (or a warp, for
 * many rows of up to a thousand elements), reduction loops split over its threads and combined
 * through shuffles (and shared memory across a block's warps), store loops split the same
 * way, single stores made by its first thread, and everything else run by every thread on the
 * same (uniform) values. */
#include "fb-codegen-ptx-private.h"

#include <string.h>

/* ---- walking statements and expressions ---------------------------------------------------- */

typedef struct {
  gboolean *accs_read;          /* may be NULL */
  gboolean *args_loaded;        /* may be NULL */
  gboolean  data_index;         /* a load inside an index */
} Reads;

static void
expr_reads (const FbKExpr *x, Reads *r)
{
  if (x == NULL)
    return;
  if (x->kind == FB_KX_ACC && r->accs_read)
    r->accs_read[x->acc] = TRUE;
  if (x->kind == FB_KX_LOAD && r->args_loaded)
    r->args_loaded[x->arg] = TRUE;
  expr_reads (x->a, r);
  if (x->kind != FB_KX_LOAD && x->kind != FB_KX_PTR)
    {
      expr_reads (x->b, r);
      expr_reads (x->c, r);
    }
}

static void
stmt_reads (const FbKStmt *s, Reads *r)
{
  switch (s->kind)
    {
    case FB_KS_LOOP:
      expr_reads (s->loop.extent, r);
      for (guint i = 0; i < s->loop.body->len; i++)
        stmt_reads (g_ptr_array_index (s->loop.body, i), r);
      break;
    case FB_KS_STORE:
      expr_reads (s->store.index, r);
      expr_reads (s->store.value, r);
      break;
    case FB_KS_ASSIGN:
      expr_reads (s->assign.value, r);
      break;
    case FB_KS_CALL:
      for (guint i = 0; i < s->call.n_args; i++)
        expr_reads (s->call.args[i], r);
      break;
    }
}

typedef void (*StmtFn) (const FbKStmt *s, gpointer data);

static void
each_stmt (const FbKStmt *s, StmtFn fn, gpointer data)
{
  fn (s, data);
  if (s->kind == FB_KS_LOOP)
    for (guint i = 0; i < s->loop.body->len; i++)
      each_stmt (g_ptr_array_index (s->loop.body, i), fn, data);
}

static void
find_call (const FbKStmt *s, gpointer data)
{
  if (s->kind == FB_KS_CALL)
    *(gboolean *) data = TRUE;
}

static void
find_store (const FbKStmt *s, gpointer data)
{
  if (s->kind == FB_KS_STORE)
    *(gboolean *) data = TRUE;
}

static void
mark_stored (const FbKStmt *s, gpointer data)
{
  if (s->kind == FB_KS_STORE)
    ((gboolean *) data)[s->store.arg] = TRUE;
}

static void
mark_assigned (const FbKStmt *s, gpointer data)
{
  if (s->kind == FB_KS_ASSIGN)
    ((gboolean *) data)[s->assign.acc] = TRUE;
}

gboolean
_fb_ptx_has_call (const FbKStmt *s)
{
  gboolean found = FALSE;
  each_stmt (s, find_call, &found);
  return found;
}

gboolean
_fb_ptx_has_store (const FbKStmt *s)
{
  gboolean found = FALSE;
  each_stmt (s, find_store, &found);
  return found;
}

void
_fb_ptx_args_stored (const FbKStmt *s, gboolean *stored)
{
  each_stmt (s, mark_stored, stored);
}

void
_fb_ptx_accs_assigned (const FbKStmt *s, gboolean *assigned)
{
  each_stmt (s, mark_assigned, assigned);
}

void
_fb_ptx_accs_read (const FbKStmt *s, gboolean *read)
{
  Reads r = { .accs_read = read };
  stmt_reads (s, &r);
}

void
_fb_ptx_args_loaded (const FbKStmt *s, gboolean *loaded)
{
  Reads r = { .args_loaded = loaded };
  stmt_reads (s, &r);
}

/* ---- affine indices ------------------------------------------------------------------------ */

/* x as sum coef[v] var_v + *k; FALSE when it is not affine in the loop variables. */
static gboolean
affine (const FbKExpr *x, guint n_vars, int64_t *coef, int64_t *k, int64_t scale)
{
  double v;
  switch (x->kind)
    {
    case FB_KX_CONST:
      if (fb_dtype_is_float (x->dtype))
        return FALSE;
      *k += scale * x->i;
      return TRUE;
    case FB_KX_VAR:
      coef[x->var] += scale;
      return TRUE;
    case FB_KX_CAST:
      if (fb_dtype_is_float (x->dtype) || fb_dtype_is_float (x->a->dtype))
        return FALSE;
      return affine (x->a, n_vars, coef, k, scale);
    case FB_KX_UNARY:
      return x->uop == FB_KU_NEG && affine (x->a, n_vars, coef, k, -scale);
    case FB_KX_BINARY:
      if (fb_dtype_is_float (x->dtype))
        return FALSE;
      if (x->bop == FB_KB_ADD)
        return affine (x->a, n_vars, coef, k, scale) && affine (x->b, n_vars, coef, k, scale);
      if (x->bop == FB_KB_SUB)
        return affine (x->a, n_vars, coef, k, scale) && affine (x->b, n_vars, coef, k, -scale);
      if (x->bop == FB_KB_MUL && fb_kx_is_const (x->b, &v))
        return affine (x->a, n_vars, coef, k, scale * (int64_t) v);
      if (x->bop == FB_KB_MUL && fb_kx_is_const (x->a, &v))
        return affine (x->b, n_vars, coef, k, scale * (int64_t) v);
      return FALSE;
    default:
      return FALSE;
    }
}

/* ---- independence of a loop's iterations --------------------------------------------------- */

typedef struct {
  const FbKernel *k;
  guint           var;          /* the loop's variable */
  int64_t         extent;       /* the loop's */
  int64_t        *inner_extent; /* per variable: extent of a loop inside (0: not inside) */
  gboolean        ok;
  /* per argument written in the loop: the first access's outer coefficients and the window */
  gboolean       *seen;
  int64_t        *outer;        /* n_args x n_vars */
  int64_t        *c;            /* the loop variable's coefficient */
  int64_t        *lo, *hi;
  gboolean       *written;
  /* per argument, for interleaved nests: every access's coefficients of the loop and the loops
   * inside, while they are all the same, and the range of the accesses' constant parts */
  int64_t        *inner;        /* n_args x n_vars */
  gboolean       *same_inner;
  int64_t        *klo, *khi;
} Indep;

static void
note_inner (const FbKStmt *s, gpointer data)
{
  Indep *d = data;
  double v;
  if (s->kind != FB_KS_LOOP)
    return;
  if (!fb_kx_is_const (s->loop.extent, &v))
    d->ok = FALSE;            /* a tile's variable extent: left sequential */
  else
    d->inner_extent[s->loop.var] = MAX ((int64_t) v, 1);
}

/* Keeps, per argument, the coefficients of the loop's variable and of the loops inside it that
 * every access shares (same_inner), and the range of their constant parts. */
static void
note_inner_coefficients (Indep *d, guint arg, const int64_t *coef, int64_t konst)
{
  guint nv = d->k->n_vars;
  int64_t *inner = d->inner + (gsize) arg * nv;
  gboolean first = !d->seen[arg];
  for (guint v = 0; v < nv; v++)
    {
      int64_t cv = v == d->var || d->inner_extent[v] > 0 ? coef[v] : 0;
      if (first)
        inner[v] = cv;
      else if (inner[v] != cv)
        d->same_inner[arg] = FALSE;
    }
  d->klo[arg] = first ? konst : MIN (d->klo[arg], konst);
  d->khi[arg] = first ? konst : MAX (d->khi[arg], konst);
}

/* Whether distinct iterations of the loop reach distinct elements of arg although the loops
 * inside it have larger strides (a nest ordered [channel block, row, column, channel in block],
 * say): every access has the same coefficients, and ordered by size each one is larger than the
 * span of the smaller ones and of the accesses' constants together, so that an element names
 * one iteration of every loop, as the digits of a mixed-radix number do. */
static gboolean
mixed_radix_distinct (const Indep *d, guint arg)
{
  guint nv = d->k->n_vars;
  const int64_t *inner = d->inner + (gsize) arg * nv;
  if (!d->same_inner[arg] || inner[d->var] == 0)
    return FALSE;
  g_autofree gboolean *used = g_new0 (gboolean, nv + 1);
  int64_t span = d->khi[arg] - d->klo[arg];
  for (;;)
    {
      int64_t smallest = 0;
      guint pick = nv;
      for (guint v = 0; v < nv; v++)
        {
          int64_t extent = v == d->var ? d->extent : d->inner_extent[v];
          if (used[v] || inner[v] == 0 || extent <= 1)
            continue;
          if (pick == nv || ABS (inner[v]) < smallest)
            {
              smallest = ABS (inner[v]);
              pick = v;
            }
        }
      if (pick == nv)
        return TRUE;
      if (smallest <= span)
        return FALSE;
      used[pick] = TRUE;
      int64_t extent = pick == d->var ? d->extent : d->inner_extent[pick];
      span += smallest * (extent - 1);
    }
}

static void
note_access (Indep *d, guint arg, const FbKExpr *index)
{
  guint nv = d->k->n_vars;
  if (!d->written[arg] || !d->ok)
    return;
  g_autofree int64_t *coef = g_new0 (int64_t, nv + 1);
  int64_t konst = 0;
  if (!affine (index, nv, coef, &konst, 1))
    {
      d->ok = FALSE;
      return;
    }
  note_inner_coefficients (d, arg, coef, konst);
  int64_t lo = konst, hi = konst;
  for (guint v = 0; v < nv; v++)
    if (v != d->var && d->inner_extent[v] > 0)
      {
        int64_t span = coef[v] * (d->inner_extent[v] - 1);
        lo += MIN (span, 0);
        hi += MAX (span, 0);
        coef[v] = 0;
      }
  int64_t c = coef[d->var];
  coef[d->var] = 0;
  int64_t *outer = d->outer + (gsize) arg * nv;
  if (!d->seen[arg])
    {
      d->seen[arg] = TRUE;
      memcpy (outer, coef, nv * sizeof (int64_t));
      d->c[arg] = c;
      d->lo[arg] = lo;
      d->hi[arg] = hi;
      return;
    }
  if (c != d->c[arg] || memcmp (outer, coef, nv * sizeof (int64_t)) != 0)
    {
      d->ok = FALSE;
      return;
    }
  d->lo[arg] = MIN (d->lo[arg], lo);
  d->hi[arg] = MAX (d->hi[arg], hi);
}

static void
access_expr (Indep *d, const FbKExpr *x)
{
  if (x == NULL)
    return;
  if (x->kind == FB_KX_LOAD || x->kind == FB_KX_PTR)
    note_access (d, x->arg, x->a);
  access_expr (d, x->a);
  if (x->kind != FB_KX_LOAD && x->kind != FB_KX_PTR)
    {
      access_expr (d, x->b);
      access_expr (d, x->c);
    }
}

static void
access_stmt (const FbKStmt *s, gpointer data)
{
  Indep *d = data;
  switch (s->kind)
    {
    case FB_KS_LOOP: access_expr (d, s->loop.extent); break;
    case FB_KS_STORE:
      note_access (d, s->store.arg, s->store.index);
      access_expr (d, s->store.index);
      access_expr (d, s->store.value);
      break;
    case FB_KS_ASSIGN: access_expr (d, s->assign.value); break;
    case FB_KS_CALL: d->ok = FALSE; break;
    }
}

/* Every accumulator read in body is set before in the same iteration, or never set in the loop
 * (assigned). defined: set so far (updated). */
static gboolean
accs_local (const FbKernel *k, const GPtrArray *body, const gboolean *assigned, gboolean *defined)
{
  guint na = k->accs->len;
  for (guint i = 0; i < body->len; i++)
    {
      const FbKStmt *s = g_ptr_array_index (body, i);
      if (s->kind == FB_KS_LOOP)
        {
          g_autofree gboolean *inner = g_memdup2 (defined, (na + 1) * sizeof (gboolean));
          Reads r = { .accs_read = g_newa (gboolean, na + 1) };
          memset (r.accs_read, 0, (na + 1) * sizeof (gboolean));
          expr_reads (s->loop.extent, &r);
          for (guint a = 0; a < na; a++)
            if (r.accs_read[a] && assigned[a] && !defined[a])
              return FALSE;
          if (!accs_local (k, s->loop.body, assigned, inner))
            return FALSE;
          double v;
          if (fb_kx_is_const (s->loop.extent, &v) && v > 0)
            memcpy (defined, inner, (na + 1) * sizeof (gboolean));
          continue;
        }
      Reads r = { .accs_read = g_newa (gboolean, na + 1) };
      memset (r.accs_read, 0, (na + 1) * sizeof (gboolean));
      stmt_reads (s, &r);
      for (guint a = 0; a < na; a++)
        if (r.accs_read[a] && assigned[a] && !defined[a])
          return FALSE;
      if (s->kind == FB_KS_ASSIGN)
        defined[s->assign.acc] = TRUE;
    }
  return TRUE;
}

static gboolean
independent (const FbKernel *k, const FbKStmt *loop)
{
  double v;
  if (loop->kind != FB_KS_LOOP || !fb_kx_is_const (loop->loop.extent, &v) || _fb_ptx_has_call (loop))
    return FALSE;
  guint na = k->accs->len, nargs = k->args->len, nv = k->n_vars;
  g_autofree gboolean *assigned = g_new0 (gboolean, na + 1);
  g_autofree gboolean *defined = g_new0 (gboolean, na + 1);
  _fb_ptx_accs_assigned (loop, assigned);
  if (!accs_local (k, loop->loop.body, assigned, defined))
    return FALSE;
  Indep d = { .k = k, .var = loop->loop.var, .extent = MAX ((int64_t) v, 1), .ok = TRUE };
  d.inner_extent = g_new0 (int64_t, nv + 1);
  d.inner = g_new0 (int64_t, (gsize) (nargs + 1) * (nv + 1));
  d.same_inner = g_new (gboolean, nargs + 1);
  for (guint a = 0; a <= nargs; a++)
    d.same_inner[a] = TRUE;
  d.klo = g_new0 (int64_t, nargs + 1);
  d.khi = g_new0 (int64_t, nargs + 1);
  d.seen = g_new0 (gboolean, nargs + 1);
  d.written = g_new0 (gboolean, nargs + 1);
  d.outer = g_new0 (int64_t, (gsize) (nargs + 1) * (nv + 1));
  d.c = g_new0 (int64_t, nargs + 1);
  d.lo = g_new0 (int64_t, nargs + 1);
  d.hi = g_new0 (int64_t, nargs + 1);
  _fb_ptx_args_stored (loop, d.written);
  for (guint i = 0; i < loop->loop.body->len; i++)
    each_stmt (g_ptr_array_index (loop->loop.body, i), note_inner, &d);
  for (guint i = 0; i < loop->loop.body->len && d.ok; i++)
    each_stmt (g_ptr_array_index (loop->loop.body, i), access_stmt, &d);
  for (guint a = 0; a < nargs && d.ok; a++)
    if (d.written[a] && (d.c[a] == 0 || d.hi[a] - d.lo[a] >= ABS (d.c[a])) &&
        !mixed_radix_distinct (&d, a))
      d.ok = FALSE;
  gboolean ok = d.ok;
  g_free (d.inner);
  g_free (d.same_inner);
  g_free (d.klo);
  g_free (d.khi);
  g_free (d.inner_extent);
  g_free (d.seen);
  g_free (d.written);
  g_free (d.outer);
  g_free (d.c);
  g_free (d.lo);
  g_free (d.hi);
  return ok;
}

/* ---- reductions ---------------------------------------------------------------------------- */

static gboolean
red_type_ok (FbDType t)
{
  return t == FB_DTYPE_FLOAT32 || t == FB_DTYPE_FLOAT64 || t == FB_DTYPE_INT32 ||
         t == FB_DTYPE_INT64;
}

gboolean
_fb_ptx_reduction_op (const FbKernel *k, const FbKStmt *s, FbPtxRed *op)
{
  if (s->kind != FB_KS_ASSIGN)
    return FALSE;
  const FbKExpr *v = s->assign.value;
  FbDType t = g_array_index (k->accs, FbDType, s->assign.acc);
  if (v->kind != FB_KX_BINARY || v->dtype != t || !red_type_ok (t))
    return FALSE;
  gboolean left = v->a->kind == FB_KX_ACC && v->a->acc == s->assign.acc;
  gboolean right = v->b->kind == FB_KX_ACC && v->b->acc == s->assign.acc;
  if (left == right)
    return FALSE;
  switch (v->bop)
    {
    case FB_KB_ADD: *op = FB_PTX_RED_ADD; break;
    case FB_KB_MUL: *op = FB_PTX_RED_MUL; break;
    case FB_KB_MAX: *op = FB_PTX_RED_MAX; break;
    case FB_KB_MIN: *op = FB_PTX_RED_MIN; break;
    default: return FALSE;
    }
  /* The other operand must not read the accumulator (nor any other being reduced: checked by
   * the caller over the whole loop). */
  const FbKExpr *x = left ? v->b : v->a;
  Reads r = { .accs_read = g_newa (gboolean, k->accs->len + 1) };
  memset (r.accs_read, 0, (k->accs->len + 1) * sizeof (gboolean));
  expr_reads (x, &r);
  return !r.accs_read[s->assign.acc];
}

typedef struct {
  const FbKernel *k;
  gboolean        ok;
  FbPtxRed       *ops;          /* per accumulator, once seen */
  gboolean       *reduced;
} RedCheck;

static void
red_stmt (const FbKStmt *s, gpointer data)
{
  RedCheck *rc = data;
  FbPtxRed op;
  double v;
  switch (s->kind)
    {
    case FB_KS_LOOP:
      if (!fb_kx_is_const (s->loop.extent, &v))
        rc->ok = FALSE;
      break;
    case FB_KS_ASSIGN:
      if (!_fb_ptx_reduction_op (rc->k, s, &op) ||
          (rc->reduced[s->assign.acc] && rc->ops[s->assign.acc] != op))
        rc->ok = FALSE;
      else
        {
          rc->reduced[s->assign.acc] = TRUE;
          rc->ops[s->assign.acc] = op;
        }
      break;
    default:
      rc->ok = FALSE;
    }
}

typedef struct {
  const FbKernel *k;
  const gboolean *reduced;
  gboolean        ok;
} Cross;

static void
cross_stmt (const FbKStmt *s, gpointer data)
{
  Cross *c = data;
  if (s->kind != FB_KS_ASSIGN)
    return;
  const FbKExpr *v = s->assign.value;
  const FbKExpr *x = v->a->kind == FB_KX_ACC && v->a->acc == s->assign.acc ? v->b : v->a;
  guint na = c->k->accs->len;
  Reads r = { .accs_read = g_newa (gboolean, na + 1) };
  memset (r.accs_read, 0, (na + 1) * sizeof (gboolean));
  expr_reads (x, &r);
  for (guint a = 0; a < na; a++)
    if (r.accs_read[a] && c->reduced[a])
      c->ok = FALSE;
}

/* A loop that only combines values into accumulators, none of whose values feeds another's
 * (their partial values differ from thread to thread). reduced receives the accumulators. */
static gboolean
is_reduce_loop (const FbKernel *k, const FbKStmt *s, gboolean *reduced)
{
  double v;
  if (s->kind != FB_KS_LOOP || !fb_kx_is_const (s->loop.extent, &v))
    return FALSE;
  guint na = k->accs->len;
  RedCheck rc = { .k = k, .ok = TRUE, .reduced = reduced };
  rc.ops = g_newa (FbPtxRed, na + 1);
  memset (reduced, 0, (na + 1) * sizeof (gboolean));
  for (guint i = 0; i < s->loop.body->len; i++)
    each_stmt (g_ptr_array_index (s->loop.body, i), red_stmt, &rc);
  if (!rc.ok)
    return FALSE;
  Cross c = { .k = k, .reduced = reduced, .ok = TRUE };
  for (guint i = 0; i < s->loop.body->len; i++)
    each_stmt (g_ptr_array_index (s->loop.body, i), cross_stmt, &c);
  guint n = 0;
  for (guint a = 0; a < na; a++)
    n += reduced[a];
  return c.ok && n > 0;
}

/* ---- nests --------------------------------------------------------------------------------- */

static int64_t
const_extent (const FbKStmt *s)
{
  double v;
  return fb_kx_is_const (s->loop.extent, &v) ? (int64_t) v : -1;
}

/* Follows the perfect nest under s[n-1] while its loops are independent (or, in a reduction
 * loop, whose combining order does not matter, just loops). */
static guint
collapse (const FbKernel *k, const FbKStmt **nest, guint n, int64_t *product, gboolean reduction)
{
  for (;;)
    {
      const GPtrArray *body = nest[n - 1]->loop.body;
      if (n == FB_PTX_MAX_NEST || body->len != 1)
        return n;
      const FbKStmt *s = g_ptr_array_index (body, 0);
      if (s->kind != FB_KS_LOOP || const_extent (s) < 1 || (!reduction && !independent (k, s)))
        return n;
      *product *= const_extent (s);
      nest[n++] = s;
    }
}

void
_fb_ptx_split (const FbKernel *k, const FbKStmt *loop, gboolean reduction, FbPtxSplit *split)
{
  memset (split, 0, sizeof *split);
  split->nest[0] = loop;
  split->extent = const_extent (loop);
  split->n_nest = collapse (k, split->nest, 1, &split->extent, reduction);
  split->body = split->nest[split->n_nest - 1]->loop.body;
}

void
_fb_ptx_map_clear (FbPtxMap *map)
{
  g_clear_pointer (&map->rows, g_free);
}

static guint
pow2_at_least (int64_t n)
{
  guint p = 1;
  while (p < n && p < (1u << 30))
    p <<= 1;
  return p;
}

/* A warp per row for rows of up to this many elements (32 a lane), when there are at least
 * this many rows: fewer rows are better spread a block each over the 132 SMs. */
#define WARP_ROW_LONGEST 1024
#define WARP_ROW_FEWEST  1024

/* The fewest rows that go a warp each: FUSEBENCH_WARP_ROWS=always (from 32 rows) or never
 * override the rule, for measuring and testing. */
static int64_t
warp_rows_from (void)
{
  const char *force = g_getenv ("FUSEBENCH_WARP_ROWS");
  if (g_strcmp0 (force, "always") == 0)
    return 32;
  if (g_strcmp0 (force, "never") == 0)
    return G_MAXINT64;
  return WARP_ROW_FEWEST;
}

static void
note_load_steps (const FbKExpr *x, guint var, guint nv, gboolean *along)
{
  if (x == NULL)
    return;
  if (x->kind == FB_KX_LOAD)
    {
      g_autofree int64_t *coef = g_new0 (int64_t, nv + 1);
      int64_t konst = 0;
      if (affine (x->a, nv, coef, &konst, 1) && ABS (coef[var]) == 1)
        *along = TRUE;
    }
  note_load_steps (x->a, var, nv, along);
  if (x->kind != FB_KX_LOAD && x->kind != FB_KX_PTR)
    {
      note_load_steps (x->b, var, nv, along);
      note_load_steps (x->c, var, nv, along);
    }
}

static void
note_stmt_load_steps (const FbKStmt *s, guint var, guint nv, gboolean *along)
{
  if (s->kind == FB_KS_LOOP)
    for (guint i = 0; i < s->loop.body->len; i++)
      note_stmt_load_steps (g_ptr_array_index (s->loop.body, i), var, nv, along);
  else if (s->kind == FB_KS_ASSIGN)
    note_load_steps (s->assign.value, var, nv, along);
  else if (s->kind == FB_KS_STORE)
    note_load_steps (s->store.value, var, nv, along);
}

/* Whether every reduction loop of a cooperative body reads some input along its row (one
 * element after the other), so that a warp's lanes read side by side. A channels-last pool
 * reads its column a row apart instead: there a thread per column keeps the warp's reads
 * side by side. The row's step is its innermost loop that moves: a convolution of a 1x1
 * kernel sums over [channel, 0..1, 0..1], and its rows run along the channels. */
static gboolean
rows_read_along (const FbKernel *k, const FbPtxMap *map)
{
  for (guint i = 0; i < map->body->len; i++)
    {
      if (map->rows[i] != FB_PTX_ROW_REDUCE)
        continue;
      FbPtxSplit sp;
      _fb_ptx_split (k, g_ptr_array_index (map->body, i), TRUE, &sp);
      guint step = sp.n_nest - 1;
      while (step > 0 && const_extent (sp.nest[step]) == 1)
        step--;
      gboolean along = FALSE;
      for (guint j = 0; j < sp.body->len; j++)
        note_stmt_load_steps (g_ptr_array_index (sp.body, j), sp.nest[step]->loop.var,
                              k->n_vars, &along);
      if (!along)
        return FALSE;
    }
  return TRUE;
}

/* The cooperative form of body, when every statement fits one of the row kinds. */
static gboolean
classify_rows (const FbKernel *k, const GPtrArray *body, FbPtxMap *map)
{
  guint na = k->accs->len;
  g_autofree FbPtxRowKind *rows = g_new0 (FbPtxRowKind, body->len + 1);
  g_autofree gboolean *reduced = g_new0 (gboolean, na + 1);
  int64_t longest = 0;
  for (guint i = 0; i < body->len; i++)
    {
      const FbKStmt *s = g_ptr_array_index (body, i);
      if (s->kind == FB_KS_ASSIGN)
        rows[i] = FB_PTX_ROW_UNIFORM;
      else if (s->kind == FB_KS_STORE)
        rows[i] = FB_PTX_ROW_THREAD0;
      else if (s->kind == FB_KS_CALL)
        return FALSE;
      else if (is_reduce_loop (k, s, reduced))
        {
          FbPtxSplit sp;
          _fb_ptx_split (k, s, TRUE, &sp);
          rows[i] = FB_PTX_ROW_REDUCE;
          longest = MAX (longest, sp.extent);
        }
      else if (_fb_ptx_has_store (s))
        {
          /* Split stores: independent, and no accumulator set inside read outside. */
          g_autofree gboolean *set = g_new0 (gboolean, na + 1);
          _fb_ptx_accs_assigned (s, set);
          for (guint j = 0; j < body->len; j++)
            {
              if (j == i)
                continue;
              Reads r = { .accs_read = g_newa (gboolean, na + 1) };
              memset (r.accs_read, 0, (na + 1) * sizeof (gboolean));
              stmt_reads (g_ptr_array_index (body, j), &r);
              for (guint a = 0; a < na; a++)
                if (r.accs_read[a] && set[a])
                  return FALSE;
            }
          if (!independent (k, s) || _fb_ptx_has_call (s))
            return FALSE;
          rows[i] = FB_PTX_ROW_STORES;
        }
      else
        rows[i] = FB_PTX_ROW_UNIFORM;     /* computes accumulators the same in every thread */
    }
  if (longest == 0)
    return FALSE;
  map->rows = g_steal_pointer (&rows);
  map->reduce_extent = longest;
  return TRUE;
}

gboolean
_fb_ptx_map_phase (const FbKernel *k, const FbKPhase *phase, FbPtxMap *map, char **why)
{
  memset (map, 0, sizeof *map);
  const FbKStmt *p = phase->body->len ? g_ptr_array_index (phase->body, 0) : NULL;
  if (phase->body->len != 1 || p->kind != FB_KS_LOOP || !p->loop.parallel)
    {
      *why = g_strdup ("the phase is not one parallel loop");
      return FALSE;
    }
  map->nest[0] = p;
  map->inner = 1;
  map->n_nest = collapse (k, map->nest, 1, &map->inner, FALSE);
  map->body = map->nest[map->n_nest - 1]->loop.body;
  int64_t items = MAX (phase->extent, 1) * map->inner;

  if (classify_rows (k, map->body, map) && map->reduce_extent >= 32)
    {
      map->cooperative = TRUE;
      map->vec = 1;
      if (map->reduce_extent <= WARP_ROW_LONGEST && items >= warp_rows_from () &&
          rows_read_along (k, map))
        {
          /* Rows of a normalization or an attention's softmax (49 to 1024 elements), and
           * thousands of them: a warp per row, eight rows a block (fewer where the rows would
           * not give every SM a block). Its lanes combine through shuffles alone, with no
           * barrier or shared memory between the passes over the row, and a block of 128 or
           * more threads is no longer spent on 49 elements. */
          map->row_threads = 32;
          map->block_threads = items >= 8 * 132 ? 256 : items >= 4 * 132 ? 128 : 64;
          return TRUE;
        }
      /* Cooperative when the loop is long enough that a thread would crawl, or there are too
       * few items to fill the GPU one thread each. */
      if (map->reduce_extent >= 1024 || items < 65536)
        {
          /* About eight elements a thread: enough for 16-byte loads (four a thread at a time)
           * and for each thread's own sum to hide the latency before the shuffles. */
          map->block_threads = CLAMP (pow2_at_least ((map->reduce_extent + 7) / 8), 128, 1024);
          map->row_threads = map->block_threads;
          return TRUE;
        }
    }
  _fb_ptx_map_clear (map);
  map->cooperative = FALSE;
  map->block_threads = 256;
  map->row_threads = 0;
  /* Four consecutive items a thread, so that contiguous accesses load 16 bytes at once: where
   * a group of four never crosses the end of the innermost collapsed loop, or along the
   * parallel loop alone (whose range's ends are checked). */
  map->vec = (map->n_nest == 1 || const_extent (map->nest[map->n_nest - 1]) % 4 == 0) &&
             items >= 4 * 256 ? 4 : 1;
  return TRUE;
}
