/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Building kernels and plans: the pool, expression and statement constructors. */
#include "fb-kernel.h"

#include <string.h>

G_DEFINE_QUARK (fb-lower-error-quark, fb_lower_error)

/* Kernel IR nodes are many, tiny and all die with their kernel: a bump pool. */
#define POOL_BLOCK 16384

struct _FbKPool {
  GSList *blocks;
  gsize   used;                 /* bytes used in the head block */
  gsize   size;                 /* size of the head block */
  GPtrArray *arrays;            /* loop bodies (GPtrArray*), which grow and so live outside */
};

static gpointer
pool_alloc (FbKPool *pool, gsize size)
{
  size = (size + 15) & ~(gsize) 15;
  if (pool->blocks == NULL || pool->used + size > pool->size)
    {
      gsize bs = MAX (POOL_BLOCK, size);
      pool->blocks = g_slist_prepend (pool->blocks, g_malloc0 (bs));
      pool->size = bs;
      pool->used = 0;
    }
  gpointer p = (char *) pool->blocks->data + pool->used;
  pool->used += size;
  return p;
}

const char *
fb_kernel_strdup (FbKernel *kernel, const char *s)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  if (s == NULL)
    return NULL;
  gsize n = strlen (s) + 1;
  char *d = pool_alloc (kernel->pool, n);
  memcpy (d, s, n);
  return d;
}

static void
phase_free (gpointer p)
{
  FbKPhase *phase = p;
  g_free (phase->fn);
  g_ptr_array_unref (phase->body);
  g_free (phase->conv);
  g_array_unref (phase->prov);
  g_free (phase);
}

static void
clear_string (gpointer p)
{
  g_free (*(char **) p);
}

FbKernel *
fb_kernel_new (const char *name)
{
  g_return_val_if_fail (name != NULL, NULL);
  FbKernel *k = g_new0 (FbKernel, 1);
  k->pool = g_new0 (FbKPool, 1);
  k->pool->arrays = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  k->name = g_strdup (name);
  k->prov_names = g_array_new (FALSE, FALSE, sizeof (char *));
  g_array_set_clear_func (k->prov_names, clear_string);
  k->args = g_array_new (FALSE, TRUE, sizeof (FbKArg));
  k->accs = g_array_new (FALSE, TRUE, sizeof (FbDType));
  k->phases = g_ptr_array_new_with_free_func (phase_free);
  return k;
}

void
fb_kernel_free (FbKernel *kernel)
{
  if (kernel == NULL)
    return;
  g_ptr_array_unref (kernel->phases);
  g_array_unref (kernel->args);
  g_array_unref (kernel->accs);
  g_array_unref (kernel->prov_names);
  g_ptr_array_unref (kernel->pool->arrays);
  g_slist_free_full (kernel->pool->blocks, g_free);
  g_free (kernel->pool);
  g_free (kernel->name);
  g_free (kernel->label);
  g_free (kernel);
}

guint
fb_kernel_add_arg (FbKernel *kernel, guint buffer, FbKArgRole role, FbDType dtype,
                   const char *name)
{
  g_return_val_if_fail (kernel != NULL, 0);
  for (guint i = 0; i < kernel->args->len; i++)
    {
      FbKArg *a = &g_array_index (kernel->args, FbKArg, i);
      if (a->buffer == buffer)
        {
          /* One buffer, one argument: an output read back stays an output. */
          if (role == FB_KARG_OUTPUT)
            a->role = FB_KARG_OUTPUT;
          return i;
        }
    }
  FbKArg arg = { .buffer = buffer, .role = role, .dtype = dtype,
                 .name = fb_kernel_strdup (kernel, name) };
  g_array_append_val (kernel->args, arg);
  return kernel->args->len - 1;
}

guint
fb_kernel_new_acc (FbKernel *kernel, FbDType dtype)
{
  g_return_val_if_fail (kernel != NULL, 0);
  g_array_append_val (kernel->accs, dtype);
  return kernel->accs->len - 1;
}

guint
fb_kernel_new_var (FbKernel *kernel)
{
  g_return_val_if_fail (kernel != NULL, 0);
  return kernel->n_vars++;
}

