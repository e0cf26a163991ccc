/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Transposes around matrix products as the products' strides: a cuBLASLt product reads each
 * operand and writes its result as batches of matrices, each with a row stride and a batch
 * stride of its own, and may read an operand transposed. Attention moves its heads with
 * Transposes on every side of its two products: q, k and v from [tokens, heads, d] to
 * [heads, tokens, d], k once more to [heads, d, tokens], and the context back to
 * [tokens, heads, d]. Each was a kernel copying the tensor; read and written through strides,
 * the copies go and the product touches the bytes where they lie.
 *
 * An operand qualifies when a Transpose kernel wrote it and the product is its only reader:
 * the product then reads the Transpose's input, each of its runs (the columns, the rows, the
 * batch, as the product's own strides walk the Transpose's output) one stride there, or it keeps
 * the copy. Columns one apart keep the operand as it was; rows one apart read it transposed,
 * the columns' stride its row stride. A result qualifies when its product is the kernel's only
 * phase, a Transpose is its only reader, and the columns stay one apart in the Transpose's
 * output: the product then writes that output. Either way the Transpose becomes a view with no
 * code. An operand that is a multiple of an activation by one constant number (attention scales
 * q, or q and k by the root of the scale each) is read unscaled, the number taken into the
 * product's alpha, and the walk goes on to what fed that activation: a scale, a Transpose, the
 * Transpose before it. Nothing here changes what is computed: the products' descriptions (FbKGemm) say where
 * every element is. The cuda target's plans only (the cpu target's products are generated
 * loops around sgemm, not library phases). FUSEBENCH_PRODUCT_STRIDES=0 keeps the copies. */
#include "fb-lower-private.h"

/* One of the product's walks over an operand: extent steps of stride elements of the packed
 * buffer it reads. */
typedef struct {
  int64_t extent, stride;
} Walk;

typedef struct {
  int     rank;
  int64_t dims[FB_MAX_RANK];     /* the Transpose's output (packed) */
  int64_t moved[FB_MAX_RANK];    /* per output axis: its stride in the Transpose's input */
} Permuted;

/* The Transpose's output axes and where each lies in its input. */
static gboolean
permuted_of (const FbNode *node, Permuted *p)
{
  int64_t in[FB_MAX_RANK], stride[FB_MAX_RANK];
  int irank = 0;
  if (node->op != FB_OP_TRANSPOSE || !_fb_lower_dims (node->inputs[0], &irank, in) ||
      !_fb_lower_dims (node->outputs[0], &p->rank, p->dims) || p->rank != irank)
    return FALSE;
  guint np = 0;
  const int64_t *perm = fb_node_attr_ints (node, "perm", &np);
  if (perm != NULL && np != (guint) irank)
    return FALSE;
  int64_t s = 1;
  for (int d = irank - 1; d >= 0; d--)
    {
      stride[d] = s;
      s *= in[d];
    }
  for (int d = 0; d < p->rank; d++)
    {
      int from = perm ? (int) perm[d] : p->rank - 1 - d;
      /* An empty tensor has nothing to walk (and offsets could not be split by its extents). */
      if (from < 0 || from >= irank || p->dims[d] < 1)
        return FALSE;
      p->moved[d] = stride[from];
    }
  return TRUE;
}

/* The stride in the Transpose's input of a walk over its packed output: the walk must step
 * over whole axes (one or several neighbouring ones) that lie flat there too. */
static gboolean
walk_stride (const Permuted *p, Walk w, int64_t *out)
{
  if (w.extent <= 1)
    {
      *out = 0;
      return TRUE;
    }
  int64_t packed = 1;
  int d = p->rank - 1;
  for (; d >= 0 && packed < w.stride; d--)
    packed *= p->dims[d];
  if (packed != w.stride)
    return FALSE;
  /* Axes d, d-1, ... make up the extent; each outer one a whole inner span further. */
  int64_t covered = 1, inner_stride = -1, inner_extent = 1;
  for (; d >= 0 && covered < w.extent; d--)
    {
      if (p->dims[d] == 1)
        continue;
      if (inner_stride >= 0 && p->moved[d] != inner_stride * inner_extent)
        return FALSE;
      if (inner_stride < 0)
        *out = p->moved[d];
      inner_stride = p->moved[d];
      inner_extent = p->dims[d];
      covered *= p->dims[d];
    }
  return covered == w.extent;
}

