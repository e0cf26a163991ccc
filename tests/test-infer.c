/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shape and dtype inference: elementwise, reductions, reshapes, tensor sources and shape readers,
 * value_info preference, symbolic dimensions, input pinning, and hostile attributes.
 * Data movement and slicing are in test-infer-movement.c; convolutions, normalizations,
 * contractions, resampling and recurrences in test-infer-nn.c; If, Loop and fused nodes in
 * test-infer-control.c. */
#include "fb-test-infer.h"

#include <math.h>

#define F32 FB_DTYPE_FLOAT32
#define I64 FB_DTYPE_INT64
#define I32 FB_DTYPE_INT32
#define BOOL FB_DTYPE_BOOL

/* ---- elementwise ------------------------------------------------------------------------- */

static void
test_unary (void)
{
  TestGraph *tg = tg_new (17);
  FbValue *x = tg_input (tg, NULL, F32, "Nx3x?");
  FbValue *xi = tg_input (tg, NULL, I64, "4");
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_RELU, 1, 1, x);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx3x?");
  n = tg_node (tg, NULL, FB_OP_IS_NAN, 1, 1, x);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), BOOL, "Nx3x?");
  n = tg_node (tg, NULL, FB_OP_NEG, 1, 1, xi);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "4");
  /* Exp takes floats only. */
  n = tg_node (tg, NULL, FB_OP_EXP, 1, 1, xi);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "floating-point");
  n = tg_node (tg, NULL, FB_OP_NOT, 1, 1, tg_input (tg, NULL, BOOL, "2x2"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), BOOL, "2x2");
  n = tg_node (tg, NULL, FB_OP_NOT, 1, 1, x);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "bool");
  tg_free (tg);

  /* Relu took integers only from opset 14. */
  tg = tg_new (13);
  n = tg_node (tg, NULL, FB_OP_RELU, 1, 1, tg_input (tg, NULL, I32, "3"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "int32");
  tg_free (tg);
}

