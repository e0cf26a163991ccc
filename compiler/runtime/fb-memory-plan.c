/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where every buffer of a plan lives in the arena. Values the plan-memory pass placed keep its
 * offsets (recorded on the final stage's values); the rest (kernel scratch, values inside fused
 * groups, everything when the pass is disabled) are packed after them by lifetime, in kernel
 * order, largest first at the lowest offset free for their whole life. Views take their root's
 * bytes and stretch its life to their own last use.
 *
 * Convolutions that add their residual in place (fb-lower-residual.c) make their output an
 * alias of a residual the pass placed apart from it, which the pass's offsets do not allow
 * for. Such a plan is packed anew, all of it: the values the pass gave one buffer (in-place
 * elementwise chains, views) stay one item, the items an in-place residual joins become one,
 * and each item lives from its first member's first use to its last member's last use.
 * Concatenations whose pieces are written straight into them (fb-lower-concat.c) are packed
 * the same way, each with its pieces as one item, and so are buffers read or written where the
 * pass did not expect (FbBuffer.own_life), each an item of its own. */
#include "fb-memory-plan.h"

#define ALIGN 64

typedef struct {
  guint   index;      /* the buffer (a pass buffer's first member when grouped) */
  int64_t size;
  int     start, end;
  int64_t offset;
  gboolean used;      /* some member is read or written */
} Item;

static int
by_size (gconstpointer a, gconstpointer b)
{
  const Item *x = a, *y = b;
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  return x->start - y->start;
}

static int64_t
aligned (int64_t n)
{
  return (MAX (n, 1) + ALIGN - 1) / ALIGN * ALIGN;
}

static void
touch (FbPlan *plan, guint b, int k)
{
  FbBuffer *buf = fb_plan_buffer (plan, fb_plan_root (plan, b));
  if (buf->first_use < 0 || k < buf->first_use)
    buf->first_use = k;
  buf->last_use = MAX (buf->last_use, k);
}

/* Whether the arena holds b's own bytes (not an alias, a caller's input or a constant). */
static gboolean
owns_bytes (const FbBuffer *b)
{
  return b->alias < 0 && b->kind != FB_BUF_INPUT && b->kind != FB_BUF_CONST;
}

static Item
item_of (const FbBuffer *b, guint index)
{
  Item it = { .index = index, .size = aligned (b->nbytes), .used = b->first_use >= 0,
              .start = MAX (b->first_use, 0), .end = MAX (b->last_use, b->first_use) };
  if (b->first_use < 0)
    it.start = it.end = 0;
  return it;
}

/* Packs items from base up, largest first, each at the lowest offset free for its whole life;
 * returns the top. Sorts items. */
static int64_t
pack (GArray *items, int64_t base)
{
  g_array_sort (items, by_size);
  int64_t top = base;
  for (guint i = 0; i < items->len; i++)
    {
      Item *it = &g_array_index (items, Item, i);
      int64_t offset = base;
      gboolean moved = TRUE;
      /* Slide up past every placed item alive at the same time until nothing collides. */
      while (moved)
        {
          moved = FALSE;
          for (guint j = 0; j < i; j++)
            {
              Item *p = &g_array_index (items, Item, j);
              if (p->start <= it->end && it->start <= p->end &&
                  offset < p->offset + p->size && p->offset < offset + it->size)
                {
                  offset = p->offset + p->size;
                  moved = TRUE;
                }
            }
        }
      it->offset = offset;
      top = MAX (top, offset + it->size);
    }
  return top;
}

static guint
find (guint *parent, guint i)
{
  while (parent[i] != i)
    i = parent[i] = parent[parent[i]];
  return i;
}

/* The pass's buffer id of b, 0 when it placed none. */
static guint
pass_id (const FbBuffer *b)
{
  return b->value && b->value->buffer > 0 ? (guint) b->value->buffer : 0;
}

/* Whether some alias joins buffers the pass placed apart (see the top). */
static gboolean
joins_pass_buffers (const FbPlan *plan)
{
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      const FbBuffer *b = fb_plan_buffer (plan, i);
      guint id = pass_id (b), root = pass_id (fb_plan_buffer (plan, fb_plan_root (plan, i)));
      if (b->alias >= 0 && id > 0 && root > 0 && id != root)
        return TRUE;
    }
  return FALSE;
}

/* Whether b is a Concat's output that pieces are written into, or such a piece (or a slice
 * viewing its input's bytes), or lives a life of its own (FbBuffer.own_life): all of them are
 * packed apart from the pass's buffers. */
static gboolean *
slice_members (const FbPlan *plan, gboolean *any)
{
  gboolean *member = g_new0 (gboolean, plan->buffers->len);
  *any = FALSE;
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      const FbBuffer *b = fb_plan_buffer (plan, i);
      if (b->slice_of >= 0)
        member[i] = member[b->slice_of] = *any = TRUE;
      if (b->own_life)
        member[i] = *any = TRUE;
    }
  return member;
}

/* The whole arena anew. The pass's buffers are items, joined by the aliases between them; a
 * Concat written in place (fb-lower-concat.c) is one item with every piece inside it, its
 * members taken out of the pass's buffers (which shared their bytes with values that may now
 * be written over the concatenation while it is still read). */
