/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A ShuffleNet unit channels-last (compiler/passes/fb-pass-layout.c): the Split of the channels
 * (or the two Slices torch exports) and the channel shuffle (Reshape to [N, g, C/g, H, W],
 * Transpose (0, 2, 1, 3, 4), Reshape back) follow the convolutions into NHWC, so that no
 * transpose between the layouts is left inside the unit; where the shuffle's middle value has
 * another reader it stays channels-first with its transposes. Each graph against the
 * interpreter: every pipeline stage, the cpu target, and the cuda target's kernels emulated. */
#include "fb-test-cpu.h"
#include "fb-test-passes.h"
#include "fb-test-ptx.h"

#include <string.h>

/* Split of x along the channels in two halves of c / 2: the two parts in *a and *b. */
static void
split_channels (FbGraph *g, FbValue *x, int64_t c, FbValue **a, FbValue **b)
{
  FbValue *parts[2];
  tp_op_outputs (g, FB_OP_SPLIT, "split", 2, parts, x, tp_ints (g, 2, TP_DIMS (c / 2, c / 2)), NULL);
  tp_attr_int (g, parts[0], "axis", 1);
  *a = parts[0];
  *b = parts[1];
}

static FbValue *
conv1x1 (FbGraph *g, const char *name, FbValue *x, int64_t c_in, int64_t c_out)
{
  FbValue *y = tp_op (g, FB_OP_CONV, name, x, tp_const (g, name, 4, TP_DIMS (c_out, c_in, 1, 1), NULL),
                      NULL);
  return tp_op (g, FB_OP_RELU, name, y, NULL);
}

/* Two Slices of the channels, as torch exports x.chunk (2, dim=1). */
static void
slice_channels (FbGraph *g, FbValue *x, int64_t c, FbValue **a, FbValue **b)
{
  FbValue *axes = tp_ints (g, 1, TP_DIMS (1));
  *a = tp_op (g, FB_OP_SLICE, "first", x, tp_ints (g, 1, TP_DIMS (0)), tp_ints (g, 1, TP_DIMS (c / 2)),
              axes, NULL);
  *b = tp_op (g, FB_OP_SLICE, "second", x, tp_ints (g, 1, TP_DIMS (c / 2)), tp_ints (g, 1, TP_DIMS (c)),
              axes, NULL);
}

/* conv in, split (or sliced), the second half through a 1x1 and a depthwise 3x3, concat,
 * shuffle (the middle value also an output when shared), conv out. */
static FbGraph *
unit (gboolean shared, gboolean slices)
{
  /* 12 pixels: the cuda target generates such convolutions (matrix-vector products, and
   * depthwise ones of few channels), which the emulated kernels can run; cuDNN's they cannot. */
  const int64_t c = 8, h = 3, w = 4;
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, c, h, w));
  FbValue *v = conv1x1 (g, "conv_in", x, c, c);
  FbValue *keep, *branch;
  if (slices)
    slice_channels (g, v, c, &keep, &branch);
  else
    split_channels (g, v, c, &keep, &branch);
  branch = conv1x1 (g, "conv_b", branch, c / 2, c / 2);
  branch = tp_op (g, FB_OP_CONV, "dw", branch, tp_const (g, "dw_w", 4, TP_DIMS (c / 2, 1, 3, 3), NULL),
                  NULL);
  tp_attr_int (g, branch, "group", c / 2);
  tp_attr_ints (g, branch, "pads", 4, TP_DIMS (1, 1, 1, 1));
  v = tp_op (g, FB_OP_CONCAT, "cat", keep, branch, NULL);
  tp_attr_int (g, v, "axis", 1);
  FbValue *grouped = tp_op (g, FB_OP_RESHAPE, "group", v, tp_ints (g, 5, TP_DIMS (1, 2, c / 2, h, w)),
                            NULL);
  v = tp_op (g, FB_OP_TRANSPOSE, "shuffle", grouped, NULL);
  tp_attr_ints (g, v, "perm", 5, TP_DIMS (0, 2, 1, 3, 4));
  v = tp_op (g, FB_OP_RESHAPE, "ungroup", v, tp_ints (g, 4, TP_DIMS (1, c, h, w)), NULL);
  tp_output (g, conv1x1 (g, "conv_out", v, c, c));
  if (shared)
    tp_output (g, grouped);
  return g;
}

