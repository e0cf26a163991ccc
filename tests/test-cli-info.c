/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench info: the command-line contract of DESIGN.md, through the real binary. */
#include "fb-test-cli.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

static JsonObject *
parse_object (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

static void
test_json_on_sample (void)
{
  g_autofree char *model = test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
  g_autoptr(TestRun) run = test_run_fusebench ("info", model, "--json", NULL);
  g_autoptr(JsonObject) info = NULL;
  JsonObject *ops;
  JsonArray *inputs;

  g_assert_cmpint (run->status, ==, 0);
  info = parse_object (run->out);
  g_assert_cmpint (json_object_get_int_member (info, "nodes"), ==, 23);
  g_assert_cmpint (json_object_get_int_member (info, "ir_version"), ==, 8);
  ops = json_object_get_object_member (info, "ops");
  g_assert_cmpint (json_object_get_int_member (ops, "Conv"), ==, 5);
  g_assert_cmpint (json_object_get_int_member (ops, "BatchNormalization"), ==, 4);
  inputs = json_object_get_array_member (info, "inputs");
  g_assert_cmpuint (json_array_get_length (inputs), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (inputs, 0), "name"), ==, "image");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (info, "outputs")), ==, 2);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (info, "unsupported")), ==, 0);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (info, "parameters"), "count"), ==, 11242);
}

static void
test_text_and_symbolic_pins (void)
{
  g_autofree char *model = test_source_path ("tests", "fuzz", "corpus-import", "conv-block.onnx", NULL);
  g_autoptr(TestRun) plain = test_run_fusebench ("info", model, NULL);
  g_autoptr(TestRun) pinned = test_run_fusebench ("info", model, "--input-shape", "x=2x3x8x8", NULL);
  g_autoptr(TestRun) wrong = test_run_fusebench ("info", model, "--input-shape", "x=2x3", NULL);
  g_autoptr(TestRun) bad = test_run_fusebench ("info", model, "--input-shape", "x", NULL);

  g_assert_cmpint (plain->status, ==, 0);
  g_assert_nonnull (strstr (plain->out, "N×3×8×8"));
  g_assert_cmpint (pinned->status, ==, 0);
  g_assert_nonnull (strstr (pinned->out, "2×3×8×8"));
  /* A pin of the wrong rank, or no shape at all, is bad input. */
  g_assert_cmpint (wrong->status, ==, 2);
  g_assert_nonnull (strstr (wrong->err, "x"));
  g_assert_cmpint (bad->status, ==, 2);
  g_assert_nonnull (strstr (bad->err, "NAME=SHAPE"));
}

static void
test_bad_input_exits_2 (void)
{
  g_autofree char *dir = g_dir_make_tmp ("fb-cli-XXXXXX", NULL);
  g_autofree char *empty = g_build_filename (dir, "empty.onnx", NULL);
  g_autofree char *text = g_build_filename (dir, "readme.onnx", NULL);
  g_autofree char *model = test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
  g_autofree char *cut = g_build_filename (dir, "cut.onnx", NULL);
  g_autofree char *data = NULL;
  gsize size;

  g_assert_true (g_file_set_contents (empty, "", 0, NULL));
  g_assert_true (g_file_set_contents (text, "not a model at all", -1, NULL));
  g_assert_true (g_file_get_contents (model, &data, &size, NULL));
  g_assert_true (g_file_set_contents (cut, data, (gssize) size / 2, NULL));
  {
    const char *files[] = { empty, text, cut, "/nonexistent/model.onnx", dir };
    for (guint i = 0; i < G_N_ELEMENTS (files); i++)
      {
        g_autoptr(TestRun) run = test_run_fusebench ("info", files[i], NULL);
        g_assert_cmpint (run->status, ==, 2);
        g_assert_cmpstr (run->out, ==, "");
        /* The message names the file. */
        g_assert_nonnull (strstr (run->err, files[i]));
      }
  }
  {
    g_autoptr(TestRun) none = test_run_fusebench ("info", NULL);
    g_autoptr(TestRun) flag = test_run_fusebench ("info", model, "--no-such-flag", NULL);
    g_autoptr(TestRun) command = test_run_fusebench ("no-such-command", NULL);
    g_autoptr(TestRun) incomplete = test_run_fusebench ("export", model, NULL);
    g_assert_cmpint (incomplete->status, ==, 2);
    g_assert_nonnull (strstr (incomplete->err, "--stage"));
    g_assert_cmpint (none->status, ==, 2);
    g_assert_cmpint (flag->status, ==, 2);
    g_assert_cmpint (command->status, ==, 2);
  }
  g_unlink (empty);
  g_unlink (text);
  g_unlink (cut);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli/info/json-on-sample", test_json_on_sample);
  g_test_add_func ("/cli/info/text-and-symbolic-pins", test_text_and_symbolic_pins);
  g_test_add_func ("/cli/info/bad-input-exits-2", test_bad_input_exits_2);
  return g_test_run ();
}
