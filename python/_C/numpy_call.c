/*
 * python/_C/numpy_call.c - the compiled call of NumPy code: a plan run on
 * NumPy arrays, giving arrays (Plan.run_arrays), and Plan.bind_arrays's
 * callable, which does that with the type checks in C (and
 * Plan.bind_tensors's, the same callable on hop.Tensors).  The arrays are
 * wrapped as hop.asarray wraps them, zero-copy where it can (through
 * NumPy's C API, ndarray.c, when it is there).
 */
#include "tensor_impl.h"
#include "trace_impl.h"

#include <fenv.h>
#include <structmember.h>
#include <stddef.h>

static PyObject *numpy_asarray_fn; /* numpy.asarray, imported on first use */

/* run_arrays(arrays, captures, scalars): the compiled call of NumPy code
 * (python/hop/_trace.py, _Runner.call) in one step: each array wrapped as
 * hop.asarray does (zero-copy where it can), the captured tensors after
 * them, each result an ndarray over its memory, or its 0-d value as a NumPy
 * scalar where scalars[i] is true.  A tuple of results, or the one.  With
 * NumPy's C API (ndarray.c) the arrays it would share are borrowed and the
 * results made without the buffer protocol; the same arrays either way.
 * live (NULL: none): per capture a tensor made for this call
 * (hop_py__live_tensors, borrowed here), the plan's input in place of the
 * capture's, which is then None. */
static PyObject *
run_arrays(PlanObject *p, PyObject *const *arrays, Py_ssize_t na, PyObject *caps, PyObject *scalars,
           hop_tensor *const *live)
{
    Py_ssize_t nc = PyTuple_GET_SIZE(caps);
    if ((size_t)(na + nc) != p->ninputs)
        return PyErr_Format(PyExc_TypeError, "the plan takes %zu tensors, got %zd", p->ninputs,
                            na + nc);
    if ((size_t)PyTuple_GET_SIZE(scalars) != p->noutputs)
        return PyErr_Format(PyExc_TypeError, "run_arrays: %zu results, %zd scalar flags",
                            p->noutputs, PyTuple_GET_SIZE(scalars));
    bool np = hop_py__np_ready();
    if (!np && hop_py__import_attr(&numpy_asarray_fn, "numpy", "asarray") == NULL)
        return NULL;
    /* in[i] is borrowed from wrapped[i] (a Tensor hop.asarray made) or,
     * where that is NULL and i < na, a reference of ours. */
    enum { SMALL = 16 };
    hop_tensor *small_in[SMALL], **in = small_in, *small_out[SMALL], **out = small_out;
    PyObject *small_wrapped[SMALL], **wrapped = small_wrapped;
    PyObject *res = NULL;
    Py_ssize_t nin = 0; /* in[0..nin) are set */
    if (p->ninputs > SMALL) {
        in = PyMem_RawCalloc(p->ninputs, sizeof *in);
        wrapped = PyMem_RawCalloc(p->ninputs, sizeof *wrapped);
    }
    if (p->noutputs > SMALL)
        out = PyMem_RawCalloc(p->noutputs, sizeof *out);
    if (in == NULL || wrapped == NULL || out == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (; nin < na + nc; nin++) {
        PyObject *o = nin < na ? arrays[nin] : PyTuple_GET_ITEM(caps, nin - na);
        wrapped[nin] = NULL;
        in[nin] = NULL;
        if (nin < na) {
            if (np && (in[nin] = hop_py__np_borrow(o)) != NULL)
                continue;
            if ((o = wrapped[nin] = hop_py__asarray(o, NULL, "asarray")) == NULL)
                goto done;
        } else if (live != NULL && live[nin - na] != NULL) {
            in[nin] = live[nin - na];
            continue;
        }
        if ((in[nin] = hop_py__plan_input(p, nin, o)) == NULL) {
            nin++; /* wrapped[nin] is dropped below */
            goto done;
        }
    }
    if (hop_py__plan_exec(p, in, (size_t)nin, out) < 0)
        goto done;
    PyObject *tup = PyTuple_New((Py_ssize_t)p->noutputs);
    for (size_t i = 0; i < p->noutputs; i++) {
        if (tup == NULL) {
            hop_tensor_release(out[i]);
            continue;
        }
        PyObject *t = hop_py_tensor_new(out[i]), *a = NULL;
        if (t != NULL) {
            a = np ? hop_py__np_from_tensor(t) : PyObject_CallOneArg(numpy_asarray_fn, t);
            Py_DECREF(t);
        }
        int scalar = a != NULL ? PyObject_IsTrue(PyTuple_GET_ITEM(scalars, i)) : 0;
        if (scalar < 0) {
            Py_CLEAR(a);
        } else if (scalar && np) {
            a = hop_py__np_scalar(a);
        } else if (scalar) {
            PyObject *empty = PyTuple_New(0);
            Py_SETREF(a, empty == NULL ? NULL : PyObject_GetItem(a, empty));
            Py_XDECREF(empty);
        }
        hop_py_fill(&tup, (Py_ssize_t)i, a);
    }
    if (tup != NULL && p->noutputs == 1) {
        res = Py_NewRef(PyTuple_GET_ITEM(tup, 0));
        Py_DECREF(tup);
    } else {
        res = tup;
    }
done:
    for (Py_ssize_t i = 0; i < nin && i < na; i++) {
        if (wrapped[i] != NULL)
            Py_DECREF(wrapped[i]);
        else if (in[i] != NULL)
            hop_tensor_release(in[i]);
    }
    if (in != small_in)
        PyMem_RawFree(in);
    if (wrapped != small_wrapped)
        PyMem_RawFree(wrapped);
    if (out != small_out)
        PyMem_RawFree(out);
    return res;
}

PyObject *
hop_py__plan_run_arrays(PlanObject *p, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1]) || !PyTuple_Check(args[2]))
        return PyErr_Format(PyExc_TypeError, "run_arrays(arrays, captures, scalars) takes "
                                             "three tuples");
    return run_arrays(p, &PyTuple_GET_ITEM(args[0], 0), PyTuple_GET_SIZE(args[0]), args[1], args[2],
                      NULL);
}

