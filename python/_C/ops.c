/*
 * python/_C/ops.c - the ops of the op table as methods of hop.Tensor and as
 * functions of the module, with PyTorch's names and signatures:
 * t.sum(dim=None, keepdim=False) and hop.sum(input, dim=None, keepdim=False),
 * t.reshape(*shape) and hop.reshape(input, shape), ...  Each builds its
 * operands in the op table's order (hop/ops.h) and calls hop_py_run_op, so
 * every one of them runs eagerly or traces.
 */
#include "tensor_impl.h"

#define tname hop_py__tname

/* --------------------------------------------------------- op functions */

/* A two-value op in its named forms t.add(o) and hop.add(a, b): a TypeError
 * when an operand is neither a Tensor nor a number. */
static PyObject *
binary_named(const char *fname, hop_op op, PyObject *a, PyObject *b)
{
    hop_py_opnd args[2];
    PyObject *tmp[2] = {NULL, NULL};
    if (hop_py__value_arg(fname, "input", a, &args[0], &tmp[0]) < 0 ||
        hop_py__value_arg(fname, "other", b, &args[1], &tmp[1]) < 0) {
        Py_XDECREF(tmp[0]);
        Py_XDECREF(tmp[1]);
        return NULL;
    }
    return hop_py__run_and_drop(op, args, 2, tmp, 2);
}

/* clang-format off */
/* One-tensor ops: t.sin() and hop.sin(t).  X(name, what, operand, result) */
#define HOP_PY_UNARY_OPS(X)                                                                        \
    X(neg, "-x, elementwise.", "hop.tensor([1.0, -2.0])", "hop.tensor([-1.,  2.])")               \
    X(abs, "|x|, elementwise.", "hop.tensor([-1.5, 2.0])", "hop.tensor([1.5, 2. ])")              \
    X(exp, "e ** x, elementwise (an int tensor gives float32).", "hop.tensor([0.0, 0.5])",       \
      "hop.tensor([1.       , 1.6487212])")                                                        \
    X(log, "The natural logarithm, elementwise (an int tensor gives float32).",                    \
      "hop.tensor([1.0, 4.0])", "hop.tensor([0.       , 1.3862944])")                             \
    X(sin, "The sine (radians), elementwise (an int tensor gives float32).",                       \
      "hop.tensor([0.0, 1.5])", "hop.tensor([0.      , 0.997495])")                               \
    X(cos, "The cosine (radians), elementwise (an int tensor gives float32).",                     \
      "hop.tensor([0.0, 3.0])", "hop.tensor([ 1.       , -0.9899925])")                           \
    X(tanh, "The hyperbolic tangent, elementwise (an int tensor gives float32).",                  \
      "hop.tensor([0.0, 1.0])", "hop.tensor([0.       , 0.7615942])")                             \
    X(sigmoid, "1 / (1 + e ** -x), elementwise (an int tensor gives float32).",                    \
      "hop.tensor([0.0, 2.0])", "hop.tensor([0.5     , 0.880797])")                               \
    X(relu, "max(x, 0), elementwise.", "hop.tensor([-1.0, 2.0])", "hop.tensor([0., 2.])")         \
    X(sqrt, "The square root, elementwise (an int tensor gives float32).",                         \
      "hop.tensor([4.0, 2.0])", "hop.tensor([2.       , 1.4142135])")                             \
    X(logical_not, "not x, elementwise, as a bool tensor (nonzero is true).",                      \
      "hop.tensor([True, False])", "hop.tensor([False,  True])")                                  \
    X(clone, "A copy with its own memory (C-contiguous).", "hop.tensor([1, 2])",                  \
      "hop.tensor([1, 2])")                                                                        \
    X(nonzero, "The indices of the nonzero elements: an int64 tensor [n, rank], one row per "     \
      "element in C order.  Its size n is known only at run time (an unbacked symbol while "      \
      "tracing).", "hop.tensor([0, 3, 0, 5])", "hop.tensor([[1],\n            [3]])")        \
    X(sign, "The sign (-1, 0 or 1; NaN stays NaN), elementwise, in x's dtype.",                    \
      "hop.tensor([-2.0, 0.0, 3.0])", "hop.tensor([-1.,  0.,  1.])")                               \
    X(floor, "The largest integer not above x, elementwise (ints unchanged).",                     \
      "hop.tensor([-1.5, 2.5])", "hop.tensor([-2.,  2.])")                                         \
    X(ceil, "The smallest integer not below x, elementwise (ints unchanged).",                     \
      "hop.tensor([-1.5, 2.5])", "hop.tensor([-1.,  3.])")                                         \
    X(round, "x rounded to the nearest integer, halves to even, elementwise.",                     \
      "hop.tensor([0.5, 1.5, -2.5])", "hop.tensor([ 0.,  2., -2.])")                               \
    X(expm1, "e ** x - 1, elementwise, exact near 0 (an int tensor gives float32).",               \
      "hop.tensor([0.0, 1e-08])", "hop.tensor([0.e+00, 1.e-08])")                                  \
    X(log1p, "log(1 + x), elementwise, exact near 0 (an int tensor gives float32).",               \
      "hop.tensor([0.0, 1.0])", "hop.tensor([0.       , 0.6931472])")                              \
    X(log2, "The base-2 logarithm, elementwise (an int tensor gives float32).",                    \
      "hop.tensor([1.0, 8.0])", "hop.tensor([0., 3.])")                                            \
    X(log10, "The base-10 logarithm, elementwise (an int tensor gives float32).",                  \
      "hop.tensor([1.0, 10.0])", "hop.tensor([0., 1.])")                                             \
    X(exp2, "2 ** x, elementwise (an int tensor gives float32).", "hop.tensor([0.0, 3.0])",        \
      "hop.tensor([1., 8.])")                                                                      \
    X(tan, "The tangent (radians), elementwise (an int tensor gives float32).",                    \
      "hop.tensor([0.0, 1.0])", "hop.tensor([0.       , 1.5574077])")                              \
    X(arctan, "The arctangent in radians, elementwise (an int tensor gives float32).",             \
      "hop.tensor([0.0, 1.0])", "hop.tensor([0.       , 0.7853982])")                              \
    X(bitwise_not, "~x, elementwise: the bits flipped (an int or bool tensor; bool: not).",        \
      "hop.tensor([0, 5])", "hop.tensor([-1, -6])")                                               \
    X(sinh, "The hyperbolic sine, elementwise (an int tensor gives float32).",                     \
      "hop.tensor([0.0, 1.0])", "hop.tensor([0.       , 1.1752012])")                                                            \
    X(cosh, "The hyperbolic cosine, elementwise (an int tensor gives float32).",                   \
      "hop.tensor([0.0, 1.0])", "hop.tensor([1.       , 1.5430807])")                                                            \
    X(arcsin, "The arcsine in radians, elementwise (an int tensor gives float32).",                \
      "hop.tensor([0.0, 1.0])", "hop.tensor([0.       , 1.5707964])")                                                          \
    X(arccos, "The arccosine in radians, elementwise (an int tensor gives float32).",              \
      "hop.tensor([0.0, 1.0])", "hop.tensor([1.5707964, 0.       ])")                                                          \
    X(arcsinh, "The inverse hyperbolic sine, elementwise (an int tensor gives float32).",          \
      "hop.tensor([0.0, 1.0])", "hop.tensor([0.       , 0.8813736])")                                                         \
    X(arccosh, "The inverse hyperbolic cosine, elementwise (an int tensor gives float32).",        \
      "hop.tensor([1.0, 2.0])", "hop.tensor([0.      , 1.316958])")                                                         \
    X(arctanh, "The inverse hyperbolic tangent, elementwise (an int tensor gives float32).",       \
      "hop.tensor([0.0, 0.5])", "hop.tensor([0.        , 0.54930615])")                                                         \
    X(cbrt, "The cube root, elementwise (an int tensor gives float32).",                           \
      "hop.tensor([8.0, -27.0], dtype=hop.float64)", "hop.tensor([ 2., -3.], dtype=hop.float64)")                                                          \
    X(i0, "The modified Bessel function of the first kind of order 0, elementwise (an int "      \
      "tensor gives float32).", "hop.tensor([0.0, 1.0], dtype=hop.float64)",                       \
      "hop.tensor([1.        , 1.26606588], dtype=hop.float64)")                                   \
    X(i1, "The modified Bessel function of the first kind of order 1, elementwise (an int "      \
      "tensor gives float32).", "hop.tensor([0.0, 1.0])", "hop.tensor([0.       , 0.5651591])")
