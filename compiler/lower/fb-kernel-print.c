/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The kernel IR as text (the "kernels" lowering stage the UI shows) and its content hash. */
#include "fb-kernel.h"

#include <math.h>

static const char *const unary_names[FB_KU_COUNT] = {
  [FB_KU_NEG] = "neg", [FB_KU_ABS] = "abs", [FB_KU_EXP] = "exp", [FB_KU_LOG] = "log",
  [FB_KU_SQRT] = "sqrt", [FB_KU_TANH] = "tanh", [FB_KU_ERF] = "erf", [FB_KU_SIN] = "sin",
  [FB_KU_COS] = "cos", [FB_KU_FLOOR] = "floor", [FB_KU_CEIL] = "ceil", [FB_KU_ROUND] = "round",
  [FB_KU_NOT] = "not", [FB_KU_ISNAN] = "isnan", [FB_KU_SIGMOID] = "sigmoid",
  [FB_KU_TF32] = "tf32",
};

static const char *const binary_names[FB_KB_COUNT] = {
  [FB_KB_ADD] = "+", [FB_KB_SUB] = "-", [FB_KB_MUL] = "*", [FB_KB_DIV] = "/",
  [FB_KB_MOD] = "%", [FB_KB_FMOD] = "fmod", [FB_KB_POW] = "pow", [FB_KB_MIN] = "min",
  [FB_KB_MAX] = "max", [FB_KB_EQ] = "==", [FB_KB_NE] = "!=", [FB_KB_LT] = "<",
  [FB_KB_LE] = "<=", [FB_KB_GT] = ">", [FB_KB_GE] = ">=", [FB_KB_AND] = "and",
  [FB_KB_OR] = "or", [FB_KB_XOR] = "xor", [FB_KB_SHL] = "<<", [FB_KB_SHR] = ">>",
  [FB_KB_SUB_EXACT] = "sub_exact",
};

static gboolean
bop_is_infix (FbKBinary op)
{
  return op <= FB_KB_MOD || (op >= FB_KB_EQ && op <= FB_KB_GE);
}

static void
print_expr (GString *s, const FbKExpr *e)
{
  switch (e->kind)
    {
    case FB_KX_CONST:
      if (fb_dtype_is_float (e->dtype))
        {
          if (isinf (e->f))
            g_string_append (s, e->f > 0 ? "inf" : "-inf");
          else
            g_string_append_printf (s, "%.9g", e->f);
          if (e->dtype == FB_DTYPE_FLOAT32)
            g_string_append_c (s, 'f');
        }
      else if (e->dtype == FB_DTYPE_BOOL)
        g_string_append (s, e->i ? "true" : "false");
      else
        g_string_append_printf (s, "%" G_GINT64_FORMAT, e->i);
      break;
    case FB_KX_VAR:
      g_string_append_printf (s, "i%u", e->var);
      break;
    case FB_KX_ACC:
      g_string_append_printf (s, "acc%u", e->acc);
      break;
    case FB_KX_LOAD:
    case FB_KX_PTR:
      g_string_append_printf (s, "%sa%u[", e->kind == FB_KX_PTR ? "&" : "", e->arg);
      print_expr (s, e->a);
      g_string_append_c (s, ']');
      break;
    case FB_KX_UNARY:
      g_string_append_printf (s, "%s(", unary_names[e->uop]);
      print_expr (s, e->a);
      g_string_append_c (s, ')');
      break;
    case FB_KX_BINARY:
      if (bop_is_infix (e->bop))
        {
          gboolean paren_a = e->a->kind == FB_KX_BINARY && bop_is_infix (e->a->bop) &&
                             !(e->bop == FB_KB_ADD && e->a->bop == FB_KB_ADD) &&
                             !(e->bop == FB_KB_MUL && e->a->bop == FB_KB_MUL) &&
                             !(e->bop == FB_KB_ADD && e->a->bop == FB_KB_MUL);
          gboolean paren_b = e->b->kind == FB_KX_BINARY && bop_is_infix (e->b->bop) &&
                             !(e->bop == FB_KB_ADD && e->b->bop == FB_KB_MUL);
          if (paren_a) g_string_append_c (s, '(');
          print_expr (s, e->a);
          if (paren_a) g_string_append_c (s, ')');
          g_string_append_printf (s, " %s ", binary_names[e->bop]);
          if (paren_b) g_string_append_c (s, '(');
          print_expr (s, e->b);
          if (paren_b) g_string_append_c (s, ')');
        }
      else
        {
          g_string_append_printf (s, "%s(", binary_names[e->bop]);
          print_expr (s, e->a);
          g_string_append (s, ", ");
          print_expr (s, e->b);
          g_string_append_c (s, ')');
        }
      break;
    case FB_KX_SELECT:
      g_string_append (s, "select(");
      print_expr (s, e->a);
      g_string_append (s, ", ");
      print_expr (s, e->b);
      g_string_append (s, ", ");
      print_expr (s, e->c);
      g_string_append_c (s, ')');
      break;
    case FB_KX_CAST:
      g_string_append_printf (s, "%s(", fb_dtype_name (e->dtype));
      print_expr (s, e->a);
      g_string_append_c (s, ')');
      break;
    }
}

