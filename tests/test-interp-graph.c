/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Running whole graphs: inputs checked against the graph, If and Loop bodies reading values of
 * the enclosing graph, fused bodies, cancellation, and a kernel for every operator. */
#include "fb-test-interp.h"

#include <string.h>

static FbValue *
add_input (FbGraph *g, const char *name, FbDType dtype, int rank, const int64_t *dims)
{
  FbShape shape = fb_shape_make (rank, dims);
  FbValue *v = fb_graph_add_value (g, name, dtype, &shape);

  v->is_input = TRUE;
  g_ptr_array_add (g->inputs, v);
  return v;
}

static FbValue *
add_value (FbGraph *g, const char *name)
{
  return fb_graph_add_value (g, name, FB_DTYPE_UNDEFINED, NULL);
}

/* A node reading the given values and making fresh outputs named after it. */
static FbNode *
node (FbGraph *g, FbOpKind op, const char *name, guint n_in, FbValue **ins, guint n_out)
{
  FbNode *n = fb_graph_add_node (g, op, name, n_in, n_out);

  for (guint k = 0; k < n_in; k++)
    n->inputs[k] = ins[k];
  for (guint k = 0; k < n_out; k++)
    {
      g_autofree char *vn = g_strdup_printf ("%s_%u", name, k);
      fb_node_set_output (n, k, add_value (g, vn));
    }
  return n;
}

static GPtrArray *
run_ok (FbGraph *g, GPtrArray *inputs)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *out = fb_interp_run (g, inputs, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (out);
  return out;
}

static GPtrArray *
inputs_of (guint n, FbTensor **ts)
{
  GPtrArray *a = g_ptr_array_new ();
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (a, ts[i]);
  return a;
}

static void
test_run_and_inputs (void)
{
  FbGraph *g = ti_graph (17);
  FbValue *x = add_input (g, "x", FB_DTYPE_FLOAT32, 1, D (3));
  FbTensor *w = ti_f32 (1, D (3), V (1, 2, 3));
  FbValue *wv = fb_graph_add_constant (g, "w", w);
  FbNode *add = node (g, FB_OP_ADD, "add", 2, (FbValue *[]) { x, wv }, 1);
  FbNode *relu = node (g, FB_OP_RELU, "relu", 1, (FbValue *[]) { add->outputs[0] }, 1);
  FbTensor *xt = ti_f32 (1, D (3), V (-5, 0, 5));
  g_autoptr(GPtrArray) in = inputs_of (1, TI_IN (xt));
  g_autoptr(GPtrArray) out = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GCancellable) cancel = g_cancellable_new ();

  g_ptr_array_add (g->outputs, relu->outputs[0]);
  g_ptr_array_add (g->outputs, add->outputs[0]);
  out = run_ok (g, in);
  g_assert_cmpuint (out->len, ==, 2);
  ti_assert (out->pdata[0], FB_DTYPE_FLOAT32, 1, D (3), V (0, 2, 8), 0);
  ti_assert (out->pdata[1], FB_DTYPE_FLOAT32, 1, D (3), V (-4, 2, 8), 0);
  g_clear_pointer (&out, g_ptr_array_unref);
  /* Nothing the run made keeps the input alive. */
  g_assert_cmpint (g_atomic_int_get ((gint *) &xt->ref_count), ==, 1);

  /* Fed tensors must match the graph's declared inputs. */
  g_ptr_array_index (in, 0) = ti_f32 (1, D (4), NULL);
  g_assert_null (fb_interp_run (g, in, NULL, &error));
  g_assert_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_INPUT);
  g_assert_nonnull (strstr (error->message, "'x'"));
  g_clear_error (&error);
  g_ptr_array_index (in, 0) = ti_tensor (FB_DTYPE_FLOAT64, 1, D (3), NULL);
  g_assert_null (fb_interp_run (g, in, NULL, &error));
  g_assert_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_INPUT);
  g_clear_error (&error);
  g_ptr_array_index (in, 0) = NULL;
  g_assert_null (fb_interp_run (g, in, NULL, &error));
  g_assert_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_INPUT);
  g_clear_error (&error);
  g_ptr_array_set_size (in, 0);
  g_assert_null (fb_interp_run (g, in, NULL, &error));
  g_assert_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_INPUT);
  g_clear_error (&error);

  /* A cancelled run stops with CANCELLED. */
  g_ptr_array_add (in, xt);
  g_cancellable_cancel (cancel);
  g_assert_null (fb_interp_run (g, in, cancel, &error));
  g_assert_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_CANCELLED);
  ti_done ();
}

