/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fold-constants: computes at compile time every node whose inputs are all known, with the
 * reference interpreter, and the Shape and Size of values whose shape is static. Exporters emit
 * Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains around every view; once the shapes are
 * pinned they all collapse into constant Reshape targets. Shape inference runs again on every
 * node as it goes, so a Reshape whose target just became known gets a known output shape, and
 * the next Shape of it folds too.
 *
 * A folded node's provenance moves to the nodes that read its result: they now stand for it.
 * Folding never materializes a tensor bigger than FOLD_LIMIT unless its inputs were at least as
 * big (a Transpose of a weight folds, a ConstantOfShape of a million zeros does not).
 *
 * Requires: a graph in topological order with inferred shapes.
 * Preserves: value ids and names (a folded value keeps both and gains a constant).
 * Invalidates: producers of folded values (now NULL), the node list. */
#include "fb-pass-private.h"
#include "fb-interp.h"

#define FOLD_LIMIT (1 << 20)   /* bytes */

typedef struct {
  GArray *prov;     /* guint: provenance of the folded nodes this constant stands for */
  GArray *ids;      /* guint: ids of those nodes, for their fates */
} Carried;

static void
carried_free (Carried *c)
{
  g_array_unref (c->prov);
  g_array_unref (c->ids);
  g_free (c);
}

static gboolean
has_subgraph (const FbNode *n)
{
  for (guint a = 0; a < n->n_attrs; a++)
    if (n->attrs[a].type == FB_ATTR_GRAPH)
      return TRUE;
  return FALSE;
}

static int64_t
value_bytes (const FbValue *v)
{
  int64_t numel = fb_shape_numel (&v->shape, NULL);
  if (numel < 0 || v->dtype == FB_DTYPE_UNDEFINED)
    return -1;
  return numel * (int64_t) MAX (fb_dtype_size (v->dtype), 1);
}

/* Whether folding n would stay within the size budget. */
static gboolean
within_limit (const FbNode *n)
{
  int64_t in_bytes = 0, out_bytes = 0;

  /* A Constant's value is the tensor it already holds: folding shares it, whatever its size. */
  if (n->op == FB_OP_CONSTANT)
    return TRUE;
  for (guint k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] && n->inputs[k]->constant)
      in_bytes += fb_tensor_nbytes (n->inputs[k]->constant);
  for (guint k = 0; k < n->n_outputs; k++)
    {
      int64_t b;
      if (n->outputs[k] == NULL)
        continue;
      b = value_bytes (n->outputs[k]);
      if (b < 0)
        return FALSE;   /* an unknown size may be anything */
      out_bytes += b;
    }
  return out_bytes <= MAX ((int64_t) FOLD_LIMIT, in_bytes);
}

static FbTensor *
shape_tensor (const FbNode *n, const FbValue *in)
{
  int64_t rank = in->shape.rank;
  int64_t start = fb_node_attr_int (n, "start", 0);
  int64_t end = fb_node_attr_int (n, "end", rank);
  FbTensor *t;
  int64_t len;

  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = CLAMP (start, 0, rank);
  end = CLAMP (end, 0, rank);
  len = MAX (end - start, 0);
  t = fb_tensor_new (FB_DTYPE_INT64, 1, &len, NULL);
  for (int64_t i = 0; i < len; i++)
    fb_tensor_set_f64 (t, i, (double) in->shape.dim[start + i]);
  return t;
}

