/*
 * python/_C/np_eager_create.c - the eager fast path of hop.numpy's
 * zeros(shape, dtype), ones(shape, dtype) and empty(shape, dtype), and of
 * asarray(a) of a NumPy array (asarray_fast), of zeros_like(a), ones_like(a)
 * and empty_like(a) (like_fast: hnp's and NumPy's through __array_function__),
 * and of a.astype(dtype) (hop_py__np_astype) (hop.numpy._eager_shape says
 * what each takes and why).
 *
 * Their general path (_funcs._filled: the order's and the shape's checks,
 * the dtype's conversion, a full op) costs ~2 us, 25-30x NumPy's call, on
 * every array a loop allocates.  Here a shape of exact ints (one, or a tuple
 * or list of them, each >= 0) and a dtype the table maps (_np_eager_create_
 * init's: None, Python's float, int, bool and complex, NumPy's scalar types,
 * dtype objects and names, to hop's dtypes) make the new C-ordered array
 * directly: zeros as hop's zeroed tensor, empty as its uninitialised one
 * (as NumPy's), ones filled with one.
 * Anything else (order='F', a negative size, a dtype not in the table,
 * float16 or complex ones, a trace) is None: the general path answers,
 * its errors included.
 */
#include "tensor_impl.h"
#include "trace_impl.h"

#include <math.h>
#include <string.h>

static PyObject *dtype_table; /* dict: the dtype argument -> its hop dtype object */
static PyObject *like_funcs;  /* (np.zeros_like, np.ones_like, np.empty_like, np.copy) */

/* The sizes of shape (an exact int, or a tuple or list of them, each >= 0)
 * in sizes: the rank, or -1 when the fast path does not take it. */
static int
shape_sizes(PyObject *shape, int64_t *sizes)
{
    PyObject *const *items = &shape;
    Py_ssize_t n = 1;
    if (PyTuple_CheckExact(shape)) {
        items = &PyTuple_GET_ITEM(shape, 0);
        n = PyTuple_GET_SIZE(shape);
    } else if (PyList_CheckExact(shape)) {
        items = &PyList_GET_ITEM(shape, 0);
        n = PyList_GET_SIZE(shape);
    }
    if (n > HOP_MAX_RANK)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        int overflow;
        if (!PyLong_CheckExact(items[i]))
            return -1;
        long long v = PyLong_AsLongLongAndOverflow(items[i], &overflow);
        if (overflow != 0 || v < 0) {
            PyErr_Clear();
            return -1;
        }
        sizes[i] = v;
    }
    return (int)n;
}

/* Whether the rank sizes of elements of isz bytes fit in intp's bytes,
 * NumPy's check (PyArray_NewFromDescr: sizes of 0 left out of the product,
 * so that (0, 2**62) of float64 is too big as well); its ValueError is the
 * general path's. */
static int
bytes_fit(int rank, const int64_t *sizes, size_t isz)
{
    int64_t nbytes = (int64_t)isz;
    for (int i = 0; i < rank; i++)
        if (sizes[i] != 0 && __builtin_mul_overflow(nbytes, sizes[i], &nbytes))
            return 0;
    return 1;
}

/* The hop dtype of dtype argument dt (NULL: the function's default, given
 * as def) by the table: 1, or 0 when it has none (or the lookup failed:
 * the general path reads it again), and no exception. */
static int
table_dtype(PyObject *dt, PyObject *def, hop_dtype *out)
{
    if (dtype_table == NULL)
        return 0;
    PyObject *v = PyDict_GetItemWithError(dtype_table, dt == NULL ? def : dt);
    if (v == NULL || hop_py_dtype_from_object(v, out) < 0) {
        PyErr_Clear(); /* (an unhashable argument: the general path's error) */
        return 0;
    }
    if (dt != NULL && dt != Py_None && !PyUnicode_Check(dt) && !PyType_Check(dt)) {
        /* a dtype object: one with metadata equals the plain one, but NumPy
         * keeps the metadata in the array (the general path's DTypeError) */
        PyObject *md = PyObject_GetAttrString(dt, "metadata");
        int plain = md == Py_None;
        Py_XDECREF(md);
        PyErr_Clear();
        return plain;
    }
    return 1;
}

