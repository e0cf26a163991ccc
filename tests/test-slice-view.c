/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Slices without copies (compiler/lower/fb-lower-slice-view.c): a Slice or a one-index Gather
 * whose output is one contiguous run of its input becomes a view of that run, on the cpu and
 * the cuda target alike; where the output is no run (batch 2, the last axis), would start off
 * the alignment, slices the graph input or is a graph output, it keeps its copy. Every model
 * runs against the interpreter, the attention split also through a bundle (whose loaded plan
 * must keep the views); the arena never gives a value the bytes of an input a view still reads.
 * FUSEBENCH_SLICE_VIEWS=0 keeps the copies. Models: tests/slice/make-slice-models.py. */
#include "fb-cuda.h"
#include "fb-lower.h"
#include "fb-test-cpu.h"

/* The kernels that became views of a slice, each checked: no code, its output inside its
 * input's bytes. */
static guint
count_views (const FbPlan *plan)
{
  guint n = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (kernel->label == NULL || strstr (kernel->label, " as a view ") == NULL)
        continue;
      g_assert_cmpint (kernel->kind, ==, FB_KERNEL_VIEW);
      g_assert_cmpuint (kernel->phases->len, ==, 0);
      const FbBuffer *in = NULL, *out = NULL;
      for (guint a = 0; a < kernel->args->len; a++)
        {
          const FbKArg *arg = &g_array_index (kernel->args, FbKArg, a);
          const FbBuffer *b = fb_plan_buffer (plan, fb_plan_root (plan, arg->buffer));
          if (arg->role == FB_KARG_OUTPUT)
            out = b;
          else if (b->kind != FB_BUF_CONST)
            in = b;
        }
      g_assert_nonnull (in);
      g_assert_nonnull (out);
      g_assert_cmpint (fb_plan_buffer (plan, out->slice_of)->index, ==, in->index);
      g_assert_cmpint (out->slice_offset % 64, ==, 0);
      g_assert_cmpint (out->offset, ==, in->offset + out->slice_offset);
      g_assert_cmpint (out->offset + out->nbytes, <=, in->offset + in->nbytes);
      n++;
    }
  return n;
}

static FbPipeline *
load (const char *name)
{
  return tc_pipeline ("slice", name, FB_LAYOUT_NCHW, NULL);
}

static guint
gpu_views (const FbGraph *graph)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (graph, fb_cuda_target_desc (), &error);
  g_assert_no_error (error);
  fb_plan_layout_memory (plan);
  tc_check_arena (plan);
  return count_views (plan);
}

/* q, k and v: three runs of the transposed projection, through a bundle too. */
static void
test_attention_split (void)
{
  g_autoptr(FbPipeline) p = load ("attention-split");
  tc_check_compiled ("attention-split", fb_pipeline_final (p), count_views, 3, TRUE, FALSE);
  g_assert_cmpuint (gpu_views (fb_pipeline_final (p)), ==, 3);
}

/* The rows of a batch-1 image, the second half 2048 bytes in. */
static void
test_row_halves (void)
{
  g_autoptr(FbPipeline) p = load ("row-halves");
  tc_check_compiled ("row-halves", fb_pipeline_final (p), count_views, 2, FALSE, FALSE);
  g_assert_cmpuint (gpu_views (fb_pipeline_final (p)), ==, 2);
}

static void
test_copies (void)
{
  g_autoptr(FbPipeline) p = load ("copies");
  tc_check_compiled ("copies", fb_pipeline_final (p), count_views, 0, FALSE, FALSE);
  g_assert_cmpuint (gpu_views (fb_pipeline_final (p)), ==, 0);
}

static void
test_switched_off (void)
{
  g_autoptr(FbPipeline) p = load ("attention-split");
  g_setenv ("FUSEBENCH_SLICE_VIEWS", "0", TRUE);
  tc_check_compiled ("attention-split", fb_pipeline_final (p), count_views, 0, FALSE, FALSE);
  g_unsetenv ("FUSEBENCH_SLICE_VIEWS");
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/slice-view/attention-split", test_attention_split);
  g_test_add_func ("/slice-view/row-halves", test_row_halves);
  g_test_add_func ("/slice-view/copies", test_copies);
  g_test_add_func ("/slice-view/switched-off", test_switched_off);
  return g_test_run ();
}
