/*
 * python/_C/module.c - the module hop._C: its init, the exception classes,
 * the one switch from hop statuses to exceptions (hop_py_raise) and the dtype
 * objects hop.float16 ... hop.uint64 and hop.bool.
 *
 * Exception classes (module attributes of the same names):
 *   Error                        base of every hop error
 *   TraceError(Error, RuntimeError)       DataDependentError(TraceError)
 *   ShapeError(Error, ValueError)         DTypeError(Error, TypeError)
 *   InvalidError(Error, ValueError)       UnsupportedError(Error, NotImplementedError)
 *   GuardError(Error, RuntimeError)       NotFoundError(Error, LookupError)
 *   OutOfBoundsError(Error, IndexError)   CheckError(Error, RuntimeError)
 *   LinAlgError(Error, numpy.linalg.LinAlgError): a singular matrix, one
 *   not positive definite, no convergence (ValueError without NumPy)
 * HOP_NOMEM becomes MemoryError, HOP_INTERRUPTED KeyboardInterrupt.
 *
 * A dtype is an immutable singleton: compared and hashed by identity, printed
 * `hop.float32`, pickled by name.  `.dtype` gives the NumPy dtype (imported
 * lazily), which is what makes np.dtype(hop.float32) and
 * np.zeros(3, dtype=hop.int64) work: NumPy reads a `dtype` attribute.
 */
#include "hop_py.h"

#include <stdlib.h>
#include <string.h>
#include <structmember.h>
#include <unistd.h>

PyObject *hop_py_Error, *hop_py_TraceError, *hop_py_ShapeError, *hop_py_DTypeError,
    *hop_py_UnsupportedError, *hop_py_GuardError, *hop_py_DataDependentError;
static PyObject *hop_py_InvalidError, *hop_py_NotFoundError, *hop_py_OutOfBoundsError,
    *hop_py_LinAlgError, *hop_py_CheckError;

/* -------------------------------------------------------------- errors */

PyObject *
hop_py_raise(void)
{
    hop_status code = hop_error_code();
    const char *msg = hop_error_message();
    PyObject *cls = hop_py_Error;
    hop_py__trace_error_raised();
    switch (code) {
    case HOP_NOMEM:
        cls = PyExc_MemoryError;
        break;
    case HOP_INVALID:
        cls = hop_py_InvalidError;
        break;
    case HOP_SHAPE:
        cls = hop_py_ShapeError;
        break;
    case HOP_DTYPE:
        cls = hop_py_DTypeError;
        break;
    case HOP_DATA_DEPENDENT:
        cls = hop_py_DataDependentError;
        break;
    case HOP_TRACE:
        cls = hop_py_TraceError;
        break;
    case HOP_UNSUPPORTED:
        cls = hop_py_UnsupportedError;
        break;
    case HOP_NOT_FOUND:
        cls = hop_py_NotFoundError;
        break;
    case HOP_GUARD:
        cls = hop_py_GuardError;
        break;
    case HOP_INDEX:
        cls = hop_py_OutOfBoundsError;
        break;
    case HOP_LINALG:
        cls = hop_py_LinAlgError;
        break;
    case HOP_CHECK:
        cls = hop_py_CheckError;
        break;
    case HOP_INTERRUPTED: /* hop_plan_interrupt: as Ctrl-C stops Python code */
        cls = PyExc_KeyboardInterrupt;
        break;
    case HOP_OK: /* a caller forgot to set the context: still an error */
    case HOP_MISUSE:
    case HOP_VERIFY:
    case HOP_EXISTS:
    case HOP_RUNTIME:
    case HOP_FORMAT: /* a bad saved file (hop.load): a plain hop.Error */
    case HOP_STATUS_COUNT:
        cls = hop_py_Error;
        break;
    }
    if (msg == NULL || msg[0] == '\0')
        msg = code == HOP_OK ? "unknown error (no hop error was set)" : hop_status_message(code);
    /* A message quotes what it was given (a name, a file's bytes): bytes
     * that are not UTF-8 are replaced, never the message lost. */
    PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
    if (text == NULL)
        return NULL;
    PyErr_SetObject(cls, text);
    Py_DECREF(text);
    return NULL;
}

int
hop_py_raise_int(void)
{
    hop_py_raise();
    return -1;
}

