/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading the profile file that fb-profile-json.c writes.
 *
 * The reader trusts nothing: a profile may come from another machine, another version or
 * another tool, so every member's type is checked before it is read (json-glib's getters
 * warn on a wrong type), and damage is an FB_PROFILE_ERROR_INVALID naming the file and the
 * key ("kernels[3].median_us"). Keys the issue lists are required; the additions (model_digest,
 * kind, node_shares, worker_busy_us, counters, counters_note, timing, dram_per_inference, a
 * span's function) are optional on reading. */
#include "fb-profile-private.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* Reading ------------------------------------------------------------------------------- */

typedef struct {
  const char *what;             /* the file, for messages */
  GError    **error;
} Reader;

static gboolean G_GNUC_PRINTF (3, 4)
damaged (Reader *r, const char *key, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *why = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (r->error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_INVALID, "%s: %s: %s", r->what,
               key, why);
  return FALSE;
}

/* The member key of o (its path for messages: path.key), or NULL: absent (an error when
 * required) or JSON null (accepted where allow_null). */
static JsonNode *
member (Reader *r, JsonObject *o, const char *path, const char *key, gboolean required,
        gboolean *failed)
{
  g_autofree char *full = path && *path ? g_strdup_printf ("%s.%s", path, key) : g_strdup (key);
  JsonNode *n = json_object_has_member (o, key) ? json_object_get_member (o, key) : NULL;
  *failed = FALSE;
  if (n == NULL && required)
    *failed = !damaged (r, full, "missing");
  return n;
}

static char *
path_of (const char *path, const char *key)
{
  return path && *path ? g_strdup_printf ("%s.%s", path, key) : g_strdup (key);
}

static gboolean
is_number (JsonNode *n)
{
  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n))
    return FALSE;
  GType t = json_node_get_value_type (n);
  return t == G_TYPE_INT64 || t == G_TYPE_DOUBLE;
}

static double
number_of (JsonNode *n)
{
  return json_node_get_value_type (n) == G_TYPE_INT64 ? (double) json_node_get_int (n)
                                                       : json_node_get_double (n);
}

static gboolean
read_double (Reader *r, JsonObject *o, const char *path, const char *key, gboolean required,
             double *out)
{
  gboolean failed;
  JsonNode *n = member (r, o, path, key, required, &failed);
  g_autofree char *full = path_of (path, key);
  if (n == NULL)
    return !failed;
  if (!is_number (n))
    return damaged (r, full, "expected a number");
  double v = number_of (n);
  if (!isfinite (v))
    return damaged (r, full, "not a finite number");
  *out = v;
  return TRUE;
}

/* A number that must not be negative (times, bytes, counts). */
static gboolean
read_nonneg (Reader *r, JsonObject *o, const char *path, const char *key, gboolean required,
             double *out)
{
  double v = *out;
  if (!read_double (r, o, path, key, required, &v))
    return FALSE;
  if (v < 0)
    {
      g_autofree char *full = path_of (path, key);
      return damaged (r, full, "negative (%g)", v);
    }
  *out = v;
  return TRUE;
}

static gboolean
read_uint (Reader *r, JsonObject *o, const char *path, const char *key, gboolean required,
           guint64 max, guint64 *out)
{
  gboolean failed;
  JsonNode *n = member (r, o, path, key, required, &failed);
  g_autofree char *full = path_of (path, key);
  if (n == NULL)
    return !failed;
  if (!is_number (n))
    return damaged (r, full, "expected a whole number");
  double v = number_of (n);
  if (json_node_get_value_type (n) == G_TYPE_INT64)
    {
      gint64 i = json_node_get_int (n);
      if (i < 0 || (guint64) i > max)
        return damaged (r, full, "%" G_GINT64_FORMAT " is out of range", i);
      *out = (guint64) i;
      return TRUE;
    }
  if (!isfinite (v) || v != floor (v) || v < 0 || v > (double) max)
    return damaged (r, full, "expected a whole number in range, got %g", v);
  *out = (guint64) v;
  return TRUE;
}

