/*
 * runtime/runtime.h - internals shared by the runtime files: tensor flags,
 * the prepared-kernel layout of every kernel family, dtype conversion, the
 * vector functions of the elementwise engine, the math backend and the pool.
 * The public API is hop/runtime.h.
 *
 * Files: tensor.c (storage, tensors), convert.c (dtype conversion),
 * elementwise.c (the strided elementwise engine and its vector functions),
 * vmath.c / vmath_sleef.c (exp, log, ... over contiguous arrays), reduce.c,
 * matmul.c, shape_ops.c (views, cat/stack, factories, nonzero), kernel.c
 * (prepare/compute dispatch, out checks), eager.c (operands, shape
 * inference in a per-thread ShapeEnv, hop_eager), pool.c (threads),
 * foreign.c (foreign kernels through libffi; foreign_impl.h).  The program
 * interpreter (the VM: vm.c, frame.c, parmap.c, fused_exec.c, explain.c,
 * export.c) has its own private header, vm_impl.h; runtime/program.h is
 * the program format it shares with the code generator (lowering/).
 */
#ifndef HOP_RUNTIME_INTERNAL_H
#define HOP_RUNTIME_INTERNAL_H

#include "core/core.h"
#include "hop/runtime.h"
#include "runtime/program.h"

/* Tensor flags_. */
enum {
    HOP__T_EMBEDDED = 1, /* the header lives in its storage's block */
    HOP__T_BORROWED = 2, /* caller-owned header, no references held */
};

/* Storage: an owned block or wrapped external memory. */
struct hop_storage {
    long refcount;
    void *data;
    size_t nbytes;
    void *block; /* owned allocation holding this struct, or NULL */
    hop_release_fn release;
    union {
        void *user_data; /* release's argument */
        size_t small; /* release NULL: block came from hop__malloc_small(small); 0: hop__malloc */
    };
};

/* Bool elements are bytes; kernels read them as uint8_t and write 0 or 1. */
typedef uint8_t hop__bool;

/* ------------------------------------------------------------ conversion */

/* hop__convert: runtime/program.h (fused groups store converted scalars). */
/* Strided copy of n elements of esize bytes from contiguous src to dst. */
void hop__scatter(int64_t n, void *dst, int64_t stride, const void *src, size_t esize);
/* Reads one element as double / int64 (with the saturating conversion). */
double hop__load_f64(const void *p, hop_dtype dt);
/* complex.c: hop__convert's cases with a complex source or destination
 * (false, nothing done, when neither is complex). */
bool hop__convert_complex(int64_t n, void *dst, hop_dtype dt, const void *src, hop_dtype st,
                          int64_t stride);
int64_t hop__load_i64(const void *p, hop_dtype dt);

/* --------------------------------------------------------- elementwise */

/* HOP__WIDE: the attribute of a loop compiled once per vector width and
 * picked at load time (GCC's target_clones: AVX-512, AVX2, baseline), for
 * loops of single IEEE operations, compares and exact conversions, where
 * every clone gives the same bits.  Not in a sanitized build: it checks the
 * loops' memory accesses, which are the same source in every clone, and the
 * clones were ~60% of elementwise.c's compile (docs/BENCHMARKS.md, fiftieth
 * session, CI time). */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__ELF__) && !defined(__SANITIZE_ADDRESS__)
#define HOP__WIDE __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HOP__WIDE
#endif

/* hop__vfn, the vector functions by op and dtype and their cost: in
 * runtime/program.h, since fused groups of plans run them too. */

#define HOP__EW_MAXIN 3

typedef struct hop__ew_in {
    const char *data; /* NULL: a scalar, stored converted in sval */
    hop_dtype dtype;  /* dtype of data */
    hop_dtype need;   /* dtype the vector function reads */
    bool partial;     /* broadcast along some dims, not all (a complex128 one is spread) */
    int64_t strides[HOP_MAX_RANK];
} hop__ew_in;

/* An elementwise loop over the output's (coalesced) dims. */
typedef struct hop__ew {
    int rank;
    int nin;
    bool flat; /* one run, every operand direct: the tight path */
    int64_t numel;
    int64_t sizes[HOP_MAX_RANK];
    hop__ew_in in[HOP__EW_MAXIN];
    _Alignas(16) unsigned char sval[HOP__EW_MAXIN][16]; /* scalar operands in `need` */
    char *out;
    hop_dtype odtype;
    hop_dtype fdtype; /* what fn writes: odtype, or f32 rounded into an f16 out */
    int64_t ostrides[HOP_MAX_RANK];
    hop__vfn fn;
} hop__ew;

/* An operand for hop__ew_init: a strided array or a scalar. */
typedef struct hop__ew_src {
    const void *data; /* NULL for a scalar */
    hop_dtype dtype;
    int rank;
    const int64_t *sizes; /* broadcast against the output from the right */
    const int64_t *strides;
    _Alignas(16) unsigned char sval[16]; /* scalar value in dtype */
} hop__ew_src;

