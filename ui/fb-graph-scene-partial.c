/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Stand-ins for groups that are not laid out yet, so that a partial scene can be drawn while
 * the layout goes on: the group's boxes in one column, in graph order (which is how most of a
 * network reads, from input to output), as tall and as wide as they will about be. They cost no
 * Graphviz run and are never cached: the real layout replaces them as it arrives. */
#include "fb-graph-layout-private.h"
#include "fb-graph-style-private.h"

#define STAND_IN_GAP 30.0    /* between two boxes of the column: about dot's ranksep */

FbGroupLayout *
_fb_graph_layout_stand_in (FbGraphLayout *self,
                           FbGraphGroup  *group,
                           GHashTable    *expanded,
                           GHashTable    *stand_ins)
{
  FbGroupLayout *layout = g_hash_table_lookup (stand_ins, group);
  double y = FB_GRAPH_FRAME_PAD, width = 0;

  if (layout != NULL)
    return layout;
  layout = g_new0 (FbGroupLayout, 1);
  layout->n_children = group->children->len;
  layout->places = g_new0 (FbPlace, group->children->len);
  for (guint i = 0; i < group->children->len; i++)
    {
      FbGroupChild *child = &g_array_index (group->children, FbGroupChild, i);
      FbPlace *place = &layout->places[i];

      if (child->node != NULL)
        {
          guint n_rows;
          const FbConstantRow *rows = fb_graph_layout_node_rows (self, child->node, &n_rows);

          _fb_graph_node_size (child->node, rows, n_rows, &place->w, &place->h);
        }
      else if (!g_hash_table_contains (expanded, child->group->path))
        _fb_graph_group_size (child->group, &place->w, &place->h);
      else
        {
          g_autofree char *key = _fb_graph_layout_key (child->group, expanded);
          FbGroupLayout *sub = _fb_graph_layout_cached (child->group, key);
          gboolean framed;

          if (sub == NULL)
            sub = _fb_graph_layout_stand_in (self, child->group, expanded, stand_ins);
          /* A stand-in with nothing laid out inside shows as one box, without a title bar. */
          framed = sub->holds_laid_out || _fb_graph_layout_cached (child->group, key) == sub;
          place->w = sub->width;
          place->h = sub->height + (framed ? FB_GRAPH_FRAME_HEADER : 0);
          layout->holds_laid_out |= framed;
        }
      place->cy = y + place->h / 2;
      y += place->h + STAND_IN_GAP;
      width = MAX (width, place->w);
    }
  layout->width = width + 2 * FB_GRAPH_FRAME_PAD;
  layout->height = MAX (y - STAND_IN_GAP, FB_GRAPH_FRAME_PAD) + FB_GRAPH_FRAME_PAD;
  for (guint i = 0; i < group->children->len; i++)
    layout->places[i].cx = layout->width / 2;
  g_hash_table_insert (stand_ins, group, layout);
  return layout;
}
