/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing the profile file ("format": "fusebench-profile", "version": 1) and the Chrome/Perfetto
 * trace of its timeline; reading is fb-profile-load.c. Equal profiles write equal files. */
#include "fb-profile.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "fb-profile-private.h"

const char * const _fb_profile_kind_names[] = { "generated", "library", "host", "copy", NULL };

const char *
fb_profile_kernel_kind_name (FbProfileKernelKind kind)
{
  return (guint) kind < 4 ? _fb_profile_kind_names[kind] : "generated";
}

/* Writing ------------------------------------------------------------------------------- */

/* JSON has no NaN or infinity: a value that is not finite is written as 0. */
static void
add_double (JsonBuilder *b, const char *key, double v)
{
  json_builder_set_member_name (b, key);
  json_builder_add_double_value (b, isfinite (v) ? v : 0);
}

static void
add_int (JsonBuilder *b, const char *key, gint64 v)
{
  json_builder_set_member_name (b, key);
  json_builder_add_int_value (b, v);
}

static void
add_string (JsonBuilder *b, const char *key, const char *v)
{
  json_builder_set_member_name (b, key);
  if (v)
    json_builder_add_string_value (b, v);
  else
    json_builder_add_null_value (b);
}

static void
add_strings (JsonBuilder *b, const char *key, const GPtrArray *list)
{
  json_builder_set_member_name (b, key);
  json_builder_begin_array (b);
  for (guint i = 0; list && i < list->len; i++)
    json_builder_add_string_value (b, g_ptr_array_index (list, i));
  json_builder_end_array (b);
}

static void
add_doubles (JsonBuilder *b, const char *key, const GArray *list)
{
  json_builder_set_member_name (b, key);
  json_builder_begin_array (b);
  for (guint i = 0; list && i < list->len; i++)
    {
      double v = g_array_index (list, double, i);
      json_builder_add_double_value (b, isfinite (v) ? v : 0);
    }
  json_builder_end_array (b);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char **) a, *(const char **) b);
}

static void
add_pipeline (JsonBuilder *b, const FbPipelineOptions *o)
{
  json_builder_set_member_name (b, "pipeline");
  json_builder_begin_object (b);
  add_strings (b, "disabled_passes", o->disabled_passes);
  add_strings (b, "no_fuse", o->no_fuse);
  add_string (b, "layout", o->layout == FB_LAYOUT_NHWC ? "nhwc" : "nchw");
  json_builder_set_member_name (b, "input_shapes");
  json_builder_begin_object (b);
  /* Sorted, so that equal profiles are equal files. */
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, o->input_shapes);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (names, key);
  g_ptr_array_sort (names, compare_strings);
  for (guint i = 0; i < names->len; i++)
    {
      const FbShape *s = g_hash_table_lookup (o->input_shapes, g_ptr_array_index (names, i));
      json_builder_set_member_name (b, g_ptr_array_index (names, i));
      json_builder_begin_array (b);
      for (int d = 0; d < s->rank; d++)
        json_builder_add_int_value (b, s->dim[d]);
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
  json_builder_end_object (b);
}

static void
add_kernel (JsonBuilder *b, const FbProfileKernel *k)
{
  json_builder_begin_object (b);
  add_int (b, "id", k->id);
  add_string (b, "name", k->name ? k->name : "");
  add_string (b, "kind", fb_profile_kernel_kind_name (k->kind));
  add_int (b, "stage_node", k->stage_node);
  add_strings (b, "nodes", k->nodes);
  add_doubles (b, "node_shares", k->node_shares);
  add_int (b, "calls", k->calls);
  add_double (b, "median_us", k->median_us);
  add_double (b, "min_us", k->min_us);
  add_double (b, "max_us", k->max_us);
  add_int (b, "bytes_read", (gint64) MIN (k->bytes_read, (guint64) G_MAXINT64));
  add_int (b, "bytes_written", (gint64) MIN (k->bytes_written, (guint64) G_MAXINT64));
  add_string (b, "bytes_source", k->bytes_source == FB_BYTES_MEASURED ? "measured" : "modeled");
  add_double (b, "flops", k->flops);
  add_string (b, "bound", k->bound == FB_BOUND_COMPUTE ? "compute" : "memory");
  add_double (b, "roofline_share", k->roofline_share);
  add_doubles (b, "worker_busy_us", k->worker_busy_us);
  json_builder_set_member_name (b, "counters");
  json_builder_begin_object (b);
  add_double (b, "cycles", k->counters.cycles);
  add_double (b, "instructions", k->counters.instructions);
  add_double (b, "llc_misses", k->counters.llc_misses);
  add_double (b, "sm_throughput", k->counters.sm_throughput);
  add_double (b, "device_us", k->counters.device_us);
  json_builder_end_object (b);
  json_builder_end_object (b);
}

