/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The kernel of a selected node, in a real window on the bundled sample model: the inspector's
 * "Kernel" section, Ctrl+K's code view with its four lowering stages generated in a worker, nodes
 * of earlier stages mapped to the kernels that carry their work, and what cannot be compiled said
 * in a message that names the node. */
#include "fb-application.h"
#include "fb-kernel-map.h"
#include "fb-test-onnx.h"
#include "fb-window.h"

#include <gtksourceview/gtksource.h>

#include <glib/gstdio.h>
#include <string.h>

static FbApplication *app;
static FbWindow *window;

static FbCompareView *
compare (void)
{
  return fb_window_get_compare_view (window);
}

static FbGraphView *
after_view (void)
{
  return fb_compare_view_get_after_view (compare ());
}

static gboolean
busy (void)
{
  return fb_window_is_busy (window)
         || fb_graph_view_is_busy (fb_compare_view_get_before_view (compare ()))
         || fb_graph_view_is_busy (after_view ())
         || fb_code_view_is_busy (fb_window_get_code_view (window));
}

/* Runs the main loop until the window, its views and the code view's worker are done. */
static void
settle (void)
{
  while (busy ())
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}

static FbRun *
run (void)
{
  FbRun *r = fb_window_get_run (window);

  g_assert_nonnull (r);
  return r;
}

static FbStage *
select_stage (const char *name)
{
  int index = fb_run_find_stage (run (), name);

  g_assert_cmpint (index, >=, 0);
  fb_stage_list_select (fb_window_get_stage_list (window), index);
  settle ();
  g_assert_cmpint (fb_compare_view_get_stage (compare ()), ==, index);
  return fb_run_get_stage (run (), index);
}

static FbGraph *
final_graph (void)
{
  return fb_run_get_stage (run (), fb_run_n_stages (run ()) - 1)->graph;
}

static FbNode *
find_op (FbGraph    *graph,
         const char *op_type)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);

      if (g_strcmp0 (node->op_type, op_type) == 0)
        return node;
    }
  return NULL;
}

/* A fused node with a Conv among its members. */
static FbNode *
find_fused_conv (FbGraph *graph)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);
      FbGraph *body = node->op == FB_OP_FUSED ? fb_node_attr_graph (node, "body") : NULL;

      if (body != NULL && find_op (body, "Conv") != NULL)
        return node;
    }
  return NULL;
}

static gboolean
has_prov_name (const FbKernel *kernel,
               const char     *name)
{
  for (guint i = 0; kernel->prov_names != NULL && i < kernel->prov_names->len; i++)
    if (g_strcmp0 (g_array_index (kernel->prov_names, char *, i), name) == 0)
      return TRUE;
  return FALSE;
}

/* Selects node in the view on the right and opens its kernel, as Ctrl+K does. */
static FbCodeView *
show_kernel_of (FbNode *node)
{
  FbCodeView *code = fb_window_get_code_view (window);

  g_assert_true (fb_graph_view_select_node (after_view (), node->id));
  settle ();
  g_assert_nonnull (fb_node_inspector_get_kernel_summary (fb_window_get_inspector (window)));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-kernel", NULL));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (code)));
  settle ();
  return code;
}

static void
assert_page_contains (FbCodeView *code,
                      const char *page,
                      const char *needle)
{
  g_autofree char *text = fb_code_view_dup_text (code, page);

  if (strstr (text, needle) == NULL)
    g_error ("the %s page does not mention “%s”:\n%.2000s", page, needle, text);
}

