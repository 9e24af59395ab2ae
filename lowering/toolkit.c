/*
 * lowering/toolkit.c - what a HOP's lower callback builds code with
 * (hop/lowering.h): plan values of arguments, tensors, copies and moves,
 * rows, loops, branches, the call's results and destinations.  It only
 * builds code and never compiles a graph: the entries that do
 * (hop_lower_inline, hop_lower_call, hop_lower_default) are lower.c's, so
 * lower.c calls into this file and never the other way.
 *
 * Control flow is structured: if/else/end_if and loop_begin/loop_end keep a
 * small stack of the jumps to patch; a loop is also recorded for the
 * lifetimes (memplan.c).
 */
#include "lowering/lowering_impl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- toolkit */

hop_status
hop_lower_arg(hop_lower_ctx *cx, const hop_arg *arg, hop_pval *out)
{
    if (cx == NULL || arg == NULL || out == NULL)
        return hop_error(HOP_MISUSE, "hop_lower_arg: NULL argument");
    return hop__arg_value(cx, arg, out);
}

hop_status
hop_lower_tensor(hop_lower_ctx *cx, const hop_value_info *meta, bool storage, hop_pval *out)
{
    if (cx == NULL || meta == NULL || out == NULL)
        return hop_error(HOP_MISUSE, "hop_lower_tensor: NULL argument");
    hop_status st;
    if (meta->kind == HOP_VALUE_SYM) {
        int64_t c;
        int32_t reg;
        if (hop_expr_const_value(meta->sym, &c)) {
            st = hop__new_reg(cx, NULL, &reg);
        } else if (hop_expr_kind_of(meta->sym) == HOP_EXPR_SYMBOL) {
            reg = hop__sym_reg(cx, meta->sym);
            st = reg < 0 ? hop__nomem_or(hop_error_code()) : HOP_OK;
            if (st == HOP_OK)
                hop__mark_defined(cx, meta->sym);
        } else {
            st = hop__new_reg(cx, NULL, &reg);
        }
        *out = hop__pv_int(reg);
        return st;
    }
    if (meta->kind != HOP_VALUE_TENSOR)
        return hop_error(HOP_INVALID, "hop_lower_tensor: meta is neither a tensor nor a SymInt");
    int32_t slot;
    bool late = storage && hop__meta_late(cx, &meta->meta);
    hop__skind kind = !storage ? HOP__S_ALIAS : late ? HOP__S_LATE : HOP__S_BUFFER;
    /* Named after the call being lowered (`map`), for dumps. */
    if ((st = hop__new_slot(cx, kind, &meta->meta, cx->call ? cx->call->name : NULL, &slot)) !=
        HOP_OK)
        return st;
    if (late && hop__emit(cx, HOP__OP_Alloc, slot, 0, 0, NULL, NULL) < 0)
        return HOP_NOMEM;
    *out = hop__pv_tensor(slot);
    return HOP_OK;
}

hop_status
hop_lower_copy(hop_lower_ctx *cx, hop_pval dst, hop_pval src)
{
    if (cx == NULL)
        return hop_error(HOP_MISUSE, "hop_lower_copy: NULL context");
    if (dst.kind == HOP_PVAL_TENSOR && src.kind == HOP_PVAL_TENSOR)
        return hop__emit_copy(cx, dst.id, src.id);
    if (dst.kind == HOP_PVAL_INT && src.kind == HOP_PVAL_INT) {
        if (dst.id != src.id && hop__emit(cx, HOP__OP_MoveInt, dst.id, src.id, 0, NULL, NULL) < 0)
            return HOP_NOMEM;
        return HOP_OK;
    }
    if (dst.kind == HOP_PVAL_INT && src.kind == HOP_PVAL_CONST) {
        int32_t pc = hop__emit(cx, HOP__OP_Integer, dst.id, 0, 0, NULL, NULL);
        if (pc < 0)
            return HOP_NOMEM;
        hop__cur(cx)->code[pc].i64 = src.value;
        return HOP_OK;
    }
    return hop_error(HOP_INVALID, "hop_lower_copy: cannot copy a %s into a %s",
                     src.kind == HOP_PVAL_TENSOR ? "tensor" : "SymInt",
                     dst.kind == HOP_PVAL_TENSOR ? "tensor" : "SymInt");
}

hop_status
hop_lower_move(hop_lower_ctx *cx, hop_pval dst, hop_pval src)
{
    if (cx == NULL)
        return hop_error(HOP_MISUSE, "hop_lower_move: NULL context");
    if (dst.kind == HOP_PVAL_TENSOR && src.kind == HOP_PVAL_TENSOR) {
        if (dst.id == src.id)
            return HOP_OK;
        hop_status st;
        if (hop__emit(cx, HOP__OP_Move, dst.id, src.id, 0, NULL, NULL) < 0)
            return HOP_NOMEM;
        if ((st = hop__access(cx, src.id)) != HOP_OK || (st = hop__access(cx, dst.id)) != HOP_OK)
            return st;
        return hop__alias_of(cx, dst.id, src.id);
    }
    return hop_lower_copy(cx, dst, src);
}

