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
 * or -1 with an exception (hop_py.h: guard_scan.c's too). */
int
hop_py_is_hop_module(PyObject *s)
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

/* What roots_into answers besides -1 (an exception). */
enum { ROOTS_READ = 1, ROOTS_WALK = 0, ROOTS_ASK = 2 };

/* A walked callee's plain check is read this many calls deep at most;
 * deeper, the full check walks it. */
#define WALK_DEPTH 32

static int plain_helpers(void);
static PyObject *cached_effects(PyObject *code);
static PyObject *s_unknown, *s_plain;

/* What one reading of roots fills: the (name, holder, value) lists of
 * cells and globals, and the ids of the functions walked (seen, made at
 * the first walked callee: most bodies hold none; top, the body's). */
typedef struct {
    PyObject *cells, *globs, *seen, *top;
} roots_out;

static int roots_into(PyFunctionObject *fn, PyObject *plan, int check, roots_out *o, int depth);

/*
 * The roots of v, a function the full check walks where fn's root holds
 * it (_Check.visit's scan), appended to cells and globs as the walk would:
 * ROOTS_READ when v was walked already (seen: the walk's functions) or its
 * code's cached verdict is plain, its callees are still the verdict's and
 * so on for each function it holds in turn; ROOTS_WALK otherwise (the full
 * check then makes the verdicts again: issue #30, cond's branch
 * `lambda a, y: block(a, y)` took the full check on every call).  The
 * verdict is per code object and its callees are resolved here on every
 * call, the roots read anew: a rebound cell or global, a replaced
 * __code__ or callee is never stale.
 */
static int
walk_callee(PyObject *v, roots_out *o, int depth)
{
    if (o->seen == NULL) {
        PyObject *top = PyLong_FromVoidPtr(o->top);
        o->seen = top ? PySet_New(NULL) : NULL;
        int added = o->seen ? PySet_Add(o->seen, top) : -1;
        Py_XDECREF(top);
        if (added < 0)
            return -1;
    }
    PyObject *id = PyLong_FromVoidPtr(v);
    int in = id ? PySet_Contains(o->seen, id) : -1;
    if (in != 0) {
        Py_XDECREF(id);
        return in < 0 ? -1 : ROOTS_READ;
    }
    int rc = PySet_Add(o->seen, id);
    Py_DECREF(id);
    if (rc < 0 || plain_helpers() < 0)
        return -1;
    if (depth >= WALK_DEPTH)
        return ROOTS_WALK;
    PyObject *eff = cached_effects(PyFunction_GET_CODE(v));
    if (eff == NULL)
        return PyErr_Occurred() ? -1 : ROOTS_WALK;
    PyObject *unknown = PyObject_GetAttr(eff, s_unknown);
    PyObject *plan = unknown ? PyObject_GetAttr(eff, s_plain) : NULL;
    int t = plan ? PyObject_IsTrue(unknown) : -1;
    if (t < 0)
        rc = -1;
    else if (t || !PyTuple_Check(plan))
        rc = ROOTS_WALK;
    else
        rc = roots_into((PyFunctionObject *)v, plan, 1, o, depth + 1);
    Py_XDECREF(unknown);
    Py_XDECREF(plan);
    Py_DECREF(eff);
    return rc == ROOTS_ASK ? ROOTS_WALK : rc;
}

/* fn's roots (and those of the functions it holds that the check walks)
 * appended to cells and globs: ROOTS_READ, ROOTS_WALK, ROOTS_ASK or -1
 * (pure_roots). */
static int
roots_into(PyFunctionObject *fn, PyObject *plan, int check, roots_out *o, int depth)
{
    if (PyTuple_GET_SIZE(plan) != 9)
        return ROOTS_ASK;
    PyObject *names = PyTuple_GET_ITEM(plan, 0), *freevars = PyTuple_GET_ITEM(plan, 1),
             *cell_body = PyTuple_GET_ITEM(plan, 2), *global_body = PyTuple_GET_ITEM(plan, 3),
             *calls = PyTuple_GET_ITEM(plan, 4), *held = PyTuple_GET_ITEM(plan, 5),
             *builtins = PyTuple_GET_ITEM(plan, 6), *missing = PyTuple_GET_ITEM(plan, 7),
             *a_method = PyTuple_GET_ITEM(plan, 8);
    PyObject *g = fn->func_globals;
    if (!PyDict_CheckExact(g) || !PyTuple_Check(freevars) ||
        PyTuple_GET_SIZE(freevars) != PyTuple_GET_SIZE(cell_body))
        return ROOTS_ASK;
    if (check) {
        /* (the plan is of fn's code: its free variables are the code's) */
        const reader r = {g, freevars, fn->func_closure ? fn->func_closure : Py_None};
        int same = same_callees(&r, calls, held, builtins, missing, a_method);
        if (same <= 0)
            return same < 0 ? -1 : ROOTS_ASK;
    }
    int rc = ROOTS_READ;
    PyObject *closure = fn->func_closure;
    Py_ssize_t ncell = closure ? PyTuple_GET_SIZE(closure) : 0;
    for (Py_ssize_t i = 0; i < ncell && i < PyTuple_GET_SIZE(freevars); i++) {
        PyObject *cell = PyTuple_GET_ITEM(closure, i), *v = PyCell_GET(cell);
        if (v == NULL)
            v = missing;
        if (push_root(o->cells, PyTuple_GET_ITEM(freevars, i), cell, v) < 0)
            return -1;
        /* (a hop.compile object runs its function inside the trace: the
         * full check, in Python, walks that function) */
        if (hop_py__is_compiled_call(v) && PyTuple_GET_ITEM(cell_body, i) != Py_True)
            return ROOTS_ASK;
        if (PyFunction_Check(v) && PyTuple_GET_ITEM(cell_body, i) != Py_True &&
            (rc = walk_callee(v, o, depth)) != ROOTS_READ)
            return rc;
    }
    /* _reads.roots: no globals for a function of hop itself (its name
     * read as `g.get("__name__") or ""`) */
    PyObject *modname = PyDict_GetItemWithError(g, dunder_name);
    if (modname == NULL && PyErr_Occurred())
        return -1;
    int hop_own = 0;
    if (modname != NULL && PyUnicode_Check(modname)) {
        if ((hop_own = hop_py_is_hop_module(modname)) < 0)
            return -1;
    } else if (modname != NULL && PyObject_IsTrue(modname) != 0) {
        return ROOTS_ASK; /* not a str: Python's test decides (and raises) */
    }
    for (Py_ssize_t j = 0; !hop_own && j < PyTuple_GET_SIZE(names); j++) {
        PyObject *name = PyTuple_GET_ITEM(names, j);
        PyObject *v = PyDict_GetItemWithError(g, name);
        if (v == NULL) {
            if (PyErr_Occurred())
                return -1;
            continue;
        }
        Py_INCREF(v); /* (the walk below runs code that may rebind it) */
        rc = push_root(o->globs, name, g, v) < 0 ? -1 : ROOTS_READ;
        if (rc == ROOTS_READ && hop_py__is_compiled_call(v) &&
            PyTuple_GET_ITEM(global_body, j) != Py_True)
            rc = ROOTS_ASK; /* (as a cell's, above) */
        if (rc == ROOTS_READ && PyFunction_Check(v) && PyTuple_GET_ITEM(global_body, j) != Py_True) {
            int in_cells = PySequence_Contains(freevars, name);
            if (in_cells < 0)
                rc = -1;
            else if (((PyFunctionObject *)v)->func_globals == g || in_cells)
                rc = walk_callee(v, o, depth);
        }
        Py_DECREF(v);
        if (rc != ROOTS_READ)
            return rc;
    }
    return ROOTS_READ;
}

/*
 * _pure_roots(fn, plan, check) -> (cells, globals), False or None.
 *
 * plan (made by _purity._verdict for a plain verdict): (names, freevars,
 * cell_body, global_body, calls, held, builtins, missing, a_method), of
 * fn's code.  check: resolve the calls and compare them with held first.
 * (cells, globals): the (name, cell, value) and (name, globals, value)
 * _Check would record, those of the functions its roots hold that the
 * check walks included (walk_callee); False: the full check (a root holds
 * a function the check walks whose own check is not plain or not known
 * yet); None: not answered here (fn is not a plain function, its globals
 * are not a dict, a callee differs from the verdict's): ask Python.
 */
static PyObject *
pure_roots(PyObject *fno, PyObject *plan, int check)
{
    if (!PyFunction_Check(fno))
        Py_RETURN_NONE;
    roots_out o = {PyList_New(0), PyList_New(0), NULL, fno};
    PyObject *result = NULL;
    int rc = o.cells && o.globs ? roots_into((PyFunctionObject *)fno, plan, check, &o, 0) : -1;
    if (rc == ROOTS_READ)
        result = PyTuple_Pack(2, o.cells, o.globs);
    else if (rc >= 0)
        result = Py_NewRef(rc == ROOTS_WALK ? Py_False : Py_None);
    Py_XDECREF(o.seen);
    Py_XDECREF(o.cells);
    Py_XDECREF(o.globs);
    return result;
}

static PyObject *
py_pure_roots(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *fno, *plan;
    int check;
    if (!PyArg_ParseTuple(args, "OO!p:_pure_roots", &fno, &PyTuple_Type, &plan, &check))
        return NULL;
    return pure_roots(fno, plan, check);
}

/* ------------------------------------------------------ run_pure in C */

/* _purity's side of the plain path, looked up at the first body:
 * _reads' per-code cache, _run_read, _plain_undo and _plain_done; and
 * _purity's dict and its _run_plain as the module made it (_RUN_PLAIN),
 * whose path this is: a test that replaces _run_plain to count the bodies
 * it checks gets Python's path. */
static PyObject *names_cache, *run_read_fn, *plain_undo_fn, *plain_done_fn;
static PyObject *purity_dict, *run_plain_fn;
static PyObject *s_code, *s_effects, *s_run_plain;

static int
plain_helpers(void)
{
    if (plain_done_fn)
        return 0;
    PyObject *reads = PyImport_ImportModule("hop._reads");
    PyObject *purity = reads ? PyImport_ImportModule("hop._purity") : NULL;
    if (purity && (s_code = PyUnicode_InternFromString("code")) &&
        (s_effects = PyUnicode_InternFromString("effects")) &&
        (s_unknown = PyUnicode_InternFromString("unknown")) &&
        (s_plain = PyUnicode_InternFromString("plain")) &&
        (s_run_plain = PyUnicode_InternFromString("_run_plain")) &&
        (purity_dict = Py_NewRef(PyModule_GetDict(purity))) &&
        (run_plain_fn = PyObject_GetAttrString(purity, "_RUN_PLAIN")) &&
        (names_cache = PyObject_GetAttrString(reads, "_names_cache")) &&
        (run_read_fn = PyObject_GetAttrString(purity, "_run_read")) &&
        (plain_undo_fn = PyObject_GetAttrString(purity, "_plain_undo")))
        plain_done_fn = PyObject_GetAttrString(purity, "_plain_done");
    Py_XDECREF(reads);
    Py_XDECREF(purity);
    return plain_done_fn ? 0 : -1;
}

/* The effects of fn's code that run_pure reads from _reads' cache (a new
 * reference), or NULL without an exception where run_pure must read them
 * itself (not cached, its code gone) or with one. */
static PyObject *
cached_effects(PyObject *code)
{
    PyObject *key = PyLong_FromVoidPtr(code);
    PyObject *n = key ? PyDict_GetItemWithError(names_cache, key) : NULL; /* borrowed */
    Py_XDECREF(key);
    if (n == NULL)
        return NULL;
    PyObject *ref = PyObject_GetAttr(n, s_code);
    bool same = ref && PyWeakref_Check(ref) && PyWeakref_GetObject(ref) == code;
    Py_XDECREF(ref);
    if (!same)
        return NULL;
    PyObject *eff = PyObject_GetAttr(n, s_effects);
    if (eff == Py_None)
        Py_CLEAR(eff);
    return eff;
}

/* Whether every recorded cell ((name, cell, value)) and global ((name,
 * globals, value)) still holds its value (_purity._rebound is None): 1, 0,
 * -1 with an exception. */
static int
roots_hold(PyObject *cells, PyObject *globs, PyObject *missing)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(cells); i++) {
        PyObject *r = PyList_GET_ITEM(cells, i), *now = PyCell_GET(PyTuple_GET_ITEM(r, 1));
        if ((now ? now : missing) != PyTuple_GET_ITEM(r, 2))
            return 0;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(globs); i++) {
        PyObject *r = PyList_GET_ITEM(globs, i);
        PyObject *now = PyDict_GetItemWithError(PyTuple_GET_ITEM(r, 1), PyTuple_GET_ITEM(r, 0));
        if (now == NULL && PyErr_Occurred())
            return -1;
        if ((now ? now : missing) != PyTuple_GET_ITEM(r, 2))
            return 0;
    }
    return 1;
}

