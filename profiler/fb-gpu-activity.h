/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the GPU did during a profiled run, as plain records: every kernel, copy and memset with
 * its device interval and the host call that launched it. CUPTI's activity records are turned
 * into these once (fb-cupti.c); everything after that (utilization, the idle-time breakdown,
 * the diagnosis, the per-kernel figures of the profile) reads only these, so it runs and is
 * tested on machines without a GPU, on records kept from a real run. */
#pragma once

#include "fb-profile.h"

G_BEGIN_DECLS

typedef enum {
  FB_GPU_KERNEL,
  FB_GPU_MEMCPY,
  FB_GPU_MEMSET,
} FbGpuActivityKind;

typedef enum {
  FB_GPU_COPY_OTHER,
  FB_GPU_COPY_HTOD,
  FB_GPU_COPY_DTOH,
  FB_GPU_COPY_DTOD,
} FbGpuCopyKind;

typedef struct {
  FbGpuActivityKind kind;
  guint64    start_ns;           /* on the device, CUPTI's clock */
  guint64    end_ns;
  guint64    api_start_ns;       /* the host call that launched it (a kernel launch, a graph
                                    launch, a copy), same clock; 0 when not recorded */
  guint64    api_end_ns;
  guint32    correlation;        /* CUPTI's id tying it to that host call */
  guint64    owner;              /* the profile kernel that launched it, as its id + 1; 0 unknown */
  guint32    stream;
  guint64    graph_node;         /* nonzero when it ran as a node of a CUDA graph */
  guint32    grid[3];
  guint32    block[3];
  guint32    registers;          /* per thread */
  guint32    shared_bytes;       /* static plus dynamic, per block */
  guint64    bytes;              /* copies and memsets */
  FbGpuCopyKind copy_kind;
  char      *name;               /* the kernel's function name; NULL for copies */
} FbGpuActivity;

/* An array of FbGpuActivity that frees the names with the records. */
GArray    *fb_gpu_activity_array_new  (void);
/* Sorts by device start time (then end time). */
void       fb_gpu_activity_sort       (GArray *activities);

/* Where one inference's wall time went on the GPU. Idle is what no kernel covers; it is split
 * as Holistic Trace Analysis splits it: waiting for the host to launch the next work, waiting
 * between dependent kernels that were already queued (launch latency), copies between host
 * and device while no kernel runs, and what the records cannot explain. */
typedef struct {
  double     wall_us;            /* the inference, as the host timed it */
  double     kernel_busy_us;     /* union of kernel intervals */
  double     copy_us;            /* copy and memset time no kernel overlaps */
  guint      launches;           /* kernels per inference */
  guint      copies;             /* copies and memsets per inference */
  guint      n_gaps;             /* idle intervals between consecutive work on the device */
  double     gap_total_us;       /* their total */
  double     gap_largest_us;
  guint      n_small_gaps;       /* gaps under FB_GPU_SMALL_GAP_US */
  double     small_gaps_us;
  double     host_wait_us;       /* idle until the host's launch call (leading and trailing
                                    idle of the inference included) */
  double     kernel_wait_us;     /* idle after the next work was already launched */
  double     other_wait_us;      /* idle the records cannot place (no host call recorded) */
  gboolean   graph;              /* the kernels ran as a CUDA graph */
  double     replay_launch_us;   /* a graph replay: the idle before its first work (the
                                    replay's launch, under the tracer mostly the tracer's own
                                    start), counted apart from the steady state's gaps */
  guint      short_kernels;      /* kernels that ran under FB_GPU_SMALL_GAP_US */
  gboolean   untraced;           /* wall, busy and idle are the untraced replays' (below) */
  double     noise_us;           /* the wall's own spread between replays (interquartile) */
  double     overhead_us;        /* what the tracer added to a replay */
  double     cause_floor_us;     /* untraced: the least a cause of idle must take to be more than
                                    the noise and more than the tracer's overhead could have put
                                    into the traced split it was taken from (that overhead in the
                                    untraced idle's scale) */
} FbGpuUtilization;

#define FB_GPU_SMALL_GAP_US 5.0

/* The utilization of one inference whose device work is activities (sorted or not) and whose
 * host-measured interval is [begin_ns, end_ns] on CUPTI's clock (0, 0: from the first start to
 * the last end). */
FbGpuUtilization fb_gpu_utilization (const GArray *activities, guint64 begin_ns, guint64 end_ns);

/* The utilization of the replays the tracer did not watch: traced is the median traced
 * inference's; wall_us and noise_us the untraced replays' median and interquartile range
 * between CUDA events; replay_launch_us what a replay alone takes more than one among replays
 * launched back to back (0 when launched kernel by kernel); traced_wall_us the traced replays'
 * median between the same events. The kernels' busy time is the traced one (their durations
 * barely move under the tracer; the gaps around them do), at most the untraced wall less the
 * launch; the idle left is split in the traced inference's proportions. */
FbGpuUtilization fb_gpu_utilization_untraced (const FbGpuUtilization *traced, double wall_us,
                                              double noise_us, double replay_launch_us,
                                              double traced_wall_us);

/* The lines a performance engineer acts on, appended to lines (char*): how busy the GPU was,
 * then the main cause of the idle time with a number and the toggle that acts on it. A cause is
 * a finding only when its time exceeds both the measurement's noise and the tracer's overhead
 * (u->noise_us, u->overhead_us; untraced, u->cause_floor_us): under those it may be the
 * measuring itself. The idle of untraced replays is real beyond their noise, whatever the
 * tracer adds elsewhere. */
void       fb_gpu_utilization_diagnose (const FbGpuUtilization *u, GPtrArray *lines);

/* The activities of each inference: the ones whose host call (or, without one, whose start)
 * lies in [begin_ns[i], end_ns[i]]; a GPtrArray of n new arrays of FbGpuActivity. */
GPtrArray *fb_gpu_split_inferences    (const GArray *activities, const guint64 *begin_ns,
                                       const guint64 *end_ns, guint n);

/* Gives the kernels of replay (a CUDA graph's replay, whose records all name one host call)
 * the owners the same kernels had in reference (a run launched kernel by kernel with each
 * launch tagged): by position when both ran the same sequence of kernel names, else by the
 * n-th occurrence of each name. Returns how many kernels of replay got no owner. */
guint      fb_gpu_match_owners        (const GArray *reference, GArray *replay);

/* Fills the per-kernel times of profile (median, min and max over the inferences, calls per
 * inference), busy_ms, wall_ms and the timeline (the median inference's; lanes are streams)
 * from iterations (GArray of FbGpuActivity per inference, owners set) with the host-measured
 * interval of each (begin_ns[i], end_ns[i]). Kernels of the profile that launched nothing keep
 * zero times. Returns the utilization of the median inference. */
FbGpuUtilization fb_gpu_profile_fill  (FbProfile *profile, GPtrArray *iterations,
                                       const guint64 *begin_ns, const guint64 *end_ns);

G_END_DECLS
