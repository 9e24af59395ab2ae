/*
 * python/_C/tensor_impl.h - what the files of the Tensor half of hop._C
 * share (hop_py.h is the contract with trace.c; this is internal):
 *
 *   tensor.c   the hop.Tensor type: object, number and buffer protocols,
 *              conversions, getters
 *   tensor_dispatch.c the eager dispatch of every op (hop_py_run_op)
 *   tensor_repr.c  repr() of a Tensor and the `f32[2, 3]` text of one
 *   tensor_index.c indexing (x[key], len, iteration) and x[key] = value's C half
 *   user_class.c   _C._UserClass, the __class__ the user's code sees
 *   ops.c      the op methods (t.sum(...)) and functions (hop.sum(t, ...))
 *   args.c     Python arguments into operands, with TypeErrors that name
 *              the function and the argument
 *   create.c   hop.tensor, hop.asarray (NumPy zero-copy), zeros, ones,
 *              full, arange, rand, randn, runtime settings
 *   ndarray.c  ndarrays to and from runtime tensors through NumPy's C API
 *              (optional), for the compiled call of NumPy code
 *
 * Every function returning PyObject * gives a new reference or NULL with an
 * exception set; int results are 0 on success and -1 with an exception.
 */
#ifndef HOP_PY_TENSOR_IMPL_H
#define HOP_PY_TENSOR_IMPL_H

#include "hop_py.h"

#define HOP_PY_IS_TENSOR(o) Py_IS_TYPE((o), &hop_py_TensorType)
#define HOP_PY_IS_SYM(o) PyObject_TypeCheck((o), &hop_py_SymIntType)
#define HOP_PY_TENSOR(o) ((TensorObject *)(o))

#define HOP_PY_FASTKW (METH_FASTCALL | METH_KEYWORDS)

static inline void
hop_py__set_tensor_opnd(hop_py_opnd *out, PyObject *o)
{
    out->kind = HOP_PY_TENSOR;
    out->u.t = (TensorObject *)o;
}

/* ------------------------------------------------------ copy_order.c */

/* A copy of view's numel elements (sizes: its shape) laid out in NumPy's
 * memory order of them, positive strides; *c_order true and NULL when that
 * order is C (the caller copies as it does), NULL with an error set on
 * failure.  The caller owns the result. */
hop_tensor *hop_py__copy_in_order(const Py_buffer *view, hop_dtype dt, const int64_t *sizes,
                                  int64_t numel, bool *c_order);

/* ------------------------------------------------------------ args.c */

/* The type name of o, for messages. */
const char *hop_py__tname(PyObject *o);
/* Whether NumPy's array of t has zero strides: NumPy 1.24 gives a new array
 * without elements zero strides, while a view without elements (a[:, 1:1])
 * keeps those it was made with.  A storage of no bytes is a new array's (a
 * view of an array with elements has that array's storage). */
bool hop_py__np_zero_strides(const hop_tensor *t);

/* Vectorcall arguments against names[0..n): positionals, then keywords;
 * out[i] is borrowed, NULL when absent; the first nreq are required.
 * hop_py__parse_kwonly accepts keywords only (star-args functions). */
int hop_py__parse_args(const char *fname, const char *const *names, int n, int nreq,
                       PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **out);
int hop_py__parse_kwonly(const char *fname, const char *const *names, int n, PyObject *const *args,
                         Py_ssize_t nargs, PyObject *kwnames, PyObject **out);

/* Scalars: an int (anything with __index__ but floats; OverflowError beyond
 * int64); a bool (True/False only). */
int hop_py__to_int64(const char *fname, const char *arg, PyObject *o, int64_t *out);
int hop_py__to_bool(const char *fname, const char *arg, PyObject *o, bool *out);

/* Operands: a dtype or NONE (NULL or None); an INT; an INT or SYM; the
 * same or NONE; a LIST of INT/SYM from n objects (n ints, or one tuple or
 * list; items has room for HOP_MAX_RANK); reduction dims (None, an int or a
 * tuple of ints). */
