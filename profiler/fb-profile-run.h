/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Making a profile: compile the final stage for a target, run it with timing on, and fill an
 * FbProfile (fb-profile.h). The command line (`fusebench profile`) and the workbench's Profile
 * button both come here, so a profile made either way is the same. Safe to call from a worker
 * thread: it reads the stages through the references the caller holds and nothing else of the
 * pipeline. */
#pragma once

#include "fb-profile.h"
#include "fb-backend.h"

G_BEGIN_DECLS

typedef struct {
  guint      iterations;         /* timed inferences; 0: 50 */
  guint      warmup;             /* untimed inferences first; 0: 5 */
  gboolean   counters;           /* hardware counters (perf_event_open on the CPU, CUPTI's range
                                    profiler on CUDA) */
  guint      n_threads;          /* 0: the target's default */
  guint64    seed;               /* for the random inputs made when inputs is NULL */
  gboolean   eager;              /* cuda: profile kernel-by-kernel launches instead of the
                                    replay of the captured CUDA graph */
  gboolean   strict_float32;     /* cuda: no TF32 anywhere */
  gboolean   tf32_matmul;        /* cuda: matrix products in TF32 too */
  FbPlan    *plan;               /* the final stage as the target's lower made it already (the
                                    window's code view): compiled instead of lowering again;
                                    NULL: lowered here */
} FbProfileOptions;

/* Called in the profiling thread: fraction done (0..1) and what it is doing now. */
typedef void (*FbProfileProgress) (double fraction, const char *what, gpointer data);

/* Whether backend can be profiled: it compiles and offers host-clock timing or a traced device
 * (FbBackend.host_timing, .device_trace); and whether its bundles can be. */
gboolean   fb_profile_supports         (const FbBackend *backend);
gboolean   fb_profile_supports_bundles (const FbBackend *backend);

/* Profiles the last stage of stages (FbStage*, the whole pipeline in order, as
 * fb_pipeline_dup_stages gives it: the earlier stages say which pass folded which original
 * node) on backend (FB_PROFILE_ERROR_UNAVAILABLE for a target the profiler cannot instrument,
 * or a machine that lacks the device). inputs: FbTensor* in graph input order, or NULL for
 * seeded random inputs of the graph's shapes. pipeline_options is recorded in the profile.
 * Cancellable between inferences (G_IO_ERROR_CANCELLED). */
FbProfile *fb_profile_run (const FbBackend *backend, GPtrArray *stages,
                           const FbPipelineOptions *pipeline_options, GPtrArray *inputs,
                           const FbProfileOptions *options, GCancellable *cancellable,
                           FbProfileProgress progress, gpointer data, GError **error);

/* The same for a bundle folder compiled for backend elsewhere: no stages, so no folded nodes,
 * each kernel's cost split equally over its original nodes, and no model digest (the profile
 * names the model the bundle's manifest gives). */
FbProfile *fb_profile_run_bundle (const FbBackend *backend, const char *path, GPtrArray *inputs,
                                  const FbProfileOptions *options, GCancellable *cancellable,
                                  FbProfileProgress progress, gpointer data, GError **error);

G_END_DECLS
