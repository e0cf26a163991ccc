/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Math for the NVPTX kernels. A GPU has no libm: llvm.log, llvm.sin, llvm.pow and the double
 * llvm.exp become calls NVPTX cannot resolve, and libdevice is a CUDA toolkit file this project
 * does not depend on. These are straight-line arithmetic instead, for float and double alike
 * (the float exp, tanh, sigmoid and erf are the CPU's own, fb-codegen-math.c):
 *
 * - log: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh((m-1)/(m+1)) as its odd
 *   series (5 terms for float, 11 for double, truncation below half an ulp); subnormals are
 *   scaled up first.
 * - sin, cos: reduction by pi/2 in three fused multiply-adds (Cody-Waite), then the Taylor
 *   polynomials on [-pi/4, pi/4]. Accurate while |x| n ulp stays small (|x| < 1e5 or so); there
 *   is no Payne-Hanek reduction for huge arguments.
 * - double exp: the same reduction as the float one with a degree-11 polynomial; 2^n is applied
 *   in two halves so that results near the overflow and subnormal ends are right.
 * - double erf: its Taylor series below 2 (33 terms) and the continued fraction of erfc above
 *   (30 levels), 1 beyond 6; relative error about 1e-15.
 * - pow: exp (y log |x|) with the C library's special cases (negative x with integer y, zero,
 *   y = 0, x = 1). The error grows with |y log x| (float: 4e-6 relative at 1e30). */
#include "fb-codegen-private.h"

#include <math.h>

typedef struct {
  FbEmit      *e;
  LLVMTypeRef  t;               /* float or double */
  LLVMTypeRef  it;              /* the integer of the same width */
  gboolean     dbl;
} M;

static M
m_for (FbEmit *e, LLVMValueRef x)
{
  M m = { .e = e, .t = LLVMTypeOf (x) };
  m.dbl = LLVMGetTypeKind (m.t) == LLVMDoubleTypeKind;
  m.it = m.dbl ? LLVMInt64TypeInContext (e->ctx) : LLVMInt32TypeInContext (e->ctx);
  return m;
}

static LLVMValueRef c (M *m, double v) { return LLVMConstReal (m->t, v); }
static LLVMValueRef ci (M *m, long long v) { return LLVMConstInt (m->it, (unsigned long long) v, 1); }
static LLVMValueRef mul (M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul (m->e->b, a, b, ""); }
static LLVMValueRef add (M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd (m->e->b, a, b, ""); }
static LLVMValueRef sub (M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub (m->e->b, a, b, ""); }
static LLVMValueRef f_div (M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFDiv (m->e->b, a, b, ""); }

static LLVMValueRef
fma3 (M *m, LLVMValueRef a, LLVMValueRef b, LLVMValueRef d)
{
  LLVMValueRef args[3] = { a, b, d };
  return _fb_codegen_intrinsic (m->e, "llvm.fma", m->t, args, 3);
}

static LLVMValueRef
un (M *m, const char *name, LLVMValueRef a)
{
  return _fb_codegen_intrinsic (m->e, name, m->t, &a, 1);
}

static LLVMValueRef
cmp (M *m, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b)
{
  return LLVMBuildFCmp (m->e->b, p, a, b, "");
}

static LLVMValueRef
sel (M *m, LLVMValueRef cond, LLVMValueRef a, LLVMValueRef b)
{
  return LLVMBuildSelect (m->e->b, cond, a, b, "");
}

/* Horner over coefficients k[0] + k[1] z + ... + k[n-1] z^(n-1). */
static LLVMValueRef
poly (M *m, LLVMValueRef z, const double *k, int n)
{
  LLVMValueRef p = c (m, k[n - 1]);
  for (int i = n - 2; i >= 0; i--)
    p = fma3 (m, p, z, c (m, k[i]));
  return p;
}

/* A float of the integer n (which fits the exponent): 2^n built from its bits. */
static LLVMValueRef
pow2i (M *m, LLVMValueRef n)
{
  int mant = m->dbl ? 52 : 23, bias = m->dbl ? 1023 : 127;
  LLVMValueRef bits = LLVMBuildShl (m->e->b, LLVMBuildAdd (m->e->b, n, ci (m, bias), ""),
                                    ci (m, mant), "");
  return LLVMBuildBitCast (m->e->b, bits, m->t, "");
}