/* _np_result(t): a plan's result tensor t as the ndarray run_arrays makes
 * of it (hop_py__np_from_tensor: NumPy's zero strides of a new array
 * without elements in C order), for hop._trace's general path of a NumPy
 * call, so that both paths give one array. */
static PyObject *
np_result(PyObject *mod, PyObject *t)
{
    (void)mod;
    if (!HOP_PY_IS_TENSOR(t) || HOP_PY_TENSOR(t)->t == NULL)
        return PyErr_Format(PyExc_TypeError, "_np_result: a concrete hop.Tensor, not %s",
                            Py_TYPE(t)->tp_name);
    if (hop_py__np_ready())
        return hop_py__np_from_tensor(t);
    if (hop_py__import_attr(&numpy_asarray_fn, "numpy", "asarray") == NULL)
        return NULL;
    return PyObject_CallOneArg(numpy_asarray_fn, t);
}

/* ------------------------------------------------ NumPy's error state */

/*
 * Whether NumPy's floating-point error state (numpy.errstate, numpy.seterr)
 * now raises, calls, prints or logs for some kind of error, not only
 * ignores or warns: 1, 0, or -1 with an error set.  Read as NumPy 1.24's
 * ufuncs read it (numpy/core/src/umath/extobj.c, get_global_ext_obj and
 * _extract_pyvals): the list [bufsize, errmask, errobj] under the key
 * "UFUNC_PYVALS" of the thread state's dict (the builtins' without one);
 * absent, NumPy's default (no kind raises).  Each kind is 3 bits of errmask
 * (divide, over, under, invalid): 0 ignore, 1 warn, 2 raise, 3 call, 4
 * print, 5 log.  Something NumPy would reject there (not a list of 3, a mask
 * that is not an int) is 1: eager raises NumPy's error.
 *
 * hop.compile's NumPy calls ask on every call, so the lookup is cached: the
 * dict's version tag (every change of a dict gets a new tag, unique across
 * dicts) gives the list, whose mask is read each time (np.seterr changes it
 * in place).  ~25 instructions when the dict did not change.
 */
static PyObject *str_pyvals; /* "UFUNC_PYVALS" */
static uint64_t pyvals_version; /* the version tag of the dict last looked in (0: none) */
static PyObject *pyvals_list;   /* what it held: NULL or an exact list (borrowed: alive
                                 * while the tag holds) */

/* The mask's answer, the lookup done (list: NULL or what NumPy holds). */
static int
mask_reported(PyObject *list)
{
    if (list == NULL)
        return 0;
    if (!PyList_CheckExact(list) || PyList_GET_SIZE(list) != 3)
        return 1;
    PyObject *mask = PyList_GET_ITEM(list, 1);
    if (!PyLong_CheckExact(mask))
        return 1;
    long m = PyLong_AsLong(mask);
    if (m == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 1;
    }
    return (m & 06666) != 0;
}

/* The list NumPy keeps its state in (*list: borrowed, NULL when absent) and
 * the dict it is in (*dict): 0, or -1 with an error. */
static int
pyvals_lookup(PyObject **dict, PyObject **list)
{
    PyObject *d = PyThreadState_GetDict();
    if (d == NULL)
        d = PyEval_GetBuiltins();
    if (str_pyvals == NULL && (str_pyvals = PyUnicode_InternFromString("UFUNC_PYVALS")) == NULL)
        return -1;
    *dict = d;
    *list = PyDict_GetItemWithError(d, str_pyvals);
    return *list == NULL && PyErr_Occurred() ? -1 : 0;
}

/* The lookup, and the cache's new entry. */
static int
np_fp_reported_slow(void)
{
    PyObject *d, *list;
    if (pyvals_lookup(&d, &list) < 0)
        return -1;
#if PY_VERSION_HEX < 0x030C0000
    int cacheable = list == NULL || PyList_CheckExact(list);
    pyvals_version = cacheable ? ((PyDictObject *)d)->ma_version_tag : 0;
    pyvals_list = cacheable ? list : NULL;
#endif
    return mask_reported(list);
}

/* Through the cache where it holds: the thread's dict in the state it had
 * (a version tag is unique across dicts: a new dict or a change of one gets
 * the next), the list read again (NumPy changes the mask in place). */
