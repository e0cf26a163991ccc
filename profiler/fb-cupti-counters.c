/* SPDX-License-Identifier: GPL-3.0-or-later */
/* CUPTI's range profiler (CUDA 13's cupti_range_profiler.h with cupti_profiler_host.h),
 * through dlopen (fb-cupti-counters.h). The host half (metric configuration and evaluation)
 * needs only the chip's name and its counter availability image, so a saved counter data
 * image is evaluated again without a GPU. Built only where CUPTI's headers are. */
#include "fb-cupti-counters.h"
#include "fb-cupti-private.h"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <string.h>

static const char *metrics[] = {
  "dram__bytes_read.sum",
  "dram__bytes_write.sum",
  "gpu__time_duration.sum",
  "sm__throughput.avg.pct_of_peak_sustained_elapsed",
};
#define N_METRICS G_N_ELEMENTS (metrics)

/* The saved file: magic, then three length-prefixed blobs (little-endian uint64 lengths):
 * the chip's name, its counter availability image, the decoded counter data image. */
#define FILE_MAGIC "FBCOUNT1"

typedef struct {
  CUptiResult (*profiler_init) (CUpti_Profiler_Initialize_Params *);
  CUptiResult (*chip_name) (CUpti_Device_GetChipName_Params *);
  CUptiResult (*availability) (CUpti_Profiler_GetCounterAvailability_Params *);
  CUptiResult (*host_init) (CUpti_Profiler_Host_Initialize_Params *);
  CUptiResult (*host_deinit) (CUpti_Profiler_Host_Deinitialize_Params *);
  CUptiResult (*add_metrics) (CUpti_Profiler_Host_ConfigAddMetrics_Params *);
  CUptiResult (*config_size) (CUpti_Profiler_Host_GetConfigImageSize_Params *);
  CUptiResult (*config_image) (CUpti_Profiler_Host_GetConfigImage_Params *);
  CUptiResult (*evaluate) (CUpti_Profiler_Host_EvaluateToGpuValues_Params *);
  CUptiResult (*enable) (CUpti_RangeProfiler_Enable_Params *);
  CUptiResult (*disable) (CUpti_RangeProfiler_Disable_Params *);
  CUptiResult (*data_size) (CUpti_RangeProfiler_GetCounterDataSize_Params *);
  CUptiResult (*data_init) (CUpti_RangeProfiler_CounterDataImage_Initialize_Params *);
  CUptiResult (*set_config) (CUpti_RangeProfiler_SetConfig_Params *);
  CUptiResult (*start) (CUpti_RangeProfiler_Start_Params *);
  CUptiResult (*stop) (CUpti_RangeProfiler_Stop_Params *);
  CUptiResult (*push) (CUpti_RangeProfiler_PushRange_Params *);
  CUptiResult (*pop) (CUpti_RangeProfiler_PopRange_Params *);
  CUptiResult (*decode) (CUpti_RangeProfiler_DecodeData_Params *);
  CUptiResult (*data_info) (CUpti_RangeProfiler_GetCounterDataInfo_Params *);
  CUptiResult (*range_info) (CUpti_RangeProfiler_CounterData_GetRangeInfo_Params *);
  CUptiResult (*result_string) (CUptiResult, const char **);
} RangeApi;

struct _FbCuptiCounters {
  RangeApi   api;
  CUpti_Profiler_Host_Object *host;
  CUpti_RangeProfiler_Object *target;
  char      *chip;
  GBytes    *availability;
  guint8    *config;
  gsize      config_size;
  guint8    *data;
  gsize      data_size;
  gboolean   stopped;            /* the last pass has ended: nothing to stop */
  guint      passes;             /* passes ended */
};

/* Far more passes than four metrics need: past it the launches are taken for not repeating
 * themselves. */
#define MAX_PASSES 16

