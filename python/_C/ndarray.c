/*
 * python/_C/ndarray.c - ndarrays to and from runtime tensors through
 * NumPy's C API, for the compiled call of NumPy code (numpy_call.c,
 * Plan.run_arrays): the buffer protocol costs a Py_buffer, a format
 * string and, on the way out, a memoryview per array, which is most of a
 * small plan's call.
 *
 * NumPy stays optional: without its headers at build time (no
 * HOP_PY_HAVE_NUMPY) or when its C API cannot be imported at run time
 * (another ABI), hop_py__np_ready is false and callers take the buffer
 * protocol (hop.asarray, numpy.asarray) as before.  Only the memory the
 * buffer protocol would share is borrowed here; every other array (a copy,
 * a conversion, an error) is left to the callers' general path, so results
 * and messages are the same either way.
 */
#include "tensor_impl.h"

/* obj.dtype.isnative and obj.flags.aligned (and obj.flags.c_contiguous
 * with c_order), through Python (no NumPy C API): 1, 0 or -1. */
static int
plain_by_attr(PyObject *obj, int c_order)
{
    PyObject *dt = PyObject_GetAttrString(obj, "dtype");
    PyObject *yes = dt != NULL ? PyObject_GetAttrString(dt, "isnative") : NULL;
    int r = yes != NULL ? PyObject_IsTrue(yes) : -1;
    Py_XDECREF(yes);
    Py_XDECREF(dt);
    if (r != 1)
        return r;
    PyObject *flags = PyObject_GetAttrString(obj, "flags");
    yes = flags != NULL ? PyObject_GetAttrString(flags, "aligned") : NULL;
    r = yes != NULL ? PyObject_IsTrue(yes) : -1;
    Py_XDECREF(yes);
    if (r == 1 && c_order) {
        yes = PyObject_GetAttrString(flags, "c_contiguous");
        r = yes != NULL ? PyObject_IsTrue(yes) : -1;
        Py_XDECREF(yes);
    }
    Py_XDECREF(flags);
    return r;
}

#ifdef HOP_PY_HAVE_NUMPY
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

static int np_state; /* 0: not tried; 1: the C API works; -1: it does not */

int
hop_py__np_ready(void)
{
    if (np_state == 0) {
        /* import_array's function form: -1 with an exception on failure */
        if (_import_array() < 0) {
            PyErr_Clear();
            np_state = -1;
        } else {
            np_state = 1;
        }
    }
    return np_state > 0;
}

/* The hop dtype of a NumPy type number; false for the others. */
static bool
from_type_num(int num, hop_dtype *out)
{
    switch (num) {
    case NPY_BOOL:
        *out = HOP_BOOL;
        return true;
    case NPY_INT8:
        *out = HOP_I8;
        return true;
    case NPY_UINT8:
        *out = HOP_U8;
        return true;
    case NPY_INT16:
        *out = HOP_I16;
        return true;
    case NPY_UINT16:
        *out = HOP_U16;
        return true;
    case NPY_UINT32:
        *out = HOP_U32;
        return true;
    case NPY_INT32:
        *out = HOP_I32;
        return true;
    case NPY_LONG:
    case NPY_LONGLONG:
        if (num == NPY_LONG && sizeof(long) != 8)
            return false;
        *out = HOP_I64;
        return true;
    case NPY_ULONG:
    case NPY_ULONGLONG:
        if (num == NPY_ULONG && sizeof(unsigned long) != 8)
            return false;
        *out = HOP_U64;
        return true;
    case NPY_FLOAT16:
        *out = HOP_F16;
        return true;
    case NPY_FLOAT32:
        *out = HOP_F32;
        return true;
    case NPY_FLOAT64:
        *out = HOP_F64;
        return true;
    case NPY_COMPLEX64:
        *out = HOP_C64;
        return true;
    case NPY_COMPLEX128:
        *out = HOP_C128;
        return true;
    default:
        return false;
    }
}

