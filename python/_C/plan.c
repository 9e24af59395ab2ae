/*
 * python/_C/plan.c - hop._C.Plan: a lowered trace (Trace.lower()).  A run
 * releases the GIL, and on the main thread stays interruptible by Ctrl-C
 * (below).  Calls with NumPy arrays in and out are numpy_call.c's.
 */
#include "trace_impl.h"

#include "core/clock.h"

static void
plan_dealloc(PlanObject *p)
{
    hop_plan_free(p->plan);
    PyObject_Free(p);
}

/* ------------------------------------------------- Ctrl-C (issue #12) */

/*
 * A plan runs with the GIL released, where Python cannot run its signal
 * handlers.  On the main thread (the only one that runs them) the run's
 * progress handler (hop_run_options) takes the GIL back every
 * SIGNAL_CHECK_NS to call PyErr_CheckSignals: Ctrl-C's KeyboardInterrupt,
 * or whatever a handler raises, stops the run (HOP_INTERRUPTED) within
 * about that time plus one check interval of the plan, and plan_run
 * returns that exception.  The first call only starts the clock, so a
 * short run reads no clock and takes no GIL.
 */
#define SIGNAL_CHECK_NS 20000000 /* 20 ms */

typedef struct signal_check {
    PyThreadState *ts; /* the run's thread state while the GIL is released */
    int64_t next;      /* when to check next (CLOCK_MONOTONIC ns); 0: not started */
} signal_check;

static int
plan_signal_check(void *ud)
{
    signal_check *c = ud;
    int64_t now = hop__monotonic_ns();
    if (c->next == 0 || now < c->next) {
        if (c->next == 0)
            c->next = now + SIGNAL_CHECK_NS;
        return 0;
    }
    c->next = now + SIGNAL_CHECK_NS;
    PyEval_RestoreThread(c->ts);
    int failed = PyErr_CheckSignals() < 0;
    c->ts = PyEval_SaveThread();
    return failed;
}

/* With the GIL: whether this is the thread that runs signal handlers (the
 * main thread, read once from threading.main_thread()). */
static int
on_main_thread(void)
{
    static unsigned long main_ident;
    if (main_ident == 0) {
        PyObject *th = PyImport_ImportModule("threading");
        PyObject *mt = th ? PyObject_CallMethod(th, "main_thread", NULL) : NULL;
        PyObject *id = mt ? PyObject_GetAttrString(mt, "ident") : NULL;
        main_ident = id ? PyLong_AsUnsignedLong(id) : 0;
        Py_XDECREF(id);
        Py_XDECREF(mt);
        Py_XDECREF(th);
        if (PyErr_Occurred()) { /* unknown: check anyway, a no-op elsewhere */
            PyErr_Clear();
            return 1;
        }
    }
    return PyThread_get_thread_ident() == main_ident;
}

/* Runs the plan on in[0..n) into out[0..noutputs) with the GIL released
 * (interruptible on the main thread, see above): 0, or -1 with an
 * exception set and no outputs. */
int
hop_py__plan_exec(PlanObject *p, hop_tensor **in, size_t n, hop_tensor **out)
{
    signal_check check = {NULL, 0};
    hop_run_options opts = {on_main_thread() ? plan_signal_check : NULL, &check};
    /* a NumPy call reads the flags the run raised (hop_py__np_fp_warned) */
    hop_fp_clear();
    check.ts = PyEval_SaveThread();
    hop_status st = hop_plan_run_opts(p->plan, in, n, out, p->noutputs, &opts);
    PyEval_RestoreThread(check.ts);
    if (st != HOP_OK) {
        /* interrupted by a signal handler's exception: that one */
        if (!(st == HOP_INTERRUPTED && PyErr_Occurred()))
            hop_py_raise();
        return -1;
    }
    if (PyErr_Occurred()) {
        /* A signal handler raised during the run's last stretch (after the
         * last instruction that checked): the run's results are dropped
         * and the exception is raised here, not at some later call. */
        for (size_t i = 0; i < p->noutputs; i++)
            hop_tensor_release(out[i]);
        return -1;
    }
    if (p->fp_static != 0)
        hop_py__fp_raise(p->fp_static);
    return 0;
}

/* Plan input i (o, from a sequence) as a runtime tensor: NULL with
 * TypeError unless o is a concrete Tensor. */
