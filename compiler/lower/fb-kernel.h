/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The kernel IR: what lowering makes of the final stage and what code generation reads.
 *
 * A plan is a list of kernels over a table of buffers. A kernel stands for one node of the final
 * stage (a FUSED group or a plain node) and carries its provenance. Its code is a list of phases
 * run one after the other; a phase is a loop nest whose outermost loop is split across the
 * worker threads (every iteration of that loop is independent), so a phase compiles to one
 * function `void f (void **args, int64_t begin, int64_t end)` that runs iterations [begin, end).
 *
 * Expressions are small trees of scalars: constants, loop variables, accumulators, loads at an
 * index, arithmetic. An index is built from loop variables with constant coefficients (affine);
 * a data-dependent index (Gather) adds a loaded value times a stride. Library calls (dnnl_sgemm)
 * are statements whose arguments are expressions and buffer pointers. Everything is plain C
 * structs allocated from the kernel's own pool and freed with the kernel. */
#pragma once

#include "fb-graph.h"
#include "fb-target-desc.h"

G_BEGIN_DECLS

typedef struct _FbKPool   FbKPool;
typedef struct _FbKExpr   FbKExpr;
typedef struct _FbKStmt   FbKStmt;
typedef struct _FbKernel  FbKernel;
typedef struct _FbPlan    FbPlan;

typedef enum {
  FB_KX_CONST,      /* a number of type dtype: f for floats, i for integers and bool */
  FB_KX_VAR,        /* loop variable var (int64) */
  FB_KX_ACC,        /* accumulator acc, of the kernel's accumulator type */
  FB_KX_LOAD,       /* element a (int64 index) of argument arg */
  FB_KX_PTR,        /* address of element a of argument arg (only as a call argument) */
  FB_KX_UNARY,      /* uop of a */
  FB_KX_BINARY,     /* bop of a and b; comparisons produce bool */
  FB_KX_SELECT,     /* a (bool) ? b : c */
  FB_KX_CAST,       /* a converted to dtype (floats to integers truncate) */
} FbKExprKind;

typedef enum {
  FB_KU_NEG, FB_KU_ABS, FB_KU_EXP, FB_KU_LOG, FB_KU_SQRT, FB_KU_TANH, FB_KU_ERF, FB_KU_SIN,
  FB_KU_COS, FB_KU_FLOOR, FB_KU_CEIL, FB_KU_ROUND, FB_KU_NOT, FB_KU_ISNAN, FB_KU_SIGMOID,
  FB_KU_TF32,       /* a float32 rounded to TF32's 10 fraction bits (fb_tf32_round), still float32 */
  FB_KU_COUNT
} FbKUnary;

typedef enum {
  FB_KB_ADD, FB_KB_SUB, FB_KB_MUL, FB_KB_DIV, FB_KB_MOD, FB_KB_FMOD, FB_KB_POW, FB_KB_MIN,
  FB_KB_MAX, FB_KB_EQ, FB_KB_NE, FB_KB_LT, FB_KB_LE, FB_KB_GT, FB_KB_GE, FB_KB_AND, FB_KB_OR,
  FB_KB_XOR,
  FB_KB_SHL, FB_KB_SHR,     /* shifts of unsigned integers; by the width or more they give 0 */
  FB_KB_SUB_EXACT,          /* a - b rounded as written: float arithmetic is otherwise free to
                               reassociate, which would turn (x - max) - c into x - (max + c) */
  FB_KB_COUNT
} FbKBinary;

struct _FbKExpr {
  FbKExprKind kind;
  FbDType     dtype;          /* result type; INT64 for indices and loop variables */
  union {
    double    f;              /* FB_KX_CONST of a float type */
    int64_t   i;              /* FB_KX_CONST of an integer or bool type */
    guint     var;            /* FB_KX_VAR */
    guint     acc;            /* FB_KX_ACC */
    guint     arg;            /* FB_KX_LOAD, FB_KX_PTR */
    FbKUnary  uop;
    FbKBinary bop;
  };
  FbKExpr    *a, *b, *c;      /* operands; the index for LOAD and PTR */
};

