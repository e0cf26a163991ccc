/* SPDX-License-Identifier: GPL-3.0-or-later */
/* FbGraph -> ONNX ModelProto, with the protobuf-c types generated from onnx.proto.
 *
 * Every stage can be written back as a model another tool opens. FUSED nodes keep their
 * meaning: op_type "Fused" in the domain "io.github.fusebench", their members as the graph
 * attribute "body". Constants become initializers, inline or (for bundles) external data in a
 * weights file. Everything is allocated in a list freed after packing. */
#include "fb-onnx-export.h"
#include "onnx.pb-c.h"

#include <string.h>

#define FUSED_DOMAIN "io.github.fusebench"

typedef struct {
  GPtrArray  *garbage;          /* g_free after packing */
  GPtrArray  *arrays;           /* GPtrArrays whose storage went into messages */
  GHashTable *external;         /* FbTensor* -> offset + 1 in the weights file */
  const char *weights_file;
  gboolean    any_fused;        /* declare the fusebench domain only when a node is in it */
} Export;

static gpointer
keep (Export *x, gpointer p)
{
  g_ptr_array_add (x->garbage, p);
  return p;
}

static char *
str (Export *x, const char *s)
{
  return keep (x, g_strdup (s ? s : ""));
}

#define NEW(x, T, init) ({ T *p_ = keep ((x), g_new (T, 1)); T v_ = init; *p_ = v_; p_; })

