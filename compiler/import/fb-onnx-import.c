/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ModelProto -> FbGraph.
 *
 * Nodes are built in two sweeps per graph: first every output value is declared (so a file
 * that lists nodes out of topological order still resolves), then inputs are bound and the
 * graph is sorted. Names resolve through a scope chain so If/Loop bodies see the values of
 * their enclosing graphs, as ONNX's lexical scoping says. */
#include "fb-onnx-upgrade-private.h"
#include "fb-infer.h"

#include <string.h>

G_DEFINE_QUARK (fb-import-error-quark, fb_import_error)

#define MIN_IR_VERSION 3
#define MIN_OPSET      1

typedef struct _Scope Scope;
struct _Scope {
  Scope      *parent;
  GHashTable *values;     /* char* name -> FbValue* */
};

typedef struct {
  FbOnnxContext onnx;
  FbModel      *model;
  GHashTable   *node_names; /* generated names in use, to keep them unique */
  GPtrArray    *pending;    /* FbNode*: top-level legacy broadcasts to fix during inference */
  GHashTable   *bad_values; /* FbValue* -> reason (char*): valid types this project lacks */
} Importer;

static gboolean import_graph (Importer *im, const Onnx__GraphProto *proto, FbGraph *graph,
                              Scope *parent_scope, GError **error);

static FbValue *
scope_lookup (Scope *scope, const char *name)
{
  for (Scope *s = scope; s != NULL; s = s->parent)
    {
      FbValue *v = g_hash_table_lookup (s->values, name);
      if (v != NULL)
        return v;
    }
  return NULL;
}

/* ---- attributes -------------------------------------------------------------------------- */

static FbAttrType
attribute_type (const Onnx__AttributeProto *a)
{
  if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
    return (FbAttrType) a->type;
  /* Files of IR version 1 and some hand-written ones leave the type out: read what is set. */
  if (a->has_f) return FB_ATTR_FLOAT;
  if (a->has_i) return FB_ATTR_INT;
  if (a->has_s) return FB_ATTR_STRING;
  if (a->t) return FB_ATTR_TENSOR;
  if (a->g) return FB_ATTR_GRAPH;
  if (a->n_floats) return FB_ATTR_FLOATS;
  if (a->n_ints) return FB_ATTR_INTS;
  if (a->n_strings) return FB_ATTR_STRINGS;
  if (a->tp) return FB_ATTR_TYPE;
  return FB_ATTR_UNDEFINED;
}

static const char *
bytes_to_string (FbArena *arena, const ProtobufCBinaryData *b)
{
  char *s = fb_arena_alloc (arena, b->len + 1);
  if (b->len > 0)
    memcpy (s, b->data, b->len);
  return s;
}

