/*
 * lowering/lower.c - graph -> program: the compilation of each node kind
 * (a fused group from what fusion planning, fuseplan.c, built), graphs,
 * guards, the main routine, the assembly of the routines into one program,
 * and hop_lower itself; and the toolkit's entries that compile a graph
 * (hop_lower_inline, hop_lower_call and its subroutines,
 * hop_lower_default), which recurse into the compiler.
 *
 * Compilation walks a graph in its order (which is topological) and emits
 * instructions into the current routine: routine 0 is the main program,
 * every subgraph compiled by hop_lower_call gets its own routine, appended
 * after main when the plan is assembled (jump targets are routine-relative
 * until then).  Values are hop_pvals: a tensor slot, an int register or a
 * constant.  A node whose result is one of its graph's outputs can be bound
 * to a destination slot (the row of map's stacked output, a caller's result
 * buffer, a root output tensor) so that the instruction computing it writes
 * there directly instead of into the block.
 */
#include "lowering/lowering_impl.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* --------------------------------------------------------------- helpers */

static hop__vmap *
vmap_get(hop_lower_ctx *cx, const hop_node *n, bool create)
{
    return hop__vmap_get(cx, n, create);
}

static hop_status
set_value(hop_lower_ctx *cx, const hop_node *n, hop_pval v)
{
    return hop__set_value(cx, n, v);
}

/* The op a node runs, for messages that name it as eager names it. */
static const char *
op_name(const hop_node *n)
{
    const hop_op_info *info = n->kind == HOP_NODE_CALL_OP ? hop_op_get(n->op) : NULL;
    return info ? info->name : NULL;
}

/* A slot with storage for a node's result: its destination when it has
 * one, else the block, else (sizes known only mid-run) allocated by an
 * Alloc right here. */
static hop_status new_storage(hop_lower_ctx *cx, const hop_node *n, int32_t *slot);

static hop_status
storage_for(hop_lower_ctx *cx, const hop_node *n, int32_t *slot)
{
    hop__vmap *m = vmap_get(cx, n, false);
    if (m && m->preassigned) {
        *slot = m->v.id;
        m->preassigned = false;
        return HOP_OK;
    }
    return new_storage(cx, n, slot);
}

/* Storage of the plan's own for n's result (the block, or an Alloc here). */
static hop_status
new_storage(hop_lower_ctx *cx, const hop_node *n, int32_t *slot)
{
    const hop_meta *meta = &n->meta->meta;
    bool late = hop__meta_late(cx, meta);
    hop_status st = hop__new_slot(cx, late ? HOP__S_LATE : HOP__S_BUFFER, meta, n->name, slot);
    if (st != HOP_OK)
        return st;
    cx->slots[*slot].what = op_name(n);
    if (late) {
        if (hop__emit(cx, HOP__OP_Alloc, *slot, 0, 0, NULL, cx->slots[*slot].name) < 0)
            return HOP_NOMEM;
    }
    return HOP_OK;
}

static hop_status
compile_opdesc(hop_lower_ctx *cx, const hop_node *n, hop__opdesc **out)
{
    hop__opdesc *d = hop__arena_zalloc(&cx->plan->arena, sizeof *d);
    hop__oparg *args = hop__arena_zalloc(&cx->plan->arena, (n->nargs + 1) * sizeof *args);
    if (d == NULL || args == NULL)
        return HOP_NOMEM;
    d->op = n->op;
    d->nargs = (int)n->nargs;
    d->cache = -1;
    for (size_t i = 0; i < n->nargs; i++) {
        hop_status st = hop__compile_oparg(cx, &n->args[i], &args[i], &d->nrt);
        if (st != HOP_OK)
            return st;
    }
    d->args = args;
    /* Every descriptor gets its runtime operands in the frame. */
    d->rtbase = (int32_t)cx->nrtargs;
    cx->nrtargs += d->nrt;
    if ((d->text = hop__node_text(cx, n)) == NULL)
        return HOP_NOMEM;
    *out = d;
    return HOP_OK;
}

/* Records the accesses of every tensor operand of d (and of out). */
static hop_status
access_args(hop_lower_ctx *cx, const hop__oparg *args, int n)
{
    for (int i = 0; i < n; i++) {
        hop_status st = HOP_OK;
        if (args[i].kind == HOP__A_TENSOR)
            st = hop__access(cx, args[i].slot);
        else if (args[i].kind == HOP__A_LIST)
            st = access_args(cx, args[i].items, args[i].n);
        if (st != HOP_OK)
            return st;
    }
    return HOP_OK;
}

/* --------------------------------------------------------- call_op nodes */

/* Op node n's instruction op (P1 out, P2 p2, P4 d), the accesses of its
 * tensor operands and of out (for a view, alias: the slot out aliases, else
 * -1), and n's value: slot out. */
static hop_status
emit_op(hop_lower_ctx *cx, const hop_node *n, hop__opcode op, int32_t out, int32_t p2,
        hop__opdesc *d, int32_t alias)
{
    if (hop__emit(cx, op, out, p2, 0, d, NULL) < 0)
        return HOP_NOMEM;
    hop_status st;
    if ((st = access_args(cx, d->args, d->nargs)) != HOP_OK ||
        (st = hop__access(cx, out)) != HOP_OK ||
        (alias >= 0 && (st = hop__alias_of(cx, out, alias)) != HOP_OK))
        return st;
    return set_value(cx, n, hop__pv_tensor(out));
}

/* The Fused instruction just emitted whose group's output reduction op d
 * (into out) can be, as its epilogue (program.h): a reduction to one
 * element of exactly that output, nothing jumping between the two, the
 * group without one yet; NULL otherwise. */
static hop__fgroup *
epilogue_group(hop_lower_ctx *cx, const hop_node *n, const hop__opdesc *d)
{
    const hop_op_info *info = hop_op_get(n->op);
    hop__rcode *r = hop__cur(cx);
    if (info == NULL || info->family != HOP_KF_REDUCE || d->nargs < 1 ||
        d->args[0].kind != HOP__A_TENSOR || r->n == 0)
        return NULL;
    const hop__insn *last = &r->code[r->n - 1];
    if (last->opcode != HOP__OP_Fused || last->p1 != d->args[0].slot ||
        ((const hop__fgroup *)last->p4)->epi != NULL || hop__jump_target(r, (int32_t)r->n))
        return NULL;
    const hop_meta *m = &n->meta->meta;
    for (int i = 0; i < m->rank; i++) {
        int64_t v;
        if (!hop_expr_const_value(m->sizes[i], &v) || v != 1)
            return NULL;
    }
    return (hop__fgroup *)last->p4; /* (the plan's arena: ours until it is done) */
}

static hop_status
compile_kernel_op(hop_lower_ctx *cx, const hop_node *n)
{
    hop__opdesc *d;
    hop_status st = compile_opdesc(cx, n, &d);
    int32_t out;
    if (st == HOP_OK)
        st = storage_for(cx, n, &out);
    if (st != HOP_OK)
        return st;
    d->cache = cx->ncache++;
    hop__fgroup *g = epilogue_group(cx, n, d);
    if (g == NULL)
        return emit_op(cx, n, HOP__OP_Op, out, d->cache, d, -1);
    /* the reduction runs inside the group's instruction: its accesses are
     * that instruction's */
    g->epi = d;
    g->epi_out = out;
    if ((st = access_args(cx, d->args, d->nargs)) != HOP_OK || (st = hop__access(cx, out)) != HOP_OK)
        return st;
    return set_value(cx, n, hop__pv_tensor(out));
}

