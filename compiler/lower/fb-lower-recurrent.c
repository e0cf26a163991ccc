/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GRU and LSTM: every direction, the activation lists with their alpha/beta, clip,
 * linear_before_reset, input_forget, peepholes, sequence_lens, initial states and both
 * layouts, computing what fb-interp-recurrent.c computes.
 *
 * The input projection X·Wᵀ does not depend on the state, so it is one product over every time
 * step at once (sgemm for float32 on the cpu, a loop nest otherwise: on the GPU that nest is the
 * grid) into scratch, before the recurrence.
 * The recurrence runs in parallel over (direction, batch row): each such pair is an independent
 * chain of steps, its state (h, c) and gate values in rows of scratch that belong to it alone.
 * A step's gate products with R are generated loops; the rows of a batch are short in models
 * that use these ops, and a GEMV per step would cost more in calls than in arithmetic. A row's
 * time loop runs to its sequence length, so the Y of steps past it keeps the zeros a first phase
 * wrote, and Y_h / Y_c hold the state after its last step, as ONNX asks. */
#include "fb-lower-private.h"

#include "fb-rnn-spec.h"

#include <string.h>

typedef struct {
  FbLowerCtx    *c;
  FbKernel      *k;
  const FbNode  *node;
  GError       **error;
  gboolean       ok;            /* FALSE once a value could not be read (error is set) */
  FbDType        t;             /* compute type: float64 for float64 inputs, else float32 */
  int64_t        T, B, I, H, D, G;
  gboolean       batch_major, reverse;
  double         clip;
  FbRnnAct            acts[6];
  const FbValue *x, *w, *r, *bias, *lens, *h0, *c0, *p;
  guint          xw;            /* scratch [D, T*B, G*H]: X·Wᵀ in X's row order */
  guint          h, cs, g, rh;  /* scratch rows per (direction, batch): state, cell, gates, r⊙h */
} Rnn;

/* The node's activations, with errors in this module's domain. */
static gboolean
read_activations (Rnn *s, int per_dir)
{
  g_autoptr(GError) local = NULL;

  if (fb_rnn_read_activations (s->node, per_dir, s->acts, &local))
    return TRUE;
  return _fb_lower_fail (s->error, s->node, FB_LOWER_ERROR_UNSUPPORTED, "%s", local->message);
}

static FbKExpr *
fc (Rnn *s, double v)
{
  return fb_kx_const_f (s->k, s->t, v);
}

static FbKExpr *
bin (Rnn *s, FbKBinary op, FbKExpr *a, FbKExpr *b)
{
  return fb_kx_binary (s->k, op, a, b);
}

static FbKExpr *
fadd (Rnn *s, FbKExpr *a, FbKExpr *b)
{
  return fb_kx_binary (s->k, FB_KB_ADD, a, b);
}

static FbKExpr *
fmul (Rnn *s, FbKExpr *a, FbKExpr *b)
{
  return fb_kx_binary (s->k, FB_KB_MUL, a, b);
}

/* Element off of the scratch row (or block) that starts at base. */
static FbKExpr *
row_at (Rnn *s, guint arg, FbKExpr *base, FbKExpr *off)
{
  return fb_kx_load (s->k, arg, fb_kx_add (s->k, base, off));
}

static void
set (Rnn *s, GPtrArray *body, guint acc, FbKExpr *v)
{
  g_ptr_array_add (body, fb_ks_assign (s->k, acc, v));
}

static FbKStmt *
row_put (Rnn *s, guint arg, FbKExpr *base, FbKExpr *off, FbKExpr *v)
{
  return fb_ks_store (s->k, arg, fb_kx_add (s->k, base, off), v);
}

/* The activation of one direction applied to x. Where the interpreter branches, a select
 * picks between both sides, so NaN and infinities go the same way. */
