/* SPDX-License-Identifier: GPL-3.0-or-later */
/* PTX code generation (the CUDA target), checked without a GPU: every generated kernel of the
 * test models becomes PTX that the CUDA toolkit's ptxas assembles for sm_90 (skipped, with the
 * reason, where ptxas is absent), reductions cooperate through shuffles, the launch geometry
 * covers the work, and the GPU's inline math (run here through the CPU JIT) agrees with libm. */
#include "fb-cuda.h"
#include "fb-cpu.h"
#include "fb-test-ptx.h"
#include "fb-codegen.h"
#include "fb-jit.h"
#include "fb-lower.h"
#include "fb-onnx-import.h"
#include "fb-pipeline.h"
#include "fb-ptx.h"

#include <math.h>
#include <string.h>

/* The plan of a model lowered for target: the GPU's, or the CPU's, whose contractions are
 * generated loops around sgemm calls. */
static FbPlan *
plan_for_model_on (const char *path, FbLayout layout, const FbTargetDesc *target)
{
  g_autoptr(GError) error = NULL;
  FbGraph *graph = fb_onnx_import_file (path, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(FbPipeline) p = fb_pipeline_new (graph);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = layout;
  g_assert_true (fb_pipeline_run (p, options, NULL, NULL, NULL, &error));
  FbPlan *plan = fb_lower_graph (fb_pipeline_final (p), target, &error);
  /* A model with dynamic dimensions compiles once its inputs pin them: not here. */
  if (g_error_matches (error, FB_LOWER_ERROR, FB_LOWER_ERROR_SHAPE))
    return NULL;
  g_assert_no_error (error);
  return plan;
}

static FbPlan *
plan_for_model (const char *path, FbLayout layout)
{
  return plan_for_model_on (path, layout, fb_cuda_target_desc ());
}

static FbPlan *
plan_for (FbOpKind op, FbTensor *x)
{
  FbGraph *g = ti_graph (17);
  FbNode *n = ti_node (g, op, 1, 1);
  tc_finish (g, n, TI_IN (x), 0);
  g_autoptr(GError) error = NULL;
  FbPlan *plan = fb_lower_graph (g, fb_cuda_target_desc (), &error);
  g_assert_no_error (error);
  return plan;
}

typedef struct {
  guint kernels, generated, library, refused, assembled, cooperative, before, after;
  GHashTable *seen;             /* PTX texts already assembled */
  gboolean    ptxas;
} Tally;

static void
check_plan (const FbPlan *plan, const char *what, Tally *t)
{
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      /* Kernels of the same content (the same layer in several models) once. */
      char *hash = fb_kernel_hash (k, "ptx");
      if (!g_hash_table_add (t->seen, hash))
        continue;
      g_autoptr(GError) error = NULL;
      g_autoptr(FbPtxModule) m = fb_codegen_ptx (k, plan, &error);
      t->kernels++;
      if (m == NULL)
        {
          /* Only a lowering around library calls may lack a GPU form, and it must say which. */
          g_assert_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_UNSUPPORTED);
          g_assert_false (tp_pure_generated (k));
          g_assert_nonnull (strstr (error->message, k->name));
          t->refused++;
          continue;
        }
      g_assert_cmpuint (m->phases->len, ==, k->phases->len);
      if (!tp_pure_generated (k))
        {
          t->library++;
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
          g_assert_true (ph->library == (ph->entry == NULL));
          const FbPtxLaunch launches[3] = {
            { ph->entry, ph->block_threads, ph->iters_per_block, ph->blocks_per_iter, ph->cooperative },
            ph->before, ph->after,
          };
          for (guint j = 0; j < 3; j++)
            {
              const FbPtxLaunch *l = &launches[j];
              if (l->entry == NULL)
                continue;
              g_autofree char *entry = g_strdup_printf (".entry %s(", l->entry);
              if (strstr (m->ptx, entry) == NULL)
                g_error ("%s: kernel %s: no %s in its PTX", what, k->name, entry);
              g_assert_cmpuint (l->block_threads, >=, 32);
              g_assert_cmpuint (l->block_threads, <=, 1024);
              g_assert_cmpuint (l->iters_per_block, >=, 1);
              g_assert_cmpuint (l->blocks_per_iter, >=, 1);
              t->cooperative += l->cooperative;
              t->before += j == 1;
              t->after += j == 2;
            }
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
        if (plan != NULL)
          check_plan (plan, g_ptr_array_index (models, i), &t);
      }
  g_test_message ("%u distinct kernels: %u generated, %u around library calls, %u refused; "
                  "%u cooperative entries; %u entries before and %u after library calls; "
                  "%u distinct modules assembled by ptxas", t.kernels, t.generated, t.library,
                  t.refused, t.cooperative, t.before, t.after, t.assembled);
  g_assert_cmpuint (t.generated, >, t.kernels / 2);
  g_assert_cmpuint (t.cooperative, >, 0);
  /* The GPU lowering gives contractions to cuDNN and cuBLASLt as phases of their own, so no
   * generated code runs before or after a library call inside one phase there; the entries
   * that would (im2col, epilogues over sgemm tiles) are checked on the CPU's plans below. */
  g_assert_cmpuint (t.library, >, 0);
  g_assert_cmpuint (t.refused, ==, 0);
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
  g_autoptr(FbPlan) plan = fb_lower_graph (g, fb_cuda_target_desc (), &error);
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
  /* Eight elements a thread, four at a time: 16-byte loads and stores in the rows. */
  g_assert_nonnull (strstr (m->ptx, "ld.global.nc.v4.f32"));
  g_assert_nonnull (strstr (m->ptx, "st.global.v4.f32"));
  g_assert_nonnull (strstr (m->llvm_ir, "ptx_kernel"));
  g_assert_nonnull (strstr (m->llvm_ir, "nvvm.annotations"));
  g_assert_nonnull (strstr (m->llvm_ir, "addrspace(1)"));
  g_assert_nonnull (strstr (m->llvm_ir, "noalias"));
  ti_done ();
}

