/*
 * python/_C/tensor.c - hop.Tensor: the Python object over a runtime tensor
 * (or, for a proxy, over a traced node), its number, sequence, mapping and
 * buffer protocols, Python conversions, getters, indexing, repr, and the
 * eager dispatch of every op (hop_py_run_op).
 *
 * Every op is one call of hop_py_run_op with operands in the op table's
 * order (hop/ops.h), built on the stack: concrete operands run at once
 * through hop_eager, a proxy or a SymInt among them sends the call to the
 * tracer (trace.c).  The binary operators of two concrete tensors skip even
 * that and call hop_eager directly: `a + b` is one type check per operand,
 * one test that no thread traces, one hop_eager and one object taken from a
 * free list.
 *
 * While this thread traces, every op is recorded, concrete operands included
 * (they become root inputs): an op computed at trace time would be a constant
 * of the graph, blind to a later change of the tensor's memory (NumPy shares
 * it).  For the same reason a concrete tensor's value cannot become a Python
 * number while tracing (float(), int(), bool(), tolist() raise TraceError;
 * item() gives a SymInt, as on a traced value).
 *
 * A Tensor exports the buffer protocol (strided, writable), so np.asarray(t)
 * shares its memory; create.c does the other direction.
 */
#include "tensor_impl.h"

#include <math.h>
#include <string.h>

#define tname hop_py__tname

/* Operands of this many elements or more run without the GIL. */
#define NOGIL_NUMEL (1 << 15)

/* ------------------------------------------------------------- helpers */

/* Every proxy has a node; a Tensor with neither data nor node would be a
 * bug elsewhere, reported rather than crashed on. */
static int
check_proxy_alive(TensorObject *p)
{
    if (p->node == NULL) {
        PyErr_SetString(hop_py_TraceError, "a Tensor with neither data nor a traced value");
        return -1;
    }
    return 0;
}

/* The metadata of a proxy's node (NULL with TraceError when it has none). */
static const hop_meta *
proxy_meta(TensorObject *p)
{
    if (check_proxy_alive(p) < 0)
        return NULL;
    if (p->node->meta->kind != HOP_VALUE_TENSOR) {
        PyErr_Format(hop_py_TraceError, "traced value %s is not a tensor", p->node->name);
        return NULL;
    }
    return &p->node->meta->meta;
}

/* `f32[2, 3]` for a concrete tensor or a proxy. */
static const char *
tensor_text(TensorObject *o, char *buf, size_t cap)
{
    if (o->t != NULL)
        hop_tensor_print_meta(o->t, buf, cap);
    else if (o->node != NULL && o->node->meta->kind == HOP_VALUE_TENSOR)
        hop_meta_print(&o->node->meta->meta, buf, cap);
    else
        snprintf(buf, cap, "<traced value>");
    return buf;
}

int
hop_py__tensor_dtype(TensorObject *o, hop_dtype *d)
{
    if (o->t != NULL) {
        *d = o->t->dtype;
        return 0;
    }
    const hop_meta *m = proxy_meta(o);
    if (m == NULL)
        return -1;
    *d = m->dtype;
    return 0;
}

static int
tensor_rank(TensorObject *o)
{
    if (o->t != NULL)
        return o->t->rank;
    const hop_meta *m = proxy_meta(o);
    return m == NULL ? -1 : m->rank;
}

/* Raises the error of Python needing a traced value (a conversion, its
 * text): hop._breaks.conversion decides (where hop.compile's compiled part
 * ends, a break; elsewhere type(message)); without the hop package (the
 * extension alone), type(message).  Returns NULL. */
PyObject *
hop_py__conversion(PyObject *type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (msg == NULL)
        return NULL;
    PyObject *mod = PyImport_ImportModule("hop._breaks");
    if (mod == NULL) {
        PyErr_Clear();
        PyErr_SetObject(type, msg);
        Py_DECREF(msg);
        return NULL;
    }
    PyObject *r = PyObject_CallMethod(mod, "conversion", "OO", type, msg);
    Py_DECREF(mod);
    if (r != NULL) { /* it always raises; never let a value through */
        Py_DECREF(r);
        PyErr_SetObject(type, msg);
    }
    Py_DECREF(msg);
    return NULL;
}

PyObject *
hop_py__user_text(const char *helper, PyObject *obj, PyObject *text)
{
    if (text == NULL)
        return NULL;
    PyObject *mod = PyImport_ImportModule("hop._breaks");
    if (mod == NULL) {
        PyErr_Clear();
        return text;
    }
    PyObject *r = PyObject_CallMethod(mod, helper, "OO", obj, text);
    Py_DECREF(mod);
    Py_DECREF(text);
    return r;
}

/* Raises TraceError "cannot convert a traced value to <what> during tracing"
 * (a break in hop.compile). */
static PyObject *
traced_conversion(const char *what)
{
    return hop_py__conversion(hop_py_TraceError,
                              "cannot convert a traced value to %s during tracing", what);
}

/* A concrete tensor's value read into a Python value while this thread traces
 * would be a constant of the graph, stale once the tensor's memory changes:
 * TraceError naming the conversion (a break in hop.compile).  0 when the
 * conversion may go on. */
static int
concrete_conversion(TensorObject *self, const char *what)
{
    if (!hop_py_tracing_active())
        return 0;
    char buf[160];
    hop_py__conversion(hop_py_TraceError,
                       "cannot convert the concrete tensor %s to %s during tracing: the graph "
                       "would keep its value at trace time; compute with it as a tensor (its ops "
                       "are recorded) or pass the number as an argument",
                       tensor_text(self, buf, sizeof buf), what);
    return -1;
}

/* ------------------------------------------------------ the Tensor object */

/*
 * hop.Tensor is not a GC type: a concrete tensor holds no Python object that
 * can reach it back (base is the exporter of a buffer it wraps), and a
 * proxy's owner, a Trace, is not GC either.
 *
 * Freed Tensors are kept for reuse: `a + b` then costs no allocation of the
 * Python object, a measurable part of an eager op on small tensors.  Only
 * touched with the GIL held.
 */
#define FREELIST_MAX 64
static TensorObject *freelist[FREELIST_MAX];
static int nfree;

/* A new Tensor object with every field empty, from the free list when it
 * can: the one place a Tensor, concrete or proxy, is made.  NULL with
 * MemoryError. */
static TensorObject *
tensor_alloc(void)
{
    TensorObject *o;
    if (nfree > 0) {
        o = freelist[--nfree];
        PyObject_Init((PyObject *)o, &hop_py_TensorType);
    } else if ((o = PyObject_New(TensorObject, &hop_py_TensorType)) == NULL) {
        return NULL;
    }
    o->t = NULL;
    o->node = NULL;
    o->owner = NULL;
    o->base = NULL;
    o->weakreflist = NULL;
    o->viewof = NULL;
    o->nviews = 0;
    return o;
}

PyObject *
hop_py_tensor_new(hop_tensor *t)
{
    if (t == NULL)
        return hop_py_raise();
    TensorObject *o = tensor_alloc();
    if (o == NULL) {
        hop_tensor_release(t);
        return NULL;
    }
    o->t = t;
    return (PyObject *)o;
}

PyObject *
hop_py_proxy_new(PyObject *owner, hop_node *node)
{
    TensorObject *o = tensor_alloc();
    if (o == NULL)
        return NULL;
    o->node = node;
    o->owner = Py_NewRef(owner);
    return (PyObject *)o;
}

static void
tensor_dealloc(TensorObject *self)
{
    if (self->weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    hop_tensor_release(self->t);
    self->t = NULL;
    Py_CLEAR(self->owner);
    Py_CLEAR(self->base);
    if (self->viewof != NULL)
        HOP_PY_TENSOR(self->viewof)->nviews--;
    Py_CLEAR(self->viewof);
    if (nfree < FREELIST_MAX)
        freelist[nfree++] = self;
    else
        PyObject_Free(self);
}

/* ------------------------------------------------------------- dispatch */

static bool
opnds_need_trace(const hop_py_opnd *args, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        const hop_py_opnd *a = &args[i];
        if (a->kind == HOP_PY_SYM || a->kind == HOP_PY_SYMFLOAT ||
            (a->kind == HOP_PY_TENSOR && a->u.t->t == NULL))
            return true;
        if (a->kind == HOP_PY_LIST && opnds_need_trace(a->u.list.items, a->u.list.n))
            return true;
    }
    return false;
}

/* Worth releasing the GIL for: non-view ops over many elements. */
static bool
big_work(hop_op op, const hop_rt_arg *args, size_t nargs)
{
    int64_t total = 0;
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind == HOP_OPND_TENSOR) {
            total += hop_tensor_numel(args[i].u.tensor);
        } else if (args[i].kind == HOP_OPND_LIST) {
            for (size_t k = 0; k < args[i].u.list.n; k++) {
                if (args[i].u.list.items[k].kind == HOP_OPND_TENSOR)
                    total += hop_tensor_numel(args[i].u.list.items[k].u.tensor);
            }
        }
    }
    return total >= NOGIL_NUMEL && hop_op_get(op)->family != HOP_KF_VIEW;
}

