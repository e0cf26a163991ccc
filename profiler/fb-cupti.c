/* SPDX-License-Identifier: GPL-3.0-or-later */
/* CUPTI's Activity API through dlopen (fb-cupti.h). CUPTI hands over full record buffers from
 * its own thread; we keep each record's bytes as delivered (and the kernel's name, which points
 * into CUPTI's memory) in one growing buffer, and turn them into FbGpuActivity only when asked,
 * with the same code that replays a saved file. */
#include "fb-cupti-private.h"
#include "fb-cupti-counters.h"

#include <string.h>

/* The saved file: this magic, the record sizes it was written with (a CUPTI with another
 * layout is refused rather than misread), then per record: kind, size, the bytes, the name's
 * length and the name (kernels only; 0 otherwise). All integers little-endian uint32. */
#define FILE_MAGIC "FBCUPTI1"
#define N_LAYOUT 5

#ifdef FB_HAVE_CUPTI
#include <cupti_activity.h>
#include <dlfcn.h>

typedef CUpti_ActivityKernel10 KernelRecord;
typedef CUpti_ActivityMemcpy6 MemcpyRecord;
typedef CUpti_ActivityMemset4 MemsetRecord;

static const guint32 layout[N_LAYOUT] = {
  sizeof (KernelRecord), sizeof (MemcpyRecord), sizeof (MemsetRecord),
  sizeof (CUpti_ActivityAPI), sizeof (CUpti_ActivityExternalCorrelation),
};
#else
static const guint32 layout[N_LAYOUT] = { 0 };
#endif

#ifdef FB_HAVE_CUPTI
/* The kinds we keep, as CUPTI numbers them: the saved file holds these numbers. */
enum {
  KIND_MEMCPY = CUPTI_ACTIVITY_KIND_MEMCPY,
  KIND_MEMSET = CUPTI_ACTIVITY_KIND_MEMSET,
  KIND_DRIVER = CUPTI_ACTIVITY_KIND_DRIVER,
  KIND_RUNTIME = CUPTI_ACTIVITY_KIND_RUNTIME,
  KIND_CONCURRENT_KERNEL = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
  KIND_EXTERNAL_CORRELATION = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};
#endif

static void
put_u32 (GByteArray *b, guint32 v)
{
  guint32 le = GUINT32_TO_LE (v);
  g_byte_array_append (b, (const guint8 *) &le, 4);
}

/* One record into the raw buffer: the record's bytes and the kernel's name. */
void
_fb_cupti_append_raw (GByteArray *raw, guint32 kind, const void *record, guint32 size, const char *name)
{
  put_u32 (raw, kind);
  put_u32 (raw, size);
  g_byte_array_append (raw, record, size);
  guint32 n = name ? (guint32) strlen (name) : 0;
  put_u32 (raw, n);
  if (n)
    g_byte_array_append (raw, (const guint8 *) name, n);
}

typedef struct {
  const guint8 *p, *end;
} Reader;

static gboolean
get_u32 (Reader *r, guint32 *v)
{
  if (r->end - r->p < 4)
    return FALSE;
  guint32 le;
  memcpy (&le, r->p, 4);
  *v = GUINT32_FROM_LE (le);
  r->p += 4;
  return TRUE;
}

typedef struct {
  guint64 start, end;
} ApiCall;

#ifdef FB_HAVE_CUPTI
static FbGpuCopyKind
copy_kind (guint8 k)
{
  switch (k)
    {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return FB_GPU_COPY_HTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return FB_GPU_COPY_DTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return FB_GPU_COPY_DTOD;
    default: return FB_GPU_COPY_OTHER;
    }
}

