/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The interpreter's data-movement and shape operators, including the data-dependent failures
 * (an index out of range, a reshape that does not fit) that must be errors naming the node. */
#include "fb-test-interp.h"

#define I64(...) ((const int64_t[]) { __VA_ARGS__ })

static FbTensor *
ints (guint n, const int64_t *v)
{
  int64_t dim = n;
  return ti_i64 (1, &dim, v);
}

static void
test_concat_transpose (void)
{
  FbGraph *g = ti_graph (13);
  FbTensor *a = ti_f32 (2, D (2, 2), V (1, 2, 3, 4));
  FbTensor *b = ti_f32 (2, D (2, 1), V (5, 6));
  FbNode *n;

  n = ti_node (g, FB_OP_CONCAT, 2, 1);
  ti_attr_int (g, n, "axis", -1);
  ti_assert (ti_run1 (n, TI_IN (a, b)), FB_DTYPE_FLOAT32, 2, D (2, 3), V (1, 2, 5, 3, 4, 6), 0);
  n = ti_node (g, FB_OP_CONCAT, 3, 1);
  ti_attr_int (g, n, "axis", 0);
  ti_assert (ti_run1 (n, TI_IN (a, ti_f32 (2, D (0, 2), NULL), a)), FB_DTYPE_FLOAT32, 2, D (4, 2),
             V (1, 2, 3, 4, 1, 2, 3, 4), 0);
  n = ti_node (g, FB_OP_CONCAT, 2, 1);
  ti_attr_int (g, n, "axis", 0);
  ti_run_fails (n, TI_IN (a, b), FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g, FB_OP_TRANSPOSE, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (2, D (2, 3), V (1, 2, 3, 4, 5, 6)))), FB_DTYPE_FLOAT32, 2,
             D (3, 2), V (1, 4, 2, 5, 3, 6), 0);
  n = ti_node (g, FB_OP_TRANSPOSE, 1, 1);
  ti_attr_ints (g, n, "perm", 3, I64 (1, 2, 0));
  ti_assert (ti_run1 (n, TI_IN (ti_tensor (FB_DTYPE_INT8, 3, D (2, 1, 2), V (1, 2, 3, 4)))),
             FB_DTYPE_INT8, 3, D (1, 2, 2), V (1, 3, 2, 4), 0);
  n = ti_node (g, FB_OP_TRANSPOSE, 1, 1);
  ti_attr_ints (g, n, "perm", 2, I64 (0, 0));
  ti_run_fails (n, TI_IN (a), FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_slice_split (void)
{
  FbGraph *g9 = ti_graph (9), *g13 = ti_graph (13), *g18 = ti_graph (18);
  FbTensor *x = ti_f32 (2, D (3, 4), V (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
  FbTensor **out;
  FbNode *n;

  n = ti_node (g13, FB_OP_SLICE, 5, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ints (2, I64 (1, 0)), ints (2, I64 (3, 4)), ints (2, I64 (0, 1)),
                                ints (2, I64 (1, 2)))),
             FB_DTYPE_FLOAT32, 2, D (2, 2), V (4, 6, 8, 10), 0);
  /* Negative steps walk backwards; huge ends clamp. */
  n = ti_node (g13, FB_OP_SLICE, 5, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ints (1, I64 (-1)), ints (1, I64 (G_MININT64)), ints (1, I64 (1)),
                                ints (1, I64 (-2)))),
             FB_DTYPE_FLOAT32, 2, D (3, 2), V (3, 1, 7, 5, 11, 9), 0);
  n = ti_node (g13, FB_OP_SLICE, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ints (1, I64 (2)), ints (1, I64 (G_MAXINT64)))),
             FB_DTYPE_FLOAT32, 2, D (1, 4), V (8, 9, 10, 11), 0);
  n = ti_node (g13, FB_OP_SLICE, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ints (1, I64 (3)), ints (1, I64 (1)))), FB_DTYPE_FLOAT32, 2,
             D (0, 4), NULL, 0);
  n = ti_node (g9, FB_OP_SLICE, 1, 1);
  ti_attr_ints (g9, n, "starts", 1, I64 (1));
  ti_attr_ints (g9, n, "ends", 1, I64 (-1));
  ti_attr_ints (g9, n, "axes", 1, I64 (1));
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 2, D (3, 2), V (1, 2, 5, 6, 9, 10), 0);
  n = ti_node (g13, FB_OP_SLICE, 5, 1);
  ti_run_fails (n, TI_IN (x, ints (1, I64 (0)), ints (1, I64 (1)), ints (1, I64 (0)), ints (1, I64 (0))),
                FB_INTERP_ERROR_RUNTIME);
  /* A backwards slice of an empty axis is empty, not a read before the start. */
  n = ti_node (g13, FB_OP_SLICE, 5, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (2, D (0, 3), NULL), ints (1, I64 (-1)), ints (1, I64 (G_MININT64)),
                                ints (1, I64 (0)), ints (1, I64 (-1)))),
             FB_DTYPE_FLOAT32, 2, D (0, 3), NULL, 0);

  n = ti_node (g13, FB_OP_SPLIT, 2, 2);
  ti_attr_int (g13, n, "axis", 1);
  out = ti_run (n, TI_IN (x, ints (2, I64 (1, 3))));
  ti_assert (out[0], FB_DTYPE_FLOAT32, 2, D (3, 1), V (0, 4, 8), 0);
  ti_assert (out[1], FB_DTYPE_FLOAT32, 2, D (3, 3), V (1, 2, 3, 5, 6, 7, 9, 10, 11), 0);
  g_free (out);
  n = ti_node (g13, FB_OP_SPLIT, 1, 2);
  out = ti_run (n, TI_IN (ti_f32 (1, D (4), V (1, 2, 3, 4))));
  ti_assert (out[1], FB_DTYPE_FLOAT32, 1, D (2), V (3, 4), 0);
  g_free (out);
  /* num_outputs since opset 18 allows a shorter last part. */
  n = ti_node (g18, FB_OP_SPLIT, 1, 2);
  ti_attr_int (g18, n, "num_outputs", 2);
  out = ti_run (n, TI_IN (ti_f32 (1, D (3), V (1, 2, 3))));
  ti_assert (out[0], FB_DTYPE_FLOAT32, 1, D (2), V (1, 2), 0);
  ti_assert (out[1], FB_DTYPE_FLOAT32, 1, D (1), V (3), 0);
  g_free (out);
  n = ti_node (g13, FB_OP_SPLIT, 1, 2);
  ti_run_fails (n, TI_IN (ti_f32 (1, D (3), NULL)), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g13, FB_OP_SPLIT, 2, 2);
  ti_run_fails (n, TI_IN (x, ints (2, I64 (2, 2))), FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_gather_scatter (void)
{
  FbGraph *g = ti_graph (16);
  FbTensor *x = ti_f32 (2, D (3, 2), V (1, 2, 3, 4, 5, 6));
  FbNode *n;

  n = ti_node (g, FB_OP_GATHER, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ti_i64 (2, D (1, 2), I64 (2, -3)))), FB_DTYPE_FLOAT32, 3,
             D (1, 2, 2), V (5, 6, 1, 2), 0);
  n = ti_node (g, FB_OP_GATHER, 2, 1);
  ti_attr_int (g, n, "axis", 1);
  ti_assert (ti_run1 (n, TI_IN (x, ti_tensor (FB_DTYPE_INT32, 0, NULL, V (1)))), FB_DTYPE_FLOAT32,
             1, D (3), V (2, 4, 6), 0);
  n = ti_node (g, FB_OP_GATHER, 2, 1);
  ti_run_fails (n, TI_IN (x, ints (1, I64 (3))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_GATHER, 2, 1);
  ti_run_fails (n, TI_IN (x, ints (1, I64 (-4))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_GATHER, 2, 1);
  ti_run_fails (n, TI_IN (x, ti_f32 (1, D (1), V (0))), FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g, FB_OP_GATHER_ELEMENTS, 2, 1);
  ti_attr_int (g, n, "axis", 1);
  ti_assert (ti_run1 (n, TI_IN (x, ti_i64 (2, D (3, 2), I64 (1, 1, 0, 1, -1, 0)))), FB_DTYPE_FLOAT32,
             2, D (3, 2), V (2, 2, 3, 4, 6, 5), 0);
  n = ti_node (g, FB_OP_GATHER_ELEMENTS, 2, 1);
  ti_run_fails (n, TI_IN (x, ti_i64 (2, D (1, 1), I64 (7))), FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g, FB_OP_SCATTER_ND, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ti_i64 (2, D (2, 1), I64 (2, 0)), ti_f32 (2, D (2, 2), V (9, 8, 7, 6)))),
             FB_DTYPE_FLOAT32, 2, D (3, 2), V (7, 6, 3, 4, 9, 8), 0);
  n = ti_node (g, FB_OP_SCATTER_ND, 3, 1);
  ti_attr_string (g, n, "reduction", "add");
  ti_assert (ti_run1 (n, TI_IN (x, ti_i64 (2, D (2, 2), I64 (0, 1, 0, 1)), ti_f32 (1, D (2), V (10, 20)))),
             FB_DTYPE_FLOAT32, 2, D (3, 2), V (1, 32, 3, 4, 5, 6), 0);
  n = ti_node (g, FB_OP_SCATTER_ND, 3, 1);
  ti_run_fails (n, TI_IN (x, ti_i64 (2, D (1, 1), I64 (3)), ti_f32 (2, D (1, 2), NULL)),
                FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_SCATTER_ND, 3, 1);
  ti_run_fails (n, TI_IN (x, ti_i64 (2, D (1, 1), I64 (0)), ti_f32 (2, D (1, 3), NULL)),
                FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_expand_tile_pad (void)
{
  FbGraph *g = ti_graph (19), *g2 = ti_graph (2);
  FbTensor *x = ti_f32 (2, D (2, 1), V (1, 2));
  FbTensor *m = ti_f32 (2, D (2, 3), V (1, 2, 3, 4, 5, 6));
  FbNode *n;

  n = ti_node (g, FB_OP_EXPAND, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ints (3, I64 (2, 1, 3)))), FB_DTYPE_FLOAT32, 3, D (2, 2, 3),
             V (1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2), 0);
  n = ti_node (g, FB_OP_EXPAND, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ints (1, I64 (1)))), FB_DTYPE_FLOAT32, 2, D (2, 1), V (1, 2), 0);
  n = ti_node (g, FB_OP_EXPAND, 2, 1);
  ti_run_fails (n, TI_IN (m, ints (2, I64 (2, 4))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_EXPAND, 2, 1);
  ti_run_fails (n, TI_IN (m, ints (2, I64 (-1, 3))), FB_INTERP_ERROR_RUNTIME);
  /* Shapes from data may ask for more than memory, or more than 64 bits can count. */
  n = ti_node (g, FB_OP_EXPAND, 2, 1);
  ti_run_fails (n, TI_IN (x, ints (3, I64 (1 << 30, 1 << 30, 1))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_EXPAND, 2, 1);
  ti_run_fails (n, TI_IN (x, ints (4, I64 (G_MAXINT64, G_MAXINT64, 2, 1))), FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g, FB_OP_TILE, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ints (2, I64 (2, 2)))), FB_DTYPE_FLOAT32, 2, D (4, 2),
             V (1, 1, 2, 2, 1, 1, 2, 2), 0);
  n = ti_node (g, FB_OP_TILE, 2, 1);
  ti_run_fails (n, TI_IN (x, ints (1, I64 (2))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_TILE, 2, 1);
  ti_run_fails (n, TI_IN (x, ints (2, I64 (G_MAXINT64, G_MAXINT64))), FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g, FB_OP_PAD, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (m, ints (4, I64 (0, 1, 1, 0)), ti_f32 (0, NULL, V (9)))),
             FB_DTYPE_FLOAT32, 2, D (3, 4), V (9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9), 0);
  n = ti_node (g, FB_OP_PAD, 2, 1);
  ti_attr_string (g, n, "mode", "reflect");
  ti_assert (ti_run1 (n, TI_IN (m, ints (4, I64 (0, 2, 0, 2)))), FB_DTYPE_FLOAT32, 2, D (2, 7),
             V (3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4), 0);
  n = ti_node (g, FB_OP_PAD, 2, 1);
  ti_attr_string (g, n, "mode", "edge");
  ti_assert (ti_run1 (n, TI_IN (m, ints (4, I64 (1, 1, 0, 0)))), FB_DTYPE_FLOAT32, 2, D (3, 4),
             V (1, 1, 2, 3, 1, 1, 2, 3, 4, 4, 5, 6), 0);
  n = ti_node (g, FB_OP_PAD, 2, 1);
  ti_attr_string (g, n, "mode", "wrap");
  ti_assert (ti_run1 (n, TI_IN (m, ints (4, I64 (0, 1, 0, 2)))), FB_DTYPE_FLOAT32, 2, D (2, 6),
             V (3, 1, 2, 3, 1, 2, 6, 4, 5, 6, 4, 5), 0);
  /* Negative pads crop; axes (opset 18) pick the padded axes. */
  n = ti_node (g, FB_OP_PAD, 4, 1);
  ti_assert (ti_run1 (n, TI_IN (m, ints (2, I64 (-1, 1)), NULL, ints (1, I64 (-1)))),
             FB_DTYPE_FLOAT32, 2, D (2, 3), V (2, 3, 0, 5, 6, 0), 0);
  n = ti_node (g2, FB_OP_PAD, 1, 1);
  ti_attr_ints (g2, n, "pads", 4, I64 (1, 0, 0, 0));
  ti_attr_float (g2, n, "value", -1);
  ti_assert (ti_run1 (n, TI_IN (m)), FB_DTYPE_FLOAT32, 2, D (3, 3),
             V (-1, -1, -1, 1, 2, 3, 4, 5, 6), 0);
  n = ti_node (g, FB_OP_PAD, 2, 1);
  ti_run_fails (n, TI_IN (m, ints (4, I64 (0, -4, 0, 0))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_PAD, 2, 1);
  ti_attr_string (g, n, "mode", "reflect");
  ti_run_fails (n, TI_IN (ti_f32 (2, D (2, 0), NULL), ints (4, I64 (0, 1, 0, 0))),
                FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_PAD, 2, 1);
  ti_attr_string (g, n, "mode", "mirror");
  g_assert_false (fb_interp_supports (n));
  ti_done ();
}

