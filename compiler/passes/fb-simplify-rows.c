/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Rules of the simplify pass that move rows across a linear layer.
 *
 * A linear layer (MatMul by a constant matrix, maybe + a bias along its last axis) maps each row
 * of its input to a row of its output, whatever order the rows come in. A movement that keeps
 * every row whole (a Reshape or Transpose that leaves the last axis where it is, a Gather along
 * another axis: a row move) can therefore run on either side of it. Where it stands decides
 * what it can be merged with: a window attention partitions its rows into windows before the
 * qkv layer and splits that layer's output into heads after it (two copies), then joins the
 * heads before the output layer and reverses the partition after it (two more). Moved next to
 * each other, each pair is one copy, and the output layer's result is the image-ordered tensor
 * its residual is added to, which a product reads as its C operand.
 *
 *   rows-after-product   M(x) @ W (+ b), then a copy     -> (x @ W (+ b)) moved by M, then the copy
 *   rows-before-product  a copy, then (y @ W (+ b)) moved by M -> the copy, then M(y) @ W (+ b)
 *
 * Each fires only where it puts the move beside another copy (a Transpose or Gather, maybe
 * behind Reshapes), so the two never undo each other, and where every value it moves has the
 * move as its only reader, so nothing is computed twice. */
#include "fb-simplify-private.h"

#define MAX_MOVES 8

/* node keeps every row of its input whole, moving or renaming rows only. */
static gboolean
is_row_move (const FbNode *node)
{
  const FbValue *in, *out;
  int rank;

  if (node == NULL || node->n_inputs < 1 || node->n_outputs < 1 || node->outputs[0] == NULL)
    return FALSE;
  in = node->inputs[0];
  out = node->outputs[0];
  if (in == NULL || !fb_shape_is_static (&in->shape) || !fb_shape_is_static (&out->shape) ||
      in->shape.rank < 2 || out->shape.rank < 2 ||
      in->shape.dim[in->shape.rank - 1] != out->shape.dim[out->shape.rank - 1])
    return FALSE;
  rank = in->shape.rank;
  switch (node->op)
    {
    case FB_OP_RESHAPE:
      return TRUE;
    case FB_OP_TRANSPOSE:
      {
        int64_t perm[FB_MAX_RANK];
        return _fb_transpose_perm (node, rank, perm) && perm[rank - 1] == rank - 1;
      }
    case FB_OP_GATHER:
      {
        int axis;
        const FbValue *indices = fb_node_input (node, 1);
        return indices != NULL && indices->constant != NULL &&
               fb_axis_normalize (fb_node_attr_int (node, "axis", 0), rank, &axis) &&
               axis != rank - 1;
      }
    default:
      return FALSE;
    }
}

/* A move that copies data (a Reshape only renames it). */
static gboolean
copies (const FbNode *node)
{
  return node->op == FB_OP_TRANSPOSE || node->op == FB_OP_GATHER;
}

/* value is read, through Reshapes only, by a copy that reads nothing else of it. */
static gboolean
copied_next (FbRewriter *rw, const FbValue *value)
{
  for (int hops = 0; hops < MAX_MOVES; hops++)
    {
      FbNode *reader = fb_rewrite_sole_reader (rw, value);
      if (reader == NULL || reader->n_inputs < 1 || reader->inputs[0] != value)
        return FALSE;
      if (copies (reader))
        return TRUE;
      if (reader->op != FB_OP_RESHAPE)
        return FALSE;
      value = reader->outputs[0];
    }
  return FALSE;
}

/* value was made, through Reshapes only, by a copy whose result nothing else reads. */
static gboolean
copied_before (FbRewriter *rw, const FbValue *value)
{
  for (int hops = 0; hops < MAX_MOVES; hops++)
    {
      FbNode *producer = value->producer;
      if (producer == NULL || producer->n_inputs < 1 || fb_rewrite_sole_reader (rw, value) == NULL)
        return FALSE;
      if (copies (producer))
        return TRUE;
      if (producer->op != FB_OP_RESHAPE)
        return FALSE;
      value = producer->inputs[0];
    }
  return FALSE;
}

/* A MatMul by a constant matrix, and the Add of its bias when it has one. */
typedef struct {
  FbNode  *matmul;
  FbNode  *add;      /* NULL without a bias */
  FbValue *bias;
} Linear;

/* bias (of rank at most rank) varies along the last axis only. */
static gboolean
bias_along_rows (const FbValue *bias, int rank)
{
  const FbTensor *t = bias->constant;
  if (t == NULL || t->rank > rank)
    return FALSE;
  for (int i = 0; i + 1 < t->rank; i++)
    if (t->dims[i] != 1)
      return FALSE;
  return TRUE;
}