static gboolean
read_guint (Reader *r, JsonObject *o, const char *path, const char *key, gboolean required,
            guint *out)
{
  guint64 v = *out;
  if (!read_uint (r, o, path, key, required, G_MAXUINT, &v))
    return FALSE;
  *out = (guint) v;
  return TRUE;
}

/* A string member (a new copy in *out); JSON null reads as NULL where allow_null. */
static gboolean
read_string (Reader *r, JsonObject *o, const char *path, const char *key, gboolean required,
             gboolean allow_null, char **out)
{
  gboolean failed;
  JsonNode *n = member (r, o, path, key, required, &failed);
  g_autofree char *full = path_of (path, key);
  if (n == NULL)
    return !failed;
  if (JSON_NODE_HOLDS_NULL (n) && allow_null)
    {
      g_clear_pointer (out, g_free);
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
    return damaged (r, full, "expected a string");
  g_free (*out);
  *out = g_strdup (json_node_get_string (n));
  return TRUE;
}

static JsonObject *
get_object (Reader *r, JsonObject *o, const char *path, const char *key, gboolean required,
            gboolean *failed)
{
  JsonNode *n = member (r, o, path, key, required, failed);
  if (n == NULL)
    return NULL;
  if (!JSON_NODE_HOLDS_OBJECT (n))
    {
      g_autofree char *full = path_of (path, key);
      *failed = !damaged (r, full, "expected an object");
      return NULL;
    }
  return json_node_get_object (n);
}

static JsonArray *
get_array (Reader *r, JsonObject *o, const char *path, const char *key, gboolean required,
           gboolean *failed)
{
  JsonNode *n = member (r, o, path, key, required, failed);
  if (n == NULL)
    return NULL;
  if (!JSON_NODE_HOLDS_ARRAY (n))
    {
      g_autofree char *full = path_of (path, key);
      *failed = !damaged (r, full, "expected an array");
      return NULL;
    }
  return json_node_get_array (n);
}

/* An array of strings into list (char*, appended). */
static gboolean
read_strings (Reader *r, JsonObject *o, const char *path, const char *key, gboolean required,
              GPtrArray *list)
{
  gboolean failed;
  JsonArray *a = get_array (r, o, path, key, required, &failed);
  if (a == NULL)
    return !failed;
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *n = json_array_get_element (a, i);
      if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
        {
          g_autofree char *full = path_of (path, key);
          return damaged (r, full, "element %u is not a string", i);
        }
      g_ptr_array_add (list, g_strdup (json_node_get_string (n)));
    }
  return TRUE;
}

static gboolean
read_doubles (Reader *r, JsonObject *o, const char *path, const char *key, GArray *list)
{
  gboolean failed;
  JsonArray *a = get_array (r, o, path, key, FALSE, &failed);
  if (a == NULL)
    return !failed;
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *n = json_array_get_element (a, i);
      double v = is_number (n) ? number_of (n) : NAN;
      if (!isfinite (v) || v < 0)
        {
          g_autofree char *full = path_of (path, key);
          return damaged (r, full, "element %u is not a number of 0 or more", i);
        }
      g_array_append_val (list, v);
    }
  return TRUE;
}

/* A string member that must be one of choices (NULL-terminated); its index in *out. */
static gboolean
read_choice (Reader *r, JsonObject *o, const char *path, const char *key, gboolean required,
             const char * const *choices, int *out)
{
  g_autofree char *s = NULL;
  if (!read_string (r, o, path, key, required, FALSE, &s))
    return FALSE;
  if (s == NULL)
    return TRUE;
  for (int i = 0; choices[i]; i++)
    if (g_str_equal (s, choices[i]))
      {
        *out = i;
        return TRUE;
      }
  g_autofree char *full = path_of (path, key);
  g_autofree char *list = g_strjoinv ("|", (char **) choices);
  return damaged (r, full, "'%s' is not one of %s", s, list);
}

