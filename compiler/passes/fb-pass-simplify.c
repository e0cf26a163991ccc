/* SPDX-License-Identifier: GPL-3.0-or-later */
/* simplify: algebraic rewrites and idiom recognition, as rule tables run by the rewrite engine.
 *
 * The algebra here removes work that does nothing (x*1, x+0, x-0, x/1, x^1, a Concat of one
 * tensor, a Cast to the same type, a Reshape to the same shape, a Pad of nothing, a Slice of
 * everything), composes movement (a
 * Transpose of a Transpose, a Reshape of a Reshape), trades a division by a constant for a
 * multiplication by its reciprocal, and turns the Reshape -> Gemm -> Reshape sandwich that
 * exporters wrap around every linear layer of a transformer into MatMul + Add, which the
 * epilogue fusion can then take whole. The idioms (LayerNorm, GELU, Softmax, HardSwish) live in
 * fb-simplify-idioms.c, the moves of rows across linear layers in fb-simplify-rows.c. The summary counts how often each named rule fired.
 *
 * Requires: inferred shapes; constants folded (patterns look for constant operands).
 * Preserves: the ids and names of every value the rest of the graph reads.
 * Invalidates: the node list (rewrites append and re-sort), uses tables. */
#include "fb-simplify-private.h"

#include <math.h>
#include <string.h>

gboolean
_fb_transpose_perm (const FbNode *n, int rank, int64_t *perm)
{
  guint len = 0;
  const int64_t *p = fb_node_attr_ints (n, "perm", &len);

  if (rank <= 0 || rank > FB_MAX_RANK)
    return FALSE;
  if (p == NULL)
    {
      for (int i = 0; i < rank; i++)
        perm[i] = rank - 1 - i;
      return TRUE;
    }
  if ((int) len != rank)
    return FALSE;
  for (int i = 0; i < rank; i++)
    {
      int axis;
      if (!fb_axis_normalize (p[i], rank, &axis))
        return FALSE;
      perm[i] = axis;
    }
  return TRUE;
}

gboolean
_fb_same_type (const FbValue *out, const FbValue *x)
{
  g_assert (out != NULL && x != NULL);
  if (out->dtype != x->dtype || out->shape.rank < 0 || out->shape.rank != x->shape.rank)
    return FALSE;
  for (int i = 0; i < out->shape.rank; i++)
    if (out->shape.dim[i] != x->shape.dim[i] ||
        (out->shape.dim[i] < 0 && (out->shape.sym[i] == NULL || out->shape.sym[i] != x->shape.sym[i])))
      return FALSE;
  return TRUE;
}

gboolean
_fb_reduce_axes_mask (const FbNode *n, int rank, guint *mask)
{
  g_autofree int64_t *axes = NULL;
  guint n_axes = 0;

  g_assert (mask != NULL);
  *mask = 0;
  if (rank <= 0 || rank > FB_MAX_RANK || fb_node_attr_int (n, "keepdims", 1) != 1)
    return FALSE;
  if (fb_node_input (n, 1) != NULL)
    {
      axes = _fb_const_ints (fb_node_input (n, 1), FB_MAX_RANK, &n_axes);
      if (axes == NULL)
        return FALSE;
    }
  else
    {
      const int64_t *a = fb_node_attr_ints (n, "axes", &n_axes);
      axes = g_memdup2 (a, sizeof (int64_t) * MAX (n_axes, 1));
    }
  if (n_axes == 0)
    {
      if (fb_node_attr_int (n, "noop_with_empty_axes", 0) != 0)
        return FALSE;
      *mask = (1u << rank) - 1;
      return TRUE;
    }
  for (guint i = 0; i < n_axes; i++)
    {
      int axis;
      if (!fb_axis_normalize (axes[i], rank, &axis))
        return FALSE;
      *mask |= 1u << axis;
    }
  return TRUE;
}

/* ---- identities --------------------------------------------------------------------------- */

static gboolean
forward_x (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbValue *x = m->v[1];
  return _fb_same_type (root->outputs[0], x) && fb_rewrite_forward (rw, m, x);
}

static gboolean
concat_single (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  return root->n_inputs == 1 && forward_x (rw, root, m);
}

static gboolean
cast_noop (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  return fb_node_attr_int (root, "to", 0) == (int64_t) m->v[1]->dtype && forward_x (rw, root, m);
}

static gboolean
reshape_noop (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  return fb_shape_is_static (&m->v[1]->shape) && forward_x (rw, root, m);
}

