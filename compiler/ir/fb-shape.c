/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-shape.h"
#include "fb-graph.h"

#include <stdlib.h>
#include <string.h>

FbShape
fb_shape_make (int rank, const int64_t *dims)
{
  FbShape s = { .rank = rank };
  g_assert (rank >= 0 && rank <= FB_MAX_RANK);
  for (int i = 0; i < rank; i++)
    s.dim[i] = dims[i];
  return s;
}

FbShape
fb_shape_unknown (void)
{
  FbShape s = { .rank = FB_RANK_UNKNOWN };
  return s;
}

FbShape
fb_shape_scalar (void)
{
  FbShape s = { .rank = 0 };
  return s;
}

gboolean
fb_shape_is_static (const FbShape *shape)
{
  g_return_val_if_fail (shape != NULL, FALSE);
  if (shape->rank < 0)
    return FALSE;
  for (int i = 0; i < shape->rank; i++)
    if (shape->dim[i] < 0)
      return FALSE;
  return TRUE;
}

gboolean
fb_shape_equal (const FbShape *a, const FbShape *b)
{
  g_return_val_if_fail (a != NULL && b != NULL, FALSE);
  if (a->rank != b->rank)
    return FALSE;
  for (int i = 0; i < a->rank; i++)
    if (a->dim[i] != b->dim[i] || a->sym[i] != b->sym[i])
      return FALSE;
  return TRUE;
}

int64_t
fb_shape_numel (const FbShape *shape, gboolean *overflow)
{
  int64_t n = 1;

  g_return_val_if_fail (shape != NULL, -1);
  if (overflow)
    *overflow = FALSE;
  if (!fb_shape_is_static (shape))
    return -1;
  for (int i = 0; i < shape->rank; i++)
    {
      if (__builtin_mul_overflow (n, shape->dim[i], &n))
        {
          if (overflow)
            *overflow = TRUE;
          return -1;
        }
    }
  return n;
}

char *
fb_shape_to_string (const FbShape *shape)
{
  GString *s;

  g_return_val_if_fail (shape != NULL, NULL);
  if (shape->rank < 0)
    return g_strdup ("?");
  if (shape->rank == 0)
    return g_strdup ("scalar");
  s = g_string_new (NULL);
  for (int i = 0; i < shape->rank; i++)
    {
      if (i)
        g_string_append_c (s, 'x');
      if (shape->dim[i] >= 0)
        g_string_append_printf (s, "%" G_GINT64_FORMAT, shape->dim[i]);
      else if (shape->sym[i])
        g_string_append (s, shape->sym[i]);
      else
        g_string_append_c (s, '?');
    }
  return g_string_free (s, FALSE);
}

gboolean
fb_shape_parse (const char *text, FbShape *out, GError **error)
{
  g_auto(GStrv) parts = NULL;
  FbShape s = { 0 };

  g_return_val_if_fail (text != NULL && out != NULL, FALSE);
  if (*text == '\0' || g_str_equal (text, "scalar"))
    {
      *out = s;
      return TRUE;
    }
  parts = g_strsplit (text, "x", -1);
  if (g_strv_length (parts) > FB_MAX_RANK)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                   "shape '%s' has more than %d dimensions", text, FB_MAX_RANK);
      return FALSE;
    }
  for (guint i = 0; parts[i]; i++)
    {
      guint64 v;
      if (!g_ascii_string_to_unsigned (parts[i], 10, 0, G_MAXINT64, &v, NULL))
        {
          g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_INVALID,
                       "shape '%s': '%s' is not a non-negative integer", text, parts[i]);
          return FALSE;
        }
      s.dim[s.rank++] = (int64_t) v;
    }
  *out = s;
  return TRUE;
}

gboolean
fb_shape_broadcast (const FbShape *a, const FbShape *b, FbShape *out, GError **error)
{
  FbShape r = { 0 };

  g_return_val_if_fail (a != NULL && b != NULL && out != NULL, FALSE);
  if (a->rank < 0 || b->rank < 0)
    {
      *out = fb_shape_unknown ();
      return TRUE;
    }
  r.rank = MAX (a->rank, b->rank);
  for (int i = 0; i < r.rank; i++)
    {
      int ia = a->rank - r.rank + i;
      int ib = b->rank - r.rank + i;
      int64_t da = ia >= 0 ? a->dim[ia] : 1;
      int64_t db = ib >= 0 ? b->dim[ib] : 1;
      const char *sa = ia >= 0 ? a->sym[ia] : NULL;
      const char *sb = ib >= 0 ? b->sym[ib] : NULL;

      if (da == 1)
        { r.dim[i] = db; r.sym[i] = sb; }
      else if (db == 1)
        { r.dim[i] = da; r.sym[i] = sa; }
      else if (da >= 0 && db >= 0)
        {
          if (da != db)
            {
              g_autofree char *ta = fb_shape_to_string (a);
              g_autofree char *tb = fb_shape_to_string (b);
              g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_SHAPE,
                           "shapes %s and %s do not broadcast (dimension %d: %" G_GINT64_FORMAT
                           " vs %" G_GINT64_FORMAT ")", ta, tb, i, da, db);
              return FALSE;
            }
          r.dim[i] = da;
        }
      else if (da >= 0)
        r.dim[i] = da;   /* the unknown side must be 1 or equal: the known extent wins */
      else if (db >= 0)
        r.dim[i] = db;
      else
        {
          r.dim[i] = FB_DIM_UNKNOWN;
          r.sym[i] = (sa && sa == sb) ? sa : NULL;
        }
    }
  *out = r;
  return TRUE;
}

gboolean
fb_axis_normalize (int64_t axis, int rank, int *out)
{
  if (axis < -rank || axis >= rank || rank < 0)
    return FALSE;
  *out = (int) (axis < 0 ? axis + rank : axis);
  return TRUE;
}
