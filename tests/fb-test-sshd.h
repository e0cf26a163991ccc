/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A real OpenSSH server for the --remote tests: the system's sshd on 127.0.0.1 on a free port,
 * with a host key, user keys, its config and the client's config all in one temporary folder;
 * no system service, no file outside that folder touched (as root it runs in a mount namespace
 * of its own, see fb-test-sshd.c). */
#pragma once

#include <gio/gio.h>

typedef struct {
  char        *dir;      /* the temporary folder holding everything */
  char        *config;   /* the ssh client config to pass as FUSEBENCH_SSH_CONFIG */
  char        *cache;    /* XDG_CACHE_HOME of the sessions there */
  GSubprocess *sshd;
  int          port;
} TestSshd;

/* Host aliases of config:
 *   fbtest          the server, with the authorized key and its host key known
 *   fbtest-wrongkey the server, with a key it does not know
 *   fbtest-unknown  the server, with no known host key
 *   fbtest-closed   a port of 127.0.0.1 where nothing listens
 *   fbtest-gpu      the server, with a stand-in nvidia-smi first on the session's PATH and
 *                   stand-in CUDA libraries (empty files) in its FUSEBENCH_CUDA_LIBRARY_PATH:
 *                   an "NVIDIA H200" host for the device probe, whose runner still has no GPU */

typedef enum {
  TEST_SSHD_CACHE_WRITABLE,
  TEST_SSHD_CACHE_READ_ONLY,  /* the sessions' cache cannot be written */
  TEST_SSHD_CACHE_FULL,       /* the sessions' cache is a 1 MiB file system (as root only) */
} TestSshdCache;

/* TRUE when /usr/sbin/sshd, ssh and ssh-keygen are installed. */
gboolean  test_sshd_available (void);
/* Starts a server. A read-only cache is a read-only mount as root, where permissions do not
 * bind, and a folder without write permission otherwise; a full one a small tmpfs mounted in
 * the server's own mount namespace. */
TestSshd *test_sshd_start     (TestSshdCache cache);
/* TRUE where test_sshd_start can give a full cache (it needs to mount). */
gboolean  test_sshd_can_fill  (void);
/* Kills the server's per-connection processes (not the listener): the connection drops as if
 * the network went away. Returns how many it killed. */
guint     test_sshd_drop_connections (TestSshd *sshd);
void      test_sshd_stop      (TestSshd *sshd);
