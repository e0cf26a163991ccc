/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cuda target's convolution phases (see fb-cuda-library.c for the phases). A convolution
 * goes to cuDNN as act (conv (x) + z + bias): act is Relu or the identity in the legacy fused
 * call, the one fusion of bias, residual and activation that cuDNN runs for float32 in every
 * version 9, and also a Swish, a HardSwish or a Clip from 0 in cuDNN's graph API
 * (fb-cuda-cudnn-graph.c);
 * lowering put whatever else the graph fused into a generated phase after it
 * (fb_conv_desc_cudnn_epilogue says which chains cuDNN takes).
 *
 * A convolution has several ways to run, and which is fastest depends on its shape, the GPU and
 * the cuDNN version (the legacy fused call reaches older kernels only; at batch 1 on an H200 it
 * ran ResNet-50's 14x14 convolutions at 3 TFLOP/s). So every way is timed once on the device,
 * on the phase's own buffers, and the fastest kept: the legacy call (fused or plain), the
 * legacy plain forward with the epilogue as separate legacy calls, the whole chain as one cuDNN
 * graph (each engine its heuristics offer), and the convolution alone as a graph with the
 * legacy epilogue after it. A module with several convolutions of one shape times the shape
 * once. FUSEBENCH_CUDA_TRACE=1 prints every way's time to stderr; FUSEBENCH_CUDA_CONV_GRAPH=off
 * leaves the graph's plans out. */
#include "fb-cuda-library-private.h"

#include <stdio.h>

static const char *const way_names[] = {
  "legacy call", "legacy forward + epilogue", "graph", "graph conv + epilogue",
};

static gboolean
dnn_ok (const FbCudnn *dnn, cudnnStatus_t s, const FbCudaLibPhase *p, const char *what,
        GError **error)
{
  if (s == 0)
    return TRUE;
  g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE, "kernel %s: cuDNN %s failed: %s",
               p->name, what, dnn->GetErrorString ? dnn->GetErrorString (s) : "?");
  return FALSE;
}

static gboolean
open_cudnn (FbCudaLibs *libs, GError **error)
{
  if (libs->dnn_handle != NULL)
    return TRUE;
  if ((libs->dnn = _fb_cuda_cudnn (error)) == NULL)
    return FALSE;
  if (libs->dnn->Create (&libs->dnn_handle) != 0 ||
      libs->dnn->SetStream (libs->dnn_handle, libs->stream) != 0)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE, "cuDNN would not start");
      return FALSE;
    }
  return TRUE;
}

/* Where in a HardSwish's scratch its float of 1 lies: after y's size, aligned. */
static size_t
hard_swish_one_at (const FbCudaLibPhase *p)
{
  const FbConvDesc *d = p->graph.desc;
  size_t y_bytes = (size_t) (d->n * d->co * d->oh * d->ow) * sizeof (float);
  return (y_bytes + 255) & ~(size_t) 255;
}

/* A HardSwish as legacy calls, for where cuDNN's graph ran none of its plans: s = clip (y + 3,
 * 0, 6) into scratch of y's size, then y = (y / 6) * s. Made when first offered. */
static gboolean
hard_swish_legacy_new (FbCudaLibs *libs, FbCudaLibPhase *p, GError **error)
{
  const FbCudnn *dnn = libs->dnn;
  const FbCudnnGraph *g = _fb_cuda_cudnn_graph (NULL);
  size_t at = hard_swish_one_at (p);
  float one = 1.0f;
  if (p->hs_scratch)
    return TRUE;
  if (!dnn_ok (dnn, g->CreateOpTensorDescriptor (&p->hs_add), p, "tensor op", error) ||
      !dnn_ok (dnn, g->SetOpTensorDescriptor (p->hs_add, FB_CUDNN_OP_TENSOR_ADD,
                                              FB_CUDNN_DATA_FLOAT, FB_CUDNN_NOT_PROPAGATE_NAN),
               p, "tensor op", error) ||
      !dnn_ok (dnn, g->CreateOpTensorDescriptor (&p->hs_mul), p, "tensor op", error) ||
      !dnn_ok (dnn, g->SetOpTensorDescriptor (p->hs_mul, FB_CUDNN_OP_TENSOR_MUL,
                                              FB_CUDNN_DATA_FLOAT, FB_CUDNN_NOT_PROPAGATE_NAN),
               p, "tensor op", error) ||
      !dnn_ok (dnn, dnn->CreateActivationDescriptor (&p->hs_clip), p, "activation", error) ||
      !dnn_ok (dnn, dnn->SetActivationDescriptor (p->hs_clip, FB_CUDNN_ACTIVATION_CLIPPED_RELU,
                                                  FB_CUDNN_NOT_PROPAGATE_NAN, 6.0), p,
               "activation", error) ||
      !dnn_ok (dnn, dnn->CreateTensorDescriptor (&p->hs_scalar), p, "tensor", error) ||
      !dnn_ok (dnn, dnn->SetTensor4dDescriptor (p->hs_scalar, FB_CUDNN_TENSOR_NCHW,
                                                FB_CUDNN_DATA_FLOAT, 1, 1, 1, 1),
               p, "tensor", error))
    return FALSE;
  return _fb_cuda_check (libs->cu, libs->cu->MemAlloc (&p->hs_scratch, at + sizeof one), error,
                         "kernel %s: scratch for its HardSwish", p->name) &&
         _fb_cuda_check (libs->cu, libs->cu->MemcpyHtoD (p->hs_scratch + at, &one, sizeof one),
                         error, "kernel %s: scratch for its HardSwish", p->name);
}