/* The linear layer whose last node is last: last itself when it is the MatMul, or an Add of the
 * MatMul's result (which nothing else reads) and a bias along the last axis. */
static gboolean
linear_layer (FbRewriter *rw, FbNode *last, Linear *layer)
{
  FbNode *mm = last;

  layer->add = NULL;
  layer->bias = NULL;
  if (last->op == FB_OP_ADD && last->n_inputs == 2)
    {
      for (guint i = 0; i < 2 && mm == last; i++)
        {
          FbNode *p = last->inputs[i]->producer;
          if (p != NULL && p->op == FB_OP_MATMUL && fb_rewrite_sole_reader (rw, last->inputs[i]) == last)
            {
              mm = p;
              layer->bias = last->inputs[1 - i];
            }
        }
      if (mm == last)
        return FALSE;
      layer->add = last;
    }
  if (mm->op != FB_OP_MATMUL || mm->n_inputs != 2)
    return FALSE;
  layer->matmul = mm;
  const FbValue *a = mm->inputs[0], *w = mm->inputs[1], *out = last->outputs[0];
  int rank = out->shape.rank;
  return w->constant != NULL && w->shape.rank == 2 && a->dtype == FB_DTYPE_FLOAT32 &&
         out->dtype == FB_DTYPE_FLOAT32 && fb_shape_is_static (&out->shape) && rank >= 2 &&
         a->shape.rank == rank && (layer->bias == NULL || bias_along_rows (layer->bias, rank));
}

/* move again, reading x, whose rows are now width long. Intermediate results get values of their
 * own; the caller gives the last one the replaced root's. */
static FbNode *
move_again (FbRewriter *rw, const FbNode *move, FbValue *x, int64_t width)
{
  FbGraph *g = fb_rewrite_graph (rw);
  const FbShape *out = &move->outputs[0]->shape;
  FbNode *node = NULL;

  switch (move->op)
    {
    case FB_OP_RESHAPE:
      {
        int64_t rank = out->rank;
        g_autoptr(FbTensor) target = fb_tensor_new (FB_DTYPE_INT64, 1, &rank, NULL);
        if (target == NULL)
          return NULL;
        for (int i = 0; i < out->rank; i++)
          fb_tensor_set_f64 (target, i, (double) (i + 1 == out->rank ? width : out->dim[i]));
        FbValue *in[2] = { x, _fb_constant_new (g, "shape", target) };
        node = fb_rewrite_node (rw, FB_OP_RESHAPE, move, in, 2, 1);
        node->opset = MAX (node->opset, 14);   /* the target as an input, not an attribute */
        break;
      }
    case FB_OP_TRANSPOSE:
      {
        int64_t perm[FB_MAX_RANK];
        int rank = move->inputs[0]->shape.rank;
        if (!_fb_transpose_perm (move, rank, perm))
          return NULL;
        node = fb_rewrite_node (rw, FB_OP_TRANSPOSE, move, &x, 1, 1);
        _fb_node_set_ints (g, node, "perm", perm, rank);
        break;
      }
    case FB_OP_GATHER:
      {
        int axis;
        FbValue *in[2] = { x, move->inputs[1] };
        if (!fb_axis_normalize (fb_node_attr_int (move, "axis", 0), move->inputs[0]->shape.rank,
                                &axis))
          return NULL;
        node = fb_rewrite_node (rw, FB_OP_GATHER, move, in, 2, 1);
        _fb_node_set_int (g, node, "axis", axis);
        break;
      }
    default:
      return NULL;
    }
  fb_node_add_prov (g, node, move->prov, move->n_prov);
  return node;
}

/* The linear layer again, reading x; the caller places its last node. */
static FbNode *
linear_again (FbRewriter *rw, const Linear *layer, FbValue *x)
{
  FbGraph *g = fb_rewrite_graph (rw);
  FbValue *mm_in[2] = { x, layer->matmul->inputs[1] };
  FbNode *mm = fb_rewrite_node (rw, FB_OP_MATMUL, layer->matmul, mm_in, 2, 1);

  fb_node_add_prov (g, mm, layer->matmul->prov, layer->matmul->n_prov);
  if (layer->add == NULL)
    return mm;
  FbValue *add_in[2] = { fb_rewrite_output (rw, mm, 0), layer->bias };
  if (!fb_rewrite_infer (rw, mm))
    return NULL;
  FbNode *add = fb_rewrite_node (rw, FB_OP_ADD, layer->add, add_in, 2, 1);
  fb_node_add_prov (g, add, layer->add->prov, layer->add->n_prov);
  return add;
}

