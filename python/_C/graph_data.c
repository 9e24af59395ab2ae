/*
 * python/_C/graph_data.c - a traced graph as Python data: what
 * Trace.describe returns and hop.GraphModule's Python mirror of the graph is
 * built from (python/hop/_trace.py).  Reads a graph; knows nothing of the
 * Trace that holds it.
 */
#include "trace_impl.h"

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
        hop_py_fill(&shape, d, s);
    }
    if (shape == NULL)
        return NULL;
    return Py_BuildValue("(sON)", "tensor", hop_py_dtype_object(v->meta.dtype), shape);
}

static PyObject *args_to_py(const hop_arg *args, size_t n);

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
    case HOP_ARG_LIST:
        return args_to_py(a->u.list.items, a->u.list.n);
    case HOP_ARG_GRAPH:
        return Py_BuildValue("(ss)", "%graph", a->u.graph->name);
    }
    Py_RETURN_NONE;
}

/* args[n] as a Python list of arg_to_py values. */
static PyObject *
args_to_py(const hop_arg *args, size_t n)
{
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        hop_py_fill(&list, (Py_ssize_t)i, arg_to_py(&args[i]));
    }
    return list;
}

/*
 * A call_hop node's arguments by parameter name, read through its class's
 * signature (hop_node_param, hop_node_group, hop_node_lifted), so that the
 * Python mirror never derives the layout by position: (leads, groups,
 * lifted) with leads a list of (name, value) per lead parameter, groups a
 * list of (name, [values]) per group parameter (the final VARARGS group
 * with the lifted values, as hop_node_group gives it) and lifted the
 * values lifted into a list of their own.  None for a node without a
 * class.
 */
static PyObject *
call_layout(const hop_node *n)
{
    if (n->kind != HOP_NODE_CALL_HOP || n->cls == NULL)
        Py_RETURN_NONE;
    size_t np, nl;
    const hop_param *params = hop_class_params(n->cls, &np);
    PyObject *leads = PyList_New(0), *groups = PyList_New(0);
    for (size_t i = 0; leads && groups && i < np; i++) {
        PyObject *item = NULL, *into = NULL;
        if (hop_param_is_lead(params[i].kind)) {
            const hop_arg *a = hop_node_param(n, params[i].name);
            PyObject *v = a ? arg_to_py(a) : hop_py_raise();
            item = v ? Py_BuildValue("(sN)", params[i].name, v) : NULL;
            into = leads;
        } else if (hop_param_is_group(params[i].kind)) {
            size_t k;
            const hop_arg *g = hop_node_group(n, params[i].name, &k);
            PyObject *v = g ? args_to_py(g, k) : hop_py_raise();
            item = v ? Py_BuildValue("(sN)", params[i].name, v) : NULL;
            into = groups;
        } else {
            continue;
        }
        if (item == NULL || PyList_Append(into, item) < 0) {
            Py_CLEAR(leads);
            Py_CLEAR(groups);
        }
        Py_XDECREF(item);
    }
    const hop_arg *l = leads && groups ? hop_node_lifted(n, &nl) : NULL;
    PyObject *lifted = l ? args_to_py(l, nl) : NULL;
    if (leads && groups && l == NULL)
        hop_py_raise();
    PyObject *r = lifted ? Py_BuildValue("(OOO)", leads, groups, lifted) : NULL;
    Py_XDECREF(leads);
    Py_XDECREF(groups);
    Py_XDECREF(lifted);
    return r;
}

/* A graph as dict(name, nodes, subgraphs, guards);
 * guards are the graph's own (a cond branch's), as text; each node is (op,
 * name, target, args, meta, outs, layout), layout a call_hop's arguments by
 * parameter name (call_layout) or None. */
PyObject *
hop_py__describe(const hop_graph *g)
{
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
        PyObject *args = args_to_py(n->args, n->nargs);
        PyObject *layout = args ? call_layout(n) : NULL;
        PyObject *outs = PyList_New((Py_ssize_t)n->nouts);
        for (size_t i = 0; outs && i < n->nouts; i++) {
            hop_py_fill(&outs, (Py_ssize_t)i, meta_to_py(&n->outs[i]));
        }
        PyObject *meta = meta_to_py(n->meta);
        PyObject *item = args && layout && outs && meta
                             ? Py_BuildValue("(sssOOOO)", hop_node_kind_name(n->kind), n->name,
                                             hop_node_target(n), args, meta, outs, layout)
                             : NULL;
        Py_XDECREF(args);
        Py_XDECREF(layout);
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
    if (nodes && subs && guards)
        result = Py_BuildValue("{s:s,s:O,s:O,s:O}", "name", g->name, "nodes", nodes, "subgraphs",
                               subs, "guards", guards);
    Py_XDECREF(nodes);
    Py_XDECREF(subs);
    Py_XDECREF(guards);
    return result;
}