static void
test_binary_broadcast (void)
{
  TestGraph *tg = tg_new (17);
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_ADD, 2, 1, tg_input (tg, NULL, F32, "Nx1x5"),
               tg_input (tg, NULL, F32, "3x1"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx3x5");
  /* Symbols survive broadcasting against 1 and against the same symbol. */
  n = tg_node (tg, NULL, FB_OP_MUL, 2, 1, tg_input (tg, NULL, F32, "batchxseqx1"),
               tg_input (tg, NULL, F32, "batchx1x8"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "batchxseqx8");
  n = tg_node (tg, NULL, FB_OP_GREATER, 2, 1, tg_input (tg, NULL, I64, "4"),
               tg_scalar_i64 (tg, NULL, 2));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), BOOL, "4");
  n = tg_node (tg, NULL, FB_OP_EQUAL, 2, 1, tg_input (tg, NULL, BOOL, "4"),
               tg_input (tg, NULL, BOOL, "1"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), BOOL, "4");
  n = tg_node (tg, NULL, FB_OP_AND, 2, 1, tg_input (tg, NULL, BOOL, "2x3"),
               tg_input (tg, NULL, BOOL, "3"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), BOOL, "2x3");
  n = tg_node (tg, NULL, FB_OP_OR, 2, 1, tg_input (tg, NULL, F32, "3"),
               tg_input (tg, NULL, BOOL, "3"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "bool");
  /* Mixed element types are an error. */
  n = tg_node (tg, NULL, FB_OP_ADD, 2, 1, tg_input (tg, NULL, F32, "3"),
               tg_input (tg, NULL, I64, "3"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "int64");
  n = tg_node (tg, NULL, FB_OP_SUB, 2, 1, tg_input (tg, NULL, F32, "3x4"),
               tg_input (tg, NULL, F32, "5"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "do not broadcast");
  /* Pow's exponent may have its own type from opset 12; the result has the base's. */
  n = tg_node (tg, NULL, FB_OP_POW, 2, 1, tg_input (tg, NULL, F32, "3"), tg_scalar_i64 (tg, NULL, 2));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "3");
  /* Mod of floats needs fmod=1. */
  n = tg_node (tg, NULL, FB_OP_MOD, 2, 1, tg_input (tg, NULL, F32, "3"), tg_input (tg, NULL, F32, "3"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "fmod");
  tg_int (tg, n, "fmod", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "3");
  n = tg_node (tg, NULL, FB_OP_MOD, 2, 1, tg_input (tg, NULL, I32, "3"), tg_input (tg, NULL, I32, "1"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I32, "3");
  /* An input of unknown rank makes the result's rank unknown, the type still flows. */
  n = tg_node (tg, NULL, FB_OP_DIV, 2, 1, tg_input (tg, NULL, F32, "*"), tg_input (tg, NULL, F32, "3"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "*");
  tg_free (tg);

  tg = tg_new (11);
  n = tg_node (tg, NULL, FB_OP_POW, 2, 1, tg_input (tg, NULL, F32, "3"), tg_scalar_i64 (tg, NULL, 2));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "int64");
  tg_free (tg);
}

static void
test_variadic_where_prelu (void)
{
  TestGraph *tg = tg_new (17);
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_SUM, 3, 1, tg_input (tg, NULL, F32, "2x1"),
               tg_input (tg, NULL, F32, "3"), tg_input (tg, NULL, F32, "1x1x3"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x2x3");
  n = tg_node (tg, NULL, FB_OP_MAX, 1, 1, tg_input (tg, NULL, I64, "5"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "5");
  n = tg_node (tg, NULL, FB_OP_WHERE, 3, 1, tg_input (tg, NULL, BOOL, "Nx1"),
               tg_input (tg, NULL, I64, "4"), tg_scalar_i64 (tg, NULL, 0));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "Nx4");
  n = tg_node (tg, NULL, FB_OP_WHERE, 3, 1, tg_input (tg, NULL, F32, "4"),
               tg_input (tg, NULL, F32, "4"), tg_input (tg, NULL, F32, "4"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "bool");
  n = tg_node (tg, NULL, FB_OP_PRELU, 2, 1, tg_input (tg, NULL, F32, "1x8x4x4"),
               tg_input (tg, NULL, F32, "8x1x1"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x8x4x4");
  n = tg_node (tg, NULL, FB_OP_PRELU, 2, 1, tg_input (tg, NULL, F32, "1x8x4x4"),
               tg_input (tg, NULL, F32, "3x1x1"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "slope");
  tg_free (tg);
}

static void
test_cast_clip_dropout (void)
{
  TestGraph *tg = tg_new (13);
  FbValue *x = tg_input (tg, NULL, F32, "2x3");
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_CAST, 1, 1, x);
  tg_int (tg, n, "to", FB_DTYPE_FLOAT16);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), FB_DTYPE_FLOAT16, "2x3");
  n = tg_node (tg, NULL, FB_OP_CAST, 1, 1, x);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "'to'");
  tg_int (tg, n, "to", FB_DTYPE_STRING);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_UNSUPPORTED, "string");
  tg_int (tg, n, "to", 99);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_UNSUPPORTED, "99");

  /* Clip-11+: bounds are scalar inputs of the data's type. */
  n = tg_node (tg, NULL, FB_OP_CLIP, 3, 1, x, tg_scalar_f32 (tg, NULL, 0), NULL);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "2x3");
  n = tg_node (tg, NULL, FB_OP_CLIP, 3, 1, x, tg_const_f32 (tg, NULL, 2, F32S (0, 1)), NULL);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "single value");
  n = tg_node (tg, NULL, FB_OP_CLIP, 2, 1, x, tg_scalar_i64 (tg, NULL, 0));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "int64");
  n = tg_node (tg, NULL, FB_OP_CLIP, 1, 1, x);
  tg_float (tg, n, "min", 0);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "'min'");

  /* Dropout-12+: ratio and training_mode are inputs; the mask is bool. */
  n = tg_node (tg, NULL, FB_OP_DROPOUT, 2, 2, x, tg_scalar_f32 (tg, NULL, 0.25f));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "2x3");
  CHECK (OUT (n, 1), BOOL, "2x3");
  n = tg_node (tg, NULL, FB_OP_DROPOUT, 2, 1, x, tg_scalar_f32 (tg, NULL, 1.5f));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "ratio");
  tg_free (tg);

  /* Clip-6 and Dropout-7: attributes; Dropout-7's mask has the data's type. */
  tg = tg_new (7);
  x = tg_input (tg, NULL, F32, "2x3");
  n = tg_node (tg, NULL, FB_OP_CLIP, 1, 1, x);
  tg_float (tg, n, "min", 0);
  tg_float (tg, n, "max", 6);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "2x3");
  n = tg_node (tg, NULL, FB_OP_CLIP, 2, 1, x, tg_scalar_f32 (tg, NULL, 0));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "opset 11");
  n = tg_node (tg, NULL, FB_OP_DROPOUT, 1, 2, x);
  tg_float (tg, n, "ratio", 0.1f);
  INFER_OK (tg, n);
  CHECK (OUT (n, 1), F32, "2x3");
  tg_free (tg);

  tg = tg_new (10);
  n = tg_node (tg, NULL, FB_OP_DROPOUT, 1, 2, tg_input (tg, NULL, F32, "2"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 1), BOOL, "2");
  tg_free (tg);
}

