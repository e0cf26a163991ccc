/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CUDA toolkit's own tools, where this machine has them: ptxas checks and assembles the
 * PTX (and reports registers and spills), cuobjdump or nvdisasm show the SASS the GPU runs.
 * Nothing needs them: code generation is LLVM's, and the driver compiles PTX itself. And the
 * lowering stages of a kernel for the CUDA target. */
#include "fb-codegen-ptx-private.h"

#include <glib/gstdio.h>
#include <string.h>

gboolean
fb_ptx_log_spills (const char *log)
{
  static const char needle[] = " bytes spill stores";
  for (const char *at = log ? strstr (log, needle) : NULL; at; at = strstr (at + 1, needle))
    {
      const char *digits = at;
      while (digits > log && g_ascii_isdigit (digits[-1]))
        digits--;
      if (digits < at && g_ascii_strtoull (digits, NULL, 10) > 0)
        return TRUE;
    }
  return FALSE;
}

char *
fb_ptx_without_register_budget (const char *ptx)
{
  g_return_val_if_fail (ptx != NULL, NULL);
  GString *out = g_string_sized_new (strlen (ptx));
  for (const char *line = ptx; *line; )
    {
      const char *end = strchr (line, '\n');
      gsize len = end ? (gsize) (end - line + 1) : strlen (line);
      const char *text = line;
      while (text < line + len && (*text == ' ' || *text == '\t'))
        text++;
      if (!g_str_has_prefix (text, ".maxnreg"))
        g_string_append_len (out, line, len);
      line += len;
    }
  return g_string_free (out, FALSE);
}

char *
fb_ptx_find_tool (const char *name)
{
  g_return_val_if_fail (name != NULL, NULL);
  char *path = g_find_program_in_path (name);
  if (path)
    return path;
  const char *roots[] = { g_getenv ("CUDA_PATH"), g_getenv ("CUDA_HOME"), "/usr/local/cuda" };
  for (guint i = 0; i < G_N_ELEMENTS (roots); i++)
    {
      if (roots[i] == NULL || *roots[i] == '\0')
        continue;
      path = g_build_filename (roots[i], "bin", name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_EXECUTABLE))
        return path;
      g_clear_pointer (&path, g_free);
    }
  return NULL;
}

/* A temporary file holding data (when given); its name, or NULL with error. */
static char *
temp_file (const char *pattern, const char *data, gsize len, GError **error)
{
  char *name = NULL;
  int fd = g_file_open_tmp (pattern, &name, error);
  if (fd < 0)
    return NULL;
  g_close (fd, NULL);
  if (data && !g_file_set_contents (name, data, len, error))
    {
      g_unlink (name);
      g_free (name);
      return NULL;
    }
  return name;
}

static gboolean
run (const char *const *argv, char **out, GError **error)
{
  g_autofree char *std_out = NULL, *std_err = NULL;
  int status = 0;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &std_out, &std_err,
                     &status, error))
    return FALSE;
  g_autoptr(GError) failed = NULL;
  if (!g_spawn_check_wait_status (status, &failed))
    {
      g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_TOOL, "%s failed: %s%s%s",
                   argv[0], failed->message, std_err && *std_err ? "\n" : "",
                   std_err ? g_strstrip (std_err) : "");
      return FALSE;
    }
  if (out)
    *out = g_strconcat (std_out ? std_out : "", std_err ? std_err : "", NULL);
  return TRUE;
}

gboolean
fb_ptx_assemble (const char *ptx, GBytes **cubin, char **info, GError **error)
{
  g_return_val_if_fail (ptx != NULL, FALSE);
  g_autofree char *ptxas = fb_ptx_find_tool ("ptxas");
  if (ptxas == NULL)
    {
      g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_TOOL,
                   "ptxas (the CUDA toolkit's PTX assembler) is not on this machine");
      return FALSE;
    }
  g_autofree char *in = temp_file ("fusebench-XXXXXX.ptx", ptx, strlen (ptx), error);
  if (in == NULL)
    return FALSE;
  g_autofree char *out = temp_file ("fusebench-XXXXXX.cubin", NULL, 0, error);
  if (out == NULL)
    {
      g_unlink (in);
      return FALSE;
    }
  const char *argv[] = { ptxas, "-arch=sm_90", info ? "-v" : "-O3", "-o", out, in, NULL };
  gboolean ok = run (argv, info, error);
  if (ok && cubin)
    {
      char *data = NULL;
      gsize len = 0;
      ok = g_file_get_contents (out, &data, &len, error);
      if (ok)
        *cubin = g_bytes_new_take (data, len);
    }
  g_unlink (in);
  g_unlink (out);
  return ok;
}

/* The SASS of ptx: what `ptxas -arch=sm_90` makes of it, disassembled; where a tool is
 * missing or fails, a comment that says which and why. */
