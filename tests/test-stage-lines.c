/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where each line of every lowering stage came from: the kernel IR lines of statements and
 * phases, the original nodes each phase computes, and the debug locations code generation gives
 * every instruction, read back from LLVM IR, x86-64 assembly and PTX. */
#include "fb-cuda.h"
#include "fb-codegen.h"
#include "fb-lower.h"
#include "fb-onnx-import.h"
#include "fb-pipeline.h"
#include "fb-ptx.h"
#include "fb-cpu.h"

#include <string.h>

static FbPipeline *pipeline_nchw;
static FbPipeline *pipeline_nhwc;

static FbPipeline *
sample_pipeline (FbLayout layout)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "..", "data", "models",
                                             "sample-cnn", "model.onnx", NULL);
  FbGraph *graph = fb_onnx_import_file (model, NULL, &error);
  g_assert_no_error (error);
  FbPipeline *pipeline = fb_pipeline_new (graph);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = layout;
  g_assert_true (fb_pipeline_run (pipeline, options, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  return pipeline;
}

static FbPlan *
lower (FbPipeline *pipeline, const FbTargetDesc *target)
{
  g_autoptr(GError) error = NULL;
  FbPlan *plan = fb_lower_graph (fb_pipeline_final (pipeline), target, &error);
  g_assert_no_error (error);
  fb_plan_layout_memory (plan);
  return plan;
}

static const FbKernel *
find_kernel (const FbPlan *plan, const char *label)
{
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      if (g_strcmp0 (k->label, label) == 0)
        return k;
    }
  g_error ("no kernel labelled %s", label);
  return NULL;
}

/* The original node of the model whose name ends in suffix. */
static guint
orig_node (FbPipeline *pipeline, const char *suffix)
{
  FbModel *model = fb_pipeline_final (pipeline)->model;
  for (guint i = 0;; i++)
    {
      const char *name = fb_model_orig_name (model, i);
      g_assert_nonnull (name);
      if (g_str_has_suffix (name, suffix))
        return i;
    }
}

/* Line n (from 1) of text, without its newline. */
static char *
line_of (const char *text, guint n)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (n, >=, 1);
  g_assert_cmpuint (n, <=, g_strv_length (lines));
  return g_strdup (lines[n - 1]);
}

static guint
count_lines (const char *text)
{
  guint n = 1;
  for (const char *p = text; *p; p++)
    n += *p == '\n';
  return n;
}

/* The first store statement of body, depth first. */
static const FbKStmt *
first_store (const GPtrArray *body)
{
  for (guint i = 0; i < body->len; i++)
    {
      const FbKStmt *s = g_ptr_array_index (body, i);
      if (s->kind == FB_KS_STORE)
        return s;
      if (s->kind == FB_KS_LOOP && (s = first_store (s->loop.body)) != NULL)
        return s;
    }
  return NULL;
}

/* LLVM IR as LLVM prints it: instructions name their locations, which come after the code. */
static void
test_parse_llvm_ir (void)
{
  const char *ir =
    "define void @f(ptr %0) !dbg !4 {\n"
    "  %2 = load float, ptr %0, align 4, !dbg !7\n"
    "  store float %2, ptr %0, align 4, !dbg !9\n"
    "  ret void\n"
    "}\n"
    "!4 = distinct !DISubprogram(name: \"f\", scope: !1, file: !1, line: 8, scopeLine: 8, unit: !0)\n"
    "!7 = !DILocation(line: 12, scope: !4)\n"
    "!9 = !DILocation(line: 13, scope: !8, inlinedAt: !7)\n";
  g_autoptr(GArray) map = fb_stage_lines_llvm_ir (ir);
  static const guint expected[] = { 8, 12, 13, 0, 0, 0, 0, 0, 0 };

  g_assert_cmpuint (map->len, ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < map->len; i++)
    g_assert_cmpuint (g_array_index (map, guint, i), ==, expected[i]);
}