/* ---- reductions ---------------------------------------------------------------------------- */

static void
test_reduce_forms (void)
{
  TestGraph *tg = tg_new (13);
  FbValue *x = tg_input (tg, NULL, F32, "Nx4x5");
  FbNode *n;

  /* ReduceSum takes axes as an input from opset 13, ReduceMean only from 18. */
  n = tg_node (tg, NULL, FB_OP_REDUCE_SUM, 2, 1, x, tg_const_i64 (tg, NULL, 1, I64S (-1)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx4x1");
  n = tg_node (tg, NULL, FB_OP_REDUCE_SUM, 2, 1, x, tg_const_i64 (tg, NULL, 2, I64S (1, 2)));
  tg_int (tg, n, "keepdims", 0);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "N");
  n = tg_node (tg, NULL, FB_OP_REDUCE_SUM, 1, 1, x);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x1x1");
  n = tg_node (tg, NULL, FB_OP_REDUCE_SUM, 2, 1, x, tg_const_i64 (tg, NULL, 0, NULL));
  tg_int (tg, n, "noop_with_empty_axes", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx4x5");
  /* Axes known only at run time: keepdims keeps the rank, else its length gives the rank. */
  n = tg_node (tg, NULL, FB_OP_REDUCE_SUM, 2, 1, x, tg_input (tg, NULL, I64, "2"));
  tg_int (tg, n, "keepdims", 0);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "?");
  n = tg_node (tg, NULL, FB_OP_REDUCE_MEAN, 1, 1, x);
  tg_ints (tg, n, "axes", 1, I64S (1));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx1x5");
  n = tg_node (tg, NULL, FB_OP_REDUCE_MEAN, 2, 1, x, tg_const_i64 (tg, NULL, 1, I64S (1)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "opset 18");
  n = tg_node (tg, NULL, FB_OP_REDUCE_SUM, 1, 1, x);
  tg_ints (tg, n, "axes", 1, I64S (1));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "'axes'");
  n = tg_node (tg, NULL, FB_OP_REDUCE_MAX, 1, 1, x);
  tg_ints (tg, n, "axes", 2, I64S (1, -2));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "twice");
  tg_free (tg);

  tg = tg_new (18);
  x = tg_input (tg, NULL, F32, "2x4x5");
  n = tg_node (tg, NULL, FB_OP_REDUCE_L2, 2, 1, x, tg_const_i64 (tg, NULL, 1, I64S (0)));
  tg_int (tg, n, "keepdims", 0);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "4x5");
  n = tg_node (tg, NULL, FB_OP_REDUCE_PROD, 2, 1, x, NULL);
  tg_int (tg, n, "noop_with_empty_axes", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "2x4x5");
  tg_free (tg);
}

