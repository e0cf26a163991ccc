/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The profile model: the file round-trips; damaged files are refused naming the key, never
 * with a crash or a JSON-library warning (g_test_init makes those fatal); the Chrome trace is
 * JSON with one X event per launch; attribution adds up to the total on every stage of the
 * sample model's pipeline, marking split costs; a profile of another model or other toggles is
 * refused saying what differs. */
#include "fb-profile.h"
#include "fb-onnx-import.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

static FbProfileKernel *
kernel (guint id, const char *name, guint stage_node, double us, const char *first, ...)
{
  FbProfileKernel *k = fb_profile_kernel_new ();
  va_list ap;
  k->id = id;
  k->name = g_strdup (name);
  k->stage_node = stage_node;
  k->calls = 1;
  k->median_us = us;
  k->min_us = us * 0.9;
  k->max_us = us * 1.5;
  k->bytes_read = 4096;
  k->bytes_written = 1024;
  k->flops = 1e6;
  k->roofline_share = 0.25;
  va_start (ap, first);
  for (const char *n = first; n; n = va_arg (ap, const char *))
    g_ptr_array_add (k->nodes, g_strdup (n));
  va_end (ap);
  for (guint i = 0; i < k->nodes->len; i++)
    {
      double s = 1.0 / k->nodes->len;
      g_array_append_val (k->node_shares, s);
    }
  return k;
}

static FbProfile *
hand_made (void)
{
  FbProfile *p = fb_profile_new ();
  FbProfileFolded f = { g_strdup ("shape_of_x"), g_strdup ("fold-constants") };
  FbProfileSpan spans[] = { { 0, 0.0, 10.5, 0 }, { 1, 11.0, 20.0, 1, "sm90_xmma_gemm" },
                            { 1, 21.0, 22.0, 0 } };
  FbShape shape = fb_shape_make (4, (const int64_t[]) { 1, 3, 32, 32 });

  p->model = g_strdup ("model.onnx");
  p->model_digest = g_strdup ("00ff");
  p->target = g_strdup ("cpu");
  p->device.name = g_strdup ("test cpu (2 threads)");
  p->device.peak_gflops = 120.5;
  p->device.peak_gbps = 14.25;
  p->device.ceilings_measured = TRUE;
  g_ptr_array_add (p->pipeline->disabled_passes, g_strdup ("cse"));
  g_ptr_array_add (p->pipeline->no_fuse, g_strdup ("relu_1"));
  p->pipeline->layout = FB_LAYOUT_NHWC;
  g_hash_table_insert (p->pipeline->input_shapes, g_strdup ("x"), g_memdup2 (&shape, sizeof shape));
  p->iterations = 50;
  p->wall_median_ms = 0.5;
  p->wall_min_ms = 0.4;
  p->wall_max_ms = 0.9;
  p->busy_ms = 0.031;
  g_ptr_array_add (p->kernels, kernel (0, "k0_Conv", 7, 10.5, "conv_0", "bn_0", NULL));
  FbProfileKernel *k1 = kernel (1, "k1_Relu", 9, 10.0, "relu_1", NULL);
  k1->kind = FB_PROFILE_KERNEL_LIBRARY;
  k1->bound = FB_BOUND_COMPUTE;
  k1->bytes_source = FB_BYTES_MEASURED;
  k1->calls = 2;
  k1->counters.cycles = 1234;
  double busy[] = { 8.0, 6.5 };
  g_array_append_vals (k1->worker_busy_us, busy, 2);
  g_ptr_array_add (p->kernels, k1);
  g_array_append_val (p->folded, f);
  g_array_append_vals (p->timeline, spans, G_N_ELEMENTS (spans));
  g_ptr_array_add (p->diagnosis, g_strdup ("time: 51 % in k0_Conv"));
  p->counters_note = g_strdup ("no counters: perf_event_paranoid is 3");
  return p;
}

