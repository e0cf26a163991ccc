/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cuda target behind the backend interface: lowering for the GPU (contractions as cuDNN
 * and cuBLASLt phases), PTX for every generated phase (fb-ptx.h), the executor of
 * fb-cuda-module.c; bundles hold kernels/NAME.ptx and cuda.json (each phase's entry and launch
 * shape). Compiling needs no GPU; running says plainly when there is none. */
#include "fb-cuda-private.h"
#include "fb-bundle.h"
#include "fb-memory-plan.h"
#include "fb-lower.h"
#include "fb-ptx.h"

#include <json-glib/json-glib.h>

static gboolean
cuda_supports_op (const FbBackend *backend, const FbNode *node, char **reason)
{
  /* The device executor keeps no host-side values between its segments: sequences and
   * optionals are not supported on cuda (control flow whose bodies use them inside is, since
   * the interpreter runs the whole node on the host). */
  if (fb_op_has_flag (node->op, FB_OPF_SEQUENCE) || fb_node_has_containers (node))
    {
      if (reason != NULL)
        *reason = g_strdup ("sequences and optionals are not supported on cuda (run it on the "
                            "cpu target or the interpreter)");
      return FALSE;
    }
  return fb_lower_supports_node (node, reason);
}

const FbTargetDesc *
fb_cuda_target_desc (void)
{
  /* cuDNN's algorithm is timed on the device when the model is loaded: nothing to ask of it
   * while lowering. */
  static const FbTargetDesc desc = {
    .triple       = "nvptx64-nvidia-cuda sm_90",
    .gpu          = TRUE,
    .conv_library = "cuDNN",
  };
  return &desc;
}

static const FbTargetDesc *
cuda_describe_target (const FbBackend *backend)
{
  return fb_cuda_target_desc ();
}

static FbPlan *
cuda_lower (const FbBackend *backend, const FbGraph *graph, GError **error)
{
  if (!fb_backend_check_graph (backend, graph, error))
    return NULL;
  FbPlan *plan = fb_lower_graph (graph, fb_cuda_target_desc (), error);
  if (plan != NULL)
    fb_plan_layout_memory (plan);
  return plan;
}

static gboolean
needs_code (const FbKernel *kernel)
{
  if (kernel->kind == FB_KERNEL_HOST || kernel->kind == FB_KERNEL_VIEW)
    return FALSE;
  for (guint p = 0; p < kernel->phases->len; p++)
    if (((FbKPhase *) g_ptr_array_index (kernel->phases, p))->conv == NULL)
      return TRUE;
  return FALSE;
}

/* One FbCudaKernelCode per kernel: the PTX of its generated phases and their launch shapes;
 * library phases have no entry. */
static GPtrArray *
generate_code (const FbPlan *plan, GError **error)
{
  g_autoptr(GPtrArray) code = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_cuda_kernel_code_free);
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      FbCudaKernelCode *kc = g_new0 (FbCudaKernelCode, 1);
      kc->phases = g_array_new (FALSE, TRUE, sizeof (FbCudaPhase));
      g_array_set_size (kc->phases, kernel->phases->len);
      g_ptr_array_add (code, kc);
      if (!needs_code (kernel))
        continue;
      FbPtxModule *ptx = fb_codegen_ptx (kernel, plan, error);
      if (ptx == NULL)
        return NULL;
      kc->ptx = g_strdup (ptx->ptx);
      for (guint p = 0; p < kernel->phases->len && ptx->phases && p < ptx->phases->len; p++)
        {
          const FbPtxPhase *pp = &g_array_index (ptx->phases, FbPtxPhase, p);
          FbCudaPhase *cp = &g_array_index (kc->phases, FbCudaPhase, p);
          cp->entry = g_strdup (pp->entry);
          cp->block_threads = pp->block_threads;
          cp->iters_per_block = pp->iters_per_block;
          cp->shared_bytes = pp->shared_bytes;
          cp->blocks_per_iter = MAX (pp->blocks_per_iter, 1);
        }
      fb_ptx_module_free (ptx);
    }
  return g_steal_pointer (&code);
}

static FbKernelStages *
cuda_kernel_stages (const FbBackend *backend, const FbKernel *kernel, const FbPlan *plan,
                    GError **error)
{
  return fb_codegen_ptx_stages (kernel, plan, error);
}

/* A machine without a driver or a device is told so before any compiling. */
static gboolean
device_present (GError **error)
{
  g_autofree char *device = fb_cuda_device_describe (error);
  return device != NULL;
}

