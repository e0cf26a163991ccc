/* SPDX-License-Identifier: GPL-3.0-or-later */
/* How the window's parts share the screen: the Profile menu, open, keeps "Open a Profile File…"
 * on screen whatever the CUDA runtime reports (one line of what is missing, the report itself
 * behind Details); with the profile panel and the code view both open the graphs keep most of
 * the height, and collapsing the panel gives its room back to them. */
#include "fb-application.h"
#include "fb-cuda.h"
#include "fb-window.h"
#include "fb-test-window.h"

#include <string.h>

static FbApplication *app;
static FbWindow *window;

static void
settle (void)
{
  test_window_settle (window);
}

static gboolean
count_frame (GtkWidget     *widget,
             GdkFrameClock *clock,
             gpointer       data)
{
  (*(guint *) data)++;
  return G_SOURCE_CONTINUE;
}

static void
draw_frames (GtkWidget *widget,
             guint      n)
{
  guint frames = 0;
  guint id = gtk_widget_add_tick_callback (widget, count_frame, &frames, NULL);

  while (frames < n)
    {
      gtk_widget_queue_draw (widget);
      g_main_context_iteration (NULL, TRUE);
    }
  gtk_widget_remove_tick_callback (widget, id);
}

static gboolean
button_labelled (GtkWidget *widget, gconstpointer label)
{
  return GTK_IS_BUTTON (widget) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (widget)), label) == 0;
}

static GtkWidget *
find_button (GtkWidget  *widget,
             const char *label)
{
  return test_widget_find (widget, button_labelled, label);
}

