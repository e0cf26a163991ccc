/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Graph execution: environments, the release plan that frees every intermediate after its last
 * reader, If / Loop / fused bodies (Scan's in fb-interp-scan.c, through _fb_interp_run_body),
 * and the dispatch table from operator to kernel. */
#include "fb-interp-private.h"

#include <string.h>

/* Values bound while a graph runs. Subgraph bodies read values of enclosing graphs, so an
 * environment looks in its parents before falling back on compile-time constants. */
typedef struct _Env Env;
struct _Env {
  Env        *parent;
  GHashTable *values;   /* const FbValue* -> FbTensor* (a reference) */
};

/* For each node of a graph (by index), the values whose last reader it is. */
typedef struct {
  guint       n_nodes;
  GPtrArray **release;
} Plan;

struct _FbInterpCtx {
  GCancellable *cancellable;
  GHashTable   *plans;  /* const FbGraph* -> Plan*, computed once per run */
  Env          *env;    /* where the node being run finds enclosing values */
};

typedef struct {
  FbInterpKernel kernel;
  FbInterpCheck  check;
} OpEntry;

static gboolean run_control_if    (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
static gboolean run_control_loop  (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);
static gboolean run_control_fused (FbInterpCtx *, const FbNode *, FbTensor *const *, FbTensor **, GError **);

static const OpEntry op_table[] = {
  [FB_OP_UNKNOWN]                = { NULL, NULL },
  [FB_OP_ABS]                    = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_ADD]                    = { _fb_interp_binary, NULL },
  [FB_OP_AND]                    = { _fb_interp_binary, NULL },
  [FB_OP_ARGMAX]                 = { _fb_interp_argmax, NULL },
  [FB_OP_AVERAGE_POOL]           = { _fb_interp_pool, _fb_interp_check_window },
  [FB_OP_BATCH_NORMALIZATION]    = { _fb_interp_batch_norm, NULL },
  [FB_OP_CAST]                   = { _fb_interp_cast, _fb_interp_check_unary },
  [FB_OP_CEIL]                   = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_CLIP]                   = { _fb_interp_clip, NULL },
  [FB_OP_CONCAT]                 = { _fb_interp_concat, NULL },
  [FB_OP_CONSTANT]               = { _fb_interp_constant, _fb_interp_check_constant },
  [FB_OP_CONSTANT_OF_SHAPE]      = { _fb_interp_constant_of_shape, NULL },
  [FB_OP_CONV]                   = { _fb_interp_conv, _fb_interp_check_window },
  [FB_OP_CONV_TRANSPOSE]         = { _fb_interp_conv_transpose, _fb_interp_check_window },
  [FB_OP_COS]                    = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_CUMSUM]                 = { _fb_interp_cumsum, NULL },
  [FB_OP_DEPTH_TO_SPACE]         = { _fb_interp_depth_space, NULL },
  [FB_OP_DIV]                    = { _fb_interp_binary, NULL },
  [FB_OP_DROPOUT]                = { _fb_interp_dropout, NULL },
  [FB_OP_EINSUM]                 = { _fb_interp_einsum, _fb_interp_check_einsum },
  [FB_OP_ELU]                    = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_EQUAL]                  = { _fb_interp_binary, NULL },
  [FB_OP_ERF]                    = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_EXP]                    = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_EXPAND]                 = { _fb_interp_expand, NULL },
  [FB_OP_FLATTEN]                = { _fb_interp_flatten, NULL },
  [FB_OP_FLOOR]                  = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_GATHER]                 = { _fb_interp_gather, NULL },
  [FB_OP_GATHER_ELEMENTS]        = { _fb_interp_gather_elements, NULL },
  [FB_OP_GELU]                   = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_GEMM]                   = { _fb_interp_gemm, NULL },
  [FB_OP_GLOBAL_AVERAGE_POOL]    = { _fb_interp_global_pool, _fb_interp_check_window },
  [FB_OP_GLOBAL_MAX_POOL]        = { _fb_interp_global_pool, _fb_interp_check_window },
  [FB_OP_GREATER]                = { _fb_interp_binary, NULL },
  [FB_OP_GREATER_OR_EQUAL]       = { _fb_interp_binary, NULL },
  [FB_OP_GRU]                    = { _fb_interp_gru, _fb_interp_check_recurrent },
  [FB_OP_HARD_SIGMOID]           = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_HARD_SWISH]             = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_IDENTITY]               = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_IF]                     = { run_control_if, NULL },
  [FB_OP_INSTANCE_NORMALIZATION] = { _fb_interp_instance_norm, NULL },
  [FB_OP_IS_NAN]                 = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_LAYER_NORMALIZATION]    = { _fb_interp_layer_norm, NULL },
  [FB_OP_LEAKY_RELU]             = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_LESS]                   = { _fb_interp_binary, NULL },
  [FB_OP_LESS_OR_EQUAL]          = { _fb_interp_binary, NULL },
  [FB_OP_LOG]                    = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_LOG_SOFTMAX]            = { _fb_interp_softmax, NULL },
  [FB_OP_LOOP]                   = { run_control_loop, NULL },
  [FB_OP_LRN]                    = { _fb_interp_lrn, NULL },
  [FB_OP_LSTM]                   = { _fb_interp_lstm, _fb_interp_check_recurrent },
  [FB_OP_MATMUL]                 = { _fb_interp_matmul, NULL },
  [FB_OP_MAX]                    = { _fb_interp_variadic, NULL },
  [FB_OP_MAX_POOL]               = { _fb_interp_pool, _fb_interp_check_window },
  [FB_OP_MEAN]                   = { _fb_interp_variadic, NULL },
  [FB_OP_MIN]                    = { _fb_interp_variadic, NULL },
  [FB_OP_MOD]                    = { _fb_interp_binary, NULL },
  [FB_OP_MUL]                    = { _fb_interp_binary, NULL },
  [FB_OP_NEG]                    = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_NOT]                    = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_OR]                     = { _fb_interp_binary, NULL },
  [FB_OP_PAD]                    = { _fb_interp_pad, _fb_interp_check_pad },
  [FB_OP_POW]                    = { _fb_interp_binary, NULL },
  [FB_OP_PRELU]                  = { _fb_interp_binary, NULL },
  [FB_OP_RANGE]                  = { _fb_interp_range, NULL },
  [FB_OP_RECIPROCAL]             = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_REDUCE_L2]              = { _fb_interp_reduce, NULL },
  [FB_OP_REDUCE_MAX]             = { _fb_interp_reduce, NULL },
  [FB_OP_REDUCE_MEAN]            = { _fb_interp_reduce, NULL },
  [FB_OP_REDUCE_MIN]             = { _fb_interp_reduce, NULL },
  [FB_OP_REDUCE_PROD]            = { _fb_interp_reduce, NULL },
  [FB_OP_REDUCE_SUM]             = { _fb_interp_reduce, NULL },
  [FB_OP_RELU]                   = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_RESHAPE]                = { _fb_interp_reshape, NULL },
  [FB_OP_RESIZE]                 = { _fb_interp_resize, _fb_interp_check_resize },
  [FB_OP_ROUND]                  = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_SCATTER_ND]             = { _fb_interp_scatter_nd, NULL },
  [FB_OP_SELU]                   = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_SHAPE]                  = { _fb_interp_shape, NULL },
  [FB_OP_SIGMOID]                = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_SIGN]                   = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_SIN]                    = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_SIZE]                   = { _fb_interp_size, NULL },
  [FB_OP_SLICE]                  = { _fb_interp_slice, NULL },
  [FB_OP_SOFTMAX]                = { _fb_interp_softmax, NULL },
  [FB_OP_SOFTPLUS]               = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_SOFTSIGN]               = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_SPACE_TO_DEPTH]         = { _fb_interp_depth_space, NULL },
  [FB_OP_SPLIT]                  = { _fb_interp_split, NULL },
  [FB_OP_SQRT]                   = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_SQUEEZE]                = { _fb_interp_squeeze, NULL },
  [FB_OP_SUB]                    = { _fb_interp_binary, NULL },
  [FB_OP_SUM]                    = { _fb_interp_variadic, NULL },
  [FB_OP_SWISH]                  = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_TANH]                   = { _fb_interp_unary, _fb_interp_check_unary },
  [FB_OP_TILE]                   = { _fb_interp_tile, NULL },
  [FB_OP_TOPK]                   = { _fb_interp_topk, NULL },
  [FB_OP_TRANSPOSE]              = { _fb_interp_transpose, NULL },
  [FB_OP_TRILU]                  = { _fb_interp_trilu, NULL },
  [FB_OP_UNSQUEEZE]              = { _fb_interp_unsqueeze, NULL },
  [FB_OP_UPSAMPLE]               = { _fb_interp_resize, _fb_interp_check_resize },
  [FB_OP_WHERE]                  = { _fb_interp_where, NULL },
  [FB_OP_XOR]                    = { _fb_interp_binary, NULL },
  /* conformance operators */
  [FB_OP_ACOS]                   = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_ACOSH]                  = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_ARGMIN]                 = { _fb_interp_argmax, NULL },
  [FB_OP_ASIN]                   = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_ASINH]                  = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_ATAN]                   = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_ATANH]                  = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_BIT_SHIFT]              = { _fb_interp_bit_shift, _fb_interp_check_math },
  [FB_OP_BLACKMAN_WINDOW]        = { _fb_interp_window_fn, NULL },
  [FB_OP_COMPRESS]               = { _fb_interp_compress, NULL },
  [FB_OP_DEQUANTIZE_LINEAR]      = { _fb_interp_dequantize, NULL },
  [FB_OP_DYNAMIC_QUANTIZE_LINEAR] = { _fb_interp_dynamic_quantize, NULL },
  [FB_OP_GATHER_ND]              = { _fb_interp_gather_nd, NULL },
  [FB_OP_GRID_SAMPLE]            = { _fb_interp_grid_sample, _fb_interp_check_grid_sample },
  [FB_OP_HAMMING_WINDOW]         = { _fb_interp_window_fn, NULL },
  [FB_OP_HANN_WINDOW]            = { _fb_interp_window_fn, NULL },
  [FB_OP_NON_MAX_SUPPRESSION]    = { _fb_interp_nms, NULL },
  [FB_OP_NON_ZERO]               = { _fb_interp_non_zero, NULL },
  [FB_OP_ONE_HOT]                = { _fb_interp_one_hot, NULL },
  [FB_OP_QUANTIZE_LINEAR]        = { _fb_interp_quantize, NULL },
  [FB_OP_DET]                    = { _fb_interp_det, NULL },
  [FB_OP_CONV_INTEGER]           = { _fb_interp_conv_integer, _fb_interp_check_window },
  [FB_OP_MATMUL_INTEGER]         = { _fb_interp_matmul_integer, NULL },
  [FB_OP_QLINEAR_CONV]           = { _fb_interp_conv_integer, _fb_interp_check_window },
  [FB_OP_QLINEAR_MATMUL]         = { _fb_interp_matmul_integer, NULL },
  [FB_OP_REVERSE_SEQUENCE]       = { _fb_interp_reverse_sequence, NULL },
  [FB_OP_RNN]                    = { _fb_interp_rnn, _fb_interp_check_recurrent },
  [FB_OP_SCATTER]                = { _fb_interp_scatter_elements, _fb_interp_check_scatter_elements },
  [FB_OP_SCATTER_ELEMENTS]       = { _fb_interp_scatter_elements, _fb_interp_check_scatter_elements },
  [FB_OP_UNIQUE]                 = { _fb_interp_unique, NULL },
  [FB_OP_CAST_LIKE]              = { _fb_interp_cast_like, NULL },
  [FB_OP_CELU]                   = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_COSH]                   = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_EYE_LIKE]               = { _fb_interp_eye_like, _fb_interp_check_math },
  [FB_OP_HARDMAX]                = { _fb_interp_hardmax, NULL },
  [FB_OP_IS_INF]                 = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_MISH]                   = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_NLL_LOSS]               = { _fb_interp_nll_loss, _fb_interp_check_loss },
  [FB_OP_REDUCE_L1]              = { _fb_interp_reduce, NULL },
  [FB_OP_REDUCE_LOG_SUM]         = { _fb_interp_reduce, NULL },
  [FB_OP_REDUCE_LOG_SUM_EXP]     = { _fb_interp_reduce, NULL },
  [FB_OP_REDUCE_SUM_SQUARE]      = { _fb_interp_reduce, NULL },
  [FB_OP_SHRINK]                 = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_SINH]                   = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_SOFTMAX_CE_LOSS]        = { _fb_interp_softmax_ce_loss, _fb_interp_check_loss },
  [FB_OP_TAN]                    = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_THRESHOLDED_RELU]       = { _fb_interp_math, _fb_interp_check_math },
  [FB_OP_MAX_UNPOOL]             = { _fb_interp_max_unpool, NULL },
  [FB_OP_SCAN]                   = { _fb_interp_scan, NULL },
  [FB_OP_DFT]                    = { _fb_interp_dft, NULL },
  [FB_OP_STFT]                   = { _fb_interp_stft, NULL },
  [FB_OP_MEL_WEIGHT_MATRIX]      = { _fb_interp_mel_weight_matrix, NULL },
  [FB_OP_ROI_ALIGN]              = { _fb_interp_roi_align, NULL },
  [FB_OP_TFIDF_VECTORIZER]       = { _fb_interp_tfidf, NULL },
  [FB_OP_MEAN_VARIANCE_NORMALIZATION] = { _fb_interp_mvn, NULL },
  /* sequences and optionals */
  [FB_OP_CONCAT_FROM_SEQUENCE]   = { _fb_interp_concat_from_sequence, NULL },
  [FB_OP_OPTIONAL]               = { _fb_interp_optional, NULL },
  [FB_OP_OPTIONAL_GET_ELEMENT]   = { _fb_interp_optional_get_element, NULL },
  [FB_OP_OPTIONAL_HAS_ELEMENT]   = { _fb_interp_optional_has_element, NULL },
  [FB_OP_SEQUENCE_AT]            = { _fb_interp_sequence_at, NULL },
  [FB_OP_SEQUENCE_CONSTRUCT]     = { _fb_interp_sequence_construct, NULL },
  [FB_OP_SEQUENCE_EMPTY]         = { _fb_interp_sequence_empty, NULL },
  [FB_OP_SEQUENCE_ERASE]         = { _fb_interp_sequence_erase, NULL },
  [FB_OP_SEQUENCE_INSERT]        = { _fb_interp_sequence_insert, NULL },
  [FB_OP_SEQUENCE_LENGTH]        = { _fb_interp_sequence_length, NULL },
  [FB_OP_SEQUENCE_MAP]           = { _fb_interp_sequence_map, NULL },
  [FB_OP_SPLIT_TO_SEQUENCE]      = { _fb_interp_split_to_sequence, NULL },
  [FB_OP_FUSED]                  = { run_control_fused, NULL },
};

