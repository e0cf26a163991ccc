/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-op.h"

#include <string.h>

static const FbOpInfo op_table[] = {
#define FB_OP(id, name, flags, min_in, max_in, min_out, max_out) \
  [FB_OP_##id] = { name, flags, min_in, max_in, min_out, max_out },
#include "ops.def"
#undef FB_OP
};

#define FB_OP(id, name, flags, min_in, max_in, min_out, max_out) + 1
enum { OPS_DEF_COUNT = 0
#include "ops.def"
};
#undef FB_OP

/* The enum, the table and the list must agree; a mismatch is a build error, not a lookup bug. */
G_STATIC_ASSERT (G_N_ELEMENTS (op_table) == FB_OP_COUNT);
G_STATIC_ASSERT ((int) OPS_DEF_COUNT == (int) FB_OP_COUNT);

static GHashTable *
lookup_table (void)
{
  static GHashTable *table;

  if (g_once_init_enter (&table))
    {
      GHashTable *t = g_hash_table_new (g_str_hash, g_str_equal);
      for (int i = 1; i < FB_OP_COUNT; i++)
        if (!(op_table[i].flags & FB_OPF_FUSED))
          g_hash_table_insert (t, (gpointer) op_table[i].name, GINT_TO_POINTER (i));
      g_once_init_leave (&table, t);
    }
  return table;
}

const FbOpInfo *
fb_op_info (FbOpKind op)
{
  g_return_val_if_fail (op >= 0 && op < FB_OP_COUNT, &op_table[FB_OP_UNKNOWN]);
  return &op_table[op];
}

const char *
fb_op_name (FbOpKind op)
{
  return fb_op_info (op)->name;
}

FbOpKind
fb_op_lookup (const char *domain, const char *op_type)
{
  g_return_val_if_fail (op_type != NULL, FB_OP_UNKNOWN);
  if (domain != NULL && *domain != '\0' && strcmp (domain, "ai.onnx") != 0)
    return FB_OP_UNKNOWN;
  return (FbOpKind) GPOINTER_TO_INT (g_hash_table_lookup (lookup_table (), op_type));
}

gboolean
fb_op_has_flag (FbOpKind op, FbOpFlags flag)
{
  return (fb_op_info (op)->flags & flag) != 0;
}