static inline int
np_fp_reported(void)
{
#if PY_VERSION_HEX < 0x030C0000
    PyObject *d = _PyThreadState_UncheckedGet()->dict;
    if (d != NULL && ((PyDictObject *)d)->ma_version_tag == pyvals_version) {
        PyObject *list = pyvals_list;
        if (list == NULL)
            return 0;
        PyObject *mask = Py_SIZE(list) == 3 ? PyList_GET_ITEM(list, 1) : NULL;
        /* (PyLong_AsLong costs 30 instructions: NumPy's masks are one digit) */
        if (mask != NULL && Py_IS_TYPE(mask, &PyLong_Type) && Py_SIZE(mask) == 1)
            return (((PyLongObject *)mask)->ob_digit[0] & 06666) != 0;
        return mask_reported(list);
    }
#endif
    return np_fp_reported_slow();
}

int
hop_py__np_fp_reported(void)
{
    return np_fp_reported();
}

PyObject *
hop_py__np_fp_reported_py(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    int r = hop_py__np_fp_reported();
    return r < 0 ? NULL : PyBool_FromLong(r);
}

/* NumPy's error mask now (*m), uncached: 0, 1 for a state NumPy would
 * reject (its error, for hop_py__np_fp_reported to send to NumPy), -1 with
 * an error. */
static int
np_errmask(long *m)
{
    PyObject *d, *list;
    if (pyvals_lookup(&d, &list) < 0)
        return -1;
    *m = 01011; /* NumPy's default (UFUNC_ERR_DEFAULT): warn but for underflow */
    if (list == NULL)
        return 0;
    PyObject *mask =
        PyList_Check(list) && PyList_GET_SIZE(list) == 3 ? PyList_GET_ITEM(list, 1) : NULL;
    if (mask == NULL || !PyLong_Check(mask))
        return 1;
    *m = PyLong_AsLong(mask);
    if (*m == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 1;
    }
    return 0;
}

/* NumPy's shifts of the kinds: divide 0, over 3, under 6, invalid 9
 * (ufuncobject.h), by HOP_FP_* flag. */
static const struct {
    int flag, shift;
} fp_kinds[] = {{HOP_FP_DIVIDE, 0}, {HOP_FP_OVERFLOW, 3}, {HOP_FP_UNDERFLOW, 6}, {HOP_FP_INVALID, 9}};

/* The flags (HOP_FP_*) whose kind NumPy's mask m warns for. */
static int
warned_kinds(long m)
{
    int w = 0;
    for (size_t i = 0; i < sizeof fp_kinds / sizeof fp_kinds[0]; i++)
        if (((m >> fp_kinds[i].shift) & 7) == 1)
            w |= fp_kinds[i].flag;
    return w;
}

/*
 * Whether the floating-point exceptions kernels raised since the last
 * hop_fp_clear include one NumPy's error state warns for (mode 1 of its
 * kind, NumPy's default for divide, over and invalid): 1, 0, -1 with an
 * error set.  NumPy 1.24 warns once per kind and ufunc call, in the order
 * divide, over, under, invalid (PyUFunc_handlefperr), which only NumPy's own
 * run reproduces: the caller re-runs the call through NumPy on 1.  The mask
 * is read only when a flag is set.  A mask NumPy would reject is 0 here
 * (hop_py__np_fp_reported sends such a call to NumPy).
 */
int
hop_py__np_fp_warned(void)
{
    int raised = hop_fp_status();
    if (raised == 0)
        return 0;
    long m;
    int bad = np_errmask(&m);
    return bad != 0 ? (bad < 0 ? -1 : 0) : (warned_kinds(m) & raised) != 0;
}

PyObject *
hop_py__np_fp_warns_py(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    long m;
    int bad = np_errmask(&m);
    if (bad < 0)
        return NULL;
    return PyBool_FromLong(bad == 0 && warned_kinds(m) != 0);
}

PyObject *
hop_py__np_fp_warned_py(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    int r = hop_py__np_fp_warned();
    return r < 0 ? NULL : PyBool_FromLong(r);
}

PyObject *
hop_py__fp_status_py(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyLong_FromLong(hop_fp_status());
}

PyObject *
hop_py__fp_clear_py(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    hop_fp_clear();
    Py_RETURN_NONE;
}

/* _fp_note(flags): puts hop_fp_status's bits back after a NumPy call that
 * cleared them (NumPy clears the thread's flags before its loops). */
static PyObject *
hop_py__fp_note_py(PyObject *self, PyObject *arg)
{
    (void)self;
    long flags = PyLong_AsLong(arg);
    if (flags == -1 && PyErr_Occurred())
        return NULL;
    if (flags < 0 ||
        flags > (HOP_FP_DIVIDE | HOP_FP_OVERFLOW | HOP_FP_UNDERFLOW | HOP_FP_INVALID)) {
        PyErr_Format(PyExc_ValueError,
                     "_fp_note: flags must be hop_fp_status's bits (0..15), got %ld", flags);
        return NULL;
    }
    hop_py__fp_raise((int)flags);
    Py_RETURN_NONE;
}

