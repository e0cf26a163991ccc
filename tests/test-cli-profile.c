/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench profile, through the real binary: the profile file has every key of the schema
 * with the right types and reads back; the Chrome trace is JSON with one X event per launch
 * naming original nodes; the sample's folded nodes are listed with their pass; bad models,
 * flags and output paths exit 2 with a message and leave no file behind. */
#include "fb-test-cli.h"
#include "fb-profile.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <dlfcn.h>
#include <string.h>

static char *
sample (void)
{
  return test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
}

static JsonNode *
parse_file (const char *path)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (parser));
}

/* member of o exists and holds a value of type (G_TYPE_INT64, G_TYPE_DOUBLE, G_TYPE_STRING),
 * an object (G_TYPE_OBJECT) or an array (G_TYPE_ARRAY); numbers may be either kind. */
static void
assert_member (JsonObject *o, const char *member, GType type)
{
  JsonNode *n = json_object_get_member (o, member);
  if (n == NULL)
    g_error ("missing key %s", member);
  if (type == G_TYPE_OBJECT)
    g_assert_true (JSON_NODE_HOLDS_OBJECT (n));
  else if (type == G_TYPE_ARRAY)
    g_assert_true (JSON_NODE_HOLDS_ARRAY (n));
  else if (type == G_TYPE_DOUBLE)
    g_assert_true (JSON_NODE_HOLDS_VALUE (n) && (json_node_get_value_type (n) == G_TYPE_DOUBLE ||
                                                 json_node_get_value_type (n) == G_TYPE_INT64));
  else
    {
      if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != type)
        g_error ("key %s has the wrong type", member);
    }
}

