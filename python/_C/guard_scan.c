/*
 * The guard scan's two readings of a function, in C (python/hop/_guards.py
 * scan; issue #30): the breadth-first walk from a traced function to the
 * user's functions whose code runs with it (_reads.Walk.breadth_first with
 * _guards._Follow) and the roots each walked function is guarded by
 * (_reads.roots with _guards._FOLLOW).  In Python the two read every
 * function's cells and globals once each, with a Python call per
 * candidate: ~64 K instructions a function, more than half of a 64-deep
 * nest's trace.
 *
 * _guards owns the scan: what a guard is, which roots are guarded and how
 * a value is visited.  _reads owns the rules both follow here (which
 * module is the user's, which function is hop's, a code object's names):
 * this file reads them from _reads (its names cache, _LIBRARY_PACKAGES,
 * MISSING) and calls _reads' own functions wherever a value is not of the
 * plain kind it handles (a module name that is not a str, globals that are
 * not a dict), so both give the same answer, or the same exception.
 */
#include "hop_py.h"

#include <structmember.h> /* (T_OBJECT_EX: a __slots__ member) */

/* _reads' side, looked up at the first scan. */
static PyObject *names_cache, *names_of_fn, *is_user_fn, *is_hop_fn, *missing, *library;
static PyObject *stdlib_names, *builtins_mod;
static PyObject *s_code, *s_set, *s_order, *s_gorder, *s_gsorted, *s_loads, *s_global_loads,
    *s_name, *s_wrapped, *s_builtins, *s_cell, *s_global, *s_default, *s_kwdefault, *s_id, *s_empty,
    *s_arg, *s_names, *s_weak, *s_globals;

static int
scan_helpers(void)
{
    if (s_empty)
        return 0;
    PyObject *reads = PyImport_ImportModule("hop._reads");
    PyObject *sys = reads ? PyImport_ImportModule("sys") : NULL;
    if (sys && (names_cache = PyObject_GetAttrString(reads, "_names_cache")) &&
        (names_of_fn = PyObject_GetAttrString(reads, "names_of")) &&
        (is_user_fn = PyObject_GetAttrString(reads, "is_user_module")) &&
        (is_hop_fn = PyObject_GetAttrString(reads, "is_hop_function")) &&
        (missing = PyObject_GetAttrString(reads, "MISSING")) &&
        (library = PyObject_GetAttrString(reads, "_LIBRARY_PACKAGES")) &&
        (stdlib_names = PyObject_GetAttrString(sys, "stdlib_module_names")) &&
        (builtins_mod = PyImport_ImportModule("builtins")) &&
        (s_code = PyUnicode_InternFromString("code")) &&
        (s_set = PyUnicode_InternFromString("set")) &&
        (s_order = PyUnicode_InternFromString("order")) &&
        (s_gsorted = PyUnicode_InternFromString("gsorted")) &&
        (s_gorder = PyUnicode_InternFromString("gorder")) &&
        (s_loads = PyUnicode_InternFromString("loads")) &&
        (s_global_loads = PyUnicode_InternFromString("global_loads")) &&
        (s_name = PyUnicode_InternFromString("__name__")) &&
        (s_wrapped = PyUnicode_InternFromString("__wrapped__")) &&
        (s_builtins = PyUnicode_InternFromString("__builtins__")) &&
        (s_cell = PyUnicode_InternFromString("cell")) &&
        (s_global = PyUnicode_InternFromString("global")) &&
        (s_default = PyUnicode_InternFromString("default")) &&
        (s_kwdefault = PyUnicode_InternFromString("kwdefault")) &&
        (s_id = PyUnicode_InternFromString("id")) && (s_arg = PyUnicode_InternFromString("arg")) &&
        (s_names = PyUnicode_InternFromString("names")) &&
        (s_weak = PyUnicode_InternFromString("weak")) &&
        (s_globals = PyUnicode_InternFromString("globals")))
        s_empty = PyUnicode_InternFromString("");
    Py_XDECREF(reads);
    Py_XDECREF(sys);
    return s_empty ? 0 : -1;
}

/* _reads.names_of(code): the cache's entry while it is this code's, else
 * names_of's answer (a new reference; NULL with an exception). */
static PyObject *
names_for(PyObject *code)
{
    PyObject *key = PyLong_FromVoidPtr(code);
    PyObject *n = key ? PyDict_GetItemWithError(names_cache, key) : NULL; /* borrowed */
    Py_XDECREF(key);
    if (n == NULL && PyErr_Occurred())
        return NULL;
    if (n != NULL) {
        PyObject *ref = PyObject_GetAttr(n, s_code);
        bool same = ref && PyWeakref_Check(ref) && PyWeakref_GetObject(ref) == code;
        Py_XDECREF(ref);
        if (same)
            return Py_NewRef(n);
        if (PyErr_Occurred())
            return NULL;
    }
    return PyObject_CallOneArg(names_of_fn, code);
}

/* dict.get(key, dflt) of a function's globals (a new reference; NULL with
 * an exception): a dict subclass's own get() is called. */
static PyObject *
dict_get(PyObject *d, PyObject *key, PyObject *dflt)
{
    if (!PyDict_CheckExact(d))
        return PyObject_CallMethod(d, "get", "OO", key, dflt);
    PyObject *v = PyDict_GetItemWithError(d, key);
    if (v == NULL && PyErr_Occurred())
        return NULL;
    return Py_NewRef(v ? v : dflt);
}

/* _reads.is_user_module(name): 1, 0, -1 with an exception.  A name that
 * is not exactly a str is _reads' to judge (and to raise for). */
