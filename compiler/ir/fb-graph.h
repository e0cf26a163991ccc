/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The graph IR: plain C structs, one arena per graph, stable ids.
 *
 * A graph holds nodes in topological order and the values that flow between them. Node and value
 * ids are stable across passes: a pass that copies a graph keeps every id, and new nodes get new
 * ids from the model-wide counter, so that two stages can be diffed exactly by id. Every node
 * carries its provenance: the indices of the original ONNX nodes it stands for (see FbModel). */
#pragma once

#include "fb-op.h"
#include "fb-tensor.h"

G_BEGIN_DECLS

typedef struct _FbArena FbArena;
typedef struct _FbModel FbModel;
typedef struct _FbGraph FbGraph;
typedef struct _FbNode  FbNode;
typedef struct _FbValue FbValue;

#define FB_GRAPH_ERROR (fb_graph_error_quark ())
GQuark fb_graph_error_quark (void);

typedef enum {
  FB_GRAPH_ERROR_INVALID,       /* structure is broken: cycles, dangling values, bad arity */
  FB_GRAPH_ERROR_SHAPE,         /* shapes or dtypes that an operator cannot accept */
  FB_GRAPH_ERROR_UNSUPPORTED,   /* valid ONNX this project does not handle */
} FbGraphError;

typedef enum {
  FB_ATTR_UNDEFINED = 0,
  FB_ATTR_FLOAT     = 1,
  FB_ATTR_INT       = 2,
  FB_ATTR_STRING    = 3,
  FB_ATTR_TENSOR    = 4,
  FB_ATTR_GRAPH     = 5,
  FB_ATTR_FLOATS    = 6,
  FB_ATTR_INTS      = 7,
  FB_ATTR_STRINGS   = 8,
  FB_ATTR_TYPE      = 13,       /* a type (Optional's "type"): kind and element type */
} FbAttrType;                   /* numbered as ONNX's AttributeProto.AttributeType */

typedef struct {
  const char *name;             /* attribute name (arena) */
  FbAttrType  type;
  union {
    float       f;
    int64_t     i;
    const char *s;              /* NUL-terminated copy (arena); ONNX strings are bytes but every
                                   attribute of a supported op is text */
    FbTensor   *t;              /* holds a reference */
    FbGraph    *g;              /* a subgraph owned by the node's graph */
    struct { guint n; float *v; }       floats;
    struct { guint n; int64_t *v; }     ints;
    struct { guint n; const char **v; } strings;
    struct { FbValueKind kind; FbDType dtype; } tp;
  };
} FbAttr;

typedef enum {
  FB_NODE_INSERTED = 1 << 0,    /* created by a pass (a layout transpose), not by the model */
} FbNodeFlags;

/* Layout: the layout pass marks Conv, MaxPool, AveragePool, GlobalAveragePool and
 * GlobalMaxPool nodes that take and produce channels-last tensors with the string attribute
 * "fb_layout" = "nhwc" (absent means ONNX's channels-first). Weights keep ONNX's layout. */
#define FB_ATTR_LAYOUT "fb_layout"

struct _FbValue {
  guint       id;               /* stable across stages */
  const char *name;             /* the ONNX value name (arena), unique within its graph */
  FbValueKind kind;             /* tensor unless ONNX typed it a sequence or an optional */
  FbDType     dtype;            /* FB_DTYPE_UNDEFINED until inferred; the element type of a
                                   sequence or optional */
  FbShape     shape;            /* the element shape of a sequence or optional, where known */
  FbNode     *producer;         /* NULL for graph inputs, initializers and outer-scope values */
  guint       producer_output;  /* index among the producer's outputs */
  FbTensor   *constant;         /* the value when known at compile time (initializers, folded
                                   results), with a reference; NULL otherwise */
  gboolean    is_input;         /* a graph input the caller feeds */
  gboolean    is_output;        /* a graph output */
  FbGraph    *graph;            /* the graph that declares it */
  int         buffer;           /* memory plan (plan-memory): the activation buffer that holds
                                   it, numbered from 1; values updated in place share their
                                   input's buffer; 0 when unplanned (graph inputs, constants,
                                   values inside fused bodies, sizes unknown until run time) */
  int64_t     offset;           /* memory plan: byte offset of that buffer in the activation
                                   arena (64-byte aligned); buffers whose lifetimes do not
                                   overlap may share bytes */
};

