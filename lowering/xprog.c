/*
 * lowering/xprog.c - SymInt and SymBool expressions compiled into small
 * postfix programs over the plan's int registers, and their evaluation.
 *
 * A plan must not keep pointers into the ShapeEnv, so each expression it
 * evaluates at run time (a size, a guard, a SymInt operand) becomes a
 * program: the canonical form walked through hop/ops.h's accessors, one
 * instruction per node, in the order hop_expr_eval evaluates it, so the
 * program fails (overflow, division by zero) exactly where the expression
 * does.  Every symbol gets the plan's register for it.
 *
 * Evaluation is exact: int64 overflow, division by zero and unbound
 * symbols are HOP_RUNTIME errors naming the expression.
 */
#include "lowering/lowering_impl.h"

#include <inttypes.h>
#include <stdio.h>

typedef struct hop__xcache {
    const hop_expr *e;
    const hop__xprog *x;
    UT_hash_handle hh;
} hop__xcache_entry;

/* ------------------------------------------------------------- compiling */

int32_t
hop__sym_reg(hop_lower_ctx *cx, const hop_expr *sym)
{
    int64_t id = hop_symbol_id(sym);
    if (id < 0 || (size_t)id >= cx->nsyms) {
        hop_error(HOP_UNSUPPORTED, "lowering: symbol %s is unknown to the plan",
                  hop_symbol_name(sym) ? hop_symbol_name(sym) : "?");
        return -1;
    }
    if (cx->symreg[id] >= 0)
        return cx->symreg[id];
    int32_t r;
    if (hop__new_reg(cx, hop_symbol_name(sym), &r) != HOP_OK)
        return -1;
    cx->symreg[id] = r;
    return r;
}

/* A program being emitted: its code (grown with hop__grow), and the stack
 * depth so far and at most. */
typedef struct emitter {
    hop_lower_ctx *cx;
    hop__xi *code;
    size_t n, cap;
    int depth, maxdepth;
    hop_status st;
} emitter;

static void
put(emitter *em, uint8_t op, int64_t v, int32_t reg, uint8_t nops)
{
    if (em->st != HOP_OK)
        return;
    if (hop__grow((void **)&em->code, &em->cap, em->n + 1, sizeof *em->code) != HOP_OK) {
        em->st = HOP_NOMEM;
        return;
    }
    em->code[em->n++] = (hop__xi){.op = op, .n = nops, .reg = reg, .v = v};
    /* Operands in, one result out. */
    em->depth += op == HOP__X_CONST || op == HOP__X_REG ? 1
                 : op == HOP__X_NEG || op == HOP__X_NOT ? 0
                 : op == HOP__X_MAX || op == HOP__X_MIN ? 1 - nops
                                                        : -1;
    if (em->depth > em->maxdepth)
        em->maxdepth = em->depth;
}

static void emit(emitter *em, const hop_expr *e);

/* Operands of e folded pairwise with op (MAX, MIN, AND, OR), left to right,
 * so the stack stays shallow however many there are. */
static void
emit_fold(emitter *em, const hop_expr *e, uint8_t op)
{
    size_t n = hop_expr_noperands(e);
    for (size_t i = 0; i < n; i++) {
        emit(em, hop_expr_operand(e, i));
        if (i > 0)
            put(em, op, 0, 0, op == HOP__X_MAX || op == HOP__X_MIN ? 2 : 0);
    }
}

