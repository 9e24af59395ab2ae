/*
 * python/_C/compiled_call.c - _C._CompiledCall: the base of hop.compile's
 * CompiledFunction (python/hop/_compile.py).  Its call: without keyword
 * arguments, the newest plan's bound call (_fast, Plan.bind_arrays or
 * Plan.bind_tensors) when it takes the arguments, else
 * self._call_args(args); with keyword arguments self._call_kw(args,
 * kwargs).  So the common call has no Python frame between it and the
 * plan, and keyword arguments cost nothing when absent.  A bound call whose
 * guard fails goes to _call_args (which tries the other plans or retraces),
 * as does one that fails while this thread traces (traced values: the
 * function is called inside another trace; it runs as part of that trace).
 */
#include "trace_impl.h"

#include <stddef.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD PyObject *fast; /* the bound call, or NULL */
} CompiledCallObject;

static PyObject *str_call_args, *str_call_kw; /* interned method names */

static PyObject *
compiled_call(CompiledCallObject *self, PyObject *args, PyObject *kwargs)
{
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)
        return PyObject_CallMethodObjArgs((PyObject *)self, str_call_kw, args, kwargs, NULL);
    PyObject *fast = self->fast;
    if (fast != NULL && fast != Py_None) {
        Py_INCREF(fast); /* the call may replace it */
        PyObject *r = PyObject_CallOneArg(fast, args);
        Py_DECREF(fast);
        if (r != Py_NotImplemented) {
            /* a guard that fails (a miss: _call_args retraces) and traced
             * values (inside another trace) take the general path */
            if (r != NULL ||
                !(PyErr_ExceptionMatches(hop_py_GuardError) || hop_py__thread_tracing()))
                return r;
            PyErr_Clear();
        } else {
            Py_DECREF(r);
        }
    }
    return PyObject_CallMethodOneArg((PyObject *)self, str_call_args, args);
}

/* The Python subclass brings its __dict__ and __weakref__ (and its type's
 * reference, which subtype_dealloc drops): only fast is ours. */
static int
compiled_traverse(CompiledCallObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fast);
    return 0;
}

static int
compiled_clear(CompiledCallObject *self)
{
    Py_CLEAR(self->fast);
    return 0;
}

static void
compiled_dealloc(CompiledCallObject *self)
{
    PyObject_GC_UnTrack(self);
    compiled_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef compiled_members[] = {
    {"_fast", T_OBJECT, offsetof(CompiledCallObject, fast), 0,
     "the newest plan's bound call (None: none)"},
    {NULL},
};

static PyTypeObject CompiledCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop._C._CompiledCall",
    .tp_basicsize = sizeof(CompiledCallObject),
    .tp_dealloc = (destructor)compiled_dealloc,
    .tp_call = (ternaryfunc)compiled_call,
    .tp_traverse = (traverseproc)compiled_traverse,
    .tp_clear = (inquiry)compiled_clear,
    .tp_members = compiled_members,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_doc = "The call of hop.compile's CompiledFunction: the bound plan (_fast), else "
              "_call_args(args), or _call_kw(args, kwargs) with keyword arguments.",
};

int
hop_py__compiled_call_init(PyObject *module)
{
    if (PyType_Ready(&CompiledCallType) < 0)
        return -1;
    if ((str_call_args = PyUnicode_InternFromString("_call_args")) == NULL ||
        (str_call_kw = PyUnicode_InternFromString("_call_kw")) == NULL)
        return -1;
    return PyModule_AddObjectRef(module, "_CompiledCall", (PyObject *)&CompiledCallType);
}
