/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Values as scalar expressions: loads with broadcasting, elementwise producers computed in
 * registers, sunk chains, loop nests, and elementwise phases with coalesced dimensions. */
#include "fb-lower-private.h"

#include <math.h>
#include <string.h>

void
_fb_lower_strides (int rank, const int64_t *dims, int64_t *strides)
{
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--)
    {
      strides[d] = s;
      s *= dims[d];
    }
}

FbKExpr *
_fb_lower_index (FbKernel *k, int rank, const int64_t *dims, FbKExpr **coords)
{
  int64_t strides[FB_MAX_RANK];
  _fb_lower_strides (rank, dims, strides);
  FbKExpr *index = fb_kx_index (k, 0);
  for (int d = 0; d < rank; d++)
    if (dims[d] != 1)
      index = fb_kx_add (k, index, fb_kx_mul_c (k, coords[d], strides[d]));
  return index;
}

/* v's extents in the coordinate system of the current phase (rank coords). */
static void
dims_in (FbLowerCtx *c, const FbValue *v, int rank, int *r, int64_t *dims)
{
  int vr;
  int64_t vd[FB_MAX_RANK];
  if (!_fb_lower_dims (v, &vr, vd))
    vr = 0;
  if (c->merged_rank >= 0 && rank == c->merged_rank)
    {
      int64_t aligned[FB_MAX_RANK];
      int pad = c->out_rank - vr;
      for (int d = 0; d < c->out_rank; d++)
        aligned[d] = d < pad ? 1 : vd[d - pad];
      for (int g = 0; g < c->merged_rank; g++)
        {
          dims[g] = 1;
          for (int d = c->group[g]; d < c->group[g + 1]; d++)
            dims[g] *= aligned[d];
        }
      *r = c->merged_rank;
      return;
    }
  *r = vr;
  memcpy (dims, vd, sizeof (int64_t) * vr);
}

static FbKExpr *
const_scalar (FbKernel *k, const FbTensor *t)
{
  if (fb_dtype_is_float (t->dtype))
    return fb_kx_const_f (k, t->dtype, fb_tensor_get_f64 (t, 0));
  return fb_kx_const_i (k, t->dtype, fb_tensor_get_i64 (t, 0));
}

/* m is computed in the phase being built (the last one, when it is the member's): its work
 * is that phase's too. */
static void
attribute (FbLowerCtx *c, const FbNode *m)
{
  if (c->attributed == NULL || c->k->phases->len <= c->member_first)
    return;
  fb_kphase_add_prov (g_ptr_array_index (c->k->phases, c->k->phases->len - 1), m->prov, m->n_prov);
  g_hash_table_add (c->attributed, (gpointer) m);
}

/* An inlined index map (a movement member of a fused group) at its reader's coordinates: its
 * output aligns with their trailing ones, broadcast where its extent is 1. */
static FbKExpr *
index_map_expr (FbLowerCtx *c, const FbNode *m, int rank, FbKExpr **coords, GError **error)
{
  int r;
  int64_t dims[FB_MAX_RANK];
  FbKExpr *own[FB_MAX_RANK];
  if (!_fb_lower_dims (m->outputs[0], &r, dims) || r > rank)
    {
      _fb_lower_fail (error, m, FB_LOWER_ERROR_SHAPE, "output shape is not static");
      return NULL;
    }
  for (int d = 0; d < r; d++)
    own[d] = dims[d] == 1 ? fb_kx_index (c->k, 0) : coords[rank - r + d];
  return _fb_lower_movement_at (c, m, own, error);
}

static FbKExpr *
node_expr (FbLowerCtx *c, const FbNode *m, int rank, FbKExpr **coords, GError **error)
{
  attribute (c, m);
  if (!_fb_lower_is_elementwise (m) && _fb_lower_is_index_map (m))
    return index_map_expr (c, m, rank, coords, error);
  FbKExpr *in[16] = { 0 };
  if (m->n_inputs > G_N_ELEMENTS (in))
    {
      _fb_lower_fail (error, m, FB_LOWER_ERROR_UNSUPPORTED, "too many inputs");
      return NULL;
    }
  for (guint j = 0; j < m->n_inputs; j++)
    if (m->inputs[j])
      {
        /* BatchNormalization's parameters and PRelu's slope index the channel, not the
         * trailing dimensions: they are handled by the scalar op from loads of their own. */
        if (m->op == FB_OP_BATCH_NORMALIZATION && j > 0)
          continue;
        in[j] = _fb_lower_value_at (c, m->inputs[j], rank, coords, error);
        if (in[j] == NULL)
          return NULL;
      }
  if (m->op == FB_OP_BATCH_NORMALIZATION)
    return _fb_lower_batchnorm_expr (c, m, rank, coords, in[0], error);
  return _fb_lower_scalar_op (c, m, in, error);
}

