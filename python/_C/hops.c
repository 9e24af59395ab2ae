/*
 * python/_C/hops.c - any registered HOP called from Python with Python
 * bodies: `call_hop(name, leads, groups, bodies, keys)`.
 *
 * The class's signature says what each argument is (hop/class.h): leads are
 * Python ints, floats, bools, dtypes or values (tensors, SymInts, bools);
 * groups are tuples of tensors and SymInts; bodies are callables that take
 * every group's values (flat, in order) and return a list of leaves.  While
 * this thread traces, the call is traced (hop_apply): bodies run once on
 * proxies, in their own subtracers.  Otherwise it runs eagerly
 * (hop_eval_apply): the class's eval slot calls the bodies on concrete
 * tensors.  One path for the built-ins and for HOPs loaded from a library;
 * python/hop/_hops.py adds pytrees and the purity check.
 *
 * Bodies run synchronously inside the call, so the frame of the innermost
 * call is a per-thread stack.  A Python exception raised in a body is kept
 * in the frame and raised again, with its own type, once the C call has
 * restored every state.
 */
#include "hop_py.h"
#include "trace_impl.h"

/* A call's arguments as its mode takes them (begin_call): hop_arg traced,
 * hop_rt_arg eager; one PyMem block. */
typedef struct call_args {
    void *args; /* a lead each, a list per group, nargs of them */
    size_t nargs;
    const void *items; /* the group items the lists point into, nitems of them */
    size_t nitems;
} call_args;

typedef struct frame {
    PyObject *bodies[HOP_MAX_BODIES]; /* borrowed from the call's tuple */
    PyObject *keys[HOP_MAX_BODIES];   /* what invoke_subgraph's cache sees */
    size_t nbodies;
    bool lifted;        /* the class's bodies get the operands themselves */
    PyObject *operands; /* tuple: every group's items as given */
    call_args in;
    PyObject *trace;                         /* the Trace, or NULL for an eager call */
    PyObject *exc_type, *exc_value, *exc_tb; /* what a body raised, if anything */
    struct frame *outer;
    unsigned long long serial; /* this thread's calls, numbered (a frame's address is reused) */
    const struct direct *direct; /* call_direct's bodies: the user's functions, or NULL */
} frame;

/* A call_direct call: its bodies are the user's functions themselves, each
 * called with the operands (fn(*operands)) inside the purity check; what
 * _hops.py's body wrapper does per body is done here (issue #30: a HOP call
 * in Python was most of its cost). */
typedef struct direct {
    PyObject *name;    /* the HOP's name, a str (the purity check's messages) */
    PyObject *whiches; /* tuple: each body as the messages name it ("true branch") */
    PyObject *same;    /* the structure check of the call's bodies (_hops.py) */
    PyObject *results; /* list: per body traced, None (it returned one tensor) or its _Result */
} direct;

/* This thread's innermost HOP call. */
static _Thread_local frame *innermost;
static _Thread_local unsigned long long calls;

/* hop_py_lift_is_operand's answer for the last placeholder it was asked
 * about: lifting a value d levels down asks about each level's placeholder
 * in turn, outer-first, each the source of the next (see there). */
static _Thread_local struct {
    unsigned long long call; /* the frame's serial */
    const hop_node *ph;
    const hop_tracer *t; /* ph's tracer, and its rollbacks then */
    size_t rollbacks;
    int answer;
} last_lift;

/* For lifting provenance (saved.c): whether source, a value lifted into a
 * body of this thread's innermost HOP call, is one of the operands the call
 * was given, possibly through the placeholders standing for it on the way
 * down (ph: the placeholder the lift made for it).  Bodies of a HOP whose
 * inputs are lifted (wrap, cond, switch) get the operands as outer values,
 * so those lifts are explicit, not captures. */
int
hop_py_lift_is_operand(const hop_node *ph, const hop_node *source)
{
    frame *f = innermost;
    if (f == NULL || !f->lifted || f->trace == NULL)
        return 0;
    const hop_arg *operands = f->in.items; /* traced: their nodes */
    hop_tracer *st = hop_tracer_of(source);
    int answer = -1;
    if (last_lift.call == f->serial && last_lift.ph == source && last_lift.t == st &&
        last_lift.rollbacks == hop_tracer_rollbacks(st)) {
        /* source is the placeholder the last question was about (the same
         * node: its tracer was not rolled back since), one level out.  The
         * walk below from source would test source itself, then go on from
         * its lifted source exactly as that question's walk did: an operand
         * found there is found again (its tracer is outside source's), so
         * only source itself is left to test.  Lifting a value through d
         * levels asks d questions: O(d) in all, where each walk made it
         * O(d^2) (issue #30: a nested wrap's cost per level grew with the
         * depth). */
        answer = last_lift.answer;
        for (size_t i = 0; !answer && i < f->in.nitems; i++)
            answer = operands[i].u.node == source;
    }
    for (size_t i = 0; answer < 0 && i < f->in.nitems; i++) {
        const hop_node *op = operands[i].u.node;
        int op_depth = hop_tracer_depth(hop_tracer_of(op));
        /* Each step goes one tracer out, so the walk ends where it passes
         * op's tracer: a value lifted at every level of a d-deep nest would
         * otherwise walk to the root each time, O(d^2) (issue #30). */
        for (const hop_node *v = source; v;) {
            hop_tracer *vt = hop_tracer_of(v);
            if (v == op) {
                answer = 1;
                break;
            }
            if (hop_tracer_depth(vt) <= op_depth)
                break;
            v = hop_tracer_lifted_source(vt, v);
        }
    }
    if (answer < 0)
        answer = 0;
    hop_tracer *pt = hop_tracer_of(ph);
    last_lift.call = f->serial;
    last_lift.ph = ph;
    last_lift.t = pt;
    last_lift.rollbacks = hop_tracer_rollbacks(pt);
    last_lift.answer = answer;
    return answer;
}

