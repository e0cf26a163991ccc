/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The generated kernels of a whole plan as one PTX module: what File → Export → PTX and
 * `fusebench compile --target cuda --emit ptx` write. Each kernel's module is made and
 * optimized exactly as for a bundle (fb_codegen_ptx), then LLVM's linker joins them and the
 * NVPTX back end prints them once, under one .version and .target, so that ptxas or the
 * driver takes the file as it is.
 *
 * Functions are named after their content (fb-lower.c), so repeated blocks of a network lower
 * to kernels with the same entries; the module holds those once. Two kernels of equal content
 * whose buffers alias differently (noalias where the other has none) share names but not code:
 * the second one's symbols get a suffix, and the index at the top of the file says so. */
#include "fb-codegen-ptx-private.h"

#include <llvm-c/Linker.h>
#include <string.h>

static char *
take_message (char *msg)
{
  char *s = g_strdup (msg ? msg : "");
  if (msg)
    LLVMDisposeMessage (msg);
  return s;
}

/* Renames what mod defines (functions and globals: entries, bodies, shared arrays) with
 * suffix, so that it links beside a module that defines the same names differently. */
static void
rename_definitions (LLVMModuleRef mod, const char *suffix)
{
  for (LLVMValueRef f = LLVMGetFirstFunction (mod); f != NULL; f = LLVMGetNextFunction (f))
    if (!LLVMIsDeclaration (f))
      {
        g_autofree char *name = g_strconcat (LLVMGetValueName (f), suffix, NULL);
        LLVMSetValueName2 (f, name, strlen (name));
      }
  for (LLVMValueRef g = LLVMGetFirstGlobal (mod); g != NULL; g = LLVMGetNextGlobal (g))
    if (!LLVMIsDeclaration (g))
      {
        g_autofree char *name = g_strconcat (LLVMGetValueName (g), suffix, NULL);
        LLVMSetValueName2 (g, name, strlen (name));
      }
}

/* The first entry LLVM defines in mod (after a rename, the name it has now). */
static const char *
first_entry (LLVMModuleRef mod, const FbPtxModule *m)
{
  for (guint p = 0; p < m->phases->len; p++)
    {
      const FbPtxPhase *ph = &g_array_index (m->phases, FbPtxPhase, p);
      const char *entry = ph->entry ? ph->entry : ph->before.entry ? ph->before.entry : ph->after.entry;
      if (entry != NULL && LLVMGetNamedFunction (mod, entry) != NULL)
        return entry;
    }
  return NULL;
}

static void
describe_kernel (GString *index, const FbKernel *k, const FbPtxModule *m, const char *suffix,
                 const char *shared_with)
{
  g_string_append_printf (index, "// kernel %s (%s, node %s)", k->name, k->label ? k->label : "",
                          k->node != NULL && k->node->name != NULL ? k->node->name : "?");
  if (shared_with != NULL)
    g_string_append_printf (index, ": the same code as kernel %s", shared_with);
  g_string_append_c (index, '\n');
  for (guint p = 0; m != NULL && p < m->phases->len; p++)
    {
      const FbPtxPhase *ph = &g_array_index (m->phases, FbPtxPhase, p);
      if (ph->library)
        g_string_append_printf (index, "//   phase %u: a library call (cuDNN or cuBLASLt), run by "
                                "the CUDA runtime%s%s%s%s%s%s\n", p,
                                ph->before.entry ? "; before it .entry " : "",
                                ph->before.entry ? ph->before.entry : "",
                                ph->before.entry ? suffix : "",
                                ph->after.entry ? "; after it .entry " : "",
                                ph->after.entry ? ph->after.entry : "",
                                ph->after.entry ? suffix : "");
      else
        g_string_append_printf (index, "//   phase %u: .entry %s%s, %u threads a block\n", p,
                                ph->entry, suffix, ph->block_threads);
    }
}