hop_status
hop_lower_select_dim(hop_lower_ctx *cx, hop_pval base, int dim, hop_pval index, hop_pval *out)
{
    if (cx == NULL || out == NULL || base.kind != HOP_PVAL_TENSOR ||
        (index.kind != HOP_PVAL_INT && index.kind != HOP_PVAL_CONST))
        return hop_error(HOP_MISUSE, "hop_lower_select: needs a tensor and an int");
    const hop__slot *b = &cx->slots[base.id];
    if (b->rank < 1 || dim < 0 || dim >= b->rank)
        return hop_error(HOP_INVALID, "hop_lower_select: dim %d of a %d-dim tensor", dim, b->rank);
    int32_t reg = index.id;
    hop_status st;
    if (index.kind == HOP_PVAL_CONST) {
        if ((st = hop__new_reg(cx, NULL, &reg)) != HOP_OK ||
            (st = hop_lower_copy(cx, hop__pv_int(reg), index)) != HOP_OK)
            return st;
    }
    if (hop__grow((void **)&cx->slots, &cx->capslots, cx->nslots + 1, sizeof *cx->slots) != HOP_OK)
        return HOP_NOMEM;
    b = &cx->slots[base.id];
    hop__slot s = {.kind = HOP__S_VIEW, .dtype = b->dtype, .rank = b->rank - 1, .buffer = -1};
    if (dim == 0) { /* its sizes are the tail of the base's */
        s.sizes = b->sizes + 1;
    } else {
        const hop__xprog **sz = hop__arena_alloc(&cx->plan->arena, (size_t)s.rank * sizeof *sz);
        if (sz == NULL)
            return HOP_NOMEM;
        for (int d = 0, k = 0; d < b->rank; d++)
            if (d != dim)
                sz[k++] = b->sizes[d];
        s.sizes = sz;
    }
    if (b->name && (s.name = hop__note(cx, "%s[i]", b->name)) == NULL)
        return HOP_NOMEM;
    int32_t slot = (int32_t)cx->nslots;
    cx->slots[cx->nslots++] = s;
    int32_t pc = hop__emit(cx, HOP__OP_Select, slot, base.id, reg, NULL, NULL);
    if (pc < 0)
        return HOP_NOMEM;
    hop__cur(cx)->code[pc].i64 = dim;
    if ((st = hop__access(cx, base.id)) != HOP_OK || (st = hop__access(cx, slot)) != HOP_OK ||
        (st = hop__alias_of(cx, slot, base.id)) != HOP_OK)
        return st;
    *out = hop__pv_tensor(slot);
    return HOP_OK;
}

hop_status
hop_lower_select(hop_lower_ctx *cx, hop_pval base, hop_pval index, hop_pval *out)
{
    return hop_lower_select_dim(cx, base, 0, index, out);
}

/* Points the exits of the loop just closed (at depth cx->nctl) at target. */
static void
patch_exits(hop_lower_ctx *cx, int32_t target)
{
    hop__rcode *r = hop__cur(cx);
    while (cx->nexits > 0 && cx->exits[cx->nexits - 1].depth >= cx->nctl)
        r->code[cx->exits[--cx->nexits].pc].p2 = target;
}

static hop_status
add_exit(hop_lower_ctx *cx, int depth, int32_t pc)
{
    if (hop__grow((void **)&cx->exits, &cx->capexits, cx->nexits + 1, sizeof *cx->exits) != HOP_OK)
        return HOP_NOMEM;
    cx->exits[cx->nexits++] = (hop__exit){depth, pc};
    return HOP_OK;
}

/* pred as IfNot's operand: a register or a one-element tensor. */
static hop_status
pred_operand(hop_lower_ctx *cx, hop_pval *pred, const char *who)
{
    hop_status st;
    if (pred->kind == HOP_PVAL_NONE)
        return hop_error(HOP_MISUSE, "%s: needs a pred", who);
    if (pred->kind == HOP_PVAL_CONST) {
        int32_t reg;
        if ((st = hop__new_reg(cx, NULL, &reg)) != HOP_OK ||
            (st = hop_lower_copy(cx, hop__pv_int(reg), *pred)) != HOP_OK)
            return st;
        *pred = hop__pv_int(reg);
    }
    if (pred->kind == HOP_PVAL_TENSOR) {
        const hop__slot *s = &cx->slots[pred->id];
        for (int d = 0; d < s->rank; d++)
            if (!s->sizes[d]->is_const || s->sizes[d]->value != 1)
                return hop_error(HOP_INVALID, "%s: pred must be a tensor of one element", who);
    }
    return HOP_OK;
}

/* The test of an if, a while loop's test or a break: pred checked as
 * IfNot's operand (pred_operand), then IfNot pred at *pc, its target
 * patched later. */
static hop_status
emit_test(hop_lower_ctx *cx, hop_pval pred, const char *who, int32_t *pc)
{
    hop_status st = pred_operand(cx, &pred, who);
    if (st != HOP_OK)
        return st;
    *pc =
        hop__emit(cx, HOP__OP_IfNot, pred.id, -1, pred.kind == HOP_PVAL_TENSOR ? 0 : 1, NULL, NULL);
    if (*pc < 0 || (pred.kind == HOP_PVAL_TENSOR && hop__access(cx, pred.id) != HOP_OK))
        return HOP_NOMEM;
    return HOP_OK;
}

static hop_status
push_ctl(hop_lower_ctx *cx, int kind, int32_t a, int32_t b)
{
    if (cx->nctl >= HOP__MAX_CTL)
        return hop_error(HOP_UNSUPPORTED, "lowering: if/loop blocks nest deeper than %d",
                         HOP__MAX_CTL);
    cx->ctl[cx->nctl++] = (hop__ctl){kind, a, b, -1, 0};
    return HOP_OK;
}

