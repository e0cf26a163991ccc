/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Handing work from a worker thread to the thread that runs a main context. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Calls fn (data) from the thread iterating context, then destroy (data). Always through a
 * source attached to context, never on the calling thread: g_main_context_invoke runs fn
 * right away on a worker whose thread-default context is the global one whenever it can
 * acquire that context, that is, whenever the main thread is between two iterations, and a
 * progress report then ran GTK code on the worker beside the main thread (a heap corruption
 * in the window's profile tests, one run in ten). */
void fb_main_thread_post (GMainContext   *context,
                          GSourceFunc     fn,
                          gpointer        data,
                          GDestroyNotify  destroy);

G_END_DECLS
