/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-code-view.h"
#include "fb-code-source-private.h"

#include <adwaita.h>

struct _FbCodeView {
  GtkWidget      parent_instance;

  /* Template widgets. */
  GtkLabel      *title_label;
  GtkLabel      *node_label;
  GtkLabel      *onnx_label;
  GtkLabel      *note_label;
  GtkDropDown   *kernel_choice;
  GtkWidget     *switcher;
  GtkStack      *state_stack;
  GtkSpinner    *spinner;
  AdwStatusPage *message_page;
  GtkStack      *code_stack;
  GtkTextView   *kir_view;
  GtkTextView   *ll_view;
  GtkTextView   *opt_view;
  GtkTextView   *asm_view;
  GtkSearchEntry *search_entry;

  FbLowering    *lowering;      /* of the request on show; owns what kernels point to */
  GPtrArray     *kernels;       /* FbLoweredKernel*, or NULL */
  int            shown;         /* index into kernels, -1 for none */
  GCancellable  *cancellable;   /* the request in flight, NULL when none */
  char          *message;
  gboolean       choosing;      /* while the choice is filled in, not picked by the user */
  char         **marked_names;  /* names whose lines in the kernel IR are marked */
  guint          n_marked;
};

G_DEFINE_FINAL_TYPE (FbCodeView, fb_code_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_BUSY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

GtkWidget *
fb_code_view_new (void)
{
  return g_object_new (FB_TYPE_CODE_VIEW, NULL);
}

static void
set_busy (FbCodeView *self,
          GCancellable *cancellable)
{
  gboolean was = self->cancellable != NULL;

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = cancellable;
  gtk_spinner_set_spinning (self->spinner, cancellable != NULL);
  if (was != (cancellable != NULL))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

static void
set_label (GtkLabel   *label,
           const char *text)
{
  gtk_label_set_label (label, text != NULL ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (label), text != NULL && text[0] != '\0');
}

static void
set_text (GtkTextView *view,
          const char  *text)
{
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (view), text != NULL ? text : "", -1);
}

/* Everything about the last request goes, the header included. */
static void
reset (FbCodeView *self)
{
  set_busy (self, NULL);
  g_clear_pointer (&self->kernels, g_ptr_array_unref);
  g_clear_pointer (&self->lowering, fb_lowering_unref);
  g_clear_pointer (&self->message, g_free);
  self->shown = -1;
  gtk_label_set_label (self->title_label, "Kernel");
  set_label (self->node_label, NULL);
  set_label (self->onnx_label, NULL);
  set_label (self->note_label, NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->kernel_choice), FALSE);
  gtk_widget_set_visible (self->switcher, FALSE);
  set_text (self->kir_view, NULL);
  set_text (self->ll_view, NULL);
  set_text (self->opt_view, NULL);
  set_text (self->asm_view, NULL);
}

static void
show_message (FbCodeView *self,
              const char   *icon,
              const char   *title,
              const char   *message)
{
  g_free (self->message);
  self->message = g_strdup (message);
  adw_status_page_set_icon_name (self->message_page, icon);
  adw_status_page_set_title (self->message_page, title);
  adw_status_page_set_description (self->message_page, message);
  gtk_widget_set_visible (self->switcher, FALSE);
  gtk_stack_set_visible_child_name (self->state_stack, "message");
}

static char *
join_functions (const FbKernel *kernel)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < kernel->phases->len; i++)
    {
      const FbKPhase *phase = g_ptr_array_index (kernel->phases, i);

      g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", phase->fn);
    }
  return g_string_free (s, FALSE);
}

