/* SPDX-License-Identifier: GPL-3.0-or-later */
/* layout: convolutions and pools channels-last, transposes only at the boundaries. */
#include "fb-test-passes.h"

#include <string.h>

static FbPipeline *
layout (FbGraph *g, FbLayout which)
{
  g_autoptr(FbPipelineOptions) o = tp_only ("layout", NULL);
  FbPipeline *p;

  o->layout = which;
  p = tp_run (g, o);
  tp_assert_stages_agree (p, 19);
  return p;
}

static guint
count_inserted (const FbGraph *g)
{
  guint n = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    if (((FbNode *) g_ptr_array_index (g->nodes, i))->flags & FB_NODE_INSERTED)
      n++;
  return n;
}

static guint
count_nhwc (const FbGraph *g)
{
  guint n = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    if (g_strcmp0 (fb_node_attr_string (g_ptr_array_index (g->nodes, i), FB_ATTR_LAYOUT, ""), "nhwc") == 0)
      n++;
  return n;
}

/* conv -> relu -> maxpool, conv2 on the same input, added -> gap -> flatten -> gemm */
static FbGraph *
network (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 3, 8, 8));
  FbValue *a = tp_op (g, FB_OP_CONV, "conv1", x, tp_const (g, "w1", 4, TP_DIMS (4, 3, 3, 3), NULL), NULL);
  FbValue *b, *v;

  tp_attr_ints (g, a, "pads", 4, TP_DIMS (1, 1, 1, 1));
  a = tp_op (g, FB_OP_RELU, "relu", a, NULL);
  a = tp_op (g, FB_OP_MAX_POOL, "pool", a, NULL);
  tp_attr_ints (g, a, "kernel_shape", 2, TP_DIMS (2, 2));
  tp_attr_ints (g, a, "strides", 2, TP_DIMS (2, 2));
  b = tp_op (g, FB_OP_CONV, "conv2", x, tp_const (g, "w2", 4, TP_DIMS (4, 3, 2, 2), NULL), NULL);
  tp_attr_ints (g, b, "strides", 2, TP_DIMS (2, 2));
  v = tp_op (g, FB_OP_ADD, "add", a, b, NULL);
  v = tp_op (g, FB_OP_MUL, "scale", v, tp_const (g, "per_channel", 3, TP_DIMS (4, 1, 1), NULL), NULL);
  v = tp_op (g, FB_OP_GLOBAL_AVERAGE_POOL, "gap", v, NULL);
  v = tp_op (g, FB_OP_FLATTEN, "flatten", v, NULL);
  v = tp_op (g, FB_OP_GEMM, "fc", v, tp_const (g, "wf", 2, TP_DIMS (4, 2), NULL), NULL);
  tp_output (g, v);
  return g;
}

static void
test_nhwc (void)
{
  g_autoptr(FbPipeline) p = layout (network (), FB_LAYOUT_NHWC);
  FbGraph *out = tp_stage_graph (p, "layout");
  FbStage *s = fb_pipeline_stage_by_name (p, "layout");

  /* conv1, pool, conv2, gap marked; relu, add and the per-channel scale follow along. */
  g_assert_cmpuint (count_nhwc (out), ==, 4);
  /* x enters once (shared by both convolutions), gap's result leaves once. */
  g_assert_cmpuint (count_inserted (out), ==, 2);
  g_assert_nonnull (strstr (s->summary, "NHWC"));
  for (guint i = 0; i < out->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (out->nodes, i);
      if (n->flags & FB_NODE_INSERTED)
        {
          g_assert_cmpint (n->op, ==, FB_OP_TRANSPOSE);
          g_assert_cmpuint (n->n_prov, >, 0);
          g_assert_cmpint (tp_change (s, n->id)->kind, ==, FB_CHANGE_ADDED);
        }
    }
}

