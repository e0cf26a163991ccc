/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Opening the CUDA libraries at run time: each soname is tried in the folders of
 * FUSEBENCH_CUDA_LIBRARY_PATH, then through the dynamic loader's own search (LD_LIBRARY_PATH,
 * the ld.so cache), then in the folders where the driver and the toolkits install them
 * (GPU-HOST.md of the project's notes measured /usr/lib for the driver and the toolkit's
 * targets folder for cuBLASLt). A failure names every candidate and the loader's reason. */
#include "fb-cuda-api.h"
#include "fb-backend.h"

#include <dlfcn.h>
#include <string.h>

static const char *const system_dirs[] = {
  "/usr/lib/x86_64-linux-gnu",
  "/usr/lib",
  "/usr/lib64",
  "/usr/local/nvidia/lib64",          /* the driver as containers mount it */
  "/usr/lib/wsl/lib",
  "/usr/local/cuda/lib64",
  "/usr/local/cuda/targets/x86_64-linux/lib",
  "/usr/local/cuda-13/targets/x86_64-linux/lib",
  "/usr/local/cuda-13.0/targets/x86_64-linux/lib",
  "/usr/local/cuda-13.1/targets/x86_64-linux/lib",
  "/opt/nvidia/cudnn/lib",
};

char **
_fb_cuda_search_list (const char *soname)
{
  g_return_val_if_fail (soname != NULL, NULL);
  GPtrArray *list = g_ptr_array_new ();
  const char *env = g_getenv ("FUSEBENCH_CUDA_LIBRARY_PATH");
  if (env != NULL && *env)
    {
      g_auto(GStrv) dirs = g_strsplit (env, ":", -1);
      for (guint i = 0; dirs[i]; i++)
        if (*dirs[i])
          g_ptr_array_add (list, g_build_filename (dirs[i], soname, NULL));
    }
  /* A bare name: the loader's own search. */
  g_ptr_array_add (list, g_strdup (soname));
  const char *home = g_getenv ("CUDA_HOME");
  if (home != NULL && *home)
    {
      g_ptr_array_add (list, g_build_filename (home, "lib64", soname, NULL));
      g_ptr_array_add (list, g_build_filename (home, "targets", "x86_64-linux", "lib", soname, NULL));
    }
  for (guint i = 0; i < G_N_ELEMENTS (system_dirs); i++)
    g_ptr_array_add (list, g_build_filename (system_dirs[i], soname, NULL));
  /* The same folder twice (CUDA_HOME is often /usr/local/cuda) is tried once. */
  GPtrArray *unique = g_ptr_array_new ();
  for (guint i = 0; i < list->len; i++)
    {
      gboolean seen = FALSE;
      for (guint j = 0; j < unique->len && !seen; j++)
        seen = g_str_equal (g_ptr_array_index (unique, j), g_ptr_array_index (list, i));
      if (seen)
        g_free (g_ptr_array_index (list, i));
      else
        g_ptr_array_add (unique, g_ptr_array_index (list, i));
    }
  g_ptr_array_free (list, TRUE);
  g_ptr_array_add (unique, NULL);
  return (char **) g_ptr_array_free (unique, FALSE);
}

typedef struct {
  const char *soname;
  void       *handle;
  char       *path;       /* where it was found */
  char       *failure;    /* the search report when not */
} Library;

static Library driver_lib = { "libcuda.so.1" };
static Library cublaslt_lib = { "libcublasLt.so.13" };
static Library cudnn_lib = { "libcudnn.so.9" };
static GMutex lock;

static gboolean
open_library (Library *lib)
{
  if (lib->handle != NULL)
    return TRUE;
  if (lib->failure != NULL)
    return FALSE;
  g_auto(GStrv) candidates = _fb_cuda_search_list (lib->soname);
  GString *report = g_string_new (NULL);
  for (guint i = 0; candidates[i]; i++)
    {
      /* Absolute candidates that do not exist need no loader's word. */
      if (candidates[i][0] == '/' && !g_file_test (candidates[i], G_FILE_TEST_EXISTS))
        {
          g_string_append_printf (report, "%s%s (absent)", report->len ? ", " : "", candidates[i]);
          continue;
        }
      void *h = dlopen (candidates[i], RTLD_NOW | RTLD_LOCAL);
      if (h != NULL)
        {
          lib->handle = h;
          lib->path = g_strdup (candidates[i]);
          g_string_free (report, TRUE);
          return TRUE;
        }
      const char *why = dlerror ();
      g_string_append_printf (report, "%s%s (%s)", report->len ? ", " : "", candidates[i],
                              why ? why : "cannot be loaded");
    }
  lib->failure = g_string_free (report, FALSE);
  return FALSE;
}

