/* SPDX-License-Identifier: GPL-3.0-or-later */
/* layout: with --layout nhwc, runs 2-D convolutions and pools channels-last.
 *
 * Conv and ConvTranspose (with constant weights), MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool on
 * 4-D tensors, and fused epilogues built around such a Conv, are marked fb_layout=nhwc and
 * read and write NHWC tensors. Elementwise nodes (and fused elementwise groups) whose activations all arrive in
 * NHWC follow along, with their constant operands permuted, so a chain of convolutions passes
 * channels-last tensors straight from one to the next. So do the layout-agnostic movers that
 * sit between convolutions: Concat, Split and Slice (their axes renumbered: inception branches
 * and dense blocks join along the channels, now innermost; a ShuffleNet unit splits them) and
 * Resize / Upsample (their per-axis scales, sizes and region permuted: a feature pyramid's
 * upsampling), which would otherwise cost two full transposes of a large map each. A channel
 * shuffle as exporters write it (Reshape to [N, g, C/g, H, W], Transpose (0, 2, 1, 3, 4),
 * Reshape back) becomes the same shuffle of the channels-last tensor ([N, H, W, g, C/g],
 * Transpose (0, 1, 2, 4, 3)): one copy, where channels-first it cost a transpose on either
 * side too. A ReduceMean (Max, Min, Sum) of a map that arrives channels-last reduces it there.
 * Transposes are inserted only where an
 * NCHW value enters or leaves that region, flagged FB_NODE_INSERTED and carrying the
 * provenance of the node they serve; where the model itself already transposes between the
 * two layouts, the pair cancels instead. Weights keep ONNX's layout.
 *
 * A converted node writes a new NHWC value; the original NCHW value (same id and name) is then
 * produced by the transpose back, or disappears when nobody reads it in NCHW.
 *
 * Requires: fusions done (a fused epilogue moves as one), shapes inferred.
 * Preserves: ids and names of every NCHW value still read.
 * Invalidates: shapes of values inside converted fused bodies; the node list (re-sorted). */
#include "fb-pass-private.h"

#include <string.h>

static const int64_t TO_NHWC[4] = { 0, 2, 3, 1 };
static const int64_t TO_NCHW[4] = { 0, 3, 1, 2 };

typedef enum {
  ROLE_KEEP,      /* weights, scalars: untouched */
  ROLE_ACT,       /* an activation that must arrive in NHWC */
  ROLE_CONST,     /* a broadcast constant to permute */
  ROLE_AXES,      /* a constant with one entry per axis (Resize's scales, sizes; its roi, two) */
} Role;

typedef struct {
  FbPassContext *ctx;
  FbGraph       *graph;
  GHashTable    *nhwc_of;       /* NCHW value -> its NHWC twin */
  GHashTable    *converted;     /* nodes now running NHWC */
  GHashTable    *const_memo;    /* constant value -> permuted constant value */
  GHashTable    *axes_memo;     /* per-axis constant value -> renumbered one */
  GPtrArray     *outputs;       /* NCHW values whose producer was converted */
  GHashTable    *uses;          /* value -> its readers, as the pass found the graph */
  GHashTable    *dropped;       /* nodes replaced by channels-last ones, no longer read */
  guint          n_inserted, n_cancelled, n_views, n_shuffles;
} Layout;

static FbShape
permute_shape (const FbShape *s, const int64_t *perm)
{
  FbShape out = *s;

  if (s->rank != 4)
    return out;
  for (int i = 0; i < 4; i++)
    {
      out.dim[i] = s->dim[perm[i]];
      out.sym[i] = s->sym[perm[i]];
    }
  return out;
}

static gboolean
has_perm (const FbNode *n, const int64_t *perm)
{
  guint len = 0;
  const int64_t *p = fb_node_attr_ints (n, "perm", &len);

  if (n->op != FB_OP_TRANSPOSE || p == NULL || len != 4)
    return FALSE;
  for (int i = 0; i < 4; i++)
    if (p[i] != perm[i])
      return FALSE;
  return TRUE;
}

/* The NHWC position of NCHW axis a (negative counts from the end). */
static int64_t
nhwc_axis (int64_t a)
{
  a = a < 0 ? a + 4 : a;
  for (int i = 0; i < 4; i++)
    if (TO_NHWC[i] == a)
      return i;
  return a;
}

/* A node's axes of a 4-D tensor: its constant input in (when given) or else its "axes"
 * attribute, at most 4, each in [-4, 4), copied to storage; NULL when absent, not constant or
 * out of range. */
