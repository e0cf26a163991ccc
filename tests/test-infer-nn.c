/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shape and dtype inference for the neural-network operators: Conv, ConvTranspose and pools in
 * both layouts, normalizations, MatMul, Gemm, Einsum, GRU, LSTM, Resize and Upsample. */
#include "fb-test-infer.h"

#define F32 FB_DTYPE_FLOAT32
#define F16 FB_DTYPE_FLOAT16
#define I64 FB_DTYPE_INT64

static FbNode *
conv (TestGraph *tg, const char *x, const char *w)
{
  return tg_node (tg, NULL, FB_OP_CONV, 2, 1, tg_input (tg, NULL, F32, x),
                  tg_weights (tg, NULL, F32, w));
}

static void
test_conv (void)
{
  TestGraph *tg = tg_new (13);
  FbNode *n;

  n = conv (tg, "Nx3x224x224", "64x3x7x7");
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_ints (tg, n, "pads", 4, I64S (3, 3, 3, 3));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx64x112x112");
  /* Depthwise: one input channel per group. */
  n = conv (tg, "Nx32x10x10", "32x1x3x3");
  tg_int (tg, n, "group", 32);
  tg_ints (tg, n, "pads", 4, I64S (1, 1, 1, 1));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx32x10x10");
  n = conv (tg, "1x4x10x10", "8x4x3x3");
  tg_ints (tg, n, "dilations", 2, I64S (2, 2));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x8x6x6");
  n = conv (tg, "1x4x11x11", "8x4x3x3");
  tg_str (tg, n, "auto_pad", "SAME_UPPER");
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x8x6x6");
  n = conv (tg, "1x4x11x12", "8x4x3x3");
  tg_str (tg, n, "auto_pad", "SAME_LOWER");
  tg_ints (tg, n, "strides", 2, I64S (3, 3));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x8x4x4");
  n = conv (tg, "1x4x11x11", "8x4x3x3");
  tg_str (tg, n, "auto_pad", "VALID");
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x8x5x5");
  n = conv (tg, "1x2x10", "4x2x3");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x4x8");
  n = conv (tg, "Nx3x?xW", "16x3x3x3");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx16x?x?");
  /* Channels-last, as the layout pass marks it; weights keep ONNX's layout. */
  n = conv (tg, "1x224x224x3", "64x3x7x7");
  tg_str (tg, n, FB_ATTR_LAYOUT, "nhwc");
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_ints (tg, n, "pads", 4, I64S (3, 3, 3, 3));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x112x112x64");
  n = tg_node (tg, NULL, FB_OP_CONV, 3, 1, tg_input (tg, NULL, F32, "1x3x8x8"),
               tg_weights (tg, NULL, F32, "8x3x3x3"), tg_weights (tg, NULL, F32, "8"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x8x6x6");
  tg_free (tg);
}

static void
test_conv_errors (void)
{
  TestGraph *tg = tg_new (13);
  g_autoptr(GError) error = NULL;
  FbNode *n;

  n = conv (tg, "1x3x8x8", "8x4x3x3");
  g_assert_false (fb_infer_node (tg->graph, n, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE);
  g_assert_nonnull (strstr (error->message, "input channels 3 do not match weight channels 4 x group 1"));
  g_assert_nonnull (strstr (error->message, "(Conv)"));
  n = conv (tg, "1x3x2x2", "8x3x3x3");
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "larger");
  n = conv (tg, "1x3x8x8", "8x3x3x3");
  tg_ints (tg, n, "strides", 2, I64S (0, 1));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "strides[0]");
  n = conv (tg, "1x3x8x8", "8x3x3x3");
  tg_ints (tg, n, "pads", 4, I64S (1, -1, 1, 1));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "negative");
  n = conv (tg, "1x3x8x8", "8x3x3x3");
  tg_ints (tg, n, "pads", 2, I64S (1, 1));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "'pads'");
  n = conv (tg, "1x3x8x8", "8x3x3x3");
  tg_ints (tg, n, "kernel_shape", 2, I64S (5, 5));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "kernel_shape");
  n = conv (tg, "1x3x8x8", "8x3x3x3");
  tg_ints (tg, n, "dilations", 2, I64S (G_MAXINT64, 1));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "overflows");
  n = conv (tg, "1x4x8x8", "6x2x3x3");
  tg_int (tg, n, "group", 2);
  INFER_OK (tg, n);
  n = conv (tg, "1x4x8x8", "5x2x3x3");
  tg_int (tg, n, "group", 2);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "groups");
  n = conv (tg, "1x4x8x8", "6x4x3x3");
  tg_int (tg, n, "group", 0);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "group");
  n = conv (tg, "1x3x8x8", "8x3x3");
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "rank");
  n = conv (tg, "1x3x8x8", "8x3x3x3");
  tg_str (tg, n, "auto_pad", "SAME");
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "auto_pad");
  n = tg_node (tg, NULL, FB_OP_CONV, 3, 1, tg_input (tg, NULL, F32, "1x3x8x8"),
               tg_weights (tg, NULL, F32, "8x3x3x3"), tg_weights (tg, NULL, F32, "4"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "bias");
  n = tg_node (tg, NULL, FB_OP_CONV, 2, 1, tg_input (tg, NULL, F32, "1x3x8x8"),
               tg_weights (tg, NULL, F16, "8x3x3x3"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "float16");
  tg_free (tg);
}

static void
test_conv_transpose (void)
{
  TestGraph *tg = tg_new (13);
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_CONV_TRANSPOSE, 2, 1, tg_input (tg, NULL, F32, "Nx8x5x5"),
               tg_weights (tg, NULL, F32, "8x4x3x3"));
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_ints (tg, n, "pads", 4, I64S (1, 1, 1, 1));
  tg_ints (tg, n, "output_padding", 2, I64S (1, 1));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx4x10x10");
  n = tg_node (tg, NULL, FB_OP_CONV_TRANSPOSE, 2, 1, tg_input (tg, NULL, F32, "1x8x5x5"),
               tg_weights (tg, NULL, F32, "8x4x3x3"));
  tg_int (tg, n, "group", 2);
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x8x11x11");
  n = tg_node (tg, NULL, FB_OP_CONV_TRANSPOSE, 2, 1, tg_input (tg, NULL, F32, "1x8x5x5"),
               tg_weights (tg, NULL, F32, "8x4x3x3"));
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_ints (tg, n, "output_shape", 2, I64S (12, 12));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x4x12x12");
  n = tg_node (tg, NULL, FB_OP_CONV_TRANSPOSE, 2, 1, tg_input (tg, NULL, F32, "1x8x5x5"),
               tg_weights (tg, NULL, F32, "8x4x3x3"));
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_str (tg, n, "auto_pad", "SAME_UPPER");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x4x10x10");
  n = tg_node (tg, NULL, FB_OP_CONV_TRANSPOSE, 2, 1, tg_input (tg, NULL, F32, "1x8x5x5"),
               tg_weights (tg, NULL, F32, "6x4x3x3"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "input channels 8");
  n = tg_node (tg, NULL, FB_OP_CONV_TRANSPOSE, 2, 1, tg_input (tg, NULL, F32, "1x8x2x2"),
               tg_weights (tg, NULL, F32, "8x4x3x3"));
  tg_ints (tg, n, "pads", 4, I64S (3, 3, 3, 3));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "pads");
  tg_free (tg);
}

