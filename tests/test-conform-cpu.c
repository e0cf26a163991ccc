/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cpu target's lowerings of operators that ONNX's node cases reach only in one easy form:
 * pools over three spatial axes with pads, strides, dilations and ceil_mode in both layouts,
 * integer MaxPool (whose padding must be the type's lowest value, not 0), BatchNormalization
 * with statistics fed at run time and in training mode, ConvInteger and QLinearConv with int8
 * and uint8 zero points (per output channel for the weights), Det with pivoting and singular
 * matrices, a 1-D convolution long enough to be tiled by positions, and a classifier's product
 * tiled by the weights it streams. Each is compared with the interpreter; the zero-point rules
 * also with values worked out by hand, so that the oracle is not the only judge. */
#include "fb-test-cpu.h"
#include "fb-lower.h"

#include <string.h>

static FbNode *
node (FbGraph **g, int opset, FbOpKind op, guint n_in, guint n_out)
{
  *g = ti_graph (opset);
  return ti_node (*g, op, n_in, n_out);
}

/* A tensor of integers in [lo, hi], deterministic in seed. */
static FbTensor *
ints (FbDType dtype, int rank, const int64_t *dims, int lo, int hi, guint32 seed)
{
  FbTensor *t = ti_tensor (dtype, rank, dims, NULL);
  g_autoptr(GRand) r = g_rand_new_with_seed (seed);
  for (int64_t i = 0; i < t->numel; i++)
    fb_tensor_set_f64 (t, i, g_rand_int_range (r, lo, hi + 1));
  return t;
}

/* Generated code, not a host step through the interpreter (which is what a node whose output
 * shape inference leaves open becomes): comparing that with the interpreter proves nothing. */
static void
assert_compiled (FbGraph *g)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (g, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      if (k->kind != FB_KERNEL_LOOPS || k->phases->len == 0)
        g_error ("kernel %s (%s) is not generated loops", k->name, k->label);
    }
}

/* tc_node, for a node that must compile to generated loops. */
static void
check_node (FbGraph *g, FbNode *n, FbTensor **inputs, guint const_mask)
{
  tc_finish (g, n, inputs, const_mask);
  assert_compiled (g);
  g_autoptr(GPtrArray) in = tc_inputs (g, n, inputs, const_mask);
  tc_check (g, in);
}

/* tc_node, for a node that must lower to one kernel whose last phase (its tiles) has extent
 * tiles. */
static void
check_tiles (FbGraph *g, FbNode *n, FbTensor **inputs, guint const_mask, int64_t tiles)
{
  tc_finish (g, n, inputs, const_mask);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (g, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->kernels->len, ==, 1);
  const FbKernel *k = g_ptr_array_index (plan->kernels, 0);
  const FbKPhase *last = g_ptr_array_index (k->phases, k->phases->len - 1);
  g_assert_cmpint (last->extent, ==, tiles);
  g_autoptr(GPtrArray) in = tc_inputs (g, n, inputs, const_mask);
  tc_check (g, in);
}

/* The graph's outputs as the cpu target computes them. */
static GPtrArray *
cpu_run (FbGraph *g, FbNode *n, FbTensor **inputs, guint const_mask)
{
  g_autoptr(GError) error = NULL;
  tc_finish (g, n, inputs, const_mask);
  assert_compiled (g);
  g_autoptr(GPtrArray) in = tc_inputs (g, n, inputs, const_mask);
  g_autoptr(FbCpuModule) m = fb_cpu_compile (g, 2, &error);
  g_assert_no_error (error);
  GPtrArray *out = fb_cpu_module_run (m, in, NULL, &error);
  g_assert_no_error (error);
  return out;
}

static void
pool_attrs (FbGraph *g, FbNode *n, const int64_t *k, const int64_t *s, const int64_t *d,
            const int64_t *pads, int ceil, const char *layout)
{
  ti_attr_ints (g, n, "kernel_shape", 3, k);
  ti_attr_ints (g, n, "strides", 3, s);
  if (d)
    ti_attr_ints (g, n, "dilations", 3, d);
  ti_attr_ints (g, n, "pads", 6, pads);
  ti_attr_int (g, n, "ceil_mode", ceil);
  if (layout)
    ti_attr_string (g, n, FB_ATTR_LAYOUT, layout);
}

