/*
 * python/_C/trace.c - tracing from Python: the Trace object (one
 * OutputGraph), proxies, graph introspection for hop.GraphModule, and what
 * python/_C/hops.c needs to call HOPs in a trace.  SymInts, plans, the
 * compiled call of NumPy code and a graph as Python data (describe) have
 * their own files (trace_impl.h).
 *
 * While a Trace is active every op goes through it (hop_py_trace_op): proxy
 * operands are nodes of the current tracer or of enclosing ones (lifted by
 * the tracer), and a concrete tensor used as an operand is captured as a root
 * input, deduplicated by identity.  Bodies run synchronously inside the HOP
 * call, so the frame of the innermost HOP call is a plain stack.
 *
 * Tracing state is per thread: the active trace and the innermost HOP frame
 * are _Thread_local, so one thread can trace while others compute eagerly or
 * trace other functions.  A trace belongs to the thread that started it until
 * it stops; another thread that reaches it (a proxy or the Trace object
 * handed over) gets a TraceError, never a node in a graph it does not own.
 */
#include "trace_impl.h"
#include "tensor_impl.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

static PyTypeObject TraceType;

/* This thread's active trace (trace_impl.h). */
_Thread_local TraceObject *hop_py__current;

/* Threads tracing right now.  Changed and read with the GIL held; the eager
 * fast paths test it before the thread-local `current`, so that an op costs
 * no thread-local lookup while no thread traces. */
int hop_py__ntracing;

/* ------------------------------------------------------------- helpers */

static TraceObject *
active_trace(const char *what)
{
    if (hop_py__current == NULL) {
        PyErr_Format(hop_py_TraceError,
                     "%s: no trace is active (a traced value was used after its trace ended)",
                     what);
        return NULL;
    }
    return hop_py__current;
}

/* tr itself must be this thread's active trace: a Trace started by another
 * thread (or not started) cannot take HOP calls or inputs from here. */
static int
own_active(TraceObject *tr, const char *what)
{
    if (tr == hop_py__current)
        return 0;
    if (tr->active)
        PyErr_Format(hop_py_TraceError,
                     "%s: the trace is active in another thread (tracing state is per thread; "
                     "a trace is used only by the thread that started it)",
                     what);
    else
        PyErr_Format(hop_py_TraceError, "%s: the trace is not active (start() it first)", what);
    return -1;
}

/* A trace whose graph another thread is building right now: reading or
 * changing it from here would see (or make) a half-built graph. */
static int
not_elsewhere(TraceObject *tr, const char *what)
{
    if (tr->active && tr != hop_py__current) {
        PyErr_Format(hop_py_TraceError,
                     "%s: the trace is active in another thread (tracing state is per thread; "
                     "a trace is used only by the thread that started it)",
                     what);
        return -1;
    }
    return 0;
}

static hop_tracer *
current_tracer(TraceObject *tr)
{
    return hop_output_graph_current(tr->og);
}

/* A node's value as a Python object: a proxy or a SymInt. */
static PyObject *
wrap_node(PyObject *owner, hop_node *n)
{
    if (n->meta->kind == HOP_VALUE_SYM)
        return hop_py__symint_new(owner, n->meta->sym, n);
    return hop_py_proxy_new(owner, n);
}

PyObject *
hop_py_proxy_shape(TensorObject *p)
{
    const hop_meta *m = &p->node->meta->meta;
    PyObject *shape = PyTuple_New(m->rank);
    for (int d = 0; shape && d < m->rank; d++)
        hop_py_fill(&shape, d, hop_py__symint_new(p->owner, m->sizes[d], NULL));
    return shape;
}

/* A captured tensor's name into name: its hint, else _tensor_constant<k>;
 * what snprintf's "%s" and "_tensor_constant%ld" write there, by hand when
 * it fits (the format parsing was ~1 K instructions of every capture, one
 * per use of a closed-over tensor, issue #30). */
static void
capture_name(char *name, size_t cap, PyObject *hint, long k)
{
    static const char prefix[] = "_tensor_constant";
    if (hint && PyUnicode_Check(hint)) {
        const char *u = PyUnicode_AsUTF8(hint);
        size_t n = u ? strlen(u) : cap;
        if (n < cap)
            memcpy(name, u, n + 1);
        else
            snprintf(name, cap, "%s", u);
        return;
    }
    size_t n = sizeof prefix - 1;
    if (k < 0 || n + 21 > cap) { /* up to 20 digits of a long, NUL */
        snprintf(name, cap, "_tensor_constant%ld", k);
        return;
    }
    memcpy(name, prefix, n);
    hop_py_put_digits(name + n, (unsigned long long)k);
}

/*
 * Captures a concrete tensor as a root input of tr (once per object).  The
 * OutputGraph knows the tensor by its address, so the trace keeps it alive
 * first: an input whose object died could be matched by a new object at the
 * same address.  A failed HOP call takes its captures out of the OutputGraph
 * again; the object stays kept, which is harmless.  The keeping is an append
 * to a list, taken back when the tensor was captured already (a dict keyed
 * by the address, and the key's int, were ~600 instructions of every
 * capture, issue #30); a name hint is looked up only when the trace has
 * any.
 */
static hop_node *
capture(TraceObject *tr, TensorObject *t)
{
    PyObject *hint = NULL;
    if (PyDict_GET_SIZE(tr->names) > 0) {
        PyObject *key = PyLong_FromVoidPtr(t);
        if (key == NULL)
            return NULL;
        hint = PyDict_GetItemWithError(tr->names, key);
        Py_DECREF(key);
        if (hint == NULL && PyErr_Occurred())
            return NULL;
    }
    if (PyList_Append(tr->kept, (PyObject *)t) < 0)
        return NULL;
    char name[128];
    capture_name(name, sizeof name, hint, tr->nconstants);
    size_t before = hop_output_graph_ninputs(tr->og);
    hop_node *n = hop_output_graph_capture(tr->og, t, name, t->t->dtype, t->t->rank, t->t->sizes,
                                           false);
    if (hop_output_graph_ninputs(tr->og) == before) {
        /* Kept since its first capture (or nothing was captured): the last
         * item goes again, as list.pop() takes it. */
        Py_ssize_t k = PyList_GET_SIZE(tr->kept) - 1;
        PyObject *last = PyList_GET_ITEM(tr->kept, k);
        Py_SET_SIZE(tr->kept, k);
        Py_DECREF(last);
    } else if (hint == NULL) {
        tr->nconstants++;
    }
    if (n == NULL)
        hop_py_raise();
    return n;
}

/* The node standing for a Python value in an op or a body's result. */
static hop_node *
value_node(TraceObject *tr, PyObject *o, const char *what)
{
    if (PyObject_TypeCheck(o, &hop_py_TensorType)) {
        TensorObject *t = (TensorObject *)o;
        if (t->t != NULL)
            return capture(tr, t);
        if (t->owner != (PyObject *)tr) {
            PyErr_Format(hop_py_TraceError, "%s: a traced value of another trace was used", what);
            return NULL;
        }
        return t->node;
    }
    if (PyObject_TypeCheck(o, &hop_py_SymIntType)) {
        SymIntObject *s = (SymIntObject *)o;
        if (hop_py__symint_usable(o) < 0)
            return NULL;
        if (s->node)
            return s->node;
        hop_tracer *t = current_tracer(tr);
        if (hop_expr_kind_of(s->expr) == HOP_EXPR_SYMBOL) {
            hop_node *n = hop_tracer_bind_symbol(t, s->expr);
            if (n == NULL)
                hop_py_raise();
            return n;
        }
        /* An expression (u0 + 1, a loop's next SymInt carry; i < 10, a loop
         * condition) becomes a value: a 0-d tensor of it, and for an int
         * its item, a SymInt node (an unbacked symbol: a carry leaves its
         * loop as one anyway). */
        bool is_bool = hop_expr_is_bool(s->expr);
        hop_arg full[] = {hop_arg_list(NULL, 0), hop_arg_sym(s->expr),
                          hop_arg_dtype(is_bool ? HOP_BOOL : HOP_I64)};
        hop_node *n = hop_tracer_call_op(t, HOP_OP_full, full, 3);
        if (n != NULL && !is_bool)
            n = hop_tracer_call_op(t, HOP_OP_item, (hop_arg[]){hop_arg_node(n)}, 1);
        if (n == NULL)
            hop_py_raise();
        return n;
    }
    PyErr_Format(PyExc_TypeError, "%s: expected a hop.Tensor or a SymInt, got %.100s", what,
                 Py_TYPE(o)->tp_name);
    return NULL;
}