typedef enum {
  FB_KS_LOOP,       /* for var in [0, extent): body (the parallel loop: [begin, end)) */
  FB_KS_STORE,      /* arg[index] = value */
  FB_KS_ASSIGN,     /* acc = value */
  FB_KS_CALL,       /* callee (args...) — a C function of a math library */
} FbKStmtKind;

struct _FbKStmt {
  FbKStmtKind kind;
  union {
    struct {
      guint      var;
      FbKExpr   *extent;      /* int64; a constant except for the last tile of a tiled loop */
      GPtrArray *body;        /* FbKStmt* */
      gboolean   parallel;    /* the phase's outermost loop, split across threads */
    } loop;
    struct {
      guint      arg;
      FbKExpr   *index;
      FbKExpr   *value;
    } store;
    struct {
      guint      acc;
      FbKExpr   *value;
    } assign;
    struct {
      const char *callee;     /* "dnnl_sgemm" */
      guint      n_args;
      FbKExpr  **args;        /* integer constants and expressions, floats, PTR */
    } call;
  };
};

typedef enum {
  FB_KARG_INPUT,    /* read */
  FB_KARG_OUTPUT,   /* written (and maybe read back, for epilogues applied in place) */
  FB_KARG_TEMP,     /* scratch owned by this kernel for the duration of one run */
} FbKArgRole;

typedef struct {
  guint       buffer;         /* index into the plan's buffers */
  FbKArgRole  role;
  FbDType     dtype;
  const char *name;           /* the value's name, for printing (pool) */
} FbKArg;

/* A phase that is one oneDNN convolution (fb-dnnl-conv.h) rather than generated code: the
 * runtime makes the primitive once and runs it on the calling thread, oneDNN spreading it
 * over the cores itself. Arguments are kernel argument indices; bias and add are
 * FB_KCONV_NO_ARG when absent. */
#define FB_KCONV_NO_ARG G_MAXUINT

/* What a library phase computes. The cpu target makes only convolutions (oneDNN); a GPU
 * target's lowering makes both, run by cuDNN and cuBLASLt. */
typedef enum {
  FB_KLIB_CONV,               /* desc: a convolution */
  FB_KLIB_GEMM,               /* gemm: a (batched) matrix product */
} FbKLibKind;

/* y[b] = alpha op(x[b]) op(w[b]) (+ bias broadcast along rows), row-major, b < batch, operand
 * b at b * stride elements past the first. bias (when present) has n elements. */
typedef struct {
  int64_t   ta, tb;           /* op: 1 transposes */
  int64_t   m, n, k;
  int64_t   lda, ldb, ldc;    /* row strides, in elements */
  int64_t   batch;
  int64_t   stride_a, stride_b, stride_c;
  int64_t   off_a, off_b, off_c;  /* elements past the start of x, w, y of batch 0 */
  double    alpha;
  int64_t   relu;             /* 1: max (y, 0) after the bias */
  int64_t   tf32;             /* 1: a convolution's product, which may run on TF32 tensor cores
                                 as the convolution would (unless strict float32); 0: a MatMul
                                 or Gemm, which follows the matmul precision */
  int64_t   split3;           /* 1: a float32 product run as TF32 ones: x and w are the operands
                                 split along the depth, k three times the product's own
                                 (fb-lower-product-split.c); tf32 is then 1 too */
} FbKGemm;

typedef struct {
  FbConvDesc desc;
  guint          x, w, bias, add, y;
  guint          scale;       /* desc.scaled_input: the per-channel scale of x (else unset) */
  FbKLibKind     lib;         /* FB_KLIB_CONV unless set */
  gboolean       cudnn;       /* FB_KLIB_CONV for cuDNN (a GPU target), not oneDNN */
  gboolean       nchw;        /* cuDNN: x, y, add channels-first (else channels-last) */
  FbKGemm        gemm;        /* FB_KLIB_GEMM: x is A, w is B; desc unused */
} FbKConv;