/* Sets up e: out has (rank, sizes, strides); each source broadcasts to it
 * and is read as need[i]; fn computes into fdtype, converted to odtype when
 * they differ.  Cannot fail. */
void hop__ew_init(hop__ew *e, void *out, hop_dtype odtype, int rank, const int64_t *sizes,
                  const int64_t *ostrides, const hop__ew_src *src, const hop_dtype *need, int nin,
                  hop__vfn fn, hop_dtype fdtype);
void hop__ew_compute(const hop__ew *e, int ith, int nth);

/* ------------------------------------------------------------ math */

/* Contiguous n-element float functions: out may equal in. */
typedef void (*hop__mfn_f32)(int64_t n, float *out, const float *in);
typedef void (*hop__mfn_f64)(int64_t n, double *out, const double *in);
typedef void (*hop__mfn2_f32)(int64_t n, float *out, const float *a, const float *b);
typedef void (*hop__mfn2_f64)(int64_t n, double *out, const double *a, const double *b);

/* The backend's further functions, by index: X(name, libm f64 name).  The
 * SLEEF backends compute log10 ... atan with libm (vmath_sleef.c): they
 * are members so that NumPy's SVML functions can be adopted for them. */
#define HOP__MATH_UNARY(X)                                                                         \
    X(sinh, sinh)                                                                                  \
    X(cosh, cosh)                                                                                  \
    X(asin, asin)                                                                                  \
    X(acos, acos)                                                                                  \
    X(asinh, asinh)                                                                                \
    X(acosh, acosh)                                                                                \
    X(atanh, atanh)                                                                                \
    X(cbrt, cbrt)                                                                                  \
    X(log10, log10)                                                                                \
    X(log2, log2)                                                                                  \
    X(exp2, exp2)                                                                                  \
    X(expm1, expm1)                                                                                \
    X(log1p, log1p)                                                                                \
    X(tan, tan)                                                                                    \
    X(atan, atan)
#define HOP__MATH_BINARY(X) X(atan2, atan2) X(hypot, hypot)
typedef enum hop__math_unary {
#define HOP__MU_ENUM(name, f) HOP__MU_##name,
    HOP__MATH_UNARY(HOP__MU_ENUM)
#undef HOP__MU_ENUM
        HOP__MU_COUNT
} hop__math_unary;
typedef enum hop__math_binary {
#define HOP__MB_ENUM(name, f) HOP__MB_##name,
    HOP__MATH_BINARY(HOP__MB_ENUM)
#undef HOP__MB_ENUM
        HOP__MB_COUNT
} hop__math_binary;

typedef struct hop__math {
    const char *name;
    hop__mfn_f32 exp_f32, log_f32, sin_f32, cos_f32, tanh_f32, sigmoid_f32, sqrt_f32;
    hop__mfn_f64 exp_f64, log_f64, sin_f64, cos_f64, tanh_f64, sigmoid_f64, sqrt_f64;
    hop__mfn2_f32 pow_f32;
    hop__mfn2_f64 pow_f64;
    hop__mfn_f32 unary_f32[HOP__MU_COUNT];
    hop__mfn_f64 unary_f64[HOP__MU_COUNT];
    hop__mfn2_f32 binary_f32[HOP__MB_COUNT];
    hop__mfn2_f64 binary_f64[HOP__MB_COUNT];
    /* the float32 functions a float16 exp, log, sin, cos and tanh round
     * from: the backend's own float32 ones, or NumPy's SVML ones once
     * adopted (NumPy runs SVML's for a float16 array but loops of its own,
     * or another NaN, for a float32 one: hop_runtime_math_adopt, HOP_F16) */
    hop__mfn_f32 exp_f16, log_f16, sin_f16, cos_f16, tanh_f16;
} hop__math;

/* A backend's table, from the functions its file defines under the same
 * names in every backend (exp_f32 ... sqrt_f64, b_pow_f32/_f64, u_<name>_f32/_f64 for
 * HOP__MATH_UNARY, b_<name>_f32/_f64 for HOP__MATH_BINARY): one list of the
 * members, so a backend cannot leave one out. */
