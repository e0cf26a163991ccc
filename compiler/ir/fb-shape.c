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

/* The shape's dims joined by sep, symbolic ones by their whole names or (short) as
 * fb_dim_short_name gives them. */
static char *
shape_text (const FbShape *shape, const char *sep, gboolean short_names)
{
  GString *s;

  if (shape->rank < 0)
    return g_strdup ("?");
  if (shape->rank == 0)
    return g_strdup ("scalar");
  s = g_string_new (NULL);
  for (int i = 0; i < shape->rank; i++)
    {
      if (i)
        g_string_append (s, sep);
      if (shape->dim[i] >= 0)
        g_string_append_printf (s, "%" G_GINT64_FORMAT, shape->dim[i]);
      else if (shape->sym[i] && short_names)
        {
          g_autofree char *name = fb_dim_short_name (shape->sym[i]);

          g_string_append (s, name);
        }
      else if (shape->sym[i])
        g_string_append (s, shape->sym[i]);
      else
        g_string_append_c (s, '?');
    }
  return g_string_free (s, FALSE);
}

char *
fb_shape_to_string (const FbShape *shape)
{
  g_return_val_if_fail (shape != NULL, NULL);
  return shape_text (shape, "x", FALSE);
}

/* Up to this many characters a symbol's last part is short enough to show as it is. */
#define SHORT_NAME_MAX 10

static gboolean
is_namespace_separator (char c)
{
  return c == '.' || c == ':' || c == '/';
}

static gboolean
all_digits (const char *s, gsize n)
{
  if (n == 0)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    if (!g_ascii_isdigit (s[i]))
      return FALSE;
  return TRUE;
}

/* The initials of name's words, capitalized, and the number it ends with whole:
 * "total_sequence_length" -> "TSL", "Reshape_output_dim_0" -> "ROD0". A word starts after any
 * character that is not a letter or digit, and at a capital that follows a small letter. */
static char *
initials (const char *name)
{
  GString *s = g_string_new (NULL);
  gsize n = strlen (name), digits = n;

  while (digits > 0 && g_ascii_isdigit (name[digits - 1]))
    digits--;
  for (gsize i = 0; i < digits; i++)
    {
      gboolean starts = g_ascii_isalpha (name[i])
                        && (i == 0 || !g_ascii_isalnum (name[i - 1])
                            || (g_ascii_isupper (name[i]) && g_ascii_islower (name[i - 1])));

      if (starts)
        g_string_append_c (s, g_ascii_toupper (name[i]));
    }
  g_string_append (s, name + digits);
  if (s->len == 0)
    g_string_append_len (s, name, MIN (n, (gsize) SHORT_NAME_MAX));
  return g_string_free (s, FALSE);
}

/* Exporters name the extents they could not fix with a namespace and a counter
 * ("p2o.DynamicDimension.0", "onnx::Shape_3/dim_1") or with whole phrases
 * ("total_sequence_length"): in a box 16 characters wide these crowd out the numbers, and
 * joined with "x" a trailing counter reads as hex ("...0x16"). The rule, as short as still
 * tells the symbols of one model apart:
 *   - the namespace goes: only the part after the last '.', ':' or '/' is kept;
 *   - a part that is only a counter keeps the first letter of the part before it: "D0";
 *   - up to SHORT_NAME_MAX characters the part stays as it is ("batch", "seq_len", "N");
 *   - longer, its words' initials and its trailing number: "SL", "ROD0". */
char *
fb_dim_short_name (const char *sym)
{
  const char *last, *end;

  if (sym == NULL || *sym == '\0')
    return g_strdup ("?");
  end = sym + strlen (sym);
  last = end;
  while (last > sym && !is_namespace_separator (last[-1]))
    last--;
  if (last == end)
    return g_strdup (sym);   /* ends with a separator: nothing shorter to show */
  if (all_digits (last, end - last))
    {
      const char *prev_end = last - 1, *prev = prev_end;
      char letter = 'D';

      while (prev > sym && !is_namespace_separator (prev[-1]))
        prev--;
      for (const char *c = prev; c < prev_end; c++)
        if (g_ascii_isalpha (*c))
          {
            letter = g_ascii_toupper (*c);
            break;
          }
      return g_strdup_printf ("%c%s", letter, last);
    }
  if (g_utf8_strlen (last, -1) <= SHORT_NAME_MAX)
    return g_strdup (last);
  return initials (last);
}

char *
fb_shape_to_display (const FbShape *shape)
{
  g_return_val_if_fail (shape != NULL, NULL);
  return shape_text (shape, "×", TRUE);
}

char *
fb_shape_symbols_text (const FbShape *shape)
{
  GString *s;

  g_return_val_if_fail (shape != NULL, NULL);
  s = g_string_new (NULL);
  for (int i = 0; i < shape->rank; i++)
    {
      g_autofree char *name = NULL;
      gboolean seen = FALSE;

      if (shape->dim[i] >= 0 || shape->sym[i] == NULL)
        continue;
      for (int j = 0; j < i && !seen; j++)
        seen = shape->dim[j] < 0 && g_strcmp0 (shape->sym[j], shape->sym[i]) == 0;
      name = fb_dim_short_name (shape->sym[i]);
      if (seen || g_str_equal (name, shape->sym[i]))
        continue;
      g_string_append_printf (s, "%s%s = %s", s->len > 0 ? "\n" : "", name, shape->sym[i]);
    }
  if (s->len == 0)
    {
      g_string_free (s, TRUE);
      return NULL;
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
