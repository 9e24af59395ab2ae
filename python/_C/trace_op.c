/*
 * python/_C/trace_op.c - an op recorded in this thread's trace once its
 * operands are graph arguments (hop_py__record_op: the path
 * specialisation's memo, the tracer, the result's proxy), and the number
 * protocol's two-value op on a proxy, and a one-tensor op (`x.relu()`,
 * `-x`), recorded without the general conversions (hop_py__trace_binary,
 * hop_py__trace_unary).
 *
 * The general path (hop_py__binary -> hop_py_run_op -> hop_py_trace_op)
 * converts each Python operand to a hop_py_opnd, tests the operands for a
 * SymFloat and for a proxy, looks up the thread's trace twice and converts
 * the operands again to graph arguments: ~0.5 K instructions of a traced
 * chain's ~3.6 K an op (issue #30), most of them for `x * y` or `x + 1.0`,
 * two proxies or a proxy and a Python number, or `x.relu()`.  These paths
 * take exactly those operands and hand every other one to the general path,
 * which makes the same arguments of them: the node, its name, its metadata
 * and the result are the same either way.
 */
#include "trace_impl.h"
#include "tensor_impl.h"

PyObject *
hop_py__record_op(TraceObject *tr, hop_op op, const hop_arg *args, size_t nargs)
{
    PyObject *result = NULL;
    int depth = (int)hop_output_graph_depth(tr->og);
    hop_node *n = hop_py_memo_replay(tr->memo, depth, op, args, nargs);
    if (n != NULL) {
        result = hop_py_wrap_node((PyObject *)tr, n);
    } else if ((n = hop_tracer_call_op(hop_output_graph_current(tr->og), op, args, nargs)) ==
               NULL) {
        hop_py_raise();
    } else if (hop_py_memo_record(tr->memo, depth, op, args, nargs, n) == 0) {
        result = hop_py_wrap_node((PyObject *)tr, n);
    }
    return result;
}

/*
 * o as a graph argument of a two-value op recorded in tr, when it is one
 * the general path converts without a question: a proxy of tr (its node,
 * as value_node gives it; *nodes counts it), an exact Python float, int of
 * int64's range or bool (hop_py__value_opnd's operand, then to_args'
 * argument).  False, nothing set, for anything else: a concrete tensor (a
 * capture), another trace's proxy, a SymInt, a SymFloat, a number of a
 * subclass, an int out of range, an array-like; the general path converts
 * or reports it as ever.
 */
static bool
plain_arg(TraceObject *tr, PyObject *o, hop_arg *out, int *nodes)
{
    if (HOP_PY_IS_TENSOR(o)) {
        TensorObject *t = HOP_PY_TENSOR(o);
        if (t->t != NULL || t->owner != (PyObject *)tr)
            return false;
        *out = (hop_arg){.kind = HOP_ARG_NODE, .u.node = t->node};
        ++*nodes;
        return true;
    }
    if (PyFloat_CheckExact(o)) {
        *out = (hop_arg){.kind = HOP_ARG_FLOAT, .u.f = PyFloat_AS_DOUBLE(o)};
        return true;
    }
    if (PyLong_CheckExact(o)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear(); /* the general path raises what it raises */
            return false;
        }
        *out = (hop_arg){.kind = HOP_ARG_INT, .u.i = v};
        return true;
    }
    if (o == Py_True || o == Py_False) {
        *out = (hop_arg){.kind = HOP_ARG_BOOL, .u.b = o == Py_True};
        return true;
    }
    return false;
}

/* A proxy of tr as op's operand, recorded: 1 with *result; 0 when op is a
 * view (its result is linked to its operand: hop_py_trace_op). */
static int
record_plain(TraceObject *tr, hop_op op, const hop_arg *args, size_t nargs, PyObject **result)
{
    const hop_op_info *info = hop_op_get(op);
    if (info == NULL || info->family == HOP_KF_VIEW)
        return 0;
    *result = hop_py__record_op(tr, op, args, nargs);
    return 1;
}

int
hop_py__trace_unary(hop_op op, PyObject *x, PyObject **result)
{
    TraceObject *tr = hop_py__current;
    hop_arg arg;
    int nodes = 0;
    if (tr == NULL || !plain_arg(tr, x, &arg, &nodes) || nodes == 0)
        return 0;
    return record_plain(tr, op, &arg, 1, result);
}

int
hop_py__trace_binary(hop_op op, PyObject *a, PyObject *b, PyObject **result)
{
    TraceObject *tr = hop_py__current;
    hop_arg args[2];
    int nodes = 0;
    if (tr == NULL || !plain_arg(tr, a, &args[0], &nodes) || !plain_arg(tr, b, &args[1], &nodes) ||
        nodes == 0)
        return 0;
    return record_plain(tr, op, args, 2, result);
}
