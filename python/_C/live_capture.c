/*
 * python/_C/live_capture.c - _C._LiveCaptures: the environment ndarrays of a
 * hop.compile plan that hop holds no reference to (hop/_guards.py
 * Guards._release: each guarded by its id and its layout, so that the
 * caller's `G.resize(n)` succeeds as it does without hop), and the captures
 * made from them at each call.
 *
 * One object per runner (hop/_trace.py _LiveRunner).  Each entry is an
 * "ndarray" guard: where its array is read from (a global's dict and name,
 * a closure cell, or a reader called with a source), the array's id and its
 * layout bytes (_C._np_layout's), the index of the capture made from it
 * (-1: the plan captures nothing of it) and the guard's index in the plan's
 * expected objects.  The check of an entry reads its source, and holds when
 * the object there is exactly an ndarray at the traced id laid out as traced
 * (address, shape, strides, dtype, flags): a freed array whose id a new one
 * took holds only when the new one is the same memory laid out the same,
 * which the plan reads at every call as eager reads whatever the source
 * holds.  Reading a source can fail (a deleted global, an emptied cell, a
 * getter that raises): that is a miss, as any other change (an error that
 * is no Exception, KeyboardInterrupt, is the call's).
 *
 * Two users, one check:
 *   - _C._live_state(runner), the runner's `_state` property: the state with
 *     each capture made (hop.asarray of the array, as the trace made it), or
 *     on a miss the state whose expected objects no fast check passes (the
 *     full check, Guards.revalidate, then says what changed); the Python
 *     paths and _EffectsCall read it;
 *   - hop_py__live_tensors, numpy_call.c's bound call of a plan whose only
 *     other guard is the builtin names' (Plan.bind_arrays(..., live), and
 *     Plan.bind_tensors(..., live) for hop.Tensor arguments): the
 *     runtime tensors over the arrays' memory, borrowed as the arguments are
 *     (no Python object made), or NotImplemented on a miss (the general path
 *     then retraces or raises as eager).
 * Before this file both were a Python loop over the entries (~6.9 K
 * instructions a steady call of `a * G`, docs/BENCHMARKS.md).
 */
#include "tensor_impl.h"
#include "trace_impl.h"

enum { LIVE_GLOBAL, LIVE_CELL, LIVE_READ };

typedef struct {
    int kind;         /* LIVE_GLOBAL: base[key]; LIVE_CELL: base's contents; LIVE_READ: key(base) */
    PyObject *base;   /* a dict, a cell, or the reader's argument */
    PyObject *key;    /* a global's name, or the reader (NULL for a cell) */
    void *ident;      /* the array's id when traced (an address, compared only) */
    PyObject *layout; /* its layout as _np_layout gave it (bytes; anything else never holds) */
    Py_ssize_t cap;   /* the capture made from it, or -1 */
    Py_ssize_t guard; /* its guard's index in the expected objects */
} live_entry;

typedef struct {
    PyObject_HEAD Py_ssize_t n;
    live_entry *e;
    PyObject *state; /* (expected objects, captures with None where made per call) */
} LiveObject;

static PyTypeObject LiveType;
static PyObject *str_live; /* "_live" */

/* The array entry e's source holds now if the entry holds (a new reference
 * in *out): 1; 0 on a miss (nothing held); -1 with an error that is not an
 * Exception's. */
static int
read_entry(const live_entry *e, PyObject **out)
{
    PyObject *v;
    *out = NULL;
    switch (e->kind) {
    case LIVE_GLOBAL:
        v = PyDict_CheckExact(e->base) ? Py_XNewRef(PyDict_GetItemWithError(e->base, e->key))
                                       : PyObject_GetItem(e->base, e->key);
        break;
    case LIVE_CELL:
        v = Py_XNewRef(PyCell_GET(e->base));
        break;
    default:
        v = PyObject_CallOneArg(e->key, e->base);
    }
    if (v == NULL) {
        if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception))
            return -1;
        PyErr_Clear(); /* (a global deleted, a getter's error: revalidate says it) */
        return 0;
    }
    if (!hop_py__np_is_laid_out(v, e->ident, e->layout)) {
        Py_DECREF(v);
        return 0;
    }
    *out = v;
    return 1;
}