/* _purity._run_plain of fn(*args) with the roots read (cells, globs). */
static PyObject *
run_plain(PyObject *hop_name, PyObject *which, PyObject *fn, PyObject *args, PyObject *read,
          PyObject *missing)
{
    PyObject *cells = PyTuple_GET_ITEM(read, 0), *globs = PyTuple_GET_ITEM(read, 1);
    PyObject *result = PyObject_Call(fn, args, NULL);
    if (result == NULL) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyObject *r = PyObject_CallFunctionObjArgs(plain_undo_fn, cells, globs, NULL);
        if (r == NULL)
            _PyErr_ChainExceptions(type, value, tb); /* as a raise inside except */
        else
            PyErr_Restore(type, value, tb);
        Py_XDECREF(r);
        return NULL;
    }
    int hold = roots_hold(cells, globs, missing);
    if (hold == 1)
        return result;
    PyObject *r = hold < 0 ? NULL
                           : PyObject_CallFunctionObjArgs(plain_done_fn, hop_name, which, cells,
                                                          globs, NULL);
    if (r == NULL)
        Py_CLEAR(result);
    Py_XDECREF(r);
    return result;
}

/*
 * _purity.run_pure(hop_name, which, fn, args) for a body of a HOP's direct
 * call (hops.c): the plain path in C (issue #30: run_pure, _run_plain and
 * _rebound were three Python calls of every nested level), with Python's
 * own functions where it ends otherwise: run_pure where fn has no closure
 * cell, its code's effects are not cached yet or _run_plain was replaced,
 * _run_read where the check is not plain, _plain_undo and _plain_done on a
 * raise or a rebinding.
 */
