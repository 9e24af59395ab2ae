/*
 * python/_C/np_eager.c - the eager fast path of hop.numpy's elementwise
 * ufuncs (`a + b`, `a * 2.0`, `a < b`, `np.sin(a)` outside any trace) and
 * of its plain reductions (`a.sum()`, `np.mean(a, axis=0)`, `a.max()`), the
 * per-call part in C.
 *
 * python/hop/numpy/_eager.py owns the decisions: what an operand's key is
 * (its docstring), when the general path must answer, and the plan of each
 * key (the general path's own promotion and loop, made once by _eager._plan
 * and kept in its dict).  Here each call computes the operands' keys, tests
 * the gates (no trace, no run of hop.numpy's, no recording of a path, no
 * NumPy error state that raises), looks the plan up and runs it, and makes
 * the result's hop.numpy.ndarray by filling its slots with the values
 * ndarray.__init__ gives outside a run (ndarray._EAGER_SLOTS): a Python
 * frame per op cost more than NumPy's whole `a + b` on 16 elements.
 *
 * A reduction's plan is keyed by the array's dtype, rank and axis
 * (_eager._reduce_plan: the kernel the general path calls, the casts around
 * it).  The methods of hop.numpy.ndarray that try the fast path first are C
 * method descriptors (the operators, the reductions, __array_ufunc__ and
 * __array_function__, which NumPy's overrides call), so that no Python frame
 * runs before it.
 *
 * The shape functions' fast path is here too (hop.numpy._eager_shape owns
 * what it takes): reshape and basic indexing as one view header over the
 * array's storage, concatenate of C-contiguous arrays as one copy per
 * block, where with the general path's result dtype kept per pair of the
 * operand keys above; a.reshape(...) and a[key] are C descriptors as well.
 *
 * Anything this file does not take (an operand without a key, a gate
 * closed, a plan of None) is answered None: the caller's general path
 * runs, as it did before the fast path existed.
 */
#include "tensor_impl.h"
#include "trace_impl.h"

#include <math.h>
#include <string.h>
#include <structmember.h>

#define NP_EAGER_MAX_SLOTS 16

static PyTypeObject *nd_type;    /* hop.numpy.ndarray (exactly: not NumpyArg) */
static PyObject *plans;          /* dict: (name, key[, key]) -> plan or None */
static PyObject *planner;        /* _eager._plan(name, operands) -> plan or None */
static PyObject *reduce_planner; /* _eager._reduce_plan(name, array, axis) -> plan or None */
static PyObject *reduce_funcs;   /* dict: NumPy's function (np.sum) -> its reduction's name */
static PyObject *ufunc_names;    /* dict: ufunc -> its __name__, interned */
static PyObject *cast_fn;        /* _core.cast(tensor, numpy dtype) */
/* This thread's count of reasons the fast path is off besides a trace: a
 * run of hop.numpy's on its stack (_storage.begin_run / end_run), hop.compile
 * recording a path (_paths): _np_eager_off(+1 / -1) where they begin and end,
 * so that no thread-local of Python's is read per op (two reads cost ~800
 * instructions, a fifth of NumPy's whole `a + b` on 16 elements). */
static _Thread_local long np_off;
static Py_ssize_t off_tv, off_st, off_cp; /* the slots an operand is read through */
static Py_ssize_t off_scalar;             /* ndarray._scalar: a NumPy scalar's 0-d array */
static Py_ssize_t off_ro, off_ob;         /* ndarray._ro, ._ob: a view's flag and base */
static int shape_fast = 1; /* _np_eager_shape_fast: 0 sends every shape call to the general path */
static PyObject *where_planner; /* _eager_shape._where_plan(x, y) -> (dt, hop dt) or None */
static PyObject *where_fn;      /* _C.where(condition, x, y) */
static PyObject *where_name;    /* "where": its plans' name in the dict of plans */
/* NumPy's np.reshape, np.concatenate and np.where: their calls with hop.numpy
 * arrays reach ndarray.__array_function__ (eager_array_function_call) */
static PyObject *np_reshape_fn, *np_concatenate_fn, *np_where_fn;
static Py_ssize_t init_off[NP_EAGER_MAX_SLOTS];
static PyObject *init_val[NP_EAGER_MAX_SLOTS]; /* a new result's slots (but _tv) */
static int n_init;
static PyObject *float_key[3]; /* "e", "f", "d": np.min_scalar_type(x).char of a float */

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

/* The offset of type's __slots__ member `name`, or -1 with an exception. */
static Py_ssize_t
slot_offset(PyTypeObject *type, const char *name)
{
    PyObject *d = PyDict_GetItemString(type->tp_dict, name);
    if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type) ||
        ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "_np_eager_init: %s.%s is no __slots__ member", type->tp_name,
                     name);
        return -1;
    }
    return ((PyMemberDescrObject *)d)->d_member->offset;
}

/*
 * NumPy 1.24's np.min_scalar_type of a Python float, by its type character
 * (convert_datatype.c, min_scalar_type_num for NPY_DOUBLE): float16 for a
 * value inside (-65000, 65000) or not finite, float32 inside (-3.4e38,
 * 3.4e38), else float64.
 */
static PyObject *
float_class(double v)
{
    if ((v > -65000.0 && v < 65000.0) || !isfinite(v))
        return float_key[0];
    if (v > -3.4e38 && v < 3.4e38)
        return float_key[1];
    return float_key[2];
}

/* Python's int.bit_length of v >= 0. */
static long
bit_length(unsigned long long v)
{
    long n = 0;
    for (; v != 0; v >>= 1)
        n++;
    return n;
}

/* The tensor of o, exactly a hop.numpy.ndarray, when the fast path reads it
 * (borrowed), else NULL: a run's view or an eager copy-view is the general
 * path's. */
static TensorObject *
array_tensor(PyObject *o)
{
    PyObject *tv = SLOT(o, off_tv);
    if (SLOT(o, off_st) != Py_None || SLOT(o, off_cp) != Py_None || tv == NULL ||
        !HOP_PY_IS_TENSOR(tv))
        return NULL;
    return HOP_PY_TENSOR(tv);
}

/* The key of array tensor x: its hop dtype's object (new reference), or NULL
 * (an exception set when reading the dtype failed). */
static PyObject *
dtype_key(TensorObject *x)
{
    hop_dtype d;
    if (hop_py__tensor_dtype(x, &d) < 0)
        return NULL;
    return Py_XNewRef(hop_py_dtype_object(d));
}

/*
 * Operand o's key (the docstring of hop.numpy._eager says what it is and why):
 * a new reference, or NULL without an exception when o has none (the
 * general path's call), or NULL with one (reading its tensor failed).
 */
static PyObject *
operand_key(PyObject *o)
{
    PyTypeObject *t = Py_TYPE(o);
    if (t == nd_type) {
        TensorObject *x = array_tensor(o);
        if (x == NULL || hop_py__tensor_rank(x) <= 0)
            return NULL;
        if (x->t != NULL && !hop_tensor_is_contiguous(x->t))
            return NULL; /* another layout: NumPy's K order (_storage.eager_order) */
        return dtype_key(x);
    }
    if (t == &PyFloat_Type)
        return Py_NewRef(float_class(PyFloat_AS_DOUBLE(o)));
    if (t == &PyLong_Type) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow != 0)
            return NULL; /* (beyond int64: the general path's) */
        if (v == -1 && PyErr_Occurred())
            return NULL;
        return PyLong_FromLong(v >= 0 ? bit_length((unsigned long long)v)
                                      : -1 - bit_length((unsigned long long)~v));
    }
    if (t == &PyBool_Type)
        return Py_NewRef((PyObject *)&PyBool_Type);
    return NULL;
}

