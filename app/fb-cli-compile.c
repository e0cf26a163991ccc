/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench compile MODEL --target cpu|cuda -o NAME.fusebench [PIPELINE] [--shared-library]
 *                          [--threads N] [--stats] [--dump-dir DIR]
 * fusebench compile MODEL --target cuda --emit ptx -o NAME.ptx [PIPELINE] [--dump-dir DIR]
 *
 * Runs the pipeline, lowers its final stage, generates code for every kernel (unchanged
 * kernels come from the cache) and writes the bundle folder, atomically. --stats prints where
 * the time went and how many kernels came from the cache. --dump-dir writes the lowering
 * stages of every kernel, the same four the workbench's code view shows: NN-FUNCTION.kir
 * (kernel IR), .ll (LLVM IR as generated), .opt.ll (after optimization) and .s (x86-64) or
 * .ptx and .sass. --emit ptx writes, instead of a bundle, every generated kernel of the cuda target as
 * one PTX file (what the window's File → Export → PTX writes), atomically. */
#include "fb-cli-load.h"
#include "fb-backend.h"
#include "fb-bundle.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>

typedef struct {
  char     *target;
  char     *emit;               /* "ptx", or NULL for a bundle */
  char     *output;
  gboolean  shared;
  int       threads;
  gboolean  stats;
  char     *dump_dir;
} CompileArgs;

static gboolean
dump_kernels (const FbBackend *backend, const FbPlan *plan, const char *dir, GError **error)
{
  const char * const suffixes[] = { "kir", "ll", "opt.ll", backend->assembly_suffix };
  int width = 2;

  for (guint n = plan->kernels->len; n >= 100; n /= 10)
    width++;
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errsv),
                   "--dump-dir %s: %s", dir, g_strerror (errsv));
      return FALSE;
    }
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, i);
      g_autoptr(FbKernelStages) st = backend->kernel_stages (backend, kernel, plan, error);
      if (st == NULL)
        {
          g_prefix_error (error, "%s (node %s): ", kernel->name,
                          kernel->node != NULL ? kernel->node->name : "?");
          return FALSE;
        }
      const char *texts[] = { st->kernel_ir, st->llvm_ir, st->llvm_ir_opt, st->assembly };
      for (guint k = 0; k < G_N_ELEMENTS (suffixes); k++)
        {
          g_autofree char *name = g_strdup_printf ("%0*u-%s.%s", width, i, kernel->name,
                                                   suffixes[k]);
          g_autofree char *path = g_build_filename (dir, name, NULL);
          if (!g_file_set_contents (path, texts[k] != NULL ? texts[k] : "", -1, error))
            return FALSE;
        }
      /* The cuda target's SASS, or the line saying which CUDA tool it lacks. */
      if (st->sass != NULL)
        {
          g_autofree char *name = g_strdup_printf ("%0*u-%s.sass", width, i, kernel->name);
          g_autofree char *path = g_build_filename (dir, name, NULL);
          if (!g_file_set_contents (path, st->sass, -1, error))
            return FALSE;
        }
    }
  return TRUE;
}

/* --emit ptx: the final stage's kernels in the target's one-module form (every generated
 * kernel in one PTX file), replaced atomically. */
static gboolean
write_module (const FbBackend *backend, const FbGraph *graph, const char *path, GError **error)
{
  g_autoptr(FbPlan) plan = backend->lower (backend, graph, error);
  if (plan == NULL)
    return FALSE;
  g_autofree char *text = backend->emit_module (backend, plan, error);
  if (text == NULL)
    return FALSE;
  if (!g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, error))
    {
      g_prefix_error (error, "-o %s: ", path);
      return FALSE;
    }
  return TRUE;
}

static int
compile_model (const FbBackend *backend, const char *model, const FbCliPipelineArgs *pipeline_args,
               const CompileArgs *args)
{
  g_autoptr(GError) error = NULL;
  FbBackendOptions options = { .n_threads = args->threads > 0 ? (guint) args->threads : 0 };
  FbCompileStats stats = { 0 };
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr(FbPipelineOptions) used = NULL;
  g_autoptr(FbPipeline) pipeline = fb_cli_load_model_full (model, pipeline_args, &used, &error);
  if (pipeline == NULL)
    return fb_cli_fail (error);
  const FbGraph *graph = fb_pipeline_final (pipeline);
  gint64 t1 = g_get_monotonic_time ();
  g_autofree char *ptext = fb_pipeline_options_to_args (used);
  FbBundleOptions bundle_options = { .source = model, .pipeline = ptext,
                                     .shared_library = args->shared };
  if (args->emit != NULL)
    {
      if (!write_module (backend, graph, args->output, &error))
        return fb_cli_fail (error);
    }
  else if (!backend->compile_bundle (backend, graph, args->output, &bundle_options, &options,
                                     &stats, &error))
    return fb_cli_fail (error);
  gint64 t2 = g_get_monotonic_time ();
  if (args->dump_dir != NULL)
    {
      /* The stages are generated again, from a plan lowered again: the bundle's code holds no
       * text, and a dump is for reading, not for speed. */
      g_autoptr(FbPlan) plan = backend->lower (backend, graph, &error);
      if (plan == NULL || !dump_kernels (backend, plan, args->dump_dir, &error))
        return fb_cli_fail (error);
    }
  if (args->stats && args->emit == NULL)
    fprintf (stderr, "import+passes %.1f ms, lower %.1f ms, codegen %.1f ms (%u kernels with "
             "code, %u from the cache), bundle %.1f ms, total %.1f ms\n",
             (t1 - t0) / 1e3, stats.lower_ms, stats.codegen_ms, stats.n_with_code, stats.n_cached,
             stats.bundle_ms, (t2 - t0) / 1e3);
  return FB_EXIT_OK;
}