static void
test_argmax_softmax_topk_cumsum (void)
{
  TestGraph *tg = tg_new (13);
  FbValue *x = tg_input (tg, NULL, F32, "Nx10");
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_ARGMAX, 1, 1, x);
  tg_int (tg, n, "axis", 1);
  tg_int (tg, n, "select_last_index", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "Nx1");
  n = tg_node (tg, NULL, FB_OP_ARGMAX, 1, 1, x);
  tg_int (tg, n, "keepdims", 0);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "10");
  n = tg_node (tg, NULL, FB_OP_SOFTMAX, 1, 1, x);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx10");
  n = tg_node (tg, NULL, FB_OP_LOG_SOFTMAX, 1, 1, x);
  tg_int (tg, n, "axis", 2);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "axis 2");
  n = tg_node (tg, NULL, FB_OP_TOPK, 2, 2, x, tg_const_i64 (tg, NULL, 1, I64S (3)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx3");
  CHECK (OUT (n, 1), I64, "Nx3");
  n = tg_node (tg, NULL, FB_OP_TOPK, 2, 2, x, tg_const_i64 (tg, NULL, 1, I64S (11)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "larger");
  n = tg_node (tg, NULL, FB_OP_TOPK, 2, 2, x, tg_input (tg, NULL, I64, "1"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx?");
  n = tg_node (tg, NULL, FB_OP_CUMSUM, 2, 1, x, tg_scalar_i64 (tg, NULL, -1));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx10");
  n = tg_node (tg, NULL, FB_OP_CUMSUM, 2, 1, x, tg_scalar_i64 (tg, NULL, 2));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "axis");
  tg_free (tg);

  /* TopK-1: k is an attribute. */
  tg = tg_new (9);
  n = tg_node (tg, NULL, FB_OP_TOPK, 1, 2, tg_input (tg, NULL, F32, "4x6"));
  tg_int (tg, n, "k", 2);
  tg_int (tg, n, "axis", 0);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "2x6");
  CHECK (OUT (n, 1), I64, "2x6");
  tg_free (tg);
}

/* ---- reshapes ------------------------------------------------------------------------------ */

static void
test_reshape (void)
{
  TestGraph *tg = tg_new (14);
  FbValue *x = tg_input (tg, NULL, F32, "batchx3x4");
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, x, tg_const_i64 (tg, NULL, 2, I64S (0, -1)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "batchx12");
  /* -1 absorbs the symbolic batch when everything else cancels. */
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, x, tg_const_i64 (tg, NULL, 3, I64S (-1, 2, 6)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "batchx2x6");
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, tg_input (tg, NULL, F32, "2x3x4"),
               tg_const_i64 (tg, NULL, 2, I64S (-1, 8)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "3x8");
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, tg_input (tg, NULL, F32, "2x3x4"),
               tg_const_i64 (tg, NULL, 2, I64S (5, -1)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "cannot reshape");
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, tg_input (tg, NULL, F32, "2x3x4"),
               tg_const_i64 (tg, NULL, 2, I64S (5, 5)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "cannot reshape");
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, x, tg_const_i64 (tg, NULL, 2, I64S (-1, -1)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "-1");
  /* allowzero=1: 0 is a real zero extent. */
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, tg_input (tg, NULL, F32, "0x4"),
               tg_const_i64 (tg, NULL, 2, I64S (4, 0)));
  tg_int (tg, n, "allowzero", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "4x0");
  /* A shape computed at run time: its length still gives the rank. */
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, x, tg_input (tg, NULL, I64, "3"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "?x?x?");
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, x, tg_input (tg, NULL, I64, "?"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "*");
  tg_free (tg);

  tg = tg_new (13);
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, tg_input (tg, NULL, F32, "4"),
               tg_const_i64 (tg, NULL, 1, I64S (4)));
  tg_int (tg, n, "allowzero", 1);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "allowzero");
  tg_free (tg);
}

