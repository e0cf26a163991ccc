/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A bundle's plan.json from untrusted hands: read it or refuse it, never crash, and never
 * accept a convolution phase that is not a convolution. The weights are 64 KB of zeros, as
 * many as the seed plans (the sample model's bundles) point into. */
#include "fb-bundle-private.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static GBytes *weights;
  if (weights == NULL)
    {
      weights = g_bytes_new_take (g_malloc0 (64 * 1024), 64 * 1024);
      /* A critical warning from the JSON library means the reader let a wrong kind through. */
      g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
    }
  g_autoptr(JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, (const char *) data, (gssize) size, NULL))
    return 0;
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(FbPlan) plan = _fb_bundle_plan_from_json (json_node_get_object (root), weights,
                                                      "plan.json", &error);
  if ((plan == NULL) == (error == NULL))
    __builtin_trap ();
  for (guint k = 0; plan && k < plan->kernels->len; k++)
    {
      FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          const FbKConv *cv = ((FbKPhase *) g_ptr_array_index (kernel->phases, p))->conv;
          if (cv && !fb_conv_desc_valid (&cv->desc))
            __builtin_trap ();
        }
    }
  return 0;
}