static FbKExpr *
act (Rnn *s, const FbRnnAct *a, FbKExpr *x)
{
  FbKernel *k = s->k;
  FbKExpr *zero = fc (s, 0.0), *one = fc (s, 1.0);
  switch (a->kind)
    {
    case FB_RNN_SIGMOID: return fb_kx_unary (k, FB_KU_SIGMOID, x);
    case FB_RNN_TANH: return fb_kx_unary (k, FB_KU_TANH, x);
    case FB_RNN_RELU: return fb_kx_select (k, bin (s, FB_KB_GT, x, zero), x, zero);
    case FB_RNN_AFFINE: return fadd (s, fmul (s, fc (s, a->alpha), x), fc (s, a->beta));
    case FB_RNN_LEAKY_RELU:
      return fb_kx_select (k, bin (s, FB_KB_LT, x, zero), fmul (s, fc (s, a->alpha), x), x);
    case FB_RNN_THRESHOLDED_RELU:
      return fb_kx_select (k, bin (s, FB_KB_GT, x, fc (s, a->alpha)), x, zero);
    case FB_RNN_SCALED_TANH:
      return fmul (s, fc (s, a->alpha), fb_kx_unary (k, FB_KU_TANH, fmul (s, fc (s, a->beta), x)));
    case FB_RNN_HARD_SIGMOID:
      return bin (s, FB_KB_MAX, zero,
                  bin (s, FB_KB_MIN, one,
                       fadd (s, fmul (s, fc (s, a->alpha), x), fc (s, a->beta))));
    case FB_RNN_ELU:
      return fb_kx_select (k, bin (s, FB_KB_LT, x, zero),
                           fmul (s, fc (s, a->alpha),
                                 bin (s, FB_KB_SUB, fb_kx_unary (k, FB_KU_EXP, x), one)),
                           x);
    case FB_RNN_SOFTSIGN:
      return bin (s, FB_KB_DIV, x, bin (s, FB_KB_ADD, one, fb_kx_unary (k, FB_KU_ABS, x)));
    case FB_RNN_SOFTPLUS:
      {
        /* x + log(1 + e^-x) for positive x keeps e^x from overflowing. */
        FbKExpr *ax = fb_kx_unary (k, FB_KU_ABS, x);
        FbKExpr *e = fb_kx_unary (k, FB_KU_EXP, fb_kx_unary (k, FB_KU_NEG, ax));
        FbKExpr *l = fb_kx_unary (k, FB_KU_LOG, fadd (s, one, e));
        return fadd (s, bin (s, FB_KB_MAX, x, zero), l);
      }
    default:
      g_assert_not_reached ();
    }
}

/* Activation i of the row's direction: a bidirectional node's second direction (second is
 * true) has activations of its own, per_dir further on. */
static FbKExpr *
act_dir (Rnn *s, FbKExpr *second, int per_dir, int i, FbKExpr *x)
{
  FbKExpr *first = act (s, &s->acts[i], x);
  return second ? fb_kx_select (s->k, second, act (s, &s->acts[per_dir + i], x), first) : first;
}

static FbKExpr *
clipped (Rnn *s, FbKExpr *x)
{
  if (!(s->clip > 0))
    return x;
  return bin (s, FB_KB_MIN, bin (s, FB_KB_MAX, x, fc (s, -s->clip)), fc (s, s->clip));
}

/* Element coords of v as the compute type; a failure is remembered and reads as zero, and the
 * kernel is then discarded by the caller. */
static FbKExpr *
at (Rnn *s, const FbValue *v, int rank, FbKExpr **coords)
{
  FbKExpr *e = s->ok ? _fb_lower_value_at (s->c, v, rank, coords, s->error) : NULL;
  if (e == NULL)
    {
      s->ok = FALSE;
      return fc (s, 0.0);
    }
  return fb_kx_cast (s->k, e, s->t);
}

static FbKExpr *
at2 (Rnn *s, const FbValue *v, FbKExpr *a, FbKExpr *b)
{
  FbKExpr *coords[2] = { a, b };
  return at (s, v, 2, coords);
}

