/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The window's actions. Those that need no settings are installed on the class with their
 * accelerators; the tensor layout and how constants are drawn are settings, and become actions
 * through the settings. */
#include "fb-window-private.h"

static FbGraphView *
active_view (FbWindow *self)
{
  return fb_compare_view_get_active_view (self->compare_view);
}

typedef struct {
  FbWindow              *self;
  GtkFileChooserNative **slot;     /* where the window keeps the chooser while it is open */
  void                 (*open) (FbWindow *self, GFile *file);
} Choosing;

static void
on_chooser_response (GtkNativeDialog *dialog,
                     int              response,
                     Choosing        *c)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));

      if (file != NULL)
        c->open (c->self, file);
    }
  g_clear_object (c->slot);
}

void
_fb_window_choose_file (FbWindow               *self,
                        GtkFileChooserNative  **slot,
                        const char             *title,
                        const char             *filter_name,
                        const char             *pattern,
                        const char             *mime_type,
                        void                  (*open) (FbWindow *self, GFile *file))
{
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();
  g_autoptr(GtkFileFilter) all = gtk_file_filter_new ();
  Choosing *c;

  if (*slot != NULL)
    return;
  /* GtkFileDialog only exists from GTK 4.10. */
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  *slot = gtk_file_chooser_native_new (title, GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_OPEN,
                                       "_Open", "_Cancel");
  gtk_file_filter_set_name (filter, filter_name);
  gtk_file_filter_add_pattern (filter, pattern);
  gtk_file_filter_add_mime_type (filter, mime_type);
  gtk_file_filter_set_name (all, "All files");
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (*slot), filter);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (*slot), all);
  gtk_file_chooser_set_filter (GTK_FILE_CHOOSER (*slot), filter);
  G_GNUC_END_IGNORE_DEPRECATIONS
  c = g_new (Choosing, 1);
  *c = (Choosing) { self, slot, open };
  g_object_set_data_full (G_OBJECT (*slot), "fb-choosing", c, g_free);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (*slot), TRUE);
  g_signal_connect (*slot, "response", G_CALLBACK (on_chooser_response), c);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (*slot));
}

static void
open_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  FbWindow *self = FB_WINDOW (widget);

  _fb_window_choose_file (self, &self->chooser, "Open a Model", "ONNX models", "*.onnx",
                          "application/x-onnx", fb_window_open_file);
}

static void
open_uri_action (GtkWidget  *widget,
                 const char *action_name,
                 GVariant   *parameter)
{
  g_autoptr(GFile) file = g_file_new_for_uri (g_variant_get_string (parameter, NULL));

  fb_window_open_file (FB_WINDOW (widget), file);
}

static void
open_sample_action (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  fb_window_open_sample (FB_WINDOW (widget));
}

static void
search_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  FbWindow *self = FB_WINDOW (widget);

  gtk_search_bar_set_search_mode (self->search_bar, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

static void
zoom_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  FbGraphView *view = active_view (FB_WINDOW (widget));

  if (g_str_equal (action_name, "win.zoom-in"))
    fb_graph_view_zoom_in (view);
  else if (g_str_equal (action_name, "win.zoom-out"))
    fb_graph_view_zoom_out (view);
  else
    fb_graph_view_zoom_to_fit (view);
}

static void
stage_action (GtkWidget  *widget,
              const char *action_name,
              GVariant   *parameter)
{
  FbWindow *self = FB_WINDOW (widget);
  int selected = fb_stage_list_get_selected (self->stage_list);
  int n = fb_stage_list_get_n_rows (self->stage_list);

  selected += g_str_equal (action_name, "win.next-stage") ? 1 : -1;
  if (selected >= 0 && selected < n)
    fb_stage_list_select (self->stage_list, selected);
}

static void
cancel_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  _fb_window_cancel (FB_WINDOW (widget));
}

static gboolean
remove_string (GPtrArray  *array,
               const char *s)
{
  for (guint i = 0; i < array->len; i++)
    if (g_strcmp0 (g_ptr_array_index (array, i), s) == 0)
      {
        g_ptr_array_remove_index (array, i);
        return TRUE;
      }
  return FALSE;
}

static void
no_fuse_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  FbWindow *self = FB_WINDOW (widget);
  const char *name = g_variant_get_string (parameter, NULL);

  if (g_str_equal (action_name, "win.no-fuse"))
    {
      remove_string (self->options->no_fuse, name);
      g_ptr_array_add (self->options->no_fuse, g_strdup (name));
    }
  else if (!remove_string (self->options->no_fuse, name))
    return;
  _fb_window_rerun (self);
}

static void
clear_no_fuse_action (GtkWidget  *widget,
                      const char *action_name,
                      GVariant   *parameter)
{
  FbWindow *self = FB_WINDOW (widget);

  if (self->options->no_fuse->len == 0)
    return;
  g_ptr_array_set_size (self->options->no_fuse, 0);
  _fb_window_rerun (self);
}

static void
toggle_pass_action (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  FbWindow *self = FB_WINDOW (widget);
  const char *pass = g_variant_get_string (parameter, NULL);
  gboolean disabled = FALSE;

  for (guint i = 0; i < self->options->disabled_passes->len; i++)
    disabled |= g_strcmp0 (g_ptr_array_index (self->options->disabled_passes, i), pass) == 0;
  /* Through the check box, so that the list and the options agree. */
  fb_stage_list_set_pass_enabled (self->stage_list, pass, disabled);
}

static void
show_kernel_action (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  _fb_window_show_kernel (FB_WINDOW (widget));
}

static void
set_layout (FbWindow   *self,
            const char *nick)
{
  FbLayout layout = g_strcmp0 (nick, "nhwc") == 0 ? FB_LAYOUT_NHWC : FB_LAYOUT_NCHW;

  if (layout == self->options->layout)
    return;
  self->options->layout = layout;
  _fb_window_rerun (self);
}