/* Runs op eagerly on runtime operands: a Tensor or an int. */
static PyObject *
run_eager(hop_op op, const hop_rt_arg *args, size_t nargs)
{
    hop_rt_value out;
    hop_status st;
    if (big_work(op, args, nargs)) {
        Py_BEGIN_ALLOW_THREADS st = hop_eager(op, args, nargs, &out);
        Py_END_ALLOW_THREADS
    } else {
        st = hop_eager(op, args, nargs, &out);
    }
    if (st == HOP_NOMEM && strncmp(hop_error_message(), "out of memory", 13) == 0) {
        /* The allocator's message does not say who asked. */
        PyErr_Format(PyExc_MemoryError, "%s: %s", hop_op_get(op)->name, hop_error_message());
        return NULL;
    }
    if (st != HOP_OK)
        return hop_py_raise();
    if (out.kind == HOP_VALUE_TENSOR)
        return hop_py_tensor_new(out.tensor);
    return PyLong_FromLongLong(out.i);
}

/* The runtime operand of a concrete Python operand (lists excluded). */
static void
rt_scalar(const hop_py_opnd *a, hop_rt_arg *r)
{
    switch (a->kind) {
    case HOP_PY_TENSOR:
        *r = hop_rt_tensor(a->u.t->t);
        break;
    case HOP_PY_INT:
        *r = hop_rt_int(a->u.i);
        break;
    case HOP_PY_FLOAT:
        *r = hop_rt_float(a->u.f);
        break;
    case HOP_PY_BOOL:
        *r = hop_rt_bool(a->u.b);
        break;
    case HOP_PY_DTYPE:
        *r = hop_rt_dtype(a->u.d);
        break;
    case HOP_PY_NONE:
    case HOP_PY_LIST:
    case HOP_PY_SYM:
    case HOP_PY_SYMFLOAT:
        *r = hop_rt_none();
        break;
    }
}

#define RUN_MAX_ARGS 8
#define RUN_STACK_ITEMS 32

/*
 * op with SymFloat operands: each is a weak Python float beside the tensors,
 * as eagerly, so its float64 tensor is first converted to the dtype a float
 * takes there: the tensors' promoted dtype when it is a float one, else
 * float32.  A 0-d tensor of that dtype then promotes with the tensors as the
 * float would, and holds the value eager rounds the float to.
 */
static PyObject *
run_with_symfloats(hop_op op, const hop_py_opnd *args, size_t nargs)
{
    hop_py_opnd local[RUN_MAX_ARGS];
    PyObject *conv[RUN_MAX_ARGS] = {NULL};
    const char *name = hop_op_get(op) != NULL ? hop_op_get(op)->name : "?";
    if (nargs > RUN_MAX_ARGS) {
        PyErr_Format(PyExc_SystemError, "hop_py_run_op: %zu operands for %s", nargs, name);
        return NULL;
    }
    bool any = false;
    hop_dtype p = HOP_BOOL;
    for (size_t i = 0; i < nargs; i++) {
        hop_dtype d;
        if (args[i].kind != HOP_PY_TENSOR)
            continue;
        if (hop_py__tensor_dtype(args[i].u.t, &d) < 0)
            return NULL;
        p = any ? hop_dtype_promote(p, d) : d;
        any = true;
    }
    if (!any) {
        hop_error(HOP_INVALID,
                  "%s: expected at least one tensor operand, got a SymFloat and no tensor (a "
                  "SymFloat is a Python float eagerly)",
                  name);
        return hop_py_raise();
    }
    hop_dtype weak = hop_dtype_is_float(p) ? p : HOP_F32;
    PyObject *res = NULL;
    for (size_t i = 0; i < nargs; i++) {
        local[i] = args[i];
        if (args[i].kind != HOP_PY_SYMFLOAT)
            continue;
        if ((conv[i] = hop_py__to((PyObject *)args[i].u.t, weak)) == NULL)
            goto done;
        hop_py__set_tensor_opnd(&local[i], conv[i]);
    }
    res = hop_py_run_op(op, local, nargs);
done:
    for (size_t i = 0; i < nargs; i++)
        Py_XDECREF(conv[i]);
    return res;
}

PyObject *
hop_py_run_op(hop_op op, const hop_py_opnd *args, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind == HOP_PY_SYMFLOAT)
            return run_with_symfloats(op, args, nargs);
    }
    /* While a trace is active every op is recorded: concrete operands are
     * captured as root inputs (a closure or a global reached by the traced
     * function), not computed once at trace time. */
    if (opnds_need_trace(args, nargs) || hop_py_tracing_active())
        return hop_py_trace_op(op, args, nargs);
    if (nargs > RUN_MAX_ARGS) {
        PyErr_Format(PyExc_SystemError, "hop_py_run_op: %zu operands for %s", nargs,
                     hop_op_get(op) != NULL ? hop_op_get(op)->name : "?");
        return NULL;
    }
    hop_rt_arg rt[RUN_MAX_ARGS] = {{0}}, stack_items[RUN_STACK_ITEMS], *items = stack_items;
    size_t nitems = 0;
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind == HOP_PY_LIST)
            nitems += args[i].u.list.n;
    }
    if (nitems > RUN_STACK_ITEMS && (items = PyMem_Malloc(nitems * sizeof *items)) == NULL)
        return PyErr_NoMemory();
    size_t used = 0;
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind == HOP_PY_LIST) {
            hop_rt_arg *first = items + used;
            for (size_t k = 0; k < args[i].u.list.n; k++)
                rt_scalar(&args[i].u.list.items[k], &items[used++]);
            rt[i] = hop_rt_list(first, args[i].u.list.n);
        } else {
            rt_scalar(&args[i], &rt[i]);
        }
    }
    PyObject *res = run_eager(op, rt, nargs);
    if (items != stack_items)
        PyMem_Free(items);
    return res;
}

/* Runs op on opnds and drops the temporaries value_opnd made. */
PyObject *
hop_py__run_and_drop(hop_op op, const hop_py_opnd *args, size_t nargs, PyObject **tmps,
                     size_t ntmps)
{
    PyObject *res = hop_py_run_op(op, args, nargs);
    for (size_t i = 0; i < ntmps; i++)
        Py_XDECREF(tmps[i]);
    return res;
}

/* One-tensor ops: neg, sin, clone, ... */
PyObject *
hop_py__unary(hop_op op, PyObject *x)
{
    if (HOP_PY_TENSOR(x)->t != NULL && !hop_py_tracing_active()) {
        hop_rt_arg a = hop_rt_tensor(HOP_PY_TENSOR(x)->t);
        return run_eager(op, &a, 1);
    }
    hop_py_opnd a;
    hop_py__set_tensor_opnd(&a, x);
    return hop_py_run_op(op, &a, 1);
}

/*
 * Two-value ops from the number protocol: either side may be the Tensor.
 * NotImplemented when the other side is no operand (Python then raises its
 * "unsupported operand type(s)" TypeError).
 */
