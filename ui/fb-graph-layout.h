/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Graph layout for the graph view, without GTK.
 *
 * A graph's node names ("/encoder/layer.0/attention/MatMul") form a tree of name scopes; groups
 * of that tree are shown either collapsed (one box) or expanded (a frame around their members).
 * Each expanded group is laid out on its own with Graphviz "dot", treating its expanded children
 * as big boxes, and the result is cached by what is expanded inside it, so that expanding and
 * collapsing only lays out what changed. A layout may be seeded by the layout of the previous
 * stage: items that exist in both keep their places, so a pass's diff reads as a diff.
 *
 * Constants are drawn the way Netron draws them: a Constant node that only feeds other nodes,
 * and an initializer (a value known at compile time that no node makes), is no box of its own
 * but a row inside the box of each node that reads it. FB_GRAPH_CONSTANTS_AS_NODES keeps
 * Constant nodes as boxes (initializers stay rows: no node makes them).
 *
 * fb_graph_layout_compute () blocks and is meant for a worker thread; the FbGraphScene it
 * returns is immutable, and the UI thread draws it while the next one is being computed. */
#pragma once

#include "fb-graph.h"
#include "fb-pipeline.h"

#include <gio/gio.h>

G_BEGIN_DECLS

#define FB_LAYOUT_ERROR (fb_layout_error_quark ())
GQuark fb_layout_error_quark (void);

typedef enum {
  FB_LAYOUT_ERROR_GRAPHVIZ,      /* Graphviz refused the graph or has no "dot" plugin */
  FB_LAYOUT_ERROR_CANCELLED,
} FbLayoutError;

typedef struct _FbGraphLayout FbGraphLayout;
typedef struct _FbGraphGroup  FbGraphGroup;
typedef struct _FbGraphScene  FbGraphScene;

/* Groups with more direct members than this are split into consecutive parts, so that no single
 * Graphviz run sees more than this many boxes. */
#define FB_GRAPH_GROUP_MAX_CHILDREN 120
/* How many boxes the default expansion lets a picture hold. */
#define FB_GRAPH_LAYOUT_DEFAULT_BUDGET 150

typedef enum {
  FB_GRAPH_CONSTANTS_AS_ROWS,    /* Constant nodes and initializers are rows of their readers */
  FB_GRAPH_CONSTANTS_AS_NODES,   /* Constant nodes are boxes; initializers are still rows */
} FbGraphConstants;

/* A constant that a node reads, drawn as a row inside the node's box. */
typedef struct {
  FbValue        *value;         /* the tensor read; value->constant holds it */
  FbNode         *constant;      /* the Constant node that makes it, NULL for an initializer or
                                    a value a pass folded */
  guint           input;         /* the reader's input slot */
} FbConstantRow;

/* The row's label: the ONNX name of the reader's input slot ("W", "shape"), else the value's. */
const char      *fb_constant_row_label            (const FbNode        *reader,
                                                   const FbConstantRow *row);
/* "float32[64x3x7x7]", "int64[3] = [1,-1,64]", "float32 = 0.5": the type, and the value when
 * it has at most six elements. */
char            *fb_constant_row_text             (const FbConstantRow *row);

/* previous (may be NULL) is the layout of the stage before, changes (FbChange, may be NULL) the
 * diff against it: unchanged items keep the places they had there, and a fused node takes the
 * place of its members. The graph must outlive the layout: see fb_graph_layout_hold ().
 * fb_graph_layout_new () draws constants as rows. previous must draw them the same way. */
FbGraphLayout   *fb_graph_layout_new              (FbGraph       *graph,
                                                   FbGraphLayout *previous,
                                                   GArray        *changes);
FbGraphLayout   *fb_graph_layout_new_full         (FbGraph          *graph,
                                                   FbGraphLayout    *previous,
                                                   GArray           *changes,
                                                   FbGraphConstants  constants);
FbGraphConstants fb_graph_layout_get_constants    (FbGraphLayout *layout);
/* TRUE for a Constant node drawn as rows of its readers instead of as a box. */
gboolean         fb_graph_layout_node_is_row      (FbGraphLayout *layout,
                                                   const FbNode  *node);
/* The constants node shows as rows, in input order; NULL with *n_rows 0 when none. */
const FbConstantRow *fb_graph_layout_node_rows    (FbGraphLayout *layout,
                                                   const FbNode  *node,
                                                   guint         *n_rows);
/* The first node (in graph order) that shows value as a row, or NULL. */
FbNode          *fb_graph_layout_constant_reader  (FbGraphLayout *layout,
                                                   const FbValue *value);