/*
 * A new exception class hop.<name> with the given bases (a tuple, stolen).
 * doc starts with the text signature (HOP_PY_SIG): the class keeps it in
 * tp_doc, where inspect.signature finds it, while __doc__ is set to what
 * follows it (a heap type's __doc__ is its dict's, shown as it is).
 */
static PyObject *
new_error(PyObject *module, const char *name, PyObject *bases, const char *doc)
{
    char qual[64];
    PyObject *cls = NULL, *text = NULL;
    if (bases == NULL)
        return NULL;
    snprintf(qual, sizeof qual, "hop.%s", name);
    cls = PyErr_NewExceptionWithDoc(qual, doc, bases, NULL);
    Py_DECREF(bases);
    if (cls == NULL)
        return NULL;
    const char *body = strstr(doc, "\n--\n\n");
    text = PyUnicode_FromString(body ? body + 5 : doc);
    if (text == NULL || PyObject_SetAttrString(cls, "__doc__", text) < 0) {
        Py_XDECREF(text);
        Py_DECREF(cls);
        return NULL;
    }
    Py_DECREF(text);
    if (PyModule_AddObjectRef(module, name, cls) < 0) {
        Py_DECREF(cls);
        return NULL;
    }
    return cls; /* the global keeps this reference for the process's life */
}

/* An example for an exception's docstring: the code, then its message. */
#define HOP_PY_RAISES(code, name, msg)                                                             \
    "\n\n>>> try:\n...     " code "\n... except hop." name " as e:\n...     print(e)\n" msg "\n"