/* ----------------------------------------------------- recording an op */

/* Converts operands to graph arguments; lists take items from *pool. */
static int
to_args(TraceObject *tr, const hop_py_opnd *in, size_t n, hop_arg *out, hop_arg **pool,
        hop_arg *pool_end, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        const hop_py_opnd *o = &in[i];
        switch (o->kind) {
        case HOP_PY_NONE:
            out[i] = hop_arg_none();
            break;
        case HOP_PY_INT:
            out[i] = hop_arg_int(o->u.i);
            break;
        case HOP_PY_FLOAT:
            out[i] = hop_arg_float(o->u.f);
            break;
        case HOP_PY_BOOL:
            out[i] = hop_arg_bool(o->u.b);
            break;
        case HOP_PY_DTYPE:
            out[i] = hop_arg_dtype(o->u.d);
            break;
        case HOP_PY_TENSOR: {
            hop_node *node = value_node(tr, (PyObject *)o->u.t, what);
            if (node == NULL)
                return -1;
            out[i] = hop_arg_node(node);
            break;
        }
        case HOP_PY_SYMFLOAT: /* hop_py_run_op converts these to tensors first */
            PyErr_Format(PyExc_SystemError, "%s: an unconverted SymFloat operand", what);
            return -1;
        case HOP_PY_SYM: {
            SymIntObject *s = (SymIntObject *)o->u.sym;
            if (hop_py__symint_usable(o->u.sym) < 0)
                return -1;
            out[i] = s->node ? hop_arg_node(s->node) : hop_arg_sym(s->expr);
            break;
        }
        case HOP_PY_LIST: {
            size_t k = o->u.list.n;
            if (*pool + k > pool_end) {
                PyErr_Format(PyExc_ValueError, "%s: too many list items", what);
                return -1;
            }
            hop_arg *items = *pool;
            *pool += k;
            if (to_args(tr, o->u.list.items, k, items, pool, pool_end, what) < 0)
                return -1;
            out[i] = hop_arg_list(items, k);
            break;
        }
        }
    }
    return 0;
}

static size_t
count_items(const hop_py_opnd *in, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (in[i].kind == HOP_PY_LIST)
            total += in[i].u.list.n + count_items(in[i].u.list.items, in[i].u.list.n);
    return total;
}

/* The graph arguments of an op's or a foreign call's operands, their list
 * items after them: in small when they fit, else in a PyMem block. */
typedef struct arg_buffer {
    hop_arg small[64];
    hop_arg *args;
} arg_buffer;

static void
arg_buffer_free(arg_buffer *b)
{
    if (b->args != b->small)
        PyMem_RawFree(b->args);
    b->args = b->small;
}

/* The start of recording a call (what names it in messages) in this
 * thread's trace: the trace, with b filled with the nargs operands' graph
 * arguments; NULL, with an exception and nothing in b to free, when no
 * trace is active or an operand does not convert. */
static TraceObject *
traced_args(const char *what, const hop_py_opnd *args, size_t nargs, arg_buffer *b)
{
    b->args = b->small;
    TraceObject *tr = active_trace(what);
    if (tr == NULL)
        return NULL;
    size_t total = nargs + count_items(args, nargs);
    if (total > 64 && (b->args = PyMem_RawCalloc(total, sizeof *b->args)) == NULL) {
        b->args = b->small;
        PyErr_NoMemory();
        return NULL;
    }
    hop_arg *pool = b->args + nargs;
    if (to_args(tr, args, nargs, b->args, &pool, b->args + total, what) == 0)
        return tr;
    arg_buffer_free(b);
    return NULL;
}

PyObject *
hop_py_trace_op(hop_op op, const hop_py_opnd *args, size_t nargs)
{
    const hop_op_info *info = hop_op_get(op);
    const char *what = info ? info->name : "op";
    arg_buffer b;
    TraceObject *tr = traced_args(what, args, nargs, &b);
    if (tr == NULL)
        return NULL;
    PyObject *result = hop_py__record_op(tr, op, b.args, nargs);
    arg_buffer_free(&b);
    /* A view of a proxy: linked to it while it lives (hop_py.h, viewof). */
    if (result != NULL && info != NULL && info->family == HOP_KF_VIEW && nargs > 0 &&
        args[0].kind == HOP_PY_TENSOR && args[0].u.t->t == NULL &&
        PyObject_TypeCheck(result, &hop_py_TensorType)) {
        TensorObject *v = (TensorObject *)result;
        v->viewof = Py_NewRef((PyObject *)args[0].u.t);
        args[0].u.t->nviews++;
    }
    return result;
}

/* A foreign kernel's call recorded in the current tracer: None, one proxy
 * or a tuple of proxies (one per in-out parameter). */
PyObject *
hop_py_trace_foreign(const hop_foreign *f, const hop_py_opnd *args, size_t nargs)
{
    const char *what = hop_foreign_name(f);
    arg_buffer b;
    TraceObject *tr = traced_args(what, args, nargs, &b);
    if (tr == NULL)
        return NULL;
    PyObject *result = NULL;
    hop_values vs = {0};
    if (hop_tracer_call_foreign(current_tracer(tr), f, b.args, nargs, &vs) != HOP_OK) {
        hop_py_raise();
    } else if (vs.n == 0) {
        result = Py_NewRef(Py_None);
    } else if (vs.n == 1) {
        result = wrap_node((PyObject *)tr, vs.items[0]);
    } else if ((result = PyTuple_New((Py_ssize_t)vs.n)) != NULL) {
        for (size_t j = 0; j < vs.n; j++) {
            PyObject *v = wrap_node((PyObject *)tr, vs.items[j]);
            if (v == NULL) {
                Py_CLEAR(result);
                break;
            }
            PyTuple_SET_ITEM(result, (Py_ssize_t)j, v);
        }
    }
    hop_values_clear(&vs);
    arg_buffer_free(&b);
    return result;
}

int
hop_py__thread_tracing(void)
{
    return hop_py__current != NULL;
}

/* ------------------------------------------------------ for HOP calls */

/* The interface python/_C/hops.c uses to call HOPs in a trace. */

PyObject *
hop_py_current_trace(void)
{
    return (PyObject *)hop_py__current;
}

hop_node *
hop_py_value_node(PyObject *trace, PyObject *o, const char *what)
{
    return value_node((TraceObject *)trace, o, what);
}

PyObject *
hop_py_wrap_node(PyObject *trace, hop_node *n)
{
    return wrap_node(trace, n);
}

