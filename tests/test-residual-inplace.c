/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Residual adds in place (compiler/lower/fb-lower-residual.c) on the cpu target: where the
 * residual dies at its convolution, the plan gives the output the residual's bytes and the
 * post-op is a sum; where it does not (read again later, a graph input, a graph output, the
 * convolution's own input), the plan keeps them apart and the Add reads a separate tensor.
 * Every case runs twice (the second run must not add onto the first's results) and is compared
 * with the interpreter; the in-place one also through a bundle, whose plan.json must say the
 * same, and through the bundle's exported library. Models: tests/residual/make-residual-models.py. */
#include "fb-cuda.h"
#include "fb-lower.h"
#include "fb-test-cpu.h"

#include <string.h>

/* The model through the pass pipeline, channels-last as the cpu target runs it; without the
 * plan-memory pass when the name says so ("...-no-plan"). */
static FbPipeline *
load (const char *name)
{
  g_autofree char *file = g_strdup (name);
  gboolean no_plan = g_str_has_suffix (file, "-no-plan");
  if (no_plan)
    file[strlen (file) - strlen ("-no-plan")] = '\0';
  return tc_pipeline ("residual", file, FB_LAYOUT_NHWC, no_plan ? "plan-memory" : NULL);
}

/* The convolution phases of plan that add in place, each checked to be what the memory plan
 * needs: the output an alias of the residual (the same bytes), nothing reading those bytes
 * after the kernel but the output itself and what reads it. */
static guint
count_sums (const FbPlan *plan)
{
  guint n = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          const FbKConv *cv = ((FbKPhase *) g_ptr_array_index (kernel->phases, p))->conv;
          gboolean sum = FALSE;
          for (int64_t i = 0; cv && i < cv->desc.n_post; i++)
            sum |= cv->desc.post[i].kind == FB_CONV_POST_SUM;
          if (!sum)
            continue;
          guint add = g_array_index (kernel->args, FbKArg, cv->add).buffer;
          guint y = g_array_index (kernel->args, FbKArg, cv->y).buffer;
          g_assert_cmpint (fb_plan_buffer (plan, y)->alias, ==, (int) add);
          g_assert_cmpuint (fb_plan_root (plan, y), ==, fb_plan_root (plan, add));
          const FbBuffer *root = fb_plan_buffer (plan, fb_plan_root (plan, add));
          g_assert_cmpint (root->offset, >=, 0);
          g_assert_cmpint (root->kind, ==, FB_BUF_INTERMEDIATE);
          /* The residual itself (not the output, which now shares its bytes) is read by no
           * later kernel. */
          for (guint j = k + 1; j < plan->kernels->len; j++)
            {
              const FbKernel *later = g_ptr_array_index (plan->kernels, j);
              for (guint a = 0; a < later->args->len; a++)
                g_assert_cmpuint (g_array_index (later->args, FbKArg, a).buffer, !=, add);
            }
          n++;
        }
    }
  return n;
}

/* Compiles model name for the cpu target, checks that expect_sums convolutions add in place,
 * and its outputs. With bundle, also through a bundle and its exported library. */
static void
check_model (const char *name, guint expect_sums, gboolean bundle)
{
  g_autoptr(FbPipeline) p = load (name);
  tc_check_compiled (name, fb_pipeline_final (p), count_sums, expect_sums, bundle, TRUE);
}

/* Both blocks add in place: the 3x3 one (fb-direct-conv.c where it fits, else oneDNN) over
 * the stem's output, the 1x1 one (oneDNN's sum) over the first block's, which already shares
 * the stem's bytes. */
static void
test_in_place (void)
{
  check_model ("inplace", 2, TRUE);
}

/* Without the plan-memory pass the runtime's packer alone places everything. */
static void
test_in_place_no_pass_plan (void)
{
  check_model ("inplace-no-plan", 2, FALSE);
}

static void
test_read_later (void)
{
  check_model ("read-later", 0, FALSE);
}

static void
test_graph_input (void)
{
  check_model ("input-residual", 0, FALSE);
}

static void
test_graph_output (void)
{
  check_model ("output-residual", 0, FALSE);
}

static void
test_own_input (void)
{
  check_model ("self-residual", 0, FALSE);
}

/* The cuda target shares the lowering: its plans never add in place (cuDNN and the
 * generated epilogues read the residual as a tensor of its own). */
static void
test_not_gpu (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipeline) p = load ("inplace");
  g_autoptr(FbPlan) plan = fb_lower_graph (fb_pipeline_final (p), fb_cuda_target_desc (),
                                           &error);
  g_assert_no_error (error);
  g_assert_true (plan->target_desc->gpu);
  fb_plan_layout_memory (plan);
  g_assert_cmpuint (count_sums (plan), ==, 0);
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/residual-inplace/in-place", test_in_place);
  g_test_add_func ("/residual-inplace/in-place/no-plan-memory", test_in_place_no_pass_plan);
  g_test_add_func ("/residual-inplace/read-later", test_read_later);
  g_test_add_func ("/residual-inplace/graph-input", test_graph_input);
  g_test_add_func ("/residual-inplace/graph-output", test_graph_output);
  g_test_add_func ("/residual-inplace/own-input", test_own_input);
  g_test_add_func ("/residual-inplace/not-gpu", test_not_gpu);
  return g_test_run ();
}