/* Where element offset of the packed output lies in the input. */
static int64_t
moved_offset (const Permuted *p, int64_t offset)
{
  int64_t at = 0;
  for (int d = p->rank - 1; d >= 0; d--)
    {
      at += offset % p->dims[d] * p->moved[d];
      offset /= p->dims[d];
    }
  return at;
}

/* A stored matrix of rows x cols (row stride *ld), batch strides *batch_stride, first element
 * *off, re-described in the Transpose's input; *trans flips when the rows are one apart there. */
static gboolean
restride (const Permuted *p, int64_t rows, int64_t cols, int64_t batch, int64_t *ld,
          int64_t *batch_stride, int64_t *off, int64_t *trans)
{
  int64_t sr, sc, sb;
  if (rows < 2 || cols < 2 || !walk_stride (p, (Walk) { rows, *ld }, &sr) ||
      !walk_stride (p, (Walk) { cols, 1 }, &sc) ||
      !walk_stride (p, (Walk) { batch, *batch_stride }, &sb))
    return FALSE;
  int64_t new_off = moved_offset (p, *off);
  /* cuBLASLt reads 16-byte aligned rows fastest and needs the first element aligned. */
  if (new_off % 4 != 0)
    return FALSE;
  if (sc == 1 && sr >= cols && sr % 4 == 0)
    *ld = sr;
  else if (sr == 1 && sc >= rows && sc % 4 == 0)
    {
      *ld = sc;
      *trans = !*trans;
    }
  else
    return FALSE;
  *batch_stride = sb;
  *off = new_off;
  return TRUE;
}

typedef struct {
  FbPlan  *plan;
  guint   *readers;   /* per root buffer: kernel arguments (not views') reading it */
  int     *writer;    /* per root buffer: the kernel writing it, -1 none, -2 several */
} Strider;

/* The argument of kernel k with this role (the Transpose's one input or output). */
static int
only_arg (const FbPlan *plan, const FbKernel *k, FbKArgRole role)
{
  int found = -1;
  for (guint a = 0; a < k->args->len; a++)
    {
      const FbKArg *arg = &g_array_index (k->args, FbKArg, a);
      if (arg->role != role || fb_plan_buffer (plan, arg->buffer)->kind == FB_BUF_CONST)
        continue;
      if (found >= 0)
        return -1;
      found = (int) a;
    }
  return found;
}

static gboolean
expr_uses (const FbKExpr *e, guint arg)
{
  if (e == NULL)
    return FALSE;
  if ((e->kind == FB_KX_LOAD || e->kind == FB_KX_PTR) && e->arg == arg)
    return TRUE;
  return expr_uses (e->a, arg) || expr_uses (e->b, arg) || expr_uses (e->c, arg);
}

static gboolean
body_uses (const GPtrArray *body, guint arg)
{
  for (guint i = 0; body && i < body->len; i++)
    {
      const FbKStmt *st = g_ptr_array_index (body, i);
      switch (st->kind)
        {
        case FB_KS_LOOP:
          if (expr_uses (st->loop.extent, arg) || body_uses (st->loop.body, arg))
            return TRUE;
          break;
        case FB_KS_STORE:
          if (st->store.arg == arg || expr_uses (st->store.index, arg) ||
              expr_uses (st->store.value, arg))
            return TRUE;
          break;
        case FB_KS_ASSIGN:
          if (expr_uses (st->assign.value, arg))
            return TRUE;
          break;
        case FB_KS_CALL:
          for (guint a = 0; a < st->call.n_args; a++)
            if (expr_uses (st->call.args[a], arg))
              return TRUE;
          break;
        }
    }
  return FALSE;
}

/* Whether a phase of kernel k other than cv's reads or writes argument arg (or cv itself in
 * another role): it would go on reading the bytes the product stops needing. */
static gboolean
arg_shared (const FbKernel *k, const FbKConv *cv, guint arg)
{
  if ((cv->x == arg) + (cv->w == arg) + (cv->y == arg) + (cv->bias == arg) + (cv->add == arg) > 1)
    return TRUE;
  for (guint p = 0; p < k->phases->len; p++)
    {
      const FbKPhase *ph = g_ptr_array_index (k->phases, p);
      if (ph->conv == cv)
        continue;
      if (ph->conv ? ph->conv->x == arg || ph->conv->w == arg || ph->conv->y == arg ||
                     ph->conv->bias == arg || ph->conv->add == arg
                   : body_uses (ph->body, arg))
        return TRUE;
    }
  return FALSE;
}

