/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Bundles: written atomically, loaded and run without compiling; the graph inside them reads
 * back as ONNX; the shared library links into a C program (compiled here with the system's cc)
 * that computes what the interpreter computes. */
#include "fb-test-cpu.h"
#include "fb-bundle.h"
#include "fb-codegen.h"
#include "fb-compare.h"
#include "fb-lower.h"
#include "fb-onnx-import.h"
#include "fb-pipeline.h"
#include "fb-tensor-io.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

typedef struct {
  char       *dir;              /* a fresh temporary folder */
  FbPipeline *pipeline;
  GPtrArray  *inputs;
} Fixture;

static void
setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  f->dir = g_dir_make_tmp ("fb-bundle-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *model = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "..", "data", "models",
                                             "sample-cnn", "model.onnx", NULL);
  FbGraph *graph = fb_onnx_import_file (model, NULL, &error);
  g_assert_no_error (error);
  f->pipeline = fb_pipeline_new (graph);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  /* data: the layout; channels-last convolutions are oneDNN primitives, NCHW ones sgemm. */
  options->layout = GPOINTER_TO_INT (data);
  g_assert_true (fb_pipeline_run (f->pipeline, options, NULL, NULL, NULL, &error));
  f->inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_ptr_array_add (f->inputs, fb_tensor_ref (ti_random (4, D (1, 3, 32, 32), 7)));
}

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) d = g_dir_open (path, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

static void
teardown (Fixture *f, gconstpointer data)
{
  remove_tree (f->dir);
  g_free (f->dir);
  fb_pipeline_free (f->pipeline);
  g_ptr_array_unref (f->inputs);
  ti_done ();
}

static char *
write_bundle (Fixture *f, gboolean shared)
{
  g_autoptr(GError) error = NULL;
  const FbGraph *graph = fb_pipeline_final (f->pipeline);
  g_autoptr(FbPlan) plan = fb_lower_graph (graph, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  fb_plan_layout_memory (plan);
  g_autoptr(GPtrArray) objects = fb_codegen_plan (plan, 2, NULL, &error);
  g_assert_no_error (error);
  char *path = g_build_filename (f->dir, "sample.fusebench", NULL);
  FbBundleOptions options = { .source = "sample-cnn", .shared_library = shared,
                              .write_library = fb_cpu_write_shared_library };
  g_assert_true (fb_bundle_write (path, plan, objects, graph, &options, &error));
  g_assert_no_error (error);
  return path;
}

static void
assert_close (GPtrArray *expected, GPtrArray *actual)
{
  g_assert_cmpuint (expected->len, ==, actual->len);
  for (guint i = 0; i < expected->len; i++)
    {
      FbCompare cmp;
      fb_tensor_compare (g_ptr_array_index (expected, i), g_ptr_array_index (actual, i),
                         FB_COMPARE_RTOL, FB_COMPARE_ATOL, &cmp);
      if (!cmp.ok)
        g_error ("output %u: %s", i, cmp.reason);
      fb_compare_clear (&cmp);
    }
}

static guint
count_serial_phases (const FbPlan *plan)
{
  guint n = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint p = 0; p < kernel->phases->len; p++)
        n += ((const FbKPhase *) g_ptr_array_index (kernel->phases, p))->serial;
    }
  return n;
}

