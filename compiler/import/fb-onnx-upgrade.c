/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Old operator versions of the default domain brought to one form, once, at import (what ONNX's
 * version converter does), so that passes, the interpreter and the backends never see them:
 *
 *   - opset < 7: consumed_inputs, is_test and spatial=1 dropped; the legacy broadcast of binary
 *     operators (broadcast=1 with axis) made numpy broadcasting by unsqueezing the second operand;
 *     Reshape's shape, Cast's type name, Pad's paddings, Upsample's width/height scales and
 *     Concat's implicit axis written the way opset 7 writes them;
 *   - attributes that later became inputs: Slice starts/ends/axes (10), TopK k (10),
 *     Squeeze/Unsqueeze axes, ReduceSum axes and Split split (13) become constant inputs.
 *
 * A node that changed gets the opset of the form it now has, and its original entry in the
 * model's node table keeps the text of the node as written (FbOrigNode.written), which the
 * printer and the inspector show: stage 0 still tells what the file said. */
#include "fb-onnx-upgrade-private.h"

#include <string.h>

static gboolean is_legacy_broadcast_op (FbOpKind op);

/* ---- node surgery ---------------------------------------------------------------------------- */

static gboolean
remove_attr (FbNode *node, const char *name)
{
  for (guint i = 0; i < node->n_attrs; i++)
    if (g_strcmp0 (node->attrs[i].name, name) == 0)
      {
        g_assert (node->attrs[i].type != FB_ATTR_TENSOR && node->attrs[i].type != FB_ATTR_GRAPH);
        memmove (&node->attrs[i], &node->attrs[i + 1], sizeof (FbAttr) * (node->n_attrs - i - 1));
        node->n_attrs--;
        return TRUE;
      }
  return FALSE;
}

/* Puts value at input index, growing the input array (omitted inputs in between stay NULL). */
static void
set_input (FbGraph *graph, FbNode *node, guint index, FbValue *value)
{
  if (index >= node->n_inputs)
    {
      FbValue **inputs = fb_arena_alloc (graph->arena, sizeof (FbValue *) * (index + 1));
      memcpy (inputs, node->inputs, sizeof (FbValue *) * node->n_inputs);
      node->inputs = inputs;
      node->n_inputs = index + 1;
    }
  node->inputs[index] = value;
}

static FbValue *
ints_constant (FbGraph *graph, const FbNode *node, const char *what, const int64_t *v, guint n,
               gboolean scalar)
{
  int64_t dims = n;
  g_autofree char *name = g_strdup_printf ("%s.%s", node->name, what);
  g_autoptr(FbTensor) t = fb_tensor_new (FB_DTYPE_INT64, scalar ? 0 : 1, &dims, NULL);

  if (n > 0)
    memcpy (fb_tensor_data_mut (t), v, sizeof (int64_t) * n);
  return fb_graph_add_constant (graph, name, t);
}

/* Attribute name (an INTS attribute) becomes input index; FALSE when there is no such
 * attribute. */
static gboolean
ints_attr_to_input (FbGraph *graph, FbNode *node, const char *name, guint index)
{
  const FbAttr *a = fb_node_attr (node, name);

  if (a == NULL || a->type != FB_ATTR_INTS)
    return FALSE;
  set_input (graph, node, index, ints_constant (graph, node, name, a->ints.v, a->ints.n, FALSE));
  remove_attr (node, name);
  return TRUE;
}

static gboolean
unsupported (const FbNode *node, const char *what, GError **error)
{
  g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_UNSUPPORTED,
               "node '%s' (%s, opset %d): %s", node->name, node->op_type, node->opset, what);
  return FALSE;
}

/* ---- the attributes the upgrade consumes ------------------------------------------------------- */

static const char *
attr_type_name (FbAttrType type)
{
  static const char *const names[] = { "undefined", "a float", "an int", "a string", "a tensor",
                                       "a graph", "a list of floats", "a list of ints",
                                       "a list of strings" };
  return (guint) type < G_N_ELEMENTS (names) ? names[type] : "of an unknown kind";
}

/* An attribute the upgrade reads, rewrites or drops must be of the kind its old form had: one of
 * another kind (a graph or a tensor where ints belong) is a broken file, and dropping it would
 * orphan what it owns. Absent is fine. */
static gboolean
expect_attr (const FbNode *node, const char *name, FbAttrType type, GError **error)
{
  const FbAttr *a = fb_node_attr (node, name);

  if (a == NULL || a->type == type)
    return TRUE;
  g_set_error (error, FB_IMPORT_ERROR, FB_IMPORT_ERROR_INVALID,
               "node '%s' (%s, opset %d): attribute '%s' is %s, expected %s", node->name,
               node->op_type, node->opset, name, attr_type_name (a->type), attr_type_name (type));
  return FALSE;
}

