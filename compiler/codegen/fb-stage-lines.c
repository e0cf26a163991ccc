/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reads back the debug locations code generation gave every instruction (fb-codegen-lines.c):
 * which kernel IR line each line of LLVM IR, x86-64 assembly or PTX came from. The locations
 * are LLVM's own, printed by LLVM: !dbg attachments naming DILocation and DISubprogram records
 * in the IR, .loc directives in assembly and PTX. Nothing is guessed from names. */
#include "fb-codegen-private.h"

#include <stdlib.h>
#include <string.h>

static guint
count_lines (const char *text)
{
  guint n = 1;
  for (const char *p = text; *p; p++)
    n += *p == '\n';
  return n;
}

/* The number after key in line (up to its end): FALSE when key is not there. */
static gboolean
number_after (const char *line, const char *end, const char *key, guint *value)
{
  gsize klen = strlen (key);
  for (const char *p = line; p + klen <= end; p++)
    if (memcmp (p, key, klen) == 0)
      {
        *value = (guint) strtoul (p + klen, NULL, 10);
        return TRUE;
      }
  return FALSE;
}

/* "!N = [distinct ]!DILocation(line: L" or "!DISubprogram(... line: L": N's line in *line. */
static gboolean
metadata_line (const char *line, const char *end, guint *id, guint *kir_line)
{
  if (line[0] != '!' || !g_ascii_isdigit (line[1]))
    return FALSE;
  char *rest = NULL;
  *id = (guint) strtoul (line + 1, &rest, 10);
  if (rest == NULL || !g_str_has_prefix (rest, " = "))
    return FALSE;
  rest += 3;
  if (g_str_has_prefix (rest, "distinct "))
    rest += 9;
  if (!g_str_has_prefix (rest, "!DILocation(") && !g_str_has_prefix (rest, "!DISubprogram("))
    return FALSE;
  *kir_line = 0;
  number_after (rest, end, "line: ", kir_line);
  return TRUE;
}

GArray *
fb_stage_lines_llvm_ir (const char *text)
{
  g_return_val_if_fail (text != NULL, NULL);
  guint n = count_lines (text);
  GArray *map = g_array_sized_new (FALSE, TRUE, sizeof (guint), n);
  g_array_set_size (map, n);
  g_autoptr(GHashTable) line_of = g_hash_table_new (NULL, NULL);   /* metadata id -> line */

  /* The records come after the code that names them: two passes. */
  for (int pass = 0; pass < 2; pass++)
    {
      const char *line = text;
      for (guint i = 0; i < n; i++)
        {
          const char *end = strchr (line, '\n');
          if (end == NULL)
            end = line + strlen (line);
          guint id, kir;
          if (pass == 0 && metadata_line (line, end, &id, &kir))
            g_hash_table_insert (line_of, GUINT_TO_POINTER (id), GUINT_TO_POINTER (kir));
          else if (pass == 1)
            {
              guint ref;
              if (number_after (line, end, "!dbg !", &ref))
                g_array_index (map, guint, i) =
                  GPOINTER_TO_UINT (g_hash_table_lookup (line_of, GUINT_TO_POINTER (ref)));
            }
          line = *end ? end + 1 : end;
        }
    }
  return map;
}

/* Whether a line of assembly ends a function (x86-64's .Lfunc_end label, PTX's closing brace)
 * or starts one: no location carries over it. */
static gboolean
function_edge (const char *line)
{
  const char *p = line;
  if (*p == '}' || g_str_has_prefix (p, ".visible") || g_str_has_prefix (p, ".entry") ||
      g_str_has_prefix (p, ".func"))
    return TRUE;
  while (*p == ' ' || *p == '\t')
    p++;
  return g_str_has_prefix (p, ".Lfunc_end") || g_str_has_prefix (p, "$L__func_end") ||
         g_str_has_prefix (p, ".Lfunc_begin") || g_str_has_prefix (p, "$L__func_begin");
}

GArray *
fb_stage_lines_assembly (const char *text)
{
  g_return_val_if_fail (text != NULL, NULL);
  guint n = count_lines (text);
  GArray *map = g_array_sized_new (FALSE, TRUE, sizeof (guint), n);
  g_array_set_size (map, n);
  const char *line = text;
  guint current = 0;

  for (guint i = 0; i < n; i++)
    {
      const char *end = strchr (line, '\n');
      const char *p = line;
      if (end == NULL)
        end = line + strlen (line);
      while (p < end && (*p == ' ' || *p == '\t'))
        p++;
      if (function_edge (line))
        current = 0;
      else if (end - p > 5 && memcmp (p, ".loc", 4) == 0 && (p[4] == ' ' || p[4] == '\t'))
        {
          /* .loc FILE LINE [COLUMN] [options]: one file, the kernel's IR. */
          char *rest = NULL;
          strtoul (p + 5, &rest, 10);
          current = rest != NULL ? (guint) strtoul (rest, NULL, 10) : 0;
        }
      g_array_index (map, guint, i) = current;
      line = *end ? end + 1 : end;
    }
  return map;
}

void
_fb_kernel_stages_map (FbKernelStages *st, const FbKernelLines *lines)
{
  g_return_if_fail (st != NULL && lines != NULL);
  guint n = fb_kernel_lines_count (lines) + 1;
  st->kir_phase = g_array_sized_new (FALSE, TRUE, sizeof (guint), n);
  g_array_set_size (st->kir_phase, n);
  for (guint i = 0; i < n; i++)
    g_array_index (st->kir_phase, guint, i) = fb_kernel_lines_phase_at (lines, i + 1) + 1;
  if (st->llvm_ir != NULL)
    st->llvm_ir_lines = fb_stage_lines_llvm_ir (st->llvm_ir);
  if (st->llvm_ir_opt != NULL)
    st->llvm_ir_opt_lines = fb_stage_lines_llvm_ir (st->llvm_ir_opt);
  if (st->assembly != NULL)
    st->assembly_lines = fb_stage_lines_assembly (st->assembly);
}