static char *
sass_of (const char *ptx)
{
  g_autofree char *ptxas = fb_ptx_find_tool ("ptxas");
  g_autofree char *cuobjdump = fb_ptx_find_tool ("cuobjdump");
  g_autofree char *nvdisasm = cuobjdump ? NULL : fb_ptx_find_tool ("nvdisasm");
  if (cuobjdump == NULL && nvdisasm == NULL)
    return g_strdup_printf ("// no SASS: neither cuobjdump nor nvdisasm (the CUDA toolkit's "
                            "disassemblers) is on PATH or under $CUDA_HOME/bin%s\n"
                            "// with one of them installed, this page shows the SASS that "
                            "ptxas -arch=sm_90 makes of the PTX\n",
                            ptxas != NULL ? "" : "; ptxas, which assembles the PTX, is missing too");
  if (ptxas == NULL)
    return g_strdup ("// no SASS: ptxas (the CUDA toolkit's PTX assembler) is not on PATH or "
                     "under $CUDA_HOME/bin, so there is no cubin to disassemble\n");
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) cubin = NULL;
  if (!fb_ptx_assemble (ptx, &cubin, NULL, &error))
    return g_strdup_printf ("// no SASS: %s\n", error->message);
  gsize len;
  const char *data = g_bytes_get_data (cubin, &len);
  g_autofree char *file = temp_file ("fusebench-XXXXXX.cubin", data, len, &error);
  if (file == NULL)
    return g_strdup_printf ("// no SASS: %s\n", error->message);
  char *text = NULL;
  const char *dump[] = { cuobjdump, "-sass", file, NULL };
  const char *disasm[] = { nvdisasm, file, NULL };
  if (!run (cuobjdump ? dump : disasm, &text, &error))
    text = g_strdup_printf ("// no SASS: %s\n", error->message);
  g_unlink (file);
  return text;
}

FbKernelStages *
fb_codegen_ptx_stages (const FbKernel *kernel, const FbPlan *plan, GError **error)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  g_autoptr(FbKernelStages) st = g_new0 (FbKernelStages, 1);
  g_autoptr(FbKernelLines) kir_lines = NULL;
  st->kernel_ir = fb_kernel_to_string_lines (kernel, plan, &kir_lines);
  g_autoptr(FbPtxModule) m = _fb_codegen_ptx_lines (kernel, plan, kir_lines, error);
  if (m == NULL)
    return NULL;
  g_autoptr(GString) note = g_string_new (NULL);
  if (kernel->phases->len == 0)
    g_string_append (note, kernel->kind == FB_KERNEL_VIEW
                             ? "no code: a view of its input's bytes\n"
                             : "no code: run on the host by the reference interpreter\n");
  for (guint p = 0; p < m->phases->len; p++)
    {
      const FbPtxPhase *ph = &g_array_index (m->phases, FbPtxPhase, p);
      const FbKPhase *kp = g_ptr_array_index (kernel->phases, p);
      if (ph->library)
        g_string_append_printf (note, "phase %u calls a library (%s), run by the CUDA runtime%s%s%s%s\n",
                                p, kp->conv ? "a convolution, cuDNN" : "matrix products, cuBLASLt",
                                ph->before.entry ? "; before the calls: .entry " : "",
                                ph->before.entry ? ph->before.entry : "",
                                ph->after.entry ? "; after them: .entry " : "",
                                ph->after.entry ? ph->after.entry : "");
      else
        g_string_append_printf (note, "phase %u: .entry %s, %u threads a block, %s\n", p, ph->entry,
                                ph->block_threads,
                                !ph->cooperative ? "grid-stride over the loop nest"
                                : ph->row_threads < ph->block_threads ? "a warp per row (shuffles)"
                                : "a block per row (shuffles and shared memory)");
    }
  g_autofree char *ir_note = NULL, *ptx_note = NULL;
  {
    g_auto(GStrv) lines = g_strsplit (note->str, "\n", -1);
    g_autoptr(GString) a = g_string_new (NULL), b = g_string_new (NULL);
    for (guint i = 0; lines[i] && *lines[i]; i++)
      {
        g_string_append_printf (a, "; %s\n", lines[i]);
        g_string_append_printf (b, "// %s\n", lines[i]);
      }
    ir_note = g_string_free (g_steal_pointer (&a), FALSE);
    ptx_note = g_string_free (g_steal_pointer (&b), FALSE);
  }
  st->llvm_ir = g_strconcat (ir_note, m->llvm_ir ? m->llvm_ir : "", NULL);
  st->llvm_ir_opt = g_strconcat (ir_note, m->llvm_ir_opt ? m->llvm_ir_opt : "", NULL);
  st->assembly = g_strconcat (ptx_note, m->ptx ? m->ptx : "", NULL);
  st->sass = m->ptx != NULL ? sass_of (m->ptx) : g_strdup (ptx_note);
  _fb_kernel_stages_map (st, kir_lines);
  return g_steal_pointer (&st);
}