static void
test_nchw_changes_nothing (void)
{
  g_autoptr(FbPipeline) p = layout (network (), FB_LAYOUT_NCHW);
  FbStage *s = fb_pipeline_stage_by_name (p, "layout");

  g_assert_cmpuint (s->changes->len, ==, 0);
  g_assert_cmpuint (count_nhwc (s->graph), ==, 0);
}

/* A model that transposes its NHWC input to NCHW for the convolution: the pair cancels. */
static void
test_model_transpose_cancels (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 6, 6, 3));
  FbValue *t = tp_op (g, FB_OP_TRANSPOSE, "to_nchw", x, NULL);
  FbValue *v;

  tp_attr_ints (g, t, "perm", 4, TP_DIMS (0, 3, 1, 2));
  v = tp_op (g, FB_OP_CONV, "conv", t, tp_const (g, "w", 4, TP_DIMS (2, 3, 1, 1), NULL), NULL);
  v = tp_op (g, FB_OP_TRANSPOSE, "to_nhwc", v, NULL);
  tp_attr_ints (g, v, "perm", 4, TP_DIMS (0, 2, 3, 1));
  tp_output (g, tp_op (g, FB_OP_RELU, "relu", v, NULL));
  g_autoptr(FbPipeline) p = layout (g, FB_LAYOUT_NHWC);
  FbGraph *out = tp_stage_graph (p, "layout");

  /* The convolution reads x directly and its result feeds the Relu directly. */
  g_assert_cmpuint (count_inserted (out), ==, 0);
  g_assert_cmpuint (tp_count (out, FB_OP_TRANSPOSE, FALSE), ==, 0);
  g_assert_true (tp_find (out, FB_OP_CONV)->inputs[0]->is_input);
}

/* Weights that arrive at run time (a graph input) stay channels-first: the channels-last
 * kernels repack their weights when compiling. */
static void
test_runtime_weights_stay (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 3, 8, 8));
  FbValue *w = tp_input (g, "w", 4, TP_DIMS (4, 3, 3, 3));
  tp_output (g, tp_op (g, FB_OP_CONV, "conv", x, w, NULL));
  g_autoptr(FbPipeline) p = layout (g, FB_LAYOUT_NHWC);
  FbGraph *out = tp_stage_graph (p, "layout");

  g_assert_cmpuint (count_nhwc (out), ==, 0);
  g_assert_cmpuint (count_inserted (out), ==, 0);
}

/* A feature pyramid's join: two convolutions concatenated along the channels, upsampled by
 * Resize, then a ConvTranspose: the Concat (its axis renumbered) and the Resize (its scales
 * permuted) follow the convolutions channels-last, so only the input and the output cross. */
static void
test_movers_follow (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 3, 6, 5));
  FbValue *a = tp_op (g, FB_OP_CONV, "conv_a", x, tp_const (g, "wa", 4, TP_DIMS (4, 3, 1, 1), NULL), NULL);
  FbValue *b = tp_op (g, FB_OP_CONV, "conv_b", x, tp_const (g, "wb", 4, TP_DIMS (2, 3, 1, 1), NULL), NULL);
  FbValue *v = tp_op (g, FB_OP_CONCAT, "cat", a, b, NULL);
  tp_attr_int (g, v, "axis", -3);
  FbValue *roi = tp_const (g, "roi", 1, TP_DIMS (0), NULL);
  FbValue *scales = tp_const (g, "scales", 1, TP_DIMS (4), (const double[]) { 1, 1, 2, 3 });
  v = tp_op (g, FB_OP_RESIZE, "up", v, roi, scales, NULL);
  v = tp_op (g, FB_OP_CONV_TRANSPOSE, "deconv", v, tp_const (g, "wt", 4, TP_DIMS (6, 2, 2, 2), NULL), NULL);
  tp_attr_ints (g, v, "strides", 2, TP_DIMS (2, 2));
  tp_output (g, v);
  g_autoptr(FbPipeline) p = layout (g, FB_LAYOUT_NHWC);
  FbGraph *out = tp_stage_graph (p, "layout");

  g_assert_cmpuint (count_nhwc (out), ==, 3);
  g_assert_cmpuint (count_inserted (out), ==, 2);
  FbNode *cat = tp_find (out, FB_OP_CONCAT), *up = tp_find (out, FB_OP_RESIZE);
  g_assert_cmpint (fb_node_attr_int (cat, "axis", 0), ==, 3);
  g_assert_cmpint (cat->outputs[0]->shape.dim[3], ==, 6);
  const FbTensor *s = up->inputs[2]->constant;
  g_assert_nonnull (s);
  g_assert_cmpfloat (fb_tensor_get_f64 (s, 1), ==, 2);
  g_assert_cmpfloat (fb_tensor_get_f64 (s, 2), ==, 3);
  g_assert_cmpfloat (fb_tensor_get_f64 (s, 3), ==, 1);
}

