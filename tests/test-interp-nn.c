/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The interpreter's neural-network operators: convolutions (checked against a naive reference
 * written here), pools, normalizations, Resize / Upsample, GRU and LSTM. */
#include "fb-test-interp.h"

#include <math.h>

#define I64(...) ((const int64_t[]) { __VA_ARGS__ })

/* The textbook 2-D convolution, one output element at a time. */
static FbTensor *
naive_conv2d (const FbTensor *x, const FbTensor *w, const FbTensor *b, int64_t group,
              const int64_t *stride, const int64_t *pads, const int64_t *dil)
{
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  int64_t M = w->dims[0], KH = w->dims[2], KW = w->dims[3], Cg = C / group, Mg = M / group;
  int64_t OH = (H + pads[0] + pads[2] - dil[0] * (KH - 1) - 1) / stride[0] + 1;
  int64_t OW = (W + pads[1] + pads[3] - dil[1] * (KW - 1) - 1) / stride[1] + 1;
  FbTensor *y = ti_f32 (4, D (N, M, OH, OW), NULL);

  for (int64_t n = 0; n < N; n++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++)
          {
            double acc = b ? fb_tensor_get_f64 (b, m) : 0;
            for (int64_t c = 0; c < Cg; c++)
              for (int64_t kh = 0; kh < KH; kh++)
                for (int64_t kw = 0; kw < KW; kw++)
                  {
                    int64_t ih = oh * stride[0] - pads[0] + kh * dil[0];
                    int64_t iw = ow * stride[1] - pads[1] + kw * dil[1];
                    int64_t ic = (m / Mg) * Cg + c;
                    if (ih < 0 || iw < 0 || ih >= H || iw >= W)
                      continue;
                    acc += fb_tensor_get_f64 (x, ((n * C + ic) * H + ih) * W + iw) *
                           fb_tensor_get_f64 (w, ((m * Cg + c) * KH + kh) * KW + kw);
                  }
            fb_tensor_set_f64 (y, ((n * M + m) * OH + oh) * OW + ow, acc);
          }
  return y;
}

static void
test_conv_against_reference (void)
{
  static const struct {
    int64_t C, M, group, H, W, K, stride, pad, dil;
  } cases[] = {
    { 3, 4, 1, 7, 6, 3, 1, 1, 1 },
    { 4, 4, 4, 8, 8, 3, 2, 1, 1 },   /* depthwise, strided */
    { 4, 6, 2, 9, 7, 3, 1, 0, 2 },   /* grouped, dilated */
    { 5, 3, 1, 6, 6, 1, 1, 0, 1 },   /* pointwise */
    { 2, 2, 1, 5, 5, 5, 3, 2, 1 },
  };
  FbGraph *g = ti_graph (17);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      FbTensor *x = ti_random (4, D (2, cases[i].C, cases[i].H, cases[i].W), 10 + i);
      FbTensor *w = ti_random (4, D (cases[i].M, cases[i].C / cases[i].group, cases[i].K, cases[i].K), 20 + i);
      FbTensor *b = ti_random (1, D (cases[i].M), 30 + i);
      int64_t s[2] = { cases[i].stride, cases[i].stride };
      int64_t p[4] = { cases[i].pad, cases[i].pad, cases[i].pad, cases[i].pad };
      int64_t d[2] = { cases[i].dil, cases[i].dil };
      FbNode *n = ti_node (g, FB_OP_CONV, 3, 1);
      ti_attr_int (g, n, "group", cases[i].group);
      ti_attr_ints (g, n, "strides", 2, s);
      ti_attr_ints (g, n, "pads", 4, p);
      ti_attr_ints (g, n, "dilations", 2, d);
      ti_assert_close (ti_run1 (n, TI_IN (x, w, b)),
                       naive_conv2d (x, w, b, cases[i].group, s, p, d), 1e-5);
    }
  ti_done ();
}

