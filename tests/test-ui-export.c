/* SPDX-License-Identifier: GPL-3.0-or-later */
/* File → Export in a real window on the bundled sample model: every artifact written through
 * the window's export path (the worker, the atomic write) and read back by its own reader,
 * an export cancelled, a file that exists kept until the user says to replace it, a failure
 * shown and leaving nothing behind. */
#include "fb-application.h"
#include "fb-test-cli.h"
#include "fb-window.h"
#include "fb-test-window.h"
#include "fb-window-export.h"
#include "fb-ptx.h"

#include <cairo.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <string.h>

static FbApplication *app;
static FbWindow *window;
static char *dir;


static void
settle (void)
{
  test_window_settle (window);
}

static FbGraphView *
after_view (void)
{
  return fb_compare_view_get_after_view (fb_window_get_compare_view (window));
}

static FbStage *
select_stage (const char *name)
{
  FbRun *run = fb_window_get_run (window);
  int index = fb_run_find_stage (run, name);

  g_assert_cmpint (index, >=, 0);
  fb_stage_list_select (fb_window_get_stage_list (window), index);
  settle ();
  return fb_run_get_stage (run, index);
}

static char *
path_in (const char *name)
{
  return g_build_filename (dir, name, NULL);
}

/* Exports kind to name (which must not exist yet) and waits for it to be written. */
static char *
export (FbExportKind kind, const char *name)
{
  char *path = path_in (name);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autofree char *done = g_strdup_printf ("Exported %s", name);

  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_true (fb_window_can_export (window, kind));
  fb_window_export_to (window, kind, file, FALSE);
  g_assert_null (fb_window_get_export_question (window));
  g_assert_true (fb_window_is_exporting (window));
  settle ();
  g_assert_cmpstr (fb_window_get_export_status (window), ==, done);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  return path;
}

static char *
spawn (gboolean must_succeed, const char *first, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  char *out = NULL, *err = NULL;
  const char *arg;
  va_list ap;
  int status;

  va_start (ap, first);
  for (arg = first; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, (char *) arg);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               &out, &err, &status, &error));
  g_assert_no_error (error);
  if (must_succeed && !g_spawn_check_wait_status (status, NULL))
    g_error ("%s failed:\n%s%s", first, out, err);
  g_free (err);
  return out;
}

/* ---- graph pictures and DOT, as the window draws the stage on screen ------------------- */

static void
on_svg_start (GMarkupParseContext *context, const char *element, const char **names,
              const char **values, gpointer data, GError **error)
{
  guint *count = data;
  if ((*count)++ == 0 && !g_str_equal (element, "svg"))
    g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "root is <%s>", element);
}

static void
test_graph (void)
{
  FbStage *stage = select_stage ("fuse-epilogue");
  g_autoptr(GError) error = NULL;

  g_assert_true (fb_graph_view_get_graph (after_view ()) == stage->graph);
  {
    g_autofree char *path = export (FB_EXPORT_GRAPH, "graph.svg");
    g_autofree char *text = NULL;
    GMarkupParser parser = { on_svg_start };
    guint elements = 0;
    GMarkupParseContext *context = g_markup_parse_context_new (&parser, 0, &elements, NULL);

    g_assert_true (g_file_get_contents (path, &text, NULL, &error));
    g_assert_true (g_markup_parse_context_parse (context, text, -1, &error) &&
                   g_markup_parse_context_end_parse (context, &error));
    g_assert_no_error (error);
    g_markup_parse_context_free (context);
    g_assert_cmpuint (elements, >, 30);
  }
  {
    g_autofree char *path = export (FB_EXPORT_GRAPH, "graph.png");
    cairo_surface_t *image = cairo_image_surface_create_from_png (path);

    g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
    g_assert_cmpint (cairo_image_surface_get_width (image), >, 100);
    cairo_surface_destroy (image);
  }
  {
    g_autofree char *path = export (FB_EXPORT_GRAPH, "graph.pdf");
    g_autofree char *info = spawn (TRUE, "pdfinfo", path, NULL);

    g_assert_true (g_regex_match_simple ("^Pages: +1$", info, G_REGEX_MULTILINE, 0));
  }
  {
    g_autofree char *path = export (FB_EXPORT_GRAPH, "graph.dot");
    g_autofree char *plain = spawn (TRUE, "dot", "-Tplain", path, NULL);
    g_auto(GStrv) lines = g_strsplit (plain, "\n", -1);
    guint nodes = 0;

    for (guint i = 0; lines[i]; i++)
      nodes += g_str_has_prefix (lines[i], "node ");
    /* The stage's nodes and its input and outputs, as DOT writes them. */
    g_assert_cmpuint (nodes, ==, stage->graph->nodes->len + 1 + stage->graph->outputs->len);
  }
  {
    /* A name that says no format is refused before anything runs. */
    g_autofree char *path = path_in ("graph.txt");
    g_autoptr(GFile) file = g_file_new_for_path (path);

    fb_window_export_to (window, FB_EXPORT_GRAPH, file, FALSE);
    g_assert_false (fb_window_is_exporting (window));
    g_assert_nonnull (strstr (fb_window_get_export_status (window), ".svg"));
    g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  }
}

