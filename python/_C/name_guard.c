/*
 * The builtin-name guard of a compiled plan, _C._NameGuard (its Python side
 * and its meaning: hop/_guards.py BuiltinNames): the builtins a function's
 * code loads as globals (len, range, float) are still what eager finds, so
 * no global of the function's module shadows them and the builtins dict
 * still holds the same objects.
 *
 * The check runs on every call of the plan, in C in the bound calls (the
 * plan's only guard: numpy_call.c's Plan.bind_*; with other guards:
 * compiled_call.c's _EffectsCall, before their generated check, which then
 * has no term for it), so it is cheap in C:
 *   - CPython <= 3.11: each dict's PEP 509 version tag (ma_version_tag, in
 *     the public PyDictObject; any write moves it, no two states of any dicts
 *     share one) is compared with the one of the last check that held: equal
 *     tags are the steady call, a compare per dict;
 *   - a moved tag: the names of that dict are read again, in C (a lookup of
 *     an interned str with its cached hash each): a module-level loop writes
 *     its loop variable into the module's globals on every iteration, and a
 *     name read again costs a dict lookup, not a Python call;
 *   - a dict subclass (whose lookups may be its own) or CPython >= 3.12 (no
 *     tag): the names are read on every check, through the dict's protocol.
 * The globals dict's keys version (dk_version, which LOAD_GLOBAL_BUILTIN
 * checks) would skip even that lookup, but it lives in CPython's internal
 * headers and is assigned lazily by an interpreter function that 3.11 does
 * not export (docs/ARCHITECTURE.md, "Guards").
 *
 * The same object guards the code of the functions the plan was traced
 * through (codes: (function, code) pairs, hop/_guards.py code_reads): each
 * function's __code__ is still the code object traced.  IPython's autoreload
 * and other reloaders assign f.__code__, which leaves f the same object
 * (so its identity guard passes) with other code.  A pointer compare per
 * function, before the names: in Python the same term cost ~770
 * instructions per call of a plan of a few functions.
 *
 * A read may also be of a function's own __dict__ (globals and builtins
 * both that dict, not pinned): an attribute the code probes with a default
 * (getattr(helper, "k", 5), hasattr) is still absent.  Its codes pair is
 * then (function, that dict): function.__dict__ is still the dict read
 * (an assigned __dict__ would leave the old one unchanged), a pointer
 * compare as a code's.
 *
 * And it guards the order of the small dicts the code reads (orders:
 * (dict, keys tuple, text) triples, hop/_guards.py _walk_children): a dict
 * refilled with the same items in another order (`D.clear(); D["b"] = 2;
 * D["a"] = 1`) keeps its length and items, but `list(D)`, `D.values()` and
 * a for loop over it see the new order, which a plan traced on the old one
 * baked in.  Its dict is one of dicts: the steady call compares its tag;
 * a moved tag reads its keys again, in C.
 */
#include "hop_py.h"
#include "trace_impl.h"

#include <string.h>
#include <structmember.h>

typedef struct {
    Py_ssize_t g, b;        /* the read's globals and builtins: indexes into dicts */
    PyObject *name, *value; /* borrowed from reads */
    int pinned;             /* builtins[name] must stay value */
} name_read;

typedef struct {
    PyObject_HEAD PyObject *reads; /* tuple of (globals, builtins, name, value, pinned) */
    PyObject *dicts;               /* tuple: each dict of reads once */
    PyObject *codes;               /* tuple of (function, code): f.__code__ is code */
    PyObject *orders;              /* tuple of (dict, keys, text): list(dict) == keys */
    name_read *r;                  /* one per read */
    Py_ssize_t *order_at;          /* per order: its dict's index in dicts */
    uint64_t *tags;                /* per dict: its tag when a check last held */
    Py_ssize_t nreads, ndicts, norders;
    int tagged; /* tags hold the last check's that held (else every dict is read again) */
    int exact;  /* every dict an exact dict: its tag and PyDict lookups are its truth */
} NameGuardObject;

static PyTypeObject NameGuardType;

