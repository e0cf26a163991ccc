/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Pad in every opset form (attribute pads before 11, inputs after, axes since 18) and every mode
 * (constant, reflect, edge, wrap). Negative pads crop. Each output element maps back to a source
 * element or to the constant, so the code never reads outside the input. */
#include "fb-interp-private.h"

#include <string.h>

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

static int
pad_mode (const FbNode *node)
{
  const char *mode = fb_node_attr_string (node, "mode", "constant");

  if (strcmp (mode, "constant") == 0) return PAD_CONSTANT;
  if (strcmp (mode, "reflect") == 0)  return PAD_REFLECT;
  if (strcmp (mode, "edge") == 0)     return PAD_EDGE;
  if (strcmp (mode, "wrap") == 0)     return PAD_WRAP;
  return -1;
}

gboolean
_fb_interp_check_pad (const FbNode *node, GError **error)
{
  if (pad_mode (node) < 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED, "mode '%s' is unknown",
                            fb_node_attr_string (node, "mode", ""));
  return TRUE;
}

/* The source index for output position i along an axis of extent d, or -1 for the constant. */
static int64_t
source_index (int mode, int64_t i, int64_t d)
{
  if (i >= 0 && i < d)
    return i;
  switch (mode)
    {
    case PAD_EDGE:
      return i < 0 ? 0 : d - 1;
    case PAD_WRAP:
      return ((i % d) + d) % d;
    case PAD_REFLECT:
      {
        /* Reflection without repeating the edge, folded as often as the padding needs. */
        int64_t period = 2 * (d - 1), m;
        if (d == 1)
          return 0;
        m = ((i % period) + period) % period;
        return m < d ? m : period - m;
      }
    default:
      return -1;
    }
}

gboolean
_fb_interp_pad (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                GError **error)
{
  FbTensor *x = in[0];
  int mode = pad_mode (node), opset = _fb_interp_opset (node);
  int64_t begin[FB_MAX_RANK] = { 0 }, end[FB_MAX_RANK] = { 0 }, dims[FB_MAX_RANK];
  int64_t xs[FB_MAX_RANK], rows, inner;
  g_autofree int64_t *pads = NULL, *axes = NULL;
  guint np = 0, na = 0;
  gsize esize = fb_dtype_size (x->dtype);
  g_autoptr(FbTensor) fill = NULL;
  FbTensor *y;
  char *d;
  const char *s;

  if (opset < 11)
    {
      const int64_t *v = fb_node_attr_ints (node, opset < 2 ? "paddings" : "pads", &np);
      pads = g_memdup2 (v, sizeof (int64_t) * MAX (np, 1));
    }
  else
    {
      if (!_fb_interp_need (node, in, 1, error) ||
          !_fb_interp_int_list (node, in[1], "pads", &pads, &np, error))
        return FALSE;
      if (node->n_inputs > 3 && in[3] != NULL &&
          !_fb_interp_int_list (node, in[3], "axes", &axes, &na, error))
        return FALSE;
    }
  if ((axes == NULL && np != 2 * (guint) x->rank) || (axes != NULL && np != 2 * na))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "pads has %u entries for %u padded axes", np,
                            axes ? na : (guint) x->rank);
  for (guint k = 0; k < np / 2; k++)
    {
      int a = (int) k;
      if (axes != NULL && !fb_axis_normalize (axes[k], x->rank, &a))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "axis %" G_GINT64_FORMAT " is out of range", axes[k]);
      begin[a] = pads[k];
      end[a] = pads[np / 2 + k];
    }
  for (int i = 0; i < x->rank; i++)
    {
      dims[i] = x->dims[i] + begin[i] + end[i];
      if (begin[i] < -x->dims[i] || end[i] < -x->dims[i] || dims[i] < 0 ||
          begin[i] > G_MAXINT32 || end[i] > G_MAXINT32)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "pads %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT " do not fit "
                                "axis %d of extent %" G_GINT64_FORMAT, begin[i], end[i], i,
                                x->dims[i]);
      if (mode != PAD_CONSTANT && x->dims[i] == 0 && dims[i] > 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "cannot pad the empty axis %d in this mode", i);
    }

  /* The fill value as one element of x's type. */
  fill = fb_tensor_new (x->dtype, 0, NULL, NULL);
  if (opset < 11)
    fb_tensor_set_f64 (fill, 0, fb_node_attr_float (node, "value", 0.0f));
  else if (node->n_inputs > 2 && in[2] != NULL && in[2]->numel > 0)
    {
      if (in[2]->dtype != x->dtype || in[2]->numel != 1)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "constant_value must be one element of the input's type");
      memcpy (fb_tensor_data_mut (fill), fb_tensor_data (in[2]), esize);
    }

  y = _fb_interp_new (node, x->dtype, x->rank, dims, error);
  if (y == NULL)
    return FALSE;
  if (y->numel == 0 || x->rank == 0)
    {
      if (x->rank == 0)
        memcpy (fb_tensor_data_mut (y), fb_tensor_data (x), esize);
      out[0] = y;
      return TRUE;
    }
  _fb_strides (x->rank, x->dims, xs);
  rows = _fb_interp_prod (dims, 0, x->rank - 1);
  inner = dims[x->rank - 1];
  d = fb_tensor_data_mut (y);
  s = fb_tensor_data (x);
  for (int64_t r = 0; r < rows; r++)
    {
      int64_t rem = r, base = 0;
      gboolean constant_row = FALSE;
      int last = x->rank - 1;
      for (int i = x->rank - 2; i >= 0; i--)
        {
          int64_t src = source_index (mode, rem % dims[i] - begin[i], x->dims[i]);
          rem /= dims[i];
          if (src < 0)
            constant_row = TRUE;
          else
            base += src * xs[i];
        }
      for (int64_t j = 0; j < inner; j++)
        {
          int64_t src = constant_row ? -1 : source_index (mode, j - begin[last], x->dims[last]);
          memcpy (d + (r * inner + j) * esize,
                  src < 0 ? (const char *) fb_tensor_data (fill) : s + (base + src) * esize,
                  esize);
        }
    }
  out[0] = y;
  return TRUE;
}
