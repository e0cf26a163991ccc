/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A remote host reached through the system's OpenSSH client: the user's config, agent and
 * known_hosts, in batch mode (a password or a host key to confirm is a failure with a message,
 * never a prompt hidden behind the window). FbRemote runs shell scripts there, copies files
 * there in a tar stream, installs the runner (fb-remote-runner.c) and runs a fusebench command
 * in a work folder of its own that it removes whatever happens. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define FB_REMOTE_ERROR (fb_remote_error_quark ())

typedef enum {
  FB_REMOTE_ERROR_HOST,         /* not a destination ssh takes (e.g. starts with '-') */
  FB_REMOTE_ERROR_NO_SSH,       /* no ssh client here */
  FB_REMOTE_ERROR_HOST_KEY,     /* the host's key is unknown or has changed */
  FB_REMOTE_ERROR_AUTH,         /* the host refused our keys */
  FB_REMOTE_ERROR_UNREACHABLE,  /* unknown name, refused or closed port, no route */
  FB_REMOTE_ERROR_TIMEOUT,      /* no answer within the connect timeout */
  FB_REMOTE_ERROR_DROPPED,      /* the connection ended mid-way */
  FB_REMOTE_ERROR_DISK_FULL,    /* no space left there */
  FB_REMOTE_ERROR_READ_ONLY,    /* the cache there cannot be written */
  FB_REMOTE_ERROR_DAMAGED,      /* the runner arrived damaged */
  FB_REMOTE_ERROR_VERSION,      /* the runner there answers another version */
  FB_REMOTE_ERROR_RUNNER,       /* the runner cannot start there (architecture, libraries) */
  FB_REMOTE_ERROR_FAILED,       /* anything else the host said */
} FbRemoteError;

GQuark fb_remote_error_quark (void);

/* One line the remote command wrote on its stderr, without the newline. */
typedef void (*FbRemoteLineFunc) (const char *line, gpointer data);

#define FB_TYPE_REMOTE (fb_remote_get_type ())
G_DECLARE_FINAL_TYPE (FbRemote, fb_remote, FB, REMOTE, GObject)

/* host: an ssh destination (user@host, a Host alias of the user's config). The environment's
 * FUSEBENCH_SSH_CONFIG, when set, is the client config file (ssh -F), and
 * FUSEBENCH_REMOTE_RUNNER the runner to install (a fusebench binary or a gpu-pack .tar.xz;
 * this very binary when unset). NULL with FB_REMOTE_ERROR_HOST for a destination ssh would
 * read as an option. */
FbRemote   *fb_remote_new       (const char *host, GError **error);
const char *fb_remote_get_host  (FbRemote *self);

/* Runs `sh -c script` there with args as $1..., in batch mode. stdin_fd: a file or pipe to
 * feed it (taken), or -1 for a pipe held open until the end or until cancellable fires, then
 * closed: the scripts of fb-remote-runner.c end their work when their stdin ends, which is also
 * what happens when the connection drops. stdout is collected into *out (may be NULL);
 * on_line gets every stderr line as it comes. TRUE when ssh reached the host and the script ran
 * (its exit status in *status, its stderr in *err_text); FALSE with an FB_REMOTE_ERROR that
 * names the host and what failed when ssh itself failed, or G_IO_ERROR_CANCELLED. */
gboolean    fb_remote_exec      (FbRemote *self, const char *script, const char * const *args,
                                 int stdin_fd, FbRemoteLineFunc on_line, gpointer data,
                                 GBytes **out, int *status, char **err_text,
                                 GCancellable *cancellable, GError **error);

/* An FB_REMOTE_ERROR for a script that ran and failed with status, from what it said on stderr
 * (disk full, read-only or unwritable cache, a missing tool); what says what was being done. */
void        fb_remote_set_script_error (FbRemote *self, const char *what, int status,
                                        const char *err_text, GError **error);

/* The files beside the ONNX model at path that go with it: its external data, stored under
 * names the model holds verbatim. Their names, NULL-terminated; empty for a folder (a bundle
 * goes whole) or a file that cannot be read. */
char      **fb_remote_model_companions (const char *path);
/* Removes a local folder the exchange staged or fetched into, and all below it (links are
 * removed, never followed). */
void        fb_remote_remove_tree (const char *path);

/* fb-remote-runner.c: the cache there, the runner and one command's work folder. */

/* Makes the work folder there and installs the runner unless a copy whose SHA-256 matches is
 * there already (a damaged or partial copy is replaced, never run); checks that it answers this
 * version. on_line hears what takes a while (the copy). */
gboolean    fb_remote_prepare   (FbRemote *self, FbRemoteLineFunc on_line, gpointer data,
                                 GCancellable *cancellable, GError **error);
/* Copies the local folder staging's contents into the work folder. */
gboolean    fb_remote_upload    (FbRemote *self, const char *staging, GCancellable *cancellable,
                                 GError **error);
/* Runs the runner with argv in the work folder (paths relative to it; what it writes under out/
 * comes back), streaming its stderr lines to on_line, then unpacks out/ into the local folder
 * fetched (its stdout as the file "stdout"). The work folder there is removed in every case,
 * also when the connection drops or cancellable fires (the remote process is ended first).
 * TRUE with the runner's exit status in *status; FALSE for a failure of ssh or the host. */
gboolean    fb_remote_run       (FbRemote *self, const char * const *argv, const char *fetched,
                                 FbRemoteLineFunc on_line, gpointer data, int *status,
                                 GCancellable *cancellable, GError **error);
/* Removes the work folder there when fb_remote_run has not (best effort: a host that cannot be
 * reached any more keeps it until the next prepare, which clears stale ones). */
void        fb_remote_discard   (FbRemote *self);

/* The runner installed with the application (the headless pack, a no-GTK fusebench with its
 * libraries) found relative to this binary, in its install or its build tree; NULL when this
 * build has none. */
char       *fb_remote_installed_runner (void);

/* fb-remote-probe.c: what the host has to run on. */

typedef struct {
  char      *arch;                /* uname -m there */
  char      *cpu;                 /* the processor's model name, or NULL */
  guint      cores;
  GPtrArray *gpus;                /* char*: the NVIDIA GPUs there, by name */
  char      *driver;              /* the NVIDIA driver's version, or NULL */
  gboolean   has_driver_library;  /* libcuda.so.1 is there */
  GPtrArray *libraries;           /* char*: the CUDA libraries found there (sonames) */
  GPtrArray *missing;             /* char*: those not found */
} FbRemoteDevice;

/* Asks the host with one ssh command (no runner needed); an FB_REMOTE_ERROR naming the host when
 * it cannot be reached. */
FbRemoteDevice *fb_remote_probe          (FbRemote *self, GCancellable *cancellable,
                                          GError **error);
void            fb_remote_device_free    (FbRemoteDevice *device);
/* A GPU there and its driver's library: the cuda target can run. */
gboolean        fb_remote_device_has_gpu (const FbRemoteDevice *device);
/* One line: "NVIDIA H200 · driver 580.95.05 · CUDA libraries: cuBLASLt, cuDNN, CUPTI · CPU, N
 * cores", or "no GPU: cpu only · ...". */
char           *fb_remote_device_describe (const FbRemoteDevice *device);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbRemoteDevice, fb_remote_device_free)

G_END_DECLS