hop_status
hop_lower_loop_begin(hop_lower_ctx *cx, hop_pval count, hop_pval *index)
{
    if (cx == NULL || index == NULL || (count.kind != HOP_PVAL_INT && count.kind != HOP_PVAL_CONST))
        return hop_error(HOP_MISUSE, "hop_lower_loop_begin: needs an int count");
    int32_t creg = count.id, ireg;
    hop_status st;
    if (count.kind == HOP_PVAL_CONST) {
        if ((st = hop__new_reg(cx, NULL, &creg)) != HOP_OK ||
            (st = hop_lower_copy(cx, hop__pv_int(creg), count)) != HOP_OK)
            return st;
    }
    if ((st = hop__new_reg(cx, "i", &ireg)) != HOP_OK)
        return st;
    /* LoopInit i, end, n: i = 0; if n <= 0 goto end (patched at loop end). */
    int32_t init = hop__emit(cx, HOP__OP_LoopInit, ireg, -1, creg, NULL, NULL);
    if (init < 0)
        return HOP_NOMEM;
    if ((st = push_ctl(cx, 2, init, creg)) != HOP_OK)
        return st;
    *index = hop__pv_int(ireg);
    return HOP_OK;
}

hop_status
hop_lower_parallel_loop_begin(hop_lower_ctx *cx, hop_pval count, hop_pval *index)
{
    hop_status st = hop_lower_loop_begin(cx, count, index);
    if (st == HOP_OK)
        cx->ctl[cx->nctl - 1].kind = 3;
    return st;
}

hop_status
hop_lower_loop_end(hop_lower_ctx *cx)
{
    if (cx == NULL || cx->nctl == 0 ||
        (cx->ctl[cx->nctl - 1].kind != 2 && cx->ctl[cx->nctl - 1].kind != 3))
        return hop_error(HOP_MISUSE, "hop_lower_loop_end: no loop is open");
    hop__ctl c = cx->ctl[--cx->nctl];
    hop__rcode *r = hop__cur(cx);
    int32_t ireg = r->code[c.a].p1;
    /* Next i, start, n: i++; if i < n goto start. */
    int32_t next = hop__emit(cx, HOP__OP_Next, ireg, c.a + 1, c.b, NULL, NULL);
    if (next < 0)
        return HOP_NOMEM;
    r = hop__cur(cx);
    r->code[c.a].p2 = next + 1;
    patch_exits(cx, next + 1);
    if (hop__grow((void **)&r->loops, &r->caploops, r->nloops + 1, sizeof *r->loops) != HOP_OK)
        return HOP_NOMEM;
    r->loops[r->nloops++] = (hop__loop){c.a, next, c.kind == 3};
    return HOP_OK;
}

hop_status
hop_lower_if(hop_lower_ctx *cx, hop_pval pred)
{
    if (cx == NULL)
        return hop_error(HOP_MISUSE, "hop_lower_if: NULL context");
    /* IfNot pred, else, kind (0 tensor, 1 int): patched by else/end_if. */
    int32_t pc;
    hop_status st = emit_test(cx, pred, "hop_lower_if", &pc);
    return st == HOP_OK ? push_ctl(cx, 0, pc, -1) : st;
}

/*
 * The then-branch's buffers form lazy section k: Layout k at its start
 * places them in the section's own block when a run gets there, and the
 * memory plan keeps them out of the block (memplan.c), so a run
 * that skips the branch reserves nothing for it.
 */
hop_status
hop_lower_if_lazy(hop_lower_ctx *cx, hop_pval pred)
{
    if (cx == NULL)
        return hop_error(HOP_MISUSE, "hop_lower_if_lazy: NULL context");
    hop_status st = hop_lower_if(cx, pred);
    if (st != HOP_OK)
        return st;
    if (cx->nsections == INT32_MAX - 1)
        return hop_error(HOP_UNSUPPORTED, "lowering: too many lazy sections");
    int32_t k = cx->nsections + 1;
    if (hop__emit(cx, HOP__OP_Layout, k, 0, 0, NULL, NULL) < 0)
        return HOP_NOMEM;
    cx->nsections = k;
    hop__ctl *c = &cx->ctl[cx->nctl - 1];
    c->outer_section = cx->section;
    c->outer_routine = cx->section_routine;
    cx->section = k;
    cx->section_routine = cx->cur;
    return HOP_OK;
}

/* Leaving an if's then-branch: a lazy section it opened ends. */
static void
close_section(hop_lower_ctx *cx, hop__ctl *c)
{
    if (c->outer_section >= 0) {
        cx->section = c->outer_section;
        cx->section_routine = c->outer_routine;
        c->outer_section = -1;
    }
}

/* ---------------------------------------------------------- while loops */

hop_status
hop_lower_while_begin(hop_lower_ctx *cx)
{
    if (cx == NULL)
        return hop_error(HOP_MISUSE, "hop_lower_while_begin: NULL context");
    /* The loop's head: the condition's code starts here. */
    return push_ctl(cx, 4, hop__pos(cx), 0);
}

hop_status
hop_lower_while_test(hop_lower_ctx *cx, hop_pval pred)
{
    if (cx == NULL || cx->nctl == 0 || cx->ctl[cx->nctl - 1].kind != 4 ||
        cx->ctl[cx->nctl - 1].b != 0)
        return hop_error(HOP_MISUSE, "hop_lower_while_test: no while loop waits for its test");
    int32_t pc;
    hop_status st = emit_test(cx, pred, "hop_lower_while_test", &pc);
    if (st != HOP_OK)
        return st;
    cx->ctl[cx->nctl - 1].b = 1;
    return add_exit(cx, cx->nctl - 1, pc);
}

