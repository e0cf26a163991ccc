/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What small integer tensors hold, when the graph computes them from shapes.
 *
 * Exporters rarely write a Reshape's target shape as a constant: they take the Shape of a
 * tensor, Gather an extent, Unsqueeze and Concat it with constants. Following that chain back
 * (a few producers deep, never storing anything) gives the shape inference the numbers, and the
 * symbolic extents ("batch") where the numbers are only known at run time. The walk is a pure
 * function of the graph, so it works as well for one node as for a whole graph. */
#include "fb-infer-private.h"

#include <string.h>

/* Chains longer than this are not followed: real shape arithmetic is a handful of nodes deep.
 * The walk also visits at most MAX_VISITS producers per question, so that a hostile graph of
 * diamonds (x + x, twenty times over) cannot make it exponential. */
#define MAX_DEPTH  24
#define MAX_VISITS 512

typedef struct {
  int depth;
  int visits;     /* left */
} Walk;

static gboolean int_vector (const FbValue *v, FbIntVec *out, Walk *w);

static void
set_known (FbIntVec *iv, int i, int64_t v)
{
  iv->v[i] = v;
  iv->known[i] = TRUE;
  iv->sym[i] = NULL;
}

static void
set_unknown (FbIntVec *iv, int i, const char *sym)
{
  iv->v[i] = 0;
  iv->known[i] = FALSE;
  iv->sym[i] = sym;
}

static gboolean
from_tensor (const FbTensor *t, FbIntVec *out)
{
  if (!fb_dtype_is_integer (t->dtype) && t->dtype != FB_DTYPE_BOOL)
    return FALSE;
  if (t->rank > 1 || t->numel > FB_INT_VEC_MAX)
    return FALSE;
  out->n = (int) t->numel;
  out->scalar = t->rank == 0;
  for (int i = 0; i < out->n; i++)
    set_known (out, i, fb_tensor_get_i64 (t, i));
  return TRUE;
}

static gboolean
from_shape (const FbNode *n, FbIntVec *out)
{
  FbValue *x = fb_node_input (n, 0);
  int64_t r, start, end;

  if (x == NULL || x->shape.rank < 0)
    return FALSE;
  /* The same clamping as the Shape operator's inference. */
  r = x->shape.rank;
  start = fb_node_attr_int (n, "start", 0);
  end = fb_node_attr_int (n, "end", r);
  if (start < 0)
    start = start < -r ? 0 : start + r;
  if (end < 0)
    end = end < -r ? 0 : end + r;
  start = MIN (start, r);
  end = MIN (end, r);
  out->n = 0;
  for (int64_t d = start; d < end; d++, out->n++)
    {
      if (x->shape.dim[d] >= 0)
        set_known (out, out->n, x->shape.dim[d]);
      else
        set_unknown (out, out->n, x->shape.sym[d]);
    }
  return TRUE;
}

static gboolean
from_gather (const FbNode *n, FbIntVec *out, Walk *w)
{
  FbIntVec data, idx;

  if (fb_node_attr_int (n, "axis", 0) != 0 && fb_node_attr_int (n, "axis", 0) != -1)
    return FALSE;
  if (!int_vector (fb_node_input (n, 0), &data, w) || data.scalar ||
      !int_vector (fb_node_input (n, 1), &idx, w))
    return FALSE;
  out->n = idx.n;
  out->scalar = idx.scalar;
  for (int i = 0; i < idx.n; i++)
    {
      int64_t k = idx.v[i];
      if (!idx.known[i] || k < -data.n || k >= data.n)
        return FALSE;
      k = k < 0 ? k + data.n : k;
      out->v[i] = data.v[k];
      out->known[i] = data.known[k];
      out->sym[i] = data.sym[k];
    }
  return TRUE;
}

static gboolean
from_concat (const FbNode *n, FbIntVec *out, Walk *w)
{
  out->n = 0;
  for (guint i = 0; i < n->n_inputs; i++)
    {
      FbIntVec part;
      if (!int_vector (n->inputs[i], &part, w) || out->n + part.n > FB_INT_VEC_MAX)
        return FALSE;
      memcpy (&out->v[out->n], part.v, sizeof (int64_t) * part.n);
      memcpy (&out->known[out->n], part.known, sizeof (gboolean) * part.n);
      memcpy (&out->sym[out->n], part.sym, sizeof (char *) * part.n);
      out->n += part.n;
    }
  return TRUE;
}

/* Reads a Slice parameter (attribute before opset 10, input after) that must be fully known. */
static gboolean
slice_param (const FbNode *n, const char *name, guint input, FbIntVec *out, Walk *w)
{
  if (_fb_infer_opset (n) < 10)
    {
      guint count;
      const int64_t *v = fb_node_attr_ints (n, name, &count);
      if (v == NULL || count > FB_INT_VEC_MAX)
        return FALSE;
      out->n = (int) count;
      for (guint i = 0; i < count; i++)
        set_known (out, i, v[i]);
      return TRUE;
    }
  if (!int_vector (fb_node_input (n, input), out, w))
    return FALSE;
  for (int i = 0; i < out->n; i++)
    if (!out->known[i])
      return FALSE;
  return TRUE;
}

