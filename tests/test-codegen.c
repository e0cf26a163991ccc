/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Code generation: the lowering stages of a kernel (LLVM IR before and after O3, assembly)
 * and its object, named after its graph node. */
#include "fb-test-cpu.h"
#include "fb-codegen.h"
#include "fb-jit.h"
#include "fb-lower.h"

#include <string.h>

static FbPlan *
plan_for (FbOpKind op, FbTensor *x)
{
  FbGraph *g = ti_graph (17);
  FbNode *n = ti_node (g, op, 1, 1);
  tc_finish (g, n, TI_IN (x), 0);
  g_autoptr(GError) error = NULL;
  FbPlan *plan = fb_lower_graph (g, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  return plan;
}

static void
test_stages (void)
{
  g_autoptr(FbPlan) plan = plan_for (FB_OP_TANH, ti_random (2, D (64, 64), 1));
  const FbKernel *k = g_ptr_array_index (plan->kernels, 0);
  const char *fn = ((FbKPhase *) g_ptr_array_index (k->phases, 0))->fn;
  g_autoptr(GError) error = NULL;
  g_autoptr(FbKernelStages) st = fb_codegen_kernel_stages (k, plan, &error);
  g_assert_no_error (error);
  g_autofree char *define = g_strdup_printf ("define void @%s(", fn);
  g_assert_nonnull (strstr (st->kernel_ir, "tanh("));
  g_assert_nonnull (strstr (st->llvm_ir, define));
  g_assert_nonnull (strstr (st->llvm_ir, "noalias"));
  /* After O3 the body is inlined and the loop vectorized: tanh is arithmetic, not a call. */
  g_assert_nonnull (strstr (st->llvm_ir_opt, define));
  g_assert_nonnull (strstr (st->llvm_ir_opt, "x float>"));
  g_assert_null (strstr (st->llvm_ir_opt, "@tanhf"));
  g_assert_nonnull (strstr (st->assembly, fn));
  ti_done ();
}

static void
test_object_and_jit (void)
{
  g_autoptr(FbPlan) plan = plan_for (FB_OP_NEG, ti_random (1, D (100), 2));
  const FbKernel *k = g_ptr_array_index (plan->kernels, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) obj = fb_codegen_kernel_object (k, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (obj, NULL), 4, "\177ELF", 4);
  g_autoptr(FbJit) jit = fb_jit_new (&error);
  g_assert_no_error (error);
  g_assert_true (fb_jit_add_object (jit, obj, &error));
  const FbKPhase *ph = g_ptr_array_index (k->phases, 0);
  FbPhaseFn fn = fb_jit_lookup (jit, ph->fn, &error);
  g_assert_no_error (error);
  float in[100], out[100];
  for (int i = 0; i < 100; i++)
    in[i] = i;
  void *args[2] = { in, out };
  /* Two halves, as two threads would run them. */
  fn (args, 0, 50);
  fn (args, 50, 100);
  for (int i = 0; i < 100; i++)
    g_assert_cmpfloat (out[i], ==, -i);
  g_assert_null (fb_jit_lookup (jit, "no_such_kernel", &error));
  g_assert_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_LLVM);
  ti_done ();
}

static void
test_host_target (void)
{
  const char *t = fb_codegen_host_target ();
  g_assert_true (g_str_has_prefix (t, "x86_64") || strstr (t, "-") != NULL);
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/codegen/stages", test_stages);
  g_test_add_func ("/codegen/object-and-jit", test_object_and_jit);
  g_test_add_func ("/codegen/host-target", test_host_target);
  return g_test_run ();
}
