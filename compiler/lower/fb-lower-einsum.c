/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Einsum as generated loops: a parallel nest over the output's labels and inner loops over the
 * summed labels, the product of the operands' elements accumulated in registers. Ellipses
 * stand for broadcast dimensions (labels of their own, right-aligned as numpy does). */
#include "fb-lower-private.h"

#include <string.h>

#define MAX_LABELS 64

typedef struct {
  int     rank[8];            /* per operand */
  int     label[8][FB_MAX_RANK];
  int     out_rank;
  int     out_label[FB_MAX_RANK];
} Spec;

/* Label ids: letters are 0..51, ellipsis dimensions 52.. (counted from the right). */
static int
letter_id (char ch)
{
  if (ch >= 'a' && ch <= 'z')
    return ch - 'a';
  if (ch >= 'A' && ch <= 'Z')
    return 26 + ch - 'A';
  return -1;
}

/* Parses one term for an operand of rank rank into ids; *n_ell receives the ellipsis' size. */
static gboolean
parse_term (const char *t, int rank, int *ids, int *n_ids, int *n_ell)
{
  int letters = 0;
  gboolean ell = FALSE;
  for (const char *p = t; *p; p++)
    if (letter_id (*p) >= 0)
      letters++;
  ell = strstr (t, "...") != NULL;
  *n_ell = ell ? rank - letters : 0;
  if (*n_ell < 0 || (!ell && rank >= 0 && letters != rank))
    return FALSE;
  int n = 0;
  for (const char *p = t; *p; )
    {
      if (g_str_has_prefix (p, "..."))
        {
          for (int e = 0; e < *n_ell; e++)
            ids[n++] = 52 + (*n_ell - 1 - e);
          p += 3;
        }
      else if (letter_id (*p) >= 0)
        ids[n++] = letter_id (*p++);
      else if (*p == ' ')
        p++;
      else
        return FALSE;
    }
  *n_ids = n;
  return TRUE;
}

gboolean
_fb_lower_einsum (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const char *eq = fb_node_attr_string (node, "equation", NULL);
  if (eq == NULL || node->n_inputs > 8)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "no equation");
  g_autofree char *norm = g_strdup (eq);
  g_autofree char *lhs = NULL;
  const char *arrow = strstr (norm, "->");
  lhs = arrow ? g_strndup (norm, arrow - norm) : g_strdup (norm);
  g_auto(GStrv) terms = g_strsplit (lhs, ",", -1);
  if (g_strv_length (terms) != node->n_inputs)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "equation '%s' does not name %u "
                           "operands", eq, node->n_inputs);
  Spec s = { 0 };
  int64_t extent[MAX_LABELS];
  int count[MAX_LABELS] = { 0 }, max_ell = 0;
  for (int l = 0; l < MAX_LABELS; l++)
    extent[l] = 1;
  for (guint i = 0; i < node->n_inputs; i++)
    {
      int rank, n_ell;
      int64_t dims[FB_MAX_RANK];
      if (!_fb_lower_dims (node->inputs[i], &rank, dims) ||
          !parse_term (terms[i], rank, s.label[i], &s.rank[i], &n_ell) || s.rank[i] != rank)
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                               "operand %u does not fit term '%s'", i, terms[i]);
      max_ell = MAX (max_ell, n_ell);
      for (int d = 0; d < rank; d++)
        {
          int l = s.label[i][d];
          if (dims[d] != 1)
            extent[l] = dims[d];
          count[l]++;
        }
    }
  if (arrow)
    {
      /* An output ellipsis has as many dims as the widest operand ellipsis. */
      int n_ell, letters = 0;
      for (const char *p = arrow + 2; *p; p++)
        letters += letter_id (*p) >= 0;
      if (!parse_term (arrow + 2, letters + (strstr (arrow + 2, "...") ? max_ell : 0),
                       s.out_label, &s.out_rank, &n_ell))
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "bad output term");
    }
  else
    {
      for (int e = max_ell - 1; e >= 0; e--)
        s.out_label[s.out_rank++] = 52 + e;
      for (int l = 0; l < 52; l++)
        if (count[l] == 1)
          s.out_label[s.out_rank++] = l;
    }
  int ry;
  int64_t dy[FB_MAX_RANK];
  if (!_fb_lower_dims (node->outputs[0], &ry, dy) || ry != s.out_rank)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "output rank does not fit");

  gboolean in_out[MAX_LABELS] = { 0 };
  for (int d = 0; d < ry; d++)
    in_out[s.out_label[d]] = TRUE;
  FbKExpr *at[MAX_LABELS] = { 0 }, *oc[FB_MAX_RANK];
  double work = 1;
  for (int d = 0; d < ry; d++)
    work *= dy[d];
  for (int l = 0; l < MAX_LABELS; l++)
    if (count[l] && !in_out[l])
      work *= extent[l];
  GPtrArray *body = _fb_lower_nest (c, ry, dy, oc, work * node->n_inputs);
  for (int d = 0; d < ry; d++)
    at[s.out_label[d]] = oc[d];
  FbDType t = node->outputs[0]->dtype;
  guint acc = fb_kernel_new_acc (k, t);
  g_ptr_array_add (body, fb_ks_assign (k, acc, fb_dtype_is_float (t) ? fb_kx_const_f (k, t, 0.0)
                                                                    : fb_kx_const_i (k, t, 0)));
  GPtrArray *l = body;
  for (int lb = 0; lb < MAX_LABELS; lb++)
    if (count[lb] && !in_out[lb])
      l = _fb_lower_loop (k, l, fb_kx_index (k, extent[lb]), &at[lb]);
  FbKExpr *p = NULL;
  for (guint i = 0; i < node->n_inputs; i++)
    {
      FbKExpr *ic[FB_MAX_RANK];
      for (int d = 0; d < s.rank[i]; d++)
        ic[d] = at[s.label[i][d]] ? at[s.label[i][d]] : fb_kx_index (k, 0);
      FbKExpr *v = _fb_lower_value_at (c, node->inputs[i], s.rank[i], ic, error);
      if (v == NULL)
        return FALSE;
      v = fb_kx_cast (k, v, t);
      p = p ? fb_kx_binary (k, FB_KB_MUL, p, v) : v;
    }
  g_ptr_array_add (l, fb_ks_assign (k, acc, fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, acc), p)));
  return _fb_lower_store (c, body, node->outputs[0], oc, fb_kx_acc (k, acc), error);
}