static void
test_conv_forms (void)
{
  FbGraph *g = ti_graph (17);
  FbTensor *x = ti_f32 (4, D (1, 1, 3, 3), V (1, 2, 3, 4, 5, 6, 7, 8, 9));
  FbTensor *ones = ti_f32 (4, D (1, 1, 2, 2), V (1, 1, 1, 1));
  FbTensor *x1 = ti_f32 (3, D (1, 1, 5), V (1, 2, 3, 4, 5));
  FbTensor *w1 = ti_f32 (3, D (1, 1, 2), V (1, -1));
  FbNode *n;

  n = ti_node (g, FB_OP_CONV, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ones)), FB_DTYPE_FLOAT32, 4, D (1, 1, 2, 2), V (12, 16, 24, 28), 0);
  /* SAME_UPPER keeps the extent and puts the odd pad at the end; SAME_LOWER at the start. */
  n = ti_node (g, FB_OP_CONV, 2, 1);
  ti_attr_string (g, n, "auto_pad", "SAME_UPPER");
  ti_assert (ti_run1 (n, TI_IN (x, ones)), FB_DTYPE_FLOAT32, 4, D (1, 1, 3, 3),
             V (12, 16, 9, 24, 28, 15, 15, 17, 9), 0);
  n = ti_node (g, FB_OP_CONV, 2, 1);
  ti_attr_string (g, n, "auto_pad", "SAME_LOWER");
  ti_assert (ti_run1 (n, TI_IN (x, ones)), FB_DTYPE_FLOAT32, 4, D (1, 1, 3, 3),
             V (1, 3, 5, 5, 12, 16, 11, 24, 28), 0);
  n = ti_node (g, FB_OP_CONV, 2, 1);
  ti_attr_string (g, n, "auto_pad", "VALID");
  ti_attr_ints (g, n, "strides", 2, I64 (2, 2));
  ti_assert (ti_run1 (n, TI_IN (x, ones)), FB_DTYPE_FLOAT32, 4, D (1, 1, 1, 1), V (12), 0);
  /* 1-D and 3-D convolutions share the loops. */
  n = ti_node (g, FB_OP_CONV, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x1, w1)), FB_DTYPE_FLOAT32, 3, D (1, 1, 4), V (-1, -1, -1, -1), 0);
  n = ti_node (g, FB_OP_CONV, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (5, D (1, 1, 2, 2, 2), V (1, 2, 3, 4, 5, 6, 7, 8)),
                                ti_f32 (5, D (1, 1, 2, 1, 1), V (1, 10)))),
             FB_DTYPE_FLOAT32, 5, D (1, 1, 1, 2, 2), V (51, 62, 73, 84), 0);
  /* Float64 too. */
  n = ti_node (g, FB_OP_CONV, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_tensor (FB_DTYPE_FLOAT64, 4, D (1, 1, 3, 3), V (1, 2, 3, 4, 5, 6, 7, 8, 9)),
                                ti_tensor (FB_DTYPE_FLOAT64, 4, D (1, 1, 2, 2), V (1, 1, 1, 1)))),
             FB_DTYPE_FLOAT64, 4, D (1, 1, 2, 2), V (12, 16, 24, 28), 0);

  /* Channels-last equals channels-first between transposes. */
  {
    FbTensor *xc = ti_random (4, D (1, 3, 5, 4), 7), *w = ti_random (4, D (2, 3, 3, 3), 8);
    FbNode *perm_in = ti_node (g, FB_OP_TRANSPOSE, 1, 1), *perm_out = ti_node (g, FB_OP_TRANSPOSE, 1, 1);
    FbTensor *want, *got;
    ti_attr_ints (g, perm_in, "perm", 4, I64 (0, 2, 3, 1));
    ti_attr_ints (g, perm_out, "perm", 4, I64 (0, 2, 3, 1));
    n = ti_node (g, FB_OP_CONV, 2, 1);
    ti_attr_ints (g, n, "pads", 4, I64 (1, 1, 1, 1));
    want = ti_run1 (perm_out, TI_IN (ti_run1 (n, TI_IN (xc, w))));
    n = ti_node (g, FB_OP_CONV, 2, 1);
    ti_attr_ints (g, n, "pads", 4, I64 (1, 1, 1, 1));
    ti_attr_string (g, n, FB_ATTR_LAYOUT, "nhwc");
    got = ti_run1 (n, TI_IN (ti_run1 (perm_in, TI_IN (xc)), w));
    ti_assert_close (got, want, 1e-6);
  }

  /* Inputs that do not fit are errors naming the node. */
  n = ti_node (g, FB_OP_CONV, 2, 1);
  ti_attr_int (g, n, "group", 2);
  ti_run_fails (n, TI_IN (x, ones), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_CONV, 2, 1);
  ti_run_fails (n, TI_IN (ti_f32 (4, D (1, 1, 1, 1), V (1)), ones), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_CONV, 2, 1);
  ti_attr_ints (g, n, "strides", 2, I64 (0, 1));
  ti_run_fails (n, TI_IN (x, ones), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_CONV, 2, 1);
  ti_run_fails (n, TI_IN (ti_tensor (FB_DTYPE_INT32, 4, D (1, 1, 3, 3), NULL), ones),
                FB_INTERP_ERROR_UNSUPPORTED);
  n = ti_node (g, FB_OP_CONV, 2, 1);
  ti_run_fails (n, TI_IN (ti_f32 (6, D (1, 1, 1, 1, 1, 1), NULL), ti_f32 (6, D (1, 1, 1, 1, 1, 1), NULL)),
                FB_INTERP_ERROR_UNSUPPORTED);
  ti_done ();
}

