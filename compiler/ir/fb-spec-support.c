/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-spec-support.h"

#include <stdarg.h>

gboolean
fb_spec_fail (GError **error, int code, const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  g_autofree char *msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error_literal (error, FB_GRAPH_ERROR, code, msg);
  return FALSE;
}
