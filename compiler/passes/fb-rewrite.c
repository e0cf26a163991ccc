/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The rewrite engine (see fb-rewrite.h). Matching is a small backtracking search over a stack
 * of (pattern, value) goals, so commutative operands and repeated captures are tried in every
 * combination rather than greedily. A sweep visits the nodes in order and fires the first rule
 * that matches at each; sweeps repeat until nothing fires. */
#include "fb-rewrite.h"
#include "fb-infer.h"

#include <string.h>

#define MAX_GOALS  64
#define MAX_SWEEPS 16

struct _FbRewriter {
  FbPassContext *ctx;
  FbGraph       *graph;
  GHashTable    *uses;        /* built at the start of each sweep */
  const FbRule  *rule;
  GError        *error;       /* the first inference failure of a rewrite */
};

typedef struct {
  const FbPat *p;
  FbValue     *v;
} Goal;

static gboolean
commutative (FbOpKind op)
{
  switch (op)
    {
    case FB_OP_ADD: case FB_OP_MUL: case FB_OP_MAX: case FB_OP_MIN: case FB_OP_SUM:
    case FB_OP_AND: case FB_OP_OR: case FB_OP_XOR: case FB_OP_EQUAL:
      return TRUE;
    default:
      return FALSE;
    }
}

static gboolean
bind (FbMatch *m, guint slot, FbValue *v)
{
  if (slot == 0)
    return TRUE;
  g_assert (slot < FB_PAT_MAX_BINDS);
  if (m->v[slot] == NULL)
    {
      m->v[slot] = v;
      return TRUE;
    }
  return m->v[slot] == v;
}

static gboolean
add_node (FbMatch *m, FbNode *n)
{
  for (guint i = 0; i < m->n_nodes; i++)
    if (m->nodes[i] == n)
      return TRUE;
  if (m->n_nodes == FB_PAT_MAX_NODES)
    return FALSE;
  m->nodes[m->n_nodes++] = n;
  return TRUE;
}

static gboolean
solve (const Goal *goals, guint n_goals, FbMatch *m)
{
  const Goal *g;
  FbNode *node;
  guint n_src = 0;
  guint orders;

  if (n_goals == 0)
    return TRUE;
  g = &goals[n_goals - 1];
  if (g->v == NULL)
    return FALSE;

  switch (g->p->kind)
    {
    case FB_PAT_ANY:
    case FB_PAT_CONST:
    case FB_PAT_CONST_ANY:
      {
        FbMatch saved = *m;
        if (g->p->kind == FB_PAT_CONST && !_fb_const_equals (g->v, g->p->value))
          return FALSE;
        if (g->p->kind == FB_PAT_CONST_ANY && g->v->constant == NULL)
          return FALSE;
        if (bind (m, g->p->bind, g->v) && solve (goals, n_goals - 1, m))
          return TRUE;
        *m = saved;
        return FALSE;
      }
    case FB_PAT_OP:
      break;
    }

  node = g->v->producer;
  if (node == NULL || node->op != g->p->op || g->v->producer_output != 0)
    return FALSE;
  while (n_src < G_N_ELEMENTS (g->p->src) && g->p->src[n_src] != NULL)
    n_src++;
  if (node->n_inputs < n_src || n_goals - 1 + n_src > MAX_GOALS)
    return FALSE;
  orders = n_src == 2 && commutative (node->op) ? 2 : 1;

  for (guint order = 0; order < orders; order++)
    {
      FbMatch saved = *m;
      Goal next[MAX_GOALS];

      memcpy (next, goals, sizeof (Goal) * (n_goals - 1));
      /* Pushed in reverse so the first operand is matched first (bindings read left to right). */
      for (guint k = 0; k < n_src; k++)
        {
          guint input = order ? 1 - k : k;
          next[n_goals - 1 + (n_src - 1 - k)] = (Goal) { g->p->src[k], node->inputs[input] };
        }
      if (bind (m, g->p->bind, g->v) && add_node (m, node) &&
          solve (next, n_goals - 1 + n_src, m))
        return TRUE;
      *m = saved;
    }
  return FALSE;
}