static void
test_fused_conv (void)
{
  FbStage *final = select_stage ("final");
  FbNode *fused = find_fused_conv (final->graph);
  FbCodeView *code;
  const FbKernel *kernel;
  const FbKPhase *phase;

  g_assert_nonnull (fused);
  /* Nothing selected, nothing to show; a node selected, its kernel. */
  fb_graph_view_clear_selection (after_view ());
  settle ();
  g_assert_null (fb_node_inspector_get_kernel_summary (fb_window_get_inspector (window)));
  code = show_kernel_of (fused);

  g_assert_null (fb_code_view_get_message (code));
  g_assert_cmpuint (fb_code_view_get_n_kernels (code), ==, 1);
  kernel = fb_code_view_get_kernel (code);
  g_assert_nonnull (kernel);
  g_assert_cmpuint (kernel->node_id, ==, fused->id);
  g_assert_true (kernel->node == fused);
  g_assert_cmpuint (kernel->phases->len, >, 0);
  phase = g_ptr_array_index (kernel->phases, 0);

  /* The four stages: the kernel IR's loops (and the library call of a Conv lowered to one), a
   * function definition before and after optimization, and x86-64 machine code. */
  assert_page_contains (code, FB_CODE_VIEW_KERNEL_IR, kernel->name);
  assert_page_contains (code, FB_CODE_VIEW_KERNEL_IR, "for ");
  if (kernel->kind == FB_KERNEL_LIBRARY)
    assert_page_contains (code, FB_CODE_VIEW_KERNEL_IR, "call dnnl_sgemm");
  assert_page_contains (code, FB_CODE_VIEW_LLVM_IR, "define ");
  assert_page_contains (code, FB_CODE_VIEW_LLVM_IR, phase->fn);
  assert_page_contains (code, FB_CODE_VIEW_OPTIMIZED_IR, "define ");
  assert_page_contains (code, FB_CODE_VIEW_OPTIMIZED_IR, phase->fn);
  assert_page_contains (code, FB_CODE_VIEW_ASSEMBLY, phase->fn);
  assert_page_contains (code, FB_CODE_VIEW_ASSEMBLY, "mov");
  assert_page_contains (code, FB_CODE_VIEW_ASSEMBLY, "ret");
  for (guint i = 0; i < 4; i++)
    {
      static const char * const pages[] = { FB_CODE_VIEW_KERNEL_IR, FB_CODE_VIEW_LLVM_IR,
                                            FB_CODE_VIEW_OPTIMIZED_IR, FB_CODE_VIEW_ASSEMBLY };

      fb_code_view_set_page (code, pages[i]);
      settle ();
    }
  /* Once lowered, the inspector names the kernel. */
  g_assert_nonnull (strstr (fb_node_inspector_get_kernel_summary (fb_window_get_inspector (window)), kernel->name));
}

static void
test_folded_batchnorm (void)
{
  FbStage *import = select_stage ("import");
  FbNode *bn = find_op (import->graph, "BatchNormalization");
  FbCodeView *code;
  const FbKernel *kernel;
  const char *summary;

  g_assert_nonnull (bn);
  code = show_kernel_of (bn);
  /* Folded into its Conv, which was fused with its activation: that kernel carries its work. */
  summary = fb_node_inspector_get_kernel_summary (fb_window_get_inspector (window));
  g_assert_nonnull (strstr (summary, "fold-batchnorm"));
  g_assert_null (fb_code_view_get_message (code));
  kernel = fb_code_view_get_kernel (code);
  g_assert_nonnull (kernel);
  g_assert_true (has_prov_name (kernel, bn->name));
  g_assert_true (fb_graph_find_node (final_graph (), kernel->node_id) == kernel->node);
  g_assert_nonnull (strstr (kernel->name, "Conv"));
  g_assert_nonnull (find_fused_conv (final_graph ()));
  assert_page_contains (code, FB_CODE_VIEW_LLVM_IR, "define ");

  /* The open code view follows the selection: the Conv the BatchNormalization was folded into
   * is the same kernel. */
  {
    FbNode *conv = NULL;

    for (guint i = 0; i < import->graph->nodes->len && conv == NULL; i++)
      {
        FbNode *n = g_ptr_array_index (import->graph->nodes, i);

        if (g_strcmp0 (n->op_type, "Conv") == 0 && n->n_outputs > 0 && bn->n_inputs > 0
            && n->outputs[0] == bn->inputs[0])
          conv = n;
      }
    g_assert_nonnull (conv);
    g_assert_true (fb_graph_view_select_node (after_view (), conv->id));
    settle ();
    g_assert_cmpuint (fb_code_view_get_kernel (code)->node_id, ==, kernel->node_id);
  }
}

