/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cuda target without a GPU: lowering puts contractions into library phases (the cpu
 * target's plan unchanged), a cuda bundle is written and read back (a damaged one refused),
 * the library search reports every place it looked, and with no driver a run fails with a clear
 * device error and exit status 1 while the cpu target keeps working. Where a driver and a GPU
 * are present the no-driver checks are skipped and say why. */
#include "fb-test-cli.h"
#include "fb-backend.h"
#include "fb-bundle.h"
#include "fb-cuda.h"
#include "fb-lower.h"
#include "fb-onnx-import.h"
#include "fb-pipeline.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static FbPipeline *
load_case (const char *name, FbLayout layout)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = test_source_path ("tests", "cases", name, "model.onnx", NULL);
  FbGraph *graph = fb_onnx_import_file (model, NULL, &error);
  g_assert_no_error (error);
  FbPipeline *p = fb_pipeline_new (graph);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = layout;
  g_assert_true (fb_pipeline_run (p, options, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  return p;
}

static char *
plan_text (const FbPlan *plan)
{
  GString *s = g_string_new (NULL);
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      g_autofree char *t = fb_kernel_to_string (g_ptr_array_index (plan->kernels, k), plan);
      g_string_append (s, t);
    }
  return g_string_free (s, FALSE);
}

static gboolean
has_driver (char **why)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *device = fb_cuda_device_describe (&error);
  if (device == NULL)
    {
      if (why)
        *why = g_strdup (error->message);
      return FALSE;
    }
  return TRUE;
}

/* Lowers p for the GPU and counts its cuDNN phases' Clip, Swish and HardSwish activations;
 * every phase's post-ops must be ones cuDNN runs with its convolution. Returns the plan's
 * text. */
static char *
cudnn_activations (const FbBackend *cuda, FbPipeline *p, guint *clips, guint *swishes,
                   guint *hard_swishes)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = cuda->lower (cuda, fb_pipeline_final (p), &error);
  g_assert_no_error (error);
  *clips = *swishes = *hard_swishes = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint i = 0; i < kernel->phases->len; i++)
        {
          const FbKPhase *ph = g_ptr_array_index (kernel->phases, i);
          if (ph->conv == NULL || ph->conv->lib != FB_KLIB_CONV)
            continue;
          int64_t act;
          double param;
          g_assert_true (ph->conv->nchw);
          g_assert_true (fb_conv_desc_cudnn_epilogue (&ph->conv->desc, &act, &param));
          *clips += act == FB_CONV_POST_CLIP;
          *swishes += act == FB_CONV_POST_SWISH;
          *hard_swishes += act == FB_CONV_POST_HARD_SWISH;
        }
    }
  return plan_text (plan);
}

