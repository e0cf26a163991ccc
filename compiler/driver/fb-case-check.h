/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Checking ONNX backend-test cases (a folder with model.onnx and test_data_set_*\/ holding
 * input_K.pb and output_K.pb): every data set is run on the interpreter or a target, with
 * shapes taken from its inputs, and every output compared at the project's tolerance.
 * `fusebench check` and the node-suite test run cases through this, in-process. */
#pragma once

#include "fb-backend.h"
#include "fb-pipeline.h"
#include "fb-tensor.h"

G_BEGIN_DECLS

typedef struct {
  gboolean ok;
  double   worst_abs;       /* over every output of every data set */
  double   worst_rel;
  char    *worst_output;    /* the output with the largest absolute error, or NULL */
  char    *failure;         /* when !ok: the first reason, one line */
  guint    n_compiled;      /* specializations made (one per distinct input shape signature) */
} FbCaseVerdict;

/* The test_data_set_* folders of case_dir, sorted; NULL with an error when there are none. */
GPtrArray *fb_case_data_sets    (const char *case_dir, GError **error);
/* input_K.pb (or input_K.npy) for each input of graph, each checked to fit its input. */
GPtrArray *fb_case_read_inputs  (const FbGraph *graph, const char *set_dir, GError **error);
/* Runs case_dir with options on backend (NULL: the interpreter; backend_options may be NULL)
 * and fills verdict, which the caller clears with fb_case_verdict_clear. */
void       fb_case_check        (const char *case_dir, const FbPipelineOptions *options,
                                 const FbBackend *backend,
                                 const FbBackendOptions *backend_options,
                                 FbCaseVerdict *verdict);
/* The same at a tolerance of the caller's (|actual - expected| <= atol + rtol * |expected|):
 * TF32 contractions on a GPU are checked at 1e-3 / 1e-3, strict float32 at 1e-4. */
void       fb_case_check_within (const char *case_dir, const FbPipelineOptions *options,
                                 const FbBackend *backend,
                                 const FbBackendOptions *backend_options, double rtol,
                                 double atol, FbCaseVerdict *verdict);
void       fb_case_verdict_clear (FbCaseVerdict *verdict);

G_END_DECLS
