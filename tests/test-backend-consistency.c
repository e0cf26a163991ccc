/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Every operator the CPU target compiles, with its attribute variants, run through the
 * interpreter and the CPU target on the same inputs and compared (rtol 1e-3, atol 1e-4). */
#include "fb-lower.h"
#include "fb-test-cpu.h"

#include <math.h>

#define OPSET 18

static guint32 seed = 1;

static FbTensor *
rnd (int rank, const int64_t *dims)
{
  return ti_random (rank, dims, seed++);
}

/* Random values moved into [lo, lo + 1): for logarithms, roots and powers. */
static FbTensor *
positive (int rank, const int64_t *dims, double lo)
{
  FbTensor *t = ti_random (rank, dims, seed++);
  float *v = fb_tensor_data_mut (t);
  for (int64_t i = 0; i < t->numel; i++)
    v[i] = fabsf (v[i]) + lo;
  return t;
}

static FbTensor *
bools (int rank, const int64_t *dims)
{
  FbTensor *r = ti_random (rank, dims, seed++);
  FbTensor *t = ti_tensor (FB_DTYPE_BOOL, rank, dims, NULL);
  for (int64_t i = 0; i < t->numel; i++)
    fb_tensor_set_f64 (t, i, fb_tensor_get_f64 (r, i) > 0);
  return t;
}

static FbNode *
node (FbGraph **g, FbOpKind op, guint n_in, guint n_out)
{
  *g = ti_graph (OPSET);
  return ti_node (*g, op, n_in, n_out);
}

static void
test_unary (void)
{
  static const FbOpKind ops[] = {
    FB_OP_ABS, FB_OP_CEIL, FB_OP_COS, FB_OP_ELU, FB_OP_ERF, FB_OP_EXP, FB_OP_FLOOR,
    FB_OP_HARD_SIGMOID, FB_OP_HARD_SWISH, FB_OP_IS_NAN, FB_OP_LEAKY_RELU, FB_OP_NEG,
    FB_OP_RECIPROCAL, FB_OP_RELU, FB_OP_ROUND, FB_OP_SELU, FB_OP_SIGMOID, FB_OP_SIGN, FB_OP_SIN,
    FB_OP_SOFTPLUS, FB_OP_SOFTSIGN, FB_OP_SWISH, FB_OP_TANH, FB_OP_IDENTITY,
  };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      FbGraph *g;
      FbNode *n = node (&g, ops[i], 1, 1);
      tc_node (g, n, TI_IN (rnd (3, D (2, 3, 17))), 0);
    }
  FbGraph *g;
  FbNode *n = node (&g, FB_OP_LOG, 1, 1);
  tc_node (g, n, TI_IN (positive (2, D (4, 9), 0.05)), 0);
  n = node (&g, FB_OP_SQRT, 1, 1);
  tc_node (g, n, TI_IN (positive (2, D (4, 9), 0.0)), 0);
  n = node (&g, FB_OP_NOT, 1, 1);
  tc_node (g, n, TI_IN (bools (2, D (3, 5))), 0);
  n = node (&g, FB_OP_LEAKY_RELU, 1, 1);
  ti_attr_float (g, n, "alpha", 0.3f);
  tc_node (g, n, TI_IN (rnd (2, D (3, 5))), 0);
  g = ti_graph (20);
  n = ti_node (g, FB_OP_GELU, 1, 1);
  tc_node (g, n, TI_IN (rnd (2, D (3, 33))), 0);
  g = ti_graph (20);
  n = ti_node (g, FB_OP_GELU, 1, 1);
  ti_attr_string (g, n, "approximate", "tanh");
  tc_node (g, n, TI_IN (rnd (2, D (3, 33))), 0);
  ti_done ();
}

static void
test_binary (void)
{
  static const FbOpKind ops[] = {
    FB_OP_ADD, FB_OP_SUB, FB_OP_MUL, FB_OP_DIV, FB_OP_MAX, FB_OP_MIN, FB_OP_PRELU,
    FB_OP_EQUAL, FB_OP_GREATER, FB_OP_GREATER_OR_EQUAL, FB_OP_LESS, FB_OP_LESS_OR_EQUAL,
  };
  /* Same shapes, a broadcast column, a scalar, and broadcasting on both sides. */
  const int64_t *shapes[][2] = {
    { D (2, 3, 4), D (2, 3, 4) }, { D (2, 3, 4), D (3, 1) }, { D (2, 3, 4), D (1) },
    { D (2, 1, 4), D (3, 1) },
  };
  const int ranks[][2] = { { 3, 3 }, { 3, 2 }, { 3, 1 }, { 3, 2 } };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      {
        if (ops[i] == FB_OP_PRELU && s == 3)
          continue;     /* PRelu broadcasts the slope only */
        FbGraph *g;
        FbNode *n = node (&g, ops[i], 2, 1);
        tc_node (g, n, TI_IN (rnd (ranks[s][0], shapes[s][0]), rnd (ranks[s][1], shapes[s][1])),
                 s == 1 ? 2 : 0);
      }
  FbGraph *g;
  FbNode *n = node (&g, FB_OP_POW, 2, 1);
  tc_node (g, n, TI_IN (positive (2, D (3, 4), 0.1), rnd (2, D (3, 4))), 0);
  n = node (&g, FB_OP_POW, 2, 1);
  tc_node (g, n, TI_IN (rnd (2, D (3, 4)), ti_f32 (0, NULL, V (2.0))), 2);
  n = node (&g, FB_OP_POW, 2, 1);
  tc_node (g, n, TI_IN (rnd (2, D (3, 4)), ti_f32 (0, NULL, V (3.0))), 2);
  n = node (&g, FB_OP_MOD, 2, 1);
  ti_attr_int (g, n, "fmod", 1);
  tc_node (g, n, TI_IN (rnd (2, D (3, 4)), positive (2, D (3, 4), 0.2)), 0);
  static const FbOpKind logic[] = { FB_OP_AND, FB_OP_OR, FB_OP_XOR };
  for (guint i = 0; i < G_N_ELEMENTS (logic); i++)
    {
      n = node (&g, logic[i], 2, 1);
      tc_node (g, n, TI_IN (bools (2, D (3, 4)), bools (1, D (4))), 0);
    }
  static const FbOpKind var[] = { FB_OP_SUM, FB_OP_MEAN, FB_OP_MAX, FB_OP_MIN };
  for (guint i = 0; i < G_N_ELEMENTS (var); i++)
    {
      n = node (&g, var[i], 3, 1);
      tc_node (g, n, TI_IN (rnd (2, D (3, 4)), rnd (1, D (4)), rnd (2, D (3, 1))), 0);
    }
  n = node (&g, FB_OP_WHERE, 3, 1);
  tc_node (g, n, TI_IN (bools (2, D (3, 4)), rnd (2, D (3, 4)), rnd (1, D (1))), 0);
  ti_done ();
}

