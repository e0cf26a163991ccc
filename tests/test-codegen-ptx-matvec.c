/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Convolutions that are matrix-vector products (few output pixels: the 1x1 convolutions of a
 * squeeze-excitation block, also over a batch, a 3x3 one whose output is one pixel) on the cuda
 * target: lowered to generated kernels, not cuDNN phases, with their bias and activation in the same kernel; the
 * host's emulation of those kernels computes what the interpreter does, in both layouts; a large
 * convolution still goes to cuDNN, and the cpu target lowers the small ones as before. */
#include "fb-cuda.h"
#include "fb-cpu.h"
#include "fb-test-ptx.h"
#include "fb-test-passes.h"
#include "fb-codegen.h"
#include "fb-lower.h"
#include "fb-pipeline.h"

#define GPU fb_cuda_target_desc ()
#define NO_ACT FB_OP_COUNT          /* a convolution without an activation after it */

/* x [n, cin, h, w] -> Conv (cout, k x k, stride s, pads p) + bias -> act (NO_ACT: none). */
static FbGraph *
conv_graph (int64_t n, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t k, int64_t s,
            int64_t p, FbOpKind act)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (n, cin, h, w));
  FbValue *v = tp_op (g, FB_OP_CONV, "conv", x,
                      tp_const (g, "w", 4, TP_DIMS (cout, cin, k, k), NULL),
                      tp_const (g, "b", 1, TP_DIMS (cout), NULL), NULL);
  tp_attr_ints (g, v, "strides", 2, TP_DIMS (s, s));
  tp_attr_ints (g, v, "pads", 4, TP_DIMS (p, p, p, p));
  if (act != NO_ACT)
    v = tp_op (g, act, "act", v, NULL);
  tp_output (g, v);
  return g;
}

/* A squeeze-excitation block as EfficientNet has it: global pool, 1x1 reduce + SiLU, 1x1
 * expand + Sigmoid, scaling x. */
static FbGraph *
se_graph (int64_t c, int64_t r, int64_t hw)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, c, hw, hw));
  FbValue *v = tp_op (g, FB_OP_GLOBAL_AVERAGE_POOL, "pool", x, NULL);
  v = tp_op (g, FB_OP_CONV, "reduce", v, tp_const (g, "w1", 4, TP_DIMS (r, c, 1, 1), NULL),
             tp_const (g, "b1", 1, TP_DIMS (r), NULL), NULL);
  v = tp_op (g, FB_OP_MUL, "silu", v, tp_op (g, FB_OP_SIGMOID, "silu_gate", v, NULL), NULL);
  v = tp_op (g, FB_OP_CONV, "expand", v, tp_const (g, "w2", 4, TP_DIMS (c, r, 1, 1), NULL),
             tp_const (g, "b2", 1, TP_DIMS (c), NULL), NULL);
  v = tp_op (g, FB_OP_SIGMOID, "gate", v, NULL);
  v = tp_op (g, FB_OP_MUL, "scale", x, v, NULL);
  tp_output (g, v);
  return g;
}