FbKPhase *
fb_kernel_add_phase (FbKernel *kernel, int64_t extent, double work)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  FbKPhase *phase = g_new0 (FbKPhase, 1);
  phase->fn = g_strdup_printf ("%s_p%u", kernel->name, kernel->phases->len);
  phase->extent = extent;
  phase->work = work;
  phase->body = g_ptr_array_new ();
  phase->prov = g_array_new (FALSE, FALSE, sizeof (guint));
  g_ptr_array_add (kernel->phases, phase);
  return phase;
}

gboolean
fb_kphase_has_prov (const FbKPhase *phase, guint prov)
{
  g_return_val_if_fail (phase != NULL, FALSE);
  for (guint i = 0; phase->prov != NULL && i < phase->prov->len; i++)
    if (g_array_index (phase->prov, guint, i) == prov)
      return TRUE;
  return FALSE;
}

void
fb_kphase_add_prov (FbKPhase *phase, const guint *prov, guint n)
{
  g_return_if_fail (phase != NULL && phase->prov != NULL);
  g_return_if_fail (prov != NULL || n == 0);
  for (guint i = 0; i < n; i++)
    if (!fb_kphase_has_prov (phase, prov[i]))
      g_array_append_val (phase->prov, prov[i]);
}

FbKPhase *
fb_kernel_add_conv_phase (FbKernel *kernel, const FbKConv *conv, double work)
{
  g_return_val_if_fail (kernel != NULL && conv != NULL, NULL);
  FbKPhase *phase = fb_kernel_add_phase (kernel, 1, work);
  phase->conv = g_memdup2 (conv, sizeof *conv);
  return phase;
}

/* ---- expressions -------------------------------------------------------------------------- */

static FbKExpr *
expr_new (FbKernel *k, FbKExprKind kind, FbDType dtype)
{
  FbKExpr *e = pool_alloc (k->pool, sizeof (FbKExpr));
  e->kind = kind;
  e->dtype = dtype;
  return e;
}

FbKExpr *
fb_kx_const_f (FbKernel *k, FbDType dtype, double v)
{
  g_return_val_if_fail (k != NULL, NULL);
  if (!fb_dtype_is_float (dtype))
    return fb_kx_const_i (k, dtype, (int64_t) v);
  FbKExpr *e = expr_new (k, FB_KX_CONST, dtype);
  e->f = dtype == FB_DTYPE_FLOAT32 ? (double) (float) v : v;
  return e;
}

FbKExpr *
fb_kx_const_i (FbKernel *k, FbDType dtype, int64_t v)
{
  g_return_val_if_fail (k != NULL, NULL);
  if (fb_dtype_is_float (dtype))
    return fb_kx_const_f (k, dtype, (double) v);
  FbKExpr *e = expr_new (k, FB_KX_CONST, dtype);
  e->i = dtype == FB_DTYPE_BOOL ? (v != 0) : v;
  return e;
}

FbKExpr *
fb_kx_index (FbKernel *k, int64_t v)
{
  return fb_kx_const_i (k, FB_DTYPE_INT64, v);
}

FbKExpr *
fb_kx_var (FbKernel *k, guint var)
{
  g_return_val_if_fail (k != NULL, NULL);
  FbKExpr *e = expr_new (k, FB_KX_VAR, FB_DTYPE_INT64);
  e->var = var;
  return e;
}

FbKExpr *
fb_kx_acc (FbKernel *k, guint acc)
{
  g_return_val_if_fail (k != NULL && acc < k->accs->len, NULL);
  FbKExpr *e = expr_new (k, FB_KX_ACC, g_array_index (k->accs, FbDType, acc));
  e->acc = acc;
  return e;
}

FbKExpr *
fb_kx_load (FbKernel *k, guint arg, FbKExpr *index)
{
  g_return_val_if_fail (k != NULL && arg < k->args->len && index != NULL, NULL);
  FbKExpr *e = expr_new (k, FB_KX_LOAD, g_array_index (k->args, FbKArg, arg).dtype);
  e->arg = arg;
  e->a = index;
  return e;
}

