/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The targets of this build, from the list in fb-targets.def (or FB_TARGET_LIST, a list that
 * includes it and adds more: the fake target of the tests). The only place that knows which
 * targets there are. */
#include "fb-backend.h"

#ifndef FB_TARGET_LIST
#define FB_TARGET_LIST "fb-targets.def"
#endif

#define FB_TARGET(name) const FbBackend *fb_backend_##name (void);
#include FB_TARGET_LIST
#undef FB_TARGET

static const FbBackend *(*const targets[]) (void) = {
#define FB_TARGET(name) fb_backend_##name,
#include FB_TARGET_LIST
#undef FB_TARGET
};

const FbBackend *
fb_backend_nth (guint i)
{
  return i < G_N_ELEMENTS (targets) ? targets[i] () : NULL;
}

const FbBackend *
fb_backend_lookup (const char *name)
{
  g_return_val_if_fail (name != NULL, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (targets); i++)
    if (g_str_equal (name, targets[i] ()->name))
      return targets[i] ();
  return NULL;
}

const FbBackend *
fb_backend_for_module (const char *suffix)
{
  g_return_val_if_fail (suffix != NULL, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (targets); i++)
    if (g_strcmp0 (targets[i] ()->module_suffix, suffix) == 0)
      return targets[i] ();
  return NULL;
}

const FbBackend *
fb_backend_reference (void)
{
  return targets[0] ();
}

const FbBackend *
fb_backend_host (void)
{
  return targets[1] ();
}

const char *
fb_backend_names (void)
{
  static char *names;
  static gsize ready;
  if (g_once_init_enter (&ready))
    {
      GString *s = g_string_new (NULL);
      for (guint i = 0; i < G_N_ELEMENTS (targets); i++)
        g_string_append_printf (s, "%s%s", i ? ", " : "", targets[i] ()->name);
      names = g_string_free (s, FALSE);
      g_once_init_leave (&ready, 1);
    }
  return names;
}
