/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-node-inspector.h"

#define MAX_LIST_ITEMS 16   /* elements of an attribute list or tensor shown before "…" */

struct _FbNodeInspector {
  GtkWidget  parent_instance;

  GtkStack  *stack;
  GtkBox    *content;
  GtkBox    *kernel_box;      /* the node's "Kernel" section, inside content; NULL when none */

  char      *title;
  char      *kernel_summary;
};

G_DEFINE_FINAL_TYPE (FbNodeInspector, fb_node_inspector, GTK_TYPE_WIDGET)

GtkWidget *
fb_node_inspector_new (void)
{
  return g_object_new (FB_TYPE_NODE_INSPECTOR, NULL);
}

static GtkWidget *
add_label (FbNodeInspector *self,
           const char      *text,
           const char      *css_class)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  if (css_class != NULL)
    gtk_widget_add_css_class (label, css_class);
  gtk_box_append (self->content, label);
  return label;
}

static void
add_heading (FbNodeInspector *self,
             const char      *text)
{
  GtkWidget *label = add_label (self, text, "heading");

  gtk_widget_set_margin_top (label, 12);
}

/* A key in the left column and its value on the right, wrapping. */
static void
add_pair (FbNodeInspector *self,
          const char      *key,
          const char      *value)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  GtkWidget *k = gtk_label_new (key);
  GtkWidget *v = gtk_label_new (value);

  gtk_label_set_xalign (GTK_LABEL (k), 0);
  gtk_label_set_yalign (GTK_LABEL (k), 0);
  gtk_label_set_width_chars (GTK_LABEL (k), 12);
  gtk_label_set_max_width_chars (GTK_LABEL (k), 16);
  gtk_label_set_ellipsize (GTK_LABEL (k), PANGO_ELLIPSIZE_END);
  gtk_widget_set_tooltip_text (k, key);
  gtk_widget_add_css_class (k, "dim-label");
  gtk_label_set_xalign (GTK_LABEL (v), 0);
  gtk_label_set_wrap (GTK_LABEL (v), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (v), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (v), TRUE);
  gtk_widget_set_hexpand (v, TRUE);
  gtk_widget_add_css_class (v, "monospace");
  gtk_box_append (GTK_BOX (box), k);
  gtk_box_append (GTK_BOX (box), v);
  gtk_box_append (self->content, box);
}

static void
append_tensor (GString        *s,
               const FbTensor *tensor)
{
  FbShape shape = fb_tensor_shape (tensor);
  g_autofree char *dims = fb_shape_to_display (&shape);

  g_string_append_printf (s, "%s [%s]", fb_dtype_name (tensor->dtype), dims);
  if (tensor->numel > 0 && tensor->numel <= MAX_LIST_ITEMS && tensor->dtype != FB_DTYPE_STRING)
    {
      g_string_append (s, " = ");
      for (int64_t i = 0; i < tensor->numel; i++)
        g_string_append_printf (s, "%s%g", i > 0 ? ", " : "", fb_tensor_get_f64 (tensor, i));
    }
}

static char *
format_attr (const FbAttr *attr)
{
  GString *s = g_string_new (NULL);

  switch (attr->type)
    {
    case FB_ATTR_FLOAT:
      g_string_append_printf (s, "%g", attr->f);
      break;
    case FB_ATTR_INT:
      g_string_append_printf (s, "%" G_GINT64_FORMAT, attr->i);
      break;
    case FB_ATTR_STRING:
      g_string_append_printf (s, "“%s”", attr->s != NULL ? attr->s : "");
      break;
    case FB_ATTR_TENSOR:
      if (attr->t != NULL)
        append_tensor (s, attr->t);
      break;
    case FB_ATTR_GRAPH:
      g_string_append_printf (s, "graph · %u nodes", attr->g != NULL ? attr->g->nodes->len : 0);
      break;
    case FB_ATTR_FLOATS:
    case FB_ATTR_INTS:
    case FB_ATTR_STRINGS:
      {
        guint n = attr->type == FB_ATTR_FLOATS ? attr->floats.n
                  : attr->type == FB_ATTR_INTS ? attr->ints.n : attr->strings.n;

        g_string_append_c (s, '[');
        for (guint i = 0; i < MIN (n, (guint) MAX_LIST_ITEMS); i++)
          {
            if (i > 0)
              g_string_append (s, ", ");
            if (attr->type == FB_ATTR_FLOATS)
              g_string_append_printf (s, "%g", attr->floats.v[i]);
            else if (attr->type == FB_ATTR_INTS)
              g_string_append_printf (s, "%" G_GINT64_FORMAT, attr->ints.v[i]);
            else
              g_string_append_printf (s, "“%s”", attr->strings.v[i]);
          }
        if (n > MAX_LIST_ITEMS)
          g_string_append_printf (s, ", … (%u)", n);
        g_string_append_c (s, ']');
      }
      break;
    case FB_ATTR_UNDEFINED:
    default:
      g_string_append (s, "?");
      break;
    }
  return g_string_free (s, FALSE);
}

