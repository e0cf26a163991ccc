/* SPDX-License-Identifier: GPL-3.0-or-later */
/* CUPTI without a GPU: starting says why it cannot, and the records of a real run on an H200
 * (tests/fixtures/cupti-probe.*, made by record-cupti-fixture there) go through the same
 * conversion, owners, graph matching, utilization and diagnosis as a live run. */
#include "fb-cupti-counters.h"

#include <gio/gio.h>
#include <math.h>

#include <dlfcn.h>
#include <glib/gstdio.h>
#include <string.h>

#define N_KERNELS 8

typedef struct {
  GArray *eager_begin, *eager_end, *graph_begin, *graph_end;   /* guint64 */
} Windows;

static void
windows_clear (Windows *w)
{
  g_clear_pointer (&w->eager_begin, g_array_unref);
  g_clear_pointer (&w->eager_end, g_array_unref);
  g_clear_pointer (&w->graph_begin, g_array_unref);
  g_clear_pointer (&w->graph_end, g_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Windows, windows_clear)

static void
read_windows (Windows *w)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures", "cupti-probe.windows",
                                                 NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  w->eager_begin = g_array_new (FALSE, FALSE, sizeof (guint64));
  w->eager_end = g_array_new (FALSE, FALSE, sizeof (guint64));
  w->graph_begin = g_array_new (FALSE, FALSE, sizeof (guint64));
  w->graph_end = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] && *lines[i]; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], " ", 3);
      g_assert_cmpuint (g_strv_length (f), ==, 3);
      guint64 b = g_ascii_strtoull (f[1], NULL, 10), e = g_ascii_strtoull (f[2], NULL, 10);
      gboolean eager = g_str_equal (f[0], "eager");
      g_array_append_val (eager ? w->eager_begin : w->graph_begin, b);
      g_array_append_val (eager ? w->eager_end : w->graph_end, e);
    }
}

static GArray *
replay_fixture (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures", "cupti-probe.records",
                                                 NULL);
  g_autoptr(GError) error = NULL;
  GArray *acts = fb_cupti_replay_file (path, &error);
  g_assert_no_error (error);
  return acts;
}

static void
test_start_without_driver (void)
{
  void *driver = dlopen ("libcuda.so.1", RTLD_NOW);
  if (driver != NULL)
    {
      dlclose (driver);
      g_test_skip ("this machine has a CUDA driver; the no-driver path needs one without");
      return;
    }
  g_autoptr(GError) error = NULL;
  FbCupti *cupti = fb_cupti_start (&error);
  g_assert_null (cupti);
  g_assert_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE);
  g_assert_true (strstr (error->message, "CUDA driver") || strstr (error->message, "CUPTI"));
}

/* Launched one by one: every kernel tagged with its owner, in plan order, between the upload
 * and the download; the GPU mostly waits for the host. */