static gboolean
match_at (const FbPat *p, FbNode *root, FbMatch *m)
{
  Goal goal = { p, root->outputs[0] };

  memset (m, 0, sizeof *m);
  if (root->n_outputs < 1 || root->outputs[0] == NULL)
    return FALSE;
  if (!solve (&goal, 1, m))
    return FALSE;
  /* The root comes first whatever order the search added nodes in. */
  for (guint i = 0; i < m->n_nodes; i++)
    if (m->nodes[i] == root)
      {
        m->nodes[i] = m->nodes[0];
        m->nodes[0] = root;
      }
  return TRUE;
}

static gboolean
in_match (const FbMatch *m, const FbNode *n)
{
  for (guint i = 0; i < m->n_nodes; i++)
    if (m->nodes[i] == n)
      return TRUE;
  return FALSE;
}

/* Inner nodes whose every reader is in the match: they die with the rewrite. */
static gboolean
exclusive (FbRewriter *rw, const FbMatch *m, const FbNode *n)
{
  for (guint k = 0; k < n->n_outputs; k++)
    {
      FbValue *v = n->outputs[k];
      GPtrArray *users;
      if (v == NULL)
        continue;
      if (v->is_output)
        return FALSE;
      users = g_hash_table_lookup (rw->uses, v);
      for (guint u = 0; users && u < users->len; u++)
        if (!in_match (m, g_ptr_array_index (users, u)))
          return FALSE;
    }
  return TRUE;
}

static gboolean
acceptable (FbRewriter *rw, const FbRule *rule, const FbMatch *m)
{
  for (guint i = 0; i < m->n_nodes; i++)
    {
      if ((rule->flags & FB_RULE_FUSES) && _fb_pass_no_fuse (rw->ctx, m->nodes[i]))
        return FALSE;
      if (i > 0 && !(rule->flags & FB_RULE_SHARED_OK) && !exclusive (rw, m, m->nodes[i]))
        return FALSE;
    }
  return TRUE;
}

FbGraph *
fb_rewrite_graph (FbRewriter *rw)
{
  g_return_val_if_fail (rw != NULL, NULL);
  return rw->graph;
}

void
fb_rewrite_replace_root (FbRewriter *rw, const FbMatch *m, FbNode *new_node)
{
  FbChangeKind kind;

  g_return_if_fail (rw != NULL && m != NULL && new_node != NULL && m->n_nodes > 0);
  kind = (rw->rule->flags & FB_RULE_FUSES) ? FB_CHANGE_FUSED : FB_CHANGE_REMOVED;
  for (guint i = 0; i < m->n_nodes; i++)
    {
      FbNode *n = m->nodes[i];
      if (i > 0 && !exclusive (rw, m, n))
        continue;
      fb_node_add_prov (rw->graph, new_node, n->prov, n->n_prov);
      _fb_pass_record_fate (rw->ctx, n->id, kind, new_node->id);
    }
  _fb_node_steal_outputs (m->nodes[0], new_node);
}

gboolean
fb_rewrite_forward (FbRewriter *rw, const FbMatch *m, FbValue *value)
{
  FbNode *root;
  FbValue *out;
  GPtrArray *users;

  g_return_val_if_fail (rw != NULL && m != NULL && value != NULL && m->n_nodes > 0, FALSE);
  root = m->nodes[0];
  out = root->outputs[0];
  if (!_fb_can_replace (out, value))
    return FALSE;
  /* Readers of the vanished result now stand for the nodes that computed it. */
  users = g_hash_table_lookup (rw->uses, out);
  for (guint u = 0; users && u < users->len; u++)
    for (guint i = 0; i < m->n_nodes; i++)
      if (i == 0 || exclusive (rw, m, m->nodes[i]))
        fb_node_add_prov (rw->graph, g_ptr_array_index (users, u), m->nodes[i]->prov,
                          m->nodes[i]->n_prov);
  for (guint i = 0; i < m->n_nodes; i++)
    if (i == 0 || exclusive (rw, m, m->nodes[i]))
      _fb_pass_record_fate (rw->ctx, m->nodes[i]->id, FB_CHANGE_REMOVED,
                            users && users->len ? ((FbNode *) g_ptr_array_index (users, 0))->id : 0);
  fb_graph_replace_uses (rw->graph, out, value);
  return TRUE;
}

FbNode *
fb_rewrite_node (FbRewriter *rw, FbOpKind op, const FbNode *root, FbValue *const *inputs,
                 guint n_inputs, guint n_outputs)
{
  FbNode *n;

  g_return_val_if_fail (rw != NULL && root != NULL, NULL);
  n = _fb_node_new (rw->graph, op, root->name, inputs, n_inputs, n_outputs, NULL);
  n->opset = root->opset;
  return n;
}

