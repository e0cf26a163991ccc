/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A/B between two profiles of one model: per original ONNX node, its time in one against the
 * other. Provenance makes the original nodes the one thing that two pipelines of a model share,
 * so this works whatever the toggles between the two did to the graph. */
#pragma once

#include "fb-profile.h"

G_BEGIN_DECLS

typedef struct {
  char   *name;       /* original node */
  double  delta_us;   /* now - before */
  double  before_us;
  double  now_us;
} FbProfileChange;

/* The nodes whose time changed, most gained first (gains: delta < 0) or most lost first
 * (delta > 0), at most max of them; a new GArray of FbProfileChange that frees its names. */
GArray *fb_profile_changes (const FbProfile *now,
                            const FbProfile *before,
                            gboolean         gains,
                            guint            max);

G_END_DECLS