static PyObject *
binary(hop_op op, PyObject *a, PyObject *b)
{
    if (HOP_PY_IS_TENSOR(a) && HOP_PY_IS_TENSOR(b) && HOP_PY_TENSOR(a)->t != NULL &&
        HOP_PY_TENSOR(b)->t != NULL && !hop_py_tracing_active()) {
        hop_rt_arg args[2] = {hop_rt_tensor(HOP_PY_TENSOR(a)->t),
                              hop_rt_tensor(HOP_PY_TENSOR(b)->t)};
        return run_eager(op, args, 2);
    }
    hop_py_opnd args[2];
    PyObject *tmp[2] = {NULL, NULL};
    const char *fname = hop_op_get(op)->name;
    int ra = hop_py__value_opnd(fname, a, &args[0], &tmp[0]);
    int rb = ra != 0 ? ra : hop_py__value_opnd(fname, b, &args[1], &tmp[1]);
    if (ra != 0 || rb != 0) {
        Py_XDECREF(tmp[0]);
        Py_XDECREF(tmp[1]);
        if (ra < 0 || rb < 0)
            return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    return hop_py__run_and_drop(op, args, 2, tmp, 2);
}

/* ------------------------------------------------------ number protocol */

#define HOP_PY_NB_BINARY(X)                                                                        \
    X(add, add)                                                                                    \
    X(subtract, sub)                                                                               \
    X(multiply, mul)                                                                               \
    X(true_divide, div)                                                                            \
    X(matrix_multiply, matmul)

#define HOP_PY_NB_FN(slot, op)                                                                     \
    static PyObject *nb_##slot(PyObject *a, PyObject *b)                                           \
    {                                                                                              \
        return binary(HOP_OP_##op, a, b);                                                          \
    }
HOP_PY_NB_BINARY(HOP_PY_NB_FN)
#undef HOP_PY_NB_FN

static PyObject *
nb_power(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    return binary(HOP_OP_pow, a, b);
}

static PyObject *
nb_negative(PyObject *x)
{
    return hop_py__unary(HOP_OP_neg, x);
}

static PyObject *
nb_absolute(PyObject *x)
{
    return hop_py__unary(HOP_OP_abs, x);
}

static PyObject *
nb_positive(PyObject *x)
{
    return Py_NewRef(x);
}

/* Text of an operand for messages: `i64[3]` for a tensor, `SymInt(s0)` for a
 * SymInt (its expression: asking its repr in the user's frame would
 * specialise it), repr otherwise. */
static PyObject *
operand_text(PyObject *o)
{
    char buf[160];
    if (HOP_PY_IS_TENSOR(o))
        return PyUnicode_FromString(tensor_text(HOP_PY_TENSOR(o), buf, sizeof buf));
    if (HOP_PY_IS_SYM(o)) {
        PyObject *e = PyObject_GetAttrString(o, "expr");
        if (e == NULL)
            return NULL;
        PyObject *r = PyUnicode_FromFormat("SymInt(%U)", e);
        Py_DECREF(e);
        return r;
    }
    return PyObject_Repr(o);
}

/*
 * & | ^ ~ are the logical ops of bool tensors (PyTorch's bitwise ops on
 * bools); for other dtypes, which would need bitwise ops hop does not have,
 * they are DTypeError rather than a silently different result.
 */
static PyObject *
logical(const char *sym, const char *what, hop_op op, PyObject *a, PyObject *b)
{
    hop_py_opnd args[2];
    PyObject *tmp[2] = {NULL, NULL};
    PyObject *objs[2] = {a, b};
    size_t n = b == NULL ? 1 : 2;
    PyObject *res = NULL;
    for (size_t i = 0; i < n; i++) {
        int r = hop_py__value_opnd(sym, objs[i], &args[i], &tmp[i]);
        if (r < 0)
            goto done;
        if (r == 1) {
            res = Py_NewRef(Py_NotImplemented);
            goto done;
        }
    }
    for (size_t i = 0; i < n; i++) {
        hop_dtype d = HOP_BOOL;
        if (args[i].kind == HOP_PY_TENSOR && hop_py__tensor_dtype(args[i].u.t, &d) < 0)
            goto done;
        if ((args[i].kind == HOP_PY_TENSOR && d != HOP_BOOL) || args[i].kind == HOP_PY_INT ||
            args[i].kind == HOP_PY_FLOAT || args[i].kind == HOP_PY_SYMFLOAT) {
            PyObject *ta = operand_text(a), *tb = b != NULL ? operand_text(b) : NULL;
            if (ta != NULL && (b == NULL || tb != NULL)) {
                if (b == NULL)
                    PyErr_Format(hop_py_DTypeError,
                                 "%s: only bool tensors are supported (%s is logical %s), got %U",
                                 sym, sym, what, ta);
                else
                    PyErr_Format(hop_py_DTypeError,
                                 "%s: only bool tensors and bools are supported (%s is logical "
                                 "%s), got %U and %U",
                                 sym, sym, what, ta, tb);
            }
            Py_XDECREF(ta);
            Py_XDECREF(tb);
            goto done;
        }
    }
    res = hop_py_run_op(op, args, n);
done:
    Py_XDECREF(tmp[0]);
    Py_XDECREF(tmp[1]);
    return res;
}

static PyObject *
nb_and(PyObject *a, PyObject *b)
{
    return logical("&", "and", HOP_OP_logical_and, a, b);
}

static PyObject *
nb_or(PyObject *a, PyObject *b)
{
    return logical("|", "or", HOP_OP_logical_or, a, b);
}

static PyObject *
nb_xor(PyObject *a, PyObject *b)
{
    return logical("^", "xor", HOP_OP_ne, a, b);
}

static PyObject *
nb_invert(PyObject *x)
{
    return logical("~", "not", HOP_OP_logical_not, x, NULL);
}

static PyObject *
tensor_richcompare(PyObject *a, PyObject *b, int cmp)
{
    static const hop_op ops[] = {
        [Py_LT] = HOP_OP_lt, [Py_LE] = HOP_OP_le, [Py_EQ] = HOP_OP_eq,
        [Py_NE] = HOP_OP_ne, [Py_GT] = HOP_OP_gt, [Py_GE] = HOP_OP_ge,
    };
    return binary(ops[cmp], a, b);
}

/* ---------------------------------------------------- Python conversions */

/* The one element of a concrete tensor with numel 1, or ShapeError. */
static int
single_element(TensorObject *self, const char *fname, const char *what, const void **p)
{
    hop_tensor *t = self->t;
    if (hop_tensor_numel(t) != 1) {
        char buf[160];
        PyErr_Format(hop_py_ShapeError,
                     "%s: only a tensor with one element can be converted to %s, got %s", fname,
                     what, tensor_text(self, buf, sizeof buf));
        return -1;
    }
    *p = t->data; /* every stride is irrelevant when all sizes are 1 */
    return 0;
}

static PyObject *
element_object(const void *p, hop_dtype d)
{
    switch (d) {
    case HOP_BOOL:
        return PyBool_FromLong(*(const uint8_t *)p != 0);
    case HOP_I8:
        return PyLong_FromLong(*(const int8_t *)p);
    case HOP_U8:
        return PyLong_FromLong(*(const uint8_t *)p);
    case HOP_U16:
        return PyLong_FromLong(*(const uint16_t *)p);
    case HOP_U32:
        return PyLong_FromUnsignedLong(*(const uint32_t *)p);
    case HOP_I16:
        return PyLong_FromLong(*(const int16_t *)p);
    case HOP_I32:
        return PyLong_FromLong(*(const int32_t *)p);
    case HOP_I64:
        return PyLong_FromLongLong(*(const int64_t *)p);
    case HOP_U64:
        return PyLong_FromUnsignedLongLong(*(const uint64_t *)p);
    case HOP_F16:
        return PyFloat_FromDouble(hop_f16_to_float(*(const uint16_t *)p));
    case HOP_F32:
        return PyFloat_FromDouble(*(const float *)p);
    case HOP_F64:
        return PyFloat_FromDouble(*(const double *)p);
    case HOP_C64:
        return PyComplex_FromDoubles(((const float *)p)[0], ((const float *)p)[1]);
    case HOP_C128:
        return PyComplex_FromDoubles(((const double *)p)[0], ((const double *)p)[1]);
    case HOP_DTYPE_COUNT:
        break;
    }
    PyErr_Format(PyExc_SystemError, "hop: invalid dtype %d", (int)d);
    return NULL;
}

double
hop_py__element_double(const void *p, hop_dtype d)
{
    switch (d) {
    case HOP_BOOL:
        return *(const uint8_t *)p != 0;
    case HOP_I8:
        return *(const int8_t *)p;
    case HOP_U8:
        return *(const uint8_t *)p;
    case HOP_U16:
        return *(const uint16_t *)p;
    case HOP_U32:
        return *(const uint32_t *)p;
    case HOP_I16:
        return *(const int16_t *)p;
    case HOP_I32:
        return *(const int32_t *)p;
    case HOP_I64:
        return (double)*(const int64_t *)p;
    case HOP_U64:
        return (double)*(const uint64_t *)p;
    case HOP_F16:
        return hop_f16_to_float(*(const uint16_t *)p);
    case HOP_F32:
        return *(const float *)p;
    case HOP_C64:
        return *(const float *)p; /* the real part */
    case HOP_F64:
    case HOP_C128:
    case HOP_DTYPE_COUNT:
        break;
    }
    return *(const double *)p;
}

/* The calling thread's hook for bool() of a tensor (hop.compile's path
 * specialisation, see hop/_paths.py), or NULL. */
static _Thread_local PyObject *bool_hook;

static int truth(PyObject *o);

static int
nb_bool(PyObject *o)
{
    if (bool_hook == NULL)
        return truth(o);
    PyObject *hook = Py_NewRef(bool_hook), *r = PyObject_CallOneArg(hook, o);
    Py_DECREF(hook);
    if (r == NULL)
        return -1;
    int v = PyObject_IsTrue(r);
    Py_DECREF(r);
    return v;
}

/* _C._set_bool_hook(fn or None) -> the previous hook: fn(tensor) decides
 * bool() of every tensor on this thread while it is set. */
PyObject *
hop_py__set_bool_hook(PyObject *mod, PyObject *fn)
{
    PyObject *old = bool_hook != NULL ? bool_hook : Py_NewRef(Py_None);
    bool_hook = fn == Py_None ? NULL : Py_NewRef(fn);
    return old;
}

/* _C._truth(t): bool() of a tensor without the hook. */
PyObject *
hop_py__truth(PyObject *mod, PyObject *o)
{
    if (!HOP_PY_IS_TENSOR(o)) {
        PyErr_Format(PyExc_TypeError, "_truth(): expected a Tensor, got %.100s", tname(o));
        return NULL;
    }
    int v = truth(o);
    return v < 0 ? NULL : PyBool_FromLong(v);
}

/* _C._base(t): the exporter whose memory t wraps, or None. */
PyObject *
hop_py__base(PyObject *mod, PyObject *o)
{
    if (!HOP_PY_IS_TENSOR(o)) {
        PyErr_Format(PyExc_TypeError, "_base(): expected a Tensor, got %.100s", tname(o));
        return NULL;
    }
    PyObject *b = HOP_PY_TENSOR(o)->base;
    return Py_NewRef(b != NULL ? b : Py_None);
}

static int
truth(PyObject *o)
{
    TensorObject *self = HOP_PY_TENSOR(o);
    const void *p;
    if (self->t == NULL) {
        hop_py__conversion(hop_py_TraceError,
                           "bool() of a traced tensor is data-dependent Python control flow; use "
                           "hop.cond(pred, true_fn, false_fn, operands) instead");
        return -1;
    }
    if (concrete_conversion(self, "a Python bool") < 0)
        return -1;
    if (hop_tensor_numel(self->t) != 1) {
        char buf[160];
        PyErr_Format(hop_py_ShapeError,
                     "bool(): the truth value of a tensor with %lld elements is ambiguous, got %s",
                     (long long)hop_tensor_numel(self->t), tensor_text(self, buf, sizeof buf));
        return -1;
    }
    p = self->t->data;
    if (self->t->dtype == HOP_C64)
        return ((const float *)p)[0] != 0 || ((const float *)p)[1] != 0;
    if (self->t->dtype == HOP_C128)
        return ((const double *)p)[0] != 0 || ((const double *)p)[1] != 0;
    return hop_py__element_double(p, self->t->dtype) != 0; /* nan is true, as in Python */
}

/* float() and int() of a complex tensor: TypeError, as Python's of a complex
 * and NumPy's of a complex array (a silent real part would be a wrong
 * answer); complex() converts it. */
static int
not_complex(TensorObject *self, const char *fname, const char *what)
{
    if (!hop_dtype_is_complex(self->t->dtype))
        return 0;
    char buf[160];
    PyErr_Format(PyExc_TypeError,
                 "%s: a complex tensor cannot be converted to %s (use complex()), got %s", fname,
                 what, tensor_text(self, buf, sizeof buf));
    return -1;
}

static PyObject *
nb_float(PyObject *o)
{
    const void *p;
    if (HOP_PY_TENSOR(o)->t == NULL)
        return traced_conversion("a Python float");
    if (concrete_conversion(HOP_PY_TENSOR(o), "a Python float") < 0)
        return NULL;
    if (single_element(HOP_PY_TENSOR(o), "float()", "a Python float", &p) < 0 ||
        not_complex(HOP_PY_TENSOR(o), "float()", "a Python float") < 0)
        return NULL;
    return PyFloat_FromDouble(hop_py__element_double(p, HOP_PY_TENSOR(o)->t->dtype));
}

static PyObject *
nb_int(PyObject *o)
{
    const void *p;
    hop_tensor *t = HOP_PY_TENSOR(o)->t;
    if (t == NULL)
        return traced_conversion("a Python int");
    if (concrete_conversion(HOP_PY_TENSOR(o), "a Python int") < 0)
        return NULL;
    if (single_element(HOP_PY_TENSOR(o), "int()", "a Python int", &p) < 0 ||
        not_complex(HOP_PY_TENSOR(o), "int()", "a Python int") < 0)
        return NULL;
    if (hop_dtype_is_float(t->dtype))
        return PyLong_FromDouble(hop_py__element_double(p, t->dtype)); /* ValueError for nan */
    PyObject *v = element_object(p, t->dtype);
    if (v != NULL && PyBool_Check(v))
        Py_SETREF(v, PyLong_FromLong(v == Py_True));
    return v;
}

/* complex(t): the element as a Python complex, its imaginary part kept. */
static PyObject *
m_complex(TensorObject *self, PyObject *unused)
{
    const void *p;
    if (self->t == NULL)
        return traced_conversion("a Python complex");
    if (concrete_conversion(self, "a Python complex") < 0)
        return NULL;
    if (single_element(self, "complex()", "a Python complex", &p) < 0)
        return NULL;
    if (self->t->dtype == HOP_C64)
        return PyComplex_FromDoubles(((const float *)p)[0], ((const float *)p)[1]);
    if (self->t->dtype == HOP_C128)
        return PyComplex_FromDoubles(((const double *)p)[0], ((const double *)p)[1]);
    return PyComplex_FromDoubles(hop_py__element_double(p, self->t->dtype), 0.0);
}

static PyObject *
nb_index(PyObject *o)
{
    hop_tensor *t = HOP_PY_TENSOR(o)->t;
    if (t == NULL)
        return traced_conversion("a Python int");
    if (concrete_conversion(HOP_PY_TENSOR(o), "a Python int") < 0)
        return NULL;
    if (hop_dtype_is_float(t->dtype) || hop_tensor_numel(t) != 1) {
        char buf[160];
        PyErr_Format(PyExc_TypeError,
                     "only integer tensors of a single element can be converted to an index, "
                     "got %s",
                     tensor_text(HOP_PY_TENSOR(o), buf, sizeof buf));
        return NULL;
    }
    return nb_int(o);
}

static PyObject *
nb_floor_divide(PyObject *a, PyObject *b)
{
    return binary(HOP_OP_floor_divide, a, b);
}

static PyObject *
nb_remainder(PyObject *a, PyObject *b)
{
    return binary(HOP_OP_remainder, a, b);
}

static PyNumberMethods tensor_as_number = {
    .nb_add = nb_add,
    .nb_floor_divide = nb_floor_divide,
    .nb_remainder = nb_remainder,
    .nb_subtract = nb_subtract,
    .nb_multiply = nb_multiply,
    .nb_true_divide = nb_true_divide,
    .nb_matrix_multiply = nb_matrix_multiply,
    .nb_power = nb_power,
    .nb_negative = nb_negative,
    .nb_positive = nb_positive,
    .nb_absolute = nb_absolute,
    .nb_bool = nb_bool,
    .nb_invert = nb_invert,
    .nb_and = nb_and,
    .nb_or = nb_or,
    .nb_xor = nb_xor,
    .nb_int = nb_int,
    .nb_float = nb_float,
    .nb_index = nb_index,
};

/* --------------------------------------------------------------- getters */

static PyObject *
sizes_tuple(const int64_t *sizes, int rank)
{
    PyObject *tup = PyTuple_New(rank);
    for (int i = 0; tup && i < rank; i++)
        hop_py_fill(&tup, i, PyLong_FromLongLong(sizes[i]));
    return tup;
}

static PyObject *
tensor_get_shape(TensorObject *self, void *closure)
{
    if (self->t != NULL)
        return sizes_tuple(self->t->sizes, self->t->rank);
    if (check_proxy_alive(self) < 0)
        return NULL;
    return hop_py_proxy_shape(self);
}

static PyObject *
tensor_get_dtype(TensorObject *self, void *closure)
{
    hop_dtype d;
    if (hop_py__tensor_dtype(self, &d) < 0)
        return NULL;
    return Py_XNewRef(hop_py_dtype_object(d));
}

static PyObject *
tensor_get_ndim(TensorObject *self, void *closure)
{
    int rank = tensor_rank(self);
    return rank < 0 ? NULL : PyLong_FromLong(rank);
}

static PyObject *
tensor_get_is_proxy(TensorObject *self, void *closure)
{
    return PyBool_FromLong(self->t == NULL);
}

/* t.T: the dims reversed (a 2-D transpose), as NumPy's. */
static PyObject *
tensor_get_T(TensorObject *self, void *closure)
{
    int rank = tensor_rank(self);
    if (rank < 0)
        return NULL;
    if (rank < 2)
        return Py_NewRef(self);
    hop_py_opnd args[2], items[HOP_MAX_RANK];
    hop_py__set_tensor_opnd(&args[0], (PyObject *)self);
    for (int i = 0; i < rank; i++) {
        items[i].kind = HOP_PY_INT;
        items[i].u.i = rank - 1 - i;
    }
    args[1].kind = HOP_PY_LIST;
    args[1].u.list.items = items;
    args[1].u.list.n = (size_t)rank;
    return hop_py_run_op(HOP_OP_permute, args, 2);
}

static PyGetSetDef tensor_getset[] = {
    {"shape", (getter)tensor_get_shape, NULL, "The sizes: a tuple of ints (and SymInts).", NULL},
    {"dtype", (getter)tensor_get_dtype, NULL, "The element type: hop.float32, ...", NULL},
    {"ndim", (getter)tensor_get_ndim, NULL, "The number of dims.", NULL},
    {"T", (getter)tensor_get_T, NULL, "The tensor with its dims reversed (a view).", NULL},
    {"is_proxy", (getter)tensor_get_is_proxy, NULL,
     "True for a traced value (no data), False for a concrete tensor.", NULL},
    {NULL},
};

/* ------------------------------------------------------ info and export */

/* Wraps a possibly negative dim of a rank-`rank` tensor: InvalidError. */
static int
wrap_dim(const char *fname, TensorObject *self, int64_t d, int rank, int *out)
{
    if (rank == 0 || d < -(int64_t)rank || d >= rank) {
        char buf[160];
        hop_error(HOP_INVALID, "%s: dim %lld out of range for %s", fname, (long long)d,
                  tensor_text(self, buf, sizeof buf));
        hop_py_raise();
        return -1;
    }
    *out = (int)(d < 0 ? d + rank : d);
    return 0;
}

static PyObject *
m_numel(TensorObject *self, PyObject *unused)
{
    if (self->t != NULL)
        return PyLong_FromLongLong(hop_tensor_numel(self->t));
    PyObject *shape = tensor_get_shape(self, NULL);
    if (shape == NULL)
        return NULL;
    PyObject *n = PyLong_FromLong(1);
    for (Py_ssize_t i = 0; n != NULL && i < PyTuple_GET_SIZE(shape); i++)
        Py_SETREF(n, PyNumber_Multiply(n, PyTuple_GET_ITEM(shape, i)));
    Py_DECREF(shape);
    return n;
}

static PyObject *
m_dim(TensorObject *self, PyObject *unused)
{
    return tensor_get_ndim(self, NULL);
}

static PyObject *
m_size(TensorObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim"};
    PyObject *a[1];
    int64_t d;
    int w, rank;
    if (hop_py__parse_args("size", names, 1, 0, args, nargs, kwnames, a) < 0)
        return NULL;
    PyObject *shape = tensor_get_shape(self, NULL);
    if (shape == NULL || a[0] == NULL || a[0] == Py_None)
        return shape;
    rank = (int)PyTuple_GET_SIZE(shape);
    if (hop_py__to_int64("size", "dim", a[0], &d) < 0 || wrap_dim("size", self, d, rank, &w) < 0) {
        Py_DECREF(shape);
        return NULL;
    }
    PyObject *v = Py_NewRef(PyTuple_GET_ITEM(shape, w));
    Py_DECREF(shape);
    return v;
}

static int
need_concrete(TensorObject *self, const char *fname)
{
    if (self->t == NULL) {
        PyErr_Format(hop_py_TraceError, "%s() of a traced tensor is not available during tracing",
                     fname);
        return -1;
    }
    return 0;
}

static PyObject *
m_stride(TensorObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim"};
    PyObject *a[1];
    int64_t d;
    int w;
    if (hop_py__parse_args("stride", names, 1, 0, args, nargs, kwnames, a) < 0 ||
        need_concrete(self, "stride") < 0)
        return NULL;
    if (a[0] == NULL || a[0] == Py_None)
        return sizes_tuple(self->t->strides, self->t->rank);
    if (hop_py__to_int64("stride", "dim", a[0], &d) < 0 ||
        wrap_dim("stride", self, d, self->t->rank, &w))
        return NULL;
    return PyLong_FromLongLong(self->t->strides[w]);
}

static PyObject *
m_storage_offset(TensorObject *self, PyObject *unused)
{
    if (need_concrete(self, "storage_offset") < 0)
        return NULL;
    return PyLong_FromLongLong(self->t->offset);
}

static PyObject *
m_data_ptr(TensorObject *self, PyObject *unused)
{
    if (need_concrete(self, "data_ptr") < 0)
        return NULL;
    return PyLong_FromVoidPtr(self->t->data);
}

static PyObject *
m_is_contiguous(TensorObject *self, PyObject *unused)
{
    return PyBool_FromLong(self->t == NULL || hop_tensor_is_contiguous(self->t));
}

static PyObject *
m_contiguous(TensorObject *self, PyObject *unused)
{
    if (self->t == NULL || hop_tensor_is_contiguous(self->t))
        return Py_NewRef(self);
    if (hop_py_tracing_active()) /* the copy is made when the graph runs */
        return hop_py__unary(HOP_OP_clone, (PyObject *)self);
    return hop_py_tensor_new(hop_tensor_contiguous(self->t));
}

static PyObject *
m_item(TensorObject *self, PyObject *unused)
{
    const void *p;
    if (self->t == NULL || hop_py_tracing_active()) {
        /* Traced, a concrete tensor's item is a SymInt as a proxy's is.  A
         * float's is a Python float known only at run time: the op refuses
         * it, which in hop.compile is where the compiled part ends. */
        hop_py_opnd a;
        hop_py__set_tensor_opnd(&a, (PyObject *)self);
        PyObject *r = hop_py_run_op(HOP_OP_item, &a, 1);
        if (r == NULL && PyErr_ExceptionMatches(hop_py_UnsupportedError)) {
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyObject *msg = value != NULL ? PyObject_Str(value) : NULL;
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            if (msg == NULL)
                return NULL;
            hop_py__conversion(hop_py_UnsupportedError, "%U", msg);
            Py_DECREF(msg);
        }
        return r;
    }
    if (single_element(self, "item()", "a Python number", &p) < 0)
        return NULL;
    return element_object(p, self->t->dtype);
}

static PyObject *
tolist_rec(const hop_tensor *t, const char *p, int dim)
{
    if (dim == t->rank)
        return element_object(p, t->dtype);
    int64_t step = t->strides[dim] * (int64_t)hop_dtype_size(t->dtype);
    PyObject *list = PyList_New((Py_ssize_t)t->sizes[dim]);
    for (int64_t i = 0; list != NULL && i < t->sizes[dim]; i++) {
        hop_py_fill(&list, (Py_ssize_t)i, tolist_rec(t, p + i * step, dim + 1));
    }
    return list;
}

static PyObject *
m_tolist(TensorObject *self, PyObject *unused)
{
    if (self->t == NULL)
        return traced_conversion("a Python list");
    if (concrete_conversion(self, "a Python list") < 0)
        return NULL;
    return tolist_rec(self->t, self->t->data, 0);
}

static PyObject *np_asarray; /* numpy.asarray, imported on first use */

static PyObject *
numpy_asarray(void)
{
    return hop_py__import_attr(&np_asarray, "numpy", "asarray");
}

/* t.numpy(): an ndarray over the same memory (through the buffer protocol). */
static PyObject *
m_numpy(TensorObject *self, PyObject *unused)
{
    if (self->t == NULL)
        return traced_conversion("a NumPy array");
    PyObject *asarray = numpy_asarray();
    return asarray == NULL ? NULL : PyObject_CallOneArg(asarray, (PyObject *)self);
}

/* NumPy reaches __array__ only when the buffer protocol failed: for a proxy,
 * whose error must not be swallowed into an object array. */
static PyObject *
m_array(TensorObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dtype", "copy"};
    PyObject *a[2];
    if (hop_py__parse_args("__array__", names, 2, 0, args, nargs, kwnames, a) < 0)
        return NULL;
    PyObject *arr = m_numpy(self, NULL);
    if (arr == NULL || a[0] == NULL || a[0] == Py_None)
        return arr;
    PyObject *res = PyObject_CallMethod(arr, "astype", "O", a[0]);
    Py_DECREF(arr);
    return res;
}

/* ------------------------------------------------- NumPy's protocols */

/* hop.numpy's handler `name` (imported on first use: NumPy's protocols on a
 * Tensor are hop.numpy's functions with tensor results). */
static PyObject *
numpy_handler(const char *name, PyObject **cache)
{
    return hop_py__import_attr(cache, "hop.numpy", name);
}

/* Calls handler(self, *args, **kwargs). */
static PyObject *
call_handler(PyObject *handler, PyObject *self, PyObject *args, PyObject *kwargs)
{
    if (handler == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *full = PyTuple_New(n + 1);
    if (full == NULL)
        return NULL;
    PyTuple_SET_ITEM(full, 0, Py_NewRef(self));
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(full, i + 1, Py_NewRef(PyTuple_GET_ITEM(args, i)));
    PyObject *res = PyObject_Call(handler, full, kwargs);
    Py_DECREF(full);
    return res;
}

static PyObject *np_ufunc_handler, *np_function_handler;

/* np.sin(t), t + ndarray, np.add(t, 1, out=...): hop.numpy's ufuncs. */
static PyObject *
m_array_ufunc(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return call_handler(numpy_handler("tensor_array_ufunc", &np_ufunc_handler), self, args, kwargs);
}

/* np.sum(t), np.concatenate([t, ...]): hop.numpy's functions. */
static PyObject *
m_array_function(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return call_handler(numpy_handler("tensor_array_function", &np_function_handler), self, args,
                        kwargs);
}

/* ------------------------------------------------------ buffer protocol */

static const char *
buffer_format(hop_dtype d)
{
    switch (d) {
    case HOP_BOOL:
        return "?";
    case HOP_I8:
        return "b";
    case HOP_U8:
        return "B";
    case HOP_U16:
        return "H";
    case HOP_U32:
        return "I";
    case HOP_I16:
        return "h";
    case HOP_I32:
        return "i";
    case HOP_I64:
        return sizeof(long) == 8 ? "l" : "q"; /* 'l' is NumPy's int64 on LP64 */
    case HOP_U64:
        return sizeof(long) == 8 ? "L" : "Q";
    case HOP_F16:
        return "e";
    case HOP_F32:
        return "f";
    case HOP_C64:
        return "Zf";
    case HOP_C128:
        return "Zd";
    case HOP_F64:
    case HOP_DTYPE_COUNT:
        break;
    }
    return "d";
}

static bool
is_f_contiguous(const hop_tensor *t)
{
    int64_t expect = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->sizes[i] == 0)
            return true;
        if (t->sizes[i] != 1 && t->strides[i] != expect)
            return false;
        expect *= t->sizes[i];
    }
    return true;
}

static int
tensor_getbuffer(TensorObject *self, Py_buffer *view, int flags)
{
    hop_tensor *t = self->t;
    view->obj = NULL;
    if (t == NULL) {
        traced_conversion("a buffer (NumPy array, memoryview)");
        return -1;
    }
    bool c_contig = hop_tensor_is_contiguous(t);
    if ((((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS || !(flags & PyBUF_STRIDES)) &&
         !c_contig) ||
        ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !is_f_contiguous(t)) ||
        ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c_contig &&
         !is_f_contiguous(t))) {
        PyErr_SetString(PyExc_BufferError, "hop.Tensor: the tensor is not contiguous");
        return -1;
    }
    size_t esize = hop_dtype_size(t->dtype);
    Py_ssize_t *geo = NULL;
    if (t->rank > 0) {
        geo = PyMem_Malloc(2 * (size_t)t->rank * sizeof *geo);
        if (geo == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (int i = 0; i < t->rank; i++) {
            geo[i] = (Py_ssize_t)t->sizes[i];
            geo[t->rank + i] = (Py_ssize_t)(t->strides[i] * (int64_t)esize);
        }
    }
    view->buf = t->data;
    view->obj = Py_NewRef(self);
    view->len = (Py_ssize_t)(hop_tensor_numel(t) * (int64_t)esize);
    view->readonly = 0;
    view->itemsize = (Py_ssize_t)esize;
    view->format = (flags & PyBUF_FORMAT) ? (char *)buffer_format(t->dtype) : NULL;
    view->ndim = t->rank;
    view->shape = (flags & PyBUF_ND) ? geo : NULL;
    view->strides = (flags & PyBUF_STRIDES) && geo != NULL ? geo + t->rank : NULL;
    view->suboffsets = NULL;
    view->internal = geo;
    return 0;
}

static void
tensor_releasebuffer(TensorObject *self, Py_buffer *view)
{
    PyMem_Free(view->internal);
}

static PyBufferProcs tensor_as_buffer = {
    .bf_getbuffer = (getbufferproc)tensor_getbuffer,
    .bf_releasebuffer = (releasebufferproc)tensor_releasebuffer,
};

/* ------------------------------------------------------------- indexing */

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
    return hop_py_run_op(HOP_OP_select, args, 3);
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
    int rank = tensor_rank(HOP_PY_TENSOR(self));
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
                     tensor_text(HOP_PY_TENSOR(self), buf, sizeof buf), consumed);
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
    int rank = tensor_rank(o);
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