static gboolean
hard_swish_legacy (FbCudaLibs *libs, FbCudaLibPhase *p, GError **error)
{
  const FbCudnnGraph *g = _fb_cuda_cudnn_graph (NULL);
  CUdeviceptr one_at = p->hs_scratch + hard_swish_one_at (p);
  float one = 1.0f, three = 3.0f, sixth = 1.0f / 6, zero = 0.0f;
  void *y = (void *) p->y, *s = (void *) p->hs_scratch;
  return dnn_ok (libs->dnn, g->OpTensor (libs->dnn_handle, p->hs_add, &one, p->yd, y, &three,
                                         p->hs_scalar, (void *) one_at, &zero, p->yd, s),
                 p, "HardSwish's add", error) &&
         dnn_ok (libs->dnn, g->ActivationForward (libs->dnn_handle, p->hs_clip, &one, p->yd, s,
                                                  &zero, p->yd, s), p, "HardSwish's clip", error) &&
         dnn_ok (libs->dnn, g->OpTensor (libs->dnn_handle, p->hs_mul, &sixth, p->yd, y, &one,
                                         p->yd, s, &zero, p->yd, y), p, "HardSwish's product",
                 error);
}

/* The legacy epilogue after an unfused forward: y += bias; y += add; y = act (y). */
static gboolean
legacy_epilogue (FbCudaLibs *libs, FbCudaLibPhase *p, GError **error)
{
  const FbCudnn *dnn = libs->dnn;
  const FbCudnnGraph *g = _fb_cuda_cudnn_graph (NULL);
  float one = 1.0f, zero = 0.0f;
  if (p->graph.bias &&
      !dnn_ok (dnn, g->AddTensor (libs->dnn_handle, &one, p->bd, (void *) p->bias, &one, p->yd,
                                  (void *) p->y), p, "bias", error))
    return FALSE;
  if (p->add &&
      !dnn_ok (dnn, g->AddTensor (libs->dnn_handle, &one, p->yd, (void *) p->add, &one, p->yd,
                                  (void *) p->y), p, "residual add", error))
    return FALSE;
  if (p->act == FB_CONV_POST_HARD_SWISH)
    return hard_swish_legacy (libs, p, error);
  return p->act == FB_CONV_POST_NONE ||
         dnn_ok (dnn, g->ActivationForward (libs->dnn_handle, p->ad, &one, p->yd, (void *) p->y,
                                            &zero, p->yd, (void *) p->y), p, "activation", error);
}

gboolean
_fb_cuda_conv_run (FbCudaLibs *libs, FbCudaLibPhase *p, CUdeviceptr workspace,
                   size_t workspace_bytes, GError **error)
{
  const FbCudnn *dnn = libs->dnn;
  float one = 1.0f, zero = 0.0f;
  if (p->way == WAY_GRAPH || p->way == WAY_GRAPH_SPLIT)
    {
      const FbCudnnGraph *g = _fb_cuda_cudnn_graph (NULL);
      if (!dnn_ok (dnn, _fb_cudnn_conv_plan_run (g, libs->dnn_handle, &p->graph,
                                                 &p->plans->plans[0], workspace),
                   p, "graph convolution", error))
        return FALSE;
      return p->way == WAY_GRAPH || legacy_epilogue (libs, p, error);
    }
  if (!p->fused || p->way == WAY_LEGACY_SPLIT)
    return dnn_ok (dnn, dnn->ConvolutionForward (libs->dnn_handle, &one, p->xd, (void *) p->x, p->wd,
                                                 (void *) p->w, p->cd, p->algo_id,
                                                 (void *) workspace, workspace_bytes, &zero, p->yd,
                                                 (void *) p->y), p, "convolution", error) &&
           (p->way != WAY_LEGACY_SPLIT || legacy_epilogue (libs, p, error));
  float alpha2 = p->add ? 1.0f : 0.0f;
  return dnn_ok (dnn, dnn->ConvolutionBiasActivationForward (libs->dnn_handle, &one, p->xd,
                                                             (void *) p->x, p->wd, (void *) p->w,
                                                             p->cd, p->algo_id, (void *) workspace,
                                                             workspace_bytes, &alpha2, p->yd,
                                                             (void *) (p->add ? p->add : p->y),
                                                             p->bd, (void *) p->bias, p->ad, p->yd,
                                                             (void *) p->y),
                 p, "fused convolution", error);
}

