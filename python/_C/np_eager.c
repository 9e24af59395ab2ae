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
 * what it takes): reshape, basic indexing and transpose as one view header
 * over the array's storage, concatenate as one copy per block, where with
 * the general path's result dtype kept per pair of the operand keys above;
 * a.reshape(...), a[key], a.transpose(...) and a.T are C descriptors as
 * well.  Arrays that share one memory order other than C (Fortran order, a
 * transpose) are computed on views in that order and the result viewed
 * back (common_order), by the ufuncs, where and concatenate alike.
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
static PyObject *np_reshape_fn, *np_concatenate_fn, *np_where_fn, *np_transpose_fn, *np_dot_fn;
static Py_ssize_t init_off[NP_EAGER_MAX_SLOTS];
static PyObject *init_val[NP_EAGER_MAX_SLOTS]; /* a new result's slots (but _tv) */
static int n_init;
static PyObject *float_key[3];   /* "e", "f", "d": np.min_scalar_type(x).char of a float */
static PyTypeObject *np_integer; /* np.integer: NumPy's integer scalars are index items */
static PyObject *ne_fn;          /* _C.ne: where's condition of another dtype than bool */
/* _storage (its WRITES, the count of eager writes), _storage._NUMBERS (the
 * count's next values) and "WRITES": fast_setitem counts its write */
static PyObject *writes_module, *write_numbers, *writes_name;

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
/* Layouts other than C order (the shape fast path's, below). */
static int common_order(hop_tensor *const *ts, int n, int *perm);
static int arrays_order(PyObject *const *ops, Py_ssize_t n, int *perm);
static PyObject *any_layout_key(PyObject *o);
static PyObject *in_order(PyObject *o, int order, const int *perm);
static PyObject *back_in_order(PyObject *a, const int *perm);

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
    PyObject *k[2] = {NULL, NULL}, *plan = NULL, *res = NULL, *v[2] = {NULL, NULL};
    int order = 0, perm[HOP_MAX_RANK];
    for (Py_ssize_t i = 0; i < n && !order; i++) {
        if ((k[i] = operand_key(ops[i])) == NULL) {
            /* (an array in another layout: one all the arrays share, below) */
            if (PyErr_Occurred() || (order = arrays_order(ops, n, perm)) <= 0)
                goto done;
        }
    }
    if (gates_open() <= 0)
        goto done;
    for (Py_ssize_t i = 0; order && i < n; i++) {
        Py_XSETREF(k[i], any_layout_key(ops[i]));
        if (k[i] == NULL || (v[i] = in_order(ops[i], order, perm)) == NULL)
            goto done;
    }
    ufunc_call c = {ops, n, tuple};
    if ((plan = lookup_plan(name, k[0], k[1], ufunc_miss, &c)) == NULL)
        goto done;
    if (plan != Py_None)
        res = run_plan(plan, order ? v : ops, n);
    if (res != NULL && order && (res = back_in_order(res, perm)) == NULL)
        PyErr_Clear(); /* (the general path's) */
done:
    for (int i = 0; i < 2; i++) {
        Py_XDECREF(k[i]);
        Py_XDECREF(v[i]);
    }
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

/* "power", the unary ufuncs NumPy 1.24's fast_scalar_power calls for a ** 2,
 * ** 0.5, ** -1, ** 1, true_divide (a float reciprocal) and "matmul"
 * (interned: the operators' names) */
static PyObject *power_names[7];
enum { PW_POWER, PW_SQUARE, PW_SQRT, PW_RECIPROCAL, PW_POSITIVE, PW_DIVIDE, PW_MATMUL };
static PyObject *float_one; /* 1.0: a float array's reciprocal is 1.0 / a */

/*
 * a ** e by the fast path for an array a (not a NumPy scalar) and a Python
 * int or float e, as hop.numpy._ndarray._pow (_fast_power) reads NumPy's
 * fast_scalar_power: a float or complex array ** 2, 0.5, -1 or 1 is square,
 * sqrt, reciprocal (1.0 / a for a float one) or positive of a, any other
 * exponent (not 0: ones_like in a's dtype) power; an integer array ** the
 * int 2 is square in its own dtype; an array exponent is power (the plans
 * take a float or complex one).  Anything else (a bool array, another
 * integer power, a float exponent of an integer array) is the general
 * path's.
 */
static PyObject *
fast_power(PyObject *a, PyObject *e)
{
    double v;
    int is_int = PyLong_CheckExact(e);
    if (is_int) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(e, &overflow);
        if (overflow != 0 || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return NULL;
        }
        v = (double)x;
    } else if (PyFloat_CheckExact(e)) {
        v = PyFloat_AS_DOUBLE(e);
    } else if (Py_TYPE(e) == nd_type && power_names[0] != NULL) {
        PyObject *ops[2] = {a, e}; /* (an array exponent: power, planned for floats) */
        return fast(power_names[PW_POWER], ops, 2, NULL);
    } else {
        return NULL;
    }
    TensorObject *x = SLOT(a, off_scalar) == Py_False ? array_tensor(a) : NULL;
    if (x == NULL || x->t == NULL || power_names[0] == NULL)
        return NULL;
    hop_dtype d = x->t->dtype;
    int unary = v == 2.0    ? PW_SQUARE
                : v == 0.5  ? PW_SQRT
                : v == -1.0 ? PW_RECIPROCAL
                : v == 1.0  ? PW_POSITIVE
                            : PW_POWER;
    if (hop_dtype_is_inexact(d)) {
        if (unary == PW_RECIPROCAL && hop_dtype_is_float(d)) {
            /* NumPy's float reciprocal is 1.0 / x, true_divide's bits and
             * dtype (a warning, whose text names reciprocal, is the general
             * path's, as for every ufunc of the fast path) */
            PyObject *ops[2] = {float_one, a};
            return fast(power_names[PW_DIVIDE], ops, 2, NULL);
        }
        if (unary != PW_POWER)
            return fast(power_names[unary], &a, 1, NULL);
        if (v == 0.0)
            return NULL;
        PyObject *ops[2] = {a, e};
        return fast(power_names[PW_POWER], ops, 2, NULL);
    }
    if (hop_dtype_is_int(d) && is_int && unary == PW_SQUARE)
        return fast(power_names[PW_SQUARE], &a, 1, NULL);
    return NULL;
}

/*
 * a @ b by the fast path (hop.numpy._eager.matmul's cases, in C): two
 * concrete hop.numpy arrays (not NumPy scalars, not a run's or a copy's
 * view) of float32 or float64, one dtype, C-contiguous, of one or two dims
 * each whose core sizes match, the gates open: hop's eager matmul (the
 * general path's _C.matmul) as a new array, of two vectors NumPy's scalar
 * (a 0-d array marked so, as the general path's).  NULL without an
 * exception otherwise, and after a floating-point exception NumPy's state
 * warns for (the general path has NumPy compute it and warn).
 */
