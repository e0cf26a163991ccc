/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GPU utilization of one inference from its activity records, the idle-time breakdown, the
 * one-line diagnosis, and matching the kernels of a CUDA graph's replay to the profile kernels
 * that launched them (fb-gpu-activity.h). */
#include "fb-gpu-activity.h"

#include <string.h>

static void
activity_clear (gpointer p)
{
  FbGpuActivity *a = p;
  g_free (a->name);
}

GArray *
fb_gpu_activity_array_new (void)
{
  GArray *a = g_array_new (FALSE, TRUE, sizeof (FbGpuActivity));
  g_array_set_clear_func (a, activity_clear);
  return a;
}

static int
compare_start (gconstpointer pa, gconstpointer pb)
{
  const FbGpuActivity *a = pa, *b = pb;
  if (a->start_ns != b->start_ns)
    return a->start_ns < b->start_ns ? -1 : 1;
  if (a->end_ns != b->end_ns)
    return a->end_ns < b->end_ns ? -1 : 1;
  return 0;
}

void
fb_gpu_activity_sort (GArray *activities)
{
  g_return_if_fail (activities != NULL);
  g_array_sort (activities, compare_start);
}

static int
compare_start_ptr (gconstpointer pa, gconstpointer pb)
{
  return compare_start (*(gconstpointer const *) pa, *(gconstpointer const *) pb);
}

/* Sorted pointers to the records, so that the caller's array keeps its order. */
static GPtrArray *
sorted_view (const GArray *activities)
{
  GPtrArray *v = g_ptr_array_sized_new (activities->len);
  for (guint i = 0; i < activities->len; i++)
    g_ptr_array_add (v, &g_array_index (activities, FbGpuActivity, i));
  g_ptr_array_sort (v, compare_start_ptr);
  return v;
}

static double
ns_to_us (guint64 ns)
{
  return ns / 1000.0;
}

/* The length of the union of the intervals of the records kind selects (all when kind < 0). */
static double
union_us (GPtrArray *sorted, int kind)
{
  guint64 total = 0, cur_start = 0, cur_end = 0;
  gboolean open = FALSE;
  for (guint i = 0; i < sorted->len; i++)
    {
      const FbGpuActivity *a = sorted->pdata[i];
      if (kind >= 0 && (int) a->kind != kind)
        continue;
      if (a->end_ns <= a->start_ns)
        continue;
      if (open && a->start_ns <= cur_end)
        {
          cur_end = MAX (cur_end, a->end_ns);
          continue;
        }
      if (open)
        total += cur_end - cur_start;
      cur_start = a->start_ns;
      cur_end = a->end_ns;
      open = TRUE;
    }
  if (open)
    total += cur_end - cur_start;
  return ns_to_us (total);
}

static void
add_gap (FbGpuUtilization *u, double gap_us)
{
  if (gap_us <= 0)
    return;
  u->n_gaps++;
  u->gap_total_us += gap_us;
  u->gap_largest_us = MAX (u->gap_largest_us, gap_us);
  if (gap_us < FB_GPU_SMALL_GAP_US)
    {
      u->n_small_gaps++;
      u->small_gaps_us += gap_us;
    }
}