static void
test_load_and_run (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = write_bundle (f, FALSE);
  g_assert_true (fb_bundle_is_bundle (path));
  /* Writing again replaces the bundle whole. */
  g_free (write_bundle (f, FALSE));
  g_autoptr(GPtrArray) expected = fb_interp_run (fb_pipeline_final (f->pipeline), f->inputs, NULL,
                                                 &error);
  g_assert_no_error (error);
  g_autoptr(FbCpuModule) m = fb_cpu_bundle_load (path, 2, &error);
  g_assert_no_error (error);
  const FbGraph *graph = fb_cpu_module_plan (m)->graph;
  g_assert_cmpuint (graph->inputs->len, ==, 1);
  g_assert_cmpstr (((FbValue *) g_ptr_array_index (graph->inputs, 0))->name, ==, "image");
  /* The classifier's small product stays on the calling thread after loading too. */
  g_autoptr(FbPlan) lowered = fb_lower_graph (fb_pipeline_final (f->pipeline),
                                              fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (count_serial_phases (lowered), >, 0);
  g_assert_cmpuint (count_serial_phases (fb_cpu_module_plan (m)), ==,
                    count_serial_phases (lowered));
  g_autoptr(GPtrArray) actual = fb_cpu_module_run (m, f->inputs, NULL, &error);
  g_assert_no_error (error);
  assert_close (expected, actual);
  /* Nothing is left beside the bundle. */
  g_autoptr(GDir) d = g_dir_open (f->dir, 0, NULL);
  g_assert_cmpstr (g_dir_read_name (d), ==, "sample.fusebench");
  g_assert_null (g_dir_read_name (d));
}

static void
test_damaged (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = write_bundle (f, FALSE);
  g_autofree char *plan = g_build_filename (path, "plan.json", NULL);
  g_assert_true (g_file_set_contents (plan, "{\"arena_bytes\": 1, \"buffers\": [], \"kernels\": "
                                      "[{\"name\": \"k\", \"kind\": \"loops\", \"args\": "
                                      "[{\"buffer\": 5, \"role\": \"in\", \"dtype\": 1}], "
                                      "\"phases\": []}]}", -1, NULL));
  g_autoptr(FbCpuModule) m = fb_cpu_bundle_load (path, 1, &error);
  g_assert_null (m);
  g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE);

  /* Values of the wrong kind where objects, numbers or strings belong: refused as damage,
   * without a critical warning from the JSON library (fatal in tests). */
  const char *wrong_kinds[] = {
    "{\"arena_bytes\": 0, \"buffers\": [1], \"inputs\": [], \"outputs\": [], \"kernels\": []}",
    "{\"arena_bytes\": 0, \"buffers\": [], \"inputs\": [\"a\"], \"outputs\": [], \"kernels\": []}",
    "{\"arena_bytes\": 0, \"buffers\": [], \"inputs\": [], \"outputs\": [], \"kernels\": [1]}",
    "{\"arena_bytes\": 0, \"buffers\": [{\"kind\": \"value\", \"name\": \"v\", \"dtype\": 1, "
      "\"dims\": [[2]], \"alias\": -1, \"offset\": 0}], \"inputs\": [], \"outputs\": [], \"kernels\": []}",
    "{\"arena_bytes\": 0, \"buffers\": [], \"inputs\": [], \"outputs\": [], \"kernels\": "
      "[{\"name\": \"k\", \"kind\": \"loops\", \"args\": [7], \"phases\": []}]}",
    "{\"arena_bytes\": 0, \"buffers\": [], \"inputs\": [], \"outputs\": [], \"kernels\": "
      "[{\"name\": \"k\", \"kind\": \"loops\", \"args\": [], \"provenance\": [[]], "
      "\"flops\": [], \"phases\": [1]}]}",
    "{\"arena_bytes\": 0, \"buffers\": [], \"inputs\": [], \"outputs\": [], \"kernels\": "
      "[{\"name\": \"k\", \"kind\": \"loops\", \"args\": [], \"phases\": [{\"function\": \"f\", "
      "\"extent\": 1, \"work\": \"x\", \"convolution\": 5}]}]}",
  };
  for (guint i = 0; i < G_N_ELEMENTS (wrong_kinds); i++)
    {
      g_autoptr(GError) local = NULL;
      g_assert_true (g_file_set_contents (plan, wrong_kinds[i], -1, NULL));
      g_autoptr(FbCpuModule) refused = fb_cpu_bundle_load (path, 1, &local);
      g_assert_null (refused);
      g_assert_error (local, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE);
    }
}

/* Truncated JSON and a truncated kernel object are the same kind of error as a bad plan: the
 * bundle is damaged, and the message names the file. */
static void
test_truncated (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_bundle (f, FALSE);
  g_autofree char *manifest = g_build_filename (path, "manifest.json", NULL);
  g_autofree char *kernels = g_build_filename (path, "kernels", NULL);
  g_autofree char *text = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (manifest, &text, &len, NULL));
  {
    g_autoptr(GError) error = NULL;
    g_assert_true (g_file_set_contents (manifest, text, (gssize) len / 2, NULL));
    g_autoptr(FbCpuModule) m = fb_cpu_bundle_load (path, 1, &error);
    g_assert_null (m);
    g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE);
    g_assert_nonnull (strstr (error->message, "manifest.json"));
    g_assert_true (g_file_set_contents (manifest, text, (gssize) len, NULL));
  }
  {
    g_autoptr(GDir) dir = g_dir_open (kernels, 0, NULL);
    const char *first = dir ? g_dir_read_name (dir) : NULL;
    g_autofree char *object = NULL;
    g_autofree char *bytes = NULL;
    g_autoptr(GError) error = NULL;

    g_assert_nonnull (first);
    object = g_build_filename (kernels, first, NULL);
    g_assert_true (g_file_get_contents (object, &bytes, &len, NULL));
    g_assert_true (g_file_set_contents (object, bytes, (gssize) MIN (len, 300), NULL));
    g_autoptr(FbCpuModule) m = fb_cpu_bundle_load (path, 1, &error);
    g_assert_null (m);
    g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE);
  }
}

