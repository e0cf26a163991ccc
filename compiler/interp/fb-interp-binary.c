/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Elementwise operators of two or more inputs with numpy broadcasting: arithmetic, comparisons,
 * logic, the variadic Max/Min/Sum/Mean, and Where. Floats compute in double, integers in int64
 * with the wrap-around of their type; integer division by zero is a runtime error. */
#include "fb-interp-private.h"

#include <math.h>
#include <string.h>

static gboolean
is_comparison (FbOpKind op)
{
  return op == FB_OP_EQUAL || op == FB_OP_GREATER || op == FB_OP_GREATER_OR_EQUAL ||
         op == FB_OP_LESS || op == FB_OP_LESS_OR_EQUAL;
}

static gboolean
is_logical (FbOpKind op)
{
  return op == FB_OP_AND || op == FB_OP_OR || op == FB_OP_XOR;
}

static double
float_op (FbOpKind op, double a, double b, gboolean fmod_mode)
{
  switch (op)
    {
    case FB_OP_ADD:   return a + b;
    case FB_OP_SUB:   return a - b;
    case FB_OP_MUL:   return a * b;
    case FB_OP_DIV:   return a / b;
    case FB_OP_POW:   return pow (a, b);
    case FB_OP_PRELU: return a < 0 ? a * b : a;
    case FB_OP_MOD:
      {
        double r = fmod (a, b);
        /* Without fmod the result takes the divisor's sign, as Python's % does. */
        if (!fmod_mode && r != 0 && ((r < 0) != (b < 0)))
          r += b;
        return r;
      }
    case FB_OP_MAX:   return (isnan (a) || isnan (b)) ? NAN : a > b ? a : b;
    case FB_OP_MIN:   return (isnan (a) || isnan (b)) ? NAN : a < b ? a : b;
    case FB_OP_SUM: case FB_OP_MEAN: return a + b;
    case FB_OP_EQUAL: return a == b;
    case FB_OP_GREATER: return a > b;
    case FB_OP_GREATER_OR_EQUAL: return a >= b;
    case FB_OP_LESS: return a < b;
    case FB_OP_LESS_OR_EQUAL: return a <= b;
    default: g_assert_not_reached ();
    }
}

static int64_t
ipow (int64_t base, int64_t e)
{
  uint64_t r = 1, b = (uint64_t) base;

  if (e < 0)
    return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
  while (e > 0)
    {
      if (e & 1)
        r *= b;
      b *= b;
      e >>= 1;
    }
  return (int64_t) r;
}

/* FALSE on division by zero. Unsigned arithmetic keeps overflow defined (it wraps). */
static gboolean
int_op (FbOpKind op, int64_t a, int64_t b, gboolean fmod_mode, int64_t *r)
{
  switch (op)
    {
    case FB_OP_ADD: case FB_OP_SUM: *r = (int64_t) ((uint64_t) a + (uint64_t) b); return TRUE;
    case FB_OP_SUB: *r = (int64_t) ((uint64_t) a - (uint64_t) b); return TRUE;
    case FB_OP_MUL: *r = (int64_t) ((uint64_t) a * (uint64_t) b); return TRUE;
    case FB_OP_DIV:
      if (b == 0)
        return FALSE;
      *r = (b == -1) ? (int64_t) (0 - (uint64_t) a) : a / b;
      return TRUE;
    case FB_OP_MOD:
      if (b == 0)
        return FALSE;
      *r = (b == -1) ? 0 : a % b;
      if (!fmod_mode && *r != 0 && ((*r < 0) != (b < 0)))
        *r += b;
      return TRUE;
    case FB_OP_POW: *r = ipow (a, b); return TRUE;
    case FB_OP_PRELU: *r = a < 0 ? (int64_t) ((uint64_t) a * (uint64_t) b) : a; return TRUE;
    case FB_OP_MAX: *r = a > b ? a : b; return TRUE;
    case FB_OP_MIN: *r = a < b ? a : b; return TRUE;
    case FB_OP_EQUAL: *r = a == b; return TRUE;
    case FB_OP_GREATER: *r = a > b; return TRUE;
    case FB_OP_GREATER_OR_EQUAL: *r = a >= b; return TRUE;
    case FB_OP_LESS: *r = a < b; return TRUE;
    case FB_OP_LESS_OR_EQUAL: *r = a <= b; return TRUE;
    case FB_OP_AND: *r = (a != 0) && (b != 0); return TRUE;
    case FB_OP_OR: *r = (a != 0) || (b != 0); return TRUE;
    case FB_OP_XOR: *r = (a != 0) != (b != 0); return TRUE;
    default: g_assert_not_reached ();
    }
}