/*
 * The C stack a HOP call must find left: a level of nesting (this call, the
 * C HOP protocol, the Python body and its frames) takes a few KiB, 2-3 times
 * that under AddressSanitizer, and the body may call more.  HOP_MAX_NESTING
 * bounds the levels; this catches a thread whose stack is smaller than the
 * main thread's (threading.stack_size) before it overflows.  The reserve is
 * a quarter of the stack, at most 256 KiB.
 */
#define STACK_RESERVE_MAX ((size_t)256 * 1024)

static _Thread_local uintptr_t stack_floor; /* lowest usable address; 0 unknown */
static _Thread_local size_t stack_reserve;
static _Thread_local bool stack_probed;

static bool
stack_exhausted(void)
{
#if defined(__linux__) && defined(__GLIBC__)
    if (!stack_probed) {
        pthread_attr_t attr;
        void *lo;
        size_t size;
        stack_probed = true;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
                stack_reserve = size / 4 < STACK_RESERVE_MAX ? size / 4 : STACK_RESERVE_MAX;
                stack_floor = (uintptr_t)lo + stack_reserve;
            }
            pthread_attr_destroy(&attr);
        }
    }
    return stack_floor != 0 && (uintptr_t)__builtin_frame_address(0) < stack_floor;
#else
    return false;
#endif
}

/* The checks before a HOP call: tr is this thread's active trace, and the
 * nesting leaves C stack for one more level. */
int
hop_py_enter_hop(PyObject *trace, const char *what)
{
    TraceObject *tr = (TraceObject *)trace;
    if (own_active(tr, what) < 0)
        return -1;
    if (stack_exhausted()) {
        PyErr_Format(PyExc_RecursionError,
                     "%s: HOP bodies nested %zu deep exhaust this thread's C stack (hop stops "
                     "%zu KiB before its end; nest less, or give the thread a bigger stack)",
                     what, hop_output_graph_depth(tr->og) - 1, stack_reserve / 1024);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- the Trace */

static PyObject *
trace_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (!PyArg_ParseTuple(args, ":Trace") || (kwds && PyDict_Size(kwds) > 0)) {
        PyErr_SetString(PyExc_TypeError, "Trace() takes no arguments");
        return NULL;
    }
    TraceObject *tr = (TraceObject *)type->tp_alloc(type, 0);
    if (tr == NULL)
        return NULL;
    tr->og = hop_output_graph_new();
    if (tr->og)
        hop_py_install_lift_hook(tr->og);
    tr->kept = PyList_New(0);
    tr->names = PyDict_New();
    tr->scratch = PyDict_New();
    if (tr->og == NULL || tr->kept == NULL || tr->names == NULL || tr->scratch == NULL) {
        /* Decide before the DECREF frees tr: reading tr->og after it was a
         * use-after-free.  A failed hop_output_graph_new left its error in
         * the context, which the dealloc does not touch. */
        bool og_failed = tr->og == NULL;
        Py_DECREF(tr);
        return og_failed ? hop_py_raise() : NULL;
    }
    return (PyObject *)tr;
}

/* The Python layer's per-trace state (invoke_subgraph keys hold the
 * functions a body reads, their globals, ...) can reach back to the trace
 * through a GraphModule: the collector must see these references. */
static int
trace_traverse(TraceObject *tr, visitproc visit, void *arg)
{
    Py_VISIT(tr->kept);
    Py_VISIT(tr->names);
    Py_VISIT(tr->scratch);
    return 0;
}

/* Breaks a cycle through scratch (the only container that can hold one):
 * an empty dict takes its place, so the trace stays usable. */
static int
trace_clear(TraceObject *tr)
{
    if (tr->scratch != NULL)
        PyDict_Clear(tr->scratch);
    return 0;
}

static void
trace_dealloc(TraceObject *tr)
{
    /* An active trace holds a reference to itself, so it is never the
     * `current` of any thread here. */
    PyObject_GC_UnTrack(tr);
    hop_py_memo_free(tr->memo);
    hop_output_graph_free(tr->og);
    Py_XDECREF(tr->kept);
    Py_XDECREF(tr->names);
    Py_XDECREF(tr->scratch);
    Py_TYPE(tr)->tp_free((PyObject *)tr);
}

static PyObject *
trace_start(TraceObject *tr, PyObject *unused)
{
    (void)unused;
    if (hop_py__current != NULL)
        return PyErr_Format(hop_py_TraceError,
                            "hop.trace: a trace is already active (hop.trace and hop.compile "
                            "cannot be nested)");
    if (tr->active)
        return PyErr_Format(hop_py_TraceError,
                            "hop.trace: this trace is already active in another thread");
    if (tr->loaded)
        return PyErr_Format(hop_py_TraceError,
                            "hop.trace: a loaded program is finished; it cannot be traced into");
    tr->active = 1;
    hop_py__current = tr;
    hop_py__ntracing++;
    Py_INCREF(tr);
    Py_RETURN_NONE;
}

static PyObject *
trace_stop(TraceObject *tr, PyObject *unused)
{
    (void)unused;
    if (tr->active && tr != hop_py__current)
        return PyErr_Format(hop_py_TraceError,
                            "stop: the trace is active in another thread (only the thread that "
                            "started it can stop it)");
    if (tr->active) {
        tr->active = 0;
        hop_py__current = NULL;
        hop_py__ntracing--;
        if (tr->memo != NULL)
            hop_py_memo_stop(tr->memo); /* nothing is recorded any more */
        Py_DECREF(tr);
    }
    Py_RETURN_NONE;
}

static int
parse_dynamic(PyObject *dyn, int rank, bool *dims)
{
    if (dyn == Py_None || PyBool_Check(dyn)) {
        for (int d = 0; d < rank; d++)
            dims[d] = dyn == Py_True;
        return 0;
    }
    PyObject *fast = PySequence_Fast(dyn, "dynamic must be a bool or a sequence of bools");
    if (fast == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(fast) != rank) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "dynamic has %zd entries for a tensor of rank %d",
                     PySequence_Fast_GET_SIZE(fast), rank);
        return -1;
    }
    for (int d = 0; d < rank; d++) {
        int v = PyObject_IsTrue(PySequence_Fast_GET_ITEM(fast, d));
        if (v < 0) {
            Py_DECREF(fast);
            return -1;
        }
        dims[d] = v;
    }
    Py_DECREF(fast);
    return 0;
}

static PyObject *
trace_add_input(TraceObject *tr, PyObject *args)
{
    const char *name;
    PyObject *t, *dyn;
    if (!PyArg_ParseTuple(args, "sO!O:add_input", &name, &hop_py_TensorType, &t, &dyn))
        return NULL;
    TensorObject *x = (TensorObject *)t;
    if (not_elsewhere(tr, "add_input") < 0)
        return NULL;
    if (x->t == NULL)
        return PyErr_Format(PyExc_TypeError, "add_input: %s is a traced value, not an example",
                            name);
    bool dims[HOP_MAX_RANK];
    if (parse_dynamic(dyn, x->t->rank, dims) < 0)
        return NULL;
    hop_node *n = hop_output_graph_add_input_dims(tr->og, name, x->t->dtype, x->t->rank,
                                                  x->t->sizes, dims);
    return n ? hop_py_proxy_new((PyObject *)tr, n) : hop_py_raise();
}

/* Names obj (a concrete tensor a traced function reaches from outside) name
 * unless it has a name already: the first hint wins.  -1 with an exception
 * set on failure. */
static int
hint(TraceObject *tr, PyObject *obj, PyObject *name)
{
    PyObject *key = PyLong_FromVoidPtr(obj);
    if (key == NULL)
        return -1;
    int r = PyDict_Contains(tr->names, key);
    if (r == 0)
        r = PyDict_SetItem(tr->names, key, name);
    Py_DECREF(key);
    return r < 0 ? -1 : 0;
}

