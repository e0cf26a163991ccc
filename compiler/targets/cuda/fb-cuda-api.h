/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The few pieces of the CUDA driver API, cuBLASLt and cuDNN that the cuda target uses,
 * declared here and opened at run time with dlopen: nothing of CUDA is needed to build
 * fusebench or to start it, and the cpu target never touches any of it. The types and
 * constants are those of the CUDA 13 and cuDNN 9 headers (the numbers are their ABI).
 *
 * Only compiler/runtime/ includes this header. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

/* ---- driver API (libcuda.so.1) ---------------------------------------------------------- */
typedef int                 CUresult;           /* 0: CUDA_SUCCESS */
typedef int                 CUdevice;
typedef unsigned long long  CUdeviceptr;
typedef struct CUctx_st    *CUcontext;
typedef struct CUmod_st    *CUmodule;
typedef struct CUfunc_st   *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st  *CUevent;
typedef struct CUgraph_st  *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUlinkState_st *CUlinkState;

#define FB_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT      16
#define FB_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR  75
#define FB_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR  76
#define FB_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define FB_CU_STREAM_NON_BLOCKING                        1
#define FB_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL           1
#define FB_CU_EVENT_DEFAULT                              0
#define FB_CU_JIT_INFO_LOG_BUFFER                        3
#define FB_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES             4
#define FB_CU_JIT_ERROR_LOG_BUFFER                       5
#define FB_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES            6
#define FB_CU_JIT_LOG_VERBOSE                            12
#define FB_CU_JIT_INPUT_PTX                              1
#define FB_CUDA_ERROR_NO_DEVICE                          100

