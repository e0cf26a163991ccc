/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The conformance lowerings (N-d and integer pools, BatchNormalization with run-time and
 * training statistics, ConvInteger, QLinearConv, Det; DFT, RoiAlign, MaxUnpool,
 * TfIdfVectorizer, MeanVarianceNormalization, Einsum's diagonals, LSTM, GRU, RNN, LogSoftmax
 * of large numbers) through the cuda target's code
 * generation, which lowers the same kernel IR to PTX: each kernel, lowered for the GPU, is
 * PTX that ptxas assembles for sm_90 (skipped, with the reason, where ptxas is absent), and
 * the host's emulation of its launches computes what the interpreter does, on the grid asked
 * for and on a smaller one, cooperative blocks included. */
#include "fb-cuda.h"
#include "fb-test-ptx.h"
#include "fb-codegen.h"
#include "fb-lower.h"
#include "fb-ptx.h"

#include <string.h>

typedef struct {
  FbGraph  *g;
  FbNode   *node;
  FbTensor *ins[9];
  guint     n_ins;
  gboolean  cooperative;        /* whether the emulated launches cooperate in a block */
} Case;

static FbTensor *
ints (FbDType dtype, int rank, const int64_t *dims, int lo, int hi, guint32 seed)
{
  FbTensor *t = ti_tensor (dtype, rank, dims, NULL);
  g_autoptr(GRand) r = g_rand_new_with_seed (seed);
  for (int64_t i = 0; i < t->numel; i++)
    fb_tensor_set_f64 (t, i, g_rand_int_range (r, lo, hi + 1));
  return t;
}

static FbTensor *
positive (int64_t n, guint32 seed)
{
  FbTensor *t = ti_random (1, &n, seed);
  for (int64_t i = 0; i < n; i++)
    fb_tensor_set_f64 (t, i, 0.25 + fb_tensor_get_f64 (t, i) * fb_tensor_get_f64 (t, i));
  return t;
}

static void
add (Case *c, FbTensor *t)
{
  c->ins[c->n_ins++] = t;
}

#define N_CASES 19