/* A new operator in ops.def must get a kernel here: the table must cover the whole enum. */
G_STATIC_ASSERT (G_N_ELEMENTS (op_table) == FB_OP_COUNT);

/* ---- environments and plans --------------------------------------------------------------- */

static Env *
env_new (Env *parent)
{
  Env *env = g_new0 (Env, 1);

  env->parent = parent;
  env->values = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) fb_tensor_unref);
  return env;
}

static void
env_free (Env *env)
{
  g_hash_table_unref (env->values);
  g_free (env);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Env, env_free)

static FbTensor *
env_lookup (Env *env, const FbValue *v)
{
  for (Env *e = env; e != NULL; e = e->parent)
    {
      FbTensor *t = g_hash_table_lookup (e->values, v);
      if (t != NULL)
        return t;
    }
  /* A fed input shadows an initializer of the same name; otherwise the constant is the value. */
  return v->constant;
}

static void
plan_free (Plan *plan)
{
  for (guint i = 0; i < plan->n_nodes; i++)
    if (plan->release[i] != NULL)
      g_ptr_array_unref (plan->release[i]);
  g_free (plan->release);
  g_free (plan);
}

/* Which values of graph die after which node: the last reader in topological order, counting a
 * node whose subgraphs capture a value as its reader. Outputs of the graph never die here. */