typedef struct {
  char      *fn;              /* the generated function's symbol: "<kernel name>_p<N>" */
  int64_t    extent;          /* iterations of the parallel loop */
  double     work;            /* rough cost of the whole phase in element operations, so that
                                 the runtime keeps tiny phases on one thread */
  gboolean   serial;          /* on the calling thread whatever its work: a product too small
                                 to gain from threads (fb-lower-contract.c) */
  GPtrArray *body;            /* FbKStmt*; the first is the parallel loop */
  FbKConv   *conv;            /* set for a library phase (a oneDNN or cuDNN convolution, a
                                 cuBLASLt product): no body, no generated code */
  GArray    *prov;            /* guint: the original ONNX nodes whose work the phase does
                                 (indices into the model's table; the members of a fused node
                                 that emitted it or were computed in its loops) */
} FbKPhase;

typedef enum {
  FB_KERNEL_LOOPS,            /* generated loops only */
  FB_KERNEL_LIBRARY,          /* generated loops around calls to a math library */
  FB_KERNEL_VIEW,             /* no code: its output reinterprets its input's bytes */
  FB_KERNEL_HOST,             /* If / Loop: run on the host by the reference interpreter */
} FbKernelKind;

struct _FbKernel {
  FbKPool      *pool;         /* owns expressions, statements and strings */
  guint         index;        /* position in the plan */
  char         *name;         /* "k12_Conv_Clip": a C identifier, unique in the plan */
  char         *label;        /* what it does, for people ("Conv 3x3 + Clip (im2col, sgemm)") */
  FbKernelKind  kind;
  const FbNode *node;         /* the final-stage node it stands for (borrowed from the graph) */
  guint         node_id;
  GArray       *prov_names;   /* char*: names of the original ONNX nodes (owned) */
  GArray       *args;         /* FbKArg */
  GArray       *accs;         /* FbDType of each accumulator */
  guint         n_vars;       /* loop variables used */
  GPtrArray    *phases;       /* FbKPhase* */
  double        flops;        /* modeled */
  double        bytes;        /* modeled: read + written */
};

typedef enum {
  FB_BUF_INPUT,               /* a graph input, fed by the caller */
  FB_BUF_CONST,               /* a weight or folded constant */
  FB_BUF_OUTPUT,              /* a graph output */
  FB_BUF_INTERMEDIATE,        /* produced and consumed within one run */
  FB_BUF_SCRATCH,             /* a kernel's temporary */
} FbBufferKind;

typedef struct {
  guint         index;
  FbBufferKind  kind;
  char         *name;         /* value name (owned) */
  const FbValue *value;       /* the final-stage value, NULL for scratch */
  FbDType       dtype;
  int           rank;
  int64_t       dims[FB_MAX_RANK];
  int64_t       numel;
  int64_t       nbytes;
  FbTensor     *constant;     /* FB_BUF_CONST: the data (a reference) */
  int           alias;        /* the buffer whose bytes this one views (-1: its own) */
  int           slice_of;     /* a Concat's output whose bytes hold this one's (-1: none): its
                                 producer writes straight into its part of the concatenation
                                 (fb-lower-concat.c), at slice_offset bytes from its start */
  int64_t       slice_offset;
  int64_t       slice_stride; /* 0: one run of slice_of's bytes; else a run of channels (its
                                 last axis) of every row of its slice root, whose rows are
                                 slice_stride elements apart (a channels-last Concat in place):
                                 the kernels that touch it index it so */
  gboolean      own_life;     /* read or written where the plan-memory pass did not expect it
                                 (a product reading a Transpose's input through strides,
                                 fb-lower-product-strides.c): the memory plan packs it by its
                                 own lifetime, apart from the values the pass gave its bytes */
  int64_t       offset;       /* set by the memory plan: byte offset in the arena (-1: none) */
  int           first_use;    /* kernel index of its first write or read (-1 before any) */
  int           last_use;     /* kernel index of its last read */
  gboolean      dynamic;      /* its extent is only known at run time (a Loop's scan output):
                                 only host steps write and read it, holding a tensor, and its
                                 dims say 0 where the size is unknown */
} FbBuffer;

