/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Lowering driver: buffers for every value, one kernel per node of the final stage, compile-time
 * evaluation of shape computations, views, and the grouping decisions inside a kernel (which
 * members are computed in registers, which chains are sunk into their producer's loop). */
#include "fb-lower-private.h"
#include "fb-lower-conv.h"
#include "fb-interp.h"

#include <stdarg.h>
#include <string.h>

gboolean
_fb_lower_fail (GError **error, const FbNode *node, int code, const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  g_autofree char *msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  if (node)
    g_set_error (error, FB_LOWER_ERROR, code, "node '%s' (%s): %s", node->name,
                 node->op_type ? node->op_type : fb_op_name (node->op), msg);
  else
    g_set_error_literal (error, FB_LOWER_ERROR, code, msg);
  return FALSE;
}

gboolean
_fb_lower_dims (const FbValue *v, int *rank, int64_t *dims)
{
  if (v->constant)
    {
      *rank = v->constant->rank;
      memcpy (dims, v->constant->dims, sizeof (int64_t) * v->constant->rank);
      return TRUE;
    }
  if (!fb_shape_is_static (&v->shape))
    return FALSE;
  *rank = v->shape.rank;
  memcpy (dims, v->shape.dim, sizeof (int64_t) * v->shape.rank);
  return TRUE;
}

int64_t
_fb_lower_numel (const FbValue *v)
{
  int rank;
  int64_t dims[FB_MAX_RANK], n = 1;
  if (!_fb_lower_dims (v, &rank, dims))
    return -1;
  for (int d = 0; d < rank; d++)
    n *= dims[d];
  return n;
}

gboolean
_fb_lower_is_scalar_const (const FbValue *v)
{
  return v->constant != NULL && v->constant->numel == 1;
}

static FbDType
value_dtype (const FbValue *v)
{
  return v->constant ? v->constant->dtype : v->dtype;
}

/* ---- buffers and arguments ---------------------------------------------------------------- */

static guint
plan_value_buffer (FbLowerPlan *lp, const FbValue *v, FbBufferKind kind)
{
  gpointer found = g_hash_table_lookup (lp->buffer_of, v);
  if (found)
    return GPOINTER_TO_UINT (found) - 1;
  int rank = 0;
  int64_t dims[FB_MAX_RANK];
  _fb_lower_dims (v, &rank, dims);
  guint b;
  if (v->constant)
    {
      gpointer shared = g_hash_table_lookup (lp->const_of, v->constant);
      if (shared)
        b = GPOINTER_TO_UINT (shared) - 1;
      else
        {
          b = fb_plan_add_buffer (lp->plan, FB_BUF_CONST, v->name, v->constant->dtype,
                                  v->constant->rank, v->constant->dims);
          fb_plan_buffer (lp->plan, b)->constant = fb_tensor_ref (v->constant);
          g_hash_table_insert (lp->const_of, v->constant, GUINT_TO_POINTER (b + 1));
        }
    }
  else
    {
      b = fb_plan_add_buffer (lp->plan, kind, v->name, v->dtype, rank, dims);
      fb_plan_buffer (lp->plan, b)->value = v;
      /* Sequences and optionals live on the host: the buffer holds the value itself. */
      if (v->kind != FB_KIND_TENSOR)
        fb_plan_buffer (lp->plan, b)->dynamic = TRUE;
    }
  g_hash_table_insert (lp->buffer_of, (gpointer) v, GUINT_TO_POINTER (b + 1));
  return b;
}

static const FbValue *
outer_value (FbLowerCtx *c, const FbValue *v)
{
  const FbValue *o = c->bind ? g_hash_table_lookup (c->bind, v) : NULL;
  return o ? o : v;
}

guint
_fb_lower_arg (FbLowerCtx *c, const FbValue *v, FbKArgRole role)
{
  gpointer found = g_hash_table_lookup (c->arg_of, v);
  if (found)
    {
      guint a = GPOINTER_TO_UINT (found) - 1;
      if (role == FB_KARG_OUTPUT)
        g_array_index (c->k->args, FbKArg, a).role = FB_KARG_OUTPUT;
      return a;
    }
  const FbValue *o = outer_value (c, v);
  guint b;
  if (o->constant || g_hash_table_contains (c->lp->buffer_of, o) || o->graph == c->lp->graph)
    b = plan_value_buffer (c->lp, o, FB_BUF_INTERMEDIATE);
  else
    {
      /* A value private to a fused group: scratch of this kernel. */
      int rank = 0;
      int64_t dims[FB_MAX_RANK];
      _fb_lower_dims (v, &rank, dims);
      b = fb_plan_add_buffer (c->lp->plan, FB_BUF_SCRATCH, v->name, v->dtype, rank, dims);
      role = FB_KARG_TEMP;
    }
  guint a = fb_kernel_add_arg (c->k, b, role, value_dtype (o), o->name);
  g_hash_table_insert (c->arg_of, (gpointer) v, GUINT_TO_POINTER (a + 1));
  return a;
}

guint
_fb_lower_out_arg (FbLowerCtx *c, const FbValue *v)
{
  const FbValue *o = g_hash_table_lookup (c->sunk, v);
  return _fb_lower_arg (c, o ? o : v, FB_KARG_OUTPUT);
}

guint
_fb_lower_scratch (FbLowerCtx *c, const char *what, FbDType dtype, int rank, const int64_t *dims)
{
  g_autofree char *name = g_strdup_printf ("%s.%s", c->k->name, what);
  guint b = fb_plan_add_buffer (c->lp->plan, FB_BUF_SCRATCH, name, dtype, rank, dims);
  return fb_kernel_add_arg (c->k, b, FB_KARG_TEMP, dtype, name);
}

guint
_fb_lower_const_arg (FbLowerCtx *c, FbTensor *tensor, const char *name)
{
  guint b = fb_plan_add_buffer (c->lp->plan, FB_BUF_CONST, name, tensor->dtype, tensor->rank,
                                tensor->dims);
  fb_plan_buffer (c->lp->plan, b)->constant = fb_tensor_ref (tensor);
  return fb_kernel_add_arg (c->k, b, FB_KARG_INPUT, tensor->dtype, name);
}

gboolean
_fb_lower_is_nhwc (const FbNode *node)
{
  return g_strcmp0 (fb_node_attr_string (node, FB_ATTR_LAYOUT, NULL), "nhwc") == 0;
}

gboolean
_fb_lower_const_ints (const FbNode *node, guint input, int64_t **out, guint *n, GError **error)
{
  FbValue *v = fb_node_input (node, input);
  *out = NULL;
  *n = 0;
  if (v == NULL)
    return TRUE;
  if (v->constant == NULL)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "input %u ('%s') must be known at compile time", input, v->name);
  *n = v->constant->numel;
  *out = g_new0 (int64_t, MAX (*n, 1));
  for (guint i = 0; i < *n; i++)
    (*out)[i] = fb_tensor_get_i64 (v->constant, i);
  return TRUE;
}

