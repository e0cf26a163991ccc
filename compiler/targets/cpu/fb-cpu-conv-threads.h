/* SPDX-License-Identifier: GPL-3.0-or-later */
/* How many threads each convolution of a CPU module runs on (fb-cpu-conv-threads.c). */
#pragma once

#include "fb-dnnl-conv.h"

#include <glib.h>

G_BEGIN_DECLS

/* The convolution d as a primitive made for the thread count that ran it fastest here, of its
 * estimate from its size and a half and a quarter of that, each timed on buffers of its own;
 * at most pool threads. choices remembers each shape's count (make it with
 * _fb_cpu_conv_choices_new), so that a shape that repeats is timed once. NULL with the reason
 * in why when oneDNN cannot make it. */
FbDnnlConv *_fb_cpu_conv_new           (const FbConvDesc *d, const float *weights, int pool,
                                        GHashTable *choices, char *why, size_t why_len);
GHashTable *_fb_cpu_conv_choices_new   (void);

G_END_DECLS