char *
fb_codegen_ptx_plan (const FbPlan *plan, GError **error)
{
  g_return_val_if_fail (plan != NULL, NULL);
  LLVMTargetMachineRef tm = _fb_ptx_target_machine (error);
  if (tm == NULL)
    return NULL;
  LLVMContextRef ctx = LLVMContextCreate ();
  LLVMModuleRef dest = LLVMModuleCreateWithNameInContext ("fusebench-model", ctx);
  char *triple = LLVMGetTargetMachineTriple (tm);
  LLVMSetTarget (dest, triple);
  LLVMDisposeMessage (triple);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout (tm);
  char *layout = LLVMCopyStringRepOfTargetData (td);
  LLVMSetDataLayout (dest, layout);
  LLVMDisposeMessage (layout);
  LLVMDisposeTargetData (td);

  /* first entry -> (its kernel's name, the optimized IR that kernel's module had) */
  g_autoptr(GHashTable) kernel_of = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) ir_of = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GString) index = g_string_new (NULL);
  guint n_linked = 0;
  gboolean ok = TRUE;

  for (guint i = 0; i < plan->kernels->len && ok; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      g_autoptr(FbPtxModule) m = g_new0 (FbPtxModule, 1);
      GError *failed = NULL;
      if (k->kind == FB_KERNEL_HOST || k->kind == FB_KERNEL_VIEW)
        continue;
      LLVMModuleRef mod = _fb_ptx_kernel_module (ctx, tm, k, plan, m, &failed);
      if (failed != NULL)
        {
          g_propagate_error (error, failed);
          ok = FALSE;
          break;
        }
      if (mod == NULL)
        {
          describe_kernel (index, k, m, "", NULL);   /* library calls only */
          continue;
        }
      const char *entry = first_entry (mod, m);
      const char *seen = entry ? g_hash_table_lookup (ir_of, entry) : NULL;
      g_autofree char *suffix = g_strdup ("");
      if (seen != NULL && g_strcmp0 (seen, m->llvm_ir_opt) == 0)
        {
          describe_kernel (index, k, m, "", g_hash_table_lookup (kernel_of, entry));
          LLVMDisposeModule (mod);
          continue;
        }
      if (seen != NULL)
        {
          g_free (suffix);
          suffix = g_strdup_printf ("_k%u", k->index);
          rename_definitions (mod, suffix);
        }
      else if (entry != NULL)
        {
          g_hash_table_insert (ir_of, g_strdup (entry), g_strdup (m->llvm_ir_opt));
          g_hash_table_insert (kernel_of, g_strdup (entry), g_strdup (k->name));
        }
      describe_kernel (index, k, m, suffix, NULL);
      /* The linker takes mod over, whatever the outcome. */
      if (LLVMLinkModules2 (dest, mod))
        {
          g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_LLVM,
                       "kernel %s: LLVM could not link its PTX module into the model's", k->name);
          ok = FALSE;
        }
      n_linked++;
    }

  char *ptx = NULL;
  if (ok)
    {
      LLVMMemoryBufferRef buf = NULL;
      char *msg = NULL;
      if (n_linked == 0)
        g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_UNSUPPORTED,
                     "no kernel of this model has generated code for the GPU: every one is a "
                     "library call, a view or a host step, so there is no PTX to write");
      else if (LLVMTargetMachineEmitToMemoryBuffer (tm, dest, LLVMAssemblyFile, &msg, &buf))
        {
          g_autofree char *m = take_message (msg);
          g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_LLVM,
                       "LLVM could not emit the model's PTX: %s", m);
        }
      else
        {
          /* The index goes after LLVM's banner comment: .version must stay the first
           * directive, and comments may come before it. */
          g_autofree char *body = g_strndup (LLVMGetBufferStart (buf), LLVMGetBufferSize (buf));
          LLVMDisposeMemoryBuffer (buf);
          ptx = g_strdup_printf ("// The generated kernels of one model for sm_90, from fusebench "
                                 "(launch each entry with exactly its threads a block; library "
                                 "phases are cuDNN's and cuBLASLt's, not in this file):\n%s%s",
                                 index->str, body);
        }
    }
  LLVMDisposeModule (dest);
  LLVMContextDispose (ctx);
  LLVMDisposeTargetMachine (tm);
  return ptx;
}
