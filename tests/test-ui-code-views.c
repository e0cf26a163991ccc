/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The code views in a real window on the bundled sample model, for both targets: the cuda
 * target's chain down to PTX and SASS on a machine without a GPU, Alt+Left and Alt+Right
 * through the stages by their key bindings, search in PTX, and the lines that came from the
 * selected node marked in the LLVM IR, the assembly and the PTX, exactly where the phases that
 * do its work are. */
#include "fb-application.h"
#include "fb-ptx.h"
#include "fb-window.h"

#include <gtksourceview/gtksource.h>

#include <string.h>

static FbApplication *app;
static FbWindow *window;

static FbCodeView *
code (void)
{
  return fb_window_get_code_view (window);
}

static FbGraphView *
after_view (void)
{
  return fb_compare_view_get_after_view (fb_window_get_compare_view (window));
}

static gboolean
busy (void)
{
  FbCompareView *compare = fb_window_get_compare_view (window);

  return fb_window_is_busy (window) || fb_graph_view_is_busy (fb_compare_view_get_before_view (compare))
         || fb_graph_view_is_busy (after_view ()) || fb_code_view_is_busy (code ());
}

static void
settle (void)
{
  while (busy ())
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
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

static FbNode *
find_node (FbGraph *graph, FbOpKind op, const char *name_suffix)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);
      if (node->op == op && (name_suffix == NULL || g_str_has_suffix (node->name, name_suffix)))
        return node;
    }
  g_error ("no %s node%s%s", fb_op_name (op), name_suffix ? " named …" : "", name_suffix ? name_suffix : "");
  return NULL;
}

/* Selects node in the view on the right, and opens (or follows with) the code view. */
static void
show_kernel_of (FbNode *node)
{
  g_assert_true (fb_graph_view_select_node (after_view (), node->id));
  settle ();
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-kernel", NULL));
  settle ();
  g_assert_null (fb_code_view_get_message (code ()));
  g_assert_nonnull (fb_code_view_get_kernel (code ()));
}

static void
set_target (const char *target)
{
  fb_code_view_set_target (code (), target);
  settle ();
  g_assert_cmpstr (fb_code_view_get_target (code ()), ==, target);
}

static void
assert_page_contains (const char *page, const char *needle)
{
  g_autofree char *text = fb_code_view_dup_text (code (), page);

  if (strstr (text, needle) == NULL)
    g_error ("the %s page does not mention “%s”:\n%.3000s", page, needle, text);
}