/* Keeps the first Python exception a body raised; returns the status that
 * makes the C call unwind. */
static hop_status
body_failed(frame *f)
{
    if (PyErr_Occurred() && f->exc_type == NULL)
        PyErr_Fetch(&f->exc_type, &f->exc_value, &f->exc_tb);
    else
        PyErr_Clear();
    return hop_error(HOP_TRACE, "a Python exception was raised in the body");
}

/* Python's view of input i of in (hop_node *const * traced, hop_rt_value *
 * eager): a new reference, or NULL with an exception. */
typedef PyObject *(*wrap_fn)(frame *f, const void *in, size_t i);

/* Hands leaf i a body returned to out (hop_values * traced, hop_rt_values *
 * eager): 0, or -1 with an exception. */
typedef int (*take_fn)(frame *f, PyObject *leaf, Py_ssize_t i, void *out);

/* The inputs of a body as a tuple (wrap makes each), or NULL with an
 * exception. */
static PyObject *
body_args(frame *f, const void *in, size_t n, wrap_fn wrap)
{
    PyObject *args = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; args && i < n; i++) {
        PyObject *v = wrap(f, in, i);
        if (v == NULL) {
            Py_CLEAR(args);
            break;
        }
        PyTuple_SET_ITEM(args, (Py_ssize_t)i, v);
    }
    return args;
}

/* Hands each leaf of leaves (a sequence, consumed; NULL with an exception)
 * to take; a Python exception is kept for the call to raise. */
static hop_status
take_leaves(frame *f, PyObject *leaves, take_fn take, void *out)
{
    PyObject *seq =
        leaves ? PySequence_Fast(leaves, "a HOP body wrapper must return a list of leaves") : NULL;
    Py_XDECREF(leaves);
    for (Py_ssize_t i = 0; seq && i < PySequence_Fast_GET_SIZE(seq); i++)
        if (take(f, PySequence_Fast_GET_ITEM(seq, i), i, out) < 0)
            Py_CLEAR(seq);
    if (seq == NULL)
        return body_failed(f);
    Py_DECREF(seq);
    return HOP_OK;
}

/* Calls body b with args (a new reference, consumed; NULL with an
 * exception) and hands each leaf it returns to take; a Python exception is
 * kept for the call to raise (body_failed). */
static hop_status
run_body(frame *f, size_t b, PyObject *args, take_fn take, void *out)
{
    PyObject *result = NULL;
    /* The body's Python frames count against the recursion limit; this C
     * level counts too, so a low limit stops deep nesting early. */
    if (args && Py_EnterRecursiveCall(" in a HOP body") == 0) {
        result = PyObject_Call(f->bodies[b], args, NULL);
        Py_LeaveRecursiveCall();
    }
    Py_XDECREF(args);
    return take_leaves(f, result, take, out);
}

/* ------------------------------------------------------------ traced */

static PyObject *
wrap_node(frame *f, const void *in, size_t i)
{
    return hop_py_wrap_node(f->trace, ((hop_node *const *)in)[i]);
}

static int
take_node(frame *f, PyObject *leaf, Py_ssize_t i, void *out)
{
    (void)i;
    hop_node *node = hop_py_value_node(f->trace, leaf, "HOP body output");
    if (node == NULL)
        return -1;
    return hop_values_push(out, node) == HOP_OK ? 0 : hop_py_raise_int();
}

/* _hops.py's helpers of call_direct, looked up at its first call:
 * run_pure(hop, which, fn, args) and _direct_result(hop, whiches, b, out,
 * results, same) -> the leaves (what a body wrapper of _apply does with a
 * result other than one tensor); and what _direct reads (below). */
static PyObject *run_pure_fn, *direct_result_fn;
static PyObject *compile_key, *registered, *direct_finish_fn;

static int
direct_helpers(void)
{
    if (direct_finish_fn)
        return 0;
    PyObject *hops = PyImport_ImportModule("hop._hops");
    PyObject *purity = hops ? PyImport_ImportModule("hop._purity") : NULL;
    PyObject *breaks = purity ? PyImport_ImportModule("hop._breaks") : NULL;
    PyObject *pytree = breaks ? PyImport_ImportModule("hop._pytree") : NULL;
    if (pytree && (run_pure_fn = PyObject_GetAttrString(purity, "run_pure")) &&
        (direct_result_fn = PyObject_GetAttrString(hops, "_direct_result")) &&
        (compile_key = PyObject_GetAttrString(breaks, "_COMPILE")) &&
        (registered = PyObject_GetAttrString(pytree, "_REGISTERED")) && PyDict_Check(registered))
        direct_finish_fn = PyObject_GetAttrString(hops, "_direct_finish");
    Py_XDECREF(hops);
    Py_XDECREF(purity);
    Py_XDECREF(breaks);
    Py_XDECREF(pytree);
    return direct_finish_fn ? 0 : -1;
}

/* How many HOP bodies this thread is running the Python of (a branch on
 * data inside one is not specialised, and hop.compile's frame translator
 * leaves it alone): call_direct counts its bodies here, _apply through
 * _in_body.  A C counter: a threading.local's attribute cost more than the
 * rest of a body's protocol (issue #30). */
