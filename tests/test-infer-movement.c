/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shape and dtype inference for operators that move data: Concat, Transpose, Gather,
 * GatherElements, ScatterND, DepthToSpace, SpaceToDepth, Trilu, Expand, Tile, and the slicing
 * family Slice, Split and Pad in every opset form. */
#include "fb-test-infer.h"

#define F32 FB_DTYPE_FLOAT32
#define I64 FB_DTYPE_INT64

/* ---- movement ------------------------------------------------------------------------------ */

static void
test_concat_transpose (void)
{
  TestGraph *tg = tg_new (13);
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_CONCAT, 3, 1, tg_input (tg, NULL, F32, "Nx2x?"),
               tg_input (tg, NULL, F32, "Nx3x7"), tg_input (tg, NULL, F32, "?x5x7"));
  tg_int (tg, n, "axis", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx10x7");
  n = tg_node (tg, NULL, FB_OP_CONCAT, 2, 1, tg_input (tg, NULL, F32, "2x3"),
               tg_input (tg, NULL, F32, "2x4"));
  tg_int (tg, n, "axis", 0);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "extent");
  n = tg_node (tg, NULL, FB_OP_CONCAT, 2, 1, tg_input (tg, NULL, F32, "2x3"),
               tg_input (tg, NULL, F32, "2"));
  tg_int (tg, n, "axis", 0);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "rank");
  n = tg_node (tg, NULL, FB_OP_CONCAT, 1, 1, tg_input (tg, NULL, F32, "2"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "'axis'");

  n = tg_node (tg, NULL, FB_OP_TRANSPOSE, 1, 1, tg_input (tg, NULL, F32, "Nx3x224xW"));
  tg_ints (tg, n, "perm", 4, I64S (0, 2, 3, 1));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx224xWx3");
  n = tg_node (tg, NULL, FB_OP_TRANSPOSE, 1, 1, tg_input (tg, NULL, F32, "2x3x4"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "4x3x2");
  tg_free (tg);
}

static void
test_gather_scatter (void)
{
  TestGraph *tg = tg_new (13);
  FbValue *data = tg_input (tg, NULL, F32, "Nx5x6");
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_GATHER, 2, 1, data, tg_input (tg, NULL, I64, "2x3"));
  tg_int (tg, n, "axis", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx2x3x6");
  n = tg_node (tg, NULL, FB_OP_GATHER, 2, 1, tg_input (tg, NULL, I64, "4"), tg_scalar_i64 (tg, NULL, 0));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "");
  n = tg_node (tg, NULL, FB_OP_GATHER, 2, 1, data, tg_scalar_i64 (tg, NULL, 5));
  tg_int (tg, n, "axis", 1);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "out of range");
  n = tg_node (tg, NULL, FB_OP_GATHER, 2, 1, data, tg_input (tg, NULL, F32, "2"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "int32 or int64");
  n = tg_node (tg, NULL, FB_OP_GATHER_ELEMENTS, 2, 1, data, tg_input (tg, NULL, I64, "Nx2x6"));
  tg_int (tg, n, "axis", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx2x6");
  n = tg_node (tg, NULL, FB_OP_GATHER_ELEMENTS, 2, 1, data, tg_input (tg, NULL, I64, "2x6"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "rank");
  n = tg_node (tg, NULL, FB_OP_SCATTER_ND, 3, 1, tg_input (tg, NULL, F32, "4x5x6"),
               tg_input (tg, NULL, I64, "3x2"), tg_input (tg, NULL, F32, "3x6"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "4x5x6");
  n = tg_node (tg, NULL, FB_OP_SCATTER_ND, 3, 1, tg_input (tg, NULL, F32, "4x5x6"),
               tg_input (tg, NULL, I64, "3x2"), tg_input (tg, NULL, F32, "3x7"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "updates");
  tg_free (tg);
}

static void
test_space_depth_trilu_expand_tile (void)
{
  TestGraph *tg = tg_new (13);
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_DEPTH_TO_SPACE, 1, 1, tg_input (tg, NULL, F32, "Nx8x3x4"));
  tg_int (tg, n, "blocksize", 2);
  tg_str (tg, n, "mode", "CRD");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx2x6x8");
  n = tg_node (tg, NULL, FB_OP_DEPTH_TO_SPACE, 1, 1, tg_input (tg, NULL, F32, "1x6x3x4"));
  tg_int (tg, n, "blocksize", 2);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "divide");
  n = tg_node (tg, NULL, FB_OP_SPACE_TO_DEPTH, 1, 1, tg_input (tg, NULL, F32, "1x3x4x6"));
  tg_int (tg, n, "blocksize", 2);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x12x2x3");
  n = tg_node (tg, NULL, FB_OP_SPACE_TO_DEPTH, 1, 1, tg_input (tg, NULL, F32, "1x3x4x6"));
  tg_int (tg, n, "blocksize", 0);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "blocksize");
  n = tg_node (tg, NULL, FB_OP_TRILU, 2, 1, tg_input (tg, NULL, F32, "Nx4x4"), tg_scalar_i64 (tg, NULL, 1));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx4x4");
  n = tg_node (tg, NULL, FB_OP_TRILU, 1, 1, tg_input (tg, NULL, F32, "4"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "rank 2");

  /* Expand broadcasts both ways. */
  n = tg_node (tg, NULL, FB_OP_EXPAND, 2, 1, tg_input (tg, NULL, F32, "3x1"),
               tg_const_i64 (tg, NULL, 3, I64S (2, 1, 6)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "2x3x6");
  n = tg_node (tg, NULL, FB_OP_EXPAND, 2, 1, tg_input (tg, NULL, F32, "3x4"),
               tg_const_i64 (tg, NULL, 2, I64S (5, 4)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "broadcast");
  n = tg_node (tg, NULL, FB_OP_EXPAND, 2, 1, tg_input (tg, NULL, F32, "3x1"), tg_input (tg, NULL, I64, "3"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "?x3x?");

  n = tg_node (tg, NULL, FB_OP_TILE, 2, 1, tg_input (tg, NULL, F32, "Nx3"),
               tg_const_i64 (tg, NULL, 2, I64S (1, 4)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx12");
  n = tg_node (tg, NULL, FB_OP_TILE, 2, 1, tg_input (tg, NULL, F32, "2x3"),
               tg_const_i64 (tg, NULL, 3, I64S (1, 1, 1)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "repeats");
  tg_free (tg);
}

/* ---- slicing and padding ------------------------------------------------------------------- */

static void
test_slice (void)
{
  TestGraph *tg = tg_new (13);
  FbValue *x = tg_input (tg, NULL, F32, "Nx10x20");
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_SLICE, 5, 1, x, tg_const_i64 (tg, NULL, 2, I64S (2, -5)),
               tg_const_i64 (tg, NULL, 2, I64S (8, G_MAXINT64)),
               tg_const_i64 (tg, NULL, 2, I64S (1, 2)), tg_const_i64 (tg, NULL, 2, I64S (3, 1)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx2x5");
  /* Negative steps walk backwards, clamped to the axis. */
  n = tg_node (tg, NULL, FB_OP_SLICE, 5, 1, x, tg_const_i64 (tg, NULL, 1, I64S (-1)),
               tg_const_i64 (tg, NULL, 1, I64S (G_MININT64)), tg_const_i64 (tg, NULL, 1, I64S (1)),
               tg_const_i64 (tg, NULL, 1, I64S (-1)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx10x20");
  /* The whole of a symbolic axis keeps its name. */
  n = tg_node (tg, NULL, FB_OP_SLICE, 3, 1, x, tg_const_i64 (tg, NULL, 1, I64S (0)),
               tg_const_i64 (tg, NULL, 1, I64S (G_MAXINT64)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx10x20");
  n = tg_node (tg, NULL, FB_OP_SLICE, 4, 1, x, tg_input (tg, NULL, I64, "1"),
               tg_input (tg, NULL, I64, "1"), tg_const_i64 (tg, NULL, 1, I64S (2)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx10x?");
  n = tg_node (tg, NULL, FB_OP_SLICE, 5, 1, x, tg_const_i64 (tg, NULL, 1, I64S (0)),
               tg_const_i64 (tg, NULL, 1, I64S (5)), tg_const_i64 (tg, NULL, 1, I64S (1)),
               tg_const_i64 (tg, NULL, 1, I64S (0)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "step");
  n = tg_node (tg, NULL, FB_OP_SLICE, 3, 1, x, tg_const_i64 (tg, NULL, 2, I64S (0, 0)),
               tg_const_i64 (tg, NULL, 1, I64S (5)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "entries");
  tg_free (tg);

  /* Slice-1: starts, ends and axes are attributes. */
  tg = tg_new (9);
  n = tg_node (tg, NULL, FB_OP_SLICE, 1, 1, tg_input (tg, NULL, F32, "4x10"));
  tg_ints (tg, n, "starts", 1, I64S (1));
  tg_ints (tg, n, "ends", 1, I64S (-1));
  tg_ints (tg, n, "axes", 1, I64S (1));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "4x8");
  n = tg_node (tg, NULL, FB_OP_SLICE, 3, 1, tg_input (tg, NULL, F32, "4x10"),
               tg_const_i64 (tg, NULL, 1, I64S (1)), tg_const_i64 (tg, NULL, 1, I64S (2)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "opset 10");
  tg_free (tg);
}

static void
test_split (void)
{
  TestGraph *tg = tg_new (11);
  FbValue *x = tg_input (tg, NULL, F32, "Nx6");
  FbNode *n;

  /* Split-11: sizes are an attribute; without it, equal parts. */
  n = tg_node (tg, NULL, FB_OP_SPLIT, 1, 2, x);
  tg_int (tg, n, "axis", 1);
  tg_ints (tg, n, "split", 2, I64S (2, 4));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx2");
  CHECK (OUT (n, 1), F32, "Nx4");
  n = tg_node (tg, NULL, FB_OP_SPLIT, 1, 3, x);
  tg_int (tg, n, "axis", -1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 2), F32, "Nx2");
  n = tg_node (tg, NULL, FB_OP_SPLIT, 1, 4, x);
  tg_int (tg, n, "axis", 1);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "evenly");
  n = tg_node (tg, NULL, FB_OP_SPLIT, 1, 2, x);
  tg_int (tg, n, "axis", 1);
  tg_ints (tg, n, "split", 2, I64S (2, 3));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "add up");
  tg_free (tg);

  /* Split-13: sizes are an input. */
  tg = tg_new (13);
  x = tg_input (tg, NULL, F32, "Nx6");
  n = tg_node (tg, NULL, FB_OP_SPLIT, 2, 2, x, tg_const_i64 (tg, NULL, 2, I64S (1, 5)));
  tg_int (tg, n, "axis", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 1), F32, "Nx5");
  n = tg_node (tg, NULL, FB_OP_SPLIT, 1, 2, x);
  tg_ints (tg, n, "split", 2, I64S (2, 4));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "'split'");
  tg_free (tg);

  /* Split-18: num_outputs, the last chunk smaller. */
  tg = tg_new (18);
  x = tg_input (tg, NULL, F32, "7x2");
  n = tg_node (tg, NULL, FB_OP_SPLIT, 1, 3, x);
  tg_int (tg, n, "num_outputs", 3);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "3x2");
  CHECK (OUT (n, 2), F32, "1x2");
  n = tg_node (tg, NULL, FB_OP_SPLIT, 1, 2, x);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "num_outputs");
  tg_free (tg);
}

static void
test_pad (void)
{
  TestGraph *tg = tg_new (18);
  FbValue *x = tg_input (tg, NULL, F32, "Nx3x4x4");
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_PAD, 2, 1, x, tg_const_i64 (tg, NULL, 8, I64S (0, 0, 1, 2, 0, 0, 3, -1)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx3x8x5");
  /* Opset 18: pads for the listed axes only. */
  n = tg_node (tg, NULL, FB_OP_PAD, 4, 1, x, tg_const_i64 (tg, NULL, 2, I64S (1, 1)),
               tg_scalar_f32 (tg, NULL, 0), tg_const_i64 (tg, NULL, 1, I64S (-1)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx3x4x6");
  n = tg_node (tg, NULL, FB_OP_PAD, 2, 1, x, tg_const_i64 (tg, NULL, 8, I64S (0, 0, -3, 0, 0, 0, -2, 0)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "below zero");
  n = tg_node (tg, NULL, FB_OP_PAD, 2, 1, x, tg_const_i64 (tg, NULL, 3, I64S (0, 0, 1)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "odd");
  n = tg_node (tg, NULL, FB_OP_PAD, 2, 1, x, tg_input (tg, NULL, I64, "8"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "?x?x?x?");
  tg_free (tg);

  /* Pad-2: pads is an attribute. */
  tg = tg_new (9);
  n = tg_node (tg, NULL, FB_OP_PAD, 1, 1, tg_input (tg, NULL, F32, "2x3"));
  tg_ints (tg, n, "pads", 4, I64S (1, 0, 1, 2));
  tg_str (tg, n, "mode", "reflect");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "4x5");
  n = tg_node (tg, NULL, FB_OP_PAD, 1, 1, tg_input (tg, NULL, F32, "2x3"));
  tg_ints (tg, n, "pads", 2, I64S (1, 0));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "entries");
  tg_free (tg);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/movement/concat-transpose", test_concat_transpose);
  g_test_add_func ("/infer/movement/gather-scatter", test_gather_scatter);
  g_test_add_func ("/infer/movement/space-depth-trilu-expand-tile", test_space_depth_trilu_expand_tile);
  g_test_add_func ("/infer/movement/slice", test_slice);
  g_test_add_func ("/infer/movement/split", test_split);
  g_test_add_func ("/infer/movement/pad", test_pad);
  return g_test_run ();
}
