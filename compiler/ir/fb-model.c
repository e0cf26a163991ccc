/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-graph.h"

#include <string.h>

G_DEFINE_QUARK (fb-graph-error-quark, fb_graph_error)

FbModel *
fb_model_new (const char *path)
{
  FbModel *m = g_new0 (FbModel, 1);

  g_atomic_ref_count_init (&m->ref_count);
  m->path = g_strdup (path);
  m->opsets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  m->metadata = g_ptr_array_new_with_free_func (g_free);
  m->orig_nodes = g_array_new (FALSE, TRUE, sizeof (FbOrigNode));
  m->next_id = 1;
  return m;
}

FbModel *
fb_model_ref (FbModel *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  g_atomic_ref_count_inc (&model->ref_count);
  return model;
}

void
fb_model_unref (FbModel *model)
{
  if (model == NULL || !g_atomic_ref_count_dec (&model->ref_count))
    return;
  for (guint i = 0; i < model->orig_nodes->len; i++)
    {
      FbOrigNode *o = &g_array_index (model->orig_nodes, FbOrigNode, i);
      g_free ((char *) o->name);
      g_free ((char *) o->op_type);
      g_free ((char *) o->written);
    }
  g_array_unref (model->orig_nodes);
  g_ptr_array_unref (model->metadata);
  g_hash_table_unref (model->opsets);
  g_free (model->path);
  g_free (model->producer_name);
  g_free (model->producer_version);
  g_free (model->domain);
  g_free (model->doc_string);
  g_free (model);
}

int
fb_model_opset (FbModel *model, const char *domain)
{
  gpointer v;

  g_return_val_if_fail (model != NULL, 0);
  if (domain == NULL || strcmp (domain, "ai.onnx") == 0)
    domain = "";
  if (g_hash_table_lookup_extended (model->opsets, domain, NULL, &v))
    return GPOINTER_TO_INT (v);
  return 0;
}

guint
fb_model_fresh_id (FbModel *model)
{
  g_return_val_if_fail (model != NULL, 0);
  /* Stages are built on worker threads while the UI reads older ones. */
  return (guint) g_atomic_int_add ((gint *) &model->next_id, 1);
}

const char *
fb_model_orig_name (FbModel *model, guint prov)
{
  g_return_val_if_fail (model != NULL, NULL);
  if (prov >= model->orig_nodes->len)
    return NULL;
  return g_array_index (model->orig_nodes, FbOrigNode, prov).name;
}
