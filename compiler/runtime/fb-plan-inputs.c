/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The inputs of a run checked against the plan (fb-plan-inputs.h), for every target. */
#include "fb-plan-inputs.h"
#include "fb-backend.h"

gboolean
fb_plan_check_inputs (const FbPlan *plan, GPtrArray *inputs, GError **error)
{
  if (inputs->len != plan->inputs->len)
    {
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_INPUT,
                   "the model takes %u inputs, %u were given", plan->inputs->len, inputs->len);
      return FALSE;
    }
  for (guint i = 0; i < inputs->len; i++)
    {
      const FbBuffer *buf = fb_plan_buffer (plan, g_array_index (plan->inputs, guint, i));
      const FbTensor *t = g_ptr_array_index (inputs, i);
      if (buf->kind == FB_BUF_CONST)
        continue;
      /* Only sequences and optionals are fed into buffers sized at run time. */
      if (buf->dynamic)
        {
          g_autofree char *got = t ? fb_tensor_describe (t) : g_strdup ("nothing");
          if (t == NULL || t->kind == FB_KIND_TENSOR)
            {
              g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_INPUT,
                           "input %u '%s' takes a sequence or an optional, got %s", i,
                           buf->name, got);
              return FALSE;
            }
          if (buf->dtype != FB_DTYPE_UNDEFINED && t->dtype != FB_DTYPE_UNDEFINED &&
              t->dtype != buf->dtype)
            {
              g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_INPUT,
                           "input %u '%s' takes %s elements, got %s", i, buf->name,
                           fb_dtype_name (buf->dtype), got);
              return FALSE;
            }
          continue;
        }
      gboolean fits = t != NULL && t->kind == FB_KIND_TENSOR && t->dtype == buf->dtype &&
                      t->rank == buf->rank;
      for (int d = 0; fits && d < t->rank; d++)
        fits = t->dims[d] == buf->dims[d];
      if (fits)
        continue;
      g_autofree char *got = NULL;
      if (t)
        {
          FbShape s = fb_tensor_shape (t);
          g_autofree char *ss = fb_shape_to_string (&s);
          got = g_strdup_printf ("%s %s", fb_dtype_name (t->dtype), ss);
        }
      FbShape want = fb_shape_make (buf->rank, buf->dims);
      g_autofree char *ws = fb_shape_to_string (&want);
      g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_INPUT,
                   "input %u '%s' was compiled for %s %s, got %s", i, buf->name,
                   fb_dtype_name (buf->dtype), ws, got ? got : "nothing");
      return FALSE;
    }
  return TRUE;
}
