/* SPDX-License-Identifier: GPL-3.0-or-later */
/* plan.json: a plan without its kernel IR (what running needs: buffers, kernels' functions,
 * extents and arguments, provenance), and back. Reading checks every index against the
 * tables it points into, so a damaged file is an error, never a wild pointer. */
#include "fb-bundle-private.h"

#include <string.h>

static const char *const buffer_kinds[] = { "input", "const", "output", "value", "scratch" };
static const char *const kernel_kinds[] = { "loops", "library", "view", "host" };
static const char *const arg_roles[] = { "in", "out", "temp" };

/* "sum" (an Add in place), "swish", "hardswish" and "gelu" came after the others, in
 * FbConvPostKind's order: bundles from before them still read. */
static const char *const post_kinds[] = { "none", "relu", "clip", "tanh", "sigmoid", "add", "max",
                                           "min", "sum", "swish", "hardswish", "gelu" };
G_STATIC_ASSERT (G_N_ELEMENTS (post_kinds) == FB_CONV_POST_GELU + 1);

/* The geometry of a convolution phase as a flat list, in this order. */
#define N_GEOMETRY 19

static void
geometry_out (const FbConvDesc *d, int64_t *v)
{
  int64_t g[N_GEOMETRY] = { d->n, d->c, d->h, d->w, d->co, d->oh, d->ow, d->groups, d->kh, d->kw,
                            d->sh, d->sw, d->dh, d->dw, d->pt, d->pl, d->pb, d->pr, d->has_bias };
  memcpy (v, g, sizeof g);
}

static void
geometry_in (FbConvDesc *d, const int64_t *v)
{
  int64_t *f[N_GEOMETRY] = { &d->n, &d->c, &d->h, &d->w, &d->co, &d->oh, &d->ow, &d->groups,
                             &d->kh, &d->kw, &d->sh, &d->sw, &d->dh, &d->dw, &d->pt, &d->pl,
                             &d->pb, &d->pr, &d->has_bias };
  for (int i = 0; i < N_GEOMETRY; i++)
    *f[i] = v[i];
}

static JsonArray *
int_array (guint n, const int64_t *v)
{
  JsonArray *a = json_array_sized_new (n);
  for (guint i = 0; i < n; i++)
    json_array_add_int_element (a, v[i]);
  return a;
}

static JsonArray *
uint_array (GArray *v)
{
  JsonArray *a = json_array_sized_new (v->len);
  for (guint i = 0; i < v->len; i++)
    json_array_add_int_element (a, g_array_index (v, guint, i));
  return a;
}

static JsonObject *
conv_to_json (const FbKConv *cv)
{
  JsonObject *o = json_object_new ();
  /* Written only for deconvolutions, so that plans from before them read the same. */
  if (cv->desc.transposed)
    json_object_set_string_member (o, "primitive", "deconvolution");
  int64_t geometry[N_GEOMETRY];
  geometry_out (&cv->desc, geometry);
  json_object_set_array_member (o, "geometry", int_array (N_GEOMETRY, geometry));
  int64_t args[5] = { cv->x, cv->w, cv->bias, cv->add, cv->y };
  for (int i = 0; i < 5; i++)
    if (args[i] == FB_KCONV_NO_ARG)
      args[i] = -1;
  json_object_set_array_member (o, "args", int_array (5, args));
  /* Written only for a scaled input, so that plans from before it read the same. */
  if (cv->desc.scaled_input)
    json_object_set_int_member (o, "scale_arg", cv->scale);
  /* Written only for an output inside a wider one, so that plans from before it read the same. */
  if (cv->desc.y_stride != 0)
    json_object_set_int_member (o, "y_stride", cv->desc.y_stride);
  JsonArray *post = json_array_new ();
  for (int64_t i = 0; i < cv->desc.n_post; i++)
    {
      JsonObject *p = json_object_new ();
      json_object_set_string_member (p, "kind", post_kinds[cv->desc.post[i].kind]);
      json_object_set_double_member (p, "alpha", cv->desc.post[i].alpha);
      json_object_set_double_member (p, "beta", cv->desc.post[i].beta);
      json_array_add_object_element (post, p);
    }
  json_object_set_array_member (o, "post_ops", post);
  return o;
}