/* Checks, before any surgery, every attribute that upgrade_before_7 and attrs_to_inputs touch. */
static gboolean
upgraded_attrs_are_valid (const FbNode *node, GError **error)
{
  gboolean ok = TRUE;

  if (node->opset < 7)
    {
      ok = ok && expect_attr (node, "consumed_inputs", FB_ATTR_INTS, error);
      if (node->op == FB_OP_DROPOUT || node->op == FB_OP_BATCH_NORMALIZATION)
        ok = ok && expect_attr (node, "is_test", FB_ATTR_INT, error);
      if (is_legacy_broadcast_op (node->op) || node->op == FB_OP_GEMM)
        ok = ok && expect_attr (node, "broadcast", FB_ATTR_INT, error);
      if (is_legacy_broadcast_op (node->op))
        ok = ok && expect_attr (node, "axis", FB_ATTR_INT, error);
      if (node->op == FB_OP_RESHAPE)
        ok = ok && expect_attr (node, "shape", FB_ATTR_INTS, error);
      if (node->op == FB_OP_PAD)
        ok = ok && expect_attr (node, "paddings", FB_ATTR_INTS, error)
                && expect_attr (node, "pads", FB_ATTR_INTS, error);
      if (node->op == FB_OP_UPSAMPLE)
        ok = ok && expect_attr (node, "width_scale", FB_ATTR_FLOAT, error)
                && expect_attr (node, "height_scale", FB_ATTR_FLOAT, error)
                && expect_attr (node, "mode", FB_ATTR_STRING, error)
                && expect_attr (node, "scales", FB_ATTR_FLOATS, error);
      if (node->op == FB_OP_BATCH_NORMALIZATION || node->op == FB_OP_INSTANCE_NORMALIZATION)
        ok = ok && expect_attr (node, "spatial", FB_ATTR_INT, error);
    }
  switch (node->op)
    {
    case FB_OP_SLICE:
      if (node->opset < 10)
        ok = ok && expect_attr (node, "starts", FB_ATTR_INTS, error)
                && expect_attr (node, "ends", FB_ATTR_INTS, error)
                && expect_attr (node, "axes", FB_ATTR_INTS, error);
      break;
    case FB_OP_TOPK:
      if (node->opset < 10)
        ok = ok && expect_attr (node, "k", FB_ATTR_INT, error);
      break;
    case FB_OP_SQUEEZE: case FB_OP_UNSQUEEZE: case FB_OP_REDUCE_SUM:
      if (node->opset < 13)
        ok = ok && expect_attr (node, "axes", FB_ATTR_INTS, error);
      break;
    case FB_OP_SPLIT:
      if (node->opset < 13)
        ok = ok && expect_attr (node, "split", FB_ATTR_INTS, error);
      break;
    default:
      break;
    }
  return ok;
}

/* ---- the written form ------------------------------------------------------------------------ */

static void
append_attr (GString *s, const FbAttr *a)
{
  g_string_append_printf (s, " %s=", a->name);
  switch (a->type)
    {
    case FB_ATTR_INT: g_string_append_printf (s, "%" G_GINT64_FORMAT, a->i); break;
    case FB_ATTR_FLOAT: g_string_append_printf (s, "%g", a->f); break;
    case FB_ATTR_STRING: g_string_append_printf (s, "\"%s\"", a->s); break;
    case FB_ATTR_INTS:
      g_string_append_c (s, '[');
      for (guint k = 0; k < a->ints.n; k++)
        g_string_append_printf (s, "%s%" G_GINT64_FORMAT, k ? ", " : "", a->ints.v[k]);
      g_string_append_c (s, ']');
      break;
    case FB_ATTR_FLOATS:
      g_string_append_c (s, '[');
      for (guint k = 0; k < a->floats.n; k++)
        g_string_append_printf (s, "%s%g", k ? ", " : "", a->floats.v[k]);
      g_string_append_c (s, ']');
      break;
    default: g_string_append (s, "…"); break;
    }
}

static char *
written_text (const FbNode *node)
{
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, "%s-%d (%u input%s)", node->op_type, node->opset, node->n_inputs,
                          node->n_inputs == 1 ? "" : "s");
  for (guint i = 0; i < node->n_attrs; i++)
    append_attr (s, &node->attrs[i]);
  return g_string_free (s, FALSE);
}

/* ---- opset < 7 --------------------------------------------------------------------------------- */

