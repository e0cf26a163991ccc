/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The memory plan every target's executor runs on: one arena, each activation at an offset. */
#pragma once

#include "fb-kernel.h"

G_BEGIN_DECLS

/* Lays out the arena of plan (fb_plan_buffer offsets, plan->arena_bytes). */
void fb_plan_layout_memory (FbPlan *plan);

G_END_DECLS