/* A patch embedding as vision transformers export it: a convolution, its output flattened to
 * [N, C, H * W] and moved to the tokens [N, H * W, C] (reshape, then swap). With the convolution
 * channels-last, the tokens are its output as it lies: the chain back becomes one Reshape of it
 * and no transpose back is inserted. Flattened the other way, [N, C * H, W], it is no reshape
 * of the channels-last output: that one keeps the transpose back. So does a chain whose middle
 * value has a second reader. */
static FbGraph *
patch_embedding (const int64_t *flat, const int64_t *perm, gboolean second_reader)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (2, 3, 8, 8));
  FbValue *y = tp_op (g, FB_OP_CONV, "embed", x, tp_const (g, "w", 4, TP_DIMS (6, 3, 2, 2), NULL),
                      NULL);
  tp_attr_ints (g, y, "strides", 2, TP_DIMS (2, 2));
  FbValue *f = tp_op (g, FB_OP_RESHAPE, "flatten", y, tp_ints (g, 3, flat), NULL);
  FbValue *t = tp_op (g, FB_OP_TRANSPOSE, "tokens", f, NULL);
  tp_attr_ints (g, t, "perm", 3, perm);
  tp_output (g, tp_op (g, FB_OP_RELU, "relu", t, NULL));
  if (second_reader)
    tp_output (g, tp_op (g, FB_OP_SIGMOID, "other", f, NULL));
  return g;
}

static void
test_moves_back_as_reshape (void)
{
  g_autoptr(FbPipeline) p = layout (patch_embedding (TP_DIMS (2, 6, 16), TP_DIMS (0, 2, 1), FALSE),
                                    FB_LAYOUT_NHWC);
  FbGraph *out = tp_stage_graph (p, "layout");
  /* Only x's way in; the tokens are a Reshape of the convolution's output. */
  g_assert_cmpuint (count_inserted (out), ==, 1);
  g_assert_cmpuint (tp_count (out, FB_OP_TRANSPOSE, FALSE), ==, 1);
  FbNode *r = tp_find (out, FB_OP_RESHAPE);
  g_assert_true (r->inputs[0]->producer == tp_find (out, FB_OP_CONV));
  g_assert_cmpint (r->outputs[0]->shape.dim[1], ==, 16);

  g_autoptr(FbPipeline) other = layout (patch_embedding (TP_DIMS (2, 24, 4), TP_DIMS (0, 2, 1),
                                                         FALSE), FB_LAYOUT_NHWC);
  g_assert_cmpuint (count_inserted (tp_stage_graph (other, "layout")), ==, 2);
  g_autoptr(FbPipeline) shared = layout (patch_embedding (TP_DIMS (2, 6, 16), TP_DIMS (0, 2, 1),
                                                          TRUE), FB_LAYOUT_NHWC);
  g_assert_cmpuint (count_inserted (tp_stage_graph (shared, "layout")), ==, 2);
}

/* A head's mean over the map (x.mean((2, 3)) as ShuffleNetV2 writes it, a ReduceMean and not
 * a global pool) reduces the channels-last map: no transpose of it back. With keepdims and a
 * squeeze-excitation's 1x1 convolution after it, the mean's result is channels-last too. A mean
 * over the height alone without keepdims keeps [N, C, W], which channels-last would give as
 * [N, W, C]: it reads the map channels-first. Opset 18's axes input is renumbered as the
 * attribute is. */
