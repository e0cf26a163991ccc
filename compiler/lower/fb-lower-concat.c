/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Concatenation without copies: when every piece of a Concat is a contiguous run of its output
 * (nothing but extents of 1 before the axis: channels of a batch-1 NCHW tensor, or of 1x1 maps
 * in either layout), each piece's producer writes straight into its run and the Concat's kernel
 * becomes a view with no code. A dense block's Concats nest once cse has made each one the
 * previous layer's Concat and one piece more: taken from the last to the first, each places
 * its pieces in its output, which is itself a piece of the next, and the whole block is one
 * buffer that every layer appends its 32 channels to.
 *
 * Channels-last, a piece is a run of channels of every pixel: strided. Such a Concat along
 * the last axis is written in place too where every kernel that touches a piece can index it
 * as rows the output's width apart (fb-lower-restride.c: generated loops whose indices split
 * into a row and a channel; convolutions writing it without an addend, which copy their
 * packed output into the rows): the pieces become strided slices (FbBuffer.slice_stride) and
 * those kernels are re-indexed. A dense block's layers then read their input as a run of the
 * block's channels and append theirs, in place, as in NCHW.
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

/* Per buffer: kernels (not views) writing its root's bytes. */
guint *
_fb_lower_count_writers (const FbPlan *plan)
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

/* The buffer of a Concat's input v, in *p: FALSE unless it is an activation of its own. */
static gboolean
piece_of (const Slicer *s, const FbValue *v, guint *p)
{
  *p = GPOINTER_TO_UINT (g_hash_table_lookup (s->buffer_of, v));
  if (*p == 0 || !own_activation (s, *p - 1))
    return FALSE;
  (*p)--;
  return TRUE;
}

void
_fb_lower_become_view (FbKernel *kernel, char *label)
{
  for (guint p = 0; p < kernel->phases->len; p++)
    g_clear_pointer (&((FbKPhase *) g_ptr_array_index (kernel->phases, p))->fn, g_free);
  g_ptr_array_set_size (kernel->phases, 0);
  kernel->kind = FB_KERNEL_VIEW;
  kernel->flops = kernel->bytes = 0;
  g_free (kernel->label);
  kernel->label = label;
}

/* The Concat kernel writes nothing now: its n pieces' producers have written its output c. */
static void
become_view (Slicer *s, FbKernel *kernel, guint c, guint n)
{
  _fb_lower_become_view (kernel, g_strdup_printf ("Concat in place (its %u inputs are written "
                                                  "into it)", n));
  s->writers[c]--;
}

/* Whether every kernel but skip that touches buffer b indexes it (or, apply, now does) as
 * rows stride elements apart, through no other buffer viewing its bytes. */
static gboolean
restridable (Slicer *s, guint b, int64_t stride, const FbKernel *skip, gboolean apply)
{
  const FbPlan *plan = s->plan;
  for (guint i = 0; i < plan->buffers->len; i++)
    if (i != b && fb_plan_root (plan, i) == b)
      return FALSE;
  const FbBuffer *buf = fb_plan_buffer (plan, b);
  int64_t row = buf->dims[buf->rank - 1];
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (kernel == skip)
        continue;
      for (guint a = 0; a < kernel->args->len; a++)
        if (g_array_index (kernel->args, FbKArg, a).buffer == b &&
            !_fb_lower_restride_arg (s->plan, kernel, a, row, stride, apply))
          return FALSE;
    }
  return TRUE;
}

/* Whether a library convolution writes buffer b and would copy its packed output into the
 * rows (oneDNN's primitives in fb-dnnl-conv.c, or a phase after cuDNN's): the copy the Concat
 * would have made. The target says which write the rows themselves (on the cpu target the
 * Winograd and direct convolutions, and 1x1 convolutions of up to 64 input channels, run as
 * products; a cuBLASLt product too). */
static gboolean
library_written (const Slicer *s, guint b)
{
  const FbTargetDesc *target = s->plan->target_desc;
  for (guint k = 0; k < s->plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (s->plan->kernels, k);
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          const FbKPhase *ph = g_ptr_array_index (kernel->phases, p);
          if (ph->conv && ph->conv->lib == FB_KLIB_CONV &&
              g_array_index (kernel->args, FbKArg, ph->conv->y).buffer == b)
            return target->conv_writes_rows == NULL || !target->conv_writes_rows (&ph->conv->desc);
        }
    }
  return FALSE;
}