static char *
format_value (const FbValue *value)
{
  g_autofree char *shape = NULL;
  g_autofree char *symbols = NULL;
  g_autofree char *tensor = NULL;
  g_autofree char *type = NULL;

  if (value == NULL)
    return g_strdup ("(omitted)");
  shape = fb_shape_to_display (&value->shape);
  /* The boxes have room for the short names only: here the whole names stand under them. */
  symbols = fb_shape_symbols_text (&value->shape);
  tensor = g_strdup_printf ("%s [%s]", fb_dtype_name (value->dtype), shape);
  /* A sequence or an optional says so around its elements' type: "seq(float32 [1×64])". */
  type = fb_value_kind_wrap (value->kind, tensor);
  return g_strdup_printf ("%s%s%s%s%s", type,
                          value->constant != NULL ? " · constant" : "",
                          value->is_input ? " · graph input" : value->is_output ? " · graph output" : "",
                          symbols != NULL ? "\n" : "", symbols != NULL ? symbols : "");
}

static void
reset (FbNodeInspector *self,
       const char      *title)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->content))) != NULL)
    gtk_box_remove (self->content, child);
  self->kernel_box = NULL;
  g_clear_pointer (&self->kernel_summary, g_free);
  g_free (self->title);
  self->title = g_strdup (title);
  gtk_stack_set_visible_child_name (self->stack, title[0] != '\0' ? "details" : "empty");
}