hop_status
hop_lower_while_end(hop_lower_ctx *cx)
{
    if (cx == NULL || cx->nctl == 0 || cx->ctl[cx->nctl - 1].kind != 4 ||
        cx->ctl[cx->nctl - 1].b == 0)
        return hop_error(HOP_MISUSE, "hop_lower_while_end: no tested while loop is open");
    hop__ctl c = cx->ctl[--cx->nctl];
    int32_t back = hop__emit(cx, HOP__OP_Goto, 0, c.a, 0, NULL, "while");
    if (back < 0)
        return HOP_NOMEM;
    patch_exits(cx, back + 1);
    hop__rcode *r = hop__cur(cx);
    if (hop__grow((void **)&r->loops, &r->caploops, r->nloops + 1, sizeof *r->loops) != HOP_OK)
        return HOP_NOMEM;
    r->loops[r->nloops++] = (hop__loop){c.a, back, false};
    return HOP_OK;
}

/*
 * Rotated while loops (kind 5): `Goto test; body: ...; test: cond ...;
 * If pred goto body`.  Each iteration runs the body, the condition and one
 * branch: no jump back to a test at the top.  ctl a is the Goto, b the
 * condition's first instruction (0 while the body is open).
 */
/* Some jump of routine r goes to position pos. */
bool
hop__jump_target(const hop__rcode *r, int32_t pos)
{
    for (size_t i = 0; i < r->n; i++) {
        const hop__insn *in = &r->code[i];
        switch (in->opcode) {
        case HOP__OP_IfNot:
        case HOP__OP_If:
        case HOP__OP_Goto:
        case HOP__OP_LoopInit:
        case HOP__OP_Next:
            if (in->p2 == pos)
                return true;
            break;
        default:
            break;
        }
    }
    return false;
}

hop_status
hop_lower_while_body(hop_lower_ctx *cx)
{
    if (cx == NULL)
        return hop_error(HOP_MISUSE, "hop_lower_while_body: NULL context");
    /* Goto test: patched by hop_lower_while_cond. */
    int32_t jump = hop__emit(cx, HOP__OP_Goto, 0, -1, 0, NULL, "while");
    if (jump < 0)
        return HOP_NOMEM;
    return push_ctl(cx, 5, jump, 0);
}

hop_status
hop_lower_while_cond(hop_lower_ctx *cx)
{
    if (cx == NULL || cx->nctl == 0 || cx->ctl[cx->nctl - 1].kind != 5 ||
        cx->ctl[cx->nctl - 1].b != 0)
        return hop_error(HOP_MISUSE, "hop_lower_while_cond: no while loop body is open");
    hop__ctl *c = &cx->ctl[cx->nctl - 1];
    c->b = hop__pos(cx);
    hop__cur(cx)->code[c->a].p2 = c->b;
    return HOP_OK;
}

hop_status
hop_lower_while_repeat(hop_lower_ctx *cx, hop_pval pred)
{
    if (cx == NULL || cx->nctl == 0 || cx->ctl[cx->nctl - 1].kind != 5 ||
        cx->ctl[cx->nctl - 1].b == 0)
        return hop_error(HOP_MISUSE, "hop_lower_while_repeat: no while loop waits for its test");
    hop_status st = pred_operand(cx, &pred, "hop_lower_while_repeat");
    if (st != HOP_OK)
        return st;
    hop__ctl c = cx->ctl[cx->nctl - 1];
    hop__rcode *r = hop__cur(cx);
    int32_t back, last = (int32_t)r->n - 1;
    if (pred.kind == HOP_PVAL_TENSOR && last >= c.b && r->code[last].opcode == HOP__OP_Fused &&
        r->code[last].p1 == pred.id &&
        ((const hop__fgroup *)r->code[last].p4)->epi == NULL && !hop__jump_target(r, last + 1)) {
        /* The condition's last instruction computes pred with a fused
         * group: the If runs that group itself (P4), one instruction for
         * the test and the branch.  Its accesses stay at this position. */
        r->code[last].opcode = HOP__OP_If;
        r->code[last].p2 = c.a + 1;
        r->code[last].p3 = 0;
        back = last;
    } else {
        /* If pred goto body (the instruction after the Goto). */
        back = hop__emit(cx, HOP__OP_If, pred.id, c.a + 1, pred.kind == HOP_PVAL_TENSOR ? 0 : 1,
                         NULL, "while");
        if (back < 0)
            return HOP_NOMEM;
        if (pred.kind == HOP_PVAL_TENSOR && (st = hop__access(cx, pred.id)) != HOP_OK)
            return st;
    }
    cx->nctl--;
    patch_exits(cx, back + 1);
    r = hop__cur(cx);
    if (hop__grow((void **)&r->loops, &r->caploops, r->nloops + 1, sizeof *r->loops) != HOP_OK)
        return HOP_NOMEM;
    r->loops[r->nloops++] = (hop__loop){c.a, back, false};
    return HOP_OK;
}

hop_status
hop_lower_break_if(hop_lower_ctx *cx, hop_pval pred)
{
    if (cx == NULL)
        return hop_error(HOP_MISUSE, "hop_lower_break_if: NULL context");
    int depth = cx->nctl - 1;
    while (depth >= 0 && cx->ctl[depth].kind < 2)
        depth--;
    if (depth < 0 || cx->ctl[depth].kind == 3)
        return hop_error(HOP_MISUSE, "hop_lower_break_if: %s",
                         depth < 0 ? "no loop is open"
                                   : "the iterations of a parallel loop cannot stop it");
    /* IfNot pred, past the Goto; Goto the loop's end (patched). */
    int32_t skip;
    hop_status st = emit_test(cx, pred, "hop_lower_break_if", &skip);
    if (st != HOP_OK)
        return st;
    int32_t jump = hop__emit(cx, HOP__OP_Goto, 0, -1, 0, NULL, "break");
    if (jump < 0)
        return HOP_NOMEM;
    hop__cur(cx)->code[skip].p2 = jump + 1;
    return add_exit(cx, depth, jump);
}