/* text with from replaced by to, loaded: refused as invalid, naming key. */
static void
assert_bytes_refused (const char *text, const char *from, const char *to, const char *key)
{
  g_autoptr(GError) error = NULL;
  const char *at = strstr (text, from);
  g_assert_nonnull (at);
  g_autofree char *edited = g_strdup_printf ("%.*s%s%s", (int) (at - text), text, to,
                                             at + strlen (from));
  g_autoptr(GBytes) bytes = g_bytes_new (edited, strlen (edited));
  g_autoptr(FbProfile) q = fb_profile_load_bytes (bytes, "damaged.json", &error);
  g_assert_null (q);
  g_assert_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_INVALID);
  if (!strstr (error->message, key))
    g_error ("'%s' does not name %s", error->message, key);
}

static void
test_round_trip (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbProfile) p = hand_made ();
  g_autofree char *text = fb_profile_to_json (p);
  g_autoptr(GBytes) bytes = g_bytes_new (text, strlen (text));
  g_autoptr(FbProfile) q = fb_profile_load_bytes (bytes, "round-trip", &error);

  g_assert_no_error (error);
  g_assert_nonnull (q);
  g_assert_cmpstr (q->model, ==, "model.onnx");
  g_assert_cmpstr (q->model_digest, ==, "00ff");
  g_assert_cmpstr (q->device.name, ==, p->device.name);
  g_assert_cmpfloat (q->device.peak_gbps, ==, 14.25);
  g_assert_true (q->device.ceilings_measured);
  g_assert_cmpuint (q->pipeline->layout, ==, FB_LAYOUT_NHWC);
  g_assert_cmpuint (q->pipeline->disabled_passes->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (q->pipeline->no_fuse, 0), ==, "relu_1");
  const FbShape *s = g_hash_table_lookup (q->pipeline->input_shapes, "x");
  g_assert_nonnull (s);
  g_assert_cmpint (s->rank, ==, 4);
  g_assert_cmpint (s->dim[3], ==, 32);
  g_assert_cmpuint (q->iterations, ==, 50);
  g_assert_cmpfloat (q->wall_max_ms, ==, 0.9);
  g_assert_cmpuint (q->kernels->len, ==, 2);
  FbProfileKernel *k = g_ptr_array_index (q->kernels, 1);
  g_assert_cmpuint (k->kind, ==, FB_PROFILE_KERNEL_LIBRARY);
  g_assert_cmpuint (k->bound, ==, FB_BOUND_COMPUTE);
  g_assert_cmpuint (k->bytes_source, ==, FB_BYTES_MEASURED);
  g_assert_cmpuint (k->calls, ==, 2);
  g_assert_cmpuint (k->bytes_read, ==, 4096);
  g_assert_cmpfloat (k->counters.cycles, ==, 1234);
  g_assert_cmpfloat (k->counters.llc_misses, ==, -1);
  g_assert_cmpuint (k->worker_busy_us->len, ==, 2);
  g_assert_cmpuint (((FbProfileKernel *) g_ptr_array_index (q->kernels, 0))->node_shares->len, ==, 2);
  g_assert_cmpuint (q->folded->len, ==, 1);
  g_assert_cmpstr (g_array_index (q->folded, FbProfileFolded, 0).by, ==, "fold-constants");
  g_assert_cmpuint (q->timeline->len, ==, 3);
  g_assert_cmpuint (g_array_index (q->timeline, FbProfileSpan, 1).lane, ==, 1);
  /* The device function a span ran, where the profile knows it (cuda), and none elsewhere. */
  g_assert_cmpstr (g_array_index (q->timeline, FbProfileSpan, 1).function, ==, "sm90_xmma_gemm");
  g_assert_null (g_array_index (q->timeline, FbProfileSpan, 0).function);
  g_assert_cmpstr (g_ptr_array_index (q->diagnosis, 0), ==, "time: 51 % in k0_Conv");
  g_assert_cmpstr (q->counters_note, ==, p->counters_note);
  /* Equal profiles, equal files. */
  g_autofree char *again = fb_profile_to_json (q);
  g_assert_cmpstr (again, ==, text);
}

/* The untraced figures of a GPU profile round-trip, with the overhead written for readers of the
 * file and recomputed on reading; a profile without them writes no "timing" and reads zeros, as
 * the fixtures made before them do; a damaged "timing" is refused naming the key. */