void
hop_py__fp_raise(int flags)
{
    /* (raised as the kernels raise them: the thread's IEEE flags) */
    int e =
        (flags & HOP_FP_DIVIDE ? FE_DIVBYZERO : 0) | (flags & HOP_FP_OVERFLOW ? FE_OVERFLOW : 0) |
        (flags & HOP_FP_UNDERFLOW ? FE_UNDERFLOW : 0) | (flags & HOP_FP_INVALID ? FE_INVALID : 0);
    if (e != 0)
        feraiseexcept(e);
}

/* ------------------------------------------------ the bound call */

/*
 * Plan.bind_arrays(nargs, captures, scalars) -> a callable f: f(args), for
 * a tuple of exactly nargs ndarrays (exact type), is run_arrays(args,
 * captures, scalars); for any other tuple (one with an array in the other
 * byte order or unaligned too) it is NotImplemented, and the
 * caller takes its general path.  hop.compile's call of NumPy code whose
 * environment has no guards to check (python/hop/_compile.py): the type
 * checks in C, no Python frame between the call and the plan.
 * Plan.bind_tensors(nargs, captures, single) is the same for a tuple of
 * exactly nargs hop.Tensors: the one result with single, else the tuple of
 * results (a proxy among them is the plan's TypeError, as Plan.run's).
 * Either may take a _LiveCaptures (live): the environment's ndarrays the
 * plan reads, checked and borrowed at each call as the arguments are.
 */
typedef struct ArrayCallObject {
    PyObject_HEAD PlanObject *plan;
    Py_ssize_t nargs;
    PyObject *caps, *scalars; /* tuples; scalars NULL: bound to hop.Tensors */
    PyObject *c_order;        /* NULL, or per argument whether it must be in C order */
    int single;               /* bind_tensors: return the one result itself */
    PyObject *names;          /* NULL, or the plan's builtin-name guard (a _NameGuard) */
    Py_ssize_t *alias;        /* NULL, or per argument the earlier one it must be (-1: an
                               * input of its own, which must be no other own argument) */
    Py_ssize_t nown;          /* the arguments that are inputs of their own */
    PyObject *live;           /* NULL, or the plan's _LiveCaptures: the captures made per
                               * call from the environment's ndarrays (live_capture.c), whose
                               * guards it checks (the plan's only others: the names) */
    void **env;               /* NULL, or the addresses no argument may be besides the
                               * captures (Guards.env_ids: hop_py__env_argument) */
    Py_ssize_t nenv;
    int apart; /* whether to check them and the captures */
    int numpy_fp; /* bind_tensors: the plan's floating-point exceptions are NumPy's (NumPy's
                   * dispatch of a hop.Tensor made some of its ops: hop/_compile.py,
                   * _checking_fp), checked as an ndarray call's (hop_py__is_array_call) */
    vectorcallfunc vectorcall;
} ArrayCallObject;

/* Whether c's calls have NumPy's floating-point semantics: an ndarray call,
 * or a hop.Tensor call of a plan NumPy's dispatch made (numpy_fp). */
static int
numpy_fp_of(const ArrayCallObject *c)
{
    return c->scalars != NULL || c->numpy_fp;
}

static PyObject *numpy_ndarray_type; /* numpy.ndarray, imported on first use */

static int
array_call_traverse(ArrayCallObject *c, visitproc visit, void *arg)
{
    Py_VISIT(c->plan);
    Py_VISIT(c->caps);
    Py_VISIT(c->scalars);
    Py_VISIT(c->c_order);
    Py_VISIT(c->names);
    Py_VISIT(c->live);
    return 0;
}

static int
array_call_clear(ArrayCallObject *c)
{
    Py_CLEAR(c->plan);
    Py_CLEAR(c->caps);
    Py_CLEAR(c->scalars);
    Py_CLEAR(c->c_order);
    Py_CLEAR(c->names);
    Py_CLEAR(c->live);
    return 0;
}

static void
array_call_dealloc(ArrayCallObject *c)
{
    PyObject_GC_UnTrack(c);
    array_call_clear(c);
    PyMem_RawFree(c->alias);
    PyMem_RawFree(c->env);
    PyObject_GC_Del(c);
}

/*
 * Whether the n arguments a repeat the aliasing pattern of an aliased plan's
 * trace (hop/_trace.py _aliases): a[j] is a[alias[j]] where the trace had
 * one object at both places (alias[j] < 0 where not), and each argument of
 * its own is no other argument of its own (f(a, a) traced so does not take
 * f(a, b), nor a plan of f(a, a, b) the call f(a, a, a)).  The own arguments
 * are copied to own in order, their count to *nown.  A pointer compare per
 * pair of own arguments, one per alias.  The ArrayCall's and an
 * _EffectsCall's (compiled_call.c) one owner.
 */
int
hop_py__alias_pattern_holds(const Py_ssize_t *alias, Py_ssize_t n, PyObject *const *a,
                            PyObject **own, Py_ssize_t *nown)
{
    Py_ssize_t k = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        Py_ssize_t i = alias[j];
        if (i >= 0) {
            if (a[j] != a[i])
                return 0;
            continue;
        }
        for (Py_ssize_t m = 0; m < k; m++)
            if (own[m] == a[j])
                return 0;
        own[k++] = a[j];
    }
    *nown = k;
    return 1;
}

