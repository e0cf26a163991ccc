/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for sliding-window operators: Conv, ConvTranspose, AveragePool, MaxPool and the
 * global pools, in ONNX's channels-first layout or, marked by the layout pass with
 * FB_ATTR_LAYOUT = "nhwc", channels-last; and MaxUnpool (channels-first only). */
#include "fb-infer-private.h"

#include <string.h>

typedef enum {
  PAD_NOTSET,
  PAD_SAME_UPPER,
  PAD_SAME_LOWER,
  PAD_VALID,
} AutoPad;

typedef struct {
  int      n;                        /* spatial dimensions */
  int64_t  kernel[FB_MAX_RANK];      /* unknown when taken from weights of unknown shape */
  int64_t  strides[FB_MAX_RANK];
  int64_t  dilations[FB_MAX_RANK];
  int64_t  pads[2 * FB_MAX_RANK];    /* begins, then ends */
  AutoPad  auto_pad;
  gboolean ceil_mode;
} Window;

static gboolean
channels_last (const FbNode *node, gboolean *nhwc, GError **error)
{
  const char *layout = fb_node_attr_string (node, FB_ATTR_LAYOUT, "nchw");

  *nhwc = strcmp (layout, "nhwc") == 0;
  if (!*nhwc && strcmp (layout, "nchw") != 0)
    return _fb_infer_fail (error, node, "layout '%s' is neither nchw nor nhwc", layout);
  return TRUE;
}

static gboolean
positive_list (const FbNode *node, const char *name, int n, int64_t *out, GError **error)
{
  const int64_t *v;
  guint count;

  if (!_fb_infer_attr_ints (node, name, n, &v, &count, error))
    return FALSE;
  for (int i = 0; i < n; i++)
    {
      out[i] = v ? v[i] : 1;
      if (out[i] <= 0)
        return _fb_infer_fail (error, node, "%s[%d] is %" G_GINT64_FORMAT ", not positive", name, i,
                               out[i]);
    }
  return TRUE;
}

/* Reads kernel_shape, strides, dilations, pads, auto_pad and ceil_mode for n spatial axes.
 * weight_kernel (Conv) gives the kernel when the attribute is absent, and must agree with it. */
static gboolean
read_window (const FbNode *node, int n, const int64_t *weight_kernel, Window *w, GError **error)
{
  const char *auto_pad = fb_node_attr_string (node, "auto_pad", "NOTSET");
  const int64_t *kernel, *pads;
  guint count;

  memset (w, 0, sizeof *w);
  w->n = n;
  if (strcmp (auto_pad, "NOTSET") == 0)
    w->auto_pad = PAD_NOTSET;
  else if (strcmp (auto_pad, "SAME_UPPER") == 0)
    w->auto_pad = PAD_SAME_UPPER;
  else if (strcmp (auto_pad, "SAME_LOWER") == 0)
    w->auto_pad = PAD_SAME_LOWER;
  else if (strcmp (auto_pad, "VALID") == 0)
    w->auto_pad = PAD_VALID;
  else
    return _fb_infer_fail (error, node, "auto_pad '%s' is not defined", auto_pad);

  if (!_fb_infer_attr_ints (node, "kernel_shape", n, &kernel, &count, error))
    return FALSE;
  if (kernel == NULL && weight_kernel == NULL)
    return _fb_infer_fail (error, node, "the attribute 'kernel_shape' is missing");
  for (int i = 0; i < n; i++)
    {
      w->kernel[i] = kernel ? kernel[i] : weight_kernel[i];
      if (kernel != NULL && kernel[i] <= 0)
        return _fb_infer_fail (error, node, "kernel_shape[%d] is %" G_GINT64_FORMAT ", not positive",
                               i, kernel[i]);
      if (kernel != NULL && weight_kernel != NULL && weight_kernel[i] >= 0 &&
          weight_kernel[i] != kernel[i])
        return _fb_infer_fail (error, node, "kernel_shape[%d] = %" G_GINT64_FORMAT " but the weights "
                               "have %" G_GINT64_FORMAT, i, kernel[i], weight_kernel[i]);
      if (kernel == NULL && weight_kernel[i] == 0)
        return _fb_infer_fail (error, node, "the weights have an empty kernel");
    }
  if (!positive_list (node, "strides", n, w->strides, error) ||
      !positive_list (node, "dilations", n, w->dilations, error) ||
      !_fb_infer_attr_ints (node, "pads", 2 * n, &pads, &count, error))
    return FALSE;
  for (int i = 0; i < 2 * n; i++)
    {
      /* Explicit pads do not apply when auto_pad chooses them. */
      w->pads[i] = (pads && w->auto_pad == PAD_NOTSET) ? pads[i] : 0;
      if (w->pads[i] < 0)
        return _fb_infer_fail (error, node, "pads[%d] is %" G_GINT64_FORMAT ", negative", i,
                               w->pads[i]);
    }
  w->ceil_mode = fb_node_attr_int (node, "ceil_mode", 0) != 0;
  return TRUE;
}