static gboolean
read_device (Reader *r, JsonObject *root, FbProfile *p)
{
  static const char * const ceilings[] = { "datasheet", "measured", NULL };
  gboolean failed;
  JsonObject *o = get_object (r, root, NULL, "device", TRUE, &failed);
  int measured = 0;
  if (o == NULL)
    return FALSE;
  if (!read_string (r, o, "device", "name", TRUE, FALSE, &p->device.name) ||
      !read_nonneg (r, o, "device", "peak_gflops", TRUE, &p->device.peak_gflops) ||
      !read_nonneg (r, o, "device", "peak_gbps", TRUE, &p->device.peak_gbps) ||
      !read_choice (r, o, "device", "ceilings", TRUE, ceilings, &measured))
    return FALSE;
  p->device.ceilings_measured = measured == 1;
  return TRUE;
}

static gboolean
read_pipeline (Reader *r, JsonObject *root, FbProfile *p)
{
  static const char * const layouts[] = { "nchw", "nhwc", NULL };
  gboolean failed;
  JsonObject *o = get_object (r, root, NULL, "pipeline", TRUE, &failed);
  int layout = 0;
  if (o == NULL)
    return FALSE;
  if (!read_strings (r, o, "pipeline", "disabled_passes", TRUE, p->pipeline->disabled_passes) ||
      !read_strings (r, o, "pipeline", "no_fuse", TRUE, p->pipeline->no_fuse) ||
      !read_choice (r, o, "pipeline", "layout", TRUE, layouts, &layout))
    return FALSE;
  p->pipeline->layout = layout == 1 ? FB_LAYOUT_NHWC : FB_LAYOUT_NCHW;
  JsonObject *shapes = get_object (r, o, "pipeline", "input_shapes", TRUE, &failed);
  if (shapes == NULL)
    return FALSE;
  g_autoptr(GList) names = json_object_get_members (shapes);
  for (GList *l = names; l; l = l->next)
    {
      g_autofree char *key = g_strdup_printf ("pipeline.input_shapes.%s", (const char *) l->data);
      JsonNode *n = json_object_get_member (shapes, l->data);
      if (!JSON_NODE_HOLDS_ARRAY (n))
        return damaged (r, key, "expected an array of extents");
      JsonArray *a = json_node_get_array (n);
      guint rank = json_array_get_length (a);
      if (rank > FB_MAX_RANK)
        return damaged (r, key, "rank %u is above %d", rank, FB_MAX_RANK);
      int64_t dims[FB_MAX_RANK];
      for (guint d = 0; d < rank; d++)
        {
          JsonNode *e = json_array_get_element (a, d);
          if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_INT64 ||
              json_node_get_int (e) < -1)
            return damaged (r, key, "extent %u is not a whole number", d);
          dims[d] = json_node_get_int (e);
        }
      FbShape s = fb_shape_make ((int) rank, dims);
      g_hash_table_insert (p->pipeline->input_shapes, g_strdup (l->data),
                           g_memdup2 (&s, sizeof s));
    }
  return TRUE;
}

static gboolean
read_counters (Reader *r, JsonObject *ko, const char *path, FbKernelCounters *c)
{
  gboolean failed;
  g_autofree char *cpath = g_strdup_printf ("%s.counters", path);
  JsonObject *o = get_object (r, ko, path, "counters", FALSE, &failed);
  if (o == NULL)
    return !failed;
  /* -1 says "not measured": the only negative value allowed. */
  return read_double (r, o, cpath, "cycles", FALSE, &c->cycles) &&
         read_double (r, o, cpath, "instructions", FALSE, &c->instructions) &&
         read_double (r, o, cpath, "llc_misses", FALSE, &c->llc_misses) &&
         read_double (r, o, cpath, "sm_throughput", FALSE, &c->sm_throughput) &&
         read_double (r, o, cpath, "device_us", FALSE, &c->device_us);
}