void
fb_node_inspector_show_node (FbNodeInspector *self,
                             FbGraph         *graph,
                             const FbNode    *node,
                             const char      *note)
{
  const char *op;
  FbGraph *body;

  g_return_if_fail (FB_IS_NODE_INSPECTOR (self));
  g_return_if_fail (graph != NULL);
  g_return_if_fail (node != NULL);

  op = node->op_type != NULL && node->op_type[0] != '\0' ? node->op_type : fb_op_name (node->op);
  reset (self, op);
  add_label (self, op, "title-3");
  add_label (self, node->name != NULL ? node->name : "", "monospace");
  if (node->domain != NULL && node->domain[0] != '\0')
    add_label (self, node->domain, "dim-label");
  if (note != NULL)
    add_label (self, note, "accent");
  if (node->flags & FB_NODE_INSERTED)
    add_label (self, "Inserted by a pass", "dim-label");
  if (node->op == FB_OP_UNKNOWN)
    add_label (self, "Not supported: nothing computes this operator", "error");
  else if (graph->model != NULL && g_hash_table_contains (graph->model->problems, node->name))
    {
      g_autofree char *text = g_strdup_printf ("Not computed: %s", (const char *)
                                               g_hash_table_lookup (graph->model->problems,
                                                                    node->name));
      add_label (self, text, "error");
    }

  add_heading (self, "Inputs");
  for (guint i = 0; i < node->n_inputs; i++)
    {
      g_autofree char *text = format_value (node->inputs[i]);

      add_pair (self, node->inputs[i] != NULL ? node->inputs[i]->name : "—", text);
    }
  add_heading (self, "Outputs");
  for (guint i = 0; i < node->n_outputs; i++)
    {
      g_autofree char *text = format_value (node->outputs[i]);

      add_pair (self, node->outputs[i] != NULL ? node->outputs[i]->name : "—", text);
    }
  if (node->n_attrs > 0)
    {
      add_heading (self, "Attributes");
      for (guint i = 0; i < node->n_attrs; i++)
        {
          g_autofree char *text = format_attr (&node->attrs[i]);

          add_pair (self, node->attrs[i].name, text);
        }
    }
  if (node->op == FB_OP_FUSED && (body = fb_node_attr_graph (node, "body")) != NULL)
    {
      add_heading (self, "Fused members");
      for (guint i = 0; i < body->nodes->len; i++)
        {
          const FbNode *member = g_ptr_array_index (body->nodes, i);
          g_autofree char *shape = member->n_outputs > 0 && member->outputs[0] != NULL
                                   ? fb_shape_to_display (&member->outputs[0]->shape) : g_strdup ("");
          g_autofree char *text = g_strdup_printf ("%s [%s]", member->name, shape);

          add_pair (self, member->op_type, text);
        }
    }
  add_heading (self, "Original ONNX nodes");
  if (node->n_prov == 0)
    add_label (self, "None: made by a pass", "dim-label");
  for (guint i = 0; i < node->n_prov; i++)
    {
      const char *name = graph->model != NULL ? fb_model_orig_name (graph->model, node->prov[i]) : NULL;
      const char *orig_op = "";

      const char *written = NULL;

      if (graph->model != NULL && node->prov[i] < graph->model->orig_nodes->len)
        {
          const FbOrigNode *o = &g_array_index (graph->model->orig_nodes, FbOrigNode, node->prov[i]);
          orig_op = o->op_type;
          written = o->written;
        }
      add_pair (self, orig_op != NULL ? orig_op : "", name != NULL ? name : "?");
      /* The importer brought an old operator version to the current form: say what the file
       * wrote. */
      if (written != NULL)
        add_pair (self, "As written", written);
    }
  /* Filled by fb_node_inspector_set_kernel once the caller knows where the node went. */
  self->kernel_box = GTK_BOX (gtk_box_new (GTK_ORIENTATION_VERTICAL, 4));
  gtk_box_append (self->content, GTK_WIDGET (self->kernel_box));
  if (node->doc_string != NULL && node->doc_string[0] != '\0')
    {
      add_heading (self, "Documentation");
      add_label (self, node->doc_string, NULL);
    }
}

void
fb_node_inspector_show_constant (FbNodeInspector *self,
                                 FbGraph         *graph,
                                 const FbValue   *value,
                                 const char      *note)
{
  g_autoptr(GString) tensor = g_string_new (NULL);
  guint n_readers = 0;

  g_return_if_fail (FB_IS_NODE_INSPECTOR (self));
  g_return_if_fail (graph != NULL);
  g_return_if_fail (value != NULL && value->constant != NULL);

  reset (self, "Initializer");
  add_label (self, "Initializer", "title-3");
  add_label (self, value->name != NULL ? value->name : "", "monospace");
  if (note != NULL)
    add_label (self, note, "accent");
  add_heading (self, "Value");
  append_tensor (tensor, value->constant);
  add_label (self, tensor->str, "monospace");
  if (value->constant->numel > MAX_LIST_ITEMS)
    {
      g_autofree char *size = g_strdup_printf ("%" G_GINT64_FORMAT " elements, %" G_GSIZE_FORMAT " bytes",
                                               value->constant->numel, fb_tensor_nbytes (value->constant));

      add_label (self, size, "dim-label");
    }
  add_heading (self, "Read by");
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *node = g_ptr_array_index (graph->nodes, i);

      for (guint k = 0; k < node->n_inputs; k++)
        if (node->inputs[k] == value)
          {
            if (n_readers++ < MAX_LIST_ITEMS * 2)
              add_pair (self, node->op_type != NULL ? node->op_type : fb_op_name (node->op),
                        node->name != NULL ? node->name : "");
            break;
          }
    }
  if (n_readers > MAX_LIST_ITEMS * 2)
    {
      g_autofree char *more = g_strdup_printf ("… and %u more", n_readers - MAX_LIST_ITEMS * 2);

      add_label (self, more, "dim-label");
    }
  else if (n_readers == 0)
    add_label (self, "No node of this graph reads it", "dim-label");
}