static PyObject *
fast_matmul(PyObject *a, PyObject *b)
{
    if (Py_TYPE(b) != nd_type || SLOT(a, off_scalar) != Py_False || SLOT(b, off_scalar) != Py_False)
        return NULL;
    TensorObject *x = array_tensor(a), *y = array_tensor(b);
    if (x == NULL || y == NULL || x->t == NULL || y->t == NULL)
        return NULL;
    hop_tensor *ta = x->t, *tb = y->t;
    int na = ta->rank, nb = tb->rank;
    if ((ta->dtype != HOP_F32 && ta->dtype != HOP_F64) || tb->dtype != ta->dtype || na < 1 ||
        na > 2 || nb < 1 || nb > 2 || ta->sizes[na - 1] != tb->sizes[0] ||
        !hop_tensor_is_contiguous(ta) || !hop_tensor_is_contiguous(tb) || gates_open() <= 0)
        return NULL;
    hop_fp_clear();
    hop_rt_arg args[2] = {hop_rt_tensor(ta), hop_rt_tensor(tb)};
    hop_tensor *r = hop_eager_tensor(HOP_OP_matmul, args, 2);
    if (r == NULL) {
        hop_error_clear(); /* (the general path's error) */
        return NULL;
    }
    if (hop_py__np_fp_warned() != 0) {
        hop_tensor_release(r);
        return NULL; /* (NumPy computes it and warns; or the exception reading its state) */
    }
    PyObject *tv = hop_py_tensor_new(r);
    PyObject *res = tv == NULL ? NULL : new_array(tv);
    if (res != NULL && na + nb == 2)
        Py_SETREF(SLOT(res, off_scalar), Py_NewRef(Py_True));
    return res;
}

/* np.dot(a, b) by the fast path: of arrays of one or two dims dot is matmul
 * (fast_matmul), but for an operand of one element (NumPy's BLAS axpy:
 * _mathfuncs.blas_axpy, the general path's). */
static PyObject *
fast_dot(PyObject *a, PyObject *b)
{
    if (Py_TYPE(a) != nd_type || Py_TYPE(b) != nd_type)
        return NULL;
    TensorObject *x = array_tensor(a), *y = array_tensor(b);
    if (x == NULL || y == NULL || x->t == NULL || y->t == NULL || hop_tensor_numel(x->t) == 1 ||
        hop_tensor_numel(y->t) == 1)
        return NULL;
    return fast_matmul(a, b);
}

static PyObject *
eager_op_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && n == op->nargs && Py_TYPE(args[0]) == nd_type) {
        PyObject *r;
        if (op->name == power_names[PW_POWER] && !op->reflected) {
            r = fast_power(args[0], args[1]);
        } else if (op->name == power_names[PW_MATMUL] && !op->reflected) {
            r = fast_matmul(args[0], args[1]);
        } else {
            PyObject *ops[2] = {args[op->reflected], args[n - 1 - op->reflected]};
            r = fast(op->name, ops, n, NULL);
        }
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
        PyObject *r = name == NULL ? NULL
                      : name == power_names[PW_MATMUL] && n == 5 && Py_TYPE(args[3]) == nd_type
                          ? fast_matmul(args[3], args[4])
                          : fast(name, args + 3, n - 3, NULL);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

static PyObject *shape_function(PyObject *func, PyObject *fargs);
static PyObject *fast_transpose(PyObject *a, PyObject *const *axes, Py_ssize_t n);
static PyObject *transpose_to(PyObject *a, PyObject *axes);

/* __array_function__(self, func, types, args, kwargs) of a reduction called
 * as func(a), func(a, axis) or func(a, axis=axis), or of np.reshape,
 * np.concatenate, np.where, np.transpose or np.dot with positional arguments
 * (shape_function) */
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
    if (Py_TYPE(a) != nd_type || !hop_py__np_eager_open())
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

/* The integer element of dtype d at p in *v: 1, or 0 when d is no integer
 * dtype (bool neither) or the value is beyond int64. */
static int
int_element(hop_dtype d, const void *p, int64_t *v)
{
    return d != HOP_BOOL && hop_py__np_int_at(d, p, v) && (d != HOP_U64 || *v >= 0);
}

/* The value of hop.numpy integer scalar k (a NumPy scalar's 0-d array of
 * an integer dtype, as np.argmax gives) in *v: 1, or 0 when k is none or its
 * value is beyond int64. */
static int
scalar_int(PyObject *k, int64_t *v)
{
    if (Py_TYPE(k) != nd_type || SLOT(k, off_scalar) != Py_True)
        return 0;
    TensorObject *x = array_tensor(k);
    if (x == NULL || x->t == NULL || x->t->rank != 0)
        return 0;
    return int_element(x->t->dtype, x->t->data, v);
}

/* Whether k is an index item the fast path reads as an int: an exact int,
 * a NumPy integer scalar (np.int64(3): _indexing._is_int's, not np.bool_)
 * or a hop.numpy integer scalar (scalar_int), its value in *v and inside
 * int64.  (The general path takes each as the int it is.) */
static int
index_item(PyObject *k, int64_t *v)
{
    int ok = 0;
    if (PyLong_CheckExact(k)) {
        *v = index_int(k, &ok);
    } else if (np_integer != NULL && PyObject_TypeCheck(k, np_integer)) {
        PyObject *i = PyNumber_Index(k);
        if (i == NULL) {
            PyErr_Clear();
            return 0;
        }
        *v = index_int(i, &ok);
        Py_DECREF(i);
    } else {
        ok = scalar_int(k, v);
    }
    return ok;
}

/* Whether slice item k's bounds are None or index items of int64 (hop's
 * slice op refuses a larger one: its OverflowError) and its step, if any, is
 * positive (a negative one is hop's copy; 0 the general path's error). */
static int
plain_slice(PyObject *k)
{
    PySliceObject *sl = (PySliceObject *)k;
    PyObject *parts[3] = {sl->start, sl->stop, sl->step};
    for (int i = 0; i < 3; i++) {
        int64_t v;
        if (parts[i] != Py_None && (!index_item(parts[i], &v) || (i == 2 && v <= 0)))
            return 0;
    }
    return 1;
}

/*
 * The view of t that a basic key takes (ints, slices of ints with a positive
 * step, None, one Ellipsis; every int in range, every slice taking
 * elements): _indexing._basic's select/slice/new axis (stride 0) composed
 * into rank, sizes, strides and offset; *plain when the key is ints alone
 * that take every dim (one element: NumPy's scalar).  1, or 0 when the fast
 * path does not take the key.
 */
static int
basic_view(const hop_tensor *t, PyObject *key, int *rank_out, int64_t *sizes, int64_t *strides,
           int64_t *offset_out, int *plain_out)
{
    PyObject *const *keys = &key;
    Py_ssize_t nk = 1;
    if (PyTuple_CheckExact(key)) {
        keys = &PyTuple_GET_ITEM(key, 0);
        nk = PyTuple_GET_SIZE(key);
    }
    int consumed = 0, ints = 0, ellipsis = 0, plain = 1, added = 0;
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *k = keys[i];
        int64_t v;
        if (index_item(k, &v)) {
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
            return 0;
        }
    }
    if (consumed > t->rank || t->rank - ints + added > HOP_MAX_RANK)
        return 0;
    int64_t offset = t->offset;
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
        } else if (Py_IS_TYPE(k, &PySlice_Type)) {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(k, &start, &stop, &step) < 0) {
                PyErr_Clear();
                return 0;
            }
            Py_ssize_t len = PySlice_AdjustIndices((Py_ssize_t)t->sizes[d], &start, &stop, step);
            if (len == 0)
                return 0; /* (an empty slice: hop's slice op says where it starts) */
            sizes[rank] = len;
            strides[rank++] = t->strides[d] * step;
            offset += start * t->strides[d++];
        } else {
            int64_t v = 0, n = t->sizes[d];
            if (!index_item(k, &v) || v < -n || v >= n)
                return 0; /* (the general path's IndexError names the axis) */
            offset += (v < 0 ? v + n : v) * t->strides[d++];
        }
    }
    for (; d < t->rank; d++) {
        sizes[rank] = t->sizes[d];
        strides[rank++] = t->strides[d];
    }
    *rank_out = rank;
    *offset_out = offset;
    *plain_out = plain;
    return 1;
}