static void
test_timing_round_trip (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbProfile) p = hand_made ();
  g_autofree char *plain = fb_profile_to_json (p);
  g_assert_null (strstr (plain, "\"timing\""));
  g_assert_null (fb_profile_timing_describe (p));
  g_assert_cmpfloat (fb_profile_timing_overhead (p), ==, 0);

  p->timing = (FbProfileTiming) {
    .untraced_iterations = 100, .untraced_median_ms = 0.5, .untraced_min_ms = 0.49,
    .untraced_max_ms = 0.61, .noise_ms = 0.004, .traced_median_ms = 0.59,
    .replay_launch_ms = 0.012,
  };
  g_autofree char *text = fb_profile_to_json (p);
  g_assert_nonnull (strstr (text, "\"overhead\" : 0.17"));
  g_autoptr(GBytes) bytes = g_bytes_new (text, strlen (text));
  g_autoptr(FbProfile) q = fb_profile_load_bytes (bytes, "timing.json", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (q->timing.untraced_iterations, ==, 100);
  g_assert_cmpfloat (q->timing.untraced_median_ms, ==, 0.5);
  g_assert_cmpfloat (q->timing.untraced_min_ms, ==, 0.49);
  g_assert_cmpfloat (q->timing.untraced_max_ms, ==, 0.61);
  g_assert_cmpfloat (q->timing.noise_ms, ==, 0.004);
  g_assert_cmpfloat (q->timing.traced_median_ms, ==, 0.59);
  g_assert_cmpfloat (q->timing.replay_launch_ms, ==, 0.012);
  g_assert_cmpfloat_with_epsilon (fb_profile_timing_overhead (q), 0.18, 1e-9);
  g_autofree char *again = fb_profile_to_json (q);
  g_assert_cmpstr (again, ==, text);

  /* The line the command line prints and the window shows. */
  g_autofree char *line = fb_profile_timing_describe (q);
  g_assert_cmpstr (line, ==, "timing: wall from 100 untraced replays (CUDA events), median "
                   "0.500 ms, spread 0.004 ms; traced 0.590 ms (tracer +18.0 %, kernel "
                   "durations only); replay launch 12.0 µs");

  assert_bytes_refused (text, "\"untraced_iterations\" : 100", "\"untraced_iterations\" : 0",
                        "timing.untraced_iterations");
  assert_bytes_refused (text, "\"noise_ms\" : 0.004", "\"noise_ms\" : -0.004",
                        "timing.noise_ms");
  assert_bytes_refused (text, "\"traced_median_ms\"", "\"traced_medianz_ms\"",
                        "timing.traced_median_ms");
  assert_bytes_refused (text, "\"timing\" : {", "\"timing\" : 3, \"t\" : {", "timing");

  /* A profile written before untraced timing existed (the CPU sample's fixture). */
  g_autofree char *old = g_test_build_filename (G_TEST_DIST, "fixtures",
                                                "sample-cnn.profile.json", NULL);
  g_autoptr(FbProfile) o = fb_profile_load (old, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (o->timing.untraced_iterations, ==, 0);
  g_assert_null (fb_profile_timing_describe (o));
}

/* Whole replays' DRAM traffic round-trips and is described beside the sum of the kernels
 * whose bytes were measured (the modeled ones left out); absent, nothing is written or said;
 * damaged, it is refused naming the key. */
static void
test_dram_round_trip (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbProfile) p = hand_made ();
  g_autofree char *plain = fb_profile_to_json (p);
  g_assert_null (strstr (plain, "dram_per_inference"));
  g_assert_null (fb_profile_dram_describe (p));

  FbProfileKernel *measured = g_ptr_array_index (p->kernels, 1);
  measured->bytes_read = 3000000;
  measured->bytes_written = 5000000;
  p->dram = (FbProfileDram) { .replays = 20, .read_bytes = 2.5e6, .written_bytes = 1.25e6 };
  g_autofree char *text = fb_profile_to_json (p);
  g_autoptr(GBytes) bytes = g_bytes_new (text, strlen (text));
  g_autoptr(FbProfile) q = fb_profile_load_bytes (bytes, "dram.json", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (q->dram.replays, ==, 20);
  g_assert_cmpfloat (q->dram.read_bytes, ==, 2.5e6);
  g_assert_cmpfloat (q->dram.written_bytes, ==, 1.25e6);
  g_autofree char *again = fb_profile_to_json (q);
  g_assert_cmpstr (again, ==, text);

  g_autofree char *line = fb_profile_dram_describe (q);
  g_assert_cmpstr (line, ==, "DRAM per inference, one counter range over 20 replays back to "
                   "back: read 2.5 MB, written 1.2 MB; the kernels' own ranges add up to 3.0 MB "
                   "read, 5.0 MB written (a kernel's range counts its output written back by its "
                   "end; in a replay most of it stays in the L2 for the next kernel)");

  /* No kernel measured: no sum of modeled bytes beside the measured whole. */
  measured->bytes_source = FB_BYTES_MODELED;
  g_autofree char *alone = fb_profile_dram_describe (p);
  g_assert_cmpstr (alone, ==, "DRAM per inference, one counter range over 20 replays back to "
                   "back: read 2.5 MB, written 1.2 MB");

  assert_bytes_refused (text, "\"replays\" : 20", "\"replays\" : 0",
                        "dram_per_inference.replays");
  assert_bytes_refused (text, "\"written_bytes\" : 1250000", "\"written_bytes\" : -1",
                        "dram_per_inference.written_bytes");
  assert_bytes_refused (text, "\"dram_per_inference\" : {", "\"dram_per_inference\" : [], \"d\" : {",
                        "dram_per_inference");
}

/* The hand-made profile's JSON with one edit, loaded: must fail with code, naming key. */
static void
assert_refused (const char *from, const char *to, int code, const char *key)
{
  g_autoptr(FbProfile) p = hand_made ();
  g_autofree char *text = fb_profile_to_json (p);
  g_autoptr(GError) error = NULL;
  char *at = strstr (text, from);
  g_assert_nonnull (at);
  g_autofree char *edited = g_strdup_printf ("%.*s%s%s", (int) (at - text), text, to,
                                             at + strlen (from));
  g_autoptr(GBytes) bytes = g_bytes_new (edited, strlen (edited));
  g_autoptr(FbProfile) q = fb_profile_load_bytes (bytes, "damaged.json", &error);
  g_assert_null (q);
  g_assert_error (error, FB_PROFILE_ERROR, code);
  g_assert_nonnull (strstr (error->message, "damaged.json"));
  if (!strstr (error->message, key))
    g_error ("'%s' does not name %s", error->message, key);
}

static void
test_damaged (void)
{
  static const char *not_json[] = { "", "{", "[1, 2]", "\"profile\"", "null", "{\"format\": 3}" };
  for (guint i = 0; i < G_N_ELEMENTS (not_json); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) bytes = g_bytes_new (not_json[i], strlen (not_json[i]));
      g_autoptr(FbProfile) q = fb_profile_load_bytes (bytes, "bad.json", &error);
      g_assert_null (q);
      g_assert_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_INVALID);
    }
  assert_refused ("\"fusebench-profile\"", "\"chrome-trace\"", FB_PROFILE_ERROR_INVALID, "format");
  assert_refused ("\"version\" : 1", "\"version\" : 2", FB_PROFILE_ERROR_VERSION, "version 2");
  assert_refused ("\"version\" : 1", "\"version\" : \"1\"", FB_PROFILE_ERROR_INVALID, "version");
  assert_refused ("\"kernels\" :", "\"kernelz\" :", FB_PROFILE_ERROR_INVALID, "kernels");
  assert_refused ("\"median_us\" : 10.5", "\"median_us\" : \"fast\"", FB_PROFILE_ERROR_INVALID,
                  "kernels[0].median_us");
  assert_refused ("\"median_us\" : 10.5", "\"median_us\" : -3", FB_PROFILE_ERROR_INVALID,
                  "kernels[0].median_us");
  assert_refused ("\"bytes_read\" : 4096", "\"bytes_read\" : [4096]", FB_PROFILE_ERROR_INVALID,
                  "kernels[0].bytes_read");
  assert_refused ("\"bound\" : \"memory\"", "\"bound\" : \"network\"", FB_PROFILE_ERROR_INVALID,
                  "kernels[0].bound");
  assert_refused ("\"conv_0\",", "\"conv_0\", 7,", FB_PROFILE_ERROR_INVALID, "kernels[0].nodes");
  assert_refused ("0.5,\n        0.5", "0.5,\n        0.25", FB_PROFILE_ERROR_INVALID,
                  "kernels[0].node_shares");
  assert_refused ("\"kernel\" : 1,", "\"kernel\" : 9,", FB_PROFILE_ERROR_INVALID,
                  "timeline[1].kernel");
  assert_refused ("\"device\" : {", "\"device\" : 5, \"x\" : {", FB_PROFILE_ERROR_INVALID, "device");
  assert_refused ("\"ceilings\" : \"measured\"", "\"ceilings\" : true", FB_PROFILE_ERROR_INVALID,
                  "device.ceilings");
  assert_refused ("\"layout\" : \"nhwc\"", "\"layout\" : \"chwn\"", FB_PROFILE_ERROR_INVALID,
                  "pipeline.layout");
  assert_refused ("\"counters\" : {", "\"counters\" : [], \"c\" : {", FB_PROFILE_ERROR_INVALID,
                  "kernels[0].counters");
  assert_refused ("\"diagnosis\" : [", "\"diagnosis\" : [null, ", FB_PROFILE_ERROR_INVALID,
                  "diagnosis");
  assert_refused ("\"id\" : 1,", "\"id\" : 0,", FB_PROFILE_ERROR_INVALID, "kernels[1].id");
}

