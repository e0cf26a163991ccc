/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Elementwise operators as scalar expressions of their inputs' scalars. */
#include "fb-lower-private.h"

#include <math.h>

static FbKExpr *
cf (FbKernel *k, FbDType t, double v)
{
  return fb_kx_const_f (k, t, v);
}

static FbKExpr *
bin (FbKernel *k, FbKBinary op, FbKExpr *a, FbKExpr *b)
{
  return fb_kx_binary (k, op, a, b);
}

/* The type two operands are computed in: ONNX requires them to agree, except that a constant
 * folded to another type (an int64 1 against a float) is converted. */
static FbDType
common_type (FbKExpr *a, FbKExpr *b)
{
  if (a->kind == FB_KX_CONST && b->kind != FB_KX_CONST)
    return b->dtype;
  return a->dtype;
}

static FbKExpr *
pow_expr (FbKernel *k, FbDType t, FbKExpr *x, FbKExpr *e)
{
  double ev;
  if (fb_kx_is_const (e, &ev))
    {
      if (ev == 1.0) return x;
      if (ev == 2.0) return bin (k, FB_KB_MUL, x, x);
      if (ev == 3.0) return bin (k, FB_KB_MUL, bin (k, FB_KB_MUL, x, x), x);
      if (ev == 0.5) return fb_kx_unary (k, FB_KU_SQRT, x);
      if (ev == -1.0) return bin (k, FB_KB_DIV, cf (k, t, 1.0), x);
    }
  if (!fb_dtype_is_float (t))
    {
      /* Integer powers are exact; a GPU's pow is not (9^3 came out 728.99...), so the double
       * result is rounded before it is cut to an integer. */
      FbKExpr *r = bin (k, FB_KB_POW, fb_kx_cast (k, x, FB_DTYPE_FLOAT64),
                        fb_kx_cast (k, e, FB_DTYPE_FLOAT64));
      return fb_kx_cast (k, fb_kx_unary (k, FB_KU_ROUND, r), t);
    }
  return bin (k, FB_KB_POW, x, fb_kx_cast (k, e, t));
}

static FbKExpr *
variadic (FbKernel *k, const FbNode *node, FbKExpr **in, FbKBinary op, FbDType t)
{
  FbKExpr *acc = NULL;
  for (guint j = 0; j < node->n_inputs; j++)
    if (in[j])
      acc = acc ? bin (k, op, acc, fb_kx_cast (k, in[j], t)) : fb_kx_cast (k, in[j], t);
  return acc;
}