static void
emit(emitter *em, const hop_expr *e)
{
    size_t n = hop_expr_noperands(e);
    int64_t v;
    int32_t reg;
    switch (hop_expr_kind_of(e)) {
    case HOP_EXPR_CONST:
    case HOP_EXPR_TRUE:
    case HOP_EXPR_FALSE:
        hop_expr_const_value(e, &v);
        put(em, HOP__X_CONST, v, 0, 0);
        break;
    case HOP_EXPR_SYMBOL:
        if ((reg = hop__sym_reg(em->cx, e)) < 0) {
            if (em->st == HOP_OK)
                em->st = hop__nomem_or(hop_error_code());
            return;
        }
        put(em, HOP__X_REG, 0, reg, 0);
        break;
    case HOP_EXPR_ADD:
        /* addend + coef_0*term_0 + ...: the sum hop_expr_eval forms, term
         * by term (a zero addend changes no overflow). */
        if ((v = hop_expr_addend(e)) != 0)
            put(em, HOP__X_CONST, v, 0, 0);
        for (size_t i = 0; i < n; i++) {
            emit(em, hop_expr_operand(e, i));
            if ((v = hop_expr_coef(e, i)) != 1) {
                put(em, HOP__X_CONST, v, 0, 0);
                put(em, HOP__X_MUL, 0, 0, 0);
            }
            if (i > 0 || hop_expr_addend(e) != 0)
                put(em, HOP__X_ADD, 0, 0, 0);
        }
        break;
    case HOP_EXPR_MUL:
        for (size_t i = 0; i < n; i++) {
            emit(em, hop_expr_operand(e, i));
            if ((v = hop_expr_coef(e, i)) != 1) {
                put(em, HOP__X_CONST, v, 0, 0);
                put(em, HOP__X_POW, 0, 0, 0);
            }
            if (i > 0)
                put(em, HOP__X_MUL, 0, 0, 0);
        }
        break;
    case HOP_EXPR_FLOORDIV:
    case HOP_EXPR_MOD:
    case HOP_EXPR_EQ:
    case HOP_EXPR_NE:
    case HOP_EXPR_LT:
    case HOP_EXPR_LE: {
        static const uint8_t ops[] = {
            [HOP_EXPR_FLOORDIV] = HOP__X_FLOORDIV,
            [HOP_EXPR_MOD] = HOP__X_MOD,
            [HOP_EXPR_EQ] = HOP__X_EQ,
            [HOP_EXPR_NE] = HOP__X_NE,
            [HOP_EXPR_LT] = HOP__X_LT,
            [HOP_EXPR_LE] = HOP__X_LE,
        };
        emit(em, hop_expr_operand(e, 0));
        emit(em, hop_expr_operand(e, 1));
        put(em, ops[hop_expr_kind_of(e)], 0, 0, 0);
        break;
    }
    case HOP_EXPR_MAX:
        emit_fold(em, e, HOP__X_MAX);
        break;
    case HOP_EXPR_MIN:
        emit_fold(em, e, HOP__X_MIN);
        break;
    case HOP_EXPR_AND:
        emit_fold(em, e, HOP__X_AND);
        break;
    case HOP_EXPR_OR:
        emit_fold(em, e, HOP__X_OR);
        break;
    case HOP_EXPR_NOT:
        emit(em, hop_expr_operand(e, 0));
        put(em, HOP__X_NOT, 0, 0, 0);
        break;
    }
}

const hop__xprog *
hop__xconst(hop_lower_ctx *cx, int64_t v)
{
    hop__xprog *x = hop__arena_zalloc(&cx->plan->arena, sizeof *x);
    if (x == NULL)
        return NULL;
    x->is_const = true;
    x->value = v;
    char text[21];
    hop__format_int((long long)v, text);
    x->text = hop__arena_strdup(&cx->plan->arena, text);
    return x->text ? x : NULL;
}

/* Compiles e into x (in arena a): its code, and the registers and names of
 * its free symbols for messages. */
