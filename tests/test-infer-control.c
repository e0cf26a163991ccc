/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shape and dtype inference through subgraphs: If (branches merged), Loop (loop-carried values
 * widened to a fixed point, scan outputs stacked), fused nodes (body bound to the node's
 * inputs), and fb_infer_graph over a graph that holds them. */
#include "fb-test-infer.h"

#define F32 FB_DTYPE_FLOAT32
#define I64 FB_DTYPE_INT64
#define BOOL FB_DTYPE_BOOL
#define UNDEF FB_DTYPE_UNDEFINED

static FbValue *
reshape (TestGraph *tg, FbGraph *g, FbValue *x, int n, const int64_t *shape)
{
  return tg_node (tg, g, FB_OP_RESHAPE, 2, 1, x, tg_const_i64 (tg, g, n, shape))->outputs[0];
}

static void
test_if (void)
{
  TestGraph *tg = tg_new (13);
  FbValue *cond = tg_input (tg, NULL, BOOL, "");
  FbValue *x = tg_input (tg, NULL, F32, "Nx4");
  FbValue *y = tg_input (tg, NULL, F32, "2x6");
  FbGraph *then_g = fb_graph_new_subgraph (tg->graph, "then");
  FbGraph *else_g = fb_graph_new_subgraph (tg->graph, "else");
  FbNode *n = tg_node (tg, NULL, FB_OP_IF, 1, 3, cond);

  /* Branches read outer values directly. */
  g_ptr_array_add (then_g->outputs, tg_node (tg, then_g, FB_OP_RELU, 1, 1, x)->outputs[0]);
  g_ptr_array_add (then_g->outputs, reshape (tg, then_g, y, 2, I64S (3, 4)));
  g_ptr_array_add (then_g->outputs, reshape (tg, then_g, y, 1, I64S (12)));
  g_ptr_array_add (else_g->outputs, tg_node (tg, else_g, FB_OP_SIGMOID, 1, 1, x)->outputs[0]);
  g_ptr_array_add (else_g->outputs, reshape (tg, else_g, y, 2, I64S (4, 3)));
  g_ptr_array_add (else_g->outputs, y);
  tg_graph_attr (tg, n, "then_branch", then_g);
  tg_graph_attr (tg, n, "else_branch", else_g);
  INFER_OK (tg, n);
  /* What both branches agree on stays; differing extents and ranks are forgotten. */
  CHECK (OUT (n, 0), F32, "Nx4");
  CHECK (OUT (n, 1), F32, "?x?");
  CHECK (OUT (n, 2), F32, "*");
  tg_free (tg);
}

static void
test_if_errors (void)
{
  TestGraph *tg = tg_new (13);
  FbValue *cond = tg_input (tg, NULL, BOOL, "");
  FbValue *x = tg_input (tg, NULL, F32, "4");
  FbValue *i = tg_input (tg, NULL, I64, "4");
  FbGraph *then_g = fb_graph_new_subgraph (tg->graph, "then");
  FbGraph *else_g = fb_graph_new_subgraph (tg->graph, "else");
  FbGraph *bad_g = fb_graph_new_subgraph (tg->graph, "bad");
  FbNode *n;

  g_ptr_array_add (then_g->outputs, x);
  g_ptr_array_add (else_g->outputs, i);
  n = tg_node (tg, NULL, FB_OP_IF, 1, 1, cond);
  tg_graph_attr (tg, n, "then_branch", then_g);
  tg_graph_attr (tg, n, "else_branch", else_g);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "else branch");
  n = tg_node (tg, NULL, FB_OP_IF, 1, 2, cond);
  tg_graph_attr (tg, n, "then_branch", then_g);
  tg_graph_attr (tg, n, "else_branch", then_g);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_INVALID, "branches");
  n = tg_node (tg, NULL, FB_OP_IF, 1, 1, x);
  tg_graph_attr (tg, n, "then_branch", then_g);
  tg_graph_attr (tg, n, "else_branch", then_g);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "bool");
  n = tg_node (tg, NULL, FB_OP_IF, 1, 1, cond);
  tg_graph_attr (tg, n, "then_branch", then_g);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_INVALID, "else_branch");
  /* An error inside a branch says where it is. */
  g_ptr_array_add (bad_g->outputs, tg_node (tg, bad_g, FB_OP_ADD, 2, 1, x, i)->outputs[0]);
  n = tg_node (tg, NULL, FB_OP_IF, 1, 1, cond);
  tg_graph_attr (tg, n, "then_branch", bad_g);
  tg_graph_attr (tg, n, "else_branch", then_g);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "in the 'then_branch' body");
  tg_free (tg);
}

