/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Any stage as a plain ONNX graph that other runtimes load and compute the same with.
 *
 * A stage holds things only fusebench understands: FUSED nodes (their members in a body
 * graph), nodes marked fb_layout=nhwc that read and write channels-last tensors, NHWC twins
 * that share the name of the NCHW value they stand for, and operators the simplify pass
 * introduced at an opset newer than the model's (Gelu at 20, LayerNormalization at 17,
 * HardSwish at 14, Softmax at 13, Swish at 24), and the newer forms the importer gave an older model's nodes
 * (Slice's starts, ends and axes as inputs, as at opset 10; Squeeze's axes, as at 13). The
 * export declares the opset the model was written at (fb_onnx_form_opset), so on a copy of the
 * graph, this:
 *
 *   - inlines every FUSED node's members in its place;
 *   - runs each channels-last Conv or pool between a Transpose into NCHW and one back, the
 *     computation ONNX defines for it; nodes that merely follow along need no change;
 *   - writes each operator newer than that opset as the primitive formula it stands for, so
 *     the rest of the model keeps the opset it was written against (raising the opset instead
 *     would change what its older nodes mean: Softmax, Clip, Pad, Upsample...);
 *   - writes the inputs the importer made of attributes back as those attributes, where the
 *     opset still has them so;
 *   - drops fusebench's own attributes and gives every value and node a name of its own. */
#include "fb-onnx-export.h"

#include <math.h>
#include <string.h>

static const int64_t TO_NHWC[4] = { 0, 2, 3, 1 };
static const int64_t TO_NCHW[4] = { 0, 3, 1, 2 };

typedef struct {
  FbGraph    *g;
  GHashTable *names;      /* names given so far (owned strings) */
  guint       serial;
  int         opset;      /* of the default domain, as the export declares it */
} Portable;

static const char *
fresh_name (Portable *p, const char *base)
{
  g_autofree char *name = g_strdup (base && *base ? base : "v");

  while (g_hash_table_contains (p->names, name))
    {
      g_free (name);
      name = g_strdup_printf ("%s__%u", base && *base ? base : "v", ++p->serial);
    }
  g_hash_table_add (p->names, g_strdup (name));
  return fb_arena_strdup (p->g->arena, name);
}

static FbValue *
new_value (Portable *p, const char *base, FbDType dtype, const FbShape *shape)
{
  FbShape unknown = { .rank = -1 };
  return fb_graph_add_value (p->g, fresh_name (p, base), dtype, shape ? shape : &unknown);
}

static FbNode *
new_node (Portable *p, FbOpKind op, const char *op_type, const FbNode *like, const char *suffix,
          guint n_inputs, FbValue **inputs, FbValue *output)
{
  g_autofree char *name = g_strdup_printf ("%s/%s", like->name ? like->name : "node", suffix);
  FbNode *n = fb_graph_add_node (p->g, op, name, n_inputs, 1);

  n->op_type = fb_arena_strdup (p->g->arena, op_type);
  n->domain = "";
  n->opset = p->opset;
  n->flags = FB_NODE_INSERTED;
  fb_node_add_prov (p->g, n, like->prov, like->n_prov);
  for (guint i = 0; i < n_inputs; i++)
    n->inputs[i] = inputs[i];
  fb_node_set_output (n, 0, output);
  return n;
}

/* A scalar of dtype holding v, as an initializer. */
static FbValue *
scalar (Portable *p, FbDType dtype, double v, GError **error)
{
  g_autoptr(FbTensor) t = fb_tensor_new (dtype, 0, NULL, error);
  if (t == NULL)
    return NULL;
  fb_tensor_set_f64 (t, 0, v);
  return fb_graph_add_constant (p->g, fresh_name (p, "fb_const"), t);
}

static FbValue *
op1 (Portable *p, const FbNode *like, const char *op_type, FbOpKind op, FbValue *a, FbValue *b,
     const char *suffix)
{
  FbValue *in[2] = { a, b };
  FbValue *out = new_value (p, suffix, a->dtype, &a->shape);
  new_node (p, op, op_type, like, suffix, b ? 2 : 1, in, out);
  return out;
}

static void
drop_attr (FbNode *n, const char *name)
{
  guint k = 0;
  for (guint i = 0; i < n->n_attrs; i++)
    if (strcmp (n->attrs[i].name, name) != 0)
      n->attrs[k++] = n->attrs[i];
  n->n_attrs = k;
}