FbKExpr *
_fb_lower_scalar_op (FbLowerCtx *c, const FbNode *node, FbKExpr **in, GError **error)
{
  FbKernel *k = c->k;
  FbDType t = node->outputs[0]->dtype;
  FbKExpr *x = in[0];
  FbDType xt = x ? x->dtype : t;

  switch (node->op)
    {
    case FB_OP_IDENTITY: case FB_OP_DROPOUT:
      return x;
    case FB_OP_ABS:
      return fb_dtype_is_signed (t) || fb_dtype_is_float (t) ? fb_kx_unary (k, FB_KU_ABS, x) : x;
    case FB_OP_NEG:
      return fb_kx_unary (k, FB_KU_NEG, x);
    case FB_OP_ADD: case FB_OP_SUB: case FB_OP_MUL: case FB_OP_DIV:
      {
        FbKBinary op = node->op == FB_OP_ADD ? FB_KB_ADD : node->op == FB_OP_SUB ? FB_KB_SUB
                     : node->op == FB_OP_MUL ? FB_KB_MUL : FB_KB_DIV;
        return bin (k, op, fb_kx_cast (k, x, t), fb_kx_cast (k, in[1], t));
      }
    case FB_OP_MOD:
      {
        FbKExpr *a = fb_kx_cast (k, x, t), *b = fb_kx_cast (k, in[1], t);
        if (fb_dtype_is_float (t) || fb_node_attr_int (node, "fmod", 0))
          return bin (k, fb_dtype_is_float (t) ? FB_KB_FMOD : FB_KB_MOD, a, b);
        /* Integer Mod takes the sign of the divisor, as Python's %. */
        FbKExpr *r = bin (k, FB_KB_MOD, a, b);
        FbKExpr *zero = fb_kx_const_i (k, t, 0);
        FbKExpr *fix = bin (k, FB_KB_AND, bin (k, FB_KB_NE, r, zero),
                            bin (k, FB_KB_XOR, bin (k, FB_KB_LT, r, zero),
                                 bin (k, FB_KB_LT, b, zero)));
        return fb_kx_select (k, fix, bin (k, FB_KB_ADD, r, b), r);
      }
    case FB_OP_POW:
      return pow_expr (k, t, fb_kx_cast (k, x, t), in[1]);
    case FB_OP_AND: return bin (k, FB_KB_AND, x, in[1]);
    case FB_OP_OR:  return bin (k, FB_KB_OR, x, in[1]);
    case FB_OP_XOR: return bin (k, FB_KB_XOR, x, in[1]);
    case FB_OP_NOT: return fb_kx_unary (k, FB_KU_NOT, x);
    case FB_OP_EQUAL: case FB_OP_GREATER: case FB_OP_GREATER_OR_EQUAL: case FB_OP_LESS:
    case FB_OP_LESS_OR_EQUAL:
      {
        FbKBinary op = node->op == FB_OP_EQUAL ? FB_KB_EQ : node->op == FB_OP_GREATER ? FB_KB_GT
                     : node->op == FB_OP_GREATER_OR_EQUAL ? FB_KB_GE
                     : node->op == FB_OP_LESS ? FB_KB_LT : FB_KB_LE;
        FbDType ct = common_type (x, in[1]);
        return bin (k, op, fb_kx_cast (k, x, ct), fb_kx_cast (k, in[1], ct));
      }
    case FB_OP_CAST:
      return fb_kx_cast (k, x, t);
    case FB_OP_CEIL:  return fb_kx_unary (k, FB_KU_CEIL, x);
    case FB_OP_FLOOR: return fb_kx_unary (k, FB_KU_FLOOR, x);
    case FB_OP_ROUND: return fb_kx_unary (k, FB_KU_ROUND, x);
    case FB_OP_COS:   return fb_kx_unary (k, FB_KU_COS, x);
    case FB_OP_SIN:   return fb_kx_unary (k, FB_KU_SIN, x);
    case FB_OP_EXP:   return fb_kx_unary (k, FB_KU_EXP, x);
    case FB_OP_LOG:   return fb_kx_unary (k, FB_KU_LOG, x);
    case FB_OP_SQRT:  return fb_kx_unary (k, FB_KU_SQRT, x);
    case FB_OP_TANH:  return fb_kx_unary (k, FB_KU_TANH, x);
    case FB_OP_ERF:   return fb_kx_unary (k, FB_KU_ERF, x);
    case FB_OP_SIGMOID: return fb_kx_unary (k, FB_KU_SIGMOID, x);
    case FB_OP_SWISH:
      {
        double alpha = fb_node_attr_float (node, "alpha", 1.0f);
        FbKExpr *ax = alpha == 1.0 ? x : bin (k, FB_KB_MUL, cf (k, t, alpha), x);
        return bin (k, FB_KB_MUL, x, fb_kx_unary (k, FB_KU_SIGMOID, ax));
      }
    case FB_OP_IS_NAN:
      return fb_dtype_is_float (xt) ? fb_kx_unary (k, FB_KU_ISNAN, x)
                                    : fb_kx_const_i (k, FB_DTYPE_BOOL, 0);
    case FB_OP_RECIPROCAL:
      return bin (k, FB_KB_DIV, cf (k, t, 1.0), x);
    case FB_OP_RELU:
      return bin (k, FB_KB_MAX, x, fb_kx_const_i (k, t, 0));
    case FB_OP_CLIP:
      {
        FbKExpr *lo = NULL, *hi = NULL;
        if (node->opset > 0 && node->opset < 11)
          {
            lo = cf (k, t, fb_node_attr_float (node, "min", -INFINITY));
            hi = cf (k, t, fb_node_attr_float (node, "max", INFINITY));
          }
        else
          {
            lo = node->n_inputs > 1 ? in[1] : NULL;
            hi = node->n_inputs > 2 ? in[2] : NULL;
          }
        FbKExpr *r = x;
        if (lo)
          r = bin (k, FB_KB_MAX, r, fb_kx_cast (k, lo, t));
        if (hi)
          r = bin (k, FB_KB_MIN, r, fb_kx_cast (k, hi, t));
        return r;
      }
    case FB_OP_ELU:
      {
        double alpha = fb_node_attr_float (node, "alpha", 1.0f);
        FbKExpr *neg = bin (k, FB_KB_MUL, cf (k, t, alpha),
                            bin (k, FB_KB_SUB, fb_kx_unary (k, FB_KU_EXP, x), cf (k, t, 1.0)));
        return fb_kx_select (k, bin (k, FB_KB_GT, x, cf (k, t, 0.0)), x, neg);
      }
    case FB_OP_SELU:
      {
        double alpha = fb_node_attr_float (node, "alpha", 1.67326319217681884765625f);
        double gamma = fb_node_attr_float (node, "gamma", 1.05070102214813232421875f);
        FbKExpr *neg = bin (k, FB_KB_SUB, bin (k, FB_KB_MUL, cf (k, t, alpha),
                                               fb_kx_unary (k, FB_KU_EXP, x)), cf (k, t, alpha));
        return bin (k, FB_KB_MUL, cf (k, t, gamma),
                    fb_kx_select (k, bin (k, FB_KB_GT, x, cf (k, t, 0.0)), x, neg));
      }
    case FB_OP_LEAKY_RELU:
      {
        double alpha = fb_node_attr_float (node, "alpha", 0.01f);
        return fb_kx_select (k, bin (k, FB_KB_LT, x, cf (k, t, 0.0)),
                             bin (k, FB_KB_MUL, cf (k, t, alpha), x), x);
      }
    case FB_OP_PRELU:
      return fb_kx_select (k, bin (k, FB_KB_LT, x, cf (k, t, 0.0)),
                           bin (k, FB_KB_MUL, fb_kx_cast (k, in[1], t), x), x);
    case FB_OP_HARD_SIGMOID:
    case FB_OP_HARD_SWISH:
      {
        double alpha = node->op == FB_OP_HARD_SWISH ? 1.0 / 6.0
                                                    : fb_node_attr_float (node, "alpha", 0.2f);
        double beta = node->op == FB_OP_HARD_SWISH ? 0.5 : fb_node_attr_float (node, "beta", 0.5f);
        FbKExpr *h = bin (k, FB_KB_ADD, bin (k, FB_KB_MUL, cf (k, t, alpha), x), cf (k, t, beta));
        h = bin (k, FB_KB_MIN, bin (k, FB_KB_MAX, h, cf (k, t, 0.0)), cf (k, t, 1.0));
        return node->op == FB_OP_HARD_SWISH ? bin (k, FB_KB_MUL, x, h) : h;
      }
    case FB_OP_GELU:
      {
        const char *approx = fb_node_attr_string (node, "approximate", "none");
        FbKExpr *half_x = bin (k, FB_KB_MUL, cf (k, t, 0.5), x);
        FbKExpr *inner;
        if (g_strcmp0 (approx, "tanh") == 0)
          {
            FbKExpr *x3 = bin (k, FB_KB_MUL, bin (k, FB_KB_MUL, x, x), x);
            inner = fb_kx_unary (k, FB_KU_TANH,
                                 bin (k, FB_KB_MUL, cf (k, t, sqrt (2.0 / G_PI)),
                                      bin (k, FB_KB_ADD, x,
                                           bin (k, FB_KB_MUL, cf (k, t, 0.044715), x3))));
          }
        else
          inner = fb_kx_unary (k, FB_KU_ERF, bin (k, FB_KB_MUL, x, cf (k, t, G_SQRT2 / 2.0)));
        return bin (k, FB_KB_MUL, half_x, bin (k, FB_KB_ADD, cf (k, t, 1.0), inner));
      }
    case FB_OP_SIGN:
      {
        FbKExpr *zero = fb_kx_const_i (k, t, 0);
        return fb_kx_select (k, bin (k, FB_KB_GT, x, zero), fb_kx_const_i (k, t, 1),
                             fb_kx_select (k, bin (k, FB_KB_LT, x, zero),
                                           fb_kx_const_i (k, t, -1), zero));
      }
    case FB_OP_SOFTPLUS:
      return fb_kx_unary (k, FB_KU_LOG, bin (k, FB_KB_ADD, fb_kx_unary (k, FB_KU_EXP, x),
                                             cf (k, t, 1.0)));
    case FB_OP_SOFTSIGN:
      return bin (k, FB_KB_DIV, x,
                  bin (k, FB_KB_ADD, cf (k, t, 1.0), fb_kx_unary (k, FB_KU_ABS, x)));
    case FB_OP_WHERE:
      return fb_kx_select (k, fb_kx_cast (k, x, FB_DTYPE_BOOL), fb_kx_cast (k, in[1], t),
                           fb_kx_cast (k, in[2], t));
    case FB_OP_MAX:  return variadic (k, node, in, FB_KB_MAX, t);
    case FB_OP_MIN:  return variadic (k, node, in, FB_KB_MIN, t);
    case FB_OP_SUM:  return variadic (k, node, in, FB_KB_ADD, t);
    case FB_OP_MEAN:
      {
        guint n = 0;
        for (guint j = 0; j < node->n_inputs; j++)
          n += in[j] != NULL;
        return bin (k, FB_KB_DIV, variadic (k, node, in, FB_KB_ADD, t), cf (k, t, n));
      }
    default:
      return _fb_lower_math_op (c, node, in, error);
    }
}