/* Every node of every stage lands on nodes of the final stage, or is said to be gone. */
static void
test_every_node_maps (void)
{
  for (guint s = 0; s < fb_run_n_stages (run ()); s++)
    {
      FbStage *stage = fb_run_get_stage (run (), s);

      for (guint i = 0; i < stage->graph->nodes->len; i++)
        {
          FbNode *node = g_ptr_array_index (stage->graph->nodes, i);
          g_autofree char *note = NULL;
          g_autoptr(GArray) ids = fb_kernel_map_node (run (), s, node, &note);

          g_assert_true (ids->len > 0 || note != NULL);
          for (guint k = 0; k < ids->len; k++)
            g_assert_nonnull (fb_graph_find_node (final_graph (), g_array_index (ids, guint, k)));
          /* A node of the final stage is its own kernel's node, with nothing to explain. */
          if (s + 1 == fb_run_n_stages (run ()))
            {
              g_assert_cmpuint (ids->len, ==, 1);
              g_assert_cmpuint (g_array_index (ids, guint, 0), ==, node->id);
              g_assert_null (note);
            }
        }
    }
}

static void
test_new_final_stage (void)
{
  FbStageList *list = fb_window_get_stage_list (window);
  FbCodeView *code;
  FbNode *fused;
  FbGraph *old_final;

  select_stage ("final");
  fused = find_fused_conv (final_graph ());
  code = show_kernel_of (fused);
  g_assert_nonnull (fb_code_view_get_kernel (code));
  old_final = final_graph ();

  /* Without the epilogue fusion the Conv is a kernel of its own, of a new final stage. */
  g_assert_true (fb_stage_list_set_pass_enabled (list, "fuse-epilogue", FALSE));
  settle ();
  g_assert_true (final_graph () != old_final);
  g_assert_true (fb_graph_view_select_node (after_view (), find_op (final_graph (), "Conv")->id));
  settle ();
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-kernel", NULL));
  settle ();
  g_assert_nonnull (fb_code_view_get_kernel (code));
  g_assert_true (fb_graph_find_node (final_graph (), fb_code_view_get_kernel (code)->node_id)
                 == fb_code_view_get_kernel (code)->node);
  g_assert_cmpstr (fb_code_view_get_kernel (code)->node->op_type, ==, "Conv");
  assert_page_contains (code, FB_CODE_VIEW_ASSEMBLY, "ret");

  g_assert_true (fb_stage_list_set_pass_enabled (list, "fuse-epilogue", TRUE));
  settle ();
}

/* x -> Relu -> y, and beside it x -> Neg, whose result nothing reads; with frobnicate, y goes
 * through Frobnicate, an operator nothing here knows. */
static char *
write_model (const char *dir,
             gboolean    frobnicate)
{
  g_autoptr(GError) error = NULL;
  TestModel *m = test_model_new (17);
  char *path = g_build_filename (dir, frobnicate ? "mystery.onnx" : "dead.onnx", NULL);
  g_autoptr(GBytes) bytes = NULL;

  test_model_input (m, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, (const int64_t[]) { 1, 8 });
  test_model_node (m, "Relu", "first_relu", (const char *[]) { "x", NULL },
                   (const char *[]) { frobnicate ? "r" : "y", NULL });
  test_model_node (m, "Neg", "unused_neg", (const char *[]) { "x", NULL }, (const char *[]) { "n", NULL });
  if (frobnicate)
    test_model_node (m, "Frobnicate", "mystery_node", (const char *[]) { "r", NULL }, (const char *[]) { "y", NULL });
  test_model_output (m, "y");
  bytes = test_model_pack (m);
  g_assert_true (g_file_set_contents (path, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), &error));
  g_assert_no_error (error);
  test_model_free (m);
  return path;
}

static void
open_model (const char *dir,
            gboolean    frobnicate)
{
  g_autofree char *path = write_model (dir, frobnicate);
  g_autoptr(GFile) file = g_file_new_for_path (path);

  fb_window_open_file (window, file);
  settle ();
  g_assert_true (g_str_has_suffix (path, fb_run_get_title (run ())));
  g_unlink (path);
}

/* A node that nothing in the final stage computes says so, and the code view shows that instead
 * of code. */
