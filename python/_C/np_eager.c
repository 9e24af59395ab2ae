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
 * This file also owns the arrays' state the fast paths share (the type,
 * its slots' offsets, the cast, the plans' dict and cache: tensor_impl.h)
 * and the method descriptors of every role (np_eager_method), the matrix
 * products (fast_matmul, fast_dot), `**`, a.copy() and len/shape/ndim/size.
 * The shape functions' fast path (views, indexing, element reads, reshape,
 * transpose, concatenate, where, other memory orders) is np_eager_shape.c's;
 * one index array np_eager_take.c's; zeros/ones/empty np_eager_create.c's.
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

PyTypeObject *hop_py__np_type;   /* hop.numpy.ndarray (exactly: not NumpyArg) */
static PyObject *plans;          /* dict: (name, key[, key]) -> plan or None */
static PyObject *planner;        /* _eager._plan(name, operands) -> plan or None */
static PyObject *reduce_planner; /* _eager._reduce_plan(name, array, axis) -> plan or None */
static PyObject *reduce_funcs;   /* dict: NumPy's function (np.sum) -> its reduction's name */
static PyObject *array_funcs;    /* dict: NumPy's function -> hop.numpy's (_funcs.FUNCS) */
static PyObject *kind_kwnames;   /* ("_kind",) */
static PyObject *ufunc_names;    /* dict: ufunc -> its __name__, interned */
PyObject *hop_py__np_cast;       /* _core.cast(tensor, numpy dtype) */
/* This thread's count of reasons the fast path is off besides a trace: a
 * run of hop.numpy's on its stack (_storage.begin_run / end_run), hop.compile
 * recording a path (_paths): _np_eager_off(+1 / -1) where they begin and end,
 * so that no thread-local of Python's is read per op (two reads cost ~800
 * instructions, a fifth of NumPy's whole `a + b` on 16 elements). */
static _Thread_local long np_off;
/* the slots of hop.numpy.ndarray (tensor_impl.h) */
Py_ssize_t hop_py__np_off_tv, hop_py__np_off_st, hop_py__np_off_cp, hop_py__np_off_scalar,
    hop_py__np_off_ro, hop_py__np_off_ob;