/* One way to run a convolution, as timed. */
typedef struct {
  ConvWay           way;
  int               algo, math;     /* legacy ways */
  FbCudnnConvPlans *plans;          /* graph ways: the set, shared by its candidates */
  int               plan;           /* graph ways: which of the set */
  size_t            workspace;
  double            us;             /* median time, or -1 when it failed */
} ConvCandidate;

static char *
conv_key (const FbCudaLibPhase *p, const FbConvDesc *d)
{
  GString *key = g_string_new (NULL);
  const int64_t *words = (const int64_t *) d;
  for (size_t i = 0; i < sizeof *d / sizeof (int64_t); i++)
    g_string_append_printf (key, "%" G_GINT64_FORMAT ",", words[i]);
  /* Whether the pointers are 16-byte aligned changes which engines apply. */
  gboolean aligned = ((p->x | p->w | p->y | p->bias | p->add) & 15) == 0;
  g_string_append_printf (key, "%d%d%d%d", p->graph.nchw, p->add == p->y, aligned,
                          p->graph.bias != 0);
  return g_string_free (key, FALSE);
}

#define TUNE_MAX_WORKSPACE ((size_t) 256 << 20)
#define TUNE_GRAPH_PLANS   6
#define TUNE_RUNS          7

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The median of TUNE_RUNS timed runs after two warm-ups, in µs; -1 when a run fails. */
static double
time_candidate (FbCudaLibs *libs, FbCudaLibPhase *p, CUdeviceptr workspace, size_t bytes,
                GError **error)
{
  const FbCuDriver *cu = libs->cu;
  CUevent start = NULL, end = NULL;
  double times[TUNE_RUNS];
  double result = -1;
  if (cu->EventCreate (&start, 0) != 0 || cu->EventCreate (&end, 0) != 0)
    goto out;
  for (int i = 0; i < 2; i++)
    if (!_fb_cuda_conv_run (libs, p, workspace, bytes, error))
      goto out;
  for (int i = 0; i < TUNE_RUNS; i++)
    {
      float ms = 0;
      if (cu->EventRecord (start, libs->stream) != 0 || !_fb_cuda_conv_run (libs, p, workspace, bytes, NULL) ||
          cu->EventRecord (end, libs->stream) != 0 || cu->EventSynchronize (end) != 0 ||
          cu->EventElapsedTime (&ms, start, end) != 0)
        goto out;
      times[i] = ms * 1000.0;
    }
  qsort (times, TUNE_RUNS, sizeof times[0], compare_doubles);
  result = times[TUNE_RUNS / 2];
out:
  /* A failed run may leave the stream in error: wait so that the next candidate starts clean. */
  cu->StreamSynchronize (libs->stream);
  if (start)
    cu->EventDestroy (start);
  if (end)
    cu->EventDestroy (end);
  return result;
}

static void
apply_candidate (FbCudaLibs *libs, FbCudaLibPhase *p, const ConvCandidate *c)
{
  p->way = c->way;
  p->algo_id = c->algo;
  p->math = c->math;
  libs->dnn->SetConvolutionMathType (p->cd, c->math);
  p->workspace = c->workspace;
}

#define LEGACY_ALGOS 3

/* The legacy forward's best algorithms (up to LEGACY_ALGOS) by cuDNN's own measurement of the
 * plain forward, leaving out those that need more workspace than is worth holding: cuDNN's
 * measurement varies from run to run, so the first alone may be one whose workspace is too
 * large. Returns how many, or 0 with the reason in error. */
