/*
 * The per-call part of the purity check of a HOP body whose verdict is
 * plain (python/hop/_purity.py: no outer name the body reads may be
 * written by it), in C: issue #30 measured the Python loops that resolved
 * the body's callees, compared them with the verdict's and read its cells
 * and globals at ~20,000 instructions a nested level, for two names.
 *
 * _purity owns the check: what a verdict is, when it is plain, what a call
 * then records and what it does on a rebinding.  This file owns two
 * readings: the object each call a body's code records resolves to
 * (_pure_callees, for every verdict), and a plain body's roots in the order
 * and with the meaning of _reads.roots and _Check.visit (_pure_roots), which
 * answers "ask Python" for anything it does not handle.
 */
#include "hop_py.h"

#include <string.h>

static bool
is_module_or_class(PyObject *v)
{
    return PyModule_Check(v) || PyType_Check(v);
}

/* What a function (or a bound method: its __func__'s) reads by: its
 * globals, its code's free variable names and its closure (new references;
 * closure may be Py_None), 0; -1 with an exception. */
typedef struct {
    PyObject *globals, *freevars, *closure;
} reader;

static int
reader_of(PyObject *fn, reader *r)
{
    *r = (reader){0};
    if (PyFunction_Check(fn)) {
        PyFunctionObject *f = (PyFunctionObject *)fn;
        r->globals = Py_NewRef(f->func_globals);
        r->freevars = PyCode_GetFreevars((PyCodeObject *)f->func_code);
        r->closure = Py_NewRef(f->func_closure ? f->func_closure : Py_None);
        return r->freevars ? 0 : -1;
    }
    PyObject *code = PyObject_GetAttrString(fn, "__code__");
    r->globals = code ? PyObject_GetAttrString(fn, "__globals__") : NULL;
    r->freevars = r->globals ? PyObject_GetAttrString(code, "co_freevars") : NULL;
    r->closure = r->freevars ? PyObject_GetAttrString(fn, "__closure__") : NULL;
    Py_XDECREF(code);
    return r->closure ? 0 : -1;
}

static void
reader_clear(reader *r)
{
    Py_CLEAR(r->globals);
    Py_CLEAR(r->freevars);
    Py_CLEAR(r->closure);
}

/* globals.get(name, missing): a new reference, NULL with an exception. */
static PyObject *
global_or(PyObject *g, PyObject *name, PyObject *missing)
{
    if (!PyDict_CheckExact(g))
        return PyObject_CallMethod(g, "get", "OO", name, missing);
    PyObject *v = PyDict_GetItemWithError(g, name);
    if (v == NULL && PyErr_Occurred())
        return NULL;
    return Py_NewRef(v ? v : missing);
}

/* _reads.root_value(fn, "c", name): what closure cell name holds, or
 * missing (a new reference; NULL with an exception). */
static PyObject *
cell_value(const reader *r, PyObject *name, PyObject *missing)
{
    if (r->closure == Py_None || !PyTuple_Check(r->closure) || !PyTuple_Check(r->freevars))
        return Py_NewRef(missing);
    Py_ssize_t n = PyTuple_GET_SIZE(r->closure);
    for (Py_ssize_t i = 0; i < n && i < PyTuple_GET_SIZE(r->freevars); i++) {
        int eq = PyObject_RichCompareBool(PyTuple_GET_ITEM(r->freevars, i), name, Py_EQ);
        if (eq < 0)
            return NULL;
        if (eq) {
            PyObject *v = PyCell_GET(PyTuple_GET_ITEM(r->closure, i));
            return Py_NewRef(v ? v : missing);
        }
    }
    return Py_NewRef(missing);
}

/* The object one recorded call of a body calls (a new reference: missing,
 * a_method for a method of a value, or the object), NULL with an
 * exception.  call: (method, path), path ("g" or "c", name, attributes...)
 * as _code_effects records it; followed through attributes of modules and
 * classes only, never a property. */