/* The index tensor of an array key the fast path takes (np_eager_take.c):
 * one integer or boolean array, alone or in a 1-tuple: a concrete
 * hop.numpy array of one or more dims (not a NumPy scalar), an exact NumPy
 * ndarray, a list of exact ints or bools.  A new reference, or NULL (with
 * an exception only when reading the key failed). */
static hop_tensor *
array_key(PyObject *key)
{
    if (PyTuple_CheckExact(key) && PyTuple_GET_SIZE(key) == 1)
        key = PyTuple_GET_ITEM(key, 0);
    if (Py_TYPE(key) != nd_type)
        return hop_py__np_key_tensor(key);
    TensorObject *x = SLOT(key, off_scalar) == Py_False ? array_tensor(key) : NULL;
    return x != NULL && x->t != NULL && x->t->rank > 0 ? hop_tensor_retain(x->t) : NULL;
}

/* The rows of concrete t that array key picks (array_key's) in *tk: 1, or
 * 0 when the fast path does not take the key, or -1 with an exception. */
static int
array_rows(hop_tensor *t, PyObject *key, hop_py_take *tk)
{
    hop_tensor *k = array_key(key);
    if (k == NULL)
        return PyErr_Occurred() ? -1 : 0;
    int r = hop_py__np_take(t, k, tk);
    hop_tensor_release(k);
    return r;
}

/* a[key] for an array key (array_key's) by the fast path: a new C-ordered
 * array of the rows it picks, as the general path's take. */
static PyObject *
fast_take(hop_tensor *t, PyObject *key)
{
    hop_py_take tk;
    if (array_rows(t, key, &tk) <= 0)
        return NULL;
    hop_tensor *r = hop_py__np_take_rows(t, &tk);
    hop_py__np_take_release(&tk);
    if (r == NULL) {
        hop_error_clear(); /* (out of memory: the general path's error) */
        return NULL;
    }
    PyObject *tv = hop_py_tensor_new(r);
    return tv == NULL ? NULL : new_array(tv);
}

/*
 * a[key] for a basic key (basic_view's) by the fast path: one view, or for
 * ints that take every dim a NumPy scalar, a copy of the element; for an
 * array key, fast_take's copy.
 */