static gboolean
resolve (RangeApi *api, GError **error)
{
  void *lib = _fb_cupti_open_library (error);
  if (lib == NULL)
    return FALSE;
  struct { const char *name; void **slot; } syms[] = {
    { "cuptiProfilerInitialize", (void **) &api->profiler_init },
    { "cuptiDeviceGetChipName", (void **) &api->chip_name },
    { "cuptiProfilerGetCounterAvailability", (void **) &api->availability },
    { "cuptiProfilerHostInitialize", (void **) &api->host_init },
    { "cuptiProfilerHostDeinitialize", (void **) &api->host_deinit },
    { "cuptiProfilerHostConfigAddMetrics", (void **) &api->add_metrics },
    { "cuptiProfilerHostGetConfigImageSize", (void **) &api->config_size },
    { "cuptiProfilerHostGetConfigImage", (void **) &api->config_image },
    { "cuptiProfilerHostEvaluateToGpuValues", (void **) &api->evaluate },
    { "cuptiRangeProfilerEnable", (void **) &api->enable },
    { "cuptiRangeProfilerDisable", (void **) &api->disable },
    { "cuptiRangeProfilerGetCounterDataSize", (void **) &api->data_size },
    { "cuptiRangeProfilerCounterDataImageInitialize", (void **) &api->data_init },
    { "cuptiRangeProfilerSetConfig", (void **) &api->set_config },
    { "cuptiRangeProfilerStart", (void **) &api->start },
    { "cuptiRangeProfilerStop", (void **) &api->stop },
    { "cuptiRangeProfilerPushRange", (void **) &api->push },
    { "cuptiRangeProfilerPopRange", (void **) &api->pop },
    { "cuptiRangeProfilerDecodeData", (void **) &api->decode },
    { "cuptiRangeProfilerGetCounterDataInfo", (void **) &api->data_info },
    { "cuptiRangeProfilerCounterDataGetRangeInfo", (void **) &api->range_info },
    { "cuptiGetResultString", (void **) &api->result_string },
  };
  for (guint i = 0; i < G_N_ELEMENTS (syms); i++)
    if ((*syms[i].slot = dlsym (lib, syms[i].name)) == NULL)
      {
        g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
                     "hardware counters need CUPTI's range profiler (CUDA 13), and the CUPTI "
                     "found lacks %s", syms[i].name);
        return FALSE;
      }
  return TRUE;
}

/* A refused call, in words: what the user can do about it first. */
static gboolean
failed (const RangeApi *api, CUptiResult r, const char *call, GError **error)
{
  if (r == CUPTI_SUCCESS)
    return FALSE;
  const char *text = NULL;
  if (api->result_string (r, &text) != CUPTI_SUCCESS || text == NULL)
    text = "unknown CUPTI error";
  const char *why =
    r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
    r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES
      ? "counters refused: no permission to read this GPU's counters (the driver restricts "
        "them to administrators)"
    : r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
      ? "counters refused: another profiler holds this GPU's counters (Nsight Compute or "
        "Systems attached)"
    : r == CUPTI_ERROR_NOT_SUPPORTED || r == CUPTI_ERROR_NOT_COMPATIBLE
      ? "counters are not supported on this GPU or driver"
      : "counters could not be had";
  g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE, "%s (%s: %s)", why, call,
               text);
  return TRUE;
}

/* The host object, configured for our metrics: for recording and for evaluating alike. */
static gboolean
host_setup (FbCuptiCounters *c, GError **error)
{
  CUpti_Profiler_Host_Initialize_Params init = {
    .structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE,
    .profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER,
    .pChipName = c->chip,
    .pCounterAvailabilityImage = g_bytes_get_data (c->availability, NULL),
  };
  if (failed (&c->api, c->api.host_init (&init), "cuptiProfilerHostInitialize", error))
    return FALSE;
  c->host = init.pHostObject;
  CUpti_Profiler_Host_ConfigAddMetrics_Params add = {
    .structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE,
    .pHostObject = c->host,
    .ppMetricNames = metrics,
    .numMetrics = N_METRICS,
  };
  return !failed (&c->api, c->api.add_metrics (&add), "cuptiProfilerHostConfigAddMetrics",
                  error);
}

static void
counters_free (FbCuptiCounters *c)
{
  if (c == NULL)
    return;
  if (c->target)
    {
      CUpti_RangeProfiler_Disable_Params p = {
        .structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE,
        .pRangeProfilerObject = c->target,
      };
      c->api.disable (&p);
    }
  if (c->host)
    {
      CUpti_Profiler_Host_Deinitialize_Params p = {
        .structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE,
        .pHostObject = c->host,
      };
      c->api.host_deinit (&p);
    }
  g_free (c->chip);
  g_clear_pointer (&c->availability, g_bytes_unref);
  g_free (c->config);
  g_free (c->data);
  g_free (c);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbCuptiCounters, counters_free)