int hop_py__to_dtype_opnd(const char *fname, PyObject *o, hop_py_opnd *out);
int hop_py__to_int_opnd(const char *fname, const char *arg, PyObject *o, hop_py_opnd *out);
int hop_py__to_size_opnd(const char *fname, const char *arg, PyObject *o, hop_py_opnd *out);
int hop_py__to_opt_size_opnd(const char *fname, const char *arg, PyObject *o, hop_py_opnd *out);
int hop_py__to_shape_opnd(const char *fname, const char *arg, PyObject *const *objs, Py_ssize_t n,
                          hop_py_opnd *out, hop_py_opnd *items);
int hop_py__to_dims_opnd(const char *fname, PyObject *o, hop_py_opnd *out, hop_py_opnd *items);

/* TypeError unless o is a Tensor. */
int hop_py__check_tensor_arg(const char *fname, const char *arg, PyObject *o);

/* A value operand: a Tensor, a Python bool/int/float, a SymInt, or a buffer
 * (NumPy array or scalar) wrapped into a new Tensor left in *tmp for the
 * caller to drop.  0, 1 when o is none of these, -1 (fname names the op in
 * messages).  hop_py__value_arg raises TypeError instead of returning 1. */
int hop_py__value_opnd(const char *fname, PyObject *o, hop_py_opnd *out, PyObject **tmp);
/* 1 with a hop.SymFloat's 0-d float64 tensor in *t (a new reference), 0
 * when o is no SymFloat, -1 with an exception.  value_opnd gives a SymFloat
 * as a SYMFLOAT operand (its tensor, in *tmp). */
int hop_py__symfloat_tensor(PyObject *o, PyObject **t);
int hop_py__value_arg(const char *fname, const char *arg, PyObject *o, hop_py_opnd *out,
                      PyObject **tmp);

/* ----------------------------------------------------------- tensor.c */

/* The dtype of a concrete tensor or a proxy. */
int hop_py__tensor_dtype(TensorObject *o, hop_dtype *d);
/* An element at p of dtype d as a double. */
double hop_py__element_double(const void *p, hop_dtype d);
/* The rank of a concrete tensor or a proxy; -1 with TraceError for a proxy
 * of no tensor. */
int hop_py__tensor_rank(TensorObject *o);
/* Whether this thread has a bool() hook set (_C._set_bool_hook). */
int hop_py__bool_hook_set(void);
/* Dead Tensors that keep their runtime tensor (hop_tensor_recyclable) for
 * a next result to be computed into (hop_eager_quick_spare): the newest
 * last.  Only touched with the GIL held.  Their blocks still count in
 * hop_alloc_live: hop_py__warm_drop releases them (_C._alloc_live does). */
#define HOP_PY_WARM_MAX 8
extern TensorObject *hop_py__warm[HOP_PY_WARM_MAX];
extern int hop_py__nwarm;
void hop_py__warm_drop(void);
/* A Tensor object of hop_py__warm taken back (o->t its runtime tensor) as
 * a new reference. */
static inline PyObject *
hop_py__warm_revive(TensorObject *o)
{
    return PyObject_Init((PyObject *)o, &hop_py_TensorType);
}
/* Frees a Tensor object whose fields are all empty (a dead one). */
void hop_py__tensor_free(TensorObject *o);

/* -------------------------------------------------- tensor_dispatch.c */

/* One-tensor op on x (a Tensor). */
PyObject *hop_py__unary(hop_op op, PyObject *x);
/* Two-value op of the number protocol on a and b, either the Tensor;
 * NotImplemented when the other is no operand. */
PyObject *hop_py__binary(hop_op op, PyObject *a, PyObject *b);
/* hop_py_run_op, then drops the ntmps references in tmps (NULLs allowed). */
PyObject *hop_py__run_and_drop(hop_op op, const hop_py_opnd *args, size_t nargs, PyObject **tmps,
                               size_t ntmps);

/* ------------------------------------------------------ tensor_repr.c */

/* `f32[2, 3]` for a concrete tensor or a proxy (`<traced value>` for a
 * proxy of no tensor), written to buf (cap bytes, truncated); returns buf. */
const char *hop_py__tensor_text(TensorObject *o, char *buf, size_t cap);
/* repr(t), hop.Tensor's tp_repr: a new reference, NULL with an exception. */
PyObject *hop_py__tensor_repr(PyObject *self);

/* ----------------------------------------------------- tensor_index.c */

