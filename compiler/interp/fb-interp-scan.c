/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Scan: the body runs once per slice of the scan inputs, carrying its states from one iteration
 * to the next and giving one slice of every scan output, which are stacked. From opset 9 every
 * scan input and output has its own axis and direction; Scan-8 runs each batch row on its own,
 * for as many steps as sequence_lens gives it, and pads its scan outputs with zeros after. */
#include "fb-interp-private.h"
#include "fb-scan-spec.h"

#include <string.h>

/* Slice `at` of x along axis: x without that axis. */
static FbTensor *
take_slice (const FbNode *node, const FbTensor *x, int axis, int64_t at, GError **error)
{
  int64_t dims[FB_MAX_RANK], src[FB_MAX_RANK], strides[FB_MAX_RANK], dst[FB_MAX_RANK];
  gsize esize = fb_dtype_size (x->dtype);
  FbTensor *y;

  _fb_strides (x->rank, x->dims, strides);
  for (int d = 0, k = 0; d < x->rank; d++)
    if (d != axis)
      {
        dims[k] = x->dims[d];
        src[k++] = strides[d];
      }
  y = _fb_interp_new (node, x->dtype, x->rank - 1, dims, error);
  if (y == NULL)
    return NULL;
  _fb_strides (x->rank - 1, dims, dst);
  _fb_copy_strided (fb_tensor_data_mut (y), dst,
                    (const char *) fb_tensor_data (x) + at * strides[axis] * esize, src,
                    x->rank - 1, dims, esize);
  return y;
}

/* Writes part as slice `at` along axis of y (whose other dims are part's). */
static void
put_slice (FbTensor *y, int axis, int64_t at, const FbTensor *part)
{
  int64_t strides[FB_MAX_RANK], dst[FB_MAX_RANK], src[FB_MAX_RANK];
  gsize esize = fb_dtype_size (y->dtype);

  _fb_strides (y->rank, y->dims, strides);
  for (int d = 0, k = 0; d < y->rank; d++)
    if (d != axis)
      dst[k++] = strides[d];
  _fb_strides (part->rank, part->dims, src);
  _fb_copy_strided ((char *) fb_tensor_data_mut (y) + at * strides[axis] * esize, dst,
                    fb_tensor_data (part), src, part->rank, part->dims, esize);
}

/* A new tensor of part's type with part's dims and one more of extent n at axis. */
static FbTensor *
stacked (const FbNode *node, const FbTensor *part, int axis, int64_t n, GError **error)
{
  int64_t dims[FB_MAX_RANK];

  if (part->rank + 1 > FB_MAX_RANK)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "a scan output would exceed rank %d", FB_MAX_RANK), NULL;
  for (int d = 0, k = 0; d <= part->rank; d++)
    dims[d] = d == axis ? n : part->dims[k++];
  return _fb_interp_new (node, part->dtype, part->rank + 1, dims, error);
}

/* What an iteration that never ran would have given: the body's declared output, when static. */
static FbTensor *
empty_part (const FbNode *node, const FbValue *body_out, GError **error)
{
  int64_t dims[FB_MAX_RANK];

  if (!fb_shape_is_static (&body_out->shape) || body_out->dtype == FB_DTYPE_UNDEFINED)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "no iteration ran and the body does not declare the shape of '%s'",
                            body_out->name), NULL;
  memcpy (dims, body_out->shape.dim, sizeof (int64_t) * body_out->shape.rank);
  return _fb_interp_new (node, body_out->dtype, body_out->shape.rank, dims, error);
}

static gboolean
same_layout (const FbTensor *a, const FbTensor *b)
{
  return a->dtype == b->dtype && a->rank == b->rank &&
         memcmp (a->dims, b->dims, sizeof (int64_t) * a->rank) == 0;
}

/* Runs the iterations t in [0, steps) over one set of scan inputs (already without their batch
 * axis for Scan-8): states are updated in place and parts[j] receives scan output j's slice of
 * every iteration. */
static gboolean
iterate (FbInterpCtx *ctx, const FbNode *node, const FbScanSpec *spec, const int *axes,
         GPtrArray *states, FbTensor *const *scan_in, int64_t steps, GPtrArray **parts,
         GError **error)
{
  FbGraph *body = fb_node_attr_graph (node, "body");
  guint n = spec->n_state + spec->n_in;

  for (int64_t t = 0; t < steps; t++)
    {
      g_autoptr(GPtrArray) slices = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
      g_autofree FbTensor **body_in = g_new0 (FbTensor *, MAX (n, 1));
      g_autoptr(GPtrArray) results = NULL;

      for (guint k = 0; k < spec->n_state; k++)
        body_in[k] = g_ptr_array_index (states, k);
      for (guint j = 0; j < spec->n_in; j++)
        {
          int64_t at = spec->in_reverse[j] ? steps - 1 - t : t;
          FbTensor *s = take_slice (node, scan_in[j], axes[j], at, error);
          if (s == NULL)
            return FALSE;
          g_ptr_array_add (slices, s);
          body_in[spec->n_state + j] = s;
        }
      results = _fb_interp_run_body (ctx, body, body_in, n, node, error);
      if (results == NULL)
        return FALSE;
      if (results->len != spec->n_state + spec->n_out)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "its body gave %u outputs, not %u", results->len,
                                spec->n_state + spec->n_out);
      for (guint k = 0; k < spec->n_state; k++)
        {
          fb_tensor_unref (states->pdata[k]);
          states->pdata[k] = fb_tensor_ref (g_ptr_array_index (results, k));
        }
      for (guint j = 0; j < spec->n_out; j++)
        {
          FbTensor *p = g_ptr_array_index (results, spec->n_state + j);
          if (parts[j]->len > 0 && !same_layout (p, g_ptr_array_index (parts[j], 0)))
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                    "scan output %u changes shape or type between iterations", j);
          g_ptr_array_add (parts[j], fb_tensor_ref (p));
        }
      if (!_fb_interp_check_cancelled (ctx, error))
        return FALSE;
    }
  return TRUE;
}