struct _FbKernelLines {
  GHashTable *start;            /* FbKStmt* or FbKPhase* -> its first line */
  GArray     *phase_first;      /* guint: the first line of each phase, in order */
  guint       n_lines;
  /* While printing: the line the text's end is on, counted up to scanned. */
  guint       line;
  gsize       scanned;
};

void
fb_kernel_lines_free (FbKernelLines *lines)
{
  if (lines == NULL)
    return;
  g_hash_table_unref (lines->start);
  g_array_unref (lines->phase_first);
  g_free (lines);
}

/* Counts the lines printed since the last look. */
static void
advance (FbKernelLines *lines, const GString *s)
{
  for (; lines->scanned < s->len; lines->scanned++)
    if (s->str[lines->scanned] == '\n')
      lines->line++;
}

/* Notes that what is printed next (at the start of a line) is p. */
static void
note (FbKernelLines *lines, const GString *s, gconstpointer p)
{
  if (lines == NULL)
    return;
  advance (lines, s);
  g_hash_table_insert (lines->start, (gpointer) p, GUINT_TO_POINTER (lines->line));
}

guint
fb_kernel_lines_of (const FbKernelLines *lines, gconstpointer stmt_or_phase)
{
  g_return_val_if_fail (lines != NULL, 0);
  return GPOINTER_TO_UINT (g_hash_table_lookup (lines->start, stmt_or_phase));
}

int
fb_kernel_lines_phase_at (const FbKernelLines *lines, guint line)
{
  g_return_val_if_fail (lines != NULL, -1);
  int phase = -1;
  for (guint p = 0; p < lines->phase_first->len; p++)
    if (g_array_index (lines->phase_first, guint, p) <= line)
      phase = p;
  return line >= 1 && line <= lines->n_lines ? phase : -1;
}

guint
fb_kernel_lines_count (const FbKernelLines *lines)
{
  g_return_val_if_fail (lines != NULL, 0);
  return lines->n_lines;
}

static void
print_stmts (GString *s, const GPtrArray *body, int indent, FbKernelLines *lines)
{
  for (guint i = 0; i < body->len; i++)
    {
      const FbKStmt *st = g_ptr_array_index (body, i);
      note (lines, s, st);
      g_string_append_printf (s, "%*s", indent, "");
      switch (st->kind)
        {
        case FB_KS_LOOP:
          g_string_append_printf (s, "for i%u in 0..", st->loop.var);
          print_expr (s, st->loop.extent);
          g_string_append (s, st->loop.parallel ? " parallel:\n" : ":\n");
          print_stmts (s, st->loop.body, indent + 2, lines);
          break;
        case FB_KS_STORE:
          g_string_append_printf (s, "a%u[", st->store.arg);
          print_expr (s, st->store.index);
          g_string_append (s, "] = ");
          print_expr (s, st->store.value);
          g_string_append_c (s, '\n');
          break;
        case FB_KS_ASSIGN:
          g_string_append_printf (s, "acc%u = ", st->assign.acc);
          print_expr (s, st->assign.value);
          g_string_append_c (s, '\n');
          break;
        case FB_KS_CALL:
          g_string_append_printf (s, "call %s(", st->call.callee);
          for (guint a = 0; a < st->call.n_args; a++)
            {
              if (a)
                g_string_append (s, ", ");
              print_expr (s, st->call.args[a]);
            }
          g_string_append (s, ")\n");
          break;
        }
    }
}

