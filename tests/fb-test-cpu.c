/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-test-cpu.h"
#include "fb-bundle.h"
#include "fb-codegen.h"
#include "fb-compare.h"
#include "fb-infer.h"
#include "fb-interp.h"
#include "fb-lower.h"
#include "fb-onnx-import.h"
#include "fb-pipeline.h"

void
tc_init (int *argc, char ***argv)
{
  g_test_init (argc, argv, NULL);
  /* Kernels compiled by the tests stay in the build tree. */
  const char *build_dir = g_getenv ("G_TEST_BUILDDIR");
  /* Run by hand, outside meson, a test must not litter the folder it was started from. */
  g_autofree char *cache = build_dir ? g_build_filename (build_dir, "test-cache", NULL)
                                     : g_dir_make_tmp ("fusebench-test-cache-XXXXXX", NULL);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
}

void
tc_finish (FbGraph *graph, FbNode *node, FbTensor **inputs, guint const_mask)
{
  for (guint i = 0; i < node->n_inputs; i++)
    {
      FbValue *v = node->inputs[i];
      if (inputs[i] == NULL)
        {
          node->inputs[i] = NULL;
          continue;
        }
      v->dtype = inputs[i]->dtype;
      v->shape = fb_tensor_shape (inputs[i]);
      if (const_mask & (1u << i))
        v->constant = fb_tensor_ref (inputs[i]);
      else
        {
          v->is_input = TRUE;
          g_ptr_array_add (graph->inputs, v);
        }
    }
  for (guint i = 0; i < node->n_outputs; i++)
    if (node->outputs[i])
      {
        node->outputs[i]->is_output = TRUE;
        g_ptr_array_add (graph->outputs, node->outputs[i]);
      }
  g_autoptr(GError) error = NULL;
  g_assert_true (fb_infer_graph (graph, &error));
  g_assert_no_error (error);
}

GPtrArray *
tc_inputs (FbGraph *graph, FbNode *node, FbTensor **inputs, guint const_mask)
{
  GPtrArray *in = g_ptr_array_new ();
  for (guint i = 0; i < node->n_inputs; i++)
    if (inputs[i] && !(const_mask & (1u << i)))
      g_ptr_array_add (in, inputs[i]);
  return in;
}

void
tc_assert_agree (const char *what, GPtrArray *expected, GPtrArray *actual)
{
  g_assert_cmpuint (actual->len, ==, expected->len);
  for (guint i = 0; i < actual->len; i++)
    {
      FbCompare cmp;
      fb_tensor_compare (g_ptr_array_index (expected, i), g_ptr_array_index (actual, i),
                         FB_COMPARE_RTOL, FB_COMPARE_ATOL, &cmp);
      if (!cmp.ok)
        g_error ("output %u of %s against the interpreter: %s", i, what, cmp.reason);
      fb_compare_clear (&cmp);
    }
}

void
tc_check (FbGraph *graph, GPtrArray *inputs)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) expected = fb_interp_run (graph, inputs, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(FbCpuModule) m = fb_cpu_compile (graph, 2, &error);
  g_assert_no_error (error);
  g_autoptr(GPtrArray) actual = fb_cpu_module_run (m, inputs, NULL, &error);
  g_assert_no_error (error);
  tc_assert_agree (((FbNode *) g_ptr_array_index (graph->nodes, 0))->name, expected, actual);
}

GPtrArray *
tc_seeded_inputs (const FbGraph *graph, guint32 seed)
{
  GPtrArray *inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      const FbValue *v = g_ptr_array_index (graph->inputs, i);
      g_autoptr(GError) error = NULL;
      FbTensor *t = fb_tensor_new (FB_DTYPE_FLOAT32, v->shape.rank, v->shape.dim, &error);
      g_assert_no_error (error);
      float *data = fb_tensor_data_mut (t);
      for (gsize j = 0; j < fb_tensor_nbytes (t) / sizeof (float); j++)
        data[j] = (float) g_rand_double_range (rand, -1, 1);
      g_ptr_array_add (inputs, t);
    }
  return inputs;
}

void
tc_check_module (const char *what, FbCpuModule *m, const FbGraph *graph, GPtrArray *inputs)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) reference = fb_interp_run (graph, inputs, NULL, &error);
  g_assert_no_error (error);
  for (int run = 0; run < 2; run++)
    {
      g_autoptr(GPtrArray) outputs = fb_cpu_module_run (m, inputs, NULL, &error);
      g_assert_no_error (error);
      g_autofree char *which = g_strdup_printf ("%s, run %d", what, run + 1);
      tc_assert_agree (which, reference, outputs);
    }
}

