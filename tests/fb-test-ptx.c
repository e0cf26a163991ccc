/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-backend.h"
#include "fb-bundle.h"
#include "fb-cuda.h"
#include "fb-test-ptx.h"
#include "fb-codegen.h"
#include "fb-jit.h"
#include "fb-lower.h"
#include "fb-ptx.h"
#include "fb-compare.h"
#include "fb-interp.h"
#include "fb-pipeline.h"
#include "fb-memory-plan.h"

#include <math.h>
#include <string.h>

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

TpLowered
tp_lower (FbGraph *graph, FbLayout layout, const FbTargetDesc *target)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipeline) p = fb_pipeline_new (graph);
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = layout;
  g_assert_true (fb_pipeline_run (p, options, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  /* The plan borrows the final graph: it goes first. */
  g_autoptr(FbPlan) plan = fb_lower_graph (fb_pipeline_final (p), target, &error);
  g_assert_no_error (error);
  TpLowered r = { .kernels = plan->kernels->len, .generated = TRUE };
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      if (g_test_verbose ())
        g_test_message ("%s: kernel %s", target->triple, k->name);
      r.generated &= k->phases->len == 0 || tp_pure_generated (k);     /* a view, or code */
      r.most_phases = MAX (r.most_phases, k->phases->len);
      for (guint ph = 0; ph < k->phases->len; ph++)
        r.conv_phases += ((const FbKPhase *) g_ptr_array_index (k->phases, ph))->conv != NULL;
    }
  return r;
}

gboolean
tp_pure_generated (const FbKernel *k)
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
  GMutex  lock;
  GCond   cond;
  guint   threads, count, generation;
  guint   warp_count[32], warp_generation[32];
  float   slots_f[1024];
  gint32  slots_i[1024];
} EmuBlock;

typedef struct {
  FbPtxEmuThread t;             /* first: the emulated code sees only this */
  EmuBlock      *block;
  FbPtxEmuFn     fn;
  void         **args;
  int64_t        begin, end;
} EmuThread;

static void
emu_barrier (FbPtxEmuThread *self)
{
  EmuBlock *b = ((EmuThread *) self)->block;
  g_mutex_lock (&b->lock);
  guint gen = b->generation;
  if (++b->count == b->threads)
    {
      b->count = 0;
      b->generation++;
      g_cond_broadcast (&b->cond);
    }
  else
    while (gen == b->generation)
      g_cond_wait (&b->cond, &b->lock);
  g_mutex_unlock (&b->lock);
}

/* __syncwarp: the threads of self's warp only, so that the warps of a block may run different
 * numbers of rows (a warp per row) and the other warps need not take part. */
static void
emu_warp_sync (FbPtxEmuThread *self)
{
  EmuBlock *b = ((EmuThread *) self)->block;
  guint w = self->tid / 32, lanes = MIN (32, b->threads - w * 32);
  g_mutex_lock (&b->lock);
  guint gen = b->warp_generation[w];
  if (++b->warp_count[w] == lanes)
    {
      b->warp_count[w] = 0;
      b->warp_generation[w]++;
      g_cond_broadcast (&b->cond);
    }
  else
    while (gen == b->warp_generation[w])
      g_cond_wait (&b->cond, &b->lock);
  g_mutex_unlock (&b->lock);
}

static float
emu_shfl_f32 (FbPtxEmuThread *self, float v, gint32 lane_xor)
{
  EmuBlock *b = ((EmuThread *) self)->block;
  b->slots_f[self->tid] = v;
  emu_warp_sync (self);
  float r = b->slots_f[self->tid ^ lane_xor];
  emu_warp_sync (self);
  return r;
}

static gint32
emu_shfl_i32 (FbPtxEmuThread *self, gint32 v, gint32 lane_xor)
{
  EmuBlock *b = ((EmuThread *) self)->block;
  b->slots_i[self->tid] = v;
  emu_warp_sync (self);
  gint32 r = b->slots_i[self->tid ^ lane_xor];
  emu_warp_sync (self);
  return r;
}

static gpointer
emu_thread (gpointer data)
{
  EmuThread *t = data;
  t->fn (t->args, t->begin, t->end, &t->t);
  return NULL;
}

/* Runs a launch of l over [0, extent) on grid blocks: a thread each for cooperative entries
 * (barriers and shuffles need them all live), one after the other for plain ones. */
