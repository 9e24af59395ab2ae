/*
 * lowering/values.c - what the code generator knows of values: the value
 * of each node (a tensor slot, an int register or a constant: hop_pval),
 * keyed by the node; the slots of tensors, with their sizes compiled and,
 * for buffers of the memory plan, their bytes; the operands of
 * instructions; and the text of nodes and arguments in a plan.
 */
#include "lowering/lowering_impl.h"

#include <inttypes.h>
#include <stdio.h>

/* ---------------------------------------------------------------- values */

/* Makes the table cap entries (a power of two above its count), moving the
 * entries over.  The old one is kept on failure. */
static hop_status
resize_values(hop_lower_ctx *cx, size_t cap)
{
    /* (a large table is kept for the next lowering: ctx_free) */
    hop__vmap **t = cap <= SIZE_MAX / 2 / sizeof *t ? hop__malloc_small(cap * sizeof *t) : NULL;
    if (t == NULL)
        return hop_error(HOP_NOMEM, "out of memory growing a hash table");
    memset(t, 0, cap * sizeof *t);
    hop__vmap **old = cx->values;
    size_t oldcap = cx->vcap;
    cx->values = t;
    cx->vcap = cap;
    for (size_t i = 0; i < oldcap; i++) {
        hop__vmap *m = old[i];
        if (m == NULL)
            continue;
        size_t k = hop__vmap_home(cx, m->node);
        while (t[k] != NULL)
            k = (k + 1) & (cap - 1);
        t[k] = m;
    }
    hop__free_small(old, oldcap * sizeof *old);
    return HOP_OK;
}

/* Doubles the table (or makes its first 64 entries). */
static hop_status
grow_values(hop_lower_ctx *cx)
{
    return resize_values(cx, cx->vcap ? cx->vcap * 2 : 64);
}

hop_status
hop__vmap_reserve(hop_lower_ctx *cx, size_t n)
{
    size_t cap = cx->vcap ? cx->vcap : 64;
    while (cap / 2 < n + 1 && cap <= SIZE_MAX / 4)
        cap *= 2;
    return cap > cx->vcap ? resize_values(cx, cap) : HOP_OK;
}

hop__vmap *
hop__vmap_add(hop_lower_ctx *cx, const hop_node *n)
{
    if (2 * (cx->vcount + 1) > cx->vcap && grow_values(cx) != HOP_OK)
        return NULL;
    size_t k = hop__vmap_home(cx, n);
    while (cx->values[k] != NULL)
        k = (k + 1) & (cx->vcap - 1);
    hop__vmap *m = hop__arena_zalloc(&cx->tmp, sizeof *m);
    if (m == NULL)
        return NULL;
    m->node = n;
    cx->values[k] = m;
    cx->vcount++;
    return m;
}

hop_status
hop__value_of(hop_lower_ctx *cx, const hop_node *n, hop_pval *out)
{
    hop__vmap *m = hop__vmap_get(cx, n, false);
    if (m == NULL || m->v.kind == HOP_PVAL_NONE || m->preassigned)
        return hop_error(HOP_VERIFY, "lowering: %s is used before it is computed",
                         n ? n->name : "(null)");
    *out = m->v;
    return HOP_OK;
}

hop_status
hop__set_value(hop_lower_ctx *cx, const hop_node *n, hop_pval v)
{
    hop__vmap *m = hop__vmap_get(cx, n, true);
    if (m == NULL)
        return HOP_NOMEM;
    m->v = v;
    m->preassigned = false;
    return HOP_OK;
}