/* Every value of the file replaced in turn by each kind of JSON value, and random bytes
 * changed: each load gives a profile or an FB_PROFILE_ERROR, never a crash or a json-glib
 * warning (fatal under g_test_init). */
static void
test_mutations (void)
{
  g_autoptr(FbProfile) p = hand_made ();
  g_autofree char *text = fb_profile_to_json (p);
  static const char *values[] = { "\"x\"", "[]", "{}", "null", "true", "-1", "1e308", "[{}]", "0.5" };
  guint refused = 0, loaded = 0;
  for (const char *at = strstr (text, ": "); at; at = strstr (at + 1, ": "))
    {
      /* The value after ": " ends at the next ',' or newline outside brackets: take the
       * rest of the line. */
      const char *start = at + 2;
      const char *end = strchr (start, '\n');
      if (end == NULL)
        break;
      if (end > start && end[-1] == ',')
        end--;
      for (guint v = 0; v < G_N_ELEMENTS (values); v++)
        {
          g_autofree char *edited = g_strdup_printf ("%.*s%s%s", (int) (start - text), text,
                                                     values[v], end);
          g_autoptr(GBytes) bytes = g_bytes_new (edited, strlen (edited));
          g_autoptr(GError) error = NULL;
          g_autoptr(FbProfile) q = fb_profile_load_bytes (bytes, "mutated", &error);
          if (q == NULL)
            {
              g_assert_nonnull (error);
              g_assert_true (error->domain == FB_PROFILE_ERROR);
              refused++;
            }
          else
            loaded++;
        }
    }
  g_autoptr(GRand) rand = g_rand_new_with_seed (11);
  gsize len = strlen (text);
  for (guint i = 0; i < 400; i++)
    {
      g_autofree char *edited = g_strdup (text);
      gsize cut = len;
      for (guint m = 0; m < 1 + i % 3; m++)
        edited[g_rand_int_range (rand, 0, (gint32) len)] = "\"{}[],:0-9a.e\\ "[g_rand_int_range (rand, 0, 16)];
      if (i % 5 == 0)
        cut = g_rand_int_range (rand, 0, (gint32) len);
      g_autoptr(GBytes) bytes = g_bytes_new (edited, cut);
      g_autoptr(GError) error = NULL;
      g_autoptr(FbProfile) q = fb_profile_load_bytes (bytes, "mutated", &error);
      g_assert_true (q != NULL || (error && error->domain == FB_PROFILE_ERROR));
    }
  /* Most replacements break the file; some (a number for a number) do not. */
  g_assert_cmpuint (refused, >, 100);
  g_assert_cmpuint (loaded, >, 0);
}

