/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-profile-changes.h"

static void
change_clear (gpointer data)
{
  g_free (((FbProfileChange *) data)->name);
}

static int
compare_change (gconstpointer a,
                gconstpointer b)
{
  double x = ((const FbProfileChange *) a)->delta_us, y = ((const FbProfileChange *) b)->delta_us;

  if (x != y)
    return x < y ? -1 : 1;
  /* Ties by name: the same two profiles always list the same nodes. */
  return g_strcmp0 (((const FbProfileChange *) a)->name, ((const FbProfileChange *) b)->name);
}

GArray *
fb_profile_changes (const FbProfile *now,
                    const FbProfile *before,
                    gboolean         gains,
                    guint            max)
{
  g_autoptr(GHashTable) now_costs = NULL;
  g_autoptr(GHashTable) before_costs = NULL;
  g_autoptr(GArray) all = g_array_new (FALSE, FALSE, sizeof (FbProfileChange));
  GArray *result = g_array_new (FALSE, FALSE, sizeof (FbProfileChange));
  GHashTableIter iter;
  gpointer key, value;

  g_return_val_if_fail (now != NULL, result);
  g_return_val_if_fail (before != NULL, result);

  g_array_set_clear_func (result, change_clear);
  now_costs = fb_profile_original_costs (now);
  before_costs = fb_profile_original_costs (before);
  g_hash_table_iter_init (&iter, now_costs);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const double *b = g_hash_table_lookup (before_costs, key);
      FbProfileChange c = { key, *(double *) value - (b != NULL ? *b : 0), b != NULL ? *b : 0, *(double *) value };

      g_array_append_val (all, c);
    }
  /* Nodes that had time before and none now: folded away, or no longer run. */
  g_hash_table_iter_init (&iter, before_costs);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (!g_hash_table_contains (now_costs, key))
      {
        FbProfileChange c = { key, -*(double *) value, *(double *) value, 0 };

        g_array_append_val (all, c);
      }
  g_array_sort (all, compare_change);
  for (guint k = 0; k < all->len && result->len < max; k++)
    {
      FbProfileChange c = g_array_index (all, FbProfileChange, gains ? k : all->len - 1 - k);

      if (gains ? c.delta_us >= 0 : c.delta_us <= 0)
        break;
      c.name = g_strdup (c.name);
      g_array_append_val (result, c);
    }
  return result;
}
