/*
 * hop/runtime.h - concrete tensors, the CPU kernels, the thread pool and
 * eager ops (one op run at once on concrete tensors).  The runtime layer
 * also runs plans (hop/plan.h) and foreign kernels (hop/foreign.h).
 *
 * A tensor is a refcounted header (dtype, sizes, strides and offset in
 * elements) over a refcounted storage.  Views share the storage.  A storage
 * either owns 64-byte aligned memory or wraps external memory (a NumPy
 * buffer, say) with a release callback.
 *
 * Three ways to run an op of HOP_OP_LIST:
 *   hop_eager      run one op on concrete operands, returning a new tensor
 *                  (or an int64 for item and sym_size); dtype and shape rules
 *                  are those of hop_op_infer.
 *   hop_eager_out  run it into a preallocated output tensor (no allocation).
 *   hop_kernel_*   prepare a call once, then run it in pieces (ith, nth) on
 *                  threads of your own, as the plan interpreter does.
 * View ops (reshape/view, transpose, permute, unsqueeze, squeeze, expand,
 * select, slice) share storage: hop_view_compute gives a view's geometry
 * (hop_view_of's, hop/ops.h) without allocating and hop_tensor_init_borrowed
 * applies it to a header the caller owns.
 *
 * Defined behaviour on data (never a crash, never C undefined behaviour):
 *   - div is true division, so integer operands are divided as f32: x / 0 is
 *     inf, -inf or nan (0 / 0), as in PyTorch.
 *   - Integer add/sub/mul/pow/neg/abs/sum/matmul wrap around modulo 2^bits
 *     (two's complement), as in PyTorch.
 *   - Integer pow with a negative exponent is PyTorch's: 1 for base 1, +-1 for
 *     base -1 (by the exponent's parity), 0 otherwise (so 0 ** -1 is 0).
 *   - Float to integer conversion (to, and scalars converted to an integer
 *     dtype) truncates toward zero and saturates: nan gives 0, values beyond
 *     the range give the dtype's minimum or maximum.  i64 to i32 keeps the
 *     low 32 bits.  Anything to bool is x != 0 (nan is true).  A Python
 *     scalar operand is converted to the dtype the op computes in
 *     (i32 tensor + 2 computes in i32, i32 tensor + 2.5 in f32).
 *   - maximum/minimum/amax/amin propagate nan; argmax takes the first nan as
 *     the maximum; the mean of nothing is nan, the sum of nothing is 0.
 *   - Small dtypes: integer to narrower (or signed/unsigned) integer keeps the
 *     low bits, as NumPy's astype; float to u8/u64 saturates to [0, max].
 *     The sum of an unsigned dtype is u64 (of bool and signed ones i64).
 *     f16 is computed in f32 and every result is rounded back to f16 (to
 *     nearest even), also inside fused groups, so each op rounds once as
 *     NumPy's float16 loops do; a Python scalar operand of an f16 op is
 *     rounded to f16 first (x * 0.1 multiplies by f16(0.1)).
 */
#ifndef HOP_RUNTIME_H
#define HOP_RUNTIME_H

/* The build checks the layering: a layer may include this header only if
 * it links the runtime layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_RUNTIME)
#error "hop/runtime.h belongs to the runtime layer, which this layer does not link"
#endif

#include "hop/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- tensors */

typedef struct hop_storage hop_storage;

/* Called once when a storage that wraps external memory dies. */
typedef void (*hop_release_fn)(void *user_data, void *data);

/*
 * A tensor header.  Read its fields freely; change them only through the
 * functions below.  Element (i0, i1, ...) lives at
 * data + (i0*strides[0] + i1*strides[1] + ...) * hop_dtype_size(dtype).
 */
typedef struct hop_tensor {
    hop_dtype dtype;
    int rank;
    int64_t sizes[HOP_MAX_RANK];
    int64_t strides[HOP_MAX_RANK]; /* in elements, >= 0 */
    int64_t offset;                /* in elements, from the storage's start */
    void *data;                    /* the first element: storage start + offset */
    hop_storage *storage;
    long refcount_;  /* private: use hop_tensor_retain/release */
    unsigned flags_; /* private */
} hop_tensor;

