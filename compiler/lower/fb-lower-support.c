/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the CPU target compiles: the answer to the backend's supports_op, with a reason that
 * names what is missing, so that "fusebench run --target cpu" can say it plainly. */
#include "fb-lower-private.h"

#include <stdarg.h>

static gboolean
no (char **reason, const char *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
no (char **reason, const char *format, ...)
{
  if (reason)
    {
      va_list ap;
      va_start (ap, format);
      *reason = g_strdup_vprintf (format, ap);
      va_end (ap);
    }
  return FALSE;
}

static gboolean
dtype_ok (FbDType t)
{
  switch (t)
    {
    case FB_DTYPE_FLOAT32: case FB_DTYPE_FLOAT64: case FB_DTYPE_FLOAT16:
    case FB_DTYPE_INT8: case FB_DTYPE_UINT8:
    case FB_DTYPE_INT16: case FB_DTYPE_UINT16: case FB_DTYPE_INT32: case FB_DTYPE_UINT32:
    case FB_DTYPE_INT64: case FB_DTYPE_UINT64: case FB_DTYPE_BOOL:
      return TRUE;
    default:
      return FALSE;
    }
}

static FbDType
value_dtype (const FbValue *v)
{
  return v->constant ? v->constant->dtype : v->dtype;
}

static gboolean
output_used (const FbNode *node, guint i)
{
  return i < node->n_outputs && node->outputs[i] != NULL;
}

static gboolean
dtypes_supported (const FbNode *node, char **reason)
{
  for (guint i = 0; i < node->n_inputs; i++)
    {
      FbValue *v = node->inputs[i];
      FbDType t = v ? value_dtype (v) : FB_DTYPE_FLOAT32;
      if (!dtype_ok (t))
        return no (reason, "input '%s' has element type %s, which the CPU target does not "
                   "compute", v->name, fb_dtype_name (t));
    }
  for (guint i = 0; i < node->n_outputs; i++)
    if (node->outputs[i] && !dtype_ok (node->outputs[i]->dtype))
      return no (reason, "output '%s' has element type %s, which the CPU target does not "
                 "compute", node->outputs[i]->name, fb_dtype_name (node->outputs[i]->dtype));
  return TRUE;
}

static gboolean
non_constant (const FbNode *node, guint i)
{
  const FbValue *v = fb_node_input (node, i);
  return v != NULL && v->constant == NULL;
}

/* An operand a kernel would need at compile time (axes, pads, sizes, k) that only the run
 * gives. */
static gboolean
run_time_operand (const FbNode *node)
{
  switch (node->op)
    {
    case FB_OP_RESIZE: case FB_OP_UPSAMPLE: case FB_OP_SPLIT: case FB_OP_SLICE: case FB_OP_TILE:
      for (guint i = 1; i < node->n_inputs; i++)
        if (non_constant (node, i))
          return TRUE;
      return FALSE;
    case FB_OP_PAD:
      return non_constant (node, 1) || non_constant (node, 3);
    case FB_OP_TOPK: case FB_OP_CUMSUM: case FB_OP_TRILU:
    case FB_OP_REDUCE_L2: case FB_OP_REDUCE_MAX: case FB_OP_REDUCE_MEAN: case FB_OP_REDUCE_MIN:
    case FB_OP_REDUCE_PROD: case FB_OP_REDUCE_SUM:
      return non_constant (node, 1);
    case FB_OP_DROPOUT:
      /* The mask (all ones at inference) comes from the interpreter. */
      return output_used (node, 1);
    case FB_OP_MAX_UNPOOL:
      return non_constant (node, 2);
    /* Transform lengths, frame steps and band counts size the loops. */
    case FB_OP_DFT:
      return non_constant (node, 1) || non_constant (node, 2);
    case FB_OP_STFT:
      return non_constant (node, 1) || non_constant (node, 3);
    case FB_OP_MEL_WEIGHT_MATRIX:
      return non_constant (node, 0) || non_constant (node, 1);
    default:
      return FALSE;
    }
}

gboolean
_fb_lower_on_host (const FbNode *node)
{
  /* Sequences and optionals are host values: what makes or reads them runs on the host. */
  if (fb_op_has_flag (node->op, FB_OPF_CONTROL | FB_OPF_SEQUENCE) ||
      fb_node_has_containers (node))
    return TRUE;
  if (node->op == FB_OP_UNKNOWN || node->op == FB_OP_FUSED)
    return FALSE;
  if (_fb_lower_runs_on_host (node))
    return TRUE;
  for (guint i = 0; i < node->n_outputs; i++)
    if (node->outputs[i] && !fb_shape_is_static (&node->outputs[i]->shape))
      return TRUE;
  for (guint i = 0; i < node->n_inputs; i++)
    if (non_constant (node, i) && !fb_shape_is_static (&node->inputs[i]->shape))
      return TRUE;
  return run_time_operand (node);
}

static gboolean
batchnorm_supported (const FbNode *node, char **reason)
{
  if (node->inputs[0]->shape.rank < 2)
    return no (reason, "BatchNormalization needs a channel dimension");
  if (!fb_dtype_is_float (node->inputs[0]->dtype))
    return no (reason, "BatchNormalization needs a float input");
  for (guint i = 1; i < 5; i++)
    if (fb_node_input (node, i) == NULL)
      return no (reason, "BatchNormalization needs its input %u", i);
  for (guint i = 3; i < node->n_outputs; i++)
    if (output_used (node, i))
      return no (reason, "the saved mean and variance outputs (before opset 14) are not "
                 "computed");
  /* spatial=0 (before opset 9): parameters per element, which only inference takes. */
  gboolean statistics = _fb_lower_bn_training (node) || output_used (node, 1) ||
                        output_used (node, 2);
  if (statistics && node->opset > 0 && node->opset < 9 && fb_node_attr_int (node, "spatial", 1) == 0)
    return no (reason, "BatchNormalization's statistics outputs with spatial=0 are not "
               "computed");
  return TRUE;
}

/* ConvInteger and QLinearConv: integer operands, the zero points and scales the ONNX spec
 * allows (per tensor for x, per tensor or per output channel for w). */
static gboolean
integer_conv_supported (const FbNode *node, char **reason)
{
  gboolean q = node->op == FB_OP_QLINEAR_CONV;
  const FbValue *x = node->inputs[0], *w = node->inputs[q ? 3 : 1];
  const FbValue *zx = fb_node_input (node, 2), *zw = fb_node_input (node, q ? 5 : 3);
  int rx, rw;
  int64_t dx[FB_MAX_RANK], dw[FB_MAX_RANK];
  if (!_fb_lower_dims (x, &rx, dx) || !_fb_lower_dims (w, &rw, dw) || rx < 3 || rw != rx)
    return no (reason, "%s needs an input of rank 3 or more and weights of the same rank",
               fb_op_name (node->op));
  if (!fb_dtype_is_integer (value_dtype (x)) || !fb_dtype_is_integer (value_dtype (w)))
    return no (reason, "%s needs integer x and w", fb_op_name (node->op));
  int64_t co = dw[0];
  if (zx && _fb_lower_numel (zx) != 1)
    return no (reason, "x_zero_point must be a scalar");
  if (zw && _fb_lower_numel (zw) != 1 && _fb_lower_numel (zw) != co)
    return no (reason, "w_zero_point must be a scalar or hold one value per output channel");
  if (!q)
    return TRUE;
  if (_fb_lower_numel (node->inputs[1]) != 1 || _fb_lower_numel (node->inputs[6]) != 1 ||
      _fb_lower_numel (node->inputs[7]) != 1)
    return no (reason, "x_scale, y_scale and y_zero_point must be scalars");
  int64_t nws = _fb_lower_numel (node->inputs[4]);
  if (nws != 1 && nws != co)
    return no (reason, "w_scale must be a scalar or hold one value per output channel");
  FbDType yz = value_dtype (node->inputs[7]);
  if (yz != FB_DTYPE_INT8 && yz != FB_DTYPE_UINT8)
    return no (reason, "y_zero_point must be int8 or uint8, not %s", fb_dtype_name (yz));
  return TRUE;
}

static gboolean
supports_member (const FbNode *node, char **reason)
{
  if (node->op == FB_OP_UNKNOWN)
    return no (reason, "operator %s%s%s is unknown to this project",
               node->domain && *node->domain ? node->domain : "",
               node->domain && *node->domain ? "." : "", node->op_type);
  if (!dtypes_supported (node, reason))
    return FALSE;
  switch (node->op)
    {
    case FB_OP_CONV_TRANSPOSE:
      if (!fb_dtype_is_float (node->inputs[0]->dtype) ||
          node->inputs[0]->shape.rank < 3 || node->inputs[0]->shape.rank > 5 ||
          (_fb_lower_is_nhwc (node) && node->inputs[0]->shape.rank != 4))
        return no (reason, "ConvTranspose runs on float NCHW inputs of 1 to 3 spatial dims, "
                   "or NHWC ones of 2");
      return TRUE;
    case FB_OP_GRU: case FB_OP_LSTM: case FB_OP_RNN:
      if (!fb_dtype_is_float (node->inputs[0]->dtype))
        return no (reason, "%s runs on float inputs only", fb_op_name (node->op));
      return TRUE;
    case FB_OP_RESIZE: case FB_OP_UPSAMPLE:
      for (guint i = 1; i < node->n_inputs; i++)
        if (node->inputs[i] && node->inputs[i]->constant == NULL)
          return no (reason, "input %u ('%s') must be known at compile time", i,
                     node->inputs[i]->name);
      return TRUE;
    case FB_OP_TOPK:
      if (node->inputs[1]->constant == NULL)
        return no (reason, "TopK needs K known at compile time");
      return TRUE;
    case FB_OP_LRN:
      if (!fb_dtype_is_float (node->inputs[0]->dtype) || node->inputs[0]->shape.rank < 2)
        return no (reason, "LRN needs a float input with a channel dimension");
      return TRUE;
    case FB_OP_MATMUL:
      return TRUE;     /* float32 through sgemm, other types as loops */
    case FB_OP_CONV: case FB_OP_GEMM:
      if (node->inputs[0]->dtype != FB_DTYPE_FLOAT32)
        return no (reason, "%s runs on float32 only (sgemm)", fb_op_name (node->op));
      if (node->op == FB_OP_CONV && node->inputs[0]->shape.rank == 5 && _fb_lower_is_nhwc (node))
        return no (reason, "3-D convolutions are compiled in NCHW only");
      if (node->op == FB_OP_CONV && (node->inputs[0]->shape.rank < 3 ||
                                     node->inputs[0]->shape.rank > 5))
        return no (reason, "only 1-D, 2-D and 3-D convolutions are compiled");
      return TRUE;
    case FB_OP_MAX_POOL: case FB_OP_AVERAGE_POOL:
      if (node->inputs[0]->shape.rank < 3)
        return no (reason, "pools need an input of rank 3 or more");
      if (node->inputs[0]->dtype == FB_DTYPE_BOOL ||
          (node->op == FB_OP_AVERAGE_POOL && !fb_dtype_is_float (node->inputs[0]->dtype)))
        return no (reason, "%s does not take element type %s", fb_op_name (node->op),
                   fb_dtype_name (node->inputs[0]->dtype));
      return TRUE;
    case FB_OP_BATCH_NORMALIZATION:
      return batchnorm_supported (node, reason);
    case FB_OP_CONV_INTEGER: case FB_OP_QLINEAR_CONV:
      return integer_conv_supported (node, reason);
    case FB_OP_DET:
      if (!fb_dtype_is_float (node->inputs[0]->dtype) || node->inputs[0]->shape.rank < 2)
        return no (reason, "Det needs float matrices [..., M, M]");
      return TRUE;
    case FB_OP_LAYER_NORMALIZATION:
      if (!fb_dtype_is_float (node->inputs[0]->dtype))
        return no (reason, "needs a float input");
      return TRUE;
    case FB_OP_DROPOUT:
      if (output_used (node, 1))
        return no (reason, "Dropout's mask output is not computed");
      return TRUE;
    case FB_OP_CUMSUM:
      if (node->inputs[1]->constant == NULL)
        return no (reason, "CumSum needs a constant axis");
      return TRUE;
    case FB_OP_SPLIT: case FB_OP_CONCAT: case FB_OP_SLICE: case FB_OP_PAD: case FB_OP_TILE:
      for (guint i = 1; i < node->n_inputs; i++)
        if (node->inputs[i] && node->inputs[i]->constant == NULL &&
            !(node->op == FB_OP_CONCAT || (node->op == FB_OP_PAD && i == 2)))
          return no (reason, "input %u ('%s') must be known at compile time", i,
                     node->inputs[i]->name);
      return TRUE;
    case FB_OP_DEPTH_TO_SPACE: case FB_OP_SPACE_TO_DEPTH:
      if (node->inputs[0]->shape.rank != 4)
        return no (reason, "needs a rank-4 input");
      return TRUE;
    case FB_OP_REDUCE_L2: case FB_OP_REDUCE_MAX: case FB_OP_REDUCE_MEAN: case FB_OP_REDUCE_MIN:
    case FB_OP_REDUCE_PROD: case FB_OP_REDUCE_SUM:
    case FB_OP_REDUCE_L1: case FB_OP_REDUCE_LOG_SUM: case FB_OP_REDUCE_LOG_SUM_EXP:
    case FB_OP_REDUCE_SUM_SQUARE:
      if (fb_node_input (node, 1) && node->inputs[1]->constant == NULL)
        return no (reason, "axes must be known at compile time");
      return TRUE;
    case FB_OP_SOFTMAX: case FB_OP_LOG_SOFTMAX: case FB_OP_INSTANCE_NORMALIZATION:
    case FB_OP_MEAN_VARIANCE_NORMALIZATION:
      if (!fb_dtype_is_float (node->inputs[0]->dtype))
        return no (reason, "needs a float input");
      return TRUE;
    case FB_OP_GATHER_ND: case FB_OP_SCATTER: case FB_OP_SCATTER_ELEMENTS: case FB_OP_ONE_HOT:
    case FB_OP_REVERSE_SEQUENCE: case FB_OP_QUANTIZE_LINEAR: case FB_OP_DEQUANTIZE_LINEAR:
    case FB_OP_DYNAMIC_QUANTIZE_LINEAR:
      return _fb_lower_index_supports (node, reason);
    case FB_OP_MATMUL_INTEGER: case FB_OP_QLINEAR_MATMUL:
      return _fb_lower_index_supports (node, reason);
    case FB_OP_GRID_SAMPLE:
      if (!fb_dtype_is_float (node->inputs[0]->dtype) || node->inputs[0]->shape.rank != 4)
        return no (reason, "GridSample runs on float inputs of rank 4 (2-D sampling)");
      return TRUE;
    case FB_OP_MAX_UNPOOL:
      if (!fb_dtype_is_float (node->inputs[0]->dtype))
        return no (reason, "MaxUnpool runs on float inputs");
      return TRUE;
    case FB_OP_DFT: case FB_OP_STFT: case FB_OP_ROI_ALIGN:
      if (!fb_dtype_is_float (node->inputs[0]->dtype))
        return no (reason, "%s runs on float inputs", fb_op_name (node->op));
      return TRUE;
    case FB_OP_TFIDF_VECTORIZER:
      if (fb_node_attr (node, "pool_strings") != NULL)
        return no (reason, "TfIdfVectorizer over strings is not supported");
      return TRUE;
    default:
      return TRUE;
    }
}

gboolean
fb_lower_supports_node (const FbNode *node, char **reason)
{
  g_return_val_if_fail (node != NULL, FALSE);
  if (reason)
    *reason = NULL;
  if (node->op == FB_OP_FUSED)
    {
      FbGraph *body = fb_node_attr_graph (node, "body");
      if (body == NULL)
        return no (reason, "fused node without a body");
      for (guint i = 0; i < body->nodes->len; i++)
        {
          const FbNode *m = g_ptr_array_index (body->nodes, i);
          g_autofree char *why = NULL;
          if (!fb_lower_supports_node (m, &why))
            return no (reason, "member '%s': %s", m->name, why);
        }
      return TRUE;
    }
  /* Control flow, and steps whose sizes or shape operands only the run gives, run on the host
   * through the reference interpreter, into buffers sized at run time. */
  if (_fb_lower_on_host (node))
    return node->op != FB_OP_UNKNOWN && dtypes_supported (node, reason);
  return supports_member (node, reason);
}