#define N_GEMM 16

static JsonObject *
gemm_to_json (const FbKConv *cv)
{
  const FbKGemm *g = &cv->gemm;
  JsonObject *o = json_object_new ();
  int64_t shape[N_GEMM] = { g->ta, g->tb, g->m, g->n, g->k, g->lda, g->ldb, g->ldc, g->batch,
                            g->stride_a, g->stride_b, g->stride_c, g->relu, g->off_a, g->off_b,
                            g->off_c };
  json_object_set_array_member (o, "shape", int_array (N_GEMM, shape));
  json_object_set_double_member (o, "alpha", g->alpha);
  if (g->tf32)
    json_object_set_boolean_member (o, "tf32", TRUE);
  if (g->split3)
    json_object_set_boolean_member (o, "split3", TRUE);
  /* x, w, bias, the residual addend; -1 where absent. Bundles before the addend have three. */
  int64_t args[4] = { cv->x, cv->w, cv->bias == FB_KCONV_NO_ARG ? -1 : (int64_t) cv->bias,
                      cv->add == FB_KCONV_NO_ARG ? -1 : (int64_t) cv->add };
  json_object_set_array_member (o, "args", int_array (4, args));
  json_object_set_int_member (o, "out", cv->y);
  return o;
}

JsonObject *
_fb_bundle_plan_to_json (const FbPlan *plan, const int64_t *weight_offsets)
{
  JsonObject *root = json_object_new ();
  json_object_set_string_member (root, "target", plan->target);
  json_object_set_int_member (root, "arena_bytes", plan->arena_bytes);
  JsonArray *buffers = json_array_new ();
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      const FbBuffer *buf = fb_plan_buffer (plan, i);
      JsonObject *o = json_object_new ();
      json_object_set_string_member (o, "kind", buffer_kinds[buf->kind]);
      json_object_set_string_member (o, "name", buf->name);
      json_object_set_int_member (o, "dtype", buf->dtype);
      json_object_set_array_member (o, "dims", int_array (buf->rank, buf->dims));
      json_object_set_int_member (o, "alias", buf->alias);
      json_object_set_int_member (o, "offset", buf->offset);
      if (buf->slice_of >= 0)
        {
          /* Its producer writes into a Concat's output: the offset above already says where;
           * this says why two buffers overlap. */
          json_object_set_int_member (o, "slice_of", buf->slice_of);
          json_object_set_int_member (o, "slice_offset", buf->slice_offset);
          if (buf->slice_stride > 0)
            json_object_set_int_member (o, "slice_stride", buf->slice_stride);
        }
      if (buf->dynamic)
        json_object_set_boolean_member (o, "dynamic", TRUE);
      if (buf->kind == FB_BUF_CONST)
        json_object_set_int_member (o, "weights_offset", weight_offsets[i]);
      json_array_add_object_element (buffers, o);
    }
  json_object_set_array_member (root, "buffers", buffers);
  json_object_set_array_member (root, "inputs", uint_array (plan->inputs));
  json_object_set_array_member (root, "outputs", uint_array (plan->outputs));
  JsonArray *kernels = json_array_new ();
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      JsonObject *o = json_object_new ();
      json_object_set_string_member (o, "name", kernel->name);
      json_object_set_string_member (o, "label", kernel->label ? kernel->label : "");
      json_object_set_string_member (o, "kind", kernel_kinds[kernel->kind]);
      json_object_set_int_member (o, "node_id", kernel->node_id);
      json_object_set_string_member (o, "node_name", kernel->node ? kernel->node->name : "");
      json_object_set_double_member (o, "flops", kernel->flops);
      json_object_set_double_member (o, "bytes", kernel->bytes);
      JsonArray *prov = json_array_new ();
      for (guint i = 0; i < kernel->prov_names->len; i++)
        json_array_add_string_element (prov, g_array_index (kernel->prov_names, char *, i));
      json_object_set_array_member (o, "provenance", prov);
      JsonArray *args = json_array_new ();
      for (guint i = 0; i < kernel->args->len; i++)
        {
          const FbKArg *a = &g_array_index (kernel->args, FbKArg, i);
          JsonObject *ao = json_object_new ();
          json_object_set_int_member (ao, "buffer", a->buffer);
          json_object_set_string_member (ao, "role", arg_roles[a->role]);
          json_object_set_int_member (ao, "dtype", a->dtype);
          json_array_add_object_element (args, ao);
        }
      json_object_set_array_member (o, "args", args);
      JsonArray *phases = json_array_new ();
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          const FbKPhase *ph = g_ptr_array_index (kernel->phases, p);
          JsonObject *po = json_object_new ();
          json_object_set_string_member (po, "function", ph->fn);
          json_object_set_int_member (po, "extent", ph->extent);
          json_object_set_double_member (po, "work", ph->work);
          if (ph->serial)
            json_object_set_boolean_member (po, "serial", TRUE);
          if (ph->conv && ph->conv->lib == FB_KLIB_GEMM)
            json_object_set_object_member (po, "matmul", gemm_to_json (ph->conv));
          else if (ph->conv)
            {
              JsonObject *co = conv_to_json (ph->conv);
              if (ph->conv->cudnn)
                json_object_set_string_member (co, "library", "cudnn");
              if (ph->conv->nchw)
                json_object_set_string_member (co, "layout", "nchw");
              json_object_set_object_member (po, "convolution", co);
            }
          json_array_add_object_element (phases, po);
        }
      json_object_set_array_member (o, "phases", phases);
      json_array_add_object_element (kernels, o);
    }
  json_object_set_array_member (root, "kernels", kernels);
  return root;
}