static int
is_user(PyObject *name)
{
    if (!PyUnicode_CheckExact(name)) {
        PyObject *r = PyObject_CallOneArg(is_user_fn, name);
        int t = r ? PyObject_IsTrue(r) : -1;
        Py_XDECREF(r);
        return t;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(name);
    Py_ssize_t dot = PyUnicode_FindChar(name, '.', 0, n, 1);
    if (dot == -2)
        return -1;
    PyObject *top = dot < 0 ? Py_NewRef(name) : PyUnicode_Substring(name, 0, dot);
    if (top == NULL)
        return -1;
    int in = PySet_Contains(library, top);
    if (in == 0)
        in = PySequence_Contains(stdlib_names, top);
    Py_DECREF(top);
    return in < 0 ? -1 : !in;
}

/* _reads.is_hop_function(f) of a Python function: 1, 0, -1 with an
 * exception (a module name that is not a str: _reads' own test). */
static int
is_hop_function(PyObject *f)
{
    PyObject *g = PyFunction_GET_GLOBALS(f);
    PyObject *name = PyDict_CheckExact(g) ? PyDict_GetItemWithError(g, s_name) : NULL;
    if (name == NULL && PyErr_Occurred())
        return -1;
    if (PyDict_CheckExact(g) && (name == NULL || PyUnicode_CheckExact(name)))
        return name ? hop_py_is_hop_module(name) : 0;
    PyObject *r = PyObject_CallOneArg(is_hop_fn, f);
    int t = r ? PyObject_IsTrue(r) : -1;
    Py_XDECREF(r);
    return t;
}

/* _guards._Follow.callee(v): the user's function whose code runs where v
 * is called (a hop wrapper: the function it wraps), as a new reference,
 * Py_None for none, NULL with an exception. */
static PyObject *
callee(PyObject *v)
{
    if (!PyFunction_Check(v))
        Py_RETURN_NONE;
    int hop = is_hop_function(v);
    if (hop < 0)
        return NULL;
    PyObject *f = Py_NewRef(v);
    if (hop) {
        Py_SETREF(f, hop_py_attr_or(PyObject_GetAttr(v, s_wrapped), Py_None));
        if (f == NULL)
            return NULL;
        int inner = PyFunction_Check(f) ? is_hop_function(f) : 1;
        if (inner != 0) {
            Py_DECREF(f);
            return inner < 0 ? NULL : Py_NewRef(Py_None);
        }
    }
    PyObject *name = dict_get(PyFunction_GET_GLOBALS(f), s_name, s_empty);
    int user = name ? is_user(name) : -1;
    Py_XDECREF(name);
    if (user <= 0)
        Py_SETREF(f, user < 0 ? NULL : Py_NewRef(Py_None));
    return f;
}

/* Appends to out what _reads.Walk.breadth_first takes as f's candidates
 * (cells, the globals its code may use (gorder: _reads.global_names, in the
 * order of its names), the attributes of the user's modules among those
 * that the code names (order), its defaults); 0, -1 with an exception. */
static int
candidates(PyObject *f, PyObject *order, PyObject *gorder, PyObject *out)
{
    PyObject *closure = PyFunction_GET_CLOSURE(f), *defaults = PyFunction_GET_DEFAULTS(f);
    PyObject *g = PyFunction_GET_GLOBALS(f);
    for (Py_ssize_t i = 0; closure && i < PyTuple_GET_SIZE(closure); i++) {
        PyObject *v = PyCell_GET(PyTuple_GET_ITEM(closure, i));
        if (PyList_Append(out, v ? v : missing) < 0)
            return -1;
    }
    Py_ssize_t nval = PyList_GET_SIZE(out);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(gorder); i++) {
        PyObject *v = dict_get(g, PyTuple_GET_ITEM(gorder, i), Py_None);
        int rc = v ? PyList_Append(out, v) : -1;
        Py_XDECREF(v);
        if (rc < 0)
            return -1;
    }
    nval = PyList_GET_SIZE(out);
    PyObject *mods = PyList_New(0);
    if (mods == NULL)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < nval; i++) {
        PyObject *m = PyList_GET_ITEM(out, i);
        if (!PyModule_Check(m))
            continue;
        PyObject *name = PyObject_GetAttr(m, s_name);
        int user = name ? is_user(name) : -1;
        Py_XDECREF(name);
        rc = user < 0 ? -1 : user ? PyList_Append(mods, m) : 0;
    }
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(mods); i++) {
        for (Py_ssize_t j = 0; rc == 0 && j < PyTuple_GET_SIZE(order); j++) {
            PyObject *a = PyObject_GetAttr(PyList_GET_ITEM(mods, i), PyTuple_GET_ITEM(order, j));
            a = hop_py_attr_or(a, Py_None);
            rc = a ? PyList_Append(out, a) : -1;
            Py_XDECREF(a);
        }
    }
    Py_DECREF(mods);
    for (Py_ssize_t i = 0; rc == 0 && defaults && i < PyTuple_GET_SIZE(defaults); i++)
        rc = PyList_Append(out, PyTuple_GET_ITEM(defaults, i));
    return rc;
}

/* Walks f: seen marked, f appended to functions, the code's names added to
 * names, and its callees not seen yet appended to todo; 0, -1 with an
 * exception. */
static int
walk_one(PyObject *f, PyObject *functions, PyObject *seen, PyObject *names, PyObject *todo)
{
    PyObject *n = names_for(PyFunction_GET_CODE(f));
    PyObject *set = n ? PyObject_GetAttr(n, s_set) : NULL;
    PyObject *all = set ? PyNumber_InPlaceOr(names, set) : NULL;
    PyObject *order = all ? PyObject_GetAttr(n, s_order) : NULL;
    PyObject *gorder = order ? PyObject_GetAttr(n, s_gorder) : NULL;
    PyObject *cand = gorder ? PyList_New(0) : NULL;
    int rc = -1;
    if (cand == NULL || !PyTuple_Check(order) || !PyTuple_Check(gorder)) {
        if (cand && (!PyTuple_Check(order) || !PyTuple_Check(gorder)))
            PyErr_SetString(PyExc_TypeError, "_guard_walk: a code's names are not a tuple");
        goto done;
    }
    if (candidates(f, order, gorder, cand) < 0)
        goto done;
    rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(cand); i++) {
        PyObject *c = callee(PyList_GET_ITEM(cand, i));
        if (c == NULL) {
            rc = -1;
            break;
        }
        if (c != Py_None) {
            PyObject *key = PyLong_FromVoidPtr(c);
            int in = key ? PySet_Contains(seen, key) : -1;
            rc = in < 0 ? -1 : in ? 0 : PyList_Append(todo, c);
            Py_XDECREF(key);
        }
        Py_DECREF(c);
    }
done:
    Py_XDECREF(n);
    Py_XDECREF(set);
    Py_XDECREF(all);
    Py_XDECREF(order);
    Py_XDECREF(gorder);
    Py_XDECREF(cand);
    return rc;
}

/*
 * _guard_walk(fn, functions, seen, names, limit) -> None.
 *
 * _reads.Walk.breadth_first(fn, _guards._Follow(s)) for a Python function
 * fn: functions (the walk's list), seen (its set of ids) and names (the
 * scan's set of every name the walked code uses) as the Python walk
 * leaves them, at most limit functions in all.
 */
static PyObject *
py_guard_walk(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *fn, *functions, *seen, *names;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "O!O!O!O!n:_guard_walk", &PyFunction_Type, &fn, &PyList_Type,
                          &functions, &PySet_Type, &seen, &PySet_Type, &names, &limit) ||
        scan_helpers() < 0)
        return NULL;
    PyObject *todo = PyList_New(0);
    if (todo == NULL || PyList_Append(todo, fn) < 0)
        goto fail;
    for (Py_ssize_t head = 0; head < PyList_GET_SIZE(todo) && PyList_GET_SIZE(functions) < limit;
         head++) {
        PyObject *f = PyList_GET_ITEM(todo, head);
        PyObject *key = PyLong_FromVoidPtr(f);
        int in = key ? PySet_Contains(seen, key) : -1;
        if (in == 0 && (PySet_Add(seen, key) < 0 || PyList_Append(functions, f) < 0))
            in = -1;
        Py_XDECREF(key);
        if (in < 0 || (in == 0 && walk_one(f, functions, seen, names, todo) < 0))
            goto fail;
    }
    Py_DECREF(todo);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(todo);
    return NULL;
}

/* Whether the guard scan visits value v of a root (1; 0: v is hop's own
 * module or one of its submodules, where _guards._visit guards nothing;
 * -1 with an exception).  A module whose name is not a str is visited:
 * _visit's test raises as it did. */
static int
visited(PyObject *v)
{
    if (!PyModule_CheckExact(v))
        return 1;
    PyObject *name = PyModule_GetNameObject(v);
    if (name == NULL) {
        PyErr_Clear();
        return 1;
    }
    int hop = PyUnicode_CheckExact(name) ? hop_py_is_hop_module(name) : 0;
    Py_DECREF(name);
    return hop < 0 ? -1 : !hop;
}