/* A .loc names the kernel IR line of what follows it, to the next one or the function's end. */
static void
test_parse_assembly (void)
{
  const char *x86 =
    "f:\n"
    ".Lfunc_begin0:\n"
    "\t.loc\t1 9 0 prologue_end\n"
    "\tmovss\t12(%rdi), %xmm0\n"
    "\t.loc\t1 10 0\n"
    "\taddss\t%xmm1, %xmm0\n"
    "\tretq\n"
    ".Lfunc_end0:\n"
    "\t.size\tf, .Lfunc_end0-f\n";
  const char *ptx =
    ".visible .entry k(\n"
    "{\n"
    "\t.loc\t1 7 0\n"
    "\tld.global.f32 \t%f1, [%rd3];\n"
    "\tret;\n"
    "}\n"
    "\t.file\t1 \"k.kir\"\n";
  static const guint x86_expected[] = { 0, 0, 9, 9, 10, 10, 10, 0, 0, 0 };
  static const guint ptx_expected[] = { 0, 7, 7, 7, 7, 0, 0, 0 };
  g_autoptr(GArray) a = fb_stage_lines_assembly (x86);
  g_autoptr(GArray) b = fb_stage_lines_assembly (ptx);

  g_assert_cmpuint (a->len, ==, G_N_ELEMENTS (x86_expected));
  for (guint i = 0; i < a->len; i++)
    g_assert_cmpuint (g_array_index (a, guint, i), ==, x86_expected[i]);
  g_assert_cmpuint (b->len, ==, G_N_ELEMENTS (ptx_expected));
  /* The opening brace follows the .entry line: nothing located yet. */
  g_assert_cmpuint (g_array_index (b, guint, 1), ==, 0);
  for (guint i = 2; i < b->len; i++)
    g_assert_cmpuint (g_array_index (b, guint, i), ==, ptx_expected[i]);
}

/* Every statement and phase is found on the line that prints it. */
static void
test_kernel_ir_lines (void)
{
  g_autoptr(FbPlan) plan = lower (pipeline_nchw, fb_cuda_target_desc ());
  const FbKernel *k = find_kernel (plan, "Conv + Clip");
  g_autoptr(FbKernelLines) lines = NULL;
  g_autofree char *text = fb_kernel_to_string_lines (k, plan, &lines);
  g_autofree char *plain = fb_kernel_to_string (k, plan);

  g_assert_cmpstr (text, ==, plain);
  g_assert_cmpuint (fb_kernel_lines_count (lines), ==, count_lines (text) - 1);
  g_assert_cmpint (fb_kernel_lines_phase_at (lines, 1), ==, -1);
  for (guint p = 0; p < k->phases->len; p++)
    {
      const FbKPhase *ph = g_ptr_array_index (k->phases, p);
      guint at = fb_kernel_lines_of (lines, ph);
      g_autofree char *header = line_of (text, at);
      g_autofree char *expected = g_strdup_printf ("  phase %u: ", p);

      g_assert_true (g_str_has_prefix (header, expected));
      g_assert_cmpint (fb_kernel_lines_phase_at (lines, at), ==, p);
      if (ph->conv == NULL)
        {
          const FbKStmt *store = first_store (ph->body);
          guint sl = fb_kernel_lines_of (lines, store);
          g_autofree char *stored = line_of (text, sl);
          g_autofree char *arg = g_strdup_printf ("a%u[", store->store.arg);

          g_assert_true (g_str_has_prefix (g_strchug (stored), arg));
          g_assert_cmpint (fb_kernel_lines_phase_at (lines, sl), ==, p);
        }
    }
}

/* A phase knows the original nodes whose work it does: on the GPU the depthwise convolution
 * is one generated phase that applies its Clip too, or, sent to cuDNN, one cuDNN phase that
 * applies it, or, with Clips kept from cuDNN, a cuDNN phase and a generated pass for the Clip;
 * on the CPU oneDNN applies the Clip as a post-op of the convolution, one phase for all. */