static const int64_t *
axes_list (const FbNode *n, const FbValue *in, guint *len, int64_t *storage)
{
  const int64_t *a = NULL;
  if (in != NULL && in->constant != NULL && in->constant->rank == 1 &&
      in->constant->dtype == FB_DTYPE_INT64 && in->constant->numel <= 4)
    {
      *len = (guint) in->constant->numel;
      for (guint i = 0; i < *len; i++)
        storage[i] = (int64_t) fb_tensor_get_f64 (in->constant, i);
      a = storage;
    }
  else if (in == NULL && (a = fb_node_attr_ints (n, "axes", len)) != NULL && *len <= 4)
    a = memcpy (storage, a, *len * sizeof *a);
  else
    return NULL;
  for (guint i = 0; i < *len; i++)
    if (a[i] < -4 || a[i] > 3)
      return NULL;
  return a;
}

/* A Slice's axes: the constant input from opset 10, the attribute before. */
static const int64_t *
slice_axes (const FbNode *n, guint *len, int64_t *storage)
{
  return axes_list (n, n->opset >= 10 || n->opset == 0 ? fb_node_input (n, 3) : NULL, len, storage);
}

/* A constant list of axes as the node's own: the attribute where it has one, else input k. */
static void
set_axes (Layout *l, FbNode *n, guint k, const int64_t *axes, guint len)
{
  guint given = 0;
  if (fb_node_attr_ints (n, "axes", &given) != NULL)
    {
      _fb_node_set_ints (l->graph, n, "axes", axes, len);
      return;
    }
  int64_t dim = len;
  g_autoptr(FbTensor) t = fb_tensor_new (FB_DTYPE_INT64, 1, &dim, NULL);
  for (guint i = 0; i < len; i++)
    fb_tensor_set_f64 (t, i, (double) axes[i]);
  n->inputs[k] = _fb_constant_new (l->graph, "axes", t);
}

static gboolean
is_rank4_act (const FbValue *v)
{
  return v != NULL && v->constant == NULL && v->shape.rank == 4;
}

static gboolean
is_spatial (const FbNode *n)
{
  switch (n->op)
    {
    case FB_OP_CONV:
    case FB_OP_CONV_TRANSPOSE:
      {
        /* Channels-last kernels repack the weights once, when compiling: they must be known. */
        const FbValue *w = fb_node_input (n, 1);
        return is_rank4_act (fb_node_input (n, 0)) && w != NULL && w->constant != NULL;
      }
    case FB_OP_AVERAGE_POOL:
    case FB_OP_GLOBAL_AVERAGE_POOL:
    case FB_OP_GLOBAL_MAX_POOL:
      return is_rank4_act (fb_node_input (n, 0));
    case FB_OP_MAX_POOL:
      return is_rank4_act (fb_node_input (n, 0)) && (n->n_outputs < 2 || n->outputs[1] == NULL);
    default:
      return FALSE;
    }
}

static gboolean
is_elementwise (const FbNode *n)
{
  return fb_op_has_flag (n->op, FB_OPF_ELEMENTWISE) && n->n_outputs == 1 && n->op != FB_OP_DROPOUT;
}

/* Concat, Split, Slice (with its axes given), Resize and Upsample, which run on any layout once
 * their axes are renumbered. */
static gboolean
is_axis_mover (const FbNode *n)
{
  switch (n->op)
    {
    case FB_OP_CONCAT:
      return n->n_outputs == 1;
    case FB_OP_SPLIT:
      return n->n_outputs >= 1;
    case FB_OP_SLICE:
      {
        int64_t storage[4];
        guint len = 0;
        return n->n_outputs == 1 && slice_axes (n, &len, storage) != NULL && len > 0;
      }
    case FB_OP_RESIZE:
      /* An axes attribute (opset 18) would need renumbering as well; left channels-first. */
      return n->n_outputs == 1 && fb_node_attr (n, "axes") == NULL;
    case FB_OP_UPSAMPLE:
      return n->n_outputs == 1 && n->n_inputs == 2;   /* scales as an input (opset 9) */
    default:
      return FALSE;
    }
}

/* Roles of a mover's inputs: activations, per-axis constants of 4 (8 for a roi), or a Split's
 * sizes, kept. */
static gboolean
mover_roles (const FbNode *n, Role *roles)
{
  for (guint k = 0; k < n->n_inputs; k++)
    {
      const FbValue *v = n->inputs[k];
      if (v == NULL)
        continue;
      if (n->op == FB_OP_CONCAT || k == 0)
        {
          if (!is_rank4_act (v))
            return FALSE;
          roles[k] = ROLE_ACT;
          continue;
        }
      if (n->op == FB_OP_SPLIT || n->op == FB_OP_SLICE)
        continue;              /* the parts' sizes, a slice's bounds: whatever the layout (a
                                  slice's axes are renumbered by convert) */
      if (v->constant == NULL || v->constant->rank != 1)
        return FALSE;
      if (v->constant->numel == 0)
        continue;              /* an empty roi or scales: nothing to renumber */
      if (v->constant->numel != 4 && v->constant->numel != 8)
        return FALSE;
      roles[k] = ROLE_AXES;
    }
  return TRUE;
}