FbValue *
fb_rewrite_output (FbRewriter *rw, FbNode *node, guint k)
{
  FbValue *v;

  g_return_val_if_fail (rw != NULL && node != NULL && k < node->n_outputs, NULL);
  v = _fb_value_new (rw->graph, node->name, FB_DTYPE_UNDEFINED, NULL);
  fb_node_set_output (node, k, v);
  return v;
}

FbNode *
fb_rewrite_sole_reader (FbRewriter *rw, const FbValue *value)
{
  GPtrArray *users;

  g_return_val_if_fail (rw != NULL && value != NULL, NULL);
  users = g_hash_table_lookup (rw->uses, value);
  if (value->is_output || users == NULL || users->len != 1)
    return NULL;
  return g_ptr_array_index (users, 0);
}

gboolean
fb_rewrite_infer (FbRewriter *rw, FbNode *node)
{
  g_return_val_if_fail (rw != NULL && node != NULL, FALSE);
  if (rw->error != NULL)
    return FALSE;
  return fb_infer_node (rw->graph, node, &rw->error);
}

gboolean
fb_rewrite_run (FbPassContext *ctx, FbGraph *graph, const FbRule *rules, guint n_rules,
                guint *fired, GError **error)
{
  FbRewriter rw = { ctx, graph, NULL, NULL, NULL };
  g_autofree GPtrArray **by_op = g_new0 (GPtrArray *, FB_OP_COUNT);   /* op -> rule indices */
  gboolean ok = TRUE;

  g_return_val_if_fail (ctx != NULL && graph != NULL && rules != NULL && fired != NULL, FALSE);
  for (guint r = 0; r < n_rules; r++)
    for (guint p = 0; p < G_N_ELEMENTS (rules[r].patterns) && rules[r].patterns[p]; p++)
      {
        FbOpKind op = rules[r].patterns[p]->op;
        g_assert (rules[r].patterns[p]->kind == FB_PAT_OP);
        if (by_op[op] == NULL)
          by_op[op] = g_ptr_array_new ();
        if (!g_ptr_array_find (by_op[op], GUINT_TO_POINTER (r + 1), NULL))
          g_ptr_array_add (by_op[op], GUINT_TO_POINTER (r + 1));
      }

  for (guint sweep = 0; sweep < MAX_SWEEPS && ok; sweep++)
    {
      g_autoptr(GPtrArray) order = g_ptr_array_copy (graph->nodes, NULL, NULL);
      gboolean any = FALSE;

      if (_fb_pass_cancelled (ctx, error))
        {
          ok = FALSE;
          break;
        }
      rw.uses = fb_graph_build_uses (graph);
      for (guint i = 0; i < order->len && rw.error == NULL; i++)
        {
          FbNode *n = g_ptr_array_index (order, i);
          GPtrArray *candidates = by_op[n->op];

          if (candidates == NULL || n->n_outputs == 0 || n->outputs[0] == NULL ||
              n->outputs[0]->producer != n)
            continue;
          for (guint c = 0; candidates && c < candidates->len; c++)
            {
              guint r = GPOINTER_TO_UINT (g_ptr_array_index (candidates, c)) - 1;
              const FbRule *rule = &rules[r];
              gboolean done = FALSE;
              for (guint p = 0; p < G_N_ELEMENTS (rule->patterns) && rule->patterns[p] && !done; p++)
                {
                  FbMatch m;
                  if (rule->patterns[p]->op != n->op || !match_at (rule->patterns[p], n, &m) ||
                      !acceptable (&rw, rule, &m))
                    continue;
                  rw.rule = rule;
                  if (rule->rewrite (&rw, n, &m))
                    {
                      fired[r]++;
                      any = done = TRUE;
                    }
                }
              if (done)
                break;
            }
        }
      g_clear_pointer (&rw.uses, g_hash_table_unref);
      if (rw.error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&rw.error));
          ok = FALSE;
          break;
        }
      /* Sorted first: removal walks backwards and must see readers after producers. */
      if (!fb_graph_toposort (graph, error))
        {
          ok = FALSE;
          break;
        }
      fb_graph_remove_dead (graph);
      if (!any)
        break;
    }

  for (guint op = 0; op < FB_OP_COUNT; op++)
    if (by_op[op])
      g_ptr_array_unref (by_op[op]);
  return ok;
}