static int
init_errors(PyObject *m)
{
    hop_py_Error = new_error(
        m, "Error", PyTuple_Pack(1, PyExc_Exception),
        HOP_PY_SIG(
            "Error(*args)") "Base class of every error hop raises; "
                            "each status of the C library is one subclass, which is also the "
                            "matching built-in exception (hop.ShapeError is a "
                            "ValueError)." HOP_PY_RAISES(
                                "hop.zeros(2) + hop.zeros(3)", "Error",
                                "add: cannot broadcast f32[2] with f32[3]"));
    if (hop_py_Error == NULL)
        return -1;
#define HOP_PY_ERR(var, name, base2, what, code, msg)                                              \
    if ((var = new_error(m, name, PyTuple_Pack(2, hop_py_Error, base2),                            \
                         HOP_PY_SIG(name "(*args)") what HOP_PY_RAISES(code, name, msg))) == NULL) \
        return -1;
    /* clang-format off */
    HOP_PY_ERR(hop_py_TraceError, "TraceError", PyExc_RuntimeError,
               "Tracing failed: misuse of traced values, a dead proxy, a bad HOP body, "
               "data-dependent Python control flow on a traced value.",
               "hop.trace(lambda x: x + 1 if x.sum() > 0 else x, hop.ones(2))",
               "bool() of a traced tensor is data-dependent Python control flow; use "
               "hop.cond(pred, true_fn, false_fn, operands) instead")
    HOP_PY_ERR(hop_py_ShapeError, "ShapeError", PyExc_ValueError,
               "Shapes do not fit: broadcasting, matmul, reshape, indexing.",
               "hop.zeros(2).view(3)", "view: shape [3] is invalid for input f32[2] of size 2")
    HOP_PY_ERR(hop_py_DTypeError, "DTypeError", PyExc_TypeError,
               "A dtype is not supported by an op, or dtypes do not agree.",
               "hop.mean(hop.tensor([1, 2]))", "mean: mean needs a float input, got i64[2]")
    HOP_PY_ERR(hop_py_InvalidError, "InvalidError", PyExc_ValueError,
               "An invalid argument: a dim out of range, a bad attribute value.",
               "hop.zeros(2).sum(5)", "sum: dim 5 out of range for f32[2]")
    HOP_PY_ERR(hop_py_UnsupportedError, "UnsupportedError", PyExc_NotImplementedError,
               "Something hop does not support (yet).",
               "hop.trace(lambda x: x.sum().item(), hop.ones(2))",
               "item: cannot trace item() of a float tensor f32[]: only integer and bool "
               "tensors give a SymInt")
    HOP_PY_ERR(hop_py_GuardError, "GuardError", PyExc_RuntimeError,
               "A guard of a traced or compiled program failed: it was traced assuming "
               "something of its inputs (a size, a dtype, a constant) that this call breaks.",
               "hop.trace(lambda x: x * 2, hop.ones(2))(hop.ones(3))",
               "guard failed: x.size(0) == 2 expected, got 3")
    HOP_PY_ERR(hop_py_NotFoundError, "NotFoundError", PyExc_LookupError,
               "A name or value hop was asked for does not exist (a HOP, a kernel, a file).",
               "hop.load_library('/no/such/lib.so')",
               "load_library: cannot load /no/such/lib.so: /no/such/lib.so: cannot open shared "
               "object file: No such file or directory")
    HOP_PY_ERR(hop_py_OutOfBoundsError, "OutOfBoundsError", PyExc_IndexError,
               "An index read from the data is out of range (x[idx] with idx >= size).",
               "hop._C._op('take', hop.arange(5), 0, hop.tensor([7]))",
               "take: index 7 is out of bounds for dim 0 with size 5")
    HOP_PY_ERR(hop_py_CheckError, "CheckError", PyExc_RuntimeError,
               "A run-time check of a plan failed (the fail_if op): a value hop cannot vouch "
               "for, such as NumPy's decision at a rank cutoff.  hop.compile runs the call "
               "eagerly instead; hop.trace, hop.grad and hop.vmap raise it.",
               "hop._C._op('fail_if', hop.ones(2), hop.tensor([False, True]), 0)",
               "fail_if: a run-time check failed (check of kind ASSERT)")
    /* clang-format on */
#undef HOP_PY_ERR
    /* NumPy's own LinAlgError as a base, so that code catching it catches
     * hop's too (hop imports NumPy anyway); ValueError without NumPy. */
    PyObject *npl = PyImport_ImportModule("numpy.linalg");
    PyObject *base = npl ? PyObject_GetAttrString(npl, "LinAlgError") : NULL;
    Py_XDECREF(npl);
    if (base == NULL) {
        PyErr_Clear();
        base = Py_NewRef(PyExc_ValueError);
    }
    hop_py_LinAlgError = new_error(
        m, "LinAlgError", PyTuple_Pack(2, hop_py_Error, base),
        HOP_PY_SIG("LinAlgError(*args)") "A linear-algebra routine failed on the data: a "
                                         "singular matrix, one not positive definite, no "
                                         "convergence." HOP_PY_RAISES(
                                             "hop.numpy.linalg.inv(hop.numpy.zeros((2, 2)))",
                                             "LinAlgError", "Singular matrix"));
    Py_DECREF(base);
    if (hop_py_LinAlgError == NULL)
        return -1;
    hop_py_DataDependentError = new_error(
        m, "DataDependentError", PyTuple_Pack(1, hop_py_TraceError),
        HOP_PY_SIG("DataDependentError(*args)") "A decision depends on data only known at run "
                                                "time (an unbacked symbol): use hop.cond, or a "
                                                "size hop can keep symbolic." HOP_PY_RAISES(
                                                    "hop.trace(lambda x: x[:2] if x.sum().item() > "
                                                    "1 else x, "
                                                    "hop.ones(3, dtype=hop.int64))",
                                                    "DataDependentError",
                                                    "SymInt comparison: data-dependent: cannot "
                                                    "decide u0 > 1 (u0 is unbacked; "
                                                    "its value is only known at run time)"));
    return hop_py_DataDependentError == NULL ? -1 : 0;
}

/* -------------------------------------------------------------- dtypes */

typedef struct DTypeObject {
    PyObject_HEAD hop_dtype d;
    const char *name;  /* "float32" */
    const char *npstr; /* NumPy's dtype.str: "<f4" */
    PyObject *np;      /* the NumPy dtype, made on first use */
} DTypeObject;

static DTypeObject dtype_objects[HOP_DTYPE_COUNT];
static char dtype_npstr[HOP_DTYPE_COUNT][8];
static char dtype_pyname[HOP_DTYPE_COUNT][12];

static PyObject *
dtype_repr(DTypeObject *self)
{
    return PyUnicode_FromFormat("hop.%s", self->name);
}

static PyObject *
dtype_get_name(DTypeObject *self, void *closure)
{
    return PyUnicode_FromString(self->name);
}

