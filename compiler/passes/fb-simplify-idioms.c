/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Idioms of the simplify pass: formulas that exporters write out operator by operator and that
 * one operator computes, so that later passes, kernels and the user see one node.
 *
 *   layernorm        (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps)  -> LayerNormalization
 *   layernorm-scale  LayerNormalization(x) * gamma                       -> LayerNormalization
 *   layernorm-bias   LayerNormalization(x, gamma) + beta                 -> LayerNormalization
 *   gelu-erf         x * 0.5 * (1 + erf(x / sqrt 2))                     -> Gelu
 *   gelu-tanh        0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) -> Gelu(tanh)
 *   softmax          exp(x - max(x)) / sum(exp(x - max(x)))              -> Softmax
 *   hardswish        x * HardSigmoid(x), x * clip(x + 3, 0, 6) / 6       -> HardSwish
 *   swish            x * Sigmoid(x) (SiLU as PyTorch exports it)        -> Swish
 *   roll             Concat(x[s:], x[:s]) along one axis (torch.roll)    -> Gather of constant indices
 *   space-to-depth   Concat(x[0::2, 0::2], x[1::2, 0::2], ...)            -> Reshape, Transpose, Reshape
 *
 * Each is written in the association orders exporters are seen to emit; operands of Add and
 * Mul match in either order. Divisions by constants may already have become multiplications by
 * the reciprocal (rule div-to-mul), so both spellings are listed. */
#include "fb-simplify-private.h"

#include <math.h>

/* The axis where a trailing block of normalized dimensions starts, or -1. */
static int
trailing_axis (guint mask, int rank)
{
  for (int axis = 0; axis < rank; axis++)
    if (mask == (((1u << rank) - 1) & ~((1u << axis) - 1)))
      return axis;
  return -1;
}

static FbNode *
new_layer_norm (FbRewriter *rw, const FbNode *root, FbValue *x, FbValue *scale, FbValue *bias,
                int axis, float epsilon)
{
  FbValue *inputs[3] = { x, scale, bias };
  FbNode *ln = fb_rewrite_node (rw, FB_OP_LAYER_NORMALIZATION, root, inputs, bias ? 3 : 2, 1);
  FbGraph *g = fb_rewrite_graph (rw);

  ln->opset = MAX (ln->opset, 17);
  _fb_node_set_int (g, ln, "axis", axis);
  _fb_node_set_float (g, ln, "epsilon", epsilon);
  return ln;
}

/* ---- layer norm --------------------------------------------------------------------------- */

static gboolean
layernorm (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbValue *x = m->v[1];
  FbNode *mean = m->v[3]->producer, *var = m->v[4]->producer;
  int rank = x->shape.rank;
  guint mask_mean, mask_var;
  double eps;
  int axis;
  g_autoptr(FbTensor) ones = NULL;
  FbNode *ln;

  if (!fb_dtype_is_float (x->dtype) || rank < 1 || !_fb_same_type (root->outputs[0], x) ||
      !_fb_reduce_axes_mask (mean, rank, &mask_mean) ||
      !_fb_reduce_axes_mask (var, rank, &mask_var) || mask_mean != mask_var ||
      !_fb_const_uniform (m->v[5], &eps) || m->v[5]->constant->numel != 1)
    return FALSE;
  axis = trailing_axis (mask_mean, rank);
  if (axis < 0)
    return FALSE;
  for (int d = axis; d < rank; d++)
    if (x->shape.dim[d] < 0)
      return FALSE;
  ones = fb_tensor_new (x->dtype, rank - axis, x->shape.dim + axis, NULL);
  if (ones == NULL)
    return FALSE;
  for (int64_t i = 0; i < ones->numel; i++)
    fb_tensor_set_f64 (ones, i, 1.0);
  ln = new_layer_norm (rw, root, x, _fb_constant_new (fb_rewrite_graph (rw), "ones", ones), NULL,
                       axis, (float) eps);
  fb_rewrite_replace_root (rw, m, ln);
  return fb_rewrite_infer (rw, ln);
}