static GPtrArray **
new_parts (guint n)
{
  GPtrArray **parts = g_new0 (GPtrArray *, MAX (n, 1));
  for (guint j = 0; j < n; j++)
    parts[j] = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  return parts;
}

static void
free_parts (GPtrArray **parts, guint n)
{
  for (guint j = 0; j < n; j++)
    g_ptr_array_unref (parts[j]);
  g_free (parts);
}

/* Opset 9 on: one run over the whole scan inputs. */
static gboolean
scan_plain (FbInterpCtx *ctx, const FbNode *node, const FbScanSpec *spec, FbTensor *const *in,
            FbTensor **out, GError **error)
{
  FbGraph *body = fb_node_attr_graph (node, "body");
  g_autoptr(GPtrArray) states = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_autofree int *axes = g_new (int, MAX (spec->n_in, 1));
  GPtrArray **parts = new_parts (spec->n_out);
  int64_t steps = -1;
  gboolean ok = FALSE;

  for (guint k = 0; k < spec->n_state; k++)
    g_ptr_array_add (states, fb_tensor_ref (in[k]));
  for (guint j = 0; j < spec->n_in; j++)
    {
      const FbTensor *x = in[spec->n_state + j];
      if (!fb_axis_normalize (spec->in_axis[j], x->rank, &axes[j]))
        {
          _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "scan input %u of rank %d has no "
                           "axis %" G_GINT64_FORMAT, j, x->rank, spec->in_axis[j]);
          goto done;
        }
      if (steps >= 0 && x->dims[axes[j]] != steps)
        {
          _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "the scan inputs disagree on the "
                           "sequence length: %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT, steps,
                           x->dims[axes[j]]);
          goto done;
        }
      steps = x->dims[axes[j]];
    }
  if (!iterate (ctx, node, spec, axes, states, in + spec->n_state, steps, parts, error))
    goto done;
  for (guint k = 0; k < spec->n_state && k < node->n_outputs; k++)
    out[k] = fb_tensor_ref (g_ptr_array_index (states, k));
  for (guint j = 0; j < spec->n_out && spec->n_state + j < node->n_outputs; j++)
    {
      g_autoptr(FbTensor) first = steps > 0 ? fb_tensor_ref (g_ptr_array_index (parts[j], 0))
                                            : empty_part (node, g_ptr_array_index (body->outputs,
                                                                                   spec->n_state + j),
                                                          error);
      int a;
      if (first == NULL)
        goto done;
      if (!fb_axis_normalize (spec->out_axis[j], first->rank + 1, &a))
        {
          _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "scan_output_axes[%u] = %"
                           G_GINT64_FORMAT " is out of range for rank %d", j, spec->out_axis[j],
                           first->rank + 1);
          goto done;
        }
      FbTensor *y = stacked (node, first, a, steps, error);
      if (y == NULL)
        goto done;
      out[spec->n_state + j] = y;
      for (int64_t t = 0; t < steps; t++)
        put_slice (y, a, spec->out_reverse[j] ? steps - 1 - t : t, g_ptr_array_index (parts[j], t));
    }
  ok = TRUE;
done:
  free_parts (parts, spec->n_out);
  return ok;
}

/* Scan-8: every batch row scanned on its own; outputs are [batch, ...] (states) and
 * [batch, sequence, ...] (scan outputs, zeros past a row's sequence length). */
