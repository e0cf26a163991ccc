/* SPDX-License-Identifier: GPL-3.0-or-later */
/* RoiAlign and MaxUnpool beyond ONNX's node cases: RoiAlign's max mode (the largest weighted
 * tap, as ONNX Runtime takes it), adaptive sampling, both coordinate conventions, boxes reaching
 * past the image and a second image of the batch, checked against values worked out by hand and
 * between the interpreter and the cpu target's loops; MaxUnpool with padding, strides and an
 * output_shape; refusals that name the node. */
#include "fb-test-cpu.h"
#include "fb-infer.h"
#include "fb-lower.h"

#include <math.h>
#include <string.h>

static FbNode *
node (FbGraph **g, int opset, FbOpKind op, guint n_in, guint n_out)
{
  *g = ti_graph (opset);
  return ti_node (*g, op, n_in, n_out);
}

static void
infer_fails (FbGraph *g, FbNode *n, FbTensor **inputs)
{
  g_autoptr(GError) error = NULL;
  for (guint i = 0; i < n->n_inputs; i++)
    {
      n->inputs[i]->dtype = inputs[i]->dtype;
      n->inputs[i]->shape = fb_tensor_shape (inputs[i]);
    }
  g_assert_false (fb_infer_node (g, n, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, n->name));
}

/* The cpu target refuses node at compile time, naming it: indices that are constants and
 * wrong, which the interpreter would refuse at run time. */
static void
lowering_fails (FbGraph *g, FbNode *n, FbTensor **inputs, guint const_mask)
{
  g_autoptr(GError) error = NULL;
  tc_finish (g, n, inputs, const_mask);
  g_autoptr(FbPlan) plan = fb_lower_graph (g, fb_cpu_target_desc (), &error);
  g_assert_null (plan);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, n->name));
}

static FbNode *
roi_align (FbGraph **g, const char *mode, const char *ctm, int64_t ratio, int64_t oh, int64_t ow)
{
  FbNode *n = node (g, 16, FB_OP_ROI_ALIGN, 3, 1);
  ti_attr_string (*g, n, "mode", mode);
  ti_attr_string (*g, n, "coordinate_transformation_mode", ctm);
  ti_attr_int (*g, n, "sampling_ratio", ratio);
  ti_attr_int (*g, n, "output_height", oh);
  ti_attr_int (*g, n, "output_width", ow);
  return n;
}

static void
test_roi_align_values (void)
{
  FbGraph *g;
  FbNode *n;
  /* A 1 x 1 x 2 x 2 image [[1, 2], [3, 4]]: a box over all of it, one bin. */
  FbTensor *x = ti_f32 (4, D (1, 1, 2, 2), V (1, 2, 3, 4));
  FbTensor *box = ti_f32 (2, D (1, 4), V (0, 0, 2, 2));
  FbTensor *idx = ti_i64 (1, D (1), (const int64_t[]) { 0 });

  /* half_pixel: the box [-0.5, 1.5]^2 sampled at (0, 0), (0, 1), (1, 0), (1, 1) (2 x 2). */
  n = roi_align (&g, "avg", "half_pixel", 2, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x, box, idx)), FB_DTYPE_FLOAT32, 4, D (1, 1, 1, 1), V (2.5), 1e-6);
  /* max: the largest sample, each the largest of its four weighted taps: 4 at (1, 1). */
  n = roi_align (&g, "max", "half_pixel", 2, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x, box, idx)), FB_DTYPE_FLOAT32, 4, D (1, 1, 1, 1), V (4), 1e-6);
  /* output_half_pixel: samples at 0.5 and 1.5; the edge clamps them onto the last pixel. */
  n = roi_align (&g, "avg", "output_half_pixel", 2, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x, box, idx)), FB_DTYPE_FLOAT32, 4, D (1, 1, 1, 1),
             V ((2.5 + 3 + 3.5 + 4) / 4), 1e-6);
  /* One sample at (0.5, 0.5) of the box [0, 1]^2: avg interpolates 2.5, max takes the largest
   * tap times its weight, 4 x 0.25. */
  FbTensor *unit = ti_f32 (2, D (1, 4), V (0, 0, 1, 1));
  n = roi_align (&g, "avg", "output_half_pixel", 1, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x, unit, idx)), FB_DTYPE_FLOAT32, 4, D (1, 1, 1, 1), V (2.5), 1e-6);
  n = roi_align (&g, "max", "output_half_pixel", 1, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x, unit, idx)), FB_DTYPE_FLOAT32, 4, D (1, 1, 1, 1),
             V (0.25 * 4), 1e-6);
  /* Adaptive sampling: ceil (2 / 1) = 2 samples a side, the 2 x 2 case above. */
  n = roi_align (&g, "avg", "half_pixel", 0, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x, box, idx)), FB_DTYPE_FLOAT32, 4, D (1, 1, 1, 1), V (2.5), 1e-6);
  /* A box wholly more than a pixel off the image samples nothing: 0. */
  n = roi_align (&g, "avg", "half_pixel", 2, 1, 1);
  ti_assert (ti_run1 (n, TI_IN (x, ti_f32 (2, D (1, 4), V (5, 5, 9, 9)), idx)), FB_DTYPE_FLOAT32,
             4, D (1, 1, 1, 1), V (0), 0);
  ti_done ();
}