/* The targets of the table that compile bundles, for messages ("cpu, cuda"). */
static char *
bundle_targets (void)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; fb_backend_nth (i) != NULL; i++)
    if (fb_backend_nth (i)->compile_bundle != NULL)
      g_string_append_printf (s, "%s%s", s->len ? ", " : "", fb_backend_nth (i)->name);
  return g_string_free (s, FALSE);
}

/* --emit: a bundle, or the module form of the target's code, and --shared-library only where
 * the target links one; said on stderr when not. */
static gboolean
check_emit (const FbBackend *backend, const char *emit, const CompileArgs *args)
{
  if (args->shared && !backend->shared_library)
    {
      fprintf (stderr, "fusebench compile: --shared-library: the %s target's kernels are not "
               "linked into a shared library\n", backend->name);
      return FALSE;
    }
  if (emit == NULL || g_str_equal (emit, "bundle"))
    return TRUE;
  const FbBackend *owner = fb_backend_for_module (emit);
  if (owner == NULL)
    {
      GString *kinds = g_string_new ("bundle");
      for (guint i = 0; fb_backend_nth (i) != NULL; i++)
        if (fb_backend_nth (i)->module_suffix != NULL)
          g_string_append_printf (kinds, " or %s", fb_backend_nth (i)->module_suffix);
      fprintf (stderr, "fusebench compile: --emit %s: expected %s\n", emit, kinds->str);
      g_string_free (kinds, TRUE);
      return FALSE;
    }
  if (owner != backend)
    {
      fprintf (stderr, "fusebench compile: --emit %s: that is the %s target's code; the %s "
               "target's kernels go into a bundle (use --target %s --emit %s)\n", emit,
               owner->name, backend->name, owner->name, emit);
      return FALSE;
    }
  if (args->shared || args->stats)
    {
      fprintf (stderr, "fusebench compile: --emit %s writes one file: %s is for bundles\n", emit,
               args->shared ? "--shared-library" : "--stats");
      return FALSE;
    }
  return TRUE;
}

int
fb_cli_compile (int argc, char **argv)
{
  CompileArgs args = { 0 };
  const FbBackend *backend = NULL;
  FbCliPipelineArgs pipeline = { 0 };
  char *input_dir = NULL;
  const GOptionEntry entries[] = {
    { "target", 0, 0, G_OPTION_ARG_STRING, &args.target, "What to compile for: cpu or cuda", "TARGET" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &args.output,
      "The bundle folder to write (with --emit ptx: the PTX file)", "BUNDLE" },
    { "emit", 0, 0, G_OPTION_ARG_STRING, &args.emit,
      "What to write: bundle (the default), or ptx (--target cuda: every generated kernel in "
      "one PTX file for sm_90)", "WHAT" },
    { "shared-library", 0, 0, G_OPTION_ARG_NONE, &args.shared,
      "Also link lib/libfbmodel.so and lib/fb-model.h (fb_model_run) into the bundle", NULL },
    { "threads", 0, 0, G_OPTION_ARG_INT, &args.threads, "Threads for code generation", "N" },
    { "input-dir", 0, 0, G_OPTION_ARG_FILENAME, &input_dir,
      "Compile for the shapes of input_K.pb / input_K.npy in DIR (dynamic dimensions)", "DIR" },
    { "stats", 0, 0, G_OPTION_ARG_NONE, &args.stats, "Print compile times on stderr", NULL },
    { "dump-dir", 0, 0, G_OPTION_ARG_FILENAME, &args.dump_dir,
      "Write NN-FUNCTION.kir, .ll, .opt.ll and .s, or .ptx and .sass (the lowering stages) of "
      "every kernel into DIR",
      "DIR" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("MODEL — compile a model into a bundle");
  g_autoptr(GError) error = NULL;
  int status;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_add_group (context, fb_cli_pipeline_group (&pipeline));
  if (!g_option_context_parse (context, &argc, &argv, &error))
    status = fb_cli_fail (error);
  else if (argc != 2 || args.output == NULL)
    {
      fprintf (stderr, "fusebench compile: expected MODEL and -o BUNDLE (see --help)\n");
      status = FB_EXIT_INPUT;
    }
  else if (args.target == NULL || (backend = fb_backend_lookup (args.target)) == NULL ||
           backend->compile_bundle == NULL)
    {
      g_autofree char *targets = bundle_targets ();
      fprintf (stderr, "fusebench compile: --target %s: expected one of the targets that compile "
               "bundles: %s\n", args.target ? args.target : "(none)", targets);
      status = FB_EXIT_INPUT;
    }
  else if (!check_emit (backend, args.emit, &args))
    status = FB_EXIT_INPUT;
  else
    {
      if (args.emit != NULL && g_str_equal (args.emit, "bundle"))
        g_clear_pointer (&args.emit, g_free);
      pipeline.channels_last = backend->channels_last;
      pipeline.input_dir = input_dir;
      status = compile_model (backend, argv[1], &pipeline, &args);
    }

  g_free (args.target);
  g_free (args.emit);
  g_free (args.output);
  g_free (args.dump_dir);
  g_free (input_dir);
  fb_cli_pipeline_args_clear (&pipeline);
  return status;
}
