/*
 * python/_C/args.c - Python arguments into op operands: Python's calling
 * conventions for the vectorcall functions of the Tensor half (positionals,
 * keywords, duplicates, missing ones), ints, bools, dtypes, sizes, shapes,
 * reduction dims and value operands.  Wrong types are TypeErrors naming the
 * function and the argument: "sum(): argument 'dim' must be an int, a tuple
 * of ints or None, not str".
 */
#include "tensor_impl.h"

#define tname hop_py__tname

/* ------------------------------------------------------------ arguments */

const char *
hop_py__tname(PyObject *o)
{
    return Py_TYPE(o)->tp_name;
}

/* Prefixes the pending exception's message with "<fname>(): argument '<arg>': ". */
static void
prefix_error(const char *fname, const char *arg)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *msg = value != NULL ? PyObject_Str(value) : NULL;
    if (msg == NULL) {
        PyErr_Restore(type, value, tb);
        return;
    }
    PyErr_Format(type, "%s(): argument '%s': %U", fname, arg, msg);
    Py_DECREF(msg);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

/*
 * Parses vectorcall arguments against names[0..n): positionals first, then
 * keywords.  out[i] is borrowed, NULL when not given.  The first nreq are
 * required.  Messages follow Python's own.
 */
int
hop_py__parse_args(const char *fname, const char *const *names, int n, int nreq,
                   PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **out)
{
    if (nargs > n) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d argument%s (%zd given)", fname, n,
                     n == 1 ? "" : "s", nargs);
        return -1;
    }
    for (int i = 0; i < n; i++)
        out[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int i = 0;
        while (i < n && PyUnicode_CompareWithASCIIString(key, names[i]) != 0)
            i++;
        if (i == n) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname,
                         key);
            return -1;
        }
        if (out[i] != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname,
                         names[i]);
            return -1;
        }
        out[i] = args[nargs + k];
    }
    for (int i = 0; i < nreq; i++) {
        if (out[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname, names[i]);
            return -1;
        }
    }
    return 0;
}

/* Only keywords from names[0..n) (star-args functions: reshape(*shape)). */
int
hop_py__parse_kwonly(const char *fname, const char *const *names, int n, PyObject *const *args,
                     Py_ssize_t nargs, PyObject *kwnames, PyObject **out)
{
    return hop_py__parse_args(fname, names, n, 0, args + nargs, 0, kwnames, out);
}

/* An int argument (anything with __index__ but floats); OverflowError
 * beyond int64. */
int
hop_py__to_int64(const char *fname, const char *arg, PyObject *o, int64_t *out)
{
    int overflow;
    long long v;
    if (PyLong_CheckExact(o)) {
        v = PyLong_AsLongLongAndOverflow(o, &overflow);
    } else {
        if (PyFloat_Check(o) || !PyIndex_Check(o)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be an int, not %.100s", fname,
                         arg, tname(o));
            return -1;
        }
        PyObject *i = PyNumber_Index(o);
        if (i == NULL)
            return -1;
        v = PyLong_AsLongLongAndOverflow(i, &overflow);
        Py_DECREF(i);
    }
    if (overflow) {
        PyErr_Format(PyExc_OverflowError, "%s(): argument '%s' does not fit in int64", fname, arg);
        return -1;
    }
    if (v == -1 && PyErr_Occurred())
        return -1;
    *out = (int64_t)v;
    return 0;
}

int
hop_py__to_bool(const char *fname, const char *arg, PyObject *o, bool *out)
{
    if (!PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be a bool, not %.100s", fname, arg,
                     tname(o));
        return -1;
    }
    *out = o == Py_True;
    return 0;
}

/* An optional dtype argument: NONE for None or absent. */
int
hop_py__to_dtype_opnd(const char *fname, PyObject *o, hop_py_opnd *out)
{
    if (o == NULL || o == Py_None) {
        out->kind = HOP_PY_NONE;
        return 0;
    }
    out->kind = HOP_PY_DTYPE;
    if (hop_py_dtype_from_object(o, &out->u.d) < 0) {
        prefix_error(fname, "dtype");
        return -1;
    }
    return 0;
}

/* A size or index: an int, or a SymInt while tracing. */
int
hop_py__to_size_opnd(const char *fname, const char *arg, PyObject *o, hop_py_opnd *out)
{
    if (HOP_PY_IS_SYM(o)) {
        out->kind = HOP_PY_SYM;
        out->u.sym = o;
        return 0;
    }
    out->kind = HOP_PY_INT;
    if (!PyLong_Check(o) && (PyFloat_Check(o) || !PyIndex_Check(o))) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be an int or a SymInt, not %.100s",
                     fname, arg, tname(o));
        return -1;
    }
    return hop_py__to_int64(fname, arg, o, &out->u.i);
}