static void
test_save_and_trace (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbProfile) p = hand_made ();
  g_autofree char *dir = g_dir_make_tmp ("fb-profile-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "p.json", NULL);
  g_autofree char *trace = g_build_filename (dir, "trace.json", NULL);
  g_autofree char *nowhere = g_build_filename (dir, "missing", "p.json", NULL);

  g_assert_no_error (error);
  g_assert_true (fb_profile_save (p, path, &error));
  g_assert_no_error (error);
  g_autoptr(FbProfile) q = fb_profile_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (q->kernels->len, ==, 2);
  g_assert_false (fb_profile_save (p, nowhere, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_assert_false (g_file_test (nowhere, G_FILE_TEST_EXISTS));

  g_assert_true (fb_profile_save_chrome_trace (p, trace, &error));
  g_assert_no_error (error);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, trace, &error));
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonArray *events = json_object_get_array_member (root, "traceEvents");
  guint x = 0;
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      if (!g_str_equal (json_object_get_string_member (e, "ph"), "X"))
        continue;
      JsonObject *args = json_object_get_object_member (e, "args");
      JsonArray *nodes = json_object_get_array_member (args, "nodes");
      g_assert_cmpuint (json_array_get_length (nodes), >, 0);
      g_assert_cmpfloat (json_object_get_double_member (e, "dur"), >=, 0);
      if (x == 0)
        g_assert_cmpstr (json_array_get_string_element (nodes, 0), ==, "conv_0");
      x++;
    }
  g_assert_cmpuint (x, ==, 3);
  g_unlink (path);
  g_unlink (trace);
  g_rmdir (dir);
}

