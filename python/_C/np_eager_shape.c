/*
 * python/_C/np_eager_shape.c - the eager fast path of hop.numpy's shape
 * functions and indexing (hop.numpy._eager_shape owns what it takes and
 * why): a.reshape(...), basic indexing a[key] and transpose as one view
 * header over the array's storage, a[key] = number into such a view,
 * a.item(...), float(a) and int(a) read in place, concatenate as one copy
 * per block, where with the general path's result dtype kept per pair of
 * operand keys (np_eager.c's plans).  Arrays that share one memory order
 * other than C (Fortran order, a transpose) are computed on views in that
 * order and the result viewed back (common_order): the ufuncs of
 * np_eager.c, where and concatenate alike.
 *
 * np_eager.c owns the state these read (tensor_impl.h: the array type, its
 * slots, the gates) and the method descriptors that call in here; one
 * index array or mask is np_eager_take.c's.  Anything not taken is NULL
 * without an exception (None from the module functions): the general path
 * answers.
 */
#include "tensor_impl.h"
#include "trace_impl.h"

#include <string.h>

static PyObject *where_planner; /* _eager_shape._where_plan(x, y) -> (dt, hop dt) or None */
static PyObject *where_fn;      /* _C.where(condition, x, y) */
static PyObject *where_name;    /* "where": its plans' name in the dict of plans */
/* NumPy's np.reshape, np.concatenate and np.where: their calls with hop.numpy
 * arrays reach ndarray.__array_function__ (eager_array_function_call) */
static PyObject *np_reshape_fn, *np_concatenate_fn, *np_where_fn, *np_transpose_fn, *np_dot_fn;
static PyTypeObject *np_integer; /* np.integer: NumPy's integer scalars are index items */
static PyObject *ne_fn;          /* _C.ne: where's condition of another dtype than bool */
/* _storage (its WRITES, the count of eager writes), _storage._NUMBERS (the
 * count's next values) and "WRITES": fast_setitem counts its write */
static PyObject *writes_module, *write_numbers, *writes_name;

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
hop_tensor *
hop_py__np_shape_tensor(PyObject *a)
{
    if (Py_TYPE(a) != hop_py__np_type || !hop_py__np_eager_open())
        return NULL;
    TensorObject *x = hop_py__np_array_tensor(a);
    if (x == NULL || HOP_PY_SLOT(a, hop_py__np_off_scalar) != Py_False ||
        HOP_PY_SLOT(a, hop_py__np_off_ro) == NULL)
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
    PyObject *r = t == NULL ? NULL : hop_py__np_wrap(t);
    if (r == NULL)
        return NULL;
    PyObject *ob = HOP_PY_SLOT(a, hop_py__np_off_ob);
    Py_SETREF(HOP_PY_SLOT(r, hop_py__np_off_ro), Py_NewRef(HOP_PY_SLOT(a, hop_py__np_off_ro)));
    Py_SETREF(HOP_PY_SLOT(r, hop_py__np_off_ob), Py_NewRef(ob == NULL || ob == Py_None ? a : ob));
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
    if (Py_TYPE(k) != hop_py__np_type || HOP_PY_SLOT(k, hop_py__np_off_scalar) != Py_True)
        return 0;
    TensorObject *x = hop_py__np_array_tensor(k);
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
    if (Py_TYPE(key) != hop_py__np_type)
        return hop_py__np_key_tensor(key);
    TensorObject *x =
        HOP_PY_SLOT(key, hop_py__np_off_scalar) == Py_False ? hop_py__np_array_tensor(key) : NULL;
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
    return tv == NULL ? NULL : hop_py__np_wrap(tv);
}

/*
 * a[key] for a basic key (basic_view's) by the fast path: one view, or for
 * ints that take every dim a NumPy scalar, a copy of the element; for an
 * array key, fast_take's copy.
 */
static PyObject *
fast_getitem(PyObject *a, PyObject *key)
{
    hop_tensor *t = hop_py__np_shape_tensor(a);
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
    PyObject *r = tv == NULL ? NULL : hop_py__np_wrap(tv);
    if (r != NULL)
        Py_SETREF(HOP_PY_SLOT(r, hop_py__np_off_scalar), Py_NewRef(Py_True));
    return r;
}

/*
 * Python bool, int or float v as an element of dtype d, NumPy's conversion
 * of it where that is a plain C conversion with no warning nor error, in
 * out: 1, or 0 for anything else (the general path: a float into an
 * integer array, an int out of the dtype's range, a float32 overflow
 * NumPy's cast warns for, float16 and complex arrays).
 */
int
hop_py__np_scalar_element(hop_dtype d, PyObject *v, unsigned char *out)
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