static PyObject *
callee(const reader *r, PyObject *call, PyObject *builtins, PyObject *missing, PyObject *a_method)
{
    int method = PyObject_IsTrue(PyTuple_GET_ITEM(call, 0));
    PyObject *path = PyTuple_GET_ITEM(call, 1);
    Py_ssize_t n = PyTuple_GET_SIZE(path);
    PyObject *name = PyTuple_GET_ITEM(path, 1), *v;
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(path, 0), "g") == 0) {
        v = global_or(r->globals, name, missing);
        if (v == missing)
            Py_SETREF(v, hop_py_attr_or(PyObject_GetAttr(builtins, name), missing));
    } else {
        v = cell_value(r, name, missing);
    }
    for (Py_ssize_t i = 2; v && i < (method ? n - 1 : n); i++) {
        if (!is_module_or_class(v)) {
            Py_SETREF(v, Py_NewRef(method ? a_method : missing));
            return v;
        }
        Py_SETREF(v, hop_py_attr_or(PyObject_GetAttr(v, PyTuple_GET_ITEM(path, i)), missing));
    }
    if (v && method) {
        if (!is_module_or_class(v))
            Py_SETREF(v, Py_NewRef(a_method));
        else
            Py_SETREF(v,
                      hop_py_attr_or(PyObject_GetAttr(v, PyTuple_GET_ITEM(path, n - 1)), missing));
    }
    return v;
}

/* Whether each call of a body resolves to the object its verdict was made
 * with (held: (weak, object) per call, as _purity._hold keeps them): 1, 0,
 * or -1 with an exception. */
static int
same_callees(const reader *r, PyObject *calls, PyObject *held, PyObject *builtins,
             PyObject *missing, PyObject *a_method)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(calls); i++) {
        PyObject *c = callee(r, PyTuple_GET_ITEM(calls, i), builtins, missing, a_method);
        if (c == NULL)
            return -1;
        PyObject *h = PyTuple_GET_ITEM(held, i);
        PyObject *x = PyTuple_GET_ITEM(h, 1);
        if (PyTuple_GET_ITEM(h, 0) == Py_True) {
            x = PyWeakref_GetObject(x); /* Py_None once freed: never a live callee */
            if (x == Py_None) {
                Py_DECREF(c);
                return 0;
            }
        }
        Py_DECREF(c);
        if (x != c)
            return 0;
    }
    return 1;
}

/*
 * _pure_callees(fn, calls, builtins, missing, a_method) -> tuple: the object
 * each recorded call (method, path) of fn calls, in order (_purity._verdict).
 */
static PyObject *
py_pure_callees(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *fn, *calls, *builtins, *missing, *a_method;
    if (!PyArg_ParseTuple(args, "OO!OOO:_pure_callees", &fn, &PyTuple_Type, &calls, &builtins,
                          &missing, &a_method))
        return NULL;
    reader r;
    if (reader_of(fn, &r) < 0)
        return NULL;
    PyObject *out = PyTuple_New(PyTuple_GET_SIZE(calls));
    for (Py_ssize_t i = 0; out && i < PyTuple_GET_SIZE(calls); i++) {
        PyObject *c = callee(&r, PyTuple_GET_ITEM(calls, i), builtins, missing, a_method);
        if (c == NULL)
            Py_CLEAR(out);
        else
            PyTuple_SET_ITEM(out, i, c);
    }
    reader_clear(&r);
    return out;
}

static PyObject *dunder_name; /* "__name__", interned at init */

/* Whether the module name s (a str) is hop's (_reads.is_hop_module): 1, 0,
 * or -1 with an exception. */
static int
is_hop_module(PyObject *s)
{
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (u == NULL)
        return -1;
    return (n == 3 && memcmp(u, "hop", 3) == 0) || (n >= 4 && memcmp(u, "hop.", 4) == 0);
}

static int
push_root(PyObject *list, PyObject *name, PyObject *holder, PyObject *value)
{
    PyObject *t = PyTuple_Pack(3, name, holder, value);
    int rc = t ? PyList_Append(list, t) : -1;
    Py_XDECREF(t);
    return rc;
}

/*
 * _pure_roots(fn, plan, check) -> (cells, globals), False or None.
 *
 * plan (made by _purity._verdict for a plain verdict): (names, freevars,
 * cell_body, global_body, calls, held, builtins, missing, a_method), of
 * fn's code.  check: resolve the calls and compare them with held first.
 * (cells, globals): the (name, cell, value) and (name, globals, value)
 * _Check would record; False: a root holds a function the check walks
 * (the full check); None: not answered here (fn is not a plain function,
 * its globals are not a dict, a callee differs from the verdict's): ask
 * Python.
 */