/* -------------------------------------------------------------- kernels */

_Static_assert(HOP_LOWER_KERNEL_MAX_ARGS == HOP__KERNEL_MAXARGS, "one kernel argument limit");

hop_status
hop_lower_kernel(hop_lower_ctx *cx, const char *name, hop_lower_kernel_fn fn, const void *data,
                 size_t size, const hop_pval *args, size_t n)
{
    if (cx == NULL || fn == NULL || (args == NULL && n > 0) || (data == NULL && size > 0))
        return hop_error(HOP_MISUSE, "hop_lower_kernel: NULL %s",
                         cx == NULL   ? "context"
                         : fn == NULL ? "kernel"
                                      : "argument");
    if (n > HOP_LOWER_KERNEL_MAX_ARGS)
        return hop_error(HOP_MISUSE, "hop_lower_kernel: %zu tensors (at most %d)", n,
                         HOP_LOWER_KERNEL_MAX_ARGS);
    for (size_t j = 0; j < n; j++)
        if (args[j].kind != HOP_PVAL_TENSOR)
            return hop_error(HOP_MISUSE, "hop_lower_kernel: argument %zu is not a tensor", j);
    hop__hopkernel *k = hop__arena_zalloc(&cx->plan->arena, sizeof *k);
    int32_t *slots = hop__arena_zalloc(&cx->plan->arena, (n + 1) * sizeof *slots);
    void *copy = size ? hop__arena_alloc(&cx->plan->arena, size) : NULL;
    const char *nm = hop__arena_strdup(&cx->plan->arena, name ? name : "kernel");
    if (k == NULL || slots == NULL || (size && copy == NULL) || nm == NULL)
        return HOP_NOMEM;
    if (size)
        memcpy(copy, data, size);
    for (size_t j = 0; j < n; j++)
        slots[j] = args[j].id;
    *k = (hop__hopkernel){.name = nm, .fn = fn, .data = copy, .n = (int32_t)n, .slots = slots};
    if (hop__emit(cx, HOP__OP_Kernel, 0, 0, 0, k, nm) < 0)
        return HOP_NOMEM;
    for (size_t j = 0; j < n; j++) {
        hop_status st = hop__access(cx, args[j].id);
        if (st != HOP_OK)
            return st;
    }
    return HOP_OK;
}

/* -------------------------------------------------------------- carries */

/* Slots a and b can swap what they hold: two buffers of one geometry. */
static hop_status
swap_ok(hop_lower_ctx *cx, int32_t a, int32_t b)
{
    /* The VM swaps only where the elements are: the two need one geometry. */
    const hop__slot *x = &cx->slots[a], *y = &cx->slots[b];
    bool same = x->dtype == y->dtype && x->rank == y->rank && x->kind == y->kind &&
                (x->kind == HOP__S_BUFFER || x->kind == HOP__S_LATE);
    for (int d = 0; same && d < x->rank; d++)
        same = x->sizes[d] == y->sizes[d] || (x->sizes[d]->is_const && y->sizes[d]->is_const &&
                                              x->sizes[d]->value == y->sizes[d]->value);
    if (!same)
        return hop_error(HOP_MISUSE,
                         "hop_lower_swap: t%d and t%d are not two buffers of one "
                         "dtype and shape",
                         a, b);
    return HOP_OK;
}

/*
 * One Swap instruction exchanging the n pairs of slots pairs[2k],
 * pairs[2k + 1] (checked with swap_ok): the first pair in P1 P2, the P3
 * others in P4.  A loop's carries swap in one instruction.
 */
static hop_status
emit_swaps(hop_lower_ctx *cx, const int32_t *pairs, size_t n)
{
    if (n == 0)
        return HOP_OK;
    int32_t *more = NULL;
    if (n > 1) {
        more = hop__arena_alloc(&cx->plan->arena, 2 * (n - 1) * sizeof *more);
        if (more == NULL)
            return HOP_NOMEM;
        memcpy(more, pairs + 2, 2 * (n - 1) * sizeof *more);
    }
    if (hop__emit(cx, HOP__OP_Swap, pairs[0], pairs[1], (int32_t)(n - 1), more, NULL) < 0)
        return HOP_NOMEM;
    hop_status st = HOP_OK;
    for (size_t k = 0; k < n && st == HOP_OK; k++) {
        int32_t a = pairs[2 * k], b = pairs[2 * k + 1];
        /* After an odd number of swaps each slot holds the other's storage,
         * for the rest of the run, from the next run's start (the layout is
         * kept) and in the next iteration of a loop around this one: each
         * buffer must stay reserved while either slot is live.  As mutual
         * aliases the memory plan gives both the union of their live
         * ranges, or a value sharing one of them is overwritten. */
        if ((st = hop__access(cx, a)) == HOP_OK && (st = hop__access(cx, b)) == HOP_OK &&
            (st = hop__alias_of(cx, a, b)) == HOP_OK)
            st = hop__alias_of(cx, b, a);
    }
    return st;
}

