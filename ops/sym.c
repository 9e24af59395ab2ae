/*
 * ops/sym.c - interning and the canonical form of SymInt/SymBool expressions.
 *
 * Every int expression is built through one representation, a polynomial: a
 * constant plus coef * monomial terms, where a monomial is a product of atoms
 * (symbols, FLOORDIV, MOD, MAX, MIN) with exponents.  Sums, differences and
 * products are computed on polynomials (products distribute), like terms are
 * combined and the result is interned, so equal values built in different
 * ways are the same pointer.  Relations are reduced to `d REL 0` with
 * d = lhs - rhs, divided by the gcd of its coefficients, and split back into
 * two sides with positive coefficients (sym_print.c prints them).
 *
 * Atoms are simplified as they are built: constant folding with Python
 * semantics (overflow is HOP_INVALID), x//1, x % 1, a negative constant
 * divisor made positive, (x//a)//b == x//(a*b), divisible terms pulled out of
 * a floordiv and reduced away in a modulo, Max/Min flattened, deduplicated and
 * rid of operands that the value ranges show can never win.
 */
#include "ops/sym_impl.h"

#include <inttypes.h>
#include <stdlib.h>

/* ------------------------------------------------ Python integer semantics */

bool
hop__floordiv_overflows(int64_t a, int64_t b, int64_t *r)
{
    if (b == -1) {
        if (a == INT64_MIN)
            return true;
        *r = -a;
        return false;
    }
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0)))
        q--;
    *r = q;
    return false;
}

int64_t
hop__pymod(int64_t a, int64_t b)
{
    if (b == -1) /* INT64_MIN % -1 is undefined in C */
        return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

bool
hop__pow_overflows(int64_t a, int64_t e, int64_t *r)
{
    int64_t acc = 1, base = a;
    while (e > 0) {
        if ((e & 1) && hop__mul_overflows(acc, base, &acc))
            return true;
        e >>= 1;
        /* Square only when the square is used: then its overflow is the
         * result's overflow. */
        if (e > 0 && hop__mul_overflows(base, base, &base))
            return true;
    }
    *r = acc;
    return false;
}

/* Sets the error of a op b overflowing int64 in fn; false, for the
 * checked operations' result. */
static bool
overflow(const char *fn, int64_t a, const char *op, int64_t b)
{
    hop_error(HOP_INVALID, "%s: int64 overflow computing %" PRId64 " %s %" PRId64, fn, a, op, b);
    return false;
}

/* *r = a + b and a * b; false with the error when it overflows. */
static bool
checked_add(const char *fn, int64_t a, int64_t b, int64_t *r)
{
    return !hop__add_overflows(a, b, r) || overflow(fn, a, "+", b);
}

static bool
checked_mul(const char *fn, int64_t a, int64_t b, int64_t *r)
{
    return !hop__mul_overflows(a, b, r) || overflow(fn, a, "*", b);
}

/* ------------------------------------------------------ operand checking */

hop_status
hop__sym_check(hop_shape_env *env, const hop_expr *e, const char *fn, int i, bool want_bool)
{
    if (env == NULL)
        return hop_error(HOP_MISUSE, "%s: the ShapeEnv is NULL", fn);
    if (e == NULL)
        return hop_error(HOP_MISUSE, "%s: operand %d is NULL", fn, i);
    if (e->env != env)
        return hop_error(HOP_MISUSE, "%s: operand %d belongs to another ShapeEnv", fn, i);
    if (e->is_bool != want_bool) {
        char text[160];
        hop_expr_print(e, text, sizeof text);
        return hop_error(HOP_INVALID, "%s: operand %d is a %s (%s) where a %s is expected", fn, i,
                         e->is_bool ? "SymBool" : "SymInt", text, want_bool ? "SymBool" : "SymInt");
    }
    return HOP_OK;
}

/* hop__sym_check of both operands of fn, a constructor of two. */
static bool
operands_ok(hop_shape_env *env, const hop_expr *a, const hop_expr *b, const char *fn,
            bool want_bool)
{
    return hop__sym_check(env, a, fn, 1, want_bool) == HOP_OK &&
           hop__sym_check(env, b, fn, 2, want_bool) == HOP_OK;
}

/* ---------------------------------------------------------------- interning */

static int
cmp_expr_ptr(const void *a, const void *b)
{
    return hop_expr_compare(*(const hop_expr *const *)a, *(const hop_expr *const *)b);
}

/* Sorts v[0..n) (hop_expr_compare) and drops repeats (interned: the same
 * pointer); returns how many are left. */
static size_t
sort_unique(const hop_expr **v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_expr_ptr);
    size_t out = 0;
    for (size_t i = 0; i < n; i++)
        if (out == 0 || v[out - 1] != v[i])
            v[out++] = v[i];
    return out;
}

/* The union of the operands' free symbols, sorted; allocated in the arena. */
static bool
collect_symbols(hop_shape_env *env, hop_expr *node)
{
    size_t total = 0;
    for (size_t i = 0; i < node->n; i++) {
        total += node->ops[i]->nsyms;
        node->has_unbacked |= node->ops[i]->has_unbacked;
    }
    if (total == 0)
        return true;
    const hop_expr **syms = hop__arena_alloc(&env->arena, total * sizeof *syms);
    if (syms == NULL)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < node->n; i++) {
        if (node->ops[i]->nsyms == 0) /* its syms is NULL: no memcpy from NULL */
            continue;
        memcpy(syms + k, node->ops[i]->syms, node->ops[i]->nsyms * sizeof *syms);
        k += node->ops[i]->nsyms;
    }
    node->syms = syms;
    node->nsyms = sort_unique(syms, total);
    return true;
}