static void
test_clip_cast (void)
{
  FbGraph *g;
  FbNode *n = node (&g, FB_OP_CLIP, 3, 1);
  tc_node (g, n, TI_IN (rnd (2, D (5, 7)), ti_f32 (0, NULL, V (-0.2)), ti_f32 (0, NULL, V (0.4))), 6);
  n = node (&g, FB_OP_CLIP, 2, 1);
  tc_node (g, n, TI_IN (rnd (2, D (5, 7)), ti_f32 (0, NULL, V (0.1))), 2);
  static const FbDType to[] = { FB_DTYPE_INT32, FB_DTYPE_INT64, FB_DTYPE_FLOAT64, FB_DTYPE_BOOL,
                                FB_DTYPE_UINT8 };
  for (guint i = 0; i < G_N_ELEMENTS (to); i++)
    {
      n = node (&g, FB_OP_CAST, 1, 1);
      ti_attr_int (g, n, "to", to[i]);
      FbTensor *x = rnd (2, D (4, 6));
      float *v = fb_tensor_data_mut (x);
      for (int k = 0; k < 24; k++)
        v[k] = to[i] == FB_DTYPE_UINT8 ? fabsf (v[k]) * 100 : v[k] * 10;
      tc_node (g, n, TI_IN (x), 0);
    }
  n = node (&g, FB_OP_CAST, 1, 1);
  ti_attr_int (g, n, "to", FB_DTYPE_FLOAT32);
  tc_node (g, n, TI_IN (ti_i64 (1, D (4), (const int64_t[]) { -3, 0, 7, 1 << 20 })), 0);
  ti_done ();
}

static void
test_reductions (void)
{
  static const FbOpKind ops[] = {
    FB_OP_REDUCE_SUM, FB_OP_REDUCE_MEAN, FB_OP_REDUCE_MAX, FB_OP_REDUCE_MIN, FB_OP_REDUCE_PROD,
    FB_OP_REDUCE_L2,
  };
  const int64_t *axes[] = { D (1), D (0, 2), D (-1), NULL };
  const guint n_axes[] = { 1, 2, 1, 0 };
  /* A long innermost dimension kept: reduced a block of it at a time (a column reduction,
   * 70 = one block and a short one). */
  const int64_t *shapes[] = { D (3, 4, 5), D (3, 4, 70) };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    for (guint a = 0; a < G_N_ELEMENTS (axes); a++)
      for (int keep = 0; keep < 2; keep++)
        for (guint sh = 0; sh < G_N_ELEMENTS (shapes); sh++)
          {
            FbGraph *g;
            FbNode *n = node (&g, ops[i], 2, 1);
            ti_attr_int (g, n, "keepdims", keep);
            FbTensor *ax = axes[a] ? ti_i64 (1, D (n_axes[a]), axes[a]) : NULL;
            tc_node (g, n, TI_IN (rnd (3, shapes[sh]), ax), 2);
          }
  for (int axis = 0; axis < 3; axis++)
    {
      FbGraph *g;
      FbNode *n = node (&g, FB_OP_ARGMAX, 1, 1);
      ti_attr_int (g, n, "axis", axis);
      ti_attr_int (g, n, "keepdims", axis != 1);
      tc_node (g, n, TI_IN (rnd (3, D (3, 4, 5))), 0);
    }
  static const FbOpKind pools[] = { FB_OP_GLOBAL_AVERAGE_POOL, FB_OP_GLOBAL_MAX_POOL };
  for (guint i = 0; i < G_N_ELEMENTS (pools); i++)
    {
      FbGraph *g;
      FbNode *n = node (&g, pools[i], 1, 1);
      tc_node (g, n, TI_IN (rnd (4, D (2, 3, 5, 6))), 0);
      n = node (&g, pools[i], 1, 1);
      ti_attr_string (g, n, "fb_layout", "nhwc");
      tc_node (g, n, TI_IN (rnd (4, D (2, 5, 6, 70))), 0);
    }
  ti_done ();
}

/* The one kernel of graph's single node, lowered for the cpu target, has phases phases. */
static void
assert_phases (const FbGraph *graph, guint phases)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (graph, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  guint seen = 0;
  for (guint i = 0; i < plan->kernels->len; i++)
    seen += ((const FbKernel *) g_ptr_array_index (plan->kernels, i))->phases->len;
  g_assert_cmpuint (seen, ==, phases);
}

/* Channels-last reductions in runs of rows shared by the threads (fb-lower-reduce-runs.c), on
 * two threads, under FUSEBENCH_REDUCE_RUNS=always (small maps): runs that divide the rows and
 * ones that do not, pools that keep their axes and reductions that drop them. Each is two
 * phases (runs, then their combination); never keeps the one-phase column form. */
static void
test_reductions_in_runs (void)
{
  g_setenv ("FUSEBENCH_REDUCE_RUNS", "always", TRUE);
  static const FbOpKind pools[] = { FB_OP_GLOBAL_AVERAGE_POOL, FB_OP_GLOBAL_MAX_POOL };
  FbGraph *g;
  FbNode *n;
  for (guint i = 0; i < G_N_ELEMENTS (pools); i++)
    {
      n = node (&g, pools[i], 1, 1);
      ti_attr_string (g, n, "fb_layout", "nhwc");
      tc_node (g, n, TI_IN (rnd (4, D (2, 35, 6, 70))), 0);
      assert_phases (g, 2);
    }
  n = node (&g, FB_OP_REDUCE_MEAN, 2, 1);
  ti_attr_int (g, n, "keepdims", 0);
  tc_node (g, n, TI_IN (rnd (3, D (2, 48, 70)), ti_i64 (1, D (1), D (1))), 2);
  assert_phases (g, 2);
  n = node (&g, FB_OP_REDUCE_MIN, 2, 1);
  tc_node (g, n, TI_IN (rnd (4, D (3, 20, 5, 24)), ti_i64 (1, D (2), D (1, 2))), 2);
  assert_phases (g, 2);
  g_setenv ("FUSEBENCH_REDUCE_RUNS", "never", TRUE);
  n = node (&g, FB_OP_REDUCE_SUM, 2, 1);
  tc_node (g, n, TI_IN (rnd (3, D (2, 48, 70)), ti_i64 (1, D (1), D (1))), 2);
  assert_phases (g, 1);
  g_unsetenv ("FUSEBENCH_REDUCE_RUNS");
  ti_done ();
}

