/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cse: common subexpression elimination. Small constants with equal contents become one value
 * (exporters emit the same shape vector once per layer), then nodes that apply the same
 * operator with the same attributes to the same inputs become one node. One walk in
 * topological order suffices: a node's inputs are already canonical when it is hashed.
 * Last, a Concat whose leading inputs are all of an earlier Concat's (same axis) reads that
 * Concat's output in their place (share_concat_prefixes).
 *
 * Requires: a graph in topological order.
 * Preserves: the ids of the surviving nodes and values; the graph's interface.
 * Invalidates: uses tables; duplicates' values are gone. */
#include "fb-pass-private.h"

#include <stdlib.h>
#include <string.h>

#define CONST_LIMIT 4096   /* bytes: constants hashed by content */

static gboolean
has_subgraph (const FbNode *n)
{
  for (guint a = 0; a < n->n_attrs; a++)
    if (n->attrs[a].type == FB_ATTR_GRAPH)
      return TRUE;
  return FALSE;
}

static void
append_attr (GString *key, const FbAttr *a)
{
  g_string_append_printf (key, "|%s:%d=", a->name, a->type);
  switch (a->type)
    {
    case FB_ATTR_FLOAT:
      g_string_append_len (key, (const char *) &a->f, sizeof a->f);
      break;
    case FB_ATTR_INT:
      g_string_append_printf (key, "%" G_GINT64_FORMAT, a->i);
      break;
    case FB_ATTR_STRING:
      g_string_append (key, a->s ? a->s : "");
      break;
    case FB_ATTR_TENSOR:
      g_string_append_printf (key, "%p", (void *) a->t);
      break;
    case FB_ATTR_FLOATS:
      g_string_append_len (key, (const char *) a->floats.v, sizeof (float) * a->floats.n);
      break;
    case FB_ATTR_INTS:
      for (guint i = 0; i < a->ints.n; i++)
        g_string_append_printf (key, "%" G_GINT64_FORMAT ",", a->ints.v[i]);
      break;
    case FB_ATTR_STRINGS:
      for (guint i = 0; i < a->strings.n; i++)
        g_string_append_printf (key, "%s\x1f", a->strings.v[i]);
      break;
    case FB_ATTR_TYPE:
      g_string_append_printf (key, "%d:%d", a->tp.kind, a->tp.dtype);
      break;
    default:
      break;
    }
}

static int
compare_attrs (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(const FbAttr * const *) a)->name, (*(const FbAttr * const *) b)->name);
}

/* Everything that decides what a node computes, as bytes (keys hold raw floats: GBytes, not
 * strings, so an embedded zero byte does not end the comparison). */
static GBytes *
node_key (const FbNode *n)
{
  GString *key = g_string_new (NULL);
  g_autofree const FbAttr **attrs = g_new (const FbAttr *, MAX (n->n_attrs, 1));

  g_string_append_printf (key, "%d|%s|%s|%d|%u|", n->op, n->op_type, n->domain, n->opset,
                          n->n_outputs);
  for (guint k = 0; k < n->n_inputs; k++)
    g_string_append_printf (key, "%u,", n->inputs[k] ? n->inputs[k]->id : 0);
  for (guint a = 0; a < n->n_attrs; a++)
    attrs[a] = &n->attrs[a];
  qsort (attrs, n->n_attrs, sizeof (FbAttr *), compare_attrs);
  for (guint a = 0; a < n->n_attrs; a++)
    append_attr (key, attrs[a]);
  return g_string_free_to_bytes (key);
}

static GBytes *
const_key (const FbValue *v)
{
  const FbTensor *t = v->constant;
  GString *key = g_string_new (NULL);

  g_string_append_printf (key, "%d|%d|", t->dtype, t->rank);
  for (int d = 0; d < t->rank; d++)
    g_string_append_printf (key, "%" G_GINT64_FORMAT ",", t->dims[d]);
  g_string_append_len (key, fb_tensor_data (t), fb_tensor_nbytes (t));
  return g_string_free_to_bytes (key);
}

static void
replace_in_nodes (FbGraph *graph, GHashTable *canon)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);
      for (guint k = 0; k < n->n_inputs; k++)
        {
          FbValue *c = n->inputs[k] ? g_hash_table_lookup (canon, n->inputs[k]) : NULL;
          if (c)
            n->inputs[k] = c;
        }
    }
}

static gboolean
concat_axis (const FbNode *n, int *axis)
{
  const FbValue *out = n->outputs[0];
  if (n->op != FB_OP_CONCAT || n->n_outputs != 1 || out == NULL || out->shape.rank < 1)
    return FALSE;
  for (guint k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] == NULL)
      return FALSE;
  return fb_axis_normalize (fb_node_attr_int (n, "axis", 0), out->shape.rank, axis);
}

/* A dense block concatenates everything before it at every layer: layer k's Concat (x0 ... xk)
 * repeats layer k-1's Concat (x0 ... xk-1) and one piece more. Reading the earlier Concat's
 * output for those leading inputs computes the same tensor from two pieces instead of k + 1,
 * and a GPU copies a piece per launch: DenseNet-121's 58 Concats were about 590 launches, now
 * 116. The earlier Concat comes first in topological order, and its inputs feed the later one
 * already, so nothing can depend on the later one: no cycle. Returns how many changed. */