hop_status
hop__arg_value(hop_lower_ctx *cx, const hop_arg *arg, hop_pval *out)
{
    int64_t c;
    switch (arg->kind) {
    case HOP_ARG_NODE:
        return hop__value_of(cx, arg->u.node, out);
    case HOP_ARG_INT:
        *out = hop__pv_const(arg->u.i);
        return HOP_OK;
    case HOP_ARG_BOOL:
        *out = hop__pv_const(arg->u.b);
        return HOP_OK;
    case HOP_ARG_SYM: {
        if (hop_expr_const_value(arg->u.sym, &c)) {
            *out = hop__pv_const(c);
            return HOP_OK;
        }
        if (hop_expr_kind_of(arg->u.sym) == HOP_EXPR_SYMBOL) {
            int32_t reg = hop__sym_reg(cx, arg->u.sym);
            if (reg < 0)
                return hop__nomem_or(hop_error_code());
            *out = hop__pv_int(reg);
            return HOP_OK;
        }
        const hop__xprog *x = hop__xcompile(cx, arg->u.sym);
        int32_t reg;
        hop_status st = x ? hop__new_reg(cx, NULL, &reg) : hop__nomem_or(hop_error_code());
        if (st != HOP_OK)
            return st;
        if (hop__emit(cx, HOP__OP_Eval, reg, 0, 0, x, x->text) < 0)
            return HOP_NOMEM;
        *out = hop__pv_int(reg);
        return HOP_OK;
    }
    default:
        return hop_error(HOP_INVALID, "hop_lower_arg: an argument of kind %d has no plan value",
                         (int)arg->kind);
    }
}

/* ----------------------------------------------------------------- slots */

bool
hop__meta_late(hop_lower_ctx *cx, const hop_meta *m)
{
    for (int d = 0; d < m->rank; d++) {
        const hop_expr *syms[16];
        size_t n = hop_expr_free_symbols(m->sizes[d], syms, 16);
        if (n > 16)
            return true;
        for (size_t i = 0; i < n; i++)
            if (hop_symbol_is_unbacked(syms[i]) || !hop__entry_bound(cx, syms[i]))
                return true;
    }
    return false;
}

/* Bytes at the hints, for best-fit decisions (unbacked: 16 per size). */
static int64_t
hint_bytes(hop_lower_ctx *cx, const hop_meta *m)
{
    int64_t n = (int64_t)hop_dtype_size(m->dtype);
    for (int d = 0; d < m->rank; d++) {
        int64_t v = 16;
        const hop_expr *syms[16];
        size_t ns = hop_expr_free_symbols(m->sizes[d], syms, 16);
        int64_t vals[64];
        size_t nall = hop_shape_env_nsymbols(cx->env);
        if (!hop_expr_const_value(m->sizes[d], &v) && ns <= 16 && nall <= 64) {
            for (size_t i = 0; i < nall; i++)
                vals[i] = HOP_UNBOUND;
            for (size_t i = 0; i < ns; i++) {
                int64_t h = 16;
                hop_symbol_hint(syms[i], &h);
                vals[hop_symbol_id(syms[i])] = h;
            }
            if (hop_expr_eval(m->sizes[d], vals, nall, &v) != HOP_OK)
                v = 16;
            hop_error_clear();
        }
        if (v < 0 || __builtin_mul_overflow(n, v, &n))
            return INT64_MAX / 2;
    }
    return n;
}

/* A buffer's bytes when its sizes are all constants and the product fits
 * (what hop_meta_numel times the dtype's size folds to, and hint_bytes
 * gives): one interned constant where the symbolic product interned two
 * or three expressions a buffer (issue #30: lowering a HOP call's ~8
 * buffers).  Anything else (a symbol, an overflow): false, the general
 * path's. */
static bool
const_bytes(const hop_meta *meta, int64_t *out)
{
    int64_t n = (int64_t)hop_dtype_size(meta->dtype), v;
    for (int d = 0; d < meta->rank; d++)
        if (!hop_expr_const_value(meta->sizes[d], &v) || v < 0 ||
            __builtin_mul_overflow(n, v, &n))
            return false;
    *out = n;
    return true;
}

