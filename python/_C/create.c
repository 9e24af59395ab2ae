/*
 * python/_C/create.c - making tensors: hop.tensor from nested data (dtype
 * inferred as PyTorch does: bools -> bool, ints -> int64, floats ->
 * float32), hop.asarray over any buffer (NumPy zero-copy), zeros, ones,
 * full, arange, rand and randn (xoshiro256** seeded by splitmix64,
 * Box-Muller), and the runtime's thread setting.
 *
 * hop.asarray wraps a buffer through hop_tensor_wrap and keeps the
 * Py_buffer until the runtime storage dies, so views made later keep the
 * NumPy memory alive too.  Memory the runtime cannot describe (negative or
 * unaligned strides, misaligned data) and read-only buffers are copied, in
 * the memory order NumPy computes on them in (copy_order.c).
 */
#include "tensor_impl.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#define tname hop_py__tname

static PyObject *tensor_from_data(PyObject *data, PyObject *dtype_obj, const char *fname);

/* ------------------------------------------------------- NumPy and buffers */

#define supported_dtypes hop_py__supported_dtypes

/* The type character of a struct-module format of one native-order item,
 * or 0 ("<f" on a little-endian machine is 'f'; ">f" there is 0). */
static char
format_char(const char *fmt)
{
    const unsigned one = 1;
    const bool little = *(const char *)&one == 1;
    if (fmt == NULL)
        return 'B';
    if (*fmt == '@' || *fmt == '=' || (*fmt == '<' && little) || (*fmt == '>' && !little) ||
        (*fmt == '!' && !little))
        fmt++;
    if (fmt[0] == 'Z' && (fmt[1] == 'f' || fmt[1] == 'd') && fmt[2] == '\0')
        return fmt[1] == 'f' ? 'F' : 'D'; /* complex: our own codes */
    return fmt[0] != '\0' && fmt[1] == '\0' ? fmt[0] : 0;
}

/* The hop dtype of a struct-module format with its itemsize; -1 if none
 * (unsigned 16 and 32 bits have no hop dtype). */
static int
format_dtype(const char *fmt, Py_ssize_t itemsize, hop_dtype *out)
{
    switch (format_char(fmt)) {
    case '?':
        *out = HOP_BOOL;
        return itemsize == 1 ? 0 : -1;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
        if (itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8)
            return -1;
        *out = itemsize == 1 ? HOP_I8 : itemsize == 2 ? HOP_I16 : itemsize == 4 ? HOP_I32 : HOP_I64;
        return 0;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N':
        if (itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8)
            return -1;
        *out = itemsize == 1 ? HOP_U8 : itemsize == 2 ? HOP_U16 : itemsize == 4 ? HOP_U32 : HOP_U64;
        return 0;
    case 'e':
        *out = HOP_F16;
        return itemsize == 2 ? 0 : -1;
    case 'f':
        *out = HOP_F32;
        return itemsize == 4 ? 0 : -1;
    case 'd':
        *out = HOP_F64;
        return itemsize == 8 ? 0 : -1;
    case 'F':
        *out = HOP_C64;
        return itemsize == 8 ? 0 : -1;
    case 'D':
        *out = HOP_C128;
        return itemsize == 16 ? 0 : -1;
    default:
        return -1;
    }
}

/* The storage release callback of wrapped buffers: may run on any thread,
 * with or without the GIL. */
static void
release_buffer(void *user_data, void *data)
{
    Py_buffer *view = user_data;
    if (!Py_IsInitialized()) {
        /* Finalizing: the thread that finalizes holds the GIL and may still
         * release (module teardown frees the tensors that globals held).
         * Any other thread, or after the interpreter is gone (no thread
         * state for this thread): leaking beats crashing. */
        PyThreadState *mine = PyGILState_GetThisThreadState();
        if (mine != NULL && mine == _PyThreadState_UncheckedGet()) {
            PyBuffer_Release(view);
            PyMem_RawFree(view);
        }
        return;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    PyBuffer_Release(view);
    PyMem_RawFree(view);
    PyGILState_Release(g);
}

static PyObject *
unsupported_buffer(PyObject *obj, const char *fname, const char *fmt)
{
    PyObject *np_dtype = PyObject_GetAttrString(obj, "dtype");
    if (np_dtype != NULL) {
        PyErr_Format(hop_py_DTypeError, "%s(): NumPy dtype %S is not supported; %s", fname,
                     np_dtype, supported_dtypes());
        Py_DECREF(np_dtype);
    } else {
        PyErr_Clear();
        PyErr_Format(hop_py_DTypeError, "%s(): buffer format '%s' is not supported; %s", fname,
                     fmt != NULL ? fmt : "B", supported_dtypes());
    }
    return NULL;
}

/*
 * A Tensor over obj's buffer: zero-copy when the runtime can describe the
 * memory (strides >= 0 and multiples of the itemsize, aligned data) and it is
 * writable, else a copy in NumPy's memory order of it (copy_order.c; a
 * contiguous one when that is C order).  An unsupported element type is
 * DTypeError, unless a dtype is wanted and obj can convert itself (NumPy's
 * astype): then it is converted first.
 */
static PyObject *
wrap_buffer(PyObject *obj, const char *fname, const hop_py_opnd *want)
{
    Py_buffer *view = PyMem_RawMalloc(sizeof *view);
    bool copy = false;
    hop_dtype dt;
    int64_t sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK];
    if (view == NULL)
        return PyErr_NoMemory();
    if (PyObject_GetBuffer(obj, view, PyBUF_RECORDS) < 0) {
        PyErr_Clear();
        if (PyObject_GetBuffer(obj, view, PyBUF_RECORDS_RO) < 0) {
            PyMem_RawFree(view);
            /* NumPy refuses a buffer of a dtype it has no format for
             * (datetime64, timedelta64): hop has no such dtype either */
            if (PyErr_ExceptionMatches(PyExc_ValueError) && PyObject_HasAttrString(obj, "dtype")) {
                PyErr_Clear();
                return unsupported_buffer(obj, fname, NULL);
            }
            return NULL;
        }
        copy = true; /* read-only memory never gets a writable alias */
    }
    if (format_dtype(view->format, view->itemsize, &dt) < 0) {
        char fmt[16];
        snprintf(fmt, sizeof fmt, "%s", view->format != NULL ? view->format : "B");
        PyBuffer_Release(view);
        PyMem_RawFree(view);
        if ((fmt[0] == '<' || fmt[0] == '>' || fmt[0] == '!') && fmt[1] != '\0' &&
            PyObject_HasAttrString(obj, "astype") && PyObject_HasAttrString(obj, "dtype")) {
            /* the other byte order (a big-endian NumPy array): a copy in the
             * native order, as NumPy computes on it */
            PyObject *res = NULL, *native = NULL;
            PyObject *npd = PyObject_GetAttrString(obj, "dtype");
            if (npd != NULL)
                native = PyObject_CallMethod(npd, "newbyteorder", "s", "=");
            PyObject *conv = native ? PyObject_CallMethod(obj, "astype", "O", native) : NULL;
            if (conv != NULL)
                res = wrap_buffer(conv, fname, want);
            Py_XDECREF(conv);
            Py_XDECREF(native);
            Py_XDECREF(npd);
            return res != NULL || PyErr_Occurred() ? res : unsupported_buffer(obj, fname, fmt);
        }
        if (want->kind == HOP_PY_DTYPE && PyObject_HasAttrString(obj, "astype")) {
            PyObject *npd = hop_py_dtype_object(want->u.d);
            PyObject *conv = PyObject_CallMethod(obj, "astype", "O", npd);
            if (conv == NULL)
                return NULL;
            PyObject *res = wrap_buffer(conv, fname, want);
            Py_DECREF(conv);
            return res;
        }
        return unsupported_buffer(obj, fname, fmt);
    }
    if (view->ndim > HOP_MAX_RANK) {
        PyErr_Format(hop_py_ShapeError, "%s(): the buffer has %d dims; hop tensors have at most %d",
                     fname, view->ndim, HOP_MAX_RANK);
        PyBuffer_Release(view);
        PyMem_RawFree(view);
        return NULL;
    }
    int rank = view->ndim;
    int64_t numel = 1, extent = 0, esize = view->itemsize;
    for (int i = rank - 1; i >= 0; i--) {
        sizes[i] = view->shape[i];
        int64_t bst = view->strides != NULL ? view->strides[i] : numel * esize;
        numel *= sizes[i];
        if (sizes[i] <= 1 && (bst < 0 || bst % esize != 0))
            bst = 0; /* a stride a size-1 dim never uses (NumPy's, where hop can hold it) */
        if (bst < 0 || bst % esize != 0)
            copy = true;
        strides[i] = bst / esize;
        extent += (sizes[i] - 1) * (bst < 0 ? 0 : bst);
    }
    if (numel == 0 || (uintptr_t)view->buf % (uintptr_t)esize != 0)
        copy = true;
    hop_tensor *t;
    if (!copy) {
        t = hop_tensor_wrap(dt, rank, sizes, strides, view->buf, (size_t)(extent + esize),
                            release_buffer, view);
        if (t == NULL) {
            PyBuffer_Release(view);
            PyMem_RawFree(view);
            return hop_py_raise();
        }
        PyObject *res = hop_py_tensor_new(t); /* on failure, t's release frees view */
        if (res != NULL)
            HOP_PY_TENSOR(res)->base = Py_NewRef(obj);
        return res;
    }
    if (view->len != numel * esize) {
        PyErr_Format(PyExc_BufferError, "%s(): the buffer's length %zd is not its %lld elements",
                     fname, view->len, (long long)numel);
        PyBuffer_Release(view);
        PyMem_RawFree(view);
        return NULL;
    }
    bool c_order = true;
    if (numel > 0 && view->strides != NULL) {
        t = hop_py__copy_in_order(view, dt, sizes, numel, &c_order);
        if (!c_order) {
            PyBuffer_Release(view);
            PyMem_RawFree(view);
            return t != NULL ? hop_py_tensor_new(t) : hop_py_raise();
        }
    }
    t = hop_tensor_empty(dt, rank, sizes);
    if (t != NULL && numel > 0 && PyBuffer_ToContiguous(t->data, view, view->len, 'C') < 0) {
        hop_tensor_release(t);
        PyBuffer_Release(view);
        PyMem_RawFree(view);
        return NULL;
    }
    PyBuffer_Release(view);
    PyMem_RawFree(view);
    return hop_py_tensor_new(t);
}

