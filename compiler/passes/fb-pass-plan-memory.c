/* SPDX-License-Identifier: GPL-3.0-or-later */
/* plan-memory: where every intermediate activation lives, so that a runtime allocates one arena
 * up front instead of a tensor per value.
 *
 * Liveness is measured in node positions: a value lives from the node that writes it to the
 * last node that reads it (graph outputs to the end). An elementwise node (or fused
 * elementwise group) whose input of the same size dies at that node writes its result over it
 * in place: both share one buffer. A view (Reshape and its kin, Identity) shares its input's
 * buffer whatever else reads it, and keeps it alive as long as the view is: the targets then
 * make it an alias, not a copy. Buffers are then packed into the arena largest first, each
 * at the lowest offset that does not collide with a buffer alive at the same time. The plan is
 * recorded on the values themselves (FbValue.buffer and FbValue.offset).
 *
 * Graph inputs (the caller's), constants, values inside fused bodies (they never reach memory)
 * and values whose size is only known at run time stay unplanned (buffer 0).
 *
 * Requires: the final node order (nothing may reorder nodes after this pass).
 * Preserves: everything but the plan fields.
 * Invalidates: nothing. */
#include "fb-pass-private.h"

#include <stdlib.h>

#define ALIGN 64

typedef struct {
  int64_t size;       /* bytes, aligned */
  guint   start;      /* first position alive */
  guint   end;        /* last position alive */
  int64_t offset;
  int     id;
} Buffer;

static int64_t
value_bytes (const FbValue *v)
{
  gboolean overflow = FALSE;
  int64_t numel = fb_shape_numel (&v->shape, &overflow);
  gsize esize = fb_dtype_size (v->dtype);

  /* A sequence or an optional lives on the host, its size known only when it is made. */
  if (v->kind != FB_KIND_TENSOR)
    return -1;
  if (numel < 0 || overflow || esize == 0 || numel > G_MAXINT64 / (int64_t) esize)
    return -1;
  return numel * (int64_t) esize;
}

static gboolean
writes_in_place (const FbNode *n)
{
  if (n->op == FB_OP_FUSED)
    return g_strcmp0 (fb_node_attr_string (n, "kind", ""), "elementwise") == 0;
  return fb_op_has_flag (n->op, FB_OPF_ELEMENTWISE) && n->op != FB_OP_DROPOUT;
}

static int
compare_size (gconstpointer a, gconstpointer b)
{
  const Buffer *x = *(const Buffer * const *) a, *y = *(const Buffer * const *) b;
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  return x->start < y->start ? -1 : x->start > y->start;
}