/* ---- compile-time evaluation and views ---------------------------------------------------- */

static gboolean
outputs_static (const FbNode *node)
{
  for (guint i = 0; i < node->n_outputs; i++)
    if (node->outputs[i] && !fb_shape_is_static (&node->outputs[i]->shape))
      return FALSE;
  return TRUE;
}

/* Shape-of nodes and nodes whose every input is a constant are evaluated now: what the
 * constant-folding pass left (or all of it when that pass is disabled). */
static gboolean
try_fold (FbLowerPlan *lp, const FbNode *node, gboolean *folded, GError **error)
{
  *folded = FALSE;
  /* Constant buffers hold tensors: sequences and optionals are made when the model runs. */
  if (fb_op_has_flag (node->op, FB_OPF_CONTROL | FB_OPF_SEQUENCE) || node->op == FB_OP_FUSED ||
      node->op == FB_OP_UNKNOWN || fb_node_has_containers (node))
    return TRUE;
  gboolean shape_only = fb_op_has_flag (node->op, FB_OPF_SHAPE_OF);
  for (guint i = 0; i < node->n_inputs && !shape_only; i++)
    if (node->inputs[i] && node->inputs[i]->constant == NULL)
      return TRUE;
  g_autofree FbTensor **in = g_new0 (FbTensor *, MAX (node->n_inputs, 1));
  g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  for (guint i = 0; i < node->n_inputs; i++)
    {
      FbValue *v = node->inputs[i];
      if (v == NULL)
        continue;
      if (v->constant)
        in[i] = v->constant;
      else
        {
          /* Shape and Size read only the shape: a zero tensor of that shape stands in. */
          int rank;
          int64_t dims[FB_MAX_RANK];
          if (!_fb_lower_dims (v, &rank, dims) || _fb_lower_numel (v) > (1 << 20))
            return TRUE;
          in[i] = fb_tensor_new (v->dtype == FB_DTYPE_UNDEFINED ? FB_DTYPE_FLOAT32 : v->dtype,
                                 rank, dims, NULL);
          if (in[i] == NULL)
            return TRUE;
          g_ptr_array_add (keep, in[i]);
        }
    }
  g_autofree FbTensor **out = g_new0 (FbTensor *, MAX (node->n_outputs, 1));
  g_autoptr(GError) local = NULL;
  if (!fb_interp_node (node, in, out, &local))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "cannot evaluate at compile time: %s", local->message);
  for (guint i = 0; i < node->n_outputs; i++)
    {
      FbValue *v = node->outputs[i];
      if (v && out[i])
        {
          guint b = fb_plan_add_buffer (lp->plan, FB_BUF_CONST, v->name, out[i]->dtype,
                                        out[i]->rank, out[i]->dims);
          fb_plan_buffer (lp->plan, b)->constant = fb_tensor_ref (out[i]);
          fb_plan_buffer (lp->plan, b)->value = v;
          g_hash_table_insert (lp->buffer_of, v, GUINT_TO_POINTER (b + 1));
        }
      g_clear_pointer (&out[i], fb_tensor_unref);
    }
  *folded = TRUE;
  return TRUE;
}