static gboolean
import_attribute (Importer *im, FbGraph *graph, FbNode *node, const Onnx__AttributeProto *a,
                  Scope *scope, FbAttr *out, GError **error)
{
  FbArena *arena = graph->arena;

  memset (out, 0, sizeof *out);
  out->name = fb_arena_strdup (arena, a->name ? a->name : "");
  out->type = attribute_type (a);
  switch (out->type)
    {
    case FB_ATTR_FLOAT:
      out->f = a->f;
      return TRUE;
    case FB_ATTR_INT:
      out->i = a->i;
      return TRUE;
    case FB_ATTR_STRING:
      out->s = bytes_to_string (arena, &a->s);
      return TRUE;
    case FB_ATTR_FLOATS:
      out->floats.n = (guint) a->n_floats;
      out->floats.v = fb_arena_memdup (arena, a->floats, sizeof (float) * a->n_floats);
      return TRUE;
    case FB_ATTR_INTS:
      out->ints.n = (guint) a->n_ints;
      out->ints.v = fb_arena_memdup (arena, a->ints, sizeof (int64_t) * a->n_ints);
      return TRUE;
    case FB_ATTR_STRINGS:
      out->strings.n = (guint) a->n_strings;
      out->strings.v = fb_arena_alloc (arena, sizeof (char *) * MAX (a->n_strings, 1));
      for (size_t i = 0; i < a->n_strings; i++)
        out->strings.v[i] = bytes_to_string (arena, &a->strings[i]);
      return TRUE;
    case FB_ATTR_TENSOR:
      if (a->t == NULL)
        break;
      out->t = _fb_onnx_tensor_decode (&im->onnx, a->t, error);
      return out->t != NULL;
    case FB_ATTR_TYPE:
      {
        const Onnx__TypeProto *inner;
        if (a->tp == NULL)
          break;
        inner = _fb_onnx_unwrap_kind (a->tp, &out->tp.kind);
        if (inner == NULL || out->tp.kind == FB_KIND_OPTIONAL ||
            out->tp.kind == FB_KIND_OPTIONAL_SEQUENCE)
          {
            g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                         "node '%s' (%s): attribute '%s' names %s, which is not supported "
                         "(a tensor or a sequence of tensors is)", node->name, node->op_type,
                         out->name, _fb_onnx_type_kind (a->tp));
            return FALSE;
          }
        out->tp.dtype = inner->tensor_type && inner->tensor_type->has_elem_type &&
                        fb_dtype_is_known (inner->tensor_type->elem_type)
                          ? (FbDType) inner->tensor_type->elem_type : FB_DTYPE_UNDEFINED;
        return TRUE;
      }
    case FB_ATTR_GRAPH:
      {
        FbGraph *sub;
        if (a->g == NULL)
          break;
        sub = fb_graph_new_subgraph (graph, a->g->name ? a->g->name : out->name);
        out->g = sub;
        if (!import_graph (im, a->g, sub, scope, error))
          {
            g_prefix_error (error, "in the '%s' body of node '%s': ", out->name, node->name);
            return FALSE;
          }
        return TRUE;
      }
    default:
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                   "node '%s' (%s): attribute '%s' has a type (%d) that is not supported "
                   "(sparse tensors and lists of graphs, tensors or types)",
                   node->name, node->op_type, out->name, a->has_type ? (int) a->type : 0);
      return FALSE;
    }
  g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
               "node '%s' (%s): attribute '%s' declares a value it does not carry",
               node->name, node->op_type, out->name);
  return FALSE;
}

/* A Constant node's value as a tensor, from whichever of its attribute forms it uses. */
static FbTensor *
constant_value (const FbNode *node, GError **error)
{
  const FbAttr *a;
  FbTensor *t;
  int64_t n;

  if ((t = fb_node_attr_tensor (node, "value")) != NULL)
    return fb_tensor_ref (t);
  if ((a = fb_node_attr (node, "value_float")) && a->type == FB_ATTR_FLOAT)
    return fb_tensor_new_scalar_f32 (a->f);
  if ((a = fb_node_attr (node, "value_int")) && a->type == FB_ATTR_INT)
    return fb_tensor_new_scalar_i64 (a->i);
  if ((a = fb_node_attr (node, "value_floats")) && a->type == FB_ATTR_FLOATS)
    {
      n = a->floats.n;
      t = fb_tensor_new (FB_DTYPE_FLOAT32, 1, &n, error);
      if (t && n)
        memcpy (fb_tensor_data_mut (t), a->floats.v, sizeof (float) * n);
      return t;
    }
  if ((a = fb_node_attr (node, "value_ints")) && a->type == FB_ATTR_INTS)
    {
      n = a->ints.n;
      t = fb_tensor_new (FB_DTYPE_INT64, 1, &n, error);
      if (t && n)
        memcpy (fb_tensor_data_mut (t), a->ints.v, sizeof (int64_t) * n);
      return t;
    }
  g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
               "node '%s' (Constant) has no numeric value (string and sparse constants are not "
               "supported)", node->name);
  return NULL;
}

/* ---- nodes ------------------------------------------------------------------------------- */

static const char *
unique_node_name (Importer *im, FbGraph *graph, const Onnx__NodeProto *proto, guint index)
{
  g_autofree char *name = NULL;

  if (proto->name != NULL && *proto->name != '\0')
    return fb_arena_strdup (graph->arena, proto->name);
  /* Unnamed nodes get a name users can search for and that stays the same on every load. */
  name = g_strdup_printf ("%s_%u", proto->op_type ? proto->op_type : "node", index);
  while (g_hash_table_contains (im->node_names, name))
    {
      char *longer = g_strconcat (name, "_", NULL);
      g_free (name);
      name = longer;
    }
  g_hash_table_add (im->node_names, g_strdup (name));
  return fb_arena_strdup (graph->arena, name);
}

