/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-test-conv.h"

#include <math.h>
#include <string.h>

float *
tcv_random_floats (gsize n, guint32 seed, double scale)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  float *v = g_new (float, n + 1);
  for (gsize i = 0; i < n; i++)
    v[i] = (float) g_rand_double_range (rand, -scale, scale);
  return v;
}

double
tcv_apply_post (const FbConvDesc *d, double v, const float *add, gsize at)
{
  for (int64_t i = 0; i < d->n_post; i++)
    {
      const FbConvPost *p = &d->post[i];
      switch (p->kind)
        {
        case FB_CONV_POST_RELU: v = v < 0 ? p->alpha * v : v; break;
        case FB_CONV_POST_CLIP: v = MIN (MAX (v, p->alpha), p->beta); break;
        case FB_CONV_POST_MAX: v = MAX (v, p->alpha); break;
        case FB_CONV_POST_MIN: v = MIN (v, p->alpha); break;
        case FB_CONV_POST_ADD: v += add[at]; break;
        case FB_CONV_POST_SUM: v += add[at]; break;     /* what the output held */
        case FB_CONV_POST_SIGMOID: v = 1 / (1 + exp (-v)); break;
        case FB_CONV_POST_SWISH: v = v / (1 + exp (-p->alpha * v)); break;
        case FB_CONV_POST_HARD_SWISH: v *= fmax (0, fmin (1, v / 6 + 0.5)); break;
        case FB_CONV_POST_GELU:
          v = p->alpha != 0 ? 0.5 * v * (1 + tanh (sqrt (2 / G_PI) * (v + 0.044715 * v * v * v)))
                            : 0.5 * v * (1 + erf (v / G_SQRT2));
          break;
        default: g_assert_not_reached ();
        }
    }
  return v;
}

gboolean
tcv_use_isa (const char *isa)
{
  __builtin_cpu_init ();
  const char *lacking = !(__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma"))
                          ? "avx2"
                        : strcmp (isa, "avx512") == 0 && !__builtin_cpu_supports ("avx512f")
                          ? "avx512" : NULL;
  if (lacking)
    {
      g_autofree char *why = g_strdup_printf ("this processor has no %s", lacking);
      g_test_skip (why);
      return FALSE;
    }
  if (strcmp (isa, "default") == 0)
    g_unsetenv ("FUSEBENCH_ISA");
  else
    g_setenv ("FUSEBENCH_ISA", isa, TRUE);
  return TRUE;
}