static PyObject *
trace_name_hint(TraceObject *tr, PyObject *args)
{
    PyObject *obj, *name;
    if (!PyArg_ParseTuple(args, "OU:name_hint", &obj, &name) || not_elsewhere(tr, "name_hint") < 0)
        return NULL;
    if (hint(tr, obj, name) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Hints the concrete tensors in closure's cells (named after freevars). */
static int
hint_cells(TraceObject *tr, PyCodeObject *code, PyObject *closure)
{
    PyObject *freevars = PyCode_GetFreevars(code);
    if (freevars == NULL)
        return -1;
    Py_ssize_t n = Py_MIN(PyTuple_GET_SIZE(freevars), PyTuple_GET_SIZE(closure));
    int r = 0;
    for (Py_ssize_t i = 0; i < n && r == 0; i++) {
        PyObject *cell = PyTuple_GET_ITEM(closure, i);
        PyObject *v = PyCell_Check(cell) ? PyCell_GET(cell) : NULL; // NULL: an empty cell
        if (v != NULL && PyObject_TypeCheck(v, &hop_py_TensorType))
            r = hint(tr, v, PyTuple_GET_ITEM(freevars, i));
    }
    Py_DECREF(freevars);
    return r;
}

/* Hints the concrete tensors among globals[name] for the names code uses. */
static int
hint_globals(TraceObject *tr, PyCodeObject *code, PyObject *globals)
{
    PyObject *names = code->co_names;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i), *v;
        if (PyDict_CheckExact(globals)) {
            v = Py_XNewRef(PyDict_GetItemWithError(globals, name));
            if (v == NULL && PyErr_Occurred())
                return -1;
        } else if ((v = PyObject_CallMethod(globals, "get", "O", name)) == NULL) {
            return -1;
        }
        int r = v != NULL && PyObject_TypeCheck(v, &hop_py_TensorType) ? hint(tr, v, name) : 0;
        Py_XDECREF(v);
        if (r < 0)
            return -1;
    }
    return 0;
}

/* name_hints(fn): hints a name for each concrete tensor fn reaches through
 * its closure cells (the cell's name) and its module's globals that its own
 * code names (the global's name), in that order: a HOP body's captures are
 * named after the variables that hold them.  Called for every traced body,
 * so in C (issue #30: it was a Python loop per HOP call). */
int
hop_py_name_hints(PyObject *trace, PyObject *fn)
{
    TraceObject *tr = (TraceObject *)trace;
    if (not_elsewhere(tr, "name_hints") < 0)
        return -1;
    PyObject *code, *closure, *globals;
    if (PyFunction_Check(fn)) {
        code = Py_NewRef(PyFunction_GET_CODE(fn));
        closure = Py_NewRef(PyFunction_GET_CLOSURE(fn) ? PyFunction_GET_CLOSURE(fn) : Py_None);
        globals = Py_NewRef(PyFunction_GET_GLOBALS(fn));
    } else { // a method, or any object with these attributes
        code = hop_py_attr_or(PyObject_GetAttrString(fn, "__code__"), Py_None);
        closure = code ? hop_py_attr_or(PyObject_GetAttrString(fn, "__closure__"), Py_None) : NULL;
        globals =
            closure ? hop_py_attr_or(PyObject_GetAttrString(fn, "__globals__"), Py_None) : NULL;
    }
    int r = globals == NULL ? -1 : 0;
    if (r == 0 && PyCode_Check(code)) {
        if (PyTuple_Check(closure) && PyTuple_GET_SIZE(closure) > 0)
            r = hint_cells(tr, (PyCodeObject *)code, closure);
        if (r == 0 && globals != Py_None)
            r = hint_globals(tr, (PyCodeObject *)code, globals);
    }
    Py_XDECREF(code);
    Py_XDECREF(closure);
    Py_XDECREF(globals);
    return r;
}

static PyObject *
trace_name_hints(TraceObject *tr, PyObject *fn)
{
    if (hop_py_name_hints((PyObject *)tr, fn) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Converts a sequence of proxies/SymInts/tensors into node arguments. */
static hop_arg *
node_args(TraceObject *tr, PyObject *seq, Py_ssize_t *n, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of traced values");
    if (fast == NULL)
        return NULL;
    *n = PySequence_Fast_GET_SIZE(fast);
    hop_arg *args = PyMem_RawCalloc((size_t)*n + 1, sizeof *args);
    for (Py_ssize_t i = 0; args && i < *n; i++) {
        hop_node *node = value_node(tr, PySequence_Fast_GET_ITEM(fast, i), what);
        if (node == NULL) {
            PyMem_RawFree(args);
            args = NULL;
            break;
        }
        args[i] = hop_arg_node(node);
    }
    Py_DECREF(fast);
    if (args == NULL && !PyErr_Occurred())
        PyErr_NoMemory();
    return args;
}

static PyObject *
trace_output(TraceObject *tr, PyObject *leaves)
{
    Py_ssize_t n;
    if (not_elsewhere(tr, "output") < 0)
        return NULL;
    hop_arg *args = node_args(tr, leaves, &n, "output");
    if (args == NULL)
        return NULL;
    hop_node *o = hop_tracer_output(hop_output_graph_root(tr->og), args, (size_t)n);
    PyMem_RawFree(args);
    /* Not verified here: lower() verifies the root graph (hop_lower), and
     * hop_apply verified each HOP call node as it was recorded.  A second
     * walk here cost ~5% of tracing a HOP call (issue #30). */
    return o ? Py_NewRef(Py_None) : hop_py_raise();
}

static PyObject *
trace_depth(TraceObject *tr, PyObject *unused)
{
    (void)unused;
    if (not_elsewhere(tr, "depth") < 0)
        return NULL;
    return PyLong_FromSize_t(hop_output_graph_depth(tr->og));
}

static PyObject *
trace_guards(TraceObject *tr, PyObject *unused)
{
    (void)unused;
    if (not_elsewhere(tr, "guards") < 0)
        return NULL;
    hop_shape_env *env = hop_output_graph_env(tr->og);
    size_t n = hop_shape_env_nguards(env);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        char buf[512];
        hop_expr_print(hop_shape_env_guard(env, i), buf, sizeof buf);
        hop_py_fill(&list, (Py_ssize_t)i, PyUnicode_FromString(buf));
    }
    return list;
}

/* The root inputs: (name, kind, detail) with kind "arg" (detail: position),
 * "capture" (detail: the object) or "size" (detail: (input index, dim)). */
static PyObject *
trace_inputs(TraceObject *tr, PyObject *unused)
{
    (void)unused;
    if (not_elsewhere(tr, "inputs") < 0)
        return NULL;
    size_t n = hop_output_graph_ninputs(tr->og);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        hop_source src;
        hop_node *node = hop_output_graph_input(tr->og, i, &src);
        PyObject *item = NULL;
        if (src.kind == HOP_SOURCE_ARG)
            item = Py_BuildValue("(ssn)", node->name, "arg", (Py_ssize_t)src.position);
        else if (src.kind == HOP_SOURCE_CAPTURE)
            item = Py_BuildValue("(ssO)", node->name, "capture", (PyObject *)src.identity);
        else
            item = Py_BuildValue("(ss(nn))", node->name, "size", (Py_ssize_t)src.input,
                                 (Py_ssize_t)src.dim);
        hop_py_fill(&list, (Py_ssize_t)i, item);
    }
    return list;
}

/* The tracer at depth k of tr's stack (1: the root), or NULL with
 * IndexError. */