static void
test_roi_align_cpu (void)
{
  FbGraph *g;
  FbNode *n;
  static const char *modes[] = { "avg", "max" };
  static const char *ctms[] = { "half_pixel", "output_half_pixel" };
  /* Boxes inside, crossing the edges, degenerate, far outside, and one of NaN; on images 0
   * and 1. */
  FbTensor *boxes = ti_f32 (2, D (6, 4), V (0.5, 0.5, 5.5, 4.5, -2, -1, 3, 8, 2, 2, 2, 2,
                                            -9, -9, -7, -7, 1, 0, 6.9, 5.2, NAN, 1, 2, 3));
  FbTensor *idx = ti_i64 (1, D (6), (const int64_t[]) { 0, 1, 0, 1, 1, 0 });
  for (guint m = 0; m < 2; m++)
    for (guint t = 0; t < 2; t++)
      for (int64_t ratio = 0; ratio <= 2; ratio += 2)
        {
          n = roi_align (&g, modes[m], ctms[t], ratio, 3, 2);
          ti_attr_float (g, n, "spatial_scale", 0.75f);
          tc_node (g, n, TI_IN (ti_random (4, D (2, 3, 6, 7), 7 + m), boxes, idx), 0);
        }
  /* RoiAlign-10 has output_half_pixel's geometry without the attribute. */
  n = node (&g, 10, FB_OP_ROI_ALIGN, 3, 1);
  ti_attr_int (g, n, "output_height", 2);
  ti_attr_int (g, n, "output_width", 2);
  tc_node (g, n, TI_IN (ti_random (4, D (2, 3, 6, 7), 9), boxes, idx), 0);
  ti_done ();
}

static void
test_roi_align_refusals (void)
{
  FbGraph *g;
  FbNode *n;
  FbTensor *x = ti_f32 (4, D (1, 1, 2, 2), NULL), *box = ti_f32 (2, D (1, 4), V (0, 0, 1, 1));
  FbTensor *idx = ti_i64 (1, D (1), (const int64_t[]) { 0 });

  n = roi_align (&g, "median", "half_pixel", 2, 1, 1);
  ti_run_fails (n, TI_IN (x, box, idx), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (x, box, idx));
  n = roi_align (&g, "avg", "align_corners", 2, 1, 1);
  ti_run_fails (n, TI_IN (x, box, idx), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (x, box, idx));
  n = roi_align (&g, "avg", "half_pixel", -1, 1, 1);
  ti_run_fails (n, TI_IN (x, box, idx), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (x, box, idx));
  n = roi_align (&g, "avg", "half_pixel", 2, 0, 1);
  ti_run_fails (n, TI_IN (x, box, idx), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (x, box, idx));
  /* A batch index past the batch; boxes of 3 numbers; the attribute before opset 16. */
  n = roi_align (&g, "avg", "half_pixel", 2, 1, 1);
  ti_run_fails (n, TI_IN (x, box, ti_i64 (1, D (1), (const int64_t[]) { 1 })), FB_INTERP_ERROR_RUNTIME);
  n = roi_align (&g, "avg", "half_pixel", 2, 1, 1);
  lowering_fails (g, n, TI_IN (x, box, ti_i64 (1, D (1), (const int64_t[]) { -1 })), 4);
  n = roi_align (&g, "avg", "half_pixel", 2, 1, 1);
  infer_fails (g, n, TI_IN (x, ti_f32 (2, D (1, 3), NULL), idx));
  n = node (&g, 10, FB_OP_ROI_ALIGN, 3, 1);
  ti_attr_string (g, n, "coordinate_transformation_mode", "half_pixel");
  ti_run_fails (n, TI_IN (x, box, idx), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (x, box, idx));
  ti_done ();
}