static const char *
role_name (FbKArgRole role)
{
  switch (role)
    {
    case FB_KARG_INPUT: return "in";
    case FB_KARG_OUTPUT: return "out";
    case FB_KARG_TEMP: return "temp";
    default: return "?";
    }
}

static const char *
kind_name (FbKernelKind kind)
{
  switch (kind)
    {
    case FB_KERNEL_LOOPS: return "loops";
    case FB_KERNEL_LIBRARY: return "library";
    case FB_KERNEL_VIEW: return "view";
    case FB_KERNEL_HOST: return "host";
    default: return "?";
    }
}

static void
print_shape (GString *s, const FbBuffer *b)
{
  g_string_append_c (s, '[');
  for (int d = 0; d < b->rank; d++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? "x" : "", b->dims[d]);
  g_string_append_c (s, ']');
}

/* canonical: only what determines the generated code, so that the hash of a kernel does not
 * change when other kernels or buffers are added around it. */
static const char *
post_name (int64_t kind)
{
  switch (kind)
    {
    case FB_CONV_POST_RELU: return "relu";
    case FB_CONV_POST_CLIP: return "clip";
    case FB_CONV_POST_TANH: return "tanh";
    case FB_CONV_POST_SIGMOID: return "sigmoid";
    case FB_CONV_POST_SWISH: return "swish";
    case FB_CONV_POST_HARD_SWISH: return "hardswish";
    case FB_CONV_POST_GELU: return "gelu";
    case FB_CONV_POST_ADD: return "add";
    case FB_CONV_POST_MAX: return "max";
    case FB_CONV_POST_MIN: return "min";
    case FB_CONV_POST_SUM: return "sum";
    default: return "?";
    }
}

/* One line of geometry, one of fused epilogue: everything the primitive is made from. */
static void
print_gemm (GString *s, const FbKConv *cv)
{
  const FbKGemm *g = &cv->gemm;
  g_string_append_printf (s, "    a%u[%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "] = %.9g * a%u%s[%"
                          G_GINT64_FORMAT "x%" G_GINT64_FORMAT "] * a%u%s[%" G_GINT64_FORMAT "x%"
                          G_GINT64_FORMAT "]", cv->y, g->m, g->n, g->alpha, cv->x, g->ta ? "^T" : "",
                          g->m, g->k, cv->w, g->tb ? "^T" : "", g->k, g->n);
  if (cv->bias != FB_KCONV_NO_ARG)
    g_string_append_printf (s, " + a%u (along rows)", cv->bias);
  if (cv->add != FB_KCONV_NO_ARG)
    g_string_append_printf (s, " + a%u (residual, laid out as the result)", cv->add);
  if (g->relu)
    g_string_append (s, ", relu");
  if (g->split3)
    g_string_append (s, ", float32 as three TF32 products (operands split along the depth)");
  else if (g->tf32)
    g_string_append (s, ", TF32 allowed");
  if (g->off_a || g->off_b || g->off_c)
    g_string_append_printf (s, ", from elements %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %"
                            G_GINT64_FORMAT, g->off_a, g->off_b, g->off_c);
  if (g->batch > 1)
    g_string_append_printf (s, ", %" G_GINT64_FORMAT " batches (strides %" G_GINT64_FORMAT ", %"
                            G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", g->batch, g->stride_a,
                            g->stride_b, g->stride_c);
  g_string_append_c (s, '\n');
}