static void
test_replay_eager (void)
{
  if (!fb_cupti_available ())
    {
      g_test_skip ("this build has no CUPTI headers to read the records with");
      return;
    }
  g_auto(Windows) w = { 0 };
  read_windows (&w);
  g_autoptr(GArray) acts = replay_fixture ();
  g_assert_cmpuint (w.eager_begin->len, ==, 5);
  g_autoptr(GPtrArray) runs = fb_gpu_split_inferences (acts, (guint64 *) w.eager_begin->data,
                                                       (guint64 *) w.eager_end->data,
                                                       w.eager_begin->len);
  for (guint i = 0; i < runs->len; i++)
    {
      GArray *run = runs->pdata[i];
      guint kernels = 0, copies = 0;
      for (guint j = 0; j < run->len; j++)
        {
          const FbGpuActivity *a = &g_array_index (run, FbGpuActivity, j);
          g_assert_cmpuint (a->end_ns, >=, a->start_ns);
          if (a->kind == FB_GPU_KERNEL)
            {
              kernels++;
              g_assert_cmpuint (a->owner, ==, kernels);          /* plan order */
              g_assert_cmpstr (a->name, ==, kernels % 2 ? "fb_probe_scale" : "fb_probe_add");
              g_assert_cmpuint (a->block[0], ==, 256);
              g_assert_cmpuint (a->grid[0], ==, 256);
              g_assert_cmpuint (a->registers, >, 0);
              g_assert_cmpuint (a->graph_node, ==, 0);
              g_assert_cmpuint (a->api_start_ns, >, 0);
              g_assert_cmpuint (a->api_start_ns, <=, a->start_ns);
            }
          else
            {
              copies++;
              g_assert_cmpuint (a->bytes, ==, (1 << 16) * sizeof (float));
            }
        }
      g_assert_cmpuint (kernels, ==, N_KERNELS);
      g_assert_cmpuint (copies, ==, 2);

      FbGpuUtilization u = fb_gpu_utilization (run, ((guint64 *) w.eager_begin->data)[i],
                                               ((guint64 *) w.eager_end->data)[i]);
      g_assert_cmpuint (u.launches, ==, N_KERNELS);
      g_assert_false (u.graph);
      g_assert_cmpfloat (u.kernel_busy_us, >, 0);
      g_assert_cmpfloat (u.kernel_busy_us, <, u.wall_us);
      g_assert_cmpfloat (u.host_wait_us + u.kernel_wait_us + u.copy_us + u.other_wait_us, >, 0);
    }

  /* The per-kernel figures of a profile of the eight kernels. */
  g_autoptr(FbProfile) profile = fb_profile_new ();
  for (guint k = 0; k < N_KERNELS; k++)
    {
      FbProfileKernel *pk = fb_profile_kernel_new ();
      pk->id = k;
      g_ptr_array_add (profile->kernels, pk);
    }
  FbGpuUtilization u = fb_gpu_profile_fill (profile, runs, (guint64 *) w.eager_begin->data,
                                            (guint64 *) w.eager_end->data);
  for (guint k = 0; k < N_KERNELS; k++)
    {
      const FbProfileKernel *pk = profile->kernels->pdata[k];
      g_assert_cmpuint (pk->calls, ==, 1);
      g_assert_cmpfloat (pk->median_us, >, 0);
      g_assert_cmpfloat (pk->min_us, <=, pk->median_us);
      g_assert_cmpfloat (pk->max_us, >=, pk->median_us);
    }
  g_assert_cmpuint (profile->timeline->len, ==, N_KERNELS);
  g_assert_cmpfloat (profile->busy_ms, >, 0);
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  fb_gpu_utilization_diagnose (&u, lines);
  g_assert_cmpuint (lines->len, >=, 3);
  g_test_message ("eager: %s; %s; %s", (char *) lines->pdata[0], (char *) lines->pdata[1],
                  (char *) lines->pdata[2]);
}

/* Replayed as a graph: one host call for every kernel, each kernel a graph node; matched to
 * the eager run's owners by their sequence; busier than the eager run. */
static void
test_replay_graph (void)
{
  if (!fb_cupti_available ())
    {
      g_test_skip ("this build has no CUPTI headers to read the records with");
      return;
    }
  g_auto(Windows) w = { 0 };
  read_windows (&w);
  g_autoptr(GArray) acts = replay_fixture ();
  g_autoptr(GPtrArray) eager = fb_gpu_split_inferences (acts, (guint64 *) w.eager_begin->data,
                                                        (guint64 *) w.eager_end->data,
                                                        w.eager_begin->len);
  g_autoptr(GPtrArray) graph = fb_gpu_split_inferences (acts, (guint64 *) w.graph_begin->data,
                                                        (guint64 *) w.graph_end->data,
                                                        w.graph_begin->len);
  g_assert_cmpuint (graph->len, ==, 5);
  double eager_share = 0, graph_share = 0;
  for (guint i = 0; i < graph->len; i++)
    {
      GArray *run = graph->pdata[i];
      guint32 correlation = 0;
      for (guint j = 0; j < run->len; j++)
        {
          FbGpuActivity *a = &g_array_index (run, FbGpuActivity, j);
          g_assert_cmpint (a->kind, ==, FB_GPU_KERNEL);
          g_assert_cmpuint (a->graph_node, !=, 0);
          if (j == 0)
            correlation = a->correlation;
          g_assert_cmpuint (a->correlation, ==, correlation);       /* one cuGraphLaunch */
          a->owner = 0;
        }
      g_assert_cmpuint (run->len, ==, N_KERNELS);
      g_assert_cmpuint (fb_gpu_match_owners (eager->pdata[0], run), ==, 0);
      for (guint j = 0; j < run->len; j++)
        g_assert_cmpuint (g_array_index (run, FbGpuActivity, j).owner, ==, j + 1);

      FbGpuUtilization ug = fb_gpu_utilization (run, ((guint64 *) w.graph_begin->data)[i],
                                                ((guint64 *) w.graph_end->data)[i]);
      FbGpuUtilization ue = fb_gpu_utilization (eager->pdata[i],
                                                ((guint64 *) w.eager_begin->data)[i],
                                                ((guint64 *) w.eager_end->data)[i]);
      g_assert_true (ug.graph);
      graph_share += ug.kernel_busy_us / ug.wall_us;
      eager_share += ue.kernel_busy_us / ue.wall_us;
      /* Within a graph the kernels after the first were queued before the GPU got to them. */
      g_assert_cmpfloat (ug.kernel_wait_us, >=, 0);
    }
  g_assert_cmpfloat (graph_share, >, eager_share);
}