static PyObject *
fast_getitem(PyObject *a, PyObject *key)
{
    hop_tensor *t = shape_tensor(a);
    int64_t sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK], offset;
    int rank, plain;
    if (t == NULL)
        return NULL;
    if (!basic_view(t, key, &rank, sizes, strides, &offset, &plain))
        return fast_take(t, key);
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
 * Python bool, int or float v as an element of dtype d, NumPy's conversion
 * of it where that is a plain C conversion with no warning nor error, in
 * out: 1, or 0 for anything else (the general path: a float into an
 * integer array, an int out of the dtype's range, a float32 overflow
 * NumPy's cast warns for, float16 and complex arrays).
 */
static int
scalar_element(hop_dtype d, PyObject *v, unsigned char *out)
{
    PyTypeObject *ty = Py_TYPE(v);
    long long i = 0;
    double f = 0;
    int is_int = 1;
    if (ty == &PyBool_Type) {
        i = v == Py_True;
    } else if (ty == &PyLong_Type) {
        int overflow;
        i = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow != 0 || (i == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
    } else if (ty == &PyFloat_Type) {
        f = PyFloat_AS_DOUBLE(v);
        is_int = 0;
    } else {
        return 0;
    }
    const long long exact = 1LL << 53; /* (an int a double holds exactly) */
    switch (d) {
#define HOP__INT_ELEMENT(E, T, LO, HI)                                                             \
    case E: {                                                                                      \
        if (!is_int || i < (LO) || i > (HI))                                                       \
            return 0;                                                                              \
        T x = (T)i;                                                                                \
        memcpy(out, &x, sizeof x);                                                                 \
        return 1;                                                                                  \
    }
        HOP__INT_ELEMENT(HOP_I8, int8_t, INT8_MIN, INT8_MAX)
        HOP__INT_ELEMENT(HOP_I16, int16_t, INT16_MIN, INT16_MAX)
        HOP__INT_ELEMENT(HOP_I32, int32_t, INT32_MIN, INT32_MAX)
        HOP__INT_ELEMENT(HOP_I64, int64_t, INT64_MIN, INT64_MAX)
        HOP__INT_ELEMENT(HOP_U8, uint8_t, 0, UINT8_MAX)
        HOP__INT_ELEMENT(HOP_U16, uint16_t, 0, UINT16_MAX)
        HOP__INT_ELEMENT(HOP_U32, uint32_t, 0, UINT32_MAX)
        HOP__INT_ELEMENT(HOP_U64, uint64_t, 0, INT64_MAX)
#undef HOP__INT_ELEMENT
    case HOP_BOOL:
        out[0] = is_int ? i != 0 : f != 0.0; /* (NaN is true) */
        return 1;
    case HOP_F64:
    case HOP_F32: {
        if (is_int && (i > exact || i < -exact))
            return 0;
        double x = is_int ? (double)i : f;
        if (d == HOP_F64) {
            memcpy(out, &x, sizeof x);
            return 1;
        }
        float y = (float)x;
        if (isfinite(x) && !isfinite(y))
            return 0; /* (NumPy's "overflow encountered in cast") */
        memcpy(out, &y, sizeof y);
        return 1;
    }
    default:
        return 0;
    }
}

/*
 * a[key] = value by the fast path for a basic key (basic_view's) or an array
 * key (array_key's) of a writable array the shape fast path takes and a
 * Python bool, int or float value its dtype holds by a plain conversion
 * (scalar_element): the key's elements filled in place, as the general
 * path's NumPy write does, and the
 * write counted (_storage.WRITES: a view hop made as a copy reads its
 * elements again after one; _storage.eager_write).  1 done, 0 not taken
 * (the general path answers: its errors, other values and keys), -1 error.
 */
static int
fast_setitem(PyObject *a, PyObject *key, PyObject *value)
{
    hop_tensor *t = shape_tensor(a);
    int64_t sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK], offset;
    int rank, plain;
    unsigned char elem[16];
    if (t == NULL || writes_module == NULL || SLOT(a, off_ro) != Py_False ||
        !scalar_element(t->dtype, value, elem))
        return 0;
    if (basic_view(t, key, &rank, sizes, strides, &offset, &plain)) {
        size_t isz = hop_dtype_size(t->dtype);
        hop_py__np_fill_view((char *)t->data + (offset - t->offset) * (int64_t)isz, rank, sizes,
                             strides, isz, elem);
    } else {
        /* an array key: every position read and checked before a write */
        hop_py_take tk;
        int r = array_rows(t, key, &tk);
        if (r <= 0)
            return r;
        hop_py__np_fill_rows(t, &tk, elem);
        hop_py__np_take_release(&tk);
    }
    PyObject *n = PyIter_Next(write_numbers);
    if (n == NULL)
        return PyErr_Occurred() ? -1 : 0;
    int r = PyObject_SetAttr(writes_module, writes_name, n);
    Py_DECREF(n);
    return r < 0 ? -1 : 1;
}

/*
 * a.reshape(shape) in C order for the n sizes dims (exact ints, at most one
 * -1) by the fast path: of a non-empty array that is C-contiguous (NumPy's
 * flag: the strides of dims of size 1 aside), the view with NumPy's strides
 * (_storage.numpy_reshape_strides, what the general path's _numpy_strides
 * gives): a's own for the shape given exactly as a's, else the new shape's
 * C strides.  A size that does not fit is the general path's ValueError.
 */
static PyObject *
fast_reshape(PyObject *a, PyObject *const *dims, Py_ssize_t n)
{
    hop_tensor *t = shape_tensor(a);
    if (t == NULL || n > HOP_MAX_RANK || !hop_tensor_is_contiguous(t))
        return NULL;
    int64_t numel = 1, known = 1, sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK];
    for (int d = 0; d < t->rank; d++) {
        if (t->sizes[d] == 0)
            return NULL; /* (an empty array's strides are the general path's) */
        numel *= t->sizes[d];
    }
    int unknown = -1, same = n == t->rank;
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
        same = same && sizes[i] == t->sizes[i];
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
        strides[i] = same ? t->strides[i] : s;
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
 * The memory order the n concrete tensors ts share when it is not C order:
 * 1 and perm (outermost first, hop_memory_order's) when each is dense in
 * that order with every dim of size 2 or more (so that the order is fixed
 * by its strides alone, as NumPy's iterator and concatenate's sort find
 * it); 0 when every one is C-contiguous; -1 for anything else (the general
 * path's: mixed or broadcast layouts, size-1 dims, gaps).
 */
static int
common_order(hop_tensor *const *ts, int n, int *perm)
{
    int c = 1;
    for (int i = 0; i < n && c; i++)
        c = hop_tensor_is_contiguous(ts[i]);
    if (c)
        return 0;
    for (int i = 0; i < n; i++) {
        const hop_tensor *t = ts[i];
        int p[HOP_MAX_RANK];
        if (t->rank != ts[0]->rank || t->rank < 2)
            return -1;
        hop_memory_order(t->rank, t->sizes, t->strides, i == 0 ? perm : p);
        int64_t expect = 1;
        for (int k = t->rank - 1; k >= 0; k--) {
            int d = perm[k];
            if ((i > 0 && p[k] != d) || t->sizes[d] < 2 || t->strides[d] != expect)
                return -1;
            expect *= t->sizes[d];
        }
    }
    return 1;
}

/* The view of concrete t with its dims in the order perm (perm[k] the dim
 * that becomes dim k) when inverse is 0, or back from that order when it is
 * 1; NULL with hop's error cleared on failure. */
static hop_tensor *
permuted(hop_tensor *t, const int *perm, int inverse)
{
    int64_t sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK];
    for (int k = 0; k < t->rank; k++) {
        int from = inverse ? k : perm[k], to = inverse ? perm[k] : k;
        sizes[to] = t->sizes[from];
        strides[to] = t->strides[from];
    }
    hop_tensor *v = hop_tensor_view(t, t->rank, sizes, strides, t->offset);
    if (v == NULL)
        hop_error_clear();
    return v;
}

/*
 * np.concatenate(arrays, axis) (axis an int, or None: the arrays flattened)
 * by the fast path: a list or tuple of arrays the fast path takes
 * (shape_tensor), of one dtype, one or more dims, sizes that join, each
 * C-contiguous (their elements in order in memory, so that each array's
 * part of every outer index is one block) or, when not flattened, each dense
 * in one other memory order (common_order: Fortran order, a transpose),
 * joined in that order as NumPy's concatenate lays out its result
 * (_funcs._join_order) and as the general path does.  The new tensor _C.cat
 * makes (in that order), filled block by block.  Anything else (a
 * promotion, another layout, sizes that do not join) is the general path's.
 */
static PyObject *join(PyObject *const *items, hop_tensor **ts, Py_ssize_t n, PyObject *axis);

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
    if (n == 0 || shape_tensor(items[0]) == NULL)
        return NULL;
    hop_tensor *few[16], **ts = few;
    if (n > 16 && (ts = PyMem_Malloc((size_t)n * sizeof *ts)) == NULL)
        return PyErr_NoMemory();
    PyObject *res = join(items, ts, n, axis);
    if (ts != few)
        PyMem_Free(ts);
    return res;
}

/* fast_concatenate of the n arrays items, ts room for their tensors. */
static PyObject *
join(PyObject *const *items, hop_tensor **ts, Py_ssize_t n, PyObject *axis)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((ts[i] = shape_tensor(items[i])) == NULL)
            return NULL;
    }
    hop_tensor *t0 = ts[0];
    if (t0->rank == 0)
        return NULL;
    int flat = axis == Py_None, rank = flat ? 1 : t0->rank, perm[HOP_MAX_RANK];
    int order = common_order(ts, (int)n, perm);
    if (order < 0 || (order && flat))
        return NULL;
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
        hop_tensor *t = ts[i];
        if (t->dtype != t0->dtype || (!flat && t->rank != rank))
            return NULL;
        for (int d = 0; !flat && d < rank; d++) {
            if (d != ax && t->sizes[d] != sizes[d])
                return NULL;
        }
        sizes[ax] += flat ? hop_tensor_numel(t) : t->sizes[ax];
    }
    /* in memory order: dim k of the blocks below is dim perm[k] */
    int pax = (int)ax;
    int64_t psizes[HOP_MAX_RANK];
    for (int k = 0; k < rank; k++) {
        int d = order ? perm[k] : k;
        psizes[k] = sizes[d];
        if (d == ax)
            pax = k;
    }
    hop_tensor *r = hop_tensor_empty(t0->dtype, rank, psizes);
    if (r == NULL) {
        hop_error_clear();
        return NULL; /* (the general path's error) */
    }
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < rank; k++) {
        if (k < pax)
            outer *= psizes[k];
        else if (k > pax)
            inner *= psizes[k];
    }
    size_t isz = hop_dtype_size(t0->dtype);
    char *dst = r->data;
    for (int64_t o = 0; o < outer; o++) {
        for (Py_ssize_t i = 0; i < n; i++) {
            hop_tensor *t = ts[i];
            size_t blk = (size_t)((flat ? hop_tensor_numel(t) : t->sizes[ax]) * inner) * isz;
            if (blk != 0) { /* (an empty tensor's data may be NULL) */
                memcpy(dst, (const char *)t->data + (size_t)o * blk, blk);
                dst += blk;
            }
        }
    }
    if (order) {
        hop_tensor *v = permuted(r, perm, 1);
        hop_tensor_release(r);
        if ((r = v) == NULL)
            return NULL;
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

/* Operand o of where as a tensor object in memory order perm (order 1;
 * order 0: as it is; a scalar as it is).  New reference. */
static PyObject *
in_order(PyObject *o, int order, const int *perm)
{
    if (!order || Py_TYPE(o) != nd_type)
        return Py_NewRef(Py_TYPE(o) == nd_type ? SLOT(o, off_tv) : o);
    hop_tensor *v = permuted(HOP_PY_TENSOR(SLOT(o, off_tv))->t, perm, 0);
    return v == NULL ? NULL : hop_py_tensor_new(v);
}

/* Where operand o (a tensor object or a scalar, from in_order) as _C.where
 * reads it: an array's tensor cast to dt unless it has hop dtype hdt, a
 * scalar as it is.  Steals o; new reference. */
static PyObject *
where_operand(PyObject *o, PyObject *dt, PyObject *hdt)
{
    if (o == NULL || !HOP_PY_IS_TENSOR(o))
        return o;
    hop_dtype d;
    if (hop_py__tensor_dtype(HOP_PY_TENSOR(o), &d) < 0) {
        Py_DECREF(o);
        return NULL;
    }
    if (hop_py_dtype_object(d) != hdt)
        Py_SETREF(o, PyObject_CallFunctionObjArgs(cast_fn, o, dt, NULL));
    return o;
}

/* The key of operand o: operand_key's, of an array in any layout (the
 * caller decides the layouts: arrays_order, common_order). */
static PyObject *
any_layout_key(PyObject *o)
{
    if (Py_TYPE(o) != nd_type)
        return operand_key(o);
    TensorObject *x = array_tensor(o);
    return x == NULL || hop_py__tensor_rank(x) <= 0 ? NULL : dtype_key(x);
}

/* The memory order the arrays among the n operands ops share when it is
 * not C order (common_order's 1 and perm), the arrays then of one shape
 * (NumPy's iterator computes the ufunc in that order and lays its result
 * out in it, as the general path does: _ufuncs.memory_order); 0 or -1 for
 * anything else. */
static int
arrays_order(PyObject *const *ops, Py_ssize_t n, int *perm)
{
    hop_tensor *ts[2];
    int na = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (Py_TYPE(ops[i]) != nd_type)
            continue;
        TensorObject *a = array_tensor(ops[i]);
        if (a == NULL || a->t == NULL || SLOT(ops[i], off_scalar) != Py_False)
            return -1;
        ts[na++] = a->t;
    }
    int order = na == 0 ? -1 : common_order(ts, na, perm);
    for (int i = 1; order > 0 && i < na; i++) {
        for (int d = 0; d < ts[0]->rank; d++) {
            if (ts[i]->sizes[d] != ts[0]->sizes[d])
                return -1; /* (broadcast in another order: the general path's) */
        }
    }
    return order;
}

