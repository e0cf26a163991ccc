/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "fb-graph.h"

#include <stddef.h>

G_BEGIN_DECLS

FbArena *_fb_arena_new  (void);
void     _fb_arena_free (FbArena *arena);

G_END_DECLS