/* hop.Tensor's mapping and sequence protocols and tp_iter. */
extern PyMappingMethods hop_py__tensor_as_mapping;
extern PySequenceMethods hop_py__tensor_as_sequence;
PyObject *hop_py__tensor_iter(PyObject *self);
/* _C._set_setitem and _C._write (hop/_setitem.py's C half). */
extern PyMethodDef hop_py__setitem_functions[];

/* ------------------------------------------------------- user_class.c */

/* Readies _C._UserClass and adds it to module m: 0, or -1 with an
 * exception. */
int hop_py__user_class_init(PyObject *m);

/* -------------------------------------------------------------- ops.c */

/* x.to(d). */
PyObject *hop_py__to(PyObject *x, hop_dtype d);
/* cat/stack with the arguments (tensors, dim=0). */
PyObject *hop_py__concat(const char *fname, hop_op op, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);
/* The op methods of hop.Tensor and the op functions of the module. */
extern PyMethodDef hop_py__op_methods[];
extern PyMethodDef hop_py__op_functions[];

/* ----------------------------------------------------------- create.c */

/* hop.asarray(obj, dtype): obj itself for a Tensor of the dtype, a view of
 * a buffer, else a copy (dtype_obj may be NULL). */
PyObject *hop_py__asarray(PyObject *obj, PyObject *dtype_obj, const char *fname);
/* The constructors and settings of the module; seeds the global generator. */
extern PyMethodDef hop_py__create_functions[];
/* tensor.c: bool() of tensors through a per-thread hook (_C._set_bool_hook)
 * and without it (_C._truth). */
PyObject *hop_py__set_bool_hook(PyObject *mod, PyObject *fn);
PyObject *hop_py__truth(PyObject *mod, PyObject *o);
PyObject *hop_py__base(PyObject *mod, PyObject *o);
PyObject *hop_py__restride(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);
PyObject *hop_py__hollow(PyObject *mod, PyObject *o);
PyObject *hop_py__meta_text(PyObject *mod, PyObject *o);
void hop_py__create_init(void);

/* ---------------------------------------------------------- np_eager.c */

/* A __slots__ member of hop.numpy.ndarray at offset off (np_eager.c reads the
 * offsets once, np_eager_init). */
#define HOP_PY_SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))
/* What the eager fast paths share, set by _np_eager_init: hop.numpy.ndarray
 * (exactly: not NumpyArg; NULL before hop.numpy has loaded), the offsets of
 * its slots _tv (the tensor), _st (a run's view), _cp (an eager copy-view),
 * _scalar (a NumPy scalar's 0-d array), _ro (a view's read-only flag) and
 * _ob (NumPy's base), and _core.cast(tensor, numpy dtype). */
extern PyTypeObject *hop_py__np_type;
extern Py_ssize_t hop_py__np_off_tv, hop_py__np_off_st, hop_py__np_off_cp, hop_py__np_off_scalar,
    hop_py__np_off_ro, hop_py__np_off_ob;
extern PyObject *hop_py__np_cast;
/* The tensor of o, exactly a hop.numpy.ndarray, when a fast path reads it
 * (borrowed), else NULL: a run's view or an eager copy-view is the general
 * path's.  (Inline: every fast path's first read.) */
static inline TensorObject *
hop_py__np_array_tensor(PyObject *o)
{
    PyObject *tv = HOP_PY_SLOT(o, hop_py__np_off_tv);
    if (HOP_PY_SLOT(o, hop_py__np_off_st) != Py_None ||
        HOP_PY_SLOT(o, hop_py__np_off_cp) != Py_None || tv == NULL || !HOP_PY_IS_TENSOR(tv))
        return NULL;
    return HOP_PY_TENSOR(tv);
}
/* Tensor object t as a new hop.numpy.ndarray with the slots ndarray.__init__
 * gives outside a run (steals t); NULL with an exception. */
PyObject *hop_py__np_wrap(PyObject *t);
/* Concrete tensor t (stolen) as a new hop.numpy.ndarray with the slots
 * ndarray.__init__ gives outside a run (None before hop.numpy has loaded). */
