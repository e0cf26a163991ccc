/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The whole pipeline on real models: a small CNN written the way exporters write them
 * (unfolded BatchNormalization, a spelled-out HardSwish and Softmax, the Shape/Gather/Concat
 * flatten), the structure of GPT-2 and shifted-window attention (Swin). Every stage must
 * compute stage 0's outputs. */
#include "fb-test-passes.h"
#include "fb-onnx-import.h"

static FbGraph *
load_path (const char *path)
{
  g_autoptr(GError) error = NULL;
  FbGraph *g = fb_onnx_import_file (path, NULL, &error);

  g_assert_no_error (error);
  return g;
}

static FbGraph *
load_case (const char *name)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "cases", name, "model.onnx", NULL);
  return load_path (path);
}

static void
assert_every_conv_fused (const FbGraph *g)
{
  g_assert_cmpuint (tp_count (g, FB_OP_CONV, FALSE), ==, 0);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (g->nodes, i);
      if (n->op == FB_OP_FUSED && tp_count (fb_node_attr_graph (n, "body"), FB_OP_CONV, FALSE))
        g_assert_cmpstr (fb_node_attr_string (n, "kind", ""), ==, "epilogue");
    }
}

static void
test_small_cnn (void)
{
  for (int nhwc = 0; nhwc < 2; nhwc++)
    {
      g_autoptr(FbPipelineOptions) o = fb_pipeline_options_new ();
      FbGraph *final;

      o->layout = nhwc ? FB_LAYOUT_NHWC : FB_LAYOUT_NCHW;
      g_autoptr(FbPipeline) p = tp_run (load_case ("small-cnn"), o);
      final = fb_pipeline_final (p);
      tp_assert_stages_agree (p, 41);

      g_assert_cmpuint (tp_count (final, FB_OP_BATCH_NORMALIZATION, TRUE), ==, 0);
      g_assert_cmpuint (tp_count (final, FB_OP_SHAPE, TRUE), ==, 0);
      g_assert_cmpuint (tp_count (final, FB_OP_HARD_SWISH, TRUE), ==, 1);
      g_assert_cmpuint (tp_count (final, FB_OP_SOFTMAX, TRUE), ==, 1);
      assert_every_conv_fused (final);
      g_assert_cmpuint (fb_pipeline_stage (p, fb_pipeline_n_stages (p) - 1)->nodes_after, <=,
                        fb_pipeline_stage (p, 0)->nodes_after / 2);
    }
}

/* The sample the workbench opens with: BatchNormalization after every convolution. */
static void
test_bundled_sample (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "data", "models", "sample-cnn",
                                                 "model.onnx", NULL);
  g_autoptr(FbPipeline) p = tp_run (load_path (path), NULL);
  FbGraph *final = fb_pipeline_final (p);

  tp_assert_stages_agree (p, 47);
  g_assert_cmpuint (tp_count (final, FB_OP_BATCH_NORMALIZATION, TRUE), ==, 0);
  assert_every_conv_fused (final);
}

static void
test_gpt2_struct (void)
{
  g_autoptr(FbPipeline) p = tp_run (load_case ("gpt2_struct"), NULL);
  FbGraph *final = fb_pipeline_final (p);

  tp_assert_stages_agree (p, 43);
  /* Each attention softmax, each LayerNorm and each GELU is one node. */
  g_assert_cmpuint (tp_count (final, FB_OP_SOFTMAX, TRUE), ==, 12);
  g_assert_cmpuint (tp_count (final, FB_OP_LAYER_NORMALIZATION, TRUE), ==, 25);
  g_assert_cmpuint (tp_count (final, FB_OP_GELU, TRUE), ==, 12);
  g_assert_cmpuint (tp_count (final, FB_OP_TANH, TRUE), ==, 0);
  g_assert_cmpuint (tp_count (final, FB_OP_POW, TRUE), ==, 0);
  g_assert_cmpuint (tp_count (final, FB_OP_IDENTITY, TRUE), ==, 0);
  g_assert_cmpuint (tp_count (final, FB_OP_CONSTANT, TRUE), ==, 0);
}

/* Swin's window attention as torchvision exports it (bench/models/make-swin-tiny.py --small):
 * rolls as Slice + Concat, window partitions as Reshape/Transpose, the shifted windows' mask
 * and the relative position bias as constants added to the scores, GELU spelled out with Erf.
 * In both layouts every stage agrees with the first, each GELU becomes one node, and the
 * Softmax and LayerNormalization nodes stay one each. */
static void
test_swin_window (void)
{
  for (int nhwc = 0; nhwc < 2; nhwc++)
    {
      g_autoptr(FbPipelineOptions) o = fb_pipeline_options_new ();
      o->layout = nhwc ? FB_LAYOUT_NHWC : FB_LAYOUT_NCHW;
      g_autoptr(FbPipeline) p = tp_run (load_case ("swin-window"), o);
      FbGraph *final = fb_pipeline_final (p);
      tp_assert_stages_agree (p, 59);
      g_assert_cmpuint (tp_count (final, FB_OP_SOFTMAX, TRUE), ==, 4);
      g_assert_cmpuint (tp_count (final, FB_OP_LAYER_NORMALIZATION, TRUE), ==, 11);
      g_assert_cmpuint (tp_count (final, FB_OP_GELU, TRUE), ==, 4);
      g_assert_cmpuint (tp_count (final, FB_OP_ERF, TRUE), ==, 0);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pipeline-models/small-cnn", test_small_cnn);
  g_test_add_func ("/pipeline-models/bundled-sample", test_bundled_sample);
  g_test_add_func ("/pipeline-models/gpt2-struct", test_gpt2_struct);
  g_test_add_func ("/pipeline-models/swin-window", test_swin_window);
  return g_test_run ();
}
