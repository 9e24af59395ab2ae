/*
 * output_graph/load.c - the saved format's reader (hop_output_graph_load).
 * docs/SAVED_FORMAT.md is the specification; output_graph/save.c the writer.
 *
 * Nothing in the file is trusted.  The checksum rejects accidents; for a file
 * made to pass it, every count is checked against the bytes left before it
 * sizes an allocation, every reference must point at something read before
 * (so nothing recurses on the file's say-so), expressions are rebuilt through
 * the ShapeEnv's constructors and must come out exactly as saved, each op's
 * metadata is checked by shape inference, each capture table against the
 * calls, and the whole program must verify.  Any failure frees everything
 * and is HOP_FORMAT naming the record (or HOP_NOT_FOUND for an unregistered
 * HOP, HOP_NOMEM).
 */
#include "hop/lifts.h"
#include "output_graph/output_graph_impl.h"
#include "output_graph/saved_impl.h"
#include "tracer/tracer_owner.h"

#include <stdarg.h>
#include <stdio.h>

hop_status
hop__reader_fail(hop__reader *r, const char *fmt, ...)
{
    if (r->failed)
        return HOP_FORMAT;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->failed = true;
    return hop_error(HOP_FORMAT, "load: %s: %s (at byte %zu of the payload)", r->where, msg,
                     (size_t)(r->p - r->start));
}

typedef struct loader {
    hop__reader r;
    const hop_load_options *opts;
    hop_saved *s;
    hop_output_graph *og;
    hop_shape_env *env;
    const hop_expr **exprs;
    size_t nexprs, nsymbols;
    hop_graph **graphs;
    hop_tracer **tracers;
    hop_node ***nodes; /* per graph, in program order */
    size_t *nnodes;
    size_t ngraphs;
    hop__arena tmp; /* argument arrays being decoded, capture roles */
    const void **identities;
    size_t nidentities;
} loader;

/* Turns the error of a call that failed on the file's data into HOP_FORMAT
 * (out-of-memory and an unknown HOP stay what they are). */
