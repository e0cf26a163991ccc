/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for nodes that run subgraphs: If (both branches, merged), Loop (loop-carried values
 * to a fixed point, scan outputs stacked), Scan (states to a fixed point, slices in and out)
 * and the fused groups that passes create. */
#include "fb-infer-private.h"
#include "fb-scan-spec.h"

/* Loop-carried shapes are generalized at most this many times before giving up on them; each
 * round can only forget information, so real bodies settle in one or two. */
#define LOOP_MAX_ROUNDS 4

/* Real models nest control flow a few levels at most; a file that nests deeper is refused
 * rather than recursed into without bound. */
#define MAX_NESTING 32

static int
nesting (const FbGraph *g)
{
  int depth = 0;

  for (; g != NULL && g->parent != NULL; g = g->parent)
    depth++;
  return depth;
}

static FbGraph *
require_body (const FbNode *node, const char *attr, GError **error)
{
  FbGraph *body = fb_node_attr_graph (node, attr);

  if (body == NULL)
    _fb_infer_invalid (error, node, "the graph attribute '%s' is missing", attr);
  return body;
}

static gboolean
infer_body (const FbNode *node, const char *attr, FbGraph *body, GError **error)
{
  GError *local = NULL;

  if (nesting (body) > MAX_NESTING)
    return _fb_infer_unsupported (error, node, "subgraphs are nested more than %d deep",
                                  MAX_NESTING);
  if (fb_infer_graph (body, &local))
    return TRUE;
  g_propagate_prefixed_error (error, local, "in the '%s' body of node '%s' (%s): ", attr,
                              node->name ? node->name : "", node->op_type);
  return FALSE;
}

/* ---- If --------------------------------------------------------------------------------------- */

/* The kind of an output whose branches make a and b: the same, or an optional where one branch
 * gives the optional and the other what it holds. */
static gboolean
join_kinds (const FbNode *node, guint k, FbValueKind a, FbValueKind b, FbValueKind *out,
            GError **error)
{
  gboolean seq_a = a == FB_KIND_SEQUENCE || a == FB_KIND_OPTIONAL_SEQUENCE;
  gboolean seq_b = b == FB_KIND_SEQUENCE || b == FB_KIND_OPTIONAL_SEQUENCE;

  *out = a;
  if (a == b)
    return TRUE;
  if (seq_a != seq_b)
    return _fb_infer_fail (error, node, "output %u is a %s in the then branch but a %s in the "
                           "else branch", k, fb_value_kind_name (a), fb_value_kind_name (b));
  *out = seq_a ? FB_KIND_OPTIONAL_SEQUENCE : FB_KIND_OPTIONAL;
  return TRUE;
}