/* Only where the profile has untraced figures: a profile without them writes the file it
 * always wrote. "overhead" is derived (fb_profile_timing_overhead), for readers of the file;
 * reading recomputes it. */
static void
add_timing (JsonBuilder *b, const FbProfile *p)
{
  const FbProfileTiming *t = &p->timing;
  if (t->untraced_iterations == 0)
    return;
  json_builder_set_member_name (b, "timing");
  json_builder_begin_object (b);
  add_int (b, "untraced_iterations", t->untraced_iterations);
  add_double (b, "untraced_median_ms", t->untraced_median_ms);
  add_double (b, "untraced_min_ms", t->untraced_min_ms);
  add_double (b, "untraced_max_ms", t->untraced_max_ms);
  add_double (b, "noise_ms", t->noise_ms);
  add_double (b, "traced_median_ms", t->traced_median_ms);
  add_double (b, "overhead", fb_profile_timing_overhead (p));
  add_double (b, "replay_launch_ms", t->replay_launch_ms);
  json_builder_end_object (b);
}

static void
add_dram (JsonBuilder *b, const FbProfileDram *d)
{
  if (d->replays == 0)
    return;
  json_builder_set_member_name (b, "dram_per_inference");
  json_builder_begin_object (b);
  add_int (b, "replays", d->replays);
  add_double (b, "read_bytes", d->read_bytes);
  add_double (b, "written_bytes", d->written_bytes);
  json_builder_end_object (b);
}

