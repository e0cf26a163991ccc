/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shared between the layout (fb-graph-layout.c) and the scene it places (fb-graph-scene.c). */
#pragma once

#include "fb-graph-layout.h"

G_BEGIN_DECLS

typedef struct {
  FbNode       *node;           /* exactly one of node and group is set */
  FbGraphGroup *group;
} FbGroupChild;

struct _FbGraphGroup {
  FbGraphGroup *parent;
  char         *path;           /* unique: "/encoder/layer.0", parts of a big group "/x/#3" */
  char         *label;          /* unique among siblings: "layer.0", "encoder/layer.0", "#3" */
  char         *summary;
  guint         depth;
  guint         n_nodes;        /* recursively */
  guint         index_in_parent;
  gboolean      is_part;        /* a part of a group too big to lay out at once, not a scope */
  guint         part;           /* is_part: which part, from 0; its path says it, so that a part
                                   keeps its path when one before it is left empty */
  guint         n_parts;        /* is_part: how many parts its parent was cut into */
  GArray       *children;       /* FbGroupChild, first appearance in topological order */
  GHashTable   *by_label;       /* label -> FbGraphGroup*, only while the tree is built */
  GArray       *edges;          /* FbGroupEdge between children, built on first layout */
  GHashTable   *cache;          /* expansion key -> FbGroupLayout */
};

typedef struct {
  int       from;               /* child index, -1 for the group's input port */
  int       to;                 /* child index, -1 for the group's output port */
  FbValue  *value;
  guint     n_values;
} FbGroupEdge;

typedef struct {
  double cx, cy;                /* centre, relative to the top-left of the group's content */
  double w, h;
} FbPlace;

typedef struct {
  guint     n_points;
  double   *points;
} FbPath;

/* One group laid out with a given set of expanded descendants. Never changed once cached. */
typedef struct {
  double    width, height;      /* content, margins included (an expanded group adds a header) */
  guint     n_children;
  FbPlace  *places;             /* per child */
  guint     n_edges;
  FbPath   *paths;              /* per FbGraphGroup.edges entry */
  gboolean  seeded;             /* placed from the previous stage instead of by Graphviz */
  gboolean  holds_laid_out;     /* a stand-in (fb-graph-scene-partial.c) with something laid
                                   out inside; without, it shows as one box */
} FbGroupLayout;

struct _FbGraphLayout {
  gatomicrefcount ref_count;
  GMutex          mutex;        /* the groups' caches, shapes and the counters */
  GMutex          compute_mutex;/* one computation at a time, a later stage's included while it
                                   lays this one out first */
  gboolean        serial;       /* one group at a time, in this process, no partial scenes */
  GHashTable     *shapes;       /* GBytes (fb-graph-layout-reuse.c) -> FbGroupLayout* */
  FbGraph        *graph;
  FbGraphLayout  *previous;
  GHashTable     *fused_members;/* fused node id -> GArray of member ids (guint) */
  GPtrArray      *holds;
  FbGraphGroup   *root;
  GPtrArray      *groups;       /* every FbGraphGroup, owned */
  GHashTable     *group_by_path;
  GHashTable     *node_index;   /* FbNode* -> index in graph->nodes + 1 */
  GHashTable     *node_by_id;
  GHashTable     *node_by_name;
  FbGraphGroup  **node_group;   /* by node index: innermost group */
  guint          *node_child;   /* by node index: child index in its innermost group */
  GHashTable     *uses;         /* FbValue* -> GPtrArray of FbNode* */
  FbGraphConstants constants;
  gboolean       *is_row;       /* by node index: a Constant node drawn as rows of its readers */
  guint          *row_start;    /* by node index, and one more: its rows in rows */
  FbConstantRow  *rows;
  GHashTable     *value_reader; /* FbValue* -> the first FbNode* that shows it as a row */
  GHashTable     *value_by_id;  /* made on first use, like value_by_name */
  GHashTable     *value_by_name;
  guint           n_dot_runs;
  gint64          dot_us;       /* wall time in Graphviz */
  guint           n_seeded;
  guint           n_reused;
};

int            _fb_graph_layout_node_index (FbGraphLayout *layout,
                                            const FbNode  *node);