struct _FbPlan {
  gatomicrefcount ref_count;
  char       *target;         /* the target's triple and processor (FbTargetDesc.triple), part
                                 of every cache key */
  const FbTargetDesc *target_desc; /* what lowering knew of the target (static; NULL for a plan
                                      read from a bundle) */
  GPtrArray  *kernels;        /* FbKernel* in run order */
  GArray     *buffers;        /* FbBuffer */
  GArray     *inputs;         /* guint buffer index per graph input */
  GArray     *outputs;        /* guint buffer index per graph output */
  int64_t     arena_bytes;    /* size of the arena the memory plan laid out */
  const FbGraph *graph;       /* the final stage it was lowered from (borrowed; may be NULL for
                                 a plan loaded from a bundle) */
  FbGraph    *owned_graph;    /* set when the plan owns its graph (bundles) */
};

#define FB_LOWER_ERROR (fb_lower_error_quark ())
GQuark fb_lower_error_quark (void);

typedef enum {
  FB_LOWER_ERROR_UNSUPPORTED,   /* a node the CPU target cannot compile; the message names it */
  FB_LOWER_ERROR_SHAPE,         /* a dynamic shape left unpinned */
} FbLowerError;

/* Kernels */
FbKernel   *fb_kernel_new          (const char *name);
void        fb_kernel_free         (FbKernel *kernel);
guint       fb_kernel_add_arg      (FbKernel *kernel, guint buffer, FbKArgRole role,
                                    FbDType dtype, const char *name);
guint       fb_kernel_new_acc      (FbKernel *kernel, FbDType dtype);
guint       fb_kernel_new_var      (FbKernel *kernel);
FbKPhase   *fb_kernel_add_phase    (FbKernel *kernel, int64_t extent, double work);
/* A phase running conv (copied) instead of generated code. */
FbKPhase   *fb_kernel_add_conv_phase (FbKernel *kernel, const FbKConv *conv, double work);
/* Adds the original nodes prov[0..n) to what phase stands for (each once). */
void        fb_kphase_add_prov     (FbKPhase *phase, const guint *prov, guint n);
gboolean    fb_kphase_has_prov     (const FbKPhase *phase, guint prov);
const char *fb_kernel_strdup       (FbKernel *kernel, const char *s);

/* Expressions (folding constants and keeping indices in affine form as they are built) */
FbKExpr *fb_kx_const_f   (FbKernel *k, FbDType dtype, double v);
FbKExpr *fb_kx_const_i   (FbKernel *k, FbDType dtype, int64_t v);
FbKExpr *fb_kx_index     (FbKernel *k, int64_t v);                 /* int64 constant */
FbKExpr *fb_kx_var       (FbKernel *k, guint var);
FbKExpr *fb_kx_acc       (FbKernel *k, guint acc);
FbKExpr *fb_kx_load      (FbKernel *k, guint arg, FbKExpr *index);
FbKExpr *fb_kx_ptr       (FbKernel *k, guint arg, FbKExpr *index);
FbKExpr *fb_kx_unary     (FbKernel *k, FbKUnary op, FbKExpr *a);

/* What FB_KU_TF32 computes, on the host: x rounded to the nearest value with 10 fraction bits
 * (ties away from zero), the number TF32 tensor cores read exactly. An infinity, a NaN, or a
 * finite x that would round past the largest float keeps its upper bits (truncated) instead. */