static FbGraph *
mean_head (int opset, const int64_t *axes, guint n_axes, gboolean keep)
{
  FbGraph *g = tp_graph (opset);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 3, 6, 5));
  FbValue *y = tp_op (g, FB_OP_CONV, "conv", x, tp_const (g, "w", 4, TP_DIMS (4, 3, 3, 3), NULL), NULL);
  FbValue *m = opset >= 18 ? tp_op (g, FB_OP_REDUCE_MEAN, "mean", y, tp_ints (g, n_axes, axes), NULL)
                           : tp_op (g, FB_OP_REDUCE_MEAN, "mean", y, NULL);
  if (opset < 18)
    tp_attr_ints (g, m, "axes", n_axes, axes);
  tp_attr_int (g, m, "keepdims", keep);
  if (keep)
    m = tp_op (g, FB_OP_CONV, "excite", m, tp_const (g, "we", 4, TP_DIMS (2, 4, 1, 1), NULL), NULL);
  tp_output (g, m);
  return g;
}

static void
test_mean_follows (void)
{
  g_autoptr(FbPipeline) head = layout (mean_head (17, TP_DIMS (2, 3), 2, FALSE), FB_LAYOUT_NHWC);
  FbGraph *out = tp_stage_graph (head, "layout");
  g_assert_cmpuint (count_inserted (out), ==, 1);
  FbNode *mean = tp_find (out, FB_OP_REDUCE_MEAN);
  guint n = 0;
  const int64_t *axes = fb_node_attr_ints (mean, "axes", &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpint (axes[0], ==, 1);
  g_assert_cmpint (axes[1], ==, 2);

  g_autoptr(FbPipeline) input = layout (mean_head (18, TP_DIMS (-1, -2), 2, FALSE), FB_LAYOUT_NHWC);
  out = tp_stage_graph (input, "layout");
  g_assert_cmpuint (count_inserted (out), ==, 1);
  const FbTensor *t = tp_find (out, FB_OP_REDUCE_MEAN)->inputs[1]->constant;
  g_assert_cmpfloat (fb_tensor_get_f64 (t, 0), ==, 2);
  g_assert_cmpfloat (fb_tensor_get_f64 (t, 1), ==, 1);

  g_autoptr(FbPipeline) excite = layout (mean_head (17, TP_DIMS (2, 3), 2, TRUE), FB_LAYOUT_NHWC);
  out = tp_stage_graph (excite, "layout");
  g_assert_cmpuint (count_inserted (out), ==, 2);   /* x in, the output back */
  g_assert_cmpint (tp_find (out, FB_OP_REDUCE_MEAN)->outputs[0]->shape.dim[3], ==, 4);

  g_autoptr(FbPipeline) rows = layout (mean_head (17, TP_DIMS (2), 1, FALSE), FB_LAYOUT_NHWC);
  out = tp_stage_graph (rows, "layout");
  g_assert_cmpuint (count_inserted (out), ==, 2);
  g_assert_cmpint (fb_node_attr_ints (tp_find (out, FB_OP_REDUCE_MEAN), "axes", &n)[0], ==, 2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pass/layout/nhwc", test_nhwc);
  g_test_add_func ("/pass/layout/nchw", test_nchw_changes_nothing);
  g_test_add_func ("/pass/layout/model-transpose-cancels", test_model_transpose_cancels);
  g_test_add_func ("/pass/layout/runtime-weights-stay", test_runtime_weights_stay);
  g_test_add_func ("/pass/layout/movers-follow", test_movers_follow);
  g_test_add_func ("/pass/layout/moves-back-as-reshape", test_moves_back_as_reshape);
  g_test_add_func ("/pass/layout/mean-follows", test_mean_follows);
  return g_test_run ();
}
