/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The command-line subcommands of DESIGN.md. Each lives in its own fb-cli-NAME.c and returns
 * the process exit status: 0 success, 1 the work failed, 2 bad input or usage. */
#pragma once

#include "fb-config.h"
#include "fb-pipeline.h"

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

/* The window and GTK's drawing are in this binary: not in a -Dgtk=false build, nor in the
 * remote runner built beside the app (app/meson.build defines FB_HEADLESS_RUNNER for it). */
#if FB_HAVE_GTK && !defined (FB_HEADLESS_RUNNER)
#define FB_CLI_HAS_GTK 1
#else
#define FB_CLI_HAS_GTK 0
#endif

enum {
  FB_EXIT_OK    = 0,
  FB_EXIT_WORK  = 1,
  FB_EXIT_INPUT = 2,
};

typedef struct {
  const char *name;
  const char *summary;
  int (*run) (int argc, char **argv);   /* argv[0] is the subcommand's name */
} FbCliCommand;

/* NULL when name is not a subcommand. */
const FbCliCommand *fb_cli_lookup  (const char *name);
void                fb_cli_print_commands (FILE *stream);

/* Prints "fusebench: MESSAGE" on stderr and returns the exit status the error's domain calls
 * for: 2 for anything the input caused, 1 for failures of the work itself. */
int                 fb_cli_fail    (const GError *error);
int                 fb_cli_exit_status_for (const GError *error);

/* The PIPELINE options every command takes (DESIGN.md). Fill a GOptionContext with
 * fb_cli_pipeline_entries, then turn the parsed strings into values. */
typedef struct {
  char   **disable;       /* --disable PASS */
  char   **no_fuse;       /* --no-fuse NODE */
  char    *layout;        /* --layout nchw|nhwc */
  char   **input_shape;   /* --input-shape NAME=1x3x224x224 */
  gboolean channels_last;  /* set by a command compiling for a target whose convolution library
                             runs channels-last fastest (FbBackend.channels_last): without
                             --layout, convolutions go channels-last */
  const char *input_dir;  /* set by a command given --input-dir: the model's dynamic inputs take
                             the shapes of those files, as if pinned (not owned) */
} FbCliPipelineArgs;

GOptionGroup *fb_cli_pipeline_group        (FbCliPipelineArgs *args);
void          fb_cli_pipeline_args_clear   (FbCliPipelineArgs *args);
/* char* name -> FbShape*, from --input-shape; NULL with a G_OPTION_ERROR on a bad spec. */
GHashTable   *fb_cli_input_shapes          (const FbCliPipelineArgs *args, GError **error);
/* The parsed PIPELINE strings as options (fb-cli-pipeline.c); NULL with a G_OPTION_ERROR for an
 * unknown pass name or layout, or a bad --input-shape. */
FbPipelineOptions *fb_cli_pipeline_options (const FbCliPipelineArgs *args, GError **error);

/* Subcommands */
int fb_cli_info (int argc, char **argv);
int fb_cli_passes (int argc, char **argv);
int fb_cli_run (int argc, char **argv);
int fb_cli_check (int argc, char **argv);
int fb_cli_compile (int argc, char **argv);
int fb_cli_profile (int argc, char **argv);
int fb_cli_export (int argc, char **argv);

G_END_DECLS
