/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fb_onnx_export_portable: a stage written as plain ONNX, read back by the importer, computes
 * what the original computes, and holds nothing only fusebench understands: no FUSED node, no
 * fb_ attribute, no operator newer than the model's opset, no name twice. */
#include "fb-test-passes.h"
#include "fb-onnx-export.h"
#include "fb-onnx-import.h"
#include "fb-interp.h"
#include "fb-compare.h"

#include <math.h>
#include <string.h>

static FbPipeline *
run_all (FbGraph *g, FbLayout layout)
{
  g_autoptr(FbPipelineOptions) o = fb_pipeline_options_new ();
  o->layout = layout;
  return tp_run (g, o);
}

/* Nothing fusebench-only in graph, recursively; values and nodes named once. */
static void
assert_plain (const FbGraph *g)
{
  g_autoptr(GHashTable) values = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) nodes = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < g->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (g->nodes, i);
      g_assert_cmpint (n->op, !=, FB_OP_FUSED);
      g_assert_cmpstr (n->domain, ==, "");
      for (guint a = 0; a < n->n_attrs; a++)
        g_assert_false (g_str_has_prefix (n->attrs[a].name, "fb_"));
      g_assert_false (g_hash_table_contains (nodes, n->name));
      g_hash_table_add (nodes, (gpointer) n->name);
      for (guint k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] != NULL)
          {
            g_assert_false (g_hash_table_contains (values, n->outputs[k]->name));
            g_hash_table_add (values, (gpointer) n->outputs[k]->name);
          }
    }
}

