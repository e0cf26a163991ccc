/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The diff between two consecutive stages. Node ids are stable, so the diff is exact: a node of
 * the previous stage is kept (maybe changed), fused (found in the body of a fused node), or
 * removed (with where its provenance went, when the pass recorded it). */
#include "fb-pass-private.h"

#include <string.h>

static gboolean node_equal (const FbNode *a, const FbNode *b);

static guint
value_id (const FbValue *v)
{
  return v ? v->id : 0;
}

static gboolean
graph_equal (const FbGraph *a, const FbGraph *b)
{
  if (a->nodes->len != b->nodes->len || a->inputs->len != b->inputs->len ||
      a->outputs->len != b->outputs->len)
    return FALSE;
  for (guint i = 0; i < a->nodes->len; i++)
    if (!node_equal (g_ptr_array_index (a->nodes, i), g_ptr_array_index (b->nodes, i)))
      return FALSE;
  return TRUE;
}

static gboolean
attr_equal (const FbAttr *a, const FbAttr *b)
{
  if (strcmp (a->name, b->name) != 0 || a->type != b->type)
    return FALSE;
  switch (a->type)
    {
    case FB_ATTR_FLOAT:
      return memcmp (&a->f, &b->f, sizeof a->f) == 0;
    case FB_ATTR_INT:
      return a->i == b->i;
    case FB_ATTR_STRING:
      return g_strcmp0 (a->s, b->s) == 0;
    case FB_ATTR_TENSOR:
      return a->t == b->t || (a->t->dtype == b->t->dtype && g_bytes_equal (a->t->bytes, b->t->bytes));
    case FB_ATTR_GRAPH:
      return graph_equal (a->g, b->g);
    case FB_ATTR_FLOATS:
      return a->floats.n == b->floats.n &&
             memcmp (a->floats.v, b->floats.v, sizeof (float) * a->floats.n) == 0;
    case FB_ATTR_INTS:
      return a->ints.n == b->ints.n &&
             memcmp (a->ints.v, b->ints.v, sizeof (int64_t) * a->ints.n) == 0;
    case FB_ATTR_STRINGS:
      if (a->strings.n != b->strings.n)
        return FALSE;
      for (guint i = 0; i < a->strings.n; i++)
        if (g_strcmp0 (a->strings.v[i], b->strings.v[i]) != 0)
          return FALSE;
      return TRUE;
    case FB_ATTR_TYPE:
      return a->tp.kind == b->tp.kind && a->tp.dtype == b->tp.dtype;
    default:
      return TRUE;
    }
}

static gboolean
node_equal (const FbNode *a, const FbNode *b)
{
  if (a->id != b->id || a->op != b->op || g_strcmp0 (a->op_type, b->op_type) != 0 ||
      a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs || a->n_attrs != b->n_attrs ||
      a->flags != b->flags)
    return FALSE;
  for (guint k = 0; k < a->n_inputs; k++)
    if (value_id (a->inputs[k]) != value_id (b->inputs[k]))
      return FALSE;
  for (guint k = 0; k < a->n_outputs; k++)
    if (value_id (a->outputs[k]) != value_id (b->outputs[k]))
      return FALSE;
  for (guint k = 0; k < a->n_attrs; k++)
    {
      const FbAttr *other = fb_node_attr (b, a->attrs[k].name);
      if (other == NULL || !attr_equal (&a->attrs[k], other))
        return FALSE;
    }
  return TRUE;
}

static void
index_bodies (const FbGraph *g, guint fused_id, GHashTable *member_of)
{
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (g->nodes, i);
      guint owner = fused_id ? fused_id : n->id;
      if (fused_id)
        g_hash_table_insert (member_of, GUINT_TO_POINTER (n->id), GUINT_TO_POINTER (owner));
      for (guint a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == FB_ATTR_GRAPH && n->op == FB_OP_FUSED)
          index_bodies (n->attrs[a].g, owner, member_of);
    }
}

/* Follows recorded fates until a node of the new stage: a node merged into a node that was
 * itself replaced later in the same pass went to the replacement. */
static const FbFate *
resolve (GHashTable *fates, GHashTable *after_ids, guint id, guint *target)
{
  const FbFate *first = g_hash_table_lookup (fates, GUINT_TO_POINTER (id));
  const FbFate *f = first;
  guint hops = 0;

  *target = 0;
  while (f != NULL && f->target != 0 && hops++ < 64)
    {
      if (g_hash_table_contains (after_ids, GUINT_TO_POINTER (f->target)))
        {
          *target = f->target;
          break;
        }
      f = g_hash_table_lookup (fates, GUINT_TO_POINTER (f->target));
    }
  return first;
}

GArray *
_fb_stage_diff (const FbGraph *before, const FbGraph *after, GHashTable *fates)
{
  GArray *changes = g_array_new (FALSE, TRUE, sizeof (FbChange));
  g_autoptr(GHashTable) after_ids = g_hash_table_new (NULL, NULL);   /* id -> FbNode* */
  g_autoptr(GHashTable) before_ids = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) member_of = g_hash_table_new (NULL, NULL);   /* id -> fused node id */

  g_assert (before != NULL && after != NULL);
  for (guint i = 0; i < after->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (after->nodes, i);
      g_hash_table_insert (after_ids, GUINT_TO_POINTER (n->id), n);
    }
  index_bodies (after, 0, member_of);

  for (guint i = 0; i < before->nodes->len; i++)
    {
      FbNode *b = g_ptr_array_index (before->nodes, i);
      FbNode *a = g_hash_table_lookup (after_ids, GUINT_TO_POINTER (b->id));
      FbChange c = { .node_id = b->id };

      g_hash_table_insert (before_ids, GUINT_TO_POINTER (b->id), b);
      if (a != NULL)
        {
          if (node_equal (a, b))
            continue;
          c.kind = FB_CHANGE_CHANGED;
        }
      else if (g_hash_table_contains (member_of, GUINT_TO_POINTER (b->id)))
        {
          c.kind = FB_CHANGE_FUSED;
          c.fused_into = GPOINTER_TO_UINT (g_hash_table_lookup (member_of, GUINT_TO_POINTER (b->id)));
        }
      else
        {
          guint target = 0;
          const FbFate *f = fates ? resolve (fates, after_ids, b->id, &target) : NULL;
          c.kind = FB_CHANGE_REMOVED;
          if (f != NULL && target != 0)
            {
              if (f->kind == FB_CHANGE_FUSED)
                {
                  c.kind = FB_CHANGE_FUSED;
                  c.fused_into = target;
                }
              else
                c.went_to = target;
            }
        }
      g_array_append_val (changes, c);
    }
  for (guint i = 0; i < after->nodes->len; i++)
    {
      FbNode *a = g_ptr_array_index (after->nodes, i);
      if (!g_hash_table_contains (before_ids, GUINT_TO_POINTER (a->id)))
        {
          FbChange c = { .node_id = a->id, .kind = FB_CHANGE_ADDED };
          g_array_append_val (changes, c);
        }
    }
  return changes;
}
