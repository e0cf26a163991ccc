/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The utilization of untraced replays from a traced one (fb-gpu-activity.h): the tracer is
 * needed to see kernels at all, but it lengthens what lies between them (ResNet-50 replayed on
 * an H200: 0.518 ms of kernels, 0.509 ms a replay untraced, 0.598 ms traced), so the idle it
 * shows is partly its own. The wall comes from replays it did not watch; the traced inference
 * only says how the idle left divides. */
#include "fb-gpu-activity.h"

FbGpuUtilization
fb_gpu_utilization_untraced (const FbGpuUtilization *traced, double wall_us, double noise_us,
                             double replay_launch_us, double traced_wall_us)
{
  g_return_val_if_fail (traced != NULL, (FbGpuUtilization) { 0 });
  FbGpuUtilization u = *traced;
  u.untraced = TRUE;
  u.wall_us = MAX (0.0, wall_us);
  u.noise_us = MAX (0.0, noise_us);
  u.overhead_us = MAX (0.0, traced_wall_us - wall_us);
  u.replay_launch_us = CLAMP (replay_launch_us, 0.0, u.wall_us);
  double steady = u.wall_us - u.replay_launch_us;
  u.kernel_busy_us = MIN (traced->kernel_busy_us, steady);

  double idle = steady - u.kernel_busy_us;
  double traced_idle = traced->host_wait_us + traced->kernel_wait_us + traced->copy_us +
                       traced->other_wait_us;
  if (traced_idle <= 0)
    {
      /* Idle the traced inference did not have: nothing says where it went. */
      u.host_wait_us = u.kernel_wait_us = u.copy_us = 0;
      u.other_wait_us = idle;
      u.gap_total_us = u.gap_largest_us = idle;
      u.cause_floor_us = u.noise_us;
      return u;
    }
  /* A cause's traced time is at most the overhead more than it would be untraced: scaled with
   * it, the overhead is what the cause must exceed. */
  double scale = idle / traced_idle;
  u.cause_floor_us = MAX (u.noise_us, u.overhead_us * scale);
  u.host_wait_us *= scale;
  u.kernel_wait_us *= scale;
  u.copy_us *= scale;
  u.other_wait_us *= scale;
  u.gap_total_us *= scale;
  u.small_gaps_us *= scale;
  u.gap_largest_us = MIN (u.gap_largest_us, idle);
  return u;
}
