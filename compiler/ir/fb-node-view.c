/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Which nodes are views: their output is their input's bytes under another shape, so targets
 * alias the two buffers instead of running a kernel. The memory plan and the lowering both
 * ask here, so they cannot disagree about which outputs need bytes of their own. */
#include "fb-graph.h"

/* A Transpose that moves only dimensions of extent 1 keeps every element where it was: the
 * layout pass inserts such ones around a one-channel image (N x H x W x 1 <-> N x 1 x H x W)
 * or a 1 x 1 map before a classifier. */
static gboolean
transpose_keeps_order (const FbNode *node)
{
  const FbValue *x = fb_node_input (node, 0);
  if (x == NULL || node->n_outputs < 1 || node->outputs[0] == NULL)
    return FALSE;
  int rank = x->shape.rank;
  if (rank <= 0 || rank > FB_MAX_RANK || !fb_shape_is_static (&x->shape))
    return FALSE;
  guint len = 0;
  const int64_t *p = fb_node_attr_ints (node, "perm", &len);
  if (p != NULL && (int) len != rank)
    return FALSE;
  int last = -1;
  for (int i = 0; i < rank; i++)
    {
      int axis = rank - 1 - i;          /* no perm: the dimensions reversed */
      if (p != NULL && !fb_axis_normalize (p[i], rank, &axis))
        return FALSE;
      if (x->shape.dim[axis] == 1)
        continue;
      /* The dimensions that are not 1 must come out in the order they went in. */
      if (axis < last)
        return FALSE;
      last = axis;
    }
  return TRUE;
}

gboolean
fb_node_is_view (const FbNode *node)
{
  g_return_val_if_fail (node != NULL, FALSE);
  if (fb_node_has_containers (node))
    return FALSE;
  if (fb_op_has_flag (node->op, FB_OPF_RESHAPE) || node->op == FB_OP_IDENTITY)
    return TRUE;
  /* Dropout at inference is the identity; its mask output is not computed. */
  if (node->op == FB_OP_DROPOUT)
    return node->n_outputs < 2 || node->outputs[1] == NULL;
  return node->op == FB_OP_TRANSPOSE && node->n_inputs == 1 && transpose_keeps_order (node);
}

gboolean
fb_node_has_containers (const FbNode *node)
{
  g_return_val_if_fail (node != NULL, FALSE);
  for (guint i = 0; i < node->n_inputs; i++)
    if (node->inputs[i] != NULL && node->inputs[i]->kind != FB_KIND_TENSOR)
      return TRUE;
  for (guint i = 0; i < node->n_outputs; i++)
    if (node->outputs[i] != NULL && node->outputs[i]->kind != FB_KIND_TENSOR)
      return TRUE;
  return FALSE;
}