static gboolean
read_kernel (Reader *r, JsonNode *node, guint index, FbProfileKernel *k)
{
  static const char * const sources[] = { "modeled", "measured", NULL };
  static const char * const bounds[] = { "memory", "compute", NULL };
  g_autofree char *path = g_strdup_printf ("kernels[%u]", index);
  int kind = 0, source = 0, bound = 0;
  guint64 bytes;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return damaged (r, path, "expected an object");
  JsonObject *o = json_node_get_object (node);
  if (!read_guint (r, o, path, "id", TRUE, &k->id) ||
      !read_string (r, o, path, "name", TRUE, FALSE, &k->name) ||
      !read_choice (r, o, path, "kind", FALSE, _fb_profile_kind_names, &kind) ||
      !read_guint (r, o, path, "stage_node", TRUE, &k->stage_node) ||
      !read_strings (r, o, path, "nodes", TRUE, k->nodes) ||
      !read_doubles (r, o, path, "node_shares", k->node_shares) ||
      !read_guint (r, o, path, "calls", TRUE, &k->calls) ||
      !read_nonneg (r, o, path, "median_us", TRUE, &k->median_us) ||
      !read_nonneg (r, o, path, "min_us", TRUE, &k->min_us) ||
      !read_nonneg (r, o, path, "max_us", TRUE, &k->max_us))
    return FALSE;
  k->kind = kind;
  bytes = 0;
  if (!read_uint (r, o, path, "bytes_read", TRUE, G_MAXINT64, &bytes))
    return FALSE;
  k->bytes_read = bytes;
  if (!read_uint (r, o, path, "bytes_written", TRUE, G_MAXINT64, &bytes))
    return FALSE;
  k->bytes_written = bytes;
  if (!read_choice (r, o, path, "bytes_source", TRUE, sources, &source) ||
      !read_nonneg (r, o, path, "flops", TRUE, &k->flops) ||
      !read_choice (r, o, path, "bound", TRUE, bounds, &bound) ||
      !read_nonneg (r, o, path, "roofline_share", TRUE, &k->roofline_share) ||
      !read_doubles (r, o, path, "worker_busy_us", k->worker_busy_us) ||
      !read_counters (r, o, path, &k->counters))
    return FALSE;
  k->bytes_source = source == 1 ? FB_BYTES_MEASURED : FB_BYTES_MODELED;
  k->bound = bound == 1 ? FB_BOUND_COMPUTE : FB_BOUND_MEMORY;

  if (k->node_shares->len > 0)
    {
      double sum = 0;
      g_autofree char *key = g_strdup_printf ("%s.node_shares", path);
      if (k->node_shares->len != k->nodes->len)
        return damaged (r, key, "%u shares for %u nodes", k->node_shares->len, k->nodes->len);
      for (guint i = 0; i < k->node_shares->len; i++)
        sum += g_array_index (k->node_shares, double, i);
      if (fabs (sum - 1.0) > 1e-3)
        return damaged (r, key, "the shares add up to %g, not 1", sum);
    }
  if (k->min_us > k->max_us)
    {
      g_autofree char *key = g_strdup_printf ("%s.min_us", path);
      return damaged (r, key, "above max_us (%g > %g)", k->min_us, k->max_us);
    }
  return TRUE;
}

static gboolean
read_kernels (Reader *r, JsonObject *root, FbProfile *p)
{
  gboolean failed;
  JsonArray *a = get_array (r, root, NULL, "kernels", TRUE, &failed);
  g_autoptr(GHashTable) ids = g_hash_table_new (NULL, NULL);
  if (a == NULL)
    return FALSE;
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      FbProfileKernel *k = fb_profile_kernel_new ();
      g_ptr_array_add (p->kernels, k);
      if (!read_kernel (r, json_array_get_element (a, i), i, k))
        return FALSE;
      if (!g_hash_table_add (ids, GUINT_TO_POINTER (k->id + 1)))
        {
          g_autofree char *key = g_strdup_printf ("kernels[%u].id", i);
          return damaged (r, key, "%u is the id of an earlier kernel too", k->id);
        }
    }
  return TRUE;
}

