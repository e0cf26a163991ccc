/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Attribution through provenance: a kernel's measured time carried to the nodes of any stage.
 *
 * A kernel runs one final-stage node and stands for a list of original ONNX nodes, with the
 * share of its cost each one takes (node_shares). On a stage whose graph still has a node
 * that covers all of the kernel's originals (the final stage, and earlier stages before the
 * kernel's node was formed by a fusion), the kernel lands on it whole. Elsewhere the kernel's
 * time is split over its originals by those shares, and each original's part lands on the
 * nodes whose provenance holds it, divided equally when several do (a node duplicated by a
 * pass). Either way every microsecond lands exactly once, so a stage's costs add up to
 * fb_profile_total_us. */
#include "fb-profile.h"
#include "fb-cost.h"

#include <math.h>

typedef struct {
  FbNodeCost cost;
  double     roofline_weight;   /* sum of time x roofline_share, divided out at the end */
  gboolean   all_measured;
  int        last_kernel;       /* the last kernel counted in n_kernels */
} Acc;

static Acc *
acc_for (GHashTable *table, guint id)
{
  Acc *a = g_hash_table_lookup (table, GUINT_TO_POINTER (id));
  if (a == NULL)
    {
      a = g_new0 (Acc, 1);
      a->all_measured = TRUE;
      a->last_kernel = -1;
      g_hash_table_insert (table, GUINT_TO_POINTER (id), a);
    }
  return a;
}

/* Adds fraction of kernel k (the index-th of the profile) to the node id. */
static void
land (GHashTable *table, guint id, const FbProfileKernel *k, int index, double fraction)
{
  Acc *a = acc_for (table, id);
  double t = k->median_us * fraction;
  a->cost.time_us += t;
  a->cost.bytes += (double) (k->bytes_read + k->bytes_written) * fraction;
  a->cost.flops += k->flops * fraction;
  a->roofline_weight += t * k->roofline_share;
  a->all_measured = a->all_measured && k->bytes_source == FB_BYTES_MEASURED;
  if (fraction < 1.0 - 1e-12)
    a->cost.split = TRUE;
  if (a->last_kernel != index)
    {
      a->cost.n_kernels++;
      a->last_kernel = index;
    }
}

static double
node_share (const FbProfileKernel *k, guint i)
{
  if (k->node_shares != NULL && k->node_shares->len == k->nodes->len)
    return g_array_index (k->node_shares, double, i);
  return 1.0 / k->nodes->len;
}

GHashTable *
fb_profile_attribute (const FbProfile *profile, const FbGraph *graph)
{
  g_return_val_if_fail (profile != NULL && graph != NULL, NULL);

  g_autoptr(GHashTable) acc = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  /* Original name -> GPtrArray of the ids of the nodes whose provenance holds it. */
  g_autoptr(GHashTable) holders = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                                         (GDestroyNotify) g_ptr_array_unref);
  /* Node id -> GHashTable of the original names it holds (a set). */
  g_autoptr(GHashTable) held = g_hash_table_new_full (NULL, NULL, NULL,
                                                      (GDestroyNotify) g_hash_table_unref);
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (graph->nodes, i);
      GHashTable *set = g_hash_table_new (g_str_hash, g_str_equal);
      g_hash_table_insert (held, GUINT_TO_POINTER (n->id), set);
      for (guint p = 0; p < n->n_prov; p++)
        {
          const char *name = fb_model_orig_name (graph->model, n->prov[p]);
          if (name == NULL || !g_hash_table_add (set, (gpointer) name))
            continue;
          GPtrArray *ids = g_hash_table_lookup (holders, name);
          if (ids == NULL)
            g_hash_table_insert (holders, (gpointer) name, ids = g_ptr_array_new ());
          g_ptr_array_add (ids, GUINT_TO_POINTER (n->id));
        }
      /* A node without provenance (made by a pass) answers to its own name, as lowering
       * names its kernel's nodes. */
      if (n->n_prov == 0 && n->name && g_hash_table_add (set, (gpointer) n->name))
        {
          GPtrArray *ids = g_hash_table_lookup (holders, n->name);
          if (ids == NULL)
            g_hash_table_insert (holders, (gpointer) n->name, ids = g_ptr_array_new ());
          g_ptr_array_add (ids, GUINT_TO_POINTER (n->id));
        }
    }

  for (guint ki = 0; ki < profile->kernels->len; ki++)
    {
      const FbProfileKernel *k = g_ptr_array_index (profile->kernels, ki);
      GHashTable *own = g_hash_table_lookup (held, GUINT_TO_POINTER (k->stage_node));
      gboolean covers = own != NULL;
      for (guint i = 0; covers && i < k->nodes->len; i++)
        covers = g_hash_table_contains (own, g_ptr_array_index (k->nodes, i));
      if (covers)
        {
          land (acc, k->stage_node, k, (int) ki, 1.0);
          continue;
        }
      for (guint i = 0; i < k->nodes->len; i++)
        {
          GPtrArray *ids = g_hash_table_lookup (holders, g_ptr_array_index (k->nodes, i));
          double share = node_share (k, i);
          if (ids != NULL)
            for (guint h = 0; h < ids->len; h++)
              land (acc, GPOINTER_TO_UINT (g_ptr_array_index (ids, h)), k, (int) ki,
                    share / ids->len);
          else if (own != NULL)
            land (acc, k->stage_node, k, (int) ki, share);
          /* else: an original this graph does not know (another model's profile, refused
           * earlier by fb_profile_matches); its part lands nowhere. */
        }
      if (k->nodes->len == 0 && own != NULL)
        land (acc, k->stage_node, k, (int) ki, 1.0);
    }

  double total = fb_profile_total_us (profile);
  GHashTable *out = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, acc);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      Acc *a = value;
      FbNodeCost *c = g_memdup2 (&a->cost, sizeof (FbNodeCost));
      c->share = total > 0 ? c->time_us / total : 0;
      c->gbps = c->time_us > 0 ? c->bytes / (c->time_us * 1e3) : 0;
      c->gflops = c->time_us > 0 ? c->flops / (c->time_us * 1e3) : 0;
      c->roofline_share = c->time_us > 0 ? a->roofline_weight / c->time_us : 0;
      c->bytes_source = a->all_measured ? FB_BYTES_MEASURED : FB_BYTES_MODELED;
      g_hash_table_insert (out, key, c);
    }
  return out;
}

