/* SPDX-License-Identifier: GPL-3.0-or-later */
/* exp, tanh, sigmoid and erf as straight-line float arithmetic. A call to expf would keep the
 * loop vectorizer away from every softmax and GELU; these polynomials vectorize, and are
 * accurate to a few ulp (exp: Cody-Waite reduction and a degree-6 polynomial; erf: Abramowitz
 * and Stegun 7.1.26, absolute error below 1.5e-7). Doubles use the library. */
#include "fb-codegen-private.h"

#include <math.h>

static LLVMValueRef
fc (FbEmit *e, LLVMTypeRef t, double v)
{
  (void) e;
  return LLVMConstReal (t, v);
}

static LLVMValueRef
f_mul (FbEmit *e, LLVMValueRef a, LLVMValueRef b)
{
  return LLVMBuildFMul (e->b, a, b, "");
}

static LLVMValueRef
f_add (FbEmit *e, LLVMValueRef a, LLVMValueRef b)
{
  return LLVMBuildFAdd (e->b, a, b, "");
}

static LLVMValueRef
fma_ (FbEmit *e, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
  LLVMValueRef args[3] = { a, b, c };
  return _fb_codegen_intrinsic (e, "llvm.fma", LLVMTypeOf (a), args, 3);
}

static gboolean
is_double (LLVMValueRef x)
{
  return LLVMGetTypeKind (LLVMTypeOf (x)) == LLVMDoubleTypeKind;
}

LLVMValueRef
_fb_codegen_exp (FbEmit *e, LLVMValueRef x)
{
  LLVMTypeRef t = LLVMTypeOf (x);
  if (is_double (x))
    return e->gpu ? _fb_codegen_gpu_exp_f64 (e, x) : _fb_codegen_intrinsic (e, "llvm.exp", t, &x, 1);
  LLVMTypeRef i32 = LLVMInt32TypeInContext (e->ctx);
  /* Clamp into the range where 2^n is a normal float; compares keep NaN flowing through. */
  LLVMValueRef lo = fc (e, t, -87.33654475), hi = fc (e, t, 88.3762626647949);
  LLVMValueRef xc = LLVMBuildSelect (e->b, LLVMBuildFCmp (e->b, LLVMRealOLT, x, lo, ""), lo, x, "");
  xc = LLVMBuildSelect (e->b, LLVMBuildFCmp (e->b, LLVMRealOGT, xc, hi, ""), hi, xc, "");
  LLVMValueRef n = f_mul (e, xc, fc (e, t, 1.44269504088896341));
  n = _fb_codegen_intrinsic (e, "llvm.roundeven", t, &n, 1);
  LLVMValueRef r = fma_ (e, n, fc (e, t, -0.693359375), xc);
  r = fma_ (e, n, fc (e, t, 2.12194440e-4), r);
  LLVMValueRef p = fc (e, t, 1.9875691500e-4);
  p = fma_ (e, p, r, fc (e, t, 1.3981999507e-3));
  p = fma_ (e, p, r, fc (e, t, 8.3334519073e-3));
  p = fma_ (e, p, r, fc (e, t, 4.1665795894e-2));
  p = fma_ (e, p, r, fc (e, t, 1.6666665459e-1));
  p = fma_ (e, p, r, fc (e, t, 5.0000001201e-1));
  LLVMValueRef r2 = f_mul (e, r, r);
  p = fma_ (e, p, r2, f_add (e, r, fc (e, t, 1.0)));
  LLVMValueRef ni = LLVMBuildFPToSI (e->b, n, i32, "");
  LLVMValueRef bits = LLVMBuildShl (e->b, LLVMBuildAdd (e->b, ni, LLVMConstInt (i32, 127, 0), ""),
                                    LLVMConstInt (i32, 23, 0), "");
  LLVMValueRef scale = LLVMBuildBitCast (e->b, bits, t, "");
  LLVMValueRef y = f_mul (e, p, scale);
  /* Beyond the clamps: 0 and infinity, as expf gives. */
  y = LLVMBuildSelect (e->b, LLVMBuildFCmp (e->b, LLVMRealOLT, x, lo, ""), fc (e, t, 0.0), y, "");
  return LLVMBuildSelect (e->b, LLVMBuildFCmp (e->b, LLVMRealOGT, x, fc (e, t, 88.72283935546875), ""),
                          fc (e, t, INFINITY), y, "");
}

LLVMValueRef
_fb_codegen_tanh (FbEmit *e, LLVMValueRef x)
{
  LLVMTypeRef t = LLVMTypeOf (x);
  /* tanh |x| = (1 - e^-2|x|) / (1 + e^-2|x|), with the sign put back. */
  LLVMValueRef ax = _fb_codegen_intrinsic (e, "llvm.fabs", t, &x, 1);
  LLVMValueRef q = _fb_codegen_exp (e, f_mul (e, ax, fc (e, t, -2.0)));
  LLVMValueRef r = LLVMBuildFDiv (e->b, LLVMBuildFSub (e->b, fc (e, t, 1.0), q, ""),
                                  f_add (e, fc (e, t, 1.0), q), "");
  LLVMValueRef args[2] = { r, x };
  return _fb_codegen_intrinsic (e, "llvm.copysign", t, args, 2);
}

LLVMValueRef
_fb_codegen_sigmoid (FbEmit *e, LLVMValueRef x)
{
  LLVMTypeRef t = LLVMTypeOf (x);
  LLVMValueRef q = _fb_codegen_exp (e, LLVMBuildFNeg (e->b, x, ""));
  return LLVMBuildFDiv (e->b, fc (e, t, 1.0), f_add (e, fc (e, t, 1.0), q), "");
}

LLVMValueRef
_fb_codegen_erf (FbEmit *e, LLVMValueRef x)
{
  LLVMTypeRef t = LLVMTypeOf (x);
  if (is_double (x) && e->gpu)
    return _fb_codegen_gpu_erf_f64 (e, x);
  if (is_double (x))
    {
      LLVMTypeRef ft = LLVMFunctionType (t, &t, 1, FALSE);
      LLVMValueRef f = LLVMGetNamedFunction (e->mod, "erf");
      if (f == NULL)
        f = LLVMAddFunction (e->mod, "erf", ft);
      return LLVMBuildCall2 (e->b, ft, f, &x, 1, "");
    }
  LLVMValueRef ax = _fb_codegen_intrinsic (e, "llvm.fabs", t, &x, 1);
  LLVMValueRef tt = LLVMBuildFDiv (e->b, fc (e, t, 1.0), fma_ (e, ax, fc (e, t, 0.3275911), fc (e, t, 1.0)), "");
  LLVMValueRef p = fc (e, t, 1.061405429);
  p = fma_ (e, p, tt, fc (e, t, -1.453152027));
  p = fma_ (e, p, tt, fc (e, t, 1.421413741));
  p = fma_ (e, p, tt, fc (e, t, -0.284496736));
  p = fma_ (e, p, tt, fc (e, t, 0.254829592));
  p = f_mul (e, p, tt);
  LLVMValueRef ex = _fb_codegen_exp (e, LLVMBuildFNeg (e->b, f_mul (e, ax, ax), ""));
  LLVMValueRef y = LLVMBuildFSub (e->b, fc (e, t, 1.0), f_mul (e, p, ex), "");
  LLVMValueRef args[2] = { y, x };
  return _fb_codegen_intrinsic (e, "llvm.copysign", t, args, 2);
}
