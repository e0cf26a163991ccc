/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Hardware counters per kernel through perf_event_open: one counter group (cycles,
 * instructions, last-level cache misses) per thread of the pool, each opened by its own
 * thread inside an OpenMP region so that it counts that thread; the kernels' parallel phases
 * and oneDNN's primitives run on those same OpenMP threads. Reading a group is one read(2),
 * so a kernel costs two reads per thread more with counters on. Where the kernel refuses
 * (perf_event_paranoid, a container or a virtual machine without a PMU) opening fails and the
 * caller says so in the profile. */
#include "fb-profile-private.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <omp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct _FbPerf {
  guint    n_threads;
  int     *fds;                 /* n_threads x FB_PERF_N_EVENTS, the group leader first */
  guint64 *start;               /* n_threads x FB_PERF_N_EVENTS, at the last begin */
};

static const struct {
  guint64 hardware, software;   /* the config of each kind of event set */
  const char *what;
} events[FB_PERF_N_EVENTS] = {
  { PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_SW_TASK_CLOCK, "cycles" },
  { PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_SW_PAGE_FAULTS, "instructions" },
  { PERF_COUNT_HW_CACHE_MISSES, PERF_COUNT_SW_CONTEXT_SWITCHES, "last-level cache misses" },
};

static int
open_event (guint e, gboolean software, int group)
{
  struct perf_event_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = software ? PERF_TYPE_SOFTWARE : PERF_TYPE_HARDWARE;
  attr.config = software ? events[e].software : events[e].hardware;
  attr.read_format = PERF_FORMAT_GROUP;
  attr.exclude_kernel = 1;      /* allowed at perf_event_paranoid 2 */
  attr.exclude_hv = 1;
  return (int) syscall (SYS_perf_event_open, &attr, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

static const char *
why_refused (int err, guint e)
{
  switch (err)
    {
    case EACCES:
    case EPERM:
      return "the kernel does not allow this process to count events (perf_event_paranoid, "
             "or a container's seccomp policy)";
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
      return "this CPU exposes no hardware performance counters here (a virtual machine or "
             "container without a PMU)";
    case ENOSYS:
      return "the kernel has no perf_event_open";
    default:
      return NULL;
    }
}

FbPerf *
_fb_perf_open (guint n_threads, gboolean software, char **why)
{
  g_return_val_if_fail (why != NULL, NULL);
  FbPerf *perf = g_new0 (FbPerf, 1);
  n_threads = MAX (n_threads, 1);
  perf->n_threads = n_threads;
  perf->fds = g_new (int, n_threads * FB_PERF_N_EVENTS);
  perf->start = g_new0 (guint64, n_threads * FB_PERF_N_EVENTS);
  for (guint i = 0; i < n_threads * FB_PERF_N_EVENTS; i++)
    perf->fds[i] = -1;
  g_autofree int *errors = g_new0 (int, n_threads * FB_PERF_N_EVENTS);
  int opened = 0;

#pragma omp parallel num_threads (n_threads) reduction (+:opened)
  {
    int t = omp_get_thread_num ();
    for (guint e = 0; e < FB_PERF_N_EVENTS; e++)
      {
        int leader = perf->fds[t * FB_PERF_N_EVENTS];
        int fd = open_event (e, software, e == 0 ? -1 : leader);
        if (fd < 0)
          {
            errors[t * FB_PERF_N_EVENTS + e] = errno;
            break;
          }
        perf->fds[t * FB_PERF_N_EVENTS + e] = fd;
      }
    opened += perf->fds[t * FB_PERF_N_EVENTS + FB_PERF_N_EVENTS - 1] >= 0;
  }
  omp_set_num_threads (1);
  if ((guint) opened == n_threads)
    {
      *why = NULL;
      return perf;
    }
  for (guint i = 0; i < n_threads * FB_PERF_N_EVENTS; i++)
    if (errors[i] != 0)
      {
        const char *reason = why_refused (errors[i], i % FB_PERF_N_EVENTS);
        *why = g_strdup_printf ("no hardware counters: perf_event_open refused %s (%s)%s%s",
                                events[i % FB_PERF_N_EVENTS].what, g_strerror (errors[i]),
                                reason ? ": " : "", reason ? reason : "");
        break;
      }
  if (*why == NULL)
    *why = g_strdup ("no hardware counters: perf_event_open did not open them on every thread");
  _fb_perf_close (perf);
  return NULL;
}

void
_fb_perf_close (FbPerf *perf)
{
  if (perf == NULL)
    return;
  for (guint i = 0; i < perf->n_threads * FB_PERF_N_EVENTS; i++)
    if (perf->fds[i] >= 0)
      close (perf->fds[i]);
  g_free (perf->fds);
  g_free (perf->start);
  g_free (perf);
}

/* The group of thread t into values; FALSE when the read fails. */
static gboolean
read_group (FbPerf *perf, guint t, guint64 *values)
{
  guint64 buf[1 + FB_PERF_N_EVENTS];
  ssize_t n = read (perf->fds[t * FB_PERF_N_EVENTS], buf, sizeof buf);
  if (n != (ssize_t) sizeof buf || buf[0] != FB_PERF_N_EVENTS)
    return FALSE;
  memcpy (values, buf + 1, sizeof (guint64) * FB_PERF_N_EVENTS);
  return TRUE;
}

void
_fb_perf_begin (FbPerf *perf)
{
  for (guint t = 0; t < perf->n_threads; t++)
    if (!read_group (perf, t, perf->start + t * FB_PERF_N_EVENTS))
      memset (perf->start + t * FB_PERF_N_EVENTS, 0, sizeof (guint64) * FB_PERF_N_EVENTS);
}

void
_fb_perf_end (FbPerf *perf, double *sums)
{
  for (guint t = 0; t < perf->n_threads; t++)
    {
      guint64 now[FB_PERF_N_EVENTS];
      if (!read_group (perf, t, now))
        continue;
      for (guint e = 0; e < FB_PERF_N_EVENTS; e++)
        sums[e] += (double) (now[e] - perf->start[t * FB_PERF_N_EVENTS + e]);
    }
}
