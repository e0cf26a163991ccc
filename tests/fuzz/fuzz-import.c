/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Any byte string handed to the model loader must give a graph or an error: never a crash, a
 * hang, a leak or an unbounded allocation. */
#include "fb-onnx-import.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static (data, size);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbGraph) graph = NULL;
  static gboolean once;

  /* A warning is a bug caught in the act (a GError set twice, a failed precondition): stop there. */
  if (!once)
    {
      g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
      once = TRUE;
    }

  /* No base folder: external data must be refused, never read from the fuzzer's disk. */
  graph = fb_onnx_import_bytes (bytes, "fuzz.onnx", NULL, NULL, &error);
  if ((graph == NULL) == (error == NULL))
    __builtin_trap ();
  if (graph != NULL && !fb_graph_verify (graph, NULL))
    __builtin_trap ();
  if (graph != NULL)
    {
      g_autoptr(FbGraph) copy = fb_graph_copy (graph);
      g_autoptr(GHashTable) unsupported = fb_graph_unsupported_ops (copy);
    }
  return 0;
}
