/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Data movement as generated loops: each output element is a load at an index computed from
 * its coordinates (affine for Transpose, Slice, Concat, Split; through a loaded index for
 * Gather; with clamps and selects for Pad, Tile, DepthToSpace). Indices read from tensors are
 * clamped into range so that no input, however wrong, makes a kernel read outside a buffer. */
#include "fb-lower-private.h"

#include <string.h>

static FbKExpr *
at (FbLowerCtx *c, const FbValue *v, FbKExpr **coords, GError **error)
{
  return _fb_lower_value_at (c, v, v->constant ? v->constant->rank : v->shape.rank, coords,
                             error);
}

static int
out_dims (const FbNode *node, guint i, int64_t *dims)
{
  int r = 0;
  _fb_lower_dims (node->outputs[i], &r, dims);
  return r;
}

static int
in_dims (const FbNode *node, guint i, int64_t *dims)
{
  int r = 0;
  _fb_lower_dims (node->inputs[i], &r, dims);
  return r;
}

static int64_t
numel_of (int r, const int64_t *d)
{
  int64_t n = 1;
  for (int i = 0; i < r; i++)
    n *= d[i];
  return n;
}

static FbKExpr *
clamp_index (FbKernel *k, FbKExpr *i, int64_t extent)
{
  /* Negative indices count from the end; the rest are clamped into range. */
  i = fb_kx_cast (k, i, FB_DTYPE_INT64);
  i = fb_kx_select (k, fb_kx_binary (k, FB_KB_LT, i, fb_kx_index (k, 0)),
                    fb_kx_add_c (k, i, extent), i);
  return fb_kx_binary (k, FB_KB_MIN, fb_kx_binary (k, FB_KB_MAX, i, fb_kx_index (k, 0)),
                       fb_kx_index (k, extent - 1));
}

gboolean
_fb_lower_slice_starts (const FbNode *node, int rank, const int64_t *in, int64_t *start,
                        int64_t *step, GError **error)
{
  g_autofree int64_t *starts = NULL, *ends = NULL, *axes = NULL, *steps = NULL;
  guint ns = 0, ne = 0, na = 0, nst = 0;
  if (node->opset > 0 && node->opset < 10)
    {
      const int64_t *s = fb_node_attr_ints (node, "starts", &ns);
      const int64_t *a = fb_node_attr_ints (node, "axes", &na);
      starts = g_memdup2 (s, sizeof (int64_t) * MAX (ns, 1));
      axes = g_memdup2 (a, sizeof (int64_t) * MAX (na, 1));
    }
  else if (!_fb_lower_const_ints (node, 1, &starts, &ns, error) ||
           !_fb_lower_const_ints (node, 2, &ends, &ne, error) ||
           !_fb_lower_const_ints (node, 3, &axes, &na, error) ||
           !_fb_lower_const_ints (node, 4, &steps, &nst, error))
    return FALSE;
  for (int d = 0; d < rank; d++)
    {
      start[d] = 0;
      step[d] = 1;
    }
  for (guint i = 0; i < ns; i++)
    {
      int a;
      if (!fb_axis_normalize (na ? axes[i] : (int64_t) i, rank, &a))
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "bad axis");
      int64_t st = nst ? steps[i] : 1, s = starts[i], dim = in[a];
      if (s < 0)
        s += dim;
      start[a] = st > 0 ? CLAMP (s, 0, dim) : CLAMP (s, 0, dim - 1);
      step[a] = st;
    }
  return TRUE;
}

static FbKExpr *
fail_at (GError **error, const FbNode *node, int code, const char *what)
{
  _fb_lower_fail (error, node, code, "%s", what);
  return NULL;
}

/* The input coordinates ic of a reshape (any operator that keeps the elements in their
 * order) at output coordinates oc. Where runs of output dimensions and input dimensions cover
 * the same elements (a split of one dimension, a merge of several), each run maps on its own:
 * a split is affine in the output coordinates, and only a merge divides. */