/* 1 when the fast path may answer (nothing traced, no run, no path
 * recorded, NumPy's error state not reported), 0 when not, -1 with an
 * exception. */
static int
gates_open(void)
{
    if (np_off > 0 || hop_py_tracing_active())
        return 0;
    int r = hop_py__np_fp_reported();
    return r < 0 ? -1 : !r;
}

/* _np_eager_off(delta): this thread's count of reasons the fast path is off
 * (above) changed by delta; the new count. */
static PyObject *
np_eager_off(PyObject *self, PyObject *arg)
{
    (void)self;
    long d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred())
        return NULL;
    if (np_off + d < 0) {
        PyErr_SetString(PyExc_ValueError, "_np_eager_off: more ends than beginnings");
        return NULL;
    }
    np_off += d;
    return PyLong_FromLong(np_off);
}

/* Tensor t as a new hop.numpy.ndarray, its slots those ndarray.__init__
 * gives outside a run (steals t). */
static PyObject *
new_array(PyObject *t)
{
    if (!HOP_PY_IS_TENSOR(t)) { /* (__init__'s TypeError) */
        PyObject *a = PyObject_CallOneArg((PyObject *)nd_type, t);
        Py_DECREF(t);
        return a;
    }
    PyObject *a = nd_type->tp_alloc(nd_type, 0);
    if (a == NULL) {
        Py_DECREF(t);
        return NULL;
    }
    SLOT(a, off_tv) = t;
    for (int i = 0; i < n_init; i++)
        SLOT(a, init_off[i]) = Py_NewRef(init_val[i]);
    return a;
}

/* Operand o as the plan's impl reads it: an array's tensor, a scalar as it
 * is; cast first to cast (a NumPy dtype) unless it is None.  New reference. */
static PyObject *
plan_operand(PyObject *o, PyObject *cast)
{
    PyObject *v = Py_TYPE(o) == nd_type ? SLOT(o, off_tv) : o;
    if (cast == Py_None)
        return Py_NewRef(v);
    return PyObject_CallFunctionObjArgs(cast_fn, v, cast, NULL);
}

static PyObject *finish(PyObject *r, PyObject *out_dt, PyObject *out_hop);

/* plan's kernel (item 0) called on the n arguments u, its result finished
 * (items 3 and 4: finish): as run_plan.  The flags of hop_fp_status are
 * this call's; a ShapeError (operands that do not broadcast, an empty max)
 * has the general path raise NumPy's error (its ValueError and text). */
static PyObject *
call_kernel(PyObject *plan, PyObject *const *u, size_t n)
{
    hop_fp_clear();
    PyObject *r = PyObject_Vectorcall(PyTuple_GET_ITEM(plan, 0), u, n, NULL);
    if (r == NULL) {
        if (PyErr_ExceptionMatches(hop_py_ShapeError))
            PyErr_Clear();
        return NULL;
    }
    return finish(r, PyTuple_GET_ITEM(plan, 3), PyTuple_GET_ITEM(plan, 4));
}

/* Runs plan (impl, cast of x, cast of y, result's NumPy dtype, its hop
 * dtype) on the n operands ops: the result, or NULL without an exception
 * when the general path must answer (a floating-point warning), or NULL
 * with one. */
static PyObject *
run_plan(PyObject *plan, PyObject *const *ops, Py_ssize_t n)
{
    if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 5) {
        PyErr_SetString(PyExc_SystemError, "_np_eager: a plan is (impl, cast, cast, dt, hop dt)");
        return NULL;
    }
    PyObject *u[2] = {NULL, NULL};
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((u[i] = plan_operand(ops[i], PyTuple_GET_ITEM(plan, 1 + i))) == NULL) {
            Py_XDECREF(u[0]);
            return NULL;
        }
    }
    PyObject *r = call_kernel(plan, u, (size_t)n);
    Py_XDECREF(u[0]);
    Py_XDECREF(u[1]);
    return r;
}

/* A kernel's result r (stolen) as the fast path's: cast to out_dt (a NumPy
 * dtype, out_hop its hop dtype) when it has another dtype, a new ndarray, or
 * NULL without an exception when its kernel
 * raised a floating-point flag NumPy's state warns for (the general path
 * answers), or NULL with one. */
static PyObject *
finish(PyObject *r, PyObject *out_dt, PyObject *out_hop)
{
    int same;
    if (HOP_PY_IS_TENSOR(r)) {
        hop_dtype d;
        same =
            hop_py__tensor_dtype(HOP_PY_TENSOR(r), &d) < 0 ? -1 : hop_py_dtype_object(d) == out_hop;
    } else {
        PyObject *dt = PyObject_GetAttrString(r, "dtype");
        same = dt == NULL ? -1 : dt == out_hop;
        Py_XDECREF(dt);
    }
    if (same < 0) {
        Py_DECREF(r);
        return NULL;
    }
    if (!same) {
        PyObject *c = PyObject_CallFunctionObjArgs(cast_fn, r, out_dt, NULL);
        Py_DECREF(r);
        if (c == NULL)
            return NULL;
        r = c;
    }
    /* a floating-point exception NumPy's state warns for: NULL without an
     * exception, the general path answers (NumPy computes the op and warns
     * as it does) */
    int warned = hop_py__np_fp_warned();
    if (warned != 0) {
        Py_DECREF(r);
        return NULL;
    }
    return new_array(r);
}

/*
 * The plans seen last, by the identity of the name and the keys (each held,
 * so that no other object takes its address), while the dict of plans has
 * the version it had: a hit spares the key's tuple, its hash and the dict's
 * comparisons of its items.  A change of the dict (a new plan, a clear)
 * empties it.  CPython 3.12 deprecates the dict's version: there every
 * lookup is the dict's.
 */
#define PLAN_CACHE 64
typedef struct plan_entry {
    PyObject *name, *k0, *k1, *plan;
} plan_entry;
static plan_entry plan_cache[PLAN_CACHE];
#if PY_VERSION_HEX < 0x030C0000
static uint64_t plan_cache_version;
#endif

static plan_entry *
plan_slot(PyObject *name, PyObject *k0, PyObject *k1)
{
    uintptr_t h = ((uintptr_t)name >> 4) ^ ((uintptr_t)k0 >> 3) ^ ((uintptr_t)k1 >> 5);
    return &plan_cache[(h ^ (h >> 7)) % PLAN_CACHE];
}

static void
plan_entry_clear(plan_entry *e)
{
    Py_CLEAR(e->name);
    Py_CLEAR(e->k0);
    Py_CLEAR(e->k1);
    Py_CLEAR(e->plan);
}

/* A planner's call on a miss of the plans: the new plan (or None), or NULL
 * with an exception; ctx is the caller's. */
typedef PyObject *(*plan_miss)(PyObject *name, void *ctx);

/* The plan of `name` (a ufunc's, or a reduction's "reduce:sum") for keys k0
 * and k1 (NULL for one operand): the dict's, or miss's on a miss (then kept
 * in the dict).  New reference, or NULL with an exception. */
