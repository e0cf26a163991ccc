/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-test-sshd.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SSHD "/usr/sbin/sshd"

gboolean
test_sshd_available (void)
{
  g_autofree char *ssh = g_find_program_in_path ("ssh");
  g_autofree char *keygen = g_find_program_in_path ("ssh-keygen");
  return ssh && keygen && g_file_test (SSHD, G_FILE_TEST_IS_EXECUTABLE);
}

static int
free_port (void)
{
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                            G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (socket);
  g_assert_true (g_socket_bind (socket, any, FALSE, &error));
  g_assert_no_error (error);
  bound = g_socket_get_local_address (socket, &error);
  g_assert_no_error (error);
  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

static char *
keygen (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *pub_path = g_strconcat (path, ".pub", NULL);
  const char *argv[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path, NULL };
  g_autoptr(GError) error = NULL;
  char *pub = NULL;
  int wait_status;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                NULL, NULL, NULL, NULL, &wait_status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (wait_status, NULL));
  g_assert_true (g_file_get_contents (pub_path, &pub, NULL, NULL));
  return g_strstrip (pub);
}

static void
write_file (const char *dir, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GError) error = NULL;
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
}

static gboolean
accepts (int port)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketConnection) connection =
    g_socket_client_connect_to_host (client, "127.0.0.1", port, NULL, NULL);
  return connection != NULL;
}

/* A Host block of the client config, valid until four more calls (the caller concatenates
 * four blocks at once). */
static const char *
host_block (const char *alias, int port, const char *dir, const char *key,
            const char *known_hosts, const char *strict)
{
  static char *ring[4];
  static guint next;
  char **slot = &ring[next++ % G_N_ELEMENTS (ring)];

  g_free (*slot);
  *slot = g_strdup_printf ("Host %s\n  HostName 127.0.0.1\n  Port %d\n  User %s\n"
                           "  IdentityFile %s/%s\n  IdentitiesOnly yes\n  IdentityAgent none\n"
                           "  HostKeyAlias fusebench-test-host\n  UserKnownHostsFile %s/%s\n"
                           "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking %s\n"
                           "  PasswordAuthentication no\n  KbdInteractiveAuthentication no\n",
                           alias, port, g_get_user_name (), dir, key, dir, known_hosts, strict);
  return *slot;
}

/* A server left behind by a test that failed half-way would hold its port forever. */
static void
die_with_parent (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGTERM);
}

gboolean
test_sshd_can_fill (void)
{
  return geteuid () == 0;
}

