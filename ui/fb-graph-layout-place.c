/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Placing the members of one group: Graphviz "dot", or the places they had in the previous
 * stage when that works. */
#include "fb-graph-layout-private.h"
#include "fb-graph-style-private.h"

#include <gvc.h>
#include <locale.h>
#include <math.h>

#define SEED_GAP 6.0    /* the least room between two boxes placed from the previous stage */

/* Graphviz keeps global state and is not thread-safe: every use in this process goes through
 * this lock; worker processes (fb-graph-layout-workers.c) run it in parallel. */
static GMutex graphviz_mutex;
static GVC_t *graphviz_context;
static void
straight_path (FbPath        *path,
               double         x0,
               double         y0,
               double         x1,
               double         y1)
{
  double mid = (y0 + y1) / 2;
  double pts[8] = { x0, y0, x0, mid, x1, mid, x1, y1 };

  path->n_points = 4;
  path->points = g_memdup2 (pts, sizeof pts);
}

/* An edge from the group's top border down to a member, or from a member down to the bottom. */
static void
port_path (const FbGroupLayout *layout,
           const FbGroupEdge   *edge,
           FbPath              *path)
{
  if (edge->from < 0)
    {
      const FbPlace *to = &layout->places[edge->to];

      straight_path (path, to->cx, 0, to->cx, to->cy - to->h / 2);
    }
  else
    {
      const FbPlace *from = &layout->places[edge->from];

      straight_path (path, from->cx, from->cy + from->h / 2, from->cx, layout->height);
    }
}

static void
set_attr (void       *object,
          Agsym_t    *sym,
          double      value)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];

  agxset (object, sym, g_ascii_formatd (text, sizeof text, "%.4f", value));
}

/* Places n boxes of sizes joined by edges with dot. Touches no lock and no GLib state that a
 * lock guards (no quarks, no logging), so that a forked worker process can run it: on failure it
 * returns NULL and *message. The caller holds graphviz_mutex, or is a worker process. */
