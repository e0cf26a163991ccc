/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What every executor checks before a run: the tensors fed are the ones the plan was compiled
 * for. */
#pragma once

#include "fb-kernel.h"

G_BEGIN_DECLS

/* Whether inputs (FbTensor*, graph input order) fit plan: as many as its inputs, each of the
 * element type and shape it was compiled for (inputs given as constants are not read); FALSE
 * with an FB_RUNTIME_ERROR_INPUT error naming the first that does not. */
gboolean fb_plan_check_inputs (const FbPlan *plan, GPtrArray *inputs, GError **error);

G_END_DECLS