#define HOP__MATH_ROW_U32(name, f) [HOP__MU_##name] = u_##name##_f32,
#define HOP__MATH_ROW_U64(name, f) [HOP__MU_##name] = u_##name##_f64,
#define HOP__MATH_ROW_B32(name, f) [HOP__MB_##name] = b_##name##_f32,
#define HOP__MATH_ROW_B64(name, f) [HOP__MB_##name] = b_##name##_f64,
#define HOP__MATH_TABLE(backend)                                                                   \
    {                                                                                              \
        .name = backend, .exp_f32 = exp_f32, .log_f32 = log_f32, .sin_f32 = sin_f32,               \
        .cos_f32 = cos_f32, .tanh_f32 = tanh_f32, .sigmoid_f32 = sigmoid_f32,                      \
        .sqrt_f32 = sqrt_f32, .exp_f64 = exp_f64, .log_f64 = log_f64, .sin_f64 = sin_f64,          \
        .cos_f64 = cos_f64, .tanh_f64 = tanh_f64, .sigmoid_f64 = sigmoid_f64,                      \
        .sqrt_f64 = sqrt_f64, .pow_f32 = b_pow_f32, .pow_f64 = b_pow_f64,                          \
        .unary_f32 = {HOP__MATH_UNARY(HOP__MATH_ROW_U32)},                                         \
        .unary_f64 = {HOP__MATH_UNARY(HOP__MATH_ROW_U64)},                                         \
        .binary_f32 = {HOP__MATH_BINARY(HOP__MATH_ROW_B32)},                                       \
        .binary_f64 = {HOP__MATH_BINARY(HOP__MATH_ROW_B64)}, .exp_f16 = exp_f32,                   \
        .log_f16 = log_f32, .sin_f16 = sin_f32, .cos_f16 = cos_f32, .tanh_f16 = tanh_f32,          \
    }

/* The backend chosen once (HOP_MATH and the CPU; the libm loops for an
 * unknown HOP_MATH, which hop_runtime_math_init reports). */
const hop__math *hop__math_get(void);
/* The math functions by name: X(name, f32 member, f64 member, arity), the
 * members of a hop__math (hop_runtime_math_adopt and _run). */
#define HOP__MATH_NAMED(X)                                                                         \
    X(exp, exp_f32, exp_f64, 1)                                                                    \
    X(log, log_f32, log_f64, 1)                                                                    \
    X(sin, sin_f32, sin_f64, 1)                                                                    \
    X(cos, cos_f32, cos_f64, 1)                                                                    \
    X(tanh, tanh_f32, tanh_f64, 1)                                                                 \
    X(sinh, unary_f32[HOP__MU_sinh], unary_f64[HOP__MU_sinh], 1)                                   \
    X(cosh, unary_f32[HOP__MU_cosh], unary_f64[HOP__MU_cosh], 1)                                   \
    X(asin, unary_f32[HOP__MU_asin], unary_f64[HOP__MU_asin], 1)                                   \
    X(acos, unary_f32[HOP__MU_acos], unary_f64[HOP__MU_acos], 1)                                   \
    X(asinh, unary_f32[HOP__MU_asinh], unary_f64[HOP__MU_asinh], 1)                                \
    X(acosh, unary_f32[HOP__MU_acosh], unary_f64[HOP__MU_acosh], 1)                                \
    X(atanh, unary_f32[HOP__MU_atanh], unary_f64[HOP__MU_atanh], 1)                                \
    X(cbrt, unary_f32[HOP__MU_cbrt], unary_f64[HOP__MU_cbrt], 1)                                   \
    X(log10, unary_f32[HOP__MU_log10], unary_f64[HOP__MU_log10], 1)                                \
    X(log2, unary_f32[HOP__MU_log2], unary_f64[HOP__MU_log2], 1)                                   \
    X(exp2, unary_f32[HOP__MU_exp2], unary_f64[HOP__MU_exp2], 1)                                   \
    X(expm1, unary_f32[HOP__MU_expm1], unary_f64[HOP__MU_expm1], 1)                                \
    X(log1p, unary_f32[HOP__MU_log1p], unary_f64[HOP__MU_log1p], 1)                                \
    X(tan, unary_f32[HOP__MU_tan], unary_f64[HOP__MU_tan], 1)                                      \
    X(atan, unary_f32[HOP__MU_atan], unary_f64[HOP__MU_atan], 1)                                   \
    X(pow, pow_f32, pow_f64, 2)                                                                    \
    X(atan2, binary_f32[HOP__MB_atan2], binary_f64[HOP__MB_atan2], 2)

/* The backend vmath.c chose (HOP_MATH and the CPU), whatever is adopted. */
const hop__math *hop__math_base(void);
/* vmath_numpy.c: NumPy 1.24's own float32 loop for name (exp, log, sin,
 * cos) at AVX-512 (avx512) or AVX2 width, NULL for another name; the
 * caller checks that the CPU runs it. */
hop__mfn_f32 hop__math_numpy_f32(const char *name, bool avx512);
/* Makes m the table hop__math_get returns (vmath_adopt.c). */
void hop__math_use(const hop__math *m);

/* The backend HOP_MATH=setting picks (NULL or "": unset, the widest the
 * CPU runs): "scalar" the libm loops, "avx2" at most AVX2, "sleef" as unset; anything else
 * NULL with HOP_INVALID naming the variable, the value and the valid ones. */
const hop__math *hop__math_choose(const char *setting);
/* The scalar libm backend (always available) and the SLEEF AVX2 and
 * AVX-512 ones (NULL when not built). */