/* The tensor of an object whose type has __hop_tensor__ (a hop.numpy
 * array, concrete or traced): a new reference; NULL with no error set when
 * the type has none; NULL with an error when the method fails or gives
 * something else than a Tensor. */
static PyObject *
hop_tensor_of(PyObject *obj, const char *fname)
{
    PyObject *get = PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__hop_tensor__");
    if (get == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError))
            PyErr_Clear();
        return NULL;
    }
    PyObject *t = PyObject_CallOneArg(get, obj);
    Py_DECREF(get);
    if (t != NULL && !HOP_PY_IS_TENSOR(t)) {
        PyErr_Format(PyExc_TypeError, "%s(): %.100s.__hop_tensor__() returned %.100s, not a Tensor",
                     fname, tname(obj), tname(t));
        Py_CLEAR(t);
    }
    return t;
}

/* hop.asarray(obj, dtype=None): no copy for Tensors, hop.numpy arrays and
 * buffers of the wanted dtype; a converted copy otherwise; lists go through
 * tensor(). */
PyObject *
hop_py__asarray(PyObject *obj, PyObject *dtype_obj, const char *fname)
{
    hop_py_opnd want;
    PyObject *res;
    hop_dtype have;
    if (hop_py__to_dtype_opnd(fname, dtype_obj, &want) < 0)
        return NULL;
    if (HOP_PY_IS_TENSOR(obj))
        res = Py_NewRef(obj);
    else if (PyObject_CheckBuffer(obj))
        res = wrap_buffer(obj, fname, &want);
    else if ((res = hop_tensor_of(obj, fname)) == NULL)
        return PyErr_Occurred() ? NULL : tensor_from_data(obj, dtype_obj, fname);
    if (res == NULL || want.kind != HOP_PY_DTYPE)
        return res;
    if (hop_py__tensor_dtype(HOP_PY_TENSOR(res), &have) < 0) {
        Py_DECREF(res);
        return NULL;
    }
    if (have != want.u.d)
        Py_SETREF(res, hop_py__to(res, want.u.d));
    return res;
}

static PyObject *
f_asarray(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"obj", "dtype"};
    PyObject *a[2];
    if (hop_py__parse_args("asarray", names, 2, 1, args, nargs, kwnames, a) < 0)
        return NULL;
    return hop_py__asarray(a[0], a[1], "asarray");
}

/* --------------------------------------------------------- hop.tensor() */

/* A scalar element of nested data. */
typedef struct leaf {
    int kind;      /* 0 bool, 1 int, 2 float, 3 complex */
    int64_t i;     /* kinds 0, 1 (unless overflow) */
    double f;      /* every kind (a complex: its real part) */
    double im;     /* kind 3: the imaginary part (0 for the others) */
    bool overflow; /* an int beyond int64: f holds it, and u when u_ok */
    bool u_ok;     /* an int in (INT64_MAX, UINT64_MAX] exactly in u */
    uint64_t u;
    PyObject *obj; /* borrowed, for messages */
} leaf;

static void
leaf_from_element(leaf *l, const void *p, hop_dtype d)
{
    l->kind = d == HOP_BOOL ? 0 : hop_dtype_is_complex(d) ? 3 : hop_dtype_is_float(d) ? 2 : 1;
    l->f = hop_py__element_double(p, d);
    l->im = d == HOP_C64 ? ((const float *)p)[1] : d == HOP_C128 ? ((const double *)p)[1] : 0;
    l->i = (int64_t)l->f;
    switch (d) {
    case HOP_I8:
        l->i = *(const int8_t *)p;
        break;
    case HOP_U8:
        l->i = *(const uint8_t *)p;
        break;
    case HOP_U16:
        l->i = *(const uint16_t *)p;
        break;
    case HOP_U32:
        l->i = *(const uint32_t *)p;
        break;
    case HOP_I16:
        l->i = *(const int16_t *)p;
        break;
    case HOP_I32:
        l->i = *(const int32_t *)p;
        break;
    case HOP_I64:
        l->i = *(const int64_t *)p;
        break;
    case HOP_U64:
        l->u = *(const uint64_t *)p;
        l->overflow = l->u_ok = l->u > INT64_MAX;
        l->i = l->u_ok ? 0 : (int64_t)l->u;
        break;
    default:
        break;
    }
}