char          *_fb_graph_layout_key        (FbGraphGroup *group,
                                            GHashTable   *expanded);
FbGroupLayout *_fb_graph_layout_cached     (FbGraphGroup *group,
                                            const char   *key);
/* The edges between group's children (FbGroupEdge), for group->edges. */
GArray        *_fb_graph_layout_collect_edges (FbGraphLayout *layout,
                                               FbGraphGroup  *group);
/* partial: groups not laid out yet are placed without Graphviz (fb-graph-scene-partial.c), and
 * those with nothing laid out inside are boxes standing for their members. The layout's mutex
 * must be held. */
FbGraphScene  *_fb_graph_scene_new         (FbGraphLayout *layout,
                                            GHashTable    *expanded,
                                            gboolean       partial);
/* fb-graph-scene-partial.c: a stand-in layout of a group not laid out yet (children in a
 * column, in graph order; no edges), and whether anything inside it is laid out. */
FbGroupLayout *_fb_graph_layout_stand_in   (FbGraphLayout *layout,
                                            FbGraphGroup  *group,
                                            GHashTable    *expanded,
                                            GHashTable    *stand_ins);
/* fb-graph-rows.c: decides which constants are rows (before the tree is built: a Constant
 * drawn as rows is no member of any group) and, once it is, gives them their readers' groups. */
void           _fb_graph_layout_build_rows (FbGraphLayout *layout);
void           _fb_graph_layout_place_rows (FbGraphLayout *layout);
void           _fb_graph_layout_free_rows  (FbGraphLayout *layout);
/* fb-graph-group.c */
void           _fb_graph_layout_build_tree (FbGraphLayout *layout);
void           _fb_graph_group_free        (FbGraphGroup  *group);
void           _fb_group_layout_free       (gpointer       layout);
typedef struct _FbLayoutWorker FbLayoutWorker;

/* fb-graph-layout-place.c; both count what they did in layout. worker may be NULL. */
FbGroupLayout *_fb_graph_layout_dot        (FbGraphLayout  *layout,
                                            FbGraphGroup   *group,
                                            const FbPlace  *sizes,
                                            FbLayoutWorker *worker,
                                            GError        **error);
FbGroupLayout *_fb_graph_dot_place         (guint              n,
                                            const FbPlace     *sizes,
                                            guint              n_edges,
                                            const FbGroupEdge *edges,
                                            char             **message);
void           _fb_graph_dot_lock_warm     (void);
void           _fb_graph_dot_unlock        (void);
/* fb-graph-layout-reuse.c: what dot sees of a group (GBytes), and the layouts of the shapes
 * laid out before. */
GBytes        *_fb_graph_layout_shape      (FbGraphGroup  *group,
                                            const FbPlace *sizes);
FbGroupLayout *_fb_group_layout_copy       (const FbGroupLayout *layout);
FbGroupLayout *_fb_graph_layout_reuse      (FbGraphLayout *layout,
                                            GBytes        *shape);
void           _fb_graph_layout_remember_shape (FbGraphLayout *layout,
                                                GBytes        *shape,
                                                FbGroupLayout *group_layout);
/* fb-graph-layout-workers.c: processes that run dot, one per caller at a time. acquire gives
 * NULL when none can be had (the caller then runs dot in this process). place gives NULL with
 * *message NULL when the worker failed (it is dropped; the caller runs dot itself). */
FbLayoutWorker *_fb_layout_worker_acquire  (void);
void           _fb_layout_worker_release   (FbLayoutWorker *worker);
FbGroupLayout *_fb_layout_worker_place     (FbLayoutWorker    *worker,
                                            guint              n,
                                            const FbPlace     *sizes,
                                            guint              n_edges,
                                            const FbGroupEdge *edges,
                                            char             **message);
FbGroupLayout *_fb_graph_layout_seed       (FbGraphLayout *layout,
                                            FbGraphGroup  *group,
                                            const FbPlace *sizes,
                                            FbGraphGroup  *prev_group,
                                            FbGroupLayout *prev);
void           _fb_place_size_of_child     (FbGraphLayout *layout,
                                            FbGraphGroup  *group,
                                            guint          child,
                                            GHashTable    *expanded,
                                            double        *width,
                                            double        *height);

G_END_DECLS
