/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The modeled cost of a node: flops from its operator and shapes, bytes from every value it
 * reads and writes once. It is what the profiler labels "modeled" and the roofline plots, so it
 * favours a simple, explainable count over precision: a contraction counts a multiply-add as 2,
 * an elementwise operator about 1 per output element, a transcendental function a few,
 * a reduction about 1 per input element, and moving data none. */
#include "fb-cost.h"
#include "fb-infer-private.h"

#include <math.h>
#include <string.h>

/* exp, log, tanh and friends: a polynomial after range reduction, a handful of operations. */
#define COST_TRANSCENDENTAL 4.0

static double
numel (const FbValue *v)
{
  gboolean overflow;
  int64_t n;

  if (v == NULL)
    return 0.0;
  n = fb_shape_numel (&v->shape, &overflow);
  return n > 0 ? (double) n : 0.0;
}

static double
value_bytes (const FbValue *v)
{
  /* A sequence's length is only known when it runs: its bytes are not counted. */
  if (v == NULL || v->kind != FB_KIND_TENSOR)
    return 0.0;
  return numel (v) * (double) fb_dtype_size (v->dtype);
}

static double
out_numel (const FbNode *node)
{
  return node->n_outputs > 0 ? numel (node->outputs[0]) : 0.0;
}

static double
in_numel (const FbNode *node, guint i)
{
  return numel (fb_node_input (node, i));
}

/* Extent d of input i, or 0 when unknown. */
static double
in_dim (const FbNode *node, guint i, int d)
{
  FbValue *v = fb_node_input (node, i);

  if (v == NULL || d < 0 || d >= v->shape.rank || v->shape.dim[d] < 0)
    return 0.0;
  return (double) v->shape.dim[d];
}

/* Flops per output element of the elementwise operators. */
static double
elementwise_weight (FbOpKind op)
{
  switch (op)
    {
    case FB_OP_IDENTITY: case FB_OP_DROPOUT:
      return 0.0;
    case FB_OP_EXP: case FB_OP_LOG: case FB_OP_SIN: case FB_OP_COS: case FB_OP_TANH:
    case FB_OP_SIGMOID: case FB_OP_ERF: case FB_OP_ELU: case FB_OP_SELU: case FB_OP_SOFTPLUS:
    case FB_OP_POW: case FB_OP_SQRT:
      return COST_TRANSCENDENTAL;
    case FB_OP_GELU:
      return COST_TRANSCENDENTAL + 3.0;
    case FB_OP_SWISH:
      return COST_TRANSCENDENTAL + 2.0;
    case FB_OP_HARD_SIGMOID: case FB_OP_SOFTSIGN: case FB_OP_CLIP:
      return 2.0;
    case FB_OP_HARD_SWISH:
      return 3.0;
    default:
      return 1.0;
    }
}

static double
conv_flops (const FbNode *node)
{
  double w0 = in_dim (node, 1, 0);

  if (w0 == 0.0)
    return 0.0;
  /* Each output (Conv) or input (ConvTranspose) element meets Cin/group x kernel weights of its
   * output channel: numel(W) / W[0] of them, a multiply-add each. */
  if (node->op == FB_OP_CONV)
    return 2.0 * out_numel (node) * in_numel (node, 1) / w0;
  return 2.0 * in_numel (node, 0) * in_numel (node, 1) / w0;
}

static double
matmul_flops (const FbNode *node)
{
  FbValue *a = fb_node_input (node, 0);
  double k;

  if (a == NULL || a->shape.rank < 1)
    return 0.0;
  if (node->op == FB_OP_GEMM)
    k = in_dim (node, 0, fb_node_attr_int (node, "transA", 0) ? 0 : 1);
  else
    k = in_dim (node, 0, a->shape.rank - 1);
  return 2.0 * out_numel (node) * k;
}