/* Moves the members of FUSED node f into the graph, wired to f's inputs and outputs. */
static void
inline_fused (Portable *p, FbNode *f)
{
  FbGraph *body = fb_node_attr_graph (f, "body");
  g_autoptr(GHashTable) map = g_hash_table_new (NULL, NULL);

  for (guint i = 0; i < body->inputs->len && i < f->n_inputs; i++)
    g_hash_table_insert (map, g_ptr_array_index (body->inputs, i), f->inputs[i]);
  for (guint i = 0; i < body->outputs->len && i < f->n_outputs; i++)
    g_hash_table_insert (map, g_ptr_array_index (body->outputs, i), f->outputs[i]);

  for (guint i = 0; i < body->nodes->len; i++)
    {
      const FbNode *m = g_ptr_array_index (body->nodes, i);
      FbNode *n = fb_graph_add_node (p->g, m->op, m->name, m->n_inputs, m->n_outputs);

      n->op_type = m->op_type;
      n->domain = m->domain;
      n->opset = m->opset;
      n->flags = m->flags;
      n->doc_string = m->doc_string;
      fb_node_add_prov (p->g, n, m->prov, m->n_prov);
      for (guint a = 0; a < m->n_attrs; a++)
        fb_node_set_attr (p->g, n, &m->attrs[a]);
      for (guint k = 0; k < m->n_inputs; k++)
        {
          FbValue *bv = m->inputs[k], *v;
          if (bv == NULL)
            continue;
          v = g_hash_table_lookup (map, bv);
          if (v == NULL && bv->constant != NULL)
            v = fb_graph_add_constant (p->g, fresh_name (p, bv->name), bv->constant);
          else if (v == NULL)
            v = fb_graph_lookup_value (p->g, bv->name);
          if (v != NULL)
            g_hash_table_insert (map, bv, v);
          n->inputs[k] = v;
        }
      for (guint k = 0; k < m->n_outputs; k++)
        {
          FbValue *bv = m->outputs[k], *v;
          if (bv == NULL)
            continue;
          v = g_hash_table_lookup (map, bv);
          if (v == NULL)
            {
              v = new_value (p, bv->name, bv->dtype, NULL);
              g_hash_table_insert (map, bv, v);
            }
          fb_node_set_output (n, k, v);
        }
    }
  g_ptr_array_remove (p->g->nodes, f);
}

static FbShape
permuted (const FbShape *s, const int64_t *perm)
{
  FbShape out = *s;
  if (s->rank == 4)
    for (int d = 0; d < 4; d++)
      {
        out.dim[d] = s->dim[perm[d]];
        out.sym[d] = s->sym[perm[d]];
      }
  return out;
}

static void
transpose_to (Portable *p, const FbNode *like, FbValue *in, FbValue *out, const int64_t *perm,
              const char *suffix)
{
  FbNode *t = new_node (p, FB_OP_TRANSPOSE, "Transpose", like, suffix, 1, &in, out);
  FbAttr a = { .name = "perm", .type = FB_ATTR_INTS, .ints = { 4, (int64_t *) perm } };
  fb_node_set_attr (p->g, t, &a);
}

/* A channels-last Conv, ConvTranspose or pool between transposes: ONNX defines them
 * channels-first only. */
static gboolean
wrap_nhwc (Portable *p, FbNode *n, GError **error)
{
  FbValue *in = n->inputs[0], *out = n->outputs[0];
  FbShape sin = permuted (&in->shape, TO_NCHW), sout = permuted (&out->shape, TO_NCHW);
  FbValue *in_nchw, *out_nchw;

  for (guint k = 1; k < n->n_outputs; k++)
    if (n->outputs[k] != NULL)
      {
        g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                     "node %s: a channels-last %s with a second output has no ONNX form",
                     n->name, n->op_type);
        return FALSE;
      }
  in_nchw = new_value (p, in->name, in->dtype, &sin);
  transpose_to (p, n, in, in_nchw, TO_NCHW, "to_nchw");
  n->inputs[0] = in_nchw;
  out_nchw = new_value (p, out->name, out->dtype, &sout);
  fb_node_set_output (n, 0, out_nchw);
  transpose_to (p, n, out_nchw, out, TO_NHWC, "to_nhwc");
  return TRUE;
}

