/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-graph-style-private.h"

#include <string.h>

FbGraph *
_fb_graph_fused_body (const FbNode *node)
{
  g_assert (node != NULL);

  if (node->op != FB_OP_FUSED)
    return NULL;
  return fb_node_attr_graph (node, "body");
}

char *
_fb_graph_node_title (const FbNode *node)
{
  const char *kind;

  g_assert (node != NULL);

  if (node->op != FB_OP_FUSED)
    return g_strdup (node->op_type != NULL && node->op_type[0] != '\0'
                     ? node->op_type : fb_op_name (node->op));
  kind = fb_node_attr_string (node, "kind", NULL);
  if (kind != NULL)
    return g_strdup_printf ("Fused · %s", kind);
  return g_strdup ("Fused");
}

char *
_fb_graph_value_text (const FbValue *value)
{
  if (value == NULL)
    return g_strdup ("");
  return fb_shape_to_string (&value->shape);
}

char *
_fb_graph_node_shape_text (const FbNode *node)
{
  g_autofree char *first = NULL;
  guint n = 0;

  g_assert (node != NULL);

  for (guint i = 0; i < node->n_outputs; i++)
    {
      if (node->outputs[i] == NULL)
        continue;
      if (first == NULL)
        first = _fb_graph_value_text (node->outputs[i]);
      n++;
    }
  if (first == NULL)
    return g_strdup ("");
  if (n > 1)
    return g_strdup_printf ("%s (+%u)", first, n - 1);
  return g_steal_pointer (&first);
}

static double
text_width (const char *text,
            double      per_char)
{
  return g_utf8_strlen (text, -1) * per_char;
}

void
_fb_graph_node_size (const FbNode *node,
                     double       *width,
                     double       *height)
{
  g_autofree char *title = _fb_graph_node_title (node);
  g_autofree char *shape = _fb_graph_node_shape_text (node);
  FbGraph *body;
  double w;
  double h = FB_GRAPH_NODE_HEIGHT;

  w = MAX (text_width (title, FB_GRAPH_TITLE_CHAR),
           MAX (text_width (node->name != NULL ? node->name : "", FB_GRAPH_TEXT_CHAR),
                text_width (shape, FB_GRAPH_TEXT_CHAR)));
  if ((body = _fb_graph_fused_body (node)) != NULL)
    {
      guint rows = MIN (body->nodes->len, (guint) FB_GRAPH_FUSED_MAX_ROWS);

      for (guint i = 0; i < rows; i++)
        {
          const FbNode *member = g_ptr_array_index (body->nodes, i);
          g_autofree char *member_title = _fb_graph_node_title (member);

          w = MAX (w, text_width (member_title, FB_GRAPH_TEXT_CHAR) + 2 * FB_GRAPH_NODE_PAD);
        }
      if (body->nodes->len > rows)
        rows++;   /* "+N more" */
      h += rows * FB_GRAPH_FUSED_ROW + 6;
    }
  *width = CLAMP (w + 2 * FB_GRAPH_NODE_PAD, FB_GRAPH_NODE_MIN_WIDTH, FB_GRAPH_NODE_MAX_WIDTH);
  *height = h;
}

void
_fb_graph_group_size (const FbGraphGroup *group,
                      double             *width,
                      double             *height)
{
  double w;

  w = MAX (text_width (fb_graph_group_get_label (group), FB_GRAPH_TITLE_CHAR),
           text_width (fb_graph_group_get_summary (group), FB_GRAPH_TEXT_CHAR));
  /* Room for the expander sign on the right. */
  *width = CLAMP (w + 2 * FB_GRAPH_NODE_PAD + 16, FB_GRAPH_NODE_MIN_WIDTH + 24,
                  FB_GRAPH_NODE_MAX_WIDTH + 24);
  *height = FB_GRAPH_NODE_HEIGHT;
}
