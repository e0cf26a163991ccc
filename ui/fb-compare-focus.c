/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a stage changed, on each side of the comparison (fb-compare-focus-private.h). */
#include "fb-compare-focus-private.h"

/* Added nodes show on the right, removed and fused ones on the left, changed ones on both. */
static FbNode *
changed_node (const FbChange *change,
              FbGraphLayout  *layout,
              gboolean        before)
{
  gboolean here = change->kind == FB_CHANGE_CHANGED
                  || (before ? change->kind != FB_CHANGE_ADDED : change->kind == FB_CHANGE_ADDED);

  return here ? fb_graph_layout_find_node (layout, change->node_id) : NULL;
}

void
_fb_compare_add_change_groups (FbStage       *stage,
                               FbGraphLayout *layout,
                               gboolean       before,
                               GHashTable    *paths,
                               guint         *budget)
{
  g_autoptr(GPtrArray) closed = g_ptr_array_new ();
  gboolean first = TRUE;

  for (guint i = 0; stage->changes != NULL && i < stage->changes->len; i++)
    {
      FbNode *node = changed_node (&g_array_index (stage->changes, FbChange, i), layout, before);
      FbGraphGroup *group;
      guint cost = 0;

      if (node == NULL)
        continue;
      g_ptr_array_set_size (closed, 0);
      /* The root is always open. */
      for (group = fb_graph_layout_node_group (layout, node);
           group != NULL && fb_graph_group_get_parent (group) != NULL;
           group = fb_graph_group_get_parent (group))
        if (!g_hash_table_contains (paths, fb_graph_group_get_path (group)))
          {
            g_ptr_array_add (closed, group);
            cost += fb_graph_group_get_n_children (group);
          }
      if (cost > *budget && !first)
        continue;
      first = FALSE;
      *budget -= MIN (cost, *budget);
      for (guint k = 0; k < closed->len; k++)
        g_hash_table_add (paths, g_strdup (fb_graph_group_get_path (g_ptr_array_index (closed, k))));
    }
}

void
_fb_compare_add_change_rects (FbStage     *stage,
                              FbGraphView *view,
                              gboolean     before,
                              GArray      *rects)
{
  FbGraphScene *scene = fb_graph_view_get_scene (view);
  FbGraphLayout *layout = fb_graph_view_get_layout (view);
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);

  for (guint i = 0; stage->changes != NULL && i < stage->changes->len; i++)
    {
      FbNode *node = changed_node (&g_array_index (stage->changes, FbChange, i), layout, before);
      int index = node != NULL ? fb_graph_scene_find_node (scene, node) : -1;
      const FbSceneItem *item;
      graphene_rect_t rect;

      if (index < 0 || g_hash_table_contains (seen, GINT_TO_POINTER (index + 1)))
        continue;
      g_hash_table_add (seen, GINT_TO_POINTER (index + 1));
      item = fb_graph_scene_item (scene, index);
      graphene_rect_init (&rect, item->x, item->y, item->width, item->height);
      g_array_append_val (rects, rect);
    }
}
