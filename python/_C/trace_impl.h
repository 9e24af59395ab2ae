/*
 * python/_C/trace_impl.h - what the files of tracing from Python share, one
 * type each:
 *
 *   trace.c      the Trace object (one OutputGraph), proxies, recording
 *                ops, graph introspection, what hops.c needs to call HOPs
 *   graph_data.c a traced graph as Python data (Trace.describe)
 *   symint.c     hop.SymInt: symbolic ints of a trace and their arithmetic
 *   plan.c       hop._C.Plan: a lowered trace, run with the GIL released
 *                and interruptible by Ctrl-C
 *   numpy_call.c the compiled call of NumPy code: Plan.run_arrays and
 *                Plan.bind_arrays's callable (arrays in, arrays out)
 *
 * Nothing outside these files includes it; the rest of the extension sees
 * tracing through hop_py.h.
 */
#ifndef HOP_PY_TRACE_IMPL_H
#define HOP_PY_TRACE_IMPL_H

#include "hop_py.h"

typedef struct TraceObject {
    PyObject_HEAD
    hop_output_graph *og;
    PyObject *kept;     /* list: every tensor ever captured, kept alive */
    PyObject *names;    /* dict id(obj) -> name hint for captured tensors */
    PyObject *scratch;  /* dict for the Python layer's per-trace state */
    int active; /* tracing: then it is `current` of the thread that started it */
    int loaded; /* made by hop.load: a finished program, never traced into */
    long nconstants;
    /* hop errors raised (hop_py_raise) on this thread while it was active:
     * one the trace outlived was caught, by the traced code or by hop's */
    long errors;
    hop_py_memo *memo; /* ops to replay (path specialisation), or NULL */
} TraceObject;

typedef struct SymIntObject {
    PyObject_HEAD
    const hop_expr *expr;
    hop_node *node;  /* the value that yields it, or NULL for an expression */
    PyObject *owner; /* TraceObject */
} SymIntObject;

typedef struct PlanObject {
    PyObject_HEAD
    hop_plan *plan;
    size_t ninputs, noutputs;
    /* HOP_FP_* flags every run raises after the plan's own (Plan.fp_static:
     * NumPy's floating-point exceptions of what the trace computed on
     * constants, which eager computes on every call: docs/ARCHITECTURE.md,
     * "Floating-point warnings") */
    int fp_static;
} PlanObject;

/* Raises HOP_FP_* flags on this thread's IEEE status, as a kernel would. */
void hop_py__fp_raise(int flags);

/* trace.c: this thread's active trace (borrowed: an active trace holds a
 * reference to itself), NULL when the thread is not tracing. */
extern _Thread_local TraceObject *hop_py__current;

/* symint.c: a node's or an expression's value as a Python object: a SymInt
 * of owner, or a Python int when expr is an int constant.  New reference or
 * NULL with an exception. */
PyObject *hop_py__symint_new(PyObject *owner, const hop_expr *expr, hop_node *node);
/* symint.c: -1 with TraceError when o is a SymInt that the calling thread
 * may not use (its trace ended, or another thread traces it); else 0. */
int hop_py__symint_usable(PyObject *o);
/* Whether call arguments repeat an aliased plan's pattern (numpy_call.c). */
int hop_py__alias_pattern_holds(const Py_ssize_t *alias, Py_ssize_t n, PyObject *const *a,
                                PyObject **own, Py_ssize_t *nown);
/* numpy_call.c: the first of the n arguments a that is one of the captures
 * caps (a tuple) or at one of the nids addresses ids (the environment's
 * objects a plan took every argument to be distinct from), or -1. */
Py_ssize_t hop_py__env_argument(PyObject *const *a, Py_ssize_t n, PyObject *caps, void *const *ids,
                                Py_ssize_t nids);
/* numpy_call.c: env (None or a tuple of ints) as a PyMem array of addresses
 * in *out (NULL for none), their count in *n: 0, or -1 with a TypeError. */
int hop_py__env_ids_of(PyObject *env, void ***out, Py_ssize_t *n, const char *what);
/* symint.c: readies hop.SymInt and adds it and _sym_truth; 0 / -1. */
int hop_py__symint_init(PyObject *module);

/* plan.c: a Plan object owning plan (freed on failure), or NULL with an
 * exception. */
PyObject *hop_py__plan_new(hop_plan *plan);
/* plan.c: runs p on in[0..n) into out[0..noutputs) with the GIL released,
 * interruptible on the main thread: 0, or -1 with an exception set and no
 * outputs. */
int hop_py__plan_exec(PlanObject *p, hop_tensor **in, size_t n, hop_tensor **out);
/* plan.c: plan input i (o) as a runtime tensor (borrowed): NULL with
 * TypeError unless o is a concrete Tensor. */
