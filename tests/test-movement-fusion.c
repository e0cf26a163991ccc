/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Movement fused into elementwise trees (compiler/passes/fb-pass-fuse-elementwise.c): a
 * shifted window's rolls and partition, and its way back with the residual add, each one
 * "movement" group computed where it is read; a scaled Transpose of the heads, and a
 * Transpose that moves the last axis, left alone. Each model runs on the cpu target (and
 * through a bundle) and through the emulated PTX of the cuda target, against the
 * interpreter. FUSEBENCH_MOVEMENT_FUSION=0 leaves the moves apart. Models:
 * tests/movement/make-movement-models.py. */
#include "fb-cuda.h"
#include "fb-lower.h"
#include "fb-memory-plan.h"
#include "fb-onnx-import.h"
#include "fb-test-ptx.h"

#include <string.h>

static gboolean
is_movement_group (const FbNode *n)
{
  return n != NULL && n->op == FB_OP_FUSED &&
         g_strcmp0 (fb_node_attr_string (n, "kind", ""), "movement") == 0;
}

/* Kernels of fused groups that move elements, by their labels (a bundle's plan keeps those,
 * not the graph's nodes). */
static guint
movement_kernels (const FbPlan *plan)
{
  guint n = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      const char *l = kernel->label ? kernel->label : "";
      n += strstr (l, " + ") != NULL && (strstr (l, "Gather") || strstr (l, "Transpose")) &&
           kernel->phases->len > 0;
    }
  return n;
}

/* The movement groups of graph, each as its members' op names joined by spaces. */
static GPtrArray *
movement_groups (const FbGraph *graph)
{
  GPtrArray *groups = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (graph->nodes, i);
      if (!is_movement_group (n))
        continue;
      FbGraph *body = fb_node_attr_graph (n, "body");
      GString *s = g_string_new (NULL);
      for (guint j = 0; j < body->nodes->len; j++)
        g_string_append_printf (s, "%s%s", j ? " " : "",
                                fb_op_name (((FbNode *) g_ptr_array_index (body->nodes, j))->op));
      g_ptr_array_add (groups, g_string_free (s, FALSE));
    }
  return groups;
}

/* Runs model name through the pipeline; its movement groups, then the cpu target (with a
 * bundle) and the emulated cuda target against the interpreter. */
static GPtrArray *
check (const char *name, guint expect_groups)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *file = g_strconcat (name, ".onnx", NULL);
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "movement", file, NULL);
  FbGraph *graph = fb_onnx_import_file (path, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(GPtrArray) inputs = tc_seeded_inputs (graph, 1203);
  g_autoptr(FbPipeline) p = tc_pipeline ("movement", name, FB_LAYOUT_NCHW, NULL);
  const FbGraph *final = fb_pipeline_final (p);
  GPtrArray *groups = movement_groups (final);
  g_assert_cmpuint (groups->len, ==, expect_groups);
  tc_check_compiled (name, final, movement_kernels, expect_groups, TRUE, FALSE);
  tp_check_emulated_pipeline (graph, FB_LAYOUT_NCHW, (FbTensor **) inputs->pdata, inputs->len,
                              FALSE);
  return groups;
}

/* Relu, both rolls and the window partition in one pass; the last Reshape stays a view. */
static void
test_window_in (void)
{
  g_autoptr(GPtrArray) groups = check ("window-in", 1);
  g_assert_cmpstr (g_ptr_array_index (groups, 0), ==, "Relu Gather Gather Reshape Transpose");
}

static void
test_window_out (void)
{
  g_autoptr(GPtrArray) groups = check ("window-out", 1);
  g_assert_cmpstr (g_ptr_array_index (groups, 0), ==,
                   "Reshape Transpose Reshape Gather Gather Add");
}

/* The product reads the Transpose's input through its strides and takes the scaling into
 * its alpha on the cuda target: fusing the two into a pass would cost one. */
static void
test_scaled_heads (void)
{
  g_autoptr(GPtrArray) groups = check ("scaled-heads", 0);
}

static void
test_last_axis (void)
{
  g_autoptr(GPtrArray) groups = check ("last-axis", 0);
}

static void
test_switched_off (void)
{
  g_setenv ("FUSEBENCH_MOVEMENT_FUSION", "0", TRUE);
  g_autoptr(GPtrArray) groups = check ("window-out", 0);
  g_unsetenv ("FUSEBENCH_MOVEMENT_FUSION");
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/movement-fusion/window-in", test_window_in);
  g_test_add_func ("/movement-fusion/window-out", test_window_out);
  g_test_add_func ("/movement-fusion/scaled-heads", test_scaled_heads);
  g_test_add_func ("/movement-fusion/last-axis", test_last_axis);
  g_test_add_func ("/movement-fusion/switched-off", test_switched_off);
  return g_test_run ();
}
