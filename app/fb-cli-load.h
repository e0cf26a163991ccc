/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What `run` and `check` share: the target choice, a model loaded through the pass pipeline,
 * and input tensors read from files in the ONNX backend-test layout. */
#pragma once

#include "fb-cli.h"
#include "fb-graph.h"
#include "fb-pipeline.h"
#include "fb-backend.h"

G_BEGIN_DECLS

/* NULL and the targets of this build's backend table are fine; anything else is a
 * G_OPTION_ERROR (exit status 2) naming the targets there are. */
gboolean     fb_cli_check_target   (const char *target, GError **error);
/* --strict-float32 and --tf32-matmul ask for opposite things: a G_OPTION_ERROR when both are. */
gboolean     fb_cli_check_precision (const FbBackendOptions *options, GError **error);
/* Imports path and runs the pipeline with the PIPELINE options; the graph to run is
 * fb_pipeline_final() of the result. */
FbPipeline  *fb_cli_load_model     (const char *path, const FbCliPipelineArgs *args, GError **error);
/* The same, and *used (may be NULL) the options it ran with: the PIPELINE options as resolved,
 * the target's default layout and the pins --input-dir gave included. */
FbPipeline  *fb_cli_load_model_full (const char *path, const FbCliPipelineArgs *args,
                                     FbPipelineOptions **used, GError **error);
/* Shapes from the inputs: imports path with the options' pins, reads the inputs in dir and pins
 * every dynamic input of the model to the shape of its file (an explicit pin wins). */
gboolean     fb_cli_pin_from_input_dir (const char *path, const char *dir,
                                        FbPipelineOptions *options, GError **error);
/* Reads input_K.pb (or input_K.npy) for the K-th input of graph, and checks that each fits. */
GPtrArray   *fb_cli_read_input_dir (const FbGraph *graph, const char *dir, GError **error);
/* Reads one file per input from NAME=FILE specs; every input must be given once. */
GPtrArray   *fb_cli_read_named_inputs (const FbGraph *graph, char **specs, GError **error);
/* Splits "NAME=FILE" at its last '='; FALSE with a G_OPTION_ERROR naming the option. */
gboolean     fb_cli_split_spec     (const char *option, const char *spec, char **name, char **file,
                                    GError **error);

G_END_DECLS