hop_tensor *hop_py__plan_input(PlanObject *p, Py_ssize_t i, PyObject *o);
/* plan.c: how hop_py__plan_run_tensors returns the results. */
enum { HOP_PY_RUN_LIST, HOP_PY_RUN_TUPLE, HOP_PY_RUN_SINGLE };
/* plan.c: p run on the n tensors items[] and then the tuple caps (when not
 * NULL) with the GIL released: its results as a list (HOP_PY_RUN_LIST), a
 * tuple (HOP_PY_RUN_TUPLE), or with HOP_PY_RUN_SINGLE and one output that
 * result itself.  live (NULL: none): per capture a runtime tensor made for
 * this call (hop_py__live_tensors, borrowed), the plan's input in place of
 * the capture's where not NULL.  New reference, or NULL with an exception
 * (TypeError for a wrong count or an input that is not a concrete Tensor). */
PyObject *hop_py__plan_run_tensors(PlanObject *p, PyObject *const *items, Py_ssize_t n,
                                   PyObject *caps, hop_tensor *const *live, int shape);
/* plan.c: whether o is a Plan. */
int hop_py__is_plan(PyObject *o);
/* plan.c: readies the Plan type; 0 / -1. */
int hop_py__plan_init(void);

/* numpy_call.c: Plan.run_arrays, Plan.bind_arrays and Plan.bind_tensors
 * (their docs in plan.c's method table), and readying the bound call's
 * type; 0 / -1. */
PyObject *hop_py__plan_run_arrays(PlanObject *p, PyObject *const *args, Py_ssize_t nargs);
PyObject *hop_py__plan_bind_arrays(PlanObject *p, PyObject *const *args, Py_ssize_t nargs);
PyObject *hop_py__plan_bind_tensors(PlanObject *p, PyObject *const *args, Py_ssize_t nargs);
int hop_py__numpy_call_init(void);
/* numpy_call.c: a bound call (Plan.bind_*) that first checks a plan's
 * builtin-name guard (a _C._NameGuard); -1 with an exception. */
int hop_py__array_call_set_names(PyObject *call, PyObject *names);
/* name_guard.c: whether the builtin-name guard (a _C._NameGuard) holds:
 * 1 / 0 / -1 with an exception; whether o is one; readying its type and
 * _C._bind_names, 0 / -1. */
int hop_py__names_hold(PyObject *guard);
int hop_py__is_name_guard(PyObject *o);
int hop_py__name_guard_init(PyObject *module);
/* numpy_call.c: whether NumPy's error state raises, calls, prints or logs
 * for some floating-point error (1 / 0 / -1), and _C._np_fp_reported(). */
int hop_py__np_fp_reported(void);
PyObject *hop_py__np_fp_reported_py(PyObject *self, PyObject *unused);
/* numpy_call.c: whether a floating-point exception kernels raised on this
 * thread since the last clear (hop_fp_status) is one NumPy's error state now
 * warns for (1 / 0 / -1); _C._np_fp_warned() and _C._fp_clear(). */
int hop_py__np_fp_warned(void);
PyObject *hop_py__np_fp_warned_py(PyObject *self, PyObject *unused);
PyObject *hop_py__fp_clear_py(PyObject *self, PyObject *unused);
PyObject *hop_py__fp_status_py(PyObject *self, PyObject *unused);
/* numpy_call.c: _C._np_fp_warns(): whether NumPy's error state now warns
 * for some kind of floating-point error. */
PyObject *hop_py__np_fp_warns_py(PyObject *self, PyObject *unused);
/* numpy_call.c: whether o is Plan.bind_arrays's callable (a call with
 * NumPy's semantics), not bind_tensors's. */
int hop_py__is_array_call(PyObject *o);
/* Whether o is a Plan.bind_* call with an alias pattern (it checks the
 * arguments' aliasing itself). */
int hop_py__array_call_aliased(PyObject *o);

/* live_capture.c: the environment ndarrays of a plan that hop holds no
 * reference to (_C._LiveCaptures).  hop_py__live_tensors fills caps[i] (all
 * NULL on entry, ncaps of them) with a new runtime tensor over the array
 * of each capture i made per call: 1; 0 when one of them is not the traced
 * array laid out as traced (a miss: nothing filled); -1 with an error.
 * Whether o is a _LiveCaptures; its highest capture index (-1: none);
 * readying its type and _C._live_state, 0 / -1. */
int hop_py__live_tensors(PyObject *live, hop_tensor **caps, Py_ssize_t ncaps);
int hop_py__is_live(PyObject *o);
Py_ssize_t hop_py__live_max_capture(PyObject *live);
int hop_py__live_init(PyObject *module);

/* compiled_call.c: readies hop._C._CompiledCall and adds it; 0 / -1. */
int hop_py__compiled_call_init(PyObject *module);

/* trace_op.c: op on args (graph arguments of tr's current tracer)
 * recorded in tr: replayed from the path specialisation's memo or added to
 * the tracer and noted there; its value's proxy or SymInt, or NULL with an
 * exception. */
PyObject *hop_py__record_op(TraceObject *tr, hop_op op, const hop_arg *args, size_t nargs);

/* trace.c: a string from the library (hop_free'd here) as a Python str;
 * NULL raises the library's error. */
PyObject *hop_py__printed(char *s);

/* graph_data.c: the graph g as Python data (Trace.describe's result: its
 * doc there); a new reference, NULL with an exception set. */
PyObject *hop_py__describe(const hop_graph *g);

#endif /* HOP_PY_TRACE_IMPL_H */