static PyObject *
dtype_get_itemsize(DTypeObject *self, void *closure)
{
    return PyLong_FromSize_t(hop_dtype_size(self->d));
}

static PyObject *
dtype_get_str(DTypeObject *self, void *closure)
{
    return PyUnicode_FromString(self->npstr);
}

PyObject *
hop_py__import_attr(PyObject **cache, const char *module, const char *name)
{
    if (*cache == NULL) {
        PyObject *mod = PyImport_ImportModule(module);
        if (mod == NULL)
            return NULL;
        *cache = PyObject_GetAttrString(mod, name);
        Py_DECREF(mod);
    }
    return *cache;
}

static PyObject *
dtype_get_is_floating_point(DTypeObject *self, void *closure)
{
    return PyBool_FromLong(hop_dtype_is_float(self->d));
}

/* The NumPy dtype; ImportError without NumPy. */
static PyObject *
dtype_get_numpy(DTypeObject *self, void *closure)
{
    static PyObject *np_dtype; /* numpy.dtype */
    if (self->np == NULL) {
        PyObject *dtype = hop_py__import_attr(&np_dtype, "numpy", "dtype");
        if (dtype == NULL || (self->np = PyObject_CallFunction(dtype, "s", self->npstr)) == NULL)
            return NULL;
    }
    return Py_NewRef(self->np);
}

static PyObject *
dtype_reduce(DTypeObject *self, PyObject *unused)
{
    return PyUnicode_FromString(self->name); /* pickled as the global hop.<name> */
}

static PyGetSetDef dtype_getset[] = {
    {"name", (getter)dtype_get_name, NULL, "The name: 'float32'.", NULL},
    {"itemsize", (getter)dtype_get_itemsize, NULL, "Bytes per element.", NULL},
    {"str", (getter)dtype_get_str, NULL, "NumPy's array-interface type string: '<f4'.", NULL},
    {"is_floating_point", (getter)dtype_get_is_floating_point, NULL, "float16, float32 or float64.",
     NULL},
    {"dtype", (getter)dtype_get_numpy, NULL, "The NumPy dtype (so np.dtype(hop.float32) works).",
     NULL},
    {NULL},
};

static PyMethodDef dtype_methods[] = {
    {"__reduce__", (PyCFunction)dtype_reduce, METH_NOARGS, NULL},
    {NULL},
};

PyTypeObject hop_py_DTypeType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop.dtype",
    .tp_basicsize = sizeof(DTypeObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tensor element type: hop.float16, hop.float32, hop.float64, hop.int8, hop.int16, "
              "hop.int32, hop.int64, hop.uint8, hop.uint16, hop.uint32, hop.uint64, hop.complex64, "
              "hop.complex128, hop.bool.",
    .tp_repr = (reprfunc)dtype_repr,
    .tp_getset = dtype_getset,
    .tp_methods = dtype_methods,
};

PyObject *
hop_py_dtype_object(hop_dtype d)
{
    if ((unsigned)d >= HOP_DTYPE_COUNT) {
        PyErr_Format(PyExc_SystemError, "hop: invalid dtype %d", (int)d);
        return NULL;
    }
    return (PyObject *)&dtype_objects[d];
}

const char *
hop_py__dtype_pyname(hop_dtype d)
{
    return (unsigned)d < HOP_DTYPE_COUNT ? dtype_objects[d].name : "?";
}

const char *
hop_py__supported_dtypes(void)
{
    return "hop supports float16, float32, float64, int8, int16, int32, int64, uint8, uint16, "
           "uint32, uint64, complex64, complex128 and bool";
}

/* A NumPy dtype.str ('<f4', '|b1', '=i8', 'f4') or a name ('float32', 'f32'). */
static int
dtype_from_string(const char *s, hop_dtype *out)
{
    for (int d = 0; d < HOP_DTYPE_COUNT; d++) {
        const char *np = dtype_npstr[d];
        if (strcmp(s, np) == 0 || strcmp(s, np + 1) == 0 ||
            ((s[0] == '=' || s[0] == '|') && strcmp(s + 1, np + 1) == 0) ||
            strcmp(s, dtype_objects[d].name) == 0) {
            *out = (hop_dtype)d;
            return 0;
        }
    }
    if (hop_dtype_from_name(s, out) == HOP_OK)
        return 0;
    hop_error_clear();
    return -1;
}