/* A Loop whose body grows v along axis 0 (Concat with itself), keeps k, and scans k * k. */
static FbNode *
growing_loop (TestGraph *tg, FbValue *m, FbValue *cond, FbValue *v0, FbValue *k0)
{
  FbGraph *body = fb_graph_new_subgraph (tg->graph, "body");
  FbValue *cond_in, *v_in, *k_in;
  FbNode *cat, *n;

  tg_input (tg, body, UNDEF, "*");
  cond_in = tg_input (tg, body, UNDEF, "*");
  v_in = tg_input (tg, body, UNDEF, "*");
  k_in = tg_input (tg, body, UNDEF, "*");
  cat = tg_node (tg, body, FB_OP_CONCAT, 2, 1, v_in, v_in);
  tg_int (tg, cat, "axis", 0);
  g_ptr_array_add (body->outputs, cond_in);
  g_ptr_array_add (body->outputs, OUT (cat, 0));
  g_ptr_array_add (body->outputs, tg_node (tg, body, FB_OP_ADD, 2, 1, k_in, k_in)->outputs[0]);
  g_ptr_array_add (body->outputs, tg_node (tg, body, FB_OP_MUL, 2, 1, k_in, k_in)->outputs[0]);
  n = tg_node (tg, NULL, FB_OP_LOOP, 4, 3, m, cond, v0, k0);
  tg_graph_attr (tg, n, "body", body);
  return n;
}

static void
test_loop (void)
{
  TestGraph *tg = tg_new (13);
  FbValue *v0 = tg_input (tg, NULL, F32, "1x4");
  FbValue *k0 = tg_input (tg, NULL, F32, "3");
  FbNode *n;
  FbGraph *body;

  n = growing_loop (tg, tg_scalar_i64 (tg, NULL, 5), NULL, v0, k0);
  INFER_OK (tg, n);
  /* v changes extent every iteration: only its rank and width hold. */
  CHECK (OUT (n, 0), F32, "?x4");
  CHECK (OUT (n, 1), F32, "3");
  /* A constant trip count with a pass-through condition fixes the scan length. */
  CHECK (OUT (n, 2), F32, "5x3");
  body = fb_node_attr_graph (n, "body");
  CHECK (g_ptr_array_index (body->inputs, 0), I64, "");
  CHECK (g_ptr_array_index (body->inputs, 1), BOOL, "");
  CHECK (g_ptr_array_index (body->inputs, 2), F32, "?x4");
  CHECK (g_ptr_array_index (body->outputs, 1), F32, "?x4");

  /* A run-time condition may stop early: the scan length is unknown. */
  n = growing_loop (tg, tg_scalar_i64 (tg, NULL, 5), tg_input (tg, NULL, BOOL, ""), v0, k0);
  INFER_OK (tg, n);
  CHECK (OUT (n, 2), F32, "?x3");
  /* Inference can be run again on the same node. */
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "?x4");

  /* Loop-carried values keep their type. */
  n = growing_loop (tg, NULL, NULL, tg_input (tg, NULL, I64, "1x4"), k0);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "?x4");
  n = growing_loop (tg, tg_scalar_i64 (tg, NULL, 5), NULL, v0, tg_input (tg, NULL, FB_DTYPE_FLOAT16, "3"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 2), FB_DTYPE_FLOAT16, "5x3");
  n = growing_loop (tg, tg_input (tg, NULL, F32, ""), NULL, v0, k0);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "int64");
  n = tg_node (tg, NULL, FB_OP_LOOP, 3, 1, NULL, NULL, v0);
  tg_graph_attr (tg, n, "body", fb_graph_new_subgraph (tg->graph, "empty"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_INVALID, "body takes 0 inputs");
  tg_free (tg);
}