static _Thread_local long bodies_in;

/* _in_body(d=0) -> the count after adding d. */
static PyObject *
py_in_body(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    long d = 0;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "_in_body takes at most one argument");
        return NULL;
    }
    if (nargs == 1 && (d = PyLong_AsLong(args[0])) == -1 && PyErr_Occurred())
        return NULL;
    bodies_in += d;
    return PyLong_FromLong(bodies_in);
}

/* Whether fn is a Python function that reaches nothing outside itself: no
 * closure cell and no name its code (nested code included) reads, so the
 * purity check has nothing to watch (run_pure's own first test). */
static bool
reaches_nothing(PyObject *fn)
{
    if (!PyFunction_Check(fn))
        return false;
    PyCodeObject *co = (PyCodeObject *)PyFunction_GET_CODE(fn);
    if (co->co_nfreevars != 0 || PyTuple_GET_SIZE(co->co_names) != 0)
        return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(co->co_consts); i++)
        if (PyCode_Check(PyTuple_GET_ITEM(co->co_consts, i)))
            return false;
    return true;
}

/* Whether every body traced so far returned one tensor. */
static bool
all_single(PyObject *results)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(results); i++)
        if (PyList_GET_ITEM(results, i) != Py_None)
            return false;
    return true;
}

/* Body b of a call_direct call: its name hints, its function called with
 * args (consumed) inside the purity check, counted in bodies_in, and its result's
 * leaves taken: one tensor here, anything else by _direct_result, which
 * also checks the structure against the bodies traced before. */
static hop_status
direct_body(frame *f, size_t b, PyObject *args, hop_values *out)
{
    const direct *d = f->direct;
    PyObject *fn = f->bodies[b], *result = NULL, *leaves = NULL; /* NULL: an exception */
    if (args == NULL || hop_py_name_hints(f->trace, fn) < 0) {
        Py_XDECREF(args);
        return body_failed(f);
    }
    bodies_in++;
    if (Py_EnterRecursiveCall(" in a HOP body") == 0) {
        result = reaches_nothing(fn)
                     ? PyObject_Call(fn, args, NULL)
                     : hop_py_run_pure(run_pure_fn, d->name,
                                       PyTuple_GET_ITEM(d->whiches, (Py_ssize_t)b), fn, args);
        Py_LeaveRecursiveCall();
    }
    bodies_in--;
    Py_DECREF(args);
    if (result && Py_IS_TYPE(result, &hop_py_TensorType) && all_single(d->results)) {
        int r = PyList_Append(d->results, Py_None) < 0 ? -1 : take_node(f, result, 0, out);
        Py_DECREF(result);
        return r < 0 ? body_failed(f) : HOP_OK;
    }
    if (result) {
        PyObject *bi = PyLong_FromSize_t(b);
        leaves = bi ? PyObject_CallFunctionObjArgs(direct_result_fn, d->name, d->whiches, bi,
                                                   result, d->results, d->same, NULL)
                    : NULL;
        Py_XDECREF(bi);
        Py_DECREF(result);
    }
    return take_leaves(f, leaves, take_node, out);
}

static hop_status
traced_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)t;
    frame *f = innermost;
    size_t b = 0;
    while (b + 1 < f->nbodies && f->keys[b] != ud)
        b++;
    PyObject *args = f->lifted ? Py_NewRef(f->operands) : body_args(f, in, n, wrap_node);
    if (f->direct)
        return direct_body(f, b, args, out);
    return run_body(f, b, args, take_node, out);
}

/*
 * A lead's plain value as the class's signature takes it (an int, a float,
 * a bool or a dtype), traced or eager alike: 1 with *out set; 0 when o is
 * none of those (a VALUE lead may be a tensor or a SymInt: the caller's to
 * read, else lead_error); -1 with an exception.
 */
static int
plain_lead(const hop_param *p, PyObject *o, hop_rt_arg *out)
{
    switch (p->kind) {
    case HOP_PARAM_INT:
        if (!PyLong_Check(o) || PyBool_Check(o))
            return 0;
        *out = hop_rt_int(PyLong_AsLongLong(o));
        return PyErr_Occurred() ? -1 : 1;
    case HOP_PARAM_FLOAT:
        if (!PyFloat_Check(o) && !(PyLong_Check(o) && !PyBool_Check(o)))
            return 0;
        *out = hop_rt_float(PyFloat_AsDouble(o));
        return PyErr_Occurred() ? -1 : 1;
    case HOP_PARAM_BOOL:
        if (!PyBool_Check(o))
            return 0;
        *out = hop_rt_bool(o == Py_True);
        return 1;
    case HOP_PARAM_DTYPE: {
        hop_dtype d;
        if (hop_py_dtype_from_object(o, &d) < 0)
            return -1;
        *out = hop_rt_dtype(d);
        return 1;
    }
    default: /* VALUE */
        if (PyBool_Check(o)) {
            *out = hop_rt_bool(o == Py_True);
            return 1;
        }
        if (!PyLong_Check(o))
            return 0;
        *out = hop_rt_int(PyLong_AsLongLong(o));
        return PyErr_Occurred() ? -1 : 1;
    }
}

/* o does not fit lead p of HOP hop: -1 with the TypeError (a VALUE lead
 * takes a SymInt only in a trace). */