static gboolean
effective_kernel (const FbNode *node, const Window *w, int i, int64_t *ek, GError **error)
{
  if (w->kernel[i] < 0)
    {
      *ek = FB_DIM_UNKNOWN;
      return TRUE;
    }
  if (__builtin_mul_overflow (w->kernel[i] - 1, w->dilations[i], ek) ||
      __builtin_add_overflow (*ek, 1, ek))
    return _fb_infer_fail (error, node, "the dilated kernel of axis %d overflows 64 bits", i);
  return TRUE;
}

/* Output extent of spatial axis i for an input extent `in`. */
static gboolean
window_extent (const FbNode *node, const Window *w, int i, int64_t in, int64_t *out,
               GError **error)
{
  int64_t ek, padded, s = w->strides[i];

  if (!effective_kernel (node, w, i, &ek, error))
    return FALSE;
  *out = FB_DIM_UNKNOWN;
  if (in < 0)
    return TRUE;
  if (w->auto_pad == PAD_SAME_UPPER || w->auto_pad == PAD_SAME_LOWER)
    {
      *out = in / s + (in % s != 0);
      return TRUE;
    }
  if (ek < 0)
    return TRUE;
  if (__builtin_add_overflow (in, w->pads[i], &padded) ||
      __builtin_add_overflow (padded, w->pads[i + w->n], &padded))
    return _fb_infer_fail (error, node, "the padded extent of spatial axis %d overflows", i);
  if (padded < ek)
    return _fb_infer_fail (error, node, "the kernel (%" G_GINT64_FORMAT " with dilation) is larger "
                           "than the padded input (%" G_GINT64_FORMAT ") on spatial axis %d",
                           ek, padded, i);
  if (w->ceil_mode && w->auto_pad == PAD_NOTSET)
    {
      *out = (padded - ek) / s + ((padded - ek) % s != 0) + 1;
      /* A last window that would start inside the end padding is dropped. */
      if ((*out - 1) * s >= in + w->pads[i])
        (*out)--;
    }
  else
    *out = (padded - ek) / s + 1;
  return TRUE;
}

/* Places batch, channels and spatial extents in the node's layout. */
static FbShape
layout_shape (gboolean nhwc, int rank, int64_t batch, const char *batch_sym, int64_t channels,
              const char *channels_sym, const int64_t *spatial, const char * const *spatial_sym)
{
  FbShape s = _fb_shape_of_rank (rank);
  int c = nhwc ? rank - 1 : 1, first = nhwc ? 1 : 2;

  s.dim[0] = batch;
  s.sym[0] = batch_sym;
  s.dim[c] = channels;
  s.sym[c] = channels_sym;
  for (int i = 0; i < rank - 2; i++)
    {
      s.dim[first + i] = spatial[i];
      s.sym[first + i] = spatial_sym ? spatial_sym[i] : NULL;
    }
  return s;
}

static gboolean
check_input_rank (const FbNode *node, const FbValue *x, GError **error)
{
  if (x->shape.rank >= 0 && x->shape.rank < 3)
    return _fb_infer_fail (error, node, "the input must have rank 3 or more (batch, channels, "
                           "spatial), not %d", x->shape.rank);
  return TRUE;
}

