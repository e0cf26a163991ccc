/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Worker processes that run Graphviz "dot", so that groups are laid out on every core.
 *
 * Graphviz 2.4x keeps the state of dot's passes in globals (mincross, position, the error
 * stream): two layouts in two threads of one process corrupt each other, one GVC per thread or
 * not. A process per core has its own copy of those globals. Each worker is forked from this
 * process with Graphviz already loaded and warmed up (and its lock held, so its state is whole);
 * after the fork it uses nothing but Graphviz, malloc and its socket, which is what a child of
 * a threaded process may safely use. It serves one request at a time: the sizes of a group's
 * boxes and its edges in, the places and the edge paths out, numbers as raw doubles, so that a
 * worker's layout is bit for bit the one this process would have made. A worker ends when its
 * socket closes, that is when this process ends. */
#include "fb-graph-layout-private.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct _FbLayoutWorker {
  GPid pid;
  int  fd;
};

static GMutex     pool_mutex;
static GPtrArray *idle_workers;
static guint      n_alive;

static gboolean
read_all (int    fd,
          void  *data,
          gsize  size)
{
  char *p = data;

  while (size > 0)
    {
      ssize_t n = read (fd, p, size);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      p += n;
      size -= n;
    }
  return TRUE;
}

static gboolean
write_all (int         fd,
           const void *data,
           gsize       size)
{
  const char *p = data;

  while (size > 0)
    {
      /* MSG_NOSIGNAL: a worker that died is an error here, not a SIGPIPE. */
      ssize_t n = send (fd, p, size, MSG_NOSIGNAL);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      p += n;
      size -= n;
    }
  return TRUE;
}

/* The worker's side: requests until the socket closes. */
static G_NORETURN void
serve (int fd)
{
  for (;;)
    {
      guint32 head[2], ok;
      FbPlace *sizes;
      FbGroupEdge *edges;
      FbGroupLayout *layout;
      char *message = NULL;
      gboolean sent;

      if (!read_all (fd, head, sizeof head))
        _exit (0);
      sizes = g_new0 (FbPlace, MAX (head[0], 1));
      edges = g_new0 (FbGroupEdge, MAX (head[1], 1));
      for (guint i = 0; i < head[0]; i++)
        if (!read_all (fd, &sizes[i].w, sizeof (double)) || !read_all (fd, &sizes[i].h, sizeof (double)))
          _exit (0);
      for (guint i = 0; i < head[1]; i++)
        {
          gint32 ends[2];

          if (!read_all (fd, ends, sizeof ends))
            _exit (0);
          edges[i].from = ends[0];
          edges[i].to = ends[1];
        }
      layout = _fb_graph_dot_place (head[0], sizes, head[1], edges, &message);
      ok = layout != NULL;
      sent = write_all (fd, &ok, sizeof ok);
      if (layout == NULL)
        {
          guint32 len = message != NULL ? strlen (message) : 0;

          sent = sent && write_all (fd, &len, sizeof len) && write_all (fd, message, len);
        }
      else
        {
          sent = sent && write_all (fd, &layout->width, sizeof (double))
                 && write_all (fd, &layout->height, sizeof (double));
          for (guint i = 0; sent && i < layout->n_children; i++)
            sent = write_all (fd, &layout->places[i].cx, sizeof (double))
                   && write_all (fd, &layout->places[i].cy, sizeof (double));
          for (guint i = 0; sent && i < layout->n_edges; i++)
            {
              guint32 n_points = layout->paths[i].n_points;

              sent = write_all (fd, &n_points, sizeof n_points)
                     && write_all (fd, layout->paths[i].points, 2 * sizeof (double) * n_points);
            }
          _fb_group_layout_free (layout);
        }
      if (!sent)
        _exit (0);
      g_free (message);
      g_free (sizes);
      g_free (edges);
    }
}

static FbLayoutWorker *
spawn (void)
{
  FbLayoutWorker *worker;
  int fds[2];
  pid_t pid;

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return NULL;
  _fb_graph_dot_lock_warm ();
  pid = fork ();
  if (pid == 0)
    {
      /* Only its own socket stays open: the sockets of the other workers must close when this
         process ends, or they would wait for requests forever. */
      int fd = fds[1];

      if (fd > 3)
        close_range (3, fd - 1, 0);
      close_range (fd + 1, ~0U, 0);
      serve (fd);
    }
  _fb_graph_dot_unlock ();
  close (fds[1]);
  if (pid < 0)
    {
      close (fds[0]);
      return NULL;
    }
  worker = g_new0 (FbLayoutWorker, 1);
  worker->pid = pid;
  worker->fd = fds[0];
  return worker;
}

