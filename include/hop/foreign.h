/*
 * hop/foreign.h - foreign kernels: plain C functions called through libffi as
 * ops, in eager mode, in traced graphs and inside plans; and plans exported
 * as plain C function pointers.
 *
 * A foreign kernel is registered from its C prototype:
 *
 *     void saxpy(int64_t n, float a, const float *x, float *y);
 *
 * Types: void (return only), bool, int (= int32_t), int32_t, int64_t, float,
 * double, and pointers `const T *` / `T *` to bool, int32_t, int64_t, float
 * and double (int = int32_t there too).  Every parameter needs a name.  The
 * return type is void, or int / int32_t: a kernel that returns non-zero
 * fails with HOP_RUNTIME ("saxpy: the kernel returned 3").
 *
 * Parameters become the operands of the op, in order:
 *   scalar    `int64_t n`     an int (HOP_ARG_INT, a SymInt expression or a
 *                             SymInt value); float/double take floats or
 *                             ints; bool takes a bool or a SymBool
 *   input     `const T *x`    a tensor of dtype T, read only
 *   in-out    `T *y`          a tensor of dtype T that the kernel updates
 * Graphs stay functional (the idea of torch's auto_functionalize): the op
 * returns one new tensor per in-out parameter, in order, with the input's
 * dtype and sizes, holding a copy of the input after the kernel wrote to it;
 * the input itself is never written.  The kernel gets contiguous buffers (a
 * strided input is copied first).  The kernel must not keep the pointers.
 *
 * Sizes: a pointer parameter may be written as an array whose size is an
 * expression over integer parameters declared before it (as C's own
 * variable-length array parameters), numbers, + - * and parentheses:
 *
 *     void saxpy(int64_t n, float a, const float x[n], float y[n]);
 *     void gemv(int32_t m, int32_t k, const float a[m * k], const float x[k], float y[m]);
 *
 * Each call (eager, in a plan, op by op) then refuses, before the kernel
 * runs, an operand with fewer elements than its size, with HOP_SHAPE
 * ("saxpy: parameter 3 (const float x[n]) needs n = 5 elements, got
 * f32[4]"), and a size that overflows int64 (HOP_SHAPE); tracing refuses it
 * as early when the size and the operand's sizes are constants.  More
 * elements are fine.  `T x[]` is `T *x`.
 *
 * In a graph a call is one call_foreign node (target: the kernel's name)
 * with one getitem per in-out parameter; hop_tracer_call_foreign
 * (hop/prim_hop.h) records one.  A kernel registered with
 * side_effects (it writes a global, a file, ...) is never removed by DCE,
 * nor is any HOP whose bodies call it, and calls keep their program order
 * (the lowering never reorders or merges nodes).
 *
 * Exports: hop_plan_export wraps a plan as a C function with a signature of
 * your choice (an ffi closure): const pointers are the plan's inputs in
 * order, non-const pointers its outputs in order, int64_t parameters named
 * after the plan's size symbols (`s0`) give the sizes:
 *
 *     int f(int64_t s0, const float *x, float *out);
 *
 * The function returns 0 (HOP_OK) or a hop_status with the calling thread's
 * error context set (hop_error_message()).
 */
#ifndef HOP_FOREIGN_H
#define HOP_FOREIGN_H

/* The build checks the layering: a layer may include this header only if
 * it links the runtime layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_RUNTIME)
#error "hop/foreign.h belongs to the runtime layer, which this layer does not link"
#endif

#include "hop/plan.h"
#include "hop/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many parameters per kernel or exported function. */
#define HOP_FOREIGN_MAX_PARAMS 16

typedef struct hop_foreign hop_foreign;

typedef enum hop_foreign_kind {
    HOP_FOREIGN_SCALAR, /* int64_t n */
    HOP_FOREIGN_IN,     /* const float *x */
    HOP_FOREIGN_INOUT,  /* float *y */
} hop_foreign_kind;

typedef struct hop_foreign_param {
    const char *name;
    hop_foreign_kind kind;
    hop_dtype dtype;  /* the scalar's type or the pointee's (int32_t is HOP_I32) */
    const char *size; /* a pointer's size expression (`n * k`), or NULL */
} hop_foreign_param;

/* Called before each call of the kernel with its concrete operands (as
 * hop_foreign_call gets them): return HOP_OK, or an error status with the
 * error context set (hop_error) to refuse the call, e.g. when n exceeds the
 * length of x.  It runs on whatever thread runs the call. */
typedef hop_status (*hop_foreign_check_fn)(void *user_data, const hop_foreign *f,
                                           const hop_rt_arg *args, size_t nargs);

/* Called once when a kernel is freed: after it is unregistered and once no
 * plan holds it any more, on whichever thread drops the last reference.  It
 * ends what fn and check need (a closure's memory, an interpreter's object:
 * the Python package keeps a ctypes callback alive this way).  Not called
 * when registration fails: user_data is still the caller's then. */
typedef void (*hop_foreign_release_fn)(void *user_data);

typedef struct hop_foreign_options {
    bool side_effects;              /* see above; default false (a pure kernel) */
    hop_foreign_check_fn check;     /* may be NULL */
    void *user_data;                /* passed to check and release */
    hop_foreign_release_fn release; /* may be NULL */
} hop_foreign_options;

/*
 * Parses signature, prepares the libffi call interface once and registers
 * fn under the function's name.  opts may be NULL (defaults).  *out (may be
 * NULL) gets the kernel, valid while it is registered.  Errors: HOP_INVALID
 * for a signature that does not parse, naming the column (1-based) and the
 * parameter: `foreign signature: column 23 (parameter 2): unknown type
 * 'flaot'`; HOP_EXISTS for a name registered already; HOP_MISUSE for NULL
 * signature or fn; HOP_UNSUPPORTED if libffi refuses the interface; HOP_NOMEM.
 */
