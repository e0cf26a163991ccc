/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuse-elementwise: loop fusion of what reads and writes memory once per element.
 *
 * First, each reduction (Softmax, LogSoftmax, LayerNormalization, Reduce*) takes its
 * elementwise prologue (the tree of elementwise producers of its data input that nothing else
 * reads) and its elementwise epilogue (readers of its result, and their readers, whose other
 * inputs are computed before the reduction) into one FUSED node of kind "reduction". Then the
 * remaining elementwise operators form trees: a node joins the tree of its only reader when
 * that reader is elementwise too. Each tree of two or more becomes a FUSED "elementwise" node.
 * Tree-shaped groups cannot create cycles: no member but the root is read from outside.
 *
 * Movement that copies each output element from one input element (index maps: a Transpose
 * that keeps the last axis last, a Gather of constant indices, a Slice, and the reshapes
 * between them) joins such trees too, as a window attention's roll, window partition and
 * residual add become one pass over the tokens instead of four. Such a tree is a FUSED
 * "movement" node (never computed in place over its input), formed only where it saves a
 * pass: two or more members that would each be a kernel, and not a Transpose with scalings
 * by one number alone, which a matrix product reads through its strides and alpha.
 * FUSEBENCH_MOVEMENT_FUSION=0 leaves movement out of the trees, for measuring.
 *
 * Requires: fuse-epilogue done (contractions keep their epilogues), shapes inferred.
 * Preserves: ids of the values the rest of the graph reads; members keep their ids in the body.
 * Invalidates: the node list (re-sorted). */
#include "fb-pass-private.h"

typedef struct {
  FbPassContext *ctx;
  GHashTable    *uses;
  GHashTable    *claimed;     /* nodes already in a group */
  GHashTable    *position;    /* node -> index + 1 in the order at the start of the pass */
} Fuser;

static gboolean
is_elementwise (const FbNode *n)
{
  return fb_op_has_flag (n->op, FB_OPF_ELEMENTWISE) && n->op != FB_OP_DROPOUT &&
         n->n_outputs == 1 && n->outputs[0] != NULL && !fb_node_has_containers (n);
}

static gboolean
is_reduction (const FbNode *n)
{
  switch (n->op)
    {
    case FB_OP_SOFTMAX: case FB_OP_LOG_SOFTMAX: case FB_OP_LAYER_NORMALIZATION:
    case FB_OP_REDUCE_L2: case FB_OP_REDUCE_MAX: case FB_OP_REDUCE_MEAN: case FB_OP_REDUCE_MIN:
    case FB_OP_REDUCE_PROD: case FB_OP_REDUCE_SUM:
      break;
    default:
      return FALSE;
    }
  for (guint k = 1; k < n->n_outputs; k++)
    if (n->outputs[k] != NULL)
      return FALSE;
  return n->outputs[0] != NULL;
}

static gboolean
is_view (const FbNode *n)
{
  switch (n->op)
    {
    case FB_OP_RESHAPE: case FB_OP_FLATTEN: case FB_OP_SQUEEZE: case FB_OP_UNSQUEEZE:
      return TRUE;
    default:
      return FALSE;
    }
}

static gboolean
inputs_constant_from (const FbNode *n, guint first)
{
  for (guint k = first; k < n->n_inputs; k++)
    if (n->inputs[k] != NULL && n->inputs[k]->constant == NULL)
      return FALSE;
  return TRUE;
}

/* See the file's comment. Static shapes only: the lowering indexes by them. */
static gboolean
is_index_map (const FbNode *n)
{
  if (n->n_outputs != 1 || n->outputs[0] == NULL || n->n_inputs < 1 || n->inputs[0] == NULL ||
      !fb_shape_is_static (&n->outputs[0]->shape) || !fb_shape_is_static (&n->inputs[0]->shape) ||
      fb_node_has_containers (n))
    return FALSE;
  int rank = n->inputs[0]->shape.rank;
  switch (n->op)
    {
    case FB_OP_TRANSPOSE:
      {
        /* Rows move whole: each thread's reads stay side by side, on a CPU and a GPU. */
        guint np = 0;
        const int64_t *perm = fb_node_attr_ints (n, "perm", &np);
        return rank >= 2 && np == (guint) rank && perm[rank - 1] == rank - 1;
      }
    case FB_OP_GATHER:
      return n->n_inputs == 2 && n->inputs[1] != NULL && n->inputs[1]->constant != NULL &&
             n->inputs[1]->constant->rank <= 1;
    case FB_OP_SLICE:
      return inputs_constant_from (n, 1);
    default:
      return is_view (n);
    }
}