/* Case `which`, made afresh (tc_finish binds a graph to its inputs once). */
static void
make_case (guint which, Case *c)
{
  memset (c, 0, sizeof *c);
  FbGraph *g = c->g = ti_graph (19);
  FbNode *n;
  switch (which)
    {
    case 0:   /* MaxPool 3-D with its indices */
      n = ti_node (g, FB_OP_MAX_POOL, 1, 2);
      ti_attr_ints (g, n, "kernel_shape", 3, D (2, 3, 2));
      ti_attr_ints (g, n, "strides", 3, D (2, 1, 1));
      ti_attr_ints (g, n, "dilations", 3, D (1, 1, 2));
      ti_attr_ints (g, n, "pads", 6, D (1, 1, 0, 0, 1, 1));
      add (c, ti_random (5, D (1, 2, 6, 5, 4), 80));
      break;
    case 1:   /* AveragePool 3-D channels-last, ceil_mode, counting the pads */
      n = ti_node (g, FB_OP_AVERAGE_POOL, 1, 1);
      ti_attr_ints (g, n, "kernel_shape", 3, D (2, 2, 3));
      ti_attr_ints (g, n, "strides", 3, D (2, 2, 2));
      ti_attr_ints (g, n, "pads", 6, D (1, 0, 1, 0, 1, 1));
      ti_attr_int (g, n, "ceil_mode", 1);
      ti_attr_int (g, n, "count_include_pad", 1);
      ti_attr_string (g, n, FB_ATTR_LAYOUT, "nhwc");
      add (c, ti_random (5, D (1, 6, 5, 4, 3), 81));
      break;
    case 2:   /* MaxPool 2-D on uint8, channels-last */
      n = ti_node (g, FB_OP_MAX_POOL, 1, 1);
      ti_attr_ints (g, n, "kernel_shape", 2, D (3, 3));
      ti_attr_ints (g, n, "pads", 4, D (1, 1, 1, 1));
      ti_attr_string (g, n, FB_ATTR_LAYOUT, "nhwc");
      add (c, ints (FB_DTYPE_UINT8, 4, D (1, 7, 7, 3), 0, 255, 82));
      break;
    case 3:   /* BatchNormalization at inference, statistics fed at run time */
    case 4:   /* and in training, with the running statistics */
      n = ti_node (g, FB_OP_BATCH_NORMALIZATION, 5, which == 3 ? 1 : 3);
      if (which == 4)
        {
          ti_attr_int (g, n, "training_mode", 1);
          c->cooperative = TRUE;          /* 256 values a channel reduce over a block */
        }
      add (c, ti_random (4, which == 3 ? D (2, 3, 4, 5) : D (4, 3, 8, 8), 83));
      add (c, ti_random (1, D (3), 84));
      add (c, ti_random (1, D (3), 85));
      add (c, ti_random (1, D (3), 86));
      add (c, positive (3, 87));
      break;
    case 5:   /* ConvInteger, a zero point per output channel: 36 products a sum, a block's */
      n = ti_node (g, FB_OP_CONV_INTEGER, 4, 1);
      ti_attr_ints (g, n, "pads", 4, D (1, 1, 1, 1));
      add (c, ints (FB_DTYPE_UINT8, 4, D (1, 4, 6, 6), 0, 255, 88));
      add (c, ints (FB_DTYPE_INT8, 4, D (3, 4, 3, 3), -128, 127, 89));
      add (c, ti_tensor (FB_DTYPE_UINT8, 0, NULL, V (129)));
      add (c, ti_tensor (FB_DTYPE_INT8, 1, D (3), V (-2, 0, 7)));
      c->cooperative = TRUE;
      break;
    case 6:   /* QLinearConv, scales and zero points per output channel, a bias */
      n = ti_node (g, FB_OP_QLINEAR_CONV, 9, 1);
      ti_attr_ints (g, n, "strides", 2, D (2, 1));
      add (c, ints (FB_DTYPE_UINT8, 4, D (1, 3, 5, 5), 0, 255, 90));
      add (c, ti_f32 (0, NULL, V (0.04)));
      add (c, ti_tensor (FB_DTYPE_UINT8, 0, NULL, V (100)));
      add (c, ints (FB_DTYPE_INT8, 4, D (2, 3, 3, 3), -128, 127, 91));
      add (c, ti_f32 (1, D (2), V (0.003, 0.02)));
      add (c, ti_tensor (FB_DTYPE_INT8, 1, D (2), V (1, -5)));
      add (c, ti_f32 (0, NULL, V (0.2)));
      add (c, ti_tensor (FB_DTYPE_INT8, 0, NULL, V (-3)));
      add (c, ti_tensor (FB_DTYPE_INT32, 1, D (2), V (-700, 4000)));
      break;
    case 7:   /* Det of a batch */
      n = ti_node (g, FB_OP_DET, 1, 1);
      add (c, ti_random (3, D (3, 4, 4), 92));
      break;
    case 8:   /* an inverse DFT of a complex signal: constant tables of roots */
      n = ti_node (g, FB_OP_DFT, 1, 1);
      ti_attr_int (g, n, "inverse", 1);
      add (c, ti_random (4, D (2, 9, 3, 2), 93));
      break;
    case 9:   /* RoiAlign, adaptive sampling: loops whose extent a box gives */
      n = ti_node (g, FB_OP_ROI_ALIGN, 3, 1);
      ti_attr_int (g, n, "output_height", 3);
      ti_attr_int (g, n, "output_width", 2);
      ti_attr_string (g, n, "mode", "max");
      add (c, ti_random (4, D (2, 3, 9, 8), 94));
      add (c, ti_f32 (2, D (3, 4), V (0.5, 0.5, 7.5, 6, -2, -1, 3, 9.5, 1, 1, 1.2, 1.3)));
      add (c, ti_i64 (1, D (3), (const int64_t[]) { 1, 0, 1 }));
      break;
    case 10:  /* MaxUnpool: a sequential scatter, a place written twice */
      n = ti_node (g, FB_OP_MAX_UNPOOL, 2, 1);
      ti_attr_ints (g, n, "kernel_shape", 2, D (2, 2));
      ti_attr_ints (g, n, "strides", 2, D (2, 2));
      add (c, ti_random (4, D (1, 2, 2, 2), 95));
      add (c, ti_i64 (4, D (1, 2, 2, 2), (const int64_t[]) { 0, 3, 9, 9, 16, 19, 30, 25 }));
      break;
    case 11:  /* TfIdfVectorizer: unigrams and bigrams at three skips */
      n = ti_node (g, FB_OP_TFIDF_VECTORIZER, 1, 1);
      ti_attr_string (g, n, "mode", "TF");
      ti_attr_int (g, n, "min_gram_length", 1);
      ti_attr_int (g, n, "max_gram_length", 2);
      ti_attr_int (g, n, "max_skip_count", 2);
      ti_attr_ints (g, n, "ngram_counts", 2, D (0, 2));
      ti_attr_ints (g, n, "ngram_indexes", 4, D (0, 1, 2, 3));
      ti_attr_ints (g, n, "pool_int64s", 6, D (1, 2, 1, 2, 3, 3));
      add (c, ti_tensor (FB_DTYPE_INT64, 2, D (2, 8), V (1, 2, 3, 3, 1, 2, 2, 3, 3, 1, 1, 2, 3, 2, 1, 3)));
      break;
    case 12:  /* MeanVarianceNormalization: 40 values a channel reduce over a block */
      n = ti_node (g, FB_OP_MEAN_VARIANCE_NORMALIZATION, 1, 1);
      add (c, ti_random (4, D (2, 3, 4, 5), 96));
      c->cooperative = TRUE;
      break;
    case 13:  /* LSTM both ways: sequence lengths, initial states, peepholes, clip */
      n = ti_node (g, FB_OP_LSTM, 8, 3);
      ti_attr_int (g, n, "hidden_size", 5);
      ti_attr_string (g, n, "direction", "bidirectional");
      ti_attr_float (g, n, "clip", 2.5f);
      add (c, ti_random (3, D (4, 3, 6), 100));
      add (c, ti_random (3, D (2, 20, 6), 101));
      add (c, ti_random (3, D (2, 20, 5), 102));
      add (c, ti_random (2, D (2, 40), 103));
      add (c, ti_tensor (FB_DTYPE_INT32, 1, D (3), V (4, 2, 3)));
      add (c, ti_random (3, D (2, 3, 5), 104));
      add (c, ti_random (3, D (2, 3, 5), 105));
      add (c, ti_random (2, D (2, 15), 106));
      break;
    case 14:  /* GRU in reverse, batch-major */
      n = ti_node (g, FB_OP_GRU, 3, 2);
      ti_attr_int (g, n, "hidden_size", 7);
      ti_attr_string (g, n, "direction", "reverse");
      ti_attr_int (g, n, "layout", 1);
      add (c, ti_random (3, D (2, 5, 4), 107));
      add (c, ti_random (3, D (1, 21, 4), 108));
      add (c, ti_random (3, D (1, 21, 7), 109));
      break;
    case 15:  /* GRU with the reset gate after the product */
      n = ti_node (g, FB_OP_GRU, 4, 2);
      ti_attr_int (g, n, "hidden_size", 6);
      ti_attr_int (g, n, "linear_before_reset", 1);
      add (c, ti_random (3, D (3, 2, 5), 110));
      add (c, ti_random (3, D (1, 18, 5), 111));
      add (c, ti_random (3, D (1, 18, 6), 112));
      add (c, ti_random (2, D (1, 36), 113));
      break;
    case 16:  /* RNN both ways, Tanh and Relu */
      n = ti_node (g, FB_OP_RNN, 4, 2);
      ti_attr_int (g, n, "hidden_size", 8);
      ti_attr_string (g, n, "direction", "bidirectional");
      ti_attr_strings (g, n, "activations", 2, (const char *[]) { "Tanh", "Relu" });
      add (c, ti_random (3, D (5, 2, 3), 114));
      add (c, ti_random (3, D (2, 8, 3), 115));
      add (c, ti_random (3, D (2, 8, 8), 116));
      add (c, ti_random (2, D (2, 16), 117));
      break;
    case 17:  /* LogSoftmax of large numbers: x - max must not become x - (max + log sum) */
      n = ti_node (g, FB_OP_LOG_SOFTMAX, 1, 1);
      ti_attr_int (g, n, "axis", 1);
      add (c, ti_f32 (2, D (2, 4), V (0, 1, 2, 3, 10000, 10001, 10002, 10003)));
      break;
    default:  /* a batch of Einsum diagonals */
      n = ti_node (g, FB_OP_EINSUM, 1, 1);
      ti_attr_string (g, n, "equation", "...ii->...i");
      add (c, ti_random (3, D (4, 5, 5), 97));
      break;
    }
  c->node = n;
}

