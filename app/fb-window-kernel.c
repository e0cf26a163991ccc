/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The kernel of the selected node. Whatever stage the node is selected in, the inspector says
 * which nodes of the final stage carry its work, and the code view (Ctrl+K) shows the kernels
 * lowered from them for the target chosen in its header (cpu, or cuda, which compiles without a
 * GPU). The final stage is lowered in a worker the first time a kernel is asked for; a toggle
 * that makes a new final stage, or another target, drops that lowering, a re-run that keeps the
 * final stage keeps it and all the code it generated. */
#include "fb-kernel-map.h"
#include "fb-window-private.h"

static int
stage_of (FbRun   *run,
          FbGraph *graph)
{
  for (guint i = 0; graph != NULL && i < fb_run_n_stages (run); i++)
    if (fb_run_get_stage (run, i)->graph == graph)
      return i;
  return -1;
}

static FbStage *
final_stage (FbWindow *self)
{
  return fb_run_get_stage (self->run, fb_run_n_stages (self->run) - 1);
}

/* The lowering of the final stage for the code view's target, or NULL when this build lacks
 * that target. */
static FbLowering *
lowering_of (FbWindow *self)
{
  FbStage *final = final_stage (self);
  const char *target = fb_code_view_get_target (self->code_view);

  if (self->lowering != NULL && (fb_lowering_get_stage (self->lowering) != final
                                 || g_strcmp0 (fb_lowering_get_target (self->lowering), target) != 0))
    g_clear_pointer (&self->lowering, fb_lowering_unref);
  if (self->lowering == NULL)
    self->lowering = fb_lowering_new (final, target);
  return self->lowering;
}

static gboolean
wanted (GArray *ids,
        guint   id)
{
  for (guint i = 0; i < ids->len; i++)
    if (g_array_index (ids, guint, i) == id)
      return TRUE;
  return FALSE;
}

/* Names the kernels once the final stage has been lowered, the final-stage nodes before. */
static char *
kernel_summary (FbWindow *self)
{
  FbStage *final = final_stage (self);
  FbPlan *plan = NULL;
  GString *s = g_string_new (NULL);
  guint n = 0;

  if (self->kernel_ids->len == 0)
    {
      g_string_append (s, self->kernel_note != NULL ? self->kernel_note : "No kernel computes it.");
      return g_string_free (s, FALSE);
    }
  if (self->kernel_note != NULL)
    g_string_append_printf (s, "%s.\n", self->kernel_note);
  if (self->lowering != NULL && fb_lowering_get_stage (self->lowering) == final)
    plan = fb_lowering_peek_plan (self->lowering);
  if (plan != NULL)
    {
      for (guint i = 0; i < plan->kernels->len; i++)
        {
          const FbKernel *kernel = g_ptr_array_index (plan->kernels, i);

          if (!wanted (self->kernel_ids, kernel->node_id))
            continue;
          g_string_append_printf (s, "%s%s — %s", n++ > 0 ? "\n" : "", kernel->name,
                                  kernel->label != NULL ? kernel->label : "");
        }
      if (n == 0)
        g_string_append (s, "No kernel: lowering computed it when the model was compiled.");
      return g_string_free (s, FALSE);
    }
  for (guint i = 0; i < self->kernel_ids->len; i++)
    {
      const FbNode *node = fb_graph_find_node (final->graph, g_array_index (self->kernel_ids, guint, i));

      g_string_append_printf (s, "%s“%s”", i > 0 ? ", " : "In the final stage: ",
                              node != NULL && node->name != NULL ? node->name : "?");
    }
  g_string_append (s, ". Its code is generated when first shown.");
  return g_string_free (s, FALSE);
}

static void
update_summary (FbWindow *self)
{
  g_autofree char *summary = NULL;

  if (self->kernel_ids == NULL || self->run == NULL || self->disposed)
    return;
  summary = kernel_summary (self);
  fb_node_inspector_set_kernel (self->inspector, summary, "win.show-kernel");
}

/* The original ONNX nodes the selected node stands for, in whatever stage: the code view marks
 * the lines of the phases that do their work, on every page. */
static void
mark_selection (FbWindow *self)
{
  FbGraphView *view = fb_compare_view_get_active_view (self->compare_view);
  FbNode *node = view != NULL ? fb_graph_view_get_selected_node (view) : NULL;

  fb_code_view_set_marked_prov (self->code_view, node != NULL ? node->prov : NULL,
                                node != NULL ? node->n_prov : 0);
}

