/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The simplify pass: algebraic identities and idioms, each on a small graph, each checked
 * against the interpreter. */
#include "fb-test-passes.h"

#include <math.h>
#include <string.h>

static FbPipeline *
simplify (FbGraph *g)
{
  g_autoptr(FbPipelineOptions) o = tp_only ("simplify", NULL);
  FbPipeline *p = tp_run (g, o);
  tp_assert_stages_agree (p, 7);
  return p;
}

static void
assert_summary_has (FbPipeline *p, const char *text)
{
  FbStage *s = fb_pipeline_stage_by_name (p, "simplify");
  if (strstr (s->summary, text) == NULL)
    g_error ("summary '%s' does not mention '%s'", s->summary, text);
}

static void
test_identities (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (2, 3));
  FbValue *v = tp_op (g, FB_OP_MUL, "mul", x, tp_scalar (g, 1), NULL);
  v = tp_op (g, FB_OP_ADD, "add", tp_scalar (g, 0), v, NULL);
  v = tp_op (g, FB_OP_SUB, "sub", v, tp_scalar (g, 0), NULL);
  v = tp_op (g, FB_OP_DIV, "div", v, tp_scalar (g, 1), NULL);
  v = tp_op (g, FB_OP_RELU, "relu", v, NULL);
  tp_output (g, v);
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");

  g_assert_cmpuint (out->nodes->len, ==, 1);
  g_assert_nonnull (tp_find (out, FB_OP_RELU));
  assert_summary_has (p, "mul-one ×1");
  assert_summary_has (p, "add-zero ×1");
}

/* x * ones that broadcast x to a bigger shape is not x. */
static void
test_identity_that_broadcasts_stays (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 1, TP_DIMS (3));
  FbValue *ones = tp_const (g, "ones", 2, TP_DIMS (2, 3), TP_VALS (1, 1, 1, 1, 1, 1));
  FbValue *v = tp_op (g, FB_OP_MUL, "mul", x, ones, NULL);
  tp_output (g, v);
  g_autoptr(FbPipeline) p = simplify (g);

  g_assert_cmpuint (tp_count (tp_stage_graph (p, "simplify"), FB_OP_MUL, FALSE), ==, 1);
}

static void
test_transposes (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 3, TP_DIMS (2, 3, 4));
  FbValue *a = tp_op (g, FB_OP_TRANSPOSE, "t1", x, NULL);
  FbValue *b, *c, *d;
  FbNode *t;
  guint n = 0;
  const int64_t *perm;

  tp_attr_ints (g, a, "perm", 3, TP_DIMS (1, 0, 2));
  b = tp_op (g, FB_OP_TRANSPOSE, "t2", a, NULL);
  tp_attr_ints (g, b, "perm", 3, TP_DIMS (1, 0, 2));        /* cancels t1 */
  c = tp_op (g, FB_OP_TRANSPOSE, "t3", b, NULL);
  tp_attr_ints (g, c, "perm", 3, TP_DIMS (0, 2, 1));
  d = tp_op (g, FB_OP_TRANSPOSE, "t4", c, NULL);
  tp_attr_ints (g, d, "perm", 3, TP_DIMS (1, 0, 2));        /* composes with t3 */
  tp_output (g, tp_op (g, FB_OP_RELU, "relu", d, NULL));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");

  g_assert_cmpuint (tp_count (out, FB_OP_TRANSPOSE, FALSE), ==, 1);
  t = tp_find (out, FB_OP_TRANSPOSE);
  g_assert_true (t->inputs[0]->is_input);
  perm = fb_node_attr_ints (t, "perm", &n);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpint (perm[0], ==, 2);
  g_assert_cmpint (perm[1], ==, 0);
  g_assert_cmpint (perm[2], ==, 1);
}