/* The arrays of l's entries (new references in arrays[0..n)): 1, all held;
 * 0 on a miss (none held); -1 with an error. */
static int
read_all(LiveObject *l, PyObject **arrays)
{
    for (Py_ssize_t i = 0; i < l->n; i++) {
        int r = read_entry(&l->e[i], &arrays[i]);
        if (r <= 0) {
            for (Py_ssize_t j = 0; j < i; j++)
                Py_DECREF(arrays[j]);
            return r;
        }
    }
    return 1;
}

/* A new tuple holding t's items (PyTuple_GetSlice of a whole tuple is t
 * itself, which the callers change). */
static PyObject *
tuple_copy(PyObject *t)
{
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    PyObject *c = PyTuple_New(n);
    for (Py_ssize_t i = 0; c != NULL && i < n; i++)
        PyTuple_SET_ITEM(c, i, Py_NewRef(PyTuple_GET_ITEM(t, i)));
    return c;
}

/* The state no fast check passes: l's expected objects with None at every
 * entry's guard (its term reads e[j][0]: an error, so False), the captures
 * as kept. */
static PyObject *
miss_state(LiveObject *l)
{
    PyObject *st = l->state, *exp = PyTuple_GET_ITEM(st, 0);
    PyObject *now = tuple_copy(exp);
    if (now == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < l->n; i++) {
        Py_ssize_t j = l->e[i].guard;
        if (j < PyTuple_GET_SIZE(now))
            Py_SETREF(PyTuple_GET_ITEM(now, j), Py_NewRef(Py_None));
    }
    return Py_BuildValue("(NO)", now, PyTuple_GET_ITEM(st, 1));
}

/* The state with the captures made from the arrays the sources hold now
 * (hop.asarray of each, as the trace made its own), or miss_state. */
static PyObject *
state_now(LiveObject *l)
{
    enum { SMALL = 8 };
    PyObject *small[SMALL], **arrays = small, *caps = NULL, *r = NULL;
    if (l->n > SMALL && (arrays = PyMem_RawMalloc((size_t)l->n * sizeof *arrays)) == NULL)
        return PyErr_NoMemory();
    int held = read_all(l, arrays);
    if (held <= 0) {
        r = held < 0 ? NULL : miss_state(l);
        goto done;
    }
    PyObject *kept = PyTuple_GET_ITEM(l->state, 1);
    caps = tuple_copy(kept);
    for (Py_ssize_t i = 0; caps != NULL && i < l->n; i++) {
        if (l->e[i].cap < 0)
            continue;
        PyObject *t = hop_py__asarray(arrays[i], NULL, "asarray");
        if (t == NULL)
            Py_CLEAR(caps);
        else
            Py_SETREF(PyTuple_GET_ITEM(caps, l->e[i].cap), t);
    }
    if (caps != NULL)
        r = PyTuple_Pack(2, PyTuple_GET_ITEM(l->state, 0), caps);
    Py_XDECREF(caps);
    for (Py_ssize_t i = 0; i < l->n; i++)
        Py_DECREF(arrays[i]);
done:
    if (arrays != small)
        PyMem_RawFree(arrays);
    return r;
}

int
hop_py__live_tensors(PyObject *live, hop_tensor **caps, Py_ssize_t ncaps)
{
    LiveObject *l = (LiveObject *)live;
    for (Py_ssize_t i = 0; i < l->n; i++) {
        const live_entry *e = &l->e[i];
        PyObject *a;
        int r = read_entry(e, &a);
        if (r > 0 && e->cap >= 0 && e->cap < ncaps) {
            /* (the arguments' borrow; an array it leaves, a read-only one,
             * as hop.asarray makes it, whose tensor the plan then holds) */
            hop_tensor *t = hop_py__np_borrow(a);
            if (t == NULL) {
                PyObject *w = hop_py__asarray(a, NULL, "asarray");
                if (w != NULL) {
                    t = HOP_PY_TENSOR(w)->t;
                    hop_tensor_retain(t);
                    Py_DECREF(w);
                }
            }
            if (t == NULL)
                r = -1;
            caps[e->cap] = t;
        }
        Py_XDECREF(a);
        if (r <= 0) {
            for (Py_ssize_t k = 0; k < ncaps; k++) {
                if (caps[k] != NULL)
                    hop_tensor_release(caps[k]);
                caps[k] = NULL;
            }
            return r;
        }
    }
    return 1;
}