float    fb_tf32_round   (float x);
FbKExpr *fb_kx_binary    (FbKernel *k, FbKBinary op, FbKExpr *a, FbKExpr *b);
FbKExpr *fb_kx_select    (FbKernel *k, FbKExpr *cond, FbKExpr *a, FbKExpr *b);
FbKExpr *fb_kx_cast      (FbKernel *k, FbKExpr *a, FbDType dtype);
/* Index arithmetic on int64 expressions */
FbKExpr *fb_kx_add       (FbKernel *k, FbKExpr *a, FbKExpr *b);
FbKExpr *fb_kx_mul_c     (FbKernel *k, FbKExpr *a, int64_t c);
FbKExpr *fb_kx_add_c     (FbKernel *k, FbKExpr *a, int64_t c);
gboolean fb_kx_is_const  (const FbKExpr *e, double *value);

/* Statements */
FbKStmt *fb_ks_loop      (FbKernel *k, guint var, FbKExpr *extent);
FbKStmt *fb_ks_store     (FbKernel *k, guint arg, FbKExpr *index, FbKExpr *value);
FbKStmt *fb_ks_assign    (FbKernel *k, guint acc, FbKExpr *value);
FbKStmt *fb_ks_call      (FbKernel *k, const char *callee, guint n_args, FbKExpr **args);

/* The printed kernel IR: the lowering stage the UI shows (caller frees). */
char       *fb_kernel_to_string    (const FbKernel *kernel, const FbPlan *plan);

/* Where the statements and phases of a kernel stand in its printed IR: code generation gives
 * every instruction the kernel IR line of the statement it came from (a debug location), so a
 * line of LLVM IR, assembly or PTX leads back to the kernel IR and, through its phase, to the
 * graph nodes. Lines count from 1. */
typedef struct _FbKernelLines FbKernelLines;
/* fb_kernel_to_string, and where everything in it starts (*lines, caller frees). */
char       *fb_kernel_to_string_lines (const FbKernel *kernel, const FbPlan *plan,
                                       FbKernelLines **lines);
void        fb_kernel_lines_free   (FbKernelLines *lines);
/* The line a statement (FbKStmt*) or phase (FbKPhase*) of the kernel starts on; 0 for one the
 * text does not hold. */
guint       fb_kernel_lines_of     (const FbKernelLines *lines, gconstpointer stmt_or_phase);
/* The phase whose text holds line (its header and body), or -1 (the kernel's header, its
 * arguments). */
int         fb_kernel_lines_phase_at (const FbKernelLines *lines, guint line);
guint       fb_kernel_lines_count  (const FbKernelLines *lines);
/* A hex digest of everything that determines the kernel's code (its IR, argument types) and the
 * target: the key of the compiled-kernel cache. Independent of buffer numbering. */
char       *fb_kernel_hash         (const FbKernel *kernel, const char *target);

/* Plans */
FbPlan     *fb_plan_new            (const char *target);
FbPlan     *fb_plan_ref            (FbPlan *plan);
void        fb_plan_unref          (FbPlan *plan);
/* Adds a buffer; returns its index. */
guint       fb_plan_add_buffer     (FbPlan *plan, FbBufferKind kind, const char *name,
                                    FbDType dtype, int rank, const int64_t *dims);
FbBuffer   *fb_plan_buffer         (const FbPlan *plan, guint index);
/* Follows aliases to the buffer that owns the bytes. */
guint       fb_plan_root           (const FbPlan *plan, guint index);
/* Follows slices (FbBuffer.slice_of) to the outermost Concat output that holds index's bytes;
 * *offset: where they start in it (index itself and 0 when it is no slice). */
guint       fb_plan_slice_root     (const FbPlan *plan, guint index, int64_t *offset);
/* The bytes from b's first element to just past its last: its nbytes, or for a strided slice
 * (slice_stride) the span of its rows through its slice root. */
int64_t     fb_buffer_span         (const FbBuffer *b);
/* The whole plan as text: buffers, then every kernel. */
char       *fb_plan_to_string      (const FbPlan *plan);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbKernel, fb_kernel_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbKernelLines, fb_kernel_lines_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbPlan, fb_plan_unref)

G_END_DECLS