/* An optional size (slice bounds): NONE for None or absent. */
int
hop_py__to_opt_size_opnd(const char *fname, const char *arg, PyObject *o, hop_py_opnd *out)
{
    if (o == NULL || o == Py_None) {
        out->kind = HOP_PY_NONE;
        return 0;
    }
    return hop_py__to_size_opnd(fname, arg, o, out);
}

int
hop_py__to_int_opnd(const char *fname, const char *arg, PyObject *o, hop_py_opnd *out)
{
    out->kind = HOP_PY_INT;
    return hop_py__to_int64(fname, arg, o, &out->u.i);
}

/*
 * A list of sizes (reshape, expand, zeros) from n objects: either n ints /
 * SymInts, or one tuple or list of them.  items has room for HOP_MAX_RANK.
 */
int
hop_py__to_shape_opnd(const char *fname, const char *arg, PyObject *const *objs, Py_ssize_t n,
                      hop_py_opnd *out, hop_py_opnd *items)
{
    PyObject *seq = NULL;
    if (n == 1 && (PyTuple_Check(objs[0]) || PyList_Check(objs[0]))) {
        seq = objs[0];
        n = PySequence_Fast_GET_SIZE(seq);
        objs = PySequence_Fast_ITEMS(seq);
    }
    if (n > HOP_MAX_RANK) {
        PyErr_Format(hop_py_ShapeError, "%s(): %zd sizes given; hop tensors have at most %d dims",
                     fname, n, HOP_MAX_RANK);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!HOP_PY_IS_SYM(objs[i]) && !PyLong_Check(objs[i]) &&
            (PyFloat_Check(objs[i]) || !PyIndex_Check(objs[i]))) {
            PyErr_Format(PyExc_TypeError,
                         "%s(): argument '%s' must be a tuple of ints, but item %zd is %.100s",
                         fname, arg, i, tname(objs[i]));
            return -1;
        }
        if (hop_py__to_size_opnd(fname, arg, objs[i], &items[i]) < 0)
            return -1;
    }
    out->kind = HOP_PY_LIST;
    out->u.list.items = items;
    out->u.list.n = (size_t)n;
    return 0;
}

/* Reduction dims: None (all), an int, or a tuple/list of ints. */
int
hop_py__to_dims_opnd(const char *fname, PyObject *o, hop_py_opnd *out, hop_py_opnd *items)
{
    if (o == NULL || o == Py_None) {
        out->kind = HOP_PY_NONE;
        return 0;
    }
    if (PyTuple_Check(o) || PyList_Check(o)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        if (n > HOP_MAX_RANK) {
            PyErr_Format(hop_py_ShapeError, "%s(): %zd dims given; hop tensors have at most %d",
                         fname, n, HOP_MAX_RANK);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *d = PySequence_Fast_GET_ITEM(o, i);
            if (PyFloat_Check(d) || !PyIndex_Check(d)) {
                PyErr_Format(PyExc_TypeError,
                             "%s(): argument 'dim' must be an int, a tuple of ints or None, but "
                             "item %zd is %.100s",
                             fname, i, tname(d));
                return -1;
            }
            if (hop_py__to_int_opnd(fname, "dim", d, &items[i]) < 0)
                return -1;
        }
        out->kind = HOP_PY_LIST;
        out->u.list.items = items;
        out->u.list.n = (size_t)n;
        return 0;
    }
    if (PyFloat_Check(o) || !PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError,
                     "%s(): argument 'dim' must be an int, a tuple of ints or None, not %.100s",
                     fname, tname(o));
        return -1;
    }
    return hop_py__to_int_opnd(fname, "dim", o, out);
}

/* A Tensor argument (the `input` of the module functions). */
int
hop_py__check_tensor_arg(const char *fname, const char *arg, PyObject *o)
{
    if (!HOP_PY_IS_TENSOR(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be a Tensor, not %.100s", fname,
                     arg, tname(o));
        return -1;
    }
    return 0;
}

/*
 * 1 with the 0-d float64 tensor of o in *t (a new reference) when o is a
 * hop.SymFloat, 0 when it is not, -1 with an exception.
 */
int
hop_py__symfloat_tensor(PyObject *o, PyObject **t)
{
    static PyObject *cls; /* hop._symfloat.SymFloat, looked up once */
    if (cls == NULL) {
        /* Without the hop package (_C alone) there are no SymFloats. */
        if (hop_py__import_attr(&cls, "hop._symfloat", "SymFloat") == NULL || !PyType_Check(cls)) {
            Py_CLEAR(cls);
            PyErr_Clear();
            return 0;
        }
    }
    if (!PyObject_TypeCheck(o, (PyTypeObject *)cls))
        return 0;
    PyObject *v = PyObject_GetAttrString(o, "_t");
    if (v == NULL)
        return -1;
    if (!HOP_PY_IS_TENSOR(v)) {
        PyErr_Format(PyExc_TypeError, "SymFloat holds %.100s, not a Tensor", tname(v));
        Py_DECREF(v);
        return -1;
    }
    *t = v;
    return 1;
}

