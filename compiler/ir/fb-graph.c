/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Building, copying, ordering and pruning graphs. */
#include "fb-graph.h"
#include "fb-arena-private.h"

#include <string.h>

FbGraph *
fb_graph_new (FbModel *model)
{
  FbGraph *g = g_new0 (FbGraph, 1);

  g_return_val_if_fail (model != NULL, NULL);
  g->arena = _fb_arena_new ();
  g->model = fb_model_ref (model);
  g->nodes = g_ptr_array_new ();
  g->values = g_ptr_array_new ();
  g->inputs = g_ptr_array_new ();
  g->outputs = g_ptr_array_new ();
  g->subgraphs = g_ptr_array_new ();
  return g;
}

FbGraph *
fb_graph_new_subgraph (FbGraph *parent, const char *name)
{
  FbGraph *g = g_new0 (FbGraph, 1);

  g_return_val_if_fail (parent != NULL, NULL);
  g->arena = parent->arena;
  g->model = fb_model_ref (parent->model);
  g->parent = parent;
  g->name = fb_arena_strdup (parent->arena, name);
  g->nodes = g_ptr_array_new ();
  g->values = g_ptr_array_new ();
  g->inputs = g_ptr_array_new ();
  g->outputs = g_ptr_array_new ();
  g->subgraphs = g_ptr_array_new ();
  g_ptr_array_add (parent->subgraphs, g);
  return g;
}

static void
graph_free_tables (FbGraph *g)
{
  for (guint i = 0; i < g->subgraphs->len; i++)
    graph_free_tables (g_ptr_array_index (g->subgraphs, i));
  for (guint i = 0; i < g->values->len; i++)
    fb_tensor_unref (((FbValue *) g_ptr_array_index (g->values, i))->constant);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (g->nodes, i);
      for (guint a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == FB_ATTR_TENSOR)
          fb_tensor_unref (n->attrs[a].t);
    }
  g_ptr_array_unref (g->nodes);
  g_ptr_array_unref (g->values);
  g_ptr_array_unref (g->inputs);
  g_ptr_array_unref (g->outputs);
  g_ptr_array_unref (g->subgraphs);
  fb_model_unref (g->model);
  if (g->parent != NULL)
    g_free (g);
}

void
fb_graph_free (FbGraph *graph)
{
  FbArena *arena;

  if (graph == NULL)
    return;
  g_return_if_fail (graph->parent == NULL);
  arena = graph->arena;
  graph_free_tables (graph);
  _fb_arena_free (arena);
  g_free (graph);
}

FbValue *
fb_graph_add_value (FbGraph *graph, const char *name, FbDType dtype, const FbShape *shape)
{
  FbValue *v;

  g_return_val_if_fail (graph != NULL, NULL);
  v = fb_arena_alloc (graph->arena, sizeof *v);
  v->id = fb_model_fresh_id (graph->model);
  v->name = fb_arena_strdup (graph->arena, name);
  v->dtype = dtype;
  v->shape = shape ? *shape : fb_shape_unknown ();
  v->graph = graph;
  g_ptr_array_add (graph->values, v);
  return v;
}

FbValue *
fb_graph_add_constant (FbGraph *graph, const char *name, FbTensor *tensor)
{
  FbShape shape;
  FbValue *v;

  g_return_val_if_fail (graph != NULL && tensor != NULL, NULL);
  shape = fb_tensor_shape (tensor);
  v = fb_graph_add_value (graph, name, tensor->dtype, &shape);
  v->constant = fb_tensor_ref (tensor);
  return v;
}

FbNode *
fb_graph_add_node (FbGraph *graph, FbOpKind op, const char *name, guint n_inputs, guint n_outputs)
{
  FbNode *n;

  g_return_val_if_fail (graph != NULL, NULL);
  n = fb_arena_alloc (graph->arena, sizeof *n);
  n->id = fb_model_fresh_id (graph->model);
  n->op = op;
  n->op_type = fb_op_name (op);
  n->domain = "";
  n->name = fb_arena_strdup (graph->arena, name);
  n->opset = fb_model_opset (graph->model, "");
  n->n_inputs = n_inputs;
  n->inputs = fb_arena_alloc (graph->arena, sizeof (FbValue *) * MAX (n_inputs, 1));
  n->n_outputs = n_outputs;
  n->outputs = fb_arena_alloc (graph->arena, sizeof (FbValue *) * MAX (n_outputs, 1));
  g_ptr_array_add (graph->nodes, n);
  return n;
}

