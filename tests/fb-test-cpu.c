/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-test-cpu.h"
#include "fb-compare.h"
#include "fb-infer.h"

void
tc_init (int *argc, char ***argv)
{
  g_test_init (argc, argv, NULL);
  /* Kernels compiled by the tests stay in the build tree. */
  const char *build_dir = g_getenv ("G_TEST_BUILDDIR");
  /* Run by hand, outside meson, a test must not litter the folder it was started from. */
  g_autofree char *cache = build_dir ? g_build_filename (build_dir, "test-cache", NULL)
                                     : g_dir_make_tmp ("fusebench-test-cache-XXXXXX", NULL);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
}

void
tc_finish (FbGraph *graph, FbNode *node, FbTensor **inputs, guint const_mask)
{
  for (guint i = 0; i < node->n_inputs; i++)
    {
      FbValue *v = node->inputs[i];
      if (inputs[i] == NULL)
        {
          node->inputs[i] = NULL;
          continue;
        }
      v->dtype = inputs[i]->dtype;
      v->shape = fb_tensor_shape (inputs[i]);
      if (const_mask & (1u << i))
        v->constant = fb_tensor_ref (inputs[i]);
      else
        {
          v->is_input = TRUE;
          g_ptr_array_add (graph->inputs, v);
        }
    }
  for (guint i = 0; i < node->n_outputs; i++)
    if (node->outputs[i])
      {
        node->outputs[i]->is_output = TRUE;
        g_ptr_array_add (graph->outputs, node->outputs[i]);
      }
  g_autoptr(GError) error = NULL;
  g_assert_true (fb_infer_graph (graph, &error));
  g_assert_no_error (error);
}

GPtrArray *
tc_inputs (FbGraph *graph, FbNode *node, FbTensor **inputs, guint const_mask)
{
  GPtrArray *in = g_ptr_array_new ();
  for (guint i = 0; i < node->n_inputs; i++)
    if (inputs[i] && !(const_mask & (1u << i)))
      g_ptr_array_add (in, inputs[i]);
  return in;
}

void
tc_check (FbGraph *graph, GPtrArray *inputs)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) expected = fb_interp_run (graph, inputs, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(FbCpuModule) m = fb_cpu_compile (graph, 2, &error);
  g_assert_no_error (error);
  g_autoptr(GPtrArray) actual = fb_cpu_module_run (m, inputs, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (actual->len, ==, expected->len);
  for (guint i = 0; i < actual->len; i++)
    {
      FbCompare cmp;
      fb_tensor_compare (g_ptr_array_index (expected, i), g_ptr_array_index (actual, i),
                         FB_COMPARE_RTOL, FB_COMPARE_ATOL, &cmp);
      if (!cmp.ok)
        g_error ("output %u of %s: %s", i,
                 ((FbNode *) g_ptr_array_index (graph->nodes, 0))->name, cmp.reason);
      fb_compare_clear (&cmp);
    }
}

void
tc_node (FbGraph *graph, FbNode *node, FbTensor **inputs, guint const_mask)
{
  tc_finish (graph, node, inputs, const_mask);
  g_autoptr(GPtrArray) in = tc_inputs (graph, node, inputs, const_mask);
  tc_check (graph, in);
}
