/*
 * python/_C/symint.c - hop.SymInt: a symbolic int of a trace (a size s0,
 * an unbacked u0, an expression of them), its arithmetic (through the
 * trace's ShapeEnv) and its decisions (comparisons, bool(), int(): a guard
 * on a hint, or DataDependentError).  Only the thread tracing a SymInt's
 * trace may use it, and only while it traces (hop_py__symint_usable).
 */
#include "trace_impl.h"

#include <stdint.h>

PyObject *
hop_py__symint_new(PyObject *owner, const hop_expr *expr, hop_node *node)
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
int
hop_py__symint_usable(PyObject *o)
{
    if (!PyObject_TypeCheck(o, &hop_py_SymIntType) ||
        ((SymIntObject *)o)->owner == (PyObject *)hop_py__current)
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

/* The operands of a binary operator on a SymInt (a or b) as expressions
 * x, y of its env, s the SymInt; owner (may be NULL) as as_expr.  1; 0 when
 * one is neither an int nor a SymInt (NotImplemented); -1 with an exception
 * when a SymInt outlived its trace. */
static int
binary_operands(PyObject *a, PyObject *b, SymIntObject **s, hop_shape_env **env, const hop_expr **x,
                const hop_expr **y, PyObject **owner)
{
    *s = PyObject_TypeCheck(a, &hop_py_SymIntType) ? (SymIntObject *)a : (SymIntObject *)b;
    if (hop_py__symint_usable(a) < 0 || hop_py__symint_usable(b) < 0)
        return -1;
    *env = symint_env(*s);
    *x = as_expr(*env, a, owner);
    *y = as_expr(*env, b, owner);
    return *x != NULL && *y != NULL;
}

static PyObject *
symint_binary(PyObject *a, PyObject *b, sym_binop f)
{
    SymIntObject *s;
    hop_shape_env *env;
    const hop_expr *x, *y;
    PyObject *owner = NULL;
    int k = binary_operands(a, b, &s, &env, &x, &y, &owner);
    if (k <= 0)
        return k < 0 ? NULL : Py_NewRef(Py_NotImplemented);
    const hop_expr *r = f(env, x, y);
    return r ? hop_py__symint_new(owner, r, NULL) : hop_py_raise();
}

static PyObject *py_symint_op, *py_symint_compare; /* hop._symfloat's, imported once */

/* Whether a or b is a hop Tensor: its reflected operator answers (a SymInt's
 * operator returns NotImplemented in C, no Python call on that path). */
static bool
tensor_operand(PyObject *a, PyObject *b)
{
    return PyObject_TypeCheck(a, &hop_py_TensorType) || PyObject_TypeCheck(b, &hop_py_TensorType);
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
    if (tensor_operand(a, b))
        Py_RETURN_NOTIMPLEMENTED;
    if (hop_py__symint_usable(a) < 0 || hop_py__symint_usable(b) < 0)
        return NULL;
    PyObject *fn = hop_py__import_attr(&py_symint_op, "hop._symfloat", "symint_op");
    return fn ? PyObject_CallFunction(fn, "sOO", op, a, b) : NULL;
}

/* Whether o is an operand of SymInt arithmetic in C: an int (a bool too)
 * or a SymInt. */
static bool
int_like(PyObject *o)
{
    return PyLong_Check(o) || PyObject_TypeCheck(o, &hop_py_SymIntType);
}

/* A SymInt operator with ints and SymInts is C's; with anything else Python
 * decides (hop._symfloat.symint_op): a float makes a SymFloat, a NumPy
 * scalar is NumPy's to combine (NotImplemented: its operator calls the
 * ufunc, which the SymInt's __array_ufunc__ hands to hop.numpy), a complex
 * number takes the SymInt's value. */
static PyObject *
symint_arith(PyObject *a, PyObject *b, sym_binop f, const char *op)
{
    if (!int_like(a) || !int_like(b))
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

/* True division of ints (bools too) and SymInts (and floats) gives a float
 * (and of other operands what symint_op says). */
static PyObject *
symint_truediv(PyObject *a, PyObject *b)
{
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
    bool int_b = PyLong_Check(b); /* a bool is the int 0 or 1 */
    if (!sym_a || !int_b || m != Py_None) {
        if (!int_like(a) || !int_like(b)) /* (Python decides, as symint_arith) */
            return symint_float_op(m == Py_None ? "**" : "pow", a, b);
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
    if (hop_py__symint_usable(a) < 0)
        return NULL;
    int overflow = 0;
    long long k = PyLong_AsLongLongAndOverflow(b, &overflow);
    if (k == -1 && PyErr_Occurred())
        return NULL;
    if (overflow || k < 0)
        return symint_float_op("**", a, b);
    SymIntObject *s = (SymIntObject *)a;
    const hop_expr *r = sym_pow_int(symint_env(s), s->expr, k);
    return r ? hop_py__symint_new(s->owner, r, NULL) : hop_py_raise();
}

/* abs(s): Max(s, -s), a SymInt. */
static PyObject *
symint_abs(PyObject *a)
{
    SymIntObject *s = (SymIntObject *)a;
    if (hop_py__symint_usable(a) < 0)
        return NULL;
    hop_shape_env *env = symint_env(s);
    const hop_expr *n = hop_sym_neg(env, s->expr);
    const hop_expr *r = n ? hop_sym_max(env, s->expr, n) : NULL;
    return r ? hop_py__symint_new(s->owner, r, NULL) : hop_py_raise();
}

static PyObject *
symint_pos(PyObject *a)
{
    if (hop_py__symint_usable(a) < 0)
        return NULL;
    return Py_NewRef(a);
}

static PyObject *
symint_neg(PyObject *a)
{
    SymIntObject *s = (SymIntObject *)a;
    if (hop_py__symint_usable(a) < 0)
        return NULL;
    const hop_expr *r = hop_sym_neg(symint_env(s), s->expr);
    return r ? hop_py__symint_new(s->owner, r, NULL) : hop_py_raise();
}

/* Raises the current hop error; a data-dependent one is a conversion of a
 * value known only when the plan runs (hop._breaks: where hop.compile's
 * compiled part ends, a graph break, since eager Python has the value;
 * elsewhere DataDependentError, as always).  Returns NULL. */
static PyObject *
raise_undecided(void)
{
    if (hop_error_code() == HOP_DATA_DEPENDENT)
        return hop_py__conversion(hop_py_DataDependentError, "%s", hop_error_message());
    return hop_py_raise();
}

/* Decides a SymBool through the ShapeEnv: a hint decision adds a guard. */
static int
decide(SymIntObject *s, const hop_expr *cond, const char *what)
{
    bool v;
    if (hop_shape_env_decide(symint_env(s), cond, what, &v) != HOP_OK) {
        raise_undecided();
        return -1;
    }
    return v;
}

static PyObject *
symint_richcompare(PyObject *a, PyObject *b, int op)
{
    SymIntObject *s;
    hop_shape_env *env;
    const hop_expr *x, *y;
    int k = binary_operands(a, b, &s, &env, &x, &y, NULL);
    if (k < 0)
        return NULL;
    if (k == 0) {
        /* A float (exactly, as Python compares an int with one), a complex
         * number, a NumPy scalar (NumPy's: NotImplemented), an int past
         * int64: Python decides (hop._symfloat.symint_compare). */
        static const char *const names[] = {"<", "<=", "==", "!=", ">", ">="};
        if (tensor_operand(a, b))
            Py_RETURN_NOTIMPLEMENTED;
        PyObject *fn = hop_py__import_attr(&py_symint_compare, "hop._symfloat", "symint_compare");
        return fn ? PyObject_CallFunction(fn, "sOO", names[op], a, b) : NULL;
    }
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
    if (hop_py__symint_usable(a) < 0)
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
    if (hop_py__symint_usable(a) < 0)
        return NULL;
    hop_shape_env *env = symint_env(s);
    size_t n = hop_shape_env_nsymbols(env);
    int64_t *hints = PyMem_RawCalloc(n + 1, sizeof *hints);
    if (hints == NULL)
        return PyErr_NoMemory();
    for (size_t i = 0; i < n; i++)
        if (!hop_symbol_hint(hop_shape_env_symbol(env, i), &hints[i]))
            hints[i] = HOP_UNBOUND;
    int64_t v;
    hop_status st = hop_expr_eval(s->expr, hints, n, &v);
    PyMem_RawFree(hints);
    if (st != HOP_OK) {
        char e[128];
        hop_expr_print(s->expr, e, sizeof e);
        return hop_py__conversion(hop_py_DataDependentError,
                                  "int(%s): the value depends on data (an unbacked symbol); it "
                                  "is only known at run time",
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
    return hop_py__user_text("symint_str", a, symint_expr_text(a));
}

static PyObject *
symint_repr(PyObject *a)
{
    char e[256];
    hop_expr_print(((SymIntObject *)a)->expr, e, sizeof e);
    return hop_py__user_text("symint_repr", a, PyUnicode_FromFormat("SymInt(%s)", e));
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

/* hash(s): hop's own code hashes the expression (interned: equal expressions
 * are the same pointer); in the user's code it is a break (hop/_breaks.py:
 * hop.compile traces with static sizes) or a TypeError, never a hash that
 * misses every int key of a set or dict (`n in {3, 4}` was False). */
static Py_hash_t
symint_hash(PyObject *a)
{
    Py_hash_t h = (Py_hash_t)((uintptr_t)((SymIntObject *)a)->expr >> 4);
    if (h == -1)
        h = -2;
    PyObject *mod = PyImport_ImportModule("hop._breaks");
    if (mod == NULL)
        return -1;
    PyObject *r = PyObject_CallMethod(mod, "symint_hash", "On", a, h);
    Py_DECREF(mod);
    if (r == NULL)
        return -1;
    Py_hash_t out = PyObject_Hash(r);
    Py_DECREF(r);
    return out;
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

/* _user_class(): int, the class of the value eagerly (the __class__ the
 * user's code sees while hop traces: _UserClass, installed at init). */
static PyObject *
symint_user_class(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return Py_NewRef((PyObject *)&PyLong_Type);
}

/* np.add(n, 1), np.float64(1.5) * n, np.maximum(n, 2): hop.numpy's ufuncs
 * and functions, which give NumPy's scalars (NumPy's own object loop gave
 * Python ints, and wrapped nothing at int64's end). */
static PyObject *np_ufunc_handler, *np_function_handler;

static PyObject *
m_array_ufunc(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return hop_py__call_with_self(
        hop_py__import_attr(&np_ufunc_handler, "hop.numpy._ufuncs", "symint_array_ufunc"), self,
        args, kwargs);
}

static PyObject *
m_array_function(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return hop_py__call_with_self(
        hop_py__import_attr(&np_function_handler, "hop.numpy._funcs", "symint_array_function"),
        self, args, kwargs);
}

/* clang-format off */
static PyMethodDef symint_methods[] = {
    {"__array_ufunc__", (PyCFunction)(void (*)(void))m_array_ufunc, METH_VARARGS | METH_KEYWORDS,
     HOP_PY_SIG("__array_ufunc__($self, ufunc, method, /, *inputs, **kwargs)")
     "NumPy's ufuncs on a SymInt: hop.numpy's, with NumPy's scalars."},
    {"__array_function__", (PyCFunction)(void (*)(void))m_array_function,
     METH_VARARGS | METH_KEYWORDS,
     HOP_PY_SIG("__array_function__($self, func, types, args, kwargs, /)")
     "NumPy's functions on a SymInt: hop.numpy's."},
    {"_user_class", symint_user_class, METH_NOARGS,
     "_user_class(): int, the class of the value eagerly: while hop traces, the user's code "
     "sees it as x.__class__ (isinstance(n, int) is True) and hop.compile's type(n)."},
    {"__format__", (PyCFunction)symint_format, METH_O,
     HOP_PY_SIG("__format__($self, spec, /)") "format(s, spec): the int's format in the user's "
                                              "code of a hop.compile trace (as str())."},
    {NULL, NULL, 0, NULL},
};
/* clang-format on */

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

int
hop_py_symint_arg(PyObject *o, hop_arg *out)
{
    if (hop_py__symint_usable(o) < 0)
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
    if (hop_py__symint_usable(o) < 0)
        return NULL;
    SymIntObject *s = (SymIntObject *)o;
    if (hop_expr_is_bool(s->expr))
        return Py_NewRef(o);
    hop_shape_env *env = symint_env(s);
    const hop_expr *ne = hop_sym_ne(env, s->expr, hop_sym_const(env, 0));
    return ne ? hop_py__symint_new(s->owner, ne, NULL) : hop_py_raise();
}

static PyMethodDef symint_functions[] = {
    {"_sym_truth", py_sym_truth, METH_O, "_sym_truth(s): the SymBool s != 0, undecided."},
    {NULL, NULL, 0, NULL},
};

int
hop_py__symint_init(PyObject *module)
{
    if (PyType_Ready(&hop_py_SymIntType) < 0 ||
        PyModule_AddObjectRef(module, "SymInt", (PyObject *)&hop_py_SymIntType) < 0)
        return -1;
    /* isinstance(n, int) of a size or an item() is True in the user's code
     * of a trace, as eagerly (hop's and NumPy's code see the real class) */
    PyObject *fn = PyObject_GetAttrString((PyObject *)&hop_py_SymIntType, "_user_class");
    PyObject *cls = fn != NULL ? hop_py__user_class_new(fn) : NULL;
    Py_XDECREF(fn);
    if (cls == NULL || PyDict_SetItemString(hop_py_SymIntType.tp_dict, "__class__", cls) < 0) {
        Py_XDECREF(cls);
        return -1;
    }
    Py_DECREF(cls);
    PyType_Modified(&hop_py_SymIntType);
    return PyModule_AddFunctions(module, symint_functions);
}