static void
print_conv (GString *s, const FbKConv *cv)
{
  const FbConvDesc *d = &cv->desc;
  if (cv->lib == FB_KLIB_GEMM)
    {
      print_gemm (s, cv);
      return;
    }
  if (cv->cudnn && cv->nchw)
    {
      g_string_append_printf (s, "    a%u[%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                              "x%" G_GINT64_FORMAT " nchw] = conv (a%u[%" G_GINT64_FORMAT "x%"
                              G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " nchw], a%u",
                              cv->y, d->n, d->co, d->oh, d->ow, cv->x, d->n, d->c, d->h, d->w, cv->w);
      goto geometry;
    }
  g_string_append_printf (s, "    a%u[%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                          "x%" G_GINT64_FORMAT " nhwc] = %s (a%u[%" G_GINT64_FORMAT "x%"
                          G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " nhwc], a%u",
                          cv->y, d->n, d->oh, d->ow, d->co, d->transposed ? "deconv" : "conv",
                          cv->x, d->n, d->h, d->w, d->c, cv->w);
geometry:
  if (cv->bias != FB_KCONV_NO_ARG)
    g_string_append_printf (s, " + a%u", cv->bias);
  g_string_append_printf (s, ") kernel %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " stride %"
                          G_GINT64_FORMAT "x%" G_GINT64_FORMAT " dilation %" G_GINT64_FORMAT "x%"
                          G_GINT64_FORMAT " pads %" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%"
                          G_GINT64_FORMAT ",%" G_GINT64_FORMAT " groups %" G_GINT64_FORMAT "\n",
                          d->kh, d->kw, d->sh, d->sw, d->dh, d->dw, d->pt, d->pl, d->pb, d->pr,
                          d->groups);
  if (d->scaled_input)
    g_string_append_printf (s, "    input scaled per channel by a%u: the weights times it, at "
                            "every run\n", cv->scale);
  if (d->n_post == 0)
    return;
  g_string_append (s, "    post-ops:");
  for (int64_t i = 0; i < d->n_post; i++)
    {
      const FbConvPost *p = &d->post[i];
      g_string_append_printf (s, " %s", post_name (p->kind));
      if (p->kind == FB_CONV_POST_ADD)
        g_string_append_printf (s, " (a%u)", cv->add);
      else if (p->kind == FB_CONV_POST_SUM)
        g_string_append_printf (s, " (a%u, in place: a%u holds it)", cv->add, cv->y);
      else if (p->kind == FB_CONV_POST_CLIP)
        g_string_append_printf (s, " (%.9g, %.9g)", p->alpha, p->beta);
      else if (p->kind == FB_CONV_POST_MAX || p->kind == FB_CONV_POST_MIN)
        g_string_append_printf (s, " (%.9g)", p->alpha);
      else if (p->kind == FB_CONV_POST_GELU)
        g_string_append (s, p->alpha != 0 ? " (tanh)" : " (erf)");
      else if (p->kind == FB_CONV_POST_RELU && p->alpha != 0)
        g_string_append_printf (s, " (slope %.9g)", p->alpha);
    }
  g_string_append_c (s, '\n');
}

static void
print_kernel (GString *s, const FbKernel *k, const FbPlan *plan, gboolean canonical,
              FbKernelLines *lines)
{
  g_string_append_printf (s, "kernel %s (%s)", canonical ? "" : k->name, kind_name (k->kind));
  if (!canonical)
    {
      g_string_append_printf (s, "  %s\n  node %u from", k->label ? k->label : "", k->node_id);
      for (guint i = 0; i < k->prov_names->len; i++)
        g_string_append_printf (s, "%s %s", i ? "," : "",
                                g_array_index (k->prov_names, char *, i));
    }
  g_string_append_c (s, '\n');
  for (guint i = 0; i < k->args->len; i++)
    {
      const FbKArg *a = &g_array_index (k->args, FbKArg, i);
      g_string_append_printf (s, "  a%u: %s %s", i, role_name (a->role), fb_dtype_name (a->dtype));
      if (!canonical && plan && a->buffer < plan->buffers->len)
        {
          const FbBuffer *b = fb_plan_buffer (plan, a->buffer);
          g_string_append_c (s, ' ');
          print_shape (s, b);
          g_string_append_printf (s, " %s (buffer %u)", a->name ? a->name : "", a->buffer);
        }
      g_string_append_c (s, '\n');
    }
  for (guint i = 0; i < k->accs->len; i++)
    g_string_append_printf (s, "  acc%u: %s\n", i,
                            fb_dtype_name (g_array_index (k->accs, FbDType, i)));
  for (guint p = 0; p < k->phases->len; p++)
    {
      const FbKPhase *ph = g_ptr_array_index (k->phases, p);
      note (lines, s, ph);
      if (lines != NULL)
        g_array_append_val (lines->phase_first, lines->line);
      if (ph->conv)
        {
          g_string_append_printf (s, "  phase %u: %s\n", p,
                                  ph->conv->lib == FB_KLIB_GEMM ? "cuBLASLt matrix product"
                                  : ph->conv->cudnn ? "cuDNN convolution"
                                  : "oneDNN convolution (threaded by oneDNN)");
          print_conv (s, ph->conv);
          continue;
        }
      g_string_append_printf (s, "  phase %u: %s, %" G_GINT64_FORMAT " parallel iterations%s\n",
                              p, canonical ? "" : ph->fn, ph->extent,
                              ph->serial && !canonical ? ", run on the calling thread" : "");
      print_stmts (s, ph->body, 4, lines);
    }
}

char *
fb_kernel_to_string (const FbKernel *kernel, const FbPlan *plan)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  GString *s = g_string_new (NULL);
  print_kernel (s, kernel, plan, FALSE, NULL);
  return g_string_free (s, FALSE);
}

char *
fb_kernel_to_string_lines (const FbKernel *kernel, const FbPlan *plan, FbKernelLines **lines)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  g_return_val_if_fail (lines != NULL, NULL);
  FbKernelLines *l = g_new0 (FbKernelLines, 1);
  l->start = g_hash_table_new (NULL, NULL);
  l->phase_first = g_array_new (FALSE, FALSE, sizeof (guint));
  l->line = 1;
  GString *s = g_string_new (NULL);
  print_kernel (s, kernel, plan, FALSE, l);
  advance (l, s);
  l->n_lines = s->len > 0 && s->str[s->len - 1] == '\n' ? l->line - 1 : l->line;
  *lines = l;
  return g_string_free (s, FALSE);
}