static void
test_conv_transpose (void)
{
  FbGraph *g = ti_graph (17);
  FbTensor *x = ti_f32 (4, D (1, 1, 2, 2), V (1, 2, 3, 4));
  FbTensor *ones = ti_f32 (4, D (1, 1, 2, 2), V (1, 1, 1, 1));
  FbNode *n;

  n = ti_node (g, FB_OP_CONV_TRANSPOSE, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ones)), FB_DTYPE_FLOAT32, 4, D (1, 1, 3, 3),
             V (1, 3, 2, 4, 10, 6, 3, 7, 4), 0);
  n = ti_node (g, FB_OP_CONV_TRANSPOSE, 3, 1);
  ti_attr_ints (g, n, "strides", 2, I64 (2, 2));
  ti_assert (ti_run1 (n, TI_IN (x, ones, ti_f32 (1, D (1), V (0.5)))), FB_DTYPE_FLOAT32, 4,
             D (1, 1, 4, 4), V (1.5, 1.5, 2.5, 2.5, 1.5, 1.5, 2.5, 2.5, 3.5, 3.5, 4.5, 4.5, 3.5, 3.5, 4.5, 4.5), 0);
  n = ti_node (g, FB_OP_CONV_TRANSPOSE, 2, 1);
  ti_attr_ints (g, n, "strides", 2, I64 (2, 2));
  ti_attr_ints (g, n, "pads", 4, I64 (1, 1, 0, 0));
  ti_attr_ints (g, n, "output_padding", 2, I64 (1, 0));
  ti_assert (ti_run1 (n, TI_IN (x, ones)), FB_DTYPE_FLOAT32, 4, D (1, 1, 4, 3),
             V (1, 2, 2, 3, 4, 4, 3, 4, 4, 0, 0, 0), 0);
  n = ti_node (g, FB_OP_CONV_TRANSPOSE, 2, 1);
  ti_attr_ints (g, n, "strides", 2, I64 (2, 2));
  ti_attr_ints (g, n, "output_shape", 2, I64 (4, 4));
  ti_assert (ti_run1 (n, TI_IN (x, ones)), FB_DTYPE_FLOAT32, 4, D (1, 1, 4, 4), NULL, 0);
  /* Two groups of one channel each, two outputs per group. */
  n = ti_node (g, FB_OP_CONV_TRANSPOSE, 2, 1);
  ti_attr_int (g, n, "group", 2);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (4, D (1, 2, 1, 1), V (2, 3)), ti_f32 (4, D (2, 2, 1, 1), V (1, 10, 100, 1000)))),
             FB_DTYPE_FLOAT32, 4, D (1, 4, 1, 1), V (2, 20, 300, 3000), 0);
  n = ti_node (g, FB_OP_CONV_TRANSPOSE, 2, 1);
  ti_run_fails (n, TI_IN (ti_f32 (4, D (1, 2, 2, 2), NULL), ones), FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_pools (void)
{
  FbGraph *g = ti_graph (12);
  FbTensor *x = ti_f32 (4, D (1, 1, 3, 4), V (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
  FbTensor **out;
  FbNode *n;

  n = ti_node (g, FB_OP_MAX_POOL, 1, 2);
  ti_attr_ints (g, n, "kernel_shape", 2, I64 (2, 2));
  ti_attr_ints (g, n, "strides", 2, I64 (2, 2));
  out = ti_run (n, TI_IN (x));
  ti_assert (out[0], FB_DTYPE_FLOAT32, 4, D (1, 1, 1, 2), V (6, 8), 0);
  ti_assert (out[1], FB_DTYPE_INT64, 4, D (1, 1, 1, 2), V (5, 7), 0);
  g_free (out);
  /* ceil_mode keeps a partial last window; storage_order=1 numbers indices column-major. */
  n = ti_node (g, FB_OP_MAX_POOL, 1, 2);
  ti_attr_ints (g, n, "kernel_shape", 2, I64 (2, 2));
  ti_attr_ints (g, n, "strides", 2, I64 (2, 2));
  ti_attr_int (g, n, "ceil_mode", 1);
  ti_attr_int (g, n, "storage_order", 1);
  out = ti_run (n, TI_IN (x));
  ti_assert (out[0], FB_DTYPE_FLOAT32, 4, D (1, 1, 2, 2), V (6, 8, 10, 12), 0);
  ti_assert (out[1], FB_DTYPE_INT64, 4, D (1, 1, 2, 2), V (4, 10, 5, 11), 0);
  g_free (out);
  n = ti_node (g, FB_OP_MAX_POOL, 1, 1);
  ti_attr_ints (g, n, "kernel_shape", 1, I64 (2));
  ti_attr_ints (g, n, "dilations", 1, I64 (2));
  ti_assert (ti_run1 (n, TI_IN (ti_tensor (FB_DTYPE_INT8, 3, D (1, 1, 4), V (-5, 9, -3, -7)))),
             FB_DTYPE_INT8, 3, D (1, 1, 2), V (-3, 9), 0);

  n = ti_node (g, FB_OP_AVERAGE_POOL, 1, 1);
  ti_attr_ints (g, n, "kernel_shape", 2, I64 (2, 2));
  ti_attr_ints (g, n, "pads", 4, I64 (1, 1, 0, 0));
  ti_attr_ints (g, n, "strides", 2, I64 (2, 2));
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 4, D (1, 1, 2, 2), V (1, 2.5, 7, 8.5), 1e-6);
  n = ti_node (g, FB_OP_AVERAGE_POOL, 1, 1);
  ti_attr_ints (g, n, "kernel_shape", 2, I64 (2, 2));
  ti_attr_ints (g, n, "pads", 4, I64 (1, 1, 0, 0));
  ti_attr_ints (g, n, "strides", 2, I64 (2, 2));
  ti_attr_int (g, n, "count_include_pad", 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 4, D (1, 1, 2, 2), V (0.25, 1.25, 3.5, 8.5), 1e-6);
  n = ti_node (g, FB_OP_AVERAGE_POOL, 1, 1);
  ti_run_fails (n, TI_IN (x), FB_INTERP_ERROR_UNSUPPORTED);
  n = ti_node (g, FB_OP_AVERAGE_POOL, 1, 1);
  ti_attr_ints (g, n, "kernel_shape", 2, I64 (5, 5));
  ti_run_fails (n, TI_IN (x), FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g, FB_OP_GLOBAL_AVERAGE_POOL, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 4, D (1, 1, 1, 1), V (6.5), 0);
  n = ti_node (g, FB_OP_GLOBAL_MAX_POOL, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 4, D (1, 1, 1, 1), V (12), 0);
  /* Channels-last: [N, H, W, C] in, [N, 1, 1, C] out. */
  n = ti_node (g, FB_OP_GLOBAL_AVERAGE_POOL, 1, 1);
  ti_attr_string (g, n, FB_ATTR_LAYOUT, "nhwc");
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (4, D (1, 2, 1, 2), V (1, 10, 3, 30)))), FB_DTYPE_FLOAT32, 4,
             D (1, 1, 1, 2), V (2, 20), 0);
  n = ti_node (g, FB_OP_MAX_POOL, 1, 1);
  ti_attr_ints (g, n, "kernel_shape", 2, I64 (2, 1));
  ti_attr_string (g, n, FB_ATTR_LAYOUT, "nhwc");
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (4, D (1, 2, 1, 2), V (1, 40, 3, 30)))), FB_DTYPE_FLOAT32, 4,
             D (1, 1, 1, 2), V (3, 40), 0);
  ti_done ();
}