static gboolean
read_folded (Reader *r, JsonObject *root, FbProfile *p)
{
  gboolean failed;
  JsonArray *a = get_array (r, root, NULL, "folded", TRUE, &failed);
  if (a == NULL)
    return FALSE;
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      g_autofree char *path = g_strdup_printf ("folded[%u]", i);
      JsonNode *n = json_array_get_element (a, i);
      FbProfileFolded f = { NULL, NULL };
      if (!JSON_NODE_HOLDS_OBJECT (n))
        return damaged (r, path, "expected an object");
      gboolean ok = read_string (r, json_node_get_object (n), path, "node", TRUE, FALSE, &f.node) &&
                    read_string (r, json_node_get_object (n), path, "by", TRUE, FALSE, &f.by);
      g_array_append_val (p->folded, f);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

static gboolean
read_timeline (Reader *r, JsonObject *root, FbProfile *p, GHashTable *ids)
{
  gboolean failed;
  JsonArray *a = get_array (r, root, NULL, "timeline", TRUE, &failed);
  if (a == NULL)
    return FALSE;
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      g_autofree char *path = g_strdup_printf ("timeline[%u]", i);
      g_autofree char *function = NULL;
      JsonNode *n = json_array_get_element (a, i);
      FbProfileSpan s = { 0 };
      if (!JSON_NODE_HOLDS_OBJECT (n))
        return damaged (r, path, "expected an object");
      JsonObject *o = json_node_get_object (n);
      if (!read_guint (r, o, path, "kernel", TRUE, &s.kernel) ||
          !read_nonneg (r, o, path, "start_us", TRUE, &s.start_us) ||
          !read_nonneg (r, o, path, "end_us", TRUE, &s.end_us) ||
          !read_guint (r, o, path, "lane", TRUE, &s.lane) ||
          !read_string (r, o, path, "function", FALSE, FALSE, &function))
        return FALSE;
      s.function = function ? g_intern_string (function) : NULL;
      if (!g_hash_table_contains (ids, GUINT_TO_POINTER (s.kernel + 1)))
        {
          g_autofree char *key = g_strdup_printf ("%s.kernel", path);
          return damaged (r, key, "%u names no kernel of the profile", s.kernel);
        }
      if (s.end_us < s.start_us)
        {
          g_autofree char *key = g_strdup_printf ("%s.end_us", path);
          return damaged (r, key, "before start_us (%g < %g)", s.end_us, s.start_us);
        }
      g_array_append_val (p->timeline, s);
    }
  return TRUE;
}

/* "timing", where a GPU profile recorded untraced replays; "overhead" is derived, not read. */
static gboolean
read_timing (Reader *r, JsonObject *root, FbProfile *p)
{
  gboolean failed;
  JsonObject *o = get_object (r, root, NULL, "timing", FALSE, &failed);
  if (o == NULL)
    return !failed;
  FbProfileTiming *t = &p->timing;
  if (!read_guint (r, o, "timing", "untraced_iterations", TRUE, &t->untraced_iterations) ||
      !read_nonneg (r, o, "timing", "untraced_median_ms", TRUE, &t->untraced_median_ms) ||
      !read_nonneg (r, o, "timing", "untraced_min_ms", FALSE, &t->untraced_min_ms) ||
      !read_nonneg (r, o, "timing", "untraced_max_ms", FALSE, &t->untraced_max_ms) ||
      !read_nonneg (r, o, "timing", "noise_ms", FALSE, &t->noise_ms) ||
      !read_nonneg (r, o, "timing", "traced_median_ms", TRUE, &t->traced_median_ms) ||
      !read_nonneg (r, o, "timing", "replay_launch_ms", FALSE, &t->replay_launch_ms))
    return FALSE;
  if (t->untraced_iterations == 0)
    return damaged (r, "timing.untraced_iterations", "zero, with untraced figures given");
  return TRUE;
}

/* "dram_per_inference", where a GPU profile counted whole replays. */
static gboolean
read_dram (Reader *r, JsonObject *root, FbProfile *p)
{
  gboolean failed;
  JsonObject *o = get_object (r, root, NULL, "dram_per_inference", FALSE, &failed);
  if (o == NULL)
    return !failed;
  FbProfileDram *d = &p->dram;
  if (!read_guint (r, o, "dram_per_inference", "replays", TRUE, &d->replays) ||
      !read_nonneg (r, o, "dram_per_inference", "read_bytes", TRUE, &d->read_bytes) ||
      !read_nonneg (r, o, "dram_per_inference", "written_bytes", TRUE, &d->written_bytes))
    return FALSE;
  if (d->replays == 0)
    return damaged (r, "dram_per_inference.replays", "zero, with bytes given");
  return TRUE;
}