FbGroupLayout *
_fb_graph_dot_place (guint            n,
                     const FbPlace   *sizes,
                     guint            n_edges,
                     const FbGroupEdge *edges_data,
                     char           **message)
{
  FbGroupLayout *layout = NULL;
  g_autofree Agnode_t **nodes = g_new0 (Agnode_t *, n);
  g_autofree Agedge_t **agedges = g_new0 (Agedge_t *, n_edges);
  Agnode_t *in_port = NULL, *out_port = NULL;
  Agsym_t *width_sym, *height_sym;
  Agraph_t *g;
  locale_t c_locale, old_locale;
  boxf bb;

  /* Graphviz parses numbers with the C library, in the thread's locale. */
  c_locale = newlocale (LC_NUMERIC_MASK, "C", (locale_t) 0);
  old_locale = uselocale (c_locale);
  if (graphviz_context == NULL)
    {
      agseterr (AGMAX);   /* keep messages for aglasterr () instead of printing them */
      graphviz_context = gvContext ();
    }

  g = agopen ((char *) "group", Agdirected, NULL);
  agattr (g, AGRAPH, (char *) "rankdir", (char *) "TB");
  agattr (g, AGRAPH, (char *) "nodesep", (char *) "0.3");
  agattr (g, AGRAPH, (char *) "ranksep", (char *) "0.42");
  agattr (g, AGNODE, (char *) "shape", (char *) "box");
  agattr (g, AGNODE, (char *) "fixedsize", (char *) "true");
  agattr (g, AGNODE, (char *) "label", (char *) "");
  width_sym = agattr (g, AGNODE, (char *) "width", (char *) "1");
  height_sym = agattr (g, AGNODE, (char *) "height", (char *) "1");
  agattr (g, AGEDGE, (char *) "arrowhead", (char *) "none");

  for (guint i = 0; i < n; i++)
    {
      char name[32];

      g_snprintf (name, sizeof name, "c%u", i);
      nodes[i] = agnode (g, name, TRUE);
      set_attr (nodes[i], width_sym, sizes[i].w / 72.0);
      set_attr (nodes[i], height_sym, sizes[i].h / 72.0);
    }
  for (guint i = 0; i < n_edges; i++)
    {
      const FbGroupEdge *edge = &edges_data[i];

      /* Edges that enter or leave the group start or end at a flat node on the first or last
         rank, so that dot routes them around the members instead of through them. An edge
         can do both (it passes through the group): then it needs both nodes, and an edge to a
         node not made yet is what crashed dot's mincross. */
      for (int k = 0; k < 2; k++)
        {
          gboolean in = k == 0;
          Agnode_t **port = in ? &in_port : &out_port;
          Agraph_t *rank;

          if ((in ? edge->from : edge->to) >= 0 || *port != NULL)
            continue;
          rank = agsubg (g, (char *) (in ? "sources" : "sinks"), TRUE);
          *port = agnode (g, (char *) (in ? "in" : "out"), TRUE);
          set_attr (*port, width_sym, 0.1);
          set_attr (*port, height_sym, 0.02);
          agsafeset (rank, (char *) "rank", (char *) (in ? "source" : "sink"), (char *) "");
          agsubnode (rank, *port, TRUE);
        }
      agedges[i] = agedge (g, edge->from < 0 ? in_port : nodes[edge->from],
                           edge->to < 0 ? out_port : nodes[edge->to], NULL, TRUE);
    }

  if (gvLayout (graphviz_context, g, "dot") != 0)
    {
      const char *last = aglasterr ();

      *message = g_strdup (last != NULL ? g_strstrip ((char *) last) : "no “dot” layout plugin");
      agclose (g);
      goto out;
    }

  bb = GD_bb (g);
  layout = g_new0 (FbGroupLayout, 1);
  layout->width = bb.UR.x - bb.LL.x + 2 * FB_GRAPH_FRAME_PAD;
  layout->height = bb.UR.y - bb.LL.y + 2 * FB_GRAPH_FRAME_PAD;
  layout->n_children = n;
  layout->places = g_new0 (FbPlace, n);
  for (guint i = 0; i < n; i++)
    {
      layout->places[i].cx = ND_coord (nodes[i]).x - bb.LL.x + FB_GRAPH_FRAME_PAD;
      layout->places[i].cy = bb.UR.y - ND_coord (nodes[i]).y + FB_GRAPH_FRAME_PAD;
      layout->places[i].w = sizes[i].w;
      layout->places[i].h = sizes[i].h;
    }
  layout->n_edges = n_edges;
  layout->paths = g_new0 (FbPath, n_edges);
  for (guint i = 0; i < n_edges; i++)
    {
      splines *spl = ED_spl (agedges[i]);
      FbPath *path = &layout->paths[i];

      if (spl != NULL && spl->size > 0 && spl->list[0].size >= 4)
        {
          bezier *bz = &spl->list[0];

          path->n_points = bz->size;
          path->points = g_new (double, 2 * bz->size);
          for (int k = 0; k < bz->size; k++)
            {
              path->points[2 * k] = bz->list[k].x - bb.LL.x + FB_GRAPH_FRAME_PAD;
              path->points[2 * k + 1] = bb.UR.y - bz->list[k].y + FB_GRAPH_FRAME_PAD;
            }
        }
      else
        {
          Agnode_t *tail = agtail (agedges[i]), *head = aghead (agedges[i]);

          straight_path (path,
                         ND_coord (tail).x - bb.LL.x + FB_GRAPH_FRAME_PAD,
                         bb.UR.y - ND_coord (tail).y + FB_GRAPH_FRAME_PAD,
                         ND_coord (head).x - bb.LL.x + FB_GRAPH_FRAME_PAD,
                         bb.UR.y - ND_coord (head).y + FB_GRAPH_FRAME_PAD);
        }
    }
  gvFreeLayout (graphviz_context, g);
  agclose (g);

out:
  uselocale (old_locale);
  freelocale (c_locale);
  return layout;
}

