/*
 * python/_C/trace.c - tracing from Python: the Trace object (one
 * OutputGraph), proxies, SymInt, graph introspection for hop.GraphModule,
 * and what python/_C/hops.c needs to call HOPs in a trace.
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
#include "hop_py.h"
#include "tensor_impl.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>
#include <time.h>

typedef struct TraceObject {
    PyObject_HEAD
    hop_output_graph *og;
    PyObject *kept;     /* dict id(obj) -> obj: every tensor ever captured, kept alive */
    PyObject *names;    /* dict id(obj) -> name hint for captured tensors */
    PyObject *scratch;  /* dict for the Python layer's per-trace state */
    int active; /* tracing: then it is `current` of the thread that started it */
    int loaded; /* made by hop.load: a finished program, never traced into */
    long nconstants;
    hop_py_memo *memo; /* ops to replay (path specialisation), or NULL */
} TraceObject;

typedef struct SymIntObject {
    PyObject_HEAD
    const hop_expr *expr;
    hop_node *node;  /* the value that yields it, or NULL for an expression */
    PyObject *owner; /* TraceObject */
} SymIntObject;

static PyTypeObject TraceType;

/* This thread's active trace (borrowed: an active trace holds a reference to
 * itself), NULL when the thread is not tracing. */
static _Thread_local TraceObject *current;

/* Threads tracing right now.  Changed and read with the GIL held; the eager
 * fast paths test it before the thread-local `current`, so that an op costs
 * no thread-local lookup while no thread traces. */
int hop_py__ntracing;

/* ------------------------------------------------------------- helpers */

static TraceObject *
active_trace(const char *what)
{
    if (current == NULL) {
        PyErr_Format(hop_py_TraceError,
                     "%s: no trace is active (a traced value was used after its trace ended)",
                     what);
        return NULL;
    }
    return current;
}

/* tr itself must be this thread's active trace: a Trace started by another
 * thread (or not started) cannot take HOP calls or inputs from here. */