hop_status hop_foreign_register(const char *signature, void *fn, const hop_foreign_options *opts,
                                const hop_foreign **out);
/* Removes a kernel from the registry (HOP_NOT_FOUND if there is none).  Plans
 * that call it keep it alive (and its user_data: release runs when the last
 * of them is freed); graphs name it and find it again when they are lowered
 * or run (HOP_NOT_FOUND then). */
hop_status hop_foreign_unregister(const char *name);
/* The kernel registered under name; NULL (HOP_NOT_FOUND set) if none. */
const hop_foreign *hop_foreign_find(const char *name);
/* The same with one more reference, which the caller gives back with
 * hop_foreign_release: the kernel (and its user_data) then outlives an
 * unregister on another thread, or by the kernel itself, during a call. */
const hop_foreign *hop_foreign_acquire(const char *name);
/* Gives back hop_foreign_acquire's reference; NULL is a no-op. */
void hop_foreign_release(const hop_foreign *f);

/* Accessors; never fail.  Strings are borrowed from f. */
const char *hop_foreign_name(const hop_foreign *f);
/* The prototype in canonical spelling: `void saxpy(int64_t n, float a,
 * const float *x, float *y)`. */
const char *hop_foreign_signature(const hop_foreign *f);
size_t hop_foreign_nparams(const hop_foreign *f);
const hop_foreign_param *hop_foreign_param_at(const hop_foreign *f, size_t i); /* NULL past end */
/* How many results a call gives: one per in-out parameter. */
size_t hop_foreign_noutputs(const hop_foreign *f);
bool hop_foreign_side_effects(const hop_foreign *f);
/* Whether a call of f may fail on its operands: f returns int (a non-zero
 * result is HOP_RUNTIME), has a check hook, or a pointer with a size
 * expression (checked on each call).  Such a call stays in a graph when its
 * results go unused (HOP_NODE_MAY_FAIL), as eager raises there; a void
 * kernel with neither cannot fail, and needs no flag. */
bool hop_foreign_may_fail(const hop_foreign *f);

/*
 * Calls f eagerly on concrete operands, one per parameter (tensors for
 * pointers; HOP_OPND_INT/FLOAT/BOOL for scalars; a float parameter takes an
 * int too).  outs[nouts] (nouts == hop_foreign_noutputs(f)) get new
 * contiguous tensors that the caller owns: the in-out inputs after the call.
 * Errors (outs all NULL, inputs untouched): HOP_INVALID for a wrong operand
 * count or kind ("saxpy: parameter 3 (const float *x) takes a tensor, got an
 * int"); HOP_DTYPE naming the parameter ("saxpy: parameter 4 (float *y)
 * takes f32, got i64[4]"); the check callback's error; HOP_RUNTIME when the
 * kernel returns non-zero; HOP_NOMEM.
 */
hop_status hop_foreign_call(const hop_foreign *f, const hop_rt_arg *args, size_t nargs,
                            hop_tensor **outs, size_t nouts);
/*
 * The same into the caller's tensors: outs[j] must be contiguous with the
 * dtype and sizes of the j-th in-out operand (HOP_SHAPE / HOP_DTYPE / HOP_INVALID
 * otherwise); the operand is copied into it (nothing to copy when it is the
 * same memory), then the kernel runs on it.  An out must not overlap another
 * operand.  Allocates only to make a strided input contiguous.
 */
hop_status hop_foreign_call_into(const hop_foreign *f, const hop_rt_arg *args, size_t nargs,
                                 hop_tensor *const *outs, size_t nouts);

/*
 * Checks operands known only by their metadata (hop_op_infer's: tensors as
 * hop_meta, SymInt/SymBool expressions, ints, floats, bools) against f's
 * signature, with the messages of hop_foreign_call ("saxpy: parameter 3
 * (const float *x) takes a tensor, got a SymInt").  A pointer's size is
 * checked when it and the operand's sizes are constants (a call refused on
 * every run is refused now); symbolic ones are each call's to check.
 * HOP_INVALID for a wrong count or kind (the count first: args may be NULL
 * when nargs is wrong), HOP_DTYPE, HOP_SHAPE naming the parameter.
 * Tracing a call (hop_tracer_call_foreign, hop/prim_hop.h) and lowering a
 * call_foreign node both check with it, so a graph that traced lowers.
 */
hop_status hop_foreign_check_operands(const hop_foreign *f, const hop_operand *args, size_t nargs);

/* ------------------------------------------------------------- exports */

typedef struct hop_export hop_export;

/*
 * Wraps plan as a C function with the given signature (see above; the
 * return type is int or void, the function's name is free).  Checked now,
 * with HOP_INVALID naming the parameter: a const pointer per plan input and
 * a pointer per plan output, in order, with the inputs' and outputs'
 * dtypes; an int64_t per size symbol the inputs bind (named like it, in any
 * order), and no other scalars; no array sizes (`x[n]`: the size symbols
 * give the sizes); an output whose size depends on a value only
 * known mid-run is HOP_UNSUPPORTED.  The plan is borrowed and must outlive
 * the export.  The exported function may be called from any thread; each
 * call wraps the buffers without copying (the caller's buffers must hold
 * the sizes it gives) and runs hop_plan_run_into.  *out is owned by the
 * caller (hop_export_free).
 */
hop_status hop_plan_export(hop_plan *plan, const char *signature, hop_export **out);
/* The function pointer; cast it to the signature's type.  Valid until
 * hop_export_free. */
void *hop_export_fn(const hop_export *e);
/* NULL is a no-op. */
void hop_export_free(hop_export *e);

#ifdef __cplusplus
}
#endif
#endif /* HOP_FOREIGN_H */
