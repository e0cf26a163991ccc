/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuse-epilogue: a Conv, ConvTranspose, MatMul or Gemm together with what follows it in a
 * chain, the way a kernel applies it while the result is still in registers:
 *
 *   contraction -> [bias Add] -> [activation] -> [residual Add] -> [activation]
 *
 * each step optional and taken only when its input has no other reader. A bias Add adds a
 * constant that cannot enlarge the result; a residual Add adds another activation of the same
 * shape; activations are the unary ones kernels apply for free (Relu, Clip, LeakyRelu,
 * Sigmoid, Swish, HardSigmoid, HardSwish, Gelu, Tanh, Elu, Selu, Softplus, Softsign, PRelu, and Max
 * or Min against one constant number, a bound as TensorFlow exports write it). Where an
 * activation may stand, several may follow each other (LeakyRelu, then Max). The chain
 * becomes one FUSED node of kind "epilogue" named after the contraction.
 *
 * Before a Conv of one group, the chain may also take a prologue: a Mul of its input by a
 * vector of one number per channel (or per image and channel) computed at run time (a
 * squeeze-excitation's scale), when the product has no other reader and the weights are small
 * beside the input (see scale_prologue). conv (x * s) with weights w is conv (x) with weights
 * w * s along the input channels, which the cpu target's convolution computes at every run
 * instead of the pass over x * s (fb-lower-dnnl-conv.c), as does a GPU's pointwise product,
 * per image (fb-lower-conv-product-gpu.c); elsewhere the Mul runs as the kernel's first loop.
 *
 * Requires: simplify and fold-batchnorm done (a BatchNormalization between would stop the
 *           chain), shapes inferred.
 * Preserves: ids of the values the rest of the graph reads; members keep their ids in the body.
 * Invalidates: the node list (re-sorted). */
#include "fb-pass-private.h"

static gboolean
is_anchor (FbOpKind op)
{
  return op == FB_OP_CONV || op == FB_OP_CONV_TRANSPOSE || op == FB_OP_MATMUL || op == FB_OP_GEMM;
}

/* Max (x, c) or Min (x, c), either operand order, with c one constant element of x's type:
 * a bound, applied per element like Clip. */
static gboolean
is_scalar_bound (const FbNode *n, const FbValue *cur)
{
  if ((n->op != FB_OP_MAX && n->op != FB_OP_MIN) || n->n_inputs != 2 || n->inputs[0] == NULL ||
      n->inputs[1] == NULL)
    return FALSE;
  const FbValue *other = n->inputs[0] == cur ? n->inputs[1] : n->inputs[0];
  return other != cur && (n->inputs[0] == cur || n->inputs[1] == cur) &&
         other->constant != NULL && other->constant->numel == 1 &&
         other->dtype == cur->dtype && other->shape.rank <= cur->shape.rank;
}

static gboolean
is_activation (const FbNode *n)
{
  switch (n->op)
    {
    case FB_OP_RELU: case FB_OP_LEAKY_RELU: case FB_OP_SIGMOID: case FB_OP_HARD_SIGMOID:
    case FB_OP_HARD_SWISH: case FB_OP_GELU: case FB_OP_TANH: case FB_OP_ELU: case FB_OP_SELU:
    case FB_OP_SOFTPLUS: case FB_OP_SOFTSIGN: case FB_OP_SWISH:
      return TRUE;
    case FB_OP_CLIP:
    case FB_OP_PRELU:
      /* Bounds and slopes must be constants a kernel can bake in. */
      for (guint k = 1; k < n->n_inputs; k++)
        if (n->inputs[k] != NULL && n->inputs[k]->constant == NULL)
          return FALSE;
      return TRUE;
    default:
      return FALSE;
    }
}

/* Whether s, against x of shape [N, C, H, W], is one number per channel computed at run time
 * (a constant one is fold-constants' job): the same for every image, [1, C, 1, 1] or
 * [C, 1, 1], or one per image and channel, [N, C, 1, 1] (a squeeze-excitation's at a batch
 * of N). *images: how many scale vectors there are. */
static gboolean
is_channel_scale (const FbValue *s, const FbValue *x, int64_t *images)
{
  if (s == NULL || s == x || s->constant != NULL || s->dtype != x->dtype || x->shape.rank != 4 ||
      s->shape.rank < 3 || s->shape.rank > 4 || !fb_shape_is_static (&s->shape))
    return FALSE;
  *images = s->shape.rank == 4 ? s->shape.dim[0] : 1;
  if (*images != 1 && *images != x->shape.dim[0])
    return FALSE;
  for (int d = s->shape.rank == 4 ? 1 : 0; d < s->shape.rank; d++)
    {
      int64_t want = d == s->shape.rank - 3 ? x->shape.dim[1] : 1;
      if (s->shape.dim[d] != want)
        return FALSE;
    }
  return x->shape.dim[1] > 0;
}

/* Folding a scale into the weights rescales and repacks them at every run; the Mul it saves
 * is a pass over x. The repack took about 1.2 us per thousand weights (oneDNN's reorder into
 * its blocked layout) and the pass about what moving x costs, measured on EfficientNet-B0's
 * blocks on two Zen 4 cores: folded, the kernels of its 112x112 and 56x56 blocks (weights under
 * a hundredth of x) went 147 -> 92 and 152 -> 117 us, of its 28x28 ones (a twentieth) 101 -> 76,
 * of its 14x14 ones (a half) 65 -> 110 and 100 -> 196. So the weights must be at most a
 * sixteenth of x; past that the Mul stays a node of its own, which can write x in place (on one
 * thread that measured faster than a loop in the convolution's kernel writing a scratch copy).
 * A scale per image needs weights per image: the rule counts the weights of every image (the
 * cpu target folds one scale for all images only; a GPU's pointwise products fold both). */
#define SCALE_MIN_RATIO 16

/* The Mul that scales a one-group Conv's input per channel, read by nothing else, where its
 * weights are small beside that input; or NULL. */
static FbNode *
scale_prologue (FbPassContext *ctx, const FbNode *conv, GHashTable *uses, GHashTable *claimed)
{
  const FbValue *y = conv->n_inputs > 0 ? conv->inputs[0] : NULL;
  const FbValue *w = conv->n_inputs > 1 ? conv->inputs[1] : NULL;
  FbNode *mul = y ? y->producer : NULL;
  if (conv->op != FB_OP_CONV || fb_node_attr_int (conv, "group", 1) != 1 || mul == NULL ||
      mul->op != FB_OP_MUL || mul->n_inputs != 2 || mul->n_outputs != 1 || y->is_output ||
      w == NULL || w->constant == NULL || y->shape.rank != 4 ||
      !fb_shape_is_static (&y->shape) || g_hash_table_contains (claimed, mul) ||
      _fb_pass_no_fuse (ctx, mul))
    return NULL;
  GPtrArray *users = g_hash_table_lookup (uses, y);
  if (users == NULL || users->len != 1 || conv->inputs[1] == y)
    return NULL;
  const FbValue *a = mul->inputs[0], *b = mul->inputs[1];
  int64_t images = 1;
  if (a == NULL || b == NULL ||
      !((fb_shape_equal (&a->shape, &y->shape) && is_channel_scale (b, a, &images)) ||
        (fb_shape_equal (&b->shape, &y->shape) && is_channel_scale (a, b, &images))))
    return NULL;
  return w->constant->numel * images * SCALE_MIN_RATIO > fb_shape_numel (&y->shape, NULL)
         ? NULL : mul;
}

typedef enum {
  AFTER_ANCHOR,
  AFTER_BIAS,
  AFTER_ACTIVATION,
  AFTER_RESIDUAL,
  AFTER_LAST,
} Step;

/* The next member of the chain that reads cur, or NULL; *step advances. */
static FbNode *
next_member (FbPassContext *ctx, const FbValue *cur, GHashTable *uses, GHashTable *claimed,
             Step *step)
{
  GPtrArray *users;
  FbNode *u;

  if (cur->is_output)
    return NULL;
  users = g_hash_table_lookup (uses, cur);
  if (users == NULL || users->len != 1)
    return NULL;
  u = g_ptr_array_index (users, 0);
  if (g_hash_table_contains (claimed, u) || _fb_pass_no_fuse (ctx, u) || u->n_outputs != 1 ||
      u->outputs[0] == NULL || u->inputs[0] == NULL)
    return NULL;

  if (u->op == FB_OP_ADD && u->n_inputs == 2)
    {
      FbValue *other = u->inputs[0] == cur ? u->inputs[1] : u->inputs[0];
      if (other == NULL || other == cur || u->outputs[0]->shape.rank != cur->shape.rank ||
          !_fb_shape_fits_in (&other->shape, &cur->shape) ||
          u->outputs[0]->dtype != cur->dtype)
        return NULL;
      if (other->constant != NULL && *step == AFTER_ANCHOR)
        {
          *step = AFTER_BIAS;
          return u;
        }
      if (other->constant == NULL && *step < AFTER_RESIDUAL)
        {
          *step = AFTER_RESIDUAL;
          return u;
        }
      return NULL;
    }
  if ((is_activation (u) && u->inputs[0] == cur) || is_scalar_bound (u, cur))
    {
      if (*step <= AFTER_ACTIVATION)
        {
          *step = AFTER_ACTIVATION;
          return u;
        }
      if (*step >= AFTER_RESIDUAL)
        {
          *step = AFTER_LAST;
          return u;
        }
    }
  return NULL;
}

gboolean
_fb_pass_fuse_epilogue (FbPassContext *ctx, FbGraph *graph, GError **error)
{
  g_autoptr(GHashTable) uses = fb_graph_build_uses (graph);
  g_autoptr(GHashTable) claimed = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) hist = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) order = g_ptr_array_copy (graph->nodes, NULL, NULL);
  g_autoptr(GPtrArray) kinds = g_ptr_array_new ();
  guint n_groups = 0;

  for (guint i = 0; i < order->len; i++)
    {
      FbNode *anchor = g_ptr_array_index (order, i);
      g_autoptr(GPtrArray) members = NULL;
      g_autoptr(GString) label = NULL;
      FbValue *cur;
      Step step = AFTER_ANCHOR;
      FbNode *next;

      if (!is_anchor (anchor->op) || g_hash_table_contains (claimed, anchor) ||
          _fb_pass_no_fuse (ctx, anchor) || anchor->n_outputs != 1 || anchor->outputs[0] == NULL)
        continue;
      members = g_ptr_array_new ();
      label = g_string_new (NULL);
      FbNode *prologue = scale_prologue (ctx, anchor, uses, claimed);
      if (prologue)
        {
          g_ptr_array_add (members, prologue);
          g_string_append_printf (label, "%s+", prologue->op_type);
        }
      g_ptr_array_add (members, anchor);
      g_string_append (label, anchor->op_type);
      cur = anchor->outputs[0];
      while ((next = next_member (ctx, cur, uses, claimed, &step)) != NULL)
        {
          g_ptr_array_add (members, next);
          g_string_append_printf (label, "+%s", next->op_type);
          cur = next->outputs[0];
        }
      if (members->len < 2)
        continue;
      for (guint m = 0; m < members->len; m++)
        g_hash_table_add (claimed, g_ptr_array_index (members, m));
      _fb_fuse_group (ctx, graph, members, "epilogue", anchor, uses);
      {
        gpointer count = g_hash_table_lookup (hist, label->str);
        if (count == NULL)
          g_ptr_array_add (kinds, g_strdup (label->str));
        g_hash_table_replace (hist, g_strdup (label->str), GUINT_TO_POINTER (GPOINTER_TO_UINT (count) + 1));
      }
      n_groups++;
    }

  if (n_groups == 0)
    {
      g_ptr_array_foreach (kinds, (GFunc) g_free, NULL);
      return TRUE;
    }
  if (!fb_graph_toposort (graph, error))
    return FALSE;
  fb_graph_remove_dead (graph);
  {
    g_autoptr(GString) s = g_string_new (NULL);
    for (guint k = 0; k < kinds->len; k++)
      {
        const char *label = g_ptr_array_index (kinds, k);
        g_string_append_printf (s, "%s%u %s", k ? ", " : "",
                                GPOINTER_TO_UINT (g_hash_table_lookup (hist, label)), label);
        g_free ((char *) label);
      }
    _fb_pass_note (ctx, "fused %u epilogues (%s)", n_groups, s->str);
  }
  return TRUE;
}
