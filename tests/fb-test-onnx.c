/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-test-onnx.h"

#include <string.h>

gpointer
test_model_keep (TestModel *m, gpointer p)
{
  g_ptr_array_add (m->garbage, p);
  return p;
}

static char *
keep_str (TestModel *m, const char *s)
{
  return test_model_keep (m, g_strdup (s));
}

TestModel *
test_model_new (int opset)
{
  TestModel *m = g_new0 (TestModel, 1);
  Onnx__OperatorSetIdProto *o;

  m->garbage = g_ptr_array_new_with_free_func (g_free);
  onnx__model_proto__init (&m->model);
  onnx__graph_proto__init (&m->graph);
  m->model.has_ir_version = TRUE;
  m->model.ir_version = 8;
  m->model.producer_name = keep_str (m, "fusebench-tests");
  m->model.graph = &m->graph;
  m->graph.name = keep_str (m, "test");
  o = test_model_keep (m, g_new0 (Onnx__OperatorSetIdProto, 1));
  onnx__operator_set_id_proto__init (o);
  o->domain = keep_str (m, "");
  o->has_version = TRUE;
  o->version = opset;
  m->model.n_opset_import = 1;
  m->model.opset_import = test_model_keep (m, g_new0 (Onnx__OperatorSetIdProto *, 1));
  m->model.opset_import[0] = o;
  return m;
}

void
test_model_free (TestModel *m)
{
  /* Arrays were grown with g_renew: they are freed here, not through the garbage list. */
  g_free (m->graph.input);
  g_free (m->graph.output);
  g_free (m->graph.node);
  g_free (m->graph.initializer);
  g_ptr_array_unref (m->garbage);
  g_free (m);
}

#define APPEND(arr, n, item) G_STMT_START { \
    (arr) = g_renew (__typeof__ (*(arr)), (arr), (n) + 1); \
    (arr)[(n)++] = (item); \
  } G_STMT_END

Onnx__ValueInfoProto *
test_model_input (TestModel *m, const char *name, int elem_type, int rank, const int64_t *dims)
{
  Onnx__ValueInfoProto *vi = test_model_keep (m, g_new0 (Onnx__ValueInfoProto, 1));
  Onnx__TypeProto *type = test_model_keep (m, g_new0 (Onnx__TypeProto, 1));
  Onnx__TypeProto__Tensor *tt = test_model_keep (m, g_new0 (Onnx__TypeProto__Tensor, 1));
  Onnx__TensorShapeProto *shape = test_model_keep (m, g_new0 (Onnx__TensorShapeProto, 1));

  onnx__value_info_proto__init (vi);
  onnx__type_proto__init (type);
  onnx__type_proto__tensor__init (tt);
  onnx__tensor_shape_proto__init (shape);
  vi->name = keep_str (m, name);
  vi->type = type;
  type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  type->tensor_type = tt;
  tt->has_elem_type = TRUE;
  tt->elem_type = elem_type;
  tt->shape = shape;
  shape->n_dim = (size_t) rank;
  shape->dim = test_model_keep (m, g_new0 (Onnx__TensorShapeProto__Dimension *, MAX (rank, 1)));
  for (int i = 0; i < rank; i++)
    {
      Onnx__TensorShapeProto__Dimension *d = test_model_keep (m, g_new0 (Onnx__TensorShapeProto__Dimension, 1));
      onnx__tensor_shape_proto__dimension__init (d);
      if (dims[i] >= 0)
        {
          d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
          d->dim_value = dims[i];
        }
      else
        {
          d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
          d->dim_param = keep_str (m, "N");
        }
      shape->dim[i] = d;
    }
  APPEND (m->graph.input, m->graph.n_input, vi);
  return vi;
}

void
test_model_output (TestModel *m, const char *name)
{
  Onnx__ValueInfoProto *vi = test_model_keep (m, g_new0 (Onnx__ValueInfoProto, 1));

  onnx__value_info_proto__init (vi);
  vi->name = keep_str (m, name);
  APPEND (m->graph.output, m->graph.n_output, vi);
}

Onnx__TensorProto *
test_model_initializer (TestModel *m, const char *name, int rank, const int64_t *dims)
{
  Onnx__TensorProto *t = test_model_keep (m, g_new0 (Onnx__TensorProto, 1));
  int64_t numel = 1;
  float *data;

  onnx__tensor_proto__init (t);
  t->name = keep_str (m, name);
  t->has_data_type = TRUE;
  t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  t->n_dims = (size_t) rank;
  t->dims = test_model_keep (m, g_memdup2 (dims, sizeof (int64_t) * MAX (rank, 1)));
  for (int i = 0; i < rank; i++)
    numel *= dims[i];
  data = test_model_keep (m, g_new0 (float, MAX (numel, 1)));
  for (int64_t i = 0; i < numel; i++)
    data[i] = (float) i;
  t->has_raw_data = TRUE;
  t->raw_data.len = sizeof (float) * numel;
  t->raw_data.data = (uint8_t *) data;
  APPEND (m->graph.initializer, m->graph.n_initializer, t);
  return t;
}

static char **
name_list (TestModel *m, const char * const *names, size_t *n)
{
  char **list;

  *n = names ? g_strv_length ((char **) names) : 0;
  list = test_model_keep (m, g_new0 (char *, *n + 1));
  for (size_t i = 0; i < *n; i++)
    list[i] = keep_str (m, names[i]);
  return list;
}

Onnx__NodeProto *
test_model_node (TestModel *m, const char *op_type, const char *name,
                 const char * const *inputs, const char * const *outputs)
{
  Onnx__NodeProto *n = test_model_keep (m, g_new0 (Onnx__NodeProto, 1));

  onnx__node_proto__init (n);
  n->op_type = keep_str (m, op_type);
  n->name = name ? keep_str (m, name) : NULL;
  n->input = name_list (m, inputs, &n->n_input);
  n->output = name_list (m, outputs, &n->n_output);
  APPEND (m->graph.node, m->graph.n_node, n);
  return n;
}

static Onnx__AttributeProto *
add_attr (TestModel *m, Onnx__NodeProto *node, const char *name)
{
  Onnx__AttributeProto *a = test_model_keep (m, g_new0 (Onnx__AttributeProto, 1));
  Onnx__AttributeProto **list = test_model_keep (m, g_new0 (Onnx__AttributeProto *, node->n_attribute + 1));

  onnx__attribute_proto__init (a);
  a->name = keep_str (m, name);
  if (node->n_attribute)
    memcpy (list, node->attribute, sizeof (*list) * node->n_attribute);
  list[node->n_attribute++] = a;
  node->attribute = list;
  return a;
}

void
test_node_attr_int (TestModel *m, Onnx__NodeProto *node, const char *name, int64_t v)
{
  Onnx__AttributeProto *a = add_attr (m, node, name);
  a->has_type = TRUE;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  a->has_i = TRUE;
  a->i = v;
}

void
test_node_attr_graph (TestModel *m, Onnx__NodeProto *node, const char *name, Onnx__GraphProto *graph)
{
  Onnx__AttributeProto *a = add_attr (m, node, name);
  a->has_type = TRUE;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  a->g = graph;
}

GBytes *
test_model_pack (TestModel *m)
{
  gsize len = onnx__model_proto__get_packed_size (&m->model);
  guint8 *buf = g_malloc (MAX (len, 1));

  onnx__model_proto__pack (&m->model, buf);
  return g_bytes_new_take (buf, len);
}