const hop_expr *
hop__sym_intern(hop_shape_env *env, hop_expr_kind kind, int64_t value, size_t n,
                const hop_expr *const *ops, const int64_t *coefs)
{
    uint64_t small[48];
    size_t words = 3 + 2 * n;
    uint64_t *key = small;
    if (words > HOP__ARRAY_LEN(small)) {
        key = hop__malloc(words * sizeof *key);
        if (key == NULL)
            return NULL;
    }
    key[0] = (uint64_t)kind;
    key[1] = (uint64_t)value;
    key[2] = (uint64_t)n;
    for (size_t i = 0; i < n; i++) {
        key[3 + 2 * i] = (uint64_t)(uintptr_t)ops[i];
        key[4 + 2 * i] = coefs ? (uint64_t)coefs[i] : 0;
    }
    size_t keylen = words * sizeof *key;
    hop_expr *found = NULL;
    HASH_FIND(hh, env->table, key, keylen, found);
    if (found) {
        if (key != small)
            hop__free(key);
        return found;
    }

    hop_expr *node = hop__arena_zalloc(&env->arena, sizeof *node);
    uint64_t *nkey = hop__arena_alloc(&env->arena, keylen);
    const hop_expr **nops = n ? hop__arena_alloc(&env->arena, n * sizeof *nops) : NULL;
    int64_t *ncoefs = n && coefs ? hop__arena_alloc(&env->arena, n * sizeof *ncoefs) : NULL;
    if (node == NULL || nkey == NULL || (n && nops == NULL) || (n && coefs && ncoefs == NULL)) {
        if (key != small)
            hop__free(key);
        return NULL;
    }
    memcpy(nkey, key, keylen);
    if (key != small)
        hop__free(key);
    if (n)
        memcpy(nops, ops, n * sizeof *nops);
    if (ncoefs)
        memcpy(ncoefs, coefs, n * sizeof *ncoefs);
    node->env = env;
    node->kind = kind;
    node->is_bool = kind >= HOP_EXPR_TRUE;
    node->value = value;
    node->n = n;
    node->ops = nops;
    node->coefs = ncoefs;
    node->id = -1;
    node->seq = -1;
    node->key = nkey;
    node->keylen = keylen;
    if (!collect_symbols(env, node))
        return NULL;
    hop_status st;
    HOP_HASH_ADD_KEYPTR(st, hh, env->table, node->key, keylen, node);
    if (st != HOP_OK)
        return NULL;
    return node;
}

/* -------------------------------------------------------------- monomials */

/* A monomial seen as a list of (atom, exponent); an atom is a list of one. */
typedef struct mono_view {
    const hop_expr *const *atoms;
    const int64_t *exps;
    size_t n;
    const hop_expr *self;
    int64_t one;
} mono_view;

static void
mono_view_of(const hop_expr *m, mono_view *v)
{
    if (m->kind == HOP_EXPR_MUL) {
        v->atoms = m->ops;
        v->exps = m->coefs;
        v->n = m->n;
    } else {
        v->self = m;
        v->one = 1;
        v->atoms = &v->self;
        v->exps = &v->one;
        v->n = 1;
    }
}

int
hop__term_order(const hop_expr *m1, const hop_expr *m2)
{
    if (m1 == m2)
        return 0;
    mono_view v1, v2;
    mono_view_of(m1, &v1);
    mono_view_of(m2, &v2);
    for (size_t i = 0;; i++) {
        if (i == v1.n && i == v2.n)
            return 0;
        if (i == v1.n)
            return 1;
        if (i == v2.n)
            return -1;
        int c = hop_expr_compare(v1.atoms[i], v2.atoms[i]);
        if (c != 0)
            return c < 0 ? -1 : 1;
        if (v1.exps[i] != v2.exps[i])
            return v1.exps[i] > v2.exps[i] ? -1 : 1;
    }
}

static const hop_expr *
make_mono(hop_shape_env *env, const hop_expr *const *atoms, const int64_t *exps, size_t n)
{
    if (n == 1 && exps[0] == 1)
        return atoms[0];
    return hop__sym_intern(env, HOP_EXPR_MUL, 0, n, atoms, exps);
}

/* m1 * m2 by merging the sorted atom lists. */
static const hop_expr *
mono_mul(hop_shape_env *env, const hop_expr *m1, const hop_expr *m2, const char *fn)
{
    mono_view v1, v2;
    mono_view_of(m1, &v1);
    mono_view_of(m2, &v2);
    size_t cap = v1.n + v2.n;
    const hop_expr *small_atoms[16];
    int64_t small_exps[16];
    const hop_expr **atoms = small_atoms;
    int64_t *exps = small_exps;
    if (cap > 16) {
        atoms = hop__malloc(cap * sizeof *atoms);
        exps = hop__malloc(cap * sizeof *exps);
        if (atoms == NULL || exps == NULL) {
            hop__free(atoms);
            hop__free(exps);
            return NULL;
        }
    }
    const hop_expr *r = NULL;
    size_t i = 0, j = 0, n = 0;
    while (i < v1.n || j < v2.n) {
        int c = i == v1.n ? 1 : j == v2.n ? -1 : hop_expr_compare(v1.atoms[i], v2.atoms[j]);
        if (c < 0) {
            atoms[n] = v1.atoms[i];
            exps[n++] = v1.exps[i++];
        } else if (c > 0) {
            atoms[n] = v2.atoms[j];
            exps[n++] = v2.exps[j++];
        } else {
            atoms[n] = v1.atoms[i];
            if (!checked_add(fn, v1.exps[i], v2.exps[j], &exps[n]))
                goto done;
            n++, i++, j++;
        }
    }
    r = make_mono(env, atoms, exps, n);
done:
    if (atoms != small_atoms) {
        hop__free(atoms);
        hop__free(exps);
    }
    return r;
}