static hop_status
compile_view(hop_lower_ctx *cx, const hop_node *n)
{
    hop__opdesc *d;
    hop_status st = compile_opdesc(cx, n, &d);
    if (st != HOP_OK)
        return st;
    if (d->nargs < 1 || d->args[0].kind != HOP__A_TENSOR)
        return hop_error(HOP_VERIFY, "lowering: %s: the input of a view is not a tensor", n->name);
    if (n->op == HOP_OP_squeeze) {
        /* Which dims go was decided at trace time (sizes that are 1). */
        const hop_node *x = n->args[0].u.node;
        int rank = x->meta->meta.rank, keep = 0;
        int64_t dim = -1;
        if (n->args[1].kind == HOP_ARG_INT)
            dim = n->args[1].u.i < 0 ? n->args[1].u.i + rank : n->args[1].u.i;
        for (int i = 0; i < rank; i++) {
            int64_t v;
            bool one = hop_expr_const_value(x->meta->meta.sizes[i], &v) && v == 1;
            if (!(one && (dim < 0 || dim == i)))
                d->keep[keep++] = (int8_t)i;
        }
        d->nkeep = keep;
    }
    int32_t out;
    if ((st = hop__new_slot(cx, HOP__S_VIEW, &n->meta->meta, n->name, &out)) != HOP_OK)
        return st;
    int32_t base = d->args[0].slot;
    return emit_op(cx, n, HOP__OP_View, out, base, d, base);
}

/* The INDEX family (nonzero: sizes only known once it ran): OpAlloc runs
 * the op into storage the frame keeps for its slot. */
static hop_status
compile_op_alloc(hop_lower_ctx *cx, const hop_node *n)
{
    hop__opdesc *d;
    hop_status st = compile_opdesc(cx, n, &d);
    int32_t out;
    if (st == HOP_OK)
        st = hop__new_slot(cx, HOP__S_LATE, &n->meta->meta, n->name, &out);
    if (st != HOP_OK)
        return st;
    cx->slots[out].what = op_name(n);
    return emit_op(cx, n, HOP__OP_OpAlloc, out, 0, d, -1);
}

/* The register a SymInt result goes to: its symbol's when it is one. */
static hop_status
result_reg(hop_lower_ctx *cx, const hop_node *n, int32_t *reg, bool *is_symbol)
{
    const hop_expr *e = n->meta->sym;
    *is_symbol = hop_expr_kind_of(e) == HOP_EXPR_SYMBOL;
    if (*is_symbol) {
        *reg = hop__sym_reg(cx, e);
        return *reg < 0 ? hop__nomem_or(hop_error_code()) : HOP_OK;
    }
    return hop__new_reg(cx, n->name, reg);
}

static hop_status
compile_scalar(hop_lower_ctx *cx, const hop_node *n)
{
    int64_t c;
    if (hop_expr_const_value(n->meta->sym, &c) && n->op == HOP_OP_sym_size)
        return set_value(cx, n, hop__pv_const(c));
    hop_pval x;
    hop_status st = hop__value_of(cx, n->args[0].u.node, &x);
    if (st != HOP_OK)
        return st;
    if (x.kind != HOP_PVAL_TENSOR)
        return hop_error(HOP_VERIFY, "lowering: %s reads a value that is not a tensor", n->name);
    bool is_symbol;
    int32_t reg;
    if (n->op == HOP_OP_sym_size && hop_expr_kind_of(n->meta->sym) == HOP_EXPR_SYMBOL &&
        hop__entry_bound(cx, n->meta->sym))
        /* A size bound at entry: the register has it already. */
        return set_value(cx, n, hop__pv_int(hop__sym_reg(cx, n->meta->sym)));
    if ((st = result_reg(cx, n, &reg, &is_symbol)) != HOP_OK)
        return st;
    int32_t pc;
    if (n->op == HOP_OP_item) {
        pc = hop__emit(cx, HOP__OP_Item, reg, x.id, 0, NULL, NULL);
    } else {
        int rank = cx->slots[x.id].rank;
        int64_t dim = n->args[1].u.i;
        if (dim < 0)
            dim += rank;
        pc = hop__emit(cx, HOP__OP_SymSize, reg, x.id, (int32_t)dim, NULL, NULL);
    }
    if (pc < 0 || (st = hop__access(cx, x.id)) != HOP_OK)
        return pc < 0 ? HOP_NOMEM : st;
    if (is_symbol)
        hop__mark_defined(cx, n->meta->sym);
    return set_value(cx, n, hop__pv_int(reg));
}

/* The group rooted at root: as fusion planning built it (each group's
 * members stay as planning left them: a cut only ever splits the group
 * being planned), or built here (a root alone, no fusion planned). */
static hop_status
compile_group(hop_lower_ctx *cx, const hop_node *root)
{
    hop__vmap *m = vmap_get(cx, root, false);
    hop__fbuilt *b = m ? m->built : NULL;
    if (m)
        m->built = NULL; /* a graph lowered twice builds its groups twice */
    int32_t out;
    hop_status st = storage_for(cx, root, &out);
    if (st == HOP_OK && b == NULL) {
        /* Not built by fusion planning (a group of its root alone): walked
         * and built here.  A planned group keeps its members and their
         * number, and is not walked again (~110 instructions a node). */
        const hop_node *members[HOP__F_MAXSTEPS + 1];
        int nm = hop__fuse_collect(cx, root, members);
        st = hop__fused_build(cx, root, members, nm, false, &b);
    }
    if (st == HOP_OK) {
        uint32_t group = cx->group; /* member_of (the text's leaves) reads b's number */
        cx->group = b->group;
        st = hop__fused_finish(cx, b->members, b, out);
        cx->group = group;
    }
    /* A multi-output group's extra outputs: fresh storage each (program.h),
     * a destination the member has copied into after the graph. */
    for (int e = 0; st == HOP_OK && e < b->g->nxout; e++)
        st = new_storage(cx, b->xnodes[e], &b->g->xout[e]);
    if (st != HOP_OK)
        return st;
    const hop__fgroup *g = b->g;
    if (hop__emit(cx, HOP__OP_Fused, out, g->ninputs, g->nsteps, b->g, NULL) < 0)
        return HOP_NOMEM;
    for (int i = 0; i < g->ninputs; i++)
        if ((st = hop__access(cx, g->inputs[i])) != HOP_OK)
            return st;
    if ((st = hop__access(cx, out)) != HOP_OK)
        return st;
    for (int e = 0; e < g->nxout; e++)
        if ((st = hop__access(cx, g->xout[e])) != HOP_OK ||
            (st = set_value(cx, b->xnodes[e], hop__pv_tensor(g->xout[e]))) != HOP_OK)
            return st;
    return set_value(cx, root, hop__pv_tensor(out));
}

static hop_status
compile_call_op(hop_lower_ctx *cx, const hop_node *n)
{
    hop__vmap *m = vmap_get(cx, n, false);
    if (m && (m->absorbed || m->merged))
        return HOP_OK;
    const hop_op_info *info = hop_op_get(n->op);
    if (info == NULL)
        return hop_error(HOP_VERIFY, "lowering: %s has an unknown op", n->name);
    if (m ? m->fusable : hop__fused_ok(n))
        return compile_group(cx, n);
    switch (info->family) {
    case HOP_KF_VIEW:
        return compile_view(cx, n);
    case HOP_KF_SCALAR:
        return compile_scalar(cx, n);
    case HOP_KF_INDEX:
        return compile_op_alloc(cx, n);
    default:
        if (n->meta->kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED, "lowering: %s (%s) gives no tensor", n->name,
                             info->name);
        return compile_kernel_op(cx, n);
    }
}

/* ------------------------------------------------------------- call_hop */

/* The storage roots of tensor slot s, a result of the call being lowered,
 * appended to roots (at most cap, *n of them): the slots it stands for
 * through the views and moves made since the call began (aliases from na0
 * on; a slot made since then, slot >= n0, with none is its own root), and a
 * slot made before the call (an operand, a value it closes over) as it is.
 * A cond's result is a move of each branch's, so it has one root per
 * branch.  False when there are more than cap (then treat it as shared). */