/* Folds a constant scale (or bias) that applies per normalized element into the LayerNorm. */
static gboolean
layernorm_affine (FbRewriter *rw, FbNode *root, const FbMatch *m, gboolean is_bias)
{
  FbNode *old = m->v[2]->producer;
  FbValue *x = m->v[1], *scale = m->v[3], *c = m->v[4];
  int rank = x->shape.rank;
  int axis_attr = (int) fb_node_attr_int (old, "axis", -1);
  int axis;
  FbShape norm;
  g_autoptr(FbTensor) t = NULL;
  FbValue *cv;
  FbNode *ln;

  if (rank < 1 || !fb_axis_normalize (axis_attr, rank, &axis) ||
      fb_node_input (old, 2) != NULL || !_fb_same_type (root->outputs[0], m->v[2]) ||
      (old->n_outputs > 1 && (old->outputs[1] || (old->n_outputs > 2 && old->outputs[2]))))
    return FALSE;
  /* A scale of ones is the only one a bias can be added behind without changing the order. */
  if (!is_bias && !_fb_const_equals (scale, 1.0))
    return FALSE;
  norm = fb_shape_make (rank - axis, x->shape.dim + axis);
  if (!fb_shape_is_static (&norm) || !_fb_shape_fits_in (&c->shape, &norm))
    return FALSE;
  t = fb_tensor_broadcast (c->constant, x->dtype, norm.rank, norm.dim, NULL);
  if (t == NULL)
    return FALSE;
  cv = _fb_constant_new (fb_rewrite_graph (rw), c->name, t);
  ln = new_layer_norm (rw, root, x, is_bias ? scale : cv, is_bias ? cv : NULL, axis,
                       fb_node_attr_float (old, "epsilon", 1e-5f));
  fb_rewrite_replace_root (rw, m, ln);
  return fb_rewrite_infer (rw, ln);
}

static gboolean
layernorm_scale (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  return layernorm_affine (rw, root, m, FALSE);
}

static gboolean
layernorm_bias (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  return layernorm_affine (rw, root, m, TRUE);
}

/* ---- activations -------------------------------------------------------------------------- */

static gboolean
unary_replacement (FbRewriter *rw, FbNode *root, const FbMatch *m, FbOpKind op, int opset,
                   const char *approximate)
{
  FbValue *x = m->v[1];
  FbNode *n;

  if (!fb_dtype_is_float (x->dtype) || !_fb_same_type (root->outputs[0], x))
    return FALSE;
  n = fb_rewrite_node (rw, op, root, &x, 1, 1);
  n->opset = MAX (n->opset, opset);
  if (approximate)
    _fb_node_set_string (fb_rewrite_graph (rw), n, "approximate", approximate);
  fb_rewrite_replace_root (rw, m, n);
  return fb_rewrite_infer (rw, n);
}

static gboolean
gelu_erf (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  return unary_replacement (rw, root, m, FB_OP_GELU, 20, "none");
}

static gboolean
gelu_tanh (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  return unary_replacement (rw, root, m, FB_OP_GELU, 20, "tanh");
}

static gboolean
clip_is_relu6 (const FbNode *clip)
{
  FbValue *lo = fb_node_input (clip, 1), *hi = fb_node_input (clip, 2);

  if (lo != NULL || hi != NULL)
    return lo != NULL && hi != NULL && _fb_const_equals (lo, 0.0) && _fb_const_equals (hi, 6.0);
  return fb_node_attr (clip, "min") && fb_node_attr (clip, "max") &&
         fb_node_attr_float (clip, "min", -1) == 0.0f && fb_node_attr_float (clip, "max", -1) == 6.0f;
}