/* A scaling by one number: a Mul or Div with a single-element constant operand. */
static gboolean
is_scalar_scaling (const FbNode *n)
{
  if ((n->op != FB_OP_MUL && n->op != FB_OP_DIV) || n->n_inputs != 2)
    return FALSE;
  for (guint k = 0; k < 2; k++)
    {
      const FbValue *v = n->inputs[k];
      if (v && v->constant && v->constant->numel == 1)
        return TRUE;
    }
  return FALSE;
}

static gboolean
available (Fuser *f, const FbNode *n)
{
  return !g_hash_table_contains (f->claimed, n) && !_fb_pass_no_fuse (f->ctx, n);
}

static gboolean
users_inside (Fuser *f, const FbValue *v, GHashTable *group)
{
  GPtrArray *users = g_hash_table_lookup (f->uses, v);

  if (v->is_output || users == NULL)
    return FALSE;
  for (guint i = 0; i < users->len; i++)
    if (!g_hash_table_contains (group, g_ptr_array_index (users, i)))
      return FALSE;
  return TRUE;
}

/* Adds the elementwise producers (and index maps, with movement) of n's activation inputs
 * whose results only the group reads, and theirs, recursively. An index map's own inputs past
 * the first are its constant indices and bounds. */
static void
grow_up (Fuser *f, FbNode *n, GHashTable *group, gboolean data_input_only, gboolean movement)
{
  guint limit = data_input_only || (movement && is_index_map (n)) ? MIN (n->n_inputs, 1)
                                                                  : n->n_inputs;

  for (guint k = 0; k < limit; k++)
    {
      FbValue *v = n->inputs[k];
      FbNode *p = v ? v->producer : NULL;
      if (p == NULL || g_hash_table_contains (group, p) ||
          !(is_elementwise (p) || (movement && is_index_map (p))) ||
          !available (f, p) || !users_inside (f, v, group))
        continue;
      g_hash_table_add (group, p);
      grow_up (f, p, group, FALSE, movement);
    }
}

/* A member that moves nothing a kernel would: a reshape, or a Gather of one index (a run of
 * its input that the lowering makes a view, as attention's q, k, v = qkv[0], qkv[1], qkv[2]). */
static gboolean
is_free_move (const FbNode *n)
{
  return is_view (n) || (n->op == FB_OP_GATHER && is_index_map (n) &&
                         n->inputs[1]->constant->numel == 1);
}

/* Whether a tree with movement in it is worth a "movement" group (see the file's comment):
 * two or more of its members would each be a kernel, one of them a move, and it is not one
 * move with scalings by one number alone: a matrix product reads such a Transpose, Slice or
 * Gather through its strides or as a view, and takes the scaling into its alpha. */
static gboolean
movement_pays (GHashTable *group)
{
  guint kernels = 0, moves = 0, scalings = 0;
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, group);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      const FbNode *n = key;
      if (is_free_move (n))
        continue;
      kernels++;
      moves += is_index_map (n) && !is_elementwise (n);
      scalings += is_scalar_scaling (n);
    }
  return moves > 0 && kernels >= 2 && !(moves == 1 && kernels == 1 + scalings);
}

/* Whether the group holds any movement (a view or an index map). */
static gboolean
has_movement (GHashTable *group)
{
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, group);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (is_index_map (key) && !is_elementwise (key))
      return TRUE;
  return FALSE;
}

static guint
pos (Fuser *f, const FbNode *n)
{
  return GPOINTER_TO_UINT (g_hash_table_lookup (f->position, n));
}

/* An outside input of an epilogue member must exist before the reduction runs, or fusing
 * would make the group wait on its own result. */
static gboolean
inputs_ready (Fuser *f, const FbNode *n, GHashTable *group, guint reduction_pos)
{
  for (guint k = 0; k < n->n_inputs; k++)
    {
      FbValue *v = n->inputs[k];
      if (v == NULL || v->producer == NULL || g_hash_table_contains (group, v->producer))
        continue;
      if (pos (f, v->producer) == 0 || pos (f, v->producer) >= reduction_pos)
        return FALSE;
    }
  return TRUE;
}

static void
grow_down (Fuser *f, GHashTable *group, GPtrArray *frontier, guint reduction_pos)
{
  while (frontier->len > 0)
    {
      FbValue *v = g_ptr_array_steal_index (frontier, frontier->len - 1);
      GPtrArray *users = g_hash_table_lookup (f->uses, v);
      for (guint u = 0; users && u < users->len; u++)
        {
          FbNode *n = g_ptr_array_index (users, u);
          if (g_hash_table_contains (group, n) || !is_elementwise (n) || !available (f, n) ||
              !inputs_ready (f, n, group, reduction_pos))
            continue;
          g_hash_table_add (group, n);
          g_ptr_array_add (frontier, n->outputs[0]);
        }
    }
}