static int
find_legacy_algos (FbCudaLibs *libs, FbCudaLibPhase *p, int *algo, int *math, GError **error)
{
  const FbCudnn *dnn = libs->dnn;
  cudnnConvolutionFwdAlgoPerf_t perf[8];
  int returned = 0, n = 0;
  if (!dnn_ok (dnn, dnn->FindConvolutionForwardAlgorithm (libs->dnn_handle, p->xd, p->wd, p->cd,
                                                          p->yd, 8, &returned, perf),
               p, "algorithm search", error))
    return 0;
  for (int i = 0; i < returned && n < LEGACY_ALGOS; i++)
    if (perf[i].status == 0 && perf[i].memory < TUNE_MAX_WORKSPACE &&
        (!libs->strict_float32 || perf[i].mathType != FB_CUDNN_TENSOR_OP_MATH))
      {
        algo[n] = perf[i].algo;
        math[n] = libs->strict_float32 ? FB_CUDNN_FMA_MATH : perf[i].mathType;
        n++;
      }
  if (n == 0)
    g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE,
                 "kernel %s: cuDNN has no algorithm for this convolution (of %d it measured, none "
                 "ran%s in under %zu MiB of workspace)", p->name, returned,
                 libs->strict_float32 ? " in strict float32" : "", TUNE_MAX_WORKSPACE >> 20);
  return n;
}

static void
add_graph_candidates (FbCudaLibs *libs, FbCudaLibPhase *p, ConvWay way, GArray *candidates,
                      GPtrArray *sets, GString *notes)
{
  const FbCudnnGraph *g = _fb_cuda_cudnn_graph (NULL);
  FbCudnnConvGraph cg = p->graph;
  if (way == WAY_GRAPH_SPLIT)
    cg.bias = cg.z = 0, cg.act = FB_CONV_POST_NONE;
  g_autofree char *why = NULL;
  FbCudnnConvPlans *set = _fb_cudnn_conv_plans_new (g, libs->dnn_handle, &cg, libs->strict_float32,
                                                    TUNE_GRAPH_PLANS, &why);
  if (set == NULL)
    {
      g_string_append_printf (notes, "; %s: %s", way_names[way], why);
      return;
    }
  g_ptr_array_add (sets, set);
  for (int i = 0; i < set->n_plans; i++)
    {
      ConvCandidate c = { way, FB_CUDNN_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                          libs->strict_float32 ? FB_CUDNN_FMA_MATH : FB_CUDNN_TENSOR_OP_MATH,
                          set, i, set->plans[i].workspace, -1 };
      g_array_append_val (candidates, c);
    }
}

/* Keeps only the chosen plan of the chosen set in p->plans; frees the rest. */
static void
keep_plan (FbCudaLibPhase *p, GPtrArray *sets, const ConvCandidate *c)
{
  const FbCudnnGraph *g = _fb_cuda_cudnn_graph (NULL);
  for (guint i = 0; i < sets->len; i++)
    {
      FbCudnnConvPlans *set = g_ptr_array_index (sets, i);
      if (c->plans != set)
        {
          _fb_cudnn_conv_plans_free (g, set);
          continue;
        }
      for (int k = 0; k < set->n_plans; k++)
        if (k != c->plan)
          _fb_cudnn_conv_plan_clear (g, &set->plans[k]);
      set->plans[0] = set->plans[c->plan];
      set->n_plans = 1;
      p->plans = set;
    }
  g_ptr_array_set_size (sets, 0);
}