hop_tensor *
hop_py__plan_input(PlanObject *p, Py_ssize_t i, PyObject *o)
{
    if (!PyObject_TypeCheck(o, &hop_py_TensorType) || HOP_PY_IS_PROXY(o)) {
        /* A proxy while this thread traces: a GraphModule called inside
         * hop.trace, hop.compile or a transform, which cannot see into it. */
        const char *got = !PyObject_TypeCheck(o, &hop_py_TensorType) ? Py_TYPE(o)->tp_name
                          : hop_py_current_trace() != NULL
                              ? "a traced value: a GraphModule runs its plan on concrete tensors, "
                                "so it cannot be called while hop.trace, hop.compile, grad, jvp "
                                "or vmap traces (transform the function it was traced from)"
                              : "a traced value (a proxy that escaped its trace)";
        PyErr_Format(PyExc_TypeError, "plan input %zd (%s) must be a concrete hop.Tensor, got %s",
                     i, hop_plan_input_name(p->plan, (size_t)i), got);
        return NULL;
    }
    return ((TensorObject *)o)->t;
}

PyObject *
hop_py__plan_run_tensors(PlanObject *p, PyObject *const *items, Py_ssize_t n, PyObject *caps,
                         hop_tensor *const *live, int shape)
{
    Py_ssize_t nc = caps != NULL ? PyTuple_GET_SIZE(caps) : 0;
    if ((size_t)(n + nc) != p->ninputs)
        return PyErr_Format(PyExc_TypeError, "the plan takes %zu tensors, got %zd", p->ninputs,
                            n + nc);
    hop_tensor *small_in[16], **in = small_in, *small_out[16], **out = small_out;
    if (n + nc > 16)
        in = PyMem_RawCalloc((size_t)(n + nc), sizeof *in);
    if (p->noutputs > 16)
        out = PyMem_RawCalloc(p->noutputs, sizeof *out);
    PyObject *result = NULL;
    if (in == NULL || out == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n + nc; i++)
        if (i >= n && live != NULL && live[i - n] != NULL)
            in[i] = live[i - n];
        else if ((in[i] = hop_py__plan_input(
                      p, i, i < n ? items[i] : PyTuple_GET_ITEM(caps, i - n))) == NULL)
            goto done;
    if (hop_py__plan_exec(p, in, (size_t)(n + nc), out) < 0)
        goto done;
    if (shape == HOP_PY_RUN_SINGLE && p->noutputs == 1) {
        result = hop_py_tensor_new(out[0]);
        goto done;
    }
    result = shape == HOP_PY_RUN_TUPLE ? PyTuple_New((Py_ssize_t)p->noutputs)
                                       : PyList_New((Py_ssize_t)p->noutputs);
    for (size_t i = 0; i < p->noutputs; i++) {
        PyObject *t = result ? hop_py_tensor_new(out[i]) : NULL;
        if (result == NULL) {
            hop_tensor_release(out[i]);
        } else if (t == NULL) {
            Py_CLEAR(result);
        } else if (shape == HOP_PY_RUN_TUPLE) {
            PyTuple_SET_ITEM(result, (Py_ssize_t)i, t);
        } else {
            PyList_SET_ITEM(result, (Py_ssize_t)i, t);
        }
    }
done:
    if (in != small_in)
        PyMem_RawFree(in);
    if (out != small_out)
        PyMem_RawFree(out);
    return result;
}

/* run(tensors) -> list of tensors: runs the plan with the GIL released
 * (interruptible on the main thread, see above). */
static PyObject *
plan_run(PlanObject *p, PyObject *arg)
{
    PyObject *fast = PySequence_Fast(arg, "Plan.run takes a sequence of tensors");
    if (fast == NULL)
        return NULL;
    PyObject *result =
        hop_py__plan_run_tensors(p, PySequence_Fast_ITEMS(fast), PySequence_Fast_GET_SIZE(fast),
                                 NULL, NULL, HOP_PY_RUN_LIST);
    Py_DECREF(fast);
    return result;
}

static PyObject *
plan_dump(PlanObject *p, PyObject *unused)
{
    (void)unused;
    return hop_py__printed(hop_plan_dump(p->plan));
}

static PyObject *
plan_notes(PlanObject *p, void *closure)
{
    (void)closure;
    size_t n = hop_plan_nnotes(p->plan);
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; t && i < n; i++)
        hop_py_fill(&t, (Py_ssize_t)i, PyUnicode_FromString(hop_plan_note(p->plan, i)));
    return t;
}