/* ---- reading ------------------------------------------------------------------------------ */

static gboolean
bad (GError **error, const char *path, const char *what)
{
  g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE, "%s: %s", path, what);
  return FALSE;
}

static int
lookup (const char *const *names, guint n, const char *s)
{
  for (guint i = 0; s && i < n; i++)
    if (g_str_equal (names[i], s))
      return (int) i;
  return -1;
}

static gboolean
is_int (JsonObject *o, const char *member)
{
  JsonNode *n = json_object_get_member (o, member);
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_INT64;
}

static gboolean
is_array (JsonObject *o, const char *member)
{
  JsonNode *n = json_object_get_member (o, member);
  return n && JSON_NODE_HOLDS_ARRAY (n);
}

static gboolean
is_string (JsonObject *o, const char *member)
{
  JsonNode *n = json_object_get_member (o, member);
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING;
}

/* Element or member readers that refuse a value of another kind instead of letting json-glib
 * complain (a critical warning) about a hostile file. */
static double
number (JsonObject *o, const char *member)
{
  JsonNode *n = json_object_get_member (o, member);
  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n))
    return 0;
  GType t = json_node_get_value_type (n);
  return t == G_TYPE_DOUBLE || t == G_TYPE_INT64 ? json_node_get_double (n) : 0;
}

static gboolean
int_at (JsonArray *a, guint i, int64_t *v)
{
  JsonNode *n = json_array_get_element (a, i);
  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64)
    return FALSE;
  *v = json_node_get_int (n);
  return TRUE;
}

static const char *
string_at (JsonArray *a, guint i)
{
  JsonNode *n = json_array_get_element (a, i);
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
           ? json_node_get_string (n) : NULL;
}

static JsonObject *
object_at (JsonArray *a, guint i)
{
  JsonNode *n = json_array_get_element (a, i);
  return n && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
}

static JsonObject *
object_member (JsonObject *o, const char *member)
{
  JsonNode *n = json_object_get_member (o, member);
  return n && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
}

static gboolean
true_member (JsonObject *o, const char *member)
{
  JsonNode *n = json_object_get_member (o, member);
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_BOOLEAN &&
         json_node_get_boolean (n);
}

static gboolean
read_index_list (JsonObject *root, const char *member, guint limit, GArray *out)
{
  if (!is_array (root, member))
    return FALSE;
  JsonArray *a = json_object_get_array_member (root, member);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      int64_t v;
      if (!int_at (a, i, &v) || v < 0 || v >= limit)
        return FALSE;
      guint u = v;
      g_array_append_val (out, u);
    }
  return TRUE;
}

