/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Waiting on the window in its tests, and finding widgets in it (fb-test-window.h). */
#include "fb-test-window.h"
#include "fb-window-export.h"

gboolean
test_window_busy (FbWindow *window)
{
  FbCompareView *compare = fb_window_get_compare_view (window);

  return fb_window_is_busy (window) || fb_window_is_exporting (window)
         || fb_graph_view_is_busy (fb_compare_view_get_before_view (compare))
         || fb_graph_view_is_busy (fb_compare_view_get_after_view (compare))
         || fb_code_view_is_busy (fb_window_get_code_view (window));
}

void
test_window_settle (FbWindow *window)
{
  while (test_window_busy (window))
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}

FbStage *
test_window_final_stage (FbWindow *window)
{
  FbRun *run = fb_window_get_run (window);

  g_assert_nonnull (run);
  return fb_run_get_stage (run, fb_run_n_stages (run) - 1);
}

GtkWidget *
test_widget_find (GtkWidget *root, TestWidgetMatch match, gconstpointer data)
{
  if (match (root, data))
    return root;
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = test_widget_find (child, match, data);
      if (found != NULL)
        return found;
    }
  return NULL;
}
