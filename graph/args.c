/*
 * graph/args.c - the arguments of nodes as values: the constructors
 * (hop_arg_int, hop_arg_list, ...), the deep copy of an argument array with
 * its list items (hop_args_count, hop_args_copy) and the operands of an op
 * they stand for (hop_args_operands).  Checking arguments against a graph
 * and linking their uses are the builders' (graph.c).
 */
#include "graph/graph_impl.h"

#include <string.h>

hop_arg
hop_arg_node(hop_node *n)
{
    hop_arg a = {.kind = HOP_ARG_NODE, .u.node = n};
    return a;
}

hop_arg
hop_arg_int(int64_t v)
{
    hop_arg a = {.kind = HOP_ARG_INT, .u.i = v};
    return a;
}

hop_arg
hop_arg_float(double v)
{
    hop_arg a = {.kind = HOP_ARG_FLOAT, .u.f = v};
    return a;
}

hop_arg
hop_arg_bool(bool v)
{
    hop_arg a = {.kind = HOP_ARG_BOOL, .u.b = v};
    return a;
}

hop_arg
hop_arg_sym(const hop_expr *e)
{
    hop_arg a = {.kind = HOP_ARG_SYM, .u.sym = e};
    return a;
}

hop_arg
hop_arg_dtype(hop_dtype d)
{
    hop_arg a = {.kind = HOP_ARG_DTYPE, .u.dtype = d};
    return a;
}

hop_arg
hop_arg_none(void)
{
    hop_arg a = {.kind = HOP_ARG_NONE};
    return a;
}

hop_arg
hop_arg_list(hop_arg *items, size_t n)
{
    hop_arg a = {.kind = HOP_ARG_LIST};
    a.u.list.items = items;
    a.u.list.n = n;
    return a;
}

hop_arg
hop_arg_graph(hop_graph *g)
{
    hop_arg a = {.kind = HOP_ARG_GRAPH, .u.graph = g};
    return a;
}

size_t
hop_args_count(const hop_arg *args, size_t n)
{
    size_t total = n;
    for (size_t i = 0; i < n; i++)
        if (args[i].kind == HOP_ARG_LIST)
            total += hop_args_count(args[i].u.list.items, args[i].u.list.n);
    return total;
}

hop_arg *
hop_args_copy(hop_arg *out, const hop_arg *args, size_t n, hop_arg **pool)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = args[i];
        if (args[i].kind == HOP_ARG_LIST) {
            hop_arg *items = *pool;
            *pool += args[i].u.list.n;
            hop_args_copy(items, args[i].u.list.items, args[i].u.list.n, pool);
            out[i].u.list.items = items;
        }
    }
    return out;
}

hop_status
hop_args_operands(const char *who, const hop_arg *args, size_t n, hop_operand *out,
                  hop_operand **pool)
{
    for (size_t i = 0; i < n; i++) {
        const hop_arg *a = &args[i];
        hop_operand *o = &out[i];
        memset(o, 0, sizeof *o);
        switch (a->kind) {
        case HOP_ARG_NONE:
            o->kind = HOP_OPND_NONE;
            break;
        case HOP_ARG_NODE: {
            const hop_node *d = a->u.node;
            if (d == NULL)
                return hop_error(HOP_MISUSE, "%s: argument %zu is a NULL node", who, i);
            if (d->meta->kind == HOP_VALUE_TENSOR) {
                o->kind = HOP_OPND_TENSOR;
                o->u.tensor = &d->meta->meta;
            } else if (d->meta->kind == HOP_VALUE_SYM) {
                o->kind = HOP_OPND_SYM;
                o->u.sym = d->meta->sym;
            } else {
                return hop_error(HOP_INVALID, "%s: argument %zu (%s) has no single value", who, i,
                                 d->name);
            }
            break;
        }
        case HOP_ARG_INT:
            o->kind = HOP_OPND_INT;
            o->u.i = a->u.i;
            break;
        case HOP_ARG_FLOAT:
            o->kind = HOP_OPND_FLOAT;
            o->u.f = a->u.f;
            break;
        case HOP_ARG_BOOL:
            o->kind = HOP_OPND_BOOL;
            o->u.b = a->u.b;
            break;
        case HOP_ARG_SYM:
            o->kind = HOP_OPND_SYM;
            o->u.sym = a->u.sym;
            break;
        case HOP_ARG_DTYPE:
            o->kind = HOP_OPND_DTYPE;
            o->u.dtype = a->u.dtype;
            break;
        case HOP_ARG_LIST: {
            hop_operand *items = NULL;
            if (pool) {
                items = *pool;
                *pool += a->u.list.n;
                hop_status st = hop_args_operands(who, a->u.list.items, a->u.list.n, items, pool);
                if (st != HOP_OK)
                    return st;
            }
            o->kind = HOP_OPND_LIST;
            o->u.list.items = items;
            o->u.list.n = a->u.list.n;
            break;
        }
        case HOP_ARG_GRAPH: /* rejected by check_arg */
            return hop_error(HOP_MISUSE, "%s: argument %zu is a graph", who, i);
        }
    }
    return HOP_OK;
}