static gboolean
hardswish (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  if (m->v[2] != NULL)
    {
      FbNode *hs = m->v[2]->producer;
      if (fabs (fb_node_attr_float (hs, "alpha", 0.2f) - 1.0 / 6.0) > 1e-6 ||
          fabs (fb_node_attr_float (hs, "beta", 0.5f) - 0.5) > 1e-6)
        return FALSE;
    }
  else if (m->v[3] == NULL || !clip_is_relu6 (m->v[3]->producer))
    return FALSE;
  return unary_replacement (rw, root, m, FB_OP_HARD_SWISH, 14, NULL);
}

/* Swish is an operator from opset 24; a model of an older opset gets it back as Sigmoid and Mul
 * when exported (fb-onnx-portable.c). One operator lets the epilogue fusion take SiLU whole:
 * spelled out, the value it is applied to has two readers and ends the chain. */
static gboolean
swish (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  return unary_replacement (rw, root, m, FB_OP_SWISH, 24, NULL);
}

/* ---- softmax ------------------------------------------------------------------------------ */

static gboolean
softmax (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbValue *x = m->v[1];
  int rank = x->shape.rank;
  guint mask_max, mask_sum;
  FbNode *n;
  int axis = -1;

  if (!fb_dtype_is_float (x->dtype) || rank < 1 || !_fb_same_type (root->outputs[0], x) ||
      !_fb_reduce_axes_mask (m->v[3]->producer, rank, &mask_max) ||
      !_fb_reduce_axes_mask (m->v[4]->producer, rank, &mask_sum) || mask_max != mask_sum)
    return FALSE;
  for (int d = 0; d < rank; d++)
    if (mask_max == 1u << d)
      axis = d;
  if (axis < 0)
    return FALSE;
  n = fb_rewrite_node (rw, FB_OP_SOFTMAX, root, &x, 1, 1);
  /* Softmax before opset 13 flattens to 2-D around the axis; the reduction is along one. */
  n->opset = MAX (n->opset, 13);
  _fb_node_set_int (fb_rewrite_graph (rw), n, "axis", axis);
  fb_rewrite_replace_root (rw, m, n);
  return fb_rewrite_infer (rw, n);
}

/* ---- roll ------------------------------------------------------------------------------- */

/* The range [lo, hi) a Slice takes of x along axis, when it cuts no other axis and steps by 1. */
static gboolean
slice_range (const FbNode *slice, const FbValue *x, int axis, int64_t *lo, int64_t *hi)
{
  const FbTensor *t[4] = { NULL };
  guint n = 0;
  const int64_t *starts = NULL, *ends = NULL, *axes = NULL;
  guint ns = 0, ne = 0, na = 0;
  if (slice->opset > 0 && slice->opset < 10)
    {
      starts = fb_node_attr_ints (slice, "starts", &ns);
      ends = fb_node_attr_ints (slice, "ends", &ne);
      axes = fb_node_attr_ints (slice, "axes", &na);
      n = ns;
    }
  else
    {
      for (guint i = 0; i < 4; i++)
        {
          const FbValue *v = fb_node_input (slice, i + 1);
          if (v != NULL && v->constant == NULL)
            return FALSE;
          t[i] = v ? v->constant : NULL;
        }
      if (t[0] == NULL || t[1] == NULL)
        return FALSE;
      n = t[0]->numel;
      ns = n;
      ne = t[1]->numel;
      na = t[2] ? t[2]->numel : 0;
    }
  if (n != 1 || ne != 1 || na > 1)
    return FALSE;
  int64_t s = starts ? starts[0] : fb_tensor_get_i64 (t[0], 0);
  int64_t e = ends ? ends[0] : fb_tensor_get_i64 (t[1], 0);
  int64_t a = na == 0 ? 0 : axes ? axes[0] : fb_tensor_get_i64 (t[2], 0);
  int64_t step = t[3] ? fb_tensor_get_i64 (t[3], 0) : 1;
  int rank = x->shape.rank, sa;
  if (step != 1 || !fb_axis_normalize (a, rank, &sa) || sa != axis)
    return FALSE;
  int64_t dim = x->shape.dim[axis];
  if (s < 0)
    s += dim;
  if (e < 0)
    e += dim;
  *lo = CLAMP (s, 0, dim);
  *hi = CLAMP (e, *lo, dim);
  return TRUE;
}

