/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Sequences and optionals as run-time values. They are FbTensor structs of another kind so that
 * every place that only holds or passes values (the interpreter's environments, the host steps'
 * dynamic buffers, run results) carries them without a second value type; their items are
 * immutable once made, so operators share items by reference instead of copying them. */
#include "fb-tensor.h"

static FbTensor *
container_new (FbValueKind kind, FbDType dtype)
{
  FbTensor *t = g_new0 (FbTensor, 1);

  g_atomic_ref_count_init (&t->ref_count);
  t->kind = kind;
  t->dtype = dtype;
  t->bytes = g_bytes_new (NULL, 0);
  t->items = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  return t;
}

FbTensor *
fb_tensor_new_sequence (FbDType dtype, GPtrArray *items)
{
  FbTensor *t = container_new (FB_KIND_SEQUENCE, dtype);

  for (guint i = 0; items != NULL && i < items->len; i++)
    g_ptr_array_add (t->items, fb_tensor_ref (g_ptr_array_index (items, i)));
  return t;
}

FbTensor *
fb_tensor_new_optional (FbValueKind kind, FbDType dtype, FbTensor *item)
{
  FbTensor *t;

  g_return_val_if_fail (kind == FB_KIND_OPTIONAL || kind == FB_KIND_OPTIONAL_SEQUENCE, NULL);
  g_return_val_if_fail (item == NULL ||
                        item->kind == (kind == FB_KIND_OPTIONAL ? FB_KIND_TENSOR
                                                                : FB_KIND_SEQUENCE), NULL);
  t = container_new (kind, dtype);
  if (item != NULL)
    g_ptr_array_add (t->items, fb_tensor_ref (item));
  return t;
}

gboolean
fb_tensor_is_dense (const FbTensor *tensor)
{
  g_return_val_if_fail (tensor != NULL, FALSE);
  return tensor->kind == FB_KIND_TENSOR;
}

guint
fb_tensor_n_items (const FbTensor *tensor)
{
  g_return_val_if_fail (tensor != NULL, 0);
  return tensor->items != NULL ? tensor->items->len : 0;
}

FbTensor *
fb_tensor_item (const FbTensor *tensor, guint i)
{
  g_return_val_if_fail (tensor != NULL && i < fb_tensor_n_items (tensor), NULL);
  return g_ptr_array_index (tensor->items, i);
}

char *
fb_tensor_describe (const FbTensor *tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  switch (tensor->kind)
    {
    case FB_KIND_SEQUENCE:
      return g_strdup_printf ("a sequence of %u %s tensor%s", tensor->items->len,
                              fb_dtype_name (tensor->dtype), tensor->items->len == 1 ? "" : "s");
    case FB_KIND_OPTIONAL:
    case FB_KIND_OPTIONAL_SEQUENCE:
      return g_strdup (tensor->items->len == 0 ? "an empty optional"
                       : tensor->kind == FB_KIND_OPTIONAL ? "an optional holding a tensor"
                                                          : "an optional holding a sequence");
    default:
      {
        FbShape s = fb_tensor_shape (tensor);
        g_autofree char *text = fb_shape_to_string (&s);
        return g_strdup_printf ("a %s tensor [%s]", fb_dtype_name (tensor->dtype), text);
      }
    }
}