static bool
result_roots(const hop_lower_ctx *cx, int32_t s, size_t n0, size_t na0, int32_t *roots, size_t cap,
             size_t *n)
{
    int32_t todo[32];
    size_t nt = 0, first = *n;
    todo[nt++] = s;
    while (nt > 0) {
        int32_t t = todo[--nt];
        bool seen = false, via = false;
        for (size_t k = first; k < *n && !seen; k++)
            seen = roots[k] == t || roots[k] == -1 - t;
        if (seen)
            continue;
        if ((size_t)t >= n0)
            for (size_t a = na0; a < cx->naliases; a++)
                if (cx->aliases[a].slot == t && cx->aliases[a].of != t) {
                    if (nt == sizeof todo / sizeof *todo)
                        return false;
                    todo[nt++] = cx->aliases[a].of;
                    via = true;
                }
        /* (a slot passed through also counts as seen, so a cycle of moves
         * ends: a loop's carries swapped back and forth) */
        if (*n == cap)
            return false;
        roots[(*n)++] = via ? -1 - t : t;
    }
    return true;
}

/* Binds here, from slot src's sizes, each size of meta that is a symbol
 * not yet defined (a cond's merged size, which the parent binds only after
 * the call), so that a tensor of meta can be allocated now.  A size that is
 * an expression of such a symbol (u0 + 1) cannot be: HOP_UNSUPPORTED (the
 * compiled call then runs eagerly). */
static hop_status
bind_sizes(hop_lower_ctx *cx, const hop_meta *meta, int32_t src)
{
    for (int d = 0; d < meta->rank; d++) {
        const hop_expr *e = meta->sizes[d], *syms[16];
        size_t ns = hop_expr_free_symbols(e, syms, 16);
        const hop_expr *undefined = NULL;
        for (size_t k = 0; k < ns && k < 16 && !undefined; k++) {
            int64_t id = hop_symbol_id(syms[k]);
            if (id >= 0 && (size_t)id < cx->nsyms && !cx->symdef[id] &&
                !hop__entry_bound(cx, syms[k]))
                undefined = syms[k];
        }
        if (!undefined && ns <= 16)
            continue;
        if (hop_expr_kind_of(e) != HOP_EXPR_SYMBOL)
            return hop_error(HOP_UNSUPPORTED,
                             "lowering: a HOP result whose size depends on %s shares memory with "
                             "an operand and cannot be copied before %s is known",
                             undefined ? hop_symbol_name(undefined) : "many symbols",
                             undefined ? hop_symbol_name(undefined) : "they are");
        int32_t reg = hop__sym_reg(cx, e);
        if (reg < 0)
            return hop__nomem_or(hop_error_code());
        if (hop__emit(cx, HOP__OP_SymSize, reg, src, d, NULL, NULL) < 0)
            return HOP_NOMEM;
        hop_status st = hop__access(cx, src);
        if (st != HOP_OK)
            return st;
        hop__mark_defined(cx, e);
    }
    return HOP_OK;
}

/* A HOP's results never share memory with its operands, with what its
 * bodies close over or with each other (docs/ARCHITECTURE.md, "A HOP's
 * results are fresh"), as eagerly (hop/graph_eval.c fresh_results): a result
 * a lower slot gives that may stand for storage made before the call (a body
 * returned its input, a view of it, a lifted value: vmap of the identity
 * inlines to its operand) or for another result's is copied into a tensor
 * of its own.  A result computed into this call's destination (dests) or
 * into storage the call made for it alone costs nothing. */
static hop_status
fresh_results(hop_lower_ctx *cx, const hop_node *n, size_t n0, size_t na0)
{
    enum { CAP = 64 };
    int32_t roots[CAP];
    size_t nroots = 0;
    hop_status st = HOP_OK;
    for (size_t i = 0; i < cx->nresults && st == HOP_OK; i++) {
        hop_pval *v = &cx->results[i];
        if (v->kind != HOP_PVAL_TENSOR)
            continue;
        size_t first = nroots;
        bool shared = !result_roots(cx, v->id, n0, na0, roots, CAP, &nroots);
        for (size_t k = first; k < nroots && !shared; k++) {
            int32_t r = roots[k];
            if (r < 0)
                continue; /* passed through, not a root */
            bool own = (size_t)r >= n0;
            for (size_t j = 0; cx->dests && j < n->nouts && !own; j++)
                own = cx->dests[j].kind == HOP_PVAL_TENSOR && cx->dests[j].id == r;
            shared = !own;
            for (size_t k2 = 0; k2 < first && !shared; k2++)
                shared = roots[k2] == r;
        }
        if (!shared)
            continue;
        nroots = first;
        hop_pval fresh;
        if ((st = bind_sizes(cx, &n->outs[i].meta, v->id)) != HOP_OK)
            break;
        if ((st = hop_lower_tensor(cx, &n->outs[i], true, &fresh)) == HOP_OK &&
            (st = hop__emit_copy(cx, fresh.id, v->id)) == HOP_OK) {
            *v = fresh;
            if (nroots < CAP)
                roots[nroots++] = fresh.id;
        }
    }
    return st;
}

static hop_status
compile_call_hop(hop_lower_ctx *cx, const hop_node *n)
{
    if (n->cls == NULL)
        return hop_error(HOP_VERIFY, "lowering: %s calls the HOP %s but records no class", n->name,
                         hop_node_target(n));
    /* The class's lower slot, or its nearest base's; none: the PrimHOP
     * base's, which inlines the one body. */
    const hop_class *owner = HOP_CLASS_SLOT_OWNER(n->cls, lower);
    const hop_node *saved_call = cx->call;
    hop_pval *saved_results = cx->results;
    const hop_pval *saved_dests = cx->dests;
    size_t saved_n = cx->nresults;
    bool saved_have = cx->have_results;
    hop__vmap *me = vmap_get(cx, n, false);
    cx->dests = me ? me->dests : NULL;
    cx->call = n;
    cx->results = NULL;
    cx->nresults = 0;
    cx->have_results = false;
    int nctl = cx->nctl;
    size_t n0 = cx->nslots, na0 = cx->naliases;
    hop_status st;
    if (owner) {
        hop_error_clear();
        st = hop__slot_status(owner->name, "lower", owner->lower(cx, n));
    } else {
        st = hop_lower_default(cx, n);
    }
    if (st == HOP_OK && cx->nctl != nctl)
        st = hop_error(HOP_MISUSE, "lowering of %s: unbalanced if/loop blocks", hop_node_target(n));
    if (st == HOP_OK && (!cx->have_results || cx->nresults != n->nouts))
        st = hop_error(HOP_MISUSE, "lowering of %s: gave %zu results for a call with %zu outputs",
                       hop_node_target(n), cx->have_results ? cx->nresults : 0, (size_t)n->nouts);
    if (st == HOP_OK)
        st = fresh_results(cx, n, n0, na0);
    if (st == HOP_OK) {
        hop__vmap *m = vmap_get(cx, n, true);
        if (m == NULL) {
            st = HOP_NOMEM;
        } else {
            m->results = cx->results;
            m->nresults = cx->nresults;
            if (n->nouts == 1)
                m->v = cx->results[0];
        }
    }
    cx->call = saved_call;
    cx->results = saved_results;
    cx->dests = saved_dests;
    cx->nresults = saved_n;
    cx->have_results = saved_have;
    return st;
}

/* A foreign kernel: one Extern (lowering/foreign.c); its results are read
 * by getitems like a call_hop's. */
static hop_status
compile_call_foreign(hop_lower_ctx *cx, const hop_node *n)
{
    hop_pval *results;
    hop_status st = hop__lower_foreign(cx, n, &results);
    if (st != HOP_OK)
        return st;
    hop__vmap *m = vmap_get(cx, n, true);
    if (m == NULL)
        return HOP_NOMEM;
    m->results = results;
    m->nresults = n->nouts;
    if (n->nouts == 1)
        m->v = results[0];
    return HOP_OK;
}

static hop_status
compile_getitem(hop_lower_ctx *cx, const hop_node *n)
{
    const hop_node *call = n->args[0].u.node;
    hop__vmap *m = vmap_get(cx, call, false);
    int64_t i = n->args[1].u.i;
    if (m == NULL || m->results == NULL || i < 0 || (size_t)i >= m->nresults)
        return hop_error(HOP_VERIFY, "lowering: %s reads a result %s did not give", n->name,
                         call->name);
    return set_value(cx, n, m->results[i]);
}