/* The bytes t's elements span: [*lo, *hi). */
static void
extent(const hop_tensor *t, const char **lo, const char **hi)
{
    int64_t last = 0;
    for (int d = 0; d < t->rank; d++)
        last += (t->sizes[d] - 1) * t->strides[d];
    *lo = t->data;
    *hi = (const char *)t->data + (last + 1) * (int64_t)hop_dtype_size(t->dtype);
}

/* a's view (rank sizes strides, at p) = array value, of a's dtype, whose
 * shape broadcasts to the view's (no more dims, each size equal or 1) and
 * whose memory is not a's (NumPy's copy of an overlapping value is the
 * general path's): 1, or 0 for anything else. */
static int
set_from_array(hop_tensor *t, char *p, int rank, const int64_t *sizes, const int64_t *strides,
               PyObject *value)
{
    hop_tensor *v = hop_py__np_shape_tensor(value);
    int64_t vstrides[HOP_MAX_RANK];
    if (v == NULL || v->dtype != t->dtype || v->rank > rank || hop_tensor_numel(t) == 0 ||
        hop_tensor_numel(v) == 0)
        return 0;
    for (int d = 0; d < rank; d++) {
        int e = d - (rank - v->rank); /* (v's dim, right-aligned) */
        if (e < 0 || v->sizes[e] == 1) {
            vstrides[d] = 0;
        } else if (v->sizes[e] == sizes[d]) {
            vstrides[d] = v->strides[e];
        } else {
            return 0; /* (NumPy's broadcast error: the general path's) */
        }
    }
    const char *tlo, *thi, *vlo, *vhi;
    extent(t, &tlo, &thi);
    extent(v, &vlo, &vhi);
    if (vlo < thi && tlo < vhi)
        return 0;
    hop_py__np_copy_view(p, rank, sizes, strides, v->data, vstrides, hop_dtype_size(t->dtype));
    return 1;
}

/*
 * a[key] = value by the fast path for a basic key (basic_view's) or an array
 * key (array_key's) of a writable array the shape fast path takes: a Python
 * bool, int or float value its dtype holds by a plain conversion
 * (hop_py__np_scalar_element) fills the key's elements in place, as the general path's
 * NumPy write does; a basic key's view is also set from an array value of
 * a's dtype (set_from_array).  The write is counted (_storage.WRITES: a view
 * hop made as a copy reads its elements again after one;
 * _storage.eager_write).  1 done, 0 not taken (the general path answers:
 * its errors, other values and keys), -1 error.
 */
static int
fast_setitem(PyObject *a, PyObject *key, PyObject *value)
{
    hop_tensor *t = hop_py__np_shape_tensor(a);
    int64_t sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK], offset;
    int rank, plain;
    unsigned char elem[16];
    if (t == NULL || writes_module == NULL || HOP_PY_SLOT(a, hop_py__np_off_ro) != Py_False)
        return 0;
    size_t isz = hop_dtype_size(t->dtype);
    if (!hop_py__np_scalar_element(t->dtype, value, elem)) {
        if (!basic_view(t, key, &rank, sizes, strides, &offset, &plain) ||
            !set_from_array(t, (char *)t->data + (offset - t->offset) * (int64_t)isz, rank, sizes,
                            strides, value))
            return 0;
    } else if (basic_view(t, key, &rank, sizes, strides, &offset, &plain)) {
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
    hop_tensor *t = hop_py__np_shape_tensor(a);
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
 * (hop_py__np_shape_tensor), of one dtype, one or more dims, sizes that join, each
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
    if (n == 0 || hop_py__np_shape_tensor(items[0]) == NULL)
        return NULL;
    hop_tensor *few[16], **ts = few;
    if (n > 16 && (ts = PyMem_RawMalloc((size_t)n * sizeof *ts)) == NULL)
        return PyErr_NoMemory();
    PyObject *res = join(items, ts, n, axis);
    if (ts != few)
        PyMem_RawFree(ts);
    return res;
}

/* fast_concatenate of the n arrays items, ts room for their tensors. */
static PyObject *
join(PyObject *const *items, hop_tensor **ts, Py_ssize_t n, PyObject *axis)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((ts[i] = hop_py__np_shape_tensor(items[i])) == NULL)
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
    return tv == NULL ? NULL : hop_py__np_wrap(tv);
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
    return hop_py__np_or_none(fast_concatenate(args[0], nargs == 2 ? args[1] : NULL));
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
PyObject *
hop_py__np_in_order(PyObject *o, int order, const int *perm)
{
    if (!order || Py_TYPE(o) != hop_py__np_type)
        return Py_NewRef(Py_TYPE(o) == hop_py__np_type ? HOP_PY_SLOT(o, hop_py__np_off_tv) : o);
    hop_tensor *v = permuted(HOP_PY_TENSOR(HOP_PY_SLOT(o, hop_py__np_off_tv))->t, perm, 0);
    return v == NULL ? NULL : hop_py_tensor_new(v);
}