static LLVMValueRef
to_int_sat (M *m, LLVMValueRef x)
{
  unsigned id = LLVMLookupIntrinsicID ("llvm.fptosi.sat", 15);
  LLVMTypeRef tys[2] = { m->it, m->t };
  LLVMValueRef f = LLVMGetIntrinsicDeclaration (m->e->mod, id, tys, 2);
  return LLVMBuildCall2 (m->e->b, LLVMIntrinsicGetType (m->e->ctx, id, tys, 2), f, &x, 1, "");
}

LLVMValueRef
_fb_codegen_gpu_log (FbEmit *e, LLVMValueRef x)
{
  M m = m_for (e, x);
  LLVMBuilderRef b = e->b;
  int mant = m.dbl ? 52 : 23, bias = m.dbl ? 1023 : 127, scale_bits = m.dbl ? 54 : 24;
  /* Subnormals: scaled into the normal range, the exponent corrected after. */
  LLVMValueRef tiny = cmp (&m, LLVMRealOLT, x, c (&m, m.dbl ? 2.2250738585072014e-308 : 1.17549435e-38));
  LLVMValueRef xs = sel (&m, tiny, mul (&m, x, c (&m, ldexp (1.0, scale_bits))), x);
  LLVMValueRef bits = LLVMBuildBitCast (b, xs, m.it, "");
  LLVMValueRef ex = LLVMBuildSub (b, LLVMBuildLShr (b, bits, ci (&m, mant), ""), ci (&m, bias), "");
  ex = LLVMBuildSub (b, ex, LLVMBuildSelect (b, tiny, ci (&m, scale_bits), ci (&m, 0), ""), "");
  long long mant_mask = (1LL << mant) - 1;
  LLVMValueRef mbits = LLVMBuildOr (b, LLVMBuildAnd (b, bits, ci (&m, mant_mask), ""),
                                    ci (&m, (long long) bias << mant), "");
  LLVMValueRef mm = LLVMBuildBitCast (b, mbits, m.t, "");      /* in [1, 2) */
  LLVMValueRef big = cmp (&m, LLVMRealOGT, mm, c (&m, M_SQRT2));
  mm = sel (&m, big, mul (&m, mm, c (&m, 0.5)), mm);
  ex = LLVMBuildAdd (b, ex, LLVMBuildZExt (b, big, m.it, ""), "");
  LLVMValueRef s = f_div (&m, sub (&m, mm, c (&m, 1.0)), add (&m, mm, c (&m, 1.0)));
  LLVMValueRef s2 = mul (&m, s, s);
  double k[11];
  int n = m.dbl ? 11 : 5;
  for (int i = 0; i < n; i++)
    k[i] = 2.0 / (2 * i + 1);
  LLVMValueRef lm = mul (&m, s, poly (&m, s2, k, n));
  LLVMValueRef ef = LLVMBuildSIToFP (b, ex, m.t, "");
  LLVMValueRef r = fma3 (&m, ef, c (&m, m.dbl ? 0.6931471805599453 : 0.693147182464599609375),
                         fma3 (&m, ef, c (&m, m.dbl ? 2.3190468138462996e-17 : -1.904654323148236e-09), lm));
  /* log 0 = -inf, log of a negative or NaN = NaN, log inf = inf. */
  r = sel (&m, cmp (&m, LLVMRealOEQ, x, c (&m, 0.0)), c (&m, -INFINITY), r);
  r = sel (&m, cmp (&m, LLVMRealULT, x, c (&m, 0.0)), c (&m, NAN), r);
  return sel (&m, cmp (&m, LLVMRealOEQ, x, c (&m, INFINITY)), c (&m, INFINITY), r);
}

