/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What lowering and code generation know of a target: the description its backend gives
 * (FbBackend.describe_target). Nothing below compiler/targets/ includes a target; whatever a
 * target's libraries take, they learn here. */
#pragma once

#include "fb-conv-desc.h"

#include <glib.h>

G_BEGIN_DECLS

typedef struct _FbTargetDesc FbTargetDesc;
struct _FbTargetDesc {
  /* The LLVM target triple and processor the kernels are generated for ("x86_64-pc-linux-gnu
   * znver4", "nvptx64-nvidia-cuda sm_90"): part of every kernel's cache key and of a bundle's
   * manifest ("host"). */
  const char *triple;
  /* Contractions become library phases (cuDNN convolutions, cuBLASLt products) rather than
   * the sgemm tiles and convolution primitives of a CPU. */
  gboolean    gpu;
  /* The library that runs convolution phases, as listings name it ("oneDNN"). */
  const char *conv_library;
  /* The implementation the convolution library runs d with on this machine, into name
   * ("brgconv_1x1:avx512_core", or "direct:avx2 ..." where a convolution of our own takes
   * it): 0, or -1 with the reason there is none in name. NULL where the library decides only
   * when the model runs (cuDNN's timed choice). */
  int       (*conv_implementation) (const FbConvDesc *d, char *name, size_t len);
  /* Whether what runs d writes a strided output (d.y_stride, a Concat's piece in place) into
   * its rows itself, where a library would write it packed and then copy it there. NULL: it
   * never does. */
  gboolean  (*conv_writes_rows) (const FbConvDesc *d);
};

G_END_DECLS