static int
to_type_num(hop_dtype d)
{
    switch (d) {
    case HOP_BOOL:
        return NPY_BOOL;
    case HOP_I8:
        return NPY_INT8;
    case HOP_U8:
        return NPY_UINT8;
    case HOP_I16:
        return NPY_INT16;
    case HOP_U16:
        return NPY_UINT16;
    case HOP_U32:
        return NPY_UINT32;
    case HOP_I32:
        return NPY_INT32;
    case HOP_I64:
        return NPY_INT64;
    case HOP_U64:
        return NPY_UINT64;
    case HOP_F16:
        return NPY_FLOAT16;
    case HOP_F32:
        return NPY_FLOAT32;
    case HOP_C64:
        return NPY_COMPLEX64;
    case HOP_C128:
        return NPY_COMPLEX128;
    case HOP_F64:
    case HOP_DTYPE_COUNT:
        break;
    }
    return NPY_FLOAT64;
}

/* The storage release of a borrowed array: drops the array, on any thread,
 * with or without the GIL (as create.c's release_buffer). */
static void
release_array(void *user_data, void *data)
{
    (void)data;
    PyObject *arr = user_data;
    if (!Py_IsInitialized()) {
        PyThreadState *mine = PyGILState_GetThisThreadState();
        if (mine != NULL && mine == _PyThreadState_UncheckedGet())
            Py_DECREF(arr);
        return;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(arr);
    PyGILState_Release(g);
}

hop_tensor *
hop_py__np_borrow(PyObject *obj)
{
    if (np_state <= 0 || !PyArray_CheckExact(obj))
        return NULL;
    PyArrayObject *a = (PyArrayObject *)obj;
    PyArray_Descr *descr = PyArray_DESCR(a);
    hop_dtype dt;
    int rank = PyArray_NDIM(a);
    /* what wrap_buffer copies (or refuses) goes its way */
    if (!PyArray_ISWRITEABLE(a) || !PyArray_ISNOTSWAPPED(a) || rank > HOP_MAX_RANK ||
        !from_type_num(descr->type_num, &dt) || PyDataType_HASFIELDS(descr) ||
        descr->subarray != NULL || descr->metadata != NULL)
        return NULL;
    int64_t sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK];
    int64_t esize = (int64_t)hop_dtype_size(dt), numel = 1, extent = 0;
    if (descr->elsize != esize)
        return NULL;
    const npy_intp *shape = PyArray_DIMS(a), *bst = PyArray_STRIDES(a);
    for (int i = 0; i < rank; i++) {
        /* a stride a size-1 dim never uses: NumPy's, which its users read
         * (strides, a reshape's), where hop can hold it */
        int64_t st = shape[i] <= 1 && (bst[i] < 0 || bst[i] % esize != 0) ? 0 : bst[i];
        if (st < 0 || st % esize != 0)
            return NULL;
        sizes[i] = shape[i];
        strides[i] = st / esize;
        numel *= sizes[i];
        extent += (sizes[i] - 1) * st;
    }
    char *data = PyArray_BYTES(a);
    if (numel == 0 || (uintptr_t)data % (uintptr_t)esize != 0)
        return NULL;
    hop_tensor *t = hop_tensor_wrap(dt, rank, sizes, strides, data, (size_t)(extent + esize),
                                    release_array, obj);
    if (t == NULL) {
        hop_error_clear(); /* the general path will say what is wrong */
        return NULL;
    }
    Py_INCREF(obj);
    return t;
}

int
hop_py__np_plain(PyObject *obj, int c_order)
{
    if (np_state > 0 && PyArray_Check(obj))
        return PyArray_ISNOTSWAPPED((PyArrayObject *)obj) &&
               PyArray_DESCR((PyArrayObject *)obj)->metadata == NULL &&
               PyArray_ISALIGNED((PyArrayObject *)obj) &&
               (!c_order || PyArray_IS_C_CONTIGUOUS((PyArrayObject *)obj));
    return plain_by_attr(obj, c_order);
}

/* Whether t's elements lie densely in memory in some order of its dims (C
 * order, or C order of a transpose of it; a 0 dim counted as 1, a 1 dim's
 * stride any): a plan's new array or a transpose of one (`np.sort(v).T`),
 * not a strided view such as a NumPy nonzero column. */
