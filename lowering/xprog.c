/*
 * lowering/xprog.c - SymInt and SymBool expressions compiled into small
 * postfix programs over the plan's int registers, and their evaluation.
 *
 * A plan must not keep pointers into the ShapeEnv, and ops.h exposes an
 * expression's text but not its operands.  The printer's contract is that a
 * printed expression evaluates in Python to the expression's value
 * (ops/sym_print.c), so we compile the text: a recursive-descent parser for
 * the Python subset the printer writes (ints, symbol names, + - * // % **,
 * unary - and ~, & |, comparisons, Max/Min, True/False, parentheses) with
 * Python's precedence.  Every compiled program is checked against
 * hop_expr_eval at the hints (and at made-up values for unbacked symbols),
 * so a printer change cannot silently give wrong sizes.
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

/* ---------------------------------------------------------------- parser */

#define MAXCODE 256

typedef struct parser {
    hop_lower_ctx *cx;
    const char *s;
    hop__xi code[MAXCODE];
    int n;
    bool fail;
    int32_t regs[32];
    const char *names[32];
    int nsyms;
} parser;

static void
skip(parser *p)
{
    while (*p->s == ' ')
        p->s++;
}

static bool
accept(parser *p, const char *tok)
{
    skip(p);
    size_t n = strlen(tok);
    if (strncmp(p->s, tok, n) != 0)
        return false;
    /* `*` must not match the start of `**`, `/` of `//` is never alone,
     * `<` must not match `<=` when asked for `<`, and so on. */
    if ((n == 1 && (tok[0] == '*' || tok[0] == '<' || tok[0] == '>') &&
         (p->s[1] == '*' || p->s[1] == '=')) ||
        (n == 1 && tok[0] == '~' && p->s[1] == '='))
        return false;
    p->s += n;
    return true;
}

static void
put(parser *p, uint8_t op, int64_t v, int32_t reg, uint8_t n)
{
    if (p->n >= MAXCODE) {
        p->fail = true;
        return;
    }
    p->code[p->n++] = (hop__xi){.op = op, .n = n, .reg = reg, .v = v};
}

static void parse_expr(parser *p);

static bool
is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static void
parse_name(parser *p)
{
    const char *start = p->s;
    while (is_ident(*p->s))
        p->s++;
    size_t len = (size_t)(p->s - start);
    char name[64];
    if (len == 0 || len >= sizeof name) {
        p->fail = true;
        return;
    }
    memcpy(name, start, len);
    name[len] = '\0';
    if (strcmp(name, "True") == 0 || strcmp(name, "False") == 0) {
        put(p, HOP__X_CONST, name[0] == 'T', 0, 0);
        return;
    }
    if (strcmp(name, "Max") == 0 || strcmp(name, "Min") == 0) {
        if (!accept(p, "(")) {
            p->fail = true;
            return;
        }
        int n = 0;
        do {
            parse_expr(p);
            n++;
        } while (!p->fail && accept(p, ","));
        if (!accept(p, ")") || n > 255)
            p->fail = true;
        put(p, name[1] == 'a' ? HOP__X_MAX : HOP__X_MIN, 0, 0, (uint8_t)n);
        return;
    }
    hop_shape_env *env = p->cx->env;
    size_t nsym = hop_shape_env_nsymbols(env);
    for (size_t i = 0; i < nsym; i++) {
        const hop_expr *sym = hop_shape_env_symbol(env, i);
        if (strcmp(hop_symbol_name(sym), name) != 0)
            continue;
        int32_t reg = hop__sym_reg(p->cx, sym);
        if (reg < 0) {
            p->fail = true;
            return;
        }
        bool seen = false;
        for (int k = 0; k < p->nsyms; k++)
            seen = seen || p->regs[k] == reg;
        if (!seen && p->nsyms < 32) {
            p->regs[p->nsyms] = reg;
            p->names[p->nsyms++] = hop_symbol_name(sym);
        }
        put(p, HOP__X_REG, 0, reg, 0);
        return;
    }
    p->fail = true;
}

