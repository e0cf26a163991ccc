/* SPDX-License-Identifier: GPL-3.0-or-later */
/* --remote through a real OpenSSH server on 127.0.0.1 (fb-test-sshd.c): profile, run and check
 * on "the remote" with the cpu target give what they give here; the runner (the pack built
 * with the app, found beside the binary) is copied once, by its SHA-256, and a damaged or
 * partial copy is replaced and never run; each fault (wrong key, closed port, unknown host
 * key, the connection killed mid-run, a read-only or full cache there, a runner of another
 * version, the cuda target where there is no GPU, a host that is an option) exits 1 (2 for the
 * option) with a message naming the host and what failed, and leaves nothing behind here or
 * there. The device probe tells a host without a GPU from one with. */
#include "fb-test-cli.h"
#include "fb-test-sshd.h"
#include "fb-profile.h"
#include "fb-remote.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <unistd.h>

static TestSshd *server;

static char *
sample (void)
{
  return test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
}

static guint
count_entries (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  guint n = 0;

  while (dir && g_dir_read_name (dir))
    n++;
  return n;
}

/* The work folders there are gone: every command removes its own. */
static void
assert_no_work_left (TestSshd *s)
{
  g_autofree char *work = g_build_filename (s->cache, "fusebench", "jobs", NULL);
  g_assert_cmpuint (count_entries (work), ==, 0);
}

/* What fusebench sends: the pack the build made, else the binary itself. */
static const char *
local_runner (void)
{
  const char *pack = g_getenv ("FUSEBENCH_RUNNER_PACK");
  return pack && *pack ? pack : g_getenv ("FUSEBENCH");
}

static gboolean
runner_is_pack (void)
{
  return g_str_has_suffix (local_runner (), ".tar.xz");
}

/* The one runner installed, by SHA-256 (its folder): the file copied there, or NULL. */
static char *
installed_runner (TestSshd *s)
{
  g_autofree char *runners = g_build_filename (s->cache, "fusebench", "runner", NULL);
  g_autoptr(GDir) dir = g_dir_open (runners, 0, NULL);
  const char *name = dir ? g_dir_read_name (dir) : NULL;

  return name ? g_build_filename (runners, name, runner_is_pack () ? "fusebench.tar.xz"
                                                                   : "fusebench", NULL)
              : NULL;
}

/* The program there that would run: the pack's fusebench, or the binary. */
static char *
installed_program (TestSshd *s)
{
  g_autofree char *file = installed_runner (s);
  g_autofree char *dir = file ? g_path_get_dirname (file) : NULL;

  if (file == NULL)
    return NULL;
  return runner_is_pack () ? g_build_filename (dir, "pack", "fusebench", "bin", "fusebench", NULL)
                           : g_steal_pointer (&file);
}

static char *
sha256_of (const char *path)
{
  g_autofree char *data = NULL;
  gsize length;

  g_assert_true (g_file_get_contents (path, &data, &length, NULL));
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) data, length);
}

static GPtrArray *
kernel_names (const FbProfile *p)
{
  GPtrArray *names = g_ptr_array_new ();
  for (guint i = 0; i < p->kernels->len; i++)
    g_ptr_array_add (names, ((FbProfileKernel *) g_ptr_array_index (p->kernels, i))->name);
  return names;
}

