/*
 * python/_C/hop_py.h - what the files of the extension hop._C share.
 *
 *   module.c   module init, the exception classes and the one status ->
 *              exception switch (hop_py_raise), dtype objects
 *   tensor.c   hop.Tensor: concrete tensors over runtime tensors, their
 *              methods and operators, constructors, NumPy interop (buffer
 *              protocol both ways), eager dispatch of ops; with
 *              tensor_repr.c, tensor_index.c, user_class.c and the files
 *              tensor_impl.h lists
 *   trace.c    tracing: the OutputGraph wrapper, proxies (Tensors with a
 *              node instead of data), HOP calls with Python bodies, graph
 *              introspection; with symint.c (SymInt), plan.c (Plan, Ctrl-C)
 *              and numpy_call.c (plans called on NumPy arrays), which share
 *              trace_impl.h
 *   foreign.c  foreign kernels (hop/foreign.h) registered from an address
 *              and called eagerly or recorded
 *
 * One Tensor type serves both concrete tensors and proxies, so that a traced
 * function receives hop.Tensors.  Every op goes through hop_py_run_op, which
 * runs eagerly when all operands are concrete and records into the current
 * tracer when any is a proxy or a SymInt.
 *
 * The extension's own buffers (argument arrays, memo tables, Py_buffer
 * geometry) come from PyMem_RawMalloc and friends, that is from malloc, never
 * from pymalloc: the sanitizer pass runs CPython's objects on pymalloc (twice
 * as fast as PYTHONMALLOC=malloc) and AddressSanitizer checks only malloc's
 * blocks (docs/RELIABILITY.md).
 */
#ifndef HOP_PY_H
#define HOP_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "hop.h"
#include "hop/runtime.h"

typedef struct hop_py_trace hop_py_trace; /* trace.c: one traced program */

typedef struct TensorObject {
    PyObject_HEAD hop_tensor *t; /* concrete data, or NULL for a proxy */
    hop_node *node;              /* a proxy's traced value */
    PyObject *owner;             /* a proxy's TraceObject (strong reference), else NULL */
    PyObject *base;              /* an object whose buffer t wraps (NumPy array), or NULL */
    PyObject *weakreflist;
    /* A proxy a view op made (x[i], x.reshape(...)): the proxy it views
     * (strong reference), else NULL; and a proxy's count of live proxies
     * that view it.  Eagerly a view shares its base's memory, so a traced
     * in-place update (x[i] = v, python/hop/_setitem.py) is refused while
     * either is set: replacing one value would not change the other. */
    PyObject *viewof;
    Py_ssize_t nviews;
} TensorObject;

extern PyTypeObject hop_py_TensorType;
extern PyTypeObject hop_py_SymIntType; /* symint.c */
extern PyTypeObject hop_py_DTypeType;  /* module.c: hop.float32, ... */

/* Exceptions (module.c). */
extern PyObject *hop_py_Error, *hop_py_TraceError, *hop_py_ShapeError, *hop_py_DTypeError,
    *hop_py_UnsupportedError, *hop_py_GuardError, *hop_py_DataDependentError;

/* Raises the exception for the calling thread's hop error (code + message)
 * and returns NULL.  The one place statuses map to exception classes. */
PyObject *hop_py_raise(void);
int hop_py_raise_int(void); /* the same, returning -1 */
/* Counts an error raised while this thread's trace is active (trace.c:
 * Trace.errors; hop_py_raise calls it). */
void hop_py__trace_error_raised(void);

/* dtype objects (module.c): the hop.float32... object for d (borrowed), and
 * parsing of a dtype-like object (hop dtype, NumPy dtype, or a name). */
PyObject *hop_py_dtype_object(hop_dtype d);
int hop_py_dtype_from_object(PyObject *o, hop_dtype *out); /* 0 / -1 with TypeError */
/* "hop supports float16, ..., complex128 and bool", for DTypeError messages. */
const char *hop_py__supported_dtypes(void);
/* The Python name of d: "float32", "uint8". */
const char *hop_py__dtype_pyname(hop_dtype d);