static void
test_reshapes (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 3, TP_DIMS (2, 3, 4));
  FbValue *a = tp_op (g, FB_OP_RESHAPE, "r1", x, tp_ints (g, 2, TP_DIMS (6, 4)), NULL);
  FbValue *b = tp_op (g, FB_OP_RESHAPE, "r2", a, tp_ints (g, 2, TP_DIMS (4, -1)), NULL);
  FbValue *c = tp_op (g, FB_OP_RESHAPE, "r3", b, tp_ints (g, 3, TP_DIMS (2, 3, 4)), NULL);
  tp_output (g, tp_op (g, FB_OP_RELU, "relu", c, NULL));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");

  /* Back to x's own shape: no reshape at all. */
  g_assert_cmpuint (tp_count (out, FB_OP_RESHAPE, FALSE), ==, 0);
}

/* Shifted windows' attention: scores + position bias, viewed per window, + the windows' mask,
 * viewed back: one Add of one whole constant, no Reshape left; an Add that would broadcast the
 * view into something bigger stays as it is. */
static void
test_add_reshape_add (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 3, TP_DIMS (4, 2, 3));
  FbValue *bias = tp_const (g, "bias", 2, TP_DIMS (2, 3), TP_VALS (0.5, -1, 2, 0.25, 3, -2));
  FbValue *mask = tp_const (g, "mask", 4, TP_DIMS (2, 1, 1, 3), TP_VALS (0, -100, 0, -100, 0, 0));
  FbValue *v = tp_op (g, FB_OP_ADD, "bias_add", x, bias, NULL);
  v = tp_op (g, FB_OP_RESHAPE, "by_window", v, tp_ints (g, 4, TP_DIMS (2, 2, 2, 3)), NULL);
  v = tp_op (g, FB_OP_ADD, "mask_add", mask, v, NULL);
  v = tp_op (g, FB_OP_RESHAPE, "unwindow", v, tp_ints (g, 3, TP_DIMS (4, 2, 3)), NULL);
  tp_output (g, tp_op (g, FB_OP_RELU, "relu", v, NULL));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");
  g_assert_cmpuint (tp_count (out, FB_OP_ADD, FALSE), ==, 1);
  g_assert_cmpuint (tp_count (out, FB_OP_RESHAPE, FALSE), ==, 0);
  FbNode *add = tp_find (out, FB_OP_ADD);
  g_assert_true (add->inputs[0]->is_input);
  g_assert_cmpint (add->inputs[1]->constant->numel, ==, 24);
  assert_summary_has (p, "add-reshape-add ×1");

  FbGraph *h = tp_graph (17);
  x = tp_input (h, "x", 3, TP_DIMS (4, 2, 3));
  v = tp_op (h, FB_OP_ADD, "bias_add", x, tp_const (h, "bias", 1, TP_DIMS (3), TP_VALS (1, 2, 3)), NULL);
  v = tp_op (h, FB_OP_RESHAPE, "flat", v, tp_ints (h, 1, TP_DIMS (24)), NULL);
  v = tp_op (h, FB_OP_ADD, "wider", v, tp_const (h, "col", 2, TP_DIMS (2, 1), TP_VALS (0, 1)), NULL);
  tp_output (h, v);
  g_autoptr(FbPipeline) q = simplify (h);
  g_assert_cmpuint (tp_count (tp_stage_graph (q, "simplify"), FB_OP_ADD, FALSE), ==, 2);
}

static void
test_div_to_mul (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (2, 3));
  FbValue *c = tp_const (g, "c", 1, TP_DIMS (3), TP_VALS (4, -0.5, 3));
  tp_output (g, tp_op (g, FB_OP_DIV, "div", x, c, NULL));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");
  FbNode *mul = tp_find (out, FB_OP_MUL);

  g_assert_nonnull (mul);
  g_assert_cmpuint (tp_count (out, FB_OP_DIV, FALSE), ==, 0);
  g_assert_cmpfloat_with_epsilon (fb_tensor_get_f64 (mul->inputs[1]->constant, 0), 0.25, 1e-7);
  g_assert_cmpfloat_with_epsilon (fb_tensor_get_f64 (mul->inputs[1]->constant, 1), -2.0, 1e-7);
  /* The shared divisor is untouched. */
  g_assert_cmpfloat (fb_tensor_get_f64 (c->constant, 0), ==, 4.0);
}

