/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-code-view.h"
#include "fb-code-marks-private.h"
#include "fb-code-source-private.h"
#include "fb-backend.h"

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
  GtkTextView   *ptx_view;
  GtkTextView   *sass_view;
  GtkSearchEntry *search_entry;
  GtkDropDown   *target_choice;

  FbLowering    *lowering;      /* of the request on show; owns what kernels point to */
  GPtrArray     *kernels;       /* FbLoweredKernel*, or NULL */
  int            shown;         /* index into kernels, -1 for none */
  GCancellable  *cancellable;   /* the request in flight, NULL when none */
  char          *message;
  gboolean       choosing;      /* while the choice is filled in, not picked by the user */
  GArray        *marked_prov;   /* guint: the selection's original nodes, whose lines are marked */
  char          *search_text;   /* what was searched last (the entry's, or fb_code_view_search's) */
  guint          n_marked;      /* of the kernel IR */
};

/* The pages in the order lowering makes them, and the targets that have them. */
static const struct {
  const char *name;
  gboolean    cpu, cuda;
} pages[] = {
  { FB_CODE_VIEW_KERNEL_IR, TRUE, TRUE },
  { FB_CODE_VIEW_LLVM_IR, TRUE, TRUE },
  { FB_CODE_VIEW_OPTIMIZED_IR, TRUE, TRUE },
  { FB_CODE_VIEW_ASSEMBLY, TRUE, FALSE },
  { FB_CODE_VIEW_PTX, FALSE, TRUE },
  { FB_CODE_VIEW_SASS, FALSE, TRUE },
};

/* The targets of target_choice, in its order: those of the backend table whose kernels have
 * lowering stages to show. */
static const FbBackend *
nth_target (guint n)
{
  for (guint i = 0; fb_backend_nth (i) != NULL; i++)
    if (fb_backend_nth (i)->kernel_stages != NULL && n-- == 0)
      return fb_backend_nth (i);
  return NULL;
}