static FbKExpr *
at3 (Rnn *s, const FbValue *v, FbKExpr *a, FbKExpr *b, FbKExpr *c)
{
  FbKExpr *coords[3] = { a, b, c };
  return at (s, v, 3, coords);
}

static FbKExpr *
ix (Rnn *s, int64_t v)
{
  return fb_kx_index (s->k, v);
}

static FbDType
dtype_of (const FbValue *v)
{
  return v->constant ? v->constant->dtype : v->dtype;
}

/* Phase 0: xw[d, row, g] = Σ_i X[row, i] W[d, g, i] for every row of X (all steps at once). */
static void
emit_projection (Rnn *s)
{
  FbKernel *k = s->k;
  int64_t GH = s->G * s->H, TB = s->T * s->B;
  double work = 2.0 * s->D * TB * GH * s->I;
  /* sgemm is a host library; on a GPU the loop nest below is the grid. */
  if (dtype_of (s->x) == FB_DTYPE_FLOAT32 && dtype_of (s->w) == FB_DTYPE_FLOAT32 &&
      !_fb_lower_for_gpu (s->c))
    {
      FbKExpr *d;
      GPtrArray *body = _fb_lower_nest (s->c, 1, &s->D, &d, work);
      guint xa = _fb_lower_arg (s->c, s->x, FB_KARG_INPUT);
      guint wa = _fb_lower_arg (s->c, s->w, FB_KARG_INPUT);
      _fb_lower_sgemm (s->c, body, FALSE, TRUE, ix (s, TB), ix (s, GH), ix (s, s->I),
                       xa, ix (s, 0), s->I, wa, fb_kx_mul_c (k, d, GH * s->I), s->I,
                       s->xw, fb_kx_mul_c (k, d, TB * GH), GH);
      return;
    }
  int64_t dims[4] = { s->D, s->batch_major ? s->B : s->T, s->batch_major ? s->T : s->B, GH };
  FbKExpr *oc[4], *i;
  GPtrArray *body = _fb_lower_nest (s->c, 4, dims, oc, work);
  guint acc = fb_kernel_new_acc (k, s->t);
  g_ptr_array_add (body, fb_ks_assign (k, acc, fc (s, 0.0)));
  GPtrArray *l = _fb_lower_loop (k, body, ix (s, s->I), &i);
  FbKExpr *p = fmul (s, at3 (s, s->x, oc[1], oc[2], i), at3 (s, s->w, oc[0], oc[3], i));
  g_ptr_array_add (l, fb_ks_assign (k, acc, fadd (s, fb_kx_acc (k, acc), p)));
  FbKExpr *row = fb_kx_add (k, fb_kx_mul_c (k, oc[1], dims[2]), oc[2]);
  FbKExpr *idx = fb_kx_add (k, fb_kx_mul_c (k, oc[0], TB * GH),
                            fb_kx_add (k, fb_kx_mul_c (k, row, GH), oc[3]));
  g_ptr_array_add (body, fb_ks_store (k, s->xw, idx, fb_kx_acc (k, acc)));
}

/* Y's coordinates of (t, d, b, j) and the states' of (d, b, j), in the node's layout. */
static void
y_coords (Rnn *s, FbKExpr *t, FbKExpr *d, FbKExpr *b, FbKExpr *j, FbKExpr **yc)
{
  FbKExpr *a[4] = { t, d, b, j }, *m[4] = { b, t, d, j };
  memcpy (yc, s->batch_major ? m : a, sizeof a);
}

static void
state_coords (Rnn *s, FbKExpr *d, FbKExpr *b, FbKExpr *j, FbKExpr **sc)
{
  sc[0] = s->batch_major ? b : d;
  sc[1] = s->batch_major ? d : b;
  sc[2] = j;
}

static const FbValue *
output (Rnn *s, guint i)
{
  return i < s->node->n_outputs ? s->node->outputs[i] : NULL;
}