static void
test_pools_3d (void)
{
  FbGraph *g;
  FbNode *n;
  const int64_t *pads = D (1, 0, 1, 0, 1, 1);
  for (int nhwc = 0; nhwc < 2; nhwc++)
    for (int ceil = 0; ceil < 2; ceil++)
      {
        const char *layout = nhwc ? "nhwc" : NULL;
        const int64_t *dims = nhwc ? D (2, 7, 6, 5, 3) : D (2, 3, 7, 6, 5);
        n = node (&g, 19, FB_OP_MAX_POOL, 1, 1);
        pool_attrs (g, n, D (3, 2, 2), D (2, 1, 2), D (1, 2, 1), pads, ceil, layout);
        check_node (g, n, TI_IN (ti_random (5, dims, 21)), 0);
        for (int include = 0; include < 2; include++)
          {
            n = node (&g, 19, FB_OP_AVERAGE_POOL, 1, 1);
            pool_attrs (g, n, D (3, 2, 2), D (2, 1, 2), D (1, 2, 1), pads, ceil, layout);
            ti_attr_int (g, n, "count_include_pad", include);
            check_node (g, n, TI_IN (ti_random (5, dims, 22)), 0);
          }
      }
  /* SAME_LOWER puts the odd padding first. */
  n = node (&g, 19, FB_OP_AVERAGE_POOL, 1, 1);
  ti_attr_ints (g, n, "kernel_shape", 3, D (2, 3, 2));
  ti_attr_ints (g, n, "strides", 3, D (2, 2, 1));
  ti_attr_string (g, n, "auto_pad", "SAME_LOWER");
  check_node (g, n, TI_IN (ti_random (5, D (1, 2, 5, 5, 4), 23)), 0);
  /* Indices number the channels-first input, row-major or column-major over the spatial axes. */
  for (int order = 0; order < 2; order++)
    {
      n = node (&g, 19, FB_OP_MAX_POOL, 1, 2);
      pool_attrs (g, n, D (2, 2, 3), D (1, 2, 2), NULL, D (0, 1, 1, 1, 0, 1), 0, NULL);
      ti_attr_int (g, n, "storage_order", order);
      check_node (g, n, TI_IN (ti_random (5, D (2, 2, 4, 5, 6), 24)), 0);
    }
  ti_done ();
}

/* The 2-D float pools' fast forms, where they meet dilations and ceil_mode's last window. */
static void
test_pools_2d_edges (void)
{
  FbGraph *g;
  FbNode *n;
  for (int nhwc = 0; nhwc < 2; nhwc++)
    for (int include = 0; include < 2; include++)
      {
        n = node (&g, 19, FB_OP_AVERAGE_POOL, 1, 1);
        ti_attr_ints (g, n, "kernel_shape", 2, D (3, 2));
        ti_attr_ints (g, n, "strides", 2, D (2, 2));
        ti_attr_ints (g, n, "dilations", 2, D (2, 2));
        ti_attr_ints (g, n, "pads", 4, D (1, 1, 1, 0));
        ti_attr_int (g, n, "ceil_mode", 1);
        ti_attr_int (g, n, "count_include_pad", include);
        if (nhwc)
          ti_attr_string (g, n, FB_ATTR_LAYOUT, "nhwc");
        check_node (g, n, TI_IN (ti_random (4, nhwc ? D (1, 9, 8, 3) : D (1, 3, 9, 8), 25)), 0);
      }
  ti_done ();
}

static void
test_pools_integer (void)
{
  FbGraph *g;
  FbNode *n;
  static const FbDType types[] = { FB_DTYPE_UINT8, FB_DTYPE_INT8, FB_DTYPE_INT32 };
  for (guint t = 0; t < G_N_ELEMENTS (types); t++)
    for (int nhwc = 0; nhwc < 2; nhwc++)
      {
        n = node (&g, 12, FB_OP_MAX_POOL, 1, 1);
        ti_attr_ints (g, n, "kernel_shape", 2, D (3, 3));
        ti_attr_ints (g, n, "pads", 4, D (2, 1, 1, 2));
        ti_attr_ints (g, n, "strides", 2, D (2, 1));
        if (nhwc)
          ti_attr_string (g, n, FB_ATTR_LAYOUT, "nhwc");
        /* int8 all negative: a padding of 0 instead of -128 would win every border window. */
        int lo = types[t] == FB_DTYPE_UINT8 ? 0 : -128, hi = types[t] == FB_DTYPE_UINT8 ? 255 : -1;
        check_node (g, n, TI_IN (ints (types[t], 4, nhwc ? D (1, 5, 6, 2) : D (1, 2, 5, 6), lo, hi, 30 + t)), 0);
      }
  /* By hand: the border windows of an all-negative int8 map keep their values. */
  n = node (&g, 12, FB_OP_MAX_POOL, 1, 1);
  ti_attr_ints (g, n, "kernel_shape", 2, D (2, 2));
  ti_attr_ints (g, n, "pads", 4, D (1, 1, 0, 0));
  g_autoptr(GPtrArray) out = cpu_run (g, n, TI_IN (ti_tensor (FB_DTYPE_INT8, 4, D (1, 1, 2, 2),
                                                              V (-100, -7, -5, -128))), 0);
  ti_assert (g_ptr_array_index (out, 0), FB_DTYPE_INT8, 4, D (1, 1, 2, 2), V (-100, -7, -5, -5), 0);
  ti_done ();
}

