/*
 * python/_C/user_class.c - _C._UserClass, the __class__ descriptor that
 * shows NumPy's classes to the user's code while hop traces.
 */
#include "tensor_impl.h"

#include <string.h>

/*
 * _C._UserClass(fn): a __class__ descriptor for hop.numpy.ndarray (and for
 * hop.SymInt and hop.SymFloat, which are ints and floats to the user's code
 * as eagerly: symint.c, hop/_symfloat.py).  The real
 * class, except while this thread traces or records a path (a bool hook is
 * set: hop/_paths.py) and the code asking (the current frame) is the
 * user's, not hop's or NumPy's: then fn(obj), NumPy's class, so that
 * isinstance(x, np.ndarray) answers as eagerly.  In C: every isinstance
 * that fails its type check on an array asks for __class__, and eager
 * hop.numpy makes many.
 */
typedef struct {
    PyObject_HEAD PyObject *fn;
} UserClassObject;

static void
user_class_dealloc(UserClassObject *self)
{
    Py_XDECREF(self->fn);
    PyObject_Free(self);
}

/* Whether the current Python frame runs hop's or NumPy's code. */
static int
internal_frame(void)
{
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    if (f == NULL)
        return 1;
    PyObject *g = PyFrame_GetGlobals(f);
    if (g == NULL) {
        PyErr_Clear();
        return 1;
    }
    PyObject *name = PyDict_GetItemString(g, "__name__"); /* borrowed */
    int inside = 0;
    if (name != NULL && PyUnicode_Check(name)) {
        const char *n = PyUnicode_AsUTF8(name);
        if (n == NULL)
            PyErr_Clear();
        else
            inside =
                strcmp(n, "hop") == 0 || strncmp(n, "hop.", 4) == 0 || strncmp(n, "numpy", 5) == 0;
    }
    Py_DECREF(g);
    return inside;
}

/* Whether obj is a hop.numpy array that is one of NumPy's scalars. */
static int
np_scalar(PyObject *obj)
{
    return hop_py__np_type != NULL && PyObject_TypeCheck(obj, hop_py__np_type) &&
           HOP_PY_SLOT(obj, hop_py__np_off_scalar) == Py_True;
}

/* Outside a trace, a hop.numpy scalar's class is NumPy's scalar type to the
 * user's code too (an array's stays hop.numpy.ndarray there, whose dict's
 * __hash__ None makes it no collections.abc.Hashable, as np.ndarray: the
 * scalar is one through this class, np_eager.c's np_hash_init).  Only a
 * scalar pays for the look at the frame. */
static PyObject *
user_class_get(UserClassObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(type != NULL ? type : (PyObject *)Py_TYPE(self));
    if ((!hop_py__bool_hook_set() && !hop_py_tracing_active() && !np_scalar(obj)) ||
        internal_frame())
        return Py_NewRef((PyObject *)Py_TYPE(obj));
    return PyObject_CallOneArg(self->fn, obj);
}

static PyObject *
user_class_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *fn;
    if (!PyArg_ParseTuple(args, "O:_UserClass", &fn))
        return NULL;
    UserClassObject *self = (UserClassObject *)type->tp_alloc(type, 0);
    if (self != NULL)
        self->fn = Py_NewRef(fn);
    return (PyObject *)self;
}

static PyTypeObject UserClassType;

PyObject *
hop_py__user_class_new(PyObject *fn)
{
    return PyObject_CallOneArg((PyObject *)&UserClassType, fn);
}

static PyTypeObject UserClassType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop._C._UserClass",
    .tp_basicsize = sizeof(UserClassObject),
    .tp_dealloc = (destructor)user_class_dealloc,
    .tp_descr_get = (descrgetfunc)user_class_get,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = user_class_new,
    .tp_doc = "_UserClass(fn): a __class__ that is fn(obj) for the user's code while hop "
              "traces (or records a path), the real class otherwise.",
};

int
hop_py__user_class_init(PyObject *m)
{
    if (PyType_Ready(&UserClassType) < 0 ||
        PyModule_AddObjectRef(m, "_UserClass", (PyObject *)&UserClassType) < 0)
        return -1;
    return 0;
}