static void
emulate (FbJit *jit, const FbPtxLaunch *l, void **args, int64_t extent, int64_t grid)
{
  g_autoptr(GError) error = NULL;
  FbPtxEmuFn fn = (FbPtxEmuFn) fb_jit_lookup (jit, l->entry, &error);
  g_assert_no_error (error);
  guint T = l->block_threads;
  g_autofree EmuThread *th = g_new0 (EmuThread, T);
  g_autofree GThread **gt = g_new0 (GThread *, T);
  for (int64_t blk = 0; blk < grid; blk++)
    {
      EmuBlock *b = g_new0 (EmuBlock, 1);
      g_mutex_init (&b->lock);
      g_cond_init (&b->cond);
      b->threads = T;
      for (guint t = 0; t < T; t++)
        {
          th[t] = (EmuThread) { .t = { .tid = t, .ctaid = blk, .nctaid = grid, .ntid = T,
                                       .barrier = emu_barrier, .shfl_f32 = emu_shfl_f32,
                                       .shfl_i32 = emu_shfl_i32, .warp_sync = emu_warp_sync },
                                .block = b, .fn = fn, .args = args, .begin = 0, .end = extent };
          if (l->cooperative)
            gt[t] = g_thread_new ("emu", emu_thread, &th[t]);
          else
            emu_thread (&th[t]);
        }
      for (guint t = 0; l->cooperative && t < T; t++)
        g_thread_join (gt[t]);
      g_mutex_clear (&b->lock);
      g_cond_clear (&b->cond);
      g_free (b);
    }
}

/* The bytes of buffer b of plan as a tensor of its type and shape. */
static FbTensor *
buffer_tensor (const FbPlan *plan, guint b, const void *bytes)
{
  const FbBuffer *buf = fb_plan_buffer (plan, b);
  g_autoptr(GError) error = NULL;
  FbTensor *t = fb_tensor_new (buf->dtype, buf->rank, buf->dims, &error);
  g_assert_no_error (error);
  memcpy (fb_tensor_data_mut (t), bytes, buf->nbytes);
  return t;
}

/* An operand of a split product as TF32 tensor cores read it: its 10 upper fraction bits
 * (truncated, the farther of the two ways the hardware may take). The parts of a right split
 * lose nothing there but the remainders' last bits; a split that left TF32's dropped bits in
 * its first part misses float32's tolerance. */
static double
tensor_core_read (const FbKGemm *g, float v)
{
  if (!g->split3)
    return v;
  uint32_t bits;
  memcpy (&bits, &v, sizeof bits);
  bits &= 0xffffe000u;
  memcpy (&v, &bits, sizeof v);
  return v;
}

/* y[b] = alpha op(x[b]) op(w[b]) (+ bias, then max (y, 0) with relu) as FbKGemm describes it:
 * the host's reading of every stride and offset a cuBLASLt product is given. */
static void
emulate_gemm (const FbKGemm *g, const float *x, const float *w, const float *bias,
              const float *add, float *y)
{
  for (int64_t b = 0; b < g->batch; b++)
    for (int64_t i = 0; i < g->m; i++)
      for (int64_t j = 0; j < g->n; j++)
        {
          double acc = 0;
          for (int64_t kk = 0; kk < g->k; kk++)
            {
              const float *a = x + g->off_a + b * g->stride_a;
              const float *bb = w + g->off_b + b * g->stride_b;
              double av = tensor_core_read (g, g->ta ? a[kk * g->lda + i] : a[i * g->lda + kk]);
              double bv = tensor_core_read (g, g->tb ? bb[j * g->ldb + kk] : bb[kk * g->ldb + j]);
              acc += av * bv;
            }
          acc *= g->alpha;
          if (bias)
            acc += bias[j];
          int64_t at = g->off_c + b * g->stride_c + i * g->ldc + j;
          if (add)
            acc += add[at];
          if (g->relu && acc < 0)
            acc = 0;
          y[at] = (float) acc;
        }
}

/* Where buffer b's bytes are: in the arena as the memory plan laid it out (views and slices
 * inside their roots), or in a block of their own (inputs, constants). */
static void *
buffer_at (const FbPlan *plan, GPtrArray *own, guint8 *arena, guint b)
{
  const FbBuffer *root = fb_plan_buffer (plan, fb_plan_root (plan, b));
  return root->offset >= 0 ? arena + root->offset : g_ptr_array_index (own, root->index);
}

/* Runs every kernel of plan through the emulated PTX on ins (the plan's inputs in order), its
 * cuBLASLt products through emulate_gemm, twice (the grid each phase asks for, then about a
 * third of it), and compares the outputs with expected within rtol and atol; returns whether
 * some launch was cooperative. */