char *
fb_profile_to_json (const FbProfile *p)
{
  g_return_val_if_fail (p != NULL, NULL);
  g_autoptr(JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  add_string (b, "format", FB_PROFILE_FORMAT_NAME);
  add_int (b, "version", FB_PROFILE_FORMAT_VERSION);
  add_string (b, "model", p->model ? p->model : "");
  add_string (b, "model_digest", p->model_digest);
  add_string (b, "target", p->target ? p->target : "");
  json_builder_set_member_name (b, "device");
  json_builder_begin_object (b);
  add_string (b, "name", p->device.name ? p->device.name : "");
  add_double (b, "peak_gflops", p->device.peak_gflops);
  add_double (b, "peak_gbps", p->device.peak_gbps);
  add_string (b, "ceilings", p->device.ceilings_measured ? "measured" : "datasheet");
  json_builder_end_object (b);
  add_pipeline (b, p->pipeline);
  add_int (b, "iterations", p->iterations);
  json_builder_set_member_name (b, "wall_ms");
  json_builder_begin_object (b);
  add_double (b, "median", p->wall_median_ms);
  add_double (b, "min", p->wall_min_ms);
  add_double (b, "max", p->wall_max_ms);
  json_builder_end_object (b);
  add_double (b, "busy_ms", p->busy_ms);
  add_timing (b, p);
  add_dram (b, &p->dram);
  json_builder_set_member_name (b, "kernels");
  json_builder_begin_array (b);
  for (guint i = 0; i < p->kernels->len; i++)
    add_kernel (b, g_ptr_array_index (p->kernels, i));
  json_builder_end_array (b);
  json_builder_set_member_name (b, "folded");
  json_builder_begin_array (b);
  for (guint i = 0; i < p->folded->len; i++)
    {
      const FbProfileFolded *f = &g_array_index (p->folded, FbProfileFolded, i);
      json_builder_begin_object (b);
      add_string (b, "node", f->node ? f->node : "");
      add_string (b, "by", f->by ? f->by : "");
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "timeline");
  json_builder_begin_array (b);
  for (guint i = 0; i < p->timeline->len; i++)
    {
      const FbProfileSpan *s = &g_array_index (p->timeline, FbProfileSpan, i);
      json_builder_begin_object (b);
      add_int (b, "kernel", s->kernel);
      add_double (b, "start_us", s->start_us);
      add_double (b, "end_us", s->end_us);
      add_int (b, "lane", s->lane);
      if (s->function)
        add_string (b, "function", s->function);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  add_strings (b, "diagnosis", p->diagnosis);
  add_string (b, "counters_note", p->counters_note);
  json_builder_end_object (b);

  g_autoptr(JsonNode) root = json_builder_get_root (b);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  char *text = json_generator_to_data (gen, NULL);
  char *with_newline = g_strconcat (text, "\n", NULL);
  g_free (text);
  return with_newline;
}

static gboolean
write_atomically (const char *path, const char *text, GError **error)
{
  g_autoptr(GError) local = NULL;
  if (g_file_set_contents (path, text, -1, &local))
    return TRUE;
  /* g_file_set_contents writes a temporary beside path and renames it: a failure leaves
   * nothing behind. Its message names the path already. */
  g_set_error (error, G_FILE_ERROR, local->code, "%s", local->message);
  return FALSE;
}

gboolean
fb_profile_save (const FbProfile *profile, const char *path, GError **error)
{
  g_return_val_if_fail (profile != NULL && path != NULL, FALSE);
  g_autofree char *text = fb_profile_to_json (profile);
  return write_atomically (path, text, error);
}

static const FbProfileKernel *
kernel_by_id (const FbProfile *p, guint id)
{
  for (guint i = 0; i < p->kernels->len; i++)
    {
      const FbProfileKernel *k = g_ptr_array_index (p->kernels, i);
      if (k->id == id)
        return k;
    }
  return NULL;
}

static void
add_thread_name (JsonBuilder *b, guint lane, const FbProfile *p)
{
  g_autofree char *name = g_strdup_printf ("%s %u", fb_profile_lane_word (p), lane);
  json_builder_begin_object (b);
  add_string (b, "name", "thread_name");
  add_string (b, "ph", "M");
  add_int (b, "pid", 1);
  add_int (b, "tid", lane);
  json_builder_set_member_name (b, "args");
  json_builder_begin_object (b);
  add_string (b, "name", name);
  json_builder_end_object (b);
  json_builder_end_object (b);
}

gboolean
fb_profile_save_chrome_trace (const FbProfile *p, const char *path, GError **error)
{
  g_return_val_if_fail (p != NULL && path != NULL, FALSE);
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(GHashTable) lanes = g_hash_table_new (NULL, NULL);
  g_autofree char *process = g_strdup_printf ("fusebench %s: %s on %s", p->target ? p->target : "",
                                              p->model ? p->model : "",
                                              p->device.name ? p->device.name : "");
  json_builder_begin_object (b);
  add_string (b, "displayTimeUnit", "ns");
  json_builder_set_member_name (b, "traceEvents");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  add_string (b, "name", "process_name");
  add_string (b, "ph", "M");
  add_int (b, "pid", 1);
  json_builder_set_member_name (b, "args");
  json_builder_begin_object (b);
  add_string (b, "name", process);
  json_builder_end_object (b);
  json_builder_end_object (b);
  for (guint i = 0; i < p->timeline->len; i++)
    {
      const FbProfileSpan *s = &g_array_index (p->timeline, FbProfileSpan, i);
      const FbProfileKernel *k = kernel_by_id (p, s->kernel);
      if (g_hash_table_add (lanes, GUINT_TO_POINTER (s->lane + 1)))
        add_thread_name (b, s->lane, p);
      json_builder_begin_object (b);
      add_string (b, "name", k && k->name ? k->name : "kernel");
      add_string (b, "cat", k ? fb_profile_kernel_kind_name (k->kind) : "generated");
      add_string (b, "ph", "X");
      add_double (b, "ts", s->start_us);
      add_double (b, "dur", MAX (0, s->end_us - s->start_us));
      add_int (b, "pid", 1);
      add_int (b, "tid", s->lane);
      json_builder_set_member_name (b, "args");
      json_builder_begin_object (b);
      add_int (b, "kernel", s->kernel);
      if (s->function)
        add_string (b, "function", s->function);
      if (k)
        {
          add_int (b, "stage_node", k->stage_node);
          add_strings (b, "nodes", k->nodes);
        }
      json_builder_end_object (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);

  g_autoptr(JsonNode) root = json_builder_get_root (b);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  return write_atomically (path, text, error);
}