/*
 * A new contiguous tensor with uninitialised (hop_tensor_empty) or zeroed
 * (hop_tensor_zeros) data, 64-byte aligned, refcount 1.  sizes may be NULL
 * for rank 0.  NULL on error: HOP_INVALID for an invalid dtype, a rank
 * outside [0, HOP_MAX_RANK] or a negative size; HOP_NOMEM (also when the
 * byte size overflows).  The caller owns the result (hop_tensor_release).
 */
hop_tensor *hop_tensor_empty(hop_dtype dtype, int rank, const int64_t *sizes);
hop_tensor *hop_tensor_zeros(hop_dtype dtype, int rank, const int64_t *sizes);
/* The same, filled with a copy of numel elements from data (C order). */
hop_tensor *hop_tensor_from_data(hop_dtype dtype, int rank, const int64_t *sizes, const void *data);

/*
 * Wraps external memory without copying: a tensor of the given sizes and
 * strides (NULL strides: contiguous) whose elements are read from data.
 * The storage spans nbytes bytes from data; every element the strides reach
 * must lie inside.  data must be aligned to the element size.  When the last
 * tensor using the storage dies, release(user_data, data) is called (release
 * may be NULL).  NULL on error (HOP_INVALID for bad geometry, alignment or
 * strides < 0; HOP_NOMEM) and then release is NOT called: the caller keeps
 * the memory.
 */
hop_tensor *hop_tensor_wrap(hop_dtype dtype, int rank, const int64_t *sizes, const int64_t *strides,
                            void *data, size_t nbytes, hop_release_fn release, void *user_data);

/*
 * A new tensor header over base's storage (base keeps its own reference):
 * the given sizes, strides (in elements, >= 0) and offset (in elements from
 * the storage's start), base's dtype.  Every element reached must lie inside
 * the storage, else HOP_INVALID.  NULL on error.  The caller owns the result.
 */
hop_tensor *hop_tensor_view(hop_tensor *base, int rank, const int64_t *sizes,
                            const int64_t *strides, int64_t offset);

/*
 * Fills a header that the caller owns (on the stack, in a plan's slots) as
 * the view (rank, sizes, strides, offset) of base's storage.  No allocation
 * and no reference: dst borrows base's storage, so it is valid while base
 * lives.  Never retain or release such a header.  HOP_INVALID as for
 * hop_tensor_view (dst is then unchanged).
 */
hop_status hop_tensor_init_borrowed(hop_tensor *dst, const hop_tensor *base, int rank,
                                    const int64_t *sizes, const int64_t *strides, int64_t offset);

/* Adds a reference and returns t (NULL gives NULL).  Thread-safe. */
hop_tensor *hop_tensor_retain(hop_tensor *t);
/* Drops a reference; the last one frees the header and drops the storage's
 * reference (the last storage reference frees or releases its memory).
 * NULL is a no-op.  Thread-safe. */
void hop_tensor_release(hop_tensor *t);
/* The tensor's reference count (for tests and debugging). */
long hop_tensor_refcount(const hop_tensor *t);
/* True when t can be recycled as a new result (hop_eager_quick_spare): the
 * caller holds its only reference, no view shares its storage, and it was
 * made in one small block (hop_tensor_empty and the ops' results up to 8
 * KiB, not hop_tensor_wrap or a view).  Thread-safe for the holder of that
 * reference; false for NULL. */
bool hop_tensor_recyclable(const hop_tensor *t);
/* True when the caller holds t's only reference and no other header (a view)
 * shares its storage, and that storage is not external memory with a release
 * function (hop_tensor_wrap of a NumPy array's buffer): writing into t
 * reaches nothing else.  An eager HOP call copies a result
 * for which this is false (hop/graph_eval.c).  False for NULL. */
bool hop_tensor_owns_storage(const hop_tensor *t);

/* Number of elements (1 for rank 0). */
int64_t hop_tensor_numel(const hop_tensor *t);
/* True when the strides are C-contiguous (row-major), and Fortran-contiguous
 * (column-major: the first dim's stride is 1); dims of size 1 are ignored. */
bool hop_tensor_is_contiguous(const hop_tensor *t);
bool hop_tensor_is_f_contiguous(const hop_tensor *t);
/* NumPy's memory order of an array's dims (its iterator's
 * npyiter_find_best_axis_ordering), the order NumPy computes in (a sum adds
 * in it, a new result of the array is laid out in it): perm[0] outermost,
 * perm[rank - 1] innermost, the dims sorted by |stride| (any unit, the
 * larger outer) by a stable insertion sort from C order in which a dim of
 * stride 0 or of size 1 compares with none.  True when that is C order. */