/* Computes n's outputs into outs when it can be folded; FALSE to leave it alone. */
static gboolean
evaluate (const FbNode *n, FbTensor **outs, GError **error)
{
  FbValue *in0 = fb_node_input (n, 0);
  gboolean all_const = TRUE;
  g_autofree FbTensor **ins = NULL;

  /* A constant is a tensor: sequences and optionals are made when the model runs. */
  if (n->op == FB_OP_UNKNOWN || n->op == FB_OP_FUSED || has_subgraph (n) ||
      fb_op_has_flag (n->op, FB_OPF_CONTROL | FB_OPF_SEQUENCE) || fb_node_has_containers (n))
    return FALSE;
  if ((n->op == FB_OP_SHAPE || n->op == FB_OP_SIZE) && in0 && in0->constant == NULL)
    {
      gboolean overflow = FALSE;
      int64_t numel;
      if (!fb_shape_is_static (&in0->shape))
        return FALSE;
      if (n->op == FB_OP_SHAPE)
        {
          outs[0] = shape_tensor (n, in0);
          return TRUE;
        }
      numel = fb_shape_numel (&in0->shape, &overflow);
      if (overflow)
        return FALSE;
      outs[0] = fb_tensor_new_scalar_i64 (numel);
      return TRUE;
    }
  for (guint k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] && n->inputs[k]->constant == NULL)
      all_const = FALSE;
  if (!all_const || !within_limit (n) || !fb_interp_supports (n))
    return FALSE;
  ins = g_new0 (FbTensor *, MAX (n->n_inputs, 1));
  for (guint k = 0; k < n->n_inputs; k++)
    ins[k] = n->inputs[k] ? n->inputs[k]->constant : NULL;
  return fb_interp_node (n, ins, outs, error);
}

/* The computed tensors must say what inference said; a disagreement leaves the node alone. */
static gboolean
agrees (const FbNode *n, FbTensor **outs)
{
  for (guint k = 0; k < n->n_outputs; k++)
    {
      FbValue *v = n->outputs[k];
      FbShape s;
      if (v == NULL)
        continue;
      if (outs[k] == NULL)
        return FALSE;
      if (v->dtype != FB_DTYPE_UNDEFINED && v->dtype != outs[k]->dtype)
        return FALSE;
      s = fb_tensor_shape (outs[k]);
      if (v->shape.rank >= 0)
        {
          if (v->shape.rank != s.rank)
            return FALSE;
          for (int d = 0; d < s.rank; d++)
            if (v->shape.dim[d] >= 0 && v->shape.dim[d] != s.dim[d])
              return FALSE;
        }
    }
  return TRUE;
}

static void
array_add_unique (GArray *a, const guint *items, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      gboolean seen = FALSE;
      for (guint j = 0; j < a->len && !seen; j++)
        seen = g_array_index (a, guint, j) == items[i];
      if (!seen)
        g_array_append_val (a, items[i]);
    }
}

static void
count_op (GHashTable *hist, const FbNode *n)
{
  gpointer c = g_hash_table_lookup (hist, n->op_type);
  g_hash_table_insert (hist, (gpointer) n->op_type, GUINT_TO_POINTER (GPOINTER_TO_UINT (c) + 1));
}

static int
compare_counts (gconstpointer a, gconstpointer b, gpointer hist)
{
  guint ca = GPOINTER_TO_UINT (g_hash_table_lookup (hist, *(gpointer *) a));
  guint cb = GPOINTER_TO_UINT (g_hash_table_lookup (hist, *(gpointer *) b));
  return ca != cb ? (cb > ca ? 1 : -1) : g_strcmp0 (*(const char **) a, *(const char **) b);
}

static void
note_histogram (FbPassContext *ctx, GHashTable *hist, guint total)
{
  g_autoptr(GPtrArray) ops = g_ptr_array_new ();
  g_autoptr(GString) s = g_string_new (NULL);
  GHashTableIter it;
  gpointer key;

  g_hash_table_iter_init (&it, hist);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (ops, key);
  g_ptr_array_sort_with_data (ops, compare_counts, hist);
  for (guint i = 0; i < ops->len; i++)
    g_string_append_printf (s, "%s%u %s", i ? ", " : "",
                            GPOINTER_TO_UINT (g_hash_table_lookup (hist, ops->pdata[i])),
                            (const char *) ops->pdata[i]);
  _fb_pass_note (ctx, "folded %u nodes (%s)", total, s->str);
}