static void
reshape_coords (FbKernel *k, int orank, const int64_t *od, FbKExpr **oc, int irank,
                const int64_t *id, FbKExpr **ic)
{
  int o = 0, i = 0;
  while (o < orank || i < irank)
    {
      /* The shortest runs [o, o1) and [i, i1) with the same number of elements. */
      int o1 = o, i1 = i;
      int64_t po = 1, pi = 1;
      if (o1 < orank)
        po *= od[o1++];
      if (i1 < irank)
        pi *= id[i1++];
      while (po != pi && (o1 < orank || i1 < irank))
        {
          if ((po < pi && o1 < orank) || i1 >= irank)
            po *= od[o1++];
          else
            pi *= id[i1++];
        }
      FbKExpr *flat = _fb_lower_index (k, o1 - o, od + o, oc + o);
      int64_t stride = 1;
      for (int d = i1 - 1; d >= i; d--)
        {
          FbKExpr *x = stride == 1 ? flat : fb_kx_binary (k, FB_KB_DIV, flat, fb_kx_index (k, stride));
          ic[d] = id[d] == 1 ? fb_kx_index (k, 0)
                : d == i ? x : fb_kx_binary (k, FB_KB_MOD, x, fb_kx_index (k, id[d]));
          stride *= id[d];
        }
      o = o1;
      i = i1;
    }
}

/* The value of node's output (rank orank, oc its coordinates): the element of its input that
 * the operator moves there, read through _fb_lower_value_at, so that an inlined producer is
 * computed in place. */