/* One broadcast step: a (dims of rank ra) op b -> result with the broadcast dims. The inputs are
 * double arrays when as_float, else int64 arrays; so is the result. */
typedef struct {
  int      rank;
  int64_t  dims[FB_MAX_RANK];
  gpointer data;    /* double* or int64_t* */
} Operand;

static gboolean
combine (const FbNode *node, FbOpKind op, gboolean as_float, Operand *acc, const Operand *b,
         GError **error)
{
  int ranks[2] = { acc->rank, b->rank };
  const int64_t *dims[2] = { acc->dims, b->dims };
  gboolean fmod_mode = fb_node_attr_int (node, "fmod", 0) != 0;
  FbBcast bc;
  gpointer result;

  if (!_fb_bcast_init_dims (&bc, node, 2, ranks, dims, error))
    return FALSE;
  if (as_float)
    {
      const double *x = acc->data, *y = b->data;
      double *r = _fb_interp_alloc (node, bc.numel, sizeof (double), error);
      if (r == NULL)
        return FALSE;
      for (int64_t row = 0; bc.inner > 0 && row < bc.numel / bc.inner; row++)
        {
          int64_t o[2];
          double *rr = r + row * bc.inner;
          _fb_bcast_row (&bc, row, o);
          int64_t sa = bc.rank ? bc.strides[0][bc.rank - 1] : 0;
          int64_t sb = bc.rank ? bc.strides[1][bc.rank - 1] : 0;
          if (op == FB_OP_ADD && sa == 1 && sb == 1)
            for (int64_t j = 0; j < bc.inner; j++)
              rr[j] = x[o[0] + j] + y[o[1] + j];
          else if (op == FB_OP_MUL && sa == 1 && sb == 1)
            for (int64_t j = 0; j < bc.inner; j++)
              rr[j] = x[o[0] + j] * y[o[1] + j];
          else
            for (int64_t j = 0; j < bc.inner; j++)
              rr[j] = float_op (op, x[o[0] + j * sa], y[o[1] + j * sb], fmod_mode);
        }
      result = r;
    }
  else
    {
      const int64_t *x = acc->data, *y = b->data;
      int64_t *r = _fb_interp_alloc (node, bc.numel, sizeof (int64_t), error);
      if (r == NULL)
        return FALSE;
      for (int64_t row = 0; bc.inner > 0 && row < bc.numel / bc.inner; row++)
        {
          int64_t o[2];
          _fb_bcast_row (&bc, row, o);
          int64_t sa = bc.rank ? bc.strides[0][bc.rank - 1] : 0;
          int64_t sb = bc.rank ? bc.strides[1][bc.rank - 1] : 0;
          for (int64_t j = 0; j < bc.inner; j++)
            if (!int_op (op, x[o[0] + j * sa], y[o[1] + j * sb], fmod_mode, &r[row * bc.inner + j]))
              {
                g_free (r);
                return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                        "integer division by zero");
              }
        }
      result = r;
    }
  g_free (acc->data);
  acc->data = result;
  acc->rank = bc.rank;
  memcpy (acc->dims, bc.dims, sizeof bc.dims);
  return TRUE;
}

static void
operand_load (Operand *o, const FbTensor *t, gboolean as_float)
{
  o->rank = t->rank;
  memcpy (o->dims, t->dims, sizeof o->dims);
  o->data = as_float ? (gpointer) _fb_interp_read_f64 (t) : (gpointer) _fb_interp_read_i64 (t);
}

static gboolean
finish (const FbNode *node, FbDType dtype, gboolean as_float, Operand *acc, FbTensor **out,
        GError **error)
{
  FbTensor *y = _fb_interp_new (node, dtype, acc->rank, acc->dims, error);

  if (y != NULL)
    {
      if (as_float)
        _fb_interp_write_f64 (y, acc->data);
      else
        _fb_interp_write_i64 (y, acc->data);
    }
  g_free (acc->data);
  out[0] = y;
  return y != NULL;
}