static int
compare_offset (gconstpointer a, gconstpointer b)
{
  const Buffer *x = *(const Buffer * const *) a, *y = *(const Buffer * const *) b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Lowest offset where b fits between the placed buffers it overlaps in time. */
static int64_t
place (GPtrArray *placed, const Buffer *b)
{
  g_autoptr(GPtrArray) overlap = g_ptr_array_new ();
  int64_t offset = 0;

  for (guint i = 0; i < placed->len; i++)
    {
      Buffer *p = g_ptr_array_index (placed, i);
      if (p->start <= b->end && b->start <= p->end)
        g_ptr_array_add (overlap, p);
    }
  g_ptr_array_sort (overlap, compare_offset);
  for (guint i = 0; i < overlap->len; i++)
    {
      Buffer *p = g_ptr_array_index (overlap, i);
      if (offset + b->size <= p->offset)
        break;
      offset = MAX (offset, p->offset + p->size);
    }
  return offset;
}

static char *
format_bytes (int64_t b)
{
  if (b >= 10 * 1024 * 1024)
    return g_strdup_printf ("%.1f MiB", b / (1024.0 * 1024.0));
  if (b >= 10 * 1024)
    return g_strdup_printf ("%.1f KiB", b / 1024.0);
  return g_strdup_printf ("%" G_GINT64_FORMAT " B", b);
}

gboolean
_fb_pass_plan_memory (FbPassContext *ctx, FbGraph *graph, GError **error)
{
  g_autoptr(GHashTable) uses = fb_graph_build_uses (graph);
  g_autoptr(GHashTable) position = g_hash_table_new (NULL, NULL);    /* node -> index */
  g_autoptr(GHashTable) last_use = g_hash_table_new (NULL, NULL);    /* value -> last position */
  g_autoptr(GHashTable) buffer_of = g_hash_table_new (NULL, NULL);   /* value -> Buffer* */
  g_autoptr(GPtrArray) buffers = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) placed = g_ptr_array_new ();
  guint end = graph->nodes->len;
  int64_t total = 0, arena = 0, live_peak = 0;
  guint n_values = 0, n_in_place = 0;

  for (guint i = 0; i < graph->values->len; i++)
    {
      FbValue *v = g_ptr_array_index (graph->values, i);
      v->buffer = 0;
      v->offset = 0;
    }
  for (guint i = 0; i < graph->nodes->len; i++)
    g_hash_table_insert (position, g_ptr_array_index (graph->nodes, i), GUINT_TO_POINTER (i));

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);
      for (guint k = 0; k < n->n_outputs; k++)
        {
          FbValue *v = n->outputs[k];
          GPtrArray *users;
          guint last = i;
          if (v == NULL)
            continue;
          users = g_hash_table_lookup (uses, v);
          for (guint u = 0; users && u < users->len; u++)
            last = MAX (last, GPOINTER_TO_UINT (g_hash_table_lookup (position,
                                                g_ptr_array_index (users, u))));
          if (v->is_output)
            last = end;
          g_hash_table_insert (last_use, v, GUINT_TO_POINTER (last));
        }
    }

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);

      if (_fb_pass_cancelled (ctx, error))
        return FALSE;
      for (guint k = 0; k < n->n_outputs; k++)
        {
          FbValue *v = n->outputs[k];
          int64_t bytes;
          guint last;
          Buffer *b = NULL;

          if (v == NULL || v->constant != NULL || (bytes = value_bytes (v)) < 0)
            continue;
          last = GPOINTER_TO_UINT (g_hash_table_lookup (last_use, v));
          n_values++;
          total += bytes;
          if (k == 0 && fb_node_is_view (n) && n->n_inputs > 0 && n->inputs[0] &&
              (b = g_hash_table_lookup (buffer_of, n->inputs[0])) != NULL &&
              value_bytes (n->inputs[0]) == bytes)
            b->end = MAX (b->end, last);
          else
            b = NULL;
          /* In place over an input that dies here and has exactly this size and shape. */
          if (b == NULL && k == 0 && writes_in_place (n))
            for (guint j = 0; j < n->n_inputs && b == NULL; j++)
              {
                FbValue *in = n->inputs[j];
                Buffer *ib = in ? g_hash_table_lookup (buffer_of, in) : NULL;
                if (ib == NULL || in->is_output || ib->end != i || value_bytes (in) != bytes ||
                    !fb_shape_equal (&in->shape, &v->shape))
                  continue;
                b = ib;
                b->end = last;
                n_in_place++;
              }
          if (b == NULL)
            {
              b = g_new0 (Buffer, 1);
              b->size = (bytes + ALIGN - 1) / ALIGN * ALIGN;
              b->start = i;
              b->end = last;
              b->id = (int) buffers->len + 1;
              g_ptr_array_add (buffers, b);
            }
          g_hash_table_insert (buffer_of, v, b);
        }
    }

  {
    /* Not g_ptr_array_copy: the copy would take over the free function too. */
    g_autoptr(GPtrArray) by_size = g_ptr_array_sized_new (buffers->len);
    for (guint i = 0; i < buffers->len; i++)
      g_ptr_array_add (by_size, g_ptr_array_index (buffers, i));
    g_ptr_array_sort (by_size, compare_size);
    for (guint i = 0; i < by_size->len; i++)
      {
        Buffer *b = g_ptr_array_index (by_size, i);
        b->offset = place (placed, b);
        arena = MAX (arena, b->offset + b->size);
        g_ptr_array_add (placed, b);
      }
  }
  /* The lower bound no placement can beat: the most bytes alive at one moment. */
  for (guint t = 0; t <= end; t++)
    {
      int64_t live = 0;
      for (guint i = 0; i < buffers->len; i++)
        {
          Buffer *b = g_ptr_array_index (buffers, i);
          if (b->start <= t && t <= b->end)
            live += b->size;
        }
      live_peak = MAX (live_peak, live);
    }

  {
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init (&it, buffer_of);
    while (g_hash_table_iter_next (&it, &key, &value))
      {
        FbValue *v = key;
        Buffer *b = value;
        v->buffer = b->id;
        v->offset = b->offset;
      }
  }

  if (n_values > 0)
    {
      g_autofree char *s_total = format_bytes (total);
      g_autofree char *s_arena = format_bytes (arena);
      g_autofree char *s_live = format_bytes (live_peak);
      _fb_pass_note (ctx, "peak activations %s → %s (%u values in %u buffers, %u in place; "
                     "live peak %s)", s_total, s_arena, n_values, buffers->len, n_in_place, s_live);
    }
  return TRUE;
}