FbKExpr *
_fb_lower_movement_at (FbLowerCtx *c, const FbNode *node, FbKExpr **oc, GError **error)
{
  FbKernel *k = c->k;
  int64_t od[FB_MAX_RANK], id[FB_MAX_RANK];
  int orank = out_dims (node, 0, od), irank = in_dims (node, 0, id);
  FbKExpr *ic[FB_MAX_RANK + 1];
  const FbValue *x = node->inputs[0];
  FbKExpr *v = NULL;

  switch (node->op)
    {
    case FB_OP_TRANSPOSE:
      {
        guint np = 0;
        const int64_t *perm = fb_node_attr_ints (node, "perm", &np);
        for (int d = 0; d < orank; d++)
          {
            int p = np == (guint) orank ? (int) perm[d] : orank - 1 - d;
            if (p < 0 || p >= irank)
              return fail_at (error, node, FB_LOWER_ERROR_SHAPE, "bad perm");
            ic[p] = oc[d];
          }
        v = at (c, x, ic, error);
        break;
      }
    case FB_OP_EXPAND:
      v = _fb_lower_value_at (c, x, orank, oc, error);
      break;
    case FB_OP_TILE:
      for (int d = 0; d < irank; d++)
        ic[d] = id[d] == od[d] ? oc[d]
              : fb_kx_binary (k, FB_KB_MOD, oc[d], fb_kx_index (k, id[d]));
      v = at (c, x, ic, error);
      break;
    case FB_OP_GATHER:
      {
        int axis;
        if (!fb_axis_normalize (fb_node_attr_int (node, "axis", 0), irank, &axis))
          return fail_at (error, node, FB_LOWER_ERROR_SHAPE, "bad axis");
        const FbValue *iv = node->inputs[1];
        int q = iv->constant ? iv->constant->rank : iv->shape.rank;
        FbKExpr *idx = _fb_lower_value_at (c, iv, q, oc + axis, error);
        if (idx == NULL)
          return NULL;
        for (int d = 0; d < axis; d++)
          ic[d] = oc[d];
        ic[axis] = clamp_index (k, idx, id[axis]);
        for (int d = axis + 1; d < irank; d++)
          ic[d] = oc[d - 1 + q];
        v = at (c, x, ic, error);
        break;
      }
    case FB_OP_GATHER_ELEMENTS:
      {
        int axis;
        if (!fb_axis_normalize (fb_node_attr_int (node, "axis", 0), irank, &axis))
          return fail_at (error, node, FB_LOWER_ERROR_SHAPE, "bad axis");
        FbKExpr *idx = at (c, node->inputs[1], oc, error);
        if (idx == NULL)
          return NULL;
        memcpy (ic, oc, sizeof (FbKExpr *) * irank);
        ic[axis] = clamp_index (k, idx, id[axis]);
        v = at (c, x, ic, error);
        break;
      }
    case FB_OP_SLICE:
      {
        int64_t start[FB_MAX_RANK], step[FB_MAX_RANK];
        if (!_fb_lower_slice_starts (node, irank, id, start, step, error))
          return NULL;
        for (int d = 0; d < irank; d++)
          ic[d] = start[d] == 0 && step[d] == 1 ? oc[d]
                : fb_kx_add_c (k, fb_kx_mul_c (k, oc[d], step[d]), start[d]);
        v = at (c, x, ic, error);
        break;
      }
    case FB_OP_PAD:
      {
        g_autofree int64_t *pads = NULL, *axes = NULL;
        guint np = 0, na = 0;
        const char *mode = fb_node_attr_string (node, "mode", "constant");
        FbKExpr *fill = fb_kx_const_f (k, x->dtype, 0.0);
        if (node->opset > 0 && node->opset < 11)
          {
            const int64_t *p = fb_node_attr_ints (node, "pads", &np);
            pads = g_memdup2 (p, sizeof (int64_t) * MAX (np, 1));
            fill = fb_kx_const_f (k, x->dtype, fb_node_attr_float (node, "value", 0.0f));
          }
        else
          {
            if (!_fb_lower_const_ints (node, 1, &pads, &np, error) ||
                !_fb_lower_const_ints (node, 3, &axes, &na, error))
              return NULL;
            const FbValue *cv = fb_node_input (node, 2);
            if (cv)
              {
                fill = _fb_lower_value_at (c, cv, 0, NULL, error);
                if (fill == NULL)
                  return NULL;
              }
          }
        int64_t before[FB_MAX_RANK] = { 0 };
        guint n_ax = na ? na : (guint) irank;
        if (np != 2 * n_ax)
          return fail_at (error, node, FB_LOWER_ERROR_SHAPE, "bad pads");
        for (guint i = 0; i < n_ax; i++)
          {
            int a;
            if (!fb_axis_normalize (na ? axes[i] : (int64_t) i, irank, &a))
              return fail_at (error, node, FB_LOWER_ERROR_SHAPE, "bad axis");
            before[a] = pads[i];
          }
        FbKExpr *inside = fb_kx_const_i (k, FB_DTYPE_BOOL, 1);
        for (int d = 0; d < irank; d++)
          {
            FbKExpr *i = fb_kx_add_c (k, oc[d], -before[d]);
            if (g_str_equal (mode, "reflect") && id[d] > 1)
              {
                i = fb_kx_unary (k, FB_KU_ABS, i);
                FbKExpr *over = fb_kx_binary (k, FB_KB_SUB, fb_kx_index (k, 2 * (id[d] - 1)), i);
                i = fb_kx_select (k, fb_kx_binary (k, FB_KB_GE, i, fb_kx_index (k, id[d])), over, i);
              }
            else if (g_str_equal (mode, "constant"))
              inside = fb_kx_binary (k, FB_KB_AND, inside,
                                     fb_kx_binary (k, FB_KB_AND,
                                                   fb_kx_binary (k, FB_KB_GE, i, fb_kx_index (k, 0)),
                                                   fb_kx_binary (k, FB_KB_LT, i, fb_kx_index (k, id[d]))));
            ic[d] = fb_kx_binary (k, FB_KB_MIN, fb_kx_binary (k, FB_KB_MAX, i, fb_kx_index (k, 0)),
                                  fb_kx_index (k, id[d] - 1));
          }
        v = at (c, x, ic, error);
        if (v && g_str_equal (mode, "constant"))
          v = fb_kx_select (k, inside, v, fb_kx_cast (k, fill, v->dtype));
        break;
      }
    case FB_OP_DEPTH_TO_SPACE:
    case FB_OP_SPACE_TO_DEPTH:
      {
        int64_t b = fb_node_attr_int (node, "blocksize", 1);
        if (irank != 4 || b < 1)
          return fail_at (error, node, FB_LOWER_ERROR_UNSUPPORTED, "needs rank 4");
        FbKExpr *bb = fb_kx_index (k, b);
        ic[0] = oc[0];
        if (node->op == FB_OP_DEPTH_TO_SPACE)
          {
            gboolean crd = g_strcmp0 (fb_node_attr_string (node, "mode", "DCR"), "CRD") == 0;
            FbKExpr *bh = fb_kx_binary (k, FB_KB_MOD, oc[2], bb), *bw = fb_kx_binary (k, FB_KB_MOD, oc[3], bb);
            FbKExpr *blk = fb_kx_add (k, fb_kx_mul_c (k, bh, b), bw);
            ic[1] = crd ? fb_kx_add (k, fb_kx_mul_c (k, oc[1], b * b), blk)
                        : fb_kx_add (k, fb_kx_mul_c (k, blk, od[1]), oc[1]);
            ic[2] = fb_kx_binary (k, FB_KB_DIV, oc[2], bb);
            ic[3] = fb_kx_binary (k, FB_KB_DIV, oc[3], bb);
          }
        else
          {
            /* out channel = (bh * b + bw) * C + c */
            FbKExpr *blk = fb_kx_binary (k, FB_KB_DIV, oc[1], fb_kx_index (k, id[1]));
            ic[1] = fb_kx_binary (k, FB_KB_MOD, oc[1], fb_kx_index (k, id[1]));
            ic[2] = fb_kx_add (k, fb_kx_mul_c (k, oc[2], b), fb_kx_binary (k, FB_KB_DIV, blk, bb));
            ic[3] = fb_kx_add (k, fb_kx_mul_c (k, oc[3], b), fb_kx_binary (k, FB_KB_MOD, blk, bb));
          }
        v = at (c, x, ic, error);
        break;
      }
    case FB_OP_TRILU:
      {
        int64_t kk = 0;
        const FbValue *kv = fb_node_input (node, 1);
        if (kv)
          {
            if (kv->constant == NULL)
              return fail_at (error, node, FB_LOWER_ERROR_UNSUPPORTED, "k must be constant");
            kk = fb_tensor_get_i64 (kv->constant, 0);
          }
        v = at (c, x, oc, error);
        if (v == NULL)
          return NULL;
        FbKExpr *diff = fb_kx_binary (k, FB_KB_SUB, oc[orank - 1], oc[orank - 2]);
        FbKExpr *keep = fb_node_attr_int (node, "upper", 1)
          ? fb_kx_binary (k, FB_KB_GE, diff, fb_kx_index (k, kk))
          : fb_kx_binary (k, FB_KB_LE, diff, fb_kx_index (k, kk));
        v = fb_kx_select (k, keep, v, fb_kx_const_i (k, v->dtype, 0));
        break;
      }
    case FB_OP_CONSTANT_OF_SHAPE:
      {
        FbTensor *t = fb_node_attr_tensor (node, "value");
        FbDType dt = node->outputs[0]->dtype;
        v = t ? (fb_dtype_is_float (t->dtype) ? fb_kx_const_f (k, dt, fb_tensor_get_f64 (t, 0))
                                              : fb_kx_const_i (k, dt, fb_tensor_get_i64 (t, 0)))
              : fb_kx_const_f (k, dt, 0.0);
        break;
      }
    case FB_OP_RANGE:
      {
        FbKExpr *s = _fb_lower_value_at (c, node->inputs[0], 0, NULL, error);
        FbKExpr *d = _fb_lower_value_at (c, node->inputs[2], 0, NULL, error);
        if (s == NULL || d == NULL)
          return NULL;
        FbDType dt = node->outputs[0]->dtype;
        v = fb_kx_binary (k, FB_KB_ADD, s, fb_kx_binary (k, FB_KB_MUL, fb_kx_cast (k, oc[0], dt), d));
        break;
      }
    default:
      /* Reshape-like members of a fused group: the same elements in the same order. */
      reshape_coords (k, orank, od, oc, irank, id, ic);
      v = at (c, x, ic, error);
      break;
    }
  return v;
}

