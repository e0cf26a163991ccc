/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The simplify pass's moves of rows across linear layers (fb-simplify-rows.c), on a window
 * attention's two ends, each checked against the interpreter. */
#include "fb-test-passes.h"

#include <string.h>

static FbPipeline *
simplify (FbGraph *g)
{
  g_autoptr(FbPipelineOptions) o = tp_only ("simplify", NULL);
  FbPipeline *p = tp_run (g, o);
  tp_assert_stages_agree (p, 11);
  return p;
}

static const char *
summary (FbPipeline *p)
{
  return fb_pipeline_stage_by_name (p, "simplify")->summary;
}

static FbValue *
reshape (FbGraph *g, const char *name, FbValue *x, guint rank, const int64_t *dims)
{
  return tp_op (g, FB_OP_RESHAPE, name, x, tp_ints (g, rank, dims), NULL);
}

static FbValue *
transpose (FbGraph *g, const char *name, FbValue *x, guint rank, const int64_t *perm)
{
  FbValue *t = tp_op (g, FB_OP_TRANSPOSE, name, x, NULL);
  tp_attr_ints (g, t, "perm", rank, perm);
  return t;
}

/* x @ w + b, w [k, n] and b [n] constants. */
static FbValue *
linear (FbGraph *g, const char *name, FbValue *x, int64_t k, int64_t n)
{
  g_autofree char *w = g_strconcat (name, ".w", NULL), *b = g_strconcat (name, ".b", NULL);
  FbValue *mm = tp_op (g, FB_OP_MATMUL, name, x, tp_const (g, w, 2, TP_DIMS (k, n), NULL), NULL);
  return tp_op (g, FB_OP_ADD, b, mm, tp_const (g, b, 1, TP_DIMS (n), NULL), NULL);
}

/* The node that makes the value named value_name. */
static FbNode *
producer (FbGraph *out, const char *value_name)
{
  for (guint i = 0; i < out->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (out->nodes, i);
      for (guint k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] != NULL && strcmp (n->outputs[k]->name, value_name) == 0)
          return n;
    }
  g_error ("no node makes %s", value_name);
}

/* The front of a window attention: a 4x4 map of 4 channels cut into four 2x2 windows (Reshape,
 * Transpose, Reshape), the qkv layer, and its output split into heads (Reshape, Transpose).
 * The partition moves after the layer, next to the heads' Transpose: the layer reads the map
 * itself. */
static void
test_partition_moves_after (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 4, 4, 4));
  FbValue *parts = reshape (g, "part", x, 6, TP_DIMS (1, 2, 2, 2, 2, 4));
  parts = transpose (g, "part_t", parts, 6, TP_DIMS (0, 1, 3, 2, 4, 5));
  FbValue *windows = reshape (g, "windows", parts, 3, TP_DIMS (4, 4, 4));
  FbValue *qkv = linear (g, "qkv", windows, 4, 6);
  FbValue *heads = reshape (g, "heads", qkv, 4, TP_DIMS (4, 4, 2, 3));
  tp_output (g, tp_op (g, FB_OP_RELU, "r", transpose (g, "heads_t", heads, 4, TP_DIMS (2, 0, 1, 3)), NULL));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");

  g_assert_nonnull (strstr (summary (p), "rows-after-product ×1"));
  FbNode *mm = tp_find (out, FB_OP_MATMUL);
  g_assert_cmpstr (mm->inputs[0]->name, ==, "x");
  g_assert_cmpint (mm->outputs[0]->shape.rank, ==, 4);
  g_assert_cmpint (mm->outputs[0]->shape.dim[3], ==, 6);
}

/* The back of it: heads joined (Transpose, Reshape), the output layer, the windows put back on
 * the map and rolled (Reshape, Transpose, Reshape, Gather), plus the residual. The moves go
 * before the layer, next to the heads' Transpose: the layer's result is the residual's operand. */
static void
test_reverse_moves_before (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *ctx = tp_input (g, "ctx", 4, TP_DIMS (4, 2, 4, 3));
  FbValue *residual = tp_input (g, "residual", 4, TP_DIMS (1, 4, 4, 5));
  FbValue *joined = transpose (g, "ctx_t", ctx, 4, TP_DIMS (0, 2, 1, 3));
  joined = reshape (g, "ctx_r", joined, 3, TP_DIMS (4, 4, 6));
  FbValue *proj = linear (g, "proj", joined, 6, 5);
  FbValue *map = reshape (g, "rev", proj, 6, TP_DIMS (1, 2, 2, 2, 2, 5));
  map = transpose (g, "rev_t", map, 6, TP_DIMS (0, 1, 3, 2, 4, 5));
  map = reshape (g, "map", map, 4, TP_DIMS (1, 4, 4, 5));
  FbValue *rolled = tp_op (g, FB_OP_GATHER, "unroll", map, tp_ints (g, 4, TP_DIMS (1, 2, 3, 0)), NULL);
  tp_attr_int (g, rolled, "axis", 1);
  tp_output (g, tp_op (g, FB_OP_ADD, "res", residual, rolled, NULL));
  g_autoptr(FbPipeline) p = simplify (g);
  FbGraph *out = tp_stage_graph (p, "simplify");

  g_assert_nonnull (strstr (summary (p), "rows-before-product ×1"));
  FbNode *res = producer (out, "res_out");
  FbNode *bias = res->inputs[1]->producer;
  g_assert_cmpint (bias->op, ==, FB_OP_ADD);
  FbNode *mm = bias->inputs[0]->producer;
  g_assert_cmpint (mm->op, ==, FB_OP_MATMUL);
  g_assert_cmpint (mm->inputs[0]->producer->op, ==, FB_OP_GATHER);
}

/* Where no copy would merge, or a move's result is read elsewhere too, or a Transpose moves the
 * last axis (columns, not rows), the graph stays as it was. */
static void
test_moves_that_stay (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 3, TP_DIMS (2, 3, 4));
  /* a moved input, and a layer read by a Relu, not a copy */
  FbValue *t1 = transpose (g, "t1", x, 3, TP_DIMS (1, 0, 2));
  tp_output (g, tp_op (g, FB_OP_RELU, "r1", linear (g, "l1", t1, 4, 5), NULL));
  /* a moved input that is an output too */
  FbValue *t2 = transpose (g, "t2", x, 3, TP_DIMS (1, 0, 2));
  tp_output (g, t2);
  tp_output (g, transpose (g, "t2b", linear (g, "l2", t2, 4, 5), 3, TP_DIMS (1, 0, 2)));
  /* Transposes of the last axis on both sides */
  FbValue *t3 = transpose (g, "t3", x, 3, TP_DIMS (0, 2, 1));
  tp_output (g, transpose (g, "t3b", linear (g, "l3", t3, 3, 5), 3, TP_DIMS (0, 2, 1)));
  g_autoptr(FbPipeline) p = simplify (g);

  g_assert_null (strstr (summary (p), "rows-"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pass/simplify-rows/partition-moves-after", test_partition_moves_after);
  g_test_add_func ("/pass/simplify-rows/reverse-moves-before", test_reverse_moves_before);
  g_test_add_func ("/pass/simplify-rows/moves-that-stay", test_moves_that_stay);
  return g_test_run ();
}