/* Two Slices of one x along the Concat's axis, concatenated: one Gather of the indices they
 * take, in their order. torch.roll exports so, twice for a shift along two axes (a shifted
 * window's); one kernel instead of two copies and a Concat. */
static gboolean
roll (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbValue *x = m->v[1];
  int rank = x->shape.rank, axis;
  int64_t lo[2], hi[2];
  if (root->n_inputs != 2 || rank < 1 || !fb_shape_is_static (&x->shape) ||
      !fb_axis_normalize (fb_node_attr_int (root, "axis", 0), rank, &axis) ||
      !slice_range (root->inputs[0]->producer, x, axis, &lo[0], &hi[0]) ||
      !slice_range (root->inputs[1]->producer, x, axis, &lo[1], &hi[1]))
    return FALSE;
  int64_t n = (hi[0] - lo[0]) + (hi[1] - lo[1]);
  if (n != root->outputs[0]->shape.dim[axis] || n == 0)
    return FALSE;
  g_autoptr(FbTensor) idx = fb_tensor_new (FB_DTYPE_INT64, 1, &n, NULL);
  if (idx == NULL)
    return FALSE;
  int64_t at = 0;
  for (int p = 0; p < 2; p++)
    for (int64_t i = lo[p]; i < hi[p]; i++)
      fb_tensor_set_f64 (idx, at++, (double) i);
  FbGraph *g = fb_rewrite_graph (rw);
  FbValue *in[2] = { x, _fb_constant_new (g, "roll_indices", idx) };
  FbNode *gather = fb_rewrite_node (rw, FB_OP_GATHER, root, in, 2, 1);
  gather->opset = MAX (gather->opset, 13);
  _fb_node_set_int (g, gather, "axis", axis);
  fb_rewrite_replace_root (rw, m, gather);
  return fb_rewrite_infer (rw, gather);
}

/* Where a Slice of x starts and how it steps along each of x's axes, and how many elements it
 * takes there; FALSE for a Slice this cannot read (bounds not constant, a negative step). */
static gboolean
slice_steps (const FbNode *slice, const FbValue *x, int64_t *start, int64_t *step, int64_t *count)
{
  int rank = x->shape.rank;
  for (int d = 0; d < rank; d++)
    start[d] = 0, step[d] = 1, count[d] = x->shape.dim[d];
  if (slice->op != FB_OP_SLICE || slice->inputs[0] != x || (slice->opset > 0 && slice->opset < 10))
    return FALSE;
  const FbTensor *t[4] = { NULL };
  for (guint i = 0; i < 4; i++)
    {
      const FbValue *v = fb_node_input (slice, i + 1);
      if (v != NULL && v->constant == NULL)
        return FALSE;
      t[i] = v ? v->constant : NULL;
    }
  if (t[0] == NULL || t[1] == NULL || t[1]->numel != t[0]->numel ||
      (t[2] && t[2]->numel != t[0]->numel) || (t[3] && t[3]->numel != t[0]->numel))
    return FALSE;
  for (int64_t i = 0; i < t[0]->numel; i++)
    {
      int d;
      if (!fb_axis_normalize (t[2] ? fb_tensor_get_i64 (t[2], i) : i, rank, &d))
        return FALSE;
      int64_t dim = x->shape.dim[d], st = t[3] ? fb_tensor_get_i64 (t[3], i) : 1;
      int64_t b = fb_tensor_get_i64 (t[0], i), e = fb_tensor_get_i64 (t[1], i);
      if (st <= 0)
        return FALSE;
      b = CLAMP (b < 0 ? b + dim : b, 0, dim);
      e = CLAMP (e < 0 ? e + dim : e, b, dim);
      start[d] = b;
      step[d] = st;
      count[d] = e > b ? (e - b - 1) / st + 1 : 0;   /* no overflow for a huge step */
    }
  return TRUE;
}

