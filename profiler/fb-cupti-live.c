/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Recording with CUPTI's Activity API, opened with dlopen so that nothing needs a driver to
 * build or to start (fb-cupti.h). Built only where the CUDA toolkit's CUPTI headers are. */
#include "fb-cupti-private.h"

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  CUptiResult (*register_callbacks) (CUpti_BuffersCallbackRequestFunc,
                                     CUpti_BuffersCallbackCompleteFunc);
  CUptiResult (*enable) (CUpti_ActivityKind);
  CUptiResult (*disable) (CUpti_ActivityKind);
  CUptiResult (*flush_all) (uint32_t);
  CUptiResult (*next_record) (uint8_t *, size_t, CUpti_Activity **);
  CUptiResult (*dropped) (CUcontext, uint32_t, size_t *);
  CUptiResult (*push_external) (CUpti_ExternalCorrelationKind, uint64_t);
  CUptiResult (*pop_external) (CUpti_ExternalCorrelationKind, uint64_t *);
  CUptiResult (*timestamp) (uint64_t *);
  CUptiResult (*result_string) (CUptiResult, const char **);
  CUptiResult (*subscribe) (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
  CUptiResult (*unsubscribe) (CUpti_SubscriberHandle);
} CuptiApi;

struct _FbCupti {
  CuptiApi    api;
  CUpti_SubscriberHandle subscriber;
  GByteArray *raw;               /* records since the last take (under current_lock) */
  guint       dropped;
  GByteArray *saved;             /* every record taken, when saving to record_path */
  char       *record_path;
};

/* CUPTI's buffer callbacks carry no user data: one recording per process, this one. */
static FbCupti *current;
G_LOCK_DEFINE_STATIC (current);

static const CUpti_ActivityKind kinds[] = {
  CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
  CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_RUNTIME,
  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};

#define BUFFER_BYTES (4u << 20)

static void CUPTIAPI
buffer_requested (uint8_t **buffer, size_t *size, size_t *max_records)
{
  void *p = NULL;
  if (posix_memalign (&p, 8, BUFFER_BYTES) != 0)
    p = NULL;
  *buffer = p;
  *size = p ? BUFFER_BYTES : 0;
  *max_records = 0;
}

static guint32
record_size (CUpti_ActivityKind kind)
{
  switch (kind)
    {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof (CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof (CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof (CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:   /* libraries (cuDNN, cuBLASLt) launch through it */
      return sizeof (CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return sizeof (CUpti_ActivityExternalCorrelation);
    default: return 0;
    }
}

static void CUPTIAPI
buffer_completed (CUcontext context, uint32_t stream, uint8_t *buffer, size_t size,
                  size_t valid)
{
  G_LOCK (current);
  if (current != NULL && buffer != NULL)
    {
      CUpti_Activity *record = NULL;
      while (current->api.next_record (buffer, valid, &record) == CUPTI_SUCCESS)
        {
          guint32 bytes = record_size (record->kind);
          if (bytes == 0)
            continue;
          const char *name = record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                             ? ((const CUpti_ActivityKernel10 *) record)->name : NULL;
          _fb_cupti_append_raw (current->raw, record->kind, record, bytes, name);
        }
      size_t dropped = 0;
      if (current->api.dropped (context, stream, &dropped) == CUPTI_SUCCESS)
        current->dropped += (guint) dropped;
    }
  G_UNLOCK (current);
  free (buffer);
}

static void CUPTIAPI
no_callback (void *data, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void *info)
{
}

/* Where CUDA puts CUPTI: the loader's path first, then the toolkit's usual folders. */
static const char *const library_names[] = {
  "libcupti.so.13",
  "libcupti.so",
  "/usr/local/cuda/lib64/libcupti.so.13",
  "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
  "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcupti.so.13",
  "/usr/lib/x86_64-linux-gnu/libcupti.so.13",
};

void *
_fb_cupti_open_library (GError **error)
{
  const char *env = g_getenv ("FUSEBENCH_CUPTI");
  g_autoptr(GString) tried = g_string_new (NULL);
  if (env && *env)
    {
      void *h = dlopen (env, RTLD_NOW | RTLD_GLOBAL);
      if (h)
        return h;
      g_string_append_printf (tried, "%s (FUSEBENCH_CUPTI: %s)", env, dlerror ());
    }
  for (guint i = 0; i < G_N_ELEMENTS (library_names); i++)
    {
      void *h = dlopen (library_names[i], RTLD_NOW | RTLD_GLOBAL);
      if (h)
        return h;
      g_string_append_printf (tried, "%s%s", tried->len ? ", " : "", library_names[i]);
    }
  g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
               "CUPTI was not found (looked for %s); set FUSEBENCH_CUPTI to its path",
               tried->str);
  return NULL;
}

static gboolean
resolve (void *lib, CuptiApi *api, GError **error)
{
  struct { const char *name; void **slot; } syms[] = {
    { "cuptiActivityRegisterCallbacks", (void **) &api->register_callbacks },
    { "cuptiActivityEnable", (void **) &api->enable },
    { "cuptiActivityDisable", (void **) &api->disable },
    { "cuptiActivityFlushAll", (void **) &api->flush_all },
    { "cuptiActivityGetNextRecord", (void **) &api->next_record },
    { "cuptiActivityGetNumDroppedRecords", (void **) &api->dropped },
    { "cuptiActivityPushExternalCorrelationId", (void **) &api->push_external },
    { "cuptiActivityPopExternalCorrelationId", (void **) &api->pop_external },
    { "cuptiGetTimestamp", (void **) &api->timestamp },
    { "cuptiGetResultString", (void **) &api->result_string },
    { "cuptiSubscribe", (void **) &api->subscribe },
    { "cuptiUnsubscribe", (void **) &api->unsubscribe },
  };
  for (guint i = 0; i < G_N_ELEMENTS (syms); i++)
    if ((*syms[i].slot = dlsym (lib, syms[i].name)) == NULL)
      {
        g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
                     "the CUPTI found lacks %s (too old a CUDA?)", syms[i].name);
        return FALSE;
      }
  return TRUE;
}

static const char *
result_text (const CuptiApi *api, CUptiResult r)
{
  const char *s = NULL;
  if (api->result_string == NULL || api->result_string (r, &s) != CUPTI_SUCCESS || s == NULL)
    return "unknown CUPTI error";
  return s;
}

/* Says what a refused CUPTI call means for the user. */
static void
set_cupti_error (GError **error, const CuptiApi *api, CUptiResult r, const char *doing)
{
  const char *why =
    r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
      ? "another profiler holds CUPTI (Nsight Compute or Nsight Systems attached to this "
        "process); detach it or profile without it"
    : r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
        r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES
      ? "no permission to profile this GPU (the driver restricts profiling to administrators: "
        "NVreg_RestrictProfilingToAdminUsers)"
    : r == CUPTI_ERROR_NOT_INITIALIZED || r == CUPTI_ERROR_INVALID_DEVICE
      ? "no usable CUDA driver or GPU"
      : NULL;
  g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE, "CUPTI %s: %s (%s)",
               doing, why ? why : result_text (api, r), result_text (api, r));
}

FbCupti *
fb_cupti_start (GError **error)
{
  G_LOCK (current);
  gboolean busy = current != NULL;
  G_UNLOCK (current);
  if (busy)
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
                   "a CUPTI recording of this process is already running");
      return NULL;
    }

  /* Without a driver CUPTI loads but answers every call with "unknown error": say why. */
  void *driver = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (driver == NULL)
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
                   "no CUDA driver on this machine (libcuda.so.1: %s)", dlerror ());
      return NULL;
    }
  void *lib = _fb_cupti_open_library (error);
  if (lib == NULL)
    return NULL;
  g_autofree FbCupti *c = g_new0 (FbCupti, 1);
  if (!resolve (lib, &c->api, error))
    return NULL;

  /* The Activity API alone does not notice another profiler; a subscriber does. */
  CUptiResult r = c->api.subscribe (&c->subscriber, no_callback, NULL);
  if (r != CUPTI_SUCCESS)
    {
      set_cupti_error (error, &c->api, r, "refused to start");
      return NULL;
    }
  r = c->api.register_callbacks (buffer_requested, buffer_completed);
  for (guint i = 0; r == CUPTI_SUCCESS && i < G_N_ELEMENTS (kinds); i++)
    r = c->api.enable (kinds[i]);
  if (r != CUPTI_SUCCESS)
    {
      for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
        c->api.disable (kinds[i]);
      c->api.unsubscribe (c->subscriber);
      set_cupti_error (error, &c->api, r, "refused to record activity");
      return NULL;
    }

  c->raw = g_byte_array_new ();
  G_LOCK (current);
  current = c;
  G_UNLOCK (current);
  return g_steal_pointer (&c);
}

