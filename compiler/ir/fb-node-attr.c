/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Typed access to node attributes, with the defaults the ONNX operator specs give. */
#include "fb-graph.h"

#include <string.h>

const FbAttr *
fb_node_attr (const FbNode *node, const char *name)
{
  g_return_val_if_fail (node != NULL && name != NULL, NULL);
  for (guint i = 0; i < node->n_attrs; i++)
    if (strcmp (node->attrs[i].name, name) == 0)
      return &node->attrs[i];
  return NULL;
}

int64_t
fb_node_attr_int (const FbNode *node, const char *name, int64_t fallback)
{
  const FbAttr *a = fb_node_attr (node, name);
  return a && a->type == FB_ATTR_INT ? a->i : fallback;
}

float
fb_node_attr_float (const FbNode *node, const char *name, float fallback)
{
  const FbAttr *a = fb_node_attr (node, name);
  if (a && a->type == FB_ATTR_FLOAT)
    return a->f;
  /* Some exporters write integral float attributes as ints. */
  if (a && a->type == FB_ATTR_INT)
    return (float) a->i;
  return fallback;
}

const char *
fb_node_attr_string (const FbNode *node, const char *name, const char *fallback)
{
  const FbAttr *a = fb_node_attr (node, name);
  return a && a->type == FB_ATTR_STRING ? a->s : fallback;
}

const int64_t *
fb_node_attr_ints (const FbNode *node, const char *name, guint *n)
{
  const FbAttr *a = fb_node_attr (node, name);

  g_return_val_if_fail (n != NULL, NULL);
  if (a && a->type == FB_ATTR_INTS)
    {
      *n = a->ints.n;
      return a->ints.v;
    }
  *n = 0;
  return NULL;
}

const float *
fb_node_attr_floats (const FbNode *node, const char *name, guint *n)
{
  const FbAttr *a = fb_node_attr (node, name);

  g_return_val_if_fail (n != NULL, NULL);
  if (a && a->type == FB_ATTR_FLOATS)
    {
      *n = a->floats.n;
      return a->floats.v;
    }
  *n = 0;
  return NULL;
}

FbTensor *
fb_node_attr_tensor (const FbNode *node, const char *name)
{
  const FbAttr *a = fb_node_attr (node, name);
  return a && a->type == FB_ATTR_TENSOR ? a->t : NULL;
}

FbGraph *
fb_node_attr_graph (const FbNode *node, const char *name)
{
  const FbAttr *a = fb_node_attr (node, name);
  return a && a->type == FB_ATTR_GRAPH ? a->g : NULL;
}

void
fb_node_set_attr (FbGraph *graph, FbNode *node, const FbAttr *attr)
{
  FbAttr copy;
  guint slot = node->n_attrs;

  g_return_if_fail (graph != NULL && node != NULL && attr != NULL && attr->name != NULL);
  copy = *attr;
  copy.name = fb_arena_strdup (graph->arena, attr->name);
  switch (attr->type)
    {
    case FB_ATTR_STRING:
      copy.s = fb_arena_strdup (graph->arena, attr->s);
      break;
    case FB_ATTR_TENSOR:
      fb_tensor_ref (attr->t);
      break;
    case FB_ATTR_FLOATS:
      copy.floats.v = fb_arena_memdup (graph->arena, attr->floats.v, sizeof (float) * attr->floats.n);
      break;
    case FB_ATTR_INTS:
      copy.ints.v = fb_arena_memdup (graph->arena, attr->ints.v, sizeof (int64_t) * attr->ints.n);
      break;
    case FB_ATTR_STRINGS:
      {
        const char **v = fb_arena_alloc (graph->arena, sizeof (char *) * MAX (attr->strings.n, 1));
        for (guint k = 0; k < attr->strings.n; k++)
          v[k] = fb_arena_strdup (graph->arena, attr->strings.v[k]);
        copy.strings.v = v;
      }
      break;
    default:
      break;
    }
  for (guint i = 0; i < node->n_attrs; i++)
    if (strcmp (node->attrs[i].name, attr->name) == 0)
      {
        if (node->attrs[i].type == FB_ATTR_TENSOR)
          fb_tensor_unref (node->attrs[i].t);
        node->attrs[i] = copy;
        return;
      }
  /* Attribute arrays live in the arena: grow by copying (attributes are few and rarely added). */
  FbAttr *grown = fb_arena_alloc (graph->arena, sizeof (FbAttr) * (node->n_attrs + 1));
  if (node->n_attrs)
    memcpy (grown, node->attrs, sizeof (FbAttr) * node->n_attrs);
  grown[slot] = copy;
  node->attrs = grown;
  node->n_attrs++;
}