static void
show_code (FbWindow *self)
{
  FbLowering *lowering;

  mark_selection (self);
  if (self->kernel_ids == NULL || self->run == NULL)
    fb_code_view_clear (self->code_view);
  else if (self->kernel_ids->len == 0)
    fb_code_view_show_message (self->code_view, "No Kernel",
                                 self->kernel_note != NULL ? self->kernel_note : "No kernel computes this node.");
  else if ((lowering = lowering_of (self)) == NULL)
    fb_code_view_show_message (self->code_view, "No Such Target",
                               "This build of Fusebench cannot generate code for this target.");
  else
    fb_code_view_show_kernels (self->code_view, lowering, self->kernel_ids, self->kernel_note);
}

/* Where the work of node (NULL: none) selected in view went, for the inspector and the code view. */
static void
map_selection (FbWindow    *self,
               FbGraphView *view,
               FbNode      *node)
{
  int index;

  g_clear_pointer (&self->kernel_ids, g_array_unref);
  g_clear_pointer (&self->kernel_note, g_free);
  if (node != NULL && view != NULL && self->run != NULL
      && (index = stage_of (self->run, fb_graph_view_get_graph (view))) >= 0)
    self->kernel_ids = fb_kernel_map_node (self->run, index, node, &self->kernel_note);
  update_summary (self);
}

void
_fb_window_update_kernel (FbWindow    *self,
                          FbGraphView *view,
                          FbNode      *node)
{
  /* The views may still speak while the window takes its widgets down. */
  if (self->disposed)
    return;
  map_selection (self, view, node);
  /* An open code view follows the selection; with nothing selected it keeps what it shows. */
  if (self->kernel_ids != NULL && gtk_widget_get_visible (GTK_WIDGET (self->code_view)))
    show_code (self);
}

void
_fb_window_show_kernel (FbWindow *self)
{
  FbGraphView *view = fb_compare_view_get_active_view (self->compare_view);

  /* From the selection as it is now: a re-run finds the selected node again in the new stage
   * (by id, else by name) without saying so. */
  map_selection (self, view, view != NULL ? fb_graph_view_get_selected_node (view) : NULL);
  /* Where it opens, and how high: fb-window-panes.c. */
  gtk_widget_set_visible (GTK_WIDGET (self->code_view), TRUE);
  show_code (self);
}

void
_fb_window_kernel_run_changed (FbWindow *self)
{
  FbGraphView *view;

  if (self->run == NULL)
    {
      g_clear_pointer (&self->lowering, fb_lowering_unref);
      g_clear_pointer (&self->kernel_ids, g_array_unref);
      g_clear_pointer (&self->kernel_note, g_free);
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.show-kernel", FALSE);
      fb_code_view_clear (self->code_view);
      return;
    }
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.show-kernel", TRUE);
  if (self->lowering != NULL && fb_lowering_get_stage (self->lowering) != final_stage (self))
    {
      /* A new final stage: the code on show is of one that no longer exists. */
      g_clear_pointer (&self->lowering, fb_lowering_unref);
      fb_code_view_clear (self->code_view);
    }
  /* The views keep their selection through a re-run; where its work went may have changed. */
  view = fb_compare_view_get_active_view (self->compare_view);
  if (fb_node_inspector_get_kernel_summary (self->inspector) != NULL || self->kernel_ids != NULL)
    _fb_window_update_kernel (self, view, view != NULL ? fb_graph_view_get_selected_node (view) : NULL);
}

static void
on_code_view_busy (FbWindow *self)
{
  /* The stage is lowered now: the inspector can name the kernels. */
  if (!fb_code_view_is_busy (self->code_view))
    update_summary (self);
}

/* Another target picked in the code view's header: the same selection's kernels, lowered for
 * it. */
static void
on_code_view_target (FbWindow *self)
{
  if (self->disposed)
    return;
  if (self->lowering != NULL
      && g_strcmp0 (fb_lowering_get_target (self->lowering), fb_code_view_get_target (self->code_view)) != 0)
    g_clear_pointer (&self->lowering, fb_lowering_unref);
  update_summary (self);
  if (self->run != NULL && self->kernel_ids != NULL && gtk_widget_get_visible (GTK_WIDGET (self->code_view)))
    show_code (self);
}

void
_fb_window_init_kernel (FbWindow *self)
{
  g_signal_connect_object (self->code_view, "notify::busy", G_CALLBACK (on_code_view_busy), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->code_view, "notify::target", G_CALLBACK (on_code_view_target),
                           self, G_CONNECT_SWAPPED);
}

void
_fb_window_kernel_finalize (FbWindow *self)
{
  g_clear_pointer (&self->lowering, fb_lowering_unref);
  g_clear_pointer (&self->kernel_ids, g_array_unref);
  g_clear_pointer (&self->kernel_note, g_free);
}
