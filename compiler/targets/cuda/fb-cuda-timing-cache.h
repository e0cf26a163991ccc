/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The ways the cuda target chose for its convolutions, kept in a file so that another process
 * runs the same kernels: cuDNN's engines are picked by timing them when a module is made, and
 * timings that differ (under Nsight Compute, on a busy GPU) pick other engines, so a profile and
 * a later run of the same model would not run the same kernels. FUSEBENCH_CUDA_TIMING_CACHE=FILE
 * reads FILE's choices before timing (a shape found there is not timed again) and writes the
 * module's choices back to it; unset, every module times afresh.
 *
 * The file is text: a first line naming the format, the device and the cuDNN version it was
 * timed with (a file of another device or library is not used), then one line a convolution
 * shape: key, way, algorithm, math type, engine and the choice as described when it was timed,
 * separated by tabs. It is written atomically (a temporary file renamed into place). */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* What was chosen for a convolution shape. */
typedef struct {
  int      way;          /* the convolution's way number (fb-cuda-conv.c) */
  int      algo, math;   /* legacy ways: cuDNN's algorithm and math type */
  int64_t  engine;       /* graph ways: cuDNN's global engine index, else -1 */
  char    *choice;       /* the choice as described when timed, the other ways' times included */
  gboolean from_file;    /* read from the timing cache rather than timed by this process */
} FbCudaConvChoice;

/* An empty table of choices: key (char *) -> FbCudaConvChoice *, both owned. */
GHashTable  *fb_cuda_conv_choices_new       (void);
/* FUSEBENCH_CUDA_TIMING_CACHE, or NULL when unset or empty. */
const char  *fb_cuda_timing_cache_path      (void);
/* Adds path's choices to choices. FALSE with G_FILE_ERROR_NOENT when there is no file yet, and
 * with G_IO_ERROR_INVALID_DATA, choices untouched, when the file was made for another device_tag
 * or is not such a file (the message names the file, and the line where it goes wrong). */
gboolean     fb_cuda_timing_cache_read      (const char *path, const char *device_tag,
                                             GHashTable *choices, GError **error);
/* Writes every choice to path atomically, for device_tag. */
gboolean     fb_cuda_timing_cache_write     (const char *path, const char *device_tag,
                                             GHashTable *choices, GError **error);

G_END_DECLS