/* Reads a 0-d buffer element of any standard numeric format. */
static int
leaf_from_buffer(leaf *l, const Py_buffer *v)
{
    const void *p = v->buf;
    l->kind = 1;
    switch (format_char(v->format)) {
#define HOP_PY_INT_FMT(ch, ctype)                                                                  \
    case ch:                                                                                       \
        l->f = (double)*(const ctype *)p;                                                          \
        l->overflow = (double)*(const ctype *)p >= 9223372036854775808.0;                          \
        l->u_ok = l->overflow;                                                                     \
        l->u = (uint64_t) * (const ctype *)p;                                                      \
        l->i = l->overflow ? 0 : (int64_t) * (const ctype *)p;                                     \
        return 0;
        HOP_PY_INT_FMT('b', signed char)
        HOP_PY_INT_FMT('B', unsigned char)
        HOP_PY_INT_FMT('h', short)
        HOP_PY_INT_FMT('H', unsigned short)
        HOP_PY_INT_FMT('i', int)
        HOP_PY_INT_FMT('I', unsigned int)
        HOP_PY_INT_FMT('l', long)
        HOP_PY_INT_FMT('L', unsigned long)
        HOP_PY_INT_FMT('q', long long)
        HOP_PY_INT_FMT('Q', unsigned long long)
#undef HOP_PY_INT_FMT
    case '?':
        l->kind = 0;
        l->i = *(const unsigned char *)p != 0;
        l->f = (double)l->i;
        return 0;
    case 'e':
        l->kind = 2;
        l->f = hop_f16_to_float(*(const uint16_t *)p);
        return 0;
    case 'f':
        l->kind = 2;
        l->f = *(const float *)p;
        return 0;
    case 'd':
        l->kind = 2;
        l->f = *(const double *)p;
        return 0;
    case 'F':
        l->kind = 3;
        l->f = ((const float *)p)[0];
        l->im = ((const float *)p)[1];
        return 0;
    case 'D':
        l->kind = 3;
        l->f = ((const double *)p)[0];
        l->im = ((const double *)p)[1];
        return 0;
    default:
        return 1;
    }
}

/* Classifies a leaf: 0 a scalar (in *l), 1 an array-like (a Tensor or
 * buffer with dims: tensor() then stacks), -1 error. */
static int
read_leaf(const char *fname, PyObject *o, leaf *l)
{
    l->obj = o;
    l->overflow = l->u_ok = false;
    l->im = 0;
    if (PyComplex_Check(o)) {
        l->kind = 3;
        l->f = PyComplex_RealAsDouble(o);
        l->im = PyComplex_ImagAsDouble(o);
        return 0;
    }
    if (PyBool_Check(o)) {
        l->kind = 0;
        l->i = o == Py_True;
        l->f = (double)l->i;
        return 0;
    }
    if (PyLong_Check(o)) {
        int overflow;
        l->kind = 1;
        l->i = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (l->i == -1 && PyErr_Occurred())
            return -1;
        l->overflow = overflow != 0;
        if (overflow > 0) {
            l->u = PyLong_AsUnsignedLongLong(o);
            l->u_ok = !(l->u == (uint64_t)-1 && PyErr_Occurred());
            PyErr_Clear();
        }
        l->f = overflow ? PyLong_AsDouble(o) : (double)l->i;
        if (l->f == -1.0 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError))
                return -1;
            PyErr_Clear(); /* beyond double: only an error if a dtype cannot take it */
            l->f = overflow > 0 ? INFINITY : -INFINITY;
        }
        return 0;
    }
    if (PyFloat_Check(o)) {
        l->kind = 2;
        l->f = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    if (HOP_PY_IS_TENSOR(o)) {
        if (HOP_PY_TENSOR(o)->t == NULL || HOP_PY_TENSOR(o)->t->rank > 0)
            return 1;
        leaf_from_element(l, HOP_PY_TENSOR(o)->t->data, HOP_PY_TENSOR(o)->t->dtype);
        return 0;
    }
    if (PyObject_CheckBuffer(o) && !PyBytes_Check(o) && !PyByteArray_Check(o)) {
        Py_buffer v;
        if (PyObject_GetBuffer(o, &v, PyBUF_RECORDS_RO) < 0)
            return -1;
        int ndim = v.ndim;
        int r = ndim > 0 ? 1 : leaf_from_buffer(l, &v);
        PyBuffer_Release(&v);
        if (r == 0 || ndim > 0)
            return r; /* a scalar, or an array to stack */
    }
    PyErr_Format(PyExc_TypeError, "%s(): elements must be numbers or bools, not %.100s", fname,
                 tname(o));
    return -1;
}

typedef struct nested {
    int rank;
    int64_t sizes[HOP_MAX_RANK];
    int kind; /* highest leaf kind; -1 without leaves */
} nested;

static bool
is_seq(PyObject *o)
{
    return PyList_Check(o) || PyTuple_Check(o);
}

/* The shape of nested lists, read along the first elements. */
static int
nested_shape(const char *fname, PyObject *o, nested *n)
{
    n->rank = 0;
    n->kind = -1;
    while (is_seq(o)) {
        if (n->rank == HOP_MAX_RANK) {
            PyErr_Format(hop_py_ShapeError,
                         "%s(): data is nested deeper than %d levels; hop tensors have at most %d "
                         "dims",
                         fname, HOP_MAX_RANK, HOP_MAX_RANK);
            return -1;
        }
        Py_ssize_t len = PySequence_Fast_GET_SIZE(o);
        n->sizes[n->rank++] = len;
        if (len == 0)
            break;
        o = PySequence_Fast_GET_ITEM(o, 0);
    }
    return 0;
}

/* Checks that o has the shape (ShapeError) and finds the leaves' kind.
 * 1 when a leaf is array-like. */
static int
nested_scan(const char *fname, PyObject *o, int depth, nested *n)
{
    if (depth < n->rank) {
        if (!is_seq(o)) {
            if (HOP_PY_IS_TENSOR(o) || PyObject_CheckBuffer(o))
                return 1;
            PyErr_Format(hop_py_ShapeError,
                         "%s(): expected a sequence of length %lld at dim %d, got %.100s", fname,
                         (long long)n->sizes[depth], depth, tname(o));
            return -1;
        }
        Py_ssize_t len = PySequence_Fast_GET_SIZE(o);
        if (len != n->sizes[depth]) {
            PyErr_Format(hop_py_ShapeError,
                         "%s(): expected a sequence of length %lld at dim %d (got %zd)", fname,
                         (long long)n->sizes[depth], depth, len);
            return -1;
        }
        for (Py_ssize_t i = 0; i < len; i++) {
            int r = nested_scan(fname, PySequence_Fast_GET_ITEM(o, i), depth + 1, n);
            if (r != 0)
                return r;
        }
        return 0;
    }
    if (is_seq(o)) {
        PyErr_Format(hop_py_ShapeError,
                     "%s(): expected a number at dim %d, got a sequence of length %zd", fname,
                     depth, PySequence_Fast_GET_SIZE(o));
        return -1;
    }
    leaf l;
    int r = read_leaf(fname, o, &l);
    if (r == 0 && l.kind > n->kind)
        n->kind = l.kind;
    return r;
}

/* Float to integer as the runtime's `to`: truncation, saturation, nan 0. */
static int64_t
saturate(double f, int64_t lo, int64_t hi)
{
    if (isnan(f))
        return 0;
    if (f <= (double)lo)
        return lo;
    if (f >= (double)hi)
        return hi;
    return (int64_t)f;
}

/* An integer leaf into the range [lo, hi] of dtype d (OverflowError
 * outside it); a float leaf saturates as the runtime's `to` does. */