hop_status
hop__new_slot(hop_lower_ctx *cx, hop__skind kind, const hop_meta *meta, const char *name,
              int32_t *out)
{
    if (hop__grow((void **)&cx->slots, &cx->capslots, cx->nslots + 1, sizeof *cx->slots) != HOP_OK)
        return HOP_NOMEM;
    hop__slot s = {.kind = kind, .dtype = meta->dtype, .rank = meta->rank, .buffer = -1};
    if (name && (s.name = hop__arena_strdup(&cx->plan->arena, name)) == NULL)
        return HOP_NOMEM;
    if (meta->rank > 0) {
        const hop__xprog **sz = hop__arena_alloc(&cx->plan->arena, (size_t)meta->rank * sizeof *sz);
        if (sz == NULL)
            return HOP_NOMEM;
        for (int d = 0; d < meta->rank; d++)
            if ((sz[d] = hop__xcompile(cx, meta->sizes[d])) == NULL)
                return hop__nomem_or(hop_error_code());
        s.sizes = sz;
    }
    if (kind == HOP__S_BUFFER) {
        if (hop__grow((void **)&cx->buffers, &cx->capbuffers, cx->nbuffers + 1,
                      sizeof *cx->buffers) != HOP_OK)
            return HOP_NOMEM;
        /* A product of sizes that overflows int64 is a tensor too large to
         * make, but only if it is made: the layout checks its sizes when it
         * runs, as eager checks an op's result (a branch not taken, a map
         * of no rows, sizes bound at run time). */
        int64_t nbytes;
        bool fixed = const_bytes(meta, &nbytes);
        const hop_expr *bytes = NULL;
        if (fixed) {
            bytes = hop_sym_const(cx->env, nbytes);
        } else {
            const hop_expr *numel = hop_meta_numel(meta, cx->env);
            bytes = numel ? hop_sym_mul_int(cx->env, numel, (int64_t)hop_dtype_size(meta->dtype))
                          : NULL;
        }
        const hop__xprog *bx = NULL;
        if (bytes == NULL) {
            if (hop_error_code() != HOP_INVALID)
                return hop__nomem_or(hop_error_code());
            hop_error_clear();
        } else if ((bx = hop__xcompile(cx, bytes)) == NULL) {
            return hop__nomem_or(hop_error_code());
        }
        cx->buffers[cx->nbuffers] =
            (hop__buffer){.slot = (int32_t)cx->nslots,
                          .routine = cx->cur,
                          .def = INT32_MAX,
                          .last = -1,
                          .section = cx->section_routine == cx->cur ? cx->section : 0,
                          .bytes = bx,
                          .hint = fixed ? nbytes : hint_bytes(cx, meta)};
        s.buffer = (int32_t)cx->nbuffers++;
    }
    cx->slots[cx->nslots] = s;
    *out = (int32_t)cx->nslots++;
    return HOP_OK;
}

static const hop__xprog *
pval_xprog(hop_lower_ctx *cx, hop_pval v)
{
    if (v.kind == HOP_PVAL_CONST)
        return hop__xconst(cx, v.value);
    hop__xprog *x = hop__arena_zalloc(&cx->plan->arena, sizeof *x);
    hop__xi *code = hop__arena_alloc(&cx->plan->arena, sizeof *code);
    int32_t *regs = hop__arena_alloc(&cx->plan->arena, sizeof *regs);
    const char **names = hop__arena_alloc(&cx->plan->arena, sizeof *names);
    if (x == NULL || code == NULL || regs == NULL || names == NULL)
        return NULL;
    const char *rn = cx->regnames[v.id];
    *code = (hop__xi){.op = HOP__X_REG, .reg = v.id};
    *regs = v.id;
    *names = rn ? rn : "r";
    x->text = rn ? rn : hop__note(cx, "r%d", v.id);
    x->code = code;
    x->len = 1;
    x->regs = regs;
    x->names = names;
    x->nsyms = 1;
    return x->text ? x : NULL;
}

/* --------------------------------------------------------- text of nodes */