static void
test_loop_type_change (void)
{
  TestGraph *tg = tg_new (13);
  FbGraph *body = fb_graph_new_subgraph (tg->graph, "body");
  FbValue *v_in;
  FbNode *cast, *n;

  tg_input (tg, body, UNDEF, "*");
  g_ptr_array_add (body->outputs, tg_input (tg, body, UNDEF, "*"));
  v_in = tg_input (tg, body, UNDEF, "*");
  cast = tg_node (tg, body, FB_OP_CAST, 1, 1, v_in);
  tg_int (tg, cast, "to", FB_DTYPE_INT32);
  g_ptr_array_add (body->outputs, OUT (cast, 0));
  n = tg_node (tg, NULL, FB_OP_LOOP, 3, 1, tg_scalar_i64 (tg, NULL, 2), NULL,
               tg_input (tg, NULL, F32, "4"));
  tg_graph_attr (tg, n, "body", body);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "loop-carried");
  tg_free (tg);
}

/* Loops nested 40 deep, each body growing its value: inference must finish quickly and say
 * no to the depth, not recurse or iterate without bound. */
static void
test_loop_nesting (void)
{
  TestGraph *tg = tg_new (13);
  FbGraph *g = tg->graph;
  FbNode *outer = NULL;

  for (int level = 0; level < 40; level++)
    {
      FbGraph *body;
      FbValue *v_in;
      FbNode *n, *cat;

      n = tg_node (tg, g, FB_OP_LOOP, 3, 1, tg_scalar_i64 (tg, g, 2), NULL,
                   tg_weights (tg, g, FB_DTYPE_FLOAT32, "1x4"));
      if (outer == NULL)
        outer = n;
      else
        g_ptr_array_add (g->outputs, OUT (n, 0));
      body = fb_graph_new_subgraph (g, "body");
      tg_graph_attr (tg, n, "body", body);
      tg_input (tg, body, UNDEF, "*");
      g_ptr_array_add (body->outputs, tg_input (tg, body, UNDEF, "*"));
      v_in = tg_input (tg, body, UNDEF, "*");
      cat = tg_node (tg, body, FB_OP_CONCAT, 2, 1, v_in, v_in);
      tg_int (tg, cat, "axis", 0);
      g = body;
      if (level == 39)
        g_ptr_array_add (body->outputs, OUT (cat, 0));
    }
  INFER_FAILS (tg, outer, FB_GRAPH_ERROR_UNSUPPORTED, "nested");
  tg_free (tg);

  /* Three levels are fine. */
  tg = tg_new (13);
  g = tg->graph;
  outer = NULL;
  for (int level = 0; level < 3; level++)
    {
      FbGraph *body;
      FbValue *v_in;
      FbNode *n, *cat;

      n = tg_node (tg, g, FB_OP_LOOP, 3, 1, tg_scalar_i64 (tg, g, 2), NULL,
                   tg_weights (tg, g, FB_DTYPE_FLOAT32, "1x4"));
      if (outer == NULL)
        outer = n;
      body = fb_graph_new_subgraph (g, "body");
      tg_graph_attr (tg, n, "body", body);
      tg_input (tg, body, UNDEF, "*");
      g_ptr_array_add (body->outputs, tg_input (tg, body, UNDEF, "*"));
      v_in = tg_input (tg, body, UNDEF, "*");
      cat = tg_node (tg, body, FB_OP_CONCAT, 2, 1, v_in, v_in);
      tg_int (tg, cat, "axis", 0);
      g_ptr_array_add (body->outputs, OUT (cat, 0));
      g = body;
    }
  INFER_OK (tg, outer);
  CHECK (OUT (outer, 0), F32, "?x4");
  tg_free (tg);
}

