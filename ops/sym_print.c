/*
 * ops/sym_print.c - the structural order of expressions, the printer and the
 * inspection accessors.
 *
 * Printed forms (Python syntax, so a printed expression evaluates in Python to
 * the same value, with Max/Min as sympy spells them):
 *   sums        terms in term order (hop__term_order, sympy's lex order), the
 *               constant last: `s0**2 + 2*s0 + 1`, `-s0 + 3`, `s0*s1 - s1 - 2`
 *   products    atoms in hop_expr_compare order: `s0*s1`, `2*s0**2*s1`
 *   floordiv    `s0//2`, `(s0 + 1)//2`; an operand other than a symbol, a
 *               non-negative constant or Max/Min is parenthesised, and so is a
 *               floordiv or modulo that is a factor: `2*(s0//3)`
 *   modulo      `s0 % 3`, `(s0 + 1) % 3`
 *   max/min     `Max(s0, s1)`, `Min(4, s0)` (operands in hop_expr_compare
 *               order, so symbols first, then compound expressions, then the
 *               constant: `Max(s0, s1 + 1, 4)`)
 *   relations   `s0 > 4`, `s0 == 1`, `s0 + 1 <= s1`, `s0 > s1`: the
 *               constant on the right; of two sides with terms, the one whose
 *               first term comes first in term order on the left
 *   connectives `(s0 > 4) & (s1 == 2)`, `(u0 < 0) | (u0 > 9)`, `~((...) & (...))`
 *   constants   `True`, `False`, `-3`
 */
#include "ops/sym_impl.h"

#include <inttypes.h>
#include <stdio.h>

/* ----------------------------------------------------------------- order */

static int
cmp_i64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

int
hop_expr_compare(const hop_expr *a, const hop_expr *b)
{
    if (a == b)
        return 0;
    if (a == NULL || b == NULL)
        return a == NULL ? -1 : 1;
    bool sa = a->kind == HOP_EXPR_SYMBOL, sb = b->kind == HOP_EXPR_SYMBOL;
    if (sa != sb)
        return sa ? -1 : 1;
    if (sa) {
        if (a->unbacked != b->unbacked)
            return a->unbacked ? 1 : -1;
        return cmp_i64(a->seq, b->seq);
    }
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->kind == HOP_EXPR_CONST)
        return cmp_i64(a->value, b->value);
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        int c = hop_expr_compare(a->ops[i], b->ops[i]);
        if (c != 0)
            return c;
        if (a->coefs && b->coefs && a->coefs[i] != b->coefs[i])
            return cmp_i64(a->coefs[i], b->coefs[i]);
    }
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    return cmp_i64(a->value, b->value);
}

/* --------------------------------------------------------------- printer */

/* Writes either into a fixed buffer (snprintf contract, no allocation) or
 * onto a string builder. */
typedef struct sink {
    char *buf;
    size_t cap;
    size_t len;
    hop__buf *b;
} sink;

static void
put(sink *s, const char *text)
{
    size_t n = strlen(text);
    if (s->b) {
        hop__buf_append(s->b, text, n);
    } else if (s->len + 1 < s->cap) {
        size_t room = s->cap - 1 - s->len;
        memcpy(s->buf + s->len, text, n < room ? n : room);
    }
    s->len += n;
}

static void
put_i64(sink *s, int64_t v)
{
    char t[32];
    snprintf(t, sizeof t, "%" PRId64, v);
    put(s, t);
}

static void
put_u64(sink *s, uint64_t v)
{
    char t[32];
    snprintf(t, sizeof t, "%" PRIu64, v);
    put(s, t);
}

static void print_expr(sink *s, const hop_expr *e);

static bool
is_simple_operand(const hop_expr *e)
{
    return e->kind == HOP_EXPR_SYMBOL || e->kind == HOP_EXPR_MAX || e->kind == HOP_EXPR_MIN ||
           (e->kind == HOP_EXPR_CONST && e->value >= 0);
}

static void
print_operand(sink *s, const hop_expr *e)
{
    if (is_simple_operand(e)) {
        print_expr(s, e);
    } else {
        put(s, "(");
        print_expr(s, e);
        put(s, ")");
    }
}

/* An atom as a factor of a product or the base of a power. */
static void
print_factor(sink *s, const hop_expr *atom, int64_t exp, bool in_product)
{
    bool parens =
        (atom->kind == HOP_EXPR_FLOORDIV || atom->kind == HOP_EXPR_MOD) && (in_product || exp != 1);
    if (parens)
        put(s, "(");
    print_expr(s, atom);
    if (parens)
        put(s, ")");
    if (exp != 1) {
        put(s, "**");
        put_i64(s, exp);
    }
}

