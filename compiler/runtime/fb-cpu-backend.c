/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CPU target behind the backend interface: lower, lay out memory, generate code (through
 * the kernel cache), load it, run it. */
#include "fb-runtime.h"
#include "fb-codegen.h"
#include "fb-lower.h"

static gboolean
cpu_supports_op (const FbBackend *backend, const FbNode *node, char **reason)
{
  return fb_lower_supports_node (node, reason);
}

FbCpuModule *
fb_cpu_compile (const FbGraph *graph, guint n_threads, GError **error)
{
  g_return_val_if_fail (graph != NULL, NULL);
  if (!fb_backend_check_graph (fb_backend_cpu (), graph, error))
    return NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (graph, fb_codegen_host_target (), error);
  if (plan == NULL)
    return NULL;
  fb_plan_layout_memory (plan);
  if (n_threads == 0)
    n_threads = g_get_num_processors ();
  g_autoptr(GPtrArray) objects = fb_codegen_plan (plan, n_threads, NULL, error);
  if (objects == NULL)
    return NULL;
  return fb_cpu_module_new (plan, objects, n_threads, error);
}

static FbCompiled *
cpu_compile (const FbBackend *backend, const FbGraph *graph, const FbBackendOptions *options,
             GError **error)
{
  return (FbCompiled *) fb_cpu_compile (graph, options ? options->n_threads : 0, error);
}

static GPtrArray *
cpu_run (FbCompiled *compiled, GPtrArray *inputs, GCancellable *cancellable, GError **error)
{
  return fb_cpu_module_run ((FbCpuModule *) compiled, inputs, cancellable, error);
}

static void
cpu_free (FbCompiled *compiled)
{
  fb_cpu_module_free ((FbCpuModule *) compiled);
}

static const FbBackend cpu_backend = {
  .name        = "cpu",              /* x86-64 through LLVM, OpenBLAS for contractions */
  .supports_op = cpu_supports_op,    /* fb_lower_supports_node: op, dtypes, attributes */
  .compile     = cpu_compile,        /* lower + memory plan + codegen (cached) + LLJIT */
  .run         = cpu_run,            /* the plan's kernels over the worker pool */
  .free        = cpu_free,
};

const FbBackend *
fb_backend_cpu (void)
{
  return &cpu_backend;
}

const FbBackend *
fb_backend_lookup (const char *name)
{
  g_return_val_if_fail (name != NULL, NULL);
  if (g_str_equal (name, cpu_backend.name))
    return &cpu_backend;
  return NULL;
}

gboolean
fb_backend_check_graph (const FbBackend *backend, const FbGraph *graph, GError **error)
{
  g_return_val_if_fail (backend != NULL && graph != NULL, FALSE);
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *node = g_ptr_array_index (graph->nodes, i);
      g_autofree char *reason = NULL;
      if (!backend->supports_op (backend, node, &reason))
        {
          g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_UNSUPPORTED,
                       "node '%s' (%s) is not supported by the %s target: %s", node->name,
                       node->op_type ? node->op_type : fb_op_name (node->op), backend->name,
                       reason ? reason : "no reason given");
          return FALSE;
        }
    }
  return TRUE;
}