PyObject *
hop_py_run_pure(PyObject *run_pure, PyObject *hop_name, PyObject *which, PyObject *fn,
                PyObject *args)
{
    PyObject *code = PyFunction_Check(fn) ? PyFunction_GET_CODE(fn) : NULL;
    PyObject *eff = NULL, *result = NULL;
    if (code == NULL || ((PyCodeObject *)code)->co_nfreevars == 0 || plain_helpers() < 0 ||
        PyDict_GetItemWithError(purity_dict, s_run_plain) != run_plain_fn ||
        (eff = cached_effects(code)) == NULL) {
        if (PyErr_Occurred())
            return NULL;
        return PyObject_CallFunctionObjArgs(run_pure, hop_name, which, fn, args, NULL);
    }
    PyObject *unknown = PyObject_GetAttr(eff, s_unknown);
    PyObject *plan = unknown ? PyObject_GetAttr(eff, s_plain) : NULL;
    int t = plan ? PyObject_IsTrue(unknown) : -1;
    if (t != 0 || !PyTuple_Check(plan)) {
        /* the full check, or no plain verdict yet: Python's */
        if (t >= 0)
            result = PyObject_CallFunctionObjArgs(run_pure, hop_name, which, fn, args, NULL);
        goto done;
    }
    PyObject *read = pure_roots(fn, plan, 1);
    if (read && PyTuple_Check(read))
        result = run_plain(hop_name, which, fn, args, read, PyTuple_GET_ITEM(plan, 7));
    else if (read)
        result = PyObject_CallFunctionObjArgs(run_read_fn, hop_name, which, fn, args, Py_None, eff,
                                              read, NULL);
    Py_XDECREF(read);
done:
    Py_XDECREF(unknown);
    Py_XDECREF(plan);
    Py_DECREF(eff);
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
