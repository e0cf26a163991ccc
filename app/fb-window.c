/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-config.h"
#include "fb-window-private.h"

G_DEFINE_FINAL_TYPE (FbWindow, fb_window, ADW_TYPE_APPLICATION_WINDOW)

enum {
  PROP_0,
  PROP_BUSY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void attach_application (FbWindow *self);

FbWindow *
fb_window_new (FbApplication *application)
{
  FbWindow *self = g_object_new (FB_TYPE_WINDOW, "application", application, NULL);

  /* Without an application (never in the app; possible in a test), the actions still exist. */
  attach_application (self);
  return self;
}

gboolean
fb_window_is_busy (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), FALSE);
  return self->load_cancellable != NULL || self->run_cancellable != NULL || self->profile_cancellable != NULL;
}

void
_fb_window_update_busy (FbWindow *self)
{
  gboolean busy = fb_window_is_busy (self);
  const char *exporting = _fb_window_export_label (self);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.cancel", busy || exporting != NULL);
  gtk_revealer_set_reveal_child (self->progress_revealer,
                                 (busy || exporting != NULL) && g_strcmp0 (gtk_stack_get_visible_child_name (self->main_stack), "workbench") == 0);
  if (busy && (self->load_cancellable != NULL || self->run_cancellable != NULL))
    gtk_label_set_label (self->progress_label, self->load_cancellable != NULL ? "Loading the model…" : "Running the passes…");
  else if (busy)
    gtk_label_set_label (self->progress_label, "Profiling…");
  else if (exporting != NULL)
    gtk_label_set_label (self->progress_label, exporting);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

FbRun *
fb_window_get_run (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), NULL);
  return self->run;
}

const char *
fb_window_get_last_error (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), NULL);
  return self->last_error;
}

FbStageList *
fb_window_get_stage_list (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), NULL);
  return self->stage_list;
}

FbCompareView *
fb_window_get_compare_view (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), NULL);
  return self->compare_view;
}

FbNodeInspector *
fb_window_get_inspector (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), NULL);
  return self->inspector;
}

FbCodeView *
fb_window_get_code_view (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), NULL);
  return self->code_view;
}

static GSettings *
settings_of (FbWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));

  return app != NULL ? fb_application_get_settings (FB_APPLICATION (app)) : NULL;
}

static void
on_stage_selected (FbWindow *self)
{
  fb_compare_view_set_stage (self->compare_view, fb_stage_list_get_selected (self->stage_list));
}

static gboolean
str_array_contains (GPtrArray  *array,
                    const char *s,
                    guint      *index)
{
  for (guint i = 0; i < array->len; i++)
    if (g_strcmp0 (g_ptr_array_index (array, i), s) == 0)
      {
        if (index != NULL)
          *index = i;
        return TRUE;
      }
  return FALSE;
}

static void
on_pass_toggled (FbWindow   *self,
                 const char *pass,
                 gboolean    enabled)
{
  GPtrArray *disabled = self->options->disabled_passes;
  GSettings *settings = settings_of (self);
  guint index = 0;

  if (enabled == !str_array_contains (disabled, pass, &index))
    return;
  if (enabled)
    g_ptr_array_remove_index (disabled, index);
  else
    g_ptr_array_add (disabled, g_strdup (pass));
  if (settings != NULL)
    {
      g_ptr_array_add (disabled, NULL);
      g_settings_set_strv (settings, "disabled-passes", (const char * const *) disabled->pdata);
      g_ptr_array_set_size (disabled, disabled->len - 1);
    }
  _fb_window_rerun (self);
}

static void
on_view_selection_changed (FbWindow    *self,
                           FbGraphView *view)
{
  FbNode *node = fb_graph_view_get_selected_node (view);
  FbGraphGroup *group = fb_graph_view_get_selected_group (view);
  const FbValue *constant = fb_graph_view_get_selected_constant (view);

  if (node != NULL)
    {
      g_autofree char *mark = fb_compare_view_describe_mark (self->compare_view, view, node);
      g_autofree char *cost = _fb_window_profile_describe_node (self, view, node);
      g_autofree char *note = mark != NULL && cost != NULL ? g_strconcat (mark, "\n", cost, NULL)
                                                           : g_strdup (mark != NULL ? mark : cost);

      fb_node_inspector_show_node (self->inspector, fb_graph_view_get_graph (view), node, note);
    }
  else if (constant != NULL)
    fb_node_inspector_show_constant (self->inspector, fb_graph_view_get_graph (view), constant, NULL);
  else if (group != NULL)
    fb_node_inspector_show_group (self->inspector, group);
  else
    fb_node_inspector_clear (self->inspector);
  _fb_window_update_kernel (self, view, node);
}

