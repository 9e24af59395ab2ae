/*
 * python/_C/tensor_dispatch.c - the eager dispatch of every op on hop.Tensors
 * (hop_py_run_op): Python operands to runtime operands, hop_eager (without
 * the GIL for big work), and the hand-off to the tracer (trace.c); the
 * number protocol's one- and two-value ops (hop_py__unary, hop_py__binary)
 * enter here.  The Tensor type itself is tensor.c's.
 *
 * Every op is one call of hop_py_run_op with operands in the op table's
 * order (hop/ops.h), built on the stack: concrete operands run at once
 * through hop_eager, a proxy or a SymInt among them sends the call to the
 * tracer (trace.c).  The binary operators of two concrete tensors skip even
 * that and call hop_eager_quick directly: `a + b` is one type check per
 * operand, one test that no thread traces and one hop_eager_quick_spare
 * into the object and block of the last result that died (tensor.c's
 * hop_py__warm), or a new block and an object from a free list.  A tensor and a Python
 * number (`x * 1.5`) take hop_eager_quick_scalar the same way.  While a thread traces, a two-value
 * op on a proxy and another or a Python number, and a one-tensor op on a proxy, are recorded by
 * trace_op.c without the conversions to hop_py_opnd and back.
 *
 * While this thread traces, every op is recorded, concrete operands included
 * (they become root inputs): an op computed at trace time would be a constant
 * of the graph, blind to a later change of the tensor's memory.
 */
#include "tensor_impl.h"

#include <string.h>

/* Operands of this many elements or more run without the GIL. */
#define NOGIL_NUMEL (1 << 15)

static bool
opnds_need_trace(const hop_py_opnd *args, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        const hop_py_opnd *a = &args[i];
        if (a->kind == HOP_PY_SYM || a->kind == HOP_PY_SYMFLOAT ||
            (a->kind == HOP_PY_TENSOR && a->u.t->t == NULL))
            return true;
        if (a->kind == HOP_PY_LIST && opnds_need_trace(a->u.list.items, a->u.list.n))
            return true;
    }
    return false;
}

/* hop_tensor_numel of a tensor operand, inline: an eager op on small
 * tensors asks it of each operand (the calls were ~40 instructions). */
static inline int64_t
numel_of(const hop_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; t != NULL && i < t->rank; i++)
        n *= t->sizes[i];
    return n;
}

/* Worth releasing the GIL for: non-view ops over many elements. */
static bool
big_work(hop_op op, const hop_rt_arg *args, size_t nargs)
{
    int64_t total = 0;
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind == HOP_OPND_TENSOR) {
            total += numel_of(args[i].u.tensor);
        } else if (args[i].kind == HOP_OPND_LIST) {
            for (size_t k = 0; k < args[i].u.list.n; k++) {
                if (args[i].u.list.items[k].kind == HOP_OPND_TENSOR)
                    total += numel_of(args[i].u.list.items[k].u.tensor);
            }
        }
    }
    return total >= NOGIL_NUMEL && hop_op_get(op)->family != HOP_KF_VIEW;
}

/* The exception of an eager op's failure st (NULL). */
static __attribute__((noinline)) PyObject *
eager_failed(hop_op op, hop_status st)
{
    if (st == HOP_NOMEM && strncmp(hop_error_message(), "out of memory", 13) == 0) {
        /* The allocator's message does not say who asked. */
        PyErr_Format(PyExc_MemoryError, "%s: %s", hop_op_get(op)->name, hop_error_message());
        return NULL;
    }
    return hop_py_raise();
}

