/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the tests of our own convolutions (direct, Winograd) share: random data, the post-ops
 * applied in double, as the reference loop nests apply them, and the instruction set a test
 * runs on. */
#pragma once

#include "fb-dnnl-conv.h"

#include <glib.h>

/* n floats uniform in [-scale, scale] (one more allocated, for masked reads past the end). */
float  *tcv_random_floats (gsize n, guint32 seed, double scale);
/* d's post-ops on v, the output element at index at; add holds the addend (for an in-place
 * sum, what the output held). */
double  tcv_apply_post    (const FbConvDesc *d, double v, const float *add, gsize at);
/* Sets FUSEBENCH_ISA to isa ("avx2", "avx512"; "default" unsets it) and returns TRUE, or
 * skips the test, saying which instruction set this processor lacks, and returns FALSE. */
gboolean tcv_use_isa      (const char *isa);