static gboolean
is_legacy_broadcast_op (FbOpKind op)
{
  switch (op)
    {
    case FB_OP_ADD: case FB_OP_SUB: case FB_OP_MUL: case FB_OP_DIV: case FB_OP_POW:
    case FB_OP_AND: case FB_OP_OR: case FB_OP_XOR: case FB_OP_EQUAL: case FB_OP_GREATER:
    case FB_OP_LESS:
      return TRUE;
    default:
      return FALSE;
    }
}

static gboolean
upgrade_before_7 (FbGraph *graph, FbNode *node, gboolean *pending, GError **error)
{
  remove_attr (node, "consumed_inputs");
  if (node->op == FB_OP_DROPOUT || node->op == FB_OP_BATCH_NORMALIZATION)
    {
      int64_t is_test = fb_node_attr_int (node, "is_test", 0);
      remove_attr (node, "is_test");
      /* Training-mode outputs (the running statistics, the saved mean and variance) are not
       * computed at inference. */
      if (node->op == FB_OP_BATCH_NORMALIZATION && !is_test)
        for (guint k = 1; k < node->n_outputs; k++)
          if (node->outputs[k] != NULL)
            return unsupported (node, "training-mode outputs (is_test=0) are not supported",
                                error);
    }
  if (is_legacy_broadcast_op (node->op))
    {
      /* Without broadcast=1 both operands have one shape, which numpy broadcasting accepts. */
      if (fb_node_attr_int (node, "broadcast", 0) != 0 && fb_node_attr (node, "axis") != NULL)
        *pending = TRUE;
      else
        remove_attr (node, "axis");
      remove_attr (node, "broadcast");
    }
  switch (node->op)
    {
    case FB_OP_GEMM:
      remove_attr (node, "broadcast");
      break;
    case FB_OP_RESHAPE:
      if (node->n_inputs < 2 && !ints_attr_to_input (graph, node, "shape", 1))
        return unsupported (node, "has neither a shape input nor a shape attribute", error);
      remove_attr (node, "shape");
      break;
    case FB_OP_CONCAT:
      if (fb_node_attr (node, "axis") == NULL)
        {
          FbAttr axis = { .name = "axis", .type = FB_ATTR_INT, .i = 1 };
          fb_node_set_attr (graph, node, &axis);
        }
      break;
    case FB_OP_CAST:
      {
        const FbAttr *a = fb_node_attr (node, "to");
        const ProtobufCEnumValue *e;
        FbAttr to = { .name = "to", .type = FB_ATTR_INT };

        if (a == NULL || a->type != FB_ATTR_STRING)
          break;
        e = protobuf_c_enum_descriptor_get_value_by_name (
          &onnx__tensor_proto__data_type__descriptor, a->s);
        if (e == NULL)
          return unsupported (node, "attribute 'to' names no ONNX tensor type", error);
        to.i = e->value;
        fb_node_set_attr (graph, node, &to);
      }
      break;
    case FB_OP_PAD:
      {
        const FbAttr *a = fb_node_attr (node, "paddings");
        if (a != NULL && a->type == FB_ATTR_INTS)
          {
            FbAttr pads = { .name = "pads", .type = FB_ATTR_INTS,
                            .ints = { a->ints.n, a->ints.v } };
            fb_node_set_attr (graph, node, &pads);
            remove_attr (node, "paddings");
          }
      }
      break;
    case FB_OP_UPSAMPLE:
      if (fb_node_attr (node, "width_scale") != NULL || fb_node_attr (node, "height_scale") != NULL)
        {
          float scales[4] = { 1, 1, fb_node_attr_float (node, "height_scale", 1),
                              fb_node_attr_float (node, "width_scale", 1) };
          const char *mode = fb_node_attr_string (node, "mode", "nearest");
          FbAttr s = { .name = "scales", .type = FB_ATTR_FLOATS, .floats = { 4, scales } };
          FbAttr m = { .name = "mode", .type = FB_ATTR_STRING,
                       .s = g_str_equal (mode, "bilinear") ? "linear" : mode };
          fb_node_set_attr (graph, node, &s);
          fb_node_set_attr (graph, node, &m);
          remove_attr (node, "width_scale");
          remove_attr (node, "height_scale");
        }
      break;
    case FB_OP_TILE:
      if (node->n_inputs == 3)
        return unsupported (node, "the opset-1 form of Tile (tiles and axis inputs) is not "
                            "supported; re-export at opset 6 or later", error);
      break;
    default:
      break;
    }
  if (node->op == FB_OP_BATCH_NORMALIZATION || node->op == FB_OP_INSTANCE_NORMALIZATION)
    {
      if (fb_node_attr_int (node, "spatial", 1) != 1)
        return unsupported (node, "spatial=0 (statistics per element) is not supported", error);
      remove_attr (node, "spatial");
    }
  return TRUE;
}

