/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for nodes that run subgraphs: If (both branches, merged), Loop (loop-carried values
 * to a fixed point, scan outputs stacked) and the fused groups that passes create. */
#include "fb-infer-private.h"

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
      FbShape shape;

      if (t->dtype != FB_DTYPE_UNDEFINED && e->dtype != FB_DTYPE_UNDEFINED && t->dtype != e->dtype)
        return _fb_infer_fail (error, node, "output %u is %s in the then branch but %s in the "
                               "else branch", k, fb_dtype_name (t->dtype), fb_dtype_name (e->dtype));
      /* Either branch may run: only what both agree on is known. */
      shape = _fb_shape_join (&t->shape, &e->shape);
      if (!_fb_infer_set_output (node, k, dtype, &shape, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- Loop ------------------------------------------------------------------------------------- */

typedef struct {
  FbValue *value;
  FbDType  dtype;
  FbShape  shape;
} Saved;

static void
save_value (GArray *saved, FbValue *v)
{
  Saved s = { v, v->dtype, v->shape };
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
    if (!_fb_infer_merge_value (node, g_ptr_array_index (body->inputs, 2 + k), types[k],
                                &carried[k], error))
      return FALSE;
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
          if (!_fb_infer_set_output (node, k, types[k], &carried[k], error))
            return FALSE;
        }
      else
        {
          /* Scan outputs stack the per-iteration values along a new first axis. */
          FbValue *o = g_ptr_array_index (body->outputs, 1 + k);
          FbShape s = fb_shape_unknown ();
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