/* Runs op eagerly on runtime operands: a Tensor or an int. */
static PyObject *
run_eager(hop_op op, const hop_rt_arg *args, size_t nargs)
{
    hop_rt_value out;
    hop_status st;
    if (big_work(op, args, nargs)) {
        Py_BEGIN_ALLOW_THREADS st = hop_eager(op, args, nargs, &out);
        Py_END_ALLOW_THREADS
    } else {
        st = hop_eager(op, args, nargs, &out);
    }
    if (st != HOP_OK)
        return eager_failed(op, st);
    if (out.kind == HOP_VALUE_TENSOR)
        return hop_py_tensor_new(out.tensor);
    return PyLong_FromLongLong(out.i);
}

/* run_eager on tensors a and b (b NULL: on a alone); apart, so that
 * run_concrete's quick path sets up none of its frame. */
static __attribute__((noinline)) PyObject *
run_pair(hop_op op, hop_tensor *a, hop_tensor *b)
{
    hop_rt_arg args[2] = {hop_rt_tensor(a), hop_rt_tensor(b)};
    return run_eager(op, args, b != NULL ? 2 : 1);
}

/* op on concrete tensors a and b (b NULL: on a alone) outside a trace:
 * hop_eager_quick (small, dense, one dtype and shape: never worth
 * releasing the GIL), into the last dead result (hop_py__warm) when there
 * is one, else run_eager. */
static inline PyObject *
run_concrete(hop_op op, hop_tensor *a, hop_tensor *b)
{
    hop_tensor *t;
    if (hop_py__nwarm > 0) {
        /* the last dead result's object and block, when the op takes it */
        TensorObject *o = hop_py__warm[hop_py__nwarm - 1];
        if (hop_eager_quick_spare(op, a, b, o->t, &t)) {
            hop_py__nwarm--;
            o->t = t;
            if (t != NULL)
                return hop_py__warm_revive(o);
            hop_py__tensor_free(o);
            return eager_failed(op, hop_error_code());
        }
    } else if (hop_eager_quick(op, a, b, &t)) {
        return t != NULL ? hop_py_tensor_new(t) : eager_failed(op, hop_error_code());
    }
    return run_pair(op, a, b);
}

/* op on concrete tensor t and Python number n (exactly a float, or an int
 * that fits in int64; n the left operand when n_first) outside a trace:
 * hop_eager_quick_scalar, into the last dead result when there is one.
 * NULL without an error when it does not apply (the general path then
 * decides, and reports the errors: an int past int64). */
static PyObject *
run_scalar(hop_op op, hop_tensor *t, PyObject *n, bool n_first)
{
    hop_rt_arg s;
    if (PyFloat_CheckExact(n)) {
        s = hop_rt_float(PyFloat_AS_DOUBLE(n));
    } else if (PyLong_CheckExact(n)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
        if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return NULL;
        }
        s = hop_rt_int(v);
    } else {
        return NULL;
    }
    hop_tensor *r;
    if (hop_py__nwarm > 0) {
        TensorObject *o = hop_py__warm[hop_py__nwarm - 1];
        if (!hop_eager_quick_scalar(op, t, &s, n_first, o->t, &r))
            return NULL;
        hop_py__nwarm--;
        o->t = r;
        if (r != NULL)
            return hop_py__warm_revive(o);
        hop_py__tensor_free(o);
        return eager_failed(op, hop_error_code());
    }
    if (!hop_eager_quick_scalar(op, t, &s, n_first, NULL, &r))
        return NULL;
    return r != NULL ? hop_py_tensor_new(r) : eager_failed(op, hop_error_code());
}

/* The runtime operand of a concrete Python operand (lists excluded). */
static void
rt_scalar(const hop_py_opnd *a, hop_rt_arg *r)
{
    switch (a->kind) {
    case HOP_PY_TENSOR:
        *r = hop_rt_tensor(a->u.t->t);
        break;
    case HOP_PY_INT:
        *r = hop_rt_int(a->u.i);
        break;
    case HOP_PY_FLOAT:
        *r = hop_rt_float(a->u.f);
        break;
    case HOP_PY_BOOL:
        *r = hop_rt_bool(a->u.b);
        break;
    case HOP_PY_DTYPE:
        *r = hop_rt_dtype(a->u.d);
        break;
    case HOP_PY_NONE:
    case HOP_PY_LIST:
    case HOP_PY_SYM:
    case HOP_PY_SYMFLOAT:
        *r = hop_rt_none();
        break;
    }
}