void
fb_node_inspector_set_kernel (FbNodeInspector *self,
                              const char      *summary,
                              const char      *action_name)
{
  GtkWidget *child, *label, *heading;

  g_return_if_fail (FB_IS_NODE_INSPECTOR (self));
  g_return_if_fail (summary != NULL);

  if (self->kernel_box == NULL)
    return;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->kernel_box))) != NULL)
    gtk_box_remove (self->kernel_box, child);
  g_free (self->kernel_summary);
  self->kernel_summary = g_strdup (summary);

  heading = gtk_label_new ("Kernel");
  gtk_label_set_xalign (GTK_LABEL (heading), 0);
  gtk_widget_add_css_class (heading, "heading");
  gtk_widget_set_margin_top (heading, 12);
  gtk_box_append (self->kernel_box, heading);
  label = gtk_label_new (summary);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  gtk_box_append (self->kernel_box, label);
  if (action_name != NULL)
    {
      GtkWidget *button = gtk_button_new_with_mnemonic ("Show _Kernel");

      gtk_actionable_set_action_name (GTK_ACTIONABLE (button), action_name);
      gtk_widget_set_tooltip_text (button, "Kernel IR, LLVM IR before and after optimization, and "
                                           "x86-64 assembly (Ctrl+K)");
      gtk_widget_set_halign (button, GTK_ALIGN_START);
      gtk_widget_set_margin_top (button, 4);
      gtk_box_append (self->kernel_box, button);
    }
}

const char *
fb_node_inspector_get_kernel_summary (FbNodeInspector *self)
{
  g_return_val_if_fail (FB_IS_NODE_INSPECTOR (self), NULL);
  return self->kernel_summary;
}

void
fb_node_inspector_show_group (FbNodeInspector    *self,
                              const FbGraphGroup *group)
{
  g_return_if_fail (FB_IS_NODE_INSPECTOR (self));
  g_return_if_fail (group != NULL);

  reset (self, fb_graph_group_get_label (group));
  add_label (self, fb_graph_group_get_label (group), "title-3");
  add_label (self, fb_graph_group_get_path (group), "monospace");
  add_label (self, fb_graph_group_get_summary (group), "dim-label");
  add_heading (self, "Members");
  for (guint i = 0; i < fb_graph_group_get_n_children (group); i++)
    {
      FbNode *node = fb_graph_group_get_child_node (group, i);
      FbGraphGroup *sub = fb_graph_group_get_child_group (group, i);

      if (i == MAX_LIST_ITEMS * 2)
        {
          g_autofree char *more = g_strdup_printf ("… and %u more", fb_graph_group_get_n_children (group) - i);

          add_label (self, more, "dim-label");
          break;
        }
      if (node != NULL)
        add_pair (self, node->op_type, node->name);
      else
        add_pair (self, "group", fb_graph_group_get_summary (sub));
    }
}

void
fb_node_inspector_clear (FbNodeInspector *self)
{
  g_return_if_fail (FB_IS_NODE_INSPECTOR (self));
  reset (self, "");
}

const char *
fb_node_inspector_get_title (FbNodeInspector *self)
{
  g_return_val_if_fail (FB_IS_NODE_INSPECTOR (self), NULL);
  return self->title;
}

static void
fb_node_inspector_dispose (GObject *object)
{
  FbNodeInspector *self = FB_NODE_INSPECTOR (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), FB_TYPE_NODE_INSPECTOR);
  g_clear_pointer (&self->title, g_free);
  g_clear_pointer (&self->kernel_summary, g_free);
  self->kernel_box = NULL;

  G_OBJECT_CLASS (fb_node_inspector_parent_class)->dispose (object);
}

static void
fb_node_inspector_class_init (FbNodeInspectorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fb_node_inspector_dispose;

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/fusebench/Fusebench/ui/fb-node-inspector.ui");
  gtk_widget_class_bind_template_child (widget_class, FbNodeInspector, stack);
  gtk_widget_class_bind_template_child (widget_class, FbNodeInspector, content);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "nodeinspector");
}

static void
fb_node_inspector_init (FbNodeInspector *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->title = g_strdup ("");
}