static PyObject *
lookup_plan(PyObject *name, PyObject *k0, PyObject *k1, plan_miss miss, void *ctx)
{
    plan_entry *e = plan_slot(name, k0, k1);
#if PY_VERSION_HEX < 0x030C0000
    if (((PyDictObject *)plans)->ma_version_tag != plan_cache_version) {
        for (int i = 0; i < PLAN_CACHE; i++)
            plan_entry_clear(&plan_cache[i]);
        plan_cache_version = ((PyDictObject *)plans)->ma_version_tag;
    }
    if (e->plan != NULL && e->name == name && e->k0 == k0 && e->k1 == k1)
        return Py_NewRef(e->plan);
#endif
    PyObject *key = k1 != NULL ? PyTuple_Pack(3, name, k0, k1) : PyTuple_Pack(2, name, k0);
    if (key == NULL)
        return NULL;
    PyObject *plan = Py_XNewRef(PyDict_GetItemWithError(plans, key));
    if (plan == NULL && !PyErr_Occurred()) {
        plan = miss(name, ctx);
        if (plan != NULL && PyDict_SetItem(plans, key, plan) < 0)
            Py_CLEAR(plan);
    }
    Py_DECREF(key);
#if PY_VERSION_HEX < 0x030C0000
    if (plan != NULL && ((PyDictObject *)plans)->ma_version_tag == plan_cache_version) {
        plan_entry_clear(e);
        e->name = Py_NewRef(name);
        e->k0 = Py_NewRef(k0);
        e->k1 = Py_XNewRef(k1);
        e->plan = Py_NewRef(plan);
    }
#endif
    return plan;
}

/* The operands of a ufunc's call, for its planner on a miss. */
typedef struct ufunc_call {
    PyObject *const *ops;
    Py_ssize_t n;
    PyObject *tuple; /* ops as a tuple, or NULL: made here */
} ufunc_call;

static PyObject *
ufunc_miss(PyObject *name, void *ctx)
{
    ufunc_call *c = ctx;
    PyObject *t =
        c->tuple != NULL ? Py_NewRef(c->tuple) : PyTuple_Pack(c->n, c->ops[0], c->ops[c->n - 1]);
    PyObject *plan = t == NULL ? NULL : PyObject_CallFunctionObjArgs(planner, name, t, NULL);
    Py_XDECREF(t);
    return plan;
}

/*
 * Ufunc `name` of the n operands ops by the fast path: a new reference, or
 * NULL without an exception when the general path must answer, or NULL with
 * one.  tuple is ops as a tuple (the planner's argument), or NULL: made on a
 * miss of the plans.
 */
static PyObject *
fast(PyObject *name, PyObject *const *ops, Py_ssize_t n, PyObject *tuple)
{
    if (nd_type == NULL || (Py_TYPE(ops[0]) != nd_type && (n == 1 || Py_TYPE(ops[1]) != nd_type)))
        return NULL;
    PyObject *k[2] = {NULL, NULL}, *plan = NULL, *res = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((k[i] = operand_key(ops[i])) == NULL)
            goto done;
    }
    if (gates_open() <= 0)
        goto done;
    ufunc_call c = {ops, n, tuple};
    if ((plan = lookup_plan(name, k[0], k[1], ufunc_miss, &c)) == NULL)
        goto done;
    if (plan != Py_None)
        res = run_plan(plan, ops, n);
done:
    Py_XDECREF(k[0]);
    Py_XDECREF(k[1]);
    Py_XDECREF(plan);
    return res;
}

/* The array and axis of a reduction's call, for its planner on a miss. */
typedef struct reduce_call {
    PyObject *array, *axis;
} reduce_call;

static PyObject *
reduce_miss(PyObject *name, void *ctx)
{
    reduce_call *c = ctx;
    return PyObject_CallFunctionObjArgs(reduce_planner, name, c->array, c->axis, NULL);
}

/* Runs a reduction's plan (kernel, the dtype x is cast to first or None,
 * dims, result's NumPy dtype, its hop dtype; _eager._reduce_plan) on tensor
 * x: as run_plan. */
static PyObject *
run_reduce(PyObject *plan, PyObject *x)
{
    if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 5) {
        PyErr_SetString(PyExc_SystemError,
                        "_np_eager: a reduction's plan is (kernel, cast, dims, dt, hop dt)");
        return NULL;
    }
    PyObject *u[3] = {plan_operand(x, PyTuple_GET_ITEM(plan, 1)), PyTuple_GET_ITEM(plan, 2),
                      Py_False};
    if (u[0] == NULL)
        return NULL;
    PyObject *r = call_kernel(plan, u, 3);
    Py_DECREF(u[0]);
    /* a full reduction's 0-d result is a NumPy scalar's (as the general
     * path's ndarray(t, scalar=True)) */
    if (r != NULL && HOP_PY_IS_TENSOR(SLOT(r, off_tv)) &&
        hop_py__tensor_rank(HOP_PY_TENSOR(SLOT(r, off_tv))) == 0)
        Py_SETREF(SLOT(r, off_scalar), Py_NewRef(Py_True));
    return r;
}

/*
 * Reduction `name` ("reduce:sum", ...; _eager.REDUCTIONS) of array a over
 * axis (NULL or None: all of them; an int) by the fast path: as fast.  It
 * takes an exact hop.numpy.ndarray of one or more dimensions with elements
 * (an empty one's errors and warnings are the general path's), in any
 * layout, and an axis that is None or an int in range (anything else, an
 * AxisError included, is the general path's).  The plan's key: the dtype,
 * and the rank and axis as one small int.
 */
static PyObject *
fast_reduce(PyObject *name, PyObject *a, PyObject *axis)
{
    if (nd_type == NULL || Py_TYPE(a) != nd_type)
        return NULL;
    TensorObject *x = array_tensor(a);
    int rank = x == NULL ? -1 : hop_py__tensor_rank(x);
    if (rank <= 0 || rank > 15 || x->t == NULL || hop_tensor_numel(x->t) <= 0) {
        PyErr_Clear(); /* (a proxy's rank: not ours) */
        return NULL;
    }
    long code = 0;
    if (axis != NULL && axis != Py_None) {
        if (!PyLong_CheckExact(axis))
            return NULL;
        int overflow;
        long v = PyLong_AsLongAndOverflow(axis, &overflow);
        if (overflow != 0 || v < -rank || v >= rank)
            return NULL;
        code = 1 + (v < 0 ? v + rank : v);
    }
    PyObject *k0 = dtype_key(x), *k1 = NULL, *plan = NULL, *res = NULL;
    if (k0 == NULL || gates_open() <= 0)
        goto done;
    if ((k1 = PyLong_FromLong(rank * 16 + code)) == NULL)
        goto done;
    reduce_call c = {a, axis != NULL ? axis : Py_None};
    if ((plan = lookup_plan(name, k0, k1, reduce_miss, &c)) == NULL)
        goto done;
    if (plan != Py_None)
        res = run_reduce(plan, (PyObject *)x);
done:
    Py_XDECREF(k0);
    Py_XDECREF(k1);
    Py_XDECREF(plan);
    return res;
}

/* r, a fast path's answer, or None for NULL without an exception (the
 * caller's general path answers). */