/* The stand-in GPU host's nvidia-smi and libraries. */
static void
make_fake_gpu (const char *dir)
{
  g_autofree char *bin = g_build_filename (dir, "fake-gpu", "bin", NULL);
  g_autofree char *lib = g_build_filename (dir, "fake-gpu", "lib", NULL);
  g_autofree char *smi = g_build_filename (bin, "nvidia-smi", NULL);
  const char *libs[] = { "libcuda.so.1", "libcublasLt.so.13", "libcupti.so.13" };

  g_assert_cmpint (g_mkdir_with_parents (bin, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (lib, 0755), ==, 0);
  write_file (bin, "nvidia-smi", "#!/bin/sh\necho 'NVIDIA H200, 580.95.05'\n");
  g_assert_cmpint (g_chmod (smi, 0755), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (libs); i++)
    write_file (lib, libs[i], "");
}

TestSshd *
test_sshd_start (TestSshdCache cache)
{
  TestSshd *s = g_new0 (TestSshd, 1);
  g_autoptr(GError) error = NULL;
  g_autofree char *host_pub = NULL, *user_pub = NULL, *other_pub = NULL, *text = NULL;
  g_autofree char *sshd_config = NULL, *log = NULL, *port = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_auto(GStrv) host_fields = NULL;
  int gpu_port;
  gboolean root = geteuid () == 0;
  gboolean read_only_cache = cache == TEST_SSHD_CACHE_READ_ONLY;
  const char *mode = cache == TEST_SSHD_CACHE_READ_ONLY ? "ro"
                     : cache == TEST_SSHD_CACHE_FULL ? "full" : "rw";

  g_assert_true (cache != TEST_SSHD_CACHE_FULL || test_sshd_can_fill ());

  s->dir = g_dir_make_tmp ("fb-test-sshd-XXXXXX", &error);
  g_assert_no_error (error);
  s->cache = g_build_filename (s->dir, "remote-cache", NULL);
  g_assert_cmpint (g_mkdir (s->cache, 0755), ==, 0);
  s->port = free_port ();
  gpu_port = free_port ();
  host_pub = keygen (s->dir, "host_key");
  user_pub = keygen (s->dir, "user_key");
  other_pub = keygen (s->dir, "other_key");
  host_fields = g_strsplit (host_pub, " ", 3);

  text = g_strdup_printf ("%s\n", user_pub);
  write_file (s->dir, "authorized_keys", text);
  g_free (text);
  text = g_strdup_printf ("fusebench-test-host %s %s\n", host_fields[0], host_fields[1]);
  write_file (s->dir, "known_hosts", text);
  write_file (s->dir, "known_hosts_empty", "");
  g_free (text);
  /* The stand-in GPU host is the same server on a second port, whose sessions get the
   * stand-in's folders: sshd sets PATH after the client's variables, its own SetEnv after
   * PATH, and the first SetEnv that applies is the one it takes. */
  text = g_strdup_printf ("Port %d\nPort %d\nListenAddress 127.0.0.1\nHostKey %s/host_key\n"
                          "PidFile %s/sshd.pid\nAuthorizedKeysFile %s/authorized_keys\n"
                          "StrictModes no\nUsePAM no\nPasswordAuthentication no\n"
                          "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
                          "PermitRootLogin prohibit-password\nAllowTcpForwarding no\n"
                          "X11Forwarding no\nPrintMotd no\n"
                          "Match LocalPort %d\n  SetEnv XDG_CACHE_HOME=%s\n"
                          "Match LocalPort %d\n  SetEnv XDG_CACHE_HOME=%s "
                          "PATH=%s/fake-gpu/bin:/usr/local/bin:/usr/bin:/bin "
                          "FUSEBENCH_CUDA_LIBRARY_PATH=%s/fake-gpu/lib\n",
                          s->port, gpu_port, s->dir, s->dir, s->dir, s->port, s->cache, gpu_port,
                          s->cache, s->dir, s->dir);
  write_file (s->dir, "sshd_config", text);
  g_free (text);
  /* One block per alias: IdentityFile adds up over matching blocks, so no block is shared. */
  text = g_strconcat (host_block ("fbtest", s->port, s->dir, "user_key", "known_hosts", "yes"),
                      host_block ("fbtest-wrongkey", s->port, s->dir, "other_key", "known_hosts",
                                  "yes"),
                      host_block ("fbtest-unknown", s->port, s->dir, "user_key",
                                  "known_hosts_empty", "ask"),
                      host_block ("fbtest-closed", free_port (), s->dir, "user_key", "known_hosts",
                                  "yes"), NULL);
  {
    g_autofree char *all = g_strconcat (text, host_block ("fbtest-gpu", gpu_port, s->dir,
                                                          "user_key", "known_hosts", "yes"),
                                        NULL);
    make_fake_gpu (s->dir);
    write_file (s->dir, "ssh_config", all);
  }
  s->config = g_build_filename (s->dir, "ssh_config", NULL);

  sshd_config = g_build_filename (s->dir, "sshd_config", NULL);
  log = g_build_filename (s->dir, "sshd.log", NULL);
  g_subprocess_launcher_set_stderr_file_path (launcher, log);
  g_subprocess_launcher_set_child_setup (launcher, die_with_parent, NULL, NULL);
  if (root && (cache != TEST_SSHD_CACHE_WRITABLE || !g_file_test ("/run/sshd", G_FILE_TEST_IS_DIR)))
    /* sshd as root wants its privilege-separation folder /run/sshd, which only the system
     * service makes, and root writes through any permission: a mount namespace of the
     * server's own gives it both (a private /run, a read-only cache) and leaves the
     * machine's mounts alone. */
    s->sshd = g_subprocess_launcher_spawn (launcher, &error, "unshare", "-m", "sh", "-c",
      "set -e; mount --make-rprivate /; "
      "if [ ! -d /run/sshd ]; then mount -t tmpfs -o mode=755 fb-test /run; "
      "mkdir -m 755 /run/sshd; fi; "
      "if [ \"$1\" = ro ]; then mount --bind \"$2\" \"$2\"; mount -o remount,ro,bind \"$2\" \"$2\"; fi; "
      "if [ \"$1\" = full ]; then mount -t tmpfs -o size=1m,mode=755 fb-test-full \"$2\"; fi; "
      "exec " SSHD " -D -e -f \"$3\"",
      "sh", mode, s->cache, sshd_config, NULL);
  else
    {
      if (read_only_cache)
        g_assert_cmpint (g_chmod (s->cache, 0555), ==, 0);
      s->sshd = g_subprocess_launcher_spawn (launcher, &error, SSHD, "-D", "-e", "-f",
                                             sshd_config, NULL);
    }
  g_assert_no_error (error);
  for (int i = 0; i < 200 && !accepts (s->port); i++)
    {
      g_usleep (50 * 1000);
      if (g_subprocess_get_identifier (s->sshd) == NULL)
        break;
    }
  if (!accepts (s->port))
    {
      g_autofree char *said = NULL;
      g_file_get_contents (log, &said, NULL, NULL);
      g_error ("sshd did not start: %s", said ? said : "(no log)");
    }
  return s;
}

static int
parent_of (const char *pid)
{
  g_autofree char *path = g_build_filename ("/proc", pid, "stat", NULL);
  g_autofree char *stat = NULL;
  const char *close;
  int ppid = -1;

  /* The command name may hold spaces and parentheses: the fields follow the last ')'. */
  if (g_file_get_contents (path, &stat, NULL, NULL) && (close = strrchr (stat, ')')) != NULL)
    sscanf (close + 1, " %*c %d", &ppid);
  return ppid;
}

static gboolean
is_sshd (int pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/comm", pid);
  g_autofree char *comm = NULL;
  return g_file_get_contents (path, &comm, NULL, NULL) && g_str_equal (g_strstrip (comm), "sshd");
}

guint
test_sshd_drop_connections (TestSshd *s)
{
  int listener = atoi (g_subprocess_get_identifier (s->sshd));
  g_autoptr(GArray) tree = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr(GHashTable) parents = g_hash_table_new (NULL, NULL);
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint killed = 0;

  while ((name = g_dir_read_name (proc)) != NULL)
    if (g_ascii_isdigit (name[0]))
      g_hash_table_insert (parents, GINT_TO_POINTER (atoi (name)),
                           GINT_TO_POINTER (parent_of (name)));
  g_array_append_val (tree, listener);
  for (guint i = 0; i < tree->len; i++)
    {
      GHashTableIter iter;
      gpointer pid, ppid;
      g_hash_table_iter_init (&iter, parents);
      while (g_hash_table_iter_next (&iter, &pid, &ppid))
        if (GPOINTER_TO_INT (ppid) == g_array_index (tree, int, i))
          {
            int child = GPOINTER_TO_INT (pid);
            g_array_append_val (tree, child);
          }
    }
  /* The session's sshd processes hold the connection and the pipes of the command there; the
   * command itself is left to notice, as it would be after a network failure. */
  for (guint i = 1; i < tree->len; i++)
    if (is_sshd (g_array_index (tree, int, i)) && kill (g_array_index (tree, int, i), SIGKILL) == 0)
      killed++;
  return killed;
}

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) dir = NULL;
  const char *name;

  g_chmod (path, 0755);
  if (!g_file_test (path, G_FILE_TEST_IS_SYMLINK) && (dir = g_dir_open (path, 0, NULL)) != NULL)
    while ((name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *child = g_build_filename (path, name, NULL);
        remove_tree (child);
      }
  g_remove (path);
}

void
test_sshd_stop (TestSshd *s)
{
  if (s == NULL)
    return;
  g_subprocess_send_signal (s->sshd, SIGTERM);
  g_subprocess_wait (s->sshd, NULL, NULL);
  g_object_unref (s->sshd);
  remove_tree (s->dir);
  g_free (s->dir);
  g_free (s->config);
  g_free (s->cache);
  g_free (s);
}
