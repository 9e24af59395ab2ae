/*
 * python/_C/foreign.c - foreign kernels for Python: registering a C function
 * by its address and C prototype (hop/foreign.h), and calling it with
 * hop.Tensors and Python scalars, eagerly through libffi or, while a trace is
 * active or an operand is traced, as a call_foreign node.  The package's
 * hop.foreign (python/hop/_foreign.py) wraps these functions.
 */
#include "hop_py.h"

#include "hop/foreign.h"

/* The kernel's reference to what its address needs (hop/foreign.h's
 * release): dropped when the registry and every plan have let go of the
 * kernel, on whatever thread that is, so the GIL is taken here.  After
 * the interpreter is gone there is nothing left to drop. */
static void
release_keep(void *user_data)
{
    if (!Py_IsInitialized())
        return;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF((PyObject *)user_data);
    PyGILState_Release(g);
}

/* foreign_register(signature, address, side_effects=False, keep=None) -> name
 * keep: what the code at address needs alive (a ctypes callback); the kernel
 * owns a reference to it for as long as the kernel lives, in the registry or
 * in any plan that calls it. */
static PyObject *
foreign_register(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"signature", "address", "side_effects", "keep", NULL};
    const char *sig;
    PyObject *addr, *keep = Py_None;
    int side_effects = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO|pO:foreign_register", names, &sig, &addr,
                                     &side_effects, &keep))
        return NULL;
    if (!PyLong_Check(addr) || PyBool_Check(addr)) {
        PyErr_Format(PyExc_TypeError, "foreign_register(): address must be an int, not %.100s",
                     Py_TYPE(addr)->tp_name);
        return NULL;
    }
    /* PyLong_AsVoidPtr takes -1 for 2**64 - 1: a negative int is no address
     * (calling it crashed), nor is one past 64 bits. */
    PyObject *zero = PyLong_FromLong(0);
    int negative = zero ? PyObject_RichCompareBool(addr, zero, Py_LT) : -1;
    Py_XDECREF(zero);
    if (negative < 0)
        return NULL;
    void *fn = negative ? NULL : PyLong_AsVoidPtr(addr);
    if (fn == NULL) {
        if (negative || PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError,
                         "foreign_register(): address %R is not an address (an int from 1 to "
                         "2**64 - 1)",
                         addr);
        } else if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "foreign_register(): address is 0");
        }
        return NULL;
    }
    hop_foreign_options o = {.side_effects = side_effects != 0};
    if (keep != Py_None) {
        o.user_data = keep;
        o.release = release_keep;
    }
    const hop_foreign *f;
    /* Taken before registering: from then on a plan may hold the kernel.
     * A failed registration leaves user_data ours. */
    Py_INCREF(keep);
    if (hop_foreign_register(sig, fn, &o, &f) != HOP_OK) {
        Py_DECREF(keep);
        return hop_py_raise();
    }
    if (keep == Py_None)
        Py_DECREF(keep);
    return PyUnicode_FromString(hop_foreign_name(f));
}

/* The kernel named name; with acquire, with a reference the caller gives
 * back (hop_foreign_release). */
static const hop_foreign *
lookup(PyObject *name, bool acquire)
{
    const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (s == NULL) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "a foreign kernel's name must be a str, not %.100s",
                         Py_TYPE(name)->tp_name);
        return NULL;
    }
    const hop_foreign *f = acquire ? hop_foreign_acquire(s) : hop_foreign_find(s);
    if (f == NULL)
        hop_py_raise();
    return f;
}

static PyObject *
foreign_unregister(PyObject *self, PyObject *name)
{
    if (lookup(name, false) == NULL)
        return NULL;
    if (hop_foreign_unregister(PyUnicode_AsUTF8(name)) != HOP_OK)
        return hop_py_raise();
    Py_RETURN_NONE;
}

/* foreign_signature(name) -> the canonical prototype */
static PyObject *
foreign_signature(PyObject *self, PyObject *name)
{
    const hop_foreign *f = lookup(name, false);
    return f ? PyUnicode_FromString(hop_foreign_signature(f)) : NULL;
}

/* One Python operand; *traced is set for a proxy or a SymInt. */
static int
to_opnd(const char *fname, size_t i, PyObject *o, hop_py_opnd *out, bool *traced)
{
    if (PyObject_TypeCheck(o, &hop_py_TensorType)) {
        out->kind = HOP_PY_TENSOR;
        out->u.t = (TensorObject *)o;
        *traced = *traced || HOP_PY_IS_PROXY(o);
    } else if (PyObject_TypeCheck(o, &hop_py_SymIntType)) {
        out->kind = HOP_PY_SYM;
        out->u.sym = o;
        *traced = true;
    } else if (PyBool_Check(o)) {
        out->kind = HOP_PY_BOOL;
        out->u.b = o == Py_True;
    } else if (PyLong_Check(o)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) {
            PyErr_Format(PyExc_OverflowError, "%s(): argument %zu does not fit in int64", fname,
                         i + 1);
            return -1;
        }
        if (v == -1 && PyErr_Occurred())
            return -1;
        out->kind = HOP_PY_INT;
        out->u.i = v;
    } else if (PyFloat_Check(o)) {
        out->kind = HOP_PY_FLOAT;
        out->u.f = PyFloat_AS_DOUBLE(o);
    } else {
        PyErr_Format(PyExc_TypeError,
                     "%s(): argument %zu must be a hop.Tensor, an int, a float or a bool, not "
                     "%.100s",
                     fname, i + 1, Py_TYPE(o)->tp_name);
        return -1;
    }
    return 0;
}