char *
fb_kernel_hash (const FbKernel *kernel, const char *target)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  g_autoptr(GString) s = g_string_new (target ? target : "");
  g_string_append_c (s, '\n');
  print_kernel (s, kernel, NULL, TRUE, NULL);
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, s->str, s->len);
}

static const char *
buffer_kind_name (FbBufferKind kind)
{
  switch (kind)
    {
    case FB_BUF_INPUT: return "input";
    case FB_BUF_CONST: return "const";
    case FB_BUF_OUTPUT: return "output";
    case FB_BUF_INTERMEDIATE: return "value";
    case FB_BUF_SCRATCH: return "scratch";
    default: return "?";
    }
}

char *
fb_plan_to_string (const FbPlan *plan)
{
  g_return_val_if_fail (plan != NULL, NULL);
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "plan for %s: %u kernels, %u buffers, arena %" G_GINT64_FORMAT
                          " bytes\n", plan->target, plan->kernels->len, plan->buffers->len,
                          plan->arena_bytes);
  for (guint i = 0; i < plan->buffers->len; i++)
    {
      const FbBuffer *b = fb_plan_buffer (plan, i);
      g_string_append_printf (s, "  buffer %u %s %s ", i, buffer_kind_name (b->kind),
                              fb_dtype_name (b->dtype));
      print_shape (s, b);
      g_string_append_printf (s, " %s", b->name);
      if (b->alias >= 0)
        g_string_append_printf (s, " = view of buffer %d", b->alias);
      else if (b->offset >= 0)
        g_string_append_printf (s, " @%" G_GINT64_FORMAT, b->offset);
      if (b->slice_of >= 0 && b->slice_stride > 0)
        g_string_append_printf (s, " (in buffer %d at +%" G_GINT64_FORMAT ", rows %" G_GINT64_FORMAT
                                " apart)", b->slice_of, b->slice_offset, b->slice_stride);
      else if (b->slice_of >= 0)
        g_string_append_printf (s, " (in buffer %d at +%" G_GINT64_FORMAT ")", b->slice_of,
                                b->slice_offset);
      g_string_append_c (s, '\n');
    }
  for (guint i = 0; i < plan->kernels->len; i++)
    {
      g_string_append_c (s, '\n');
      print_kernel (s, g_ptr_array_index (plan->kernels, i), plan, FALSE, NULL);
    }
  return g_string_free (s, FALSE);
}