static FbValue *
reduce (Portable *p, const FbNode *like, const char *op_type, FbOpKind op, FbValue *x,
        const int64_t *axes, guint n_axes, const char *suffix)
{
  FbValue *out = new_value (p, suffix, x->dtype, NULL);
  FbNode *r = new_node (p, op, op_type, like, suffix, 1, &x, out);
  FbAttr a = { .name = "axes", .type = FB_ATTR_INTS, .ints = { n_axes, (int64_t *) axes } };
  FbAttr keep = { .name = "keepdims", .type = FB_ATTR_INT, .i = 1 };
  fb_node_set_attr (p->g, r, &a);
  fb_node_set_attr (p->g, r, &keep);
  return out;
}

/* Writes node n (newer than the model's opset) as primitive operators; the last one writes
 * n's output, and n leaves the graph. */
static gboolean
decompose (Portable *p, FbNode *n, GError **error)
{
  FbValue *x = n->inputs[0], *y = n->outputs[0], *r = NULL;
  FbDType dt = x->dtype;
  FbNode *last;

  if (dt != FB_DTYPE_FLOAT32 && dt != FB_DTYPE_FLOAT64)
    {
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                   "node %s: %s needs opset %d, the model has %d, and its %s form is only "
                   "written for float tensors", n->name, n->op_type, n->opset, p->opset,
                   n->op_type);
      return FALSE;
    }
  switch (n->op)
    {
    case FB_OP_GELU:
      {
        FbValue *half = scalar (p, dt, 0.5, error), *one = scalar (p, dt, 1.0, error), *t;
        if (half == NULL || one == NULL)
          return FALSE;
        if (g_strcmp0 (fb_node_attr_string (n, "approximate", "none"), "tanh") == 0)
          {
            FbValue *c = scalar (p, dt, sqrt (2.0 / G_PI), error);
            FbValue *k = scalar (p, dt, 0.044715, error);
            FbValue *x3 = op1 (p, n, "Mul", FB_OP_MUL,
                               op1 (p, n, "Mul", FB_OP_MUL, x, x, "x2"), x, "x3");
            t = op1 (p, n, "Add", FB_OP_ADD, x, op1 (p, n, "Mul", FB_OP_MUL, x3, k, "kx3"), "inner");
            t = op1 (p, n, "Tanh", FB_OP_TANH, op1 (p, n, "Mul", FB_OP_MUL, t, c, "scaled"), NULL,
                     "tanh");
          }
        else
          {
            FbValue *s = scalar (p, dt, G_SQRT2, error);
            t = op1 (p, n, "Erf", FB_OP_ERF, op1 (p, n, "Div", FB_OP_DIV, x, s, "scaled"), NULL, "erf");
          }
        t = op1 (p, n, "Add", FB_OP_ADD, t, one, "plus1");
        r = op1 (p, n, "Mul", FB_OP_MUL, op1 (p, n, "Mul", FB_OP_MUL, x, half, "halfx"), t, "gelu");
        break;
      }
    case FB_OP_HARD_SWISH:
      {
        FbValue *hs = new_value (p, "hardsigmoid", dt, &x->shape);
        FbNode *h = new_node (p, FB_OP_HARD_SIGMOID, "HardSigmoid", n, "hardsigmoid", 1, &x, hs);
        FbAttr alpha = { .name = "alpha", .type = FB_ATTR_FLOAT, .f = 1.0f / 6.0f };
        FbAttr beta = { .name = "beta", .type = FB_ATTR_FLOAT, .f = 0.5f };
        fb_node_set_attr (p->g, h, &alpha);
        fb_node_set_attr (p->g, h, &beta);
        r = op1 (p, n, "Mul", FB_OP_MUL, x, hs, "hardswish");
        break;
      }
    case FB_OP_SWISH:
      {
        double alpha = fb_node_attr_float (n, "alpha", 1.0f);
        FbValue *ax = x;
        if (alpha != 1.0)
          {
            FbValue *a = scalar (p, dt, alpha, error);
            if (a == NULL)
              return FALSE;
            ax = op1 (p, n, "Mul", FB_OP_MUL, x, a, "scaled");
          }
        FbValue *s = op1 (p, n, "Sigmoid", FB_OP_SIGMOID, ax, NULL, "sigmoid");
        r = op1 (p, n, "Mul", FB_OP_MUL, x, s, "swish");
        break;
      }
    case FB_OP_LAYER_NORMALIZATION:
    case FB_OP_SOFTMAX:
      {
        int rank = x->shape.rank;
        int64_t axis = fb_node_attr_int (n, "axis", -1), axes[FB_MAX_RANK];
        guint n_axes = 0;
        if (rank < 0)
          {
            g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                         "node %s: %s needs opset %d, the model has %d, and writing it out "
                         "needs the input's rank", n->name, n->op_type, n->opset, p->opset);
            return FALSE;
          }
        axis = axis < 0 ? axis + rank : axis;
        for (int64_t d = axis; d < (n->op == FB_OP_SOFTMAX ? axis + 1 : rank); d++)
          axes[n_axes++] = d;
        if (n->op == FB_OP_SOFTMAX)
          {
            FbValue *m = reduce (p, n, "ReduceMax", FB_OP_REDUCE_MAX, x, axes, n_axes, "max");
            FbValue *e = op1 (p, n, "Exp", FB_OP_EXP, op1 (p, n, "Sub", FB_OP_SUB, x, m, "shifted"),
                              NULL, "exp");
            /* Only written below opset 13, where ReduceSum still takes its axes as an
             * attribute. */
            FbValue *s = reduce (p, n, "ReduceSum", FB_OP_REDUCE_SUM, e, axes, n_axes, "sum");
            r = op1 (p, n, "Div", FB_OP_DIV, e, s, "softmax");
            break;
          }
        FbValue *mean = reduce (p, n, "ReduceMean", FB_OP_REDUCE_MEAN, x, axes, n_axes, "mean");
        FbValue *d = op1 (p, n, "Sub", FB_OP_SUB, x, mean, "centered");
        FbValue *var = reduce (p, n, "ReduceMean", FB_OP_REDUCE_MEAN,
                               op1 (p, n, "Mul", FB_OP_MUL, d, d, "squared"), axes, n_axes, "var");
        FbValue *eps = scalar (p, dt, fb_node_attr_float (n, "epsilon", 1e-5f), error);
        if (eps == NULL)
          return FALSE;
        FbValue *sd = op1 (p, n, "Sqrt", FB_OP_SQRT, op1 (p, n, "Add", FB_OP_ADD, var, eps, "vareps"),
                           NULL, "stddev");
        r = op1 (p, n, "Div", FB_OP_DIV, d, sd, "normalized");
        if (fb_node_input (n, 1) != NULL)
          r = op1 (p, n, "Mul", FB_OP_MUL, r, n->inputs[1], "scaled");
        if (fb_node_input (n, 2) != NULL)
          r = op1 (p, n, "Add", FB_OP_ADD, r, n->inputs[2], "shifted");
        if (n->n_outputs > 1 && (n->outputs[1] != NULL || (n->n_outputs > 2 && n->outputs[2])))
          {
            g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                         "node %s: LayerNormalization's mean and inverse deviation outputs have "
                         "no form at the model's opset %d", n->name, p->opset);
            return FALSE;
          }
        break;
      }
    default:
      g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                   "node %s: %s needs opset %d and the model declares %d", n->name, n->op_type,
                   n->opset, p->opset);
      return FALSE;
    }
  /* The formula's last node writes n's output under its name. */
  last = r->producer;
  fb_node_set_output (last, 0, y);
  y->dtype = dt;
  g_ptr_array_remove (p->g->values, r);
  g_ptr_array_remove (p->g->nodes, n);
  return TRUE;
}