static PyObject *
or_none(PyObject *r)
{
    if (r == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return r;
}

/*
 * _np_eager(name, operands): ufunc `name` of the operand tuple (one or two,
 * no keywords) by the fast path: its result, or None when the general path
 * must answer (hop.numpy._eager.call).
 */
static PyObject *
np_eager(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2 || !PyTuple_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_np_eager(name, operands): operands is a tuple");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args[1]);
    /* (ufunc.__name__ is a new str on each call: interned, the plans seen
     * last know it by its identity) */
    PyObject *name = Py_NewRef(args[0]);
    if (PyUnicode_CheckExact(name))
        PyUnicode_InternInPlace(&name);
    PyObject *r = n == 1 || n == 2 ? fast(name, &PyTuple_GET_ITEM(args[1], 0), n, args[1]) : NULL;
    Py_DECREF(name);
    return or_none(r);
}

/*
 * A method of hop.numpy.ndarray that tries the fast path before its Python
 * method (the general path), by its role:
 * - an operator (`a + b`, `b * a`, `a < b`, `-a`): ufunc `name`;
 * - a reduction (`a.sum()`, `a.max(0)`, `a.mean(axis=1)`): "reduce:<name>";
 * - __array_ufunc__ (`np.sin(a)`): the ufunc NumPy names, called plainly;
 * - __array_function__ (`np.sum(a)`, `np.mean(a, 0)`): the reductions of
 *   _eager._REDUCE_FUNCS.
 * A method descriptor, so that Python's operator slots and NumPy's
 * overrides call it unbound, with no frame of Python's before the fast path.
 */
typedef struct EagerOpObject {
    PyObject_HEAD PyObject *name; /* the ufunc's or the reduction's name, or None */
    PyObject *fallback;           /* the Python method */
    int nargs;                    /* an operator's: 1 or 2, self included */
    int reflected;                /* `other OP self`: the operands are (other, self) */
    vectorcallfunc vectorcall;
} EagerOpObject;

static PyObject *axis_str, *call_str; /* "axis", "__call__" (interned) */

/* Whether s is the interned str is (a keyword's name, NumPy's method). */
static int
is_str(PyObject *s, PyObject *is)
{
    return s == is || (PyUnicode_CheckExact(s) && PyUnicode_Compare(s, is) == 0);
}

static PyObject *
eager_op_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && n == op->nargs && Py_TYPE(args[0]) == nd_type) {
        PyObject *ops[2] = {args[op->reflected], args[n - 1 - op->reflected]};
        PyObject *r = fast(op->name, ops, n, NULL);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* a.sum(), a.sum(axis), a.sum(axis=axis) */
static PyObject *
eager_reduce_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (n >= 1 && ((nkw == 0 && n <= 2) ||
                   (nkw == 1 && n == 1 && is_str(PyTuple_GET_ITEM(kwnames, 0), axis_str)))) {
        PyObject *r = fast_reduce(op->name, args[0], n + nkw == 2 ? args[1] : NULL);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* The interned __name__ of ufunc uf (borrowed; kept per ufunc, at most 1024
 * of them), or NULL with an exception. */
static PyObject *
ufunc_name(PyObject *uf)
{
    PyObject *name = PyDict_GetItemWithError(ufunc_names, uf);
    if (name != NULL || PyErr_Occurred())
        return name;
    if ((name = PyObject_GetAttrString(uf, "__name__")) == NULL)
        return NULL;
    if (!PyUnicode_CheckExact(name)) {
        Py_DECREF(name);
        return NULL;
    }
    PyUnicode_InternInPlace(&name);
    if (PyDict_GET_SIZE(ufunc_names) >= 1024 || PyDict_SetItem(ufunc_names, uf, name) < 0) {
        Py_DECREF(name);
        return NULL;
    }
    Py_DECREF(name); /* (the dict holds it) */
    return name;
}

/* __array_ufunc__(self, ufunc, "__call__", x[, y]) with no keywords */
static PyObject *
eager_array_ufunc_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (nd_type != NULL && (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) &&
        (n == 4 || n == 5) && is_str(args[2], call_str)) {
        PyObject *name = ufunc_name(args[1]); /* (NULL, no exception: not a str) */
        PyObject *r = name == NULL ? NULL : fast(name, args + 3, n - 3, NULL);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

static PyObject *shape_function(PyObject *func, PyObject *fargs);

/* __array_function__(self, func, types, args, kwargs) of a reduction called
 * as func(a), func(a, axis) or func(a, axis=axis), or of np.reshape,
 * np.concatenate or np.where with positional arguments (shape_function) */
static PyObject *
eager_array_function_call(EagerOpObject *op, PyObject *const *args, size_t nargsf,
                          PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (nd_type != NULL && kwnames == NULL && n == 5 && PyTuple_CheckExact(args[3]) &&
        PyDict_CheckExact(args[4])) {
        if (PyDict_GET_SIZE(args[4]) == 0) {
            PyObject *r = shape_function(args[1], args[3]);
            if (r != NULL || PyErr_Occurred())
                return r;
        }
        PyObject *name = PyDict_GetItemWithError(reduce_funcs, args[1]);
        if (name == NULL && PyErr_Occurred())
            return NULL;
        Py_ssize_t np = PyTuple_GET_SIZE(args[3]), nkw = PyDict_GET_SIZE(args[4]);
        PyObject *axis = NULL;
        if (name != NULL && np == 1 && nkw == 1) {
            axis = PyDict_GetItemWithError(args[4], axis_str);
            if (axis == NULL && PyErr_Occurred())
                return NULL;
            if (axis == NULL)
                name = NULL; /* (another keyword) */
        } else if (np == 2 && nkw == 0) {
            axis = PyTuple_GET_ITEM(args[3], 1);
        } else if (np != 1 || nkw != 0) {
            name = NULL;
        }
        PyObject *r = name == NULL ? NULL : fast_reduce(name, PyTuple_GET_ITEM(args[3], 0), axis);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/*
 * The shape functions' eager fast path (hop.numpy._eager_shape says what it
 * takes and why): basic indexing and reshape of a C-contiguous array made as
 * the general path's hop ops make them, one view header over the array's
 * storage (hop_tensor_view, as runtime/eager.c's eager_view), without the
 * op's dispatch.  NULL without an exception: the general path answers.
 */

/* The concrete tensor of a when the shape fast path takes a (exactly
 * hop.numpy.ndarray, not a NumPy scalar, not a run's view nor a view hop
 * made as a copy; the gates open), else NULL. */
static hop_tensor *
shape_tensor(PyObject *a)
{
    if (!shape_fast || nd_type == NULL || Py_TYPE(a) != nd_type || np_off > 0 ||
        hop_py_tracing_active())
        return NULL;
    TensorObject *x = array_tensor(a);
    if (x == NULL || SLOT(a, off_scalar) != Py_False || SLOT(a, off_ro) == NULL)
        return NULL;
    return x->t;
}

/* View v (a new header over a's storage, stolen) as the general path's
 * eager view of a (_ndarray.view): read-only when a is, NumPy's base (a, or
 * a's base). */
static PyObject *
view_array(PyObject *a, hop_tensor *v)
{
    PyObject *t = hop_py_tensor_new(v);
    PyObject *r = t == NULL ? NULL : new_array(t);
    if (r == NULL)
        return NULL;
    PyObject *ob = SLOT(a, off_ob);
    Py_SETREF(SLOT(r, off_ro), Py_NewRef(SLOT(a, off_ro)));
    Py_SETREF(SLOT(r, off_ob), Py_NewRef(ob == NULL || ob == Py_None ? a : ob));
    return r;
}

/* An index item's int (an exact int), or -1 in *ok = 0 when it is none or
 * beyond int64. */
static int64_t
index_int(PyObject *k, int *ok)
{
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(k, &overflow);
    *ok = overflow == 0 && !(v == -1 && PyErr_Occurred());
    PyErr_Clear();
    return v;
}

/* Whether slice item k's bounds are None or exact ints of int64 (hop's
 * slice op refuses a larger one: its OverflowError) and its step, if any, is
 * positive (a negative one is hop's copy; 0 the general path's error). */
static int
plain_slice(PyObject *k)
{
    PySliceObject *sl = (PySliceObject *)k;
    PyObject *parts[3] = {sl->start, sl->stop, sl->step};
    for (int i = 0; i < 3; i++) {
        int ok = 1;
        if (parts[i] != Py_None &&
            (!PyLong_CheckExact(parts[i]) || (index_int(parts[i], &ok) <= 0 && i == 2) || !ok))
            return 0;
    }
    return 1;
}

/*
 * a[key] for a basic key (ints, slices of ints with a positive step, None,
 * one Ellipsis; every int in range, every slice taking elements) by the fast
 * path: _indexing._basic's select/slice/new axis (stride 0) composed into
 * one view, or for ints that take every dim a NumPy scalar, a copy of the
 * element.
 */
static PyObject *
fast_getitem(PyObject *a, PyObject *key)
{
    hop_tensor *t = shape_tensor(a);
    if (t == NULL)
        return NULL;
    PyObject *const *keys = &key;
    Py_ssize_t nk = 1;
    if (PyTuple_CheckExact(key)) {
        keys = &PyTuple_GET_ITEM(key, 0);
        nk = PyTuple_GET_SIZE(key);
    }
    int consumed = 0, ints = 0, ellipsis = 0, plain = 1, added = 0;
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *k = keys[i];
        if (PyLong_CheckExact(k)) {
            consumed++;
            ints++;
        } else if (Py_IS_TYPE(k, &PySlice_Type) && plain_slice(k)) {
            consumed++;
            plain = 0;
        } else if (k == Py_None) {
            added++;
            plain = 0;
        } else if (k == Py_Ellipsis && !ellipsis) {
            ellipsis = 1;
            plain = 0;
        } else {
            return NULL;
        }
    }
    if (consumed > t->rank || t->rank - ints + added > HOP_MAX_RANK)
        return NULL;
    int64_t sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK], offset = t->offset;
    int rank = 0, d = 0;
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *k = keys[i];
        if (k == Py_None) {
            sizes[rank] = 1;
            strides[rank++] = 0;
        } else if (k == Py_Ellipsis) {
            for (int e = 0; e < t->rank - consumed; e++, d++) {
                sizes[rank] = t->sizes[d];
                strides[rank++] = t->strides[d];
            }
        } else if (PyLong_CheckExact(k)) {
            int ok;
            int64_t v = index_int(k, &ok), n = t->sizes[d];
            if (!ok || v < -n || v >= n)
                return NULL; /* (the general path's IndexError names the axis) */
            offset += (v < 0 ? v + n : v) * t->strides[d++];
        } else {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(k, &start, &stop, &step) < 0) {
                PyErr_Clear();
                return NULL;
            }
            Py_ssize_t len = PySlice_AdjustIndices((Py_ssize_t)t->sizes[d], &start, &stop, step);
            if (len == 0)
                return NULL; /* (an empty slice: hop's slice op says where it starts) */
            sizes[rank] = len;
            strides[rank++] = t->strides[d] * step;
            offset += start * t->strides[d++];
        }
    }
    for (; d < t->rank; d++) {
        sizes[rank] = t->sizes[d];
        strides[rank++] = t->strides[d];
    }
    if (!plain || rank != 0) {
        hop_tensor *v = hop_tensor_view(t, rank, sizes, strides, offset);
        if (v == NULL) {
            hop_error_clear();
            return NULL;
        }
        return view_array(a, v);
    }
    /* a NumPy scalar: a new 0-d tensor holding a copy of the element, as the
     * general path's clone of the element's view (_indexing.getitem) */
    size_t isz = hop_dtype_size(t->dtype);
    hop_tensor *c = hop_tensor_empty(t->dtype, 0, NULL);
    if (c == NULL) {
        hop_error_clear();
        return NULL;
    }
    memcpy(c->data, (const char *)t->data + (size_t)(offset - t->offset) * isz, isz);
    PyObject *tv = hop_py_tensor_new(c);
    PyObject *r = tv == NULL ? NULL : new_array(tv);
    if (r != NULL)
        Py_SETREF(SLOT(r, off_scalar), Py_NewRef(Py_True));
    return r;
}

/*
 * a.reshape(shape) in C order for the n sizes dims (exact ints, at most one
 * -1) by the fast path: of an array that is C-contiguous with no dim of size
 * 1 or 0, whose strides are then NumPy's C strides, the view with C strides
 * (hop's reshape of it, and NumPy's strides on new dims of size 1 too:
 * _funcs._numpy_strides changes nothing).  A size that does not fit is the
 * general path's ValueError.
 */
static PyObject *
fast_reshape(PyObject *a, PyObject *const *dims, Py_ssize_t n)
{
    hop_tensor *t = shape_tensor(a);
    if (t == NULL || n > HOP_MAX_RANK || !hop_tensor_is_contiguous(t))
        return NULL;
    int64_t numel = 1, known = 1, sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK];
    for (int d = 0; d < t->rank; d++) {
        if (t->sizes[d] <= 1)
            return NULL;
        numel *= t->sizes[d];
    }
    int unknown = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        int ok;
        if (!PyLong_CheckExact(dims[i]))
            return NULL;
        sizes[i] = index_int(dims[i], &ok);
        if (!ok || sizes[i] < -1 || (sizes[i] == -1 && unknown >= 0) || sizes[i] > numel)
            return NULL;
        if (sizes[i] == -1)
            unknown = (int)i;
        else
            known *= sizes[i];
    }
    if (unknown >= 0) {
        if (known == 0 || numel % known != 0)
            return NULL;
        sizes[unknown] = numel / known;
    } else if (known != numel) {
        return NULL;
    }
    int64_t s = 1;
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        strides[i] = s;
        s *= sizes[i];
    }
    hop_tensor *v = hop_tensor_view(t, (int)n, sizes, strides, t->offset);
    if (v == NULL) {
        hop_error_clear();
        return NULL;
    }
    return view_array(a, v);
}