static void
describe_range (GString *s, guint16 lo, guint16 hi)
{
  if (hi == FB_ARITY_ANY)
    g_string_append_printf (s, "at least %u", lo);
  else if (lo == hi)
    g_string_append_printf (s, "%u", lo);
  else
    g_string_append_printf (s, "%u to %u", lo, hi);
}

/* Every later stage indexes inputs and outputs by position: the counts are checked once, here. */
static gboolean
arity_is_valid (const FbNode *node, GError **error)
{
  const FbOpInfo *info = fb_op_info (node->op);
  gboolean inputs_ok = node->n_inputs >= info->min_inputs &&
                       (info->max_inputs == FB_ARITY_ANY || node->n_inputs <= info->max_inputs);
  gboolean outputs_ok = node->n_outputs >= info->min_outputs &&
                        (info->max_outputs == FB_ARITY_ANY || node->n_outputs <= info->max_outputs);
  g_autoptr(GString) expected = g_string_new (NULL);

  if (inputs_ok && outputs_ok)
    return TRUE;
  describe_range (expected, inputs_ok ? info->min_outputs : info->min_inputs,
                  inputs_ok ? info->max_outputs : info->max_inputs);
  g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
               "node '%s' (%s) has %u %s; %s takes %s", node->name, node->op_type,
               inputs_ok ? node->n_outputs : node->n_inputs, inputs_ok ? "outputs" : "inputs",
               node->op_type, expected->str);
  return FALSE;
}

static FbNode *
declare_node (Importer *im, FbGraph *graph, Scope *scope, const Onnx__NodeProto *proto,
              guint index, GError **error)
{
  const char *domain = proto->domain ? proto->domain : "";
  const char *op_type = proto->op_type ? proto->op_type : "";
  FbNode *node;
  FbOrigNode orig = { 0 };
  guint prov;

  if (*op_type == '\0')
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                   "node %u ('%s') has no op_type", index, proto->name ? proto->name : "");
      return NULL;
    }
  node = fb_graph_add_node (graph, fb_op_lookup (domain, op_type),
                            unique_node_name (im, graph, proto, index),
                            (guint) proto->n_input, (guint) proto->n_output);
  node->op_type = fb_arena_strdup (graph->arena, op_type);
  node->domain = fb_arena_strdup (graph->arena, domain);
  node->opset = fb_model_opset (im->model, domain);
  node->doc_string = fb_arena_strdup (graph->arena, proto->doc_string);

  if (node->op != FB_OP_UNKNOWN && !arity_is_valid (node, error))
    return NULL;

  orig.name = g_strdup (node->name);
  orig.op_type = g_strdup (op_type);
  g_array_append_val (im->model->orig_nodes, orig);
  prov = im->model->orig_nodes->len - 1;
  fb_node_add_prov (graph, node, &prov, 1);

  for (size_t k = 0; k < proto->n_output; k++)
    {
      const char *name = proto->output[k];
      FbValue *v;
      if (name == NULL || *name == '\0')
        continue;
      if (g_hash_table_contains (scope->values, name))
        {
          g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                       "node '%s' (%s) produces '%s', which is already defined in this graph",
                       node->name, op_type, name);
          return NULL;
        }
      v = fb_graph_add_value (graph, name, FB_DTYPE_UNDEFINED, NULL);
      fb_node_set_output (node, (guint) k, v);
      g_hash_table_insert (scope->values, (gpointer) v->name, v);
    }
  return node;
}

/* Old operator versions become the current form here; what the file wrote stays in the model's
 * table of original nodes. */
