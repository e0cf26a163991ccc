/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shape and dtype inference: the dispatch by operator, the graph walk and input pinning. The
 * operators live in fb-infer-FAMILY.c, the helpers they share in fb-infer-util.c. */
#include "fb-infer-private.h"

#include <stdlib.h>
#include <string.h>

/* ---- dispatch ------------------------------------------------------------------------------- */

static gboolean
infer_unknown (FbGraph *graph, FbNode *node, GError **error)
{
  /* Nothing computes an unsupported operator, so nothing can be said about its outputs; whatever
   * the file declared for them stays. */
  return TRUE;
}

/* One name per operator of ops.def: an operator added there without a line here is a build
 * error (an undeclared INFER_ identifier), not a silent hole in the table. */
#define INFER_UNKNOWN                 infer_unknown
#define INFER_ABS                     _fb_infer_unary
#define INFER_ADD                     _fb_infer_binary
#define INFER_AND                     _fb_infer_binary
#define INFER_ARGMAX                  _fb_infer_argmax
#define INFER_AVERAGE_POOL            _fb_infer_pool
#define INFER_BATCH_NORMALIZATION     _fb_infer_batch_norm
#define INFER_CAST                    _fb_infer_cast
#define INFER_CEIL                    _fb_infer_unary
#define INFER_CLIP                    _fb_infer_clip
#define INFER_CONCAT                  _fb_infer_concat
#define INFER_CONSTANT                _fb_infer_constant
#define INFER_CONSTANT_OF_SHAPE       _fb_infer_constant_of_shape
#define INFER_CONV                    _fb_infer_conv
#define INFER_CONV_TRANSPOSE          _fb_infer_conv_transpose
#define INFER_COS                     _fb_infer_unary
#define INFER_CUMSUM                  _fb_infer_cumsum
#define INFER_DEPTH_TO_SPACE          _fb_infer_depth_to_space
#define INFER_DIV                     _fb_infer_binary
#define INFER_DROPOUT                 _fb_infer_dropout
#define INFER_EINSUM                  _fb_infer_einsum
#define INFER_ELU                     _fb_infer_unary
#define INFER_EQUAL                   _fb_infer_binary
#define INFER_ERF                     _fb_infer_unary
#define INFER_EXP                     _fb_infer_unary
#define INFER_EXPAND                  _fb_infer_expand
#define INFER_FLATTEN                 _fb_infer_flatten
#define INFER_FLOOR                   _fb_infer_unary
#define INFER_GATHER                  _fb_infer_gather
#define INFER_GATHER_ELEMENTS         _fb_infer_gather_elements
#define INFER_GELU                    _fb_infer_unary
#define INFER_GEMM                    _fb_infer_gemm
#define INFER_GLOBAL_AVERAGE_POOL     _fb_infer_global_pool
#define INFER_GLOBAL_MAX_POOL         _fb_infer_global_pool
#define INFER_GREATER                 _fb_infer_binary
#define INFER_GREATER_OR_EQUAL        _fb_infer_binary
#define INFER_GRU                     _fb_infer_gru
#define INFER_HARD_SIGMOID            _fb_infer_unary
#define INFER_HARD_SWISH              _fb_infer_unary
#define INFER_IDENTITY                _fb_infer_identity
#define INFER_IF                      _fb_infer_if
#define INFER_INSTANCE_NORMALIZATION  _fb_infer_instance_norm
#define INFER_IS_NAN                  _fb_infer_unary
#define INFER_LAYER_NORMALIZATION     _fb_infer_layer_norm
#define INFER_LEAKY_RELU              _fb_infer_unary
#define INFER_LESS                    _fb_infer_binary
#define INFER_LESS_OR_EQUAL           _fb_infer_binary
#define INFER_LOG                     _fb_infer_unary
#define INFER_LOG_SOFTMAX             _fb_infer_softmax
#define INFER_LOOP                    _fb_infer_loop
#define INFER_LRN                     _fb_infer_lrn
#define INFER_LSTM                    _fb_infer_lstm
#define INFER_MATMUL                  _fb_infer_matmul
#define INFER_MAX                     _fb_infer_variadic
#define INFER_MAX_POOL                _fb_infer_pool
#define INFER_MEAN                    _fb_infer_variadic
#define INFER_MIN                     _fb_infer_variadic
#define INFER_MOD                     _fb_infer_binary
#define INFER_MUL                     _fb_infer_binary
#define INFER_NEG                     _fb_infer_unary
#define INFER_NOT                     _fb_infer_unary
#define INFER_OR                      _fb_infer_binary
#define INFER_PAD                     _fb_infer_pad
#define INFER_POW                     _fb_infer_binary
#define INFER_PRELU                   _fb_infer_prelu
#define INFER_RANGE                   _fb_infer_range
#define INFER_RECIPROCAL              _fb_infer_unary
#define INFER_REDUCE_L2               _fb_infer_reduce
#define INFER_REDUCE_MAX              _fb_infer_reduce
#define INFER_REDUCE_MEAN             _fb_infer_reduce
#define INFER_REDUCE_MIN              _fb_infer_reduce
#define INFER_REDUCE_PROD             _fb_infer_reduce
#define INFER_REDUCE_SUM              _fb_infer_reduce
#define INFER_RELU                    _fb_infer_unary
#define INFER_RESHAPE                 _fb_infer_reshape
#define INFER_RESIZE                  _fb_infer_resize
#define INFER_ROUND                   _fb_infer_unary
#define INFER_SCATTER_ND              _fb_infer_scatter_nd
#define INFER_SELU                    _fb_infer_unary
#define INFER_SHAPE                   _fb_infer_shape
#define INFER_SIGMOID                 _fb_infer_unary
#define INFER_SIGN                    _fb_infer_unary
#define INFER_SIN                     _fb_infer_unary
#define INFER_SIZE                    _fb_infer_size
#define INFER_SLICE                   _fb_infer_slice
#define INFER_SOFTMAX                 _fb_infer_softmax
#define INFER_SOFTPLUS                _fb_infer_unary
#define INFER_SOFTSIGN                _fb_infer_unary
#define INFER_SPACE_TO_DEPTH          _fb_infer_space_to_depth
#define INFER_SPLIT                   _fb_infer_split
#define INFER_SQRT                    _fb_infer_unary
#define INFER_SQUEEZE                 _fb_infer_squeeze
#define INFER_SUB                     _fb_infer_binary
#define INFER_SUM                     _fb_infer_variadic
#define INFER_SWISH                   _fb_infer_unary
#define INFER_TANH                    _fb_infer_unary
#define INFER_TILE                    _fb_infer_tile
#define INFER_TOPK                    _fb_infer_topk
#define INFER_TRANSPOSE               _fb_infer_transpose
#define INFER_TRILU                   _fb_infer_trilu
#define INFER_UNSQUEEZE               _fb_infer_unsqueeze
#define INFER_UPSAMPLE                _fb_infer_upsample
#define INFER_WHERE                   _fb_infer_where
#define INFER_XOR                     _fb_infer_binary
/* conformance operators */
#define INFER_ACOS                    _fb_infer_math_unary
#define INFER_ACOSH                   _fb_infer_math_unary
#define INFER_ARGMIN                  _fb_infer_argmax
#define INFER_ASIN                    _fb_infer_math_unary
#define INFER_ASINH                   _fb_infer_math_unary
#define INFER_ATAN                    _fb_infer_math_unary
#define INFER_ATANH                   _fb_infer_math_unary
#define INFER_BIT_SHIFT               _fb_infer_bit_shift
#define INFER_BLACKMAN_WINDOW         _fb_infer_window
#define INFER_COMPRESS                _fb_infer_data_sized
#define INFER_DEQUANTIZE_LINEAR       _fb_infer_quantize
#define INFER_DYNAMIC_QUANTIZE_LINEAR _fb_infer_quantize
#define INFER_GATHER_ND               _fb_infer_gather_nd
#define INFER_GRID_SAMPLE             _fb_infer_grid_sample
#define INFER_HAMMING_WINDOW          _fb_infer_window
#define INFER_HANN_WINDOW             _fb_infer_window
#define INFER_NON_MAX_SUPPRESSION     _fb_infer_data_sized
#define INFER_NON_ZERO                _fb_infer_data_sized
#define INFER_ONE_HOT                 _fb_infer_one_hot
#define INFER_QUANTIZE_LINEAR         _fb_infer_quantize
#define INFER_DET                     _fb_infer_det
#define INFER_CONV_INTEGER            _fb_infer_qlinear
#define INFER_MATMUL_INTEGER          _fb_infer_qlinear
#define INFER_QLINEAR_CONV            _fb_infer_qlinear
#define INFER_QLINEAR_MATMUL          _fb_infer_qlinear
#define INFER_REVERSE_SEQUENCE        _fb_infer_reverse_sequence
#define INFER_RNN                     _fb_infer_rnn
#define INFER_SCATTER                 _fb_infer_scatter_elements
#define INFER_SCATTER_ELEMENTS        _fb_infer_scatter_elements
#define INFER_UNIQUE                  _fb_infer_data_sized
#define INFER_CAST_LIKE               _fb_infer_cast_like
#define INFER_CELU                    _fb_infer_math_unary
#define INFER_COSH                    _fb_infer_math_unary
#define INFER_EYE_LIKE                _fb_infer_eye_like
#define INFER_HARDMAX                 _fb_infer_hardmax
#define INFER_IS_INF                  _fb_infer_math_unary
#define INFER_MISH                    _fb_infer_math_unary
#define INFER_NLL_LOSS                _fb_infer_loss
#define INFER_REDUCE_L1               _fb_infer_reduce
#define INFER_REDUCE_LOG_SUM          _fb_infer_reduce
#define INFER_REDUCE_LOG_SUM_EXP      _fb_infer_reduce
#define INFER_REDUCE_SUM_SQUARE       _fb_infer_reduce
#define INFER_SHRINK                  _fb_infer_math_unary
#define INFER_SINH                    _fb_infer_math_unary
#define INFER_SOFTMAX_CE_LOSS         _fb_infer_loss
#define INFER_TAN                     _fb_infer_math_unary
#define INFER_THRESHOLDED_RELU        _fb_infer_math_unary
#define INFER_DFT                     _fb_infer_dft
#define INFER_MAX_UNPOOL              _fb_infer_max_unpool
#define INFER_MEAN_VARIANCE_NORMALIZATION _fb_infer_mvn
#define INFER_MEL_WEIGHT_MATRIX       _fb_infer_mel_weight_matrix
#define INFER_ROI_ALIGN               _fb_infer_roi_align
#define INFER_SCAN                    _fb_infer_scan
#define INFER_STFT                    _fb_infer_stft
#define INFER_TFIDF_VECTORIZER        _fb_infer_tfidf
#define INFER_CONCAT_FROM_SEQUENCE    _fb_infer_concat_from_sequence
#define INFER_OPTIONAL                _fb_infer_optional
#define INFER_OPTIONAL_GET_ELEMENT    _fb_infer_optional_get_element
#define INFER_OPTIONAL_HAS_ELEMENT    _fb_infer_optional_has_element
#define INFER_SEQUENCE_AT             _fb_infer_sequence_at
#define INFER_SEQUENCE_CONSTRUCT      _fb_infer_sequence_construct
#define INFER_SEQUENCE_EMPTY          _fb_infer_sequence_empty
#define INFER_SEQUENCE_ERASE          _fb_infer_sequence_erase
#define INFER_SEQUENCE_INSERT         _fb_infer_sequence_insert
#define INFER_SEQUENCE_LENGTH         _fb_infer_sequence_length
#define INFER_SEQUENCE_MAP            _fb_infer_sequence_map
#define INFER_SPLIT_TO_SEQUENCE       _fb_infer_split_to_sequence
#define INFER_FUSED                   _fb_infer_fused