/* Runs the first layout of the process, which loads the dot plugin, and keeps graphviz_mutex
 * locked: a worker process forked now starts with Graphviz ready and consistent, and never loads a
 * library after the fork. */
void
_fb_graph_dot_lock_warm (void)
{
  FbPlace sizes[2] = { { 0, 0, 72, 36 }, { 0, 0, 72, 36 } };
  FbGroupEdge edge = { 0, 1, NULL, 1 };
  g_autofree char *message = NULL;
  FbGroupLayout *layout;

  g_mutex_lock (&graphviz_mutex);
  if ((layout = _fb_graph_dot_place (2, sizes, 1, &edge, &message)) != NULL)
    _fb_group_layout_free (layout);
}

void
_fb_graph_dot_unlock (void)
{
  g_mutex_unlock (&graphviz_mutex);
}

/* One group with dot: in a worker process when the caller has one, else in this process. */
FbGroupLayout *
_fb_graph_layout_dot (FbGraphLayout *self,
                      FbGraphGroup  *group,
                      const FbPlace *sizes,
                      FbLayoutWorker *worker,
                      GError       **error)
{
  g_autofree char *message = NULL;
  FbGroupLayout *layout = NULL;
  gint64 t0 = g_get_monotonic_time ();
  guint n_edges = group->edges->len;
  const FbGroupEdge *edges = (const FbGroupEdge *) (gpointer) group->edges->data;

  if (worker != NULL)
    layout = _fb_layout_worker_place (worker, group->children->len, sizes, n_edges, edges, &message);
  if (layout == NULL && message == NULL)
    {
      /* No worker, or it died: this process does it. */
      g_mutex_lock (&graphviz_mutex);
      layout = _fb_graph_dot_place (group->children->len, sizes, n_edges, edges, &message);
      g_mutex_unlock (&graphviz_mutex);
    }
  if (layout == NULL)
    {
      g_set_error (error, FB_LAYOUT_ERROR, FB_LAYOUT_ERROR_GRAPHVIZ,
                   "Graphviz could not lay out group “%s”: %s", group->label, message);
      return NULL;
    }
  g_mutex_lock (&self->mutex);
  self->n_dot_runs++;
  self->dot_us += g_get_monotonic_time () - t0;
  g_mutex_unlock (&self->mutex);
  return layout;
}

static char *
child_key (const FbGroupChild *child)
{
  if (child->node != NULL)
    return g_strdup_printf ("n%u", child->node->id);
  return g_strconcat ("g", child->group->label, NULL);
}

static char *
edge_key (FbGraphGroup      *group,
          const FbGroupEdge *edge)
{
  g_autofree char *from = NULL, *to = NULL;

  from = edge->from < 0 ? g_strdup ("<in>")
                        : child_key (&g_array_index (group->children, FbGroupChild, edge->from));
  to = edge->to < 0 ? g_strdup ("<out>")
                    : child_key (&g_array_index (group->children, FbGroupChild, edge->to));
  return g_strconcat (from, ">", to, NULL);
}

