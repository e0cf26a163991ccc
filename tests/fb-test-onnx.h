/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Builds small ONNX models in memory for tests, through the generated protobuf-c types, so a
 * test can make exactly the broken file it needs. Everything is owned by one TestModel. */
#pragma once

#include "onnx.pb-c.h"

#include <glib.h>

typedef struct {
  Onnx__ModelProto model;
  Onnx__GraphProto graph;
  GPtrArray       *garbage;   /* everything allocated, freed together */
} TestModel;

TestModel          *test_model_new        (int opset);
void                test_model_free       (TestModel *m);
/* Adds a float32 graph input (dims < 0 become symbolic "N"). */
Onnx__ValueInfoProto *test_model_input    (TestModel *m, const char *name, int elem_type,
                                           int rank, const int64_t *dims);
void                test_model_output     (TestModel *m, const char *name);
/* A float32 initializer with raw data 0, 1, 2, ... */
Onnx__TensorProto  *test_model_initializer(TestModel *m, const char *name, int rank, const int64_t *dims);
/* A node; inputs and outputs are NULL-terminated lists of names. */
Onnx__NodeProto    *test_model_node       (TestModel *m, const char *op_type, const char *name,
                                           const char * const *inputs, const char * const *outputs);
void                test_node_attr_int    (TestModel *m, Onnx__NodeProto *node, const char *name, int64_t v);
void                test_node_attr_graph  (TestModel *m, Onnx__NodeProto *node, const char *name,
                                           Onnx__GraphProto *graph);
GBytes             *test_model_pack       (TestModel *m);
gpointer            test_model_keep       (TestModel *m, gpointer p);   /* frees p with m */
