/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A squeeze-excitation's scale folded into the next convolution's weights on the cpu target
 * (fuse-epilogue's Mul prologue, compiler/lower/fb-lower-dnnl-conv.c, fb-dnnl-conv.c): where
 * the weights are small beside the scaled tensor the Mul becomes the convolution's first member
 * and the convolution scales its weights at every run; where they are not, the Mul stays a node
 * of its own. Where each image has its own scale, oneDNN's one set of weights cannot take it:
 * the Mul is the convolution's first loop (a GPU's pointwise product folds it per image,
 * test-patchify.c). Every model runs twice (a second run must
 * scale the original weights again, not the first run's) against the interpreter, the folded
 * one also through a bundle, whose plan must still say so, and through its exported library.
 * Models: tests/scale-fold/make-scale-fold-models.py. */
#include "fb-cuda.h"
#include "fb-lower.h"
#include "fb-test-cpu.h"

static FbPipeline *
load (const char *name)
{
  return tc_pipeline ("scale-fold", name, FB_LAYOUT_NHWC, NULL);
}

/* Fused nodes whose first member is a Mul: the prologues fuse-epilogue gave a convolution. */
static guint
count_prologues (const FbGraph *graph)
{
  guint n = 0;
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *node = g_ptr_array_index (graph->nodes, i);
      FbGraph *body = node->op == FB_OP_FUSED ? fb_node_attr_graph (node, "body") : NULL;
      if (body && body->nodes->len > 1 &&
          ((FbNode *) g_ptr_array_index (body->nodes, 0))->op == FB_OP_MUL)
        n++;
    }
  return n;
}

/* Convolution phases of plan that scale their input: each reads a scale of one number per
 * input channel and no loop of its kernel computes the product. */
static guint
count_scaled (const FbPlan *plan)
{
  guint n = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          const FbKConv *cv = ((FbKPhase *) g_ptr_array_index (kernel->phases, p))->conv;
          if (cv == NULL || !cv->desc.scaled_input)
            continue;
          const FbBuffer *s = fb_plan_buffer (plan, g_array_index (kernel->args, FbKArg, cv->scale).buffer);
          g_assert_cmpint (s->numel, ==, cv->desc.c);
          g_assert_cmpint (cv->desc.groups, ==, 1);
          g_assert_cmpuint (kernel->phases->len, ==, 1);
          n++;
        }
    }
  return n;
}

/* Compiles model name for the cpu target, checks how many Muls became prologues and how many
 * convolutions scale their weights, and its outputs; with bundle, also through a bundle and
 * its exported library. */
static void
check_model (const char *name, guint prologues, guint scaled, gboolean bundle)
{
  g_autoptr(FbPipeline) p = load (name);
  g_assert_cmpuint (count_prologues (fb_pipeline_final (p)), ==, prologues);
  tc_check_compiled (name, fb_pipeline_final (p), count_scaled, scaled, bundle, TRUE);
}

static void
test_folded (void)
{
  check_model ("se-block", 1, 1, TRUE);
}

/* FUSEBENCH_FOLD_SCALE=0: the prologue stays, and runs as the kernel's first loop. */
static void
test_folding_off (void)
{
  g_setenv ("FUSEBENCH_FOLD_SCALE", "0", TRUE);
  g_autoptr(FbPipeline) p = load ("se-block");
  g_assert_cmpuint (count_prologues (fb_pipeline_final (p)), ==, 1);
  tc_check_compiled ("se-block, folding off", fb_pipeline_final (p), count_scaled, 0, FALSE, FALSE);
  g_unsetenv ("FUSEBENCH_FOLD_SCALE");
}

static void
test_weights_too_large (void)
{
  check_model ("se-small", 0, 0, FALSE);
}

static void
test_scale_per_image (void)
{
  check_model ("se-batch2", 1, 0, FALSE);
}

/* The cuda target shares the lowering but folds no scale into cuDNN's filters (they are
 * reordered once): se-block's 1x1 projection is a cuBLASLt product there, which scales its own
 * weights (test-patchify.c). */
static void
test_not_gpu (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipeline) p = load ("se-block");
  g_autoptr(FbPlan) plan = fb_lower_graph (fb_pipeline_final (p), fb_cuda_target_desc (), &error);
  g_assert_no_error (error);
  g_assert_true (plan->target_desc->gpu);
  g_assert_cmpuint (count_scaled (plan), ==, 0);
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/scale-fold/folded", test_folded);
  g_test_add_func ("/scale-fold/folding-off", test_folding_off);
  g_test_add_func ("/scale-fold/weights-too-large", test_weights_too_large);
  g_test_add_func ("/scale-fold/scale-per-image", test_scale_per_image);
  g_test_add_func ("/scale-fold/not-gpu", test_not_gpu);
  return g_test_run ();
}