PyObject *hop_py__np_new_array(hop_tensor *t);
/* Whether the shape functions' eager fast path may answer on this thread:
 * hop.numpy loaded, the path on (_eager_shape.fast), no trace, no run of
 * hop.numpy's nor recorded path. */
int hop_py__np_eager_open(void);
/* The key of operand o (a ufunc's operand key), of an array in any layout
 * (the caller decides the layouts: hop_py__np_arrays_order). */
PyObject *hop_py__np_any_layout_key(PyObject *o);
/* A planner's call on a miss of the plans: the new plan (or None), or NULL
 * with an exception; ctx is the caller's. */
typedef PyObject *(*hop_py_plan_miss)(PyObject *name, void *ctx);
/* The plan of `name` (a ufunc's, a reduction's "reduce:sum", "where") for
 * keys k0 and k1 (NULL for one operand): the dict's, or miss(name, ctx)'s on
 * a miss (then kept).  New reference, or NULL with an exception. */
PyObject *hop_py__np_lookup_plan(PyObject *name, PyObject *k0, PyObject *k1, hop_py_plan_miss miss,
                                 void *ctx);
/* np.dot(a, b) by the fast path of the matrix products, or NULL (with an
 * exception only on an error). */
PyObject *hop_py__np_dot(PyObject *a, PyObject *b);
/* r, or None for NULL without an exception (a module function's answer). */
PyObject *hop_py__np_or_none(PyObject *r);

/* --------------------------------------------------- np_eager_shape.c */

/* A method of hop.numpy.ndarray that tries an eager fast path before its
 * Python method (np_eager.c: np_eager_method makes one per role). */
typedef struct EagerOpObject {
    PyObject_HEAD PyObject *name; /* the ufunc's or the reduction's name, or None */
    PyObject *fallback;           /* the Python method */
    int nargs;                    /* an operator's: 1 or 2, self included; else the role's name */
    int reflected;                /* `other OP self`: the operands are (other, self) */
    vectorcallfunc vectorcall;
} EagerOpObject;
/* The element conversions of role "element" (its names "item", "float",
 * "int", in that order: EagerOpObject.nargs). */
enum { HOP_PY_AS_ITEM, HOP_PY_AS_FLOAT, HOP_PY_AS_INT };
/* The methods of roles "getitem" (a[key]), "setitem" (a[key] = value),
 * "reshape" (a.reshape(...)), "transpose" (a.transpose(...), a.T) and
 * "element" (a.item(...), float(a), int(a)): the shape fast path, else
 * op->fallback. */
PyObject *hop_py__np_getitem_call(EagerOpObject *op, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames);
PyObject *hop_py__np_setitem_call(EagerOpObject *op, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames);
PyObject *hop_py__np_reshape_call(EagerOpObject *op, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames);
PyObject *hop_py__np_transpose_call(EagerOpObject *op, PyObject *const *args, size_t nargsf,
                                    PyObject *kwnames);
PyObject *hop_py__np_item_call(EagerOpObject *op, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames);
/* a.fill(value) (role "fill"): a[...] = value by the setitem fast path,
 * else op->fallback. */
PyObject *hop_py__np_fill_call(EagerOpObject *op, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames);
/* a.ravel() (role "ravel"): a C-ordered array's reshape(-1) view, else
 * op->fallback. */
PyObject *hop_py__np_ravel_call(EagerOpObject *op, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames);
/* The concrete tensor of a when the shape fast path takes a (borrowed), else
 * NULL. */
hop_tensor *hop_py__np_shape_tensor(PyObject *a);
/* np.reshape, np.where, np.concatenate, np.transpose or np.dot (func) of the
 * positional arguments fargs, as __array_function__ sees the call. */
PyObject *hop_py__np_shape_function(PyObject *func, PyObject *fargs);
/* The memory order the arrays among the n operands share when it is not C
 * order (1, and its axes in perm), the arrays then of one shape; 0 or -1
 * for anything else. */
int hop_py__np_arrays_order(PyObject *const *ops, Py_ssize_t n, int *perm);
/* Operand o as a tensor object in memory order perm (order 1; order 0: as
 * it is; a scalar as it is).  New reference. */
PyObject *hop_py__np_in_order(PyObject *o, int order, const int *perm);
/* Array a (stolen), computed in memory order perm, viewed back with its
 * dims in their own order; NULL on failure. */