static void
test_phase_provenance (void)
{
  g_autoptr(FbPlan) gpu = lower (pipeline_nchw, fb_cuda_target_desc ());
  g_autoptr(FbPlan) cpu = lower (pipeline_nhwc, fb_cpu_target_desc ());
  guint conv = orig_node (pipeline_nchw, "/features/1/dw/conv/Conv");
  guint bn = orig_node (pipeline_nchw, "/features/1/dw/bn/BatchNormalization");
  guint clip = orig_node (pipeline_nchw, "/features/1/dw/act/Clip");
  const FbKernel *k = find_kernel (gpu, "Conv + Clip");
  const FbKPhase *library, *epilogue;

  g_assert_cmpuint (k->phases->len, ==, 1);
  epilogue = g_ptr_array_index (k->phases, 0);
  g_assert_null (epilogue->conv);
  g_assert_true (fb_kphase_has_prov (epilogue, conv));
  g_assert_true (fb_kphase_has_prov (epilogue, bn));
  g_assert_true (fb_kphase_has_prov (epilogue, clip));

  g_setenv ("FUSEBENCH_GPU_CONV", "cudnn", TRUE);
  g_autoptr(FbPlan) gpu_fused = lower (pipeline_nchw, fb_cuda_target_desc ());
  g_setenv ("FUSEBENCH_GPU_CONV_ACT", "swish", TRUE);
  g_autoptr(FbPlan) gpu_cudnn = lower (pipeline_nchw, fb_cuda_target_desc ());
  g_unsetenv ("FUSEBENCH_GPU_CONV");
  g_unsetenv ("FUSEBENCH_GPU_CONV_ACT");

  k = find_kernel (gpu_fused, "Conv + Clip");
  g_assert_cmpuint (k->phases->len, ==, 1);
  library = g_ptr_array_index (k->phases, 0);
  g_assert_nonnull (library->conv);
  g_assert_cmpint (library->conv->desc.n_post, ==, 1);
  g_assert_cmpint (library->conv->desc.post[0].kind, ==, FB_CONV_POST_CLIP);
  g_assert_true (fb_kphase_has_prov (library, conv));
  g_assert_true (fb_kphase_has_prov (library, bn));
  g_assert_true (fb_kphase_has_prov (library, clip));

  k = find_kernel (gpu_cudnn, "Conv + Clip");
  g_assert_cmpuint (k->phases->len, ==, 2);
  library = g_ptr_array_index (k->phases, 0);
  epilogue = g_ptr_array_index (k->phases, 1);
  g_assert_nonnull (library->conv);
  g_assert_true (fb_kphase_has_prov (library, conv));
  g_assert_true (fb_kphase_has_prov (library, bn));
  g_assert_false (fb_kphase_has_prov (library, clip));
  g_assert_true (fb_kphase_has_prov (epilogue, clip));

  k = find_kernel (cpu, "Conv + Clip");
  g_assert_cmpuint (orig_node (pipeline_nhwc, "/features/1/dw/act/Clip"), ==, clip);
  for (guint p = 0; p < k->phases->len; p++)
    g_assert_true (fb_kphase_has_prov (g_ptr_array_index (k->phases, p), clip));

  /* Every phase of every kernel stands for some original node. */
  for (guint i = 0; i < gpu->kernels->len; i++)
    {
      const FbKernel *kk = g_ptr_array_index (gpu->kernels, i);
      for (guint p = 0; p < kk->phases->len; p++)
        g_assert_cmpuint (((FbKPhase *) g_ptr_array_index (kk->phases, p))->prov->len, >, 0);
    }
}

/* Checks a stage's map against its text: one entry a line, each a kernel IR line or 0; returns
 * how many lines of text lead to kir_line. */
static guint
check_map (const char *text, GArray *map, guint n_kir, guint kir_line)
{
  guint hits = 0;

  g_assert_nonnull (map);
  g_assert_cmpuint (map->len, ==, count_lines (text));
  for (guint i = 0; i < map->len; i++)
    {
      guint l = g_array_index (map, guint, i);
      g_assert_cmpuint (l, <=, n_kir);
      hits += l == kir_line;
    }
  return hits;
}

/* Whether some line of text that contains needle leads to kir_line, and none leads elsewhere. */
static gboolean
needle_at (const char *text, GArray *map, const char *needle, guint kir_line)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  gboolean seen = FALSE;

  for (guint i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], needle) != NULL)
      {
        guint l = g_array_index (map, guint, i);
        if (l != kir_line)
          g_error ("“%s” (line %u) comes from kernel IR line %u, not %u", lines[i], i + 1, l,
                   kir_line);
        seen = TRUE;
      }
  return seen;
}

/* Whether a line of text that leads to kir_line contains needle. */
static gboolean
line_at_has (const char *text, GArray *map, guint kir_line, const char *needle)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    if (g_array_index (map, guint, i) == kir_line && strstr (lines[i], needle) != NULL)
      return TRUE;
  return FALSE;
}

/* The stages of a kernel for the CPU: its stores in the optimized IR come from the kernel IR's
 * store, and its assembly's lines lead back to kernel IR lines. */