/* Whether the first occurrence of needle on page is painted by its language's highlighting. */
static gboolean
highlighted_at (const char *page, const char *needle)
{
  GtkTextBuffer *buffer = fb_code_view_get_buffer (code (), page);
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

/* ---- the cuda target's chain, compiled without a GPU ------------------------------------- */

static void
test_ptx_chain (void)
{
  FbStage *final = select_stage ("final");
  FbNode *fused = NULL;
  const FbKernel *kernel;
  g_autofree char *cuobjdump = fb_ptx_find_tool ("cuobjdump");
  g_autofree char *nvdisasm = fb_ptx_find_tool ("nvdisasm");

  /* The fused Conv and Clip of the final stage (sent to cuDNN on the GPU with the Clip kept
   * from it, where it is depthwise and would be generated code alone: a cuDNN convolution and
   * a generated pass); its code, first for the cpu target. */
  g_setenv ("FUSEBENCH_GPU_CONV", "cudnn", TRUE);
  g_setenv ("FUSEBENCH_GPU_CONV_ACT", "swish", TRUE);
  for (guint i = 0; i < final->graph->nodes->len && fused == NULL; i++)
    {
      FbNode *n = g_ptr_array_index (final->graph->nodes, i);
      FbGraph *body = n->op == FB_OP_FUSED ? fb_node_attr_graph (n, "body") : NULL;
      for (guint k = 0; body != NULL && k < body->nodes->len; k++)
        if (((FbNode *) g_ptr_array_index (body->nodes, k))->op == FB_OP_CLIP)
          fused = n;
    }
  g_assert_nonnull (fused);
  set_target ("cpu");
  show_kernel_of (fused);
  g_assert_true (fb_code_view_has_page (code (), FB_CODE_VIEW_ASSEMBLY));
  g_assert_false (fb_code_view_has_page (code (), FB_CODE_VIEW_PTX));

  /* The cuda target, picked in the header: the same node's kernel, lowered for the GPU. */
  set_target ("cuda");
  g_assert_null (fb_code_view_get_message (code ()));
  kernel = fb_code_view_get_kernel (code ());
  g_assert_nonnull (kernel);
  g_assert_cmpuint (kernel->node_id, ==, fused->id);
  g_assert_false (fb_code_view_has_page (code (), FB_CODE_VIEW_ASSEMBLY));
  g_assert_true (fb_code_view_has_page (code (), FB_CODE_VIEW_PTX));
  g_assert_true (fb_code_view_has_page (code (), FB_CODE_VIEW_SASS));
  assert_page_contains (FB_CODE_VIEW_KERNEL_IR, "cuDNN convolution");
  assert_page_contains (FB_CODE_VIEW_LLVM_IR, "define ptx_kernel void @");
  assert_page_contains (FB_CODE_VIEW_OPTIMIZED_IR, "nvptx64-nvidia-cuda");
  assert_page_contains (FB_CODE_VIEW_PTX, ".target sm_90");
  assert_page_contains (FB_CODE_VIEW_PTX, ".visible .entry ");
  /* Each .loc names the kernel IR line of the code after it. */
  assert_page_contains (FB_CODE_VIEW_PTX, ".loc\t1 ");
  g_assert_cmpstr (fb_code_view_get_language (code (), FB_CODE_VIEW_PTX), ==, "fusebench-ptx");
  g_assert_cmpstr (fb_code_view_get_language (code (), FB_CODE_VIEW_SASS), ==, "fusebench-sass");
  g_assert_true (highlighted_at (FB_CODE_VIEW_PTX, ".target"));
  g_assert_true (highlighted_at (FB_CODE_VIEW_PTX, "%r"));

  /* SASS where the toolkit's disassemblers are; said plainly where they are not. */
  if (cuobjdump != NULL || nvdisasm != NULL)
    {
      g_autofree char *sass = fb_code_view_dup_text (code (), FB_CODE_VIEW_SASS);
      g_assert_null (strstr (sass, "no SASS"));
      g_assert_true (strstr (sass, "EXIT") != NULL || strstr (sass, "RET") != NULL);
    }
  else
    {
      assert_page_contains (FB_CODE_VIEW_SASS, "no SASS");
      assert_page_contains (FB_CODE_VIEW_SASS, "neither cuobjdump nor nvdisasm");
    }

  /* Back on the cpu target, x86-64 again. */
  set_target ("cpu");
  g_assert_true (fb_code_view_has_page (code (), FB_CODE_VIEW_ASSEMBLY));
  g_assert_false (fb_code_view_has_page (code (), FB_CODE_VIEW_SASS));
  assert_page_contains (FB_CODE_VIEW_OPTIMIZED_IR, "x86_64");
  g_unsetenv ("FUSEBENCH_GPU_CONV");
  g_unsetenv ("FUSEBENCH_GPU_CONV_ACT");
}

/* ---- Alt+Left and Alt+Right, as the keys trigger them ------------------------------------- */

/* Activates the shortcut the code view's class binds to keyval with Alt, as a key press would. */
static gboolean
press_alt (guint keyval)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (GTK_WIDGET (code ()));
  g_autoptr(GtkShortcutTrigger) wanted = gtk_keyval_trigger_new (keyval, GDK_ALT_MASK);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GObject) controller = g_list_model_get_item (controllers, i);
      if (!GTK_IS_SHORTCUT_CONTROLLER (controller))
        continue;
      for (guint k = 0; k < g_list_model_get_n_items (G_LIST_MODEL (controller)); k++)
        {
          g_autoptr(GtkShortcut) shortcut = g_list_model_get_item (G_LIST_MODEL (controller), k);
          if (gtk_shortcut_trigger_equal (gtk_shortcut_get_trigger (shortcut), wanted))
            return gtk_shortcut_action_activate (gtk_shortcut_get_action (shortcut), 0,
                                                 GTK_WIDGET (code ()),
                                                 gtk_shortcut_get_arguments (shortcut));
        }
    }
  g_error ("the code view binds nothing to Alt+%s", gdk_keyval_name (keyval));
  return FALSE;
}

