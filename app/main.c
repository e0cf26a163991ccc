/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench: a subcommand runs headless; anything else opens the workbench. */
#include "fb-config.h"
#include "fb-cli.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

#if FB_CLI_HAS_GTK
#include "fb-application.h"
#endif

static int
usage (FILE *stream)
{
  fprintf (stream, "Usage: fusebench [MODEL]\n       fusebench COMMAND [OPTION…]\n\n");
  fb_cli_print_commands (stream);
  fprintf (stream, "\nRun 'fusebench COMMAND --help' for a command's options.\n");
  return stream == stdout ? FB_EXIT_OK : FB_EXIT_INPUT;
}

int
main (int argc, char **argv)
{
  const FbCliCommand *command;

  setlocale (LC_ALL, "");
  if (argc > 1 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0))
    return usage (stdout);
  if (argc > 1 && strcmp (argv[1], "--version") == 0)
    {
      printf ("fusebench %s\n", FB_VERSION);
      return FB_EXIT_OK;
    }
  if (argc > 1 && (command = fb_cli_lookup (argv[1])) != NULL)
    return command->run (argc - 1, argv + 1);
  /* A bare word that is neither a command nor a file is a mistyped command, not a model. */
  if (argc > 1 && argv[1][0] != '-' && strpbrk (argv[1], "./") == NULL &&
      !g_file_test (argv[1], G_FILE_TEST_EXISTS))
    {
      fprintf (stderr, "fusebench: '%s' is not a command\n\n", argv[1]);
      return usage (stderr);
    }

#if FB_CLI_HAS_GTK
  return fb_application_run (argc, argv);
#else
  fprintf (stderr, "fusebench: this build has no workbench window (a headless build: "
                   "-Dgtk=false, or the remote runner); use a command\n\n");
  return usage (stderr);
#endif
}