FbKExpr *
fb_kx_ptr (FbKernel *k, guint arg, FbKExpr *index)
{
  g_return_val_if_fail (k != NULL && arg < k->args->len && index != NULL, NULL);
  FbKExpr *e = expr_new (k, FB_KX_PTR, g_array_index (k->args, FbKArg, arg).dtype);
  e->arg = arg;
  e->a = index;
  return e;
}

gboolean
fb_kx_is_const (const FbKExpr *e, double *value)
{
  if (e == NULL || e->kind != FB_KX_CONST)
    return FALSE;
  if (value)
    *value = fb_dtype_is_float (e->dtype) ? e->f : (double) e->i;
  return TRUE;
}

FbKExpr *
fb_kx_unary (FbKernel *k, FbKUnary op, FbKExpr *a)
{
  g_return_val_if_fail (k != NULL && a != NULL, NULL);
  FbDType t = op == FB_KU_ISNAN ? FB_DTYPE_BOOL : a->dtype;
  if (a->kind == FB_KX_CONST && op == FB_KU_NEG)
    return fb_dtype_is_float (a->dtype) ? fb_kx_const_f (k, t, -a->f) : fb_kx_const_i (k, t, -a->i);
  FbKExpr *e = expr_new (k, FB_KX_UNARY, t);
  e->uop = op;
  e->a = a;
  return e;
}

float
fb_tf32_round (float x)
{
  uint32_t bits;
  memcpy (&bits, &x, sizeof bits);
  uint32_t rounded = (bits + 0x1000u) & 0xffffe000u;
  if ((rounded & 0x7f800000u) == 0x7f800000u)
    rounded = bits & 0xffffe000u;
  float r;
  memcpy (&r, &rounded, sizeof r);
  return r;
}

static gboolean
bop_is_compare (FbKBinary op)
{
  return op >= FB_KB_EQ && op <= FB_KB_GE;
}

FbKExpr *
fb_kx_binary (FbKernel *k, FbKBinary op, FbKExpr *a, FbKExpr *b)
{
  g_return_val_if_fail (k != NULL && a != NULL && b != NULL, NULL);
  FbDType t = bop_is_compare (op) ? FB_DTYPE_BOOL : a->dtype;
  /* Integer index arithmetic folds so that printed indices read as affine forms; float
   * arithmetic is left to LLVM, which knows the IEEE rules. */
  if (!fb_dtype_is_float (a->dtype) && a->dtype != FB_DTYPE_BOOL && !bop_is_compare (op))
    {
      gboolean ca = a->kind == FB_KX_CONST, cb = b->kind == FB_KX_CONST;
      if (ca && cb)
        switch (op)
          {
          case FB_KB_ADD: return fb_kx_const_i (k, t, a->i + b->i);
          case FB_KB_SUB: return fb_kx_const_i (k, t, a->i - b->i);
          case FB_KB_MUL: return fb_kx_const_i (k, t, a->i * b->i);
          case FB_KB_MIN: return fb_kx_const_i (k, t, MIN (a->i, b->i));
          case FB_KB_MAX: return fb_kx_const_i (k, t, MAX (a->i, b->i));
          default: break;
          }
      if (op == FB_KB_ADD && ca && a->i == 0) return b;
      if ((op == FB_KB_ADD || op == FB_KB_SUB) && cb && b->i == 0) return a;
      if (op == FB_KB_MUL && ((ca && a->i == 0) || (cb && b->i == 0)))
        return fb_kx_const_i (k, t, 0);
      if (op == FB_KB_MUL && ca && a->i == 1) return b;
      if (op == FB_KB_MUL && cb && b->i == 1) return a;
      if ((op == FB_KB_DIV) && cb && b->i == 1) return a;
    }
  FbKExpr *e = expr_new (k, FB_KX_BINARY, t);
  e->bop = op;
  e->a = a;
  e->b = b;
  return e;
}