GHashTable *
fb_profile_original_costs (const FbProfile *profile)
{
  g_return_val_if_fail (profile != NULL, NULL);
  GHashTable *out = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (guint ki = 0; ki < profile->kernels->len; ki++)
    {
      const FbProfileKernel *k = g_ptr_array_index (profile->kernels, ki);
      for (guint i = 0; i < k->nodes->len; i++)
        {
          const char *name = g_ptr_array_index (k->nodes, i);
          double *t = g_hash_table_lookup (out, name);
          if (t == NULL)
            {
              t = g_new0 (double, 1);
              g_hash_table_insert (out, g_strdup (name), t);
            }
          *t += k->median_us * node_share (k, i);
        }
    }
  return out;
}

/* A node's modeled time on the device: the longer of its compute and its traffic at the
 * ceilings (or flops plus bytes when the ceilings are unknown), the cost model's estimate. */
static double
modeled_time (const FbNode *node, const FbProfileDevice *device)
{
  FbCost c = fb_node_cost (node);
  double bytes = c.bytes_read + c.bytes_written;
  if (device != NULL && device->peak_gflops > 0 && device->peak_gbps > 0)
    return MAX (c.flops / device->peak_gflops, bytes / device->peak_gbps);
  return c.flops + bytes;
}

void
fb_profile_kernel_split_by_cost (FbProfileKernel *kernel, const FbGraph *import_graph,
                                 const FbProfileDevice *device)
{
  g_return_if_fail (kernel != NULL);
  guint n = kernel->nodes->len;
  g_autofree double *t = g_new0 (double, n + 1);
  double sum = 0;

  g_array_set_size (kernel->node_shares, 0);
  if (n == 0)
    return;
  if (import_graph != NULL && n > 1)
    {
      g_autoptr(GHashTable) by_name = g_hash_table_new (g_str_hash, g_str_equal);
      for (guint i = 0; i < import_graph->nodes->len; i++)
        {
          const FbNode *node = g_ptr_array_index (import_graph->nodes, i);
          if (node->name)
            g_hash_table_insert (by_name, (gpointer) node->name, (gpointer) node);
        }
      for (guint i = 0; i < n; i++)
        {
          const FbNode *node = g_hash_table_lookup (by_name, g_ptr_array_index (kernel->nodes, i));
          t[i] = node ? modeled_time (node, device) : 0;
          if (!isfinite (t[i]) || t[i] < 0)
            t[i] = 0;
          sum += t[i];
        }
    }
  for (guint i = 0; i < n; i++)
    {
      /* Nothing modeled (shapes unknown, or every member is free): equal parts. */
      double s = sum > 0 ? t[i] / sum : 1.0 / n;
      g_array_append_val (kernel->node_shares, s);
    }
}