/* One of dtype d in *elem (isz bytes): 1, or 0 for float16 and complex. */
static int
one_of(hop_dtype d, unsigned char *elem)
{
    switch (d) {
#define ONE(e, ctype)                                                                              \
    case HOP_##e: {                                                                                \
        ctype v = 1;                                                                               \
        memcpy(elem, &v, sizeof v);                                                                \
        return 1;                                                                                  \
    }
        ONE(BOOL, bool)
        ONE(I8, int8_t)
        ONE(U8, uint8_t)
        ONE(I16, int16_t)
        ONE(U16, uint16_t)
        ONE(I32, int32_t)
        ONE(U32, uint32_t)
        ONE(I64, int64_t)
        ONE(U64, uint64_t)
        ONE(F32, float)
        ONE(F64, double)
#undef ONE
    default:
        return 0;
    }
}

/* The n elements of isz bytes at p filled with elem: the filled part copied
 * onto the rest, doubling (memcpy's speed, not an element's store a step). */
static void
fill_dense(char *p, size_t n, size_t isz, const unsigned char *elem)
{
    if (n == 0)
        return;
    memcpy(p, elem, isz);
    size_t done = isz, total = n * isz;
    while (done < total) {
        size_t k = done < total - done ? done : total - done;
        memcpy(p + done, p, k);
        done += k;
    }
}

/* hnp.asarray(a) of an exact, writable NumPy array that hop shares without
 * a copy (hop_py__np_borrow: a dtype of hop's in native byte order, no
 * negative stride, not empty): a hop.numpy array over its memory, whose
 * NumPy base is a's own base when a is a view (_funcs.array, the general
 * path, makes the same array, ~2.5 us).  None for anything else: another
 * argument, a read-only array (the general path's copy), a trace. */
static PyObject *
asarray_fast(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs != 1 || kwnames != NULL || !hop_py__np_eager_open() || !hop_py__np_ready())
        Py_RETURN_NONE;
    hop_tensor *t = hop_py__np_borrow(args[0]);
    if (t == NULL)
        Py_RETURN_NONE;
    PyObject *base = PyObject_GetAttrString(args[0], "base");
    if (base == NULL) {
        hop_tensor_release(t);
        return NULL;
    }
    /* the Tensor's base is the array, as _C.asarray's over a buffer (guards
     * know a capture over NumPy's memory by it: _C._base) */
    PyObject *tv = hop_py_tensor_new(t);
    if (tv != NULL)
        HOP_PY_TENSOR(tv)->base = Py_NewRef(args[0]);
    PyObject *r = tv == NULL ? NULL : hop_py__np_wrap(tv);
    if (r != NULL && base != Py_None)
        Py_SETREF(HOP_PY_SLOT(r, hop_py__np_off_ob), Py_NewRef(base));
    Py_DECREF(base);
    return r;
}

/* Whether the general path's conversion of src to dst (_core.cast) is one
 * Tensor.to: not for float16 (NumPy's scalar loop), a complex to another
 * kind (the real part, a ComplexWarning), nor a float to an integer
 * (truncated, below). */
static int
astype_direct(hop_dtype src, hop_dtype dst)
{
    if (src == HOP_F16 || dst == HOP_F16)
        return 0;
    if (hop_dtype_is_complex(src))
        return hop_dtype_is_complex(dst);
    return !(hop_dtype_is_float(src) && hop_dtype_is_int(dst));
}

/* Whether each of the n elements of p (float or double: S) lies where
 * NumPy's x86-64 loops (and _core.cast) convert it to the integer dtype by
 * truncation alone, with no floating-point flag: [-2**63, 2**63) for int64,
 * else (-2**31 - 1, 2**31), the low bits of whose int32 the narrower dtypes
 * keep.  NaN lies nowhere. */
#define IN_RANGE(S)                                                                                \
    static int in_range_##S(const S *p, size_t n, int wide)                                        \
    {                                                                                              \
        double lo = wide ? -0x1p63 : -2147483649.0, hi = wide ? 0x1p63 : 2147483648.0;             \
        int ok = 1;                                                                                \
        for (size_t i = 0; i < n; i++) {                                                           \
            double x = (double)p[i];                                                               \
            ok &= (x > lo || (wide && x == lo)) && x < hi;                                         \
        }                                                                                          \
        return ok;                                                                                 \
    }
IN_RANGE(float)
IN_RANGE(double)
#undef IN_RANGE

/* The n elements of p (S) truncated to int64, then to the integer dtype
 * of q (its low bits: integer narrowing wraps, as NumPy's). */
