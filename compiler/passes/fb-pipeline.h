/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The pass pipeline: one flat named list of passes, a snapshot (Stage) after each, the diff
 * between consecutive stages keyed on stable node ids, and toggles that re-run only the stages
 * that change. The app and the command line use this same API.
 *
 * Threads: one thread runs a pipeline at a time (fb_pipeline_run, and every other call on the
 * same pipeline, belong to that thread while it runs). A stage never changes once made and is
 * reference counted, so other threads read stages through the references they took with
 * fb_pipeline_dup_stages before the run started: a re-run drops the pipeline's own references
 * to the stages it replaces, never the readers'. */
#pragma once

#include "fb-graph.h"

#include <gio/gio.h>

G_BEGIN_DECLS

#define FB_PIPELINE_ERROR (fb_pipeline_error_quark ())
GQuark fb_pipeline_error_quark (void);

typedef enum {
  FB_PIPELINE_ERROR_OPTION,      /* an unknown pass name, node name or layout */
  FB_PIPELINE_ERROR_PASS,        /* a pass failed, or broke an invariant (the verifier) */
  FB_PIPELINE_ERROR_CANCELLED,
  FB_PIPELINE_ERROR_UNSUPPORTED, /* the model loaded, but has nodes this project cannot compute
                                    (FbModel.problems): only its import stage exists */
} FbPipelineError;

typedef enum {
  FB_LAYOUT_NCHW,
  FB_LAYOUT_NHWC,
} FbLayout;

typedef struct {
  GPtrArray  *disabled_passes;   /* char*, pass names (--disable) */
  GPtrArray  *no_fuse;           /* char*, node names kept out of every fusion (--no-fuse) */
  FbLayout    layout;            /* --layout */
  GHashTable *input_shapes;      /* char* -> FbShape* (--input-shape) */
} FbPipelineOptions;

FbPipelineOptions *fb_pipeline_options_new  (void);
FbPipelineOptions *fb_pipeline_options_copy (const FbPipelineOptions *options);
void               fb_pipeline_options_free (FbPipelineOptions *options);
/* The options as the PIPELINE arguments that make them ("--disable fold-constants --layout nhwc
 * --input-shape x=2x3"): the layout always, the lists sorted, so that equal options read the
 * same. What a bundle's manifest records as its "pipeline". */
char              *fb_pipeline_options_to_args (const FbPipelineOptions *options);

typedef enum {
  FB_CHANGE_ADDED,               /* in this stage, not in the previous one */
  FB_CHANGE_REMOVED,             /* in the previous stage, gone (folded, removed, fused) */
  FB_CHANGE_CHANGED,             /* same id, different op, inputs or attributes */
  FB_CHANGE_FUSED,               /* removed because it became part of fused_into */
} FbChangeKind;

typedef struct {
  guint        node_id;
  FbChangeKind kind;
  guint        fused_into;       /* for FB_CHANGE_FUSED: the id of the fused node, else 0 */
  guint        went_to;          /* for FB_CHANGE_REMOVED: the node that now carries its
                                    provenance (the consumer of a folded node, the twin a
                                    duplicate merged into), else 0 */
} FbChange;

typedef struct {
  gatomicrefcount ref_count;     /* fb_stage_ref / fb_stage_unref; the pipeline holds one */
  char     *name;                /* "import", a pass name, or "final" */
  FbGraph  *graph;               /* the graph after this pass (weights shared with others) */
  gboolean  enabled;             /* FALSE when the pass was disabled: graph equals the previous */
  double    wall_ms;             /* time the pass took */
  guint     nodes_before;
  guint     nodes_after;
  GArray   *changes;             /* FbChange, against the previous stage */
  char     *summary;             /* one line of what changed ("folded 12 BatchNormalization") */
} FbStage;

typedef struct _FbPipeline FbPipeline;

/* Any thread may take or drop a reference; the last one frees the stage and its graph. */
FbStage     *fb_stage_ref             (FbStage *stage);
void         fb_stage_unref           (FbStage *stage);

/* Names of the passes, in pipeline order (NULL-terminated, static). */
const char * const *fb_pipeline_pass_names (void);
/* Takes ownership of the imported graph (stage 0, "import"). */
FbPipeline  *fb_pipeline_new          (FbGraph *imported);
void         fb_pipeline_free         (FbPipeline *pipeline);
/* Runs (or re-runs after a change of options) the pipeline. Stages whose pass and inputs did not
 * change are kept: the same FbStage objects. progress, when given, is called after every stage
 * with (done, total), in the running thread. A re-run drops the pipeline's references to the
 * stages it recomputes (from fb_pipeline_first_stale on) and makes new ones; the stages before
 * stay untouched while it runs. A run that fails or is cancelled (FB_PIPELINE_ERROR_CANCELLED)
 * keeps the stages it finished, made with the new options, and the next run goes on from the
 * first one it lacks, whatever options it is given. */
gboolean     fb_pipeline_run          (FbPipeline *pipeline, const FbPipelineOptions *options,
                                       GCancellable *cancellable,
                                       void (*progress) (guint done, guint total, gpointer data),
                                       gpointer data, GError **error);
/* The index of the first stage a run with options would recompute; fb_pipeline_n_stages when it
 * would recompute none. Lets a caller keep showing the stages before it during a re-run. */
guint        fb_pipeline_first_stale  (FbPipeline *pipeline, const FbPipelineOptions *options);
guint        fb_pipeline_n_stages     (FbPipeline *pipeline);
/* Borrowed: valid until the next run or fb_pipeline_free, for the thread that runs it. */
FbStage     *fb_pipeline_stage        (FbPipeline *pipeline, guint index);
FbStage     *fb_pipeline_stage_by_name(FbPipeline *pipeline, const char *name);
/* A new array (g_ptr_array_unref) with a reference to every current stage, in order: the stages
 * stay valid and readable on any thread after the call returns, whatever runs later. */
GPtrArray   *fb_pipeline_dup_stages   (FbPipeline *pipeline);
/* The graph of the last stage ("final"), borrowed as fb_pipeline_stage; NULL when the last run
 * did not finish. */
FbGraph     *fb_pipeline_final        (FbPipeline *pipeline);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbStage, fb_stage_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbPipeline, fb_pipeline_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbPipelineOptions, fb_pipeline_options_free)

G_END_DECLS