/* A view shares its input's bytes, unless the plan-memory pass gave its output a buffer of
 * its own: the pass may then reuse the input's bytes while the view is alive, so it is copied. */
static gboolean
view_needs_copy (FbLowerPlan *lp, const FbNode *node)
{
  const FbValue *out = node->outputs[0];
  guint in = plan_value_buffer (lp, node->inputs[0], FB_BUF_INTERMEDIATE);
  const FbBuffer *root = fb_plan_buffer (lp->plan, fb_plan_root (lp->plan, in));
  return out->buffer > 0 && root->value != NULL && root->kind != FB_BUF_INPUT &&
         root->kind != FB_BUF_CONST && root->value->buffer > 0 &&
         root->value->buffer != out->buffer;
}

/* ---- kernels ------------------------------------------------------------------------------ */

static char *
kernel_name (const FbNode *node)
{
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "n%u_", node->id);
  const char *what = node->op_type ? node->op_type : fb_op_name (node->op);
  if (node->op == FB_OP_FUSED)
    {
      FbGraph *body = fb_node_attr_graph (node, "body");
      for (guint i = 0; body && i < body->nodes->len && i < 4; i++)
        {
          const FbNode *m = g_ptr_array_index (body->nodes, i);
          g_string_append_printf (s, "%s%s", i ? "_" : "", fb_op_name (m->op));
        }
    }
  else
    g_string_append (s, what);
  for (char *p = s->str; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_')
      *p = '_';
  return g_string_free (s, FALSE);
}

static FbKernel *
kernel_for (FbLowerPlan *lp, const FbNode *node, FbKernelKind kind)
{
  g_autofree char *name = kernel_name (node);
  FbKernel *k = fb_kernel_new (name);
  k->kind = kind;
  k->node = node;
  k->node_id = node->id;
  FbModel *model = lp->graph->model;
  for (guint i = 0; i < node->n_prov; i++)
    {
      char *n = g_strdup (fb_model_orig_name (model, node->prov[i]));
      g_array_append_val (k->prov_names, n);
    }
  if (node->n_prov == 0)
    {
      char *n = g_strdup (node->name);
      g_array_append_val (k->prov_names, n);
    }
  GString *label = g_string_new (NULL);
  if (node->op == FB_OP_FUSED)
    {
      FbGraph *body = fb_node_attr_graph (node, "body");
      for (guint i = 0; body && i < body->nodes->len; i++)
        g_string_append_printf (label, "%s%s", i ? " + " : "",
                                fb_op_name (((FbNode *) g_ptr_array_index (body->nodes, i))->op));
    }
  else
    g_string_append (label, fb_op_name (node->op));
  k->label = g_string_free (label, FALSE);
  k->index = lp->plan->kernels->len;
  g_ptr_array_add (lp->plan->kernels, k);
  return k;
}

gboolean
_fb_lower_is_elementwise (const FbNode *node)
{
  if (fb_op_has_flag (node->op, FB_OPF_ELEMENTWISE))
    return node->op != FB_OP_DROPOUT || node->n_outputs < 2 || node->outputs[1] == NULL;
  if (node->op != FB_OP_BATCH_NORMALIZATION || node->n_outputs < 1 || _fb_lower_bn_training (node))
    return FALSE;
  for (guint i = 1; i < node->n_outputs; i++)
    if (node->outputs[i] != NULL)
      return FALSE;
  return TRUE;
}

gboolean
_fb_lower_is_index_map (const FbNode *node)
{
  switch (node->op)
    {
    case FB_OP_TRANSPOSE: case FB_OP_GATHER: case FB_OP_SLICE: case FB_OP_RESHAPE:
    case FB_OP_FLATTEN: case FB_OP_SQUEEZE: case FB_OP_UNSQUEEZE:
      return node->n_outputs == 1 && node->outputs[0] != NULL &&
             fb_shape_is_static (&node->outputs[0]->shape);
    default:
      return FALSE;
    }
}