static Plan *
plan_build (const FbGraph *graph)
{
  g_autoptr(GHashTable) uses = fb_graph_build_uses (graph);
  g_autoptr(GHashTable) index = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) last = g_hash_table_new (NULL, NULL);   /* value -> index + 1 */
  Plan *plan = g_new0 (Plan, 1);
  GHashTableIter iter;
  gpointer key, users;

  plan->n_nodes = graph->nodes->len;
  plan->release = g_new0 (GPtrArray *, MAX (plan->n_nodes, 1));
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);
      g_hash_table_insert (index, n, GUINT_TO_POINTER (i + 1));
      /* An output nobody reads dies right after it is made. */
      for (guint k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] != NULL)
          g_hash_table_insert (last, n->outputs[k], GUINT_TO_POINTER (i + 1));
    }
  g_hash_table_iter_init (&iter, uses);
  while (g_hash_table_iter_next (&iter, &key, &users))
    {
      FbValue *v = key;
      guint at = GPOINTER_TO_UINT (g_hash_table_lookup (last, v));
      if (v->graph != graph)
        continue;
      for (guint u = 0; u < ((GPtrArray *) users)->len; u++)
        at = MAX (at, GPOINTER_TO_UINT (g_hash_table_lookup (
                          index, g_ptr_array_index ((GPtrArray *) users, u))));
      g_hash_table_insert (last, v, GUINT_TO_POINTER (at));
    }
  for (guint i = 0; i < graph->outputs->len; i++)
    g_hash_table_remove (last, g_ptr_array_index (graph->outputs, i));
  g_hash_table_iter_init (&iter, last);
  while (g_hash_table_iter_next (&iter, &key, &users))
    {
      guint at = GPOINTER_TO_UINT (users);
      if (at == 0)
        continue;
      if (plan->release[at - 1] == NULL)
        plan->release[at - 1] = g_ptr_array_new ();
      g_ptr_array_add (plan->release[at - 1], key);
    }
  return plan;
}

