/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The layers of the sources, checked (fb-layering.c): every include and every call of a
 * function declared in a header runs down the layers DESIGN.md draws (ir, then import and
 * interp, then export, passes and lower, codegen, runtime, the targets, the driver, profiler,
 * ui, app), no folder but the backend table's reaches into a target's folder, and no target's
 * name is compared outside the targets. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether a file of folder from may use folder to (both relative to the top, as
 * "compiler/lower"). */
gboolean   fb_layering_allowed (const char *from, const char *to);
/* Every violation in the sources under top (compiler/, profiler/, ui/, app/), one line each
 * ("compiler/lower/fb-lower.c:12: includes fb-cpu.h of compiler/targets/cpu"). */
GPtrArray *fb_layering_check   (const char *top);

G_END_DECLS