static void
test_flatten_squeeze_unsqueeze (void)
{
  TestGraph *tg = tg_new (13);
  FbValue *x = tg_input (tg, NULL, F32, "Nx3x1x5");
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_FLATTEN, 1, 1, x);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx15");
  n = tg_node (tg, NULL, FB_OP_FLATTEN, 1, 1, x);
  tg_int (tg, n, "axis", 0);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x?");
  n = tg_node (tg, NULL, FB_OP_FLATTEN, 1, 1, x);
  tg_int (tg, n, "axis", -2);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "?x5");
  n = tg_node (tg, NULL, FB_OP_FLATTEN, 1, 1, x);
  tg_int (tg, n, "axis", 5);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "axis 5");

  /* Opset 13: axes is an input. */
  n = tg_node (tg, NULL, FB_OP_SQUEEZE, 2, 1, x, tg_const_i64 (tg, NULL, 1, I64S (2)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx3x5");
  n = tg_node (tg, NULL, FB_OP_SQUEEZE, 2, 1, x, tg_const_i64 (tg, NULL, 1, I64S (1)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "extent 3");
  n = tg_node (tg, NULL, FB_OP_SQUEEZE, 1, 1, tg_input (tg, NULL, F32, "1x3x1"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "3");
  /* Without axes, an unknown extent might be 1: the rank is then unknown. */
  n = tg_node (tg, NULL, FB_OP_SQUEEZE, 1, 1, x);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "*");
  n = tg_node (tg, NULL, FB_OP_UNSQUEEZE, 2, 1, x, tg_const_i64 (tg, NULL, 2, I64S (0, -1)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1xNx3x1x5x1");
  n = tg_node (tg, NULL, FB_OP_UNSQUEEZE, 2, 1, x, tg_const_i64 (tg, NULL, 2, I64S (1, 1)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "twice");
  n = tg_node (tg, NULL, FB_OP_UNSQUEEZE, 1, 1, x);
  tg_ints (tg, n, "axes", 1, I64S (0));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "'axes'");
  tg_free (tg);

  /* Opset 11: axes is an attribute. */
  tg = tg_new (11);
  x = tg_input (tg, NULL, F32, "Nx3x1x5");
  n = tg_node (tg, NULL, FB_OP_SQUEEZE, 1, 1, x);
  tg_ints (tg, n, "axes", 1, I64S (-2));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx3x5");
  n = tg_node (tg, NULL, FB_OP_UNSQUEEZE, 1, 1, x);
  tg_ints (tg, n, "axes", 1, I64S (1));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx1x3x1x5");
  n = tg_node (tg, NULL, FB_OP_UNSQUEEZE, 2, 1, x, tg_const_i64 (tg, NULL, 1, I64S (0)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "opset 13");
  tg_free (tg);
}

/* ---- sources and shape readers -------------------------------------------------------------- */

static void
test_sources (void)
{
  TestGraph *tg = tg_new (15);
  g_autoptr(FbTensor) one = fb_tensor_new (FB_DTYPE_INT32, 1, I64S (1), NULL);
  FbValue *x = tg_input (tg, NULL, F32, "Nx3x224x224");
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_CONSTANT, 0, 1);
  tg_ints (tg, n, "value_ints", 3, I64S (1, 2, 3));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "3");
  n = tg_node (tg, NULL, FB_OP_CONSTANT, 0, 1);
  tg_float (tg, n, "value_float", 1.5f);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "");
  n = tg_node (tg, NULL, FB_OP_CONSTANT, 0, 1);
  tg_str (tg, n, "value_string", "hi");
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_UNSUPPORTED, "value_string");

  n = tg_node (tg, NULL, FB_OP_CONSTANT_OF_SHAPE, 1, 1, tg_const_i64 (tg, NULL, 2, I64S (2, 5)));
  tg_tensor_attr (tg, n, "value", one);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I32, "2x5");
  n = tg_node (tg, NULL, FB_OP_CONSTANT_OF_SHAPE, 1, 1, tg_input (tg, NULL, I64, "3"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "?x?x?");
  n = tg_node (tg, NULL, FB_OP_CONSTANT_OF_SHAPE, 1, 1, tg_const_i64 (tg, NULL, 1, I64S (-2)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "-2");

  n = tg_node (tg, NULL, FB_OP_RANGE, 3, 1, tg_scalar_i64 (tg, NULL, 10), tg_scalar_i64 (tg, NULL, 1),
               tg_scalar_i64 (tg, NULL, -3));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "3");
  n = tg_node (tg, NULL, FB_OP_RANGE, 3, 1, tg_scalar_f32 (tg, NULL, 0), tg_scalar_f32 (tg, NULL, 1),
               tg_scalar_f32 (tg, NULL, 0.3f));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "4");
  n = tg_node (tg, NULL, FB_OP_RANGE, 3, 1, tg_scalar_i64 (tg, NULL, 0), tg_scalar_i64 (tg, NULL, 5),
               tg_scalar_i64 (tg, NULL, 0));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "delta");
  n = tg_node (tg, NULL, FB_OP_RANGE, 3, 1, tg_scalar_i64 (tg, NULL, G_MININT64),
               tg_scalar_i64 (tg, NULL, G_MAXINT64), tg_scalar_i64 (tg, NULL, 1));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "overflows");
  n = tg_node (tg, NULL, FB_OP_RANGE, 3, 1, tg_input (tg, NULL, I64, ""), tg_scalar_i64 (tg, NULL, 5),
               tg_scalar_i64 (tg, NULL, 1));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "?");

  /* Shape, with start and end from opset 15. */
  n = tg_node (tg, NULL, FB_OP_SHAPE, 1, 1, x);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "4");
  n = tg_node (tg, NULL, FB_OP_SHAPE, 1, 1, x);
  tg_int (tg, n, "start", -2);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "2");
  n = tg_node (tg, NULL, FB_OP_SHAPE, 1, 1, x);
  tg_int (tg, n, "start", 1);
  tg_int (tg, n, "end", -5);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "0");
  n = tg_node (tg, NULL, FB_OP_SIZE, 1, 1, x);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), I64, "");
  tg_free (tg);

  tg = tg_new (14);
  n = tg_node (tg, NULL, FB_OP_SHAPE, 1, 1, tg_input (tg, NULL, F32, "2x3"));
  tg_int (tg, n, "start", 1);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "'start'");
  tg_free (tg);
}

/* ---- shapes computed by the graph --------------------------------------------------------- */

static FbValue *
unsqueeze0 (TestGraph *tg, FbValue *v)
{
  return tg_node (tg, NULL, FB_OP_UNSQUEEZE, 2, 1, v, tg_const_i64 (tg, NULL, 1, I64S (0)))->outputs[0];
}

