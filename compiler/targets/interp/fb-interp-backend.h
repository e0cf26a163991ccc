/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The reference interpreter as a target (fb-interp-backend.c). */
#pragma once

#include "fb-backend.h"

G_BEGIN_DECLS

const FbBackend *fb_backend_interp (void);

G_END_DECLS