gboolean
_fb_pass_fold_constants (FbPassContext *ctx, FbGraph *graph, GError **error)
{
  g_autoptr(GHashTable) carried = g_hash_table_new_full (NULL, NULL, NULL,
                                                         (GDestroyNotify) carried_free);
  g_autoptr(GHashTable) placed = g_hash_table_new (NULL, NULL);   /* folded ids with a fate */
  g_autoptr(GHashTable) hist = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) kept = g_ptr_array_new ();
  guint n_folded = 0;

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);
      FbTensor *outs[8] = { NULL };
      g_autoptr(GError) local = NULL;
      Carried *c;

      if (_fb_pass_cancelled (ctx, error))
        return FALSE;
      if (!_fb_node_infer (graph, n, error))
        return FALSE;

      if (n->n_outputs > G_N_ELEMENTS (outs) || !evaluate (n, outs, &local) || !agrees (n, outs))
        {
          /* Interpreter errors on constant inputs are left for run time, where the user sees
           * them against real data; this node just stays. */
          for (guint k = 0; k < G_N_ELEMENTS (outs); k++)
            g_clear_pointer (&outs[k], fb_tensor_unref);
          /* A kept node now stands for the folded nodes that fed it. */
          for (guint k = 0; k < n->n_inputs; k++)
            {
              Carried *in_c = n->inputs[k] ? g_hash_table_lookup (carried, n->inputs[k]) : NULL;
              if (in_c == NULL)
                continue;
              fb_node_add_prov (graph, n, (guint *) in_c->prov->data, in_c->prov->len);
              for (guint j = 0; j < in_c->ids->len; j++)
                {
                  guint id = g_array_index (in_c->ids, guint, j);
                  if (g_hash_table_add (placed, GUINT_TO_POINTER (id)))
                    _fb_pass_record_fate (ctx, id, FB_CHANGE_REMOVED, n->id);
                }
            }
          g_ptr_array_add (kept, n);
          continue;
        }

      c = g_new0 (Carried, 1);
      c->prov = g_array_new (FALSE, FALSE, sizeof (guint));
      c->ids = g_array_new (FALSE, FALSE, sizeof (guint));
      array_add_unique (c->prov, n->prov, n->n_prov);
      g_array_append_val (c->ids, n->id);
      for (guint k = 0; k < n->n_inputs; k++)
        {
          Carried *in_c = n->inputs[k] ? g_hash_table_lookup (carried, n->inputs[k]) : NULL;
          if (in_c == NULL)
            continue;
          array_add_unique (c->prov, (guint *) in_c->prov->data, in_c->prov->len);
          array_add_unique (c->ids, (guint *) in_c->ids->data, in_c->ids->len);
        }
      for (guint k = 0; k < n->n_outputs; k++)
        {
          FbValue *v = n->outputs[k];
          Carried *mine;
          if (v == NULL)
            continue;
          /* Inference may already have attached the value (a Constant's output). */
          g_clear_pointer (&v->constant, fb_tensor_unref);
          v->constant = g_steal_pointer (&outs[k]);
          v->dtype = v->constant->dtype;
          v->shape = fb_tensor_shape (v->constant);
          v->producer = NULL;
          v->producer_output = 0;
          n->outputs[k] = NULL;
          mine = g_new0 (Carried, 1);
          mine->prov = g_array_copy (c->prov);
          mine->ids = g_array_copy (c->ids);
          g_hash_table_insert (carried, v, mine);
        }
      carried_free (c);
      _fb_node_release (n);
      for (guint k = 0; k < G_N_ELEMENTS (outs); k++)
        g_clear_pointer (&outs[k], fb_tensor_unref);
      count_op (hist, n);
      n_folded++;
    }

  g_ptr_array_set_size (graph->nodes, 0);
  g_ptr_array_extend (graph->nodes, kept, NULL, NULL);
  fb_graph_remove_dead (graph);
  if (n_folded)
    note_histogram (ctx, hist, n_folded);
  return TRUE;
}