/* ---- the optimized model: fusebench runs it and gets the sample's expected outputs ------ */

static void
copy_file (const char *from, const char *to)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *data = NULL;
  gsize size;

  g_assert_true (g_file_get_contents (from, &data, &size, &error));
  g_assert_true (g_file_set_contents (to, data, size, &error));
}

static void
test_onnx (void)
{
  g_autofree char *path = export (FB_EXPORT_ONNX, "optimized.onnx");
  g_autofree char *case_dir = path_in ("case");
  g_autofree char *set = g_build_filename (case_dir, "test_data_set_0", NULL);
  g_autofree char *model = g_build_filename (case_dir, "model.onnx", NULL);
  g_autofree char *sample = test_source_path ("data", "models", "sample-cnn", "test_data_set_0", NULL);
  g_autoptr(GDir) d = g_dir_open (sample, 0, NULL);
  const char *name;

  g_assert_cmpint (g_mkdir_with_parents (set, 0755), ==, 0);
  copy_file (path, model);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *from = g_build_filename (sample, name, NULL);
      g_autofree char *to = g_build_filename (set, name, NULL);
      copy_file (from, to);
    }
  {
    g_autoptr(TestRun) run = test_run_fusebench ("check", case_dir, NULL);
    g_assert_cmpint (run->status, ==, 0);
    g_assert_nonnull (strstr (run->out, "1 passed, 0 failed"));
  }
}

/* ---- the profile, once there is one ------------------------------------------------------ */

static void
test_profile (void)
{
  g_autofree char *fixture = g_test_build_filename (G_TEST_DIST, "fixtures",
                                                    "sample-cnn.profile.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (fixture);
  g_autoptr(GError) error = NULL;

  fb_window_clear_profile (window);
  g_assert_false (fb_window_can_export (window, FB_EXPORT_PROFILE));
  g_assert_false (fb_window_can_export (window, FB_EXPORT_TRACE));
  fb_window_open_profile (window, file);
  while (fb_window_get_profile (window) == NULL)
    g_main_context_iteration (NULL, TRUE);
  settle ();

  /* The profile comes back as the same profile... */
  g_autofree char *json = export (FB_EXPORT_PROFILE, "sample.profile.json");
  g_autoptr(FbProfile) back = fb_profile_load (json, &error);
  g_assert_no_error (error);
  FbProfile *shown = fb_window_get_profile (window);
  g_assert_cmpstr (back->model_digest, ==, shown->model_digest);
  g_assert_cmpuint (back->kernels->len, ==, shown->kernels->len);

  /* ...and the trace is JSON with a complete event per launch of the timeline. */
  g_autofree char *trace = export (FB_EXPORT_TRACE, "sample.trace.json");
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, trace, &error));
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonArray *events = json_object_get_array_member (root, "traceEvents");
  guint complete = 0;
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      if (g_strcmp0 (json_object_get_string_member_with_default (e, "ph", ""), "X") == 0)
        complete++;
    }
  g_assert_cmpuint (complete, ==, shown->timeline->len);
  fb_window_clear_profile (window);
}

