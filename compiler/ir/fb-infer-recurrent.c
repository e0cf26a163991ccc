/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for the recurrent layers GRU and LSTM: Y [seq, directions, batch, hidden] (or batch
 * first with layout=1, opset 14), Y_h and, for LSTM, Y_c [directions, batch, hidden]. */
#include "fb-infer-private.h"

#include <string.h>

typedef struct {
  int64_t dirs;
  int64_t seq;
  int64_t batch;
  int64_t hidden;
  const char *seq_sym, *batch_sym;
  gboolean batch_first;
} Rnn;

/* Error unless input i (when present and shaped) matches want, unknown extents matching all. */
static gboolean
check_shape (const FbNode *node, guint i, const char *what, const FbShape *want, GError **error)
{
  FbShape s = _fb_infer_input_shape (node, i);
  gboolean ok = s.rank < 0 || s.rank == want->rank;

  for (int d = 0; ok && s.rank >= 0 && d < s.rank; d++)
    ok = s.dim[d] < 0 || want->dim[d] < 0 || s.dim[d] == want->dim[d];
  if (!ok)
    {
      g_autofree char *have = fb_shape_to_string (&s);
      g_autofree char *expected = fb_shape_to_string (want);
      return _fb_infer_fail (error, node, "%s has shape %s, expected %s", what, have, expected);
    }
  return TRUE;
}

static FbShape
shape3 (int64_t a, int64_t b, int64_t c)
{
  int64_t d[3] = { a, b, c };
  return fb_shape_make (3, d);
}

/* Reads and checks everything GRU and LSTM share; gates is 3 (GRU) or 4 (LSTM). */
static gboolean
rnn_common (const FbNode *node, int64_t gates, Rnn *rnn, FbDType *dtype, GError **error)
{
  static const guint floats[] = { 0, 1, 2, 3, 5, 6, 7 };
  const char *direction = fb_node_attr_string (node, "direction", "forward");
  FbValue *x = _fb_infer_require (node, 0, error);
  FbShape w, r;
  int64_t input_size = FB_DIM_UNKNOWN, gh, layout = 0;
  const FbAttr *hidden;

  if (x == NULL || _fb_infer_require (node, 1, error) == NULL ||
      _fb_infer_require (node, 2, error) == NULL ||
      !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
      !_fb_infer_same_type (node, floats, G_N_ELEMENTS (floats), dtype, error) ||
      !_fb_infer_check_type (node, 4, FB_TYPES_INDEX, error))
    return FALSE;
  if (_fb_infer_opset (node) >= 14)
    layout = fb_node_attr_int (node, "layout", 0);
  else if (!_fb_infer_no_attr (node, "layout", error))
    return FALSE;
  if (layout != 0 && layout != 1)
    return _fb_infer_fail (error, node, "layout %" G_GINT64_FORMAT " is neither 0 nor 1", layout);
  rnn->batch_first = layout == 1;
  if (strcmp (direction, "forward") == 0 || strcmp (direction, "reverse") == 0)
    rnn->dirs = 1;
  else if (strcmp (direction, "bidirectional") == 0)
    rnn->dirs = 2;
  else
    return _fb_infer_fail (error, node, "direction '%s' is not defined", direction);

  rnn->seq = rnn->batch = FB_DIM_UNKNOWN;
  rnn->seq_sym = rnn->batch_sym = NULL;
  if (x->shape.rank >= 0)
    {
      int s = rnn->batch_first ? 1 : 0, b = rnn->batch_first ? 0 : 1;
      if (x->shape.rank != 3)
        return _fb_infer_fail (error, node, "X must have rank 3, not %d", x->shape.rank);
      rnn->seq = x->shape.dim[s];
      rnn->seq_sym = x->shape.sym[s];
      rnn->batch = x->shape.dim[b];
      rnn->batch_sym = x->shape.sym[b];
      input_size = x->shape.dim[2];
    }

  /* hidden_size is optional: the recurrence weights R [dirs, gates*hidden, hidden] tell it. */
  w = node->inputs[1]->shape;
  r = node->inputs[2]->shape;
  hidden = fb_node_attr (node, "hidden_size");
  rnn->hidden = FB_DIM_UNKNOWN;
  if (hidden != NULL && hidden->type == FB_ATTR_INT)
    {
      if (hidden->i <= 0)
        return _fb_infer_fail (error, node, "hidden_size %" G_GINT64_FORMAT " is not positive",
                               hidden->i);
      rnn->hidden = hidden->i;
    }
  else if (r.rank == 3 && r.dim[2] >= 0)
    rnn->hidden = r.dim[2];
  else if (w.rank == 3 && w.dim[1] >= 0 && w.dim[1] % gates == 0)
    rnn->hidden = w.dim[1] / gates;
  if (!_fb_dim_mul (rnn->hidden, gates, &gh) || (rnn->hidden >= 0 && gh > G_MAXINT64 / 2))
    return _fb_infer_fail (error, node, "hidden_size %" G_GINT64_FORMAT " is too large",
                           rnn->hidden);

  {
    FbShape want_w = shape3 (rnn->dirs, gh, input_size);
    FbShape want_r = shape3 (rnn->dirs, gh, rnn->hidden);
    int64_t db[2] = { rnn->dirs, gh >= 0 ? 2 * gh : FB_DIM_UNKNOWN };
    FbShape want_b = fb_shape_make (2, db);
    FbShape want_len = fb_shape_make (1, &rnn->batch);
    FbShape want_h = rnn->batch_first ? shape3 (rnn->batch, rnn->dirs, rnn->hidden)
                                      : shape3 (rnn->dirs, rnn->batch, rnn->hidden);
    if (!check_shape (node, 1, "W", &want_w, error) ||
        !check_shape (node, 2, "R", &want_r, error) ||
        !check_shape (node, 3, "B", &want_b, error) ||
        !check_shape (node, 4, "sequence_lens", &want_len, error) ||
        !check_shape (node, 5, "initial_h", &want_h, error))
      return FALSE;
    if (gates == 4)
      {
        int64_t dp[2] = { rnn->dirs, rnn->hidden >= 0 ? 3 * rnn->hidden : FB_DIM_UNKNOWN };
        FbShape want_p = fb_shape_make (2, dp);
        if (!check_shape (node, 6, "initial_c", &want_h, error) ||
            !check_shape (node, 7, "P", &want_p, error))
          return FALSE;
      }
  }
  return TRUE;
}