static int shape_fast = 1; /* _np_eager_shape_fast: 0 sends every shape call to the general path */
static Py_ssize_t init_off[NP_EAGER_MAX_SLOTS];
static PyObject *init_val[NP_EAGER_MAX_SLOTS]; /* a new result's slots (but _tv) */
static int n_init;
static PyObject *float_key[3]; /* "e", "f", "d": np.min_scalar_type(x).char of a float */
static PyObject *complex_key[2]; /* "F", "D": np.min_scalar_type(z).char of a complex */

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
    if (t == hop_py__np_type) {
        TensorObject *x = hop_py__np_array_tensor(o);
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
    if (t == &PyComplex_Type) {
        /* NumPy 1.24's min_scalar_type of a Python complex: complex64 when
         * both parts are inside (-3.4e38, 3.4e38) (inf and NaN are not),
         * else complex128 */
        Py_complex z = ((PyComplexObject *)o)->cval;
        bool narrow = z.real > -3.4e38 && z.real < 3.4e38 && z.imag > -3.4e38 && z.imag < 3.4e38;
        return Py_NewRef(complex_key[narrow ? 0 : 1]);
    }
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
PyObject *
hop_py__np_wrap(PyObject *t)
{
    if (!HOP_PY_IS_TENSOR(t)) { /* (__init__'s TypeError) */
        PyObject *a = PyObject_CallOneArg((PyObject *)hop_py__np_type, t);
        Py_DECREF(t);
        return a;
    }
    PyObject *a = hop_py__np_type->tp_alloc(hop_py__np_type, 0);
    if (a == NULL) {
        Py_DECREF(t);
        return NULL;
    }
    HOP_PY_SLOT(a, hop_py__np_off_tv) = t;
    for (int i = 0; i < n_init; i++)
        HOP_PY_SLOT(a, init_off[i]) = Py_NewRef(init_val[i]);
    return a;
}

/* A Python number (int, float, bool, complex: operand_key took it) as the
 * 0-d complex tensor of dtype dt (HOP_C64, HOP_C128) the general path makes
 * of it (_core.complex_scalar: the parts converted to the parts' dtype).
 * New reference. */
static PyObject *
complex_scalar(PyObject *o, hop_dtype dt)
{
    Py_complex z = PyComplex_AsCComplex(o);
    if (z.real == -1.0 && PyErr_Occurred())
        return NULL;
    hop_tensor *t;
    if (dt == HOP_C64) {
        float parts[2] = {(float)z.real, (float)z.imag};
        t = hop_tensor_from_data(dt, 0, NULL, parts);
    } else {
        double parts[2] = {z.real, z.imag};
        t = hop_tensor_from_data(dt, 0, NULL, parts);
    }
    return t != NULL ? hop_py_tensor_new(t) : hop_py_raise();
}

/*
 * The hop dtype of NumPy dtype npd as a cast's target, from a small cache
 * keyed by identity (plans hold their dtypes for good: few distinct
 * objects); 0, or -1 without an exception where it has none.
 */
static int
cast_target(PyObject *npd, hop_dtype *out)
{
    enum { N = 16 };
    static PyObject *keys[N];
    static hop_dtype vals[N];
    static int used;
    for (int i = 0; i < used; i++)
        if (keys[i] == npd) {
            *out = vals[i];
            return 0;
        }
    if (used == N || hop_py_dtype_from_object(npd, out) < 0) {
        PyErr_Clear();
        return -1;
    }
    keys[used] = Py_NewRef(npd);
    vals[used++] = *out;
    return 0;
}

/* Tensor t cast to NumPy dtype npd as _core.cast casts it: t itself in that
 * dtype, else hop's conversion in C where _core.cast is that conversion
 * (every pair but a float or complex to an integer, which it computes as
 * NumPy's x86-64 loops do), else _core.cast.  New reference. */
static PyObject *
cast_tensor(PyObject *t, PyObject *npd)
{
    hop_dtype src, dst;
    if (HOP_PY_IS_TENSOR(t) && cast_target(npd, &dst) == 0 &&
        hop_py__tensor_dtype(HOP_PY_TENSOR(t), &src) == 0) {
        if (src == dst)
            return Py_NewRef(t);
        if (!(hop_dtype_is_int(dst) && (hop_dtype_is_float(src) || hop_dtype_is_complex(src))))
            return hop_py__to(t, dst);
    }
    PyErr_Clear();
    return PyObject_CallFunctionObjArgs(hop_py__np_cast, t, npd, NULL);
}

/* Operand o as the plan's impl reads it: an array's tensor, a scalar as it
 * is; cast first to cast (a NumPy dtype) unless it is None; a scalar whose
 * cast is a hop dtype (a complex one: _eager._plan) made a 0-d tensor of
 * it.  New reference. */
static PyObject *
plan_operand(PyObject *o, PyObject *cast)
{
    PyObject *v = Py_TYPE(o) == hop_py__np_type ? HOP_PY_SLOT(o, hop_py__np_off_tv) : o;
    if (cast == Py_None)
        return Py_NewRef(v);
    if (v == o && PyObject_TypeCheck(cast, &hop_py_DTypeType)) {
        hop_dtype dt;
        if (hop_py_dtype_from_object(cast, &dt) < 0)
            return NULL;
        return complex_scalar(o, dt);
    }
    if (v != o)
        return cast_tensor(v, cast);
    return PyObject_CallFunctionObjArgs(hop_py__np_cast, v, cast, NULL);
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
 * dtype) on the n operands ops (a third one, clip's, uncast): the result, or NULL without an
 * exception when the general path must answer (a floating-point warning), or NULL with one. */
static PyObject *
run_plan(PyObject *plan, PyObject *const *ops, Py_ssize_t n)
{
    if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 5) {
        PyErr_SetString(PyExc_SystemError, "_np_eager: a plan is (impl, cast, cast, dt, hop dt)");
        return NULL;
    }
    PyObject *u[3] = {NULL, NULL, NULL};
    PyObject *r = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        /* (a third operand, clip's, is passed as it is: fast_clip) */
        if ((u[i] = plan_operand(ops[i], i < 2 ? PyTuple_GET_ITEM(plan, 1 + i) : Py_None)) == NULL)
            goto done;
    }
    r = call_kernel(plan, u, (size_t)n);
done:
    for (int i = 0; i < 3; i++)
        Py_XDECREF(u[i]);
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
        PyObject *c = cast_tensor(r, out_dt);
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
    return hop_py__np_wrap(r);
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

/* The plan of `name` (a ufunc's, or a reduction's "reduce:sum") for keys k0
 * and k1 (NULL for one operand): the dict's, or miss's on a miss (then kept
 * in the dict).  New reference, or NULL with an exception. */
PyObject *
hop_py__np_lookup_plan(PyObject *name, PyObject *k0, PyObject *k1, hop_py_plan_miss miss, void *ctx)
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
 * miss of the plans.  ufunc: a call of the ufunc (np.sqrt(s), hnp.add(s, 1)),
 * not an operator: with every operand 0-d or a Python scalar NumPy runs the
 * ufunc's loop, as for arrays, where an operator of NumPy scalars is its
 * scalar math (scalar_ok: operators only).
 */
/* The Python float, int or bool of o when o is a concrete 0-d hop.numpy
 * array (a NumPy scalar's or not: a.sum(), a.mean(), a[3]) of float64,
 * int64 or bool, else NULL without an exception.  NumPy 1.24 casts such an
 * operand of an array by its value exactly as it casts the Python scalar
 * (a Python float is a float64 0-d array to it), so `a * a.sum()` and
 * `a - a.mean()` take the plans of `a * 2.0`; other dtypes are cast by
 * their own dtype where the kinds differ (int8 + np.float32(1) is float32,
 * int8 + 1.0 float64) and stay the general path's. */
static PyObject *
zero_d_value(PyObject *o)
{
    if (Py_TYPE(o) != hop_py__np_type)
        return NULL;
    TensorObject *x = hop_py__np_array_tensor(o);
    if (x == NULL || x->t == NULL || x->t->rank != 0)
        return NULL;
    switch (x->t->dtype) {
    case HOP_F64:
        return PyFloat_FromDouble(*(const double *)x->t->data);
    case HOP_I64:
        return PyLong_FromLongLong(*(const int64_t *)x->t->data);
    case HOP_BOOL:
        return PyBool_FromLong(*(const bool *)x->t->data);
    default:
        return NULL;
    }
}

/* The key of a 0-d operand when every operand is 0-d or a Python scalar:
 * its dtype in a 1-tuple, one object per dtype (the plans seen last compare
 * keys by identity), never an array's key: NumPy 1.24 promotes such
 * operands by their dtypes, not by value (np.float32(2) + 1.0 is float64,
 * f32[4] + 1.0 float32). */
static PyObject *zd_keys[HOP_DTYPE_COUNT];

static PyObject *
zero_d_key(TensorObject *x)
{
    hop_dtype d;
    if (hop_py__tensor_dtype(x, &d) < 0)
        return NULL;
    if (zd_keys[d] == NULL) {
        PyObject *dt = hop_py_dtype_object(d);
        if (dt == NULL || (zd_keys[d] = PyTuple_Pack(1, dt)) == NULL)
            return NULL;
    }
    return Py_NewRef(zd_keys[d]);
}

/* Whether ufunc `name` of operands that are all 0-d or Python scalars, by
 * plan, is taken: its result float64 or bool and the ufunc one of IEEE's
 * correctly rounded operations or a comparison.  An operator of NumPy
 * scalars is NumPy's scalar math, which the general path runs
 * (_ndarray._reported_scalar_math): it warns on an integer overflow
 * (np.int8(100) + np.int8(100)) and rounds float16 and libm functions its
 * own way, where these ops give the ufunc's bits (a floating-point flag
 * hands the call to the general path, finish). */
static int
scalar_ok(PyObject *name, PyObject *plan)
{
    static const char *const names[] = {"add",   "subtract",   "multiply", "true_divide",
                                        "less",  "less_equal", "greater",  "greater_equal",
                                        "equal", "not_equal"};
    static PyObject *interned[sizeof names / sizeof *names];
    if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 5)
        return 0;
    PyObject *out = PyTuple_GET_ITEM(plan, 4);
    if (out != hop_py_dtype_object(HOP_F64) && out != hop_py_dtype_object(HOP_BOOL))
        return 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (interned[i] == NULL && (interned[i] = PyUnicode_InternFromString(names[i])) == NULL) {
            PyErr_Clear();
            return 0;
        }
        if (name == interned[i])
            return 1;
    }
    return 0;
}

