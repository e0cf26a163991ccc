/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench info MODEL [--json]: what a model is, before any pass touches it. */
#include "fb-cli.h"
#include "fb-graph.h"
#include "fb-onnx-import.h"

#include <json-glib/json-glib.h>
#include <stdio.h>

typedef struct {
  GHashTable *ops;          /* op_type -> count (all graphs) */
  int64_t     params;       /* initializer elements */
  int64_t     param_bytes;
} Totals;

static void
count_graph (const FbGraph *graph, Totals *totals)
{
  for (guint i = 0; i < graph->values->len; i++)
    {
      const FbValue *v = g_ptr_array_index (graph->values, i);
      if (v->constant != NULL && v->producer == NULL)
        {
          totals->params += v->constant->numel;
          totals->param_bytes += (int64_t) fb_tensor_nbytes (v->constant);
        }
    }
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (graph->nodes, i);
      gpointer count = g_hash_table_lookup (totals->ops, n->op_type);
      g_hash_table_insert (totals->ops, (gpointer) n->op_type,
                           GINT_TO_POINTER (GPOINTER_TO_INT (count) + 1));
      for (guint a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == FB_ATTR_GRAPH)
          count_graph (n->attrs[a].g, totals);
    }
}

static gint
compare_op_counts (gconstpointer a, gconstpointer b, gpointer ops)
{
  int ca = GPOINTER_TO_INT (g_hash_table_lookup (ops, *(const char **) a));
  int cb = GPOINTER_TO_INT (g_hash_table_lookup (ops, *(const char **) b));
  return ca != cb ? cb - ca : g_strcmp0 (*(const char **) a, *(const char **) b);
}

static GPtrArray *
sorted_keys (GHashTable *table, GCompareDataFunc compare, gpointer data)
{
  GPtrArray *keys = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;

  g_hash_table_iter_init (&it, table);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (keys, key);
  g_ptr_array_sort_with_data (keys, compare, data);
  return keys;
}

static gint
compare_strings (gconstpointer a, gconstpointer b, gpointer data)
{
  return g_strcmp0 (*(const char **) a, *(const char **) b);
}

static JsonNode *
shape_json (const FbShape *shape)
{
  JsonArray *dims;

  if (shape->rank < 0)
    return json_node_new (JSON_NODE_NULL);
  dims = json_array_new ();
  for (int i = 0; i < shape->rank; i++)
    {
      if (shape->dim[i] >= 0)
        json_array_add_int_element (dims, shape->dim[i]);
      else if (shape->sym[i])
        json_array_add_string_element (dims, shape->sym[i]);
      else
        json_array_add_null_element (dims);
    }
  return json_node_init_array (json_node_alloc (), dims);
}

static JsonArray *
values_json (GPtrArray *values)
{
  JsonArray *array = json_array_new ();

  for (guint i = 0; i < values->len; i++)
    {
      const FbValue *v = g_ptr_array_index (values, i);
      JsonObject *o = json_object_new ();
      json_object_set_string_member (o, "name", v->name);
      json_object_set_string_member (o, "dtype", fb_dtype_name (v->dtype));
      if (v->kind != FB_KIND_TENSOR)
        json_object_set_string_member (o, "kind", fb_value_kind_name (v->kind));
      json_object_set_member (o, "shape", shape_json (&v->shape));
      json_array_add_object_element (array, o);
    }
  return array;
}