/* How many members of the group read v; *all_inline says whether every one of them computes
 * its value from v's at the same point (elementwise members, and index maps at the element
 * they move), so that v itself can be computed where it is read. */
static guint
count_uses (FbLowerCtx *c, const FbValue *v, gboolean *all_inline, gboolean *all_elementwise,
            gboolean *is_out)
{
  GPtrArray *users = g_hash_table_lookup (c->body_uses, v);
  *all_inline = *all_elementwise = TRUE;
  *is_out = v->is_output || g_hash_table_contains (c->bind, v) ||
            (c->node->op != FB_OP_FUSED);
  guint n = users ? users->len : 0;
  for (guint i = 0; i < n; i++)
    {
      const FbNode *u = g_ptr_array_index (users, i);
      if (!_fb_lower_is_elementwise (u))
        *all_elementwise = FALSE;
      if (!_fb_lower_is_elementwise (u) && !_fb_lower_is_index_map (u))
        *all_inline = FALSE;
    }
  return n;
}

/* Follows v's users through values computed in place; TRUE when they all end in the one
 * stored value *end, of v's shape. */
static gboolean
chain_end (FbLowerCtx *c, const FbValue *v, const FbValue **end)
{
  GPtrArray *users = g_hash_table_lookup (c->body_uses, v);
  if (users == NULL || users->len == 0)
    return FALSE;
  for (guint i = 0; i < users->len; i++)
    {
      const FbNode *u = g_ptr_array_index (users, i);
      if (!_fb_lower_is_elementwise (u) || u->n_outputs != 1 || u->outputs[0] == NULL)
        return FALSE;
      const FbValue *o = u->outputs[0];
      if (!fb_shape_equal (&o->shape, &v->shape))
        return FALSE;
      if (g_hash_table_contains (c->inline_of, o))
        {
          if (!chain_end (c, o, end))
            return FALSE;
        }
      else if (*end == NULL || *end == o)
        *end = o;
      else
        return FALSE;
    }
  return *end != NULL;
}

/* The members computed in place on v on its way to a sunk chain's end. */
static void
chain_members (FbLowerCtx *c, const FbValue *v, GPtrArray *out)
{
  GPtrArray *users = g_hash_table_lookup (c->body_uses, v);
  for (guint i = 0; users != NULL && i < users->len; i++)
    {
      const FbNode *u = g_ptr_array_index (users, i);
      if (g_ptr_array_find (out, u, NULL))
        continue;
      g_ptr_array_add (out, (gpointer) u);
      if (u->n_outputs == 1 && u->outputs[0] && g_hash_table_contains (c->inline_of, u->outputs[0]))
        chain_members (c, u->outputs[0], out);
    }
}

/* The phases member m just emitted (from first on) do its work, and that of the chain sunk
 * into its loops: where the chain became a library's post-op rather than an expression, no
 * phase was given it while it was built. */
static void
attribute_member (FbLowerCtx *c, const FbNode *m, guint first)
{
  g_autoptr(GPtrArray) chain = g_ptr_array_new ();
  if (m->n_outputs > 0 && m->outputs[0] && g_hash_table_contains (c->sunk, m->outputs[0]))
    chain_members (c, m->outputs[0], chain);
  for (guint p = first; p < c->k->phases->len; p++)
    {
      FbKPhase *ph = g_ptr_array_index (c->k->phases, p);
      fb_kphase_add_prov (ph, m->prov, m->n_prov);
      for (guint i = 0; i < chain->len; i++)
        {
          const FbNode *u = g_ptr_array_index (chain, i);
          if (!g_hash_table_contains (c->attributed, u))
            fb_kphase_add_prov (ph, u->prov, u->n_prov);
        }
    }
}

static void
add_body_use (GHashTable *uses, const FbValue *v, const FbNode *n)
{
  GPtrArray *a = g_hash_table_lookup (uses, v);
  if (a == NULL)
    {
      a = g_ptr_array_new ();
      g_hash_table_insert (uses, (gpointer) v, a);
    }
  g_ptr_array_add (a, (gpointer) n);
}