/* LayerNorm as exporters decompose it: (x - mean) / sqrt(var + eps) * gamma + beta. */
static FbValue *
decomposed_layernorm (FbGraph *g, FbValue *x, gboolean square_by_mul, gboolean affine)
{
  FbValue *mean = tp_op (g, FB_OP_REDUCE_MEAN, "mean", x, NULL);
  FbValue *d, *sq, *var, *std, *n;

  tp_attr_ints (g, mean, "axes", 1, TP_DIMS (-1));
  d = tp_op (g, FB_OP_SUB, "sub", x, mean, NULL);
  sq = square_by_mul ? tp_op (g, FB_OP_MUL, "sq", d, d, NULL)
                     : tp_op (g, FB_OP_POW, "sq", d, tp_scalar (g, 2), NULL);
  var = tp_op (g, FB_OP_REDUCE_MEAN, "var", sq, NULL);
  tp_attr_ints (g, var, "axes", 1, TP_DIMS (-1));
  std = tp_op (g, FB_OP_SQRT, "sqrt", tp_op (g, FB_OP_ADD, "eps", var, tp_scalar (g, 1e-5), NULL), NULL);
  n = tp_op (g, FB_OP_DIV, "div", d, std, NULL);
  if (!affine)
    return n;
  n = tp_op (g, FB_OP_MUL, "gamma", tp_const (g, "g", 1, TP_DIMS (8), NULL), n, NULL);
  return tp_op (g, FB_OP_ADD, "beta", n, tp_const (g, "b", 1, TP_DIMS (8), NULL), NULL);
}

static void
test_layernorm (void)
{
  for (int variant = 0; variant < 2; variant++)
    {
      FbGraph *g = tp_graph (13);
      FbValue *x = tp_input (g, "x", 3, TP_DIMS (2, 3, 8));
      tp_output (g, decomposed_layernorm (g, x, variant == 1, variant == 0));
      g_autoptr(FbPipeline) p = simplify (g);
      FbGraph *out = tp_stage_graph (p, "simplify");
      FbNode *ln = tp_find (out, FB_OP_LAYER_NORMALIZATION);

      g_assert_cmpuint (out->nodes->len, ==, 1);
      g_assert_nonnull (ln);
      g_assert_cmpint (fb_node_attr_int (ln, "axis", 0), ==, 2);
      g_assert_cmpfloat_with_epsilon (fb_node_attr_float (ln, "epsilon", 0), 1e-5, 1e-9);
      g_assert_cmpuint (ln->n_inputs, ==, variant == 0 ? 3 : 2);
      assert_summary_has (p, "layernorm");
      /* The single node stands for every node it replaced. */
      g_assert_cmpuint (ln->n_prov, ==, fb_pipeline_stage (p, 0)->graph->nodes->len);
    }
}

static void
test_gelu_erf (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (4, 5));
  FbValue *e = tp_op (g, FB_OP_ERF, "erf", tp_op (g, FB_OP_DIV, "div", x, tp_scalar (g, M_SQRT2), NULL), NULL);
  FbValue *one = tp_op (g, FB_OP_ADD, "add", e, tp_scalar (g, 1), NULL);
  FbValue *y = tp_op (g, FB_OP_MUL, "mul", tp_op (g, FB_OP_MUL, "mul0", x, one, NULL),
                      tp_scalar (g, 0.5), NULL);
  tp_output (g, y);
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");
  FbNode *gelu = tp_find (out, FB_OP_GELU);

  g_assert_cmpuint (out->nodes->len, ==, 1);
  g_assert_nonnull (gelu);
  g_assert_cmpstr (fb_node_attr_string (gelu, "approximate", "none"), ==, "none");
}