static FbNode *
fused_bias_relu (TestGraph *tg, FbValue *x, FbValue *b)
{
  FbGraph *body = fb_graph_new_subgraph (tg->graph, "body");
  FbValue *bx = tg_input (tg, body, UNDEF, "*");
  FbValue *bb = tg_input (tg, body, UNDEF, "*");
  FbNode *add = tg_node (tg, body, FB_OP_ADD, 2, 1, bx, bb);
  FbNode *n = tg_node (tg, NULL, FB_OP_FUSED, 2, 1, x, b);

  g_ptr_array_add (body->outputs, tg_node (tg, body, FB_OP_RELU, 1, 1, OUT (add, 0))->outputs[0]);
  tg_graph_attr (tg, n, "body", body);
  tg_str (tg, n, "kind", "epilogue");
  return n;
}

static void
test_fused (void)
{
  TestGraph *tg = tg_new (17);
  FbValue *x = tg_input (tg, NULL, F32, "Nx8");
  FbNode *n;
  FbGraph *body;

  n = fused_bias_relu (tg, x, tg_weights (tg, NULL, F32, "8"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx8");
  body = fb_node_attr_graph (n, "body");
  CHECK (g_ptr_array_index (body->inputs, 1), F32, "8");
  n = fused_bias_relu (tg, x, tg_weights (tg, NULL, F32, "3"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "in the 'body' body");
  n = tg_node (tg, NULL, FB_OP_FUSED, 1, 1, x);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_INVALID, "'body'");
  n = tg_node (tg, NULL, FB_OP_FUSED, 1, 1, x);
  tg_graph_attr (tg, n, "body", fb_graph_new_subgraph (tg->graph, "empty"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_INVALID, "its body");
  tg_free (tg);
}

static void
test_infer_graph (void)
{
  TestGraph *tg = tg_new (17);
  g_autoptr(GError) error = NULL;
  FbValue *x = tg_input (tg, NULL, F32, "batchx3x32x32");
  FbNode *conv, *pool, *flat, *fused, *ifn;
  FbGraph *then_g = fb_graph_new_subgraph (tg->graph, "then");
  FbGraph *else_g = fb_graph_new_subgraph (tg->graph, "else");

  conv = tg_node (tg, NULL, FB_OP_CONV, 2, 1, x, tg_weights (tg, NULL, F32, "16x3x3x3"));
  tg_ints (tg, conv, "pads", 4, I64S (1, 1, 1, 1));
  fused = fused_bias_relu (tg, OUT (conv, 0), tg_weights (tg, NULL, F32, "16x1x1"));
  pool = tg_node (tg, NULL, FB_OP_GLOBAL_AVERAGE_POOL, 1, 1, OUT (fused, 0));
  flat = tg_node (tg, NULL, FB_OP_FLATTEN, 1, 1, OUT (pool, 0));
  /* Branches use a value the graph computes before the If. */
  g_ptr_array_add (then_g->outputs, tg_node (tg, then_g, FB_OP_RELU, 1, 1, OUT (flat, 0))->outputs[0]);
  g_ptr_array_add (else_g->outputs, OUT (flat, 0));
  ifn = tg_node (tg, NULL, FB_OP_IF, 1, 1, tg_input (tg, NULL, BOOL, "1"));
  tg_graph_attr (tg, ifn, "then_branch", then_g);
  tg_graph_attr (tg, ifn, "else_branch", else_g);
  g_assert_true (fb_infer_graph (tg->graph, &error));
  g_assert_no_error (error);
  CHECK (OUT (conv, 0), F32, "batchx16x32x32");
  CHECK (OUT (fused, 0), F32, "batchx16x32x32");
  CHECK (OUT (flat, 0), F32, "batchx16");
  CHECK (OUT (ifn, 0), F32, "batchx16");
  /* Inference is repeatable: a second run agrees with the first. */
  g_assert_true (fb_infer_graph (tg->graph, &error));
  g_assert_no_error (error);
  tg_free (tg);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/control/if", test_if);
  g_test_add_func ("/infer/control/if-errors", test_if_errors);
  g_test_add_func ("/infer/control/loop", test_loop);
  g_test_add_func ("/infer/control/loop-type-change", test_loop_type_change);
  g_test_add_func ("/infer/control/loop-nesting", test_loop_nesting);
  g_test_add_func ("/infer/control/fused", test_fused);
  g_test_add_func ("/infer/control/graph", test_infer_graph);
  return g_test_run ();
}
