/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The ui library's entry point: call fb_ui_init () once GTK is initialized and before building
 * any of its widgets. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define FB_RESOURCE_PATH "/io/github/fusebench/Fusebench"

/* Initializes libadwaita, registers the GResource (templates, style sheet, sample model) and the
 * widget types that templates refer to by name. */
void fb_ui_init (void);

G_END_DECLS