/* Which convolutions the GPU lowering generates and which it leaves to cuDNN. */
static void
test_choice (void)
{
  FbLayout layouts[] = { FB_LAYOUT_NCHW, FB_LAYOUT_NHWC };
  for (guint l = 0; l < G_N_ELEMENTS (layouts); l++)
    {
      /* EfficientNet-B0's largest squeeze-excitation pair: 1152 -> 48 -> 1152 on a 1x1 map. */
      TpLowered se = tp_lower (se_graph (1152, 48, 7), layouts[l], GPU);
      g_assert_cmpuint (se.conv_phases, ==, 0);
      g_assert_true (se.generated);
      /* The expand convolution and its Sigmoid are one kernel, not a convolution then an
       * elementwise pass over its output (channels-last, the graph's channels-first input and
       * output are transposed at its edges: two kernels more). */
      TpLowered expand = tp_lower (conv_graph (1, 48, 1, 1, 1152, 1, 1, 0, FB_OP_SIGMOID), layouts[l], GPU);
      g_assert_cmpuint (expand.kernels, ==, layouts[l] == FB_LAYOUT_NCHW ? 1 : 3);
      g_assert_true (expand.generated);
      /* A 3x3 convolution whose output is one pixel, and a batch of 16 of 1x1 maps. */
      TpLowered tap = tp_lower (conv_graph (1, 256, 3, 3, 256, 3, 1, 0, FB_OP_RELU), layouts[l], GPU);
      g_assert_cmpuint (tap.conv_phases, ==, 0);
      TpLowered batch = tp_lower (conv_graph (16, 64, 1, 1, 256, 1, 1, 0, NO_ACT), layouts[l], GPU);
      g_assert_cmpuint (batch.conv_phases, ==, 0);
      /* The squeeze-excitation expand over a batch of 32: 32 columns of 1x1 maps. */
      TpLowered se32 = tp_lower (conv_graph (32, 48, 1, 1, 1152, 1, 1, 0, FB_OP_SIGMOID), layouts[l], GPU);
      g_assert_cmpuint (se32.conv_phases, ==, 0);
      /* MobileNetV3-Large's widest one over a batch of 32: 240 -> 960, 7.4 M multiply-adds. */
      TpLowered wide32 = tp_lower (conv_graph (32, 240, 1, 1, 960, 1, 1, 0, FB_OP_HARD_SIGMOID), layouts[l], GPU);
      g_assert_cmpuint (wide32.conv_phases, ==, 0);

      /* Past the rule: a real image (reuse of every weight over 784 pixels), 17 pixels of one
       * map, a batch of 65 1x1 maps, a batch of 32 past 16 M multiply-adds, and a one-pixel
       * product of 2048 x 4608 (9.4 M multiply-adds) are still cuDNN's. */
      TpLowered big = tp_lower (conv_graph (1, 64, 28, 28, 64, 3, 1, 1, FB_OP_RELU), layouts[l], GPU);
      g_assert_cmpuint (big.conv_phases, ==, 1);
      TpLowered wide = tp_lower (conv_graph (1, 64, 1, 17, 256, 1, 1, 0, NO_ACT), layouts[l], GPU);
      g_assert_cmpuint (wide.conv_phases, ==, 1);
      TpLowered batch65 = tp_lower (conv_graph (65, 64, 1, 1, 256, 1, 1, 0, NO_ACT), layouts[l], GPU);
      g_assert_cmpuint (batch65.conv_phases, ==, 1);
      TpLowered heavy32 = tp_lower (conv_graph (32, 1024, 1, 1, 1024, 1, 1, 0, NO_ACT), layouts[l], GPU);
      g_assert_cmpuint (heavy32.conv_phases, ==, 1);
      TpLowered heavy = tp_lower (conv_graph (1, 512, 3, 3, 2048, 3, 1, 0, NO_ACT), layouts[l], GPU);
      g_assert_cmpuint (heavy.conv_phases, ==, 1);
    }
  /* The cpu target is untouched: a channels-last 1x1 convolution of a 1x1 map is still one
   * oneDNN primitive there, a channels-first one still sgemm calls. */
  TpLowered cpu_nhwc = tp_lower (conv_graph (1, 48, 1, 1, 1152, 1, 1, 0, FB_OP_SIGMOID), FB_LAYOUT_NHWC,
                            fb_cpu_target_desc ());
  g_assert_cmpuint (cpu_nhwc.conv_phases, ==, 1);
  TpLowered cpu_nchw = tp_lower (conv_graph (1, 48, 1, 1, 1152, 1, 1, 0, FB_OP_SIGMOID), FB_LAYOUT_NCHW,
                            fb_cpu_target_desc ());
  g_assert_false (cpu_nchw.generated);
  ti_done ();
}

/* The generated kernels, emulated, against the interpreter. Blocks cooperate where an output
 * element sums over 32 or more products. */
static void
test_emulated (void)
{
  FbLayout layouts[] = { FB_LAYOUT_NCHW, FB_LAYOUT_NHWC };
  for (guint l = 0; l < G_N_ELEMENTS (layouts); l++)
    {
      FbLayout lay = layouts[l];
      /* 1x1 on a 1x1 map, bias and Sigmoid: a thread per output element (24 products). */
      tp_check_emulated_pipeline (conv_graph (1, 24, 1, 1, 96, 1, 1, 0, FB_OP_SIGMOID), lay,
                                  TI_IN (ti_random (4, TP_DIMS (1, 24, 1, 1), 31)), 1, FALSE);
      /* A batch of two, 96 -> 24 with Relu: a block per output element. */
      tp_check_emulated_pipeline (conv_graph (2, 96, 1, 1, 24, 1, 1, 0, FB_OP_RELU), lay,
                                  TI_IN (ti_random (4, TP_DIMS (2, 96, 1, 1), 32)), 1, TRUE);
      /* 3x3, stride 2, padded, on a 2x2 map: one output pixel, most taps in the padding. */
      tp_check_emulated_pipeline (conv_graph (1, 16, 2, 2, 32, 3, 2, 1, NO_ACT), lay,
                                  TI_IN (ti_random (4, TP_DIMS (1, 16, 2, 2), 33)), 1, TRUE);
      /* 3x3 without padding on a 3x3 map, and a batch of two: 2 x 1 x 1 outputs. */
      tp_check_emulated_pipeline (conv_graph (2, 8, 3, 3, 16, 3, 1, 0, FB_OP_SIGMOID), lay,
                                  TI_IN (ti_random (4, TP_DIMS (2, 8, 3, 3), 34)), 1, TRUE);
      /* A batch of 32, 40 -> 64 with a Sigmoid: 2048 outputs of 40 products, a warp each
       * (rows read along the input channels, past the 1x1 kernel's loops of one). */
      tp_check_emulated_pipeline (conv_graph (32, 40, 1, 1, 64, 1, 1, 0, FB_OP_SIGMOID), lay,
                                  TI_IN (ti_random (4, TP_DIMS (32, 40, 1, 1), 36)), 1, TRUE);
      /* The whole squeeze-excitation block. */
      tp_check_emulated_pipeline (se_graph (64, 8, 3), lay,
                                  TI_IN (ti_random (4, TP_DIMS (1, 64, 3, 3), 35)), 1, TRUE);
    }
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/codegen-ptx-matvec/choice", test_choice);
  g_test_add_func ("/codegen-ptx-matvec/emulated", test_emulated);
  return g_test_run ();
}