/*
 * The first of the n arguments a that is an object of the plan's
 * environment: a captured tensor of caps (a tuple, None where a capture is
 * made per call) or the object at one of the nids addresses ids (the
 * environment's tensors and ndarrays the guards hold by identity,
 * hop/_guards.py Guards.env_ids: checked before this, so each is the
 * traced object, alive there); -1 when none is.  The trace took every
 * argument for an object of its own (a proxy), so `x is G` answered False
 * and `if x is G:` took the other side: a call that passes G itself does
 * not fit the plan (the general path runs it eagerly, hop/_trace.py
 * EnvArgument).  A pointer compare per argument per capture and per
 * address.  The ArrayCall's, an _EffectsCall's (compiled_call.c) and the
 * Python paths' (_C._env_argument) one owner.
 */
Py_ssize_t
hop_py__env_argument(PyObject *const *a, Py_ssize_t n, PyObject *caps, void *const *ids,
                     Py_ssize_t nids)
{
    Py_ssize_t nc = PyTuple_GET_SIZE(caps);
    PyObject *const *c = &PyTuple_GET_ITEM(caps, 0);
    for (Py_ssize_t i = 0; i < n; i++) {
        for (Py_ssize_t k = 0; k < nc; k++)
            if (a[i] == c[k])
                return i;
        for (Py_ssize_t k = 0; k < nids; k++)
            if ((void *)a[i] == ids[k])
                return i;
    }
    return -1;
}

/* The addresses env (None, or a tuple of ints: Guards.env_ids) as a PyMem
 * array in *out (NULL for None or none) and their count in *n: 0, or -1
 * with a TypeError naming what. */
int
hop_py__env_ids_of(PyObject *env, void ***out, Py_ssize_t *n, const char *what)
{
    *out = NULL;
    *n = 0;
    if (env == Py_None)
        return 0;
    if (!PyTuple_Check(env))
        goto bad;
    Py_ssize_t m = PyTuple_GET_SIZE(env);
    if (m == 0)
        return 0;
    void **ids = PyMem_RawMalloc((size_t)m * sizeof *ids);
    if (ids == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < m; k++) {
        PyObject *v = PyTuple_GET_ITEM(env, k);
        ids[k] = PyLong_Check(v) ? PyLong_AsVoidPtr(v) : NULL;
        if (ids[k] == NULL) {
            PyMem_RawFree(ids);
            goto bad;
        }
    }
    *out = ids;
    *n = m;
    return 0;
bad:
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: env is None or a tuple of addresses (ints)", what);
    return -1;
}

/* _C._env_argument(args, caps, env): hop_py__env_argument for the Python
 * paths (hop/_trace.py _Runner): args a tuple or list, caps a tuple, env a
 * tuple of addresses. */
static PyObject *
env_argument_py(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    void **ids;
    Py_ssize_t nids;
    if (nargs != 3 || !(PyTuple_Check(args[0]) || PyList_Check(args[0])) || !PyTuple_Check(args[1]))
        return PyErr_Format(PyExc_TypeError,
                            "_env_argument(args, caps, env) takes a tuple or list, a tuple "
                            "and a tuple of addresses");
    if (hop_py__env_ids_of(args[2], &ids, &nids, "_env_argument") < 0)
        return NULL;
    PyObject *a = args[0];
    PyObject *const *items = PyTuple_Check(a) ? &PyTuple_GET_ITEM(a, 0) : &PyList_GET_ITEM(a, 0);
    Py_ssize_t i = hop_py__env_argument(items, Py_SIZE(a), args[1], ids, nids);
    PyMem_RawFree(ids);
    return PyLong_FromSsize_t(i);
}

/* The plan of c run on in (the own arguments: c->nown of them) and its
 * captures, live (NULL: none) in place of those made per call: arrays
 * (bind_arrays) or hop.Tensors (bind_tensors). */
static PyObject *
bound_run(ArrayCallObject *c, PyObject *const *in, hop_tensor *const *live)
{
    if (c->scalars == NULL)
        return hop_py__plan_run_tensors(c->plan, in, c->nown, c->caps, live,
                                        c->single ? HOP_PY_RUN_SINGLE : HOP_PY_RUN_TUPLE);
    return run_arrays(c->plan, in, c->nown, c->caps, c->scalars, live);
}

/* Whether no argument of tup is an object of c's environment (checked
 * after its guards: hop_py__env_argument). */
static int
env_free(const ArrayCallObject *c, PyObject *tup)
{
    return !c->apart || hop_py__env_argument(&PyTuple_GET_ITEM(tup, 0), PyTuple_GET_SIZE(tup),
                                             c->caps, c->env, c->nenv) < 0;
}

/* The bound call's checks of the arguments' types and NumPy's state, and
 * the plan run on in (the own arguments: c->nown of them); NotImplemented
 * for a call it does not take. */
