/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Sequences and optionals: the operators' ONNX semantics on the interpreter (positions counted
 * from the back, default positions, keepdims and new_axis, out-of-range positions naming the
 * node), their files, and the Silero-VAD-style case (tests/cases/silero-vad/: a top-level If whose
 * output is a sequence) checked against ONNX Runtime on the interpreter and the cpu target, with
 * the cuda target refusing it plainly. */
#include "fb-test-interp.h"
#include "fb-case-check.h"
#include "fb-compare.h"
#include "fb-cpu.h"
#include "fb-cuda.h"
#include "fb-onnx-import.h"
#include "fb-printer.h"
#include "fb-tensor-io.h"

#include <glib/gstdio.h>
#include <string.h>

static FbTensor *
seq_of (guint n, FbTensor **items)
{
  g_autoptr(GPtrArray) list = g_ptr_array_new ();

  for (guint i = 0; i < n; i++)
    g_ptr_array_add (list, items[i]);
  return fb_tensor_new_sequence (items[0]->dtype, list);
}

static void
test_positions (void)
{
  FbGraph *g = ti_graph (17);
  FbTensor *a = ti_f32 (1, D (1), V (1)), *b = ti_f32 (1, D (1), V (2)), *c = ti_f32 (1, D (1), V (3));
  g_autoptr(FbTensor) seq = seq_of (2, (FbTensor *[]) { a, b });
  FbNode *insert = ti_node (g, FB_OP_SEQUENCE_INSERT, 3, 1);
  FbNode *append = ti_node (g, FB_OP_SEQUENCE_INSERT, 2, 1);
  FbNode *at = ti_node (g, FB_OP_SEQUENCE_AT, 2, 1);
  FbNode *erase = ti_node (g, FB_OP_SEQUENCE_ERASE, 2, 1);
  FbNode *erase_last = ti_node (g, FB_OP_SEQUENCE_ERASE, 1, 1);
  FbNode *length = ti_node (g, FB_OP_SEQUENCE_LENGTH, 1, 1);
  FbTensor *r;

  /* -1 inserts before the last element; no position appends. */
  r = ti_run1 (insert, TI_IN (seq, c, ti_i64 (0, NULL, (int64_t[]) { -1 })));
  g_assert_cmpuint (fb_tensor_n_items (r), ==, 3);
  g_assert_true (fb_tensor_item (r, 1) == c);
  g_assert_true (fb_tensor_item (r, 2) == b);
  r = ti_run1 (append, TI_IN (seq, c));
  g_assert_true (fb_tensor_item (r, 2) == c);
  /* The input sequence is not changed by either. */
  g_assert_cmpuint (fb_tensor_n_items (seq), ==, 2);
  /* Inserting at the length is appending; one past it is an error naming the node. */
  r = ti_run1 (insert, TI_IN (seq, c, ti_i64 (0, NULL, (int64_t[]) { 2 })));
  g_assert_true (fb_tensor_item (r, 2) == c);
  ti_run_fails (insert, TI_IN (seq, c, ti_i64 (0, NULL, (int64_t[]) { 3 })),
                FB_INTERP_ERROR_RUNTIME);
  ti_run_fails (insert, TI_IN (seq, c, ti_i64 (0, NULL, (int64_t[]) { -3 })),
                FB_INTERP_ERROR_RUNTIME);

  r = ti_run1 (at, TI_IN (seq, ti_i64 (0, NULL, (int64_t[]) { -1 })));
  ti_assert (r, FB_DTYPE_FLOAT32, 1, D (1), V (2), 0);
  ti_run_fails (at, TI_IN (seq, ti_i64 (0, NULL, (int64_t[]) { 2 })), FB_INTERP_ERROR_RUNTIME);
  ti_run_fails (at, TI_IN (seq, ti_i64 (0, NULL, (int64_t[]) { -3 })), FB_INTERP_ERROR_RUNTIME);

  r = ti_run1 (erase, TI_IN (seq, ti_i64 (0, NULL, (int64_t[]) { -2 })));
  g_assert_cmpuint (fb_tensor_n_items (r), ==, 1);
  g_assert_true (fb_tensor_item (r, 0) == b);
  r = ti_run1 (erase_last, TI_IN (seq));
  g_assert_true (fb_tensor_item (r, 0) == a && fb_tensor_n_items (r) == 1);
  ti_run_fails (erase, TI_IN (seq, ti_i64 (0, NULL, (int64_t[]) { 2 })), FB_INTERP_ERROR_RUNTIME);

  ti_assert (ti_run1 (length, TI_IN (seq)), FB_DTYPE_INT64, 0, NULL, V (2), 0);
  /* A tensor where a sequence is needed is an error, not a crash. */
  ti_run_fails (length, TI_IN (a), FB_INTERP_ERROR_RUNTIME);
  /* A tensor of another element type cannot join the sequence. */
  ti_run_fails (append, TI_IN (seq, ti_i64 (1, D (1), (int64_t[]) { 1 })), FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_split_concat (void)
{
  FbGraph *g = ti_graph (17);
  FbTensor *x = ti_f32 (2, D (2, 3), V (1, 2, 3, 4, 5, 6));
  FbNode *ones = ti_node (g, FB_OP_SPLIT_TO_SEQUENCE, 1, 1);
  FbNode *chunks = ti_node (g, FB_OP_SPLIT_TO_SEQUENCE, 2, 1);
  FbNode *concat = ti_node (g, FB_OP_CONCAT_FROM_SEQUENCE, 1, 1);
  FbNode *stack = ti_node (g, FB_OP_CONCAT_FROM_SEQUENCE, 1, 1);
  FbTensor *s;

  /* No split: pieces of one along axis 1, squeezed by keepdims = 0. */
  ti_attr_int (g, ones, "axis", 1);
  ti_attr_int (g, ones, "keepdims", 0);
  s = ti_run1 (ones, TI_IN (x));
  g_assert_cmpuint (fb_tensor_n_items (s), ==, 3);
  ti_assert (fb_tensor_item (s, 2), FB_DTYPE_FLOAT32, 1, D (2), V (3, 6), 0);

  /* A scalar split of 2 over 3: pieces of 2 and 1; keepdims does not apply. */
  ti_attr_int (g, chunks, "axis", -1);
  ti_attr_int (g, chunks, "keepdims", 0);
  s = ti_run1 (chunks, TI_IN (x, ti_i64 (0, NULL, (int64_t[]) { 2 })));
  g_assert_cmpuint (fb_tensor_n_items (s), ==, 2);
  ti_assert (fb_tensor_item (s, 0), FB_DTYPE_FLOAT32, 2, D (2, 2), V (1, 2, 4, 5), 0);
  ti_assert (fb_tensor_item (s, 1), FB_DTYPE_FLOAT32, 2, D (2, 1), V (3, 6), 0);
  /* A list must add up to the extent. */
  s = ti_run1 (chunks, TI_IN (x, ti_i64 (1, D (2), (int64_t[]) { 1, 2 })));
  ti_assert (fb_tensor_item (s, 1), FB_DTYPE_FLOAT32, 2, D (2, 2), V (2, 3, 5, 6), 0);
  ti_run_fails (chunks, TI_IN (x, ti_i64 (1, D (2), (int64_t[]) { 1, 1 })), FB_INTERP_ERROR_RUNTIME);
  ti_run_fails (chunks, TI_IN (x, ti_i64 (0, NULL, (int64_t[]) { 0 })), FB_INTERP_ERROR_RUNTIME);

  /* Concatenating the pieces gives x back; stacking them adds an axis. */
  ti_attr_int (g, concat, "axis", -1);
  ti_assert (ti_run1 (concat, TI_IN (s)), FB_DTYPE_FLOAT32, 2, D (2, 3), V (1, 2, 3, 4, 5, 6), 0);
  s = ti_run1 (ones, TI_IN (x));
  ti_attr_int (g, stack, "axis", -1);
  ti_attr_int (g, stack, "new_axis", 1);
  ti_assert (ti_run1 (stack, TI_IN (s)), FB_DTYPE_FLOAT32, 2, D (2, 3), V (1, 2, 3, 4, 5, 6), 0);
  ti_attr_int (g, stack, "axis", 0);
  ti_assert (ti_run1 (stack, TI_IN (s)), FB_DTYPE_FLOAT32, 2, D (3, 2), V (1, 4, 2, 5, 3, 6), 0);
  /* With new_axis the axis may be one past the elements' rank, not two. */
  ti_attr_int (g, stack, "axis", 2);
  ti_run_fails (stack, TI_IN (s), FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

static void
test_optional (void)
{
  FbGraph *g = ti_graph (16);
  FbTensor *x = ti_f32 (1, D (2), V (1, 2));
  FbNode *wrap = ti_node (g, FB_OP_OPTIONAL, 1, 1);
  FbNode *empty = ti_node (g, FB_OP_OPTIONAL, 0, 1);
  FbNode *has = ti_node (g, FB_OP_OPTIONAL_HAS_ELEMENT, 1, 1);
  FbNode *get = ti_node (g, FB_OP_OPTIONAL_GET_ELEMENT, 1, 1);
  FbAttr type = { .name = "type", .type = FB_ATTR_TYPE,
                  .tp = { FB_KIND_SEQUENCE, FB_DTYPE_INT64 } };
  FbTensor *o, *none;

  o = ti_run1 (wrap, TI_IN (x));
  g_assert_cmpint (o->kind, ==, FB_KIND_OPTIONAL);
  ti_assert (ti_run1 (has, TI_IN (o)), FB_DTYPE_BOOL, 0, NULL, V (1), 0);
  g_assert_true (ti_run1 (get, TI_IN (o)) == x);

  fb_node_set_attr (g, empty, &type);
  none = ti_run1 (empty, NULL);
  g_assert_cmpint (none->kind, ==, FB_KIND_OPTIONAL_SEQUENCE);
  g_assert_cmpint (none->dtype, ==, FB_DTYPE_INT64);
  ti_assert (ti_run1 (has, TI_IN (none)), FB_DTYPE_BOOL, 0, NULL, V (0), 0);
  ti_run_fails (get, TI_IN (none), FB_INTERP_ERROR_RUNTIME);
  ti_done ();
}

/* A sequence written as a SequenceProto reads back the same, and an optional as well. */
static void
test_files (void)
{
  g_autofree char *dir = g_dir_make_tmp ("fb-seq-XXXXXX", NULL);
  g_autofree char *seq_path = g_build_filename (dir, "seq.pb", NULL);
  g_autofree char *opt_path = g_build_filename (dir, "opt.pb", NULL);
  g_autofree char *npy_path = g_build_filename (dir, "seq.npy", NULL);
  g_autoptr(GError) error = NULL;
  FbTensor *a = ti_f32 (2, D (1, 2), V (1, 2)), *b = ti_f32 (1, D (3), V (3, 4, 5));
  g_autoptr(FbTensor) seq = seq_of (2, (FbTensor *[]) { a, b });
  g_autoptr(FbTensor) opt = fb_tensor_new_optional (FB_KIND_OPTIONAL_SEQUENCE, FB_DTYPE_FLOAT32, seq);
  g_autoptr(FbTensor) back = NULL, opt_back = NULL, wrong = NULL;
  g_autofree char *name = NULL;
  FbCompare cmp;

  g_assert_true (fb_tensor_save_file (seq, "s", seq_path, &error));
  g_assert_no_error (error);
  back = fb_value_load_file (seq_path, FB_KIND_SEQUENCE, FB_DTYPE_FLOAT32, &name, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (name, ==, "s");
  fb_tensor_compare (seq, back, 0, 0, &cmp);
  g_assert_true (cmp.ok);
  fb_compare_clear (&cmp);

  g_assert_true (fb_tensor_save_file (opt, NULL, opt_path, &error));
  opt_back = fb_value_load_file (opt_path, FB_KIND_OPTIONAL_SEQUENCE, FB_DTYPE_FLOAT32, NULL, &error);
  g_assert_no_error (error);
  fb_tensor_compare (opt, opt_back, 0, 0, &cmp);
  g_assert_true (cmp.ok);
  fb_compare_clear (&cmp);
  /* An optional tensor is not an optional sequence: said, not guessed. */
  wrong = fb_value_load_file (opt_path, FB_KIND_OPTIONAL, FB_DTYPE_FLOAT32, NULL, &error);
  g_assert_null (wrong);
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "opt.pb"));
  g_clear_error (&error);
  /* numpy has no sequences. */
  g_assert_false (fb_tensor_save_file (seq, NULL, npy_path, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED);
  g_clear_error (&error);

  g_unlink (seq_path);
  g_unlink (opt_path);
  g_rmdir (dir);
  ti_done ();
}

static char *
silero_dir (void)
{
  return g_test_build_filename (G_TEST_DIST, "cases", "silero-vad", NULL);
}

/* The model imports with nothing left uncomputed, and If_0's output is a sequence. */
static void
test_silero_import (void)
{
  g_autofree char *dir = silero_dir ();
  g_autofree char *path = g_build_filename (dir, "model.onnx", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraph) graph = fb_onnx_import_file (path, NULL, &error);
  const FbNode *branch = NULL;
  g_autofree char *text = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (g_hash_table_size (graph->model->problems), ==, 0);
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (graph->nodes, i);
      if (n->op == FB_OP_IF)
        branch = n;
    }
  g_assert_nonnull (branch);
  g_assert_cmpint (branch->outputs[0]->kind, ==, FB_KIND_SEQUENCE);
  g_assert_cmpint (branch->outputs[0]->dtype, ==, FB_DTYPE_FLOAT32);
  text = fb_value_type_text (branch->outputs[0]);
  g_assert_true (g_str_has_prefix (text, "seq(f32["));
}

/* Both sample rates (both branches) agree with ONNX Runtime, through `fusebench check`'s path. */
static void
test_silero_targets (void)
{
  g_autofree char *dir = silero_dir ();
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  const FbBackend *backends[] = { NULL, fb_backend_cpu () };

  for (guint i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      FbCaseVerdict v;

      fb_case_check (dir, options, backends[i], NULL, &v);
      if (!v.ok)
        g_error ("%s on %s: %s", dir, backends[i] ? "cpu" : "interp", v.failure);
      g_test_message ("%s: worst abs %.3g on '%s'", backends[i] ? "cpu" : "interp", v.worst_abs,
                      v.worst_output);
      fb_case_verdict_clear (&v);
    }
}

/* The cuda target does not hold sequences: it says so, naming the node, before any device. */
static void
test_silero_cuda_refuses (void)
{
  g_autofree char *dir = silero_dir ();
  g_autofree char *path = g_build_filename (dir, "model.onnx", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraph) graph = fb_onnx_import_file (path, NULL, &error);
  const FbBackend *cuda = fb_backend_cuda ();

  g_assert_no_error (error);
  g_assert_false (fb_backend_check_graph (cuda, graph, &error));
  g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "If_0"));
  g_assert_nonnull (strstr (error->message, "not supported on cuda"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/interp-sequence/positions", test_positions);
  g_test_add_func ("/interp-sequence/split-concat", test_split_concat);
  g_test_add_func ("/interp-sequence/optional", test_optional);
  g_test_add_func ("/interp-sequence/files", test_files);
  g_test_add_func ("/interp-sequence/silero-import", test_silero_import);
  g_test_add_func ("/interp-sequence/silero-targets", test_silero_targets);
  g_test_add_func ("/interp-sequence/silero-cuda-refuses", test_silero_cuda_refuses);
  return g_test_run ();
}
