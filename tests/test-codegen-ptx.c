/* SPDX-License-Identifier: GPL-3.0-or-later */
/* PTX code generation (the CUDA target), checked without a GPU: every generated kernel of the
 * test models becomes PTX that the CUDA toolkit's ptxas assembles for sm_90 (skipped, with the
 * reason, where ptxas is absent), reductions cooperate through shuffles, the launch geometry
 * covers the work, and the GPU's inline math (run here through the CPU JIT) agrees with libm. */
#include "fb-test-cpu.h"
#include "fb-codegen.h"
#include "fb-lower.h"
#include "fb-onnx-import.h"
#include "fb-pipeline.h"
#include "fb-ptx.h"

#include <string.h>

static FbPlan *
plan_for_model (const char *path, FbLayout layout)
{
  g_autoptr(GError) error = NULL;
  FbGraph *graph = fb_onnx_import_file (path, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(FbPipeline) p = fb_pipeline_new (graph);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = layout;
  g_assert_true (fb_pipeline_run (p, options, NULL, NULL, NULL, &error));
  FbPlan *plan = fb_lower_graph (fb_pipeline_final (p), "nvptx64-nvidia-cuda sm_90", &error);
  g_assert_no_error (error);
  return plan;
}

static FbPlan *
plan_for (FbOpKind op, FbTensor *x)
{
  FbGraph *g = ti_graph (17);
  FbNode *n = ti_node (g, op, 1, 1);
  tc_finish (g, n, TI_IN (x), 0);
  g_autoptr(GError) error = NULL;
  FbPlan *plan = fb_lower_graph (g, "nvptx64-nvidia-cuda sm_90", &error);
  g_assert_no_error (error);
  return plan;
}

static gboolean
has_call (const GPtrArray *body)
{
  for (guint i = 0; i < body->len; i++)
    {
      const FbKStmt *s = g_ptr_array_index (body, i);
      if (s->kind == FB_KS_CALL || (s->kind == FB_KS_LOOP && has_call (s->loop.body)))
        return TRUE;
    }
  return FALSE;
}

/* Generated code only: no convolution phase, no library call. */
static gboolean
pure_generated (const FbKernel *k)
{
  for (guint p = 0; p < k->phases->len; p++)
    {
      const FbKPhase *ph = g_ptr_array_index (k->phases, p);
      if (ph->conv || has_call (ph->body))
        return FALSE;
    }
  return k->phases->len > 0;
}

typedef struct {
  guint kernels, generated, library, refused, assembled, cooperative;
  GHashTable *seen;             /* PTX texts already assembled */
  gboolean    ptxas;
} Tally;

static void
check_plan (const FbPlan *plan, const char *what, Tally *t)
{
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      g_autoptr(GError) error = NULL;
      g_autoptr(FbPtxModule) m = fb_codegen_ptx (k, plan, &error);
      t->kernels++;
      if (m == NULL)
        {
          /* Only a lowering around library calls may lack a GPU form, and it must say which. */
          g_assert_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_UNSUPPORTED);
          g_assert_false (pure_generated (k));
          g_assert_nonnull (strstr (error->message, k->name));
          if (g_getenv ("FB_DUMP"))
            g_printerr ("refused %s (%s): %s\n", k->name, k->label, error->message);
          t->refused++;
          continue;
        }
      g_assert_cmpuint (m->phases->len, ==, k->phases->len);
      if (!pure_generated (k))
        {
          t->library++;
          if (g_getenv ("FB_DUMP"))
            for (guint p = 0; p < k->phases->len; p++)
              g_printerr ("library %s %s phase %u: %s %s\n", what, k->name, p,
                          g_array_index (m->phases, FbPtxPhase, p).entry ? "entry" : "none",
                          ((FbKPhase *) g_ptr_array_index (k->phases, p))->conv ? "conv" : "");
          for (guint p = 0; p < k->phases->len; p++)
            if (((FbKPhase *) g_ptr_array_index (k->phases, p))->conv)
              g_assert_null (g_array_index (m->phases, FbPtxPhase, p).entry);
        }
      else
        t->generated++;
      if (k->phases->len == 0)
        {
          g_assert_null (m->ptx);
          continue;
        }
      for (guint p = 0; p < m->phases->len; p++)
        {
          const FbPtxPhase *ph = &g_array_index (m->phases, FbPtxPhase, p);
          if (ph->entry == NULL)
            continue;
          g_autofree char *entry = g_strdup_printf (".entry %s(", ph->entry);
          if (strstr (m->ptx, entry) == NULL)
            g_error ("%s: kernel %s: no %s in its PTX", what, k->name, entry);
          g_assert_cmpuint (ph->block_threads, >=, 32);
          g_assert_cmpuint (ph->block_threads, <=, 1024);
          g_assert_cmpuint (ph->iters_per_block, >=, 1);
          g_assert_cmpuint (ph->blocks_per_iter, >=, 1);
          t->cooperative += ph->cooperative;
        }
      if (m->ptx == NULL)
        continue;
      /* No libm or other outside function: a GPU has none to call. */
      g_assert_null (strstr (m->ptx, ".extern .func"));
      if (!t->ptxas || g_hash_table_contains (t->seen, m->ptx))
        continue;
      if (!fb_ptx_assemble (m->ptx, NULL, NULL, &error))
        g_error ("%s: kernel %s: ptxas refused its PTX: %s", what, k->name, error->message);
      g_hash_table_add (t->seen, g_strdup (m->ptx));
      t->assembled++;
    }
}