static bool
dense_in_some_order(const hop_tensor *t)
{
    int order[HOP_MAX_RANK], n = 0;
    for (int i = 0; i < t->rank; i++)
        if (t->sizes[i] != 1) {
            int k = n++;
            for (; k > 0 && t->strides[order[k - 1]] < t->strides[i]; k--)
                order[k] = order[k - 1];
            order[k] = i;
        }
    int64_t c = 1;
    for (int k = n - 1; k >= 0; k--) {
        if (t->strides[order[k]] != c)
            return false;
        c *= t->sizes[order[k]] == 0 ? 1 : t->sizes[order[k]];
    }
    return true;
}

PyObject *
hop_py__np_from_tensor(PyObject *tensor)
{
    hop_tensor *t = HOP_PY_TENSOR(tensor)->t;
    npy_intp dims[HOP_MAX_RANK], strides[HOP_MAX_RANK];
    int64_t esize = (int64_t)hop_dtype_size(t->dtype);
    /* (a plan's result without elements in C order, or in C order of a
     * transpose (np.sort(v).T, whose view NumPy makes of its new empty array
     * of zero strides), is a new array, NumPy's
     * new empty one of zero strides, also where the plan gave an input's
     * tensor or a C-ordered view of its own memory: NumPy's views of a
     * result are made in Python, _storage.root_view; one of other strides
     * is NumPy's view.  One dim too (np.sort, np.unique, x[x > 0]); NumPy's
     * nonzero columns of a 1-d array, C strides, never come here: the
     * runner makes them, hop._trace's _Results.columns) */
    bool zero = hop_py__np_zero_strides(t) ||
                (hop_tensor_numel(t) == 0 && t->rank >= 1 && dense_in_some_order(t));
    for (int i = 0; i < t->rank; i++) {
        dims[i] = (npy_intp)t->sizes[i];
        strides[i] = zero ? 0 : (npy_intp)(t->strides[i] * esize);
    }
    PyArray_Descr *descr = PyArray_DescrFromType(to_type_num(t->dtype));
    if (descr == NULL)
        return NULL;
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, descr, t->rank, dims, strides, t->data,
                                         NPY_ARRAY_WRITEABLE, NULL);
    if (arr == NULL)
        return NULL;
    if (PyArray_SetBaseObject((PyArrayObject *)arr, Py_NewRef(tensor)) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

PyObject *
hop_py__np_scalar(PyObject *arr)
{
    return PyArray_Return((PyArrayObject *)arr);
}

/* The layout record of hop_py__np_layout: everything of an ndarray object
 * that its own attributes can change in place (a.shape = ..., a.strides =
 * ..., a.dtype = ..., a.data = ..., a.flags.writeable = ...). */
typedef struct {
    uintptr_t data;
    int32_t ndim, type_num, elsize, flags;
    char byteorder, pad[7];
    int64_t dims[2 * NPY_MAXDIMS]; /* shape, then strides (only 2 * ndim are used) */
} np_layout;

/* Fills l with ndarray a's layout; returns the record's length in bytes. */
static size_t
layout_of(PyArrayObject *a, np_layout *l)
{
    PyArray_Descr *descr = PyArray_DESCR(a);
    memset(l, 0, offsetof(np_layout, dims));
    l->data = (uintptr_t)PyArray_BYTES(a);
    l->ndim = PyArray_NDIM(a);
    l->type_num = descr->type_num;
    l->elsize = (int32_t)descr->elsize;
    l->byteorder = descr->byteorder;
    l->flags = PyArray_FLAGS(a) & (NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED);
    for (int i = 0; i < l->ndim; i++) {
        l->dims[i] = PyArray_DIMS(a)[i];
        l->dims[l->ndim + i] = PyArray_STRIDES(a)[i];
    }
    return offsetof(np_layout, dims) + 2 * (size_t)l->ndim * sizeof(int64_t);
}

PyObject *
hop_py__np_layout(PyObject *mod, PyObject *obj)
{
    (void)mod;
    if (!hop_py__np_ready() || !PyArray_Check(obj))
        Py_RETURN_NONE;
    np_layout l;
    size_t n = layout_of((PyArrayObject *)obj, &l);
    return PyBytes_FromStringAndSize((const char *)&l, (Py_ssize_t)n);
}

PyObject *
hop_py__np_same_layout(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    if (nargs != 2 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_np_same_layout(a, layout): layout must be bytes");
        return NULL;
    }
    if (np_state <= 0 || !PyArray_Check(args[0]))
        Py_RETURN_FALSE;
    np_layout l;
    size_t n = layout_of((PyArrayObject *)args[0], &l);
    if ((size_t)PyBytes_GET_SIZE(args[1]) == n && memcmp(PyBytes_AS_STRING(args[1]), &l, n) == 0)
        Py_RETURN_TRUE;
    Py_RETURN_FALSE;
}

int
hop_py__np_is_laid_out(PyObject *obj, const void *ident, PyObject *layout)
{
    if (np_state <= 0 || (const void *)obj != ident || !PyArray_CheckExact(obj) ||
        !PyBytes_Check(layout))
        return 0;
    np_layout l;
    size_t n = layout_of((PyArrayObject *)obj, &l);
    return (size_t)PyBytes_GET_SIZE(layout) == n && memcmp(PyBytes_AS_STRING(layout), &l, n) == 0;
}

/* A visitor of walk_elements: count runs of n bytes, the first at p, each
 * stride bytes after the one before; nonzero stops the walk. */
typedef int (*visit_runs)(void *ctx, const char *p, size_t n, npy_intp count, npy_intp stride);

/* Calls visit on runs of the memory of ndarray a's elements that together
 * hold each element's bytes once, in an order that depends only on a's
 * layout (so two walks of arrays with equal layout records pair the same
 * elements); returns the first nonzero visit's result, else 0.  A C- or
 * Fortran-contiguous array is one run, its whole memory; in another, a run
 * is a block of trailing axes contiguous among themselves (a row of a[::2],
 * an element of a[:, ::2] or of a broadcast view), one visit takes the runs
 * along the last axis outside them, and the axes before it go in C order.
 * Never allocates. */
static int
walk_elements(PyArrayObject *a, visit_runs visit, void *ctx)
{
    npy_intp size = PyArray_SIZE(a);
    const char *p = PyArray_BYTES(a);
    size_t run = (size_t)PyArray_ITEMSIZE(a);
    if (size == 0 || run == 0)
        return 0;
    if (PyArray_IS_C_CONTIGUOUS(a) || PyArray_IS_F_CONTIGUOUS(a))
        return visit(ctx, p, (size_t)size * run, 1, 0);
    int outer = PyArray_NDIM(a);
    const npy_intp *dims = PyArray_DIMS(a), *strides = PyArray_STRIDES(a);
    while (outer > 0 && (dims[outer - 1] == 1 || strides[outer - 1] == (npy_intp)run))
        run *= (size_t)dims[--outer];
    if (outer == 0)
        return visit(ctx, p, run, 1, 0);
    int last = outer - 1;
    npy_intp idx[NPY_MAXDIMS] = {0};
    for (;;) {
        int r = visit(ctx, p, run, dims[last], strides[last]);
        if (r != 0)
            return r;
        /* the next index in C order over the axes before last, p following */
        int k = last - 1;
        for (; k >= 0; k--) {
            if (++idx[k] < dims[k]) {
                p += strides[k];
                break;
            }
            p -= (dims[k] - 1) * strides[k];
            idx[k] = 0;
        }
        if (k < 0)
            return 0;
    }
}

static int
copy_runs(void *ctx, const char *p, size_t n, npy_intp count, npy_intp stride)
{
    char **to = ctx;
    for (npy_intp i = 0; i < count; i++, p += stride, *to += n)
        memcpy(*to, p, n);
    return 0;
}

static int
same_runs(void *ctx, const char *p, size_t n, npy_intp count, npy_intp stride)
{
    const char *at = *(const char **)ctx;
    /* (runs of one 8- or 4-byte element, a strided float64 or float32 view:
     * a constant size, so the compare is a load and a compare) */
    if (n == 8) {
        for (npy_intp i = 0; i < count; i++, p += stride, at += 8)
            if (memcmp(at, p, 8) != 0)
                return 1;
    } else if (n == 4) {
        for (npy_intp i = 0; i < count; i++, p += stride, at += 4)
            if (memcmp(at, p, 4) != 0)
                return 1;
    } else {
        for (npy_intp i = 0; i < count; i++, p += stride, at += n)
            if (memcmp(at, p, n) != 0)
                return 1;
    }
    *(const char **)ctx = at;
    return 0;
}

/* Whether ndarray a is one whose elements a byte compare can stand for:
 * exactly an ndarray (a subclass's items may mean more) whose dtype holds
 * no Python objects (their bytes are addresses: an object changed inside,
 * or freed and another made at its address, keeps them) and means no more
 * than the layout record says (a.dtype = 'm8[s]' over 'm8[ms]', or other
 * field names of the same size, keep type number, size and byte order). */
static bool
bytes_comparable(PyObject *obj)
{
    if (!PyArray_CheckExact(obj))
        return false;
    PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)obj);
    return !PyDataType_REFCHK(d) && !PyDataType_HASFIELDS(d) && d->type_num != NPY_DATETIME &&
           d->type_num != NPY_TIMEDELTA;
}

