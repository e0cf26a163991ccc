/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-dtype.h"

#include <math.h>
#include <string.h>

gsize
fb_dtype_size (FbDType dtype)
{
  switch (dtype)
    {
    case FB_DTYPE_FLOAT32: case FB_DTYPE_INT32: case FB_DTYPE_UINT32: return 4;
    case FB_DTYPE_UINT8: case FB_DTYPE_INT8: case FB_DTYPE_BOOL:       return 1;
    case FB_DTYPE_UINT16: case FB_DTYPE_INT16:
    case FB_DTYPE_FLOAT16: case FB_DTYPE_BFLOAT16:                     return 2;
    case FB_DTYPE_INT64: case FB_DTYPE_FLOAT64: case FB_DTYPE_UINT64:  return 8;
    case FB_DTYPE_UNDEFINED: case FB_DTYPE_STRING: default:            return 0;
    }
}

const char *
fb_dtype_name (FbDType dtype)
{
  switch (dtype)
    {
    case FB_DTYPE_FLOAT32:  return "float32";
    case FB_DTYPE_UINT8:    return "uint8";
    case FB_DTYPE_INT8:     return "int8";
    case FB_DTYPE_UINT16:   return "uint16";
    case FB_DTYPE_INT16:    return "int16";
    case FB_DTYPE_INT32:    return "int32";
    case FB_DTYPE_INT64:    return "int64";
    case FB_DTYPE_STRING:   return "string";
    case FB_DTYPE_BOOL:     return "bool";
    case FB_DTYPE_FLOAT16:  return "float16";
    case FB_DTYPE_FLOAT64:  return "float64";
    case FB_DTYPE_UINT32:   return "uint32";
    case FB_DTYPE_UINT64:   return "uint64";
    case FB_DTYPE_BFLOAT16: return "bfloat16";
    case FB_DTYPE_UNDEFINED: default: return "?";
    }
}

gboolean
fb_dtype_is_known (int dtype)
{
  return dtype != FB_DTYPE_STRING && fb_dtype_size ((FbDType) dtype) != 0;
}

gboolean
fb_dtype_is_float (FbDType dtype)
{
  return dtype == FB_DTYPE_FLOAT32 || dtype == FB_DTYPE_FLOAT64 ||
         dtype == FB_DTYPE_FLOAT16 || dtype == FB_DTYPE_BFLOAT16;
}

gboolean
fb_dtype_is_integer (FbDType dtype)
{
  switch (dtype)
    {
    case FB_DTYPE_UINT8: case FB_DTYPE_INT8: case FB_DTYPE_UINT16: case FB_DTYPE_INT16:
    case FB_DTYPE_INT32: case FB_DTYPE_INT64: case FB_DTYPE_UINT32: case FB_DTYPE_UINT64:
      return TRUE;
    default:
      return FALSE;
    }
}

gboolean
fb_dtype_is_signed (FbDType dtype)
{
  return fb_dtype_is_float (dtype) || dtype == FB_DTYPE_INT8 || dtype == FB_DTYPE_INT16 ||
         dtype == FB_DTYPE_INT32 || dtype == FB_DTYPE_INT64;
}

float
fb_half_to_float (uint16_t h)
{
  uint32_t sign = (uint32_t) (h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  float f;

  if (exp == 0)
    {
      /* Zero or subnormal: value is mant * 2^-24. */
      f = ldexpf ((float) mant, -24);
      return sign ? -f : f;
    }
  if (exp == 31)
    bits = sign | 0x7f800000u | (mant << 13);
  else
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  memcpy (&f, &bits, sizeof f);
  return f;
}

uint16_t
fb_float_to_half (float f)
{
  uint32_t bits;
  uint32_t sign, mant;
  int32_t exp;

  memcpy (&bits, &f, sizeof bits);
  sign = (bits >> 16) & 0x8000;
  exp = (int32_t) ((bits >> 23) & 0xff);
  mant = bits & 0x7fffff;

  if (exp == 0xff)
    return (uint16_t) (sign | 0x7c00 | (mant ? 0x200 : 0));
  exp = exp - 127 + 15;
  if (exp >= 31)
    return (uint16_t) (sign | 0x7c00);
  if (exp <= 0)
    {
      /* Subnormal half: shift the implicit-one mantissa into place, rounding to nearest even. */
      if (exp < -10)
        return (uint16_t) sign;
      mant |= 0x800000;
      uint32_t shift = (uint32_t) (14 - exp);
      uint32_t half_mant = mant >> shift;
      uint32_t rem = mant & ((1u << shift) - 1);
      uint32_t halfway = 1u << (shift - 1);
      if (rem > halfway || (rem == halfway && (half_mant & 1)))
        half_mant++;
      return (uint16_t) (sign | half_mant);
    }
  uint32_t out = sign | ((uint32_t) exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (out & 1)))
    out++;  /* may carry into the exponent, which is the correct rounding */
  return (uint16_t) out;
}

float
fb_bfloat16_to_float (uint16_t b)
{
  uint32_t bits = (uint32_t) b << 16;
  float f;
  memcpy (&f, &bits, sizeof f);
  return f;
}

uint16_t
fb_float_to_bfloat16 (float f)
{
  uint32_t bits;
  memcpy (&bits, &f, sizeof bits);
  if (isnan (f))
    return (uint16_t) ((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return (uint16_t) (bits >> 16);
}

const char *
fb_value_kind_name (FbValueKind kind)
{
  switch (kind)
    {
    case FB_KIND_TENSOR: return "tensor";
    case FB_KIND_SEQUENCE: return "sequence";
    case FB_KIND_OPTIONAL: return "optional";
    case FB_KIND_OPTIONAL_SEQUENCE: return "optional sequence";
    default: return "?";
    }
}

char *
fb_value_kind_wrap (FbValueKind kind, const char *inner)
{
  switch (kind)
    {
    case FB_KIND_SEQUENCE: return g_strdup_printf ("seq(%s)", inner);
    case FB_KIND_OPTIONAL: return g_strdup_printf ("optional(%s)", inner);
    case FB_KIND_OPTIONAL_SEQUENCE: return g_strdup_printf ("optional(seq(%s))", inner);
    default: return g_strdup (inner);
    }
}