extern const hop__math hop__math_scalar;
const hop__math *hop__math_sleef_avx2(void);
const hop__math *hop__math_sleef_avx512(void);

/* --------------------------------------------------------- other plans */

typedef struct hop__reduce {
    hop_op op;
    hop_dtype dtype; /* input */
    hop_dtype odtype;
    const char *x;
    char *out;
    int nkept, nred;
    int64_t kept_sizes[HOP_MAX_RANK], kept_xst[HOP_MAX_RANK], kept_ost[HOP_MAX_RANK];
    int64_t red_sizes[HOP_MAX_RANK], red_xst[HOP_MAX_RANK];
    int64_t nout, nred_total;
    /* a float sum or mean: its reduced dims are listed in NumPy's iteration
     * order (reduce.c, numpy_order), the last np_g0 of them the block that
     * NumPy's inner loop sums pairwise (0: each element its own) */
    int np_g0;
} hop__reduce;

/* How a matmul's work splits (matmul.c: hop__matmul_plan_units). */
typedef enum hop__mm_mode {
    HOP__MM_ROWS, /* units are blocks of rows x columns of one matrix: gemm each */
    HOP__MM_GEMV, /* one column: units are blocks of rows of one matrix */
    HOP__MM_COLS, /* one row, no batch: units are blocks of columns */
    HOP__MM_DOT,  /* a dot product: units are chunks of k, summed in order */
} hop__mm_mode;

typedef struct hop__matmul {
    hop_dtype dtype;
    const char *a, *b;
    char *c;
    int64_t n, k, m;
    int64_t ars, acs, brs, bcs, crs, ccs; /* matrix strides in elements */
    int nbatch;
    int64_t bsizes[HOP_MAX_RANK];
    int64_t abst[HOP_MAX_RANK], bbst[HOP_MAX_RANK], cbst[HOP_MAX_RANK];
    int64_t batch; /* product of bsizes */
    hop__mm_mode mode;
    int64_t chunk;  /* rows, columns or elements of k per unit */
    int64_t cchunk; /* HOP__MM_ROWS: columns per unit (chunk: rows) */
    bool merge;     /* GEMV/COLS read transposed: a piece's units are one call */
    int64_t units;  /* pieces take whole units; the thread count never changes a result */
    /* f32/f64 with an operand BLAS cannot read (hop__matmul_blas_ok): the
     * operands that are not contiguous run on contiguous copies, made when
     * the kernel runs (hop__matmul_pack), 1 a vector, 2 matrices; 0 as is */
    int8_t pack_a, pack_b;
} hop__matmul;

typedef struct hop__cat {
    bool stack;
    int dim;
    const hop_rt_arg *items; /* borrowed */
    size_t n;
    const hop_tensor *out;
    int64_t total; /* elements over all items */
} hop__cat;

typedef struct hop__arange {
    char *out;
    hop_dtype dtype;
    int64_t stride, n, start, step;
} hop__arange;

typedef enum hop__kkind {
    HOP__K_EW,
    HOP__K_REDUCE,
    HOP__K_MATMUL,
    HOP__K_CAT,
    HOP__K_ARANGE,
    HOP__K_NOP,
} hop__kkind;

/* Tensor operands among the first arguments whose data a plan reads
 * (where's three), and the int64 words of a kernel's operand record. */
#define HOP__K_NBASE 3
#define HOP__K_REC 112

/*
 * What a hop_kernel holds.  The plan's data pointers were taken from
 * base[i] (the data of argument i when it is a tensor) and obase (out's);
 * rec records everything else about the operands: kinds, scalar values,
 * and each tensor's dtype, rank, sizes and strides (nrec words, -1 when
 * they did not fit: such a kernel is never rebased).
 */
typedef struct hop__kernel {
    hop_op op;
    hop__kkind kind;
    int64_t work; /* abstract units for hop_kernel_tasks */
    union {
        hop__ew ew;
        hop__reduce red;
        hop__matmul mm;
        hop__cat cat;
        hop__arange ar;
    } p;
    uint32_t magic; /* HOP__K_MAGIC once prepared */
    int32_t nrec;
    const char *base[HOP__K_NBASE];
    const char *obase;
    int64_t rec[HOP__K_REC];
} hop__kernel;

#define HOP__K_MAGIC 0x6b726e6cu

/* ----------------------------------------------------------- shapes */

/* Whether t has rank `rank` and these sizes (kernel.c; its out checks and the
 * foreign kernels' in-place outputs). */
bool hop__same_sizes(const hop_tensor *t, int rank, const int64_t *sizes);

/* One eager/kernel call after operand conversion and shape inference. */
typedef struct hop__call {
    hop_op op;
    const hop_op_info *info;
    const hop_rt_arg *args;
    size_t nargs;
    hop_value_info res;
    int64_t sizes[HOP_MAX_RANK]; /* res's sizes as ints (tensor results) */
    int64_t sym;                 /* res's value (SymInt results) */
    hop_dtype promoted;          /* comparisons: the dtype they compare in */
} hop__call;