/* The tanh form as GPT-2 exports it, with Pow(x, 3). */
static FbValue *
gelu_tanh (FbGraph *g, FbValue *x)
{
  FbValue *half = tp_op (g, FB_OP_MUL, "half", x, tp_scalar (g, 0.5), NULL);
  FbValue *cube = tp_op (g, FB_OP_POW, "pow", x, tp_scalar (g, 3), NULL);
  FbValue *inner = tp_op (g, FB_OP_ADD, "inner", x,
                          tp_op (g, FB_OP_MUL, "cubic", cube, tp_scalar (g, 0.044715), NULL), NULL);
  FbValue *t = tp_op (g, FB_OP_TANH, "tanh",
                      tp_op (g, FB_OP_MUL, "scale", inner, tp_scalar (g, 0.7978845834732056), NULL), NULL);
  return tp_op (g, FB_OP_MUL, "gelu", half, tp_op (g, FB_OP_ADD, "one", t, tp_scalar (g, 1), NULL), NULL);
}

static void
test_gelu_tanh (void)
{
  FbGraph *g = tp_graph (17);
  tp_output (g, gelu_tanh (g, tp_input (g, "x", 2, TP_DIMS (4, 5))));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");

  g_assert_cmpuint (out->nodes->len, ==, 1);
  g_assert_cmpstr (fb_node_attr_string (tp_find (out, FB_OP_GELU), "approximate", ""), ==, "tanh");
  assert_summary_has (p, "gelu-tanh ×1");
}

static void
test_softmax (void)
{
  FbGraph *g = tp_graph (13);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (3, 6));
  FbValue *max = tp_op (g, FB_OP_REDUCE_MAX, "max", x, NULL);
  FbValue *e, *sum;

  tp_attr_ints (g, max, "axes", 1, TP_DIMS (1));
  e = tp_op (g, FB_OP_EXP, "exp", tp_op (g, FB_OP_SUB, "sub", x, max, NULL), NULL);
  sum = tp_op (g, FB_OP_REDUCE_SUM, "sum", e, tp_ints (g, 1, TP_DIMS (-1)), NULL);
  tp_output (g, tp_op (g, FB_OP_DIV, "div", e, sum, NULL));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");

  g_assert_cmpuint (out->nodes->len, ==, 1);
  g_assert_cmpint (fb_node_attr_int (tp_find (out, FB_OP_SOFTMAX), "axis", -9), ==, 1);
}

static void
test_hardswish (void)
{
  for (int variant = 0; variant < 2; variant++)
    {
      FbGraph *g = tp_graph (13);
      FbValue *x = tp_input (g, "x", 2, TP_DIMS (4, 5));
      FbValue *y;
      if (variant == 0)
        {
          FbValue *hs = tp_op (g, FB_OP_HARD_SIGMOID, "hsig", x, NULL);
          tp_attr_float (g, hs, "alpha", 1.0f / 6.0f);
          y = tp_op (g, FB_OP_MUL, "mul", hs, x, NULL);
        }
      else
        {
          FbValue *clip = tp_op (g, FB_OP_CLIP, "clip", tp_op (g, FB_OP_ADD, "add3", x, tp_scalar (g, 3), NULL),
                                 tp_scalar (g, 0), tp_scalar (g, 6), NULL);
          y = tp_op (g, FB_OP_DIV, "div6", tp_op (g, FB_OP_MUL, "mul", x, clip, NULL), tp_scalar (g, 6), NULL);
        }
      tp_output (g, y);
      g_autoptr(FbPipeline) p = simplify (g);
      FbGraph *out = tp_stage_graph (p, "simplify");

      g_assert_cmpuint (out->nodes->len, ==, 1);
      g_assert_nonnull (tp_find (out, FB_OP_HARD_SWISH));
    }
}

/* SiLU as PyTorch exports it, x * Sigmoid (x) in either order, becomes Swish; a Sigmoid that
 * has another reader stays spelled out with its Mul, and x * Sigmoid (y) is not one. */