static void
test_removed (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("fusebench-test-XXXXXX", &error);
  FbCodeView *code;
  FbNode *neg;
  const char *message;

  g_assert_no_error (error);
  open_model (dir, FALSE);
  neg = find_op (select_stage ("import")->graph, "Neg");
  g_assert_nonnull (neg);
  g_assert_null (find_op (final_graph (), "Neg"));
  code = show_kernel_of (neg);
  g_assert_nonnull (strstr (fb_node_inspector_get_kernel_summary (fb_window_get_inspector (window)), "no kernel"));
  message = fb_code_view_get_message (code);
  g_assert_nonnull (message);
  g_assert_nonnull (strstr (message, "no kernel"));
  g_assert_cmpuint (fb_code_view_get_n_kernels (code), ==, 0);
  g_assert_null (fb_code_view_get_kernel (code));

  /* Its neighbour made it to the end, and has code. */
  show_kernel_of (find_op (fb_run_get_stage (run (), 0)->graph, "Relu"));
  g_assert_null (fb_code_view_get_message (code));
  g_assert_cmpstr (fb_code_view_get_kernel (code)->node->op_type, ==, "Relu");
  assert_page_contains (code, FB_CODE_VIEW_OPTIMIZED_IR, "define ");
  g_rmdir (dir);
}

static void
test_unsupported (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("fusebench-test-XXXXXX", &error);
  FbCodeView *code;
  const char *message;

  g_assert_no_error (error);
  open_model (dir, TRUE);
  select_stage ("final");

  /* The supported node's kernel cannot be had either, as the stage cannot be lowered: said in a
   * message that names the node that stops it, not a crash. */
  code = show_kernel_of (find_op (final_graph (), "Relu"));
  message = fb_code_view_get_message (code);
  g_assert_nonnull (message);
  g_assert_nonnull (strstr (message, "mystery_node"));
  g_assert_null (fb_code_view_get_kernel (code));
  g_rmdir (dir);

  fb_window_open_sample (window);
  settle ();
}

/* Whether the first occurrence of needle in page's text is painted by highlighting: a tag of
 * the language's style (anonymous, a colour or weight set), not the view's own named ones. */
static gboolean
highlighted_at (FbCodeView *code,
                const char *page,
                const char *needle)
{
  GtkTextBuffer *buffer = fb_code_view_get_buffer (code, page);
  GtkTextIter start, end, at, match_end;
  gboolean painted = FALSE;
  GSList *tags;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  gtk_source_buffer_ensure_highlight (GTK_SOURCE_BUFFER (buffer), &start, &end);
  g_assert_true (gtk_text_iter_forward_search (&start, needle, 0, &at, &match_end, NULL));
  tags = gtk_text_iter_get_tags (&at);
  for (GSList *l = tags; l != NULL; l = l->next)
    {
      g_autofree char *name = NULL;
      gboolean fg = FALSE, weight = FALSE;
      g_object_get (l->data, "name", &name, "foreground-set", &fg, "weight-set", &weight, NULL);
      painted |= name == NULL && (fg || weight);
    }
  g_slist_free (tags);
  return painted;
}

