/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Regression tests for bugs the node suite and real models found (issue 9), each on the
 * interpreter and the cpu target. */
#include "fb-test-cpu.h"

/* One-input Max, Min and Sum (and other copies) lower to equal kernel bodies under different
 * function names; the kernel cache handed the first one's object to the others, which then
 * lacked their own function ("cannot find kernel function fbk_Sum_..._p0"). */
static void
test_one_input_variadic (void)
{
  const FbOpKind ops[] = { FB_OP_MAX, FB_OP_MIN, FB_OP_SUM, FB_OP_MEAN };

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      FbGraph *g = ti_graph (13);
      FbNode *n = ti_node (g, ops[i], 1, 1);
      tc_node (g, n, TI_IN (ti_f32 (1, D (3), V (1, -2, 3))), 0);
    }
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/conform/one-input-variadic", test_one_input_variadic);
  return g_test_run ();
}
