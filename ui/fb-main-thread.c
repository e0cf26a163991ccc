/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-main-thread.h"

void
fb_main_thread_post (GMainContext   *context,
                     GSourceFunc     fn,
                     gpointer        data,
                     GDestroyNotify  destroy)
{
  GSource *source = g_idle_source_new ();

  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, fn, data, destroy);
  g_source_set_static_name (source, "[fusebench] worker report");
  g_source_attach (source, context);
  g_source_unref (source);
}