/* Y of the steps past a row's sequence length is zero: written everywhere first. */
static void
emit_zero_y (Rnn *s)
{
  const FbValue *y = output (s, 0);
  int rank;
  int64_t dims[FB_MAX_RANK];
  if (y == NULL || s->lens == NULL || !_fb_lower_dims (y, &rank, dims) || rank != 4)
    return;
  if (s->lens->constant)
    {
      gboolean full = TRUE;
      for (int64_t b = 0; b < s->lens->constant->numel; b++)
        full = full && fb_tensor_get_i64 (s->lens->constant, b) >= s->T;
      if (full)
        return;
    }
  FbKExpr *oc[4];
  GPtrArray *body = _fb_lower_nest (s->c, 4, dims, oc, (double) s->T * s->D * s->B * s->H);
  if (s->ok && !_fb_lower_store (s->c, body, y, oc, fb_kx_cast (s->k, fc (s, 0.0), y->dtype),
                                 s->error))
    s->ok = FALSE;
}

/* acc = Σ_k R[d, row0 + j, k] * vec[base + k]: one row of a gate product with the state. */
static void
emit_rdot (Rnn *s, GPtrArray *body, guint acc, FbKExpr *d, FbKExpr *row, guint vec, FbKExpr *base)
{
  FbKExpr *kk;
  GPtrArray *l = _fb_lower_loop (s->k, body, ix (s, s->H), &kk);
  FbKExpr *p = fmul (s, at3 (s, s->r, d, row, kk), row_at (s, vec, base, kk));
  g_ptr_array_add (l, fb_ks_assign (s->k, acc, fadd (s, fb_kx_acc (s->k, acc), p)));
}

/* Wb[g] + Rb[g] of direction d (zero without B). */
static FbKExpr *
biases (Rnn *s, FbKExpr *d, FbKExpr *g, gboolean input_only)
{
  if (s->bias == NULL)
    return fc (s, 0.0);
  FbKExpr *wb = at2 (s, s->bias, d, g);
  if (input_only)
    return wb;
  return fadd (s, wb, at2 (s, s->bias, d, fb_kx_add_c (s->k, g, s->G * s->H)));
}