static void
test_pools (void)
{
  TestGraph *tg = tg_new (18);
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_MAX_POOL, 1, 2, tg_input (tg, NULL, F32, "Nx64x112x112"));
  tg_ints (tg, n, "kernel_shape", 2, I64S (3, 3));
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_ints (tg, n, "pads", 4, I64S (1, 1, 1, 1));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx64x56x56");
  CHECK (OUT (n, 1), I64, "Nx64x56x56");
  n = tg_node (tg, NULL, FB_OP_MAX_POOL, 1, 1, tg_input (tg, NULL, F32, "1x1x5x5"));
  tg_ints (tg, n, "kernel_shape", 2, I64S (2, 2));
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_int (tg, n, "ceil_mode", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x1x3x3");
  /* With ceil_mode, a window that would start in the end padding is dropped. */
  n = tg_node (tg, NULL, FB_OP_AVERAGE_POOL, 1, 1, tg_input (tg, NULL, F32, "1x1x4x4"));
  tg_ints (tg, n, "kernel_shape", 2, I64S (2, 2));
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_ints (tg, n, "pads", 4, I64S (0, 0, 1, 1));
  tg_int (tg, n, "ceil_mode", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x1x2x2");
  n = tg_node (tg, NULL, FB_OP_MAX_POOL, 1, 1, tg_input (tg, NULL, F32, "1x112x112x64"));
  tg_str (tg, n, FB_ATTR_LAYOUT, "nhwc");
  tg_ints (tg, n, "kernel_shape", 2, I64S (3, 3));
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_ints (tg, n, "pads", 4, I64S (1, 1, 1, 1));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x56x56x64");
  n = tg_node (tg, NULL, FB_OP_MAX_POOL, 1, 1, tg_input (tg, NULL, F32, "1x1x7x7"));
  tg_ints (tg, n, "kernel_shape", 2, I64S (3, 3));
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_str (tg, n, "auto_pad", "SAME_UPPER");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x1x4x4");
  n = tg_node (tg, NULL, FB_OP_AVERAGE_POOL, 1, 1, tg_input (tg, NULL, F32, "1x1x7x7"));
  tg_ints (tg, n, "kernel_shape", 2, I64S (3, 3));
  tg_ints (tg, n, "strides", 2, I64S (2, 2));
  tg_str (tg, n, "auto_pad", "VALID");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x1x3x3");
  n = tg_node (tg, NULL, FB_OP_MAX_POOL, 1, 1, tg_input (tg, NULL, FB_DTYPE_INT8, "1x1x7x7"));
  tg_ints (tg, n, "kernel_shape", 2, I64S (7, 7));
  tg_ints (tg, n, "dilations", 2, I64S (2, 1));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "larger");
  n = tg_node (tg, NULL, FB_OP_AVERAGE_POOL, 1, 1, tg_input (tg, NULL, F32, "1x1x8x8"));
  tg_ints (tg, n, "kernel_shape", 2, I64S (3, 3));
  tg_ints (tg, n, "dilations", 2, I64S (2, 2));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "dilations");
  n = tg_node (tg, NULL, FB_OP_AVERAGE_POOL, 1, 1, tg_input (tg, NULL, F32, "1x1x8x8"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "kernel_shape");
  n = tg_node (tg, NULL, FB_OP_MAX_POOL, 1, 1, tg_input (tg, NULL, F32, "1x1x8x8"));
  tg_ints (tg, n, "kernel_shape", 2, I64S (0, 3));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "kernel_shape");
  n = tg_node (tg, NULL, FB_OP_GLOBAL_AVERAGE_POOL, 1, 1, tg_input (tg, NULL, F32, "Nx64x7x7"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx64x1x1");
  n = tg_node (tg, NULL, FB_OP_GLOBAL_MAX_POOL, 1, 1, tg_input (tg, NULL, F32, "1x7x7x64"));
  tg_str (tg, n, FB_ATTR_LAYOUT, "nhwc");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x1x1x64");
  n = tg_node (tg, NULL, FB_OP_GLOBAL_MAX_POOL, 1, 1, tg_input (tg, NULL, F32, "1x7"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "rank 3");
  n = tg_node (tg, NULL, FB_OP_GLOBAL_MAX_POOL, 1, 1, tg_input (tg, NULL, F32, "1x7x7"));
  tg_str (tg, n, FB_ATTR_LAYOUT, "chwn");
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "layout");
  tg_free (tg);

  /* Opset 19 gave AveragePool dilations; before 10 no pool had ceil_mode. */
  tg = tg_new (19);
  n = tg_node (tg, NULL, FB_OP_AVERAGE_POOL, 1, 1, tg_input (tg, NULL, F32, "1x1x8x8"));
  tg_ints (tg, n, "kernel_shape", 2, I64S (3, 3));
  tg_ints (tg, n, "dilations", 2, I64S (2, 2));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x1x4x4");
  tg_free (tg);
  tg = tg_new (8);
  n = tg_node (tg, NULL, FB_OP_MAX_POOL, 1, 1, tg_input (tg, NULL, F32, "1x1x8x8"));
  tg_ints (tg, n, "kernel_shape", 2, I64S (2, 2));
  tg_int (tg, n, "ceil_mode", 1);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "ceil_mode");
  tg_free (tg);
}

