/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The profile: what one profiled run measured, per kernel, on one device, for one pipeline.
 *
 * Every target fills the same structure (the CPU timer today, CUPTI on the CUDA target), the
 * profile file is this structure written as JSON ("format": "fusebench-profile", "version": 1),
 * and the workbench paints it through fb_profile_attribute, which carries each kernel's cost to
 * the nodes of any stage through provenance. Nothing here knows GTK or a target. */
#pragma once

#include "fb-graph.h"
#include "fb-pipeline.h"

#include <gio/gio.h>

G_BEGIN_DECLS

#define FB_PROFILE_ERROR (fb_profile_error_quark ())
GQuark fb_profile_error_quark (void);

typedef enum {
  FB_PROFILE_ERROR_INVALID,      /* a profile file that is not one, or is damaged (names the key) */
  FB_PROFILE_ERROR_VERSION,      /* a format version this build cannot read */
  FB_PROFILE_ERROR_MISMATCH,     /* recorded for another model or another pipeline */
  FB_PROFILE_ERROR_UNAVAILABLE,  /* what was asked for cannot be measured here (says why) */
  FB_PROFILE_ERROR_FAILED,       /* the profiled run itself failed */
} FbProfileError;

typedef enum {
  FB_BOUND_MEMORY,
  FB_BOUND_COMPUTE,
} FbBound;

typedef enum {
  FB_BYTES_MODELED,              /* from the op registry's cost model */
  FB_BYTES_MEASURED,             /* from hardware counters (CUPTI's DRAM counters) */
} FbBytesSource;

typedef enum {
  FB_PROFILE_KERNEL_GENERATED,   /* code we generated */
  FB_PROFILE_KERNEL_LIBRARY,     /* a library call: oneDNN, cuDNN, cuBLASLt */
  FB_PROFILE_KERNEL_HOST,        /* work on the host between kernels (If, Loop, shapes) */
  FB_PROFILE_KERNEL_COPY,        /* a host-device copy */
} FbProfileKernelKind;

typedef struct {
  char      *name;               /* "AMD EPYC 9554 (2 threads)", "NVIDIA H200" */
  double     peak_gflops;        /* compute ceiling on the threads in use */
  double     peak_gbps;          /* memory ceiling, bytes read plus written */
  gboolean   ceilings_measured;  /* "ceilings": "measured" (TRUE) or "datasheet" */
} FbProfileDevice;

/* Hardware counters of one kernel, per call (medians); -1 where not measured. */
typedef struct {
  double     cycles;
  double     instructions;
  double     llc_misses;         /* last-level cache misses */
  double     sm_throughput;      /* CUDA: SM throughput as a share of peak, 0..1 */
  double     device_us;          /* CUDA: the kernel's device time in one inference by the range
                                    profiler's gpu__time_duration.sum, as Nsight Compute times
                                    it (kernel by kernel, the front end's part included); the
                                    timeline's spans are the tracer's, without that part */
} FbKernelCounters;

typedef struct {
  guint      id;                 /* the kernel's index in the plan; timeline entries name it */
  char      *name;               /* the kernel's symbol or library call ("fbk_Conv_12", "dnnl conv") */
  FbProfileKernelKind kind;    /* the file's key "kind": generated|library|host|copy */
  guint      stage_node;         /* id of the final-stage node it runs */
  GPtrArray *nodes;              /* char*: names of the original ONNX nodes it stands for */
  GArray    *node_shares;        /* double, parallel to nodes, adding up to 1: how the kernel's
                                    cost splits across them (by modeled cost when it runs more
                                    than one node; the file's key "node_shares") */
  guint      calls;              /* calls per inference */
  double     median_us;          /* per inference: all calls of one inference together */
  double     min_us;
  double     max_us;
  guint64    bytes_read;         /* per inference */
  guint64    bytes_written;
  FbBytesSource bytes_source;
  double     flops;              /* per inference, modeled */
  FbBound    bound;              /* where its arithmetic intensity sits against the ceilings */
  double     roofline_share;     /* achieved / attainable at its intensity, 0..1 */
  GArray    *worker_busy_us;     /* double per worker thread (median per inference); empty
                                    when the kernel ran on one thread or the target has none */
  FbKernelCounters counters;
} FbProfileKernel;

typedef struct {
  char      *node;               /* original ONNX node name */
  char      *by;                 /* the pass that removed it ("fold-constants") */
} FbProfileFolded;

