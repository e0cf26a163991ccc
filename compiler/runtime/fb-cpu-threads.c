/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cpu target's thread count (see fb-cpu-threads.h). */
#include "fb-cpu-threads.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 256

/* The quota in one cgroup folder: v2's cpu.max ("max 100000" or "QUOTA PERIOD"), else v1's
 * cfs files (a quota of -1 is none). 0 when none is set there. */
static double
folder_quota (const char *dir)
{
  g_autofree char *max_path = g_build_filename (dir, "cpu.max", NULL);
  g_autofree char *text = NULL;
  if (g_file_get_contents (max_path, &text, NULL, NULL))
    {
      char quota[32] = "";
      double period = 0;
      if (sscanf (text, "%31s %lf", quota, &period) == 2 && strcmp (quota, "max") != 0 &&
          period > 0 && g_ascii_strtod (quota, NULL) > 0)
        return g_ascii_strtod (quota, NULL) / period;
      return 0;
    }
  g_autofree char *quota_path = g_build_filename (dir, "cpu.cfs_quota_us", NULL);
  g_autofree char *period_path = g_build_filename (dir, "cpu.cfs_period_us", NULL);
  g_autofree char *quota_text = NULL, *period_text = NULL;
  if (!g_file_get_contents (quota_path, &quota_text, NULL, NULL) ||
      !g_file_get_contents (period_path, &period_text, NULL, NULL))
    return 0;
  double quota = g_ascii_strtod (quota_text, NULL), period = g_ascii_strtod (period_text, NULL);
  return quota > 0 && period > 0 ? quota / period : 0;
}

/* The tightest quota from mount/path up to mount itself. */
static double
path_quota (const char *mount, const char *path)
{
  double best = 0;
  g_autofree char *rel = g_strdup (path);
  for (;;)
    {
      g_autofree char *dir = g_build_filename (mount, rel, NULL);
      double q = folder_quota (dir);
      if (q > 0 && (best == 0 || q < best))
        best = q;
      char *slash = strrchr (rel, '/');
      if (slash == NULL || rel[0] == '\0')
        break;
      *slash = '\0';
    }
  return best;
}

double
fb_cgroup_cpu_quota (const char *fs_root, const char *self_cgroup)
{
  g_return_val_if_fail (fs_root != NULL, 0);
  if (self_cgroup == NULL)
    return 0;
  double best = 0;
  g_auto(GStrv) lines = g_strsplit (self_cgroup, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      /* "ID:CONTROLLERS:PATH"; v2 is "0::PATH", v1 names cpu among its controllers. */
      g_auto(GStrv) f = g_strsplit (*l, ":", 3);
      if (g_strv_length (f) != 3 || f[2][0] != '/')
        continue;
      double q = 0;
      if (f[1][0] == '\0')
        q = path_quota (fs_root, f[2]);
      else
        {
          g_auto(GStrv) controllers = g_strsplit (f[1], ",", -1);
          if (!g_strv_contains ((const char *const *) controllers, "cpu"))
            continue;
          /* Mounted as cpu,cpuacct (with a cpu link) or cpu alone. */
          g_autofree char *joined = g_build_filename (fs_root, f[1], NULL);
          g_autofree char *alone = g_build_filename (fs_root, "cpu", NULL);
          q = path_quota (g_file_test (joined, G_FILE_TEST_IS_DIR) ? joined : alone, f[2]);
        }
      if (q > 0 && (best == 0 || q < best))
        best = q;
    }
  return best;
}

/* The processors of OpenMP's places when OpenMP spreads its threads over them (OMP_PROC_BIND
 * true, close or spread, with OMP_PLACES), else 0. Binding starts when OpenMP loads, before any
 * of ours runs: it pins the initial thread to the first place, so the affinity mask then says
 * one processor (a 2-core machine ran ResNet-50 at 46 ms on one thread against 25 on two). The
 * places are made from the mask the process started with. Binding to the primary thread's
 * place (master, primary) puts the whole team there: then the pinned mask is the count (two
 * threads on its one processor ran ResNet-50 at 496 ms). */