void
fb_node_set_output (FbNode *node, guint index, FbValue *value)
{
  g_return_if_fail (node != NULL && index < node->n_outputs);
  node->outputs[index] = value;
  if (value != NULL)
    {
      value->producer = node;
      value->producer_output = index;
    }
}

FbValue *
fb_node_input (const FbNode *node, guint i)
{
  g_return_val_if_fail (node != NULL, NULL);
  return i < node->n_inputs ? node->inputs[i] : NULL;
}

void
fb_node_add_prov (FbGraph *graph, FbNode *node, const guint *prov, guint n)
{
  guint *merged;
  guint count = 0;

  g_return_if_fail (graph != NULL && node != NULL);
  merged = fb_arena_alloc (graph->arena, sizeof (guint) * (node->n_prov + n + 1));
  for (guint i = 0; i < node->n_prov; i++)
    merged[count++] = node->prov[i];
  for (guint i = 0; i < n; i++)
    {
      gboolean seen = FALSE;
      for (guint j = 0; j < count && !seen; j++)
        seen = merged[j] == prov[i];
      if (!seen)
        merged[count++] = prov[i];
    }
  node->prov = merged;
  node->n_prov = count;
}

FbValue *
fb_graph_lookup_value (const FbGraph *graph, const char *name)
{
  g_return_val_if_fail (name != NULL, NULL);
  for (const FbGraph *g = graph; g != NULL; g = g->parent)
    for (guint i = 0; i < g->values->len; i++)
      {
        FbValue *v = g_ptr_array_index (g->values, i);
        if (strcmp (v->name, name) == 0)
          return v;
      }
  return NULL;
}

FbNode *
fb_graph_find_node (const FbGraph *graph, guint id)
{
  g_return_val_if_fail (graph != NULL, NULL);
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);
      if (n->id == id)
        return n;
    }
  return NULL;
}

guint
fb_graph_count_nodes (const FbGraph *graph, gboolean recursive)
{
  guint count;

  g_return_val_if_fail (graph != NULL, 0);
  count = graph->nodes->len;
  if (recursive)
    for (guint i = 0; i < graph->subgraphs->len; i++)
      count += fb_graph_count_nodes (g_ptr_array_index (graph->subgraphs, i), TRUE);
  return count;
}

/* ---- copying ------------------------------------------------------------------------------ */

static FbGraph *copy_graph_into (const FbGraph *src, FbGraph *dst, GHashTable *vmap);

static FbValue *
copy_value (FbGraph *dst, const FbValue *src)
{
  FbValue *v = fb_arena_alloc (dst->arena, sizeof *v);

  *v = *src;
  v->name = fb_arena_strdup (dst->arena, src->name);
  v->producer = NULL;
  v->graph = dst;
  if (v->constant)
    fb_tensor_ref (v->constant);
  g_ptr_array_add (dst->values, v);
  return v;
}

static FbValue *
map_value (GHashTable *vmap, FbValue *v)
{
  FbValue *mapped;

  if (v == NULL)
    return NULL;
  mapped = g_hash_table_lookup (vmap, v);
  /* A value from outside the copied graph (never the case for whole-graph copies) stays. */
  return mapped ? mapped : v;
}

static void
copy_attrs (FbGraph *dst, FbNode *n, const FbNode *src, GHashTable *vmap)
{
  n->attrs = fb_arena_memdup (dst->arena, src->attrs, sizeof (FbAttr) * src->n_attrs);
  for (guint a = 0; a < n->n_attrs; a++)
    {
      FbAttr *attr = &n->attrs[a];
      attr->name = fb_arena_strdup (dst->arena, attr->name);
      switch (attr->type)
        {
        case FB_ATTR_STRING:
          attr->s = fb_arena_strdup (dst->arena, attr->s);
          break;
        case FB_ATTR_TENSOR:
          fb_tensor_ref (attr->t);
          break;
        case FB_ATTR_GRAPH:
          {
            FbGraph *sub = fb_graph_new_subgraph (dst, attr->g->name);
            copy_graph_into (attr->g, sub, vmap);
            attr->g = sub;
          }
          break;
        case FB_ATTR_FLOATS:
          attr->floats.v = fb_arena_memdup (dst->arena, attr->floats.v, sizeof (float) * attr->floats.n);
          break;
        case FB_ATTR_INTS:
          attr->ints.v = fb_arena_memdup (dst->arena, attr->ints.v, sizeof (int64_t) * attr->ints.n);
          break;
        case FB_ATTR_STRINGS:
          {
            const char **v = fb_arena_alloc (dst->arena, sizeof (char *) * MAX (attr->strings.n, 1));
            for (guint k = 0; k < attr->strings.n; k++)
              v[k] = fb_arena_strdup (dst->arena, attr->strings.v[k]);
            attr->strings.v = v;
          }
          break;
        default:
          break;
        }
    }
}

