/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Loading kernel objects into this process with ORC's LLJIT. The math library's functions
 * (dnnl_sgemm, cblas_sgemm, libm) are bound by address, so nothing depends on what the dynamic linker
 * happened to export. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _FbJit FbJit;

/* The signature of every compiled phase. */
typedef void (*FbPhaseFn) (void **args, int64_t begin, int64_t end);

FbJit    *fb_jit_new        (GError **error);
void      fb_jit_free       (FbJit *jit);
/* Adds a relocatable object (the bytes are copied). */
gboolean  fb_jit_add_object (FbJit *jit, GBytes *object, GError **error);
/* The address of a function of the added objects; NULL with an error when it is absent. */
FbPhaseFn fb_jit_lookup     (FbJit *jit, const char *symbol, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbJit, fb_jit_free)

G_END_DECLS