static int
bound_places_processors (void)
{
#ifdef _OPENMP
  omp_proc_bind_t bind = omp_get_proc_bind ();
  if (bind != omp_proc_bind_true && bind != omp_proc_bind_close && bind != omp_proc_bind_spread)
    return 0;
  cpu_set_t set;
  CPU_ZERO (&set);
  for (int p = 0; p < omp_get_num_places (); p++)
    {
      int n = omp_get_place_num_procs (p);
      if (n <= 0)
        continue;
      int *ids = g_new (int, n);
      omp_get_place_proc_ids (p, ids);
      for (int i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < CPU_SETSIZE)
          CPU_SET (ids[i], &set);
      g_free (ids);
    }
  return CPU_COUNT (&set);
#else
  return 0;
#endif
}

/* A positive count from text, or 0. */
static guint
parse_count (const char *text)
{
  guint64 v = 0;
  if (text == NULL || !g_ascii_string_to_unsigned (text, 10, 1, MAX_THREADS, &v, NULL))
    return 0;
  return (guint) v;
}

void
fb_thread_count_resolve (guint requested, FbThreadCount *count)
{
  g_return_if_fail (count != NULL);
  if (requested > 0)
    {
      count->n = MIN (requested, MAX_THREADS);
      count->asked = TRUE;
      g_snprintf (count->source, sizeof count->source, "--threads");
      return;
    }
  const char *env = g_getenv ("FUSEBENCH_THREADS");
  if (parse_count (env) > 0)
    {
      count->n = parse_count (env);
      count->asked = TRUE;
      g_snprintf (count->source, sizeof count->source, "FUSEBENCH_THREADS");
      return;
    }
  count->asked = FALSE;
  long online = sysconf (_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  int allowed = sched_getaffinity (0, sizeof set, &set) == 0 ? CPU_COUNT (&set) : 0;
  int places = bound_places_processors ();
  const char *mask = "the affinity mask";
  if (places > allowed)
    {
      allowed = places;
      mask = "OpenMP's places (OMP_PROC_BIND pins this thread to one)";
    }
  g_autofree char *self = NULL;
  double quota = 0;
  if (g_file_get_contents ("/proc/self/cgroup", &self, NULL, NULL))
    quota = fb_cgroup_cpu_quota ("/sys/fs/cgroup", self);
  guint n = allowed > 0 ? (guint) allowed : (guint) MAX (online, 1);
  g_autofree char *ignored = NULL;
  if (env != NULL && env[0] != '\0')
    ignored = g_strdup_printf ("; FUSEBENCH_THREADS=%.16s is no count 1..%d, ignored", env,
                               MAX_THREADS);
  else
    ignored = g_strdup ("");
  if (quota > 0 && (guint) ceil (quota) < n)
    {
      n = (guint) ceil (quota);
      g_snprintf (count->source, sizeof count->source, "the cgroup's CPU quota of %.2f%s", quota,
                  ignored);
    }
  else if (allowed > 0 && allowed < online)
    g_snprintf (count->source, sizeof count->source, "%s: %d of %ld processors%s", mask, allowed,
                online, ignored);
  else if (places > 0)
    g_snprintf (count->source, sizeof count->source, "one per processor of %s%s", mask, ignored);
  else
    g_snprintf (count->source, sizeof count->source, "one per processor%s", ignored);
  count->n = CLAMP (n, 1, MAX_THREADS);
}

guint
fb_thread_count_default (void)
{
  FbThreadCount count;
  fb_thread_count_resolve (0, &count);
  return count.n;
}

double
fb_split_tuning (const char *variable, double fallback)
{
  const char *v = g_getenv (variable);
  char *end = NULL;
  double x = v != NULL ? g_ascii_strtod (v, &end) : 0;
  /* The whole value a number: "64k" would otherwise read as 64. NaN fails every comparison. */
  if (v == NULL || end == v || *end != '\0' || !(x > 0))
    return fallback;
  return MIN (x, FB_SPLIT_TUNING_MAX);
}