static Onnx__TensorProto *
tensor_proto (Export *x, const FbTensor *t, const char *name)
{
  Onnx__TensorProto *p = NEW (x, Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
  p->name = str (x, name);
  p->n_dims = t->rank;
  p->dims = keep (x, g_memdup2 (t->dims, sizeof (int64_t) * MAX (t->rank, 1)));
  p->has_data_type = TRUE;
  p->data_type = t->dtype;
  gpointer off = x->external ? g_hash_table_lookup (x->external, t) : NULL;
  if (off)
    {
      p->has_data_location = TRUE;
      p->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
      p->n_external_data = 3;
      p->external_data = keep (x, g_new (Onnx__StringStringEntryProto *, 3));
      const char *keys[3] = { "location", "offset", "length" };
      char *vals[3] = { str (x, x->weights_file),
                        keep (x, g_strdup_printf ("%" G_GINT64_FORMAT, (gint64) GPOINTER_TO_SIZE (off) - 1)),
                        keep (x, g_strdup_printf ("%" G_GSIZE_FORMAT, fb_tensor_nbytes (t))) };
      for (int i = 0; i < 3; i++)
        {
          Onnx__StringStringEntryProto *e = NEW (x, Onnx__StringStringEntryProto,
                                                 ONNX__STRING_STRING_ENTRY_PROTO__INIT);
          e->key = str (x, keys[i]);
          e->value = vals[i];
          p->external_data[i] = e;
        }
      return p;
    }
  p->has_raw_data = TRUE;
  p->raw_data.len = fb_tensor_nbytes (t);
  p->raw_data.data = (uint8_t *) fb_tensor_data (t);
  return p;
}

/* tensor wrapped as a sequence, an optional or an optional sequence, as kind says. */
static Onnx__TypeProto *
wrap_kind (Export *x, FbValueKind kind, Onnx__TypeProto *tensor)
{
  Onnx__TypeProto *inner = tensor, *tp;

  if (kind == FB_KIND_SEQUENCE || kind == FB_KIND_OPTIONAL_SEQUENCE)
    {
      Onnx__TypeProto__Sequence *seq = NEW (x, Onnx__TypeProto__Sequence,
                                            ONNX__TYPE_PROTO__SEQUENCE__INIT);
      seq->elem_type = inner;
      inner = NEW (x, Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
      inner->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
      inner->sequence_type = seq;
    }
  if (kind != FB_KIND_OPTIONAL && kind != FB_KIND_OPTIONAL_SEQUENCE)
    return inner;
  Onnx__TypeProto__Optional *opt = NEW (x, Onnx__TypeProto__Optional,
                                        ONNX__TYPE_PROTO__OPTIONAL__INIT);
  opt->elem_type = inner;
  tp = NEW (x, Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
  tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
  tp->optional_type = opt;
  return tp;
}

static Onnx__ValueInfoProto *
value_info (Export *x, const FbValue *v)
{
  Onnx__ValueInfoProto *vi = NEW (x, Onnx__ValueInfoProto, ONNX__VALUE_INFO_PROTO__INIT);
  vi->name = str (x, v->name);
  if (v->dtype == FB_DTYPE_UNDEFINED)
    return vi;
  Onnx__TypeProto *tp = NEW (x, Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
  Onnx__TypeProto__Tensor *tt = NEW (x, Onnx__TypeProto__Tensor, ONNX__TYPE_PROTO__TENSOR__INIT);
  tt->has_elem_type = TRUE;
  tt->elem_type = v->dtype;
  if (v->shape.rank >= 0)
    {
      Onnx__TensorShapeProto *sp = NEW (x, Onnx__TensorShapeProto, ONNX__TENSOR_SHAPE_PROTO__INIT);
      sp->n_dim = v->shape.rank;
      sp->dim = keep (x, g_new0 (Onnx__TensorShapeProto__Dimension *, MAX (v->shape.rank, 1)));
      for (int d = 0; d < v->shape.rank; d++)
        {
          Onnx__TensorShapeProto__Dimension *dim =
            NEW (x, Onnx__TensorShapeProto__Dimension, ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT);
          if (v->shape.dim[d] >= 0)
            {
              dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
              dim->dim_value = v->shape.dim[d];
            }
          else if (v->shape.sym[d])
            {
              dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
              dim->dim_param = str (x, v->shape.sym[d]);
            }
          sp->dim[d] = dim;
        }
      tt->shape = sp;
    }
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  vi->type = wrap_kind (x, v->kind, tp);
  return vi;
}

static Onnx__GraphProto *graph_proto (Export *x, const FbGraph *g);

static Onnx__AttributeProto *
attr_proto (Export *x, const FbAttr *a)
{
  Onnx__AttributeProto *p = NEW (x, Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT);
  p->name = str (x, a->name);
  p->has_type = TRUE;
  p->type = (Onnx__AttributeProto__AttributeType) a->type;
  switch (a->type)
    {
    case FB_ATTR_FLOAT: p->has_f = TRUE; p->f = a->f; break;
    case FB_ATTR_INT: p->has_i = TRUE; p->i = a->i; break;
    case FB_ATTR_STRING:
      p->has_s = TRUE;
      p->s.data = (uint8_t *) str (x, a->s);
      p->s.len = strlen (a->s ? a->s : "");
      break;
    case FB_ATTR_TENSOR: p->t = tensor_proto (x, a->t, a->name); break;
    case FB_ATTR_GRAPH: p->g = graph_proto (x, a->g); break;
    case FB_ATTR_FLOATS:
      p->n_floats = a->floats.n;
      p->floats = keep (x, g_memdup2 (a->floats.v, sizeof (float) * MAX (a->floats.n, 1)));
      break;
    case FB_ATTR_INTS:
      p->n_ints = a->ints.n;
      p->ints = keep (x, g_memdup2 (a->ints.v, sizeof (int64_t) * MAX (a->ints.n, 1)));
      break;
    case FB_ATTR_STRINGS:
      p->n_strings = a->strings.n;
      p->strings = keep (x, g_new0 (ProtobufCBinaryData, MAX (a->strings.n, 1)));
      for (guint i = 0; i < a->strings.n; i++)
        {
          p->strings[i].data = (uint8_t *) str (x, a->strings.v[i]);
          p->strings[i].len = strlen (a->strings.v[i]);
        }
      break;
    case FB_ATTR_TYPE:
      {
        Onnx__TypeProto *tp = NEW (x, Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
        Onnx__TypeProto__Tensor *tt = NEW (x, Onnx__TypeProto__Tensor,
                                           ONNX__TYPE_PROTO__TENSOR__INIT);
        tt->has_elem_type = a->tp.dtype != FB_DTYPE_UNDEFINED;
        tt->elem_type = a->tp.dtype;
        tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
        tp->tensor_type = tt;
        p->tp = wrap_kind (x, a->tp.kind, tp);
      }
      break;
    default:
      p->has_type = FALSE;
      break;
    }
  return p;
}

static Onnx__NodeProto *
node_proto (Export *x, const FbNode *n)
{
  Onnx__NodeProto *p = NEW (x, Onnx__NodeProto, ONNX__NODE_PROTO__INIT);
  p->name = str (x, n->name);
  if (n->op == FB_OP_FUSED)
    {
      p->op_type = str (x, fb_op_name (n->op));
      p->domain = str (x, FUSED_DOMAIN);
      x->any_fused = TRUE;
    }
  else
    {
      p->op_type = str (x, n->op_type ? n->op_type : fb_op_name (n->op));
      p->domain = str (x, n->domain);
    }
  p->n_input = n->n_inputs;
  p->input = keep (x, g_new0 (char *, MAX (n->n_inputs, 1)));
  for (guint i = 0; i < n->n_inputs; i++)
    p->input[i] = str (x, n->inputs[i] ? n->inputs[i]->name : "");
  p->n_output = n->n_outputs;
  p->output = keep (x, g_new0 (char *, MAX (n->n_outputs, 1)));
  for (guint i = 0; i < n->n_outputs; i++)
    p->output[i] = str (x, n->outputs[i] ? n->outputs[i]->name : "");
  p->n_attribute = n->n_attrs;
  p->attribute = keep (x, g_new0 (Onnx__AttributeProto *, MAX (n->n_attrs, 1)));
  for (guint i = 0; i < n->n_attrs; i++)
    p->attribute[i] = attr_proto (x, &n->attrs[i]);
  if (n->doc_string)
    p->doc_string = str (x, n->doc_string);
  return p;
}

static Onnx__GraphProto *
graph_proto (Export *x, const FbGraph *g)
{
  Onnx__GraphProto *p = NEW (x, Onnx__GraphProto, ONNX__GRAPH_PROTO__INIT);
  p->name = str (x, g->name ? g->name : "graph");
  p->n_node = g->nodes->len;
  p->node = keep (x, g_new0 (Onnx__NodeProto *, MAX (g->nodes->len, 1)));
  for (guint i = 0; i < g->nodes->len; i++)
    p->node[i] = node_proto (x, g_ptr_array_index (g->nodes, i));
  GPtrArray *inits = g_ptr_array_new ();
  GPtrArray *infos = g_ptr_array_new ();
  g_ptr_array_add (x->arrays, inits);
  g_ptr_array_add (x->arrays, infos);
  for (guint i = 0; i < g->values->len; i++)
    {
      const FbValue *v = g_ptr_array_index (g->values, i);
      /* A value a node makes is that node's, even when its contents are known (a Constant in
       * a body, where no pass folds): written as an initializer too, it would be defined twice. */
      if (v->constant && v->producer == NULL)
        g_ptr_array_add (inits, tensor_proto (x, v->constant, v->name));
      else if (!v->is_input && !v->is_output && v->producer && v->dtype != FB_DTYPE_UNDEFINED)
        g_ptr_array_add (infos, value_info (x, v));
    }
  p->n_initializer = inits->len;
  p->initializer = (Onnx__TensorProto **) inits->pdata;
  p->n_value_info = infos->len;
  p->value_info = (Onnx__ValueInfoProto **) infos->pdata;
  p->n_input = g->inputs->len;
  p->input = keep (x, g_new0 (Onnx__ValueInfoProto *, MAX (g->inputs->len, 1)));
  for (guint i = 0; i < g->inputs->len; i++)
    p->input[i] = value_info (x, g_ptr_array_index (g->inputs, i));
  p->n_output = g->outputs->len;
  p->output = keep (x, g_new0 (Onnx__ValueInfoProto *, MAX (g->outputs->len, 1)));
  for (guint i = 0; i < g->outputs->len; i++)
    p->output[i] = value_info (x, g_ptr_array_index (g->outputs, i));
  return p;
}

GBytes *
fb_onnx_export (const FbGraph *graph, GHashTable *external, const char *weights_file,
                GError **error)
{
  g_return_val_if_fail (graph != NULL, NULL);
  Export x = { .external = external, .weights_file = weights_file };
  x.garbage = g_ptr_array_new_with_free_func (g_free);
  x.arrays = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);

  Onnx__ModelProto *m = NEW (&x, Onnx__ModelProto, ONNX__MODEL_PROTO__INIT);
  FbModel *model = graph->model;
  m->has_ir_version = TRUE;
  /* Initializers are written apart from the graph's inputs, which IR version 4 first allows. */
  m->ir_version = model->ir_version > 0 ? MAX (model->ir_version, 4) : 8;
  m->producer_name = str (&x, "fusebench");
  m->producer_version = str (&x, model->producer_name ? model->producer_name : "");
  m->graph = graph_proto (&x, graph);
  guint n_ops = model->opsets ? g_hash_table_size (model->opsets) : 0;
  m->opset_import = keep (&x, g_new0 (Onnx__OperatorSetIdProto *, n_ops + 1));
  if (model->opsets)
    {
      GHashTableIter it;
      gpointer k, v;
      g_hash_table_iter_init (&it, model->opsets);
      while (g_hash_table_iter_next (&it, &k, &v))
        {
          Onnx__OperatorSetIdProto *o = NEW (&x, Onnx__OperatorSetIdProto,
                                             ONNX__OPERATOR_SET_ID_PROTO__INIT);
          o->domain = str (&x, k);
          o->has_version = TRUE;
          o->version = *(const char *) k == '\0' ? fb_onnx_form_opset (model) : GPOINTER_TO_INT (v);
          m->opset_import[m->n_opset_import++] = o;
        }
    }
  if (x.any_fused)
    {
      Onnx__OperatorSetIdProto *fo = NEW (&x, Onnx__OperatorSetIdProto,
                                          ONNX__OPERATOR_SET_ID_PROTO__INIT);
      fo->domain = str (&x, FUSED_DOMAIN);
      fo->has_version = TRUE;
      fo->version = 1;
      m->opset_import[m->n_opset_import++] = fo;
    }

  gsize size = onnx__model_proto__get_packed_size (m);
  guint8 *buf = g_try_malloc (MAX (size, 1));
  GBytes *bytes = NULL;
  if (buf == NULL)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE, "cannot allocate %" G_GSIZE_FORMAT
                 " bytes for the ONNX model", size);
  else
    {
      onnx__model_proto__pack (m, buf);
      bytes = g_bytes_new_take (buf, size);
    }
  g_ptr_array_unref (x.garbage);
  g_ptr_array_unref (x.arrays);
  return bytes;
}