/* The LSTM cell of one step; gate order in W, R and B: input, output, forget, cell. */
static void
emit_lstm_step (Rnn *s, GPtrArray *step, FbKExpr *d, FbKExpr *db, FbKExpr *xw_row, FbKExpr **yc_t)
{
  FbKernel *k = s->k;
  int64_t H = s->H, GH = 4 * H;
  FbKExpr *g, *j;
  gboolean couple = fb_node_attr_int (s->node, "input_forget", 0) != 0;
  FbKExpr *hb = fb_kx_mul_c (k, db, H), *gb = fb_kx_mul_c (k, db, GH);
  guint acc = fb_kernel_new_acc (k, s->t);

  GPtrArray *gl = _fb_lower_loop (k, step, ix (s, GH), &g);
  set (s, gl, acc, fadd (s, row_at (s, s->xw, xw_row, g), biases (s, d, g, FALSE)));
  emit_rdot (s, gl, acc, d, g, s->h, hb);
  g_ptr_array_add (gl, row_put (s, s->g, gb, g, fb_kx_acc (k, acc)));

  GPtrArray *jl = _fb_lower_loop (k, step, ix (s, H), &j);
  guint cj = fb_kernel_new_acc (k, s->t), it = fb_kernel_new_acc (k, s->t);
  guint cn = fb_kernel_new_acc (k, s->t), hn = fb_kernel_new_acc (k, s->t);
  /* Bidirectional nodes have a second set of activations; the direction is known per row. */
  FbKExpr *dsel = s->D == 2 ? bin (s, FB_KB_EQ, d, ix (s, 1)) : NULL;
  FbKExpr *gate[4];
  for (int q = 0; q < 4; q++)
    gate[q] = row_at (s, s->g, gb, fb_kx_add_c (k, j, q * H));
  g_ptr_array_add (jl, fb_ks_assign (k, cj, row_at (s, s->cs, hb, j)));
  FbKExpr *peep[3];
  for (int q = 0; q < 3; q++)
    peep[q] = s->p ? at2 (s, s->p, d, fb_kx_add_c (k, j, q * H)) : NULL;
  FbKExpr *pi = gate[0], *pf = gate[2];
  if (s->p)
    {
      pi = fadd (s, pi, fmul (s, peep[0], fb_kx_acc (k, cj)));
      pf = fadd (s, pf, fmul (s, peep[2], fb_kx_acc (k, cj)));
    }
  g_ptr_array_add (jl, fb_ks_assign (k, it, act_dir (s, dsel, 3, 0, clipped (s, pi))));
  FbKExpr *ft = couple ? bin (s, FB_KB_SUB, fc (s, 1.0), fb_kx_acc (k, it))
                       : act_dir (s, dsel, 3, 0, clipped (s, pf));
  FbKExpr *ct = act_dir (s, dsel, 3, 1, clipped (s, gate[3]));
  set (s, jl, cn, fadd (s, fmul (s, ft, fb_kx_acc (k, cj)), fmul (s, fb_kx_acc (k, it), ct)));
  FbKExpr *po = gate[1];
  if (s->p)
    po = fadd (s, po, fmul (s, peep[1], fb_kx_acc (k, cn)));
  FbKExpr *ot = act_dir (s, dsel, 3, 0, clipped (s, po));
  set (s, jl, hn, fmul (s, ot, act_dir (s, dsel, 3, 2, fb_kx_acc (k, cn))));
  g_ptr_array_add (jl, row_put (s, s->cs, hb, j, fb_kx_acc (k, cn)));
  g_ptr_array_add (jl, row_put (s, s->h, hb, j, fb_kx_acc (k, hn)));
  const FbValue *y = output (s, 0);
  yc_t[3] = j;
  if (y && s->ok && !_fb_lower_store (s->c, jl, y, yc_t, fb_kx_acc (k, hn), s->error))
    s->ok = FALSE;
}