static gboolean
emit_member (FbLowerCtx *c, const FbNode *m, GError **error)
{
  if (_fb_lower_is_elementwise (m))
    return _fb_lower_elementwise (c, m, error);
  if (m->op == FB_OP_MATMUL && m->inputs[0]->dtype != FB_DTYPE_FLOAT32)
    return _fb_lower_matmul_loops (c, m, error);
  if (m->op == FB_OP_EINSUM)
    return _fb_lower_einsum (c, m, error);
  if (m->op == FB_OP_CONV_TRANSPOSE)
    return _fb_lower_conv_transpose (c, m, error);
  if (m->op == FB_OP_CONV && m->inputs[0]->shape.rank == 5)
    return _fb_lower_conv_direct (c, m, error);
  if (fb_op_has_flag (m->op, FB_OPF_CONTRACTION))
    return _fb_lower_contraction (c, m, error);
  switch (m->op)
    {
    case FB_OP_REDUCE_L2: case FB_OP_REDUCE_MAX: case FB_OP_REDUCE_MEAN: case FB_OP_REDUCE_MIN:
    case FB_OP_REDUCE_PROD: case FB_OP_REDUCE_SUM: case FB_OP_ARGMAX:
    case FB_OP_GLOBAL_AVERAGE_POOL: case FB_OP_GLOBAL_MAX_POOL:
      return _fb_lower_reduce (c, m, error);
    case FB_OP_SOFTMAX: case FB_OP_LOG_SOFTMAX: case FB_OP_LAYER_NORMALIZATION:
    case FB_OP_INSTANCE_NORMALIZATION: case FB_OP_LRN:
      return _fb_lower_normalize (c, m, error);
    case FB_OP_SCATTER_ND:
      return _fb_lower_scatter_nd (c, m, error);
    case FB_OP_TOPK:
      return _fb_lower_topk (c, m, error);
    case FB_OP_GRU: case FB_OP_LSTM: case FB_OP_RNN:
      return _fb_lower_recurrent (c, m, error);
    case FB_OP_RESIZE: case FB_OP_UPSAMPLE:
      return _fb_lower_resize (c, m, error);
    case FB_OP_MAX_POOL: case FB_OP_AVERAGE_POOL:
      return _fb_lower_pool (c, m, error);
    /* conformance operators */
    case FB_OP_ARGMIN: case FB_OP_REDUCE_L1: case FB_OP_REDUCE_LOG_SUM:
    case FB_OP_REDUCE_LOG_SUM_EXP: case FB_OP_REDUCE_SUM_SQUARE:
      return _fb_lower_reduce (c, m, error);
    case FB_OP_CAST_LIKE: case FB_OP_EYE_LIKE: case FB_OP_HARDMAX: case FB_OP_NLL_LOSS:
    case FB_OP_SOFTMAX_CE_LOSS:
      return _fb_lower_math_node (c, m, error);
    case FB_OP_GATHER_ND: case FB_OP_SCATTER: case FB_OP_SCATTER_ELEMENTS: case FB_OP_ONE_HOT:
    case FB_OP_REVERSE_SEQUENCE: case FB_OP_QUANTIZE_LINEAR: case FB_OP_DEQUANTIZE_LINEAR:
    case FB_OP_DYNAMIC_QUANTIZE_LINEAR: case FB_OP_MATMUL_INTEGER: case FB_OP_QLINEAR_MATMUL:
      return _fb_lower_index_node (c, m, error);
    case FB_OP_GRID_SAMPLE:
      return _fb_lower_grid_sample (c, m, error);
    case FB_OP_BATCH_NORMALIZATION:
      return _fb_lower_batchnorm (c, m, error);
    case FB_OP_DET:
      return _fb_lower_det (c, m, error);
    case FB_OP_CONV_INTEGER: case FB_OP_QLINEAR_CONV:
      return _fb_lower_conv_direct (c, m, error);
    case FB_OP_MEAN_VARIANCE_NORMALIZATION:
      return _fb_lower_normalize (c, m, error);
    case FB_OP_MAX_UNPOOL:
      return _fb_lower_max_unpool (c, m, error);
    case FB_OP_DFT: case FB_OP_STFT: case FB_OP_MEL_WEIGHT_MATRIX:
      return _fb_lower_signal (c, m, error);
    case FB_OP_ROI_ALIGN:
      return _fb_lower_roi_align (c, m, error);
    case FB_OP_TFIDF_VECTORIZER:
      return _fb_lower_tfidf (c, m, error);
    default:
      return _fb_lower_movement (c, m, error);
    }
}