/* Array a (stolen), computed in memory order perm, viewed back: its tensor
 * replaced by the view with its dims in their own order.  NULL (a's
 * reference dropped) on failure. */
static PyObject *
back_in_order(PyObject *a, const int *perm)
{
    PyObject *tv = SLOT(a, off_tv);
    hop_tensor *back = HOP_PY_IS_TENSOR(tv) && HOP_PY_TENSOR(tv)->t != NULL
                           ? permuted(HOP_PY_TENSOR(tv)->t, perm, 1)
                           : NULL;
    PyObject *bv = back == NULL ? NULL : hop_py_tensor_new(back);
    if (bv == NULL) {
        Py_DECREF(a);
        return NULL;
    }
    Py_SETREF(SLOT(a, off_tv), bv);
    return a;
}

/*
 * np.where(condition, x, y) by the fast path: a condition array the fast
 * path takes (bool, or any other dtype compared != 0 first, as the general
 * path does), x and y each an operand with a key (as the ufuncs': an array
 * of one or more dims, or a Python bool, int or float; operand_key) and one
 * of them an array, the arrays all C-contiguous (NumPy's K order is then C)
 * or all of one shape and dense in one other memory order (common_order:
 * Fortran order, a transpose), where NumPy's iterator computes and lays out
 * the result in that order (_ufuncs.memory_order): the operands are viewed
 * in it, and the result viewed back.  The result dtype is the general
 * path's decision per pair of keys (_eager_shape._where_plan, kept with the
 * ufuncs' plans under the name "where"); _C.where of the operands cast to
 * it.  Operands that do not broadcast are the general path's ValueError.
 */
static PyObject *
fast_where(PyObject *c, PyObject *x, PyObject *y)
{
    hop_tensor *ts[3] = {shape_tensor(c), NULL, NULL};
    if (ts[0] == NULL || where_fn == NULL || (Py_TYPE(x) != nd_type && Py_TYPE(y) != nd_type))
        return NULL;
    PyObject *xy[2] = {x, y};
    int na = 1, perm[HOP_MAX_RANK];
    for (int i = 0; i < 2; i++) {
        if (Py_TYPE(xy[i]) != nd_type)
            continue;
        TensorObject *a = array_tensor(xy[i]);
        if (a == NULL || a->t == NULL || SLOT(xy[i], off_scalar) != Py_False)
            return NULL;
        ts[na++] = a->t;
    }
    int order = common_order(ts, na, perm);
    for (int i = 1; order > 0 && i < na; i++) {
        for (int d = 0; d < ts[0]->rank; d++) {
            if (ts[i]->sizes[d] != ts[0]->sizes[d])
                return NULL; /* (broadcast in another order: the general path's) */
        }
    }
    if (order < 0)
        return NULL;
    PyObject *kx = any_layout_key(x), *ky = kx == NULL ? NULL : any_layout_key(y);
    PyObject *plan = NULL, *u[3] = {NULL, NULL, NULL}, *r = NULL, *res = NULL;
    if (ky == NULL || (plan = lookup_plan(where_name, kx, ky, where_miss, xy)) == NULL ||
        plan == Py_None)
        goto done;
    if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 2) {
        PyErr_SetString(PyExc_SystemError, "_np_eager_where: a plan is (dt, hop dt)");
        goto done;
    }
    PyObject *dt = PyTuple_GET_ITEM(plan, 0), *hdt = PyTuple_GET_ITEM(plan, 1);
    if ((u[0] = in_order(c, order, perm)) == NULL)
        goto done;
    if (ts[0]->dtype != HOP_BOOL) {
        if (ne_fn == NULL) {
            PyErr_SetString(PyExc_SystemError, "_np_eager_where: no _C.ne");
            goto done;
        }
        PyObject *zero = PyLong_FromLong(0);
        Py_SETREF(u[0],
                  zero == NULL ? NULL : PyObject_CallFunctionObjArgs(ne_fn, u[0], zero, NULL));
        Py_XDECREF(zero);
        if (u[0] == NULL)
            goto done;
    }
    if ((u[1] = where_operand(in_order(x, order, perm), dt, hdt)) == NULL ||
        (u[2] = where_operand(in_order(y, order, perm), dt, hdt)) == NULL)
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
    if (order) {
        hop_tensor *back = HOP_PY_IS_TENSOR(r) && HOP_PY_TENSOR(r)->t != NULL
                               ? permuted(HOP_PY_TENSOR(r)->t, perm, 1)
                               : NULL;
        Py_SETREF(r, back == NULL ? NULL : hop_py_tensor_new(back));
        if (r == NULL)
            goto done; /* (no exception: the general path's) */
    }
    res = new_array(r);
    r = NULL;
done:
    Py_XDECREF(kx);
    Py_XDECREF(ky);
    Py_XDECREF(plan);
    for (int i = 0; i < 3; i++)
        Py_XDECREF(u[i]);
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

/* _np_eager_shape_init(where_planner, where, np.reshape, np.concatenate,
 * np.where, np.transpose, ne, np.integer, _storage, np.dot): what
 * fast_where calls, NumPy's functions __array_function__ sees (np.dot:
 * fast_dot), _C.ne (a condition that is not bool), NumPy's integer
 * scalars' base (index items) and hop.numpy's _storage (its count of eager
 * writes, which fast_setitem advances). */
static PyObject *
np_eager_shape_init(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 10 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1]) ||
        !PyCallable_Check(args[6]) || !PyType_Check(args[7]) || !PyModule_Check(args[8])) {
        PyErr_SetString(PyExc_TypeError,
                        "_np_eager_shape_init(where_planner, where, np.reshape, np.concatenate, "
                        "np.where, np.transpose, ne, np.integer, _storage, np.dot)");
        return NULL;
    }
    PyObject *numbers = PyObject_GetAttrString(args[8], "_NUMBERS");
    if (numbers == NULL)
        return NULL;
    if (!PyIter_Check(numbers)) {
        Py_DECREF(numbers);
        PyErr_SetString(PyExc_TypeError, "_np_eager_shape_init: _storage._NUMBERS is no iterator");
        return NULL;
    }
    if (writes_name == NULL && (writes_name = PyUnicode_InternFromString("WRITES")) == NULL) {
        Py_DECREF(numbers);
        return NULL;
    }
    Py_XSETREF(write_numbers, numbers);
    Py_XSETREF(writes_module, Py_NewRef(args[8]));
    if (where_name == NULL && (where_name = PyUnicode_InternFromString("where")) == NULL)
        return NULL;
    Py_XSETREF(where_planner, Py_NewRef(args[0]));
    Py_XSETREF(where_fn, Py_NewRef(args[1]));
    Py_XSETREF(np_reshape_fn, Py_NewRef(args[2]));
    Py_XSETREF(np_concatenate_fn, Py_NewRef(args[3]));
    Py_XSETREF(np_where_fn, Py_NewRef(args[4]));
    Py_XSETREF(np_transpose_fn, Py_NewRef(args[5]));
    Py_XSETREF(np_dot_fn, Py_NewRef(args[9]));
    Py_XSETREF(ne_fn, Py_NewRef(args[6]));
    Py_XSETREF(np_integer, (PyTypeObject *)Py_NewRef(args[7]));
    Py_RETURN_NONE;
}