/* A Concat along the last axis whose pieces are strided runs of channels (see the top): each
 * piece, not yet placed anywhere, becomes a slice of output c with the stride of c's rows in
 * its slice root (c's own width, or the stride c already has as a piece of a later Concat).
 * Only where some piece then costs nothing (a generated kernel writes it, a convolution that
 * writes rows itself, or an earlier Concat in place): a Concat of library convolutions'
 * outputs alone would trade its copy for theirs. */
static gboolean
slice_concat_strided (Slicer *s, FbKernel *kernel, guint c)
{
  FbPlan *plan = s->plan;
  const FbNode *node = kernel->node;
  FbBuffer *cb = fb_plan_buffer (plan, c);
  int axis;
  /* FUSEBENCH_CONCAT_STRIDED=0 keeps these Concats copies, to compare. */
  if (plan->target_desc == NULL || g_strcmp0 (g_getenv ("FUSEBENCH_CONCAT_STRIDED"), "0") == 0 ||
      cb->rank < 2 ||
      !fb_axis_normalize (fb_node_attr_int (node, "axis", 0), cb->rank, &axis) ||
      axis != cb->rank - 1 || (cb->slice_of >= 0 && cb->slice_stride == 0))
    return FALSE;
  int64_t elem = fb_dtype_size (cb->dtype);
  int64_t stride = cb->slice_stride > 0 ? cb->slice_stride : cb->dims[axis];
  if ((stride * elem) % SLICE_ALIGN != 0)
    return FALSE;
  g_autofree guint *piece = g_new (guint, node->n_inputs);
  g_autofree int64_t *at = g_new (int64_t, node->n_inputs);
  guint n = 0, n_free = 0;
  int64_t channels = 0;
  for (guint j = 0; j < node->n_inputs; j++)
    {
      guint p;
      if (node->inputs[j] == NULL)
        continue;
      if (!piece_of (s, node->inputs[j], &p))
        return FALSE;
      const FbBuffer *pb = fb_plan_buffer (plan, p);
      if (pb->dtype != cb->dtype || pb->rank != cb->rank || pb->slice_of >= 0 ||
          (channels * elem) % SLICE_ALIGN != 0)
        return FALSE;
      for (int d = 0; d < axis; d++)
        if (pb->dims[d] != cb->dims[d])
          return FALSE;
      for (guint i = 0; i < n; i++)
        if (piece[i] == p)
          return FALSE;
      if (pb->dims[axis] == 0)
        continue;
      if (!restridable (s, p, stride, kernel, FALSE))
        return FALSE;
      n_free += !library_written (s, p);
      piece[n] = p;
      at[n++] = channels;
      channels += pb->dims[axis];
    }
  if (channels != cb->dims[axis] || n_free == 0)
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      restridable (s, piece[i], stride, kernel, TRUE);
      FbBuffer *pb = fb_plan_buffer (plan, piece[i]);
      pb->slice_of = (int) c;
      pb->slice_offset = at[i] * elem;
      pb->slice_stride = stride;
    }
  become_view (s, kernel, c, n);
  return TRUE;
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
  if (!own_activation (s, c))
    return FALSE;
  if (cb->slice_stride > 0 || !contiguous_pieces (node, cb))
    return slice_concat_strided (s, kernel, c);

  g_autofree guint *piece = g_new (guint, node->n_inputs);
  g_autofree int64_t *at = g_new (int64_t, node->n_inputs);
  guint n = 0, n_placed = 0, top = 0;
  int64_t run = 0, start = 0;
  for (guint j = 0; j < node->n_inputs; j++)
    {
      guint p;
      if (node->inputs[j] == NULL)
        continue;
      if (!piece_of (s, node->inputs[j], &p))
        return FALSE;
      const FbBuffer *pb = fb_plan_buffer (plan, p);
      if (pb->nbytes == 0)
        continue;
      if (pb->dtype != cb->dtype || run % SLICE_ALIGN != 0 || pb->slice_stride > 0)
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
  become_view (s, kernel, c, n);
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
  s.writers = _fb_lower_count_writers (plan);
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