static gboolean
read_buffer (FbPlan *plan, JsonObject *o, GBytes *weights, const char *path, GError **error)
{
  if (!is_string (o, "kind") || !is_string (o, "name") || !is_int (o, "dtype") ||
      !is_array (o, "dims") || !is_int (o, "alias") || !is_int (o, "offset"))
    return bad (error, path, "a buffer lacks kind, name, dtype, dims, alias or offset");
  int kind = lookup (buffer_kinds, G_N_ELEMENTS (buffer_kinds), json_object_get_string_member (o, "kind"));
  gint64 dtype = json_object_get_int_member (o, "dtype");
  JsonArray *dims_a = json_object_get_array_member (o, "dims");
  guint rank = json_array_get_length (dims_a);
  int64_t dims[FB_MAX_RANK];
  if (kind < 0 || !fb_dtype_is_known (dtype) || dtype == FB_DTYPE_STRING || rank > FB_MAX_RANK)
    return bad (error, path, "a buffer has an unknown kind, element type or rank");
  gint64 numel = 1;
  for (guint d = 0; d < rank; d++)
    {
      if (!int_at (dims_a, d, &dims[d]) || dims[d] < 0 ||
          (dims[d] > 0 && numel > G_MAXINT64 / 16 / dims[d]))
        return bad (error, path, "a buffer has a bad extent");
      numel *= dims[d];
    }
  guint b = fb_plan_add_buffer (plan, kind, json_object_get_string_member (o, "name"), dtype,
                                rank, dims);
  FbBuffer *buf = fb_plan_buffer (plan, b);
  gint64 alias = json_object_get_int_member (o, "alias");
  gint64 offset = json_object_get_int_member (o, "offset");
  if (alias >= (gint64) b || alias < -1)
    return bad (error, path, "a buffer views a buffer that does not come before it");
  buf->alias = alias;
  buf->dynamic = true_member (o, "dynamic");
  if (is_int (o, "slice_of"))
    {
      gint64 of = json_object_get_int_member (o, "slice_of");
      gint64 at = is_int (o, "slice_offset") ? json_object_get_int_member (o, "slice_offset") : -1;
      /* The concatenation comes after its pieces; its index is checked once all are read. */
      if (of < 0 || of == (gint64) b || at < 0 || at > G_MAXINT64 - buf->nbytes)
        return bad (error, path, "a buffer lies in a concatenation that is not one");
      buf->slice_of = of;
      buf->slice_offset = at;
      gint64 stride = is_int (o, "slice_stride") ? json_object_get_int_member (o, "slice_stride") : 0;
      if (stride < 0 || stride > ((gint64) 1 << 40) || (stride > 0 && rank < 1) ||
          (stride > 0 && stride < dims[rank - 1]))
        return bad (error, path, "a buffer lies in a concatenation that is not one");
      buf->slice_stride = stride;
    }
  if (alias < 0 && kind != FB_BUF_INPUT && kind != FB_BUF_CONST &&
      (offset < 0 || offset > plan->arena_bytes - buf->nbytes))
    return bad (error, path, "a buffer lies outside the arena");
  buf->offset = offset;
  if (kind == FB_BUF_CONST && alias < 0)
    {
      gint64 w = is_int (o, "weights_offset") ? json_object_get_int_member (o, "weights_offset") : -1;
      if (w < 0 || (gsize) w > g_bytes_get_size (weights) ||
          (gsize) buf->nbytes > g_bytes_get_size (weights) - (gsize) w)
        return bad (error, path, "a constant lies outside weights.bin");
      g_autoptr(GBytes) slice = g_bytes_new_from_bytes (weights, w, buf->nbytes);
      buf->constant = fb_tensor_new_for_bytes (dtype, rank, dims, slice, error);
      if (buf->constant == NULL)
        return FALSE;
    }
  return TRUE;
}