G_DEFINE_FINAL_TYPE (FbCodeView, fb_code_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_BUSY,
  PROP_TARGET,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void set_target (FbCodeView *self,
                        const char *target);

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
  set_text (self->ptx_view, NULL);
  set_text (self->sass_view, NULL);
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

static const FbBackend *
chosen_target (FbCodeView *self)
{
  return nth_target (gtk_drop_down_get_selected (self->target_choice));
}

/* Whether the chosen target's last stage is PTX (its pages: PTX and SASS), not assembly. */
static gboolean
is_cuda (FbCodeView *self)
{
  return g_strcmp0 (chosen_target (self)->assembly_suffix, "ptx") == 0;
}

/* The marks of the kernel on show, from the selection's provenance, on every page it has. */
static void
mark (FbCodeView *self)
{
  const FbLoweredKernel *lk = self->kernels != NULL && self->shown >= 0
                              ? g_ptr_array_index (self->kernels, self->shown) : NULL;
  g_autoptr(GArray) kir = NULL;
  g_autoptr(GArray) ll = NULL;
  g_autoptr(GArray) opt = NULL;
  g_autoptr(GArray) last = NULL;

  if (lk == NULL)
    {
      self->n_marked = 0;
      return;
    }
  kir = _fb_code_marks_kernel_ir (lk->kernel, lk->stages,
                                  self->marked_prov != NULL ? (const guint *) self->marked_prov->data : NULL,
                                  self->marked_prov != NULL ? self->marked_prov->len : 0);
  ll = _fb_code_marks_follow (kir, lk->stages->llvm_ir_lines);
  opt = _fb_code_marks_follow (kir, lk->stages->llvm_ir_opt_lines);
  last = _fb_code_marks_follow (kir, lk->stages->assembly_lines);
  self->n_marked = _fb_code_source_mark_lines (self->kir_view, kir);
  _fb_code_source_mark_lines (self->ll_view, ll);
  _fb_code_source_mark_lines (self->opt_view, opt);
  _fb_code_source_mark_lines (is_cuda (self) ? self->ptx_view : self->asm_view, last);
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
  /* The target's last stages: x86-64, or PTX and its SASS. */
  if (is_cuda (self))
    {
      set_text (self->ptx_view, lk->stages->assembly);
      set_text (self->sass_view, lk->stages->sass);
    }
  else
    set_text (self->asm_view, lk->stages->assembly);
  mark (self);
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
  /* The pages follow the target the kernels are lowered for; the window is not asked again. */
  self->choosing = TRUE;
  set_target (self, fb_lowering_get_target (lowering));
  self->choosing = FALSE;
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
  if (g_strcmp0 (page, FB_CODE_VIEW_PTX) == 0)
    return self->ptx_view;
  if (g_strcmp0 (page, FB_CODE_VIEW_SASS) == 0)
    return self->sass_view;
  return NULL;
}

gboolean
fb_code_view_has_page (FbCodeView *self,
                       const char *page)
{
  g_return_val_if_fail (FB_IS_CODE_VIEW (self), FALSE);
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    if (g_strcmp0 (pages[i].name, page) == 0)
      return is_cuda (self) ? pages[i].cuda : pages[i].cpu;
  return FALSE;
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
  g_return_if_fail (fb_code_view_has_page (self, page));

  gtk_stack_set_visible_child_name (self->code_stack, page);
}

/* The target's pages are the ones on offer; the page on show becomes its counterpart. */
static void
show_pages (FbCodeView *self)
{
  const char *page = gtk_stack_get_visible_child_name (self->code_stack);
  gboolean cuda = is_cuda (self);

  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      GtkWidget *child = gtk_widget_get_parent (GTK_WIDGET (page_view (self, pages[i].name)));
      gtk_stack_page_set_visible (gtk_stack_get_page (self->code_stack, child),
                                  cuda ? pages[i].cuda : pages[i].cpu);
    }
  if (cuda && (g_strcmp0 (page, FB_CODE_VIEW_ASSEMBLY) == 0 || page == NULL))
    gtk_stack_set_visible_child_name (self->code_stack, page ? FB_CODE_VIEW_PTX : FB_CODE_VIEW_KERNEL_IR);
  else if (!cuda && (g_strcmp0 (page, FB_CODE_VIEW_PTX) == 0 || g_strcmp0 (page, FB_CODE_VIEW_SASS) == 0))
    gtk_stack_set_visible_child_name (self->code_stack, FB_CODE_VIEW_ASSEMBLY);
}

static void
set_target (FbCodeView *self,
            const char *target)
{
  for (guint i = 0; nth_target (i) != NULL; i++)
    if (g_strcmp0 (nth_target (i)->name, target) == 0 &&
        gtk_drop_down_get_selected (self->target_choice) != i)
      gtk_drop_down_set_selected (self->target_choice, i);
}

static void
on_target_chosen (FbCodeView *self)
{
  show_pages (self);
  if (self->choosing)
    return;
  /* The code on show is the other target's: the window lowers for this one and shows it. */
  reset (self);
  gtk_stack_set_visible_child_name (self->state_stack, "empty");
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TARGET]);
}

const char *
fb_code_view_get_target (FbCodeView *self)
{
  g_return_val_if_fail (FB_IS_CODE_VIEW (self), NULL);
  return chosen_target (self)->name;
}

void
fb_code_view_set_target (FbCodeView *self,
                         const char *target)
{
  g_return_if_fail (FB_IS_CODE_VIEW (self));
  g_return_if_fail (target != NULL && fb_backend_lookup (target) != NULL &&
                    fb_backend_lookup (target)->kernel_stages != NULL);
  set_target (self, target);
}

