/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Running small graphs on the CPU target and on the interpreter, and comparing them: the
 * helpers of the CPU target's tests. Graphs are built with fb-test-interp.h. */
#pragma once

#include "fb-test-interp.h"
#include "fb-cpu.h"

/* Makes graph runnable around node: inputs[i] becomes a graph input of its type and shape, or
 * a constant when bit i of const_mask is set (NULL: an omitted optional input); every output
 * becomes a graph output; shapes are inferred. */
void       tc_finish   (FbGraph *graph, FbNode *node, FbTensor **inputs, guint const_mask);
/* The graph's input tensors (those of tc_finish that are not constants), for runs. */
GPtrArray *tc_inputs   (FbGraph *graph, FbNode *node, FbTensor **inputs, guint const_mask);
/* Compiles graph for the CPU target, runs it and the interpreter on the same inputs, and
 * asserts that every output agrees within the project's tolerance. */
void       tc_check    (FbGraph *graph, GPtrArray *inputs);
/* tc_finish, tc_inputs and tc_check in one. */
void       tc_node     (FbGraph *graph, FbNode *node, FbTensor **inputs, guint const_mask);
/* Keeps the kernel cache of this test run out of the user's home. */
void       tc_init     (int *argc, char ***argv);