/* -------------------------------------------------------------- graphs */

/* A result that can be computed straight into a destination: a fresh
 * tensor of a kernel (not a view, not an input), or a HOP's result, which
 * the HOP's lowering may place there (hop_lower_dest). */
static bool
bindable(hop_lower_ctx *cx, const hop_node *n, const hop_node *out, size_t j)
{
    if (n->meta->kind != HOP_VALUE_TENSOR || hop__meta_late(cx, &n->meta->meta))
        return false;
    if (n->kind == HOP_NODE_GETITEM) {
        if (n->args[0].u.node->kind != HOP_NODE_CALL_HOP)
            return false;
    } else if (n->kind == HOP_NODE_CALL_OP) {
        const hop_op_info *info = hop_op_get(n->op);
        if (info->family == HOP_KF_VIEW || info->family == HOP_KF_SCALAR ||
            info->family == HOP_KF_INDEX)
            return false;
    } else {
        return false;
    }
    for (size_t k = 0; k < out->nargs; k++)
        if (k != j && out->args[k].kind == HOP_ARG_NODE && out->args[k].u.node == n)
            return false;
    return true;
}

static hop_status
bind_placeholder(hop_lower_ctx *cx, const hop_node *ph, hop_pval v, const hop_graph *g)
{
    if (ph->meta->kind == HOP_VALUE_TENSOR) {
        if (v.kind != HOP_PVAL_TENSOR)
            return hop_error(HOP_VERIFY, "lowering: %s of %s is a tensor but gets an int", ph->name,
                             g->name);
        return set_value(cx, ph, v);
    }
    if (v.kind == HOP_PVAL_TENSOR || v.kind == HOP_PVAL_NONE)
        return hop_error(HOP_VERIFY, "lowering: %s of %s is a SymInt but gets a tensor", ph->name,
                         g->name);
    const hop_expr *e = ph->meta->sym;
    if (hop_expr_kind_of(e) == HOP_EXPR_SYMBOL) {
        /* Symbols are global: the placeholder is the symbol's register,
         * which gets the passed value unless it is that register.  Bound
         * again even when something bound it already: two copies of a loop
         * (a forward and its copy in a backward body) bind one index symbol
         * to two different counters. */
        int32_t reg = hop__sym_reg(cx, e);
        if (reg < 0)
            return hop__nomem_or(hop_error_code());
        int64_t id = hop_symbol_id(e);
        if (!(v.kind == HOP_PVAL_INT && v.id == reg)) {
            int32_t pc = v.kind == HOP_PVAL_CONST
                             ? hop__emit(cx, HOP__OP_Integer, reg, 0, 0, NULL, ph->name)
                             : hop__emit(cx, HOP__OP_MoveInt, reg, v.id, 0, NULL, ph->name);
            if (pc < 0)
                return HOP_NOMEM;
            hop__cur(cx)->code[pc].i64 = v.value;
            cx->symdef[id] = true;
        }
        return set_value(cx, ph, hop__pv_int(reg));
    }
    return set_value(cx, ph, v);
}

static hop_status emit_guard(hop_lower_ctx *cx, const hop_expr *e, size_t i, const hop_graph *g);

hop_status
hop__compile_graph(hop_lower_ctx *cx, const hop_graph *g, const hop_pval *inputs, size_t ninputs,
                   const hop_pval *dests, hop_pval *outputs, size_t noutputs)
{
    const hop_node *out = g->output;
    if (out == NULL)
        return hop_error(HOP_MISUSE, "lowering: graph %s has no output node", g->name);
    if (g->nplaceholders != ninputs || out->nargs != noutputs)
        return hop_error(HOP_VERIFY,
                         "lowering: %s takes %zu inputs and gives %zu outputs, but is called with "
                         "%zu and %zu",
                         g->name, g->nplaceholders, (size_t)out->nargs, ninputs, noutputs);
    hop_status st = hop__plan_fusion(cx, g);
    if (st != HOP_OK)
        return st;
    /* A graph's own guards (a cond branch's) hold whenever it runs, and only
     * then: checked before anything it computes relies on them. */
    for (size_t gi = 0; gi < g->nguards; gi++)
        if ((st = emit_guard(cx, g->guards[gi], gi, g)) != HOP_OK)
            return st;
    size_t i = 0;
    for (const hop_node *n = g->first; n && n->kind == HOP_NODE_PLACEHOLDER; n = n->next, i++)
        if ((st = bind_placeholder(cx, n, inputs[i], g)) != HOP_OK)
            return st;
    for (size_t j = 0; dests && j < noutputs; j++) {
        if (dests[j].kind != HOP_PVAL_TENSOR || out->args[j].kind != HOP_ARG_NODE)
            continue;
        const hop_node *n = out->args[j].u.node;
        if (!bindable(cx, n, out, j))
            continue;
        if (n->kind == HOP_NODE_GETITEM) {
            /* The HOP that makes it learns of the destination. */
            const hop_node *call = n->args[0].u.node;
            hop__vmap *cm = vmap_get(cx, call, true);
            if (cm == NULL)
                return HOP_NOMEM;
            if (cm->dests == NULL) {
                cm->dests = hop__arena_zalloc(&cx->tmp, (call->nouts + 1) * sizeof *cm->dests);
                if (cm->dests == NULL)
                    return HOP_NOMEM;
            }
            cm->dests[n->args[1].u.i] = dests[j];
            continue;
        }
        hop__vmap *m = vmap_get(cx, n, true);
        if (m == NULL)
            return HOP_NOMEM;
        m->v = dests[j];
        m->preassigned = true;
    }
    for (const hop_node *n = g->first; n; n = n->next) {
        switch (n->kind) {
        case HOP_NODE_PLACEHOLDER:
        case HOP_NODE_OUTPUT:
            continue;
        case HOP_NODE_CALL_OP:
            st = compile_call_op(cx, n);
            break;
        case HOP_NODE_CALL_HOP:
            st = compile_call_hop(cx, n);
            break;
        case HOP_NODE_CALL_FOREIGN:
            st = compile_call_foreign(cx, n);
            break;
        case HOP_NODE_GETITEM:
            st = compile_getitem(cx, n);
            break;
        }
        if (st != HOP_OK)
            return st;
    }
    for (size_t j = 0; j < noutputs; j++) {
        hop_pval v;
        if ((st = hop__arg_value(cx, &out->args[j], &v)) != HOP_OK)
            return st;
        if (dests && dests[j].kind == HOP_PVAL_TENSOR) {
            if (v.kind != HOP_PVAL_TENSOR)
                return hop_error(HOP_VERIFY, "lowering: output %zu of %s is not a tensor", j,
                                 g->name);
            if (v.id != dests[j].id && (st = hop__emit_copy(cx, dests[j].id, v.id)) != HOP_OK)
                return st;
            v = dests[j];
        }
        outputs[j] = v;
    }
    return HOP_OK;
}

/* ------------------------------------------- subgraphs inlined or called */

/* The toolkit's entries that compile a graph (hop/lowering.h) live here,
 * with the compiler they recurse into (a HOP's lower slot compiles its
 * bodies, which may call HOPs): toolkit.c only builds code.  A subroutine
 * is a subgraph compiled once per plan as its own routine, with tensor
 * parameters filled and results bound by Call. */

/* The arguments hop_lower_inline and hop_lower_call (who) both take. */
static hop_status
check_subgraph_args(const char *who, const hop_lower_ctx *cx, const hop_graph *g,
                    const hop_pval *inputs, size_t ninputs, const hop_pval *outputs,
                    size_t noutputs)
{
    if (cx == NULL || g == NULL || (ninputs && inputs == NULL) || (noutputs && outputs == NULL))
        return hop_error(HOP_MISUSE, "%s: NULL argument", who);
    return HOP_OK;
}

hop_status
hop_lower_inline(hop_lower_ctx *cx, const hop_graph *g, const hop_pval *inputs, size_t ninputs,
                 const hop_pval *dests, hop_pval *outputs, size_t noutputs)
{
    hop_status st =
        check_subgraph_args("hop_lower_inline", cx, g, inputs, ninputs, outputs, noutputs);
    if (st != HOP_OK)
        return st;
    return hop__compile_graph(cx, g, inputs, ninputs, dests, outputs, noutputs);
}