/* ---- the bundle and the shared library ---------------------------------------------------- */

static void
test_bundle (void)
{
  g_autofree char *path = export (FB_EXPORT_BUNDLE, "sample.fusebench");
  g_autofree char *manifest = g_build_filename (path, "manifest.json", NULL);

  g_assert_true (g_file_test (manifest, G_FILE_TEST_IS_REGULAR));
  /* fusebench loads it and runs it on the sample's input. */
  {
    g_autofree char *sample = test_source_path ("data", "models", "sample-cnn", "test_data_set_0",
                                                NULL);
    g_autoptr(TestRun) run = test_run_fusebench ("run", path, "--target", "cpu", "--input-dir",
                                                 sample, NULL);
    g_assert_cmpint (run->status, ==, 0);
  }
}

/* The manifest's "pipeline" of a bundle folder. */
static char *
manifest_pipeline (const char *bundle)
{
  g_autofree char *manifest = g_build_filename (bundle, "manifest.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *root;

  g_assert_true (json_parser_load_from_file (parser, manifest, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_true (json_object_has_member (root, "pipeline"));
  return g_strdup (json_object_get_string_member (root, "pipeline"));
}

/* The manifest says which toggles the bundle was compiled with, in the words `fusebench compile`
 * writes for the same toggles: first the window's channels-first layout, then a pass turned off. */
static void
test_bundle_pipeline (void)
{
  FbStageList *list = fb_window_get_stage_list (window);
  g_autofree char *model = test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
  g_autofree char *nchw = export (FB_EXPORT_BUNDLE, "nchw.fusebench");
  g_autofree char *nchw_text = manifest_pipeline (nchw);
  g_autofree char *cli = path_in ("cli.fusebench");
  g_autofree char *cli_text = NULL;
  g_autofree char *off = NULL, *off_text = NULL, *cli_off = NULL, *cli_off_text = NULL;

  g_assert_cmpint (fb_run_get_options (fb_window_get_run (window))->layout, ==, FB_LAYOUT_NCHW);
  g_assert_cmpstr (nchw_text, ==, "--layout nchw");
  {
    g_autoptr(TestRun) run = test_run_fusebench ("compile", model, "--target", "cpu", "--layout",
                                                 "nchw", "-o", cli, NULL);
    g_assert_cmpint (run->status, ==, 0);
  }
  cli_text = manifest_pipeline (cli);
  g_assert_cmpstr (cli_text, ==, nchw_text);

  g_assert_true (fb_stage_list_set_pass_enabled (list, "fold-batchnorm", FALSE));
  settle ();
  g_assert_cmpuint (fb_run_get_options (fb_window_get_run (window))->disabled_passes->len, ==, 1);
  off = export (FB_EXPORT_BUNDLE, "off.fusebench");
  off_text = manifest_pipeline (off);
  g_assert_true (fb_stage_list_set_pass_enabled (list, "fold-batchnorm", TRUE));
  settle ();
  g_assert_cmpuint (fb_run_get_options (fb_window_get_run (window))->disabled_passes->len, ==, 0);
  g_assert_cmpstr (off_text, ==, "--disable fold-batchnorm --layout nchw");
  cli_off = path_in ("cli-off.fusebench");
  {
    g_autoptr(TestRun) run = test_run_fusebench ("compile", model, "--target", "cpu", "--layout",
                                                 "nchw", "--disable", "fold-batchnorm", "-o",
                                                 cli_off, NULL);
    g_assert_cmpint (run->status, ==, 0);
  }
  cli_off_text = manifest_pipeline (cli_off);
  g_assert_cmpstr (cli_off_text, ==, off_text);
}

static void
test_shared_library (void)
{
  g_autofree char *so = export (FB_EXPORT_SHARED_LIBRARY, "sample.so");
  g_autofree char *header = path_in ("sample.h");
  g_autofree char *main_c = path_in ("main.c");
  g_autofree char *program = path_in ("main");
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_test (header, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_set_contents (main_c,
                                      "#include \"sample.h\"\n"
                                      "int main (void) { return fb_model_run (0, 0) == 12345; }\n",
                                      -1, &error));
  /* cc links a program against the library through its header. */
  g_free (spawn (TRUE, "cc", "-o", program, main_c, "-I", dir, so, NULL));
  g_assert_true (g_file_test (program, G_FILE_TEST_IS_EXECUTABLE));
}

/* ---- the kernel in the code view ----------------------------------------------------------- */

static void
test_kernel (void)
{
  FbStage *final = select_stage ("final");
  FbNode *fused = NULL;

  for (guint i = 0; i < final->graph->nodes->len && fused == NULL; i++)
    if (((FbNode *) g_ptr_array_index (final->graph->nodes, i))->op == FB_OP_FUSED)
      fused = g_ptr_array_index (final->graph->nodes, i);
  g_assert_nonnull (fused);
  g_assert_true (fb_graph_view_select_node (after_view (), fused->id));
  settle ();
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-kernel", NULL));
  settle ();
  g_assert_nonnull (fb_code_view_get_kernel (fb_window_get_code_view (window)));
  {
    g_autofree char *path = export (FB_EXPORT_LLVM_IR, "kernel.ll");
    g_autofree char *bindir = spawn (TRUE, "llvm-config-19", "--bindir", NULL);
    g_autofree char *as = g_build_filename (g_strstrip (bindir), "llvm-as", NULL);
    g_autofree char *bc = path_in ("kernel.bc");

    g_free (spawn (TRUE, as, path, "-o", bc, NULL));
    g_assert_true (g_file_test (bc, G_FILE_TEST_IS_REGULAR));
  }
  {
    g_autofree char *path = export (FB_EXPORT_ASSEMBLY, "kernel.s");
    g_autofree char *obj = path_in ("kernel-from-s.o");

    g_free (spawn (TRUE, "cc", "-c", path, "-o", obj, NULL));
  }
  {
    g_autofree char *path = export (FB_EXPORT_OBJECT, "kernel.o");
    g_autofree char *symbols = spawn (TRUE, "nm", path, NULL);
    const FbKernel *kernel = fb_code_view_get_kernel (fb_window_get_code_view (window));

    const char *ops = strchr (kernel->name, '_');
    g_autofree char *symbol = g_strdup_printf (" T fbk_%s_", ops != NULL ? ops + 1 : kernel->name);

    /* Its functions are named after the kernel's operators ("fbk_Conv_Relu_HASH_p0"). */
    if (strstr (symbols, symbol) == NULL)
      g_error ("no%s… in:\n%s", symbol, symbols);
  }
}

/* ---- PTX, which needs no GPU ---------------------------------------------------------------- */

static char *listing (void);

/* TRUE when ptxas -arch=sm_90 takes the file (a refusal fails the test); FALSE, with why in
 * *skip_reason, when this machine has no ptxas. */
static gboolean
ptxas_accepts (const char *path, char **skip_reason)
{
  g_autofree char *ptxas = fb_ptx_find_tool ("ptxas");
  g_autofree char *cubin = NULL;

  if (ptxas == NULL)
    {
      *skip_reason = g_strdup ("ptxas (the CUDA toolkit's PTX assembler) is not on this machine: "
                               "the exported PTX was checked for its structure only");
      return FALSE;
    }
  cubin = g_strconcat (path, ".cubin", NULL);
  g_free (spawn (TRUE, ptxas, "-arch=sm_90", "-o", cubin, path, NULL));
  g_assert_true (g_file_test (cubin, G_FILE_TEST_IS_REGULAR));
  g_unlink (cubin);
  return TRUE;
}

static void
assert_ptx_module (const char *ptx)
{
  g_assert_true (g_str_has_prefix (ptx, "// "));
  g_assert_nonnull (strstr (ptx, "\n.version "));
  g_assert_nonnull (strstr (ptx, "\n.target sm_90"));
  g_assert_nonnull (strstr (ptx, ".visible .entry "));
}

/* File → Export → PTX: the final stage's kernels for the GPU, on a machine that may have none,
 * written atomically (nothing else left beside it) and asked about before it replaces a file. */
static void
test_ptx (void)
{
  g_autofree char *before = listing ();
  g_autofree char *path = NULL, *ptx = NULL, *after = NULL, *skip = NULL;
  g_autoptr(GError) error = NULL;
  GtkWidget *question;

  select_stage ("final");
  g_assert_true (fb_window_can_export (window, FB_EXPORT_PTX));
  path = export (FB_EXPORT_PTX, "sample.ptx");
  g_assert_true (g_file_get_contents (path, &ptx, NULL, &error));
  assert_ptx_module (ptx);
  /* The same module the command line writes. */
  g_assert_nonnull (strstr (ptx, "// kernel n70_Softmax (Softmax"));
  /* The file alone is new in the folder: no temporary is left beside it. */
  after = listing ();
  {
    g_auto(GStrv) was = g_strsplit (before, ",", -1);
    g_auto(GStrv) now = g_strsplit (after, ",", -1);

    g_assert_cmpuint (g_strv_length (now), ==, g_strv_length (was) + (before[0] != '\0' ? 1 : 0));
    g_assert_true (g_strv_contains ((const char * const *) now, "sample.ptx"));
    for (guint i = 0; before[0] != '\0' && was[i] != NULL; i++)
      g_assert_true (g_strv_contains ((const char * const *) now, was[i]));
  }

  /* A second export to the same file asks first; Cancel keeps the file as it was. */
  g_assert_true (g_file_set_contents (path, "kept", -1, &error));
  {
    g_autoptr(GFile) file = g_file_new_for_path (path);
    g_autofree char *text = NULL;

    fb_window_export_to (window, FB_EXPORT_PTX, file, FALSE);
    question = fb_window_get_export_question (window);
    g_assert_nonnull (question);
    adw_message_dialog_response (ADW_MESSAGE_DIALOG (question), "cancel");
    settle ();
    g_assert_true (g_file_get_contents (path, &text, NULL, &error));
    g_assert_cmpstr (text, ==, "kept");
    fb_window_export_to (window, FB_EXPORT_PTX, file, FALSE);
    adw_message_dialog_response (ADW_MESSAGE_DIALOG (fb_window_get_export_question (window)),
                                 "replace");
    settle ();
    g_clear_pointer (&text, g_free);
    g_assert_true (g_file_get_contents (path, &text, NULL, &error));
    g_assert_cmpstr (text, ==, ptx);
  }
  if (!ptxas_accepts (path, &skip))
    g_test_skip (skip);
}

/* With the code view on the cuda target, a kernel's assembly is its PTX, and it has no object. */
static void
test_kernel_ptx (void)
{
  FbCodeView *code = fb_window_get_code_view (window);
  FbStage *final = select_stage ("final");
  g_autofree char *path = NULL, *ptx = NULL, *skip = NULL;
  g_autoptr(GError) error = NULL;
  FbNode *softmax = NULL;

  for (guint i = 0; i < final->graph->nodes->len && softmax == NULL; i++)
    if (((FbNode *) g_ptr_array_index (final->graph->nodes, i))->op == FB_OP_SOFTMAX)
      softmax = g_ptr_array_index (final->graph->nodes, i);
  g_assert_nonnull (softmax);
  g_assert_true (fb_graph_view_select_node (after_view (), softmax->id));
  settle ();
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-kernel", NULL));
  fb_code_view_set_target (code, "cuda");
  settle ();
  g_assert_cmpstr (fb_code_view_get_target (code), ==, "cuda");
  g_assert_nonnull (fb_code_view_get_kernel (code));
  path = export (FB_EXPORT_ASSEMBLY, "softmax.ptx");
  g_assert_true (g_file_get_contents (path, &ptx, NULL, &error));
  assert_ptx_module (ptx);
  g_assert_false (fb_window_can_export (window, FB_EXPORT_OBJECT));
  {
    g_autofree char *o = path_in ("softmax.o");
    g_autoptr(GFile) file = g_file_new_for_path (o);

    fb_window_export_to (window, FB_EXPORT_OBJECT, file, FALSE);
    g_assert_false (fb_window_is_exporting (window));
    g_assert_nonnull (strstr (fb_window_get_export_status (window), "PTX, not objects"));
    g_assert_false (g_file_test (o, G_FILE_TEST_EXISTS));
  }
  fb_code_view_set_target (code, "cpu");
  settle ();
  if (!ptxas_accepts (path, &skip))
    g_test_skip (skip);
}

/* ---- cancel, refuse to overwrite, fail cleanly ------------------------------------------- */

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char * const *) a, *(char * const *) b);
}

