/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Slices without copies: a Slice, or a Gather of one constant index, whose output is one
 * contiguous run of its input's bytes becomes a view of that run: its buffer lies inside the
 * input's at an offset (FbBuffer.slice_of, as a Concat's pieces do) and its kernel runs no code.
 * Attention splits its packed projection so (q, k, v = qkv[0], qkv[1], qkv[2] after the
 * heads' transpose: three Gathers along the first axis), and a shifted window's roll slices
 * whole rows of a batch-1 image; each was a kernel copying a third or a part of the tensor.
 *
 * A run is contiguous when the axes after some axis a are taken whole and the axes before it
 * have extent 1 in the output (a may be cut anywhere, with step 1). The input's bytes must be
 * an activation of this run that no kernel writes over after its producer (no residual in
 * place over them; a Concat in place counts no writer of its own, its pieces' producers
 * write it), not a strided piece of a channels-last Concat, and the output an activation of its
 * own, written by the slicing kernel only. The run must start a multiple of 64 bytes in: the
 * generated kernels' vector loads and the libraries assume buffers aligned as the arena aligns
 * them. The memory plan then packs the input with the views inside it as one item that lives
 * until the last read of any of them (fb-memory-plan.c).
 *
 * Run on the finished plan after the Concats in place (fb-lower-concat.c), so that a Concat
 * never places pieces that a view already lies in. */
#include "fb-lower-private.h"

#define VIEW_ALIGN 64

/* For an input of dims in and an output of dims out (same rank) starting at coordinates start:
 * whether the output is one run of the input's bytes, and where it starts, in elements. */
static gboolean
contiguous_run (int rank, const int64_t *in, const int64_t *out, const int64_t *start,
                int64_t *offset)
{
  int a = rank - 1;
  while (a >= 0 && out[a] == in[a])
    a--;
  for (int d = 0; d < a; d++)
    if (out[d] != 1)
      return FALSE;
  *offset = 0;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; d--)
    {
      if (start[d] < 0 || start[d] + out[d] > in[d])
        return FALSE;
      *offset += start[d] * stride;
      stride *= in[d];
    }
  return TRUE;
}

/* A Gather of one constant index along its axis: the output with that axis kept as extent 1,
 * in *out, and its start. */
static gboolean
gather_start (const FbNode *node, int rank, const int64_t *in, int64_t *out, int64_t *start)
{
  const FbValue *iv = fb_node_input (node, 1);
  int axis;
  if (iv == NULL || iv->constant == NULL || iv->constant->numel != 1 ||
      !fb_axis_normalize (fb_node_attr_int (node, "axis", 0), rank, &axis))
    return FALSE;
  int64_t i = fb_tensor_get_i64 (iv->constant, 0);
  if (i < 0)
    i += in[axis];
  if (i < 0 || i >= in[axis])
    return FALSE;
  for (int d = 0; d < rank; d++)
    {
      out[d] = d == axis ? 1 : in[d];
      start[d] = d == axis ? i : 0;
    }
  return TRUE;
}

/* Where the node's output starts in its input's bytes, when it is one run of them. */
static gboolean
view_offset (const FbNode *node, int64_t *offset)
{
  const FbValue *x = fb_node_input (node, 0), *y = node->outputs[0];
  int rank = 0, orank = 0;
  int64_t in[FB_MAX_RANK], out[FB_MAX_RANK], start[FB_MAX_RANK];
  if (x == NULL || y == NULL || x->dtype != y->dtype || !_fb_lower_dims (x, &rank, in) ||
      !_fb_lower_dims (y, &orank, out) || rank < 1)
    return FALSE;
  if (node->op == FB_OP_SLICE)
    {
      int64_t step[FB_MAX_RANK];
      if (orank != rank || !_fb_lower_slice_starts (node, rank, in, start, step, NULL))
        return FALSE;
      /* A step other than 1 along an axis the output keeps more than one element of. */
      for (int d = 0; d < rank; d++)
        if (step[d] != 1 && out[d] > 1)
          return FALSE;
      return contiguous_run (rank, in, out, start, offset);
    }
  int64_t kept[FB_MAX_RANK];
  return node->op == FB_OP_GATHER && gather_start (node, rank, in, kept, start) &&
         contiguous_run (rank, in, kept, start, offset);
}