/*
 * np.concatenate(arrays, axis) (axis an int, or None: the arrays flattened)
 * by the fast path: a list or tuple of arrays the fast path takes
 * (shape_tensor), of one dtype, C-contiguous (their elements in order in
 * memory, so that each array's part of every outer index is one block), one
 * or more dims, sizes that join.  The new C-ordered tensor _C.cat makes,
 * filled block by block.  Anything else (a promotion, another layout, sizes
 * that do not join) is the general path's.
 */
static PyObject *
fast_concatenate(PyObject *arrays, PyObject *axis) /* axis NULL: 0 */
{
    PyObject *const *items;
    Py_ssize_t n;
    if (PyList_CheckExact(arrays)) {
        items = PySequence_Fast_ITEMS(arrays);
        n = PyList_GET_SIZE(arrays);
    } else if (PyTuple_CheckExact(arrays)) {
        items = &PyTuple_GET_ITEM(arrays, 0);
        n = PyTuple_GET_SIZE(arrays);
    } else {
        return NULL;
    }
    hop_tensor *t0 = n > 0 ? shape_tensor(items[0]) : NULL;
    if (t0 == NULL || t0->rank == 0)
        return NULL;
    int flat = axis == Py_None, rank = flat ? 1 : t0->rank;
    int64_t ax = 0, sizes[HOP_MAX_RANK];
    if (!flat && axis != NULL) {
        int ok;
        if (!PyLong_CheckExact(axis))
            return NULL;
        ax = index_int(axis, &ok);
        if (!ok || ax < -rank || ax >= rank)
            return NULL; /* (the general path's AxisError) */
        ax += ax < 0 ? rank : 0;
    }
    for (int d = 0; d < rank; d++)
        sizes[d] = flat || d == ax ? 0 : t0->sizes[d];
    for (Py_ssize_t i = 0; i < n; i++) {
        hop_tensor *t = shape_tensor(items[i]);
        if (t == NULL || t->dtype != t0->dtype || !hop_tensor_is_contiguous(t) ||
            (!flat && t->rank != rank))
            return NULL;
        for (int d = 0; !flat && d < rank; d++) {
            if (d != ax && t->sizes[d] != sizes[d])
                return NULL;
        }
        sizes[ax] += flat ? hop_tensor_numel(t) : t->sizes[ax];
    }
    hop_tensor *r = hop_tensor_empty(t0->dtype, rank, sizes);
    if (r == NULL) {
        hop_error_clear();
        return NULL; /* (the general path's error) */
    }
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < rank; d++) {
        if (d < ax)
            outer *= sizes[d];
        else if (d > ax)
            inner *= sizes[d];
    }
    size_t isz = hop_dtype_size(t0->dtype);
    char *dst = r->data;
    for (int64_t o = 0; o < outer; o++) {
        for (Py_ssize_t i = 0; i < n; i++) {
            hop_tensor *t = HOP_PY_TENSOR(SLOT(items[i], off_tv))->t;
            size_t blk = (size_t)((flat ? hop_tensor_numel(t) : t->sizes[ax]) * inner) * isz;
            if (blk != 0) { /* (an empty tensor's data may be NULL) */
                memcpy(dst, (const char *)t->data + (size_t)o * blk, blk);
                dst += blk;
            }
        }
    }
    PyObject *tv = hop_py_tensor_new(r);
    return tv == NULL ? NULL : new_array(tv);
}