/* The per-axis constant c renumbered for NHWC (each half of a roi on its own). */
static FbValue *
permuted_axes (Layout *l, FbValue *c)
{
  FbValue *done = g_hash_table_lookup (l->axes_memo, c);
  const FbTensor *t = c->constant;
  g_autoptr(FbTensor) out = NULL;

  if (done)
    return done;
  out = fb_tensor_new (t->dtype, 1, t->dims, NULL);
  for (int64_t half = 0; half < t->numel / 4; half++)
    for (int i = 0; i < 4; i++)
      fb_tensor_set_f64 (out, half * 4 + i, fb_tensor_get_f64 (t, half * 4 + TO_NHWC[i]));
  done = _fb_constant_new (l->graph, c->name, out);
  g_hash_table_insert (l->axes_memo, c, done);
  return done;
}

static Role
operand_role (const FbValue *v, gboolean *ok)
{
  if (v == NULL)
    return ROLE_KEEP;
  if (v->constant != NULL)
    {
      if (v->constant->numel == 1)
        return ROLE_KEEP;
      if (v->constant->rank <= 4)
        return ROLE_CONST;
      *ok = FALSE;
      return ROLE_KEEP;
    }
  if (v->shape.rank != 4)
    *ok = FALSE;
  return ROLE_ACT;
}

/* Roles of a fused body's inputs, from how its members read them; FALSE when the body holds
 * something that cannot run channels-last or an input plays two parts. */
static gboolean
body_roles (const FbNode *fused, FbGraph *body, Role *roles, gboolean *has_spatial)
{
  gboolean ok = TRUE;
  gboolean *seen = g_newa (gboolean, MAX (body->inputs->len, 1));

  *has_spatial = FALSE;
  for (guint k = 0; k < body->inputs->len; k++)
    seen[k] = FALSE;
  for (guint i = 0; i < body->nodes->len && ok; i++)
    {
      FbNode *m = g_ptr_array_index (body->nodes, i);
      gboolean spatial = is_spatial (m);
      if (!spatial && !is_elementwise (m))
        return FALSE;
      if (m->outputs[0] == NULL || m->outputs[0]->shape.rank != 4)
        return FALSE;
      *has_spatial = *has_spatial || spatial;
      for (guint j = 0; j < m->n_inputs; j++)
        {
          FbValue *v = m->inputs[j];
          guint k;
          Role r;
          if (v == NULL || !g_ptr_array_find (body->inputs, v, &k))
            continue;
          r = spatial ? (j == 0 ? ROLE_ACT : ROLE_KEEP) : operand_role (v, &ok);
          if (spatial && j == 0 && !is_rank4_act (v))
            ok = FALSE;
          if (seen[k] && roles[k] != r)
            ok = FALSE;
          roles[k] = r;
          seen[k] = TRUE;
        }
    }
  return ok;
}

/* The permuted copy of a constant broadcast against a rank-4 NCHW tensor. */
static FbValue *
permuted_const (Layout *l, FbValue *c)
{
  FbValue *done = g_hash_table_lookup (l->const_memo, c);
  const FbTensor *t = c->constant;
  int64_t dims[4], nd[4];
  g_autoptr(FbTensor) out = NULL;

  if (done)
    return done;
  for (int i = 0; i < 4; i++)
    dims[i] = i < 4 - t->rank ? 1 : t->dims[i - (4 - t->rank)];
  for (int i = 0; i < 4; i++)
    nd[i] = dims[TO_NHWC[i]];
  out = fb_tensor_new (t->dtype, 4, nd, NULL);
  for (int64_t n = 0; n < nd[0]; n++)
    for (int64_t h = 0; h < nd[1]; h++)
      for (int64_t w = 0; w < nd[2]; w++)
        for (int64_t ch = 0; ch < nd[3]; ch++)
          {
            int64_t src = ((n * dims[1] + ch) * dims[2] + h) * dims[3] + w;
            int64_t dst = ((n * nd[1] + h) * nd[2] + w) * nd[3] + ch;
            fb_tensor_set_f64 (out, dst, fb_tensor_get_f64 (t, src));
          }
  done = _fb_constant_new (l->graph, c->name, out);
  g_hash_table_insert (l->const_memo, c, done);
  return done;
}