static void
test_blocks_and_trilu (void)
{
  FbGraph *g = ti_graph (14);
  FbTensor *x = ti_f32 (4, D (1, 4, 1, 1), V (1, 2, 3, 4));
  FbTensor *sq = ti_f32 (2, D (3, 3), V (1, 2, 3, 4, 5, 6, 7, 8, 9));
  FbNode *n;

  n = ti_node (g, FB_OP_DEPTH_TO_SPACE, 1, 1);
  ti_attr_int (g, n, "blocksize", 2);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 4, D (1, 1, 2, 2), V (1, 2, 3, 4), 0);
  {
    /* DCR and CRD differ once there is more than one output channel. */
    FbTensor *x8 = ti_f32 (4, D (1, 8, 1, 1), V (0, 1, 2, 3, 4, 5, 6, 7));
    n = ti_node (g, FB_OP_DEPTH_TO_SPACE, 1, 1);
    ti_attr_int (g, n, "blocksize", 2);
    ti_assert (ti_run1 (n, TI_IN (x8)), FB_DTYPE_FLOAT32, 4, D (1, 2, 2, 2),
               V (0, 2, 4, 6, 1, 3, 5, 7), 0);
    n = ti_node (g, FB_OP_DEPTH_TO_SPACE, 1, 1);
    ti_attr_int (g, n, "blocksize", 2);
    ti_attr_string (g, n, "mode", "CRD");
    ti_assert (ti_run1 (n, TI_IN (x8)), FB_DTYPE_FLOAT32, 4, D (1, 2, 2, 2),
               V (0, 1, 2, 3, 4, 5, 6, 7), 0);
  }
  n = ti_node (g, FB_OP_SPACE_TO_DEPTH, 1, 1);
  ti_attr_int (g, n, "blocksize", 2);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (4, D (1, 1, 2, 2), V (1, 2, 3, 4)))), FB_DTYPE_FLOAT32, 4,
             D (1, 4, 1, 1), V (1, 2, 3, 4), 0);
  n = ti_node (g, FB_OP_SPACE_TO_DEPTH, 1, 1);
  ti_attr_int (g, n, "blocksize", 3);
  ti_run_fails (n, TI_IN (ti_f32 (4, D (1, 1, 2, 2), NULL)), FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g, FB_OP_TRILU, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (sq)), FB_DTYPE_FLOAT32, 2, D (3, 3), V (1, 2, 3, 0, 5, 6, 0, 0, 9), 0);
  n = ti_node (g, FB_OP_TRILU, 2, 1);
  ti_attr_int (g, n, "upper", 0);
  ti_assert (ti_run1 (n, TI_IN (sq, ti_i64 (0, NULL, I64 (-1)))), FB_DTYPE_FLOAT32, 2, D (3, 3),
             V (0, 0, 0, 4, 0, 0, 7, 8, 0), 0);
  n = ti_node (g, FB_OP_TRILU, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (sq, ti_i64 (0, NULL, I64 (G_MININT64)))), FB_DTYPE_FLOAT32, 2,
             D (3, 3), V (1, 2, 3, 4, 5, 6, 7, 8, 9), 0);
  ti_done ();
}