static int64_t
pack_joined (FbPlan *plan, const gboolean *sliced)
{
  guint n_ids = 1, n_bufs = plan->buffers->len;
  for (guint i = 0; i < n_bufs; i++)
    n_ids = MAX (n_ids, pass_id (fb_plan_buffer (plan, i)) + 1);
  g_autofree guint *parent = g_new (guint, n_ids);
  for (guint i = 0; i < n_ids; i++)
    parent[i] = i;
  for (guint i = 0; i < n_bufs; i++)
    {
      guint r = fb_plan_root (plan, i);
      guint id = pass_id (fb_plan_buffer (plan, i)), root = pass_id (fb_plan_buffer (plan, r));
      if (id > 0 && root > 0 && !sliced[i] && !sliced[r])
        parent[find (parent, id)] = find (parent, root);
    }

  /* Items are keyed: a pass buffer by its id, a concatenation by n_ids + its outermost
   * output's index. */
  g_autoptr(GArray) items = g_array_new (FALSE, FALSE, sizeof (Item));
  g_autofree int *item_of_key = g_new (int, n_ids + n_bufs);
  g_autofree int *item_of_buffer = g_new (int, n_bufs);
  g_autofree int64_t *inside = g_new0 (int64_t, n_bufs);
  for (guint i = 0; i < n_ids + n_bufs; i++)
    item_of_key[i] = -1;
  for (guint i = 0; i < n_bufs; i++)
    {
      FbBuffer *b = fb_plan_buffer (plan, i);
      item_of_buffer[i] = -1;
      if (!owns_bytes (b))
        continue;
      Item it = item_of (b, i);
      guint key = 0;
      if (sliced[i])
        {
          guint top = fb_plan_slice_root (plan, i, &inside[i]);
          key = n_ids + top;
          it.size = aligned (fb_plan_buffer (plan, top)->nbytes);
        }
      else if (pass_id (b) > 0)
        key = find (parent, pass_id (b));
      if (key > 0 && item_of_key[key] >= 0)
        {
          Item *group = &g_array_index (items, Item, item_of_key[key]);
          group->size = MAX (group->size, it.size);
          if (it.used && !group->used)
            {
              group->start = it.start;
              group->end = it.end;
              group->used = TRUE;
            }
          else if (it.used)
            {
              group->start = MIN (group->start, it.start);
              group->end = MAX (group->end, it.end);
            }
          item_of_buffer[i] = item_of_key[key];
          continue;
        }
      if (key > 0)
        item_of_key[key] = items->len;
      item_of_buffer[i] = items->len;
      g_array_append_val (items, it);
    }
  /* Sorting moves the items: remember each one's place by its first buffer. */
  g_autofree int *first_of_item = g_new (int, MAX (items->len, 1));
  for (guint i = 0; i < items->len; i++)
    first_of_item[i] = g_array_index (items, Item, i).index;
  int64_t top = pack (items, 0);
  g_autofree int64_t *offset_of_first = g_new0 (int64_t, n_bufs);
  for (guint i = 0; i < items->len; i++)
    {
      Item *it = &g_array_index (items, Item, i);
      offset_of_first[it->index] = it->offset;
    }
  for (guint i = 0; i < n_bufs; i++)
    if (item_of_buffer[i] >= 0)
      fb_plan_buffer (plan, i)->offset =
        offset_of_first[first_of_item[item_of_buffer[i]]] + inside[i];
  return top;
}

void
fb_plan_layout_memory (FbPlan *plan)
{
  g_return_if_fail (plan != NULL);
  int n_kernels = plan->kernels->len;

  for (guint i = 0; i < plan->buffers->len; i++)
    {
      FbBuffer *b = fb_plan_buffer (plan, i);
      b->first_use = b->last_use = -1;
      b->offset = -1;
    }
  for (int k = 0; k < n_kernels; k++)
    {
      FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint a = 0; a < kernel->args->len; a++)
        touch (plan, g_array_index (kernel->args, FbKArg, a).buffer, k);
    }
  for (guint i = 0; i < plan->outputs->len; i++)
    touch (plan, g_array_index (plan->outputs, guint, i), n_kernels);

  gboolean any_slice;
  g_autofree gboolean *sliced = slice_members (plan, &any_slice);
  if (any_slice || joins_pass_buffers (plan))
    {
      plan->arena_bytes = pack_joined (plan, sliced);
      return;
    }
  /* First the pass's plan. */
  int64_t base = 0;
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      FbBuffer *b = fb_plan_buffer (plan, i);
      if (owns_bytes (b) && pass_id (b) > 0)
        {
          b->offset = b->value->offset;
          base = MAX (base, b->offset + aligned (b->nbytes));
        }
    }
  /* Then everything else, after it. */
  g_autoptr(GArray) items = g_array_new (FALSE, FALSE, sizeof (Item));
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      FbBuffer *b = fb_plan_buffer (plan, i);
      if (owns_bytes (b) && b->offset < 0)
        {
          Item it = item_of (b, i);
          g_array_append_val (items, it);
        }
    }
  plan->arena_bytes = pack (items, base);
  for (guint i = 0; i < items->len; i++)
    {
      Item *it = &g_array_index (items, Item, i);
      fb_plan_buffer (plan, it->index)->offset = it->offset;
    }
}