static const hop_expr *
mono_pow(hop_shape_env *env, const hop_expr *m, int64_t k, const char *fn)
{
    mono_view v;
    mono_view_of(m, &v);
    int64_t *exps = hop__malloc(v.n * sizeof *exps);
    if (exps == NULL)
        return NULL;
    const hop_expr *r = NULL;
    for (size_t i = 0; i < v.n; i++)
        if (!checked_mul(fn, v.exps[i], k, &exps[i]))
            goto done;
    r = make_mono(env, v.atoms, exps, v.n);
done:
    hop__free(exps);
    return r;
}

/* ------------------------------------------------------------ polynomials */

typedef struct term {
    const hop_expr *m;
    int64_t c;
} term;

typedef struct poly {
    term *t;
    size_t n, cap;
    int64_t c;
} poly;

static void
poly_init(poly *p)
{
    p->t = NULL;
    p->n = p->cap = 0;
    p->c = 0;
}

static void
poly_free(poly *p)
{
    hop__free(p->t);
    poly_init(p);
}

static bool
poly_push(poly *p, const hop_expr *m, int64_t c)
{
    if (c == 0)
        return true;
    if (hop__grow((void **)&p->t, &p->cap, p->n + 1, sizeof *p->t) != HOP_OK)
        return false;
    p->t[p->n].m = m;
    p->t[p->n].c = c;
    p->n++;
    return true;
}

/* p += scale * e for an int expression e. */
static bool
poly_add_expr(poly *p, const hop_expr *e, int64_t scale, const char *fn)
{
    int64_t v;
    switch (e->kind) {
    case HOP_EXPR_CONST:
        return checked_mul(fn, e->value, scale, &v) && checked_add(fn, p->c, v, &p->c);
    case HOP_EXPR_ADD:
        for (size_t i = 0; i < e->n; i++)
            if (!checked_mul(fn, e->coefs[i], scale, &v) || !poly_push(p, e->ops[i], v))
                return false;
        return checked_mul(fn, e->value, scale, &v) && checked_add(fn, p->c, v, &p->c);
    default:
        return poly_push(p, e, scale);
    }
}

static int
cmp_term(const void *a, const void *b)
{
    return hop__term_order(((const term *)a)->m, ((const term *)b)->m);
}

/* Sorts and combines like terms in place, dropping zero coefficients. */
static bool
poly_normalise(poly *p, const char *fn)
{
    if (p->n > 1)
        qsort(p->t, p->n, sizeof *p->t, cmp_term);
    size_t out = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (out > 0 && p->t[out - 1].m == p->t[i].m) {
            if (!checked_add(fn, p->t[out - 1].c, p->t[i].c, &p->t[out - 1].c))
                return false;
        } else {
            p->t[out++] = p->t[i];
        }
        if (p->t[out - 1].c == 0)
            out--;
    }
    p->n = out;
    return true;
}

/* The interned expression of a normalised polynomial. */
static const hop_expr *
poly_intern(hop_shape_env *env, const poly *p)
{
    if (p->n == 0)
        return hop_sym_const(env, p->c);
    if (p->n == 1 && p->t[0].c == 1 && p->c == 0)
        return p->t[0].m;
    const hop_expr **ops = hop__malloc(p->n * (sizeof *ops + sizeof(int64_t)));
    if (ops == NULL)
        return NULL;
    int64_t *coefs = (int64_t *)(ops + p->n);
    for (size_t i = 0; i < p->n; i++) {
        ops[i] = p->t[i].m;
        coefs[i] = p->t[i].c;
    }
    const hop_expr *r = hop__sym_intern(env, HOP_EXPR_ADD, p->c, p->n, ops, coefs);
    hop__free(ops);
    return r;
}

/* Normalises, interns and frees p. */
static const hop_expr *
poly_finish(hop_shape_env *env, poly *p, const char *fn)
{
    const hop_expr *r = poly_normalise(p, fn) ? poly_intern(env, p) : NULL;
    poly_free(p);
    return r;
}

/* out = a * b, distributing. */
static bool
poly_mul(hop_shape_env *env, const poly *a, const poly *b, poly *out, const char *fn)
{
    int64_t v;
    if (!checked_mul(fn, a->c, b->c, &out->c))
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!checked_mul(fn, a->t[i].c, b->c, &v) || !poly_push(out, a->t[i].m, v))
            return false;
    for (size_t j = 0; j < b->n; j++)
        if (!checked_mul(fn, b->t[j].c, a->c, &v) || !poly_push(out, b->t[j].m, v))
            return false;
    for (size_t i = 0; i < a->n; i++) {
        for (size_t j = 0; j < b->n; j++) {
            if (!checked_mul(fn, a->t[i].c, b->t[j].c, &v))
                return false;
            const hop_expr *m = mono_mul(env, a->t[i].m, b->t[j].m, fn);
            if (m == NULL || !poly_push(out, m, v))
                return false;
        }
    }
    return true;
}

/* --------------------------------------------------- arithmetic constructors */

/* A leaf of env without operands (CONST v, TRUE, FALSE) for fn. */
static const hop_expr *
leaf(hop_shape_env *env, hop_expr_kind kind, int64_t v, const char *fn)
{
    if (env == NULL) {
        hop_error(HOP_MISUSE, "%s: the ShapeEnv is NULL", fn);
        return NULL;
    }
    return hop__sym_intern(env, kind, v, 0, NULL, NULL);
}

/* a KIND b as a node of its own, its operands as they are. */
static const hop_expr *
node2(hop_shape_env *env, hop_expr_kind kind, const hop_expr *a, const hop_expr *b)
{
    const hop_expr *ops[2] = {a, b};
    return hop__sym_intern(env, kind, 0, 2, ops, NULL);
}