/* Shared by Conv and ConvTranspose: inputs, types, layout and ranks. */
static gboolean
conv_common (const FbNode *node, FbValue **x, FbValue **w, gboolean *nhwc, int *rank,
             int64_t *group, FbDType *dtype, GError **error)
{
  static const guint all[] = { 0, 1, 2 };

  if ((*x = _fb_infer_require (node, 0, error)) == NULL ||
      (*w = _fb_infer_require (node, 1, error)) == NULL ||
      !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
      !_fb_infer_same_type (node, all, 3, dtype, error) ||
      !channels_last (node, nhwc, error) || !check_input_rank (node, *x, error))
    return FALSE;
  *group = fb_node_attr_int (node, "group", 1);
  if (*group <= 0)
    return _fb_infer_fail (error, node, "group %" G_GINT64_FORMAT " is not positive", *group);
  *rank = (*x)->shape.rank >= 0 ? (*x)->shape.rank : (*w)->shape.rank;
  if ((*x)->shape.rank >= 0 && (*w)->shape.rank >= 0 && (*x)->shape.rank != (*w)->shape.rank)
    return _fb_infer_fail (error, node, "the input has rank %d but the weights have rank %d",
                           (*x)->shape.rank, (*w)->shape.rank);
  if (*rank >= 0 && *rank < 3)
    return _fb_infer_fail (error, node, "the weights must have rank 3 or more, not %d", *rank);
  return TRUE;
}

static gboolean
check_bias (const FbNode *node, int64_t channels, GError **error)
{
  FbValue *b = fb_node_input (node, 2);

  if (b == NULL || b->shape.rank < 0)
    return TRUE;
  if (b->shape.rank != 1 || (channels >= 0 && b->shape.dim[0] >= 0 && b->shape.dim[0] != channels))
    {
      g_autofree char *s = fb_shape_to_string (&b->shape);
      return _fb_infer_fail (error, node, "the bias has shape %s, expected %" G_GINT64_FORMAT,
                             s, channels);
    }
  return TRUE;
}

/* read_window for Conv and ConvTranspose, whose weights hold the kernel from their third
 * dimension on. */
static gboolean
read_weight_window (const FbNode *node, const FbValue *w, int n, Window *win, GError **error)
{
  int64_t wk[FB_MAX_RANK];
  for (int i = 0; i < n; i++)
    wk[i] = w->shape.rank >= 0 ? w->shape.dim[2 + i] : FB_DIM_UNKNOWN;
  return read_window (node, n, wk, win, error);
}

gboolean
_fb_infer_conv (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x, *w;
  gboolean nhwc;
  int rank, n;
  int64_t group, in_c = FB_DIM_UNKNOWN, w_c, m, spatial[FB_MAX_RANK];
  FbDType dtype;
  Window win;
  FbShape out;

  if (!conv_common (node, &x, &w, &nhwc, &rank, &group, &dtype, error))
    return FALSE;
  if (rank < 0)
    return _fb_infer_set_output (node, 0, dtype, &x->shape, error);
  n = rank - 2;
  if (!read_weight_window (node, w, n, &win, error))
    return FALSE;
  if (x->shape.rank >= 0)
    in_c = x->shape.dim[nhwc ? rank - 1 : 1];
  m = w->shape.rank >= 0 ? w->shape.dim[0] : FB_DIM_UNKNOWN;
  w_c = w->shape.rank >= 0 ? w->shape.dim[1] : FB_DIM_UNKNOWN;
  if (in_c >= 0 && w_c >= 0)
    {
      int64_t want;
      if (__builtin_mul_overflow (w_c, group, &want) || want != in_c)
        return _fb_infer_fail (error, node, "input channels %" G_GINT64_FORMAT " do not match "
                               "weight channels %" G_GINT64_FORMAT " x group %" G_GINT64_FORMAT,
                               in_c, w_c, group);
    }
  if (m >= 0 && m % group != 0)
    return _fb_infer_fail (error, node, "%" G_GINT64_FORMAT " output channels do not divide into "
                           "%" G_GINT64_FORMAT " groups", m, group);
  if (!check_bias (node, m, error))
    return FALSE;
  for (int i = 0; i < n; i++)
    {
      int64_t in = x->shape.rank >= 0 ? x->shape.dim[(nhwc ? 1 : 2) + i] : FB_DIM_UNKNOWN;
      if (!window_extent (node, &win, i, in, &spatial[i], error))
        return FALSE;
    }
  out = layout_shape (nhwc, rank, x->shape.rank >= 0 ? x->shape.dim[0] : FB_DIM_UNKNOWN,
                      x->shape.rank >= 0 ? x->shape.sym[0] : NULL, m, NULL, spatial, NULL);
  return _fb_infer_set_output (node, 0, dtype, &out, error);
}

