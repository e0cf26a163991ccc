/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `--remote HOST` of profile, run and check: the same command, run by the runner on the host
 * (fb-remote.h), with the files it reads sent there and the files it writes fetched back and
 * put in place whole (temporary name, then rename) or not at all. */
#pragma once

#include "fb-cli.h"

G_BEGIN_DECLS

typedef struct _FbCliRemote FbCliRemote;

/* command: the subcommand the runner runs ("profile", ...), its first argument. */
FbCliRemote *fb_cli_remote_new        (const char *command);
void         fb_cli_remote_free       (FbCliRemote *job);
/* Appends arguments for the runner, NULL-terminated. */
void         fb_cli_remote_args       (FbCliRemote *job, const char *first, ...) G_GNUC_NULL_TERMINATED;
/* Sends the local file or folder path and returns its path there (borrowed, lives as long as
 * job), relative to the work folder. */
const char  *fb_cli_remote_send       (FbCliRemote *job, const char *path);
/* Sends a model: an ONNX file with the external-data files beside it that it names, or a
 * bundle folder. */
const char  *fb_cli_remote_send_model (FbCliRemote *job, const char *path);
/* Where the runner writes a file that comes back to local (borrowed). */
const char  *fb_cli_remote_fetch      (FbCliRemote *job, const char *local);
/* Where the runner writes a folder whose files come back into the local folder dir. */
const char  *fb_cli_remote_fetch_dir  (FbCliRemote *job, const char *dir);
/* Before anything is sent: the model, the input folder and the NAME=FILE inputs of option are
 * there; a G_FILE_ERROR or G_OPTION_ERROR (exit status 2) naming the one that is not. */
gboolean     fb_cli_remote_check_sources (const char *model, const char *input_dir,
                                          const char *option, char **specs, GError **error);
/* Sends the inputs and passes --input-dir or option NAME=FILE for them. */
void         fb_cli_remote_inputs     (FbCliRemote *job, const char *input_dir, const char *option,
                                       char **specs);
/* Passes the PIPELINE options on. */
void         fb_cli_remote_pipeline   (FbCliRemote *job, const FbCliPipelineArgs *args);
/* Runs it on host: prints what the runner prints (its stdout on stdout, its stderr lines on
 * stderr, progress lines on a terminal as a status line), puts the fetched files in place when
 * it succeeded, and returns its exit status; 1 with a message naming host and what failed for a
 * failure of the connection or the host, 2 for a host that is no ssh destination. */
int          fb_cli_remote_execute    (FbCliRemote *job, const char *host);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbCliRemote, fb_cli_remote_free)

G_END_DECLS