static void
print_json (const FbGraph *graph, Totals *totals, GHashTable *unsupported)
{
  const FbModel *m = graph->model;
  JsonObject *root = json_object_new ();
  JsonObject *opsets = json_object_new ();
  JsonObject *ops = json_object_new ();
  JsonObject *params = json_object_new ();
  JsonArray *unsup = json_array_new ();
  g_autoptr(GPtrArray) op_keys = sorted_keys (totals->ops, compare_op_counts, totals->ops);
  g_autoptr(GPtrArray) unsup_keys = sorted_keys (unsupported, compare_strings, NULL);
  g_autoptr(GPtrArray) opset_keys = sorted_keys (m->opsets, compare_strings, NULL);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *text = NULL;

  json_object_set_string_member (root, "file", m->path);
  json_object_set_string_member (root, "producer", m->producer_name ? m->producer_name : "");
  json_object_set_string_member (root, "producer_version", m->producer_version ? m->producer_version : "");
  json_object_set_int_member (root, "ir_version", m->ir_version);
  for (guint i = 0; i < opset_keys->len; i++)
    {
      const char *d = g_ptr_array_index (opset_keys, i);
      json_object_set_int_member (opsets, *d ? d : "ai.onnx",
                                  GPOINTER_TO_INT (g_hash_table_lookup (m->opsets, d)));
    }
  json_object_set_object_member (root, "opsets", opsets);
  json_object_set_int_member (root, "nodes", graph->nodes->len);
  json_object_set_int_member (root, "nodes_total", fb_graph_count_nodes (graph, TRUE));
  json_object_set_array_member (root, "inputs", values_json (graph->inputs));
  json_object_set_array_member (root, "outputs", values_json (graph->outputs));
  for (guint i = 0; i < op_keys->len; i++)
    {
      const char *op = g_ptr_array_index (op_keys, i);
      json_object_set_int_member (ops, op, GPOINTER_TO_INT (g_hash_table_lookup (totals->ops, op)));
    }
  json_object_set_object_member (root, "ops", ops);
  json_object_set_int_member (params, "count", totals->params);
  json_object_set_int_member (params, "bytes", totals->param_bytes);
  json_object_set_object_member (root, "parameters", params);
  for (guint i = 0; i < unsup_keys->len; i++)
    {
      const char *op = g_ptr_array_index (unsup_keys, i);
      GPtrArray *names = g_hash_table_lookup (unsupported, op);
      JsonObject *o = json_object_new ();
      JsonArray *list = json_array_new ();
      for (guint k = 0; k < names->len; k++)
        json_array_add_string_element (list, g_ptr_array_index (names, k));
      json_object_set_string_member (o, "op", op);
      json_object_set_array_member (o, "nodes", list);
      json_array_add_object_element (unsup, o);
    }
  json_object_set_array_member (root, "unsupported", unsup);
  {
    /* Nodes of known operators that this model asks for more than the project computes. */
    g_autoptr(GPtrArray) names = sorted_keys (graph->model->problems, compare_strings, NULL);
    JsonObject *problems = json_object_new ();
    for (guint i = 0; i < names->len; i++)
      json_object_set_string_member (problems, g_ptr_array_index (names, i),
                                     g_hash_table_lookup (graph->model->problems,
                                                          g_ptr_array_index (names, i)));
    json_object_set_object_member (root, "not_computed", problems);
  }

  node = json_node_init_object (json_node_alloc (), root);
  json_object_unref (root);
  json_generator_set_root (gen, node);
  json_generator_set_pretty (gen, TRUE);
  text = json_generator_to_data (gen, NULL);
  printf ("%s\n", text);
}

static void
print_values (const char *title, GPtrArray *values)
{
  printf ("%s:\n", title);
  for (guint i = 0; i < values->len; i++)
    {
      const FbValue *v = g_ptr_array_index (values, i);
      g_autofree char *shape = fb_shape_to_display (&v->shape);
      g_autofree char *symbols = fb_shape_symbols_text (&v->shape);

      /* As the window shows it, and what a short name stands for under it. */
      if (v->kind != FB_KIND_TENSOR)
        {
          /* "seq(float32[1x64])": a sequence or an optional around its elements' type. */
          g_autofree char *tensor = g_strdup_printf ("%s[%s]", fb_dtype_name (v->dtype), shape);
          g_autofree char *type = fb_value_kind_wrap (v->kind, tensor);
          printf ("  %-28s %s\n", v->name, type);
        }
      else
        printf ("  %-28s %-8s %s\n", v->name, fb_dtype_name (v->dtype), shape);
      if (symbols != NULL)
        {
          g_auto(GStrv) lines = g_strsplit (symbols, "\n", -1);

          for (guint k = 0; lines[k] != NULL; k++)
            printf ("  %-28s %-8s   %s\n", "", "", lines[k]);
        }
    }
}