static gboolean
upgrade_node (Importer *im, FbGraph *graph, FbNode *node, GError **error)
{
  g_autofree char *written = NULL;
  gboolean pending = FALSE;

  if (!_fb_onnx_upgrade_node (graph, node, &written, &pending, error))
    return FALSE;
  if (written != NULL && node->n_prov > 0)
    g_array_index (im->model->orig_nodes, FbOrigNode, node->prov[0]).written =
      g_steal_pointer (&written);
  if (!pending)
    return TRUE;
  /* Top-level nodes are fixed while shapes are inferred; a body's operands must have known
   * ranks already (its inputs or constants). An added node is sorted in with the graph. */
  if (graph->parent == NULL)
    {
      g_ptr_array_add (im->pending, node);
      return TRUE;
    }
  return _fb_onnx_upgrade_broadcast (graph, node, error);
}

/* ONNX allows one attribute of a name per node; with two, which one a reader sees depends on
 * where it looks, and an upgrade that drops the first would leave the second behind. */
static gboolean
attr_names_are_unique (const FbNode *node, GError **error)
{
  g_autoptr(GHashTable) seen = NULL;

  if (node->n_attrs < 2)
    return TRUE;
  seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint a = 0; a < node->n_attrs; a++)
    if (!g_hash_table_add (seen, (gpointer) node->attrs[a].name))
      {
        g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                     "node '%s' (%s) has the attribute '%s' twice", node->name, node->op_type,
                     node->attrs[a].name);
        return FALSE;
      }
  return TRUE;
}

static gboolean
bind_node (Importer *im, FbGraph *graph, Scope *scope, FbNode *node, const Onnx__NodeProto *proto,
           GError **error)
{
  for (size_t k = 0; k < proto->n_input; k++)
    {
      const char *name = proto->input[k];
      if (name == NULL || *name == '\0')
        continue;   /* an omitted optional input */
      node->inputs[k] = scope_lookup (scope, name);
      if (node->inputs[k] == NULL)
        {
          g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                       "node '%s' (%s) reads '%s', which no input, initializer or node provides",
                       node->name, node->op_type, name);
          return FALSE;
        }
    }
  node->n_attrs = (guint) proto->n_attribute;
  node->attrs = fb_arena_alloc (graph->arena, sizeof (FbAttr) * MAX (proto->n_attribute, 1));
  for (size_t a = 0; a < proto->n_attribute; a++)
    if (proto->attribute[a] == NULL ||
        !import_attribute (im, graph, node, proto->attribute[a], scope, &node->attrs[a], error))
      {
        node->n_attrs = (guint) a;   /* only initialized attributes are freed */
        if (proto->attribute[a] == NULL)
          g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                       "node '%s' has an empty attribute", node->name);
        return FALSE;
      }
  if (!attr_names_are_unique (node, error))
    return FALSE;
  if (!upgrade_node (im, graph, node, error))
    return FALSE;
  if (node->op == FB_OP_CONSTANT && node->n_outputs == 1 && node->outputs[0] != NULL)
    {
      FbTensor *t = constant_value (node, error);
      if (t == NULL)
        return FALSE;
      node->outputs[0]->constant = t;
      node->outputs[0]->dtype = t->dtype;
      node->outputs[0]->shape = fb_tensor_shape (t);
    }
  return TRUE;
}

/* ---- graphs ------------------------------------------------------------------------------ */

