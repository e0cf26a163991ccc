/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Builds small graphs through the IR builder API for the inference and cost tests, and checks
 * the shapes that come out. Shapes are written as text: "1x3x224x224", "Nx3x?x?" (letters name
 * a symbolic dimension, "?" an unknown one), "" for a scalar, "*" for an unknown rank. */
#pragma once

#include "fb-cost.h"
#include "fb-infer.h"

typedef struct {
  FbModel *model;
  FbGraph *graph;       /* the top-level graph; bodies hang off it */
  guint    counter;     /* for generated value names */
} TestGraph;

TestGraph *tg_new            (int opset);
void       tg_free           (TestGraph *tg);
FbShape    tg_shape          (const char *text);
/* A graph input of g (tg->graph when g is NULL). */
FbValue   *tg_input          (TestGraph *tg, FbGraph *g, FbDType dtype, const char *shape);
/* A value with no producer (a subgraph input or a declared output), not listed anywhere. */
FbValue   *tg_value          (TestGraph *tg, FbGraph *g, FbDType dtype, const char *shape);
FbValue   *tg_const_i64      (TestGraph *tg, FbGraph *g, int n, const int64_t *v);
FbValue   *tg_scalar_i64     (TestGraph *tg, FbGraph *g, int64_t v);
FbValue   *tg_const_f32      (TestGraph *tg, FbGraph *g, int n, const float *v);
FbValue   *tg_scalar_f32     (TestGraph *tg, FbGraph *g, float v);
FbValue   *tg_scalar_bool    (TestGraph *tg, FbGraph *g, gboolean v);
/* A tensor of zeros of the given static shape and dtype, as a constant. */
FbValue   *tg_weights        (TestGraph *tg, FbGraph *g, FbDType dtype, const char *shape);
/* A node of g with n_in inputs given as the varargs (NULL for an omitted one) and n_out fresh
 * outputs of unknown type. */
FbNode    *tg_node           (TestGraph *tg, FbGraph *g, FbOpKind op, guint n_in, guint n_out, ...);
void       tg_int            (TestGraph *tg, FbNode *node, const char *name, int64_t v);
void       tg_float          (TestGraph *tg, FbNode *node, const char *name, float v);
void       tg_str            (TestGraph *tg, FbNode *node, const char *name, const char *v);
void       tg_ints           (TestGraph *tg, FbNode *node, const char *name, guint n, const int64_t *v);
void       tg_floats         (TestGraph *tg, FbNode *node, const char *name, guint n, const float *v);
void       tg_graph_attr     (TestGraph *tg, FbNode *node, const char *name, FbGraph *body);
void       tg_tensor_attr    (TestGraph *tg, FbNode *node, const char *name, FbTensor *t);

void       tg_check_value    (const char *file, int line, const FbValue *v, FbDType dtype,
                              const char *shape);
void       tg_check_fails    (const char *file, int line, FbGraph *g, FbNode *node, int code,
                              const char *part);
void       tg_check_infers   (const char *file, int line, FbGraph *g, FbNode *node);

/* Infers node and asserts success. */
#define INFER_OK(tg, node) tg_check_infers (__FILE__, __LINE__, (tg)->graph, (node))
/* Asserts value v has dtype and the shape written as text. */
#define CHECK(v, dtype, shape) tg_check_value (__FILE__, __LINE__, (v), (dtype), (shape))
/* Infers node and asserts an FB_GRAPH_ERROR with code whose message holds part. */
#define INFER_FAILS(tg, node, code, part) \
  tg_check_fails (__FILE__, __LINE__, (tg)->graph, (node), (code), (part))
/* Infers and checks output k of node. */
#define OUT(node, k) ((node)->outputs[(k)])

#define I64S(...) ((const int64_t[]) { __VA_ARGS__ })
#define F32S(...) ((const float[]) { __VA_ARGS__ })
#define N_ARGS(type, ...) (sizeof ((type[]) { __VA_ARGS__ }) / sizeof (type))