static gboolean
same_concatenation (const FbPlan *plan, guint a, guint b)
{
  int64_t ignored;
  const FbBuffer *x = fb_plan_buffer (plan, a), *y = fb_plan_buffer (plan, b);
  return (x->slice_of >= 0 || y->slice_of >= 0) &&
         fb_plan_slice_root (plan, a, &ignored) == fb_plan_slice_root (plan, b, &ignored);
}

void
tc_check_arena (const FbPlan *plan)
{
  for (guint i = 0; i < plan->buffers->len; i++)
    for (guint j = i + 1; j < plan->buffers->len; j++)
      {
        const FbBuffer *a = fb_plan_buffer (plan, i), *b = fb_plan_buffer (plan, j);
        if (a->alias >= 0 || b->alias >= 0 || a->offset < 0 || b->offset < 0 ||
            a->kind == FB_BUF_CONST || b->kind == FB_BUF_CONST || a->first_use < 0 ||
            b->first_use < 0 || same_concatenation (plan, i, j))
          continue;
        gboolean bytes = a->offset < b->offset + b->nbytes && b->offset < a->offset + a->nbytes;
        gboolean life = a->first_use < b->last_use && b->first_use < a->last_use;
        if (bytes && life)
          g_error ("buffers %s and %s share bytes while both are alive", a->name, b->name);
        g_assert_cmpint (a->offset + a->nbytes, <=, plan->arena_bytes);
      }
}

void
tc_node (FbGraph *graph, FbNode *node, FbTensor **inputs, guint const_mask)
{
  tc_finish (graph, node, inputs, const_mask);
  g_autoptr(GPtrArray) in = tc_inputs (graph, node, inputs, const_mask);
  tc_check (graph, in);
}

/* A program that runs an exported library's model twice on one input file and writes its
 * n_outputs outputs one after the other into another. */
static char *
shared_library_program (guint n_outputs)
{
  GString *s = g_string_new ("#include \"fb-model.h\"\n#include <stdio.h>\n#include <stdlib.h>\n"
                             "int main (int argc, char **argv) {\n"
                             "  void *in = malloc (FB_MODEL_INPUT_0_BYTES);\n"
                             "  FILE *f = fopen (argv[1], \"rb\");\n"
                             "  if (!f || fread (in, 1, FB_MODEL_INPUT_0_BYTES, f) != "
                             "FB_MODEL_INPUT_0_BYTES) return 3;\n"
                             "  fclose (f);\n"
                             "  const void *ins[1] = { in };\n");
  g_string_append_printf (s, "  void *outs[%u] = {", n_outputs);
  for (guint i = 0; i < n_outputs; i++)
    g_string_append_printf (s, "%s malloc (FB_MODEL_OUTPUT_%u_BYTES)", i ? "," : "", i);
  g_string_append (s, " };\n"
                      "  for (int run = 0; run < 2; run++)\n"
                      "    if (fb_model_run (ins, outs) != 0) return 4;\n"
                      "  f = fopen (argv[2], \"wb\");\n");
  for (guint i = 0; i < n_outputs; i++)
    g_string_append_printf (s, "  fwrite (outs[%u], 1, FB_MODEL_OUTPUT_%u_BYTES, f);\n", i, i);
  g_string_append (s, "  return fclose (f) != 0; }\n");
  return g_string_free (s, FALSE);
}