const hop_expr *
hop_sym_const(hop_shape_env *env, int64_t v)
{
    const size_t ncache = HOP__ARRAY_LEN(env->consts);
    const hop_expr **cached = env ? &env->consts[(uint64_t)v % ncache] : NULL;
    if (cached && *cached && (*cached)->value == v)
        return *cached;
    const hop_expr *e = leaf(env, HOP_EXPR_CONST, v, "hop_sym_const");
    if (e && !env->marked)
        *cached = e;
    return e;
}

/* sa * a + c, plus sb * b when binary. */
static const hop_expr *
linear(hop_shape_env *env, const char *fn, const hop_expr *a, int64_t sa, bool binary,
       const hop_expr *b, int64_t sb, int64_t c)
{
    if (hop__sym_check(env, a, fn, 1, false) != HOP_OK)
        return NULL;
    if (binary && hop__sym_check(env, b, fn, 2, false) != HOP_OK)
        return NULL;
    poly p;
    poly_init(&p);
    p.c = c;
    if (!poly_add_expr(&p, a, sa, fn) || (binary && !poly_add_expr(&p, b, sb, fn))) {
        poly_free(&p);
        return NULL;
    }
    return poly_finish(env, &p, fn);
}

const hop_expr *
hop_sym_neg(hop_shape_env *env, const hop_expr *a)
{
    return linear(env, "hop_sym_neg", a, -1, false, NULL, 0, 0);
}

const hop_expr *
hop_sym_add_int(hop_shape_env *env, const hop_expr *a, int64_t c)
{
    return linear(env, "hop_sym_add_int", a, 1, false, NULL, 0, c);
}

const hop_expr *
hop_sym_mul_int(hop_shape_env *env, const hop_expr *a, int64_t c)
{
    return linear(env, "hop_sym_mul_int", a, c, false, NULL, 0, 0);
}

static const hop_expr *
mul_impl(hop_shape_env *env, const hop_expr *a, const hop_expr *b, const char *fn)
{
    if (!operands_ok(env, a, b, fn, false))
        return NULL;
    if (a->kind == HOP_EXPR_CONST)
        return linear(env, fn, b, a->value, false, NULL, 0, 0);
    if (b->kind == HOP_EXPR_CONST)
        return linear(env, fn, a, b->value, false, NULL, 0, 0);
    poly pa, pb, out;
    poly_init(&pa);
    poly_init(&pb);
    poly_init(&out);
    const hop_expr *r = NULL;
    if (poly_add_expr(&pa, a, 1, fn) && poly_add_expr(&pb, b, 1, fn) &&
        poly_mul(env, &pa, &pb, &out, fn))
        r = poly_finish(env, &out, fn);
    poly_free(&pa);
    poly_free(&pb);
    poly_free(&out);
    return r;
}

const hop_expr *
hop__sym_pow(hop_shape_env *env, const hop_expr *a, int64_t k)
{
    const char *fn = "hop_sym_subs"; /* its only caller */
    if (k == 0)
        return hop_sym_const(env, 1);
    if (k == 1)
        return a;
    if (a->kind == HOP_EXPR_CONST) {
        int64_t v;
        if (hop__pow_overflows(a->value, k, &v)) {
            overflow(fn, a->value, "**", k);
            return NULL;
        }
        return hop_sym_const(env, v);
    }
    if (a->kind != HOP_EXPR_ADD)
        return mono_pow(env, a, k, fn);
    /* A sum: square and multiply. */
    const hop_expr *acc = hop_sym_const(env, 1), *base = a;
    while (acc && base && k > 0) {
        if (k & 1)
            acc = mul_impl(env, acc, base, fn);
        k >>= 1;
        if (k > 0)
            base = mul_impl(env, base, base, fn);
    }
    return acc && base ? acc : NULL;
}

/* Splits the polynomial of a into the terms divisible by c (divided, into q)
 * and the others (into r); the constant stays in r.  c > 0. */
static bool
split_divisible(const hop_expr *a, int64_t c, poly *q, poly *r, const char *fn)
{
    poly p;
    poly_init(&p);
    bool ok = poly_add_expr(&p, a, 1, fn);
    for (size_t i = 0; ok && i < p.n; i++) {
        if (p.t[i].c % c == 0)
            ok = poly_push(q, p.t[i].m, p.t[i].c / c);
        else
            ok = poly_push(r, p.t[i].m, p.t[i].c);
    }
    r->c = p.c;
    poly_free(&p);
    return ok;
}

/* What a // b and a % b (kind FLOORDIV or MOD) settle alike: the operands
 * checked; a divisor that is no constant leaves the node (0 when a is 0);
 * a zero divisor is HOP_INVALID naming fn and a.  True with *out set (NULL
 * on error) when settled; false when the constant divisor b is not 0. */
static bool
division_settled(hop_shape_env *env, const hop_expr *a, const hop_expr *b, const char *fn,
                 hop_expr_kind kind, const hop_expr **out)
{
    *out = NULL;
    if (!operands_ok(env, a, b, fn, false))
        return true;
    if (b->kind != HOP_EXPR_CONST) {
        *out = a->kind == HOP_EXPR_CONST && a->value == 0 ? a : node2(env, kind, a, b);
        return true;
    }
    if (b->value != 0)
        return false;
    char text[160];
    hop_expr_print(a, text, sizeof text);
    if (kind == HOP_EXPR_MOD)
        hop_error(HOP_INVALID, "%s: modulo by zero in (%s) %% 0", fn, text);
    else
        hop_error(HOP_INVALID, "%s: division by zero in (%s)//0", fn, text);
    return true;
}