/* o as a NumPy dtype (new reference) when NumPy is loaded and o is a dtype
 * or a NumPy scalar type (np.float32); NULL, without an error, otherwise.
 * NumPy is never imported here: no NumPy object can exist without it. */
static PyObject *
as_numpy_dtype(PyObject *o)
{
    PyObject *np, *npdtype = NULL, *generic = NULL, *res = NULL;
    PyObject *name = PyUnicode_FromString("numpy");
    if (name == NULL)
        return NULL;
    np = PyImport_GetModule(name);
    Py_DECREF(name);
    if (np == NULL)
        return NULL;
    if ((npdtype = PyObject_GetAttrString(np, "dtype")) == NULL ||
        (generic = PyObject_GetAttrString(np, "generic")) == NULL)
        goto done;
    int r = PyObject_IsInstance(o, npdtype);
    if (r > 0) {
        res = Py_NewRef(o);
    } else if (r == 0 && PyType_Check(o)) {
        r = PyObject_IsSubclass(o, generic);
        if (r > 0)
            res = PyObject_CallOneArg(npdtype, o);
    }
done:
    Py_XDECREF(npdtype);
    Py_XDECREF(generic);
    Py_DECREF(np);
    return res;
}

/* Accepts hop dtypes, names, NumPy dtypes and scalar types, and the Python
 * types bool, int (int64) and float (float64, as NumPy reads them). */
int
hop_py_dtype_from_object(PyObject *o, hop_dtype *out)
{
    if (Py_IS_TYPE(o, &hop_py_DTypeType)) {
        *out = ((DTypeObject *)o)->d;
        return 0;
    }
    if (PyUnicode_Check(o)) {
        const char *s = PyUnicode_AsUTF8(o);
        if (s == NULL)
            return -1;
        if (dtype_from_string(s, out) == 0)
            return 0;
        PyErr_Format(hop_py_DTypeError, "unknown dtype %R; %s", o, hop_py__supported_dtypes());
        return -1;
    }
    if (o == (PyObject *)&PyBool_Type) {
        *out = HOP_BOOL;
        return 0;
    }
    if (o == (PyObject *)&PyLong_Type) {
        *out = HOP_I64;
        return 0;
    }
    if (o == (PyObject *)&PyFloat_Type) {
        *out = HOP_F64;
        return 0;
    }
    PyObject *dt = as_numpy_dtype(o);
    if (dt != NULL) {
        int rc = -1;
        PyObject *str = PyObject_GetAttrString(dt, "str");
        const char *s = str != NULL && PyUnicode_Check(str) ? PyUnicode_AsUTF8(str) : NULL;
        if (s != NULL && dtype_from_string(s, out) == 0)
            rc = 0;
        else if (!PyErr_Occurred())
            PyErr_Format(hop_py_DTypeError, "NumPy dtype %S is not supported; %s", dt,
                         hop_py__supported_dtypes());
        Py_XDECREF(str);
        Py_DECREF(dt);
        return rc;
    }
    if (PyErr_Occurred())
        return -1;
    PyErr_Format(PyExc_TypeError,
                 "expected a dtype (hop.float32, a NumPy dtype or a name like 'int64'), got %.100s",
                 Py_TYPE(o)->tp_name);
    return -1;
}

/*
 * hop.<name> for every dtype of HOP_DTYPE_LIST (ops owns which there are),
 * spelled as NumPy spells it, from the dtype's kind and size: the name
 * "bool", or int, uint, float or complex and the bits ("float32"); dtype.str
 * the kind's letter and the bytes after the byte order, "|" for one byte
 * ("<f4", "|u1").
 */