static void
test_profile (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = sample ();
  g_autofree char *dir = g_dir_make_tmp ("fb-remote-XXXXXX", &error);
  g_autofree char *remote_json = g_build_filename (dir, "remote.json", NULL);
  g_autofree char *local_json = g_build_filename (dir, "local.json", NULL);
  g_autofree char *trace = g_build_filename (dir, "trace.json", NULL);
  g_autofree char *runner = NULL, *sha = NULL, *self_sha = NULL;
  g_autoptr(TestRun) remote = NULL, local = NULL, again = NULL;
  g_autoptr(FbProfile) r = NULL, l = NULL;
  g_autoptr(GPtrArray) rk = NULL, lk = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();

  remote = test_run_fusebench ("profile", model, "--remote", "fbtest", "--target", "cpu",
                               "--iterations", "3", "--warmup", "1", "-o", remote_json,
                               "--chrome-trace", trace, NULL);
  if (remote->status != 0)
    g_error ("remote profile failed: %s", remote->err);
  /* The first run copies the runner there; progress came back as lines. */
  g_assert_nonnull (strstr (remote->err, "copying the runner to fbtest"));
  g_assert_nonnull (strstr (remote->err, "progress 1.000 summarizing"));
  g_assert_nonnull (strstr (remote->out, "diagnosis:"));
  local = test_run_fusebench ("profile", model, "--target", "cpu", "--iterations", "3",
                              "--warmup", "1", "-o", local_json, NULL);
  g_assert_cmpint (local->status, ==, 0);

  /* Read back as a profile, it has the local one's structure: same model, target, kernels
   * (names and order) and folded nodes. */
  r = fb_profile_load (remote_json, &error);
  g_assert_no_error (error);
  l = fb_profile_load (local_json, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (r->model, ==, l->model);
  g_assert_cmpstr (r->target, ==, l->target);
  g_assert_cmpuint (r->kernels->len, ==, l->kernels->len);
  g_assert_cmpuint (r->kernels->len, >, 0);
  rk = kernel_names (r);
  lk = kernel_names (l);
  for (guint i = 0; i < rk->len; i++)
    g_assert_cmpstr (g_ptr_array_index (rk, i), ==, g_ptr_array_index (lk, i));
  g_assert_cmpuint (r->folded->len, ==, l->folded->len);
  g_assert_cmpuint (r->iterations, ==, 3);
  g_assert_true (json_parser_load_from_file (parser, trace, &error));
  g_assert_no_error (error);

  /* Nothing half-written here (no .part files beside the outputs), nothing left there. */
  g_assert_cmpuint (count_entries (dir), ==, 3);
  assert_no_work_left (server);
  runner = installed_runner (server);
  g_assert_nonnull (runner);
  sha = sha256_of (runner);
  self_sha = sha256_of (local_runner ());
  g_assert_cmpstr (sha, ==, self_sha);
  g_assert_nonnull (strstr (runner, self_sha));

  /* Once per version: the second run uses the copy there. */
  again = test_run_fusebench ("profile", model, "--remote", "fbtest", "--iterations", "1",
                              "--warmup", "1", "--json", NULL);
  g_assert_cmpint (again->status, ==, 0);
  g_assert_null (strstr (again->err, "copying the runner"));
  g_assert_true (json_parser_load_from_data (parser, again->out, -1, &error));
  g_assert_no_error (error);

  g_unlink (remote_json);
  g_unlink (local_json);
  g_unlink (trace);
  g_rmdir (dir);
}

/* Damages the copy there with damage, then profiles: the copy is replaced, never run (the
 * program there is swapped for one that would leave a mark if it ran). */
static void
assert_replaced_after (void (*damage) (const char *file))
{
  g_autofree char *model = sample ();
  g_autofree char *runner = NULL, *program = NULL, *mark = NULL, *fake = NULL;
  g_autofree char *sha = NULL, *self_sha = NULL;
  g_autoptr(TestRun) first = NULL, run = NULL;
  g_autoptr(GError) error = NULL;

  first = test_run_fusebench ("profile", model, "--remote", "fbtest", "--iterations", "1",
                              "--warmup", "1", NULL);
  g_assert_cmpint (first->status, ==, 0);
  runner = installed_runner (server);
  program = installed_program (server);
  mark = g_build_filename (server->dir, "damaged-runner-ran", NULL);
  fake = g_strdup_printf ("#!/bin/sh\ntouch '%s'\necho 'fusebench " "%s'\n", mark, "0.1.0");
  g_unlink (program);
  g_file_set_contents (program, fake, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_chmod (program, 0755), ==, 0);
  if (damage != NULL)
    damage (runner);

  run = test_run_fusebench ("profile", model, "--remote", "fbtest", "--iterations", "1",
                            "--warmup", "1", NULL);
  if (run->status != 0)
    g_error ("profile after damage failed: %s", run->err);
  g_assert_nonnull (strstr (run->err, "copying the runner"));
  g_assert_false (g_file_test (mark, G_FILE_TEST_EXISTS));
  sha = sha256_of (runner);
  self_sha = sha256_of (local_runner ());
  g_assert_cmpstr (sha, ==, self_sha);
  assert_no_work_left (server);
}

/* A partial copy: the file cut short, as a copy that ran out of time or space leaves it. */
static void
truncate_file (const char *file)
{
  g_assert_cmpint (truncate (file, 4096), ==, 0);
}

/* The program there no longer what was unpacked (a damaged disk, a tampered file): for a pack,
 * its archive still checks, its unpacked files do not. */
static void
test_damaged_runner (void)
{
  assert_replaced_after (NULL);
}

static void
test_partial_runner (void)
{
  assert_replaced_after (truncate_file);
}

static void
assert_fails (const char *host, const char *message)
{
  g_autofree char *model = sample ();
  g_autoptr(TestRun) run = test_run_fusebench ("profile", model, "--remote", host,
                                               "--iterations", "1", "--warmup", "1", NULL);
  g_autofree char *expected = g_strdup_printf ("fusebench: %s: %s", host, message);

  g_assert_cmpint (run->status, ==, 1);
  if (strstr (run->err, expected) == NULL)
    g_error ("expected '%s' in: %s", expected, run->err);
  /* One line, naming host and what failed. */
  g_assert_cmpuint (strlen (run->err), ==, strcspn (run->err, "\n") + 1);
  g_assert_cmpstr (run->out, ==, "");
}

static void
test_wrong_key (void)
{
  assert_fails ("fbtest-wrongkey", "the host refused our keys");
}

static void
test_closed_port (void)
{
  assert_fails ("fbtest-closed", "connection refused");
}

static void
test_unknown_host_key (void)
{
  assert_fails ("fbtest-unknown", "the host's key is not known here or has changed");
}

static void
test_version_mismatch (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *fake = g_build_filename (server->dir, "old-runner", NULL);

  g_file_set_contents (fake, "#!/bin/sh\necho 'fusebench 0.0.1-old'\n", -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_chmod (fake, 0755), ==, 0);
  g_setenv ("FUSEBENCH_REMOTE_RUNNER", fake, TRUE);
  {
    g_autofree char *model = sample ();
    g_autoptr(TestRun) run = test_run_fusebench ("profile", model, "--remote", "fbtest", NULL);
    g_assert_cmpint (run->status, ==, 1);
    g_assert_nonnull (strstr (run->err, "copying the runner to fbtest"));
    if (strstr (run->err, "fusebench: fbtest: the runner there (") == NULL ||
        strstr (run->err, ") says 'fusebench 0.0.1-old', this is fusebench ") == NULL)
      g_error ("unexpected: %s", run->err);
  }
  /* Copied once: the second time it is refused at once, in one line. */
  assert_fails ("fbtest", "the runner there");
  g_unsetenv ("FUSEBENCH_REMOTE_RUNNER");
  assert_no_work_left (server);
}

/* The host has no GPU (the local sshd's host is this machine): the runner there says so, in
 * one line naming the host; the cpu target runs there (test_profile). */
static void
test_no_gpu (void)
{
  g_autofree char *model = sample ();
  g_autoptr(TestRun) run = test_run_fusebench ("profile", model, "--remote", "fbtest",
                                               "--target", "cuda", "--iterations", "1", NULL);

  g_assert_cmpint (run->status, ==, 1);
  if (strstr (run->err, "fusebench: fbtest: ") == NULL || strstr (run->err, "cuda") == NULL)
    g_error ("unexpected: %s", run->err);
  g_assert_cmpstr (run->out, ==, "");
  assert_no_work_left (server);
}

/* The cache there on a file system with no room for the runner: said, and nothing left. */
static void
test_disk_full (void)
{
  TestSshd *full = test_sshd_start (TEST_SSHD_CACHE_FULL);
  g_autofree char *model = sample ();
  g_autofree char *jobs = NULL, *runners = NULL;
  g_autoptr(TestRun) run = NULL;

  g_setenv ("FUSEBENCH_SSH_CONFIG", full->config, TRUE);
  run = test_run_fusebench ("profile", model, "--remote", "fbtest", "--iterations", "1", NULL);
  g_setenv ("FUSEBENCH_SSH_CONFIG", server->config, TRUE);
  g_assert_cmpint (run->status, ==, 1);
  if (strstr (run->err, "fusebench: fbtest: copying the runner into the cache: no space left "
                        "there") == NULL)
    g_error ("unexpected: %s", run->err);
  /* Neither the partial copy nor the work folder stays there. */
  jobs = g_build_filename (full->cache, "fusebench", "jobs", NULL);
  g_assert_cmpuint (count_entries (jobs), ==, 0);
  runners = installed_runner (full);
  if (runners != NULL)
    {
      g_autofree char *folder = g_path_get_dirname (runners);
      g_assert_cmpuint (count_entries (folder), ==, 0);
    }
  test_sshd_stop (full);
}

/* The device probe: this machine's sshd is a host without a GPU; the stand-in is an H200. */
static void
test_probe (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbRemote) plain = fb_remote_new ("fbtest", &error);
  g_autoptr(FbRemote) gpu = fb_remote_new ("fbtest-gpu", &error);
  g_autoptr(FbRemote) closed = fb_remote_new ("fbtest-closed", &error);
  g_autoptr(FbRemoteDevice) none = NULL, h200 = NULL, nothing = NULL;
  g_autofree char *none_line = NULL, *h200_line = NULL;

  none = fb_remote_probe (plain, NULL, &error);
  g_assert_no_error (error);
  none_line = fb_remote_device_describe (none);
  g_test_message ("fbtest: %s", none_line);
  g_assert_false (fb_remote_device_has_gpu (none));
  g_assert_true (g_str_has_prefix (none_line, "no GPU: cpu only"));
  g_assert_nonnull (none->arch);

  h200 = fb_remote_probe (gpu, NULL, &error);
  g_assert_no_error (error);
  h200_line = fb_remote_device_describe (h200);
  g_test_message ("fbtest-gpu: %s", h200_line);
  g_assert_true (fb_remote_device_has_gpu (h200));
  /* cuDNN is no stand-in: found when this machine has it, named missing when not. */
  g_assert_true (g_str_has_prefix (h200_line, "NVIDIA H200 · driver 580.95.05 · CUDA libraries: "
                                              "cuBLASLt, "));
  g_assert_nonnull (strstr (h200_line, "CUPTI"));
  g_assert_true (strstr (h200_line, "cuDNN") != NULL || strstr (h200_line, "missing: libcudnn.so.9"));

  nothing = fb_remote_probe (closed, NULL, &error);
  g_assert_null (nothing);
  g_assert_error (error, FB_REMOTE_ERROR, FB_REMOTE_ERROR_UNREACHABLE);
  g_assert_true (g_str_has_prefix (error->message, "fbtest-closed: connection refused"));
}