/* Compiles g as routine r: parameters, bound outputs, body, Return. */
static hop_status
compile_routine(hop_lower_ctx *cx, const hop_graph *g, int32_t ri)
{
    hop_status st;
    size_t np = g->nplaceholders, no = g->output ? g->output->nargs : 0;
    if (g->output == NULL)
        return hop_error(HOP_MISUSE, "lowering: graph %s has no output node", g->name);
    hop_pval *params = hop__arena_zalloc(&cx->tmp, (np + 1) * sizeof *params);
    hop_pval *dests = hop__arena_zalloc(&cx->tmp, (no + 1) * sizeof *dests);
    hop_pval *outs = hop__arena_zalloc(&cx->tmp, (no + 1) * sizeof *outs);
    bool *out_param = hop__arena_zalloc(&cx->tmp, (no + 1) * sizeof *out_param);
    if (!params || !dests || !outs || !out_param)
        return HOP_NOMEM;
    int32_t saved = cx->cur;
    cx->cur = ri;
    size_t i = 0;
    for (const hop_node *n = g->first; n && n->kind == HOP_NODE_PLACEHOLDER; n = n->next, i++) {
        if (n->meta->kind == HOP_VALUE_TENSOR) {
            int32_t slot;
            if ((st = hop__new_slot(cx, HOP__S_ALIAS, &n->meta->meta, n->name, &slot)) != HOP_OK)
                goto done;
            params[i] = hop__pv_tensor(slot);
        } else if (hop_expr_kind_of(n->meta->sym) == HOP_EXPR_SYMBOL) {
            int32_t reg = hop__sym_reg(cx, n->meta->sym);
            if (reg < 0) {
                st = hop__nomem_or(hop_error_code());
                goto done;
            }
            params[i] = hop__pv_int(reg);
            hop__mark_defined(cx, n->meta->sym);
        } else {
            int32_t reg;
            if ((st = hop__new_reg(cx, n->name, &reg)) != HOP_OK)
                goto done;
            params[i] = hop__pv_int(reg);
        }
    }
    for (size_t j = 0; j < no; j++) {
        const hop_arg *a = &g->output->args[j];
        dests[j].kind = HOP_PVAL_NONE;
        if (a->kind != HOP_ARG_NODE || a->u.node->meta->kind != HOP_VALUE_TENSOR ||
            a->u.node->kind == HOP_NODE_PLACEHOLDER)
            continue;
        int32_t slot;
        if ((st = hop__new_slot(cx, HOP__S_ALIAS, &a->u.node->meta->meta, a->u.node->name,
                                &slot)) != HOP_OK)
            goto done;
        dests[j] = hop__pv_tensor(slot);
    }
    int nctl = cx->nctl;
    st = hop__compile_graph(cx, g, params, np, dests, outs, no);
    if (st == HOP_OK && cx->nctl != nctl)
        st = hop_error(HOP_MISUSE, "lowering %s: unbalanced if/loop blocks", g->name);
    if (st == HOP_OK && hop__emit(cx, HOP__OP_Return, 0, 0, 0, NULL, NULL) < 0)
        st = HOP_NOMEM;
    if (st != HOP_OK)
        goto done;
    for (size_t j = 0; j < no; j++) {
        const hop_arg *a = &g->output->args[j];
        if (a->kind == HOP_ARG_NODE && a->u.node->kind == HOP_NODE_PLACEHOLDER &&
            a->u.node->meta->kind == HOP_VALUE_TENSOR) {
            size_t k = 0;
            for (const hop_node *n = g->first; n != a->u.node; n = n->next)
                k++;
            outs[j] = (hop_pval){HOP_PVAL_NONE, -1, (int64_t)k};
            out_param[j] = true;
        }
    }
    hop__rcode *r = &cx->routines[ri];
    r->params = params;
    r->nparams = np;
    r->outs = outs;
    r->out_param = out_param;
    r->nouts = no;
done:
    cx->cur = saved;
    return st;
}

hop_status
hop_lower_call(hop_lower_ctx *cx, const hop_graph *g, const hop_pval *inputs, size_t ninputs,
               const hop_pval *dests, hop_pval *outputs, size_t noutputs)
{
    hop_status st =
        check_subgraph_args("hop_lower_call", cx, g, inputs, ninputs, outputs, noutputs);
    if (st != HOP_OK)
        return st;
    if (g->output == NULL || g->nplaceholders != ninputs || g->output->nargs != noutputs)
        return hop_error(HOP_VERIFY, "lowering: %s called with %zu inputs and %zu outputs", g->name,
                         ninputs, noutputs);
    /* Results whose sizes the callee computes cannot be allocated by the
     * caller before the call. */
    for (size_t j = 0; j < noutputs; j++) {
        const hop_node *n =
            g->output->args[j].kind == HOP_ARG_NODE ? g->output->args[j].u.node : NULL;
        if (n && n->meta->kind == HOP_VALUE_TENSOR && n->kind != HOP_NODE_PLACEHOLDER &&
            hop__meta_late(cx, &n->meta->meta)) {
            for (int d = 0; d < n->meta->meta.rank; d++) {
                const hop_expr *syms[16];
                size_t ns = hop_expr_free_symbols(n->meta->meta.sizes[d], syms, 16);
                for (size_t k = 0; k < ns && k < 16; k++) {
                    int64_t id = hop_symbol_id(syms[k]);
                    if (!cx->symdef[id]) {
                        char m[128];
                        hop_meta_print(&n->meta->meta, m, sizeof m);
                        return hop_error(HOP_UNSUPPORTED,
                                         "lowering: %s: output %zu is %s, whose size %s is only "
                                         "known inside the subgraph",
                                         g->name, j, m, hop_symbol_name(syms[k]));
                    }
                }
            }
        }
    }
    int32_t ri = -1;
    for (size_t k = 1; k < cx->nroutines; k++)
        if (cx->routines[k].graph == g)
            ri = (int32_t)k;
    if (ri < 0) {
        if ((st = hop__new_routine(cx, g, &ri)) != HOP_OK ||
            (st = compile_routine(cx, g, ri)) != HOP_OK)
            return st;
    }
    hop__rcode *r = &cx->routines[ri];
    /* Results the caller provides storage for. */
    for (size_t j = 0; j < noutputs; j++) {
        if (r->out_param[j]) {
            outputs[j] = inputs[r->outs[j].value];
        } else if (r->outs[j].kind == HOP_PVAL_TENSOR) {
            const hop_node *n = g->output->args[j].u.node;
            if (dests && dests[j].kind == HOP_PVAL_TENSOR) {
                outputs[j] = dests[j];
            } else if ((st = hop_lower_tensor(cx, n->meta, true, &outputs[j])) != HOP_OK) {
                return st;
            }
            r = &cx->routines[ri];
        }
    }
    hop__callmove *moves =
        hop__arena_zalloc(&cx->plan->arena, (ninputs + noutputs + 1) * sizeof *moves);
    hop__calldesc *d = hop__arena_zalloc(&cx->plan->arena, sizeof *d);
    if (moves == NULL || d == NULL)
        return HOP_NOMEM;
    int32_t nm = 0;
    for (size_t i = 0; i < ninputs; i++) {
        hop_pval p = r->params[i], a = inputs[i];
        if (p.kind == HOP_PVAL_TENSOR) {
            if (a.kind != HOP_PVAL_TENSOR)
                return hop_error(HOP_VERIFY, "lowering: input %zu of %s is a tensor", i, g->name);
            moves[nm++] = (hop__callmove){true, p.id, a.id, 0};
        } else if (!(a.kind == HOP_PVAL_INT && a.id == p.id)) {
            if (a.kind == HOP_PVAL_TENSOR)
                return hop_error(HOP_VERIFY, "lowering: input %zu of %s is a SymInt", i, g->name);
            moves[nm++] = (hop__callmove){false, p.id, a.kind == HOP_PVAL_INT ? a.id : -1, a.value};
        }
    }
    for (size_t j = 0; j < noutputs; j++)
        if (!r->out_param[j] && r->outs[j].kind == HOP_PVAL_TENSOR)
            moves[nm++] = (hop__callmove){true, r->outs[j].id, outputs[j].id, 0};
    d->routine = ri;
    d->nmoves = nm;
    d->moves = moves;
    const char *note = hop__arena_strdup(&cx->plan->arena, g->name);
    if (note == NULL || hop__emit(cx, HOP__OP_Call, ri, nm, 0, d, note) < 0)
        return HOP_NOMEM;
    for (int32_t k = 0; k < nm; k++)
        if (moves[k].tensor && (st = hop__access(cx, moves[k].src)) != HOP_OK)
            return st;
    for (size_t j = 0; j < noutputs; j++) {
        hop_pval v = r->outs[j];
        if (r->out_param[j] || v.kind == HOP_PVAL_TENSOR)
            continue;
        if (v.kind == HOP_PVAL_CONST) {
            outputs[j] = v;
            continue;
        }
        int32_t reg;
        if ((st = hop__new_reg(cx, NULL, &reg)) != HOP_OK ||
            (st = hop_lower_copy(cx, hop__pv_int(reg), v)) != HOP_OK)
            return st;
        outputs[j] = hop__pv_int(reg);
    }
    return HOP_OK;
}

