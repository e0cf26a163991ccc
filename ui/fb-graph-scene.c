/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The scene: the cached layouts of the expanded groups, each placed inside its frame, flattened
 * into one list of boxes and one of edges in absolute coordinates. */
#include "fb-graph-layout-private.h"
#include "fb-graph-style-private.h"

struct _FbGraphScene {
  gatomicrefcount ref_count;
  FbGraphLayout  *layout;
  GArray         *items;        /* FbSceneItem: frames before what they hold */
  GArray         *edges;        /* FbSceneEdge */
  double          width, height;
  int            *node_item;    /* by node index: the item that shows it */
  GHashTable     *group_item;   /* FbGraphGroup* -> item index + 1 */
  GArray        **producers;    /* by item: GArray of int */
  GArray        **consumers;
  gboolean        partial;
  GHashTable     *stand_ins;    /* while a partial scene is built: FbGraphGroup* -> FbGroupLayout* */
};

static void
mark_hidden (FbGraphScene *self,
             FbGraphGroup *group,
             int           item)
{
  for (guint i = 0; i < group->children->len; i++)
    {
      FbGroupChild *child = &g_array_index (group->children, FbGroupChild, i);

      if (child->node != NULL)
        self->node_item[_fb_graph_layout_node_index (self->layout, child->node)] = item;
      else
        mark_hidden (self, child->group, item);
    }
}

static void
bezier_point (const double *p,
              double        t,
              double       *x,
              double       *y)
{
  double u = 1 - t;
  double a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, d = t * t * t;

  *x = a * p[0] + b * p[2] + c * p[4] + d * p[6];
  *y = a * p[1] + b * p[3] + c * p[5] + d * p[7];
}

static void
place (FbGraphScene *self,
       FbGraphGroup *group,
       GHashTable   *expanded,
       double        ox,
       double        oy,
       int           frame)
{
  g_autofree char *key = _fb_graph_layout_key (group, expanded);
  FbGroupLayout *layout = _fb_graph_layout_cached (group, key);
  g_autofree int *child_item = g_new (int, group->children->len);

  if (layout == NULL)
    {
      g_assert (self->partial);
      layout = _fb_graph_layout_stand_in (self->layout, group, expanded, self->stand_ins);
    }

  for (guint i = 0; i < group->children->len; i++)
    {
      FbGroupChild *child = &g_array_index (group->children, FbGroupChild, i);
      FbPlace *p = &layout->places[i];
      FbSceneItem item = { 0 };

      item.x = ox + p->cx - p->w / 2;
      item.y = oy + p->cy - p->h / 2;
      item.width = p->w;
      item.height = p->h;
      item.parent = frame;
      child_item[i] = self->items->len;
      if (child->node != NULL)
        {
          item.kind = FB_SCENE_ITEM_NODE;
          item.node = child->node;
          item.rows = fb_graph_layout_node_rows (self->layout, child->node, &item.n_rows);
          g_array_append_val (self->items, item);
          self->node_item[_fb_graph_layout_node_index (self->layout, child->node)] = child_item[i];
          continue;
        }
      item.group = child->group;
      item.kind = g_hash_table_contains (expanded, child->group->path) ? FB_SCENE_ITEM_FRAME
                                                                       : FB_SCENE_ITEM_GROUP;
      /* Waiting for its layout with nothing inside laid out: one box stands for all of it. */
      if (item.kind == FB_SCENE_ITEM_FRAME && self->partial)
        {
          g_autofree char *sub_key = _fb_graph_layout_key (child->group, expanded);

          if (_fb_graph_layout_cached (child->group, sub_key) == NULL
              && !_fb_graph_layout_stand_in (self->layout, child->group, expanded, self->stand_ins)->holds_laid_out)
            item.kind = FB_SCENE_ITEM_GROUP;
        }
      g_array_append_val (self->items, item);
      g_hash_table_insert (self->group_item, child->group, GINT_TO_POINTER (child_item[i] + 1));
      if (item.kind == FB_SCENE_ITEM_GROUP)
        mark_hidden (self, child->group, child_item[i]);
      else
        place (self, child->group, expanded, item.x, item.y + FB_GRAPH_FRAME_HEADER, child_item[i]);
    }

  for (guint k = 0; k < layout->n_edges; k++)
    {
      FbGroupEdge *gedge = &g_array_index (group->edges, FbGroupEdge, k);
      FbPath *path = &layout->paths[k];
      FbSceneEdge edge = { 0 };
      guint mid;

      edge.from = gedge->from < 0 ? frame : child_item[gedge->from];
      edge.to = gedge->to < 0 ? frame : child_item[gedge->to];
      edge.value = gedge->value;
      edge.n_values = gedge->n_values;
      edge.n_points = path->n_points;
      edge.points = g_new (double, 2 * path->n_points);
      for (guint p = 0; p < path->n_points; p++)
        {
          edge.points[2 * p] = path->points[2 * p] + ox;
          edge.points[2 * p + 1] = path->points[2 * p + 1] + oy;
        }
      mid = ((path->n_points - 1) / 3) / 2;
      bezier_point (&edge.points[6 * mid], 0.5, &edge.label_x, &edge.label_y);
      g_array_append_val (self->edges, edge);
    }
}

