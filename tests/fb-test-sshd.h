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
 *   fbtest-closed   a port of 127.0.0.1 where nothing listens */

/* TRUE when /usr/sbin/sshd, ssh and ssh-keygen are installed. */
gboolean  test_sshd_available (void);
/* Starts a server; read_only_cache makes the sessions' cache unwritable (a read-only mount as
 * root, where permissions do not bind; a folder without write permission otherwise). */
TestSshd *test_sshd_start     (gboolean read_only_cache);
/* Kills the server's per-connection processes (not the listener): the connection drops as if
 * the network went away. Returns how many it killed. */
guint     test_sshd_drop_connections (TestSshd *sshd);
void      test_sshd_stop      (TestSshd *sshd);