/* The opset from which op takes as inputs what it took as attributes before (Slice's starts,
 * ends and axes, TopK's k; Squeeze's, Unsqueeze's and ReduceSum's axes, Split's split), the
 * first input index that moved, and the attribute names in input order; 0 for other ops. */
static int
moved_to_inputs (FbOpKind op, guint *first, const char * const **names)
{
  static const char * const slice[] = { "starts", "ends", "axes", NULL };
  static const char * const k[] = { "k", NULL };
  static const char * const axes[] = { "axes", NULL };
  static const char * const split[] = { "split", NULL };

  *first = 1;
  switch (op)
    {
    case FB_OP_SLICE: *names = slice; return 10;
    case FB_OP_TOPK: *names = k; return 10;
    case FB_OP_SQUEEZE: case FB_OP_UNSQUEEZE: case FB_OP_REDUCE_SUM: *names = axes; return 13;
    case FB_OP_SPLIT: *names = split; return 13;
    default: return 0;
    }
}

/* Node n holds in inputs what the opset the export declares has as attributes (the importer
 * upgraded it, or a pass made it so): the constant inputs become those attributes again. */
static gboolean
inputs_to_attrs (Portable *p, FbNode *n, GError **error)
{
  const char * const *names;
  guint first;
  int since = moved_to_inputs (n->op, &first, &names);

  if (since == 0 || p->opset >= since)
    return TRUE;
  for (guint i = first; i < n->n_inputs; i++)
    {
      const FbValue *v = n->inputs[i];
      const char *name = i - first < g_strv_length ((char **) names) ? names[i - first] : "steps";
      const FbTensor *t = v != NULL ? v->constant : NULL;

      if (v == NULL)
        continue;
      if (t == NULL || (t->dtype != FB_DTYPE_INT64 && t->dtype != FB_DTYPE_INT32) || t->rank > 1)
        {
          g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                       "node %s: %s takes %s as an input only from opset %d, the model declares "
                       "%d, and this %s is not a constant list of integers", n->name, n->op_type,
                       name, since, p->opset, name);
          return FALSE;
        }
      /* Slice's steps came with the inputs: only steps of one have an older form. */
      if (g_str_equal (name, "steps"))
        {
          for (int64_t e = 0; e < t->numel; e++)
            if (fb_tensor_get_i64 (t, e) != 1)
              {
                g_set_error (error, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED,
                             "node %s: Slice with steps other than 1 has no form at the model's "
                             "opset %d", n->name, p->opset);
                return FALSE;
              }
          continue;
        }
      {
        g_autofree int64_t *values = g_new (int64_t, MAX (t->numel, 1));
        FbAttr a = { .name = name, .type = FB_ATTR_INTS, .ints = { (guint) t->numel, values } };

        for (int64_t e = 0; e < t->numel; e++)
          values[e] = fb_tensor_get_i64 (t, e);
        if (g_str_equal (name, "k"))
          {
            a.type = FB_ATTR_INT;
            a.i = t->numel > 0 ? values[0] : 0;
          }
        fb_node_set_attr (p->g, n, &a);
      }
    }
  n->n_inputs = MIN (n->n_inputs, first);
  return TRUE;
}