/* For iteration (PySeqIter): IndexError past the end stops it. */
static PyObject *
sq_item(PyObject *self, Py_ssize_t i)
{
    int rank = tensor_rank(HOP_PY_TENSOR(self));
    if (rank < 0)
        return NULL;
    if (rank == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
        return NULL;
    }
    hop_py_opnd idx;
    idx.kind = HOP_PY_INT;
    idx.u.i = i;
    return index_select(self, 0, 0, &idx);
}

static PyObject *
tensor_iter(PyObject *self)
{
    int rank = tensor_rank(HOP_PY_TENSOR(self));
    if (rank < 0)
        return NULL;
    if (rank == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
        return NULL;
    }
    return PySeqIter_New(self);
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

static PyMethodDef setitem_functions[] = {
    {"_set_setitem", py_set_setitem, METH_O,
     "_set_setitem(fn): fn(x, key, value) implements hop.Tensor's x[key] = value."},
    {"_write", (PyCFunction)(void (*)(void))py_write, METH_FASTCALL,
     "_write(dst, src): src copied into dst's memory (an eager x[key] = value)."},
    {NULL},
};

static PyMappingMethods tensor_as_mapping = {
    .mp_length = sq_length,
    .mp_subscript = tensor_getitem,
    .mp_ass_subscript = tensor_setitem,
};

static PySequenceMethods tensor_as_sequence = {
    .sq_length = sq_length,
    .sq_item = sq_item,
};

/* ----------------------------------------------------------------- repr */

/*
 * The text of a 0-d float tensor whose value prints positionally (finite,
 * 0 or 1e-4 <= |v| < 1e8) under NumPy's default print options: the case of
 * hop/_tensor_api.py's _scalar_text that a compiled function's replayed
 * print(x.sum()) meets on every call, made here without a Python frame:
 * for float32 and float64 the digits NumPy's dragon4 gives, computed
 * exactly (dragon4_text), for float16 NumPy's dragon4 itself
 * (test_tensor.py checks that this and the Python path give the same
 * text).  NULL with no exception: not this case, or NumPy keeps its options
 * elsewhere (_tensor_api._repr_parts is None); the Python path decides.
 */
static PyObject *repr_parts; /* (numpy.core.arrayprint, its defaults, dragon4_positional),
                              * Py_None: unavailable */
static PyObject *repr_kw2, *str_format_options, *repr_eight, *repr_zero, *repr_point;

/* The tuple of the n names, each interned. */
static PyObject *
interned_names(const char *const *names, Py_ssize_t n)
{
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t != NULL && i < n; i++)
        hop_py_fill(&t, i, PyUnicode_InternFromString(names[i]));
    return t;
}