static gboolean
import_graph (Importer *im, const Onnx__GraphProto *proto, FbGraph *graph, Scope *parent_scope,
              GError **error)
{
  g_autoptr(GHashTable) table = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree FbNode **nodes = g_new0 (FbNode *, MAX (proto->n_node, 1));
  Scope scope = { parent_scope, table };

  if (graph->name == NULL)
    graph->name = fb_arena_strdup (graph->arena, proto->name);
  if (proto->n_sparse_initializer > 0)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                   "graph '%s' has sparse initializers, which are not supported",
                   proto->name ? proto->name : "");
      return FALSE;
    }
  for (size_t i = 0; i < proto->n_initializer; i++)
    {
      const Onnx__TensorProto *tp = proto->initializer[i];
      g_autoptr(FbTensor) t = NULL;
      FbValue *v;

      if (tp == NULL || tp->name == NULL || *tp->name == '\0')
        {
          g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                       "initializer %" G_GSIZE_FORMAT " has no name", (gsize) i);
          return FALSE;
        }
      if (g_hash_table_contains (table, tp->name))
        {
          g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                       "initializer '%s' is defined twice", tp->name);
          return FALSE;
        }
      t = _fb_onnx_tensor_decode (&im->onnx, tp, error);
      if (t == NULL)
        return FALSE;
      v = fb_graph_add_constant (graph, tp->name, t);
      g_hash_table_insert (table, (gpointer) v->name, v);
    }
  for (size_t i = 0; i < proto->n_input; i++)
    {
      const Onnx__ValueInfoProto *vi = proto->input[i];
      FbValue *v;

      if (vi == NULL || vi->name == NULL || *vi->name == '\0')
        {
          g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                       "graph input %" G_GSIZE_FORMAT " has no name", (gsize) i);
          return FALSE;
        }
      /* Before IR version 4 every initializer is also listed as an input: it stays a constant. */
      v = g_hash_table_lookup (table, vi->name);
      if (v != NULL && v->constant != NULL)
        continue;
      if (v != NULL)
        {
          g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                       "graph input '%s' is listed twice", vi->name);
          return FALSE;
        }
      v = fb_graph_add_value (graph, vi->name, FB_DTYPE_UNDEFINED, NULL);
      if (!_fb_onnx_apply_type (im->bad_values, v, vi->type, "input", error))
        return FALSE;
      v->is_input = TRUE;
      g_ptr_array_add (graph->inputs, v);
      g_hash_table_insert (table, (gpointer) v->name, v);
    }
  for (size_t i = 0; i < proto->n_node; i++)
    {
      if (proto->node[i] == NULL)
        {
          g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID, "node %" G_GSIZE_FORMAT
                       " is empty", (gsize) i);
          return FALSE;
        }
      nodes[i] = declare_node (im, graph, &scope, proto->node[i], (guint) i, error);
      if (nodes[i] == NULL)
        return FALSE;
    }
  for (size_t i = 0; i < proto->n_node; i++)
    if (!bind_node (im, graph, &scope, nodes[i], proto->node[i], error))
      return FALSE;
  for (size_t i = 0; i < proto->n_value_info; i++)
    {
      const Onnx__ValueInfoProto *vi = proto->value_info[i];
      FbValue *v = vi && vi->name ? g_hash_table_lookup (table, vi->name) : NULL;
      /* value_info is a hint: names that are not in this graph are ignored, bad types are not. */
      if (v != NULL && v->constant == NULL &&
          !_fb_onnx_apply_type (im->bad_values, v, vi->type, "value", error))
        return FALSE;
    }
  for (size_t i = 0; i < proto->n_output; i++)
    {
      const Onnx__ValueInfoProto *vi = proto->output[i];
      FbValue *v = vi && vi->name ? scope_lookup (&scope, vi->name) : NULL;
      if (v == NULL)
        {
          g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                       "graph output '%s' is never produced",
                       vi && vi->name ? vi->name : "");
          return FALSE;
        }
      if (v->graph == graph && v->constant == NULL &&
          !_fb_onnx_apply_type (im->bad_values, v, vi->type, "output", error))
        return FALSE;
      if (v->graph == graph)
        v->is_output = TRUE;
      g_ptr_array_add (graph->outputs, v);
    }
  return fb_graph_toposort (graph, error);
}

static gboolean
import_model_header (Importer *im, const Onnx__ModelProto *proto, GError **error)
{
  FbModel *m = im->model;

  if (!proto->has_ir_version || proto->ir_version < MIN_IR_VERSION)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                   "IR version %" G_GINT64_FORMAT " is older than the supported %d (re-export the "
                   "model with a newer exporter)", proto->has_ir_version ? proto->ir_version : 0,
                   MIN_IR_VERSION);
      return FALSE;
    }
  m->ir_version = proto->ir_version;
  m->producer_name = g_strdup (proto->producer_name);
  m->producer_version = g_strdup (proto->producer_version);
  m->domain = g_strdup (proto->domain);
  m->model_version = proto->has_model_version ? proto->model_version : 0;
  m->doc_string = g_strdup (proto->doc_string);
  for (size_t i = 0; i < proto->n_opset_import; i++)
    {
      const Onnx__OperatorSetIdProto *o = proto->opset_import[i];
      const char *domain;
      if (o == NULL)
        continue;
      domain = o->domain && strcmp (o->domain, "ai.onnx") != 0 ? o->domain : "";
      g_hash_table_insert (m->opsets, g_strdup (domain), GINT_TO_POINTER ((int) CLAMP (o->version, 0, G_MAXINT)));
    }
  if (!g_hash_table_contains (m->opsets, ""))
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
                   "the model imports no version of the default ONNX operator set");
      return FALSE;
    }
  if (fb_model_opset (m, "") < MIN_OPSET)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
                   "operator set version %d is older than the supported %d", fb_model_opset (m, ""),
                   MIN_OPSET);
      return FALSE;
    }
  for (size_t i = 0; i < proto->n_metadata_props; i++)
    {
      const Onnx__StringStringEntryProto *e = proto->metadata_props[i];
      if (e == NULL)
        continue;
      g_ptr_array_add (m->metadata, g_strdup (e->key ? e->key : ""));
      g_ptr_array_add (m->metadata, g_strdup (e->value ? e->value : ""));
    }
  if (proto->graph == NULL)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID, "the model has no graph");
      return FALSE;
    }
  return TRUE;
}

