/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-dtype.h"

#include <math.h>

static void
test_sizes_and_names (void)
{
  g_assert_cmpuint (fb_dtype_size (FB_DTYPE_FLOAT32), ==, 4);
  g_assert_cmpuint (fb_dtype_size (FB_DTYPE_INT64), ==, 8);
  g_assert_cmpuint (fb_dtype_size (FB_DTYPE_BOOL), ==, 1);
  g_assert_cmpuint (fb_dtype_size (FB_DTYPE_FLOAT16), ==, 2);
  g_assert_cmpuint (fb_dtype_size (FB_DTYPE_STRING), ==, 0);
  g_assert_cmpstr (fb_dtype_name (FB_DTYPE_FLOAT64), ==, "float64");
  g_assert_cmpstr (fb_dtype_name (99), ==, "?");
  g_assert_false (fb_dtype_is_known (FB_DTYPE_STRING));
  g_assert_false (fb_dtype_is_known (14));
  g_assert_true (fb_dtype_is_known (FB_DTYPE_UINT64));
  g_assert_true (fb_dtype_is_signed (FB_DTYPE_INT8));
  g_assert_false (fb_dtype_is_signed (FB_DTYPE_UINT8));
}

static void
test_half_round_trip (void)
{
  /* Every finite half converts to float and back unchanged. */
  for (guint h = 0; h < 0x10000; h++)
    {
      if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
        continue;  /* NaN payloads are not preserved bit for bit */
      g_assert_cmphex (fb_float_to_half (fb_half_to_float ((uint16_t) h)), ==, h);
    }
  g_assert_cmpfloat (fb_half_to_float (0x3c00), ==, 1.0f);
  g_assert_cmpfloat (fb_half_to_float (0xc000), ==, -2.0f);
  g_assert_cmphex (fb_float_to_half (65520.0f), ==, 0x7c00);       /* rounds to infinity */
  g_assert_cmphex (fb_float_to_half (1.0f + 1.0f / 4096), ==, 0x3c00);  /* ties to even */
  g_assert_true (isnan (fb_half_to_float (fb_float_to_half (NAN))));
}

static void
test_bfloat16 (void)
{
  g_assert_cmpfloat (fb_bfloat16_to_float (fb_float_to_bfloat16 (1.5f)), ==, 1.5f);
  g_assert_cmpfloat_with_epsilon (fb_bfloat16_to_float (fb_float_to_bfloat16 (3.14159f)), 3.14159f, 0.02);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/dtype/sizes-and-names", test_sizes_and_names);
  g_test_add_func ("/dtype/half-round-trip", test_half_round_trip);
  g_test_add_func ("/dtype/bfloat16", test_bfloat16);
  return g_test_run ();
}