static void
test_lower_contractions (void)
{
  g_autoptr(GError) error = NULL;
  const FbBackend *cuda = fb_backend_lookup ("cuda");
  const FbBackend *cpu = fb_backend_lookup ("cpu");
  g_assert_nonnull (cuda);
  g_assert_cmpstr (cuda->assembly_suffix, ==, "ptx");
  g_assert_true (cuda->channels_last);

  g_autoptr(FbPipeline) mm = load_case ("matmul", FB_LAYOUT_NCHW);
  g_autoptr(FbPlan) gpu = cuda->lower (cuda, fb_pipeline_final (mm), &error);
  g_assert_no_error (error);
  g_assert_true (gpu->target_desc->gpu);
  g_autofree char *gt = plan_text (gpu);
  g_assert_nonnull (strstr (gt, "cuBLASLt matrix product"));
  g_assert_null (strstr (gt, "dnnl_sgemm"));
  /* The broadcast batch of matmul_4 (2x1 against 3) is one product per outer batch. */
  g_assert_nonnull (strstr (gt, "from elements"));
  g_autoptr(FbPlan) host = cpu->lower (cpu, fb_pipeline_final (mm), &error);
  g_assert_no_error (error);
  g_autofree char *ht = plan_text (host);
  g_assert_nonnull (strstr (ht, "dnnl_sgemm"));
  g_assert_null (strstr (ht, "cuBLASLt"));

  g_autoptr(FbPipeline) conv = load_case ("conv-epilogues", FB_LAYOUT_NCHW);
  guint clips, swishes, hard_swishes;
  g_autofree char *ct = cudnn_activations (cuda, conv, &clips, &swishes, &hard_swishes);
  g_assert_nonnull (strstr (ct, "cuDNN convolution"));
  g_assert_null (strstr (ct, "dnnl_sgemm"));
  /* The SiLU (simplified to a Swish), the HardSwish and the 1x1 convolution's Clip (0, 6) are
   * cuDNN's, while the depthwise one's Clip, before a residual Add, never is; asked for, the
   * Clip and the HardSwish are generated passes, or all three activations. */
  g_assert_cmpuint (clips, ==, 1);
  g_assert_cmpuint (swishes, ==, 1);
  g_assert_cmpuint (hard_swishes, ==, 1);
  g_setenv ("FUSEBENCH_GPU_CONV_ACT", "swish", TRUE);
  g_free (cudnn_activations (cuda, conv, &clips, &swishes, &hard_swishes));
  g_assert_cmpuint (clips + hard_swishes, ==, 0);
  g_assert_cmpuint (swishes, ==, 1);
  g_setenv ("FUSEBENCH_GPU_CONV_ACT", "relu", TRUE);
  g_free (cudnn_activations (cuda, conv, &clips, &swishes, &hard_swishes));
  g_assert_cmpuint (clips + swishes + hard_swishes, ==, 0);
  g_unsetenv ("FUSEBENCH_GPU_CONV_ACT");

  /* Deconvolutions are generated code on the GPU, channels-last with constant weights too:
   * cuDNN's phase is a forward convolution. */
  g_autoptr(FbPipeline) deconv = load_case ("deconv-epilogues", FB_LAYOUT_NHWC);
  g_autoptr(FbPlan) dplan = cuda->lower (cuda, fb_pipeline_final (deconv), &error);
  g_assert_no_error (error);
  guint deconvs = 0;
  for (guint k = 0; k < dplan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (dplan->kernels, k);
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          const FbKPhase *ph = g_ptr_array_index (kernel->phases, p);
          g_assert_false (ph->conv && ph->conv->desc.transposed);
        }
      if (kernel->label && strstr (kernel->label, "do not run deconvolutions"))
        deconvs++;
    }
  g_assert_cmpuint (deconvs, ==, 7);

  /* Recurrent layers lower as generated code: no host library call inside the time loop. */
  const char *recurrent[] = { "lstm", "gru" };
  for (guint i = 0; i < G_N_ELEMENTS (recurrent); i++)
    {
      g_autoptr(FbPipeline) rnn = load_case (recurrent[i], FB_LAYOUT_NCHW);
      g_autoptr(FbPlan) rplan = cuda->lower (cuda, fb_pipeline_final (rnn), &error);
      g_assert_no_error (error);
      g_autofree char *rt = plan_text (rplan);
      g_assert_null (strstr (rt, "dnnl_sgemm"));
      g_assert_nonnull (strstr (rt, recurrent[i][0] == 'l' ? "LSTM" : "GRU"));
    }
}

/* What cuDNN runs with its convolution: an Add, then Relu, Swish, HardSwish or Clip from 0;
 * nothing after
 * the activation, no other activation, no Clip with another lower bound. */