static gboolean
scan_batched (FbInterpCtx *ctx, const FbNode *node, const FbScanSpec *spec, FbTensor *const *in,
              FbTensor **out, GError **error)
{
  FbGraph *body = fb_node_attr_graph (node, "body");
  FbTensor *const *states_in = in + 1, *const *scan_in = in + 1 + spec->n_state;
  g_autofree int64_t *lens = NULL;
  g_autofree int *axes = g_new0 (int, MAX (spec->n_in, 1));
  int64_t batch, steps;
  guint n_lens = 0;

  /* Every input's axis 0 is the batch; the scan inputs' axis 1 the sequence. */
  batch = spec->n_state > 0 ? (states_in[0]->rank > 0 ? states_in[0]->dims[0] : -1)
                            : (scan_in[0]->rank > 0 ? scan_in[0]->dims[0] : -1);
  steps = scan_in[0]->rank > 1 ? scan_in[0]->dims[1] : -1;
  for (guint k = 0; k < spec->n_state + spec->n_in; k++)
    {
      const FbTensor *x = in[1 + k];
      gboolean scanned = k >= spec->n_state;
      if (x->rank < (scanned ? 2 : 1) || x->dims[0] != batch || (scanned && x->dims[1] != steps))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "input %u does not have the batch (%" G_GINT64_FORMAT ") and "
                                "sequence (%" G_GINT64_FORMAT ") extents of the others", 1 + k,
                                batch, steps);
    }
  if (in[0] != NULL)
    {
      if (!_fb_interp_int_list (node, in[0], "sequence_lens", &lens, &n_lens, error))
        return FALSE;
      if (n_lens != (guint) batch)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "sequence_lens has %u entries for a batch of %" G_GINT64_FORMAT,
                                n_lens, batch);
      for (guint b = 0; b < n_lens; b++)
        if (lens[b] < 0 || lens[b] > steps)
          return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "sequence_lens[%u] = %" G_GINT64_FORMAT " is outside [0, %"
                                  G_GINT64_FORMAT "]", b, lens[b], steps);
    }
  if (batch == 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "an empty batch gives outputs "
                            "of no known shape");

  for (int64_t b = 0; b < batch; b++)
    {
      g_autoptr(GPtrArray) states = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
      g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
      int64_t len = lens ? lens[b] : steps;
      GPtrArray **parts = new_parts (spec->n_out);
      gboolean ok = TRUE;

      for (guint k = 0; ok && k < spec->n_state; k++)
        {
          FbTensor *s = take_slice (node, states_in[k], 0, b, error);
          ok = s != NULL;
          if (ok)
            g_ptr_array_add (states, s);
        }
      /* A row's axis 0 is its sequence, of which the first `len` slices are scanned. */
      for (guint j = 0; ok && j < spec->n_in; j++)
        {
          FbTensor *row = take_slice (node, scan_in[j], 0, b, error);
          ok = row != NULL;
          if (ok)
            g_ptr_array_add (rows, row);
        }
      ok = ok && iterate (ctx, node, spec, axes, states, (FbTensor *const *) rows->pdata, len, parts,
                          error);
      for (guint k = 0; ok && k < spec->n_state && k < node->n_outputs; k++)
        {
          FbTensor *s = g_ptr_array_index (states, k);
          if (out[k] == NULL)
            ok = (out[k] = stacked (node, s, 0, batch, error)) != NULL;
          if (ok && !(out[k]->rank == s->rank + 1 && out[k]->dtype == s->dtype &&
                      memcmp (out[k]->dims + 1, s->dims, sizeof (int64_t) * s->rank) == 0))
            ok = _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "state %u changes shape between batch rows", k);
          if (ok)
            put_slice (out[k], 0, b, s);
        }
      for (guint j = 0; ok && j < spec->n_out && spec->n_state + j < node->n_outputs; j++)
        {
          FbTensor **y = &out[spec->n_state + j];
          g_autoptr(FbTensor) first = len > 0 ? fb_tensor_ref (g_ptr_array_index (parts[j], 0))
                                              : empty_part (node, g_ptr_array_index (body->outputs,
                                                                                     spec->n_state + j),
                                                            error);
          ok = first != NULL;
          if (ok && *y == NULL)
            {
              g_autoptr(FbTensor) row = stacked (node, first, 0, steps, error);
              ok = row != NULL && (*y = stacked (node, row, 0, batch, error)) != NULL;
            }
          if (ok && !((*y)->rank == first->rank + 2 && (*y)->dtype == first->dtype &&
                      memcmp ((*y)->dims + 2, first->dims, sizeof (int64_t) * first->rank) == 0))
            ok = _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "scan output %u changes shape between batch rows", j);
          for (int64_t t = 0; ok && t < len; t++)
            {
              /* Row b, step t: a slice of the [batch, sequence, ...] output. */
              gsize chunk = fb_tensor_nbytes (first);
              memcpy ((char *) fb_tensor_data_mut (*y) + ((gsize) b * steps + t) * chunk,
                      fb_tensor_data (g_ptr_array_index (parts[j], t)), chunk);
            }
        }
      free_parts (parts, spec->n_out);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

gboolean
_fb_interp_scan (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                 GError **error)
{
  g_auto(FbScanSpec) spec = { 0 };
  g_autoptr(GError) local = NULL;

  if (!fb_scan_spec_read (node, &spec, &local))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "%s", local->message);
  for (guint i = spec.first; i < node->n_inputs; i++)
    if (in[i] == NULL)
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "input %u is missing", i);
  return spec.batched ? scan_batched (ctx, node, &spec, in, out, error)
                      : scan_plain (ctx, node, &spec, in + spec.first, out, error);
}