/* Bytes a kernel may read in place of an activation: packed (no strided Concat piece). */
static gboolean
plain (const FbPlan *plan, guint b)
{
  for (const FbBuffer *buf = fb_plan_buffer (plan, b);; buf = fb_plan_buffer (plan, buf->slice_of))
    {
      if (buf->slice_stride > 0 || buf->dynamic)
        return FALSE;
      if (buf->slice_of < 0)
        return TRUE;
    }
}

#define STRIDED_LABEL "Transpose read or written by a product through its strides"

/* Points the product's operand (its argument *arg) at buffer in, the input of the kernel that
 * wrote the operand's bytes (root), which becomes a view labelled so. */
static void
reroute_operand (Strider *s, FbKernel *k, guint *arg, guint in, guint root, FbKernel *w,
                 char *label)
{
  FbPlan *plan = s->plan;
  /* An argument of its own: the old one may be shared with a phase that still reads it. */
  FbKArg moved = g_array_index (k->args, FbKArg, *arg);
  moved.buffer = in;
  *arg = k->args->len;
  g_array_append_val (k->args, moved);
  guint in_root = fb_plan_root (plan, in);
  /* The feeder, a view now, reads nothing; the product reads in instead of root. */
  for (guint a = 0; a < w->args->len; a++)
    if (g_array_index (w->args, FbKArg, a).role != FB_KARG_OUTPUT)
      s->readers[fb_plan_root (plan, g_array_index (w->args, FbKArg, a).buffer)]--;
  s->readers[root]--;
  s->readers[in_root]++;
  fb_plan_buffer (plan, in_root)->own_life = TRUE;
  s->writer[root] = -1;
  _fb_lower_become_view (w, label);
}

/* The kernel writing operand bytes root when the product alone reads them, else NULL. */
static FbKernel *
sole_feeder (const Strider *s, const FbKernel *k, const FbKConv *cv, guint arg, guint root)
{
  const FbBuffer *ob = fb_plan_buffer (s->plan, root);
  if (s->writer[root] < 0 || s->readers[root] != 1 || ob->kind != FB_BUF_INTERMEDIATE ||
      ob->slice_of >= 0 || arg_shared (k, cv, arg))
    return NULL;
  for (guint i = 0; i < s->plan->buffers->len; i++)
    if (fb_plan_buffer (s->plan, i)->slice_of == (int) root)
      return NULL;
  FbKernel *w = g_ptr_array_index (s->plan->kernels, s->writer[root]);
  return w->kind == FB_KERNEL_LOOPS && w->node != NULL && w->phases->len == 1 ? w : NULL;
}

/* The product's operand A (is_a) or B: its argument (*arg) and root bytes (*root), and the
 * kernel that alone feeds it, or NULL. */
static FbKernel *
operand_feeder (Strider *s, FbKernel *k, FbKConv *cv, gboolean is_a, guint **arg, guint *root)
{
  *arg = is_a ? &cv->x : &cv->w;
  *root = fb_plan_root (s->plan, g_array_index (k->args, FbKArg, **arg).buffer);
  return sole_feeder (s, k, cv, **arg, *root);
}

/* An operand that is x * c for one constant number c (attention's scaling of q, or of q and
 * k by the root of the scale each): the product reads x and multiplies by c itself (alpha). */
static gboolean
scale_operand (Strider *s, FbKernel *k, FbKConv *cv, gboolean is_a)
{
  FbPlan *plan = s->plan;
  guint *arg, root;
  FbKernel *m = operand_feeder (s, k, cv, is_a, &arg, &root);
  if (m == NULL || m->node->op != FB_OP_MUL || m->node->n_inputs != 2)
    return FALSE;
  const FbNode *node = m->node;
  int c = node->inputs[0]->constant && node->inputs[0]->constant->numel == 1 ? 0
        : node->inputs[1]->constant && node->inputs[1]->constant->numel == 1 ? 1 : -1;
  int xi = only_arg (plan, m, FB_KARG_INPUT);
  if (c < 0 || xi < 0 || node->inputs[1 - c]->constant != NULL ||
      node->inputs[1 - c]->dtype != FB_DTYPE_FLOAT32 ||
      !fb_shape_equal (&node->inputs[1 - c]->shape, &node->outputs[0]->shape))
    return FALSE;
  guint in = g_array_index (m->args, FbKArg, xi).buffer;
  guint in_root = fb_plan_root (plan, in);
  if (!plain (plan, in_root) || s->writer[in_root] == -2 ||
      fb_plan_buffer (plan, in)->value != node->inputs[1 - c])
    return FALSE;
  double scale = fb_tensor_get_f64 (node->inputs[c]->constant, 0);
  cv->gemm.alpha *= scale;
  reroute_operand (s, k, arg, in, root, m,
                   g_strdup_printf ("Mul by %g taken into a product (its alpha)", scale));
  return TRUE;
}