hop_status
hop_lower_swap(hop_lower_ctx *cx, hop_pval a, hop_pval b)
{
    if (cx == NULL || a.kind != b.kind || (a.kind != HOP_PVAL_TENSOR && a.kind != HOP_PVAL_INT))
        return hop_error(HOP_MISUSE, "hop_lower_swap: needs two tensors or two int registers");
    if (a.id == b.id)
        return HOP_OK;
    if (a.kind == HOP_PVAL_INT) {
        int32_t t;
        hop_status st = hop__new_reg(cx, NULL, &t);
        if (st != HOP_OK || hop__emit(cx, HOP__OP_MoveInt, t, a.id, 0, NULL, NULL) < 0 ||
            hop__emit(cx, HOP__OP_MoveInt, a.id, b.id, 0, NULL, NULL) < 0 ||
            hop__emit(cx, HOP__OP_MoveInt, b.id, t, 0, NULL, NULL) < 0)
            return st != HOP_OK ? st : HOP_NOMEM;
        return HOP_OK;
    }
    hop_status st = swap_ok(cx, a.id, b.id);
    return st == HOP_OK ? emit_swaps(cx, (int32_t[]){a.id, b.id}, 1) : st;
}

hop_status
hop_lower_carry_begin(hop_lower_ctx *cx, const hop_value_info *meta, const hop_pval *init, size_t n,
                      hop_loop_carry *lc)
{
    if (cx == NULL || lc == NULL || (n && (meta == NULL || init == NULL)))
        return hop_error(HOP_MISUSE, "hop_lower_carry_begin: NULL argument");
    lc->n = n;
    lc->cur = hop_lower_pvals(cx, n);
    lc->next = hop_lower_pvals(cx, n);
    lc->got = hop_lower_pvals(cx, n);
    lc->out = hop_lower_pvals(cx, n);
    if (lc->cur == NULL || lc->next == NULL || lc->got == NULL || lc->out == NULL)
        return hop_error_code();
    hop_status st = HOP_OK;
    for (size_t i = 0; i < n && st == HOP_OK; i++) {
        bool tensor = meta[i].kind == HOP_VALUE_TENSOR;
        int32_t a, b;
        if (tensor) {
            if ((st = hop_lower_tensor(cx, &meta[i], true, &lc->cur[i])) == HOP_OK &&
                (st = hop_lower_tensor(cx, &meta[i], true, &lc->next[i])) == HOP_OK)
                st = hop_lower_copy(cx, lc->cur[i], init[i]);
            continue;
        }
        if ((st = hop__new_reg(cx, NULL, &a)) != HOP_OK ||
            (st = hop__new_reg(cx, NULL, &b)) != HOP_OK)
            break;
        lc->cur[i] = hop__pv_int(a);
        lc->next[i] = (hop_pval){HOP_PVAL_NONE, -1, 0}; /* an int result needs no buffer */
        st = hop_lower_copy(cx, lc->cur[i], init[i]);
        (void)b;
    }
    return st;
}

hop_status
hop_lower_carry_next(hop_lower_ctx *cx, hop_loop_carry *lc)
{
    if (cx == NULL || lc == NULL)
        return hop_error(HOP_MISUSE, "hop_lower_carry_next: NULL argument");
    int32_t *pairs = hop__arena_alloc(&cx->tmp, (2 * lc->n + 1) * sizeof *pairs);
    if (pairs == NULL)
        return HOP_NOMEM;
    size_t npairs = 0;
    hop_status st = HOP_OK;
    for (size_t i = 0; i < lc->n && st == HOP_OK; i++) {
        if (lc->cur[i].kind == HOP_PVAL_INT) {
            st = hop_lower_copy(cx, lc->cur[i], lc->got[i]);
            continue;
        }
        /* The body wrote into next (its destination) unless it returned
         * another value (an input unchanged): then it is copied there. */
        if (lc->got[i].kind != HOP_PVAL_TENSOR || lc->got[i].id != lc->next[i].id)
            st = hop_lower_copy(cx, lc->next[i], lc->got[i]);
        if (st == HOP_OK && lc->cur[i].id != lc->next[i].id &&
            (st = swap_ok(cx, lc->cur[i].id, lc->next[i].id)) == HOP_OK) {
            pairs[2 * npairs] = lc->cur[i].id;
            pairs[2 * npairs++ + 1] = lc->next[i].id;
        }
    }
    /* The tensor carries swap together, in one instruction, after every
     * next value is in place (a copy above writes only a next buffer, which
     * no swap before it touched). */
    return st == HOP_OK ? emit_swaps(cx, pairs, npairs) : st;
}

hop_status
hop_lower_carry_end(hop_lower_ctx *cx, hop_loop_carry *lc)
{
    if (cx == NULL || lc == NULL || cx->call == NULL)
        return hop_error(HOP_MISUSE, "hop_lower_carry_end: no call is being lowered");
    hop_status st = HOP_OK;
    for (size_t i = 0; i < lc->n && st == HOP_OK; i++) {
        if (lc->cur[i].kind == HOP_PVAL_INT) {
            lc->out[i] = lc->cur[i];
            continue;
        }
        /* After the swaps the value is in cur, whichever buffer that is:
         * one copy into the caller's destination (both buffers stay alive
         * up to here). */
        if ((st = hop_lower_dest(cx, i, &lc->out[i])) == HOP_OK && lc->out[i].kind == HOP_PVAL_NONE)
            st = hop_lower_tensor(cx, &cx->call->outs[i], true, &lc->out[i]);
        if (st == HOP_OK)
            st = hop_lower_copy(cx, lc->out[i], lc->cur[i]);
        if (st == HOP_OK)
            st = hop__access(cx, lc->next[i].id);
    }
    return st;
}

hop_status
hop_lower_carry_loop_end(hop_lower_ctx *cx, hop_loop_carry *lc)
{
    hop_status st = hop_lower_carry_next(cx, lc);
    if (st == HOP_OK)
        st = hop_lower_loop_end(cx);
    return st == HOP_OK ? hop_lower_carry_end(cx, lc) : st;
}

