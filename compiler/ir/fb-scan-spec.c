/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-scan-spec.h"
#include "fb-spec-support.h"

#include <string.h>

/* Every error of these rules is about the node's shape or attributes. */
#define fail(error, ...) fb_spec_fail (error, FB_GRAPH_ERROR_SHAPE, __VA_ARGS__)

/* An INTS attribute of n entries, or n copies of fallback when absent. */
static gboolean
ints_or (const FbNode *node, const char *name, guint n, int64_t fallback, int64_t *out,
         GError **error)
{
  const FbAttr *a = fb_node_attr (node, name);

  if (a == NULL)
    {
      for (guint i = 0; i < n; i++)
        out[i] = fallback;
      return TRUE;
    }
  if (a->type != FB_ATTR_INTS || a->ints.n != n)
    return fail (error, "attribute '%s' must list %u integers", name, n);
  memcpy (out, a->ints.v, sizeof (int64_t) * n);
  return TRUE;
}

static gboolean
directions (const FbNode *node, const char *name, guint n, gboolean *out, GError **error)
{
  g_autofree int64_t *v = g_new (int64_t, MAX (n, 1));

  if (!ints_or (node, name, n, 0, v, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      if (v[i] != 0 && v[i] != 1)
        return fail (error, "%s[%u] is %" G_GINT64_FORMAT ", not 0 (forward) or 1 (reverse)",
                     name, i, v[i]);
      out[i] = v[i] == 1;
    }
  return TRUE;
}

gboolean
fb_scan_spec_read (const FbNode *node, FbScanSpec *spec, GError **error)
{
  FbGraph *body;
  const FbAttr *m;
  int opset;

  g_return_val_if_fail (node != NULL && spec != NULL, FALSE);
  memset (spec, 0, sizeof *spec);
  opset = node->opset > 0 ? node->opset : FB_SPEC_LATEST_OPSET;
  spec->batched = opset < 9;
  spec->first = spec->batched ? 1 : 0;
  body = fb_node_attr_graph (node, "body");
  m = fb_node_attr (node, "num_scan_inputs");
  if (body == NULL)
    return fail (error, "the graph attribute 'body' is missing");
  if (m == NULL || m->type != FB_ATTR_INT)
    return fail (error, "the integer attribute 'num_scan_inputs' is missing");
  if (m->i < 1 || m->i > (int64_t) node->n_inputs - spec->first)
    return fail (error, "num_scan_inputs %" G_GINT64_FORMAT " is not between 1 and the %u inputs "
                 "after the states' start", m->i, node->n_inputs - spec->first);
  spec->n_in = (guint) m->i;
  spec->n_state = node->n_inputs - spec->first - spec->n_in;
  if (body->inputs->len != spec->n_state + spec->n_in)
    return fail (error, "the body takes %u inputs for %u states and %u scan inputs",
                 body->inputs->len, spec->n_state, spec->n_in);
  if (body->outputs->len < spec->n_state)
    return fail (error, "the body gives %u outputs for %u states", body->outputs->len,
                 spec->n_state);
  spec->n_out = body->outputs->len - spec->n_state;
  if (node->n_outputs > spec->n_state + spec->n_out)
    return fail (error, "the node has %u outputs but its body gives %u", node->n_outputs,
                 spec->n_state + spec->n_out);

  spec->in_axis = g_new (int64_t, MAX (spec->n_in, 1));
  spec->in_reverse = g_new0 (gboolean, MAX (spec->n_in, 1));
  spec->out_axis = g_new (int64_t, MAX (spec->n_out, 1));
  spec->out_reverse = g_new0 (gboolean, MAX (spec->n_out, 1));
  if (spec->batched)
    {
      static const char *later[] = { "scan_input_axes", "scan_input_directions",
                                     "scan_output_axes", "scan_output_directions" };
      for (guint i = 0; i < G_N_ELEMENTS (later); i++)
        if (fb_node_attr (node, later[i]) != NULL)
          return fail (error, "attribute '%s' exists only from opset 9", later[i]);
      for (guint i = 0; i < spec->n_in; i++)
        spec->in_axis[i] = 1;
      for (guint i = 0; i < spec->n_out; i++)
        spec->out_axis[i] = 1;
      return directions (node, "directions", spec->n_in, spec->in_reverse, error);
    }
  if (fb_node_attr (node, "directions") != NULL)
    return fail (error, "attribute 'directions' is Scan-8's; from opset 9 it is "
                 "'scan_input_directions'");
  return ints_or (node, "scan_input_axes", spec->n_in, 0, spec->in_axis, error) &&
         directions (node, "scan_input_directions", spec->n_in, spec->in_reverse, error) &&
         ints_or (node, "scan_output_axes", spec->n_out, 0, spec->out_axis, error) &&
         directions (node, "scan_output_directions", spec->n_out, spec->out_reverse, error);
}

void
fb_scan_spec_clear (FbScanSpec *spec)
{
  g_return_if_fail (spec != NULL);
  g_clear_pointer (&spec->in_axis, g_free);
  g_clear_pointer (&spec->in_reverse, g_free);
  g_clear_pointer (&spec->out_axis, g_free);
  g_clear_pointer (&spec->out_reverse, g_free);
}