static gboolean
emulate_plan (FbPlan *plan, FbTensor **ins, guint n_ins, FbTensor **expected,
              const char *what, double rtol, double atol)
{
  g_autoptr(GError) error = NULL;
  gboolean cooperative = FALSE;
  fb_plan_layout_memory (plan);
  for (int small = 0; small < 2; small++)
    {
      g_autoptr(GPtrArray) own = g_ptr_array_new_with_free_func (g_free);
      g_autofree guint8 *arena = g_malloc0 (MAX (plan->arena_bytes, 16));
      for (guint b = 0; b < plan->buffers->len; b++)
        {
          /* Tables made at lowering time (a DFT's roots, an n-gram pool) are constants. */
          const FbBuffer *buf = fb_plan_buffer (plan, b);
          g_ptr_array_add (own, g_malloc0 (MAX (buf->nbytes, 16)));
          if (buf->constant)
            memcpy (buffer_at (plan, own, arena, b), fb_tensor_data (buf->constant), buf->nbytes);
        }
      for (guint i = 0; i < n_ins; i++)
        memcpy (buffer_at (plan, own, arena, g_array_index (plan->inputs, guint, i)),
                fb_tensor_data (ins[i]), fb_tensor_nbytes (ins[i]));
      for (guint i = 0; i < plan->kernels->len; i++)
        {
          const FbKernel *k = g_ptr_array_index (plan->kernels, i);
          /* A view (a Transpose that moves no data) has no phase: its buffers are one. */
          if (k->phases->len == 0)
            continue;
          g_autoptr(GBytes) obj = NULL;
          g_autoptr(FbPtxModule) m = fb_codegen_ptx_emulation (k, plan, &obj, &error);
          g_assert_no_error (error);
          g_autoptr(FbJit) jit = fb_jit_new (&error);
          g_assert_no_error (error);
          if (obj)
            g_assert_true (fb_jit_add_object (jit, obj, &error));
          g_autofree void **args = g_new0 (void *, k->args->len + 1);
          for (guint a = 0; a < k->args->len; a++)
            args[a] = buffer_at (plan, own, arena, g_array_index (k->args, FbKArg, a).buffer);
          for (guint p = 0; p < k->phases->len; p++)
            {
              const FbPtxPhase *ph = &g_array_index (m->phases, FbPtxPhase, p);
              const FbKPhase *kp = g_ptr_array_index (k->phases, p);
              if (kp->conv && kp->conv->lib == FB_KLIB_GEMM)
                {
                  const FbKConv *cv = kp->conv;
                  emulate_gemm (&cv->gemm, args[cv->x], args[cv->w],
                                cv->bias == FB_KCONV_NO_ARG ? NULL : args[cv->bias],
                                cv->add == FB_KCONV_NO_ARG ? NULL : args[cv->add], args[cv->y]);
                  continue;
                }
              g_assert_true (kp->conv == NULL && !has_call (kp->body));
              FbPtxLaunch l = { ph->entry, ph->block_threads, ph->iters_per_block,
                                ph->blocks_per_iter, ph->cooperative };
              int64_t grid = (kp->extent + l.iters_per_block - 1) / l.iters_per_block * l.blocks_per_iter;
              emulate (jit, &l, args, kp->extent, small ? grid / 3 + 1 : grid);
              cooperative |= l.cooperative;
            }
        }
      for (guint o = 0; o < plan->outputs->len; o++)
        {
          guint out = g_array_index (plan->outputs, guint, o);
          g_autoptr(FbTensor) got = buffer_tensor (plan, out, buffer_at (plan, own, arena, out));
          g_assert_cmpint (got->numel, ==, expected[o]->numel);
          for (int64_t i = 0; i < got->numel; i++)
            {
              double want = fb_tensor_get_f64 (expected[o], i), have = fb_tensor_get_f64 (got, i);
              if (fabs (have - want) > rtol * fabs (want) + atol)
                g_error ("%s, output %u, element %" G_GINT64_FORMAT " (grid %s): emulated PTX "
                         "gives %.9g, the interpreter %.9g", what, o, i,
                         small ? "small" : "as asked", have, want);
            }
        }
    }
  return cooperative;
}

void
tp_check_emulated (FbGraph *g, FbNode *node, FbTensor **ins, guint n_ins, gboolean want_cooperative)
{
  g_autofree FbTensor **expected = ti_run (node, ins);
  tc_finish (g, node, ins, 0);
  g_autoptr(GError) error = NULL;
  /* Lowered for the GPU, so that the loop forms checked are the ones a GPU runs. */
  g_autoptr(FbPlan) plan = fb_lower_graph (g, fb_cuda_target_desc (), &error);
  g_assert_no_error (error);
  gboolean cooperative = emulate_plan (plan, ins, n_ins, expected, fb_op_name (node->op),
                                       1e-4, 1e-6);
  g_assert_true (cooperative == want_cooperative);
}

void
tp_check_emulated_pipeline (FbGraph *g, FbLayout layout, FbTensor **ins, guint n_ins,
                            gboolean want_cooperative)
{
  tp_check_emulated_pipeline_within (g, layout, ins, n_ins, want_cooperative, FB_COMPARE_RTOL,
                                     FB_COMPARE_ATOL);
}