/* Operands of an op as Python gave them (tensor.c builds them). */
typedef enum hop_py_opnd_kind {
    HOP_PY_NONE,
    HOP_PY_TENSOR, /* a TensorObject, concrete or proxy */
    HOP_PY_INT,
    HOP_PY_FLOAT,
    HOP_PY_BOOL,
    HOP_PY_DTYPE,
    HOP_PY_LIST,
    HOP_PY_SYM,      /* a SymIntObject (tracing only) */
    HOP_PY_SYMFLOAT, /* a hop.SymFloat's 0-d float64 tensor in u.t (tracing only): a weak float,
                      * converted to the op's float dtype by hop_py_run_op */
} hop_py_opnd_kind;

typedef struct hop_py_opnd {
    hop_py_opnd_kind kind;
    union {
        TensorObject *t;
        int64_t i;
        double f;
        bool b;
        hop_dtype d;
        struct {
            struct hop_py_opnd *items;
            size_t n;
        } list;
        PyObject *sym;
    } u;
} hop_py_opnd;

/* Runs op: eagerly, or recorded when any operand is a proxy or a SymInt.
 * Returns a new Tensor, a Python int (item/sym_size eagerly), a SymInt
 * (traced item/sym_size), or NULL with an exception set. */
PyObject *hop_py_run_op(hop_op op, const hop_py_opnd *args, size_t nargs);

/* memo.c: a trace's op memo (hop.compile's path specialisation). */
typedef struct hop_py_memo hop_py_memo;
hop_py_memo *hop_py_memo_new(void); /* NULL with MemoryError */
void hop_py_memo_free(hop_py_memo *m);
/* The node an op call at tracer depth `depth` replays, or NULL to record. */
hop_node *hop_py_memo_replay(hop_py_memo *m, int depth, hop_op op, const hop_arg *args,
                             size_t nargs);
/* Lists a recorded op (when the memo runs at that depth): 0 / -1. */
int hop_py_memo_record(hop_py_memo *m, int depth, hop_op op, const hop_arg *args, size_t nargs,
                       hop_node *node);
PyObject *hop_py_memo_state(hop_py_memo *m);
int hop_py_memo_begin(hop_py_memo *m, Py_ssize_t limit, int depth);
int hop_py_memo_restore(hop_py_memo *m, PyObject *state);
void hop_py_memo_stop(hop_py_memo *m);

/* trace.c: the traced side of hop_py_run_op. */
PyObject *hop_py_trace_op(hop_op op, const hop_py_opnd *args, size_t nargs);
/* trace_op.c: a two-value op of the number protocol recorded in this
 * thread's trace when its operands are a proxy of that trace and another
 * or a Python float, int or bool: 1 with *result (the result, or NULL with
 * an exception); 0, nothing done, for any other operands (hop_py_run_op's
 * path records them, the same way). */
int hop_py__trace_binary(hop_op op, PyObject *a, PyObject *b, PyObject **result);
/* trace_op.c: hop_py__trace_binary for a one-tensor op on x (a Tensor): 1
 * with *result when x is a proxy of this thread's trace and op no view, else
 * 0, nothing done. */
int hop_py__trace_unary(hop_op op, PyObject *x, PyObject **result);
/* trace.c: a foreign kernel's call recorded in the current tracer (None, a
 * proxy, or a tuple of proxies), or NULL with an exception set. */
PyObject *hop_py_trace_foreign(const hop_foreign *f, const hop_py_opnd *args, size_t nargs);
/* foreign.c: adds foreign_register/foreign_unregister/foreign_call; 0 / -1. */
int hop_py_foreign_init(PyObject *module);
/* trace.c: threads tracing right now (changed and read with the GIL held),
 * and whether the calling thread is one of them. */
extern int hop_py__ntracing;
int hop_py__thread_tracing(void);
/* True while the calling thread runs a hop.trace: every op is then recorded,
 * and a concrete tensor operand is captured as a root input.  Tracing state
 * is per thread; the count spares the eager path the thread-local lookup
 * while no thread traces. */
static inline int
hop_py_tracing_active(void)
{
    return hop_py__ntracing != 0 && hop_py__thread_tracing();
}
/* tensor.c: raises the error of Python needing a traced value (a conversion,
 * its text): where hop.compile's compiled part ends, hop/_breaks.py's break;
 * elsewhere type(message), message formatted as PyUnicode_FromFormat.
 * Always NULL. */