/*
 * Whether o, a hop.numpy array over tensor t, stands for a NumPy float64
 * scalar (a 0-d float64 array NumPy would give as np.float64: its `_scalar`
 * is true).  np.float64 is a Python float, so eagerly it is a weak operand
 * of a hop.Tensor op (`x * np.float64(2.0)` keeps x's f32); the array that
 * stands for it in a compiled function must be one too.  1, 0, or -1 with
 * an error set.
 */
static int
np_float_scalar(PyObject *o, TensorObject *t)
{
    hop_dtype d;
    if (hop_py__tensor_rank(t) != 0 || hop_py__tensor_dtype(t, &d) < 0 || d != HOP_F64) {
        PyErr_Clear(); /* (a dead proxy: the op reports it) */
        return 0;
    }
    PyObject *flag = PyObject_GetAttrString(o, "_scalar");
    if (flag == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int r = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    return r;
}

/*
 * A value operand of an elementwise op: a Tensor, a Python scalar, a SymInt,
 * or anything with the buffer protocol (NumPy arrays and scalars, wrapped
 * without a copy into a new Tensor left in *tmp for the caller to drop).
 * Returns 0, 1 when o is none of these (NotImplemented for operators), -1.
 */
int
hop_py__value_opnd(const char *fname, PyObject *o, hop_py_opnd *out, PyObject **tmp)
{
    if (HOP_PY_IS_TENSOR(o)) {
        hop_py__set_tensor_opnd(out, o);
        return 0;
    }
    if (PyBool_Check(o)) {
        out->kind = HOP_PY_BOOL;
        out->u.b = o == Py_True;
        return 0;
    }
    if (PyLong_Check(o)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) {
            PyErr_Format(PyExc_OverflowError, "%s(): %R does not fit in int64", fname, o);
            return -1;
        }
        if (v == -1 && PyErr_Occurred())
            return -1;
        out->kind = HOP_PY_INT;
        out->u.i = v;
        return 0;
    }
    if (PyFloat_Check(o)) {
        out->kind = HOP_PY_FLOAT;
        out->u.f = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    if (HOP_PY_IS_SYM(o)) {
        out->kind = HOP_PY_SYM;
        out->u.sym = o;
        return 0;
    }
    int sf = hop_py__symfloat_tensor(o, tmp);
    if (sf != 0) {
        if (sf < 0)
            return -1;
        out->kind = HOP_PY_SYMFLOAT;
        out->u.t = (TensorObject *)*tmp;
        return 0;
    }
    if (PyObject_CheckBuffer(o) && !PyBytes_Check(o) && !PyByteArray_Check(o)) {
        PyObject *t = hop_py__asarray(o, NULL, fname);
        if (t == NULL)
            return -1;
        *tmp = t;
        hop_py__set_tensor_opnd(out, t);
        return 0;
    }
    /* An array over a Tensor (hop.numpy.ndarray): its tensor. */
    PyObject *get = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__hop_tensor__");
    if (get == NULL) {
        PyErr_Clear();
        return 1;
    }
    PyObject *t = PyObject_CallOneArg(get, o);
    Py_DECREF(get);
    if (t == NULL)
        return -1;
    if (!HOP_PY_IS_TENSOR(t)) {
        PyErr_Format(PyExc_TypeError, "%s(): __hop_tensor__ of %.100s gave %.100s, not a Tensor",
                     fname, tname(o), tname(t));
        Py_DECREF(t);
        return -1;
    }
    *tmp = t;
    int weak = np_float_scalar(o, HOP_PY_TENSOR(t));
    if (weak < 0)
        return -1;
    if (weak && HOP_PY_TENSOR(t)->t != NULL) {
        out->kind = HOP_PY_FLOAT;
        memcpy(&out->u.f, HOP_PY_TENSOR(t)->t->data, sizeof out->u.f);
    } else if (weak) {
        out->kind = HOP_PY_SYMFLOAT;
        out->u.t = HOP_PY_TENSOR(t);
    } else {
        hop_py__set_tensor_opnd(out, t);
    }
    return 0;
}

/* value_opnd for a function argument: TypeError instead of 1. */
int
hop_py__value_arg(const char *fname, const char *arg, PyObject *o, hop_py_opnd *out, PyObject **tmp)
{
    int r = hop_py__value_opnd(fname, o, out, tmp);
    if (r == 1) {
        PyErr_Format(PyExc_TypeError,
                     "%s(): argument '%s' must be a Tensor or a number, not %.100s", fname, arg,
                     tname(o));
        return -1;
    }
    return r;
}