void
tp_check_emulated_pipeline_within (FbGraph *g, FbLayout layout, FbTensor **ins, guint n_ins,
                                   gboolean want_cooperative, double rtol, double atol)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) in = g_ptr_array_new ();
  for (guint i = 0; i < n_ins; i++)
    g_ptr_array_add (in, ins[i]);
  g_autoptr(GPtrArray) expected = fb_interp_run (g, in, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(FbPipeline) p = NULL;
  g_autoptr(FbPlan) plan = tp_lower_for_cuda (g, layout, &p);
  fb_graph_free (g);
  gboolean cooperative = emulate_plan (plan, ins, n_ins, (FbTensor **) expected->pdata,
                                       "pipeline", rtol, atol);
  g_assert_true (cooperative == want_cooperative);
}

FbPlan *
tp_lower_for_cuda (const FbGraph *graph, FbLayout layout, FbPipeline **pipeline)
{
  g_autoptr(GError) error = NULL;
  *pipeline = fb_pipeline_new (fb_graph_copy (graph));
  g_autoptr(FbPipelineOptions) options = fb_pipeline_options_new ();
  options->layout = layout;
  g_assert_true (fb_pipeline_run (*pipeline, options, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  FbPlan *plan = fb_lower_graph (fb_pipeline_final (*pipeline), fb_cuda_target_desc (), &error);
  g_assert_no_error (error);
  return plan;
}

FbPlan *
tp_cuda_bundle_round_trip (FbPipeline *p)
{
  g_autoptr(GError) error = NULL;
  const FbBackend *cuda = fb_backend_lookup ("cuda");
  g_assert_nonnull (cuda);
  g_autofree char *dir = g_dir_make_tmp ("fusebench-test-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *path = g_build_filename (dir, "model.fusebench", NULL);
  FbBackendOptions options = { 0 };
  g_assert_true (cuda->compile_bundle (cuda, fb_pipeline_final (p), path, NULL, &options, NULL,
                                       &error));
  g_assert_no_error (error);
  g_autoptr(GPtrArray) objects = NULL;
  FbPlan *loaded = fb_bundle_read (path, "cuda", fb_cuda_target_desc ()->triple, ".ptx",
                                   &objects, &error);
  g_assert_no_error (error);
  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_true (g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL));
  return loaded;
}

GPtrArray *
tp_products (const FbPlan *plan)
{
  GPtrArray *products = g_ptr_array_new ();
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          FbKConv *cv = ((const FbKPhase *) g_ptr_array_index (kernel->phases, p))->conv;
          if (cv && cv->lib == FB_KLIB_GEMM)
            g_ptr_array_add (products, cv);
        }
    }
  return products;
}

void
tp_assert_same_products (const FbPlan *plan, const FbPlan *loaded)
{
  g_assert_cmpuint (loaded->kernels->len, ==, plan->kernels->len);
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *a = g_ptr_array_index (plan->kernels, k);
      const FbKernel *b = g_ptr_array_index (loaded->kernels, k);
      g_assert_cmpint (a->kind, ==, b->kind);
      g_assert_cmpuint (a->phases->len, ==, b->phases->len);
    }
  g_autoptr(GPtrArray) pa = tp_products (plan);
  g_autoptr(GPtrArray) pb = tp_products (loaded);
  g_assert_cmpuint (pa->len, ==, pb->len);
  for (guint i = 0; i < pa->len; i++)
    {
      const FbKConv *ca = g_ptr_array_index (pa, i), *cb = g_ptr_array_index (pb, i);
      const FbKGemm *ga = &ca->gemm, *gb = &cb->gemm;
      int64_t va[] = { ga->ta, ga->tb, ga->m, ga->n, ga->k, ga->lda, ga->ldb, ga->ldc, ga->batch,
                       ga->stride_a, ga->stride_b, ga->stride_c, ga->off_a, ga->off_b, ga->off_c,
                       ga->relu, ga->tf32, ga->split3, ca->x, ca->w, ca->bias, ca->add, ca->y };
      int64_t vb[] = { gb->ta, gb->tb, gb->m, gb->n, gb->k, gb->lda, gb->ldb, gb->ldc, gb->batch,
                       gb->stride_a, gb->stride_b, gb->stride_c, gb->off_a, gb->off_b, gb->off_c,
                       gb->relu, gb->tf32, gb->split3, cb->x, cb->w, cb->bias, cb->add, cb->y };
      for (guint j = 0; j < G_N_ELEMENTS (va); j++)
        g_assert_cmpint (va[j], ==, vb[j]);
      g_assert_cmpfloat_with_epsilon (ga->alpha, gb->alpha, 1e-6);
    }
}