#if PY_VERSION_HEX < 0x030C0000
#define HAS_TAGS 1
/* The version tag of dict d. */
static inline uint64_t
dict_tag(PyObject *d)
{
    return ((PyDictObject *)d)->ma_version_tag;
}
#else
#define HAS_TAGS 0 /* (the field is deprecated from 3.12) */
static inline uint64_t
dict_tag(PyObject *d)
{
    (void)d;
    return 0;
}
#endif

/* name in d: 1 / 0 / -1 with an exception. */
static int
has_name(NameGuardObject *s, PyObject *d, PyObject *name)
{
    return s->exact ? PyDict_Contains(d, name) : PySequence_Contains(d, name);
}

/* d[name] is value: 1 / 0 / -1 with an exception (a missing name: 0). */
static int
holds_value(NameGuardObject *s, PyObject *d, PyObject *name, PyObject *value)
{
    if (s->exact) {
        PyObject *v = PyDict_GetItemWithError(d, name); /* borrowed */
        return v == value ? 1 : v == NULL && PyErr_Occurred() ? -1 : 0;
    }
    PyObject *v = PyObject_GetItem(d, name);
    if (v == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_KeyError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(v);
    return v == value;
}

/* Whether dict d iterates its keys as keys (a tuple) does: 1 / 0 / -1
 * with an exception.  Identical keys are the common case; an equal key of
 * another object (a dict rebuilt from text) is compared on a copy of the
 * keys, which a key's __eq__ cannot change under the loop. */
static int
same_order(PyObject *d, PyObject *keys)
{
    Py_ssize_t n = PyTuple_GET_SIZE(keys), pos = 0, i = 0;
    PyObject *k, *v;
    if (PyDict_GET_SIZE(d) != n)
        return 0;
    while (PyDict_Next(d, &pos, &k, &v) && i < n && k == PyTuple_GET_ITEM(keys, i))
        i++;
    if (i == n)
        return 1;
    PyObject *now = PyDict_Keys(d);
    if (now == NULL)
        return -1;
    int same = PyList_GET_SIZE(now) == n;
    for (i = 0; same == 1 && i < n; i++)
        same = PyObject_RichCompareBool(PyList_GET_ITEM(now, i), PyTuple_GET_ITEM(keys, i), Py_EQ);
    Py_DECREF(now);
    return same;
}

/* The reads of the dicts marked in moved (every dict without one), read
 * again: 1 when all hold, 0, or -1 with an exception. */
static int
reread(NameGuardObject *s, const char *moved)
{
    for (Py_ssize_t i = 0; i < s->norders; i++) {
        if (moved == NULL || moved[s->order_at[i]]) {
            PyObject *t = PyTuple_GET_ITEM(s->orders, i);
            int ok = same_order(PyTuple_GET_ITEM(t, 0), PyTuple_GET_ITEM(t, 1));
            if (ok <= 0)
                return ok;
        }
    }
    for (Py_ssize_t i = 0; i < s->nreads; i++) {
        const name_read *r = &s->r[i];
        PyObject *g = PyTuple_GET_ITEM(s->dicts, r->g), *b = PyTuple_GET_ITEM(s->dicts, r->b);
        int ok = 1;
        if (moved == NULL || moved[r->g]) {
            int in = has_name(s, g, r->name);
            ok = in < 0 ? -1 : !in;
        }
        if (ok > 0 && r->pinned && (moved == NULL || moved[r->b]))
            ok = holds_value(s, b, r->name, r->value);
        if (ok <= 0)
            return ok;
    }
    return 1;
}

/* Not inlined into hop_py__names_hold: its buffers would make the steady
 * check save registers and a stack frame on every call (~30 instructions
 * of a compiled call's ~2,300, callgrind). */
#if defined(__GNUC__)
#define HOP_SLOW_PATH __attribute__((noinline, cold))
#else
#define HOP_SLOW_PATH
#endif

/* hop_py__names_hold's path when a tag moved (or there are none): the
 * names read again, the tags kept when they hold. */
HOP_SLOW_PATH static int
names_hold_slow(NameGuardObject *s)
{
    if (s->reads == NULL)
        return 0; /* (cleared by the collector: nothing to vouch for) */
    if (!HAS_TAGS || !s->exact)
        return reread(s, NULL);
    /* The tags read before the names: a write during the reading (a key's
     * __eq__) moves them again, and the next check reads again. */
    Py_ssize_t n = s->ndicts;
    char small[16], *moved = n <= 16 ? small : PyMem_RawMalloc((size_t)n);
    uint64_t small_tags[16], *now = n <= 16 ? small_tags : PyMem_RawMalloc((size_t)n * sizeof *now);
    int holds = -1;
    if (moved == NULL || now == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        now[i] = dict_tag(PyTuple_GET_ITEM(s->dicts, i));
        moved[i] = !s->tagged || now[i] != s->tags[i];
    }
    s->tagged = 0; /* (until this check holds: a check it runs reads all again) */
    holds = reread(s, moved);
    if (holds > 0) {
        memcpy(s->tags, now, (size_t)n * sizeof *now);
        s->tagged = s->reads != NULL;
    }
done:
    if (moved != small)
        PyMem_RawFree(moved);
    if (now != small_tags)
        PyMem_RawFree(now);
    return holds;
}

/* Whether every function of s->codes still has its traced code (or, a
 * (function, dict) pair, its __dict__): none after the collector cleared
 * s, nothing to vouch for. */
static int
codes_hold(NameGuardObject *s)
{
    if (s->codes == NULL)
        return 0;
    PyObject *const *c = ((PyTupleObject *)s->codes)->ob_item;
    for (Py_ssize_t i = 0, n = PyTuple_GET_SIZE(s->codes); i < n; i++) {
        PyObject *f = PyTuple_GET_ITEM(c[i], 0), *want = PyTuple_GET_ITEM(c[i], 1);
        PyObject *now =
            PyCode_Check(want) ? PyFunction_GET_CODE(f) : ((PyFunctionObject *)f)->func_dict;
        if (now != want)
            return 0;
    }
    return 1;
}

int
hop_py__names_hold(PyObject *guard)
{
    NameGuardObject *s = (NameGuardObject *)guard;
    if (!codes_hold(s))
        return 0;
    /* the steady call: every tag as the last check that held left it */
    if (HAS_TAGS && s->tagged) {
        PyObject *const *d = ((PyTupleObject *)s->dicts)->ob_item;
        Py_ssize_t i = 0;
        while (i < s->ndicts && dict_tag(d[i]) == s->tags[i])
            i++;
        if (i == s->ndicts)
            return 1;
    }
    return names_hold_slow(s);
}

/* The index of d in dicts (a list), appended when new; -1 with an exception. */
static Py_ssize_t
dict_index(PyObject *dicts, PyObject *d)
{
    Py_ssize_t n = PyList_GET_SIZE(dicts);
    for (Py_ssize_t i = 0; i < n; i++)
        if (PyList_GET_ITEM(dicts, i) == d)
            return i;
    return PyList_Append(dicts, d) < 0 ? -1 : n;
}

/* The orders' dicts added to dicts (s->order_at): 0 / -1 with an
 * exception that names the bad order. */
static int
orders_fill(NameGuardObject *s, PyObject *orders, PyObject *dicts)
{
    Py_ssize_t n = PyTuple_GET_SIZE(orders);
    if ((s->order_at = PyMem_RawCalloc(n ? (size_t)n : 1, sizeof *s->order_at)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyTuple_GET_ITEM(orders, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3 ||
            !PyDict_CheckExact(PyTuple_GET_ITEM(t, 0)) || !PyTuple_Check(PyTuple_GET_ITEM(t, 1))) {
            PyErr_Format(PyExc_TypeError,
                         "_NameGuard: order %zd is not (dict, keys tuple, text) but %.200R", i, t);
            return -1;
        }
        if ((s->order_at[i] = dict_index(dicts, PyTuple_GET_ITEM(t, 0))) < 0)
            return -1;
    }
    s->orders = Py_NewRef(orders);
    s->norders = n;
    return 0;
}

/* Fills s's reads, orders and dicts from the tuples reads and orders: 0 /
 * -1 with an exception that names the bad read. */
static int
name_guard_fill(NameGuardObject *s, PyObject *reads, PyObject *orders)
{
    Py_ssize_t n = PyTuple_GET_SIZE(reads);
    PyObject *dicts = PyList_New(0);
    if (dicts == NULL || (s->r = PyMem_RawCalloc(n ? (size_t)n : 1, sizeof *s->r)) == NULL) {
        Py_XDECREF(dicts);
        return dicts == NULL ? -1 : (PyErr_NoMemory(), -1);
    }
    s->exact = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyTuple_GET_ITEM(reads, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 5 ||
            !PyDict_Check(PyTuple_GET_ITEM(t, 0)) || !PyDict_Check(PyTuple_GET_ITEM(t, 1)) ||
            !PyUnicode_CheckExact(PyTuple_GET_ITEM(t, 2)) ||
            !PyBool_Check(PyTuple_GET_ITEM(t, 4))) {
            PyErr_Format(PyExc_TypeError,
                         "_NameGuard: read %zd is not (globals dict, builtins dict, name str, "
                         "value, pinned bool) but %.200R",
                         i, t);
            Py_DECREF(dicts);
            return -1;
        }
        name_read *r = &s->r[i];
        r->g = dict_index(dicts, PyTuple_GET_ITEM(t, 0));
        r->b = r->g < 0 ? -1 : dict_index(dicts, PyTuple_GET_ITEM(t, 1));
        if (r->b < 0) {
            Py_DECREF(dicts);
            return -1;
        }
        r->name = PyTuple_GET_ITEM(t, 2);
        r->value = PyTuple_GET_ITEM(t, 3);
        r->pinned = PyTuple_GET_ITEM(t, 4) == Py_True;
        s->exact &=
            PyDict_CheckExact(PyTuple_GET_ITEM(t, 0)) && PyDict_CheckExact(PyTuple_GET_ITEM(t, 1));
    }
    s->nreads = n;
    if (orders_fill(s, orders, dicts) < 0) {
        Py_DECREF(dicts);
        return -1;
    }
    s->dicts = PyList_AsTuple(dicts);
    Py_DECREF(dicts);
    if (s->dicts == NULL)
        return -1;
    Py_ssize_t nd = s->ndicts = PyTuple_GET_SIZE(s->dicts);
    if ((s->tags = PyMem_RawCalloc(nd ? (size_t)nd : 1, sizeof *s->tags)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    s->reads = Py_NewRef(reads);
    return 0;
}

/* Whether codes is a tuple of (function, code or dict) pairs: 0, or -1
 * with a TypeError naming the bad pair. */
static int
codes_ok(PyObject *codes)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(codes); i++) {
        PyObject *t = PyTuple_GET_ITEM(codes, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 2 ||
            !PyFunction_Check(PyTuple_GET_ITEM(t, 0)) ||
            !(PyCode_Check(PyTuple_GET_ITEM(t, 1)) || PyDict_Check(PyTuple_GET_ITEM(t, 1)))) {
            PyErr_Format(PyExc_TypeError,
                         "_NameGuard: code %zd is not (function, code object or dict) but %.200R",
                         i, t);
            return -1;
        }
    }
    return 0;
}

static PyObject *
name_guard_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"reads", "codes", "orders", NULL};
    PyObject *reads, *codes = NULL, *orders = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|O!O!:_NameGuard", kwlist, &PyTuple_Type,
                                     &reads, &PyTuple_Type, &codes, &PyTuple_Type, &orders))
        return NULL;
    if (codes != NULL && codes_ok(codes) < 0)
        return NULL;
    NameGuardObject *s = (NameGuardObject *)type->tp_alloc(type, 0);
    if (s == NULL)
        return NULL;
    s->codes = codes != NULL ? Py_NewRef(codes) : PyTuple_New(0);
    PyObject *none = NULL;
    if (orders == NULL && (orders = none = PyTuple_New(0)) == NULL) {
        Py_DECREF(s);
        return NULL;
    }
    int filled = s->codes == NULL ? -1 : name_guard_fill(s, reads, orders);
    Py_XDECREF(none);
    if (filled < 0) {
        Py_DECREF(s);
        return NULL;
    }
    return (PyObject *)s;
}