static void
test_normalizations (void)
{
  FbGraph *g = ti_graph (17);
  FbTensor *x = ti_f32 (3, D (1, 2, 2), V (1, 3, 10, 20));
  FbTensor **out;
  FbNode *n;

  n = ti_node (g, FB_OP_BATCH_NORMALIZATION, 5, 1);
  ti_attr_float (g, n, "epsilon", 0);
  ti_assert (ti_run1 (n, TI_IN (x, ti_f32 (1, D (2), V (2, 1)), ti_f32 (1, D (2), V (1, 0)),
                                ti_f32 (1, D (2), V (2, 10)), ti_f32 (1, D (2), V (4, 25)))),
             FB_DTYPE_FLOAT32, 3, D (1, 2, 2), V (0, 2, 0, 2), 1e-6);
  /* Training mode normalizes with the batch's statistics and updates the running ones. */
  n = ti_node (g, FB_OP_BATCH_NORMALIZATION, 5, 3);
  ti_attr_int (g, n, "training_mode", 1);
  ti_attr_float (g, n, "epsilon", 0);
  ti_attr_float (g, n, "momentum", 0.5f);
  out = ti_run (n, TI_IN (x, ti_f32 (1, D (2), V (1, 1)), ti_f32 (1, D (2), V (0, 0)),
                          ti_f32 (1, D (2), V (0, 0)), ti_f32 (1, D (2), V (1, 1))));
  ti_assert (out[0], FB_DTYPE_FLOAT32, 3, D (1, 2, 2), V (-1, 1, -1, 1), 1e-6);
  ti_assert (out[1], FB_DTYPE_FLOAT32, 1, D (2), V (1, 7.5), 1e-6);
  ti_assert (out[2], FB_DTYPE_FLOAT32, 1, D (2), V (1, 13), 1e-6);
  g_free (out);
  n = ti_node (g, FB_OP_BATCH_NORMALIZATION, 5, 1);
  ti_run_fails (n, TI_IN (x, ti_f32 (1, D (3), NULL), ti_f32 (1, D (2), NULL), ti_f32 (1, D (2), NULL),
                          ti_f32 (1, D (2), NULL)),
                FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g, FB_OP_INSTANCE_NORMALIZATION, 3, 1);
  ti_attr_float (g, n, "epsilon", 0);
  ti_assert (ti_run1 (n, TI_IN (x, ti_f32 (1, D (2), V (1, 2)), ti_f32 (1, D (2), V (0, 1)))),
             FB_DTYPE_FLOAT32, 3, D (1, 2, 2), V (-1, 1, -1, 3), 1e-6);

  n = ti_node (g, FB_OP_LAYER_NORMALIZATION, 3, 3);
  ti_attr_float (g, n, "epsilon", 0);
  out = ti_run (n, TI_IN (x, ti_f32 (1, D (2), V (1, 2)), ti_f32 (0, NULL, V (1))));
  ti_assert (out[0], FB_DTYPE_FLOAT32, 3, D (1, 2, 2), V (0, 3, 0, 3), 1e-6);
  ti_assert (out[1], FB_DTYPE_FLOAT32, 3, D (1, 2, 1), V (2, 15), 1e-6);
  ti_assert (out[2], FB_DTYPE_FLOAT32, 3, D (1, 2, 1), V (1, 0.2), 1e-6);
  g_free (out);
  n = ti_node (g, FB_OP_LAYER_NORMALIZATION, 2, 1);
  ti_attr_int (g, n, "axis", 1);
  ti_attr_float (g, n, "epsilon", 0);
  ti_assert (ti_run1 (n, TI_IN (x, ti_f32 (2, D (2, 2), V (1, 1, 1, 1)))), FB_DTYPE_FLOAT32, 3,
             D (1, 2, 2), NULL, 0);
  n = ti_node (g, FB_OP_LAYER_NORMALIZATION, 2, 1);
  ti_run_fails (n, TI_IN (x, ti_f32 (1, D (3), NULL)), FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g, FB_OP_LRN, 1, 1);
  ti_attr_int (g, n, "size", 3);
  ti_attr_float (g, n, "alpha", 3);
  ti_attr_float (g, n, "beta", 1);
  ti_attr_float (g, n, "bias", 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (4, D (1, 2, 1, 1), V (1, 2)))), FB_DTYPE_FLOAT32, 4,
             D (1, 2, 1, 1), V (1.0 / 6, 2.0 / 6), 1e-6);
  ti_done ();
}