static gboolean
lower_simple (FbLowerCtx *c, const FbNode *node, GError **error)
{
  int64_t od[FB_MAX_RANK];
  int orank = out_dims (node, 0, od);
  FbKExpr *oc[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_nest (c, orank, od, oc, (double) numel_of (orank, od));
  FbKExpr *v = _fb_lower_movement_at (c, node, oc, error);
  return v != NULL && _fb_lower_store (c, body, node->outputs[0], oc, v, error);
}


/* A Concat along an inner axis (channels-last: the channels of every pixel) as one phase:
 * the loops before the axis are shared, and within one step of them every input copies its
 * run in turn, so each output row is written front to back by one thread in one pass. One
 * phase per input instead wrote each row in as many strided passes, each its own dispatch
 * across the threads (an inception module's Concat of four branches: four). */
static gboolean
lower_concat_rows (FbLowerCtx *c, const FbNode *node, int rank, const int64_t *whole, int axis,
                   GError **error)
{
  FbKernel *k = c->k;
  FbKExpr *oc[FB_MAX_RANK];
  GPtrArray *outer = _fb_lower_nest (c, axis, whole, oc, (double) numel_of (rank, whole));
  int64_t offset = 0;
  for (guint j = 0; j < node->n_inputs; j++)
    {
      const FbValue *piece = node->inputs[j];
      int64_t pd[FB_MAX_RANK];
      int pr;
      if (piece == NULL)
        continue;
      _fb_lower_dims (piece, &pr, pd);
      if (numel_of (pr, pd) == 0)
        continue;
      FbKExpr *pc[FB_MAX_RANK], *wc[FB_MAX_RANK];
      GPtrArray *body = outer;
      for (int d = 0; d < rank; d++)
        {
          if (d < axis)
            pc[d] = oc[d];
          else if (pd[d] == 1)
            pc[d] = fb_kx_index (k, 0);
          else
            body = _fb_lower_loop (k, body, fb_kx_index (k, pd[d]), &pc[d]);
        }
      memcpy (wc, pc, sizeof wc);
      wc[axis] = fb_kx_add_c (k, pc[axis], offset);
      FbKExpr *v = at (c, piece, pc, error);
      if (v == NULL || !_fb_lower_store (c, body, node->outputs[0], wc, v, error))
        return FALSE;
      offset += pd[axis];
    }
  return TRUE;
}

/* Concat and Split: one phase per piece, each writing or reading its slab at an offset along
 * the axis; on a CPU, a Concat with enough rows before its axis to share among threads is one
 * phase (lower_concat_rows). Not on a GPU: that phase's threads are its rows, and a row is a
 * long serial copy (DenseNet-121 at batch 32: 32 threads copying 25 MB, 0.19 ms a Concat);
 * a phase per piece gives every element a thread. */
static gboolean
lower_pieces (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  gboolean concat = node->op == FB_OP_CONCAT;
  int64_t whole[FB_MAX_RANK];
  int rank = concat ? out_dims (node, 0, whole) : in_dims (node, 0, whole);
  int axis;
  if (!fb_axis_normalize (fb_node_attr_int (node, "axis", 0), rank, &axis))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "bad axis");
  if (concat && numel_of (axis, whole) >= 16 && !_fb_lower_for_gpu (c))
    return lower_concat_rows (c, node, rank, whole, axis, error);
  int64_t offset = 0;
  guint n = concat ? node->n_inputs : node->n_outputs;
  for (guint j = 0; j < n; j++)
    {
      const FbValue *piece = concat ? node->inputs[j] : node->outputs[j];
      int64_t pd[FB_MAX_RANK];
      int pr;
      if (piece == NULL)
        continue;
      _fb_lower_dims (piece, &pr, pd);
      if (numel_of (pr, pd) == 0)
        continue;
      FbKExpr *pc[FB_MAX_RANK], *wc[FB_MAX_RANK];
      GPtrArray *body = _fb_lower_nest (c, pr, pd, pc, (double) numel_of (pr, pd));
      memcpy (wc, pc, sizeof wc);
      wc[axis] = fb_kx_add_c (k, pc[axis], offset);
      if (concat)
        {
          FbKExpr *v = at (c, piece, pc, error);
          if (v == NULL || !_fb_lower_store (c, body, node->outputs[0], wc, v, error))
            return FALSE;
        }
      else
        {
          FbKExpr *v = at (c, node->inputs[0], wc, error);
          if (v == NULL || !_fb_lower_store (c, body, piece, pc, v, error))
            return FALSE;
        }
      offset += pd[axis];
    }
  return TRUE;
}