static FbCudaModule *
compile_plan (FbPlan *plan, const FbBackendOptions *options, GError **error)
{
  g_autoptr(GPtrArray) code = generate_code (plan, error);
  if (code == NULL)
    return NULL;
  return fb_cuda_module_new (plan, code, options, error);
}

FbCudaModule *
fb_cuda_compile (const FbGraph *graph, const FbBackendOptions *options, GError **error)
{
  g_return_val_if_fail (graph != NULL, NULL);
  if (!device_present (error))
    return NULL;
  g_autoptr(FbPlan) plan = cuda_lower (fb_backend_cuda (), graph, error);
  if (plan == NULL)
    return NULL;
  return compile_plan (plan, options, error);
}

static FbCompiled *
cuda_compile_plan (const FbBackend *backend, FbPlan *plan, const FbBackendOptions *options,
                   GError **error)
{
  if (!device_present (error))
    return NULL;
  return (FbCompiled *) compile_plan (plan, options, error);
}

static FbCompiled *
cuda_compile (const FbBackend *backend, const FbGraph *graph, const FbBackendOptions *options,
              GError **error)
{
  return (FbCompiled *) fb_cuda_compile (graph, options, error);
}

static JsonNode *
launch_json (const FbPlan *plan, GPtrArray *code)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, "fusebench-cuda-launch");
  json_builder_set_member_name (b, "kernels");
  json_builder_begin_array (b);
  for (guint k = 0; k < code->len; k++)
    {
      const FbCudaKernelCode *kc = g_ptr_array_index (code, k);
      json_builder_begin_array (b);
      for (guint p = 0; p < kc->phases->len; p++)
        {
          const FbCudaPhase *cp = &g_array_index (kc->phases, FbCudaPhase, p);
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "entry");
          if (cp->entry)
            json_builder_add_string_value (b, cp->entry);
          else
            json_builder_add_null_value (b);
          json_builder_set_member_name (b, "block_threads");
          json_builder_add_int_value (b, cp->block_threads);
          json_builder_set_member_name (b, "iters_per_block");
          json_builder_add_int_value (b, cp->iters_per_block);
          json_builder_set_member_name (b, "shared_bytes");
          json_builder_add_int_value (b, cp->shared_bytes);
          json_builder_set_member_name (b, "blocks_per_iter");
          json_builder_add_int_value (b, cp->blocks_per_iter);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

static gboolean
cuda_compile_bundle (const FbBackend *backend, const FbGraph *graph, const char *path,
                     const FbBundleOptions *bundle_options, const FbBackendOptions *options,
                     FbCompileStats *stats, GError **error)
{
  FbCompileStats local = { 0 };
  if (bundle_options && bundle_options->shared_library)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--shared-library links x86-64 code: it is for the cpu target");
      return FALSE;
    }
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr(FbPlan) plan = cuda_lower (backend, graph, error);
  if (plan == NULL)
    return FALSE;
  gint64 t1 = g_get_monotonic_time ();
  g_autoptr(GPtrArray) code = generate_code (plan, error);
  if (code == NULL)
    return FALSE;
  gint64 t2 = g_get_monotonic_time ();
  g_autoptr(GPtrArray) objects = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (guint k = 0; k < code->len; k++)
    {
      const FbCudaKernelCode *kc = g_ptr_array_index (code, k);
      g_ptr_array_add (objects, kc->ptx ? g_bytes_new (kc->ptx, strlen (kc->ptx)) : NULL);
      local.n_with_code += kc->ptx != NULL;
    }
  g_autoptr(JsonNode) launch = launch_json (plan, code);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, launch);
  json_generator_set_pretty (gen, TRUE);
  gsize len = 0;
  char *text = json_generator_to_data (gen, &len);
  g_autoptr(GHashTable) extra = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                                       (GDestroyNotify) g_bytes_unref);
  g_hash_table_insert (extra, (gpointer) "cuda.json", g_bytes_new_take (text, len));
  FbBundleOptions bopts = bundle_options ? *bundle_options : (FbBundleOptions) { 0 };
  bopts.target = "cuda";
  bopts.object_suffix = ".ptx";
  bopts.extra_files = extra;
  if (!fb_bundle_write (path, plan, objects, graph, &bopts, error))
    return FALSE;
  gint64 t3 = g_get_monotonic_time ();
  local.lower_ms = (t1 - t0) / 1e3;
  local.codegen_ms = (t2 - t1) / 1e3;
  local.bundle_ms = (t3 - t2) / 1e3;
  if (stats)
    *stats = local;
  return TRUE;
}

static gboolean
bad_launch (GError **error, const char *path)
{
  g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
               "%s/cuda.json: does not describe the plan's kernels and phases", path);
  return FALSE;
}