static void
test_resize (void)
{
  FbGraph *g9 = ti_graph (9), *g13 = ti_graph (13), *g18 = ti_graph (18);
  FbTensor *x = ti_f32 (4, D (1, 1, 2, 2), V (1, 2, 3, 4));
  FbTensor *x2 = ti_f32 (4, D (1, 1, 1, 2), V (0, 1));
  FbTensor *s2 = ti_f32 (1, D (4), V (1, 1, 2, 2));
  FbNode *n;

  n = ti_node (g9, FB_OP_UPSAMPLE, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, s2)), FB_DTYPE_FLOAT32, 4, D (1, 1, 4, 4),
             V (1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4), 0);
  n = ti_node (g9, FB_OP_UPSAMPLE, 2, 1);
  ti_attr_string (g9, n, "mode", "linear");
  ti_assert (ti_run1 (n, TI_IN (x2, ti_f32 (1, D (4), V (1, 1, 1, 2)))), FB_DTYPE_FLOAT32, 4,
             D (1, 1, 1, 4), V (0, 0.5, 1, 1), 0);

  /* Resize: half_pixel linear, align_corners linear, asymmetric nearest, and sizes. */
  n = ti_node (g13, FB_OP_RESIZE, 3, 1);
  ti_attr_string (g13, n, "mode", "linear");
  ti_assert (ti_run1 (n, TI_IN (x2, NULL, ti_f32 (1, D (4), V (1, 1, 1, 2)))), FB_DTYPE_FLOAT32, 4,
             D (1, 1, 1, 4), V (0, 0.25, 0.75, 1), 1e-7);
  n = ti_node (g13, FB_OP_RESIZE, 4, 1);
  ti_attr_string (g13, n, "mode", "linear");
  ti_attr_string (g13, n, "coordinate_transformation_mode", "align_corners");
  ti_assert (ti_run1 (n, TI_IN (x2, NULL, NULL, ti_i64 (1, D (4), I64 (1, 1, 1, 3)))),
             FB_DTYPE_FLOAT32, 4, D (1, 1, 1, 3), V (0, 0.5, 1), 1e-7);
  n = ti_node (g13, FB_OP_RESIZE, 3, 1);
  ti_attr_string (g13, n, "coordinate_transformation_mode", "asymmetric");
  ti_attr_string (g13, n, "nearest_mode", "floor");
  ti_assert (ti_run1 (n, TI_IN (x, NULL, s2)), FB_DTYPE_FLOAT32, 4, D (1, 1, 4, 4),
             V (1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4), 0);
  /* Downsampling by 2 with half_pixel: source 0.5 rounds to 0 with round_prefer_floor. */
  n = ti_node (g13, FB_OP_RESIZE, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (2, D (1, 4), V (1, 2, 3, 4)), NULL, ti_f32 (1, D (2), V (1, 0.5)))),
             FB_DTYPE_FLOAT32, 2, D (1, 2), V (1, 3), 0);
  n = ti_node (g13, FB_OP_RESIZE, 3, 1);
  ti_attr_string (g13, n, "nearest_mode", "round_prefer_ceil");
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (2, D (1, 4), V (1, 2, 3, 4)), NULL, ti_f32 (1, D (2), V (1, 0.5)))),
             FB_DTYPE_FLOAT32, 2, D (1, 2), V (2, 4), 0);
  /* Cubic: grid points stay; a midpoint whose four taps are inside reproduces the ramp; next to
   * an edge the clamped tap pulls it to 0.59375 * 1 - 0.09375 * 2 (and symmetrically). */
  n = ti_node (g13, FB_OP_RESIZE, 4, 1);
  ti_attr_string (g13, n, "mode", "cubic");
  ti_attr_string (g13, n, "coordinate_transformation_mode", "align_corners");
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (2, D (1, 4), V (0, 1, 2, 3)), NULL, NULL, ti_i64 (1, D (2), I64 (1, 7)))),
             FB_DTYPE_FLOAT32, 2, D (1, 7), V (0, 0.40625, 1, 1.5, 2, 2.59375, 3), 1e-6);
  /* Opset 18: axes and keep_aspect_ratio_policy. */
  n = ti_node (g18, FB_OP_RESIZE, 4, 1);
  ti_attr_ints (g18, n, "axes", 2, I64 (2, 3));
  ti_attr_string (g18, n, "keep_aspect_ratio_policy", "not_larger");
  ti_assert (ti_run1 (n, TI_IN (x, NULL, NULL, ti_i64 (1, D (2), I64 (4, 8)))), FB_DTYPE_FLOAT32, 4,
             D (1, 1, 4, 4), NULL, 0);
  n = ti_node (g13, FB_OP_RESIZE, 3, 1);
  ti_run_fails (n, TI_IN (x, NULL, ti_f32 (1, D (4), V (1, 1, 1e30, 1))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g13, FB_OP_RESIZE, 3, 1);
  ti_run_fails (n, TI_IN (x, NULL, ti_f32 (1, D (2), V (1, 1))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g13, FB_OP_RESIZE, 1, 1);
  ti_run_fails (n, TI_IN (x), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g13, FB_OP_RESIZE, 3, 1);
  ti_attr_string (g13, n, "mode", "area");
  g_assert_false (fb_interp_supports (n));
  ti_done ();
}

static void
test_recurrent (void)
{
  FbGraph *g = ti_graph (14);
  int64_t H = 2;
  FbTensor *x = ti_random (3, D (3, 2, 4), 5);               /* seq 3, batch 2, input 4 */
  FbTensor *w = ti_f32 (3, D (1, 4 * H, 4), NULL);            /* zero weights */
  FbTensor *r = ti_f32 (3, D (1, 4 * H, H), NULL);
  FbTensor *c0 = ti_f32 (3, D (1, 2, H), V (1, 2, 3, 4));
  FbTensor *lens = ti_tensor (FB_DTYPE_INT32, 1, D (2), V (3, 1));
  FbTensor **out;
  FbNode *n;
  double c1[4], c3[4];

  /* With zero weights every gate is sigmoid(0) = 1/2 and the cell candidate tanh(0) = 0, so
   * c halves at every step and h = tanh(c) / 2; batch row 1 stops after one step. */
  for (int i = 0; i < 4; i++)
    {
      c1[i] = fb_tensor_get_f64 (c0, i) / 2;
      c3[i] = fb_tensor_get_f64 (c0, i) / 8;
    }
  n = ti_node (g, FB_OP_LSTM, 7, 3);
  ti_attr_int (g, n, "hidden_size", H);
  out = ti_run (n, TI_IN (x, w, r, NULL, lens, NULL, c0));
  ti_assert (out[2], FB_DTYPE_FLOAT32, 3, D (1, 2, 2), V (c3[0], c3[1], c1[2], c1[3]), 1e-6);
  ti_assert (out[1], FB_DTYPE_FLOAT32, 3, D (1, 2, 2),
             V (tanh (c3[0]) / 2, tanh (c3[1]) / 2, tanh (c1[2]) / 2, tanh (c1[3]) / 2), 1e-6);
  g_assert_cmpint (out[0]->rank, ==, 4);
  g_assert_cmpint (out[0]->dims[0], ==, 3);
  /* Past its length, batch row 1 writes zeros to Y. */
  g_assert_cmpfloat (fb_tensor_get_f64 (out[0], (1 * 2 + 1) * H), ==, 0);
  g_free (out);

  /* GRU, zero weights: z = 1/2, candidate tanh(0) = 0: h halves every step. */
  n = ti_node (g, FB_OP_GRU, 6, 2);
  ti_attr_int (g, n, "hidden_size", H);
  ti_attr_string (g, n, "direction", "bidirectional");
  out = ti_run (n, TI_IN (x, ti_f32 (3, D (2, 3 * H, 4), NULL), ti_f32 (3, D (2, 3 * H, H), NULL), NULL, NULL,
                          ti_f32 (3, D (2, 2, H), V (8, 8, 8, 8, 16, 16, 16, 16))));
  ti_assert (out[1], FB_DTYPE_FLOAT32, 3, D (2, 2, 2), V (1, 1, 1, 1, 2, 2, 2, 2), 1e-6);
  ti_assert (out[0], FB_DTYPE_FLOAT32, 4, D (3, 2, 2, 2), NULL, 0);
  /* The reverse direction's first step (t = 2) halves 16 once. */
  g_assert_cmpfloat_with_epsilon (fb_tensor_get_f64 (out[0], ((2 * 2 + 1) * 2 + 0) * H), 8, 1e-6);
  g_free (out);

  n = ti_node (g, FB_OP_GRU, 3, 1);
  ti_attr_int (g, n, "hidden_size", H);
  {
    const char *acts[] = { "Sigmoid", "Cube" };
    ti_attr_strings (g, n, "activations", 2, acts);
  }
  g_assert_false (fb_interp_supports (n));
  ti_run_fails (n, TI_IN (x, ti_f32 (3, D (1, 3 * H, 4), NULL), ti_f32 (3, D (1, 3 * H, H), NULL)),
                FB_INTERP_ERROR_UNSUPPORTED);
  n = ti_node (g, FB_OP_LSTM, 3, 1);
  ti_attr_int (g, n, "hidden_size", 3);
  ti_run_fails (n, TI_IN (x, w, r), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_LSTM, 5, 1);
  ti_attr_int (g, n, "hidden_size", H);
  ti_run_fails (n, TI_IN (x, w, r, NULL, ti_tensor (FB_DTYPE_INT32, 1, D (2), V (4, 1))),
                FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

/* layout=1 (batch first) must equal layout=0 on transposed inputs and outputs; ONNX Runtime
 * does not run batch-first recurrences, so this is checked against the interpreter itself. */
static void
test_recurrent_layout (void)
{
  FbGraph *g = ti_graph (14);
  static const FbOpKind ops[] = { FB_OP_GRU, FB_OP_LSTM };

  for (guint k = 0; k < G_N_ELEMENTS (ops); k++)
    {
      int64_t H = 3, G = ops[k] == FB_OP_GRU ? 3 : 4, T = 4, B = 2, I = 5;
      FbTensor *x = ti_random (3, D (T, B, I), 40 + k);
      FbTensor *w = ti_random (3, D (2, G * H, I), 50 + k);
      FbTensor *r = ti_random (3, D (2, G * H, H), 60 + k);
      FbTensor *h0 = ti_random (3, D (2, B, H), 70 + k);
      FbNode *seq_first = ti_node (g, ops[k], 6, 2), *batch_first = ti_node (g, ops[k], 6, 2);
      FbNode *tx = ti_node (g, FB_OP_TRANSPOSE, 1, 1), *th = ti_node (g, FB_OP_TRANSPOSE, 1, 1);
      FbNode *ty = ti_node (g, FB_OP_TRANSPOSE, 1, 1);
      FbTensor **a, **b;

      ti_attr_ints (g, tx, "perm", 3, D (1, 0, 2));
      ti_attr_ints (g, th, "perm", 3, D (1, 0, 2));
      ti_attr_ints (g, ty, "perm", 4, D (2, 0, 1, 3));   /* [T,dirs,B,H] -> [B,T,dirs,H] */
      for (int i = 0; i < 2; i++)
        {
          FbNode *n = i ? batch_first : seq_first;
          ti_attr_int (g, n, "hidden_size", H);
          ti_attr_string (g, n, "direction", "bidirectional");
          ti_attr_int (g, n, "layout", i);
        }
      a = ti_run (seq_first, TI_IN (x, w, r, NULL, NULL, h0));
      b = ti_run (batch_first, TI_IN (ti_run1 (tx, TI_IN (x)), w, r, NULL, NULL, ti_run1 (th, TI_IN (h0))));
      ti_assert_close (b[0], ti_run1 (ty, TI_IN (a[0])), 1e-6);
      ti_assert_close (b[1], ti_run1 (th, TI_IN (a[1])), 1e-6);
      g_free (a);
      g_free (b);
    }
  ti_done ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/interp/nn/conv-reference", test_conv_against_reference);
  g_test_add_func ("/interp/nn/conv-forms", test_conv_forms);
  g_test_add_func ("/interp/nn/conv-transpose", test_conv_transpose);
  g_test_add_func ("/interp/nn/pools", test_pools);
  g_test_add_func ("/interp/nn/normalizations", test_normalizations);
  g_test_add_func ("/interp/nn/resize", test_resize);
  g_test_add_func ("/interp/nn/recurrent", test_recurrent);
  g_test_add_func ("/interp/nn/recurrent-layout", test_recurrent_layout);
  return g_test_run ();
}