static void
counters_clear (gpointer p)
{
  g_free (((FbGpuCounters *) p)->range);
}

GArray *
fb_gpu_counters_array_new (void)
{
  GArray *a = g_array_new (FALSE, TRUE, sizeof (FbGpuCounters));
  g_array_set_clear_func (a, counters_clear);
  return a;
}

static FbCuptiCounters *
session_start (gpointer context, guint device_index, guint max_ranges, CUpti_ProfilerRange range,
               GError **error)
{
  g_return_val_if_fail (context != NULL && max_ranges > 0, NULL);
  g_autoptr(FbCuptiCounters) c = g_new0 (FbCuptiCounters, 1);
  if (!resolve (&c->api, error))
    return NULL;

  CUpti_Profiler_Initialize_Params init = { .structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
  if (failed (&c->api, c->api.profiler_init (&init), "cuptiProfilerInitialize", error))
    return NULL;
  CUpti_Device_GetChipName_Params chip = {
    .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE,
    .deviceIndex = device_index,
  };
  if (failed (&c->api, c->api.chip_name (&chip), "cuptiDeviceGetChipName", error))
    return NULL;
  c->chip = g_strdup (chip.pChipName);

  CUpti_Profiler_GetCounterAvailability_Params avail = {
    .structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE,
    .ctx = context,
  };
  if (failed (&c->api, c->api.availability (&avail), "cuptiProfilerGetCounterAvailability", error))
    return NULL;
  guint8 *image = g_malloc0 (avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = image;
  CUptiResult r = c->api.availability (&avail);
  c->availability = g_bytes_new_take (image, avail.counterAvailabilityImageSize);
  if (failed (&c->api, r, "cuptiProfilerGetCounterAvailability", error))
    return NULL;
  if (!host_setup (c, error))
    return NULL;

  CUpti_Profiler_Host_GetConfigImageSize_Params size = {
    .structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE,
    .pHostObject = c->host,
  };
  if (failed (&c->api, c->api.config_size (&size), "cuptiProfilerHostGetConfigImageSize", error))
    return NULL;
  c->config_size = size.configImageSize;
  c->config = g_malloc0 (c->config_size);
  CUpti_Profiler_Host_GetConfigImage_Params config = {
    .structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE,
    .pHostObject = c->host,
    .configImageSize = c->config_size,
    .pConfigImage = c->config,
  };
  if (failed (&c->api, c->api.config_image (&config), "cuptiProfilerHostGetConfigImage", error))
    return NULL;

  CUpti_RangeProfiler_Enable_Params enable = {
    .structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE,
    .ctx = context,
  };
  if (failed (&c->api, c->api.enable (&enable), "cuptiRangeProfilerEnable", error))
    return NULL;
  c->target = enable.pRangeProfilerObject;

  CUpti_RangeProfiler_GetCounterDataSize_Params dsize = {
    .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE,
    .pRangeProfilerObject = c->target,
    .pMetricNames = metrics,
    .numMetrics = N_METRICS,
    .maxNumOfRanges = max_ranges,
    .maxNumRangeTreeNodes = max_ranges,
  };
  if (failed (&c->api, c->api.data_size (&dsize), "cuptiRangeProfilerGetCounterDataSize", error))
    return NULL;
  c->data_size = dsize.counterDataSize;
  c->data = g_malloc0 (c->data_size);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params dinit = {
    .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE,
    .pRangeProfilerObject = c->target,
    .counterDataSize = c->data_size,
    .pCounterData = c->data,
  };
  if (failed (&c->api, c->api.data_init (&dinit), "cuptiRangeProfilerCounterDataImageInitialize",
              error))
    return NULL;

  CUpti_RangeProfiler_SetConfig_Params set = {
    .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE,
    .pRangeProfilerObject = c->target,
    .configSize = c->config_size,
    .pConfig = c->config,
    .counterDataImageSize = c->data_size,
    .pCounterDataImage = c->data,
    .range = range,
    /* The caller launches its kernels again for each pass, without CUPTI saving and restoring
     * their memory: each kernel finds the L2 as the kernels before it left it, as in the
     * inference itself. Under kernel replay the restore left part of a kernel's inputs in the
     * L2, and its DRAM bytes were neither the inference's nor a cold kernel's
     * (bench/gpu-cross-check/NOTES.md). */
    .replayMode = CUPTI_UserReplay,
    .maxRangesPerPass = max_ranges,
    .numNestingLevels = 1,
    .minNestingLevel = 1,
    .passIndex = 0,
    .targetNestingLevel = 1,
  };
  if (failed (&c->api, c->api.set_config (&set), "cuptiRangeProfilerSetConfig", error))
    return NULL;
  CUpti_RangeProfiler_Start_Params start = {
    .structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE,
    .pRangeProfilerObject = c->target,
  };
  if (failed (&c->api, c->api.start (&start), "cuptiRangeProfilerStart", error))
    return NULL;
  return g_steal_pointer (&c);
}

FbCuptiCounters *
fb_cupti_counters_start (gpointer context, guint device_index, guint max_ranges,
                         GError **error)
{
  return session_start (context, device_index, max_ranges, CUPTI_AutoRange, error);
}

FbCuptiCounters *
fb_cupti_counters_start_user (gpointer context, guint device_index, guint max_ranges,
                              GError **error)
{
  return session_start (context, device_index, max_ranges, CUPTI_UserRange, error);
}

gboolean
fb_cupti_counters_push (FbCuptiCounters *c, const char *name, GError **error)
{
  g_return_val_if_fail (c != NULL && !c->stopped && name != NULL, FALSE);
  CUpti_RangeProfiler_PushRange_Params push = {
    .structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE,
    .pRangeProfilerObject = c->target,
    .pRangeName = name,
  };
  return !failed (&c->api, c->api.push (&push), "cuptiRangeProfilerPushRange", error);
}

gboolean
fb_cupti_counters_pop (FbCuptiCounters *c, GError **error)
{
  g_return_val_if_fail (c != NULL && !c->stopped, FALSE);
  CUpti_RangeProfiler_PopRange_Params pop = {
    .structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE,
    .pRangeProfilerObject = c->target,
  };
  return !failed (&c->api, c->api.pop (&pop), "cuptiRangeProfilerPopRange", error);
}

/* Every range of the decoded image, evaluated by the host object. */
static GArray *
evaluate (FbCuptiCounters *c, GError **error)
{
  CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
    .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE,
    .pCounterDataImage = c->data,
    .counterDataImageSize = c->data_size,
  };
  if (failed (&c->api, c->api.data_info (&info), "cuptiRangeProfilerGetCounterDataInfo", error))
    return NULL;
  g_autoptr(GArray) out = fb_gpu_counters_array_new ();
  for (gsize i = 0; i < info.numTotalRanges; i++)
    {
      CUpti_RangeProfiler_CounterData_GetRangeInfo_Params range = {
        .structSize = CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE,
        .pCounterDataImage = c->data,
        .counterDataImageSize = c->data_size,
        .rangeIndex = i,
        .rangeDelimiter = "/",
      };
      if (failed (&c->api, c->api.range_info (&range), "cuptiRangeProfilerCounterDataGetRangeInfo",
                  error))
        return NULL;
      double values[N_METRICS] = { 0 };
      CUpti_Profiler_Host_EvaluateToGpuValues_Params eval = {
        .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE,
        .pHostObject = c->host,
        .pCounterDataImage = c->data,
        .counterDataImageSize = c->data_size,
        .rangeIndex = i,
        .ppMetricNames = metrics,
        .numMetrics = N_METRICS,
        .pMetricValues = values,
      };
      if (failed (&c->api, c->api.evaluate (&eval), "cuptiProfilerHostEvaluateToGpuValues", error))
        return NULL;
      FbGpuCounters k = {
        .range = g_strdup (range.rangeName ? range.rangeName : ""),
        .dram_read_bytes = values[0],
        .dram_write_bytes = values[1],
        .duration_ns = values[2],
        .sm_throughput = values[3] / 100.0,
      };
      g_array_append_val (out, k);
    }
  return g_steal_pointer (&out);
}

static void
put_blob (GByteArray *b, const void *data, gsize len)
{
  guint64 le = GUINT64_TO_LE ((guint64) len);
  g_byte_array_append (b, (const guint8 *) &le, 8);
  g_byte_array_append (b, data, len);
}

int
fb_cupti_counters_end_pass (FbCuptiCounters *c, GError **error)
{
  g_return_val_if_fail (c != NULL && !c->stopped, -1);
  CUpti_RangeProfiler_Stop_Params stop = {
    .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE,
    .pRangeProfilerObject = c->target,
  };
  if (failed (&c->api, c->api.stop (&stop), "cuptiRangeProfilerStop", error))
    return -1;
  c->stopped = TRUE;
  c->passes++;
  if (stop.isAllPassSubmitted)
    return 0;
  if (c->passes >= MAX_PASSES)
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
                   "counters incomplete: CUPTI still asked for another pass after %u",
                   c->passes);
      return -1;
    }
  CUpti_RangeProfiler_Start_Params start = {
    .structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE,
    .pRangeProfilerObject = c->target,
  };
  if (failed (&c->api, c->api.start (&start), "cuptiRangeProfilerStart", error))
    return -1;
  c->stopped = FALSE;
  return 1;
}