static void
test_source_views (void)
{
  FbStage *final = select_stage ("final");
  FbNode *fused = find_fused_conv (final->graph);
  FbCodeView *code = show_kernel_of (fused);
  GtkTextBuffer *buffer;
  GtkTextIter start, end;
  g_autofree char *selected = NULL;

  /* Every page highlighted; the kernel IR and assembly languages come from the GResource. */
  g_assert_cmpstr (fb_code_view_get_language (code, FB_CODE_VIEW_KERNEL_IR), ==, "fusebench-kir");
  g_assert_cmpstr (fb_code_view_get_language (code, FB_CODE_VIEW_LLVM_IR), ==, "llvm");
  g_assert_cmpstr (fb_code_view_get_language (code, FB_CODE_VIEW_OPTIMIZED_IR), ==, "llvm");
  g_assert_cmpstr (fb_code_view_get_language (code, FB_CODE_VIEW_ASSEMBLY), ==, "fusebench-x86-att");
  g_assert_true (highlighted_at (code, FB_CODE_VIEW_KERNEL_IR, "float32"));
  g_assert_true (highlighted_at (code, FB_CODE_VIEW_ASSEMBLY, "%r"));
  g_assert_true (highlighted_at (code, FB_CODE_VIEW_LLVM_IR, "define"));

  /* The selected node does all the kernel's work: the lines of its phases are marked. */
  g_assert_cmpuint (fb_code_view_get_n_marked_lines (code), >=, 1);

  /* Alt+Right and Alt+Left step through the lowering, and stop at either end. */
  fb_code_view_set_page (code, FB_CODE_VIEW_KERNEL_IR);
  g_assert_false (fb_code_view_step_page (code, -1));
  g_assert_true (fb_code_view_step_page (code, 1));
  g_assert_cmpstr (fb_code_view_get_page (code), ==, FB_CODE_VIEW_LLVM_IR);
  g_assert_true (fb_code_view_step_page (code, 2));
  g_assert_cmpstr (fb_code_view_get_page (code), ==, FB_CODE_VIEW_ASSEMBLY);
  g_assert_false (fb_code_view_step_page (code, 1));

  /* Search in the page on show selects the match. */
  fb_code_view_search (code, "ret", TRUE);
  buffer = fb_code_view_get_buffer (code, FB_CODE_VIEW_ASSEMBLY);
  g_assert_true (gtk_text_buffer_get_selection_bounds (buffer, &start, &end));
  selected = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  g_assert_cmpstr (selected, ==, "ret");
  fb_code_view_search (code, NULL, TRUE);
  fb_code_view_set_page (code, FB_CODE_VIEW_KERNEL_IR);
}

static void
test_shortcut_listed (void)
{
  g_autoptr(GBytes) overlay = g_resources_lookup_data ("/io/github/fusebench/Fusebench/gtk/help-overlay.ui",
                                                       G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);

  g_assert_nonnull (overlay);
  g_assert_nonnull (g_strstr_len (g_bytes_get_data (overlay, NULL), g_bytes_get_size (overlay),
                                  "&lt;Control&gt;k"));
}

/* With FB_TEST_SCREENSHOT=FILE.png, renders the window with the code view of a fused Conv open
 * into that file instead of testing (for the README). */
static void
save_screenshot (const char *path)
{
  /* The window's content: a toplevel's own paintable draws nothing. */
  GtkWidget *widget = adw_application_window_get_content (ADW_APPLICATION_WINDOW (window));
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  guint64 until = g_get_monotonic_time () + G_USEC_PER_SEC / 2;

  select_stage ("final");
  show_kernel_of (find_fused_conv (final_graph ()));
  fb_code_view_set_page (fb_window_get_code_view (window), FB_CODE_VIEW_ASSEMBLY);
  /* Some frames, so that what changed is laid out and drawn. */
  while ((guint64) g_get_monotonic_time () < until)
    g_main_context_iteration (NULL, FALSE);
  settle ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_assert_true (gdk_texture_save_to_png (texture, path));
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  /* Code is generated here, not taken from the user's kernel cache. */
  g_setenv ("FUSEBENCH_KERNEL_CACHE", "off", TRUE);
  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  /* The kernels these tests read are the channels-first ones (generated loops). */
  g_settings_set_string (fb_application_get_settings (app), "layout", "nchw");
  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 860);
  gtk_window_present (GTK_WINDOW (window));
  fb_window_open_sample (window);
  settle ();

  g_test_add_func ("/ui/kernel-view/fused-conv", test_fused_conv);
  g_test_add_func ("/ui/kernel-view/folded-batchnorm", test_folded_batchnorm);
  g_test_add_func ("/ui/kernel-view/every-node-maps", test_every_node_maps);
  g_test_add_func ("/ui/kernel-view/new-final-stage", test_new_final_stage);
  g_test_add_func ("/ui/kernel-view/removed", test_removed);
  g_test_add_func ("/ui/kernel-view/unsupported", test_unsupported);
  g_test_add_func ("/ui/kernel-view/shortcut-listed", test_shortcut_listed);
  g_test_add_func ("/ui/kernel-view/source-views", test_source_views);
  if (g_getenv ("FB_TEST_SCREENSHOT") != NULL)
    {
      save_screenshot (g_getenv ("FB_TEST_SCREENSHOT"));
      status = 0;
    }
  else
    status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  return status;
}
