/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Debug locations that point into the kernel IR. While the lowering stages of a kernel are made
 * for the code view, every instruction gets the line of the kernel IR statement it was built
 * from, in a "file" named after the kernel (NAME.kir). LLVM carries these through optimization
 * and prints them as !dbg in the IR and as .loc directives in x86-64 assembly and PTX, so each
 * line of every stage leads back to a kernel IR line, and through its phase to the graph nodes
 * (fb-stage-lines.c reads them back). Compiled kernels for bundles and the JIT have none.
 *
 * Only line directives are wanted, no DWARF sections: the compile unit's emission kind is
 * LLVM's DebugDirectivesOnly (what clang's -gline-directives-only asks for), which the C API's
 * enum does not name; its value (3, after None, Full and LineTablesOnly) is passed through. */
#include "fb-codegen-private.h"

#include <llvm-c/DebugInfo.h>
#include <string.h>

#define EMISSION_DIRECTIVES_ONLY ((LLVMDWARFEmissionKind) 3)

struct _FbDebugLines {
  LLVMModuleRef        mod;
  LLVMDIBuilderRef     di;
  LLVMMetadataRef      file;
  LLVMMetadataRef      unit;
  LLVMMetadataRef      type;      /* one subroutine type serves every function */
  const FbKernelLines *lines;
  GHashTable          *alias;     /* copy -> original (statements and phases made of others) */
};

FbDebugLines *
_fb_debug_lines_new (LLVMModuleRef mod, const FbKernel *kernel, const FbKernelLines *lines)
{
  g_assert (mod != NULL && kernel != NULL && lines != NULL);
  FbDebugLines *dl = g_new0 (FbDebugLines, 1);
  LLVMContextRef ctx = LLVMGetModuleContext (mod);
  g_autofree char *name = g_strconcat (kernel->name, ".kir", NULL);
  const char *producer = "fusebench";

  dl->mod = mod;
  dl->lines = lines;
  dl->alias = g_hash_table_new (NULL, NULL);
  dl->di = LLVMCreateDIBuilder (mod);
  dl->file = LLVMDIBuilderCreateFile (dl->di, name, strlen (name), "", 0);
  dl->unit = LLVMDIBuilderCreateCompileUnit (dl->di, LLVMDWARFSourceLanguageC, dl->file,
                                             producer, strlen (producer), TRUE, "", 0, 0, "", 0,
                                             EMISSION_DIRECTIVES_ONLY, 0, FALSE, FALSE, "", 0,
                                             "", 0);
  dl->type = LLVMDIBuilderCreateSubroutineType (dl->di, dl->file, NULL, 0, LLVMDIFlagZero);
  LLVMTypeRef i32 = LLVMInt32TypeInContext (ctx);
  LLVMAddModuleFlag (mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                     LLVMValueAsMetadata (LLVMConstInt (i32, LLVMDebugMetadataVersion (), 0)));
  LLVMAddModuleFlag (mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                     LLVMValueAsMetadata (LLVMConstInt (i32, 4, 0)));
  return dl;
}

void
_fb_debug_lines_free (FbDebugLines *dl)
{
  if (dl == NULL)
    return;
  LLVMDIBuilderFinalize (dl->di);
  LLVMDisposeDIBuilder (dl->di);
  g_hash_table_unref (dl->alias);
  g_free (dl);
}

void
_fb_debug_lines_alias (FbDebugLines *dl, gconstpointer copy, gconstpointer original)
{
  if (dl == NULL)
    return;
  if (original != NULL)
    g_hash_table_insert (dl->alias, (gpointer) copy, (gpointer) original);
  else
    g_hash_table_remove (dl->alias, copy);
}

static guint
line_of (const FbDebugLines *dl, gconstpointer what)
{
  gconstpointer original = g_hash_table_lookup (dl->alias, what);
  return fb_kernel_lines_of (dl->lines, original != NULL ? original : what);
}

void
_fb_debug_lines_at (FbEmit *e, gconstpointer stmt_or_phase)
{
  if (e->debug == NULL || e->scope == NULL)
    return;
  guint line = line_of (e->debug, stmt_or_phase);
  /* A statement the text does not hold keeps the location before it. */
  if (line == 0)
    return;
  LLVMSetCurrentDebugLocation2 (e->b, LLVMDIBuilderCreateDebugLocation (e->ctx, line, 0,
                                                                         e->scope, NULL));
}

void
_fb_debug_lines_enter (FbEmit *e, LLVMValueRef fn, gconstpointer phase)
{
  if (e->debug == NULL)
    return;
  FbDebugLines *dl = e->debug;
  size_t len = 0;
  const char *name = LLVMGetValueName2 (fn, &len);
  guint line = line_of (dl, phase);
  e->scope = LLVMDIBuilderCreateFunction (dl->di, dl->file, name, len, name, len, dl->file, line,
                                          dl->type, LLVMGetLinkage (fn) == LLVMInternalLinkage,
                                          TRUE, line, LLVMDIFlagZero, TRUE);
  LLVMSetSubprogram (fn, e->scope);
  /* What the function does before its first statement (loading its arguments, the grid loop)
   * is the phase's. */
  LLVMSetCurrentDebugLocation2 (e->b, LLVMDIBuilderCreateDebugLocation (e->ctx, MAX (line, 1),
                                                                         0, e->scope, NULL));
}

void
_fb_debug_lines_leave (FbEmit *e)
{
  if (e->debug == NULL)
    return;
  /* A location must not outlive its function: the next one is another subprogram's. */
  LLVMSetCurrentDebugLocation2 (e->b, NULL);
  e->scope = NULL;
}
