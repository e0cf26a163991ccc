/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The textual IR (see fb-printer.h). */
#include "fb-printer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_CONSTANT 8   /* constants this small print their elements */

static const char *
dtype_short (FbDType t)
{
  switch (t)
    {
    case FB_DTYPE_FLOAT32:  return "f32";
    case FB_DTYPE_FLOAT16:  return "f16";
    case FB_DTYPE_BFLOAT16: return "bf16";
    case FB_DTYPE_FLOAT64:  return "f64";
    case FB_DTYPE_INT8:     return "i8";
    case FB_DTYPE_INT16:    return "i16";
    case FB_DTYPE_INT32:    return "i32";
    case FB_DTYPE_INT64:    return "i64";
    case FB_DTYPE_UINT8:    return "u8";
    case FB_DTYPE_UINT16:   return "u16";
    case FB_DTYPE_UINT32:   return "u32";
    case FB_DTYPE_UINT64:   return "u64";
    case FB_DTYPE_BOOL:     return "bool";
    case FB_DTYPE_STRING:   return "str";
    default:                return "?";
    }
}

/* The shortest decimal that reads back as the same float, so listings do not show noise. */
static void
append_float (GString *out, double v)
{
  char buf[64];

  if (isnan (v))
    {
      g_string_append (out, "nan");
      return;
    }
  if (isinf (v))
    {
      g_string_append (out, v < 0 ? "-inf" : "inf");
      return;
    }
  /* g_ascii_formatd: listings read the same whatever the locale's decimal point. */
  for (int prec = 1; prec <= 17; prec++)
    {
      char format[8];
      g_snprintf (format, sizeof format, "%%.%dg", prec);
      g_ascii_formatd (buf, sizeof buf, format, v);
      if ((float) g_ascii_strtod (buf, NULL) == (float) v)
        break;
    }
  g_string_append (out, buf);
}

char *
fb_value_ref (const FbValue *value)
{
  g_return_val_if_fail (value != NULL, NULL);
  return g_strdup_printf ("%%%s%u", value->constant ? "w" : "", value->id);
}

static char *
type_text (const FbValue *value, gboolean display)
{
  GString *s = g_string_new (dtype_short (value->dtype));
  g_autofree char *tensor = NULL;

  g_string_append_c (s, '[');
  if (value->shape.rank < 0)
    g_string_append_c (s, '?');
  else if (value->shape.rank > 0)
    {
      g_autofree char *dims = display ? fb_shape_to_display (&value->shape)
                                      : fb_shape_to_string (&value->shape);
      g_string_append (s, dims);
    }
  g_string_append_c (s, ']');
  tensor = g_string_free (s, FALSE);
  return fb_value_kind_wrap (value->kind, tensor);
}

char *
fb_value_type_text (const FbValue *value)
{
  g_return_val_if_fail (value != NULL, NULL);
  return type_text (value, FALSE);
}

char *
fb_value_type_display (const FbValue *value)
{
  g_return_val_if_fail (value != NULL, NULL);
  return type_text (value, TRUE);
}

static void
append_value (GString *out, const FbValue *v, gboolean typed)
{
  if (v == NULL)
    {
      g_string_append_c (out, '_');
      return;
    }
  g_string_append_printf (out, "%%%s%u", v->constant ? "w" : "", v->id);
  if (typed)
    {
      g_autofree char *t = fb_value_type_text (v);
      g_string_append_printf (out, ":%s", t);
    }
}

static void
append_quoted (GString *out, const char *s)
{
  g_autofree char *esc = g_strescape (s ? s : "", NULL);
  g_string_append_printf (out, "\"%s\"", esc);
}