static double
einsum_flops (const FbNode *node)
{
  const char *equation = fb_node_attr_string (node, "equation", NULL);
  FbEinsumEq eq;
  double contracted = 1.0;

  if (equation == NULL || node->n_inputs < 1 || node->n_inputs > 2 ||
      !_fb_einsum_parse (node, equation, node->n_inputs, &eq, NULL))
    return 0.0;
  /* One operand: a permutation or a diagonal moves data; summing the labels the output leaves
   * out adds (their extents' product - 1) times per output element. */
  if (node->n_inputs == 1)
    {
      const FbValue *x = node->inputs[0];
      int d = 0, n_labels = (int) strlen (eq.in[0]);
      double summed = 1.0;
      if (x == NULL || x->shape.rank < 0)
        return 0.0;
      for (const char *c = eq.in[0]; *c; c++)
        {
          if (*c == '.')
            {
              d += x->shape.rank - (n_labels - 1);
              continue;
            }
          if (strchr (eq.out, *c) == NULL && strchr (eq.in[0], *c) == c)
            summed *= in_dim (node, 0, d);
          d++;
        }
      return summed > 1.0 ? out_numel (node) * (summed - 1.0) : 0.0;
    }
  /* Labels in both operands and not in the output are summed over. */
  for (const char *c = eq.in[0]; *c; c++)
    {
      const char *in_b;
      int d = 0;
      if (*c == '.' || strchr (eq.out, *c) != NULL || (in_b = strchr (eq.in[1], *c)) == NULL)
        continue;
      /* Position of the label in operand 1, counted from the right when it follows "...". */
      {
        const FbValue *b = node->inputs[1];
        const char *dots = strchr (eq.in[1], '.');
        if (b == NULL || b->shape.rank < 0)
          return 0.0;
        d = (dots != NULL && in_b > dots)
              ? b->shape.rank - (int) strlen (in_b)
              : (int) (in_b - eq.in[1]);
      }
      contracted *= in_dim (node, 1, d);
    }
  return 2.0 * out_numel (node) * contracted;
}

static double
pool_flops (const FbNode *node)
{
  const int64_t *k;
  guint n;
  double window = 1.0;

  k = fb_node_attr_ints (node, "kernel_shape", &n);
  for (guint i = 0; i < n; i++)
    window *= (double) MAX (k[i], 0);
  return out_numel (node) * window;
}

static double
resize_flops (const FbNode *node)
{
  const char *mode = fb_node_attr_string (node, "mode", "nearest");
  FbValue *x = fb_node_input (node, 0);
  FbValue *y = node->n_outputs > 0 ? node->outputs[0] : NULL;
  double taps = 1.0, per_axis;

  if (strcmp (mode, "linear") == 0)
    per_axis = 2.0;
  else if (strcmp (mode, "cubic") == 0)
    per_axis = 4.0;
  else
    return 0.0;
  if (x == NULL || y == NULL || x->shape.rank != y->shape.rank)
    return 0.0;
  /* Interpolating along each resized axis blends per_axis neighbours: a multiply-add each. */
  for (int i = 0; i < x->shape.rank; i++)
    if (x->shape.dim[i] != y->shape.dim[i])
      taps *= per_axis;
  return taps > 1.0 ? 2.0 * taps * out_numel (node) : 0.0;
}

static double
recurrent_flops (const FbNode *node, double gates)
{
  FbValue *y = node->n_outputs > 0 ? node->outputs[0] : NULL;
  double input = in_dim (node, 0, 2), hidden = in_dim (node, 2, 2);
  double steps_dirs_batch;

  if (y == NULL || y->shape.rank != 4)
    return 0.0;
  /* Y holds one hidden vector per step, direction and batch entry. */
  steps_dirs_batch = numel (y) / MAX (hidden, 1.0);
  return steps_dirs_batch * gates * hidden * (2.0 * (input + hidden) + COST_TRANSCENDENTAL + 2.0);
}

static double
topk_flops (const FbNode *node)
{
  FbValue *x = fb_node_input (node, 0);
  FbValue *y = node->n_outputs > 0 ? node->outputs[0] : NULL;
  double k = 1.0;
  int axis;

  if (x != NULL && y != NULL && x->shape.rank >= 1 && y->shape.rank == x->shape.rank &&
      fb_axis_normalize (fb_node_attr_int (node, "axis", -1), x->shape.rank, &axis) &&
      y->shape.dim[axis] > 0)
    k = (double) y->shape.dim[axis];
  /* A heap of k per row: about log2(k) comparisons per input element. */
  return in_numel (node, 0) * (1.0 + log2 (k));
}