static void
test_cpu_stages (void)
{
  g_autoptr(FbPlan) plan = lower (pipeline_nhwc, fb_cpu_target_desc ());
  const FbKernel *k = find_kernel (plan, "Softmax");
  g_autoptr(GError) error = NULL;
  g_autoptr(FbKernelStages) st = fb_codegen_kernel_stages (k, plan, &error);
  g_autoptr(FbKernelLines) lines = NULL;
  g_autofree char *text = fb_kernel_to_string_lines (k, plan, &lines);
  const FbKPhase *ph = g_ptr_array_index (k->phases, 0);
  guint n = fb_kernel_lines_count (lines);
  guint store = fb_kernel_lines_of (lines, first_store (ph->body));

  g_assert_no_error (error);
  g_assert_cmpstr (st->kernel_ir, ==, text);
  g_assert_cmpuint (st->kir_phase->len, ==, count_lines (text));
  g_assert_cmpuint (g_array_index (st->kir_phase, guint, 0), ==, 0);
  g_assert_cmpuint (g_array_index (st->kir_phase, guint, store - 1), ==, 1);
  g_assert_cmpuint (check_map (st->llvm_ir, st->llvm_ir_lines, n, store), >, 0);
  g_assert_cmpuint (check_map (st->llvm_ir_opt, st->llvm_ir_opt_lines, n, store), >, 0);
  g_assert_cmpuint (check_map (st->assembly, st->assembly_lines, n, store), >, 0);
  /* The output's store is the store statement's, before and after optimization. */
  g_assert_true (line_at_has (st->llvm_ir, st->llvm_ir_lines, store, "store float"));
  g_assert_true (line_at_has (st->llvm_ir_opt, st->llvm_ir_opt_lines, store, "store"));
  g_assert_true (line_at_has (st->assembly, st->assembly_lines, store, ".loc\t1 "));
  /* The function's definition is at the phase's line. */
  g_assert_true (needle_at (st->llvm_ir_opt, st->llvm_ir_opt_lines, "define void @",
                            fb_kernel_lines_of (lines, ph)));
}

/* The stages of the same kind of kernel for the GPU: the PTX of the Clip pass stores from the
 * kernel IR's store statement, and nothing of the cuDNN phase is in it. */
static void
test_ptx_stages (void)
{
  /* cuDNN's depthwise convolution with the Clip kept from it, so that the generated phase is
   * the Clip's pass with its one store. */
  g_setenv ("FUSEBENCH_GPU_CONV", "cudnn", TRUE);
  g_setenv ("FUSEBENCH_GPU_CONV_ACT", "swish", TRUE);
  g_autoptr(FbPlan) plan = lower (pipeline_nchw, fb_cuda_target_desc ());
  g_unsetenv ("FUSEBENCH_GPU_CONV");
  g_unsetenv ("FUSEBENCH_GPU_CONV_ACT");
  const FbKernel *k = find_kernel (plan, "Conv + Clip");
  g_autoptr(GError) error = NULL;
  g_autoptr(FbKernelStages) st = fb_codegen_ptx_stages (k, plan, &error);
  g_autoptr(FbKernelLines) lines = NULL;
  g_autofree char *text = fb_kernel_to_string_lines (k, plan, &lines);
  guint last = k->phases->len;
  const FbKPhase *epilogue = g_ptr_array_index (k->phases, last - 1);
  guint n = fb_kernel_lines_count (lines);
  guint store = fb_kernel_lines_of (lines, first_store (epilogue->body));

  g_assert_no_error (error);
  g_assert_cmpuint (last, ==, 2);
  g_assert_cmpuint (g_array_index (st->kir_phase, guint, store - 1), ==, last);
  g_assert_cmpuint (check_map (st->assembly, st->assembly_lines, n, store), >, 0);
  g_assert_true (needle_at (st->assembly, st->assembly_lines, "st.global", store));
  g_assert_true (needle_at (st->llvm_ir_opt, st->llvm_ir_opt_lines, "define ptx_kernel void @",
                            fb_kernel_lines_of (lines, epilogue)));
  for (guint i = 0; i < st->assembly_lines->len; i++)
    {
      guint l = g_array_index (st->assembly_lines, guint, i);
      if (l != 0)
        g_assert_cmpuint (g_array_index (st->kir_phase, guint, l - 1), ==, last);
    }
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  pipeline_nchw = sample_pipeline (FB_LAYOUT_NCHW);
  pipeline_nhwc = sample_pipeline (FB_LAYOUT_NHWC);
  g_test_add_func ("/stage-lines/parse-llvm-ir", test_parse_llvm_ir);
  g_test_add_func ("/stage-lines/parse-assembly", test_parse_assembly);
  g_test_add_func ("/stage-lines/kernel-ir-lines", test_kernel_ir_lines);
  g_test_add_func ("/stage-lines/phase-provenance", test_phase_provenance);
  g_test_add_func ("/stage-lines/cpu-stages", test_cpu_stages);
  g_test_add_func ("/stage-lines/ptx-stages", test_ptx_stages);
  status = g_test_run ();
  fb_pipeline_free (pipeline_nchw);
  fb_pipeline_free (pipeline_nhwc);
  return status;
}
