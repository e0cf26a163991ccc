/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the live recorder (fb-cupti-live.c) shares with the record file and its conversion
 * (fb-cupti.c). */
#pragma once

#include "fb-cupti.h"

/* Appends one record as the saved file holds it: kind, size, bytes, the kernel's name. */
void     _fb_cupti_append_raw   (GByteArray *raw, guint32 kind, const void *record, guint32 size,
                                 const char *name);
/* Raw records (no header) into activities appended to out, sorted by start. */
gboolean _fb_cupti_convert_raw  (const guint8 *data, gsize len, const char *what, GArray *out,
                                 GError **error);
/* The saved file's header: the magic and this build's record sizes. */
void     _fb_cupti_write_header (GByteArray *out);

/* Opens CUPTI (the FUSEBENCH_CUPTI path, the loader's path, the CUDA toolkit's folders);
 * FB_PROFILE_ERROR_UNAVAILABLE naming where it looked. Only where CUPTI's headers were. */
void    *_fb_cupti_open_library (GError **error);