hop_status
hop_lower_int(hop_lower_ctx *cx, hop_int_op op, hop_pval a, hop_pval b, hop_pval *out)
{
    static const uint8_t xop[] = {
        [HOP_INT_ADD] = HOP__X_ADD, [HOP_INT_SUB] = HOP__X_SUB,
        [HOP_INT_MUL] = HOP__X_MUL, [HOP_INT_FLOORDIV] = HOP__X_FLOORDIV,
        [HOP_INT_MOD] = HOP__X_MOD, [HOP_INT_LT] = HOP__X_LT,
        [HOP_INT_LE] = HOP__X_LE,   [HOP_INT_EQ] = HOP__X_EQ,
        [HOP_INT_MAX] = HOP__X_MAX, [HOP_INT_MIN] = HOP__X_MIN,
    };
    static const char *const sym[] = {"+", "-", "*", "//", "%", "<", "<=", "==", "max", "min"};
    if (cx == NULL || out == NULL || (unsigned)op > HOP_INT_MIN ||
        (a.kind != HOP_PVAL_INT && a.kind != HOP_PVAL_CONST) ||
        (b.kind != HOP_PVAL_INT && b.kind != HOP_PVAL_CONST))
        return hop_error(HOP_MISUSE, "hop_lower_int: needs an op and two ints");
    hop__arena *ar = &cx->plan->arena;
    hop__xprog *x = hop__arena_zalloc(ar, sizeof *x);
    hop__xi *code = hop__arena_zalloc(ar, 3 * sizeof *code);
    int32_t *regs = hop__arena_zalloc(ar, 2 * sizeof *regs);
    const char **names = hop__arena_zalloc(ar, 2 * sizeof *names);
    if (x == NULL || code == NULL || regs == NULL || names == NULL)
        return HOP_NOMEM;
    hop_pval v[2] = {a, b};
    char text[2][32];
    for (int k = 0; k < 2; k++) {
        if (v[k].kind == HOP_PVAL_CONST) {
            code[k] = (hop__xi){.op = HOP__X_CONST, .v = v[k].value};
            snprintf(text[k], sizeof text[k], "%" PRId64, v[k].value);
        } else {
            code[k] = (hop__xi){.op = HOP__X_REG, .reg = v[k].id};
            regs[x->nsyms] = v[k].id;
            names[x->nsyms++] = cx->regnames[v[k].id] ? cx->regnames[v[k].id] : "r";
            snprintf(text[k], sizeof text[k], "%s",
                     cx->regnames[v[k].id] ? cx->regnames[v[k].id] : "r");
        }
    }
    code[2] = (hop__xi){.op = xop[op], .n = 2};
    x->code = code;
    x->len = 3;
    x->regs = regs;
    x->names = names;
    x->is_bool = op == HOP_INT_LT || op == HOP_INT_LE || op == HOP_INT_EQ;
    x->text = op >= HOP_INT_MAX ? hop__arena_printf(ar, "%s(%s, %s)", sym[op], text[0], text[1])
                                : hop__arena_printf(ar, "%s %s %s", text[0], sym[op], text[1]);
    int32_t reg;
    hop_status st = x->text ? hop__new_reg(cx, NULL, &reg) : HOP_NOMEM;
    if (st != HOP_OK)
        return st;
    if (hop__emit(cx, HOP__OP_Eval, reg, 0, 0, x, x->text) < 0)
        return HOP_NOMEM;
    *out = hop__pv_int(reg);
    return HOP_OK;
}

hop_status
hop_lower_else(hop_lower_ctx *cx)
{
    if (cx == NULL || cx->nctl == 0 || cx->ctl[cx->nctl - 1].kind != 0)
        return hop_error(HOP_MISUSE, "hop_lower_else: no if is open");
    hop__ctl *c = &cx->ctl[cx->nctl - 1];
    int32_t pc = hop__emit(cx, HOP__OP_Goto, 0, -1, 0, NULL, NULL);
    if (pc < 0)
        return HOP_NOMEM;
    hop__cur(cx)->code[c->a].p2 = pc + 1;
    c->kind = 1;
    c->b = pc;
    close_section(cx, c);
    return HOP_OK;
}

hop_status
hop_lower_end_if(hop_lower_ctx *cx)
{
    if (cx == NULL || cx->nctl == 0 || cx->ctl[cx->nctl - 1].kind > 1 ||
        cx->ctl[cx->nctl - 1].kind < 0)
        return hop_error(HOP_MISUSE, "hop_lower_end_if: no if is open");
    hop__ctl c = cx->ctl[--cx->nctl];
    close_section(cx, &c);
    int32_t here = hop__pos(cx);
    if (c.kind == 0)
        hop__cur(cx)->code[c.a].p2 = here;
    else
        hop__cur(cx)->code[c.b].p2 = here;
    return HOP_OK;
}

hop_status
hop_lower_dest(hop_lower_ctx *cx, size_t i, hop_pval *out)
{
    if (cx == NULL || cx->call == NULL || out == NULL || i >= cx->call->nouts)
        return hop_error(HOP_MISUSE, "hop_lower_dest: no call is being lowered, or no result %zu",
                         i);
    *out = cx->dests ? cx->dests[i] : (hop_pval){HOP_PVAL_NONE, -1, 0};
    return HOP_OK;
}

hop_status
hop_lower_results(hop_lower_ctx *cx, const hop_pval *results, size_t n)
{
    if (cx == NULL || cx->call == NULL || (n && results == NULL))
        return hop_error(HOP_MISUSE, "hop_lower_results: no call is being lowered");
    hop_pval *copy = hop__arena_alloc(&cx->tmp, (n + 1) * sizeof *copy);
    if (copy == NULL)
        return HOP_NOMEM;
    if (n)
        memcpy(copy, results, n * sizeof *copy);
    cx->results = copy;
    cx->nresults = n;
    cx->have_results = true;
    return HOP_OK;
}

