/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Concatenation without copies: when every piece of a Concat is a contiguous run of its output
 * (nothing but extents of 1 before the axis: channels of a batch-1 NCHW tensor, or of 1x1 maps
 * in either layout), each piece's producer writes straight into its run and the Concat's kernel
 * becomes a view with no code. A dense block's Concats nest once cse has made each one the
 * previous layer's Concat and one piece more: taken from the last to the first, each places
 * its pieces in its output, which is itself a piece of the next, and the whole block is one
 * buffer that every layer appends its 32 channels to. Channels-last channel runs of a real
 * image are strided, so there (both targets' default layout) Concats still copy.
 *
 * Run on the finished plan (after the in-place residuals), before the memory plan, which
 * packs a Concat's output with the pieces inside it as one item living from the first piece's
 * write to the last read of any of them (fb-memory-plan.c).
 *
 * A piece qualifies when it is an activation of this run (not a graph input, output, constant
 * or sized at run time), owns its bytes (not a view), is written by one kernel only (no
 * residual added in place over it), appears once in the Concat and is not yet inside another
 * Concat, or is already inside the same later one at the place this Concat would put it.
 * Every piece must start a multiple of 64 bytes in: the kernels and libraries writing them
 * assume buffers aligned as the arena aligns them. Otherwise the Concat keeps its copy. */
#include "fb-lower-private.h"

#define SLICE_ALIGN 64

typedef struct {
  FbPlan     *plan;
  GHashTable *buffer_of;   /* FbValue* -> buffer index + 1 */
  guint      *writers;     /* per root buffer: kernels (not views) that write its bytes */
} Slicer;

static gboolean
own_activation (const Slicer *s, guint b)
{
  const FbBuffer *buf = fb_plan_buffer (s->plan, b);
  return buf->kind == FB_BUF_INTERMEDIATE && buf->alias < 0 && !buf->dynamic &&
         s->writers[b] == 1;
}

/* Whether nothing but extents of 1 come before the axis: every piece is one contiguous run. */
static gboolean
contiguous_pieces (const FbNode *node, const FbBuffer *out)
{
  int axis;
  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", 0), out->rank, &axis))
    return FALSE;
  for (int d = 0; d < axis; d++)
    if (out->dims[d] != 1)
      return FALSE;
  return TRUE;
}

static guint *
count_writers (const FbPlan *plan)
{
  guint *writers = g_new0 (guint, plan->buffers->len);
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (kernel->kind == FB_KERNEL_VIEW)
        continue;
      for (guint a = 0; a < kernel->args->len; a++)
        {
          const FbKArg *arg = &g_array_index (kernel->args, FbKArg, a);
          if (arg->role == FB_KARG_OUTPUT)
            writers[fb_plan_root (plan, arg->buffer)]++;
        }
    }
  return writers;
}

/* Places the pieces of one Concat kernel in its output, or changes nothing. Two cases only,
 * so that no bytes are ever claimed twice: no piece is placed yet (each gets a fresh run of
 * the output, wherever the output itself lies), or every piece already lies in one later
 * Concat back to back (the output becomes that run, writing nothing new). */
static gboolean
slice_concat (Slicer *s, FbKernel *kernel)
{
  FbPlan *plan = s->plan;
  const FbNode *node = kernel->node;
  guint c = GPOINTER_TO_UINT (g_hash_table_lookup (s->buffer_of, node->outputs[0]));
  if (c == 0)
    return FALSE;
  c--;
  FbBuffer *cb = fb_plan_buffer (plan, c);
  if (!own_activation (s, c) || !contiguous_pieces (node, cb))
    return FALSE;

  g_autofree guint *piece = g_new (guint, node->n_inputs);
  g_autofree int64_t *at = g_new (int64_t, node->n_inputs);
  guint n = 0, n_placed = 0, top = 0;
  int64_t run = 0, start = 0;
  for (guint j = 0; j < node->n_inputs; j++)
    {
      const FbValue *v = node->inputs[j];
      if (v == NULL)
        continue;
      guint p = GPOINTER_TO_UINT (g_hash_table_lookup (s->buffer_of, v));
      if (p == 0 || !own_activation (s, p - 1))
        return FALSE;
      p--;
      const FbBuffer *pb = fb_plan_buffer (plan, p);
      if (pb->nbytes == 0)
        continue;
      if (pb->dtype != cb->dtype || run % SLICE_ALIGN != 0)
        return FALSE;
      for (guint i = 0; i < n; i++)
        if (piece[i] == p)
          return FALSE;
      if (pb->slice_of >= 0)
        {
          int64_t off;
          guint t = fb_plan_slice_root (plan, p, &off);
          if (n_placed == 0)
            {
              top = t;
              start = off - run;
            }
          if (t != top || off != start + run)
            return FALSE;
          n_placed++;
        }
      piece[n] = p;
      at[n++] = run;
      run += pb->nbytes;
    }
  if (run != cb->nbytes || n == 0 || (n_placed > 0 && n_placed < n))
    return FALSE;

  if (n_placed > 0)
    {
      /* Every piece lies in `top` back to back: the output is that run of it. */
      if (cb->slice_of >= 0 || top == c)
        return FALSE;
      cb->slice_of = (int) top;
      cb->slice_offset = start;
    }
  else
    for (guint i = 0; i < n; i++)
      {
        FbBuffer *pb = fb_plan_buffer (plan, piece[i]);
        pb->slice_of = (int) c;
        pb->slice_offset = at[i];
      }
  /* No code: the pieces' producers have written it. */
  for (guint p = 0; p < kernel->phases->len; p++)
    g_clear_pointer (&((FbKPhase *) g_ptr_array_index (kernel->phases, p))->fn, g_free);
  g_ptr_array_set_size (kernel->phases, 0);
  kernel->kind = FB_KERNEL_VIEW;
  kernel->flops = kernel->bytes = 0;
  g_free (kernel->label);
  kernel->label = g_strdup_printf ("Concat in place (its %u inputs are written into it)", n);
  s->writers[c]--;
  return TRUE;
}

guint
_fb_lower_concat_in_place (FbPlan *plan)
{
  g_assert (plan != NULL);
  Slicer s = { .plan = plan, .buffer_of = g_hash_table_new (NULL, NULL) };
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      const FbBuffer *b = fb_plan_buffer (plan, i);
      if (b->value != NULL && !g_hash_table_contains (s.buffer_of, b->value))
        g_hash_table_insert (s.buffer_of, (gpointer) b->value, GUINT_TO_POINTER (i + 1));
    }
  s.writers = count_writers (plan);
  guint n = 0;
  /* From the last to the first: a later Concat that holds an earlier one's pieces is placed
   * first, and the earlier one finds them there. */
  for (guint k = plan->kernels->len; k-- > 0;)
    {
      FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (kernel->kind == FB_KERNEL_LOOPS && kernel->node != NULL &&
          kernel->node->op == FB_OP_CONCAT && kernel->node->n_outputs == 1 &&
          slice_concat (&s, kernel))
        n++;
    }
  g_hash_table_unref (s.buffer_of);
  g_free (s.writers);
  return n;
}