static int
push4(PyObject *out, int skip, PyObject *kind, PyObject *name, PyObject *holder, PyObject *v)
{
    int keep = skip ? visited(v) : 1;
    if (keep <= 0)
        return keep;
    PyObject *t = PyTuple_Pack(4, kind, name, holder, v);
    int rc = t ? PyList_Append(out, t) : -1;
    Py_XDECREF(t);
    return rc;
}

/* The globals f's code may use (_reads.global_names, not its attribute
 * names): those defined, sorted by name, then those
 * its code loads that neither its globals nor its builtins define (value
 * MISSING), as _reads.roots gives them with absent_globals (skip: not
 * those holding hop's module, visited()); 1 done, 0 ask
 * Python (builtins neither a dict nor a module), -1 with an exception. */
static int
global_roots(PyObject *g, PyObject *n, int skip, PyObject *out)
{
    PyObject *sorted = PyObject_GetAttr(n, s_gsorted), *loads = NULL, *b = NULL;
    int rc = -1;
    if (sorted && !PyTuple_Check(sorted))
        PyErr_SetString(PyExc_TypeError, "_guard_roots: a code's global names are not a tuple");
    if (sorted == NULL || !PyTuple_Check(sorted))
        goto done;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(sorted); i++) {
        PyObject *name = PyTuple_GET_ITEM(sorted, i), *v = PyDict_GetItemWithError(g, name);
        if (v == NULL && PyErr_Occurred())
            goto done;
        if (v != NULL && push4(out, skip, s_global, name, g, v) < 0)
            goto done;
    }
    b = PyDict_GetItemWithError(g, s_builtins);
    if (b == NULL && PyErr_Occurred())
        goto done;
    b = b ? b : builtins_mod;
    if (!PyDict_Check(b) && !PyModule_CheckExact(b)) {
        rc = 0;
        goto done;
    }
    b = PyDict_Check(b) ? b : PyModule_GetDict(b);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(sorted); i++) {
        PyObject *name = PyTuple_GET_ITEM(sorted, i);
        int in = PyDict_Contains(g, name);
        in = in == 0 ? PySequence_Contains(b, name) : in;
        if (in < 0)
            goto done;
        if (in)
            continue;
        if (loads == NULL) {
            loads = PyObject_GetAttr(n, s_loads);
            if (loads == Py_None)
                Py_SETREF(loads, PyObject_CallMethodNoArgs(n, s_global_loads));
            if (loads == NULL)
                goto done;
        }
        in = PySequence_Contains(loads, name);
        if (in < 0 || (in && push4(out, skip, s_global, name, g, missing) < 0))
            goto done;
    }
    rc = 1;
done:
    Py_XDECREF(sorted);
    Py_XDECREF(loads);
    return rc;
}

/*
 * _guard_roots(fn, skip_hop_modules) -> [(kind, name, holder, value)] or None
 * (roots_of: the same, NULL with an exception).
 *
 * _reads.roots(fn, _guards._FOLLOW) of a Python function fn: its closure
 * cells (an empty one with MISSING), the globals its code names (see
 * global_roots), its defaults and keyword defaults; with skip_hop_modules,
 * not those that hold hop's own module (or a submodule of it: `hop` in
 * `hop.wrap(...)`, which _guards._visit leaves alone).  None: not answered
 * here (globals not a dict or empty, builtins neither a dict nor a module): ask
 * Python.
 */
static PyObject *
roots_of(PyObject *fn, int skip)
{
    /* (empty globals: _reads.roots reads `fn.__globals__ or {}`, another dict) */
    if (!PyFunction_Check(fn) || !PyDict_CheckExact(PyFunction_GET_GLOBALS(fn)) ||
        PyDict_GET_SIZE(PyFunction_GET_GLOBALS(fn)) == 0)
        Py_RETURN_NONE;
    if (scan_helpers() < 0)
        return NULL;
    PyObject *code = PyFunction_GET_CODE(fn), *g = PyFunction_GET_GLOBALS(fn);
    PyObject *closure = PyFunction_GET_CLOSURE(fn), *defaults = PyFunction_GET_DEFAULTS(fn);
    PyObject *kwdefaults = PyFunction_GET_KW_DEFAULTS(fn);
    PyObject *freevars = PyCode_GetFreevars((PyCodeObject *)code);
    PyObject *out = freevars ? PyList_New(0) : NULL, *n = NULL, *index = NULL;
    if (out == NULL)
        goto fail;
    for (Py_ssize_t i = 0; closure && i < PyTuple_GET_SIZE(closure); i++) {
        if (i >= PyTuple_GET_SIZE(freevars))
            break;
        PyObject *cell = PyTuple_GET_ITEM(closure, i), *v = PyCell_GET(cell);
        if (push4(out, skip, s_cell, PyTuple_GET_ITEM(freevars, i), cell, v ? v : missing) < 0)
            goto fail;
    }
    n = names_for(code);
    int got = n ? global_roots(g, n, skip, out) : -1;
    if (got <= 0) {
        if (got < 0)
            goto fail;
        Py_CLEAR(out); /* (returns None) */
        goto done;
    }
    for (Py_ssize_t i = 0; defaults && i < PyTuple_GET_SIZE(defaults); i++) {
        index = PyLong_FromSsize_t(i);
        PyObject *v = PyTuple_GET_ITEM(defaults, i);
        if (index == NULL || push4(out, skip, s_default, index, fn, v) < 0)
            goto fail;
        Py_CLEAR(index);
    }
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (kwdefaults && PyDict_Next(kwdefaults, &pos, &k, &v)) {
        if (push4(out, skip, s_kwdefault, k, fn, v) < 0)
            goto fail;
    }
done:
    Py_XDECREF(freevars);
    Py_XDECREF(n);
    if (out == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return out;
fail:
    Py_CLEAR(out);
    Py_XDECREF(index);
    goto done;
}

static PyObject *
py_guard_roots(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *fn;
    int skip;
    if (!PyArg_ParseTuple(args, "Op:_guard_roots", &fn, &skip))
        return NULL;
    return roots_of(fn, skip);
}

/* Appends to out the (globals, builtins, name, value, pinned) of one
 * builtin fn's code loads that its globals do not define, unless keys
 * holds (id(globals), name) already (then added); 0, -1 with an exception. */
static int
builtin_read(PyObject *g, PyObject *b, PyObject *name, PyObject *keys, PyObject *out)
{
    int in = PyDict_Contains(g, name);
    in = in == 0 ? PySequence_Contains(b, name) : in ? 0 : in;
    if (in <= 0)
        return in;
    PyObject *gid = PyLong_FromVoidPtr(g);
    PyObject *key = gid ? PyTuple_Pack(2, gid, name) : NULL;
    Py_XDECREF(gid);
    in = key ? PySet_Contains(keys, key) : -1;
    PyObject *v = in == 0 ? PyObject_GetItem(b, name) : NULL;
    int rc = in < 0 || (in == 0 && (v == NULL || PySet_Add(keys, key) < 0)) ? -1 : 0;
    if (rc == 0 && v != NULL) {
        /* (pinned: builtins[name] must stay this object; builtins.print
         * need not, _guards._builtin_reads) */
        int print = PyUnicode_CompareWithASCIIString(name, "print") == 0 &&
                    b == PyModule_GetDict(builtins_mod);
        PyObject *t = PyTuple_Pack(5, g, b, name, v, print ? Py_False : Py_True);
        rc = t ? PyList_Append(out, t) : -1;
        Py_XDECREF(t);
    }
    Py_XDECREF(key);
    Py_XDECREF(v);
    return rc;
}

/*
 * _guard_builtins(fn, keys, out) -> True, or None (builtins_of: 1, 0 for
 * None, -1 with an exception).
 *
 * _guards._builtin_reads of a Python function fn: the builtins its code
 * loads as globals (in sorted order) that its globals do not define,
 * appended to out as (globals, builtins, name, value, pinned), each
 * (id(globals), name) once (keys).  Nothing for a function of hop itself.
 * None: not answered here (globals not a dict, builtins not a dict or a
 * module, a module name not a str): ask Python.
 */
static int
builtins_of(PyObject *fn, PyObject *keys, PyObject *out)
{
    if (!PyFunction_Check(fn) || !PyDict_CheckExact(PyFunction_GET_GLOBALS(fn)))
        return 0;
    if (scan_helpers() < 0)
        return -1;
    PyObject *g = PyFunction_GET_GLOBALS(fn);
    PyObject *bref = hop_py_attr_or(PyObject_GetAttr(fn, s_builtins), Py_None);
    if (bref == NULL)
        return -1;
    /* (bref holds the builtins while this runs: a dict, or a module's) */
    PyObject *b = PyModule_CheckExact(bref) ? PyModule_GetDict(bref) : bref;
    PyObject *name = PyDict_GetItemWithError(g, s_name);
    if (name == NULL && PyErr_Occurred()) {
        Py_DECREF(bref);
        return -1;
    }
    if (!PyDict_Check(b) || (name && !PyUnicode_CheckExact(name) && PyObject_IsTrue(name) != 0)) {
        Py_DECREF(bref);
        return 0; /* (a truthy name not a str: Python's test decides, and raises) */
    }
    int hop = name && PyUnicode_CheckExact(name) ? hop_py_is_hop_module(name) : 0;
    if (hop != 0) {
        Py_DECREF(bref);
        return hop < 0 ? -1 : 1;
    }
    PyObject *names = names_for(PyFunction_GET_CODE(fn));
    PyObject *loads = names ? PyObject_GetAttr(names, s_loads) : NULL;
    if (loads == Py_None)
        Py_SETREF(loads, PyObject_CallMethodNoArgs(names, s_global_loads));
    PyObject *sorted = loads ? PySequence_List(loads) : NULL;
    int rc = sorted ? PyList_Sort(sorted) : -1;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(sorted); i++)
        rc = builtin_read(g, b, PyList_GET_ITEM(sorted, i), keys, out);
    Py_XDECREF(names);
    Py_XDECREF(loads);
    Py_XDECREF(sorted);
    Py_DECREF(bref);
    return rc < 0 ? -1 : 1;
}