/* Concat along axis a of Slices of one x, each taking every s-th element of some axes from its
 * own phase (0 .. s-1), all of the rest, the phases in row-major order of one ordering of those
 * axes: space to depth, as a Swin's patch merging (x[:, 0::2, 0::2], x[:, 1::2, 0::2], ...)
 * and a detector's focus layer write it. It is x with those axes split in two, the phases
 * moved in front of a and merged into it: a Reshape, one Transpose and a Reshape, one pass over
 * x where there were a copy per phase. */
static gboolean
space_to_depth (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbValue *x = m->v[1];
  int rank = x->shape.rank, a;
  guint n = root->n_inputs;
  if (n < 2 || n > 64 || rank < 2 || !fb_shape_is_static (&x->shape) ||
      !fb_axis_normalize (fb_node_attr_int (root, "axis", 0), rank, &a))
    return FALSE;
  int64_t start[64][FB_MAX_RANK], step[FB_MAX_RANK], count[FB_MAX_RANK], st[FB_MAX_RANK];
  int strided[FB_MAX_RANK], ns = 0;
  for (guint k = 0; k < n; k++)
    {
      const FbNode *slice = root->inputs[k] ? root->inputs[k]->producer : NULL;
      if (slice == NULL || !slice_steps (slice, x, start[k], k == 0 ? step : st, count))
        return FALSE;
      for (int d = 0; d < rank; d++)
        {
          int64_t s = k == 0 ? step[d] : st[d], dim = x->shape.dim[d];
          /* Every phase of a strided axis takes dim / s elements; other axes are whole. */
          if (s != step[d] || (s == 1 && (start[k][d] != 0 || count[d] != dim)) ||
              (s > 1 && (d == a || dim % s != 0 || start[k][d] >= s || count[d] != dim / s)))
            return FALSE;
          if (k == 0 && s > 1)
            strided[ns++] = d;
        }
    }
  /* x split along the strided axes must stay within the ranks a tensor may have. */
  if (ns == 0 || ns > 3 || rank + ns > FB_MAX_RANK)
    return FALSE;
  int64_t phases = 1;
  for (int i = 0; i < ns; i++)
    {
      if (step[strided[i]] > (int64_t) n / phases)   /* more phases than inputs */
        return FALSE;
      phases *= step[strided[i]];
    }
  if (phases != (int64_t) n)
    return FALSE;
  /* The ordering of the strided axes in which Concat's k is each phase's row-major index. */
  static const int orders[6][3] = { { 0, 1, 2 }, { 1, 0, 2 }, { 0, 2, 1 },
                                    { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
  const int *order = NULL;
  for (int o = 0; o < 6 && order == NULL; o++)
    {
      gboolean fits = TRUE;
      for (int i = 0; i < ns && fits; i++)
        fits = orders[o][i] < ns;
      for (guint k = 0; k < n && fits; k++)
        {
          int64_t index = 0;
          for (int i = 0; i < ns; i++)
            {
              int d = strided[orders[o][i]];
              index = index * step[d] + start[k][d];
            }
          fits = index == (int64_t) k;
        }
      if (fits)
        order = orders[o];
    }
  if (order == NULL)
    return FALSE;
  /* x split: axis d becomes (dim / s, s) where strided; where each lands in the split shape. */
  int64_t split[2 * FB_MAX_RANK], perm[2 * FB_MAX_RANK];
  int outer[FB_MAX_RANK], phase[FB_MAX_RANK], r = 0, p = 0;
  for (int d = 0; d < rank; d++)
    {
      outer[d] = r;
      split[r++] = x->shape.dim[d] / step[d];
      phase[d] = -1;
      if (step[d] > 1)
        {
          phase[d] = r;
          split[r++] = step[d];
        }
    }
  for (int d = 0; d < rank; d++)
    {
      if (d == a)
        for (int i = 0; i < ns; i++)
          perm[p++] = phase[strided[order[i]]];
      perm[p++] = outer[d];
    }
  FbGraph *g = fb_rewrite_graph (rw);
  g_autoptr(FbTensor) split_shape = fb_tensor_new (FB_DTYPE_INT64, 1, (int64_t[]) { r }, NULL);
  int64_t out_rank = root->outputs[0]->shape.rank;
  g_autoptr(FbTensor) out_shape = fb_tensor_new (FB_DTYPE_INT64, 1, &out_rank, NULL);
  if (split_shape == NULL || out_shape == NULL || out_rank != rank)
    return FALSE;
  for (int i = 0; i < r; i++)
    fb_tensor_set_f64 (split_shape, i, (double) split[i]);
  for (int d = 0; d < rank; d++)
    fb_tensor_set_f64 (out_shape, d, (double) root->outputs[0]->shape.dim[d]);
  FbValue *in[2] = { x, _fb_constant_new (g, "phases_shape", split_shape) };
  FbNode *unfold = fb_rewrite_node (rw, FB_OP_RESHAPE, root, in, 2, 1);
  FbValue *t_in = fb_rewrite_output (rw, unfold, 0);
  if (!fb_rewrite_infer (rw, unfold))
    return FALSE;
  FbNode *move = fb_rewrite_node (rw, FB_OP_TRANSPOSE, root, &t_in, 1, 1);
  _fb_node_set_ints (g, move, "perm", perm, r);
  FbValue *moved = fb_rewrite_output (rw, move, 0);
  if (!fb_rewrite_infer (rw, move))
    return FALSE;
  FbValue *fold_in[2] = { moved, _fb_constant_new (g, "depth_shape", out_shape) };
  FbNode *fold = fb_rewrite_node (rw, FB_OP_RESHAPE, root, fold_in, 2, 1);
  fb_rewrite_replace_root (rw, m, fold);
  return fb_rewrite_infer (rw, fold);
}

/* ---- the table ---------------------------------------------------------------------------- */

#define X         FB_P_ANY (1)
#define C(v)      FB_P_CONST (v)
#define OP        FB_P_OP
#define OPB       FB_P_OPB

/* layer norm: 1 x, 2 x - mean, 3 mean, 4 variance, 5 epsilon */
#define LN_D          OPB (2, SUB, X, OPB (3, REDUCE_MEAN, X))
#define LN_VAR_POW    OPB (4, REDUCE_MEAN, OP (POW, FB_P_ANY (2), C (2)))
#define LN_VAR_MUL    OPB (4, REDUCE_MEAN, OP (MUL, FB_P_ANY (2), FB_P_ANY (2)))
#define LN_STD(var)   OP (SQRT, OP (ADD, var, FB_P_CONST_ANY (5)))
#define LN_DIV(var)   OP (DIV, LN_D, LN_STD (var))
#define LN_RCP(var)   OP (MUL, LN_D, OP (RECIPROCAL, LN_STD (var)))
/* affine: 1 x, 2 the LayerNormalization, 3 its scale, 4 the constant */
#define LN_NODE       OPB (2, LAYER_NORMALIZATION, X, FB_P_CONST_ANY (3))

/* GELU: 1 x */
#define HALF_X_TIMES(o)  OP (MUL, OP (MUL, X, C (0.5)), o)
#define X_TIMES_HALF(o)  OP (MUL, OP (MUL, X, o), C (0.5))
#define X_HALF_TIMES(o)  OP (MUL, X, OP (MUL, C (0.5), o))
#define ERF_ONE(xs)      OP (ADD, OP (ERF, xs), C (1))
#define XS_DIV           OP (DIV, X, C (1.4142135623730951))
#define XS_MUL           OP (MUL, X, C (0.7071067811865476))
#define CUBE_POW         OP (POW, X, C (3))
#define CUBE_MUL         OP (MUL, OP (MUL, X, X), X)
#define TANH_ONE(cube)   OP (ADD, OP (TANH, OP (MUL, OP (ADD, X, OP (MUL, cube, C (0.044715))), \
                                                C (0.7978845608028654))), C (1))