static gboolean
lower_cumsum (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  int64_t dims[FB_MAX_RANK];
  int rank = in_dims (node, 0, dims), axis;
  const FbValue *av = node->inputs[1];
  if (av->constant == NULL)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "axis must be constant");
  if (!fb_axis_normalize (fb_tensor_get_i64 (av->constant, 0), rank, &axis))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "bad axis");
  gboolean exclusive = fb_node_attr_int (node, "exclusive", 0);
  gboolean reverse = fb_node_attr_int (node, "reverse", 0);
  FbKExpr *coords[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_kept_nest (c, rank, dims, 1u << axis, coords,
                                         (double) numel_of (rank, dims));
  FbDType t = node->outputs[0]->dtype;
  guint acc = fb_kernel_new_acc (k, t);
  g_ptr_array_add (body, fb_ks_assign (k, acc, fb_kx_const_i (k, t, 0)));
  FbKExpr *i;
  GPtrArray *l = _fb_lower_loop (k, body, fb_kx_index (k, dims[axis]), &i);
  coords[axis] = reverse ? fb_kx_binary (k, FB_KB_SUB, fb_kx_index (k, dims[axis] - 1), i) : i;
  FbKExpr *v = at (c, node->inputs[0], coords, error);
  if (v == NULL)
    return FALSE;
  FbKExpr *sum = fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, acc), fb_kx_cast (k, v, t));
  if (exclusive)
    {
      if (!_fb_lower_store (c, l, node->outputs[0], coords, fb_kx_acc (k, acc), error))
        return FALSE;
      g_ptr_array_add (l, fb_ks_assign (k, acc, sum));
      return TRUE;
    }
  g_ptr_array_add (l, fb_ks_assign (k, acc, sum));
  return _fb_lower_store (c, l, node->outputs[0], coords, fb_kx_acc (k, acc), error);
}