static gboolean
from_slice (const FbNode *n, FbIntVec *out, Walk *w)
{
  FbIntVec data, starts, ends, steps, axes;
  int64_t start, end, step = 1, d, count;

  if (!int_vector (fb_node_input (n, 0), &data, w) || data.scalar ||
      !slice_param (n, "starts", 1, &starts, w) || !slice_param (n, "ends", 2, &ends, w) ||
      starts.n != 1 || ends.n != 1)
    return FALSE;
  /* A vector has one axis: axes, when given, can only name it. */
  if ((fb_node_input (n, 3) != NULL || fb_node_attr (n, "axes") != NULL) &&
      (!slice_param (n, "axes", 3, &axes, w) || axes.n != 1 ||
       (axes.v[0] != 0 && axes.v[0] != -1)))
    return FALSE;
  if (fb_node_input (n, 4) != NULL)
    {
      if (!slice_param (n, "steps", 4, &steps, w) || steps.n != 1 || steps.v[0] == 0)
        return FALSE;
      step = steps.v[0];
    }
  d = data.n;
  start = starts.v[0] < 0 ? MAX (starts.v[0], -d - 1) + d : starts.v[0];
  end = ends.v[0] < 0 ? MAX (ends.v[0], -d - 1) + d : ends.v[0];
  if (step > 0)
    {
      start = CLAMP (start, 0, d);
      end = CLAMP (end, 0, d);
      count = end > start ? (end - start - 1) / step + 1 : 0;
    }
  else if (d > 0)
    {
      start = CLAMP (start, 0, d - 1);
      end = CLAMP (end, -1, d - 1);
      count = start > end ? (start - end - 1) / (step == G_MININT64 ? G_MAXINT64 : -step) + 1 : 0;
    }
  else
    count = 0;
  /* count <= d, so with more than one element |step| < d and the indices stay small. */
  out->n = (int) count;
  out->scalar = FALSE;
  for (int64_t k = 0; k < count; k++)
    {
      int64_t i = start + k * step;
      out->v[k] = data.v[i];
      out->known[k] = data.known[i];
      out->sym[k] = data.sym[i];
    }
  return TRUE;
}

/* Elementwise integer arithmetic with numpy broadcasting of a single element. */
static gboolean
from_arith (const FbNode *n, FbIntVec *out, Walk *w)
{
  FbIntVec a, b;

  if (!int_vector (fb_node_input (n, 0), &a, w) || !int_vector (fb_node_input (n, 1), &b, w))
    return FALSE;
  if (a.n != b.n && a.n != 1 && b.n != 1)
    return FALSE;
  out->n = MAX (a.n, b.n);
  out->scalar = a.scalar && b.scalar;
  for (int i = 0; i < out->n; i++)
    {
      int ia = a.n == 1 ? 0 : i, ib = b.n == 1 ? 0 : i;
      gboolean ka = a.known[ia], kb = b.known[ib];
      int64_t x = a.v[ia], y = b.v[ib], r = 0;
      gboolean ok = ka && kb;

      switch (n->op)
        {
        case FB_OP_ADD: ok = ok && !__builtin_add_overflow (x, y, &r); break;
        case FB_OP_SUB: ok = ok && !__builtin_sub_overflow (x, y, &r); break;
        case FB_OP_MUL: ok = ok && !__builtin_mul_overflow (x, y, &r); break;
        case FB_OP_DIV: ok = ok && y != 0 && !(x == G_MININT64 && y == -1); if (ok) r = x / y; break;
        case FB_OP_EQUAL: r = x == y; break;
        default: g_assert_not_reached ();
        }
      if (ok)
        set_known (out, i, r);
      else if (kb && ((n->op == FB_OP_MUL || n->op == FB_OP_DIV) ? y == 1 : y == 0) &&
               n->op != FB_OP_EQUAL)
        set_unknown (out, i, a.sym[ia]);          /* x * 1, x / 1, x + 0, x - 0 */
      else if (ka && x == (n->op == FB_OP_MUL ? 1 : 0) && n->op != FB_OP_EQUAL &&
               n->op != FB_OP_SUB && n->op != FB_OP_DIV)
        set_unknown (out, i, b.sym[ib]);          /* 1 * y, 0 + y */
      else if (n->op == FB_OP_EQUAL && !ka && !kb && a.sym[ia] != NULL && a.sym[ia] == b.sym[ib])
        set_known (out, i, 1);                    /* a named extent equals itself */
      else
        set_unknown (out, i, NULL);
    }
  return TRUE;
}