gboolean
_fb_interp_binary (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                   GError **error)
{
  FbTensor *a = in[0], *b = in[1];
  FbDType out_type;
  gboolean as_float;
  Operand acc, rhs;

  if (is_logical (node->op))
    {
      if (a->dtype != FB_DTYPE_BOOL || b->dtype != FB_DTYPE_BOOL)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                "element types %s and %s are not supported (bool only)",
                                fb_dtype_name (a->dtype), fb_dtype_name (b->dtype));
      as_float = FALSE;
      out_type = FB_DTYPE_BOOL;
    }
  else if (is_comparison (node->op))
    {
      /* Integer operands compare exactly; a float on either side compares as double. */
      as_float = fb_dtype_is_float (a->dtype) || fb_dtype_is_float (b->dtype);
      out_type = FB_DTYPE_BOOL;
    }
  else
    {
      /* Pow's exponent and PRelu's slope may be of another type; the output takes the first
       * input's type. */
      if (node->op != FB_OP_POW && node->op != FB_OP_PRELU && a->dtype != b->dtype)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "inputs have different element types (%s and %s)",
                                fb_dtype_name (a->dtype), fb_dtype_name (b->dtype));
      if (a->dtype == FB_DTYPE_BOOL)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                "element type bool is not supported");
      as_float = fb_dtype_is_float (a->dtype);
      out_type = a->dtype;
      if (node->op == FB_OP_POW && !as_float && fb_dtype_is_float (b->dtype))
        as_float = TRUE;
    }
  operand_load (&acc, a, as_float);
  operand_load (&rhs, b, as_float);
  if (!combine (node, node->op, as_float, &acc, &rhs, error))
    {
      g_free (acc.data);
      g_free (rhs.data);
      return FALSE;
    }
  g_free (rhs.data);
  if (node->op == FB_OP_PRELU && (acc.rank != a->rank ||
                                  memcmp (acc.dims, a->dims, sizeof (int64_t) * a->rank) != 0))
    {
      g_free (acc.data);
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                              "the slope must broadcast to the input's shape");
    }
  return finish (node, out_type, as_float, &acc, out, error);
}

gboolean
_fb_interp_variadic (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                     GError **error)
{
  FbDType dtype = in[0]->dtype;
  gboolean as_float = fb_dtype_is_float (dtype);
  guint count = 0;
  Operand acc;

  if (dtype == FB_DTYPE_BOOL || (node->op == FB_OP_MEAN && !as_float))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "element type %s is not supported", fb_dtype_name (dtype));
  for (guint k = 0; k < node->n_inputs; k++)
    if (in[k] != NULL && in[k]->dtype != dtype)
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                              "inputs have different element types (%s and %s)",
                              fb_dtype_name (dtype), fb_dtype_name (in[k]->dtype));
  operand_load (&acc, in[0], as_float);
  count = 1;
  for (guint k = 1; k < node->n_inputs; k++)
    {
      Operand rhs;
      gboolean ok;
      if (in[k] == NULL)
        continue;
      operand_load (&rhs, in[k], as_float);
      ok = combine (node, node->op, as_float, &acc, &rhs, error);
      g_free (rhs.data);
      if (!ok)
        {
          g_free (acc.data);
          return FALSE;
        }
      count++;
    }
  if (node->op == FB_OP_MEAN)
    {
      double *v = acc.data;
      int64_t n = _fb_interp_prod (acc.dims, 0, acc.rank);
      for (int64_t i = 0; i < n; i++)
        v[i] /= count;
    }
  return finish (node, dtype, as_float, &acc, out, error);
}

gboolean
_fb_interp_where (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                  GError **error)
{
  const FbTensor *ts[3] = { in[0], in[1], in[2] };
  gsize esize = fb_dtype_size (in[1]->dtype);
  const uint8_t *c;
  const char *x, *y;
  char *d;
  FbTensor *r;
  FbBcast bc;

  if (in[0]->dtype != FB_DTYPE_BOOL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the condition must be bool, it is %s", fb_dtype_name (in[0]->dtype));
  if (in[1]->dtype != in[2]->dtype)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "inputs have different element types (%s and %s)",
                            fb_dtype_name (in[1]->dtype), fb_dtype_name (in[2]->dtype));
  if (!_fb_bcast_init (&bc, node, 3, ts, error))
    return FALSE;
  r = _fb_interp_new (node, in[1]->dtype, bc.rank, bc.dims, error);
  if (r == NULL)
    return FALSE;
  /* Pure selection: bytes move, no conversion, any element type. */
  c = fb_tensor_data (in[0]);
  x = fb_tensor_data (in[1]);
  y = fb_tensor_data (in[2]);
  d = fb_tensor_data_mut (r);
  for (int64_t row = 0; bc.inner > 0 && row < bc.numel / bc.inner; row++)
    {
      int64_t o[3];
      int64_t last = bc.rank ? bc.rank - 1 : 0;
      _fb_bcast_row (&bc, row, o);
      for (int64_t j = 0; j < bc.inner; j++)
        {
          int64_t oc = o[0] + (bc.rank ? j * bc.strides[0][last] : 0);
          int64_t ox = o[1] + (bc.rank ? j * bc.strides[1][last] : 0);
          int64_t oy = o[2] + (bc.rank ? j * bc.strides[2][last] : 0);
          memcpy (d + (row * bc.inner + j) * esize, c[oc] ? x + ox * esize : y + oy * esize, esize);
        }
    }
  out[0] = r;
  return TRUE;
}