/* A Transpose whose output's innermost dimension is short (a channels-first image turned
 * channels-last: 3 colours) and whose input's innermost dimension is long: looping over the
 * output in order would run the short dimension innermost, one scattered load per element.
 * Instead the input's innermost dimension is the innermost loop and the short one is written
 * out in full for each of its positions: contiguous loads, interleaved stores, which LLVM
 * vectorizes (twenty times faster on MobileNetV2's input). FALSE when the shape is not so. */
static gboolean
lower_transpose_interleaved (FbLowerCtx *c, const FbNode *node, gboolean *done, GError **error)
{
  FbKernel *k = c->k;
  int64_t od[FB_MAX_RANK], id[FB_MAX_RANK];
  int orank = out_dims (node, 0, od), irank = in_dims (node, 0, id);
  guint np = 0;
  const int64_t *perm = fb_node_attr_ints (node, "perm", &np);
  *done = FALSE;
  if (orank < 2 || orank != irank || np != (guint) orank)
    return TRUE;
  int a = orank - 1, b = -1;
  for (int d = 0; d < orank; d++)
    {
      if (perm[d] < 0 || perm[d] >= irank)
        return TRUE;
      if (perm[d] == irank - 1)
        b = d;
    }
  if (b < 0 || b == a || od[a] < 2 || od[a] > 8 || od[b] < 16)
    return TRUE;
  /* Loops: the output's dimensions but a, in order, b moved innermost. */
  int order[FB_MAX_RANK], n = 0;
  int64_t ld[FB_MAX_RANK];
  for (int d = 0; d < orank; d++)
    if (d != a && d != b)
      order[n++] = d;
  order[n++] = b;
  for (int i = 0; i < n; i++)
    ld[i] = od[order[i]];
  FbKExpr *lc[FB_MAX_RANK], *oc[FB_MAX_RANK], *ic[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_nest (c, n, ld, lc, (double) numel_of (orank, od));
  for (int i = 0; i < n; i++)
    oc[order[i]] = lc[i];
  for (int64_t j = 0; j < od[a]; j++)
    {
      oc[a] = fb_kx_index (k, j);
      for (int d = 0; d < orank; d++)
        ic[perm[d]] = oc[d];
      FbKExpr *v = at (c, node->inputs[0], ic, error);
      if (v == NULL || !_fb_lower_store (c, body, node->outputs[0], oc, v, error))
        return FALSE;
    }
  *done = TRUE;
  return TRUE;
}

/* Tile side of a blocked transpose: 16 floats are one 64-byte cache line. */
#define TILE 16

/* A Transpose that moves the input's innermost dimension (at output position b) away from the
 * output's innermost (a), both long: the plain nest writes the output in order and reads the
 * input with a stride, touching a new input cache line for every element and using 4 bytes of
 * it before it is evicted on a large map (a 1x256x160x160 NCHW to NHWC moved 0.6 GB/s). In
 * TILE x TILE blocks over (b, a) every input line read along b and every output line written
 * along a is used whole while the block sits in L1. Edge blocks are cut to what is left. FALSE
 * in *done when the shape is not so. */
static gboolean
lower_transpose_blocked (FbLowerCtx *c, const FbNode *node, gboolean *done, GError **error)
{
  FbKernel *k = c->k;
  int64_t od[FB_MAX_RANK], id[FB_MAX_RANK];
  int orank = out_dims (node, 0, od), irank = in_dims (node, 0, id);
  guint np = 0;
  const int64_t *perm = fb_node_attr_ints (node, "perm", &np);
  *done = FALSE;
  if (orank < 2 || orank != irank || np != (guint) orank)
    return TRUE;
  int a = orank - 1, b = -1;
  for (int d = 0; d < orank; d++)
    {
      if (perm[d] < 0 || perm[d] >= irank)
        return TRUE;
      if (perm[d] == irank - 1)
        b = d;
    }
  if (b < 0 || b == a || od[a] < TILE || od[b] < TILE)
    return TRUE;
  /* Loops: the output's other dimensions in order, then the tiles of b and a, then the
   * positions inside a tile, a innermost. */
  int64_t ld[FB_MAX_RANK + 2];
  int order[FB_MAX_RANK], n = 0;
  for (int d = 0; d < orank; d++)
    if (d != a && d != b)
      order[n++] = d;
  for (int i = 0; i < n; i++)
    ld[i] = od[order[i]];
  ld[n] = (od[b] + TILE - 1) / TILE;
  ld[n + 1] = (od[a] + TILE - 1) / TILE;
  FbKExpr *lc[FB_MAX_RANK + 2], *oc[FB_MAX_RANK], *ic[FB_MAX_RANK], *ib, *ia;
  GPtrArray *body = _fb_lower_nest (c, n + 2, ld, lc, (double) numel_of (orank, od));
  for (int i = 0; i < n; i++)
    oc[order[i]] = lc[i];
  FbKExpr *base_b = fb_kx_mul_c (k, lc[n], TILE), *base_a = fb_kx_mul_c (k, lc[n + 1], TILE);
  FbKExpr *ext_b = od[b] % TILE == 0 ? fb_kx_index (k, TILE)
    : fb_kx_binary (k, FB_KB_MIN, fb_kx_index (k, TILE),
                    fb_kx_binary (k, FB_KB_SUB, fb_kx_index (k, od[b]), base_b));
  FbKExpr *ext_a = od[a] % TILE == 0 ? fb_kx_index (k, TILE)
    : fb_kx_binary (k, FB_KB_MIN, fb_kx_index (k, TILE),
                    fb_kx_binary (k, FB_KB_SUB, fb_kx_index (k, od[a]), base_a));
  body = _fb_lower_loop (k, body, ext_b, &ib);
  body = _fb_lower_loop (k, body, ext_a, &ia);
  oc[b] = fb_kx_add (k, base_b, ib);
  oc[a] = fb_kx_add (k, base_a, ia);
  for (int d = 0; d < orank; d++)
    ic[perm[d]] = oc[d];
  FbKExpr *v = at (c, node->inputs[0], ic, error);
  if (v == NULL || !_fb_lower_store (c, body, node->outputs[0], oc, v, error))
    return FALSE;
  *done = TRUE;
  return TRUE;
}

gboolean
_fb_lower_movement (FbLowerCtx *c, const FbNode *node, GError **error)
{
  /* Both forms are for one CPU thread walking cache lines; on a GPU they become a serial loop of
   * a tile per thread (BERT's attention transposes ran at 12 GB/s), where the plain nest is one
   * element per thread with the writes coalesced. */
  /* They load the input as stored: an input computed in place (a fused group's inlined
   * member) goes through the plain nest. */
  if (node->op == FB_OP_TRANSPOSE && !_fb_lower_for_gpu (c) &&
      !g_hash_table_contains (c->inline_of, node->inputs[0]))
    {
      gboolean done;
      if (!lower_transpose_interleaved (c, node, &done, error))
        return FALSE;
      if (!done && !lower_transpose_blocked (c, node, &done, error))
        return FALSE;
      if (done)
        return TRUE;
    }
  switch (node->op)
    {
    case FB_OP_CONCAT:
    case FB_OP_SPLIT:
      return lower_pieces (c, node, error);
    case FB_OP_CUMSUM:
      return lower_cumsum (c, node, error);
    default:
      return lower_simple (c, node, error);
    }
}