static double node_flops (const FbNode *node);

static double
graph_flops (const FbGraph *g)
{
  double total = 0.0;

  if (g == NULL)
    return 0.0;
  for (guint i = 0; i < g->nodes->len; i++)
    total += node_flops (g_ptr_array_index (g->nodes, i));
  return total;
}

static double
loop_flops (const FbNode *node)
{
  FbValue *m = fb_node_input (node, 0);
  double body = graph_flops (fb_node_attr_graph (node, "body"));

  /* A count known only at run time is modeled as one iteration, a lower bound. */
  if (m != NULL && m->constant != NULL && m->constant->numel == 1)
    return body * (double) MAX (fb_tensor_get_i64 (m->constant, 0), 0);
  return body;
}

/* Scan runs its body once per slice of its scan inputs: their extent along their scan axis. */
static double
scan_flops (const FbNode *node)
{
  double body = graph_flops (fb_node_attr_graph (node, "body"));
  int64_t m = fb_node_attr_int (node, "num_scan_inputs", 0);
  guint first = node->n_inputs > m ? node->n_inputs - (guint) m : 0;
  guint n_axes;
  const int64_t *axes = fb_node_attr_ints (node, "scan_input_axes", &n_axes);
  const FbValue *x = fb_node_input (node, first);
  int axis;

  /* Scan-8 scans axis 1 (after the batch); from opset 9 the first scan input's axis. */
  if (x == NULL || x->shape.rank < 1)
    return body;
  if (node->opset > 0 && node->opset < 9)
    axis = 1;
  else if (!fb_axis_normalize (n_axes > 0 ? axes[0] : 0, x->shape.rank, &axis))
    return body;
  return axis < x->shape.rank && x->shape.dim[axis] > 0 ? body * (double) x->shape.dim[axis] : body;
}

/* A direct DFT: every complex output sums n complex products (8 flops each). */
static double
dft_flops (double out, double n)
{
  return out / 2.0 * MAX (n, 1.0) * 8.0;
}