/* Argument a of kernel k, of n float elements (-1: optional and absent). */
static gboolean
conv_arg (const FbPlan *plan, const FbKernel *k, int64_t a, int64_t n, gboolean optional,
          guint *out)
{
  if (a < 0)
    {
      *out = FB_KCONV_NO_ARG;
      return optional;
    }
  if (a >= k->args->len)
    return FALSE;
  const FbBuffer *b = fb_plan_buffer (plan, g_array_index (k->args, FbKArg, a).buffer);
  *out = a;
  return b->dtype == FB_DTYPE_FLOAT32 && b->numel == n && !b->dynamic;
}

/* A convolution phase, checked against the buffers it will read and write: oneDNN trusts the
 * geometry, so a damaged one must not reach it. */
static gboolean
read_conv (const FbPlan *plan, const FbKernel *k, JsonObject *o, FbKConv *cv)
{
  memset (cv, 0, sizeof *cv);
  if (!is_array (o, "geometry") || !is_array (o, "args") || !is_array (o, "post_ops"))
    return FALSE;
  JsonArray *ga = json_object_get_array_member (o, "geometry");
  JsonArray *aa = json_object_get_array_member (o, "args");
  JsonArray *pa = json_object_get_array_member (o, "post_ops");
  if (json_array_get_length (ga) != N_GEOMETRY || json_array_get_length (aa) != 5 ||
      json_array_get_length (pa) > FB_CONV_MAX_POST)
    return FALSE;
  int64_t g[N_GEOMETRY], a[5];
  for (int i = 0; i < N_GEOMETRY; i++)
    if (!int_at (ga, i, &g[i]))
      return FALSE;
  for (int i = 0; i < 5; i++)
    if (!int_at (aa, i, &a[i]))
      return FALSE;
  geometry_in (&cv->desc, g);
  FbConvDesc *d = &cv->desc;
  if (json_object_has_member (o, "primitive"))
    {
      if (!is_string (o, "primitive"))
        return FALSE;
      const char *prim = json_object_get_string_member (o, "primitive");
      if (strcmp (prim, "deconvolution") == 0)
        d->transposed = 1;
      else if (strcmp (prim, "convolution") != 0)
        return FALSE;
    }
  guint add_args = 0;
  gboolean sum = FALSE;
  for (guint i = 0; i < json_array_get_length (pa); i++)
    {
      JsonObject *p = object_at (pa, i);
      int kind = p && is_string (p, "kind")
                   ? lookup (post_kinds, G_N_ELEMENTS (post_kinds), json_object_get_string_member (p, "kind"))
                   : -1;
      if (kind <= FB_CONV_POST_NONE)
        return FALSE;
      d->post[i].kind = kind;
      d->post[i].alpha = number (p, "alpha");
      d->post[i].beta = number (p, "beta");
      add_args += kind == FB_CONV_POST_ADD || kind == FB_CONV_POST_SUM;
      sum |= kind == FB_CONV_POST_SUM;
    }
  d->n_post = json_array_get_length (pa);
  int64_t scale_arg = -1;
  if (json_object_has_member (o, "scale_arg"))
    {
      if (!is_int (o, "scale_arg"))
        return FALSE;
      scale_arg = json_object_get_int_member (o, "scale_arg");
      d->scaled_input = 1;
    }
  if (json_object_has_member (o, "y_stride"))
    {
      if (!is_int (o, "y_stride"))
        return FALSE;
      d->y_stride = json_object_get_int_member (o, "y_stride");
    }
  if (!fb_conv_desc_valid (d))
    return FALSE;
  if (d->scaled_input && !conv_arg (plan, k, scale_arg, d->c, FALSE, &cv->scale))
    return FALSE;
  int64_t out = d->n * d->oh * d->ow * d->co;
  if (add_args != (a[3] >= 0) || (d->has_bias != 0) != (a[2] >= 0) ||
      !conv_arg (plan, k, a[0], d->n * d->h * d->w * d->c, FALSE, &cv->x) ||
      !conv_arg (plan, k, a[1], (d->transposed ? d->c * (d->co / d->groups) : d->co * (d->c / d->groups)) *
                                  d->kh * d->kw, FALSE, &cv->w) ||
      !conv_arg (plan, k, a[2], d->co, TRUE, &cv->bias) ||
      !conv_arg (plan, k, a[3], out, TRUE, &cv->add) ||
      !conv_arg (plan, k, a[4], out, FALSE, &cv->y))
    return FALSE;
  /* A strided output writes rows that far apart: only into a piece laid out so, which the
   * buffers' check keeps inside its concatenation. */
  if (fb_conv_desc_y_stride (d) != d->co &&
      fb_plan_buffer (plan, g_array_index (k->args, FbKArg, cv->y).buffer)->slice_stride != d->y_stride)
    return FALSE;
  /* A sum adds what the output's bytes hold: they must be the residual's. */
  if (sum && fb_plan_root (plan, g_array_index (k->args, FbKArg, cv->add).buffer) !=
             fb_plan_root (plan, g_array_index (k->args, FbKArg, cv->y).buffer))
    return FALSE;
  /* The weights are reordered once, when the plan is loaded: they must be constants. */
  guint wb = fb_plan_root (plan, g_array_index (k->args, FbKArg, cv->w).buffer);
  return fb_plan_buffer (plan, wb)->kind == FB_BUF_CONST;
}