bool hop_memory_order(int rank, const int64_t *sizes, const int64_t *strides, int *perm);
/* True when a and b use the same storage. */
bool hop_tensor_shares_storage(const hop_tensor *a, const hop_tensor *b);
/* Bytes of the storage and its start. */
size_t hop_storage_nbytes(const hop_storage *s);
void *hop_storage_data(const hop_storage *s);

/* t itself (one more reference) when contiguous, else a contiguous copy.
 * NULL on HOP_NOMEM.  The caller owns the result. */
hop_tensor *hop_tensor_contiguous(hop_tensor *t);

/* The one element of a tensor with numel 1, converted to double or int64
 * (floats truncate and saturate as `to` does).  HOP_SHAPE naming the
 * metadata when numel != 1. */
hop_status hop_tensor_item_double(const hop_tensor *t, double *out);
hop_status hop_tensor_item_int(const hop_tensor *t, int64_t *out);

/* `f32[2, 3]`, snprintf contract (as hop_meta_print). */
size_t hop_tensor_print_meta(const hop_tensor *t, char *buf, size_t cap);

/* ------------------------------------------------------------ operands */

/*
 * An operand of a runtime op: a concrete tensor, a scalar, a dtype, a list
 * or nothing; the kinds are hop_operand_kind's (HOP_OPND_SYM is refused: the
 * runtime needs concrete values).  The argument lists per op are those of
 * HOP_OP_LIST in hop/ops.h.  Plain values; tensors and list items are
 * borrowed.
 */
typedef struct hop_rt_arg {
    hop_operand_kind kind;
    union {
        hop_tensor *tensor;
        int64_t i;
        double f;
        bool b;
        hop_dtype dtype;
        struct {
            const struct hop_rt_arg *items;
            size_t n;
        } list;
    } u;
} hop_rt_arg;

/*
 * Constructors of the scalar operands (hop_rt_none and hop_rt_list below
 * are the others).  Member assignments, not a compound literal or
 * designated initialisers, so that the header compiles as C++ too; one
 * macro writes the five alike.
 */
#define HOP_RT_ARG_CTOR(name, type, opnd_kind, member)                                             \
    static inline hop_rt_arg name(type v)                                                          \
    {                                                                                              \
        hop_rt_arg a;                                                                              \
        a.kind = opnd_kind;                                                                        \
        a.u.member = v;                                                                            \
        return a;                                                                                  \
    }
HOP_RT_ARG_CTOR(hop_rt_tensor, hop_tensor *, HOP_OPND_TENSOR, tensor)
HOP_RT_ARG_CTOR(hop_rt_int, int64_t, HOP_OPND_INT, i)
HOP_RT_ARG_CTOR(hop_rt_float, double, HOP_OPND_FLOAT, f)
HOP_RT_ARG_CTOR(hop_rt_bool, bool, HOP_OPND_BOOL, b)
HOP_RT_ARG_CTOR(hop_rt_dtype, hop_dtype, HOP_OPND_DTYPE, dtype)
#undef HOP_RT_ARG_CTOR

static inline hop_rt_arg
hop_rt_none(void)
{
    hop_rt_arg a;
    a.kind = HOP_OPND_NONE;
    a.u.i = 0;
    return a;
}

static inline hop_rt_arg
hop_rt_list(const hop_rt_arg *items, size_t n)
{
    hop_rt_arg a;
    a.kind = HOP_OPND_LIST;
    a.u.list.items = items;
    a.u.list.n = n;
    return a;
}

/* What an eager op produced: a tensor (owned by the caller) or an int. */
typedef struct hop_rt_value {
    hop_value_kind kind; /* HOP_VALUE_TENSOR or HOP_VALUE_SYM (an int) */
    hop_tensor *tensor;
    int64_t i;
} hop_rt_value;

/* -------------------------------------------------------------- eager */

