/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Groups of the same structure laid out once. What dot is given for a group is nothing but the
 * sizes of its boxes and its edges between them (the boxes are named by index), so two groups
 * with the same sizes and edges get the same layout, and copying one is exactly what a run would
 * have given. The repeated blocks of a transformer are such groups: of 14,000 groups of a
 * 2,000-layer model, a handful differ. */
#include "fb-graph-layout-private.h"

/* What dot sees of group with its boxes of sizes. */
GBytes *
_fb_graph_layout_shape (FbGraphGroup  *group,
                        const FbPlace *sizes)
{
  GByteArray *bytes = g_byte_array_new ();
  guint32 counts[2] = { group->children->len, group->edges->len };

  g_byte_array_append (bytes, (const guint8 *) counts, sizeof counts);
  for (guint i = 0; i < group->children->len; i++)
    {
      g_byte_array_append (bytes, (const guint8 *) &sizes[i].w, sizeof (double));
      g_byte_array_append (bytes, (const guint8 *) &sizes[i].h, sizeof (double));
    }
  for (guint i = 0; i < group->edges->len; i++)
    {
      const FbGroupEdge *edge = &g_array_index (group->edges, FbGroupEdge, i);
      gint32 ends[2] = { edge->from, edge->to };

      g_byte_array_append (bytes, (const guint8 *) ends, sizeof ends);
    }
  return g_byte_array_free_to_bytes (bytes);
}

FbGroupLayout *
_fb_group_layout_copy (const FbGroupLayout *layout)
{
  FbGroupLayout *copy = g_new0 (FbGroupLayout, 1);

  copy->width = layout->width;
  copy->height = layout->height;
  copy->n_children = layout->n_children;
  copy->places = g_memdup2 (layout->places, sizeof (FbPlace) * layout->n_children);
  copy->n_edges = layout->n_edges;
  copy->paths = g_new0 (FbPath, layout->n_edges);
  for (guint i = 0; i < layout->n_edges; i++)
    {
      copy->paths[i].n_points = layout->paths[i].n_points;
      copy->paths[i].points = g_memdup2 (layout->paths[i].points, 2 * sizeof (double) * layout->paths[i].n_points);
    }
  copy->seeded = layout->seeded;
  return copy;
}

/* A copy of the layout of a group shaped as shape, or NULL. Takes the layout's mutex. */
FbGroupLayout *
_fb_graph_layout_reuse (FbGraphLayout *self,
                        GBytes        *shape)
{
  FbGroupLayout *found, *copy = NULL;

  g_mutex_lock (&self->mutex);
  if ((found = g_hash_table_lookup (self->shapes, shape)) != NULL)
    {
      copy = _fb_group_layout_copy (found);
      self->n_reused++;
    }
  g_mutex_unlock (&self->mutex);
  return copy;
}

/* Remembers layout (made by dot for a group shaped as shape, and cached for as long as self
 * lives) for the groups of that shape to come. The layout's mutex must be held. */
void
_fb_graph_layout_remember_shape (FbGraphLayout *self,
                                 GBytes        *shape,
                                 FbGroupLayout *layout)
{
  if (!g_hash_table_contains (self->shapes, shape))
    g_hash_table_insert (self->shapes, g_bytes_ref (shape), layout);
}