static void
test_not_a_host (void)
{
  g_autofree char *model = sample ();
  g_autoptr(TestRun) run = test_run_fusebench ("profile", model, "--remote", "-oProxyCommand=x",
                                               NULL);
  g_assert_cmpint (run->status, ==, 2);
  g_assert_nonnull (strstr (run->err, "not an ssh destination"));
}

static void
test_read_only_cache (void)
{
  TestSshd *ro = test_sshd_start (TEST_SSHD_CACHE_READ_ONLY);
  g_autofree char *model = sample ();
  g_autoptr(TestRun) run = NULL;

  g_setenv ("FUSEBENCH_SSH_CONFIG", ro->config, TRUE);
  run = test_run_fusebench ("profile", model, "--remote", "fbtest", "--iterations", "1", NULL);
  g_setenv ("FUSEBENCH_SSH_CONFIG", server->config, TRUE);
  g_assert_cmpint (run->status, ==, 1);
  if (strstr (run->err, "fusebench: fbtest: making a work folder in the cache: the cache there is") == NULL)
    g_error ("unexpected: %s", run->err);
  g_assert_cmpuint (count_entries (ro->cache), ==, 0);
  test_sshd_stop (ro);
}

/* Processes there still running in a work folder of the cache. */
static guint
remote_processes (TestSshd *s)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  g_autofree char *work = g_build_filename (s->cache, "fusebench", NULL);
  const char *name;
  guint n = 0;

  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc", name, "cmdline", NULL);
      g_autofree char *cmdline = NULL;
      gsize length;
      if (!g_ascii_isdigit (name[0]) || !g_file_get_contents (path, &cmdline, &length, NULL))
        continue;
      for (gsize i = 0; i + 1 < length; i++)
        if (cmdline[i] == '\0')
          cmdline[i] = ' ';
      if (strstr (cmdline, work) && strstr (cmdline, " profile "))
        n++;
    }
  return n;
}

