/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Host steps of the executors. No target has control flow of its own: If, Loop and
 * Scan run on the host through the reference interpreter (fb_interp_node_with_scope), reading and
 * writing the same buffers as the generated kernels around them. Their bodies may read values
 * of the enclosing graph; lowering made each such value an argument of the kernel (after the
 * node's inputs, before its outputs), and here they seed the bodies' environment. A Loop's
 * scan outputs may have a length only known at run time: those buffers are "dynamic" and hold
 * the tensor the interpreter made instead of arena bytes. */
#include "fb-host-kernel.h"
#include "fb-backend.h"
#include "fb-interp.h"

#include <stdarg.h>
#include <string.h>

FbTensor *
fb_host_buffer_tensor (const FbPlan *plan, void **bufptr, FbTensor **dynamic, guint b)
{
  guint root = fb_plan_root (plan, b);
  const FbBuffer *buf = fb_plan_buffer (plan, b);
  if (fb_plan_buffer (plan, root)->dynamic)
    return dynamic[root] ? fb_tensor_ref (dynamic[root]) : NULL;
  g_autoptr(GBytes) bytes = g_bytes_new_static (bufptr[root], buf->nbytes);
  return fb_tensor_new_for_bytes (buf->dtype, buf->rank, buf->dims, bytes, NULL);
}

static const FbGraph *
plan_graph (const FbPlan *plan)
{
  return plan->graph ? plan->graph : plan->owned_graph;
}

static gboolean
fail (GError **error, const FbNode *node, const char *format, ...) G_GNUC_PRINTF (3, 4);

static gboolean
fail (GError **error, const FbNode *node, const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  g_autofree char *msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_FAILED, "node '%s' (%s): %s",
               node->name, node->op_type ? node->op_type : fb_op_name (node->op), msg);
  return FALSE;
}

static gboolean
store_output (const FbPlan *plan, void **bufptr, FbTensor **dynamic, const FbNode *node,
              guint b, FbTensor *t, GError **error)
{
  guint root = fb_plan_root (plan, b);
  const FbBuffer *buf = fb_plan_buffer (plan, b);
  if (t == NULL || (t->dtype != buf->dtype && buf->dtype != FB_DTYPE_UNDEFINED))
    return fail (error, node, "its output '%s' has not the element type compiled for",
                 buf->name);
  if (t->kind != FB_KIND_TENSOR && !fb_plan_buffer (plan, root)->dynamic)
    return fail (error, node, "its output '%s' is a sequence or an optional where a tensor was "
                 "compiled for", buf->name);
  if (fb_plan_buffer (plan, root)->dynamic)
    {
      /* A sequence's buffer was sized after its elements: only tensors have a rank to keep. */
      if (t->kind == FB_KIND_TENSOR && t->rank != buf->rank)
        return fail (error, node, "its output '%s' has not the rank compiled for", buf->name);
      g_clear_pointer (&dynamic[root], fb_tensor_unref);
      dynamic[root] = fb_tensor_ref (t);
      return TRUE;
    }
  if (fb_tensor_nbytes (t) != (gsize) buf->nbytes)
    return fail (error, node, "its output '%s' does not have the size compiled for (the CPU "
                 "target needs static shapes)", buf->name);
  if (buf->nbytes > 0)
    memcpy (bufptr[root], fb_tensor_data (t), buf->nbytes);
  return TRUE;
}

static const FbKArg *
find_arg (const FbKernel *kernel, const char *name)
{
  for (guint a = 0; a < kernel->args->len; a++)
    {
      const FbKArg *arg = &g_array_index (kernel->args, FbKArg, a);
      if (g_strcmp0 (arg->name, name) == 0)
        return arg;
    }
  return NULL;
}

static gboolean
is_node_value (const FbNode *node, const char *name)
{
  for (guint i = 0; i < node->n_inputs; i++)
    if (node->inputs[i] && g_strcmp0 (node->inputs[i]->name, name) == 0)
      return TRUE;
  for (guint i = 0; i < node->n_outputs; i++)
    if (node->outputs[i] && g_strcmp0 (node->outputs[i]->name, name) == 0)
      return TRUE;
  return FALSE;
}

gboolean
fb_host_kernel_run (const FbPlan *plan, void **bufptr, FbTensor **dynamic, const FbKernel *kernel,
                  GError **error)
{
  const FbNode *node = kernel->node;
  if (node == NULL)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_FAILED,
                   "kernel %s has no graph node to run on the host", kernel->name);
      return FALSE;
    }
  /* Arguments are one per buffer (fb_kernel_add_arg): a value the node reads twice, or reads
   * and its bodies capture, is one argument. Each input and output is found by its name. */
  g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_autofree FbTensor **in = g_new0 (FbTensor *, node->n_inputs + 1);
  g_autofree FbTensor **out = g_new0 (FbTensor *, node->n_outputs + 1);
  for (guint i = 0; i < node->n_inputs; i++)
    if (node->inputs[i])
      {
        const FbKArg *arg = find_arg (kernel, node->inputs[i]->name);
        if (arg == NULL)
          return fail (error, node, "its kernel does not list its input '%s'",
                       node->inputs[i]->name);
        in[i] = fb_host_buffer_tensor (plan, bufptr, dynamic, arg->buffer);
        if (in[i] == NULL)
          return fail (error, node, "its input '%s' has no value", node->inputs[i]->name);
        g_ptr_array_add (keep, in[i]);
      }
  /* The captured values, found by name in the graph the node belongs to. */
  g_autoptr(GHashTable) outer = g_hash_table_new (NULL, NULL);
  const FbGraph *graph = plan_graph (plan);
  for (guint a = 0; a < kernel->args->len; a++)
    {
      const FbKArg *arg = &g_array_index (kernel->args, FbKArg, a);
      if (arg->role != FB_KARG_INPUT || is_node_value (node, arg->name))
        continue;
      FbValue *v = graph ? fb_graph_lookup_value (graph, arg->name) : NULL;
      if (v == NULL)
        return fail (error, node, "its body reads '%s', which the graph does not hold",
                     arg->name);
      FbTensor *t = fb_host_buffer_tensor (plan, bufptr, dynamic, arg->buffer);
      if (t == NULL)
        return fail (error, node, "its body reads '%s', which has no value", arg->name);
      g_ptr_array_add (keep, t);
      g_hash_table_insert (outer, v, t);
    }

  gboolean ok = fb_interp_node_with_scope (node, in, out, outer, error);
  for (guint i = 0; ok && i < node->n_outputs; i++)
    if (node->outputs[i])
      {
        const FbKArg *arg = find_arg (kernel, node->outputs[i]->name);
        ok = arg != NULL ? store_output (plan, bufptr, dynamic, node, arg->buffer, out[i], error)
                         : fail (error, node, "its kernel does not list its output '%s'",
                                 node->outputs[i]->name);
      }
  for (guint i = 0; i < node->n_outputs; i++)
    g_clear_pointer (&out[i], fb_tensor_unref);
  return ok;
}
