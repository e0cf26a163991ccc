/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Concatenation without copies (compiler/lower/fb-lower-concat.c): where a Concat's pieces are
 * contiguous runs of its output, their producers write into it and its kernel has no code; a
 * dense block's Concats all lie in its last one. Channels-last on the cpu target, where each
 * piece is a strided run of channels, the same, the kernels touching a piece re-indexed
 * (fb-lower-restride.c) and oneDNN's convolutions writing rows the block's width apart. Where a piece is not such a run (batch 2),
 * would start off the alignment, is the graph input or appears twice, the Concat keeps its
 * copy. Every model runs twice against the interpreter, the dense block also through a bundle
 * (whose loaded plan must keep the slices, and which is refused when its strides were tampered
 * with); the arena never gives two live values the same bytes
 * unless one lies inside the other's concatenation. Models: tests/concat/make-concat-models.py. */
#include "fb-bundle.h"
#include "fb-codegen.h"
#include "fb-cuda.h"
#include "fb-dnnl-conv.h"
#include "fb-lower.h"
#include "fb-test-cpu.h"

#include <string.h>

static FbPipeline *
load (const char *name, FbLayout layout)
{
  return tc_pipeline ("concat", name, layout, NULL);
}

/* The Concat kernels that became views (by their label: a bundle's kernels have no node),
 * each checked: no code, its pieces (its arguments) back to back through the output's bytes,
 * or, strided, through the channels of its first row. */
static guint
count_in_place (const FbPlan *plan)
{
  guint n = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (!g_str_has_prefix (kernel->label, "Concat in place"))
        continue;
      g_assert_cmpint (kernel->kind, ==, FB_KERNEL_VIEW);
      g_assert_cmpuint (kernel->phases->len, ==, 0);
      guint out = G_MAXUINT;
      for (guint a = 0; a < kernel->args->len; a++)
        if (g_array_index (kernel->args, FbKArg, a).role == FB_KARG_OUTPUT)
          out = g_array_index (kernel->args, FbKArg, a).buffer;
      g_assert_cmpuint (out, !=, G_MAXUINT);
      const FbBuffer *ob = fb_plan_buffer (plan, out);
      int64_t at = ob->offset, elem = fb_dtype_size (ob->dtype);
      gboolean strided = FALSE;
      for (guint a = 0; a < kernel->args->len; a++)
        {
          const FbKArg *arg = &g_array_index (kernel->args, FbKArg, a);
          if (arg->role != FB_KARG_INPUT)
            continue;
          const FbBuffer *pb = fb_plan_buffer (plan, arg->buffer);
          /* The pieces follow each other through the output, in order. */
          g_assert_cmpint (pb->offset, ==, at);
          strided = pb->slice_stride > 0;
          at += strided ? pb->dims[pb->rank - 1] * elem : pb->nbytes;
        }
      g_assert_cmpint (at, ==, ob->offset + (strided ? ob->dims[ob->rank - 1] * elem : ob->nbytes));
      n++;
    }
  return n;
}

/* Compiles model name for the cpu target in layout, checks that expect Concats are written in
 * place, and its outputs; with bundle, also through a bundle. */
static void
check_model (const char *name, FbLayout layout, guint expect, gboolean bundle)
{
  g_autoptr(FbPipeline) p = load (name, layout);
  tc_check_compiled (name, fb_pipeline_final (p), count_in_place, expect, bundle, FALSE);
}

/* All three of the block's Concats: the last holds the pieces, the two before it are its
 * first runs. A piece read again after the block keeps its value. */
static void
test_dense_block (void)
{
  check_model ("dense", FB_LAYOUT_NCHW, 3, TRUE);
}

/* Channels-last, a piece of 4 channels (16 bytes) would start its rows off the alignment:
 * every Concat copies. */
static void
test_dense_block_channels_last (void)
{
  check_model ("dense", FB_LAYOUT_NHWC, 0, FALSE);
}

