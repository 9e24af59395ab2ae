/*
 * python/_C/vector_math.c - _math_adopt and _math_run: what
 * python/hop/_numpy_math.py needs to adopt NumPy's own vector math
 * functions (hop_runtime_math_adopt) and to check them against NumPy.
 */
#include "hop_py.h"

#include <dlfcn.h>
#include <string.h>

static int
dtype_arg(const char *s, hop_dtype *d)
{
    if (strcmp(s, "f32") == 0)
        *d = HOP_F32;
    else if (strcmp(s, "f64") == 0)
        *d = HOP_F64;
    else if (strcmp(s, "f16") == 0) /* the float32 function float16's rounds from */
        *d = HOP_F16;
    else {
        PyErr_Format(PyExc_ValueError, "math functions take 'f32', 'f64' or 'f16', got '%s'", s);
        return -1;
    }
    return 0;
}

/*
 * _math_adopt(name, dtype, library, symbol) -> bool: adopts the function
 * `symbol` of the shared library at path `library`, which must already be
 * loaded in this process (a Python extension module: it is not loaded
 * here, and no code of it runs), for math function name at dtype ('f32' or
 * 'f64'; 'f16': the float32 function float16's exp, log, sin, cos or tanh rounds
 * from).  False when the library is not loaded or has no such symbol;
 * hop_runtime_math_adopt's errors are raised.  _math_adopt(name, dtype,
 * None, None) returns to hop's own function.
 */
static PyObject *
math_adopt(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name, *dts, *path = NULL, *symbol = NULL;
    hop_dtype dtype;
    if (!PyArg_ParseTuple(args, "sszz:_math_adopt", &name, &dts, &path, &symbol) ||
        dtype_arg(dts, &dtype) < 0)
        return NULL;
    void *fn = NULL;
    if (path != NULL) {
        if (symbol == NULL)
            return PyErr_Format(PyExc_TypeError, "_math_adopt: a library needs a symbol");
        void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (lib == NULL)
            Py_RETURN_FALSE;
        fn = dlsym(lib, symbol);
        /* the module stays loaded: Python holds it (RTLD_NOLOAD took one more reference) */
        dlclose(lib);
        if (fn == NULL)
            Py_RETURN_FALSE;
    }
    if (hop_runtime_math_adopt(name, dtype, fn) != HOP_OK)
        return hop_py_raise();
    Py_RETURN_TRUE;
}

/* _math_adopt_numpy(name, on): hop's copy of NumPy's own float32 loop for
 * name (exp, log, sin, cos) on or off (hop_runtime_math_adopt_numpy; its
 * errors are raised). */
static PyObject *
math_adopt_numpy(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    int on;
    if (!PyArg_ParseTuple(args, "sp:_math_adopt_numpy", &name, &on))
        return NULL;
    if (hop_runtime_math_adopt_numpy(name, HOP_F32, on != 0) != HOP_OK)
        return hop_py_raise();
    Py_RETURN_NONE;
}

/* _math_nan(name, dtype, mode): what the adopted function name at dtype
 * answers for a NaN argument, "own", "default" (the positive default NaN)
 * or "operand" (the NaN itself) (hop_runtime_math_adopt_nan; its errors
 * are raised). */
static PyObject *
math_nan(PyObject *self, PyObject *args)
{
    (void)self;
    static const char *const modes[] = {[HOP_MATH_NAN_OWN] = "own",
                                        [HOP_MATH_NAN_DEFAULT] = "default",
                                        [HOP_MATH_NAN_OPERAND] = "operand"};
    const char *name, *dts, *ms;
    hop_dtype dtype;
    if (!PyArg_ParseTuple(args, "sss:_math_nan", &name, &dts, &ms) || dtype_arg(dts, &dtype) < 0)
        return NULL;
    for (int mode = 0; mode < (int)(sizeof modes / sizeof modes[0]); mode++) {
        if (strcmp(ms, modes[mode]) != 0)
            continue;
        if (hop_runtime_math_adopt_nan(name, dtype, (hop_math_nan)mode) != HOP_OK)
            return hop_py_raise();
        Py_RETURN_NONE;
    }
    PyErr_Format(PyExc_ValueError, "_math_nan: mode is 'own', 'default' or 'operand', got '%s'",
                 ms);
    return NULL;
}

/* _math_run(name, dtype, out, a, b=None): math function name of the
 * backend in use over buffers of that dtype (C-contiguous, writable out,
 * the same length). */
static PyObject *
math_run(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name, *dts;
    hop_dtype dtype;
    Py_buffer out = {0}, a = {0}, b = {0};
    PyObject *bobj = Py_None, *result = NULL;
    if (!PyArg_ParseTuple(args, "ssw*y*|O:_math_run", &name, &dts, &out, &a, &bobj))
        return NULL;
    if (dtype_arg(dts, &dtype) < 0)
        goto done;
    if (bobj != Py_None && PyObject_GetBuffer(bobj, &b, PyBUF_SIMPLE) < 0)
        goto done;
    /* (f16: the float32 function float16's rounds from, over float32) */
    Py_ssize_t size = dtype == HOP_F16 ? 4 : (Py_ssize_t)hop_dtype_size(dtype);
    if (out.len != a.len || (b.obj != NULL && b.len != a.len) || a.len % size != 0) {
        PyErr_SetString(PyExc_ValueError, "_math_run: the buffers differ in length");
        goto done;
    }
    if (hop_runtime_math_run(name, dtype, a.len / size, out.buf, a.buf,
                             b.obj != NULL ? b.buf : NULL) != HOP_OK) {
        hop_py_raise();
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&out);
    PyBuffer_Release(&a);
    if (b.obj != NULL)
        PyBuffer_Release(&b);
    return result;
}

static PyMethodDef vector_math_functions[] = {
    {"_math_adopt", math_adopt, METH_VARARGS, NULL},
    {"_math_adopt_numpy", math_adopt_numpy, METH_VARARGS, NULL},
    {"_math_nan", math_nan, METH_VARARGS, NULL},
    {"_math_run", math_run, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int
hop_py_vector_math_init(PyObject *module)
{
    return PyModule_AddFunctions(module, vector_math_functions);
}