static Plan *
ctx_plan (FbInterpCtx *ctx, const FbGraph *graph)
{
  Plan *plan = g_hash_table_lookup (ctx->plans, graph);

  if (plan == NULL)
    {
      plan = plan_build (graph);
      g_hash_table_insert (ctx->plans, (gpointer) graph, plan);
    }
  return plan;
}

/* ---- running graphs ----------------------------------------------------------------------- */

static gboolean run_node (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                          FbTensor **out, GError **error);

/* Runs graph in a fresh environment below parent, with its inputs bound to inputs (NULL entries
 * leave an input unbound, for initializers); returns its outputs or NULL. */
static GPtrArray *
run_graph (FbInterpCtx *ctx, const FbGraph *graph, Env *parent, FbTensor *const *inputs,
           guint n_inputs, const FbNode *owner, GError **error)
{
  g_autoptr(Env) env = env_new (parent);
  g_autoptr(GPtrArray) outputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  Env *saved = ctx->env;
  Plan *plan = ctx_plan (ctx, graph);

  for (guint i = 0; i < graph->inputs->len && i < n_inputs; i++)
    if (inputs[i] != NULL)
      g_hash_table_insert (env->values, g_ptr_array_index (graph->inputs, i),
                           fb_tensor_ref (inputs[i]));

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *node = g_ptr_array_index (graph->nodes, i);
      g_autofree FbTensor **in = g_new0 (FbTensor *, MAX (node->n_inputs, 1));
      g_autofree FbTensor **out = g_new0 (FbTensor *, MAX (node->n_outputs, 1));
      gboolean ok;

      if (g_cancellable_is_cancelled (ctx->cancellable))
        {
          g_set_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_CANCELLED, "cancelled");
          return NULL;
        }
      for (guint k = 0; k < node->n_inputs; k++)
        {
          FbValue *v = node->inputs[k];
          if (v == NULL)
            continue;
          in[k] = env_lookup (env, v);
          if (in[k] == NULL)
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_INPUT,
                                    "input '%s' has no value (an unfed graph input?)", v->name),
                   NULL;
        }
      ctx->env = env;
      ok = run_node (ctx, node, in, out, error);
      ctx->env = saved;
      if (!ok)
        return NULL;
      for (guint k = 0; k < node->n_outputs; k++)
        {
          if (node->outputs[k] != NULL && out[k] != NULL)
            g_hash_table_replace (env->values, node->outputs[k], out[k]);
          else
            fb_tensor_unref (out[k]);
        }
      if (plan->release[i] != NULL)
        for (guint r = 0; r < plan->release[i]->len; r++)
          g_hash_table_remove (env->values, g_ptr_array_index (plan->release[i], r));
    }

  for (guint i = 0; i < graph->outputs->len; i++)
    {
      const FbValue *v = g_ptr_array_index (graph->outputs, i);
      FbTensor *t = env_lookup (env, v);
      if (t == NULL)
        {
          if (owner != NULL)
            return _fb_interp_fail (error, owner, FB_INTERP_ERROR_RUNTIME,
                                    "subgraph output '%s' has no value", v->name), NULL;
          g_set_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_RUNTIME,
                       "graph output '%s' has no value", v->name);
          return NULL;
        }
      g_ptr_array_add (outputs, fb_tensor_ref (t));
    }
  return g_steal_pointer (&outputs);
}