#define RUN_MAX_ARGS 8
#define RUN_STACK_ITEMS 32

/*
 * op with SymFloat operands: each is a weak Python float beside the tensors,
 * as eagerly, so its float64 tensor is first converted to the dtype a float
 * takes there: the tensors' promoted dtype when it is a float one, else
 * float32.  A 0-d tensor of that dtype then promotes with the tensors as the
 * float would, and holds the value eager rounds the float to.
 */
static PyObject *
run_with_symfloats(hop_op op, const hop_py_opnd *args, size_t nargs)
{
    hop_py_opnd local[RUN_MAX_ARGS];
    PyObject *conv[RUN_MAX_ARGS] = {NULL};
    const char *name = hop_op_get(op) != NULL ? hop_op_get(op)->name : "?";
    if (nargs > RUN_MAX_ARGS) {
        PyErr_Format(PyExc_SystemError, "hop_py_run_op: %zu operands for %s", nargs, name);
        return NULL;
    }
    bool any = false;
    hop_dtype p = HOP_BOOL;
    for (size_t i = 0; i < nargs; i++) {
        hop_dtype d;
        if (args[i].kind != HOP_PY_TENSOR)
            continue;
        if (hop_py__tensor_dtype(args[i].u.t, &d) < 0)
            return NULL;
        p = any ? hop_dtype_promote(p, d) : d;
        any = true;
    }
    if (!any) {
        hop_error(HOP_INVALID,
                  "%s: expected at least one tensor operand, got a SymFloat and no tensor (a "
                  "SymFloat is a Python float eagerly)",
                  name);
        return hop_py_raise();
    }
    hop_dtype weak = hop_dtype_is_float(p) ? p : HOP_F32;
    PyObject *res = NULL;
    for (size_t i = 0; i < nargs; i++) {
        local[i] = args[i];
        if (args[i].kind != HOP_PY_SYMFLOAT)
            continue;
        if ((conv[i] = hop_py__to((PyObject *)args[i].u.t, weak)) == NULL)
            goto done;
        hop_py__set_tensor_opnd(&local[i], conv[i]);
    }
    res = hop_py_run_op(op, local, nargs);
done:
    for (size_t i = 0; i < nargs; i++)
        Py_XDECREF(conv[i]);
    return res;
}

PyObject *
hop_py_run_op(hop_op op, const hop_py_opnd *args, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind == HOP_PY_SYMFLOAT)
            return run_with_symfloats(op, args, nargs);
    }
    /* While a trace is active every op is recorded: concrete operands are
     * captured as root inputs (a closure or a global reached by the traced
     * function), not computed once at trace time. */
    if (opnds_need_trace(args, nargs) || hop_py_tracing_active())
        return hop_py_trace_op(op, args, nargs);
    if (nargs > RUN_MAX_ARGS) {
        PyErr_Format(PyExc_SystemError, "hop_py_run_op: %zu operands for %s", nargs,
                     hop_op_get(op) != NULL ? hop_op_get(op)->name : "?");
        return NULL;
    }
    hop_rt_arg rt[RUN_MAX_ARGS] = {{0}}, stack_items[RUN_STACK_ITEMS], *items = stack_items;
    size_t nitems = 0;
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind == HOP_PY_LIST)
            nitems += args[i].u.list.n;
    }
    if (nitems > RUN_STACK_ITEMS && (items = PyMem_RawMalloc(nitems * sizeof *items)) == NULL)
        return PyErr_NoMemory();
    size_t used = 0;
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind == HOP_PY_LIST) {
            hop_rt_arg *first = items + used;
            for (size_t k = 0; k < args[i].u.list.n; k++)
                rt_scalar(&args[i].u.list.items[k], &items[used++]);
            rt[i] = hop_rt_list(first, args[i].u.list.n);
        } else {
            rt_scalar(&args[i], &rt[i]);
        }
    }
    PyObject *res = run_eager(op, rt, nargs);
    if (items != stack_items)
        PyMem_RawFree(items);
    return res;
}

