/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CPU's ceilings, measured rather than assumed: memory bandwidth as a streaming copy and
 * compute as a large sgemm, on the threads the profiled run uses. Measuring takes a fraction
 * of a second, so the result is kept per machine and thread count in
 * $XDG_CACHE_HOME/fusebench/ceilings.json. FUSEBENCH_CEILINGS overrides it: "off" (no ceilings:
 * no roofline), "GFLOPS,GBPS" (given figures, labelled datasheet), "measure" (ignore the
 * cache). */
#include "fb-profile-private.h"

#include <dnnl.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COPY_BYTES ((gsize) 128 << 20)  /* each of source and destination: beyond any cache */
#define CHUNK      ((gsize) 4 << 20)    /* one timed step of the copy */
#define GEMM_N     512

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

char *
_fb_profile_cpu_name (void)
{
  g_autofree char *info = NULL;
  if (g_file_get_contents ("/proc/cpuinfo", &info, NULL, NULL))
    for (char *line = info; line && *line;)
      {
        char *next = strchr (line, '\n');
        if (next)
          *next++ = '\0';
        if (g_str_has_prefix (line, "model name"))
          {
            const char *colon = strchr (line, ':');
            if (colon)
              return g_strstrip (g_strdup (colon + 1));
          }
        line = next;
      }
  return g_strdup ("CPU");
}

/* GB/s of a copy (bytes read plus written) on n threads. The machine may be shared, and a
 * long measurement is preempted where a kernel of a few microseconds is not, so the copy is
 * timed in short steps (CHUNK bytes, split over the threads) walking buffers far larger than
 * any cache, and the best step counts. */
static double
measure_bandwidth (guint n)
{
  guint8 *src = NULL, *dst = NULL;
  double best = 0;
  if (posix_memalign ((void **) &src, 4096, COPY_BYTES) != 0)
    return 0;
  if (posix_memalign ((void **) &dst, 4096, COPY_BYTES) != 0)
    {
      free (src);
      return 0;
    }
  memset (src, 1, COPY_BYTES);
  memset (dst, 0, COPY_BYTES);
  gsize per = CHUNK / n / 64 * 64;
  for (int sweep = 0; sweep < 3; sweep++)
    for (gsize at = 0; at + CHUNK <= COPY_BYTES; at += CHUNK)
      {
        double t0 = now_s ();
#pragma omp parallel for num_threads (n) schedule (static)
        for (guint t = 0; t < n; t++)
          memcpy (dst + at + t * per, src + at + t * per, t == n - 1 ? CHUNK - t * per : per);
        double dt = now_s () - t0;
        if (dt > 0)
          best = MAX (best, 2.0 * CHUNK / dt / 1e9);
      }
  free (src);
  free (dst);
  return best;
}

/* GFLOP/s of single-precision matrix products on n threads, each a few milliseconds (the
 * best of many, for the reason above). */
static double
measure_gflops (guint n)
{
  gsize count = (gsize) GEMM_N * GEMM_N;
  g_autofree float *a = g_new (float, count);
  g_autofree float *b = g_new (float, count);
  g_autofree float *c = g_new0 (float, count);
  double best = 0;
  for (gsize i = 0; i < count; i++)
    {
      a[i] = (float) ((i * 7) % 13) / 13.0f;
      b[i] = (float) ((i * 5) % 11) / 11.0f;
    }
  omp_set_num_threads ((int) n);
  for (int pass = 0; pass < 24; pass++)
    {
      double t0 = now_s ();
      if (dnnl_sgemm ('N', 'N', GEMM_N, GEMM_N, GEMM_N, 1.0f, a, GEMM_N, b, GEMM_N, 0.0f, c,
                      GEMM_N) != dnnl_success)
        break;
      double dt = now_s () - t0;
      if (dt > 0 && pass > 0)   /* the first pass pays for oneDNN's start */
        best = MAX (best, 2.0 * GEMM_N * GEMM_N * (double) GEMM_N / dt / 1e9);
    }
  omp_set_num_threads (1);
  return best;
}

static char *
cache_path (void)
{
  return g_build_filename (g_get_user_cache_dir (), "fusebench", "ceilings.json", NULL);
}