/* Argument a of kernel k: float, at least n elements. */
static gboolean
gemm_arg (const FbPlan *plan, const FbKernel *k, int64_t a, int64_t n, guint *out)
{
  if (a < 0 || a >= k->args->len)
    return FALSE;
  const FbBuffer *b = fb_plan_buffer (plan, g_array_index (k->args, FbKArg, a).buffer);
  *out = a;
  /* A strided slice (a Concat's piece in place) reaches as far as its rows do. */
  return b->dtype == FB_DTYPE_FLOAT32 && fb_buffer_span (b) >= n * (int64_t) sizeof (float) &&
         !b->dynamic;
}

/* A matrix product phase, checked so that no operand is read or written past its buffer. */
static gboolean
read_gemm (const FbPlan *plan, const FbKernel *k, JsonObject *o, FbKConv *cv)
{
  memset (cv, 0, sizeof *cv);
  cv->lib = FB_KLIB_GEMM;
  cv->add = FB_KCONV_NO_ARG;
  if (!is_array (o, "shape") || !is_array (o, "args") || !is_int (o, "out"))
    return FALSE;
  JsonArray *sa = json_object_get_array_member (o, "shape");
  JsonArray *aa = json_object_get_array_member (o, "args");
  int64_t v[N_GEMM], a[4] = { -1, -1, -1, -1 };
  guint n_args = json_array_get_length (aa);
  if (json_array_get_length (sa) != N_GEMM || n_args < 3 || n_args > 4)
    return FALSE;
  for (int i = 0; i < N_GEMM; i++)
    if (!int_at (sa, i, &v[i]) || v[i] < 0 || v[i] > G_MAXINT32)
      return FALSE;
  for (guint i = 0; i < n_args; i++)
    if (!int_at (aa, i, &a[i]))
      return FALSE;
  FbKGemm *g = &cv->gemm;
  *g = (FbKGemm) { .ta = v[0], .tb = v[1], .m = v[2], .n = v[3], .k = v[4], .lda = v[5],
                   .ldb = v[6], .ldc = v[7], .batch = v[8], .stride_a = v[9], .stride_b = v[10],
                   .stride_c = v[11], .relu = v[12], .off_a = v[13], .off_b = v[14],
                   .off_c = v[15], .alpha = number (o, "alpha"), .tf32 = true_member (o, "tf32"),
                   .split3 = true_member (o, "split3") };
  if (g->ta > 1 || g->tb > 1 || g->relu > 1 || g->m < 1 || g->n < 1 || g->k < 1 || g->batch < 1 ||
      g->lda < (g->ta ? g->m : g->k) || g->ldb < (g->tb ? g->k : g->n) || g->ldc < g->n)
    return FALSE;
  /* A split product is TF32 over three equal parts of its depth (fb-lower-product-split.c). */
  if (g->split3 && (!g->tf32 || g->k % 3 != 0))
    return FALSE;
  int64_t need_a = g->off_a + (g->batch - 1) * g->stride_a + (g->ta ? (g->k - 1) * g->lda + g->m
                                                         : (g->m - 1) * g->lda + g->k);
  int64_t need_b = g->off_b + (g->batch - 1) * g->stride_b + (g->tb ? (g->n - 1) * g->ldb + g->k
                                                         : (g->k - 1) * g->ldb + g->n);
  int64_t need_c = g->off_c + (g->batch - 1) * g->stride_c + (g->m - 1) * g->ldc + g->n;
  cv->bias = FB_KCONV_NO_ARG;
  return gemm_arg (plan, k, a[0], need_a, &cv->x) && gemm_arg (plan, k, a[1], need_b, &cv->w) &&
         (a[2] < 0 || gemm_arg (plan, k, a[2], g->n, &cv->bias)) &&
         (a[3] < 0 || gemm_arg (plan, k, a[3], need_c, &cv->add)) &&
         gemm_arg (plan, k, json_object_get_int_member (o, "out"), need_c, &cv->y);
}

