/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Residual adds in place, for the cpu target: a convolution whose fused Add reads a residual
 * that nothing reads after it writes its output over that residual, and adds it with oneDNN's
 * sum post-op (dst += conv) instead of the binary post-op that reads a separate tensor, as
 * ONNX Runtime does: ResNet-50's 16 such 1x1 convolutions went from 9.4 to 8.9 ms inside the
 * network, a text detector's 1x1 Conv + Add of 160x160 maps from 8.0 to 4.8 (README.md, "CPU
 * math library").
 *
 * Run on the finished plan (every kernel lowered, the graph outputs marked), because only
 * then is it known who reads a buffer last. The output's buffer becomes an alias of the
 * residual's, so the memory plan gives both the same bytes and stretches their life to the
 * output's last use, and plan.json (which records aliases and the post-op kind) says so too.
 *
 * The residual qualifies when its bytes are an activation of this run (not a graph input, a
 * constant, a graph output, or sized at run time), read by nothing after this kernel (through
 * any view of the same bytes either), read by this kernel only as the addend, and the same
 * size, type and layout as the output. The kernel must be the convolution alone (no
 * generated phase reads the addend after the convolution wrote over it), and oneDNN or
 * fb-direct-conv.c must have a fast implementation of the sum variant: otherwise nothing
 * changes. Not for transposed convolutions (their matmul form takes no addend at all) nor
 * for GPU plans, whose cuDNN epilogues read the residual as a separate tensor. */
#include "fb-lower-private.h"

#include <string.h>

/* Per root buffer, the last kernel that touches its bytes (n_kernels: a graph output). */
static int *
last_uses (const FbPlan *plan)
{
  int *last = g_new (int, plan->buffers->len);
  for (guint i = 0; i < plan->buffers->len; i++)
    last[i] = -1;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint a = 0; a < kernel->args->len; a++)
        {
          guint r = fb_plan_root (plan, g_array_index (kernel->args, FbKArg, a).buffer);
          last[r] = MAX (last[r], (int) k);
        }
    }
  for (guint i = 0; i < plan->outputs->len; i++)
    last[fb_plan_root (plan, g_array_index (plan->outputs, guint, i))] = plan->kernels->len;
  return last;
}

static gboolean
same_layout (const FbBuffer *a, const FbBuffer *b)
{
  return a->dtype == b->dtype && a->rank == b->rank && a->nbytes == b->nbytes &&
         memcmp (a->dims, b->dims, a->rank * sizeof a->dims[0]) == 0;
}


static gboolean
in_place (const FbPlan *plan, int k, const FbKernel *kernel, FbKConv *cv, const int *last)
{
  if (kernel->phases->len != 1 || cv->lib != FB_KLIB_CONV || cv->cudnn || cv->desc.transposed ||
      cv->add == FB_KCONV_NO_ARG)
    return FALSE;
  int at = -1;
  for (int64_t i = 0; i < cv->desc.n_post; i++)
    if (cv->desc.post[i].kind == FB_CONV_POST_ADD)
      at = (int) i;
  if (at < 0)
    return FALSE;
  guint add = g_array_index (kernel->args, FbKArg, cv->add).buffer;
  guint y = g_array_index (kernel->args, FbKArg, cv->y).buffer;
  guint root = fb_plan_root (plan, add);
  const FbBuffer *ab = fb_plan_buffer (plan, add), *rb = fb_plan_buffer (plan, root);
  const FbBuffer *yb = fb_plan_buffer (plan, y);
  /* The alias must point back: plan.json only takes aliases of earlier buffers. */
  if (y <= add || yb->alias >= 0 || yb->kind != FB_BUF_INTERMEDIATE || yb->dynamic ||
      rb->kind != FB_BUF_INTERMEDIATE || rb->dynamic || ab->dynamic ||
      !same_layout (ab, yb) || rb->nbytes != yb->nbytes || last[root] != k)
    return FALSE;
  /* Nothing else of this kernel reads those bytes (Conv (x) + x would be overwritten while
   * it is read), also through the same argument. */
  if (cv->x == cv->add || cv->w == cv->add || cv->bias == cv->add)
    return FALSE;
  for (guint a = 0; a < kernel->args->len; a++)
    if (a != cv->add && fb_plan_root (plan, g_array_index (kernel->args, FbKArg, a).buffer) == root)
      return FALSE;
  FbConvDesc d = cv->desc;
  d.post[at].kind = FB_CONV_POST_SUM;
  if (!_fb_lower_conv_fast (plan->target_desc, &d))
    return FALSE;
  cv->desc = d;
  return TRUE;
}

guint
_fb_lower_residual_in_place (FbPlan *plan)
{
  g_assert (plan != NULL);
  if (plan->target_desc->gpu)
    return 0;
  g_autofree int *last = last_uses (plan);
  guint n = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (kernel->kind != FB_KERNEL_LIBRARY || kernel->phases->len == 0)
        continue;
      FbKPhase *phase = g_ptr_array_index (kernel->phases, 0);
      if (phase->conv == NULL || !in_place (plan, (int) k, kernel, phase->conv, last))
        continue;
      guint add = g_array_index (kernel->args, FbKArg, phase->conv->add).buffer;
      guint y = g_array_index (kernel->args, FbKArg, phase->conv->y).buffer;
      fb_plan_buffer (plan, y)->alias = (int) add;
      /* The residual's bytes now live as long as the output does; later kernels see that
       * through the root, and so does the next residual block reading this output. */
      guint root = fb_plan_root (plan, add);
      last[root] = MAX (last[root], last[y]);
      n++;
    }
  return n;
}