static const hop_expr *
floordiv_impl(hop_shape_env *env, const hop_expr *a, const hop_expr *b, const char *fn)
{
    const hop_expr *settled;
    if (division_settled(env, a, b, fn, HOP_EXPR_FLOORDIV, &settled))
        return settled;
    int64_t c = b->value, v;
    if (a->kind == HOP_EXPR_CONST) {
        if (hop__floordiv_overflows(a->value, c, &v)) {
            overflow(fn, a->value, "//", c);
            return NULL;
        }
        return hop_sym_const(env, v);
    }
    if (c == 1)
        return a;
    if (c == -1)
        return hop_sym_neg(env, a);
    if (c == INT64_MIN) /* cannot be normalised to a positive divisor */
        return node2(env, HOP_EXPR_FLOORDIV, a, b);
    if (c < 0) {
        /* a // c == (-a) // (-c) */
        const hop_expr *na = hop_sym_neg(env, a), *nc = hop_sym_const(env, -c);
        return na && nc ? floordiv_impl(env, na, nc, fn) : NULL;
    }
    /* (x // c1) // c2 == x // (c1 * c2) for positive divisors */
    if (a->kind == HOP_EXPR_FLOORDIV && a->ops[1]->kind == HOP_EXPR_CONST && a->ops[1]->value > 0 &&
        !hop__mul_overflows(a->ops[1]->value, c, &v)) {
        const hop_expr *cc = hop_sym_const(env, v);
        return cc ? floordiv_impl(env, a->ops[0], cc, fn) : NULL;
    }
    /* Settled by a's range: floor(lo/c) == floor(hi/c). */
    int64_t lo, hi, qlo, qhi;
    hop__sym_bounds(a, &lo, &hi);
    hop__floordiv_overflows(lo, c, &qlo); /* c > 1: cannot overflow */
    hop__floordiv_overflows(hi, c, &qhi);
    if (qlo == qhi)
        return hop_sym_const(env, qlo);
    /* (c*q + r) // c == q + r // c, with a multiple of c in the constant
     * pulled out too: (s0 + 4)//2 == s0//2 + 2. */
    poly q, r;
    poly_init(&q);
    poly_init(&r);
    const hop_expr *res = NULL;
    if (!split_divisible(a, c, &q, &r, fn))
        goto done;
    if (r.n > 0 && r.c % c == 0) {
        q.c = r.c / c;
        r.c = 0;
    }
    if (q.n == 0 && q.c == 0) {
        res = node2(env, HOP_EXPR_FLOORDIV, a, b);
        goto done;
    }
    const hop_expr *re = NULL;
    if (r.n == 0) {
        hop__floordiv_overflows(r.c, c, &v); /* c > 1: cannot overflow */
        q.c = v;
    } else {
        re = poly_finish(env, &r, fn);
        if (re == NULL)
            goto done;
        /* r has no divisible part left, so this recursion stops at once;
         * it still applies the nested and range rules to r // c. */
        re = floordiv_impl(env, re, b, fn);
        if (re == NULL || !poly_add_expr(&q, re, 1, fn))
            goto done;
    }
    res = poly_finish(env, &q, fn);
done:
    poly_free(&q);
    poly_free(&r);
    return res;
}

static const hop_expr *
mod_impl(hop_shape_env *env, const hop_expr *a, const hop_expr *b, const char *fn)
{
    const hop_expr *settled;
    if (division_settled(env, a, b, fn, HOP_EXPR_MOD, &settled))
        return settled;
    int64_t c = b->value;
    if (a->kind == HOP_EXPR_CONST)
        return hop_sym_const(env, hop__pymod(a->value, c));
    if (c == 1 || c == -1)
        return hop_sym_const(env, 0);
    if (c == INT64_MIN)
        return node2(env, HOP_EXPR_MOD, a, b);
    if (c < 0) {
        /* a % c == -((-a) % (-c)) */
        const hop_expr *na = hop_sym_neg(env, a), *nc = hop_sym_const(env, -c);
        const hop_expr *m = na && nc ? mod_impl(env, na, nc, fn) : NULL;
        return m ? hop_sym_neg(env, m) : NULL;
    }
    /* (x % c1) % c2 == x % c2 when c2 divides c1 */
    if (a->kind == HOP_EXPR_MOD && a->ops[1]->kind == HOP_EXPR_CONST && a->ops[1]->value > 0 &&
        a->ops[1]->value % c == 0)
        return mod_impl(env, a->ops[0], b, fn);
    /* Coefficients and the constant only matter modulo c. */
    poly p;
    poly_init(&p);
    if (!poly_add_expr(&p, a, 1, fn)) {
        poly_free(&p);
        return NULL;
    }
    for (size_t i = 0; i < p.n; i++)
        p.t[i].c = hop__pymod(p.t[i].c, c);
    p.c = hop__pymod(p.c, c);
    const hop_expr *red = poly_finish(env, &p, fn);
    if (red == NULL)
        return NULL;
    if (red->kind == HOP_EXPR_CONST)
        return red;
    /* Already in [0, c): the modulo does nothing. */
    int64_t lo, hi;
    hop__sym_bounds(red, &lo, &hi);
    if (lo >= 0 && hi < c)
        return red;
    return node2(env, HOP_EXPR_MOD, red, b);
}

/*
 * Whether x <= y for every value of the symbols, by the lattice laws alone
 * (no ranges): Min(a, ...) <= a, a <= Max(a, ...), sums of the same terms
 * by their constants (s0 - 6 <= s0 - 1).  So
 * Max(s0, Min(s0, 4)) is s0 and Max(Min(s0, 5), Min(s0, 3)) is Min(s0, 5),
 * which slicing produces when it clamps bounds without guarding.  depth
 * bounds the work on deep nests (false is always a sound answer).
 */
/* e as constant + terms: an ADD's own, one term for any other non-constant. */
static int64_t
split_sum(const hop_expr *const *e, const hop_expr *const **ops, const int64_t **coefs, size_t *n)
{
    static const int64_t one = 1;
    const hop_expr *x = *e;
    if (x->kind == HOP_EXPR_ADD) {
        *ops = x->ops;
        *coefs = x->coefs;
        *n = x->n;
        return x->value;
    }
    *ops = e;
    *coefs = &one;
    *n = x->kind == HOP_EXPR_CONST ? 0 : 1;
    return x->kind == HOP_EXPR_CONST ? x->value : 0;
}