/* inputs_to_attrs on the nodes of every If, Loop and Scan body of graph's nodes, nested too: the
 * importer upgraded them as it did the graph's own. */
static gboolean
body_inputs_to_attrs (Portable *p, const FbGraph *graph, GError **error)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (graph->nodes, i);

      for (guint a = 0; a < n->n_attrs; a++)
        {
          const FbGraph *body = n->attrs[a].type == FB_ATTR_GRAPH ? n->attrs[a].g : NULL;

          if (body == NULL)
            continue;
          for (guint k = 0; k < body->nodes->len; k++)
            {
              FbNode *m = g_ptr_array_index (body->nodes, k);

              if (m->domain[0] == '\0' && !inputs_to_attrs (p, m, error))
                return FALSE;
            }
          if (!body_inputs_to_attrs (p, body, error))
            return FALSE;
        }
    }
  return TRUE;
}

static gboolean
is_channels_first_only (FbOpKind op)
{
  return op == FB_OP_CONV || op == FB_OP_CONV_TRANSPOSE || op == FB_OP_MAX_POOL ||
         op == FB_OP_AVERAGE_POOL ||
         op == FB_OP_GLOBAL_AVERAGE_POOL || op == FB_OP_GLOBAL_MAX_POOL;
}

/* The values defined inside the If, Loop and Scan bodies of graph's nodes (their inputs and
 * what their nodes make), renamed where a name is taken: ONNX wants every name once across a
 * model and its subgraphs, and a pass may have given an outer value a body value's name. */
static void
name_bodies (Portable *p, const FbGraph *graph)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (graph->nodes, i);

      for (guint a = 0; a < n->n_attrs; a++)
        {
          FbGraph *body = n->attrs[a].type == FB_ATTR_GRAPH ? n->attrs[a].g : NULL;

          if (body == NULL)
            continue;
          for (guint k = 0; k < body->values->len; k++)
            {
              FbValue *v = g_ptr_array_index (body->values, k);

              if (g_hash_table_contains (p->names, v->name))
                v->name = fresh_name (p, v->name);
              else
                g_hash_table_add (p->names, g_strdup (v->name));
            }
          name_bodies (p, body);
        }
    }
}