static void
on_kernel_chosen (FbCodeView *self)
{
  guint selected = gtk_drop_down_get_selected (self->kernel_choice);

  if (self->choosing || self->kernels == NULL || selected >= self->kernels->len)
    return;
  show_kernel (self, selected);
}

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
  g_return_val_if_fail (delta != 0, FALSE);
  page = fb_code_view_get_page (self);
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    if (g_strcmp0 (pages[i].name, page) == 0)
      index = i;
  /* Pages of the other target are stepped over, each step a page of this one. */
  for (int steps = ABS (delta); steps > 0;)
    {
      index += delta > 0 ? 1 : -1;
      if (index < 0 || index >= (int) G_N_ELEMENTS (pages))
        return FALSE;
      if (fb_code_view_has_page (self, pages[index].name))
        steps--;
    }
  gtk_stack_set_visible_child_name (self->code_stack, pages[index].name);
  /* The search goes on in the new page. */
  _fb_code_source_search (page_view (self, pages[index].name), self->search_text, TRUE);
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
  g_free (self->search_text);
  self->search_text = g_strdup (text);
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
fb_code_view_set_marked_prov (FbCodeView  *self,
                              const guint *prov,
                              guint        n)
{
  g_return_if_fail (FB_IS_CODE_VIEW (self));
  g_return_if_fail (prov != NULL || n == 0);
  g_clear_pointer (&self->marked_prov, g_array_unref);
  self->marked_prov = g_array_sized_new (FALSE, FALSE, sizeof (guint), n);
  g_array_append_vals (self->marked_prov, prov, n);
  mark (self);
}

GArray *
fb_code_view_get_marked_lines (FbCodeView *self,
                               const char *page)
{
  GtkTextView *view;

  g_return_val_if_fail (FB_IS_CODE_VIEW (self), NULL);
  g_return_val_if_fail ((view = page_view (self, page)) != NULL, NULL);
  return _fb_code_source_marked (view);
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
  g_clear_pointer (&self->marked_prov, g_array_unref);
  g_clear_pointer (&self->search_text, g_free);
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
    case PROP_TARGET:
      g_value_set_string (value, fb_code_view_get_target (self));
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
  /* Notified when the user (or fb_code_view_set_target) picks another target, not when the
   * kernels shown bring theirs. */
  properties[PROP_TARGET] =
    g_param_spec_string ("target", NULL, NULL, "cpu",
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
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, ptx_view);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, sass_view);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, search_entry);
  gtk_widget_class_bind_template_child (widget_class, FbCodeView, target_choice);
  gtk_widget_class_bind_template_callback (widget_class, on_search_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_search_previous);
  /* Alt+Left and Alt+Right step through the lowering: kernel IR, LLVM IR, optimized, assembly
   * (or PTX and SASS). */
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Right, GDK_ALT_MASK, step_page_binding, "i", 1);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Left, GDK_ALT_MASK, step_page_binding, "i", -1);
  gtk_widget_class_bind_template_callback (widget_class, on_kernel_chosen);
  gtk_widget_class_bind_template_callback (widget_class, on_target_chosen);
  gtk_widget_class_bind_template_callback (widget_class, on_close_clicked);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "codeview");
}

static void
fb_code_view_init (FbCodeView *self)
{
  g_autoptr(GtkStringList) titles = gtk_string_list_new (NULL);

  self->shown = -1;
  gtk_widget_init_template (GTK_WIDGET (self));
  for (guint i = 0; nth_target (i) != NULL; i++)
    gtk_string_list_append (titles, nth_target (i)->code_title);
  self->choosing = TRUE;
  gtk_drop_down_set_model (self->target_choice, G_LIST_MODEL (titles));
  gtk_drop_down_set_selected (self->target_choice, 0);
  self->choosing = FALSE;
  _fb_code_source_setup (self->kir_view, "fusebench-kir");
  _fb_code_source_setup (self->ll_view, "llvm");
  _fb_code_source_setup (self->opt_view, "llvm");
  _fb_code_source_setup (self->asm_view, "fusebench-x86-att");
  _fb_code_source_setup (self->ptx_view, "fusebench-ptx");
  _fb_code_source_setup (self->sass_view, "fusebench-sass");
  show_pages (self);
}
