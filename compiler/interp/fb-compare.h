/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Comparing a computed tensor against an expected one, the way every oracle check does:
 * the same element type and shape, NaN exactly where NaN is expected, infinities equal, and
 * every other element within |actual - expected| <= atol + rtol * |expected| (numpy's allclose).
 * Used by `fusebench check`, the conformance tests and the backends' tests. */
#pragma once

#include "fb-tensor.h"

G_BEGIN_DECLS

/* The tolerance of the project's conformance checks. */
#define FB_COMPARE_RTOL 1e-3
#define FB_COMPARE_ATOL 1e-4

typedef struct {
  gboolean ok;           /* every element within tolerance, and types, shapes and NaNs agree */
  double   worst_abs;    /* largest |actual - expected| over finite pairs */
  double   worst_rel;    /* largest |actual - expected| / |expected| where |expected| > atol */
  char    *reason;       /* when !ok: what differs (the worst element), in one line */
} FbCompare;

/* Fills result (which the caller clears with fb_compare_clear). */
void fb_tensor_compare (const FbTensor *expected, const FbTensor *actual, double rtol, double atol,
                        FbCompare *result);
void fb_compare_clear  (FbCompare *result);

G_END_DECLS