/* Operand arg (A: x, B: w) of the product in kernel k, read through strides where it can be. */
static gboolean
stride_operand (Strider *s, FbKernel *k, FbKConv *cv, gboolean is_a)
{
  FbPlan *plan = s->plan;
  guint *arg, root;
  FbKernel *t = operand_feeder (s, k, cv, is_a, &arg, &root);
  if (t == NULL || t->node->op != FB_OP_TRANSPOSE)
    return FALSE;
  int ti = only_arg (plan, t, FB_KARG_INPUT);
  Permuted p;
  if (ti < 0 || !permuted_of (t->node, &p))
    return FALSE;
  guint in = g_array_index (t->args, FbKArg, ti).buffer;
  guint in_root = fb_plan_root (plan, in);
  const FbBuffer *ib = fb_plan_buffer (plan, in_root);
  if (!plain (plan, in_root) || s->writer[in_root] == -2 || ib->dtype != FB_DTYPE_FLOAT32)
    return FALSE;
  FbKGemm *g = &cv->gemm;
  int64_t trans = is_a ? g->ta : g->tb;
  int64_t rows = is_a ? (g->ta ? g->k : g->m) : (g->tb ? g->n : g->k);
  int64_t cols = is_a ? (g->ta ? g->m : g->k) : (g->tb ? g->k : g->n);
  int64_t ld = is_a ? g->lda : g->ldb, bs = is_a ? g->stride_a : g->stride_b;
  int64_t off = is_a ? g->off_a : g->off_b;
  if (!restride (&p, rows, cols, g->batch, &ld, &bs, &off, &trans))
    return FALSE;
  if (is_a)
    {
      g->ta = trans; g->lda = ld; g->stride_a = bs; g->off_a = off;
    }
  else
    {
      g->tb = trans; g->ldb = ld; g->stride_b = bs; g->off_b = off;
    }
  reroute_operand (s, k, arg, in, root, t, g_strdup (STRIDED_LABEL));
  return TRUE;
}