static void
test_normalization (void)
{
  TestGraph *tg = tg_new (15);
  FbValue *x = tg_input (tg, NULL, F32, "Nx16x8x8");
  FbValue *c16 = tg_weights (tg, NULL, F32, "16");
  FbValue *h16 = tg_weights (tg, NULL, F16, "16");
  FbNode *n;

  /* Opset 15: statistics may have their own type; training outputs are per channel. */
  n = tg_node (tg, NULL, FB_OP_BATCH_NORMALIZATION, 5, 3, x, c16, c16, h16, h16);
  tg_int (tg, n, "training_mode", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx16x8x8");
  CHECK (OUT (n, 1), F16, "16");
  CHECK (OUT (n, 2), F16, "16");
  n = tg_node (tg, NULL, FB_OP_BATCH_NORMALIZATION, 5, 1, x, tg_weights (tg, NULL, F32, "8"), c16, c16, c16);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "16 channels");
  n = tg_node (tg, NULL, FB_OP_INSTANCE_NORMALIZATION, 3, 1, x, c16, c16);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx16x8x8");
  n = tg_node (tg, NULL, FB_OP_INSTANCE_NORMALIZATION, 3, 1, x, c16, tg_weights (tg, NULL, F32, "3"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "B");
  n = tg_node (tg, NULL, FB_OP_LRN, 1, 1, x);
  tg_int (tg, n, "size", 5);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx16x8x8");
  n = tg_node (tg, NULL, FB_OP_LRN, 1, 1, x);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "size");
  tg_free (tg);

  tg = tg_new (14);
  x = tg_input (tg, NULL, F32, "2x4x3");
  c16 = tg_weights (tg, NULL, F32, "4");
  n = tg_node (tg, NULL, FB_OP_BATCH_NORMALIZATION, 5, 1, x, c16, c16, c16,
               tg_weights (tg, NULL, F16, "4"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "float16");
  tg_free (tg);

  /* LayerNormalization: Mean and InvStdDev keep the leading dimensions, in stash_type. */
  tg = tg_new (17);
  x = tg_input (tg, NULL, F16, "Nx10x64");
  n = tg_node (tg, NULL, FB_OP_LAYER_NORMALIZATION, 3, 3, x, tg_weights (tg, NULL, F16, "64"),
               tg_weights (tg, NULL, F16, "64"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F16, "Nx10x64");
  CHECK (OUT (n, 1), F32, "Nx10x1");
  CHECK (OUT (n, 2), F32, "Nx10x1");
  n = tg_node (tg, NULL, FB_OP_LAYER_NORMALIZATION, 2, 2, x, tg_weights (tg, NULL, F16, "10x64"));
  tg_int (tg, n, "axis", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 1), F32, "Nx1x1");
  n = tg_node (tg, NULL, FB_OP_LAYER_NORMALIZATION, 2, 1, x, tg_weights (tg, NULL, F16, "10"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "Scale");
  n = tg_node (tg, NULL, FB_OP_LAYER_NORMALIZATION, 2, 1, x, tg_weights (tg, NULL, F16, "64"));
  tg_int (tg, n, "stash_type", FB_DTYPE_INT64);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "stash_type");
  tg_free (tg);
}

static void
test_matmul_gemm (void)
{
  TestGraph *tg = tg_new (13);
  FbNode *n;

#define MATMUL(a, b) tg_node (tg, NULL, FB_OP_MATMUL, 2, 1, tg_input (tg, NULL, F32, a), \
                              tg_input (tg, NULL, F32, b))
  n = MATMUL ("Nx3x4", "4x5");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx3x5");
  n = MATMUL ("4", "4x5");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "5");
  n = MATMUL ("3x4", "4");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "3");
  n = MATMUL ("4", "4");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "");
  n = MATMUL ("2x1x3x4", "5x4x6");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "2x5x3x6");
  n = MATMUL ("batchxseqx64", "batchx64xseq");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "batchxseqxseq");
  n = MATMUL ("3x4", "5x6");
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "inner");
  n = MATMUL ("", "4");
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "scalars");
#undef MATMUL

  n = tg_node (tg, NULL, FB_OP_GEMM, 3, 1, tg_input (tg, NULL, F32, "Nx4"),
               tg_weights (tg, NULL, F32, "5x4"), tg_weights (tg, NULL, F32, "5"));
  tg_int (tg, n, "transB", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx5");
  n = tg_node (tg, NULL, FB_OP_GEMM, 2, 1, tg_input (tg, NULL, F32, "4x3"),
               tg_weights (tg, NULL, F32, "4x5"));
  tg_int (tg, n, "transA", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "3x5");
  n = tg_node (tg, NULL, FB_OP_GEMM, 3, 1, tg_input (tg, NULL, F32, "3x4"),
               tg_weights (tg, NULL, F32, "4x5"), tg_weights (tg, NULL, F32, "3"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "broadcast");
  n = tg_node (tg, NULL, FB_OP_GEMM, 2, 1, tg_input (tg, NULL, F32, "3x4x1"),
               tg_weights (tg, NULL, F32, "4x5"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "matrices");
  tg_free (tg);

  /* Before opset 11, Gemm's C is required. */
  tg = tg_new (9);
  n = tg_node (tg, NULL, FB_OP_GEMM, 2, 1, tg_input (tg, NULL, F32, "3x4"),
               tg_weights (tg, NULL, F32, "4x5"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_INVALID, "input 2");
  tg_free (tg);
}

static FbNode *
einsum (TestGraph *tg, const char *equation, const char *a, const char *b)
{
  FbNode *n = b ? tg_node (tg, NULL, FB_OP_EINSUM, 2, 1, tg_input (tg, NULL, F32, a),
                           tg_input (tg, NULL, F32, b))
                : tg_node (tg, NULL, FB_OP_EINSUM, 1, 1, tg_input (tg, NULL, F32, a));
  tg_str (tg, n, "equation", equation);
  return n;
}

static void
test_einsum (void)
{
  TestGraph *tg = tg_new (13);
  FbNode *n;

  n = einsum (tg, "ij,jk->ik", "2x3", "3x4");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "2x4");
  n = einsum (tg, "bij,bjk->bik", "Bx2x3", "Bx3x4");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Bx2x4");
  n = einsum (tg, "ij->ji", "2x3", NULL);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "3x2");
  n = einsum (tg, "...ij,...jk->...ik", "7x2x3", "3x4");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "7x2x4");
  n = einsum (tg, "bhqd,bhkd->bhqk", "Bx8x16x64", "Bx8x32x64");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Bx8x16x32");
  n = einsum (tg, "ij, jk", "2x3", "3x4");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "2x4");
  n = einsum (tg, "ij,jk->ik", "2x3", "4x4");
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "label 'j'");
  n = einsum (tg, "ij,jk->iz", "2x3", "3x4");
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "'z'");
  n = einsum (tg, "ij,jk->ik", "2x3x4", "3x4");
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "rank");
  n = einsum (tg, "i.j->ij", "2x3", NULL);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "ellipsis");
  /* Diagonals and sums within one operand; numpy's implicit output leaves a repeated label out. */
  n = einsum (tg, "...ii ->...i", "Bx3x3", NULL);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Bx3");
  n = einsum (tg, "ij->i", "3x4", NULL);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "3");
  n = einsum (tg, "iij", "3x3x2", NULL);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "2");
  n = einsum (tg, "ii->i", "3x4", NULL);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "label 'i'");
  n = einsum (tg, "ij->ii", "3x3", NULL);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "repeats 'i'");
  /* numpy does not sum the dimensions of an ellipsis the output leaves out. */
  n = einsum (tg, "...ij->ij", "2x3x4", NULL);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "ellipsis");
  n = tg_node (tg, NULL, FB_OP_EINSUM, 3, 1, tg_input (tg, NULL, F32, "2"), tg_input (tg, NULL, F32, "2"),
               tg_input (tg, NULL, F32, "2"));
  tg_str (tg, n, "equation", "i,i,i->i");
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_UNSUPPORTED, "3 operands");
  tg_free (tg);
}