static PyObject *
plan_input_names(PlanObject *p, void *closure)
{
    (void)closure;
    PyObject *list = PyList_New((Py_ssize_t)p->ninputs);
    for (size_t i = 0; list && i < p->ninputs; i++) {
        hop_py_fill(&list, (Py_ssize_t)i, PyUnicode_FromString(hop_plan_input_name(p->plan, i)));
    }
    return list;
}

static PyMethodDef plan_methods[] = {
    {"run", (PyCFunction)plan_run, METH_O, "run(tensors) -> list of result tensors"},
    {"run_arrays", (PyCFunction)(void (*)(void))hop_py__plan_run_arrays, METH_FASTCALL,
     "run_arrays(arrays, captures, scalars) -> ndarray results (the compiled NumPy call)"},
    {"bind_arrays", (PyCFunction)(void (*)(void))hop_py__plan_bind_arrays, METH_FASTCALL,
     "bind_arrays(nargs, captures, scalars, c_order=None, alias=None, live=None, env=None) -> "
     "f: f(args) "
     "is run_arrays(args, captures, scalars) for a tuple of nargs ndarrays (those c_order marks "
     "in C order), else NotImplemented. alias: per argument the earlier one it must be (-1: an "
     "input of its own, no other own argument); only the own ones are the plan's inputs. live: "
     "a _LiveCaptures whose guards the call checks and whose captures (None in captures) it "
     "makes from the environment's arrays at each call (NotImplemented on a miss). env: a "
     "tuple of addresses (Guards.env_ids): a call with an argument that is one of the "
     "captures or at one of them is NotImplemented (None: not checked)"},
    {"bind_tensors", (PyCFunction)(void (*)(void))hop_py__plan_bind_tensors, METH_FASTCALL,
     "bind_tensors(nargs, captures, single, alias=None, live=None, env=None) -> f: f(args) runs "
     "the plan "
     "on a tuple of nargs hop.Tensors and the captures (the one result with single, else a "
     "tuple), and is NotImplemented for any other tuple (alias, live, env: as bind_arrays's)"},
    {"dump", (PyCFunction)plan_dump, METH_NOARGS, "The program, like SQLite's EXPLAIN."},
    {NULL, NULL, 0, NULL},
};

static PyObject *
plan_noutputs(PlanObject *p, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(p->noutputs);
}

static PyObject *
plan_fp_static(PlanObject *p, void *closure)
{
    (void)closure;
    return PyLong_FromLong(p->fp_static);
}

static int
plan_set_fp_static(PlanObject *p, PyObject *v, void *closure)
{
    (void)closure;
    long flags = v != NULL ? PyLong_AsLong(v) : -1;
    if (flags == -1 && PyErr_Occurred())
        return -1;
    if (flags < 0 ||
        flags > (HOP_FP_DIVIDE | HOP_FP_OVERFLOW | HOP_FP_UNDERFLOW | HOP_FP_INVALID)) {
        PyErr_Format(PyExc_ValueError, "Plan.fp_static must be hop_fp_status's bits (0..15)%s",
                     v == NULL ? ", not deleted" : "");
        return -1;
    }
    p->fp_static = (int)flags;
    return 0;
}

static PyGetSetDef plan_getset[] = {
    {"fp_static", (getter)plan_fp_static, (setter)plan_set_fp_static,
     "HOP_FP_* flags (0..15) every run raises after the plan's own: NumPy's floating-point "
     "exceptions of what the trace computed on constants, which eager computes on every call",
     NULL},
    {"input_names", (getter)plan_input_names, NULL, "names of the plan's tensor inputs", NULL},
    {"notes", (getter)plan_notes, NULL,
     "the lowering's notes: which way each HOP runs and why (hop_plan_note)", NULL},
    {"noutputs", (getter)plan_noutputs, NULL, "how many results a run returns", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop._C.Plan",
    .tp_basicsize = sizeof(PlanObject),
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A compiled program: run it with run(tensors).",
    .tp_methods = plan_methods,
    .tp_getset = plan_getset,
};

PyObject *
hop_py__plan_new(hop_plan *plan)
{
    PlanObject *p = PyObject_New(PlanObject, &PlanType);
    if (p == NULL) {
        hop_plan_free(plan);
        return NULL;
    }
    p->plan = plan;
    p->ninputs = hop_plan_ninputs(plan);
    p->noutputs = hop_plan_noutputs(plan);
    p->fp_static = 0;
    return (PyObject *)p;
}

int
hop_py__is_plan(PyObject *o)
{
    return Py_IS_TYPE(o, &PlanType);
}

int
hop_py__plan_init(void)
{
    return PyType_Ready(&PlanType);
}