static PyObject *
py_guard_builtins(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *fn, *keys, *out;
    if (!PyArg_ParseTuple(args, "OO!O!:_guard_builtins", &fn, &PySet_Type, &keys, &PyList_Type,
                          &out))
        return NULL;
    int rc = builtins_of(fn, keys, out);
    return rc < 0 ? NULL : Py_NewRef(rc ? Py_True : Py_None);
}

/* The offsets of a __slots__ class's slots (_guards.Source's, Guard's), read
 * from its member descriptors when the scan first meets the class. */
typedef struct {
    PyObject *type; /* (strong) */
    Py_ssize_t off[5];
} slot_layout;

static slot_layout source_layout, guard_layout;
static const char *const source_slots[] = {"kind", "base", "key", "path", "text"};
static const char *const guard_slots[] = {"source", "kind", "held", "capture", "weak"};

static int
layout_of(slot_layout *l, PyObject *type, const char *const *names)
{
    if (l->type == type)
        return 0;
    if (!PyType_Check(type) || ((PyTypeObject *)type)->tp_alloc == NULL) {
        PyErr_SetString(PyExc_TypeError, "_guard_scan_functions: Source and Guard are classes");
        return -1;
    }
    Py_ssize_t off[5] = {0}; /* (l is left as it was when one is not a slot) */
    for (int i = 0; i < 5; i++) {
        PyObject *d = hop_py_attr_or(PyObject_GetAttrString(type, names[i]), Py_None);
        if (d == NULL)
            return -1;
        int ok = Py_IS_TYPE(d, &PyMemberDescr_Type) &&
                 ((PyMemberDescrObject *)d)->d_member->type == T_OBJECT_EX;
        if (ok)
            off[i] = ((PyMemberDescrObject *)d)->d_member->offset;
        Py_DECREF(d);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "_guard_scan_functions: %R.%s is not a slot", type,
                         names[i]);
            return -1;
        }
    }
    memcpy(l->off, off, sizeof off);
    Py_XSETREF(l->type, Py_NewRef(type));
    return 0;
}

/* A new instance of l's class with its five slots set (new references
 * taken), __init__ not run; NULL with an exception. */
static PyObject *
make_slots(slot_layout *l, PyObject *v0, PyObject *v1, PyObject *v2, PyObject *v3, PyObject *v4)
{
    PyObject *o = ((PyTypeObject *)l->type)->tp_alloc((PyTypeObject *)l->type, 0);
    if (o == NULL)
        return NULL;
    PyObject *vs[5] = {v0, v1, v2, v3, v4};
    for (int i = 0; i < 5; i++)
        *(PyObject **)((char *)o + l->off[i]) = Py_NewRef(vs[i]);
    return o;
}

/* The text of a cell's or a global's Source, "closure cell 'name'" /
 * "global 'name'" (_guards._root_source's), made once per kind and name: a
 * nest's levels name the same few variables again and again (the text is a
 * str, immutable, so the Sources share it); a new reference, NULL with an
 * exception. */
static PyObject *
source_text(PyObject *kind, PyObject *name)
{
    static PyObject *cache[2]; /* (name -> text, per kind; emptied past 4,096 names) */
    PyObject **d = &cache[kind == s_cell ? 0 : 1];
    if (!PyUnicode_CheckExact(name))
        return PyUnicode_FromFormat(kind == s_cell ? "closure cell %R" : "global %R", name);
    if (*d == NULL && (*d = PyDict_New()) == NULL)
        return NULL;
    PyObject *text = PyDict_GetItemWithError(*d, name);
    if (text)
        return Py_NewRef(text);
    if (PyErr_Occurred())
        return NULL;
    text = PyUnicode_FromFormat(kind == s_cell ? "closure cell %R" : "global %R", name);
    if (text && PyDict_GET_SIZE(*d) >= 4096)
        PyDict_Clear(*d);
    if (text && PyDict_SetItem(*d, name, text) < 0)
        Py_CLEAR(text);
    return text;
}

/* What _guards._visit does with a function v found in a closure cell or a
 * global (kind s_cell or s_global, name, holder): an identity guard on
 * Source(kind, holder, name, "closure cell 'name'" / "global 'name'"),
 * holding v weakly (Guard's `expected` setter), and id(v) marked seen;
 * 0, -1 with an exception. */