/* Where operand o (a tensor object or a scalar, from hop_py__np_in_order) as _C.where
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
        Py_SETREF(o, PyObject_CallFunctionObjArgs(hop_py__np_cast, o, dt, NULL));
    return o;
}

/* The memory order the arrays among the n operands ops share when it is
 * not C order (common_order's 1 and perm), the arrays then of one shape
 * (NumPy's iterator computes the ufunc in that order and lays its result
 * out in it, as the general path does: _ufuncs.memory_order); 0 or -1 for
 * anything else. */
int
hop_py__np_arrays_order(PyObject *const *ops, Py_ssize_t n, int *perm)
{
    hop_tensor *ts[2];
    int na = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (Py_TYPE(ops[i]) != hop_py__np_type)
            continue;
        TensorObject *a = hop_py__np_array_tensor(ops[i]);
        if (a == NULL || a->t == NULL || HOP_PY_SLOT(ops[i], hop_py__np_off_scalar) != Py_False)
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
PyObject *
hop_py__np_back_in_order(PyObject *a, const int *perm)
{
    PyObject *tv = HOP_PY_SLOT(a, hop_py__np_off_tv);
    hop_tensor *back = HOP_PY_IS_TENSOR(tv) && HOP_PY_TENSOR(tv)->t != NULL
                           ? permuted(HOP_PY_TENSOR(tv)->t, perm, 1)
                           : NULL;
    PyObject *bv = back == NULL ? NULL : hop_py_tensor_new(back);
    if (bv == NULL) {
        Py_DECREF(a);
        return NULL;
    }
    Py_SETREF(HOP_PY_SLOT(a, hop_py__np_off_tv), bv);
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
    hop_tensor *ts[3] = {hop_py__np_shape_tensor(c), NULL, NULL};
    if (ts[0] == NULL || where_fn == NULL ||
        (Py_TYPE(x) != hop_py__np_type && Py_TYPE(y) != hop_py__np_type))
        return NULL;
    PyObject *xy[2] = {x, y};
    int na = 1, perm[HOP_MAX_RANK];
    for (int i = 0; i < 2; i++) {
        if (Py_TYPE(xy[i]) != hop_py__np_type)
            continue;
        TensorObject *a = hop_py__np_array_tensor(xy[i]);
        if (a == NULL || a->t == NULL || HOP_PY_SLOT(xy[i], hop_py__np_off_scalar) != Py_False)
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
    PyObject *kx = hop_py__np_any_layout_key(x),
             *ky = kx == NULL ? NULL : hop_py__np_any_layout_key(y);
    PyObject *plan = NULL, *u[3] = {NULL, NULL, NULL}, *r = NULL, *res = NULL;
    if (ky == NULL || (plan = hop_py__np_lookup_plan(where_name, kx, ky, where_miss, xy)) == NULL ||
        plan == Py_None)
        goto done;
    if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 2) {
        PyErr_SetString(PyExc_SystemError, "_np_eager_where: a plan is (dt, hop dt)");
        goto done;
    }
    PyObject *dt = PyTuple_GET_ITEM(plan, 0), *hdt = PyTuple_GET_ITEM(plan, 1);
    if ((u[0] = hop_py__np_in_order(c, order, perm)) == NULL)
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
    if ((u[1] = where_operand(hop_py__np_in_order(x, order, perm), dt, hdt)) == NULL ||
        (u[2] = where_operand(hop_py__np_in_order(y, order, perm), dt, hdt)) == NULL)
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
        Py_SETREF(r, PyObject_CallFunctionObjArgs(hop_py__np_cast, r, dt, NULL));
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
    res = hop_py__np_wrap(r);
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
    return hop_py__np_or_none(fast_where(args[0], args[1], args[2]));
}

/* _np_eager_shape_init(where_planner, where, np.reshape, np.concatenate,
 * np.where, np.transpose, ne, np.integer, _storage, np.dot): what
 * fast_where calls, NumPy's functions __array_function__ sees (np.dot:
 * hop_py__np_dot), _C.ne (a condition that is not bool), NumPy's integer
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
    hop_tensor *t = hop_py__np_shape_tensor(a);
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

/*
 * The element conversions' fast path: a.item(...), float(a) and int(a) of a
 * concrete hop.numpy array or NumPy scalar of a real dtype (not complex:
 * its conversions' errors are the general path's), the gates open: the
 * element read in place, made the Python scalar NumPy's item() gives (a
 * bool, an int, a float; float16 widened) or float()/int() of it.  NULL
 * without an exception: the general path answers (a size other than 1, an
 * index out of range, a NaN or infinity for int(), every error).
 */

static PyObject *
element_value(hop_dtype d, const char *p, int as)
{
    double f;
    switch (d) {
    case HOP_BOOL:
        return as == HOP_PY_AS_FLOAT ? PyFloat_FromDouble(*(const bool *)p)
               : as == HOP_PY_AS_INT ? PyLong_FromLong(*(const bool *)p)
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
        return as == HOP_PY_AS_FLOAT ? PyFloat_FromDouble((double)u)
                                     : PyLong_FromUnsignedLongLong(u);
    }
    default: {
        int64_t v;
        if (!int_element(d, p, &v))
            return NULL;
        return as == HOP_PY_AS_FLOAT ? PyFloat_FromDouble((double)v) : PyLong_FromLongLong(v);
    }
    }
    if (as != HOP_PY_AS_INT)
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
    if (Py_TYPE(a) != hop_py__np_type || !hop_py__np_eager_open())
        return NULL;
    TensorObject *x = hop_py__np_array_tensor(a);
    if (x == NULL || x->t == NULL || hop_dtype_is_complex(x->t->dtype))
        return NULL;
    const char *p = element_at(x->t, args, n);
    return p == NULL ? NULL : element_value(x->t->dtype, p, as);
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
    return hop_py__np_or_none(fast_getitem(args[0], args[1]));
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
PyObject *
hop_py__np_shape_function(PyObject *func, PyObject *fargs)
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
        return hop_py__np_dot(a[0], a[1]);
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
    return hop_py__np_or_none(reshape_to(args[0], args[1]));
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
    return hop_py__np_or_none(nargs == 1 || args[1] == Py_None ? fast_transpose(args[0], NULL, 0)
                                                               : transpose_to(args[0], args[1]));
}