GArray *
fb_cupti_counters_stop (FbCuptiCounters *counters, const char *save_path, GError **error)
{
  g_return_val_if_fail (counters != NULL, NULL);
  g_autoptr(FbCuptiCounters) c = counters;
  int more = c->stopped ? 0 : fb_cupti_counters_end_pass (c, error);
  if (more < 0)
    return NULL;
  if (more > 0)
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
                   "counters incomplete: CUPTI asked for the kernels again after pass %u",
                   c->passes);
      return NULL;
    }
  CUpti_RangeProfiler_DecodeData_Params decode = {
    .structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE,
    .pRangeProfilerObject = c->target,
  };
  if (failed (&c->api, c->api.decode (&decode), "cuptiRangeProfilerDecodeData", error))
    return NULL;
  if (decode.numOfRangeDropped > 0)
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
                   "counters incomplete: CUPTI dropped %zu kernels' ranges (more kernels than "
                   "were planned for)", decode.numOfRangeDropped);
      return NULL;
    }

  if (save_path)
    {
      g_autoptr(GByteArray) file = g_byte_array_new ();
      gsize avail_len = 0;
      const void *avail = g_bytes_get_data (c->availability, &avail_len);
      g_byte_array_append (file, (const guint8 *) FILE_MAGIC, strlen (FILE_MAGIC));
      put_blob (file, c->chip, strlen (c->chip));
      put_blob (file, avail, avail_len);
      put_blob (file, c->data, c->data_size);
      if (!g_file_set_contents (save_path, (const char *) file->data, file->len, error))
        return NULL;
    }
  return evaluate (c, error);
}