static void
test_shape_arithmetic (void)
{
  TestGraph *tg = tg_new (17);
  FbValue *x = tg_input (tg, NULL, F32, "batchxseqx64");
  FbValue *shape, *batch, *seq, *cat;
  g_autoptr(GError) error = NULL;
  g_autoptr(FbTensor) one = fb_tensor_new_scalar_i64 (1);
  FbNode *n, *reshape, *cos, *range, *expand, *mul, *where, *slice, *flat;

  /* The exporters' idiom: Shape, Gather an extent, Unsqueeze, Concat, Reshape. */
  shape = tg_node (tg, NULL, FB_OP_SHAPE, 1, 1, x)->outputs[0];
  batch = tg_node (tg, NULL, FB_OP_GATHER, 2, 1, shape, tg_scalar_i64 (tg, NULL, 0))->outputs[0];
  seq = tg_node (tg, NULL, FB_OP_GATHER, 2, 1, shape, tg_scalar_i64 (tg, NULL, -2))->outputs[0];
  cat = tg_node (tg, NULL, FB_OP_CONCAT, 3, 1, unsqueeze0 (tg, batch), unsqueeze0 (tg, seq),
                 tg_const_i64 (tg, NULL, 2, I64S (2, -1)))->outputs[0];
  tg_int (tg, cat->producer, "axis", 0);
  reshape = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, x, cat);
  cos = tg_node (tg, NULL, FB_OP_CONSTANT_OF_SHAPE, 1, 1,
                 tg_node (tg, NULL, FB_OP_SLICE, 3, 1, shape, tg_const_i64 (tg, NULL, 1, I64S (0)),
                          tg_const_i64 (tg, NULL, 1, I64S (-1)))->outputs[0]);
  range = tg_node (tg, NULL, FB_OP_RANGE, 3, 1, tg_scalar_i64 (tg, NULL, 0), seq, tg_scalar_i64 (tg, NULL, 1));
  expand = tg_node (tg, NULL, FB_OP_EXPAND, 2, 1, tg_input (tg, NULL, F32, "1x1x64"), shape);
  /* batch * seq is a number nobody named: unknown, but the rank still follows. */
  mul = tg_node (tg, NULL, FB_OP_MUL, 2, 1, batch, seq);
  flat = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, x,
                  tg_node (tg, NULL, FB_OP_CONCAT, 2, 1, unsqueeze0 (tg, OUT (mul, 0)),
                           tg_const_i64 (tg, NULL, 1, I64S (64)))->outputs[0]);
  tg_int (tg, OUT (flat, 0)->producer->inputs[1]->producer, "axis", 0);
  /* torch's expand: Where (Equal (shape, -1), ones, shape). */
  {
    FbValue *want = tg_const_i64 (tg, NULL, 2, I64S (3, -1));
    FbNode *ones = tg_node (tg, NULL, FB_OP_CONSTANT_OF_SHAPE, 1, 1, tg_const_i64 (tg, NULL, 1, I64S (2)));
    tg_tensor_attr (tg, ones, "value", one);
    where = tg_node (tg, NULL, FB_OP_WHERE, 3, 1,
                     tg_node (tg, NULL, FB_OP_EQUAL, 2, 1, want, tg_scalar_i64 (tg, NULL, -1))->outputs[0],
                     OUT (ones, 0), want);
    slice = tg_node (tg, NULL, FB_OP_EXPAND, 2, 1, tg_input (tg, NULL, F32, "1x5"), OUT (where, 0));
  }
  g_assert_true (fb_infer_graph (tg->graph, &error));
  g_assert_no_error (error);
  CHECK (OUT (reshape, 0), F32, "batchxseqx2x32");
  CHECK (OUT (cos, 0), F32, "batchxseq");
  CHECK (OUT (range, 0), I64, "seq");
  CHECK (OUT (expand, 0), F32, "batchxseqx64");
  CHECK (OUT (flat, 0), F32, "?x64");
  CHECK (OUT (slice, 0), F32, "3x5");

  /* Fully known numbers act as constants everywhere, here for Tile. */
  x = tg_input (tg, NULL, F32, "2x3");
  n = tg_node (tg, NULL, FB_OP_TILE, 2, 1, x, tg_node (tg, NULL, FB_OP_SHAPE, 1, 1, x)->outputs[0]);
  INFER_OK (tg, OUT (n, 0)->producer->inputs[1]->producer);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "4x9");
  tg_free (tg);
}

/* ---- value_info, unknown operators, pinning ------------------------------------------------ */