/* A monomial; in_product when a coefficient or sign is attached to it. */
static void
print_mono(sink *s, const hop_expr *m, bool in_product)
{
    if (m->kind != HOP_EXPR_MUL) {
        print_factor(s, m, 1, in_product);
        return;
    }
    for (size_t i = 0; i < m->n; i++) {
        if (i > 0)
            put(s, "*");
        print_factor(s, m->ops[i], m->coefs[i], true);
    }
}

static uint64_t
magnitude(int64_t v)
{
    return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

static void
print_add(sink *s, const hop_expr *e)
{
    for (size_t i = 0; i < e->n; i++) {
        int64_t c = e->coefs[i];
        if (i == 0)
            put(s, c < 0 ? "-" : "");
        else
            put(s, c < 0 ? " - " : " + ");
        uint64_t mag = magnitude(c);
        if (mag != 1) {
            put_u64(s, mag);
            put(s, "*");
        }
        /* `-(s0//2)`, but `s1 - s0//2` needs no parentheses. */
        print_mono(s, e->ops[i], mag != 1 || (i == 0 && c < 0));
    }
    if (e->value != 0) {
        put(s, e->value < 0 ? " - " : " + ");
        put_u64(s, magnitude(e->value));
    }
}

static const hop_expr *
first_mono(const hop_expr *e)
{
    return e->kind == HOP_EXPR_ADD ? e->ops[0] : e;
}

static void
print_relation(sink *s, const hop_expr *e)
{
    const hop_expr *l = e->ops[0], *r = e->ops[1];
    const char *op = e->kind == HOP_EXPR_EQ   ? " == "
                     : e->kind == HOP_EXPR_NE ? " != "
                     : e->kind == HOP_EXPR_LT ? " < "
                                              : " <= ";
    /* The constant on the right (LT(4, s0) is `s0 > 4`), and of two sides
     * with terms the one whose first term comes first on the left
     * (LT(s1, s0) is `s0 > s1`). */
    bool swap = l->kind == HOP_EXPR_CONST   ? r->kind != HOP_EXPR_CONST
                : r->kind == HOP_EXPR_CONST ? false
                                            : hop__term_order(first_mono(r), first_mono(l)) < 0;
    if (swap) {
        const hop_expr *t = l;
        l = r;
        r = t;
        op = e->kind == HOP_EXPR_LT ? " > " : e->kind == HOP_EXPR_LE ? " >= " : op;
    }
    print_expr(s, l);
    put(s, op);
    print_expr(s, r);
}

static void
print_connective(sink *s, const hop_expr *e)
{
    for (size_t i = 0; i < e->n; i++) {
        if (i > 0)
            put(s, e->kind == HOP_EXPR_AND ? " & " : " | ");
        bool parens = e->ops[i]->kind != HOP_EXPR_NOT;
        if (parens)
            put(s, "(");
        print_expr(s, e->ops[i]);
        if (parens)
            put(s, ")");
    }
}

static void
print_expr(sink *s, const hop_expr *e)
{
    if (e == NULL) {
        put(s, "NULL");
        return;
    }
    switch (e->kind) {
    case HOP_EXPR_CONST:
        put_i64(s, e->value);
        break;
    case HOP_EXPR_SYMBOL:
        put(s, e->name);
        break;
    case HOP_EXPR_ADD:
        print_add(s, e);
        break;
    case HOP_EXPR_MUL:
        print_mono(s, e, true);
        break;
    case HOP_EXPR_FLOORDIV:
    case HOP_EXPR_MOD:
        print_operand(s, e->ops[0]);
        put(s, e->kind == HOP_EXPR_FLOORDIV ? "//" : " % ");
        print_operand(s, e->ops[1]);
        break;
    case HOP_EXPR_MAX:
    case HOP_EXPR_MIN:
        put(s, e->kind == HOP_EXPR_MAX ? "Max(" : "Min(");
        for (size_t i = 0; i < e->n; i++) {
            if (i > 0)
                put(s, ", ");
            print_expr(s, e->ops[i]);
        }
        put(s, ")");
        break;
    case HOP_EXPR_TRUE:
        put(s, "True");
        break;
    case HOP_EXPR_FALSE:
        put(s, "False");
        break;
    case HOP_EXPR_EQ:
    case HOP_EXPR_NE:
    case HOP_EXPR_LT:
    case HOP_EXPR_LE:
        print_relation(s, e);
        break;
    case HOP_EXPR_AND:
    case HOP_EXPR_OR:
        print_connective(s, e);
        break;
    case HOP_EXPR_NOT:
        put(s, "~(");
        print_expr(s, e->ops[0]);
        put(s, ")");
        break;
    }
}

size_t
hop_expr_print(const hop_expr *e, char *buf, size_t cap)
{
    sink s = {buf, cap, 0, NULL};
    print_expr(&s, e);
    if (cap > 0)
        buf[s.len < cap ? s.len : cap - 1] = '\0';
    return s.len;
}

void
hop__sym_print_buf(hop__buf *b, const hop_expr *e)
{
    sink s = {NULL, 0, 0, b};
    print_expr(&s, e);
}

const char *
hop_expr_str(hop_shape_env *env, const hop_expr *e)
{
    if (env == NULL || e == NULL) {
        hop_error(HOP_MISUSE, "hop_expr_str: %s is NULL", env == NULL ? "the ShapeEnv" : "e");
        return NULL;
    }
    if (e->env != env) {
        hop_error(HOP_MISUSE, "hop_expr_str: the expression belongs to another ShapeEnv");
        return NULL;
    }
    if (e->str)
        return e->str;
    size_t n = hop_expr_print(e, NULL, 0);
    char *text = hop__arena_alloc(&env->arena, n + 1);
    if (text == NULL)
        return NULL;
    hop_expr_print(e, text, n + 1);
    /* Nodes are allocated mutable; the cache is invisible.  Not while
     * marked: the rollback would take back text an older node keeps. */
    if (!env->marked)
        ((hop_expr *)e)->str = text;
    return text;
}

/* ------------------------------------------------------------ inspection */

hop_expr_kind
hop_expr_kind_of(const hop_expr *e)
{
    return e ? e->kind : HOP_EXPR_CONST;
}

bool
hop_expr_is_bool(const hop_expr *e)
{
    return e && e->is_bool;
}

bool
hop_expr_const_value(const hop_expr *e, int64_t *out)
{
    if (e == NULL)
        return false;
    int64_t v;
    if (e->kind == HOP_EXPR_CONST)
        v = e->value;
    else if (e->kind == HOP_EXPR_TRUE || e->kind == HOP_EXPR_FALSE)
        v = e->kind == HOP_EXPR_TRUE;
    else
        return false;
    if (out)
        *out = v;
    return true;
}

size_t
hop_expr_noperands(const hop_expr *e)
{
    if (e == NULL)
        return 0;
    switch (e->kind) {
    case HOP_EXPR_CONST:
    case HOP_EXPR_SYMBOL:
    case HOP_EXPR_TRUE:
    case HOP_EXPR_FALSE:
        return 0;
    default:
        return e->n;
    }
}

const hop_expr *
hop_expr_operand(const hop_expr *e, size_t i)
{
    return i < hop_expr_noperands(e) ? e->ops[i] : NULL;
}

int64_t
hop_expr_coef(const hop_expr *e, size_t i)
{
    if (i >= hop_expr_noperands(e))
        return 0;
    return e->kind == HOP_EXPR_ADD || e->kind == HOP_EXPR_MUL ? e->coefs[i] : 1;
}

int64_t
hop_expr_addend(const hop_expr *e)
{
    return e && e->kind == HOP_EXPR_ADD ? e->value : 0;
}

const char *
hop_symbol_name(const hop_expr *e)
{
    return e && e->kind == HOP_EXPR_SYMBOL ? e->name : NULL;
}

int64_t
hop_symbol_id(const hop_expr *e)
{
    return e && e->kind == HOP_EXPR_SYMBOL ? e->id : -1;
}

bool
hop_symbol_is_unbacked(const hop_expr *e)
{
    return e && e->kind == HOP_EXPR_SYMBOL && e->unbacked;
}

bool
hop_symbol_hint(const hop_expr *e, int64_t *out)
{
    if (e == NULL || e->kind != HOP_EXPR_SYMBOL || !e->has_hint)
        return false;
    if (out)
        *out = e->hint;
    return true;
}

size_t
hop_expr_free_symbols(const hop_expr *e, const hop_expr **out, size_t cap)
{
    if (e == NULL)
        return 0;
    for (size_t i = 0; i < e->nsyms && i < cap; i++)
        out[i] = e->syms[i];
    return e->nsyms;
}