typedef struct {
  FbPipeline *pipeline;
  GPtrArray  *stages;
} Sample;

static void
sample_open (Sample *s, FbLayout layout)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "..", "data", "models",
                                             "sample-cnn", "model.onnx", NULL);
  FbGraph *graph = fb_onnx_import_file (model, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = layout;
  s->pipeline = fb_pipeline_new (graph);
  g_assert_true (fb_pipeline_run (s->pipeline, options, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  s->stages = fb_pipeline_dup_stages (s->pipeline);
}

static void
sample_close (Sample *s)
{
  g_ptr_array_unref (s->stages);
  fb_pipeline_free (s->pipeline);
}

static const FbGraph *
stage_graph (Sample *s, guint i)
{
  return ((FbStage *) g_ptr_array_index (s->stages, i))->graph;
}

/* A profile of the final stage as a target makes one: a kernel per node that computes
 * something, its originals split by the cost model, times that differ per kernel. */
static FbProfile *
profile_of_final (Sample *s)
{
  const FbGraph *final = stage_graph (s, s->stages->len - 1);
  FbProfile *p = fb_profile_new ();
  p->model = g_strdup ("model.onnx");
  p->model_digest = fb_profile_model_digest (final->model);
  p->device.peak_gflops = 100;
  p->device.peak_gbps = 10;
  for (guint i = 0; i < final->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (final->nodes, i);
      FbProfileKernel *k = fb_profile_kernel_new ();
      k->id = p->kernels->len;
      k->name = g_strdup_printf ("k%u", k->id);
      k->stage_node = n->id;
      k->calls = 1;
      k->median_us = 3.0 + 7.0 * i;
      k->min_us = k->max_us = k->median_us;
      k->bytes_read = 1000 * (i + 1);
      k->flops = 1e4;
      for (guint j = 0; j < n->n_prov; j++)
        g_ptr_array_add (k->nodes, g_strdup (fb_model_orig_name (final->model, n->prov[j])));
      fb_profile_kernel_split_by_cost (k, stage_graph (s, 0), &p->device);
      g_ptr_array_add (p->kernels, k);
    }
  return p;
}

static void
assert_adds_up (const FbProfile *p, const FbGraph *graph, const char *stage, guint *n_split)
{
  g_autoptr(GHashTable) costs = fb_profile_attribute (p, graph);
  double total = fb_profile_total_us (p), sum = 0, share = 0;
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, costs);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      const FbNodeCost *c = value;
      g_assert_nonnull (fb_graph_find_node (graph, GPOINTER_TO_UINT (key)));
      g_assert_cmpfloat (c->time_us, >=, 0);
      g_assert_cmpuint (c->n_kernels, >, 0);
      sum += c->time_us;
      share += c->share;
      *n_split += c->split;
    }
  if (fabs (sum - total) > 1e-9 * total)
    g_error ("stage %s: attributed %.9g µs of %.9g", stage, sum, total);
  g_assert_cmpfloat_with_epsilon (share, 1.0, 1e-9);
}

