/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The driver's compiled cubin of every PTX module, kept on disk per device: the driver turns
 * PTX into machine code each time a module is made (gpt2_struct's 39 modules take it seconds),
 * and the same bundle on the same GPU and driver gives the same cubin. The cache key is the
 * SHA-256 of the device's name, compute capability and driver version with the PTX text, so a
 * new driver or another GPU compiles afresh. Each file carries its cubin's length and SHA-256,
 * checked before the driver sees a byte (the driver crashed on a truncated cubin): a damaged
 * file, or one the driver refuses, is compiled again and replaced. Files are written
 * atomically (a temporary file renamed into place), so concurrent runs never read half one.
 *
 * The folder is $FUSEBENCH_CUBIN_CACHE, else fusebench/cubin under the user's cache folder
 * ($XDG_CACHE_HOME, ~/.cache); FUSEBENCH_CUBIN_CACHE=off turns the cache off. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  char   *dir;          /* NULL: the cache is off */
  char   *device_tag;   /* what the key adds to the PTX: device, sm_XY, driver version */
  guint   hits, compiled, damaged, refused, unwritable;
  guint   unbudgeted;   /* of compiled: again without the register budget, which spilled */
  double  compile_ms;   /* spent compiling PTX this time */
  char   *write_error;  /* the first failed write's reason, for the run's description */
} FbCubinCache;

/* The cache of device_tag's cubins (see above for the folder); never fails: a folder that
 * cannot be made shows at the first write. */
void    fb_cubin_cache_init     (FbCubinCache *cache, const char *device_tag);
void    fb_cubin_cache_clear    (FbCubinCache *cache);
/* The file that holds ptx's cubin for this device (NULL when the cache is off). */
char   *fb_cubin_cache_path     (const FbCubinCache *cache, const char *ptx);
/* ptx's cached cubin, or NULL (not cached, unreadable, damaged: counted, or the cache is
 * off). */
GBytes *fb_cubin_cache_lookup   (FbCubinCache *cache, const char *ptx);
/* Keeps cubin as ptx's; a failure is counted and remembered, never fatal. */
void    fb_cubin_cache_store    (FbCubinCache *cache, const char *ptx, const void *cubin,
                                 gsize size);
/* One line for the run's description: "cubin cache: 3 hits, 1 compiled (120 ms)". */
char   *fb_cubin_cache_describe (const FbCubinCache *cache);

G_END_DECLS