static FbNode *
insert_transpose (Layout *l, FbValue *in, FbValue *out, const int64_t *perm, const FbNode *serves,
                  const char *suffix)
{
  g_autofree char *name = g_strdup_printf ("%s/%s", serves->name, suffix);
  FbNode *t = _fb_node_new (l->graph, FB_OP_TRANSPOSE, name, &in, 1, 1, serves);

  t->flags |= FB_NODE_INSERTED;
  _fb_node_set_ints (l->graph, t, "perm", perm, 4);
  fb_node_set_output (t, 0, out);
  l->n_inserted++;
  return t;
}

/* v in NHWC, for node serves: its twin, the input of a model transpose that undoes, or a new
 * transpose shared by every node that needs v this way. */
static FbValue *
to_nhwc (Layout *l, FbValue *v, const FbNode *serves)
{
  FbValue *twin = g_hash_table_lookup (l->nhwc_of, v);
  FbShape s;

  if (twin != NULL)
    {
      if (twin->producer && (twin->producer->flags & FB_NODE_INSERTED))
        fb_node_add_prov (l->graph, twin->producer, serves->prov, serves->n_prov);
      return twin;
    }
  if (v->producer && has_perm (v->producer, TO_NCHW) && v->producer->inputs[0] != NULL)
    {
      l->n_cancelled++;
      twin = v->producer->inputs[0];
      g_hash_table_insert (l->nhwc_of, v, twin);
      return twin;
    }
  s = permute_shape (&v->shape, TO_NHWC);
  twin = _fb_value_new (l->graph, v->name, v->dtype, &s);
  insert_transpose (l, v, twin, TO_NHWC, serves, "to_nhwc");
  g_hash_table_insert (l->nhwc_of, v, twin);
  return twin;
}

static void
convert (Layout *l, FbNode *n, const Role *roles)
{
  FbGraph *body = n->op == FB_OP_FUSED ? fb_node_attr_graph (n, "body") : NULL;

  for (guint k = 0; k < n->n_inputs; k++)
    {
      FbValue *v = n->inputs[k];
      FbValue *bv = body ? g_ptr_array_index (body->inputs, k) : NULL;
      if (v == NULL || roles[k] == ROLE_KEEP)
        continue;
      n->inputs[k] = roles[k] == ROLE_ACT    ? to_nhwc (l, v, n)
                     : roles[k] == ROLE_AXES ? permuted_axes (l, v)
                                             : permuted_const (l, v);
      if (bv != NULL)
        {
          bv->shape = n->inputs[k]->shape;
          if (bv->constant)
            {
              fb_tensor_unref (bv->constant);
              bv->constant = fb_tensor_ref (n->inputs[k]->constant);
            }
        }
    }
  if (body != NULL)
    for (guint i = 0; i < body->nodes->len; i++)
      {
        FbNode *m = g_ptr_array_index (body->nodes, i);
        if (is_spatial (m))
          _fb_node_set_string (body, m, FB_ATTR_LAYOUT, "nhwc");
        m->outputs[0]->shape = permute_shape (&m->outputs[0]->shape, TO_NHWC);
      }
  else if (is_spatial (n))
    _fb_node_set_string (l->graph, n, FB_ATTR_LAYOUT, "nhwc");
  else if (n->op == FB_OP_CONCAT || n->op == FB_OP_SPLIT)
    _fb_node_set_int (l->graph, n, "axis", nhwc_axis (fb_node_attr_int (n, "axis", 0)));
  else if (n->op == FB_OP_SLICE)
    {
      int64_t axes[4], renumbered[4];
      guint len = 0;
      slice_axes (n, &len, axes);
      for (guint i = 0; i < len; i++)
        renumbered[i] = nhwc_axis (axes[i]);
      set_axes (l, n, 3, renumbered, len);
    }

  for (guint k = 0; k < n->n_outputs; k++)
    {
      FbValue *o = n->outputs[k];
      FbShape s;
      FbValue *twin;
      if (o == NULL)
        continue;
      s = permute_shape (&o->shape, TO_NHWC);
      twin = _fb_value_new (l->graph, o->name, o->dtype, &s);
      fb_node_set_output (n, k, twin);
      o->producer = NULL;
      g_hash_table_insert (l->nhwc_of, o, twin);
      g_ptr_array_add (l->outputs, o);
    }
  g_hash_table_add (l->converted, n);
}

/* Whether n can run channels-last and, for layout-agnostic nodes, whether it is worth it: at
 * least one of its activations already arrives in NHWC. */
