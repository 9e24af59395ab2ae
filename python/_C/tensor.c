/*
 * python/_C/tensor.c - hop.Tensor: the Python object over a runtime tensor
 * (or, for a proxy, over a traced node), its number and buffer protocols,
 * Python conversions and getters; the eager dispatch of every op
 * (hop_py_run_op) is tensor_dispatch.c's, its repr tensor_repr.c's, its
 * indexing (mapping and sequence protocols) tensor_index.c's.
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

#define tname hop_py__tname

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

int
hop_py__tensor_rank(TensorObject *o)
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
                       hop_py__tensor_text(self, buf, sizeof buf), what);
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

/* Beside them, the last few whose runtime tensor can hold a new result
 * (hop_tensor_recyclable: its only reference, one small block, no view):
 * `a + b` then computes into the block of the last result that died, and
 * takes neither an object nor a block from a free list (tensor_dispatch.c
 * run_concrete).  At most HOP_PY_WARM_MAX blocks of 8 KiB are kept. */
TensorObject *hop_py__warm[HOP_PY_WARM_MAX];
int hop_py__nwarm;

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

void
hop_py__tensor_free(TensorObject *o)
{
    if (nfree < FREELIST_MAX)
        freelist[nfree++] = o;
    else
        PyObject_Free(o);
}

void
hop_py__warm_drop(void)
{
    while (hop_py__nwarm > 0) {
        TensorObject *o = hop_py__warm[--hop_py__nwarm];
        hop_tensor_release(o->t);
        o->t = NULL;
        hop_py__tensor_free(o);
    }
}

static void
tensor_dealloc(TensorObject *self)
{
    if (self->weakreflist != NULL) {
        PyObject_ClearWeakRefs((PyObject *)self);
        self->weakreflist = NULL;
    }
    if (hop_py__nwarm < HOP_PY_WARM_MAX && self->owner == NULL && self->base == NULL &&
        self->viewof == NULL && hop_tensor_recyclable(self->t)) {
        hop_py__warm[hop_py__nwarm++] = self;
        return;
    }
    hop_tensor_release(self->t);
    self->t = NULL;
    Py_CLEAR(self->owner);
    Py_CLEAR(self->base);
    if (self->viewof != NULL)
        HOP_PY_TENSOR(self->viewof)->nviews--;
    Py_CLEAR(self->viewof);
    hop_py__tensor_free(self);
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
        return hop_py__binary(HOP_OP_##op, a, b);                                                  \
    }
HOP_PY_NB_BINARY(HOP_PY_NB_FN)
#undef HOP_PY_NB_FN

static PyObject *
nb_power(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    return hop_py__binary(HOP_OP_pow, a, b);
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
        return PyUnicode_FromString(hop_py__tensor_text(HOP_PY_TENSOR(o), buf, sizeof buf));
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
    return hop_py__binary(ops[cmp], a, b);
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
                     what, hop_py__tensor_text(self, buf, sizeof buf));
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

int
hop_py__bool_hook_set(void)
{
    return bool_hook != NULL;
}

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

/* _C._restride(t, strides): a new tensor over concrete t's memory with t's
 * sizes and offset and these strides (in elements), which may differ from
 * t's only where they move nothing: on a dim of size 1, or anywhere in an
 * empty tensor.  hop.numpy gives a view NumPy's strides there (a reshape's
 * size-1 dims), which NumPy users read (strides, flags). */
PyObject *
hop_py__restride(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !HOP_PY_IS_TENSOR(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_restride(): expected a Tensor and a tuple of ints");
        return NULL;
    }
    hop_tensor *t = HOP_PY_TENSOR(args[0])->t;
    if (t == NULL) {
        PyErr_SetString(hop_py_TraceError, "_restride(): the tensor is traced");
        return NULL;
    }
    if (PyTuple_GET_SIZE(args[1]) != t->rank) {
        PyErr_Format(PyExc_ValueError, "_restride(): %zd strides for a tensor of %d dims",
                     PyTuple_GET_SIZE(args[1]), t->rank);
        return NULL;
    }
    int64_t strides[HOP_MAX_RANK];
    bool empty = hop_tensor_numel(t) == 0;
    for (int d = 0; d < t->rank; d++) {
        if (hop_py__to_int64("_restride", "strides", PyTuple_GET_ITEM(args[1], d), &strides[d]) <
            0)
            return NULL;
        if (strides[d] < 0 || (strides[d] != t->strides[d] && t->sizes[d] != 1 && !empty)) {
            PyErr_Format(PyExc_ValueError,
                         "_restride(): stride %lld of dim %d (size %lld) would move its elements",
                         (long long)strides[d], d, (long long)t->sizes[d]);
            return NULL;
        }
    }
    return hop_py_tensor_new(hop_tensor_view(t, t->rank, t->sizes, strides, t->offset));
}

/* _C._hollow(t): concrete t made a stand-in that holds no memory of another
 * object: the same dtype and sizes, every stride 0 over one zero element of
 * its own, no base.  hop.compile hollows the captured tensor of an ndarray
 * of the function's environment once the plan is made (the plan is given
 * a tensor over the array's memory at each call instead): a tensor over the
 * array's memory would hold a reference NumPy's resize counts.  The stand-in
 * stays where the trace keeps its captures (names, explain()), never run. */
PyObject *
hop_py__hollow(PyObject *mod, PyObject *o)
{
    (void)mod;
    if (!HOP_PY_IS_TENSOR(o) || HOP_PY_TENSOR(o)->t == NULL) {
        PyErr_Format(PyExc_TypeError, "_hollow(): expected a concrete Tensor, got %.100s",
                     tname(o));
        return NULL;
    }
    TensorObject *self = HOP_PY_TENSOR(o);
    hop_tensor *t = self->t;
    int64_t zero[HOP_MAX_RANK] = {0};
    hop_tensor *one = hop_tensor_zeros(t->dtype, 0, NULL);
    hop_tensor *h = one != NULL ? hop_tensor_view(one, t->rank, t->sizes, zero, 0) : NULL;
    if (one != NULL)
        hop_tensor_release(one);
    if (h == NULL)
        return hop_py_raise();
    self->t = h;
    hop_tensor_release(t);
    Py_CLEAR(self->base);
    Py_RETURN_NONE;
}

/* _C._meta_text(t): the `f32[2, 3]` text of t's metadata (ops' meta
 * printer, hop_meta_print), for the Python layer's messages: one spelling of
 * a tensor in every layer. */
PyObject *
hop_py__meta_text(PyObject *mod, PyObject *o)
{
    if (!HOP_PY_IS_TENSOR(o)) {
        PyErr_Format(PyExc_TypeError, "_meta_text(): expected a Tensor, got %.100s", tname(o));
        return NULL;
    }
    char buf[1024]; /* long symbolic sizes are cut, as in every message */
    return PyUnicode_FromString(hop_py__tensor_text(HOP_PY_TENSOR(o), buf, sizeof buf));
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
                     (long long)hop_tensor_numel(self->t),
                     hop_py__tensor_text(self, buf, sizeof buf));
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
                 what, hop_py__tensor_text(self, buf, sizeof buf));
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
                     hop_py__tensor_text(HOP_PY_TENSOR(o), buf, sizeof buf));
        return NULL;
    }
    return nb_int(o);
}