FbKExpr *
fb_kx_select (FbKernel *k, FbKExpr *cond, FbKExpr *a, FbKExpr *b)
{
  g_return_val_if_fail (k != NULL && cond != NULL && a != NULL && b != NULL, NULL);
  if (cond->kind == FB_KX_CONST)
    return cond->i ? a : b;
  FbKExpr *e = expr_new (k, FB_KX_SELECT, a->dtype);
  e->a = cond;
  e->b = a;
  e->c = b;
  return e;
}

FbKExpr *
fb_kx_cast (FbKernel *k, FbKExpr *a, FbDType dtype)
{
  g_return_val_if_fail (k != NULL && a != NULL, NULL);
  if (a->dtype == dtype)
    return a;
  if (a->kind == FB_KX_CONST && dtype != FB_DTYPE_BOOL)
    {
      if (fb_dtype_is_float (a->dtype))
        return fb_dtype_is_float (dtype) ? fb_kx_const_f (k, dtype, a->f)
                                         : fb_kx_const_i (k, dtype, (int64_t) a->f);
      return fb_kx_const_i (k, dtype, a->i);
    }
  FbKExpr *e = expr_new (k, FB_KX_CAST, dtype);
  e->a = a;
  return e;
}

FbKExpr *
fb_kx_add (FbKernel *k, FbKExpr *a, FbKExpr *b)
{
  /* Constants float to the right so that "i0*16 + i1 + 3" prints in that order. */
  if (a->kind == FB_KX_CONST && b->kind != FB_KX_CONST)
    return fb_kx_add (k, b, a);
  if (b->kind == FB_KX_CONST && a->kind == FB_KX_BINARY && a->bop == FB_KB_ADD &&
      a->b->kind == FB_KX_CONST)
    return fb_kx_add (k, a->a, fb_kx_index (k, a->b->i + b->i));
  return fb_kx_binary (k, FB_KB_ADD, a, b);
}

FbKExpr *
fb_kx_mul_c (FbKernel *k, FbKExpr *a, int64_t c)
{
  return fb_kx_binary (k, FB_KB_MUL, a, fb_kx_index (k, c));
}

FbKExpr *
fb_kx_add_c (FbKernel *k, FbKExpr *a, int64_t c)
{
  return fb_kx_add (k, a, fb_kx_index (k, c));
}

/* ---- statements --------------------------------------------------------------------------- */

static FbKStmt *
stmt_new (FbKernel *k, FbKStmtKind kind)
{
  FbKStmt *s = pool_alloc (k->pool, sizeof (FbKStmt));
  s->kind = kind;
  return s;
}

FbKStmt *
fb_ks_loop (FbKernel *k, guint var, FbKExpr *extent)
{
  g_return_val_if_fail (k != NULL && extent != NULL, NULL);
  FbKStmt *s = stmt_new (k, FB_KS_LOOP);
  s->loop.var = var;
  s->loop.extent = extent;
  s->loop.body = g_ptr_array_new ();
  g_ptr_array_add (k->pool->arrays, s->loop.body);
  return s;
}

FbKStmt *
fb_ks_store (FbKernel *k, guint arg, FbKExpr *index, FbKExpr *value)
{
  g_return_val_if_fail (k != NULL && index != NULL && value != NULL, NULL);
  FbKStmt *s = stmt_new (k, FB_KS_STORE);
  s->store.arg = arg;
  s->store.index = index;
  s->store.value = value;
  return s;
}

FbKStmt *
fb_ks_assign (FbKernel *k, guint acc, FbKExpr *value)
{
  g_return_val_if_fail (k != NULL && value != NULL, NULL);
  FbKStmt *s = stmt_new (k, FB_KS_ASSIGN);
  s->assign.acc = acc;
  s->assign.value = value;
  return s;
}

FbKStmt *
fb_ks_call (FbKernel *k, const char *callee, guint n_args, FbKExpr **args)
{
  g_return_val_if_fail (k != NULL && callee != NULL, NULL);
  FbKStmt *s = stmt_new (k, FB_KS_CALL);
  s->call.callee = fb_kernel_strdup (k, callee);
  s->call.n_args = n_args;
  s->call.args = pool_alloc (k->pool, sizeof (FbKExpr *) * MAX (n_args, 1));
  memcpy (s->call.args, args, sizeof (FbKExpr *) * n_args);
  return s;
}