static int
lead_error(const hop_param *p, PyObject *o, const char *hop, bool traced)
{
    PyErr_Format(PyExc_TypeError, "hop.%s: %s must be %s, got %.100s", hop, p->name,
                 p->kind == HOP_PARAM_INT     ? "an int"
                 : p->kind == HOP_PARAM_FLOAT ? "a float"
                 : p->kind == HOP_PARAM_BOOL  ? "a bool"
                 : traced                     ? "a tensor, a SymInt, a bool or an int"
                                              : "a tensor, an int or a bool",
                 Py_TYPE(o)->tp_name);
    return -1;
}

/* A lead as the class's signature takes it, in a trace (an arg_mode's
 * lead: out is a hop_arg). */
static int
traced_lead(PyObject *tr, const hop_param *p, PyObject *o, const char *hop, void *out_)
{
    hop_arg *out = out_;
    hop_rt_arg v;
    int plain = plain_lead(p, o, &v);
    if (plain > 0) {
        *out = v.kind == HOP_OPND_INT     ? hop_arg_int(v.u.i)
               : v.kind == HOP_OPND_FLOAT ? hop_arg_float(v.u.f)
               : v.kind == HOP_OPND_BOOL  ? hop_arg_bool(v.u.b)
                                          : hop_arg_dtype(v.u.dtype);
        return 0;
    }
    if (plain < 0)
        return -1;
    if (p->kind == HOP_PARAM_VALUE && PyObject_TypeCheck(o, &hop_py_SymIntType))
        return hop_py_symint_arg(o, out);
    if (p->kind == HOP_PARAM_VALUE && Py_IS_TYPE(o, &hop_py_TensorType) && HOP_PY_IS_PROXY(o) &&
        ((TensorObject *)o)->owner == tr) {
        /* a value of this trace (cond's pred): no message to make, as for
         * an item */
        *out = hop_arg_node(((TensorObject *)o)->node);
        return 0;
    }
    if (p->kind == HOP_PARAM_VALUE && PyObject_TypeCheck(o, &hop_py_TensorType)) {
        char what[96];
        snprintf(what, sizeof what, "%s: %s", hop, p->name);
        hop_node *n = hop_py_value_node(tr, o, what);
        if (n == NULL)
            return -1;
        *out = hop_arg_node(n);
        return 0;
    }
    return lead_error(p, o, hop, true);
}

/* Item j of group p, in a trace: its node in trace tr (out is a hop_arg). */
static int
traced_item(PyObject *tr, const hop_param *p, Py_ssize_t j, PyObject *o, const char *hop, void *out)
{
    (void)j;
    hop_node *n = NULL;
    if (Py_IS_TYPE(o, &hop_py_TensorType) && HOP_PY_IS_PROXY(o) &&
        ((TensorObject *)o)->owner == tr) {
        n = ((TensorObject *)o)->node; /* a value of this trace: no message to make */
    } else {
        char what[96];
        snprintf(what, sizeof what, "hop.%s: %s", hop, p->name);
        if ((n = hop_py_value_node(tr, o, what)) == NULL)
            return -1;
    }
    *(hop_arg *)out = hop_arg_node(n);
    return 0;
}

static void
traced_list(void *first, size_t n, void *out)
{
    *(hop_arg *)out = hop_arg_list(first, n);
}

/* ------------------------------------------------------------- eager */

/* A concrete value as the Python object a body gets: an operand's own
 * object when it is one (so identity, NumPy bases and subclasses survive). */
static PyObject *
eager_value(frame *f, const hop_rt_value *v)
{
    if (v->kind != HOP_VALUE_TENSOR)
        return PyLong_FromLongLong(v->i);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(f->operands); i++) {
        PyObject *o = PyTuple_GET_ITEM(f->operands, i);
        if (PyObject_TypeCheck(o, &hop_py_TensorType) && ((TensorObject *)o)->t == v->tensor)
            return Py_NewRef(o);
    }
    return hop_py_tensor_new(hop_tensor_retain(v->tensor));
}

static PyObject *
wrap_value(frame *f, const void *in, size_t i)
{
    return eager_value(f, &((const hop_rt_value *)in)[i]);
}

static int
take_value(frame *f, PyObject *o, Py_ssize_t i, void *out)
{
    (void)f;
    hop_rt_value v = {HOP_VALUE_SYM, NULL, 0};
    if (PyObject_TypeCheck(o, &hop_py_TensorType) && !HOP_PY_IS_PROXY(o)) {
        v.kind = HOP_VALUE_TENSOR;
        v.tensor = hop_tensor_retain(((TensorObject *)o)->t);
    } else if (PyLong_Check(o)) {
        v.i = PyLong_AsLongLong(o);
    } else {
        PyErr_Format(PyExc_TypeError, "HOP body output %zd: expected a hop.Tensor, got %.100s", i,
                     Py_TYPE(o)->tp_name);
    }
    if (PyErr_Occurred())
        return -1;
    return hop_rt_values_push(out, v) == HOP_OK ? 0 : hop_py_raise_int();
}

static hop_status
host_body(void *ud, const hop_rt_value *in, size_t n, hop_rt_values *out)
{
    frame *f = innermost;
    return run_body(f, (size_t)(uintptr_t)ud, body_args(f, in, n, wrap_value), take_value, out);
}

/* A lead as the class's signature takes it, eagerly (out is a
 * hop_rt_arg; there is no trace, tr is NULL). */
