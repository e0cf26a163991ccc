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
  return fb_shape_to_display (&value->shape);
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

const char *
fb_constant_row_label (const FbNode        *reader,
                     const FbConstantRow *row)
{
  const char *slot;

  g_return_val_if_fail (reader != NULL && row != NULL, "");

  if ((slot = _fb_graph_input_slot_name (reader->op, row->input)) != NULL)
    return slot;
  return row->value->name != NULL ? row->value->name : "";
}

static void
append_element (GString        *s,
                const FbTensor *tensor,
                int64_t         i)
{
  double v = fb_tensor_get_f64 (tensor, i);

  if (fb_dtype_is_float (tensor->dtype))
    g_string_append_printf (s, "%.4g", v);
  else
    g_string_append_printf (s, "%" G_GINT64_FORMAT, fb_tensor_get_i64 (tensor, i));
}

char *
fb_constant_row_text (const FbConstantRow *row)
{
  const FbTensor *tensor;
  FbShape shape;
  g_autofree char *dims = NULL;
  GString *s;

  g_return_val_if_fail (row != NULL && row->value != NULL && row->value->constant != NULL, NULL);

  tensor = row->value->constant;
  shape = fb_tensor_shape (tensor);
  dims = fb_shape_to_display (&shape);
  s = g_string_new (fb_dtype_name (tensor->dtype));

  if (tensor->rank > 0)
    g_string_append_printf (s, "[%s]", dims);
  if (tensor->dtype == FB_DTYPE_STRING || tensor->numel > FB_GRAPH_ROW_VALUES
      || (tensor->numel == 0 && tensor->rank == 0))
    return g_string_free (s, FALSE);
  g_string_append (s, " = ");
  if (tensor->rank == 0)
    append_element (s, tensor, 0);
  else
    {
      g_string_append_c (s, '[');
      for (int64_t i = 0; i < tensor->numel; i++)
        {
          if (i > 0)
            g_string_append_c (s, ',');
          append_element (s, tensor, i);
        }
      g_string_append_c (s, ']');
    }
  return g_string_free (s, FALSE);
}

guint
_fb_graph_rows_shown (guint n_rows)
{
  return n_rows <= FB_GRAPH_ROW_MAX ? n_rows : FB_GRAPH_ROW_MAX - 1;
}

guint
_fb_graph_rows_lines (guint n_rows)
{
  return MIN (n_rows, (guint) FB_GRAPH_ROW_MAX);
}

/* The fused members' block: a row each, "+N more", and a margin under them. */
static double
members_height (const FbNode *node)
{
  FbGraph *body = _fb_graph_fused_body (node);
  guint rows;

  if (body == NULL)
    return 0;
  rows = MIN (body->nodes->len, (guint) FB_GRAPH_FUSED_MAX_ROWS);
  if (body->nodes->len > rows)
    rows++;
  return rows * FB_GRAPH_FUSED_ROW + 6;
}

double
_fb_graph_rows_top (const FbNode *node)
{
  g_assert (node != NULL);

  /* Under the op and the name, and under the members of a fused node. */
  return 38 + members_height (node);
}

void
_fb_graph_node_size (const FbNode        *node,
                     const FbConstantRow *rows,
                     guint                n_rows,
                     double              *width,
                     double              *height)
{
  g_autofree char *title = _fb_graph_node_title (node);
  g_autofree char *shape = _fb_graph_node_shape_text (node);
  FbGraph *body;
  double w, label = 0;
  double h = FB_GRAPH_NODE_HEIGHT + members_height (node);

  w = MAX (text_width (title, FB_GRAPH_TITLE_CHAR),
           MAX (text_width (node->name != NULL ? node->name : "", FB_GRAPH_TEXT_CHAR),
                text_width (shape, FB_GRAPH_TEXT_CHAR)));
  if ((body = _fb_graph_fused_body (node)) != NULL)
    {
      guint n_members = MIN (body->nodes->len, (guint) FB_GRAPH_FUSED_MAX_ROWS);

      for (guint i = 0; i < n_members; i++)
        {
          const FbNode *member = g_ptr_array_index (body->nodes, i);
          g_autofree char *member_title = _fb_graph_node_title (member);

          w = MAX (w, text_width (member_title, FB_GRAPH_TEXT_CHAR) + 2 * FB_GRAPH_NODE_PAD);
        }
    }
  /* A label column as wide as the longest label, then the type and value. */
  for (guint i = 0; i < _fb_graph_rows_shown (n_rows); i++)
    label = MAX (label, text_width (fb_constant_row_label (node, &rows[i]), FB_GRAPH_TEXT_CHAR));
  for (guint i = 0; i < _fb_graph_rows_shown (n_rows); i++)
    {
      g_autofree char *text = fb_constant_row_text (&rows[i]);

      w = MAX (w, label + 8 + text_width (text, FB_GRAPH_TEXT_CHAR));
    }
  if (n_rows > 0)
    h += _fb_graph_rows_lines (n_rows) * FB_GRAPH_ROW_HEIGHT + 4;
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