static FbGraph *
copy_graph_into (const FbGraph *src, FbGraph *dst, GHashTable *vmap)
{
  for (guint i = 0; i < src->values->len; i++)
    {
      FbValue *v = g_ptr_array_index (src->values, i);
      g_hash_table_insert (vmap, v, copy_value (dst, v));
    }
  for (guint i = 0; i < src->inputs->len; i++)
    g_ptr_array_add (dst->inputs, map_value (vmap, g_ptr_array_index (src->inputs, i)));
  for (guint i = 0; i < src->outputs->len; i++)
    g_ptr_array_add (dst->outputs, map_value (vmap, g_ptr_array_index (src->outputs, i)));
  for (guint i = 0; i < src->nodes->len; i++)
    {
      const FbNode *s = g_ptr_array_index (src->nodes, i);
      FbNode *n = fb_arena_alloc (dst->arena, sizeof *n);

      *n = *s;
      n->op_type = fb_arena_strdup (dst->arena, s->op_type);
      n->domain = fb_arena_strdup (dst->arena, s->domain);
      n->name = fb_arena_strdup (dst->arena, s->name);
      n->doc_string = fb_arena_strdup (dst->arena, s->doc_string);
      n->prov = fb_arena_memdup (dst->arena, s->prov, sizeof (guint) * s->n_prov);
      n->inputs = fb_arena_alloc (dst->arena, sizeof (FbValue *) * MAX (s->n_inputs, 1));
      for (guint k = 0; k < s->n_inputs; k++)
        n->inputs[k] = map_value (vmap, s->inputs[k]);
      n->outputs = fb_arena_alloc (dst->arena, sizeof (FbValue *) * MAX (s->n_outputs, 1));
      for (guint k = 0; k < s->n_outputs; k++)
        fb_node_set_output (n, k, map_value (vmap, s->outputs[k]));
      copy_attrs (dst, n, s, vmap);
      g_ptr_array_add (dst->nodes, n);
    }
  return dst;
}

FbGraph *
fb_graph_copy (const FbGraph *graph)
{
  g_autoptr(GHashTable) vmap = g_hash_table_new (NULL, NULL);
  FbGraph *copy;

  g_return_val_if_fail (graph != NULL && graph->parent == NULL, NULL);
  copy = fb_graph_new (graph->model);
  copy->name = fb_arena_strdup (copy->arena, graph->name);
  return copy_graph_into (graph, copy, vmap);
}

/* ---- uses, captures, ordering ------------------------------------------------------------- */

static gboolean
graph_is_within (const FbGraph *inner, const FbGraph *outer)
{
  for (const FbGraph *g = inner; g != NULL; g = g->parent)
    if (g == outer)
      return TRUE;
  return FALSE;
}

/* Calls fn for every value a node reads: its inputs and, through its subgraphs, any value of an
 * enclosing graph that the subgraphs capture. */
typedef void (*ValueFn) (FbValue *value, gpointer data);

static void
subgraph_foreach_capture (const FbGraph *root_sub, const FbGraph *sub, ValueFn fn, gpointer data)
{
  for (guint i = 0; i < sub->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (sub->nodes, i);
      for (guint k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] && !graph_is_within (n->inputs[k]->graph, root_sub))
          fn (n->inputs[k], data);
      for (guint a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == FB_ATTR_GRAPH)
          subgraph_foreach_capture (root_sub, n->attrs[a].g, fn, data);
    }
  for (guint i = 0; i < sub->outputs->len; i++)
    {
      FbValue *v = g_ptr_array_index (sub->outputs, i);
      if (!graph_is_within (v->graph, root_sub))
        fn (v, data);
    }
}

static void
node_foreach_read (const FbNode *n, ValueFn fn, gpointer data)
{
  for (guint k = 0; k < n->n_inputs; k++)
    if (n->inputs[k])
      fn (n->inputs[k], data);
  for (guint a = 0; a < n->n_attrs; a++)
    if (n->attrs[a].type == FB_ATTR_GRAPH)
      subgraph_foreach_capture (n->attrs[a].g, n->attrs[a].g, fn, data);
}