static int
init_dtypes(PyObject *m)
{
    const unsigned one = 1;
    const char order = *(const char *)&one == 1 ? '<' : '>';
    if (PyType_Ready(&hop_py_DTypeType) < 0)
        return -1;
    for (int d = 0; d < HOP_DTYPE_COUNT; d++) {
        size_t size = hop_dtype_size((hop_dtype)d);
        const char *word = d == HOP_BOOL                         ? "bool"
                           : hop_dtype_is_complex((hop_dtype)d)  ? "complex"
                           : hop_dtype_is_float((hop_dtype)d)    ? "float"
                           : hop_dtype_is_unsigned((hop_dtype)d) ? "uint"
                                                                 : "int";
        if (d == HOP_BOOL)
            snprintf(dtype_pyname[d], sizeof dtype_pyname[0], "%s", word);
        else
            snprintf(dtype_pyname[d], sizeof dtype_pyname[0], "%s%zu", word, 8 * size);
        snprintf(dtype_npstr[d], sizeof dtype_npstr[0], "%c%c%zu", size == 1 ? '|' : order, word[0],
                 size);
        /* Static singletons: the module keeps them alive forever. */
        DTypeObject *o = &dtype_objects[d];
        Py_SET_TYPE(o, &hop_py_DTypeType);
        Py_SET_REFCNT(o, 1);
        o->d = (hop_dtype)d;
        o->name = dtype_pyname[d];
        o->npstr = dtype_npstr[d];
        o->np = NULL;
        if (PyModule_AddObjectRef(m, o->name, (PyObject *)o) < 0)
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- init */

static struct PyModuleDef hop_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "hop._C",
    .m_doc = "The C half of hop: tensors, eager ops, tracing, HOPs and plans.",
    .m_size = -1,
};

/* ----------------------------------------------------------- allocator */

/*
 * hop's allocator inside Python: realloc/free, except that a block larger
 * than the machine's physical memory is refused up front.  A huge shape
 * (hop.zeros(10**15), a clone of a broadcast view) is then a MemoryError at
 * once, never an attempt that overcommit lets through to the OOM killer or
 * that AddressSanitizer aborts on.
 */
static size_t max_block = SIZE_MAX;

static void *
capped_alloc(void *ud, void *ptr, size_t nsize)
{
    (void)ud;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    if (nsize > max_block)
        return NULL;
    /* malloc for a new block: realloc(NULL, n) is malloc behind a test */
    return ptr == NULL ? malloc(nsize) : realloc(ptr, nsize);
}

static void
init_allocator(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && (unsigned long)pages <= SIZE_MAX / (unsigned long)page)
        max_block = (size_t)pages * (size_t)page;
    hop_set_allocator(capped_alloc, NULL);
}

/* hop._C.CHECK_<code>: the fail_if kinds of HOP_CHECK_KIND_LIST (ops owns
 * them and their numbers, which saved graphs store) for hop.numpy's checks */
static int
init_check_kinds(PyObject *m)
{
#define HOP_PY_CHECK_KIND(code, what, msg)                                                         \
    if (PyModule_AddIntConstant(m, "CHECK_" #code, HOP_CHECK_##code) < 0)                          \
        return -1;
    HOP_CHECK_KIND_LIST(HOP_PY_CHECK_KIND)
#undef HOP_PY_CHECK_KIND
    /* hop._C.MAX_RANK: the most dims a tensor has (hop.numpy names it where
     * NumPy, whose limit is 32, would make an array of more) */
    return PyModule_AddIntConstant(m, "MAX_RANK", HOP_MAX_RANK);
}

PyMODINIT_FUNC PyInit__C(void);

PyMODINIT_FUNC
PyInit__C(void)
{
    init_allocator();
    PyObject *m = PyModule_Create(&hop_module);
    if (m == NULL)
        return NULL;
    /* the math backend is chosen here, so a HOP_MATH typo fails the import
     * (an InvalidError naming it), not a silent widest backend */
    if (init_errors(m) < 0 || (hop_runtime_math_init() != HOP_OK && hop_py_raise_int() < 0) ||
        init_check_kinds(m) < 0 || init_dtypes(m) < 0 || hop_py_tensor_init(m) < 0 ||
        hop_py_trace_init(m) < 0 || hop_py_hops_init(m) < 0 || hop_py_purity_init(m) < 0 ||
        hop_py_guard_scan_init(m) < 0 || hop_py_np_eager_init(m) < 0 ||
        hop_py_np_eager_shape_init(m) < 0 || hop_py_np_create_init(m) < 0 ||
        hop_py_numpy_call_init(m) < 0 || hop_py_foreign_init(m) < 0 || hop_py_saved_init(m) < 0 ||
        hop_py_vector_math_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
