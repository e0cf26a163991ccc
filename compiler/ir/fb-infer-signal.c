/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for the signal operators: DFT, STFT and MelWeightMatrix. Their sizes come from
 * scalar inputs; when those are not known before the run, the extents they set stay unknown
 * (and the cpu target runs the node on the host). fb-signal-spec.c holds the rules shared with
 * the interpreter and the lowering. */
#include "fb-infer-private.h"
#include "fb-signal-spec.h"

/* The value of the scalar input i when known before the run; -1 when not, -2 when absent. */
static gboolean
scalar_input (const FbNode *node, guint i, const char *what, int64_t *out, GError **error)
{
  g_autofree int64_t *v = NULL;
  int n;

  *out = -2;
  if (fb_node_input (node, i) == NULL)
    return TRUE;
  if (!_fb_infer_check_type (node, i, FB_TYPES_INDEX, error) ||
      !_fb_infer_check_scalar (node, i, what, TRUE, error) ||
      !_fb_infer_const_ints (node, i, what, 1, &v, &n, error))
    return FALSE;
  *out = n == 1 ? v[0] : -1;
  return TRUE;
}

static gboolean
spec_error (const FbNode *node, GError *local, GError **error)
{
  _fb_infer_fail (error, node, "%s", local->message);
  g_error_free (local);
  return FALSE;
}

/* Error unless the last extent of x (when known) is 1 (real) or 2 (real, imaginary). */
static gboolean
check_components (const FbNode *node, const FbValue *x, const char *what, GError **error)
{
  int64_t c = x->shape.rank > 0 ? x->shape.dim[x->shape.rank - 1] : -1;

  if (c >= 0 && c != 1 && c != 2)
    return _fb_infer_fail (error, node, "the last extent of %s is %" G_GINT64_FORMAT "; it must be "
                           "1 (real) or 2 (real and imaginary parts)", what, c);
  return TRUE;
}