static guint
max_workers (void)
{
  const char *env = g_getenv ("FB_LAYOUT_WORKERS");

  if (env != NULL)
    return (guint) g_ascii_strtoull (env, NULL, 10);
  return g_get_num_processors ();
}

FbLayoutWorker *
_fb_layout_worker_acquire (void)
{
  FbLayoutWorker *worker = NULL;

  g_mutex_lock (&pool_mutex);
  if (idle_workers == NULL)
    idle_workers = g_ptr_array_new ();
  if (idle_workers->len > 0)
    worker = g_ptr_array_steal_index (idle_workers, idle_workers->len - 1);
  else if (n_alive < max_workers () && (worker = spawn ()) != NULL)
    n_alive++;
  g_mutex_unlock (&pool_mutex);
  return worker;
}

void
_fb_layout_worker_release (FbLayoutWorker *worker)
{
  if (worker == NULL)
    return;
  if (worker->fd < 0)
    {
      g_free (worker);
      return;
    }
  g_mutex_lock (&pool_mutex);
  g_ptr_array_add (idle_workers, worker);
  g_mutex_unlock (&pool_mutex);
}

/* A worker that failed is closed and reaped; its caller carries on in this process. */
static void
drop (FbLayoutWorker *worker)
{
  close (worker->fd);
  worker->fd = -1;
  kill (worker->pid, SIGKILL);
  waitpid (worker->pid, NULL, 0);
  g_mutex_lock (&pool_mutex);
  n_alive--;
  g_mutex_unlock (&pool_mutex);
}

FbGroupLayout *
_fb_layout_worker_place (FbLayoutWorker    *worker,
                         guint              n,
                         const FbPlace     *sizes,
                         guint              n_edges,
                         const FbGroupEdge *edges,
                         char             **message)
{
  guint32 head[2] = { n, n_edges }, ok = 0;
  g_autoptr(GByteArray) request = g_byte_array_new ();
  FbGroupLayout *layout;

  if (worker->fd < 0)
    return NULL;
  g_byte_array_append (request, (const guint8 *) head, sizeof head);
  for (guint i = 0; i < n; i++)
    {
      g_byte_array_append (request, (const guint8 *) &sizes[i].w, sizeof (double));
      g_byte_array_append (request, (const guint8 *) &sizes[i].h, sizeof (double));
    }
  for (guint i = 0; i < n_edges; i++)
    {
      gint32 ends[2] = { edges[i].from, edges[i].to };

      g_byte_array_append (request, (const guint8 *) ends, sizeof ends);
    }
  if (!write_all (worker->fd, request->data, request->len) || !read_all (worker->fd, &ok, sizeof ok))
    goto failed;
  if (!ok)
    {
      guint32 len;
      char *text;

      if (!read_all (worker->fd, &len, sizeof len))
        goto failed;
      text = g_malloc0 (len + 1);
      if (!read_all (worker->fd, text, len))
        {
          g_free (text);
          goto failed;
        }
      *message = text;
      return NULL;
    }
  layout = g_new0 (FbGroupLayout, 1);
  layout->n_children = n;
  layout->places = g_new0 (FbPlace, n);
  layout->n_edges = n_edges;
  layout->paths = g_new0 (FbPath, n_edges);
  if (!read_all (worker->fd, &layout->width, sizeof (double)) || !read_all (worker->fd, &layout->height, sizeof (double)))
    goto failed_layout;
  for (guint i = 0; i < n; i++)
    {
      if (!read_all (worker->fd, &layout->places[i].cx, sizeof (double))
          || !read_all (worker->fd, &layout->places[i].cy, sizeof (double)))
        goto failed_layout;
      layout->places[i].w = sizes[i].w;
      layout->places[i].h = sizes[i].h;
    }
  for (guint i = 0; i < n_edges; i++)
    {
      guint32 n_points;

      if (!read_all (worker->fd, &n_points, sizeof n_points) || n_points > 1u << 20)
        goto failed_layout;
      layout->paths[i].n_points = n_points;
      layout->paths[i].points = g_new (double, 2 * MAX (n_points, 1));
      if (!read_all (worker->fd, layout->paths[i].points, 2 * sizeof (double) * n_points))
        goto failed_layout;
    }
  return layout;

failed_layout:
  _fb_group_layout_free (layout);
failed:
  drop (worker);
  return NULL;
}
