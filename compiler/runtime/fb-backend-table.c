/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The targets of the full build. */
#include "fb-cuda.h"
#include "fb-runtime.h"

static const FbBackend *(*const targets[]) (void) = {
  fb_backend_cpu,
  fb_backend_cuda,
};

const FbBackend *
fb_backend_lookup (const char *name)
{
  g_return_val_if_fail (name != NULL, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (targets); i++)
    if (g_str_equal (name, targets[i] ()->name))
      return targets[i] ();
  return NULL;
}

const char *
fb_backend_names (void)
{
  return "cpu, cuda";
}