static int
int_leaf(const char *fname, const leaf *l, hop_dtype d, int64_t lo, int64_t hi, int64_t *out)
{
    if (l->kind >= 2) { /* a complex's real part, as the runtime's `to` */
        *out = saturate(l->f, lo, hi);
        return 0;
    }
    if (l->overflow || l->i < lo || l->i > hi) {
        PyErr_Format(PyExc_OverflowError, "%s(): %R does not fit in %s", fname, l->obj,
                     hop_py__dtype_pyname(d));
        return -1;
    }
    *out = l->i;
    return 0;
}

static int
store_leaf(const char *fname, const leaf *l, hop_dtype d, char *p)
{
    int64_t v;
    switch (d) {
    case HOP_BOOL:
        *(uint8_t *)p = l->kind >= 2 || l->overflow ? l->f != 0 || l->im != 0 : l->i != 0;
        return 0;
    case HOP_I8:
        if (int_leaf(fname, l, d, INT8_MIN, INT8_MAX, &v) < 0)
            return -1;
        *(int8_t *)p = (int8_t)v;
        return 0;
    case HOP_U8:
        if (int_leaf(fname, l, d, 0, UINT8_MAX, &v) < 0)
            return -1;
        *(uint8_t *)p = (uint8_t)v;
        return 0;
    case HOP_U16:
        if (int_leaf(fname, l, d, 0, UINT16_MAX, &v) < 0)
            return -1;
        *(uint16_t *)p = (uint16_t)v;
        return 0;
    case HOP_U32:
        if (int_leaf(fname, l, d, 0, UINT32_MAX, &v) < 0)
            return -1;
        *(uint32_t *)p = (uint32_t)v;
        return 0;
    case HOP_I16:
        if (int_leaf(fname, l, d, INT16_MIN, INT16_MAX, &v) < 0)
            return -1;
        *(int16_t *)p = (int16_t)v;
        return 0;
    case HOP_I32:
        if (int_leaf(fname, l, d, INT32_MIN, INT32_MAX, &v) < 0)
            return -1;
        *(int32_t *)p = (int32_t)v;
        return 0;
    case HOP_I64:
        if (int_leaf(fname, l, d, INT64_MIN, INT64_MAX, &v) < 0)
            return -1;
        *(int64_t *)p = v;
        return 0;
    case HOP_U64:
        if (l->kind != 2 && l->u_ok) {
            *(uint64_t *)p = l->u;
            return 0;
        }
        if (l->kind >= 2) {
            /* saturate to [0, 2^64 - 1] */
            double f = l->f;
            *(uint64_t *)p = isnan(f) || f <= 0            ? 0
                             : f >= 18446744073709551616.0 ? UINT64_MAX
                                                           : (uint64_t)f;
            return 0;
        }
        if (int_leaf(fname, l, d, 0, INT64_MAX, &v) < 0)
            return -1;
        *(uint64_t *)p = (uint64_t)v;
        return 0;
    case HOP_F16:
        *(uint16_t *)p = hop_f16_from_double(l->f);
        return 0;
    case HOP_F32:
        *(float *)p = (float)l->f;
        return 0;
    case HOP_C64:
        ((float *)p)[0] = (float)l->f;
        ((float *)p)[1] = (float)l->im;
        return 0;
    case HOP_C128:
        ((double *)p)[0] = l->f;
        ((double *)p)[1] = l->im;
        return 0;
    default:
        break;
    }
    *(double *)p = l->f;
    return 0;
}

static int
nested_fill(const char *fname, PyObject *o, int depth, const nested *n, hop_dtype d, char **p)
{
    if (depth < n->rank) {
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); i++) {
            if (nested_fill(fname, PySequence_Fast_GET_ITEM(o, i), depth + 1, n, d, p) < 0)
                return -1;
        }
        return 0;
    }
    leaf l;
    if (read_leaf(fname, o, &l) != 0 || store_leaf(fname, &l, d, *p) < 0)
        return -1;
    *p += hop_dtype_size(d);
    return 0;
}

/* tensor() of a sequence with array-like items: each item is converted,
 * the items are promoted to one dtype and stacked. */
static PyObject *
stack_items(const char *fname, PyObject *seq, PyObject *dtype_obj)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *items = PyList_New(n), *res = NULL;
    hop_dtype common = HOP_BOOL, d;
    if (items == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = tensor_from_data(PySequence_Fast_GET_ITEM(seq, i), NULL, fname);
        if (t == NULL || hop_py__tensor_dtype(HOP_PY_TENSOR(t), &d) < 0) {
            Py_XDECREF(t);
            goto done;
        }
        common = i == 0 ? d : hop_dtype_promote(common, d);
        PyList_SET_ITEM(items, i, t);
    }
    if (dtype_obj != NULL && dtype_obj != Py_None && hop_py_dtype_from_object(dtype_obj, &common))
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(items, i);
        if (hop_py__tensor_dtype(HOP_PY_TENSOR(t), &d) < 0)
            goto done;
        if (d != common) {
            PyObject *c = hop_py__to(t, common);
            if (c == NULL)
                goto done;
            PyList_SetItem(items, i, c);
        }
    }
    PyObject *args[1] = {items};
    res = hop_py__concat(fname, HOP_OP_stack, args, 1, NULL);
done:
    Py_DECREF(items);
    return res;
}

static PyObject *
tensor_from_data(PyObject *data, PyObject *dtype_obj, const char *fname)
{
    hop_py_opnd want;
    nested n;
    hop_dtype d;
    if (hop_py__to_dtype_opnd(fname, dtype_obj, &want) < 0)
        return NULL;
    if (!HOP_PY_IS_TENSOR(data) &&
        PyObject_HasAttrString((PyObject *)Py_TYPE(data), "__hop_tensor__")) {
        /* a hop.numpy array: its tensor (concrete or traced) */
        PyObject *t = PyObject_CallMethod(data, "__hop_tensor__", NULL);
        if (t == NULL)
            return NULL;
        PyObject *res = HOP_PY_IS_TENSOR(t) ? tensor_from_data(t, dtype_obj, fname) : NULL;
        if (res == NULL && !PyErr_Occurred())
            PyErr_Format(PyExc_TypeError,
                         "%s(): __hop_tensor__ of %.100s gave %.100s, not a "
                         "Tensor",
                         fname, tname(data), tname(t));
        Py_DECREF(t);
        return res;
    }
    if (HOP_PY_IS_TENSOR(data) || (!is_seq(data) && PyObject_CheckBuffer(data) &&
                                   !PyBytes_Check(data) && !PyByteArray_Check(data))) {
        /* A copy: of a Tensor, or of the buffer wrapped without one. */
        PyObject *src = HOP_PY_IS_TENSOR(data) ? Py_NewRef(data) : wrap_buffer(data, fname, &want);
        if (src == NULL || hop_py__tensor_dtype(HOP_PY_TENSOR(src), &d) < 0) {
            Py_XDECREF(src);
            return NULL;
        }
        PyObject *res = want.kind == HOP_PY_DTYPE && want.u.d != d
                            ? hop_py__to(src, want.u.d)
                            : hop_py__unary(HOP_OP_clone, src);
        Py_DECREF(src);
        return res;
    }
    if (!is_seq(data) && !PyBool_Check(data) && !PyLong_Check(data) && !PyFloat_Check(data) &&
        !PyComplex_Check(data)) {
        PyErr_Format(PyExc_TypeError,
                     "%s(): data must be a number, a bool, a list or tuple, a NumPy array, a "
                     "hop.numpy array or a Tensor, not %.100s",
                     fname, tname(data));
        return NULL;
    }
    if (nested_shape(fname, data, &n) < 0)
        return NULL;
    int r = nested_scan(fname, data, 0, &n);
    if (r < 0)
        return NULL;
    if (r == 1)
        return stack_items(fname, data, dtype_obj);
    d = want.kind == HOP_PY_DTYPE ? want.u.d
        : n.kind == 0             ? HOP_BOOL
        : n.kind == 1             ? HOP_I64
        : n.kind == 3             ? HOP_C64
                                  : HOP_F32;
    hop_tensor *t = hop_tensor_empty(d, n.rank, n.sizes);
    if (t == NULL)
        return hop_py_raise();
    char *p = t->data;
    if (nested_fill(fname, data, 0, &n, d, &p) < 0) {
        hop_tensor_release(t);
        return NULL;
    }
    return hop_py_tensor_new(t);
}