static PyObject *fast(PyObject *name, PyObject *const *ops, Py_ssize_t n, PyObject *tuple,
                      int ufunc);

/* Where the 0-d hop.numpy operands among ops stand (asked when an operand
 * has no key): none (or an operand the fast path does not read), beside an
 * array of one or more dims, or among 0-d operands and Python scalars
 * only. */
enum { ZD_NONE, ZD_BESIDE_ARRAY, ZD_SCALARS };

static int
zero_d_operands(PyObject *const *ops, Py_ssize_t n)
{
    int arrays = 0, zeros = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (Py_TYPE(ops[i]) != hop_py__np_type)
            continue;
        TensorObject *x = hop_py__np_array_tensor(ops[i]);
        int rank = x == NULL ? -1 : hop_py__tensor_rank(x);
        if (rank < 0)
            return ZD_NONE;
        arrays += rank > 0;
        zeros += rank == 0;
    }
    return zeros == 0 ? ZD_NONE : arrays > 0 ? ZD_BESIDE_ARRAY : ZD_SCALARS;
}

/* ufunc `name` of ops, an array and a 0-d operand, by the fast path with
 * the 0-d operand as its Python scalar (zero_d_value), or NULL. */
static PyObject *
with_zero_d_values(PyObject *name, PyObject *const *ops, Py_ssize_t n)
{
    PyObject *z[2] = {NULL, NULL}, *use[2] = {ops[0], ops[n - 1]};
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((z[i] = zero_d_value(ops[i])) != NULL)
            use[i] = z[i];
        else if (PyErr_Occurred())
            PyErr_Clear(); /* (out of memory: the general path's) */
    }
    PyObject *r = z[0] != NULL || z[1] != NULL ? fast(name, use, n, NULL, 0) : NULL;
    Py_XDECREF(z[0]);
    Py_XDECREF(z[1]);
    return r;
}

static PyObject *
fast(PyObject *name, PyObject *const *ops, Py_ssize_t n, PyObject *tuple, int ufunc)
{
    if (hop_py__np_type == NULL ||
        (Py_TYPE(ops[0]) != hop_py__np_type && (n == 1 || Py_TYPE(ops[1]) != hop_py__np_type)))
        return NULL;
    PyObject *k[2] = {NULL, NULL}, *plan = NULL, *res = NULL, *v[2] = {NULL, NULL};
    int order = 0, scalars = 0, perm[HOP_MAX_RANK];
    for (Py_ssize_t i = 0; i < n && !order && !scalars; i++) {
        if ((k[i] = operand_key(ops[i])) == NULL) {
            if (PyErr_Occurred())
                goto done;
            /* a 0-d operand (zero_d_operands), else an array in another
             * layout: one all the arrays share, below */
            int z = zero_d_operands(ops, n);
            if (z == ZD_BESIDE_ARRAY) {
                Py_CLEAR(k[0]);
                return with_zero_d_values(name, ops, n);
            }
            scalars = z == ZD_SCALARS;
            if (!scalars && (order = hop_py__np_arrays_order(ops, n, perm)) <= 0)
                goto done;
        }
    }
    /* every operand 0-d or a Python scalar: keyed by the 0-d ones' dtypes */
    for (Py_ssize_t i = 0; scalars && i < n; i++) {
        Py_XSETREF(k[i], Py_TYPE(ops[i]) == hop_py__np_type
                             ? zero_d_key(hop_py__np_array_tensor(ops[i]))
                             : operand_key(ops[i]));
        if (k[i] == NULL)
            goto done;
    }
    if (gates_open() <= 0)
        goto done;
    for (Py_ssize_t i = 0; order && i < n; i++) {
        Py_XSETREF(k[i], hop_py__np_any_layout_key(ops[i]));
        if (k[i] == NULL || (v[i] = hop_py__np_in_order(ops[i], order, perm)) == NULL)
            goto done;
    }
    ufunc_call c = {ops, n, tuple};
    if ((plan = hop_py__np_lookup_plan(name, k[0], k[1], ufunc_miss, &c)) == NULL)
        goto done;
    if (plan != Py_None && (!scalars || ufunc || scalar_ok(name, plan)))
        res = run_plan(plan, order ? v : ops, n);
    if (res != NULL && order && (res = hop_py__np_back_in_order(res, perm)) == NULL)
        PyErr_Clear(); /* (the general path's) */
    if (res != NULL && scalars)
        Py_SETREF(HOP_PY_SLOT(res, hop_py__np_off_scalar), Py_NewRef(Py_True));
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
    if (r != NULL && HOP_PY_IS_TENSOR(HOP_PY_SLOT(r, hop_py__np_off_tv)) &&
        hop_py__tensor_rank(HOP_PY_TENSOR(HOP_PY_SLOT(r, hop_py__np_off_tv))) == 0)
        Py_SETREF(HOP_PY_SLOT(r, hop_py__np_off_scalar), Py_NewRef(Py_True));
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
    if (hop_py__np_type == NULL || Py_TYPE(a) != hop_py__np_type)
        return NULL;
    TensorObject *x = hop_py__np_array_tensor(a);
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
    if ((plan = hop_py__np_lookup_plan(name, k0, k1, reduce_miss, &c)) == NULL)
        goto done;
    if (plan != Py_None)
        res = run_reduce(plan, (PyObject *)x);
done:
    Py_XDECREF(k0);
    Py_XDECREF(k1);
    Py_XDECREF(plan);
    return res;
}