/* Every kernel of the case lowered for the GPU is generated code that ptxas assembles. */
static void
assemble (guint which, gboolean ptxas)
{
  Case c;
  make_case (which, &c);
  tc_finish (c.g, c.node, c.ins, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (c.g, fb_cuda_target_desc (), &error);
  g_assert_no_error (error);
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      g_assert_true (tp_pure_generated (k));
      g_autoptr(FbPtxModule) m = fb_codegen_ptx (k, plan, &error);
      g_assert_no_error (error);
      g_assert_nonnull (m->ptx);
      g_assert_null (strstr (m->ptx, ".extern .func"));
      if (ptxas && !fb_ptx_assemble (m->ptx, NULL, NULL, &error))
        g_error ("%s: kernel %s: ptxas refused its PTX: %s", fb_op_name (c.node->op), k->name,
                 error->message);
    }
}

static void
test_ptxas (void)
{
  g_autofree char *ptxas = fb_ptx_find_tool ("ptxas");
  for (guint i = 0; i < N_CASES; i++)
    assemble (i, ptxas != NULL);
  ti_done ();
  if (ptxas == NULL)
    g_test_skip ("ptxas (CUDA toolkit) not found: PTX made but not assembled");
}

static void
test_emulated (void)
{
  for (guint i = 0; i < N_CASES; i++)
    {
      Case c;
      make_case (i, &c);
      tp_check_emulated (c.g, c.node, c.ins, c.n_ins, c.cooperative);
    }
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/codegen-ptx-conform/ptxas", test_ptxas);
  g_test_add_func ("/codegen-ptx-conform/emulated", test_emulated);
  return g_test_run ();
}