/* _np_eager_concatenate(arrays, axis): np.concatenate(arrays, axis) by the
 * shape fast path, or None. */
static PyObject *
np_eager_concatenate(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 1 && nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_concatenate(arrays, axis=0)");
        return NULL;
    }
    return or_none(fast_concatenate(args[0], nargs == 2 ? args[1] : NULL));
}

static PyObject *
where_miss(PyObject *name, void *ctx)
{
    (void)name;
    PyObject **xy = ctx;
    return PyObject_CallFunctionObjArgs(where_planner, xy[0], xy[1], NULL);
}

/* Where operand o as _C.where reads it: an array's tensor (cast to dt
 * unless it has hop dtype hdt), a scalar as it is.  New reference. */
static PyObject *
where_operand(PyObject *o, PyObject *dt, PyObject *hdt)
{
    if (Py_TYPE(o) != nd_type)
        return Py_NewRef(o);
    PyObject *tv = SLOT(o, off_tv);
    hop_dtype d;
    if (hop_py__tensor_dtype(HOP_PY_TENSOR(tv), &d) < 0)
        return NULL;
    if (hop_py_dtype_object(d) == hdt)
        return Py_NewRef(tv);
    return PyObject_CallFunctionObjArgs(cast_fn, tv, dt, NULL);
}

/*
 * np.where(condition, x, y) by the fast path: a bool C-contiguous condition
 * array the fast path takes, x and y each an operand with a key (as the
 * ufuncs': an array of one or more dims, C-contiguous, or a Python bool,
 * int or float; operand_key) and one of them an array.  The result dtype is
 * the general path's decision per pair of keys (_eager_shape._where_plan,
 * kept with the ufuncs' plans under the name "where"); _C.where of the
 * operands in it (every array C-contiguous: NumPy's K order is C), cast to
 * it.  Operands that do not broadcast are the general path's ValueError.
 */
static PyObject *
fast_where(PyObject *c, PyObject *x, PyObject *y)
{
    hop_tensor *ct = shape_tensor(c);
    if (ct == NULL || where_fn == NULL || ct->dtype != HOP_BOOL || !hop_tensor_is_contiguous(ct) ||
        (Py_TYPE(x) != nd_type && Py_TYPE(y) != nd_type))
        return NULL;
    PyObject *xy[2] = {x, y};
    for (int i = 0; i < 2; i++) {
        TensorObject *a = Py_TYPE(xy[i]) == nd_type ? array_tensor(xy[i]) : NULL;
        if (Py_TYPE(xy[i]) == nd_type &&
            (a == NULL || a->t == NULL || SLOT(xy[i], off_scalar) != Py_False))
            return NULL;
    }
    PyObject *kx = operand_key(x), *ky = kx == NULL ? NULL : operand_key(y);
    PyObject *plan = NULL, *u[3] = {SLOT(c, off_tv), NULL, NULL}, *r = NULL, *res = NULL;
    if (ky == NULL || (plan = lookup_plan(where_name, kx, ky, where_miss, xy)) == NULL ||
        plan == Py_None)
        goto done;
    if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 2) {
        PyErr_SetString(PyExc_SystemError, "_np_eager_where: a plan is (dt, hop dt)");
        goto done;
    }
    PyObject *dt = PyTuple_GET_ITEM(plan, 0), *hdt = PyTuple_GET_ITEM(plan, 1);
    if ((u[1] = where_operand(x, dt, hdt)) == NULL || (u[2] = where_operand(y, dt, hdt)) == NULL)
        goto done;
    if ((r = PyObject_Vectorcall(where_fn, u, 3, NULL)) == NULL) {
        if (PyErr_ExceptionMatches(hop_py_ShapeError))
            PyErr_Clear(); /* (the general path's ValueError) */
        goto done;
    }
    if (!HOP_PY_IS_TENSOR(r)) {
        PyErr_SetString(PyExc_SystemError, "_np_eager_where: _C.where gave no tensor");
        goto done;
    }
    hop_dtype d;
    if (hop_py__tensor_dtype(HOP_PY_TENSOR(r), &d) < 0)
        goto done;
    if (hop_py_dtype_object(d) != hdt) {
        Py_SETREF(r, PyObject_CallFunctionObjArgs(cast_fn, r, dt, NULL));
        if (r == NULL)
            goto done;
    }
    res = new_array(r);
    r = NULL;
done:
    Py_XDECREF(kx);
    Py_XDECREF(ky);
    Py_XDECREF(plan);
    Py_XDECREF(u[1]);
    Py_XDECREF(u[2]);
    Py_XDECREF(r);
    return res;
}

/* _np_eager_where(condition, x, y): np.where(condition, x, y) by the shape
 * fast path, or None. */
static PyObject *
np_eager_where(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_where(condition, x, y)");
        return NULL;
    }
    return or_none(fast_where(args[0], args[1], args[2]));
}

/* _np_eager_shape_init(where_planner, where): what fast_where calls. */
static PyObject *
np_eager_shape_init(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_shape_init(where_planner, where, "
                                         "np.reshape, np.concatenate, np.where)");
        return NULL;
    }
    if (where_name == NULL && (where_name = PyUnicode_InternFromString("where")) == NULL)
        return NULL;
    Py_XSETREF(where_planner, Py_NewRef(args[0]));
    Py_XSETREF(where_fn, Py_NewRef(args[1]));
    Py_XSETREF(np_reshape_fn, Py_NewRef(args[2]));
    Py_XSETREF(np_concatenate_fn, Py_NewRef(args[3]));
    Py_XSETREF(np_where_fn, Py_NewRef(args[4]));
    Py_RETURN_NONE;
}

/* _np_eager_getitem(a, key): a[key] by the shape fast path, or None. */
static PyObject *
np_eager_getitem(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_getitem(a, key)");
        return NULL;
    }
    return or_none(fast_getitem(args[0], args[1]));
}

/* a.reshape(shape) for shape a tuple or list of sizes, or one size, by
 * fast_reshape; NULL without an exception when it does not take it. */