static void
test_max_unpool (void)
{
  FbGraph *g;
  FbNode *n;
  FbTensor *x = ti_f32 (4, D (1, 1, 2, 2), V (1, 2, 3, 4));
  FbTensor *ind = ti_i64 (4, D (1, 1, 2, 2), (const int64_t[]) { 0, 3, 12, 14 });

  /* 3 x 3 windows 2 apart with a pad of 1 at the end: (2 - 1) * 2 + 3 - 1 = 4 a side. */
  n = node (&g, 11, FB_OP_MAX_UNPOOL, 2, 1);
  ti_attr_ints (g, n, "kernel_shape", 2, D (3, 3));
  ti_attr_ints (g, n, "strides", 2, D (2, 2));
  ti_attr_ints (g, n, "pads", 4, D (0, 0, 1, 1));
  ti_assert (ti_run1 (n, TI_IN (x, ind)), FB_DTYPE_FLOAT32, 4, D (1, 1, 4, 4),
             V (1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 4, 0), 0);
  /* The same on the cpu target; then with an output_shape (a constant), whose flattened
   * elements the indices number. */
  n = node (&g, 11, FB_OP_MAX_UNPOOL, 2, 1);
  ti_attr_ints (g, n, "kernel_shape", 2, D (3, 3));
  ti_attr_ints (g, n, "strides", 2, D (2, 2));
  ti_attr_ints (g, n, "pads", 4, D (0, 0, 1, 1));
  tc_node (g, n, TI_IN (x, ind), 0);
  n = node (&g, 11, FB_OP_MAX_UNPOOL, 3, 1);
  ti_attr_ints (g, n, "kernel_shape", 2, D (2, 2));
  FbTensor *shape = ti_i64 (1, D (4), (const int64_t[]) { 1, 1, 5, 5 });
  ti_assert (ti_run1 (n, TI_IN (x, ind, shape)), FB_DTYPE_FLOAT32, 4, D (1, 1, 5, 5),
             V (1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0);
  n = node (&g, 11, FB_OP_MAX_UNPOOL, 3, 1);
  ti_attr_ints (g, n, "kernel_shape", 2, D (2, 2));
  tc_node (g, n, TI_IN (x, ind, shape), 4);
  /* 1-D, two channels, indices crossing into the other channel's plane. */
  n = node (&g, 11, FB_OP_MAX_UNPOOL, 2, 1);
  ti_attr_ints (g, n, "kernel_shape", 1, D (2));
  tc_node (g, n, TI_IN (ti_f32 (3, D (1, 2, 3), V (1, 2, 3, 4, 5, 6)),
                        ti_i64 (3, D (1, 2, 3), (const int64_t[]) { 0, 5, 7, 1, 3, 2 })), 0);

  /* Refusals: an index past the output, a window that does not fit the input's rank, an output
   * of negative extent. */
  n = node (&g, 11, FB_OP_MAX_UNPOOL, 2, 1);
  ti_attr_ints (g, n, "kernel_shape", 2, D (2, 2));
  ti_run_fails (n, TI_IN (x, ti_i64 (4, D (1, 1, 2, 2), (const int64_t[]) { 0, 1, 2, 16 })),
                FB_INTERP_ERROR_RUNTIME);
  n = node (&g, 11, FB_OP_MAX_UNPOOL, 2, 1);
  ti_attr_ints (g, n, "kernel_shape", 2, D (2, 2));
  lowering_fails (g, n, TI_IN (x, ti_i64 (4, D (1, 1, 2, 2), (const int64_t[]) { 0, 1, 2, 16 })), 2);
  n = node (&g, 11, FB_OP_MAX_UNPOOL, 2, 1);
  ti_attr_ints (g, n, "kernel_shape", 1, D (2));
  ti_run_fails (n, TI_IN (x, ind), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (x, ind));
  n = node (&g, 11, FB_OP_MAX_UNPOOL, 2, 1);
  ti_attr_ints (g, n, "kernel_shape", 2, D (2, 2));
  ti_attr_ints (g, n, "pads", 4, D (3, 3, 3, 3));
  ti_run_fails (n, TI_IN (x, ind), FB_INTERP_ERROR_RUNTIME);
  infer_fails (g, n, TI_IN (x, ind));
  ti_done ();
}

int
main (int argc, char **argv)
{
  tc_init (&argc, &argv);
  g_test_add_func ("/conform-pooling/roi-align-values", test_roi_align_values);
  g_test_add_func ("/conform-pooling/roi-align-cpu", test_roi_align_cpu);
  g_test_add_func ("/conform-pooling/roi-align-refusals", test_roi_align_refusals);
  g_test_add_func ("/conform-pooling/max-unpool", test_max_unpool);
  return g_test_run ();
}