static double
node_flops (const FbNode *node)
{
  double out = out_numel (node);

  switch (node->op)
    {
    case FB_OP_UNKNOWN:
    case FB_OP_COUNT:
      return 0.0;

    /* Elementwise */
    case FB_OP_ABS: case FB_OP_CAST: case FB_OP_CEIL: case FB_OP_CLIP: case FB_OP_COS:
    case FB_OP_DROPOUT: case FB_OP_ELU: case FB_OP_ERF: case FB_OP_EXP: case FB_OP_FLOOR:
    case FB_OP_GELU: case FB_OP_HARD_SIGMOID: case FB_OP_HARD_SWISH: case FB_OP_IDENTITY:
    case FB_OP_IS_NAN: case FB_OP_LEAKY_RELU: case FB_OP_LOG: case FB_OP_NEG: case FB_OP_NOT:
    case FB_OP_RECIPROCAL: case FB_OP_RELU: case FB_OP_ROUND: case FB_OP_SELU:
    case FB_OP_SIGMOID: case FB_OP_SIGN: case FB_OP_SIN: case FB_OP_SOFTPLUS:
    case FB_OP_SOFTSIGN: case FB_OP_SQRT: case FB_OP_SWISH: case FB_OP_TANH:
    case FB_OP_ADD: case FB_OP_AND: case FB_OP_DIV: case FB_OP_EQUAL: case FB_OP_GREATER:
    case FB_OP_GREATER_OR_EQUAL: case FB_OP_LESS: case FB_OP_LESS_OR_EQUAL: case FB_OP_MOD:
    case FB_OP_MUL: case FB_OP_OR: case FB_OP_POW: case FB_OP_PRELU: case FB_OP_SUB:
    case FB_OP_XOR: case FB_OP_WHERE:
      return out * elementwise_weight (node->op);
    case FB_OP_MAX: case FB_OP_MIN: case FB_OP_SUM:
      return out * (node->n_inputs > 1 ? node->n_inputs - 1 : 0);
    case FB_OP_MEAN:
      return out * node->n_inputs;

    /* Reductions and scans: about one operation per input element */
    case FB_OP_ARGMAX: case FB_OP_REDUCE_MAX: case FB_OP_REDUCE_MEAN: case FB_OP_REDUCE_MIN:
    case FB_OP_REDUCE_PROD: case FB_OP_REDUCE_SUM: case FB_OP_CUMSUM:
      return in_numel (node, 0);
    case FB_OP_REDUCE_L2:
      return 2.0 * in_numel (node, 0) + COST_TRANSCENDENTAL * out;
    case FB_OP_SOFTMAX: case FB_OP_LOG_SOFTMAX:
      /* max, subtract, exp, sum, divide */
      return in_numel (node, 0) * (4.0 + COST_TRANSCENDENTAL);
    case FB_OP_TOPK:
      return topk_flops (node);

    /* Contractions */
    case FB_OP_CONV: case FB_OP_CONV_TRANSPOSE:
      return conv_flops (node);
    case FB_OP_MATMUL: case FB_OP_GEMM:
      return matmul_flops (node);
    case FB_OP_EINSUM:
      return einsum_flops (node);

    /* Pools */
    case FB_OP_AVERAGE_POOL: case FB_OP_MAX_POOL:
      return pool_flops (node);
    case FB_OP_GLOBAL_AVERAGE_POOL: case FB_OP_GLOBAL_MAX_POOL:
      return in_numel (node, 0);

    /* Normalizations: batch norm folds into a scale and a shift; the others also compute the
     * mean and variance they normalize with. */
    case FB_OP_BATCH_NORMALIZATION:
      return 2.0 * in_numel (node, 0);
    case FB_OP_INSTANCE_NORMALIZATION: case FB_OP_LAYER_NORMALIZATION:
      return 5.0 * in_numel (node, 0);
    case FB_OP_LRN:
      return in_numel (node, 0) * (2.0 * (double) MAX (fb_node_attr_int (node, "size", 1), 1) +
                                   COST_TRANSCENDENTAL);

    /* Resampling interpolates; nearest only copies */
    case FB_OP_RESIZE: case FB_OP_UPSAMPLE:
      return resize_flops (node);

    case FB_OP_GRU:
      return recurrent_flops (node, 3.0);
    case FB_OP_LSTM:
      return recurrent_flops (node, 4.0);
    case FB_OP_RNN:
      return recurrent_flops (node, 1.0);

    /* Operators added for conformance */
    case FB_OP_ACOS: case FB_OP_ACOSH: case FB_OP_ASIN: case FB_OP_ASINH: case FB_OP_ATAN:
    case FB_OP_ATANH: case FB_OP_COSH: case FB_OP_SINH: case FB_OP_TAN: case FB_OP_CELU:
      return out * COST_TRANSCENDENTAL;
    case FB_OP_MISH:
      return out * (2.0 * COST_TRANSCENDENTAL + 1.0);
    case FB_OP_IS_INF: case FB_OP_SHRINK: case FB_OP_THRESHOLDED_RELU: case FB_OP_BIT_SHIFT:
    case FB_OP_CAST_LIKE:
      return out;
    case FB_OP_EYE_LIKE: case FB_OP_GATHER_ND: case FB_OP_SCATTER: case FB_OP_SCATTER_ELEMENTS:
    case FB_OP_ONE_HOT: case FB_OP_REVERSE_SEQUENCE: case FB_OP_COMPRESS: case FB_OP_NON_ZERO:
      return 0.0;
    case FB_OP_QUANTIZE_LINEAR: case FB_OP_DEQUANTIZE_LINEAR:
      return 3.0 * out;
    case FB_OP_DYNAMIC_QUANTIZE_LINEAR:
      /* min and max, then the quantization */
      return 5.0 * in_numel (node, 0);
    case FB_OP_MATMUL_INTEGER: case FB_OP_QLINEAR_MATMUL:
      {
        /* two flops per product: M x N outputs, each a sum over K */
        const FbValue *a = fb_node_input (node, 0);
        double k = a && a->shape.rank >= 1 && a->shape.dim[a->shape.rank - 1] > 0
                 ? (double) a->shape.dim[a->shape.rank - 1] : 1.0;
        return 2.0 * out * k;
      }
    case FB_OP_DET:
      {
        /* elimination: about 2/3 M^3 per matrix */
        const FbValue *x = fb_node_input (node, 0);
        double m = x && x->shape.rank >= 2 && x->shape.dim[x->shape.rank - 1] > 0
                 ? (double) x->shape.dim[x->shape.rank - 1] : 1.0;
        return MAX (out, 1.0) * 2.0 / 3.0 * m * m * m;
      }
    case FB_OP_CONV_INTEGER: case FB_OP_QLINEAR_CONV:
      {
        const FbValue *w = fb_node_input (node, node->op == FB_OP_QLINEAR_CONV ? 3 : 1);
        double per = 1.0;
        for (int d = 1; w && d < w->shape.rank; d++)
          per *= w->shape.dim[d] > 0 ? (double) w->shape.dim[d] : 1.0;
        return 2.0 * out * per;
      }
    case FB_OP_GRID_SAMPLE:
      /* up to 16 taps (bicubic) of a multiply-add per output element */
      return out * (g_strcmp0 (fb_node_attr_string (node, "mode", "bilinear"), "bicubic") == 0
                    ? 40.0 : 10.0);
    case FB_OP_HANN_WINDOW: case FB_OP_HAMMING_WINDOW: case FB_OP_BLACKMAN_WINDOW:
      return out * COST_TRANSCENDENTAL;
    case FB_OP_UNIQUE:
      /* a sort */
      return in_numel (node, 0) * (1.0 + log2 (MAX (in_numel (node, 0), 2.0)));
    case FB_OP_NON_MAX_SUPPRESSION:
      {
        /* a sort of every class's boxes, then overlaps against the kept boxes */
        double boxes = in_dim (node, 0, 1);
        return in_numel (node, 1) * (1.0 + log2 (MAX (boxes, 2.0))) + in_numel (node, 1) * 8.0;
      }
    case FB_OP_ARGMIN: case FB_OP_REDUCE_L1: case FB_OP_REDUCE_SUM_SQUARE: case FB_OP_HARDMAX:
      return 2.0 * in_numel (node, 0);
    case FB_OP_REDUCE_LOG_SUM:
      return in_numel (node, 0) + COST_TRANSCENDENTAL * out;
    case FB_OP_REDUCE_LOG_SUM_EXP:
      return in_numel (node, 0) * (2.0 + COST_TRANSCENDENTAL) + COST_TRANSCENDENTAL * out;
    case FB_OP_NLL_LOSS:
      /* a gathered product and a sum per target element */
      return 2.0 * in_numel (node, 1);
    case FB_OP_SOFTMAX_CE_LOSS:
      /* the log-softmax of the scores, then the gathered loss */
      return in_numel (node, 0) * (4.0 + COST_TRANSCENDENTAL) + 2.0 * in_numel (node, 1);
    case FB_OP_MEAN_VARIANCE_NORMALIZATION:
      return 5.0 * in_numel (node, 0);
    case FB_OP_DFT:
      {
        /* the signal's length along the transformed axis (default 1) */
        const FbValue *x = fb_node_input (node, 0);
        int axis = 1;
        if (x && node->opset >= 20)
          axis = -2;
        if (x && x->shape.rank > 0 && fb_axis_normalize (fb_node_attr_int (node, "axis", axis),
                                                         x->shape.rank, &axis))
          return dft_flops (out, in_dim (node, 0, axis));
        return dft_flops (out, 1.0);
      }
    case FB_OP_STFT:
      /* each frame's bins are a DFT over the frame (the window's length when given) */
      return dft_flops (out, in_numel (node, 2) > 0 ? in_numel (node, 2) : 1.0) + in_numel (node, 0);
    case FB_OP_MEL_WEIGHT_MATRIX:
      return out * 4.0;
    case FB_OP_ROI_ALIGN:
      {
        /* a bilinear tap (about 10 flops) per sample, sampling_ratio² samples a bin (2 x 2 when
         * adaptive, the common case) */
        double r = (double) MAX (fb_node_attr_int (node, "sampling_ratio", 0), 2);
        return out * r * r * 10.0;
      }
    case FB_OP_MAX_UNPOOL:
      return 0.0;
    case FB_OP_TFIDF_VECTORIZER:
      {
        /* every pool n-gram compared at every position and skip */
        guint n_ngrams;
        fb_node_attr_ints (node, "ngram_indexes", &n_ngrams);
        return in_numel (node, 0) * (double) n_ngrams *
               (double) (MAX (fb_node_attr_int (node, "max_skip_count", 0), 0) + 1);
      }
    case FB_OP_SCAN:
      return scan_flops (node);

    /* Control flow and fused groups: what their bodies do */
    case FB_OP_IF:
      return MAX (graph_flops (fb_node_attr_graph (node, "then_branch")),
                  graph_flops (fb_node_attr_graph (node, "else_branch")));
    case FB_OP_LOOP:
      return loop_flops (node);
    case FB_OP_FUSED:
      return graph_flops (fb_node_attr_graph (node, "body"));
    case FB_OP_SEQUENCE_MAP:
      /* at least once; the sequence's length is only known when it runs */
      return graph_flops (fb_node_attr_graph (node, "body"));

    /* Sequences and optionals only hold, split and join tensors */
    case FB_OP_CONCAT_FROM_SEQUENCE: case FB_OP_OPTIONAL: case FB_OP_OPTIONAL_GET_ELEMENT:
    case FB_OP_OPTIONAL_HAS_ELEMENT: case FB_OP_SEQUENCE_AT: case FB_OP_SEQUENCE_CONSTRUCT:
    case FB_OP_SEQUENCE_EMPTY: case FB_OP_SEQUENCE_ERASE: case FB_OP_SEQUENCE_INSERT:
    case FB_OP_SEQUENCE_LENGTH: case FB_OP_SPLIT_TO_SEQUENCE:
      return 0.0;

    /* Moving, reshaping, creating and measuring tensors computes nothing */
    case FB_OP_CONCAT: case FB_OP_CONSTANT: case FB_OP_CONSTANT_OF_SHAPE:
    case FB_OP_DEPTH_TO_SPACE: case FB_OP_EXPAND: case FB_OP_FLATTEN: case FB_OP_GATHER:
    case FB_OP_GATHER_ELEMENTS: case FB_OP_PAD: case FB_OP_RANGE: case FB_OP_RESHAPE:
    case FB_OP_SCATTER_ND: case FB_OP_SHAPE: case FB_OP_SIZE: case FB_OP_SLICE:
    case FB_OP_SPACE_TO_DEPTH: case FB_OP_SPLIT: case FB_OP_SQUEEZE: case FB_OP_TILE:
    case FB_OP_TRANSPOSE: case FB_OP_TRILU: case FB_OP_UNSQUEEZE:
      return 0.0;
    }
  return 0.0;
}

FbCost
fb_node_cost (const FbNode *node)
{
  FbCost cost = { 0.0, 0.0, 0.0 };

  g_return_val_if_fail (node != NULL, cost);

  if ((int) node->op < 0 || (int) node->op >= FB_OP_COUNT)
    return cost;
  cost.flops = node_flops (node);
  /* A value read twice (x * x) is still read once. Fused nodes count only their own inputs and
   * outputs: the intermediates of the body stay in registers, which is what fusion is for. */
  for (guint i = 0; i < node->n_inputs; i++)
    {
      gboolean seen = FALSE;
      for (guint j = 0; j < i && !seen; j++)
        seen = node->inputs[j] == node->inputs[i];
      if (!seen)
        cost.bytes_read += value_bytes (node->inputs[i]);
    }
  for (guint i = 0; i < node->n_outputs; i++)
    cost.bytes_written += value_bytes (node->outputs[i]);
  return cost;
}