/* clang-format off */
#define TRUNCATE_TO(e, D)                                                                          \
    case e:                                                                                        \
        for (size_t i = 0; i < n; i++)                                                             \
            ((D *)q)[i] = (D)(int64_t)p[i];                                                        \
        return 1;
#define TRUNCATE(S)                                                                                \
    static int truncate_##S(const S *p, size_t n, hop_dtype d, void *q)                            \
    {                                                                                              \
        switch (d) {                                                                               \
        TRUNCATE_TO(HOP_I8, int8_t)                                                                \
        TRUNCATE_TO(HOP_U8, uint8_t)                                                               \
        TRUNCATE_TO(HOP_I16, int16_t)                                                              \
        TRUNCATE_TO(HOP_U16, uint16_t)                                                             \
        TRUNCATE_TO(HOP_I32, int32_t)                                                              \
        TRUNCATE_TO(HOP_I64, int64_t)                                                              \
        default:                                                                                   \
            return 0;                                                                              \
        }                                                                                          \
    }
/* clang-format on */
TRUNCATE(float)
TRUNCATE(double)
#undef TRUNCATE_TO
#undef TRUNCATE

/* t (float32 or float64, C order) as a new tensor of integer dtype d by
 * truncation, where NumPy's loops give just that (in_range_*: no element
 * NaN or beyond the range, no flag); NULL without an error otherwise
 * (uint32 and uint64, whose loops differ, included). */
static hop_tensor *
truncated(const hop_tensor *t, hop_dtype d)
{
    size_t n = (size_t)hop_tensor_numel(t);
    int wide = d == HOP_I64, f32 = t->dtype == HOP_F32;
    if ((!f32 && t->dtype != HOP_F64) || d == HOP_U32 || d == HOP_U64 ||
        !(f32 ? in_range_float(t->data, n, wide) : in_range_double(t->data, n, wide)))
        return NULL;
    hop_tensor *r = hop_tensor_empty(d, t->rank, t->sizes);
    if (r == NULL) {
        hop_error_clear(); /* (out of memory: the general path's error) */
        return NULL;
    }
    if (!(f32 ? truncate_float(t->data, n, d, r->data) : truncate_double(t->data, n, d, r->data))) {
        hop_tensor_release(r);
        return NULL;
    }
    return r;
}

/* a.astype(dt) of an array the shape fast path takes (concrete, not a
 * NumPy scalar) in C order, to a dtype the table maps: its copy for its own
 * dtype (hop_py__np_copy); a float's truncation to an integer where NumPy's
 * loops give it (truncated); else hop's conversion where it is the general
 * path's (astype_direct), its flags read as an eager ufunc's: NumPy's error
 * state reported, or a flag it warns for (1e300 to float32), leaves the
 * call to the general path, which has NumPy convert and warn. */
PyObject *
hop_py__np_astype(PyObject *a, PyObject *dt)
{
    hop_tensor *t = hop_py__np_shape_tensor(a);
    hop_dtype d;
    if (t == NULL || !hop_tensor_is_contiguous(t) || !table_dtype(dt, NULL, &d))
        return NULL;
    if (d == t->dtype)
        return hop_py__np_copy(a, 0);
    if (hop_dtype_is_float(t->dtype) && hop_dtype_is_int(d)) {
        hop_tensor *r = truncated(t, d);
        return r == NULL ? NULL : hop_py__np_new_array(r);
    }
    if (!astype_direct(t->dtype, d))
        return NULL;
    int reported = hop_py__np_fp_reported();
    if (reported != 0)
        return NULL; /* (-1: its exception) */
    hop_fp_clear();
    PyObject *r = hop_py__to(HOP_PY_SLOT(a, hop_py__np_off_tv), d);
    if (r == NULL) {
        PyErr_Clear(); /* (out of memory: the general path's error) */
        return NULL;
    }
    if (hop_py__np_fp_warned() != 0) {
        Py_DECREF(r); /* (-1: its exception) */
        return NULL;
    }
    return hop_py__np_wrap(r);
}

/* zeros_like(a), ones_like(a), empty_like(a), copy(a) (kind) of an array the
 * shape fast path takes in C order (concrete, not a NumPy scalar): a new
 * C-ordered array of its dtype and shape, zeroed, filled with one (not
 * float16 nor complex: one_of), uninitialised (as NumPy's) or a copy; NULL
 * without an error for anything else. */
