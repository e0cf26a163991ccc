/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for contractions: MatMul (numpy semantics), Gemm, and Einsum of one or two operands
 * (permutations, diagonals, sums within an operand and contractions between two). */
#include "fb-infer-private.h"

#include <string.h>

gboolean
_fb_infer_matmul (FbGraph *graph, FbNode *node, GError **error)
{
  static const guint both[] = { 0, 1 };
  FbValue *a = _fb_infer_require (node, 0, error);
  FbValue *b = a ? _fb_infer_require (node, 1, error) : NULL;
  FbShape sa, sb, ba, bb, batch, out;
  FbDType dtype;
  int64_t ka, kb;

  if (b == NULL || !_fb_infer_check_type (node, 0, FB_TYPES_NUMERIC, error) ||
      !_fb_infer_same_type (node, both, 2, &dtype, error))
    return FALSE;
  sa = a->shape;
  sb = b->shape;
  if (sa.rank == 0 || sb.rank == 0)
    return _fb_infer_fail (error, node, "MatMul does not take scalars");
  if (sa.rank < 0 || sb.rank < 0)
    return _fb_infer_set_output (node, 0, dtype, &(FbShape) { .rank = FB_RANK_UNKNOWN }, error);

  /* A vector is a matrix of one row (on the left) or one column (on the right), and that extent
   * is dropped from the result. */
  ka = sa.dim[sa.rank - 1];
  kb = sb.rank == 1 ? sb.dim[0] : sb.dim[sb.rank - 2];
  if (ka >= 0 && kb >= 0 && ka != kb)
    {
      g_autofree char *ta = fb_shape_to_string (&sa);
      g_autofree char *tb = fb_shape_to_string (&sb);
      return _fb_infer_fail (error, node, "inner dimensions differ: %s times %s", ta, tb);
    }
  ba = fb_shape_make (MAX (sa.rank - 2, 0), sa.dim);
  bb = fb_shape_make (MAX (sb.rank - 2, 0), sb.dim);
  for (int i = 0; i < ba.rank; i++)
    ba.sym[i] = sa.sym[i];
  for (int i = 0; i < bb.rank; i++)
    bb.sym[i] = sb.sym[i];
  if (!_fb_infer_broadcast (node, &ba, &bb, &batch, error))
    return FALSE;
  out = batch;
  if (sa.rank >= 2)
    {
      out.dim[out.rank] = sa.dim[sa.rank - 2];
      out.sym[out.rank++] = sa.sym[sa.rank - 2];
    }
  if (sb.rank >= 2)
    {
      out.dim[out.rank] = sb.dim[sb.rank - 1];
      out.sym[out.rank++] = sb.sym[sb.rank - 1];
    }
  return _fb_infer_set_output (node, 0, dtype, &out, error);
}

gboolean
_fb_infer_gemm (FbGraph *graph, FbNode *node, GError **error)
{
  static const guint all[] = { 0, 1, 2 };
  FbValue *a = _fb_infer_require (node, 0, error);
  FbValue *b = a ? _fb_infer_require (node, 1, error) : NULL;
  gboolean ta = fb_node_attr_int (node, "transA", 0) != 0;
  gboolean tb = fb_node_attr_int (node, "transB", 0) != 0;
  FbShape out = _fb_shape_of_rank (2);
  int64_t ka = FB_DIM_UNKNOWN, kb = FB_DIM_UNKNOWN;
  FbShape c;
  FbDType dtype;

  if (b == NULL || (_fb_infer_opset (node) < 11 && _fb_infer_require (node, 2, error) == NULL) ||
      !_fb_infer_check_type (node, 0, FB_TYPES_NUMERIC, error) ||
      !_fb_infer_same_type (node, all, 3, &dtype, error))
    return FALSE;
  if ((a->shape.rank >= 0 && a->shape.rank != 2) || (b->shape.rank >= 0 && b->shape.rank != 2))
    return _fb_infer_fail (error, node, "A and B must be matrices, not of rank %d and %d",
                           a->shape.rank, b->shape.rank);
  if (a->shape.rank == 2)
    {
      out.dim[0] = a->shape.dim[ta ? 1 : 0];
      out.sym[0] = a->shape.sym[ta ? 1 : 0];
      ka = a->shape.dim[ta ? 0 : 1];
    }
  if (b->shape.rank == 2)
    {
      out.dim[1] = b->shape.dim[tb ? 0 : 1];
      out.sym[1] = b->shape.sym[tb ? 0 : 1];
      kb = b->shape.dim[tb ? 1 : 0];
    }
  if (ka >= 0 && kb >= 0 && ka != kb)
    return _fb_infer_fail (error, node, "inner dimensions differ: %" G_GINT64_FORMAT " vs %"
                           G_GINT64_FORMAT, ka, kb);
  /* C broadcasts one way, to the [M, N] result. */
  c = _fb_infer_input_shape (node, 2);
  if (c.rank > 2)
    return _fb_infer_fail (error, node, "C has rank %d, more than the result's 2", c.rank);
  for (int i = 0; i < c.rank; i++)
    {
      int64_t want = out.dim[2 - c.rank + i];
      if (c.dim[i] >= 0 && c.dim[i] != 1 && want >= 0 && c.dim[i] != want)
        {
          g_autofree char *cs = fb_shape_to_string (&c);
          g_autofree char *os = fb_shape_to_string (&out);
          return _fb_infer_fail (error, node, "C of shape %s does not broadcast to %s", cs, os);
        }
    }
  return _fb_infer_set_output (node, 0, dtype, &out, error);
}