static gboolean
run_node (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
          GError **error)
{
  const OpEntry *entry;
  const FbOpInfo *info;
  guint required;

  if ((guint) node->op >= FB_OP_COUNT || op_table[node->op].kernel == NULL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "operator %s%s%s is not supported",
                            node->domain && *node->domain ? node->domain : "",
                            node->domain && *node->domain ? "." : "", node->op_type);
  entry = &op_table[node->op];
  info = fb_op_info (node->op);
  /* The kernels index their required inputs freely: arity is checked here once for all. Loop's
   * first two inputs (trip count, condition) and Scan-8's sequence_lens are the only optional
   * ones inside min_inputs. */
  if (node->n_inputs > info->max_inputs || node->n_inputs < info->min_inputs ||
      node->n_outputs < info->min_outputs || node->n_outputs > info->max_outputs)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "has %u inputs and %u outputs, outside what the operator takes",
                            node->n_inputs, node->n_outputs);
  required = node->op == FB_OP_LOOP || node->op == FB_OP_SCAN ? 0 : info->min_inputs;
  for (guint k = 0; k < required; k++)
    if (in[k] == NULL)
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "input %u is required", k);
  for (guint k = 0; k < node->n_inputs; k++)
    {
      if (in[k] == NULL)
        continue;
      /* Sequences and optionals reach only their own operators, Identity and control flow
       * (a Loop carries them); every other kernel reads tensor data. */
      if (in[k]->kind != FB_KIND_TENSOR)
        {
          if (fb_op_has_flag (node->op, FB_OPF_SEQUENCE) || node->op == FB_OP_IDENTITY ||
              node->op == FB_OP_LOOP)
            continue;
          g_autofree char *what = fb_tensor_describe (in[k]);
          return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "input %u is %s, but %s takes tensors", k, what,
                                  node->op_type ? node->op_type : fb_op_name (node->op));
        }
      if (!fb_dtype_is_known (in[k]->dtype))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                "input %u has element type %s, which is not supported", k,
                                fb_dtype_name (in[k]->dtype));
    }
  if (entry->check != NULL && !entry->check (node, error))
    return FALSE;
  if (!entry->kernel (ctx, node, in, out, error))
    {
      for (guint k = 0; k < node->n_outputs; k++)
        g_clear_pointer (&out[k], fb_tensor_unref);
      return FALSE;
    }
  return TRUE;
}