static gboolean
read_kernel (FbPlan *plan, JsonObject *o, const char *path, GError **error)
{
  if (!is_string (o, "name") || !is_string (o, "kind") || !is_array (o, "args") ||
      !is_array (o, "phases"))
    return bad (error, path, "a kernel lacks name, kind, args or phases");
  int kind = lookup (kernel_kinds, G_N_ELEMENTS (kernel_kinds), json_object_get_string_member (o, "kind"));
  const char *name = json_object_get_string_member (o, "name");
  if (kind < 0 || !g_regex_match_simple ("^[A-Za-z_][A-Za-z0-9_]*$", name, 0, 0))
    return bad (error, path, "a kernel has a bad name or kind");
  FbKernel *k = fb_kernel_new (name);
  k->index = plan->kernels->len;
  g_ptr_array_add (plan->kernels, k);
  k->kind = kind;
  k->label = g_strdup (is_string (o, "label") ? json_object_get_string_member (o, "label") : "");
  k->node_id = is_int (o, "node_id") ? json_object_get_int_member (o, "node_id") : 0;
  k->flops = number (o, "flops");
  k->bytes = number (o, "bytes");
  if (is_array (o, "provenance"))
    {
      JsonArray *pa = json_object_get_array_member (o, "provenance");
      for (guint i = 0; i < json_array_get_length (pa); i++)
        {
          char *s = g_strdup (string_at (pa, i) ? string_at (pa, i) : "");
          g_array_append_val (k->prov_names, s);
        }
    }
  JsonArray *args = json_object_get_array_member (o, "args");
  for (guint i = 0; i < json_array_get_length (args); i++)
    {
      JsonObject *a = object_at (args, i);
      if (a == NULL || !is_int (a, "buffer") || !is_string (a, "role") || !is_int (a, "dtype"))
        return bad (error, path, "a kernel argument lacks buffer, role or dtype");
      gint64 b = json_object_get_int_member (a, "buffer");
      int role = lookup (arg_roles, G_N_ELEMENTS (arg_roles), json_object_get_string_member (a, "role"));
      if (b < 0 || b >= plan->buffers->len || role < 0)
        return bad (error, path, "a kernel argument names no buffer");
      FbKArg arg = { .buffer = b, .role = role, .dtype = fb_plan_buffer (plan, b)->dtype };
      g_array_append_val (k->args, arg);
    }
  JsonArray *phases = json_object_get_array_member (o, "phases");
  for (guint i = 0; i < json_array_get_length (phases); i++)
    {
      JsonObject *p = object_at (phases, i);
      if (p == NULL || !is_string (p, "function") || !is_int (p, "extent"))
        return bad (error, path, "a kernel phase lacks function or extent");
      FbKPhase *ph = fb_kernel_add_phase (k, json_object_get_int_member (p, "extent"),
                                          number (p, "work"));
      g_free (ph->fn);
      ph->fn = g_strdup (json_object_get_string_member (p, "function"));
      ph->serial = true_member (p, "serial");
      if (ph->extent < 0)
        return bad (error, path, "a kernel phase has a negative extent");
      if (json_object_has_member (p, "convolution"))
        {
          FbKConv cv;
          JsonObject *co = object_member (p, "convolution");
          if (co == NULL || !read_conv (plan, k, co, &cv))
            return bad (error, path, "a convolution phase does not fit its buffers");
          cv.cudnn = g_strcmp0 (json_object_get_string_member_with_default (co, "library", ""),
                                "cudnn") == 0;
          cv.nchw = cv.cudnn && g_strcmp0 (json_object_get_string_member_with_default (co, "layout", ""),
                                           "nchw") == 0;
          ph->conv = g_memdup2 (&cv, sizeof cv);
        }
      else if (json_object_has_member (p, "matmul"))
        {
          FbKConv cv;
          JsonObject *mo = object_member (p, "matmul");
          if (mo == NULL || !read_gemm (plan, k, mo, &cv))
            return bad (error, path, "a matrix product phase does not fit its buffers");
          ph->conv = g_memdup2 (&cv, sizeof cv);
        }
    }
  return TRUE;
}