static void
test_killed_connection (void)
{
  g_autofree char *model = sample ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) p =
    g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                      g_getenv ("FUSEBENCH"), "profile", model, "--remote", "fbtest",
                      "--iterations", "100000000", "--warmup", "1", NULL);
  g_autoptr(GDataInputStream) err = NULL;
  g_autoptr(GString) said = g_string_new (NULL);
  char *line;
  gboolean running = FALSE;

  g_assert_no_error (error);
  err = g_data_input_stream_new (g_subprocess_get_stderr_pipe (p));
  /* Measuring has begun there: the runner is busy inferring. */
  while (!running && (line = g_data_input_stream_read_line (err, NULL, NULL, NULL)) != NULL)
    {
      g_string_append_printf (said, "%s\n", line);
      running = g_str_has_prefix (line, "progress 0.0") && strstr (line, "inference");
      g_free (line);
    }
  if (!running)
    g_error ("the run never got going: %s", said->str);
  g_assert_cmpuint (remote_processes (server), >, 0);
  g_assert_cmpuint (test_sshd_drop_connections (server), >, 0);
  while ((line = g_data_input_stream_read_line (err, NULL, NULL, NULL)) != NULL)
    {
      g_string_append_printf (said, "%s\n", line);
      g_free (line);
    }
  g_subprocess_wait (p, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (p));
  g_assert_cmpint (g_subprocess_get_exit_status (p), ==, 1);
  if (strstr (said->str, "fusebench: fbtest: the connection dropped during the run; the process "
                         "there was ended") == NULL)
    g_error ("unexpected: %s", said->str);
  /* The remote process noticed the end of its connection and was ended, and its work folder
   * went with it. */
  for (int i = 0; i < 100 && remote_processes (server) > 0; i++)
    g_usleep (100 * 1000);
  g_assert_cmpuint (remote_processes (server), ==, 0);
  assert_no_work_left (server);
}