static void
update_search_status (FbWindow    *self,
                      FbGraphView *view)
{
  guint n = fb_graph_view_get_n_matches (view);
  g_autofree char *text = NULL;
  const char *query = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));

  if (query[0] == '\0')
    text = g_strdup ("");
  else if (n == 0)
    text = g_strdup ("No match");
  else
    text = g_strdup_printf (n == 1 ? "%u match" : "%u matches", n);
  gtk_label_set_label (self->search_status, text);
}

static void
on_search_changed (FbWindow *self)
{
  FbGraphView *view = fb_compare_view_get_active_view (self->compare_view);
  const char *query = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));

  fb_graph_view_search (view, query);
  update_search_status (self, view);
}

static void
on_search_next (FbWindow *self)
{
  fb_graph_view_search_next (fb_compare_view_get_active_view (self->compare_view), FALSE);
}

static void
on_search_previous (FbWindow *self)
{
  fb_graph_view_search_next (fb_compare_view_get_active_view (self->compare_view), TRUE);
}

static void
on_populate_context_menu (FbGraphView *view,
                          GMenu       *menu,
                          FbNode      *node,
                          FbWindow    *self)
{
  g_autoptr(GMenuItem) item = NULL;
  g_autofree char *label = NULL;
  gboolean kept_out;

  if (node == NULL || node->name == NULL)
    return;
  kept_out = str_array_contains (self->options->no_fuse, node->name, NULL);
  label = g_strdup_printf (kept_out ? "Allow Fusing “%s”" : "Don’t Fuse “%s”", node->name);
  item = g_menu_item_new (label, NULL);
  g_menu_item_set_action_and_target_value (item, kept_out ? "win.allow-fuse" : "win.no-fuse",
                                           g_variant_new_string (node->name));
  g_menu_append_item (menu, item);
}

static void
fb_window_dispose (GObject *object)
{
  FbWindow *self = FB_WINDOW (object);

  /* Workers still running hold the window; their callbacks see this and do nothing. */
  self->disposed = TRUE;
  /* The settings' actions outlive a closed window (the settings hold them): out of the action
   * map, so that a change made in another window does not reach this one's freed map. */
  g_action_map_remove_action (G_ACTION_MAP (self), "layout");
  g_action_map_remove_action (G_ACTION_MAP (self), "constants-as-nodes");
  g_action_map_remove_action (G_ACTION_MAP (self), "profile-host");
  self->rerun_pending = FALSE;
  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  if (self->run_cancellable != NULL)
    g_cancellable_cancel (self->run_cancellable);
  if (self->profile_cancellable != NULL)
    g_cancellable_cancel (self->profile_cancellable);
  g_clear_object (&self->chooser);
  g_clear_object (&self->profile_chooser);
  _fb_window_panes_dispose (self);
  _fb_window_input_shapes_dispose (self);
  gtk_widget_dispose_template (GTK_WIDGET (self), FB_TYPE_WINDOW);

  G_OBJECT_CLASS (fb_window_parent_class)->dispose (object);
}

static void
fb_window_finalize (GObject *object)
{
  FbWindow *self = FB_WINDOW (object);

  g_clear_object (&self->run_cancellable);
  g_clear_pointer (&self->run, fb_run_unref);
  g_clear_pointer (&self->runner, fb_runner_unref);
  g_clear_pointer (&self->options, fb_pipeline_options_free);
  g_clear_object (&self->model_file);
  _fb_window_kernel_finalize (self);
  _fb_window_profile_finalize (self);
  _fb_window_remote_finalize (self);
  g_clear_pointer (&self->profile_target_buttons, g_ptr_array_unref);
  g_free (self->model_title);
  g_free (self->last_error);

  G_OBJECT_CLASS (fb_window_parent_class)->finalize (object);
}