/* ---- attributes that became inputs ------------------------------------------------------------ */

/* Returns the opset whose form node now has, or 0 when nothing changed. */
static int
attrs_to_inputs (FbGraph *graph, FbNode *node)
{
  int to = 0;

  switch (node->op)
    {
    case FB_OP_SLICE:
      if (node->opset < 10 && fb_node_attr (node, "starts") != NULL)
        {
          ints_attr_to_input (graph, node, "starts", 1);
          ints_attr_to_input (graph, node, "ends", 2);
          ints_attr_to_input (graph, node, "axes", 3);
          to = 10;
        }
      break;
    case FB_OP_TOPK:
      if (node->opset < 10 && fb_node_attr (node, "k") != NULL)
        {
          int64_t k = fb_node_attr_int (node, "k", 0);
          set_input (graph, node, 1, ints_constant (graph, node, "k", &k, 1, FALSE));
          remove_attr (node, "k");
          to = 10;
        }
      break;
    case FB_OP_SQUEEZE: case FB_OP_UNSQUEEZE: case FB_OP_REDUCE_SUM:
      if (node->opset < 13)
        {
          ints_attr_to_input (graph, node, "axes", 1);
          to = 13;
        }
      break;
    case FB_OP_SPLIT:
      if (node->opset < 13)
        {
          if (node->n_inputs < 2 || node->inputs[1] == NULL)
            ints_attr_to_input (graph, node, "split", 1);
          remove_attr (node, "split");
          to = 13;
        }
      break;
    default:
      break;
    }
  return to;
}

gboolean
_fb_onnx_upgrade_node (FbGraph *graph, FbNode *node, char **written, gboolean *pending,
                       GError **error)
{
  g_autofree char *before = NULL, *after = NULL;
  int form;

  g_return_val_if_fail (written != NULL && pending != NULL, FALSE);
  *written = NULL;
  *pending = FALSE;
  if (node->op == FB_OP_UNKNOWN || *node->domain != '\0')
    return TRUE;
  if (!upgraded_attrs_are_valid (node, error))
    return FALSE;
  before = written_text (node);
  if (node->opset < 7 && !upgrade_before_7 (graph, node, pending, error))
    return FALSE;
  form = attrs_to_inputs (graph, node);
  after = written_text (node);
  /* Every operator this project knows reads the same at 7 once its older attributes are gone;
   * a version number alone is no change worth telling. */
  node->opset = MAX (MAX (node->opset, 7), form);
  if (g_strcmp0 (before, after) != 0)
    *written = g_steal_pointer (&before);
  return TRUE;
}

/* ---- the legacy broadcast, once ranks are known ----------------------------------------------- */

gboolean
_fb_onnx_upgrade_broadcast (FbGraph *graph, FbNode *node, GError **error)
{
  const FbValue *a = fb_node_input (node, 0);
  FbValue *b = fb_node_input (node, 1);
  int64_t axis = fb_node_attr_int (node, "axis", 0);
  int64_t trailing;

  remove_attr (node, "axis");
  if (a == NULL || b == NULL)
    return TRUE;
  if (a->shape.rank < 0 || b->shape.rank < 0)
    return unsupported (node, "legacy broadcasting (broadcast=1 with axis) needs the ranks of "
                        "both operands, which are not known here", error);
  if (axis < 0)
    axis += a->shape.rank;
  trailing = a->shape.rank - axis - b->shape.rank;
  if (axis < 0 || trailing < 0)
    return unsupported (node, "broadcast axis does not fit the operands' ranks", error);
  if (trailing == 0)
    return TRUE;
  {
    /* B's extents sit at axis..axis+rank(B) of A: numpy aligns trailing dimensions, so B gets
     * that many trailing ones. */
    int64_t axes[FB_MAX_RANK];
    g_autofree char *name = g_strdup_printf ("%s.broadcast", node->name);
    FbNode *u = fb_graph_add_node (graph, FB_OP_UNSQUEEZE, name, 2, 1);
    FbValue *out = fb_graph_add_value (graph, name, FB_DTYPE_UNDEFINED, NULL);

    for (int64_t k = 0; k < trailing; k++)
      axes[k] = b->shape.rank + k;
    u->opset = 13;
    u->flags |= FB_NODE_INSERTED;
    u->inputs[0] = b;
    u->inputs[1] = ints_constant (graph, node, "broadcast_axes", axes, (guint) trailing, FALSE);
    fb_node_set_output (u, 0, out);
    fb_node_add_prov (graph, u, node->prov, node->n_prov);
    node->inputs[1] = out;
  }
  return TRUE;
}
