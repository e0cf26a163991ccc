/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Bundles whose plans hold oneDNN deconvolution phases (the deconv-epilogues case, channels-
 * last): plan.json names the primitive, loading checks it against the buffers, the loaded
 * bundle computes what the interpreter computes, and a plan whose primitive or geometry was
 * damaged is refused before oneDNN reads it. */
#include "fb-test-cpu.h"
#include "fb-bundle.h"
#include "fb-codegen.h"
#include "fb-compare.h"
#include "fb-lower.h"
#include "fb-onnx-import.h"
#include "fb-pipeline.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

typedef struct {
  char       *dir;
  char       *bundle;
  FbPipeline *pipeline;
  GPtrArray  *inputs;
} Fixture;

static void
setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  f->dir = g_dir_make_tmp ("fb-bundle-deconv-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *model = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "cases",
                                             "deconv-epilogues", "model.onnx", NULL);
  FbGraph *graph = fb_onnx_import_file (model, NULL, &error);
  g_assert_no_error (error);
  f->pipeline = fb_pipeline_new (graph);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = FB_LAYOUT_NHWC;
  g_assert_true (fb_pipeline_run (f->pipeline, options, NULL, NULL, NULL, &error));
  f->inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_ptr_array_add (f->inputs, fb_tensor_ref (ti_random (4, D (1, 16, 6, 7), 11)));
  g_ptr_array_add (f->inputs, fb_tensor_ref (ti_random (4, D (1, 8, 12, 14), 12)));

  const FbGraph *final = fb_pipeline_final (f->pipeline);
  g_autoptr(FbPlan) plan = fb_lower_graph (final, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  fb_plan_layout_memory (plan);
  g_autoptr(GPtrArray) objects = fb_codegen_plan (plan, 2, NULL, &error);
  g_assert_no_error (error);
  f->bundle = g_build_filename (f->dir, "deconv.fusebench", NULL);
  FbBundleOptions bo = { .source = "deconv-epilogues" };
  g_assert_true (fb_bundle_write (f->bundle, plan, objects, final, &bo, &error));
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
  g_free (f->bundle);
  fb_pipeline_free (f->pipeline);
  g_ptr_array_unref (f->inputs);
  ti_done ();
}

/* The convolution objects of plan.json's phases that are deconvolutions. */
static GPtrArray *
deconvolutions (JsonParser *parser)
{
  g_autoptr(GPtrArray) convs = tc_plan_convolutions (parser, "primitive");
  GPtrArray *found = g_ptr_array_new ();
  for (guint i = 0; i < convs->len; i++)
    if (g_strcmp0 (json_object_get_string_member (convs->pdata[i], "primitive"), "deconvolution") == 0)
      g_ptr_array_add (found, convs->pdata[i]);
  return found;
}

static void
test_load_and_run (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *plan = g_build_filename (f->bundle, "plan.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, plan, &error));
  g_autoptr(GPtrArray) found = deconvolutions (parser);
  /* All seven ConvTranspose of the case: the product path, oneDNN's own, the Add post-op. */
  g_assert_cmpuint (found->len, ==, 7);
  g_autoptr(GPtrArray) expected = fb_interp_run (fb_pipeline_final (f->pipeline), f->inputs, NULL,
                                                 &error);
  g_assert_no_error (error);
  g_autoptr(FbCpuModule) m = fb_cpu_bundle_load (f->bundle, 2, &error);
  g_assert_no_error (error);
  g_autoptr(GPtrArray) actual = fb_cpu_module_run (m, f->inputs, NULL, &error);
  g_assert_no_error (error);
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

typedef enum {
  DROP_PRIMITIVE,       /* read as a convolution: its sizes are no convolution's */
  UNKNOWN_PRIMITIVE,
  PRIMITIVE_NOT_TEXT,
  TALLER_OUTPUT,        /* an output height the input, kernel and pads do not give back */
  MORE_CHANNELS,        /* input channels the buffers have no room for */
} Damage;

static void
test_damaged (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *plan = g_build_filename (f->bundle, "plan.json", NULL);
  g_autofree char *original = NULL;
  g_assert_true (g_file_get_contents (plan, &original, NULL, NULL));
  for (Damage d = DROP_PRIMITIVE; d <= MORE_CHANNELS; d++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_assert_true (json_parser_load_from_data (parser, original, -1, &error));
      g_autoptr(GPtrArray) found = deconvolutions (parser);
      g_assert_cmpuint (found->len, >, 0);
      /* One with a stride: read as a convolution, a stride-1 one could have sizes that fit. */
      JsonObject *conv = NULL;
      for (guint i = 0; i < found->len && conv == NULL; i++)
        if (json_array_get_int_element (json_object_get_array_member (g_ptr_array_index (found, i),
                                                                      "geometry"), 10) > 1)
          conv = g_ptr_array_index (found, i);
      g_assert_nonnull (conv);
      JsonArray *geometry = json_object_get_array_member (conv, "geometry");
      switch (d)
        {
        case DROP_PRIMITIVE:
          json_object_remove_member (conv, "primitive");
          break;
        case UNKNOWN_PRIMITIVE:
          json_object_set_string_member (conv, "primitive", "pooling");
          break;
        case PRIMITIVE_NOT_TEXT:
          json_object_set_int_member (conv, "primitive", 1);
          break;
        case TALLER_OUTPUT:
          json_node_set_int (json_array_get_element (geometry, 5),
                             json_array_get_int_element (geometry, 5) * 2);
          break;
        case MORE_CHANNELS:
          json_node_set_int (json_array_get_element (geometry, 1),
                             json_array_get_int_element (geometry, 1) * 2);
          break;
        }
      g_autoptr(JsonGenerator) gen = json_generator_new ();
      json_generator_set_root (gen, json_parser_get_root (parser));
      g_assert_true (json_generator_to_file (gen, plan, &error));
      g_autoptr(FbCpuModule) m = fb_cpu_bundle_load (f->bundle, 1, &error);
      g_assert_null (m);
      g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE);
      g_assert_nonnull (strstr (error->message, "convolution"));
      g_clear_error (&error);
    }
  /* The untouched plan still loads: the refusals were the damage's. */
  g_assert_true (g_file_set_contents (plan, original, -1, NULL));
  g_autoptr(FbCpuModule) m = fb_cpu_bundle_load (f->bundle, 1, &error);
  g_assert_no_error (error);
  g_assert_nonnull (m);
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add ("/bundle-deconv/load-and-run", Fixture, NULL, setup, test_load_and_run, teardown);
  g_test_add ("/bundle-deconv/damaged", Fixture, NULL, setup, test_damaged, teardown);
  return g_test_run ();
}
