/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the window's tests share: waiting until the window has finished what it started, and
 * finding a widget in it. */
#pragma once

#include "fb-window.h"
#include "fb-run.h"

G_BEGIN_DECLS

/* Whether anything of window is still working: its passes or a profile, an export, the layout
 * of either pane, the code view's lowering. */
gboolean test_window_busy        (FbWindow *window);
/* Runs the main loop until nothing of window works and no event is pending. */
void     test_window_settle      (FbWindow *window);
/* The last stage of the run on screen (asserts there is one). */
FbStage *test_window_final_stage (FbWindow *window);

typedef gboolean (*TestWidgetMatch) (GtkWidget *widget, gconstpointer data);
/* The first widget under root (root included, depth first) that match accepts, or NULL. */
GtkWidget *test_widget_find      (GtkWidget *root, TestWidgetMatch match, gconstpointer data);

G_END_DECLS
