/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Geometry of windows (convolutions and pools), shared by their lowerings: the 1-D and 2-D
 * form of the im2col convolutions and the fast pools, and the form over any number of spatial
 * axes of the direct convolutions and the N-d pools. Only compiler/lower/ includes this header. */
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

/* The weights [Co, C/G, KH, KW] reordered for channels-last loops: [KH, KW, Co] for a
 * depthwise convolution (consecutive channels side by side), else [Co, KH, KW, C/G]. */
FbTensor *_fb_lower_conv_repack (const FbTensor *w, gboolean depthwise, GError **error);
/* The weights of a depthwise convolution as its loops read them: [KH, KW, C] channels-last
 * (a constant made at lowering), the node's own [C, 1, KH, KW] channels-first. */
gboolean _fb_lower_depthwise_weights (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g,
                                      guint *wa, GError **error);
/* Stores x, the sum at output coordinates c4 ([n, c, h, w]), plus the bias if the node has
 * one, through the sunk epilogue chain. */
gboolean _fb_lower_conv_store   (FbLowerCtx *c, GPtrArray *body, const FbNode *node,
                                 const FbConvGeom *g, FbKExpr **c4, FbKExpr *x, GError **error);
/* A depthwise convolution on a GPU: a thread per output element, its taps unrolled
 * (fb-lower-depthwise-gpu.c), up to 9x9 of them (ConvNeXt's 7x7 is 49). */
#define FB_LOWER_DEPTHWISE_GPU_MAX_TAPS 81
gboolean _fb_lower_depthwise_gpu (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g,
                                  GError **error);

/* Whether oneDNN's convolution primitive may take this one (channels-last float, constant
 * weights, a geometry it reads the same way), and the kernel made of it (fb-lower-dnnl-conv.c):
 * *taken is FALSE, and nothing is added to the kernel, when oneDNN has no optimized kernel for
 * it on this machine. */
gboolean _fb_lower_dnnl_conv_fits (const FbNode *node, const FbConvGeom *g);
gboolean _fb_lower_dnnl_conv      (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g,
                                   gboolean *taken, GError **error);
/* The chain from y to end (both set: y is sunk) appended to cv's post-ops (*add: the tensor
 * of an Add among them, or NULL); FALSE when it is not a line of operations the primitive has. */
gboolean _fb_lower_dnnl_post_chain (FbLowerCtx *c, const FbValue *y, const FbValue *end,
                                    FbKConv *cv, const FbValue **add);
/* The Conv member of the group being lowered that folds member m, a Mul of its input by one
 * number per input channel, into its weights at every run; NULL when m is not such a Mul or
 * folding would not pay. */
const FbNode *_fb_lower_dnnl_scale_fold (FbLowerCtx *c, const FbNode *m);

/* A window over sp spatial axes, on channels-first coordinates [n, c, spatial...] whatever the
 * node's layout (a channels-last node maps them on access, fb-lower-window.c). */
typedef struct {
  int      sp;                  /* spatial axes (the input's rank less 2) */
  gboolean nhwc;                /* channels-last ("fb_layout" = "nhwc"): channels are the last axis */
  int64_t  N, C, Co;            /* batch, input channels, output channels */
  int64_t  in[FB_MAX_RANK];     /* input extent per spatial axis */
  int64_t  out[FB_MAX_RANK];    /* output extent per spatial axis */
  int64_t  k[FB_MAX_RANK];      /* kernel extent (the weights' or kernel_shape) */
  int64_t  s[FB_MAX_RANK];      /* strides */
  int64_t  d[FB_MAX_RANK];      /* dilations */
  int64_t  pb[FB_MAX_RANK];     /* padding at the start (auto_pad resolved; a ConvTranspose's
                                   are its pads attribute only, see _fb_lower_deconv_begin_pads) */
  int64_t  pe[FB_MAX_RANK];     /* declared padding at the end (ceil_mode may read past it) */
} FbWindowNd;

/* Reads the window of node over x (w: the weights, NULL for a pool, whose kernel_shape is then
 * required) and its output 0, checking that the attributes fit the rank. */
gboolean _fb_lower_window_nd     (const FbNode *node, const FbValue *x, const FbValue *w,
                                  FbWindowNd *g, GError **error);
/* Channels-first coordinates of a value of the window's rank from its own (phys), and back. */
void     _fb_lower_window_to_cf  (const FbWindowNd *g, FbKExpr **phys, FbKExpr **cf);
void     _fb_lower_window_to_phys (const FbWindowNd *g, FbKExpr **cf, FbKExpr **phys);
/* MaxPool and AveragePool over any number of spatial axes and any element type MaxPool takes,
 * either layout, with MaxPool's indices (fb-lower-pool-nd.c). */
gboolean _fb_lower_pool_nd       (FbLowerCtx *c, const FbNode *node, GError **error);

/* Mul m's operands as the tensor it scales (*x) and its scale (*s): one number per channel of
 * a channels-last tensor of c channels, [1, 1, 1, c], or per image too, [images, 1, 1, c]. */
gboolean _fb_lower_scale_operands (const FbNode *m, int64_t images, int64_t c,
                                   const FbValue **x, const FbValue **s);

/* Whether a GPU convolution is one cuBLASLt product (fb-lower-conv-product-gpu.c): a patchify
 * (windows that tile the input, channels-last), lowered as a copy of its patches and the
 * product, or a pointwise one followed by nothing but a bias and a residual. The _fits form
 * asks only that; _fb_lower_conv_gpu_product also that no other GPU rule takes it first. */
gboolean _fb_lower_conv_product_gpu_fits (const FbLowerCtx *c, const FbNode *node,
                                          const FbConvGeom *g);
gboolean _fb_lower_conv_gpu_product      (const FbLowerCtx *c, const FbNode *node,
                                          const FbConvGeom *g);
gboolean _fb_lower_conv_product_gpu      (FbLowerCtx *c, const FbNode *node, const FbConvGeom *g,
                                          GError **error);
/* The Conv member of the group being lowered whose product folds member m, a Mul of its
 * input by one number per input channel (and image), into its weights; NULL when m is not
 * such a Mul or the convolution is no pointwise product. */
const FbNode *_fb_lower_conv_product_gpu_scale_fold (FbLowerCtx *c, const FbNode *m);

G_END_DECLS
