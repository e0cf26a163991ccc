/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ConvTranspose. A channels-last 2-D one with constant float weights is one oneDNN
 * deconvolution primitive (fb-lower-dnnl-conv.c makes it, with the bias and the fused
 * epilogue as post-ops, and the runtime reorders its weights once, when the plan is loaded):
 * a DB-style text detector's 2x2 stride-2 upsampling layers ran at 3.3 GFLOP/s as generated
 * loops, which test every kernel cell of every output element against the stride. Everything
 * else, a deconvolution oneDNN has only its reference kernel for, and every deconvolution on
 * a GPU, is the direct loop nest of fb-lower-convnd.c, and the kernel's label says why.
 *
 * The output's extent is shape inference's (it reads output_shape and output_padding); the
 * begin pads come from the attributes, and oneDNN's end pads are what is left: its
 * deconvolution is the transpose of the convolution from our output back to our input, so the
 * output padding rows are the remainder under the stride that convolution does not reach. */
#include "fb-lower-private.h"
#include "fb-lower-conv.h"

#include <string.h>

/* The deconvolution's geometry, FALSE where oneDNN's reading of it could not be ours (a 1-D
 * or 3-D one, pads the output shape makes negative). */
static gboolean
deconv_geom (const FbNode *node, FbConvGeom *g)
{
  const FbValue *x = node->inputs[0], *w = node->inputs[1], *y = node->outputs[0];
  int rx, rw, ry;
  int64_t dx[FB_MAX_RANK], dw[FB_MAX_RANK], dy[FB_MAX_RANK];
  memset (g, 0, sizeof *g);
  g->nhwc = _fb_lower_is_nhwc (node);
  g->transposed = TRUE;
  if (!g->nhwc || !_fb_lower_dims (x, &rx, dx) || !_fb_lower_dims (w, &rw, dw) ||
      !_fb_lower_dims (y, &ry, dy) || rx != 4 || rw != 4 || ry != 4)
    return FALSE;
  g->N = dx[0]; g->H = dx[1]; g->W = dx[2]; g->C = dx[3];
  g->OH = dy[1]; g->OW = dy[2]; g->Co = dy[3];
  g->G = fb_node_attr_int (node, "group", 1);
  g->KH = dw[2];
  g->KW = dw[3];
  if (g->G < 1 || g->C % g->G || g->Co % g->G || dw[0] != g->C || dw[1] * g->G != g->Co)
    return FALSE;
  guint ns = 0, nd = 0, nop = 0;
  const int64_t *st = fb_node_attr_ints (node, "strides", &ns);
  const int64_t *dl = fb_node_attr_ints (node, "dilations", &nd);
  const int64_t *opad = fb_node_attr_ints (node, "output_padding", &nop);
  int64_t in[2] = { g->H, g->W }, out[2] = { g->OH, g->OW }, kk[2] = { g->KH, g->KW };
  int64_t begin[2], end[2], s[2], d[2];
  _fb_lower_deconv_begin_pads (node, 2, in, out, kk, begin);
  for (int i = 0; i < 2; i++)
    {
      s[i] = ns == 2 ? st[i] : 1;
      d[i] = nd == 2 ? dl[i] : 1;
      int64_t op = nop == 2 ? opad[i] : 0;
      /* What the output leaves of the full extent after the begin pad, output padding kept
       * (see the top of the file). */
      end[i] = s[i] * (in[i] - 1) + (kk[i] - 1) * d[i] + 1 + op - out[i] - begin[i];
      if (begin[i] < 0 || end[i] < 0 || op < 0 || op >= s[i])
        return FALSE;
    }
  g->sh = s[0]; g->sw = s[1]; g->dh = d[0]; g->dw = d[1];
  g->pt = begin[0]; g->pl = begin[1]; g->pb = end[0]; g->pr = end[1];
  return TRUE;
}

gboolean
_fb_lower_conv_transpose (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbConvGeom g;
  gboolean taken = FALSE;
  gboolean fits = deconv_geom (node, &g) && _fb_lower_dnnl_conv_fits (node, &g);
  /* The GPU's library phase is cuDNN's forward convolution, which a deconvolution is not (a
   * grouped 3x3 one of stride 1 has the same output size and ran as a correlation there):
   * on a GPU it is the generated loop nest, one output element per thread. */
  gboolean gpu = _fb_lower_for_gpu (c);
  if (fits && !gpu && !_fb_lower_dnnl_conv (c, node, &g, &taken, error))
    return FALSE;
  if (taken)
    return TRUE;
  if (g.nhwc || gpu)
    {
      /* Say why this one is loops: the others are a library's. */
      char *label = c->k->label;
      c->k->label = g_strdup_printf ("%s (generated loops: %s)", label ? label : "",
                                     gpu ? "cuDNN's forward convolutions do not run deconvolutions"
                                         : "oneDNN has no optimized deconvolution for this "
                                           "geometry here");
      g_free (label);
    }
  return _fb_lower_conv_direct (c, node, error);
}