static int
eager_lead(PyObject *tr, const hop_param *p, PyObject *o, const char *hop, void *out_)
{
    (void)tr;
    hop_rt_arg *out = out_;
    int plain = plain_lead(p, o, out);
    if (plain != 0)
        return plain < 0 ? -1 : 0;
    if (p->kind == HOP_PARAM_VALUE && PyObject_TypeCheck(o, &hop_py_TensorType) &&
        !HOP_PY_IS_PROXY(o)) {
        *out = hop_rt_tensor(((TensorObject *)o)->t);
        return 0;
    }
    if (p->kind == HOP_PARAM_VALUE &&
        (PyObject_TypeCheck(o, &hop_py_TensorType) || PyObject_TypeCheck(o, &hop_py_SymIntType))) {
        PyErr_Format(hop_py_TraceError,
                     "%s: no trace is active (a traced value was used after its trace ended)", hop);
        return -1;
    }
    return lead_error(p, o, hop, false);
}

/* Item j of group p, eagerly: a concrete tensor or an int (out is a
 * hop_rt_arg). */
static int
eager_item(PyObject *tr, const hop_param *p, Py_ssize_t j, PyObject *o, const char *hop, void *out)
{
    (void)tr;
    if (PyObject_TypeCheck(o, &hop_py_TensorType) && !HOP_PY_IS_PROXY(o)) {
        *(hop_rt_arg *)out = hop_rt_tensor(((TensorObject *)o)->t);
        return 0;
    }
    if (PyLong_Check(o) && !PyBool_Check(o)) {
        *(hop_rt_arg *)out = hop_rt_int(PyLong_AsLongLong(o));
        return PyErr_Occurred() ? -1 : 0;
    }
    if (PyObject_TypeCheck(o, &hop_py_TensorType) || PyObject_TypeCheck(o, &hop_py_SymIntType))
        PyErr_Format(hop_py_TraceError,
                     "%s: no trace is active (a traced value was used after its trace ended)", hop);
    else
        PyErr_Format(PyExc_TypeError, "hop.%s: %s: item %zd must be a hop.Tensor, got %.100s", hop,
                     p->name, j, Py_TYPE(o)->tp_name);
    return -1;
}

static void
eager_list(void *first, size_t n, void *out)
{
    *(hop_rt_arg *)out = hop_rt_list(first, n);
}

/* ------------------------------------------------------------ the call */

/* Ends the call begin_call began (f is no longer the innermost; its
 * arguments are freed), then gives the call's results as a list (NULL when
 * making it failed, its exception set), or its error as an exception. */
static PyObject *
finish(frame *f, hop_status st, PyObject *result)
{
    innermost = f->outer;
    PyMem_RawFree(f->in.args);
    f->in.args = NULL;
    if (st == HOP_OK)
        return result;
    Py_XDECREF(result);
    if (f->exc_type) {
        PyErr_Restore(f->exc_type, f->exc_value, f->exc_tb);
        f->exc_type = f->exc_value = f->exc_tb = NULL;
        return NULL;
    }
    return hop_py_raise();
}

/* How a mode takes the call's operands into its argument type (size
 * bytes: hop_arg traced, hop_rt_arg eager): a lead, a group's item, and a
 * group's items as one list argument.  lead and item return -1 with an
 * exception set. */
typedef struct arg_mode {
    size_t size;
    int (*lead)(PyObject *tr, const hop_param *p, PyObject *o, const char *hop, void *out);
    int (*item)(PyObject *tr, const hop_param *p, Py_ssize_t j, PyObject *o, const char *hop,
                void *out);
    void (*list)(void *first, size_t n, void *out);
} arg_mode;

static const arg_mode traced_args = {sizeof(hop_arg), traced_lead, traced_item, traced_list};
static const arg_mode eager_args = {sizeof(hop_rt_arg), eager_lead, eager_item, eager_list};

/* Begins the call in mode m (tr: the trace, NULL eagerly): takes its
 * arguments as the class's signature orders them into f->in (a lead each,
 * a list per group; bodies are not among them), followed in the same PyMem
 * block by the group items the lists point into, and makes f this thread's
 * innermost call.  finish ends it and frees the
 * block.  -1 with an exception set (f is then not entered). */
static int
begin_call(const arg_mode *m, PyObject *tr, const hop_class *cls, const hop_param *params,
           size_t np, PyObject *leads, PyObject *groups, frame *f)
{
    Py_ssize_t total = PyTuple_GET_SIZE(f->operands);
    char *args = PyMem_RawCalloc(np + (size_t)total + 1, m->size);
    if (args == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    char *item = args + np * m->size;
    size_t n = 0, nl = 0, ng = 0, k = 0;
    for (size_t i = 0; i < np; i++) {
        const hop_param *p = &params[i];
        if (p->kind == HOP_PARAM_BODY || p->kind == HOP_PARAM_BODIES)
            continue;
        if (!hop_param_is_group(p->kind)) {
            if (m->lead(tr, p, PyTuple_GET_ITEM(leads, nl++), cls->name, args + n++ * m->size) < 0)
                goto fail;
            continue;
        }
        PyObject *g = PyTuple_GET_ITEM(groups, ng++);
        size_t first = k;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(g); j++)
            if (m->item(tr, p, j, PyTuple_GET_ITEM(g, j), cls->name, item + k++ * m->size) < 0)
                goto fail;
        m->list(item + first * m->size, (size_t)PyTuple_GET_SIZE(g), args + n++ * m->size);
    }
    f->in = (call_args){args, n, item, k};
    f->trace = tr;
    f->outer = innermost;
    f->serial = ++calls;
    innermost = f;
    return 0;
fail:
    PyMem_RawFree(args);
    return -1;
}