/* The kernel's argument for value v's buffer, or -1. */
static int
arg_of (const FbPlan *plan, const FbKernel *kernel, const FbValue *v, FbKArgRole role)
{
  for (guint a = 0; a < kernel->args->len; a++)
    {
      const FbKArg *arg = &g_array_index (kernel->args, FbKArg, a);
      if (arg->role == role && fb_plan_buffer (plan, arg->buffer)->value == v)
        return (int) a;
    }
  return -1;
}

/* Whether bytes lie in one plain run all the way up their Concats (no strided piece). */
static gboolean
packed_run (const FbPlan *plan, guint b)
{
  for (const FbBuffer *buf = fb_plan_buffer (plan, b);; buf = fb_plan_buffer (plan, buf->slice_of))
    {
      if (buf->slice_stride > 0)
        return FALSE;
      if (buf->slice_of < 0)
        return TRUE;
    }
}

static gboolean
slice_as_view (FbPlan *plan, FbKernel *kernel, guint *writers)
{
  const FbNode *node = kernel->node;
  int64_t offset;
  if (!view_offset (node, &offset))
    return FALSE;
  int ai = arg_of (plan, kernel, fb_node_input (node, 0), FB_KARG_INPUT);
  int ao = arg_of (plan, kernel, node->outputs[0], FB_KARG_OUTPUT);
  if (ai < 0 || ao < 0)
    return FALSE;
  guint in = fb_plan_root (plan, g_array_index (kernel->args, FbKArg, ai).buffer);
  guint out = g_array_index (kernel->args, FbKArg, ao).buffer;
  FbBuffer *ib = fb_plan_buffer (plan, in), *ob = fb_plan_buffer (plan, out);
  int64_t bytes = offset * fb_dtype_size (ob->dtype);
  if (ib->kind != FB_BUF_INTERMEDIATE || ib->dynamic || writers[in] > 1 || !packed_run (plan, in) ||
      ob->kind != FB_BUF_INTERMEDIATE || ob->dynamic || ob->alias >= 0 || ob->slice_of >= 0 ||
      writers[out] != 1 || bytes % VIEW_ALIGN != 0 || bytes + ob->nbytes > ib->nbytes)
    return FALSE;
  /* Nothing else may lie in the output's bytes: no buffer views them. */
  for (guint i = 0; i < plan->buffers->len; i++)
    if (fb_plan_buffer (plan, i)->slice_of == (int) out)
      return FALSE;
  ob->slice_of = (int) in;
  ob->slice_offset = bytes;
  _fb_lower_become_view (kernel, g_strdup_printf ("%s as a view (its input's bytes from %"
                                                   G_GINT64_FORMAT ")", fb_op_name (node->op),
                                                   bytes));
  writers[out]--;
  return TRUE;
}

guint
_fb_lower_slice_views (FbPlan *plan)
{
  g_assert (plan != NULL);
  /* FUSEBENCH_SLICE_VIEWS=0 keeps the copies, to compare. */
  if (g_strcmp0 (g_getenv ("FUSEBENCH_SLICE_VIEWS"), "0") == 0)
    return 0;
  g_autofree guint *writers = _fb_lower_count_writers (plan);
  guint n = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (kernel->kind == FB_KERNEL_LOOPS && kernel->node != NULL && kernel->node->n_outputs == 1 &&
          (kernel->node->op == FB_OP_SLICE || kernel->node->op == FB_OP_GATHER) &&
          slice_as_view (plan, kernel, writers))
        n++;
    }
  return n;
}