/* The reason node cannot be computed because it reads or makes a value of a type this project
 * lacks (in its bodies too), or NULL. */
static const char *
bad_touch (Importer *im, const FbNode *node)
{
  const char *why;

  for (guint i = 0; i < node->n_inputs; i++)
    if (node->inputs[i] && (why = g_hash_table_lookup (im->bad_values, node->inputs[i])))
      return why;
  for (guint i = 0; i < node->n_outputs; i++)
    if (node->outputs[i] && (why = g_hash_table_lookup (im->bad_values, node->outputs[i])))
      return why;
  for (guint a = 0; a < node->n_attrs; a++)
    if (node->attrs[a].type == FB_ATTR_GRAPH)
      {
        const FbGraph *body = node->attrs[a].g;
        for (guint i = 0; i < body->values->len; i++)
          if ((why = g_hash_table_lookup (im->bad_values, g_ptr_array_index (body->values, i))))
            return why;
        for (guint i = 0; i < body->nodes->len; i++)
          if ((why = bad_touch (im, g_ptr_array_index (body->nodes, i))))
            return why;
      }
  return NULL;
}

/* Records why node is not computed; its outputs carry the reason on to their readers. */
static void
mark_problem (Importer *im, const FbNode *node, const char *reason)
{
  g_hash_table_insert (im->model->problems, g_strdup (node->name), g_strdup (reason));
  for (guint i = 0; i < node->n_outputs; i++)
    if (node->outputs[i] && !g_hash_table_contains (im->bad_values, node->outputs[i]))
      g_hash_table_insert (im->bad_values, node->outputs[i],
                           g_strdup_printf ("'%s' comes from node '%s', which is not computed",
                                            node->outputs[i]->name, node->name));
}

/* fb_infer_graph, node by node, so that
 *   - a legacy broadcast becomes numpy broadcasting once its operands' ranks are known, just
 *     before its node is inferred;
 *   - what this project cannot do with a valid model (a value of a type it lacks, an operator
 *     form inference calls unsupported) marks the nodes it concerns in the model's problems and
 *     the import goes on: the model opens and is drawn, and the pipeline says why it stops.
 * A shape error of the model itself still fails the import. */
static gboolean
infer_top_level (Importer *im, FbGraph *graph, GError **error)
{
  guint n_nodes = graph->nodes->len;
  gboolean grew = FALSE;

  for (guint i = 0; i < n_nodes; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);
      guint before = graph->nodes->len;
      g_autoptr(GError) local = NULL;
      const char *bad;

      if (g_ptr_array_find (im->pending, node, NULL) &&
          !_fb_onnx_upgrade_broadcast (graph, node, error))
        return FALSE;
      for (guint k = before; k < graph->nodes->len; k++)
        if (!fb_infer_node (graph, g_ptr_array_index (graph->nodes, k), error))
          return FALSE;
      grew = grew || graph->nodes->len != before;
      if ((bad = bad_touch (im, node)) != NULL)
        {
          g_autofree char *reason = g_strdup (bad);
          mark_problem (im, node, reason);
          continue;
        }
      if (fb_infer_node (graph, node, &local))
        continue;
      if (!g_error_matches (local, FB_GRAPH_ERROR, FB_GRAPH_ERROR_UNSUPPORTED))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      mark_problem (im, node, local->message);
    }
  return grew ? fb_graph_toposort (graph, error) : TRUE;
}