/* One device record as an activity; owners and host call times come after. */
static gboolean
record_to_activity (guint32 kind, const guint8 *bytes, const char *name, FbGpuActivity *a)
{
  memset (a, 0, sizeof *a);
  if (kind == KIND_CONCURRENT_KERNEL)
    {
      KernelRecord k;
      memcpy (&k, bytes, sizeof k);
      a->kind = FB_GPU_KERNEL;
      a->start_ns = k.start;
      a->end_ns = k.end;
      a->correlation = k.correlationId;
      a->stream = k.streamId;
      a->graph_node = k.graphNodeId;
      a->grid[0] = k.gridX, a->grid[1] = k.gridY, a->grid[2] = k.gridZ;
      a->block[0] = k.blockX, a->block[1] = k.blockY, a->block[2] = k.blockZ;
      a->registers = k.registersPerThread;
      a->shared_bytes = (guint32) (k.staticSharedMemory + k.dynamicSharedMemory);
      a->name = g_strdup (name ? name : "");
      return TRUE;
    }
  if (kind == KIND_MEMCPY)
    {
      MemcpyRecord m;
      memcpy (&m, bytes, sizeof m);
      a->kind = FB_GPU_MEMCPY;
      a->start_ns = m.start;
      a->end_ns = m.end;
      a->correlation = m.correlationId;
      a->stream = m.streamId;
      a->graph_node = m.graphNodeId;
      a->bytes = m.bytes;
      a->copy_kind = copy_kind (m.copyKind);
      return TRUE;
    }
  if (kind == KIND_MEMSET)
    {
      MemsetRecord m;
      memcpy (&m, bytes, sizeof m);
      a->kind = FB_GPU_MEMSET;
      a->start_ns = m.start;
      a->end_ns = m.end;
      a->correlation = m.correlationId;
      a->stream = m.streamId;
      a->graph_node = m.graphNodeId;
      a->bytes = m.bytes;
      return TRUE;
    }
  return FALSE;
}
#endif

static gboolean
invalid (GError **error, const char *what, const char *why)
{
  g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_INVALID, "%s: %s", what, why);
  return FALSE;
}

/* Raw records (no file header) into activities: device records become activities, driver
 * calls give them their host call times, external correlations their owners. */
gboolean
_fb_cupti_convert_raw (const guint8 *data, gsize len, const char *what, GArray *out, GError **error)
{
#ifdef FB_HAVE_CUPTI
  g_autoptr(GHashTable) api = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  g_autoptr(GHashTable) owners = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  guint first = out->len;
  Reader r = { data, data + len };

  while (r.p < r.end)
    {
      guint32 kind, size, name_len;
      if (!get_u32 (&r, &kind) || !get_u32 (&r, &size) || (gsize) (r.end - r.p) < size)
        return invalid (error, what, "a record is cut short");
      const guint8 *bytes = r.p;
      r.p += size;
      if (!get_u32 (&r, &name_len) || (gsize) (r.end - r.p) < name_len)
        return invalid (error, what, "a kernel name is cut short");
      g_autofree char *name = g_strndup ((const char *) r.p, name_len);
      r.p += name_len;

      guint32 want = kind == KIND_CONCURRENT_KERNEL ? layout[0]
                   : kind == KIND_MEMCPY ? layout[1]
                   : kind == KIND_MEMSET ? layout[2]
                   : kind == KIND_DRIVER || kind == KIND_RUNTIME ? layout[3]
                   : kind == KIND_EXTERNAL_CORRELATION ? layout[4] : 0;
      if (want == 0)
        continue;                             /* a kind we do not use */
      if (size != want)
        return invalid (error, what, "a record of another size than this build's CUPTI");

      /* A kernel a library launched names the runtime call; ours name the driver call. */
      if (kind == KIND_DRIVER || kind == KIND_RUNTIME)
        {
          CUpti_ActivityAPI c;
          memcpy (&c, bytes, sizeof c);
          ApiCall *call = g_new (ApiCall, 1);
          call->start = c.start;
          call->end = c.end;
          g_hash_table_insert (api, GUINT_TO_POINTER (c.correlationId), call);
        }
      else if (kind == KIND_EXTERNAL_CORRELATION)
        {
          CUpti_ActivityExternalCorrelation e;
          memcpy (&e, bytes, sizeof e);
          g_hash_table_insert (owners, GUINT_TO_POINTER (e.correlationId),
                               g_memdup2 (&e.externalId, sizeof e.externalId));
        }
      else
        {
          FbGpuActivity a;
          if (record_to_activity (kind, bytes, name, &a))
            g_array_append_val (out, a);
        }
    }

  for (guint i = first; i < out->len; i++)
    {
      FbGpuActivity *a = &g_array_index (out, FbGpuActivity, i);
      const ApiCall *call = g_hash_table_lookup (api, GUINT_TO_POINTER (a->correlation));
      const guint64 *owner = g_hash_table_lookup (owners, GUINT_TO_POINTER (a->correlation));
      if (call)
        {
          a->api_start_ns = call->start;
          a->api_end_ns = call->end;
        }
      if (owner)
        a->owner = *owner;
    }
  fb_gpu_activity_sort (out);
  return TRUE;
#else
  return invalid (error, what, "this build has no CUPTI support (built without the CUDA "
                  "toolkit's CUPTI headers)");
#endif
}