/* Converts operands, runs hop_op_infer in the calling thread's ShapeEnv and
 * fills c.  Errors as hop_eager's. */
hop_status hop__infer_call(hop__call *c, hop_op op, const hop_rt_arg *args, size_t nargs);

/* Prepares *k for c into out (the checks of hop_eager_out included). */
hop_status hop__kernel_prepare(hop__kernel *k, const hop__call *c, hop_tensor *out);
/* Runs all of k: on the pool when it is large, inline otherwise. */
void hop__kernel_run(const hop__kernel *k);
/* Work units (1 ~ one float add) worth a thread: a kernel with less work runs
 * as one task on the calling thread (hop__kernel_run), ~20 us. */
#define HOP__GRAIN 32768
/* Points k (prepared) at the data of args and out when they differ from
 * its operands only in their data pointers; no shape inference, no
 * allocation, no error set.  False (k unchanged) when anything else
 * differs or out would overlap an input as prepare refuses. */
bool hop__kernel_rebase(hop__kernel *k, const hop_rt_arg *args, size_t nargs, hop_tensor *out);
/* Whether k (prepared, rebasable) last ran on these data pointers: data[i]
 * argument i's (NULL: not a tensor), odata out's.  For operands whose
 * geometry and values the caller knows to be the ones k was prepared for
 * (a plan's fixed operands, program.h), true means k runs as it is. */
bool hop__kernel_at(const hop__kernel *k, const char *const *data, size_t nargs, const char *odata);

/* View geometry of c (a VIEW-family op).  With reshape, *needs_copy is set
 * (and HOP_OK returned) when the strides do not allow a view. */
hop_status hop__view_geometry(const hop__call *c, hop_view *v, bool *needs_copy);
/* fail_if's check: HOP_CHECK with kind's message (and where, the node's
 * text, when not NULL) when any element of the bool tensor flag is true. */
hop_status hop__check_flag(const hop_tensor *flag, int64_t kind, const char *where);

/* The start of a dynamic indexing op as given (an INT, or the value of an
 * integer tensor of one element), before hop_dynamic_start clamps it. */
int64_t hop__start_value(const hop_rt_arg *a);
/* dynamic_update_slice(x, update, dim, start) of c into t, a tensor of x's
 * shape and dtype that overlaps neither (shape_ops.c).  Cannot fail. */
void hop__dynamic_update(const hop__call *c, hop_tensor *t);

/* Plans of the other families (inputs checked already). */
void hop__reduce_init(hop__reduce *r, const hop__call *c, hop_tensor *out);
void hop__reduce_compute(const hop__reduce *r, int ith, int nth);
/* A full float sum or mean of one contiguous run (one output element)
 * shares its NumPy chunks (HOP__PW_CHUNK elements, pairwise.h) over the
 * pool: hop__reduce_chunks gives their count (0: r is not such a
 * reduction); pieces put the sums of chunks [c0, c1) in part[0..c1-c0), as
 * the one-piece run computes them; the caller adds them in order from 0 in
 * the dtype (hop__reduce_chunks_add, a round of parts at a time) and stores
 * the total (a mean: over the count).  The chunks depend on the length
 * alone, so every thread count gives the one-piece run's bits. */
int64_t hop__reduce_chunks(const hop__reduce *r);
void hop__reduce_chunk_sums(const hop__reduce *r, int64_t c0, int64_t c1, double *part);
double hop__reduce_chunks_add(const hop__reduce *r, double total, const double *part, int64_t n);
void hop__reduce_chunks_store(const hop__reduce *r, double total);
void hop__matmul_init(hop__matmul *m, const hop__call *c, hop_tensor *out);
void hop__matmul_compute(const hop__matmul *m, int ith, int nth);
/* Sets m's mode, chunk and units from its sizes (hop__matmul_init does). */
void hop__matmul_plan_units(hop__matmul *m);
/* HOP__MM_DOT: unit u's part of the dot product, in double (the caller adds
 * the units in order). */
double hop__matmul_dot_unit(const hop__matmul *m, int64_t u);
/* True when BLAS can read t's last two dims as they are. */
bool hop__matmul_blas_ok(const hop_tensor *t);
/* mm (pack_a or pack_b set) on contiguous copies of those operands: *out
 * reads them from mem[0] (a's) and mem[1] (b's), which the caller frees
 * (hop__free; NULL when not packed).  False when there is no memory for
 * them: *out is then mm on the operands as they are (no copies, no error
 * left set; the same values, other last bits). */
bool hop__matmul_pack(const hop__matmul *mm, hop__matmul *out, void *mem[2]);
/* Around every run of matmul pieces: BLAS on one thread (hop's own copy of
 * OpenBLAS set to 1 once; or the shared one's count set to 1 meanwhile and
 * restored after, see matmul.c).  Nest and overlap freely over threads; each
 * enter needs one leave. */