static PyObject *
array_call_run(ArrayCallObject *c, PyObject *tup, PyObject *const *in)
{
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    if (c->names != NULL) {
        /* a failure takes the general path, which raises the guard's */
        int holds = hop_py__names_hold(c->names);
        if (holds < 0)
            return NULL;
        if (!holds)
            Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *type = c->scalars != NULL ? numpy_ndarray_type : (PyObject *)&hop_py_TensorType;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(tup, i);
        if ((PyObject *)Py_TYPE(o) != type)
            Py_RETURN_NOTIMPLEMENTED;
        /* an array in the other byte order or unaligned is never a plan's:
         * NumPy keeps the order in copies and views and the alignment in
         * views (hop.compile runs that call eagerly); nor one in another
         * memory order where the plan's results follow it (the general
         * path checks the layout and retraces) */
        int plain = c->scalars != NULL
                        ? hop_py__np_plain(o, c->c_order != NULL &&
                                                  PyTuple_GET_ITEM(c->c_order, i) == Py_True)
                        : 1;
        if (plain < 0)
            return NULL;
        if (!plain)
            Py_RETURN_NOTIMPLEMENTED;
    }
    if (numpy_fp_of(c)) {
        /* NumPy's error state raises (calls, prints, logs) for an error:
         * this call runs eagerly through NumPy (the general path) */
        int reported = np_fp_reported();
        if (reported < 0)
            return NULL;
        if (reported)
            Py_RETURN_NOTIMPLEMENTED;
    }
    if (c->live == NULL)
        return env_free(c, tup) ? bound_run(c, in, NULL) : Py_NewRef(Py_NotImplemented);
    /* the environment's arrays, read and checked last (a miss: the general
     * path retraces or raises what eager raises; nothing ran) */
    enum { SMALL = 8 };
    Py_ssize_t nc = PyTuple_GET_SIZE(c->caps);
    hop_tensor *small[SMALL] = {NULL}, **live = small;
    if (nc > SMALL && (live = PyMem_RawCalloc((size_t)nc, sizeof *live)) == NULL)
        return PyErr_NoMemory();
    int held = hop_py__live_tensors(c->live, live, nc);
    PyObject *r = held > 0
                      ? (env_free(c, tup) ? bound_run(c, in, live) : Py_NewRef(Py_NotImplemented))
                  : held == 0 ? Py_NewRef(Py_NotImplemented)
                              : NULL;
    for (Py_ssize_t i = 0; held > 0 && i < nc; i++)
        if (live[i] != NULL)
            hop_tensor_release(live[i]);
    if (live != small)
        PyMem_RawFree(live);
    return r;
}

static PyObject *
array_call_vectorcall(ArrayCallObject *c, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL || !PyTuple_Check(args[0]))
        return PyErr_Format(PyExc_TypeError, "the bound call takes one tuple of arguments");
    PyObject *tup = args[0];
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    if (n != c->nargs)
        Py_RETURN_NOTIMPLEMENTED;
    /* the plan's inputs: the arguments, or with an alias pattern its own
     * ones (borrowed from tup) */
    PyObject *const *in = &PyTuple_GET_ITEM(tup, 0);
    enum { SMALL = 16 };
    PyObject *small_own[SMALL], **own = small_own, *r = NULL;
    if (c->alias != NULL) {
        if (c->nown > SMALL && (own = PyMem_RawMalloc((size_t)c->nown * sizeof *own)) == NULL)
            return PyErr_NoMemory();
        Py_ssize_t nown;
        if (!hop_py__alias_pattern_holds(c->alias, c->nargs, in, own, &nown)) {
            r = Py_NewRef(Py_NotImplemented);
            goto done;
        }
        in = own;
    }
    r = array_call_run(c, tup, in);
done:
    if (own != small_own)
        PyMem_RawFree(own);
    return r;
}

static PyTypeObject ArrayCallType;

int
hop_py__is_array_call(PyObject *o)
{
    return Py_IS_TYPE(o, &ArrayCallType) && numpy_fp_of((const ArrayCallObject *)o);
}

static PyMemberDef array_call_members[] = {
    {"_numpy_fp", T_INT, offsetof(ArrayCallObject, numpy_fp), 0,
     "bind_tensors: the plan's floating-point exceptions are NumPy's (checked after each call "
     "as an ndarray call's, and NumPy's error state read before it)"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject ArrayCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop._C._ArrayCall",
    .tp_basicsize = sizeof(ArrayCallObject),
    .tp_dealloc = (destructor)array_call_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)array_call_traverse,
    .tp_clear = (inquiry)array_call_clear,
    .tp_vectorcall_offset = offsetof(ArrayCallObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_members = array_call_members,
    .tp_doc = "Plan.bind_arrays's (and bind_tensors's) callable: f(args) runs the plan on a "
              "tuple of ndarrays (hop.Tensors), else is NotImplemented.",
};

/* A wrong argument to bind_arrays/bind_tensors (a type, overflow or value
 * error reading it, or none yet) becomes one TypeError saying what they
 * take; any other error is kept.  NULL. */
static PyObject *
bad_bind_args(const char *takes)
{
    if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError) ||
        PyErr_ExceptionMatches(PyExc_OverflowError) || PyErr_ExceptionMatches(PyExc_ValueError)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, takes);
    }
    return NULL;
}

/* The callable bind_arrays (scalars: its flags) and bind_tensors (scalars
 * NULL, single: one result, not a tuple) return. */