gboolean
_fb_infer_conv_spatial (const FbNode *node, const FbValue *x, const FbValue *w, FbShape *out,
                        GError **error)
{
  Window win;
  int n = x->shape.rank - 2;

  if (n < 1 || n > FB_MAX_RANK - 2)
    return _fb_infer_fail (error, node, "the input must have rank 3 to %d, not %d", FB_MAX_RANK,
                           x->shape.rank);
  if (w->shape.rank >= 0 && w->shape.rank != x->shape.rank)
    return _fb_infer_fail (error, node, "the input has rank %d but the weights have rank %d",
                           x->shape.rank, w->shape.rank);
  if (!read_weight_window (node, w, n, &win, error))
    return FALSE;
  for (int i = 0; i < n; i++)
    if (!window_extent (node, &win, i, x->shape.dim[2 + i], &out->dim[2 + i], error))
      return FALSE;
  return TRUE;
}

gboolean
_fb_infer_conv_transpose (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x, *w;
  gboolean nhwc;
  int rank, n;
  int64_t group, in_c = FB_DIM_UNKNOWN, m = FB_DIM_UNKNOWN, spatial[FB_MAX_RANK];
  int64_t output_padding[FB_MAX_RANK];
  const int64_t *out_pad, *out_shape;
  guint count, n_out_shape;
  FbDType dtype;
  Window win;
  FbShape out;

  if (!conv_common (node, &x, &w, &nhwc, &rank, &group, &dtype, error))
    return FALSE;
  if (rank < 0)
    return _fb_infer_set_output (node, 0, dtype, &x->shape, error);
  n = rank - 2;
  if (!read_weight_window (node, w, n, &win, error))
    return FALSE;
  /* Weights are [C, M / group, k...]. */
  if (x->shape.rank >= 0)
    in_c = x->shape.dim[nhwc ? rank - 1 : 1];
  if (w->shape.rank >= 0)
    {
      if (in_c >= 0 && w->shape.dim[0] >= 0 && w->shape.dim[0] != in_c)
        return _fb_infer_fail (error, node, "input channels %" G_GINT64_FORMAT " do not match "
                               "weight channels %" G_GINT64_FORMAT, in_c, w->shape.dim[0]);
      if (!_fb_dim_mul (w->shape.dim[1], group, &m))
        return _fb_infer_fail (error, node, "the output channels overflow 64 bits");
    }
  if (in_c >= 0 && in_c % group != 0)
    return _fb_infer_fail (error, node, "%" G_GINT64_FORMAT " input channels do not divide into %"
                           G_GINT64_FORMAT " groups", in_c, group);
  if (!check_bias (node, m, error) ||
      !_fb_infer_attr_ints (node, "output_padding", n, &out_pad, &count, error) ||
      !_fb_infer_attr_ints (node, "output_shape", -1, &out_shape, &n_out_shape, error))
    return FALSE;
  for (int i = 0; i < n; i++)
    {
      output_padding[i] = out_pad ? out_pad[i] : 0;
      if (output_padding[i] < 0)
        return _fb_infer_fail (error, node, "output_padding[%d] is negative", i);
    }
  if (out_shape != NULL && n_out_shape != (guint) n && n_out_shape != (guint) rank)
    return _fb_infer_fail (error, node, "'output_shape' has %u entries for %d spatial axes",
                           n_out_shape, n);

  for (int i = 0; i < n; i++)
    {
      int64_t in = x->shape.rank >= 0 ? x->shape.dim[(nhwc ? 1 : 2) + i] : FB_DIM_UNKNOWN;
      int64_t ek, v;

      if (out_shape != NULL)
        {
          /* An explicit output shape wins; the pads follow from it. */
          spatial[i] = out_shape[n_out_shape - n + i];
          if (spatial[i] < 0)
            return _fb_infer_fail (error, node, "output_shape[%d] is negative", i);
          continue;
        }
      if (!effective_kernel (node, &win, i, &ek, error))
        return FALSE;
      spatial[i] = FB_DIM_UNKNOWN;
      if (in < 0)
        continue;
      if (win.auto_pad == PAD_SAME_UPPER || win.auto_pad == PAD_SAME_LOWER)
        {
          if (__builtin_mul_overflow (in, win.strides[i], &spatial[i]))
            return _fb_infer_fail (error, node, "the output extent overflows 64 bits");
          continue;
        }
      if (ek < 0 || in == 0)
        continue;
      if (__builtin_mul_overflow (in - 1, win.strides[i], &v) ||
          __builtin_add_overflow (v, output_padding[i], &v) ||
          __builtin_add_overflow (v, ek, &v) ||
          __builtin_sub_overflow (v, win.pads[i], &v) ||
          __builtin_sub_overflow (v, win.pads[i + n], &v))
        return _fb_infer_fail (error, node, "the output extent overflows 64 bits");
      if (v <= 0)
        return _fb_infer_fail (error, node, "the pads leave spatial axis %d with extent %"
                               G_GINT64_FORMAT, i, v);
      spatial[i] = v;
    }
  out = layout_shape (nhwc, rank, x->shape.rank >= 0 ? x->shape.dim[0] : FB_DIM_UNKNOWN,
                      x->shape.rank >= 0 ? x->shape.sym[0] : NULL, m, NULL, spatial, NULL);
  return _fb_infer_set_output (node, 0, dtype, &out, error);
}