/* A value declared in the graph, by id or by name; NULL when there is none. */
FbValue         *fb_graph_layout_find_value       (FbGraphLayout *layout,
                                                   guint          value_id);
FbValue         *fb_graph_layout_find_value_by_name (FbGraphLayout *layout,
                                                     const char    *name);
FbGraphLayout   *fb_graph_layout_ref              (FbGraphLayout *layout);
void             fb_graph_layout_unref            (FbGraphLayout *layout);
/* Keeps data alive (released with release) as long as the layout lives: the owner of the graph. */
void             fb_graph_layout_hold             (FbGraphLayout *layout,
                                                   gpointer       data,
                                                   GDestroyNotify release);
FbGraph         *fb_graph_layout_get_graph        (FbGraphLayout *layout);
FbGraphLayout   *fb_graph_layout_get_previous     (FbGraphLayout *layout);
FbGraphGroup    *fb_graph_layout_get_root         (FbGraphLayout *layout);
FbGraphGroup    *fb_graph_layout_lookup_group     (FbGraphLayout *layout,
                                                   const char    *path);
/* The innermost group holding node (the root for nodes without a scope); for a Constant node
 * drawn as rows, the group of its first reader. */
FbGraphGroup    *fb_graph_layout_node_group       (FbGraphLayout *layout,
                                                   const FbNode  *node);
FbNode          *fb_graph_layout_find_node        (FbGraphLayout *layout,
                                                   guint          node_id);
FbNode          *fb_graph_layout_find_node_by_name(FbGraphLayout *layout,
                                                   const char    *name);
/* A set of group paths (char* -> itself) to expand so that the picture holds at most budget
 * boxes, outer groups first. */
GHashTable      *fb_graph_layout_default_expansion(FbGraphLayout *layout,
                                                   guint          budget);
/* Lays out the groups of expanded (a set of paths; the root is always expanded) that are not in
 * the cache yet, and places everything. Groups are laid out on every core (Graphviz in worker
 * processes: it is not thread-safe), innermost first, the top of the picture before the rest,
 * and a group of the same structure as one laid out before takes its layout without a run.
 * Blocking: call it from a worker thread. */
FbGraphScene    *fb_graph_layout_compute          (FbGraphLayout *layout,
                                                   GHashTable    *expanded,
                                                   GCancellable  *cancellable,
                                                   GError       **error);
/* Called in the main context of the caller of compute_async with a partial scene: what is laid
 * out so far in its place, groups still waiting as boxes standing for their members. */
typedef void   (*FbGraphLayoutProgress)           (FbGraphScene  *partial,
                                                   gpointer       user_data);
/* first: group paths (may be NULL) to lay out before any other, what the viewport shows. While a
 * layout takes long, progress (may be NULL) gets partial scenes, the first of them soon;
 * progress_destroy frees progress_data once no more can come (after callback, or before). */
void             fb_graph_layout_compute_async    (FbGraphLayout      *layout,
                                                   GHashTable         *expanded,
                                                   GCancellable       *cancellable,
                                                   GAsyncReadyCallback callback,
                                                   gpointer            user_data);
