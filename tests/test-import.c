/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ONNX import: real files load exactly; broken, hostile and unsupported ones give an error that
 * names the file and the node or field, and never crash. */
#include "fb-onnx-import.h"
#include "fb-test-onnx.h"

#include <glib/gstdio.h>
#include <string.h>

static const int64_t dims_1x4[] = { 1, 4 };

static char *
sample_path (void)
{
  return g_test_build_filename (G_TEST_DIST, "..", "data", "models", "sample-cnn", "model.onnx", NULL);
}

static FbGraph *
import_test_model (TestModel *m, GError **error)
{
  g_autoptr(GBytes) bytes = test_model_pack (m);
  return fb_onnx_import_bytes (bytes, "test.onnx", NULL, NULL, error);
}

/* x -> Relu -> y: the smallest valid model, which the hostile cases then break. */
static TestModel *
relu_model (void)
{
  TestModel *m = test_model_new (17);
  test_model_input (m, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dims_1x4);
  test_model_node (m, "Relu", "relu", (const char *[]) { "x", NULL }, (const char *[]) { "y", NULL });
  test_model_output (m, "y");
  return m;
}

static void
test_sample_model (void)
{
  g_autofree char *path = sample_path ();
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraph) graph = fb_onnx_import_file (path, NULL, &error);
  guint constants = 0;

  g_assert_no_error (error);
  g_assert_cmpuint (graph->nodes->len, ==, 23);
  g_assert_cmpuint (graph->inputs->len, ==, 1);
  g_assert_cmpstr (((FbValue *) g_ptr_array_index (graph->inputs, 0))->name, ==, "image");
  g_assert_cmpint (graph->model->ir_version, ==, 8);
  g_assert_cmpint (fb_model_opset (graph->model, ""), ==, 17);
  g_assert_true (fb_graph_verify (graph, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (graph->nodes, i);
      /* Provenance starts here: each node stands for itself. */
      g_assert_cmpuint (n->n_prov, ==, 1);
      g_assert_cmpstr (fb_model_orig_name (graph->model, n->prov[0]), ==, n->name);
      g_assert_true (n->op != FB_OP_UNKNOWN);
      if (n->op == FB_OP_CONSTANT)
        {
          g_assert_nonnull (n->outputs[0]->constant);
          constants++;
        }
    }
  g_assert_cmpuint (constants, ==, 2);
}

static void
test_empty_and_not_onnx (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) empty = g_bytes_new_static ("", 0);
  g_autoptr(GBytes) text = g_bytes_new_static ("hello, this is not a model\n", 27);

  g_assert_null (fb_onnx_import_bytes (empty, "empty.onnx", NULL, NULL, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_PARSE);
  g_assert_true (g_str_has_prefix (error->message, "empty.onnx: "));
  g_clear_error (&error);
  g_assert_null (fb_onnx_import_bytes (text, "notes.txt", NULL, NULL, &error));
  g_assert_nonnull (error);
  g_assert_true (g_str_has_prefix (error->message, "notes.txt: "));
  g_clear_error (&error);
  g_assert_null (fb_onnx_import_file ("/nonexistent/model.onnx", NULL, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_IO);
}

static void
test_truncated_and_bit_flipped (void)
{
  g_autofree char *path = sample_path ();
  g_autofree char *data = NULL;
  gsize size;
  g_autoptr(GRand) rand = g_rand_new_with_seed (20261129);
  guint loaded = 0, refused = 0;

  g_assert_true (g_file_get_contents (path, &data, &size, NULL));
  /* Every cut point in the first kilobyte, then every 997th byte. */
  for (gsize cut = 0; cut < size; cut += cut < 1024 ? 1 : 997)
    {
      g_autoptr(GBytes) b = g_bytes_new (data, cut);
      g_autoptr(GError) error = NULL;
      g_autoptr(FbGraph) g = fb_onnx_import_bytes (b, "cut.onnx", NULL, NULL, &error);
      if (g == NULL)
        {
          g_assert_nonnull (error);
          g_assert_true (g_str_has_prefix (error->message, "cut.onnx: "));
          refused++;
        }
      else
        loaded++;
    }
  g_assert_cmpuint (refused, >, 0);
  for (guint round = 0; round < 300; round++)
    {
      g_autofree char *copy = g_memdup2 (data, size);
      for (guint k = 0; k < 1 + round % 4; k++)
        copy[g_rand_int_range (rand, 0, (gint32) size)] ^= (char) (1 << g_rand_int_range (rand, 0, 8));
      g_autoptr(GBytes) b = g_bytes_new_take (g_steal_pointer (&copy), size);
      g_autoptr(GError) error = NULL;
      g_autoptr(FbGraph) g = fb_onnx_import_bytes (b, "flipped.onnx", NULL, NULL, &error);
      g_assert_true ((g == NULL) == (error != NULL));
    }
  g_test_message ("truncations: %u loaded, %u refused", loaded, refused);
}

static void
test_cycle (void)
{
  TestModel *m = test_model_new (17);
  g_autoptr(GError) error = NULL;

  test_model_input (m, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dims_1x4);
  test_model_node (m, "Add", "a", (const char *[]) { "x", "c", NULL }, (const char *[]) { "b", NULL });
  test_model_node (m, "Relu", "r", (const char *[]) { "b", NULL }, (const char *[]) { "c", NULL });
  test_model_output (m, "c");
  g_assert_null (import_test_model (m, &error));
  g_assert_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "cycle"));
  g_assert_true (g_str_has_prefix (error->message, "test.onnx: "));
  test_model_free (m);
}

