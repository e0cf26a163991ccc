/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Depthwise convolutions of up to 32 channels (and channels-last ones of 7x7 windows at any
 * width at batch 1) on the cuda target: generated kernels (a thread per output element, taps unrolled,
 * padding by clamped reads), not cuDNN phases, with their
 * bias and epilogue (SiLU as PyTorch exports it, Relu) in the same kernel; the host's emulation
 * of those kernels computes what the interpreter does in both layouts, for strides, dilations,
 * uneven pads, 7x7 windows and 1-D convolutions; what the rule leaves out (more channels, wider
 * windows, two outputs a group) still goes to cuDNN. */
#include "fb-cuda.h"
#include "fb-test-ptx.h"
#include "fb-test-passes.h"
#include "fb-lower.h"
#include "fb-pipeline.h"
#include "fb-ptx.h"

#include <string.h>

#define GPU    fb_cuda_target_desc ()
#define NO_ACT FB_OP_COUNT          /* no activation after the convolution */
#define SILU   FB_OP_SWISH          /* x * Sigmoid (x), spelled out as PyTorch exports it */

typedef struct {
  int64_t n, c, h, w;               /* input; h 0: a 1-D convolution over w */
  int64_t mult;                     /* output channels per input channel (1: depthwise) */
  int64_t kh, kw, s, d;             /* window, stride, dilation */
  int64_t pads[4];                  /* begin h, begin w, end h, end w */
} Geometry;

/* x -> Conv (a group per channel) + bias -> act. */
static FbGraph *
depthwise_graph (const Geometry *q, FbOpKind act)
{
  FbGraph *g = tp_graph (17);
  gboolean one_d = q->h == 0;
  FbValue *x = one_d ? tp_input (g, "x", 3, TP_DIMS (q->n, q->c, q->w))
                     : tp_input (g, "x", 4, TP_DIMS (q->n, q->c, q->h, q->w));
  FbValue *w = one_d ? tp_const (g, "w", 3, TP_DIMS (q->c * q->mult, 1, q->kw), NULL)
                     : tp_const (g, "w", 4, TP_DIMS (q->c * q->mult, 1, q->kh, q->kw), NULL);
  FbValue *v = tp_op (g, FB_OP_CONV, "conv", x, w, tp_const (g, "b", 1, TP_DIMS (q->c * q->mult), NULL),
                      NULL);
  if (one_d)
    {
      tp_attr_ints (g, v, "strides", 1, TP_DIMS (q->s));
      tp_attr_ints (g, v, "dilations", 1, TP_DIMS (q->d));
      tp_attr_ints (g, v, "pads", 2, TP_DIMS (q->pads[1], q->pads[3]));
    }
  else
    {
      tp_attr_ints (g, v, "strides", 2, TP_DIMS (q->s, q->s));
      tp_attr_ints (g, v, "dilations", 2, TP_DIMS (q->d, q->d));
      tp_attr_ints (g, v, "pads", 4, TP_DIMS (q->pads[0], q->pads[1], q->pads[2], q->pads[3]));
    }
  tp_attr_int (g, v, "group", q->c);
  if (act == SILU)
    v = tp_op (g, FB_OP_MUL, "silu", v, tp_op (g, FB_OP_SIGMOID, "silu_gate", v, NULL), NULL);
  else if (act != NO_ACT)
    v = tp_op (g, act, "act", v, NULL);
  tp_output (g, v);
  return g;
}

static void
check_emulated (const Geometry *q, FbOpKind act, FbLayout layout, guint seed)
{
  FbTensor *x = q->h ? ti_random (4, TP_DIMS (q->n, q->c, q->h, q->w), seed)
                     : ti_random (3, TP_DIMS (q->n, q->c, q->w), seed);
  tp_check_emulated_pipeline (depthwise_graph (q, act), layout, TI_IN (x), 1, FALSE);
}