void             fb_graph_layout_compute_progressive (FbGraphLayout        *layout,
                                                      GHashTable           *expanded,
                                                      const char * const   *first,
                                                      GCancellable         *cancellable,
                                                      FbGraphLayoutProgress progress,
                                                      gpointer              progress_data,
                                                      GDestroyNotify        progress_destroy,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
/* One group at a time, in this process, without partial scenes: the serial layout, which the
 * parallel one must equal. */
void             fb_graph_layout_set_serial       (FbGraphLayout *layout,
                                                   gboolean       serial);
FbGraphScene    *fb_graph_layout_compute_finish   (FbGraphLayout *layout,
                                                   GAsyncResult  *result,
                                                   GError       **error);
/* How many group layouts ran Graphviz, and how many were placed from the previous stage. */
guint            fb_graph_layout_n_dot_runs       (FbGraphLayout *layout);
guint            fb_graph_layout_n_seeded         (FbGraphLayout *layout);
/* How many group layouts were copied from a group of the same structure instead, and how long
 * the Graphviz runs took in all (wall time, summed over the workers). */
guint            fb_graph_layout_n_reused         (FbGraphLayout *layout);
double           fb_graph_layout_dot_seconds      (FbGraphLayout *layout);

const char      *fb_graph_group_get_path          (const FbGraphGroup *group);
const char      *fb_graph_group_get_label         (const FbGraphGroup *group);
FbGraphGroup    *fb_graph_group_get_parent        (const FbGraphGroup *group);
guint            fb_graph_group_get_n_nodes       (const FbGraphGroup *group);
guint            fb_graph_group_get_depth         (const FbGraphGroup *group);
/* "384 nodes · 96 MatMul": the size and the most frequent op. */
const char      *fb_graph_group_get_summary       (const FbGraphGroup *group);
/* Direct members: n_children, then each is a node or a group. */
guint            fb_graph_group_get_n_children    (const FbGraphGroup *group);
FbNode          *fb_graph_group_get_child_node    (const FbGraphGroup *group,
                                                   guint               index);
FbGraphGroup    *fb_graph_group_get_child_group   (const FbGraphGroup *group,
                                                   guint               index);
/* TRUE when group is ancestor or equal to other. */
gboolean         fb_graph_group_contains          (const FbGraphGroup *group,
                                                   const FbGraphGroup *other);

/* The scene: every visible box in one coordinate space (pixels at zoom 1, y grows down). */
typedef enum {
  FB_SCENE_ITEM_NODE,            /* a node */
  FB_SCENE_ITEM_GROUP,           /* a collapsed group: one box */
  FB_SCENE_ITEM_FRAME,           /* an expanded group: a frame drawn under its members */
} FbSceneItemKind;

typedef struct {
  FbSceneItemKind kind;
  FbNode         *node;          /* NODE */
  FbGraphGroup   *group;         /* GROUP and FRAME */
  double          x, y;          /* top-left corner */
  double          width, height;
  int             parent;        /* index of the enclosing FRAME, -1 at the top */
  guint           n_rows;        /* NODE: the constants it reads, drawn as rows in its box */
  const FbConstantRow *rows;     /* owned by the layout */
} FbSceneItem;

typedef struct {
  int             from;          /* item index; a FRAME when the edge enters it from outside */
  int             to;            /* item index; a FRAME when the edge leaves it */
  FbValue        *value;         /* what it carries (the first, when it bundles several) */
  guint           n_values;      /* how many distinct values it bundles */
  guint           n_points;      /* 1 + 3k: a start point and k cubic Bézier segments */
  double         *points;        /* x, y pairs */
  double          label_x, label_y;
} FbSceneEdge;

FbGraphScene    *fb_graph_scene_ref               (FbGraphScene *scene);
void             fb_graph_scene_unref             (FbGraphScene *scene);
FbGraphLayout   *fb_graph_scene_get_layout        (FbGraphScene *scene);
guint            fb_graph_scene_n_items           (FbGraphScene *scene);
/* TRUE for a scene shown while the layout goes on: some groups are not laid out yet. */
gboolean         fb_graph_scene_is_partial        (FbGraphScene *scene);
const FbSceneItem *fb_graph_scene_item            (FbGraphScene *scene,
                                                   guint         index);
guint            fb_graph_scene_n_edges           (FbGraphScene *scene);
const FbSceneEdge *fb_graph_scene_edge            (FbGraphScene *scene,
                                                   guint         index);
void             fb_graph_scene_get_bounds        (FbGraphScene *scene,
                                                   double       *width,
                                                   double       *height);
/* The item that shows node: the node's own box, or the collapsed group that hides it (for a
 * Constant node drawn as rows, its first reader's); -1 when the node is not in this graph. */
int              fb_graph_scene_find_node         (FbGraphScene *scene,
                                                   const FbNode *node);
int              fb_graph_scene_find_group        (FbGraphScene       *scene,
                                                   const FbGraphGroup *group);
/* The item that shows value as a row (its first reader, or the group that hides it), or -1. */
int              fb_graph_scene_find_constant     (FbGraphScene  *scene,
                                                   const FbValue *value);
/* The row of NODE item under scene point (x, y), or -1 (outside the rows, or on "+N more"). */
int              fb_graph_scene_row_at            (FbGraphScene *scene,
                                                   guint         item,
                                                   double        x,
                                                   double        y);
/* Where row of NODE item is drawn, in scene coordinates; FALSE when it is not drawn (one of the
 * rows folded into "+N more"). */
gboolean         fb_graph_scene_row_rect          (FbGraphScene *scene,
                                                   guint         item,
                                                   guint         row,
                                                   double       *x,
                                                   double       *y,
                                                   double       *width,
                                                   double       *height);
/* The topmost item at (x, y): a node or collapsed group before the frame around it. */
int              fb_graph_scene_item_at           (FbGraphScene *scene,
                                                   double        x,
                                                   double        y);
/* Items that feed item (producers) or that item feeds (consumers), in graph order; do not free. */
GArray          *fb_graph_scene_producers         (FbGraphScene *scene,
                                                   guint         item);
GArray          *fb_graph_scene_consumers         (FbGraphScene *scene,
                                                   guint         item);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbGraphLayout, fb_graph_layout_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbGraphScene, fb_graph_scene_unref)

G_END_DECLS