static void
test_models (void)
{
  g_autofree char *ptxas = fb_ptx_find_tool ("ptxas");
  Tally t = { .seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
              .ptxas = ptxas != NULL };
  g_autofree char *root = g_test_build_filename (G_TEST_DIST, "cases", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = g_dir_open (root, 0, &error);
  g_assert_no_error (error);
  g_autoptr(GPtrArray) models = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while ((name = g_dir_read_name (dir)))
    {
      char *model = g_build_filename (root, name, "model.onnx", NULL);
      if (g_file_test (model, G_FILE_TEST_IS_REGULAR))
        g_ptr_array_add (models, model);
      else
        g_free (model);
    }
  g_ptr_array_add (models, g_test_build_filename (G_TEST_DIST, "..", "data", "models",
                                                  "sample-cnn", "model.onnx", NULL));
  g_assert_cmpuint (models->len, >=, 17);
  for (guint i = 0; i < models->len; i++)
    for (int nhwc = 0; nhwc < 2; nhwc++)
      {
        g_autoptr(FbPlan) plan = plan_for_model (g_ptr_array_index (models, i),
                                                 nhwc ? FB_LAYOUT_NHWC : FB_LAYOUT_NCHW);
        check_plan (plan, g_ptr_array_index (models, i), &t);
      }
  g_test_message ("%u kernels: %u generated, %u around library calls, %u refused; "
                  "%u cooperative phases; %u distinct modules assembled by ptxas",
                  t.kernels, t.generated, t.library, t.refused, t.cooperative, t.assembled);
  g_assert_cmpuint (t.generated, >, t.kernels / 2);
  g_assert_cmpuint (t.cooperative, >, 0);
  g_hash_table_unref (t.seen);
  if (ptxas == NULL)
    g_test_skip ("ptxas (CUDA toolkit) not found: PTX made but not assembled");
  ti_done ();
}

static const FbPtxPhase *
only_phase (const FbPtxModule *m)
{
  g_assert_cmpuint (m->phases->len, ==, 1);
  return &g_array_index (m->phases, FbPtxPhase, 0);
}

/* A softmax row of 1000 reduces over a block: shuffles, shared memory, barriers. */
static void
test_reduction (void)
{
  FbGraph *g = ti_graph (17);
  FbNode *n = ti_node (g, FB_OP_SOFTMAX, 1, 1);
  tc_finish (g, n, TI_IN (ti_random (2, D (8, 1000), 3)), 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (g, "nvptx64-nvidia-cuda sm_90", &error);
  g_assert_no_error (error);
  const FbKernel *k = g_ptr_array_index (plan->kernels, 0);
  g_autoptr(FbPtxModule) m = fb_codegen_ptx (k, plan, &error);
  g_assert_no_error (error);
  const FbPtxPhase *ph = only_phase (m);
  g_assert_true (ph->cooperative);
  g_assert_cmpuint (ph->block_threads, >=, 128);
  g_assert_cmpuint (ph->block_threads, <=, 1024);
  g_assert_cmpuint (ph->iters_per_block, ==, 1);
  g_assert_nonnull (strstr (m->ptx, "shfl.sync.bfly"));
  g_assert_nonnull (strstr (m->ptx, "bar.sync"));
  g_assert_nonnull (strstr (m->ptx, ".shared"));
  g_assert_nonnull (strstr (m->llvm_ir, "ptx_kernel"));
  g_assert_nonnull (strstr (m->llvm_ir, "nvvm.annotations"));
  g_assert_nonnull (strstr (m->llvm_ir, "addrspace(1)"));
  g_assert_nonnull (strstr (m->llvm_ir, "noalias"));
  ti_done ();
}

/* An elementwise nest [64, 3136]: the pixel loop joins the grid, four items a thread, loads 16
 * bytes wide; the grid the phase asks for covers every item exactly once a thread. */
static void
test_geometry (void)
{
  g_autoptr(FbPlan) plan = plan_for (FB_OP_TANH, ti_random (4, D (1, 64, 56, 56), 4));
  const FbKernel *k = g_ptr_array_index (plan->kernels, 0);
  const FbKPhase *kp = g_ptr_array_index (k->phases, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPtxModule) m = fb_codegen_ptx (k, plan, &error);
  g_assert_no_error (error);
  const FbPtxPhase *ph = only_phase (m);
  g_assert_false (ph->cooperative);
  g_assert_cmpstr (ph->entry, ==, kp->fn);
  g_assert_cmpuint (ph->block_threads, ==, 256);
  int64_t items = (int64_t) 64 * 56 * 56;
  int64_t blocks = (kp->extent + ph->iters_per_block - 1) / ph->iters_per_block * ph->blocks_per_iter;
  /* Four items a thread: the grid's threads times four cover the items, less than a block
   * per parallel iteration more. */
  g_assert_cmpint (blocks * ph->block_threads * 4, >=, items);
  g_assert_cmpint (blocks * ph->block_threads * 4, <, items + kp->extent * ph->block_threads * 4);
  if (g_getenv ("FB_DUMP")) g_printerr ("%s\n%s\n", m->llvm_ir_opt, m->ptx);
  g_assert_nonnull (strstr (m->ptx, "ld.global.nc.v4.f32"));
  g_assert_nonnull (strstr (m->ptx, "st.global.v4.f32"));
  g_assert_nonnull (strstr (m->ptx, ".maxntid 256"));
  ti_done ();
}

/* Convolutions and matrix products are the libraries': no entry for them. */
static void
test_library_phases (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "data", "models",
                                                 "sample-cnn", "model.onnx", NULL);
  /* In NHWC the convolutions are oneDNN's, a phase of their own. */
  g_autoptr(FbPlan) plan = plan_for_model (path, FB_LAYOUT_NHWC);
  guint library = 0;
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      g_autoptr(GError) error = NULL;
      g_autoptr(FbPtxModule) m = fb_codegen_ptx (k, plan, &error);
      if (m == NULL)
        {
          g_assert_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_UNSUPPORTED);
          g_assert_nonnull (strstr (error->message, k->name));
          continue;
        }
      for (guint p = 0; p < k->phases->len; p++)
        if (((FbKPhase *) g_ptr_array_index (k->phases, p))->conv)
          {
            g_assert_null (g_array_index (m->phases, FbPtxPhase, p).entry);
            library++;
          }
    }
  g_assert_cmpuint (library, >, 0);
  ti_done ();
}