/*
 * np.clip(a, lo, hi) by the fast path: ufunc "clip"'s plan for a's key and
 * the pair of lo's and hi's keys (a Python scalar's or a C-ordered array's,
 * operand_key), run on the three operands; the planner (_eager._plan) takes
 * only plans that pass hi as it is.  NULL without an exception where the
 * general path must answer (another operand, a gate closed, a flag NumPy
 * warns for).
 */
static PyObject *
fast_clip(PyObject *const *ops)
{
    static PyObject *clip_name;
    if (hop_py__np_type == NULL || Py_TYPE(ops[0]) != hop_py__np_type)
        return NULL;
    if (clip_name == NULL && (clip_name = PyUnicode_InternFromString("clip")) == NULL)
        return NULL;
    PyObject *k[3] = {NULL, NULL, NULL}, *pair = NULL, *tuple = NULL, *plan = NULL, *res = NULL;
    for (int i = 0; i < 3; i++) {
        /* (a NaN bound is no bound to NumPy's _clip, with a warning: the
         * caller's, _funcs.clip) */
        if (PyFloat_CheckExact(ops[i]) && isnan(PyFloat_AS_DOUBLE(ops[i])))
            goto done;
        if ((k[i] = operand_key(ops[i])) == NULL)
            goto done;
    }
    if (gates_open() <= 0 || (pair = PyTuple_Pack(2, k[1], k[2])) == NULL ||
        (tuple = PyTuple_Pack(3, ops[0], ops[1], ops[2])) == NULL)
        goto done;
    ufunc_call c = {ops, 3, tuple};
    if ((plan = hop_py__np_lookup_plan(clip_name, k[0], pair, ufunc_miss, &c)) == NULL)
        goto done;
    if (plan != Py_None)
        res = run_plan(plan, ops, 3);
done:
    for (int i = 0; i < 3; i++)
        Py_XDECREF(k[i]);
    Py_XDECREF(pair);
    Py_XDECREF(tuple);
    Py_XDECREF(plan);
    return res;
}

/* _np_eager_clip(a, lo, hi): np.clip(a, lo, hi) by the fast path
 * (fast_clip), or None. */
static PyObject *
np_eager_clip(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_clip(a, lo, hi)");
        return NULL;
    }
    return hop_py__np_or_none(fast_clip(args));
}

/* r, a fast path's answer, or None for NULL without an exception (the
 * caller's general path answers). */
PyObject *
hop_py__np_or_none(PyObject *r)
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
    PyObject *r =
        n == 1 || n == 2 ? fast(name, &PyTuple_GET_ITEM(args[1], 0), n, args[1], 1) : NULL;
    Py_DECREF(name);
    return hop_py__np_or_none(r);
}

/*
 * A method of hop.numpy.ndarray that tries the fast path before its Python
 * method (the general path), by its role:
 * - an operator (`a + b`, `b * a`, `a < b`, `-a`): ufunc `name`;
 * - a reduction (`a.sum()`, `a.max(0)`, `a.mean(axis=1)`): "reduce:<name>";
 * - __array_ufunc__ (`np.sin(a)`): the ufunc NumPy names, called plainly;
 * - __array_function__ (`np.sum(a)`, `np.mean(a, 0)`): the reductions of
 *   _eager._REDUCE_FUNCS.
 * A method descriptor (EagerOpObject, tensor_impl.h), so that Python's
 * operator slots and NumPy's overrides call it unbound, with no frame of
 * Python's before the fast path.  The shape roles' calls are
 * np_eager_shape.c's.
 */
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
    } else if (Py_TYPE(e) == hop_py__np_type && power_names[0] != NULL) {
        /* an array exponent: power, planned for floats; but a 0-d one is
         * the general path's, which reads its value as NumPy's
         * fast_scalar_power does (bool[1] ** np.array(2.0) is square: int8),
         * where fast's 0-d operand is np.power's */
        TensorObject *ex = hop_py__np_array_tensor(e);
        if (ex == NULL || hop_py__tensor_rank(ex) <= 0)
            return NULL;
        PyObject *ops[2] = {a, e};
        return fast(power_names[PW_POWER], ops, 2, NULL, 0);
    } else {
        return NULL;
    }
    TensorObject *x =
        HOP_PY_SLOT(a, hop_py__np_off_scalar) == Py_False ? hop_py__np_array_tensor(a) : NULL;
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
            return fast(power_names[PW_DIVIDE], ops, 2, NULL, 0);
        }
        if (unary != PW_POWER)
            return fast(power_names[unary], &a, 1, NULL, 0);
        if (v == 0.0)
            return NULL;
        PyObject *ops[2] = {a, e};
        return fast(power_names[PW_POWER], ops, 2, NULL, 0);
    }
    if (hop_dtype_is_int(d) && is_int && unary == PW_SQUARE)
        return fast(power_names[PW_SQUARE], &a, 1, NULL, 0);
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
    if (Py_TYPE(b) != hop_py__np_type || HOP_PY_SLOT(a, hop_py__np_off_scalar) != Py_False ||
        HOP_PY_SLOT(b, hop_py__np_off_scalar) != Py_False)
        return NULL;
    TensorObject *x = hop_py__np_array_tensor(a), *y = hop_py__np_array_tensor(b);
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
    PyObject *res = tv == NULL ? NULL : hop_py__np_wrap(tv);
    if (res != NULL && na + nb == 2)
        Py_SETREF(HOP_PY_SLOT(res, hop_py__np_off_scalar), Py_NewRef(Py_True));
    return res;
}

/* np.dot(a, b) by the fast path: of arrays of one or two dims dot is matmul
 * (fast_matmul), but for an operand of one element (NumPy's BLAS axpy:
 * _mathfuncs.blas_axpy, the general path's). */
PyObject *
hop_py__np_dot(PyObject *a, PyObject *b)
{
    if (Py_TYPE(a) != hop_py__np_type || Py_TYPE(b) != hop_py__np_type)
        return NULL;
    TensorObject *x = hop_py__np_array_tensor(a), *y = hop_py__np_array_tensor(b);
    if (x == NULL || y == NULL || x->t == NULL || y->t == NULL || hop_tensor_numel(x->t) == 1 ||
        hop_tensor_numel(y->t) == 1)
        return NULL;
    return fast_matmul(a, b);
}

