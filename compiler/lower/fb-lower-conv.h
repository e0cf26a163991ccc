/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Geometry of 1-D and 2-D windows (convolutions and pools), shared by their lowerings.
 * Only compiler/lower/ includes this header. */
#pragma once

#include "fb-lower-private.h"

G_BEGIN_DECLS

typedef struct {
  gboolean nhwc;                /* channels-last ("fb_layout" = "nhwc") */
  gboolean is1d;                /* a 1-D window, treated as 2-D of height 1 */
  int64_t  N, C, H, W;          /* input */
  int64_t  Co, OH, OW;          /* output */
  int64_t  G;                   /* groups */
  int64_t  KH, KW, sh, sw, dh, dw;
  int64_t  pt, pl, pb, pr;      /* padding: top, left, bottom, right (bottom and right grown so
                                   that every output window fits; transposed: the output's) */
  gboolean transposed;          /* a ConvTranspose: weights [C, Co/G, KH, KW] */
} FbConvGeom;

gboolean _fb_lower_conv_geom   (const FbNode *node, FbConvGeom *g, GError **error);
/* Maps [n, c, h, w] coordinates to the output value's own (rank 3 or 4, either layout). */
void     _fb_lower_conv_coords (const FbConvGeom *g, FbKExpr **c4, FbKExpr **out);
/* Element stride of the padded input along n (0), c (1), h (2), w (3). */
int64_t  _fb_lower_conv_xindex_stride (const FbConvGeom *g, int which);
/* A phase copying x into a padded scratch buffer; returns the scratch argument. */
guint    _fb_lower_pad_input   (FbLowerCtx *c, const FbValue *x, const FbConvGeom *g,
                                double fill_value, GError **error);

/* Whether oneDNN's convolution primitive may take this one (channels-last float, constant
 * weights, a geometry it reads the same way), and the kernel made of it (fb-lower-dnnl-conv.c):
 * *taken is FALSE, and nothing is added to the kernel, when oneDNN has no optimized kernel for
 * it on this machine. */
gboolean _fb_lower_dnnl_conv_fits (const FbNode *node, const FbConvGeom *g);
gboolean _fb_lower_dnnl_conv      (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g,
                                   gboolean *taken, GError **error);

G_END_DECLS