static void
add_link (GArray *array,
          int     item)
{
  for (guint i = 0; i < array->len; i++)
    if (g_array_index (array, int, i) == item)
      return;
  g_array_append_val (array, item);
}

static void
build_links (FbGraphScene *self)
{
  FbGraph *graph = self->layout->graph;

  self->producers = g_new0 (GArray *, self->items->len);
  self->consumers = g_new0 (GArray *, self->items->len);
  for (guint i = 0; i < self->items->len; i++)
    {
      self->producers[i] = g_array_new (FALSE, FALSE, sizeof (int));
      self->consumers[i] = g_array_new (FALSE, FALSE, sizeof (int));
    }
  for (guint j = 0; j < graph->nodes->len; j++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, j);
      int to = self->node_item[j];

      for (guint k = 0; k < node->n_inputs; k++)
        {
          FbValue *value = node->inputs[k];
          int producer, from;

          if (value == NULL || value->producer == NULL)
            continue;
          if ((producer = _fb_graph_layout_node_index (self->layout, value->producer)) < 0
              || self->layout->is_row[producer])
            continue;
          from = self->node_item[producer];
          if (from < 0 || to < 0 || from == to)
            continue;
          add_link (self->producers[to], from);
          add_link (self->consumers[from], to);
        }
    }
}

static void
clear_edge (gpointer data)
{
  FbSceneEdge *edge = data;

  g_free (edge->points);
}

FbGraphScene *
_fb_graph_scene_new (FbGraphLayout *layout,
                     GHashTable    *expanded,
                     gboolean       partial)
{
  FbGraphScene *self = g_new0 (FbGraphScene, 1);
  g_autofree char *key = _fb_graph_layout_key (layout->root, expanded);
  FbGroupLayout *root = _fb_graph_layout_cached (layout->root, key);

  g_atomic_ref_count_init (&self->ref_count);
  self->partial = partial;
  if (partial)
    self->stand_ins = g_hash_table_new_full (NULL, NULL, NULL, _fb_group_layout_free);
  if (root == NULL)
    {
      g_assert (partial);
      root = _fb_graph_layout_stand_in (layout, layout->root, expanded, self->stand_ins);
    }
  self->layout = fb_graph_layout_ref (layout);
  self->items = g_array_new (FALSE, FALSE, sizeof (FbSceneItem));
  self->edges = g_array_new (FALSE, FALSE, sizeof (FbSceneEdge));
  g_array_set_clear_func (self->edges, clear_edge);
  self->group_item = g_hash_table_new (NULL, NULL);
  self->node_item = g_new (int, layout->graph->nodes->len);
  for (guint i = 0; i < layout->graph->nodes->len; i++)
    self->node_item[i] = -1;
  self->width = root->width;
  self->height = root->height;
  place (self, layout->root, expanded, 0, 0, -1);
  /* A Constant drawn as rows shows where its first reader does. */
  for (guint i = 0; i < layout->graph->nodes->len; i++)
    if (layout->is_row[i])
      {
        FbNode *node = g_ptr_array_index (layout->graph->nodes, i);
        FbNode *reader = g_hash_table_lookup (layout->value_reader, node->outputs[0]);

        self->node_item[i] = self->node_item[_fb_graph_layout_node_index (layout, reader)];
      }
  build_links (self);
  g_clear_pointer (&self->stand_ins, g_hash_table_unref);
  return self;
}

FbGraphScene *
fb_graph_scene_ref (FbGraphScene *scene)
{
  g_return_val_if_fail (scene != NULL, NULL);

  g_atomic_ref_count_inc (&scene->ref_count);
  return scene;
}

void
fb_graph_scene_unref (FbGraphScene *scene)
{
  g_return_if_fail (scene != NULL);

  if (!g_atomic_ref_count_dec (&scene->ref_count))
    return;
  for (guint i = 0; i < scene->items->len; i++)
    {
      g_array_unref (scene->producers[i]);
      g_array_unref (scene->consumers[i]);
    }
  g_free (scene->producers);
  g_free (scene->consumers);
  g_array_unref (scene->items);
  g_array_unref (scene->edges);
  g_hash_table_unref (scene->group_item);
  g_free (scene->node_item);
  fb_graph_layout_unref (scene->layout);
  g_free (scene);
}

FbGraphLayout *
fb_graph_scene_get_layout (FbGraphScene *scene)
{
  g_return_val_if_fail (scene != NULL, NULL);
  return scene->layout;
}

gboolean
fb_graph_scene_is_partial (FbGraphScene *scene)
{
  g_return_val_if_fail (scene != NULL, FALSE);
  return scene->partial;
}

guint
fb_graph_scene_n_items (FbGraphScene *scene)
{
  g_return_val_if_fail (scene != NULL, 0);
  return scene->items->len;
}