static void
test_undefined_input_and_output (void)
{
  TestModel *m = relu_model ();
  g_autoptr(GError) error = NULL;

  m->graph.node[0]->input[0] = "ghost";
  g_assert_null (import_test_model (m, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "'relu'"));
  g_assert_nonnull (strstr (error->message, "'ghost'"));
  g_clear_error (&error);
  m->graph.node[0]->input[0] = "x";
  m->graph.output[0]->name = "nowhere";
  g_assert_null (import_test_model (m, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "'nowhere'"));
  test_model_free (m);
}

static void
test_duplicate_definition (void)
{
  TestModel *m = relu_model ();
  g_autoptr(GError) error = NULL;

  test_model_node (m, "Neg", "neg", (const char *[]) { "x", NULL }, (const char *[]) { "y", NULL });
  g_assert_null (import_test_model (m, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "'neg'"));
  test_model_free (m);
}

static void
test_wrong_arity (void)
{
  TestModel *m = relu_model ();
  g_autoptr(GError) error = NULL;

  test_model_node (m, "Constant", "const", NULL, NULL);
  g_assert_null (import_test_model (m, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "node 'const' (Constant) has 0 outputs"));
  g_clear_error (&error);
  m->graph.n_node = 1;
  test_model_node (m, "Conv", "conv", (const char *[]) { "x", NULL }, (const char *[]) { "c", NULL });
  g_assert_null (import_test_model (m, &error));
  g_assert_nonnull (strstr (error->message, "Conv takes 2 to 3"));
  test_model_free (m);
}