PyObject *hop_py__np_back_in_order(PyObject *a, const int *perm);
/* Python bool, int or float v as an element of dtype d in out (16 bytes at
 * most), NumPy's conversion of it where that is a plain C conversion with no
 * warning nor error: 1, or 0 for anything else (a float into an integer
 * dtype, an int out of the dtype's range, a float32 overflow, float16 and
 * complex dtypes). */
int hop_py__np_scalar_element(hop_dtype d, PyObject *v, unsigned char *out);
/* a.copy() (flat: a.flatten()) of a concrete array (hop_py__np_shape_tensor's)
 * by the eager fast path: a new C-ordered array of its elements in C order
 * (flat: one dimension), or NULL (an exception only when one was raised)
 * where the general path must answer. */
PyObject *hop_py__np_copy(PyObject *a, int flat);

/* -------------------------------------------------- np_eager_create.c */

enum {
    HOP_PY_CREATE_ZEROS,
    HOP_PY_CREATE_ONES,
    HOP_PY_CREATE_EMPTY,
    HOP_PY_CREATE_ASARRAY,
    HOP_PY_CREATE_ZEROS_LIKE,
    HOP_PY_CREATE_ONES_LIKE,
    HOP_PY_CREATE_EMPTY_LIKE,
    HOP_PY_CREATE_COPY,
    HOP_PY_CREATE_ARANGE,
    HOP_PY_CREATE_FULL
};
/* hop.numpy's zeros, ones or empty (kind) of (shape[, dtype]), dtype
 * positional or a keyword, asarray(a) of a NumPy array, zeros_like,
 * ones_like, empty_like or copy of (a), arange of Python numbers, or
 * full(shape, number[, dtype]), by the eager fast path: the new array, or
 * None where the general path must answer (every other argument and error),
 * or NULL with an exception. */