static gboolean
choose_conv_way (FbCudaLibs *libs, FbCudaLibPhase *p, const FbConvDesc *d, GError **error)
{
  int legacy_algo[LEGACY_ALGOS], legacy_math[LEGACY_ALGOS];
  int n_legacy = find_legacy_algos (libs, p, legacy_algo, legacy_math, error);
  if (n_legacy == 0)
    return FALSE;
  int tensor_math = libs->strict_float32 ? FB_CUDNN_FMA_MATH : FB_CUDNN_TENSOR_OP_MATH;
  g_autoptr(GArray) candidates = g_array_new (FALSE, TRUE, sizeof (ConvCandidate));
  g_autoptr(GPtrArray) sets = g_ptr_array_new ();
  g_autoptr(GString) notes = g_string_new (NULL);
  /* The legacy fused call has Relu and the identity only: the other activations are the other
   * ways'. */
  gboolean legacy_fuses = !p->fused || p->act == FB_CONV_POST_NONE || p->act == FB_CONV_POST_RELU;
  if (p->fused && p->act == FB_CONV_POST_NONE)
    {
      /* cuDNN's fused call runs the identity activation with IMPLICIT_PRECOMP_GEMM only. */
      ConvCandidate legacy = { WAY_LEGACY, FB_CUDNN_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, tensor_math,
                               NULL, 0, 0, -1 };
      g_array_append_val (candidates, legacy);
    }
  else if (legacy_fuses)
    for (int i = 0; i < n_legacy; i++)
      {
        ConvCandidate legacy = { WAY_LEGACY, legacy_algo[i], legacy_math[i], NULL, 0, 0, -1 };
        g_array_append_val (candidates, legacy);
      }
  const char *graph_missing = NULL;
  gboolean have_graph = _fb_cuda_cudnn_graph (&graph_missing) != NULL;
  /* FUSEBENCH_CUDA_CONV_GRAPH=off offers none of the graph's plans: the legacy ways alone, to
   * measure them or to run what stands in where the graph takes none (a HardSwish's calls). */
  gboolean graph_plans = have_graph &&
                         g_strcmp0 (g_getenv ("FUSEBENCH_CUDA_CONV_GRAPH"), "off") != 0;
  /* An epilogue after the forward cannot read a residual the forward has overwritten. A
   * HardSwish has no legacy activation: its legacy calls (three passes over scratch) are
   * offered only where cuDNN's graph took none of its plans. */
  gboolean can_split = p->fused && p->add != p->y && have_graph;
  gboolean hard_swish = p->act == FB_CONV_POST_HARD_SWISH;
  g_autofree char *key = conv_key (p, d);
  if (libs->conv_choices == NULL)
    libs->conv_choices = _fb_cuda_timing_cache_load (libs);
  FbCudaConvChoice *known = g_hash_table_lookup (libs->conv_choices, key);
  if (graph_plans && (known == NULL || known->way == WAY_GRAPH))
    add_graph_candidates (libs, p, WAY_GRAPH, candidates, sets, notes);
  if (hard_swish && can_split)
    {
      can_split = candidates->len == 0;
      if (can_split && !hard_swish_legacy_new (libs, p, error))
        return FALSE;
    }
  for (int i = 0; can_split && i < n_legacy; i++)
    {
      ConvCandidate split = { WAY_LEGACY_SPLIT, legacy_algo[i], legacy_math[i], NULL, 0, 0, -1 };
      g_array_append_val (candidates, split);
    }
  if (graph_plans && can_split && (known == NULL || known->way == WAY_GRAPH_SPLIT))
    add_graph_candidates (libs, p, WAY_GRAPH_SPLIT, candidates, sets, notes);
  if (!have_graph)
    g_string_append_printf (notes, "; no graph API: %s", graph_missing);

  for (guint i = 0; i < candidates->len; i++)
    {
      ConvCandidate *c = &g_array_index (candidates, ConvCandidate, i);
      if (c->plans == NULL)
        {
          libs->dnn->SetConvolutionMathType (p->cd, c->math);
          if (libs->dnn->GetConvolutionForwardWorkspaceSize (libs->dnn_handle, p->xd, p->wd, p->cd,
                                                             p->yd, c->algo, &c->workspace) != 0)
            c->us = -3;   /* cuDNN will not run this algorithm on this geometry */
        }
      if (c->us == -1 && c->workspace >= TUNE_MAX_WORKSPACE)
        c->us = -2;   /* left out: more workspace than worth holding */
    }
  int best = -1;
  g_autoptr(GError) failure = NULL;
  if (known != NULL)
    {
      /* A shape timed before (by this module, or in the timing cache): take the same way and
       * engine without timing again, where it is still offered. */
      for (guint i = 0; i < candidates->len && best < 0; i++)
        {
          ConvCandidate *c = &g_array_index (candidates, ConvCandidate, i);
          gboolean graph = c->way == WAY_GRAPH || c->way == WAY_GRAPH_SPLIT;
          if ((int) c->way == known->way && c->us > -2 &&
              (graph ? c->plans->plans[c->plan].engine == known->engine : c->algo == known->algo))
            best = (int) i;
        }
    }
  gboolean timed = best < 0;
  if (timed)
    {
      size_t most = 0;
      for (guint i = 0; i < candidates->len; i++)
        {
          ConvCandidate *c = &g_array_index (candidates, ConvCandidate, i);
          if (c->us != -2)
            most = MAX (most, c->workspace);
        }
      CUdeviceptr workspace = 0;
      if (most > 0 && libs->cu->MemAlloc (&workspace, most) != 0)
        {
          g_string_append_printf (notes, "; no %zu-byte workspace to time with", most);
          workspace = 0, most = 0;
        }
      for (guint i = 0; i < candidates->len; i++)
        {
          ConvCandidate *c = &g_array_index (candidates, ConvCandidate, i);
          if (c->us <= -2 || c->workspace > most)
            {
              c->us = MIN (c->us, -2);
              continue;
            }
          apply_candidate (libs, p, c);
          if (c->plans)
            {
              /* conv_run runs plans->plans[0]: point a temporary set at the candidate's plan. */
              FbCudnnConvPlans view = { &c->plans->plans[c->plan], 1, NULL };
              p->plans = &view;
              c->us = time_candidate (libs, p, workspace, most, failure ? NULL : &failure);
              p->plans = NULL;
            }
          else
            c->us = time_candidate (libs, p, workspace, most, failure ? NULL : &failure);
          if (c->us >= 0 && (best < 0 || c->us < g_array_index (candidates, ConvCandidate, best).us))
            best = (int) i;
        }
      if (workspace)
        libs->cu->MemFree (workspace);
    }
  if (best < 0)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE,
                   "kernel %s: no way to run this convolution worked on the device (%u tried%s%s)%s",
                   p->name, candidates->len, failure ? "; the first failure: " : "",
                   failure ? failure->message : "", notes->str);
      return FALSE;
    }
  ConvCandidate chosen = g_array_index (candidates, ConvCandidate, best);
  /* Each graph plan's variant pack was made for the tuning workspace: make it again on use. */
  if (chosen.plans)
    {
      FbCudnnConvPlan *plan = &chosen.plans->plans[chosen.plan];
      if (plan->pack)
        _fb_cuda_cudnn_graph (NULL)->DestroyDescriptor (plan->pack);
      plan->pack = NULL;
      plan->pack_workspace = 0;
    }
  apply_candidate (libs, p, &chosen);
  keep_plan (p, sets, &chosen);

  GString *text = g_string_new (NULL);
  if (!timed)
    g_string_append_printf (text, "%s (%s)", known->choice,
                            known->from_file ? "from the timing cache, not timed again"
                                             : "as the module's other convolution of this shape");
  else
    {
      g_string_append_printf (text, "%s", way_names[chosen.way]);
      if (chosen.plans)
        g_string_append_printf (text, " engine %" G_GINT64_FORMAT,
                                p->plans->plans[0].engine);
      else
        g_string_append_printf (text, " algorithm %d", chosen.algo);
      g_string_append_printf (text, ", %.1f µs; timed:", chosen.us);
      for (guint i = 0; i < candidates->len; i++)
        {
          ConvCandidate *c = &g_array_index (candidates, ConvCandidate, i);
          if (c->us >= 0)
            g_string_append_printf (text, " %s %.1f", way_names[c->way], c->us);
          else
            g_string_append_printf (text, " %s %s", way_names[c->way],
                                    c->us == -2 ? "(workspace too large)"
                                    : c->us == -3 ? "(not for this geometry)" : "(failed)");
        }
      g_string_append (text, notes->str);
      FbCudaConvChoice *remember = g_new0 (FbCudaConvChoice, 1);
      *remember = (FbCudaConvChoice) { chosen.way, chosen.algo, chosen.math,
                                       chosen.plans ? p->plans->plans[0].engine : -1,
                                       g_strdup (text->str), FALSE };
      g_hash_table_replace (libs->conv_choices, g_steal_pointer (&key), remember);
      libs->choices_timed = TRUE;
    }
  p->choice = g_string_free (text, FALSE);
  if (g_strcmp0 (g_getenv ("FUSEBENCH_CUDA_TRACE"), "1") == 0)
    fprintf (stderr, "fusebench: %s: %s\n", p->name, p->choice);
  return TRUE;
}