static void
parse_atom(parser *p)
{
    skip(p);
    if (accept(p, "(")) {
        parse_expr(p);
        if (!accept(p, ")"))
            p->fail = true;
        return;
    }
    if (*p->s >= '0' && *p->s <= '9') {
        int64_t v = 0;
        while (*p->s >= '0' && *p->s <= '9') {
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p->s - '0', &v))
                p->fail = true;
            p->s++;
        }
        put(p, HOP__X_CONST, v, 0, 0);
        return;
    }
    parse_name(p);
}

static void parse_unary(parser *p);

/* power := atom ['**' unary]  (right associative; binds tighter than a
 * unary minus on its left, as in Python) */
static void
parse_power(parser *p)
{
    parse_atom(p);
    if (!p->fail && accept(p, "**")) {
        parse_unary(p);
        put(p, HOP__X_POW, 0, 0, 0);
    }
}

static void
parse_unary(parser *p)
{
    if (accept(p, "-")) {
        skip(p);
        /* `-3` is a constant, not a negation of one (INT64_MIN prints so). */
        if (*p->s >= '0' && *p->s <= '9') {
            parse_power(p);
            if (!p->fail && p->n > 0 && p->code[p->n - 1].op == HOP__X_CONST) {
                p->code[p->n - 1].v = -p->code[p->n - 1].v;
                return;
            }
            put(p, HOP__X_NEG, 0, 0, 0);
            return;
        }
        parse_unary(p);
        put(p, HOP__X_NEG, 0, 0, 0);
    } else if (accept(p, "~")) {
        parse_unary(p);
        put(p, HOP__X_NOT, 0, 0, 0);
    } else {
        parse_power(p);
    }
}

static void
parse_term(parser *p)
{
    parse_unary(p);
    while (!p->fail) {
        if (accept(p, "//")) {
            parse_unary(p);
            put(p, HOP__X_FLOORDIV, 0, 0, 0);
        } else if (accept(p, "*")) {
            parse_unary(p);
            put(p, HOP__X_MUL, 0, 0, 0);
        } else if (accept(p, "%")) {
            parse_unary(p);
            put(p, HOP__X_MOD, 0, 0, 0);
        } else {
            return;
        }
    }
}

static void
parse_arith(parser *p)
{
    parse_term(p);
    while (!p->fail) {
        if (accept(p, "+")) {
            parse_term(p);
            put(p, HOP__X_ADD, 0, 0, 0);
        } else if (accept(p, "-")) {
            parse_term(p);
            put(p, HOP__X_SUB, 0, 0, 0);
        } else {
            return;
        }
    }
}

static void
parse_and(parser *p)
{
    parse_arith(p);
    while (!p->fail && accept(p, "&")) {
        parse_arith(p);
        put(p, HOP__X_AND, 0, 0, 0);
    }
}

static void
parse_or(parser *p)
{
    parse_and(p);
    while (!p->fail && accept(p, "|")) {
        parse_and(p);
        put(p, HOP__X_OR, 0, 0, 0);
    }
}

static void
parse_expr(parser *p)
{
    parse_or(p);
    static const struct {
        const char *tok;
        uint8_t op;
    } rel[] = {{"==", HOP__X_EQ}, {"!=", HOP__X_NE}, {"<=", HOP__X_LE},
               {">=", HOP__X_GE}, {"<", HOP__X_LT},  {">", HOP__X_GT}};
    for (size_t i = 0; !p->fail && i < HOP__ARRAY_LEN(rel); i++) {
        if (accept(p, rel[i].tok)) {
            parse_or(p);
            put(p, rel[i].op, 0, 0, 0);
            return;
        }
    }
}

/* ------------------------------------------------------------- evaluation */

static hop_status
xfail(const hop__xprog *x, const char *why)
{
    return hop_error(HOP_RUNTIME, "cannot evaluate %s: %s", x->text, why);
}

static bool
ipow(int64_t b, int64_t e, int64_t *out)
{
    int64_t r = 1;
    while (e > 0) {
        if ((e & 1) && __builtin_mul_overflow(r, b, &r))
            return false;
        e >>= 1;
        if (e > 0 && __builtin_mul_overflow(b, b, &b))
            return false;
    }
    *out = r;
    return true;
}