static void
test_cudnn_epilogue (void)
{
  const struct {
    FbConvPost post[2];
    int        n;
    int        ok;
    int64_t    act;
    double     param;
  } cases[] = {
    { { { FB_CONV_POST_NONE, 0, 0 } }, 0, 1, FB_CONV_POST_NONE, 0 },
    { { { FB_CONV_POST_RELU, 0, 0 } }, 1, 1, FB_CONV_POST_RELU, 0 },
    { { { FB_CONV_POST_RELU, 0.1, 0 } }, 1, 0, 0, 0 },
    { { { FB_CONV_POST_ADD, 0, 0 }, { FB_CONV_POST_RELU, 0, 0 } }, 2, 1, FB_CONV_POST_RELU, 0 },
    { { { FB_CONV_POST_RELU, 0, 0 }, { FB_CONV_POST_ADD, 0, 0 } }, 2, 0, 0, 0 },
    { { { FB_CONV_POST_CLIP, 0, 6 } }, 1, 1, FB_CONV_POST_CLIP, 6 },
    { { { FB_CONV_POST_CLIP, 0, INFINITY } }, 1, 1, FB_CONV_POST_RELU, 0 },
    { { { FB_CONV_POST_CLIP, -1, 1 } }, 1, 0, 0, 0 },
    { { { FB_CONV_POST_CLIP, 0, 0 } }, 1, 0, 0, 0 },
    { { { FB_CONV_POST_SWISH, 1.5, 0 } }, 1, 1, FB_CONV_POST_SWISH, 1.5 },
    { { { FB_CONV_POST_ADD, 0, 0 }, { FB_CONV_POST_SWISH, 1, 0 } }, 2, 1, FB_CONV_POST_SWISH, 1 },
    { { { FB_CONV_POST_SWISH, 1, 0 }, { FB_CONV_POST_RELU, 0, 0 } }, 2, 0, 0, 0 },
    { { { FB_CONV_POST_HARD_SWISH, 1.0 / 6, 0.5 } }, 1, 1, FB_CONV_POST_HARD_SWISH, 0 },
    { { { FB_CONV_POST_ADD, 0, 0 }, { FB_CONV_POST_HARD_SWISH, 1.0 / 6, 0.5 } }, 2, 1,
      FB_CONV_POST_HARD_SWISH, 0 },
    { { { FB_CONV_POST_HARD_SWISH, 1.0 / 6, 0.5 }, { FB_CONV_POST_ADD, 0, 0 } }, 2, 0, 0, 0 },
    { { { FB_CONV_POST_SIGMOID, 0, 0 } }, 1, 0, 0, 0 },
    { { { FB_CONV_POST_SUM, 0, 0 } }, 1, 0, 0, 0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      FbConvDesc d = { .n_post = cases[i].n };
      memcpy (d.post, cases[i].post, sizeof cases[i].post);
      int64_t act = -1;
      double param = -1;
      g_assert_cmpint (fb_conv_desc_cudnn_epilogue (&d, &act, &param), ==, cases[i].ok);
      if (cases[i].ok)
        {
          g_assert_cmpint (act, ==, cases[i].act);
          g_assert_cmpfloat (param, ==, cases[i].param);
        }
    }
}

/* A model of products alone needs no PTX: its cuda bundle is written and read without a GPU. */
static void
test_bundle (void)
{
  g_autoptr(GError) error = NULL;
  const FbBackend *cuda = fb_backend_lookup ("cuda");
  g_autofree char *dir = g_dir_make_tmp ("fb-test-cuda-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *bundle = g_build_filename (dir, "mm.fusebench", NULL);
  g_autofree char *model = test_source_path ("tests", "fixtures", "cuda-matmul.onnx", NULL);
  FbGraph *graph = fb_onnx_import_file (model, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(FbPipeline) p = fb_pipeline_new (graph);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  g_assert_true (fb_pipeline_run (p, options, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  FbBundleOptions bopts = { .source = "cuda-matmul.onnx" };
  FbCompileStats stats;
  g_assert_true (cuda->compile_bundle (cuda, fb_pipeline_final (p), bundle, &bopts, NULL, &stats,
                                       &error));
  g_assert_no_error (error);
  g_autofree char *target = fb_backend_bundle_target (bundle, &error);
  g_assert_cmpstr (target, ==, "cuda");
  g_autofree char *launch = g_build_filename (bundle, "cuda.json", NULL);
  g_autofree char *plan_path = g_build_filename (bundle, "plan.json", NULL);
  g_autofree char *plan_json = NULL;
  g_assert_true (g_file_test (launch, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_get_contents (plan_path, &plan_json, NULL, NULL));
  g_assert_nonnull (strstr (plan_json, "\"matmul\""));

  /* Read back: with no GPU it is the device that is missing, not the bundle that is wrong. */
  g_autofree char *why = NULL;
  FbCompiled *loaded = cuda->load_bundle (cuda, bundle, NULL, &error);
  if (has_driver (&why))
    {
      g_assert_no_error (error);
      cuda->free (loaded);
    }
  else
    {
      g_assert_null (loaded);
      g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE);
    }
  g_clear_error (&error);

  /* A product that says it is split for TF32 but runs in float32 (or over a depth not three
   * equal parts) does not fit its description: a damaged bundle too. */
  g_autoptr(GString) split = g_string_new (plan_json);
  g_assert_cmpuint (g_string_replace (split, "\"alpha\"", "\"split3\": true, \"alpha\"", 1), ==, 1);
  g_assert_true (g_file_set_contents (plan_path, split->str, -1, NULL));
  g_assert_null (cuda->load_bundle (cuda, bundle, NULL, &error));
  g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE);
  g_assert_nonnull (strstr (error->message, "matrix product"));
  g_clear_error (&error);
  g_assert_true (g_file_set_contents (plan_path, plan_json, -1, NULL));

  /* A damaged launch file is a damaged bundle, named as such. */
  g_assert_true (g_file_set_contents (launch, "{\"kernels\": [[{\"entry\": 3}]]}", -1, NULL));
  g_assert_null (cuda->load_bundle (cuda, bundle, NULL, &error));
  g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE);
  g_assert_nonnull (strstr (error->message, "cuda.json"));
  g_clear_error (&error);
  /* The cpu target refuses it by its target. */
  g_assert_null (fb_backend_lookup ("cpu")->load_bundle (fb_backend_lookup ("cpu"), bundle, NULL,
                                                         &error));
  g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE);
  g_assert_nonnull (strstr (error->message, "'cuda' target"));

  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_cmpint (system (rm), ==, 0);
}

/* In a child, so that the search runs afresh: a library that is there but broken is named
 * with the loader's reason, and the folders of FUSEBENCH_CUDA_LIBRARY_PATH come first. */
static void
test_search_report (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *device = fb_cuda_device_describe (&error);
      g_assert_null (device);
      g_printerr ("%s\n", error->message);
      return;
    }
  g_autofree char *why = NULL;
  if (has_driver (&why))
    {
      g_test_skip ("a CUDA driver is installed here: the search finds it");
      return;
    }
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("fb-test-cuda-lib-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *fake = g_build_filename (dir, "libcuda.so.1", NULL);
  g_assert_true (g_file_set_contents (fake, "not a shared object", -1, NULL));
  g_setenv ("FUSEBENCH_CUDA_LIBRARY_PATH", dir, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDOUT);
  g_unsetenv ("FUSEBENCH_CUDA_LIBRARY_PATH");
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*needs the NVIDIA driver (libcuda.so.1)*looked for:*");
  g_autofree char *pattern = g_strdup_printf ("*looked for: %s (*", fake);
  g_test_trap_assert_stderr (pattern);
  g_test_trap_assert_stderr ("*/usr/lib/libcuda.so.1*");
  g_unlink (fake);
  g_rmdir (dir);
}

/* No driver: a device error, exit status 1, one clear line; the cpu target unaffected, in the
 * same process and on the command line. */
static void
test_no_driver (void)
{
  g_autofree char *why = NULL;
  if (has_driver (&why))
    {
      g_test_skip ("a CUDA driver and GPU are present here");
      return;
    }
  g_assert_nonnull (strstr (why, "libcuda.so.1"));
  g_autoptr(GError) error = NULL;
  const FbBackend *cuda = fb_backend_lookup ("cuda"), *cpu = fb_backend_lookup ("cpu");
  g_autoptr(FbPipeline) p = load_case ("small-cnn", FB_LAYOUT_NCHW);
  g_assert_null (cuda->compile (cuda, fb_pipeline_final (p), NULL, &error));
  g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE);
  g_clear_error (&error);
  FbCompiled *c = cpu->compile (cpu, fb_pipeline_final (p), NULL, &error);
  g_assert_no_error (error);
  cpu->free (c);

  g_autofree char *model = test_source_path ("tests", "cases", "small-cnn", "model.onnx", NULL);
  g_autofree char *data = test_source_path ("tests", "cases", "small-cnn", "test_data_set_0", NULL);
  g_autoptr(TestRun) run = test_run_fusebench ("run", model, "--target", "cuda", "--input-dir", data,
                                               NULL);
  g_assert_cmpint (run->status, ==, 1);
  g_assert_cmpstr (run->out, ==, "");
  g_assert_nonnull (strstr (run->err, "the cuda target needs the NVIDIA driver"));
  g_autofree char *case_dir = test_source_path ("tests", "cases", "small-cnn", NULL);
  g_autoptr(TestRun) check2 = test_run_fusebench ("check", "--target", "cuda", case_dir, NULL);
  g_assert_cmpint (check2->status, ==, 1);
  g_assert_nonnull (strstr (check2->out, "FAIL"));
  g_assert_nonnull (strstr (check2->out, "NVIDIA driver"));
  g_autoptr(TestRun) on_cpu = test_run_fusebench ("check", "--target", "cpu", case_dir, NULL);
  g_assert_cmpint (on_cpu->status, ==, 0);
  g_assert_nonnull (strstr (on_cpu->out, "1 passed"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/lower-contractions", test_lower_contractions);
  g_test_add_func ("/cuda/cudnn-epilogue", test_cudnn_epilogue);
  g_test_add_func ("/cuda/bundle", test_bundle);
  g_test_add_func ("/cuda/search-report", test_search_report);
  g_test_add_func ("/cuda/no-driver", test_no_driver);
  return g_test_run ();
}