FbGpuUtilization
fb_gpu_utilization (const GArray *activities, guint64 begin_ns, guint64 end_ns)
{
  FbGpuUtilization u = { 0 };
  g_return_val_if_fail (activities != NULL, u);

  g_autoptr(GPtrArray) sorted = sorted_view (activities);
  if (sorted->len == 0)
    {
      u.wall_us = end_ns > begin_ns ? ns_to_us (end_ns - begin_ns) : 0;
      u.host_wait_us = u.wall_us;
      return u;
    }

  guint64 first = G_MAXUINT64, last = 0;
  for (guint i = 0; i < sorted->len; i++)
    {
      const FbGpuActivity *a = sorted->pdata[i];
      first = MIN (first, a->start_ns);
      last = MAX (last, a->end_ns);
      if (a->kind == FB_GPU_KERNEL)
        {
          u.launches++;
          if (a->graph_node != 0)
            u.graph = TRUE;
          if (ns_to_us (a->end_ns - MIN (a->start_ns, a->end_ns)) < FB_GPU_SMALL_GAP_US)
            u.short_kernels++;
        }
      else
        u.copies++;
    }
  if (end_ns <= begin_ns)
    {
      begin_ns = first;
      end_ns = last;
    }
  begin_ns = MIN (begin_ns, first);
  end_ns = MAX (end_ns, last);
  u.wall_us = ns_to_us (end_ns - begin_ns);
  u.kernel_busy_us = union_us (sorted, FB_GPU_KERNEL);
  u.copy_us = MAX (0.0, union_us (sorted, -1) - u.kernel_busy_us);

  /* Before the first work and after the last, the GPU waits on the host: it had not launched
   * anything yet, or is done and the host is still collecting the results. The lead of a
   * graph replay is the replay's launch: without the tracer a replay overlaps the end of the
   * one before (ResNet-50 on the H200: 0.518 ms of kernels in a 0.509 ms inference), under it
   * the lead was 130 µs of a 0.663 ms wall, the tracer's cost read as the user's problem. */
  double lead = ns_to_us (first - begin_ns), trail = ns_to_us (end_ns - last);
  if (u.graph)
    u.replay_launch_us = lead;
  else
    {
      add_gap (&u, lead);
      u.host_wait_us += lead;
    }
  add_gap (&u, trail);
  u.host_wait_us += trail;

  /* Between work: a gap ends when the next work starts. The GPU waited for the host when the
   * host's call for that work began after the device went idle; otherwise the work was already
   * queued, and the gap is the latency between dependent launches. */
  guint64 busy_until = sorted->len ? ((const FbGpuActivity *) sorted->pdata[0])->end_ns : 0;
  for (guint i = 1; i < sorted->len; i++)
    {
      const FbGpuActivity *a = sorted->pdata[i];
      if (a->start_ns > busy_until)
        {
          double gap = ns_to_us (a->start_ns - busy_until);
          add_gap (&u, gap);
          if (a->api_start_ns == 0)
            u.other_wait_us += gap;
          else if (a->api_start_ns >= busy_until)
            u.host_wait_us += gap;
          else
            u.kernel_wait_us += gap;
        }
      busy_until = MAX (busy_until, a->end_ns);
    }
  return u;
}

static double
pct (double part, double whole)
{
  return whole > 0 ? 100.0 * part / whole : 0;
}

/* What a CUDA graph leaves between dependent kernels on an H200: about a microsecond a launch
 * (PyTorch's reduce-overhead mode runs ResNet-50's 133 kernels with about 0.12 ms idle). */
#define GRAPH_GAP_PER_LAUNCH_US 1.0