/* Exports the final stage, reads it back, and runs both on the same random inputs. */
static FbGraph *
round_trip (FbPipeline *p, guint32 seed)
{
  FbGraph *final = fb_pipeline_final (p);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = fb_onnx_export_portable (final, &error);
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  g_autoptr(GPtrArray) expected = NULL, actual = NULL;
  FbGraph *back;

  g_assert_no_error (error);
  back = fb_onnx_import_bytes (bytes, "portable.onnx", NULL, NULL, &error);
  g_assert_no_error (error);
  assert_plain (back);
  for (guint i = 0; i < final->inputs->len; i++)
    {
      FbValue *v = g_ptr_array_index (final->inputs, i);
      FbTensor *t = fb_tensor_new (v->dtype, v->shape.rank, v->shape.dim, NULL);
      for (int64_t k = 0; k < t->numel; k++)
        fb_tensor_set_f64 (t, k, g_rand_double_range (rand, -2.0, 2.0));
      g_ptr_array_add (inputs, t);
    }
  expected = fb_interp_run (fb_pipeline_stage (p, 0)->graph, inputs, NULL, &error);
  g_assert_no_error (error);
  actual = fb_interp_run (back, inputs, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (actual->len, ==, expected->len);
  for (guint k = 0; k < actual->len; k++)
    {
      FbCompare c = { 0 };
      fb_tensor_compare (g_ptr_array_index (expected, k), g_ptr_array_index (actual, k), 1e-4, 1e-5, &c);
      if (!c.ok)
        g_error ("output %u: %s", k, c.reason);
      fb_compare_clear (&c);
    }
  return back;
}

/* At opset 13 the simplify pass still makes LayerNormalization (17), Gelu (20), HardSwish (14)
 * and Swish (24): the export writes them as their formulas and keeps the opset. */
static void
test_newer_operators (void)
{
  FbGraph *g = tp_graph (13);
  FbValue *x = tp_input (g, "x", 3, TP_DIMS (2, 3, 8));
  FbValue *mean = tp_op (g, FB_OP_REDUCE_MEAN, "mean", x, NULL);
  FbValue *d, *var, *n, *e, *gelu, *hs;

  tp_attr_ints (g, mean, "axes", 1, TP_DIMS (-1));
  d = tp_op (g, FB_OP_SUB, "sub", x, mean, NULL);
  var = tp_op (g, FB_OP_REDUCE_MEAN, "var", tp_op (g, FB_OP_MUL, "sq", d, d, NULL), NULL);
  tp_attr_ints (g, var, "axes", 1, TP_DIMS (-1));
  n = tp_op (g, FB_OP_DIV, "div", d,
             tp_op (g, FB_OP_SQRT, "sqrt", tp_op (g, FB_OP_ADD, "eps", var, tp_scalar (g, 1e-5), NULL), NULL),
             NULL);
  e = tp_op (g, FB_OP_ERF, "erf", tp_op (g, FB_OP_DIV, "div2", n, tp_scalar (g, M_SQRT2), NULL), NULL);
  gelu = tp_op (g, FB_OP_MUL, "mul", tp_op (g, FB_OP_MUL, "mul0", n,
                                             tp_op (g, FB_OP_ADD, "add1", e, tp_scalar (g, 1), NULL), NULL),
                tp_scalar (g, 0.5), NULL);
  hs = tp_op (g, FB_OP_MUL, "hs", gelu, tp_op (g, FB_OP_HARD_SIGMOID, "hsig", gelu, NULL), NULL);
  tp_attr_float (g, tp_node_of (hs)->inputs[1], "alpha", 1.0f / 6.0f);
  tp_attr_float (g, tp_node_of (hs)->inputs[1], "beta", 0.5f);
  FbValue *silu = tp_op (g, FB_OP_MUL, "silu", hs, tp_op (g, FB_OP_SIGMOID, "sig", hs, NULL), NULL);
  tp_output (g, silu);
  g_autoptr(FbPipeline) p = run_all (g, FB_LAYOUT_NCHW);
  FbGraph *simplified = tp_stage_graph (p, "simplify");

  /* The pass did make the newer operators... */
  g_assert_nonnull (tp_find (simplified, FB_OP_LAYER_NORMALIZATION));
  g_assert_nonnull (tp_find (simplified, FB_OP_GELU));
  g_assert_nonnull (tp_find (simplified, FB_OP_HARD_SWISH));
  g_assert_nonnull (tp_find (simplified, FB_OP_SWISH));
  {
    g_autoptr(FbGraph) back = round_trip (p, 11);
    /* ...and the file has none of them, at the model's opset. */
    g_assert_cmpuint (tp_count (back, FB_OP_LAYER_NORMALIZATION, TRUE), ==, 0);
    g_assert_cmpuint (tp_count (back, FB_OP_GELU, TRUE), ==, 0);
    g_assert_cmpuint (tp_count (back, FB_OP_HARD_SWISH, TRUE), ==, 0);
    g_assert_cmpuint (tp_count (back, FB_OP_SWISH, TRUE), ==, 0);
    g_assert_cmpint (fb_model_opset (back->model, ""), ==, 13);
  }
}

/* Channels-last convolutions and pools, fused with their epilogues: transposes around each. */
static void
test_channels_last (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 3, 8, 8));
  FbValue *a = tp_op (g, FB_OP_CONV, "conv1", x, tp_const (g, "w1", 4, TP_DIMS (4, 3, 3, 3), NULL), NULL);
  FbValue *r, *pool;

  tp_attr_ints (g, a, "pads", 4, TP_DIMS (1, 1, 1, 1));
  tp_reinfer (g, a);
  r = tp_op (g, FB_OP_RELU, "relu", a, NULL);
  pool = tp_op (g, FB_OP_GLOBAL_AVERAGE_POOL, "pool", r, NULL);
  tp_output (g, pool);
  g_autoptr(FbPipeline) p = run_all (g, FB_LAYOUT_NHWC);
  FbGraph *final = fb_pipeline_final (p);
  gboolean nhwc = FALSE;

  for (guint i = 0; i < final->nodes->len; i++)
    nhwc |= fb_node_attr_string (g_ptr_array_index (final->nodes, i), FB_ATTR_LAYOUT, NULL) != NULL;
  g_assert_true (nhwc);
  g_assert_cmpuint (tp_count (final, FB_OP_FUSED, FALSE), >, 0);
  {
    g_autoptr(FbGraph) back = round_trip (p, 12);
    g_assert_cmpuint (tp_count (back, FB_OP_TRANSPOSE, FALSE), >=, 2);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/onnx-portable/newer-operators", test_newer_operators);
  g_test_add_func ("/onnx-portable/channels-last", test_channels_last);
  return g_test_run ();
}