static FbProfile *
read_root (Reader *r, JsonNode *root_node)
{
  g_autoptr(FbProfile) p = fb_profile_new ();
  g_autofree char *format = NULL;
  guint64 version = 0;
  gboolean failed;

  if (root_node == NULL || !JSON_NODE_HOLDS_OBJECT (root_node))
    {
      damaged (r, "(top level)", "expected a JSON object");
      return NULL;
    }
  JsonObject *root = json_node_get_object (root_node);
  if (!read_string (r, root, NULL, "format", TRUE, FALSE, &format))
    return NULL;
  if (!g_str_equal (format, FB_PROFILE_FORMAT_NAME))
    {
      damaged (r, "format", "'%s' is not \"" FB_PROFILE_FORMAT_NAME "\"", format);
      return NULL;
    }
  if (!read_uint (r, root, NULL, "version", TRUE, G_MAXUINT, &version))
    return NULL;
  if (version != FB_PROFILE_FORMAT_VERSION)
    {
      g_set_error (r->error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_VERSION,
                   "%s: version %" G_GUINT64_FORMAT " of the profile format; this build reads "
                   "version %d", r->what, version, FB_PROFILE_FORMAT_VERSION);
      return NULL;
    }
  if (!read_string (r, root, NULL, "model", TRUE, FALSE, &p->model) ||
      !read_string (r, root, NULL, "model_digest", FALSE, TRUE, &p->model_digest) ||
      !read_string (r, root, NULL, "target", TRUE, FALSE, &p->target) ||
      !read_device (r, root, p) || !read_pipeline (r, root, p) ||
      !read_guint (r, root, NULL, "iterations", TRUE, &p->iterations))
    return NULL;
  JsonObject *wall = get_object (r, root, NULL, "wall_ms", TRUE, &failed);
  if (wall == NULL ||
      !read_nonneg (r, wall, "wall_ms", "median", TRUE, &p->wall_median_ms) ||
      !read_nonneg (r, wall, "wall_ms", "min", TRUE, &p->wall_min_ms) ||
      !read_nonneg (r, wall, "wall_ms", "max", TRUE, &p->wall_max_ms) ||
      !read_nonneg (r, root, NULL, "busy_ms", TRUE, &p->busy_ms) || !read_timing (r, root, p) ||
      !read_dram (r, root, p) || !read_kernels (r, root, p) || !read_folded (r, root, p))
    return NULL;
  g_autoptr(GHashTable) ids = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < p->kernels->len; i++)
    g_hash_table_add (ids, GUINT_TO_POINTER (((FbProfileKernel *) g_ptr_array_index (p->kernels, i))->id + 1));
  if (!read_timeline (r, root, p, ids) ||
      !read_strings (r, root, NULL, "diagnosis", TRUE, p->diagnosis) ||
      !read_string (r, root, NULL, "counters_note", FALSE, TRUE, &p->counters_note))
    return NULL;
  return g_steal_pointer (&p);
}

FbProfile *
fb_profile_load_bytes (GBytes *bytes, const char *what, GError **error)
{
  g_return_val_if_fail (bytes != NULL, NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) local = NULL;
  Reader r = { what ? what : "profile", error };
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);

  if (len == 0 || !json_parser_load_from_data (parser, data ? data : "", (gssize) len, &local))
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_INVALID, "%s: not JSON: %s", r.what,
                   local ? local->message : "the file is empty");
      return NULL;
    }
  return read_root (&r, json_parser_get_root (parser));
}

FbProfile *
fb_profile_load (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autofree char *data = NULL;
  gsize len;
  if (!g_file_get_contents (path, &data, &len, error))
    return NULL;
  g_autoptr(GBytes) bytes = g_bytes_new_take (g_steal_pointer (&data), len);
  return fb_profile_load_bytes (bytes, path, error);
}