void
fb_gpu_utilization_diagnose (const FbGpuUtilization *u, GPtrArray *lines)
{
  g_return_if_fail (u != NULL && lines != NULL);
  if (u->wall_us <= 0)
    return;

  /* A graph replay's launch is reported apart: the findings are about the steady state. */
  double wall = MAX (0.0, u->wall_us - u->replay_launch_us);
  double idle = MAX (0.0, wall - u->kernel_busy_us);
  if (wall <= 0)
    return;
  g_ptr_array_add (lines, g_strdup_printf (
    "GPU busy %.0f %% of %.3f ms%s: %u kernel launches%s, %.0f %% idle in %u gaps "
    "(%u under %.0f µs, largest %.1f µs)",
    pct (u->kernel_busy_us, wall), wall / 1000.0, u->untraced ? " (untraced replays)" : "",
    u->launches, u->graph ? " replayed as a CUDA graph" : "", pct (idle, wall), u->n_gaps,
    u->n_small_gaps, FB_GPU_SMALL_GAP_US, u->gap_largest_us));
  if (u->replay_launch_us > 0)
    g_ptr_array_add (lines, g_strdup_printf (
      u->untraced
        ? "replay launch: %.1f µs, counted apart (measured untraced: a replay alone less one "
          "among replays launched back to back)"
        : "replay launch: %.1f µs from the call to the first kernel, counted apart (under the "
          "tracer it is mostly the tracer's own start; untraced replays overlap it with the one "
          "before)", u->replay_launch_us));
  g_ptr_array_add (lines, g_strdup_printf (
    "idle time: %.0f %% waiting for the host to launch, %.0f %% between dependent kernels, "
    "%.0f %% in copies, %.0f %% unexplained",
    pct (u->host_wait_us, idle), pct (u->kernel_wait_us, idle), pct (u->copy_us, idle),
    pct (u->other_wait_us, idle)));

  /* What the measuring itself may account for: no idle, and no cause of it, under it is a
   * finding. Untraced, the idle is the replays' own (only their noise blurs it); the split
   * between causes comes from the traced replays, which the tracer's overhead blurs. */
  double idle_floor_us = u->untraced ? u->noise_us : MAX (u->noise_us, u->overhead_us);
  double floor_us = u->untraced ? u->cause_floor_us : idle_floor_us;
  if (pct (idle, wall) < 15 || idle <= idle_floor_us)
    {
      g_ptr_array_add (lines, g_strdup_printf (
        "GPU-bound: busy %.0f %%; the time is in the kernels themselves (see the top kernels "
        "and their share of the roofline)", pct (u->kernel_busy_us, wall)));
      return;
    }

  double launch_idle = u->host_wait_us + u->kernel_wait_us;
  if (u->copy_us > launch_idle && u->copy_us > u->other_wait_us && u->copy_us > floor_us)
    {
      g_ptr_array_add (lines, g_strdup_printf (
        "copy-bound: %.0f %% of the wall in %u host-device copies while no kernel runs; keep "
        "inputs and outputs on the device between inferences", pct (u->copy_us, wall),
        u->copies));
      return;
    }
  if (!u->graph && u->host_wait_us >= u->kernel_wait_us && launch_idle >= u->other_wait_us &&
      launch_idle > floor_us)
    {
      double saved = MAX (0.0, launch_idle - u->launches * GRAPH_GAP_PER_LAUNCH_US);
      g_ptr_array_add (lines, g_strdup_printf (
        "launch-bound: %.0f %% idle in %u gaps, %u of them under %.0f µs, the GPU waiting for "
        "the host to launch; replaying as a CUDA graph would save about %.2f ms "
        "(toggle: CUDA graph)", pct (idle, wall), u->n_gaps, u->n_small_gaps,
        FB_GPU_SMALL_GAP_US, saved / 1000.0));
      return;
    }
  if (u->host_wait_us >= u->kernel_wait_us && launch_idle >= u->other_wait_us &&
      u->host_wait_us > floor_us)
    {
      g_ptr_array_add (lines, g_strdup_printf (
        "host-bound although replayed as a CUDA graph: %.0f %% of the wall waiting for the "
        "host (graph launch, If/Loop on the host between graph segments, copies of results)",
        pct (u->host_wait_us, wall)));
      return;
    }
  if (u->kernel_wait_us >= u->other_wait_us && u->kernel_wait_us > floor_us)
    {
      g_ptr_array_add (lines, g_strdup_printf (
        "latency between dependent kernels: %.0f %% of the wall in %u gaps between kernels "
        "already queued, %u kernels shorter than %.0f µs; fewer, larger kernels would help "
        "(toggles: fuse-epilogue, fuse-elementwise)", pct (u->kernel_wait_us, wall),
        u->n_gaps, u->short_kernels, FB_GPU_SMALL_GAP_US));
      return;
    }
  if (u->other_wait_us > floor_us)
    {
      g_ptr_array_add (lines, g_strdup_printf (
        "%.0f %% of the wall idle with no host call recorded for the work after it (records "
        "incomplete: profile again with the activity of the driver API on)",
        pct (u->other_wait_us, wall)));
      return;
    }
  g_ptr_array_add (lines, g_strdup_printf (
    "no finding: %.0f %% idle, but no cause of it exceeds what the measuring itself may account "
    "for (noise %.1f µs, tracer overhead %.1f µs%s)", pct (idle, wall), u->noise_us,
    u->overhead_us, u->untraced ? " a replay, traced" : ""));
}