/* An argument as plans print it (graph's printer; floats as %.17g). */
static size_t
print_arg(const void *a, char *buf, size_t cap)
{
    return hop_arg_print(a, HOP_FLOAT_G17, buf, cap);
}

void
hop__arg_text(hop__buf *b, const hop_arg *a)
{
    if (a->kind == HOP_ARG_NODE) /* the printer's text for it, without its setup */
        hop__buf_puts(b, a->u.node->name);
    else
        hop__buf_print(b, print_arg, a);
}

/* An argument of a node as its text needs it (in the plan's arena): a
 * scalar as the node has it (arg), a list's items kept the same way, or the
 * whole text of another kind made now (a node's or subgraph's name, an
 * expression's text). */
typedef struct ntarg {
    hop_arg arg;               /* arg.kind always; the value of a scalar */
    const char *text;          /* the whole text, or NULL */
    const struct ntarg *items; /* a list's arg.u.list.n items */
} ntarg;

/* What node_text_write needs: `name = target(args)`. */
typedef struct node_text {
    hop__ntext base;
    const char *name, *target;
    size_t nargs;
    const ntarg *args;
} node_text;

static void
ntargs_write(const ntarg *args, size_t n, hop__buf *b)
{
    for (size_t i = 0; i < n; i++) {
        const ntarg *a = &args[i];
        if (i)
            hop__buf_append(b, ", ", 2);
        if (a->text) {
            hop__buf_puts(b, a->text);
        } else if (a->arg.kind == HOP_ARG_LIST) {
            hop__buf_append(b, "[", 1);
            ntargs_write(a->items, a->arg.u.list.n, b);
            hop__buf_append(b, "]", 1);
        } else {
            hop__arg_text(b, &a->arg);
        }
    }
}

static void
node_text_write(const hop__ntext *t, hop__buf *b)
{
    const node_text *nt = (const node_text *)t;
    hop__buf_puts(b, nt->name);
    hop__buf_append(b, " = ", 3);
    hop__buf_puts(b, nt->target);
    hop__buf_append(b, "(", 1);
    ntargs_write(nt->args, nt->nargs, b);
    hop__buf_append(b, ")", 1);
}

/* The text of a (an argument kind ntargs_write does not print) now. */
static const char *
arg_text_now(hop_lower_ctx *cx, const hop_arg *a)
{
    hop__buf b;
    hop__buf_init(&b);
    hop__arg_text(&b, a);
    char *s = hop__buf_finish(&b);
    if (s == NULL)
        return NULL;
    char *copy = hop__arena_strdup(&cx->plan->arena, s);
    hop_free(s);
    return copy;
}

static hop_status
ntargs_keep(hop_lower_ctx *cx, const hop_arg *args, size_t n, ntarg *out)
{
    hop__arena *ar = &cx->plan->arena;
    for (size_t i = 0; i < n; i++) {
        const hop_arg *a = &args[i];
        ntarg *o = &out[i];
        *o = (ntarg){.arg = {.kind = a->kind}};
        switch (a->kind) {
        case HOP_ARG_NONE:
        case HOP_ARG_INT:
        case HOP_ARG_FLOAT:
        case HOP_ARG_BOOL:
        case HOP_ARG_DTYPE:
            o->arg = *a; /* (no pointer into the graph) */
            break;
        case HOP_ARG_LIST: {
            ntarg *items = hop__arena_alloc(ar, (a->u.list.n + 1) * sizeof *items);
            if (items == NULL)
                return HOP_NOMEM;
            hop_status st = ntargs_keep(cx, a->u.list.items, a->u.list.n, items);
            if (st != HOP_OK)
                return st;
            o->items = items;
            o->arg.u.list.n = a->u.list.n;
            break;
        }
        default: /* a node's or subgraph's name, an expression's text */
            o->text = a->kind == HOP_ARG_NODE    ? hop__arena_strdup(ar, a->u.node->name)
                      : a->kind == HOP_ARG_GRAPH ? hop__arena_strdup(ar, a->u.graph->name)
                                                 : arg_text_now(cx, a);
            if (o->text == NULL)
                return HOP_NOMEM;
            break;
        }
    }
    return HOP_OK;
}