static void
show_kernel (FbCodeView *self,
             guint         index)
{
  const FbLoweredKernel *lk;
  const FbKernel *kernel;
  g_autofree char *functions = NULL;
  g_autofree char *node_text = NULL;
  g_autoptr(GString) onnx = g_string_new (NULL);
  const char *node_name = "?", *op = "";

  g_assert (self->kernels != NULL && index < self->kernels->len);

  self->shown = index;
  lk = g_ptr_array_index (self->kernels, index);
  kernel = lk->kernel;
  if (kernel->node != NULL)
    {
      node_name = kernel->node->name != NULL ? kernel->node->name : "?";
      op = kernel->node->op_type != NULL ? kernel->node->op_type : fb_op_name (kernel->node->op);
    }
  functions = join_functions (kernel);
  node_text = g_strdup_printf ("%s · from node “%s” (%s) of the final stage%s%s",
                               kernel->label != NULL ? kernel->label : "", node_name, op,
                               functions[0] != '\0' ? " · functions: " : " · no code of its own",
                               functions);
  for (guint i = 0; kernel->prov_names != NULL && i < kernel->prov_names->len; i++)
    g_string_append_printf (onnx, "%s%s", i > 0 ? ", " : "Original ONNX nodes: ",
                            g_array_index (kernel->prov_names, char *, i));

  gtk_label_set_label (self->title_label, kernel->name);
  set_label (self->node_label, node_text);
  set_label (self->onnx_label, onnx->str);
  set_text (self->kir_view, lk->stages->kernel_ir);
  set_text (self->ll_view, lk->stages->llvm_ir);
  set_text (self->opt_view, lk->stages->llvm_ir_opt);
  set_text (self->asm_view, lk->stages->assembly);
  self->n_marked = _fb_code_source_mark_lines (self->kir_view, (const char * const *) self->marked_names);
  g_clear_pointer (&self->message, g_free);
  gtk_widget_set_visible (self->switcher, TRUE);
  gtk_stack_set_visible_child_name (self->state_stack, "code");
}

static void
fill_choice (FbCodeView *self)
{
  g_autoptr(GtkStringList) names = gtk_string_list_new (NULL);

  for (guint i = 0; i < self->kernels->len; i++)
    gtk_string_list_append (names, ((FbLoweredKernel *) g_ptr_array_index (self->kernels, i))->kernel->name);
  self->choosing = TRUE;
  gtk_drop_down_set_model (self->kernel_choice, G_LIST_MODEL (names));
  gtk_drop_down_set_selected (self->kernel_choice, 0);
  self->choosing = FALSE;
  gtk_widget_set_visible (GTK_WIDGET (self->kernel_choice), self->kernels->len > 1);
}

static void
on_kernels_done (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  FbCodeView *self = FB_CODE_VIEW (source);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) kernels = fb_lowering_kernels_finish (result, &error);

  /* A newer request, a clear or the end of the widget made this one stale. */
  if (self->cancellable == NULL || g_task_get_cancellable (G_TASK (result)) != self->cancellable)
    return;
  set_busy (self, NULL);
  if (kernels == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        show_message (self, "dialog-error-symbolic", "No Code for This Node", error->message);
      return;
    }
  if (kernels->len == 0)
    {
      show_message (self, "dialog-information-symbolic", "No Kernel",
                    "Lowering computed this node's result when the model was compiled: it is a "
                    "constant of the plan, and no kernel runs for it.");
      return;
    }
  self->kernels = g_steal_pointer (&kernels);
  fill_choice (self);
  show_kernel (self, 0);
}

void
fb_code_view_show_kernels (FbCodeView *self,
                             FbLowering   *lowering,
                             GArray       *node_ids,
                             const char   *note)
{
  g_return_if_fail (FB_IS_CODE_VIEW (self));
  g_return_if_fail (lowering != NULL);
  g_return_if_fail (node_ids != NULL);

  reset (self);
  self->lowering = fb_lowering_ref (lowering);
  set_label (self->note_label, note);
  gtk_stack_set_visible_child_name (self->state_stack, "busy");
  set_busy (self, g_cancellable_new ());
  fb_lowering_kernels_async (lowering, G_OBJECT (self), (const guint *) node_ids->data, node_ids->len,
                             self->cancellable, on_kernels_done, NULL);
}

void
fb_code_view_show_message (FbCodeView *self,
                             const char   *title,
                             const char   *message)
{
  g_return_if_fail (FB_IS_CODE_VIEW (self));
  g_return_if_fail (title != NULL && message != NULL);

  reset (self);
  show_message (self, "dialog-information-symbolic", title, message);
}

void
fb_code_view_clear (FbCodeView *self)
{
  g_return_if_fail (FB_IS_CODE_VIEW (self));

  reset (self);
  gtk_stack_set_visible_child_name (self->state_stack, "empty");
}

gboolean
fb_code_view_is_busy (FbCodeView *self)
{
  g_return_val_if_fail (FB_IS_CODE_VIEW (self), FALSE);
  return self->cancellable != NULL;
}