static void
test_recurrent (void)
{
  TestGraph *tg = tg_new (14);
  FbValue *x = tg_input (tg, NULL, F32, "5xBx10");
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_GRU, 3, 2, x, tg_weights (tg, NULL, F32, "1x48x10"),
               tg_weights (tg, NULL, F32, "1x48x16"));
  tg_int (tg, n, "hidden_size", 16);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "5x1xBx16");
  CHECK (OUT (n, 1), F32, "1xBx16");
  n = tg_node (tg, NULL, FB_OP_GRU, 3, 2, x, tg_weights (tg, NULL, F32, "2x48x10"),
               tg_weights (tg, NULL, F32, "2x48x16"));
  tg_str (tg, n, "direction", "bidirectional");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "5x2xBx16");
  n = tg_node (tg, NULL, FB_OP_GRU, 3, 2, tg_input (tg, NULL, F32, "Bx5x10"),
               tg_weights (tg, NULL, F32, "1x48x10"), tg_weights (tg, NULL, F32, "1x48x16"));
  tg_int (tg, n, "layout", 1);
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Bx5x1x16");
  CHECK (OUT (n, 1), F32, "Bx1x16");
  n = tg_node (tg, NULL, FB_OP_GRU, 3, 2, x, tg_weights (tg, NULL, F32, "1x48x12"),
               tg_weights (tg, NULL, F32, "1x48x16"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "W has shape");
  n = tg_node (tg, NULL, FB_OP_GRU, 3, 2, x, tg_weights (tg, NULL, F32, "1x48x10"),
               tg_weights (tg, NULL, F32, "1x48x16"));
  tg_str (tg, n, "direction", "sideways");
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "direction");

  /* LSTM without hidden_size: R tells it. */
  n = tg_node (tg, NULL, FB_OP_LSTM, 6, 3, x, tg_weights (tg, NULL, F32, "1x64x10"),
               tg_weights (tg, NULL, F32, "1x64x16"), tg_weights (tg, NULL, F32, "1x128"), NULL,
               tg_input (tg, NULL, F32, "1xBx16"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "5x1xBx16");
  CHECK (OUT (n, 1), F32, "1xBx16");
  CHECK (OUT (n, 2), F32, "1xBx16");
  n = tg_node (tg, NULL, FB_OP_LSTM, 4, 3, x, tg_weights (tg, NULL, F32, "1x64x10"),
               tg_weights (tg, NULL, F32, "1x64x16"), tg_weights (tg, NULL, F32, "1x64"));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "B has shape");
  tg_free (tg);

  tg = tg_new (7);
  n = tg_node (tg, NULL, FB_OP_LSTM, 3, 1, tg_input (tg, NULL, F32, "5x2x10"),
               tg_weights (tg, NULL, F32, "1x64x10"), tg_weights (tg, NULL, F32, "1x64x16"));
  tg_int (tg, n, "layout", 1);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "layout");
  tg_free (tg);
}

