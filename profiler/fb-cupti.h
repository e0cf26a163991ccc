/* SPDX-License-Identifier: GPL-3.0-or-later */
/* CUPTI's Activity API, opened at run time with dlopen: every kernel, copy and memset of a
 * profiled run and the driver calls that launched them, each tied to the profile kernel that
 * launched it through an external correlation id the runtime pushes around its launches.
 *
 * The raw records are kept as CUPTI delivered them (plus each kernel's name) and converted into
 * FbGpuActivity (fb-gpu-activity.h) in one place, both for a live run and for records saved to
 * a file on a GPU host and replayed on a machine without one: the suite checks the conversion
 * on records of a real run. */
#pragma once

#include "fb-gpu-activity.h"

G_BEGIN_DECLS

typedef struct _FbCupti FbCupti;

/* Whether this build can talk to CUPTI at all (it was built with the CUDA toolkit's CUPTI
 * headers); when not, fb_cupti_start says so. */
gboolean   fb_cupti_available         (void);

/* Opens CUPTI and starts recording. FB_PROFILE_ERROR_UNAVAILABLE saying why it cannot: the
 * library was not found (naming where it looked), another profiler holds CUPTI (Nsight Compute
 * or Systems attached: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), no permission, or a
 * recording of ours is already running. Call before the CUDA context is made where possible. */
FbCupti   *fb_cupti_start             (GError **error);
/* Launches between push and pop are owned by profile kernel owner - 1 (owner is id + 1). */
void       fb_cupti_push_owner        (FbCupti *cupti, guint64 owner);
void       fb_cupti_pop_owner         (FbCupti *cupti);
/* CUPTI's clock, the one its records are stamped with, in ns. */
guint64    fb_cupti_timestamp         (FbCupti *cupti);
/* Flushes CUPTI and converts every record since the start (or the last take) into activities
 * (sorted by start; owners and host call times filled in). *dropped (may be NULL) receives how
 * many records CUPTI dropped. */
GArray    *fb_cupti_take              (FbCupti *cupti, guint *dropped, GError **error);
/* Also writes the raw records that take converts to path (atomically), for a fixture. */
void       fb_cupti_set_record_path   (FbCupti *cupti, const char *path);
/* Stops recording and releases CUPTI. */
void       fb_cupti_stop              (FbCupti *cupti);

/* The activities of records saved by fb_cupti_set_record_path; FB_PROFILE_ERROR_INVALID for a
 * damaged file or one written by a CUPTI whose record layout this build does not know. */
GArray    *fb_cupti_replay_file       (const char *path, GError **error);

G_END_DECLS