static PyObject *
array_call_new(PlanObject *p, Py_ssize_t nargs, PyObject *caps, PyObject *scalars, int single)
{
    ArrayCallObject *c = PyObject_GC_New(ArrayCallObject, &ArrayCallType);
    if (c == NULL)
        return NULL;
    c->plan = (PlanObject *)Py_NewRef(p);
    c->nargs = nargs;
    c->caps = Py_NewRef(caps);
    c->scalars = Py_XNewRef(scalars);
    c->c_order = NULL;
    c->names = NULL;
    c->single = single;
    c->alias = NULL;
    c->nown = nargs;
    c->live = NULL;
    c->env = NULL;
    c->nenv = 0;
    c->apart = 0;
    c->numpy_fp = 0;
    c->vectorcall = (vectorcallfunc)array_call_vectorcall;
    PyObject_GC_Track(c);
    return (PyObject *)c;
}

/*
 * The alias pattern of bind_*'s last argument (None: none) into *out (a
 * PyMem array of n, NULL for None) and the count of own arguments into
 * *nown: per argument -1 (an input of its own) or an earlier own
 * argument's index.  -1 with a TypeError naming what, 0 on success.
 */
static int
alias_of(PyObject *tup, Py_ssize_t n, Py_ssize_t **out, Py_ssize_t *nown, const char *what)
{
    *out = NULL;
    *nown = n;
    if (tup == Py_None)
        return 0;
    Py_ssize_t *a = NULL;
    if (!PyTuple_Check(tup) || PyTuple_GET_SIZE(tup) != n ||
        (a = PyMem_RawMalloc((size_t)(n > 0 ? n : 1) * sizeof *a)) == NULL)
        goto bad;
    for (Py_ssize_t j = 0; j < n; j++) {
        Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(tup, j));
        if ((i == -1 && PyErr_Occurred()) || i < -1 || i >= j || (i >= 0 && a[i] >= 0))
            goto bad;
        a[j] = i;
        *nown -= i >= 0;
    }
    *out = a;
    return 0;
bad:
    PyMem_RawFree(a);
    if (PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_MemoryError))
        return -1;
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "%s: alias is None or a tuple of nargs ints, each -1 or an earlier index whose "
                 "own is -1", what);
    return -1;
}

/* c (new, or NULL) with its alias pattern (alias_of's, which it owns from
 * then on): c, or NULL with the error (alias freed). */
static PyObject *
with_alias(ArrayCallObject *c, Py_ssize_t nown, Py_ssize_t *alias)
{
    if (c == NULL) {
        PyMem_RawFree(alias);
        return NULL;
    }
    c->alias = alias;
    c->nown = nown;
    return (PyObject *)c;
}

/* c (new, or NULL) checking that no argument is one of its captures nor
 * at an address of env (None: no check; else a tuple of ints,
 * Guards.env_ids): c, or NULL with the error (c dropped). */
static PyObject *
with_env(PyObject *c, PyObject *env, const char *what)
{
    if (c == NULL || env == Py_None)
        return c;
    ArrayCallObject *a = (ArrayCallObject *)c;
    if (hop_py__env_ids_of(env, &a->env, &a->nenv, what) < 0) {
        Py_DECREF(c);
        return NULL;
    }
    a->apart = 1;
    return c;
}

/* Whether live (None, or a bind_*'s _LiveCaptures) fits the tuple caps:
 * every capture it makes is one of them. */
static int
live_fits(PyObject *live, PyObject *caps)
{
    return live == Py_None ||
           (hop_py__is_live(live) && hop_py__live_max_capture(live) < PyTuple_GET_SIZE(caps));
}

PyObject *
hop_py__plan_bind_arrays(PlanObject *p, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t n, nown;
    Py_ssize_t *alias;
    PyObject *live = nargs >= 6 && args[5] != Py_None ? args[5] : NULL;
    if ((nargs < 3 || nargs > 7) || (n = PyLong_AsSsize_t(args[0])) < 0 ||
        !PyTuple_Check(args[1]) || !PyTuple_Check(args[2]) ||
        (nargs >= 4 && args[3] != Py_None &&
         (!PyTuple_Check(args[3]) || PyTuple_GET_SIZE(args[3]) != n)) ||
        (live != NULL && !live_fits(live, args[1]))) {
        return bad_bind_args("bind_arrays(nargs, captures, scalars, c_order=None, alias=None, "
                             "live=None, env=None) takes an int >= 0, two tuples, None or a "
                             "tuple of nargs bools, None or a tuple of nargs ints, None or a "
                             "_LiveCaptures of those captures, and None or a tuple of addresses");
    }
    if (alias_of(nargs >= 5 ? args[4] : Py_None, n, &alias, &nown, "bind_arrays") < 0)
        return NULL;
    if ((size_t)(nown + PyTuple_GET_SIZE(args[1])) != p->ninputs ||
        (size_t)PyTuple_GET_SIZE(args[2]) != p->noutputs) {
        PyMem_RawFree(alias);
        return PyErr_Format(PyExc_TypeError,
                            "bind_arrays: the plan takes %zu tensors and gives %zu results, "
                            "not %zd + %zd and %zd",
                            p->ninputs, p->noutputs, nown, PyTuple_GET_SIZE(args[1]),
                            PyTuple_GET_SIZE(args[2]));
    }
    if (hop_py__import_attr(&numpy_ndarray_type, "numpy", "ndarray") == NULL) {
        PyMem_RawFree(alias);
        return NULL;
    }
    ArrayCallObject *c = (ArrayCallObject *)array_call_new(p, n, args[1], args[2], 0);
    if (c != NULL && nargs >= 4 && args[3] != Py_None)
        c->c_order = Py_NewRef(args[3]);
    if (c != NULL)
        c->live = Py_XNewRef(live);
    return with_env(with_alias(c, nown, alias), nargs == 7 ? args[6] : Py_None, "bind_arrays");
}