hop_status
hop_lower_default(hop_lower_ctx *cx, const hop_node *call)
{
    const hop_graph *body = NULL;
    for (size_t i = 0; call && i < call->nargs && body == NULL; i++)
        if (call->args[i].kind == HOP_ARG_GRAPH)
            body = call->args[i].u.graph;
    if (body == NULL)
        return hop_error(HOP_VERIFY, "lowering: %s has no body", call ? call->name : "(null)");
    size_t n;
    hop_pval *in = hop_lower_passed(cx, call, &n);
    hop_pval *dests = in ? hop_lower_dests(cx) : NULL;
    hop_pval *out = dests ? hop_lower_pvals(cx, call->nouts) : NULL;
    if (out == NULL)
        return hop_error_code();
    hop_status st = hop_lower_inline(cx, body, in, n, dests, out, call->nouts);
    return st == HOP_OK ? hop_lower_results(cx, out, call->nouts) : st;
}

/* ---------------------------------------------------------------- main */

/* Guard instruction i (of the ShapeEnv, or of subgraph g when it is one of
 * g's own guards): HOP_GUARD at run time unless e holds for the symbols the
 * inputs' sizes bound.  A subgraph's guard runs where the subgraph starts, so
 * a symbol the code before it bound (an item() of the caller's: hop.compile
 * guards a branch it has not traced on its predicate) is there too. */
static hop_status
emit_guard(hop_lower_ctx *cx, const hop_expr *e, size_t i, const hop_graph *g)
{
    const hop_expr *syms[32];
    size_t ns = hop_expr_free_symbols(e, syms, 32);
    for (size_t s = 0; s < ns && s < 32; s++) {
        int64_t id = hop_symbol_id(syms[s]);
        if (g != NULL && id >= 0 && (size_t)id < cx->nsyms && cx->symdef[id])
            continue;
        if (!hop__entry_bound(cx, syms[s]))
            return hop_error(HOP_UNSUPPORTED,
                             "lowering: guard %s%s%s uses %s, which no input's size gives",
                             hop_expr_str(cx->env, e) ? hop_expr_str(cx->env, e) : "?",
                             g ? " of " : "", g ? g->name : "", hop_symbol_name(syms[s]));
    }
    hop__guard *gd = hop__arena_zalloc(&cx->plan->arena, sizeof *gd);
    if (gd == NULL || (gd->x = hop__xcompile(cx, e)) == NULL)
        return hop__nomem_or(hop_error_code());
    if (g && (gd->graph = hop__arena_strdup(&cx->plan->arena, g->name)) == NULL)
        return HOP_NOMEM;
    if (hop__emit(cx, HOP__OP_Guard, (int32_t)i, 0, 0, gd, gd->x->text) < 0)
        return HOP_NOMEM;
    return HOP_OK;
}

/* How the Input instruction checks each size of root input `in` (metadata
 * m): a constant, a symbol the first input to have it binds (first[id]
 * names where, `x.size(1)`), a symbol bound already, or an expression
 * checked once every symbol is bound. */
static hop_status
input_dims(hop_lower_ctx *cx, hop__input *in, const hop_meta *m, const char **first)
{
    for (int d = 0; d < m->rank; d++) {
        hop__dimcheck *dc = &in->dims[d];
        const hop_expr *e = m->sizes[d];
        if (hop_expr_const_value(e, &dc->value)) {
            dc->kind = HOP__D_CONST;
        } else if (hop_expr_kind_of(e) == HOP_EXPR_SYMBOL) {
            int64_t id = hop_symbol_id(e);
            if ((dc->reg = hop__sym_reg(cx, e)) < 0)
                return hop__nomem_or(hop_error_code());
            dc->sym = cx->regnames[dc->reg];
            if (first[id] == NULL) {
                dc->kind = HOP__D_BIND;
                hop_shape_env_bounds(cx->env, e, &dc->lo, &dc->hi);
                if ((first[id] = hop__note(cx, "%s.size(%d)", in->name, d)) == NULL)
                    return HOP_NOMEM;
                cx->symdef[id] = cx->symentry[id] = true;
            } else {
                dc->kind = HOP__D_SAME;
            }
            dc->first = first[id];
        } else {
            dc->kind = HOP__D_EXPR;
        }
    }
    return HOP_OK;
}