typedef struct {
  CUresult (*Init) (unsigned int flags);
  CUresult (*DriverGetVersion) (int *version);
  CUresult (*DeviceGetCount) (int *count);
  CUresult (*DeviceGet) (CUdevice *device, int ordinal);
  CUresult (*DeviceGetName) (char *name, int len, CUdevice dev);
  CUresult (*DeviceGetAttribute) (int *value, int attrib, CUdevice dev);
  CUresult (*DeviceTotalMem) (size_t *bytes, CUdevice dev);
  CUresult (*DevicePrimaryCtxRetain) (CUcontext *ctx, CUdevice dev);
  CUresult (*DevicePrimaryCtxRelease) (CUdevice dev);
  CUresult (*CtxSetCurrent) (CUcontext ctx);
  CUresult (*CtxSynchronize) (void);
  CUresult (*MemAlloc) (CUdeviceptr *dptr, size_t bytes);
  CUresult (*MemFree) (CUdeviceptr dptr);
  CUresult (*MemcpyHtoD) (CUdeviceptr dst, const void *src, size_t bytes);
  CUresult (*MemcpyDtoH) (void *dst, CUdeviceptr src, size_t bytes);
  CUresult (*MemcpyHtoDAsync) (CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
  CUresult (*MemcpyDtoHAsync) (void *dst, CUdeviceptr src, size_t bytes, CUstream s);
  CUresult (*MemcpyDtoDAsync) (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
  CUresult (*MemsetD8Async) (CUdeviceptr dst, unsigned char value, size_t n, CUstream s);
  CUresult (*ModuleLoadDataEx) (CUmodule *module, const void *image, unsigned int n_options,
                                int *options, void **values);
  CUresult (*ModuleGetFunction) (CUfunction *fn, CUmodule module, const char *name);
  CUresult (*LinkCreate) (unsigned int n_options, int *options, void **values, CUlinkState *state);
  CUresult (*LinkAddData) (CUlinkState state, int input_type, void *data, size_t size,
                           const char *name, unsigned int n_options, int *options, void **values);
  CUresult (*LinkComplete) (CUlinkState state, void **cubin, size_t *size);
  CUresult (*LinkDestroy) (CUlinkState state);
  CUresult (*ModuleUnload) (CUmodule module);
  CUresult (*FuncSetAttribute) (CUfunction fn, int attrib, int value);
  CUresult (*LaunchKernel) (CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz,
                            unsigned int bx, unsigned int by, unsigned int bz,
                            unsigned int shared_bytes, CUstream stream, void **params,
                            void **extra);
  CUresult (*StreamCreate) (CUstream *stream, unsigned int flags);
  CUresult (*StreamDestroy) (CUstream stream);
  CUresult (*StreamSynchronize) (CUstream stream);
  CUresult (*StreamBeginCapture) (CUstream stream, int mode);
  CUresult (*StreamEndCapture) (CUstream stream, CUgraph *graph);
  CUresult (*GraphInstantiateWithFlags) (CUgraphExec *exec, CUgraph graph,
                                         unsigned long long flags);
  CUresult (*GraphLaunch) (CUgraphExec exec, CUstream stream);
  CUresult (*GraphDestroy) (CUgraph graph);
  CUresult (*GraphExecDestroy) (CUgraphExec exec);
  CUresult (*EventCreate) (CUevent *event, unsigned int flags);
  CUresult (*EventRecord) (CUevent event, CUstream stream);
  CUresult (*EventSynchronize) (CUevent event);
  CUresult (*EventElapsedTime) (float *ms, CUevent start, CUevent end);
  CUresult (*EventDestroy) (CUevent event);
  CUresult (*GetErrorName) (CUresult error, const char **name);
  CUresult (*GetErrorString) (CUresult error, const char **text);
  CUresult (*ProfilerStart) (void);   /* bracket the timed runs for an external profiler */
  CUresult (*ProfilerStop) (void);
} FbCuDriver;

/* ---- cuBLASLt (libcublasLt.so.13) ------------------------------------------------------- */
typedef int                            cublasStatus_t;   /* 0: CUBLAS_STATUS_SUCCESS */
typedef struct cublasLtContext        *cublasLtHandle_t;
typedef struct cublasLtMatmulDescOpaque_st *cublasLtMatmulDesc_t;
typedef struct cublasLtMatrixLayoutOpaque_st *cublasLtMatrixLayout_t;
typedef struct cublasLtMatmulPreferenceOpaque_st *cublasLtMatmulPreference_t;
typedef struct { uint64_t data[8]; } cublasLtMatmulAlgo_t;
typedef struct {
  cublasLtMatmulAlgo_t algo;
  size_t               workspaceSize;
  cublasStatus_t       state;
  float                wavesCount;
  int                  reserved[4];
} cublasLtMatmulHeuristicResult_t;

#define FB_CUDA_R_32F                           0
#define FB_CUBLAS_COMPUTE_32F                   68
#define FB_CUBLAS_COMPUTE_32F_FAST_TF32         77
#define FB_CUBLAS_OP_N                          0
#define FB_CUBLAS_OP_T                          1
#define FB_CUBLASLT_MATMUL_DESC_TRANSA          3
#define FB_CUBLASLT_MATMUL_DESC_TRANSB          4
#define FB_CUBLASLT_MATMUL_DESC_EPILOGUE        7
#define FB_CUBLASLT_MATMUL_DESC_BIAS_POINTER    8
#define FB_CUBLASLT_EPILOGUE_DEFAULT            1
#define FB_CUBLASLT_EPILOGUE_RELU               2
#define FB_CUBLASLT_EPILOGUE_BIAS               4
#define FB_CUBLASLT_EPILOGUE_RELU_BIAS          6
#define FB_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT   5
#define FB_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET 6
#define FB_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES 1

typedef struct {
  cublasStatus_t (*Create) (cublasLtHandle_t *handle);
  cublasStatus_t (*Destroy) (cublasLtHandle_t handle);
  cublasStatus_t (*MatmulDescCreate) (cublasLtMatmulDesc_t *desc, int compute, int scale_type);
  cublasStatus_t (*MatmulDescDestroy) (cublasLtMatmulDesc_t desc);
  cublasStatus_t (*MatmulDescSetAttribute) (cublasLtMatmulDesc_t desc, int attr,
                                            const void *buf, size_t size);
  cublasStatus_t (*MatrixLayoutCreate) (cublasLtMatrixLayout_t *layout, int type, uint64_t rows,
                                        uint64_t cols, int64_t ld);
  cublasStatus_t (*MatrixLayoutDestroy) (cublasLtMatrixLayout_t layout);
  cublasStatus_t (*MatrixLayoutSetAttribute) (cublasLtMatrixLayout_t layout, int attr,
                                              const void *buf, size_t size);
  cublasStatus_t (*MatmulPreferenceCreate) (cublasLtMatmulPreference_t *pref);
  cublasStatus_t (*MatmulPreferenceDestroy) (cublasLtMatmulPreference_t pref);
  cublasStatus_t (*MatmulPreferenceSetAttribute) (cublasLtMatmulPreference_t pref, int attr,
                                                  const void *buf, size_t size);
  cublasStatus_t (*MatmulAlgoGetHeuristic) (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                            cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                            cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                            cublasLtMatmulPreference_t pref, int requested,
                                            cublasLtMatmulHeuristicResult_t *results,
                                            int *returned);
  cublasStatus_t (*Matmul) (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                            const void *alpha, const void *a, cublasLtMatrixLayout_t a_desc,
                            const void *b, cublasLtMatrixLayout_t b_desc, const void *beta,
                            const void *c, cublasLtMatrixLayout_t c_desc, void *d,
                            cublasLtMatrixLayout_t d_desc, const cublasLtMatmulAlgo_t *algo,
                            void *workspace, size_t workspace_bytes, CUstream stream);
} FbCublasLt;

/* ---- cuDNN 9 (libcudnn.so.9) ------------------------------------------------------------ */
typedef int                               cudnnStatus_t;   /* 0: CUDNN_STATUS_SUCCESS */
typedef struct cudnnContext              *cudnnHandle_t;
typedef struct cudnnTensorStruct         *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct         *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct    *cudnnConvolutionDescriptor_t;
typedef struct cudnnActivationStruct     *cudnnActivationDescriptor_t;
typedef struct cudnnOpTensorStruct       *cudnnOpTensorDescriptor_t;
typedef struct {
  int    algo;
  int    status;
  float  time;
  size_t memory;
  int    determinism;
  int    mathType;
  int    reserved[3];
} cudnnConvolutionFwdAlgoPerf_t;

#define FB_CUDNN_DATA_FLOAT                 0
#define FB_CUDNN_TENSOR_NCHW                0
#define FB_CUDNN_TENSOR_NHWC                1
#define FB_CUDNN_CROSS_CORRELATION          1
#define FB_CUDNN_DEFAULT_MATH               0
#define FB_CUDNN_TENSOR_OP_MATH             1
#define FB_CUDNN_FMA_MATH                   3
#define FB_CUDNN_ACTIVATION_RELU            1
#define FB_CUDNN_ACTIVATION_CLIPPED_RELU    3
#define FB_CUDNN_ACTIVATION_SWISH           6
#define FB_CUDNN_ACTIVATION_IDENTITY        5
#define FB_CUDNN_NOT_PROPAGATE_NAN          0
#define FB_CUDNN_OP_TENSOR_ADD              0
#define FB_CUDNN_OP_TENSOR_MUL              1
#define FB_CUDNN_FWD_ALGO_IMPLICIT_PRECOMP_GEMM 1

typedef struct {
  size_t        (*GetVersion) (void);
  const char   *(*GetErrorString) (cudnnStatus_t status);
  cudnnStatus_t (*Create) (cudnnHandle_t *handle);
  cudnnStatus_t (*Destroy) (cudnnHandle_t handle);
  cudnnStatus_t (*SetStream) (cudnnHandle_t handle, CUstream stream);
  cudnnStatus_t (*CreateTensorDescriptor) (cudnnTensorDescriptor_t *desc);
  cudnnStatus_t (*DestroyTensorDescriptor) (cudnnTensorDescriptor_t desc);
  cudnnStatus_t (*SetTensor4dDescriptor) (cudnnTensorDescriptor_t desc, int format, int type,
                                          int n, int c, int h, int w);
  cudnnStatus_t (*CreateFilterDescriptor) (cudnnFilterDescriptor_t *desc);
  cudnnStatus_t (*DestroyFilterDescriptor) (cudnnFilterDescriptor_t desc);
  cudnnStatus_t (*SetFilter4dDescriptor) (cudnnFilterDescriptor_t desc, int type, int format,
                                          int k, int c, int h, int w);
  cudnnStatus_t (*CreateConvolutionDescriptor) (cudnnConvolutionDescriptor_t *desc);
  cudnnStatus_t (*DestroyConvolutionDescriptor) (cudnnConvolutionDescriptor_t desc);
  cudnnStatus_t (*SetConvolution2dDescriptor) (cudnnConvolutionDescriptor_t desc, int pad_h,
                                               int pad_w, int u, int v, int dil_h, int dil_w,
                                               int mode, int compute_type);
  cudnnStatus_t (*SetConvolutionGroupCount) (cudnnConvolutionDescriptor_t desc, int groups);
  cudnnStatus_t (*SetConvolutionMathType) (cudnnConvolutionDescriptor_t desc, int math);
  cudnnStatus_t (*GetConvolution2dForwardOutputDim) (cudnnConvolutionDescriptor_t desc,
                                                     cudnnTensorDescriptor_t x,
                                                     cudnnFilterDescriptor_t w, int *n, int *c,
                                                     int *h, int *wd);
  cudnnStatus_t (*GetConvolutionForwardAlgorithm_v7) (cudnnHandle_t handle,
                                                      cudnnTensorDescriptor_t x,
                                                      cudnnFilterDescriptor_t w,
                                                      cudnnConvolutionDescriptor_t conv,
                                                      cudnnTensorDescriptor_t y, int requested,
                                                      int *returned,
                                                      cudnnConvolutionFwdAlgoPerf_t *perf);
  cudnnStatus_t (*FindConvolutionForwardAlgorithm) (cudnnHandle_t handle,
                                                    cudnnTensorDescriptor_t x,
                                                    cudnnFilterDescriptor_t w,
                                                    cudnnConvolutionDescriptor_t conv,
                                                    cudnnTensorDescriptor_t y, int requested,
                                                    int *returned,
                                                    cudnnConvolutionFwdAlgoPerf_t *perf);
  cudnnStatus_t (*GetConvolutionForwardWorkspaceSize) (cudnnHandle_t handle,
                                                       cudnnTensorDescriptor_t x,
                                                       cudnnFilterDescriptor_t w,
                                                       cudnnConvolutionDescriptor_t conv,
                                                       cudnnTensorDescriptor_t y, int algo,
                                                       size_t *bytes);
  cudnnStatus_t (*CreateActivationDescriptor) (cudnnActivationDescriptor_t *desc);
  cudnnStatus_t (*DestroyActivationDescriptor) (cudnnActivationDescriptor_t desc);
  cudnnStatus_t (*SetActivationDescriptor) (cudnnActivationDescriptor_t desc, int mode,
                                            int nan_opt, double coef);
  cudnnStatus_t (*ConvolutionForward) (cudnnHandle_t handle, const void *alpha,
                                       cudnnTensorDescriptor_t x_desc, const void *x,
                                       cudnnFilterDescriptor_t w_desc, const void *w,
                                       cudnnConvolutionDescriptor_t conv, int algo,
                                       void *workspace, size_t workspace_bytes, const void *beta,
                                       cudnnTensorDescriptor_t y_desc, void *y);
  cudnnStatus_t (*ConvolutionBiasActivationForward) (cudnnHandle_t handle, const void *alpha1,
                                                     cudnnTensorDescriptor_t x_desc,
                                                     const void *x,
                                                     cudnnFilterDescriptor_t w_desc,
                                                     const void *w,
                                                     cudnnConvolutionDescriptor_t conv,
                                                     int algo, void *workspace,
                                                     size_t workspace_bytes, const void *alpha2,
                                                     cudnnTensorDescriptor_t z_desc,
                                                     const void *z,
                                                     cudnnTensorDescriptor_t bias_desc,
                                                     const void *bias,
                                                     cudnnActivationDescriptor_t act,
                                                     cudnnTensorDescriptor_t y_desc, void *y);
} FbCudnn;

/* ---- cuDNN 9's graph (backend) API and the legacy calls an unfused epilogue uses ----------
 * Optional: a cuDNN without them still runs every convolution through the legacy fused call.
 * The numbers are cuDNN 9's ABI (cudnn_graph.h), which keeps them stable across 9.x. */
typedef void *cudnnBackendDescriptor_t;

#define FB_CUDNN_BACKEND_POINTWISE_DESCRIPTOR                    0
#define FB_CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR                  1
#define FB_CUDNN_BACKEND_ENGINE_DESCRIPTOR                       2
#define FB_CUDNN_BACKEND_ENGINECFG_DESCRIPTOR                    3
#define FB_CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR                   4
#define FB_CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR               5
#define FB_CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR 10
#define FB_CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR          13
#define FB_CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR               15
#define FB_CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR                 16
#define FB_CUDNN_BACKEND_TENSOR_DESCRIPTOR                       17

#define FB_CUDNN_ATTR_POINTWISE_MODE                             0
#define FB_CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP                  3
#define FB_CUDNN_ATTR_POINTWISE_SWISH_BETA                       8
#define FB_CUDNN_ATTR_POINTWISE_MATH_PREC                        1
#define FB_CUDNN_ATTR_CONVOLUTION_COMP_TYPE                      100
#define FB_CUDNN_ATTR_CONVOLUTION_CONV_MODE                      101
#define FB_CUDNN_ATTR_CONVOLUTION_DILATIONS                      102
#define FB_CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES                 103
#define FB_CUDNN_ATTR_CONVOLUTION_POST_PADDINGS                  104
#define FB_CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS                   105
#define FB_CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS                   106
#define FB_CUDNN_ATTR_ENGINEHEUR_MODE                            200
#define FB_CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH                 201
#define FB_CUDNN_ATTR_ENGINEHEUR_RESULTS                         202
#define FB_CUDNN_ATTR_ENGINECFG_ENGINE                           300
#define FB_CUDNN_ATTR_EXECUTION_PLAN_HANDLE                      400
#define FB_CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG               401
#define FB_CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE              402
#define FB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA        700
#define FB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA         701
#define FB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC    702
#define FB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W            703
#define FB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X            704
#define FB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y            705
#define FB_CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR          750
#define FB_CUDNN_ATTR_OPERATION_POINTWISE_XDESC                  751
#define FB_CUDNN_ATTR_OPERATION_POINTWISE_BDESC                  752
#define FB_CUDNN_ATTR_OPERATION_POINTWISE_YDESC                  753
#define FB_CUDNN_ATTR_OPERATIONGRAPH_HANDLE                      800
#define FB_CUDNN_ATTR_OPERATIONGRAPH_OPS                         801
#define FB_CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT                      900
#define FB_CUDNN_ATTR_TENSOR_DATA_TYPE                           901
#define FB_CUDNN_ATTR_TENSOR_DIMENSIONS                          902
#define FB_CUDNN_ATTR_TENSOR_STRIDES                             903
#define FB_CUDNN_ATTR_TENSOR_UNIQUE_ID                           906
#define FB_CUDNN_ATTR_TENSOR_IS_VIRTUAL                          907
#define FB_CUDNN_ATTR_TENSOR_IS_BY_VALUE                         908
#define FB_CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS                    1000
#define FB_CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS                 1001
#define FB_CUDNN_ATTR_VARIANT_PACK_WORKSPACE                     1003
#define FB_CUDNN_ATTR_ENGINE_GLOBAL_INDEX                        1301
#define FB_CUDNN_ATTR_ENGINE_NUMERICAL_NOTE                      1303

#define FB_CUDNN_TYPE_HANDLE                                     0
#define FB_CUDNN_TYPE_DATA_TYPE                                  1
#define FB_CUDNN_TYPE_BOOLEAN                                    2
#define FB_CUDNN_TYPE_INT64                                      3
#define FB_CUDNN_TYPE_FLOAT                                      4
#define FB_CUDNN_TYPE_DOUBLE                                     5
#define FB_CUDNN_TYPE_VOID_PTR                                   6
#define FB_CUDNN_TYPE_CONVOLUTION_MODE                           7
#define FB_CUDNN_TYPE_HEUR_MODE                                  8
#define FB_CUDNN_TYPE_NUMERICAL_NOTE                             11
#define FB_CUDNN_TYPE_POINTWISE_MODE                             14
#define FB_CUDNN_TYPE_BACKEND_DESCRIPTOR                         15

#define FB_CUDNN_POINTWISE_ADD                                   0
#define FB_CUDNN_POINTWISE_MUL                                   1
#define FB_CUDNN_POINTWISE_MIN                                   2
#define FB_CUDNN_POINTWISE_RELU_FWD                              100
#define FB_CUDNN_POINTWISE_SWISH_FWD                             106
#define FB_CUDNN_HEUR_MODE_INSTANT                               0
#define FB_CUDNN_HEUR_MODE_FALLBACK                              2
#define FB_CUDNN_NUMERICAL_NOTE_TENSOR_CORE                      0
#define FB_CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS              1

typedef struct {
  cudnnStatus_t (*CreateDescriptor) (int type, cudnnBackendDescriptor_t *desc);
  cudnnStatus_t (*DestroyDescriptor) (cudnnBackendDescriptor_t desc);
  cudnnStatus_t (*Finalize) (cudnnBackendDescriptor_t desc);
  cudnnStatus_t (*SetAttribute) (cudnnBackendDescriptor_t desc, int name, int type, int64_t count,
                                 const void *values);
  cudnnStatus_t (*GetAttribute) (cudnnBackendDescriptor_t desc, int name, int type,
                                 int64_t requested, int64_t *returned, void *values);
  cudnnStatus_t (*Execute) (cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                            cudnnBackendDescriptor_t variant_pack);
  /* Legacy calls of an epilogue that runs after an unfused convolution. */
  cudnnStatus_t (*AddTensor) (cudnnHandle_t handle, const void *alpha, cudnnTensorDescriptor_t a_desc,
                              const void *a, const void *beta, cudnnTensorDescriptor_t c_desc,
                              void *c);
  cudnnStatus_t (*ActivationForward) (cudnnHandle_t handle, cudnnActivationDescriptor_t act,
                                      const void *alpha, cudnnTensorDescriptor_t x_desc,
                                      const void *x, const void *beta,
                                      cudnnTensorDescriptor_t y_desc, void *y);
  cudnnStatus_t (*SetActivationDescriptorSwishBeta) (cudnnActivationDescriptor_t act, double beta);
  /* C = op (alpha1 A, alpha2 B) + beta C, B broadcast: a HardSwish's legacy calls. */
  cudnnStatus_t (*CreateOpTensorDescriptor) (cudnnOpTensorDescriptor_t *desc);
  cudnnStatus_t (*SetOpTensorDescriptor) (cudnnOpTensorDescriptor_t desc, int op, int comp_type,
                                          int nan);
  cudnnStatus_t (*DestroyOpTensorDescriptor) (cudnnOpTensorDescriptor_t desc);
  cudnnStatus_t (*OpTensor) (cudnnHandle_t handle, cudnnOpTensorDescriptor_t op,
                             const void *alpha1, cudnnTensorDescriptor_t a_desc, const void *a,
                             const void *alpha2, cudnnTensorDescriptor_t b_desc, const void *b,
                             const void *beta, cudnnTensorDescriptor_t c_desc, void *c);
} FbCudnnGraph;

/* The libraries, opened once per process (thread safe). Each getter returns the table, or NULL
 * with an FB_RUNTIME_ERROR_DEVICE error that lists every place it looked and why each failed.
 * FUSEBENCH_CUDA_LIBRARY_PATH (a colon-separated list of folders) is searched first. */
const FbCuDriver *_fb_cuda_driver   (GError **error);
const FbCublasLt *_fb_cuda_cublaslt (GError **error);
const FbCudnn    *_fb_cuda_cudnn    (GError **error);
/* cuDNN's graph API from the library _fb_cuda_cudnn opened, or NULL (with the reason in *why,
 * for the caller's notes) when that cuDNN lacks it. */
const FbCudnnGraph *_fb_cuda_cudnn_graph (const char **why);

/* Where a library was found, or NULL (for messages and `fusebench info`-like reports). */
const char       *_fb_cuda_library_path (const char *soname);

/* The candidates searched for soname, in order (caller frees). */
char            **_fb_cuda_search_list (const char *soname);

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a driver result. Caller frees. */
char             *_fb_cuda_result_text (const FbCuDriver *cu, CUresult r);

G_END_DECLS
