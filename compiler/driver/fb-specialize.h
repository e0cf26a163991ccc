/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shapes from the inputs: a model with dynamic dimensions, specialized to the shapes of the
 * tensors it is run on as if they had been pinned with --input-shape, and kept per input shape
 * signature so that a second run with the same shapes compiles nothing and another shape
 * compiles once more. `run`, `check`, `passes`, `compile` and `profile` use it. */
#pragma once

#include "fb-pipeline.h"
#include "fb-backend.h"

G_BEGIN_DECLS

typedef struct _FbSpecializer FbSpecializer;

/* Imports path once with the options' own pins, to learn its inputs. backend (NULL: the
 * interpreter runs it): every specialization is also compiled for that target, with
 * backend_options (may be NULL). */
FbSpecializer *fb_specializer_new        (const char *path, const FbPipelineOptions *options,
                                          const FbBackend *backend,
                                          const FbBackendOptions *backend_options,
                                          GError **error);
void           fb_specializer_free       (FbSpecializer *spec);
/* The model as imported without specializing (borrowed): the graph whose inputs files are read
 * and checked against. */
const FbGraph *fb_specializer_graph      (FbSpecializer *spec);
/* The pipeline (and, on a target, what it compiled) for the shapes of inputs, made or taken from
 * the cache; both borrowed, valid until fb_specializer_free. inputs NULL: the model as pinned by
 * the options alone. */
gboolean       fb_specializer_prepare    (FbSpecializer *spec, GPtrArray *inputs,
                                          FbPipeline **pipeline, FbCompiled **compiled,
                                          GError **error);
/* The options the specialization for inputs runs with: the specializer's, every dynamic input
 * pinned to the shape of its tensor (an explicit pin wins). New; what a profile records. */
FbPipelineOptions *fb_specializer_options_for (FbSpecializer *spec, GPtrArray *inputs);
/* How many specializations were made so far (cache misses). */
guint          fb_specializer_n_compiled (FbSpecializer *spec);

/* Adds to pins (char* -> FbShape*, owned) the shape of every input of graph whose shape is not
 * static, taken from inputs (FbTensor*, graph input order; NULL entries are skipped). Pins
 * already there are kept: an explicit --input-shape wins. */
void           fb_pins_from_inputs       (const FbGraph *graph, GPtrArray *inputs, GHashTable *pins);
/* "name=2x3;other=5" over the inputs whose shape is not static; "" when all are static. */
char          *fb_input_signature        (const FbGraph *graph, GPtrArray *inputs);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbSpecializer, fb_specializer_free)

G_END_DECLS