/* softmax: 1 x, 2 exp(x - max), 3 max, 4 sum */
#define SM_EXP           OPB (2, EXP, OP (SUB, X, OPB (3, REDUCE_MAX, X)))
#define SM_SUM           OPB (4, REDUCE_SUM, FB_P_ANY (2))

/* hardswish: 1 x, 2 HardSigmoid, 3 Clip */
#define HS_CLIP          OPB (3, CLIP, OP (ADD, X, C (3)))

const FbRule _fb_simplify_idioms[] = {
  { "layernorm", FB_RULE_FUSES,
    { LN_DIV (LN_VAR_POW), LN_DIV (LN_VAR_MUL), LN_RCP (LN_VAR_POW), LN_RCP (LN_VAR_MUL) },
    layernorm },
  { "layernorm-scale", FB_RULE_FUSES, { OP (MUL, LN_NODE, FB_P_CONST_ANY (4)) }, layernorm_scale },
  { "layernorm-bias", FB_RULE_FUSES, { OP (ADD, LN_NODE, FB_P_CONST_ANY (4)) }, layernorm_bias },
  { "gelu-erf", FB_RULE_FUSES,
    { HALF_X_TIMES (ERF_ONE (XS_DIV)), X_TIMES_HALF (ERF_ONE (XS_DIV)), X_HALF_TIMES (ERF_ONE (XS_DIV)),
      HALF_X_TIMES (ERF_ONE (XS_MUL)), X_TIMES_HALF (ERF_ONE (XS_MUL)), X_HALF_TIMES (ERF_ONE (XS_MUL)) },
    gelu_erf },
  { "gelu-tanh", FB_RULE_FUSES,
    { HALF_X_TIMES (TANH_ONE (CUBE_POW)), X_TIMES_HALF (TANH_ONE (CUBE_POW)),
      X_HALF_TIMES (TANH_ONE (CUBE_POW)), HALF_X_TIMES (TANH_ONE (CUBE_MUL)),
      X_TIMES_HALF (TANH_ONE (CUBE_MUL)), X_HALF_TIMES (TANH_ONE (CUBE_MUL)) },
    gelu_tanh },
  { "softmax", FB_RULE_FUSES,
    { OP (DIV, SM_EXP, SM_SUM), OP (MUL, SM_EXP, OP (RECIPROCAL, SM_SUM)) }, softmax },
  { "hardswish", FB_RULE_FUSES,
    { OP (MUL, X, OPB (2, HARD_SIGMOID, X)),
      OP (MUL, OP (MUL, X, HS_CLIP), C (1.0 / 6.0)),
      OP (MUL, X, OP (MUL, HS_CLIP, C (1.0 / 6.0))),
      OP (MUL, OP (MUL, X, C (1.0 / 6.0)), HS_CLIP),
      OP (DIV, OP (MUL, X, HS_CLIP), C (6)),
      OP (MUL, X, OP (DIV, HS_CLIP, C (6))) },
    hardswish },
  { "swish", FB_RULE_FUSES, { OP (MUL, X, OP (SIGMOID, X)) }, swish },
  { "roll", FB_RULE_FUSES, { OP (CONCAT, OP (SLICE, X), OP (SLICE, X)) }, roll },
  { "space-to-depth", FB_RULE_FUSES | FB_RULE_SHARED_OK, { OP (CONCAT, OP (SLICE, X)) },
    space_to_depth },
};

const guint _fb_simplify_n_idioms = G_N_ELEMENTS (_fb_simplify_idioms);