/* Runs op on opnds and drops the temporaries value_opnd made. */
PyObject *
hop_py__run_and_drop(hop_op op, const hop_py_opnd *args, size_t nargs, PyObject **tmps,
                     size_t ntmps)
{
    PyObject *res = hop_py_run_op(op, args, nargs);
    for (size_t i = 0; i < ntmps; i++)
        Py_XDECREF(tmps[i]);
    return res;
}

/* One-tensor ops: neg, sin, clone, ... */
static __attribute__((noinline)) PyObject *unary_general(hop_op op, PyObject *x);

PyObject *
hop_py__unary(hop_op op, PyObject *x)
{
    if (HOP_PY_TENSOR(x)->t != NULL && !hop_py_tracing_active())
        return run_concrete(op, HOP_PY_TENSOR(x)->t, NULL);
    return unary_general(op, x);
}

/* hop_py__unary on a proxy, or while this thread traces. */
static PyObject *
unary_general(hop_op op, PyObject *x)
{
    PyObject *traced;
    if (hop_py__ntracing != 0 && hop_py__trace_unary(op, x, &traced))
        return traced;
    hop_py_opnd a;
    hop_py__set_tensor_opnd(&a, x);
    return hop_py_run_op(op, &a, 1);
}

/*
 * Two-value ops from the number protocol: either side may be the Tensor.
 * NotImplemented when the other side is no operand (Python then raises its
 * "unsupported operand type(s)" TypeError).
 */
static __attribute__((noinline)) PyObject *binary_general(hop_op op, PyObject *a, PyObject *b);

PyObject *
hop_py__binary(hop_op op, PyObject *a, PyObject *b)
{
    if (HOP_PY_IS_TENSOR(a) && HOP_PY_IS_TENSOR(b) && HOP_PY_TENSOR(a)->t != NULL &&
        HOP_PY_TENSOR(b)->t != NULL && !hop_py_tracing_active())
        return run_concrete(op, HOP_PY_TENSOR(a)->t, HOP_PY_TENSOR(b)->t);
    /* a concrete tensor and a Python number (`x * 1.5`, `1.0 - x`) */
    bool n_first = !HOP_PY_IS_TENSOR(a);
    PyObject *t = n_first ? b : a;
    if (HOP_PY_IS_TENSOR(t) && HOP_PY_TENSOR(t)->t != NULL && !hop_py_tracing_active()) {
        PyObject *r = run_scalar(op, HOP_PY_TENSOR(t)->t, n_first ? a : b, n_first);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return binary_general(op, a, b);
}

/* hop_py__binary with a proxy, a number or another object, or while this
 * thread traces: apart, so that two concrete tensors' call sets up none of
 * its frame. */
static PyObject *
binary_general(hop_op op, PyObject *a, PyObject *b)
{
    PyObject *traced;
    if (hop_py__ntracing != 0 && hop_py__trace_binary(op, a, b, &traced))
        return traced;
    hop_py_opnd args[2];
    PyObject *tmp[2] = {NULL, NULL};
    const char *fname = hop_op_get(op)->name;
    int ra = hop_py__value_opnd(fname, a, &args[0], &tmp[0]);
    int rb = ra != 0 ? ra : hop_py__value_opnd(fname, b, &args[1], &tmp[1]);
    if (ra != 0 || rb != 0) {
        Py_XDECREF(tmp[0]);
        Py_XDECREF(tmp[1]);
        if (ra < 0 || rb < 0)
            return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    return hop_py__run_and_drop(op, args, 2, tmp, 2);
}