/* ---- control flow ------------------------------------------------------------------------- */

static gboolean
bind_outputs (const FbNode *node, GPtrArray *results, FbTensor **out, GError **error)
{
  if (results->len != node->n_outputs)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "its body makes %u outputs but the node has %u", results->len,
                            node->n_outputs);
  for (guint k = 0; k < node->n_outputs; k++)
    out[k] = fb_tensor_ref (g_ptr_array_index (results, k));
  return TRUE;
}

static gboolean
run_control_if (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                GError **error)
{
  g_autoptr(GPtrArray) results = NULL;
  int64_t cond;
  FbGraph *branch;

  if (!_fb_interp_scalar_i64 (node, in[0], "the condition", &cond, error))
    return FALSE;
  branch = fb_node_attr_graph (node, cond ? "then_branch" : "else_branch");
  if (branch == NULL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "has no %s graph",
                            cond ? "then_branch" : "else_branch");
  results = run_graph (ctx, branch, ctx->env, NULL, 0, node, error);
  return results != NULL && bind_outputs (node, results, out, error);
}

GPtrArray *
_fb_interp_run_body (FbInterpCtx *ctx, const FbGraph *body, FbTensor *const *inputs,
                     guint n_inputs, const FbNode *owner, GError **error)
{
  return run_graph (ctx, body, ctx->env, inputs, n_inputs, owner, error);
}

gboolean
_fb_interp_check_cancelled (FbInterpCtx *ctx, GError **error)
{
  if (!g_cancellable_is_cancelled (ctx->cancellable))
    return TRUE;
  g_set_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_CANCELLED, "cancelled");
  return FALSE;
}

static gboolean
run_control_fused (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                   GError **error)
{
  g_autoptr(GPtrArray) results = NULL;
  FbGraph *body = fb_node_attr_graph (node, "body");

  if (body == NULL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "has no body graph");
  if (body->inputs->len != node->n_inputs)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "its body takes %u inputs but the node has %u", body->inputs->len,
                            node->n_inputs);
  results = run_graph (ctx, body, ctx->env, in, node->n_inputs, node, error);
  return results != NULL && bind_outputs (node, results, out, error);
}

/* Stacks per-iteration scan values along a new leading axis. */
static FbTensor *
stack_scans (const FbNode *node, GPtrArray *parts, const FbValue *body_out, GError **error)
{
  int64_t dims[FB_MAX_RANK];
  FbTensor *first, *y;
  gsize chunk;

  if (parts->len == 0)
    {
      /* No iteration ran: an empty stack whose item shape comes from the body's declaration. */
      int rank = 1;
      dims[0] = 0;
      if (body_out->shape.rank > 0 && body_out->shape.rank < FB_MAX_RANK)
        for (int i = 0; i < body_out->shape.rank; i++)
          dims[rank++] = MAX (body_out->shape.dim[i], 0);
      return _fb_interp_new (node, body_out->dtype != FB_DTYPE_UNDEFINED ? body_out->dtype
                                                                        : FB_DTYPE_FLOAT32,
                             rank, dims, error);
    }
  first = g_ptr_array_index (parts, 0);
  if (first->kind != FB_KIND_TENSOR)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "scan output '%s' is not a tensor", body_out->name), NULL;
  if (first->rank >= FB_MAX_RANK)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "scan output '%s' would exceed rank %d", body_out->name, FB_MAX_RANK),
           NULL;
  dims[0] = parts->len;
  memcpy (dims + 1, first->dims, sizeof (int64_t) * first->rank);
  y = _fb_interp_new (node, first->dtype, first->rank + 1, dims, error);
  if (y == NULL)
    return NULL;
  chunk = fb_tensor_nbytes (first);
  for (guint i = 0; i < parts->len; i++)
    {
      FbTensor *p = g_ptr_array_index (parts, i);
      FbShape a = fb_tensor_shape (p), b = fb_tensor_shape (first);
      if (p->dtype != first->dtype || !fb_shape_equal (&a, &b))
        {
          fb_tensor_unref (y);
          return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "scan output '%s' changes shape or type between iterations",
                                  body_out->name), NULL;
        }
      memcpy ((char *) fb_tensor_data_mut (y) + i * chunk, fb_tensor_data (p), chunk);
    }
  return y;
}

