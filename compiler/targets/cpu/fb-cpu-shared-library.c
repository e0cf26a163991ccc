/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The shared library of a bundle: the kernels' objects and a generated driver linked by the
 * system's C compiler driver (cc) into lib/libfbmodel.so, with lib/fb-model.h describing
 * fb_model_run and the tensors it takes and gives. */
#include "fb-cpu.h"
#include "fb-codegen.h"
#include "fb-dnnl-conv-text.h"

#include <glib/gstdio.h>

static char *
c_comment_safe (const char *s)
{
  GString *out = g_string_new (NULL);
  for (const char *p = s; *p; p++)
    g_string_append_c (out, (*p == '*' || *p == '/' || (guchar) *p < 32) ? '_' : *p);
  return g_string_free (out, FALSE);
}

static void
describe (GString *h, const char *what, guint i, const FbValue *v, const FbBuffer *b)
{
  g_autofree char *name = c_comment_safe (v->name);
  g_string_append_printf (h, "/* %s %u '%s': %s [", what, i, name, fb_dtype_name (b->dtype));
  for (int d = 0; d < b->rank; d++)
    g_string_append_printf (h, "%s%" G_GINT64_FORMAT, d ? ", " : "", b->dims[d]);
  g_string_append_printf (h, "] */\n#define FB_MODEL_%s_%u_BYTES %" G_GINT64_FORMAT "\n",
                          g_str_equal (what, "input") ? "INPUT" : "OUTPUT", i, b->nbytes);
}

static char *
header_text (const FbPlan *plan, const FbGraph *graph)
{
  GString *h = g_string_new (NULL);
  g_string_append (h,
    "/* A model compiled by Fusebench for one x86-64 CPU (the one it was compiled on).\n"
    " * Link with -lfbmodel. Tensors are dense, row-major, in the element types below. */\n"
    "#pragma once\n\n#include <stddef.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  g_string_append_printf (h, "#define FB_MODEL_N_INPUTS %u\n#define FB_MODEL_N_OUTPUTS %u\n\n",
                          plan->inputs->len, plan->outputs->len);
  for (guint i = 0; i < plan->inputs->len; i++)
    describe (h, "input", i, g_ptr_array_index (graph->inputs, i),
              fb_plan_buffer (plan, g_array_index (plan->inputs, guint, i)));
  for (guint i = 0; i < plan->outputs->len; i++)
    describe (h, "output", i, g_ptr_array_index (graph->outputs, i),
              fb_plan_buffer (plan, g_array_index (plan->outputs, guint, i)));
  g_string_append (h,
    "\n/* Runs the model once: inputs[i] points to input i, outputs[i] to room for output i.\n"
    " * Returns 0, or -1 when the working memory cannot be allocated or a convolution\n"
    " * cannot be set up by oneDNN. Safe to call from several threads at once: every call\n"
    " * has its own working memory (oneDNN convolutions take turns). */\n"
    "int fb_model_run (const void *const *inputs, void *const *outputs);\n\n"
    "#ifdef __cplusplus\n}\n#endif\n");
  return g_string_free (h, FALSE);
}

static void
remove_helper (const char *dir)
{
  const char *names[] = { "fb-conv-desc.h", "fb-conv-desc.c", "fb-conv-desc.o",
                          "fb-dnnl-conv.h", "fb-dnnl-conv.c", "fb-dnnl-conv.o", "fb-conv-post-ops.h",
                          "fb-direct-conv.h", "fb-direct-conv.c", "fb-direct-conv.o",
                          "fb-winograd-conv.h", "fb-winograd-conv.c", "fb-winograd-conv.o" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *p = g_build_filename (dir, names[i], NULL);
      g_unlink (p);
    }
  g_rmdir (dir);
}

static gboolean
has_convolutions (const FbPlan *plan)
{
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint p = 0; p < kernel->phases->len; p++)
        if (((FbKPhase *) g_ptr_array_index (kernel->phases, p))->conv)
          return TRUE;
    }
  return FALSE;
}

static gboolean
run_tool (GPtrArray *argv, const char *what, GError **error)
{
  g_ptr_array_add (argv, NULL);
  g_autofree char *err_text = NULL;
  int status = 0;
  if (!g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                     &err_text, &status, error))
    return FALSE;
  if (!g_spawn_check_wait_status (status, NULL))
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_FAILED, "%s failed: %s", what,
                   err_text ? err_text : "");
      return FALSE;
    }
  return TRUE;
}

/* The convolution helper the driver calls (fb-dnnl-conv.c, the description check of
 * fb-conv-desc.c and the direct and Winograd
 * convolutions it runs some convolutions as), compiled from the very sources the runtime was built from (kept in
 * the binary) into objects in tmp, whose paths are appended to objs. OpenMP: the direct
 * convolution's threads are the team oneDNN's primitives run on. */