static hop_status
compile_main(hop_lower_ctx *cx)
{
    const hop_graph *g = hop_output_graph_root_graph(cx->og);
    hop_plan *p = cx->plan;
    hop_status st;
    size_t np = g->nplaceholders, nt = 0;
    for (const hop_node *n = g->first; n && n->kind == HOP_NODE_PLACEHOLDER; n = n->next)
        nt += n->meta->kind == HOP_VALUE_TENSOR;
    hop_pval *inputs = hop__arena_zalloc(&cx->tmp, (np + 1) * sizeof *inputs);
    /* Each input zeroed as far as its rank's dims (below): every reader
     * stops at rank, and zeroing all 8 dims, ~470 bytes an input, was ~240
     * instructions of every capture (issue #30). */
    p->inputs = hop__arena_alloc(&p->arena, (nt + 1) * sizeof *p->inputs);
    if (inputs == NULL || p->inputs == NULL)
        return HOP_NOMEM;
    p->ninputs = nt;

    /* Inputs bind the symbols of their sizes, in order. */
    const char **first = hop__arena_zalloc(&cx->tmp, (cx->nsyms + 1) * sizeof *first);
    if (first == NULL)
        return HOP_NOMEM;
    size_t i = 0, k = 0;
    for (const hop_node *n = g->first; n && n->kind == HOP_NODE_PLACEHOLDER; n = n->next, i++) {
        if (n->meta->kind != HOP_VALUE_TENSOR)
            continue;
        hop__input *in = &p->inputs[k];
        const hop_meta *m = &n->meta->meta;
        memset(in, 0, offsetof(hop__input, dims) + (size_t)m->rank * sizeof in->dims[0]);
        int32_t slot;
        if ((st = hop__new_slot(cx, HOP__S_INPUT, m, n->name, &slot)) != HOP_OK)
            return st;
        in->name = cx->slots[slot].name;
        in->slot = slot;
        in->dtype = m->dtype;
        in->rank = m->rank;
        if ((st = input_dims(cx, in, m, first)) != HOP_OK)
            return st;
        inputs[i] = hop__pv_tensor(slot);
        k++;
    }
    /* Compound sizes are checked once every symbol is bound. */
    for (k = 0; k < nt; k++) {
        hop__input *in = &p->inputs[k];
        for (int d = 0; d < in->rank; d++)
            if (in->dims[d].kind == HOP__D_EXPR)
                in->dims[d].x = cx->slots[in->slot].sizes[d];
        /* The note is the input's name, which the slot keeps in the plan's
         * arena already (formatting a copy cost ~1 K instructions an input). */
        const char *note = in->name;
        if (note == NULL || hop__emit(cx, HOP__OP_Input, (int32_t)k, in->slot, 0, in, note) < 0 ||
            hop__access(cx, in->slot) != HOP_OK)
            return HOP_NOMEM;
    }
    i = 0;
    for (const hop_node *n = g->first; n && n->kind == HOP_NODE_PLACEHOLDER; n = n->next, i++) {
        if (n->meta->kind == HOP_VALUE_TENSOR)
            continue;
        const hop_expr *e = n->meta->sym;
        if (hop_expr_kind_of(e) != HOP_EXPR_SYMBOL || !cx->symdef[hop_symbol_id(e)])
            return hop_error(HOP_UNSUPPORTED,
                             "lowering: root input %s is a SymInt that no input's size gives",
                             n->name);
        inputs[i] = hop__pv_int(hop__sym_reg(cx, e));
    }
    /* Guards, then the memory layout (which needs the sizes they allow). */
    size_t ng = hop_shape_env_nguards(cx->env);
    for (size_t gi = 0; gi < ng; gi++)
        if ((st = emit_guard(cx, hop_shape_env_guard(cx->env, gi), gi, NULL)) != HOP_OK)
            return st;
    if (hop__emit(cx, HOP__OP_Layout, 0, 0, 0, NULL, NULL) < 0)
        return HOP_NOMEM;

    /* Outputs computed by a kernel go straight into the output tensors. */
    const hop_node *out = g->output;
    size_t no = out->nargs;
    hop_pval *dests = hop__arena_zalloc(&cx->tmp, (no + 1) * sizeof *dests);
    hop_pval *outs = hop__arena_zalloc(&cx->tmp, (no + 1) * sizeof *outs);
    p->outputs = hop__arena_zalloc(&p->arena, (no + 1) * sizeof *p->outputs);
    p->outslots = hop__arena_zalloc(&p->arena, (no + 1) * sizeof *p->outslots);
    if (!dests || !outs || !p->outputs || !p->outslots)
        return HOP_NOMEM;
    p->noutputs = no;
    for (size_t j = 0; j < no; j++) {
        p->outslots[j] = -1;
        dests[j].kind = HOP_PVAL_NONE;
        const hop_arg *a = &out->args[j];
        if (a->kind != HOP_ARG_NODE || !bindable(cx, a->u.node, out, j))
            continue;
        int32_t slot;
        if ((st = hop__new_slot(cx, HOP__S_OUTPUT, &a->u.node->meta->meta, a->u.node->name,
                                &slot)) != HOP_OK)
            return st;
        cx->slots[slot].buffer = (int32_t)j;
        cx->slots[slot].what = op_name(a->u.node);
        dests[j] = hop__pv_tensor(slot);
        p->outslots[j] = slot;
    }
    if ((st = hop__compile_graph(cx, g, inputs, np, dests, outs, no)) != HOP_OK)
        return st;
    for (size_t j = 0; j < no; j++) {
        hop__output *o = &p->outputs[j];
        o->kind = outs[j].kind == HOP_PVAL_TENSOR ? HOP__O_TENSOR
                  : outs[j].kind == HOP_PVAL_INT  ? HOP__O_INT
                                                  : HOP__O_CONST;
        o->id = outs[j].id;
        o->value = outs[j].value;
        const hop_arg *a = &out->args[j];
        p->outputs[j].name =
            a->kind == HOP_ARG_NODE ? hop__arena_strdup(&p->arena, a->u.node->name) : "";
        if (p->outputs[j].name == NULL)
            return HOP_NOMEM;
    }
    /* Halt; the outputs are read there, so they live to the end. */
    if (hop__emit(cx, HOP__OP_Halt, 0, 0, 0, NULL, NULL) < 0)
        return HOP_NOMEM;
    for (size_t j = 0; j < no; j++)
        if (outs[j].kind == HOP_PVAL_TENSOR && (st = hop__access(cx, outs[j].id)) != HOP_OK)
            return st;
    return HOP_OK;
}

/* An instruction run_straight (runtime/vm.c) runs: no jump, no budget of
 * its own beyond the instruction. */
static bool
straight_insn(const hop__insn *in)
{
    switch (in->opcode) {
    case HOP__OP_MoveInt:
    case HOP__OP_Integer:
    case HOP__OP_Swap:
        return true;
    case HOP__OP_Fused:
    case HOP__OP_Copy:
        return ((const hop__fgroup *)in->p4)->small_n > 0 &&
               ((const hop__fgroup *)in->p4)->epi == NULL;
    default:
        return false;
    }
}

/* Marks the back edges of loops whose bodies are straight (program.h). */
static void
mark_straight(hop_plan *p)
{
    for (int32_t pc = 0; pc < p->ncode; pc++) {
        hop__insn *in = &p->code[pc];
        bool back = in->opcode == HOP__OP_Next ||
                    (in->opcode == HOP__OP_If && in->p2 <= pc &&
                     (in->p4 == NULL || ((const hop__fgroup *)in->p4)->small_n > 0));
        if (!back || in->p2 < 0 || in->p2 > pc)
            continue;
        bool ok = true;
        for (int32_t k = in->p2; k < pc && ok; k++)
            ok = straight_insn(&p->code[k]);
        in->straight = ok;
    }
}

/* Whether slot s's header is the same on every run: a buffer or an output
 * the plan lays out itself, of constant sizes, not among moved. */
static bool
slot_fixed(const hop_lower_ctx *cx, const bool *moved, int32_t s)
{
    const hop__slot *sl = &cx->slots[s];
    if (moved[s] || (sl->kind != HOP__S_BUFFER && sl->kind != HOP__S_OUTPUT))
        return false;
    for (int d = 0; d < sl->rank; d++)
        if (sl->sizes[d] == NULL || !sl->sizes[d]->is_const)
            return false;
    return true;
}

/* The slots whose header an instruction replaces by another's, and (to be
 * safe) those a foreign or a HOP's own kernel gets to write. */
static void
mark_moved(const hop_plan *p, bool *moved)
{
    for (int32_t pc = 0; pc < p->ncode; pc++) {
        const hop__insn *in = &p->code[pc];
        if (in->opcode == HOP__OP_Move) {
            moved[in->p1] = true;
        } else if (in->opcode == HOP__OP_Swap) {
            const int32_t *more = in->p4;
            moved[in->p1] = moved[in->p2] = true;
            for (int32_t k = 0; k < 2 * in->p3; k++)
                moved[more[k]] = true;
        } else if (in->opcode == HOP__OP_Call) {
            const hop__calldesc *d = in->p4;
            for (int32_t k = 0; k < d->nmoves; k++)
                if (d->moves[k].tensor)
                    moved[d->moves[k].dst] = true;
        } else if (in->opcode == HOP__OP_Extern) {
            const hop__extern *e = in->p4;
            for (int32_t k = 0; k < e->nouts; k++)
                moved[e->outs[k]] = true;
        } else if (in->opcode == HOP__OP_Kernel) {
            const hop__hopkernel *k = in->p4;
            for (int32_t j = 0; j < k->n; j++)
                moved[k->slots[j]] = true;
        }
    }
}

/* Whether operand a is fixed: a tensor in a fixed slot, or a constant (a
 * list of constants: the kernel compares no data of a list's tensors). */
static bool
arg_fixed(const hop_lower_ctx *cx, const bool *moved, const hop__oparg *a, bool in_list)
{
    switch (a->kind) {
    case HOP__A_TENSOR:
        return !in_list && slot_fixed(cx, moved, a->slot);
    case HOP__A_INT:
    case HOP__A_BOOL:
        return a->x != NULL && a->x->is_const;
    case HOP__A_NONE:
    case HOP__A_FLOAT:
    case HOP__A_DTYPE:
        return true;
    case HOP__A_LIST:
        for (int32_t k = 0; k < a->n; k++)
            if (!arg_fixed(cx, moved, &a->items[k], true))
                return false;
        return true;
    }
    return false;
}