/*
 * Runs op on concrete operands.  The result's dtype and shape are those of
 * hop_op_infer (its error messages too: "add: cannot broadcast f32[3, 4]
 * with f32[5]").  Views share storage with their input (reshape copies only
 * when the input's strides do not allow a view).  item gives the element as
 * an int (integer and bool tensors), sym_size the size, nonzero a new
 * i64[n, rank] tensor of the indices of the nonzero elements in C order.
 * On success *out holds the result; the caller owns out->tensor.  On error
 * *out is {HOP_VALUE_NONE, NULL, 0} and the code is HOP_INVALID (operands),
 * HOP_SHAPE, HOP_DTYPE, HOP_UNSUPPORTED or HOP_NOMEM.
 */
hop_status hop_eager(hop_op op, const hop_rt_arg *args, size_t nargs, hop_rt_value *out);
/* The same for ops that give a tensor: the new tensor, or NULL on error
 * (HOP_INVALID too when the op gives an int). */
hop_tensor *hop_eager_tensor(hop_op op, const hop_rt_arg *args, size_t nargs);
/*
 * hop_eager's quick path alone, for a front end's commonest call: op on two
 * tensors a and b (b NULL: on a alone) when they are dense (C order from
 * their first element), of one dtype and one shape and small (at most 4096
 * elements, less than a piece worth a thread), op is add, sub, mul, div,
 * maximum or minimum (f32, f64; but div, i32, i64) or a float function of
 * one f32 or f64 tensor (neg, abs, exp, sin, ...).  Then it returns true
 * and *out is the new tensor, the one hop_eager would give (the caller owns
 * it), or NULL on error (HOP_NOMEM).  Else it returns false having done
 * nothing (*out NULL): call hop_eager.  (What a number protocol's `a + b`
 * calls first: no operand array, no result union, no inference.)
 */
bool hop_eager_quick(hop_op op, const hop_tensor *a, const hop_tensor *b, hop_tensor **out);
/*
 * hop_eager_quick that may compute into a dead tensor's memory: spare (NULL:
 * none; neither a nor b) is a tensor whose last reference the caller hands
 * over when the call applies.  Then (true) *out is spare itself, its geometry rewritten,
 * when spare is recyclable (hop_tensor_recyclable) and its block holds the
 * result, else a new tensor (spare released); NULL on error (HOP_NOMEM,
 * spare released).  A reuse counts as an allocation (hop_alloc_count,
 * hop_alloc_bytes; the fault injector can fail it) but not in
 * hop_alloc_live, which counted spare's block all along.  When it does not
 * apply (false, *out NULL) spare is untouched and still the caller's.  For a
 * front end that keeps its dead results' tensors (hop.Tensor's `a + b`).
 */
bool hop_eager_quick_spare(hop_op op, const hop_tensor *a, const hop_tensor *b, hop_tensor *spare,
                           hop_tensor **out);
/*
 * hop_eager_quick_spare for op on a tensor a and a scalar s (an int, or a
 * float when a is f32 or f64), s the left operand when s_first (`2.0 - a`):
 * a dense, small, add, sub, mul, div, maximum or minimum on an f32 or f64
 * tensor with an int or float scalar, or on an i32 or i64 tensor with an
 * int (not div).  The result has a's dtype and sizes, as hop_eager gives
 * it: the scalar is converted to a's dtype first (a weak scalar, as
 * NumPy's), and every element computed by the function hop_eager would
 * use.  Anything else returns false having done nothing.  (`x * 1.5` from
 * Python: hop_eager's general path took ~6x the time of `a + b`.)
 */
bool hop_eager_quick_scalar(hop_op op, const hop_tensor *a, const hop_rt_arg *s, bool s_first,
                            hop_tensor *spare, hop_tensor **out);

/*
 * Runs op into out, which must have exactly the inferred dtype and sizes
 * (any strides without zeros on dims of size > 1), else HOP_SHAPE/HOP_DTYPE
 * "add: out is f32[3] but the result is f32[2, 3]".  out may be one of the
 * inputs when the op is elementwise and out has that input's exact geometry
 * (in place); any other overlap of out with an input is HOP_INVALID.  View
 * ops copy the view into out.  Allocates nothing once the calling thread's
 * ShapeEnv has seen these sizes (shape inference interns sizes it has not
 * seen, and a cat/stack of more than 64 tensors needs a temporary operand
 * array).  item, sym_size and nonzero are HOP_UNSUPPORTED here (use
 * hop_eager).  On error out's data is unchanged.
 */
hop_status hop_eager_out(hop_op op, const hop_rt_arg *args, size_t nargs, hop_tensor *out);

/* --------------------------------------------------------------- views */