static void
test_schema (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = sample ();
  g_autofree char *dir = g_dir_make_tmp ("fb-cli-profile-XXXXXX", &error);
  g_autofree char *out = g_build_filename (dir, "p.json", NULL);
  g_autofree char *trace = g_build_filename (dir, "trace.json", NULL);
  g_autoptr(TestRun) run = test_run_fusebench ("profile", model, "--iterations", "3", "--warmup",
                                               "1", "-o", out, "--chrome-trace", trace, NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_nonnull (strstr (run->out, "diagnosis:"));
  g_assert_nonnull (strstr (run->out, "kernel (nodes)"));
  g_assert_nonnull (strstr (run->out, "/features/1/dw/act/Constant (by fold-constants)"));

  g_autoptr(JsonNode) root = parse_file (out);
  JsonObject *o = json_node_get_object (root);
  g_assert_cmpstr (json_object_get_string_member (o, "format"), ==, "fusebench-profile");
  g_assert_cmpint (json_object_get_int_member (o, "version"), ==, 1);
  assert_member (o, "model", G_TYPE_STRING);
  assert_member (o, "target", G_TYPE_STRING);
  assert_member (o, "device", G_TYPE_OBJECT);
  assert_member (o, "pipeline", G_TYPE_OBJECT);
  assert_member (o, "iterations", G_TYPE_INT64);
  assert_member (o, "wall_ms", G_TYPE_OBJECT);
  assert_member (o, "busy_ms", G_TYPE_DOUBLE);
  assert_member (o, "kernels", G_TYPE_ARRAY);
  assert_member (o, "folded", G_TYPE_ARRAY);
  assert_member (o, "timeline", G_TYPE_ARRAY);
  assert_member (o, "diagnosis", G_TYPE_ARRAY);
  JsonObject *device = json_object_get_object_member (o, "device");
  assert_member (device, "name", G_TYPE_STRING);
  assert_member (device, "peak_gflops", G_TYPE_DOUBLE);
  assert_member (device, "peak_gbps", G_TYPE_DOUBLE);
  g_assert_cmpstr (json_object_get_string_member (device, "ceilings"), ==, "datasheet");
  g_assert_cmpfloat (json_object_get_double_member (device, "peak_gbps"), ==, 20);
  JsonObject *pipeline = json_object_get_object_member (o, "pipeline");
  g_assert_cmpstr (json_object_get_string_member (pipeline, "layout"), ==, "nhwc");
  JsonObject *wall = json_object_get_object_member (o, "wall_ms");
  assert_member (wall, "median", G_TYPE_DOUBLE);
  assert_member (wall, "min", G_TYPE_DOUBLE);
  assert_member (wall, "max", G_TYPE_DOUBLE);
  g_assert_cmpint (json_object_get_int_member (o, "iterations"), ==, 3);

  JsonArray *kernels = json_object_get_array_member (o, "kernels");
  g_assert_cmpuint (json_array_get_length (kernels), >, 0);
  const struct { const char *key; GType type; } kernel_keys[] = {
    { "id", G_TYPE_INT64 }, { "name", G_TYPE_STRING }, { "stage_node", G_TYPE_INT64 },
    { "nodes", G_TYPE_ARRAY }, { "calls", G_TYPE_INT64 }, { "median_us", G_TYPE_DOUBLE },
    { "min_us", G_TYPE_DOUBLE }, { "max_us", G_TYPE_DOUBLE }, { "bytes_read", G_TYPE_INT64 },
    { "bytes_written", G_TYPE_INT64 }, { "bytes_source", G_TYPE_STRING },
    { "flops", G_TYPE_DOUBLE }, { "bound", G_TYPE_STRING }, { "roofline_share", G_TYPE_DOUBLE },
    { "kind", G_TYPE_STRING }, { "node_shares", G_TYPE_ARRAY }, { "counters", G_TYPE_OBJECT },
  };
  for (guint i = 0; i < json_array_get_length (kernels); i++)
    {
      JsonObject *k = json_array_get_object_element (kernels, i);
      for (guint j = 0; j < G_N_ELEMENTS (kernel_keys); j++)
        assert_member (k, kernel_keys[j].key, kernel_keys[j].type);
      g_assert_cmpstr (json_object_get_string_member (k, "bytes_source"), ==, "modeled");
      const char *bound = json_object_get_string_member (k, "bound");
      g_assert_true (g_str_equal (bound, "memory") || g_str_equal (bound, "compute"));
    }
  JsonArray *folded = json_object_get_array_member (o, "folded");
  gboolean identity = FALSE;
  for (guint i = 0; i < json_array_get_length (folded); i++)
    {
      JsonObject *f = json_array_get_object_element (folded, i);
      if (g_str_equal (json_object_get_string_member (f, "node"), "/classifier/dropout/Identity"))
        identity = g_str_equal (json_object_get_string_member (f, "by"), "cleanup");
    }
  g_assert_true (identity);
  JsonArray *timeline = json_object_get_array_member (o, "timeline");
  guint spans = json_array_get_length (timeline);
  g_assert_cmpuint (spans, >=, json_array_get_length (kernels));
  JsonObject *span = json_array_get_object_element (timeline, 0);
  assert_member (span, "kernel", G_TYPE_INT64);
  assert_member (span, "start_us", G_TYPE_DOUBLE);
  assert_member (span, "end_us", G_TYPE_DOUBLE);
  assert_member (span, "lane", G_TYPE_INT64);

  /* The library reads what the command wrote. */
  g_autoptr(FbProfile) p = fb_profile_load (out, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (p->kernels->len, ==, json_array_get_length (kernels));

  /* The trace: one complete event per span, each naming its original nodes. */
  g_autoptr(JsonNode) troot = parse_file (trace);
  JsonArray *events = json_object_get_array_member (json_node_get_object (troot), "traceEvents");
  guint x = 0;
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      if (!g_str_equal (json_object_get_string_member (e, "ph"), "X"))
        continue;
      assert_member (e, "ts", G_TYPE_DOUBLE);
      assert_member (e, "dur", G_TYPE_DOUBLE);
      assert_member (e, "name", G_TYPE_STRING);
      JsonArray *nodes = json_object_get_array_member (json_object_get_object_member (e, "args"), "nodes");
      g_assert_cmpuint (json_array_get_length (nodes), >, 0);
      x++;
    }
  g_assert_cmpuint (x, ==, spans);

  /* --json prints the same schema. */
  g_autoptr(TestRun) json = test_run_fusebench ("profile", model, "--iterations", "2", "--json", NULL);
  g_assert_cmpint (json->status, ==, 0);
  g_autoptr(GBytes) bytes = g_bytes_new (json->out, strlen (json->out));
  g_autoptr(FbProfile) q = fb_profile_load_bytes (bytes, "stdout", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (q->iterations, ==, 2);

  g_unlink (out);
  g_unlink (trace);
  g_rmdir (dir);
}

static guint
count_files (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;
  while (d && g_dir_read_name (d))
    n++;
  return n;
}

static void
test_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = sample ();
  g_autofree char *dir = g_dir_make_tmp ("fb-cli-profile-XXXXXX", &error);
  g_autofree char *out = g_build_filename (dir, "p.json", NULL);
  g_autofree char *nowhere = g_build_filename (dir, "missing", "p.json", NULL);
  g_autofree char *broken = g_build_filename (dir, "broken.onnx", NULL);
  g_assert_true (g_file_set_contents (broken, "not a model", -1, NULL));

  const char *cases[][8] = {
    { "profile", model, "-o", nowhere, NULL },
    { "profile", model, "-o", dir, NULL },
    { "profile", model, "-o", out, "--chrome-trace", nowhere, NULL },
    { "profile", "/nonexistent/model.onnx", "-o", out, NULL },
    { "profile", broken, "-o", out, NULL },
    { "profile", model, "--iterations", "0", "-o", out, NULL },
    { "profile", model, "--target", "tpu", "-o", out, NULL },
    { "profile", model, "--no-such-flag", "-o", out, NULL },
  };
  static const char *says[] = { "does not exist", "is a folder", "does not exist",
                                "/nonexistent/model.onnx", "broken.onnx", "--iterations",
                                "expected cpu or cuda", "no-such-flag" };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(TestRun) run = test_run_fusebench (cases[i][0], cases[i][1], cases[i][2],
                                                   cases[i][3], cases[i][4], cases[i][5],
                                                   cases[i][6], NULL);
      g_assert_cmpint (run->status, ==, 2);
      if (!strstr (run->err, says[i]))
        g_error ("case %u: '%s' does not say '%s'", i, run->err, says[i]);
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test (nowhere, G_FILE_TEST_EXISTS));
      g_assert_cmpuint (count_files (dir), ==, 1);     /* broken.onnx only */
    }
  g_unlink (broken);
  g_rmdir (dir);
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