static hop_tracer *
tracer_at(TraceObject *tr, Py_ssize_t k)
{
    hop_tracer *t = hop_output_graph_current(tr->og);
    Py_ssize_t depth = (Py_ssize_t)hop_output_graph_depth(tr->og);
    if (k < 1 || k > depth) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_IndexError, "no tracer at depth %zd (the stack holds %zd)", k,
                         depth);
        return NULL;
    }
    for (; depth > k; depth--)
        t = hop_tracer_parent(t);
    return t;
}

/* Finds a subgraph by its path of names from the root; a path whose first
 * item is None starts at the graph the innermost tracer records into, an
 * int k at the graph of the tracer at depth k (1: the root): a body's
 * graph is no subgraph of its parent's until its HOP call ends. */
static hop_graph *
graph_at(TraceObject *tr, PyObject *path)
{
    hop_graph *g = hop_output_graph_root_graph(tr->og);
    PyObject *fast = PySequence_Fast(path, "path must be a sequence of subgraph names");
    if (fast == NULL)
        return NULL;
    Py_ssize_t i = 0;
    PyObject *first = PySequence_Fast_GET_SIZE(fast) > 0 ? PySequence_Fast_GET_ITEM(fast, 0) : NULL;
    if (first == Py_None || (first && PyLong_Check(first))) {
        hop_tracer *t = first == Py_None ? hop_output_graph_current(tr->og)
                                         : tracer_at(tr, PyLong_AsSsize_t(first));
        g = t ? hop_tracer_graph(t) : NULL;
        i = 1;
    }
    for (; g && i < PySequence_Fast_GET_SIZE(fast); i++) {
        const char *name = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
        if (name == NULL) {
            g = NULL;
            break;
        }
        hop_graph *sub = hop_graph_find_subgraph(g, name);
        if (sub == NULL)
            PyErr_Format(PyExc_KeyError, "no subgraph %s in graph %s", name, g->name);
        g = sub;
    }
    Py_DECREF(fast);
    return g;
}

PyObject *
hop_py__printed(char *s)
{
    if (s == NULL)
        return hop_py_raise();
    PyObject *r = PyUnicode_FromString(s);
    hop_free(s);
    return r;
}

/* text(path, kind) -> the graph at path printed as "code", "table" or "dot"
 * (its subgraphs included).  Apart from describe: a 1,000-deep nest prints
 * megabytes of each, and a caller wants one of them. */
static PyObject *
trace_text(TraceObject *tr, PyObject *args)
{
    PyObject *path;
    const char *kind;
    if (!PyArg_ParseTuple(args, "Os:text", &path, &kind) || not_elsewhere(tr, "text") < 0)
        return NULL;
    char *(*print)(const hop_graph *) = strcmp(kind, "code") == 0    ? hop_graph_code
                                        : strcmp(kind, "table") == 0 ? hop_graph_table
                                        : strcmp(kind, "dot") == 0   ? hop_graph_dot
                                                                     : NULL;
    if (print == NULL) {
        PyErr_Format(PyExc_ValueError, "text: kind must be 'code', 'table' or 'dot', got '%s'",
                     kind);
        return NULL;
    }
    hop_graph *g = graph_at(tr, path);
    return g ? hop_py__printed(print(g)) : NULL;
}

/* placeholder_names(path) -> the names of the graph's placeholders, in
 * order (what describe's nodes give, without converting every node). */
static PyObject *
trace_placeholder_names(TraceObject *tr, PyObject *path)
{
    if (not_elsewhere(tr, "placeholder_names") < 0)
        return NULL;
    hop_graph *g = graph_at(tr, path);
    if (g == NULL)
        return NULL;
    PyObject *list = PyList_New((Py_ssize_t)g->nplaceholders);
    const hop_node *n = g->first;
    for (size_t i = 0; list && i < g->nplaceholders; i++, n = n->next)
        hop_py_fill(&list, (Py_ssize_t)i, PyUnicode_FromString(n->name));
    return list;
}

/* describe(path) -> the graph at path as Python data (hop_py__describe);
 * path None: the graph the innermost tracer records into now. */
static PyObject *
trace_describe(TraceObject *tr, PyObject *path)
{
    if (not_elsewhere(tr, "describe") < 0)
        return NULL;
    hop_graph *g = path == Py_None ? hop_tracer_graph(hop_output_graph_current(tr->og))
                                   : graph_at(tr, path);
    return g ? hop_py__describe(g) : NULL;
}

/* The captured tensors the root graph takes, in input order: read from the
 * OutputGraph, so that captures a failed HOP call took back are not in it. */
static PyObject *
trace_get_captures(TraceObject *tr, void *closure)
{
    (void)closure;
    if (not_elsewhere(tr, "captures") < 0)
        return NULL;
    PyObject *list = PyList_New(0);
    size_t n = hop_output_graph_ninputs(tr->og);
    for (size_t i = 0; list && i < n; i++) {
        hop_source src;
        (void)hop_output_graph_input(tr->og, i, &src);
        if (src.kind == HOP_SOURCE_CAPTURE && PyList_Append(list, (PyObject *)src.identity) < 0)
            Py_CLEAR(list);
    }
    return list;
}

hop_output_graph *
hop_py_trace_og(PyObject *trace)
{
    if (!PyObject_TypeCheck(trace, &TraceType)) {
        PyErr_Format(PyExc_TypeError, "expected a hop._C.Trace, got %.100s",
                     Py_TYPE(trace)->tp_name);
        return NULL;
    }
    return ((TraceObject *)trace)->og;
}

PyObject *
hop_py_trace_from_og(hop_output_graph *og, PyObject *captures)
{
    TraceObject *tr = (TraceObject *)TraceType.tp_alloc(&TraceType, 0);
    if (tr == NULL) {
        hop_output_graph_free(og);
        return NULL;
    }
    tr->og = og;
    tr->loaded = 1;
    tr->kept = captures ? PyList_GetSlice(captures, 0, PyList_GET_SIZE(captures)) : PyList_New(0);
    tr->names = PyDict_New();
    tr->scratch = PyDict_New();
    if (tr->kept == NULL || tr->names == NULL || tr->scratch == NULL) {
        Py_DECREF(tr);
        return NULL;
    }
    return (PyObject *)tr;
}

static PyObject *
trace_get_scratch(TraceObject *tr, void *closure)
{
    (void)closure;
    Py_INCREF(tr->scratch);
    return tr->scratch;
}

static PyObject *
trace_get_active(TraceObject *tr, void *closure)
{
    (void)closure;
    return PyBool_FromLong(tr->active);
}

static PyObject *
trace_get_errors(TraceObject *tr, void *closure)
{
    (void)closure;
    return PyLong_FromLong(tr->errors);
}

/* An error raised while a trace is active may be caught and the trace go
 * on: its decision, made on the trace's symbols, took back its guards and
 * its message names the symbols, so the graph would answer it for every
 * size.  The Python layer reads the count after the function ran
 * (_trace._check_caught) and traces again with static sizes. */
void
hop_py__trace_error_raised(void)
{
    if (hop_py__current != NULL)
        hop_py__current->errors++;
}

static PyObject *
trace_lower(TraceObject *tr, PyObject *unused)
{
    (void)unused;
    if (not_elsewhere(tr, "lower") < 0)
        return NULL;
    hop_plan *plan = hop_lower(tr->og, NULL);
    return plan ? hop_py__plan_new(plan) : hop_py_raise();
}

/* _memo(what, ...): the op memo (python/_C/memo.c), for hop.compile's path
 * specialisation: ("state",) -> state; ("begin", limit, depth);
 * ("restore", state); ("stop",). */