static void
append_attr_value (GString *out, const FbAttr *a)
{
  switch (a->type)
    {
    case FB_ATTR_FLOAT:
      append_float (out, a->f);
      break;
    case FB_ATTR_INT:
      g_string_append_printf (out, "%" G_GINT64_FORMAT, a->i);
      break;
    case FB_ATTR_STRING:
      append_quoted (out, a->s);
      break;
    case FB_ATTR_TENSOR:
      g_string_append_printf (out, "tensor<%s[", dtype_short (a->t->dtype));
      for (int d = 0; d < a->t->rank; d++)
        g_string_append_printf (out, "%s%" G_GINT64_FORMAT, d ? "x" : "", a->t->dims[d]);
      g_string_append (out, "]>");
      break;
    case FB_ATTR_GRAPH:
      g_string_append (out, "{...}");
      break;
    case FB_ATTR_FLOATS:
      g_string_append_c (out, '[');
      for (guint i = 0; i < a->floats.n; i++)
        {
          if (i)
            g_string_append_c (out, ',');
          append_float (out, a->floats.v[i]);
        }
      g_string_append_c (out, ']');
      break;
    case FB_ATTR_INTS:
      g_string_append_c (out, '[');
      for (guint i = 0; i < a->ints.n; i++)
        g_string_append_printf (out, "%s%" G_GINT64_FORMAT, i ? "," : "", a->ints.v[i]);
      g_string_append_c (out, ']');
      break;
    case FB_ATTR_STRINGS:
      g_string_append_c (out, '[');
      for (guint i = 0; i < a->strings.n; i++)
        {
          if (i)
            g_string_append_c (out, ',');
          append_quoted (out, a->strings.v[i]);
        }
      g_string_append_c (out, ']');
      break;
    case FB_ATTR_TYPE:
      {
        g_autofree char *inner = g_strdup_printf ("%s", dtype_short (a->tp.dtype));
        g_autofree char *text = fb_value_kind_wrap (a->tp.kind, inner);
        g_string_append (out, text);
      }
      break;
    default:
      g_string_append_c (out, '?');
      break;
    }
}

static int
compare_attr_names (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(const FbAttr * const *) a)->name, (*(const FbAttr * const *) b)->name);
}

static void
append_node_line (GString *out, const FbNode *n)
{
  g_autofree const FbAttr **attrs = g_new (const FbAttr *, MAX (n->n_attrs, 1));
  guint n_shown = 0;

  for (guint k = 0; k < n->n_outputs; k++)
    {
      if (k)
        g_string_append (out, ", ");
      append_value (out, n->outputs[k], TRUE);
    }
  if (n->n_outputs)
    g_string_append (out, " = ");
  g_string_append (out, n->op_type && *n->op_type ? n->op_type : fb_op_name (n->op));
  g_string_append_c (out, '(');
  for (guint k = 0; k < n->n_inputs; k++)
    {
      if (k)
        g_string_append (out, ", ");
      append_value (out, n->inputs[k], FALSE);
    }
  g_string_append_c (out, ')');

  for (guint a = 0; a < n->n_attrs; a++)
    if (n->attrs[a].type != FB_ATTR_GRAPH)
      attrs[n_shown++] = &n->attrs[a];
  qsort (attrs, n_shown, sizeof (FbAttr *), compare_attr_names);
  if (n_shown)
    {
      g_string_append (out, " {");
      for (guint a = 0; a < n_shown; a++)
        {
          g_string_append_printf (out, "%s%s=", a ? ", " : "", attrs[a]->name);
          append_attr_value (out, attrs[a]);
        }
      g_string_append_c (out, '}');
    }
  g_string_append (out, " # ");
  g_string_append (out, n->name ? n->name : "");
  if (n->flags & FB_NODE_INSERTED)
    g_string_append (out, " [inserted]");
  for (guint k = 0; k < n->n_outputs; k++)
    if (n->outputs[k] && n->outputs[k]->buffer > 0)
      g_string_append_printf (out, " [%%%u: buffer %d @%" G_GINT64_FORMAT "]", n->outputs[k]->id,
                              n->outputs[k]->buffer, n->outputs[k]->offset);
}

char *
fb_node_to_text (const FbNode *node)
{
  GString *s;

  g_return_val_if_fail (node != NULL, NULL);
  s = g_string_new (NULL);
  append_node_line (s, node);
  return g_string_free (s, FALSE);
}

static void
indent (GString *out, int depth)
{
  for (int i = 0; i < depth; i++)
    g_string_append (out, "  ");
}