void
fb_cupti_push_owner (FbCupti *c, guint64 owner)
{
  g_return_if_fail (c != NULL);
  c->api.push_external (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, owner);
}

void
fb_cupti_pop_owner (FbCupti *c)
{
  g_return_if_fail (c != NULL);
  uint64_t id = 0;
  c->api.pop_external (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
}

guint64
fb_cupti_timestamp (FbCupti *c)
{
  g_return_val_if_fail (c != NULL, 0);
  uint64_t t = 0;
  c->api.timestamp (&t);
  return t;
}

void
fb_cupti_set_record_path (FbCupti *c, const char *path)
{
  g_return_if_fail (c != NULL);
  g_free (c->record_path);
  c->record_path = g_strdup (path);
  if (c->saved == NULL)
    c->saved = g_byte_array_new ();
}

GArray *
fb_cupti_take (FbCupti *c, guint *dropped, GError **error)
{
  g_return_val_if_fail (c != NULL, NULL);
  /* Forced: the buffers are handed over even when not full (the caller synchronized, so
   * every record in them is complete). */
  CUptiResult r = c->api.flush_all (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS)
    {
      set_cupti_error (error, &c->api, r, "could not hand over its records");
      return NULL;
    }
  G_LOCK (current);
  g_autoptr(GByteArray) raw = g_steal_pointer (&c->raw);
  c->raw = g_byte_array_new ();
  if (dropped)
    *dropped = c->dropped;
  G_UNLOCK (current);

  if (c->record_path)
    {
      g_byte_array_append (c->saved, raw->data, raw->len);
      g_autoptr(GByteArray) file = g_byte_array_new ();
      _fb_cupti_write_header (file);
      g_byte_array_append (file, c->saved->data, c->saved->len);
      if (!g_file_set_contents (c->record_path, (const char *) file->data, file->len, error))
        return NULL;
    }

  g_autoptr(GArray) out = fb_gpu_activity_array_new ();
  if (!_fb_cupti_convert_raw (raw->data, raw->len, "CUPTI's records", out, error))
    return NULL;
  return g_steal_pointer (&out);
}

void
fb_cupti_stop (FbCupti *c)
{
  if (c == NULL)
    return;
  c->api.flush_all (0);
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    c->api.disable (kinds[i]);
  c->api.unsubscribe (c->subscriber);
  G_LOCK (current);
  if (current == c)
    current = NULL;
  G_UNLOCK (current);
  /* CUPTI stays loaded: unloading it under a live CUDA context is not supported. */
  g_byte_array_unref (c->raw);
  g_clear_pointer (&c->saved, g_byte_array_unref);
  g_free (c->record_path);
  g_free (c);
}
