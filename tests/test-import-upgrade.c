/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Models written at opsets 1 to 6 (tests/cases/legacy-*, made by make-legacy-cases.py with
 * numpy's outputs): the importer brings them to the current form, they compute the expected
 * outputs on both targets, and stage 0 still says what the file wrote. */
#include "fb-case-check.h"
#include "fb-cpu.h"
#include "fb-onnx-import.h"
#include "fb-printer.h"

#include <string.h>

static const char *legacy_cases[] = {
  "legacy-opset1-cnn", "legacy-opset1-forms", "legacy-opset6-attrs",
};

static void
check_case (const char *name, gboolean for_cpu)
{
  g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "cases", name, NULL);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  FbCaseVerdict v;

  options->layout = for_cpu ? FB_LAYOUT_NHWC : FB_LAYOUT_NCHW;
  fb_case_check (dir, options, for_cpu ? fb_backend_cpu () : NULL, NULL, &v);
  if (!v.ok)
    g_error ("%s on %s: %s", name, for_cpu ? "cpu" : "interp", v.failure);
  g_test_message ("%s: worst abs err %.3g", name, v.worst_abs);
  fb_case_verdict_clear (&v);
}

static void
test_cases_interp (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (legacy_cases); i++)
    check_case (legacy_cases[i], FALSE);
}

static void
test_cases_cpu (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (legacy_cases); i++)
    check_case (legacy_cases[i], TRUE);
}

static const FbNode *
find_node (const FbGraph *graph, const char *name)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (graph->nodes, i);
      if (g_strcmp0 (n->name, name) == 0)
        return n;
    }
  g_error ("no node '%s'", name);
  return NULL;
}

static const char *
written (const FbGraph *graph, const FbNode *node)
{
  g_assert_cmpuint (node->n_prov, ==, 1);
  return g_array_index (graph->model->orig_nodes, FbOrigNode, node->prov[0]).written;
}

/* One form for everything after import; the form as written kept beside it. */
static void
test_one_form (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "cases", "legacy-opset1-cnn",
                                                 "model.onnx", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraph) graph = fb_onnx_import_file (path, NULL, &error);
  g_autofree char *text = NULL;
  const FbNode *reshape, *add, *bn, *conv;

  g_assert_no_error (error);
  reshape = find_node (graph, "Reshape_5");
  g_assert_cmpuint (reshape->n_inputs, ==, 2);
  g_assert_nonnull (reshape->inputs[1]->constant);
  g_assert_null (fb_node_attr (reshape, "shape"));
  g_assert_null (fb_node_attr (reshape, "consumed_inputs"));
  g_assert_cmpint (reshape->opset, >=, 7);
  g_assert_nonnull (strstr (written (graph, reshape), "Reshape-1"));
  g_assert_nonnull (strstr (written (graph, reshape), "shape=[1, 144]"));

  /* The per-channel bias of the legacy broadcast is unsqueezed to 4x1x1. */
  add = find_node (graph, "Add_1");
  g_assert_null (fb_node_attr (add, "broadcast"));
  g_assert_null (fb_node_attr (add, "axis"));
  g_assert_cmpint (add->inputs[1]->shape.rank, ==, 3);
  g_assert_cmpint (add->outputs[0]->shape.dim[1], ==, 4);

  bn = find_node (graph, "BatchNormalization_2");
  g_assert_null (fb_node_attr (bn, "is_test"));
  g_assert_null (fb_node_attr (bn, "spatial"));

  /* Nothing to tell for a node whose version number alone changed. */
  conv = find_node (graph, "Conv_0");
  g_assert_null (written (graph, conv));

  text = fb_graph_to_text (graph);
  g_assert_nonnull (strstr (text, "[written: Reshape-1 (1 input) consumed_inputs=[0] shape=[1, 144]]"));
}

/* Every valid model opens: a sequence flowing out of an If (ONNX's test_if_seq) and an Einsum
 * form not computed yet (three operands) load with the nodes concerned marked and the reason,
 * and the pipeline keeps stage 0 and stops saying why. */
static void
test_valid_models_open (void)
{
  const struct { const char *file, *node, *reason; } cases[] = {
    { "einsum-three-operands.onnx", "Einsum_0", "3 operands" },
  };
  g_autofree char *if_seq = g_test_build_filename (G_TEST_DIST, "fixtures", "if-seq.onnx", NULL);
  g_autoptr(GError) seq_error = NULL;
  g_autoptr(FbPipeline) seq_pipeline = NULL;
  FbGraph *seq_graph = fb_onnx_import_file (if_seq, NULL, &seq_error);

  /* An If whose output is a sequence is computed now: every pass runs. */
  g_assert_no_error (seq_error);
  g_assert_cmpuint (g_hash_table_size (seq_graph->model->problems), ==, 0);
  seq_pipeline = fb_pipeline_new (seq_graph);
  g_assert_true (fb_pipeline_run (seq_pipeline, NULL, NULL, NULL, NULL, &seq_error));
  g_assert_no_error (seq_error);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures", cases[i].file, NULL);
      g_autoptr(GError) error = NULL;
      FbGraph *graph = fb_onnx_import_file (path, NULL, &error);
      g_autoptr(FbPipeline) pipeline = NULL;
      const char *why;

      g_assert_no_error (error);
      why = g_hash_table_lookup (graph->model->problems, cases[i].node);
      g_assert_nonnull (why);
      g_assert_nonnull (strstr (why, cases[i].reason));
      pipeline = fb_pipeline_new (graph);
      g_assert_false (fb_pipeline_run (pipeline, NULL, NULL, NULL, NULL, &error));
      g_assert_error (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_UNSUPPORTED);
      g_assert_nonnull (strstr (error->message, cases[i].node));
      g_assert_cmpuint (fb_pipeline_n_stages (pipeline), ==, 1);
      g_assert_cmpstr (fb_pipeline_stage (pipeline, 0)->name, ==, "import");
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/import-upgrade/interp", test_cases_interp);
  g_test_add_func ("/import-upgrade/cpu", test_cases_cpu);
  g_test_add_func ("/import-upgrade/one-form", test_one_form);
  g_test_add_func ("/import-upgrade/valid-models-open", test_valid_models_open);
  return g_test_run ();
}
