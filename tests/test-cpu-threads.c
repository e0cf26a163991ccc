/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cpu target's thread count (fb-cpu-threads.c): cgroup quotas read from folders laid out
 * as the kernel lays them out (v2 and v1, nested, none), the order of --threads,
 * FUSEBENCH_THREADS and the affinity mask, `fusebench run` under an affinity mask of one
 * processor saying so, and under OMP_PROC_BIND (which pins its first thread to one processor
 * before any of ours runs) counting every processor it may use; a small model's count cut. */
#include "fb-cpu-threads.h"
#include "fb-test-cli.h"

#include <sched.h>
#include <string.h>

static void
write_file (const char *root, const char *rel, const char *text)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

static char *
fixture_root (void)
{
  g_autoptr(GError) error = NULL;
  char *root = g_dir_make_tmp ("fb-cgroup-XXXXXX", &error);
  g_assert_no_error (error);
  return root;
}

static void
test_cgroup_v2 (void)
{
  g_autofree char *root = fixture_root ();
  const char *self = "0::/machine.slice/box\n";
  /* No file: no quota. */
  g_assert_cmpfloat (fb_cgroup_cpu_quota (root, self), ==, 0);
  write_file (root, "machine.slice/box/cpu.max", "max 100000\n");
  g_assert_cmpfloat (fb_cgroup_cpu_quota (root, self), ==, 0);
  write_file (root, "machine.slice/box/cpu.max", "150000 100000\n");
  g_assert_cmpfloat_with_epsilon (fb_cgroup_cpu_quota (root, self), 1.5, 1e-9);
  /* An ancestor's tighter quota holds for its children too. */
  write_file (root, "machine.slice/cpu.max", "50000 100000\n");
  g_assert_cmpfloat_with_epsilon (fb_cgroup_cpu_quota (root, self), 0.5, 1e-9);
  /* Inside a container the process's cgroup is the root. */
  g_autofree char *inner = fixture_root ();
  write_file (inner, "cpu.max", "400000 100000\n");
  g_assert_cmpfloat_with_epsilon (fb_cgroup_cpu_quota (inner, "0::/\n"), 4, 1e-9);
  /* Nonsense reads as no quota. */
  write_file (inner, "cpu.max", "lots\n");
  g_assert_cmpfloat (fb_cgroup_cpu_quota (inner, "0::/\n"), ==, 0);
  g_assert_cmpfloat (fb_cgroup_cpu_quota (inner, "garbage"), ==, 0);
  g_assert_cmpfloat (fb_cgroup_cpu_quota (inner, NULL), ==, 0);
  test_remove_tree (root);
  test_remove_tree (inner);
}