int
hop_py__is_live(PyObject *o)
{
    return Py_IS_TYPE(o, &LiveType);
}

Py_ssize_t
hop_py__live_max_capture(PyObject *live)
{
    LiveObject *l = (LiveObject *)live;
    Py_ssize_t m = -1;
    for (Py_ssize_t i = 0; i < l->n; i++)
        if (l->e[i].cap > m)
            m = l->e[i].cap;
    return m;
}

/* Whether st is a state: a pair of tuples. */
static int
state_ok(PyObject *st)
{
    if (PyTuple_Check(st) && PyTuple_GET_SIZE(st) == 2 && PyTuple_Check(PyTuple_GET_ITEM(st, 0)) &&
        PyTuple_Check(PyTuple_GET_ITEM(st, 1)))
        return 0;
    PyErr_Format(PyExc_TypeError, "_LiveCaptures: a state is a pair of tuples, not %.100s",
                 Py_TYPE(st)->tp_name);
    return -1;
}

/* One entry (cap, guard, kind, base, key, ident, layout) into e (its
 * references new): 0, or -1 with a TypeError. */
static int
entry_of(PyObject *t, Py_ssize_t at, live_entry *e)
{
    int kind;
    PyObject *base, *key, *ident, *layout;
    if (!PyTuple_Check(t) || !PyArg_ParseTuple(t, "nniOOO!O:_LiveCaptures", &e->cap, &e->guard,
                                               &kind, &base, &key, &PyLong_Type, &ident, &layout))
        goto bad;
    if (e->cap < -1 || e->guard < 0 || (kind == LIVE_GLOBAL && !PyDict_Check(base)) ||
        (kind == LIVE_CELL && !PyCell_Check(base)) ||
        (kind == LIVE_READ && !PyCallable_Check(key)) || kind < LIVE_GLOBAL || kind > LIVE_READ)
        goto bad;
    e->ident = PyLong_AsVoidPtr(ident);
    if (e->ident == NULL && PyErr_Occurred())
        goto bad;
    e->kind = kind;
    e->base = Py_NewRef(base);
    e->key = kind == LIVE_CELL ? NULL : Py_NewRef(key);
    e->layout = Py_NewRef(layout);
    return 0;
bad:
    PyErr_Clear();
    PyErr_Format(
        PyExc_TypeError,
        "_LiveCaptures: entry %zd is not (capture >= -1, guard >= 0, kind: 0 (dict, name), "
        "1 (cell, None) or 2 (argument, reader), base, key, id, layout)",
        at);
    return -1;
}

static void
entries_free(live_entry *e, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_XDECREF(e[i].base);
        Py_XDECREF(e[i].key);
        Py_XDECREF(e[i].layout);
    }
    PyMem_RawFree(e);
}

/* _LiveCaptures(entries, state): checked here once. */
static PyObject *
live_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *entries, *state;
    if ((kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) ||
        !PyArg_ParseTuple(args, "O!O:_LiveCaptures", &PyTuple_Type, &entries, &state)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "_LiveCaptures takes no keyword arguments");
        return NULL;
    }
    if (state_ok(state) < 0)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(entries);
    live_entry *e = PyMem_RawCalloc((size_t)(n > 0 ? n : 1), sizeof *e);
    if (e == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        if (entry_of(PyTuple_GET_ITEM(entries, i), i, &e[i]) < 0) {
            entries_free(e, i);
            return NULL;
        }
    }
    LiveObject *l = (LiveObject *)type->tp_alloc(type, 0);
    if (l == NULL) {
        entries_free(e, n);
        return NULL;
    }
    l->n = n;
    l->e = e;
    l->state = Py_NewRef(state);
    return (PyObject *)l;
}

static int
live_traverse(LiveObject *l, visitproc visit, void *arg)
{
    for (Py_ssize_t i = 0; i < l->n; i++) {
        Py_VISIT(l->e[i].base);
        Py_VISIT(l->e[i].key);
        Py_VISIT(l->e[i].layout);
    }
    Py_VISIT(l->state);
    return 0;
}