static void
test_normalizations (void)
{
  for (int axis = -1; axis <= 1; axis += 2)
    {
      FbGraph *g;
      FbNode *n = node (&g, FB_OP_SOFTMAX, 1, 1);
      ti_attr_int (g, n, "axis", axis);
      tc_node (g, n, TI_IN (rnd (3, D (2, 5, 7))), 0);
      n = node (&g, FB_OP_LOG_SOFTMAX, 1, 1);
      ti_attr_int (g, n, "axis", axis);
      tc_node (g, n, TI_IN (rnd (3, D (2, 5, 7))), 0);
    }
  FbGraph *g;
  FbNode *n = node (&g, FB_OP_LAYER_NORMALIZATION, 3, 1);
  tc_node (g, n, TI_IN (rnd (3, D (2, 5, 16)), rnd (1, D (16)), rnd (1, D (16))), 6);
  n = node (&g, FB_OP_LAYER_NORMALIZATION, 2, 1);
  ti_attr_int (g, n, "axis", 1);
  ti_attr_float (g, n, "epsilon", 1e-3f);
  tc_node (g, n, TI_IN (rnd (3, D (2, 5, 4)), rnd (2, D (5, 4))), 2);
  n = node (&g, FB_OP_INSTANCE_NORMALIZATION, 3, 1);
  tc_node (g, n, TI_IN (rnd (4, D (2, 3, 4, 5)), rnd (1, D (3)), rnd (1, D (3))), 6);
  n = node (&g, FB_OP_BATCH_NORMALIZATION, 5, 1);
  tc_node (g, n, TI_IN (rnd (4, D (2, 3, 4, 5)), rnd (1, D (3)), rnd (1, D (3)), rnd (1, D (3)),
                        positive (1, D (3), 0.5)), 30);
  ti_done ();
}

typedef struct {
  int64_t c_in, h, w, c_out, k_h, k_w, group, stride, pad, dilation;
  gboolean bias, nhwc, one_d;
  const char *auto_pad;
} ConvCase;

static void
run_conv (const ConvCase *cc)
{
  FbGraph *g;
  FbNode *n = node (&g, FB_OP_CONV, cc->bias ? 3 : 2, 1);
  int sp = cc->one_d ? 1 : 2;
  int64_t ones[2] = { cc->stride, cc->stride }, dil[2] = { cc->dilation, cc->dilation };
  int64_t pads[4] = { cc->pad, cc->pad, cc->pad, cc->pad };
  ti_attr_int (g, n, "group", cc->group);
  ti_attr_ints (g, n, "strides", sp, ones);
  ti_attr_ints (g, n, "dilations", sp, dil);
  if (cc->auto_pad)
    ti_attr_string (g, n, "auto_pad", cc->auto_pad);
  else
    ti_attr_ints (g, n, "pads", 2 * sp, pads);
  if (cc->nhwc)
    ti_attr_string (g, n, "fb_layout", "nhwc");
  FbTensor *x, *w;
  if (cc->one_d)
    {
      x = rnd (3, cc->nhwc ? D (2, cc->w, cc->c_in) : D (2, cc->c_in, cc->w));
      w = rnd (3, D (cc->c_out, cc->c_in / cc->group, cc->k_w));
    }
  else
    {
      x = rnd (4, cc->nhwc ? D (1, cc->h, cc->w, cc->c_in) : D (1, cc->c_in, cc->h, cc->w));
      w = rnd (4, D (cc->c_out, cc->c_in / cc->group, cc->k_h, cc->k_w));
    }
  tc_node (g, n, TI_IN (x, w, cc->bias ? rnd (1, D (cc->c_out)) : NULL), 6);
}

static void
test_conv (void)
{
  const ConvCase cases[] = {
    { 3, 9, 8, 6, 3, 3, 1, 1, 1, 1, TRUE },
    { 4, 9, 8, 5, 3, 3, 1, 2, 1, 1 },
    { 4, 10, 9, 4, 3, 3, 2, 1, 1, 1, TRUE },
    { 6, 9, 8, 6, 3, 3, 6, 1, 1, 1, TRUE },          /* depthwise */
    { 6, 9, 8, 6, 3, 3, 6, 2, 1, 1 },                /* depthwise, stride 2 */
    { 8, 7, 7, 5, 1, 1, 1, 1, 0, 1, TRUE },          /* pointwise: a plain GEMM */
    { 4, 11, 10, 3, 3, 3, 1, 1, 2, 2 },              /* dilated */
    { 3, 8, 7, 4, 2, 3, 1, 2, 0, 1, FALSE, FALSE, FALSE, "SAME_UPPER" },
    { 3, 9, 8, 6, 3, 3, 1, 1, 1, 1, TRUE, TRUE },    /* channels-last */
    { 6, 9, 8, 6, 3, 3, 6, 2, 1, 1, TRUE, TRUE },    /* channels-last depthwise */
    { 8, 7, 7, 5, 1, 1, 1, 1, 0, 1, TRUE, TRUE },    /* channels-last pointwise */
    /* pointwise on a small image with many channels: tiled by output channels, the last tile
     * shorter than the others */
    { 128, 7, 7, 264, 1, 1, 1, 1, 0, 1, TRUE },
    { 128, 7, 7, 264, 1, 1, 1, 1, 0, 1, TRUE, TRUE },
    /* the same through im2col, which the channel tiles share */
    { 32, 4, 4, 136, 3, 3, 1, 1, 1, 1, TRUE },
    { 32, 4, 4, 136, 3, 3, 1, 1, 1, 1, TRUE, TRUE },
    { 3, 1, 20, 4, 1, 5, 1, 2, 2, 1, TRUE, FALSE, TRUE },   /* 1-D */
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      run_conv (&cases[i]);
      /* Channels-last, every case is also a oneDNN primitive's (strides, dilations, groups,
       * asymmetric and automatic pads, 1-D). */
      ConvCase last = cases[i];
      last.nhwc = TRUE;
      if (!cases[i].nhwc)
        run_conv (&last);
    }
  ti_done ();
}