/* A Pad that adds nothing on any side (PyTorch pads a shifted window's image to a multiple of the
 * window whether or not it needs to) is x. */
static gboolean
pad_zero (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  const int64_t *attr = NULL;
  guint n = 0;
  const FbValue *pv = fb_node_input (root, 1);
  if (root->opset > 0 && root->opset < 11)
    attr = fb_node_attr_ints (root, "pads", &n);
  else if (pv == NULL || pv->constant == NULL)
    return FALSE;
  else
    n = pv->constant->numel;
  for (guint i = 0; i < n; i++)
    if ((attr ? attr[i] : fb_tensor_get_i64 (pv->constant, i)) != 0)
      return FALSE;
  return forward_x (rw, root, m);
}

/* A Slice forward through every axis that keeps the whole shape (PyTorch crops the padded
 * window image back, x[:, :H, :W, :], also where nothing was padded) is x. */
static gboolean
slice_all (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  const FbValue *steps = fb_node_input (root, 4);
  if (steps != NULL)
    {
      if (steps->constant == NULL)
        return FALSE;
      for (int64_t i = 0; i < steps->constant->numel; i++)
        if (fb_tensor_get_i64 (steps->constant, i) != 1)
          return FALSE;
    }
  return fb_shape_is_static (&m->v[1]->shape) && forward_x (rw, root, m);
}

/* The first element and step along every axis of a Slice with constant bounds (the opset-10
 * form) and forward steps over an input of extents dims; FALSE for anything else. */
static gboolean
forward_slice (const FbNode *s, int rank, const int64_t *dims, int64_t *start, int64_t *step)
{
  const FbValue *ends = fb_node_input (s, 2), *axes = fb_node_input (s, 3),
                *steps = fb_node_input (s, 4);
  guint ns = 0, na = 0, nst = 0;
  g_autofree int64_t *st = _fb_const_ints (fb_node_input (s, 1), FB_MAX_RANK, &ns);
  g_autofree int64_t *ax = axes ? _fb_const_ints (axes, FB_MAX_RANK, &na) : NULL;
  g_autofree int64_t *sp = steps ? _fb_const_ints (steps, FB_MAX_RANK, &nst) : NULL;
  if ((s->opset > 0 && s->opset < 10) || st == NULL || ends == NULL || ends->constant == NULL ||
      (axes && (ax == NULL || na != ns)) || (steps && (sp == NULL || nst != ns)))
    return FALSE;
  for (int d = 0; d < rank; d++)
    {
      start[d] = 0;
      step[d] = 1;
    }
  for (guint i = 0; i < ns; i++)
    {
      int64_t a = ax ? ax[i] : (int64_t) i;
      if (a < 0)
        a += rank;
      if (a < 0 || a >= rank || (sp && sp[i] <= 0))
        return FALSE;
      int64_t first = st[i] < 0 ? st[i] + dims[a] : st[i];
      start[a] = CLAMP (first, 0, dims[a]);
      step[a] = sp ? sp[i] : 1;
    }
  return TRUE;
}

static FbValue *
ints_const (FbGraph *g, const char *base, int n, const int64_t *v)
{
  int64_t dim = n;
  FbTensor *t = fb_tensor_new (FB_DTYPE_INT64, 1, &dim, NULL);
  memcpy (fb_tensor_data_mut (t), v, sizeof (int64_t) * n);
  return _fb_constant_new (g, base, t);
}

/* A Slice of a Slice (forward steps, constant bounds) is one Slice of the first one's input:
 * a patch merging's x[0::2, 1::2] is exported as a Slice of rows, then one of columns, two
 * passes where one does, and the rows' Slice dies once all its readers read x. */