/* A bundle compiled before profiles without compiling, under the model's name. */
static void
test_bundle (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = sample ();
  g_autofree char *dir = g_dir_make_tmp ("fb-cli-profile-XXXXXX", &error);
  g_autofree char *bundle = g_build_filename (dir, "sample.fusebench", NULL);
  g_autofree char *out = g_build_filename (dir, "p.json", NULL);
  g_autoptr(TestRun) compile = test_run_fusebench ("compile", model, "--target", "cpu", "-o",
                                                   bundle, NULL);
  g_assert_cmpint (compile->status, ==, 0);
  g_autoptr(TestRun) run = test_run_fusebench ("profile", bundle, "--iterations", "2", "-o", out, NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_autoptr(FbProfile) p = fb_profile_load (out, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (p->model, ==, "model.onnx");
  g_assert_null (p->model_digest);
  g_assert_cmpuint (p->kernels->len, >, 0);
  for (guint i = 0; i < p->kernels->len; i++)
    g_assert_cmpuint (((FbProfileKernel *) g_ptr_array_index (p->kernels, i))->nodes->len, >, 0);
  g_autoptr(TestRun) rm = test_run_fusebench ("profile", bundle, "--iterations", "1", NULL);
  g_assert_cmpint (rm->status, ==, 0);
  g_unlink (out);
  remove_tree (dir);
}

/* Without an NVIDIA driver, profiling on cuda is the machine's failure (exit 1), says so, and
 * writes nothing. */
static void
test_cuda_without_driver (void)
{
  void *driver = dlopen ("libcuda.so.1", RTLD_NOW);
  if (driver != NULL)
    {
      dlclose (driver);
      g_test_skip ("this machine has an NVIDIA driver");
      return;
    }
  g_autofree char *model = sample ();
  g_autofree char *dir = g_dir_make_tmp ("fb-cli-profile-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "p.json", NULL);
  g_autoptr(TestRun) run = test_run_fusebench ("profile", model, "--target", "cuda", "-o", out,
                                               NULL);
  g_assert_cmpint (run->status, ==, 1);
  g_assert_nonnull (strstr (run->err, "NVIDIA driver"));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_rmdir (dir);
}

/* With a GPU: the profile's wall is the untraced replays', the printed timing line says both
 * medians and the tracer's overhead, and the file keeps them. Needs an NVIDIA driver and GPU. */
static void
test_cuda_untraced (void)
{
  void *driver = dlopen ("libcuda.so.1", RTLD_NOW);
  if (driver == NULL)
    {
      g_test_skip ("no NVIDIA driver on this machine: untraced GPU timing needs a GPU");
      return;
    }
  dlclose (driver);
  g_autofree char *model = sample ();
  g_autofree char *dir = g_dir_make_tmp ("fb-cli-profile-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "p.json", NULL);
  g_autoptr(TestRun) run = test_run_fusebench ("profile", model, "--target", "cuda", "-o", out,
                                               "--iterations", "20", NULL);
  if (run->status == 1 && strstr (run->err, "no usable CUDA driver or GPU"))
    {
      g_test_skip ("the NVIDIA driver here sees no GPU");
      remove_tree (dir);
      return;
    }
  g_assert_cmpint (run->status, ==, 0);
  g_assert_nonnull (strstr (run->out, "timing: wall from 20 untraced replays (CUDA events)"));
  g_autoptr(GError) error = NULL;
  g_autoptr(FbProfile) p = fb_profile_load (out, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (p->timing.untraced_iterations, ==, 20);
  g_assert_cmpfloat (p->wall_median_ms, ==, p->timing.untraced_median_ms);
  g_assert_cmpfloat (p->timing.traced_median_ms, >, 0);
  remove_tree (dir);
}

int
main (int argc, char **argv)
{
  /* Given ceilings: no measuring, and the same figures on every machine. */
  g_setenv ("FUSEBENCH_CEILINGS", "50,20", TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/profile/schema", test_schema);
  g_test_add_func ("/cli/profile/bad-input", test_bad_input);
  g_test_add_func ("/cli/profile/bundle", test_bundle);
  g_test_add_func ("/cli-profile/cuda-without-driver", test_cuda_without_driver);
  g_test_add_func ("/cli-profile/cuda-untraced", test_cuda_untraced);
  return g_test_run ();
}