PyObject *
hop_py__np_contents(PyObject *mod, PyObject *obj)
{
    (void)mod;
    if (!hop_py__np_ready() || !bytes_comparable(obj))
        Py_RETURN_NONE;
    PyArrayObject *a = (PyArrayObject *)obj;
    np_layout l;
    size_t n = layout_of(a, &l);
    size_t data = (size_t)PyArray_SIZE(a) * (size_t)PyArray_ITEMSIZE(a);
    PyObject *r = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n + data));
    if (r == NULL)
        return NULL;
    char *to = PyBytes_AS_STRING(r);
    memcpy(to, &l, n);
    to += n;
    walk_elements(a, copy_runs, &to);
    return r;
}

PyObject *
hop_py__np_same_contents(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_np_same_contents(a, contents): 2 arguments");
        return NULL;
    }
    /* (not bytes: the guard of an array whose contents hop cannot compare) */
    if (np_state <= 0 || !PyBytes_Check(args[1]) || !bytes_comparable(args[0]))
        Py_RETURN_FALSE;
    PyArrayObject *a = (PyArrayObject *)args[0];
    np_layout l;
    size_t n = layout_of(a, &l);
    size_t data = (size_t)PyArray_SIZE(a) * (size_t)PyArray_ITEMSIZE(a);
    const char *at = PyBytes_AS_STRING(args[1]);
    if ((size_t)PyBytes_GET_SIZE(args[1]) != n + data || memcmp(at, &l, n) != 0)
        Py_RETURN_FALSE;
    at += n;
    if (walk_elements(a, same_runs, &at) != 0)
        Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