/* 16 channels a piece, batch 2, channels-last: the last two Concats in place as strided runs,
 * through a bundle and the exported library too. The first joins two convolutions' outputs,
 * which oneDNN would copy into the rows anyway: it stays a copy, into the block's buffer. NCHW
 * at batch 2 the pieces are no runs at all. */
static void
test_dense_wide_channels_last (void)
{
  g_autoptr(FbPipeline) p = load ("dense-wide", FB_LAYOUT_NHWC);
  tc_check_compiled ("dense-wide", fb_pipeline_final (p), count_in_place, 2, TRUE, TRUE);
  check_model ("dense-wide", FB_LAYOUT_NCHW, 0, FALSE);
}

/* The buffers of a parsed plan.json laid out as strided pieces ("slice_stride"). */
static GPtrArray *
strided_buffers (JsonParser *parser)
{
  GPtrArray *found = g_ptr_array_new ();
  JsonArray *buffers = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)),
                                                     "buffers");
  for (guint b = 0; b < json_array_get_length (buffers); b++)
    if (json_object_has_member (json_array_get_object_element (buffers, b), "slice_stride"))
      g_ptr_array_add (found, json_array_get_object_element (buffers, b));
  return found;
}

typedef enum { WIDER_ROWS, PACKED_PIECES, PIECE_WIDER_THAN_BLOCK } Tamper;

/* A bundle whose convolution writes rows further apart than its piece's, whose pieces lost
 * their stride (a convolution would write rows past them), or whose piece claims rows wider
 * than its block's is refused at load as a damaged bundle, before any kernel writes outside
 * its buffer. */
static void
test_bundle_stride_tampered (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipeline) p = load ("dense-wide", FB_LAYOUT_NHWC);
  const FbGraph *graph = fb_pipeline_final (p);
  g_autoptr(FbPlan) plan = fb_lower_graph (graph, fb_cpu_target_desc (), &error);
  g_assert_no_error (error);
  fb_plan_layout_memory (plan);
  g_autoptr(GPtrArray) objects = fb_codegen_plan (plan, 2, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *dir = g_dir_make_tmp ("fusebench-test-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *path = g_build_filename (dir, "model.fusebench", NULL);
  FbBundleOptions options = { .source = "dense-wide" };
  g_assert_true (fb_bundle_write (path, plan, objects, graph, &options, &error));
  g_autofree char *plan_path = g_build_filename (path, "plan.json", NULL);
  g_autofree char *original = NULL;
  g_assert_true (g_file_get_contents (plan_path, &original, NULL, NULL));

  const Tamper tampers[] = { WIDER_ROWS, PACKED_PIECES, PIECE_WIDER_THAN_BLOCK };
  for (guint t = 0; t < G_N_ELEMENTS (tampers); t++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_assert_true (json_parser_load_from_data (parser, original, -1, &error));
      g_autoptr(GPtrArray) convs = tc_plan_convolutions (parser, "y_stride");
      g_autoptr(GPtrArray) pieces = strided_buffers (parser);
      /* The two convolutions writing pieces in place, the pieces of the two Concats. */
      g_assert_cmpuint (convs->len, ==, 2);
      g_assert_cmpuint (pieces->len, >=, 2);
      if (tampers[t] == WIDER_ROWS)
        for (guint i = 0; i < convs->len; i++)
          {
            JsonObject *c = convs->pdata[i];
            json_object_set_int_member (c, "y_stride", 2 * json_object_get_int_member (c, "y_stride"));
          }
      else
        for (guint i = 0; i < pieces->len; i++)
          {
            JsonObject *b = pieces->pdata[i];
            if (tampers[t] == PACKED_PIECES)
              json_object_remove_member (b, "slice_stride");
            else
              json_object_set_int_member (b, "slice_stride", 2 * json_object_get_int_member (b, "slice_stride"));
          }
      g_autoptr(JsonGenerator) gen = json_generator_new ();
      json_generator_set_root (gen, json_parser_get_root (parser));
      g_assert_true (json_generator_to_file (gen, plan_path, &error));
      g_autoptr(FbCpuModule) m = fb_cpu_bundle_load (path, 1, &error);
      g_assert_null (m);
      g_assert_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE);
      g_assert_nonnull (strstr (error->message, tampers[t] == PIECE_WIDER_THAN_BLOCK
                                                  ? "concatenation" : "convolution"));
      g_clear_error (&error);
    }
  /* Untouched, the same bundle loads. */
  g_assert_true (g_file_set_contents (plan_path, original, -1, &error));
  g_autoptr(FbCpuModule) m = fb_cpu_bundle_load (path, 1, &error);
  g_assert_no_error (error);
  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_true (g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL));
}