typedef struct {
  guint      kernel;             /* FbProfileKernel.id */
  double     start_us;           /* from the start of the inference */
  double     end_us;
  guint      lane;               /* worker thread, or CUDA stream */
  const char *function;          /* cuda: the device function it ran (interned: the file's key
                                    "function", where known), cuDNN's and cuBLASLt's too; NULL
                                    for a copy or a memset, and on the cpu */
} FbProfileSpan;

/* How a GPU profile was timed (the file's key "timing"; absent from profiles made before it and
 * from cpu ones): the tracer slows what it watches (ResNet-50 on an H200: 0.598 ms a replay
 * under CUPTI, 0.507 ms without), so the wall, the busy share and the idle come from replays it
 * did not watch, timed between CUDA events as `run --iterations` times them, and only the
 * kernels' own durations from replays it did. */
typedef struct {
  guint      untraced_iterations;  /* replays timed without the tracer; 0: none recorded */
  double     untraced_median_ms;   /* what wall_ms holds when recorded */
  double     untraced_min_ms;
  double     untraced_max_ms;
  double     noise_ms;             /* the untraced replays' interquartile range */
  double     traced_median_ms;     /* the traced replays between the same CUDA events */
  double     replay_launch_ms;     /* untraced: a replay alone less a replay among others
                                      launched back to back (its launch not overlapped); 0
                                      when kernels are launched one by one */
} FbProfileTiming;

/* DRAM traffic per inference from one counter range over replays launched back to back, as
 * `run --iterations` launches them (the file's key "dram_per_inference"; absent where not
 * measured): what reached DRAM in steady state, which is what Nsight Compute counts over the
 * same replays. A kernel's own range writes back what the kernel wrote by its end, so the
 * kernels' write figures add up to about every byte they write, most of which, inside a
 * replay, stays in the L2 for the next kernel: on an H200, ResNet-50's kernels sum to 40 MB
 * written, while about 14 MB a replay reaches DRAM (13.9 counted so, 13.2 by Nsight Compute
 * over the same replays). */
typedef struct {
  guint      replays;              /* replays inside the range; 0: not measured */
  double     read_bytes;           /* per replay */
  double     written_bytes;
} FbProfileDram;

typedef struct {
  gatomicrefcount ref_count;
  char      *model;              /* the model file's base name */
  char      *model_digest;       /* SHA-256 of the original nodes (names, op types, in order):
                                    the key "model_digest"; tells another model apart */
  char      *target;             /* "cpu", "cuda" */
  FbProfileDevice device;
  FbPipelineOptions *pipeline;   /* the toggles it was compiled with */
  guint      iterations;
  double     wall_median_ms;
  double     wall_min_ms;
  double     wall_max_ms;
  double     busy_ms;            /* median time kernels were running, per inference */
  GPtrArray *kernels;            /* FbProfileKernel*, plan order */
  GArray    *folded;             /* FbProfileFolded */
  GArray    *timeline;           /* FbProfileSpan, one inference */
  GPtrArray *diagnosis;          /* char*, one line each, most important first */
  char      *counters_note;      /* why hardware counters are missing or partial, else NULL */
  FbProfileTiming timing;        /* zeros where the profile records no untraced replays */
  FbProfileDram dram;            /* zeros where not measured */
} FbProfile;

FbProfile       *fb_profile_new           (void);
FbProfile       *fb_profile_ref           (FbProfile *profile);
void             fb_profile_unref         (FbProfile *profile);
FbProfileKernel *fb_profile_kernel_new    (void);
void             fb_profile_kernel_free   (FbProfileKernel *kernel);

/* The tracer's overhead: the traced median over the untraced one, less 1 (0.18: 18 % slower
 * under the tracer); 0 where the profile has no untraced figures. */
double           fb_profile_timing_overhead (const FbProfile *profile);
/* One line on how the profile was timed, what the command line prints and the window shows:
 * "timing: wall from 100 untraced replays (CUDA events), median 0.507 ms ± 0.004; traced
 * 0.598 ms (tracer +18 %, kernel times only)"; NULL where it records no untraced figures. */
char            *fb_profile_timing_describe (const FbProfile *profile);
/* One line on the DRAM traffic of whole replays beside the kernels' sum (FbProfileDram); NULL
 * where the profile did not count whole replays. */