static PyObject *
f_tensor(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"data", "dtype"};
    PyObject *a[2];
    if (hop_py__parse_args("tensor", names, 2, 1, args, nargs, kwnames, a) < 0)
        return NULL;
    return tensor_from_data(a[0], a[1], "tensor");
}

/* ------------------------------------------------------------ factories */

/* The size of a factory (zeros, rand, ...): its positional arguments
 * (`zeros(2, 3)`, `zeros((2, 3))`) or its keyword size (`zeros(size=(2,
 * 3))`), into objs[n]; -1 with a TypeError for both or neither. */
static int
factory_size(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *const *size,
             PyObject *const **objs, Py_ssize_t *n)
{
    *objs = args;
    *n = nargs;
    if (*size != NULL) {
        if (nargs > 0) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument 'size'", fname);
            return -1;
        }
        *objs = size;
        *n = 1;
    }
    if (*n == 0) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'size'", fname);
        return -1;
    }
    return 0;
}

/* zeros(*size, dtype=None) and ones(*size, dtype=None). */
static PyObject *
fill_factory(const char *fname, hop_op op, PyObject *const *args, Py_ssize_t nargs,
             PyObject *kwnames)
{
    static const char *const names[] = {"size", "dtype"};
    PyObject *kw[2], *const *objs;
    Py_ssize_t n;
    hop_py_opnd opnds[2], items[HOP_MAX_RANK];
    if (hop_py__parse_kwonly(fname, names, 2, args, nargs, kwnames, kw) < 0 ||
        factory_size(fname, args, nargs, &kw[0], &objs, &n) < 0)
        return NULL;
    if (hop_py__to_shape_opnd(fname, "size", objs, n, &opnds[0], items) < 0 ||
        hop_py__to_dtype_opnd(fname, kw[1], &opnds[1]) < 0)
        return NULL;
    return hop_py_run_op(op, opnds, 2);
}

static PyObject *
f_zeros(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return fill_factory("zeros", HOP_OP_zeros, args, nargs, kwnames);
}

static PyObject *
f_ones(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return fill_factory("ones", HOP_OP_ones, args, nargs, kwnames);
}

/*
 * full(size, sf, dtype) of a hop.SymFloat sf (its float64 tensor t): eagerly
 * a Python float, rounded to dtype (float32 for None), so t converted to that
 * float dtype and expanded to size, in a tensor of its own.  A dtype that is
 * not a float one converts the float as Python's int() would decide at run
 * time: a TypeError naming the SymFloat.
 */
static PyObject *
full_symfloat(PyObject *sf, PyObject *t, const hop_py_opnd *size, const hop_py_opnd *dtype)
{
    hop_dtype d = dtype->kind == HOP_PY_DTYPE ? dtype->u.d : HOP_F32;
    if (!hop_dtype_is_float(d)) {
        /* its _text, not str(sf): that asks the user's frame (hop/_breaks.py) */
        PyObject *text = PyObject_GetAttrString(sf, "_text");
        if (text == NULL)
            return NULL;
        PyErr_Format(PyExc_TypeError,
                     "full(): argument 'fill_value' is SymFloat %S, a float known only at run "
                     "time, and dtype %s is not a float dtype: hop fills float dtypes with a "
                     "SymFloat; use a float dtype and .to(hop.%s), or an int fill value",
                     text, hop_py__dtype_pyname(d), hop_py__dtype_pyname(d));
        Py_DECREF(text);
        return NULL;
    }
    PyObject *v = hop_py__to(t, d);
    if (v == NULL)
        return NULL;
    hop_py_opnd ops[2];
    hop_py__set_tensor_opnd(&ops[0], v);
    ops[1] = *size;
    PyObject *e = hop_py_run_op(HOP_OP_expand, ops, 2);
    Py_DECREF(v);
    if (e == NULL)
        return NULL;
    PyObject *r = hop_py__unary(HOP_OP_clone, e);
    Py_DECREF(e);
    return r;
}

static PyObject *
f_full(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"size", "fill_value", "dtype"};
    PyObject *a[3], *tmp = NULL;
    hop_py_opnd opnds[3], items[HOP_MAX_RANK];
    if (hop_py__parse_args("full", names, 3, 2, args, nargs, kwnames, a) < 0 ||
        hop_py__to_shape_opnd("full", "size", &a[0], 1, &opnds[0], items) < 0 ||
        hop_py__to_dtype_opnd("full", a[2], &opnds[2]) < 0)
        return NULL;
    if (opnds[2].kind == HOP_PY_DTYPE && opnds[2].u.d == HOP_U64 && PyLong_Check(a[1]) &&
        !PyBool_Check(a[1])) {
        /* A uint64 fill value beyond int64: op scalars are int64, and the
         * full kernel's conversion to uint64 wraps, so pass its bits. */
        int overflow;
        (void)PyLong_AsLongLongAndOverflow(a[1], &overflow);
        if (overflow > 0) {
            unsigned long long u = PyLong_AsUnsignedLongLong(a[1]);
            if (u == (unsigned long long)-1 && PyErr_Occurred()) {
                PyErr_Clear();
                PyErr_Format(PyExc_OverflowError, "full(): %R does not fit in uint64", a[1]);
                return NULL;
            }
            opnds[1].kind = HOP_PY_INT;
            opnds[1].u.i = (long long)u;
            return hop_py_run_op(HOP_OP_full, opnds, 3);
        }
    }
    int r = hop_py__value_opnd("full", a[1], &opnds[1], &tmp);
    if (r == 0 && opnds[1].kind == HOP_PY_SYMFLOAT) {
        PyObject *res = full_symfloat(a[1], tmp, &opnds[0], &opnds[2]);
        Py_DECREF(tmp);
        return res;
    }
    Py_XDECREF(tmp);
    if (r < 0)
        return NULL;
    if (r == 1 || opnds[1].kind == HOP_PY_TENSOR) {
        PyErr_Format(PyExc_TypeError,
                     "full(): argument 'fill_value' must be a number or a bool, not %.100s",
                     tname(a[1]));
        return NULL;
    }
    return hop_py_run_op(HOP_OP_full, opnds, 3);
}

/* A number argument of arange: an int or SymInt operand, or a float. */
static int
arange_number(PyObject *o, const char *arg, hop_py_opnd *out, bool *is_float)
{
    if (PyFloat_Check(o)) {
        out->kind = HOP_PY_FLOAT;
        out->u.f = PyFloat_AS_DOUBLE(o);
        *is_float = true;
        return 0;
    }
    if (HOP_PY_IS_SYM(o) || PyLong_Check(o) || PyIndex_Check(o))
        return hop_py__to_size_opnd("arange", arg, o, out);
    PyErr_Format(PyExc_TypeError, "arange(): argument '%s' must be a number, not %.100s", arg,
                 tname(o));
    return -1;
}