static gboolean
compile_conv_helper (const char *cc, const char *tmp, GPtrArray *objs, GError **error)
{
  const struct { const char *name, *text; } files[] = {
    { "fb-conv-desc.h", fb_text_fb_conv_desc_h }, { "fb-conv-desc.c", fb_text_fb_conv_desc_c },
    { "fb-dnnl-conv.h", fb_text_fb_dnnl_conv_h }, { "fb-conv-post-ops.h", fb_text_fb_conv_post_ops_h },
    { "fb-direct-conv.h", fb_text_fb_direct_conv_h },
    { "fb-dnnl-conv.c", fb_text_fb_dnnl_conv_c }, { "fb-direct-conv.c", fb_text_fb_direct_conv_c },
    { "fb-winograd-conv.h", fb_text_fb_winograd_conv_h },
    { "fb-winograd-conv.c", fb_text_fb_winograd_conv_c },
  };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *path = g_build_filename (tmp, files[i].name, NULL);
      if (!g_file_set_contents (path, files[i].text, -1, error))
        return FALSE;
    }
  const char *sources[] = { "fb-conv-desc", "fb-dnnl-conv", "fb-direct-conv", "fb-winograd-conv" };
  for (guint i = 0; i < G_N_ELEMENTS (sources); i++)
    {
      g_autofree char *c_name = g_strdup_printf ("%s.c", sources[i]);
      g_autofree char *o_name = g_strdup_printf ("%s.o", sources[i]);
      g_autofree char *c = g_build_filename (tmp, c_name, NULL);
      char *obj = g_build_filename (tmp, o_name, NULL);
      g_ptr_array_add (objs, obj);
      g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
      /* Hidden: the library's users see fb_model_run, not its helpers. */
      const char *fixed[] = { cc, "-c", "-O2", "-fPIC", "-fopenmp", "-fvisibility=hidden", "-o",
                              obj, c };
      for (guint j = 0; j < G_N_ELEMENTS (fixed); j++)
        g_ptr_array_add (argv, g_strdup (fixed[j]));
      g_autofree char *what = g_strdup_printf ("compiling the convolution helper %s", c_name);
      if (!run_tool (argv, what, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
fb_cpu_write_shared_library (const char *dir, const FbPlan *plan, GPtrArray *objects,
                                 GBytes *weights, const int64_t *weight_offsets,
                                 const FbGraph *graph, GError **error)
{
  g_autofree char *cc = g_find_program_in_path ("cc");
  if (cc == NULL)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_FAILED,
                   "no C compiler driver (cc) to link the shared library with");
      return FALSE;
    }
  g_autoptr(GBytes) driver = fb_codegen_driver_object (plan, weights, weight_offsets, error);
  if (driver == NULL)
    return FALSE;
  g_autofree char *lib = g_build_filename (dir, "lib", NULL);
  if (g_mkdir_with_parents (lib, 0755) != 0)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: cannot make the folder", lib);
      return FALSE;
    }
  g_autofree char *driver_path = g_build_filename (lib, "fb-model-driver.o", NULL);
  g_autofree char *header_path = g_build_filename (lib, "fb-model.h", NULL);
  g_autofree char *so_path = g_build_filename (lib, "libfbmodel.so", NULL);
  g_autofree char *header = header_text (plan, graph);
  if (!g_file_set_contents (driver_path, g_bytes_get_data (driver, NULL),
                            g_bytes_get_size (driver), error) ||
      !g_file_set_contents (header_path, header, -1, error))
    return FALSE;

  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *helper_dir = NULL;
  g_autoptr(GPtrArray) helper_objs = g_ptr_array_new_with_free_func (g_free);
  if (has_convolutions (plan))
    {
      helper_dir = g_dir_make_tmp ("fusebench-export-XXXXXX", error);
      if (helper_dir == NULL)
        return FALSE;
      if (!compile_conv_helper (cc, helper_dir, helper_objs, error))
        {
          remove_helper (helper_dir);
          return FALSE;
        }
    }
  g_ptr_array_add (argv, g_strdup (cc));
  g_ptr_array_add (argv, g_strdup ("-shared"));
  g_ptr_array_add (argv, g_strdup ("-o"));
  g_ptr_array_add (argv, g_strdup (so_path));
  g_ptr_array_add (argv, g_strdup (driver_path));
  g_autoptr(GHashTable) linked = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint k = 0; k < plan->kernels->len; k++)
    if (g_ptr_array_index (objects, k))
      {
        char *name = fb_bundle_object_name (g_ptr_array_index (plan->kernels, k));
        if (g_hash_table_add (linked, name))
          g_ptr_array_add (argv, g_build_filename (dir, name, NULL));
      }
  for (guint i = 0; i < helper_objs->len; i++)
    g_ptr_array_add (argv, g_strdup (g_ptr_array_index (helper_objs, i)));
  if (helper_objs->len > 0)
    g_ptr_array_add (argv, g_strdup ("-fopenmp"));
  g_ptr_array_add (argv, g_strdup ("-ldnnl"));
  g_ptr_array_add (argv, g_strdup ("-lopenblas"));
  g_ptr_array_add (argv, g_strdup ("-lpthread"));
  g_ptr_array_add (argv, g_strdup ("-lm"));
  g_autofree char *what = g_strdup_printf ("linking %s", so_path);
  gboolean ok = run_tool (argv, what, error);
  if (helper_dir)
    remove_helper (helper_dir);
  if (!ok)
    return FALSE;
  /* The driver lives on inside the library. */
  g_unlink (driver_path);
  return TRUE;
}