static hop_status failed(loader *L, const char *fmt, ...) HOP_PRINTF(2, 3);
static hop_status
failed(loader *L, const char *fmt, ...)
{
    hop_status code = hop_error_code();
    if (L->r.failed || code == HOP_NOMEM || code == HOP_NOT_FOUND)
        return L->r.failed ? HOP_FORMAT : code;
    char what[256], why[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(why, sizeof why, "%s", hop_error_message());
    return hop__reader_fail(&L->r, "%s: %s", what, why);
}

static void *
tmp_alloc(loader *L, size_t n)
{
    void *p = hop__arena_alloc(&L->tmp, n ? n : 1);
    if (p == NULL)
        L->r.failed = true; /* the error context says HOP_NOMEM */
    return p;
}

/* ---------------------------------------------------------- expressions */

static const hop_expr *
get_expr(loader *L, const char *what)
{
    uint64_t i = hop__get_u(&L->r);
    if (L->r.failed)
        return NULL;
    if (i >= L->nexprs) {
        hop__reader_fail(&L->r, "%s refers to expression %llu of %zu", what, (unsigned long long)i,
                         L->nexprs);
        return NULL;
    }
    return L->exprs[i];
}

static bool
is_atom(const hop_expr *e)
{
    hop_expr_kind k = hop_expr_kind_of(e);
    return !hop_expr_is_bool(e) && (k == HOP_EXPR_SYMBOL || k == HOP_EXPR_FLOORDIV ||
                                    k == HOP_EXPR_MOD || k == HOP_EXPR_MAX || k == HOP_EXPR_MIN);
}

/* Rebuilds one expression from its parts through the constructors. */
static const hop_expr *
build_expr(loader *L, hop_expr_kind kind, int64_t value, size_t n, const hop_expr **ops,
           const int64_t *coefs)
{
    hop_shape_env *env = L->env;
    const hop_expr *e = NULL;
    switch (kind) {
    case HOP_EXPR_CONST:
        return n == 0 ? hop_sym_const(env, value) : NULL;
    case HOP_EXPR_SYMBOL:
        return n == 0 && value >= 0 && (uint64_t)value < L->nsymbols
                   ? hop_shape_env_symbol(env, (size_t)value)
                   : NULL;
    case HOP_EXPR_TRUE:
    case HOP_EXPR_FALSE:
        return n == 0 ? hop_sym_bool(env, kind == HOP_EXPR_TRUE) : NULL;
    case HOP_EXPR_ADD:
        if (n == 0)
            return NULL;
        e = hop_sym_const(env, value);
        for (size_t i = 0; e && i < n; i++) {
            if (coefs[i] == 0 || !(is_atom(ops[i]) || hop_expr_kind_of(ops[i]) == HOP_EXPR_MUL))
                return NULL;
            const hop_expr *term = hop_sym_mul_int(env, ops[i], coefs[i]);
            e = term ? hop_sym_add(env, e, term) : NULL;
        }
        return e;
    case HOP_EXPR_MUL:
        if (n == 0)
            return NULL;
        e = hop_sym_const(env, 1);
        for (size_t i = 0; e && i < n; i++) {
            if (!is_atom(ops[i]) || coefs[i] < 1 || coefs[i] > HOP__SAVED_MAX_EXPONENT)
                return NULL;
            for (int64_t k = 0; e && k < coefs[i]; k++)
                e = hop_sym_mul(env, e, ops[i]);
        }
        return e;
    case HOP_EXPR_FLOORDIV:
    case HOP_EXPR_MOD:
        if (n != 2)
            return NULL;
        return kind == HOP_EXPR_FLOORDIV ? hop_sym_floordiv(env, ops[0], ops[1])
                                         : hop_sym_mod(env, ops[0], ops[1]);
    case HOP_EXPR_MAX:
    case HOP_EXPR_MIN:
    case HOP_EXPR_AND:
    case HOP_EXPR_OR:
        if (n < 2)
            return NULL;
        e = ops[0];
        for (size_t i = 1; e && i < n; i++)
            e = kind == HOP_EXPR_MAX   ? hop_sym_max(env, e, ops[i])
                : kind == HOP_EXPR_MIN ? hop_sym_min(env, e, ops[i])
                : kind == HOP_EXPR_AND ? hop_sym_and(env, e, ops[i])
                                       : hop_sym_or(env, e, ops[i]);
        return e;
    case HOP_EXPR_EQ:
    case HOP_EXPR_NE:
    case HOP_EXPR_LT:
    case HOP_EXPR_LE:
        if (n != 2)
            return NULL;
        return kind == HOP_EXPR_EQ   ? hop_sym_eq(env, ops[0], ops[1])
               : kind == HOP_EXPR_NE ? hop_sym_ne(env, ops[0], ops[1])
               : kind == HOP_EXPR_LT ? hop_sym_lt(env, ops[0], ops[1])
                                     : hop_sym_le(env, ops[0], ops[1]);
    case HOP_EXPR_NOT:
        return n == 1 ? hop_sym_not(env, ops[0]) : NULL;
    }
    return NULL;
}

/* The rebuilt expression has exactly the saved parts: anything else would
 * be another program than the one saved. */
static bool
same_parts(const hop_expr *e, hop_expr_kind kind, int64_t value, size_t n, const hop_expr **ops,
           const int64_t *coefs)
{
    if (hop_expr_kind_of(e) != kind || hop_expr_noperands(e) != n || hop__expr_value(e) != value)
        return false;
    for (size_t i = 0; i < n; i++)
        if (hop_expr_operand(e, i) != ops[i] ||
            (hop__expr_has_coefs(kind) && hop_expr_coef(e, i) != coefs[i]))
            return false;
    return true;
}

/* A saved name (at most HOP__SAVED_MAX_NAME bytes) into buf, which holds
 * HOP__SAVED_MAX_NAME + 1, NUL-terminated ("" once the reader failed). */
static void
get_name(hop__reader *r, char *buf)
{
    size_t len;
    const char *s = hop__get_bytes(r, HOP__SAVED_MAX_NAME, &len);
    if (s != NULL)
        memcpy(buf, s, len);
    buf[len] = '\0';
    /* A NUL would cut the name short: "mul\0x" read as the op mul. */
    if (s != NULL && memchr(s, '\0', len) != NULL) {
        hop__reader_fail(r, "the name \"%s\" holds a NUL byte", buf);
        buf[0] = '\0';
    }
}

/* The count that opens a section: errors point at the section from now on
 * (r->where), and the count's own error names it. */
static size_t
section_count(hop__reader *r, const char *section, size_t min_bytes)
{
    r->where = section;
    return hop__get_count(r, min_bytes, section);
}

static hop_status
read_env(loader *L)
{
    hop__reader *r = &L->r;
    L->nsymbols = section_count(r, "symbols", 4);
    for (size_t i = 0; i < L->nsymbols && !r->failed; i++) {
        unsigned unbacked = hop__get_byte(r);
        int64_t hint = hop__get_i(r), lo = hop__get_i(r), hi = hop__get_i(r), glo, ghi, ghint;
        if (r->failed)
            break;
        /* A backed symbol is a size its trace met: its hint within its range,
         * both sizes (a negative one would make a constant negative size). */
        if (unbacked == 1 && hint != 0)
            return hop__reader_fail(r, "symbol %zu: an unbacked symbol has the hint %lld, not 0", i,
                                    (long long)hint);
        if (!unbacked && !(0 <= lo && lo <= hint && hint <= hi))
            return hop__reader_fail(r,
                                    "symbol %zu: a size's hint %lld and range [%lld, %lld] "
                                    "are not 0 <= lo <= hint <= hi",
                                    i, (long long)hint, (long long)lo, (long long)hi);
        const hop_expr *s = unbacked ? hop_shape_env_unbacked(L->env, lo, hi)
                                     : hop_shape_env_size_symbol(L->env, hint, false, false);
        if (s && !unbacked && hop_shape_env_constrain(L->env, s, lo, hi) != HOP_OK)
            s = NULL;
        if (s == NULL)
            return failed(L, "symbol %zu", i);
        hop_shape_env_bounds(L->env, s, &glo, &ghi);
        if (unbacked > 1 || glo != lo || ghi != hi ||
            (!unbacked && (!hop_symbol_hint(s, &ghint) || ghint != hint)))
            return hop__reader_fail(r, "symbol %zu (%s) cannot have the saved hint and range", i,
                                    hop_symbol_name(s));
    }
    size_t total = section_count(r, "expressions", 3);
    if (r->failed || (L->exprs = tmp_alloc(L, total * sizeof *L->exprs)) == NULL)
        return r->failed && hop_error_code() != HOP_NOMEM ? HOP_FORMAT : HOP_NOMEM;
    size_t built = 0;
    for (size_t i = 0; i < total && !r->failed; i++) {
        hop_expr_kind kind = (hop_expr_kind)hop__get_byte(r);
        int64_t value = hop__get_i(r);
        size_t n = hop__get_count(r, 1, "expression operands");
        bool has_coefs = hop__expr_has_coefs(kind);
        const hop_expr **ops = tmp_alloc(L, n * sizeof *ops);
        int64_t *coefs = tmp_alloc(L, n * sizeof *coefs);
        L->nexprs = built; /* operands refer to expressions before this one */
        for (size_t k = 0; ops && coefs && k < n && !r->failed; k++) {
            ops[k] = get_expr(L, "an operand");
            coefs[k] = has_coefs ? hop__get_i(r) : 1;
        }
        if (r->failed || ops == NULL || coefs == NULL)
            break;
        if ((unsigned)kind > HOP_EXPR_NOT || (i < L->nsymbols) != (kind == HOP_EXPR_SYMBOL) ||
            (kind == HOP_EXPR_SYMBOL && (uint64_t)value != i))
            return hop__reader_fail(r, "expression %zu has kind %u where %s", i, (unsigned)kind,
                                    i < L->nsymbols ? "symbol i is expected"
                                                    : "an expression is expected");
        const hop_expr *e = build_expr(L, kind, value, n, ops, coefs);
        if (e == NULL && hop_error_code() == HOP_NOMEM)
            return HOP_NOMEM;
        if (e == NULL || !same_parts(e, kind, value, n, ops, coefs))
            return hop__reader_fail(r, "expression %zu does not rebuild to its saved form", i);
        L->exprs[i] = e;
        built = i + 1;
    }
    L->nexprs = built;
    if (r->failed)
        return HOP_FORMAT;
    size_t nguards = section_count(r, "guards", 1);
    for (size_t i = 0; i < nguards && !r->failed; i++) {
        const hop_expr *g = get_expr(L, "a guard");
        if (g && hop_shape_env_add_guard(L->env, g) != HOP_OK)
            return failed(L, "guard %zu", i);
    }
    return r->failed ? HOP_FORMAT : HOP_OK;
}

/* ---------------------------------------------------------------- graphs */

static hop_status
get_meta(loader *L, hop_value_info *v, const char *what)
{
    hop__reader *r = &L->r;
    memset(v, 0, sizeof *v);
    unsigned kind = hop__get_byte(r);
    if (kind == HOP_VALUE_SYM) {
        v->kind = HOP_VALUE_SYM;
        v->sym = get_expr(L, what);
    } else if (kind == HOP_VALUE_TENSOR) {
        v->kind = HOP_VALUE_TENSOR;
        unsigned dtype = hop__get_byte(r), rank = hop__get_byte(r);
        if (!r->failed && (dtype >= HOP_DTYPE_COUNT || rank > HOP_MAX_RANK))
            return hop__reader_fail(r, "%s: dtype %u or rank %u is out of range", what, dtype,
                                    rank);
        v->meta.dtype = (hop_dtype)dtype;
        v->meta.rank = (int)rank;
        for (unsigned d = 0; d < rank && !r->failed; d++) {
            int64_t k;
            v->meta.sizes[d] = get_expr(L, what);
            if (v->meta.sizes[d] && hop_expr_is_bool(v->meta.sizes[d]))
                return hop__reader_fail(r, "%s: size %u is a SymBool", what, d);
            /* The lowering plans with constant sizes: a negative one is no size. */
            if (v->meta.sizes[d] && hop_expr_const_value(v->meta.sizes[d], &k) && k < 0)
                return hop__reader_fail(r, "%s: size %u is %lld", what, d, (long long)k);
        }
    } else if (kind != HOP_VALUE_NONE && !r->failed) {
        return hop__reader_fail(r, "%s: value kind %u is out of range", what, kind);
    }
    return r->failed ? HOP_FORMAT : HOP_OK;
}

static hop_status
get_args(loader *L, size_t gi, hop_arg **out, size_t *nout, int depth)
{
    hop__reader *r = &L->r;
    size_t n = hop__get_count(r, 1, "arguments");
    hop_arg *args = tmp_alloc(L, n * sizeof *args);
    if (r->failed || args == NULL)
        return r->failed ? HOP_FORMAT : HOP_NOMEM;
    for (size_t i = 0; i < n && !r->failed; i++) {
        hop_arg *a = &args[i];
        unsigned kind = hop__get_byte(r);
        uint64_t k;
        switch (kind) {
        case HOP_ARG_NONE:
            *a = hop_arg_none();
            break;
        case HOP_ARG_NODE:
            k = hop__get_u(r);
            if (!r->failed && k >= L->nnodes[gi])
                return hop__reader_fail(r, "argument %zu refers to node %llu, not an earlier one",
                                        i, (unsigned long long)k);
            *a = hop_arg_node(L->nodes[gi][k]);
            break;
        case HOP_ARG_INT:
            *a = hop_arg_int(hop__get_i(r));
            break;
        case HOP_ARG_FLOAT: {
            uint64_t bits = 0;
            for (int b = 0; b < 8; b++)
                bits |= (uint64_t)hop__get_byte(r) << (8 * b);
            double f;
            memcpy(&f, &bits, sizeof f);
            *a = hop_arg_float(f);
            break;
        }
        case HOP_ARG_BOOL: {
            unsigned b = hop__get_byte(r);
            if (b > 1)
                return hop__reader_fail(r, "argument %zu: a bool of %u", i, b);
            *a = hop_arg_bool(b);
            break;
        }
        case HOP_ARG_SYM:
            *a = hop_arg_sym(get_expr(L, "a SymInt argument"));
            break;
        case HOP_ARG_DTYPE: {
            unsigned d = hop__get_byte(r);
            if (!r->failed && d >= HOP_DTYPE_COUNT)
                return hop__reader_fail(r, "argument %zu: dtype %u is out of range", i, d);
            *a = hop_arg_dtype((hop_dtype)d);
            break;
        }
        case HOP_ARG_LIST: {
            if (depth >= HOP__SAVED_MAX_LIST_DEPTH)
                return hop__reader_fail(r, "lists nested deeper than %d",
                                        HOP__SAVED_MAX_LIST_DEPTH);
            hop_arg *items = NULL;
            size_t m = 0;
            hop_status st = get_args(L, gi, &items, &m, depth + 1);
            if (st != HOP_OK)
                return st;
            *a = hop_arg_list(items, m);
            break;
        }
        case HOP_ARG_GRAPH:
            k = hop__get_u(r);
            if (!r->failed && (k >= L->ngraphs || L->graphs[k]->parent != L->graphs[gi]))
                return hop__reader_fail(r,
                                        "argument %zu refers to graph %llu, not a subgraph "
                                        "of %s",
                                        i, (unsigned long long)k, L->graphs[gi]->name);
            *a = r->failed ? hop_arg_none() : hop_arg_graph(L->graphs[k]);
            break;
        default:
            return hop__reader_fail(r, "argument %zu: kind %u is out of range", i, kind);
        }
    }
    *out = args;
    *nout = n;
    return r->failed ? HOP_FORMAT : HOP_OK;
}

static hop_status
read_node(loader *L, size_t gi, size_t index, size_t count)
{
    hop__reader *r = &L->r;
    hop_graph *g = L->graphs[gi];
    unsigned kind = hop__get_byte(r);
    char nm[HOP__SAVED_MAX_NAME + 1];
    get_name(r, nm);
    uint64_t flags = hop__get_u(r);
    if (r->failed)
        return HOP_FORMAT;
    if (kind > HOP_NODE_CALL_FOREIGN || flags > (HOP_NODE_SIDE_EFFECTS | HOP_NODE_MAY_FAIL) ||
        (flags && kind != HOP_NODE_CALL_FOREIGN))
        return hop__reader_fail(r, "node %zu (%s): kind %u or flags %llu out of range", index, nm,
                                kind, (unsigned long long)flags);
    if ((kind == HOP_NODE_PLACEHOLDER && g->nnodes != g->nplaceholders) ||
        (kind == HOP_NODE_OUTPUT) != (index + 1 == count))
        return hop__reader_fail(r,
                                "node %zu (%s): placeholders must come first and the output "
                                "last",
                                index, nm);
    hop_node *n = NULL;
    hop_arg *args = NULL;
    size_t nargs = 0;
    hop_value_info meta;
    char target[HOP__SAVED_MAX_NAME + 1] = "";
    if (kind == HOP_NODE_CALL_OP || kind == HOP_NODE_CALL_HOP || kind == HOP_NODE_CALL_FOREIGN)
        get_name(r, target);
    switch (kind) {
    case HOP_NODE_PLACEHOLDER:
        if (get_meta(L, &meta, nm) != HOP_OK)
            return HOP_FORMAT;
        n = hop_graph_placeholder(g, nm, &meta);
        break;
    case HOP_NODE_CALL_OP: {
        hop_op op;
        if (r->failed || hop_op_from_name(target, &op) != HOP_OK)
            return hop__reader_fail(r, "node %s: no op named %s", nm, target);
        if (get_args(L, gi, &args, &nargs, 0) != HOP_OK || get_meta(L, &meta, nm) != HOP_OK)
            return HOP_FORMAT;
        if ((op == HOP_OP_sort || op == HOP_OP_argsort) && nargs == 3) {
            /* saved before sort had its kind (#29): those sorts were all
             * stable, and load as such */
            hop_arg *four = tmp_alloc(L, 4 * sizeof *four);
            if (four == NULL)
                return HOP_NOMEM;
            memcpy(four, args, 3 * sizeof *four);
            four[3] = hop_arg_int(HOP_SORT_STABLE);
            args = four;
            nargs = 4;
        }
        n = hop_graph_call_op_meta(g, op, args, nargs, &meta);
        break;
    }
    case HOP_NODE_CALL_HOP:
    case HOP_NODE_CALL_FOREIGN: {
        if (get_args(L, gi, &args, &nargs, 0) != HOP_OK)
            return HOP_FORMAT;
        size_t nouts = hop__get_count(r, 1, "outputs");
        hop_value_info *outs = tmp_alloc(L, nouts * sizeof *outs);
        for (size_t i = 0; outs && i < nouts && !r->failed; i++)
            if (get_meta(L, &outs[i], nm) != HOP_OK)
                return HOP_FORMAT;
        if (r->failed || outs == NULL)
            return r->failed ? HOP_FORMAT : HOP_NOMEM;
        if (kind == HOP_NODE_CALL_HOP) {
            const hop_class *cls = L->opts->find_hop ? L->opts->find_hop(target) : NULL;
            if (cls == NULL)
                return hop_error(HOP_NOT_FOUND,
                                 "load: graph %s calls the HOP %s, which is not registered "
                                 "(a HOP of a library must be registered before the load: "
                                 "hop_load_library, or hop.load_library in Python)",
                                 g->name, target);
            n = hop_graph_call_hop(g, cls, args, nargs, outs, nouts);
        } else {
            n = hop_graph_call_foreign(g, target, args, nargs, outs, nouts, (unsigned)flags);
        }
        break;
    }
    case HOP_NODE_GETITEM: {
        uint64_t call = hop__get_u(r), item = hop__get_u(r);
        if (!r->failed && call >= L->nnodes[gi])
            return hop__reader_fail(r, "node %s refers to node %llu, not an earlier one", nm,
                                    (unsigned long long)call);
        if (r->failed)
            return HOP_FORMAT;
        n = hop_graph_getitem(g, L->nodes[gi][call], (size_t)item);
        break;
    }
    case HOP_NODE_OUTPUT:
        if (get_args(L, gi, &args, &nargs, 0) != HOP_OK)
            return HOP_FORMAT;
        n = hop_graph_output(g, args, nargs);
        break;
    }
    if (n == NULL)
        return failed(L, "graph %s node %zu (%s)", g->name, index, nm);
    if (strcmp(n->name, nm) != 0 && hop_graph_rename_node(g, n, nm) != HOP_OK)
        return failed(L, "graph %s node %s", g->name, nm);
    if (strcmp(n->name, nm) != 0)
        return hop__reader_fail(r,
                                "graph %s: the node name %s is not an identifier or not "
                                "unique",
                                g->name, nm);
    L->nodes[gi][L->nnodes[gi]++] = n;
    return HOP_OK;
}

static hop_status
read_graphs(loader *L)
{
    hop__reader *r = &L->r;
    L->ngraphs = section_count(r, "graphs", 2);
    if (!r->failed && L->ngraphs == 0)
        return hop__reader_fail(r, "no root graph");
    size_t n = L->ngraphs;
    L->graphs = tmp_alloc(L, n * sizeof *L->graphs);
    L->tracers = tmp_alloc(L, n * sizeof *L->tracers);
    L->nodes = tmp_alloc(L, n * sizeof *L->nodes);
    L->nnodes = tmp_alloc(L, n * sizeof *L->nnodes);
    size_t *depth = tmp_alloc(L, n * sizeof *depth);
    if (r->failed || !L->graphs || !L->tracers || !L->nodes || !L->nnodes || !depth)
        return r->failed && hop_error_code() != HOP_NOMEM ? HOP_FORMAT : HOP_NOMEM;
    L->ngraphs = 0; /* graph arguments may refer to graphs made so far */
    for (size_t i = 0; i < n && !r->failed; i++) {
        char nm[HOP__SAVED_MAX_NAME + 1];
        get_name(r, nm);
        uint64_t parent = hop__get_u(r);
        if (r->failed)
            break;
        /* (the parent is stored as its index + 1, 0 for none: a message
         * names the index, the graph a reader means) */
        if (i == 0 && (parent != 0 || strcmp(nm, "forward") != 0))
            return hop__reader_fail(r,
                                    "graph 0 (%s): the root comes first, named forward, with "
                                    "no parent",
                                    nm);
        if (i > 0 && parent == 0)
            return hop__reader_fail(r,
                                    "graph %zu (%s) has no parent: only the root, forward, has "
                                    "none",
                                    i, nm);
        if (parent > i)
            return hop__reader_fail(r,
                                    "graph %zu (%s): its parent, graph %llu, is not an earlier "
                                    "graph",
                                    i, nm, (unsigned long long)(parent - 1));
        L->nnodes[i] = 0;
        L->nodes[i] = NULL;
        if (i == 0) {
            L->graphs[0] = hop_output_graph_root_graph(L->og);
            L->tracers[0] = hop_output_graph_root(L->og);
            depth[0] = 0;
            L->ngraphs = 1;
            continue;
        }
        depth[i] = depth[parent - 1] + 1;
        if (depth[i] > HOP_MAX_NESTING)
            return hop__reader_fail(r, "graph %s is nested deeper than %d", nm, HOP_MAX_NESTING);
        hop_graph *g = hop_graph_new(L->env, nm);
        if (g == NULL)
            return failed(L, "graph %s", nm);
        bool renamed = strcmp(g->name, nm) != 0;
        if (renamed || hop_graph_add_subgraph(L->graphs[parent - 1], g) != HOP_OK) {
            hop_status st = renamed
                                ? hop__reader_fail(r, "graph %zu: %s is not an identifier", i, nm)
                                : failed(L, "graph %s", nm);
            hop_graph_free(g);
            return st;
        }
        L->graphs[i] = g;
        L->ngraphs = i + 1;
        if ((L->tracers[i] = hop__output_graph_adopt_graph(L->og, g, L->tracers[parent - 1])) ==
            NULL)
            return HOP_NOMEM;
    }
    for (size_t gi = 0; gi < n && !r->failed; gi++) {
        hop_graph *g = L->graphs[gi];
        r->where = g->name;
        size_t nguards = hop__get_count(r, 1, "graph guards");
        for (size_t i = 0; i < nguards && !r->failed; i++) {
            const hop_expr *e = get_expr(L, "a graph guard");
            if (e && hop_graph_add_guard(g, e) != HOP_OK)
                return failed(L, "graph %s guard %zu", g->name, i);
        }
        size_t count = hop__get_count(r, 3, "nodes");
        if (r->failed || (L->nodes[gi] = tmp_alloc(L, count * sizeof **L->nodes)) == NULL)
            break;
        for (size_t i = 0; i < count && !r->failed; i++) {
            hop_status st = read_node(L, gi, i, count);
            if (st != HOP_OK)
                return st;
        }
        if (!r->failed && g->output == NULL)
            return hop__reader_fail(r, "graph %s has no output node", g->name);
    }
    return r->failed ? (hop_error_code() == HOP_NOMEM ? HOP_NOMEM : HOP_FORMAT) : HOP_OK;
}

/* ------------------------------------------------------- capture tables */

/* Whether cause, the parent's value a lifted SymInt placeholder names as the
 * tensor whose shape brought it in, is a tensor with that symbol in a size
 * (what the tracer records; it records no cause for a lifted tensor). */
static bool
is_cause_of(const hop_node *ph, const hop_node *cause)
{
    const hop_expr *sym = ph->meta->kind == HOP_VALUE_SYM ? ph->meta->sym : NULL;
    if (sym == NULL || hop_expr_kind_of(sym) != HOP_EXPR_SYMBOL ||
        cause->meta->kind != HOP_VALUE_TENSOR)
        return false;
    for (int d = 0; d < cause->meta->meta.rank; d++) {
        const hop_expr *found[2 * HOP_MAX_RANK];
        size_t k = hop_expr_free_symbols(cause->meta->meta.sizes[d], found, HOP__ARRAY_LEN(found));
        for (size_t i = 0; i < k && i < HOP__ARRAY_LEN(found); i++)
            if (found[i] == sym)
                return true;
    }
    return false;
}

static hop_status
read_capture_tables(loader *L)
{
    hop__reader *r = &L->r;
    int **roles = tmp_alloc(L, L->ngraphs * sizeof *roles);
    hop_node ***sources = tmp_alloc(L, L->ngraphs * sizeof *sources);
    if (roles == NULL || sources == NULL)
        return HOP_NOMEM;
    for (size_t gi = 1; gi < L->ngraphs && !r->failed; gi++) {
        hop_graph *g = L->graphs[gi];
        size_t pi = 0;
        while (L->graphs[pi] != g->parent)
            pi++;
        r->where = "capture tables";
        roles[gi] = tmp_alloc(L, g->nplaceholders * sizeof **roles);
        sources[gi] = tmp_alloc(L, g->nplaceholders * sizeof **sources);
        if (roles[gi] == NULL || sources[gi] == NULL)
            return HOP_NOMEM;
        for (size_t j = 0; j < g->nplaceholders && !r->failed; j++) {
            hop_node *ph = L->nodes[gi][j];
            unsigned role = hop__get_byte(r);
            roles[gi][j] = (int)role;
            sources[gi][j] = NULL;
            if (role == HOP__ROLE_EXPLICIT)
                continue;
            uint64_t src = hop__get_u(r);
            if (!r->failed && (role > HOP__ROLE_OTHER || src >= L->nnodes[pi]))
                return hop__reader_fail(r, "%s.%s: role %u or source %llu out of range", g->name,
                                        ph->name, role, (unsigned long long)src);
            if (r->failed)
                break;
            sources[gi][j] = L->nodes[pi][src];
            if (role != HOP__ROLE_LIFTED)
                continue;
            uint64_t cause = hop__get_u(r);
            /* bit 0: a note follows; bit 1: its operand flag (only with a note) */
            unsigned note_flags = hop__get_byte(r);
            char note[HOP__SAVED_MAX_NAME + 1] = "";
            if (note_flags & 1)
                get_name(r, note);
            if (!r->failed && (cause > L->nnodes[pi] || note_flags > 3 || note_flags == 2))
                return hop__reader_fail(r, "%s.%s: cause %llu or note flag out of range", g->name,
                                        ph->name, (unsigned long long)cause);
            if (!r->failed && cause && !is_cause_of(ph, L->nodes[pi][cause - 1]))
                return hop__reader_fail(r,
                                        "%s.%s: the cause %s is not a tensor of %s's parent "
                                        "with this symbol in its shape",
                                        g->name, ph->name, L->nodes[pi][cause - 1]->name, g->name);
            if (r->failed)
                break;
            if (hop__tracer_add_lifted(L->tracers[gi], ph, sources[gi][j],
                                       cause ? L->nodes[pi][cause - 1] : NULL) != HOP_OK)
                return HOP_NOMEM;
            if ((note_flags & 1) &&
                hop_output_graph_set_lift_note(L->og, ph, note, note_flags & 2) != HOP_OK)
                return HOP_NOMEM;
        }
    }
    if (r->failed)
        return HOP_FORMAT;
    /* The tables must say what the graphs say: each placeholder stands for
     * what its call passes, and the roles are the ones the calls imply. */
    for (size_t gi = 1; gi < L->ngraphs; gi++) {
        hop_graph *g = L->graphs[gi];
        hop__capture *table = tmp_alloc(L, g->nplaceholders * sizeof *table);
        if (table == NULL)
            return HOP_NOMEM;
        hop__capture_table(g, table);
        hop_node *call = hop__first_call_of(g);
        for (size_t j = 0; j < g->nplaceholders; j++) {
            bool ok = table[j].role == roles[gi][j] && table[j].source == sources[gi][j];
            const hop_arg *passed = hop_node_passed_to(call, j);
            if (ok && sources[gi][j])
                ok = passed && passed->kind == HOP_ARG_NODE && passed->u.node == sources[gi][j];
            if (!ok)
                return hop__reader_fail(r,
                                        "the capture table of %s says %s stands for %s, which "
                                        "its call does not pass there",
                                        g->name, L->nodes[gi][j]->name,
                                        sources[gi][j] ? sources[gi][j]->name : "an argument");
        }
    }
    return HOP_OK;
}

/* --------------------------------------------------- inputs and values */

static size_t
value_bytes(const hop_saved_tensor *t, bool *ok)
{
    size_t n = hop_dtype_size(t->dtype);
    *ok = true;
    for (int d = 0; d < t->rank && *ok; d++) {
        if (t->sizes[d] > 0 && n > SIZE_MAX / (uint64_t)t->sizes[d])
            *ok = false;
        else
            n *= (size_t)t->sizes[d];
    }
    return n;
}

/* A size symbol is a size of a tensor input: the one the file names. */
static hop_status
check_size_sources(hop__reader *r, const hop_source *srcs, hop_node *const *nodes, size_t n)
{
    for (size_t i = 0; i < n && !r->failed; i++) {
        if (srcs[i].kind != HOP_SOURCE_SIZE)
            continue;
        const hop_value_info *t = nodes[srcs[i].input]->meta;
        if (srcs[srcs[i].input].kind == HOP_SOURCE_SIZE || t->kind != HOP_VALUE_TENSOR ||
            srcs[i].dim >= (size_t)t->meta.rank ||
            t->meta.sizes[srcs[i].dim] != nodes[i]->meta->sym)
            return hop__reader_fail(r, "root input %zu (%s) is not size %zu of root input %zu", i,
                                    nodes[i]->name, srcs[i].dim, srcs[i].input);
    }
    return HOP_OK;
}

static hop_status
read_inputs(loader *L)
{
    hop__reader *r = &L->r;
    hop_graph *root = L->graphs[0];
    size_t n = section_count(r, "root inputs", 2);
    hop_node **nodes = tmp_alloc(L, n * sizeof *nodes);
    hop_source *srcs = tmp_alloc(L, n * sizeof *srcs);
    bool *seen = tmp_alloc(L, (root->nplaceholders + 1) * sizeof *seen);
    if (r->failed || !nodes || !srcs || !seen)
        return r->failed ? HOP_FORMAT : HOP_NOMEM;
    memset(seen, 0, (root->nplaceholders + 1) * sizeof *seen);
    if (n != root->nplaceholders)
        return hop__reader_fail(r, "%zu root inputs for %zu placeholders", n, root->nplaceholders);
    size_t ncaptures = 0, nargs = 0;
    for (size_t i = 0; i < n && !r->failed; i++) {
        uint64_t k = hop__get_u(r);
        unsigned kind = hop__get_byte(r);
        memset(&srcs[i], 0, sizeof srcs[i]);
        srcs[i].kind = (hop_source_kind)kind;
        /* The writer lists the root's placeholders in order, arguments
         * numbered as they come: a plan takes its inputs in placeholder order,
         * so a list in another order would bind a value to a placeholder the
         * file gives another. */
        if (!r->failed && k != i)
            return hop__reader_fail(r,
                                    "root input %zu is placeholder %llu, not %zu (the root "
                                    "inputs are its placeholders in order)",
                                    i, (unsigned long long)k, i);
        if (kind == HOP_SOURCE_ARG) {
            srcs[i].position = (size_t)hop__get_u(r);
            if (!r->failed && srcs[i].position != nargs++)
                return hop__reader_fail(r, "root input %zu is argument %zu, not %zu", i,
                                        srcs[i].position, nargs - 1);
        } else if (kind == HOP_SOURCE_SIZE) {
            srcs[i].input = (size_t)hop__get_u(r);
            srcs[i].dim = (size_t)hop__get_u(r);
        } else if (kind == HOP_SOURCE_CAPTURE) {
            ncaptures++;
        }
        hop_value_kind want = kind == HOP_SOURCE_SIZE ? HOP_VALUE_SYM : HOP_VALUE_TENSOR;
        if (!r->failed &&
            (k >= root->nplaceholders || seen[k] || kind > HOP_SOURCE_SIZE ||
             (kind == HOP_SOURCE_SIZE && (srcs[i].input >= n || srcs[i].dim >= HOP_MAX_RANK)) ||
             L->nodes[0][k]->meta->kind != want))
            return hop__reader_fail(r,
                                    "root input %zu: placeholder %llu or its source is out of "
                                    "range",
                                    i, (unsigned long long)k);
        if (!r->failed) {
            seen[k] = true;
            nodes[i] = L->nodes[0][k];
        }
    }
    if (!r->failed && check_size_sources(r, srcs, nodes, n) != HOP_OK)
        return HOP_FORMAT;
    size_t nvalues = section_count(r, "captured values", 3);
    if (!r->failed && nvalues != ncaptures)
        return hop__reader_fail(r, "%zu values for %zu captured inputs", nvalues, ncaptures);
    hop_saved *s = L->s;
    if (r->failed || (s->captures = hop__calloc(nvalues + 1, sizeof *s->captures)) == NULL)
        return r->failed ? HOP_FORMAT : HOP_NOMEM;
    if ((L->identities = tmp_alloc(L, (nvalues + 1) * sizeof *L->identities)) == NULL)
        return HOP_NOMEM;
    size_t c = 0;
    for (size_t i = 0; i < n && !r->failed; i++) {
        if (srcs[i].kind != HOP_SOURCE_CAPTURE)
            continue;
        hop_saved_tensor *t = &s->captures[c];
        const hop_meta *m = &nodes[i]->meta->meta;
        unsigned dtype = hop__get_byte(r), rank = hop__get_byte(r);
        bool ok = dtype == (unsigned)m->dtype && rank == (unsigned)m->rank;
        t->dtype = m->dtype;
        t->rank = m->rank;
        for (int d = 0; ok && d < m->rank; d++) {
            int64_t want;
            t->sizes[d] = (int64_t)hop__get_u(r);
            ok = hop_expr_const_value(m->sizes[d], &want) && want == t->sizes[d];
        }
        size_t len, need = ok ? value_bytes(t, &ok) : 0;
        const void *bytes = hop__get_bytes(r, SIZE_MAX, &len);
        if (!r->failed && (!ok || len != need))
            return hop__reader_fail(r,
                                    "the value of captured input %s does not have its "
                                    "metadata",
                                    nodes[i]->name);
        if (r->failed)
            break;
        void *copy = hop__malloc(len + 1);
        if (copy == NULL)
            return HOP_NOMEM;
        memcpy(copy, bytes, len);
        t->data = copy;
        s->ncaptures = ++c;
    }
    if (r->failed)
        return HOP_FORMAT;
    c = 0;
    for (size_t i = 0; i < n; i++) {
        if (srcs[i].kind == HOP_SOURCE_CAPTURE) {
            const hop_saved_tensor *t = &s->captures[c];
            const void *id = t;
            if (L->opts->capture) {
                if ((id = L->opts->capture(L->opts->ud, c, t)) == NULL)
                    return hop_error_code() == HOP_OK ? hop_error(HOP_NOMEM, "out of memory")
                                                      : hop_error_code();
                L->identities[L->nidentities++] = id;
            }
            srcs[i].identity = id;
            c++;
        }
        if (hop__output_graph_adopt_input(L->og, nodes[i], srcs[i]) != HOP_OK)
            return hop_error_code();
    }
    return HOP_OK;
}

static hop_status
read_sections(loader *L)
{
    hop__reader *r = &L->r;
    size_t n = section_count(r, "sections", 2);
    hop_saved *s = L->s;
    if (r->failed || (s->sections = hop__calloc(n + 1, sizeof *s->sections)) == NULL)
        return r->failed ? HOP_FORMAT : HOP_NOMEM;
    for (size_t i = 0; i < n && !r->failed; i++) {
        size_t nlen, len;
        const char *name = hop__get_bytes(r, HOP__SAVED_MAX_SECTION, &nlen);
        if (name && memchr(name, '\0', nlen) != NULL)
            return hop__reader_fail(r, "the name of section %zu holds a NUL byte", i);
        const void *data = hop__get_bytes(r, SIZE_MAX, &len);
        if (r->failed)
            break;
        char *nm = hop__malloc(nlen + 1);
        void *copy = nm ? hop__malloc(len + 1) : NULL;
        if (copy == NULL) {
            hop__free(nm);
            return HOP_NOMEM;
        }
        memcpy(nm, name, nlen);
        nm[nlen] = '\0';
        memcpy(copy, data, len);
        s->sections[i] = (hop_saved_section){.name = nm, .data = copy, .size = len};
        s->nsections = i + 1;
    }
    if (!r->failed && hop__left(r) != 0)
        return hop__reader_fail(r, "%zu bytes after the last record", hop__left(r));
    return r->failed ? HOP_FORMAT : HOP_OK;
}

/* ----------------------------------------------------------------- load */

static uint64_t
read_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int k = 0; k < n; k++)
        v |= (uint64_t)p[k] << (8 * k);
    return v;
}