gboolean
_fb_infer_if (FbGraph *graph, FbNode *node, GError **error)
{
  FbGraph *then_g, *else_g;

  if (_fb_infer_require (node, 0, error) == NULL ||
      !_fb_infer_check_type (node, 0, FB_TYPES_BOOL, error) ||
      !_fb_infer_check_one_element (node, 0, "the condition", error) ||
      (then_g = require_body (node, "then_branch", error)) == NULL ||
      (else_g = require_body (node, "else_branch", error)) == NULL ||
      !infer_body (node, "then_branch", then_g, error) ||
      !infer_body (node, "else_branch", else_g, error))
    return FALSE;
  if (then_g->outputs->len != node->n_outputs || else_g->outputs->len != node->n_outputs)
    return _fb_infer_invalid (error, node, "has %u outputs but its branches give %u and %u",
                              node->n_outputs, then_g->outputs->len, else_g->outputs->len);
  for (guint k = 0; k < node->n_outputs; k++)
    {
      FbValue *t = g_ptr_array_index (then_g->outputs, k);
      FbValue *e = g_ptr_array_index (else_g->outputs, k);
      FbDType dtype = t->dtype != FB_DTYPE_UNDEFINED ? t->dtype : e->dtype;
      FbValueKind kind;
      FbShape shape;

      if (t->dtype != FB_DTYPE_UNDEFINED && e->dtype != FB_DTYPE_UNDEFINED && t->dtype != e->dtype)
        return _fb_infer_fail (error, node, "output %u is %s in the then branch but %s in the "
                               "else branch", k, fb_dtype_name (t->dtype), fb_dtype_name (e->dtype));
      /* Either branch may run: only what both agree on is known. */
      shape = _fb_shape_join (&t->shape, &e->shape);
      if (!join_kinds (node, k, t->kind, e->kind, &kind, error) ||
          !_fb_infer_set_kind (node, k, kind, error) ||
          !_fb_infer_set_output (node, k, dtype, &shape, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- Loop ------------------------------------------------------------------------------------- */

typedef struct {
  FbValue    *value;
  FbValueKind kind;
  FbDType     dtype;
  FbShape     shape;
} Saved;

static void
save_value (GArray *saved, FbValue *v)
{
  Saved s = { v, v->kind, v->dtype, v->shape };
  g_array_append_val (saved, s);
}

/* What the file declared for every value of a body (and of bodies within it), so that another
 * round of inference starts from the declarations rather than from the previous round. */
static void
snapshot (FbGraph *g, GArray *saved)
{
  for (guint i = 0; i < g->inputs->len; i++)
    save_value (saved, g_ptr_array_index (g->inputs, i));
  for (guint i = 0; i < g->values->len; i++)
    save_value (saved, g_ptr_array_index (g->values, i));
  for (guint i = 0; i < g->subgraphs->len; i++)
    snapshot (g_ptr_array_index (g->subgraphs, i), saved);
}

static void
restore (GArray *saved)
{
  for (guint i = 0; i < saved->len; i++)
    {
      Saved *s = &g_array_index (saved, Saved, i);
      s->value->kind = s->kind;
      s->value->dtype = s->dtype;
      s->value->shape = s->shape;
    }
}

/* The iteration count when it is fixed at compile time: a constant M, and a condition that
 * cannot stop the loop early (absent or constant true, and passed through or constant true in
 * the body). -1 otherwise. */
static int64_t
trip_count (const FbNode *node, const FbGraph *body)
{
  FbValue *m = fb_node_input (node, 0);
  FbValue *cond = fb_node_input (node, 1);
  FbValue *body_cond_in = g_ptr_array_index (body->inputs, 1);
  FbValue *body_cond_out = g_ptr_array_index (body->outputs, 0);
  gboolean cond_true = cond == NULL || (cond->constant != NULL && cond->constant->numel == 1 &&
                                        fb_tensor_get_i64 (cond->constant, 0) != 0);
  gboolean body_true = body_cond_out->constant != NULL && body_cond_out->constant->numel == 1 &&
                       fb_tensor_get_i64 (body_cond_out->constant, 0) != 0;

  if (m == NULL || m->constant == NULL || m->constant->numel != 1)
    return -1;
  if (!body_true && !(cond_true && body_cond_out == body_cond_in))
    return -1;
  return MAX (fb_tensor_get_i64 (m->constant, 0), 0);
}

static gboolean
bind_loop_inputs (const FbNode *node, FbGraph *body, guint n_carried, const FbDType *types,
                  const FbShape *carried, GError **error)
{
  FbShape scalar = fb_shape_scalar ();

  if (!_fb_infer_merge_value (node, g_ptr_array_index (body->inputs, 0), FB_DTYPE_INT64, &scalar,
                              error) ||
      !_fb_infer_merge_value (node, g_ptr_array_index (body->inputs, 1), FB_DTYPE_BOOL, &scalar,
                              error))
    return FALSE;
  for (guint k = 0; k < n_carried; k++)
    {
      FbValue *in = g_ptr_array_index (body->inputs, 2 + k);
      /* A body input declared optional takes the plain value too (Loop-16 with an empty
       * optional sequence that the body fills). */
      if (in->kind == FB_KIND_TENSOR)
        in->kind = node->inputs[2 + k]->kind;
      if (!_fb_infer_merge_value (node, in, types[k], &carried[k], error))
        return FALSE;
    }
  return TRUE;
}

gboolean
_fb_infer_loop (FbGraph *graph, FbNode *node, GError **error)
{
  g_autoptr(GArray) saved = g_array_new (FALSE, FALSE, sizeof (Saved));
  g_autofree FbShape *carried = NULL;
  g_autofree FbDType *types = NULL;
  guint n_carried, n_scan;
  FbGraph *body;
  gboolean settled = FALSE, nested;
  int64_t trips;

  if (node->n_inputs < 2)
    return _fb_infer_invalid (error, node, "needs the inputs M and cond (either may be empty)");
  if (!_fb_infer_check_type (node, 0, FB_TYPES_INT64, error) ||
      !_fb_infer_check_scalar (node, 0, "M", TRUE, error) ||
      !_fb_infer_check_type (node, 1, FB_TYPES_BOOL, error) ||
      !_fb_infer_check_one_element (node, 1, "cond", error) ||
      (body = require_body (node, "body", error)) == NULL)
    return FALSE;
  n_carried = node->n_inputs - 2;
  for (guint k = 0; k < n_carried; k++)
    if (_fb_infer_require (node, 2 + k, error) == NULL)
      return FALSE;
  if (body->inputs->len != 2 + n_carried || body->outputs->len < 1 + n_carried)
    return _fb_infer_invalid (error, node, "carries %u values but its body takes %u inputs and "
                              "gives %u outputs", n_carried, body->inputs->len, body->outputs->len);
  n_scan = body->outputs->len - 1 - n_carried;
  if (node->n_outputs > n_carried + n_scan)
    return _fb_infer_invalid (error, node, "has %u outputs but its body gives only %u",
                              node->n_outputs, n_carried + n_scan);

  carried = g_new (FbShape, MAX (n_carried, 1));
  types = g_new (FbDType, MAX (n_carried, 1));
  /* Each round re-infers the body and the loops within it, so the rounds multiply with nesting:
   * loops inside loops start from unknown carried shapes and settle in one round. */
  nested = nesting (graph) >= 2;
  for (guint k = 0; k < n_carried; k++)
    {
      carried[k] = nested ? fb_shape_unknown () : node->inputs[2 + k]->shape;
      types[k] = node->inputs[2 + k]->dtype;
    }
  snapshot (body, saved);

  /* Infer the body with the carried shapes, widen them by what the body makes of them, and go
   * again until they stop changing: then they hold for every iteration. */
  for (int round = 0; !settled; round++)
    {
      if (round > 0)
        restore (saved);
      if (!bind_loop_inputs (node, body, n_carried, types, carried, error) ||
          !infer_body (node, "body", body, error))
        return FALSE;
      settled = TRUE;
      for (guint k = 0; k < n_carried; k++)
        {
          FbValue *o = g_ptr_array_index (body->outputs, 1 + k);
          FbShape joined;

          if (types[k] == FB_DTYPE_UNDEFINED)
            types[k] = o->dtype;
          else if (o->dtype != FB_DTYPE_UNDEFINED && o->dtype != types[k])
            return _fb_infer_fail (error, node, "loop-carried value %u enters as %s but the body "
                                   "makes it %s", k, fb_dtype_name (types[k]),
                                   fb_dtype_name (o->dtype));
          joined = _fb_shape_join (&carried[k], &o->shape);
          if (!fb_shape_equal (&joined, &carried[k]) && round + 1 >= LOOP_MAX_ROUNDS)
            joined = fb_shape_unknown ();
          if (!fb_shape_equal (&joined, &carried[k]))
            {
              carried[k] = joined;
              settled = FALSE;
            }
        }
    }

  trips = trip_count (node, body);
  for (guint k = 0; k < node->n_outputs; k++)
    {
      if (k < n_carried)
        {
          FbValue *o = g_ptr_array_index (body->outputs, 1 + k);
          if (!_fb_infer_set_kind (node, k, o->kind, error) ||
              !_fb_infer_set_output (node, k, types[k], &carried[k], error))
            return FALSE;
        }
      else
        {
          /* Scan outputs stack the per-iteration values along a new first axis. */
          FbValue *o = g_ptr_array_index (body->outputs, 1 + k);
          FbShape s = fb_shape_unknown ();
          if (o->kind != FB_KIND_TENSOR)
            return _fb_infer_fail (error, node, "scan output '%s' is a %s; scan outputs are "
                                   "tensors", o->name, fb_value_kind_name (o->kind));
          if (o->shape.rank >= 0)
            {
              if (!_fb_infer_check_rank (node, (int64_t) o->shape.rank + 1, error))
                return FALSE;
              s = _fb_shape_of_rank (o->shape.rank + 1);
              s.dim[0] = trips;
              for (int i = 0; i < o->shape.rank; i++)
                {
                  s.dim[i + 1] = o->shape.dim[i];
                  s.sym[i + 1] = o->shape.sym[i];
                }
            }
          if (!_fb_infer_set_output (node, k, o->dtype, &s, error))
            return FALSE;
        }
    }
  return TRUE;
}

/* ---- Scan ------------------------------------------------------------------------------------- */

/* s without dimension d. */
static FbShape
shape_drop (const FbShape *s, int d)
{
  FbShape r = *s;

  r.rank = s->rank - 1;
  for (int i = d; i < r.rank; i++)
    {
      r.dim[i] = s->dim[i + 1];
      r.sym[i] = s->sym[i + 1];
    }
  return r;
}

/* s with a dimension of extent dim (named sym) inserted at d; s->rank < FB_MAX_RANK. */
static FbShape
shape_insert (const FbShape *s, int d, int64_t dim, const char *sym)
{
  FbShape r = *s;

  r.rank = s->rank + 1;
  for (int i = r.rank - 1; i > d; i--)
    {
      r.dim[i] = s->dim[i - 1];
      r.sym[i] = s->sym[i - 1];
    }
  r.dim[d] = dim;
  r.sym[d] = dim >= 0 ? NULL : sym;
  return r;
}

/* The extent a scan input is scanned along, or the batch, merged into *dim: error when two
 * inputs disagree. */
static gboolean
merge_extent (const FbNode *node, const FbShape *s, int d, const char *what, int64_t *dim,
              const char **sym, GError **error)
{
  if (s->dim[d] >= 0 && *dim >= 0 && s->dim[d] != *dim)
    return _fb_infer_fail (error, node, "the scan inputs disagree on the %s: %" G_GINT64_FORMAT
                           " and %" G_GINT64_FORMAT, what, *dim, s->dim[d]);
  if (s->dim[d] >= 0)
    *dim = s->dim[d];
  else if (*sym == NULL)
    *sym = s->sym[d];
  return TRUE;
}

gboolean
_fb_infer_scan (FbGraph *graph, FbNode *node, GError **error)
{
  g_auto(FbScanSpec) spec = { 0 };
  g_autoptr(GArray) saved = g_array_new (FALSE, FALSE, sizeof (Saved));
  g_autofree FbShape *carried = NULL, *slices = NULL;
  g_autofree FbDType *types = NULL;
  GError *local = NULL;
  int64_t seq = FB_DIM_UNKNOWN, batch = FB_DIM_UNKNOWN;
  const char *seq_sym = NULL, *batch_sym = NULL;
  gboolean settled = FALSE;
  FbGraph *body;

  if (!fb_scan_spec_read (node, &spec, &local))
    {
      _fb_infer_invalid (error, node, "%s", local->message);
      g_error_free (local);
      return FALSE;
    }
  body = fb_node_attr_graph (node, "body");
  if (spec.batched && (!_fb_infer_check_type (node, 0, FB_TYPES_INT64, error) ||
                       (fb_node_input (node, 0) != NULL && node->inputs[0]->shape.rank >= 0 &&
                        node->inputs[0]->shape.rank != 1 &&
                        !_fb_infer_fail (error, node, "sequence_lens must be a vector"))))
    return FALSE;
  for (guint i = spec.first; i < node->n_inputs; i++)
    if (_fb_infer_require (node, i, error) == NULL)
      return FALSE;

  /* What one iteration sees of each scan input: the input without its scan axis (and, for
   * Scan-8, without the batch). */
  slices = g_new (FbShape, MAX (spec.n_in, 1));
  for (guint j = 0; j < spec.n_in; j++)
    {
      const FbShape *s = &node->inputs[spec.first + spec.n_state + j]->shape;
      int a;
      slices[j] = fb_shape_unknown ();
      if (s->rank < 0)
        continue;
      if (!fb_axis_normalize (spec.in_axis[j], s->rank, &a) || (spec.batched && s->rank < 2))
        return _fb_infer_fail (error, node, "scan input %u of rank %d has no scan axis %"
                               G_GINT64_FORMAT, j, s->rank, spec.in_axis[j]);
      if (!merge_extent (node, s, a, "sequence length", &seq, &seq_sym, error) ||
          (spec.batched && !merge_extent (node, s, 0, "batch", &batch, &batch_sym, error)))
        return FALSE;
      slices[j] = shape_drop (s, a);
      if (spec.batched)
        slices[j] = shape_drop (&slices[j], 0);
    }
  carried = g_new (FbShape, MAX (spec.n_state, 1));
  types = g_new (FbDType, MAX (spec.n_state, 1));
  for (guint k = 0; k < spec.n_state; k++)
    {
      const FbValue *v = node->inputs[spec.first + k];
      types[k] = v->dtype;
      carried[k] = v->shape;
      if (spec.batched && v->shape.rank >= 0)
        {
          if (v->shape.rank < 1 ||
              !merge_extent (node, &v->shape, 0, "batch", &batch, &batch_sym, error))
            return v->shape.rank < 1 ? _fb_infer_fail (error, node, "state %u has no batch axis", k)
                                     : FALSE;
          carried[k] = shape_drop (&v->shape, 0);
        }
    }

  /* As for Loop: infer the body, widen the states by what it makes of them, until they hold for
   * every iteration. */
  snapshot (body, saved);
  for (int round = 0; !settled; round++)
    {
      if (round > 0)
        restore (saved);
      for (guint k = 0; k < spec.n_state; k++)
        if (!_fb_infer_merge_value (node, g_ptr_array_index (body->inputs, k), types[k],
                                    &carried[k], error))
          return FALSE;
      for (guint j = 0; j < spec.n_in; j++)
        if (!_fb_infer_merge_value (node, g_ptr_array_index (body->inputs, spec.n_state + j),
                                    node->inputs[spec.first + spec.n_state + j]->dtype, &slices[j],
                                    error))
          return FALSE;
      if (!infer_body (node, "body", body, error))
        return FALSE;
      settled = TRUE;
      for (guint k = 0; k < spec.n_state; k++)
        {
          FbValue *o = g_ptr_array_index (body->outputs, k);
          FbShape joined;
          if (types[k] == FB_DTYPE_UNDEFINED)
            types[k] = o->dtype;
          else if (o->dtype != FB_DTYPE_UNDEFINED && o->dtype != types[k])
            return _fb_infer_fail (error, node, "state %u enters as %s but the body makes it %s", k,
                                   fb_dtype_name (types[k]), fb_dtype_name (o->dtype));
          joined = _fb_shape_join (&carried[k], &o->shape);
          if (!fb_shape_equal (&joined, &carried[k]) && round + 1 >= LOOP_MAX_ROUNDS)
            joined = fb_shape_unknown ();
          if (!fb_shape_equal (&joined, &carried[k]))
            {
              carried[k] = joined;
              settled = FALSE;
            }
        }
    }

  for (guint k = 0; k < node->n_outputs; k++)
    {
      FbShape s;
      FbDType t;
      if (k < spec.n_state)
        {
          s = carried[k];
          t = types[k];
          if (spec.batched && s.rank >= 0)
            {
              if (!_fb_infer_check_rank (node, (int64_t) s.rank + 1, error))
                return FALSE;
              s = shape_insert (&s, 0, batch, batch_sym);
            }
        }
      else
        {
          /* The slices of every iteration stack along the scan output's axis. */
          guint j = k - spec.n_state;
          FbValue *o = g_ptr_array_index (body->outputs, k);
          int a;
          s = o->shape;
          t = o->dtype;
          if (s.rank >= 0)
            {
              int extra = spec.batched ? 2 : 1;
              if (!_fb_infer_check_rank (node, (int64_t) s.rank + extra, error))
                return FALSE;
              if (!fb_axis_normalize (spec.out_axis[j], s.rank + 1, &a))
                return _fb_infer_fail (error, node, "scan_output_axes[%u] = %" G_GINT64_FORMAT
                                       " is out of range for rank %d", j, spec.out_axis[j],
                                       s.rank + 1);
              if (spec.batched)
                {
                  FbShape with_seq = shape_insert (&s, 0, seq, seq_sym);
                  s = shape_insert (&with_seq, 0, batch, batch_sym);
                }
              else
                s = shape_insert (&s, a, seq, seq_sym);
            }
        }
      if (!_fb_infer_set_output (node, k, t, &s, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- fused groups ----------------------------------------------------------------------------- */

gboolean
_fb_infer_fused (FbGraph *graph, FbNode *node, GError **error)
{
  FbGraph *body = require_body (node, "body", error);

  if (body == NULL)
    return FALSE;
  if (body->inputs->len != node->n_inputs || body->outputs->len != node->n_outputs)
    return _fb_infer_invalid (error, node, "has %u inputs and %u outputs but its body has %u and %u",
                              node->n_inputs, node->n_outputs, body->inputs->len,
                              body->outputs->len);
  /* Body inputs stand for the node's inputs, in order. */
  for (guint i = 0; i < node->n_inputs; i++)
    {
      FbValue *v = node->inputs[i];
      if (v != NULL && !_fb_infer_merge_value (node, g_ptr_array_index (body->inputs, i), v->dtype,
                                               &v->shape, error))
        return FALSE;
    }
  if (!infer_body (node, "body", body, error))
    return FALSE;
  for (guint k = 0; k < node->n_outputs; k++)
    {
      FbValue *o = g_ptr_array_index (body->outputs, k);
      if (!_fb_infer_set_output (node, k, o->dtype, &o->shape, error))
        return FALSE;
    }
  return TRUE;
}