void hop__blas_enter(void);
void hop__blas_leave(void);
/* matmul_small.c: c (rows x m, row stride crs, unit column stride) = a
 * (rows x k, strides ars, acs) @ b (k x m, row stride brs, unit column
 * stride), f32, k >= 1; NULL when this CPU (or build) lacks AVX2+FMA.
 * matmul.c takes it for matrices of at most HOP__SMALL_MATMUL multiply-adds
 * and m >= HOP__SMALL_MATMUL_MIN_M (narrower ones waste most lanes). */
typedef void (*hop__sgemm_small_fn)(int64_t rows, int64_t m, int64_t k, const float *a, int64_t ars,
                                    int64_t acs, const float *b, int64_t brs, float *c,
                                    int64_t crs);
hop__sgemm_small_fn hop__sgemm_small(void);
/* matmul_small.c: y (len, stride incy) = x (k, stride incx) @ M (k x len, row
 * stride ld, unit column stride), f32 or f64, each y[j] `chains` (1, 2 or 4)
 * chains of FMAs (rows p = c mod chains in order) added pairwise; only where
 * hop__sgemm_small is not NULL (matmul.c: gemv_t, gemv_t_chains). */
void hop__gemv_t_avx2(hop_dtype dt, int chains, int64_t len, int64_t k, const void *x, int64_t incx,
                      const void *m, int64_t ld, void *y, int64_t incy);
#define HOP__SMALL_MATMUL 65536
#define HOP__SMALL_MATMUL_MIN_M 4
/* reduce_avx2.c: sum (mean: divided by n) and amax (sign 1) / amin (sign
 * -1) of `rows` contiguous rows of n >= 1 elements, row i at x + i * xs,
 * its result at out + i * os; the bits of reduce.c's one-run path (its
 * lanes in AVX registers).  NULL when this CPU (or build) lacks AVX2. */
typedef struct hop__rrows {
    void (*sum_f32)(const float *x, int64_t xs, int64_t n, bool mean, float *out, int64_t os,
                    int64_t rows);
    void (*sum_f64)(const double *x, int64_t xs, int64_t n, bool mean, double *out, int64_t os,
                    int64_t rows);
    void (*ext_f32)(const float *x, int64_t xs, int64_t n, int sign, float *out, int64_t os,
                    int64_t rows);
    void (*ext_f64)(const double *x, int64_t xs, int64_t n, int sign, double *out, int64_t os,
                    int64_t rows);
    /* sums (means) down n rows s apart, outputs [begin, end) contiguous */
    void (*down_f32)(const float *x, int64_t n, int64_t s, bool mean, float *out, int64_t begin,
                     int64_t end);
    void (*down_f64)(const double *x, int64_t n, int64_t s, bool mean, double *out, int64_t begin,
                     int64_t end);
} hop__rrows;
const hop__rrows *hop__reduce_rows_avx2(void);
/* Whether reductions may take hop__reduce_rows_avx2 (default true): tests
 * turn it off to compare with the portable loops. */
void hop__reduce_set_simd(bool on);
void hop__cat_compute(const hop__cat *c, int ith, int nth);
void hop__arange_compute(const hop__arange *a, int ith, int nth);
/*
 * Where an op of the INDEX family gets its memory.  result: a contiguous
 * tensor of dtype and sizes (one reference for the op's caller), NULL with
 * the error set; scratch: n bytes the op may use until it returns, NULL
 * with the error set.  NULL (eager) is hop_tensor_empty and hop's allocator
 * (freed before the op returns); a plan's OpAlloc gives the storage its
 * frame keeps between runs (runtime/frame.c), so a steady run allocates
 * nothing.
 */
typedef struct hop__imem {
    hop_tensor *(*result)(void *ud, hop_dtype dtype, int rank, const int64_t *sizes);
    void *(*scratch)(void *ud, size_t n);
    void *ud;
} hop__imem;
/* nonzero of x into a new tensor (from mem, or hop_tensor_empty). */
hop_tensor *hop__nonzero(const hop_tensor *x, const hop__imem *mem);
/* An op of the INDEX family (nonzero, cumsum, cumprod, sort, argsort,
 * take, dynamic_update_slice) into a new tensor in *out (scan_sort.c).  c needs op, info, args,
 * nargs, res.meta's dtype and rank, and sizes (not for nonzero, whose
 * sizes come from the data); mem as above (NULL: eager). */
hop_status hop__index_run(const hop__call *c, const hop__imem *mem, hop_tensor **out);
hop_status hop__index_eager(const hop__call *c, hop_rt_value *out);
/* The linalg ops (linalg.c, LAPACK) and the FFTs (fft.c, FFTW) into out, a
 * contiguous tensor of the result's dtype and sizes; as hop__index_run. */
