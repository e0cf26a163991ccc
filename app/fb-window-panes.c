/* SPDX-License-Identifier: GPL-3.0-or-later */
/* How the graphs and the panels around them share the window. The profile panel and the code
 * view sit under the graphs and the inspector beside them, each in a GtkPaned whose divider the
 * user drags; each panel folds away (the profile panel to its header line, the code view and
 * the inspector entirely) from its header or the View section of the menu, and what the user
 * made of them is kept in the settings.
 *
 * The panels keep their height when the window grows or shrinks, and the graphs take the
 * difference, but the graphs never become a strip: under GRAPHS_LEAST px (or GRAPHS_SHARE of the
 * column, whichever is more) the panels give way, down to their own least height. A divider
 * dragged past that point stops there. */
#include "fb-window-private.h"

#define GRAPHS_LEAST        300   /* px: the graphs' least height while the panels can give way */
#define GRAPHS_SHARE        0.4   /* of the column, likewise, in a tall window */
#define PANEL_FIRST_SHARE   3     /* the panel first takes a third of the room under the graphs */
#define PANEL_FIRST_MAX     320   /* px, at most: it scrolls inside */
#define CODE_FIRST_SHARE    0.25  /* the code view first takes this much of the column */
#define HANDLE              1     /* px: a GtkPaned's divider between its children */
#define SAVE_DELAY_MS       400   /* a drag writes the settings once, when it rests */

/* The height a widget cannot go under. */
static int
least_height (GtkWidget *widget)
{
  int minimum = 0;

  gtk_widget_measure (widget, GTK_ORIENTATION_VERTICAL, -1, &minimum, NULL, NULL, NULL);
  return minimum;
}

static int
natural_height (GtkWidget *widget)
{
  int natural = 0;

  gtk_widget_measure (widget, GTK_ORIENTATION_VERTICAL, -1, NULL, &natural, NULL, NULL);
  return natural;
}

static gboolean
panel_shown (FbWindow *self)
{
  return gtk_widget_get_visible (GTK_WIDGET (self->profile_panel));
}

static gboolean
panel_open (FbWindow *self)
{
  return panel_shown (self) && fb_profile_panel_get_expanded (self->profile_panel);
}

static gboolean
code_open (FbWindow *self)
{
  return gtk_widget_get_visible (GTK_WIDGET (self->code_view));
}

static void
set_position (FbWindow *self,
              GtkPaned *paned,
              int       position)
{
  if (position >= 0 && gtk_paned_get_position (paned) == position)
    {
      gboolean set = FALSE;

      g_object_get (paned, "position-set", &set, NULL);
      if (set)
        return;
    }
  self->panes_applying = TRUE;
  gtk_paned_set_position (paned, position);
  self->panes_applying = FALSE;
}

/* The graphs' least height in a column of total px. */
static int
graphs_least (int total)
{
  return MAX (GRAPHS_LEAST, (int) (total * GRAPHS_SHARE));
}

/* Takes up to want px off *a and *b, in proportion to what each has above its least height. */
static void
give_way (int  want,
          int *a,
          int  a_least,
          int *b,
          int  b_least)
{
  int room_a = MAX (0, *a - a_least), room_b = MAX (0, *b - b_least);
  int from_a, from_b;

  if (want <= 0 || room_a + room_b == 0)
    return;
  want = MIN (want, room_a + room_b);
  from_a = MIN (room_a, (int) ((gint64) want * room_a / (room_a + room_b)));
  from_b = MIN (room_b, want - from_a);
  from_a = MIN (room_a, want - from_b);
  *a -= from_a;
  *b -= from_b;
}

/* Sets both dividers of the column (graphs, profile panel, code view) from the heights the
 * panels want and the column's height, the panels giving way where the graphs would be a
 * strip. */
static void
apply (FbWindow *self)
{
  int total = gtk_widget_get_height (GTK_WIDGET (self->code_paned));
  int code = 0, code_least = 0, panel = 0, panel_least = 0, header = 0, graphs, upper, least;

  if (total <= 0 || self->disposed)
    return;
  if (code_open (self))
    {
      code = self->code_height >= 0 ? self->code_height : (int) (total * CODE_FIRST_SHARE);
      code_least = least_height (GTK_WIDGET (self->code_view));
      code = CLAMP (code, code_least, MAX (code_least, total - HANDLE));
    }
  upper = code_open (self) ? total - code - HANDLE : total;
  if (panel_open (self))
    {
      panel = self->panel_height >= 0 ? self->panel_height : MIN (upper / PANEL_FIRST_SHARE, PANEL_FIRST_MAX);
      panel_least = least_height (GTK_WIDGET (self->profile_panel));
      panel = MAX (panel, panel_least);
    }
  else if (panel_shown (self))
    header = natural_height (GTK_WIDGET (self->profile_panel)) + HANDLE;
  graphs = total - code - (code > 0 ? HANDLE : 0) - panel - (panel > 0 ? HANDLE : 0) - header;
  least = graphs_least (total);
  give_way (least - graphs, &code, code_least, &panel, panel_least);

  self->code_total = total;
  if (code_open (self))
    {
      self->code_applied = total - code - HANDLE;
      set_position (self, self->code_paned, self->code_applied);
    }
  upper = code_open (self) ? total - code - HANDLE : total;
  self->panel_total = upper;
  if (panel_open (self))
    {
      self->panel_applied = upper - panel - HANDLE;
      set_position (self, self->profile_paned, self->panel_applied);
    }
  else
    {
      /* Folded, the panel is its header line: an unset divider gives the panel its natural
       * height, and follows it down through the whole slide. */
      self->panel_applied = -1;
      set_position (self, self->profile_paned, -1);
    }
}