/* The weights as KRSC (output channel, kernel row, kernel column, input channel) in a buffer
 * of the phase's own, from the OIHW the bundle stores: cuDNN's channels-last kernels read their
 * filter channels-last too. */
static gboolean
reorder_filter_krsc (FbCudaLibs *libs, FbCudaLibPhase *p, const FbConvDesc *d, GError **error)
{
  int64_t k = d->co, c = d->c / d->groups, r = d->kh, s = d->kw;
  size_t n = (size_t) (k * c * r * s), bytes = n * sizeof (float);
  g_autofree float *oihw = g_new (float, n);
  g_autofree float *krsc = g_new (float, n);
  if (!_fb_cuda_check (libs->cu, libs->cu->MemcpyDtoH (oihw, p->w, bytes), error,
                       "kernel %s: reading its filter", p->name))
    return FALSE;
  for (int64_t o = 0; o < k; o++)
    for (int64_t i = 0; i < c; i++)
      for (int64_t y = 0; y < r; y++)
        for (int64_t x = 0; x < s; x++)
          krsc[((o * r + y) * s + x) * c + i] = oihw[((o * c + i) * r + y) * s + x];
  if (!_fb_cuda_check (libs->cu, libs->cu->MemAlloc (&p->own_filter, bytes), error,
                       "kernel %s: its channels-last filter", p->name) ||
      !_fb_cuda_check (libs->cu, libs->cu->MemcpyHtoD (p->own_filter, krsc, bytes), error,
                       "kernel %s: its channels-last filter", p->name))
    return FALSE;
  p->w = p->own_filter;
  return TRUE;
}