/*
 * The geometry of a view op's result (args[0] is the input tensor), without
 * allocating or copying: hop_view_of (hop/ops.h) after the op's checks.  Errors as hop_eager;
 * besides, reshape and view of strides that cannot be viewed are HOP_SHAPE ("view: cannot view
 * f32[3, 4] with strides [1, 3] as [12]; use reshape").  HOP_INVALID for an op that is not a view
 * op.
 */
hop_status hop_view_compute(hop_op op, const hop_rt_arg *args, size_t nargs, hop_view *out);

/* ------------------------------------------------------------- kernels */

/* A prepared kernel call: plain memory the caller owns (stack, plan). */
#define HOP_KERNEL_BYTES 1536
typedef struct hop_kernel {
    union {
        int64_t i;
        double d;
        void *p;
        unsigned char bytes[HOP_KERNEL_BYTES];
    } u;
} hop_kernel;

/*
 * Prepares op on args into out with every check hop_eager_out makes (the same
 * errors), so that running it cannot fail; allocates as hop_eager_out does.
 * *k borrows the tensors of args and out: they must stay alive and keep
 * their geometry and data pointers while k is used (or be given to
 * hop_kernel_rebase).  The args array itself may go, except the items array
 * of a cat/stack list, which k borrows too.  A prepared kernel may be
 * copied with memcpy.
 */
hop_status hop_kernel_prepare(hop_kernel *k, hop_op op, const hop_rt_arg *args, size_t nargs,
                              hop_tensor *out);
/* How many pieces are worth running the kernel in, at most `threads`: 1 for
 * small work, where splitting costs more than it gains. */
int hop_kernel_tasks(const hop_kernel *k, int threads);
/*
 * Runs piece ith of nth (0 <= ith < nth): the kernel splits its work itself
 * (ggml style), so running every ith in [0, nth), in any order or on any
 * threads, runs the whole op.  Pieces never write the same element.
 */
void hop_kernel_compute(const hop_kernel *k, int ith, int nth);
/* Runs all of it: on the thread pool when it is large, inline otherwise. */
void hop_kernel_run(const hop_kernel *k);
/*
 * Points a prepared kernel at new operands that differ from those it was
 * prepared with only in their data pointers: the same op, argument kinds
 * and scalar values, and tensors (out too) of the same dtype, sizes and
 * strides, as the rows of a map are.  No shape inference and no allocation,
 * so much cheaper than preparing again; k then borrows the new tensors (and
 * a cat/stack list's new items array).  Errors leave k unchanged:
 * HOP_INVALID when anything but the data pointers differs, or when out
 * would overlap an input as hop_kernel_prepare refuses (its message);
 * HOP_UNSUPPORTED for a kernel with too many operands to remember (a cat
 * of many tensors); HOP_MISUSE for a NULL or unprepared k.  Prepare again
 * after any error.
 */
hop_status hop_kernel_rebase(hop_kernel *k, const hop_rt_arg *args, size_t nargs, hop_tensor *out);

/* ------------------------------------------------------------- threads */

/*
 * Any thread may run eager ops and kernels at the same time as others: each
 * thread infers shapes in its own ShapeEnv, and a large kernel that finds
 * the pool busy with another thread's kernel runs inline.  hop's BLAS runs
 * on one thread (the pool is the only source of parallelism) and is a copy
 * of OpenBLAS of hop's own, so a shared OpenBLAS in the process (NumPy's)
 * keeps its thread count; built without that copy, the shared count is set
 * to 1 only while hop's matmuls run.
 */

/*
 * Number of threads large kernels use, including the caller; n <= 0 means
 * the number of cores (the default).  Workers are started lazily; a thread
 * that cannot be created just leaves its share to the others.  Lowering it
 * leaves started workers parked (asleep), so switching back costs nothing;
 * hop_runtime_shutdown stops them.  Do not call it while kernels run.
 */
void hop_runtime_set_threads(int n);
int hop_runtime_threads(void);

/*
 * The floating-point exceptions kernels raised on this thread since
 * hop_fp_clear: HOP_FP_* bits, from the thread's IEEE flags, the pool
 * pieces it waited for (their workers' flags) and the integer kernels'
 * reports (a division by zero, MIN // -1 -- NumPy 1.24's integer loops
 * report them as these flags).  A front end clears, runs, and reads, to
 * warn as NumPy does; a set bit may be spurious (a SIMD lane past the end,
 * both sides of a select), never missing for what an IEEE operation of the
 * result raised.  Never fails.
 */