static PyObject *
like_fast(int kind, PyObject *a)
{
    hop_tensor *t = hop_py__np_shape_tensor(a);
    unsigned char one[16];
    if (t == NULL || !hop_tensor_is_contiguous(t) ||
        (kind == HOP_PY_CREATE_ONES_LIKE && !one_of(t->dtype, one)))
        return NULL;
    if (kind == HOP_PY_CREATE_COPY) /* (np.copy: order='K', a C-order copy of this one) */
        return hop_py__np_copy(a, 0);
    hop_tensor *r = kind == HOP_PY_CREATE_ZEROS_LIKE
                        ? hop_tensor_zeros(t->dtype, t->rank, t->sizes)
                        : hop_tensor_empty(t->dtype, t->rank, t->sizes);
    if (r == NULL) {
        hop_error_clear(); /* (out of memory: the general path's error) */
        return NULL;
    }
    if (kind == HOP_PY_CREATE_ONES_LIKE)
        fill_dense(r->data, (size_t)hop_tensor_numel(r), hop_dtype_size(r->dtype), one);
    return hop_py__np_new_array(r);
}

PyObject *
hop_py__np_like_function(PyObject *func, PyObject *args)
{
    if (like_funcs == NULL || PyTuple_GET_SIZE(args) != 1)
        return NULL;
    PyObject *a = PyTuple_GET_ITEM(args, 0);
    for (int k = 0; k < 3; k++) {
        if (func == PyTuple_GET_ITEM(like_funcs, k))
            return like_fast(HOP_PY_CREATE_ZEROS_LIKE + k, a);
    }
    return func == PyTuple_GET_ITEM(like_funcs, 3) ? like_fast(HOP_PY_CREATE_COPY, a) : NULL;
}

/* arange(stop), arange(start, stop[, step]) of exact Python ints: NumPy's
 * int64 array start, start + step, ... short of stop (the general path's
 * _C.arange); NULL for a size beyond int64 or a step of 0 (the general
 * path's ZeroDivisionError). */
static PyObject *
arange_ints(const long long *v)
{
    long long start = v[0], stop = v[1], step = v[2];
    if (step == 0)
        return NULL;
    __int128 span = (__int128)stop - start, n = 0;
    if (step > 0 && span > 0)
        n = (span + step - 1) / step;
    else if (step < 0 && span < 0)
        n = (-span + (-(__int128)step) - 1) / -(__int128)step;
    int64_t size = (int64_t)n;
    if (!bytes_fit(1, &size, 8))
        return NULL;
    hop_tensor *t = hop_tensor_empty(HOP_I64, 1, &size);
    if (t == NULL) {
        hop_error_clear(); /* (too large: the general path's error) */
        return NULL;
    }
    int64_t *p = t->data;
    for (int64_t i = 0; i < size; i++)
        p[i] = start + i * step;
    return hop_py__np_new_array(t);
}

/* A float arange's n elements as NumPy's fill makes them: start, start +
 * step, then start + i * delta with delta = (start + step) - start, the
 * product rounded before the sum (the general path's two ops: no fused
 * multiply-add). */
__attribute__((optimize("fp-contract=off"))) static void
arange_fill(double *p, int64_t n, double start, double step)
{
    double second = start + step, delta = second - start;
    for (int64_t i = 0; i < n; i++) {
        double prod = (double)i * delta;
        p[i] = i == 0 ? start : i == 1 ? second : prod + start;
    }
}

/* arange of Python numbers, one a float: NumPy's float64 array of
 * ceil((stop - start) / step) elements (arange_fill: the general path's, in
 * the same double arithmetic as Python's floats); NULL for a step of 0, a
 * length that is not finite or beyond 2**40 (the general path's errors). */
static PyObject *
arange_floats(const double *v)
{
    double start = v[0], stop = v[1], step = v[2];
    if (step == 0)
        return NULL;
    double len = ceil((stop - start) / step);
    if (!isfinite(len) || len > 0x1p40)
        return NULL;
    int64_t size = len > 0 ? (int64_t)len : 0;
    hop_tensor *t = hop_tensor_empty(HOP_F64, 1, &size);
    if (t == NULL) {
        hop_error_clear();
        return NULL;
    }
    arange_fill(t->data, size, start, step);
    return hop_py__np_new_array(t);
}

/* hnp.arange(stop) or arange(start, stop[, step]) of exact Python ints and
 * floats (no bool, no NumPy scalar, no dtype=): arange_ints or
 * arange_floats; None for anything else. */