static void
step_through (const char *const *chain)
{
  guint n = g_strv_length ((char **) chain);

  fb_code_view_set_page (code (), chain[0]);
  g_assert_false (press_alt (GDK_KEY_Left));
  g_assert_cmpstr (fb_code_view_get_page (code ()), ==, chain[0]);
  for (guint i = 1; i < n; i++)
    {
      g_assert_true (press_alt (GDK_KEY_Right));
      g_assert_cmpstr (fb_code_view_get_page (code ()), ==, chain[i]);
    }
  g_assert_false (press_alt (GDK_KEY_Right));
  g_assert_cmpstr (fb_code_view_get_page (code ()), ==, chain[n - 1]);
  for (guint i = n - 1; i > 0; i--)
    {
      g_assert_true (press_alt (GDK_KEY_Left));
      g_assert_cmpstr (fb_code_view_get_page (code ()), ==, chain[i - 1]);
    }
}

static void
test_step_keys (void)
{
  static const char * const cpu[] = { FB_CODE_VIEW_KERNEL_IR, FB_CODE_VIEW_LLVM_IR,
                                      FB_CODE_VIEW_OPTIMIZED_IR, FB_CODE_VIEW_ASSEMBLY, NULL };
  static const char * const cuda[] = { FB_CODE_VIEW_KERNEL_IR, FB_CODE_VIEW_LLVM_IR,
                                       FB_CODE_VIEW_OPTIMIZED_IR, FB_CODE_VIEW_PTX,
                                       FB_CODE_VIEW_SASS, NULL };
  FbStage *final = select_stage ("final");

  set_target ("cpu");
  show_kernel_of (find_node (final->graph, FB_OP_SOFTMAX, NULL));
  step_through (cpu);
  set_target ("cuda");
  step_through (cuda);
  /* The x86-64 page is the other target's: the view turns to PTX rather than show nothing. */
  set_target ("cpu");
  fb_code_view_set_page (code (), FB_CODE_VIEW_ASSEMBLY);
  set_target ("cuda");
  g_assert_cmpstr (fb_code_view_get_page (code ()), ==, FB_CODE_VIEW_PTX);
  fb_code_view_set_page (code (), FB_CODE_VIEW_KERNEL_IR);
}

/* ---- search in the PTX, and on as the stages change --------------------------------------- */

static char *
selected_text (const char *page)
{
  GtkTextBuffer *buffer = fb_code_view_get_buffer (code (), page);
  GtkTextIter start, end;

  if (!gtk_text_buffer_get_selection_bounds (buffer, &start, &end))
    return g_strdup ("");
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

static void
test_search_ptx (void)
{
  FbStage *final = select_stage ("final");
  g_autofree char *first = NULL, *second = NULL, *in_ir = NULL;
  GtkTextIter a, b;
  int count;

  set_target ("cuda");
  show_kernel_of (find_node (final->graph, FB_OP_SOFTMAX, NULL));
  fb_code_view_set_page (code (), FB_CODE_VIEW_PTX);
  count = fb_code_view_search (code (), "ld.global", TRUE);
  first = selected_text (FB_CODE_VIEW_PTX);
  g_assert_cmpstr (first, ==, "ld.global");
  gtk_text_buffer_get_selection_bounds (fb_code_view_get_buffer (code (), FB_CODE_VIEW_PTX), &a, NULL);
  /* The next match is further on (or the same one, wrapped, when there is only one). */
  fb_code_view_search (code (), "ld.global", TRUE);
  second = selected_text (FB_CODE_VIEW_PTX);
  g_assert_cmpstr (second, ==, "ld.global");
  gtk_text_buffer_get_selection_bounds (fb_code_view_get_buffer (code (), FB_CODE_VIEW_PTX), &b, NULL);
  g_assert_true (count == 1 || count < 0 || gtk_text_iter_get_offset (&b) != gtk_text_iter_get_offset (&a));
  /* A step back to the optimized IR searches there: the same loads, in LLVM's words. */
  fb_code_view_search (code (), "load", TRUE);
  g_assert_true (press_alt (GDK_KEY_Left));
  in_ir = selected_text (FB_CODE_VIEW_OPTIMIZED_IR);
  g_assert_cmpstr (in_ir, ==, "load");
  fb_code_view_search (code (), NULL, TRUE);
  fb_code_view_set_page (code (), FB_CODE_VIEW_KERNEL_IR);
}

/* ---- the lines that came from the selected node --------------------------------------------- */

/* The functions of an LLVM IR or assembly text: for each line, the name of the function it is in
 * (NULL outside), from the text's own define lines and closing braces (IR) or function labels
 * and .Lfunc_end labels (x86-64), .entry lines and closing braces (PTX). */
static GPtrArray *
functions_of (const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  GPtrArray *in = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *current = NULL;

  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *l = lines[i];
      const char *at;
      gsize len;

      if (g_str_has_prefix (l, "define ") && (at = strchr (l, '@')) != NULL)
        {
          g_free (current);
          current = g_strndup (at + 1, strcspn (at + 1, "("));
        }
      else if ((at = strstr (l, ".visible .entry ")) != NULL && !g_str_has_prefix (l, "//"))
        {
          g_free (current);
          current = g_strndup (at + 16, strcspn (at + 16, "("));
        }
      else if (g_str_has_prefix (l, "fbk_") && l[len = strcspn (l, ":")] == ':')
        {
          g_free (current);
          current = g_strndup (l, len);
        }
      g_ptr_array_add (in, g_strdup (current));
      if (g_str_equal (l, "}") || g_str_has_prefix (l, ".Lfunc_end"))
        g_clear_pointer (&current, g_free);
    }
  return in;
}