void
tc_check_shared_library (const char *dir, const char *bundle, const FbGraph *graph,
                         GPtrArray *inputs)
{
  g_autoptr(GError) error = NULL;
  g_assert_cmpuint (inputs->len, ==, 1);
  g_autoptr(GPtrArray) expected = fb_interp_run (graph, inputs, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *lib = g_build_filename (bundle, "lib", NULL);
  g_autofree char *src = g_build_filename (dir, "main.c", NULL);
  g_autofree char *exe = g_build_filename (dir, "main", NULL);
  g_autofree char *in = g_build_filename (dir, "input.bin", NULL);
  g_autofree char *out = g_build_filename (dir, "output.bin", NULL);
  g_autofree char *program = shared_library_program (expected->len);
  g_assert_true (g_file_set_contents (src, program, -1, NULL));
  FbTensor *x = g_ptr_array_index (inputs, 0);
  g_assert_true (g_file_set_contents (in, fb_tensor_data (x), fb_tensor_nbytes (x), NULL));
  g_autofree char *rpath = g_strdup_printf ("-Wl,-rpath,%s", lib);
  g_autofree char *incl = g_strdup_printf ("-I%s", lib);
  g_autofree char *libdir = g_strdup_printf ("-L%s", lib);
  const char *cc_argv[] = { "cc", "-o", exe, src, incl, libdir, rpath, "-lfbmodel", NULL };
  int status;
  g_autofree char *err = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) cc_argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               NULL, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("cc failed: %s", err);
  const char *run_argv[] = { exe, in, out, NULL };
  g_assert_true (g_spawn_sync (NULL, (char **) run_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                               NULL, &status, &error));
  g_assert_true (g_spawn_check_wait_status (status, &error));
  g_assert_no_error (error);

  char *contents;
  gsize len;
  g_assert_true (g_file_get_contents (out, &contents, &len, NULL));
  g_autoptr(GBytes) bytes = g_bytes_new_take (contents, len);
  g_autoptr(GPtrArray) actual = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  gsize offset = 0;
  for (guint i = 0; i < expected->len; i++)
    {
      FbTensor *e = g_ptr_array_index (expected, i);
      g_assert_cmpuint (offset + fb_tensor_nbytes (e), <=, len);
      g_autoptr(GBytes) slice = g_bytes_new_from_bytes (bytes, offset, fb_tensor_nbytes (e));
      g_ptr_array_add (actual, fb_tensor_new_for_bytes (e->dtype, e->rank, e->dims, slice, &error));
      g_assert_no_error (error);
      offset += fb_tensor_nbytes (e);
    }
  g_assert_cmpuint (offset, ==, len);
  tc_assert_agree ("the exported library", expected, actual);
}

FbGraph *
tc_load (const char *folder, const char *name)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *file = g_strconcat (name, ".onnx", NULL);
  const char *srcdir = g_getenv ("G_TEST_SRCDIR") ? g_getenv ("G_TEST_SRCDIR") : ".";
  g_autofree char *path = g_build_filename (srcdir, folder, file, NULL);
  FbGraph *graph = fb_onnx_import_file (path, NULL, &error);
  g_assert_no_error (error);
  return graph;
}

FbPipeline *
tc_pipeline (const char *folder, const char *name, FbLayout layout, const char *skip)
{
  g_autoptr(GError) error = NULL;
  FbGraph *graph = tc_load (folder, name);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = layout;
  if (skip)
    g_ptr_array_add (options->disabled_passes, g_strdup (skip));
  FbPipeline *p = fb_pipeline_new (graph);
  g_assert_true (fb_pipeline_run (p, options, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  return p;
}

void
tc_check_compiled (const char *what, const FbGraph *graph, TcPlanCount count, guint expect,
                   gboolean bundle, gboolean library)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (graph, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  fb_plan_layout_memory (plan);
  g_assert_cmpuint (count (plan), ==, expect);
  tc_check_arena (plan);

  g_autoptr(GPtrArray) inputs = tc_seeded_inputs (graph, 1202);
  g_autoptr(GPtrArray) objects = fb_codegen_plan (plan, 2, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(FbCpuModule) m = fb_cpu_module_new (plan, objects, 2, &error);
  g_assert_no_error (error);
  tc_check_module (what, m, graph, inputs);
  if (!bundle)
    return;

  g_autofree char *dir = g_dir_make_tmp ("fusebench-test-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *path = g_build_filename (dir, "model.fusebench", NULL);
  FbBundleOptions options = { .source = what, .shared_library = library,
                              .write_library = library ? fb_cpu_write_shared_library : NULL };
  g_assert_true (fb_bundle_write (path, plan, objects, graph, &options, &error));
  g_assert_no_error (error);
  g_autoptr(FbCpuModule) loaded = fb_cpu_bundle_load (path, 2, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (count (fb_cpu_module_plan (loaded)), ==, expect);
  g_autofree char *loaded_what = g_strconcat (what, " (bundle)", NULL);
  tc_check_module (loaded_what, loaded, graph, inputs);
  if (library)
    tc_check_shared_library (dir, path, graph, inputs);
  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_true (g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL));
}

GPtrArray *
tc_plan_convolutions (JsonParser *parser, const char *member)
{
  GPtrArray *found = g_ptr_array_new ();
  JsonArray *kernels = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)),
                                                     "kernels");
  for (guint k = 0; k < json_array_get_length (kernels); k++)
    {
      JsonArray *phases = json_object_get_array_member (json_array_get_object_element (kernels, k),
                                                        "phases");
      for (guint ph = 0; phases && ph < json_array_get_length (phases); ph++)
        {
          JsonObject *phase = json_array_get_object_element (phases, ph);
          JsonObject *conv = json_object_has_member (phase, "convolution")
                               ? json_object_get_object_member (phase, "convolution") : NULL;
          if (conv && (member == NULL || json_object_has_member (conv, member)))
            g_ptr_array_add (found, conv);
        }
    }
  return found;
}