/* Marks each Op (and reduction epilogue) whose operands and output are
 * fixed (program.h). */
static hop_status
mark_fixed(hop_lower_ctx *cx, hop_plan *p)
{
    bool *moved = hop__arena_zalloc(&cx->tmp, (cx->nslots + 1) * sizeof *moved);
    if (moved == NULL)
        return HOP_NOMEM;
    mark_moved(p, moved);
    for (int32_t pc = 0; pc < p->ncode; pc++) {
        const hop__insn *in = &p->code[pc];
        hop__opdesc *d; /* (the plan's arena: ours until it is done) */
        int32_t out = in->p1;
        if (in->opcode == HOP__OP_Op) {
            d = (hop__opdesc *)in->p4;
        } else if (in->opcode == HOP__OP_Fused && ((const hop__fgroup *)in->p4)->epi) {
            d = (hop__opdesc *)((const hop__fgroup *)in->p4)->epi;
            out = ((const hop__fgroup *)in->p4)->epi_out;
        } else {
            continue;
        }
        bool fixed = slot_fixed(cx, moved, out);
        for (int i = 0; fixed && i < d->nargs; i++)
            fixed = arg_fixed(cx, moved, &d->args[i], false);
        d->fixed = fixed;
    }
    return HOP_OK;
}

/* Copies the routines into one program: main, then the subroutines. */
static hop_status
assemble(hop_lower_ctx *cx)
{
    hop_plan *p = cx->plan;
    size_t total = 0;
    for (size_t r = 0; r < cx->nroutines; r++) {
        cx->routines[r].base = (int32_t)total;
        total += cx->routines[r].n;
    }
    p->code = hop__arena_alloc(&p->arena, (total + 1) * sizeof *p->code);
    p->routines = hop__arena_zalloc(&p->arena, (cx->nroutines + 1) * sizeof *p->routines);
    if (p->code == NULL || p->routines == NULL)
        return HOP_NOMEM;
    for (size_t r = 0; r < cx->nroutines; r++) {
        hop__rcode *rc = &cx->routines[r];
        p->routines[r] = (hop__routine){rc->name, rc->base, (int32_t)rc->n};
        for (size_t i = 0; i < rc->n; i++) {
            hop__insn in = rc->code[i];
            switch (in.opcode) {
            case HOP__OP_IfNot:
            case HOP__OP_If:
            case HOP__OP_Goto:
            case HOP__OP_LoopInit:
            case HOP__OP_Next:
                in.p2 += rc->base;
                break;
            case HOP__OP_Call:
                in.p1 = cx->routines[in.p1].base;
                break;
            default:
                break;
            }
            p->code[rc->base + i] = in;
        }
    }
    p->ncode = (int32_t)total;
    mark_straight(p);
    hop_status st = mark_fixed(cx, p);
    if (st != HOP_OK)
        return st;
    p->nroutines = (int32_t)cx->nroutines;
    /* No recursion: a routine is on the call stack at most once. */
    p->max_depth = (int32_t)cx->nroutines;
    p->slots = hop__arena_alloc(&p->arena, (cx->nslots + 1) * sizeof *p->slots);
    p->regnames = hop__arena_alloc(&p->arena, (cx->nregs + 1) * sizeof *p->regnames);
    if (p->slots == NULL || p->regnames == NULL)
        return HOP_NOMEM;
    if (cx->nslots)
        memcpy(p->slots, cx->slots, cx->nslots * sizeof *p->slots);
    if (cx->nregs)
        memcpy(p->regnames, cx->regnames, cx->nregs * sizeof *p->regnames);
    p->nslots = (int32_t)cx->nslots;
    p->nregs = (int32_t)cx->nregs;
    p->ncache = cx->ncache;
    p->nrtargs = cx->nrtargs;
    return HOP_OK;
}

static void
ctx_free(hop_lower_ctx *cx)
{
    /* The large arrays and full chunks stay the thread's for the next
     * lowering (hop__grow_free, HOP__CHUNK_BLOCK), whose pages then need not
     * be faulted in again: a 1,000-cond graph's scratch is ~5 MB. */
    hop__free_small(cx->values, cx->vcap * sizeof *cx->values);
    hop__xcache_free(cx);
    hop__noteseen_free(cx);
    for (size_t r = 0; r < cx->nroutines; r++) {
        hop__rcode *rc = &cx->routines[r];
        hop__grow_free(rc->code, rc->cap, sizeof *rc->code);
        hop__grow_free(rc->acc, rc->capacc, sizeof *rc->acc);
        hop__grow_free(rc->loops, rc->caploops, sizeof *rc->loops);
    }
    hop__grow_free(cx->routines, cx->caproutines, sizeof *cx->routines);
    hop__grow_free(cx->slots, cx->capslots, sizeof *cx->slots);
    hop__grow_free(cx->regnames, cx->capregs, sizeof *cx->regnames);
    hop__grow_free(cx->buffers, cx->capbuffers, sizeof *cx->buffers);
    hop__grow_free(cx->aliases, cx->capaliases, sizeof *cx->aliases);
    hop__free(cx->symreg);
    hop__free(cx->symdef);
    hop__grow_free(cx->exits, cx->capexits, sizeof *cx->exits);
    hop__free(cx->symentry);
    for (size_t i = 0; i < cx->nkept; i++)
        hop_graph_free(cx->kept[i]);
    hop__grow_free(cx->kept, cx->capkept, sizeof *cx->kept);
    hop__arena_destroy(&cx->tmp);
}

hop_plan *
hop_lower(const hop_output_graph *og, const hop_lower_options *opts)
{
    if (og == NULL) {
        hop_error(HOP_MISUSE, "hop_lower: the OutputGraph is NULL");
        return NULL;
    }
    const hop_graph *root = hop_output_graph_root_graph(og);
    if (root == NULL || root->output == NULL) {
        hop_error(HOP_MISUSE, "hop_lower: the root graph has no output node yet");
        return NULL;
    }
    /* A graph verified when it was made (autodiff, vmap, load) and not
     * changed since is not walked again. */
    if (hop_graph_verify_changed(root) != HOP_OK)
        return NULL;
    hop_error_clear();
    hop_plan *p = hop__plan_new();
    if (p == NULL)
        return NULL;
    hop_lower_ctx cx = {.plan = p, .og = og, .env = hop_output_graph_env(og)};
    if (opts)
        cx.opts = *opts;
    hop__arena_init(&cx.tmp);
    cx.nsyms = hop_shape_env_nsymbols(cx.env);
    cx.symreg = hop__malloc((cx.nsyms + 1) * sizeof *cx.symreg);
    cx.symdef = hop__calloc(cx.nsyms + 1, sizeof *cx.symdef);
    cx.symentry = hop__calloc(cx.nsyms + 1, sizeof *cx.symentry);
    hop_status st = cx.symreg && cx.symdef && cx.symentry ? HOP_OK : HOP_NOMEM;
    for (size_t i = 0; cx.symreg && i < cx.nsyms; i++)
        cx.symreg[i] = -1;
    if (st == HOP_OK)
        st = hop__vmap_reserve(&cx, hop_graph_tree_nodes(root));
    int32_t main_r;
    if (st == HOP_OK)
        st = hop__new_routine(&cx, NULL, &main_r);
    if (st == HOP_OK)
        st = compile_main(&cx);
    if (st == HOP_OK)
        st = hop__memplan(&cx);
    if (st == HOP_OK)
        st = assemble(&cx);
    if (st == HOP_OK) {
        const char *env = getenv("HOP_TRACE_PLAN");
        if (env && env[0] && strcmp(env, "0") != 0)
            p->trace = stderr;
    }
    ctx_free(&cx);
    if (st != HOP_OK) {
        if (st == HOP_NOMEM && hop_error_code() != HOP_NOMEM)
            hop_error(HOP_NOMEM, "out of memory");
        hop_plan_free(p);
        return NULL;
    }
    return p;
}