/* The marked lines of page, each checked to lie in a function of the phase with suffix
 * ("_p1"); how many. */
static guint
marked_in_phase (const char *page, const char *suffix)
{
  g_autofree char *text = fb_code_view_dup_text (code (), page);
  g_autoptr(GArray) marked = fb_code_view_get_marked_lines (code (), page);
  g_autoptr(GPtrArray) fn = functions_of (text);

  for (guint i = 0; i < marked->len; i++)
    {
      guint line = g_array_index (marked, guint, i);
      const char *in = line <= fn->len ? g_ptr_array_index (fn, line - 1) : NULL;
      g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

      if (in == NULL || strstr (in, suffix) == NULL)
        g_error ("%s line %u is marked, but it is in %s, not a function of phase %s: %s", page,
                 line, in ? in : "no function", suffix, lines[line - 1]);
    }
  return marked->len;
}

/* The kernel IR lines of phase p of the kernel on show (its header to the next phase's). */
static void
phase_range (guint p, guint *first, guint *last)
{
  g_autofree char *text = fb_code_view_dup_text (code (), FB_CODE_VIEW_KERNEL_IR);
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *head = g_strdup_printf ("  phase %u: ", p);
  g_autofree char *next = g_strdup_printf ("  phase %u: ", p + 1);

  *first = *last = 0;
  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (g_str_has_prefix (lines[i], head))
        *first = i + 1;
      else if (g_str_has_prefix (lines[i], next))
        break;
      if (*first > 0 && lines[i][0] != '\0')
        *last = i + 1;
    }
  g_assert_cmpuint (*first, >, 0);
}

static void
assert_kir_marked_within (guint first, guint last)
{
  g_autoptr(GArray) marked = fb_code_view_get_marked_lines (code (), FB_CODE_VIEW_KERNEL_IR);

  g_assert_cmpuint (marked->len, >, 0);
  g_assert_cmpuint (marked->len, ==, fb_code_view_get_n_marked_lines (code ()));
  for (guint i = 0; i < marked->len; i++)
    {
      g_assert_cmpuint (g_array_index (marked, guint, i), >=, first);
      g_assert_cmpuint (g_array_index (marked, guint, i), <=, last);
    }
}

/* On the CPU with channels-first tensors, the first Conv is two phases: padding (the Conv's
 * alone) and im2col, sgemm and the Relu in its epilogue. The Relu, selected where it was an ONNX
 * node of its own, marks the second phase only, in the kernel IR and in the LLVM IR before and
 * after optimization and in the x86-64 assembly; the Conv marks both. */
