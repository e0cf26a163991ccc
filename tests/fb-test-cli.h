/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Runs the real fusebench binary (from $FUSEBENCH) the way a user or a script does. */
#pragma once

#include <glib.h>

typedef struct {
  int   status;   /* exit status */
  char *out;      /* standard output */
  char *err;      /* standard error */
} TestRun;

/* Runs fusebench with the NULL-terminated arguments; asserts that it ran (not how it ended). */
TestRun *test_run_fusebench (const char *first_arg, ...) G_GNUC_NULL_TERMINATED;
void     test_run_free      (TestRun *run);
/* A path below the source tree's top folder. */
char    *test_source_path   (const char *first, ...) G_GNUC_NULL_TERMINATED;
/* Removes a folder and everything below it (a test's temporary folder). */
void     test_remove_tree   (const char *path);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TestRun, test_run_free)
