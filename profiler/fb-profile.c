/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The profile model: its lifetime, the digest that tells one model from another, and the check
 * that a profile belongs to the model and toggles the workbench shows (fb-profile.h). The file
 * format lives in fb-profile-json.c, attribution in fb-profile-attribute.c. */
#include "fb-profile.h"
#include "fb-infer.h"
#include "fb-backend.h"

#include <string.h>

G_DEFINE_QUARK (fb-profile-error-quark, fb_profile_error)

static void
folded_clear (gpointer p)
{
  FbProfileFolded *f = p;
  g_free (f->node);
  g_free (f->by);
}

FbProfile *
fb_profile_new (void)
{
  FbProfile *p = g_new0 (FbProfile, 1);
  g_atomic_ref_count_init (&p->ref_count);
  p->pipeline = fb_pipeline_options_new ();
  p->kernels = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_profile_kernel_free);
  p->folded = g_array_new (FALSE, TRUE, sizeof (FbProfileFolded));
  g_array_set_clear_func (p->folded, folded_clear);
  p->timeline = g_array_new (FALSE, TRUE, sizeof (FbProfileSpan));
  p->diagnosis = g_ptr_array_new_with_free_func (g_free);
  return p;
}

FbProfile *
fb_profile_ref (FbProfile *profile)
{
  g_return_val_if_fail (profile != NULL, NULL);
  g_atomic_ref_count_inc (&profile->ref_count);
  return profile;
}

void
fb_profile_unref (FbProfile *p)
{
  if (p == NULL || !g_atomic_ref_count_dec (&p->ref_count))
    return;
  g_free (p->model);
  g_free (p->model_digest);
  g_free (p->target);
  g_free (p->device.name);
  fb_pipeline_options_free (p->pipeline);
  g_ptr_array_unref (p->kernels);
  g_array_unref (p->folded);
  g_array_unref (p->timeline);
  g_ptr_array_unref (p->diagnosis);
  g_free (p->counters_note);
  g_free (p);
}

FbProfileKernel *
fb_profile_kernel_new (void)
{
  FbProfileKernel *k = g_new0 (FbProfileKernel, 1);
  k->nodes = g_ptr_array_new_with_free_func (g_free);
  k->node_shares = g_array_new (FALSE, TRUE, sizeof (double));
  k->worker_busy_us = g_array_new (FALSE, TRUE, sizeof (double));
  k->bytes_source = FB_BYTES_MODELED;
  k->bound = FB_BOUND_MEMORY;
  k->counters = (FbKernelCounters) { -1, -1, -1, -1, -1 };
  return k;
}

void
fb_profile_kernel_free (FbProfileKernel *k)
{
  if (k == NULL)
    return;
  g_free (k->name);
  g_ptr_array_unref (k->nodes);
  g_array_unref (k->node_shares);
  g_array_unref (k->worker_busy_us);
  g_free (k);
}

double
fb_profile_total_us (const FbProfile *profile)
{
  double total = 0;
  g_return_val_if_fail (profile != NULL, 0);
  for (guint i = 0; i < profile->kernels->len; i++)
    total += ((const FbProfileKernel *) g_ptr_array_index (profile->kernels, i))->median_us;
  return total;
}

char *
fb_profile_model_digest (const FbModel *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  /* Names and op types with separators that cannot occur in either, so that ("ab", "c") and
   * ("a", "bc") differ. */
  for (guint i = 0; model->orig_nodes && i < model->orig_nodes->len; i++)
    {
      const FbOrigNode *n = &g_array_index (model->orig_nodes, FbOrigNode, i);
      const char *name = n->name ? n->name : "", *op = n->op_type ? n->op_type : "";
      g_checksum_update (sum, (const guchar *) name, strlen (name) + 1);
      g_checksum_update (sum, (const guchar *) op, strlen (op) + 1);
    }
  return g_strdup (g_checksum_get_string (sum));
}

static gboolean
str_in (const GPtrArray *list, const char *s)
{
  for (guint i = 0; list && i < list->len; i++)
    if (g_strcmp0 (g_ptr_array_index (list, i), s) == 0)
      return TRUE;
  return FALSE;
}

/* The first entry of a that b lacks, or NULL. */
static const char *
first_missing (const GPtrArray *a, const GPtrArray *b)
{
  for (guint i = 0; a && i < a->len; i++)
    if (!str_in (b, g_ptr_array_index (a, i)))
      return g_ptr_array_index (a, i);
  return NULL;
}

static const char *
layout_name (FbLayout layout)
{
  return layout == FB_LAYOUT_NHWC ? "nhwc" : "nchw";
}