static void
test_value_info_preference (void)
{
  TestGraph *tg = tg_new (17);
  FbShape declared;
  FbNode *n;

  /* The file knows the symbolic batch that a run-time shape hides from inference. */
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, tg_input (tg, NULL, F32, "?x12"),
               tg_input (tg, NULL, I64, "3"));
  declared = tg_shape ("batchx?x4");
  OUT (n, 0)->shape = declared;
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "batchx?x4");
  /* Inference fills in what the declaration lacks. */
  n = tg_node (tg, NULL, FB_OP_ADD, 2, 1, tg_input (tg, NULL, F32, "2x3"), tg_input (tg, NULL, F32, "2x3"));
  declared = tg_shape ("?x3");
  OUT (n, 0)->shape = declared;
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "2x3");
  /* A declaration that contradicts inference is an error naming the node. */
  n = tg_node (tg, NULL, FB_OP_ADD, 2, 1, tg_input (tg, NULL, F32, "2x3"), tg_input (tg, NULL, F32, "2x3"));
  declared = tg_shape ("2x4");
  OUT (n, 0)->shape = declared;
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "declared");
  n = tg_node (tg, NULL, FB_OP_ADD, 2, 1, tg_input (tg, NULL, F32, "2"), tg_input (tg, NULL, F32, "2"));
  OUT (n, 0)->dtype = I64;
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "declared int64");
  /* Unsupported operators leave their outputs as declared, without an error. */
  n = tg_node (tg, NULL, FB_OP_UNKNOWN, 1, 1, tg_input (tg, NULL, F32, "2"));
  declared = tg_shape ("5");
  OUT (n, 0)->shape = declared;
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), FB_DTYPE_UNDEFINED, "5");
  tg_free (tg);
}