const hop__ntext *
hop__node_text(hop_lower_ctx *cx, const hop_node *n)
{
    hop__arena *ar = &cx->plan->arena;
    node_text *t = hop__arena_alloc(ar, sizeof *t);
    ntarg *args = hop__arena_alloc(ar, (n->nargs + 1) * sizeof *args);
    if (t == NULL || args == NULL)
        return NULL;
    /* An op's name is static; another target (a foreign kernel's) is the graph's. */
    const char *target = hop_node_target(n);
    *t = (node_text){.base = {node_text_write},
                     .name = hop__arena_strdup(ar, n->name),
                     .target = n->kind == HOP_NODE_CALL_OP ? target : hop__arena_strdup(ar, target),
                     .nargs = n->nargs,
                     .args = args};
    if (t->name == NULL || t->target == NULL || ntargs_keep(cx, n->args, n->nargs, args) != HOP_OK)
        return NULL;
    return &t->base;
}

/* ---------------------------------------------------------------- operands */

hop_status
hop__compile_oparg(hop_lower_ctx *cx, const hop_arg *a, hop__oparg *o, int32_t *nrt)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    (*nrt)++;
    hop_pval v;
    switch (a->kind) {
    case HOP_ARG_NONE:
        o->kind = HOP__A_NONE;
        return HOP_OK;
    case HOP_ARG_NODE: {
        hop_status st = hop__value_of(cx, a->u.node, &v);
        if (st != HOP_OK)
            return st;
        if (v.kind == HOP_PVAL_TENSOR) {
            o->kind = HOP__A_TENSOR;
            o->slot = v.id;
            return HOP_OK;
        }
        bool is_bool =
            a->u.node->meta->kind == HOP_VALUE_SYM && hop_expr_is_bool(a->u.node->meta->sym);
        o->kind = is_bool ? HOP__A_BOOL : HOP__A_INT;
        o->x = pval_xprog(cx, v);
        return o->x ? HOP_OK : HOP_NOMEM;
    }
    case HOP_ARG_INT:
        o->kind = HOP__A_INT;
        o->x = hop__xconst(cx, a->u.i);
        return o->x ? HOP_OK : HOP_NOMEM;
    case HOP_ARG_BOOL:
        o->kind = HOP__A_BOOL;
        o->x = hop__xconst(cx, a->u.b);
        return o->x ? HOP_OK : HOP_NOMEM;
    case HOP_ARG_FLOAT:
        o->kind = HOP__A_FLOAT;
        o->f = a->u.f;
        return HOP_OK;
    case HOP_ARG_SYM:
        o->x = hop__xcompile(cx, a->u.sym);
        if (o->x == NULL)
            return hop__nomem_or(hop_error_code());
        o->kind = o->x->is_bool ? HOP__A_BOOL : HOP__A_INT;
        return HOP_OK;
    case HOP_ARG_DTYPE:
        o->kind = HOP__A_DTYPE;
        o->dtype = a->u.dtype;
        return HOP_OK;
    case HOP_ARG_LIST: {
        o->kind = HOP__A_LIST;
        o->n = (int32_t)a->u.list.n;
        hop__oparg *items = hop__arena_zalloc(&cx->plan->arena, (a->u.list.n + 1) * sizeof *items);
        if (items == NULL)
            return HOP_NOMEM;
        for (size_t i = 0; i < a->u.list.n; i++) {
            hop_status st = hop__compile_oparg(cx, &a->u.list.items[i], &items[i], nrt);
            if (st != HOP_OK)
                return st;
        }
        o->items = items;
        return HOP_OK;
    }
    case HOP_ARG_GRAPH:
        break;
    }
    return hop_error(HOP_VERIFY, "lowering: a subgraph is not an operand of an op");
}