static void
test_swish (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (4, 5)), *y = tp_input (g, "y", 2, TP_DIMS (4, 5));
  tp_output (g, tp_op (g, FB_OP_MUL, "silu1", x, tp_op (g, FB_OP_SIGMOID, "s1", x, NULL), NULL));
  tp_output (g, tp_op (g, FB_OP_MUL, "silu2", tp_op (g, FB_OP_SIGMOID, "s2", y, NULL), y, NULL));
  FbValue *shared = tp_op (g, FB_OP_SIGMOID, "s3", x, NULL);
  tp_output (g, tp_op (g, FB_OP_MUL, "silu3", x, shared, NULL));
  tp_output (g, shared);
  tp_output (g, tp_op (g, FB_OP_MUL, "gate", x, tp_op (g, FB_OP_SIGMOID, "s4", y, NULL), NULL));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");

  g_assert_cmpuint (tp_count (out, FB_OP_SWISH, FALSE), ==, 2);
  g_assert_cmpuint (tp_count (out, FB_OP_SIGMOID, FALSE), ==, 2);
  g_assert_cmpuint (tp_count (out, FB_OP_MUL, FALSE), ==, 2);
  g_assert_cmpint (tp_find (out, FB_OP_SWISH)->opset, ==, 24);
  tp_assert_stages_agree (p, 3);
}

/* --no-fuse keeps a node out of idioms that collapse several nodes into one. */
/* x[:, 2:] ++ x[:, :2] (torch.roll by -2 along axis 1), sliced with a negative end too: one
 * Gather of the indices 2..4, 0..1. Slices of two different tensors, or stepping by 2, stay. */
static FbValue *
slice_of (FbGraph *g, const char *name, FbValue *x, int64_t start, int64_t end, int64_t step)
{
  return tp_op (g, FB_OP_SLICE, name, x, tp_ints (g, 1, TP_DIMS (start)), tp_ints (g, 1, TP_DIMS (end)),
                tp_ints (g, 1, TP_DIMS (1)), tp_ints (g, 1, TP_DIMS (step)), NULL);
}

/* The phase (h0, w0) of x [n, h, w, c] taking every second row and column (two axes, one Slice). */
static FbValue *
phase_of (FbGraph *g, const char *name, FbValue *x, int64_t h0, int64_t w0, int64_t axis_h)
{
  return tp_op (g, FB_OP_SLICE, name, x, tp_ints (g, 2, TP_DIMS (h0, w0)),
                tp_ints (g, 2, TP_DIMS (G_MAXINT64, G_MAXINT64)),
                tp_ints (g, 2, TP_DIMS (axis_h, axis_h + 1)), tp_ints (g, 2, TP_DIMS (2, 2)), NULL);
}

/* Concat along axis of the four phases of x over axes axis_h and axis_h + 1, in the order
 * given ((row phase, column phase) each). */
static FbValue *
concat_phases (FbGraph *g, const char *name, FbValue *x, const int64_t order[4][2], int64_t axis_h,
               int64_t axis)
{
  FbValue *part[4];
  for (int i = 0; i < 4; i++)
    {
      g_autofree char *part_name = g_strdup_printf ("%s%d", name, i);
      part[i] = phase_of (g, part_name, x, order[i][0], order[i][1], axis_h);
    }
  FbValue *v = tp_op (g, FB_OP_CONCAT, name, part[0], part[1], part[2], part[3], NULL);
  tp_attr_int (g, v, "axis", axis);
  return v;
}

/* A Swin's patch merging (channels last, phases (0,0), (1,0), (0,1), (1,1)) and a detector's
 * focus layer (channels first, the same phases) become a Reshape, a Transpose and a Reshape;
 * phases in no row-major order of the two axes stay a Concat of Slices. Each against the
 * interpreter (simplify () compares the stages). */
static void
test_space_to_depth (void)
{
  static const int64_t swin[4][2] = { { 0, 0 }, { 1, 0 }, { 0, 1 }, { 1, 1 } };
  static const int64_t scrambled[4][2] = { { 0, 0 }, { 1, 1 }, { 0, 1 }, { 1, 0 } };
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 4, 6, 3));
  FbValue *y = tp_input (g, "y", 4, TP_DIMS (1, 3, 4, 6));
  tp_output (g, tp_op (g, FB_OP_RELU, "r1", concat_phases (g, "merge", x, swin, 1, -1), NULL));
  tp_output (g, tp_op (g, FB_OP_RELU, "r2", concat_phases (g, "focus", y, swin, 2, 1), NULL));
  tp_output (g, tp_op (g, FB_OP_RELU, "r3", concat_phases (g, "mixed", x, scrambled, 1, 3), NULL));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");

  assert_summary_has (p, "space-to-depth ×2");
  g_assert_cmpuint (tp_count (out, FB_OP_CONCAT, FALSE), ==, 1);
  g_assert_cmpuint (tp_count (out, FB_OP_SLICE, FALSE), ==, 4);
  g_assert_cmpuint (tp_count (out, FB_OP_TRANSPOSE, FALSE), ==, 2);
}