hop_status
hop__xeval(const hop__xprog *x, const int64_t *regs, int64_t *out)
{
    if (x->is_const) {
        *out = x->value;
        return HOP_OK;
    }
    int64_t st[HOP__X_MAXDEPTH];
    int sp = 0;
    for (int i = 0; i < x->len; i++) {
        const hop__xi *c = &x->code[i];
        int64_t a, b, r = 0;
        switch (c->op) {
        case HOP__X_CONST:
            st[sp++] = c->v;
            continue;
        case HOP__X_REG:
            if (regs[c->reg] == HOP_UNBOUND) {
                for (int k = 0; k < x->nsyms; k++) {
                    if (x->regs[k] == c->reg) {
                        char why[96];
                        snprintf(why, sizeof why, "%s is not known yet", x->names[k]);
                        return xfail(x, why);
                    }
                }
                return xfail(x, "a symbol is not known yet");
            }
            st[sp++] = regs[c->reg];
            continue;
        case HOP__X_NEG:
            if (st[sp - 1] == INT64_MIN)
                return xfail(x, "int64 overflow");
            st[sp - 1] = -st[sp - 1];
            continue;
        case HOP__X_NOT:
            st[sp - 1] = st[sp - 1] == 0;
            continue;
        case HOP__X_MAX:
        case HOP__X_MIN:
            sp -= c->n;
            r = st[sp];
            for (int k = 1; k < c->n; k++)
                r = (c->op == HOP__X_MAX) == (st[sp + k] > r) ? st[sp + k] : r;
            st[sp++] = r;
            continue;
        default:
            break;
        }
        b = st[--sp];
        a = st[sp - 1];
        switch (c->op) {
        case HOP__X_ADD:
            if (__builtin_add_overflow(a, b, &r))
                return xfail(x, "int64 overflow");
            break;
        case HOP__X_SUB:
            if (__builtin_sub_overflow(a, b, &r))
                return xfail(x, "int64 overflow");
            break;
        case HOP__X_MUL:
            if (__builtin_mul_overflow(a, b, &r))
                return xfail(x, "int64 overflow");
            break;
        case HOP__X_FLOORDIV:
        case HOP__X_MOD:
            if (b == 0)
                return xfail(x, "division by zero");
            if (a == INT64_MIN && b == -1) {
                if (c->op == HOP__X_FLOORDIV)
                    return xfail(x, "int64 overflow");
                r = 0;
                break;
            }
            if (c->op == HOP__X_FLOORDIV) {
                r = a / b;
                if (a % b != 0 && ((a < 0) != (b < 0)))
                    r--;
            } else {
                r = a % b;
                if (r != 0 && ((r < 0) != (b < 0)))
                    r += b;
            }
            break;
        case HOP__X_POW:
            if (b < 0)
                return xfail(x, "negative exponent");
            if (!ipow(a, b, &r))
                return xfail(x, "int64 overflow");
            break;
        case HOP__X_AND:
            r = a != 0 && b != 0;
            break;
        case HOP__X_OR:
            r = a != 0 || b != 0;
            break;
        case HOP__X_EQ:
            r = a == b;
            break;
        case HOP__X_NE:
            r = a != b;
            break;
        case HOP__X_LT:
            r = a < b;
            break;
        case HOP__X_LE:
            r = a <= b;
            break;
        case HOP__X_GT:
            r = a > b;
            break;
        case HOP__X_GE:
            r = a >= b;
            break;
        default:
            return xfail(x, "bad program");
        }
        st[sp - 1] = r;
    }
    *out = st[0];
    return HOP_OK;
}

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

/* Stack depth the program needs; -1 if malformed. */
static int
depth_of(const hop__xi *code, int n)
{
    int d = 0, max = 0;
    for (int i = 0; i < n; i++) {
        switch (code[i].op) {
        case HOP__X_CONST:
        case HOP__X_REG:
            d++;
            break;
        case HOP__X_NEG:
        case HOP__X_NOT:
            if (d < 1)
                return -1;
            break;
        case HOP__X_MAX:
        case HOP__X_MIN:
            if (d < code[i].n || code[i].n < 1)
                return -1;
            d -= code[i].n - 1;
            break;
        default:
            if (d < 2)
                return -1;
            d--;
        }
        max = d > max ? d : max;
    }
    return d == 1 ? max : -1;
}

/* Checks x against hop_expr_eval at the hints (made-up values for
 * unbacked symbols). */
