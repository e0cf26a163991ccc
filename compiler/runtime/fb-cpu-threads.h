/* SPDX-License-Identifier: GPL-3.0-or-later */
/* How many threads the cpu target runs on, and why: the one number the worker pool, OpenMP
 * (and with it oneDNN and the convolutions of our own) and the code generator all follow.
 *
 * Counting the processors online is wrong wherever users run: under `taskset -c 2,3` on a
 * 16-core server it gave 16 threads on 2 cores, and a GlobalAveragePool of 9 us took a median
 * of 5 ms while 14 spinning threads waited for a core. So, in this order: --threads (the
 * caller's request), FUSEBENCH_THREADS, then the processors this process may run on (its
 * affinity mask) cut to a cgroup's CPU quota (cgroup v2 cpu.max, v1 cpu.cfs_quota_us over
 * cpu.cfs_period_us, rounded up), which is what a container's `--cpus` sets. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  guint n;                      /* threads, 1 or more */
  gboolean asked;               /* n was asked for (--threads, FUSEBENCH_THREADS), not found */
  char  source[160];            /* where n came from, said in run's and profile's output */
} FbThreadCount;

/* The count for a request of requested threads (0: none, take the default). */
void   fb_thread_count_resolve  (guint requested, FbThreadCount *count);
/* fb_thread_count_resolve (0, ...)'s n. */
guint  fb_thread_count_default  (void);

/* The CPU quota of a cgroup, in CPUs (1.5 for "150000 100000"), or 0 when there is none:
 * self_cgroup is /proc/self/cgroup's text, fs_root where the cgroup file systems are mounted
 * (/sys/fs/cgroup). The tightest quota of the process's cgroup and its ancestors counts; a
 * container sees its own cgroup as the root. */
double fb_cgroup_cpu_quota      (const char *fs_root, const char *self_cgroup);

/* A split threshold from the environment variable variable (FUSEBENCH_SPLIT_MIN_WORK,
 * FUSEBENCH_CONV_SPLIT_US), to measure it on a machine without rebuilding: a positive number,
 * at most FB_SPLIT_TUNING_MAX (beyond any model's work: a loop's chunk size is derived from
 * it as a 64-bit integer); anything else, or no variable, gives fallback. */
#define FB_SPLIT_TUNING_MAX 1e15
double fb_split_tuning          (const char *variable, double fallback);

G_END_DECLS
