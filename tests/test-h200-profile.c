/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The profile made on an H200 (`fusebench profile --target cuda --counters` of the ResNet-50
 * that bench/models/make-resnet50.py writes, kept in tests/fixtures) opened here, on a machine
 * without a GPU, against the same model: it matches the model and its toggles, and it lands on
 * every stage of the pipeline, each stage's costs adding up to the profile's kernel time, the
 * convolutions' DRAM bytes measured. The model is generated into the build folder (it is 100 MB
 * of random weights: too big to keep). */
#include "fb-onnx-import.h"
#include "fb-pipeline.h"
#include "fb-profile.h"

#include <math.h>

static const char *resnet50_dir;   /* the generated model's folder, the test's argument */

static void
test_every_stage (void)
{
  const char *dir = resnet50_dir;
  g_assert_nonnull (dir);
  g_autofree char *model = g_build_filename (dir, "model.onnx", NULL);
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures",
                                                 "resnet50-h200.profile.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbProfile) profile = fb_profile_load (path, &error);
  g_assert_no_error (error);
  FbGraph *graph = fb_onnx_import_file (model, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = FB_LAYOUT_NHWC;
  FbPipeline *pipeline = fb_pipeline_new (graph);
  g_assert_true (fb_pipeline_run (pipeline, options, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_autoptr(GPtrArray) stages = fb_pipeline_dup_stages (pipeline);
  const FbGraph *import = ((FbStage *) g_ptr_array_index (stages, 0))->graph;
  g_assert_true (fb_profile_matches (profile, import->model, options, &error));
  g_assert_no_error (error);

  /* The same profile against the other layout is refused: what a user toggled differs. */
  g_autoptr(FbPipelineOptions) nchw = fb_pipeline_options_copy (options);
  nchw->layout = FB_LAYOUT_NCHW;
  g_autoptr(GError) mismatch = NULL;
  g_assert_false (fb_profile_matches (profile, import->model, nchw, &mismatch));
  g_assert_error (mismatch, FB_PROFILE_ERROR, FB_PROFILE_ERROR_MISMATCH);

  double total = fb_profile_total_us (profile);
  g_assert_cmpfloat (total, >, 100);
  for (guint s = 0; s < stages->len; s++)
    {
      FbStage *stage = g_ptr_array_index (stages, s);
      g_autoptr(GHashTable) costs = fb_profile_attribute (profile, stage->graph);
      double sum = 0;
      guint measured = 0;
      GHashTableIter it;
      gpointer value;
      g_hash_table_iter_init (&it, costs);
      while (g_hash_table_iter_next (&it, NULL, &value))
        {
          const FbNodeCost *c = value;
          sum += c->time_us;
          measured += c->bytes_source == FB_BYTES_MEASURED;
        }
      g_test_message ("stage %u: %u nodes carry cost, %u with measured bytes, %.1f of %.1f µs", s,
                      g_hash_table_size (costs), measured, sum, total);
      g_assert_cmpfloat (fabs (sum - total), <, 1e-6 * total);
      /* Every one of the 53 convolutions (and what fused into them) carries measured bytes. */
      g_assert_cmpuint (measured, >=, 53);
    }
  fb_pipeline_free (pipeline);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  resnet50_dir = argc > 1 ? argv[1] : NULL;
  g_test_add_func ("/h200-profile/every-stage", test_every_stage);
  return g_test_run ();
}