gboolean
_fb_cuda_conv_new (FbCudaLibs *libs, FbCudaLibPhase *p, const FbKConv *cv, gboolean w_constant,
                   GError **error)
{
  if (!open_cudnn (libs, error))
    return FALSE;
  const FbCudnn *dnn = libs->dnn;
  const FbConvDesc *d = &cv->desc;
  if (d->transposed)
    {
      /* The lowering keeps deconvolutions off the GPU's library phases; a bundle that says
       * otherwise was not made by it. */
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                   "kernel %s: a transposed convolution as a cuDNN phase, which runs forward "
                   "convolutions only", p->name);
      return FALSE;
    }
  if (d->scaled_input)
    {
      /* Only the cpu target folds an input scale into the weights (cuDNN's are reordered once,
       * when the module is made). */
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                   "kernel %s: a convolution whose input is scaled per channel at every run, "
                   "which the cpu target's plans have and cuDNN phases do not", p->name);
      return FALSE;
    }
  int64_t act;
  double act_param;
  if (!fb_conv_desc_cudnn_epilogue (d, &act, &act_param))
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                   "kernel %s: post-ops cuDNN does not run with a convolution (it takes an Add, "
                   "then Relu, Swish, HardSwish or Clip from 0)", p->name);
      return FALSE;
    }
  gboolean has_add = d->n_post > 0 && d->post[0].kind == FB_CONV_POST_ADD;
  int act_mode = act == FB_CONV_POST_RELU ? FB_CUDNN_ACTIVATION_RELU
                 : act == FB_CONV_POST_SWISH ? FB_CUDNN_ACTIVATION_SWISH
                 : act == FB_CONV_POST_CLIP ? FB_CUDNN_ACTIVATION_CLIPPED_RELU
                 : FB_CUDNN_ACTIVATION_IDENTITY;
  if (!dnn_ok (dnn, dnn->CreateTensorDescriptor (&p->xd), p, "tensor", error) ||
      !dnn_ok (dnn, dnn->CreateTensorDescriptor (&p->yd), p, "tensor", error) ||
      !dnn_ok (dnn, dnn->CreateTensorDescriptor (&p->bd), p, "tensor", error) ||
      !dnn_ok (dnn, dnn->CreateFilterDescriptor (&p->wd), p, "filter", error) ||
      !dnn_ok (dnn, dnn->CreateConvolutionDescriptor (&p->cd), p, "convolution", error) ||
      !dnn_ok (dnn, dnn->CreateActivationDescriptor (&p->ad), p, "activation", error))
    return FALSE;
  int fmt = cv->nchw ? FB_CUDNN_TENSOR_NCHW : FB_CUDNN_TENSOR_NHWC;
  gboolean krsc = !cv->nchw && w_constant;
  if (krsc && !reorder_filter_krsc (libs, p, d, error))
    return FALSE;
  if (!dnn_ok (dnn, dnn->SetTensor4dDescriptor (p->xd, fmt, FB_CUDNN_DATA_FLOAT, d->n, d->c, d->h,
                                                d->w), p, "input", error) ||
      !dnn_ok (dnn, dnn->SetTensor4dDescriptor (p->yd, fmt, FB_CUDNN_DATA_FLOAT, d->n, d->co,
                                                d->oh, d->ow), p, "output", error) ||
      !dnn_ok (dnn, dnn->SetTensor4dDescriptor (p->bd, FB_CUDNN_TENSOR_NCHW, FB_CUDNN_DATA_FLOAT,
                                                1, d->co, 1, 1), p, "bias", error) ||
      !dnn_ok (dnn, dnn->SetFilter4dDescriptor (p->wd, FB_CUDNN_DATA_FLOAT,
                                                krsc ? FB_CUDNN_TENSOR_NHWC : FB_CUDNN_TENSOR_NCHW,
                                                d->co, d->c / d->groups, d->kh, d->kw),
               p, "filter", error) ||
      !dnn_ok (dnn, dnn->SetConvolution2dDescriptor (p->cd, d->pt, d->pl, d->sh, d->sw, d->dh,
                                                     d->dw, FB_CUDNN_CROSS_CORRELATION,
                                                     FB_CUDNN_DATA_FLOAT), p, "geometry", error) ||
      !dnn_ok (dnn, dnn->SetConvolutionGroupCount (p->cd, d->groups), p, "groups", error) ||
      !dnn_ok (dnn, dnn->SetConvolutionMathType (p->cd, libs->strict_float32 ? FB_CUDNN_FMA_MATH
                                                 : FB_CUDNN_TENSOR_OP_MATH), p, "math", error) ||
      !dnn_ok (dnn, dnn->SetActivationDescriptor (p->ad, act_mode, FB_CUDNN_NOT_PROPAGATE_NAN,
                                                  act == FB_CONV_POST_CLIP ? act_param : 0.0),
               p, "activation", error))
    return FALSE;
  const FbCudnnGraph *graph_api = _fb_cuda_cudnn_graph (NULL);
  if (act == FB_CONV_POST_SWISH && graph_api &&
      !dnn_ok (dnn, graph_api->SetActivationDescriptorSwishBeta (p->ad, act_param), p,
               "Swish's beta", error))
    return FALSE;
  int on, oc, oh, ow;
  if (!dnn_ok (dnn, dnn->GetConvolution2dForwardOutputDim (p->cd, p->xd, p->wd, &on, &oc, &oh, &ow),
               p, "output size", error))
    return FALSE;
  if (on != d->n || oc != d->co || oh != d->oh || ow != d->ow)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                   "kernel %s: cuDNN makes a %dx%dx%dx%d output of this convolution, the plan "
                   "%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT,
                   p->name, on, oc, oh, ow, d->n, d->co, d->oh, d->ow);
      return FALSE;
    }
  p->fused = d->has_bias || has_add || act != FB_CONV_POST_NONE;
  p->act = act;
  if (p->fused && !d->has_bias)
    {
      size_t bytes = (size_t) d->co * sizeof (float);
      if (!_fb_cuda_check (libs->cu, libs->cu->MemAlloc (&p->zero_bias, bytes), error,
                           "kernel %s: a bias of zeros", p->name) ||
          !_fb_cuda_check (libs->cu, libs->cu->MemsetD8Async (p->zero_bias, 0, bytes, libs->stream),
                           error, "kernel %s: a bias of zeros", p->name))
        return FALSE;
      p->bias = p->zero_bias;
    }
  p->graph = (FbCudnnConvGraph) { d, cv->nchw, krsc, p->x, p->w, p->y,
                                  d->has_bias ? p->bias : 0, p->add, act, act_param };
  return choose_conv_way (libs, p, d, error);
}

