/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-code-marks-private.h"

static gboolean
phase_matches (const FbKPhase *phase,
               const guint    *prov,
               guint           n)
{
  for (guint i = 0; i < n; i++)
    if (fb_kphase_has_prov (phase, prov[i]))
      return TRUE;
  return FALSE;
}

GArray *
_fb_code_marks_kernel_ir (const FbKernel       *kernel,
                          const FbKernelStages *st,
                          const guint          *prov,
                          guint                 n)
{
  guint lines = st->kir_phase != NULL ? st->kir_phase->len : 0;
  GArray *marks = g_array_sized_new (FALSE, TRUE, sizeof (gboolean), lines);
  g_autofree gboolean *matched = g_new0 (gboolean, kernel->phases->len + 1);

  g_assert (prov != NULL || n == 0);
  g_array_set_size (marks, lines);
  for (guint p = 0; p < kernel->phases->len; p++)
    matched[p] = phase_matches (g_ptr_array_index (kernel->phases, p), prov, n);
  for (guint i = 0; i < lines; i++)
    {
      guint phase = g_array_index (st->kir_phase, guint, i);
      g_array_index (marks, gboolean, i) = phase > 0 && phase <= kernel->phases->len
                                           && matched[phase - 1];
    }
  return marks;
}

GArray *
_fb_code_marks_follow (GArray *kir,
                       GArray *map)
{
  guint lines = map != NULL ? map->len : 0;
  GArray *marks = g_array_sized_new (FALSE, TRUE, sizeof (gboolean), lines);

  g_array_set_size (marks, lines);
  for (guint i = 0; i < lines; i++)
    {
      guint from = g_array_index (map, guint, i);
      g_array_index (marks, gboolean, i) = from > 0 && from <= kir->len
                                           && g_array_index (kir, gboolean, from - 1);
    }
  return marks;
}
