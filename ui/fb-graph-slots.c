/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The ONNX names of operator inputs ("W", "shape", "axes"), as the operator specifications give
 * them: what a constant's row in a box is labelled with, because "B" says more inside a Conv
 * than an exporter's "onnx::Conv_123" does. Variadic inputs and operators not listed here have
 * no name; their rows show the value's own name. */
#include "fb-graph-style-private.h"

#define SLOTS(...) { static const char * const names[] = { __VA_ARGS__ }; \
                     return input < G_N_ELEMENTS (names) ? names[input] : NULL; }

const char *
_fb_graph_input_slot_name (FbOpKind op,
                           guint    input)
{
  const FbOpInfo *info = fb_op_info (op);

  switch (op)
    {
    case FB_OP_CONV: case FB_OP_CONV_TRANSPOSE:
      SLOTS ("X", "W", "B")
    case FB_OP_GEMM:
      SLOTS ("A", "B", "C")
    case FB_OP_MATMUL:
      SLOTS ("A", "B")
    case FB_OP_BATCH_NORMALIZATION:
      SLOTS ("X", "scale", "B", "input_mean", "input_var")
    case FB_OP_INSTANCE_NORMALIZATION:
      SLOTS ("input", "scale", "B")
    case FB_OP_LAYER_NORMALIZATION:
      SLOTS ("X", "Scale", "B")
    case FB_OP_CLIP:
      SLOTS ("input", "min", "max")
    case FB_OP_RESHAPE:
      SLOTS ("data", "shape")
    case FB_OP_EXPAND:
      SLOTS ("input", "shape")
    case FB_OP_TILE:
      SLOTS ("input", "repeats")
    case FB_OP_SLICE:
      SLOTS ("data", "starts", "ends", "axes", "steps")
    case FB_OP_PAD:
      SLOTS ("data", "pads", "constant_value", "axes")
    case FB_OP_SQUEEZE: case FB_OP_UNSQUEEZE:
    case FB_OP_REDUCE_L1: case FB_OP_REDUCE_L2: case FB_OP_REDUCE_LOG_SUM:
    case FB_OP_REDUCE_LOG_SUM_EXP: case FB_OP_REDUCE_MAX: case FB_OP_REDUCE_MEAN:
    case FB_OP_REDUCE_MIN: case FB_OP_REDUCE_PROD: case FB_OP_REDUCE_SUM:
    case FB_OP_REDUCE_SUM_SQUARE:
      SLOTS ("data", "axes")
    case FB_OP_GATHER: case FB_OP_GATHER_ELEMENTS: case FB_OP_GATHER_ND:
      SLOTS ("data", "indices")
    case FB_OP_SCATTER: case FB_OP_SCATTER_ELEMENTS: case FB_OP_SCATTER_ND:
      SLOTS ("data", "indices", "updates")
    case FB_OP_RESIZE:
      SLOTS ("X", "roi", "scales", "sizes")
    case FB_OP_UPSAMPLE:
      SLOTS ("X", "scales")
    case FB_OP_SPLIT:
      SLOTS ("input", "split")
    case FB_OP_PRELU:
      SLOTS ("X", "slope")
    case FB_OP_POW: case FB_OP_BIT_SHIFT:
      SLOTS ("X", "Y")
    case FB_OP_WHERE:
      SLOTS ("condition", "X", "Y")
    case FB_OP_RANGE:
      SLOTS ("start", "limit", "delta")
    case FB_OP_TOPK:
      SLOTS ("X", "K")
    case FB_OP_CUMSUM:
      SLOTS ("x", "axis")
    case FB_OP_TRILU:
      SLOTS ("input", "k")
    case FB_OP_ONE_HOT:
      SLOTS ("indices", "depth", "values")
    case FB_OP_DROPOUT:
      SLOTS ("data", "ratio", "training_mode")
    case FB_OP_COMPRESS:
      SLOTS ("input", "condition")
    case FB_OP_GRID_SAMPLE:
      SLOTS ("X", "grid")
    case FB_OP_CONSTANT_OF_SHAPE:
      SLOTS ("input")
    case FB_OP_QUANTIZE_LINEAR:
      SLOTS ("x", "y_scale", "y_zero_point")
    case FB_OP_DEQUANTIZE_LINEAR:
      SLOTS ("x", "x_scale", "x_zero_point")
    case FB_OP_MATMUL_INTEGER:
      SLOTS ("A", "B", "a_zero_point", "b_zero_point")
    case FB_OP_CONV_INTEGER:
      SLOTS ("x", "w", "x_zero_point", "w_zero_point")
    case FB_OP_QLINEAR_MATMUL:
      SLOTS ("a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point")
    case FB_OP_QLINEAR_CONV:
      SLOTS ("x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale",
             "y_zero_point", "B")
    case FB_OP_LSTM:
      SLOTS ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P")
    case FB_OP_GRU: case FB_OP_RNN:
      SLOTS ("X", "W", "R", "B", "sequence_lens", "initial_h")
    case FB_OP_NON_MAX_SUPPRESSION:
      SLOTS ("boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold")
    default:
      break;
    }
  /* The two-input elementwise operators (Add, Mul, Equal, And...) all call theirs A and B. */
  if ((info->flags & FB_OPF_BINARY) && info->max_inputs == 2)
    SLOTS ("A", "B")
  return NULL;
}
