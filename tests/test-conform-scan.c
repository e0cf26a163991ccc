/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Scan, where ONNX's two node cases (one scan input, forward, axis 0) do not reach: several scan
 * inputs and outputs with their own axes and directions, Scan-8's batch rows of different
 * sequence lengths, the layouts inference gives, refusals that name the node, and the cpu
 * target's host step against the interpreter. */
#include "fb-test-cpu.h"
#include "fb-infer.h"
#include "fb-lower.h"

#include <string.h>

static FbValue *
body_input (FbGraph *body, const char *name)
{
  FbValue *v = fb_graph_add_value (body, name, FB_DTYPE_FLOAT32, NULL);
  v->is_input = TRUE;
  g_ptr_array_add (body->inputs, v);
  return v;
}

static FbValue *
body_node (FbGraph *body, FbOpKind op, const char *name, FbValue *a, FbValue *b)
{
  FbNode *n = fb_graph_add_node (body, op, name, 2, 1);
  g_autofree char *out = g_strdup_printf ("%s_out", name);
  n->inputs[0] = a;
  n->inputs[1] = b;
  fb_node_set_output (n, 0, fb_graph_add_value (body, out, FB_DTYPE_UNDEFINED, NULL));
  return n->outputs[0];
}

static void
body_output (FbGraph *body, FbValue *v)
{
  v->is_output = TRUE;
  g_ptr_array_add (body->outputs, v);
}

/* Scan-9 and later: a state s, scan inputs a and b; the body gives s + a * b (the next state and
 * the first scan output) and a - b. */
static FbNode *
two_input_scan (FbGraph **g)
{
  *g = ti_graph (16);
  FbNode *n = ti_node (*g, FB_OP_SCAN, 3, 3);
  FbGraph *body = fb_graph_new_subgraph (*g, "body");
  FbValue *s = body_input (body, "s"), *a = body_input (body, "a"), *b = body_input (body, "b");
  FbValue *next = body_node (body, FB_OP_ADD, "next", s, body_node (body, FB_OP_MUL, "ab", a, b));
  body_output (body, next);
  body_output (body, next);
  body_output (body, body_node (body, FB_OP_SUB, "diff", a, b));
  ti_attr_graph (*g, n, "body", body);
  ti_attr_int (*g, n, "num_scan_inputs", 2);
  return n;
}

/* Fills in[3] with s, a [3, 2] and b [2, 3]; returns in. */
static FbTensor **
two_inputs (FbTensor **in)
{
  in[0] = ti_f32 (1, D (2), V (0, 0));
  in[1] = ti_f32 (2, D (3, 2), V (1, 2, 3, 4, 5, 6));
  in[2] = ti_f32 (2, D (2, 3), V (10, 20, 30, 40, 50, 60));
  return in;
}

static void
set_axes (FbGraph *g, FbNode *n)
{
  /* b is scanned along its columns from the last; the second output stacks along its last axis
   * with the first iteration last. */
  ti_attr_ints (g, n, "scan_input_axes", 2, D (0, 1));
  ti_attr_ints (g, n, "scan_input_directions", 2, D (0, 1));
  ti_attr_ints (g, n, "scan_output_axes", 2, D (0, -1));
  ti_attr_ints (g, n, "scan_output_directions", 2, D (0, 1));
}