static bool
le_structural(const hop_expr *x, const hop_expr *y, int depth)
{
    if (x == y)
        return true;
    /* Sums with the same terms compare by their constants: s0 - 6 <= s0 - 1. */
    const hop_expr *const *xo, *const *yo;
    const int64_t *xc, *yc;
    size_t xn, yn;
    int64_t cx = split_sum(&x, &xo, &xc, &xn), cy = split_sum(&y, &yo, &yc, &yn);
    if (xn == yn) {
        bool same = true;
        for (size_t i = 0; i < xn && same; i++)
            same = xo[i] == yo[i] && xc[i] == yc[i];
        if (same)
            return cx <= cy;
    }
    if (depth <= 0)
        return false;
    if (x->kind == HOP_EXPR_MIN)
        for (size_t i = 0; i < x->n; i++)
            if (le_structural(x->ops[i], y, depth - 1))
                return true;
    if (y->kind == HOP_EXPR_MAX)
        for (size_t i = 0; i < y->n; i++)
            if (le_structural(x, y->ops[i], depth - 1))
                return true;
    if (y->kind == HOP_EXPR_MIN || x->kind == HOP_EXPR_MAX) {
        /* x <= Min(b...) when x <= each b; Max(a...) <= y when each a <= y. */
        const hop_expr *const *ops = y->kind == HOP_EXPR_MIN ? y->ops : x->ops;
        size_t n = y->kind == HOP_EXPR_MIN ? y->n : x->n;
        for (size_t i = 0; i < n; i++) {
            const hop_expr *a = y->kind == HOP_EXPR_MIN ? x : ops[i];
            const hop_expr *b = y->kind == HOP_EXPR_MIN ? ops[i] : y;
            if (!le_structural(a, b, depth - 1))
                return false;
        }
        return true;
    }
    return false;
}

/* Max/Min: flattened, constants folded, sorted, duplicates and operands that
 * can never win dropped (by the value ranges, or by the lattice laws of
 * le_structural). */
static const hop_expr *
minmax(hop_shape_env *env, hop_expr_kind kind, const hop_expr *a, const hop_expr *b, const char *fn)
{
    if (!operands_ok(env, a, b, fn, false))
        return NULL;
    bool is_max = kind == HOP_EXPR_MAX;
    size_t na = a->kind == kind ? a->n : 1, nb = b->kind == kind ? b->n : 1;
    const hop_expr **items = hop__malloc((na + nb) * sizeof *items);
    if (items == NULL)
        return NULL;
    size_t n = 0;
    const hop_expr *const *src[2] = {a->kind == kind ? a->ops : &a, b->kind == kind ? b->ops : &b};
    size_t counts[2] = {na, nb};
    bool have_const = false;
    int64_t cval = 0;
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < counts[s]; i++) {
            const hop_expr *x = src[s][i];
            if (x->kind == HOP_EXPR_CONST) {
                if (!have_const || (is_max ? x->value > cval : x->value < cval))
                    cval = x->value;
                have_const = true;
            } else {
                items[n++] = x;
            }
        }
    }
    const hop_expr *r = NULL;
    if (have_const) {
        const hop_expr *c = hop_sym_const(env, cval);
        if (c == NULL)
            goto done;
        items[n++] = c;
    }
    n = sort_unique(items, n);
    /* Drop x when another kept y always wins: lo(y) >= hi(x) for Max. */
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t xlo, xhi;
        hop__sym_bounds(items[i], &xlo, &xhi);
        bool dominated = false;
        for (size_t j = 0; j < n && !dominated; j++) {
            if (j == i || (j < i && items[j] == NULL))
                continue;
            int64_t ylo, yhi;
            hop__sym_bounds(items[j], &ylo, &yhi);
            dominated = is_max ? ylo >= xhi : yhi <= xlo;
            if (!dominated)
                dominated = is_max ? le_structural(items[i], items[j], 4)
                                   : le_structural(items[j], items[i], 4);
        }
        if (dominated)
            items[i] = NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (items[i])
            items[out++] = items[i];
    n = out;
    r = n == 1 ? items[0] : hop__sym_intern(env, kind, 0, n, items, NULL);
done:
    hop__free(items);
    return r;
}

/* ------------------------------------------------------------- relations */

const hop_expr *
hop_sym_bool(hop_shape_env *env, bool v)
{
    return leaf(env, v ? HOP_EXPR_TRUE : HOP_EXPR_FALSE, 0, "hop_sym_bool");
}

/* gcd of magnitudes, on uint64_t so that INT64_MIN is fine. */
static uint64_t
gcd_u64(uint64_t x, int64_t b)
{
    uint64_t y = b < 0 ? -(uint64_t)b : (uint64_t)b;
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return x;
}

/*
 * a REL b for REL in EQ, NE, LT, LE.  With d = a - b = sum + c:
 *   - no terms: folds to TRUE/FALSE;
 *   - the coefficients are divided by their gcd g (for EQ/NE a c that g does
 *     not divide decides the relation; for LT/LE c is rounded the right way);
 *   - EQ/NE are symmetric, so d is negated when its first term is negative;
 *   - the sides are P REL N, P the positive terms, N the negated negative
 *     ones, with the constant on the side where it is positive, or alone on
 *     one side when the other has no terms (`s0 < 4` is LT(s0, 4) and
 *     `s0 > 4` is LT(4, s0)).
 */