static void
print_text (const FbGraph *graph, Totals *totals, GHashTable *unsupported)
{
  const FbModel *m = graph->model;
  g_autoptr(GPtrArray) op_keys = sorted_keys (totals->ops, compare_op_counts, totals->ops);
  g_autoptr(GPtrArray) unsup_keys = sorted_keys (unsupported, compare_strings, NULL);
  g_autoptr(GPtrArray) opset_keys = sorted_keys (m->opsets, compare_strings, NULL);
  g_autofree char *bytes = g_format_size ((guint64) totals->param_bytes);

  printf ("model:      %s\n", m->path);
  printf ("producer:   %s %s\n", m->producer_name ? m->producer_name : "(none)",
          m->producer_version ? m->producer_version : "");
  printf ("IR version: %" G_GINT64_FORMAT "\nopsets:    ", m->ir_version);
  for (guint i = 0; i < opset_keys->len; i++)
    {
      const char *d = g_ptr_array_index (opset_keys, i);
      printf (" %s %d", *d ? d : "ai.onnx", GPOINTER_TO_INT (g_hash_table_lookup (m->opsets, d)));
    }
  printf ("\n");
  print_values ("inputs", graph->inputs);
  print_values ("outputs", graph->outputs);
  printf ("nodes:      %u (%u including subgraphs)\n", graph->nodes->len,
          fb_graph_count_nodes (graph, TRUE));
  printf ("parameters: %" G_GINT64_FORMAT " (%s)\n", totals->params, bytes);
  printf ("ops:\n");
  for (guint i = 0; i < op_keys->len; i++)
    {
      const char *op = g_ptr_array_index (op_keys, i);
      printf ("  %-24s %d\n", op, GPOINTER_TO_INT (g_hash_table_lookup (totals->ops, op)));
    }
  if (g_hash_table_size (m->problems) > 0)
    {
      g_autoptr(GPtrArray) names = sorted_keys (m->problems, compare_strings, NULL);
      printf ("not computed (the model loads; the pipeline stops here):\n");
      for (guint i = 0; i < names->len; i++)
        printf ("  %s: %s\n", (const char *) g_ptr_array_index (names, i),
                (const char *) g_hash_table_lookup (m->problems, g_ptr_array_index (names, i)));
    }
  if (unsup_keys->len == 0)
    {
      printf ("unsupported: none\n");
      return;
    }
  printf ("unsupported:\n");
  for (guint i = 0; i < unsup_keys->len; i++)
    {
      const char *op = g_ptr_array_index (unsup_keys, i);
      GPtrArray *names = g_hash_table_lookup (unsupported, op);
      printf ("  %s (%u):", op, names->len);
      for (guint k = 0; k < names->len && k < 8; k++)
        printf (" %s", (const char *) g_ptr_array_index (names, k));
      printf ("%s\n", names->len > 8 ? " …" : "");
    }
}

int
fb_cli_info (int argc, char **argv)
{
  gboolean json = FALSE;
  FbCliPipelineArgs pipeline = { 0 };
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("MODEL — describe an ONNX model");
  g_autoptr(GError) error = NULL;
  g_autoptr(GHashTable) shapes = NULL;
  g_autoptr(FbGraph) graph = NULL;
  g_autoptr(GHashTable) unsupported = NULL;
  Totals totals = { 0 };
  int status;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_add_group (context, fb_cli_pipeline_group (&pipeline));
  if (!g_option_context_parse (context, &argc, &argv, &error))
    status = fb_cli_fail (error);
  else if (argc != 2)
    {
      fprintf (stderr, "fusebench info: expected one MODEL (see --help)\n");
      status = FB_EXIT_INPUT;
    }
  else if ((shapes = fb_cli_input_shapes (&pipeline, &error)) == NULL ||
           (graph = fb_onnx_import_file (argv[1], shapes, &error)) == NULL)
    status = fb_cli_fail (error);
  else
    {
      totals.ops = g_hash_table_new (g_str_hash, g_str_equal);
      count_graph (graph, &totals);
      unsupported = fb_graph_unsupported_ops (graph);
      if (json)
        print_json (graph, &totals, unsupported);
      else
        print_text (graph, &totals, unsupported);
      g_hash_table_unref (totals.ops);
      status = FB_EXIT_OK;
    }
  fb_cli_pipeline_args_clear (&pipeline);
  return status;
}