static hop_status
check_header(const unsigned char *p, size_t size)
{
    if (size < HOP__SAVED_HEADER + HOP__SAVED_TRAILER || memcmp(p, HOP__SAVED_MAGIC, 8) != 0)
        return hop_error(HOP_FORMAT, "load: not a saved hop program (%s)",
                         size < HOP__SAVED_HEADER + HOP__SAVED_TRAILER
                             ? "too short"
                             : "no \"hopsaved\" magic number");
    uint64_t version = read_le(p + 8, 4), reserved = read_le(p + 12, 4);
    uint64_t length = read_le(p + 16, 8);
    uint32_t crc = (uint32_t)read_le(p + size - HOP__SAVED_TRAILER, 4);
    if (length != size - HOP__SAVED_HEADER - HOP__SAVED_TRAILER)
        return hop_error(HOP_FORMAT,
                         "load: the file is %zu bytes but its header says %llu (truncated or "
                         "extended)",
                         size, (unsigned long long)length + HOP__SAVED_HEADER + HOP__SAVED_TRAILER);
    if (hop__crc32(p, size - HOP__SAVED_TRAILER) != crc)
        return hop_error(HOP_FORMAT, "load: checksum mismatch: the file is corrupted");
    if (version != HOP_SAVED_VERSION || reserved != 0)
        return hop_error(HOP_FORMAT, "load: format version %llu, but this hop reads version %d",
                         (unsigned long long)version, HOP_SAVED_VERSION);
    return HOP_OK;
}