static gboolean
run_control_loop (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                  GError **error)
{
  FbGraph *body = fb_node_attr_graph (node, "body");
  guint n_carried = node->n_inputs - 2, n_scan;
  g_autoptr(GPtrArray) state = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_autoptr(GPtrArray) scans = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  int64_t max_trips = G_MAXINT64, cond = 1;
  Env *env = ctx->env;

  if (body == NULL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "has no body graph");
  if (body->inputs->len != n_carried + 2 || body->outputs->len < n_carried + 1 ||
      node->n_outputs != body->outputs->len - 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "its body (%u inputs, %u outputs) does not match its %u loop-carried "
                            "values and %u outputs", body->inputs->len, body->outputs->len,
                            n_carried, node->n_outputs);
  n_scan = body->outputs->len - 1 - n_carried;
  if (in[0] != NULL && !_fb_interp_scalar_i64 (node, in[0], "the trip count M", &max_trips, error))
    return FALSE;
  if (in[1] != NULL && !_fb_interp_scalar_i64 (node, in[1], "the condition", &cond, error))
    return FALSE;
  for (guint k = 0; k < n_carried; k++)
    {
      if (in[2 + k] == NULL)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "loop-carried input %u is missing", k);
      g_ptr_array_add (state, fb_tensor_ref (in[2 + k]));
    }
  for (guint k = 0; k < n_scan; k++)
    g_ptr_array_add (scans, g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref));

  for (int64_t i = 0; i < max_trips && cond; i++)
    {
      g_autofree FbTensor **body_in = g_new0 (FbTensor *, n_carried + 2);
      g_autoptr(FbTensor) iter = fb_tensor_new_scalar_i64 (i);
      g_autoptr(FbTensor) cond_in = fb_tensor_new (FB_DTYPE_BOOL, 0, NULL, NULL);
      g_autoptr(GPtrArray) results = NULL;

      *(uint8_t *) fb_tensor_data_mut (cond_in) = 1;
      body_in[0] = iter;
      body_in[1] = cond_in;
      for (guint k = 0; k < n_carried; k++)
        body_in[2 + k] = g_ptr_array_index (state, k);
      results = run_graph (ctx, body, env, body_in, n_carried + 2, node, error);
      if (results == NULL)
        return FALSE;
      if (!_fb_interp_scalar_i64 (node, g_ptr_array_index (results, 0),
                                  "the body's condition output", &cond, error))
        return FALSE;
      for (guint k = 0; k < n_carried; k++)
        {
          fb_tensor_unref (state->pdata[k]);
          state->pdata[k] = fb_tensor_ref (g_ptr_array_index (results, 1 + k));
        }
      for (guint k = 0; k < n_scan; k++)
        g_ptr_array_add (g_ptr_array_index (scans, k),
                         fb_tensor_ref (g_ptr_array_index (results, 1 + n_carried + k)));
      if (g_cancellable_is_cancelled (ctx->cancellable))
        {
          g_set_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_CANCELLED, "cancelled");
          return FALSE;
        }
    }
  for (guint k = 0; k < n_carried; k++)
    out[k] = fb_tensor_ref (g_ptr_array_index (state, k));
  for (guint k = 0; k < n_scan; k++)
    {
      out[n_carried + k] = stack_scans (node, g_ptr_array_index (scans, k),
                                        g_ptr_array_index (body->outputs, 1 + n_carried + k),
                                        error);
      if (out[n_carried + k] == NULL)
        return FALSE;
    }
  return TRUE;
}

/* ---- the public entry points -------------------------------------------------------------- */

static void
ctx_init (FbInterpCtx *ctx, GCancellable *cancellable, Env *env)
{
  ctx->cancellable = cancellable;
  ctx->plans = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) plan_free);
  ctx->env = env;
}