const FbSceneItem *
fb_graph_scene_item (FbGraphScene *scene,
                     guint         index)
{
  g_return_val_if_fail (scene != NULL, NULL);
  g_return_val_if_fail (index < scene->items->len, NULL);
  return &g_array_index (scene->items, FbSceneItem, index);
}

guint
fb_graph_scene_n_edges (FbGraphScene *scene)
{
  g_return_val_if_fail (scene != NULL, 0);
  return scene->edges->len;
}

const FbSceneEdge *
fb_graph_scene_edge (FbGraphScene *scene,
                     guint         index)
{
  g_return_val_if_fail (scene != NULL, NULL);
  g_return_val_if_fail (index < scene->edges->len, NULL);
  return &g_array_index (scene->edges, FbSceneEdge, index);
}

void
fb_graph_scene_get_bounds (FbGraphScene *scene,
                           double       *width,
                           double       *height)
{
  g_return_if_fail (scene != NULL);

  if (width != NULL)
    *width = scene->width;
  if (height != NULL)
    *height = scene->height;
}

int
fb_graph_scene_find_node (FbGraphScene *scene,
                          const FbNode *node)
{
  int index;

  g_return_val_if_fail (scene != NULL, -1);
  g_return_val_if_fail (node != NULL, -1);

  index = _fb_graph_layout_node_index (scene->layout, node);
  return index < 0 ? -1 : scene->node_item[index];
}

int
fb_graph_scene_find_group (FbGraphScene       *scene,
                           const FbGraphGroup *group)
{
  g_return_val_if_fail (scene != NULL, -1);
  g_return_val_if_fail (group != NULL, -1);

  return GPOINTER_TO_INT (g_hash_table_lookup (scene->group_item, group)) - 1;
}

int
fb_graph_scene_find_constant (FbGraphScene  *scene,
                              const FbValue *value)
{
  FbNode *reader;

  g_return_val_if_fail (scene != NULL, -1);
  g_return_val_if_fail (value != NULL, -1);

  if ((reader = fb_graph_layout_constant_reader (scene->layout, value)) == NULL)
    return -1;
  return fb_graph_scene_find_node (scene, reader);
}

gboolean
fb_graph_scene_row_rect (FbGraphScene *scene,
                         guint         item,
                         guint         row,
                         double       *x,
                         double       *y,
                         double       *width,
                         double       *height)
{
  const FbSceneItem *it;

  g_return_val_if_fail (scene != NULL, FALSE);
  g_return_val_if_fail (item < scene->items->len, FALSE);

  it = &g_array_index (scene->items, FbSceneItem, item);
  if (it->kind != FB_SCENE_ITEM_NODE || row >= _fb_graph_rows_shown (it->n_rows))
    return FALSE;
  *x = it->x + FB_GRAPH_NODE_PAD / 2;
  *y = it->y + _fb_graph_rows_top (it->node) + row * FB_GRAPH_ROW_HEIGHT;
  *width = it->width - FB_GRAPH_NODE_PAD;
  *height = FB_GRAPH_ROW_HEIGHT;
  return TRUE;
}

int
fb_graph_scene_row_at (FbGraphScene *scene,
                       guint         item,
                       double        x,
                       double        y)
{
  const FbSceneItem *it;
  double top;
  int row;

  g_return_val_if_fail (scene != NULL, -1);
  g_return_val_if_fail (item < scene->items->len, -1);

  it = &g_array_index (scene->items, FbSceneItem, item);
  if (it->kind != FB_SCENE_ITEM_NODE || it->n_rows == 0 || x < it->x || x >= it->x + it->width)
    return -1;
  top = it->y + _fb_graph_rows_top (it->node);
  if (y < top)
    return -1;
  row = (int) ((y - top) / FB_GRAPH_ROW_HEIGHT);
  return row < (int) _fb_graph_rows_shown (it->n_rows) ? row : -1;
}

int
fb_graph_scene_item_at (FbGraphScene *scene,
                        double        x,
                        double        y)
{
  g_return_val_if_fail (scene != NULL, -1);

  /* Members come after their frame, inner frames after outer ones: the last hit is on top. */
  for (guint i = scene->items->len; i-- > 0;)
    {
      const FbSceneItem *item = &g_array_index (scene->items, FbSceneItem, i);

      if (x >= item->x && x < item->x + item->width && y >= item->y && y < item->y + item->height)
        return i;
    }
  return -1;
}

GArray *
fb_graph_scene_producers (FbGraphScene *scene,
                          guint         item)
{
  g_return_val_if_fail (scene != NULL, NULL);
  g_return_val_if_fail (item < scene->items->len, NULL);
  return scene->producers[item];
}

GArray *
fb_graph_scene_consumers (FbGraphScene *scene,
                          guint         item)
{
  g_return_val_if_fail (scene != NULL, NULL);
  g_return_val_if_fail (item < scene->items->len, NULL);
  return scene->consumers[item];
}