static gboolean
read_launch (const char *path, const FbPlan *plan, GPtrArray *objects, GPtrArray *code,
             GError **error)
{
  g_autoptr(GBytes) bytes = fb_bundle_read_file (path, "cuda.json", error);
  if (bytes == NULL)
    return FALSE;
  g_autoptr(JsonParser) parser = json_parser_new ();
  gsize size = 0;
  const char *data = g_bytes_get_data (bytes, &size);
  if (!json_parser_load_from_data (parser, data, size, NULL))
    return bad_launch (error, path);
  JsonNode *root = json_parser_get_root (parser);
  JsonObject *o = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonNode *kn = o ? json_object_get_member (o, "kernels") : NULL;
  JsonArray *kernels = kn && JSON_NODE_HOLDS_ARRAY (kn) ? json_node_get_array (kn) : NULL;
  if (kernels == NULL || json_array_get_length (kernels) != plan->kernels->len)
    return bad_launch (error, path);
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      JsonNode *pn = json_array_get_element (kernels, k);
      JsonArray *phases = JSON_NODE_HOLDS_ARRAY (pn) ? json_node_get_array (pn) : NULL;
      if (phases == NULL || json_array_get_length (phases) != kernel->phases->len)
        return bad_launch (error, path);
      FbCudaKernelCode *kc = g_new0 (FbCudaKernelCode, 1);
      g_ptr_array_add (code, kc);
      kc->phases = g_array_new (FALSE, TRUE, sizeof (FbCudaPhase));
      g_array_set_size (kc->phases, kernel->phases->len);
      GBytes *obj = g_ptr_array_index (objects, k);
      if (obj != NULL)
        kc->ptx = g_strndup (g_bytes_get_data (obj, NULL), g_bytes_get_size (obj));
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          JsonNode *en = json_array_get_element (phases, p);
          JsonObject *e = JSON_NODE_HOLDS_OBJECT (en) ? json_node_get_object (en) : NULL;
          FbCudaPhase *cp = &g_array_index (kc->phases, FbCudaPhase, p);
          if (e == NULL)
            return bad_launch (error, path);
          JsonNode *entry = json_object_get_member (e, "entry");
          gint64 bt = json_object_get_int_member_with_default (e, "block_threads", 0);
          gint64 ipb = json_object_get_int_member_with_default (e, "iters_per_block", 0);
          gint64 sh = json_object_get_int_member_with_default (e, "shared_bytes", 0);
          gint64 bpi = json_object_get_int_member_with_default (e, "blocks_per_iter", 1);
          if (entry && json_node_get_value_type (entry) == G_TYPE_STRING)
            {
              if (kc->ptx == NULL || bt < 1 || bt > 1024 || ipb < 1 || ipb > G_MAXUINT32 ||
                  sh < 0 || sh > 228 * 1024 || bpi < 1 || bpi > G_MAXUINT32)
                return bad_launch (error, path);
              cp->entry = g_strdup (json_node_get_string (entry));
              cp->block_threads = bt;
              cp->iters_per_block = ipb;
              cp->shared_bytes = sh;
              cp->blocks_per_iter = bpi;
            }
        }
    }
  return TRUE;
}

static FbCompiled *
cuda_load_bundle (const FbBackend *backend, const char *path, const FbBackendOptions *options,
                  GError **error)
{
  g_autoptr(GPtrArray) objects = NULL;
  g_autoptr(FbPlan) plan = fb_bundle_read (path, "cuda", fb_cuda_target_desc ()->triple, ".ptx",
                                           &objects, error);
  if (plan == NULL)
    return NULL;
  plan->target_desc = fb_cuda_target_desc ();
  g_autoptr(GPtrArray) code = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_cuda_kernel_code_free);
  /* A damaged bundle is named as such before the machine is asked for a device. */
  if (!read_launch (path, plan, objects, code, error) || !device_present (error))
    return NULL;
  return (FbCompiled *) fb_cuda_module_new (plan, code, options, error);
}

static FbPlan *
cuda_plan (FbCompiled *compiled)
{
  return fb_cuda_module_plan ((FbCudaModule *) compiled);
}

static GPtrArray *
cuda_run (FbCompiled *compiled, GPtrArray *inputs, GCancellable *cancellable, GError **error)
{
  return fb_cuda_module_run ((FbCudaModule *) compiled, inputs, cancellable, error);
}

static GPtrArray *
cuda_run_timed (FbCompiled *compiled, GPtrArray *inputs, guint n, double *ms, GError **error)
{
  return fb_cuda_module_run_timed ((FbCudaModule *) compiled, inputs, n, ms, error);
}