PyObject *hop_py__np_create(int kind, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
/* NumPy's func(*args) (np.zeros_like(a), np.ones_like(a), np.empty_like(a),
 * np.copy(a): __array_function__'s) by the creation fast path: the new array, or NULL
 * (with an exception only when one was raised) where the general path must
 * answer. */
PyObject *hop_py__np_like_function(PyObject *func, PyObject *args);
/* a.astype(dt) by the eager fast path: the new array, or NULL without an
 * exception where the general path must answer, or NULL with one. */
PyObject *hop_py__np_astype(PyObject *a, PyObject *dt);

/* ---------------------------------------------------- np_eager_take.c */

/* The rows of a concrete tensor t that one integer or boolean index array
 * picks (NumPy's a[idx], a[mask]): their element offsets in t, and the
 * result's shape. */
typedef struct hop_py_take {
    int64_t *offsets; /* count of them, in elements from t's first */
    int64_t count;
    int lead; /* the dims of t the key picks from: 1, or the mask's */
    int rank; /* the result's */
    int64_t sizes[HOP_MAX_RANK];
    int sub[HOP_MAX_RANK]; /* the dims of t after lead in its memory order */
    int64_t small[32];     /* offsets' room for a short key */
} hop_py_take;

/* Key object key as an index tensor the fast path reads (a new reference):
 * an exact NumPy ndarray of one or more dims (shared), a list of exact ints
 * (int64) or of exact bools (a mask); NULL, with no exception, for anything
 * else, or with one (MemoryError). */
hop_tensor *hop_py__np_key_tensor(PyObject *key);
/* The rows of t that index tensor k picks in *tk: 1; 0 when the fast path
 * does not take them (a dtype other than integers and bool, a 0-d key, a
 * mask not of t's shape, an index out of range: the general path's
 * errors); -1 with an exception (MemoryError).  After 1,
 * hop_py__np_take_release(tk). */
int hop_py__np_take(const hop_tensor *t, const hop_tensor *k, hop_py_take *tk);
void hop_py__np_take_release(hop_py_take *tk);
/* A new tensor of the rows tk picks, laid out as NumPy's (NULL with hop's
 * error). */
hop_tensor *hop_py__np_take_rows(const hop_tensor *t, const hop_py_take *tk);
/* The element of bool or integer dtype d at p as NumPy's intp reads it (a
 * uint64 beyond int64 wraps) in *v: 1, or 0 for another dtype. */
int hop_py__np_int_at(hop_dtype d, const void *p, int64_t *v);
/* The rows tk picks filled with elem (one element of t's dtype). */
void hop_py__np_fill_rows(hop_tensor *t, const hop_py_take *tk, const unsigned char *elem);
/* The view at p (rank, sizes, strides in elements of isz bytes) filled with
 * the element elem (isz bytes): a[key] = number's write (np_eager.c), the
 * copy below of elem read at every stride 0. */
void hop_py__np_fill_view(char *p, int rank, const int64_t *sizes, const int64_t *strides,
                          size_t isz, const unsigned char *elem);
/* The elements of src (its strides src_strides, in elements, 0 along a
 * broadcast dim) copied to the view at p of rank sizes and strides (the
 * two not overlapping), in C order. */
void hop_py__np_copy_view(char *p, int rank, const int64_t *sizes, const int64_t *strides,
                          const char *src, const int64_t *src_strides, size_t isz);

/* ---------------------------------------------------------- ndarray.c */

/* Whether NumPy's C API is usable (imports it on the first call; false
 * without NumPy's headers at build time or on an ABI it refuses). */
int hop_py__np_ready(void);
/* A new runtime tensor sharing the memory of obj, an exact ndarray that
 * hop.asarray would share without a copy; NULL, with no exception, for
 * any other object (hop.asarray's general path then decides). */
hop_tensor *hop_py__np_borrow(PyObject *obj);
/* Whether obj, an ndarray, holds its elements aligned and in the machine's
 * byte order (flags.aligned and dtype.isnative), as every array a plan
 * takes, and with c_order in C order too (flags.c_contiguous: a plan whose
 * results' memory order follows that argument's, NumPy's K order): 1 or 0;
 * -1 with an exception when reading them fails (without NumPy's C API they
 * are read through Python). */
int hop_py__np_plain(PyObject *obj, int c_order);
/* An ndarray over the memory of a concrete Tensor, whose base it is. */
PyObject *hop_py__np_from_tensor(PyObject *tensor);
/* _C._np_layout(a): bytes that equal for two reads of ndarray a exactly
 * when its memory address, shape, strides, dtype and writeable and aligned
 * flags are the same (what a.shape = ..., a.dtype = ..., a.data = ... or
 * a.flags.writeable = ... change in place); None without NumPy's C API or
 * for any other object (the caller then reads them through Python). */
PyObject *hop_py__np_layout(PyObject *mod, PyObject *obj);
/* _C._np_same_layout(a, layout): whether _np_layout(a) would equal bytes
 * layout, without making them (the guard's fast check): True or False. */
PyObject *hop_py__np_same_layout(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);
/* Whether obj is exactly an ndarray, the object at address ident, laid out
 * as the bytes layout (_np_layout's) say: 1 or 0 (0 too without NumPy's C
 * API, or for a layout that is not bytes).  hop.compile's check of an
 * environment array it holds no reference to (live_capture.c). */
int hop_py__np_is_laid_out(PyObject *obj, const void *ident, PyObject *layout);
/* _C._np_contents(a): bytes holding ndarray a's layout record and its
 * elements' bytes (hop.compile's contents guard of an environment array a
 * HOP body reads); None without NumPy's C API, for another object, a
 * subclass or an array of Python objects (whose bytes are addresses). */
PyObject *hop_py__np_contents(PyObject *mod, PyObject *obj);
/* _C._np_same_contents(a, contents): whether _np_contents(a) would equal
 * bytes contents, comparing a's memory in place (no allocation); False for
 * contents that are not bytes. */
PyObject *hop_py__np_same_contents(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);
/* arr[()] for a 0-d array (a NumPy scalar), arr otherwise; steals arr. */
PyObject *hop_py__np_scalar(PyObject *arr);
/* The NumPy scalar of t's first element (a copy: np.float32(v) for a f32
 * tensor): a new reference; NULL, with no exception, when NumPy's C API is
 * not usable, or with one when NumPy fails. */
PyObject *hop_py__np_element(const hop_tensor *t);

#endif /* HOP_PY_TENSOR_IMPL_H */
