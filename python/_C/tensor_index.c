/*
 * python/_C/tensor_index.c - indexing a hop.Tensor: x[key] (ints, slices,
 * None, Ellipsis, 0-d integer tensors as dynamic indices) as view and
 * dynamic-slice ops, len() and iteration, and the C half of x[key] = value
 * (hop/_setitem.py holds the rest: _C._set_setitem, _C._write).
 */
#include "tensor_impl.h"

#define tname hop_py__tname

/* The size of dim d of a tensor when it is known (always for a concrete
 * tensor, for a proxy when the size is a constant). */
static bool
known_size(TensorObject *o, int d, int64_t *out)
{
    if (o->t != NULL) {
        *out = o->t->sizes[d];
        return true;
    }
    const hop_meta *m =
        o->node != NULL && o->node->meta->kind == HOP_VALUE_TENSOR ? &o->node->meta->meta : NULL;
    return m != NULL && d < m->rank && hop_expr_const_value(m->sizes[d], out);
}

/* The operands every indexing op starts with: (x, dim). */
static void
x_dim_opnds(hop_py_opnd *args, PyObject *x, int dim)
{
    hop_py__set_tensor_opnd(&args[0], x);
    args[1].kind = HOP_PY_INT;
    args[1].u.i = dim;
}

/* The raised error (the op's) as an IndexError with its text, as eager
 * raises for a known size: `except IndexError` catches both. */
static void
as_index_error(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *text = value != NULL ? PyObject_Str(value) : NULL;
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    if (text != NULL) {
        PyErr_SetObject(PyExc_IndexError, text);
        Py_DECREF(text);
    }
}

/* x[..., index, ...] at dim of x, which is dim odim of the tensor indexed
 * (None and earlier ints move dims). */
static PyObject *
index_select(PyObject *x, int dim, int odim, const hop_py_opnd *index)
{
    hop_py_opnd args[3];
    int64_t size;
    x_dim_opnds(args, x, dim);
    args[2] = *index;
    /* IndexError (not the op's InvalidError) so that the sequence protocol
     * and Python habits work. */
    if (index->kind == HOP_PY_INT && known_size(HOP_PY_TENSOR(x), dim, &size) &&
        (index->u.i >= size || index->u.i < -size)) {
        PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dim %d with size %lld",
                     (long long)index->u.i, odim, (long long)size);
        return NULL;
    }
    PyObject *r = hop_py_run_op(HOP_OP_select, args, 3);
    if (r == NULL && (index->kind == HOP_PY_INT || index->kind == HOP_PY_SYM) &&
        hop_error_code() == HOP_INVALID && PyErr_ExceptionMatches(hop_py_Error))
        as_index_error(); /* a symbolic size the index is out of (a dynamic trace), or
                           * a SymInt index known to be out (x[i + 5] in a fori_loop) */
    return r;
}

static PyObject *
index_slice(PyObject *x, int dim, PyObject *sl)
{
    PySliceObject *s = (PySliceObject *)sl;
    hop_py_opnd args[5];
    x_dim_opnds(args, x, dim);
    if (hop_py__to_opt_size_opnd("__getitem__", "start", s->start, &args[2]) < 0 ||
        hop_py__to_opt_size_opnd("__getitem__", "stop", s->stop, &args[3]) < 0)
        return NULL;
    if (s->step == Py_None) {
        args[4].kind = HOP_PY_INT;
        args[4].u.i = 1;
    } else if (hop_py__to_int_opnd("__getitem__", "step", s->step, &args[4]) < 0) {
        return NULL;
    }
    if (args[2].kind == HOP_PY_NONE && args[3].kind == HOP_PY_NONE && args[4].u.i == 1)
        return Py_NewRef(x); /* `:` */
    return hop_py_run_op(HOP_OP_slice, args, 5);
}

/* Whether o is an integer tensor of rank 0 (concrete or traced): a dynamic
 * index, read when the op runs and clamped (JAX's dynamic_slice). */