/* Whether NumPy's print options (its dict opts) are its defaults.  The
 * items of opts when it last equalled them are kept: the same keys holding
 * the same (immutable) objects in the same order are equal without
 * comparing strings; anything else is compared in full. */
static PyObject *repr_default_items; /* list of (key, value) of opts, or NULL */

static int
options_as_kept(PyObject *opts)
{
    if (repr_default_items == NULL || !PyDict_CheckExact(opts) ||
        PyDict_GET_SIZE(opts) != PyList_GET_SIZE(repr_default_items))
        return 0;
    Py_ssize_t pos = 0, i = 0;
    PyObject *k, *v;
    while (PyDict_Next(opts, &pos, &k, &v)) {
        PyObject *kv = PyList_GET_ITEM(repr_default_items, i++);
        if (PyTuple_GET_ITEM(kv, 0) != k || PyTuple_GET_ITEM(kv, 1) != v)
            return 0;
    }
    return 1;
}

static int
options_default(PyObject *opts, PyObject *defaults)
{
    if (options_as_kept(opts))
        return 1;
    int eq = PyObject_RichCompareBool(opts, defaults, Py_EQ);
    if (eq == 1 && PyDict_CheckExact(opts)) {
        Py_XSETREF(repr_default_items, PyDict_Items(opts));
        if (repr_default_items == NULL)
            return -1;
    }
    return eq;
}