static void
test_shapes (void)
{
  FbGraph *g4 = ti_graph (4), *g11 = ti_graph (11), *g15 = ti_graph (15);
  FbTensor *x = ti_f32 (3, D (2, 1, 3), V (1, 2, 3, 4, 5, 6));
  FbNode *n;

  n = ti_node (g15, FB_OP_RESHAPE, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ints (2, I64 (0, -1)))), FB_DTYPE_FLOAT32, 2, D (2, 3), NULL, 0);
  n = ti_node (g15, FB_OP_RESHAPE, 2, 1);
  ti_attr_int (g15, n, "allowzero", 1);
  ti_run_fails (n, TI_IN (x, ints (2, I64 (0, -1))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g15, FB_OP_RESHAPE, 2, 1);
  ti_run_fails (n, TI_IN (x, ints (2, I64 (4, 2))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g15, FB_OP_RESHAPE, 2, 1);
  ti_run_fails (n, TI_IN (x, ints (2, I64 (-1, -1))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g15, FB_OP_RESHAPE, 2, 1);
  ti_run_fails (n, TI_IN (x, ints (3, I64 (G_MAXINT64, G_MAXINT64, 0))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g4, FB_OP_RESHAPE, 1, 1);
  ti_attr_ints (g4, n, "shape", 1, I64 (-1));
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 1, D (6), V (1, 2, 3, 4, 5, 6), 0);

  n = ti_node (g15, FB_OP_FLATTEN, 1, 1);
  ti_attr_int (g15, n, "axis", -1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 2, D (2, 3), NULL, 0);
  n = ti_node (g15, FB_OP_FLATTEN, 1, 1);
  ti_attr_int (g15, n, "axis", 0);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 2, D (1, 6), NULL, 0);

  n = ti_node (g15, FB_OP_SQUEEZE, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ints (1, I64 (-2)))), FB_DTYPE_FLOAT32, 2, D (2, 3), NULL, 0);
  n = ti_node (g15, FB_OP_SQUEEZE, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 2, D (2, 3), NULL, 0);
  n = ti_node (g15, FB_OP_SQUEEZE, 2, 1);
  ti_run_fails (n, TI_IN (x, ints (1, I64 (0))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g11, FB_OP_UNSQUEEZE, 1, 1);
  ti_attr_ints (g11, n, "axes", 2, I64 (0, -1));
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_FLOAT32, 5, D (1, 2, 1, 3, 1), NULL, 0);
  n = ti_node (g15, FB_OP_UNSQUEEZE, 2, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ints (1, I64 (1)))), FB_DTYPE_FLOAT32, 4, D (2, 1, 1, 3), NULL, 0);
  n = ti_node (g15, FB_OP_UNSQUEEZE, 2, 1);
  ti_run_fails (n, TI_IN (x, ints (2, I64 (1, 1))), FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g15, FB_OP_SHAPE, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_INT64, 1, D (3), V (2, 1, 3), 0);
  n = ti_node (g15, FB_OP_SHAPE, 1, 1);
  ti_attr_int (g15, n, "start", -2);
  ti_attr_int (g15, n, "end", 100);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_INT64, 1, D (2), V (1, 3), 0);
  n = ti_node (g15, FB_OP_SIZE, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x)), FB_DTYPE_INT64, 0, NULL, V (6), 0);
  ti_done ();
}