static void
test_cgroup_v1 (void)
{
  g_autofree char *root = fixture_root ();
  const char *self = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n";
  write_file (root, "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
  write_file (root, "cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  g_assert_cmpfloat (fb_cgroup_cpu_quota (root, self), ==, 0);
  write_file (root, "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");
  g_assert_cmpfloat_with_epsilon (fb_cgroup_cpu_quota (root, self), 2.5, 1e-9);
  /* The memory controller's line says nothing of CPUs. */
  g_assert_cmpfloat (fb_cgroup_cpu_quota (root, "12:memory:/docker/abc\n"), ==, 0);
  test_remove_tree (root);
}

static void
test_order (void)
{
  FbThreadCount count;
  g_unsetenv ("FUSEBENCH_THREADS");
  fb_thread_count_resolve (3, &count);
  g_assert_cmpuint (count.n, ==, 3);
  g_assert_cmpstr (count.source, ==, "--threads");
  g_assert_true (count.asked);
  g_setenv ("FUSEBENCH_THREADS", "5", TRUE);
  fb_thread_count_resolve (3, &count);
  g_assert_cmpuint (count.n, ==, 3);
  fb_thread_count_resolve (0, &count);
  g_assert_cmpuint (count.n, ==, 5);
  g_assert_cmpstr (count.source, ==, "FUSEBENCH_THREADS");
  g_assert_true (count.asked);
  g_setenv ("FUSEBENCH_THREADS", "many", TRUE);
  fb_thread_count_resolve (0, &count);
  g_assert_cmpuint (count.n, >=, 1);
  g_assert_false (count.asked);
  g_assert_nonnull (strstr (count.source, "FUSEBENCH_THREADS=many is no count"));
  g_unsetenv ("FUSEBENCH_THREADS");
}

/* One processor allowed: one thread, and the mask named as the reason where the machine has
 * more; `fusebench run` (which inherits the mask) says the same. */
static void
test_affinity (void)
{
  cpu_set_t all, one;
  g_assert_cmpint (sched_getaffinity (0, sizeof all, &all), ==, 0);
  CPU_ZERO (&one);
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET (c, &all))
      {
        CPU_SET (c, &one);
        break;
      }
  g_assert_cmpint (sched_setaffinity (0, sizeof one, &one), ==, 0);
  g_unsetenv ("FUSEBENCH_THREADS");
  FbThreadCount count;
  fb_thread_count_resolve (0, &count);
  g_assert_cmpuint (count.n, ==, 1);
  gboolean several = g_get_num_processors () > 1 || CPU_COUNT (&all) > 1;
  if (several)
    g_assert_nonnull (strstr (count.source, "affinity mask: 1 of"));

  g_autofree char *model = test_source_path ("tests", "cases", "conv", "model.onnx", NULL);
  g_autofree char *inputs = test_source_path ("tests", "cases", "conv", "test_data_set_0", NULL);
  g_autoptr(TestRun) run = test_run_fusebench ("run", model, "--target", "cpu", "--input-dir",
                                               inputs, NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_nonnull (strstr (run->err, "cpu: 1 thread, from "));
  g_autoptr(TestRun) asked = test_run_fusebench ("run", model, "--target", "cpu", "--input-dir",
                                                 inputs, "--threads", "2", "--json", NULL);
  g_assert_cmpint (asked->status, ==, 0);
  g_assert_nonnull (strstr (asked->out, "\"cpu: 2 threads, from --threads\""));
  g_assert_cmpint (sched_setaffinity (0, sizeof all, &all), ==, 0);
  if (!several)
    g_test_message ("one processor only: the mask could not be told from the machine");
}

/* OpenMP's binding pins the process's first thread to one processor when OpenMP loads; the
 * count must come from the processors the process started with, not from that pin, unless the
 * binding keeps the whole team on that one. */
static void
test_omp_proc_bind (void)
{
  cpu_set_t all;
  g_assert_cmpint (sched_getaffinity (0, sizeof all, &all), ==, 0);
  if (CPU_COUNT (&all) < 2)
    {
      g_test_skip ("one processor allowed: a pin to one could not be told from it");
      return;
    }
  g_autofree char *model = test_source_path ("tests", "cases", "conv", "model.onnx", NULL);
  g_autofree char *inputs = test_source_path ("tests", "cases", "conv", "test_data_set_0", NULL);
  g_autofree char *expected = g_strdup_printf ("cpu: %d threads, from ", CPU_COUNT (&all));
  g_unsetenv ("FUSEBENCH_THREADS");
  /* The case is small enough for the small-model rule to cut the count: off here. */
  g_setenv ("FUSEBENCH_SPLIT_ALL", "1", TRUE);
  g_setenv ("OMP_PROC_BIND", "true", TRUE);
  g_autoptr(TestRun) run = test_run_fusebench ("run", model, "--target", "cpu", "--input-dir",
                                               inputs, NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_nonnull (strstr (run->err, expected));
  g_assert_nonnull (strstr (run->err, "OpenMP's places"));

  /* Bound to the primary thread's place, the whole team shares its one processor: one thread
   * then, not a thread per place. */
  g_setenv ("OMP_PROC_BIND", "master", TRUE);
  g_setenv ("OMP_PLACES", "threads", TRUE);
  g_autoptr(TestRun) primary = test_run_fusebench ("run", model, "--target", "cpu",
                                                   "--input-dir", inputs, NULL);
  g_unsetenv ("OMP_PROC_BIND");
  g_unsetenv ("OMP_PLACES");
  g_unsetenv ("FUSEBENCH_SPLIT_ALL");
  g_assert_cmpint (primary->status, ==, 0);
  g_assert_nonnull (strstr (primary->err, "cpu: 1 thread, from the affinity mask"));
}

/* A model of microseconds runs on one thread where it could have several, and says why; a
 * count asked for, or FUSEBENCH_SPLIT_ALL=1, keeps them. A model of milliseconds keeps them. */
static void
test_small_model (void)
{
  cpu_set_t all;
  g_assert_cmpint (sched_getaffinity (0, sizeof all, &all), ==, 0);
  if (CPU_COUNT (&all) < 2)
    {
      g_test_skip ("one processor allowed: nothing to cut");
      return;
    }
  g_unsetenv ("FUSEBENCH_THREADS");
  g_unsetenv ("FUSEBENCH_SPLIT_ALL");
  g_autofree char *model = test_source_path ("tests", "cases", "conv", "model.onnx", NULL);
  g_autofree char *inputs = test_source_path ("tests", "cases", "conv", "test_data_set_0", NULL);
  g_autoptr(TestRun) small = test_run_fusebench ("run", model, "--target", "cpu", "--input-dir",
                                                 inputs, NULL);
  g_assert_cmpint (small->status, ==, 0);
  g_assert_nonnull (strstr (small->err, "cpu: 1 thread, from "));
  g_assert_nonnull (strstr (small->err, ", cut to 1 for a small model (about "));
  /* A profile says the same of its count. */
  g_autoptr(TestRun) profile = test_run_fusebench ("profile", model, "--target", "cpu",
                                                   "--input-dir", inputs, "--iterations", "3",
                                                   NULL);
  g_assert_cmpint (profile->status, ==, 0);
  g_assert_nonnull (strstr (profile->out, "(1 thread, from "));
  g_assert_nonnull (strstr (profile->out, "cut to 1 for a small model"));
  /* FUSEBENCH_THREADS is a count asked for too. */
  g_setenv ("FUSEBENCH_THREADS", "2", TRUE);
  g_autoptr(TestRun) env = test_run_fusebench ("run", model, "--target", "cpu", "--input-dir",
                                               inputs, NULL);
  g_unsetenv ("FUSEBENCH_THREADS");
  g_assert_cmpint (env->status, ==, 0);
  g_assert_nonnull (strstr (env->err, "cpu: 2 threads, from FUSEBENCH_THREADS"));
  g_autoptr(TestRun) asked = test_run_fusebench ("run", model, "--target", "cpu", "--input-dir",
                                                 inputs, "--threads", "2", NULL);
  g_assert_cmpint (asked->status, ==, 0);
  g_assert_nonnull (strstr (asked->err, "cpu: 2 threads, from --threads"));
  g_setenv ("FUSEBENCH_SPLIT_ALL", "1", TRUE);
  g_autoptr(TestRun) split = test_run_fusebench ("run", model, "--target", "cpu", "--input-dir",
                                                 inputs, NULL);
  g_unsetenv ("FUSEBENCH_SPLIT_ALL");
  g_assert_cmpint (split->status, ==, 0);
  g_assert_null (strstr (split->err, "cut to"));

  g_autofree char *large = test_source_path ("tests", "cases", "direct-conv", "model.onnx", NULL);
  g_autofree char *large_in = test_source_path ("tests", "cases", "direct-conv", "test_data_set_0",
                                                NULL);
  g_autoptr(TestRun) kept = test_run_fusebench ("run", large, "--target", "cpu", "--input-dir",
                                                large_in, NULL);
  g_assert_cmpint (kept->status, ==, 0);
  g_assert_null (strstr (kept->err, "cut to"));
}

/* A split threshold from the environment: a whole positive number, bounded; anything else
 * keeps the default. */
static void
test_split_tuning (void)
{
  const char *var = "FUSEBENCH_SPLIT_MIN_WORK";
  g_unsetenv (var);
  g_assert_cmpfloat (fb_split_tuning (var, 65536), ==, 65536);
  struct { const char *value; double want; } cases[] = {
    { "1", 1 }, { "16384", 16384 }, { "2.5e5", 250000 }, { "1e12", 1e12 },
    { "1e300", FB_SPLIT_TUNING_MAX }, { "inf", FB_SPLIT_TUNING_MAX },
    { "", 65536 }, { "many", 65536 }, { "64k", 65536 }, { "0", 65536 }, { "-3", 65536 },
    { "nan", 65536 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_setenv (var, cases[i].value, TRUE);
      g_assert_cmpfloat (fb_split_tuning (var, 65536), ==, cases[i].want);
    }
  g_unsetenv (var);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cpu-threads/cgroup-v2", test_cgroup_v2);
  g_test_add_func ("/cpu-threads/cgroup-v1", test_cgroup_v1);
  g_test_add_func ("/cpu-threads/order", test_order);
  g_test_add_func ("/cpu-threads/affinity", test_affinity);
  g_test_add_func ("/cpu-threads/small-model", test_small_model);
  g_test_add_func ("/cpu-threads/omp-proc-bind", test_omp_proc_bind);
  g_test_add_func ("/cpu-threads/split-tuning", test_split_tuning);
  return g_test_run ();
}
