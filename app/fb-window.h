/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The workbench window: the stage list, the before/after compare view and the inspector, the
 * code view of the selected node's kernel, the pipeline toggles, and the model it shows.
 * fb-window.c holds the widgets and their wiring, fb-window-actions.c the actions,
 * fb-window-load.c importing models and running the pipeline, fb-window-kernel.c the kernel of
 * the selection. */
#pragma once

#include "fb-application.h"
#include "fb-code-view.h"
#include "fb-compare-view.h"
#include "fb-node-inspector.h"
#include "fb-profile-panel.h"
#include "fb-runner.h"
#include "fb-stage-list.h"

G_BEGIN_DECLS

#define FB_TYPE_WINDOW (fb_window_get_type ())
G_DECLARE_FINAL_TYPE (FbWindow, fb_window, FB, WINDOW, AdwApplicationWindow)

FbWindow        *fb_window_new               (FbApplication *application);
/* Loads a model file in a worker thread, then runs the pipeline over it. */
void             fb_window_open_file         (FbWindow      *self,
                                              GFile         *file);
/* Loads the sample model bundled in the application. */
void             fb_window_open_sample       (FbWindow      *self);
/* TRUE while a model loads or the pipeline runs (the "busy" property). */
gboolean         fb_window_is_busy           (FbWindow      *self);
/* The run on display, or NULL. */
FbRun           *fb_window_get_run           (FbWindow      *self);
/* The last error shown to the user, or NULL. */
const char      *fb_window_get_last_error    (FbWindow      *self);
FbStageList     *fb_window_get_stage_list    (FbWindow      *self);
FbCompareView   *fb_window_get_compare_view  (FbWindow      *self);
FbNodeInspector *fb_window_get_inspector     (FbWindow      *self);
/* The code view of the selected node's kernel (Ctrl+K), hidden until first asked for. */
FbCodeView      *fb_window_get_code_view     (FbWindow      *self);

/* Opens a profile file (made here or elsewhere, e.g. on a GPU server) in a worker thread and
 * paints it when it was recorded for the model and toggles on screen; otherwise says why not
 * (fb_window_get_last_error) and paints nothing. */
void             fb_window_open_profile      (FbWindow      *self,
                                              GFile         *file);
/* The profile on screen (opened or made), painted or not; NULL when none. */
FbProfile       *fb_window_get_profile       (FbWindow      *self);
/* The profile the one on screen is compared with (A/B), when it is painted so. */
FbProfile       *fb_window_get_previous_profile (FbWindow   *self);
gboolean         fb_window_is_profile_painted(FbWindow      *self);
void             fb_window_clear_profile     (FbWindow      *self);
FbProfilePanel  *fb_window_get_profile_panel (FbWindow      *self);
/* The eager baseline preset of the Profile menu: fusion passes off (the stage list's boxes) and
 * profiles launched kernel by kernel; off again turns the fusions back on. */
void             fb_window_set_eager_baseline (FbWindow     *self,
                                               gboolean      eager);
gboolean         fb_window_get_eager_baseline (FbWindow     *self);
/* The Input Shapes dialog (win.input-shapes) while it is open, else NULL. */
GtkWindow       *fb_window_get_input_shapes_dialog (FbWindow *self);

G_END_DECLS