/* The cached figures for machine and n threads, or FALSE. */
static gboolean
cache_lookup (const char *machine, guint n, double *gflops, double *gbps)
{
  g_autofree char *path = cache_path ();
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *key = g_strdup_printf ("%u", n);
  if (!json_parser_load_from_file (parser, path, NULL))
    return FALSE;
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return FALSE;
  JsonObject *o = json_node_get_object (root);
  JsonNode *m = json_object_get_member (o, "machine");
  JsonNode *t = json_object_get_member (o, "threads");
  if (m == NULL || !JSON_NODE_HOLDS_VALUE (m) || json_node_get_value_type (m) != G_TYPE_STRING ||
      g_strcmp0 (json_node_get_string (m), machine) != 0 || t == NULL || !JSON_NODE_HOLDS_OBJECT (t))
    return FALSE;
  JsonNode *e = json_object_get_member (json_node_get_object (t), key);
  if (e == NULL || !JSON_NODE_HOLDS_OBJECT (e))
    return FALSE;
  JsonNode *g = json_object_get_member (json_node_get_object (e), "gflops");
  JsonNode *b = json_object_get_member (json_node_get_object (e), "gbps");
  if (g == NULL || b == NULL || !JSON_NODE_HOLDS_VALUE (g) || !JSON_NODE_HOLDS_VALUE (b) ||
      json_node_get_value_type (g) != G_TYPE_DOUBLE || json_node_get_value_type (b) != G_TYPE_DOUBLE)
    return FALSE;
  *gflops = json_node_get_double (g);
  *gbps = json_node_get_double (b);
  return isfinite (*gflops) && isfinite (*gbps) && *gflops > 0 && *gbps > 0;
}

/* Adds (or replaces) the entry for n threads, keeping the others of the same machine. A cache
 * that cannot be written only costs the next run a measurement. */
static void
cache_store (const char *machine, guint n, double gflops, double gbps)
{
  g_autofree char *path = cache_path ();
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonObject) threads = json_object_new ();
  g_autofree char *key = g_strdup_printf ("%u", n);

  if (json_parser_load_from_file (parser, path, NULL))
    {
      JsonNode *root = json_parser_get_root (parser);
      JsonObject *o = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
      JsonNode *m = o ? json_object_get_member (o, "machine") : NULL;
      JsonNode *t = o ? json_object_get_member (o, "threads") : NULL;
      if (m && JSON_NODE_HOLDS_VALUE (m) && json_node_get_value_type (m) == G_TYPE_STRING &&
          g_strcmp0 (json_node_get_string (m), machine) == 0 && t && JSON_NODE_HOLDS_OBJECT (t))
        {
          g_autoptr(GList) names = json_object_get_members (json_node_get_object (t));
          for (GList *l = names; l; l = l->next)
            json_object_set_member (threads, l->data,
                                    json_node_copy (json_object_get_member (json_node_get_object (t), l->data)));
        }
    }
  JsonObject *entry = json_object_new ();
  json_object_set_double_member (entry, "gflops", gflops);
  json_object_set_double_member (entry, "gbps", gbps);
  json_object_set_object_member (threads, key, entry);

  g_autoptr(JsonObject) root = json_object_new ();
  json_object_set_string_member (root, "machine", machine);
  json_object_set_object_member (root, "threads", json_object_ref (threads));
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), root);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, node);
  json_generator_set_pretty (gen, TRUE);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  if (g_mkdir_with_parents (dir, 0755) == 0)
    g_file_set_contents (path, text, -1, NULL);
}

void
_fb_profile_cpu_ceilings (guint n_threads, const char *threads_from, FbProfileDevice *device)
{
  const char *env = g_getenv ("FUSEBENCH_CEILINGS");
  g_autofree char *machine = _fb_profile_cpu_name ();
  double gflops = 0, gbps = 0;

  n_threads = MAX (n_threads, 1);
  g_free (device->name);
  device->name = g_strdup_printf ("%s (%u thread%s%s%s)", machine, n_threads,
                                  n_threads == 1 ? "" : "s", threads_from ? ", from " : "",
                                  threads_from ? threads_from : "");
  device->peak_gflops = device->peak_gbps = 0;
  device->ceilings_measured = FALSE;
  if (g_strcmp0 (env, "off") == 0)
    return;
  if (env != NULL && strchr (env, ','))
    {
      char *end = NULL;
      gflops = g_ascii_strtod (env, &end);
      gbps = end && *end == ',' ? g_ascii_strtod (end + 1, NULL) : 0;
      if (isfinite (gflops) && isfinite (gbps) && gflops > 0 && gbps > 0)
        {
          device->peak_gflops = gflops;
          device->peak_gbps = gbps;
        }
      return;
    }
  if (g_strcmp0 (env, "measure") == 0 || !cache_lookup (machine, n_threads, &gflops, &gbps))
    {
      gbps = measure_bandwidth (n_threads);
      gflops = measure_gflops (n_threads);
      if (gbps <= 0 || gflops <= 0)
        return;
      cache_store (machine, n_threads, gflops, gbps);
    }
  device->peak_gflops = gflops;
  device->peak_gbps = gbps;
  device->ceilings_measured = TRUE;
}
