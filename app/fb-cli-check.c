/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench check CASE_DIR... [--target interp|cpu|cuda] [--strict-float32 | --tf32-matmul]
 *                 [--rtol R] [--atol A] [PIPELINE]
 *
 * Each CASE_DIR holds model.onnx and test_data_set_* folders with input_K.pb and output_K.pb
 * (the ONNX backend-test layout). Every data set is run and every output compared with
 * rtol 1e-3, atol 1e-4 unless --rtol / --atol say otherwise (NaN where NaN is expected, same
 * types and shapes). One line per case:
 *   PASS|FAIL CASE_DIR  worst abs err X rel err Y (output NAME)
 * then a summary; the exit status is 1 when a case fails. No shape needs pinning: each data set
 * specializes the model to the shapes of its inputs (one compile per distinct shape). With
 * --remote HOST the cases go to an ssh host and are checked there. */
#include "fb-cli-load.h"
#include "fb-cli-remote.h"
#include "fb-case-check.h"
#include "fb-compare.h"
#include "fb-backend.h"

#include <stdio.h>
#include <string.h>

/* Returns TRUE when the case passes; prints its line either way. */
static gboolean
check_case (const char *case_dir, const FbPipelineOptions *options, const FbBackend *backend,
            const FbBackendOptions *backend_options, double rtol, double atol)
{
  FbCaseVerdict v;
  gboolean ok;

  fb_case_check_within (case_dir, options, backend, backend_options, rtol, atol, &v);
  ok = v.ok;
  if (v.worst_output == NULL && !ok)
    printf ("FAIL %s  %s\n", case_dir, v.failure);
  else
    {
      printf ("%s %s  worst abs err %.3g rel err %.3g (output %s)", ok ? "PASS" : "FAIL", case_dir,
              v.worst_abs, v.worst_rel, v.worst_output ? v.worst_output : "none");
      if (!ok)
        printf (": %s", v.failure);
      printf ("\n");
    }
  fb_case_verdict_clear (&v);
  return ok;
}

static int
check_remote (const char *host, int argc, char **argv, const char *target,
              const FbBackendOptions *backend_options, double rtol, double atol,
              const FbCliPipelineArgs *pipeline)
{
  g_autoptr(FbCliRemote) job = fb_cli_remote_new ("check");
  char r[G_ASCII_DTOSTR_BUF_SIZE], a[G_ASCII_DTOSTR_BUF_SIZE];

  for (int i = 1; i < argc; i++)
    if (!g_file_test (argv[i], G_FILE_TEST_IS_DIR))
      {
        fprintf (stderr, "fusebench check: %s: no such case folder\n", argv[i]);
        return FB_EXIT_INPUT;
      }
  fb_cli_remote_args (job, "--rtol", g_ascii_dtostr (r, sizeof r, rtol),
                      "--atol", g_ascii_dtostr (a, sizeof a, atol), NULL);
  if (target)
    fb_cli_remote_args (job, "--target", target, NULL);
  if (backend_options->strict_float32)
    fb_cli_remote_args (job, "--strict-float32", NULL);
  if (backend_options->tf32_matmul)
    fb_cli_remote_args (job, "--tf32-matmul", NULL);
  if (backend_options->eager)
    fb_cli_remote_args (job, "--eager", NULL);
  fb_cli_remote_pipeline (job, pipeline);
  for (int i = 1; i < argc; i++)
    fb_cli_remote_args (job, fb_cli_remote_send (job, argv[i]), NULL);
  return fb_cli_remote_execute (job, host);
}

int
fb_cli_check (int argc, char **argv)
{
  char *target = NULL;
  char *remote = NULL;
  FbCliPipelineArgs pipeline = { 0 };
  FbBackendOptions backend_options = { 0 };
  double rtol = FB_COMPARE_RTOL, atol = FB_COMPARE_ATOL;
  const GOptionEntry entries[] = {
    { "target", 0, 0, G_OPTION_ARG_STRING, &target, "Where to run: interp, cpu or cuda", "TARGET" },
    { "strict-float32", 0, 0, G_OPTION_ARG_NONE, &backend_options.strict_float32,
      "cuda: no TF32 at all: convolutions and matrix products in full float32", NULL },
    { "tf32-matmul", 0, 0, G_OPTION_ARG_NONE, &backend_options.tf32_matmul,
      "cuda: matrix products in TF32 too (by default only convolutions use it, as PyTorch)", NULL },
    { "eager", 0, 0, G_OPTION_ARG_NONE, &backend_options.eager,
      "cuda: launch kernel by kernel instead of replaying the CUDA graph", NULL },
    { "rtol", 0, 0, G_OPTION_ARG_DOUBLE, &rtol, "Relative tolerance (default 1e-3)", "R" },
    { "atol", 0, 0, G_OPTION_ARG_DOUBLE, &atol, "Absolute tolerance (default 1e-4)", "A" },
    { "remote", 0, 0, G_OPTION_ARG_STRING, &remote,
      "Check on this ssh host (user@host or a Host of ~/.ssh/config)", "HOST" },
    { NULL }
  };
  const FbBackend *backend = NULL;
  g_autoptr(GOptionContext) context =
    g_option_context_new ("CASE_DIR… — run ONNX backend-style cases and compare their outputs");
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipelineOptions) options = NULL;
  guint passed = 0, failed = 0;
  gboolean parsed;
  int status;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_add_group (context, fb_cli_pipeline_group (&pipeline));
  parsed = g_option_context_parse (context, &argc, &argv, &error);
  /* A target whose convolutions run channels-last compiles so unless --layout says otherwise. */
  backend = target != NULL ? fb_backend_lookup (target) : fb_backend_reference ();
  pipeline.channels_last = backend != NULL && backend->channels_last;
  if (!parsed)
    status = fb_cli_fail (error);
  else if (!(rtol >= 0 && atol >= 0))
    {
      fprintf (stderr, "fusebench check: --rtol and --atol must be 0 or more\n");
      status = FB_EXIT_INPUT;
    }
  else if (argc < 2)
    {
      fprintf (stderr, "fusebench check: expected one or more CASE_DIR (see --help)\n");
      status = FB_EXIT_INPUT;
    }
  /* Options are checked once, before any case, so a typo is a usage error, not N failures. */
  else if (!fb_cli_check_target (target, &error) ||
           !fb_cli_check_precision (&backend_options, &error) ||
           (options = fb_cli_pipeline_options (&pipeline, &error)) == NULL)
    status = fb_cli_fail (error);
  else if (remote)
    status = check_remote (remote, argc, argv, target, &backend_options, rtol, atol, &pipeline);
  else
    {
      for (int i = 1; i < argc; i++)
        {
          if (check_case (argv[i], options, backend, &backend_options, rtol, atol))
            passed++;
          else
            failed++;
        }
      printf ("%u case%s: %u passed, %u failed\n", passed + failed,
              passed + failed == 1 ? "" : "s", passed, failed);
      status = failed ? FB_EXIT_WORK : FB_EXIT_OK;
    }
  g_free (target);
  g_free (remote);
  fb_cli_pipeline_args_clear (&pipeline);
  return status;
}