gboolean
_fb_infer_pool (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  gboolean is_max = node->op == FB_OP_MAX_POOL;
  int opset = _fb_infer_opset (node);
  int64_t spatial[FB_MAX_RANK];
  gboolean nhwc;
  int rank, c;
  Window win;
  FbShape out;

  if (x == NULL || !channels_last (node, &nhwc, error) || !check_input_rank (node, x, error) ||
      !_fb_infer_check_type (node, 0, is_max && opset >= 12 ? FB_TYPES_NUMERIC : FB_TYPES_FLOAT,
                             error))
    return FALSE;
  if (opset < 10 && !_fb_infer_no_attr (node, "ceil_mode", error))
    return FALSE;
  if (opset < (is_max ? 10 : 19) && !_fb_infer_no_attr (node, "dilations", error))
    return FALSE;
  rank = x->shape.rank;
  if (rank < 0)
    {
      /* The kernel's length still gives the rank. */
      guint n;
      if (fb_node_attr_ints (node, "kernel_shape", &n) != NULL && n + 2 <= FB_MAX_RANK)
        {
          out = _fb_shape_of_rank ((int) n + 2);
          return _fb_infer_set_output (node, 0, x->dtype, &out, error) &&
                 _fb_infer_set_output (node, 1, FB_DTYPE_INT64, &out, error);
        }
      return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error) &&
             _fb_infer_set_output (node, 1, FB_DTYPE_INT64, &x->shape, error);
    }
  if (!read_window (node, rank - 2, NULL, &win, error))
    return FALSE;
  for (int i = 0; i < rank - 2; i++)
    if (!window_extent (node, &win, i, x->shape.dim[(nhwc ? 1 : 2) + i], &spatial[i], error))
      return FALSE;
  c = nhwc ? rank - 1 : 1;
  out = layout_shape (nhwc, rank, x->shape.dim[0], x->shape.sym[0], x->shape.dim[c],
                      x->shape.sym[c], spatial, NULL);
  return _fb_infer_set_output (node, 0, x->dtype, &out, error) &&
         _fb_infer_set_output (node, 1, FB_DTYPE_INT64, &out, error);
}

gboolean
_fb_infer_global_pool (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  int64_t ones[FB_MAX_RANK];
  gboolean nhwc;
  int rank, c;
  FbShape out;

  if (x == NULL || !channels_last (node, &nhwc, error) || !check_input_rank (node, x, error) ||
      !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error))
    return FALSE;
  rank = x->shape.rank;
  if (rank < 0)
    return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
  for (int i = 0; i < FB_MAX_RANK; i++)
    ones[i] = 1;
  c = nhwc ? rank - 1 : 1;
  out = layout_shape (nhwc, rank, x->shape.dim[0], x->shape.sym[0], x->shape.dim[c],
                      x->shape.sym[c], ones, NULL);
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