static PyObject *
reshape_to(PyObject *a, PyObject *shape)
{
    if (PyTuple_CheckExact(shape))
        return fast_reshape(a, &PyTuple_GET_ITEM(shape, 0), PyTuple_GET_SIZE(shape));
    if (PyList_CheckExact(shape))
        return fast_reshape(a, PySequence_Fast_ITEMS(shape), PyList_GET_SIZE(shape));
    if (PyLong_CheckExact(shape))
        return fast_reshape(a, &shape, 1);
    return NULL;
}

/* NumPy's np.reshape(a, shape), np.concatenate(arrays[, axis]) or
 * np.where(condition, x, y) (func) with the positional arguments fargs, as
 * hop.numpy's __array_function__ sees the call, by the shape fast path; NULL
 * without an exception when it does not take it (another function, another
 * form of call: the general path). */
static PyObject *
shape_function(PyObject *func, PyObject *fargs)
{
    Py_ssize_t n = PyTuple_GET_SIZE(fargs);
    PyObject *const *a = n > 0 ? &PyTuple_GET_ITEM(fargs, 0) : NULL;
    if (func == np_reshape_fn && n == 2)
        return reshape_to(a[0], a[1]);
    if (func == np_where_fn && n == 3)
        return fast_where(a[0], a[1], a[2]);
    if (func == np_concatenate_fn && (n == 1 || n == 2))
        return fast_concatenate(a[0], n == 2 ? a[1] : NULL);
    return NULL;
}

/* _np_eager_reshape(a, shape): a.reshape(shape) (a tuple or list of sizes, or
 * one size) by the shape fast path, or None. */
static PyObject *
np_eager_reshape(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_reshape(a, shape)");
        return NULL;
    }
    return or_none(reshape_to(args[0], args[1]));
}

/* _np_eager_shape_fast(on): whether the shape fast path answers (the tests
 * turn it off to compare the general path); the old setting. */
static PyObject *
np_eager_shape_fast(PyObject *self, PyObject *on)
{
    (void)self;
    int v = PyObject_IsTrue(on);
    if (v < 0)
        return NULL;
    int old = shape_fast;
    shape_fast = v;
    return PyBool_FromLong(old);
}

/* a[key] as the method __getitem__: the fast path, else the Python one */
static PyObject *
eager_getitem_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 2) {
        PyObject *r = fast_getitem(args[0], args[1]);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* a.reshape(4, 4), a.reshape((4, 4)), a.reshape(-1) */
static PyObject *
eager_reshape_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && n >= 2) {
        PyObject *r =
            n == 2 ? reshape_to(args[0], args[1]) : fast_reshape(args[0], args + 1, n - 1);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

static PyObject *
eager_op_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    return obj == NULL || obj == Py_None ? Py_NewRef(self) : PyMethod_New(self, obj);
}

static int
eager_op_traverse(EagerOpObject *op, visitproc visit, void *arg)
{
    Py_VISIT(op->name);
    Py_VISIT(op->fallback);
    return 0;
}

static int
eager_op_clear(EagerOpObject *op)
{
    Py_CLEAR(op->name);
    Py_CLEAR(op->fallback);
    return 0;
}

static void
eager_op_dealloc(EagerOpObject *op)
{
    PyObject_GC_UnTrack(op);
    eager_op_clear(op);
    PyObject_GC_Del(op);
}

/* __name__, __qualname__, __module__, __doc__: the Python operator's (its
 * module is hop's to the code that asks whose a callee is); __wrapped__: it */
static PyObject *
eager_op_getattro(EagerOpObject *op, PyObject *attr)
{
    static const char *const forwarded[] = {"__name__", "__qualname__", "__module__", "__doc__"};
    for (size_t i = 0; PyUnicode_Check(attr) && i < sizeof forwarded / sizeof *forwarded; i++) {
        if (PyUnicode_CompareWithASCIIString(attr, forwarded[i]) == 0)
            return PyObject_GetAttr(op->fallback, attr);
    }
    if (PyUnicode_Check(attr) && PyUnicode_CompareWithASCIIString(attr, "__wrapped__") == 0)
        return Py_NewRef(op->fallback);
    return PyObject_GenericGetAttr((PyObject *)op, attr);
}

static PyObject *
eager_op_repr(EagerOpObject *op)
{
    if (op->vectorcall != (vectorcallfunc)eager_op_call)
        return PyUnicode_FromFormat("<hop.numpy method (%S, eager fast path) of %R>", op->name,
                                    op->fallback);
    return PyUnicode_FromFormat("<hop.numpy operator (ufunc %U, eager fast path) of %R>", op->name,
                                op->fallback);
}

static PyTypeObject EagerOpType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop._C._NpEagerOp",
    .tp_basicsize = sizeof(EagerOpObject),
    .tp_dealloc = (destructor)eager_op_dealloc,
    .tp_vectorcall_offset = offsetof(EagerOpObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_getattro = (getattrofunc)eager_op_getattro,
    .tp_repr = (reprfunc)eager_op_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A method of hop.numpy.ndarray: the eager fast path, else the Python method.",
    .tp_traverse = (traverseproc)eager_op_traverse,
    .tp_clear = (inquiry)eager_op_clear,
    .tp_descr_get = eager_op_get,
};

/* _np_eager_op(name, nargs, reflected, fallback): the operator (above). */
static PyObject *
np_eager_op(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 4 || !PyUnicode_CheckExact(args[0]) || !PyLong_CheckExact(args[1]) ||
        !PyCallable_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "_np_eager_op(name: str, nargs: int, reflected, fallback: callable)");
        return NULL;
    }
    long n = PyLong_AsLong(args[1]);
    int reflected = PyObject_IsTrue(args[2]);
    if (reflected < 0)
        return NULL;
    if ((n != 1 && n != 2) || (reflected && n != 2)) {
        PyErr_SetString(PyExc_ValueError, "_np_eager_op: nargs is 1 or 2 (2 when reflected)");
        return NULL;
    }
    EagerOpObject *op = PyObject_GC_New(EagerOpObject, &EagerOpType);
    if (op == NULL)
        return NULL;
    op->name = Py_NewRef(args[0]);
    op->fallback = Py_NewRef(args[3]);
    op->nargs = (int)n;
    op->reflected = reflected;
    op->vectorcall = (vectorcallfunc)eager_op_call;
    PyObject_GC_Track(op);
    return (PyObject *)op;
}

/* _np_eager_method(role, name, fallback): the method (above) of role
 * "reduce" (name: "reduce:sum", ...), "array_ufunc" or "array_function"
 * (name None). */
static PyObject *
np_eager_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    static const struct {
        const char *role;
        vectorcallfunc call;
    } roles[] = {{"reduce", (vectorcallfunc)eager_reduce_call},
                 {"array_ufunc", (vectorcallfunc)eager_array_ufunc_call},
                 {"array_function", (vectorcallfunc)eager_array_function_call},
                 {"getitem", (vectorcallfunc)eager_getitem_call},
                 {"reshape", (vectorcallfunc)eager_reshape_call}};
    vectorcallfunc call = NULL;
    for (size_t i = 0; nargs == 3 && PyUnicode_Check(args[0]) && i < sizeof roles / sizeof *roles;
         i++) {
        if (PyUnicode_CompareWithASCIIString(args[0], roles[i].role) == 0)
            call = roles[i].call;
    }
    if (call == NULL || !PyCallable_Check(args[2]) ||
        (call == (vectorcallfunc)eager_reduce_call) != PyUnicode_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_method(role: 'reduce' | 'array_ufunc' | "
                                         "'array_function', name: str | None, fallback: callable)");
        return NULL;
    }
    EagerOpObject *op = PyObject_GC_New(EagerOpObject, &EagerOpType);
    if (op == NULL)
        return NULL;
    op->name = Py_NewRef(args[1]);
    if (PyUnicode_CheckExact(op->name))
        PyUnicode_InternInPlace(&op->name);
    op->fallback = Py_NewRef(args[2]);
    op->nargs = 0;
    op->reflected = 0;
    op->vectorcall = call;
    PyObject_GC_Track(op);
    return (PyObject *)op;
}

