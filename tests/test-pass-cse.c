/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cse's Concat prefixes: a Concat whose leading inputs are all of an earlier Concat's on the same
 * axis reads that Concat's output instead (a dense block's layers), and computes the same; a
 * Concat on another axis, or whose inputs only overlap an earlier one's out of order, is left
 * as it is. */
#include "fb-test-passes.h"
#include "fb-test-interp.h"

/* A three-layer dense block on a [1, 4, 3, 3] input: each layer's new feature is 4 channels of
 * Relu (Conv 1x1 (the Concat of all before it)), and a last Concat takes all of them on
 * axis_of_last (reorder_last: the first two pieces swapped). */
static FbGraph *
dense_graph (int64_t axis_of_last, gboolean reorder_last)
{
  FbGraph *g = tp_graph (13);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 4, 3, 3));
  FbValue *features[4] = { x };
  int64_t c = 4;
  for (int layer = 1; layer <= 3; layer++)
    {
      FbValue *in = features[0];
      if (layer > 1)
        {
          g_autofree char *name = g_strdup_printf ("cat%d", layer);
          in = tp_op (g, FB_OP_CONCAT, name, features[0], features[1],
                      layer > 2 ? features[2] : NULL, NULL);
          tp_attr_int (g, in, "axis", 1);
        }
      g_autofree char *wname = g_strdup_printf ("w%d", layer);
      FbValue *w = tp_const (g, wname, 4, TP_DIMS (4, c, 1, 1), NULL);
      g_autofree char *cname = g_strdup_printf ("conv%d", layer);
      features[layer] = tp_op (g, FB_OP_RELU, cname, tp_op (g, FB_OP_CONV, cname, in, w, NULL),
                               NULL);
      c += 4;
    }
  FbValue *last = reorder_last
    ? tp_op (g, FB_OP_CONCAT, "cat4", features[1], features[0], features[2], features[3], NULL)
    : tp_op (g, FB_OP_CONCAT, "cat4", features[0], features[1], features[2], features[3], NULL);
  tp_attr_int (g, last, "axis", axis_of_last);
  tp_output (g, last);
  return g;
}

/* The Concat whose output is named name in the cse stage. */
static const FbNode *
concat_named (FbPipeline *p, const char *name)
{
  FbGraph *g = tp_stage_graph (p, "cse");
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (g->nodes, i);
      if (n->op == FB_OP_CONCAT && g_str_has_prefix (n->name, name))
        return n;
    }
  g_error ("no Concat %s", name);
  return NULL;
}

static void
test_dense_prefixes (void)
{
  g_autoptr(FbPipelineOptions) options = tp_only ("cse", NULL);
  g_autoptr(FbPipeline) p = tp_run (dense_graph (1, FALSE), options);
  const FbNode *cat2 = concat_named (p, "cat2"), *cat3 = concat_named (p, "cat3");
  const FbNode *cat4 = concat_named (p, "cat4");
  g_assert_cmpuint (cat2->n_inputs, ==, 2);
  /* Each takes the one before it and its own new piece. */
  g_assert_cmpuint (cat3->n_inputs, ==, 2);
  g_assert_true (cat3->inputs[0] == cat2->outputs[0]);
  g_assert_cmpuint (cat4->n_inputs, ==, 2);
  g_assert_true (cat4->inputs[0] == cat3->outputs[0]);
  g_assert_cmpint (cat4->outputs[0]->shape.dim[1], ==, 16);
  tp_assert_stages_agree (p, 7);
}

static void
test_other_axis_or_order (void)
{
  g_autoptr(FbPipelineOptions) options = tp_only ("cse", NULL);
  /* Axis 0 at the end: the layers' Concats still share, the last one does not. */
  g_autoptr(FbPipeline) p = tp_run (dense_graph (0, FALSE), options);
  g_assert_cmpuint (concat_named (p, "cat4")->n_inputs, ==, 4);
  g_assert_cmpuint (concat_named (p, "cat3")->n_inputs, ==, 2);
  tp_assert_stages_agree (p, 8);
  /* The same pieces in another order are another tensor. */
  g_autoptr(FbPipeline) q = tp_run (dense_graph (1, TRUE), options);
  g_assert_cmpuint (concat_named (q, "cat4")->n_inputs, ==, 4);
  tp_assert_stages_agree (q, 9);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pass-cse/dense-prefixes", test_dense_prefixes);
  g_test_add_func ("/pass-cse/other-axis-or-order", test_other_axis_or_order);
  return g_test_run ();
}
