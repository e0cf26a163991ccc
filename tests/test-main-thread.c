/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fb_main_thread_post: a worker's report runs on the thread that iterates the context, even
 * when the worker could acquire it (the main thread between two iterations), where
 * g_main_context_invoke would have run it on the worker. No display needed. */
#include "fb-main-thread.h"

typedef struct {
  GThread  *ran_on;
  gboolean  freed;
} Report;

static gboolean
record_thread (gpointer data)
{
  ((Report *) data)->ran_on = g_thread_self ();
  return G_SOURCE_REMOVE;
}

static void
mark_freed (gpointer data)
{
  ((Report *) data)->freed = TRUE;
}

static gpointer
post_from_worker (gpointer data)
{
  fb_main_thread_post (g_main_context_default (), record_thread, data, mark_freed);
  return NULL;
}

static gpointer
invoke_from_worker (gpointer data)
{
  g_main_context_invoke_full (g_main_context_default (), G_PRIORITY_DEFAULT, record_thread, data,
                              mark_freed);
  return NULL;
}

static void
test_runs_on_the_iterating_thread (void)
{
  Report posted = { 0 }, invoked = { 0 };

  /* The main thread is not iterating: the default context is free to acquire. */
  g_thread_join (g_thread_new ("worker", post_from_worker, &posted));
  g_assert_null (posted.ran_on);
  g_assert_false (posted.freed);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_true (posted.ran_on == g_thread_self ());
  g_assert_true (posted.freed);

  /* What it replaces: invoked, the report ran on the worker, which had acquired the context. */
  GThread *worker = g_thread_new ("worker", invoke_from_worker, &invoked);
  g_thread_join (g_thread_ref (worker));
  g_assert_true (invoked.ran_on == worker);
  g_thread_unref (worker);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/main-thread/post", test_runs_on_the_iterating_thread);
  return g_test_run ();
}