hop_status hop__linalg_run(const hop__call *c, const hop__imem *mem, hop_tensor *out);
hop_status hop__fft_run(const hop__call *c, const hop__imem *mem, hop_tensor *out);
/* masked_sum into out, a contiguous tensor of the result's dtype and sizes,
 * with scratch of hop__masked_sum_scratch(x's dtype) bytes (masked_sum.c). */
hop_status hop__masked_sum_run(const hop__call *c, void *scratch, hop_tensor *out);
size_t hop__masked_sum_scratch(hop_dtype dtype);
/* Gives t - its own header, holding the only reference to its storage
 * (hop_tensor_refcount 1, storage refcount 1) - a contiguous geometry from
 * the storage's start; the storage must hold it.  The frame's kept late
 * tensors are reused this way (runtime/frame.c). */
void hop__tensor_set_contiguous(hop_tensor *t, hop_dtype dtype, int rank, const int64_t *sizes);

/* [begin, end) of piece ith of nth over n items, begins rounded to align. */
void hop__split(int64_t n, int ith, int nth, int64_t align, int64_t *begin, int64_t *end);

/* Metadata text of a tensor, truncated: never fails. */
typedef struct hop__ttext {
    char s[160];
} hop__ttext;
const char *hop__tensor_text(hop__ttext *t, const hop_tensor *x);
const char *hop__sizes_text_i(hop__ttext *t, const int64_t *sizes, int n);

/* The one rule for how large a tensor may be, shared by eager execution and
 * plans: sizes are non-negative and their product (*numel) is at most
 * SIZE_MAX / 16, computed without overflow (an empty dim makes any product
 * 0).  Otherwise HOP_NOMEM "<fn>: f32[...] is too large" (HOP_INVALID for a
 * negative size, a bad dtype or rank). */
hop_status hop__check_shape(const char *fn, hop_dtype dtype, int rank, const int64_t *sizes,
                            int64_t *numel);
/* hop_tensor_empty for a shape that already passed hop__check_shape (numel
 * its product): the eager fast path's result has its operands' valid shape,
 * so it does not check again.  NULL with HOP_NOMEM. */
hop_tensor *hop__tensor_empty_checked(hop_dtype dtype, int rank, const int64_t *sizes,
                                      int64_t numel);

/* t's geometry as a new dense tensor of its storage (sizes not in t): the
 * dims past rank zero, as whole arrays unless t already has this rank
 * (old_rank; -1: unknown), whose dims past it are zeros already; the
 * strides contiguous in one walk (an eager op's every result comes here). */
static inline __attribute__((always_inline)) void
hop__tensor_set_dense(hop_tensor *t, hop_dtype dtype, int rank, const int64_t *sizes, int old_rank)
{
    t->dtype = dtype;
    if (old_rank != rank) {
        memset(t->sizes, 0, sizeof t->sizes);
        memset(t->strides, 0, sizeof t->strides);
    }
    t->rank = rank;
    int64_t stride = 1;
    for (int i = rank - 1; i >= 0; i--) {
        t->sizes[i] = sizes[i];
        t->strides[i] = stride;
        stride *= sizes[i] > 0 ? sizes[i] : 1;
    }
    t->offset = 0;
    t->data = t->storage->data;
}

/* hop_tensor_recyclable, inline. */
static inline bool
hop__tensor_recyclable(const hop_tensor *t)
{
    if (t == NULL || t->flags_ != HOP__T_EMBEDDED ||
        __atomic_load_n(&t->refcount_, __ATOMIC_ACQUIRE) != 1)
        return false;
    const hop_storage *s = t->storage;
    return s->release == NULL && s->small != 0 && s->small <= HOP__SMALL_MAX &&
           __atomic_load_n(&s->refcount, __ATOMIC_ACQUIRE) == 1;
}

/* hop__tensor_recycle's other cases: spare released, a new tensor. */
hop_tensor *hop__tensor_recycle_slow(hop_tensor *spare, hop_dtype dtype, int rank,
                                     const int64_t *sizes, int64_t numel);

/*
 * hop__tensor_empty_checked in spare's block (esize: dtype's element size)
 * when spare is recyclable (hop__tensor_recyclable) and its block holds
 * numel elements: spare itself, its geometry rewritten, counted as an
 * allocation (hop__count_reuse); else spare is released and a new tensor
 * made.  The caller hands over its reference to spare.  NULL with
 * HOP_NOMEM (spare released).
 */