static gboolean
get_blob (const guint8 **p, const guint8 *end, const guint8 **data, gsize *len)
{
  guint64 le;
  if (end - *p < 8)
    return FALSE;
  memcpy (&le, *p, 8);
  guint64 n = GUINT64_FROM_LE (le);
  *p += 8;
  if ((guint64) (end - *p) < n)
    return FALSE;
  *data = *p;
  *len = n;
  *p += n;
  return TRUE;
}

GArray *
fb_cupti_counters_replay_file (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents (path, &text, &len, error))
    return NULL;
  const guint8 *p = (const guint8 *) text, *end = p + len, *chip, *avail, *data;
  gsize chip_len, avail_len, data_len;
  if (len < strlen (FILE_MAGIC) || memcmp (p, FILE_MAGIC, strlen (FILE_MAGIC)) != 0)
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_INVALID,
                   "%s: not counter data saved by fusebench", path);
      return NULL;
    }
  p += strlen (FILE_MAGIC);
  if (!get_blob (&p, end, &chip, &chip_len) || !get_blob (&p, end, &avail, &avail_len) ||
      !get_blob (&p, end, &data, &data_len) || p != end || chip_len == 0 || data_len == 0)
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_INVALID,
                   "%s: the counter data is cut short or damaged", path);
      return NULL;
    }

  g_autoptr(FbCuptiCounters) c = g_new0 (FbCuptiCounters, 1);
  if (!resolve (&c->api, error))
    return NULL;
  c->chip = g_strndup ((const char *) chip, chip_len);
  c->availability = g_bytes_new (avail, avail_len);
  c->data = g_memdup2 (data, data_len);
  c->data_size = data_len;
  /* CUPTI refusing saved data means the data is at fault: the machine needs no GPU here. */
  GArray *out = host_setup (c, error) ? evaluate (c, error) : NULL;
  if (out == NULL && error && *error && (*error)->domain == FB_PROFILE_ERROR)
    {
      g_prefix_error (error, "%s: ", path);
      (*error)->code = FB_PROFILE_ERROR_INVALID;
    }
  return out;
}