/* Inputs the fuzzer once found and that must stay clear errors. */
static void
test_fuzzer_regressions (void)
{
  /* The file, and what the message must say about the node at fault. */
  const struct { const char *name, *says; } cases[] = {
    { "regression-constant-without-output.onnx", "node 'const_floats' (Constant) has 0 outputs" },
    { "regression-bad-perm.onnx", "node 'Transpose_2' (Transpose): 'perm' is not a permutation" },
    /* An opset-6 Split whose 'split' carries a graph: the upgrade dropped it, orphaning the graph. */
    { "regression-split-graph-attr.onnx",
      "node 'split' (Split, opset 6): attribute 'split' is a graph, expected a list of ints" },
    { "regression-duplicate-attr.onnx", "node 'squeeze' (Squeeze) has the attribute 'axes' twice" },
    /* Both inputs omitted: the second missing input's error was set over the first (a GLib
     * warning, fatal under g_test_init). */
    { "regression-two-inputs-missing.onnx", "node 'sample' (GridSample): required input 0 is missing" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fuzz", "corpus-import",
                                                     cases[i].name, NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(FbGraph) graph = fb_onnx_import_file (path, NULL, &error);
      g_assert_null (graph);
      g_assert_nonnull (error);
      g_assert_nonnull (strstr (error->message, cases[i].name));
      g_assert_nonnull (strstr (error->message, cases[i].says));
    }
}

static void
test_wrong_types (void)
{
  TestModel *m = relu_model ();
  g_autoptr(GError) error = NULL;
  FbGraph *graph;

  /* A valid type this project does not compute loads, with the nodes it reaches marked. */
  m->graph.input[0]->type->tensor_type->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__STRING;
  graph = import_test_model (m, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_hash_table_size (graph->model->problems), >, 0);
  g_assert_nonnull (strstr (g_hash_table_lookup (graph->model->problems,
                                                 ((FbNode *) graph->nodes->pdata[0])->name),
                            "'x'"));
  g_clear_pointer (&graph, fb_graph_free);
  m->graph.input[0]->type->tensor_type->elem_type = 1234;
  g_assert_null (import_test_model (m, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED);
  g_clear_error (&error);
  {
    Onnx__TypeProto__Sequence sequence = ONNX__TYPE_PROTO__SEQUENCE__INIT;
    Onnx__TypeProto__Tensor *tensor = m->graph.input[0]->type->tensor_type;
    m->graph.input[0]->type->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    m->graph.input[0]->type->sequence_type = &sequence;
    graph = import_test_model (m, &error);
    g_assert_no_error (error);
    g_assert_nonnull (strstr (g_hash_table_lookup (graph->model->problems,
                                                   ((FbNode *) graph->nodes->pdata[0])->name),
                              "is a sequence"));
    g_clear_pointer (&graph, fb_graph_free);
    m->graph.input[0]->type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    m->graph.input[0]->type->tensor_type = tensor;
  }
  test_model_free (m);
}

static void
test_absurd_shapes (void)
{
  TestModel *m = relu_model ();
  g_autoptr(GError) error = NULL;
  const int64_t small[] = { 2, 2 };
  Onnx__TensorProto *t = test_model_initializer (m, "w", 2, small);
  int64_t huge[] = { G_GINT64_CONSTANT (1) << 40, G_GINT64_CONSTANT (1) << 40 };

  /* The product of the claimed dims overflows 64 bits. */
  t->dims = huge;
  g_assert_null (import_test_model (m, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "'w'"));
  g_clear_error (&error);
  /* Plausible dims, but the data is too short for them. */
  huge[0] = 3;
  huge[1] = 3;
  g_assert_null (import_test_model (m, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "raw data"));
  g_clear_error (&error);
  huge[0] = -2;
  g_assert_null (import_test_model (m, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID);
  test_model_free (m);
}

static void
test_old_opset_and_ir (void)
{
  TestModel *m = relu_model ();
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraph) graph = NULL;

  /* Every opset from 1 loads: the importer brings old versions to the current form. */
  m->model.opset_import[0]->version = 6;
  graph = import_test_model (m, &error);
  g_assert_no_error (error);
  g_assert_cmpint (((FbNode *) g_ptr_array_index (graph->nodes, 0))->opset, ==, 7);
  m->model.opset_import[0]->version = 0;
  g_assert_null (import_test_model (m, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED);
  g_clear_error (&error);
  m->model.opset_import[0]->version = 13;
  m->model.ir_version = 2;
  g_assert_null (import_test_model (m, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED);
  test_model_free (m);
}

static void
test_unsupported_op_still_loads (void)
{
  TestModel *m = relu_model ();
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraph) graph = NULL;
  g_autoptr(GHashTable) unsupported = NULL;
  Onnx__NodeProto *n;

  n = test_model_node (m, "FancyOp", "fancy", (const char *[]) { "y", NULL }, (const char *[]) { "z", NULL });
  n->domain = "com.example";
  test_model_node (m, "StringNormalizer", NULL, (const char *[]) { "y", NULL }, (const char *[]) { "w", NULL });
  graph = import_test_model (m, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (graph->nodes->len, ==, 3);
  unsupported = fb_graph_unsupported_ops (graph);
  g_assert_cmpuint (g_hash_table_size (unsupported), ==, 2);
  GPtrArray *names = g_hash_table_lookup (unsupported, "com.example.FancyOp");
  g_assert_nonnull (names);
  g_assert_cmpstr (g_ptr_array_index (names, 0), ==, "fancy");
  names = g_hash_table_lookup (unsupported, "StringNormalizer");
  g_assert_nonnull (names);
  /* An unnamed node gets a stable generated name. */
  g_assert_cmpstr (g_ptr_array_index (names, 0), ==, "StringNormalizer_2");
  test_model_free (m);
}

static void
test_subgraph_captures_outer_value (void)
{
  TestModel *m = test_model_new (17);
  TestModel *then_m = test_model_new (17), *else_m = test_model_new (17);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraph) graph = NULL;
  Onnx__NodeProto *node;
  const int64_t scalar[] = { 0 };

  test_model_input (m, "cond", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, scalar);
  test_model_input (m, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dims_1x4);
  test_model_node (then_m, "Relu", "then_relu", (const char *[]) { "x", NULL }, (const char *[]) { "t", NULL });
  test_model_output (then_m, "t");
  test_model_node (else_m, "Neg", "else_neg", (const char *[]) { "x", NULL }, (const char *[]) { "e", NULL });
  test_model_output (else_m, "e");
  node = test_model_node (m, "If", "branch", (const char *[]) { "cond", NULL }, (const char *[]) { "y", NULL });
  test_node_attr_graph (m, node, "then_branch", &then_m->graph);
  test_node_attr_graph (m, node, "else_branch", &else_m->graph);
  test_model_output (m, "y");

  graph = import_test_model (m, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (graph->nodes->len, ==, 1);
  g_assert_cmpuint (fb_graph_count_nodes (graph, TRUE), ==, 3);
  FbGraph *then_g = fb_node_attr_graph (g_ptr_array_index (graph->nodes, 0), "then_branch");
  g_assert_nonnull (then_g);
  FbNode *relu = g_ptr_array_index (then_g->nodes, 0);
  /* The body reads the enclosing graph's x itself, not a copy. */
  g_assert_true (relu->inputs[0] == g_ptr_array_index (graph->inputs, 1));
  g_assert_true (fb_graph_verify (graph, NULL));

  /* A body reading a name nobody defines is refused, naming the body and the node. */
  then_m->graph.node[0]->input[0] = "ghost";
  g_clear_pointer (&graph, fb_graph_free);
  g_assert_null (import_test_model (m, &error));
  g_assert_nonnull (strstr (error->message, "'then_branch' body of node 'branch'"));
  test_model_free (then_m);
  test_model_free (else_m);
  test_model_free (m);
}

static void
test_external_data (void)
{
  g_autofree char *dir = g_dir_make_tmp ("fb-import-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "model.onnx", NULL);
  g_autofree char *data_path = g_build_filename (dir, "weights.bin", NULL);
  TestModel *m = relu_model ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) packed = NULL;
  Onnx__TensorProto *t = test_model_initializer (m, "w", 2, dims_1x4);
  Onnx__StringStringEntryProto location = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
  Onnx__StringStringEntryProto offset = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
  Onnx__StringStringEntryProto *entries[] = { &location, &offset };
  float weights[6] = { -1, -1, 10, 20, 30, 40 };   /* two floats of padding, then the tensor */

  test_model_node (m, "Add", "add", (const char *[]) { "y", "w", NULL }, (const char *[]) { "z", NULL });
  m->graph.output[0]->name = "z";
  t->has_raw_data = FALSE;
  t->has_data_location = TRUE;
  t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  location.key = "location";
  location.value = "weights.bin";
  offset.key = "offset";
  offset.value = "8";
  t->n_external_data = 2;
  t->external_data = entries;
  packed = test_model_pack (m);
  g_assert_true (g_file_set_contents (model_path, g_bytes_get_data (packed, NULL),
                                      g_bytes_get_size (packed), NULL));

  /* Missing file. */
  g_assert_null (fb_onnx_import_file (model_path, NULL, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "'w'"));
  g_assert_nonnull (strstr (error->message, "weights.bin"));
  g_clear_error (&error);

  /* Too short: 5 floats where offset 8 + 16 bytes are needed. */
  g_assert_true (g_file_set_contents (data_path, (const char *) weights, 20, NULL));
  g_assert_null (fb_onnx_import_file (model_path, NULL, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "too short"));
  g_clear_error (&error);

  /* Right: the tensor reads the mapped bytes at the offset. */
  g_assert_true (g_file_set_contents (data_path, (const char *) weights, sizeof weights, NULL));
  {
    g_autoptr(FbGraph) graph = fb_onnx_import_file (model_path, NULL, &error);
    g_assert_no_error (error);
    FbValue *w = fb_graph_lookup_value (graph, "w");
    g_assert_cmpfloat (((const float *) fb_tensor_data (w->constant))[3], ==, 40.0f);
  }

  /* A location that climbs out of the model's folder is refused. */
  location.value = "../weights.bin";
  g_clear_pointer (&packed, g_bytes_unref);
  packed = test_model_pack (m);
  g_assert_true (g_file_set_contents (model_path, g_bytes_get_data (packed, NULL),
                                      g_bytes_get_size (packed), NULL));
  g_assert_null (fb_onnx_import_file (model_path, NULL, &error));
  g_assert_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "../weights.bin"));

  g_unlink (data_path);
  g_unlink (model_path);
  g_rmdir (dir);
  test_model_free (m);
}

/* The fuzzers' seed corpus: every attribute type, If/Loop, old IR, external data. */
static void
test_seed_corpus_loads (void)
{
  const char *names[] = { "conv-block", "control-flow", "attention", "external-data", "old-ir3" };
  const guint nodes[] = { 6, 2, 7, 1, 1 };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *file = g_strconcat (names[i], ".onnx", NULL);
      g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fuzz", "corpus-import", file, NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(FbGraph) graph = fb_onnx_import_file (path, NULL, &error);

      g_assert_no_error (error);
      g_assert_cmpuint (graph->nodes->len, ==, nodes[i]);
      g_assert_true (fb_graph_verify (graph, NULL));
    }
}

/* The smallest node case of every operator (make-seed-corpus.py): each is valid ONNX, so each
 * loads and verifies, but for the preview training operators, whose models import only their
 * own domain's operator set and are refused for that. */
static void
test_operator_seeds_load (void)
{
  g_autofree char *dir_path = g_test_build_filename (G_TEST_DIST, "fuzz", "corpus-import", NULL);
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  const char *file;
  guint loaded = 0, refused = 0;

  g_assert_nonnull (dir);
  while ((file = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(FbGraph) graph = NULL;

      if (!g_str_has_prefix (file, "op-"))
        continue;
      path = g_build_filename (dir_path, file, NULL);
      graph = fb_onnx_import_file (path, NULL, &error);
      if (graph == NULL)
        {
          g_assert_nonnull (strstr (error->message, "imports no version of the default ONNX"));
          refused++;
          continue;
        }
      g_assert_true (fb_graph_verify (graph, NULL));
      loaded++;
    }
  g_assert_cmpuint (loaded, >=, 150);
  g_assert_cmpuint (refused, <=, 3);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/import/sample-model", test_sample_model);
  g_test_add_func ("/import/empty-and-not-onnx", test_empty_and_not_onnx);
  g_test_add_func ("/import/truncated-and-bit-flipped", test_truncated_and_bit_flipped);
  g_test_add_func ("/import/cycle", test_cycle);
  g_test_add_func ("/import/undefined-input-and-output", test_undefined_input_and_output);
  g_test_add_func ("/import/duplicate-definition", test_duplicate_definition);
  g_test_add_func ("/import/wrong-types", test_wrong_types);
  g_test_add_func ("/import/wrong-arity", test_wrong_arity);
  g_test_add_func ("/import/fuzzer-regressions", test_fuzzer_regressions);
  g_test_add_func ("/import/absurd-shapes", test_absurd_shapes);
  g_test_add_func ("/import/old-opset-and-ir", test_old_opset_and_ir);
  g_test_add_func ("/import/unsupported-op-still-loads", test_unsupported_op_still_loads);
  g_test_add_func ("/import/subgraph-captures-outer-value", test_subgraph_captures_outer_value);
  g_test_add_func ("/import/external-data", test_external_data);
  g_test_add_func ("/import/seed-corpus-loads", test_seed_corpus_loads);
  g_test_add_func ("/import/operator-seeds-load", test_operator_seeds_load);
  return g_test_run ();
}