static gboolean
slice_slice (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbNode *inner = root->inputs[0]->producer;
  FbValue *x = m->v[1];
  const FbShape *xs = &x->shape, *mid = &root->inputs[0]->shape, *os = &root->outputs[0]->shape;
  int rank = xs->rank;
  int64_t s1[FB_MAX_RANK], k1[FB_MAX_RANK], s2[FB_MAX_RANK], k2[FB_MAX_RANK];
  int64_t starts[FB_MAX_RANK], ends[FB_MAX_RANK], axes[FB_MAX_RANK], steps[FB_MAX_RANK];
  if (inner == NULL || !fb_shape_is_static (xs) || !fb_shape_is_static (mid) ||
      !fb_shape_is_static (os) ||
      mid->rank != rank || os->rank != rank ||
      !forward_slice (inner, rank, xs->dim, s1, k1) || !forward_slice (root, rank, mid->dim, s2, k2))
    return FALSE;
  for (int d = 0; d < rank; d++)
    {
      if (os->dim[d] < 1)
        return FALSE;
      axes[d] = d;
      steps[d] = k1[d] * k2[d];
      starts[d] = s1[d] + s2[d] * k1[d];
      ends[d] = starts[d] + (os->dim[d] - 1) * steps[d] + 1;
    }
  FbGraph *g = fb_rewrite_graph (rw);
  FbValue *inputs[5] = { x, ints_const (g, root->name, rank, starts),
                         ints_const (g, root->name, rank, ends),
                         ints_const (g, root->name, rank, axes),
                         ints_const (g, root->name, rank, steps) };
  FbNode *s = fb_rewrite_node (rw, FB_OP_SLICE, root, inputs, 5, 1);
  fb_rewrite_replace_root (rw, m, s);
  return fb_rewrite_infer (rw, s);
}

/* x / c -> x * (1/c) for floating-point constants: multiplication is cheaper everywhere and
 * fuses as a scale. */
static gboolean
div_to_mul (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbValue *c = m->v[2];
  g_autoptr(FbTensor) r = NULL;
  FbValue *inputs[2];
  FbNode *mul;

  if (!fb_dtype_is_float (c->dtype) || c->constant->numel > 4096)
    return FALSE;
  r = fb_tensor_new (c->dtype, c->constant->rank, c->constant->dims, NULL);
  if (r == NULL)
    return FALSE;
  for (int64_t i = 0; i < c->constant->numel; i++)
    {
      double v = fb_tensor_get_f64 (c->constant, i);
      if (v == 0 || !isfinite (v) || !isfinite (1.0 / v))
        return FALSE;
      fb_tensor_set_f64 (r, i, 1.0 / v);
    }
  inputs[0] = m->v[1];
  inputs[1] = _fb_constant_new (fb_rewrite_graph (rw), c->name, r);
  mul = fb_rewrite_node (rw, FB_OP_MUL, root, inputs, 2, 1);
  fb_rewrite_replace_root (rw, m, mul);
  return fb_rewrite_infer (rw, mul);
}

/* (x * a) * b -> x * (a*b) for uniform constants. */
static gboolean
mul_mul_const (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbValue *a = m->v[2], *b = m->v[3];
  double va, vb;
  FbValue *inputs[2];
  FbNode *mul;
  const FbTensor *shape_of;
  g_autoptr(FbTensor) t = NULL;

  if (!fb_dtype_is_float (root->outputs[0]->dtype) || !_fb_const_uniform (a, &va) ||
      !_fb_const_uniform (b, &vb) || a->constant->numel != 1 || b->constant->numel != 1)
    return FALSE;
  shape_of = a->constant->rank >= b->constant->rank ? a->constant : b->constant;
  t = fb_tensor_new (root->outputs[0]->dtype, shape_of->rank, shape_of->dims, NULL);
  if (t == NULL)
    return FALSE;
  fb_tensor_set_f64 (t, 0, va * vb);
  inputs[0] = m->v[1];
  inputs[1] = _fb_constant_new (fb_rewrite_graph (rw), a->name, t);
  mul = fb_rewrite_node (rw, FB_OP_MUL, root, inputs, 2, 1);
  fb_rewrite_replace_root (rw, m, mul);
  return fb_rewrite_infer (rw, mul);
}

/* (x + c1) reshaped, + c2 -> (x + c) reshaped, c = c1 + c2 made whole in x's shape: two
 * constant Adds on either side of a Reshape are one. A Swin's shifted windows add their
 * relative position bias to the scores, view them per window and add the windows' mask: one
 * Add, whose constant a product reads as its C operand, where there were two passes. Neither
 * Add may broadcast x into anything bigger, and the whole constant is at most 4 Mi elements. */