GArray *
fb_cupti_replay_file (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  if (!g_file_get_contents (path, &data, &len, error))
    return NULL;

  Reader r = { (const guint8 *) data, (const guint8 *) data + len };
  if (len < strlen (FILE_MAGIC) || memcmp (data, FILE_MAGIC, strlen (FILE_MAGIC)) != 0)
    {
      invalid (error, path, "not a file of CUPTI records saved by fusebench");
      return NULL;
    }
  r.p += strlen (FILE_MAGIC);
  for (guint i = 0; i < N_LAYOUT; i++)
    {
      guint32 size;
      if (!get_u32 (&r, &size))
        {
          invalid (error, path, "the header is cut short");
          return NULL;
        }
      if (size != layout[i])
        {
          invalid (error, path, layout[i] == 0
                   ? "this build has no CUPTI support (built without the CUDA toolkit's "
                     "CUPTI headers)"
                   : "written by a CUPTI whose record layout differs from this build's");
          return NULL;
        }
    }
  g_autoptr(GArray) out = fb_gpu_activity_array_new ();
  if (!_fb_cupti_convert_raw (r.p, r.end - r.p, path, out, error))
    return NULL;
  return g_steal_pointer (&out);
}

gboolean
fb_cupti_available (void)
{
#ifdef FB_HAVE_CUPTI
  return TRUE;
#else
  return FALSE;
#endif
}

void
_fb_cupti_write_header (GByteArray *out)
{
  g_byte_array_append (out, (const guint8 *) FILE_MAGIC, strlen (FILE_MAGIC));
  for (guint i = 0; i < N_LAYOUT; i++)
    put_u32 (out, layout[i]);
}

#ifndef FB_HAVE_CUPTI
/* Without CUPTI's headers no recording can start, so the calls that need one never run. */
FbCupti *
fb_cupti_start (GError **error)
{
  g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
               "GPU timings need CUPTI, and this build of fusebench was made without the CUDA "
               "toolkit's CUPTI headers");
  return NULL;
}

void fb_cupti_push_owner (FbCupti *cupti, guint64 owner) { }
void fb_cupti_pop_owner (FbCupti *cupti) { }
guint64 fb_cupti_timestamp (FbCupti *cupti) { return 0; }
GArray *fb_cupti_take (FbCupti *cupti, guint *dropped, GError **error) { return NULL; }
void fb_cupti_set_record_path (FbCupti *cupti, const char *path) { }
void fb_cupti_stop (FbCupti *cupti) { }

static void
counters_unavailable (GError **error)
{
  g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
               "hardware counters need CUPTI, and this build of fusebench was made without the "
               "CUDA toolkit's CUPTI headers");
}

GArray *
fb_gpu_counters_array_new (void)
{
  return g_array_new (FALSE, TRUE, sizeof (FbGpuCounters));
}

FbCuptiCounters *
fb_cupti_counters_start (gpointer context, guint device_index, guint max_ranges, GError **error)
{
  counters_unavailable (error);
  return NULL;
}

FbCuptiCounters *
fb_cupti_counters_start_user (gpointer context, guint device_index, guint max_ranges,
                              GError **error)
{
  counters_unavailable (error);
  return NULL;
}

gboolean
fb_cupti_counters_push (FbCuptiCounters *counters, const char *name, GError **error)
{
  counters_unavailable (error);
  return FALSE;
}

gboolean
fb_cupti_counters_pop (FbCuptiCounters *counters, GError **error)
{
  counters_unavailable (error);
  return FALSE;
}

int
fb_cupti_counters_end_pass (FbCuptiCounters *counters, GError **error)
{
  counters_unavailable (error);
  return -1;
}

GArray *
fb_cupti_counters_stop (FbCuptiCounters *counters, const char *save_path, GError **error)
{
  counters_unavailable (error);
  return NULL;
}

GArray *
fb_cupti_counters_replay_file (const char *path, GError **error)
{
  counters_unavailable (error);
  return NULL;
}
#endif