void
hop_saved_free(hop_saved *s)
{
    if (s == NULL)
        return;
    hop_output_graph_free(s->og);
    for (size_t i = 0; i < s->ncaptures; i++)
        hop__free((void *)s->captures[i].data);
    hop__free(s->captures);
    for (size_t i = 0; i < s->nsections; i++) {
        hop__free((void *)s->sections[i].name);
        hop__free((void *)s->sections[i].data);
    }
    hop__free(s->sections);
    hop__free(s);
}

hop_saved *
hop_output_graph_load(const void *data, size_t size, const hop_load_options *opts)
{
    if (data == NULL || opts == NULL) {
        hop_error(HOP_MISUSE, "load: NULL %s", data == NULL ? "data" : "options");
        return NULL;
    }
    const unsigned char *p = data;
    if (check_header(p, size) != HOP_OK)
        return NULL;
    loader L = {.opts = opts};
    L.r.start = L.r.p = p + HOP__SAVED_HEADER;
    L.r.end = p + size - HOP__SAVED_TRAILER;
    L.r.where = "header";
    hop__arena_init(&L.tmp);
    hop_status st = HOP_NOMEM;
    if ((L.s = hop__calloc(1, sizeof *L.s)) != NULL && (L.s->og = hop_output_graph_new()) != NULL) {
        L.og = L.s->og;
        L.env = hop_output_graph_env(L.og);
        st = read_env(&L);
        if (st == HOP_OK)
            st = read_graphs(&L);
        if (st == HOP_OK)
            st = read_capture_tables(&L);
        if (st == HOP_OK)
            st = read_inputs(&L);
        if (st == HOP_OK)
            st = read_sections(&L);
        L.r.where = "all graphs"; /* (not the sections, the last record read) */
        if (st == HOP_OK && hop_graph_verify(L.graphs[0]) != HOP_OK)
            st = failed(&L, "the program does not verify");
    }
    if (st != HOP_OK && st != HOP_NOMEM && hop_error_code() == HOP_NOMEM)
        st = HOP_NOMEM;
    if (st != HOP_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hop_error_message());
        for (size_t i = 0; i < L.nidentities; i++)
            if (opts->release)
                opts->release(opts->ud, L.identities[i]);
        hop_saved_free(L.s);
        L.s = NULL;
        if (st == HOP_NOMEM)
            hop_error(HOP_NOMEM, "out of memory");
        else
            hop_error(st, "%s", msg);
    }
    hop__arena_destroy(&L.tmp);
    return L.s;
}