static void
test_runtime_error_names_node (void)
{
  FbGraph *g = ti_graph (17);
  FbValue *x = add_input (g, "x", FB_DTYPE_FLOAT32, 1, D (3));
  FbValue *idx = add_input (g, "idx", FB_DTYPE_INT64, 1, D (1));
  FbNode *gather = node (g, FB_OP_GATHER, "pick", 2, (FbValue *[]) { x, idx }, 1);
  g_autoptr(GPtrArray) in = inputs_of (2, TI_IN (ti_f32 (1, D (3), NULL),
                                                 ti_i64 (1, D (1), (const int64_t[]) { 3 })));
  g_autoptr(GError) error = NULL;

  g_ptr_array_add (g->outputs, gather->outputs[0]);
  g_assert_null (fb_interp_run (g, in, NULL, &error));
  g_assert_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_RUNTIME);
  g_assert_nonnull (strstr (error->message, "'pick'"));
  ti_done ();
}

static void
test_if (void)
{
  FbGraph *g = ti_graph (17);
  FbValue *x = add_input (g, "x", FB_DTYPE_FLOAT32, 1, D (2));
  FbValue *c = add_input (g, "c", FB_DTYPE_BOOL, 0, NULL);
  FbNode *iff = node (g, FB_OP_IF, "if", 1, (FbValue *[]) { c }, 1);
  FbGraph *then_g = fb_graph_new_subgraph (g, "then");
  FbGraph *else_g = fb_graph_new_subgraph (g, "else");
  /* Both branches read x from the enclosing graph. */
  FbNode *twice = node (then_g, FB_OP_ADD, "twice", 2, (FbValue *[]) { x, x }, 1);
  FbNode *neg = node (else_g, FB_OP_NEG, "neg", 1, (FbValue *[]) { x }, 1);
  FbTensor *xt = ti_f32 (1, D (2), V (1, -2));
  FbTensor *yes = ti_tensor (FB_DTYPE_BOOL, 0, NULL, V (1));
  FbTensor *no = ti_tensor (FB_DTYPE_BOOL, 0, NULL, V (0));

  g_ptr_array_add (then_g->outputs, twice->outputs[0]);
  g_ptr_array_add (else_g->outputs, neg->outputs[0]);
  ti_attr_graph (g, iff, "then_branch", then_g);
  ti_attr_graph (g, iff, "else_branch", else_g);
  g_ptr_array_add (g->outputs, iff->outputs[0]);
  g_assert_true (fb_interp_supports (iff));
  {
    g_autoptr(GPtrArray) in = inputs_of (2, TI_IN (xt, yes));
    g_autoptr(GPtrArray) out = run_ok (g, in);
    ti_assert (out->pdata[0], FB_DTYPE_FLOAT32, 1, D (2), V (2, -4), 0);
  }
  {
    g_autoptr(GPtrArray) in = inputs_of (2, TI_IN (xt, no));
    g_autoptr(GPtrArray) out = run_ok (g, in);
    ti_assert (out->pdata[0], FB_DTYPE_FLOAT32, 1, D (2), V (-1, 2), 0);
  }
  {
    /* A condition that is not one element is a runtime error. */
    g_autoptr(GPtrArray) in = inputs_of (2, TI_IN (xt, ti_tensor (FB_DTYPE_BOOL, 1, D (2), NULL)));
    g_autoptr(GError) error = NULL;
    c->shape = fb_shape_unknown ();
    g_assert_null (fb_interp_run (g, in, NULL, &error));
    g_assert_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_RUNTIME);
  }
  ti_done ();
}

/* Loop(M, cond, sum) whose body adds iteration + y (y from the enclosing graph) to sum and scans
 * the running sums; its condition turns false once the iteration number reaches stop_at. */
