/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-timing.h"

static void
test_summary (void)
{
  const double odd[] = { 5, 1, 4, 2, 3 };
  const double even[] = { 4, 1, 3, 2 };
  FbTimingStats s = fb_timing_summarize (odd, G_N_ELEMENTS (odd));

  g_assert_cmpuint (s.count, ==, 5);
  g_assert_cmpfloat (s.median, ==, 3);
  g_assert_cmpfloat (s.min, ==, 1);
  g_assert_cmpfloat (s.max, ==, 5);
  g_assert_cmpfloat (s.mean, ==, 3);
  g_assert_cmpfloat (s.p95, ==, 5);
  /* The caller's samples keep their order. */
  g_assert_cmpfloat (odd[0], ==, 5);
  s = fb_timing_summarize (even, G_N_ELEMENTS (even));
  g_assert_cmpfloat (s.median, ==, 2.5);
}

static void
test_p95_nearest_rank (void)
{
  double v[100];

  for (int i = 0; i < 100; i++)
    v[i] = 100 - i;   /* 100 .. 1 */
  g_assert_cmpfloat (fb_timing_summarize (v, 100).p95, ==, 95);
  g_assert_cmpfloat (fb_timing_summarize (v, 1).p95, ==, 100);
  /* The quartiles a profile's noise is read from, nearest rank too: one slow sample moves the
   * maximum, not them. */
  FbTimingStats s = fb_timing_summarize (v, 100);
  g_assert_cmpfloat (s.q1, ==, 25);
  g_assert_cmpfloat (s.q3, ==, 75);
  v[0] = 1e6;
  s = fb_timing_summarize (v, 100);
  g_assert_cmpfloat (s.q3 - s.q1, ==, 50);
  g_assert_cmpfloat (fb_timing_summarize (v, 1).q1, ==, 1e6);
}

static void
test_clock_moves_forward (void)
{
  double a = fb_timing_now_ms ();
  g_usleep (2000);
  g_assert_cmpfloat (fb_timing_now_ms () - a, >=, 1.0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/timing/summary", test_summary);
  g_test_add_func ("/timing/p95-nearest-rank", test_p95_nearest_rank);
  g_test_add_func ("/timing/clock-moves-forward", test_clock_moves_forward);
  return g_test_run ();
}