static bool
dynamic_index(PyObject *o)
{
    if (o == NULL || !HOP_PY_IS_TENSOR(o))
        return false;
    TensorObject *t = HOP_PY_TENSOR(o);
    if (t->t != NULL)
        return t->t->rank == 0 && hop_dtype_is_int(t->t->dtype);
    const hop_value_info *m = t->node->meta;
    return m->kind == HOP_VALUE_TENSOR && m->meta.rank == 0 && hop_dtype_is_int(m->meta.dtype);
}

/* dynamic_slice(x, dim, start, size) */
static PyObject *
dynamic_slice(PyObject *x, int dim, PyObject *start, const hop_py_opnd *size)
{
    hop_py_opnd args[4];
    x_dim_opnds(args, x, dim);
    hop_py__set_tensor_opnd(&args[2], start);
    args[3] = *size;
    return hop_py_run_op(HOP_OP_dynamic_slice, args, 4);
}

/* x[..., i, ...] for a 0-d integer tensor i: dynamic_slice with no size,
 * the element at i (a negative i counts from the end, then it is clamped
 * into the dim) with the dim dropped; a view, traced or not. */
static PyObject *
index_dynamic(PyObject *x, int dim, PyObject *i)
{
    hop_py_opnd none = {.kind = HOP_PY_NONE};
    return dynamic_slice(x, dim, i, &none);
}

/*
 * x[i:j] for a 0-d integer tensor i: a dynamic slice of j - i elements from
 * i (clamped so that it fits, as x[i] is).  Eagerly j - i comes from the
 * values (j an int, a 0-d integer tensor, or None: the dim's size); traced,
 * j must be i + k for an int or SymInt k (hop_py_traced_slice_size).
 */
static PyObject *
index_dynamic_slice(PyObject *x, int dim, PyObject *sl)
{
    PySliceObject *s = (PySliceObject *)sl;
    int64_t step = 1, size;
    if (s->step != Py_None && hop_py__to_int64("__getitem__", "step", s->step, &step) < 0)
        return NULL;
    if (step != 1) {
        PyErr_SetString(PyExc_IndexError,
                        "__getitem__: a slice with a tensor start takes step 1 (x[i:i + k])");
        return NULL;
    }
    PyObject *k = NULL;
    hop_py_opnd opnd;
    if (hop_py_tracing_active()) {
        if ((k = hop_py_traced_slice_size(s->start, s->stop)) == NULL)
            return NULL;
    } else {
        int64_t i = 0, j;
        if (hop_tensor_item_int(HOP_PY_TENSOR(s->start)->t, &i) != HOP_OK)
            return hop_py_raise();
        if (s->stop == Py_None) {
            j = HOP_PY_TENSOR(x)->t->sizes[dim];
        } else if (dynamic_index(s->stop)) {
            if (hop_tensor_item_int(HOP_PY_TENSOR(s->stop)->t, &j) != HOP_OK)
                return hop_py_raise();
        } else if (hop_py__to_int64("__getitem__", "stop", s->stop, &j) < 0) {
            return NULL;
        }
        if (__builtin_sub_overflow(j, i, &size)) {
            PyErr_SetString(PyExc_OverflowError, "__getitem__: the slice's size overflows int64");
            return NULL;
        }
        k = PyLong_FromLongLong(size);
    }
    if (k == NULL || hop_py__to_size_opnd("__getitem__", "size", k, &opnd) < 0) {
        Py_XDECREF(k);
        return NULL;
    }
    PyObject *r = dynamic_slice(x, dim, s->start, &opnd);
    Py_DECREF(k);
    return r;
}

static PyObject *
index_unsqueeze(PyObject *x, int dim)
{
    hop_py_opnd args[2];
    x_dim_opnds(args, x, dim);
    return hop_py_run_op(HOP_OP_unsqueeze, args, 2);
}