static int
guard_function(PyObject *guards, PyObject *seen, PyObject *kind, PyObject *name,
               PyObject *holder, PyObject *v)
{
    PyObject *text = source_text(kind, name);
    PyObject *empty = text ? PyTuple_New(0) : NULL;
    PyObject *src = empty ? make_slots(&source_layout, kind, holder, name, empty, text) : NULL;
    PyObject *ref = src ? PyWeakref_NewRef(v, NULL) : NULL;
    PyObject *g = NULL, *key = NULL;
    int rc = -1;
    if (ref == NULL && src && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear(); /* (held strongly, weak False: the setter's fallback) */
        g = make_slots(&guard_layout, src, s_id, v, Py_None, Py_False);
    } else if (ref) {
        g = make_slots(&guard_layout, src, s_id, ref, Py_None, Py_True);
    }
    key = g ? PyLong_FromVoidPtr(v) : NULL;
    if (key && PyList_Append(guards, g) == 0 && PySet_Add(seen, key) == 0)
        rc = 0;
    Py_XDECREF(text);
    Py_XDECREF(empty);
    Py_XDECREF(src);
    Py_XDECREF(ref);
    Py_XDECREF(g);
    Py_XDECREF(key);
    return rc;
}

/* One walked function f's roots and builtin reads (the body of
 * _guards.scan's loop): a function in a cell or a global guarded here,
 * any other root visited by visit_root(s, f, kind, name, holder, v), a
 * function C does not read plainly by scan_function(s, f); 0, -1 with an
 * exception. */
static int
scan_one(PyObject *s, PyObject *f, PyObject *guards, PyObject *seen, PyObject *keys,
         PyObject *builtins, Py_ssize_t max, PyObject *visit_root, PyObject *scan_function)
{
    /* (hop's own modules too: _guards._visit guards the callables the code
     * names on them, `hnp.sum = g` between calls) */
    PyObject *roots = PyFunction_Check(f) ? roots_of(f, 0) : Py_NewRef(Py_None);
    if (roots == NULL)
        return -1;
    if (roots == Py_None) {
        Py_DECREF(roots);
        PyObject *r = PyObject_CallFunctionObjArgs(scan_function, s, f, NULL);
        Py_XDECREF(r);
        return r ? 0 : -1;
    }
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(roots); i++) {
        PyObject *t = PyList_GET_ITEM(roots, i);
        PyObject *kind = PyTuple_GET_ITEM(t, 0), *name = PyTuple_GET_ITEM(t, 1);
        PyObject *holder = PyTuple_GET_ITEM(t, 2), *v = PyTuple_GET_ITEM(t, 3);
        /* (a function with attributes of its own: _visit reads the ones
         * the code names, helper.scale) */
        PyObject *fdict = PyFunction_Check(v) ? ((PyFunctionObject *)v)->func_dict : NULL;
        if ((kind == s_cell || kind == s_global) && PyFunction_Check(v) &&
            (fdict == NULL || PyDict_GET_SIZE(fdict) == 0)) {
            if (PyList_GET_SIZE(guards) < max) /* (_visit's first test) */
                rc = guard_function(guards, seen, kind, name, holder, v);
            continue;
        }
        if (PyModule_Check(v)) {
            /* _visit of a module it has seen does nothing (a nest's every
             * level names hop: four Python calls a level, for nothing) */
            PyObject *key = PyLong_FromVoidPtr(v);
            int in = key ? PySet_Contains(seen, key) : -1;
            Py_XDECREF(key);
            if (in != 0) {
                rc = in < 0 ? -1 : 0;
                continue;
            }
        }
        PyObject *r = PyObject_CallFunctionObjArgs(visit_root, s, f, kind, name, holder, v, NULL);
        rc = r ? 0 : -1;
        Py_XDECREF(r);
    }
    Py_DECREF(roots);
    int got = rc < 0 ? -1 : builtins_of(f, keys, builtins);
    if (got == 0) {
        PyObject *r = PyObject_CallFunctionObjArgs(scan_function, s, f, Py_True, NULL);
        got = r ? 1 : -1;
        Py_XDECREF(r);
    }
    return got < 0 ? -1 : 0;
}

/*
 * _guard_scan_functions(s, Source, Guard, visit_root, scan_function, max_guards) -> None.
 *
 * _guards.scan's loop over the walked functions (s.functions, which
 * visits may lengthen) while s holds fewer than max_guards guards: each
 * function's roots (roots_of) visited and its builtin reads (builtins_of)
 * added.  A nest's every level holds the next level's function in a cell:
 * its guard is made here, a Source and a Guard whose slots C sets (the
 * objects Python's _root_source and _visit make), without a Python frame.
 * Every other root goes to visit_root, every function C does not read
 * plainly to scan_function (both _guards', in Python).
 */
static PyObject *
py_guard_scan_functions(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *s, *src_type, *guard_type, *visit_root, *scan_function;
    Py_ssize_t max;
    if (!PyArg_ParseTuple(args, "OOOOOn:_guard_scan_functions", &s, &src_type, &guard_type,
                          &visit_root, &scan_function, &max) ||
        scan_helpers() < 0 || layout_of(&source_layout, src_type, source_slots) < 0 ||
        layout_of(&guard_layout, guard_type, guard_slots) < 0)
        return NULL;
    PyObject *functions = PyObject_GetAttrString(s, "functions");
    PyObject *guards = functions ? PyObject_GetAttrString(s, "guards") : NULL;
    PyObject *seen = guards ? PyObject_GetAttrString(s, "seen") : NULL;
    PyObject *keys = seen ? PyObject_GetAttrString(s, "builtin_keys") : NULL;
    PyObject *builtins = keys ? PyObject_GetAttrString(s, "builtins") : NULL;
    int rc = -1;
    if (builtins == NULL)
        goto done;
    if (!PyList_CheckExact(functions) || !PyList_CheckExact(guards) || !PySet_Check(seen) ||
        !PySet_Check(keys) || !PyList_Check(builtins)) {
        PyErr_SetString(PyExc_TypeError, "_guard_scan_functions: not a _guards._Scan");
        goto done;
    }
    rc = 0;
    for (Py_ssize_t done = 0;
         rc == 0 && done < PyList_GET_SIZE(functions) && PyList_GET_SIZE(guards) < max; done++) {
        PyObject *f = Py_NewRef(PyList_GET_ITEM(functions, done));
        rc = scan_one(s, f, guards, seen, keys, builtins, max, visit_root, scan_function);
        Py_DECREF(f);
    }
done:
    Py_XDECREF(functions);
    Py_XDECREF(guards);
    Py_XDECREF(seen);
    Py_XDECREF(keys);
    Py_XDECREF(builtins);
    return rc < 0 ? NULL : Py_NewRef(Py_None);
}

/* The answer of f's code's record (_reads.names_of: a _Names) to method,
 * read from its slot once made (_Names.imported, .probed and
 * .computed_names keep it there; None: not made yet); a new reference,
 * NULL with an exception. */
static PyObject *
code_answer(PyObject *f, PyObject *slot, const char *method)
{
    PyObject *n = names_for(PyFunction_GET_CODE(f));
    PyObject *got = n ? PyObject_GetAttr(n, slot) : NULL;
    if (got == Py_None)
        Py_SETREF(got, PyObject_CallMethod(n, method, NULL));
    Py_XDECREF(n);
    return got;
}

/* Whether f's code calls globals() (names_of(code).set holds "globals"):
 * 1, 0, -1 with an exception. */