static const hop_expr *
relation(hop_shape_env *env, hop_expr_kind kind, const hop_expr *a, const hop_expr *b,
         const char *fn)
{
    if (!operands_ok(env, a, b, fn, false))
        return NULL;
    poly d, P, N;
    poly_init(&d);
    poly_init(&P);
    poly_init(&N);
    const hop_expr *res = NULL;
    if (!poly_add_expr(&d, a, 1, fn) || !poly_add_expr(&d, b, -1, fn) || !poly_normalise(&d, fn))
        goto done;
    int64_t c = d.c;
    if (d.n == 0) {
        bool v = kind == HOP_EXPR_EQ   ? c == 0
                 : kind == HOP_EXPR_NE ? c != 0
                 : kind == HOP_EXPR_LT ? c < 0
                                       : c <= 0;
        res = hop_sym_bool(env, v);
        goto done;
    }
    uint64_t ug = 0;
    for (size_t i = 0; i < d.n; i++)
        ug = gcd_u64(ug, d.t[i].c);
    /* ug is 2**63 only when every coefficient is INT64_MIN: leave it be */
    int64_t g = ug > (uint64_t)INT64_MAX ? 1 : (int64_t)ug;
    if (g > 1) {
        if (kind == HOP_EXPR_EQ || kind == HOP_EXPR_NE) {
            if (c % g != 0) {
                res = hop_sym_bool(env, kind == HOP_EXPR_NE);
                goto done;
            }
            c /= g;
        } else if (kind == HOP_EXPR_LT) {
            /* g*q + c < 0  <=>  q + floor(c/g) < 0 */
            hop__floordiv_overflows(c, g, &c);
        } else {
            /* g*q + c <= 0  <=>  q + ceil(c/g) <= 0 */
            int64_t q = c / g;
            c = (c % g != 0 && c > 0) ? q + 1 : q;
        }
        for (size_t i = 0; i < d.n; i++)
            d.t[i].c /= g;
    }
    bool flip = (kind == HOP_EXPR_EQ || kind == HOP_EXPR_NE) && d.t[0].c < 0;
    for (size_t i = 0; i < d.n; i++) {
        int64_t v = d.t[i].c;
        if (flip && !checked_mul(fn, v, -1, &v))
            goto done;
        if (v > 0 && !poly_push(&P, d.t[i].m, v))
            goto done;
        if (v < 0) {
            if (!checked_mul(fn, v, -1, &v) || !poly_push(&N, d.t[i].m, v))
                goto done;
        }
    }
    if (flip && !checked_mul(fn, c, -1, &c))
        goto done;
    /* P - N + c REL 0 */
    if (N.n == 0) {
        if (!checked_mul(fn, c, -1, &N.c))
            goto done;
    } else if (P.n == 0 || c > 0) {
        P.c = c;
    } else if (!checked_mul(fn, c, -1, &N.c)) {
        goto done;
    }
    const hop_expr *lhs = poly_finish(env, &P, fn);
    const hop_expr *rhs = lhs ? poly_finish(env, &N, fn) : NULL;
    if (lhs && rhs)
        res = node2(env, kind, lhs, rhs);
done:
    poly_free(&d);
    poly_free(&P);
    poly_free(&N);
    return res;
}

const hop_expr *
hop_sym_gt(hop_shape_env *env, const hop_expr *a, const hop_expr *b)
{
    if (hop__sym_check(env, a, "hop_sym_gt", 1, false) != HOP_OK)
        return NULL;
    return relation(env, HOP_EXPR_LT, b, a, "hop_sym_gt");
}

const hop_expr *
hop_sym_ge(hop_shape_env *env, const hop_expr *a, const hop_expr *b)
{
    if (hop__sym_check(env, a, "hop_sym_ge", 1, false) != HOP_OK)
        return NULL;
    return relation(env, HOP_EXPR_LE, b, a, "hop_sym_ge");
}

/* ------------------------------------------------------------ connectives */

/* True when x and y can never both hold or both fail: y is NOT x. */
static bool
complementary(const hop_expr *x, const hop_expr *y)
{
    if (x->kind == HOP_EXPR_NOT && x->ops[0] == y)
        return true;
    if (y->kind == HOP_EXPR_NOT && y->ops[0] == x)
        return true;
    bool same = x->n == 2 && y->n == 2 && x->ops[0] == y->ops[0] && x->ops[1] == y->ops[1];
    bool swapped = x->n == 2 && y->n == 2 && x->ops[0] == y->ops[1] && x->ops[1] == y->ops[0];
    switch (x->kind) {
    case HOP_EXPR_EQ:
        return y->kind == HOP_EXPR_NE && same;
    case HOP_EXPR_NE:
        return y->kind == HOP_EXPR_EQ && same;
    case HOP_EXPR_LT:
        return y->kind == HOP_EXPR_LE && swapped;
    case HOP_EXPR_LE:
        return y->kind == HOP_EXPR_LT && swapped;
    default:
        return false;
    }
}

static const hop_expr *
connective(hop_shape_env *env, hop_expr_kind kind, const hop_expr *a, const hop_expr *b,
           const char *fn)
{
    if (!operands_ok(env, a, b, fn, true))
        return NULL;
    bool is_and = kind == HOP_EXPR_AND;
    hop_expr_kind absorbing = is_and ? HOP_EXPR_FALSE : HOP_EXPR_TRUE;
    hop_expr_kind neutral = is_and ? HOP_EXPR_TRUE : HOP_EXPR_FALSE;
    if (a->kind == absorbing || b->kind == neutral)
        return a;
    if (b->kind == absorbing || a->kind == neutral)
        return b;
    if (complementary(a, b)) /* before flattening hides x in x & ~x */
        return hop_sym_bool(env, !is_and);
    size_t na = a->kind == kind ? a->n : 1, nb = b->kind == kind ? b->n : 1;
    const hop_expr **items = hop__malloc((na + nb) * sizeof *items);
    if (items == NULL)
        return NULL;
    const hop_expr *const *src[2] = {a->kind == kind ? a->ops : &a, b->kind == kind ? b->ops : &b};
    size_t counts[2] = {na, nb}, n = 0;
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < counts[s]; i++)
            items[n++] = src[s][i];
    n = sort_unique(items, n);
    const hop_expr *r = NULL;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            if (complementary(items[i], items[j])) {
                r = hop_sym_bool(env, !is_and);
                goto done;
            }
        }
    }
    r = n == 1 ? items[0] : hop__sym_intern(env, kind, 0, n, items, NULL);