/* a.T (the property's getter) and a.transpose(), a.transpose(1, 0),
 * a.transpose((1, 0)), a.transpose([1, 0]) */
PyObject *
hop_py__np_transpose_call(EagerOpObject *op, PyObject *const *args, size_t nargsf,
                          PyObject *kwnames)
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

/* a.item(...) (name "item"), float(a) ("float"), int(a) ("int") */
PyObject *
hop_py__np_item_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    int as = op->nargs; /* (np_eager_method: the conversion's AS_*) */
    if (kwnames == NULL && n >= 1 && (as == HOP_PY_AS_ITEM || n == 1)) {
        PyObject *r = fast_element(args[0], args + 1, n - 1, as);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* a[key] as the method __getitem__: the fast path, else the Python one */
PyObject *
hop_py__np_getitem_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
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
PyObject *
hop_py__np_setitem_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 3) {
        int r = fast_setitem(args[0], args[1], args[2]);
        if (r != 0)
            return r < 0 ? NULL : Py_NewRef(Py_None);
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* a.fill(value) as a[...] = value: the setitem fast path (a number it
 * converts exactly, an array of a's dtype), else the Python method */
PyObject *
hop_py__np_fill_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 2 &&
        hop_py__np_shape_tensor(args[1]) == NULL) {
        int r = fast_setitem(args[0], Py_Ellipsis, args[1]);
        if (r != 0)
            return r < 0 ? NULL : Py_NewRef(Py_None);
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* a.reshape(4, 4), a.reshape((4, 4)), a.reshape(-1) */
PyObject *
hop_py__np_reshape_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
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

/* a.ravel() (role "ravel"): of an array hop's tensor has in C order (the
 * general path's test, _funcs._c_order, so that the answer is its view:
 * reshape(a, -1)), the reshape fast path's view; else op->fallback (a copy,
 * order=, a NumPy scalar) */
PyObject *
hop_py__np_ravel_call(EagerOpObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 1) {
        hop_tensor *t = hop_py__np_shape_tensor(args[0]);
        if (t != NULL && hop_tensor_is_contiguous(t)) {
            PyObject *minus_one = PyLong_FromLong(-1); /* (CPython's cached small int) */
            PyObject *r = minus_one == NULL ? NULL : fast_reshape(args[0], &minus_one, 1);
            Py_XDECREF(minus_one);
            if (r != NULL || PyErr_Occurred())
                return r;
        }
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

static PyMethodDef np_eager_shape_functions[] = {
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
    {NULL, NULL, 0, NULL},
};

int
hop_py_np_eager_shape_init(PyObject *module)
{
    return PyModule_AddFunctions(module, np_eager_shape_functions);
}