/* What differs between the recorded toggles and these, in words; NULL when nothing does. */
static char *
pipeline_difference (const FbPipelineOptions *rec, const FbPipelineOptions *now)
{
  const char *s;
  GHashTableIter it;
  gpointer key, value;

  if ((s = first_missing (rec->disabled_passes, now->disabled_passes)))
    return g_strdup_printf ("pass %s was disabled in the profiled run and is enabled here", s);
  if ((s = first_missing (now->disabled_passes, rec->disabled_passes)))
    return g_strdup_printf ("pass %s is disabled here and was enabled in the profiled run", s);
  if ((s = first_missing (rec->no_fuse, now->no_fuse)))
    return g_strdup_printf ("node %s was kept out of fusion in the profiled run and is not here", s);
  if ((s = first_missing (now->no_fuse, rec->no_fuse)))
    return g_strdup_printf ("node %s is kept out of fusion here and was not in the profiled run", s);
  if (rec->layout != now->layout)
    return g_strdup_printf ("the profiled run used the %s layout, this pipeline %s",
                            layout_name (rec->layout), layout_name (now->layout));
  g_hash_table_iter_init (&it, rec->input_shapes);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      const FbShape *other = g_hash_table_lookup (now->input_shapes, key);
      g_autofree char *a = fb_shape_to_string (value);
      if (other == NULL)
        return g_strdup_printf ("input %s was pinned to %s in the profiled run and is not here",
                                (const char *) key, a);
      if (!fb_shape_equal (value, other))
        {
          g_autofree char *b = fb_shape_to_string (other);
          return g_strdup_printf ("input %s was pinned to %s in the profiled run, here to %s",
                                  (const char *) key, a, b);
        }
    }
  g_hash_table_iter_init (&it, now->input_shapes);
  while (g_hash_table_iter_next (&it, &key, &value))
    if (!g_hash_table_contains (rec->input_shapes, key))
      {
        g_autofree char *b = fb_shape_to_string (value);
        return g_strdup_printf ("input %s is pinned to %s here and was not in the profiled run",
                                (const char *) key, b);
      }
  return NULL;
}

gboolean
fb_profile_matches (const FbProfile *profile, const FbModel *model,
                    const FbPipelineOptions *options, GError **error)
{
  g_return_val_if_fail (profile != NULL && model != NULL, FALSE);

  if (profile->model_digest != NULL)
    {
      g_autofree char *digest = fb_profile_model_digest (model);
      if (g_ascii_strcasecmp (digest, profile->model_digest) != 0)
        {
          g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_MISMATCH,
                       "the profile was recorded for another model (%s): its nodes differ from "
                       "this model's", profile->model ? profile->model : "unnamed");
          return FALSE;
        }
    }
  else
    {
      /* A file without the digest (written by another tool) can only be told by its name. */
      g_autofree char *base = model->path ? g_path_get_basename (model->path) : NULL;
      if (base == NULL || g_strcmp0 (base, profile->model) != 0)
        {
          g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_MISMATCH,
                       "the profile was recorded for %s, not for %s, and carries no model digest",
                       profile->model ? profile->model : "an unnamed model",
                       base ? base : "this model");
          return FALSE;
        }
    }
  if (options != NULL && profile->pipeline != NULL)
    {
      g_autofree char *why = pipeline_difference (profile->pipeline, options);
      if (why != NULL)
        {
          g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_MISMATCH,
                       "the profile was recorded with other toggles: %s", why);
          return FALSE;
        }
    }
  return TRUE;
}

FbPipelineOptions *
fb_profile_pinned_options (const FbProfile *profile, const FbGraph *import,
                           const FbPipelineOptions *options, GError **error)
{
  g_autoptr(FbPipelineOptions) pinned = NULL;
  g_autoptr(GError) local = NULL;
  GHashTableIter it;
  gpointer key, value;

  g_return_val_if_fail (profile != NULL && import != NULL && options != NULL, NULL);
  pinned = fb_pipeline_options_copy (options);
  g_hash_table_remove_all (pinned->input_shapes);
  if (profile->pipeline == NULL || profile->pipeline->input_shapes == NULL)
    return g_steal_pointer (&pinned);
  /* The shapes a profile ran with are concrete: they must fill the model's symbolic
   * dimensions, never contradict a fixed one. */
  if (!fb_graph_check_pins (import, profile->pipeline->input_shapes, &local))
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_MISMATCH,
                   "the input shapes the profile was recorded with do not fit this model: %s",
                   local->message);
      return NULL;
    }
  g_hash_table_iter_init (&it, profile->pipeline->input_shapes);
  while (g_hash_table_iter_next (&it, &key, &value))
    g_hash_table_insert (pinned->input_shapes, g_strdup (key), g_memdup2 (value, sizeof (FbShape)));
  return g_steal_pointer (&pinned);
}

const char *
fb_profile_lane_word (const FbProfile *profile)
{
  const FbBackend *backend = profile->target ? fb_backend_lookup (profile->target) : NULL;
  return backend && backend->lane_word ? backend->lane_word : "lane";
}

gboolean
fb_profile_traced_device (const FbProfile *profile)
{
  const FbBackend *backend = profile->target ? fb_backend_lookup (profile->target) : NULL;
  return backend != NULL && backend->device_trace != NULL;
}