PyObject *
hop_py__plan_bind_tensors(PlanObject *p, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t n, nown;
    Py_ssize_t *alias;
    int single;
    PyObject *live = nargs >= 5 && args[4] != Py_None ? args[4] : NULL;
    if (nargs < 3 || nargs > 6 || (n = PyLong_AsSsize_t(args[0])) < 0 || !PyTuple_Check(args[1]) ||
        (single = PyObject_IsTrue(args[2])) < 0 || (live != NULL && !live_fits(live, args[1]))) {
        return bad_bind_args("bind_tensors(nargs, captures, single, alias=None, live=None, "
                             "env=None) takes an int >= 0, a tuple, a bool, None or a tuple of "
                             "nargs ints, None or a _LiveCaptures of those captures, and None "
                             "or a tuple of addresses");
    }
    if (alias_of(nargs >= 4 ? args[3] : Py_None, n, &alias, &nown, "bind_tensors") < 0)
        return NULL;
    if ((size_t)(nown + PyTuple_GET_SIZE(args[1])) != p->ninputs ||
        (single && p->noutputs != 1)) {
        PyMem_RawFree(alias);
        return PyErr_Format(PyExc_TypeError,
                            "bind_tensors: the plan takes %zu tensors and gives %zu results, "
                            "not %zd + %zd%s",
                            p->ninputs, p->noutputs, nown, PyTuple_GET_SIZE(args[1]),
                            single ? " and one" : "");
    }
    ArrayCallObject *c = (ArrayCallObject *)array_call_new(p, n, args[1], NULL, single);
    if (c != NULL)
        c->live = Py_XNewRef(live);
    return with_env(with_alias(c, nown, alias), nargs == 6 ? args[5] : Py_None, "bind_tensors");
}

int
hop_py__array_call_aliased(PyObject *o)
{
    return Py_IS_TYPE(o, &ArrayCallType) && ((ArrayCallObject *)o)->alias != NULL;
}

int
hop_py__array_call_set_names(PyObject *call, PyObject *names)
{
    if (!Py_IS_TYPE(call, &ArrayCallType) || !hop_py__is_name_guard(names)) {
        PyErr_Format(PyExc_TypeError,
                     "_bind_names(call, names): a Plan.bind_* call and a _NameGuard, not %.100s "
                     "and %.100s", Py_TYPE(call)->tp_name, Py_TYPE(names)->tp_name);
        return -1;
    }
    ArrayCallObject *c = (ArrayCallObject *)call;
    Py_XSETREF(c->names, Py_NewRef(names));
    return 0;
}

int
hop_py__numpy_call_init(void)
{
    return PyType_Ready(&ArrayCallType);
}


/* NumPy's floating-point state and the record of exceptions kernels raised,
 * for hop.numpy and hop.compile's Python side. */
static PyMethodDef numpy_call_functions[] = {
    {"_np_fp_reported", hop_py__np_fp_reported_py, METH_NOARGS,
     "Whether NumPy's floating-point error state (numpy.errstate, numpy.seterr) now raises, "
     "calls, prints or logs for some kind of error (numpy.geterrobj()[1] & 0o6666, read in C)."},
    {"_np_fp_warned", hop_py__np_fp_warned_py, METH_NOARGS,
     "Whether a floating-point exception hop's kernels raised on this thread since the last "
     "clear (divide, overflow, underflow, invalid) is one NumPy's error state now warns for."},
    {"_np_fp_warns", hop_py__np_fp_warns_py, METH_NOARGS,
     "Whether NumPy's floating-point error state now warns for some kind of error (NumPy's "
     "default does: divide, over, invalid)."},
    {"_fp_status", hop_py__fp_status_py, METH_NOARGS,
     "The floating-point exceptions kernels raised on this thread since the last clear: "
     "hop_fp_status's bits (1 divide, 2 overflow, 4 underflow, 8 invalid)."},
    {"_fp_note", hop_py__fp_note_py, METH_O,
     "Adds hop_fp_status's bits (1 divide, 2 overflow, 4 underflow, 8 invalid) to this thread's "
     "record, as a kernel that raised them (what a NumPy call in between cleared)."},
    {"_fp_clear", hop_py__fp_clear_py, METH_NOARGS,
     "Clears this thread's record of floating-point exceptions kernels raised."},
    {"_env_argument", (PyCFunction)(void (*)(void))env_argument_py, METH_FASTCALL,
     "_env_argument(args, caps, env) -> the index of the first of args that is one of the "
     "captures caps or at one of the addresses env (an object of the plan's environment, "
     "Guards.env_ids), or -1."},
    {"_np_result", np_result, METH_O,
     "The ndarray of a plan's result tensor as a compiled NumPy call gives it (zero strides "
     "without elements in C order, as NumPy's new array)."},
    {NULL, NULL, 0, NULL},
};

int
hop_py_numpy_call_init(PyObject *module)
{
    return PyModule_AddFunctions(module, numpy_call_functions);
}