static void
test_matmul (void)
{
  struct { int ra, rb; const int64_t *a, *b; } mm[] = {
    { 3, 2, D (2, 3, 4), D (4, 5) }, { 2, 1, D (3, 4), D (4) }, { 1, 2, D (4), D (4, 5) },
    { 4, 3, D (2, 1, 3, 4), D (3, 4, 2) }, { 2, 2, D (70, 40), D (40, 33) },
    { 2, 2, D (2, 64), D (64, 300) },                /* few rows: tiled by columns */
  };
  for (guint i = 0; i < G_N_ELEMENTS (mm); i++)
    for (guint c = 0; c < 2; c++)
      {
        FbGraph *g;
        FbNode *n = node (&g, FB_OP_MATMUL, 2, 1);
        tc_node (g, n, TI_IN (rnd (mm[i].ra, mm[i].a), rnd (mm[i].rb, mm[i].b)), c ? 2 : 0);
      }
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++)
      {
        FbGraph *g;
        FbNode *n = node (&g, FB_OP_GEMM, 3, 1);
        ti_attr_int (g, n, "transA", ta);
        ti_attr_int (g, n, "transB", tb);
        ti_attr_float (g, n, "alpha", 0.5f + ta);
        ti_attr_float (g, n, "beta", 2.0f - tb);
        FbTensor *a = rnd (2, ta ? D (4, 3) : D (3, 4)), *b = rnd (2, tb ? D (5, 4) : D (4, 5));
        FbTensor *c = (ta + tb) % 2 ? rnd (1, D (5)) : rnd (2, D (3, 1));
        tc_node (g, n, TI_IN (a, b, c), 6);
      }
  FbGraph *g;
  FbNode *n = node (&g, FB_OP_GEMM, 2, 1);
  tc_node (g, n, TI_IN (rnd (2, D (3, 4)), rnd (2, D (4, 5))), 2);
  /* A classifier: one row, weights transposed, a bias; tiled by columns. */
  n = node (&g, FB_OP_GEMM, 3, 1);
  ti_attr_int (g, n, "transB", 1);
  tc_node (g, n, TI_IN (rnd (2, D (1, 96)), rnd (2, D (1000, 96)), rnd (1, D (1000))), 6);
  ti_done ();
}