static FbTensor **
bn_inputs (const int64_t *dims, guint32 seed)
{
  int64_t c = dims[1];
  FbTensor *var = ti_random (1, &c, seed + 4);
  for (int64_t i = 0; i < c; i++)
    fb_tensor_set_f64 (var, i, 0.2 + fb_tensor_get_f64 (var, i) * fb_tensor_get_f64 (var, i));
  FbTensor **in = g_new (FbTensor *, 5);
  in[0] = ti_random (4, dims, seed);
  in[1] = ti_random (1, &c, seed + 1);
  in[2] = ti_random (1, &c, seed + 2);
  in[3] = ti_random (1, &c, seed + 3);
  in[4] = var;
  return in;
}

static void
test_batchnorm (void)
{
  FbGraph *g;
  FbNode *n;
  /* Inference, statistics fed at run time, then as constants (folded). */
  for (guint mask = 0; mask < 2; mask++)
    {
      g_autofree FbTensor **in = bn_inputs (D (2, 3, 4, 5), 40);
      n = node (&g, 15, FB_OP_BATCH_NORMALIZATION, 5, 1);
      ti_attr_float (g, n, "epsilon", 1e-2f);
      check_node (g, n, in, mask ? 0x1e : 0);
    }
  /* Training: all three outputs, or Y alone (still normalized by the batch's statistics). */
  for (guint outs = 1; outs <= 3; outs += 2)
    {
      g_autofree FbTensor **in = bn_inputs (D (3, 4, 2, 5), 41);
      n = node (&g, 15, FB_OP_BATCH_NORMALIZATION, 5, outs);
      ti_attr_int (g, n, "training_mode", 1);
      ti_attr_float (g, n, "momentum", 0.7f);
      check_node (g, n, in, 0);
    }
  /* Before opset 14, asking for the statistics meant training. */
  {
    g_autofree FbTensor **in = bn_inputs (D (2, 3, 3, 3), 42);
    n = node (&g, 9, FB_OP_BATCH_NORMALIZATION, 5, 3);
    check_node (g, n, in, 0);
  }
  /* Statistics asked for outside training: the inputs' own, Y by them. */
  {
    g_autofree FbTensor **in = bn_inputs (D (2, 3, 3, 3), 43);
    n = node (&g, 15, FB_OP_BATCH_NORMALIZATION, 5, 3);
    check_node (g, n, in, 0);
  }
  /* spatial=0 (opset 7): a parameter per element of a sample, at run time and constant. */
  for (guint mask = 0; mask < 2; mask++)
    {
      FbTensor *var = ti_random (3, D (3, 2, 4), 44);
      for (int64_t i = 0; i < var->numel; i++)
        fb_tensor_set_f64 (var, i, 0.5 + fb_tensor_get_f64 (var, i));
      n = node (&g, 7, FB_OP_BATCH_NORMALIZATION, 5, 1);
      ti_attr_int (g, n, "spatial", 0);
      check_node (g, n, TI_IN (ti_random (4, D (2, 3, 2, 4), 45), ti_random (3, D (3, 2, 4), 46),
                               ti_random (3, D (3, 2, 4), 47), ti_random (3, D (3, 2, 4), 48), var),
                  mask ? 0x1e : 0);
    }
  /* By hand: channel values 1, 3 have mean 2 and variance 1. */
  n = node (&g, 15, FB_OP_BATCH_NORMALIZATION, 5, 3);
  ti_attr_int (g, n, "training_mode", 1);
  ti_attr_float (g, n, "epsilon", 0.0f);
  ti_attr_float (g, n, "momentum", 0.5f);
  g_autoptr(GPtrArray) out = cpu_run (g, n, TI_IN (ti_f32 (3, D (2, 1, 1), V (1, 3)), ti_f32 (1, D (1), V (2)),
                                                   ti_f32 (1, D (1), V (1)), ti_f32 (1, D (1), V (4)),
                                                   ti_f32 (1, D (1), V (3))), 0);
  ti_assert (g_ptr_array_index (out, 0), FB_DTYPE_FLOAT32, 3, D (2, 1, 1), V (-1, 3), 1e-6);
  ti_assert (g_ptr_array_index (out, 1), FB_DTYPE_FLOAT32, 1, D (1), V (3), 1e-6);
  ti_assert (g_ptr_array_index (out, 2), FB_DTYPE_FLOAT32, 1, D (1), V (2), 1e-6);
  ti_done ();
}