static void
test_roll (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 3, TP_DIMS (2, 5, 3));
  FbValue *y = tp_input (g, "y", 3, TP_DIMS (2, 5, 3));
  FbValue *rolled = tp_op (g, FB_OP_CONCAT, "roll", slice_of (g, "tail", x, 2, 5, 1),
                           slice_of (g, "head", x, 0, -3, 1), NULL);
  tp_attr_int (g, rolled, "axis", 1);
  FbValue *mixed = tp_op (g, FB_OP_CONCAT, "mixed", slice_of (g, "x_tail", x, 2, 5, 1),
                          slice_of (g, "y_head", y, 0, 2, 1), NULL);
  tp_attr_int (g, mixed, "axis", 1);
  FbValue *strided = tp_op (g, FB_OP_CONCAT, "strided", slice_of (g, "even", x, 0, 5, 2),
                            slice_of (g, "odd", x, 1, 5, 2), NULL);
  tp_attr_int (g, strided, "axis", 1);
  tp_output (g, tp_op (g, FB_OP_RELU, "r1", rolled, NULL));
  tp_output (g, tp_op (g, FB_OP_RELU, "r2", mixed, NULL));
  tp_output (g, tp_op (g, FB_OP_RELU, "r3", strided, NULL));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");

  assert_summary_has (p, "roll ×1");
  g_assert_cmpuint (tp_count (out, FB_OP_CONCAT, FALSE), ==, 2);
  g_assert_cmpuint (tp_count (out, FB_OP_SLICE, FALSE), ==, 4);
  FbNode *gather = tp_find (out, FB_OP_GATHER);
  g_assert_nonnull (gather);
  const FbTensor *idx = gather->inputs[1]->constant;
  g_assert_nonnull (idx);
  g_assert_cmpint (idx->numel, ==, 5);
  const int64_t want[] = { 2, 3, 4, 0, 1 };
  for (int i = 0; i < 5; i++)
    g_assert_cmpint (fb_tensor_get_i64 (idx, i), ==, want[i]);
  g_assert_cmpint (fb_node_attr_int (gather, "axis", 0), ==, 1);
}

/* A Pad of zeros and a Slice of everything go; a Slice of everything backwards (step -1) and a
 * Pad of one row stay. */
static void
test_pad_and_slice_of_nothing (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 3, TP_DIMS (1, 4, 3));
  FbValue *v = tp_op (g, FB_OP_PAD, "pad0", x, tp_ints (g, 6, TP_DIMS (0, 0, 0, 0, 0, 0)), NULL);
  v = tp_op (g, FB_OP_RELU, "r0", slice_of (g, "all", v, 0, 4, 1), NULL);
  FbValue *back = slice_of (g, "back", v, -1, -5, -1);
  FbValue *pad1 = tp_op (g, FB_OP_PAD, "pad1", v, tp_ints (g, 6, TP_DIMS (0, 0, 0, 0, 1, 0)), NULL);
  tp_output (g, tp_op (g, FB_OP_RELU, "r1", back, NULL));
  tp_output (g, tp_op (g, FB_OP_RELU, "r2", pad1, NULL));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");

  assert_summary_has (p, "pad-zero ×1");
  assert_summary_has (p, "slice-all ×1");
  g_assert_cmpuint (tp_count (out, FB_OP_PAD, FALSE), ==, 1);
  g_assert_cmpuint (tp_count (out, FB_OP_SLICE, FALSE), ==, 1);
}

static FbValue *
slice_axis (FbGraph *g, const char *name, FbValue *x, int64_t start, int64_t end, int64_t axis,
            int64_t step)
{
  return tp_op (g, FB_OP_SLICE, name, x, tp_ints (g, 1, TP_DIMS (start)), tp_ints (g, 1, TP_DIMS (end)),
                tp_ints (g, 1, TP_DIMS (axis)), tp_ints (g, 1, TP_DIMS (step)), NULL);
}