/* The group's nodes in the order of the pass's start. */
static GPtrArray *
ordered_members (Fuser *f, GPtrArray *order, GHashTable *group)
{
  GPtrArray *members = g_ptr_array_new ();

  for (guint i = 0; i < order->len; i++)
    if (g_hash_table_contains (group, g_ptr_array_index (order, i)))
      g_ptr_array_add (members, g_ptr_array_index (order, i));
  return members;
}

static void
claim_and_fuse (Fuser *f, FbGraph *graph, GPtrArray *order, GHashTable *group, const char *kind,
                FbNode *anchor)
{
  g_autoptr(GPtrArray) members = ordered_members (f, order, group);

  for (guint m = 0; m < members->len; m++)
    g_hash_table_add (f->claimed, g_ptr_array_index (members, m));
  _fb_fuse_group (f->ctx, graph, members, kind, anchor, f->uses);
}

gboolean
_fb_pass_fuse_elementwise (FbPassContext *ctx, FbGraph *graph, GError **error)
{
  g_autoptr(GHashTable) uses = fb_graph_build_uses (graph);
  g_autoptr(GHashTable) claimed = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) position = g_hash_table_new (NULL, NULL);
  g_autoptr(GPtrArray) order = g_ptr_array_copy (graph->nodes, NULL, NULL);
  Fuser f = { ctx, uses, claimed, position };
  guint n_reductions = 0, n_trees = 0, n_moves = 0, n_members = 0;

  for (guint i = 0; i < order->len; i++)
    g_hash_table_insert (position, g_ptr_array_index (order, i), GUINT_TO_POINTER (i + 1));

  for (guint i = 0; i < order->len; i++)
    {
      FbNode *r = g_ptr_array_index (order, i);
      g_autoptr(GHashTable) group = NULL;
      g_autoptr(GPtrArray) frontier = NULL;

      if (!is_reduction (r) || !available (&f, r))
        continue;
      group = g_hash_table_new (NULL, NULL);
      g_hash_table_add (group, r);
      grow_up (&f, r, group, TRUE, FALSE);
      frontier = g_ptr_array_new ();
      g_ptr_array_add (frontier, r->outputs[0]);
      grow_down (&f, group, frontier, pos (&f, r));
      if (g_hash_table_size (group) < 2)
        continue;
      n_members += g_hash_table_size (group);
      claim_and_fuse (&f, graph, order, group, "reduction", r);
      n_reductions++;
    }

  /* Most downstream first, so every tree is found from its root. A tree with movement that
   * does not pay is grown again without it. */
  gboolean movement = g_strcmp0 (g_getenv ("FUSEBENCH_MOVEMENT_FUSION"), "0") != 0;
  for (guint i = order->len; i-- > 0;)
    {
      FbNode *root = g_ptr_array_index (order, i);
      g_autoptr(GHashTable) group = NULL;
      gboolean moves;

      if (!(is_elementwise (root) || (movement && is_index_map (root) && !is_view (root))) ||
          !available (&f, root))
        continue;
      group = g_hash_table_new (NULL, NULL);
      g_hash_table_add (group, root);
      grow_up (&f, root, group, FALSE, movement);
      moves = has_movement (group);
      if (moves && !movement_pays (group))
        {
          if (!is_elementwise (root))
            continue;
          g_hash_table_remove_all (group);
          g_hash_table_add (group, root);
          grow_up (&f, root, group, FALSE, FALSE);
          moves = FALSE;
        }
      if (g_hash_table_size (group) < 2)
        continue;
      n_members += g_hash_table_size (group);
      claim_and_fuse (&f, graph, order, group, moves ? "movement" : "elementwise", root);
      n_trees += !moves;
      n_moves += moves;
    }

  if (n_reductions + n_trees + n_moves == 0)
    return TRUE;
  if (!fb_graph_toposort (graph, error))
    return FALSE;
  fb_graph_remove_dead (graph);
  if (n_moves)
    _fb_pass_note (ctx, "fused %u nodes into %u reduction, %u elementwise and %u movement groups",
                   n_members, n_reductions, n_trees, n_moves);
  else
    _fb_pass_note (ctx, "fused %u nodes into %u reduction and %u elementwise groups", n_members,
                   n_reductions, n_trees);
  return TRUE;
}