FbGraph *
fb_onnx_import_bytes (GBytes *bytes, const char *display_name, const char *base_dir,
                      GHashTable *input_shapes, GError **error)
{
  Onnx__ModelProto *proto;
  Importer im = { 0 };
  g_autoptr(FbGraph) graph = NULL;
  gsize size;
  const guint8 *data;
  gboolean ok;

  g_return_val_if_fail (bytes != NULL, NULL);
  if (display_name == NULL)
    display_name = "model";
  data = g_bytes_get_data (bytes, &size);
  if (size == 0)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_PARSE, "%s: the file is empty", display_name);
      return NULL;
    }
  proto = onnx__model_proto__unpack (NULL, size, data);
  if (proto == NULL)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_PARSE,
                   "%s: not an ONNX model (the protobuf data is truncated, corrupted or of another "
                   "kind)", display_name);
      return NULL;
    }
  _fb_onnx_context_init (&im.onnx, base_dir, proto, NULL);
  im.model = fb_model_new (display_name);
  im.node_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im.pending = g_ptr_array_new ();
  im.bad_values = g_hash_table_new_full (NULL, NULL, NULL, g_free);

  ok = import_model_header (&im, proto, error);
  if (ok)
    {
      graph = fb_graph_new (im.model);
      ok = import_graph (&im, proto->graph, graph, NULL, error);
      im.model->n_top_nodes = 0;
      for (guint i = 0; ok && i < im.model->orig_nodes->len; i++)
        im.model->n_top_nodes = graph->nodes->len;
    }
  if (ok && input_shapes != NULL && g_hash_table_size (input_shapes) > 0)
    ok = fb_graph_pin_inputs (graph, input_shapes, error);
  if (ok)
    ok = infer_top_level (&im, graph, error);

  g_ptr_array_unref (im.pending);
  g_hash_table_unref (im.bad_values);
  g_hash_table_unref (im.node_names);
  fb_model_unref (im.model);
  _fb_onnx_context_clear (&im.onnx);
  if (!ok)
    {
      g_prefix_error (error, "%s: ", display_name);
      return NULL;
    }
  return g_steal_pointer (&graph);
}

FbGraph *
fb_onnx_import_file (const char *path, GHashTable *input_shapes, GError **error)
{
  g_autoptr(GMappedFile) mapped = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) local = NULL;
  g_autofree char *dir = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_IO, "%s: is a folder, not a model file", path);
      return NULL;
    }
  mapped = g_mapped_file_new (path, FALSE, &local);
  if (mapped == NULL)
    {
      g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_IO, "%s", local->message);
      return NULL;
    }
  /* The decoded message copies what it keeps, so the mapping is released after decoding. */
  bytes = g_mapped_file_get_bytes (mapped);
  dir = g_path_get_dirname (path);
  return fb_onnx_import_bytes (bytes, path, dir, input_shapes, error);
}

static void
collect_unsupported (const FbGraph *graph, GHashTable *table)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (graph->nodes, i);
      if (n->op == FB_OP_UNKNOWN)
        {
          g_autofree char *key = *n->domain ? g_strdup_printf ("%s.%s", n->domain, n->op_type)
                                            : g_strdup (n->op_type);
          GPtrArray *names = g_hash_table_lookup (table, key);
          if (names == NULL)
            {
              names = g_ptr_array_new_with_free_func (g_free);
              g_hash_table_insert (table, g_strdup (key), names);
            }
          g_ptr_array_add (names, g_strdup (n->name));
        }
      for (guint a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == FB_ATTR_GRAPH)
          collect_unsupported (n->attrs[a].g, table);
    }
}

GHashTable *
fb_graph_unsupported_ops (const FbGraph *graph)
{
  GHashTable *table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                             (GDestroyNotify) g_ptr_array_unref);

  g_return_val_if_fail (graph != NULL, NULL);
  collect_unsupported (graph, table);
  return table;
}