static hop_status
self_check(hop_lower_ctx *cx, const hop_expr *e, const hop__xprog *x)
{
    const hop_expr *syms[32];
    size_t ns = hop_expr_free_symbols(e, syms, 32);
    if (ns > 32)
        return HOP_OK;
    size_t nall = hop_shape_env_nsymbols(cx->env);
    int64_t small[64], *vals = small;
    int64_t rsmall[64], *regs = rsmall;
    if (nall > 64 && (vals = hop__malloc(nall * sizeof *vals)) == NULL)
        return HOP_NOMEM;
    if (cx->nregs > 64 && (regs = hop__malloc(cx->nregs * sizeof *regs)) == NULL) {
        if (vals != small)
            hop__free(vals);
        return HOP_NOMEM;
    }
    for (size_t i = 0; i < nall; i++)
        vals[i] = HOP_UNBOUND;
    for (size_t i = 0; i < cx->nregs; i++)
        regs[i] = HOP_UNBOUND;
    for (size_t i = 0; i < ns; i++) {
        int64_t v;
        if (!hop_symbol_hint(syms[i], &v))
            v = 5 + 3 * hop_symbol_id(syms[i]);
        vals[hop_symbol_id(syms[i])] = v;
        regs[cx->symreg[hop_symbol_id(syms[i])]] = v;
    }
    int64_t want = 0, got = 0;
    hop_status a = hop_expr_eval(e, vals, nall, &want);
    hop_status b = hop__xeval(x, regs, &got);
    if (vals != small)
        hop__free(vals);
    if (regs != rsmall)
        hop__free(regs);
    hop_error_clear();
    if ((a == HOP_OK) != (b == HOP_OK) || (a == HOP_OK && want != got))
        return hop_error(HOP_UNSUPPORTED, "lowering: cannot compile the expression %s", x->text);
    return HOP_OK;
}

const hop__xprog *
hop__xconst(hop_lower_ctx *cx, int64_t v)
{
    hop__xprog *x = hop__arena_zalloc(&cx->plan->arena, sizeof *x);
    if (x == NULL)
        return NULL;
    x->is_const = true;
    x->value = v;
    x->text = hop__arena_printf(&cx->plan->arena, "%" PRId64, v);
    return x->text ? x : NULL;
}

const hop__xprog *
hop__xcompile(hop_lower_ctx *cx, const hop_expr *e)
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
    char small[256], *text = small;
    size_t need = hop_expr_print(e, small, sizeof small);
    if (need >= sizeof small) {
        if ((text = hop__arena_alloc(&cx->tmp, need + 1)) == NULL)
            return NULL;
        hop_expr_print(e, text, need + 1);
    }
    if ((x->text = hop__arena_strdup(a, text)) == NULL)
        return NULL;
    int64_t v;
    if (hop_expr_const_value(e, &v)) {
        x->is_const = true;
        x->value = v;
    } else {
        parser *p = hop__arena_zalloc(&cx->tmp, sizeof *p);
        if (p == NULL)
            return NULL;
        p->cx = cx;
        p->s = text;
        parse_expr(p);
        skip(p);
        if (hop_error_code() == HOP_NOMEM && p->fail)
            return NULL;
        int depth = p->fail || *p->s != '\0' ? -1 : depth_of(p->code, p->n);
        if (depth < 0 || depth > HOP__X_MAXDEPTH) {
            hop_error(HOP_UNSUPPORTED, "lowering: cannot compile the expression %s", x->text);
            return NULL;
        }
        hop__xi *code = hop__arena_alloc(a, (size_t)p->n * sizeof *code);
        int32_t *regs = hop__arena_alloc(a, (size_t)(p->nsyms + 1) * sizeof *regs);
        const char **names = hop__arena_alloc(a, (size_t)(p->nsyms + 1) * sizeof *names);
        if (code == NULL || regs == NULL || names == NULL)
            return NULL;
        memcpy(code, p->code, (size_t)p->n * sizeof *code);
        for (int i = 0; i < p->nsyms; i++) {
            regs[i] = p->regs[i];
            if ((names[i] = hop__arena_strdup(a, p->names[i])) == NULL)
                return NULL;
        }
        x->code = code;
        x->len = p->n;
        x->regs = regs;
        x->names = names;
        x->nsyms = p->nsyms;
        if (self_check(cx, e, x) != HOP_OK)
            return NULL;
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