const char *
fb_code_view_get_message (FbCodeView *self)
{
  g_return_val_if_fail (FB_IS_CODE_VIEW (self), NULL);
  return self->message;
}

guint
fb_code_view_get_n_kernels (FbCodeView *self)
{
  g_return_val_if_fail (FB_IS_CODE_VIEW (self), 0);
  return self->kernels != NULL ? self->kernels->len : 0;
}

const FbKernel *
fb_code_view_get_kernel (FbCodeView *self)
{
  g_return_val_if_fail (FB_IS_CODE_VIEW (self), NULL);

  if (self->kernels == NULL || self->shown < 0)
    return NULL;
  return ((FbLoweredKernel *) g_ptr_array_index (self->kernels, self->shown))->kernel;
}

void
fb_code_view_select_kernel (FbCodeView *self,
                              guint         index)
{
  g_return_if_fail (FB_IS_CODE_VIEW (self));
  g_return_if_fail (self->kernels != NULL && index < self->kernels->len);

  /* Through the choice, so that it shows what is shown. */
  gtk_drop_down_set_selected (self->kernel_choice, index);
}

static GtkTextView *
page_view (FbCodeView *self,
           const char   *page)
{
  if (g_strcmp0 (page, FB_CODE_VIEW_KERNEL_IR) == 0)
    return self->kir_view;
  if (g_strcmp0 (page, FB_CODE_VIEW_LLVM_IR) == 0)
    return self->ll_view;
  if (g_strcmp0 (page, FB_CODE_VIEW_OPTIMIZED_IR) == 0)
    return self->opt_view;
  if (g_strcmp0 (page, FB_CODE_VIEW_ASSEMBLY) == 0)
    return self->asm_view;
  return NULL;
}

char *
fb_code_view_dup_text (FbCodeView *self,
                         const char   *page)
{
  GtkTextView *view;
  GtkTextIter start, end;
  GtkTextBuffer *buffer;

  g_return_val_if_fail (FB_IS_CODE_VIEW (self), NULL);
  g_return_val_if_fail ((view = page_view (self, page)) != NULL, NULL);

  buffer = gtk_text_view_get_buffer (view);
  gtk_text_buffer_get_bounds (buffer, &start, &end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

void
fb_code_view_set_page (FbCodeView *self,
                         const char   *page)
{
  g_return_if_fail (FB_IS_CODE_VIEW (self));
  g_return_if_fail (page_view (self, page) != NULL);

  gtk_stack_set_visible_child_name (self->code_stack, page);
}

static void
on_kernel_chosen (FbCodeView *self)
{
  guint selected = gtk_drop_down_get_selected (self->kernel_choice);

  if (self->choosing || self->kernels == NULL || selected >= self->kernels->len)
    return;
  show_kernel (self, selected);
}

/* The pages in the order lowering makes them. */
static const char * const pages[] = {
  FB_CODE_VIEW_KERNEL_IR, FB_CODE_VIEW_LLVM_IR, FB_CODE_VIEW_OPTIMIZED_IR, FB_CODE_VIEW_ASSEMBLY,
};

const char *
fb_code_view_get_page (FbCodeView *self)
{
  g_return_val_if_fail (FB_IS_CODE_VIEW (self), NULL);
  return gtk_stack_get_visible_child_name (self->code_stack);
}

gboolean
fb_code_view_step_page (FbCodeView *self,
                        int         delta)
{
  const char *page;
  int index = -1;

  g_return_val_if_fail (FB_IS_CODE_VIEW (self), FALSE);
  page = fb_code_view_get_page (self);
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    if (g_strcmp0 (pages[i], page) == 0)
      index = i;
  index += delta;
  if (index < 0 || index >= (int) G_N_ELEMENTS (pages))
    return FALSE;
  gtk_stack_set_visible_child_name (self->code_stack, pages[index]);
  /* The search goes on in the new page. */
  _fb_code_source_search (page_view (self, pages[index]),
                          gtk_editable_get_text (GTK_EDITABLE (self->search_entry)), TRUE);
  return TRUE;
}

static gboolean
step_page_binding (GtkWidget *widget,
                   GVariant  *args,
                   gpointer   data)
{
  return fb_code_view_step_page (FB_CODE_VIEW (widget), g_variant_get_int32 (args));
}

int
fb_code_view_search (FbCodeView *self,
                     const char *text,
                     gboolean    forward)
{
  g_return_val_if_fail (FB_IS_CODE_VIEW (self), 0);
  return _fb_code_source_search (page_view (self, fb_code_view_get_page (self)), text, forward);
}

static void
on_search_changed (FbCodeView *self)
{
  fb_code_view_search (self, gtk_editable_get_text (GTK_EDITABLE (self->search_entry)), TRUE);
}

static void
on_search_previous (FbCodeView *self)
{
  fb_code_view_search (self, gtk_editable_get_text (GTK_EDITABLE (self->search_entry)), FALSE);
}

void
fb_code_view_set_marked_names (FbCodeView        *self,
                               const char *const *names)
{
  g_return_if_fail (FB_IS_CODE_VIEW (self));
  g_strfreev (self->marked_names);
  self->marked_names = g_strdupv ((char **) names);
  self->n_marked = _fb_code_source_mark_lines (self->kir_view, names);
}

guint
fb_code_view_get_n_marked_lines (FbCodeView *self)
{
  g_return_val_if_fail (FB_IS_CODE_VIEW (self), 0);
  return self->n_marked;
}

GtkTextBuffer *
fb_code_view_get_buffer (FbCodeView *self,
                         const char *page)
{
  GtkTextView *view;

  g_return_val_if_fail (FB_IS_CODE_VIEW (self), NULL);
  g_return_val_if_fail ((view = page_view (self, page)) != NULL, NULL);
  return gtk_text_view_get_buffer (view);
}

const char *
fb_code_view_get_language (FbCodeView *self,
                           const char *page)
{
  GtkTextView *view;

  g_return_val_if_fail (FB_IS_CODE_VIEW (self), NULL);
  g_return_val_if_fail ((view = page_view (self, page)) != NULL, NULL);
  return _fb_code_source_language (view);
}

static void
on_close_clicked (FbCodeView *self)
{
  gtk_widget_set_visible (GTK_WIDGET (self), FALSE);
}

static void
fb_code_view_dispose (GObject *object)
{
  FbCodeView *self = FB_CODE_VIEW (object);
  GtkWidget *child;

  /* A worker still running holds the widget; its callback finds nothing to do. */
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->kernels, g_ptr_array_unref);
  g_clear_pointer (&self->lowering, fb_lowering_unref);
  g_clear_pointer (&self->message, g_free);
  g_clear_pointer (&self->marked_names, g_strfreev);
  gtk_widget_dispose_template (GTK_WIDGET (self), FB_TYPE_CODE_VIEW);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);

  G_OBJECT_CLASS (fb_code_view_parent_class)->dispose (object);
}