static const FbInferFunc infer_table[] = {
#define FB_OP(id, name, flags, min_in, max_in, min_out, max_out) [FB_OP_##id] = INFER_##id,
#include "ops.def"
#undef FB_OP
};

G_STATIC_ASSERT (G_N_ELEMENTS (infer_table) == FB_OP_COUNT);

gboolean
fb_infer_node (FbGraph *graph, FbNode *node, GError **error)
{
  g_return_val_if_fail (graph != NULL, FALSE);
  g_return_val_if_fail (node != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((int) node->op <= FB_OP_UNKNOWN || (int) node->op >= FB_OP_COUNT)
    return TRUE;
  /* Sequences and optionals reach only the operators made for them, Identity and control
   * flow; anything else would read an element shape as its operand's shape. */
  if (!fb_op_has_flag (node->op, FB_OPF_SEQUENCE) && node->op != FB_OP_IDENTITY &&
      node->op != FB_OP_IF && node->op != FB_OP_LOOP && !_fb_infer_check_tensors (node, error))
    return FALSE;
  return infer_table[node->op] (graph, node, error);
}

gboolean
fb_infer_graph (FbGraph *graph, GError **error)
{
  g_return_val_if_fail (graph != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* If, Loop and fused nodes infer their bodies themselves: a body's input shapes come from the
   * node's inputs, and the node's outputs from the body's outputs. */
  for (guint i = 0; i < graph->nodes->len; i++)
    if (!fb_infer_node (graph, g_ptr_array_index (graph->nodes, i), error))
      return FALSE;
  return TRUE;
}

/* ---- pinning inputs ------------------------------------------------------------------------- */

static FbValue *
find_input (FbGraph *graph, const char *name)
{
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      FbValue *v = g_ptr_array_index (graph->inputs, i);
      if (v->name != NULL && strcmp (v->name, name) == 0)
        return v;
    }
  return NULL;
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

static gboolean
check_pin (FbGraph *graph, const char *name, const FbShape *pin, GHashTable *sym_values,
           GError **error)
{
  FbValue *v = find_input (graph, name);
  g_autofree char *pin_text = NULL;
  g_autofree char *have_text = NULL;

  if (v == NULL)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID,
                   fb_graph_lookup_value (graph, name) != NULL
                     ? "'%s' is not an input of the graph, so its shape cannot be pinned"
                     : "the graph has no input named '%s'", name);
      return FALSE;
    }
  pin_text = fb_shape_to_string (pin);
  have_text = fb_shape_to_string (&v->shape);
  if (pin->rank < 0 || pin->rank > FB_MAX_RANK)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
                   "the shape pinned for input '%s' has no valid rank", name);
      return FALSE;
    }
  if (v->shape.rank >= 0 && v->shape.rank != pin->rank)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
                   "input '%s' has rank %d (%s) but the pinned shape %s has rank %d",
                   name, v->shape.rank, have_text, pin_text, pin->rank);
      return FALSE;
    }
  for (int d = 0; d < pin->rank && v->shape.rank >= 0; d++)
    {
      int64_t have = v->shape.dim[d];
      const char *sym = v->shape.sym[d];
      gpointer seen;

      if (pin->dim[d] < 0)
        continue;
      if (have >= 0 && have != pin->dim[d])
        {
          g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
                       "dimension %d of input '%s' (%s) is fixed at %" G_GINT64_FORMAT
                       ", the pinned shape %s says %" G_GINT64_FORMAT,
                       d, name, have_text, have, pin_text, pin->dim[d]);
          return FALSE;
        }
      if (have >= 0 || sym == NULL)
        continue;
      if (g_hash_table_lookup_extended (sym_values, sym, NULL, &seen) &&
          *(int64_t *) seen != pin->dim[d])
        {
          g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
                       "symbolic dimension '%s' is pinned to both %" G_GINT64_FORMAT " and %"
                       G_GINT64_FORMAT, sym, *(int64_t *) seen, pin->dim[d]);
          return FALSE;
        }
      g_hash_table_insert (sym_values, (gpointer) sym, g_memdup2 (&pin->dim[d], sizeof (int64_t)));
    }
  return TRUE;
}