static gboolean
lower_group (FbLowerPlan *lp, const FbNode *node, GError **error)
{
  FbKernel *k = kernel_for (lp, node, FB_KERNEL_LOOPS);
  g_autoptr(GHashTable) bind = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) arg_of = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) inline_of = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) sunk = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) body_uses = g_hash_table_new_full (NULL, NULL, NULL,
                                                           (GDestroyNotify) g_ptr_array_unref);
  g_autoptr(GHashTable) attributed = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) scale_of = g_hash_table_new (NULL, NULL);
  FbLowerCtx c = { .lp = lp, .k = k, .node = node, .bind = bind, .arg_of = arg_of,
                   .inline_of = inline_of, .sunk = sunk, .body_uses = body_uses,
                   .merged_rank = -1, .attributed = attributed, .scale_of = scale_of };
  g_autoptr(GPtrArray) members = g_ptr_array_new ();
  if (node->op == FB_OP_FUSED)
    {
      FbGraph *body = fb_node_attr_graph (node, "body");
      if (body == NULL || body->inputs->len != node->n_inputs ||
          body->outputs->len != node->n_outputs)
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                               "fused node without a body that matches its inputs and outputs");
      for (guint i = 0; i < node->n_inputs; i++)
        if (node->inputs[i])
          g_hash_table_insert (bind, g_ptr_array_index (body->inputs, i), node->inputs[i]);
      for (guint i = 0; i < node->n_outputs; i++)
        if (node->outputs[i])
          g_hash_table_insert (bind, g_ptr_array_index (body->outputs, i), node->outputs[i]);
      for (guint i = 0; i < body->nodes->len; i++)
        g_ptr_array_add (members, g_ptr_array_index (body->nodes, i));
    }
  else
    g_ptr_array_add (members, (gpointer) node);

  for (guint i = 0; i < members->len; i++)
    {
      const FbNode *m = g_ptr_array_index (members, i);
      for (guint j = 0; j < m->n_inputs; j++)
        if (m->inputs[j])
          add_body_use (body_uses, m->inputs[j], m);
    }

  /* Elementwise members and index maps read only by such members are computed where they
   * are read. */
  for (guint i = 0; i < members->len; i++)
    {
      const FbNode *m = g_ptr_array_index (members, i);
      if ((!_fb_lower_is_elementwise (m) && !_fb_lower_is_index_map (m)) || m->outputs[0] == NULL)
        continue;
      gboolean all_inline, all_ew, is_out;
      guint n = count_uses (&c, m->outputs[0], &all_inline, &all_ew, &is_out);
      if (n > 0 && all_inline && !is_out)
        g_hash_table_insert (inline_of, m->outputs[0], (gpointer) m);
    }
  /* A non-elementwise member whose value only feeds one elementwise chain: the chain runs on
   * the value in registers, in the member's own loop (the epilogue of a GEMM, a depthwise
   * convolution or a reduction). */
  for (guint i = 0; i < members->len; i++)
    {
      const FbNode *m = g_ptr_array_index (members, i);
      if (_fb_lower_is_elementwise (m) || m->n_outputs != 1 || m->outputs[0] == NULL ||
          g_hash_table_contains (inline_of, m->outputs[0]))
        continue;
      gboolean all_inline, all_ew, is_out;
      count_uses (&c, m->outputs[0], &all_inline, &all_ew, &is_out);
      const FbValue *end = NULL;
      if (!is_out && all_ew && chain_end (&c, m->outputs[0], &end))
        g_hash_table_insert (sunk, m->outputs[0], (gpointer) end);
    }
  g_autoptr(GHashTable) skip = g_hash_table_new (NULL, NULL);
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, sunk);
  while (g_hash_table_iter_next (&it, &key, &value))
    g_hash_table_add (skip, ((FbValue *) value)->producer);
  /* A convolution's input scaled per channel (the prologue fuse-epilogue gives it): the
   * convolution's library folds the scale into its weights, the Mul is never a loop. */
  for (guint i = 0; i < members->len; i++)
    {
      const FbNode *m = g_ptr_array_index (members, i);
      const FbNode *conv = _fb_lower_for_gpu (&c) ? _fb_lower_conv_product_gpu_scale_fold (&c, m)
                                                  : _fb_lower_dnnl_scale_fold (&c, m);
      if (conv)
        {
          g_hash_table_insert (scale_of, (gpointer) conv, (gpointer) m);
          g_hash_table_add (skip, (gpointer) m);
        }
    }

  for (guint i = 0; i < members->len; i++)
    {
      const FbNode *m = g_ptr_array_index (members, i);
      if (g_hash_table_contains (skip, m) ||
          (m->n_outputs > 0 && m->outputs[0] && g_hash_table_contains (inline_of, m->outputs[0])))
        continue;
      c.member_first = k->phases->len;
      g_hash_table_remove_all (attributed);
      if (!emit_member (&c, m, error))
        return FALSE;
      attribute_member (&c, m, c.member_first);
      const FbNode *folded = g_hash_table_lookup (scale_of, m);
      if (folded)
        attribute_member (&c, folded, c.member_first);
    }
  /* A phase no member claimed (none known so far) stands for the whole node. */
  for (guint i = 0; i < k->phases->len; i++)
    {
      FbKPhase *ph = g_ptr_array_index (k->phases, i);
      if (ph->prov->len == 0)
        fb_kphase_add_prov (ph, node->prov, node->n_prov);
    }
  for (guint i = 0; i < k->phases->len; i++)
    k->flops += ((FbKPhase *) g_ptr_array_index (k->phases, i))->work;
  for (guint i = 0; i < k->args->len; i++)
    {
      const FbBuffer *b = fb_plan_buffer (lp->plan, g_array_index (k->args, FbKArg, i).buffer);
      k->bytes += b->nbytes;
    }
  return TRUE;
}