static int
own_active(TraceObject *tr, const char *what)
{
    if (tr == current)
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
    if (tr->active && tr != current) {
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

PyObject *
hop_py_proxy_new(PyObject *owner, hop_node *node)
{
    TensorObject *p = PyObject_New(TensorObject, &hop_py_TensorType);
    if (p == NULL)
        return NULL;
    p->t = NULL;
    p->node = node;
    p->base = NULL;
    p->weakreflist = NULL;
    Py_INCREF(owner);
    p->owner = owner;
    return (PyObject *)p;
}

static PyObject *
symint_new(PyObject *owner, const hop_expr *expr, hop_node *node)
{
    int64_t v;
    if (hop_expr_const_value(expr, &v) && !hop_expr_is_bool(expr))
        return PyLong_FromLongLong(v);
    SymIntObject *s = PyObject_New(SymIntObject, &hop_py_SymIntType);
    if (s == NULL)
        return NULL;
    s->expr = expr;
    s->node = node;
    Py_INCREF(owner);
    s->owner = owner;
    return (PyObject *)s;
}

/* A node's value as a Python object: a proxy or a SymInt. */
static PyObject *
wrap_node(PyObject *owner, hop_node *n)
{
    if (n->meta->kind == HOP_VALUE_SYM)
        return symint_new(owner, n->meta->sym, n);
    return hop_py_proxy_new(owner, n);
}

PyObject *
hop_py_proxy_shape(TensorObject *p)
{
    const hop_meta *m = &p->node->meta->meta;
    PyObject *shape = PyTuple_New(m->rank);
    if (shape == NULL)
        return NULL;
    for (int d = 0; d < m->rank; d++) {
        PyObject *v = symint_new(p->owner, m->sizes[d], NULL);
        if (v == NULL) {
            Py_DECREF(shape);
            return NULL;
        }
        PyTuple_SET_ITEM(shape, d, v);
    }
    return shape;
}

/*
 * Captures a concrete tensor as a root input of tr (once per object).  The
 * OutputGraph knows the tensor by its address, so the trace keeps it alive
 * first: an input whose object died could be matched by a new object at the
 * same address.  A failed HOP call takes its captures out of the OutputGraph
 * again; the object stays kept, which is harmless.
 */
static hop_node *
capture(TraceObject *tr, TensorObject *t)
{
    PyObject *key = PyLong_FromVoidPtr(t);
    if (key == NULL)
        return NULL;
    PyObject *hint = PyDict_GetItemWithError(tr->names, key);
    bool ok = (hint != NULL || !PyErr_Occurred()) &&
              PyDict_SetDefault(tr->kept, key, (PyObject *)t) != NULL;
    Py_DECREF(key);
    if (!ok)
        return NULL;
    char name[128];
    if (hint && PyUnicode_Check(hint))
        snprintf(name, sizeof name, "%s", PyUnicode_AsUTF8(hint));
    else
        snprintf(name, sizeof name, "_tensor_constant%ld", tr->nconstants);
    size_t before = hop_output_graph_ninputs(tr->og);
    hop_node *n = hop_output_graph_capture(tr->og, t, name, t->t->dtype, t->t->rank, t->t->sizes,
                                           false);
    if (n == NULL) {
        hop_py_raise();
        return NULL;
    }
    if (hop_output_graph_ninputs(tr->og) != before && hint == NULL)
        tr->nconstants++;
    return n;
}

static int symint_usable(PyObject *o);

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
        if (symint_usable(o) < 0)
            return NULL;
        if (s->node)
            return s->node;
        if (hop_expr_kind_of(s->expr) == HOP_EXPR_SYMBOL) {
            hop_node *n = hop_tracer_bind_symbol(current_tracer(tr), s->expr);
            if (n == NULL)
                hop_py_raise();
            return n;
        }
        char e[128];
        hop_expr_print(s->expr, e, sizeof e);
        PyErr_Format(hop_py_UnsupportedError,
                     "%s: the SymInt %s is an expression, not a value; return a tensor (e.g. "
                     "hop.full((), %s)) or a single symbol",
                     what, e, e);
        return NULL;
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
            if (symint_usable(o->u.sym) < 0)
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

PyObject *
hop_py_trace_op(hop_op op, const hop_py_opnd *args, size_t nargs)
{
    const hop_op_info *info = hop_op_get(op);
    const char *what = info ? info->name : "op";
    TraceObject *tr = active_trace(what);
    if (tr == NULL)
        return NULL;
    size_t total = nargs + count_items(args, nargs);
    hop_arg small[64], *buf = small;
    if (total > 64 && (buf = PyMem_Calloc(total, sizeof *buf)) == NULL)
        return PyErr_NoMemory();
    hop_arg *pool = buf + nargs;
    PyObject *result = NULL;
    if (to_args(tr, args, nargs, buf, &pool, buf + total, what) == 0) {
        int depth = (int)hop_output_graph_depth(tr->og);
        hop_node *n = hop_py_memo_replay(tr->memo, depth, op, buf, nargs);
        if (n != NULL) {
            result = wrap_node((PyObject *)tr, n);
        } else if ((n = hop_tracer_call_op(current_tracer(tr), op, buf, nargs)) == NULL) {
            hop_py_raise();
        } else if (hop_py_memo_record(tr->memo, depth, op, buf, nargs, n) == 0) {
            result = wrap_node((PyObject *)tr, n);
        }
    }
    if (buf != small)
        PyMem_Free(buf);
    return result;
}

/* A foreign kernel's call recorded in the current tracer: None, one proxy
 * or a tuple of proxies (one per in-out parameter). */
PyObject *
hop_py_trace_foreign(const hop_foreign *f, const hop_py_opnd *args, size_t nargs)
{
    const char *what = hop_foreign_name(f);
    TraceObject *tr = active_trace(what);
    if (tr == NULL)
        return NULL;
    size_t total = nargs + count_items(args, nargs);
    hop_arg small[64], *buf = small;
    if (total > 64 && (buf = PyMem_Calloc(total, sizeof *buf)) == NULL)
        return PyErr_NoMemory();
    hop_arg *pool = buf + nargs;
    PyObject *result = NULL;
    hop_values vs = {0};
    if (to_args(tr, args, nargs, buf, &pool, buf + total, what) == 0) {
        if (hop_tracer_call_foreign(current_tracer(tr), f, buf, nargs, &vs) != HOP_OK) {
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
    }
    hop_values_clear(&vs);
    if (buf != small)
        PyMem_Free(buf);
    return result;
}

int
hop_py__thread_tracing(void)
{
    return current != NULL;
}

/* ------------------------------------------------------------- SymInt */

static void
symint_dealloc(SymIntObject *s)
{
    Py_XDECREF(s->owner);
    PyObject_Free(s);
}

static hop_shape_env *
symint_env(SymIntObject *s)
{
    return hop_output_graph_env(((TraceObject *)s->owner)->og);
}

/* An int (a bool is the int 0 or 1, as in Python) or a SymInt as an
 * expression of env; NULL (no error) otherwise. */
static const hop_expr *
as_expr(hop_shape_env *env, PyObject *o, PyObject **owner)
{
    if (PyObject_TypeCheck(o, &hop_py_SymIntType)) {
        if (owner && *owner == NULL)
            *owner = ((SymIntObject *)o)->owner;
        return ((SymIntObject *)o)->expr;
    }
    if (PyLong_Check(o)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return NULL;
        }
        return hop_sym_const(env, v);
    }
    return NULL;
}

/*
 * Arithmetic and decisions on a SymInt grow its trace's ShapeEnv (and may add
 * guards): only the thread tracing it may do that, and only while it traces.
 * -1 with TraceError for a SymInt of another thread's trace or of a trace
 * that ended.
 */
static int
symint_usable(PyObject *o)
{
    if (!PyObject_TypeCheck(o, &hop_py_SymIntType) ||
        ((SymIntObject *)o)->owner == (PyObject *)current)
        return 0;
    char e[128];
    hop_expr_print(((SymIntObject *)o)->expr, e, sizeof e);
    PyErr_Format(hop_py_TraceError,
                 "SymInt %s was used outside its trace (after the trace ended, or from another "
                 "thread than the one tracing)",
                 e);
    return -1;
}

typedef const hop_expr *(*sym_binop)(hop_shape_env *, const hop_expr *, const hop_expr *);

static PyObject *
symint_binary(PyObject *a, PyObject *b, sym_binop f)
{
    SymIntObject *s = PyObject_TypeCheck(a, &hop_py_SymIntType) ? (SymIntObject *)a
                                                                 : (SymIntObject *)b;
    if (symint_usable(a) < 0 || symint_usable(b) < 0)
        return NULL;
    hop_shape_env *env = symint_env(s);
    PyObject *owner = NULL;
    const hop_expr *x = as_expr(env, a, &owner), *y = as_expr(env, b, &owner);
    if (x == NULL || y == NULL)
        Py_RETURN_NOTIMPLEMENTED;
    const hop_expr *r = f(env, x, y);
    return r ? symint_new(owner, r, NULL) : hop_py_raise();
}

/*
 * A SymInt with a float, or a true division: Python's result is a float,
 * which hop.SymFloat (python/hop/_symfloat.py) stands for while tracing.
 * op is the operator's text ("*", "/", ...); the Python side computes the
 * value from the symbol in double at run time, or raises its TypeError.
 */
static PyObject *
symint_float_op(const char *op, PyObject *a, PyObject *b)
{
    if (symint_usable(a) < 0 || symint_usable(b) < 0)
        return NULL;
    PyObject *mod = PyImport_ImportModule("hop._symfloat");
    if (mod == NULL)
        return NULL;
    PyObject *r = PyObject_CallMethod(mod, "symint_op", "sOO", op, a, b);
    Py_DECREF(mod);
    return r;
}

static PyObject *
symint_arith(PyObject *a, PyObject *b, sym_binop f, const char *op)
{
    if (PyFloat_Check(a) || PyFloat_Check(b))
        return symint_float_op(op, a, b);
    return symint_binary(a, b, f);
}

static PyObject *
symint_add(PyObject *a, PyObject *b)
{
    return symint_arith(a, b, hop_sym_add, "+");
}

static PyObject *
symint_sub(PyObject *a, PyObject *b)
{
    return symint_arith(a, b, hop_sym_sub, "-");
}

static PyObject *
symint_mul(PyObject *a, PyObject *b)
{
    return symint_arith(a, b, hop_sym_mul, "*");
}

/* An int divisor of 0 (False too): Python's ZeroDivisionError, with its message. */
static bool
zero_divisor(PyObject *b, const char *msg)
{
    if (!PyLong_Check(b))
        return false;
    int overflow = 0;
    if (PyLong_AsLongLongAndOverflow(b, &overflow) != 0 || overflow) {
        PyErr_Clear();
        return false;
    }
    PyErr_SetString(PyExc_ZeroDivisionError, msg);
    return true;
}

static PyObject *
symint_floordiv(PyObject *a, PyObject *b)
{
    if (zero_divisor(b, "integer division or modulo by zero"))
        return NULL;
    return symint_arith(a, b, hop_sym_floordiv, "//");
}

static PyObject *
symint_mod(PyObject *a, PyObject *b)
{
    if (zero_divisor(b, "integer modulo by zero"))
        return NULL;
    return symint_arith(a, b, hop_sym_mod, "%");
}

/* True division of ints (bools too) and SymInts (and floats) gives a float. */
static PyObject *
symint_truediv(PyObject *a, PyObject *b)
{
    bool ok_a = PyObject_TypeCheck(a, &hop_py_SymIntType) || PyLong_Check(a) || PyFloat_Check(a);
    bool ok_b = PyObject_TypeCheck(b, &hop_py_SymIntType) || PyLong_Check(b) || PyFloat_Check(b);
    if (!ok_a || !ok_b)
        Py_RETURN_NOTIMPLEMENTED;
    return symint_float_op("/", a, b);
}

/* x ** k by squaring, for a SymInt x and a constant k >= 0 (Python's 0**0 is 1). */
static const hop_expr *
sym_pow_int(hop_shape_env *env, const hop_expr *x, long long k)
{
    const hop_expr *r = hop_sym_const(env, 1);
    while (r != NULL && k > 0) {
        if (k & 1)
            r = hop_sym_mul(env, r, x);
        k >>= 1;
        if (k > 0 && r != NULL)
            x = hop_sym_mul(env, x, x);
        if (x == NULL)
            return NULL;
    }
    return r;
}

/*
 * s ** k for a constant int k >= 0 is a SymInt (a product); pow(s, k, m) is
 * (s ** k) % m, as Python's for k >= 0.  A negative or float exponent gives
 * a float (the Python side); a SymInt exponent has no canonical form.
 */
static PyObject *
symint_pow(PyObject *a, PyObject *b, PyObject *m)
{
    bool sym_a = PyObject_TypeCheck(a, &hop_py_SymIntType);
    bool sym_b = PyObject_TypeCheck(b, &hop_py_SymIntType);
    bool int_b = PyLong_Check(b); /* a bool is the int 0 or 1 */
    if (!sym_a || !int_b || m != Py_None) {
        bool num_a = sym_a || PyLong_Check(a) || PyFloat_Check(a);
        bool num_b = sym_b || int_b || PyFloat_Check(b);
        if (!num_a || !num_b)
            Py_RETURN_NOTIMPLEMENTED;
        if (m != Py_None && sym_a && int_b) {
            PyObject *p = symint_pow(a, b, Py_None);
            if (p == NULL || p == Py_NotImplemented)
                return p;
            PyObject *r = PyNumber_Remainder(p, m);
            Py_DECREF(p);
            return r;
        }
        return symint_float_op(m == Py_None ? "**" : "pow", a, b);
    }
    if (symint_usable(a) < 0)
        return NULL;
    int overflow = 0;
    long long k = PyLong_AsLongLongAndOverflow(b, &overflow);
    if (k == -1 && PyErr_Occurred())
        return NULL;
    if (overflow || k < 0)
        return symint_float_op("**", a, b);
    SymIntObject *s = (SymIntObject *)a;
    const hop_expr *r = sym_pow_int(symint_env(s), s->expr, k);
    return r ? symint_new(s->owner, r, NULL) : hop_py_raise();
}

/* abs(s): Max(s, -s), a SymInt. */
static PyObject *
symint_abs(PyObject *a)
{
    SymIntObject *s = (SymIntObject *)a;
    if (symint_usable(a) < 0)
        return NULL;
    hop_shape_env *env = symint_env(s);
    const hop_expr *n = hop_sym_neg(env, s->expr);
    const hop_expr *r = n ? hop_sym_max(env, s->expr, n) : NULL;
    return r ? symint_new(s->owner, r, NULL) : hop_py_raise();
}

static PyObject *
symint_pos(PyObject *a)
{
    if (symint_usable(a) < 0)
        return NULL;
    return Py_NewRef(a);
}

static PyObject *
symint_neg(PyObject *a)
{
    SymIntObject *s = (SymIntObject *)a;
    if (symint_usable(a) < 0)
        return NULL;
    const hop_expr *r = hop_sym_neg(symint_env(s), s->expr);
    return r ? symint_new(s->owner, r, NULL) : hop_py_raise();
}

/* Decides a SymBool through the ShapeEnv: a hint decision adds a guard. */
static int
decide(SymIntObject *s, const hop_expr *cond, const char *what)
{
    bool v;
    if (hop_shape_env_decide(symint_env(s), cond, what, &v) != HOP_OK) {
        hop_py_raise();
        return -1;
    }
    return v;
}

static PyObject *
symint_richcompare(PyObject *a, PyObject *b, int op)
{
    SymIntObject *s = PyObject_TypeCheck(a, &hop_py_SymIntType) ? (SymIntObject *)a
                                                                 : (SymIntObject *)b;
    if (symint_usable(a) < 0 || symint_usable(b) < 0)
        return NULL;
    hop_shape_env *env = symint_env(s);
    const hop_expr *x = as_expr(env, a, NULL), *y = as_expr(env, b, NULL);
    if (x == NULL || y == NULL)
        Py_RETURN_NOTIMPLEMENTED;
    static const sym_binop rel[] = {hop_sym_lt, hop_sym_le, hop_sym_eq,
                                    hop_sym_ne, hop_sym_gt, hop_sym_ge};
    const hop_expr *cond = rel[op](env, x, y);
    if (cond == NULL)
        return hop_py_raise();
    int v = decide(s, cond, "SymInt comparison");
    if (v < 0)
        return NULL;
    return PyBool_FromLong(v);
}

static int
symint_bool(PyObject *a)
{
    SymIntObject *s = (SymIntObject *)a;
    if (symint_usable(a) < 0)
        return -1;
    hop_shape_env *env = symint_env(s);
    const hop_expr *cond = hop_sym_ne(env, s->expr, hop_sym_const(env, 0));
    return cond ? decide(s, cond, "bool(SymInt)") : hop_py_raise_int();
}

/* int(s): specialises s to its hint, with a guard. */
static PyObject *
symint_int(PyObject *a)
{
    SymIntObject *s = (SymIntObject *)a;
    if (symint_usable(a) < 0)
        return NULL;
    hop_shape_env *env = symint_env(s);
    size_t n = hop_shape_env_nsymbols(env);
    int64_t *hints = PyMem_Calloc(n + 1, sizeof *hints);
    if (hints == NULL)
        return PyErr_NoMemory();
    for (size_t i = 0; i < n; i++)
        if (!hop_symbol_hint(hop_shape_env_symbol(env, i), &hints[i]))
            hints[i] = HOP_UNBOUND;
    int64_t v;
    hop_status st = hop_expr_eval(s->expr, hints, n, &v);
    PyMem_Free(hints);
    if (st != HOP_OK) {
        char e[128];
        hop_expr_print(s->expr, e, sizeof e);
        return PyErr_Format(hop_py_DataDependentError,
                            "int(%s): the value depends on data (an unbacked symbol); it is only "
                            "known at run time",
                            e);
    }
    const hop_expr *cond = hop_sym_eq(env, s->expr, hop_sym_const(env, v));
    if (cond == NULL || decide(s, cond, "int(SymInt)") < 0)
        return cond ? NULL : hop_py_raise();
    return PyLong_FromLongLong(v);
}

/* The expression's text, for hop (and the .expr attribute). */
static PyObject *
symint_expr_text(PyObject *a)
{
    char e[256];
    hop_expr_print(((SymIntObject *)a)->expr, e, sizeof e);
    return PyUnicode_FromString(e);
}

/* str() and repr() give the expression to hop's code and in hop.trace; in
 * hop.compile the user's code gets the int's text (hop/_breaks.py: the size
 * specialised with a guard, as int() does), as eagerly. */
static PyObject *
symint_str(PyObject *a)
{
    PyObject *text = symint_expr_text(a);
    if (text == NULL)
        return NULL;
    PyObject *r = hop_py__user_text("symint_str", a, text);
    Py_DECREF(text);
    return r;
}

static PyObject *
symint_repr(PyObject *a)
{
    char e[256];
    hop_expr_print(((SymIntObject *)a)->expr, e, sizeof e);
    PyObject *text = PyUnicode_FromFormat("SymInt(%s)", e);
    if (text == NULL)
        return NULL;
    PyObject *r = hop_py__user_text("symint_repr", a, text);
    Py_DECREF(text);
    return r;
}

/* format(s, spec): the int's format in the user's code (as str()). */
static PyObject *
symint_format(PyObject *a, PyObject *spec)
{
    PyObject *mod = PyImport_ImportModule("hop._breaks");
    if (mod == NULL)
        return NULL;
    PyObject *r = PyObject_CallMethod(mod, "symint_format", "OO", a, spec);
    Py_DECREF(mod);
    return r;
}

static Py_hash_t
symint_hash(PyObject *a)
{
    /* Interned: equal expressions are the same pointer. */
    Py_hash_t h = (Py_hash_t)((uintptr_t)((SymIntObject *)a)->expr >> 4);
    return h == -1 ? -2 : h;
}

static PyObject *
symint_get_expr(PyObject *a, void *closure)
{
    (void)closure;
    return symint_expr_text(a);
}

static PyObject *
symint_get_node(PyObject *a, void *closure)
{
    (void)closure;
    SymIntObject *s = (SymIntObject *)a;
    if (s->node == NULL)
        Py_RETURN_NONE;
    return PyUnicode_FromString(s->node->name);
}

static PyNumberMethods symint_as_number = {
    .nb_add = symint_add,
    .nb_subtract = symint_sub,
    .nb_multiply = symint_mul,
    .nb_floor_divide = symint_floordiv,
    .nb_remainder = symint_mod,
    .nb_true_divide = symint_truediv,
    .nb_power = symint_pow,
    .nb_negative = symint_neg,
    .nb_positive = symint_pos,
    .nb_absolute = symint_abs,
    .nb_bool = symint_bool,
    .nb_int = symint_int,
    .nb_index = symint_int,
};

static PyMethodDef symint_methods[] = {
    {"__format__", (PyCFunction)symint_format, METH_O,
     HOP_PY_SIG("__format__($self, spec, /)") "format(s, spec): the int's format in the user's "
                                                "code of a hop.compile trace (as str())."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef symint_getset[] = {
    {"expr", symint_get_expr, NULL, "the expression, e.g. '2*s0 + 1'", NULL},
    {"node", symint_get_node, NULL, "the name of the graph value that yields it, or None", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject hop_py_SymIntType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop.SymInt",
    .tp_basicsize = sizeof(SymIntObject),
    .tp_dealloc = (destructor)symint_dealloc,
    .tp_repr = symint_repr,
    .tp_str = symint_str,
    .tp_hash = symint_hash,
    .tp_as_number = &symint_as_number,
    .tp_richcompare = symint_richcompare,
    .tp_getset = symint_getset,
    .tp_methods = symint_methods,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A symbolic integer of a trace: a size like s0 (x.shape[0] under dynamic=True), "
              "or an unbacked value like u0 (t.item()).  Arithmetic with ints gives SymInts "
              "(+ - * // %, ** with a constant int >= 0, abs()); with a float, or true "
              "division, a hop.SymFloat (a weak float computed at run time); comparing one "
              "decides through the trace's shape environment (a guard) or raises "
              "hop.DataDependentError.  Not made by calling hop.SymInt.\n\n"
              ">>> def f(x):\n"
              "...     n = x.shape[0]\n"
              "...     print(type(n).__name__, n, 2 * n + 1)\n"
              "...     return x * n\n"
              ">>> _ = hop.trace(f, hop.ones(3), dynamic=True)\n"
              "SymInt s0 2*s0 + 1\n",
};

/* ------------------------------------------------------ for HOP calls */

/* The interface python/_C/hops.c uses to call HOPs in a trace. */

PyObject *
hop_py_current_trace(void)
{
    return (PyObject *)current;
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

int
hop_py_symint_arg(PyObject *o, hop_arg *out)
{
    if (symint_usable(o) < 0)
        return -1;
    SymIntObject *s = (SymIntObject *)o;
    *out = s->node ? hop_arg_node(s->node) : hop_arg_sym(s->expr);
    return 0;
}

/* _sym_truth(s): the SymBool `s != 0` of a SymInt, undecided (Python's
 * truth of an int, as cond's pred); a SymBool as it is. */
static PyObject *
py_sym_truth(PyObject *self, PyObject *o)
{
    (void)self;
    if (!PyObject_TypeCheck(o, &hop_py_SymIntType)) {
        PyErr_SetString(PyExc_TypeError, "_sym_truth: expected a SymInt");
        return NULL;
    }
    if (symint_usable(o) < 0)
        return NULL;
    SymIntObject *s = (SymIntObject *)o;
    if (hop_expr_is_bool(s->expr))
        return Py_NewRef(o);
    hop_shape_env *env = symint_env(s);
    const hop_expr *ne = hop_sym_ne(env, s->expr, hop_sym_const(env, 0));
    return ne ? symint_new(s->owner, ne, NULL) : hop_py_raise();
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
    tr->kept = PyDict_New();
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
    if (current != NULL)
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
    current = tr;
    hop_py__ntracing++;
    Py_INCREF(tr);
    Py_RETURN_NONE;
}

static PyObject *
trace_stop(TraceObject *tr, PyObject *unused)
{
    (void)unused;
    if (tr->active && tr != current)
        return PyErr_Format(hop_py_TraceError,
                            "stop: the trace is active in another thread (only the thread that "
                            "started it can stop it)");
    if (tr->active) {
        tr->active = 0;
        current = NULL;
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

static PyObject *
trace_name_hint(TraceObject *tr, PyObject *args)
{
    PyObject *obj, *name;
    if (!PyArg_ParseTuple(args, "OU:name_hint", &obj, &name) || not_elsewhere(tr, "name_hint") < 0)
        return NULL;
    PyObject *key = PyLong_FromVoidPtr(obj);
    if (key == NULL)
        return NULL;
    int r = PyDict_Contains(tr->names, key) ? 0 : PyDict_SetItem(tr->names, key, name);
    Py_DECREF(key);
    if (r < 0)
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
    hop_arg *args = PyMem_Calloc((size_t)*n + 1, sizeof *args);
    for (Py_ssize_t i = 0; args && i < *n; i++) {
        hop_node *node = value_node(tr, PySequence_Fast_GET_ITEM(fast, i), what);
        if (node == NULL) {
            PyMem_Free(args);
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
    PyMem_Free(args);
    if (o == NULL)
        return hop_py_raise();
    if (hop_graph_verify(hop_output_graph_root_graph(tr->og)) != HOP_OK)
        return hop_py_raise();
    Py_RETURN_NONE;
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
        PyObject *s = PyUnicode_FromString(buf);
        if (s == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, s);
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
        if (item == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* Finds a subgraph by its path of names from the root. */
static hop_graph *
graph_at(TraceObject *tr, PyObject *path)
{
    hop_graph *g = hop_output_graph_root_graph(tr->og);
    PyObject *fast = PySequence_Fast(path, "path must be a sequence of subgraph names");
    if (fast == NULL)
        return NULL;
    for (Py_ssize_t i = 0; g && i < PySequence_Fast_GET_SIZE(fast); i++) {
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

static PyObject *
meta_to_py(const hop_value_info *v)
{
    char buf[256];
    if (v->kind == HOP_VALUE_SYM) {
        hop_expr_print(v->sym, buf, sizeof buf);
        return Py_BuildValue("(ss)", "sym", buf);
    }
    if (v->kind != HOP_VALUE_TENSOR)
        Py_RETURN_NONE;
    PyObject *shape = PyTuple_New(v->meta.rank);
    for (int d = 0; shape && d < v->meta.rank; d++) {
        int64_t c;
        PyObject *s;
        if (hop_expr_const_value(v->meta.sizes[d], &c)) {
            s = PyLong_FromLongLong(c);
        } else {
            hop_expr_print(v->meta.sizes[d], buf, sizeof buf);
            s = PyUnicode_FromString(buf);
        }
        if (s == NULL)
            Py_CLEAR(shape);
        else
            PyTuple_SET_ITEM(shape, d, s);
    }
    if (shape == NULL)
        return NULL;
    return Py_BuildValue("(sON)", "tensor", hop_py_dtype_object(v->meta.dtype), shape);
}

static PyObject *
arg_to_py(const hop_arg *a)
{
    char buf[256];
    switch (a->kind) {
    case HOP_ARG_NONE:
        Py_RETURN_NONE;
    case HOP_ARG_NODE:
        return Py_BuildValue("(ss)", "%node", a->u.node->name);
    case HOP_ARG_INT:
        return PyLong_FromLongLong(a->u.i);
    case HOP_ARG_FLOAT:
        return PyFloat_FromDouble(a->u.f);
    case HOP_ARG_BOOL:
        return PyBool_FromLong(a->u.b);
    case HOP_ARG_SYM:
        hop_expr_print(a->u.sym, buf, sizeof buf);
        return Py_BuildValue("(ss)", "%sym", buf);
    case HOP_ARG_DTYPE: {
        PyObject *d = hop_py_dtype_object(a->u.dtype);
        Py_XINCREF(d);
        return d;
    }
    case HOP_ARG_LIST: {
        PyObject *list = PyList_New((Py_ssize_t)a->u.list.n);
        for (size_t i = 0; list && i < a->u.list.n; i++) {
            PyObject *v = arg_to_py(&a->u.list.items[i]);
            if (v == NULL)
                Py_CLEAR(list);
            else
                PyList_SET_ITEM(list, (Py_ssize_t)i, v);
        }
        return list;
    }
    case HOP_ARG_GRAPH:
        return Py_BuildValue("(ss)", "%graph", a->u.graph->name);
    }
    Py_RETURN_NONE;
}

static PyObject *
printed(char *s)
{
    if (s == NULL)
        return hop_py_raise();
    PyObject *r = PyUnicode_FromString(s);
    hop_free(s);
    return r;
}

/* describe(path) -> dict(name, nodes, subgraphs, guards, code, table, dot);
 * guards are the graph's own (a cond branch's), as text. */
static PyObject *
trace_describe(TraceObject *tr, PyObject *path)
{
    if (not_elsewhere(tr, "describe") < 0)
        return NULL;
    hop_graph *g = graph_at(tr, path);
    if (g == NULL)
        return NULL;
    PyObject *nodes = PyList_New(0), *subs = PyList_New(0), *result = NULL;
    PyObject *guards = PyList_New(0);
    for (size_t i = 0; guards && i < g->nguards; i++) {
        char buf[512];
        hop_expr_print(g->guards[i], buf, sizeof buf);
        PyObject *s = PyUnicode_FromString(buf);
        if (s == NULL || PyList_Append(guards, s) < 0)
            Py_CLEAR(guards);
        Py_XDECREF(s);
    }
    for (hop_node *n = g->first; nodes && n; n = n->next) {
        PyObject *args = PyList_New((Py_ssize_t)n->nargs);
        for (size_t i = 0; args && i < n->nargs; i++) {
            PyObject *v = arg_to_py(&n->args[i]);
            if (v == NULL)
                Py_CLEAR(args);
            else
                PyList_SET_ITEM(args, (Py_ssize_t)i, v);
        }
        PyObject *outs = PyList_New((Py_ssize_t)n->nouts);
        for (size_t i = 0; outs && i < n->nouts; i++) {
            PyObject *v = meta_to_py(&n->outs[i]);
            if (v == NULL)
                Py_CLEAR(outs);
            else
                PyList_SET_ITEM(outs, (Py_ssize_t)i, v);
        }
        PyObject *meta = meta_to_py(n->meta);
        PyObject *item = args && outs && meta
                             ? Py_BuildValue("(sssOOO)", hop_node_kind_name(n->kind), n->name,
                                             n->target ? n->target : "", args, meta, outs)
                             : NULL;
        Py_XDECREF(args);
        Py_XDECREF(outs);
        Py_XDECREF(meta);
        if (item == NULL || PyList_Append(nodes, item) < 0)
            Py_CLEAR(nodes);
        Py_XDECREF(item);
    }
    for (size_t i = 0; subs && i < g->nsubgraphs; i++) {
        PyObject *s = PyUnicode_FromString(g->subgraphs[i]->name);
        if (s == NULL || PyList_Append(subs, s) < 0)
            Py_CLEAR(subs);
        Py_XDECREF(s);
    }
    if (nodes && subs && guards) {
        PyObject *code = printed(hop_graph_code(g));
        PyObject *table = code ? printed(hop_graph_table(g)) : NULL;
        PyObject *dot = table ? printed(hop_graph_dot(g)) : NULL;
        if (dot)
            result = Py_BuildValue("{s:s,s:O,s:O,s:O,s:N,s:N,s:N}", "name", g->name, "nodes", nodes,
                                   "subgraphs", subs, "guards", guards, "code", code, "table",
                                   table, "dot", dot);
        else {
            Py_XDECREF(code);
            Py_XDECREF(table);
        }
    }
    Py_XDECREF(nodes);
    Py_XDECREF(subs);
    Py_XDECREF(guards);
    return result;
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
    tr->kept = PyDict_New();
    tr->names = PyDict_New();
    tr->scratch = PyDict_New();
    for (Py_ssize_t i = 0; tr->kept && captures && i < PyList_GET_SIZE(captures); i++) {
        PyObject *t = PyList_GET_ITEM(captures, i);
        PyObject *key = PyLong_FromVoidPtr(t);
        if (key == NULL || PyDict_SetItem(tr->kept, key, t) < 0)
            Py_CLEAR(tr->kept);
        Py_XDECREF(key);
    }
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


/* ------------------------------------------------------------- plans */

typedef struct PlanObject {
    PyObject_HEAD
    hop_plan *plan;
    size_t ninputs, noutputs;
} PlanObject;

static void
plan_dealloc(PlanObject *p)
{
    hop_plan_free(p->plan);
    PyObject_Free(p);
}

/* ----------------------------------------- plan runs: Ctrl-C (issue #12) */

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

static int64_t
monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int
plan_signal_check(void *ud)
{
    signal_check *c = ud;
    int64_t now = monotonic_ns();
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
static int
plan_exec(PlanObject *p, hop_tensor **in, size_t n, hop_tensor **out)
{
    signal_check check = {NULL, 0};
    hop_run_options opts = {on_main_thread() ? plan_signal_check : NULL, &check};
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
    return 0;
}

/* Plan input i (o, from a sequence) as a runtime tensor: NULL with
 * TypeError unless o is a concrete Tensor. */
static hop_tensor *
plan_input(PlanObject *p, Py_ssize_t i, PyObject *o)
{
    if (!PyObject_TypeCheck(o, &hop_py_TensorType) || HOP_PY_IS_PROXY(o)) {
        PyErr_Format(PyExc_TypeError,
                     "plan input %zd (%s) must be a concrete hop.Tensor, "
                     "got %s",
                     i, hop_plan_input_name(p->plan, (size_t)i),
                     PyObject_TypeCheck(o, &hop_py_TensorType)
                         ? "a traced value (a proxy that escaped its trace)"
                         : Py_TYPE(o)->tp_name);
        return NULL;
    }
    return ((TensorObject *)o)->t;
}

/* run(tensors) -> list of tensors: runs the plan with the GIL released
 * (interruptible on the main thread, see above). */
enum { RUN_LIST, RUN_TUPLE, RUN_SINGLE }; /* how run_tensors returns the results */

/* The plan run on n tensors items (and then the tuple caps, when not NULL):
 * its results as a list, or with single the one result, or as a tuple (the
 * bound call of hop tensors).  NULL with an exception on error. */
static PyObject *
run_tensors(PlanObject *p, PyObject *const *items, Py_ssize_t n, PyObject *caps, int shape)
{
    Py_ssize_t nc = caps != NULL ? PyTuple_GET_SIZE(caps) : 0;
    if ((size_t)(n + nc) != p->ninputs)
        return PyErr_Format(PyExc_TypeError, "the plan takes %zu tensors, got %zd", p->ninputs,
                            n + nc);
    hop_tensor *small_in[16], **in = small_in, *small_out[16], **out = small_out;
    if (n + nc > 16)
        in = PyMem_Calloc((size_t)(n + nc), sizeof *in);
    if (p->noutputs > 16)
        out = PyMem_Calloc(p->noutputs, sizeof *out);
    PyObject *result = NULL;
    if (in == NULL || out == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n + nc; i++)
        if ((in[i] = plan_input(p, i, i < n ? items[i] : PyTuple_GET_ITEM(caps, i - n))) == NULL)
            goto done;
    if (plan_exec(p, in, (size_t)(n + nc), out) < 0)
        goto done;
    if (shape == RUN_SINGLE && p->noutputs == 1)
        return hop_py_tensor_new(out[0]);
    result = shape == RUN_TUPLE ? PyTuple_New((Py_ssize_t)p->noutputs)
                                : PyList_New((Py_ssize_t)p->noutputs);
    for (size_t i = 0; i < p->noutputs; i++) {
        PyObject *t = result ? hop_py_tensor_new(out[i]) : NULL;
        if (result == NULL) {
            hop_tensor_release(out[i]);
        } else if (t == NULL) {
            Py_CLEAR(result);
        } else if (shape == RUN_TUPLE) {
            PyTuple_SET_ITEM(result, (Py_ssize_t)i, t);
        } else {
            PyList_SET_ITEM(result, (Py_ssize_t)i, t);
        }
    }
done:
    if (in != small_in)
        PyMem_Free(in);
    if (out != small_out)
        PyMem_Free(out);
    return result;
}

static PyObject *
plan_run(PlanObject *p, PyObject *arg)
{
    PyObject *fast = PySequence_Fast(arg, "Plan.run takes a sequence of tensors");
    if (fast == NULL)
        return NULL;
    PyObject *result = run_tensors(p, PySequence_Fast_ITEMS(fast), PySequence_Fast_GET_SIZE(fast),
                                   NULL, RUN_LIST);
    Py_DECREF(fast);
    return result;
}

static PyObject *
plan_dump(PlanObject *p, PyObject *unused)
{
    (void)unused;
    return printed(hop_plan_dump(p->plan));
}

static PyObject *
plan_notes(PlanObject *p, void *closure)
{
    (void)closure;
    size_t n = hop_plan_nnotes(p->plan);
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; t && i < n; i++) {
        PyObject *s = PyUnicode_FromString(hop_plan_note(p->plan, i));
        if (s == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)i, s);
    }
    return t;
}

static PyObject *
plan_input_names(PlanObject *p, void *closure)
{
    (void)closure;
    PyObject *list = PyList_New((Py_ssize_t)p->ninputs);
    for (size_t i = 0; list && i < p->ninputs; i++) {
        PyObject *s = PyUnicode_FromString(hop_plan_input_name(p->plan, i));
        if (s == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, s);
    }
    return list;
}

static PyObject *numpy_asarray_fn; /* numpy.asarray, imported on first use */

/* run_arrays(arrays, captures, scalars): the compiled call of NumPy code
 * (python/hop/_trace.py, _Runner.call) in one step: each array wrapped as
 * hop.asarray does (zero-copy where it can), the captured tensors after
 * them, each result an ndarray over its memory, or its 0-d value as a NumPy
 * scalar where scalars[i] is true.  A tuple of results, or the one.  With
 * NumPy's C API (ndarray.c) the arrays it would share are borrowed and the
 * results made without the buffer protocol; the same arrays either way. */
static PyObject *
run_arrays(PlanObject *p, PyObject *const *arrays, Py_ssize_t na, PyObject *caps, PyObject *scalars)
{
    Py_ssize_t nc = PyTuple_GET_SIZE(caps);
    if ((size_t)(na + nc) != p->ninputs)
        return PyErr_Format(PyExc_TypeError, "the plan takes %zu tensors, got %zd", p->ninputs,
                            na + nc);
    if ((size_t)PyTuple_GET_SIZE(scalars) != p->noutputs)
        return PyErr_Format(PyExc_TypeError, "run_arrays: %zu results, %zd scalar flags",
                            p->noutputs, PyTuple_GET_SIZE(scalars));
    bool np = hop_py__np_ready();
    if (!np && numpy_asarray_fn == NULL) {
        PyObject *mod = PyImport_ImportModule("numpy");
        if (mod == NULL)
            return NULL;
        numpy_asarray_fn = PyObject_GetAttrString(mod, "asarray");
        Py_DECREF(mod);
        if (numpy_asarray_fn == NULL)
            return NULL;
    }
    /* in[i] is borrowed from wrapped[i] (a Tensor hop.asarray made) or,
     * where that is NULL and i < na, a reference of ours. */
    enum { SMALL = 16 };
    hop_tensor *small_in[SMALL], **in = small_in, *small_out[SMALL], **out = small_out;
    PyObject *small_wrapped[SMALL], **wrapped = small_wrapped;
    PyObject *res = NULL;
    Py_ssize_t nin = 0; /* in[0..nin) are set */
    if (p->ninputs > SMALL) {
        in = PyMem_Calloc(p->ninputs, sizeof *in);
        wrapped = PyMem_Calloc(p->ninputs, sizeof *wrapped);
    }
    if (p->noutputs > SMALL)
        out = PyMem_Calloc(p->noutputs, sizeof *out);
    if (in == NULL || wrapped == NULL || out == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (; nin < na + nc; nin++) {
        PyObject *o = nin < na ? arrays[nin] : PyTuple_GET_ITEM(caps, nin - na);
        wrapped[nin] = NULL;
        in[nin] = NULL;
        if (nin < na) {
            if (np && (in[nin] = hop_py__np_borrow(o)) != NULL)
                continue;
            if ((o = wrapped[nin] = hop_py__asarray(o, NULL, "asarray")) == NULL)
                goto done;
        }
        if ((in[nin] = plan_input(p, nin, o)) == NULL) {
            nin++; /* wrapped[nin] is dropped below */
            goto done;
        }
    }
    if (plan_exec(p, in, (size_t)nin, out) < 0)
        goto done;
    PyObject *tup = PyTuple_New((Py_ssize_t)p->noutputs);
    for (size_t i = 0; i < p->noutputs; i++) {
        if (tup == NULL) {
            hop_tensor_release(out[i]);
            continue;
        }
        PyObject *t = hop_py_tensor_new(out[i]), *a = NULL;
        if (t != NULL) {
            a = np ? hop_py__np_from_tensor(t) : PyObject_CallOneArg(numpy_asarray_fn, t);
            Py_DECREF(t);
        }
        int scalar = a != NULL ? PyObject_IsTrue(PyTuple_GET_ITEM(scalars, i)) : 0;
        if (scalar < 0) {
            Py_CLEAR(a);
        } else if (scalar && np) {
            a = hop_py__np_scalar(a);
        } else if (scalar) {
            PyObject *empty = PyTuple_New(0);
            Py_SETREF(a, empty == NULL ? NULL : PyObject_GetItem(a, empty));
            Py_XDECREF(empty);
        }
        if (a == NULL)
            Py_CLEAR(tup);
        else
            PyTuple_SET_ITEM(tup, (Py_ssize_t)i, a);
    }
    if (tup != NULL && p->noutputs == 1) {
        res = Py_NewRef(PyTuple_GET_ITEM(tup, 0));
        Py_DECREF(tup);
    } else {
        res = tup;
    }
done:
    for (Py_ssize_t i = 0; i < nin && i < na; i++) {
        if (wrapped[i] != NULL)
            Py_DECREF(wrapped[i]);
        else if (in[i] != NULL)
            hop_tensor_release(in[i]);
    }
    if (in != small_in)
        PyMem_Free(in);
    if (wrapped != small_wrapped)
        PyMem_Free(wrapped);
    if (out != small_out)
        PyMem_Free(out);
    return res;
}

static PyObject *
plan_run_arrays(PlanObject *p, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1]) || !PyTuple_Check(args[2]))
        return PyErr_Format(PyExc_TypeError, "run_arrays(arrays, captures, scalars) takes "
                                             "three tuples");
    return run_arrays(p, &PyTuple_GET_ITEM(args[0], 0), PyTuple_GET_SIZE(args[0]), args[1],
                      args[2]);
}

/* ------------------------------------------- the bound call of NumPy code */

/*
 * Plan.bind_arrays(nargs, captures, scalars) -> a callable f: f(args), for
 * a tuple of exactly nargs ndarrays (exact type), is run_arrays(args,
 * captures, scalars); for any other tuple it is NotImplemented, and the
 * caller takes its general path.  hop.compile's call of NumPy code whose
 * environment has no guards to check (python/hop/_compile.py): the type
 * checks in C, no Python frame between the call and the plan.
 * Plan.bind_tensors(nargs, captures, single) is the same for a tuple of
 * exactly nargs hop.Tensors: the one result with single, else the tuple of
 * results (a proxy among them is the plan's TypeError, as Plan.run's).
 */
typedef struct ArrayCallObject {
    PyObject_HEAD PlanObject *plan;
    Py_ssize_t nargs;
    PyObject *caps, *scalars; /* tuples; scalars NULL: bound to hop.Tensors */
    int single;               /* bind_tensors: return the one result itself */
    vectorcallfunc vectorcall;
} ArrayCallObject;

static PyObject *numpy_ndarray_type; /* numpy.ndarray, imported on first use */

static void
array_call_dealloc(ArrayCallObject *c)
{
    Py_XDECREF(c->plan);
    Py_XDECREF(c->caps);
    Py_XDECREF(c->scalars);
    PyObject_Free(c);
}

static PyObject *
array_call_vectorcall(ArrayCallObject *c, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL || !PyTuple_Check(args[0]))
        return PyErr_Format(PyExc_TypeError, "the bound call takes one tuple of arguments");
    PyObject *tup = args[0];
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    if (n != c->nargs)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *type = c->scalars != NULL ? numpy_ndarray_type : (PyObject *)&hop_py_TensorType;
    for (Py_ssize_t i = 0; i < n; i++)
        if ((PyObject *)Py_TYPE(PyTuple_GET_ITEM(tup, i)) != type)
            Py_RETURN_NOTIMPLEMENTED;
    if (c->scalars == NULL)
        return run_tensors(c->plan, &PyTuple_GET_ITEM(tup, 0), n, c->caps,
                           c->single ? RUN_SINGLE : RUN_TUPLE);
    return run_arrays(c->plan, &PyTuple_GET_ITEM(tup, 0), n, c->caps, c->scalars);
}

static PyTypeObject ArrayCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop._C._ArrayCall",
    .tp_basicsize = sizeof(ArrayCallObject),
    .tp_dealloc = (destructor)array_call_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(ArrayCallObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_doc = "Plan.bind_arrays's callable: f(args) runs the plan on a tuple of ndarrays, "
              "else is NotImplemented.",
};

static PyObject *
plan_bind_arrays(PlanObject *p, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t n;
    if (nargs != 3 || (n = PyLong_AsSsize_t(args[0])) < 0 || !PyTuple_Check(args[1]) ||
        !PyTuple_Check(args[2])) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError) ||
            PyErr_ExceptionMatches(PyExc_OverflowError) ||
            PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "bind_arrays(nargs, captures, scalars) takes an int "
                                             ">= 0 and two tuples");
        }
        return NULL;
    }
    if ((size_t)(n + PyTuple_GET_SIZE(args[1])) != p->ninputs ||
        (size_t)PyTuple_GET_SIZE(args[2]) != p->noutputs)
        return PyErr_Format(PyExc_TypeError,
                            "bind_arrays: the plan takes %zu tensors and gives %zu results, "
                            "not %zd + %zd and %zd",
                            p->ninputs, p->noutputs, n, PyTuple_GET_SIZE(args[1]),
                            PyTuple_GET_SIZE(args[2]));
    if (numpy_ndarray_type == NULL) {
        PyObject *mod = PyImport_ImportModule("numpy");
        if (mod == NULL)
            return NULL;
        numpy_ndarray_type = PyObject_GetAttrString(mod, "ndarray");
        Py_DECREF(mod);
        if (numpy_ndarray_type == NULL)
            return NULL;
    }
    ArrayCallObject *c = PyObject_New(ArrayCallObject, &ArrayCallType);
    if (c == NULL)
        return NULL;
    c->plan = (PlanObject *)Py_NewRef(p);
    c->nargs = n;
    c->caps = Py_NewRef(args[1]);
    c->scalars = Py_NewRef(args[2]);
    c->single = 0;
    c->vectorcall = (vectorcallfunc)array_call_vectorcall;
    return (PyObject *)c;
}

static PyObject *
plan_bind_tensors(PlanObject *p, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t n;
    int single;
    if (nargs != 3 || (n = PyLong_AsSsize_t(args[0])) < 0 || !PyTuple_Check(args[1]) ||
        (single = PyObject_IsTrue(args[2])) < 0) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError) ||
            PyErr_ExceptionMatches(PyExc_OverflowError) ||
            PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "bind_tensors(nargs, captures, single) takes an int "
                                             ">= 0, a tuple and a bool");
        }
        return NULL;
    }
    if ((size_t)(n + PyTuple_GET_SIZE(args[1])) != p->ninputs || (single && p->noutputs != 1))
        return PyErr_Format(PyExc_TypeError,
                            "bind_tensors: the plan takes %zu tensors and gives %zu results, "
                            "not %zd + %zd%s",
                            p->ninputs, p->noutputs, n, PyTuple_GET_SIZE(args[1]),
                            single ? " and one" : "");
    ArrayCallObject *c = PyObject_New(ArrayCallObject, &ArrayCallType);
    if (c == NULL)
        return NULL;
    c->plan = (PlanObject *)Py_NewRef(p);
    c->nargs = n;
    c->caps = Py_NewRef(args[1]);
    c->scalars = NULL;
    c->single = single;
    c->vectorcall = (vectorcallfunc)array_call_vectorcall;
    return (PyObject *)c;
}

/* ----------------------------------------- hop.compile's call, in C */

/*
 * _C._CompiledCall: the base of hop.compile's CompiledFunction
 * (python/hop/_compile.py).  Its call: without keyword arguments, the
 * newest plan's bound call (_fast, Plan.bind_arrays/bind_tensors) when it
 * takes the arguments, else self._call_args(args); with keyword arguments
 * self._call_kw(args, kwargs).  So the common call has no Python frame
 * between it and the plan, and keyword arguments cost nothing when absent.
 * A bound call whose guard fails goes to _call_args (which tries the other
 * plans or retraces), as does one that fails while this thread traces
 * (traced values: the function is called inside another trace; it runs as
 * part of that trace).
 */
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

static PyMethodDef plan_methods[] = {
    {"run", (PyCFunction)plan_run, METH_O, "run(tensors) -> list of result tensors"},
    {"run_arrays", (PyCFunction)(void (*)(void))plan_run_arrays, METH_FASTCALL,
     "run_arrays(arrays, captures, scalars) -> ndarray results (the compiled NumPy call)"},
    {"bind_tensors", (PyCFunction)(void (*)(void))plan_bind_tensors, METH_FASTCALL,
     "bind_tensors(nargs, captures, single) -> f: f(args) runs the plan on a tuple of nargs "
     "hop.Tensors and the captures (the one result with single, else a tuple), and is "
     "NotImplemented for any other tuple"},
    {"bind_arrays", (PyCFunction)(void (*)(void))plan_bind_arrays, METH_FASTCALL,
     "bind_arrays(nargs, captures, scalars) -> f: f(args) is run_arrays(args, captures, "
     "scalars) for a tuple of nargs ndarrays, else NotImplemented"},
    {"dump", (PyCFunction)plan_dump, METH_NOARGS, "The program, like SQLite's EXPLAIN."},
    {NULL, NULL, 0, NULL},
};

static PyObject *
plan_noutputs(PlanObject *p, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(p->noutputs);
}

static PyGetSetDef plan_getset[] = {
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

static PyObject *
trace_lower(TraceObject *tr, PyObject *unused)
{
    (void)unused;
    if (not_elsewhere(tr, "lower") < 0)
        return NULL;
    hop_plan *plan = hop_lower(tr->og, NULL);
    if (plan == NULL)
        return hop_py_raise();
    PlanObject *p = PyObject_New(PlanObject, &PlanType);
    if (p == NULL) {
        hop_plan_free(plan);
        return NULL;
    }
    p->plan = plan;
    p->ninputs = hop_plan_ninputs(plan);
    p->noutputs = hop_plan_noutputs(plan);
    return (PyObject *)p;
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

static PyMethodDef trace_methods[] = {
    {"start", (PyCFunction)trace_start, METH_NOARGS, "Makes this trace the active one."},
    {"stop", (PyCFunction)trace_stop, METH_NOARGS, "Ends tracing."},
    {"add_input", (PyCFunction)trace_add_input, METH_VARARGS,
     "add_input(name, example, dynamic) -> proxy: the next argument of the traced function."},
    {"name_hint", (PyCFunction)trace_name_hint, METH_VARARGS,
     "name_hint(obj, name): the name a captured tensor gets."},
    {"output", (PyCFunction)trace_output, METH_O, "output(leaves): the traced function's result."},
    {"depth", (PyCFunction)trace_depth, METH_NOARGS, "Tracers on the stack (1: the root)."},
    {"lower", (PyCFunction)trace_lower, METH_NOARGS, "lower() -> Plan: compiles the trace."},
    {"guards", (PyCFunction)trace_guards, METH_NOARGS, "The ShapeEnv's guards, as text."},
    {"inputs", (PyCFunction)trace_inputs, METH_NOARGS, "The root inputs and their sources."},
    {"describe", (PyCFunction)trace_describe, METH_O, "describe(path) -> dict for a graph."},
    {"_memo", (PyCFunction)trace_memo, METH_VARARGS,
     "_memo(what, ...): the op memo of path specialisation (hop.compile)."},
    {"_trap_guard", (PyCFunction)trace_trap_guard, METH_VARARGS,
     "_trap_guard(u, v): the guard u == v, in the current cond branch (hop.compile)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef trace_getset[] = {
    {"captures", (getter)trace_get_captures, NULL, "captured concrete tensors, in order", NULL},
    {"active", (getter)trace_get_active, NULL, "whether tracing is in progress", NULL},
    {"scratch", (getter)trace_get_scratch, NULL, "a dict for the Python layer", NULL},
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
    if (current != NULL)
        return Py_NewRef((PyObject *)current);
    Py_RETURN_NONE;
}

static PyObject *
py_is_proxy(PyObject *self, PyObject *o)
{
    (void)self;
    return PyBool_FromLong(PyObject_TypeCheck(o, &hop_py_TensorType) && HOP_PY_IS_PROXY(o));
}

/* The tracer stack depth of this thread's active trace (1 at its root), 0
 * when none is active: tests check that a failed HOP call leaves it as it
 * was. */
static PyObject *
py_trace_depth(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromSize_t(current != NULL ? hop_output_graph_depth(current->og) : 0);
}

/* The frame translator's guard against user code CPython runs for it (hop/_frame.py): a C
 * profile function (call events only: a trace function would also run the line machinery
 * on every instruction of every frame), so that the frames of hop's own code cost a dict
 * lookup, not a Python call.  obj is (check, allowed): a frame whose code is a key of allowed runs; for any other
 * the call check(frame) decides (it may add the code to allowed, or raise: the frame then
 * raises that error before its first line). */
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
    {"_trace_depth", py_trace_depth, METH_NOARGS,
     "The tracer stack depth of the active trace, 0 when none is active."},
    {"_is_proxy", py_is_proxy, METH_O, "True for a traced value (a proxy Tensor)."},
    {"_sym_truth", py_sym_truth, METH_O, "_sym_truth(s): the SymBool s != 0, undecided."},
    {NULL, NULL, 0, NULL},
};

int
hop_py_trace_init(PyObject *module)
{
    if (PyType_Ready(&TraceType) < 0 || PyType_Ready(&hop_py_SymIntType) < 0 ||
        PyType_Ready(&PlanType) < 0 || PyType_Ready(&ArrayCallType) < 0 ||
        PyType_Ready(&CompiledCallType) < 0)
        return -1;
    if ((str_call_args = PyUnicode_InternFromString("_call_args")) == NULL ||
        (str_call_kw = PyUnicode_InternFromString("_call_kw")) == NULL)
        return -1;
    if (PyModule_AddObjectRef(module, "Trace", (PyObject *)&TraceType) < 0 ||
        PyModule_AddObjectRef(module, "SymInt", (PyObject *)&hop_py_SymIntType) < 0 ||
        PyModule_AddObjectRef(module, "_CompiledCall", (PyObject *)&CompiledCallType) < 0)
        return -1;
    return PyModule_AddFunctions(module, trace_functions);
}
