/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internals shared by the profiler's files; only profiler/ includes this header. */
#pragma once

#include "fb-profile.h"

G_BEGIN_DECLS

#define FB_PROFILE_FORMAT_NAME    "fusebench-profile"
#define FB_PROFILE_FORMAT_VERSION 1

/* The file's names of FbProfileKernelKind, in enum order, NULL-terminated. */
extern const char * const _fb_profile_kind_names[];

G_END_DECLS