static int
calls_globals(PyObject *f)
{
    PyObject *n = names_for(PyFunction_GET_CODE(f));
    PyObject *set = n ? PyObject_GetAttr(n, s_set) : NULL;
    int has = set ? PySequence_Contains(set, s_globals) : -1;
    Py_XDECREF(set);
    Py_XDECREF(n);
    return has;
}

/* The values f's code names as globals (its co_names looked up in its
 * globals) and its closure cells hold whose type is in spelled, appended to
 * out in _guards._spelled_names' order; 0, -1 with an exception. */
static int
spelled_of(PyObject *f, PyObject *spelled, PyObject *out)
{
    PyObject *g = PyFunction_GET_GLOBALS(f);
    PyObject *names = ((PyCodeObject *)PyFunction_GET_CODE(f))->co_names;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++) {
        PyObject *v = dict_get(g, PyTuple_GET_ITEM(names, i), Py_None);
        int in = v ? PySet_Contains(spelled, (PyObject *)Py_TYPE(v)) : -1;
        if (in > 0)
            in = PyList_Append(out, v) < 0 ? -1 : 0;
        Py_XDECREF(v);
        if (in < 0)
            return -1;
    }
    PyObject *cells = PyFunction_GET_CLOSURE(f);
    for (Py_ssize_t i = 0; cells && i < PyTuple_GET_SIZE(cells); i++) {
        PyObject *v = PyCell_GET(PyTuple_GET_ITEM(cells, i)); /* (NULL: an empty cell) */
        int in = v ? PySet_Contains(spelled, (PyObject *)Py_TYPE(v)) : 0;
        if (in < 0 || (in > 0 && PyList_Append(out, v) < 0))
            return -1;
    }
    return 0;
}

enum { SIFT_GLOBALS, SIFT_IMPORTS, SIFT_SPELLED, SIFT_PROBED, SIFT_COMPUTED };

/* One function's part of _guard_sift's answer out; 0, -1 with an
 * exception. */
static int
sift_one(PyObject *f, int kind, PyObject *spelled, PyObject *out)
{
    static PyObject *s_imports, *s_probes, *s_computes;
    if (s_computes == NULL && ((s_imports = PyUnicode_InternFromString("imports")) == NULL ||
                               (s_probes = PyUnicode_InternFromString("probes")) == NULL ||
                               (s_computes = PyUnicode_InternFromString("computes")) == NULL))
        return -1;
    if (kind == SIFT_SPELLED)
        return spelled_of(f, spelled, out);
    if (kind == SIFT_GLOBALS) {
        int has = PyDict_CheckExact(PyFunction_GET_GLOBALS(f)) ? calls_globals(f) : 0;
        return has < 0 ? -1 : has > 0 ? PyList_Append(out, f) : 0;
    }
    PyObject *got = kind == SIFT_IMPORTS  ? code_answer(f, s_imports, "imported")
                    : kind == SIFT_PROBED ? code_answer(f, s_probes, "probed")
                                          : code_answer(f, s_computes, "computed_names");
    int rc = -1;
    if (got && kind == SIFT_PROBED) {
        PyObject *r = PyNumber_InPlaceOr(out, got);
        rc = r ? 0 : -1;
        Py_XDECREF(r);
    } else if (got) {
        int t = PyObject_IsTrue(got);
        rc = t <= 0 ? t : kind == SIFT_IMPORTS ? PyList_Append(out, f) : 1;
    }
    Py_XDECREF(got);
    return rc;
}

/*
 * _guard_sift(functions, what, spelled) -> list, set, bool or None.
 *
 * The per-function readings of _guards' passes over the walked functions,
 * in C (issue #30: each was a Python loop of ~2-3 K instructions a
 * function, a nest's every level), over the functions in the list's order:
 * what "globals" gives those whose globals are a dict and whose code calls
 * globals() (the only ones _globals_reads has work for), "imports" those
 * whose code imports (_imports_read's), "spelled" the values whose type is
 * in spelled that the code's globals and the closure cells hold
 * (_spelled_names'), "probed" the set of the names their code probes
 * (_probed's), "computed" whether one's code computes names
 * (_computed's).  None when the list holds other than plain functions: the
 * pass runs in Python whole.
 */
static PyObject *
py_guard_sift(PyObject *self, PyObject *args)
{
    (void)self;
    static const char *const whats[] = {"globals", "imports", "spelled", "probed", "computed"};
    PyObject *functions, *what, *spelled;
    if (!PyArg_ParseTuple(args, "O!UO:_guard_sift", &PyList_Type, &functions, &what, &spelled) ||
        scan_helpers() < 0)
        return NULL;
    int kind = -1;
    for (int k = 0; k < 5 && kind < 0; k++)
        if (PyUnicode_CompareWithASCIIString(what, whats[k]) == 0)
            kind = k;
    if (kind < 0 || (kind == SIFT_SPELLED && !PyAnySet_Check(spelled))) {
        PyErr_Format(PyExc_ValueError, "_guard_sift: %R with %R", what, spelled);
        return NULL;
    }
    PyObject *fs = PyList_GetSlice(functions, 0, PyList_GET_SIZE(functions)); /* (a copy) */
    PyObject *out = fs == NULL ? NULL : kind == SIFT_PROBED ? PySet_New(NULL) : PyList_New(0);
    if (out == NULL) {
        Py_XDECREF(fs);
        return NULL;
    }
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(fs); i++)
        rc = PyFunction_Check(PyList_GET_ITEM(fs, i))
                 ? sift_one(PyList_GET_ITEM(fs, i), kind, spelled, out)
                 : 2;
    Py_DECREF(fs);
    if (rc < 0 || rc == 2)
        Py_SETREF(out, rc < 0 ? NULL : Py_NewRef(Py_None));
    else if (kind == SIFT_COMPUTED)
        Py_SETREF(out, PyBool_FromLong(rc == 1));
    return out;
}

/* Slot i (names[i]) of o, an instance of l's class read at its offset,
 * else (another class, the slot unset) getattr's; a new reference, NULL
 * with an exception. */
static PyObject *
slot_of(const slot_layout *l, const char *const *names, PyObject *o, int i)
{
    if (l->type && Py_TYPE(o) == (PyTypeObject *)l->type) {
        PyObject *v = *(PyObject **)((char *)o + l->off[i]);
        if (v)
            return Py_NewRef(v);
    }
    return PyObject_GetAttrString(o, names[i]);
}

/* One guard's entry of _guards._shape: (kind or "weak", the source's kind,
 * its key for an argument else None, its path's steps) appended to shape,
 * the objects its check binds to objs (path_steps(path, objs) for a
 * non-empty path: the steps, Python's reading); 0, -1 with an exception. */