/* A patch merging's x[:, 0::2, 1::2] and x[:, 0::2, 0::2], each a Slice of the rows' Slice,
 * become Slices of x (the rows' Slice dies), as does a Slice of a Slice along the same axis;
 * a Slice of a reversed Slice stays. */
static void
test_slice_of_slice (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 8, 6, 3));
  FbValue *rows = slice_axis (g, "rows", x, 0, 8, 1, 2);
  FbValue *merged = tp_op (g, FB_OP_CONCAT, "merge", slice_axis (g, "odd", rows, 1, 6, 2, 2),
                           slice_axis (g, "even", rows, -6, 100, 2, 2), NULL);
  tp_attr_int (g, merged, "axis", 3);
  tp_output (g, tp_op (g, FB_OP_RELU, "r0", merged, NULL));
  FbValue *back = slice_axis (g, "back", x, -1, -100, 1, -1);
  tp_output (g, tp_op (g, FB_OP_RELU, "r1", slice_axis (g, "inner", back, 1, 7, 2, 1), NULL));
  /* Both along H: rows 1, 3, 5, 7, then every second from the second: rows 3 and 7. */
  FbValue *twice = slice_axis (g, "twice", slice_axis (g, "odd_rows", x, 1, 8, 1, 2), 1, 4, 1, 2);
  tp_output (g, tp_op (g, FB_OP_RELU, "r2", twice, NULL));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");

  assert_summary_has (p, "slice-slice ×3");
  g_assert_cmpuint (tp_count (out, FB_OP_SLICE, FALSE), ==, 5);
  tp_assert_stages_agree (p, 3);
}

static void
test_no_fuse_keeps_idiom_apart (void)
{
  FbGraph *g = tp_graph (17);
  g_autoptr(FbPipelineOptions) o = tp_only ("simplify", NULL);
  tp_output (g, gelu_tanh (g, tp_input (g, "x", 2, TP_DIMS (4, 5))));
  g_ptr_array_add (o->no_fuse, g_strdup ("tanh"));
  g_autoptr(FbPipeline) p = tp_run (g, o);
  FbGraph *out = tp_stage_graph (p, "simplify");

  g_assert_cmpuint (tp_count (out, FB_OP_GELU, FALSE), ==, 0);
  g_assert_cmpuint (tp_count (out, FB_OP_TANH, FALSE), ==, 1);
  tp_assert_stages_agree (p, 3);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pass/simplify/identities", test_identities);
  g_test_add_func ("/pass/simplify/identity-that-broadcasts-stays", test_identity_that_broadcasts_stays);
  g_test_add_func ("/pass/simplify/transposes", test_transposes);
  g_test_add_func ("/pass/simplify/reshapes", test_reshapes);
  g_test_add_func ("/pass/simplify/div-to-mul", test_div_to_mul);
  g_test_add_func ("/pass/simplify/add-reshape-add", test_add_reshape_add);
  g_test_add_func ("/pass/simplify/layernorm", test_layernorm);
  g_test_add_func ("/pass/simplify/gelu-erf", test_gelu_erf);
  g_test_add_func ("/pass/simplify/gelu-tanh", test_gelu_tanh);
  g_test_add_func ("/pass/simplify/softmax", test_softmax);
  g_test_add_func ("/pass/simplify/hardswish", test_hardswish);
  g_test_add_func ("/pass/simplify/swish", test_swish);
  g_test_add_func ("/pass/simplify/roll", test_roll);
  g_test_add_func ("/pass/simplify/space-to-depth", test_space_to_depth);
  g_test_add_func ("/pass/simplify/pad-and-slice-of-nothing", test_pad_and_slice_of_nothing);
  g_test_add_func ("/pass/simplify/slice-of-slice", test_slice_of_slice);
  g_test_add_func ("/pass/simplify/no-fuse", test_no_fuse_keeps_idiom_apart);
  return g_test_run ();
}