static PyObject *
results(hop_tensor **outs, size_t n)
{
    if (n == 0)
        Py_RETURN_NONE;
    if (n == 1)
        return hop_py_tensor_new(outs[0]);
    PyObject *tuple = PyTuple_New((Py_ssize_t)n);
    for (size_t j = 0; j < n; j++) {
        PyObject *v = tuple ? hop_py_tensor_new(outs[j]) : NULL;
        if (v == NULL) {
            for (size_t k = tuple ? j + 1 : j; k < n; k++)
                hop_tensor_release(outs[k]);
            Py_XDECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, (Py_ssize_t)j, v);
    }
    return tuple;
}

/* foreign_call(name, *args): None, a Tensor or a tuple of Tensors. */
static PyObject *
foreign_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "foreign_call() needs the kernel's name");
        return NULL;
    }
    /* A reference for the call: the kernel, a ctypes callback, may run
     * Python code that unregisters it and drops every other reference. */
    const hop_foreign *f = lookup(args[0], true);
    if (f == NULL)
        return NULL;
    PyObject *result = NULL;
    const char *fname = hop_foreign_name(f);
    size_t n = (size_t)nargs - 1;
    if (n > HOP_FOREIGN_MAX_PARAMS) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zu arguments (%s), got %zu", fname,
                     hop_foreign_nparams(f), hop_foreign_signature(f), n);
        goto done;
    }
    hop_py_opnd opnds[HOP_FOREIGN_MAX_PARAMS];
    bool traced = false;
    for (size_t i = 0; i < n; i++)
        if (to_opnd(fname, i, args[i + 1], &opnds[i], &traced) < 0)
            goto done;
    if (traced || hop_py_tracing_active()) {
        result = hop_py_trace_foreign(f, opnds, n);
        goto done;
    }
    hop_rt_arg rt[HOP_FOREIGN_MAX_PARAMS];
    for (size_t i = 0; i < n; i++) {
        const hop_py_opnd *o = &opnds[i];
        rt[i] = o->kind == HOP_PY_TENSOR ? hop_rt_tensor(o->u.t->t)
                : o->kind == HOP_PY_BOOL ? hop_rt_bool(o->u.b)
                : o->kind == HOP_PY_INT  ? hop_rt_int(o->u.i)
                                         : hop_rt_float(o->u.f);
    }
    hop_tensor *outs[HOP_FOREIGN_MAX_PARAMS];
    size_t nouts = hop_foreign_noutputs(f);
    /* The kernel runs with the GIL held: a ctypes callback may be the kernel. */
    if (hop_foreign_call(f, rt, n, outs, nouts) != HOP_OK)
        hop_py_raise();
    else
        result = results(outs, nouts);
done:
    hop_foreign_release(f);
    return result;
}

/* foreign_unsized(name) -> the names of the kernel's pointer parameters
 * without a size (their extents come from the caller's word only), or None
 * when no kernel of that name is registered. */
static PyObject *
foreign_unsized(PyObject *self, PyObject *name)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "foreign_unsized(): name must be a str, not %.100s",
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    const char *text = PyUnicode_AsUTF8(name);
    if (text == NULL)
        return NULL;
    const hop_foreign *f = hop_foreign_acquire(text);
    if (f == NULL) {
        hop_error_clear();
        Py_RETURN_NONE;
    }
    PyObject *out = PyList_New(0);
    for (size_t i = 0; out != NULL && i < hop_foreign_nparams(f); i++) {
        const hop_foreign_param *p = hop_foreign_param_at(f, i);
        if (p->kind == HOP_FOREIGN_SCALAR || p->size != NULL)
            continue;
        PyObject *n = PyUnicode_FromString(p->name);
        if (n == NULL || PyList_Append(out, n) < 0)
            Py_CLEAR(out);
        Py_XDECREF(n);
    }
    hop_foreign_release(f);
    return out;
}

static PyMethodDef foreign_functions[] = {
    {"_foreign_register", (PyCFunction)(void (*)(void))foreign_register,
     METH_VARARGS | METH_KEYWORDS,
     "foreign_register(signature, address, side_effects=False, keep=None) -> name: registers "
     "the C function at address with the given prototype; the kernel (in the registry and in "
     "every plan that calls it) keeps keep alive."},
    {"_foreign_unregister", foreign_unregister, METH_O, "foreign_unregister(name)"},
    {"_foreign_signature", foreign_signature, METH_O,
     "foreign_signature(name) -> the kernel's prototype in canonical spelling."},
    {"_foreign_unsized", foreign_unsized, METH_O,
     "foreign_unsized(name) -> the kernel's pointer parameters without a size, or None."},
    {"_foreign_call", (PyCFunction)(void (*)(void))foreign_call, METH_FASTCALL,
     "foreign_call(name, *args): calls the kernel eagerly, or records it while tracing."},
    {NULL},
};

int
hop_py_foreign_init(PyObject *m)
{
    return PyModule_AddFunctions(m, foreign_functions);
}