gboolean
fb_interp_check_input (const FbValue *v, const FbTensor *t, GError **error)
{
  gboolean fits = TRUE;

  g_return_val_if_fail (v != NULL && t != NULL, FALSE);
  if (v->kind != FB_KIND_TENSOR || t->kind != FB_KIND_TENSOR)
    return _fb_interp_check_container_input (v, t, error);
  if (v->dtype != FB_DTYPE_UNDEFINED && t->dtype != v->dtype)
    fits = FALSE;
  if (v->shape.rank >= 0)
    {
      if (v->shape.rank != t->rank)
        fits = FALSE;
      for (int d = 0; fits && d < t->rank; d++)
        if (v->shape.dim[d] >= 0 && v->shape.dim[d] != t->dims[d])
          fits = FALSE;
    }
  if (!fits)
    {
      FbShape got = fb_tensor_shape (t);
      g_autofree char *want_s = fb_shape_to_string (&v->shape);
      g_autofree char *got_s = fb_shape_to_string (&got);
      g_set_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_INPUT,
                   "input '%s' expects %s %s, got %s %s", v->name, fb_dtype_name (v->dtype),
                   want_s, fb_dtype_name (t->dtype), got_s);
    }
  return fits;
}

GPtrArray *
fb_interp_run (const FbGraph *graph, GPtrArray *inputs, GCancellable *cancellable, GError **error)
{
  FbInterpCtx ctx;
  GPtrArray *outputs;

  g_return_val_if_fail (graph != NULL, NULL);
  g_return_val_if_fail (inputs != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (inputs->len != graph->inputs->len)
    {
      g_set_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_INPUT,
                   "the graph takes %u inputs, %u were given", graph->inputs->len, inputs->len);
      return NULL;
    }
  for (guint i = 0; i < inputs->len; i++)
    {
      const FbValue *v = g_ptr_array_index (graph->inputs, i);
      const FbTensor *t = g_ptr_array_index (inputs, i);
      if (t == NULL && v->constant == NULL)
        {
          g_set_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_INPUT,
                       "input %u '%s' was not given", i, v->name);
          return NULL;
        }
      if (t != NULL && !fb_interp_check_input (v, t, error))
        return NULL;
    }
  ctx_init (&ctx, cancellable, NULL);
  outputs = run_graph (&ctx, graph, NULL, (FbTensor *const *) inputs->pdata, inputs->len, NULL,
                       error);
  g_hash_table_unref (ctx.plans);
  return outputs;
}

gboolean
fb_interp_node (const FbNode *node, FbTensor *const *inputs, FbTensor **outputs, GError **error)
{
  return fb_interp_node_with_scope (node, inputs, outputs, NULL, error);
}

gboolean
fb_interp_node_with_scope (const FbNode *node, FbTensor *const *inputs, FbTensor **outputs,
                           GHashTable *outer, GError **error)
{
  g_autoptr(Env) env = env_new (NULL);
  FbInterpCtx ctx;
  gboolean ok;

  g_return_val_if_fail (node != NULL, FALSE);
  g_return_val_if_fail (inputs != NULL || node->n_inputs == 0, FALSE);
  g_return_val_if_fail (outputs != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  for (guint k = 0; k < node->n_outputs; k++)
    outputs[k] = NULL;
  /* The enclosing graph's values become the environment the node's bodies run below. */
  if (outer != NULL)
    {
      GHashTableIter iter;
      gpointer key, value;
      g_hash_table_iter_init (&iter, outer);
      while (g_hash_table_iter_next (&iter, &key, &value))
        if (value != NULL)
          g_hash_table_insert (env->values, key, fb_tensor_ref (value));
    }
  ctx_init (&ctx, NULL, env);
  ok = run_node (&ctx, node, inputs, outputs, error);
  g_hash_table_unref (ctx.plans);
  for (guint k = 0; ok && k < node->n_outputs; k++)
    if (node->outputs[k] == NULL)
      g_clear_pointer (&outputs[k], fb_tensor_unref);
  return ok;
}

static gboolean graph_supported (const FbGraph *graph);

gboolean
fb_interp_supports (const FbNode *node)
{
  const OpEntry *entry;

  g_return_val_if_fail (node != NULL, FALSE);
  if ((guint) node->op >= FB_OP_COUNT || op_table[node->op].kernel == NULL)
    return FALSE;
  entry = &op_table[node->op];
  for (guint k = 0; k < node->n_inputs; k++)
    {
      const FbValue *v = node->inputs[k];
      if (v != NULL && v->dtype != FB_DTYPE_UNDEFINED && !fb_dtype_is_known (v->dtype))
        return FALSE;
    }
  if (entry->check != NULL && !entry->check (node, NULL))
    return FALSE;
  for (guint a = 0; a < node->n_attrs; a++)
    if (node->attrs[a].type == FB_ATTR_GRAPH && !graph_supported (node->attrs[a].g))
      return FALSE;
  return TRUE;
}

static gboolean
graph_supported (const FbGraph *graph)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    if (!fb_interp_supports (g_ptr_array_index (graph->nodes, i)))
      return FALSE;
  return TRUE;
}