static PyObject *
nb_floor_divide(PyObject *a, PyObject *b)
{
    return hop_py__binary(HOP_OP_floor_divide, a, b);
}

static PyObject *
nb_remainder(PyObject *a, PyObject *b)
{
    return hop_py__binary(HOP_OP_remainder, a, b);
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
    int rank = hop_py__tensor_rank(self);
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
    int rank = hop_py__tensor_rank(self);
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
                  hop_py__tensor_text(self, buf, sizeof buf));
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

bool
hop_py__np_zero_strides(const hop_tensor *t)
{
    return hop_tensor_numel(t) == 0 && hop_storage_nbytes(t->storage) == 0;
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

PyObject *
hop_py__call_with_self(PyObject *handler, PyObject *self, PyObject *args, PyObject *kwargs)
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
    return hop_py__call_with_self(numpy_handler("tensor_array_ufunc", &np_ufunc_handler), self,
                                  args, kwargs);
}

/* np.sum(t), np.concatenate([t, ...]): hop.numpy's functions. */
static PyObject *
m_array_function(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return hop_py__call_with_self(numpy_handler("tensor_array_function", &np_function_handler),
                                  self, args, kwargs);
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
        ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !hop_tensor_is_f_contiguous(t)) ||
        ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c_contig &&
         !hop_tensor_is_f_contiguous(t))) {
        PyErr_SetString(PyExc_BufferError, "hop.Tensor: the tensor is not contiguous");
        return -1;
    }
    size_t esize = hop_dtype_size(t->dtype);
    Py_ssize_t *geo = NULL;
    if (t->rank > 0) {
        geo = PyMem_RawMalloc(2 * (size_t)t->rank * sizeof *geo);
        if (geo == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        bool zero = hop_py__np_zero_strides(t);
        for (int i = 0; i < t->rank; i++) {
            geo[i] = (Py_ssize_t)t->sizes[i];
            geo[t->rank + i] = zero ? 0 : (Py_ssize_t)(t->strides[i] * (int64_t)esize);
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
    PyMem_RawFree(view->internal);
}

static PyBufferProcs tensor_as_buffer = {
    .bf_getbuffer = (getbufferproc)tensor_getbuffer,
    .bf_releasebuffer = (releasebufferproc)tensor_releasebuffer,
};

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
    .tp_repr = hop_py__tensor_repr,
    .tp_as_number = &tensor_as_number,
    .tp_as_sequence = &hop_py__tensor_as_sequence,
    .tp_as_mapping = &hop_py__tensor_as_mapping,
    .tp_as_buffer = &tensor_as_buffer,
    .tp_richcompare = tensor_richcompare,
    .tp_iter = hop_py__tensor_iter,
    .tp_weaklistoffset = offsetof(TensorObject, weakreflist),
    .tp_methods = tensor_methods,
    .tp_getset = tensor_getset,
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
    if (hop_py__user_class_init(m) < 0)
        return -1;
    if (PyModule_AddObjectRef(m, "Tensor", (PyObject *)&hop_py_TensorType) < 0 ||
        PyModule_AddFunctions(m, hop_py__op_functions) < 0 ||
        PyModule_AddFunctions(m, hop_py__create_functions) < 0 ||
        PyModule_AddFunctions(m, hop_py__setitem_functions) < 0)
        return -1;
    return 0;
}
