/* SPDX-License-Identifier: GPL-3.0-or-later */
/* FbRemote's fields, shared by fb-remote.c (ssh) and fb-remote-runner.c (the work there). */
#pragma once

#include "fb-remote.h"

G_BEGIN_DECLS

struct _FbRemote
{
  GObject  parent_instance;
  char    *host;         /* the ssh destination */
  char    *ssh_config;   /* ssh -F FILE, or NULL for the user's own */
  char    *work;         /* the work folder there, once fb_remote_prepare made it */
  char    *runner;       /* the runner's path there, once installed and checked */
};

G_END_DECLS