/* If, Loop, Scan and the steps of _fb_lower_on_host run on the host (fb-cpu-host.c), the operators
 * whose output size depends on the data among them. Outputs whose size only the run tells (a
 * Loop's scan outputs under a trip count fed at run time, NonZero, Unique, Range with run-time
 * bounds) get dynamic buffers, and so do sequences and optionals: the buffer holds the value
 * the interpreter made. */
static gboolean
lower_host (FbLowerPlan *lp, const FbNode *node)
{
  for (guint i = 0; i < node->n_outputs; i++)
    {
      FbValue *v = node->outputs[i];
      if (v && (v->kind != FB_KIND_TENSOR || !fb_shape_is_static (&v->shape)) &&
          !g_hash_table_contains (lp->buffer_of, v))
        {
          int rank = MAX (v->shape.rank, 0);
          int64_t dims[FB_MAX_RANK] = { 0 };
          for (int d = 0; d < rank; d++)
            dims[d] = MAX (v->shape.dim[d], 0);
          guint b = fb_plan_add_buffer (lp->plan, FB_BUF_INTERMEDIATE, v->name, v->dtype, rank,
                                        dims);
          fb_plan_buffer (lp->plan, b)->value = v;
          fb_plan_buffer (lp->plan, b)->dynamic = TRUE;
          g_hash_table_insert (lp->buffer_of, v, GUINT_TO_POINTER (b + 1));
        }
    }
  FbKernel *k = kernel_for (lp, node, FB_KERNEL_HOST);
  if (!fb_op_has_flag (node->op, FB_OPF_CONTROL))
    {
      /* Say where it runs: a user reading the kernel list sees it is not generated code. */
      char *label = g_strdup_printf ("%s (host step: reference interpreter, output sized by the "
                                     "data)", k->label);
      g_free (k->label);
      k->label = label;
    }
  for (guint i = 0; i < node->n_inputs; i++)
    if (node->inputs[i])
      fb_kernel_add_arg (k, plan_value_buffer (lp, node->inputs[i], FB_BUF_INTERMEDIATE),
                         FB_KARG_INPUT, node->inputs[i]->dtype, node->inputs[i]->name);
  /* Values the bodies read from this graph are inputs of the node as well. */
  GHashTableIter it;
  gpointer key, users;
  g_hash_table_iter_init (&it, lp->uses);
  while (g_hash_table_iter_next (&it, &key, &users))
    {
      FbValue *v = key;
      if (v->graph == lp->graph && g_ptr_array_find (users, node, NULL))
        fb_kernel_add_arg (k, plan_value_buffer (lp, v, FB_BUF_INTERMEDIATE), FB_KARG_INPUT,
                           value_dtype (v), v->name);
    }
  for (guint i = 0; i < node->n_outputs; i++)
    if (node->outputs[i])
      fb_kernel_add_arg (k, plan_value_buffer (lp, node->outputs[i], FB_BUF_INTERMEDIATE),
                         FB_KARG_OUTPUT, node->outputs[i]->dtype, node->outputs[i]->name);
  return TRUE;
}

