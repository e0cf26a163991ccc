/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The textual IR and the DOT writer: exact line format, stability across copies, nesting. */
#include "fb-test-passes.h"
#include "fb-dot.h"
#include "fb-printer.h"

#include <string.h>

static FbGraph *
conv_relu (FbValue **x, FbValue **w, FbValue **y)
{
  FbGraph *g = tp_graph (17);
  FbValue *v;

  *x = tp_input (g, "x", 4, TP_DIMS (1, 3, 8, 8));
  *w = tp_const (g, "w", 4, TP_DIMS (4, 3, 3, 3), NULL);
  v = tp_op (g, FB_OP_CONV, "/features/0/Conv", *x, *w, NULL);
  tp_attr_int (g, v, "group", 1);
  tp_attr_ints (g, v, "pads", 4, TP_DIMS (1, 1, 1, 1));
  tp_attr_ints (g, v, "strides", 2, TP_DIMS (1, 1));
  *y = v;
  v = tp_op (g, FB_OP_LEAKY_RELU, "act \"quoted\"", v, NULL);
  tp_attr_float (g, v, "alpha", 0.2f);
  tp_output (g, v);
  return g;
}

static void
test_line_format (void)
{
  FbValue *x, *w, *y;
  g_autoptr(FbGraph) g = conv_relu (&x, &w, &y);
  g_autofree char *text = fb_graph_to_text (g);
  g_autofree char *line = g_strdup_printf ("%%%u:f32[1x4x8x8] = Conv(%%%u, %%w%u) {group=1, "
                                           "pads=[1,1,1,1], strides=[1,1]} # /features/0/Conv\n",
                                           y->id, x->id, w->id);
  g_autofree char *node_line = fb_node_to_text (y->producer);

  if (strstr (text, line) == NULL)
    g_error ("expected line\n%sin\n%s", line, text);
  g_assert_nonnull (strstr (text, "{alpha=0.2}"));
  g_assert_nonnull (strstr (text, "input %"));
  g_assert_nonnull (strstr (text, "const %w"));
  g_assert_nonnull (strstr (text, "return %"));
  g_assert_cmpuint (strlen (node_line) + 1, ==, strlen (line));
}

static void
test_stable (void)
{
  FbValue *x, *w, *y;
  g_autoptr(FbGraph) g = conv_relu (&x, &w, &y);
  g_autoptr(FbGraph) copy = fb_graph_copy (g);
  g_autofree char *a = fb_graph_to_text (g);
  g_autofree char *b = fb_graph_to_text (g);
  g_autofree char *c = fb_graph_to_text (copy);

  g_assert_cmpstr (a, ==, b);
  g_assert_cmpstr (a, ==, c);
}

static void
test_fused_body_nests (void)
{
  FbValue *x, *w, *y;
  g_autoptr(FbPipeline) p = tp_run (conv_relu (&x, &w, &y), NULL);
  g_autofree char *text = fb_graph_to_text (fb_pipeline_final (p));
  g_autofree char *member = g_strdup_printf ("      %%");

  g_assert_nonnull (strstr (text, " = Fused("));
  g_assert_nonnull (strstr (text, "kind=\"epilogue\""));
  g_assert_nonnull (strstr (text, "\n    body: {\n"));
  g_assert_nonnull (strstr (text, member));
  g_assert_nonnull (strstr (text, "buffer "));
}

static void
test_dot (void)
{
  FbValue *x, *w, *y;
  g_autoptr(FbGraph) g = conv_relu (&x, &w, &y);
  g_autofree char *dot = fb_graph_to_dot (g);
  g_autofree char *edge = g_strdup_printf ("n%u -> ", y->producer->id);

  g_assert_true (g_str_has_prefix (dot, "digraph \"test\" {"));
  g_assert_true (g_str_has_suffix (dot, "}\n"));
  g_assert_nonnull (strstr (dot, edge));
  g_assert_nonnull (strstr (dot, "act \\\"quoted\\\""));
  /* Weights are left out of the picture. */
  g_assert_null (strstr (dot, "label=\"w\""));
}

/* A Constant node stays a node of the DOT text, joined to its reader (the graph view may draw
 * it as a row instead; DOT keeps every node). */
static void
test_dot_constant_node (void)
{
  g_autoptr(FbGraph) g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (2, 6));
  g_autoptr(FbTensor) t = fb_tensor_new (FB_DTYPE_INT64, 1, TP_DIMS (2), NULL);
  FbShape shape = fb_tensor_shape (t);
  FbNode *c = fb_graph_add_node (g, FB_OP_CONSTANT, "target_shape", 0, 1);
  FbValue *s = fb_graph_add_value (g, "target_shape:0", FB_DTYPE_INT64, &shape);
  FbAttr value = { .name = "value", .type = FB_ATTR_TENSOR };
  FbValue *y;
  g_autofree char *dot = NULL, *edge = NULL, *node = NULL;

  fb_tensor_set_f64 (t, 0, 3);
  fb_tensor_set_f64 (t, 1, 4);
  value.t = t;
  fb_node_set_attr (g, c, &value);
  s->constant = fb_tensor_ref (t);
  fb_node_set_output (c, 0, s);
  y = tp_op (g, FB_OP_RESHAPE, "reshape", x, s, NULL);
  tp_output (g, y);
  dot = fb_graph_to_dot (g);
  node = g_strdup_printf ("n%u [label=\"Constant\\ntarget_shape\"", c->id);
  edge = g_strdup_printf ("n%u -> n%u ", c->id, y->producer->id);
  g_assert_nonnull (strstr (dot, node));
  g_assert_nonnull (strstr (dot, edge));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/printer/line-format", test_line_format);
  g_test_add_func ("/printer/stable", test_stable);
  g_test_add_func ("/printer/fused-body", test_fused_body_nests);
  g_test_add_func ("/printer/dot", test_dot);
  g_test_add_func ("/printer/dot-constant-node", test_dot_constant_node);
  return g_test_run ();
}
