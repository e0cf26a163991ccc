/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Running small graphs on the CPU target and on the interpreter, and comparing them: the
 * helpers of the CPU target's tests. Graphs are built with fb-test-interp.h. */
#pragma once

#include "fb-test-interp.h"
#include "fb-cpu.h"
#include "fb-pipeline.h"

#include <json-glib/json-glib.h>

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
/* Seeded float32 inputs in [-1, 1] for every input of graph. */
GPtrArray *tc_seeded_inputs (const FbGraph *graph, guint32 seed);
/* Asserts that actual agrees with expected (the interpreter's) within the project's tolerance;
 * what names the run in the message. */
void       tc_assert_agree  (const char *what, GPtrArray *expected, GPtrArray *actual);
/* Runs m twice on inputs (the second run must not build on the first) and compares both runs
 * with the interpreter on graph. */
void       tc_check_module  (const char *what, FbCpuModule *m, const FbGraph *graph,
                             GPtrArray *inputs);
/* No two buffers of plan share bytes while both are alive, but where one dies at the kernel
 * that writes the other (in place) or both lie in one concatenation written in place. */
void       tc_check_arena   (const FbPlan *plan);
/* The exported library of the bundle at bundle (lib/libfbmodel.so, its own copy of the
 * convolution helper), linked into a program with the system's cc in dir and run twice on the
 * one input; every output against the interpreter's on graph. */
void       tc_check_shared_library (const char *dir, const char *bundle, const FbGraph *graph,
                                    GPtrArray *inputs);
/* tests/FOLDER/NAME.onnx through the pass pipeline in layout, without the pass skip (or NULL). */
FbPipeline *tc_pipeline (const char *folder, const char *name, FbLayout layout, const char *skip);
/* tests/FOLDER/NAME.onnx imported. */
FbGraph    *tc_load     (const char *folder, const char *name);
/* What a test looks for in a plan (the convolutions adding in place, say): how many, each
 * checked with the test's own assertions. */
typedef guint (*TcPlanCount) (const FbPlan *plan);
/* Compiles graph for the cpu target and asserts: count finds expect in the plan, no two
 * buffers overlap while alive (tc_check_arena), two runs agree with the interpreter. With
 * bundle, the same of the plan written as a bundle and loaded back, and of the bundle's
 * exported library when library (linked into a program with the system's cc). */
void       tc_check_compiled (const char *what, const FbGraph *graph, TcPlanCount count,
                              guint expect, gboolean bundle, gboolean library);
/* Keeps the kernel cache of this test run out of the user's home. */
void       tc_init     (int *argc, char ***argv);
/* The "convolution" objects of a parsed bundle plan.json's phases, in kernel order, that have
 * member (all of them when NULL); borrowed from parser. */
GPtrArray *tc_plan_convolutions (JsonParser *parser, const char *member);