/* clang-format on */

#define HOP_PY_DEF_UNARY(name, ...)                                                                \
    static PyObject *m_##name(PyObject *self, PyObject *unused)                                    \
    {                                                                                              \
        return hop_py__unary(HOP_OP_##name, self);                                                 \
    }                                                                                              \
    static PyObject *f_##name(PyObject *mod, PyObject *x)                                          \
    {                                                                                              \
        if (hop_py__check_tensor_arg(#name, "input", x) < 0)                                       \
            return NULL;                                                                           \
        return hop_py__unary(HOP_OP_##name, x);                                                    \
    }
HOP_PY_UNARY_OPS(HOP_PY_DEF_UNARY)
#undef HOP_PY_DEF_UNARY

/* Two-value ops: t.add(other) and hop.add(input, other), scalars allowed.
 * X(name, what, input, other, result) */
/* clang-format off */
#define HOP_PY_BROADCAST " Operands broadcast as NumPy's do; either may be a Python number."
#define HOP_PY_COMPARE(op) "input " op " other, elementwise, as a bool tensor." HOP_PY_BROADCAST
#define HOP_PY_BINARY_OPS(X)                                                                       \
    X(add, "input + other, elementwise." HOP_PY_BROADCAST, "hop.tensor([1.0, 2.0])", "3.0",      \
      "hop.tensor([4., 5.])")                                                                      \
    X(sub, "input - other, elementwise." HOP_PY_BROADCAST, "hop.tensor([1.0, 2.0])",             \
      "hop.tensor([[1.0], [2.0]])", "hop.tensor([[ 0.,  1.],\n            [-1.,  0.]])")        \
    X(mul, "input * other, elementwise." HOP_PY_BROADCAST, "hop.tensor([1.0, 2.0])",             \
      "hop.tensor([3.0, 4.0])", "hop.tensor([3., 8.])")                                           \
    X(div, "input / other, elementwise: true division (int operands give float32)."              \
      HOP_PY_BROADCAST, "hop.tensor([1, 3])", "2", "hop.tensor([0.5, 1.5])")                      \
    X(pow, "input ** other, elementwise." HOP_PY_BROADCAST, "hop.tensor([2, 3])", "2",           \
      "hop.tensor([4, 9])")                                                                        \
    X(maximum, "The larger of input and other, elementwise (NaN if either is NaN)."               \
      HOP_PY_BROADCAST, "hop.tensor([1, 5])", "hop.tensor([3, 2])", "hop.tensor([3, 5])")       \
    X(minimum, "The smaller of input and other, elementwise (NaN if either is NaN)."              \
      HOP_PY_BROADCAST, "hop.tensor([1.0, 5.0])", "2.0", "hop.tensor([1., 2.])")                 \
    X(eq, HOP_PY_COMPARE("=="), "hop.tensor([1, 2])", "2", "hop.tensor([False,  True])")           \
    X(ne, HOP_PY_COMPARE("!="), "hop.tensor([1.0, 2.0])", "2.0", "hop.tensor([ True, False])")     \
    X(lt, HOP_PY_COMPARE("<"), "hop.tensor([1, 2])", "2", "hop.tensor([ True, False])")            \
    X(le, HOP_PY_COMPARE("<="), "hop.tensor([1, 2])", "1", "hop.tensor([ True, False])")           \
    X(gt, HOP_PY_COMPARE(">"), "hop.tensor([1, 2])", "1", "hop.tensor([False,  True])")            \
    X(ge, HOP_PY_COMPARE(">="), "hop.tensor([1, 2])", "2", "hop.tensor([False,  True])")           \
    X(logical_and, "input and other, elementwise, as a bool tensor (nonzero is true)."           \
      HOP_PY_BROADCAST, "hop.tensor([1, 0])", "hop.tensor([True, True])",                        \
      "hop.tensor([ True, False])")                                                                \
    X(logical_or, "input or other, elementwise, as a bool tensor (nonzero is true)."             \
      HOP_PY_BROADCAST, "hop.tensor([True, False])", "False", "hop.tensor([ True, False])")     \
    X(matmul, "The matrix product, as NumPy's matmul: 1-D operands are vectors, leading dims "    \
      "of 3-D and larger ones are batch dims and broadcast.", "hop.tensor([[1.0, 2.0]])",         \
      "hop.tensor([[3.0], [4.0]])", "hop.tensor([[11.]])") \
    X(floor_divide,                                                                                \
      "input // other, elementwise, rounding toward minus infinity as Python does.",               \
      "hop.tensor([7, -7])", "2", "hop.tensor([ 3, -4])")                                          \
    X(remainder, "input % other, elementwise, with the sign of other as Python's.",                \
      "hop.tensor([7, -7])", "3", "hop.tensor([1, 2])")                                            \
    X(bitwise_and, "input & other, elementwise (int or bool tensors).", "hop.tensor([12, 10])",    \
      "6", "hop.tensor([4, 2])")                                                                   \
    X(bitwise_or, "input | other, elementwise (int or bool tensors).", "hop.tensor([12, 10])",     \
      "6", "hop.tensor([14, 14])")                                                                 \
    X(bitwise_xor, "input ^ other, elementwise (int or bool tensors).", "hop.tensor([12, 10])",    \
      "6", "hop.tensor([10, 12])")                                                                 \
    X(arctan2, "The angle of the point (other, input) in radians, elementwise (int operands "     \
      "give float32)." HOP_PY_BROADCAST, "hop.tensor([1.0, -1.0])", "-1.0", "hop.tensor([ 2.3561945, -2.3561945])")            \
    X(hypot, "sqrt(input ** 2 + other ** 2) without overflow, elementwise (int operands give "    \
      "float32)." HOP_PY_BROADCAST, "hop.tensor([3.0, 5.0])", "4.0", "hop.tensor([5.       , 6.4031243])")                     \
    X(copysign, "|input| with the sign of other, elementwise (int operands give float32)."        \
      HOP_PY_BROADCAST, "hop.tensor([1.0, -2.0])", "-0.0", "hop.tensor([-1., -2.])")                           \
    X(fmod, "C's remainder: input - other * trunc(input / other), with the sign of input "        \
      "(an integer divisor of 0 gives 0)." HOP_PY_BROADCAST, "hop.tensor([7, -7])", "3",          \
      "hop.tensor([ 1, -1])")                                                                                     \
    X(nextafter, "The next float after input toward other, elementwise (int operands give "       \
      "float32)." HOP_PY_BROADCAST, "hop.tensor([1.0, 1.0])", "hop.tensor([2.0, 0.0])",           \
      "hop.tensor([1.0000001 , 0.99999994])")                                                                                \
    X(ldexp, "input * 2 ** other with other read as an integer, elementwise (int operands "       \
      "give float32)." HOP_PY_BROADCAST, "hop.tensor([1.0, 3.0])", "hop.tensor([3, -1])",         \
      "hop.tensor([8. , 1.5])")                                                                                    \
    X(logaddexp, "log(exp(input) + exp(other)) without overflow, elementwise, as NumPy's "      \
      "logaddexp (int operands give float32)." HOP_PY_BROADCAST, "hop.tensor([0.0, 1.0])", "0.0",  \
      "hop.tensor([0.6931472, 1.3132617])")                                                        \
    X(logaddexp2, "log2(2 ** input + 2 ** other) without overflow, elementwise, as NumPy's "    \
      "logaddexp2 (int operands give float32)." HOP_PY_BROADCAST, "hop.tensor([1.0, 3.0])",      \
      "1.0", "hop.tensor([2.      , 3.321928])")                                               \
    X(float_power, "input ** other, elementwise, each element by the C library's pow (powf for "  \
      "float32), as NumPy's float_power computes it (int operands give float32)."               \
      HOP_PY_BROADCAST, "hop.tensor([2.0, 9.0])", "0.5", "hop.tensor([1.4142135, 3.       ])")   \
    X(gcd, "The greatest common divisor of |input| and |other|, elementwise (int tensors)."       \
      HOP_PY_BROADCAST, "hop.tensor([12, -18])", "8", "hop.tensor([4, 2])")                                     \
    X(lcm, "The least common multiple of |input| and |other|, elementwise (int tensors)."         \
      HOP_PY_BROADCAST, "hop.tensor([4, -6])", "10", "hop.tensor([20, 30])")                                      \
    X(left_shift, "input << other, elementwise (int tensors; a count outside [0, width) "         \
      "gives 0)." HOP_PY_BROADCAST, "hop.tensor([1, 3])", "2", "hop.tensor([ 4, 12])")                     \
    X(right_shift, "input >> other, elementwise, arithmetic for signed ints (int tensors; a "     \
      "count outside [0, width) gives 0, or -1 for a negative input)." HOP_PY_BROADCAST,        \
      "hop.tensor([8, -8])", "2", "hop.tensor([ 2, -2])")
/* clang-format on */

static const char *const binary_names[] = {"input", "other"};

#define HOP_PY_DEF_BINARY(name, ...)                                                               \
    static PyObject *m_##name(PyObject *self, PyObject *other)                                     \
    {                                                                                              \
        return binary_named(#name, HOP_OP_##name, self, other);                                    \
    }                                                                                              \
    static PyObject *f_##name(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,              \
                              PyObject *kwnames)                                                   \
    {                                                                                              \
        PyObject *a[2];                                                                            \
        if (hop_py__parse_args(#name, binary_names, 2, 2, args, nargs, kwnames, a) < 0)            \
            return NULL;                                                                           \
        return binary_named(#name, HOP_OP_##name, a[0], a[1]);                                     \
    }
HOP_PY_BINARY_OPS(HOP_PY_DEF_BINARY)
#undef HOP_PY_DEF_BINARY

/* --------------------------------------------- ops of (input, args...) */

/*
 * An op whose Python forms are t.name(args...) and hop.name(input, args...),
 * the same arguments after input: one method_form and one function_form
 * parse them for every such op, so that the two forms cannot drift apart.
 * names[0] is "input"; n arguments follow it, the first nreq required.  run
 * makes the op's operands from x and the parsed arguments (a[i] borrowed,
 * NULL when absent) and runs it.
 */
enum { MAX_FORM_ARGS = 4 };

/* How run_ints makes an argument after input an operand. */
typedef enum int_arg {
    INT_REQUIRED, /* an int */
    INT_DEFAULT,  /* an int; absent: the form's default */
    INT_OR_NONE,  /* an int; absent or None: NONE */
    SIZE,         /* an int or a SymInt */
    SIZE_OR_NONE, /* an int or a SymInt; absent or None: NONE */
} int_arg;

typedef struct op_form op_form;
struct op_form {
    const char *name;
    hop_op op;
    const char *const *names;
    int n, nreq;
    PyObject *(*run)(const op_form *f, PyObject *x, PyObject *const *a);
    int_arg kinds[MAX_FORM_ARGS];    /* run_ints: each argument's kind */
    int64_t defaults[MAX_FORM_ARGS]; /* run_ints: an INT_DEFAULT's value */
};

static PyObject *
method_form(const op_form *f, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
            PyObject *kwnames)
{
    PyObject *a[MAX_FORM_ARGS];
    if (hop_py__parse_args(f->name, f->names + 1, f->n, f->nreq, args, nargs, kwnames, a) < 0)
        return NULL;
    return f->run(f, self, a);
}

static PyObject *
function_form(const op_form *f, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[MAX_FORM_ARGS + 1];
    if (hop_py__parse_args(f->name, f->names, f->n + 1, f->nreq + 1, args, nargs, kwnames, a) < 0 ||
        hop_py__check_tensor_arg(f->name, "input", a[0]) < 0)
        return NULL;
    return f->run(f, a[0], a + 1);
}

/* m_name and f_name of the op_form name##_form. */
#define HOP_PY_DEF_METHOD(name)                                                                    \
    static PyObject *m_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs,             \
                              PyObject *kwnames)                                                   \
    {                                                                                              \
        return method_form(&name##_form, self, args, nargs, kwnames);                              \
    }
#define HOP_PY_DEF_FUNCTION(name)                                                                  \
    static PyObject *f_##name(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,              \
                              PyObject *kwnames)                                                   \
    {                                                                                              \
        return function_form(&name##_form, args, nargs, kwnames);                                  \
    }
#define HOP_PY_DEF_FORMS(name, ...) HOP_PY_DEF_METHOD(name) HOP_PY_DEF_FUNCTION(name)

/* The ops whose arguments after input are ints and sizes, by their kinds. */
static PyObject *
run_ints(const op_form *f, PyObject *x, PyObject *const *a)
{
    hop_py_opnd args[MAX_FORM_ARGS + 1];
    hop_py__set_tensor_opnd(&args[0], x);
    for (int i = 0; i < f->n; i++) {
        hop_py_opnd *o = &args[i + 1];
        const char *arg = f->names[i + 1];
        int_arg kind = f->kinds[i];
        int rc = 0;
        if (a[i] == NULL && kind == INT_DEFAULT) {
            o->kind = HOP_PY_INT;
            o->u.i = f->defaults[i];
        } else if (kind == INT_OR_NONE && (a[i] == NULL || a[i] == Py_None)) {
            o->kind = HOP_PY_NONE;
        } else if (kind == SIZE) {
            rc = hop_py__to_size_opnd(f->name, arg, a[i], o);
        } else if (kind == SIZE_OR_NONE) {
            rc = hop_py__to_opt_size_opnd(f->name, arg, a[i], o);
        } else {
            rc = hop_py__to_int_opnd(f->name, arg, a[i], o);
        }
        if (rc < 0)
            return NULL;
    }
    return hop_py_run_op(f->op, args, (size_t)f->n + 1);
}

/* sum mean amax amin prod any all (dim: None, int or tuple) and argmax
 * argmin (dim: None or int), then keepdim. */
static PyObject *
run_reduce(const op_form *f, PyObject *x, PyObject *const *a)
{
    const char *fname = f->name;
    hop_op op = f->op;
    PyObject *dim = a[0], *keepdim = a[1];
    hop_py_opnd args[3], items[HOP_MAX_RANK];
    hop_py__set_tensor_opnd(&args[0], x);
    if ((op == HOP_OP_argmax || op == HOP_OP_argmin) && dim != NULL && dim != Py_None &&
        (PyFloat_Check(dim) || !PyIndex_Check(dim))) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'dim' must be an int or None, not %.100s",
                     fname, tname(dim));
        return NULL;
    }
    if (hop_py__to_dims_opnd(fname, dim, &args[1], items) < 0)
        return NULL;
    args[2].kind = HOP_PY_BOOL;
    args[2].u.b = false;
    if (keepdim != NULL && hop_py__to_bool(fname, "keepdim", keepdim, &args[2].u.b) < 0)
        return NULL;
    return hop_py_run_op(op, args, 3);
}

/* X(name, what, input, arguments, result) */
/* clang-format off */
#define HOP_PY_OVER_DIM " over dim: an int, a tuple of ints, or None for every dim; keepdim keeps "  \
    "the reduced dims with size 1."
#define HOP_PY_REDUCE_OPS(X)                                                                       \
    X(sum, "The sum" HOP_PY_OVER_DIM, "hop.tensor([[1, 2], [3, 4]])", "1",                        \
      "hop.tensor([3, 7])")                                                                        \
    X(mean, "The mean of a float tensor" HOP_PY_OVER_DIM,                                          \
      "hop.tensor([[1.0, 2.0], [3.0, 5.0]])", "0, keepdim=True", "hop.tensor([[2. , 3.5]])")      \
    X(amax, "The largest element" HOP_PY_OVER_DIM, "hop.tensor([[1.0, 2.0], [3.0, 5.0]])",         \
      "(0, 1)", "hop.tensor(5.)")                                                                  \
    X(amin, "The smallest element" HOP_PY_OVER_DIM, "hop.tensor([[1.0, 2.0], [3.0, 5.0]])",        \
      "dim=1", "hop.tensor([1., 3.])")                                                             \
    X(argmax, "The index (int64) of the largest element along dim, an int; None: the index "       \
      "into the flattened tensor.  The first one wins a tie; keepdim keeps dim with size 1.",      \
      "hop.tensor([[1, 9], [7, 2]])", "1", "hop.tensor([1, 0])") \
    X(argmin, "The index (int64) of the smallest element along dim, an int; None: the index " \
      "into the flattened tensor.  The first one wins a tie; keepdim keeps dim with size 1.",      \
      "hop.tensor([[1, 9], [7, 2]])", "1", "hop.tensor([0, 1])")                                  \
    X(prod, "The product" HOP_PY_OVER_DIM, "hop.tensor([[1, 2], [3, 4]])", "1",                    \
      "hop.tensor([ 2, 12])")                                                                      \
    X(any, "Whether any element is nonzero, as a bool tensor," HOP_PY_OVER_DIM,                    \
      "hop.tensor([[0, 2], [0, 0]])", "1", "hop.tensor([ True, False])")                           \
    X(all, "Whether every element is nonzero, as a bool tensor," HOP_PY_OVER_DIM,                  \
      "hop.tensor([[1, 2], [0, 3]])", "1", "hop.tensor([ True, False])")
/* clang-format on */

static const char *const reduce_names[] = {"input", "dim", "keepdim"};

#define HOP_PY_REDUCE_FORM(name, ...)                                                              \
    static const op_form name##_form = {#name, HOP_OP_##name, reduce_names, 2, 0, run_reduce};     \
    HOP_PY_DEF_FORMS(name)
HOP_PY_REDUCE_OPS(HOP_PY_REDUCE_FORM)
#undef HOP_PY_REDUCE_FORM

/*
 * The sizes of a star-args method (t.reshape(2, 3), t.reshape((2, 3)),
 * t.reshape(shape=(2, 3))) as objs[0..n).
 */
static int
star_args(const char *fname, const char *kwname, PyObject *const *args, Py_ssize_t nargs,
          PyObject *kwnames, PyObject *const **objs, Py_ssize_t *n)
{
    PyObject *kw[1];
    if (hop_py__parse_kwonly(fname, &kwname, 1, args, nargs, kwnames, kw) < 0)
        return -1;
    if (kw[0] != NULL && nargs > 0) {
        PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname, kwname);
        return -1;
    }
    if (kw[0] != NULL) {
        *objs = &args[nargs];
        *n = 1;
    } else {
        *objs = args;
        *n = nargs;
    }
    return 0;
}

/* (x, list) ops: reshape view permute expand. */
static PyObject *
list_op(const char *fname, const char *argname, hop_op op, PyObject *x, PyObject *const *objs,
        Py_ssize_t n)
{
    hop_py_opnd args[2], items[HOP_MAX_RANK];
    hop_py__set_tensor_opnd(&args[0], x);
    if (n == 0) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname, argname);
        return NULL;
    }
    if (hop_py__to_shape_opnd(fname, argname, objs, n, &args[1], items) < 0)
        return NULL;
    return hop_py_run_op(op, args, 2);
}

/* X(name, argument name, what, input, sizes, result) */
/* clang-format off */
#define HOP_PY_LIST_OPS(X)                                                                         \
    X(reshape, "shape", "The same elements in C order with another shape; one size may be -1 "    \
      "(inferred).  A view when the strides allow one, else a copy.", "hop.arange(6)", "2, -1",   \
      "hop.tensor([[0, 1, 2],\n            [3, 4, 5]])")                                          \
    X(view, "shape", "A view with another shape, sharing the memory; one size may be -1.  "       \
      "hop.ShapeError when the strides do not allow it (use reshape).", "hop.arange(6)", "3, 2",   \
      "hop.tensor([[0, 1],\n            [2, 3],\n            [4, 5]])")                           \
    X(permute, "dims", "A view with the dims reordered: dim i of the result is dim dims[i].",     \
      "hop.tensor([[1, 2, 3]])", "1, 0", "hop.tensor([[1],\n            [2],\n            [3]])") \
    X(expand, "size", "A view that repeats size-1 dims to size without copying (-1 keeps a "      \
      "size; new leading dims may be added).", "hop.tensor([[1], [2]])", "-1, 3",                 \
      "hop.tensor([[1, 1, 1],\n            [2, 2, 2]])")
/* clang-format on */

#define HOP_PY_DEF_LIST(name, argname, ...)                                                        \
    static PyObject *m_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs,             \
                              PyObject *kwnames)                                                   \
    {                                                                                              \
        PyObject *const *objs;                                                                     \
        Py_ssize_t n;                                                                              \
        if (star_args(#name, argname, args, nargs, kwnames, &objs, &n) < 0)                        \
            return NULL;                                                                           \
        return list_op(#name, argname, HOP_OP_##name, self, objs, n);                              \
    }                                                                                              \
    static PyObject *f_##name(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,              \
                              PyObject *kwnames)                                                   \
    {                                                                                              \
        static const char *const names[] = {"input", argname};                                     \
        PyObject *a[2];                                                                            \
        if (hop_py__parse_args(#name, names, 2, 2, args, nargs, kwnames, a) < 0 ||                 \
            hop_py__check_tensor_arg(#name, "input", a[0]) < 0)                                    \
            return NULL;                                                                           \
        return list_op(#name, argname, HOP_OP_##name, a[0], &a[1], 1);                             \
    }
HOP_PY_LIST_OPS(HOP_PY_DEF_LIST)
#undef HOP_PY_DEF_LIST

/* (x, int...) ops: transpose(dim0, dim1), unsqueeze(dim), squeeze(dim=None),
 * select(dim, index), slice(dim=0, start=None, end=None, step=1). */
static const char *const transpose_names[] = {"input", "dim0", "dim1"};
static const char *const unsqueeze_names[] = {"input", "dim"};
static const char *const squeeze_names[] = {"input", "dim"};
static const char *const select_names[] = {"input", "dim", "index"};
static const char *const slice_names[] = {"input", "dim", "start", "end", "step"};
/* clang-format off */
static const op_form transpose_form = {"transpose", HOP_OP_transpose, transpose_names, 2, 2,
                                      run_ints, {INT_REQUIRED, INT_REQUIRED}};
static const op_form unsqueeze_form = {"unsqueeze", HOP_OP_unsqueeze, unsqueeze_names, 1, 1,
                                      run_ints, {INT_REQUIRED}};
static const op_form squeeze_form = {"squeeze", HOP_OP_squeeze, squeeze_names, 1, 0, run_ints,
                                    {INT_OR_NONE}};
static const op_form select_form = {"select", HOP_OP_select, select_names, 2, 2, run_ints,
                                   {INT_REQUIRED, SIZE}};
static const op_form slice_form = {"slice", HOP_OP_slice, slice_names, 4, 0, run_ints,
                                  {INT_DEFAULT, SIZE_OR_NONE, SIZE_OR_NONE, INT_DEFAULT},
                                  {0, 0, 0, 1}};
/* clang-format on */

/* slice has no module function: it would shadow the builtin. */
#define HOP_PY_INT_FUNCS(X)                                                                        \
    X(transpose)                                                                                   \
    X(unsqueeze)                                                                                   \
    X(squeeze)                                                                                     \
    X(select)
/* Their docstrings: X(name, signature after input, what, input, arguments,
 * result); slice's is in the method table. */
/* clang-format off */
#define HOP_PY_INT_DOCS(X)                                                                         \
    X(transpose, "dim0, dim1", "A view with dims dim0 and dim1 exchanged.",                       \
      "hop.tensor([[1, 2, 3]])", "0, 1", "hop.tensor([[1],\n            [2],\n            [3]])") \
    X(unsqueeze, "dim", "A view with a new dim of size 1 at dim (negative: from the end of the "  \
      "result).", "hop.tensor([1, 2])", "0", "hop.tensor([[1, 2]])")                              \
    X(squeeze, "dim=None", "A view without the size-1 dims (dim given: only that one, if its "    \
      "size is 1).", "hop.zeros(1, 3, 1, dtype=hop.int64)", "0",                                  \
      "hop.tensor([[0],\n            [0],\n            [0]])")                                   \
    X(select, "dim, index", "A view of index along dim, without that dim: x[..., index, ...] "    \
      "(negative index: from the end).", "hop.tensor([[1, 2], [3, 4]])", "1, 0",                  \
      "hop.tensor([1, 3])")
/* clang-format on */

HOP_PY_INT_FUNCS(HOP_PY_DEF_FORMS)
HOP_PY_DEF_METHOD(slice)

PyObject *
hop_py__to(PyObject *x, hop_dtype d)
{
    hop_py_opnd args[2];
    hop_py__set_tensor_opnd(&args[0], x);
    args[1].kind = HOP_PY_DTYPE;
    args[1].u.d = d;
    return hop_py_run_op(HOP_OP_to, args, 2);
}

static PyObject *
m_to(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dtype"};
    PyObject *a[1];
    hop_py_opnd d;
    if (hop_py__parse_args("to", names, 1, 1, args, nargs, kwnames, a) < 0 ||
        hop_py__to_dtype_opnd("to", a[0], &d) < 0)
        return NULL;
    if (d.kind == HOP_PY_NONE) {
        PyErr_SetString(PyExc_TypeError, "to(): argument 'dtype' must be a dtype, not None");
        return NULL;
    }
    return hop_py__to(self, d.u.d);
}

/* X(name, dtype, input, result) */
/* clang-format off */
#define HOP_PY_TO_METHODS(X)                                                                       \
    X(float, F32, "hop.tensor([1, 2])", "hop.tensor([1., 2.])")                                   \
    X(double, F64, "hop.tensor([1, 2])", "hop.tensor([1., 2.], dtype=hop.float64)")               \
    X(int, I32, "hop.tensor([1.5, -1.5])", "hop.tensor([ 1, -1], dtype=hop.int32)")               \
    X(long, I64, "hop.tensor([1.5])", "hop.tensor([1])")                                          \
    X(bool, BOOL, "hop.tensor([1, 0])", "hop.tensor([ True, False])")
/* clang-format on */

#define HOP_PY_DEF_TO(name, e, ...)                                                                \
    static PyObject *m_to_##name(PyObject *self, PyObject *unused)                                 \
    {                                                                                              \
        return hop_py__to(self, HOP_##e);                                                          \
    }
HOP_PY_TO_METHODS(HOP_PY_DEF_TO)
#undef HOP_PY_DEF_TO

/* cat(tensors, dim=0) and stack(tensors, dim=0). */
PyObject *
hop_py__concat(const char *fname, hop_op op, PyObject *const *args, Py_ssize_t nargs,
               PyObject *kwnames)
{
    static const char *const names[] = {"tensors", "dim"};
    PyObject *a[2], *seq;
    hop_py_opnd opnds[2], stack_items[16], *items = stack_items;
    PyObject *res = NULL;
    if (hop_py__parse_args(fname, names, 2, 1, args, nargs, kwnames, a) < 0)
        return NULL;
    if (!PyList_Check(a[0]) && !PyTuple_Check(a[0])) {
        PyErr_Format(PyExc_TypeError,
                     "%s(): argument 'tensors' must be a list or tuple of Tensors, not %.100s",
                     fname, tname(a[0]));
        return NULL;
    }
    opnds[1].kind = HOP_PY_INT;
    opnds[1].u.i = 0;
    if (a[1] != NULL && hop_py__to_int_opnd(fname, "dim", a[1], &opnds[1]) < 0)
        return NULL;
    seq = Py_NewRef(a[0]); /* a list could change under a callback otherwise */
    if (PyList_Check(seq))
        Py_SETREF(seq, PyList_AsTuple(seq));
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    if (n > 16 && (items = PyMem_RawMalloc((size_t)n * sizeof *items)) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(seq, i);
        if (!HOP_PY_IS_TENSOR(o)) {
            PyErr_Format(PyExc_TypeError,
                         "%s(): argument 'tensors' must contain Tensors, but item %zd is %.100s",
                         fname, i, tname(o));
            goto done;
        }
        hop_py__set_tensor_opnd(&items[i], o);
    }
    opnds[0].kind = HOP_PY_LIST;
    opnds[0].u.list.items = items;
    opnds[0].u.list.n = (size_t)n;
    res = hop_py_run_op(op, opnds, 2);
done:
    if (items != stack_items)
        PyMem_RawFree(items);
    Py_DECREF(seq);
    return res;
}

static PyObject *
f_cat(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return hop_py__concat("cat", HOP_OP_cat, args, nargs, kwnames);
}

static PyObject *
f_stack(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return hop_py__concat("stack", HOP_OP_stack, args, nargs, kwnames);
}

static PyObject *
f_where(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"condition", "input", "other"};
    PyObject *a[3], *tmp[3] = {NULL, NULL, NULL};
    hop_py_opnd opnds[3];
    if (hop_py__parse_args("where", names, 3, 3, args, nargs, kwnames, a) < 0)
        return NULL;
    for (int i = 0; i < 3; i++) {
        if (hop_py__value_arg("where", names[i], a[i], &opnds[i], &tmp[i]) < 0) {
            for (int k = 0; k < 3; k++)
                Py_XDECREF(tmp[k]);
            return NULL;
        }
    }
    return hop_py__run_and_drop(HOP_OP_where, opnds, 3, tmp, 3);
}

/* cumsum(dim) and cumprod(dim): dim is required, as in PyTorch. */
static const char *const scan_names[] = {"input", "dim"};
/* clang-format off */
static const op_form cumsum_form = {"cumsum", HOP_OP_cumsum, scan_names, 1, 1, run_ints,
                                    {INT_REQUIRED}};
static const op_form cumprod_form = {"cumprod", HOP_OP_cumprod, scan_names, 1, 1, run_ints,
                                     {INT_REQUIRED}};
/* clang-format on */
HOP_PY_DEF_FORMS(cumsum)
HOP_PY_DEF_FORMS(cumprod)

/* X(name, what, input, arguments, result) */
/* clang-format off */
#define HOP_PY_SCAN_DOCS(X)                                                                        \
    X(cumsum, "The running sum along dim: element i is the sum of elements 0..i (ints and "      \
      "bools sum in int64, as in PyTorch).", "hop.tensor([[1, 2], [3, 4]])", "1",                 \
      "hop.tensor([[1, 3],\n            [3, 7]])")                                               \
    X(cumprod, "The running product along dim: element i is the product of elements 0..i.",      \
      "hop.tensor([[1, 2], [3, 4]])", "0", "hop.tensor([[1, 2],\n            [3, 8]])")
/* clang-format on */

/* One operand of _C._op: a Tensor, a SymInt, a bool, an int, a float, None,
 * a hop dtype, or a list/tuple of those (items from *pool). */
static int
op_operand(const char *fname, PyObject *o, hop_py_opnd *out, hop_py_opnd **pool,
           hop_py_opnd *pool_end)
{
    if (o == Py_None) {
        out->kind = HOP_PY_NONE;
        return 0;
    }
    if (Py_IS_TYPE(o, &hop_py_DTypeType)) {
        out->kind = HOP_PY_DTYPE;
        return hop_py_dtype_from_object(o, &out->u.d);
    }
    if (PyTuple_Check(o) || PyList_Check(o)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        if (*pool + n > pool_end) {
            PyErr_Format(PyExc_ValueError, "%s(): too many list items", fname);
            return -1;
        }
        hop_py_opnd *items = *pool;
        *pool += n;
        for (Py_ssize_t i = 0; i < n; i++)
            if (op_operand(fname, PySequence_Fast_GET_ITEM(o, i), &items[i], pool, pool_end) < 0)
                return -1;
        out->kind = HOP_PY_LIST;
        out->u.list.items = items;
        out->u.list.n = (size_t)n;
        return 0;
    }
    if (HOP_PY_IS_TENSOR(o) || HOP_PY_IS_SYM(o) || PyBool_Check(o) || PyLong_Check(o) ||
        PyFloat_Check(o)) {
        PyObject *tmp = NULL;
        return hop_py__value_opnd(fname, o, out, &tmp) == 0 ? 0 : -1;
    }
    PyErr_Format(PyExc_TypeError,
                 "%s(): operands must be Tensors, numbers, bools, None, hop dtypes or lists of "
                 "them, not %.100s",
                 fname, tname(o));
    return -1;
}

/* _C._op(name, *operands): any op of the table by name, with its operands in
 * the table's order (hop/ops.h); eager or traced like every op. */
static PyObject *
f_op(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    enum { MAXOPS = 8, POOL = 64 };
    if (nargs < 1 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_op(): the first argument must be an op name");
        return NULL;
    }
    const char *name = PyUnicode_AsUTF8(args[0]);
    hop_op op;
    if (name == NULL)
        return NULL;
    if (hop_op_from_name(name, &op) != HOP_OK)
        return hop_py_raise();
    if (nargs - 1 > MAXOPS) {
        PyErr_Format(PyExc_TypeError, "%s(): too many operands", name);
        return NULL;
    }
    hop_py_opnd opnds[MAXOPS], pool[POOL], *next = pool;
    for (Py_ssize_t i = 1; i < nargs; i++)
        if (op_operand(name, args[i], &opnds[i - 1], &next, pool + POOL) < 0)
            return NULL;
    return hop_py_run_op(op, opnds, (size_t)nargs - 1);
}

/* ------------------------------------------------------------- tables */

/* clang-format off */
PyMethodDef hop_py__op_methods[] = {
#define HOP_PY_M_UNARY(name, what, x, result)                                                      \
    {#name, (PyCFunction)m_##name, METH_NOARGS,                                                    \
     HOP_PY_SIG(#name "($self, /)") what "\n\n>>> " x "." #name "()\n" result "\n"},
    HOP_PY_UNARY_OPS(HOP_PY_M_UNARY)
#undef HOP_PY_M_UNARY
#define HOP_PY_M_BINARY(name, what, a, b, result)                                                  \
    {#name, (PyCFunction)m_##name, METH_O,                                                         \
     HOP_PY_SIG(#name "($self, other, /)") what "\n\n>>> " a "." #name "(" b ")\n" result "\n"},
    HOP_PY_BINARY_OPS(HOP_PY_M_BINARY)
#undef HOP_PY_M_BINARY
#define HOP_PY_M_FAST(name, sig, what, a, args, result)                                            \
    {#name, (PyCFunction)(void (*)(void))m_##name, HOP_PY_FASTKW,                                  \
     HOP_PY_SIG(#name "($self" sig ")") what "\n\n>>> " a "." #name "(" args ")\n" result "\n"},
#define HOP_PY_M_REDUCE(name, what, a, args, result)                                               \
    HOP_PY_M_FAST(name, ", dim=None, keepdim=False", what, a, args, result)
    HOP_PY_REDUCE_OPS(HOP_PY_M_REDUCE)
#undef HOP_PY_M_REDUCE
#define HOP_PY_M_LIST(name, argname, what, a, args, result)                                        \
    HOP_PY_M_FAST(name, ", *" argname, what " The sizes come as arguments or as one sequence.",  \
                  a, args, result)
    HOP_PY_LIST_OPS(HOP_PY_M_LIST)
#undef HOP_PY_M_LIST
#define HOP_PY_M_INT(name, sig, what, a, args, result)                                             \
    HOP_PY_M_FAST(name, ", " sig, what, a, args, result)
    HOP_PY_INT_DOCS(HOP_PY_M_INT)
#undef HOP_PY_M_INT
#define HOP_PY_M_SCAN(name, what, a, args, result)                                                 \
    HOP_PY_M_FAST(name, ", dim", what, a, args, result)
    HOP_PY_SCAN_DOCS(HOP_PY_M_SCAN)
#undef HOP_PY_M_SCAN
    HOP_PY_M_FAST(slice, ", dim=0, start=None, end=None, step=1",
                  "A view of the elements start, start + step, ... before end along dim, as "
                  "x[start:end:step] on that dim (Python's rules for None and negative bounds; "
                  "step > 0).", "hop.tensor([1, 2, 3, 4, 5])", "0, 1, None, 2",
                  "hop.tensor([2, 4])")
    HOP_PY_M_FAST(to, ", dtype", "A copy converted to dtype (floats to ints truncate toward "
                  "zero; nonzero is True).", "hop.tensor([1.7, -1.7])", "hop.int32",
                  "hop.tensor([ 1, -1], dtype=hop.int32)")
#undef HOP_PY_M_FAST
#define HOP_PY_M_TO(name, e, x, result)                                                            \
    {#name, (PyCFunction)m_to_##name, METH_NOARGS,                                                 \
     HOP_PY_SIG(#name "($self, /)") "to(hop." #e "): a converted copy.\n\n>>> " x "." #name       \
     "()\n" result "\n"},
    HOP_PY_TO_METHODS(HOP_PY_M_TO)
#undef HOP_PY_M_TO
    {NULL},
};

PyMethodDef hop_py__op_functions[] = {
#define HOP_PY_F_UNARY(name, what, x, result)                                                      \
    {#name, (PyCFunction)f_##name, METH_O,                                                         \
     HOP_PY_SIG(#name "(input, /)") what "\n\n>>> hop." #name "(" x ")\n" result "\n"},
    HOP_PY_UNARY_OPS(HOP_PY_F_UNARY)
#undef HOP_PY_F_UNARY
#define HOP_PY_F_FAST(name, sig, what, example, result)                                            \
    {#name, (PyCFunction)(void (*)(void))f_##name, HOP_PY_FASTKW,                                  \
     HOP_PY_SIG(#name "(" sig ")") what "\n\n>>> hop." #name "(" example ")\n" result "\n"},
#define HOP_PY_F_BINARY(name, what, a, b, result)                                                  \
    HOP_PY_F_FAST(name, "input, other", what, a ", " b, result)
    HOP_PY_BINARY_OPS(HOP_PY_F_BINARY)
#undef HOP_PY_F_BINARY
#define HOP_PY_F_REDUCE(name, what, a, args, result)                                               \
    HOP_PY_F_FAST(name, "input, dim=None, keepdim=False", what, a ", " args, result)
    HOP_PY_REDUCE_OPS(HOP_PY_F_REDUCE)
#undef HOP_PY_F_REDUCE
#define HOP_PY_F_LIST(name, argname, what, a, args, result)                                        \
    HOP_PY_F_FAST(name, "input, " argname, what, a ", (" args ")", result)
    HOP_PY_LIST_OPS(HOP_PY_F_LIST)
#undef HOP_PY_F_LIST
    /* slice stays a method: a module function would shadow the builtin */
#define HOP_PY_F_INT(name, sig, what, a, args, result)                                             \
    HOP_PY_F_FAST(name, "input, " sig, what, a ", " args, result)
    HOP_PY_INT_DOCS(HOP_PY_F_INT)
#undef HOP_PY_F_INT
    HOP_PY_F_FAST(cat, "tensors, dim=0",
                  "The tensors (a list or tuple, of one dtype and rank) joined along dim; the "
                  "other sizes must agree.", "[hop.tensor([1, 2]), hop.tensor([3])]",
                  "hop.tensor([1, 2, 3])")
    HOP_PY_F_FAST(stack, "tensors, dim=0",
                  "The tensors (a list or tuple, of one dtype and shape) stacked along a new "
                  "dim inserted at dim.", "[hop.tensor([1, 2]), hop.tensor([3, 4])], dim=1",
                  "hop.tensor([[1, 3],\n            [2, 4]])")
    HOP_PY_F_FAST(where, "condition, input, other",
                  "input where condition is true (nonzero), else other, elementwise; the three "
                  "broadcast, and input and other may be Python numbers.",
                  "hop.tensor([True, False]), 1.0, hop.tensor([5.0, 6.0])",
                  "hop.tensor([1., 6.])")
#define HOP_PY_F_SCAN(name, what, a, args, result)                                                 \
    HOP_PY_F_FAST(name, "input, dim", what, a ", " args, result)
    HOP_PY_SCAN_DOCS(HOP_PY_F_SCAN)
#undef HOP_PY_F_SCAN
    {"_op", (PyCFunction)(void (*)(void))f_op, METH_FASTCALL,
     HOP_PY_SIG("_op(name, /, *operands)") "An op of the table by name, its operands in the "
     "table's order (internal: hop.numpy's)."},
#undef HOP_PY_F_FAST
    {NULL},
};
/* clang-format on */