static inline __attribute__((always_inline)) hop_tensor *
hop__tensor_recycle(hop_tensor *spare, hop_dtype dtype, int rank, const int64_t *sizes,
                    int64_t numel, size_t esize)
{
    if (!hop__tensor_recyclable(spare))
        return hop__tensor_recycle_slow(spare, dtype, rank, sizes, numel);
    hop_storage *s = spare->storage;
    size_t nbytes = (size_t)numel * esize;
    if (nbytes > s->small - (size_t)((char *)s->data - (char *)s->block))
        return hop__tensor_recycle_slow(spare, dtype, rank, sizes, numel);
    if (!hop__count_reuse(s->small)) {
        hop_tensor_release(spare);
        return NULL;
    }
    s->nbytes = nbytes;
    hop__tensor_set_dense(spare, dtype, rank, sizes, spare->rank);
    return spare;
}

/* ------------------------------------------------------------- FP status */

/* A kernel's report of an exception no IEEE operation raised (HOP_FP_*: an
 * integer division by zero), for hop_fp_status on this thread. */
void hop__fp_note(int flags);
/* The binary16 of float f as hop_f16_from_float, noting overflow (a finite f
 * became an infinity) and underflow (an inexact f below 2^-14) as NumPy's
 * npy_float_to_half raises them: every float16 result hop computes in float
 * is stored through this (runtime/convert.c). */
uint16_t hop__f16_noted(float f);
/* hop_fp_status, then cleared: a pool worker hands its flags to the job. */
int hop__fp_take(void);

/* ------------------------------------------------------------- pool */

typedef void (*hop__task_fn)(const void *ctx, int ith, int nth);
/* Runs fn(ctx, i, nth) for i in [0, nth) on the pool and waits.  nth is
 * capped by the number of threads; nth 1 (or a busy pool) runs inline.
 * work: the job's estimated units (~ a float add each; 0 unknown), which
 * sorts its kind's figures by size (hop__pool_run_pieces). */
void hop__pool_run(hop__task_fn fn, const void *ctx, int nth, int64_t work);
/* The same for a job that always takes the pool (tests use it to make a
 * job split); while the caller waits for pieces that other threads run, it
 * calls poll(pctx) every few milliseconds. */
void hop__pool_run_polled(hop__task_fn fn, const void *ctx, int nth, void (*poll)(const void *),
                          const void *pctx);
/* A plan's parallel loop (runtime/parmap.c): as hop__pool_run with work,
 * judged as a kind of its own per key (the loop), and with poll as in
 * hop__pool_run_polled.  When the job is split, setup(ctx) runs on the
 * caller first (before any piece); when it is not - one thread, a busy
 * pool, or a loop that ran faster on the caller alone (pool.c) - the
 * caller runs fn(ctx, 0, 1) without setup. */
void hop__pool_run_loop(hop__task_fn fn, const void *ctx, int nth, int64_t work, const void *key,
                        void (*setup)(const void *ctx), void (*poll)(const void *),
                        const void *pctx);
/* Runs fn(ctx, i, pieces) for every piece i in [0, pieces) and waits: on
 * up to hop_runtime_threads() threads, the caller included, each claiming
 * the next free piece.  pieces may exceed the threads (capped at 65535):
 * split a large job into pieces of some tens of microseconds, so that a
 * thread the OS deschedules holds the others back by one piece at most.
 * work as for hop__pool_run; poll as in hop__pool_run_polled (NULL: none).
 * One thread, a busy pool, a call from inside a piece, or (poll NULL) a
 * kind of job - fn and the size class of work - whose last jobs ran faster
 * on the caller alone than split on the pool (pool.c) runs the whole job inline
 * as fn(ctx, 0, 1), which must do all of it (as for hop__pool_run). */
void hop__pool_run_pieces(hop__task_fn fn, const void *ctx, int pieces, int64_t work,
                          void (*poll)(const void *), const void *pctx);
/* Stops the workers (they restart on demand). */
void hop__pool_stop(void);
/* For tests: the pool's decisions for a kind of job, without running one.
 * choose: whether the next job of kind (fn, key, work) at time now (ns, as
 * hop__monotonic_ns) takes the pool; record: such a job took ns of wall
 * time, on the pool or on the caller alone, cold when it lasted under 1 ms
 * and a worker had woken from its sleep less than 1 ms before it began,
 * split when on the pool both the caller and a worker ran pieces of it. */
bool hop__pool_choose(hop__task_fn fn, const void *key, int64_t work, int64_t now);
void hop__pool_record(hop__task_fn fn, const void *key, int64_t work, bool pool, bool cold,
                      bool split, int64_t ns, int64_t now);
/* For tests: a worker that saw a new job calls this (when not NULL) before
 * it takes a seat of the job, so a test can make it late. */
extern void (*hop__pool_seat_hook)(void);

/* The next index of dims [lo, hi) of an odometer over sizes (the last dim
 * fastest); false when it has gone round (the reductions' walk). */
static inline bool
hop__odometer(int64_t *idx, const int64_t *sizes, int lo, int hi)
{
    for (int d = hi - 1; d >= lo; d--) {
        if (++idx[d] < sizes[d])
            return true;
        idx[d] = 0;
    }
    return false;
}

#endif /* HOP_RUNTIME_INTERNAL_H */
