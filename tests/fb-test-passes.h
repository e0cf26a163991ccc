/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Builds small graphs for the pass and pipeline tests, runs the pipeline on them, and checks
 * every stage against stage 0 through the interpreter. Every node a test builds gets an entry in
 * the model's original-node table and that provenance, the way import does. */
#pragma once

#include "fb-graph.h"
#include "fb-pipeline.h"

#define TP_DIMS(...) ((const int64_t[]) { __VA_ARGS__ })
#define TP_VALS(...) ((const double[]) { __VA_ARGS__ })

/* A graph whose model declares the default-domain opset. */
FbGraph  *tp_graph        (int opset);
/* A float32 graph input. */
FbValue  *tp_input        (FbGraph *graph, const char *name, int rank, const int64_t *dims);
/* A float32 constant with values (NULL: deterministic pseudo-random values in [-1, 1)). */
FbValue  *tp_const        (FbGraph *graph, const char *name, int rank, const int64_t *dims,
                           const double *values);
/* A float32 scalar constant (rank 0). */
FbValue  *tp_scalar       (FbGraph *graph, double value);
/* A 1-D int64 constant. */
FbValue  *tp_ints         (FbGraph *graph, guint n, const int64_t *values);
/* A node reading the NULL-terminated inputs with one output, shapes inferred when the
 * attributes allow (set them right after with tp_attr_*, which infer again). */
FbValue  *tp_op           (FbGraph *graph, FbOpKind op, const char *name, ...) G_GNUC_NULL_TERMINATED;
/* The same with n_outputs outputs, into outputs (a Split's parts, say). */
void      tp_op_outputs   (FbGraph *graph, FbOpKind op, const char *name, guint n_outputs,
                           FbValue **outputs, ...) G_GNUC_NULL_TERMINATED;
/* The node that produces v (to set attributes, then call tp_reinfer). */
FbNode   *tp_node_of      (FbValue *v);
void      tp_reinfer      (FbGraph *graph, FbValue *v);
void      tp_attr_int     (FbGraph *graph, FbValue *v, const char *name, int64_t value);
void      tp_attr_float   (FbGraph *graph, FbValue *v, const char *name, float value);
void      tp_attr_ints    (FbGraph *graph, FbValue *v, const char *name, guint n, const int64_t *values);
void      tp_attr_string  (FbGraph *graph, FbValue *v, const char *name, const char *value);
/* Marks v a graph output and checks the graph (verifier, and inference of every node). */
void      tp_output       (FbGraph *graph, FbValue *v);

/* Options that run only the named passes (NULL-terminated); all others disabled. */
FbPipelineOptions *tp_only (const char *first, ...) G_GNUC_NULL_TERMINATED;
/* A pipeline over graph (taken), run with options (NULL: every pass); asserts success. */
FbPipeline *tp_run        (FbGraph *graph, const FbPipelineOptions *options);
/* Runs every stage on the same seeded random inputs and asserts that its outputs equal stage 0's
 * (rtol 1e-4, atol 1e-5). */
void      tp_assert_stages_agree (FbPipeline *pipeline, guint32 seed);
/* Nodes of op in graph, top level only or inside fused bodies too. */
guint     tp_count        (const FbGraph *graph, FbOpKind op, gboolean recursive);
/* The first top-level node of op, or NULL. */
FbNode   *tp_find         (const FbGraph *graph, FbOpKind op);
/* The change recorded for node id in a stage, or NULL. */
const FbChange *tp_change (const FbStage *stage, guint node_id);
/* The graph of the named stage. */
FbGraph  *tp_stage_graph  (FbPipeline *pipeline, const char *name);