/*
 * _np_eager_init(ndarray, plans, planner, cast, slots, reduce_planner,
 * reduce_funcs): what _np_eager reads (the module docstring of
 * hop.numpy._eager); slots is ((name, value), ...), a new result's slots but
 * _tv; reduce_funcs {NumPy's function: its reduction's name}.
 */
static PyObject *
np_eager_init(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 7 || !PyType_Check(args[0]) || !PyDict_CheckExact(args[1]) ||
        !PyTuple_CheckExact(args[4]) || PyTuple_GET_SIZE(args[4]) > NP_EAGER_MAX_SLOTS ||
        !PyDict_CheckExact(args[6])) {
        PyErr_SetString(PyExc_TypeError,
                        "_np_eager_init(ndarray, plans: dict, planner, cast, slots: tuple, "
                        "reduce_planner, reduce_funcs: dict)");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)args[0];
    Py_ssize_t tv = slot_offset(type, "_tv"), st = slot_offset(type, "_st"),
               cp = slot_offset(type, "_cp"), sc = slot_offset(type, "_scalar"),
               ro = slot_offset(type, "_ro"), ob = slot_offset(type, "_ob");
    if (tv < 0 || st < 0 || cp < 0 || sc < 0 || ro < 0 || ob < 0)
        return NULL;
    if ((axis_str == NULL && (axis_str = PyUnicode_InternFromString("axis")) == NULL) ||
        (call_str == NULL && (call_str = PyUnicode_InternFromString("__call__")) == NULL) ||
        (ufunc_names == NULL && (ufunc_names = PyDict_New()) == NULL))
        return NULL;
    Py_ssize_t offs[NP_EAGER_MAX_SLOTS];
    Py_ssize_t ns = PyTuple_GET_SIZE(args[4]);
    for (Py_ssize_t i = 0; i < ns; i++) {
        PyObject *s = PyTuple_GET_ITEM(args[4], i);
        if (!PyTuple_CheckExact(s) || PyTuple_GET_SIZE(s) != 2 ||
            !PyUnicode_Check(PyTuple_GET_ITEM(s, 0))) {
            PyErr_SetString(PyExc_TypeError, "_np_eager_init: a slot is (name, value)");
            return NULL;
        }
        if ((offs[i] = slot_offset(type, PyUnicode_AsUTF8(PyTuple_GET_ITEM(s, 0)))) < 0)
            return NULL;
    }
    for (int i = 0; i < 3; i++) {
        if (float_key[i] == NULL &&
            (float_key[i] = PyUnicode_InternFromString((const char[]){"efd"[i], 0})) == NULL)
            return NULL;
    }
    for (int i = 0; i < n_init; i++)
        Py_CLEAR(init_val[i]);
    for (Py_ssize_t i = 0; i < ns; i++) {
        init_off[i] = offs[i];
        init_val[i] = Py_NewRef(PyTuple_GET_ITEM(PyTuple_GET_ITEM(args[4], i), 1));
    }
    n_init = (int)ns;
    off_tv = tv, off_st = st, off_cp = cp, off_scalar = sc, off_ro = ro, off_ob = ob;
    Py_XSETREF(nd_type, (PyTypeObject *)Py_NewRef(type));
    Py_XSETREF(plans, Py_NewRef(args[1]));
    Py_XSETREF(planner, Py_NewRef(args[2]));
    Py_XSETREF(cast_fn, Py_NewRef(args[3]));
    Py_XSETREF(reduce_planner, Py_NewRef(args[5]));
    Py_XSETREF(reduce_funcs, Py_NewRef(args[6]));
    Py_RETURN_NONE;
}

static PyMethodDef np_eager_functions[] = {
    {"_np_eager", (PyCFunction)(void (*)(void))np_eager, METH_FASTCALL,
     "_np_eager(name, operands): NumPy ufunc `name` of hop.numpy operands by the eager fast "
     "path (hop.numpy._eager), or None when the general path must answer."},
    {"_np_eager_concatenate", (PyCFunction)(void (*)(void))np_eager_concatenate, METH_FASTCALL,
     "_np_eager_concatenate(arrays, axis=0): np.concatenate(arrays, axis) by the shape "
     "functions' eager fast path, or None when the general path must answer."},
    {"_np_eager_shape_init", (PyCFunction)(void (*)(void))np_eager_shape_init, METH_FASTCALL,
     "_np_eager_shape_init(where_planner, where, np.reshape, np.concatenate, np.where): what "
     "the shape fast path's where calls, and NumPy's functions whose calls with hop.numpy "
     "arrays it answers in __array_function__."},
    {"_np_eager_where", (PyCFunction)(void (*)(void))np_eager_where, METH_FASTCALL,
     "_np_eager_where(condition, x, y): np.where(condition, x, y) by the shape functions' "
     "eager fast path, or None when the general path must answer."},
    {"_np_eager_getitem", (PyCFunction)(void (*)(void))np_eager_getitem, METH_FASTCALL,
     "_np_eager_getitem(a, key): a[key] of a basic key by the shape functions' eager fast path "
     "(hop.numpy._eager_shape), or None when the general path must answer."},
    {"_np_eager_reshape", (PyCFunction)(void (*)(void))np_eager_reshape, METH_FASTCALL,
     "_np_eager_reshape(a, shape): a.reshape(shape) in C order by the shape functions' eager "
     "fast path, or None when the general path must answer."},
    {"_np_eager_shape_fast", np_eager_shape_fast, METH_O,
     "_np_eager_shape_fast(on): whether the shape functions' eager fast path answers; the old "
     "setting."},
    {"_np_eager_init", (PyCFunction)(void (*)(void))np_eager_init, METH_FASTCALL,
     "_np_eager_init(ndarray, plans, planner, cast, slots, reduce_planner, reduce_funcs): what "
     "_np_eager reads."},
    {"_np_eager_method", (PyCFunction)(void (*)(void))np_eager_method, METH_FASTCALL,
     "_np_eager_method(role, name, fallback): a method of hop.numpy.ndarray (role 'reduce': "
     "a.sum(); 'array_ufunc'; 'array_function') that tries the eager fast path first, then "
     "calls fallback."},
    {"_np_eager_off", np_eager_off, METH_O,
     "_np_eager_off(delta): this thread's count of reasons hop.numpy's eager fast path is off "
     "(a run on _storage's stack, a path recorded) changed by delta; the new count."},
    {"_np_eager_op", (PyCFunction)(void (*)(void))np_eager_op, METH_FASTCALL,
     "_np_eager_op(name, nargs, reflected, fallback): an operator of hop.numpy.ndarray that "
     "tries the eager fast path of ufunc `name` first, then calls fallback."},
    {NULL, NULL, 0, NULL},
};

int
hop_py_np_eager_init(PyObject *module)
{
    if (PyType_Ready(&EagerOpType) < 0)
        return -1;
    return PyModule_AddFunctions(module, np_eager_functions);
}