static gboolean
same_names (GPtrArray *a, GPtrArray *b)
{
  if (a->len != b->len)
    return FALSE;
  for (guint i = 0; i < a->len; i++)
    if (g_strcmp0 (((FbGpuActivity *) a->pdata[i])->name,
                   ((FbGpuActivity *) b->pdata[i])->name) != 0)
      return FALSE;
  return TRUE;
}

static GPtrArray *
sorted_kernels (const GArray *activities)
{
  GPtrArray *v = sorted_view (activities);
  for (guint i = v->len; i-- > 0;)
    if (((FbGpuActivity *) v->pdata[i])->kind != FB_GPU_KERNEL)
      g_ptr_array_remove_index (v, i);
  return v;
}

guint
fb_gpu_match_owners (const GArray *reference, GArray *replay)
{
  g_return_val_if_fail (reference != NULL && replay != NULL, 0);
  g_autoptr(GPtrArray) ref = sorted_kernels (reference);
  g_autoptr(GPtrArray) rep = sorted_kernels (replay);
  guint unmatched = 0;

  if (same_names (ref, rep))
    {
      for (guint i = 0; i < rep->len; i++)
        {
          FbGpuActivity *r = rep->pdata[i];
          r->owner = ((FbGpuActivity *) ref->pdata[i])->owner;
          unmatched += r->owner == 0;
        }
      return unmatched;
    }

  /* A different order (a graph may run independent nodes in another order): the n-th launch
   * of a function in the replay is the n-th launch of it in the reference. */
  g_autoptr(GHashTable) queues = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                                        (GDestroyNotify) g_queue_free);
  for (guint i = 0; i < ref->len; i++)
    {
      FbGpuActivity *r = ref->pdata[i];
      const char *name = r->name ? r->name : "";
      GQueue *q = g_hash_table_lookup (queues, name);
      if (q == NULL)
        g_hash_table_insert (queues, (gpointer) name, q = g_queue_new ());
      g_queue_push_tail (q, r);
    }
  for (guint i = 0; i < rep->len; i++)
    {
      FbGpuActivity *r = rep->pdata[i];
      GQueue *q = g_hash_table_lookup (queues, r->name ? r->name : "");
      const FbGpuActivity *twin = q ? g_queue_pop_head (q) : NULL;
      r->owner = twin ? twin->owner : 0;
      unmatched += r->owner == 0;
    }
  return unmatched;
}

GPtrArray *
fb_gpu_split_inferences (const GArray *activities, const guint64 *begin_ns,
                         const guint64 *end_ns, guint n)
{
  g_return_val_if_fail (activities != NULL && (n == 0 || (begin_ns && end_ns)), NULL);
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (out, fb_gpu_activity_array_new ());
  for (guint j = 0; j < activities->len; j++)
    {
      const FbGpuActivity *a = &g_array_index (activities, FbGpuActivity, j);
      guint64 t = a->api_start_ns ? a->api_start_ns : a->start_ns;
      for (guint i = 0; i < n; i++)
        if (t >= begin_ns[i] && t <= end_ns[i])
          {
            FbGpuActivity copy = *a;
            copy.name = g_strdup (a->name);
            g_array_append_val (out->pdata[i], copy);
            break;
          }
    }
  return out;
}