char            *fb_profile_dram_describe   (const FbProfile *profile);

/* The file: JSON as described above, written atomically (a temporary file renamed into place);
 * a Chrome/Perfetto trace of the timeline (ph "X" events, args.nodes). */
FbProfile       *fb_profile_load          (const char *path, GError **error);
FbProfile       *fb_profile_load_bytes    (GBytes *bytes, const char *what, GError **error);
gboolean         fb_profile_save          (const FbProfile *profile, const char *path,
                                           GError **error);
char            *fb_profile_to_json       (const FbProfile *profile);
gboolean         fb_profile_save_chrome_trace (const FbProfile *profile, const char *path,
                                           GError **error);

/* The digest fb_profile.model_digest holds, for a model. */
char            *fb_profile_model_digest  (const FbModel *model);
/* TRUE when profile was recorded for model with these toggles; else FB_PROFILE_ERROR_MISMATCH
 * saying what differs (the model, a pass, a fusion, the layout, an input shape). */
gboolean         fb_profile_matches       (const FbProfile *profile, const FbModel *model,
                                           const FbPipelineOptions *options, GError **error);
/* options with the input shapes profile was recorded with in place of their own: the toggles to
 * show a profile with on the model it was made from, whose stage 0 (unpinned) is import. A
 * profile made on a dynamic model ran with concrete shapes (--input-shape, or its inputs' own);
 * those pins must fit the symbolic dimensions of import, else NULL and
 * FB_PROFILE_ERROR_MISMATCH saying which does not. The other toggles are left as they are:
 * fb_profile_matches still decides whether the profile belongs to them. */
FbPipelineOptions *fb_profile_pinned_options (const FbProfile *profile, const FbGraph *import,
                                              const FbPipelineOptions *options, GError **error);

/* A kernel's or node's cost as painted on one stage's graph. */
typedef struct {
  double     time_us;            /* median per inference */
  double     share;              /* of the profile's total kernel time, 0..1 */
  double     bytes;              /* read plus written */
  double     flops;
  double     gbps;               /* achieved */
  double     gflops;             /* achieved */
  double     roofline_share;     /* time-weighted over the kernels it takes from */
  FbBytesSource bytes_source;    /* MEASURED only when every contributing kernel measured it */
  gboolean   split;              /* part of a kernel's cost, split by the cost model */
  guint      n_kernels;          /* kernels it takes cost from */
} FbNodeCost;

/* The cost of every node of graph (a stage's graph, any stage) that carries any: a new table
 * node id (GUINT_TO_POINTER) -> FbNodeCost*. On the final stage each kernel lands on its
 * stage_node; on other stages each original node's cost (its share of each kernel) lands on the
 * nodes whose provenance holds it, divided among them when several do, so that on every stage
 * the costs add up to the profile's total kernel time. Nodes inside FUSED bodies are not keys;
 * the fused node is. */
GHashTable      *fb_profile_attribute     (const FbProfile *profile, const FbGraph *graph);
/* Total kernel time per inference, in µs (the sum of the kernels' medians). */
double           fb_profile_total_us      (const FbProfile *profile);
/* Original node name -> its attributed time in µs (double*), a new table. */
GHashTable      *fb_profile_original_costs(const FbProfile *profile);

/* Fills kernel->node_shares from the modeled cost (fb_node_cost, at the device's ceilings) of
 * each of its original nodes as import_graph (stage 0) has them; equal parts where nothing is
 * modeled. A target calls it for every kernel it measured. */
void             fb_profile_kernel_split_by_cost (FbProfileKernel *kernel,
                                                  const FbGraph *import_graph,
                                                  const FbProfileDevice *device);
/* "generated", "library", "host", "copy": the file's names of the kinds. */
const char      *fb_profile_kernel_kind_name (FbProfileKernelKind kind);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbProfile, fb_profile_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbProfileKernel, fb_profile_kernel_free)

/* What a timeline lane of the profile is ("thread", "stream"): its target's word, from the
 * backend table, or "lane" for a target this build lacks. */
const char *fb_profile_lane_word (const FbProfile *profile);
/* Whether the profile was traced on a device (its target has FbBackend.device_trace): its wall
 * time is the device's, and its idle time is read from the utilization lines. */
gboolean    fb_profile_traced_device (const FbProfile *profile);

G_END_DECLS