static double
opnd_double(const hop_py_opnd *o)
{
    return o->kind == HOP_PY_FLOAT ? o->u.f : (double)o->u.i;
}

/*
 * arange(start, end=None, step=1, dtype=None).  Ints (and SymInts) are the
 * arange op.  Floats, which the op does not take, are arange(n) in float64
 * times step plus start, as NumPy computes them: n = ceil((end-start)/step).
 */
static PyObject *
f_arange(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"start", "end", "step", "dtype"};
    PyObject *a[4];
    hop_py_opnd o[4];
    bool is_float = false;
    if (hop_py__parse_args("arange", names, 4, 1, args, nargs, kwnames, a) < 0)
        return NULL;
    if (a[1] == NULL || a[1] == Py_None) {
        a[1] = a[0];
        a[0] = NULL;
    }
    o[0].kind = o[2].kind = HOP_PY_INT;
    o[0].u.i = 0;
    o[2].u.i = 1;
    if ((a[0] != NULL && arange_number(a[0], "start", &o[0], &is_float) < 0) ||
        arange_number(a[1], "end", &o[1], &is_float) < 0 ||
        (a[2] != NULL && arange_number(a[2], "step", &o[2], &is_float) < 0) ||
        hop_py__to_dtype_opnd("arange", a[3], &o[3]) < 0)
        return NULL;
    if (!is_float)
        return hop_py_run_op(HOP_OP_arange, o, 4);
    for (int i = 0; i < 3; i++) {
        if (o[i].kind == HOP_PY_SYM) {
            PyErr_SetString(PyExc_TypeError,
                            "arange(): float arguments cannot be mixed with SymInts");
            return NULL;
        }
    }
    double start = opnd_double(&o[0]), end = opnd_double(&o[1]), step = opnd_double(&o[2]);
    if (!isfinite(start) || !isfinite(end) || !isfinite(step) || step == 0) {
        hop_error(HOP_INVALID,
                  "arange: start, end and step must be finite and step nonzero, got "
                  "%g, %g and %g",
                  start, end, step);
        return hop_py_raise();
    }
    double count = ceil((end - start) / step);
    if (count < 0)
        count = 0;
    if (count > 1e15) {
        hop_error(HOP_NOMEM, "arange: %g elements are too many", count);
        return hop_py_raise();
    }
    hop_py_opnd idx_args[4];
    idx_args[0].kind = idx_args[1].kind = idx_args[2].kind = HOP_PY_INT;
    idx_args[0].u.i = 0;
    idx_args[1].u.i = (int64_t)count;
    idx_args[2].u.i = 1;
    idx_args[3].kind = HOP_PY_DTYPE;
    idx_args[3].u.d = HOP_F64;
    PyObject *r = hop_py_run_op(HOP_OP_arange, idx_args, 4);
    hop_py_opnd ops[2];
    ops[1].kind = HOP_PY_FLOAT;
    if (r != NULL) {
        hop_py__set_tensor_opnd(&ops[0], r);
        ops[1].u.f = step;
        Py_SETREF(r, hop_py_run_op(HOP_OP_mul, ops, 2));
    }
    if (r != NULL) {
        hop_py__set_tensor_opnd(&ops[0], r);
        ops[1].u.f = start;
        Py_SETREF(r, hop_py_run_op(HOP_OP_add, ops, 2));
    }
    hop_dtype d = o[3].kind == HOP_PY_DTYPE ? o[3].u.d : HOP_F32;
    if (r != NULL && d != HOP_F64)
        Py_SETREF(r, hop_py__to(r, d));
    return r;
}

/* ------------------------------------------------------ random numbers */

/* xoshiro256** (Blackman and Vigna), seeded by splitmix64. */
typedef struct rng {
    uint64_t s[4];
} rng;

static rng global_rng;