/* A channels-first 1-D convolution whose im2col (1152 x 1024 floats, 4.7 MB) is past the bound
 * from which fb-lower-conv.c splits its one row of output by positions too: 2 tiles of 192
 * output channels by 8 of 128 positions (16 in all, where channels alone make 12 of 32), each an
 * sgemm over its block of the im2col, then the bias over the tile. Compared with the
 * interpreter. */
static void
test_conv1d_position_tiles (void)
{
  FbGraph *g = ti_graph (17);
  FbNode *n = ti_node (g, FB_OP_CONV, 3, 1);
  ti_attr_ints (g, n, "strides", 1, D (2));
  FbTensor **in = TI_IN (ti_random (3, D (1, 384, 2049), 61), ti_random (3, D (384, 384, 3), 62),
                         ti_random (1, D (384), 63));
  check_tiles (g, n, in, 0x6, 16);
  ti_done ();
}

/* A classifier's product: one row by 784 x 1000 weights (transB), 1.6 MFLOP that stream 3.1
 * MB. Tiled by its flops it was one tile, on one core's bandwidth; fb-lower-contract.c tiles a
 * product of few rows by the weights it streams, here 16 tiles of 64 columns (the last 40).
 * Compared with the interpreter, with the bias. */
static void
test_gemv_weight_tiles (void)
{
  FbGraph *g = ti_graph (13);
  FbNode *n = ti_node (g, FB_OP_GEMM, 3, 1);
  ti_attr_int (g, n, "transB", 1);
  FbTensor **in = TI_IN (ti_random (2, D (1, 784), 64), ti_random (2, D (1000, 784), 65),
                         ti_random (1, D (1000), 66));
  check_tiles (g, n, in, 0x6, 16);
  ti_done ();
}