static char *
cuda_describe (FbCompiled *compiled)
{
  return fb_cuda_module_describe ((FbCudaModule *) compiled);
}

static void
cuda_free (FbCompiled *compiled)
{
  fb_cuda_module_free ((FbCudaModule *) compiled);
}

static char *
cuda_describe_device (const FbBackend *backend, GError **error)
{
  return fb_cuda_device_describe (error);
}

/* Every generated kernel of plan in one PTX module for sm_90. */
static char *
cuda_emit_module (const FbBackend *backend, const FbPlan *plan, GError **error)
{
  return fb_codegen_ptx_plan (plan, error);
}

static const FbGraph *
cuda_graph (FbCompiled *compiled)
{
  return fb_cuda_module_plan ((FbCudaModule *) compiled)->graph;
}

static void
cuda_set_launch_hook (FbCompiled *compiled, FbKernelHook hook, gpointer data)
{
  fb_cuda_module_set_launch_hook ((FbCudaModule *) compiled, hook, data);
}

static void
cuda_set_launch_eagerly (FbCompiled *compiled, gboolean eagerly)
{
  fb_cuda_module_set_launch_eagerly ((FbCudaModule *) compiled, eagerly);
}

static GPtrArray *
cuda_run_timed_marked (FbCompiled *compiled, GPtrArray *inputs, guint n, double *ms,
                       FbKernelHook mark, gpointer data, GError **error)
{
  return fb_cuda_module_run_timed_marked ((FbCudaModule *) compiled, inputs, n, ms, mark, data,
                                          error);
}

static gboolean
cuda_time_back_to_back (FbCompiled *compiled, guint n, double *ms, GError **error)
{
  return fb_cuda_module_time_back_to_back ((FbCudaModule *) compiled, n, ms, error);
}

static gpointer
cuda_context (FbCompiled *compiled)
{
  return fb_cuda_module_context ((FbCudaModule *) compiled);
}

static guint
cuda_device_index (FbCompiled *compiled)
{
  return fb_cuda_module_device_index ((FbCudaModule *) compiled);
}

static const FbDeviceTrace cuda_device_trace = {
  .measure_ceilings   = fb_cuda_measure_ceilings,
  .set_launch_hook    = cuda_set_launch_hook,
  .set_launch_eagerly = cuda_set_launch_eagerly,
  .run_timed_marked   = cuda_run_timed_marked,
  .time_back_to_back  = cuda_time_back_to_back,
  .context            = cuda_context,
  .device_index       = cuda_device_index,
};

static const FbBackend cuda_backend = {
  .name            = "cuda",               /* NVIDIA GPUs, sm_90, through the driver API */
  .title           = "CUDA (NVIDIA GPU)",
  .code_title      = "CUDA · PTX for sm_90",
  .device_word     = "GPU",
  .lane_word       = "stream",             /* a timeline lane: a CUDA stream */
  .assembly_suffix = "ptx",                /* the generated phases' PTX */
  .channels_last   = TRUE,                 /* cuDNN's TF32 convolutions: NHWC with KRSC filters
                                              ran ResNet-50 0.67 ms on an H200, NCHW 0.84 */
  .supports_op     = cuda_supports_op,     /* the lowering's: both targets lower the same nodes */
  .describe_target = cuda_describe_target, /* sm_90 PTX, cuDNN and cuBLASLt */
  .describe_device = cuda_describe_device, /* the GPU, or what is missing */
  .lower           = cuda_lower,           /* contractions as cuDNN / cuBLASLt phases */
  .kernel_stages   = cuda_kernel_stages,   /* kernel IR, LLVM IR, optimized, PTX */
  .module_suffix   = "ptx",
  .emit_module     = cuda_emit_module,     /* the plan's kernels in one PTX module */
  .compile         = cuda_compile,         /* lower + PTX + module on device 0 */
  .compile_plan    = cuda_compile_plan,    /* PTX + module on device 0 */
  .compile_bundle  = cuda_compile_bundle,  /* kernels/NAME.ptx + cuda.json */
  .load_bundle     = cuda_load_bundle,
  .graph           = cuda_graph,
  .plan            = cuda_plan,
  .run             = cuda_run,             /* inputs up, graph replays, outputs down */
  .run_timed       = cuda_run_timed,       /* CUDA events around each replay */
  .describe_run    = cuda_describe,
  .free            = cuda_free,
  .device_trace    = &cuda_device_trace,   /* CUPTI tags each kernel's launches */
};

const FbBackend *
fb_backend_cuda (void)
{
  return &cuda_backend;
}