static gboolean
has_primitive_form (FbOpKind op)
{
  return op == FB_OP_GELU || op == FB_OP_HARD_SWISH || op == FB_OP_LAYER_NORMALIZATION ||
         op == FB_OP_SOFTMAX || op == FB_OP_SWISH;
}

FbGraph *
fb_onnx_portable_graph (const FbGraph *graph, GError **error)
{
  g_return_val_if_fail (graph != NULL, NULL);
  FbGraph *g = fb_graph_copy (graph);
  g_autoptr(GHashTable) names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  int opset = fb_onnx_form_opset (g->model);
  Portable p = { g, names, 0, opset };
  g_autoptr(GPtrArray) nodes = NULL;

  /* The caller's names first: inputs and outputs keep theirs; a twin sharing a name is renamed. */
  for (guint i = 0; i < g->inputs->len; i++)
    g_hash_table_add (names, g_strdup (((FbValue *) g_ptr_array_index (g->inputs, i))->name));
  for (guint i = 0; i < g->outputs->len; i++)
    g_hash_table_add (names, g_strdup (((FbValue *) g_ptr_array_index (g->outputs, i))->name));
  for (guint i = 0; i < g->values->len; i++)
    {
      FbValue *v = g_ptr_array_index (g->values, i);
      if (v->is_input || v->is_output)
        continue;
      if (g_hash_table_contains (names, v->name))
        v->name = fresh_name (&p, v->name);
      else
        g_hash_table_add (names, g_strdup (v->name));
    }

  /* Members appended at the end are visited in turn, so nested fusions unfold too. */
  for (guint i = 0; i < g->nodes->len;)
    {
      FbNode *n = g_ptr_array_index (g->nodes, i);
      if (n->op == FB_OP_FUSED && fb_node_attr_graph (n, "body") != NULL)
        inline_fused (&p, n);
      else
        i++;
    }

  name_bodies (&p, g);
  nodes = g_ptr_array_copy (g->nodes, NULL, NULL);
  for (guint i = 0; i < nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (nodes, i);
      gboolean nhwc = g_strcmp0 (fb_node_attr_string (n, FB_ATTR_LAYOUT, NULL), "nhwc") == 0;

      for (guint a = n->n_attrs; a-- > 0;)
        if (g_str_has_prefix (n->attrs[a].name, "fb_"))
          drop_attr (n, n->attrs[a].name);
      if (nhwc && is_channels_first_only (n->op) && !wrap_nhwc (&p, n, error))
        goto fail;
      if (n->domain[0] == '\0' && n->opset > opset && has_primitive_form (n->op) &&
          !(n->op == FB_OP_SOFTMAX && n->inputs[0]->shape.rank >= 0 &&
            (fb_node_attr_int (n, "axis", -1) == -1 ||
             fb_node_attr_int (n, "axis", -1) == n->inputs[0]->shape.rank - 1)) &&
          !decompose (&p, n, error))
        goto fail;
      if (n->domain[0] == '\0' && !inputs_to_attrs (&p, n, error))
        goto fail;
    }
  if (!body_inputs_to_attrs (&p, g, error))
    goto fail;
  /* ONNX Runtime refuses two nodes of one name, and inserted transposes may share theirs. */
  {
    g_autoptr(GHashTable) node_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    Portable q = { g, node_names, 0, opset };
    for (guint i = 0; i < g->nodes->len; i++)
      {
        FbNode *n = g_ptr_array_index (g->nodes, i);
        n->name = fresh_name (&q, n->name);
      }
  }
  if (!fb_graph_toposort (g, error))
    goto fail;
  return g;

fail:
  g_prefix_error (error, "%s: ", graph->model->path ? graph->model->path : "model");
  fb_graph_free (g);
  return NULL;
}

GBytes *
fb_onnx_export_portable (const FbGraph *graph, GError **error)
{
  g_return_val_if_fail (graph != NULL, NULL);
  FbGraph *portable = fb_onnx_portable_graph (graph, error);
  GBytes *bytes;

  if (portable == NULL)
    return NULL;
  bytes = fb_onnx_export (portable, NULL, NULL, error);
  fb_graph_free (portable);
  return bytes;
}

int
fb_onnx_form_opset (FbModel *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return MAX (fb_model_opset (model, ""), 7);
}