static void
fb_code_view_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  FbCodeView *self = FB_CODE_VIEW (object);

  switch (prop_id)
    {
    case PROP_BUSY:
      g_value_set_boolean (value, fb_code_view_is_busy (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
fb_code_view_class_init (FbCodeViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fb_code_view_dispose;
  object_class->get_property = fb_code_view_get_property;

  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_source_init ();
  g_type_ensure (GTK_SOURCE_TYPE_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/fusebench/Fusebench/ui/fb-code-view.ui");
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, title_label);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, node_label);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, onnx_label);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, note_label);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, kernel_choice);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, switcher);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, state_stack);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, spinner);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, message_page);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, code_stack);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, kir_view);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, ll_view);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, opt_view);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, asm_view);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, search_entry);
  gtk_widget_class_bind_template_callback (widget_class, on_search_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_search_previous);
  /* Alt+Left and Alt+Right step through the lowering: kernel IR, LLVM IR, optimized, assembly. */
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Right, GDK_ALT_MASK, step_page_binding, "i", 1);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Left, GDK_ALT_MASK, step_page_binding, "i", -1);
  gtk_widget_class_bind_template_callback (widget_class, on_kernel_chosen);
  gtk_widget_class_bind_template_callback (widget_class, on_close_clicked);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "codeview");
}

static void
fb_code_view_init (FbCodeView *self)
{
  self->shown = -1;
  gtk_widget_init_template (GTK_WIDGET (self));
  _fb_code_source_setup (self->kir_view, "fusebench-kir");
  _fb_code_source_setup (self->ll_view, "llvm");
  _fb_code_source_setup (self->opt_view, "llvm");
  _fb_code_source_setup (self->asm_view, "fusebench-x86-att");
}