struct _FbNode {
  guint       id;               /* stable across stages */
  FbOpKind    op;               /* FB_OP_UNKNOWN for unsupported operators */
  const char *op_type;          /* ONNX op_type as written (arena) */
  const char *domain;           /* ONNX domain, "" for the default (arena) */
  const char *name;             /* ONNX node name, or a generated "OpType_N" when it had none */
  int         opset;            /* the opset version of its domain, for op-version semantics */
  guint       n_inputs;
  FbValue   **inputs;           /* NULL entries for omitted optional inputs */
  guint       n_outputs;
  FbValue   **outputs;          /* NULL entries for omitted optional outputs */
  guint       n_attrs;
  FbAttr     *attrs;
  guint       n_prov;
  guint      *prov;             /* indices into the model's original node table */
  guint       flags;            /* FbNodeFlags */
  const char *doc_string;       /* (arena) or NULL */
};

/* What the model file said about itself, and the table of its original nodes; shared by every
 * stage and kernel derived from it (reference counted). */
typedef struct {
  const char *name;             /* original node name */
  const char *op_type;
  const char *written;          /* the node as the file wrote it, when the importer brought an
                                   old operator version to the current form ("Reshape-1 (1
                                   input) shape=[2, 3]"), else NULL */
} FbOrigNode;

struct _FbModel {
  gatomicrefcount ref_count;
  char       *path;             /* the file it came from, or NULL */
  int64_t     ir_version;
  char       *producer_name;
  char       *producer_version;
  char       *domain;
  int64_t     model_version;
  char       *doc_string;
  GHashTable *opsets;           /* domain (char*) -> version (GINT_TO_POINTER) */
  GPtrArray  *metadata;         /* alternating key, value (char*) */
  GArray     *orig_nodes;       /* FbOrigNode, all graphs' nodes, top level first */
  guint       n_top_nodes;      /* how many of orig_nodes belong to the top-level graph */
  guint       next_id;          /* the next fresh node or value id (shared by all stages) */
  GHashTable *problems;         /* node name (char*) -> reason (char*): what this project cannot
                                   do with a valid model (a map or nested sequence, a string
                                   tensor, an unsupported attribute form); the model loads and is
                                   drawn, and the pipeline stops on the first */
};

struct _FbGraph {
  FbArena    *arena;            /* owns every node, value and string; shared with subgraphs */
  FbModel    *model;            /* with a reference */
  FbGraph    *parent;           /* the enclosing graph of an If/Loop body, else NULL */
  const char *name;
  GPtrArray  *nodes;            /* FbNode*, topological order */
  GPtrArray  *values;           /* FbValue* declared in this graph */
  GPtrArray  *inputs;           /* FbValue*, the order of the ONNX graph's inputs */
  GPtrArray  *outputs;          /* FbValue*, the order of the ONNX graph's outputs */
  GPtrArray  *subgraphs;        /* FbGraph* owned by this graph (freed with it) */
};

/* Model */
FbModel     *fb_model_new              (const char *path);
FbModel     *fb_model_ref              (FbModel *model);
void         fb_model_unref            (FbModel *model);
int          fb_model_opset            (FbModel *model, const char *domain);
guint        fb_model_fresh_id         (FbModel *model);
const char  *fb_model_orig_name        (FbModel *model, guint prov);

/* Arena: bump allocation, freed all at once with the graph. */
gpointer     fb_arena_alloc            (FbArena *arena, gsize size);   /* zeroed */
const char  *fb_arena_strdup           (FbArena *arena, const char *s);
gpointer     fb_arena_memdup           (FbArena *arena, gconstpointer p, gsize size);