static gboolean
plan_node (Layout *l, FbNode *n, Role *roles)
{
  gboolean ok = TRUE, any_nhwc = FALSE, spatial = FALSE;
  FbGraph *body;

  for (guint k = 0; k < n->n_inputs; k++)
    roles[k] = ROLE_KEEP;
  for (guint k = 0; k < n->n_outputs; k++)
    if (n->outputs[k] == NULL || n->outputs[k]->shape.rank != 4)
      return FALSE;

  if (is_spatial (n))
    {
      roles[0] = ROLE_ACT;
      return TRUE;
    }
  if (n->op == FB_OP_FUSED && (body = fb_node_attr_graph (n, "body")) != NULL &&
      body->inputs->len == n->n_inputs && body_roles (n, body, roles, &spatial))
    {
      if (spatial)
        return TRUE;
    }
  else if (is_elementwise (n))
    {
      for (guint k = 0; k < n->n_inputs; k++)
        roles[k] = operand_role (n->inputs[k], &ok);
      if (!ok)
        return FALSE;
    }
  else if (is_axis_mover (n))
    {
      if (!mover_roles (n, roles))
        return FALSE;
    }
  else
    return FALSE;

  for (guint k = 0; k < n->n_inputs; k++)
    if (roles[k] == ROLE_ACT && g_hash_table_contains (l->nhwc_of, n->inputs[k]))
      any_nhwc = TRUE;
  return any_nhwc;
}

/* A tensor as a view of another one's elements in their row-major order: per axis its extent
 * and its stride there. */
typedef struct {
  int     rank;
  int64_t size[FB_MAX_RANK];
  int64_t stride[FB_MAX_RANK];
} View;

static gboolean
view_transpose (View *v, const FbNode *t)
{
  guint len = 0;
  const int64_t *perm = fb_node_attr_ints (t, "perm", &len);
  View out = { .rank = v->rank };
  if (perm == NULL || (int) len != v->rank)
    return FALSE;
  for (int i = 0; i < v->rank; i++)
    {
      if (perm[i] < 0 || perm[i] >= v->rank)
        return FALSE;
      out.size[i] = v->size[perm[i]];
      out.stride[i] = v->stride[perm[i]];
    }
  *v = out;
  return TRUE;
}

/* The view reshaped to shape, where that needs no copy: every run of axes merged into one
 * must lie as one strided run of the elements (the way a strided tensor library decides
 * whether a reshape can be a view). Axes of extent 1 carry no stride. */
static gboolean
view_reshape (View *v, const FbShape *shape)
{
  int64_t os[FB_MAX_RANK], ost[FB_MAX_RANK], ns[FB_MAX_RANK], nst[FB_MAX_RANK] = { 0 };
  int on = 0, nn = 0, at[FB_MAX_RANK];
  if (!fb_shape_is_static (shape) || fb_shape_numel (shape, NULL) == 0)
    return FALSE;
  for (int i = 0; i < v->rank; i++)
    if (v->size[i] != 1)
      {
        os[on] = v->size[i];
        ost[on++] = v->stride[i];
      }
  for (int i = 0; i < shape->rank; i++)
    if (shape->dim[i] != 1)
      {
        at[nn] = i;
        ns[nn++] = shape->dim[i];
      }
  int oi = 0, ni = 0;
  while (oi < on && ni < nn)
    {
      int oj = oi + 1, nj = ni + 1;
      int64_t op = os[oi], np = ns[ni];
      while (op != np)
        {
          if (np < op && nj < nn)
            np *= ns[nj++];
          else if (op < np && oj < on)
            op *= os[oj++];
          else
            return FALSE;
        }
      for (int k = oi; k + 1 < oj; k++)
        if (ost[k] != os[k + 1] * ost[k + 1])
          return FALSE;
      nst[nj - 1] = ost[oj - 1];
      for (int k = nj - 2; k >= ni; k--)
        nst[k] = nst[k + 1] * ns[k + 1];
      oi = oj;
      ni = nj;
    }
  if (oi != on || ni != nn)
    return FALSE;
  View out = { .rank = shape->rank };
  for (int i = 0; i < shape->rank; i++)
    out.size[i] = shape->dim[i];
  for (int k = 0; k < nn; k++)
    out.stride[at[k]] = nst[k];
  *v = out;
  return TRUE;
}

/* Whether the view reads the elements in their own order: a plain reshape of them. */
static gboolean
view_is_packed (const View *v)
{
  int64_t want = 1;
  for (int i = v->rank; i-- > 0;)
    if (v->size[i] != 1)
      {
        if (v->stride[i] != want)
          return FALSE;
        want *= v->size[i];
      }
  return TRUE;
}

/* Reader r of the NCHW value o (the transpose of twin, NHWC) starts a chain of Reshapes and
 * Transposes, each read only by the next: where the chain ends in a value that holds twin's
 * elements in twin's own order (a vision transformer's patch embedding, flattened and moved to
 * its tokens, is its channels-last output as it lies), that value becomes a Reshape of twin and
 * the chain goes. TRUE when it did. */