/* Whether one of moves copies data. */
static gboolean
any_copy (FbNode *const *moves, int n)
{
  for (int i = 0; i < n; i++)
    if (copies (moves[i]))
      return TRUE;
  return FALSE;
}

/* root: a linear layer (its MatMul, or its bias Add) whose input was moved and whose output is
 * copied next. */
static gboolean
rows_after_product (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  Linear layer;
  FbNode *moves[MAX_MOVES];   /* the moves before the layer, last first */
  int n = 0;
  FbValue *x;

  if (!linear_layer (rw, root, &layer) || !copied_next (rw, root->outputs[0]))
    return FALSE;
  x = layer.matmul->inputs[0];
  while (n < MAX_MOVES && x->producer != NULL && is_row_move (x->producer) &&
         fb_rewrite_sole_reader (rw, x) == (n == 0 ? layer.matmul : moves[n - 1]))
    {
      moves[n++] = x->producer;
      x = x->producer->inputs[0];
    }
  if (!any_copy (moves, n) || x->shape.rank < 2 ||
      (layer.bias != NULL && !bias_along_rows (layer.bias, x->shape.rank)))
    return FALSE;

  int64_t width = root->outputs[0]->shape.dim[root->outputs[0]->shape.rank - 1];
  FbNode *node = linear_again (rw, &layer, x);
  for (int i = n - 1; node != NULL && i >= 0; i--)
    {
      FbValue *v = fb_rewrite_output (rw, node, 0);
      if (!fb_rewrite_infer (rw, node))
        return FALSE;
      node = move_again (rw, moves[i], v, width);
    }
  if (node == NULL)
    return FALSE;
  fb_rewrite_replace_root (rw, m, node);
  return fb_rewrite_infer (rw, node);
}

/* root: the last of the row moves after a linear layer whose input was copied just before. */
static gboolean
rows_before_product (FbRewriter *rw, FbNode *root, const FbMatch *m)
{
  FbNode *moves[MAX_MOVES];   /* the moves after the layer, last (root) first */
  FbNode *next = fb_rewrite_sole_reader (rw, root->outputs[0]);
  Linear layer;
  int n = 0;
  FbValue *y;

  if (!is_row_move (root) || (next != NULL && next->inputs[0] == root->outputs[0] && is_row_move (next)))
    return FALSE;
  moves[n++] = root;
  y = root->inputs[0];
  while (n < MAX_MOVES && y->producer != NULL && is_row_move (y->producer) &&
         fb_rewrite_sole_reader (rw, y) == moves[n - 1])
    {
      moves[n++] = y->producer;
      y = y->producer->inputs[0];
    }
  if (y->producer == NULL || fb_rewrite_sole_reader (rw, y) != moves[n - 1] ||
      !linear_layer (rw, y->producer, &layer) || !any_copy (moves, n) ||
      !copied_before (rw, layer.matmul->inputs[0]) ||
      (layer.bias != NULL && !bias_along_rows (layer.bias, root->outputs[0]->shape.rank)))
    return FALSE;

  const FbValue *a = layer.matmul->inputs[0];
  int64_t width = a->shape.dim[a->shape.rank - 1];
  FbValue *v = layer.matmul->inputs[0];
  for (int i = n - 1; i >= 0; i--)
    {
      FbNode *node = move_again (rw, moves[i], v, width);
      if (node == NULL)
        return FALSE;
      v = fb_rewrite_output (rw, node, 0);
      if (!fb_rewrite_infer (rw, node))
        return FALSE;
    }
  FbNode *last = linear_again (rw, &layer, v);
  if (last == NULL)
    return FALSE;
  fb_rewrite_replace_root (rw, m, last);
  return fb_rewrite_infer (rw, last);
}

#define X FB_P_ANY (1)

const FbRule _fb_simplify_rows[] = {
  { "rows-after-product", 0,
    { FB_P_OP (MATMUL, X, FB_P_CONST_ANY (2)),
      FB_P_OP (ADD, FB_P_OP (MATMUL, X, FB_P_CONST_ANY (2)), FB_P_CONST_ANY (3)) },
    rows_after_product },
  { "rows-before-product", 0,
    { FB_P_OP (RESHAPE, X), FB_P_OP (TRANSPOSE, X), FB_P_OP (GATHER, X) },
    rows_before_product },
};

#undef X

const guint _fb_simplify_n_rows = G_N_ELEMENTS (_fb_simplify_rows);