static void
append_constant (GString *out, const FbValue *v)
{
  const FbTensor *t = v->constant;

  g_string_append (out, "const ");
  append_value (out, v, TRUE);
  if (t->numel <= SMALL_CONSTANT && t->dtype != FB_DTYPE_STRING)
    {
      g_string_append (out, " = [");
      for (int64_t i = 0; i < t->numel; i++)
        {
          if (i)
            g_string_append (out, ", ");
          if (fb_dtype_is_float (t->dtype))
            append_float (out, fb_tensor_get_f64 (t, i));
          else
            g_string_append_printf (out, "%" G_GINT64_FORMAT, fb_tensor_get_i64 (t, i));
        }
      g_string_append_c (out, ']');
    }
  g_string_append (out, " # ");
  g_string_append (out, v->name);
}

/* A node the importer brought from an old operator version says what the file wrote, so that
 * stage 0 still tells the model as written. */
static void
append_written (GString *out, const FbModel *model, const FbNode *n)
{
  if (model == NULL || n->n_prov != 1 || n->prov[0] >= model->orig_nodes->len)
    return;
  const FbOrigNode *o = &g_array_index (model->orig_nodes, FbOrigNode, n->prov[0]);
  if (o->written != NULL && g_strcmp0 (o->name, n->name) == 0)
    g_string_append_printf (out, " [written: %s]", o->written);
}

static int
compare_value_ids (gconstpointer a, gconstpointer b)
{
  guint x = (*(const FbValue * const *) a)->id, y = (*(const FbValue * const *) b)->id;
  return x < y ? -1 : x > y;
}

static void
print_graph (const FbGraph *g, GString *out, int depth, const char *title)
{
  g_autoptr(GPtrArray) consts = g_ptr_array_new ();

  indent (out, depth);
  g_string_append (out, title);
  g_string_append (out, " {\n");
  for (guint i = 0; i < g->inputs->len; i++)
    {
      const FbValue *v = g_ptr_array_index (g->inputs, i);
      indent (out, depth + 1);
      g_string_append (out, "input ");
      append_value (out, v, TRUE);
      g_string_append_printf (out, " # %s\n", v->name);
    }
  for (guint i = 0; i < g->values->len; i++)
    {
      const FbValue *v = g_ptr_array_index (g->values, i);
      if (v->constant != NULL && !v->is_input)
        g_ptr_array_add (consts, (gpointer) v);
    }
  g_ptr_array_sort (consts, compare_value_ids);
  for (guint i = 0; i < consts->len; i++)
    {
      indent (out, depth + 1);
      append_constant (out, g_ptr_array_index (consts, i));
      g_string_append_c (out, '\n');
    }
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (g->nodes, i);
      indent (out, depth + 1);
      append_node_line (out, n);
      append_written (out, g->model, n);
      g_string_append_c (out, '\n');
      for (guint a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == FB_ATTR_GRAPH)
          {
            g_autofree char *sub = g_strdup_printf ("%s:", n->attrs[a].name);
            print_graph (n->attrs[a].g, out, depth + 2, sub);
          }
    }
  indent (out, depth + 1);
  g_string_append (out, "return ");
  for (guint i = 0; i < g->outputs->len; i++)
    {
      if (i)
        g_string_append (out, ", ");
      append_value (out, g_ptr_array_index (g->outputs, i), FALSE);
    }
  g_string_append_c (out, '\n');
  indent (out, depth);
  g_string_append (out, "}\n");
}

void
fb_graph_print (const FbGraph *graph, GString *out)
{
  g_autofree char *title = NULL;
  g_autofree char *esc = NULL;

  g_return_if_fail (graph != NULL && out != NULL);
  esc = g_strescape (graph->name ? graph->name : "", NULL);
  title = g_strdup_printf ("graph \"%s\"", esc);
  print_graph (graph, out, 0, title);
}

char *
fb_graph_to_text (const FbGraph *graph)
{
  GString *s;

  g_return_val_if_fail (graph != NULL, NULL);
  s = g_string_new (NULL);
  fb_graph_print (graph, s);
  return g_string_free (s, FALSE);
}