static PyObject *
arange_fast(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs < 1 || nargs > 3 || kwnames != NULL || !hop_py__np_eager_open())
        Py_RETURN_NONE;
    PyObject *given[3] = {NULL, args[0], NULL};
    if (nargs >= 2) {
        given[0] = args[0];
        given[1] = args[1];
        given[2] = nargs == 3 ? args[2] : NULL;
    }
    long long iv[3] = {0, 0, 1};
    double fv[3] = {0, 0, 1};
    int floats = 0;
    for (int i = 0; i < 3; i++) {
        PyObject *o = given[i];
        if (o == NULL)
            continue;
        if (PyFloat_CheckExact(o)) {
            floats = 1;
        } else if (!PyLong_CheckExact(o)) {
            Py_RETURN_NONE;
        }
    }
    for (int i = 0; i < 3; i++) {
        PyObject *o = given[i];
        if (o == NULL) {
            fv[i] = (double)iv[i];
            continue;
        }
        if (floats) {
            fv[i] = PyFloat_AsDouble(o); /* (an int as Python's float(int)) */
        } else {
            int overflow;
            iv[i] = PyLong_AsLongLongAndOverflow(o, &overflow);
            if (overflow != 0)
                Py_RETURN_NONE;
        }
        if (PyErr_Occurred()) {
            PyErr_Clear(); /* (an int beyond a double: the general path's error) */
            Py_RETURN_NONE;
        }
    }
    PyObject *r = floats ? arange_floats(fv) : arange_ints(iv);
    return r != NULL || PyErr_Occurred() ? r : Py_NewRef(Py_None);
}

/* The optional dtype argument after a call's `at` leading positional ones,
 * given by position or as the keyword dtype, in *dt (NULL: not given): 1, or
 * 0 for any other arguments (the general path's). */
static int
dtype_arg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, Py_ssize_t at, PyObject **dt)
{
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    *dt = NULL;
    if (nargs < at || nargs + nkw > at + 1 ||
        (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "dtype") != 0))
        return 0;
    if (nargs + nkw == at + 1)
        *dt = args[at];
    return 1;
}

/* hnp.full(shape, value[, dtype]) (dtype positional or a keyword) of a
 * shape of exact ints and a Python bool, int or float value: a new C-ordered
 * array of the dtype (the table's; without one, NumPy's of the value: bool,
 * int64, float64) filled with the value converted as NumPy's unsafe copy
 * converts it where that is a plain C conversion (hop_py__np_scalar_element);
 * None for anything else. */
static PyObject *
full_fast(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *dt;
    if (!dtype_arg(args, nargs, kwnames, 2, &dt))
        Py_RETURN_NONE;
    PyObject *value = args[1];
    int64_t sizes[HOP_MAX_RANK];
    hop_dtype d;
    unsigned char elem[16];
    int rank = shape_sizes(args[0], sizes);
    if (rank < 0 || !hop_py__np_eager_open())
        Py_RETURN_NONE;
    if (dt != NULL && dt != Py_None) {
        if (!table_dtype(dt, NULL, &d))
            Py_RETURN_NONE;
    } else if (PyBool_Check(value)) {
        d = HOP_BOOL;
    } else if (PyLong_CheckExact(value)) {
        d = HOP_I64;
    } else if (PyFloat_CheckExact(value)) {
        d = HOP_F64;
    } else {
        Py_RETURN_NONE;
    }
    if (!hop_py__np_scalar_element(d, value, elem) || !bytes_fit(rank, sizes, hop_dtype_size(d)))
        Py_RETURN_NONE;
    hop_tensor *t = hop_tensor_empty(d, rank, sizes);
    if (t == NULL) {
        hop_error_clear(); /* (too large: the general path's error) */
        Py_RETURN_NONE;
    }
    fill_dense(t->data, (size_t)hop_tensor_numel(t), hop_dtype_size(d), elem);
    return hop_py__np_new_array(t);
}