static void
test_graph_and_pins (void)
{
  TestGraph *tg = tg_new (17);
  FbValue *ids = tg_input (tg, NULL, F32, "batchxseq");
  FbValue *mask = tg_input (tg, NULL, F32, "batchxseq");
  FbValue *w = tg_weights (tg, NULL, F32, "16x8");
  g_autoptr(GHashTable) pins = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  g_autoptr(GError) error = NULL;
  FbShape *pin = g_new (FbShape, 1);
  FbNode *add, *mm;

  add = tg_node (tg, NULL, FB_OP_ADD, 2, 1, ids, mask);
  mm = tg_node (tg, NULL, FB_OP_MATMUL, 2, 1,
                tg_node (tg, NULL, FB_OP_UNSQUEEZE, 2, 1, OUT (add, 0),
                         tg_const_i64 (tg, NULL, 1, I64S (-1)))->outputs[0], tg_weights (tg, NULL, F32, "1x16"));
  g_assert_true (fb_infer_graph (tg->graph, &error));
  g_assert_no_error (error);
  CHECK (OUT (add, 0), F32, "batchxseq");
  CHECK (OUT (mm, 0), F32, "batchxseqx16");
  (void) w;

  /* Pinning one input fixes the same symbols everywhere; inference then knows the rest. */
  *pin = tg_shape ("1x128");
  g_hash_table_insert (pins, (gpointer) ids->name, pin);
  g_assert_true (fb_graph_pin_inputs (tg->graph, pins, &error));
  g_assert_no_error (error);
  CHECK (ids, F32, "1x128");
  CHECK (mask, F32, "1x128");
  g_assert_true (fb_infer_graph (tg->graph, &error));
  CHECK (OUT (mm, 0), F32, "1x128x16");

  /* Contradictions and unknown names are errors, and change nothing. */
  *pin = tg_shape ("2x128");
  g_assert_false (fb_graph_pin_inputs (tg->graph, pins, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE);
  g_assert_nonnull (strstr (error->message, "fixed at 1"));
  g_clear_error (&error);
  CHECK (ids, F32, "1x128");
  *pin = tg_shape ("1x128x1");
  g_assert_false (fb_graph_pin_inputs (tg->graph, pins, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE);
  g_assert_nonnull (strstr (error->message, "rank"));
  g_clear_error (&error);
  g_hash_table_remove_all (pins);
  g_hash_table_insert (pins, (gpointer) "nope", g_new0 (FbShape, 1));
  g_assert_false (fb_graph_pin_inputs (tg->graph, pins, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "nope"));
  tg_free (tg);
}

/* ---- hostile attributes -------------------------------------------------------------------- */

static void
test_hostile (void)
{
  TestGraph *tg = tg_new (13);
  FbValue *x = tg_input (tg, NULL, F32, "2x3x4");
  FbNode *n;

  /* perm of the wrong length, out of range, repeated */
  n = tg_node (tg, NULL, FB_OP_TRANSPOSE, 1, 1, x);
  tg_ints (tg, n, "perm", 2, I64S (1, 0));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "perm");
  tg_ints (tg, n, "perm", 3, I64S (0, 1, 7));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "permutation");
  tg_ints (tg, n, "perm", 3, I64S (0, 0, 1));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "permutation");
  /* an attribute of the wrong kind */
  n = tg_node (tg, NULL, FB_OP_TRANSPOSE, 1, 1, x);
  tg_int (tg, n, "perm", 1);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "list of integers");
  /* element counts that overflow int64 */
  n = tg_node (tg, NULL, FB_OP_EXPAND, 2, 1, tg_input (tg, NULL, F32, "1x3x4"),
               tg_const_i64 (tg, NULL, 3, I64S (G_MAXINT64 / 2, 3, 4)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "overflows");
  n = tg_node (tg, NULL, FB_OP_TILE, 2, 1, x, tg_const_i64 (tg, NULL, 3, I64S (G_MAXINT64, 1, 1)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "overflows");
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, x,
               tg_const_i64 (tg, NULL, 3, I64S (G_MAXINT64, G_MAXINT64, -1)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "overflows");
  /* a shape of rank beyond what is supported */
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, x,
               tg_const_i64 (tg, NULL, 9, I64S (1, 1, 1, 1, 1, 1, 2, 3, 4)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_UNSUPPORTED, "rank 9");
  n = tg_node (tg, NULL, FB_OP_GATHER, 2, 1, tg_input (tg, NULL, F32, "2x2x2x2x2x2x2x2"),
               tg_input (tg, NULL, I64, "2x2"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_UNSUPPORTED, "rank 9");
  /* a shape input that is not an integer vector */
  n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, x, tg_const_f32 (tg, NULL, 1, F32S (24)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "int64");
  /* a required input left out */
  n = tg_node (tg, NULL, FB_OP_ADD, 2, 1, x, NULL);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_INVALID, "input 1");
  /* an axis far out of range */
  n = tg_node (tg, NULL, FB_OP_SOFTMAX, 1, 1, x);
  tg_int (tg, n, "axis", G_MININT64);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "out of range");
  /* a negative k for TopK */
  n = tg_node (tg, NULL, FB_OP_TOPK, 2, 2, x, tg_const_i64 (tg, NULL, 1, I64S (-1)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "negative");
  /* slice steps at the extremes do not overflow */
  n = tg_node (tg, NULL, FB_OP_SLICE, 5, 1, x, tg_const_i64 (tg, NULL, 1, I64S (G_MAXINT64)),
               tg_const_i64 (tg, NULL, 1, I64S (G_MININT64)), tg_const_i64 (tg, NULL, 1, I64S (2)),
               tg_const_i64 (tg, NULL, 1, I64S (G_MININT64)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "2x3x1");
  /* shape arithmetic built of diamonds (s + s, forty times over) is followed a bounded way */
  {
    FbValue *v = tg_node (tg, NULL, FB_OP_SHAPE, 1, 1, x)->outputs[0];
    INFER_OK (tg, v->producer);
    for (int i = 0; i < 40; i++)
      {
        n = tg_node (tg, NULL, FB_OP_ADD, 2, 1, v, v);
        INFER_OK (tg, n);
        v = OUT (n, 0);
      }
    n = tg_node (tg, NULL, FB_OP_RESHAPE, 2, 1, x, v);
    INFER_OK (tg, n);
    CHECK (OUT (n, 0), F32, "?x?x?");
  }
  /* more outputs than a node can have are ignored safely; fewer are fine */
  n = tg_node (tg, NULL, FB_OP_RELU, 1, 0, x);
  INFER_OK (tg, n);
  tg_free (tg);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/elementwise/unary", test_unary);
  g_test_add_func ("/infer/elementwise/binary", test_binary_broadcast);
  g_test_add_func ("/infer/elementwise/variadic-where-prelu", test_variadic_where_prelu);
  g_test_add_func ("/infer/elementwise/cast-clip-dropout", test_cast_clip_dropout);
  g_test_add_func ("/infer/reduction/reduce", test_reduce_forms);
  g_test_add_func ("/infer/reduction/argmax-softmax-topk-cumsum", test_argmax_softmax_topk_cumsum);
  g_test_add_func ("/infer/reshape/reshape", test_reshape);
  g_test_add_func ("/infer/reshape/flatten-squeeze-unsqueeze", test_flatten_squeeze_unsqueeze);
  g_test_add_func ("/infer/misc/sources", test_sources);
  g_test_add_func ("/infer/shape-arithmetic", test_shape_arithmetic);
  g_test_add_func ("/infer/value-info", test_value_info_preference);
  g_test_add_func ("/infer/graph-and-pins", test_graph_and_pins);
  g_test_add_func ("/infer/hostile", test_hostile);
  return g_test_run ();
}