static PyObject *
traced_call(PyObject *tr, const hop_class *cls, const hop_param *params, size_t np, PyObject *leads,
            PyObject *groups, frame *f)
{
    hop_body bodies[HOP_MAX_BODIES];
    for (size_t b = 0; b < f->nbodies; b++)
        bodies[b] = (hop_body){traced_body, f->keys[b]};
    if (hop_py_enter_hop(tr, cls->name) < 0 ||
        begin_call(&traced_args, tr, cls, params, np, leads, groups, f) < 0)
        return NULL;
    hop_values outs = {0};
    PyObject *result = NULL;
    hop_status st =
        hop_apply(hop_py_trace_og(tr), cls, f->in.args, f->in.nargs, bodies, f->nbodies, &outs);
    if (st == HOP_OK) {
        result = PyList_New((Py_ssize_t)outs.n);
        for (size_t i = 0; result && i < outs.n; i++)
            hop_py_fill(&result, (Py_ssize_t)i, hop_py_wrap_node(tr, outs.items[i]));
    }
    hop_values_clear(&outs);
    return finish(f, st, result);
}

/* (not inlined into call: a traced call nests, once per level of HOP
 * nesting, and its C stack must not hold an eager call's locals too; under
 * AddressSanitizer they made a level ~0.4 KiB deeper than HOP_MAX_NESTING
 * levels fit in a main thread's 8 MiB) */
__attribute__((noinline)) static PyObject *
eager_call(const hop_class *cls, const hop_param *params, size_t np, PyObject *leads,
           PyObject *groups, frame *f)
{
    hop_host_body bodies[HOP_MAX_BODIES];
    for (size_t b = 0; b < f->nbodies; b++)
        bodies[b] = (hop_host_body){host_body, (void *)(uintptr_t)b};
    if (begin_call(&eager_args, NULL, cls, params, np, leads, groups, f) < 0)
        return NULL;
    hop_rt_values outs = {NULL, 0, 0};
    PyObject *result = NULL;
    hop_status st = hop_eval_apply(cls, f->in.args, f->in.nargs, bodies, f->nbodies, &outs);
    if (st == HOP_OK) {
        result = PyList_New((Py_ssize_t)outs.n);
        for (size_t i = 0; result && i < outs.n; i++) {
            hop_rt_value *v = &outs.items[i];
            PyObject *o = v->kind == HOP_VALUE_TENSOR ? hop_py_tensor_new(v->tensor)
                                                      : PyLong_FromLongLong(v->i);
            v->tensor = NULL; /* the object took it */
            hop_py_fill(&result, (Py_ssize_t)i, o);
        }
    }
    hop_rt_values_clear(&outs);
    return finish(f, st, result);
}

/* A call of HOP name (call_hop's arguments; d: call_direct's, or NULL). */
static PyObject *
call(const char *name, PyObject *leads, PyObject *groups, PyObject *bodies, PyObject *keys,
     const direct *d)
{
    const hop_class *cls = hop_find_hop(name);
    if (cls == NULL)
        return hop_py_raise();
    size_t np, nlead = 0, ngroup = 0, nbody = 0;
    const hop_param *params = hop_class_params(cls, &np);
    for (size_t i = 0; i < np; i++) {
        nlead += hop_param_is_lead(params[i].kind);
        ngroup += hop_param_is_group(params[i].kind);
    }
    nbody = (size_t)PyTuple_GET_SIZE(bodies);
    if ((size_t)PyTuple_GET_SIZE(leads) != nlead || (size_t)PyTuple_GET_SIZE(groups) != ngroup ||
        !hop_class_takes_bodies(cls, nbody) ||
        (keys != Py_None && (!PyTuple_Check(keys) || (size_t)PyTuple_GET_SIZE(keys) != nbody))) {
        PyErr_Format(PyExc_TypeError,
                     "call_hop: %s takes %zu leads, %zu groups and %zu bodies (and as many keys)",
                     name, nlead, ngroup, hop_class_nbodies(cls));
        return NULL;
    }
    frame f = {.nbodies = nbody, .lifted = hop_class_input_mode(cls) == HOP_INPUTS_LIFTED,
               .direct = d};
    for (size_t b = 0; b < nbody; b++) {
        f.bodies[b] = PyTuple_GET_ITEM(bodies, (Py_ssize_t)b);
        f.keys[b] = keys == Py_None ? f.bodies[b] : PyTuple_GET_ITEM(keys, (Py_ssize_t)b);
        if (!PyCallable_Check(f.bodies[b])) {
            PyErr_Format(PyExc_TypeError, "hop.%s: body %zu must be callable, got %.100s", name, b,
                         Py_TYPE(f.bodies[b])->tp_name);
            return NULL;
        }
    }
    Py_ssize_t total = 0;
    for (Py_ssize_t g = 0; g < PyTuple_GET_SIZE(groups); g++) {
        if (!PyTuple_Check(PyTuple_GET_ITEM(groups, g))) {
            PyErr_Format(PyExc_TypeError, "call_hop: group %zd must be a tuple", g);
            return NULL;
        }
        total += PyTuple_GET_SIZE(PyTuple_GET_ITEM(groups, g));
    }
    f.operands = PyTuple_New(total);
    if (f.operands == NULL)
        return NULL;
    for (Py_ssize_t g = 0, k = 0; g < PyTuple_GET_SIZE(groups); g++) {
        PyObject *grp = PyTuple_GET_ITEM(groups, g);
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(grp); j++)
            PyTuple_SET_ITEM(f.operands, k++, Py_NewRef(PyTuple_GET_ITEM(grp, j)));
    }
    PyObject *tr = hop_py_current_trace();
    if (tr == NULL && d) {
        Py_DECREF(f.operands);
        PyErr_SetString(PyExc_RuntimeError, "call_direct: no trace is active on this thread");
        return NULL;
    }
    PyObject *result = tr ? traced_call(tr, cls, params, np, leads, groups, &f)
                          : eager_call(cls, params, np, leads, groups, &f);
    Py_DECREF(f.operands);
    Py_XDECREF(f.exc_type);
    Py_XDECREF(f.exc_value);
    Py_XDECREF(f.exc_tb);
    return result;
}