static gboolean
add_reshape_add (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbValue *x = m->v[1], *c1 = m->v[2], *shape = m->v[3], *c2 = m->v[4];
  const FbNode *reshape = NULL;
  for (guint i = 1; i < m->n_nodes; i++)
    if (m->nodes[i]->op == FB_OP_RESHAPE)
      reshape = m->nodes[i];
  gboolean overflow = FALSE;
  if (reshape == NULL || !fb_dtype_is_float (x->dtype) || !fb_shape_is_static (&x->shape) ||
      !_fb_same_type (reshape->inputs[0], x) || !_fb_same_type (root->outputs[0], reshape->outputs[0]) ||
      fb_shape_numel (&x->shape, &overflow) > ((int64_t) 4 << 20) || overflow)
    return FALSE;
  const FbValue *outer = root->outputs[0];
  g_autoptr(FbTensor) whole = fb_tensor_broadcast (c1->constant, x->dtype, x->shape.rank,
                                                   x->shape.dim, NULL);
  g_autoptr(FbTensor) second = fb_tensor_broadcast (c2->constant, x->dtype, outer->shape.rank,
                                                    outer->shape.dim, NULL);
  if (whole == NULL || second == NULL || whole->numel != second->numel)
    return FALSE;
  for (int64_t i = 0; i < whole->numel; i++)
    fb_tensor_set_f64 (whole, i, fb_tensor_get_f64 (whole, i) + fb_tensor_get_f64 (second, i));
  FbValue *add_in[2] = { x, _fb_constant_new (fb_rewrite_graph (rw), c1->name, whole) };
  FbNode *add = fb_rewrite_node (rw, FB_OP_ADD, root, add_in, 2, 1);
  FbValue *sum = fb_rewrite_output (rw, add, 0);
  if (!fb_rewrite_infer (rw, add))
    return FALSE;
  FbValue *reshape_in[2] = { sum, shape };
  FbNode *moved = fb_rewrite_node (rw, FB_OP_RESHAPE, root, reshape_in, 2, 1);
  fb_rewrite_replace_root (rw, m, moved);
  return fb_rewrite_infer (rw, moved);
}

/* ---- movement ----------------------------------------------------------------------------- */

static gboolean
transpose_transpose (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbValue *x = m->v[1];
  FbNode *inner = x == NULL ? NULL : root->inputs[0]->producer;
  int rank = x->shape.rank;
  int64_t p1[FB_MAX_RANK], p2[FB_MAX_RANK], q[FB_MAX_RANK];
  gboolean identity = TRUE;
  FbNode *t;

  if (inner == NULL || !_fb_transpose_perm (inner, rank, p1) || !_fb_transpose_perm (root, rank, p2))
    return FALSE;
  /* out[j] = mid[p2[j]] = x[p1[p2[j]]] */
  for (int j = 0; j < rank; j++)
    {
      q[j] = p1[p2[j]];
      identity = identity && q[j] == j;
    }
  if (identity)
    return forward_x (rw, root, m);
  t = fb_rewrite_node (rw, FB_OP_TRANSPOSE, root, &x, 1, 1);
  _fb_node_set_ints (fb_rewrite_graph (rw), t, "perm", q, rank);
  fb_rewrite_replace_root (rw, m, t);
  return fb_rewrite_infer (rw, t);
}

/* A Reshape to a constant target does not care how its input was shaped, as long as the target
 * has no 0 ("copy this extent from the input") that would now copy from a different tensor. */
static gboolean
reshape_reshape (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbValue *inputs[2] = { m->v[1], m->v[2] };
  g_autofree int64_t *target = NULL;
  guint n = 0;
  int64_t allowzero = fb_node_attr_int (root, "allowzero", 0);
  FbNode *r;

  target = _fb_const_ints (m->v[2], FB_MAX_RANK, &n);
  if (target == NULL)
    return FALSE;
  for (guint i = 0; i < n; i++)
    if (target[i] == 0 && allowzero == 0)
      return FALSE;
  if (_fb_same_type (root->outputs[0], m->v[1]))
    return fb_rewrite_forward (rw, m, m->v[1]);
  r = fb_rewrite_node (rw, FB_OP_RESHAPE, root, inputs, 2, 1);
  if (allowzero)
    _fb_node_set_int (fb_rewrite_graph (rw), r, "allowzero", allowzero);
  fb_rewrite_replace_root (rw, m, r);
  return fb_rewrite_infer (rw, r);
}

/* Reshape(Gemm(Reshape(x, [M, K]), W, C), [..., N]) -> MatMul(x', W') + C' with x' = x viewed as
 * [..., K]: the way exporters write a linear layer on a 3-D activation. */