/*
 * t[key]: ints select (the dim goes), slices slice (step > 0), None inserts
 * a dim of size 1, one Ellipsis stands for the dims not indexed; a 0-d
 * integer tensor i (t[i], t[i:i + k]) is a dynamic index, clamped into the
 * dim (JAX's dynamic_slice, docs/AUTODIFF.md).  Every result is a view made
 * of select/slice/unsqueeze/dynamic_slice ops, so it traces too.
 */
static PyObject *
tensor_getitem(PyObject *self, PyObject *key)
{
    PyObject *const *items = &key;
    Py_ssize_t n = 1;
    if (PyTuple_Check(key)) {
        items = ((PyTupleObject *)key)->ob_item;
        n = PyTuple_GET_SIZE(key);
    }
    int rank = hop_py__tensor_rank(HOP_PY_TENSOR(self));
    if (rank < 0)
        return NULL;
    int consumed = 0, nell = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = items[i];
        if (k == Py_Ellipsis) {
            nell++;
        } else if (k == Py_None) {
            continue;
        } else if (PySlice_Check(k) || HOP_PY_IS_SYM(k) || dynamic_index(k) ||
                   (!PyBool_Check(k) && !PyFloat_Check(k) && PyIndex_Check(k))) {
            consumed++;
        } else {
            PyErr_Format(PyExc_TypeError,
                         "Tensor indices must be ints, slices, None or ..., not %.100s", tname(k));
            return NULL;
        }
    }
    if (nell > 1) {
        PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')");
        return NULL;
    }
    if (consumed > rank) {
        char buf[160];
        PyErr_Format(PyExc_IndexError, "too many indices for a tensor of %s: %d given",
                     hop_py__tensor_text(HOP_PY_TENSOR(self), buf, sizeof buf), consumed);
        return NULL;
    }
    PyObject *cur = Py_NewRef(self);
    int dim = 0, odim = 0; /* in cur, and in self for messages */
    for (Py_ssize_t i = 0; cur != NULL && i < n; i++) {
        PyObject *k = items[i], *next;
        if (k == Py_Ellipsis) {
            dim += rank - consumed;
            odim += rank - consumed;
            continue;
        }
        if (k == Py_None) {
            next = index_unsqueeze(cur, dim++);
        } else if (PySlice_Check(k) && dynamic_index(((PySliceObject *)k)->start)) {
            next = index_dynamic_slice(cur, dim++, k);
            odim++;
        } else if (PySlice_Check(k)) {
            next = index_slice(cur, dim++, k);
            odim++;
        } else if (dynamic_index(k)) {
            next = index_dynamic(cur, dim, k);
            odim++;
        } else {
            hop_py_opnd idx;
            next = hop_py__to_size_opnd("__getitem__", "index", k, &idx) < 0
                       ? NULL
                       : index_select(cur, dim, odim, &idx);
            odim++;
        }
        Py_SETREF(cur, next);
    }
    return cur;
}