/*
 * Whether NumPy's print options are still those options_default last
 * found to be the defaults, without reading them: neither arrayprint's
 * module dict (where _format_options is bound) nor that options dict
 * changed since.  A dict's ma_version_tag (PEP 509) is globally unique and
 * new on every change of that dict, so equal tags of the same two dicts
 * mean the same bindings.  (The tag is CPython 3.11's; later versions
 * deprecate it, and there the options are read and compared each time.)
 */
#if PY_VERSION_HEX < 0x030C0000
static PyObject *repr_seen_opts;                /* the options dict then, or NULL */
static uint64_t repr_seen_mtag, repr_seen_otag; /* the two dicts' tags then */
#endif

static int
options_unchanged(PyObject *mod)
{
#if PY_VERSION_HEX < 0x030C0000
    return repr_seen_opts != NULL && PyModule_CheckExact(mod) &&
           ((PyDictObject *)PyModule_GetDict(mod))->ma_version_tag == repr_seen_mtag &&
           ((PyDictObject *)repr_seen_opts)->ma_version_tag == repr_seen_otag;
#else
    (void)mod;
    return 0;
#endif
}

/* Records that the options opts, read from mod just now, are the defaults. */
static void
options_seen(PyObject *mod, PyObject *opts)
{
#if PY_VERSION_HEX < 0x030C0000
    if (!PyModule_CheckExact(mod) || !PyDict_CheckExact(opts))
        return;
    Py_INCREF(opts);
    Py_XSETREF(repr_seen_opts, opts);
    repr_seen_mtag = ((PyDictObject *)PyModule_GetDict(mod))->ma_version_tag;
    repr_seen_otag = ((PyDictObject *)opts)->ma_version_tag;
#else
    (void)mod;
    (void)opts;
#endif
}

static int
repr_parts_load(void)
{
    PyObject *api = PyImport_ImportModule("hop._tensor_api");
    PyObject *parts = api != NULL ? PyObject_CallMethod(api, "_repr_parts", NULL) : NULL;
    Py_XDECREF(api);
    if (parts == NULL)
        return -1;
    if (parts != Py_None && !(PyTuple_Check(parts) && PyTuple_GET_SIZE(parts) == 3)) {
        Py_DECREF(parts);
        PyErr_SetString(PyExc_SystemError, "hop._tensor_api._repr_parts: not 3 parts");
        return -1;
    }
    /* interned, as NumPy's parser first matches keyword names by identity */
    static const char *const kw2[] = {"precision",  "min_digits", "unique",
                                      "fractional", "trim",       "sign"};
    repr_kw2 = interned_names(kw2, 6);
    str_format_options = PyUnicode_InternFromString("_format_options");
    repr_eight = PyLong_FromLong(8);
    repr_zero = PyLong_FromLong(0);
    repr_point = PyUnicode_InternFromString(".");
    if (repr_kw2 == NULL || str_format_options == NULL || repr_eight == NULL || repr_zero == NULL ||
        repr_point == NULL) {
        Py_DECREF(parts);
        return -1;
    }
    repr_parts = parts;
    return 0;
}

/*
 * NumPy's dragon4 text of a float, made exactly with 128-bit integers.  A
 * finite a > 0 is m2 x 2^e2 with an integer m2 of `bits` bits (24 for
 * binary32, 53 for binary64).  Its shortest digits come from the decimal
 * floors of the value and of the ends of its rounding interval at one
 * scale, then removing digits while a shorter decimal still fits (Ryu's
 * digit loop, Adams 2018), here on exact floors: in the range scalar_repr
 * prints positionally (1e-4 <= a < 1e8) each floor is one 128-bit product
 * and a shift (the bounds are at shortest_digits), where probing a digit
 * count at a time took ~2,300 instructions.
 */
typedef unsigned __int128 u128;

static const uint64_t pow10_u64[18] = {1u,
                                       10u,
                                       100u,
                                       1000u,
                                       10000u,
                                       100000u,
                                       1000000u,
                                       10000000u,
                                       100000000u,
                                       1000000000u,
                                       10000000000u,
                                       100000000000u,
                                       1000000000000u,
                                       10000000000000u,
                                       100000000000000u,
                                       1000000000000000u,
                                       10000000000000000u,
                                       100000000000000000u};

/* 5^k, 0 <= k <= 27 */
static const uint64_t pow5_u64[28] = {1u,
                                      5u,
                                      25u,
                                      125u,
                                      625u,
                                      3125u,
                                      15625u,
                                      78125u,
                                      390625u,
                                      1953125u,
                                      9765625u,
                                      48828125u,
                                      244140625u,
                                      1220703125u,
                                      6103515625u,
                                      30517578125u,
                                      152587890625u,
                                      762939453125u,
                                      3814697265625u,
                                      19073486328125u,
                                      95367431640625u,
                                      476837158203125u,
                                      2384185791015625u,
                                      11920928955078125u,
                                      59604644775390625u,
                                      298023223876953125u,
                                      1490116119384765625u,
                                      7450580596923828125u};

/* M x 2^E x 10^s rounded to an integer, half to even (-7 <= s <= 20:
 * M x 5^s < 2^100, the shift E + s < 0 for binary64 and <= 16 for
 * binary32; 5^-s x 2^-(E+s) < 2^91). */