static void
test_stages (void)
{
  g_autoptr(FbPlan) plan = plan_for (FB_OP_ERF, ti_random (2, D (64, 64), 5));
  const FbKernel *k = g_ptr_array_index (plan->kernels, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbKernelStages) st = fb_codegen_ptx_stages (k, plan, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (st->kernel_ir, "erf("));
  g_assert_nonnull (strstr (st->llvm_ir, "define ptx_kernel void @"));
  g_assert_nonnull (strstr (st->llvm_ir_opt, "define ptx_kernel void @"));
  g_assert_nonnull (strstr (st->assembly, ".target sm_90"));
  g_autofree char *ptxas = fb_ptx_find_tool ("ptxas");
  g_autofree char *dump = fb_ptx_find_tool ("cuobjdump");
  g_autofree char *disasm = fb_ptx_find_tool ("nvdisasm");
  if (ptxas && (dump || disasm))
    {
      g_assert_nonnull (st->sass);
      g_assert_null (strstr (st->sass, "no SASS"));
    }
  else
    g_assert_null (st->sass);
  ti_done ();
}

/* ptxas -v reports registers, and refuses broken text with its message. */
static void
test_ptxas (void)
{
  g_autofree char *ptxas = fb_ptx_find_tool ("ptxas");
  if (ptxas == NULL)
    {
      g_test_skip ("ptxas (CUDA toolkit) not found");
      return;
    }
  g_autoptr(FbPlan) plan = plan_for (FB_OP_SIGMOID, ti_random (1, D (4096), 6));
  const FbKernel *k = g_ptr_array_index (plan->kernels, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPtxModule) m = fb_codegen_ptx (k, plan, &error);
  g_assert_no_error (error);
  g_autofree char *info = NULL;
  g_autoptr(GBytes) cubin = NULL;
  g_assert_true (fb_ptx_assemble (m->ptx, &cubin, &info, &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (info, "registers"));
  g_assert_cmpuint (g_bytes_get_size (cubin), >, 0);
  g_assert_false (fb_ptx_assemble (".version 8.0\n.target sm_90\nnot ptx\n", NULL, NULL, &error));
  g_assert_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_TOOL);
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/codegen-ptx/models", test_models);
  g_test_add_func ("/codegen-ptx/reduction", test_reduction);
  g_test_add_func ("/codegen-ptx/geometry", test_geometry);
  g_test_add_func ("/codegen-ptx/library-phases", test_library_phases);
  g_test_add_func ("/codegen-ptx/stages", test_stages);
  g_test_add_func ("/codegen-ptx/ptxas", test_ptxas);
  return g_test_run ();
}