void
_fb_cuda_conv_free (FbCudaLibs *libs, FbCudaLibPhase *p)
{
  const FbCudnnGraph *g = _fb_cuda_cudnn_graph (NULL);
  if (libs->dnn)
    {
      if (p->xd)
        libs->dnn->DestroyTensorDescriptor (p->xd);
      if (p->yd)
        libs->dnn->DestroyTensorDescriptor (p->yd);
      if (p->bd)
        libs->dnn->DestroyTensorDescriptor (p->bd);
      if (p->hs_scalar)
        libs->dnn->DestroyTensorDescriptor (p->hs_scalar);
      if (p->wd)
        libs->dnn->DestroyFilterDescriptor (p->wd);
      if (p->cd)
        libs->dnn->DestroyConvolutionDescriptor (p->cd);
      if (p->ad)
        libs->dnn->DestroyActivationDescriptor (p->ad);
      if (p->hs_clip)
        libs->dnn->DestroyActivationDescriptor (p->hs_clip);
    }
  if (g && p->hs_add)
    g->DestroyOpTensorDescriptor (p->hs_add);
  if (g && p->hs_mul)
    g->DestroyOpTensorDescriptor (p->hs_mul);
  if (p->plans)
    _fb_cudnn_conv_plans_free (g, p->plans);
  if (p->zero_bias)
    libs->cu->MemFree (p->zero_bias);
  if (p->own_filter)
    libs->cu->MemFree (p->own_filter);
  if (p->hs_scratch)
    libs->cu->MemFree (p->hs_scratch);
}

const char *
_fb_cuda_conv_way_name (const FbCudaLibPhase *p)
{
  return way_names[p->way];
}