static int
shape_one(PyObject *g, PyObject *shape, PyObject *objs, PyObject *names, PyObject *path_steps)
{
    /* Guard's slots: 0 source, 1 kind, 4 weak; Source's: 0 kind, 1 base, 2 key, 3 path */
    PyObject *src = slot_of(&guard_layout, guard_slots, g, 0);
    PyObject *gkind = src ? slot_of(&guard_layout, guard_slots, g, 1) : NULL;
    PyObject *weak = gkind ? slot_of(&guard_layout, guard_slots, g, 4) : NULL;
    PyObject *kind = weak ? slot_of(&source_layout, source_slots, src, 0) : NULL;
    PyObject *path = kind ? slot_of(&source_layout, source_slots, src, 3) : NULL;
    PyObject *base = NULL, *key = NULL, *steps = NULL, *entry = NULL;
    int rc = -1, w = path ? PyObject_IsTrue(weak) : -1, names_kind = 0;
    int global = w < 0 ? -1 : PyObject_RichCompareBool(kind, s_global, Py_EQ);
    int arg = global < 0 ? -1 : PyObject_RichCompareBool(kind, s_arg, Py_EQ);
    if (arg < 0)
        goto done;
    if (global || arg) {
        key = slot_of(&source_layout, source_slots, src, 2);
        if (key == NULL)
            goto done;
    }
    if (!arg && ((base = slot_of(&source_layout, source_slots, src, 1)) == NULL ||
                 PyList_Append(objs, base) < 0 || (global && PyList_Append(objs, key) < 0)))
        goto done;
    if (PyTuple_CheckExact(path) && PyTuple_GET_SIZE(path) == 0)
        steps = Py_NewRef(path); /* (no steps: a cell or a global itself) */
    else
        steps = PyObject_CallFunctionObjArgs(path_steps, path, objs, NULL);
    if (steps == NULL || (names_kind = PyObject_RichCompareBool(gkind, s_names, Py_EQ)) < 0)
        goto done;
    if (names_kind) {
        PyObject *at = PyLong_FromSsize_t(PyList_GET_SIZE(shape));
        int bad = at == NULL || PyList_Append(names, at) < 0;
        Py_XDECREF(at);
        if (bad)
            goto done;
    }
    entry = PyTuple_Pack(4, w ? s_weak : gkind, kind, arg ? key : Py_None, steps);
    rc = entry ? PyList_Append(shape, entry) : -1;
done:
    Py_XDECREF(src);
    Py_XDECREF(gkind);
    Py_XDECREF(weak);
    Py_XDECREF(kind);
    Py_XDECREF(path);
    Py_XDECREF(base);
    Py_XDECREF(key);
    Py_XDECREF(steps);
    Py_XDECREF(entry);
    return rc;
}

/*
 * _guard_shape(guards, path_steps) -> (shape, objs, names): _guards._shape's
 * loop over a plan's guards, in C (a nest's every level is a guard): per
 * guard its shape (kind, or "weak" for a weak one; the source's kind; an
 * argument's key, else None; the path's steps), the objects its check binds
 * (a global's dict and name, another non-argument root's base, then what
 * path_steps adds for the path) and the indices of the "names" guards.
 */
static PyObject *
py_guard_shape(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *guards, *path_steps;
    if (!PyArg_ParseTuple(args, "O!O:_guard_shape", &PyList_Type, &guards, &path_steps) ||
        scan_helpers() < 0)
        return NULL;
    PyObject *shape = PyList_New(0), *objs = PyList_New(0), *names = PyList_New(0);
    int rc = shape && objs && names ? 0 : -1;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(guards); i++) {
        PyObject *g = Py_NewRef(PyList_GET_ITEM(guards, i));
        rc = shape_one(g, shape, objs, names, path_steps);
        Py_DECREF(g);
    }
    PyObject *out = rc == 0 ? PyTuple_Pack(3, shape, objs, names) : NULL;
    Py_XDECREF(shape);
    Py_XDECREF(objs);
    Py_XDECREF(names);
    return out;
}

/* What Guards.__init__ reads again of guard g when C can read it plainly:
 * a weak identity guard (a Guard, held a weak reference) of a Source with no
 * path on a cell or an exact dict's global, every level of a nest.  1 when
 * done (its object read and, when another one, set as `expected`, or left
 * as Python's loop leaves an unreadable one), 0 when Python's loop must read
 * it, -1 with an exception. */
static int
reread_one(PyObject *g)
{
    if (guard_layout.type == NULL || Py_TYPE(g) != (PyTypeObject *)guard_layout.type)
        return 0;
    /* Guard's slots: 0 source, 1 kind, 2 held, 4 weak; Source's: 0 kind, 1 base, 2 key, 3 path */
    PyObject *src = *(PyObject **)((char *)g + guard_layout.off[0]);
    PyObject *kind = *(PyObject **)((char *)g + guard_layout.off[1]);
    PyObject *held = *(PyObject **)((char *)g + guard_layout.off[2]);
    PyObject *weak = *(PyObject **)((char *)g + guard_layout.off[4]);
    if (!src || kind != s_id || weak != Py_True || !held || !PyWeakref_CheckRef(held) ||
        Py_TYPE(src) != (PyTypeObject *)source_layout.type)
        return 0;
    PyObject *skind = *(PyObject **)((char *)src + source_layout.off[0]);
    PyObject *base = *(PyObject **)((char *)src + source_layout.off[1]);
    PyObject *key = *(PyObject **)((char *)src + source_layout.off[2]);
    PyObject *path = *(PyObject **)((char *)src + source_layout.off[3]);
    if (!path || !PyTuple_CheckExact(path) || PyTuple_GET_SIZE(path) != 0 || !base)
        return 0;
    PyObject *v; /* (borrowed) */
    if (skind == s_cell && PyCell_Check(base)) {
        v = PyCell_GET(base); /* (empty: Python's read raises, its loop goes on) */
    } else if (skind == s_global && PyDict_CheckExact(base) && key && PyUnicode_CheckExact(key)) {
        v = PyDict_GetItemWithError(base, key); /* (absent: a KeyError, the same) */
        if (v == NULL && PyErr_Occurred())
            return -1;
    } else {
        return 0;
    }
    if (v == NULL || PyWeakref_GetObject(held) == v)
        return 1;
    Py_INCREF(v);
    int rc = PyObject_SetAttrString(g, "expected", v); /* (the setter: another object) */
    Py_DECREF(v);
    return rc < 0 ? -1 : 1;
}

/*
 * _guard_reread(guards) -> list: Guards.__init__'s reading again of each
 * weak identity guard of a cell or a global (a nest's every level) done in
 * C; the guards it left (any other), in order, for Python's loop.
 */
static PyObject *
py_guard_reread(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *guards;
    if (!PyArg_ParseTuple(args, "O!:_guard_reread", &PyList_Type, &guards) || scan_helpers() < 0)
        return NULL;
    PyObject *rest = PyList_New(0);
    for (Py_ssize_t i = 0; rest && i < PyList_GET_SIZE(guards); i++) {
        PyObject *g = Py_NewRef(PyList_GET_ITEM(guards, i));
        int done = reread_one(g);
        if (done < 0 || (done == 0 && PyList_Append(rest, g) < 0))
            Py_CLEAR(rest);
        Py_DECREF(g);
    }
    return rest;
}

/* Whether capture t is one Guards.__init__'s loop sorts without reading
 * more (issue #30: ~2 K instructions a capture in Python's loop): found
 * through no source (its id not in tensors), viewing no array (not in
 * views, no base): 1 with *made set (its id in made, None: never), 0 when
 * Python's loop must sort it, -1 with an exception. */