static PyObject *
py_pure_roots(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *fno, *plan;
    int check;
    if (!PyArg_ParseTuple(args, "OO!p:_pure_roots", &fno, &PyTuple_Type, &plan, &check))
        return NULL;
    if (!PyFunction_Check(fno) || PyTuple_GET_SIZE(plan) != 9)
        Py_RETURN_NONE;
    PyFunctionObject *fn = (PyFunctionObject *)fno;
    PyObject *names = PyTuple_GET_ITEM(plan, 0), *freevars = PyTuple_GET_ITEM(plan, 1),
             *cell_body = PyTuple_GET_ITEM(plan, 2), *global_body = PyTuple_GET_ITEM(plan, 3),
             *calls = PyTuple_GET_ITEM(plan, 4), *held = PyTuple_GET_ITEM(plan, 5),
             *builtins = PyTuple_GET_ITEM(plan, 6), *missing = PyTuple_GET_ITEM(plan, 7),
             *a_method = PyTuple_GET_ITEM(plan, 8);
    PyObject *g = fn->func_globals;
    if (!PyDict_CheckExact(g) || !PyTuple_Check(freevars) ||
        PyTuple_GET_SIZE(freevars) != PyTuple_GET_SIZE(cell_body))
        Py_RETURN_NONE;
    if (check) {
        /* (the plan is of fn's code: its free variables are the code's) */
        const reader r = {g, freevars, fn->func_closure ? fn->func_closure : Py_None};
        int same = same_callees(&r, calls, held, builtins, missing, a_method);
        if (same < 0)
            return NULL;
        if (!same)
            Py_RETURN_NONE;
    }
    PyObject *cells = PyList_New(0), *globs = PyList_New(0), *result = NULL;
    if (cells == NULL || globs == NULL)
        goto done;
    PyObject *closure = fn->func_closure;
    Py_ssize_t ncell = closure ? PyTuple_GET_SIZE(closure) : 0;
    for (Py_ssize_t i = 0; i < ncell && i < PyTuple_GET_SIZE(freevars); i++) {
        PyObject *cell = PyTuple_GET_ITEM(closure, i), *v = PyCell_GET(cell);
        if (v == NULL)
            v = missing;
        if (PyFunction_Check(v) && PyTuple_GET_ITEM(cell_body, i) != Py_True) {
            result = Py_NewRef(Py_False);
            goto done;
        }
        if (push_root(cells, PyTuple_GET_ITEM(freevars, i), cell, v) < 0)
            goto done;
    }
    /* _reads.roots: no globals for a function of hop itself (its name
     * read as `g.get("__name__") or ""`) */
    PyObject *modname = PyDict_GetItemWithError(g, dunder_name);
    if (modname == NULL && PyErr_Occurred())
        goto done;
    int hop_own = 0;
    if (modname != NULL && PyUnicode_Check(modname)) {
        if ((hop_own = is_hop_module(modname)) < 0)
            goto done;
    } else if (modname != NULL && PyObject_IsTrue(modname) != 0) {
        result = Py_NewRef(Py_None); /* not a str: Python's test decides (and raises) */
        goto done;
    }
    if (!hop_own) {
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(names); j++) {
            PyObject *name = PyTuple_GET_ITEM(names, j);
            PyObject *v = PyDict_GetItemWithError(g, name);
            if (v == NULL) {
                if (PyErr_Occurred())
                    goto done;
                continue;
            }
            if (PyFunction_Check(v) && PyTuple_GET_ITEM(global_body, j) != Py_True) {
                int in_cells = PySequence_Contains(freevars, name);
                if (in_cells < 0)
                    goto done;
                if (((PyFunctionObject *)v)->func_globals == g || in_cells) {
                    result = Py_NewRef(Py_False);
                    goto done;
                }
            }
            if (push_root(globs, name, g, v) < 0)
                goto done;
        }
    }
    result = PyTuple_Pack(2, cells, globs);
done:
    Py_XDECREF(cells);
    Py_XDECREF(globs);
    return result;
}

static PyMethodDef purity_functions[] = {
    {"_pure_callees", py_pure_callees, METH_VARARGS,
     "_pure_callees(fn, calls, builtins, missing, a_method) -> the object each recorded call of "
     "a body calls (hop._purity)"},
    {"_pure_roots", py_pure_roots, METH_VARARGS,
     "_pure_roots(fn, plan, check) -> (cells, globals), False or None: the plain purity check's "
     "reading of a body (hop._purity)"},
    {NULL, NULL, 0, NULL},
};

int
hop_py_purity_init(PyObject *module)
{
    if (dunder_name == NULL && (dunder_name = PyUnicode_InternFromString("__name__")) == NULL)
        return -1;
    return PyModule_AddFunctions(module, purity_functions);
}