static gboolean
lower_node (FbLowerPlan *lp, const FbNode *node, GError **error)
{
  g_autofree char *reason = NULL;
  gboolean folded;

  if (!try_fold (lp, node, &folded, error))
    return FALSE;
  if (folded)
    return TRUE;
  if (!fb_lower_supports_node (node, &reason))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "not supported by the CPU target: %s", reason);
  if (_fb_lower_on_host (node))
    return lower_host (lp, node);
  /* What reads a buffer sized at run time (a fused group after a data-dependent step) runs on
   * the host too: no compiled kernel knows its size. */
  for (guint i = 0; i < node->n_inputs; i++)
    if (node->inputs[i] &&
        fb_plan_buffer (lp->plan, plan_value_buffer (lp, node->inputs[i],
                                                     FB_BUF_INTERMEDIATE))->dynamic)
      return lower_host (lp, node);
  if (!outputs_static (node))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                           "output shape is not known at compile time (pin the model's "
                           "dynamic inputs with --input-shape)");
  if (fb_node_is_view (node) && !view_needs_copy (lp, node))
    {
      FbKernel *k = kernel_for (lp, node, FB_KERNEL_VIEW);
      guint in = plan_value_buffer (lp, node->inputs[0], FB_BUF_INTERMEDIATE);
      guint out = plan_value_buffer (lp, node->outputs[0], FB_BUF_INTERMEDIATE);
      fb_plan_buffer (lp->plan, out)->alias = in;
      fb_kernel_add_arg (k, in, FB_KARG_INPUT, node->inputs[0]->dtype, node->inputs[0]->name);
      fb_kernel_add_arg (k, out, FB_KARG_OUTPUT, node->outputs[0]->dtype, node->outputs[0]->name);
      return TRUE;
    }
  return lower_group (lp, node, error);
}

/* Functions are named after what they compute and their content ("fbk_Conv_Clip_3f9a0c1d22e7_p0"),
 * not after their node: node ids of fused groups shift when a toggle fuses one group less, and
 * equal kernels (repeated blocks of a network) are then one function, compiled and cached once.
 * The plan maps every kernel, with its node and provenance, to its functions. */
static void
name_functions (FbPlan *plan)
{
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      FbKernel *k = g_ptr_array_index (plan->kernels, i);
      if (k->phases->len == 0)
        continue;
      g_autofree char *hash = fb_kernel_hash (k, "");
      const char *what = strchr (k->name, '_');
      for (guint p = 0; p < k->phases->len; p++)
        {
          FbKPhase *ph = g_ptr_array_index (k->phases, p);
          g_free (ph->fn);
          ph->fn = g_strdup_printf ("fbk_%.40s_%.12s_p%u", what ? what + 1 : "k", hash, p);
        }
    }
}

gboolean
_fb_lower_for_gpu (const FbLowerCtx *c)
{
  return c->lp->plan->target_desc->gpu;
}

FbPlan *
fb_lower_graph (const FbGraph *graph, const FbTargetDesc *target, GError **error)
{
  g_return_val_if_fail (graph != NULL && target != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  g_autoptr(FbPlan) plan = fb_plan_new (target->triple);
  plan->target_desc = target;
  plan->graph = graph;
  FbLowerPlan lp = { .plan = plan, .graph = graph };
  lp.buffer_of = g_hash_table_new (NULL, NULL);
  lp.const_of = g_hash_table_new (NULL, NULL);
  lp.uses = fb_graph_build_uses (graph);
  gboolean ok = TRUE;

  for (guint i = 0; i < graph->inputs->len && ok; i++)
    {
      FbValue *v = g_ptr_array_index (graph->inputs, i);
      int rank;
      int64_t dims[FB_MAX_RANK];
      /* A fed sequence or optional is held as given (a dynamic buffer, plan_value_buffer). */
      if (v->kind == FB_KIND_TENSOR && !v->constant && !_fb_lower_dims (v, &rank, dims))
        {
          g_autofree char *shape = fb_shape_to_display (&v->shape);
          g_set_error (error, FB_LOWER_ERROR, FB_LOWER_ERROR_SHAPE,
                       "input '%s' has the dynamic shape %s: pin it with --input-shape %s=...",
                       v->name, shape, v->name);
          ok = FALSE;
          break;
        }
      guint b = plan_value_buffer (&lp, v, FB_BUF_INPUT);
      g_array_append_val (plan->inputs, b);
    }
  for (guint i = 0; i < graph->nodes->len && ok; i++)
    ok = lower_node (&lp, g_ptr_array_index (graph->nodes, i), error);
  for (guint i = 0; i < graph->outputs->len && ok; i++)
    {
      FbValue *v = g_ptr_array_index (graph->outputs, i);
      guint b = plan_value_buffer (&lp, v, FB_BUF_OUTPUT);
      FbBuffer *buf = fb_plan_buffer (plan, b);
      if (buf->kind == FB_BUF_INTERMEDIATE)
        buf->kind = FB_BUF_OUTPUT;
      g_array_append_val (plan->outputs, b);
    }
  g_hash_table_unref (lp.buffer_of);
  g_hash_table_unref (lp.const_of);
  g_hash_table_unref (lp.uses);
  if (!ok)
    return NULL;
  _fb_lower_residual_in_place (plan);
  _fb_lower_concat_in_place (plan);
  _fb_lower_slice_views (plan);
  _fb_lower_product_strides (plan);
  name_functions (plan);
  return g_steal_pointer (&plan);
}