static void
test_attribution_adds_up (gconstpointer data)
{
  Sample s;
  sample_open (&s, GPOINTER_TO_INT (data));
  g_autoptr(FbProfile) p = profile_of_final (&s);
  guint final_split = 0, import_split = 0, fused = 0;

  g_assert_cmpuint (s.stages->len, >, 2);
  for (guint i = 0; i < s.stages->len; i++)
    {
      const FbStage *st = g_ptr_array_index (s.stages, i);
      guint n_split = 0;
      assert_adds_up (p, st->graph, st->name, &n_split);
      if (i == 0)
        import_split = n_split;
      if (i == s.stages->len - 1)
        final_split = n_split;
    }
  for (guint i = 0; i < p->kernels->len; i++)
    fused += ((FbProfileKernel *) g_ptr_array_index (p->kernels, i))->nodes->len > 1;
  /* The sample fuses: on the import stage the fused kernels' costs are split over their
   * members; on the final stage every kernel lands whole on its node. */
  g_assert_cmpuint (fused, >, 0);
  g_assert_cmpuint (import_split, >, 0);
  g_assert_cmpuint (final_split, ==, 0);

  g_autoptr(GHashTable) orig = fb_profile_original_costs (p);
  double sum = 0;
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init (&it, orig);
  while (g_hash_table_iter_next (&it, NULL, &value))
    sum += *(double *) value;
  g_assert_cmpfloat_with_epsilon (sum, fb_profile_total_us (p), 1e-9 * sum);
  sample_close (&s);
}

/* A kernel of two originals with shares 1:3 puts a quarter and three quarters of its time on
 * them where they are apart, each marked split; where one node covers both, it lands whole. */