static gboolean
gemm_to_matmul (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbGraph *g = fb_rewrite_graph (rw);
  FbValue *x = m->v[1], *w = m->v[2], *out = root->outputs[0];
  FbNode *gemm = root->inputs[0]->producer;
  FbValue *c = fb_node_input (gemm, 2);
  float alpha = fb_node_attr_float (gemm, "alpha", 1.0f);
  float beta = fb_node_attr_float (gemm, "beta", 1.0f);
  gboolean trans_b = fb_node_attr_int (gemm, "transB", 0) != 0;
  const FbTensor *wt = w->constant;
  const FbValue *a = gemm->inputs[0];
  int rank = out->shape.rank;
  int64_t k, n_out, rows = 1;
  FbValue *w2 = w, *mm_in[2], *add_in[2];
  FbNode *mm, *add;
  FbValue *mm_out;
  gboolean x_fits = TRUE;

  if (fb_node_attr_int (gemm, "transA", 0) != 0 || rank < 3 || a->shape.rank != 2 ||
      !fb_shape_is_static (&a->shape) || !fb_shape_is_static (&out->shape) || wt->rank != 2 ||
      wt->dtype != FB_DTYPE_FLOAT32 || x->dtype != FB_DTYPE_FLOAT32)
    return FALSE;
  k = a->shape.dim[1];
  n_out = trans_b ? wt->dims[0] : wt->dims[1];
  if ((trans_b ? wt->dims[1] : wt->dims[0]) != k || out->shape.dim[rank - 1] != n_out)
    return FALSE;
  for (int i = 0; i < rank - 1; i++)
    rows *= out->shape.dim[i];
  if (rows != a->shape.dim[0])
    return FALSE;
  /* x may already be the activation with its rows unflattened; otherwise it is reshaped so. */
  if (x->shape.rank != rank || !fb_shape_is_static (&x->shape) || x->shape.dim[rank - 1] != k)
    x_fits = FALSE;
  for (int i = 0; i < rank - 1 && x_fits; i++)
    x_fits = out->shape.dim[i] == x->shape.dim[i];
  if (c != NULL && (c->constant == NULL || c->constant->numel != n_out ||
                    c->dtype != FB_DTYPE_FLOAT32))
    return FALSE;

  if (trans_b || alpha != 1.0f)
    {
      int64_t dims[2] = { k, n_out };
      g_autoptr(FbTensor) t = _fb_tensor_f32 (2, dims);
      if (t == NULL)
        return FALSE;
      for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < n_out; j++)
          fb_tensor_set_f64 (t, i * n_out + j,
                             alpha * fb_tensor_get_f64 (wt, trans_b ? j * k + i : i * n_out + j));
      w2 = _fb_constant_new (g, w->name, t);
    }
  if (!x_fits)
    {
      int64_t n_dims = rank;
      g_autoptr(FbTensor) target = fb_tensor_new (FB_DTYPE_INT64, 1, &n_dims, NULL);
      FbValue *r_in[2];
      FbNode *r;
      for (int i = 0; i < rank - 1; i++)
        fb_tensor_set_f64 (target, i, (double) out->shape.dim[i]);
      fb_tensor_set_f64 (target, rank - 1, (double) k);
      r_in[0] = x;
      r_in[1] = _fb_constant_new (g, "shape", target);
      r = fb_rewrite_node (rw, FB_OP_RESHAPE, a->producer, r_in, 2, 1);
      fb_node_add_prov (g, r, a->producer->prov, a->producer->n_prov);
      x = fb_rewrite_output (rw, r, 0);
      if (!fb_rewrite_infer (rw, r))
        return FALSE;
    }
  mm_in[0] = x;
  mm_in[1] = w2;
  mm = fb_rewrite_node (rw, FB_OP_MATMUL, gemm, mm_in, 2, 1);
  fb_node_add_prov (g, mm, gemm->prov, gemm->n_prov);
  if (c == NULL)
    {
      fb_rewrite_replace_root (rw, m, mm);
      return fb_rewrite_infer (rw, mm);
    }
  mm_out = fb_rewrite_output (rw, mm, 0);
  if (!fb_rewrite_infer (rw, mm))
    return FALSE;
  {
    g_autoptr(FbTensor) bias = _fb_tensor_f32 (1, &n_out);
    if (bias == NULL)
      return FALSE;
    for (int64_t j = 0; j < n_out; j++)
      fb_tensor_set_f64 (bias, j, beta * fb_tensor_get_f64 (c->constant, j));
    add_in[0] = mm_out;
    add_in[1] = beta == 1.0f && c->constant->rank == 1 ? c : _fb_constant_new (g, c->name, bias);
  }
  add = fb_rewrite_node (rw, FB_OP_ADD, root, add_in, 2, 1);
  fb_rewrite_replace_root (rw, m, add);
  return fb_rewrite_infer (rw, add);
}