static FbPtxModule *
ptx_of_only_kernel (FbGraph *g, FbNode *n, FbTensor **ins)
{
  tc_finish (g, n, ins, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (g, fb_cuda_target_desc (), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->kernels->len, ==, 1);
  FbPtxModule *m = fb_codegen_ptx (g_ptr_array_index (plan->kernels, 0), plan, &error);
  g_assert_no_error (error);
  return m;
}

/* Many short rows (a 7x7 window attention's softmax: 1176 rows of 49; a batch's 1x1
 * convolution) go a warp per row, eight rows a block: shuffles and warp barriers only. A
 * reduction down a column (each row's elements a row apart) keeps a block per row. */
static void
test_warp_rows (void)
{
  FbGraph *g = ti_graph (17);
  FbNode *n = ti_node (g, FB_OP_SOFTMAX, 1, 1);
  g_autoptr(FbPtxModule) m = ptx_of_only_kernel (g, n, TI_IN (ti_random (4, D (2, 3, 196, 49), 3)));
  const FbPtxPhase *ph = only_phase (m);
  g_assert_true (ph->cooperative);
  g_assert_cmpuint (ph->block_threads, ==, 256);
  g_assert_cmpuint (ph->row_threads, ==, 32);
  g_assert_nonnull (strstr (m->ptx, "shfl.sync.bfly"));
  g_assert_null (strstr (m->ptx, "bar.sync"));
  g_assert_null (strstr (m->ptx, ".shared"));

  /* A 1x1 convolution over a batch of 1x1 maps (a squeeze-excitation's, at batch 32): 2048
   * sums over 40 input channels, its reduction nest [channel, 0..1, 0..1]; its rows run along
   * the channels, past the kernel's loops of one. */
  g = ti_graph (17);
  n = ti_node (g, FB_OP_CONV, 2, 1);
  g_autoptr(FbPtxModule) conv = ptx_of_only_kernel (g, n, TI_IN (ti_random (4, D (32, 40, 1, 1), 5),
                                                                 ti_random (4, D (64, 40, 1, 1), 6)));
  ph = only_phase (conv);
  g_assert_true (ph->cooperative);
  g_assert_cmpuint (ph->row_threads, ==, 32);

  g = ti_graph (17);
  n = ti_node (g, FB_OP_REDUCE_MAX, 1, 1);
  ti_attr_ints (g, n, "axes", 1, (int64_t[]) { 0 });
  g_autoptr(FbPtxModule) col = ptx_of_only_kernel (g, n, TI_IN (ti_random (2, D (64, 1200), 4)));
  ph = only_phase (col);
  g_assert_true (ph->cooperative);
  g_assert_cmpuint (ph->row_threads, ==, ph->block_threads);
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

  /* Lowered as for the CPU, an NCHW convolution is im2col then sgemm: the im2col loops are an
   * entry run before the library's call. */
  g_autofree char *conv = g_test_build_filename (G_TEST_DIST, "cases", "conv", "model.onnx", NULL);
  g_autoptr(FbPlan) nchw = plan_for_model_on (conv, FB_LAYOUT_NCHW, fb_cpu_target_desc ());
  guint before = 0;
  for (guint i = 0; i < nchw->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (nchw->kernels, i);
      g_autoptr(GError) error = NULL;
      g_autoptr(FbPtxModule) m = fb_codegen_ptx (k, nchw, &error);
      g_assert_no_error (error);
      for (guint p = 0; p < m->phases->len; p++)
        {
          const FbPtxPhase *ph = &g_array_index (m->phases, FbPtxPhase, p);
          if (!ph->library || ph->before.entry == NULL)
            continue;
          g_assert_true (g_str_has_suffix (ph->before.entry, "_before"));
          g_assert_nonnull (strstr (m->ptx, ph->before.entry));
          before++;
        }
    }
  g_assert_cmpuint (before, >, 0);
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
    {
      /* The page says which tool is missing rather than staying blank. */
      g_assert_nonnull (st->sass);
      g_assert_nonnull (strstr (st->sass, "no SASS"));
      g_assert_nonnull (strstr (st->sass, dump || disasm ? "ptxas" : "cuobjdump nor nvdisasm"));
    }
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

/* The registers ptxas reports for the only entry of a module ("Used N registers"). */
static guint
registers_used (const char *ptx)
{
  g_autofree char *info = NULL;
  g_autoptr(GError) error = NULL;
  g_assert_true (fb_ptx_assemble (ptx, NULL, &info, &error));
  g_assert_no_error (error);
  const char *used = strstr (info, "Used ");
  g_assert_nonnull (used);
  return (guint) atoi (used + 5);
}

/* Every entry carries the register budget (.maxnreg 128 unless FUSEBENCH_PTX_MAX_REGISTERS
 * says otherwise, none at 0), and ptxas keeps to it: a budget under what it would use on its
 * own brings the count down to it (ptxas goes no lower than 24). */
static void
test_register_budget (void)
{
  g_autofree char *ptxas = fb_ptx_find_tool ("ptxas");
  g_autoptr(FbPlan) plan = plan_for (FB_OP_SIGMOID, ti_random (1, D (4096), 6));
  const FbKernel *k = g_ptr_array_index (plan->kernels, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPtxModule) def = fb_codegen_ptx (k, plan, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (def->ptx, ".maxnreg 128"));
  g_setenv ("FUSEBENCH_PTX_MAX_REGISTERS", "0", TRUE);
  g_autoptr(FbPtxModule) free_choice = fb_codegen_ptx (k, plan, &error);
  g_setenv ("FUSEBENCH_PTX_MAX_REGISTERS", "24", TRUE);
  g_autoptr(FbPtxModule) tight = fb_codegen_ptx (k, plan, &error);
  g_unsetenv ("FUSEBENCH_PTX_MAX_REGISTERS");
  g_assert_no_error (error);
  g_assert_null (strstr (free_choice->ptx, ".maxnreg"));
  g_assert_nonnull (strstr (tight->ptx, ".maxnreg 24"));
  if (ptxas == NULL)
    {
      g_test_skip ("ptxas (CUDA toolkit) not found: the budgets' effect is not checked");
      return;
    }
  guint own = registers_used (free_choice->ptx);
  g_assert_cmpuint (own, >, 24);
  g_assert_cmpuint (registers_used (tight->ptx), <=, 24);
  g_assert_cmpuint (registers_used (def->ptx), <=, 128);
  ti_done ();
}

/* A budget the assembler keeps only by spilling is taken out again: the verbose log's spill
 * stores are read, and the PTX without its budgets is the PTX made with none. */
static void
test_register_budget_spills (void)
{
  g_assert_false (fb_ptx_log_spills (NULL));
  g_assert_false (fb_ptx_log_spills ("ptxas info    : Function properties for f\n"
                                     "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"));
  g_assert_true (fb_ptx_log_spills ("    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                                    "    512 bytes stack frame, 556 bytes spill stores, 564 bytes spill loads\n"));
  g_autoptr(FbPlan) plan = plan_for (FB_OP_SIGMOID, ti_random (1, D (4096), 6));
  const FbKernel *k = g_ptr_array_index (plan->kernels, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPtxModule) def = fb_codegen_ptx (k, plan, &error);
  g_assert_no_error (error);
  g_setenv ("FUSEBENCH_PTX_MAX_REGISTERS", "0", TRUE);
  g_autoptr(FbPtxModule) none = fb_codegen_ptx (k, plan, &error);
  g_unsetenv ("FUSEBENCH_PTX_MAX_REGISTERS");
  g_assert_no_error (error);
  g_autofree char *unbudgeted = fb_ptx_without_register_budget (def->ptx);
  g_assert_cmpstr (unbudgeted, ==, none->ptx);
  /* ptxas's own logs: test-codegen-ptx-depthwise's /budget-spills. */
  ti_done ();
}

/* Runs op on x (and y) through the host JIT with the GPU's math and compares with the
 * interpreter (libm): rtol 2e-6 for float, 1e-12 for double. */
static void
check_gpu_math (FbOpKind op, FbDType dt, guint n, const double *x, const double *y)
{
  FbGraph *g = ti_graph (17);
  FbNode *node = ti_node (g, op, y ? 2 : 1, 1);
  FbTensor *ins[2] = { ti_tensor (dt, 1, D (n), x), y ? ti_tensor (dt, 1, D (n), y) : NULL };
  FbTensor *expected = ti_run1 (node, ins);
  tc_finish (g, node, ins, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = fb_lower_graph (g, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (plan->kernels->len, ==, 1);
  const FbKernel *k = g_ptr_array_index (plan->kernels, 0);
  g_autoptr(GBytes) obj = fb_codegen_kernel_object_gpu_math (k, &error);
  g_assert_no_error (error);
  g_autoptr(FbJit) jit = fb_jit_new (&error);
  g_assert_no_error (error);
  g_assert_true (fb_jit_add_object (jit, obj, &error));
  g_autoptr(GPtrArray) bufs = g_ptr_array_new_with_free_func (g_free);
  void *out = NULL;
  for (guint a = 0; a < k->args->len; a++)
    {
      const FbKArg *arg = &g_array_index (k->args, FbKArg, a);
      guint root = fb_plan_root (plan, arg->buffer);
      const FbBuffer *b = fb_plan_buffer (plan, root);
      void *mem = g_malloc0 (b->nbytes);
      for (guint i = 0; i < plan->inputs->len; i++)
        if (g_array_index (plan->inputs, guint, i) == root)
          memcpy (mem, fb_tensor_data (ins[i]), b->nbytes);
      if (b->kind == FB_BUF_OUTPUT)
        out = mem;
      g_ptr_array_add (bufs, mem);
    }
  g_assert_nonnull (out);
  for (guint p = 0; p < k->phases->len; p++)
    {
      const FbKPhase *ph = g_ptr_array_index (k->phases, p);
      FbPhaseFn fn = fb_jit_lookup (jit, ph->fn, &error);
      g_assert_no_error (error);
      fn (bufs->pdata, 0, ph->extent);
    }
  double rtol = dt == FB_DTYPE_FLOAT32 ? 2e-6 : 1e-12, atol = dt == FB_DTYPE_FLOAT32 ? 1e-7 : 1e-15;
  for (guint i = 0; i < n; i++)
    {
      double got = dt == FB_DTYPE_FLOAT32 ? ((float *) out)[i] : ((double *) out)[i];
      double want = fb_tensor_get_f64 (expected, i);
      gboolean same = (isnan (got) && isnan (want)) || got == want ||
                      fabs (got - want) <= rtol * fabs (want) + atol;
      if (!same)
        g_error ("%s %s (%.17g%s%.17g): GPU math gives %.17g, libm %.17g", fb_op_name (op),
                 fb_dtype_name (dt), x[i], y ? ", " : "", y ? y[i] : 0.0, got, want);
    }
}

static void
test_gpu_math (void)
{
  static const double logs[] = { 1e-40, 1e-30, 1e-10, 0.25, 0.5, 0.7071, 0.999, 1, 1.001, 1.5,
                                 2, 10, 12345.678, 1e10, 3e38, 0, -1, INFINITY, NAN };
  static const double exps[] = { -800, -745, -700, -50, -1, -1e-3, 0, 1e-3, 0.5, 1, 20, 700, 709.7,
                                 710, NAN };
  static const double trig[] = { -100, -3.14159, -2.5, -1, -0.5, 0, 0.1, 0.785, 1, 1.5708, 2, 3,
                                 6.28, 10, 100, 1000, NAN };
  static const double erfs[] = { -7, -6, -3, -2, -1.5, -1, -0.1, 0, 1e-9, 1e-5, 0.5, 1, 1.9, 2,
                                 2.1, 3, 4.5, 5.9, 6.1, 9, NAN };
  static const double px[] = { 2, 2, -2, -2, 0.5, 10, 0, 0, 3, -8, 1, NAN, 1.5, 7 };
  static const double py[] = { 3, 0.5, 3, 2, -1, 10, 2, 0, 0, 1.0 / 3, NAN, 0, -2.5, 11 };
  for (int d = 0; d < 2; d++)
    {
      FbDType dt = d ? FB_DTYPE_FLOAT64 : FB_DTYPE_FLOAT32;
      /* Float inputs that are not floats (1e-40, 3e38 in double) still check the double path. */
      check_gpu_math (FB_OP_LOG, dt, G_N_ELEMENTS (logs), logs, NULL);
      check_gpu_math (FB_OP_SIN, dt, G_N_ELEMENTS (trig), trig, NULL);
      check_gpu_math (FB_OP_COS, dt, G_N_ELEMENTS (trig), trig, NULL);
      check_gpu_math (FB_OP_POW, dt, G_N_ELEMENTS (px), px, py);
      if (d)
        {
          check_gpu_math (FB_OP_EXP, dt, G_N_ELEMENTS (exps), exps, NULL);
          check_gpu_math (FB_OP_ERF, dt, G_N_ELEMENTS (erfs), erfs, NULL);
        }
    }
  ti_done ();
}

/* Blocks of 128 or 256 threads here, each an OS thread while it runs. */
static void
test_emulated (void)
{
  FbGraph *g = ti_graph (17);
  FbNode *n = ti_node (g, FB_OP_SOFTMAX, 1, 1);
  tp_check_emulated (g, n, TI_IN (ti_random (2, D (3, 1000), 7)), 1, TRUE);
  g = ti_graph (17);
  n = ti_node (g, FB_OP_GLOBAL_AVERAGE_POOL, 1, 1);
  tp_check_emulated (g, n, TI_IN (ti_random (4, D (1, 6, 7, 7), 9)), 1, TRUE);
  /* A warp per row: 1030 rows of 80 (two or three elements a lane) with LayerNormalization's
   * two reductions, scale and bias; the second grid, a third of the first, leaves some warps
   * more rows than others. */
  g = ti_graph (17);
  n = ti_node (g, FB_OP_LAYER_NORMALIZATION, 3, 1);
  tp_check_emulated (g, n, TI_IN (ti_random (2, D (1030, 80), 14), ti_random (1, D (80), 15),
                                  ti_random (1, D (80), 16)), 3, TRUE);
  g = ti_graph (17);
  n = ti_node (g, FB_OP_TANH, 1, 1);
  tp_check_emulated (g, n, TI_IN (ti_random (4, D (1, 16, 30, 30), 10)), 1, FALSE);
  g = ti_graph (17);
  n = ti_node (g, FB_OP_ADD, 2, 1);
  tp_check_emulated (g, n, TI_IN (ti_random (4, D (1, 24, 20, 20), 11), ti_random (4, D (1, 24, 1, 1), 12)), 2, FALSE);
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/codegen-ptx/models", test_models);
  g_test_add_func ("/codegen-ptx/reduction", test_reduction);
  g_test_add_func ("/codegen-ptx/warp-rows", test_warp_rows);
  g_test_add_func ("/codegen-ptx/geometry", test_geometry);
  g_test_add_func ("/codegen-ptx/library-phases", test_library_phases);
  g_test_add_func ("/codegen-ptx/stages", test_stages);
  g_test_add_func ("/codegen-ptx/ptxas", test_ptxas);
  g_test_add_func ("/codegen-ptx/register-budget", test_register_budget);
  g_test_add_func ("/codegen-ptx/register-budget-spills", test_register_budget_spills);
  g_test_add_func ("/codegen-ptx/gpu-math", test_gpu_math);
  g_test_add_func ("/codegen-ptx/emulated", test_emulated);
  return g_test_run ();
}
