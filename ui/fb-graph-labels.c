/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-graph-labels.h"
#include "fb-graph-style-private.h"

#include <math.h>

#define CELL 64.0   /* the grid that finds the labels a rectangle may touch */
#define GAP  2.0    /* kept between two labels, so that they read as two texts */

typedef struct {
  double   x, y, w, h;
  gboolean shown;
} Label;

struct _FbGraphLabels {
  GArray     *labels;   /* Label, one per scene edge */
  GHashTable *grid;     /* cell (gint64) -> GArray of label indices touching it */
};

char *
fb_graph_labels_text (const FbSceneEdge *edge)
{
  g_autofree char *shape = NULL;

  g_return_val_if_fail (edge != NULL, NULL);
  if (edge->value == NULL)
    return NULL;
  shape = _fb_graph_value_text (edge->value);
  if (edge->n_values > 1)
    return g_strdup_printf ("%s (%u values)", shape, edge->n_values);
  return g_steal_pointer (&shape);
}

static gint64
cell_key (int cx, int cy)
{
  return ((gint64) cx << 32) | (guint32) cy;
}

static gboolean
overlaps (const Label *a, const Label *b)
{
  return a->x < b->x + b->w + GAP && b->x < a->x + a->w + GAP
         && a->y < b->y + b->h + GAP && b->y < a->y + a->h + GAP;
}

static gboolean
is_free (FbGraphLabels *self, const Label *candidate)
{
  int cx0 = (int) floor ((candidate->x - GAP) / CELL), cx1 = (int) floor ((candidate->x + candidate->w + GAP) / CELL);
  int cy0 = (int) floor ((candidate->y - GAP) / CELL), cy1 = (int) floor ((candidate->y + candidate->h + GAP) / CELL);

  for (int cx = cx0; cx <= cx1; cx++)
    for (int cy = cy0; cy <= cy1; cy++)
      {
        gint64 key = cell_key (cx, cy);
        GArray *in = g_hash_table_lookup (self->grid, &key);

        for (guint i = 0; in != NULL && i < in->len; i++)
          if (overlaps (candidate, &g_array_index (self->labels, Label, g_array_index (in, guint, i))))
            return FALSE;
      }
  return TRUE;
}

static void
occupy (FbGraphLabels *self, guint index)
{
  const Label *label = &g_array_index (self->labels, Label, index);
  int cx0 = (int) floor (label->x / CELL), cx1 = (int) floor ((label->x + label->w) / CELL);
  int cy0 = (int) floor (label->y / CELL), cy1 = (int) floor ((label->y + label->h) / CELL);

  for (int cx = cx0; cx <= cx1; cx++)
    for (int cy = cy0; cy <= cy1; cy++)
      {
        gint64 key = cell_key (cx, cy);
        GArray *in = g_hash_table_lookup (self->grid, &key);

        if (in == NULL)
          {
            in = g_array_new (FALSE, FALSE, sizeof (guint));
            g_hash_table_insert (self->grid, g_memdup2 (&key, sizeof key), in);
          }
        g_array_append_val (in, index);
      }
}

FbGraphLabels *
fb_graph_labels_place (FbGraphScene       *scene,
                       const FbGraphPaint *paint)
{
  FbGraphLabels *self;
  guint n;
  /* Shapes repeat across a model: each distinct text is measured once. */
  g_autoptr(GHashTable) widths = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  PangoRectangle extents;
  double line;

  g_return_val_if_fail (scene != NULL && paint != NULL && paint->text != NULL, NULL);
  n = fb_graph_scene_n_edges (scene);
  self = g_new0 (FbGraphLabels, 1);
  self->labels = g_array_sized_new (FALSE, TRUE, sizeof (Label), n);
  g_array_set_size (self->labels, n);
  self->grid = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                      (GDestroyNotify) g_array_unref);
  pango_layout_set_font_description (paint->text, paint->mono_font);
  pango_layout_set_width (paint->text, -1);
  pango_layout_set_ellipsize (paint->text, PANGO_ELLIPSIZE_NONE);
  pango_layout_set_text (paint->text, "0", -1);
  pango_layout_get_pixel_extents (paint->text, NULL, &extents);
  line = extents.height;

  for (guint i = 0; i < n; i++)
    {
      const FbSceneEdge *edge = fb_graph_scene_edge (scene, i);
      g_autofree char *text = fb_graph_labels_text (edge);
      Label *label = &g_array_index (self->labels, Label, i);
      double *width;

      if (text == NULL)
        continue;
      if ((width = g_hash_table_lookup (widths, text)) == NULL)
        {
          width = g_new (double, 1);
          pango_layout_set_text (paint->text, text, -1);
          pango_layout_get_pixel_extents (paint->text, NULL, &extents);
          *width = MIN (extents.width, FB_GRAPH_LABEL_MAX_WIDTH);
          g_hash_table_insert (widths, g_strdup (text), width);
        }
      {
        /* The text starts 4 px right of the label point, its middle on the point's line; the
         * other places keep it touching the point, so that it still reads as this edge's. */
        double x = edge->label_x + 4, y = edge->label_y - 6;
        const double places[][2] = {
          { x, y }, { edge->label_x - 4 - *width, y }, { x, y + line }, { x, y - line },
        };

        for (guint p = 0; p < G_N_ELEMENTS (places) && !label->shown; p++)
          {
            Label candidate = { places[p][0], places[p][1], *width, line, TRUE };

            if (is_free (self, &candidate))
              {
                *label = candidate;
                occupy (self, i);
              }
          }
      }
    }
  return self;
}

void
fb_graph_labels_free (FbGraphLabels *labels)
{
  if (labels == NULL)
    return;
  g_array_unref (labels->labels);
  g_hash_table_unref (labels->grid);
  g_free (labels);
}

gboolean
fb_graph_labels_get (const FbGraphLabels *labels,
                     guint                edge,
                     double              *x,
                     double              *y,
                     double              *width,
                     double              *height)
{
  const Label *label;

  g_return_val_if_fail (labels != NULL, FALSE);
  if (edge >= labels->labels->len)
    return FALSE;
  label = &g_array_index (labels->labels, Label, edge);
  if (!label->shown)
    return FALSE;
  if (x)
    *x = label->x;
  if (y)
    *y = label->y;
  if (width)
    *width = label->w;
  if (height)
    *height = label->h;
  return label->shown;
}