static void
test_choice (void)
{
  FbLayout layouts[] = { FB_LAYOUT_NCHW, FB_LAYOUT_NHWC };
  for (guint l = 0; l < G_N_ELEMENTS (layouts); l++)
    {
      /* EfficientNet-B0's first depthwise layer at batch 32 (32 channels), with its SiLU: one
       * kernel in NCHW (channels-last adds the transposes at the graph's edges). */
      Geometry eff = { 32, 32, 112, 112, 1, 3, 3, 1, 1, { 1, 1, 1, 1 } };
      TpLowered silu = tp_lower (depthwise_graph (&eff, SILU), layouts[l], GPU);
      g_assert_cmpuint (silu.conv_phases, ==, 0);
      g_assert_true (silu.generated);
      g_assert_cmpuint (silu.kernels, ==, layouts[l] == FB_LAYOUT_NCHW ? 1 : 3);
      /* A 7x7 window. */
      Geometry seven = { 1, 24, 56, 56, 1, 7, 7, 1, 1, { 3, 3, 3, 3 } };
      g_assert_cmpuint (tp_lower (depthwise_graph (&seven, NO_ACT), layouts[l], GPU).conv_phases, ==, 0);
      /* ConvNeXt's 7x7 layers at 96 channels: generated channels-last at batch 1, where that
       * measured faster than cuDNN; cuDNN's in NCHW and at batch 32. */
      Geometry convnext = { 1, 96, 56, 56, 1, 7, 7, 1, 1, { 3, 3, 3, 3 } };
      g_assert_cmpuint (tp_lower (depthwise_graph (&convnext, NO_ACT), layouts[l], GPU).conv_phases,
                        ==, layouts[l] == FB_LAYOUT_NHWC ? 0 : 1);
      Geometry convnext32 = { 32, 96, 56, 56, 1, 7, 7, 1, 1, { 3, 3, 3, 3 } };
      g_assert_cmpuint (tp_lower (depthwise_graph (&convnext32, NO_ACT), layouts[l], GPU).conv_phases,
                        ==, 1);

      /* Past the rule: 96 channels (cuDNN measured faster there), 11x11 (121 taps), two
       * output channels per group. */
      Geometry wider = { 32, 96, 112, 112, 1, 3, 3, 2, 1, { 0, 0, 1, 1 } };
      g_assert_cmpuint (tp_lower (depthwise_graph (&wider, SILU), layouts[l], GPU).conv_phases, ==, 1);
      Geometry wide = { 1, 16, 32, 32, 1, 11, 11, 1, 1, { 5, 5, 5, 5 } };
      g_assert_cmpuint (tp_lower (depthwise_graph (&wide, NO_ACT), layouts[l], GPU).conv_phases, ==, 1);
      Geometry mult = { 1, 16, 32, 32, 2, 3, 3, 1, 1, { 1, 1, 1, 1 } };
      g_assert_cmpuint (tp_lower (depthwise_graph (&mult, NO_ACT), layouts[l], GPU).conv_phases, ==, 1);
      /* FUSEBENCH_GPU_CONV=cudnn sends it to cuDNN, for comparing. */
      g_setenv ("FUSEBENCH_GPU_CONV", "cudnn", TRUE);
      g_assert_cmpuint (tp_lower (depthwise_graph (&eff, SILU), layouts[l], GPU).conv_phases, ==, 1);
      g_unsetenv ("FUSEBENCH_GPU_CONV");
    }
  ti_done ();
}

/* Channels-last, a nest of [image, block of 32 channels, row, column, channel in the block]
 * (a block of threads on a run of neighbouring pixels, for the taps they share): its loops are
 * independent although the rows' stride is larger than the channel blocks', so all of them are
 * spread over the grid, none left to run inside a thread; four channels a thread, 16 bytes. */
/* The generated channels-last kernel of q's convolution (then act) and its plan. */
static FbPtxModule *
conv_ptx (const Geometry *q, FbOpKind act, FbPlan **plan_out, const FbKernel **conv_out)
{
  g_setenv ("FUSEBENCH_GPU_CONV", "generated", TRUE);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipeline) p = fb_pipeline_new (depthwise_graph (q, act));
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = FB_LAYOUT_NHWC;
  g_assert_true (fb_pipeline_run (p, options, NULL, NULL, NULL, &error));
  FbPlan *plan = fb_lower_graph (fb_pipeline_final (p), GPU, &error);
  g_assert_no_error (error);
  g_unsetenv ("FUSEBENCH_GPU_CONV");
  const FbKernel *conv = NULL;
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      if (strstr (k->name, "Conv"))
        conv = k;
    }
  g_assert_nonnull (conv);
  g_assert_true (tp_pure_generated (conv));
  FbPtxModule *m = fb_codegen_ptx (conv, plan, &error);
  g_assert_no_error (error);
  *plan_out = plan;
  *conv_out = conv;
  return m;
}

static void
test_channel_blocks (void)
{
  Geometry q = { 2, 96, 14, 14, 1, 5, 5, 1, 1, { 2, 2, 2, 2 } };
  g_autoptr(FbPlan) plan = NULL;
  const FbKernel *conv = NULL;
  g_autoptr(FbPtxModule) m = conv_ptx (&q, SILU, &plan, &conv);
  g_assert_cmpuint (m->phases->len, ==, 1);
  const FbPtxPhase *ph = &g_array_index (m->phases, FbPtxPhase, 0);
  const FbKPhase *kp = g_ptr_array_index (conv->phases, 0);
  g_assert_false (ph->cooperative);
  g_assert_cmpint (kp->extent, ==, q.n);
  /* Every output element of an image is an item of the grid: all the inner loops collapsed. */
  g_assert_cmpint ((int64_t) ph->blocks_per_iter * ph->block_threads * 4, >=, q.c * q.h * q.w);
  g_assert_nonnull (strstr (m->ptx, "ld.global.nc.v4.f32"));
  g_assert_nonnull (strstr (m->ptx, "st.global.v4.f32"));
  ti_done ();
}