static void
test_conv_integer (void)
{
  FbGraph *g;
  FbNode *n;
  /* uint8 x, int8 w with a zero point per output channel; pads, strides, dilations, groups. */
  n = node (&g, 10, FB_OP_CONV_INTEGER, 4, 1);
  ti_attr_ints (g, n, "pads", 4, D (1, 2, 0, 1));
  ti_attr_ints (g, n, "strides", 2, D (2, 1));
  ti_attr_ints (g, n, "dilations", 2, D (1, 2));
  ti_attr_int (g, n, "group", 2);
  check_node (g, n, TI_IN (ints (FB_DTYPE_UINT8, 4, D (2, 4, 7, 6), 0, 255, 50),
                        ints (FB_DTYPE_INT8, 4, D (6, 2, 3, 2), -128, 127, 51),
                        ti_tensor (FB_DTYPE_UINT8, 0, NULL, V (131)),
                        ti_tensor (FB_DTYPE_INT8, 1, D (6), V (-128, -3, 0, 5, 127, 1))), 0);
  /* int8 x, uint8 w, constant zero points, 1-D and 3-D, and none at all. */
  n = node (&g, 10, FB_OP_CONV_INTEGER, 4, 1);
  ti_attr_ints (g, n, "pads", 2, D (2, 1));
  check_node (g, n, TI_IN (ints (FB_DTYPE_INT8, 3, D (1, 3, 9), -128, 127, 52),
                        ints (FB_DTYPE_UINT8, 3, D (2, 3, 4), 0, 255, 53),
                        ti_tensor (FB_DTYPE_INT8, 0, NULL, V (-128)),
                        ti_tensor (FB_DTYPE_UINT8, 0, NULL, V (255))), 12);
  n = node (&g, 10, FB_OP_CONV_INTEGER, 2, 1);
  ti_attr_ints (g, n, "pads", 6, D (1, 0, 1, 0, 1, 1));
  check_node (g, n, TI_IN (ints (FB_DTYPE_UINT8, 5, D (1, 2, 4, 3, 5), 0, 255, 54),
                        ints (FB_DTYPE_INT8, 5, D (3, 2, 2, 2, 3), -128, 127, 55)), 0);
  /* By hand: (200 - 128) * (-3 - -1) = -144 and (10 - 128) * -2 = 236; int8 x with zero point
   * -128 shifts -128 to 0 and 127 to 255. */
  n = node (&g, 10, FB_OP_CONV_INTEGER, 4, 1);
  g_autoptr(GPtrArray) out = cpu_run (g, n, TI_IN (ti_tensor (FB_DTYPE_UINT8, 3, D (1, 1, 2), V (200, 10)),
                                                   ti_tensor (FB_DTYPE_INT8, 3, D (1, 1, 1), V (-3)),
                                                   ti_tensor (FB_DTYPE_UINT8, 0, NULL, V (128)),
                                                   ti_tensor (FB_DTYPE_INT8, 1, D (1), V (-1))), 0);
  ti_assert (g_ptr_array_index (out, 0), FB_DTYPE_INT32, 3, D (1, 1, 2), V (-144, 236), 0);
  n = node (&g, 10, FB_OP_CONV_INTEGER, 4, 1);
  g_autoptr(GPtrArray) out2 = cpu_run (g, n, TI_IN (ti_tensor (FB_DTYPE_INT8, 3, D (1, 1, 2), V (-128, 127)),
                                                    ti_tensor (FB_DTYPE_UINT8, 3, D (1, 1, 1), V (255)),
                                                    ti_tensor (FB_DTYPE_INT8, 0, NULL, V (-128)),
                                                    ti_tensor (FB_DTYPE_UINT8, 0, NULL, V (0))), 0);
  ti_assert (g_ptr_array_index (out2, 0), FB_DTYPE_INT32, 3, D (1, 1, 2), V (0, 255 * 255), 0);
  /* A zero point per output channel: 10 * (5 - 1) and 10 * (5 - 3). */
  n = node (&g, 10, FB_OP_CONV_INTEGER, 4, 1);
  g_autoptr(GPtrArray) out3 = cpu_run (g, n, TI_IN (ti_tensor (FB_DTYPE_UINT8, 4, D (1, 1, 1, 1), V (10)),
                                                    ti_tensor (FB_DTYPE_INT8, 4, D (2, 1, 1, 1), V (5, 5)),
                                                    ti_tensor (FB_DTYPE_UINT8, 0, NULL, V (0)),
                                                    ti_tensor (FB_DTYPE_INT8, 1, D (2), V (1, 3))), 0);
  ti_assert (g_ptr_array_index (out3, 0), FB_DTYPE_INT32, 4, D (1, 2, 1, 1), V (40, 20), 0);
  ti_done ();
}