/* call_hop(name, leads, groups, bodies, keys=None) -> list of results */
static PyObject *
py_call_hop(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    PyObject *leads, *groups, *bodies, *keys = Py_None;
    if (!PyArg_ParseTuple(args, "sO!O!O!|O:call_hop", &name, &PyTuple_Type, &leads, &PyTuple_Type,
                          &groups, &PyTuple_Type, &bodies, &keys))
        return NULL;
    return call(name, leads, groups, bodies, keys, NULL);
}

/* call_direct(name, leads, operands, fns, whiches, same, results) -> list
 * of results: a traced call of HOP name with one group, the operands (a
 * tuple of tensors and SymInts), whose bodies are fns themselves, each
 * called as fn(*operands) inside the purity check (direct_body).  results
 * (a list, empty) gets, per body, None where it returned one tensor, else
 * its _Result; same(hop, first, result, ncall) checks each body's result
 * against the first's where one is not a tensor. */
/* args[i] as an object of type (or a subclass), else what PyArg_ParseTuple's
 * "O!" raises. */
static int
direct_arg(PyObject *const *args, Py_ssize_t i, PyTypeObject *type, PyObject **out)
{
    if (!PyObject_TypeCheck(args[i], type)) {
        PyErr_Format(PyExc_TypeError, "call_direct() argument %zd must be %s, not %.50s", i + 1,
                     type->tp_name, Py_TYPE(args[i])->tp_name);
        return -1;
    }
    *out = args[i];
    return 0;
}

/* Fast-call: PyArg_ParseTuple's format walk was ~880 instructions of every
 * traced HOP call (issue #30). */
static PyObject *
py_call_direct(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    const char *name;
    PyObject *leads, *operands, *fns;
    direct d;
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "call_direct() takes exactly 7 arguments (%zd given)", nargs);
        return NULL;
    }
    d.same = args[5];
    if (direct_arg(args, 0, &PyUnicode_Type, &d.name) < 0 ||
        direct_arg(args, 1, &PyTuple_Type, &leads) < 0 ||
        direct_arg(args, 2, &PyTuple_Type, &operands) < 0 ||
        direct_arg(args, 3, &PyTuple_Type, &fns) < 0 ||
        direct_arg(args, 4, &PyTuple_Type, &d.whiches) < 0 ||
        direct_arg(args, 6, &PyList_Type, &d.results) < 0 ||
        (name = PyUnicode_AsUTF8(d.name)) == NULL || direct_helpers() < 0)
        return NULL;
    if (PyTuple_GET_SIZE(d.whiches) != PyTuple_GET_SIZE(fns) || PyList_GET_SIZE(d.results) != 0) {
        PyErr_SetString(PyExc_TypeError,
                        "call_direct: one name per body, and an empty list for the results");
        return NULL;
    }
    PyObject *groups = PyTuple_Pack(1, operands);
    /* The names tell the bodies apart (one function may be two branches). */
    PyObject *result = groups ? call(name, leads, groups, fns, d.whiches, &d) : NULL;
    Py_XDECREF(groups);
    return result;
}

/* _direct's answer "not direct" (_C._NOT_DIRECT, made at import); what it
 * reads is direct_helpers': the key of a trace hop.compile makes
 * (_breaks._COMPILE), the registered pytree types (_pytree._REGISTERED)
 * and _hops._direct_finish. */
static PyObject *not_direct;

/* _direct(name, leads, operands, fns, whiches, same) -> the HOP's result,
 * or _NOT_DIRECT where the call must go through _apply: _hops._direct's
 * test and call in one C call (issue #30: a Python frame of every traced
 * cond and wrap call, and of every level of a nest).  Direct: this thread
 * traces for hop.trace (not hop.compile: its calls check their bodies'
 * prints), hop.Tensor is no registered pytree type and the operands (a
 * tuple) are hop.Tensors themselves; then _call_direct's call, whose
 * results give the one tensor every body returned, or _direct_finish
 * shapes the outputs. */
static PyObject *
py_direct(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_Format(PyExc_TypeError, "_direct() takes exactly 6 arguments (%zd given)", nargs);
        return NULL;
    }
    if (direct_helpers() < 0)
        return NULL;
    PyObject *tr = hop_py_current_trace();
    if (tr == NULL || !PyTuple_Check(args[2]))
        return Py_NewRef(not_direct);
    int compiling = PyDict_Contains(((TraceObject *)tr)->scratch, compile_key);
    int reg = compiling == 0 && PyDict_GET_SIZE(registered)
                  ? PyDict_Contains(registered, (PyObject *)&hop_py_TensorType)
                  : 0;
    if (compiling < 0 || reg < 0)
        return NULL;
    if (compiling || reg)
        return Py_NewRef(not_direct);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[2]); i++)
        if (!Py_IS_TYPE(PyTuple_GET_ITEM(args[2], i), &hop_py_TensorType))
            return Py_NewRef(not_direct);
    PyObject *results = PyList_New(0);
    PyObject *cargs[7] = {args[0], args[1], args[2], args[3], args[4], args[5], results};
    PyObject *outs = results ? py_call_direct(self, cargs, 7) : NULL;
    if (outs == NULL) {
        Py_XDECREF(results);
        return NULL;
    }
    PyObject *out;
    if (PyList_Check(outs) && PyList_GET_SIZE(outs) == 1 && all_single(results))
        out = Py_NewRef(PyList_GET_ITEM(outs, 0)); /* every body returned one tensor */
    else
        out = PyObject_CallFunctionObjArgs(direct_finish_fn, args[0], outs, results, args[4],
                                           NULL);
    Py_DECREF(outs);
    Py_DECREF(results);
    return out;
}