static void
test_emulated (void)
{
  static const struct {
    Geometry q;
    FbOpKind act;
  } cases[] = {
    { { 1, 8, 7, 6, 1, 3, 3, 1, 1, { 1, 1, 1, 1 } }, SILU },            /* padded, SiLU */
    { { 2, 6, 9, 9, 1, 5, 5, 2, 1, { 2, 2, 2, 2 } }, NO_ACT },          /* 5x5, stride 2, batch */
    { { 1, 5, 8, 8, 1, 3, 3, 2, 1, { 0, 0, 1, 1 } }, FB_OP_RELU },      /* TensorFlow's SAME pads */
    { { 1, 4, 9, 7, 1, 3, 3, 1, 2, { 2, 2, 2, 2 } }, NO_ACT },          /* dilation 2 */
    { { 1, 3, 6, 6, 1, 3, 3, 1, 1, { 0, 0, 0, 0 } }, NO_ACT },          /* no padding at all */
    { { 1, 4, 10, 10, 1, 7, 7, 1, 1, { 3, 3, 3, 3 } }, SILU },          /* 7x7 */
    { { 2, 5, 0, 12, 1, 1, 5, 1, 1, { 0, 2, 0, 2 } }, FB_OP_RELU },     /* 1-D */
  };
  FbLayout layouts[] = { FB_LAYOUT_NCHW, FB_LAYOUT_NHWC };
  for (guint l = 0; l < G_N_ELEMENTS (layouts); l++)
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      check_emulated (&cases[i].q, cases[i].act, layouts[l], 40 + i);
  ti_done ();
}

/* Past the 32 channels of the rule, as FUSEBENCH_GPU_CONV=generated takes them: channels-last
 * in blocks of 32, 16, 8 and 4 channels (and all of them, 6, where none of those divides). */
static void
test_emulated_wide (void)
{
  static const Geometry cases[] = {
    { 2, 96, 7, 6, 1, 5, 5, 1, 1, { 2, 2, 2, 2 } },     /* three blocks of 32 */
    { 1, 48, 9, 9, 1, 3, 3, 2, 1, { 0, 0, 1, 1 } },     /* blocks of 16, stride 2 */
    { 1, 40, 6, 7, 1, 3, 3, 1, 1, { 1, 1, 1, 1 } },     /* blocks of 8 */
    { 1, 36, 5, 5, 1, 3, 3, 1, 1, { 1, 1, 1, 1 } },     /* blocks of 4 */
    { 1, 6, 5, 5, 1, 3, 3, 1, 1, { 1, 1, 1, 1 } },      /* one block of all 6 */
  };
  g_setenv ("FUSEBENCH_GPU_CONV", "generated", TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_assert_cmpuint (tp_lower (depthwise_graph (&cases[i], SILU), FB_LAYOUT_NHWC, GPU).conv_phases,
                        ==, 0);
      check_emulated (&cases[i], SILU, FB_LAYOUT_NHWC, 60 + i);
    }
  g_unsetenv ("FUSEBENCH_GPU_CONV");
  ti_done ();
}

/* A 7x7 window of 96 channels with nothing after it (ConvNeXt-Tiny's first stage, its
 * LayerNorm a kernel of its own) takes about 200 registers a thread: the default budget of 128 makes ptxas spill (the runtime then assembles the kernel
 * again without it), and the PTX without the budget assembles with no spills. */
static void
test_budget_spills (void)
{
  g_autofree char *ptxas = fb_ptx_find_tool ("ptxas");
  if (ptxas == NULL)
    {
      g_test_skip ("ptxas (CUDA toolkit) not found: nothing reports spills here");
      return;
    }
  Geometry q = { 1, 96, 56, 56, 1, 7, 7, 1, 1, { 3, 3, 3, 3 } };
  g_autoptr(FbPlan) plan = NULL;
  const FbKernel *conv = NULL;
  g_autoptr(FbPtxModule) m = conv_ptx (&q, NO_ACT, &plan, &conv);
  g_assert_nonnull (strstr (m->ptx, ".maxnreg 128"));
  g_autoptr(GError) error = NULL;
  g_autofree char *budgeted = NULL, *free_choice = NULL;
  g_assert_true (fb_ptx_assemble (m->ptx, NULL, &budgeted, &error));
  g_assert_no_error (error);
  g_autofree char *unbudgeted = fb_ptx_without_register_budget (m->ptx);
  g_assert_null (strstr (unbudgeted, ".maxnreg"));
  g_assert_true (fb_ptx_assemble (unbudgeted, NULL, &free_choice, &error));
  g_assert_no_error (error);
  g_test_message ("with the budget: %s\nwithout: %s", budgeted, free_choice);
  g_assert_true (fb_ptx_log_spills (budgeted));
  g_assert_false (fb_ptx_log_spills (free_choice));
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/codegen-ptx-depthwise/choice", test_choice);
  g_test_add_func ("/codegen-ptx-depthwise/emulated", test_emulated);
  g_test_add_func ("/codegen-ptx-depthwise/emulated-wide", test_emulated_wide);
  g_test_add_func ("/codegen-ptx-depthwise/channel-blocks", test_channel_blocks);
  g_test_add_func ("/codegen-ptx-depthwise/budget-spills", test_budget_spills);
  return g_test_run ();
}