typedef struct {
  GHashTable *uses;
  FbNode     *node;
} UsesCtx;

static void
add_use (FbValue *v, gpointer data)
{
  UsesCtx *ctx = data;
  GPtrArray *list = g_hash_table_lookup (ctx->uses, v);

  if (list == NULL)
    {
      list = g_ptr_array_new ();
      g_hash_table_insert (ctx->uses, v, list);
    }
  if (list->len == 0 || g_ptr_array_index (list, list->len - 1) != ctx->node)
    g_ptr_array_add (list, ctx->node);
}

GHashTable *
fb_graph_build_uses (const FbGraph *graph)
{
  UsesCtx ctx;

  g_return_val_if_fail (graph != NULL, NULL);
  ctx.uses = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_ptr_array_unref);
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      ctx.node = g_ptr_array_index (graph->nodes, i);
      node_foreach_read (ctx.node, add_use, &ctx);
    }
  return ctx.uses;
}

typedef struct {
  const FbGraph *graph;
  GPtrArray     *deps;
} DepsCtx;

static void
add_dep (FbValue *v, gpointer data)
{
  DepsCtx *ctx = data;

  /* A capture of a value of this very graph makes its producer a dependency. */
  if (v->producer != NULL && v->graph == ctx->graph)
    g_ptr_array_add (ctx->deps, v->producer);
}

gboolean
fb_graph_toposort (FbGraph *graph, GError **error)
{
  g_autoptr(GHashTable) state = g_hash_table_new (NULL, NULL);  /* node -> 1 visiting, 2 done */
  g_autoptr(GPtrArray) order = g_ptr_array_sized_new (graph->nodes->len);
  g_autoptr(GArray) stack = g_array_new (FALSE, FALSE, sizeof (gpointer) * 2);
  g_autoptr(GHashTable) in_graph = g_hash_table_new (NULL, NULL);

  g_return_val_if_fail (graph != NULL, FALSE);
  for (guint i = 0; i < graph->nodes->len; i++)
    g_hash_table_add (in_graph, g_ptr_array_index (graph->nodes, i));

  /* Iterative depth-first search in the original order, so a valid order is kept as it is and a
   * deep chain cannot overflow the C stack. Each stack entry is (node, its dependency list). */
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *root = g_ptr_array_index (graph->nodes, i);
      if (g_hash_table_contains (state, root))
        continue;
      gpointer entry[2] = { root, NULL };
      g_array_append_vals (stack, entry, 1);
      g_hash_table_insert (state, root, GINT_TO_POINTER (1));
      while (stack->len > 0)
        {
          gpointer *top = &g_array_index (stack, gpointer, (stack->len - 1) * 2);
          FbNode *n = top[0];
          GPtrArray *deps = top[1];
          FbNode *next = NULL;

          if (deps == NULL)
            {
              DepsCtx ctx = { graph, g_ptr_array_new () };
              node_foreach_read (n, add_dep, &ctx);
              top[1] = deps = ctx.deps;
            }
          while (deps->len > 0 && next == NULL)
            {
              FbNode *d = g_ptr_array_steal_index (deps, deps->len - 1);
              int st = GPOINTER_TO_INT (g_hash_table_lookup (state, d));
              if (!g_hash_table_contains (in_graph, d) || st == 2)
                continue;
              if (st == 1)
                {
                  g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID,
                               "the graph has a cycle through node '%s' (%s)", d->name, d->op_type);
                  for (guint k = 0; k < stack->len; k++)
                    {
                      GPtrArray *dl = g_array_index (stack, gpointer, k * 2 + 1);
                      if (dl) g_ptr_array_unref (dl);
                    }
                  return FALSE;
                }
              next = d;
            }
          if (next != NULL)
            {
              gpointer e[2] = { next, NULL };
              g_hash_table_insert (state, next, GINT_TO_POINTER (1));
              g_array_append_vals (stack, e, 1);
              continue;
            }
          g_ptr_array_unref (deps);
          g_hash_table_insert (state, n, GINT_TO_POINTER (2));
          g_ptr_array_add (order, n);
          g_array_set_size (stack, stack->len - 1);
        }
    }
  g_ptr_array_set_size (graph->nodes, 0);
  g_ptr_array_extend_and_steal (graph->nodes, g_steal_pointer (&order));
  return TRUE;
}

static void
mark_live_value (FbValue *v, gpointer data)
{
  g_hash_table_add (data, v);
}