static char *
listing (void)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  while ((name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (",", (char **) names->pdata);
}

static void
test_cancel (void)
{
  g_autofree char *path = path_in ("cancelled.so");
  g_autofree char *header = path_in ("cancelled.h");
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autofree char *before = listing ();
  g_autofree char *after = NULL;

  /* The shared library: linking it takes long enough for the cancel to come first. */
  fb_window_export_to (window, FB_EXPORT_SHARED_LIBRARY, file, FALSE);
  g_assert_true (fb_window_is_exporting (window));
  /* The Cancel button of the progress bar. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.cancel", NULL));
  settle ();
  g_assert_cmpstr (fb_window_get_export_status (window), ==, "Export cancelled");
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (header, G_FILE_TEST_EXISTS));
  after = listing ();
  g_assert_cmpstr (after, ==, before);
}

static void
test_overwrite (void)
{
  g_autofree char *path = path_in ("keep.dot");
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  GtkWidget *question;

  g_assert_true (g_file_set_contents (path, "old", -1, &error));
  fb_window_export_to (window, FB_EXPORT_GRAPH, file, FALSE);
  question = fb_window_get_export_question (window);
  g_assert_nonnull (question);
  g_assert_false (fb_window_is_exporting (window));
  adw_message_dialog_response (ADW_MESSAGE_DIALOG (question), "cancel");
  settle ();
  g_assert_null (fb_window_get_export_question (window));
  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_cmpstr (text, ==, "old");
  g_clear_pointer (&text, g_free);

  fb_window_export_to (window, FB_EXPORT_GRAPH, file, FALSE);
  question = fb_window_get_export_question (window);
  g_assert_nonnull (question);
  adw_message_dialog_response (ADW_MESSAGE_DIALOG (question), "replace");
  settle ();
  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_true (g_str_has_prefix (text, "digraph "));
}

static void
test_failure (void)
{
  g_autofree char *blocker = path_in ("not-a-folder");
  g_autofree char *path = g_build_filename (blocker, "graph.svg", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  g_autofree char *before = NULL, *after = NULL;

  g_assert_true (g_file_set_contents (blocker, "", -1, &error));
  before = listing ();
  fb_window_export_to (window, FB_EXPORT_GRAPH, file, FALSE);
  settle ();
  g_assert_true (g_str_has_prefix (fb_window_get_export_status (window), "Could not export"));
  g_assert_cmpstr (fb_window_get_last_error (window), ==, fb_window_get_export_status (window));
  after = listing ();
  g_assert_cmpstr (after, ==, before);
}

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) d = g_dir_open (path, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("fb-ui-export-XXXXXX", &error);
  g_assert_no_error (error);
  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  /* The kernels these tests look for are the channels-first ones (generated loops). */
  g_settings_set_string (fb_application_get_settings (app), "layout", "nchw");
  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1200, 800);
  gtk_window_present (GTK_WINDOW (window));
  fb_window_open_sample (window);
  settle ();

  g_test_add_func ("/ui/export/graph", test_graph);
  g_test_add_func ("/ui/export/onnx", test_onnx);
  g_test_add_func ("/ui/export/profile", test_profile);
  g_test_add_func ("/ui/export/bundle", test_bundle);
  g_test_add_func ("/ui/export/bundle-pipeline", test_bundle_pipeline);
  g_test_add_func ("/ui/export/shared-library", test_shared_library);
  g_test_add_func ("/ui/export/kernel", test_kernel);
  g_test_add_func ("/ui/export/ptx", test_ptx);
  g_test_add_func ("/ui/export/kernel-ptx", test_kernel_ptx);
  g_test_add_func ("/ui/export/cancel", test_cancel);
  g_test_add_func ("/ui/export/overwrite", test_overwrite);
  g_test_add_func ("/ui/export/failure", test_failure);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  remove_tree (dir);
  g_free (dir);
  return status;
}