/* The GRU cell of one step; gate order z (update), r (reset), h. */
static void
emit_gru_step (Rnn *s, GPtrArray *step, FbKExpr *d, FbKExpr *db, FbKExpr *xw_row, FbKExpr **yc_t)
{
  FbKernel *k = s->k;
  int64_t H = s->H, GH = 3 * H;
  gboolean lbr = fb_node_attr_int (s->node, "linear_before_reset", 0) != 0;
  FbKExpr *hb = fb_kx_mul_c (k, db, H), *gb = fb_kx_mul_c (k, db, GH), *g, *j;
  FbKExpr *dsel = s->D == 2 ? bin (s, FB_KB_EQ, d, ix (s, 1)) : NULL;
  guint acc = fb_kernel_new_acc (k, s->t);

  /* z and r see the previous h directly. */
  GPtrArray *gl = _fb_lower_loop (k, step, ix (s, 2 * H), &g);
  set (s, gl, acc, fadd (s, row_at (s, s->xw, xw_row, g), biases (s, d, g, FALSE)));
  emit_rdot (s, gl, acc, d, g, s->h, hb);
  FbKExpr *zr = act_dir (s, dsel, 2, 0, clipped (s, fb_kx_acc (k, acc)));
  g_ptr_array_add (gl, row_put (s, s->g, gb, g, zr));

  FbKExpr *zj, *rj, *hj, *ht;
  GPtrArray *jl;
  if (!lbr)
    {
      /* ht = g(x·Wh + Wbh + Rh·(r ⊙ h) + Rbh): r ⊙ h first, in its own row. */
      jl = _fb_lower_loop (k, step, ix (s, H), &j);
      rj = row_at (s, s->g, gb, fb_kx_add_c (k, j, H));
      hj = row_at (s, s->h, hb, j);
      g_ptr_array_add (jl, row_put (s, s->rh, hb, j, fmul (s, rj, hj)));
      jl = _fb_lower_loop (k, step, ix (s, H), &j);
      FbKExpr *row = fb_kx_add_c (k, j, 2 * H);
      set (s, jl, acc, fadd (s, row_at (s, s->xw, xw_row, row), biases (s, d, row, FALSE)));
      emit_rdot (s, jl, acc, d, row, s->rh, hb);
      ht = act_dir (s, dsel, 2, 1, clipped (s, fb_kx_acc (k, acc)));
    }
  else
    {
      /* ht = g(x·Wh + Wbh + r ⊙ (Rh·h + Rbh)): every ht before h changes. */
      jl = _fb_lower_loop (k, step, ix (s, H), &j);
      FbKExpr *row = fb_kx_add_c (k, j, 2 * H);
      set (s, jl, acc, s->bias ? at2 (s, s->bias, d, fb_kx_add_c (k, j, 5 * H)) : fc (s, 0.0));
      emit_rdot (s, jl, acc, d, row, s->h, hb);
      rj = row_at (s, s->g, gb, fb_kx_add_c (k, j, H));
      FbKExpr *pre = fadd (s, fadd (s, row_at (s, s->xw, xw_row, row), biases (s, d, row, TRUE)),
                           fmul (s, rj, fb_kx_acc (k, acc)));
      g_ptr_array_add (jl, row_put (s, s->g, gb, row, act_dir (s, dsel, 2, 1, clipped (s, pre))));
      jl = _fb_lower_loop (k, step, ix (s, H), &j);
      ht = row_at (s, s->g, gb, fb_kx_add_c (k, j, 2 * H));
    }
  zj = row_at (s, s->g, gb, j);
  hj = row_at (s, s->h, hb, j);
  guint hn = fb_kernel_new_acc (k, s->t);
  set (s, jl, hn, fadd (s, fmul (s, bin (s, FB_KB_SUB, fc (s, 1.0), zj), ht), fmul (s, zj, hj)));
  g_ptr_array_add (jl, row_put (s, s->h, hb, j, fb_kx_acc (k, hn)));
  const FbValue *y = output (s, 0);
  yc_t[3] = j;
  if (y && s->ok && !_fb_lower_store (s->c, jl, y, yc_t, fb_kx_acc (k, hn), s->error))
    s->ok = FALSE;
}

/* The RNN cell of one step: every new h from the old h, so they go through the gate row. */
static void
emit_rnn_step (Rnn *s, GPtrArray *step, FbKExpr *d, FbKExpr *db, FbKExpr *xw_row, FbKExpr **yc_t)
{
  FbKernel *k = s->k;
  int64_t H = s->H;
  FbKExpr *hb = fb_kx_mul_c (k, db, H), *g, *j;
  FbKExpr *dsel = s->D == 2 ? bin (s, FB_KB_EQ, d, ix (s, 1)) : NULL;
  guint acc = fb_kernel_new_acc (k, s->t);

  GPtrArray *gl = _fb_lower_loop (k, step, ix (s, H), &g);
  set (s, gl, acc, fadd (s, row_at (s, s->xw, xw_row, g), biases (s, d, g, FALSE)));
  emit_rdot (s, gl, acc, d, g, s->h, hb);
  g_ptr_array_add (gl, row_put (s, s->g, hb, g, act_dir (s, dsel, 1, 0, clipped (s, fb_kx_acc (k, acc)))));
  GPtrArray *jl = _fb_lower_loop (k, step, ix (s, H), &j);
  guint hn = fb_kernel_new_acc (k, s->t);
  set (s, jl, hn, row_at (s, s->g, hb, j));
  g_ptr_array_add (jl, row_put (s, s->h, hb, j, fb_kx_acc (k, hn)));
  const FbValue *y = output (s, 0);
  yc_t[3] = j;
  if (y && s->ok && !_fb_lower_store (s->c, jl, y, yc_t, fb_kx_acc (k, hn), s->error))
    s->ok = FALSE;
}