/* ---- plans -------------------------------------------------------------------------------- */

static void
buffer_clear (gpointer p)
{
  FbBuffer *b = p;
  g_free (b->name);
  g_clear_pointer (&b->constant, fb_tensor_unref);
}

FbPlan *
fb_plan_new (const char *target)
{
  FbPlan *plan = g_new0 (FbPlan, 1);
  g_atomic_ref_count_init (&plan->ref_count);
  plan->target = g_strdup (target ? target : "");
  plan->kernels = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_kernel_free);
  plan->buffers = g_array_new (FALSE, TRUE, sizeof (FbBuffer));
  g_array_set_clear_func (plan->buffers, buffer_clear);
  plan->inputs = g_array_new (FALSE, FALSE, sizeof (guint));
  plan->outputs = g_array_new (FALSE, FALSE, sizeof (guint));
  return plan;
}

FbPlan *
fb_plan_ref (FbPlan *plan)
{
  g_return_val_if_fail (plan != NULL, NULL);
  g_atomic_ref_count_inc (&plan->ref_count);
  return plan;
}

void
fb_plan_unref (FbPlan *plan)
{
  if (plan == NULL || !g_atomic_ref_count_dec (&plan->ref_count))
    return;
  g_ptr_array_unref (plan->kernels);
  g_array_unref (plan->buffers);
  g_array_unref (plan->inputs);
  g_array_unref (plan->outputs);
  g_clear_pointer (&plan->owned_graph, fb_graph_free);
  g_free (plan->target);
  g_free (plan);
}

guint
fb_plan_add_buffer (FbPlan *plan, FbBufferKind kind, const char *name, FbDType dtype, int rank,
                    const int64_t *dims)
{
  g_return_val_if_fail (plan != NULL && rank >= 0 && rank <= FB_MAX_RANK, 0);
  FbBuffer b = { 0 };
  b.index = plan->buffers->len;
  b.kind = kind;
  b.name = g_strdup (name ? name : "");
  b.dtype = dtype;
  b.rank = rank;
  b.numel = 1;
  for (int d = 0; d < rank; d++)
    {
      b.dims[d] = dims[d];
      b.numel *= dims[d];
    }
  b.nbytes = b.numel * (int64_t) fb_dtype_size (dtype);
  b.alias = -1;
  b.slice_of = -1;
  b.offset = -1;
  b.first_use = -1;
  b.last_use = -1;
  g_array_append_val (plan->buffers, b);
  return b.index;
}

FbBuffer *
fb_plan_buffer (const FbPlan *plan, guint index)
{
  g_return_val_if_fail (plan != NULL && index < plan->buffers->len, NULL);
  return &g_array_index (plan->buffers, FbBuffer, index);
}

guint
fb_plan_slice_root (const FbPlan *plan, guint index, int64_t *offset)
{
  g_return_val_if_fail (plan != NULL && offset != NULL, index);
  *offset = 0;
  const FbBuffer *b = fb_plan_buffer (plan, index);
  while (b->slice_of >= 0)
    {
      *offset += b->slice_offset;
      index = (guint) b->slice_of;
      b = fb_plan_buffer (plan, index);
    }
  return index;
}

int64_t
fb_buffer_span (const FbBuffer *b)
{
  g_return_val_if_fail (b != NULL, 0);
  if (b->slice_stride <= 0 || b->rank < 1 || b->numel == 0)
    return b->nbytes;
  int64_t row = b->dims[b->rank - 1];
  return ((b->numel / row - 1) * b->slice_stride + row) * fb_dtype_size (b->dtype);
}

guint
fb_plan_root (const FbPlan *plan, guint index)
{
  g_return_val_if_fail (plan != NULL && index < plan->buffers->len, index);
  while (g_array_index (plan->buffers, FbBuffer, index).alias >= 0)
    index = g_array_index (plan->buffers, FbBuffer, index).alias;
  return index;
}