static void
test_marks_llvm_ir (void)
{
  FbStage *import;
  guint first, last;

  set_target ("cpu");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.layout", "s", "nchw"));
  settle ();
  import = select_stage ("import");
  show_kernel_of (find_node (import->graph, FB_OP_RELU, "/features/0/act/Relu"));
  g_assert_cmpuint (fb_code_view_get_kernel (code ())->phases->len, ==, 2);
  phase_range (1, &first, &last);
  assert_kir_marked_within (first, last);
  g_assert_cmpuint (marked_in_phase (FB_CODE_VIEW_LLVM_IR, "_p1"), >, 0);
  g_assert_cmpuint (marked_in_phase (FB_CODE_VIEW_OPTIMIZED_IR, "_p1"), >, 0);
  g_assert_cmpuint (marked_in_phase (FB_CODE_VIEW_ASSEMBLY, "_p1"), >, 0);
  {
    /* Phase 0's code is there, unmarked. */
    g_autofree char *ll = fb_code_view_dup_text (code (), FB_CODE_VIEW_LLVM_IR);
    g_assert_nonnull (strstr (ll, "_p0("));
  }

  /* The Conv itself does the work of both phases: its padding lines are marked too. */
  show_kernel_of (find_node (import->graph, FB_OP_CONV, "/features/0/conv/Conv"));
  phase_range (0, &first, &last);
  {
    g_autoptr(GArray) marked = fb_code_view_get_marked_lines (code (), FB_CODE_VIEW_KERNEL_IR);
    gboolean padding = FALSE;
    for (guint i = 0; i < marked->len; i++)
      padding |= g_array_index (marked, guint, i) >= first && g_array_index (marked, guint, i) <= last;
    g_assert_true (padding);
  }
  g_assert_cmpuint (marked_in_phase (FB_CODE_VIEW_LLVM_IR, "_p"), >, 0);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.layout", "s", "nhwc"));
  settle ();
}

/* On the GPU, sent to cuDNN with Clips kept from it, the depthwise Conv is cuDNN's and its
 * Clip a generated pass: the Clip marks that pass's PTX and nothing of the convolution's
 * lines. */
static void
test_marks_ptx (void)
{
  FbStage *import;
  guint first, last;

  g_setenv ("FUSEBENCH_GPU_CONV", "cudnn", TRUE);
  g_setenv ("FUSEBENCH_GPU_CONV_ACT", "swish", TRUE);
  set_target ("cuda");
  import = select_stage ("import");
  show_kernel_of (find_node (import->graph, FB_OP_CLIP, "/features/1/dw/act/Clip"));
  g_assert_cmpuint (fb_code_view_get_kernel (code ())->phases->len, ==, 2);
  phase_range (1, &first, &last);
  assert_kir_marked_within (first, last);
  g_assert_cmpuint (marked_in_phase (FB_CODE_VIEW_PTX, "_p1"), >, 0);
  g_assert_cmpuint (marked_in_phase (FB_CODE_VIEW_LLVM_IR, "_p1"), >, 0);
  /* The BatchNormalization folded into the Conv: the cuDNN phase is marked, and as it has no
   * code of ours, no PTX line is. */
  show_kernel_of (find_node (import->graph, FB_OP_BATCH_NORMALIZATION, "/features/1/dw/bn/BatchNormalization"));
  phase_range (0, &first, &last);
  {
    g_autoptr(GArray) kir = fb_code_view_get_marked_lines (code (), FB_CODE_VIEW_KERNEL_IR);
    g_assert_cmpuint (kir->len, >, 0);
    g_assert_cmpuint (g_array_index (kir, guint, 0), ==, first);
  }
  set_target ("cpu");
  g_unsetenv ("FUSEBENCH_GPU_CONV");
  g_unsetenv ("FUSEBENCH_GPU_CONV_ACT");
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  /* Code is generated here, not taken from the user's kernel cache. */
  g_setenv ("FUSEBENCH_KERNEL_CACHE", "off", TRUE);
  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 860);
  gtk_window_present (GTK_WINDOW (window));
  fb_window_open_sample (window);
  settle ();

  g_test_add_func ("/ui/code-views/ptx-chain", test_ptx_chain);
  g_test_add_func ("/ui/code-views/step-keys", test_step_keys);
  g_test_add_func ("/ui/code-views/search-ptx", test_search_ptx);
  g_test_add_func ("/ui/code-views/marks-llvm-ir", test_marks_llvm_ir);
  g_test_add_func ("/ui/code-views/marks-ptx", test_marks_ptx);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  return status;
}