static gboolean
chain_to_reshape (Layout *l, FbValue *twin, FbNode *r, GHashTable *uses)
{
  View v = { .rank = 4 };
  const int64_t *twin_dims = twin->shape.dim;
  if (!fb_shape_is_static (&twin->shape) || twin->shape.rank != 4)
    return FALSE;
  /* o [n, c, h, w] reads twin [n, h, w, c]. */
  int64_t twin_stride[4] = { twin_dims[1] * twin_dims[2] * twin_dims[3],
                             twin_dims[2] * twin_dims[3], twin_dims[3], 1 };
  for (int i = 0; i < 4; i++)
    {
      v.size[i] = twin_dims[TO_NCHW[i]];
      v.stride[i] = twin_stride[TO_NCHW[i]];
    }
  for (FbNode *n = r; n != NULL;)
    {
      FbValue *out = n->n_outputs == 1 ? n->outputs[0] : NULL;
      if (out == NULL || n->inputs[0] == NULL)
        return FALSE;
      gboolean ok = n->op == FB_OP_TRANSPOSE   ? view_transpose (&v, n)
                    : n->op == FB_OP_RESHAPE ? view_reshape (&v, &out->shape)
                                             : FALSE;
      if (!ok)
        return FALSE;
      if (view_is_packed (&v))
        {
          int64_t rank = out->shape.rank;
          g_autoptr(FbTensor) dims = fb_tensor_new (FB_DTYPE_INT64, 1, &rank, NULL);
          for (int i = 0; i < out->shape.rank; i++)
            fb_tensor_set_f64 (dims, i, (double) out->shape.dim[i]);
          FbValue *in[2] = { twin, _fb_constant_new (l->graph, "shape", dims) };
          g_autofree char *name = g_strdup_printf ("%s/view", n->name);
          FbNode *reshape = _fb_node_new (l->graph, FB_OP_RESHAPE, name, in, 2, 1, n);
          FbValue *flat = _fb_value_new (l->graph, out->name, out->dtype, &out->shape);
          fb_node_set_output (reshape, 0, flat);
          if (!_fb_can_replace (out, flat))
            return FALSE;
          fb_graph_replace_uses (l->graph, out, flat);
          l->n_views++;
          return TRUE;
        }
      /* On through the single reader of a value nobody else reads. */
      GPtrArray *readers = g_hash_table_lookup (uses, out);
      if (out->is_output || readers == NULL || readers->len != 1)
        return FALSE;
      n = g_ptr_array_index (readers, 0);
    }
  return FALSE;
}

/* A ReduceMean, Max, Min or Sum of an NCHW value whose twin is channels-last reads the twin
 * instead, its axes renumbered: a head's mean over the map (torchvision's ShuffleNetV2, and
 * timm's models, write x.mean((2, 3)), not a global pool) needs no transpose of the last map.
 * With keepdims the result is the twin of the NCHW one, as a convolution's output is; without,
 * it is the NCHW result itself where the kept axes come in the same order in both layouts (the
 * channels reduced, or height and width both). TRUE when it converted n. */
static gboolean
convert_reduce (Layout *l, FbNode *n)
{
  if (n->op != FB_OP_REDUCE_MEAN && n->op != FB_OP_REDUCE_MAX && n->op != FB_OP_REDUCE_MIN &&
      n->op != FB_OP_REDUCE_SUM)
    return FALSE;
  FbValue *x = n->n_inputs >= 1 ? n->inputs[0] : NULL;
  FbValue *twin = x ? g_hash_table_lookup (l->nhwc_of, x) : NULL;
  int64_t axes[4];
  guint n_axes = 0;
  /* The axes: an attribute before opset 18 (13 for ReduceSum), then a constant input. */
  if (twin == NULL || n->n_outputs != 1 || n->outputs[0] == NULL ||
      axes_list (n, fb_node_input (n, 1), &n_axes, axes) == NULL || n_axes == 0)
    return FALSE;
  for (guint i = 0; i < n_axes; i++)
    axes[i] = axes[i] < 0 ? axes[i] + 4 : axes[i];
  gboolean keep = fb_node_attr_int (n, "keepdims", 1) != 0;
  gboolean reduced[4] = { FALSE };
  for (guint i = 0; i < n_axes; i++)
    reduced[axes[i]] = TRUE;
  if (!keep && !reduced[1] && !(reduced[2] && reduced[3]))
    return FALSE;

  int64_t renumbered[4];
  for (guint i = 0; i < n_axes; i++)
    renumbered[i] = nhwc_axis (axes[i]);
  set_axes (l, n, 1, renumbered, n_axes);
  n->inputs[0] = twin;
  if (keep)
    {
      FbValue *o = n->outputs[0];
      FbShape s = permute_shape (&o->shape, TO_NHWC);
      FbValue *out = _fb_value_new (l->graph, o->name, o->dtype, &s);
      fb_node_set_output (n, 0, out);
      o->producer = NULL;
      g_hash_table_insert (l->nhwc_of, o, out);
      g_ptr_array_add (l->outputs, o);
    }
  g_hash_table_add (l->converted, n);
  return TRUE;
}

