/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The workbench application: one window per model, the bundled sample when started without one,
 * recent files, the keyboard shortcuts and the about window. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define FB_TYPE_APPLICATION (fb_application_get_type ())
G_DECLARE_FINAL_TYPE (FbApplication, fb_application, FB, APPLICATION, AdwApplication)

#define FB_RECENT_MAX 10

FbApplication *fb_application_new             (GApplicationFlags flags);
/* Runs the workbench; main () hands over here when no subcommand is given. */
int            fb_application_run             (int               argc,
                                               char            **argv);
/* The settings, or NULL when the schema is not installed (then nothing is remembered). */
GSettings     *fb_application_get_settings    (FbApplication    *self);
/* Puts file first in the recent files (remembered in the settings when there are any). */
void           fb_application_add_recent      (FbApplication    *self,
                                               GFile            *file);
/* URIs, newest first; do not free. */
const char * const *fb_application_get_recent (FbApplication    *self);
/* A menu of the recent files, each opening through "win.open-uri". */
GMenuModel    *fb_application_get_recent_menu (FbApplication    *self);

G_END_DECLS
