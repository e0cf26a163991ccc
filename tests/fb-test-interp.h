/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Builds one-node graphs and small tensors for the interpreter's tests. Everything a test makes
 * through these helpers (graphs, tensors, outputs) is kept in one pool that ti_done() frees. */
#pragma once

#include "fb-graph.h"
#include "fb-interp.h"

#define D(...) ((const int64_t[]) { __VA_ARGS__ })
#define V(...) ((const double[]) { __VA_ARGS__ })
#define TI_IN(...) ((FbTensor *[]) { __VA_ARGS__ })

/* A graph whose model declares the default-domain opset. */
FbGraph  *ti_graph       (int opset);
/* A node with fresh input and output values named after the node. */
FbNode   *ti_node        (FbGraph *graph, FbOpKind op, guint n_inputs, guint n_outputs);
void      ti_attr_int    (FbGraph *graph, FbNode *node, const char *name, int64_t v);
void      ti_attr_float  (FbGraph *graph, FbNode *node, const char *name, float v);
void      ti_attr_string (FbGraph *graph, FbNode *node, const char *name, const char *v);
void      ti_attr_ints   (FbGraph *graph, FbNode *node, const char *name, guint n, const int64_t *v);
void      ti_attr_floats (FbGraph *graph, FbNode *node, const char *name, guint n, const float *v);
void      ti_attr_strings(FbGraph *graph, FbNode *node, const char *name, guint n, const char **v);
void      ti_attr_tensor (FbGraph *graph, FbNode *node, const char *name, FbTensor *t);
void      ti_attr_graph  (FbGraph *graph, FbNode *node, const char *name, FbGraph *sub);

/* A tensor of any type from double values (NULL values: zeros); int64 exactly from int64. */
FbTensor *ti_tensor      (FbDType dtype, int rank, const int64_t *dims, const double *values);
FbTensor *ti_f32         (int rank, const int64_t *dims, const double *values);
FbTensor *ti_i64         (int rank, const int64_t *dims, const int64_t *values);
/* Deterministic pseudo-random float32 values in [-1, 1). */
FbTensor *ti_random      (int rank, const int64_t *dims, guint32 seed);

/* Runs the node and asserts success. The outputs are kept in the pool; ti_run's array is the
 * caller's to g_free. */
FbTensor **ti_run        (FbNode *node, FbTensor **inputs);
FbTensor *ti_run1        (FbNode *node, FbTensor **inputs);
/* Runs the node; asserts failure with the given code and a message naming the node. */
void      ti_run_fails   (FbNode *node, FbTensor **inputs, FbInterpError code);

/* Asserts type, shape and values (|actual - expected| <= tol, NaN matches NaN). */
void      ti_assert      (const FbTensor *t, FbDType dtype, int rank, const int64_t *dims,
                          const double *values, double tol);
/* Asserts that two tensors agree within tol. */
void      ti_assert_close(const FbTensor *actual, const FbTensor *expected, double tol);

/* Frees everything made since the last ti_done. */
void      ti_done        (void);