static guint
count_perm (const FbGraph *g, guint rank, const int64_t *perm)
{
  guint n = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const FbNode *t = g_ptr_array_index (g->nodes, i);
      guint len = 0;
      const int64_t *p = t->op == FB_OP_TRANSPOSE ? fb_node_attr_ints (t, "perm", &len) : NULL;
      n += p != NULL && len == rank && memcmp (p, perm, rank * sizeof *p) == 0;
    }
  return n;
}

static guint
count_inserted (const FbGraph *g)
{
  guint n = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    n += (((const FbNode *) g_ptr_array_index (g->nodes, i))->flags & FB_NODE_INSERTED) != 0;
  return n;
}

/* The whole pipeline channels-last: every stage agrees with the first, and so do the cpu
 * target and the cuda target's emulated kernels on the final graph. */
static FbPipeline *
check_everywhere (FbGraph *g)
{
  g_autoptr(GPtrArray) inputs = tc_seeded_inputs (g, 1207);
  g_autoptr(FbPipelineOptions) o = fb_pipeline_options_new ();
  o->layout = FB_LAYOUT_NHWC;
  FbGraph *copy = fb_graph_copy (g);
  FbPipeline *p = tp_run (g, o);
  tp_assert_stages_agree (p, 1207);
  tc_check (fb_pipeline_final (p), inputs);
  tp_check_emulated_pipeline (copy, FB_LAYOUT_NHWC, (FbTensor **) inputs->pdata, inputs->len,
                              FALSE);
  return p;
}

static void
test_unit (gconstpointer slices)
{
  g_autoptr(FbPipeline) p = check_everywhere (unit (FALSE, GPOINTER_TO_INT (slices)));
  FbGraph *out = tp_stage_graph (p, "layout");
  /* Only x's way in and the output's way back; the shuffle is the channels-last one. */
  g_assert_cmpuint (count_inserted (out), ==, 2);
  g_assert_cmpuint (count_perm (out, 5, TP_DIMS (0, 2, 1, 3, 4)), ==, 0);
  g_assert_cmpuint (count_perm (out, 5, TP_DIMS (0, 1, 2, 4, 3)), ==, 1);
  if (!GPOINTER_TO_INT (slices))
    {
      FbNode *split = tp_find (out, FB_OP_SPLIT);
      g_assert_cmpint (fb_node_attr_int (split, "axis", 0), ==, 3);
      g_assert_cmpint (split->outputs[1]->shape.dim[3], ==, 4);
      return;
    }
  FbNode *slice = tp_find (out, FB_OP_SLICE);
  g_assert_cmpfloat (fb_tensor_get_f64 (slice->inputs[3]->constant, 0), ==, 3);
  g_assert_cmpint (slice->outputs[0]->shape.dim[3], ==, 4);
}

static void
test_shared_middle (void)
{
  g_autoptr(FbPipeline) p = check_everywhere (unit (TRUE, FALSE));
  FbGraph *out = tp_stage_graph (p, "layout");
  /* The grouped value is an output too: the shuffle stays channels-first, between transposes. */
  g_assert_cmpuint (count_perm (out, 5, TP_DIMS (0, 2, 1, 3, 4)), ==, 1);
  g_assert_cmpuint (count_perm (out, 5, TP_DIMS (0, 1, 2, 4, 3)), ==, 0);
  g_assert_cmpuint (count_inserted (out), >, 2);
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_data_func ("/channel-shuffle/unit-split", GINT_TO_POINTER (FALSE), test_unit);
  g_test_add_data_func ("/channel-shuffle/unit-slices", GINT_TO_POINTER (TRUE), test_unit);
  g_test_add_func ("/channel-shuffle/shared-middle", test_shared_middle);
  return g_test_run ();
}