static gboolean
from_where (const FbNode *n, FbIntVec *out, Walk *w)
{
  FbIntVec c, x, y;

  if (!int_vector (fb_node_input (n, 0), &c, w) || !int_vector (fb_node_input (n, 1), &x, w) ||
      !int_vector (fb_node_input (n, 2), &y, w))
    return FALSE;
  out->n = MAX (c.n, MAX (x.n, y.n));
  if ((c.n != out->n && c.n != 1) || (x.n != out->n && x.n != 1) || (y.n != out->n && y.n != 1))
    return FALSE;
  out->scalar = c.scalar && x.scalar && y.scalar;
  for (int i = 0; i < out->n; i++)
    {
      int ic = c.n == 1 ? 0 : i, ix = x.n == 1 ? 0 : i, iy = y.n == 1 ? 0 : i;
      const FbIntVec *pick = c.v[ic] ? &x : &y;
      int ip = c.v[ic] ? ix : iy;
      if (!c.known[ic])
        set_unknown (out, i, NULL);
      else
        {
          out->v[i] = pick->v[ip];
          out->known[i] = pick->known[ip];
          out->sym[i] = pick->sym[ip];
        }
    }
  return TRUE;
}

static gboolean
from_constant_of_shape (const FbNode *n, FbIntVec *out, Walk *w)
{
  FbTensor *value = fb_node_attr_tensor (n, "value");
  FbIntVec shape;
  int64_t count = 1;

  if (!int_vector (fb_node_input (n, 0), &shape, w) || shape.n > 1)
    return FALSE;
  if (value != NULL && (value->numel != 1 || (!fb_dtype_is_integer (value->dtype) &&
                                              value->dtype != FB_DTYPE_BOOL)))
    return FALSE;
  if (shape.n == 1)
    {
      if (!shape.known[0] || shape.v[0] < 0 || shape.v[0] > FB_INT_VEC_MAX)
        return FALSE;
      count = shape.v[0];
    }
  out->n = (int) count;
  out->scalar = shape.n == 0;
  for (int i = 0; i < out->n; i++)
    set_known (out, i, value ? fb_tensor_get_i64 (value, 0) : 0);
  return TRUE;
}

static gboolean
from_producer (const FbValue *v, const FbNode *n, FbIntVec *out, Walk *w)
{
  switch (n->op)
    {
    case FB_OP_SHAPE:
      return from_shape (n, out);
    case FB_OP_SIZE:
      {
        FbValue *x = fb_node_input (n, 0);
        int64_t count = x != NULL ? fb_shape_numel (&x->shape, NULL) : -1;
        out->n = 1;
        out->scalar = TRUE;
        if (count >= 0)
          set_known (out, 0, count);
        return TRUE;
      }
    case FB_OP_CAST:
      {
        int64_t to = fb_node_attr_int (n, "to", 0);
        if (to <= 0 || to > G_MAXINT || !(fb_dtype_is_integer ((FbDType) to) || to == FB_DTYPE_BOOL))
          return FALSE;
        if (!int_vector (fb_node_input (n, 0), out, w))
          return FALSE;
        if (to == FB_DTYPE_BOOL)
          for (int i = 0; i < out->n; i++)
            if (out->known[i])
              out->v[i] = out->v[i] != 0;
        return TRUE;
      }
    case FB_OP_IDENTITY:
      return int_vector (fb_node_input (n, 0), out, w);
    case FB_OP_UNSQUEEZE: case FB_OP_SQUEEZE: case FB_OP_RESHAPE: case FB_OP_FLATTEN:
      /* Only rank 0 <-> 1 changes reach here (the value has rank 1 or less). */
      if (!int_vector (fb_node_input (n, 0), out, w) || v->shape.rank < 0)
        return FALSE;
      out->scalar = v->shape.rank == 0;
      return TRUE;
    case FB_OP_GATHER:
      return from_gather (n, out, w);
    case FB_OP_CONCAT:
      return from_concat (n, out, w);
    case FB_OP_SLICE:
      return from_slice (n, out, w);
    case FB_OP_ADD: case FB_OP_SUB: case FB_OP_MUL: case FB_OP_DIV: case FB_OP_EQUAL:
      return from_arith (n, out, w);
    case FB_OP_WHERE:
      return from_where (n, out, w);
    case FB_OP_CONSTANT_OF_SHAPE:
      return from_constant_of_shape (n, out, w);
    case FB_OP_CONSTANT:
      {
        /* Normally the importer gives a Constant's output its value; a pass may not have. */
        FbTensor *t = fb_node_attr_tensor (n, "value");
        return t != NULL && from_tensor (t, out);
      }
    default:
      return FALSE;
    }
}

static gboolean
int_vector (const FbValue *v, FbIntVec *out, Walk *w)
{
  gboolean ok;

  memset (out, 0, sizeof *out);
  if (v == NULL)
    return FALSE;
  if (v->constant != NULL)
    return from_tensor (v->constant, out);
  if (v->producer == NULL || v->producer_output != 0 || v->shape.rank > 1 ||
      w->depth >= MAX_DEPTH || w->visits <= 0)
    return FALSE;
  w->visits--;
  w->depth++;
  ok = from_producer (v, v->producer, out, w);
  w->depth--;
  return ok;
}

gboolean
_fb_infer_int_vector (const FbNode *node, guint i, FbIntVec *out)
{
  Walk w = { 0, MAX_VISITS };

  return int_vector (fb_node_input (node, i), out, &w);
}