static void
test_pools (void)
{
  struct { FbOpKind op; int64_t k, s, p, d; int ceil, include; } pc[] = {
    { FB_OP_MAX_POOL, 3, 2, 1, 1, 0, 0 }, { FB_OP_MAX_POOL, 2, 2, 0, 1, 1, 0 },
    { FB_OP_MAX_POOL, 2, 1, 0, 2, 0, 0 }, { FB_OP_AVERAGE_POOL, 3, 2, 1, 1, 0, 0 },
    { FB_OP_AVERAGE_POOL, 3, 2, 1, 1, 0, 1 }, { FB_OP_AVERAGE_POOL, 2, 2, 0, 1, 1, 0 },
    /* an inception branch's pool; a dilated one whose last window ceil_mode cuts */
    { FB_OP_AVERAGE_POOL, 3, 1, 1, 1, 0, 0 }, { FB_OP_MAX_POOL, 3, 2, 1, 2, 1, 0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (pc); i++)
    for (int nhwc = 0; nhwc < 2; nhwc++)
      {
        FbGraph *g;
        FbNode *n = node (&g, pc[i].op, 1, 1);
        ti_attr_ints (g, n, "kernel_shape", 2, D (pc[i].k, pc[i].k));
        ti_attr_ints (g, n, "strides", 2, D (pc[i].s, pc[i].s));
        ti_attr_ints (g, n, "pads", 4, D (pc[i].p, pc[i].p, pc[i].p, pc[i].p));
        if (pc[i].op == FB_OP_MAX_POOL)
          ti_attr_ints (g, n, "dilations", 2, D (pc[i].d, pc[i].d));
        ti_attr_int (g, n, "ceil_mode", pc[i].ceil);
        if (pc[i].op == FB_OP_AVERAGE_POOL)
          ti_attr_int (g, n, "count_include_pad", pc[i].include);
        if (nhwc)
          ti_attr_string (g, n, "fb_layout", "nhwc");
        tc_node (g, n, TI_IN (rnd (4, nhwc ? D (2, 7, 8, 3) : D (2, 3, 7, 8))), 0);
      }
  FbGraph *g;
  FbNode *n = node (&g, FB_OP_MAX_POOL, 1, 1);
  ti_attr_ints (g, n, "kernel_shape", 1, D (3));
  ti_attr_ints (g, n, "strides", 1, D (2));
  tc_node (g, n, TI_IN (rnd (3, D (1, 2, 11))), 0);
  ti_done ();
}

static void
test_movement (void)
{
  FbGraph *g;
  FbNode *n = node (&g, FB_OP_TRANSPOSE, 1, 1);
  ti_attr_ints (g, n, "perm", 3, D (2, 0, 1));
  tc_node (g, n, TI_IN (rnd (3, D (2, 3, 4))), 0);
  n = node (&g, FB_OP_TRANSPOSE, 1, 1);
  tc_node (g, n, TI_IN (rnd (3, D (2, 3, 4))), 0);
  /* Short output rows from long input rows (channels-first to channels-last): written a
   * whole short row per input position. */
  n = node (&g, FB_OP_TRANSPOSE, 1, 1);
  ti_attr_ints (g, n, "perm", 4, D (0, 2, 3, 1));
  tc_node (g, n, TI_IN (rnd (4, D (2, 3, 5, 17))), 0);
  n = node (&g, FB_OP_TRANSPOSE, 1, 1);
  tc_node (g, n, TI_IN (rnd (2, D (4, 37))), 0);
  /* Both rows long: blocked in 16 x 16 tiles, whole ones and edge ones cut short. */
  n = node (&g, FB_OP_TRANSPOSE, 1, 1);
  ti_attr_ints (g, n, "perm", 4, D (0, 2, 3, 1));
  tc_node (g, n, TI_IN (rnd (4, D (2, 37, 5, 21))), 0);
  n = node (&g, FB_OP_TRANSPOSE, 1, 1);
  ti_attr_ints (g, n, "perm", 3, D (0, 2, 1));
  tc_node (g, n, TI_IN (rnd (3, D (3, 32, 48))), 0);
  n = node (&g, FB_OP_TRANSPOSE, 1, 1);
  ti_attr_ints (g, n, "perm", 4, D (3, 1, 2, 0));
  tc_node (g, n, TI_IN (rnd (4, D (20, 2, 3, 18))), 0);
  for (int axis = 0; axis < 2; axis++)
    {
      n = node (&g, FB_OP_GATHER, 2, 1);
      ti_attr_int (g, n, "axis", axis);
      tc_node (g, n, TI_IN (rnd (3, D (3, 4, 5)), ti_i64 (2, D (2, 2), (const int64_t[]) { 0, -1, 2, 1 })), 0);
    }
  n = node (&g, FB_OP_GATHER, 2, 1);
  tc_node (g, n, TI_IN (rnd (2, D (10, 6)), ti_i64 (0, NULL, (const int64_t[]) { 7 })), 2);
  n = node (&g, FB_OP_GATHER_ELEMENTS, 2, 1);
  ti_attr_int (g, n, "axis", 1);
  tc_node (g, n, TI_IN (rnd (2, D (3, 4)), ti_i64 (2, D (3, 2), (const int64_t[]) { 0, 3, 1, 1, -1, 2 })), 0);
  n = node (&g, FB_OP_CONCAT, 3, 1);
  ti_attr_int (g, n, "axis", 1);
  tc_node (g, n, TI_IN (rnd (3, D (2, 3, 4)), rnd (3, D (2, 1, 4)), rnd (3, D (2, 2, 4))), 2);
  n = node (&g, FB_OP_SPLIT, 2, 3);
  ti_attr_int (g, n, "axis", 2);
  tc_node (g, n, TI_IN (rnd (3, D (2, 3, 6)), ti_i64 (1, D (3), (const int64_t[]) { 1, 2, 3 })), 2);
  n = node (&g, FB_OP_SLICE, 5, 1);
  tc_node (g, n, TI_IN (rnd (3, D (4, 5, 6)), ti_i64 (1, D (2), (const int64_t[]) { -1, 1 }),
                        ti_i64 (1, D (2), (const int64_t[]) { -100, 6 }),
                        ti_i64 (1, D (2), (const int64_t[]) { 0, 2 }),
                        ti_i64 (1, D (2), (const int64_t[]) { -2, 2 })), 30);
  const char *modes[] = { "constant", "reflect", "edge" };
  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    {
      n = node (&g, FB_OP_PAD, 3, 1);
      ti_attr_string (g, n, "mode", modes[m]);
      tc_node (g, n, TI_IN (rnd (2, D (4, 5)), ti_i64 (1, D (4), (const int64_t[]) { 1, 2, 2, 1 }),
                            ti_f32 (0, NULL, V (0.5))), 6);
    }
  n = node (&g, FB_OP_EXPAND, 2, 1);
  tc_node (g, n, TI_IN (rnd (2, D (3, 1)), ti_i64 (1, D (3), (const int64_t[]) { 2, 3, 4 })), 2);
  n = node (&g, FB_OP_TILE, 2, 1);
  tc_node (g, n, TI_IN (rnd (2, D (2, 3)), ti_i64 (1, D (2), (const int64_t[]) { 2, 3 })), 2);
  const char *d2s[] = { "DCR", "CRD" };
  for (guint m = 0; m < 2; m++)
    {
      n = node (&g, FB_OP_DEPTH_TO_SPACE, 1, 1);
      ti_attr_int (g, n, "blocksize", 2);
      ti_attr_string (g, n, "mode", d2s[m]);
      tc_node (g, n, TI_IN (rnd (4, D (1, 8, 2, 3))), 0);
    }
  n = node (&g, FB_OP_SPACE_TO_DEPTH, 1, 1);
  ti_attr_int (g, n, "blocksize", 2);
  tc_node (g, n, TI_IN (rnd (4, D (1, 2, 4, 6))), 0);
  for (int upper = 0; upper < 2; upper++)
    {
      n = node (&g, FB_OP_TRILU, 2, 1);
      ti_attr_int (g, n, "upper", upper);
      tc_node (g, n, TI_IN (rnd (3, D (2, 4, 5)), ti_i64 (0, NULL, (const int64_t[]) { 1 })), 2);
    }
  for (int v = 0; v < 4; v++)
    {
      n = node (&g, FB_OP_CUMSUM, 2, 1);
      ti_attr_int (g, n, "exclusive", v & 1);
      ti_attr_int (g, n, "reverse", v >> 1);
      tc_node (g, n, TI_IN (rnd (2, D (3, 5)), ti_i64 (0, NULL, (const int64_t[]) { 1 })), 2);
    }
  n = node (&g, FB_OP_RESHAPE, 2, 1);
  tc_node (g, n, TI_IN (rnd (3, D (2, 3, 4)), ti_i64 (1, D (2), (const int64_t[]) { 4, -1 })), 2);
  n = node (&g, FB_OP_FLATTEN, 1, 1);
  tc_node (g, n, TI_IN (rnd (3, D (2, 3, 4))), 0);
  ti_done ();
}

/* Integer tensors of rounded random values in [-9, 9]. */
static FbTensor *
ints (FbDType dtype, int rank, const int64_t *dims)
{
  FbTensor *r = ti_random (rank, dims, seed++);
  FbTensor *t = ti_tensor (dtype, rank, dims, NULL);
  for (int64_t i = 0; i < t->numel; i++)
    fb_tensor_set_f64 (t, i, round (fb_tensor_get_f64 (r, i) * 4));
  return t;
}

static void
test_added_ops (void)
{
  FbGraph *g;
  FbNode *n;
  /* LRN, LayerNormalization with its statistics, MaxPool with its indices. */
  for (int v = 0; v < 2; v++)
    {
      n = node (&g, FB_OP_LRN, 1, 1);
      ti_attr_int (g, n, "size", v ? 5 : 3);
      ti_attr_float (g, n, "alpha", v ? 1e-4f : 0.5f);
      ti_attr_float (g, n, "beta", v ? 0.75f : 0.8f);
      ti_attr_float (g, n, "bias", v ? 1.0f : 1.5f);
      tc_node (g, n, TI_IN (rnd (4, D (2, 6, 3, 4))), 0);
    }
  n = node (&g, FB_OP_LAYER_NORMALIZATION, 3, 3);
  ti_attr_int (g, n, "axis", 2);
  tc_node (g, n, TI_IN (rnd (3, D (2, 3, 5)), rnd (1, D (5)), rnd (1, D (5))), 6);
  for (int order = 0; order < 2; order++)
    {
      n = node (&g, FB_OP_MAX_POOL, 1, 2);
      ti_attr_ints (g, n, "kernel_shape", 2, D (3, 3));
      ti_attr_ints (g, n, "strides", 2, D (2, 2));
      ti_attr_ints (g, n, "pads", 4, D (1, 1, 1, 1));
      ti_attr_int (g, n, "storage_order", order);
      tc_node (g, n, TI_IN (rnd (4, D (2, 3, 7, 8))), 0);
    }
  /* TopK: largest and smallest, along an inner and the last axis. */
  for (int v = 0; v < 4; v++)
    {
      n = node (&g, FB_OP_TOPK, 2, 2);
      ti_attr_int (g, n, "axis", v & 1 ? 1 : -1);
      ti_attr_int (g, n, "largest", v < 2);
      tc_node (g, n, TI_IN (rnd (3, D (2, 5, 7)), ti_i64 (1, D (1), (const int64_t[]) { 3 })), 2);
    }
  /* ScatterND: whole rows with a reduction, single elements with negative indices. */
  static const char *reductions[] = { "none", "add", "mul", "max" };
  for (guint r = 0; r < G_N_ELEMENTS (reductions); r++)
    {
      n = node (&g, FB_OP_SCATTER_ND, 3, 1);
      ti_attr_string (g, n, "reduction", reductions[r]);
      tc_node (g, n, TI_IN (rnd (3, D (2, 3, 4)), ti_i64 (2, D (3, 2), (const int64_t[]) { 1, 2, 0, 0, 1, 2 }),
                            rnd (2, D (3, 4))), r == 0 ? 2 : 6);
    }
  n = node (&g, FB_OP_SCATTER_ND, 3, 1);
  tc_node (g, n, TI_IN (rnd (2, D (3, 4)), ti_i64 (2, D (2, 2), (const int64_t[]) { -1, 0, 1, -2 }),
                        rnd (1, D (2))), 2);
  /* MatMul of integers, with broadcasting and vectors. */
  static const FbDType itypes[] = { FB_DTYPE_INT32, FB_DTYPE_INT64 };
  for (guint i = 0; i < G_N_ELEMENTS (itypes); i++)
    {
      n = node (&g, FB_OP_MATMUL, 2, 1);
      tc_node (g, n, TI_IN (ints (itypes[i], 3, D (2, 3, 4)), ints (itypes[i], 2, D (4, 5))), 0);
      n = node (&g, FB_OP_MATMUL, 2, 1);
      tc_node (g, n, TI_IN (ints (itypes[i], 1, D (4)), ints (itypes[i], 3, D (2, 4, 3))), 0);
    }
  /* Einsum: products, transposes, ellipses, implicit outputs, outer products, diagonals (a
   * label repeated in an operand) and sums within an operand. */
  struct { const char *eq; int ra, rb; const int64_t *a, *b; } es[] = {
    { "...ii ->...i", 3, 0, D (2, 3, 3), NULL }, { "ii", 2, 0, D (4, 4), NULL },
    { "ij->i", 2, 0, D (3, 4), NULL }, { "bii,bij->bj", 3, 3, D (2, 3, 3), D (2, 3, 4) },
    { "iij->j", 3, 0, D (3, 3, 2), NULL }, { "i...i->...", 3, 0, D (3, 2, 3), NULL },
    { "bij,bjk->bik", 3, 3, D (2, 3, 4), D (2, 4, 5) }, { "bij,bkj->bik", 3, 3, D (2, 3, 4), D (2, 5, 4) },
    { "bij->bji", 3, 0, D (2, 3, 4), NULL }, { "...ij,jk->...ik", 3, 2, D (2, 3, 4), D (4, 2) },
    { "bij,bij->bi", 3, 3, D (2, 3, 4), D (2, 3, 4) }, { "ij,kj", 2, 2, D (3, 4), D (5, 4) },
    { "i,j->ij", 1, 1, D (3), D (4) },
  };
  for (guint i = 0; i < G_N_ELEMENTS (es); i++)
    {
      n = node (&g, FB_OP_EINSUM, es[i].b ? 2 : 1, 1);
      ti_attr_string (g, n, "equation", es[i].eq);
      FbTensor *a = rnd (es[i].ra, es[i].a);
      if (es[i].b)
        tc_node (g, n, TI_IN (a, rnd (es[i].rb, es[i].b)), 0);
      else
        tc_node (g, n, TI_IN (a), 0);
    }
  ti_done ();
}

/* A channels-last ConvTranspose: a oneDNN deconvolution, or the direct loops where oneDNN
 * has no optimized kernel for it. */
static void
run_deconv_nhwc (int64_t groups, int64_t stride, int64_t dilation, int64_t pad, int64_t out_pad,
                 const char *auto_pad, gboolean oshape, gboolean bias)
{
  FbGraph *g;
  FbNode *n = node (&g, FB_OP_CONV_TRANSPOSE, bias ? 3 : 2, 1);
  ti_attr_string (g, n, "fb_layout", "nhwc");
  ti_attr_int (g, n, "group", groups);
  ti_attr_ints (g, n, "strides", 2, D (stride, stride));
  ti_attr_ints (g, n, "dilations", 2, D (dilation, 1));
  if (auto_pad)
    ti_attr_string (g, n, "auto_pad", auto_pad);
  else if (!oshape)
    ti_attr_ints (g, n, "pads", 4, D (pad, 0, pad, 1));
  if (out_pad)
    ti_attr_ints (g, n, "output_padding", 2, D (1, 0));
  if (oshape)
    ti_attr_ints (g, n, "output_shape", 2, D (19, 16));
  tc_node (g, n, TI_IN (rnd (4, D (1, 9, 8, 4)), rnd (4, D (4, 3 - (groups > 1), 3, 3)),
                        bias ? rnd (1, D (groups > 1 ? 4 : 3)) : NULL), 6);
}

/* ConvTranspose (1-D to 3-D, groups, dilations, output_padding, output_shape, auto_pad) and
 * 3-D Conv, the direct loop nests; 2-D ones also channels-last. */
static void
test_conv_direct (void)
{
  FbGraph *g;
  FbNode *n;
  struct { int64_t g, s, d, p, op; const char *auto_pad; gboolean oshape, bias; } ct[] = {
    { 1, 2, 1, 1, 1, NULL, FALSE, TRUE }, { 2, 1, 2, 0, 0, NULL, FALSE, FALSE },
    { 1, 2, 1, 0, 0, NULL, TRUE, FALSE }, { 1, 2, 1, 0, 0, "SAME_UPPER", FALSE, TRUE },
    { 2, 3, 1, 1, 0, "SAME_LOWER", FALSE, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ct); i++)
    {
      n = node (&g, FB_OP_CONV_TRANSPOSE, ct[i].bias ? 3 : 2, 1);
      ti_attr_int (g, n, "group", ct[i].g);
      ti_attr_ints (g, n, "strides", 2, D (ct[i].s, ct[i].s));
      ti_attr_ints (g, n, "dilations", 2, D (ct[i].d, 1));
      if (ct[i].auto_pad)
        ti_attr_string (g, n, "auto_pad", ct[i].auto_pad);
      else if (!ct[i].oshape)
        ti_attr_ints (g, n, "pads", 4, D (ct[i].p, 0, ct[i].p, 1));
      if (ct[i].op)
        ti_attr_ints (g, n, "output_padding", 2, D (1, 0));
      if (ct[i].oshape)
        ti_attr_ints (g, n, "output_shape", 2, D (19, 16));
      tc_node (g, n, TI_IN (rnd (4, D (1, 4, 9, 8)), rnd (4, D (4, 3 - (ct[i].g > 1), 3, 3)),
                            ct[i].bias ? rnd (1, D (3)) : NULL), 6);
    }
  for (guint i = 0; i < G_N_ELEMENTS (ct); i++)
    run_deconv_nhwc (ct[i].g, ct[i].s, ct[i].d, ct[i].p, ct[i].op, ct[i].auto_pad, ct[i].oshape,
                     ct[i].bias);
  /* Output padding at the stride (allowed under the dilation): no oneDNN deconvolution reads
   * it so, the channels-last direct loops run it. */
  run_deconv_nhwc (1, 1, 2, 0, 1, NULL, FALSE, TRUE);
  /* Upsampling layers as detectors have them: 2x2 stride 2 (to many and to one channel), 4x4
   * stride 2 pad 1, with their bias. */
  struct { int64_t c, co, k, p; } up[] = { { 16, 8, 2, 0 }, { 16, 1, 2, 0 }, { 8, 8, 4, 1 } };
  for (guint i = 0; i < G_N_ELEMENTS (up); i++)
    {
      n = node (&g, FB_OP_CONV_TRANSPOSE, 3, 1);
      ti_attr_string (g, n, "fb_layout", "nhwc");
      ti_attr_ints (g, n, "strides", 2, D (2, 2));
      ti_attr_ints (g, n, "pads", 4, D (up[i].p, up[i].p, up[i].p, up[i].p));
      tc_node (g, n, TI_IN (rnd (4, D (1, 10, 12, up[i].c)),
                            rnd (4, D (up[i].c, up[i].co, up[i].k, up[i].k)), rnd (1, D (up[i].co))),
               6);
    }
  n = node (&g, FB_OP_CONV_TRANSPOSE, 2, 1);
  ti_attr_ints (g, n, "strides", 1, D (3));
  tc_node (g, n, TI_IN (rnd (3, D (2, 3, 7)), rnd (3, D (3, 2, 4))), 2);
  n = node (&g, FB_OP_CONV_TRANSPOSE, 2, 1);
  ti_attr_ints (g, n, "strides", 3, D (2, 1, 2));
  tc_node (g, n, TI_IN (rnd (5, D (1, 2, 3, 4, 3)), rnd (5, D (2, 2, 2, 2, 3))), 2);
  for (int v = 0; v < 3; v++)
    {
      n = node (&g, FB_OP_CONV, v == 2 ? 3 : 2, 1);
      if (v == 0)
        ti_attr_ints (g, n, "pads", 6, D (0, 1, 0, 1, 1, 1));
      else if (v == 1)
        {
          ti_attr_ints (g, n, "strides", 3, D (2, 2, 1));
          ti_attr_string (g, n, "auto_pad", "SAME_UPPER");
        }
      else
        {
          ti_attr_int (g, n, "group", 2);
          ti_attr_ints (g, n, "dilations", 3, D (1, 2, 1));
        }
      tc_node (g, n, TI_IN (rnd (5, D (1, 4, 4, 6, 5)), rnd (5, D (4, v == 2 ? 2 : 4, 2, 3, 2)),
                            v == 2 ? rnd (1, D (4)) : NULL), 6);
    }
  ti_done ();
}

/* GRU and LSTM: directions, linear_before_reset, sequence_lens with initial states, the
 * batch-major layout, peepholes, input_forget, clip, other activations, weights as inputs. */
static void
test_recurrent (void)
{
  struct {
    FbOpKind op; const char *dir; int layout; gboolean lbr_or_peep, lens, inputs_w, y_only;
    float clip; const char *acts[6];
  } rc[] = {
    { FB_OP_GRU, "forward" }, { FB_OP_GRU, "reverse", 0, TRUE },
    { FB_OP_GRU, "bidirectional", 0, FALSE, TRUE }, { FB_OP_GRU, "bidirectional", 1, TRUE, TRUE },
    { FB_OP_GRU, "forward", 1, FALSE, FALSE, TRUE, TRUE },
    { FB_OP_GRU, "bidirectional", 0, TRUE, FALSE, FALSE, FALSE, 0.5f,
      { "HardSigmoid", "LeakyRelu", "Sigmoid", "ScaledTanh" } },
    { FB_OP_LSTM, "forward" }, { FB_OP_LSTM, "reverse", 0, TRUE, TRUE },
    { FB_OP_LSTM, "bidirectional", 1, TRUE, TRUE }, { FB_OP_LSTM, "forward", 1, FALSE, FALSE, TRUE, TRUE },
    { FB_OP_LSTM, "bidirectional", 0, FALSE, TRUE, FALSE, FALSE, 0.4f,
      { "Sigmoid", "Tanh", "Softsign", "HardSigmoid", "Elu", "Affine" } },
    { FB_OP_LSTM, "forward", 0, TRUE, FALSE, FALSE, FALSE, 0, { "Sigmoid", "Softplus", "Relu" } },
  };
  const int64_t T = 4, B = 3, I = 5, H = 6;
  for (guint i = 0; i < G_N_ELEMENTS (rc); i++)
    {
      gboolean lstm = rc[i].op == FB_OP_LSTM;
      int64_t dirs = g_str_equal (rc[i].dir, "bidirectional") ? 2 : 1, G = lstm ? 4 : 3;
      FbGraph *g;
      FbNode *n = node (&g, rc[i].op, lstm ? 8 : 6, rc[i].y_only ? 1 : (lstm ? 3 : 2));
      ti_attr_int (g, n, "hidden_size", H);
      ti_attr_string (g, n, "direction", rc[i].dir);
      ti_attr_int (g, n, "layout", rc[i].layout);
      if (!lstm && rc[i].lbr_or_peep)
        ti_attr_int (g, n, "linear_before_reset", 1);
      if (lstm && i == G_N_ELEMENTS (rc) - 1)
        ti_attr_int (g, n, "input_forget", 1);
      if (rc[i].clip > 0)
        ti_attr_float (g, n, "clip", rc[i].clip);
      if (rc[i].acts[0])
        {
          guint na = (lstm ? 3 : 2) * (guint) dirs;
          ti_attr_strings (g, n, "activations", na, rc[i].acts);
          ti_attr_floats (g, n, "activation_alpha", 3, (const float[]) { 0.3f, 0.2f, 0.9f });
          ti_attr_floats (g, n, "activation_beta", 2, (const float[]) { 0.4f, 0.7f });
        }
      const int64_t *st = rc[i].layout ? D (B, dirs, H) : D (dirs, B, H);
      FbTensor *in[8] = {
        rnd (3, rc[i].layout ? D (B, T, I) : D (T, B, I)), rnd (3, D (dirs, G * H, I)),
        rnd (3, D (dirs, G * H, H)), rnd (2, D (dirs, 2 * G * H)),
        rc[i].lens ? ti_tensor (FB_DTYPE_INT32, 1, D (B), V (2, 4, 0)) : NULL,
        rc[i].lens ? rnd (3, st) : NULL, lstm && rc[i].lens ? rnd (3, st) : NULL,
        lstm && rc[i].lbr_or_peep ? rnd (2, D (dirs, 3 * H)) : NULL,
      };
      tc_node (g, n, in, rc[i].inputs_w ? 0 : 0xe);
    }
  ti_done ();
}

/* Resize and Upsample: every nearest_mode, every coordinate transformation of linear and
 * cubic interpolation, exclude_outside and cubic_coeff_a, tf_crop_and_resize's extrapolation,
 * sizes with axes and keep_aspect_ratio_policy, and the older opsets. */
static void
test_resize (void)
{
  FbGraph *g;
  FbNode *n;
  struct { const char *mode, *ct, *nm; } rs[] = {
    { "nearest", "half_pixel", "round_prefer_floor" }, { "nearest", "asymmetric", "floor" },
    { "nearest", "align_corners", "round_prefer_ceil" }, { "nearest", "pytorch_half_pixel", "ceil" },
    { "linear", "half_pixel" }, { "linear", "half_pixel_symmetric" }, { "linear", "align_corners" },
    { "linear", "asymmetric" }, { "linear", "pytorch_half_pixel" }, { "cubic", "half_pixel" },
    { "cubic", "align_corners" }, { "cubic", "asymmetric" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (rs); i++)
    for (int down = 0; down < 2; down++)
      {
        n = node (&g, FB_OP_RESIZE, 3, 1);
        ti_attr_string (g, n, "mode", rs[i].mode);
        ti_attr_string (g, n, "coordinate_transformation_mode", rs[i].ct);
        if (rs[i].nm)
          ti_attr_string (g, n, "nearest_mode", rs[i].nm);
        if (i == G_N_ELEMENTS (rs) - 1)
          {
            ti_attr_int (g, n, "exclude_outside", 1);
            ti_attr_float (g, n, "cubic_coeff_a", -0.5f);
          }
        tc_node (g, n, TI_IN (rnd (4, D (2, 3, 5, 6)), NULL,
                              ti_f32 (1, D (4), down ? V (1, 1, 0.6, 0.5) : V (1, 1, 2.0, 1.7))), 6);
      }
  n = node (&g, FB_OP_RESIZE, 3, 1);
  ti_attr_string (g, n, "mode", "linear");
  ti_attr_string (g, n, "coordinate_transformation_mode", "tf_crop_and_resize");
  ti_attr_float (g, n, "extrapolation_value", -2.0f);
  tc_node (g, n, TI_IN (rnd (4, D (1, 2, 5, 6)), ti_f32 (1, D (8), V (0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3)),
                        ti_f32 (1, D (4), V (1, 1, 1.6, 1.5))), 6);
  static const char *policies[] = { "stretch", "not_larger", "not_smaller" };
  for (guint p = 0; p < G_N_ELEMENTS (policies); p++)
    {
      n = node (&g, FB_OP_RESIZE, 4, 1);
      ti_attr_string (g, n, "mode", p == 1 ? "cubic" : "linear");
      ti_attr_ints (g, n, "axes", 2, D (2, 1));
      ti_attr_string (g, n, "keep_aspect_ratio_policy", policies[p]);
      tc_node (g, n, TI_IN (rnd (3, D (2, 4, 5)), NULL, NULL, ti_i64 (1, D (2), D (9, 3))), 14);
    }
  /* Nearest copies other element types as they are. */
  n = node (&g, FB_OP_RESIZE, 3, 1);
  tc_node (g, n, TI_IN (ints (FB_DTYPE_INT32, 4, D (1, 2, 3, 4)), NULL,
                        ti_f32 (1, D (4), V (1, 1, 2.5, 1.5))), 6);
  /* Resize-10 and Upsample-7 / -9: asymmetric coordinates, floored nearest. */
  g = ti_graph (10);
  n = ti_node (g, FB_OP_RESIZE, 2, 1);
  ti_attr_string (g, n, "mode", "linear");
  tc_node (g, n, TI_IN (rnd (4, D (1, 2, 3, 4)), ti_f32 (1, D (4), V (1, 1, 2.0, 2.5))), 2);
  g = ti_graph (7);
  n = ti_node (g, FB_OP_UPSAMPLE, 1, 1);
  ti_attr_floats (g, n, "scales", 4, (const float[]) { 1, 1, 2, 3 });
  tc_node (g, n, TI_IN (rnd (4, D (1, 2, 3, 4))), 0);
  g = ti_graph (9);
  n = ti_node (g, FB_OP_UPSAMPLE, 2, 1);
  ti_attr_string (g, n, "mode", "linear");
  tc_node (g, n, TI_IN (rnd (4, D (1, 2, 3, 4)), ti_f32 (1, D (4), V (1, 1, 2.0, 1.5))), 2);
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/backend-consistency/unary", test_unary);
  g_test_add_func ("/backend-consistency/binary", test_binary);
  g_test_add_func ("/backend-consistency/clip-cast", test_clip_cast);
  g_test_add_func ("/backend-consistency/reductions", test_reductions);
  g_test_add_func ("/backend-consistency/reductions-in-runs", test_reductions_in_runs);
  g_test_add_func ("/backend-consistency/normalizations", test_normalizations);
  g_test_add_func ("/backend-consistency/conv", test_conv);
  g_test_add_func ("/backend-consistency/matmul", test_matmul);
  g_test_add_func ("/backend-consistency/pools", test_pools);
  g_test_add_func ("/backend-consistency/movement", test_movement);
  g_test_add_func ("/backend-consistency/added-ops", test_added_ops);
  g_test_add_func ("/backend-consistency/conv-direct", test_conv_direct);
  g_test_add_func ("/backend-consistency/recurrent", test_recurrent);
  g_test_add_func ("/backend-consistency/resize", test_resize);
  return g_test_run ();
}