static void
test_batch_two (void)
{
  check_model ("dense-batch2", FB_LAYOUT_NCHW, 0, FALSE);
}

static void
test_unaligned (void)
{
  check_model ("odd-sizes", FB_LAYOUT_NCHW, 0, FALSE);
}

static void
test_graph_input (void)
{
  check_model ("input-piece", FB_LAYOUT_NCHW, 0, FALSE);
}

static void
test_twice (void)
{
  check_model ("twice", FB_LAYOUT_NCHW, 0, FALSE);
}

/* Pooled 1x1 maps are runs in either layout. */
static void
test_pooled (void)
{
  check_model ("pooled", FB_LAYOUT_NCHW, 1, FALSE);
  check_model ("pooled", FB_LAYOUT_NHWC, 1, FALSE);
}

/* count_in_place, checking that the 1x1 convolutions writing a strided piece run as a
 * product writing its rows (fb-dnnl-conv.c), not as a primitive whose output is copied. */
static guint
count_in_place_pointwise (const FbPlan *plan)
{
  guint pointwise = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          const FbKPhase *ph = g_ptr_array_index (kernel->phases, p);
          if (ph->conv == NULL || ph->conv->desc.kh != 1 ||
              fb_conv_desc_y_stride (&ph->conv->desc) == ph->conv->desc.co)
            continue;
          char impl[256];
          g_assert_cmpint (fb_dnnl_conv_implementation (&ph->conv->desc, impl, sizeof impl), ==, 0);
          g_assert_nonnull (strstr (impl, "matmul, writing the concatenation's rows"));
          pointwise++;
        }
    }
  g_assert_cmpuint (pointwise, ==, 1);
  return count_in_place (plan);
}

/* A fire module's Concat, channels-last: its 1x1 expansion runs as a product writing the
 * concatenation's rows, and its 3x3 one in the Winograd convolution (where the processor has
 * it), which writes them itself too; with Winograd off, in oneDNN's convolution, which copies
 * its packed output there (1024 rows, a piece of them a thread). Either way some piece costs
 * nothing and the Concat is in place. The first runs through a bundle too. */
static void
test_fire (void)
{
  g_autoptr(FbPipeline) p = load ("fire", FB_LAYOUT_NHWC);
  tc_check_compiled ("fire", fb_pipeline_final (p), count_in_place_pointwise, 1, TRUE, FALSE);
  g_setenv ("FUSEBENCH_WINOGRAD", "0", TRUE);
  tc_check_compiled ("fire", fb_pipeline_final (p), count_in_place_pointwise, 1, FALSE, FALSE);
  g_unsetenv ("FUSEBENCH_WINOGRAD");
}

/* The cuda target shares the lowering: a batch-1 dense block's convolutions (cuDNN) write into
 * the block's buffer too. */
static void
test_gpu_plan (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipeline) p = load ("dense", FB_LAYOUT_NCHW);
  g_autoptr(FbPlan) plan = fb_lower_graph (fb_pipeline_final (p), fb_cuda_target_desc (),
                                           &error);
  g_assert_no_error (error);
  fb_plan_layout_memory (plan);
  g_assert_cmpuint (count_in_place (plan), ==, 3);
  tc_check_arena (plan);
}