void
fb_graph_remove_dead (FbGraph *graph)
{
  g_autoptr(GHashTable) live = g_hash_table_new (NULL, NULL);   /* FbValue* read by a live node */
  g_autoptr(GPtrArray) kept = g_ptr_array_new ();
  g_autoptr(GPtrArray) kept_values = g_ptr_array_new ();

  g_return_if_fail (graph != NULL);
  for (guint i = 0; i < graph->outputs->len; i++)
    g_hash_table_add (live, g_ptr_array_index (graph->outputs, i));
  /* Walk backwards: in topological order, every reader of a value comes after its producer. */
  for (guint i = graph->nodes->len; i-- > 0;)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);
      gboolean used = FALSE;
      for (guint k = 0; k < n->n_outputs && !used; k++)
        used = n->outputs[k] && g_hash_table_contains (live, n->outputs[k]);
      if (!used)
        continue;
      node_foreach_read (n, mark_live_value, live);
      g_ptr_array_add (kept, n);
    }
  /* Dropped nodes stay in the arena, but the tensors their attributes hold are let go now:
   * graph_free only visits the nodes still listed. */
  {
    g_autoptr(GHashTable) kept_set = g_hash_table_new (NULL, NULL);
    for (guint i = 0; i < kept->len; i++)
      g_hash_table_add (kept_set, g_ptr_array_index (kept, i));
    for (guint i = 0; i < graph->nodes->len; i++)
      {
        FbNode *n = g_ptr_array_index (graph->nodes, i);
        if (g_hash_table_contains (kept_set, n))
          continue;
        for (guint a = 0; a < n->n_attrs; a++)
          if (n->attrs[a].type == FB_ATTR_TENSOR)
            {
              g_clear_pointer (&n->attrs[a].t, fb_tensor_unref);
              n->attrs[a].type = FB_ATTR_UNDEFINED;
            }
      }
  }
  g_ptr_array_set_size (graph->nodes, 0);
  for (guint i = kept->len; i-- > 0;)
    g_ptr_array_add (graph->nodes, g_ptr_array_index (kept, i));

  /* Values stay when a live node produces or reads them, or the graph's interface names them. */
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);
      for (guint k = 0; k < n->n_outputs; k++)
        if (n->outputs[k])
          g_hash_table_add (live, n->outputs[k]);
    }
  for (guint i = 0; i < graph->inputs->len; i++)
    g_hash_table_add (live, g_ptr_array_index (graph->inputs, i));
  for (guint i = 0; i < graph->values->len; i++)
    {
      FbValue *v = g_ptr_array_index (graph->values, i);
      if (g_hash_table_contains (live, v))
        g_ptr_array_add (kept_values, v);
      else if (v->producer != NULL && v->producer->n_outputs > 1 &&
               g_ptr_array_find (graph->nodes, v->producer, NULL))
        g_ptr_array_add (kept_values, v);   /* an unused extra output of a live node */
      else
        {
          fb_tensor_unref (v->constant);
          v->constant = NULL;
        }
    }
  g_ptr_array_set_size (graph->values, 0);
  g_ptr_array_extend (graph->values, kept_values, NULL, NULL);
}

static void
replace_in_graph (FbGraph *g, FbValue *old_value, FbValue *new_value, gboolean is_subgraph)
{
  for (guint i = 0; i < g->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (g->nodes, i);
      for (guint k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] == old_value)
          n->inputs[k] = new_value;
    }
  /* A subgraph that returns an outer value directly returns the replacement instead. */
  if (is_subgraph)
    for (guint i = 0; i < g->outputs->len; i++)
      if (g_ptr_array_index (g->outputs, i) == old_value)
        g->outputs->pdata[i] = new_value;
  for (guint i = 0; i < g->subgraphs->len; i++)
    replace_in_graph (g_ptr_array_index (g->subgraphs, i), old_value, new_value, TRUE);
}

void
fb_graph_replace_uses (FbGraph *graph, FbValue *old_value, FbValue *new_value)
{
  g_return_if_fail (graph != NULL && old_value != NULL && new_value != NULL);
  replace_in_graph (graph, old_value, new_value, FALSE);
  for (guint i = 0; i < graph->outputs->len; i++)
    if (g_ptr_array_index (graph->outputs, i) == old_value)
      {
        /* The graph's interface keeps its names: the replacement takes the output's name. */
        graph->outputs->pdata[i] = new_value;
        new_value->is_output = TRUE;
        new_value->name = old_value->name;
        old_value->is_output = FALSE;
      }
}