static void
test_resize (void)
{
  TestGraph *tg = tg_new (13);
  FbValue *x = tg_input (tg, NULL, F32, "Nx3x10x10");
  FbNode *n;

  n = tg_node (tg, NULL, FB_OP_RESIZE, 3, 1, x, NULL, tg_const_f32 (tg, NULL, 4, F32S (1, 1, 2, 1.5f)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx3x20x15");
  n = tg_node (tg, NULL, FB_OP_RESIZE, 4, 1, x, NULL, NULL, tg_const_i64 (tg, NULL, 4, I64S (1, 3, 7, 8)));
  tg_str (tg, n, "mode", "cubic");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x3x7x8");
  n = tg_node (tg, NULL, FB_OP_RESIZE, 4, 1, x, NULL, tg_const_f32 (tg, NULL, 4, F32S (1, 1, 2, 2)),
               tg_const_i64 (tg, NULL, 4, I64S (1, 3, 7, 8)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "only one");
  n = tg_node (tg, NULL, FB_OP_RESIZE, 1, 1, x);
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "must be given");
  n = tg_node (tg, NULL, FB_OP_RESIZE, 3, 1, x, NULL, tg_const_f32 (tg, NULL, 4, F32S (1, 1, -2, 2)));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "positive");
  n = tg_node (tg, NULL, FB_OP_RESIZE, 3, 1, x, NULL, tg_input (tg, NULL, F32, "4"));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "?x?x?x?");
  tg_free (tg);

  /* Opset 10: X and scales only. Opset 11: scales required, empty when sizes are used. */
  tg = tg_new (10);
  n = tg_node (tg, NULL, FB_OP_RESIZE, 2, 1, tg_input (tg, NULL, F32, "1x1x10x4"),
               tg_const_f32 (tg, NULL, 4, F32S (1, 1, 1.5f, 0.5f)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x1x15x2");
  tg_free (tg);
  tg = tg_new (11);
  n = tg_node (tg, NULL, FB_OP_RESIZE, 4, 1, tg_input (tg, NULL, F32, "1x1x10x4"),
               tg_const_f32 (tg, NULL, 0, NULL), tg_const_f32 (tg, NULL, 0, NULL),
               tg_const_i64 (tg, NULL, 4, I64S (1, 1, 5, 5)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x1x5x5");
  tg_free (tg);

  /* Opset 18: axes and keep_aspect_ratio_policy. */
  tg = tg_new (18);
  x = tg_input (tg, NULL, F32, "1x3x10x20");
  n = tg_node (tg, NULL, FB_OP_RESIZE, 4, 1, x, NULL, NULL, tg_const_i64 (tg, NULL, 2, I64S (20, 30)));
  tg_ints (tg, n, "axes", 2, I64S (2, 3));
  tg_str (tg, n, "keep_aspect_ratio_policy", "not_larger");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x3x15x30");
  n = tg_node (tg, NULL, FB_OP_RESIZE, 4, 1, x, NULL, NULL, tg_const_i64 (tg, NULL, 2, I64S (20, 30)));
  tg_ints (tg, n, "axes", 2, I64S (-2, -1));
  tg_str (tg, n, "keep_aspect_ratio_policy", "not_smaller");
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x3x20x40");
  n = tg_node (tg, NULL, FB_OP_RESIZE, 3, 1, x, NULL, tg_const_f32 (tg, NULL, 1, F32S (2)));
  tg_ints (tg, n, "axes", 1, I64S (3));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x3x10x40");
  n = tg_node (tg, NULL, FB_OP_RESIZE, 3, 1, x, NULL, tg_const_f32 (tg, NULL, 2, F32S (2, 2)));
  tg_ints (tg, n, "axes", 1, I64S (3));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "entries");
  tg_free (tg);

  /* Upsample-7 (scales attribute) and -9 (scales input). */
  tg = tg_new (7);
  n = tg_node (tg, NULL, FB_OP_UPSAMPLE, 1, 1, tg_input (tg, NULL, F32, "Nx3x4x4"));
  tg_floats (tg, n, "scales", 4, F32S (1, 1, 2, 3));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "Nx3x8x12");
  n = tg_node (tg, NULL, FB_OP_UPSAMPLE, 1, 1, tg_input (tg, NULL, F32, "Nx3x4x4"));
  tg_floats (tg, n, "scales", 4, F32S (1, 1, 0.5f, 1));
  INFER_FAILS (tg, n, FB_GRAPH_ERROR_SHAPE, "below 1");
  tg_free (tg);
  tg = tg_new (9);
  n = tg_node (tg, NULL, FB_OP_UPSAMPLE, 2, 1, tg_input (tg, NULL, F32, "1x3x4x4"),
               tg_const_f32 (tg, NULL, 4, F32S (1, 1, 2, 2)));
  INFER_OK (tg, n);
  CHECK (OUT (n, 0), F32, "1x3x8x8");
  tg_free (tg);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/nn/conv", test_conv);
  g_test_add_func ("/infer/nn/conv-errors", test_conv_errors);
  g_test_add_func ("/infer/nn/conv-transpose", test_conv_transpose);
  g_test_add_func ("/infer/nn/pools", test_pools);
  g_test_add_func ("/infer/nn/normalization", test_normalization);
  g_test_add_func ("/infer/nn/matmul-gemm", test_matmul_gemm);
  g_test_add_func ("/infer/nn/einsum", test_einsum);
  g_test_add_func ("/infer/nn/recurrent", test_recurrent);
  g_test_add_func ("/infer/nn/resize", test_resize);
  return g_test_run ();
}