/* hop_signature(name) -> (params, doc, made): params a tuple of (name,
 * kind) with kind one of "int", "float", "bool", "dtype", "value", "body",
 * "values", "carry", "varargs"; doc the class's or None; made the number of
 * leading body inputs the HOP makes itself (a loop's index). */
static PyObject *
py_hop_signature(PyObject *self, PyObject *arg)
{
    (void)self;
    static const char *const kinds[] = {"end",  "int",    "float",  "bool",  "dtype",  "value",
                                        "body", "bodies", "values", "carry", "varargs"};
    _Static_assert(sizeof kinds / sizeof kinds[0] == HOP_PARAM_VARARGS + 1,
                   "one name per hop_param_kind");
    const char *name = PyUnicode_AsUTF8(arg);
    if (name == NULL)
        return NULL;
    const hop_class *cls = hop_find_hop(name);
    if (cls == NULL)
        return hop_py_raise();
    size_t np;
    const hop_param *params = hop_class_params(cls, &np);
    PyObject *ps = PyTuple_New((Py_ssize_t)np);
    for (size_t i = 0; ps && i < np; i++) {
        hop_py_fill(&ps, (Py_ssize_t)i,
                    Py_BuildValue("(ss)", params[i].name, kinds[params[i].kind]));
    }
    if (ps == NULL)
        return NULL;
    const char *doc = NULL;
    for (const hop_class *k = cls; k && doc == NULL; k = k->base)
        doc = k->doc;
    return Py_BuildValue("(Nzn)", ps, doc, (Py_ssize_t)hop_class_made_inputs(cls));
}

/* list_hops() -> sorted list of registered names */
static PyObject *
py_list_hops(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    size_t n = hop_list_hops(NULL, 0);
    const char **names = PyMem_RawCalloc(n + 1, sizeof *names);
    if (names == NULL)
        return PyErr_NoMemory();
    n = hop_list_hops(names, n);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        hop_py_fill(&list, (Py_ssize_t)i, PyUnicode_FromString(names[i]));
    }
    PyMem_RawFree(names);
    return list;
}

/* load_library(path) -> list of the names its init registered */
static PyObject *
py_load_library(PyObject *self, PyObject *arg)
{
    (void)self;
    PyObject *bytes;
    if (!PyUnicode_FSConverter(arg, &bytes))
        return NULL;
    size_t n = 0;
    const char *names[256];
    hop_status st = hop_load_library(PyBytes_AS_STRING(bytes), names, 256, &n);
    Py_DECREF(bytes);
    if (st != HOP_OK)
        return hop_py_raise();
    PyObject *list = PyList_New((Py_ssize_t)(n < 256 ? n : 256));
    for (size_t i = 0; list && i < n && i < 256; i++) {
        hop_py_fill(&list, (Py_ssize_t)i, PyUnicode_FromString(names[i]));
    }
    return list;
}

static PyMethodDef hop_functions[] = {
    {"call_hop", py_call_hop, METH_VARARGS,
     "call_hop(name, leads, groups, bodies, keys=None) -> list of results"},
    {"_in_body", (PyCFunction)(void (*)(void))py_in_body, METH_FASTCALL,
     HOP_PY_SIG("_in_body(d=0, /)") "how many HOP bodies this thread runs, after adding d"},
    {"_call_direct", (PyCFunction)(void (*)(void))py_call_direct, METH_FASTCALL,
     HOP_PY_SIG("_call_direct(name, leads, operands, fns, whiches, same, results, /)") "a "
     "traced call whose bodies are fns(*operands)"},
    {"_direct", (PyCFunction)(void (*)(void))py_direct, METH_FASTCALL,
     HOP_PY_SIG("_direct(name, leads, operands, fns, whiches, same, /)") "a traced call whose "
     "bodies are fns(*operands), or _NOT_DIRECT where it must go through _apply"},
    {"hop_signature", py_hop_signature, METH_O,
     "hop_signature(name) -> (params, doc, made): a registered HOP's signature"},
    {"list_hops", py_list_hops, METH_NOARGS, "list_hops() -> the registered HOPs' names"},
    {"load_library", py_load_library, METH_O,
     "load_library(path) -> names: loads a library of HOPs"},
    {NULL, NULL, 0, NULL},
};

int
hop_py_hops_init(PyObject *module)
{
    /* The registry registers the built-in HOPs at its first lookup, a block
     * it keeps for the process.  Made here, at import, it is part of every
     * baseline a leak check takes (_alloc_live), whichever test runs first. */
    if (hop_find_hop("wrap") == NULL) {
        hop_py_raise();
        return -1;
    }
    not_direct = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (not_direct == NULL || PyModule_AddObjectRef(module, "_NOT_DIRECT", not_direct) < 0)
        return -1;
    return PyModule_AddFunctions(module, hop_functions);
}