#define X       FB_P_ANY (1)
#define C(v)    FB_P_CONST (v)

static const FbRule algebra[] = {
  { "mul-one",  0, { FB_P_OP (MUL, X, C (1)) }, forward_x },
  { "add-zero", 0, { FB_P_OP (ADD, X, C (0)) }, forward_x },
  { "sub-zero", 0, { FB_P_OP (SUB, X, C (0)) }, forward_x },
  { "div-one",  0, { FB_P_OP (DIV, X, C (1)) }, forward_x },
  { "pow-one",  0, { FB_P_OP (POW, X, C (1)) }, forward_x },
  { "concat-single", 0, { FB_P_OP (CONCAT, X) }, concat_single },
  { "cast-noop", 0, { FB_P_OP (CAST, X) }, cast_noop },
  { "reshape-noop", 0, { FB_P_OP (RESHAPE, X) }, reshape_noop },
  { "pad-zero", 0, { FB_P_OP (PAD, X) }, pad_zero },
  { "slice-all", 0, { FB_P_OP (SLICE, X) }, slice_all },
  { "slice-slice", FB_RULE_SHARED_OK, { FB_P_OP (SLICE, FB_P_OP (SLICE, X)) }, slice_slice },
  { "div-to-mul", 0, { FB_P_OP (DIV, X, FB_P_CONST_ANY (2)) }, div_to_mul },
  { "mul-mul-const", 0,
    { FB_P_OP (MUL, FB_P_OP (MUL, X, FB_P_CONST_ANY (2)), FB_P_CONST_ANY (3)) }, mul_mul_const },
  { "add-reshape-add", 0,
    { FB_P_OP (ADD, FB_P_OP (RESHAPE, FB_P_OP (ADD, X, FB_P_CONST_ANY (2)), FB_P_CONST_ANY (3)),
               FB_P_CONST_ANY (4)) }, add_reshape_add },
  { "transpose-transpose", FB_RULE_SHARED_OK,
    { FB_P_OP (TRANSPOSE, FB_P_OP (TRANSPOSE, X)) }, transpose_transpose },
  { "reshape-reshape", FB_RULE_SHARED_OK,
    { FB_P_OP (RESHAPE, FB_P_OP (RESHAPE, X), FB_P_CONST_ANY (2)),
      FB_P_OP (RESHAPE, FB_P_OP (FLATTEN, X), FB_P_CONST_ANY (2)),
      FB_P_OP (RESHAPE, FB_P_OP (SQUEEZE, X), FB_P_CONST_ANY (2)),
      FB_P_OP (RESHAPE, FB_P_OP (UNSQUEEZE, X), FB_P_CONST_ANY (2)) }, reshape_reshape },
  { "gemm-to-matmul", 0,
    { FB_P_OP (RESHAPE, FB_P_OP (GEMM, FB_P_OP (RESHAPE, X), FB_P_CONST_ANY (2))) },
    gemm_to_matmul },
};

#undef X
#undef C

gboolean
_fb_pass_simplify (FbPassContext *ctx, FbGraph *graph, GError **error)
{
  const guint n_algebra = G_N_ELEMENTS (algebra);
  const guint n_rules = n_algebra + _fb_simplify_n_idioms + _fb_simplify_n_rows;
  g_autofree FbRule *rules = g_new (FbRule, n_rules);
  g_autofree guint *fired = g_new0 (guint, n_rules);
  g_autoptr(GString) counts = g_string_new (NULL);
  guint total = 0;

  /* At a node where an idiom and an identity both match, the idiom wins. */
  memcpy (rules, _fb_simplify_idioms, sizeof (FbRule) * _fb_simplify_n_idioms);
  memcpy (rules + _fb_simplify_n_idioms, algebra, sizeof (FbRule) * n_algebra);
  memcpy (rules + _fb_simplify_n_idioms + n_algebra, _fb_simplify_rows,
          sizeof (FbRule) * _fb_simplify_n_rows);
  if (!fb_rewrite_run (ctx, graph, rules, n_rules, fired, error))
    return FALSE;
  for (guint r = 0; r < n_rules; r++)
    if (fired[r])
      {
        g_string_append_printf (counts, "%s%s ×%u", counts->len ? ", " : "", rules[r].name, fired[r]);
        total += fired[r];
      }
  if (total)
    _fb_pass_note (ctx, "%u rewrites: %s", total, counts->str);
  return TRUE;
}