/* Places a new item between the kept items it is connected to. */
static gboolean
place_by_neighbours (FbGraphGroup *group,
                     FbPlace      *places,
                     gboolean     *placed,
                     guint         i)
{
  double sum_x = 0, bottom = -G_MAXDOUBLE, top = G_MAXDOUBLE;
  guint n = 0;

  for (guint k = 0; k < group->edges->len; k++)
    {
      FbGroupEdge *edge = &g_array_index (group->edges, FbGroupEdge, k);

      if (edge->to == (int) i && edge->from >= 0 && placed[edge->from])
        {
          sum_x += places[edge->from].cx;
          bottom = MAX (bottom, places[edge->from].cy + places[edge->from].h / 2);
          n++;
        }
      else if (edge->from == (int) i && edge->to >= 0 && placed[edge->to])
        {
          sum_x += places[edge->to].cx;
          top = MIN (top, places[edge->to].cy - places[edge->to].h / 2);
          n++;
        }
    }
  if (n == 0)
    return FALSE;
  places[i].cx = sum_x / n;
  if (bottom > -G_MAXDOUBLE && top < G_MAXDOUBLE)
    places[i].cy = (bottom + top) / 2;
  else if (bottom > -G_MAXDOUBLE)
    places[i].cy = bottom + SEED_GAP * 4 + places[i].h / 2;
  else
    places[i].cy = top - SEED_GAP * 4 - places[i].h / 2;
  return TRUE;
}

static gboolean
overlaps (const FbPlace *a,
          const FbPlace *b)
{
  return fabs (a->cx - b->cx) < (a->w + b->w) / 2 + SEED_GAP
         && fabs (a->cy - b->cy) < (a->h + b->h) / 2 + SEED_GAP;
}

/* Lays group out where its items were in the previous stage; NULL when that does not work
 * (too much is new, or the new items do not fit), and Graphviz then lays it out afresh. */