static int
live_clear(LiveObject *l)
{
    for (Py_ssize_t i = 0; i < l->n; i++) {
        Py_CLEAR(l->e[i].base);
        Py_CLEAR(l->e[i].key);
        Py_CLEAR(l->e[i].layout);
    }
    Py_CLEAR(l->state);
    return 0;
}

static void
live_dealloc(LiveObject *l)
{
    PyObject_GC_UnTrack(l);
    live_clear(l);
    entries_free(l->e, l->n);
    Py_TYPE(l)->tp_free((PyObject *)l);
}

static PyObject *
live_get_state(LiveObject *l, void *closure)
{
    (void)closure;
    return l->state != NULL ? Py_NewRef(l->state) : Py_NewRef(Py_None);
}

static int
live_set_state(LiveObject *l, PyObject *st, void *closure)
{
    (void)closure;
    if (st == NULL) {
        PyErr_SetString(PyExc_AttributeError, "_LiveCaptures: state cannot be deleted");
        return -1;
    }
    if (state_ok(st) < 0)
        return -1;
    Py_XSETREF(l->state, Py_NewRef(st));
    return 0;
}

static PyObject *
live_now(LiveObject *l, PyObject *unused)
{
    (void)unused;
    if (l->state == NULL) {
        PyErr_SetString(PyExc_ValueError, "_LiveCaptures: cleared");
        return NULL;
    }
    return state_now(l);
}

static PyGetSetDef live_getset[] = {
    {"state", (getter)live_get_state, (setter)live_set_state,
     "the kept state: (the expected objects, the captures with None where made per call)", NULL},
    {NULL},
};

static PyMethodDef live_methods[] = {
    {"now", (PyCFunction)live_now, METH_NOARGS,
     "now() -> the state with each capture made from the array its source holds now "
     "(hop.asarray of it), or, when one is not the traced array laid out as traced, the state "
     "with None as the expected object of every ndarray guard (no fast check passes it)"},
    {NULL},
};

static PyTypeObject LiveType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop._C._LiveCaptures",
    .tp_basicsize = sizeof(LiveObject),
    .tp_dealloc = (destructor)live_dealloc,
    .tp_traverse = (traverseproc)live_traverse,
    .tp_clear = (inquiry)live_clear,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = live_new,
    .tp_methods = live_methods,
    .tp_getset = live_getset,
    .tp_doc = "_LiveCaptures(entries, state): the environment ndarrays of a hop.compile plan "
              "that hop keeps no reference to, each entry (capture index or -1, guard index, "
              "kind: 0 (dict, name), 1 (cell, None) or 2 (argument, reader), base, key, id, "
              "layout bytes); state the kept (expected objects, captures).",
};

/* _C._live_state(runner): runner._live.now(), the _LiveRunner's `_state`
 * property in C (no Python frame per call). */
static PyObject *
py_live_state(PyObject *mod, PyObject *runner)
{
    (void)mod;
    PyObject *l = PyObject_GetAttr(runner, str_live);
    if (l == NULL)
        return NULL;
    PyObject *r = NULL;
    if (!Py_IS_TYPE(l, &LiveType))
        PyErr_Format(PyExc_TypeError,
                     "_live_state: runner._live is a %.100s, not a "
                     "_LiveCaptures",
                     Py_TYPE(l)->tp_name);
    else
        r = live_now((LiveObject *)l, NULL);
    Py_DECREF(l);
    return r;
}

static PyMethodDef live_functions[] = {
    {"_live_state", (PyCFunction)py_live_state, METH_O,
     "_live_state(runner): runner._live.now() (hop._trace._LiveRunner's _state property)"},
    {NULL, NULL, 0, NULL},
};

int
hop_py__live_init(PyObject *module)
{
    if ((str_live = PyUnicode_InternFromString("_live")) == NULL || PyType_Ready(&LiveType) < 0 ||
        PyModule_AddObjectRef(module, "_LiveCaptures", (PyObject *)&LiveType) < 0)
        return -1;
    return PyModule_AddFunctions(module, live_functions);
}