static gboolean
save_now (gpointer data)
{
  FbWindow *self = data;

  self->panes_save_id = 0;
  if (self->panes_settings == NULL)
    return G_SOURCE_REMOVE;
  g_settings_set_int (self->panes_settings, "profile-panel-height", self->panel_height);
  g_settings_set_int (self->panes_settings, "code-view-height", self->code_height);
  g_settings_set_int (self->panes_settings, "inspector-width", self->inspector_width);
  return G_SOURCE_REMOVE;
}

static void
schedule_save (FbWindow *self)
{
  if (self->panes_settings == NULL)
    return;
  g_clear_handle_id (&self->panes_save_id, g_source_remove);
  self->panes_save_id = g_timeout_add (SAVE_DELAY_MS, save_now, self);
}

/* A divider moved. When the column kept its height and the position is not the one set here,
 * it is the user's drag: the panel under it wants that height from now on, as far as the graphs
 * keep their least height beside the other panel as it is (the divider stops there). */
static void
on_column_position (FbWindow   *self,
                    GParamSpec *pspec,
                    GtkPaned   *paned)
{
  int position = gtk_paned_get_position (paned);
  int total = gtk_widget_get_height (GTK_WIDGET (paned));

  if (self->panes_applying || self->disposed)
    return;
  if (paned == self->code_paned && code_open (self) && total == self->code_total
      && position != self->code_applied)
    {
      int above = panel_open (self) ? self->panel_total - self->panel_applied
                  : panel_shown (self) ? natural_height (GTK_WIDGET (self->profile_panel)) + HANDLE : 0;

      self->code_height = MIN (total - position - HANDLE, total - HANDLE - above - graphs_least (total));
      self->code_height = MAX (self->code_height, least_height (GTK_WIDGET (self->code_view)));
    }
  else if (paned == self->profile_paned && panel_open (self) && total == self->panel_total
           && self->panel_applied >= 0 && position != self->panel_applied)
    {
      self->panel_height = MIN (total - position - HANDLE, total - HANDLE - graphs_least (self->code_total));
      self->panel_height = MAX (self->panel_height, least_height (GTK_WIDGET (self->profile_panel)));
    }
  else
    return;
  apply (self);
  schedule_save (self);
}

static void
on_inspector_position (FbWindow *self)
{
  int total = gtk_widget_get_width (GTK_WIDGET (self->inner_paned));

  if (self->panes_applying || self->disposed || total <= 0
      || !gtk_widget_get_visible (GTK_WIDGET (self->inspector)))
    return;
  self->inspector_width = MAX (0, total - gtk_paned_get_position (self->inner_paned) - HANDLE);
  schedule_save (self);
}

/* The inspector keeps its width as the window changes; the graphs take the difference. */
static void
place_inspector (FbWindow *self)
{
  int total = gtk_widget_get_width (GTK_WIDGET (self->inner_paned));

  if (total <= 0 || self->inspector_width < 0 || self->disposed
      || !gtk_widget_get_visible (GTK_WIDGET (self->inspector)))
    return;
  set_position (self, self->inner_paned, MAX (0, total - self->inspector_width - HANDLE));
}

/* The View section's toggles: a boolean state that follows the panel, however it changed. */
static void
sync_actions (FbWindow *self)
{
  GAction *action;

  if (self->disposed)
    return;
  if ((action = g_action_map_lookup_action (G_ACTION_MAP (self), "profile-panel")) != NULL)
    {
      g_simple_action_set_enabled (G_SIMPLE_ACTION (action), panel_shown (self));
      g_simple_action_set_state (G_SIMPLE_ACTION (action), g_variant_new_boolean (panel_open (self)));
    }
  if ((action = g_action_map_lookup_action (G_ACTION_MAP (self), "code-view")) != NULL)
    g_simple_action_set_state (G_SIMPLE_ACTION (action), g_variant_new_boolean (code_open (self)));
  if ((action = g_action_map_lookup_action (G_ACTION_MAP (self), "inspector")) != NULL)
    g_simple_action_set_state (G_SIMPLE_ACTION (action),
                               g_variant_new_boolean (gtk_widget_get_visible (GTK_WIDGET (self->inspector))));
}