static void
test_sources (void)
{
  FbGraph *g = ti_graph (13);
  FbNode *n;

  n = ti_node (g, FB_OP_CONSTANT, 0, 1);
  ti_attr_ints (g, n, "value_ints", 2, I64 (4, 5));
  ti_assert (ti_run1 (n, NULL), FB_DTYPE_INT64, 1, D (2), V (4, 5), 0);
  n = ti_node (g, FB_OP_CONSTANT, 0, 1);
  ti_attr_float (g, n, "value_float", 2.5f);
  ti_assert (ti_run1 (n, NULL), FB_DTYPE_FLOAT32, 0, NULL, V (2.5), 0);
  n = ti_node (g, FB_OP_CONSTANT, 0, 1);
  ti_attr_tensor (g, n, "value", ti_tensor (FB_DTYPE_INT8, 1, D (2), V (-1, 1)));
  ti_assert (ti_run1 (n, NULL), FB_DTYPE_INT8, 1, D (2), V (-1, 1), 0);
  n = ti_node (g, FB_OP_CONSTANT, 0, 1);
  ti_attr_string (g, n, "value_string", "text");
  g_assert_false (fb_interp_supports (n));
  ti_run_fails (n, NULL, FB_INTERP_ERROR_UNSUPPORTED);

  n = ti_node (g, FB_OP_CONSTANT_OF_SHAPE, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (ints (2, I64 (2, 1)))), FB_DTYPE_FLOAT32, 2, D (2, 1), V (0, 0), 0);
  n = ti_node (g, FB_OP_CONSTANT_OF_SHAPE, 1, 1);
  ti_attr_tensor (g, n, "value", ti_i64 (1, D (1), I64 (7)));
  ti_assert (ti_run1 (n, TI_IN (ints (1, I64 (3)))), FB_DTYPE_INT64, 1, D (3), V (7, 7, 7), 0);
  /* A hostile shape asks for more memory than exists: an error, not an abort. */
  n = ti_node (g, FB_OP_CONSTANT_OF_SHAPE, 1, 1);
  ti_run_fails (n, TI_IN (ints (3, I64 (1 << 20, 1 << 20, 1 << 20))), FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_CONSTANT_OF_SHAPE, 1, 1);
  ti_run_fails (n, TI_IN (ints (1, I64 (-1))), FB_INTERP_ERROR_RUNTIME);

  n = ti_node (g, FB_OP_RANGE, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_f32 (0, NULL, V (1)), ti_f32 (0, NULL, V (2)), ti_f32 (0, NULL, V (0.25)))),
             FB_DTYPE_FLOAT32, 1, D (4), V (1, 1.25, 1.5, 1.75), 0);
  n = ti_node (g, FB_OP_RANGE, 3, 1);
  ti_assert (ti_run1 (n, TI_IN (ti_i64 (0, NULL, I64 (10)), ti_i64 (0, NULL, I64 (4)),
                                ti_i64 (0, NULL, I64 (-3)))),
             FB_DTYPE_INT64, 1, D (2), V (10, 7), 0);
  n = ti_node (g, FB_OP_RANGE, 3, 1);
  ti_run_fails (n, TI_IN (ti_i64 (0, NULL, I64 (0)), ti_i64 (0, NULL, I64 (4)), ti_i64 (0, NULL, I64 (0))),
                FB_INTERP_ERROR_RUNTIME);
  n = ti_node (g, FB_OP_RANGE, 3, 1);
  ti_run_fails (n, TI_IN (ti_i64 (0, NULL, I64 (G_MININT64)), ti_i64 (0, NULL, I64 (G_MAXINT64)),
                          ti_i64 (0, NULL, I64 (1))),
                FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/interp/movement/concat-transpose", test_concat_transpose);
  g_test_add_func ("/interp/movement/slice-split", test_slice_split);
  g_test_add_func ("/interp/movement/gather-scatter", test_gather_scatter);
  g_test_add_func ("/interp/movement/expand-tile-pad", test_expand_tile_pad);
  g_test_add_func ("/interp/movement/blocks-trilu", test_blocks_and_trilu);
  g_test_add_func ("/interp/shape/reshape-squeeze-shape", test_shapes);
  g_test_add_func ("/interp/shape/sources", test_sources);
  return g_test_run ();
}