static PyObject *
trace_memo(TraceObject *tr, PyObject *args)
{
    const char *what;
    PyObject *a = NULL, *b = NULL;
    if (!PyArg_ParseTuple(args, "s|OO:_memo", &what, &a, &b))
        return NULL;
    if (own_active(tr, "_memo") < 0)
        return NULL;
    if (tr->memo == NULL && (tr->memo = hop_py_memo_new()) == NULL)
        return NULL;
    if (strcmp(what, "state") == 0)
        return hop_py_memo_state(tr->memo);
    if (strcmp(what, "begin") == 0 && a != NULL && b != NULL) {
        Py_ssize_t limit = PyLong_AsSsize_t(a);
        long depth = PyLong_AsLong(b);
        if ((limit == -1 || depth == -1) && PyErr_Occurred())
            return NULL;
        if (hop_py_memo_begin(tr->memo, limit, (int)depth) < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    if (strcmp(what, "restore") == 0 && a != NULL) {
        if (hop_py_memo_restore(tr->memo, a) < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    if (strcmp(what, "stop") == 0) {
        hop_py_memo_stop(tr->memo);
        Py_RETURN_NONE;
    }
    PyErr_Format(PyExc_ValueError, "_memo(): unknown request '%s'", what);
    return NULL;
}

/*
 * _trap_guard(u, v): records the guard u == v on the SymInt u (an unbacked
 * symbol: a branch predicate read with item()).  Called inside a cond branch
 * that hop.compile has not traced yet, whose predicate value is the other
 * one: the cond makes the guard that branch's own, so it fails (GuardError)
 * exactly when the branch would run.
 */
static PyObject *
trace_trap_guard(TraceObject *tr, PyObject *args)
{
    PyObject *u;
    long long v;
    if (!PyArg_ParseTuple(args, "OL:_trap_guard", &u, &v))
        return NULL;
    if (own_active(tr, "_trap_guard") < 0)
        return NULL;
    if (!PyObject_TypeCheck(u, &hop_py_SymIntType) ||
        ((SymIntObject *)u)->owner != (PyObject *)tr) {
        PyErr_SetString(PyExc_TypeError, "_trap_guard(): expected a SymInt of this trace");
        return NULL;
    }
    hop_shape_env *env = hop_output_graph_env(tr->og);
    const hop_expr *eq = hop_sym_eq(env, ((SymIntObject *)u)->expr, hop_sym_const(env, v));
    if (eq == NULL || hop_shape_env_add_guard(env, eq) != HOP_OK)
        return hop_py_raise();
    Py_RETURN_NONE;
}

/* _node(name, depth=0): the value of the node named name of the graph the
 * innermost tracer records into (the root graph at the root; depth k: the
 * tracer's at depth k, whose value an op of the innermost lifts), as a
 * proxy (a SymInt for a symbol): hop.numpy bounds how far a traced matrix
 * may be from NumPy's by computing, in the innermost graph, over the values
 * of its lineage, which it reads by name off describe() (hop/_exact.py,
 * absolute_error).  KeyError: no such node; IndexError: no such depth;
 * TraceError: the trace is not this thread's active one. */
static PyObject *
trace_node(TraceObject *tr, PyObject *args)
{
    PyObject *name;
    Py_ssize_t depth = 0;
    if (!PyArg_ParseTuple(args, "U|n:_node", &name, &depth))
        return NULL;
    if (hop_py__current != tr)
        return PyErr_Format(hop_py_TraceError, "_node(): the trace is not active");
    const char *s = PyUnicode_AsUTF8(name);
    if (s == NULL)
        return NULL;
    hop_tracer *t = depth ? tracer_at(tr, depth) : hop_output_graph_current(tr->og);
    if (t == NULL)
        return NULL;
    hop_node *n = hop_graph_find_node(hop_tracer_graph(t), s);
    if (n == NULL || n->meta == NULL)
        return PyErr_Format(PyExc_KeyError, "no node %U with a value in the current graph", name);
    return wrap_node((PyObject *)tr, n);
}

/* _lifted_sources(k) -> {placeholder name: name of the node of the tracer
 * at depth k - 1 it stands for}, over the values the tracer at depth k
 * lifted (its explicit inputs are not there): hop.numpy follows a body's
 * lineage out to its enclosing graphs (hop/_exact.py, _body_nodes). */
static PyObject *
trace_lifted_sources(TraceObject *tr, PyObject *k)
{
    if (not_elsewhere(tr, "_lifted_sources") < 0)
        return NULL;
    Py_ssize_t depth = PyLong_AsSsize_t(k);
    if (depth == -1 && PyErr_Occurred())
        return NULL;
    hop_tracer *t = tracer_at(tr, depth);
    if (t == NULL)
        return NULL;
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < hop_tracer_nlifted(t); i++) {
        hop_node *ph = hop_tracer_lifted_placeholder(t, i);
        hop_node *src = hop_tracer_lifted_source_at(t, i);
        if (ph == NULL || src == NULL)
            continue;
        PyObject *v = PyUnicode_FromString(src->name);
        if (v == NULL || PyDict_SetItemString(d, ph->name, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

static PyMethodDef trace_methods[] = {
    {"start", (PyCFunction)trace_start, METH_NOARGS, "Makes this trace the active one."},
    {"stop", (PyCFunction)trace_stop, METH_NOARGS, "Ends tracing."},
    {"add_input", (PyCFunction)trace_add_input, METH_VARARGS,
     "add_input(name, example, dynamic) -> proxy: the next argument of the traced function."},
    {"name_hint", (PyCFunction)trace_name_hint, METH_VARARGS,
     "name_hint(obj, name): the name a captured tensor gets."},
    {"name_hints", (PyCFunction)trace_name_hints, METH_O,
     "name_hints(fn): names the concrete tensors fn reads from its cells and globals."},
    {"output", (PyCFunction)trace_output, METH_O, "output(leaves): the traced function's result."},
    {"depth", (PyCFunction)trace_depth, METH_NOARGS, "Tracers on the stack (1: the root)."},
    {"lower", (PyCFunction)trace_lower, METH_NOARGS, "lower() -> Plan: compiles the trace."},
    {"guards", (PyCFunction)trace_guards, METH_NOARGS, "The ShapeEnv's guards, as text."},
    {"inputs", (PyCFunction)trace_inputs, METH_NOARGS, "The root inputs and their sources."},
    {"describe", (PyCFunction)trace_describe, METH_O, "describe(path) -> dict for a graph."},
    {"placeholder_names", (PyCFunction)trace_placeholder_names, METH_O,
     "placeholder_names(path) -> the graph's placeholder names, in order."},
    {"text", (PyCFunction)trace_text, METH_VARARGS,
     "text(path, kind) -> the graph printed as 'code', 'table' or 'dot'."},
    {"_memo", (PyCFunction)trace_memo, METH_VARARGS,
     "_memo(what, ...): the op memo of path specialisation (hop.compile)."},
    {"_lifted_sources", (PyCFunction)trace_lifted_sources, METH_O,
     "_lifted_sources(k) -> {placeholder: the parent's node} of the tracer at depth k."},
    {"_node", (PyCFunction)trace_node, METH_VARARGS,
     "_node(name) -> the value (a proxy or a SymInt) of the root graph's node named name."},
    {"_trap_guard", (PyCFunction)trace_trap_guard, METH_VARARGS,
     "_trap_guard(u, v): the guard u == v, in the current cond branch (hop.compile)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef trace_getset[] = {
    {"captures", (getter)trace_get_captures, NULL, "captured concrete tensors, in order", NULL},
    {"active", (getter)trace_get_active, NULL, "whether tracing is in progress", NULL},
    {"scratch", (getter)trace_get_scratch, NULL, "a dict for the Python layer", NULL},
    {"errors", (getter)trace_get_errors, NULL,
     "hop errors raised on this thread while the trace was active", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject TraceType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop._C.Trace",
    .tp_basicsize = sizeof(TraceObject),
    .tp_dealloc = (destructor)trace_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "One traced program: an OutputGraph with its tracer stack.",
    .tp_traverse = (traverseproc)trace_traverse,
    .tp_clear = (inquiry)trace_clear,
    .tp_methods = trace_methods,
    .tp_getset = trace_getset,
    .tp_new = trace_new,
};

static PyObject *
py_tracing(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (hop_py__current != NULL)
        return Py_NewRef((PyObject *)hop_py__current);
    Py_RETURN_NONE;
}

static PyObject *
py_trace_error_raised(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    hop_py__trace_error_raised();
    Py_RETURN_NONE;
}

static PyObject *
py_is_proxy(PyObject *self, PyObject *o)
{
    (void)self;
    return PyBool_FromLong(PyObject_TypeCheck(o, &hop_py_TensorType) && HOP_PY_IS_PROXY(o));
}

/* Whether o is a proxy whose tracer has not ended (its value can still be
 * used, lifted into a body if need be): hop.numpy keeps nodes it made for a
 * value (a mask's nonzero) only while they are. */
static PyObject *
py_proxy_live(PyObject *self, PyObject *o)
{
    (void)self;
    if (!PyObject_TypeCheck(o, &hop_py_TensorType) || !HOP_PY_IS_PROXY(o))
        Py_RETURN_FALSE;
    hop_tracer *t = hop_tracer_of(((TensorObject *)o)->node);
    return PyBool_FromLong(t != NULL && hop_tracer_state_of(t) != HOP_TRACER_ENDED);
}

/* The name of the node a proxy stands for in its graph, or None for anything
 * else: the frame translator reads a value's lineage off the graph
 * (Trace.describe) to decide whether NumPy would compute the same bits. */
static PyObject *
py_proxy_node(PyObject *self, PyObject *o)
{
    (void)self;
    if (!PyObject_TypeCheck(o, &hop_py_TensorType) || !HOP_PY_IS_PROXY(o) ||
        ((TensorObject *)o)->node == NULL)
        Py_RETURN_NONE;
    return PyUnicode_FromString(((TensorObject *)o)->node->name);
}

/* Whether o is a proxy of the active trace's root graph: inside a side of a
 * data-dependent branch (hop.compile's path specialisation) the ops before
 * the branch are replayed and give the root's nodes, which hop.numpy's
 * run-time checks (hop/numpy/linalg.py, _cutoff_checked) already cover. */
static PyObject *
py_proxy_at_root(PyObject *self, PyObject *o)
{
    (void)self;
    TraceObject *tr = hop_py__current;
    if (tr == NULL || !PyObject_TypeCheck(o, &hop_py_TensorType) || !HOP_PY_IS_PROXY(o) ||
        ((TensorObject *)o)->node == NULL)
        Py_RETURN_FALSE;
    return PyBool_FromLong(hop_tracer_of(((TensorObject *)o)->node) ==
                           hop_output_graph_root(tr->og));
}

/* The depth (1: the root) of the tracer that owns proxy o, 0 for anything
 * else: a HOP's operand may be a value of any enclosing graph
 * (hop/_exact.py follows a map body's inputs to them), and a body's result
 * has a lineage in the body only when it is the body's own value. */
static PyObject *
py_proxy_depth(PyObject *self, PyObject *o)
{
    (void)self;
    if (!PyObject_TypeCheck(o, &hop_py_TensorType) || !HOP_PY_IS_PROXY(o) ||
        ((TensorObject *)o)->node == NULL)
        return PyLong_FromLong(0);
    hop_tracer *t = hop_tracer_of(((TensorObject *)o)->node);
    return PyLong_FromLong(t ? hop_tracer_depth(t) + 1 : 0);
}

/* The tracer stack depth of this thread's active trace (1 at its root), 0
 * when none is active: tests check that a failed HOP call leaves it as it
 * was. */
static PyObject *
py_trace_depth(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    TraceObject *tr = hop_py__current;
    return PyLong_FromSize_t(tr != NULL ? hop_output_graph_depth(tr->og) : 0);
}

/* The name of the graph the active trace records into now ("cond_true_0",
 * "map_body_0"; "forward" at its root), None when none is active: a
 * conversion in a HOP body names the body (hop/_breaks.py). */
static PyObject *
py_body_name(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    TraceObject *tr = hop_py__current;
    hop_tracer *t = tr != NULL ? hop_output_graph_current(tr->og) : NULL;
    hop_graph *g = t != NULL ? hop_tracer_graph(t) : NULL;
    if (g == NULL || g->name == NULL)
        Py_RETURN_NONE;
    return PyUnicode_FromString(g->name);
}

/* ------------------------------------------------- dynamic indexing */

/* k of `start + k`, `k + start` or `start - k` at node n, with start's node
 * s (or s2, what stands for it in the current tracer): a new int or SymInt,
 * or NULL (no match, no exception). */
static PyObject *
offset_of(TraceObject *tr, const hop_node *n, const hop_node *s, const hop_node *s2)
{
    if (n->kind != HOP_NODE_CALL_OP || n->nargs != 2 ||
        (n->op != HOP_OP_add && n->op != HOP_OP_sub))
        return NULL;
    for (int side = 0; side < 2; side++) {
        const hop_arg *x = &n->args[side], *k = &n->args[1 - side];
        if (x->kind != HOP_ARG_NODE || (x->u.node != s && x->u.node != s2) ||
            (n->op == HOP_OP_sub && side == 1))
            continue;
        int64_t v = 0;
        const hop_expr *e = NULL;
        if (k->kind == HOP_ARG_INT)
            v = k->u.i;
        else if (k->kind == HOP_ARG_SYM && !hop_expr_is_bool(k->u.sym))
            e = k->u.sym;
        else if (k->kind == HOP_ARG_NODE && k->u.node->meta->kind == HOP_VALUE_SYM)
            e = k->u.node->meta->sym;
        else
            return NULL;
        if (e != NULL && n->op == HOP_OP_sub &&
            (e = hop_sym_neg(hop_output_graph_env(tr->og), e)) == NULL)
            return hop_py_raise();
        if (e != NULL)
            return hop_py__symint_new((PyObject *)tr, e, NULL);
        return PyLong_FromLongLong(n->op == HOP_OP_sub ? -v : v);
    }
    return NULL;
}

PyObject *
hop_py_traced_slice_size(PyObject *start, PyObject *stop)
{
    TraceObject *tr = active_trace("__getitem__");
    if (tr == NULL)
        return NULL;
    hop_node *s = value_node(tr, start, "__getitem__: the slice's start");
    hop_node *s2 = s ? hop_tracer_lift(current_tracer(tr), s) : NULL;
    if (s2 == NULL)
        return s ? hop_py_raise() : NULL;
    if (PyObject_TypeCheck(stop, &hop_py_TensorType) && HOP_PY_IS_PROXY(stop) &&
        ((TensorObject *)stop)->owner == (PyObject *)tr) {
        PyObject *k = offset_of(tr, ((TensorObject *)stop)->node, s, s2);
        if (k != NULL || PyErr_Occurred())
            return k;
    }
    PyErr_SetString(hop_py_TraceError,
                    "__getitem__: x[i:j] with a tensor start i is a dynamic slice, whose size must "
                    "be known while tracing: write j as i + k with k an int or a SymInt (JAX's "
                    "dynamic_slice)");
    return NULL;
}

/* Why a traced x cannot be updated in place (its value replaced), or NULL:
 * eagerly x[i] = v writes x's memory, which its views and whatever shares
 * it see; a replaced value is seen only through x.  A HOP's results share
 * memory with nothing, its operands' with none of its results
 * (docs/ARCHITECTURE.md, "A HOP's results are fresh"), so either may be
 * updated; a foreign kernel's may not. */
static const char *
not_replaceable(TraceObject *tr, TensorObject *x, const hop_node **hop)
{
    const hop_node *n = x->node;
    *hop = NULL;
    if (x->owner != (PyObject *)tr)
        return "it is a value of another trace";
    if (n->graph != hop_tracer_graph(current_tracer(tr)))
        return "it is a value of an outer body, and a body may not update what it closes over";
    if (n->kind == HOP_NODE_PLACEHOLDER)
        return "it is an input of the traced function or body, whose memory is the caller's";
    if (n->kind == HOP_NODE_GETITEM && n->args[0].u.node->kind != HOP_NODE_CALL_HOP) {
        *hop = n->args[0].u.node;
        return "it is a result of a foreign kernel, which may share memory with its operands";
    }
    if (x->viewof != NULL ||
        (n->kind == HOP_NODE_CALL_OP && hop_op_get(n->op)->family == HOP_KF_VIEW))
        return "it is a view of another tensor";
    if (x->nviews > 0)
        return "a view of it is alive";
    for (const hop_use *u = n->uses; u; u = u->next)
        if (u->user->kind == HOP_NODE_CALL_FOREIGN) {
            *hop = u->user;
            return "it was passed to a foreign kernel, whose result may share its memory";
        }
    return NULL;
}

/* _rebind(x, new=None): an in-place update of the traced x (hop.Tensor
 * __setitem__): with new (a proxy of x's metadata), x stands for new's
 * value from now on; without, only the check.  UnsupportedError when x is
 * not a value the function made and shares with nothing. */
static PyObject *
py_rebind(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs < 1 || nargs > 2 || !PyObject_TypeCheck(args[0], &hop_py_TensorType) ||
        !HOP_PY_IS_PROXY(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_rebind(x, new=None): x must be a traced Tensor");
        return NULL;
    }
    TraceObject *tr = active_trace("__setitem__");
    if (tr == NULL)
        return NULL;
    TensorObject *x = (TensorObject *)args[0];
    const hop_node *hop;
    const char *why = not_replaceable(tr, x, &hop);
    if (why != NULL) {
        PyErr_Format(hop_py_UnsupportedError,
                     "__setitem__: cannot update the traced tensor %s in place: %s%s%s%s (hop "
                     "replaces the value of a traced tensor; write x = x.clone() first)",
                     x->node->name, why, hop ? " (" : "", hop ? hop->name : "", hop ? ")" : "");
        return NULL;
    }
    if (nargs == 2) {
        TensorObject *nw = (TensorObject *)args[1];
        if (!PyObject_TypeCheck(args[1], &hop_py_TensorType) || !HOP_PY_IS_PROXY(args[1]) ||
            nw->owner != (PyObject *)tr ||
            !hop_meta_equal(&nw->node->meta->meta, &x->node->meta->meta)) {
            PyErr_SetString(PyExc_SystemError, "_rebind: new is not a traced value like x");
            return NULL;
        }
        x->node = nw->node;
    }
    Py_RETURN_NONE;
}

/* The frame translator's guard against user code CPython runs for it (hop/_frame.py): a C
 * profile function (call events only: a trace function would also run the line machinery
 * on every instruction of every frame), so that the frames of hop's own code cost a dict
 * lookup, not a Python call.  obj is (check, allowed): a frame whose code is a key of
 * allowed runs; for any other the call check(frame) decides (it may add the code to allowed,
 * or raise: the frame then raises that error before its first line). */
static int
call_guard_profile(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)arg;
    if (what != PyTrace_CALL)
        return 0;
    PyCodeObject *code = PyFrame_GetCode(frame);
    int hit = PyDict_Contains(PyTuple_GET_ITEM(obj, 1), (PyObject *)code);
    Py_DECREF(code);
    if (hit != 0)
        return hit < 0 ? -1 : 0;
    PyObject *r = PyObject_CallOneArg(PyTuple_GET_ITEM(obj, 0), (PyObject *)frame);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* _call_guard(check, allowed) installs the guard on this thread (replacing any profile
 * function: the caller restores sys.getprofile()'s with sys.setprofile); _call_guard(None)
 * removes it. */
static PyObject *
py_call_guard(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *check, *allowed = NULL;
    if (!PyArg_ParseTuple(args, "O|O:_call_guard", &check, &allowed))
        return NULL;
    if (check == Py_None) {
        PyEval_SetProfile(NULL, NULL);
        Py_RETURN_NONE;
    }
    if (allowed == NULL || !PyDict_Check(allowed) || !PyCallable_Check(check)) {
        PyErr_SetString(PyExc_TypeError, "_call_guard(check, allowed): a callable and a dict");
        return NULL;
    }
    PyObject *obj = PyTuple_Pack(2, check, allowed);
    if (obj == NULL)
        return NULL;
    PyEval_SetProfile(call_guard_profile, obj); /* holds its own reference */
    Py_DECREF(obj);
    Py_RETURN_NONE;
}

static PyMethodDef trace_functions[] = {
    {"_call_guard", py_call_guard, METH_VARARGS,
     HOP_PY_SIG("_call_guard(check, allowed=None, /)")
     "_call_guard(check, allowed) / _call_guard(None): the frame translator's C profile "
     "function (see hop/_frame.py)."},
    {"tracing", py_tracing, METH_NOARGS, "This thread's active Trace, or None."},
    {"_trace_error_raised", py_trace_error_raised, METH_NOARGS,
     "Counts an error hop's Python code raises on this thread's trace's symbols (Trace.errors)."},
    {"_trace_depth", py_trace_depth, METH_NOARGS,
     "The tracer stack depth of the active trace, 0 when none is active."},
    {"_body_name", py_body_name, METH_NOARGS,
     "The name of the graph the active trace records into now, None when none is active."},
    {"_is_proxy", py_is_proxy, METH_O, "True for a traced value (a proxy Tensor)."},
    {"_proxy_live", py_proxy_live, METH_O,
     "True for a traced value whose tracer has not ended (usable, lifted if need be)."},
    {"_proxy_node", py_proxy_node, METH_O,
     "The name of the node a traced value stands for, or None for anything else."},
    {"_proxy_at_root", py_proxy_at_root, METH_O,
     "True for a traced value of the active trace's root graph."},
    {"_proxy_depth", py_proxy_depth, METH_O,
     "The depth of the tracer owning a traced value (1: the root), 0 for anything else."},
    {"_rebind", (PyCFunction)(void (*)(void))py_rebind, METH_FASTCALL,
     "_rebind(x, new=None): the traced x stands for new's value (hop.Tensor.__setitem__); "
     "UnsupportedError when x may not be updated in place."},
    {NULL, NULL, 0, NULL},
};

int
hop_py_trace_init(PyObject *module)
{
    if (PyType_Ready(&TraceType) < 0 || hop_py__plan_init() < 0 || hop_py__numpy_call_init() < 0 ||
        hop_py__symint_init(module) < 0 || hop_py__compiled_call_init(module) < 0 ||
        hop_py__name_guard_init(module) < 0 || hop_py__live_init(module) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "Trace", (PyObject *)&TraceType) < 0)
        return -1;
    return PyModule_AddFunctions(module, trace_functions);
}