LLVMValueRef
_fb_codegen_gpu_exp_f64 (FbEmit *e, LLVMValueRef x)
{
  M m = m_for (e, x);
  LLVMBuilderRef b = e->b;
  LLVMValueRef lo = c (&m, -745.2), hi = c (&m, 709.79);
  LLVMValueRef xc = sel (&m, cmp (&m, LLVMRealOLT, x, lo), lo, x);
  xc = sel (&m, cmp (&m, LLVMRealOGT, xc, hi), hi, xc);
  LLVMValueRef n = un (&m, "llvm.roundeven", mul (&m, xc, c (&m, 1.4426950408889634)));
  LLVMValueRef r = fma3 (&m, n, c (&m, -0.6931471805599453), xc);
  r = fma3 (&m, n, c (&m, -2.3190468138462996e-17), r);
  double k[12];
  double f = 1.0;
  for (int i = 0; i < 12; i++)
    {
      k[i] = 1.0 / f;
      f *= i + 1;
    }
  LLVMValueRef p = poly (&m, r, k, 12);
  LLVMValueRef ni = LLVMBuildFPToSI (b, n, m.it, "");
  LLVMValueRef n1 = LLVMBuildAShr (b, ni, ci (&m, 1), "");
  LLVMValueRef n2 = LLVMBuildSub (b, ni, n1, "");
  LLVMValueRef y = mul (&m, mul (&m, p, pow2i (&m, n1)), pow2i (&m, n2));
  y = sel (&m, cmp (&m, LLVMRealOLT, x, lo), c (&m, 0.0), y);
  return sel (&m, cmp (&m, LLVMRealOGT, x, hi), c (&m, INFINITY), y);
}

LLVMValueRef
_fb_codegen_gpu_erf_f64 (FbEmit *e, LLVMValueRef x)
{
  M m = m_for (e, x);
  LLVMValueRef ax = un (&m, "llvm.fabs", x);
  /* Below 2: x times the even series. */
  double k[33];
  double f = 1.0;
  for (int i = 0; i < 33; i++)
    {
      k[i] = (i % 2 ? -1.0 : 1.0) / (f * (2 * i + 1)) * M_2_SQRTPI;
      f *= i + 1;
    }
  LLVMValueRef small = mul (&m, ax, poly (&m, mul (&m, ax, ax), k, 33));
  /* Above: 1 - erfc, erfc(x) = e^-x^2 / sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))).
   * The argument is clamped so that the unused side stays finite. */
  LLVMValueRef xl = sel (&m, cmp (&m, LLVMRealOLT, ax, c (&m, 2.0)), c (&m, 2.0), ax);
  xl = sel (&m, cmp (&m, LLVMRealOGT, xl, c (&m, 6.0)), c (&m, 6.0), xl);
  LLVMValueRef t = xl;
  for (int i = 30; i >= 1; i--)
    t = add (&m, xl, f_div (&m, c (&m, i * 0.5), t));
  LLVMValueRef ex = _fb_codegen_gpu_exp_f64 (e, LLVMBuildFNeg (e->b, mul (&m, xl, xl), ""));
  LLVMValueRef erfc = f_div (&m, mul (&m, ex, c (&m, M_2_SQRTPI * 0.5)), t);
  LLVMValueRef large = sub (&m, c (&m, 1.0), erfc);
  LLVMValueRef y = sel (&m, cmp (&m, LLVMRealOLT, ax, c (&m, 2.0)), small, large);
  y = sel (&m, cmp (&m, LLVMRealOGT, ax, c (&m, 6.0)), c (&m, 1.0), y);
  /* NaN stays NaN: both comparisons above are false for it, and the series keeps it. */
  LLVMValueRef args[2] = { y, x };
  return _fb_codegen_intrinsic (e, "llvm.copysign", m.t, args, 2);
}