PyObject *hop_py__conversion(PyObject *type, const char *fmt, ...);
/* trace.c/tensor.c: the text of a traced value (a proxy's repr, a SymInt's
 * str) for the Python frame that asked: text itself for hop and NumPy, the
 * user's in hop.trace; see hop/_breaks.py (new reference, or NULL).  Steals
 * text, which may be NULL (an exception set): then NULL. */
PyObject *hop_py__user_text(const char *helper, PyObject *obj, PyObject *text);
/* A proxy's shape as a tuple of ints and SymInts. */
PyObject *hop_py_proxy_shape(TensorObject *p);
/* user_class.c: a new _C._UserClass(fn) descriptor (fn(obj): the class the
 * user's code sees while hop traces), or NULL with an exception. */
PyObject *hop_py__user_class_new(PyObject *fn);
/* Wraps a node of trace `owner` as a proxy Tensor (new reference; tensor.c). */
PyObject *hop_py_proxy_new(PyObject *owner, hop_node *node);
/* The size of x[start:stop] for a traced start (trace.c): stop must be
 * start + k, k + start or start - k for an int or a SymInt k (JAX's
 * dynamic_slice has a static size).  A new int or SymInt, or NULL with a
 * TraceError. */
PyObject *hop_py_traced_slice_size(PyObject *start, PyObject *stop);
/* A new concrete Tensor owning one reference of t (stolen). NULL: t released. */
PyObject *hop_py_tensor_new(hop_tensor *t);

/* trace.c: the OutputGraph of a Trace object (borrowed), or NULL with a
 * TypeError; and a new Trace over a loaded OutputGraph (taken: freed on
 * failure) that keeps the captured tensors alive and cannot be started. */
hop_output_graph *hop_py_trace_og(PyObject *trace);
PyObject *hop_py_trace_from_og(hop_output_graph *og, PyObject *captures);
/* Writes v in decimal (what "%llu" writes) at out and a NUL; returns the
 * digits written (at most 20: out holds 21 bytes).  For names and notes
 * made by the thousand, where printf's format parsing was the cost (saved.c). */
size_t hop_py_put_digits(char *out, unsigned long long v);

/* saved.c: save/load, lifting provenance, and the lift hook every new trace
 * gets (it notes the file:line of the Python code that used the value). */
int hop_py_saved_init(PyObject *module);
void hop_py_install_lift_hook(hop_output_graph *og);
/* hops.c: whether source, a value lifted into a body (as placeholder ph), was an
 * operand of its HOP call. */
int hop_py_lift_is_operand(const hop_node *ph, const hop_node *source);

/* trace.c: adds the tracing types and functions to the module; 0 / -1. */
int hop_py_trace_init(PyObject *module);

/* For HOP calls in a trace (trace.c): this thread's active Trace (borrowed)
 * or NULL; the node standing for a proxy, a captured
 * concrete tensor or a SymInt (NULL with an exception); a node as a proxy or
 * a SymInt; a SymInt as an argument; the checks before a HOP call (-1 with
 * an exception: another thread's trace, C stack nearly exhausted). */
PyObject *hop_py_current_trace(void);
hop_node *hop_py_value_node(PyObject *trace, PyObject *o, const char *what);
PyObject *hop_py_wrap_node(PyObject *trace, hop_node *n);
int hop_py_symint_arg(PyObject *o, hop_arg *out);
int hop_py_enter_hop(PyObject *trace, const char *what);
/* Hints a name for each concrete tensor fn reaches through its closure cells
 * and the globals its code names (Trace.name_hints); 0, or -1 with an
 * exception. */
int hop_py_name_hints(PyObject *trace, PyObject *fn);
/* hops.c: calling any registered HOP from Python. */
int hop_py_hops_init(PyObject *module);
/* purity.c: adds _pure_callees and _pure_roots (the purity check's readings); 0 / -1. */
int hop_py_purity_init(PyObject *module);
/* purity.c: whether the module name s (a str) is hop or one of its
 * submodules (_reads.is_hop_module): 1, 0, or -1 with an exception. */