FbKExpr *
_fb_lower_value_at (FbLowerCtx *c, const FbValue *v, int rank, FbKExpr **coords, GError **error)
{
  if (v == c->subst_value)
    return c->subst_expr;
  if (_fb_lower_is_scalar_const (v))
    return const_scalar (c->k, v->constant);
  const FbNode *m = g_hash_table_lookup (c->inline_of, v);
  if (m)
    return node_expr (c, m, rank, coords, error);

  int r;
  int64_t dims[FB_MAX_RANK];
  dims_in (c, v, rank, &r, dims);
  if (r > rank)
    {
      _fb_lower_fail (error, c->node, FB_LOWER_ERROR_UNSUPPORTED,
                      "value '%s' has a higher rank than its consumer", v->name);
      return NULL;
    }
  guint arg = _fb_lower_arg (c, v, FB_KARG_INPUT);
  return fb_kx_load (c->k, arg, _fb_lower_index (c->k, r, dims, coords + (rank - r)));
}

gboolean
_fb_lower_store (FbLowerCtx *c, GPtrArray *body, const FbValue *v, FbKExpr **coords, FbKExpr *x,
                 GError **error)
{
  const FbValue *end = g_hash_table_lookup (c->sunk, v);
  int r;
  int64_t dims[FB_MAX_RANK];
  dims_in (c, v, c->merged_rank >= 0 ? c->merged_rank : v->shape.rank, &r, dims);
  if (end)
    {
      guint acc = fb_kernel_new_acc (c->k, x->dtype);
      g_ptr_array_add (body, fb_ks_assign (c->k, acc, x));
      c->subst_value = v;
      c->subst_expr = fb_kx_acc (c->k, acc);
      x = node_expr (c, end->producer, r, coords, error);
      c->subst_value = NULL;
      c->subst_expr = NULL;
      if (x == NULL)
        return FALSE;
      v = end;
    }
  guint arg = _fb_lower_arg (c, v, FB_KARG_OUTPUT);
  FbDType t = g_array_index (c->k->args, FbKArg, arg).dtype;
  g_ptr_array_add (body, fb_ks_store (c->k, arg, _fb_lower_index (c->k, r, dims, coords),
                                      fb_kx_cast (c->k, x, t)));
  return TRUE;
}

FbKExpr *
_fb_lower_load_stored (FbLowerCtx *c, const FbValue *v, FbKExpr **coords)
{
  int r;
  int64_t dims[FB_MAX_RANK];
  g_return_val_if_fail (g_hash_table_lookup (c->sunk, v) == NULL, NULL);
  dims_in (c, v, c->merged_rank >= 0 ? c->merged_rank : v->shape.rank, &r, dims);
  guint arg = _fb_lower_arg (c, v, FB_KARG_OUTPUT);
  return fb_kx_load (c->k, arg, _fb_lower_index (c->k, r, dims, coords));
}

GPtrArray *
_fb_lower_loop (FbKernel *k, GPtrArray *body, FbKExpr *extent, FbKExpr **var_expr)
{
  guint var = fb_kernel_new_var (k);
  FbKStmt *loop = fb_ks_loop (k, var, extent);
  g_ptr_array_add (body, loop);
  *var_expr = fb_kx_var (k, var);
  return loop->loop.body;
}

GPtrArray *
_fb_lower_nest (FbLowerCtx *c, int rank, const int64_t *dims, FbKExpr **coords, double work)
{
  int first = -1;
  for (int d = 0; d < rank && first < 0; d++)
    if (dims[d] != 1)
      first = d;
  FbKPhase *phase = fb_kernel_add_phase (c->k, first >= 0 ? dims[first] : 1, work);
  GPtrArray *body = phase->body;
  gboolean parallel_made = FALSE;
  for (int d = 0; d < rank; d++)
    {
      if (dims[d] == 1)
        {
          coords[d] = fb_kx_index (c->k, 0);
          continue;
        }
      GPtrArray *inner = _fb_lower_loop (c->k, body, fb_kx_index (c->k, dims[d]), &coords[d]);
      if (!parallel_made)
        {
          ((FbKStmt *) g_ptr_array_index (body, body->len - 1))->loop.parallel = TRUE;
          parallel_made = TRUE;
        }
      body = inner;
    }
  if (!parallel_made)
    {
      FbKExpr *unused;
      body = _fb_lower_loop (c->k, body, fb_kx_index (c->k, 1), &unused);
      ((FbKStmt *) g_ptr_array_index (phase->body, 0))->loop.parallel = TRUE;
    }
  return body;
}