static void
test_damaged_files (void)
{
  g_autofree char *dir = g_dir_make_tmp ("fb-cupti-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "bad.records", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (path, "not records at all", -1, NULL));
  g_assert_null (fb_cupti_replay_file (path, &error));
  g_assert_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_INVALID);
  g_clear_error (&error);

  /* The real fixture cut in the middle of a record. */
  g_autofree char *fixture = g_test_build_filename (G_TEST_DIST, "fixtures",
                                                    "cupti-probe.records", NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (fixture, &data, &len, NULL));
  g_assert_cmpuint (len, >, 200);
  g_assert_true (g_file_set_contents (path, data, len - 7, NULL));
  g_assert_null (fb_cupti_replay_file (path, &error));
  g_assert_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_INVALID);
  g_clear_error (&error);

  /* A header from a CUPTI with other record sizes. */
  data[8] ^= 0x10;
  g_assert_true (g_file_set_contents (path, data, len, NULL));
  g_assert_null (fb_cupti_replay_file (path, &error));
  g_assert_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_INVALID);

  g_unlink (path);
  g_rmdir (dir);
}

/* The range profiler's counters of the eight kernels over 64 MiB buffers, evaluated here
 * from the decoded data the H200 wrote (CUPTI's host library, no GPU): each scale reads and
 * writes its 64 MiB, each add reads 128 MiB. */
static void
test_counters_replay (void)
{
  if (!fb_cupti_available ())
    {
      g_test_skip ("this build has no CUPTI headers to read the counters with");
      return;
    }
  g_autofree char *gz = g_test_build_filename (G_TEST_DIST, "fixtures", "cupti-probe.counters.gz",
                                               NULL);
  g_autoptr(GFile) file = g_file_new_for_path (gz);
  g_autoptr(GError) error = NULL;
  g_autoptr(GInputStream) raw = G_INPUT_STREAM (g_file_read (file, NULL, &error));
  g_assert_no_error (error);
  g_autoptr(GConverter) gunzip =
    G_CONVERTER (g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP));
  g_autoptr(GInputStream) in = g_converter_input_stream_new (raw, gunzip);
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
  g_output_stream_splice (out, in, G_OUTPUT_STREAM_SPLICE_CLOSE_SOURCE |
                          G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(GBytes) bytes = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));

  g_autofree char *dir = g_dir_make_tmp ("fb-counters-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "probe.counters", NULL);
  g_assert_true (g_file_set_contents (path, g_bytes_get_data (bytes, NULL),
                                      g_bytes_get_size (bytes), NULL));
  g_autoptr(GArray) ranges = fb_cupti_counters_replay_file (path, &error);
  if (ranges == NULL && g_error_matches (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE))
    {
      g_test_skip (error->message);
      g_unlink (path);
      g_rmdir (dir);
      return;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (ranges->len, ==, N_KERNELS);
  const double mib64 = 64.0 * 1024 * 1024;
  for (guint i = 0; i < ranges->len; i++)
    {
      const FbGpuCounters *k = &g_array_index (ranges, FbGpuCounters, i);
      double want_read = i % 2 == 0 ? mib64 : 2 * mib64;
      g_assert_cmpfloat (fabs (k->dram_read_bytes - want_read) / want_read, <, 0.01);
      g_assert_cmpfloat (k->dram_write_bytes, >=, 0.99 * mib64);
      g_assert_cmpfloat (k->dram_write_bytes, <, 1.10 * mib64);
      g_assert_cmpfloat (k->duration_ns, >, 1000);
      g_assert_cmpfloat (k->sm_throughput, >, 0);
      g_assert_cmpfloat (k->sm_throughput, <, 1);
    }

  /* Damaged: cut short. */
  g_assert_true (g_file_set_contents (path, g_bytes_get_data (bytes, NULL), 100, NULL));
  g_clear_pointer (&ranges, g_array_unref);
  g_assert_null (fb_cupti_counters_replay_file (path, &error));
  g_assert_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_INVALID);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cupti/start-without-driver", test_start_without_driver);
  g_test_add_func ("/cupti/replay-eager", test_replay_eager);
  g_test_add_func ("/cupti/replay-graph", test_replay_graph);
  g_test_add_func ("/cupti/damaged-files", test_damaged_files);
  g_test_add_func ("/cupti/counters-replay", test_counters_replay);
  return g_test_run ();
}