static GtkWidget *
find_named (GtkWidget  *widget,
            const char *name)
{
  if (g_strcmp0 (gtk_widget_get_name (widget), name) == 0)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL; child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_named (child, name);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The menu button whose popover holds the "Open a Profile File…" entry. */
static GtkMenuButton *
profile_menu (GtkWidget *widget)
{
  if (GTK_IS_MENU_BUTTON (widget))
    {
      GtkPopover *popover = gtk_menu_button_get_popover (GTK_MENU_BUTTON (widget));

      if (popover != NULL && find_button (GTK_WIDGET (popover), "Open a Profile _File…") != NULL)
        return GTK_MENU_BUTTON (widget);
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL; child = gtk_widget_get_next_sibling (child))
    {
      GtkMenuButton *found = profile_menu (child);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* widget lies wholly inside the popover's surface, and that surface inside the window. */
static void
assert_on_screen (GtkWidget  *widget,
                  GtkPopover *popover)
{
  graphene_rect_t bounds;

  g_assert_true (gtk_widget_get_mapped (widget));
  g_assert_true (gtk_widget_compute_bounds (widget, GTK_WIDGET (popover), &bounds));
  g_assert_cmpfloat (bounds.origin.y, >=, 0);
  g_assert_cmpfloat (bounds.origin.y + bounds.size.height, <=, gtk_widget_get_height (GTK_WIDGET (popover)));
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (popover)), <, gtk_widget_get_height (GTK_WIDGET (window)));
}

static void
test_profile_menu (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *device = fb_cuda_device_describe (&error);
  GtkMenuButton *menu = profile_menu (GTK_WIDGET (window));
  GtkPopover *popover;
  GtkWidget *open, *line, *details;

  g_assert_nonnull (menu);
  popover = gtk_menu_button_get_popover (menu);
  gtk_menu_button_popup (menu);
  draw_frames (GTK_WIDGET (popover), 3);
  open = find_button (GTK_WIDGET (popover), "Open a Profile _File…");
  assert_on_screen (open, popover);

  line = find_named (GTK_WIDGET (popover), "cuda-missing");
  details = find_named (GTK_WIDGET (popover), "cuda-details");
  if (device != NULL)
    {
      /* A GPU here: nothing to explain. */
      g_assert_null (line);
      g_assert_null (details);
    }
  else
    {
      GtkWidget *report;

      /* One line on screen, saying what is missing; not the folders searched. */
      g_assert_nonnull (line);
      assert_on_screen (line, popover);
      g_assert_cmpint (pango_layout_get_line_count (gtk_label_get_layout (GTK_LABEL (line))), ==, 1);
      g_assert_true (g_str_has_prefix (gtk_label_get_label (GTK_LABEL (line)), "No CUDA"));
      g_assert_null (strstr (gtk_label_get_label (GTK_LABEL (line)), "looked for"));
      /* The runtime's whole report behind Details, closed until asked for. */
      g_assert_nonnull (details);
      assert_on_screen (details, popover);
      g_assert_false (gtk_expander_get_expanded (GTK_EXPANDER (details)));
      report = gtk_expander_get_child (GTK_EXPANDER (details));
      g_assert_false (gtk_widget_get_mapped (report));
      gtk_expander_set_expanded (GTK_EXPANDER (details), TRUE);
      draw_frames (GTK_WIDGET (popover), 3);
      g_assert_true (gtk_widget_get_mapped (report));
      /* Even open, the report scrolls inside the menu and the entry below stays on it. */
      assert_on_screen (open, popover);
      gtk_expander_set_expanded (GTK_EXPANDER (details), FALSE);
    }
  gtk_popover_popdown (popover);
  settle ();
}

/* The workbench's content height: the window less its header bar. */
static int
content_height (void)
{
  GtkWidget *compare = GTK_WIDGET (fb_window_get_compare_view (window));
  graphene_rect_t bounds;

  g_assert_true (gtk_widget_compute_bounds (compare, GTK_WIDGET (window), &bounds));
  return gtk_widget_get_height (GTK_WIDGET (window)) - (int) bounds.origin.y;
}

static void
test_panes (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures", "sample-cnn.profile.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  FbCompareView *compare = fb_window_get_compare_view (window);
  FbGraphView *after = fb_compare_view_get_after_view (compare);
  FbProfilePanel *panel = fb_window_get_profile_panel (window);
  GtkWidget *code = GTK_WIDGET (fb_window_get_code_view (window));
  FbGraph *graph = fb_graph_view_get_graph (after);
  int open_height;

  /* A profile (the panel shows whether or not it paints) and a node's kernel code. */
  fb_window_open_profile (window, file);
  while (fb_window_get_profile (window) == NULL && fb_window_get_last_error (window) == NULL)
    g_main_context_iteration (NULL, TRUE);
  settle ();
  g_assert_null (fb_window_get_last_error (window));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (panel)));
  g_assert_true (fb_profile_panel_get_expanded (panel));
  g_assert_true (fb_graph_view_select_node (after, ((FbNode *) g_ptr_array_index (graph->nodes, 0))->id));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-kernel", NULL));
  settle ();
  draw_frames (GTK_WIDGET (window), 3);
  g_assert_true (gtk_widget_get_mapped (code));
  g_assert_cmpint (gtk_widget_get_height (code), >=, 120);
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (panel)), >=, 120);
  /* Both open, the graphs still hold the larger part of the height. */
  open_height = gtk_widget_get_height (GTK_WIDGET (compare));
  g_test_message ("content %d, graphs %d, panel %d, code %d", content_height (), open_height,
                  gtk_widget_get_height (GTK_WIDGET (panel)), gtk_widget_get_height (code));
  g_assert_cmpint (open_height, >=, content_height () * 45 / 100);

  /* Collapsed, the panel is its header and the graphs take the room. */
  fb_profile_panel_set_expanded (panel, FALSE);
  /* Until the panel's slide has ended: its height holds still. */
  for (int last = -1, frames = 0; frames < 120 && gtk_widget_get_height (GTK_WIDGET (panel)) != last; frames++)
    {
      last = gtk_widget_get_height (GTK_WIDGET (panel));
      draw_frames (GTK_WIDGET (window), 5);
    }
  g_test_message ("collapsed: graphs %d, panel %d", gtk_widget_get_height (GTK_WIDGET (compare)),
                  gtk_widget_get_height (GTK_WIDGET (panel)));
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (panel)), <, 100);
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (compare)), >, open_height + 60);
  /* Opened again, where it was. */
  fb_profile_panel_set_expanded (panel, TRUE);
  draw_frames (GTK_WIDGET (window), 30);
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (panel)), >=, 120);
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (compare)), >=, content_height () * 45 / 100);
  fb_window_clear_profile (window);
  settle ();
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 900);
  gtk_window_present (GTK_WINDOW (window));
  fb_window_open_sample (window);
  settle ();

  g_test_add_func ("/ui/window-layout/profile-menu", test_profile_menu);
  g_test_add_func ("/ui/window-layout/panes", test_panes);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  return status;
}