/* The first convolution phase's object in a parsed plan.json. */
static JsonObject *
first_convolution (JsonParser *parser)
{
  g_autoptr(GPtrArray) convs = tc_plan_convolutions (parser, NULL);
  return convs->len > 0 ? convs->pdata[0] : NULL;
}

/* A convolution phase whose geometry no longer fits its buffers, or is no convolution at all
 * (an output size its pads do not give, sizes whose product overflows), is refused at load as
 * a damaged bundle, before oneDNN could read or write past a buffer. */
static void
test_damaged_convolution (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = write_bundle (f, FALSE);
  g_autofree char *plan = g_build_filename (path, "plan.json", NULL);
  g_autofree char *original = NULL;
  g_assert_true (g_file_get_contents (plan, &original, NULL, NULL));
  /* geometry index, new value (0: double it) */
  const struct { guint index; gint64 value; } tamper[] = {
    { 1, 0 },                       /* input channels: the buffers are smaller */
    { 5, 0 },                       /* output height the pads do not give */
    { 0, (gint64) 1 << 23 },        /* a batch no buffer has room for */
    { 2, (gint64) 1 << 40 },        /* beyond any tensor */
    { 14, -1 },                     /* a negative pad: buffers fit, no convolution does */
  };
  for (guint t = 0; t < G_N_ELEMENTS (tamper); t++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_assert_true (json_parser_load_from_data (parser, original, -1, &error));
      JsonObject *conv = first_convolution (parser);
      g_assert_nonnull (conv);
      JsonNode *n = json_array_get_element (json_object_get_array_member (conv, "geometry"),
                                            tamper[t].index);
      json_node_set_int (n, tamper[t].value ? tamper[t].value : json_node_get_int (n) * 2);
      g_autoptr(JsonGenerator) gen = json_generator_new ();
      json_generator_set_root (gen, json_parser_get_root (parser));
      g_assert_true (json_generator_to_file (gen, plan, &error));
      g_autoptr(FbCpuModule) m = fb_cpu_bundle_load (path, 1, &error);
      g_assert_null (m);
      g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE);
      g_assert_nonnull (strstr (error->message, "convolution"));
      g_clear_error (&error);
    }
}

static void
test_shared_library (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_bundle (f, TRUE);
  tc_check_shared_library (f->dir, path, fb_pipeline_final (f->pipeline), f->inputs);
}

static void
test_onnx_roundtrip (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = write_bundle (f, FALSE);
  g_autofree char *model = g_build_filename (path, "model.onnx", NULL);
  g_autoptr(FbGraph) graph = fb_onnx_import_file (model, NULL, &error);
  g_assert_no_error (error);
  const FbGraph *final = fb_pipeline_final (f->pipeline);
  g_assert_cmpuint (graph->nodes->len, ==, final->nodes->len);
  guint fused = 0;
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (graph->nodes, i);
      if (g_strcmp0 (n->domain, "io.github.fusebench") == 0)
        {
          fused++;
          g_assert_nonnull (fb_node_attr_graph (n, "body"));
        }
    }
  g_assert_cmpuint (fused, >, 0);
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  gconstpointer nchw = GINT_TO_POINTER (FB_LAYOUT_NCHW), nhwc = GINT_TO_POINTER (FB_LAYOUT_NHWC);
  g_test_add ("/bundle/load-and-run", Fixture, nchw, setup, test_load_and_run, teardown);
  g_test_add ("/bundle/load-and-run/nhwc", Fixture, nhwc, setup, test_load_and_run, teardown);
  g_test_add ("/bundle/damaged", Fixture, nchw, setup, test_damaged, teardown);
  g_test_add ("/bundle/damaged-convolution", Fixture, nhwc, setup, test_damaged_convolution,
              teardown);
  g_test_add ("/bundle/truncated", Fixture, nchw, setup, test_truncated, teardown);
  g_test_add ("/bundle/shared-library", Fixture, nchw, setup, test_shared_library, teardown);
  g_test_add ("/bundle/shared-library/nhwc", Fixture, nhwc, setup, test_shared_library, teardown);
  g_test_add ("/bundle/onnx-roundtrip", Fixture, nchw, setup, test_onnx_roundtrip, teardown);
  return g_test_run ();
}