int hop_py_is_hop_module(PyObject *s);
/* guard_scan.c: adds _guard_walk and _guard_roots (the guard scan's readings); 0 / -1. */
int hop_py_guard_scan_init(PyObject *module);
/* purity.c: _purity.run_pure(hop_name, which, fn, args) (run_pure itself
 * given), its plain path in C; the body's result, NULL with an exception. */
PyObject *hop_py_run_pure(PyObject *run_pure, PyObject *hop_name, PyObject *which, PyObject *fn,
                          PyObject *args);
/* numpy_call.c: adds _np_fp_reported, _np_fp_warned, _np_fp_warns, _fp_status and
 * _fp_clear (NumPy's floating-point state, the exceptions kernels raised); 0 / -1. */
int hop_py_numpy_call_init(PyObject *module);
/* _math_adopt and _math_run (vector_math.c) */
int hop_py_vector_math_init(PyObject *module);
/* np_eager.c: adds _np_eager and _np_eager_init (hop.numpy's eager fast path); 0 / -1. */
int hop_py_np_eager_init(PyObject *module);
/* np_eager_shape.c: adds _np_eager_shape_init and the shape functions' eager
 * fast path (_np_eager_getitem, _reshape, _transpose, _concatenate, _where);
 * 0 / -1. */
int hop_py_np_eager_shape_init(PyObject *module);
/* np_eager_create.c: adds _np_eager_zeros, _np_eager_ones, _np_eager_empty
 * and _np_eager_create_init (hop.numpy's creation functions' eager fast
 * path); 0 / -1. */
int hop_py_np_create_init(PyObject *module);
/* tensor.c: readies hop.Tensor and adds it and the tensor functions; 0 / -1. */
int hop_py_tensor_init(PyObject *module);

/* The start of a docstring of a C function, method or type: its text
 * signature, which inspect.signature reads ("name(sig)", "--", a blank
 * line; "$self" / "$module" name the bound argument), e.g.
 * HOP_PY_SIG("add(input, other)") "input + other, ...".  Every public one
 * has it, then what it does and an example (tests/python/test_api.py). */
#define HOP_PY_SIG(sig) sig "\n--\n\n"

/* module.name (numpy.asarray, hop.numpy's handlers, hop._symfloat.SymFloat,
 * ...), imported on first use into *cache, which keeps it for the process:
 * a borrowed reference, or NULL with an exception (an ImportError without
 * the module), *cache staying NULL so that the next call tries again.  The
 * one way the extension keeps a Python-level attribute (module.c). */
PyObject *hop_py__import_attr(PyObject **cache, const char *module, const char *name);
/* handler(self, *args, **kwargs); NULL (the error set) for a NULL handler,
 * as hop_py__import_attr's failure gives. */
PyObject *hop_py__call_with_self(PyObject *handler, PyObject *self, PyObject *args,
                                 PyObject *kwargs);
/* compiled_call.c: whether o is a hop.compile object (a _C._CompiledCall). */
int hop_py__is_compiled_call(PyObject *o);

/* getattr(obj, name, missing) from what a getattr gave (got: a new
 * reference, or NULL with an exception): got; a new reference to missing
 * when it failed with an AttributeError (cleared); NULL with any other
 * exception.  It takes either getattr's result, so that a caller holding
 * the name as a str (purity.c's paths) does not make it again from C text:
 * hop_py_attr_or(PyObject_GetAttr(o, name), missing). */
static inline PyObject *
hop_py_attr_or(PyObject *got, PyObject *missing)
{
    if (got == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        got = Py_NewRef(missing);
    }
    return got;
}

/* Stores item (a new reference, stolen) at index i of the new list or
 * tuple *seq being filled; when making item failed (NULL, an exception
 * set) drops *seq instead, so that the loop filling it stops at
 * `*seq == NULL`: the one way the extension fills a sequence. */
static inline void
hop_py_fill(PyObject **seq, Py_ssize_t i, PyObject *item)
{
    if (item == NULL)
        Py_CLEAR(*seq);
    else if (PyList_Check(*seq))
        PyList_SET_ITEM(*seq, i, item);
    else
        PyTuple_SET_ITEM(*seq, i, item);
}

#define HOP_PY_IS_PROXY(o) (((TensorObject *)(o))->t == NULL)

#endif /* HOP_PY_H */