enum { HOP_FP_DIVIDE = 1, HOP_FP_OVERFLOW = 2, HOP_FP_UNDERFLOW = 4, HOP_FP_INVALID = 8 };
int hop_fp_status(void);
void hop_fp_clear(void);

/*
 * Runs fn(ctx, ith, nth) for every ith in [0, nth) and returns when all are
 * done: on the pool's threads, the caller included.  nth is capped by
 * hop_runtime_threads() (the pieces are then fewer: split work by the nth
 * fn receives).  A call from inside a piece, or while another thread's
 * kernel holds the pool, runs every piece inline, and so does one whose fn
 * ran faster on the caller alone than on the pool in its last calls (the
 * pool times both ways per fn and tries the other way again now and then).
 * fn must give the same result whichever way it runs.  Never fails.
 */
typedef void (*hop_parallel_fn)(const void *ctx, int ith, int nth);
void hop_runtime_parallel(hop_parallel_fn fn, const void *ctx, int nth);
/* The same with an estimate of the job's work (units of about a float add,
 * e.g. the elements it touches): the pool keeps its figures per fn and size
 * class of work, so one fn called at very different sizes is judged at each
 * size on its own (hop_runtime_parallel: all sizes as one). */
void hop_runtime_parallel_work(hop_parallel_fn fn, const void *ctx, int nth, int64_t work);
/* The same split into `pieces` pieces whatever the thread count: each
 * thread claims the next piece left, so a thread descheduled mid-job (a
 * busy machine) holds back only the piece in its hands, and the caller runs
 * the pieces a late worker has not started.  fn sees (i, pieces) for each
 * piece, or (0, 1) once when the job runs whole on the caller (one thread,
 * a call from a piece, a busy pool, or a kind that ran faster alone): it
 * must then do all of it.  Never fails. */
void hop_runtime_parallel_pieces(hop_parallel_fn fn, const void *ctx, int pieces, int64_t work);

/*
 * What the pool has done since the process started (for tests and
 * benchmarks): jobs it split over its threads (split), jobs of a kind that
 * ran faster on the caller alone and so ran whole on it (whole), and the
 * pieces of split jobs the caller and the workers ran.  Jobs too small to
 * split, or run on one thread, are in none of them.
 */
typedef struct hop_pool_counts {
    long split, whole, caller_pieces, worker_pieces;
} hop_pool_counts;
void hop_runtime_pool_counts(hop_pool_counts *c);

/* Stops the pool's workers (they restart on demand) and frees the calling
 * thread's eager state (its ShapeEnv for shape inference).  For leak
 * checkers, tests and library unload.  A thread's eager state is also
 * freed when the thread exits (so a joined worker's is gone). */
void hop_runtime_shutdown(void);
/* Frees only the calling thread's eager state. */
void hop_runtime_thread_cleanup(void);

/* "sleef-avx512", "sleef-avx2" or "scalar": how exp/log/sin/cos/tanh/
 * sigmoid/pow/... run; "sleef-avx512+adopted" once a function is adopted. */
const char *hop_runtime_math_backend(void);

/*
 * Runs another library's AVX-512 vector function for one math function
 * from now on: name is one of exp log sin cos tanh sinh cosh asin acos
 * asinh acosh atanh cbrt log10 log2 exp2 expm1 log1p tan atan pow atan2,
 * dtype HOP_F32 or HOP_F64 (or HOP_F16 for exp log sin cos tanh: the float32
 * function a float16 array's rounds from, which NumPy takes from SVML
 * where its float32 arrays run loops of its own), fn a function of the
 * x86-64 vector ABI taking
 * and returning one zmm register (16 floats or 8 doubles; two arguments
 * for pow and atan2), as SVML's __svml_exp8 or
 * glibc's _ZGVeN8v_exp; NULL returns to hop's own.  For a front end that
 * must answer another library's bits (Python's `import hop` adopts NumPy's
 * SVML functions that reproduce NumPy's ufuncs bit for bit: see
 * docs/ARCHITECTURE.md).  Call it before computing: kernels already running
 * may use either.  Returns HOP_OK, or HOP_INVALID (unknown name or dtype)
 * or HOP_UNSUPPORTED (the backend in use is not sleef-avx512, because of
 * HOP_MATH or the build, or the CPU lacks AVX-512 F/CD/BW/DQ/VL) with the
 * error set and nothing changed.
 */