PyObject *
hop_py__np_element(const hop_tensor *t)
{
    if (!hop_py__np_ready())
        return NULL;
    PyArray_Descr *descr = PyArray_DescrFromType(to_type_num(t->dtype));
    if (descr == NULL)
        return NULL;
    PyObject *r = PyArray_Scalar(t->data, descr, NULL);
    Py_DECREF(descr);
    return r;
}

#else /* no NumPy headers: the buffer protocol always */

int
hop_py__np_ready(void)
{
    return 0;
}

hop_tensor *
hop_py__np_borrow(PyObject *obj)
{
    (void)obj;
    return NULL;
}

int
hop_py__np_plain(PyObject *obj, int c_order)
{
    return plain_by_attr(obj, c_order);
}

PyObject *
hop_py__np_from_tensor(PyObject *tensor)
{
    (void)tensor;
    PyErr_SetString(PyExc_SystemError, "hop._C was built without NumPy's headers");
    return NULL;
}

PyObject *
hop_py__np_scalar(PyObject *arr)
{
    return arr;
}

PyObject *
hop_py__np_layout(PyObject *mod, PyObject *obj)
{
    (void)mod;
    (void)obj;
    Py_RETURN_NONE;
}

PyObject *
hop_py__np_same_layout(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    (void)args;
    (void)nargs;
    Py_RETURN_FALSE;
}

/* (None and False, as the layout's: the Python fallback compares) */
int
hop_py__np_is_laid_out(PyObject *obj, const void *ident, PyObject *layout)
{
    (void)obj;
    (void)ident;
    (void)layout;
    return 0;
}

PyObject *
hop_py__np_contents(PyObject *mod, PyObject *obj)
{
    return hop_py__np_layout(mod, obj);
}

PyObject *
hop_py__np_same_contents(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    return hop_py__np_same_layout(mod, args, nargs);
}

PyObject *
hop_py__np_element(const hop_tensor *t)
{
    (void)t;
    return NULL;
}

#endif