/* ---- elementwise phases ------------------------------------------------------------------- */

static void
collect_values (FbLowerCtx *c, const FbValue *v, GPtrArray *out)
{
  if (_fb_lower_is_scalar_const (v) || g_ptr_array_find (out, v, NULL))
    return;
  g_ptr_array_add (out, (gpointer) v);
  const FbNode *m = g_hash_table_lookup (c->inline_of, v);
  if (m)
    for (guint j = 0; j < m->n_inputs; j++)
      if (m->inputs[j])
        collect_values (c, m->inputs[j], out);
}

/* Groups consecutive output dimensions that every value involved broadcasts the same way, so
 * that a [1,32,56,56] + [1,32,1,1] loop is two loops (channel, pixel), not four. */
static void
plan_merge (FbLowerCtx *c, const FbNode *node, int rank, const int64_t *dims)
{
  g_autoptr(GPtrArray) values = g_ptr_array_new ();
  gboolean unmergeable = FALSE;      /* a member with coordinates of its own */
  for (guint j = 0; j < node->n_inputs; j++)
    if (node->inputs[j])
      collect_values (c, node->inputs[j], values);
  for (guint i = 0; i < values->len; i++)
    {
      const FbNode *m = g_hash_table_lookup (c->inline_of, g_ptr_array_index (values, i));
      /* An index map's input has coordinates of its own: no dimensions merge across it. */
      if (m && (m->op == FB_OP_BATCH_NORMALIZATION ||
                (!_fb_lower_is_elementwise (m) && _fb_lower_is_index_map (m))))
        unmergeable = TRUE;
    }
  if (node->op == FB_OP_BATCH_NORMALIZATION || unmergeable)
    {
      c->merged_rank = -1;
      return;
    }
  c->out_rank = rank;
  memcpy (c->out_dims, dims, sizeof (int64_t) * rank);
  int ng = 0;
  c->group[0] = 0;
  guint64 sig = 0;               /* per value: broadcast along the current group */
  gboolean have_sig = FALSE;
  for (int d = 0; d < rank; d++)
    {
      guint64 s = 0;
      if (dims[d] != 1)
        for (guint i = 0; i < values->len && i < 64; i++)
          {
            const FbValue *v = g_ptr_array_index (values, i);
            int vr = v->constant ? v->constant->rank : v->shape.rank;
            int pad = rank - vr;
            int64_t e = d < pad ? 1 : (v->constant ? v->constant->dims[d - pad]
                                                   : v->shape.dim[d - pad]);
            if (e == 1)
              s |= G_GUINT64_CONSTANT (1) << i;
          }
      if (d > 0 && (dims[d] == 1 || !have_sig || s == sig) && values->len <= 64)
        {
          if (dims[d] != 1)
            {
              sig = s;
              have_sig = TRUE;
            }
          continue;
        }
      if (d > 0)
        c->group[++ng] = d;
      sig = s;
      have_sig = dims[d] != 1;
    }
  c->group[++ng] = rank;
  c->merged_rank = ng;
}

gboolean
_fb_lower_elementwise (FbLowerCtx *c, const FbNode *node, GError **error)
{
  const FbValue *out = node->outputs[0];
  int rank;
  int64_t dims[FB_MAX_RANK];
  FbKExpr *coords[FB_MAX_RANK];
  gboolean ok;

  if (!_fb_lower_dims (out, &rank, dims))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "output shape is not static");
  plan_merge (c, node, rank, dims);
  int lr = rank;
  int64_t ld[FB_MAX_RANK];
  memcpy (ld, dims, sizeof ld);
  if (c->merged_rank >= 0)
    {
      lr = c->merged_rank;
      for (int g = 0; g < lr; g++)
        {
          ld[g] = 1;
          for (int d = c->group[g]; d < c->group[g + 1]; d++)
            ld[g] *= dims[d];
        }
    }
  int64_t numel = 1;
  for (int d = 0; d < rank; d++)
    numel *= dims[d];
  GPtrArray *body = _fb_lower_nest (c, lr, ld, coords, (double) numel);
  /* The node itself is computed like an inlined producer, then stored. */
  g_hash_table_insert (c->inline_of, (gpointer) out, (gpointer) node);
  FbKExpr *x = _fb_lower_value_at (c, out, lr, coords, error);
  g_hash_table_remove (c->inline_of, out);
  ok = x != NULL && _fb_lower_store (c, body, out, coords, x, error);
  c->merged_rank = -1;
  return ok;
}