static hop_status
compile(hop_lower_ctx *cx, const hop_expr *e, hop__arena *a, hop__xprog *x)
{
    emitter em = {.cx = cx};
    emit(&em, e);
    hop_status st = em.st;
    if (st == HOP_OK && em.maxdepth > HOP__X_MAXDEPTH)
        st = hop_error(HOP_UNSUPPORTED,
                       "lowering: cannot compile the expression %s: it nests deeper than %d",
                       x->text, HOP__X_MAXDEPTH);
    const hop_expr *small[16], **syms = small;
    size_t ns = hop_expr_free_symbols(e, NULL, 0);
    if (st == HOP_OK && ns > HOP__ARRAY_LEN(small) &&
        (syms = hop__arena_alloc(&cx->tmp, ns * sizeof *syms)) == NULL)
        st = HOP_NOMEM;
    hop__xi *code = st == HOP_OK ? hop__arena_alloc(a, em.n * sizeof *code) : NULL;
    int32_t *regs = code ? hop__arena_alloc(a, (ns + 1) * sizeof *regs) : NULL;
    const char **names = regs ? hop__arena_alloc(a, (ns + 1) * sizeof *names) : NULL;
    if (st == HOP_OK && names == NULL)
        st = HOP_NOMEM;
    if (st == HOP_OK) {
        memcpy(code, em.code, em.n * sizeof *code);
        hop_expr_free_symbols(e, syms, ns);
        for (size_t i = 0; i < ns; i++) {
            regs[i] = hop__sym_reg(cx, syms[i]); /* emit gave each one already */
            names[i] = cx->regnames[regs[i]];
        }
        x->code = code;
        x->len = (int)em.n;
        x->regs = regs;
        x->names = names;
        x->nsyms = (int)ns;
    }
    hop__free(em.code);
    return st;
}

/* hop__xcompile past its front cache: the program kept in xcache, or made
 * and kept there. */
static const hop__xprog *
xcompile_cached(hop_lower_ctx *cx, const hop_expr *e)
{
    hop__xcache_entry *hit = NULL;
    HASH_FIND_PTR(cx->xcache, &e, hit);
    if (hit)
        return hit->x;
    hop__arena *a = &cx->plan->arena;
    hop__xprog *x = hop__arena_zalloc(a, sizeof *x);
    if (x == NULL)
        return NULL;
    x->is_bool = hop_expr_is_bool(e);
    /* The text is for messages and the dump only. */
    size_t need = hop_expr_print(e, NULL, 0);
    char *text = hop__arena_alloc(a, need + 1);
    if (text == NULL)
        return NULL;
    hop_expr_print(e, text, need + 1);
    x->text = text;
    int64_t v;
    if (hop_expr_const_value(e, &v)) {
        x->is_const = true;
        x->value = v;
    } else {
        hop_status st = compile(cx, e, a, x);
        if (st != HOP_OK) {
            if (st == HOP_NOMEM && hop_error_code() != HOP_NOMEM)
                hop_error(HOP_NOMEM, "out of memory");
            return NULL;
        }
    }
    hop__xcache_entry *ent = hop__malloc(sizeof *ent);
    if (ent == NULL)
        return NULL;
    ent->e = e;
    ent->x = x;
    hop_status st;
    HOP_HASH_ADD(st, hh, cx->xcache, e, sizeof(ent->e), ent);
    if (st != HOP_OK) {
        hop__free(ent);
        return NULL;
    }
    return x;
}

const hop__xprog *
hop__xcompile(hop_lower_ctx *cx, const hop_expr *e)
{
    uint64_t h = (uint64_t)(uintptr_t)e * UINT64_C(0x9E3779B97F4A7C15);
    struct hop__xfront *f = &cx->xfront[(h >> 32) & (HOP__XFRONT - 1)];
    if (f->e == e && e != NULL)
        return f->x;
    const hop__xprog *x = xcompile_cached(cx, e);
    if (x != NULL)
        *f = (struct hop__xfront){e, x};
    return x;
}

void
hop__xcache_free(hop_lower_ctx *cx)
{
    hop__xcache_entry *e, *tmp;
    HASH_ITER(hh, cx->xcache, e, tmp)
    {
        HASH_DEL(cx->xcache, e);
        hop__free(e);
    }
}