static FbGraph *
loop_graph (FbNode **loop_out, gboolean with_cond)
{
  FbGraph *g = ti_graph (17);
  FbValue *m = add_input (g, "M", FB_DTYPE_INT64, 0, NULL);
  FbValue *s0 = add_input (g, "s0", FB_DTYPE_FLOAT32, 0, NULL);
  FbValue *y = add_input (g, "y", FB_DTYPE_FLOAT32, 0, NULL);
  FbValue *c0 = add_input (g, "c0", FB_DTYPE_BOOL, 0, NULL);
  FbNode *loop = node (g, FB_OP_LOOP, "loop", 3, (FbValue *[]) { m, with_cond ? c0 : NULL, s0 }, 2);
  FbGraph *body = fb_graph_new_subgraph (g, "body");
  FbValue *it = add_input (body, "it", FB_DTYPE_INT64, 0, NULL);
  FbValue *ci = add_input (body, "ci", FB_DTYPE_BOOL, 0, NULL);
  FbValue *si = add_input (body, "si", FB_DTYPE_FLOAT32, 0, NULL);
  FbNode *cast = node (body, FB_OP_CAST, "cast", 1, (FbValue *[]) { it }, 1);
  FbNode *a1 = node (body, FB_OP_ADD, "a1", 2, (FbValue *[]) { si, cast->outputs[0] }, 1);
  FbNode *a2 = node (body, FB_OP_ADD, "a2", 2, (FbValue *[]) { a1->outputs[0], y }, 1);
  FbValue *two = fb_graph_add_constant (body, "two", ti_i64 (0, NULL, (const int64_t[]) { 2 }));
  FbNode *less = node (body, FB_OP_LESS, "less", 2, (FbValue *[]) { it, two }, 1);
  FbNode *scan = node (body, FB_OP_IDENTITY, "scan", 1, (FbValue *[]) { a2->outputs[0] }, 1);

  (void) ci;
  ti_attr_int (body, cast, "to", FB_DTYPE_FLOAT32);
  g_ptr_array_add (body->outputs, less->outputs[0]);
  g_ptr_array_add (body->outputs, a2->outputs[0]);
  g_ptr_array_add (body->outputs, scan->outputs[0]);
  ti_attr_graph (g, loop, "body", body);
  g_ptr_array_add (g->outputs, loop->outputs[0]);
  g_ptr_array_add (g->outputs, loop->outputs[1]);
  *loop_out = loop;
  return g;
}

static void
test_loop (void)
{
  FbNode *loop;
  FbGraph *g = loop_graph (&loop, FALSE);
  FbTensor *s0 = ti_f32 (0, NULL, V (0)), *y = ti_f32 (0, NULL, V (1));
  FbTensor *yes = ti_tensor (FB_DTYPE_BOOL, 0, NULL, V (1));

  g_assert_true (fb_interp_supports (loop));
  {
    /* No condition input: M = 4 trips. The body's own condition output is still honoured. */
    g_autoptr(GPtrArray) in = inputs_of (4, TI_IN (ti_i64 (0, NULL, (const int64_t[]) { 4 }), s0, y, yes));
    g_autoptr(GPtrArray) out = run_ok (g, in);
    ti_assert (out->pdata[0], FB_DTYPE_FLOAT32, 0, NULL, V (6), 0);
    ti_assert (out->pdata[1], FB_DTYPE_FLOAT32, 1, D (3), V (1, 3, 6), 0);
  }
  {
    /* M = 0: the initial value comes out and the scan is empty. */
    g_autoptr(GPtrArray) in = inputs_of (4, TI_IN (ti_i64 (0, NULL, (const int64_t[]) { 0 }), s0, y, yes));
    g_autoptr(GPtrArray) out = run_ok (g, in);
    ti_assert (out->pdata[0], FB_DTYPE_FLOAT32, 0, NULL, V (0), 0);
    g_assert_cmpint (((FbTensor *) out->pdata[1])->dims[0], ==, 0);
  }
  g = loop_graph (&loop, TRUE);
  {
    /* A false initial condition runs no iteration. */
    g_autoptr(GPtrArray) in = inputs_of (4, TI_IN (ti_i64 (0, NULL, (const int64_t[]) { 9 }), s0, y,
                                                   ti_tensor (FB_DTYPE_BOOL, 0, NULL, V (0))));
    g_autoptr(GPtrArray) out = run_ok (g, in);
    ti_assert (out->pdata[0], FB_DTYPE_FLOAT32, 0, NULL, V (0), 0);
  }
  {
    /* The trip count bounds the loop before the condition turns false. */
    g_autoptr(GPtrArray) in = inputs_of (4, TI_IN (ti_i64 (0, NULL, (const int64_t[]) { 2 }), s0, y, yes));
    g_autoptr(GPtrArray) out = run_ok (g, in);
    ti_assert (out->pdata[1], FB_DTYPE_FLOAT32, 1, D (2), V (1, 3), 0);
  }
  ti_done ();
}