/* The one reader of v, or NULL (several, none, or v an output of the graph). */
static FbNode *
sole_reader (Layout *l, const FbValue *v)
{
  GPtrArray *readers = g_hash_table_lookup (l->uses, v);
  return v->is_output || readers == NULL || readers->len != 1 ? NULL
                                                              : g_ptr_array_index (readers, 0);
}

/* A node of the channels-last shuffle: op on in, its output shaped dims, named after and
 * carrying the provenance of the model's node it stands for. */
static FbValue *
shuffle_step (Layout *l, FbOpKind op, FbValue *in, const int64_t *dims, int rank,
              const int64_t *perm, const FbNode *serves)
{
  FbShape shape = { .rank = rank };
  for (int i = 0; i < rank; i++)
    shape.dim[i] = dims[i];
  FbValue *inputs[2] = { in, NULL };
  if (op == FB_OP_RESHAPE)
    {
      int64_t r = rank;
      g_autoptr(FbTensor) t = fb_tensor_new (FB_DTYPE_INT64, 1, &r, NULL);
      for (int i = 0; i < rank; i++)
        fb_tensor_set_f64 (t, i, (double) dims[i]);
      inputs[1] = _fb_constant_new (l->graph, "shape", t);
    }
  g_autofree char *name = g_strdup_printf ("%s/nhwc", serves->name);
  FbNode *n = _fb_node_new (l->graph, op, name, inputs, op == FB_OP_RESHAPE ? 2 : 1, 1, serves);
  if (perm)
    _fb_node_set_ints (l->graph, n, "perm", perm, rank);
  FbValue *out = _fb_value_new (l->graph, serves->outputs[0]->name, in->dtype, &shape);
  fb_node_set_output (n, 0, out);
  return out;
}

/* Where r, a Reshape of an NCHW value with a channels-last twin, starts a channel shuffle
 * (Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose (0, 2, 1, 3, 4), Reshape back to
 * [N, C, H, W], each the only reader of the one before), the same shuffle on the twin
 * ([N, H, W, C] -> [N, H, W, g, C/g], Transpose (0, 1, 2, 4, 3), Reshape back) gives the
 * shuffled value's twin, and the model's three nodes go. TRUE when it did. */
static gboolean
convert_shuffle (Layout *l, FbNode *r)
{
  static const int64_t SHUFFLE_NCHW[5] = { 0, 2, 1, 3, 4 };
  static const int64_t SHUFFLE_NHWC[5] = { 0, 1, 2, 4, 3 };
  FbValue *o = r->n_inputs >= 1 ? r->inputs[0] : NULL;
  FbValue *twin = o ? g_hash_table_lookup (l->nhwc_of, o) : NULL;
  if (r->op != FB_OP_RESHAPE || twin == NULL || r->n_outputs != 1 || r->outputs[0] == NULL)
    return FALSE;
  const FbShape *in = &o->shape, *split = &r->outputs[0]->shape;
  /* g * (C/g) == C by division: a hostile model's empty tensor may carry any other extents. */
  if (!fb_shape_is_static (in) || in->rank != 4 || !fb_shape_is_static (split) || split->rank != 5 ||
      split->dim[0] != in->dim[0] || split->dim[1] <= 0 || split->dim[2] <= 0 ||
      in->dim[1] % split->dim[2] != 0 || in->dim[1] / split->dim[2] != split->dim[1] ||
      split->dim[3] != in->dim[2] || split->dim[4] != in->dim[3])
    return FALSE;
  FbNode *t = sole_reader (l, r->outputs[0]);
  guint len = 0;
  const int64_t *perm = t && t->op == FB_OP_TRANSPOSE ? fb_node_attr_ints (t, "perm", &len) : NULL;
  if (perm == NULL || len != 5 || memcmp (perm, SHUFFLE_NCHW, sizeof SHUFFLE_NCHW) != 0 ||
      t->outputs[0] == NULL)
    return FALSE;
  FbNode *back = sole_reader (l, t->outputs[0]);
  if (back == NULL || back->op != FB_OP_RESHAPE || back->outputs[0] == NULL ||
      !fb_shape_equal (&back->outputs[0]->shape, in))
    return FALSE;

  int64_t n = in->dim[0], h = in->dim[2], w = in->dim[3], c = in->dim[1];
  int64_t g = split->dim[1], cg = split->dim[2];
  int64_t grouped[5] = { n, h, w, g, cg }, swapped[5] = { n, h, w, cg, g }, flat[4] = { n, h, w, c };
  FbValue *v = shuffle_step (l, FB_OP_RESHAPE, twin, grouped, 5, NULL, r);
  v = shuffle_step (l, FB_OP_TRANSPOSE, v, swapped, 5, SHUFFLE_NHWC, t);
  v = shuffle_step (l, FB_OP_RESHAPE, v, flat, 4, NULL, back);

  /* The shuffled NCHW value now comes from its twin, through a transpose back where some
   * reader still wants it channels-first (finish_output). */
  FbValue *shuffled = back->outputs[0];
  FbValue *unread = _fb_value_new (l->graph, shuffled->name, shuffled->dtype, &shuffled->shape);
  fb_node_set_output (back, 0, unread);
  shuffled->producer = NULL;
  g_hash_table_insert (l->nhwc_of, shuffled, v);
  g_ptr_array_add (l->outputs, shuffled);
  g_hash_table_add (l->dropped, r);
  g_hash_table_add (l->dropped, t);
  g_hash_table_add (l->dropped, back);
  l->n_shuffles++;
  return TRUE;
}