gboolean
_fb_infer_dft (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  int64_t length, axis;
  GError *local = NULL;
  FbDftSpec spec;
  FbShape out;

  if (x == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
      !check_components (node, x, "the input", error) ||
      !scalar_input (node, 1, "dft_length", &length, error))
    return FALSE;
  if (_fb_infer_opset (node) < 20)
    {
      if (!_fb_infer_no_input (node, 2, "axis", 20, error))
        return FALSE;
      axis = -2;
    }
  else if (!_fb_infer_no_attr (node, "axis", error) ||
           (fb_node_input (node, 2) != NULL &&
            !_fb_infer_check_type (node, 2, FB_TYPES_INT64, error)) ||
           !scalar_input (node, 2, "axis", &axis, error))
    return FALSE;
  if (length == 0 || length < -2)
    return _fb_infer_fail (error, node, "dft_length %" G_GINT64_FORMAT " is not positive", length);
  if (x->shape.rank < 0)
    return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
  out = x->shape;
  out.dim[out.rank - 1] = 2;
  out.sym[out.rank - 1] = NULL;
  if (axis == -1 && fb_node_input (node, 2) != NULL)
    {
      /* The axis is only known at run time: so is every extent but the last. */
      for (int d = 0; d < out.rank - 1; d++)
        {
          out.dim[d] = FB_DIM_UNKNOWN;
          out.sym[d] = NULL;
        }
      return fb_dft_spec (node, x->shape.rank, NULL, &spec, &local)
               ? _fb_infer_set_output (node, 0, x->dtype, &out, error)
               : spec_error (node, local, error);
    }
  if (!fb_dft_spec (node, x->shape.rank, axis == -2 ? NULL : &axis, &spec, &local))
    return spec_error (node, local, error);
  if (spec.onesided && x->shape.dim[x->shape.rank - 1] == 2)
    return _fb_infer_fail (error, node, "a complex input has no onesided transform");
  if (length == -2)
    length = x->shape.dim[spec.axis];
  if (length != x->shape.dim[spec.axis] || spec.onesided)
    out.sym[spec.axis] = NULL;
  out.dim[spec.axis] = length >= 0 ? fb_dft_bins (&spec, length) : FB_DIM_UNKNOWN;
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

gboolean
_fb_infer_stft (FbGraph *graph, FbNode *node, GError **error)
{
  static const guint floats[] = { 0, 2 };
  FbValue *x = _fb_infer_require (node, 0, error);
  FbValue *w = fb_node_input (node, 2);
  int64_t step, frame_length, window_length = -2, length = -1;
  gboolean complex = FALSE;
  GError *local = NULL;
  FbStftSpec spec;
  FbDType dtype;
  FbShape out = _fb_shape_of_rank (4);

  if (x == NULL || _fb_infer_require (node, 1, error) == NULL ||
      !_fb_infer_check_type (node, 0, FB_TYPES_FLOAT, error) ||
      !_fb_infer_same_type (node, floats, 2, &dtype, error) ||
      !check_components (node, x, "the signal", error) ||
      !scalar_input (node, 1, "frame_step", &step, error) ||
      !scalar_input (node, 3, "frame_length", &frame_length, error))
    return FALSE;
  if (x->shape.rank >= 0 && x->shape.rank != 3)
    return _fb_infer_fail (error, node, "the signal has rank %d; it must be [batch, length, 1 or 2]",
                           x->shape.rank);
  if (w != NULL && w->shape.rank >= 0 && w->shape.rank != 1)
    return _fb_infer_fail (error, node, "the window has rank %d; it must be a vector",
                           w->shape.rank);
  if (w != NULL)
    window_length = w->shape.rank == 1 && w->shape.dim[0] >= 0 ? w->shape.dim[0] : -1;
  if (x->shape.rank == 3)
    {
      length = x->shape.dim[1];
      complex = x->shape.dim[2] == 2;
      out.dim[0] = x->shape.dim[0];
      out.sym[0] = x->shape.sym[0];
    }
  if (!fb_stft_spec (node, length, complex, step, frame_length, window_length, &spec, &local))
    return spec_error (node, local, error);
  out.dim[1] = spec.frames;
  out.dim[2] = spec.bins;
  out.dim[3] = 2;
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

gboolean
_fb_infer_mel_weight_matrix (FbGraph *graph, FbNode *node, GError **error)
{
  static const guint edges[] = { 3, 4 };
  int64_t to = fb_node_attr_int (node, "output_datatype", FB_DTYPE_FLOAT32);
  int64_t mel_bins, dft_length, rate;
  FbShape out = _fb_shape_of_rank (2);
  FbDType edge_type;

  for (guint i = 0; i < 5; i++)
    if (_fb_infer_require (node, i, error) == NULL)
      return FALSE;
  if (!scalar_input (node, 0, "num_mel_bins", &mel_bins, error) ||
      !scalar_input (node, 1, "dft_length", &dft_length, error) ||
      !scalar_input (node, 2, "sample_rate", &rate, error) ||
      !_fb_infer_check_type (node, 3, FB_TYPES_FLOAT, error) ||
      !_fb_infer_same_type (node, edges, 2, &edge_type, error) ||
      !_fb_infer_check_scalar (node, 3, "lower_edge_hertz", TRUE, error) ||
      !_fb_infer_check_scalar (node, 4, "upper_edge_hertz", TRUE, error))
    return FALSE;
  if (!fb_dtype_is_known ((int) to) || to > G_MAXINT32 || fb_dtype_size ((FbDType) to) == 0 ||
      to == FB_DTYPE_BOOL)
    return _fb_infer_fail (error, node, "output_datatype %" G_GINT64_FORMAT " is not a numeric "
                           "type", to);
  if (mel_bins < -1)
    return _fb_infer_fail (error, node, "num_mel_bins %" G_GINT64_FORMAT " is negative", mel_bins);
  if (dft_length == 0 || dft_length < -1)
    return _fb_infer_fail (error, node, "dft_length %" G_GINT64_FORMAT " is not positive",
                           dft_length);
  if (rate == 0 || rate < -1)
    return _fb_infer_fail (error, node, "sample_rate %" G_GINT64_FORMAT " is not positive", rate);
  out.dim[0] = dft_length >= 0 ? dft_length / 2 + 1 : FB_DIM_UNKNOWN;
  out.dim[1] = mel_bins;
  return _fb_infer_set_output (node, 0, (FbDType) to, &out, error);
}