static int
plain_capture(PyObject *t, PyObject *tensors, PyObject *views, PyObject *made, int *is_made)
{
    if (!Py_IS_TYPE(t, &hop_py_TensorType) || ((TensorObject *)t)->base != NULL)
        return 0; /* (another object: Python's _base raises) */
    PyObject *id = PyLong_FromVoidPtr(t);
    if (id == NULL)
        return -1;
    int r = PyDict_Contains(tensors, id);
    if (r == 0 && views != Py_None && PyDict_GET_SIZE(views))
        r = PyDict_Contains(views, id);
    *is_made = 0;
    if (r == 0 && made != Py_None)
        *is_made = PySet_Contains(made, id);
    Py_DECREF(id);
    return r < 0 || *is_made < 0 ? -1 : !r;
}

/*
 * _guard_captures(captures, tensors, views, made) -> (made, unsourced, rest):
 * the indices (ascending) of the captures Guards.__init__ sorts as made by
 * the function (their id in the set made) and as found through no source,
 * where C can tell plainly (plain_capture); rest, the indices of the
 * others, in order, for Python's loop.  tensors and views are dicts keyed
 * by id (views may be None or empty), made a set or None.
 */
static PyObject *
py_guard_captures(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *caps, *tensors, *views, *made;
    if (!PyArg_ParseTuple(args, "O!O!OO:_guard_captures", &PyList_Type, &caps, &PyDict_Type,
                          &tensors, &views, &made))
        return NULL;
    if ((views != Py_None && !PyDict_Check(views)) || (made != Py_None && !PyAnySet_Check(made))) {
        PyErr_SetString(PyExc_TypeError, "_guard_captures: views must be a dict or None and "
                                         "made a set or None");
        return NULL;
    }
    PyObject *lists[3] = {PyList_New(0), PyList_New(0), PyList_New(0)}; /* made, unsourced, rest */
    PyObject *out = lists[0] && lists[1] && lists[2] ? PyTuple_New(3) : NULL;
    for (Py_ssize_t i = 0; out && i < PyList_GET_SIZE(caps); i++) {
        PyObject *t = Py_NewRef(PyList_GET_ITEM(caps, i));
        int is_made = 0, r = plain_capture(t, tensors, views, made, &is_made);
        Py_DECREF(t);
        PyObject *k = r < 0 ? NULL : PyLong_FromSsize_t(i);
        if (k == NULL || PyList_Append(lists[r == 0 ? 2 : is_made ? 0 : 1], k) < 0)
            Py_CLEAR(out);
        Py_XDECREF(k);
    }
    for (int j = 0; j < 3; j++) {
        if (out)
            PyTuple_SET_ITEM(out, j, lists[j]);
        else
            Py_XDECREF(lists[j]);
    }
    return out;
}

/*
 * _few_refs(captures, views) -> list: the indices, in order, of the captured
 * tensors made_captures must look at: those sys.getrefcount counts at most
 * 4 references to (one more when their id is in views) inside its loop,
 * where the loop's variable and getrefcount's argument hold two of them
 * (issue #30: the count of every capture, ~1 K instructions each in
 * Python; a capture the user holds has more, and is skipped).
 */
static PyObject *
py_few_refs(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *caps, *views;
    if (!PyArg_ParseTuple(args, "O!O!:_few_refs", &PyList_Type, &caps, &PyDict_Type, &views))
        return NULL;
    PyObject *out = PyList_New(0);
    for (Py_ssize_t i = 0; out && i < PyList_GET_SIZE(caps); i++) {
        PyObject *t = PyList_GET_ITEM(caps, i);
        Py_ssize_t refs = Py_REFCNT(t); /* (borrowed: the loop's two are not here) */
        int viewed = 0;
        if (PyDict_GET_SIZE(views)) {
            PyObject *id = PyLong_FromVoidPtr(t);
            viewed = id ? PyDict_Contains(views, id) : -1;
            Py_XDECREF(id);
        }
        PyObject *k = viewed < 0 ? NULL : refs > 2 + viewed ? Py_NewRef(Py_None)
                                                            : PyLong_FromSsize_t(i);
        if (k == NULL || (k != Py_None && PyList_Append(out, k) < 0))
            Py_CLEAR(out);
        Py_XDECREF(k);
    }
    return out;
}

/* _type_dict(cls) -> dict: the dict a class keeps its attributes in
 * (tp_dict; vars(cls) is a read-only proxy of it), so that the names guard
 * can check in C that a special method the user's class lacked when traced
 * is still absent (`C.__add__ = f` writes that dict: its version tag moves). */
static PyObject *
py_type_dict(PyObject *self, PyObject *cls)
{
    (void)self;
    if (!PyType_Check(cls)) {
        PyErr_Format(PyExc_TypeError, "_type_dict: a class, not %.100s", Py_TYPE(cls)->tp_name);
        return NULL;
    }
    PyObject *d = ((PyTypeObject *)cls)->tp_dict;
    if (d == NULL || !PyDict_CheckExact(d)) {
        PyErr_SetString(PyExc_TypeError, "_type_dict: the class has no attribute dict");
        return NULL;
    }
    return Py_NewRef(d);
}

static PyMethodDef guard_scan_functions[] = {
    {"_guard_scan_functions", py_guard_scan_functions, METH_VARARGS,
     "_guard_scan_functions(s, Source, Guard, visit_root, scan_function, max_guards): the guard "
     "scan's loop over its walked functions (hop._guards)"},
    {"_guard_sift", py_guard_sift, METH_VARARGS,
     "_guard_sift(functions, what, spelled) -> list, set, bool or None: the per-function "
     "readings of the guard scan's passes ('globals', 'imports', 'spelled', 'probed', "
     "'computed'); None: run the pass in Python (hop._guards)"},
    {"_guard_shape", py_guard_shape, METH_VARARGS,
     "_guard_shape(guards, path_steps) -> (shape, objs, names): the shapes of a plan's guards "
     "and the objects their check binds (hop._guards._shape)"},
    {"_guard_captures", py_guard_captures, METH_VARARGS,
     "_guard_captures(captures, tensors, views, made) -> (made, unsourced, rest): the captures "
     "Guards sorts plainly, by index; the rest for Python (hop._guards)"},
    {"_few_refs", py_few_refs, METH_VARARGS,
     "_few_refs(captures, views) -> list: the indices of the captures made_captures counts "
     "few enough references to (hop._guards)"},
    {"_guard_reread", py_guard_reread, METH_VARARGS,
     "_guard_reread(guards) -> list: the weak identity guards of cells and globals read again "
     "(hop._guards.Guards); the others, for Python"},
    {"_guard_builtins", py_guard_builtins, METH_VARARGS,
     "_guard_builtins(fn, keys, out) -> True or None: the builtins a walked function's code "
     "loads, for the guard scan's names guard (hop._guards)"},
    {"_guard_walk", py_guard_walk, METH_VARARGS,
     "_guard_walk(fn, functions, seen, names, limit): the guard scan's breadth-first walk from "
     "a Python function (hop._guards)"},
    {"_guard_roots", py_guard_roots, METH_VARARGS,
     "_guard_roots(fn, skip_hop_modules) -> [(kind, name, holder, value)] or None: what the "
     "guard scan guards a walked function by (hop._guards)"},
    {"_type_dict", py_type_dict, METH_O,
     "_type_dict(cls) -> dict: the dict cls keeps its attributes in (vars(cls) is a proxy of "
     "it), for the names guard's absent special methods (hop._guards)"},
    {NULL, NULL, 0, NULL},
};

int
hop_py_guard_scan_init(PyObject *module)
{
    return PyModule_AddFunctions(module, guard_scan_functions);
}