FbGroupLayout *
_fb_graph_layout_seed (FbGraphLayout *self,
                       FbGraphGroup  *group,
                       const FbPlace *sizes,
                       FbGraphGroup  *prev_group,
                       FbGroupLayout *prev)
{
  guint n = group->children->len;
  g_autoptr(GHashTable) prev_index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) prev_edges = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree FbPlace *places = g_new0 (FbPlace, n);
  g_autofree gboolean *placed = g_new0 (gboolean, n);
  g_autofree gboolean *kept = g_new0 (gboolean, n);
  double min_x = G_MAXDOUBLE, min_y = G_MAXDOUBLE, max_x = 0, max_y = 0, dx, dy;
  guint n_new = 0;
  gboolean progress = TRUE;
  FbGroupLayout *layout;

  /* prev is indexed by prev_group's children and edges: a layout made for another cut of the
   * group would be read past its end. */
  if (prev_group->edges == NULL || prev->n_children != prev_group->children->len
      || prev->n_edges != prev_group->edges->len)
    {
      g_warn_if_reached ();
      return NULL;
    }
  for (guint j = 0; j < prev_group->children->len; j++)
    g_hash_table_insert (prev_index, child_key (&g_array_index (prev_group->children, FbGroupChild, j)),
                         GUINT_TO_POINTER (j + 1));
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *key = child_key (&g_array_index (group->children, FbGroupChild, i));
      guint j = GPOINTER_TO_UINT (g_hash_table_lookup (prev_index, key));

      places[i] = sizes[i];
      if (j == 0)
        {
          n_new++;
          continue;
        }
      /* A box that changed size keeps its top edge: the picture reads from the top down. */
      places[i].cx = prev->places[j - 1].cx;
      places[i].cy = prev->places[j - 1].cy - prev->places[j - 1].h / 2 + sizes[i].h / 2;
      placed[i] = TRUE;
      kept[i] = prev->places[j - 1].w == sizes[i].w && prev->places[j - 1].h == sizes[i].h;
    }
  if (n_new * 2 > n)
    return NULL;

  /* A fused node takes the place of its members. */
  for (guint i = 0; i < n; i++)
    {
      FbNode *node = g_array_index (group->children, FbGroupChild, i).node;
      GArray *members;
      double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;

      if (placed[i] || node == NULL
          || (members = g_hash_table_lookup (self->fused_members, GUINT_TO_POINTER (node->id))) == NULL)
        continue;
      for (guint m = 0; m < members->len; m++)
        {
          g_autofree char *key = g_strdup_printf ("n%u", g_array_index (members, guint, m));
          guint j = GPOINTER_TO_UINT (g_hash_table_lookup (prev_index, key));
          FbPlace *p;

          if (j == 0)
            continue;
          p = &prev->places[j - 1];
          x0 = MIN (x0, p->cx - p->w / 2);
          x1 = MAX (x1, p->cx + p->w / 2);
          y0 = MIN (y0, p->cy - p->h / 2);
          y1 = MAX (y1, p->cy + p->h / 2);
        }
      if (x0 > x1)
        continue;
      places[i].cx = (x0 + x1) / 2;
      places[i].cy = (y0 + y1) / 2;
      placed[i] = TRUE;
    }
  /* Anything else new goes between its neighbours, chains of new items one after another. */
  while (progress)
    {
      progress = FALSE;
      for (guint i = 0; i < n; i++)
        if (!placed[i] && place_by_neighbours (group, places, placed, i))
          placed[i] = progress = TRUE;
    }
  for (guint i = 0; i < n; i++)
    {
      if (!placed[i])
        return NULL;
      for (guint k = 0; k < i; k++)
        if (overlaps (&places[i], &places[k]))
          return NULL;
      min_x = MIN (min_x, places[i].cx - places[i].w / 2);
      min_y = MIN (min_y, places[i].cy - places[i].h / 2);
      max_x = MAX (max_x, places[i].cx + places[i].w / 2);
      max_y = MAX (max_y, places[i].cy + places[i].h / 2);
    }

  /* Keep the picture anchored where it was unless something new sticks out. */
  dx = MAX (0, FB_GRAPH_FRAME_PAD - min_x);
  dy = MAX (0, FB_GRAPH_FRAME_PAD - min_y);
  layout = g_new0 (FbGroupLayout, 1);
  layout->seeded = TRUE;
  layout->n_children = n;
  layout->places = g_new0 (FbPlace, n);
  for (guint i = 0; i < n; i++)
    {
      layout->places[i] = places[i];
      layout->places[i].cx += dx;
      layout->places[i].cy += dy;
    }
  layout->width = MAX (max_x + dx + FB_GRAPH_FRAME_PAD, prev->width);
  layout->height = MAX (max_y + dy + FB_GRAPH_FRAME_PAD, prev->height);

  for (guint k = 0; k < prev_group->edges->len; k++)
    g_hash_table_insert (prev_edges,
                         edge_key (prev_group, &g_array_index (prev_group->edges, FbGroupEdge, k)),
                         GUINT_TO_POINTER (k + 1));
  layout->n_edges = group->edges->len;
  layout->paths = g_new0 (FbPath, group->edges->len);
  for (guint k = 0; k < group->edges->len; k++)
    {
      FbGroupEdge *edge = &g_array_index (group->edges, FbGroupEdge, k);
      g_autofree char *key = edge_key (group, edge);
      guint j = GPOINTER_TO_UINT (g_hash_table_lookup (prev_edges, key));
      gboolean same_ends = (edge->from < 0 ? dx == 0 && dy == 0 : kept[edge->from])
                           && (edge->to < 0 ? dx == 0 && dy == 0 && layout->height == prev->height
                                            : kept[edge->to]);
      FbPath *path = &layout->paths[k];

      if (j != 0 && same_ends && prev->paths[j - 1].n_points >= 4)
        {
          path->n_points = prev->paths[j - 1].n_points;
          path->points = g_memdup2 (prev->paths[j - 1].points, 2 * sizeof (double) * path->n_points);
        }
      else if (edge->from < 0 || edge->to < 0)
        port_path (layout, edge, path);
      else
        {
          FbPlace *from = &layout->places[edge->from], *to = &layout->places[edge->to];

          straight_path (path, from->cx, from->cy + from->h / 2, to->cx, to->cy - to->h / 2);
        }
    }
  g_mutex_lock (&self->mutex);
  self->n_seeded++;
  g_mutex_unlock (&self->mutex);
  return layout;
}