/*
 * a.transpose(*axes), a.T by the fast path: the view with a's dims in the
 * order axes (the n exact ints given, a permutation of a's dims, negative
 * ones counted from the end; none: reversed), as the general path's
 * _funcs.transpose (a permute, or a itself viewed for one dim or none).
 * Axes that are no permutation are the general path's errors.
 */
static PyObject *
fast_transpose(PyObject *a, PyObject *const *axes, Py_ssize_t n)
{
    hop_tensor *t = shape_tensor(a);
    if (t == NULL || (n != 0 && n != t->rank))
        return NULL;
    int perm[HOP_MAX_RANK], seen[HOP_MAX_RANK] = {0};
    for (int k = 0; k < t->rank; k++) {
        int64_t v = t->rank - 1 - k;
        if (n != 0) {
            int ok;
            if (!PyLong_CheckExact(axes[k]))
                return NULL;
            v = index_int(axes[k], &ok);
            v += v < 0 ? t->rank : 0;
            if (!ok || v < 0 || v >= t->rank || seen[v]++)
                return NULL;
        }
        perm[k] = (int)v;
    }
    hop_tensor *v = permuted(t, perm, 0);
    return v == NULL ? NULL : view_array(a, v);
}

/* a.transpose(axes) for axes a tuple or list of ints, or one int (of a
 * 1-d array), by fast_transpose; NULL without an exception when it does not
 * take it. */
static PyObject *
transpose_to(PyObject *a, PyObject *axes)
{
    if (PyTuple_CheckExact(axes))
        return fast_transpose(a, &PyTuple_GET_ITEM(axes, 0), PyTuple_GET_SIZE(axes));
    if (PyList_CheckExact(axes))
        return fast_transpose(a, PySequence_Fast_ITEMS(axes), PyList_GET_SIZE(axes));
    return fast_transpose(a, &axes, 1);
}

/* a.T (the property's getter) and a.transpose(), a.transpose(1, 0),
 * a.transpose((1, 0)), a.transpose([1, 0]) */