static void
test_qlinear_conv (void)
{
  FbGraph *g;
  FbNode *n;
  /* x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B: scales and
   * zero points per output channel, a bias, outputs that saturate both ways. */
  for (int signed_y = 0; signed_y < 2; signed_y++)
    {
      n = node (&g, 10, FB_OP_QLINEAR_CONV, 9, 1);
      ti_attr_ints (g, n, "pads", 4, D (1, 1, 1, 1));
      ti_attr_ints (g, n, "strides", 2, D (1, 2));
      FbDType yt = signed_y ? FB_DTYPE_INT8 : FB_DTYPE_UINT8;
      check_node (g, n, TI_IN (ints (FB_DTYPE_UINT8, 4, D (1, 3, 6, 6), 0, 255, 60),
                            ti_f32 (0, NULL, V (0.05)),
                            ti_tensor (FB_DTYPE_UINT8, 0, NULL, V (120)),
                            ints (FB_DTYPE_INT8, 4, D (4, 3, 3, 3), -128, 127, 61),
                            ti_f32 (1, D (4), V (0.002, 0.01, 0.0005, 0.03)),
                            ti_tensor (FB_DTYPE_INT8, 1, D (4), V (0, -4, 3, 0)),
                            ti_f32 (0, NULL, V (0.15)),
                            ti_tensor (yt, 0, NULL, V (signed_y ? -10 : 100)),
                            ti_tensor (FB_DTYPE_INT32, 1, D (4), V (-3000, 250, 0, 12345))), 0);
    }
  /* By hand: x - 50 times w - 1 = 1, times 0.5 * 0.625 / 0.125 = 2.5, rounded half to even,
   * plus 3: sums 10, 1, 3 and 205 give 28, 5 (2.5 -> 2), 11 (7.5 -> 8) and 255 (saturated). */
  n = node (&g, 10, FB_OP_QLINEAR_CONV, 9, 1);
  g_autoptr(GPtrArray) out = cpu_run (g, n, TI_IN (ti_tensor (FB_DTYPE_UINT8, 4, D (1, 1, 1, 4), V (60, 51, 53, 255)),
                                                   ti_f32 (0, NULL, V (0.5)),
                                                   ti_tensor (FB_DTYPE_UINT8, 0, NULL, V (50)),
                                                   ti_tensor (FB_DTYPE_INT8, 4, D (1, 1, 1, 1), V (2)),
                                                   ti_f32 (1, D (1), V (0.625)),
                                                   ti_tensor (FB_DTYPE_INT8, 1, D (1), V (1)),
                                                   ti_f32 (0, NULL, V (0.125)),
                                                   ti_tensor (FB_DTYPE_UINT8, 0, NULL, V (3)),
                                                   NULL), 0);
  ti_assert (g_ptr_array_index (out, 0), FB_DTYPE_UINT8, 4, D (1, 1, 1, 4), V (28, 5, 11, 255), 0);
  ti_done ();
}

static void
test_det (void)
{
  FbGraph *g;
  FbNode *n;
  /* A batch of random matrices, one that needs a row swap at once (a zero corner), a singular
   * one (two equal rows), a 1x1, in double too. */
  n = node (&g, 11, FB_OP_DET, 1, 1);
  check_node (g, n, TI_IN (ti_random (4, D (2, 3, 5, 5), 70)), 0);
  n = node (&g, 11, FB_OP_DET, 1, 1);
  check_node (g, n, TI_IN (ti_f32 (3, D (3, 3, 3), V (0, 2, 1, 3, 1, 4, 5, 9, 2,
                                                   1, 2, 3, 4, 5, 6, 1, 2, 3,
                                                   0, 0, 1, 0, 1, 0, 1, 0, 0))), 0);
  n = node (&g, 11, FB_OP_DET, 1, 1);
  check_node (g, n, TI_IN (ti_f32 (2, D (1, 1), V (-2.5))), 0);
  FbTensor *r = ti_random (3, D (2, 4, 4), 71), *d = ti_tensor (FB_DTYPE_FLOAT64, 3, D (2, 4, 4), NULL);
  for (int64_t i = 0; i < d->numel; i++)
    fb_tensor_set_f64 (d, i, fb_tensor_get_f64 (r, i));
  n = node (&g, 11, FB_OP_DET, 1, 1);
  check_node (g, n, TI_IN (d), 0);
  /* By hand: the permutation matrix above is an odd one (det -1), the singular one exactly 0. */
  n = node (&g, 11, FB_OP_DET, 1, 1);
  g_autoptr(GPtrArray) out = cpu_run (g, n, TI_IN (ti_f32 (3, D (3, 3, 3), V (0, 2, 1, 3, 1, 4, 5, 9, 2,
                                                                              1, 2, 3, 4, 5, 6, 1, 2, 3,
                                                                              0, 0, 1, 0, 1, 0, 1, 0, 0))), 0);
  ti_assert (g_ptr_array_index (out, 0), FB_DTYPE_FLOAT32, 1, D (3), V (50, 0, -1), 1e-5);
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/conform-cpu/pools-3d", test_pools_3d);
  g_test_add_func ("/conform-cpu/pools-2d-edges", test_pools_2d_edges);
  g_test_add_func ("/conform-cpu/pools-integer", test_pools_integer);
  g_test_add_func ("/conform-cpu/batchnorm", test_batchnorm);
  g_test_add_func ("/conform-cpu/conv1d-position-tiles", test_conv1d_position_tiles);
  g_test_add_func ("/conform-cpu/gemv-weight-tiles", test_gemv_weight_tiles);
  g_test_add_func ("/conform-cpu/conv-integer", test_conv_integer);
  g_test_add_func ("/conform-cpu/qlinear-conv", test_qlinear_conv);
  g_test_add_func ("/conform-cpu/det", test_det);
  return g_test_run ();
}