static void
fb_window_get_property (GObject    *object,
                        guint       prop_id,
                        GValue     *value,
                        GParamSpec *pspec)
{
  FbWindow *self = FB_WINDOW (object);

  switch (prop_id)
    {
    case PROP_BUSY:
      g_value_set_boolean (value, fb_window_is_busy (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* What the window takes from its application: the recent files and the settings (passes,
 * layout, window size). g_object_new () sets a window's application only after constructed ()
 * ran, so this runs when it is set. */
static void
attach_application (FbWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  GSettings *settings;

  if (self->attached)
    return;
  self->attached = TRUE;
  if (app != NULL)
    g_menu_append_section (self->recent_section, NULL,
                           fb_application_get_recent_menu (FB_APPLICATION (app)));
  if ((settings = settings_of (self)) != NULL)
    {
      g_auto(GStrv) disabled = g_settings_get_strv (settings, "disabled-passes");
      const char * const *passes = fb_pipeline_pass_names ();

      /* Only names this build knows: the settings may come from another version. */
      g_ptr_array_set_size (self->options->disabled_passes, 0);
      for (guint i = 0; disabled[i] != NULL; i++)
        if (g_strv_contains (passes, disabled[i]))
          g_ptr_array_add (self->options->disabled_passes, g_strdup (disabled[i]));
      self->options->layout = g_settings_get_enum (settings, "layout") == 1 ? FB_LAYOUT_NHWC : FB_LAYOUT_NCHW;
      g_settings_bind (settings, "window-width", self, "default-width", G_SETTINGS_BIND_DEFAULT);
      g_settings_bind (settings, "window-height", self, "default-height", G_SETTINGS_BIND_DEFAULT);
      g_settings_bind (settings, "window-maximized", self, "maximized", G_SETTINGS_BIND_DEFAULT);
    }
  _fb_window_attach_profile_remote (self);
  _fb_window_init_actions (self);
  _fb_window_attach_panes (self, settings);
}

static void
on_application_set (FbWindow *self)
{
  if (gtk_window_get_application (GTK_WINDOW (self)) == NULL)
    return;
  g_signal_handlers_disconnect_by_func (self, on_application_set, NULL);
  attach_application (self);
}

static void
fb_window_constructed (GObject *object)
{
  FbWindow *self = FB_WINDOW (object);

  G_OBJECT_CLASS (fb_window_parent_class)->constructed (object);

  if (gtk_window_get_application (GTK_WINDOW (self)) != NULL)
    attach_application (self);
  else
    g_signal_connect (self, "notify::application", G_CALLBACK (on_application_set), NULL);
  _fb_window_constructed_profile (self);
  _fb_window_update_busy (self);
}

static void
fb_window_class_init (FbWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->constructed = fb_window_constructed;
  object_class->dispose = fb_window_dispose;
  object_class->finalize = fb_window_finalize;
  object_class->get_property = fb_window_get_property;

  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/fusebench/Fusebench/ui/fb-window.ui");
  gtk_widget_class_bind_template_child (widget_class, FbWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, menu_button);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, progress_revealer);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, progress_bar);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, progress_label);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, search_bar);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, search_entry);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, search_status);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, main_stack);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, error_page);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, stage_list);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, compare_view);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, inspector);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, code_paned);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, profile_paned);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, code_view);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, recent_section);
  gtk_widget_class_bind_template_callback (widget_class, on_stage_selected);
  gtk_widget_class_bind_template_callback (widget_class, on_pass_toggled);
  gtk_widget_class_bind_template_callback (widget_class, on_view_selection_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_search_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_search_next);
  gtk_widget_class_bind_template_callback (widget_class, on_search_previous);

  _fb_window_class_init_actions (widget_class);
  _fb_window_class_init_profile (widget_class);
  _fb_window_class_init_panes (widget_class);
  _fb_window_class_init_input_shapes (widget_class);
}

static void
fb_window_init (FbWindow *self)
{
  self->options = fb_pipeline_options_new ();
  gtk_widget_init_template (GTK_WIDGET (self));
  if (g_str_has_suffix (FB_APP_ID, ".Devel"))
    gtk_widget_add_css_class (GTK_WIDGET (self), "devel");
  gtk_search_bar_connect_entry (self->search_bar, GTK_EDITABLE (self->search_entry));
  _fb_window_init_drop (self);
  _fb_window_init_kernel (self);
  _fb_window_init_profile (self);
  _fb_window_init_panes (self);
  g_signal_connect_object (fb_compare_view_get_before_view (self->compare_view), "populate-context-menu",
                           G_CALLBACK (on_populate_context_menu), self, 0);
  g_signal_connect_object (fb_compare_view_get_after_view (self->compare_view), "populate-context-menu",
                           G_CALLBACK (on_populate_context_menu), self, 0);
}