/* MaxUnpool: X and I (MaxPool's values and indices) of one shape; the output is output_shape
 * when given, else what a MaxPool of the attributes' window would have pooled from. */
gboolean
_fb_infer_max_unpool (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error), *ind = _fb_infer_require (node, 1, error);
  const int64_t *kernel, *pads;
  int64_t strides[FB_MAX_RANK];
  g_autofree int64_t *shape = NULL;
  guint nk, np;
  int n, ns;
  FbShape out;

  if (x == NULL || ind == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
      !_fb_infer_check_type (node, 1, FB_TYPES_INT64, error) ||
      !_fb_infer_check_type (node, 2, FB_TYPES_INT64, error) || !check_input_rank (node, x, error) ||
      !_fb_infer_attr_ints (node, "kernel_shape", -1, &kernel, &nk, error))
    return FALSE;
  if (kernel == NULL)
    return _fb_infer_fail (error, node, "the attribute 'kernel_shape' is missing");
  n = (int) nk;
  if (n + 2 > FB_MAX_RANK || (x->shape.rank >= 0 && x->shape.rank != n + 2))
    return _fb_infer_fail (error, node, "kernel_shape has %d entries for an input of rank %d", n,
                           x->shape.rank);
  for (int i = 0; i < n; i++)
    if (kernel[i] <= 0)
      return _fb_infer_fail (error, node, "kernel_shape[%d] is %" G_GINT64_FORMAT ", not positive",
                             i, kernel[i]);
  if (!positive_list (node, "strides", n, strides, error) ||
      !_fb_infer_attr_ints (node, "pads", 2 * n, &pads, &np, error))
    return FALSE;
  for (guint i = 0; pads && i < np; i++)
    if (pads[i] < 0)
      return _fb_infer_fail (error, node, "pads[%u] is %" G_GINT64_FORMAT ", negative", i, pads[i]);
  if (x->shape.rank >= 0 && ind->shape.rank == x->shape.rank)
    for (int d = 0; d < x->shape.rank; d++)
      if (x->shape.dim[d] >= 0 && ind->shape.dim[d] >= 0 && x->shape.dim[d] != ind->shape.dim[d])
        return _fb_infer_fail (error, node, "X and I differ in dimension %d", d);
  if (ind->shape.rank >= 0 && ind->shape.rank != n + 2)
    return _fb_infer_fail (error, node, "I has rank %d, X rank %d", ind->shape.rank, n + 2);

  if (fb_node_input (node, 2) != NULL)
    {
      if (!_fb_infer_const_ints (node, 2, "output_shape", FB_MAX_RANK, &shape, &ns, error))
        return FALSE;
      out = _fb_shape_of_rank (n + 2);
      if (ns >= 0 && ns != n + 2)
        return _fb_infer_fail (error, node, "output_shape has %d entries for an input of rank %d",
                               ns, n + 2);
      for (int d = 0; d < ns; d++)
        {
          if (shape[d] < 0)
            return _fb_infer_fail (error, node, "output_shape[%d] is %" G_GINT64_FORMAT
                                   ", negative", d, shape[d]);
          out.dim[d] = shape[d];
        }
      return _fb_infer_set_output (node, 0, x->dtype, &out, error);
    }
  out = _fb_shape_of_rank (n + 2);
  if (x->shape.rank < 0)
    return _fb_infer_set_output (node, 0, x->dtype, &out, error);
  for (int d = 0; d < 2; d++)
    {
      out.dim[d] = x->shape.dim[d];
      out.sym[d] = x->shape.sym[d];
    }
  for (int i = 0; i < n; i++)
    {
      int64_t in = x->shape.dim[2 + i], e;
      if (in < 0)
        continue;
      /* (in - 1) * stride + kernel - pad_begin - pad_end */
      if (in == 0 || __builtin_mul_overflow (in - 1, strides[i], &e) ||
          __builtin_add_overflow (e, kernel[i], &e))
        return _fb_infer_fail (error, node, "spatial axis %d of extent %" G_GINT64_FORMAT
                               " cannot be unpooled", i, in);
      e -= pads ? pads[i] + pads[i + n] : 0;
      if (e < 0)
        return _fb_infer_fail (error, node, "the pads leave spatial axis %d negative", i);
      out.dim[2 + i] = e;
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}