done:
    hop__free(items);
    return r;
}

const hop_expr *
hop_sym_not(hop_shape_env *env, const hop_expr *a)
{
    const char *fn = "hop_sym_not";
    if (hop__sym_check(env, a, fn, 1, true) != HOP_OK)
        return NULL;
    switch (a->kind) {
    case HOP_EXPR_TRUE:
        return hop_sym_bool(env, false);
    case HOP_EXPR_FALSE:
        return hop_sym_bool(env, true);
    case HOP_EXPR_NOT:
        return a->ops[0];
    case HOP_EXPR_EQ:
        return hop__sym_intern(env, HOP_EXPR_NE, 0, 2, a->ops, NULL);
    case HOP_EXPR_NE:
        return hop__sym_intern(env, HOP_EXPR_EQ, 0, 2, a->ops, NULL);
    case HOP_EXPR_LT: /* ~(l < r) is r <= l */
        return relation(env, HOP_EXPR_LE, a->ops[1], a->ops[0], fn);
    case HOP_EXPR_LE:
        return relation(env, HOP_EXPR_LT, a->ops[1], a->ops[0], fn);
    default:
        return hop__sym_intern(env, HOP_EXPR_NOT, 0, 1, &a, NULL);
    }
}

/* --------------------------------------------------------------- rebuild */

const hop_expr *
hop__sym_rebuild(hop_shape_env *env, const hop_expr *e, const hop_expr *const *ops)
{
    const char *fn = "hop_sym_subs";
    const hop_expr *r;
    switch (e->kind) {
    case HOP_EXPR_CONST:
    case HOP_EXPR_SYMBOL:
    case HOP_EXPR_TRUE:
    case HOP_EXPR_FALSE:
        return e;
    case HOP_EXPR_ADD: {
        poly p;
        poly_init(&p);
        p.c = e->value;
        for (size_t i = 0; i < e->n; i++) {
            if (!poly_add_expr(&p, ops[i], e->coefs[i], fn)) {
                poly_free(&p);
                return NULL;
            }
        }
        return poly_finish(env, &p, fn);
    }
    case HOP_EXPR_MUL:
        r = hop_sym_const(env, 1);
        for (size_t i = 0; r && i < e->n; i++) {
            const hop_expr *f = hop__sym_pow(env, ops[i], e->coefs[i]);
            r = f ? mul_impl(env, r, f, fn) : NULL;
        }
        return r;
    case HOP_EXPR_FLOORDIV:
        return floordiv_impl(env, ops[0], ops[1], fn);
    case HOP_EXPR_MOD:
        return mod_impl(env, ops[0], ops[1], fn);
    case HOP_EXPR_MAX:
    case HOP_EXPR_MIN:
    case HOP_EXPR_AND:
    case HOP_EXPR_OR:
        r = ops[0];
        for (size_t i = 1; r && i < e->n; i++) {
            if (e->kind == HOP_EXPR_MAX || e->kind == HOP_EXPR_MIN)
                r = minmax(env, e->kind, r, ops[i], fn);
            else
                r = connective(env, e->kind, r, ops[i], fn);
        }
        return r;
    case HOP_EXPR_EQ:
    case HOP_EXPR_NE:
    case HOP_EXPR_LT:
    case HOP_EXPR_LE:
        return relation(env, e->kind, ops[0], ops[1], fn);
    case HOP_EXPR_NOT:
        return hop_sym_not(env, ops[0]);
    }
    hop_error(HOP_INVALID, "%s: unknown expression kind %d", fn, (int)e->kind);
    return NULL;
}

/* ------------------------------------------------ the binary constructors */

/* Each public constructor of two expressions is one call of its family's
 * builder above, which names it (fn) in its errors. */
#define SYM_BINARY(name, call)                                                                     \
    const hop_expr *hop_sym_##name(hop_shape_env *env, const hop_expr *a, const hop_expr *b)       \
    {                                                                                              \
        const char *fn = "hop_sym_" #name;                                                         \
        return call;                                                                               \
    }
SYM_BINARY(add, linear(env, fn, a, 1, true, b, 1, 0))
SYM_BINARY(sub, linear(env, fn, a, 1, true, b, -1, 0))
SYM_BINARY(mul, mul_impl(env, a, b, fn))
SYM_BINARY(floordiv, floordiv_impl(env, a, b, fn))
SYM_BINARY(mod, mod_impl(env, a, b, fn))
SYM_BINARY(max, minmax(env, HOP_EXPR_MAX, a, b, fn))
SYM_BINARY(min, minmax(env, HOP_EXPR_MIN, a, b, fn))
SYM_BINARY(eq, relation(env, HOP_EXPR_EQ, a, b, fn))
SYM_BINARY(ne, relation(env, HOP_EXPR_NE, a, b, fn))
SYM_BINARY(lt, relation(env, HOP_EXPR_LT, a, b, fn))
SYM_BINARY(le, relation(env, HOP_EXPR_LE, a, b, fn))
SYM_BINARY(and, connective(env, HOP_EXPR_AND, a, b, fn))
SYM_BINARY(or, connective(env, HOP_EXPR_OR, a, b, fn))
#undef SYM_BINARY