LLVMValueRef
_fb_codegen_gpu_sincos (FbEmit *e, LLVMValueRef x, gboolean cosine)
{
  M m = m_for (e, x);
  LLVMBuilderRef b = e->b;
  LLVMValueRef n = un (&m, "llvm.roundeven", mul (&m, x, c (&m, M_2_PI)));
  LLVMValueRef r;
  if (m.dbl)
    {
      r = fma3 (&m, n, c (&m, -1.5707963267948966), x);
      r = fma3 (&m, n, c (&m, -6.123233995736766e-17), r);
      r = fma3 (&m, n, c (&m, 1.4973849048591698e-33), r);
    }
  else
    {
      r = fma3 (&m, n, c (&m, -1.5707963705062866), x);
      r = fma3 (&m, n, c (&m, 4.371138828673793e-08), r);
      r = fma3 (&m, n, c (&m, 1.7151245100058819e-15), r);
    }
  LLVMValueRef r2 = mul (&m, r, r);
  /* sin r = r (1 - r^2/3! + ...), cos r = 1 - r^2/2! + ... */
  double ks[9], kc[10];
  int ns = m.dbl ? 9 : 6, nc = m.dbl ? 10 : 7;
  double f = 1.0;
  for (int i = 1; i <= 2 * nc; i++)
    {
      f *= i;
      if (i % 2 == 1 && (i - 1) / 2 < ns)
        ks[(i - 1) / 2] = ((i - 1) / 2 % 2 ? -1.0 : 1.0) / f;
      if (i % 2 == 0 && i / 2 < nc)
        kc[i / 2] = (i / 2 % 2 ? -1.0 : 1.0) / f;
    }
  ks[0] = 1.0;
  kc[0] = 1.0;
  LLVMValueRef s = mul (&m, r, poly (&m, r2, ks, ns));
  LLVMValueRef co = poly (&m, r2, kc, nc);
  /* The quadrant; cos x = sin (x + pi/2). */
  LLVMValueRef q = to_int_sat (&m, n);
  if (cosine)
    q = LLVMBuildAdd (b, q, ci (&m, 1), "");
  LLVMValueRef odd = LLVMBuildTrunc (b, q, LLVMInt1TypeInContext (e->ctx), "");
  LLVMValueRef neg = LLVMBuildTrunc (b, LLVMBuildLShr (b, q, ci (&m, 1), ""),
                                     LLVMInt1TypeInContext (e->ctx), "");
  LLVMValueRef v = sel (&m, odd, co, s);
  return sel (&m, neg, LLVMBuildFNeg (b, v, ""), v);
}

LLVMValueRef
_fb_codegen_gpu_pow (FbEmit *e, LLVMValueRef x, LLVMValueRef y)
{
  M m = m_for (e, x);
  LLVMBuilderRef b = e->b;
  LLVMValueRef ax = un (&m, "llvm.fabs", x);
  LLVMValueRef l = _fb_codegen_gpu_log (e, ax);
  LLVMValueRef yl = mul (&m, y, l);
  LLVMValueRef r = m.dbl ? _fb_codegen_gpu_exp_f64 (e, yl) : _fb_codegen_exp (e, yl);
  LLVMValueRef is_int = cmp (&m, LLVMRealOEQ, un (&m, "llvm.floor", y), y);
  LLVMValueRef half = mul (&m, y, c (&m, 0.5));
  LLVMValueRef odd = LLVMBuildAnd (b, is_int, cmp (&m, LLVMRealONE, un (&m, "llvm.floor", half), half), "");
  LLVMValueRef negx = cmp (&m, LLVMRealOLT, x, c (&m, 0.0));
  LLVMValueRef signed_r = sel (&m, odd, LLVMBuildFNeg (b, r, ""), r);
  r = sel (&m, negx, sel (&m, is_int, signed_r, c (&m, NAN)), r);
  /* x^0 = 1 and 1^y = 1, even for NaN. */
  LLVMValueRef one = LLVMBuildOr (b, cmp (&m, LLVMRealOEQ, y, c (&m, 0.0)),
                                  cmp (&m, LLVMRealOEQ, x, c (&m, 1.0)), "");
  return sel (&m, one, c (&m, 1.0), r);
}

void
_fb_codegen_mark_invariant (FbEmit *e, LLVMValueRef load)
{
  unsigned kind = LLVMGetMDKindIDInContext (e->ctx, "invariant.load", 14);
  LLVMSetMetadata (load, kind, LLVMMetadataAsValue (e->ctx, LLVMMDNodeInContext2 (e->ctx, NULL, 0)));
}