/* The NCHW value o is read by someone that stayed NCHW (or is a graph output): a transpose back
 * produces it, unless every such reader is a model transpose to NHWC, which then cancels, or
 * starts a chain of moves that ends in twin's own order (chain_to_reshape). */
static void
finish_output (Layout *l, FbValue *o, GHashTable *uses)
{
  FbValue *twin = g_hash_table_lookup (l->nhwc_of, o);
  GPtrArray *users = g_hash_table_lookup (uses, o);
  gboolean needed = o->is_output;

  for (guint u = 0; users && u < users->len; u++)
    {
      FbNode *r = g_ptr_array_index (users, u);
      if (g_hash_table_contains (l->dropped, r))
        continue;
      if (has_perm (r, TO_NHWC) && r->outputs[0] && _fb_can_replace (r->outputs[0], twin))
        {
          fb_graph_replace_uses (l->graph, r->outputs[0], twin);
          l->n_cancelled++;
          continue;
        }
      if (r->n_inputs >= 1 && r->inputs[0] == o && chain_to_reshape (l, twin, r, uses))
        continue;
      needed = TRUE;
    }
  if (needed)
    insert_transpose (l, twin, o, TO_NCHW, twin->producer, "to_nchw");
}

gboolean
_fb_pass_layout (FbPassContext *ctx, FbGraph *graph, GError **error)
{
  g_autoptr(GHashTable) nhwc_of = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) converted = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) const_memo = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) axes_memo = g_hash_table_new (NULL, NULL);
  g_autoptr(GPtrArray) outputs = g_ptr_array_new ();
  g_autoptr(GHashTable) dropped = g_hash_table_new (NULL, NULL);
  g_autoptr(GPtrArray) order = NULL;
  g_autoptr(GHashTable) uses = NULL;
  Layout l = { ctx, graph, nhwc_of, converted, const_memo, axes_memo, outputs, NULL, dropped,
               0, 0, 0, 0 };

  if (ctx->options->layout != FB_LAYOUT_NHWC)
    return TRUE;
  g_autoptr(GHashTable) found_uses = fb_graph_build_uses (graph);
  l.uses = found_uses;

  order = g_ptr_array_copy (graph->nodes, NULL, NULL);
  for (guint i = 0; i < order->len; i++)
    {
      FbNode *n = g_ptr_array_index (order, i);
      Role *roles = g_newa (Role, MAX (n->n_inputs, 1));
      if (g_hash_table_contains (dropped, n) || convert_shuffle (&l, n) || convert_reduce (&l, n))
        continue;
      if (plan_node (&l, n, roles))
        convert (&l, n, roles);
    }
  if (outputs->len == 0)
    return TRUE;

  /* Who still reads each NCHW value, now that converted readers read its twin. */
  uses = fb_graph_build_uses (graph);
  for (guint i = 0; i < outputs->len; i++)
    finish_output (&l, g_ptr_array_index (outputs, i), uses);

  if (!fb_graph_toposort (graph, error))
    return FALSE;
  fb_graph_remove_dead (graph);
  _fb_pass_note (ctx, "%u nodes run NHWC, inserted %u transposes", g_hash_table_size (converted),
                 l.n_inserted);
  if (l.n_cancelled)
    _fb_pass_note (ctx, "cancelled %u transpose pairs", l.n_cancelled);
  if (l.n_shuffles)
    _fb_pass_note (ctx, "%u channel shuffles run on the channels-last tensors", l.n_shuffles);
  if (l.n_views)
    _fb_pass_note (ctx, "%u chains of moves back from NHWC are reshapes of it", l.n_views);
  return TRUE;
}