FbPlan *
_fb_bundle_plan_from_json (JsonObject *root, GBytes *weights, const char *path, GError **error)
{
  g_autoptr(FbPlan) plan = fb_plan_new (is_string (root, "target")
                                        ? json_object_get_string_member (root, "target") : "");
  if (!is_int (root, "arena_bytes") || !is_array (root, "buffers") || !is_array (root, "kernels"))
    {
      bad (error, path, "not a plan: arena_bytes, buffers or kernels missing");
      return NULL;
    }
  plan->arena_bytes = json_object_get_int_member (root, "arena_bytes");
  if (plan->arena_bytes < 0)
    {
      bad (error, path, "negative arena size");
      return NULL;
    }
  JsonArray *buffers = json_object_get_array_member (root, "buffers");
  for (guint i = 0; i < json_array_get_length (buffers); i++)
    {
      JsonObject *o = object_at (buffers, i);
      if (o == NULL)
        {
          bad (error, path, "a buffer is not an object");
          return NULL;
        }
      if (!read_buffer (plan, o, weights, path, error))
        return NULL;
    }
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      const FbBuffer *b = fb_plan_buffer (plan, i);
      /* A strided slice spans its rows through a parent whose rows are as far apart (the
       * root itself, or a strided slice of it). */
      const FbBuffer *parent = b->slice_of >= 0 && b->slice_of < (int) plan->buffers->len
                                 ? fb_plan_buffer (plan, b->slice_of) : NULL;
      if (b->slice_of >= (int) plan->buffers->len ||
          (parent && b->slice_offset + fb_buffer_span (b) > fb_buffer_span (parent)) ||
          (parent && b->slice_stride > 0 &&
           (parent->rank < 1 || parent->numel / MAX (parent->dims[parent->rank - 1], 1) !=
                                  b->numel / MAX (b->dims[b->rank - 1], 1) ||
            (parent->slice_stride > 0 ? parent->slice_stride : parent->dims[parent->rank - 1]) !=
              b->slice_stride)))
        {
          bad (error, path, "a buffer lies in a concatenation that is not one");
          return NULL;
        }
    }
  if (!read_index_list (root, "inputs", plan->buffers->len, plan->inputs) ||
      !read_index_list (root, "outputs", plan->buffers->len, plan->outputs))
    {
      bad (error, path, "inputs or outputs name no buffer");
      return NULL;
    }
  JsonArray *kernels = json_object_get_array_member (root, "kernels");
  for (guint i = 0; i < json_array_get_length (kernels); i++)
    {
      JsonObject *o = object_at (kernels, i);
      if (o == NULL)
        {
          bad (error, path, "a kernel is not an object");
          return NULL;
        }
      if (!read_kernel (plan, o, path, error))
        return NULL;
    }
  return g_steal_pointer (&plan);
}

const char *
_fb_bundle_kernel_node_name (JsonObject *root, guint k)
{
  JsonArray *kernels = json_object_get_array_member (root, "kernels");
  JsonObject *o = kernels ? object_at (kernels, k) : NULL;
  return o && is_string (o, "node_name") ? json_object_get_string_member (o, "node_name") : NULL;
}