/* Every pin checked against graph, in name order so that the first problem reported does not
 * depend on hash order; fills sym_values (symbol -> int64_t*) and *sorted (the names). */
static gboolean
check_pins (FbGraph *graph, GHashTable *pins, GHashTable *sym_values, gpointer **sorted,
            guint *n_sorted, GError **error)
{
  g_autofree gpointer *names = g_hash_table_get_keys_as_array (pins, n_sorted);

  qsort (names, *n_sorted, sizeof (gpointer), compare_names);
  for (guint i = 0; i < *n_sorted; i++)
    if (!check_pin (graph, names[i], g_hash_table_lookup (pins, names[i]), sym_values, error))
      return FALSE;
  if (sorted != NULL)
    *sorted = g_steal_pointer (&names);
  return TRUE;
}

gboolean
fb_graph_check_pins (const FbGraph *graph, GHashTable *pins, GError **error)
{
  g_autoptr(GHashTable) sym_values = NULL;
  guint n_names = 0;

  g_return_val_if_fail (graph != NULL, FALSE);
  g_return_val_if_fail (pins != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  sym_values = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  /* check_pin only looks the inputs up. */
  return check_pins ((FbGraph *) graph, pins, sym_values, NULL, &n_names, error);
}

gboolean
fb_graph_pin_inputs (FbGraph *graph, GHashTable *pins, GError **error)
{
  g_autoptr(GHashTable) sym_values = NULL;   /* const char* (interned) -> int64_t* */
  g_autofree gpointer *names = NULL;
  guint n_names = 0;

  g_return_val_if_fail (graph != NULL, FALSE);
  g_return_val_if_fail (pins != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* Everything is checked before anything changes: a failed pin leaves the graph as it was. */
  sym_values = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  if (!check_pins (graph, pins, sym_values, &names, &n_names, error))
    return FALSE;

  for (guint i = 0; i < n_names; i++)
    {
      FbValue *v = find_input (graph, names[i]);
      const FbShape *pin = g_hash_table_lookup (pins, names[i]);
      FbShape s = v->shape.rank >= 0 ? v->shape : _fb_shape_of_rank (pin->rank);

      for (int d = 0; d < pin->rank; d++)
        if (pin->dim[d] >= 0)
          {
            s.dim[d] = pin->dim[d];
            s.sym[d] = NULL;
          }
      v->shape = s;
    }

  /* A symbolic name stands for one extent across the model, so the other inputs that use it get
   * the pinned value too (a batch pinned on input_ids also fixes attention_mask's batch). */
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      FbValue *v = g_ptr_array_index (graph->inputs, i);
      for (int d = 0; d < v->shape.rank; d++)
        {
          int64_t *value;
          if (v->shape.dim[d] >= 0 || v->shape.sym[d] == NULL)
            continue;
          value = g_hash_table_lookup (sym_values, v->shape.sym[d]);
          if (value != NULL)
            {
              v->shape.dim[d] = *value;
              v->shape.sym[d] = NULL;
            }
        }
    }
  return TRUE;
}