static PyObject *
eager_op_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && n == op->nargs && Py_TYPE(args[0]) == hop_py__np_type) {
        PyObject *r;
        if (op->name == power_names[PW_POWER] && !op->reflected) {
            r = fast_power(args[0], args[1]);
        } else if (op->name == power_names[PW_MATMUL] && !op->reflected) {
            r = fast_matmul(args[0], args[1]);
        } else {
            PyObject *ops[2] = {args[op->reflected], args[n - 1 - op->reflected]};
            r = fast(op->name, ops, n, NULL, 0);
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
    if (hop_py__np_type != NULL && (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) &&
        (n == 4 || n == 5) && is_str(args[2], call_str)) {
        PyObject *name = ufunc_name(args[1]); /* (NULL, no exception: not a str) */
        PyObject *r =
            name == NULL ? NULL
            : name == power_names[PW_MATMUL] && n == 5 && Py_TYPE(args[3]) == hop_py__np_type
                ? fast_matmul(args[3], args[4])
                : fast(name, args + 3, n - 3, NULL, 1);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* hop.numpy's function of NumPy's func called with positional args that
 * are all exact hop.numpy arrays or strings (np.einsum("i,i", a, b)):
 * impl(*args, _kind=ndarray), what _funcs.array_function calls for them,
 * without its frames (~1 us).  Returns 1 when it called impl (*result its
 * result, NULL with an exception if it raised; None is a result: np.copyto),
 * 0 where that does not apply (another argument, no hop.numpy function, more
 * than 8 arguments), -1 on an error of the lookup. */
static int
call_array_function(PyObject *func, PyObject *args, PyObject **result)
{
    PyObject *stack[9];
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (array_funcs == NULL || n > 8)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = PyTuple_GET_ITEM(args, i);
        if (Py_TYPE(a) != hop_py__np_type && !PyUnicode_CheckExact(a))
            return 0;
        stack[i] = a;
    }
    PyObject *impl = PyDict_GetItemWithError(array_funcs, func);
    if (impl == NULL)
        return PyErr_Occurred() ? -1 : 0;
    stack[n] = (PyObject *)hop_py__np_type;
    *result = PyObject_Vectorcall(impl, stack, (size_t)n, kind_kwnames);
    return 1;
}

/* __array_function__(self, func, types, args, kwargs) of a reduction called
 * as func(a), func(a, axis) or func(a, axis=axis), of np.reshape,
 * np.concatenate, np.where, np.transpose or np.dot with positional arguments
 * (hop_py__np_shape_function), or of np.zeros_like(a), np.ones_like(a) or
 * np.empty_like(a) (hop_py__np_like_function); else, for positional
 * arguments all hop.numpy arrays or strings, hop.numpy's function itself
 * (call_array_function) */
static PyObject *
eager_array_function_call(EagerOpObject *op, PyObject *const *args, size_t nargsf,
                          PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (hop_py__np_type != NULL && kwnames == NULL && n == 5 && PyTuple_CheckExact(args[3]) &&
        PyDict_CheckExact(args[4])) {
        if (PyDict_GET_SIZE(args[4]) == 0) {
            PyObject *r = hop_py__np_shape_function(args[1], args[3]);
            if (r == NULL && !PyErr_Occurred())
                r = hop_py__np_like_function(args[1], args[3]);
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
        int called = nkw == 0 ? call_array_function(args[1], args[3], &r) : 0;
        if (called != 0)
            return called > 0 ? r : NULL;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* The key of operand o: operand_key's, of an array in any layout (the
 * caller decides the layouts: hop_py__np_arrays_order, common_order). */
PyObject *
hop_py__np_any_layout_key(PyObject *o)
{
    if (Py_TYPE(o) != hop_py__np_type)
        return operand_key(o);
    TensorObject *x = hop_py__np_array_tensor(o);
    return x == NULL || hop_py__tensor_rank(x) <= 0 ? NULL : dtype_key(x);
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
    if (hop_py__np_type == NULL || Py_TYPE(args[0]) != hop_py__np_type ||
        power_names[PW_MATMUL] == NULL)
        Py_RETURN_NONE;
    return hop_py__np_or_none(fast_matmul(args[0], args[1]));
}

/* _np_eager_dot(a, b): np.dot(a, b) by the fast path (hop_py__np_dot), or None. */
static PyObject *
np_eager_dot(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_dot(a, b)");
        return NULL;
    }
    if (hop_py__np_type == NULL || power_names[PW_MATMUL] == NULL)
        Py_RETURN_NONE;
    return hop_py__np_or_none(hop_py__np_dot(args[0], args[1]));
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

/* len(a), a.shape, a.ndim, a.size, a.dtype (role "attr"; nargs: which, ATTR_*) of a
 * hop.numpy array whose value is its own concrete tensor (not a run's nor
 * a copy's view: hop_py__np_array_tensor's; a NumPy scalar too) read off the tensor,
 * as the Python properties read a._t; NULL otherwise (a traced array's
 * sizes, len() of a 0-d one: the Python ones). */
enum { ATTR_LEN, ATTR_SHAPE, ATTR_NDIM, ATTR_SIZE, ATTR_DTYPE };

/* Whether the Python code that reads an attribute from C (no frame of its
 * own between) is stopped at a LOAD_ATTR or LOAD_METHOD: a read `a.dtype`,
 * not a call such as np.dtype(a) (hop.numpy._callee decides those, in the
 * property's Python getter).  CPython 3.11's opcodes; elsewhere false, so
 * the Python getter answers every read. */
static int
caller_reads_attr(void)
{
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    if (f == NULL)
        return 0;
    PyCodeObject *co = PyFrame_GetCode(f);
    int lasti = PyFrame_GetLasti(f);
    PyObject *code = PyCode_GetCode(co);
    Py_DECREF(co);
    if (code == NULL) {
        PyErr_Clear();
        return 0;
    }
    int op = lasti >= 0 && lasti < PyBytes_GET_SIZE(code)
                 ? (unsigned char)PyBytes_AS_STRING(code)[lasti]
                 : -1;
    Py_DECREF(code);
    return op == 106 /* LOAD_ATTR */ || op == 160 /* LOAD_METHOD */;
#else
    return 0;
#endif
}

/* NumPy's dtype of hop dtype d (the hop dtype object's .dtype), kept. */
static PyObject *np_dtypes[HOP_DTYPE_COUNT];

static PyObject *
np_dtype_of(hop_dtype d)
{
    if ((int)d < 0 || (int)d >= HOP_DTYPE_COUNT)
        return NULL;
    if (np_dtypes[d] == NULL) {
        PyObject *o = hop_py_dtype_object(d);
        np_dtypes[d] = o != NULL ? PyObject_GetAttrString(o, "dtype") : NULL;
        if (np_dtypes[d] == NULL)
            return NULL;
    }
    return Py_NewRef(np_dtypes[d]);
}

static PyObject *
fast_attr(PyObject *a, int which)
{
    if (Py_TYPE(a) != hop_py__np_type)
        return NULL;
    TensorObject *x = hop_py__np_array_tensor(a);
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
    case ATTR_DTYPE:
        return caller_reads_attr() ? np_dtype_of(t->dtype) : NULL;
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

/* fallback(refs, self, *args, **kwargs) with refs the count of references
 * to self (NULL: none given, refs 0). */
static PyObject *
refs_fallback(PyObject *fallback, PyObject *self, PyObject *const *args, Py_ssize_t n,
              PyObject *kwnames)
{
    Py_ssize_t total = n + (kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *small[8], **all = total < 7 ? small : PyMem_New(PyObject *, total + 2);
    if (all == NULL)
        return PyErr_NoMemory();
    PyObject *r = NULL;
    Py_ssize_t lead = self != NULL ? 2 : 1; /* refs, and self where given */
    all[0] = PyLong_FromSsize_t(self != NULL ? Py_REFCNT(self) : 0);
    if (all[0] != NULL) {
        all[1] = self; /* (overwritten by the arguments where NULL) */
        if (total > 0)
            memcpy(all + lead, args, (size_t)total * sizeof *args);
        r = PyObject_Vectorcall(fallback, all, (size_t)(n + lead), kwnames);
        Py_DECREF(all[0]);
    }
    if (all != small)
        PyMem_Free(all);
    return r;
}

/* ndarray.resize (role "refs"): fallback(refs, self, ...), refs the count of
 * references to self as NumPy's refcheck reads it in its C method (2 for a
 * name's x.resize(n): the name's and the call's), which a Python method
 * cannot read. */
static PyObject *
eager_refs_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    return refs_fallback(op->fallback, n > 0 ? args[0] : NULL, args + (n > 0), n - (n > 0),
                         kwnames);
}

/* x.resize as a value (r = x.resize): a builtin method whose self is (the
 * method, x), not a bound method, which the interpreter's call unpacks with
 * a reference of its own to x (NumPy's is a builtin method too: r(n) of a
 * name's array is 2 references). */
static PyObject *
refs_bound_call(PyObject *pair, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    EagerOpObject *op = (EagerOpObject *)PyTuple_GET_ITEM(pair, 0);
    return refs_fallback(op->fallback, PyTuple_GET_ITEM(pair, 1), args, nargs, kwnames);
}

static PyMethodDef refs_bound_def = {"resize", (PyCFunction)(void (*)(void))refs_bound_call,
                                     METH_FASTCALL | METH_KEYWORDS, NULL};

/* a.copy() by the fast path (flat: a.flatten()): of a concrete array the
 * shape fast path takes (hop_py__np_shape_tensor: not a NumPy scalar, a run's
 * or a copy's view), in any layout, a new C-ordered array of its elements in
 * C order (flat: of one dimension), as the general path's clone (NumPy's
 * order='C'); NULL otherwise. */
PyObject *
hop_py__np_copy(PyObject *a, int flat)
{
    hop_tensor *t = hop_py__np_shape_tensor(a);
    if (t == NULL)
        return NULL;
    int64_t numel = hop_tensor_numel(t);
    hop_tensor *r = flat ? hop_tensor_empty(t->dtype, 1, &numel)
                         : hop_tensor_empty(t->dtype, t->rank, t->sizes);
    if (r == NULL) {
        hop_error_clear(); /* (out of memory: the general path's error) */
        return NULL;
    }
    size_t isz = hop_dtype_size(t->dtype);
    if (hop_tensor_is_contiguous(t)) {
        memcpy(r->data, t->data, (size_t)numel * isz);
    } else {
        int64_t c_strides[HOP_MAX_RANK], step = 1;
        for (int d = t->rank - 1; d >= 0; d--) {
            c_strides[d] = step;
            step *= t->sizes[d];
        }
        hop_py__np_copy_view(r->data, t->rank, t->sizes, c_strides, t->data, t->strides, isz);
    }
    PyObject *tv = hop_py_tensor_new(r);
    return tv == NULL ? NULL : hop_py__np_wrap(tv);
}

/* a.copy() (role "copy", name "copy") and a.flatten() (name "flatten": nargs
 * 1): hop_py__np_copy, else the Python method */
static PyObject *
eager_copy_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 1) {
        PyObject *r = hop_py__np_copy(args[0], op->nargs);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* a.astype(dtype) (role "astype"): hop_py__np_astype, else the Python
 * method (keywords, a NumPy scalar, another layout or conversion) */
static PyObject *
eager_astype_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 2) {
        PyObject *r = hop_py__np_astype(args[0], args[1]);
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

/* a.dot(b) (role "dot"): hop_py__np_dot, else the Python method */
static PyObject *
eager_dot_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 2 && Py_TYPE(args[0]) == hop_py__np_type &&
        power_names[PW_MATMUL] != NULL) {
        PyObject *r = hop_py__np_dot(args[0], args[1]);
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
    if (hop_py__np_type == NULL || !PyObject_TypeCheck(obj, hop_py__np_type) ||
        HOP_PY_SLOT(obj, hop_py__np_off_scalar) != Py_True)
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
    if (((EagerOpObject *)self)->vectorcall == (vectorcallfunc)eager_refs_call) {
        PyObject *pair = PyTuple_Pack(2, self, obj);
        PyObject *r = pair != NULL ? PyCFunction_New(&refs_bound_def, pair) : NULL;
        Py_XDECREF(pair);
        return r;
    }
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
 * "int"), "create" (name: "zeros", "ones", "empty", "asarray", "zeros_like",
 * "ones_like", "empty_like", "copy", "arange", "full": hop.numpy's functions),
 * "attr" (name: "len", "shape", "ndim", "size", "dtype": len(a) and the properties' getters;
 * a.dtype's only where the caller reads the attribute),
 * "copy" (name "copy" or "flatten"), or "array_ufunc", "array_function",
 * "getitem", "setitem", "fill", "reshape", "ravel", "transpose", "dot",
 * "astype", "refs" (name None). */
static PyObject *
np_eager_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    /* A role's names, in the order of what nargs keeps (ATTR_*, AS_*,
     * HOP_PY_CREATE_*); ANY_NAME: any str (a reduction's); none: None. */
    static const char *const any_name[] = {NULL};
    static const char *const attr_names[] = {"len", "shape", "ndim", "size", "dtype", NULL};
    static const char *const element_names[] = {"item", "float", "int", NULL};
    static const char *const copy_names[] = {"copy", "flatten", NULL};
    static const char *const create_names[] = {"zeros",      "ones",      "empty",      "asarray",
                                               "zeros_like", "ones_like", "empty_like", "copy",
                                               "arange",     "full",      NULL};
    static const struct {
        const char *role;
        vectorcallfunc call;
        const char *const *names;
    } roles[] = {{"reduce", (vectorcallfunc)eager_reduce_call, any_name},
                 {"array_ufunc", (vectorcallfunc)eager_array_ufunc_call, NULL},
                 {"array_function", (vectorcallfunc)eager_array_function_call, NULL},
                 {"getitem", (vectorcallfunc)hop_py__np_getitem_call, NULL},
                 {"reshape", (vectorcallfunc)hop_py__np_reshape_call, NULL},
                 {"ravel", (vectorcallfunc)hop_py__np_ravel_call, NULL},
                 {"transpose", (vectorcallfunc)hop_py__np_transpose_call, NULL},
                 {"setitem", (vectorcallfunc)hop_py__np_setitem_call, NULL},
                 {"fill", (vectorcallfunc)hop_py__np_fill_call, NULL},
                 {"element", (vectorcallfunc)hop_py__np_item_call, element_names},
                 {"dot", (vectorcallfunc)eager_dot_call, NULL},
                 {"create", (vectorcallfunc)eager_create_call, create_names},
                 {"copy", (vectorcallfunc)eager_copy_call, copy_names},
                 {"astype", (vectorcallfunc)eager_astype_call, NULL},
                 {"refs", (vectorcallfunc)eager_refs_call, NULL},
                 {"attr", (vectorcallfunc)eager_attr_call, attr_names}};
    size_t r = sizeof roles / sizeof *roles;
    for (size_t i = 0; nargs == 3 && PyUnicode_Check(args[0]) && i < sizeof roles / sizeof *roles;
         i++) {
        if (PyUnicode_CompareWithASCIIString(args[0], roles[i].role) == 0)
            r = i;
    }
    if (r == sizeof roles / sizeof *roles || !PyCallable_Check(args[2]) ||
        (roles[r].names != NULL) != PyUnicode_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "_np_eager_method(role: 'reduce' | 'array_ufunc' | "
                        "'array_function' | 'getitem' | 'setitem' | 'fill' | 'reshape' | 'ravel' | "
                        "'transpose' | 'element' | 'dot' | 'create' | "
                        "'copy' | 'astype' | 'refs' | 'attr', "
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
    for (int i = 0; i < 2; i++) {
        if (complex_key[i] == NULL &&
            (complex_key[i] = PyUnicode_InternFromString((const char[]){"FD"[i], 0})) == NULL)
            return NULL;
    }
    for (int i = 0; i < n_init; i++)
        Py_CLEAR(init_val[i]);
    for (Py_ssize_t i = 0; i < ns; i++) {
        init_off[i] = offs[i];
        init_val[i] = Py_NewRef(PyTuple_GET_ITEM(PyTuple_GET_ITEM(args[4], i), 1));
    }
    n_init = (int)ns;
    hop_py__np_off_tv = tv, hop_py__np_off_st = st, hop_py__np_off_cp = cp,
    hop_py__np_off_scalar = sc, hop_py__np_off_ro = ro, hop_py__np_off_ob = ob;
    Py_XSETREF(hop_py__np_type, (PyTypeObject *)Py_NewRef(type));
    Py_XSETREF(plans, Py_NewRef(args[1]));
    Py_XSETREF(planner, Py_NewRef(args[2]));
    Py_XSETREF(hop_py__np_cast, Py_NewRef(args[3]));
    Py_XSETREF(reduce_planner, Py_NewRef(args[5]));
    Py_XSETREF(reduce_funcs, Py_NewRef(args[6]));
    Py_RETURN_NONE;
}

/* The hash of a hop.numpy array (tp_hash of the types _np_hash_init was
 * given): NumPy's TypeError for an array; for one of NumPy's scalars, its
 * hash as NumPy's (its value's: s in {6.0}), by the class's _scalar_hash. */
static Py_ssize_t hash_off_scalar = -1;
static PyObject *scalar_hash_str;

static Py_hash_t
np_hash(PyObject *self)
{
    if (hash_off_scalar < 0 || HOP_PY_SLOT(self, hash_off_scalar) != Py_True) {
        PyErr_SetString(PyExc_TypeError, "unhashable type: 'numpy.ndarray'");
        return -1;
    }
    PyObject *r = PyObject_CallMethodNoArgs(self, scalar_hash_str);
    if (r == NULL)
        return -1;
    Py_hash_t h = PyLong_AsSsize_t(r);
    Py_DECREF(r);
    return h == -1 && !PyErr_Occurred() ? -2 : h;
}

/*
 * _np_hash_init(ndarray, *subclasses): hop.numpy's arrays hash as NumPy's
 * arrays and scalars do, though they are one class.  The class dicts say
 * __hash__ = None, as np.ndarray's does, so that collections.abc.Hashable
 * (which reads the dict along the MRO) is False of an array; a scalar is
 * Hashable through its __class__, NumPy's scalar type to the user's code
 * (user_class.c).  Assigning __hash__ = None made each tp_hash CPython's
 * "unhashable"; this sets np_hash in its place.  Called once the classes
 * are complete (a later assignment of __hash__ would reset tp_hash).
 */
static PyObject *
np_hash_init(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *h = PyType_Check(args[i]) ? PyObject_GetAttrString(args[i], "__hash__") : NULL;
        Py_XDECREF(h); /* (only compared) */
        if (h != Py_None || !PyType_IsSubtype((PyTypeObject *)args[i], (PyTypeObject *)args[0])) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "_np_hash_init(ndarray, *subclasses): classes "
                                             "whose __hash__ is None");
            return NULL;
        }
    }
    if (nargs == 0 || (scalar_hash_str == NULL &&
                       (scalar_hash_str = PyUnicode_InternFromString("_scalar_hash")) == NULL))
        return nargs == 0 ? PyErr_Format(PyExc_TypeError, "_np_hash_init(ndarray, ...)") : NULL;
    Py_ssize_t off = slot_offset((PyTypeObject *)args[0], "_scalar");
    if (off < 0)
        return NULL;
    hash_off_scalar = off;
    for (Py_ssize_t i = 0; i < nargs; i++)
        ((PyTypeObject *)args[i])->tp_hash = np_hash;
    Py_RETURN_NONE;
}

/* _np_eager_functions(funcs): hop.numpy's functions by NumPy's
 * ({np.einsum: _products.einsum, ...}, _funcs.FUNCS, read when called) for
 * call_array_function. */
static PyObject *
np_eager_functions_set(PyObject *self, PyObject *funcs)
{
    (void)self;
    if (!PyDict_CheckExact(funcs)) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_functions(funcs: dict)");
        return NULL;
    }
    if (kind_kwnames == NULL && (kind_kwnames = Py_BuildValue("(s)", "_kind")) == NULL)
        return NULL;
    Py_XSETREF(array_funcs, Py_NewRef(funcs));
    Py_RETURN_NONE;
}

static PyMethodDef np_eager_functions[] = {
    {"_np_eager_functions", np_eager_functions_set, METH_O,
     "_np_eager_functions(funcs): hop.numpy's functions by NumPy's (_funcs.FUNCS), which "
     "ndarray.__array_function__ calls directly for arguments that are all hop.numpy arrays "
     "or strings."},
    {"_np_eager", (PyCFunction)(void (*)(void))np_eager, METH_FASTCALL,
     "_np_eager(name, operands): NumPy ufunc `name` of hop.numpy operands by the eager fast "
     "path (hop.numpy._eager), or None when the general path must answer."},
    {"_np_eager_shape_fast", np_eager_shape_fast, METH_O,
     "_np_eager_shape_fast(on): whether the shape functions' eager fast path answers; the old "
     "setting."},
    {"_np_hash_init", (PyCFunction)(void (*)(void))np_hash_init, METH_FASTCALL,
     "_np_hash_init(ndarray, *subclasses): hash() of hop.numpy arrays as NumPy's (an array "
     "unhashable, a scalar its value's hash), with __hash__ None in the class dicts."},
    {"_np_eager_init", (PyCFunction)(void (*)(void))np_eager_init, METH_FASTCALL,
     "_np_eager_init(ndarray, plans, planner, cast, slots, reduce_planner, reduce_funcs): what "
     "_np_eager reads."},
    {"_np_eager_clip", (PyCFunction)(void (*)(void))np_eager_clip, METH_FASTCALL,
     "_np_eager_clip(a, lo, hi): np.clip(a, lo, hi) of a hop.numpy array and bounds the eager "
     "ufuncs' keys take (Python scalars, C-ordered arrays) by the eager fast path, or None."},
    {"_np_eager_dot", (PyCFunction)(void (*)(void))np_eager_dot, METH_FASTCALL,
     "_np_eager_dot(a, b): np.dot(a, b) of two plain float32 or float64 hop.numpy arrays of one "
     "or two dims (not one element) by the eager fast path, or None."},
    {"_np_eager_matmul", (PyCFunction)(void (*)(void))np_eager_matmul, METH_FASTCALL,
     "_np_eager_matmul(a, b): a @ b of two plain float32 or float64 hop.numpy arrays of one or "
     "two dims by the eager fast path, or None."},
    {"_np_eager_method", (PyCFunction)(void (*)(void))np_eager_method, METH_FASTCALL,
     "_np_eager_method(role, name, fallback): a method of hop.numpy.ndarray (role 'reduce': "
     "a.sum(); 'element': a.item(), float(a), int(a); 'array_ufunc'; 'array_function'; "
     "'getitem'; 'setitem'; 'fill'; 'reshape'; 'ravel'; 'transpose'; 'dot'; 'copy'; 'astype'; "
     "'create': hnp.zeros/ones/empty/asarray/zeros_like/ones_like/empty_like/copy/arange/full; "
     "'attr': "
     "len(a), "
     "a.shape, a.ndim, a.size) that tries the eager fast path first, then calls fallback."},
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
    if (hop_py__np_type == NULL) {
        hop_tensor_release(t);
        Py_RETURN_NONE;
    }
    PyObject *tv = hop_py_tensor_new(t);
    return tv == NULL ? NULL : hop_py__np_wrap(tv);
}

int
hop_py__np_eager_open(void)
{
    return hop_py__np_type != NULL && shape_fast && np_off == 0 && !hop_py_tracing_active();
}

int
hop_py_np_eager_init(PyObject *module)
{
    if (PyType_Ready(&EagerOpType) < 0)
        return -1;
    return PyModule_AddFunctions(module, np_eager_functions);
}