/* Graph */
FbGraph     *fb_graph_new              (FbModel *model);
FbGraph     *fb_graph_new_subgraph     (FbGraph *parent, const char *name);
void         fb_graph_free             (FbGraph *graph);
/* A deep copy of structure with every id kept; tensors shared by reference. */
FbGraph     *fb_graph_copy             (const FbGraph *graph);
FbValue     *fb_graph_add_value        (FbGraph *graph, const char *name, FbDType dtype,
                                        const FbShape *shape);
FbValue     *fb_graph_add_constant     (FbGraph *graph, const char *name, FbTensor *tensor);
/* Creates a node with room for n_inputs / n_outputs; the caller fills inputs, then calls
 * fb_node_set_output for each output it makes. Appended at the end of graph->nodes. */
FbNode      *fb_graph_add_node         (FbGraph *graph, FbOpKind op, const char *name,
                                        guint n_inputs, guint n_outputs);
void         fb_node_set_output        (FbNode *node, guint index, FbValue *value);
/* Finds a value by name here or, for subgraphs, in enclosing graphs. */
FbValue     *fb_graph_lookup_value     (const FbGraph *graph, const char *name);
FbNode      *fb_graph_find_node        (const FbGraph *graph, guint id);
/* Reorders nodes topologically; FALSE with an error naming a node on the cycle. */
gboolean     fb_graph_toposort         (FbGraph *graph, GError **error);
/* Removes nodes whose outputs nobody uses and values nobody references. */
void         fb_graph_remove_dead      (FbGraph *graph);
/* Replaces every use of old_value (node inputs, graph outputs, subgraph captures) by new_value. */
void         fb_graph_replace_uses     (FbGraph *graph, FbValue *old_value, FbValue *new_value);
/* Users of each value: a hash table FbValue* -> GPtrArray of FbNode* (also counts subgraph
 * nodes that capture the value as the enclosing node). */
GHashTable  *fb_graph_build_uses       (const FbGraph *graph);
/* Checks structural invariants (ids unique, inputs defined before use, arity); FALSE with an
 * error naming the node. */
gboolean     fb_graph_verify           (const FbGraph *graph, GError **error);
guint        fb_graph_count_nodes      (const FbGraph *graph, gboolean recursive);

/* Node attributes */
const FbAttr *fb_node_attr             (const FbNode *node, const char *name);
int64_t      fb_node_attr_int          (const FbNode *node, const char *name, int64_t fallback);
float        fb_node_attr_float        (const FbNode *node, const char *name, float fallback);
const char  *fb_node_attr_string       (const FbNode *node, const char *name, const char *fallback);
/* NULL with *n = 0 when absent. */
const int64_t *fb_node_attr_ints       (const FbNode *node, const char *name, guint *n);
const float *fb_node_attr_floats       (const FbNode *node, const char *name, guint *n);
FbTensor    *fb_node_attr_tensor       (const FbNode *node, const char *name);
FbGraph     *fb_node_attr_graph        (const FbNode *node, const char *name);
/* Adds or replaces an attribute (copies arrays into the arena, refs tensors). */
void         fb_node_set_attr          (FbGraph *graph, FbNode *node, const FbAttr *attr);
/* The i-th input, or NULL when absent or omitted. */
FbValue     *fb_node_input             (const FbNode *node, guint i);
void         fb_node_add_prov          (FbGraph *graph, FbNode *node, const guint *prov, guint n);
/* Whether node's output is its first input's bytes under another shape (Reshape and its kin,
 * Identity, inference Dropout, a Transpose that moves only dimensions of extent 1). */
gboolean     fb_node_is_view           (const FbNode *node);
/* Whether any input or output of node is a sequence or an optional: such nodes run on the host
 * through the interpreter, and passes that fuse, fold or lay out tensors leave them alone. */
gboolean     fb_node_has_containers    (const FbNode *node);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbModel, fb_model_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbGraph, fb_graph_free)

G_END_DECLS
