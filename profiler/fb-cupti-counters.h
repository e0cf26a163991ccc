/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Hardware counters per kernel from CUPTI's range profiler (auto ranges: one range a kernel;
 * user replay: the caller launches the same kernels once per pass, with the caches as its own
 * kernels leave them): DRAM bytes read and written, the kernel's duration and its SM
 * throughput. A separate run after the timing run, since counting serializes the kernels.
 *
 * The decoded counter data can be saved with what reading it needs (the chip's name and its
 * counter availability) and evaluated again on a machine without a GPU, through the same
 * CUPTI host calls: the suite checks the evaluation on counters of a real run. */
#pragma once

#include "fb-cupti.h"

G_BEGIN_DECLS

typedef struct {
  char      *range;              /* the range's name as CUPTI gives it */
  double     dram_read_bytes;    /* dram__bytes_read.sum */
  double     dram_write_bytes;   /* dram__bytes_write.sum */
  double     duration_ns;        /* gpu__time_duration.sum */
  double     sm_throughput;      /* sm__throughput.avg.pct_of_peak_sustained_elapsed, 0..1 */
} FbGpuCounters;

typedef struct _FbCuptiCounters FbCuptiCounters;

/* An array of FbGpuCounters that frees the names with the entries. */
GArray          *fb_gpu_counters_array_new     (void);

/* Starts counting the kernels launched next on context (a CUcontext) of the device with that
 * index, for up to max_ranges kernels. FB_PROFILE_ERROR_UNAVAILABLE saying why counters cannot
 * be had: no permission, another profiler attached, an unsupported GPU, no CUPTI. */
FbCuptiCounters *fb_cupti_counters_start       (gpointer context, guint device_index,
                                                guint max_ranges, GError **error);
/* The same with ranges the caller opens and closes (fb_cupti_counters_push and _pop) around
 * any work, CUDA graph replays included: each range counts everything the device did inside
 * it. Outside a range nothing is counted. */
FbCuptiCounters *fb_cupti_counters_start_user  (gpointer context, guint device_index,
                                                guint max_ranges, GError **error);
gboolean         fb_cupti_counters_push        (FbCuptiCounters *counters, const char *name,
                                                GError **error);
gboolean         fb_cupti_counters_pop         (FbCuptiCounters *counters, GError **error);
/* Ends the pass whose kernels were launched since start (or since the last call): 1 when CUPTI
 * needs the same kernels launched again (the next pass has begun), 0 when it has every pass,
 * -1 with error set. */
int              fb_cupti_counters_end_pass    (FbCuptiCounters *counters, GError **error);
/* Stops (ending the pass, which must be the last), decodes and evaluates: FbGpuCounters per
 * kernel in launch order. When save_path is given the decoded data is also written there
 * (atomically). Frees counters either way. */
GArray          *fb_cupti_counters_stop        (FbCuptiCounters *counters, const char *save_path,
                                                GError **error);
/* Evaluates counter data saved by fb_cupti_counters_stop; needs CUPTI's host library but no
 * GPU. FB_PROFILE_ERROR_UNAVAILABLE without CUPTI, FB_PROFILE_ERROR_INVALID for a damaged
 * file. */
GArray          *fb_cupti_counters_replay_file (const char *path, GError **error);

G_END_DECLS
