/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DOT text of a graph (see fb-dot.h). */
#include "fb-dot.h"
#include "fb-printer.h"

#include <string.h>

/* DOT strings are double-quoted with backslash escapes; "\n" stays a line break in labels. */
static void
append_escaped (GString *out, const char *s)
{
  for (const char *p = s ? s : ""; *p; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_c (out, '\\');
      if (*p == '\n')
        {
          g_string_append (out, "\\n");
          continue;
        }
      g_string_append_c (out, *p);
    }
}

/* The members' operators, and the layout the body runs in when a member is marked. */
static const char *
append_members (GString *label, const FbGraph *body)
{
  const char *layout = NULL;

  for (guint i = 0; i < body->nodes->len; i++)
    {
      const FbNode *m = g_ptr_array_index (body->nodes, i);
      g_string_append_printf (label, "%s%s", i ? " + " : "", m->op_type);
      if (layout == NULL)
        layout = fb_node_attr_string (m, FB_ATTR_LAYOUT, NULL);
    }
  return layout;
}

static void
write_node (GString *out, const FbNode *n)
{
  g_autoptr(GString) label = g_string_new (NULL);
  gboolean fused = n->op == FB_OP_FUSED;
  const char *layout = fb_node_attr_string (n, FB_ATTR_LAYOUT, NULL);

  if (fused)
    {
      FbGraph *body = fb_node_attr_graph (n, "body");
      g_string_append_printf (label, "Fused %s\n", fb_node_attr_string (n, "kind", ""));
      if (body)
        layout = append_members (label, body);
    }
  else
    g_string_append (label, n->op_type);
  g_string_append_printf (label, "\n%s", n->name ? n->name : "");
  if (layout != NULL)
    g_string_append_printf (label, "\n[%s]", layout);

  g_string_append_printf (out, "  n%u [label=\"", n->id);
  append_escaped (out, label->str);
  g_string_append (out, "\"");
  if (fused)
    g_string_append (out, ", style=\"rounded,filled\", fillcolor=\"#dde8f6\"");
  if (n->flags & FB_NODE_INSERTED)
    g_string_append (out, ", style=dashed");
  g_string_append (out, "];\n");
}

static void
write_edge (GString *out, const char *from, const char *to, const FbValue *v)
{
  g_autofree char *type = fb_value_type_display (v);

  g_string_append_printf (out, "  %s -> %s [label=\"", from, to);
  append_escaped (out, type);
  g_string_append (out, "\"];\n");
}

char *
fb_graph_to_dot (const FbGraph *graph)
{
  GString *out;

  g_return_val_if_fail (graph != NULL, NULL);
  out = g_string_new ("digraph \"");
  append_escaped (out, graph->name ? graph->name : "graph");
  g_string_append (out, "\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"Sans\", fontsize=10];\n"
                        "  edge [fontname=\"Sans\", fontsize=8];\n");

  for (guint i = 0; i < graph->inputs->len; i++)
    {
      const FbValue *v = g_ptr_array_index (graph->inputs, i);
      if (v->constant)
        continue;
      g_string_append_printf (out, "  v%u [shape=ellipse, label=\"", v->id);
      append_escaped (out, v->name);
      g_string_append (out, "\"];\n");
    }
  for (guint i = 0; i < graph->nodes->len; i++)
    write_node (out, g_ptr_array_index (graph->nodes, i));
  for (guint i = 0; i < graph->outputs->len; i++)
    {
      const FbValue *v = g_ptr_array_index (graph->outputs, i);
      g_string_append_printf (out, "  o%u [shape=ellipse, label=\"", i);
      append_escaped (out, v->name);
      g_string_append (out, "\"];\n");
    }

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (graph->nodes, i);
      g_autofree char *to = g_strdup_printf ("n%u", n->id);
      for (guint k = 0; k < n->n_inputs; k++)
        {
          const FbValue *v = n->inputs[k];
          g_autofree char *from = NULL;
          /* An initializer has no node to start from; a Constant node's value does. */
          if (v == NULL || (v->constant != NULL && v->producer == NULL))
            continue;
          if (v->producer != NULL && v->graph == graph)
            from = g_strdup_printf ("n%u", v->producer->id);
          else if (v->is_input)
            from = g_strdup_printf ("v%u", v->id);
          else
            continue;
          write_edge (out, from, to, v);
        }
    }
  for (guint i = 0; i < graph->outputs->len; i++)
    {
      const FbValue *v = g_ptr_array_index (graph->outputs, i);
      g_autofree char *to = g_strdup_printf ("o%u", i);
      g_autofree char *from = NULL;
      if (v->producer != NULL)
        from = g_strdup_printf ("n%u", v->producer->id);
      else if (v->is_input)
        from = g_strdup_printf ("v%u", v->id);
      else
        continue;
      write_edge (out, from, to, v);
    }
  g_string_append (out, "}\n");
  return g_string_free (out, FALSE);
}