int hop_runtime_math_adopt(const char *name, hop_dtype dtype, void *fn);

/* What an adopted one-argument function answers where its argument is a
 * NaN (hop_runtime_math_adopt_nan). */
typedef enum hop_math_nan {
    HOP_MATH_NAN_OWN,     /* whatever the function answers (the default) */
    HOP_MATH_NAN_DEFAULT, /* the positive default NaN (0x7fc00000, 0x7ff8000000000000) */
    HOP_MATH_NAN_OPERAND, /* the NaN argument itself, even signalling; the function sees 1.0 */
} hop_math_nan;

/*
 * Sets what the adopted function name at dtype (one of the one-argument
 * ones) answers wherever its argument is a NaN; adopting name again or
 * returning to hop's own sets HOP_MATH_NAN_OWN.  Two NumPy 1.24 loops
 * around functions SVML reproduces differ from them only there: its tanh
 * (a loop of its own) answers the default NaN for any NaN, SVML's tanh the
 * NaN it was given; its float64 expm1 loop hands SVML 1.0 in a NaN's lane
 * and answers the NaN itself, where SVML's expm1 quiets a signalling one.
 * Either way the lane's compare raises invalid for a signalling NaN, as
 * NumPy's does; nothing else raises a flag.  Returns HOP_OK, or
 * HOP_INVALID (a two-argument or unknown name, dtype not HOP_F32 or
 * HOP_F64, name not adopted at dtype, or an unknown mode) with the error
 * set and nothing changed.
 */
int hop_runtime_math_adopt_nan(const char *name, hop_dtype dtype, hop_math_nan mode);

/*
 * Runs hop's reproduction of NumPy 1.24's own float32 loop for math
 * function name (exp, log, sin or cos) from now on (on), or the backend's
 * own again (!on).  NumPy computes these four with loops of its own (not
 * SVML, and not exported) on CPUs with AVX2 and FMA3 or AVX512F; hop's copy
 * does the same operations in the same order, so each element's bits and
 * floating-point flags are NumPy's (docs/ARCHITECTURE.md, "Math functions
 * with NumPy's bits"); accuracy is NumPy's (up to 2.5 ulp for exp, 3.8 for
 * log, 1.5 for sin and cos; SLEEF's are within 1).  Call it before
 * computing, as hop_runtime_math_adopt.  Returns HOP_OK, HOP_INVALID (not
 * one of the four, or dtype not HOP_F32) or HOP_UNSUPPORTED (the backend
 * in use is not sleef-avx2 or sleef-avx512: HOP_MATH=scalar, a build
 * without SLEEF, or a CPU without AVX2 and FMA, where NumPy runs libm's
 * functions as hop's scalar backend does) with the error set and nothing
 * changed.  The backend's name gets "+adopted" while one is on.
 */
int hop_runtime_math_adopt_numpy(const char *name, hop_dtype dtype, bool on);

/* Runs math function name (as hop_runtime_math_adopt's) of the backend in
 * use over n contiguous elements of dtype HOP_F32 or HOP_F64: out = f(a),
 * or f(a, b) for pow and atan2; HOP_F16 (exp log sin cos tanh) runs the float32
 * function float16's rounds from over float32 elements.  HOP_OK, or
 * HOP_INVALID with the error set. */
int hop_runtime_math_run(const char *name, hop_dtype dtype, int64_t n, void *out, const void *a,
                         const void *b);

/* Chooses the math backend now, from the environment variable HOP_MATH:
 * unset or empty, the widest the CPU runs; "avx2", at most AVX2; "scalar",
 * the libm loops; "sleef", as unset (Python's `import hop` then adopts
 * nothing).  Any other value is HOP_INVALID naming the variable, the
 * value and the valid values (`HOP_MATH="avx51" is not a math backend:
 * valid values are ...`); call it before the first kernel (importing hop's
 * Python package does, and raises the error).  A process that never calls
 * it and runs a kernel with an unknown HOP_MATH gets the libm loops. */
hop_status hop_runtime_math_init(void);

#ifdef __cplusplus
}
#endif
#endif /* HOP_RUNTIME_H */