static uint64_t
round_scaled(uint64_t M, int E, int s)
{
    u128 num = M, den = 1;
    if (s >= 0)
        num *= pow5_u64[s];
    else
        den = pow5_u64[-s];
    if (E + s >= 0)
        num <<= E + s;
    else
        den <<= -(E + s);
    u128 q = num / den, r2 = (num % den) * 2;
    if (r2 > den || (r2 == den && (q & 1)))
        q++;
    return (uint64_t)q;
}

/* floor(x x 2^e2 / 10^q) for the scale of shortest_digits, and whether it
 * is exact: x x 2^e2 = x x 5^i / 2^q x 10^q with i = -e2 - q. */
static uint64_t
floor_scaled(uint64_t x, uint64_t five_i, int q, int *exact)
{
    u128 p = (u128)x * five_i;
    *exact = (p & (((u128)1 << q) - 1)) == 0;
    return (uint64_t)(p >> q);
}

/*
 * The shortest decimal D x 10^k that reads back as the float m2 x 2^e2
 * (its rounding interval: ends count when m2 is even, as ties round to
 * even, and the lower half is half as wide when `unequal`, at a power of
 * two), the closest to it among those (exact ties to the even digit): the
 * digits NumPy's dragon4 gives in unique mode.  Range: 2^-14 <= value <
 * 2^27 with m2 < 2^53, so e2 - 2 >= -68.  At the scale 10^q, q one below
 * floor(log10 5^-(e2-2)) (at least 0), the floors need i = -(e2-2) - q <=
 * 22 powers of five: 4 m2 x 5^i < 2^55 x 2^52, and the floors themselves
 * below 100 x 2^55 < 2^64.
 */
static void
shortest_digits(uint64_t m2, int e2, int unequal, uint64_t *D, int *k)
{
    int even = (m2 & 1) == 0;
    uint64_t mv = 4 * m2, mp = mv + 2, mm = mv - (unequal ? 1 : 2);
    uint64_t vr, vp, vm;
    int e10, vr_exact = 1, vp_exact = 1, vm_exact = 1;
    e2 -= 2;
    if (e2 >= 0) { /* binary32 at or above 2^24: integers (below 2^29) */
        vr = mv << e2;
        vp = mp << e2;
        vm = mm << e2;
        e10 = 0;
    } else {
        int q = (int)(((uint32_t)-e2 * 732923u) >> 20) - 1; /* floor(-e2 log10 5) - 1 */
        if (q < 0)
            q = 0;
        uint64_t five_i = pow5_u64[-e2 - q];
        vr = floor_scaled(mv, five_i, q, &vr_exact);
        vp = floor_scaled(mp, five_i, q, &vp_exact);
        vm = floor_scaled(mm, five_i, q, &vm_exact);
        e10 = e2 + q;
    }
    if (!even && vp_exact)
        vp--; /* the upper end reads back as the next float */
    /* vm is a candidate only when it is the lower end exactly and ends
     * count; vr_zeros: the digits removed below `last` are all zeros */
    int vm_zeros = even && vm_exact, vr_zeros = vr_exact, removed = 0;
    unsigned last = 0;
    while (vp / 10 > vm / 10) { /* a decimal one digit shorter fits */
        vm_zeros &= vm % 10 == 0;
        vr_zeros &= last == 0;
        last = (unsigned)(vr % 10);
        vr /= 10;
        vp /= 10;
        vm /= 10;
        removed++;
    }
    if (vm_zeros) { /* the lower end itself, shorter still */
        while (vm % 10 == 0) {
            vr_zeros &= last == 0;
            last = (unsigned)(vr % 10);
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed++;
        }
    }
    if (vr_zeros && last == 5 && vr % 2 == 0)
        last = 4; /* exactly halfway: to the even digit */
    *D = vr + ((vr == vm && !vm_zeros) || last >= 5);
    *k = e10 + removed;
}

/* Writes the decimal digits of u (no zeros at the front) to out; returns
 * their count. */