PyObject *
hop_py__np_create(int kind, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (kind == HOP_PY_CREATE_ARANGE)
        return arange_fast(args, nargs, kwnames);
    if (kind == HOP_PY_CREATE_FULL)
        return full_fast(args, nargs, kwnames);
    if (kind == HOP_PY_CREATE_ASARRAY)
        return asarray_fast(args, nargs, kwnames);
    if (kind >= HOP_PY_CREATE_ZEROS_LIKE) {
        PyObject *r = nargs == 1 && kwnames == NULL ? like_fast(kind, args[0]) : NULL;
        return r != NULL || PyErr_Occurred() ? r : Py_NewRef(Py_None);
    }
    PyObject *dt;
    if (!dtype_arg(args, nargs, kwnames, 1, &dt))
        Py_RETURN_NONE;
    int64_t sizes[HOP_MAX_RANK];
    hop_dtype d;
    unsigned char one[16];
    int rank = shape_sizes(args[0], sizes);
    if (rank < 0 || !hop_py__np_eager_open() ||
        !table_dtype(dt, kind == HOP_PY_CREATE_ONES ? Py_None : (PyObject *)&PyFloat_Type, &d) ||
        (kind == HOP_PY_CREATE_ONES && !one_of(d, one)) ||
        !bytes_fit(rank, sizes, hop_dtype_size(d)))
        Py_RETURN_NONE;
    hop_tensor *t = kind == HOP_PY_CREATE_ZEROS ? hop_tensor_zeros(d, rank, sizes)
                                                : hop_tensor_empty(d, rank, sizes);
    if (t == NULL) {
        hop_error_clear(); /* (too large: the general path's error) */
        Py_RETURN_NONE;
    }
    if (kind == HOP_PY_CREATE_ONES)
        fill_dense(t->data, (size_t)hop_tensor_numel(t), hop_dtype_size(d), one);
    return hop_py__np_new_array(t);
}

static PyObject *
np_eager_zeros(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    return hop_py__np_create(HOP_PY_CREATE_ZEROS, args, PyVectorcall_NARGS(nargsf), kwnames);
}

static PyObject *
np_eager_ones(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    return hop_py__np_create(HOP_PY_CREATE_ONES, args, PyVectorcall_NARGS(nargsf), kwnames);
}

static PyObject *
np_eager_empty(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    return hop_py__np_create(HOP_PY_CREATE_EMPTY, args, PyVectorcall_NARGS(nargsf), kwnames);
}

static PyObject *
np_eager_asarray(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    return hop_py__np_create(HOP_PY_CREATE_ASARRAY, args, PyVectorcall_NARGS(nargsf), kwnames);
}

/* _np_eager_create_init(table, likes): the dtype arguments the fast path
 * takes ({argument: its hop dtype}, hop.numpy._eager_shape's) and NumPy's
 * (zeros_like, ones_like, empty_like, copy), whose __array_function__ calls
 * it answers. */
static PyObject *
np_eager_create_init(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2 || !PyDict_CheckExact(args[0]) || !PyTuple_CheckExact(args[1]) ||
        PyTuple_GET_SIZE(args[1]) != 4) {
        PyErr_SetString(PyExc_TypeError, "_np_eager_create_init(table: dict, (zeros_like, "
                                         "ones_like, empty_like, copy))");
        return NULL;
    }
    Py_XSETREF(dtype_table, Py_NewRef(args[0]));
    Py_XSETREF(like_funcs, Py_NewRef(args[1]));
    Py_RETURN_NONE;
}

static PyMethodDef create_functions[] = {
    {"_np_eager_zeros", (PyCFunction)(void (*)(void))np_eager_zeros, METH_FASTCALL | METH_KEYWORDS,
     "_np_eager_zeros(shape, dtype=float): hop.numpy.zeros by the eager fast path, or None."},
    {"_np_eager_ones", (PyCFunction)(void (*)(void))np_eager_ones, METH_FASTCALL | METH_KEYWORDS,
     "_np_eager_ones(shape, dtype=None): hop.numpy.ones by the eager fast path, or None."},
    {"_np_eager_empty", (PyCFunction)(void (*)(void))np_eager_empty, METH_FASTCALL | METH_KEYWORDS,
     "_np_eager_empty(shape, dtype=float): hop.numpy.empty by the eager fast path, or None."},
    {"_np_eager_asarray", (PyCFunction)(void (*)(void))np_eager_asarray,
     METH_FASTCALL | METH_KEYWORDS,
     "_np_eager_asarray(a): hop.numpy.asarray of a NumPy array by the eager fast path, or "
     "None."},
    {"_np_eager_create_init", (PyCFunction)(void (*)(void))np_eager_create_init, METH_FASTCALL,
     "_np_eager_create_init(table, (np.zeros_like, np.ones_like, np.empty_like, np.copy)): the "
     "dtype arguments the creation fast path takes, and NumPy's functions it answers."},
    {NULL, NULL, 0, NULL},
};

int
hop_py_np_create_init(PyObject *module)
{
    return PyModule_AddFunctions(module, create_functions);
}