/* The product's result written straight into the Transpose's output that is its only reader. */
static gboolean
stride_result (Strider *s, FbKernel *k, guint ki, FbKConv *cv)
{
  FbPlan *plan = s->plan;
  FbKArg *ka = &g_array_index (k->args, FbKArg, cv->y);
  guint root = fb_plan_root (plan, ka->buffer);
  const FbBuffer *cb = fb_plan_buffer (plan, root);
  if (k->phases->len != 1 || s->readers[root] != 1 || cb->kind != FB_BUF_INTERMEDIATE ||
      cb->slice_of >= 0 || cv->bias == cv->y || cv->add != FB_KCONV_NO_ARG)
    return FALSE;   /* (a residual addend is read through the result's strides too) */
  FbKernel *t = NULL;
  for (guint i = 0; i < plan->kernels->len && t == NULL; i++)
    {
      FbKernel *r = g_ptr_array_index (plan->kernels, i);
      int ri = r->kind == FB_KERNEL_LOOPS && r->node && r->node->op == FB_OP_TRANSPOSE &&
               r->phases->len == 1 ? only_arg (plan, r, FB_KARG_INPUT) : -1;
      if (ri >= 0 && fb_plan_root (plan, g_array_index (r->args, FbKArg, ri).buffer) == root)
        t = r;
    }
  int to = t ? only_arg (plan, t, FB_KARG_OUTPUT) : -1;
  if (to < 0)
    return FALSE;
  guint out = g_array_index (t->args, FbKArg, to).buffer;
  guint out_root = fb_plan_root (plan, out);
  const FbBuffer *tb = fb_plan_buffer (plan, out_root);
  if (!plain (plan, out_root) || tb->slice_of >= 0 || s->writer[out_root] < 0 ||
      tb->kind == FB_BUF_INPUT || tb->kind == FB_BUF_CONST)
    return FALSE;
  for (guint i = 0; i < plan->buffers->len; i++)
    if (fb_plan_buffer (plan, i)->slice_of == (int) out_root)
      return FALSE;
  /* Where the Transpose puts each element of its input, as strides of its output. */
  int64_t in_dims[FB_MAX_RANK], out_dims[FB_MAX_RANK], out_stride[FB_MAX_RANK];
  int irank = 0, orank = 0;
  guint np = 0;
  const int64_t *perm = fb_node_attr_ints (t->node, "perm", &np);
  if (!_fb_lower_dims (t->node->inputs[0], &irank, in_dims) ||
      !_fb_lower_dims (t->node->outputs[0], &orank, out_dims) || irank != orank ||
      (perm != NULL && np != (guint) irank))
    return FALSE;
  int64_t st = 1;
  for (int d = orank - 1; d >= 0; d--)
    {
      out_stride[d] = st;
      st *= out_dims[d];
    }
  Permuted p = { .rank = irank };
  for (int j = 0; j < orank; j++)
    {
      int from = perm ? (int) perm[j] : orank - 1 - j;
      if (from < 0 || from >= irank)
        return FALSE;
      p.dims[from] = in_dims[from];
      p.moved[from] = out_stride[j];
    }
  FbKGemm *g = &cv->gemm;
  int64_t ld = g->ldc, bs = g->stride_c, off = g->off_c, trans = 0;
  /* The result stays row-major: its columns must stay one apart. */
  if (!restride (&p, g->m, g->n, g->batch, &ld, &bs, &off, &trans) || trans)
    return FALSE;
  g->ldc = ld;
  g->stride_c = bs;
  g->off_c = off;
  ka->buffer = out;
  s->readers[root]--;
  s->writer[root] = -1;
  s->writer[out_root] = (int) ki;
  fb_plan_buffer (plan, out_root)->own_life = TRUE;
  _fb_lower_become_view (t, g_strdup (STRIDED_LABEL));
  return TRUE;
}

guint
_fb_lower_product_strides (FbPlan *plan)
{
  g_assert (plan != NULL);
  if (plan->target_desc == NULL || g_strcmp0 (g_getenv ("FUSEBENCH_PRODUCT_STRIDES"), "0") == 0)
    return 0;
  guint n_bufs = plan->buffers->len, n = 0;
  Strider s = { .plan = plan, .readers = g_new0 (guint, n_bufs), .writer = g_new (int, n_bufs) };
  for (guint b = 0; b < n_bufs; b++)
    s.writer[b] = -1;
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      if (k->kind == FB_KERNEL_VIEW)
        continue;
      for (guint a = 0; a < k->args->len; a++)
        {
          const FbKArg *arg = &g_array_index (k->args, FbKArg, a);
          guint r = fb_plan_root (plan, arg->buffer);
          if (arg->role == FB_KARG_OUTPUT)
            s.writer[r] = s.writer[r] == -1 ? (int) i : -2;
          else
            s.readers[r]++;
        }
    }
  for (guint o = 0; o < plan->outputs->len; o++)
    s.readers[fb_plan_root (plan, g_array_index (plan->outputs, guint, o))]++;
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      FbKernel *k = g_ptr_array_index (plan->kernels, i);
      if (k->kind != FB_KERNEL_LIBRARY)
        continue;
      for (guint p = 0; p < k->phases->len; p++)
        {
          FbKPhase *ph = g_ptr_array_index (k->phases, p);
          if (ph->conv == NULL || ph->conv->lib != FB_KLIB_GEMM)
            continue;
          /* Each operand back through its feeders as far as they go: a scale, a Transpose,
           * the Transpose before it. */
          for (int is_a = 0; is_a < 2; is_a++)
            for (guint taken = 1; taken;)
              {
                taken = scale_operand (&s, k, ph->conv, is_a) + stride_operand (&s, k, ph->conv, is_a);
                n += taken;
              }
          n += stride_result (&s, k, i, ph->conv);
        }
    }
  g_free (s.readers);
  g_free (s.writer);
  return n;
}