static PyObject *
eager_transpose_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && n >= 1) {
        PyObject *r =
            n == 2 ? transpose_to(args[0], args[1]) : fast_transpose(args[0], args + 1, n - 1);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/*
 * The element conversions' fast path: a.item(...), float(a) and int(a) of a
 * concrete hop.numpy array or NumPy scalar of a real dtype (not complex:
 * its conversions' errors are the general path's), the gates open: the
 * element read in place, made the Python scalar NumPy's item() gives (a
 * bool, an int, a float; float16 widened) or float()/int() of it.  NULL
 * without an exception: the general path answers (a size other than 1, an
 * index out of range, a NaN or infinity for int(), every error).
 */
enum { AS_ITEM, AS_FLOAT, AS_INT };

static PyObject *
element_value(hop_dtype d, const char *p, int as)
{
    double f;
    switch (d) {
    case HOP_BOOL:
        return as == AS_FLOAT ? PyFloat_FromDouble(*(const bool *)p)
               : as == AS_INT ? PyLong_FromLong(*(const bool *)p)
                              : PyBool_FromLong(*(const bool *)p);
    case HOP_F16:
        f = hop_f16_to_float(*(const uint16_t *)p);
        break;
    case HOP_F32:
        f = *(const float *)p;
        break;
    case HOP_F64:
        memcpy(&f, p, sizeof f);
        break;
    case HOP_U64: {
        uint64_t u;
        memcpy(&u, p, sizeof u);
        return as == AS_FLOAT ? PyFloat_FromDouble((double)u) : PyLong_FromUnsignedLongLong(u);
    }
    default: {
        int64_t v;
        if (!int_element(d, p, &v))
            return NULL;
        return as == AS_FLOAT ? PyFloat_FromDouble((double)v) : PyLong_FromLongLong(v);
    }
    }
    if (as != AS_INT)
        return PyFloat_FromDouble(f);
    return isfinite(f) ? PyLong_FromDouble(f) : NULL;
}

/* The element of t at the index args name as a.item(*args) reads them (none:
 * the only one; one int: a flat index in C order; one int per dim, or a
 * tuple of them), every int exact and in range; NULL otherwise. */
static const char *
element_at(const hop_tensor *t, PyObject *const *args, Py_ssize_t n)
{
    if (n == 1 && PyTuple_CheckExact(args[0])) {
        n = PyTuple_GET_SIZE(args[0]);
        args = &PyTuple_GET_ITEM(args[0], 0);
    }
    int64_t numel = hop_tensor_numel(t);
    size_t isz = hop_dtype_size(t->dtype);
    const char *p = t->data;
    if (n == 0)
        return numel == 1 ? p : NULL;
    if (n == 1 && t->rank != 1) {
        int ok;
        int64_t flat = PyLong_CheckExact(args[0]) ? index_int(args[0], &ok) : (ok = 0);
        if (!ok || flat < -numel || flat >= numel)
            return NULL;
        flat = flat < 0 ? flat + numel : flat;
        for (int d = t->rank - 1; d >= 0; d--) {
            p += (flat % t->sizes[d]) * t->strides[d] * (int64_t)isz;
            flat /= t->sizes[d];
        }
        return p;
    }
    if (n != t->rank)
        return NULL;
    for (int d = 0; d < t->rank; d++) {
        int ok;
        int64_t v = PyLong_CheckExact(args[d]) ? index_int(args[d], &ok) : (ok = 0);
        if (!ok || v < -t->sizes[d] || v >= t->sizes[d])
            return NULL;
        p += (v < 0 ? v + t->sizes[d] : v) * t->strides[d] * (int64_t)isz;
    }
    return p;
}

/* a.item(*args), float(a), int(a) (as) by the fast path, or NULL. */
static PyObject *
fast_element(PyObject *a, PyObject *const *args, Py_ssize_t n, int as)
{
    if (Py_TYPE(a) != nd_type || !hop_py__np_eager_open())
        return NULL;
    TensorObject *x = array_tensor(a);
    if (x == NULL || x->t == NULL || hop_dtype_is_complex(x->t->dtype))
        return NULL;
    const char *p = element_at(x->t, args, n);
    return p == NULL ? NULL : element_value(x->t->dtype, p, as);
}

/* a.item(...) (name "item"), float(a) ("float"), int(a) ("int") */
static PyObject *
eager_element_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    int as = op->nargs; /* (np_eager_method: the conversion's AS_*) */
    if (kwnames == NULL && n >= 1 && (as == AS_ITEM || n == 1)) {
        PyObject *r = fast_element(args[0], args + 1, n - 1, as);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* _np_eager_matmul(a, b): a @ b by the fast path (fast_matmul), or None. */
static PyObject *
np_eager_matmul(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_matmul(a, b)");
        return NULL;
    }
    if (nd_type == NULL || Py_TYPE(args[0]) != nd_type || power_names[PW_MATMUL] == NULL)
        Py_RETURN_NONE;
    return or_none(fast_matmul(args[0], args[1]));
}

/* _np_eager_dot(a, b): np.dot(a, b) by the fast path (fast_dot), or None. */
static PyObject *
np_eager_dot(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_dot(a, b)");
        return NULL;
    }
    if (nd_type == NULL || power_names[PW_MATMUL] == NULL)
        Py_RETURN_NONE;
    return or_none(fast_dot(args[0], args[1]));
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

/* NumPy's np.reshape(a, shape), np.concatenate(arrays[, axis]),
 * np.where(condition, x, y) or np.transpose(a[, axes]) (func) with the
 * positional arguments fargs, as
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
    if (func == np_transpose_fn && (n == 1 || n == 2))
        return n == 1 || a[1] == Py_None ? fast_transpose(a[0], NULL, 0) : transpose_to(a[0], a[1]);
    if (func == np_dot_fn && n == 2)
        return fast_dot(a[0], a[1]);
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

/* _np_eager_transpose(a, axes=None): np.transpose(a, axes) (axes None, or a
 * tuple or list of ints) by the shape fast path, or None. */
static PyObject *
np_eager_transpose(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 1 && nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_transpose(a, axes=None)");
        return NULL;
    }
    return or_none(nargs == 1 || args[1] == Py_None ? fast_transpose(args[0], NULL, 0)
                                                    : transpose_to(args[0], args[1]));
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

/* a[key] = value as the method __setitem__: the fast path, else the Python
 * one */
static PyObject *
eager_setitem_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 3) {
        int r = fast_setitem(args[0], args[1], args[2]);
        if (r != 0)
            return r < 0 ? NULL : Py_NewRef(Py_None);
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

/* len(a), a.shape, a.ndim, a.size (role "attr"; nargs: which, ATTR_*) of a
 * hop.numpy array whose value is its own concrete tensor (not a run's nor
 * a copy's view: array_tensor's; a NumPy scalar too) read off the tensor,
 * as the Python properties read a._t; NULL otherwise (a traced array's
 * sizes, len() of a 0-d one: the Python ones). */
enum { ATTR_LEN, ATTR_SHAPE, ATTR_NDIM, ATTR_SIZE };

static PyObject *
fast_attr(PyObject *a, int which)
{
    if (Py_TYPE(a) != nd_type)
        return NULL;
    TensorObject *x = array_tensor(a);
    const hop_tensor *t = x == NULL ? NULL : x->t;
    if (t == NULL)
        return NULL;
    switch (which) {
    case ATTR_LEN:
        return t->rank == 0 ? NULL : PyLong_FromLongLong(t->sizes[0]);
    case ATTR_NDIM:
        return PyLong_FromLong(t->rank);
    case ATTR_SIZE:
        return PyLong_FromLongLong(hop_tensor_numel(t));
    default: {
        PyObject *shape = PyTuple_New(t->rank);
        for (int d = 0; shape != NULL && d < t->rank; d++) {
            PyObject *n = PyLong_FromLongLong(t->sizes[d]);
            if (n == NULL)
                Py_CLEAR(shape);
            else
                PyTuple_SET_ITEM(shape, d, n);
        }
        return shape;
    }
    }
}

static PyObject *
eager_attr_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 1) {
        PyObject *r = fast_attr(args[0], op->nargs);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* a.copy() by the fast path: of a concrete C-contiguous array the shape
 * fast path takes (shape_tensor: not a NumPy scalar, a run's or a copy's
 * view), a new C-ordered array of its bytes, as the general path's clone
 * (NumPy's order='C'); NULL otherwise. */
static PyObject *
fast_copy(PyObject *a)
{
    hop_tensor *t = shape_tensor(a);
    if (t == NULL || !hop_tensor_is_contiguous(t))
        return NULL;
    hop_tensor *r = hop_tensor_empty(t->dtype, t->rank, t->sizes);
    if (r == NULL) {
        hop_error_clear(); /* (out of memory: the general path's error) */
        return NULL;
    }
    memcpy(r->data, t->data, (size_t)hop_tensor_numel(t) * hop_dtype_size(t->dtype));
    PyObject *tv = hop_py_tensor_new(r);
    return tv == NULL ? NULL : new_array(tv);
}

/* a.copy() (role "copy"): fast_copy, else the Python method */
static PyObject *
eager_copy_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 1) {
        PyObject *r = fast_copy(args[0]);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* hop.numpy.zeros(...), ones(...), empty(...) (role "create"; nargs: the
 * kind): hop_py__np_create, else the Python function */
static PyObject *
eager_create_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyObject *r = hop_py__np_create(op->nargs, args, PyVectorcall_NARGS(nargsf), kwnames);
    if (r != Py_None)
        return r;
    Py_DECREF(r);
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* a.dot(b) (role "dot"): fast_dot, else the Python method */
static PyObject *
eager_dot_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 2 && Py_TYPE(args[0]) == nd_type &&
        power_names[PW_MATMUL] != NULL) {
        PyObject *r = fast_dot(args[0], args[1]);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* A NumPy scalar has no dot method (_attrs._array_only's error): -1 with
 * NumPy's AttributeError for a hop.numpy scalar obj, else 0. */
static int
scalar_has_no_dot(PyObject *obj)
{
    if (nd_type == NULL || !PyObject_TypeCheck(obj, nd_type) || SLOT(obj, off_scalar) != Py_True)
        return 0;
    PyObject *dt = PyObject_GetAttrString(obj, "dtype");
    PyObject *tp = dt == NULL ? NULL : PyObject_GetAttrString(dt, "type");
    PyObject *name = tp == NULL ? NULL : PyObject_GetAttrString(tp, "__name__");
    if (name != NULL)
        PyErr_Format(PyExc_AttributeError, "'numpy.%U' object has no attribute 'dot'", name);
    Py_XDECREF(dt);
    Py_XDECREF(tp);
    Py_XDECREF(name);
    return -1;
}

static PyObject *
eager_op_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    if (((EagerOpObject *)self)->vectorcall == (vectorcallfunc)eager_dot_call &&
        scalar_has_no_dot(obj) < 0)
        return NULL;
    return PyMethod_New(self, obj);
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
    if (op->vectorcall == (vectorcallfunc)eager_create_call)
        return PyUnicode_FromFormat("<hop.numpy function (%S, eager fast path) of %R>", op->name,
                                    op->fallback);
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
    static const char *const pw[] = {"power",    "square",      "sqrt",  "reciprocal",
                                     "positive", "true_divide", "matmul"};
    for (int i = 0; i < 7; i++) {
        if (power_names[i] == NULL && (power_names[i] = PyUnicode_InternFromString(pw[i])) == NULL)
            return NULL;
    }
    if (float_one == NULL && (float_one = PyFloat_FromDouble(1.0)) == NULL)
        return NULL;
    EagerOpObject *op = PyObject_GC_New(EagerOpObject, &EagerOpType);
    if (op == NULL)
        return NULL;
    op->name = Py_NewRef(args[0]);
    PyUnicode_InternInPlace(&op->name); /* (a ** b: power_names[0] itself) */
    op->fallback = Py_NewRef(args[3]);
    op->nargs = (int)n;
    op->reflected = reflected;
    op->vectorcall = (vectorcallfunc)eager_op_call;
    PyObject_GC_Track(op);
    return (PyObject *)op;
}

/* _np_eager_method(role, name, fallback): the method (above) of role
 * "reduce" (name: "reduce:sum", ...), "element" (name: "item", "float",
 * "int"), "create" (name: "zeros", "ones", "empty": hop.numpy's functions),
 * "attr" (name: "len", "shape", "ndim", "size": len(a) and the properties' getters),
 * or "array_ufunc", "array_function", "getitem", "setitem", "reshape",
 * "transpose", "dot", "copy" (name None). */
static PyObject *
np_eager_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    /* A role's names, in the order of what nargs keeps (ATTR_*, AS_*,
     * HOP_PY_CREATE_*); ANY_NAME: any str (a reduction's); none: None. */
    static const char *const any_name[] = {NULL};
    static const char *const attr_names[] = {"len", "shape", "ndim", "size", NULL};
    static const char *const element_names[] = {"item", "float", "int", NULL};
    static const char *const create_names[] = {"zeros", "ones", "empty", NULL};
    static const struct {
        const char *role;
        vectorcallfunc call;
        const char *const *names;
    } roles[] = {{"reduce", (vectorcallfunc)eager_reduce_call, any_name},
                 {"array_ufunc", (vectorcallfunc)eager_array_ufunc_call, NULL},
                 {"array_function", (vectorcallfunc)eager_array_function_call, NULL},
                 {"getitem", (vectorcallfunc)eager_getitem_call, NULL},
                 {"reshape", (vectorcallfunc)eager_reshape_call, NULL},
                 {"transpose", (vectorcallfunc)eager_transpose_call, NULL},
                 {"setitem", (vectorcallfunc)eager_setitem_call, NULL},
                 {"element", (vectorcallfunc)eager_element_call, element_names},
                 {"dot", (vectorcallfunc)eager_dot_call, NULL},
                 {"create", (vectorcallfunc)eager_create_call, create_names},
                 {"copy", (vectorcallfunc)eager_copy_call, NULL},
                 {"attr", (vectorcallfunc)eager_attr_call, attr_names}};
    size_t r = sizeof roles / sizeof *roles;
    for (size_t i = 0; nargs == 3 && PyUnicode_Check(args[0]) && i < sizeof roles / sizeof *roles;
         i++) {
        if (PyUnicode_CompareWithASCIIString(args[0], roles[i].role) == 0)
            r = i;
    }
    if (r == sizeof roles / sizeof *roles || !PyCallable_Check(args[2]) ||
        (roles[r].names != NULL) != PyUnicode_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_method(role: 'reduce' | 'array_ufunc' | "
                                         "'array_function' | 'getitem' | 'setitem' | 'reshape' | "
                                         "'transpose' | 'element' | 'dot' | 'create' | "
                                         "'copy' | 'attr', "
                                         "name: str | None, fallback: callable)");
        return NULL;
    }
    vectorcallfunc call = roles[r].call;
    int as = 0; /* which of the role's names (an element's conversion, ...), kept in nargs */
    if (roles[r].names != NULL && roles[r].names != any_name) {
        for (as = 0; roles[r].names[as] != NULL; as++)
            if (PyUnicode_CompareWithASCIIString(args[1], roles[r].names[as]) == 0)
                break;
        if (roles[r].names[as] == NULL) {
            PyErr_Format(PyExc_ValueError, "_np_eager_method: role '%s' takes no name %R",
                         roles[r].role, args[1]);
            return NULL;
        }
    }
    EagerOpObject *op = PyObject_GC_New(EagerOpObject, &EagerOpType);
    if (op == NULL)
        return NULL;
    op->name = Py_NewRef(args[1]);
    if (PyUnicode_CheckExact(op->name))
        PyUnicode_InternInPlace(&op->name);
    op->fallback = Py_NewRef(args[2]);
    op->nargs = as;
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
     "_np_eager_shape_init(where_planner, where, np.reshape, np.concatenate, np.where, "
     "np.transpose, ne, np.integer, _storage, np.dot): what the shape fast path's where calls, "
     "and NumPy's functions whose calls with hop.numpy arrays it answers in "
     "__array_function__."},
    {"_np_eager_where", (PyCFunction)(void (*)(void))np_eager_where, METH_FASTCALL,
     "_np_eager_where(condition, x, y): np.where(condition, x, y) by the shape functions' "
     "eager fast path, or None when the general path must answer."},
    {"_np_eager_getitem", (PyCFunction)(void (*)(void))np_eager_getitem, METH_FASTCALL,
     "_np_eager_getitem(a, key): a[key] of a basic key by the shape functions' eager fast path "
     "(hop.numpy._eager_shape), or None when the general path must answer."},
    {"_np_eager_reshape", (PyCFunction)(void (*)(void))np_eager_reshape, METH_FASTCALL,
     "_np_eager_reshape(a, shape): a.reshape(shape) in C order by the shape functions' eager "
     "fast path, or None when the general path must answer."},
    {"_np_eager_transpose", (PyCFunction)(void (*)(void))np_eager_transpose, METH_FASTCALL,
     "_np_eager_transpose(a, axes=None): np.transpose(a, axes) by the shape functions' eager fast "
     "path, or None when the general path must answer."},
    {"_np_eager_shape_fast", np_eager_shape_fast, METH_O,
     "_np_eager_shape_fast(on): whether the shape functions' eager fast path answers; the old "
     "setting."},
    {"_np_eager_init", (PyCFunction)(void (*)(void))np_eager_init, METH_FASTCALL,
     "_np_eager_init(ndarray, plans, planner, cast, slots, reduce_planner, reduce_funcs): what "
     "_np_eager reads."},
    {"_np_eager_dot", (PyCFunction)(void (*)(void))np_eager_dot, METH_FASTCALL,
     "_np_eager_dot(a, b): np.dot(a, b) of two plain float32 or float64 hop.numpy arrays of one "
     "or two dims (not one element) by the eager fast path, or None."},
    {"_np_eager_matmul", (PyCFunction)(void (*)(void))np_eager_matmul, METH_FASTCALL,
     "_np_eager_matmul(a, b): a @ b of two plain float32 or float64 hop.numpy arrays of one or "
     "two dims by the eager fast path, or None."},
    {"_np_eager_method", (PyCFunction)(void (*)(void))np_eager_method, METH_FASTCALL,
     "_np_eager_method(role, name, fallback): a method of hop.numpy.ndarray (role 'reduce': "
     "a.sum(); 'element': a.item(), float(a), int(a); 'array_ufunc'; 'array_function'; "
     "'getitem'; 'setitem'; 'reshape'; 'transpose'; 'dot'; 'copy'; 'create': "
     "hnp.zeros/ones/empty; 'attr': len(a), a.shape, a.ndim, a.size) that tries the eager fast "
     "path first, then calls fallback."},
    {"_np_eager_off", np_eager_off, METH_O,
     "_np_eager_off(delta): this thread's count of reasons hop.numpy's eager fast path is off "
     "(a run on _storage's stack, a path recorded) changed by delta; the new count."},
    {"_np_eager_op", (PyCFunction)(void (*)(void))np_eager_op, METH_FASTCALL,
     "_np_eager_op(name, nargs, reflected, fallback): an operator of hop.numpy.ndarray that "
     "tries the eager fast path of ufunc `name` first, then calls fallback."},
    {NULL, NULL, 0, NULL},
};

PyObject *
hop_py__np_new_array(hop_tensor *t)
{
    if (nd_type == NULL) {
        hop_tensor_release(t);
        Py_RETURN_NONE;
    }
    PyObject *tv = hop_py_tensor_new(t);
    return tv == NULL ? NULL : new_array(tv);
}

int
hop_py__np_eager_open(void)
{
    return nd_type != NULL && shape_fast && np_off == 0 && !hop_py_tracing_active();
}

int
hop_py_np_eager_init(PyObject *module)
{
    if (PyType_Ready(&EagerOpType) < 0)
        return -1;
    return PyModule_AddFunctions(module, np_eager_functions);
}