static int
put_digits(uint64_t u, char *out)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    for (int i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

/*
 * The text NumPy's dragon4 gives a finite float a (binary32 when f32) with
 * 1e-4 <= |a| < 1e8 or a == 0, positionally, with unique=True, precision=8,
 * min_digits=0, fractional=True, trim='.': its shortest digits that read
 * back as a (the closest to a among them), the integer part in full where
 * they end before the point, and a rounded (exactly, half to even) to 8
 * fraction digits where they have more.  Returns the length written to buf
 * (>= 48 bytes).
 */
static int
dragon4_text(double v, int f32, char *buf)
{
    double a = fabs(v);
    int len = 0;
    if (signbit(v))
        buf[len++] = '-';
    if (a == 0) {
        memcpy(buf + len, "0.", 3);
        return len + 2;
    }
    /* a = M x 2^E, M of 24 (53) bits: normal in this range */
    uint64_t M;
    int E, unequal;
    if (f32) {
        float x = (float)a;
        uint32_t b;
        memcpy(&b, &x, sizeof b);
        M = (b & 0x7FFFFFu) | 0x800000u;
        E = (int)(b >> 23) - 127 - 23;
        unequal = (b & 0x7FFFFFu) == 0;
    } else {
        uint64_t b;
        memcpy(&b, &a, sizeof b);
        M = (b & 0xFFFFFFFFFFFFFull) | (1ull << 52);
        E = (int)(b >> 52) - 1023 - 52;
        unequal = (b & 0xFFFFFFFFFFFFFull) == 0;
    }
    uint64_t D;
    int k;
    shortest_digits(M, E, unequal, &D, &k);
    while (D % 10 == 0) {
        D /= 10;
        k++;
    }
    if (k >= 0) {
        /* the digits end at or before the point: the integer in full */
        len += put_digits((uint64_t)a, buf + len);
        buf[len++] = '.';
    } else if (k < -8) {
        /* more than 8 fraction digits: a rounded to 8 */
        uint64_t r = round_scaled(M, E, 8);
        len += put_digits(r / pow10_u64[8], buf + len);
        buf[len++] = '.';
        uint64_t f = r % pow10_u64[8];
        for (int i = 7; i >= 0; i--, f /= 10)
            buf[len + i] = (char)('0' + f % 10);
        /* the fraction without its zeros at the end */
        int n = 8;
        while (n > 0 && buf[len + n - 1] == '0')
            n--;
        len += n;
    } else {
        char digits[24];
        int n = put_digits(D, digits), point = n + k; /* digits before the point */
        if (point <= 0) {
            memcpy(buf + len, "0.", 2);
            len += 2;
            memset(buf + len, '0', (size_t)-point);
            len += -point;
            memcpy(buf + len, digits, (size_t)n);
            len += n;
        } else {
            memcpy(buf + len, digits, (size_t)point);
            len += point;
            buf[len++] = '.';
            memcpy(buf + len, digits + point, (size_t)(n - point));
            len += n - point;
        }
    }
    buf[len] = '\0';
    return len;
}

static PyObject *
scalar_repr(TensorObject *o)
{
    hop_dtype d = o->t->dtype;
    if (d != HOP_F16 && d != HOP_F32 && d != HOP_F64)
        return NULL;
    if (repr_parts == NULL && repr_parts_load() < 0)
        return NULL;
    if (repr_parts == Py_None)
        return NULL;
    const void *p = o->t->data;
    double v = d == HOP_F16   ? hop_f16_to_float(*(const uint16_t *)p)
               : d == HOP_F32 ? *(const float *)p
                              : *(const double *)p;
    double a = fabs(v);
    if (!isfinite(v) || (v != 0 && (a >= 1.e8 || a < 0.0001)))
        return NULL; /* nan, inf, the exponent form: the Python path */
    PyObject *mod = PyTuple_GET_ITEM(repr_parts, 0);
    if (!options_unchanged(mod)) {
        PyObject *opts = PyObject_GetAttr(mod, str_format_options);
        int dflt = opts != NULL ? options_default(opts, PyTuple_GET_ITEM(repr_parts, 1)) : -1;
        if (dflt == 1)
            options_seen(mod, opts);
        Py_XDECREF(opts);
        if (dflt <= 0)
            return NULL; /* not the defaults: the Python path (or the error) */
    }
    const char *close = d == HOP_F32   ? ")"
                        : d == HOP_F16 ? ", dtype=hop.float16)"
                                       : ", dtype=hop.float64)";
    if (d != HOP_F16) {
        /* NumPy's FloatingFormat makes two dragon4 passes: the first
         * (min_digits=-1) only for the widths it pads the second
         * (min_digits=0) to.  For one value in this range the padding adds
         * nothing: min_digits=0 changes only the integer digits past the
         * unique ones (-67600176 instead of -67600180, the same count), never
         * the fraction's, and the unique rounding cannot carry into one more
         * integer digit (10**k <= 1e8 is a float of its own, outside the
         * value's rounding interval).  So the second pass alone is the text,
         * made here without NumPy (test_tensor.py compares it with NumPy's
         * two passes over random and edge float32/float64 values). */
        char text[96] = "hop.tensor(";
        int n = dragon4_text(v, d == HOP_F32, text + 11);
        size_t m = strlen(close);
        memcpy(text + 11 + n, close, m);
        /* (ASCII: a copy, where PyUnicode_FromFormat would parse a format) */
        PyObject *res = PyUnicode_New(11 + n + (Py_ssize_t)m, 127);
        if (res != NULL)
            memcpy(PyUnicode_DATA(res), text, 11 + n + m);
        return res;
    }
    /* float16: NumPy's dragon4 itself, on the value as NumPy's float16 */
    PyObject *d4 = PyTuple_GET_ITEM(repr_parts, 2);
    PyObject *x = NULL, *second = NULL, *res = NULL;
    if ((x = hop_py__np_element(o->t)) == NULL)
        return NULL; /* (NumPy's C API unusable, no exception: the Python path) */
    PyObject *a2[7] = {x, repr_eight, repr_zero, Py_True, Py_True, repr_point, Py_False};
    second = PyObject_Vectorcall(d4, a2, 1, repr_kw2);
    if (second != NULL)
        res = PyUnicode_FromFormat("hop.tensor(%U%s", second, close);
    Py_XDECREF(second);
    Py_XDECREF(x);
    return res;
}

static PyObject *
tensor_repr(PyObject *self)
{
    TensorObject *o = HOP_PY_TENSOR(self);
    if (o->t == NULL) {
        /* hop's own messages and hop.trace show the node; in hop.compile the
         * user's code asking for the text is where the compiled part ends
         * (hop/_breaks.py) */
        char buf[256];
        PyObject *text = o->node == NULL
                             ? PyUnicode_FromString("Tensor(proxy <no value>)")
                             : PyUnicode_FromFormat("Tensor(proxy %s: %s)", o->node->name,
                                                    tensor_text(o, buf, sizeof buf));
        return hop_py__user_text("proxy_text", self, text);
    }
    if (o->t->rank == 0 && !hop_py_tracing_active()) {
        PyObject *r = scalar_repr(o);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    /* The NumPy-like text is made in Python (hop/_tensor_api.py). */
    PyObject *api = PyImport_ImportModule("hop._tensor_api");
    if (api == NULL)
        return NULL;
    PyObject *res = PyObject_CallMethod(api, "tensor_repr", "O", self);
    Py_DECREF(api);
    return res;
}

/* ------------------------------------------------------ the type object */

/* clang-format off */
static PyMethodDef tensor_methods[] = {
    {"numel", (PyCFunction)m_numel, METH_NOARGS, HOP_PY_SIG("numel($self, /)")
     "The number of elements (a SymInt for a traced value of symbolic size).\n\n"
     ">>> hop.zeros(2, 3).numel()\n6\n"},
    {"dim", (PyCFunction)m_dim, METH_NOARGS, HOP_PY_SIG("dim($self, /)")
     "The number of dims (ndim).\n\n>>> hop.zeros(2, 3).dim()\n2\n"},
    {"size", (PyCFunction)(void (*)(void))m_size, HOP_PY_FASTKW, HOP_PY_SIG("size($self, dim=None)")
     "The shape as a tuple, or the size of dim (negative: from the end); ints, and SymInts "
     "for a traced value's symbolic sizes.\n\n>>> hop.zeros(2, 3).size(-1)\n3\n"},
    {"stride", (PyCFunction)(void (*)(void))m_stride, HOP_PY_FASTKW,
     HOP_PY_SIG("stride($self, dim=None)")
     "The strides in elements as a tuple, or the stride of dim; concrete tensors only.\n\n"
     ">>> hop.zeros(2, 3).T.stride()\n(1, 3)\n"},
    {"storage_offset", (PyCFunction)m_storage_offset, METH_NOARGS,
     HOP_PY_SIG("storage_offset($self, /)")
     "Where the first element lies in the memory the tensor shares with its views, in "
     "elements.\n\n>>> hop.zeros(2, 3)[1].storage_offset()\n3\n"},
    {"data_ptr", (PyCFunction)m_data_ptr, METH_NOARGS, HOP_PY_SIG("data_ptr($self, /)")
     "The address of the first element (an int); concrete tensors only.\n\n"
     ">>> t = hop.zeros(2, 3)\n>>> t[1].data_ptr() - t.data_ptr()\n12\n"},
    {"is_contiguous", (PyCFunction)m_is_contiguous, METH_NOARGS,
     HOP_PY_SIG("is_contiguous($self, /)")
     "Whether the elements lie in C order without gaps.\n\n"
     ">>> hop.zeros(2, 3).T.is_contiguous()\nFalse\n"},
    {"contiguous", (PyCFunction)m_contiguous, METH_NOARGS, HOP_PY_SIG("contiguous($self, /)")
     "self when it is C-contiguous, else a C-contiguous copy.\n\n"
     ">>> hop.zeros(2, 3).T.contiguous().is_contiguous()\nTrue\n"},
    {"__complex__", (PyCFunction)m_complex, METH_NOARGS,
     HOP_PY_SIG("__complex__($self, /)") "complex(t): a one-element tensor's value as a "
                                         "Python complex."},
    {"item", (PyCFunction)m_item, METH_NOARGS, HOP_PY_SIG("item($self, /)")
     "The one element as a Python number; while tracing, a SymInt read at run time (int and "
     "bool tensors only).\n\n>>> hop.tensor([2.5]).item()\n2.5\n"},
    {"tolist", (PyCFunction)m_tolist, METH_NOARGS, HOP_PY_SIG("tolist($self, /)")
     "The elements as nested lists of Python numbers (a number for a 0-d tensor); concrete "
     "tensors only.\n\n>>> hop.tensor([[1, 2]]).tolist()\n[[1, 2]]\n"},
    {"numpy", (PyCFunction)m_numpy, METH_NOARGS, HOP_PY_SIG("numpy($self, /)")
     "A NumPy array sharing the tensor's memory (no copy); concrete tensors only.\n\n"
     ">>> hop.tensor([[1.0, 2.0]]).numpy()\narray([[1., 2.]], dtype=float32)\n"},
    {"__array__", (PyCFunction)(void (*)(void))m_array, HOP_PY_FASTKW,
     HOP_PY_SIG("__array__($self, dtype=None, copy=None)")
     "NumPy's array protocol: np.asarray(t) shares the memory; with dtype, a converted copy."},
    {"__array_ufunc__", (PyCFunction)(void (*)(void))m_array_ufunc, METH_VARARGS | METH_KEYWORDS,
     HOP_PY_SIG("__array_ufunc__($self, ufunc, method, /, *inputs, **kwargs)")
     "NumPy's ufuncs on a Tensor: hop.numpy's, giving Tensors."},
    {"__array_function__", (PyCFunction)(void (*)(void))m_array_function,
     METH_VARARGS | METH_KEYWORDS,
     HOP_PY_SIG("__array_function__($self, func, types, args, kwargs, /)")
     "NumPy's functions on a Tensor: hop.numpy's, giving Tensors."},
    {NULL},
};
/* clang-format on */

PyTypeObject hop_py_TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop.Tensor",
    .tp_basicsize = sizeof(TensorObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tensor: concrete data (made by hop.tensor, hop.asarray, hop.zeros, ...: not by "
              "calling hop.Tensor) or, while tracing, a traced value (a proxy).  Operators, "
              "indexing and the methods run eagerly on concrete tensors and record nodes on "
              "proxies; NumPy arrays share its memory both ways.\n\n"
              ">>> t = hop.tensor([[1.0, 2.0], [3.0, 4.0]])\n"
              ">>> (t @ t.T + 1)[0]\n"
              "hop.tensor([ 6., 12.])\n",
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_repr = tensor_repr,
    .tp_as_number = &tensor_as_number,
    .tp_as_sequence = &tensor_as_sequence,
    .tp_as_mapping = &tensor_as_mapping,
    .tp_as_buffer = &tensor_as_buffer,
    .tp_richcompare = tensor_richcompare,
    .tp_iter = tensor_iter,
    .tp_weaklistoffset = offsetof(TensorObject, weakreflist),
    .tp_methods = tensor_methods,
    .tp_getset = tensor_getset,
};

/* ------------------------------------------------- _C._UserClass */

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

static PyObject *
user_class_get(UserClassObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(type != NULL ? type : (PyObject *)Py_TYPE(self));
    if ((bool_hook == NULL && !hop_py_tracing_active()) || internal_frame())
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
hop_py_tensor_init(PyObject *m)
{
    /* Hashed by identity, as PyTorch's (== is elementwise). */
    hop_py_TensorType.tp_hash = PyBaseObject_Type.tp_hash;
    if (PyType_Ready(&hop_py_TensorType) < 0)
        return -1;
    /* Kept for NumPy code that reads it; ndarray (op) Tensor goes through
     * __array_ufunc__ (NumPy's ufunc, with a Tensor result). */
    PyObject *prio = PyFloat_FromDouble(1000.0);
    if (prio == NULL ||
        PyDict_SetItemString(hop_py_TensorType.tp_dict, "__array_priority__", prio) < 0) {
        Py_XDECREF(prio);
        return -1;
    }
    Py_DECREF(prio);
    /* The op methods are ops.c's. */
    for (PyMethodDef *def = hop_py__op_methods; def->ml_name != NULL; def++) {
        PyObject *descr = PyDescr_NewMethod(&hop_py_TensorType, def);
        if (descr == NULL ||
            PyDict_SetItemString(hop_py_TensorType.tp_dict, def->ml_name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    PyType_Modified(&hop_py_TensorType);
    hop_py__create_init();
    if (PyType_Ready(&UserClassType) < 0 ||
        PyModule_AddObjectRef(m, "_UserClass", (PyObject *)&UserClassType) < 0)
        return -1;
    if (PyModule_AddObjectRef(m, "Tensor", (PyObject *)&hop_py_TensorType) < 0 ||
        PyModule_AddFunctions(m, hop_py__op_functions) < 0 ||
        PyModule_AddFunctions(m, hop_py__create_functions) < 0 ||
        PyModule_AddFunctions(m, setitem_functions) < 0)
        return -1;
    return 0;
}