static void
test_run (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = sample ();
  g_autofree char *inputs = test_source_path ("data", "models", "sample-cnn", "test_data_set_0", NULL);
  g_autofree char *dir = g_dir_make_tmp ("fb-remote-run-XXXXXX", &error);
  g_autofree char *there = g_build_filename (dir, "there", NULL);
  g_autofree char *here = g_build_filename (dir, "here", NULL);
  g_autofree char *there_out = g_build_filename (there, "output_0.pb", NULL);
  g_autofree char *here_out = g_build_filename (here, "output_0.pb", NULL);
  g_autofree char *a = NULL, *b = NULL;
  gsize na, nb;
  g_autoptr(TestRun) remote = test_run_fusebench ("run", model, "--remote", "fbtest", "--target",
                                                  "cpu", "--input-dir", inputs, "--output-dir",
                                                  there, "--json", NULL);
  g_autoptr(TestRun) local = test_run_fusebench ("run", model, "--target", "cpu", "--input-dir",
                                                 inputs, "--output-dir", here, "--json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();

  if (remote->status != 0)
    g_error ("remote run failed: %s", remote->err);
  g_assert_cmpint (local->status, ==, 0);
  /* The same binary on the same machine: the same bytes. */
  g_assert_true (g_file_get_contents (there_out, &a, &na, NULL));
  g_assert_true (g_file_get_contents (here_out, &b, &nb, NULL));
  g_assert_cmpmem (a, na, b, nb);
  g_assert_true (json_parser_load_from_data (parser, remote->out, -1, &error));
  g_assert_no_error (error);
  /* It names the model as given here, not as filed there. */
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json_parser_get_root (parser)),
                                                  "model"), ==, model);
  assert_no_work_left (server);
  /* The sample has two outputs: empty both folders. */
  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *name = g_strdup_printf ("output_%u.pb", i);
      g_autofree char *a_path = g_build_filename (there, name, NULL);
      g_autofree char *b_path = g_build_filename (here, name, NULL);
      g_unlink (a_path);
      g_unlink (b_path);
    }
  g_assert_cmpint (g_rmdir (there), ==, 0);
  g_assert_cmpint (g_rmdir (here), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

static void
test_check (void)
{
  g_autofree char *cases = test_source_path ("data", "models", "sample-cnn", NULL);
  g_autoptr(TestRun) run = test_run_fusebench ("check", cases, "--remote", "fbtest", "--target",
                                               "cpu", NULL);
  g_autofree char *pass = g_strdup_printf ("PASS %s  ", cases);

  if (run->status != 0)
    g_error ("remote check failed: %s", run->err);
  g_assert_true (g_str_has_prefix (run->out, pass));
  g_assert_nonnull (strstr (run->out, "1 case: 1 passed, 0 failed"));
  assert_no_work_left (server);
}

static void
skip_no_sshd (void)
{
  g_test_skip ("OpenSSH's sshd, ssh and ssh-keygen are not installed "
               "(openssh-server, openssh-client)");
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  if (!test_sshd_available ())
    {
      g_test_add_func ("/remote/no-sshd", skip_no_sshd);
      return g_test_run ();
    }
  server = test_sshd_start (TEST_SSHD_CACHE_WRITABLE);
  g_setenv ("FUSEBENCH_SSH_CONFIG", server->config, TRUE);
  g_unsetenv ("FUSEBENCH_REMOTE_RUNNER");
  g_test_add_func ("/remote/profile", test_profile);
  g_test_add_func ("/remote/damaged-runner", test_damaged_runner);
  g_test_add_func ("/remote/partial-runner", test_partial_runner);
  g_test_add_func ("/remote/probe", test_probe);
  g_test_add_func ("/remote/no-gpu", test_no_gpu);
  g_test_add_func ("/remote/run", test_run);
  g_test_add_func ("/remote/check", test_check);
  g_test_add_func ("/remote/wrong-key", test_wrong_key);
  g_test_add_func ("/remote/closed-port", test_closed_port);
  g_test_add_func ("/remote/unknown-host-key", test_unknown_host_key);
  g_test_add_func ("/remote/version-mismatch", test_version_mismatch);
  g_test_add_func ("/remote/not-a-host", test_not_a_host);
  g_test_add_func ("/remote/read-only-cache", test_read_only_cache);
  /* A full file system there needs a mount of its own: root's, as the test machines run. */
  if (test_sshd_can_fill ())
    g_test_add_func ("/remote/disk-full", test_disk_full);
  g_test_add_func ("/remote/killed-connection", test_killed_connection);
  status = g_test_run ();
  test_sshd_stop (server);
  return status;
}