static gboolean
resolve (Library *lib, void *table, const char *const *names, guint n, GError **error)
{
  void **slots = table;
  for (guint i = 0; i < n; i++)
    {
      /* "a|b": the first symbol the library has (a newer entry point, then the older one). */
      g_auto(GStrv) alternatives = g_strsplit (names[i], "|", -1);
      for (guint a = 0; alternatives[a] && slots[i] == NULL; a++)
        slots[i] = dlsym (lib->handle, alternatives[a]);
      if (slots[i] == NULL)
        {
          g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE,
                       "%s has no %s: it is older than this build needs", lib->path, names[i]);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
open_or_fail (Library *lib, const char *what, GError **error)
{
  if (open_library (lib))
    return TRUE;
  g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_DEVICE,
               "the cuda target needs %s (%s), which is not on this machine; looked for: %s",
               what, lib->soname, lib->failure);
  return FALSE;
}

/* Symbol names in the order of the table's members. */
static const char *const driver_names[] = {
  "cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName",
  "cuDeviceGetAttribute", "cuDeviceTotalMem_v2", "cuDevicePrimaryCtxRetain",
  "cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent", "cuCtxSynchronize", "cuMemAlloc_v2",
  "cuMemFree_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyHtoDAsync_v2",
  "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoDAsync_v2", "cuMemsetD8Async", "cuModuleLoadDataEx",
  "cuModuleGetFunction", "cuLinkCreate_v2", "cuLinkAddData_v2", "cuLinkComplete", "cuLinkDestroy",
  "cuModuleUnload", "cuFuncSetAttribute", "cuLaunchKernel",
  "cuStreamCreate", "cuStreamDestroy_v2", "cuStreamSynchronize", "cuStreamBeginCapture_v2",
  "cuStreamEndCapture", "cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphDestroy",
  "cuGraphExecDestroy", "cuEventCreate", "cuEventRecord", "cuEventSynchronize",
  "cuEventElapsedTime_v2|cuEventElapsedTime", "cuEventDestroy_v2", "cuGetErrorName",
  "cuGetErrorString", "cuProfilerStart", "cuProfilerStop",
};
G_STATIC_ASSERT (G_N_ELEMENTS (driver_names) * sizeof (void *) == sizeof (FbCuDriver));

static const char *const cublaslt_names[] = {
  "cublasLtCreate", "cublasLtDestroy", "cublasLtMatmulDescCreate", "cublasLtMatmulDescDestroy",
  "cublasLtMatmulDescSetAttribute", "cublasLtMatrixLayoutCreate", "cublasLtMatrixLayoutDestroy",
  "cublasLtMatrixLayoutSetAttribute", "cublasLtMatmulPreferenceCreate",
  "cublasLtMatmulPreferenceDestroy", "cublasLtMatmulPreferenceSetAttribute",
  "cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmul",
};
G_STATIC_ASSERT (G_N_ELEMENTS (cublaslt_names) * sizeof (void *) == sizeof (FbCublasLt));

static const char *const cudnn_names[] = {
  "cudnnGetVersion", "cudnnGetErrorString", "cudnnCreate", "cudnnDestroy", "cudnnSetStream",
  "cudnnCreateTensorDescriptor", "cudnnDestroyTensorDescriptor", "cudnnSetTensor4dDescriptor",
  "cudnnCreateFilterDescriptor", "cudnnDestroyFilterDescriptor", "cudnnSetFilter4dDescriptor",
  "cudnnCreateConvolutionDescriptor", "cudnnDestroyConvolutionDescriptor",
  "cudnnSetConvolution2dDescriptor", "cudnnSetConvolutionGroupCount",
  "cudnnSetConvolutionMathType", "cudnnGetConvolution2dForwardOutputDim",
  "cudnnGetConvolutionForwardAlgorithm_v7", "cudnnFindConvolutionForwardAlgorithm",
  "cudnnGetConvolutionForwardWorkspaceSize", "cudnnCreateActivationDescriptor",
  "cudnnDestroyActivationDescriptor", "cudnnSetActivationDescriptor", "cudnnConvolutionForward",
  "cudnnConvolutionBiasActivationForward",
};
G_STATIC_ASSERT (G_N_ELEMENTS (cudnn_names) * sizeof (void *) == sizeof (FbCudnn));

static const char *const cudnn_graph_names[] = {
  "cudnnBackendCreateDescriptor", "cudnnBackendDestroyDescriptor", "cudnnBackendFinalize",
  "cudnnBackendSetAttribute", "cudnnBackendGetAttribute", "cudnnBackendExecute",
  "cudnnAddTensor", "cudnnActivationForward", "cudnnSetActivationDescriptorSwishBeta",
  "cudnnCreateOpTensorDescriptor", "cudnnSetOpTensorDescriptor", "cudnnDestroyOpTensorDescriptor",
  "cudnnOpTensor",
};
G_STATIC_ASSERT (G_N_ELEMENTS (cudnn_graph_names) * sizeof (void *) == sizeof (FbCudnnGraph));

static FbCuDriver driver;
static FbCublasLt cublaslt;
static FbCudnn cudnn;
static FbCudnnGraph cudnn_graph;
static gboolean driver_ok, cublaslt_ok, cudnn_ok;
static gboolean cudnn_graph_tried, cudnn_graph_ok;
static char *cudnn_graph_why;

const FbCuDriver *
_fb_cuda_driver (GError **error)
{
  g_mutex_lock (&lock);
  if (!driver_ok && open_or_fail (&driver_lib, "the NVIDIA driver", error) &&
      resolve (&driver_lib, &driver, driver_names, G_N_ELEMENTS (driver_names), error))
    driver_ok = TRUE;
  g_mutex_unlock (&lock);
  return driver_ok ? &driver : NULL;
}

const FbCublasLt *
_fb_cuda_cublaslt (GError **error)
{
  g_mutex_lock (&lock);
  if (!cublaslt_ok && open_or_fail (&cublaslt_lib, "cuBLASLt of CUDA 13", error) &&
      resolve (&cublaslt_lib, &cublaslt, cublaslt_names, G_N_ELEMENTS (cublaslt_names), error))
    cublaslt_ok = TRUE;
  g_mutex_unlock (&lock);
  return cublaslt_ok ? &cublaslt : NULL;
}

const FbCudnn *
_fb_cuda_cudnn (GError **error)
{
  g_mutex_lock (&lock);
  if (!cudnn_ok && open_or_fail (&cudnn_lib, "cuDNN 9", error) &&
      resolve (&cudnn_lib, &cudnn, cudnn_names, G_N_ELEMENTS (cudnn_names), error))
    cudnn_ok = TRUE;
  g_mutex_unlock (&lock);
  return cudnn_ok ? &cudnn : NULL;
}

const FbCudnnGraph *
_fb_cuda_cudnn_graph (const char **why)
{
  g_mutex_lock (&lock);
  if (!cudnn_graph_tried && cudnn_ok)
    {
      g_autoptr(GError) error = NULL;
      cudnn_graph_tried = TRUE;
      cudnn_graph_ok = resolve (&cudnn_lib, &cudnn_graph, cudnn_graph_names,
                                G_N_ELEMENTS (cudnn_graph_names), &error);
      if (!cudnn_graph_ok)
        {
          memset (&cudnn_graph, 0, sizeof cudnn_graph);
          cudnn_graph_why = g_strdup (error->message);
        }
    }
  const FbCudnnGraph *table = cudnn_graph_ok ? &cudnn_graph : NULL;
  if (why)
    *why = cudnn_graph_ok ? NULL : cudnn_graph_why ? cudnn_graph_why : "cuDNN is not open";
  g_mutex_unlock (&lock);
  return table;
}

const char *
_fb_cuda_library_path (const char *soname)
{
  Library *libs[] = { &driver_lib, &cublaslt_lib, &cudnn_lib };
  for (guint i = 0; i < G_N_ELEMENTS (libs); i++)
    if (g_strcmp0 (libs[i]->soname, soname) == 0)
      return libs[i]->path;
  return NULL;
}

char *
_fb_cuda_result_text (const FbCuDriver *cu, CUresult r)
{
  const char *name = NULL, *text = NULL;
  if (cu == NULL || cu->GetErrorName (r, &name) != 0)
    name = NULL;
  if (cu == NULL || cu->GetErrorString (r, &text) != 0)
    text = NULL;
  return g_strdup_printf ("%s (%s)", name ? name : "CUDA error", text ? text : "no description");
}