/* The recurrence, in parallel over (direction, batch row). */
static void
emit_recurrence (Rnn *s)
{
  FbKernel *k = s->k;
  int64_t DB = s->D * s->B, H = s->H, GH = s->G * s->H;
  gboolean lstm = s->node->op == FB_OP_LSTM;
  FbKExpr *db, *j, *step;
  double work = (double) DB * s->T * (2.0 * GH * H + 24.0 * H);
  GPtrArray *body = _fb_lower_nest (s->c, 1, &DB, &db, work);
  FbKExpr *d = fb_kx_binary (k, FB_KB_DIV, db, ix (s, s->B));
  FbKExpr *b = fb_kx_binary (k, FB_KB_MOD, db, ix (s, s->B));
  FbKExpr *hb = fb_kx_mul_c (k, db, H), *sc[3];

  GPtrArray *jl = _fb_lower_loop (k, body, ix (s, H), &j);
  state_coords (s, d, b, j, sc);
  g_ptr_array_add (jl, row_put (s, s->h, hb, j, s->h0 ? at (s, s->h0, 3, sc) : fc (s, 0.0)));
  if (lstm)
    g_ptr_array_add (jl, row_put (s, s->cs, hb, j, s->c0 ? at (s, s->c0, 3, sc) : fc (s, 0.0)));

  /* A length outside [0, T] (which the interpreter refuses) is clamped: no access strays. */
  guint len = fb_kernel_new_acc (k, FB_DTYPE_INT64);
  FbKExpr *lv = ix (s, s->T);
  if (s->lens)
    {
      FbKExpr *bc[1] = { b };
      FbKExpr *raw = s->ok ? _fb_lower_value_at (s->c, s->lens, 1, bc, s->error) : NULL;
      if (raw == NULL)
        s->ok = FALSE;
      else
        lv = bin (s, FB_KB_MIN, bin (s, FB_KB_MAX, fb_kx_cast (k, raw, FB_DTYPE_INT64), ix (s, 0)),
                  ix (s, s->T));
    }
  g_ptr_array_add (body, fb_ks_assign (k, len, lv));
  GPtrArray *sl = _fb_lower_loop (k, body, fb_kx_acc (k, len), &step);

  FbKExpr *back = s->reverse ? fb_kx_const_i (k, FB_DTYPE_BOOL, 1)
                : s->D == 2 ? bin (s, FB_KB_EQ, d, ix (s, 1)) : fb_kx_const_i (k, FB_DTYPE_BOOL, 0);
  FbKExpr *last = fb_kx_add_c (k, fb_kx_acc (k, len), -1);
  FbKExpr *t = fb_kx_select (k, back, bin (s, FB_KB_SUB, last, step), step);
  FbKExpr *xrow = s->batch_major ? fb_kx_add (k, fb_kx_mul_c (k, b, s->T), t)
                                 : fb_kx_add (k, fb_kx_mul_c (k, t, s->B), b);
  FbKExpr *xw_row = fb_kx_add (k, fb_kx_mul_c (k, d, s->T * s->B * GH), fb_kx_mul_c (k, xrow, GH));
  FbKExpr *yc[4];
  y_coords (s, t, d, b, NULL, yc);
  if (lstm)
    emit_lstm_step (s, sl, d, db, xw_row, yc);
  else if (s->node->op == FB_OP_RNN)
    emit_rnn_step (s, sl, d, db, xw_row, yc);
  else
    emit_gru_step (s, sl, d, db, xw_row, yc);

  for (guint o = 1; o < (lstm ? 3u : 2u); o++)
    {
      const FbValue *v = output (s, o);
      if (v == NULL || !s->ok)
        continue;
      jl = _fb_lower_loop (k, body, ix (s, H), &j);
      state_coords (s, d, b, j, sc);
      FbKExpr *val = row_at (s, o == 1 ? s->h : s->cs, hb, j);
      if (!_fb_lower_store (s->c, jl, v, sc, val, s->error))
        s->ok = FALSE;
    }
}