static void
test_axes_and_directions (void)
{
  FbGraph *g;
  FbTensor *buf[3];
  FbNode *n = two_input_scan (&g);
  set_axes (g, n);
  FbTensor **o = ti_run (n, two_inputs (buf));
  /* a = [1 2], [3 4], [5 6]; b's columns from the last = [30 60], [20 50], [10 40]. */
  ti_assert (o[0], FB_DTYPE_FLOAT32, 1, D (2), V (140, 560), 0);
  ti_assert (o[1], FB_DTYPE_FLOAT32, 2, D (3, 2), V (30, 120, 90, 320, 140, 560), 0);
  ti_assert (o[2], FB_DTYPE_FLOAT32, 2, D (2, 3), V (-5, -17, -29, -34, -46, -58), 0);
  g_free (o);

  /* The same on the cpu target: a host step, like Loop. */
  n = two_input_scan (&g);
  set_axes (g, n);
  FbTensor **in = two_inputs (buf);
  tc_finish (g, n, in, 0);
  g_assert_cmpint (n->outputs[1]->shape.rank, ==, 2);
  g_assert_cmpint (n->outputs[2]->shape.dim[0], ==, 2);
  g_assert_cmpint (n->outputs[2]->shape.dim[1], ==, 3);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (g, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  gboolean host = FALSE;
  for (guint i = 0; i < plan->kernels->len; i++)
    host |= ((FbKernel *) g_ptr_array_index (plan->kernels, i))->kind == FB_KERNEL_HOST;
  g_assert_true (host);
  g_autoptr(GPtrArray) inputs = tc_inputs (g, n, in, 0);
  tc_check (g, inputs);
  ti_done ();
}

/* Scan-8: rows of the batch scanned on their own, as far as sequence_lens says, the scan output
 * zero after that; "directions" reverses within a row's own length. */
static void
test_scan8_batches (void)
{
  FbGraph *g = ti_graph (8);
  FbNode *n = ti_node (g, FB_OP_SCAN, 3, 2);
  FbGraph *body = fb_graph_new_subgraph (g, "body");
  FbValue *s = body_input (body, "s"), *a = body_input (body, "a");
  FbValue *next = body_node (body, FB_OP_ADD, "next", s, a);
  body_output (body, next);
  body_output (body, next);
  ti_attr_graph (g, n, "body", body);
  ti_attr_int (g, n, "num_scan_inputs", 1);
  ti_attr_ints (g, n, "directions", 1, D (1));
  FbTensor **in = TI_IN (ti_i64 (1, D (2), (const int64_t[]) { 3, 1 }),
                         ti_f32 (2, D (2, 2), V (0, 0, 100, 100)),
                         ti_f32 (3, D (2, 3, 2), V (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)));
  FbTensor **o = ti_run (n, in);
  ti_assert (o[0], FB_DTYPE_FLOAT32, 2, D (2, 2), V (9, 12, 107, 108), 0);
  ti_assert (o[1], FB_DTYPE_FLOAT32, 3, D (2, 3, 2), V (5, 6, 8, 10, 9, 12, 107, 108, 0, 0, 0, 0), 0);
  g_free (o);
  /* Without sequence_lens every row runs the whole sequence. */
  in[0] = NULL;
  o = ti_run (n, in);
  ti_assert (o[0], FB_DTYPE_FLOAT32, 2, D (2, 2), V (9, 12, 127, 130), 0);
  g_free (o);
  /* A length past the sequence is refused, naming the node. */
  in[0] = ti_i64 (1, D (2), (const int64_t[]) { 4, 1 });
  ti_run_fails (n, in, FB_INTERP_ERROR_RUNTIME);

  /* Inference gives [batch, ...] and [batch, sequence, ...]; the cpu target agrees. */
  in[0] = ti_i64 (1, D (2), (const int64_t[]) { 2, 3 });
  tc_finish (g, n, in, 0);
  g_assert_cmpint (n->outputs[1]->shape.rank, ==, 3);
  g_assert_cmpint (n->outputs[1]->shape.dim[1], ==, 3);
  g_autoptr(GPtrArray) inputs = tc_inputs (g, n, in, 0);
  tc_check (g, inputs);
  ti_done ();
}

/* Inference of node (inputs typed and shaped as given) fails with a message naming it. */
static void
infer_fails (FbGraph *g, FbNode *n, FbTensor **inputs)
{
  g_autoptr(GError) error = NULL;
  for (guint i = 0; i < n->n_inputs; i++)
    {
      n->inputs[i]->dtype = inputs[i]->dtype;
      n->inputs[i]->shape = fb_tensor_shape (inputs[i]);
    }
  g_assert_false (fb_infer_node (g, n, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, n->name));
}

static void
test_refusals (void)
{
  FbGraph *g;
  FbNode *n;
  FbTensor *buf[3];

  /* More scan inputs than inputs. */
  n = two_input_scan (&g);
  ti_attr_int (g, n, "num_scan_inputs", 4);
  ti_run_fails (n, two_inputs (buf), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, two_inputs (buf));
  /* A direction that is neither 0 nor 1. */
  n = two_input_scan (&g);
  ti_attr_ints (g, n, "scan_input_directions", 2, D (0, 2));
  ti_run_fails (n, two_inputs (buf), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, two_inputs (buf));
  /* Axes for one input of two. */
  n = two_input_scan (&g);
  ti_attr_ints (g, n, "scan_input_axes", 1, D (0));
  ti_run_fails (n, two_inputs (buf), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, two_inputs (buf));
  /* Scan inputs of different lengths: b's axis 0 has 2 slices, a's 3. */
  n = two_input_scan (&g);
  ti_run_fails (n, two_inputs (buf), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, two_inputs (buf));
  /* An axis the input does not have. */
  n = two_input_scan (&g);
  ti_attr_ints (g, n, "scan_input_axes", 2, D (0, 2));
  ti_run_fails (n, two_inputs (buf), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, two_inputs (buf));
  /* Scan-8's attribute on a later Scan. */
  n = two_input_scan (&g);
  set_axes (g, n);
  ti_attr_ints (g, n, "directions", 2, D (0, 0));
  ti_run_fails (n, two_inputs (buf), FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/conform-scan/axes-and-directions", test_axes_and_directions);
  g_test_add_func ("/conform-scan/scan8-batches", test_scan8_batches);
  g_test_add_func ("/conform-scan/refusals", test_refusals);
  return g_test_run ();
}