static gboolean
rnn_outputs (const FbNode *node, const Rnn *rnn, FbDType dtype, guint n_state, GError **error)
{
  FbShape y = _fb_shape_of_rank (4);
  FbShape h;
  int s = rnn->batch_first ? 1 : 0, b = rnn->batch_first ? 0 : 2, d = rnn->batch_first ? 2 : 1;

  y.dim[s] = rnn->seq;
  y.sym[s] = rnn->seq_sym;
  y.dim[b] = rnn->batch;
  y.sym[b] = rnn->batch_sym;
  y.dim[d] = rnn->dirs;
  y.dim[3] = rnn->hidden;
  h = rnn->batch_first ? shape3 (rnn->batch, rnn->dirs, rnn->hidden)
                       : shape3 (rnn->dirs, rnn->batch, rnn->hidden);
  h.sym[rnn->batch_first ? 0 : 1] = rnn->batch_sym;
  if (!_fb_infer_set_output (node, 0, dtype, &y, error))
    return FALSE;
  for (guint i = 1; i <= n_state; i++)
    if (!_fb_infer_set_output (node, i, dtype, &h, error))
      return FALSE;
  return TRUE;
}

gboolean
_fb_infer_gru (FbGraph *graph, FbNode *node, GError **error)
{
  FbDType dtype;
  Rnn rnn;

  if (node->n_inputs > 6)
    return _fb_infer_invalid (error, node, "GRU takes at most 6 inputs, not %u", node->n_inputs);
  return rnn_common (node, 3, &rnn, &dtype, error) &&
         rnn_outputs (node, &rnn, dtype, 1, error);
}

gboolean
_fb_infer_lstm (FbGraph *graph, FbNode *node, GError **error)
{
  FbDType dtype;
  Rnn rnn;

  return rnn_common (node, 4, &rnn, &dtype, error) &&
         rnn_outputs (node, &rnn, dtype, 2, error);
}

/* RNN: one gate, so W is [dirs, hidden, input] and R [dirs, hidden, hidden]. */
gboolean
_fb_infer_rnn (FbGraph *graph, FbNode *node, GError **error)
{
  FbDType dtype;
  Rnn rnn;

  if (node->n_inputs > 6)
    return _fb_infer_invalid (error, node, "RNN takes at most 6 inputs, not %u", node->n_inputs);
  return rnn_common (node, 1, &rnn, &dtype, error) &&
         rnn_outputs (node, &rnn, dtype, 1, error);
}