static guint
share_concat_prefixes (FbGraph *graph)
{
  /* Every Concat seen, with the inputs it had before it was rewritten (a later one is matched
   * against those: layer k's against layer k-1's whole list, not its two new pieces). */
  g_autoptr(GPtrArray) concats = g_ptr_array_new ();
  g_autoptr(GPtrArray) inputs_of = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) n_inputs_of = g_array_new (FALSE, FALSE, sizeof (guint));
  guint changed = 0;
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);
      int axis;
      if (!concat_axis (n, &axis))
        continue;
      int best = -1;
      guint best_len = 0;
      for (guint j = 0; j < concats->len; j++)
        {
          const FbNode *m = g_ptr_array_index (concats, j);
          FbValue **m_inputs = g_ptr_array_index (inputs_of, j);
          guint m_len = g_array_index (n_inputs_of, guint, j);
          int m_axis;
          if (m_len < 2 || m_len >= n->n_inputs || m_len <= best_len ||
              !concat_axis (m, &m_axis) || m_axis != axis ||
              m->outputs[0]->shape.rank != n->outputs[0]->shape.rank)
            continue;
          guint k = 0;
          while (k < m_len && m_inputs[k] == n->inputs[k])
            k++;
          if (k == m_len)
            {
              best = (int) j;
              best_len = m_len;
            }
        }
      g_ptr_array_add (concats, n);
      g_ptr_array_add (inputs_of, g_memdup2 (n->inputs, n->n_inputs * sizeof n->inputs[0]));
      g_array_append_val (n_inputs_of, n->n_inputs);
      if (best < 0)
        continue;
      const FbNode *m = g_ptr_array_index (concats, best);
      guint drop = best_len - 1;
      n->inputs[0] = m->outputs[0];
      for (guint k = 1; k + drop < n->n_inputs; k++)
        n->inputs[k] = n->inputs[k + drop];
      n->n_inputs -= drop;
      changed++;
    }
  return changed;
}

gboolean
_fb_pass_cse (FbPassContext *ctx, FbGraph *graph, GError **error)
{
  g_autoptr(GHashTable) consts = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                                       (GDestroyNotify) g_bytes_unref, NULL);
  g_autoptr(GHashTable) canon = g_hash_table_new (NULL, NULL);      /* duplicate -> kept value */
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                                     (GDestroyNotify) g_bytes_unref, NULL);
  guint n_consts = 0, n_nodes = 0;

  /* Constants: only those no subgraph captures and that are not part of the interface. */
  for (guint i = 0; i < graph->values->len; i++)
    {
      FbValue *v = g_ptr_array_index (graph->values, i);
      FbValue *first;
      GBytes *key;
      if (v->constant == NULL || v->is_output || v->is_input ||
          fb_tensor_nbytes (v->constant) > CONST_LIMIT)
        continue;
      key = const_key (v);
      first = g_hash_table_lookup (consts, key);
      if (first == NULL)
        {
          g_hash_table_insert (consts, key, v);
          continue;
        }
      g_bytes_unref (key);
      g_hash_table_insert (canon, v, first);
      n_consts++;
    }
  if (graph->subgraphs->len == 0)
    replace_in_nodes (graph, canon);
  else
    {
      GHashTableIter it;
      gpointer dup, keep;
      g_hash_table_iter_init (&it, canon);
      while (g_hash_table_iter_next (&it, &dup, &keep))
        fb_graph_replace_uses (graph, dup, keep);
    }

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);
      FbNode *twin;
      gboolean ok = TRUE;
      GBytes *key;

      if (n->op == FB_OP_UNKNOWN || n->op == FB_OP_FUSED || has_subgraph (n) || n->n_outputs == 0)
        continue;
      key = node_key (n);
      twin = g_hash_table_lookup (seen, key);
      if (twin == NULL)
        {
          g_hash_table_insert (seen, key, n);
          continue;
        }
      g_bytes_unref (key);
      for (guint k = 0; k < n->n_outputs && ok; k++)
        if (n->outputs[k] && (twin->outputs[k] == NULL || !_fb_can_replace (n->outputs[k], twin->outputs[k])))
          ok = FALSE;
      if (!ok)
        continue;
      for (guint k = 0; k < n->n_outputs; k++)
        if (n->outputs[k])
          fb_graph_replace_uses (graph, n->outputs[k], twin->outputs[k]);
      fb_node_add_prov (graph, twin, n->prov, n->n_prov);
      _fb_pass_record_fate (ctx, n->id, FB_CHANGE_REMOVED, twin->id);
      n_nodes++;
    }
  fb_graph_remove_dead (graph);
  guint n_concats = share_concat_prefixes (graph);

  if (n_consts)
    _fb_pass_note (ctx, "merged %u equal constants", n_consts);
  if (n_nodes)
    _fb_pass_note (ctx, "merged %u duplicate nodes", n_nodes);
  if (n_concats)
    _fb_pass_note (ctx, "%u Concats read an earlier Concat of their leading inputs", n_concats);
  return TRUE;
}