static void
on_panels_changed (FbWindow *self)
{
  if (self->disposed)
    return;
  apply (self);
  sync_actions (self);
}

static void
on_panel_expanded (FbWindow *self)
{
  if (self->disposed)
    return;
  if (self->panes_settings != NULL)
    g_settings_set_boolean (self->panes_settings, "profile-panel-expanded",
                            fb_profile_panel_get_expanded (self->profile_panel));
  on_panels_changed (self);
}

static void
on_inspector_shown (FbWindow *self)
{
  if (self->disposed)
    return;
  if (self->panes_settings != NULL)
    g_settings_set_boolean (self->panes_settings, "inspector-visible",
                            gtk_widget_get_visible (GTK_WIDGET (self->inspector)));
  place_inspector (self);
  sync_actions (self);
}

static void
on_toggle (GSimpleAction *action,
           GVariant      *state,
           FbWindow      *self)
{
  gboolean on = g_variant_get_boolean (state);
  const char *name = g_action_get_name (G_ACTION (action));

  if (g_str_equal (name, "profile-panel"))
    fb_profile_panel_set_expanded (self->profile_panel, on);
  else if (g_str_equal (name, "code-view") && on)
    _fb_window_show_kernel (self);
  else if (g_str_equal (name, "code-view"))
    gtk_widget_set_visible (GTK_WIDGET (self->code_view), FALSE);
  else
    gtk_widget_set_visible (GTK_WIDGET (self->inspector), on);
  sync_actions (self);
}

static void
add_toggle (FbWindow   *self,
            const char *name)
{
  g_autoptr(GSimpleAction) action = g_simple_action_new_stateful (name, NULL, g_variant_new_boolean (FALSE));

  g_signal_connect_object (action, "change-state", G_CALLBACK (on_toggle), self, 0);
  g_action_map_add_action (G_ACTION_MAP (self), G_ACTION (action));
}

void
_fb_window_attach_panes (FbWindow  *self,
                         GSettings *settings)
{
  add_toggle (self, "profile-panel");
  add_toggle (self, "code-view");
  add_toggle (self, "inspector");
  if (settings != NULL)
    {
      self->panes_settings = g_object_ref (settings);
      self->panel_height = g_settings_get_int (settings, "profile-panel-height");
      self->code_height = g_settings_get_int (settings, "code-view-height");
      self->inspector_width = g_settings_get_int (settings, "inspector-width");
      fb_profile_panel_set_expanded (self->profile_panel,
                                     g_settings_get_boolean (settings, "profile-panel-expanded"));
      gtk_widget_set_visible (GTK_WIDGET (self->inspector), g_settings_get_boolean (settings, "inspector-visible"));
    }
  sync_actions (self);
}

void
_fb_window_init_panes (FbWindow *self)
{
  self->panel_height = -1;
  self->code_height = -1;
  self->inspector_width = -1;
  self->code_applied = -1;
  self->panel_applied = -1;
  /* The column's height is known from its first allocation on (max-position follows it). */
  g_signal_connect_object (self->code_paned, "notify::max-position", G_CALLBACK (on_panels_changed), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->profile_paned, "notify::max-position", G_CALLBACK (on_panels_changed), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->code_paned, "notify::position", G_CALLBACK (on_column_position), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->profile_paned, "notify::position", G_CALLBACK (on_column_position), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->profile_panel, "notify::visible", G_CALLBACK (on_panels_changed), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->profile_panel, "notify::expanded", G_CALLBACK (on_panel_expanded), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->code_view, "notify::visible", G_CALLBACK (on_panels_changed), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->inspector, "notify::visible", G_CALLBACK (on_inspector_shown), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->inner_paned, "notify::max-position", G_CALLBACK (place_inspector), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->inner_paned, "notify::position", G_CALLBACK (on_inspector_position), self,
                           G_CONNECT_SWAPPED);
}

void
_fb_window_panes_dispose (FbWindow *self)
{
  if (self->panes_save_id != 0)
    {
      g_clear_handle_id (&self->panes_save_id, g_source_remove);
      save_now (self);
    }
  g_clear_object (&self->panes_settings);
}

void
_fb_window_class_init_panes (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_child (widget_class, FbWindow, inner_paned);
  /* Ctrl+J folds the panel under the editor in most IDEs; F9 the side bar in GNOME's apps. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_j, GDK_CONTROL_MASK, "win.profile-panel", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_k, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                      "win.code-view", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F9, 0, "win.inspector", NULL);
}