static uint64_t
splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static void
rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t
rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t
rng_next(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

#define TWO_PI 6.283185307179586476925286766559

/* Uniform in [0, 1) with every bit of the mantissa random. */
static double
rng_uniform(rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static void
rng_fill(rng *r, hop_tensor *t, bool normal)
{
    int64_t n = hop_tensor_numel(t);
    bool f32 = t->dtype == HOP_F32;
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (!normal) {
            /* float32 takes 24 bits, so that rounding can never give 1.0 */
            v = f32 ? (double)(rng_next(r) >> 40) * 0x1.0p-24 : rng_uniform(r);
        } else {
            /* Box-Muller; u1 in (0, 1] keeps log finite */
            double u1 = 1.0 - rng_uniform(r), u2 = rng_uniform(r);
            double rad = sqrt(-2.0 * log(u1)), z0 = rad * cos(TWO_PI * u2);
            if (i + 1 < n) {
                double z1 = rad * sin(TWO_PI * u2);
                if (f32)
                    ((float *)t->data)[i + 1] = (float)z1;
                else
                    ((double *)t->data)[i + 1] = z1;
            }
            v = z0;
        }
        if (f32)
            ((float *)t->data)[i] = (float)v;
        else
            ((double *)t->data)[i] = v;
        if (normal)
            i++;
    }
}

/*
 * rand(*size, seed=None, dtype=None) and randn(...): concrete only.  While
 * tracing, a seeded call is a constant of the graph (its numbers are the
 * same on every eager call too, and no one else holds the new tensor, so its
 * value cannot change); an unseeded one is a TraceError.
 */
static PyObject *
random_factory(const char *fname, bool normal, PyObject *const *args, Py_ssize_t nargs,
               PyObject *kwnames)
{
    static const char *const names[] = {"size", "seed", "dtype"};
    PyObject *kw[3], *const *objs;
    Py_ssize_t n;
    hop_py_opnd shape, items[HOP_MAX_RANK], dt;
    int64_t sizes[HOP_MAX_RANK];
    if (hop_py__parse_kwonly(fname, names, 3, args, nargs, kwnames, kw) < 0 ||
        factory_size(fname, args, nargs, &kw[0], &objs, &n) < 0)
        return NULL;
    if (hop_py__to_shape_opnd(fname, "size", objs, n, &shape, items) < 0 ||
        hop_py__to_dtype_opnd(fname, kw[2], &dt) < 0)
        return NULL;
    for (size_t i = 0; i < shape.u.list.n; i++) {
        if (items[i].kind == HOP_PY_SYM) {
            PyErr_Format(hop_py_TraceError,
                         "%s(): random tensors cannot be traced; make them outside the traced "
                         "function and pass them in",
                         fname);
            return NULL;
        }
        sizes[i] = items[i].u.i;
    }
    hop_dtype d = dt.kind == HOP_PY_DTYPE ? dt.u.d : HOP_F32;
    if (!hop_dtype_is_float(d)) {
        PyErr_Format(hop_py_DTypeError, "%s(): dtype must be float32 or float64, got hop.%s", fname,
                     d == HOP_BOOL  ? "bool"
                     : d == HOP_I32 ? "int32"
                                    : "int64");
        return NULL;
    }
    rng local, *r = &global_rng;
    if ((kw[1] == NULL || kw[1] == Py_None) && hop_py_tracing_active()) {
        /* Eagerly each call draws new numbers; a traced graph would keep
         * the ones drawn at trace time.  With a seed both give the same. */
        PyErr_Format(hop_py_TraceError,
                     "%s(): drawing from the global generator cannot be traced (the graph would "
                     "keep the numbers drawn at trace time); pass seed=, or make the tensor "
                     "outside the traced function and pass it in",
                     fname);
        return NULL;
    }
    if (kw[1] != NULL && kw[1] != Py_None) {
        if (!PyLong_Check(kw[1])) {
            PyErr_Format(PyExc_TypeError,
                         "%s(): argument 'seed' must be an int or None, not %.100s", fname,
                         tname(kw[1]));
            return NULL;
        }
        uint64_t seed = PyLong_AsUnsignedLongLongMask(kw[1]);
        if (seed == (uint64_t)-1 && PyErr_Occurred())
            return NULL;
        rng_seed(&local, seed);
        r = &local;
    }
    hop_tensor *t = hop_tensor_empty(d, (int)shape.u.list.n, sizes);
    if (t == NULL) {
        /* Name the caller, not the runtime function that refused. */
        char msg[512];
        const char *m = hop_error_message(), *skip = "hop_tensor_empty: ";
        snprintf(msg, sizeof msg, "%s", strncmp(m, skip, strlen(skip)) == 0 ? m + strlen(skip) : m);
        hop_error(hop_error_code(), "%s(): %s", fname, msg);
        return hop_py_raise();
    }
    rng_fill(r, t, normal);
    return hop_py_tensor_new(t);
}

static PyObject *
f_rand(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return random_factory("rand", false, args, nargs, kwnames);
}

static PyObject *
f_randn(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return random_factory("randn", true, args, nargs, kwnames);
}

static PyObject *
f_manual_seed(PyObject *mod, PyObject *seed)
{
    if (!PyLong_Check(seed)) {
        PyErr_Format(PyExc_TypeError, "manual_seed(): argument 'seed' must be an int, not %.100s",
                     tname(seed));
        return NULL;
    }
    uint64_t s = PyLong_AsUnsignedLongLongMask(seed);
    if (s == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    rng_seed(&global_rng, s);
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- misc */

static PyObject *
f_set_num_threads(PyObject *mod, PyObject *n)
{
    int64_t v;
    if (hop_py__to_int64("set_num_threads", "n", n, &v) < 0)
        return NULL;
    if (v < 0)
        return PyErr_Format(PyExc_ValueError,
                            "set_num_threads(): argument 'n' must be >= 0 (0: one thread per "
                            "core), got %lld",
                            (long long)v);
    /* The pool's dispatch lock is held by a running parallel map, whose
     * interrupt check takes the GIL: wait for the lock without the GIL. */
    Py_BEGIN_ALLOW_THREADS hop_runtime_set_threads(v > 1024 ? 1024 : (int)v);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *
f_get_num_threads(PyObject *mod, PyObject *unused)
{
    return PyLong_FromLong(hop_runtime_threads());
}

static PyObject *
f_pool_counts(PyObject *mod, PyObject *unused)
{
    hop_pool_counts c;
    hop_runtime_pool_counts(&c);
    return Py_BuildValue("{sl,sl,sl,sl}", "split", c.split, "whole", c.whole, "caller_pieces",
                         c.caller_pieces, "worker_pieces", c.worker_pieces);
}

static PyObject *
f_alloc_live(PyObject *mod, PyObject *unused)
{
    hop_py__warm_drop(); /* dead Tensors' blocks kept for reuse: free them */
    return PyLong_FromLong(hop_alloc_live());
}

static PyObject *
f_alloc_thread_live(PyObject *mod, PyObject *unused)
{
    hop_py__warm_drop(); /* as _alloc_live: kept blocks are not live */
    return PyLong_FromLong(hop_alloc_thread_live());
}

static PyObject *
f_alloc_count(PyObject *mod, PyObject *unused)
{
    return PyLong_FromLong(hop_alloc_count());
}

static PyObject *
f_alloc_bytes(PyObject *mod, PyObject *unused)
{
    return PyLong_FromLongLong(hop_alloc_bytes());
}

/* Fault injection for the allocation-failure tests: the k-th allocation of
 * the C library from now fails (k >= 1); 0 turns it off. */
static PyObject *
f_alloc_fail_at(PyObject *mod, PyObject *k)
{
    int64_t v;
    if (hop_py__to_int64("_alloc_fail_at", "k", k, &v) < 0)
        return NULL;
    if (v < 0)
        return PyErr_Format(PyExc_ValueError,
                            "_alloc_fail_at(): argument 'k' must be >= 0 (0: off), got %lld",
                            (long long)v);
    hop_alloc_fail_at(v > LONG_MAX ? LONG_MAX : (long)v);
    Py_RETURN_NONE;
}

static PyObject *
f_runtime_cleanup(PyObject *mod, PyObject *unused)
{
    /* The pool's threads keep eager state too (a worker that prepared a
     * kernel has a ShapeEnv): they exit and free it, and restart on demand.
     * Without the GIL: stopping them waits for the pool's lock. */
    Py_BEGIN_ALLOW_THREADS hop_runtime_shutdown();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------- tables */

/* Docstrings as ops.c's: text signature, what, an example run as a doctest
 * by tests/python/test_api.py. */
/* clang-format off */
PyMethodDef hop_py__create_functions[] = {
#define HOP_PY_F_FAST(name, doc) {#name, (PyCFunction)(void (*)(void))f_##name, HOP_PY_FASTKW, doc},
    HOP_PY_F_FAST(tensor, HOP_PY_SIG("tensor(data, dtype=None)")
        "A new tensor holding a copy of data: a number, nested lists or tuples of numbers, a "
        "NumPy array or a Tensor.  dtype defaults to data's (Python floats give float32, ints "
        "int64, bools bool; an array keeps its dtype).\n\n"
        ">>> hop.tensor([[1, 2]], dtype=hop.float64)\n"
        "hop.tensor([[1., 2.]], dtype=hop.float64)\n")
    HOP_PY_F_FAST(asarray, HOP_PY_SIG("asarray(obj, dtype=None)")
        "obj as a tensor, sharing its memory when it can (a Tensor, or a NumPy array of a "
        "supported dtype, writable and aligned: no copy, so later writes to the array are "
        "seen); otherwise a copy, laid out in the array's memory order with positive strides "
        "(a Fortran-ordered array's copy is Fortran-ordered).\n\n"
        ">>> import numpy as np\n"
        ">>> a = np.zeros(2, np.float32)\n"
        ">>> t = hop.asarray(a)\n"
        ">>> a[0] = 5\n"
        ">>> t\n"
        "hop.tensor([5., 0.])\n")
    HOP_PY_F_FAST(zeros, HOP_PY_SIG("zeros(*size, dtype=None)")
        "A tensor of zeros of the given sizes (as arguments or one sequence); dtype "
        "defaults to float32.\n\n"
        ">>> hop.zeros(2, 3, dtype=hop.int64)\n"
        "hop.tensor([[0, 0, 0],\n            [0, 0, 0]])\n")
    HOP_PY_F_FAST(ones, HOP_PY_SIG("ones(*size, dtype=None)")
        "A tensor of ones of the given sizes (as arguments or one sequence); dtype defaults "
        "to float32.\n\n"
        ">>> hop.ones((2,))\n"
        "hop.tensor([1., 1.])\n")
    HOP_PY_F_FAST(full, HOP_PY_SIG("full(size, fill_value, dtype=None)")
        "A tensor of shape size filled with fill_value; dtype defaults to fill_value's (a "
        "float gives float32, an int int64, a bool bool).\n\n"
        ">>> hop.full((2,), 7)\n"
        "hop.tensor([7, 7])\n")
    HOP_PY_F_FAST(arange, HOP_PY_SIG("arange(start, end=None, step=1, dtype=None)")
        "start, start + step, ... up to but excluding end (arange(n): 0 .. n - 1); int64 "
        "when every bound is an int, else float32.\n\n"
        ">>> hop.arange(1, 2, 0.25)\n"
        "hop.tensor([1.  , 1.25, 1.5 , 1.75])\n")
    HOP_PY_F_FAST(rand, HOP_PY_SIG("rand(*size, seed=None, dtype=None)")
        "Uniform random numbers in [0, 1) of the given sizes (float32 by default), from the "
        "global generator (hop.manual_seed) or, with seed, from a generator of that seed: "
        "the same numbers on every call, so it may be used while tracing (an unseeded call "
        "there is a hop.TraceError).\n\n"
        ">>> hop.rand(3, seed=0)\n"
        "hop.tensor([0.601263  , 0.74777406, 0.10301995])\n")
    HOP_PY_F_FAST(randn, HOP_PY_SIG("randn(*size, seed=None, dtype=None)")
        "Standard normal random numbers of the given sizes (float32 by default), from the "
        "global generator (hop.manual_seed) or, with seed, from a generator of that seed, "
        "as hop.rand.\n\n"
        ">>> hop.randn(2, 2, seed=1).shape\n"
        "(2, 2)\n")
#undef HOP_PY_F_FAST
    {"manual_seed", (PyCFunction)f_manual_seed, METH_O, HOP_PY_SIG("manual_seed(seed, /)")
        "Seeds the global generator of hop.rand and hop.randn (an int).\n\n"
        ">>> hop.manual_seed(7)\n"
        ">>> a = hop.rand(2)\n"
        ">>> hop.manual_seed(7)\n"
        ">>> bool((hop.rand(2) == a).numpy().all())\n"
        "True\n"},
    {"set_num_threads", (PyCFunction)f_set_num_threads, METH_O,
     HOP_PY_SIG("set_num_threads(n, /)")
        "Sets how many threads large kernels and parallel maps use, process-wide (0: one per "
        "core; at most 1024).\n\n"
        ">>> n = hop.get_num_threads()\n"
        ">>> hop.set_num_threads(1)\n"
        ">>> hop.get_num_threads()\n"
        "1\n"
        ">>> hop.set_num_threads(n)\n"},
    {"get_num_threads", (PyCFunction)f_get_num_threads, METH_NOARGS,
     HOP_PY_SIG("get_num_threads()")
        "How many threads large kernels and parallel maps use (hop.set_num_threads).\n\n"
        ">>> hop.get_num_threads() >= 1\n"
        "True\n"},
    {"_pool_counts", (PyCFunction)f_pool_counts, METH_NOARGS,
     "What the thread pool has done since start (hop_runtime_pool_counts): a dict of the jobs "
     "it split over its threads ('split'), the jobs it ran whole on the caller because their "
     "kind ran faster so ('whole'), and the pieces of split jobs the caller and the workers "
     "ran ('caller_pieces', 'worker_pieces')."},
    {"_alloc_live", (PyCFunction)f_alloc_live, METH_NOARGS,
     "Blocks the C library has allocated and not freed (for leak tests); first frees the "
     "blocks of dead Tensors kept for the next small result."},
    {"_alloc_thread_live", (PyCFunction)f_alloc_thread_live, METH_NOARGS,
     "The calling thread's allocations of the C library less its frees (for leak tests of "
     "one call on this thread, which other threads' frees must not disturb); first frees "
     "the kept blocks, as _alloc_live."},
    {"_alloc_count", (PyCFunction)f_alloc_count, METH_NOARGS,
     "Allocations the C library has made since start (for per-run allocation tests)."},
    {"_alloc_bytes", (PyCFunction)f_alloc_bytes, METH_NOARGS,
     "Bytes the C library has asked its allocator for since start (for tests that bound what "
     "a run allocates)."},
    {"_alloc_fail_at", (PyCFunction)f_alloc_fail_at, METH_O,
     "_alloc_fail_at(k): the k-th allocation of the C library from now fails (0: off)."},
    {"_runtime_cleanup", (PyCFunction)f_runtime_cleanup, METH_NOARGS,
     "Frees the eager state (a ShapeEnv) of this thread and of the pool's threads, which "
     "stop and restart on demand, so that _alloc_live() counts only tensors and plans."},
    {"_set_bool_hook", (PyCFunction)hop_py__set_bool_hook, METH_O,
     HOP_PY_SIG("_set_bool_hook(fn, /)")
     "Sets fn(tensor) (or None) to decide bool() of tensors on this thread (hop.compile's path "
     "specialisation); returns the previous hook."},
    {"_truth", (PyCFunction)hop_py__truth, METH_O, HOP_PY_SIG("_truth(t, /)")
     "bool(t) without the hook."},
    {"_base", (PyCFunction)hop_py__base, METH_O, HOP_PY_SIG("_base(t, /)")
     "The object whose memory concrete tensor t wraps (an ndarray, ...), or None when t owns "
     "its memory (hop.compile: a constant the traced function made)."},
    {"_np_layout", (PyCFunction)hop_py__np_layout, METH_O, HOP_PY_SIG("_np_layout(a, /)")
     "Bytes equal for two reads of ndarray a exactly when its memory address, shape, strides, "
     "dtype and writeable and aligned flags are the same; None for another object or without "
     "NumPy's C API (hop.compile's guard of an environment ndarray's layout)."},
    {"_np_same_layout", (PyCFunction)(void (*)(void))hop_py__np_same_layout, METH_FASTCALL,
     HOP_PY_SIG("_np_same_layout(a, layout, /)")
     "Whether _np_layout(a) equals bytes layout, without making them (False where _np_layout "
     "gives None)."},
    {"_np_contents", (PyCFunction)hop_py__np_contents, METH_O, HOP_PY_SIG("_np_contents(a, /)")
     "Bytes of ndarray a's layout (as _np_layout) and of its elements; None for another object, "
     "a subclass, an array of Python objects or without NumPy's C API (hop.compile's guard of "
     "the contents of an environment ndarray a HOP body reads)."},
    {"_np_same_contents", (PyCFunction)(void (*)(void))hop_py__np_same_contents, METH_FASTCALL,
     HOP_PY_SIG("_np_same_contents(a, contents, /)")
     "Whether _np_contents(a) equals bytes contents, comparing a's memory in place (False where "
     "contents is not bytes)."},
    {"_restride", (PyCFunction)(void (*)(void))hop_py__restride, METH_FASTCALL,
     HOP_PY_SIG("_restride(t, strides, /)")
     "A new tensor over concrete t's memory, with these strides (in elements) where t's move "
     "nothing: dims of size 1, or any dim of an empty t (NumPy's strides of a view)."},
    {"_hollow", (PyCFunction)hop_py__hollow, METH_O, HOP_PY_SIG("_hollow(t, /)")
     "Makes concrete t a stand-in of its dtype and sizes over one zero element of its own (every "
     "stride 0, no base): hop.compile's captured tensor of an environment ndarray, which the "
     "plan is given anew at each call, so that hop holds no reference to the array."},
    {"_meta_text", (PyCFunction)hop_py__meta_text, METH_O, HOP_PY_SIG("_meta_text(t, /)")
     "The `f32[2, 3]` text of tensor t's metadata (concrete or traced), as every message "
     "spells it."},
    {NULL},
};
/* clang-format on */

void
hop_py__create_init(void)
{
    rng_seed(&global_rng, 0x5eed); /* deterministic by default, as PyTorch */
}