/* Channels-last on the cuda target: cuDNN writes each layer's channels into a packed scratch
 * and a generated phase right after it copies them into the block's rows.
 * FUSEBENCH_CONCAT_STRIDED=0 keeps the copies. */
static void
test_gpu_plan_channels_last (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPipeline) p = load ("dense-wide", FB_LAYOUT_NHWC);
  g_setenv ("FUSEBENCH_CONCAT_STRIDED", "0", TRUE);
  g_autoptr(FbPlan) copies_asked = fb_lower_graph (fb_pipeline_final (p),
                                                   fb_cuda_target_desc (), &error);
  g_unsetenv ("FUSEBENCH_CONCAT_STRIDED");
  g_assert_no_error (error);
  fb_plan_layout_memory (copies_asked);
  g_assert_cmpuint (count_in_place (copies_asked), ==, 0);
  g_autoptr(FbPlan) plan = fb_lower_graph (fb_pipeline_final (p), fb_cuda_target_desc (),
                                           &error);
  g_assert_no_error (error);
  fb_plan_layout_memory (plan);
  g_assert_cmpuint (count_in_place (plan), ==, 2);
  tc_check_arena (plan);
  guint copies = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint ph = 0; ph + 1 < kernel->phases->len; ph++)
        {
          const FbKPhase *conv = g_ptr_array_index (kernel->phases, ph);
          const FbKPhase *next = g_ptr_array_index (kernel->phases, ph + 1);
          if (conv->conv == NULL || next->conv != NULL ||
              g_array_index (kernel->args, FbKArg, conv->conv->y).role != FB_KARG_TEMP)
            continue;
          /* The convolution writes scratch, which the phase after it stores into the piece. */
          const FbKStmt *outer = g_ptr_array_index (next->body, 0);
          const FbKStmt *inner = g_ptr_array_index (outer->loop.body, 0);
          const FbKStmt *store = g_ptr_array_index (inner->loop.body, 0);
          g_assert_cmpint (store->kind, ==, FB_KS_STORE);
          g_assert_cmpint (store->store.value->kind, ==, FB_KX_LOAD);
          g_assert_cmpuint (store->store.value->arg, ==, conv->conv->y);
          const FbBuffer *piece = fb_plan_buffer (plan, g_array_index (kernel->args, FbKArg,
                                                                       store->store.arg).buffer);
          g_assert_cmpint (piece->slice_stride, ==, 64);   /* the block's 16 + 3 x 16 channels */
          copies++;
        }
    }
  /* The second and third layers' convolutions write pieces placed in place. */
  g_assert_cmpuint (copies, ==, 2);
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/concat-inplace/dense-block", test_dense_block);
  g_test_add_func ("/concat-inplace/dense-block-channels-last", test_dense_block_channels_last);
  g_test_add_func ("/concat-inplace/dense-wide-channels-last", test_dense_wide_channels_last);
  g_test_add_func ("/concat-inplace/batch-two", test_batch_two);
  g_test_add_func ("/concat-inplace/bundle-stride-tampered", test_bundle_stride_tampered);
  g_test_add_func ("/concat-inplace/unaligned", test_unaligned);
  g_test_add_func ("/concat-inplace/graph-input", test_graph_input);
  g_test_add_func ("/concat-inplace/twice", test_twice);
  g_test_add_func ("/concat-inplace/pooled", test_pooled);
  g_test_add_func ("/concat-inplace/fire", test_fire);
  g_test_add_func ("/concat-inplace/gpu-plan", test_gpu_plan);
  g_test_add_func ("/concat-inplace/gpu-plan-channels-last", test_gpu_plan_channels_last);
  return g_test_run ();
}
