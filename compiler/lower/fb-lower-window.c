/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The window of a convolution or pool over any number of spatial axes, read from the node's
 * attributes and its static shapes: what the N-d pools (fb-lower-pool-nd.c) and the direct
 * convolutions (fb-lower-convnd.c) share. Lists of the wrong length are refused here, naming
 * the attribute, rather than read past their end or silently ignored. */
#include "fb-lower-conv.h"

#include <string.h>

/* An attribute list of n entries, or every entry fallback when absent. */
static gboolean
attr_list (const FbNode *node, const char *name, int n, int64_t fallback, int64_t *out,
           GError **error)
{
  guint len = 0;
  const int64_t *v = fb_node_attr_ints (node, name, &len);
  if (v == NULL)
    {
      for (int i = 0; i < n; i++)
        out[i] = fallback;
      return TRUE;
    }
  if (len != (guint) n)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                           "%s has %u entries, %d expected", name, len, n);
  memcpy (out, v, sizeof (int64_t) * n);
  return TRUE;
}

gboolean
_fb_lower_window_nd (const FbNode *node, const FbValue *x, const FbValue *w, FbWindowNd *g,
                     GError **error)
{
  const FbValue *y = node->outputs[0];
  int rx, ry, rw = 0;
  int64_t dx[FB_MAX_RANK], dy[FB_MAX_RANK], dw[FB_MAX_RANK];
  memset (g, 0, sizeof *g);
  if (y == NULL || !_fb_lower_dims (x, &rx, dx) || !_fb_lower_dims (y, &ry, dy) ||
      (w && !_fb_lower_dims (w, &rw, dw)))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shapes are not static");
  if (rx < 3 || ry != rx || (w && rw != rx))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                           "needs an input of rank 3 or more (batch, channels, spatial axes) "
                           "and an output%s of the same rank (input rank %d)",
                           w ? " and weights" : "", rx);
  g->sp = rx - 2;
  g->nhwc = _fb_lower_is_nhwc (node);
  int ch = g->nhwc ? rx - 1 : 1, first = g->nhwc ? 1 : 2;
  g->N = dx[0];
  g->C = dx[ch];
  g->Co = dy[ch];
  for (int i = 0; i < g->sp; i++)
    {
      g->in[i] = dx[first + i];
      g->out[i] = dy[first + i];
    }

  guint nk = 0;
  const int64_t *ks = fb_node_attr_ints (node, "kernel_shape", &nk);
  if (ks != NULL && nk != (guint) g->sp)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                           "kernel_shape has %u entries, %d expected", nk, g->sp);
  if (ks == NULL && w == NULL)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                           "the kernel_shape attribute is required");
  for (int i = 0; i < g->sp; i++)
    {
      g->k[i] = w ? dw[2 + i] : ks[i];
      if (ks != NULL && ks[i] != g->k[i])
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                               "kernel_shape does not match the weights on spatial axis %d", i);
    }
  int64_t pads[2 * FB_MAX_RANK];
  if (!attr_list (node, "strides", g->sp, 1, g->s, error) ||
      !attr_list (node, "dilations", g->sp, 1, g->d, error) ||
      !attr_list (node, "pads", 2 * g->sp, 0, pads, error))
    return FALSE;
  for (int i = 0; i < g->sp; i++)
    {
      g->pb[i] = pads[i];
      g->pe[i] = pads[g->sp + i];
      if (g->k[i] < 1 || g->s[i] < 1 || g->d[i] < 1 || g->pb[i] < 0 || g->pe[i] < 0)
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                               "kernel, strides and dilations must be positive and pads not "
                               "negative (spatial axis %d)", i);
    }

  /* A ConvTranspose's SAME padding is about its output; _fb_lower_deconv_begin_pads has it. */
  const char *auto_pad = fb_node_attr_string (node, "auto_pad", "NOTSET");
  gboolean same = g_str_has_prefix (auto_pad, "SAME") && node->op != FB_OP_CONV_TRANSPOSE;
  for (int i = 0; i < g->sp; i++)
    if (same)
      {
        int64_t total = MAX (0, (g->out[i] - 1) * g->s[i] + (g->k[i] - 1) * g->d[i] + 1 - g->in[i]);
        g->pb[i] = g_str_equal (auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
        g->pe[i] = total - g->pb[i];
      }
    else if (g_str_equal (auto_pad, "VALID"))
      g->pb[i] = g->pe[i] = 0;
  return TRUE;
}

void
_fb_lower_window_to_cf (const FbWindowNd *g, FbKExpr **phys, FbKExpr **cf)
{
  cf[0] = phys[0];
  if (!g->nhwc)
    {
      memcpy (cf + 1, phys + 1, sizeof (FbKExpr *) * (g->sp + 1));
      return;
    }
  cf[1] = phys[g->sp + 1];
  for (int i = 0; i < g->sp; i++)
    cf[2 + i] = phys[1 + i];
}

void
_fb_lower_window_to_phys (const FbWindowNd *g, FbKExpr **cf, FbKExpr **phys)
{
  phys[0] = cf[0];
  if (!g->nhwc)
    {
      memcpy (phys + 1, cf + 1, sizeof (FbKExpr *) * (g->sp + 1));
      return;
    }
  phys[g->sp + 1] = cf[1];
  for (int i = 0; i < g->sp; i++)
    phys[1 + i] = cf[2 + i];
}