static void
test_split_flag (void)
{
  Sample s;
  sample_open (&s, FB_LAYOUT_NCHW);
  const FbGraph *import = stage_graph (&s, 0);
  const FbNode *a = g_ptr_array_index (import->nodes, 0);
  const FbNode *b = g_ptr_array_index (import->nodes, 1);
  g_autoptr(FbProfile) p = fb_profile_new ();
  FbProfileKernel *k = kernel (0, "k0", 999999, 40.0, a->name, b->name, NULL);
  g_array_index (k->node_shares, double, 0) = 0.25;
  g_array_index (k->node_shares, double, 1) = 0.75;
  g_ptr_array_add (p->kernels, k);
  g_ptr_array_add (p->kernels, kernel (1, "k1", a->id, 10.0, a->name, NULL));

  g_autoptr(GHashTable) costs = fb_profile_attribute (p, import);
  const FbNodeCost *ca = g_hash_table_lookup (costs, GUINT_TO_POINTER (a->id));
  const FbNodeCost *cb = g_hash_table_lookup (costs, GUINT_TO_POINTER (b->id));
  g_assert_nonnull (ca);
  g_assert_nonnull (cb);
  g_assert_cmpfloat_with_epsilon (ca->time_us, 10.0 + 10.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (cb->time_us, 30.0, 1e-9);
  g_assert_true (ca->split);
  g_assert_true (cb->split);
  g_assert_cmpuint (ca->n_kernels, ==, 2);
  g_assert_cmpuint (cb->n_kernels, ==, 1);
  g_assert_cmpfloat_with_epsilon (cb->share, 0.6, 1e-9);
  g_assert_cmpfloat_with_epsilon (cb->bytes, 0.75 * 5120, 1e-6);
  g_assert_cmpfloat_with_epsilon (cb->gbps, 0.75 * 5120 / 30.0e3, 1e-9);

  /* Split by the cost model: shares follow the modeled cost, add up to 1. */
  const FbGraph *final = stage_graph (&s, s.stages->len - 1);
  for (guint i = 0; i < final->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (final->nodes, i);
      if (n->n_prov < 2)
        continue;
      g_autoptr(FbProfileKernel) fk = fb_profile_kernel_new ();
      for (guint j = 0; j < n->n_prov; j++)
        g_ptr_array_add (fk->nodes, g_strdup (fb_model_orig_name (final->model, n->prov[j])));
      fb_profile_kernel_split_by_cost (fk, import, NULL);
      double sum = 0;
      g_assert_cmpuint (fk->node_shares->len, ==, n->n_prov);
      for (guint j = 0; j < n->n_prov; j++)
        sum += g_array_index (fk->node_shares, double, j);
      g_assert_cmpfloat_with_epsilon (sum, 1.0, 1e-9);
    }
  sample_close (&s);
}

static void
test_mismatch (void)
{
  Sample s;
  sample_open (&s, FB_LAYOUT_NHWC);
  const FbGraph *final = stage_graph (&s, s.stages->len - 1);
  g_autoptr(FbProfile) p = profile_of_final (&s);
  g_autoptr(FbPipelineOptions) same = fb_pipeline_options_new ();
  g_autoptr(GError) error = NULL;
  same->layout = FB_LAYOUT_NHWC;
  p->pipeline->layout = FB_LAYOUT_NHWC;

  g_assert_true (fb_profile_matches (p, final->model, same, &error));
  g_assert_no_error (error);

  g_autoptr(FbPipelineOptions) other = fb_pipeline_options_copy (same);
  other->layout = FB_LAYOUT_NCHW;
  g_assert_false (fb_profile_matches (p, final->model, other, &error));
  g_assert_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_MISMATCH);
  g_assert_nonnull (strstr (error->message, "layout"));
  g_clear_error (&error);

  g_autoptr(FbPipelineOptions) pass = fb_pipeline_options_copy (same);
  g_ptr_array_add (pass->disabled_passes, g_strdup ("fuse-epilogue"));
  g_assert_false (fb_profile_matches (p, final->model, pass, &error));
  g_assert_nonnull (strstr (error->message, "fuse-epilogue"));
  g_clear_error (&error);

  g_autoptr(FbPipelineOptions) fuse = fb_pipeline_options_copy (same);
  g_ptr_array_add (fuse->no_fuse, g_strdup ("some_node"));
  g_assert_false (fb_profile_matches (p, final->model, fuse, &error));
  g_assert_nonnull (strstr (error->message, "some_node"));
  g_clear_error (&error);

  g_autoptr(FbPipelineOptions) shape = fb_pipeline_options_copy (same);
  FbShape sh = fb_shape_make (1, (const int64_t[]) { 7 });
  g_hash_table_insert (shape->input_shapes, g_strdup ("input"), g_memdup2 (&sh, sizeof sh));
  g_assert_false (fb_profile_matches (p, final->model, shape, &error));
  g_assert_nonnull (strstr (error->message, "input"));
  g_clear_error (&error);

  g_free (p->model_digest);
  p->model_digest = g_strdup ("0123");
  g_assert_false (fb_profile_matches (p, final->model, same, &error));
  g_assert_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_MISMATCH);
  g_assert_nonnull (strstr (error->message, "another model"));
  sample_close (&s);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/profile/round-trip", test_round_trip);
  g_test_add_func ("/profile/timing-round-trip", test_timing_round_trip);
  g_test_add_func ("/profile/dram-round-trip", test_dram_round_trip);
  g_test_add_func ("/profile/damaged", test_damaged);
  g_test_add_func ("/profile/mutations", test_mutations);
  g_test_add_func ("/profile/save-and-trace", test_save_and_trace);
  g_test_add_data_func ("/profile/attribution/nchw", GINT_TO_POINTER (FB_LAYOUT_NCHW),
                        test_attribution_adds_up);
  g_test_add_data_func ("/profile/attribution/nhwc", GINT_TO_POINTER (FB_LAYOUT_NHWC),
                        test_attribution_adds_up);
  g_test_add_func ("/profile/split", test_split_flag);
  g_test_add_func ("/profile/mismatch", test_mismatch);
  return g_test_run ();
}