/* ---- Einsum ----------------------------------------------------------------------------------- */

static gboolean
is_label (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Parses one term (labels and at most one "...") into out ('.' for the ellipsis). An operand's
 * term may repeat a label (its diagonal); the output's may not (unique). */
static gboolean
parse_term (const FbNode *node, const char *text, gsize len, gboolean unique, char *out,
            GError **error)
{
  gsize n = 0;
  gboolean ellipsis = FALSE;

  for (gsize i = 0; i < len; i++)
    {
      char c = text[i];
      if (c == '.')
        {
          if (ellipsis || i + 2 >= len || text[i + 1] != '.' || text[i + 2] != '.')
            return _fb_infer_fail (error, node, "malformed ellipsis in Einsum term '%.*s'",
                                   (int) len, text);
          ellipsis = TRUE;
          i += 2;
        }
      else if (!is_label (c))
        return _fb_infer_fail (error, node, "Einsum term '%.*s' holds '%c', not a letter",
                               (int) len, text, c);
      if (n >= FB_MAX_RANK + 1)
        return _fb_infer_unsupported (error, node, "Einsum term '%.*s' has more than %d "
                                      "dimensions", (int) len, text, FB_MAX_RANK);
      if (unique && c != '.' && memchr (out, c, n) != NULL)
        return _fb_infer_fail (error, node, "the Einsum output '%.*s' repeats '%c'", (int) len,
                               text, c);
      out[n++] = c;
    }
  out[n] = '\0';
  return TRUE;
}

gboolean
_fb_einsum_parse (const FbNode *node, const char *equation, guint n_inputs, FbEinsumEq *eq,
                  GError **error)
{
  g_autoptr(GString) s = g_string_new (NULL);
  const char *arrow, *lhs_end, *p;
  gboolean any_ellipsis = FALSE;
  int count[128] = { 0 };

  memset (eq, 0, sizeof *eq);
  for (p = equation; *p; p++)
    if (*p != ' ')
      g_string_append_c (s, *p);
  if (n_inputs == 0)
    return _fb_infer_invalid (error, node, "Einsum needs at least one input");
  if (n_inputs > FB_EINSUM_MAX_INPUTS)
    return _fb_infer_unsupported (error, node, "Einsum of %u operands; only one or two operands "
                                  "are supported", n_inputs);
  arrow = strstr (s->str, "->");
  lhs_end = arrow ? arrow : s->str + s->len;
  p = s->str;
  for (guint k = 0; k < n_inputs; k++)
    {
      const char *end = memchr (p, ',', lhs_end - p);
      if (end == NULL)
        end = lhs_end;
      if ((k + 1 < n_inputs) != (end < lhs_end))
        return _fb_infer_fail (error, node, "equation '%s' does not have %u terms", equation,
                               n_inputs);
      if (!parse_term (node, p, end - p, FALSE, eq->in[k], error))
        return FALSE;
      for (const char *c = eq->in[k]; *c; c++)
        {
          count[(int) *c]++;
          any_ellipsis |= *c == '.';
        }
      p = end + 1;
    }
  eq->n_inputs = n_inputs;

  if (arrow != NULL)
    {
      if (!parse_term (node, arrow + 2, strlen (arrow + 2), TRUE, eq->out, error))
        return FALSE;
      for (const char *c = eq->out; *c; c++)
        if (count[(int) *c] == 0)
          return _fb_infer_fail (error, node, "output label '%c' of '%s' is in no input",
                                 *c == '.' ? '.' : *c, equation);
    }
  else
    {
      /* Implicit output: the ellipsis, then the labels used once, in alphabetical order. */
      int n = 0;
      if (any_ellipsis)
        eq->out[n++] = '.';
      for (int c = 'A'; c <= 'z'; c++)
        if (is_label ((char) c) && count[c] == 1)
          {
            if (n >= FB_MAX_RANK + 1)
              return _fb_infer_unsupported (error, node, "Einsum output has too many dimensions");
            eq->out[n++] = (char) c;
          }
      eq->out[n] = '\0';
    }

  return TRUE;
}

gboolean
_fb_infer_einsum (FbGraph *graph, FbNode *node, GError **error)
{
  const char *equation = fb_node_attr_string (node, "equation", NULL);
  g_autofree guint *all = g_new (guint, MAX (node->n_inputs, 1));
  int64_t label_dim[128];
  const char *label_sym[128] = { NULL };
  FbShape ellipsis = { 0 };
  gboolean ellipsis_known = TRUE;
  FbEinsumEq eq;
  FbDType dtype;
  FbShape out;

  for (guint i = 0; i < node->n_inputs; i++)
    {
      if (_fb_infer_require (node, i, error) == NULL ||
          !_fb_infer_check_type (node, i, FB_TYPES_NUMERIC, error))
        return FALSE;
      all[i] = i;
    }
  if (!_fb_infer_same_type (node, all, node->n_inputs, &dtype, error))
    return FALSE;
  if (equation == NULL)
    return _fb_infer_fail (error, node, "the string attribute 'equation' is missing");
  if (!_fb_einsum_parse (node, equation, node->n_inputs, &eq, error))
    return FALSE;

  for (int c = 0; c < 128; c++)
    label_dim[c] = FB_DIM_UNKNOWN;
  for (guint k = 0; k < eq.n_inputs; k++)
    {
      const FbShape *s = &node->inputs[k]->shape;
      int labels = (int) strlen (eq.in[k]);
      gboolean has_ellipsis = strchr (eq.in[k], '.') != NULL;
      int ell_rank, d = 0;

      if (s->rank < 0)
        {
          if (has_ellipsis)
            ellipsis_known = FALSE;
          continue;
        }
      ell_rank = s->rank - (labels - has_ellipsis);
      if (ell_rank < 0 || (!has_ellipsis && ell_rank != 0))
        return _fb_infer_fail (error, node, "operand %u has rank %d but its term '%s' has %d labels",
                               k, s->rank, eq.in[k], labels - has_ellipsis);
      for (const char *c = eq.in[k]; *c; c++)
        {
          if (*c == '.')
            {
              FbShape part = _fb_shape_of_rank (ell_rank);
              for (int i = 0; i < ell_rank; i++)
                {
                  part.dim[i] = s->dim[d + i];
                  part.sym[i] = s->sym[d + i];
                }
              if (!_fb_infer_broadcast (node, &ellipsis, &part, &ellipsis, error))
                return FALSE;
              d += ell_rank;
              continue;
            }
          if (s->dim[d] >= 0 && label_dim[(int) *c] >= 0 && s->dim[d] != label_dim[(int) *c])
            return _fb_infer_fail (error, node, "label '%c' has the extents %" G_GINT64_FORMAT
                                   " and %" G_GINT64_FORMAT " (a repeated label needs equal "
                                   "extents)", *c, s->dim[d], label_dim[(int) *c]);
          if (s->dim[d] >= 0)
            label_dim[(int) *c] = s->dim[d];
          else if (label_sym[(int) *c] == NULL)
            label_sym[(int) *c] = s->sym[d];
          d++;
        }
    }

  /* numpy neither sums nor drops the dimensions an ellipsis stands for. */
  if (strchr (eq.out, '.') == NULL && ellipsis.rank > 0)
    return _fb_infer_fail (error, node, "equation '%s' has an ellipsis of %d dimensions in an "
                           "operand but none in its output", equation, ellipsis.rank);
  out = (FbShape) { 0 };
  for (const char *c = eq.out; *c; c++)
    {
      if (*c == '.')
        {
          if (!ellipsis_known)
            return _fb_infer_set_output (node, 0, dtype, &(FbShape) { .rank = FB_RANK_UNKNOWN },
                                         error);
          if (!_fb_infer_check_rank (node, (int64_t) out.rank + ellipsis.rank, error))
            return FALSE;
          for (int i = 0; i < ellipsis.rank; i++)
            {
              out.dim[out.rank] = ellipsis.dim[i];
              out.sym[out.rank++] = ellipsis.sym[i];
            }
          continue;
        }
      if (!_fb_infer_check_rank (node, out.rank + 1, error))
        return FALSE;
      out.dim[out.rank] = label_dim[(int) *c];
      out.sym[out.rank++] = label_dim[(int) *c] >= 0 ? NULL : label_sym[(int) *c];
    }
  return _fb_infer_set_output (node, 0, dtype, &out, error);
}
