/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ORC LLJIT around the kernel objects. */
#include "fb-jit.h"
#include "fb-codegen.h"

#include <cblas.h>
#include <dnnl.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <math.h>
#include <string.h>

struct _FbJit {
  LLVMOrcLLJITRef     jit;
  LLVMOrcJITDylibRef  dylib;
};

static gboolean
llvm_failed (LLVMErrorRef err, const char *what, GError **error)
{
  if (err == NULL)
    return FALSE;
  char *msg = LLVMGetErrorMessage (err);
  g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_LLVM, "%s: %s", what, msg);
  LLVMDisposeErrorMessage (msg);
  return TRUE;
}

/* Every external function a kernel may call. */
static const struct { const char *name; void *addr; } externals[] = {
  { "dnnl_sgemm", (void *) dnnl_sgemm },
  { "cblas_sgemm", (void *) cblas_sgemm },
  { "expf", (void *) expf }, { "exp", (void *) exp },
  { "logf", (void *) logf }, { "log", (void *) log },
  { "powf", (void *) powf }, { "pow", (void *) pow },
  { "sinf", (void *) sinf }, { "sin", (void *) sin },
  { "cosf", (void *) cosf }, { "cos", (void *) cos },
  { "tanhf", (void *) tanhf }, { "tanh", (void *) tanh },
  { "erff", (void *) erff }, { "erf", (void *) erf },
  { "fmodf", (void *) fmodf }, { "fmod", (void *) fmod },
  { "sqrtf", (void *) sqrtf }, { "sqrt", (void *) sqrt },
  { "floorf", (void *) floorf }, { "ceilf", (void *) ceilf },
  { "roundevenf", (void *) roundevenf }, { "roundeven", (void *) roundeven },
  { "memset", (void *) memset }, { "memcpy", (void *) memcpy }, { "memmove", (void *) memmove },
};

FbJit *
fb_jit_new (GError **error)
{
  fb_codegen_host_target ();   /* initializes the native target */
  LLVMOrcLLJITRef jit = NULL;
  if (llvm_failed (LLVMOrcCreateLLJIT (&jit, NULL), "cannot start the JIT", error))
    return NULL;
  FbJit *self = g_new0 (FbJit, 1);
  self->jit = jit;
  self->dylib = LLVMOrcLLJITGetMainJITDylib (jit);
  LLVMOrcCSymbolMapPair pairs[G_N_ELEMENTS (externals)];
  for (guint i = 0; i < G_N_ELEMENTS (externals); i++)
    {
      pairs[i].Name = LLVMOrcLLJITMangleAndIntern (jit, externals[i].name);
      pairs[i].Sym.Address = (LLVMOrcExecutorAddress) (uintptr_t) externals[i].addr;
      pairs[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported |
                                        LLVMJITSymbolGenericFlagsCallable;
      pairs[i].Sym.Flags.TargetFlags = 0;
    }
  LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols (pairs, G_N_ELEMENTS (externals));
  if (llvm_failed (LLVMOrcJITDylibDefine (self->dylib, mu), "cannot bind the math library",
                   error))
    {
      fb_jit_free (self);
      return NULL;
    }
  return self;
}

void
fb_jit_free (FbJit *jit)
{
  if (jit == NULL)
    return;
  if (jit->jit)
    {
      LLVMErrorRef err = LLVMOrcDisposeLLJIT (jit->jit);
      if (err)
        LLVMConsumeError (err);
    }
  g_free (jit);
}

gboolean
fb_jit_add_object (FbJit *jit, GBytes *object, GError **error)
{
  g_return_val_if_fail (jit != NULL && object != NULL, FALSE);
  gsize len;
  const char *data = g_bytes_get_data (object, &len);
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy (data, len, "kernel");
  return !llvm_failed (LLVMOrcLLJITAddObjectFile (jit->jit, jit->dylib, buf),
                       "cannot load a kernel object", error);
}

FbPhaseFn
fb_jit_lookup (FbJit *jit, const char *symbol, GError **error)
{
  g_return_val_if_fail (jit != NULL && symbol != NULL, NULL);
  LLVMOrcExecutorAddress addr = 0;
  g_autofree char *what = g_strdup_printf ("cannot find kernel function %s", symbol);
  if (llvm_failed (LLVMOrcLLJITLookup (jit->jit, &addr, symbol), what, error))
    return NULL;
  return (FbPhaseFn) (uintptr_t) addr;
}