static void
test_fused (void)
{
  FbGraph *g = ti_graph (17);
  FbValue *a = add_input (g, "a", FB_DTYPE_FLOAT32, 1, D (3));
  FbValue *b = add_input (g, "b", FB_DTYPE_FLOAT32, 1, D (3));
  FbNode *fused = node (g, FB_OP_FUSED, "fused", 2, (FbValue *[]) { a, b }, 1);
  FbGraph *body = fb_graph_new_subgraph (g, "body");
  FbValue *ba = add_input (body, "ba", FB_DTYPE_FLOAT32, 1, D (3));
  FbValue *bb = add_input (body, "bb", FB_DTYPE_FLOAT32, 1, D (3));
  FbNode *mul = node (body, FB_OP_MUL, "mul", 2, (FbValue *[]) { ba, bb }, 1);
  FbNode *relu = node (body, FB_OP_RELU, "relu", 1, (FbValue *[]) { mul->outputs[0] }, 1);
  FbTensor *outs[1];
  g_autoptr(GError) error = NULL;

  g_ptr_array_add (body->outputs, relu->outputs[0]);
  ti_attr_graph (g, fused, "body", body);
  ti_attr_string (g, fused, "kind", "elementwise");
  g_ptr_array_add (g->outputs, fused->outputs[0]);
  {
    g_autoptr(GPtrArray) in = inputs_of (2, TI_IN (ti_f32 (1, D (3), V (1, -2, 3)),
                                                   ti_f32 (1, D (3), V (2, 2, -1))));
    g_autoptr(GPtrArray) out = run_ok (g, in);
    ti_assert (out->pdata[0], FB_DTYPE_FLOAT32, 1, D (3), V (2, 0, 0), 0);
  }
  /* One node at a time works too: the body binds to the given inputs. */
  g_assert_true (fb_interp_node (fused, TI_IN (ti_f32 (1, D (3), V (3, 3, 3)), ti_f32 (1, D (3), V (1, -1, 2))),
                                 outs, &error));
  g_assert_no_error (error);
  ti_assert (outs[0], FB_DTYPE_FLOAT32, 1, D (3), V (3, 0, 6), 0);
  fb_tensor_unref (outs[0]);
  /* A body that makes the wrong number of outputs is an error, not a crash. */
  g_ptr_array_add (body->outputs, mul->outputs[0]);
  g_assert_false (fb_interp_node (fused, TI_IN (ti_f32 (1, D (3), NULL), ti_f32 (1, D (3), NULL)), outs, &error));
  g_assert_error (error, FB_INTERP_ERROR, FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_every_operator_has_a_kernel (void)
{
  FbGraph *g = ti_graph (17);
  float one = 1;

  for (int op = 1; op < FB_OP_COUNT; op++)
    {
      const FbOpInfo *info = fb_op_info (op);
      guint n_in = info->min_inputs, n_out = MAX (info->min_outputs, 1);
      FbNode *n = ti_node (g, op, n_in, n_out);
      /* The attributes some operators cannot do without. */
      ti_attr_ints (g, n, "kernel_shape", 2, D (1, 1));
      ti_attr_string (g, n, "equation", "ij->ji");
      ti_attr_floats (g, n, "value_floats", 1, &one);
      ti_attr_int (g, n, "to", FB_DTYPE_FLOAT32);
      if (op == FB_OP_BIT_SHIFT)
        ti_attr_string (g, n, "direction", "LEFT");
      if (!fb_interp_supports (n))
        g_error ("no kernel for %s", fb_op_name (op));
    }
  {
    FbNode *n = ti_node (g, FB_OP_UNKNOWN, 1, 1);
    n->op_type = "Frobnicate";
    g_assert_false (fb_interp_supports (n));
    ti_run_fails (n, TI_IN (ti_f32 (0, NULL, V (0))), FB_INTERP_ERROR_UNSUPPORTED);
  }
  {
    /* Wrong arity reaches no kernel. */
    FbNode *n = ti_node (g, FB_OP_ADD, 2, 1);
    ti_run_fails (n, TI_IN (ti_f32 (0, NULL, V (0)), NULL), FB_INTERP_ERROR_RUNTIME);
  }
  ti_done ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/interp/graph/run-and-inputs", test_run_and_inputs);
  g_test_add_func ("/interp/graph/runtime-error", test_runtime_error_names_node);
  g_test_add_func ("/interp/graph/if", test_if);
  g_test_add_func ("/interp/graph/loop", test_loop);
  g_test_add_func ("/interp/graph/fused", test_fused);
  g_test_add_func ("/interp/graph/every-operator", test_every_operator_has_a_kernel);
  return g_test_run ();
}
