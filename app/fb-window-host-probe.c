/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Each remote host's device for the Profile menu: asked once per session with fb_remote_probe in
 * a worker, when the host first shows in a menu, and kept for every window of the application
 * (the GPU in a server does not change while the app runs). A host that could not be asked is
 * asked again when it is chosen. The answer's line shows under the host, and a host known to
 * have no GPU gets no cuda profile (fb-window-remote.c). Main thread only. */
#include "fb-remote.h"
#include "fb-window-private.h"

#include <string.h>

typedef struct {
  FbHostProbeState state;
  char            *line;    /* the device line, or why the host could not be asked */
  gboolean         has_gpu;
} Probe;

/* host -> Probe*, for the session. */
static GHashTable *probes;

static void
probe_free (gpointer data)
{
  Probe *p = data;

  g_free (p->line);
  g_free (p);
}

static void
probe_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  const char *host = task_data;
  GError *error = NULL;
  g_autoptr(FbRemote) remote = fb_remote_new (host, &error);
  g_autoptr(FbRemoteDevice) device = NULL;

  if (remote != NULL)
    device = fb_remote_probe (remote, cancellable, &error);
  if (device == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, g_steal_pointer (&device),
                           (GDestroyNotify) fb_remote_device_free);
}

/* Every window shows the answer: the one that asked, and the others of its application. */
static void
refresh_windows (FbWindow *asker)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (asker));
  GList *windows = app != NULL ? gtk_application_get_windows (app) : NULL;
  gboolean asker_listed = FALSE;

  for (GList *l = windows; l != NULL; l = l->next)
    if (FB_IS_WINDOW (l->data) && !FB_WINDOW (l->data)->disposed)
      {
        asker_listed |= l->data == (gpointer) asker;
        _fb_window_remote_hosts_refresh (FB_WINDOW (l->data));
      }
  if (!asker_listed && !asker->disposed)
    _fb_window_remote_hosts_refresh (asker);
}

static void
on_probed (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FbWindow *self = FB_WINDOW (source);
  const char *host = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  g_autoptr(FbRemoteDevice) device = g_task_propagate_pointer (G_TASK (result), &error);
  Probe *p = g_new0 (Probe, 1);

  if (device != NULL)
    {
      p->state = FB_HOST_PROBE_DONE;
      p->line = fb_remote_device_describe (device);
      p->has_gpu = fb_remote_device_has_gpu (device);
    }
  else
    {
      const char *message = error->message;
      /* The host's name is the row's own label: the line says only what went wrong. */
      if (g_str_has_prefix (message, host) && message[strlen (host)] == ':')
        message += strlen (host) + 1;
      p->state = FB_HOST_PROBE_FAILED;
      p->line = g_strdup_printf ("not reached:%s%s", message[0] == ' ' ? "" : " ", message);
    }
  g_hash_table_insert (probes, g_strdup (host), p);
  refresh_windows (self);
}

FbHostProbeState
_fb_window_host_probe (FbWindow *self, const char *host, gboolean retry, const char **line,
                       gboolean *has_gpu)
{
  Probe *p;

  g_assert (FB_IS_WINDOW (self) && host != NULL);
  if (probes == NULL)
    probes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, probe_free);
  p = g_hash_table_lookup (probes, host);
  if (p == NULL || (retry && p->state == FB_HOST_PROBE_FAILED))
    {
      g_autoptr(GTask) task = g_task_new (self, NULL, on_probed, NULL);

      p = g_new0 (Probe, 1);
      p->state = FB_HOST_PROBE_ASKING;
      p->line = g_strdup ("asking for its devices…");
      g_hash_table_insert (probes, g_strdup (host), p);
      g_task_set_source_tag (task, _fb_window_host_probe);
      g_task_set_task_data (task, g_strdup (host), g_free);
      g_task_run_in_thread (task, probe_thread);
    }
  if (line != NULL)
    *line = p->line;
  if (has_gpu != NULL)
    *has_gpu = p->has_gpu;
  return p->state;
}