static void
on_layout_setting_changed (GSettings  *settings,
                           const char *key,
                           FbWindow   *self)
{
  g_autofree char *nick = g_settings_get_string (settings, key);

  set_layout (self, nick);
}

/* Without the settings schema, the layout lives in the action's state only. */
static void
on_layout_change_state (GSimpleAction *action,
                        GVariant      *state,
                        FbWindow      *self)
{
  g_simple_action_set_state (action, state);
  set_layout (self, g_variant_get_string (state, NULL));
}

static void
set_constants_as_nodes (FbWindow *self,
                        gboolean  as_nodes)
{
  fb_compare_view_set_constants (self->compare_view, as_nodes ? FB_GRAPH_CONSTANTS_AS_NODES
                                                              : FB_GRAPH_CONSTANTS_AS_ROWS);
}

static void
on_constants_setting_changed (GSettings  *settings,
                              const char *key,
                              FbWindow   *self)
{
  set_constants_as_nodes (self, g_settings_get_boolean (settings, key));
}

static void
on_constants_change_state (GSimpleAction *action,
                           GVariant      *state,
                           FbWindow      *self)
{
  g_simple_action_set_state (action, state);
  set_constants_as_nodes (self, g_variant_get_boolean (state));
}

/* Drawing only: no pass runs again, every stage is laid out anew. */
static void
init_constants_action (FbWindow  *self,
                       GSettings *settings)
{
  g_autoptr(GAction) action = NULL;

  if (g_action_map_lookup_action (G_ACTION_MAP (self), "constants-as-nodes") != NULL)
    return;

  if (settings != NULL)
    {
      action = g_settings_create_action (settings, "constants-as-nodes");
      g_signal_connect_object (settings, "changed::constants-as-nodes",
                               G_CALLBACK (on_constants_setting_changed), self, 0);
      set_constants_as_nodes (self, g_settings_get_boolean (settings, "constants-as-nodes"));
    }
  else
    {
      action = G_ACTION (g_simple_action_new_stateful ("constants-as-nodes", NULL,
                                                       g_variant_new_boolean (FALSE)));
      g_signal_connect_object (action, "change-state", G_CALLBACK (on_constants_change_state), self, 0);
    }
  g_action_map_add_action (G_ACTION_MAP (self), action);
}

/* g_object_new () sets a window's application only after constructed () ran: the setting is
 * found once it is set (and without one, the action keeps its state itself). */
static void
on_application_set (FbWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));

  if (app == NULL)
    return;
  g_signal_handlers_disconnect_by_func (self, on_application_set, NULL);
  init_constants_action (self, fb_application_get_settings (FB_APPLICATION (app)));
}

void
_fb_window_init_actions (FbWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  GSettings *settings = app != NULL ? fb_application_get_settings (FB_APPLICATION (app)) : NULL;
  g_autoptr(GAction) layout = NULL;

  if (settings != NULL)
    {
      layout = g_settings_create_action (settings, "layout");
      g_signal_connect_object (settings, "changed::layout", G_CALLBACK (on_layout_setting_changed), self, 0);
    }
  else
    {
      layout = G_ACTION (g_simple_action_new_stateful ("layout", G_VARIANT_TYPE_STRING,
                                                       g_variant_new_string (self->options->layout == FB_LAYOUT_NHWC
                                                                             ? "nhwc" : "nchw")));
      g_signal_connect_object (layout, "change-state", G_CALLBACK (on_layout_change_state), self, 0);
    }
  g_action_map_add_action (G_ACTION_MAP (self), layout);
  if (app != NULL)
    init_constants_action (self, settings);
  else
    g_signal_connect (self, "notify::application", G_CALLBACK (on_application_set), NULL);
  _fb_window_init_export (self);
  /* Until a model is on screen there is no kernel to show. */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.show-kernel", FALSE);
}

void
_fb_window_class_init_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.open-uri", "s", open_uri_action);
  gtk_widget_class_install_action (widget_class, "win.open-sample", NULL, open_sample_action);
  gtk_widget_class_install_action (widget_class, "win.search", NULL, search_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-in", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-out", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-fit", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.next-stage", NULL, stage_action);
  gtk_widget_class_install_action (widget_class, "win.previous-stage", NULL, stage_action);
  gtk_widget_class_install_action (widget_class, "win.cancel", NULL, cancel_action);
  gtk_widget_class_install_action (widget_class, "win.no-fuse", "s", no_fuse_action);
  gtk_widget_class_install_action (widget_class, "win.allow-fuse", "s", no_fuse_action);
  gtk_widget_class_install_action (widget_class, "win.clear-no-fuse", NULL, clear_no_fuse_action);
  gtk_widget_class_install_action (widget_class, "win.toggle-pass", "s", toggle_pass_action);
  gtk_widget_class_install_action (widget_class, "win.show-kernel", NULL, show_kernel_action);

  _fb_window_class_init_export (widget_class);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "win.open", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_f, GDK_CONTROL_MASK, "win.search", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, GDK_CONTROL_MASK, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, GDK_CONTROL_MASK, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, GDK_CONTROL_MASK, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, GDK_CONTROL_MASK, "win.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, GDK_CONTROL_MASK, "win.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, GDK_CONTROL_MASK, "win.zoom-fit", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_0, GDK_CONTROL_MASK, "win.zoom-fit", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Down, GDK_CONTROL_MASK, "win.next-stage", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Up, GDK_CONTROL_MASK, "win.previous-stage", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_k, GDK_CONTROL_MASK, "win.show-kernel", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK, "window.close", NULL);
}