static Py_ssize_t
sq_length(PyObject *self)
{
    TensorObject *o = HOP_PY_TENSOR(self);
    int rank = hop_py__tensor_rank(o);
    int64_t n;
    if (rank < 0)
        return -1;
    if (rank == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    if (!known_size(o, 0, &n)) {
        /* eagerly an int: in a compile trace a conversion (a graph break:
         * the statement runs in Python), in hop.trace the TraceError */
        char buf[128];
        hop_expr_print(o->node->meta->meta.sizes[0], buf, sizeof buf);
        hop_py__conversion(hop_py_TraceError,
                           "len() of a traced tensor whose size %s is symbolic; use t.shape[0]",
                           buf);
        return -1;
    }
    return (Py_ssize_t)n;
}

/* 0 when self can be iterated (rank 1 or more); -1 with TypeError for a 0-d
 * tensor, or with the error of a proxy of no tensor.  iter(t) and the items
 * PySeqIter asks for check the same. */
static int
check_iterable(PyObject *self)
{
    int rank = hop_py__tensor_rank(HOP_PY_TENSOR(self));
    if (rank == 0)
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
    return rank > 0 ? 0 : -1;
}

/* For iteration (PySeqIter): IndexError past the end stops it. */
static PyObject *
sq_item(PyObject *self, Py_ssize_t i)
{
    if (check_iterable(self) < 0)
        return NULL;
    hop_py_opnd idx;
    idx.kind = HOP_PY_INT;
    idx.u.i = i;
    return index_select(self, 0, 0, &idx);
}

PyObject *
hop_py__tensor_iter(PyObject *self)
{
    return check_iterable(self) < 0 ? NULL : PySeqIter_New(self);
}

/* hop.Tensor.__setitem__ is written in Python (hop/_setitem.py), which
 * registers it once when the package is imported. */
static PyObject *setitem_impl;

static int
tensor_setitem(PyObject *self, PyObject *key, PyObject *value)
{
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "hop.Tensor does not support item deletion");
        return -1;
    }
    if (setitem_impl == NULL) {
        PyErr_SetString(PyExc_TypeError, "hop.Tensor.__setitem__: import hop first");
        return -1;
    }
    PyObject *r = PyObject_CallFunctionObjArgs(setitem_impl, self, key, value, NULL);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* _set_setitem(fn): fn(x, key, value) implements x[key] = value. */
static PyObject *
py_set_setitem(PyObject *mod, PyObject *fn)
{
    (void)mod;
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "_set_setitem: fn must be callable");
        return NULL;
    }
    Py_XSETREF(setitem_impl, Py_NewRef(fn));
    Py_RETURN_NONE;
}

/* _write(dst, src): src (concrete, dst's shape) copied into dst's memory,
 * converted to dst's dtype; an eager x[key] = value writes its region so.
 * A src sharing dst's storage is copied first (x[1:] = x[:-1]). */
static PyObject *
py_write(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    if (nargs != 2 || !HOP_PY_IS_TENSOR(args[0]) || !HOP_PY_IS_TENSOR(args[1]) ||
        HOP_PY_TENSOR(args[0])->t == NULL || HOP_PY_TENSOR(args[1])->t == NULL) {
        PyErr_SetString(PyExc_TypeError, "_write(dst, src): two concrete tensors");
        return NULL;
    }
    hop_tensor *dst = HOP_PY_TENSOR(args[0])->t, *src = HOP_PY_TENSOR(args[1])->t;
    hop_tensor *own = NULL;
    if (src->storage == dst->storage) {
        hop_rt_arg a = hop_rt_tensor(src);
        if ((own = hop_eager_tensor(HOP_OP_clone, &a, 1)) == NULL)
            return hop_py_raise();
        src = own;
    }
    hop_rt_arg a[2] = {hop_rt_tensor(src), hop_rt_dtype(dst->dtype)};
    hop_status st = hop_eager_out(HOP_OP_to, a, 2, dst);
    hop_tensor_release(own);
    if (st != HOP_OK)
        return hop_py_raise();
    Py_RETURN_NONE;
}

PyMethodDef hop_py__setitem_functions[] = {
    {"_set_setitem", py_set_setitem, METH_O,
     "_set_setitem(fn): fn(x, key, value) implements hop.Tensor's x[key] = value."},
    {"_write", (PyCFunction)(void (*)(void))py_write, METH_FASTCALL,
     "_write(dst, src): src copied into dst's memory (an eager x[key] = value)."},
    {NULL},
};

PyMappingMethods hop_py__tensor_as_mapping = {
    .mp_length = sq_length,
    .mp_subscript = tensor_getitem,
    .mp_ass_subscript = tensor_setitem,
};

PySequenceMethods hop_py__tensor_as_sequence = {
    .sq_length = sq_length,
    .sq_item = sq_item,
};
