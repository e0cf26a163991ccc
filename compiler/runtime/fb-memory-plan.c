/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where every buffer of a plan lives in the arena. Values the plan-memory pass placed keep its
 * offsets (recorded on the final stage's values); the rest (kernel scratch, values inside fused
 * groups, everything when the pass is disabled) are packed after them by lifetime, in kernel
 * order, largest first at the lowest offset free for their whole life. Views take their root's
 * bytes and stretch its life to their own last use. So do the outputs of convolutions that add
 * their residual in place (fb-lower-residual.c), which the pass planned apart: the bytes the
 * pass gave that residual were its own only until then, so its root is packed here with the
 * rest, by the life it has now. */
#include "fb-runtime.h"

#define ALIGN 64

typedef struct {
  guint   index;
  int64_t size;
  int     start, end;
  int64_t offset;
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

  /* Roots with an alias the pass placed elsewhere: sharing the pass did not plan. */
  g_autofree gboolean *unplanned = g_new0 (gboolean, plan->buffers->len);
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      FbBuffer *b = fb_plan_buffer (plan, i);
      guint r = fb_plan_root (plan, i);
      FbBuffer *root = fb_plan_buffer (plan, r);
      if (b->alias >= 0 && b->value && b->value->buffer > 0 && root->value &&
          root->value->buffer > 0 && b->value->buffer != root->value->buffer)
        unplanned[r] = TRUE;
    }
  /* First the pass's plan. */
  int64_t base = 0;
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      FbBuffer *b = fb_plan_buffer (plan, i);
      if (b->alias >= 0 || b->kind == FB_BUF_INPUT || b->kind == FB_BUF_CONST)
        continue;
      if (b->value && b->value->buffer > 0 && !unplanned[i])
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
      if (b->alias >= 0 || b->kind == FB_BUF_INPUT || b->kind == FB_BUF_CONST || b->offset >= 0)
        continue;
      Item it = { .index = i, .size = aligned (b->nbytes),
                  .start = MAX (b->first_use, 0), .end = MAX (b->last_use, b->first_use) };
      if (b->first_use < 0)
        it.start = it.end = 0;
      g_array_append_val (items, it);
    }
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
      fb_plan_buffer (plan, it->index)->offset = offset;
      top = MAX (top, offset + it->size);
    }
  plan->arena_bytes = top;
}