static int
name_guard_traverse(NameGuardObject *s, visitproc visit, void *arg)
{
    Py_VISIT(s->reads); /* (its dicts: a module's globals can hold the plan) */
    Py_VISIT(s->dicts);
    Py_VISIT(s->codes); /* (a function's globals can hold the plan) */
    Py_VISIT(s->orders);
    return 0;
}

static int
name_guard_clear(NameGuardObject *s)
{
    s->nreads = s->ndicts = s->tagged = 0; /* (r borrows from reads) */
    Py_CLEAR(s->reads);
    Py_CLEAR(s->dicts);
    Py_CLEAR(s->codes);
    Py_CLEAR(s->orders);
    s->norders = 0;
    return 0;
}

/* (the Python subclass's type reference is subtype_dealloc's to drop) */
static void
name_guard_dealloc(NameGuardObject *s)
{
    PyObject_GC_UnTrack(s);
    name_guard_clear(s);
    PyMem_RawFree(s->r);
    PyMem_RawFree(s->tags);
    PyMem_RawFree(s->order_at);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *
name_guard_check(PyObject *self, PyObject *unused)
{
    (void)unused;
    int holds = hop_py__names_hold(self);
    return holds < 0 ? NULL : PyBool_FromLong(holds);
}

static PyMethodDef name_guard_methods[] = {
    {"check", name_guard_check, METH_NOARGS,
     "check() -> whether every name still holds (its dicts' tags as the last check that held "
     "left them, else the names of the dicts that moved read again)"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef name_guard_members[] = {
    {"reads", T_OBJECT, offsetof(NameGuardObject, reads), READONLY,
     "the (globals, builtins, name, value, pinned) tuples checked"},
    {"dicts", T_OBJECT, offsetof(NameGuardObject, dicts), READONLY, "their dicts, each once"},
    {"orders", T_OBJECT, offsetof(NameGuardObject, orders), READONLY,
     "the (dict, keys, text) triples checked: list(dict) == list(keys)"},
    {"codes", T_OBJECT, offsetof(NameGuardObject, codes), READONLY,
     "the (function, code) pairs checked: function.__code__ is code (a (function, dict) "
     "pair: function.__dict__ is dict)"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject NameGuardType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop._C._NameGuard",
    .tp_basicsize = sizeof(NameGuardObject),
    .tp_dealloc = (destructor)name_guard_dealloc,
    .tp_traverse = (traverseproc)name_guard_traverse,
    .tp_clear = (inquiry)name_guard_clear,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .tp_new = name_guard_new,
    .tp_methods = name_guard_methods,
    .tp_members = name_guard_members,
    .tp_doc = "_NameGuard(reads, codes=(), orders=()): the builtin-name guard of a plan "
              "(hop._guards.BuiltinNames): each read (globals, builtins, name, value, pinned) "
              "holds while name is not in globals and, pinned, builtins[name] is value; each "
              "(function, code) of codes while function.__code__ is code, each (function, "
              "dict) while function.__dict__ is dict, each (dict, keys, text) of orders while "
              "list(dict) == list(keys).",
};

int
hop_py__is_name_guard(PyObject *o)
{
    return PyObject_TypeCheck(o, &NameGuardType);
}

/* _bind_names(call, names): the bound call checks names first. */
static PyObject *
py_bind_names(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2)
        return PyErr_Format(PyExc_TypeError, "_bind_names(call, names) takes 2 arguments");
    if (hop_py__array_call_set_names(args[0], args[1]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef name_guard_functions[] = {
    {"_bind_names", (PyCFunction)(void (*)(void))py_bind_names, METH_FASTCALL,
     "_bind_names(call, names): Plan.bind_*'s call checks the builtin-name guard names "
     "(a _NameGuard) first: NotImplemented when it fails (hop._trace)"},
    {NULL, NULL, 0, NULL},
};

int
hop_py__name_guard_init(PyObject *module)
{
    if (PyType_Ready(&NameGuardType) < 0 ||
        PyModule_AddObjectRef(module, "_NameGuard", (PyObject *)&NameGuardType) < 0)
        return -1;
    return PyModule_AddFunctions(module, name_guard_functions);
}
