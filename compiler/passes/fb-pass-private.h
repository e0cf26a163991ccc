/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the passes share with the pipeline and with each other: the pass interface, the context a
 * pass runs in, and small graph-editing helpers. Never included outside compiler/passes and the
 * pass tests. */
#pragma once

#include "fb-graph.h"
#include "fb-pipeline.h"

G_BEGIN_DECLS

/* Where a node of the previous stage went when it is gone from this one. The diff finds fused
 * members in bodies by itself; everything else a pass removes on purpose, it records. */
typedef struct {
  FbChangeKind kind;            /* FB_CHANGE_FUSED or FB_CHANGE_REMOVED */
  guint        target;          /* the node that now stands for it, or 0 */
} FbFate;

typedef struct {
  const FbPipelineOptions *options;
  GHashTable              *no_fuse;      /* node names kept out of fusions (set of char*) */
  GCancellable            *cancellable;
  GString                 *summary;      /* the stage's one line, built with _fb_pass_note */
  GHashTable              *fates;        /* node id -> FbFate* */
} FbPassContext;

typedef gboolean (*FbPassFunc) (FbPassContext *ctx, FbGraph *graph, GError **error);

typedef enum {
  FB_PASS_READS_NO_FUSE = 1 << 0,       /* the pass looks at options->no_fuse */
  FB_PASS_READS_LAYOUT  = 1 << 1,       /* the pass looks at options->layout */
} FbPassReads;

typedef struct {
  const char *name;
  FbPassFunc  run;
  guint       reads;                     /* FbPassReads: which options decide its result */
} FbPassInfo;

/* The flat list of passes, in order. */
const FbPassInfo *_fb_pipeline_passes   (guint *n_passes);
/* Tests only: makes the pipeline run func in place of the named pass (NULL restores it). */
void              _fb_pipeline_override (FbPipeline *pipeline, const char *name, FbPassFunc func);
/* The between-pass verifier: structure, then dtype and shape consistency of every node. */
gboolean          _fb_pipeline_verify   (const FbGraph *graph, GError **error);
/* The diff of two consecutive stages, keyed on node ids (FbChange). */
GArray           *_fb_stage_diff        (const FbGraph *before, const FbGraph *after,
                                         GHashTable *fates);

/* The passes, in pipeline order. */
gboolean _fb_pass_cleanup          (FbPassContext *ctx, FbGraph *graph, GError **error);
gboolean _fb_pass_fold_constants   (FbPassContext *ctx, FbGraph *graph, GError **error);
gboolean _fb_pass_simplify         (FbPassContext *ctx, FbGraph *graph, GError **error);
gboolean _fb_pass_cse              (FbPassContext *ctx, FbGraph *graph, GError **error);
gboolean _fb_pass_fold_batchnorm   (FbPassContext *ctx, FbGraph *graph, GError **error);
gboolean _fb_pass_fuse_epilogue    (FbPassContext *ctx, FbGraph *graph, GError **error);
gboolean _fb_pass_fuse_elementwise (FbPassContext *ctx, FbGraph *graph, GError **error);
gboolean _fb_pass_layout           (FbPassContext *ctx, FbGraph *graph, GError **error);
gboolean _fb_pass_plan_memory      (FbPassContext *ctx, FbGraph *graph, GError **error);

/* ---- context ------------------------------------------------------------------------------ */

/* Appends one clause to the stage summary ("folded 12 BatchNormalization"). */
void     _fb_pass_note             (FbPassContext *ctx, const char *format, ...) G_GNUC_PRINTF (2, 3);
void     _fb_pass_record_fate      (FbPassContext *ctx, guint node_id, FbChangeKind kind,
                                    guint target);
/* Whether --no-fuse names this node. */
gboolean _fb_pass_no_fuse          (FbPassContext *ctx, const FbNode *node);
gboolean _fb_pass_cancelled        (FbPassContext *ctx, GError **error);

/* ---- graph editing ------------------------------------------------------------------------ */

/* A new value named after base (made unique with its id). */
FbValue *_fb_value_new             (FbGraph *graph, const char *base, FbDType dtype,
                                    const FbShape *shape);
FbValue *_fb_constant_new          (FbGraph *graph, const char *base, FbTensor *tensor);
/* A new node reading inputs, with n_outputs empty output slots, appended to graph->nodes. It
 * inherits the provenance of like (when given): a rewrite stands for what it replaced. */
FbNode  *_fb_node_new              (FbGraph *graph, FbOpKind op, const char *name,
                                    FbValue *const *inputs, guint n_inputs, guint n_outputs,
                                    const FbNode *like);
/* Gives from's outputs (the values themselves, ids and names kept) to to; from is left with
 * none, so fb_graph_remove_dead drops it. */
void     _fb_node_steal_outputs    (FbNode *from, FbNode *to);
void     _fb_node_set_int          (FbGraph *graph, FbNode *node, const char *name, int64_t v);
void     _fb_node_set_float        (FbGraph *graph, FbNode *node, const char *name, float v);
void     _fb_node_set_string       (FbGraph *graph, FbNode *node, const char *name, const char *v);
void     _fb_node_set_ints         (FbGraph *graph, FbNode *node, const char *name,
                                    const int64_t *v, guint n);
/* Drops the tensor attributes of a node that left its graph: the graph frees only what its
 * listed nodes hold, and a folded Constant would otherwise keep its tensor forever. */
void     _fb_node_release          (FbNode *node);
/* Shape inference of one node (its errors name the node). */
gboolean _fb_node_infer            (FbGraph *graph, FbNode *node, GError **error);
/* Whether value may be replaced by another everywhere: replacing a graph output by a graph
 * input or by another output would rename one of the graph's interface values. */
gboolean _fb_can_replace           (const FbValue *old_value, const FbValue *new_value);

/* ---- constants ---------------------------------------------------------------------------- */

/* TRUE when v is a constant whose elements all equal one number (stored in *out). */
gboolean _fb_const_uniform         (const FbValue *v, double *out);
/* TRUE when v is a constant whose elements all equal target (float tolerance). */
gboolean _fb_const_equals          (const FbValue *v, double target);
/* The elements of an integer constant of at most max elements; NULL otherwise (g_free). */
int64_t *_fb_const_ints            (const FbValue *v, guint max, guint *n);
/* Broadcasting small against big gives big: an operand that cannot grow the result. */
gboolean _fb_shape_fits_in         (const FbShape *small, const FbShape *big);
/* A float32 tensor of the given shape, zero filled (NULL on overflow). */
FbTensor *_fb_tensor_f32           (int rank, const int64_t *dims);

/* ---- fusion ------------------------------------------------------------------------------- */

/* Moves members (nodes of graph, in topological order) into the body of one new FUSED node of
 * the given kind, named after anchor. Values the members read from outside become the node's
 * inputs; member outputs used outside (or graph outputs) become its outputs, the same values as
 * before. uses is fb_graph_build_uses of the graph at the start of the pass. The caller
 * re-sorts the graph. */
FbNode  *_fb_fuse_group            (FbPassContext *ctx, FbGraph *graph, GPtrArray *members,
                                    const char *kind, const FbNode *anchor, GHashTable *uses);
/* Whether any user of a value lies outside the set of nodes (or the value is a graph output). */
gboolean _fb_used_outside          (const FbValue *value, GHashTable *uses, GHashTable *inside);

G_END_DECLS