/* ---------------------------------------------------------- conveniences */

hop_pval *
hop_lower_pvals(hop_lower_ctx *cx, size_t n)
{
    if (cx == NULL) {
        hop_error(HOP_MISUSE, "hop_lower_pvals: NULL context");
        return NULL;
    }
    if (n > SIZE_MAX / sizeof(hop_pval) - 1) {
        hop_error(HOP_NOMEM, "lowering: out of memory (%zu values)", n);
        return NULL;
    }
    return hop__arena_zalloc(&cx->tmp, (n + 1) * sizeof(hop_pval));
}

hop_pval *
hop_lower_args(hop_lower_ctx *cx, const hop_arg *args, size_t n)
{
    hop_pval *v = hop_lower_pvals(cx, n);
    for (size_t i = 0; v && i < n; i++)
        if (hop_lower_arg(cx, &args[i], &v[i]) != HOP_OK)
            return NULL;
    return v;
}

hop_pval *
hop_lower_passed(hop_lower_ctx *cx, const hop_node *call, size_t *n)
{
    size_t np = hop_node_passed(call, NULL, 0);
    if (n)
        *n = np;
    const hop_arg **items = cx ? hop__arena_alloc(&cx->tmp, (np + 1) * sizeof *items) : NULL;
    hop_pval *v = items ? hop_lower_pvals(cx, np) : NULL;
    if (v == NULL)
        return NULL;
    hop_node_passed(call, items, np);
    for (size_t i = 0; i < np; i++)
        if (hop_lower_arg(cx, items[i], &v[i]) != HOP_OK)
            return NULL;
    return v;
}

hop_pval *
hop_lower_dests(hop_lower_ctx *cx)
{
    if (cx == NULL || cx->call == NULL) {
        hop_error(HOP_MISUSE, "hop_lower_dests: no call is being lowered");
        return NULL;
    }
    hop_pval *d = hop_lower_pvals(cx, cx->call->nouts);
    for (size_t j = 0; d && j < cx->call->nouts; j++)
        if (hop_lower_dest(cx, j, &d[j]) != HOP_OK)
            return NULL;
    return d;
}

hop_pval *
hop_lower_outputs(hop_lower_ctx *cx, bool storage)
{
    hop_pval *d = hop_lower_dests(cx);
    for (size_t j = 0; d && j < cx->call->nouts; j++)
        if (d[j].kind == HOP_PVAL_NONE &&
            hop_lower_tensor(cx, &cx->call->outs[j], storage, &d[j]) != HOP_OK)
            return NULL;
    return d;
}

bool
hop_lower_symbol_known(hop_lower_ctx *cx, const hop_expr *sym)
{
    if (cx == NULL || sym == NULL || hop_expr_kind_of(sym) != HOP_EXPR_SYMBOL)
        return false;
    int64_t id = hop_symbol_id(sym);
    return id >= 0 && (size_t)id < cx->nsyms && cx->symdef[id];
}

const hop_lower_options *
hop_lower_get_options(const hop_lower_ctx *cx)
{
    static const hop_lower_options defaults = {0};
    return cx ? &cx->opts : &defaults;
}

struct hop__noteseen {
    const char *text; /* in the plan's arena */
    UT_hash_handle hh;
};

hop_status
hop_lower_note(hop_lower_ctx *cx, const char *fmt, ...)
{
    if (cx == NULL || fmt == NULL)
        return hop_error(HOP_MISUSE, "hop_lower_note: NULL %s", cx ? "format" : "context");
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t len = strlen(text);
    hop__noteseen *seen = NULL;
    HASH_FIND(hh, cx->noteseen, text, len, seen);
    if (seen != NULL)
        return HOP_OK;
    hop_plan *p = cx->plan;
    const char *copy = hop__arena_strdup(&p->arena, text);
    seen = copy ? hop__malloc(sizeof *seen) : NULL;
    if (seen == NULL ||
        hop__grow((void **)&p->notes, &p->capnotes, p->nnotes + 1, sizeof *p->notes) != HOP_OK) {
        hop__free(seen);
        return hop_error(HOP_NOMEM, "hop_lower_note: out of memory");
    }
    seen->text = copy;
    hop_status st;
    HOP_HASH_ADD_KEYPTR(st, hh, cx->noteseen, copy, len, seen);
    if (st != HOP_OK) {
        hop__free(seen);
        return st;
    }
    p->notes[p->nnotes++] = copy;
    return HOP_OK;
}

void
hop__noteseen_free(hop_lower_ctx *cx)
{
    hop__noteseen *e, *tmp;
    HASH_ITER(hh, cx->noteseen, e, tmp)
    {
        HASH_DEL(cx->noteseen, e);
        hop__free(e);
    }
}

hop_status
hop_lower_keep_graph(hop_lower_ctx *cx, hop_graph *g)
{
    if (cx == NULL || g == NULL) {
        hop_graph_free(g);
        return hop_error(HOP_MISUSE, "hop_lower_keep_graph: NULL %s", cx ? "graph" : "context");
    }
    if (hop__grow((void **)&cx->kept, &cx->capkept, cx->nkept + 1, sizeof *cx->kept) != HOP_OK) {
        hop_graph_free(g);
        return HOP_NOMEM;
    }
    cx->kept[cx->nkept++] = g;
    return HOP_OK;
}