gboolean
_fb_lower_recurrent (FbLowerCtx *c, const FbNode *node, GError **error)
{
  Rnn s = { .c = c, .k = c->k, .node = node, .error = error, .ok = TRUE };
  gboolean lstm = node->op == FB_OP_LSTM;
  int rx, rw, rr;
  int64_t dx[FB_MAX_RANK], dw[FB_MAX_RANK], dr[FB_MAX_RANK];
  s.x = node->inputs[0];
  s.w = node->inputs[1];
  s.r = node->inputs[2];
  s.bias = fb_node_input (node, 3);
  s.lens = fb_node_input (node, 4);
  s.h0 = fb_node_input (node, 5);
  s.c0 = lstm ? fb_node_input (node, 6) : NULL;
  s.p = lstm ? fb_node_input (node, 7) : NULL;
  if (!_fb_lower_dims (s.x, &rx, dx) || !_fb_lower_dims (s.w, &rw, dw) ||
      !_fb_lower_dims (s.r, &rr, dr) || rx != 3 || rw != 3 || rr != 3)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "X, W and R must be static and 3-D");
  const char *dir = fb_node_attr_string (node, "direction", "forward");
  s.D = g_str_equal (dir, "bidirectional") ? 2 : 1;
  if (!g_str_equal (dir, "forward") && !g_str_equal (dir, "reverse") && s.D != 2)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "direction '%s' is unknown",
                           dir);
  s.reverse = g_str_equal (dir, "reverse");
  gboolean rnn = node->op == FB_OP_RNN;
  s.G = lstm ? 4 : rnn ? 1 : 3;
  s.batch_major = fb_node_attr_int (node, "layout", 0) != 0;
  s.T = s.batch_major ? dx[1] : dx[0];
  s.B = s.batch_major ? dx[0] : dx[1];
  s.I = dx[2];
  s.H = fb_node_attr_int (node, "hidden_size", dr[2]);
  s.clip = fb_node_attr_float (node, "clip", 0);
  s.t = dtype_of (s.x) == FB_DTYPE_FLOAT64 ? FB_DTYPE_FLOAT64 : FB_DTYPE_FLOAT32;
  if (dw[0] != s.D || dw[1] != s.G * s.H || dw[2] != s.I || dr[0] != s.D ||
      dr[1] != s.G * s.H || dr[2] != s.H)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                           "W or R does not fit the directions, gates and sizes");
  int64_t want[4] = { 2 * s.G * s.H, s.B * s.H, s.B * s.H, 3 * s.H };
  const FbValue *opt[4] = { s.bias, s.h0, s.c0, s.p };
  for (int i = 0; i < 4; i++)
    if (opt[i] && _fb_lower_numel (opt[i]) != s.D * want[i])
      return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "input '%s' has the wrong size",
                             opt[i]->name);
  if (s.lens && _fb_lower_numel (s.lens) != s.B)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "sequence_lens must have B entries");
  if (!read_activations (&s, lstm ? 3 : rnn ? 1 : 2))
    return FALSE;

  int64_t xw_dims[3] = { s.D, s.T * s.B, s.G * s.H };
  int64_t row[2] = { s.D * s.B, s.H }, grow[2] = { s.D * s.B, s.G * s.H };
  s.xw = _fb_lower_scratch (c, "xw", s.t, 3, xw_dims);
  s.h = _fb_lower_scratch (c, "h", s.t, 2, row);
  s.g = _fb_lower_scratch (c, "gates", s.t, 2, grow);
  if (lstm)
    s.cs = _fb_lower_scratch (c, "c", s.t, 2, row);
  else if (!rnn && !fb_node_attr_int (node, "linear_before_reset", 0))
    s.rh = _fb_lower_scratch (c, "rh", s.t, 2, row);
  emit_projection (&s);
  emit_zero_y (&s);
  emit_recurrence (&s);
  return s.ok;
}
